//! A fake OpenAI-compatible provider: a real HTTP/1.1 server on `127.0.0.1:0`.
//!
//! The client under test talks to it over real sockets exactly as to DashScope or OpenAI,
//! so timeouts, partial reads, dropped connections and retries are exercised for real.
//! HTTP is hand-written and minimal: one request per connection (`connection: close`), the
//! request body read by `content-length`, streamed answers sent with chunked encoding.
//!
//! ```no_run
//! # async fn demo() {
//! use shared::testing::{Behavior, FakeLlm};
//! let fake = FakeLlm::start(vec![Behavior::status(429), Behavior::stream(&["Hel", "lo"])]).await;
//! let config = fake.config(); // points at the fake, with millisecond timeouts
//! # }
//! ```

use std::io;
use std::sync::Arc;
use std::time::Duration;

use serde_json::{json, Value};
use tokio::io::AsyncWriteExt;
use tokio::net::TcpStream;

use super::serve::{wait_for_close, Script, ScriptedServer};
use crate::llm::{LlmConfig, LlmProvider};
use crate::secret::Secret;

/// Usage the fake reports for a streamed answer: `PROMPT_TOKENS` + one token per chunk.
pub const PROMPT_TOKENS: u32 = 10;

/// How the fake answers one request. The script is consumed one per request; the last
/// behaviour repeats for every request after it.
#[derive(Debug, Clone)]
pub enum Behavior {
    /// A complete SSE answer: a comment line, a role chunk, one delta per chunk (each after
    /// `delay`), a finish chunk, a usage chunk and `[DONE]`. With `split_lines`, every event
    /// is written in three pieces (cut at arbitrary bytes, even inside a character), each
    /// flushed separately, so the client sees partial lines.
    Stream {
        /// The content deltas, in order.
        chunks: Vec<String>,
        /// Pause before each delta.
        delay: Duration,
        /// Write each event in several TCP writes.
        split_lines: bool,
    },
    /// A well-behaved model, whichever way it is asked: these deltas streamed (each after
    /// `delay`) when the request says `stream`, else their concatenation as one
    /// chat.completion after the same total time. For serving runs of the real stack
    /// (`examples/fake_llm.rs`), where chat asks both ways.
    Answer {
        /// The content deltas, in order.
        chunks: Vec<String>,
        /// Pause before each delta (the whole of them before a JSON answer).
        delay: Duration,
    },
    /// A non-streaming chat.completion answer.
    Json {
        /// The answer text.
        text: String,
    },
    /// An error status with a body, optionally with `Retry-After: <seconds>`.
    Status {
        /// The HTTP status (429, 500, ...).
        code: u16,
        /// The response body.
        body: String,
        /// `Retry-After` in seconds.
        retry_after: Option<u64>,
    },
    /// A streamed answer whose first event is not JSON.
    Malformed,
    /// Streams these deltas, then an event that is not JSON, then `[DONE]`.
    MalformedAfter {
        /// The good deltas sent first.
        chunks: Vec<String>,
    },
    /// Reads the request and never answers.
    Stall,
    /// Streams these deltas, then hangs without finishing.
    StallAfter {
        /// The deltas sent before hanging.
        chunks: Vec<String>,
    },
    /// Streams these deltas, then closes the socket mid-body (no `[DONE]`).
    CloseMidStream {
        /// The deltas sent before closing.
        chunks: Vec<String>,
    },
    /// Answers with the system prompt(s) and the last user message it received, separated
    /// by a blank line; streamed word by word or as JSON, as the request asked.
    Echo,
    /// Reads the request, sends nothing until `gate` is notified (`notify_one`, before or
    /// after the request arrives), then behaves as `then`: a test can check what happened
    /// before the model said anything without guessing how long that takes.
    Gated {
        /// Opens the answer.
        gate: Arc<tokio::sync::Notify>,
        /// The answer once open.
        then: Box<Behavior>,
    },
}

impl Behavior {
    /// A prompt, unsplit [`Behavior::Stream`] of these deltas.
    pub fn stream(chunks: &[&str]) -> Self {
        Behavior::Stream {
            chunks: chunks.iter().map(|c| c.to_string()).collect(),
            delay: Duration::ZERO,
            split_lines: false,
        }
    }

