//! A minimal Lambda Runtime API on `127.0.0.1`, to run a function's real binary through one
//! invocation the way Lambda does and time it: from the spawn to the first
//! `GET /2018-06-01/runtime/invocation/next` (the init), from handing out the event to the
//! first byte of the response body and to the end of the response.
//!
//! Requests are read by [`super::http1::Reader`] on a one-thread runtime of the fake's own,
//! one task per connection, whatever the caller runs on: the runtime client keeps one
//! connection alive, sends `GET .../next`, then posts the response either whole
//! (`Content-Length`) or streamed (chunked, `Lambda-Runtime-Function-Response-Mode:
//! streaming`, a JSON prelude then 8 NUL bytes then the body). The second `GET .../next` is
//! never answered: the caller ends the process after reading what it needs.
//!
//! ```no_run
//! # fn demo(exe: &std::path::Path, event: Vec<u8>) {
//! use shared::testing::runtime_api::invoke_once;
//! let run = invoke_once(exe, None, event, std::time::Duration::from_secs(10)).unwrap();
//! println!("init {:?}, answered in {:?}", run.init, run.complete);
//! # }
//! ```

use std::io::{self, Read};
use std::net::TcpListener;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError, Sender};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use tokio::io::{AsyncRead, AsyncWriteExt};
use tokio::sync::oneshot;

use super::http1::{field, Reader, Request};

/// The request id of the one invocation handed out.
pub const REQUEST_ID: &str = "c0ffee00-0000-4000-8000-000000000001";

/// Separates a streamed response's JSON prelude from its body.
const PRELUDE_DELIMITER: [u8; 8] = [0; 8];

/// What one invocation of a function binary took and returned.
#[derive(Debug, Clone)]
pub struct Invoked {
    /// Spawn → the first `GET .../next` arrived (the function's init).
    pub init: Duration,
    /// Event handed out → the first byte of the response body arrived: after the prelude
    /// and its delimiter for a streamed response, the first byte of the payload otherwise.
    /// `None` when the body is empty.
    pub first_byte: Option<Duration>,
    /// Event handed out → the whole response arrived.
    pub complete: Duration,
    /// The function's peak resident memory (`VmHWM`) when the response was complete, in KiB;
    /// `None` where `/proc` cannot tell.
    pub peak_rss_kib: Option<u64>,
    /// Whether the response was streamed.
    pub streamed: bool,
    /// The streamed response's prelude (`statusCode`, `headers`, ...) as JSON text.
    pub prelude: Option<String>,
    /// The body: the bytes after the prelude when streamed, else the posted payload (a
    /// function-URL result object, JSON).
    pub body: Vec<u8>,
    /// Everything the function printed (standard output, then standard error).
    pub output: String,
}

impl Invoked {
    /// The HTTP status the function answered with: the prelude's `statusCode` when
    /// streamed, else the result object's.
    pub fn status(&self) -> Option<u16> {
        let object = match &self.prelude {
            Some(prelude) => prelude.as_bytes(),
            None => &self.body,
        };
        let value: serde_json::Value = serde_json::from_slice(object).ok()?;
        value
            .get("statusCode")?
            .as_u64()
            .and_then(|s| u16::try_from(s).ok())
    }
}

