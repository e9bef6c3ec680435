//! The knowledge-base store's failures (S3, a file, memory).

use super::BoxError;

/// Why a source operation failed.
#[derive(Debug, thiserror::Error)]
pub enum KbSourceError {
    /// There is no object at the location (never uploaded, or deleted).
    #[error("no knowledge base at {location}")]
    NotFound {
        /// The source's location, e.g. `s3://bucket/key` or a path.
        location: String,
    },
    /// The store could not be reached or failed on its side (network, timeout, 5xx,
    /// throttling); the same call may succeed later.
    #[error("{location} is unavailable: {message}")]
    Unavailable {
        /// The source's location.
        location: String,
        /// What failed.
        message: String,
        /// The transport's or the service's error.
        #[source]
        source: Option<BoxError>,
    },
    /// Anything else: access denied, a missing bucket, a local I/O error.
    #[error("{location}: {message}")]
    Other {
        /// The source's location.
        location: String,
        /// What went wrong.
        message: String,
        /// The underlying error, when there is one.
        #[source]
        source: Option<BoxError>,
    },
}

impl KbSourceError {
    /// Whether the same call may succeed if tried again later.
    pub fn is_retryable(&self) -> bool {
        matches!(self, KbSourceError::Unavailable { .. })
    }
}
