//! The chat model's failures.

use std::fmt;
use std::time::Duration;

use super::BoxError;

/// Which time limit a model call ran into.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TimeoutPhase {
    /// Opening the TCP/TLS connection took too long.
    Connect,
    /// No content token arrived in time after the call started.
    FirstToken,
    /// The whole call (all retries and the full answer) took too long.
    Total,
}

impl fmt::Display for TimeoutPhase {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            TimeoutPhase::Connect => "connect",
            TimeoutPhase::FirstToken => "first token",
            TimeoutPhase::Total => "total",
        })
    }
}

/// Everything that can go wrong calling the model.
#[derive(Debug, thiserror::Error)]
pub enum LlmError {
    /// The provider could not be reached or the request could not be sent.
    #[error("cannot reach the model provider: {source}")]
    Connect {
        /// The transport error.
        #[source]
        source: BoxError,
    },
    /// A time limit was exceeded.
    #[error("model call timed out ({phase})")]
    Timeout {
        /// Which limit.
        phase: TimeoutPhase,
    },
    /// The provider answered with a non-success HTTP status.
    #[error("model provider answered HTTP {status}: {body}")]
    Status {
        /// The HTTP status code.
        status: u16,
        /// The start of the response body (at most [`MAX_ERROR_BODY`] bytes).
        body: String,
        /// The provider's `Retry-After`, when it sent one in seconds.
        retry_after: Option<Duration>,
    },
    /// The provider sent something that is not the expected JSON.
    #[error("unexpected response from the model provider: {message}")]
    Protocol {
        /// What was wrong.
        message: String,
        /// The offending payload (at most [`MAX_ERROR_BODY`] bytes).
        raw: String,
    },
    /// The answer stream closed before it was finished (no `[DONE]`, no finish reason).
    #[error("model stream interrupted")]
    Interrupted {
        /// The transport error, if the connection failed rather than closed.
        #[source]
        source: Option<BoxError>,
    },
}

/// How much of an upstream body an error keeps: enough to diagnose, bounded for logs.
pub const MAX_ERROR_BODY: usize = 2048;

/// The wait suggested to visitors when the provider is rate limiting without saying for how
/// long: provider limits are counted per minute or per second, and a few seconds spreads the
/// retries of many visitors without making one wait long.
pub const BUSY_RETRY_AFTER_SECS: u64 = 5;

impl LlmError {
    /// The HTTP status the chat function answers with: 504 for timeouts, 503 when the
    /// provider was still rate limiting after the client's retries (busy, not broken: the
    /// visitor may try again shortly), 502 otherwise.
    pub fn http_status(&self) -> u16 {
        match self {
            LlmError::Timeout { .. } => 504,
            LlmError::Status { status: 429, .. } => 503,
            _ => 502,
        }
    }

    /// For a 503 ([`Self::http_status`]): the seconds a visitor should wait, the provider's
    /// `Retry-After` kept within 1..=60 s, else [`BUSY_RETRY_AFTER_SECS`]. `None` otherwise.
    pub fn retry_after_secs(&self) -> Option<u64> {
        match self {
            LlmError::Status {
                status: 429,
                retry_after,
                ..
            } => Some(retry_after.map_or(BUSY_RETRY_AFTER_SECS, |d| d.as_secs().clamp(1, 60))),
            _ => None,
        }
    }

    /// Whether trying again could succeed (the client retries only before the first token).
    pub fn is_retryable(&self) -> bool {
        match self {
            LlmError::Connect { .. } | LlmError::Interrupted { .. } => true,
            // A slow connect is usually a transient network issue; the other limits mean the
            // time budget is already spent.
            LlmError::Timeout { phase } => *phase == TimeoutPhase::Connect,
            LlmError::Status { status, .. } => {
                matches!(status, 408 | 429) || (500..=599).contains(status)
            }
            LlmError::Protocol { .. } => false,
        }
    }
}
