//! The conversation store's and the counters' failures (DynamoDB or memory).

use super::BoxError;

/// Why a store operation failed.
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    /// The backend refused for capacity or contention (throttling, a conflicting transaction)
    /// after the client's own retries; trying again later may succeed.
    #[error("store throttled: {message}")]
    Throttled {
        /// What was refused, with the backend's error code.
        message: String,
        /// The backend's error.
        #[source]
        source: Option<BoxError>,
    },
    /// The backend could not be reached or failed on its side (network, timeout, 5xx).
    #[error("store unavailable: {message}")]
    Unavailable {
        /// What failed.
        message: String,
        /// The backend's or the transport's error.
        #[source]
        source: Option<BoxError>,
    },
    /// Anything else: a missing table, a rejected request, data that cannot be read back.
    #[error("store error: {message}")]
    Other {
        /// What went wrong.
        message: String,
        /// The underlying error, when there is one.
        #[source]
        source: Option<BoxError>,
    },
}

impl StoreError {
    /// Whether the same call may succeed if tried again later (throttling, outages).
    pub fn is_retryable(&self) -> bool {
        matches!(
            self,
            StoreError::Throttled { .. } | StoreError::Unavailable { .. }
        )
    }

    /// An [`StoreError::Other`] with no source.
    pub(crate) fn other(message: impl Into<String>) -> Self {
        StoreError::Other {
            message: message.into(),
            source: None,
        }
    }
}

/// A store call cut off by the caller's deadline ([`crate::retry`]) counts as an outage:
/// the same call may well succeed later.
impl From<crate::retry::DeadlineExceeded> for StoreError {
    fn from(e: crate::retry::DeadlineExceeded) -> Self {
        StoreError::Unavailable {
            message: e.to_string(),
            source: Some(Box::new(e)),
        }
    }
}