/// Why an invocation could not be measured.
#[derive(Debug, thiserror::Error)]
pub enum InvokeError {
    /// The binary could not be started, or the fake API could not listen.
    #[error("cannot start: {0}")]
    Start(#[from] io::Error),
    /// The function reported an init or invocation error, or exited, instead of answering.
    #[error("{what}\n--- function output ---\n{output}")]
    Failed {
        /// What happened.
        what: String,
        /// Everything the function printed.
        output: String,
    },
}

/// Starts `exe` with the variables Lambda sets (`AWS_LAMBDA_RUNTIME_API` pointing at a fake
/// API on 127.0.0.1) and `env` (`None`: this process's environment; `Some`: exactly those
/// variables, nothing inherited), hands it `event` as its first invocation and measures it
/// (see [`Invoked`]). The process is killed once the response is complete, or after
/// `timeout`.
pub fn invoke_once(
    exe: &Path,
    env: Option<&[(&str, String)]>,
    event: Vec<u8>,
    timeout: Duration,
) -> Result<Invoked, InvokeError> {
    let listener = TcpListener::bind("127.0.0.1:0")?;
    let api = listener.local_addr()?;
    let (tx, rx) = mpsc::channel();
    let event = Arc::new(Mutex::new(Some(event)));
    // The fake serves on a runtime of its own, on one thread, whatever the caller runs on.
    listener.set_nonblocking(true)?;
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_io()
        .build()?;
    let (stop, stopped) = oneshot::channel();
    let accepting =
        std::thread::spawn(move || runtime.block_on(serve(listener, event, tx, stopped)));

    let name = exe
        .file_name()
        .map_or("function".into(), |n| n.to_string_lossy().into_owned());
    let mut command = Command::new(exe);
    if let Some(env) = env {
        command.env_clear().envs(env.iter().map(|(k, v)| (k, v)));
    }
    let started = Instant::now();
    let mut child = command
        .env("AWS_LAMBDA_RUNTIME_API", api.to_string())
        .env("AWS_LAMBDA_FUNCTION_NAME", &name)
        .env("AWS_LAMBDA_FUNCTION_VERSION", "$LATEST")
        .env("AWS_LAMBDA_FUNCTION_MEMORY_SIZE", "1024")
        .env("AWS_LAMBDA_LOG_GROUP_NAME", format!("/aws/lambda/{name}"))
        .env("AWS_LAMBDA_LOG_STREAM_NAME", "cold-start")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()?;
    let output = Output::drain(&mut child);
    let result = watch(&mut child, &rx, started, started + timeout);
    let _ = child.kill();
    let _ = child.wait();
    // Ends the accepting loop; dropping its runtime then closes every connection.
    let _ = stop.send(());
    let _ = accepting.join();
    let output = output.collect();
    match result {
        Ok(mut invoked) => {
            invoked.output = output;
            Ok(invoked)
        }
        Err(what) => Err(InvokeError::Failed { what, output }),
    }
}

/// What the fake API saw, in the order it happens.
#[derive(Debug)]
enum Seen {
    /// A `GET .../next` arrived (only the first one is reported).
    Next(Instant),
    /// The event was written out.
    HandedOut(Instant),
    /// The first body byte arrived.
    FirstByte(Instant),
    /// The whole response arrived.
    Response {
        at: Instant,
        streamed: bool,
        prelude: Option<String>,
        body: Vec<u8>,
    },
    /// The function posted an init or invocation error, or spoke something else.
    Error(String),
}

/// Follows the fake API's reports until the response is complete, the process exits or
/// `deadline` passes.
fn watch(
    child: &mut Child,
    rx: &Receiver<Seen>,
    started: Instant,
    deadline: Instant,
) -> Result<Invoked, String> {
    let (mut next, mut handed_out, mut first_byte) = (None, None, None);
    loop {
        let seen = match rx.recv_timeout(Duration::from_millis(20)) {
            Ok(seen) => seen,
            Err(RecvTimeoutError::Timeout) => {
                if let Ok(Some(status)) = child.try_wait() {
                    return Err(format!("the function exited ({status}) before answering"));
                }
                if Instant::now() >= deadline {
                    return Err(format!(
                        "no answer within {:?}",
                        deadline.duration_since(started)
                    ));
                }
                continue;
            }
            Err(RecvTimeoutError::Disconnected) => return Err("the fake API stopped".into()),
        };
        match seen {
            Seen::Next(at) => next = Some(at),
            Seen::HandedOut(at) => handed_out = Some(at),
            Seen::FirstByte(at) => first_byte = Some(at),
            Seen::Error(what) => return Err(what),
            Seen::Response {
                at,
                streamed,
                prelude,
                body,
            } => {
                let (Some(next), Some(handed_out)) = (next, handed_out) else {
                    return Err("a response arrived before the event was handed out".into());
                };
                return Ok(Invoked {
                    init: next.duration_since(started),
                    first_byte: first_byte.map(|t| t.duration_since(handed_out)),
                    complete: at.duration_since(handed_out),
                    peak_rss_kib: peak_rss_kib(child.id()),
                    streamed,
                    prelude,
                    body,
                    output: String::new(),
                });
            }
        }
    }
}

/// `VmHWM` of a process, in KiB.
fn peak_rss_kib(pid: u32) -> Option<u64> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    line.split_whitespace().nth(1)?.parse().ok()
}

/// Accepts connections until `stop` fires, one task each.
async fn serve(
    listener: TcpListener,
    event: Arc<Mutex<Option<Vec<u8>>>>,
    tx: Sender<Seen>,
    mut stop: oneshot::Receiver<()>,
) {
    let Ok(listener) = tokio::net::TcpListener::from_std(listener) else {
        let _ = tx.send(Seen::Error("the fake API cannot listen".into()));
        return;
    };
    loop {
        let stream = tokio::select! {
            _ = &mut stop => return,
            accepted = listener.accept() => match accepted {
                Ok((stream, _)) => stream,
                Err(_) => return,
            },
        };
        let (event, tx) = (event.clone(), tx.clone());
        tokio::spawn(async move {
            if let Err(e) = connection(stream, &event, &tx).await {
                let _ = tx.send(Seen::Error(format!("fake API connection: {e}")));
            }
        });
    }
}

