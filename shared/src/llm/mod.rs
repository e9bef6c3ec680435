//! The model client: the providers' chat APIs behind a small trait.
//!
//! [`LlmClient`] is what the chat service holds (as `Arc<dyn LlmClient>`, made by
//! [`client`] from an [`LlmConfig`]); the real adapters are [`OpenAiCompatClient`]
//! (DashScope, OpenAI or any compatible server) and [`BedrockClient`] (Amazon Bedrock's
//! Converse API, signed with the function's role). Both share `transport`: the same
//! limits, retries and error mapping, so the chat never asks which provider answers.
//!
//! Streaming contract: [`LlmClient::stream`] returns only once the first content token has
//! arrived (or the answer ended cleanly without one). Everything before that point — connect,
//! status, the wait for the first token — is retried by the client; after it, text has been
//! shown to the visitor, so a failure is yielded as an `Err` item and never retried.

use std::fmt;
use std::pin::Pin;
use std::task::{Context, Poll};

use futures_util::Stream;

use crate::message::{ChatMessage, Usage};

mod bedrock;
mod config;
pub(crate) mod eventstream;
mod openai;
pub(crate) mod sse;
pub(crate) mod transport;

use std::sync::Arc;

pub use bedrock::BedrockClient;
pub use config::{AwsSigning, LlmConfig, LlmProvider};
pub use openai::OpenAiCompatClient;

/// The client for the configured provider, built once per cold start.
pub fn client(config: LlmConfig) -> crate::Result<Arc<dyn LlmClient>> {
    Ok(match config.provider {
        LlmProvider::Bedrock => Arc::new(BedrockClient::new(config)?),
        LlmProvider::DashScope | LlmProvider::OpenAi | LlmProvider::Custom => {
            Arc::new(OpenAiCompatClient::new(config)?)
        }
    })
}

/// Boxed error kept as the source of transport failures, so `reqwest` stays out of the API.
pub use crate::error::BoxError;

/// A chat model that can answer a conversation, whole or token by token.
#[async_trait::async_trait]
pub trait LlmClient: Send + Sync {
    /// The model name sent to the provider (reported back in chat responses).
    fn model(&self) -> &str;

    /// Where the model is served (the provider's base URL): with [`LlmClient::model`],
    /// part of what a cached answer is keyed on. Empty unless the client says.
    fn provider(&self) -> &str {
        ""
    }

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

pub use crate::error::{LlmError, TimeoutPhase, BUSY_RETRY_AFTER_SECS, MAX_ERROR_BODY};

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
    use std::time::Duration;

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