    /// A [`Behavior::Status`] with a provider-like JSON error body and no `Retry-After`.
    pub fn status(code: u16) -> Self {
        let body = json!({"error": {"message": format!("fake error {code}"), "code": code}});
        Behavior::Status {
            code,
            body: body.to_string(),
            retry_after: None,
        }
    }
}

/// One request the fake received.
#[derive(Debug, Clone)]
pub struct RecordedRequest {
    /// HTTP method (`POST`).
    pub method: String,
    /// Request path (`/v1/chat/completions`).
    pub path: String,
    /// Headers in arrival order, names lowercased.
    pub headers: Vec<(String, String)>,
    /// The JSON body (`Value::Null` if it was not JSON).
    pub body: Value,
}

impl RecordedRequest {
    /// The first header with this (case-insensitive) name.
    pub fn header(&self, name: &str) -> Option<&str> {
        let name = name.to_ascii_lowercase();
        self.headers
            .iter()
            .find(|(n, _)| *n == name)
            .map(|(_, v)| v.as_str())
    }
}

/// A running fake provider; stops accepting connections when dropped.
#[derive(Debug)]
pub struct FakeLlm {
    server: ScriptedServer<Behavior, RecordedRequest>,
}

/// What the server keeps between connections.
type State = Script<Behavior, RecordedRequest>;

impl FakeLlm {
    /// Starts the server on a free port of 127.0.0.1 with this script.
    ///
    /// # Panics
    /// If no local port can be bound (a broken test machine).
    pub async fn start(script: Vec<Behavior>) -> FakeLlm {
        let server = ScriptedServer::start(script, |socket, state| async move {
            handle(socket, &state).await
        })
        .await;
        FakeLlm { server }
    }

    /// The base URL to configure (`http://127.0.0.1:<port>/v1`).
    pub fn base_url(&self) -> String {
        format!("http://{}/v1", self.server.addr)
    }

    /// Every request received so far, in arrival order.
    pub fn requests(&self) -> Vec<RecordedRequest> {
        self.server.requests()
    }

    /// How many requests arrived.
    pub fn request_count(&self) -> usize {
        self.server.requests().len()
    }

    /// How many times a client closed its connection before the answer was complete.
    pub fn disconnects(&self) -> usize {
        self.server.disconnects()
    }

    /// Waits up to `timeout` for at least one early client disconnect; true if one came.
    pub async fn wait_for_disconnect(&self, timeout: Duration) -> bool {
        self.server.wait_for_disconnect(timeout).await
    }

    /// A client configuration pointing at this server: key `test-key`, model `fake-model`,
    /// 2 retries with a 5 ms backoff, and timeouts short enough for fast tests (connect
    /// 500 ms, first token 500 ms, total 2 s). Adjust fields as a test needs.
    pub fn config(&self) -> LlmConfig {
        LlmConfig {
            provider: LlmProvider::Custom,
            base_url: self.base_url(),
            model: "fake-model".to_string(),
            api_key: Some(Secret::new("test-key")),
            aws: None,
            timeout: Duration::from_secs(2),
            connect_timeout: Duration::from_millis(500),
            first_token_timeout: Duration::from_millis(500),
            max_retries: 2,
            max_tokens: 256,
            retry_backoff: Duration::from_millis(5),
        }
    }
}