/// Serves the requests of one keep-alive connection, until the function closes it (its
/// process ended) or a request goes unanswered.
async fn connection(
    stream: tokio::net::TcpStream,
    event: &Mutex<Option<Vec<u8>>>,
    tx: &Sender<Seen>,
) -> io::Result<()> {
    // The fake's own answers must not wait on delayed ACKs either.
    stream.set_nodelay(true)?;
    let (read, mut out) = stream.into_split();
    let mut reader = Reader::new(read);
    loop {
        let Some(mut request) = reader.head().await? else {
            return Ok(());
        };
        let path = request.target().to_owned();
        if request.method() == "GET" && path == "/2018-06-01/runtime/invocation/next" {
            // Only one event: a later poll is never answered (nor reported); the connection
            // stays open until the process is ended.
            let Some(payload) = event.lock().unwrap_or_else(|e| e.into_inner()).take() else {
                return std::future::pending().await;
            };
            let _ = tx.send(Seen::Next(Instant::now()));
            out.write_all(&event_response(&payload)).await?;
            let _ = tx.send(Seen::HandedOut(Instant::now()));
        } else if request.method() == "POST" && path.ends_with("/response") {
            let streamed = request
                .header("lambda-runtime-function-response-mode")
                .is_some_and(|m| m.eq_ignore_ascii_case("streaming"));
            let Some(trailers) = read_response(&mut reader, &mut request, streamed, tx).await?
            else {
                return Ok(());
            };
            let at = Instant::now();
            let body = std::mem::take(&mut request.body);
            let (prelude, body) = if streamed {
                split_prelude(body)
            } else {
                (None, body)
            };
            // A streamed response that failed midway says so in a trailer.
            if let Some(error) = field(&trailers, "lambda-runtime-function-error-type") {
                let _ = tx.send(Seen::Error(format!(
                    "the response ended with error {error}: {}",
                    field(&trailers, "lambda-runtime-function-error-body").unwrap_or("")
                )));
            }
            out.write_all(ACCEPTED).await?;
            let _ = tx.send(Seen::Response {
                at,
                streamed,
                prelude,
                body,
            });
        } else if request.method() == "POST" && path.ends_with("/error") {
            if reader.body(&mut request, |_| {}).await?.is_none() {
                return Ok(());
            }
            out.write_all(ACCEPTED).await?;
            let _ = tx.send(Seen::Error(format!(
                "the function posted {path}: {}",
                String::from_utf8_lossy(&request.body)
            )));
        } else {
            let _ = tx.send(Seen::Error(format!("unexpected request {}", request.line)));
            return Ok(());
        }
    }
}

/// What the Runtime API answers to a posted response or error.
const ACCEPTED: &[u8] =
    b"HTTP/1.1 202 Accepted\r\ncontent-type: application/json\r\ncontent-length: 16\r\n\r\n{\"status\":\"OK\"}\n";

/// The answer to `GET .../next`: the event and the headers the runtime client reads.
fn event_response(payload: &[u8]) -> Vec<u8> {
    let now_ms = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_millis());
    let mut response = format!(
        "HTTP/1.1 200 OK\r\n\
         content-type: application/json\r\n\
         lambda-runtime-aws-request-id: {REQUEST_ID}\r\n\
         lambda-runtime-deadline-ms: {}\r\n\
         lambda-runtime-invoked-function-arn: arn:aws:lambda:us-east-1:000000000000:function:cold-start\r\n\
         lambda-runtime-trace-id: Root=1-00000000-000000000000000000000000;Sampled=0\r\n\
         content-length: {}\r\n\r\n",
        now_ms + 30_000,
        payload.len()
    )
    .into_bytes();
    response.extend_from_slice(payload);
    response
}

/// Reads a posted response's body (by `content-length` or chunked) and its trailers into
/// `request`, reporting when the first byte of the payload arrives: for a streamed response
/// the first byte after the prelude's delimiter, otherwise the first byte. `None` when the
/// connection closed first.
async fn read_response<S: AsyncRead + Unpin>(
    reader: &mut Reader<S>,
    request: &mut Request,
    streamed: bool,
    tx: &Sender<Seen>,
) -> io::Result<Option<Vec<(String, String)>>> {
    let mut reported = false;
    let report = |body: &[u8]| {
        let payload_started = if streamed {
            find_delimiter(body).is_some_and(|end| body.len() > end)
        } else {
            !body.is_empty()
        };
        if payload_started && !reported {
            reported = true;
            let _ = tx.send(Seen::FirstByte(Instant::now()));
        }
    };
    reader.body(request, report).await
}

