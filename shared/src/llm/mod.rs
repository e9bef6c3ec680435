//! The model client: an OpenAI-compatible chat-completions API behind a small trait.
//!
//! [`LlmClient`] is what the chat service holds (as `Arc<dyn LlmClient>`);
//! [`OpenAiCompatClient`] is the real adapter (DashScope, OpenAI or any compatible server),
//! configured by [`LlmConfig`].
//!
//! Streaming contract: [`LlmClient::stream`] returns only once the first content token has
//! arrived (or the answer ended cleanly without one). Everything before that point — connect,
//! status, the wait for the first token — is retried by the client; after it, text has been
//! shown to the visitor, so a failure is yielded as an `Err` item and never retried.

use std::fmt;
use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::Duration;

use futures_util::Stream;

use crate::message::{ChatMessage, Usage};

mod config;
mod openai;
pub(crate) mod sse;

pub use config::{LlmConfig, LlmProvider};
pub use openai::OpenAiCompatClient;

/// Boxed error kept as the source of transport failures, so `reqwest` stays out of the API.
pub type BoxError = Box<dyn std::error::Error + Send + Sync>;

/// A chat model that can answer a conversation, whole or token by token.
#[async_trait::async_trait]
pub trait LlmClient: Send + Sync {
    /// The model name sent to the provider (reported back in chat responses).
    fn model(&self) -> &str;

    /// The most answer tokens this client asks for per call (`max_tokens` above it is
    /// capped); unbounded unless the client says otherwise.
    fn max_tokens(&self) -> u32 {
        u32::MAX
    }

    /// Asks for the whole answer at once.
    async fn complete(&self, req: &CompletionRequest) -> Result<Completion, LlmError>;

    /// Starts a streamed answer; returns once the first token is in (see the module docs).
    async fn stream(&self, req: &CompletionRequest) -> Result<CompletionStream, LlmError>;
}

/// What to ask the model.
#[derive(Debug, Clone, PartialEq)]
pub struct CompletionRequest {
    /// The conversation, system prompt first.
    pub messages: Vec<ChatMessage>,
    /// Upper bound on answer tokens (the client also caps it at the configured maximum).
    pub max_tokens: u32,
    /// Sampling temperature; `None` leaves the provider's default.
    pub temperature: Option<f32>,
}

/// A whole (non-streamed) answer.
#[derive(Debug, Clone, PartialEq)]
pub struct Completion {
    /// The answer text.
    pub text: String,
    /// Token counts, when the provider reported them.
    pub usage: Option<Usage>,
    /// The model that answered, as the provider names it.
    pub model: String,
}

/// One item of a streamed answer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum StreamEvent {
    /// The next piece of answer text (never empty).
    Delta(String),
    /// Token counts for the whole call, usually the last event.
    Usage(Usage),
}

/// A streamed answer: `Result<StreamEvent, LlmError>` items, then the end.
///
/// After an `Err` item the stream ends. Dropping it drops the upstream HTTP request, which is
/// how a visitor going away cancels the model call. It is `Send + 'static`, so it can be moved
/// into `tokio::spawn`. Read it with `futures_util::StreamExt::next`.
pub struct CompletionStream {
    inner: Pin<Box<dyn Stream<Item = Result<StreamEvent, LlmError>> + Send>>,
}

impl CompletionStream {
    /// Wraps any stream of events (real adapters and test fakes alike).
    pub fn new(stream: impl Stream<Item = Result<StreamEvent, LlmError>> + Send + 'static) -> Self {
        Self {
            inner: Box::pin(stream),
        }
    }

    /// A stream that yields the given items and ends; handy for fakes.
    pub fn from_events(events: Vec<Result<StreamEvent, LlmError>>) -> Self {
        Self::new(futures_util::stream::iter(events))
    }
}

impl Stream for CompletionStream {
    type Item = Result<StreamEvent, LlmError>;

    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        self.inner.as_mut().poll_next(cx)
    }
}

impl fmt::Debug for CompletionStream {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("CompletionStream").finish_non_exhaustive()
    }
}

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

/// Cuts `s` to at most `max` bytes without splitting a character.
pub(crate) fn truncate_utf8(mut s: String, max: usize) -> String {
    if s.len() > max {
        let mut end = max;
        while !s.is_char_boundary(end) {
            end -= 1;
        }
        s.truncate(end);
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn timeouts_map_to_504_rate_limits_to_503_and_everything_else_to_502() {
        let timeout = LlmError::Timeout {
            phase: TimeoutPhase::FirstToken,
        };
        assert_eq!(timeout.http_status(), 504);
        assert_eq!(timeout.retry_after_secs(), None);
        let status = |status, secs: Option<u64>| LlmError::Status {
            status,
            body: String::new(),
            retry_after: secs.map(Duration::from_secs),
        };
        assert_eq!(status(429, None).http_status(), 503);
        assert_eq!(status(500, None).http_status(), 502);
        assert_eq!(status(503, Some(7)).http_status(), 502);
        assert_eq!(LlmError::Interrupted { source: None }.http_status(), 502);
    }

    #[test]
    fn a_busy_provider_suggests_its_own_wait_within_bounds() {
        let busy = |secs: Option<u64>| LlmError::Status {
            status: 429,
            body: String::new(),
            retry_after: secs.map(Duration::from_secs),
        };
        assert_eq!(busy(Some(7)).retry_after_secs(), Some(7));
        assert_eq!(busy(Some(0)).retry_after_secs(), Some(1));
        assert_eq!(busy(Some(3600)).retry_after_secs(), Some(60));
        assert_eq!(busy(None).retry_after_secs(), Some(BUSY_RETRY_AFTER_SECS));
        let broken = LlmError::Status {
            status: 500,
            body: String::new(),
            retry_after: Some(Duration::from_secs(7)),
        };
        assert_eq!(broken.retry_after_secs(), None);
    }

    #[test]
    fn only_transient_failures_are_retryable() {
        let status = |s| LlmError::Status {
            status: s,
            body: String::new(),
            retry_after: None,
        };
        assert!(status(429).is_retryable());
        assert!(status(503).is_retryable());
        assert!(!status(400).is_retryable());
        assert!(!status(401).is_retryable());
        assert!(LlmError::Timeout {
            phase: TimeoutPhase::Connect
        }
        .is_retryable());
        assert!(!LlmError::Timeout {
            phase: TimeoutPhase::Total
        }
        .is_retryable());
        assert!(!LlmError::Protocol {
            message: "x".into(),
            raw: "{".into()
        }
        .is_retryable());
    }

    #[test]
    fn truncation_keeps_whole_characters() {
        assert_eq!(truncate_utf8("héllo".to_string(), 2), "h");
        assert_eq!(truncate_utf8("abc".to_string(), 10), "abc");
    }
}