/// Serves one connection: read one request, record it, answer per the script.
async fn handle(mut socket: TcpStream, state: &State) -> io::Result<()> {
    socket.set_nodelay(true)?;
    let Some(request) = read_request(&mut socket).await? else {
        return Ok(());
    };
    let mut behavior = state.next(|| Behavior::status(500));
    state.record(request.clone());
    while let Behavior::Gated { gate, then } = behavior {
        gate.notified().await;
        behavior = *then;
    }
    let model = request
        .body
        .get("model")
        .and_then(Value::as_str)
        .unwrap_or("fake-model");
    let wants_stream = request
        .body
        .get("stream")
        .and_then(Value::as_bool)
        .unwrap_or(false);

    match behavior {
        Behavior::Stream {
            chunks,
            delay,
            split_lines,
        } => write_stream(&mut socket, model, &chunks, delay, split_lines).await,
        Behavior::Answer { chunks, delay } if wants_stream => {
            write_stream(&mut socket, model, &chunks, delay, false).await
        }
        Behavior::Answer { chunks, delay } => {
            // A whole answer takes as long to generate as the stream of it would.
            let n = u32::try_from(chunks.len()).unwrap_or(u32::MAX);
            tokio::time::sleep(delay.saturating_mul(n)).await;
            write_json(&mut socket, model, &chunks.concat()).await
        }
        Behavior::Json { text } => write_json(&mut socket, model, &text).await,
        Behavior::Status {
            code,
            body,
            retry_after,
        } => {
            let extra = retry_after
                .map(|s| format!("retry-after: {s}\r\n"))
                .unwrap_or_default();
            let head = format!(
                "HTTP/1.1 {code} Fake\r\ncontent-type: application/json\r\n{extra}\
                 content-length: {}\r\nconnection: close\r\n\r\n",
                body.len()
            );
            socket.write_all(head.as_bytes()).await?;
            socket.write_all(body.as_bytes()).await?;
            close(&mut socket).await
        }
        Behavior::Malformed => {
            write_stream_head(&mut socket).await?;
            write_chunk(&mut socket, b"data: {\"choices\": [ {not json\n\n").await?;
            write_chunk(&mut socket, b"data: [DONE]\n\n").await?;
            finish_chunked(&mut socket).await
        }
        Behavior::MalformedAfter { chunks } => {
            write_stream_head(&mut socket).await?;
            for event in delta_events(model, &chunks) {
                write_chunk(&mut socket, event.as_bytes()).await?;
            }
            write_chunk(&mut socket, b"data: {\"choices\": [ {not json\n\n").await?;
            write_chunk(&mut socket, b"data: [DONE]\n\n").await?;
            finish_chunked(&mut socket).await
        }
        Behavior::Stall => wait_for_close(&mut socket).await,
        Behavior::StallAfter { chunks } => {
            write_stream_head(&mut socket).await?;
            for event in delta_events(model, &chunks) {
                write_chunk(&mut socket, event.as_bytes()).await?;
            }
            wait_for_close(&mut socket).await
        }
        Behavior::CloseMidStream { chunks } => {
            write_stream_head(&mut socket).await?;
            for event in delta_events(model, &chunks) {
                write_chunk(&mut socket, event.as_bytes()).await?;
            }
            // Closing without the terminating zero-size chunk: the body is cut short.
            close(&mut socket).await
        }
        Behavior::Echo => {
            let text = echo_text(&request.body);
            if wants_stream {
                let words: Vec<String> = text.split_inclusive(' ').map(String::from).collect();
                write_stream(&mut socket, model, &words, Duration::ZERO, false).await
            } else {
                write_json(&mut socket, model, &text).await
            }
        }
        // Opened above.
        Behavior::Gated { .. } => unreachable!("a gate is waited for before answering"),
    }
}

/// Reads one request ([`super::http1`]); `None` if the client left first.
async fn read_request(socket: &mut TcpStream) -> io::Result<Option<RecordedRequest>> {
    let Some(request) = super::http1::read_request(socket).await? else {
        return Ok(None);
    };
    Ok(Some(RecordedRequest {
        method: request.method().to_owned(),
        path: request.target().to_owned(),
        headers: request
            .headers
            .iter()
            .map(|(n, v)| (n.to_ascii_lowercase(), v.clone()))
            .collect(),
        body: serde_json::from_slice(&request.body).unwrap_or(Value::Null),
    }))
}