/// Where the prelude's delimiter ends, if it has arrived.
fn find_delimiter(body: &[u8]) -> Option<usize> {
    body.windows(PRELUDE_DELIMITER.len())
        .position(|w| w == PRELUDE_DELIMITER)
        .map(|start| start + PRELUDE_DELIMITER.len())
}

/// A streamed response's prelude (as text) and body; no prelude when no delimiter came.
fn split_prelude(body: Vec<u8>) -> (Option<String>, Vec<u8>) {
    match find_delimiter(&body) {
        Some(end) => {
            let prelude = String::from_utf8_lossy(&body[..end - PRELUDE_DELIMITER.len()]);
            (Some(prelude.into_owned()), body[end..].to_vec())
        }
        None => (None, body),
    }
}

/// The function's standard output and error, read on threads so a chatty function never
/// blocks on a full pipe.
struct Output {
    readers: Vec<std::thread::JoinHandle<Vec<u8>>>,
}

impl Output {
    fn drain(child: &mut Child) -> Self {
        let mut readers = Vec::new();
        if let Some(mut out) = child.stdout.take() {
            readers.push(std::thread::spawn(move || {
                let mut buf = Vec::new();
                let _ = out.read_to_end(&mut buf);
                buf
            }));
        }
        if let Some(mut err) = child.stderr.take() {
            readers.push(std::thread::spawn(move || {
                let mut buf = Vec::new();
                let _ = err.read_to_end(&mut buf);
                buf
            }));
        }
        Self { readers }
    }

    /// Everything printed, once the process has ended.
    fn collect(self) -> String {
        let mut all = Vec::new();
        for reader in self.readers {
            all.extend(reader.join().unwrap_or_default());
        }
        String::from_utf8_lossy(&all).into_owned()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Reads a posted response off `wire`: its body, trailers and first-byte reports.
    async fn response(wire: &[u8], streamed: bool) -> (Request, Vec<(String, String)>, usize) {
        let mut reader = Reader::new(wire);
        let mut request = reader.head().await.unwrap().unwrap();
        let (tx, rx) = mpsc::channel();
        let trailers = read_response(&mut reader, &mut request, streamed, &tx)
            .await
            .unwrap()
            .unwrap();
        (request, trailers, rx.try_iter().count())
    }

    #[tokio::test]
    async fn chunked_streamed_bodies_are_split_at_the_prelude_and_report_the_first_body_byte() {
        let mut wire = b"POST /2018-06-01/runtime/invocation/x/response HTTP/1.1\r\n\
                   Transfer-Encoding: chunked\r\n\
                   Lambda-Runtime-Function-Response-Mode: streaming\r\n\r\n"
            .to_vec();
        for chunk in [&b"{\"statusCode\":200}"[..], &[0; 8], b"da", b"ta: hi\n\n"] {
            wire.extend(format!("{:x};ext=1\r\n", chunk.len()).into_bytes());
            wire.extend_from_slice(chunk);
            wire.extend_from_slice(b"\r\n");
        }
        wire.extend_from_slice(b"0\r\nLambda-Runtime-Function-Error-Type: x\r\n\r\n");
        let (request, trailers, reports) = response(&wire, true).await;
        assert_eq!(
            field(&trailers, "lambda-runtime-function-error-type"),
            Some("x")
        );
        let (prelude, body) = split_prelude(request.body);
        assert_eq!(prelude.as_deref(), Some("{\"statusCode\":200}"));
        assert_eq!(body, b"data: hi\n\n");
        assert_eq!(reports, 1, "one first byte, at the body");
    }

    #[tokio::test]
    async fn whole_bodies_are_read_by_length_and_their_status_is_the_result_objects() {
        let wire =
            b"POST /r/response HTTP/1.1\r\ncontent-length: 18\r\n\r\n{\"statusCode\":404}GET /next";
        let (request, _, reports) = response(wire, false).await;
        assert_eq!(
            request.body, b"{\"statusCode\":404}",
            "exactly content-length bytes"
        );
        assert_eq!(reports, 1);
        let mut invoked = Invoked {
            init: Duration::ZERO,
            first_byte: None,
            complete: Duration::ZERO,
            peak_rss_kib: None,
            streamed: false,
            prelude: None,
            body: request.body,
            output: String::new(),
        };
        assert_eq!(invoked.status(), Some(404));
        invoked.prelude = Some("{\"statusCode\":200}".into());
        assert_eq!(
            invoked.status(),
            Some(200),
            "a stream's status is in its prelude"
        );
    }
}
