//! The real model client: OpenAI-compatible `POST {base}/chat/completions` over reqwest.
//!
//! Time limits, all measured from the start of a call:
//! - connect: per connection attempt, enforced by reqwest;
//! - first token (streaming only): until the first content delta, retries included;
//! - total: the whole call, retries and the full streamed answer included.
//!
//! Retries (429, 408, 5xx, connect failures, streams cut before any token) use exponential
//! backoff with jitter, honour `Retry-After` (seconds), and stop when the next attempt could
//! not finish before the deadline.

use std::collections::VecDeque;
use std::future::Future;
use std::time::Duration;

use reqwest::header::{ACCEPT, CONTENT_TYPE, RETRY_AFTER};
use serde::Serialize;
use tokio::time::{timeout_at, Instant};

use super::sse::{parse_completion, ChunkDecoder};
use super::{
    truncate_utf8, Completion, CompletionRequest, CompletionStream, LlmClient, LlmConfig, LlmError,
    StreamEvent, TimeoutPhase, MAX_ERROR_BODY,
};
use crate::message::ChatMessage;
use crate::retry::{Backoff, Verdict};

/// Longest wait between two attempts, whatever the attempt number.
const MAX_BACKOFF: Duration = Duration::from_secs(2);

/// [`LlmClient`] for DashScope, OpenAI and any OpenAI-compatible server.
///
/// Build it once per cold start and share it: it holds the connection pool.
#[derive(Debug, Clone)]
pub struct OpenAiCompatClient {
    http: reqwest::Client,
    url: String,
    config: LlmConfig,
}

impl OpenAiCompatClient {
    /// Builds the client (and its rustls HTTP connection pool) from a configuration.
    pub fn new(config: LlmConfig) -> crate::Result<Self> {
        let http = reqwest::Client::builder()
            .connect_timeout(config.connect_timeout)
            .build()
            .map_err(|e| LlmError::Connect {
                source: Box::new(e),
            })?;
        let url = format!("{}/chat/completions", config.base_url);
        Ok(Self { http, url, config })
    }

    /// The configuration the client was built with.
    pub fn config(&self) -> &LlmConfig {
        &self.config
    }

    fn body(&self, req: &CompletionRequest, stream: bool) -> Result<Vec<u8>, LlmError> {
        let wire = WireRequest {
            model: &self.config.model,
            messages: &req.messages,
            // The configured cap is a cost guard, so it holds whatever a caller asks for.
            max_tokens: req.max_tokens.clamp(1, self.config.max_tokens),
            temperature: req.temperature,
            stream: stream.then_some(true),
            stream_options: stream.then_some(StreamOptions {
                include_usage: true,
            }),
        };
        serde_json::to_vec(&wire).map_err(|e| LlmError::Protocol {
            message: format!("cannot encode the request: {e}"),
            raw: String::new(),
        })
    }

    /// Sends one request; a non-success status becomes [`LlmError::Status`] with the body's
    /// start and the provider's `Retry-After`.
    async fn send(&self, body: &[u8]) -> Result<reqwest::Response, LlmError> {
        let mut request = self
            .http
            .post(&self.url)
            .header(CONTENT_TYPE, "application/json")
            .header(ACCEPT, "application/json, text/event-stream")
            .body(body.to_vec());
        if let Some(key) = &self.config.api_key {
            // bearer_auth marks the header sensitive, so reqwest never prints it either.
            request = request.bearer_auth(key.expose());
        }
        let response = request.send().await.map_err(|e| {
            // The only reqwest timeout configured is the connect one.
            if e.is_timeout() {
                LlmError::Timeout {
                    phase: TimeoutPhase::Connect,
                }
            } else {
                LlmError::Connect {
                    source: Box::new(e),
                }
            }
        })?;
        if response.status().is_success() {
            return Ok(response);
        }
        let status = response.status().as_u16();
        let retry_after = response
            .headers()
            .get(RETRY_AFTER)
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.trim().parse::<u64>().ok())
            .map(Duration::from_secs);
        let body = read_error_body(response).await;
        Err(LlmError::Status {
            status,
            body,
            retry_after,
        })
    }

    /// Runs `attempt` until it succeeds, fails for good, or `deadline` passes, with the
    /// shared retry loop ([`Backoff::run`]): the configured first delay and retry count, a
    /// provider's `Retry-After` instead of the backoff, and a timeout in `phase` when the
    /// deadline cuts an attempt short.
    async fn with_retries<T, F, Fut>(
        &self,
        deadline: Instant,
        phase: TimeoutPhase,
        attempt: F,
    ) -> Result<T, LlmError>
    where
        F: FnMut() -> Fut,
        Fut: Future<Output = Result<T, LlmError>>,
    {
        let backoff = Backoff {
            first: self.config.retry_backoff,
            max: MAX_BACKOFF,
            max_retries: self.config.max_retries,
        };
        let verdict = |e: &LlmError| match e {
            _ if !e.is_retryable() => Verdict::Fatal,
            LlmError::Status {
                retry_after: Some(wait),
                ..
            } => Verdict::RetryAfter(*wait),
            _ => Verdict::Retry,
        };
        backoff
            .run(deadline, verdict, |_| LlmError::Timeout { phase }, attempt)
            .await
    }
}

#[async_trait::async_trait]
impl LlmClient for OpenAiCompatClient {
    fn model(&self) -> &str {
        &self.config.model
    }