async fn write_stream(
    socket: &mut TcpStream,
    model: &str,
    chunks: &[String],
    delay: Duration,
    split_lines: bool,
) -> io::Result<()> {
    write_stream_head(socket).await?;
    let mut events = vec![": fake-llm keep-alive\n\n".to_string()];
    events.extend(delta_events(model, chunks));
    let finish = json!({"object": "chat.completion.chunk", "model": model,
        "choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}], "usage": null});
    let completion = chunks.len() as u32;
    let usage = json!({"object": "chat.completion.chunk", "model": model, "choices": [],
        "usage": {"prompt_tokens": PROMPT_TOKENS, "completion_tokens": completion,
                  "total_tokens": PROMPT_TOKENS + completion}});
    events.push(format!("data: {finish}\n\n"));
    events.push(format!("data: {usage}\n\n"));
    events.push("data: [DONE]\n\n".to_string());

    for (i, event) in events.iter().enumerate() {
        // Events 2.. up to the finish chunk are the deltas (0 is the comment, 1 the role).
        if i >= 2 && i < 2 + chunks.len() && !delay.is_zero() {
            tokio::time::sleep(delay).await;
        }
        if split_lines {
            let bytes = event.as_bytes();
            let (a, b) = (bytes.len() / 3, 2 * bytes.len() / 3);
            for piece in [&bytes[..a], &bytes[a..b], &bytes[b..]] {
                write_chunk(socket, piece).await?;
                // Gives the client time to read each piece on its own.
                tokio::time::sleep(Duration::from_millis(2)).await;
            }
        } else {
            write_chunk(socket, event.as_bytes()).await?;
        }
    }
    finish_chunked(socket).await
}

/// The role chunk and one `data:` event per delta, as providers send them.
fn delta_events(model: &str, chunks: &[String]) -> Vec<String> {
    let role = json!({"object": "chat.completion.chunk", "model": model,
        "choices": [{"index": 0, "delta": {"role": "assistant", "content": ""}, "finish_reason": null}]});
    let mut events = vec![format!("data: {role}\n\n")];
    for chunk in chunks {
        let delta = json!({"object": "chat.completion.chunk", "model": model,
            "choices": [{"index": 0, "delta": {"content": chunk}, "finish_reason": null}]});
        events.push(format!("data: {delta}\n\n"));
    }
    events
}

async fn write_json(socket: &mut TcpStream, model: &str, text: &str) -> io::Result<()> {
    let completion = text.split_whitespace().count() as u32;
    let body = json!({"id": "chatcmpl-fake", "object": "chat.completion", "model": model,
        "choices": [{"index": 0, "message": {"role": "assistant", "content": text},
                     "finish_reason": "stop"}],
        "usage": {"prompt_tokens": PROMPT_TOKENS, "completion_tokens": completion,
                  "total_tokens": PROMPT_TOKENS + completion}})
    .to_string();
    let head = format!(
        "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: {}\r\n\
         connection: close\r\n\r\n",
        body.len()
    );
    socket.write_all(head.as_bytes()).await?;
    socket.write_all(body.as_bytes()).await?;
    close(socket).await
}

async fn write_stream_head(socket: &mut TcpStream) -> io::Result<()> {
    let head = "HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ncache-control: no-cache\r\n\
                transfer-encoding: chunked\r\nconnection: close\r\n\r\n";
    socket.write_all(head.as_bytes()).await?;
    socket.flush().await
}

/// Writes one HTTP chunk in a single write, so each call is one TCP segment.
async fn write_chunk(socket: &mut TcpStream, data: &[u8]) -> io::Result<()> {
    if data.is_empty() {
        return Ok(()); // a zero-size chunk would end the body
    }
    let mut frame = format!("{:x}\r\n", data.len()).into_bytes();
    frame.extend_from_slice(data);
    frame.extend_from_slice(b"\r\n");
    socket.write_all(&frame).await?;
    socket.flush().await
}

async fn finish_chunked(socket: &mut TcpStream) -> io::Result<()> {
    socket.write_all(b"0\r\n\r\n").await?;
    close(socket).await
}

/// Ends our side. Errors are ignored: once the answer is out, a client that already
/// closed did nothing wrong and must not count as a disconnect.
async fn close(socket: &mut TcpStream) -> io::Result<()> {
    let _ = socket.shutdown().await;
    Ok(())
}

/// System prompt(s), a blank line, then the last user message.
fn echo_text(body: &Value) -> String {
    let messages = body
        .get("messages")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    let content_of = |role: &str| -> Vec<String> {
        messages
            .iter()
            .filter(|m| m.get("role").and_then(Value::as_str) == Some(role))
            .filter_map(|m| m.get("content").and_then(Value::as_str).map(String::from))
            .collect()
    };
    let system = content_of("system").join("\n");
    let user = content_of("user").pop().unwrap_or_default();
    format!("{system}\n\n{user}")
}
