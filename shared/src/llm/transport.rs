//! What every HTTP model client shares, whatever its wire format: the connection pool, the
//! mapping of transport failures and error statuses to [`LlmError`], the retry loop, and the
//! reader that turns a streamed body into events under the call's deadlines.
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

use reqwest::header::RETRY_AFTER;
use tokio::time::{timeout_at, Instant};

use super::{truncate_utf8, CompletionStream, LlmConfig, LlmError, StreamEvent, TimeoutPhase};
use super::{Completion, MAX_ERROR_BODY};
use crate::message::Usage;
use crate::retry::{Backoff, Verdict};

/// Longest wait between two attempts, whatever the attempt number.
const MAX_BACKOFF: Duration = Duration::from_secs(2);

/// Turns the bytes of a streamed answer into events; one per wire format (SSE, AWS event
/// stream). Pure: no I/O, so framing corners are unit-tested without a server.
pub(crate) trait FrameDecoder: Send + 'static {
    /// Feeds the next bytes; returns the events they complete. After an error item nothing
    /// more is decoded: what follows a protocol error cannot be trusted.
    fn feed(&mut self, bytes: &[u8]) -> Vec<Result<StreamEvent, LlmError>>;

    /// Whether the answer is over (its last event or an error): the reader stops reading.
    fn is_done(&self) -> bool;

    /// Called at the end of the byte stream: fine if the answer finished, else `Interrupted`.
    fn finish(&self) -> Result<(), LlmError>;
}

/// The HTTP client (and its rustls connection pool) for one model client.
pub(crate) fn http_client(config: &LlmConfig) -> Result<reqwest::Client, LlmError> {
    reqwest::Client::builder()
        .connect_timeout(config.connect_timeout)
        .build()
        .map_err(|e| LlmError::Connect {
            source: Box::new(e),
        })
}

/// Sends a request; a non-success status becomes [`LlmError::Status`] with the body's start
/// and the provider's `Retry-After`.
pub(crate) async fn send(request: reqwest::RequestBuilder) -> Result<reqwest::Response, LlmError> {
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

/// Runs `attempt` until it succeeds, fails for good, or `deadline` passes, with the shared
/// retry loop ([`Backoff::run`]): the configured first delay and retry count, a provider's
/// `Retry-After` instead of the backoff, and a timeout in `phase` when the deadline cuts an
/// attempt short.
pub(crate) async fn with_retries<T, F, Fut>(
    config: &LlmConfig,
    deadline: Instant,
    phase: TimeoutPhase,
    attempt: F,
) -> Result<T, LlmError>
where
    F: FnMut() -> Fut,
    Fut: Future<Output = Result<T, LlmError>>,
{
    let backoff = Backoff {
        first: config.retry_backoff,
        max: MAX_BACKOFF,
        max_retries: config.max_retries,
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

/// A streamed call under the configured limits: `send` is one attempt's request (made again
/// for each retry), `decoder` a fresh decoder for its body. Returns once the first token is in
/// (the [`super::LlmClient::stream`] contract); everything before that is retried.
pub(crate) async fn stream<D, S, Fut>(
    config: &LlmConfig,
    decoder: impl Fn() -> D,
    send: S,
) -> Result<CompletionStream, LlmError>
where
    D: FrameDecoder,
    S: Fn() -> Fut,
    Fut: Future<Output = Result<reqwest::Response, LlmError>>,
{
    let start = Instant::now();
    let total = start + config.timeout;
    let first_token = start + config.first_token_timeout;
    let (deadline, phase) = if first_token <= total {
        (first_token, TimeoutPhase::FirstToken)
    } else {
        (total, TimeoutPhase::Total)
    };
    let (decoder, send) = (&decoder, &send);
    let reader = with_retries(config, deadline, phase, move || async move {
        let mut reader = StreamReader::new(send().await?, decoder(), total);
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

/// Reads a whole streamed answer into one [`Completion`] (for providers whose only wire
/// format is a stream): the text joined, the last usage reported.
pub(crate) async fn collect(
    mut stream: CompletionStream,
    model: &str,
) -> Result<Completion, LlmError> {
    use futures_util::StreamExt;
    let mut text = String::new();
    let mut usage: Option<Usage> = None;
    while let Some(event) = stream.next().await {
        match event? {
            StreamEvent::Delta(delta) => text.push_str(&delta),
            StreamEvent::Usage(u) => usage = Some(u),
        }
    }
    Ok(Completion {
        text,
        usage,
        model: model.to_string(),
    })
}

/// Reads a streaming response into events, enforcing the total deadline on every read.
///
/// Owning the `Response` is what ties the upstream request's life to the stream's: dropping
/// the reader drops the connection.
struct StreamReader<D> {
    response: reqwest::Response,
    decoder: D,
    /// Decoded but not yet handed out; an `Err` is always last.
    queue: VecDeque<Result<StreamEvent, LlmError>>,
    /// No more reads: the body ended, the answer did, or an error was queued.
    ended: bool,
    deadline: Instant,
}

impl<D: FrameDecoder> StreamReader<D> {
    fn new(response: reqwest::Response, decoder: D, deadline: Instant) -> Self {
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