    fn provider(&self) -> &str {
        &self.config.base_url
    }

    fn max_tokens(&self) -> u32 {
        self.config.max_tokens
    }

    async fn complete(&self, req: &CompletionRequest) -> Result<Completion, LlmError> {
        let deadline = Instant::now() + self.config.timeout;
        let body = self.body(req, false)?;
        let body = body.as_slice();
        self.with_retries(deadline, TimeoutPhase::Total, move || async move {
            let response = self.send(body).await?;
            let text = response.text().await.map_err(|e| LlmError::Interrupted {
                source: Some(Box::new(e)),
            })?;
            parse_completion(&text, &self.config.model)
        })
        .await
    }

    async fn stream(&self, req: &CompletionRequest) -> Result<CompletionStream, LlmError> {
        let start = Instant::now();
        let total = start + self.config.timeout;
        let first_token = start + self.config.first_token_timeout;
        let (deadline, phase) = if first_token <= total {
            (first_token, TimeoutPhase::FirstToken)
        } else {
            (total, TimeoutPhase::Total)
        };
        let body = self.body(req, true)?;
        let body = body.as_slice();
        let reader = self
            .with_retries(deadline, phase, move || async move {
                let mut reader = ChunkReader::new(self.send(body).await?, total);
                reader.wait_for_first_token().await?;
                Ok(reader)
            })
            .await?;
        tracing::debug!(
            first_token_ms = start.elapsed().as_millis() as u64,
            "model stream started"
        );
        Ok(CompletionStream::new(futures_util::stream::unfold(
            reader,
            |mut reader| async move { reader.next_event().await.map(|event| (event, reader)) },
        )))
    }
}

/// Reads a streaming response into events, enforcing the total deadline on every read.
///
/// Owning the `Response` is what ties the upstream request's life to the stream's: dropping
/// the reader drops the connection.
struct ChunkReader {
    response: reqwest::Response,
    decoder: ChunkDecoder,
    /// Decoded but not yet handed out; an `Err` is always last.
    queue: VecDeque<Result<StreamEvent, LlmError>>,
    /// No more reads: the body ended, `[DONE]` came, or an error was queued.
    ended: bool,
    deadline: Instant,
}

impl ChunkReader {
    fn new(response: reqwest::Response, deadline: Instant) -> Self {
        let decoder = ChunkDecoder::default();
        Self {
            response,
            decoder,
            queue: VecDeque::new(),
            ended: false,
            deadline,
        }
    }

    /// Reads until a content token is buffered or the stream ended cleanly; an error that
    /// comes before any token is returned (so the whole attempt can be retried).
    async fn wait_for_first_token(&mut self) -> Result<(), LlmError> {
        loop {
            match self
                .queue
                .iter()
                .position(|e| !matches!(e, Ok(StreamEvent::Usage(_))))
            {
                // The first item that is not usage decides: a token, or the error.
                Some(i) if self.queue[i].is_ok() => return Ok(()),
                Some(i) => {
                    if let Some(Err(e)) = self.queue.remove(i) {
                        return Err(e);
                    }
                }
                None if self.ended => return Ok(()),
                None => self.read_more().await,
            }
        }
    }

    async fn next_event(&mut self) -> Option<Result<StreamEvent, LlmError>> {
        loop {
            if let Some(event) = self.queue.pop_front() {
                return Some(event);
            }
            if self.ended {
                return None;
            }
            self.read_more().await;
        }
    }

    async fn read_more(&mut self) {
        match timeout_at(self.deadline, self.response.chunk()).await {
            Ok(Ok(Some(bytes))) => {
                self.queue.extend(self.decoder.feed(&bytes));
                self.ended = self.decoder.is_done();
            }
            Ok(Ok(None)) => {
                if let Err(e) = self.decoder.finish() {
                    self.queue.push_back(Err(e));
                }
                self.ended = true;
            }
            Ok(Err(e)) => {
                self.queue.push_back(Err(LlmError::Interrupted {
                    source: Some(Box::new(e)),
                }));
                self.ended = true;
            }
            Err(_elapsed) => {
                self.queue.push_back(Err(LlmError::Timeout {
                    phase: TimeoutPhase::Total,
                }));
                self.ended = true;
            }
        }
    }
}

/// Reads at most [`MAX_ERROR_BODY`] bytes of an error response: enough to diagnose, and a
/// misbehaving upstream cannot make us buffer megabytes.
async fn read_error_body(mut response: reqwest::Response) -> String {
    let mut body = Vec::new();
    while body.len() < MAX_ERROR_BODY {
        match response.chunk().await {
            Ok(Some(bytes)) => body.extend_from_slice(&bytes),
            Ok(None) | Err(_) => break,
        }
    }
    truncate_utf8(String::from_utf8_lossy(&body).into_owned(), MAX_ERROR_BODY)
}

#[derive(Serialize)]
struct WireRequest<'a> {
    model: &'a str,
    messages: &'a [ChatMessage],
    max_tokens: u32,
    #[serde(skip_serializing_if = "Option::is_none")]
    temperature: Option<f32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    stream: Option<bool>,
    #[serde(skip_serializing_if = "Option::is_none")]
    stream_options: Option<StreamOptions>,
}

#[derive(Serialize)]
struct StreamOptions {
    include_usage: bool,
}

#[cfg(test)]
mod tests;
