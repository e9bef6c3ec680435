//! A minimal Lambda Runtime API on `127.0.0.1`, to run a function's real binary through one
//! invocation the way Lambda does and time it: from the spawn to the first
//! `GET /2018-06-01/runtime/invocation/next` (the init), from handing out the event to the
//! first byte of the response body and to the end of the response.
//!
//! HTTP is hand-written, blocking and minimal, one thread per connection: the runtime client
//! keeps one connection alive, sends `GET .../next`, then posts the response either whole
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

use std::io::{self, BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError, Sender};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

/// The request id of the one invocation handed out.
pub const REQUEST_ID: &str = "c0ffee00-0000-4000-8000-000000000001";

/// Largest request (head or body) the fake accepts; a function's answer is far smaller.
const MAX_REQUEST_BYTES: usize = 64 << 20;

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
    let stop = Arc::new(AtomicBool::new(false));
    let accepting = {
        let stop = stop.clone();
        std::thread::spawn(move || serve(listener, event, tx, &stop))
    };

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
    // Wakes the accepting thread so that it sees the flag and ends.
    stop.store(true, Ordering::SeqCst);
    if TcpStream::connect(api).is_ok() {
        let _ = accepting.join();
    }
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

/// Accepts connections until `stop` is set, one thread each.
fn serve(
    listener: TcpListener,
    event: Arc<Mutex<Option<Vec<u8>>>>,
    tx: Sender<Seen>,
    stop: &AtomicBool,
) {
    for stream in listener.incoming() {
        if stop.load(Ordering::SeqCst) {
            return;
        }
        let Ok(stream) = stream else { return };
        let (event, tx) = (event.clone(), tx.clone());
        std::thread::spawn(move || {
            if let Err(e) = connection(stream, &event, &tx) {
                // A connection reset when the process is killed is the normal end.
                if e.kind() != io::ErrorKind::UnexpectedEof {
                    let _ = tx.send(Seen::Error(format!("fake API connection: {e}")));
                }
            }
        });
    }
}

/// Serves the requests of one keep-alive connection.
fn connection(
    stream: TcpStream,
    event: &Mutex<Option<Vec<u8>>>,
    tx: &Sender<Seen>,
) -> io::Result<()> {
    // The fake's own answers must not wait on delayed ACKs either.
    stream.set_nodelay(true)?;
    let mut out = stream.try_clone()?;
    let mut reader = BufReader::new(stream);
    loop {
        let Some(head) = read_head(&mut reader)? else {
            return Ok(());
        };
        let path = head.path.as_str();
        if head.method == "GET" && path == "/2018-06-01/runtime/invocation/next" {
            let _ = tx.send(Seen::Next(Instant::now()));
            // Only one event: a later poll waits until the process is ended and its end of
            // the connection closes.
            let Some(payload) = event.lock().unwrap_or_else(|e| e.into_inner()).take() else {
                let _ = io::copy(&mut reader, &mut io::sink());
                return Ok(());
            };
            out.write_all(&event_response(&payload))?;
            let _ = tx.send(Seen::HandedOut(Instant::now()));
        } else if head.method == "POST" && path.ends_with("/response") {
            let streamed = head
                .header("lambda-runtime-function-response-mode")
                .is_some_and(|m| m.eq_ignore_ascii_case("streaming"));
            let (body, trailers) = read_body(&mut reader, &head, streamed, tx)?;
            let at = Instant::now();
            let (prelude, body) = if streamed {
                split_prelude(body)
            } else {
                (None, body)
            };
            // A streamed response that failed midway says so in a trailer.
            if let Some(error) = trailers.header("lambda-runtime-function-error-type") {
                let _ = tx.send(Seen::Error(format!(
                    "the response ended with error {error}: {}",
                    trailers
                        .header("lambda-runtime-function-error-body")
                        .unwrap_or("")
                )));
            }
            out.write_all(ACCEPTED)?;
            let _ = tx.send(Seen::Response {
                at,
                streamed,
                prelude,
                body,
            });
        } else if head.method == "POST" && path.ends_with("/error") {
            let (body, _) = read_body(&mut reader, &head, false, tx)?;
            out.write_all(ACCEPTED)?;
            let _ = tx.send(Seen::Error(format!(
                "the function posted {path}: {}",
                String::from_utf8_lossy(&body)
            )));
        } else {
            let _ = tx.send(Seen::Error(format!(
                "unexpected request {} {path}",
                head.method
            )));
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

/// A request line and its headers.
#[derive(Debug)]
struct Head {
    method: String,
    path: String,
    headers: Headers,
}

impl Head {
    /// The first value of header `name` (case-insensitive).
    fn header(&self, name: &str) -> Option<&str> {
        self.headers.header(name)
    }
}

/// Header (or trailer) fields in arrival order.
#[derive(Debug, Default)]
struct Headers(Vec<(String, String)>);

impl Headers {
    /// The first value of field `name` (case-insensitive).
    fn header(&self, name: &str) -> Option<&str> {
        self.0
            .iter()
            .find(|(k, _)| k.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }

    /// Reads fields up to the blank line that ends them; `size` counts the bytes read.
    fn read(reader: &mut impl BufRead, size: &mut usize) -> io::Result<Self> {
        let mut fields = Vec::new();
        let mut line = String::new();
        loop {
            line.clear();
            let n = reader.read_line(&mut line)?;
            *size += n;
            if n == 0 {
                return Err(io::ErrorKind::UnexpectedEof.into());
            }
            if *size > MAX_REQUEST_BYTES {
                return Err(invalid("request head too large".into()));
            }
            let field = line.trim_end();
            if field.is_empty() {
                return Ok(Self(fields));
            }
            let (name, value) = field
                .split_once(':')
                .ok_or_else(|| invalid(format!("bad header {field:?}")))?;
            fields.push((name.trim().to_owned(), value.trim().to_owned()));
        }
    }
}

/// Reads a request head; `None` when the client closed the connection between requests.
fn read_head(reader: &mut impl BufRead) -> io::Result<Option<Head>> {
    let mut line = String::new();
    if reader.read_line(&mut line)? == 0 {
        return Ok(None);
    }
    let mut parts = line.split_whitespace();
    let (Some(method), Some(path)) = (parts.next(), parts.next()) else {
        return Err(invalid(format!("bad request line {line:?}")));
    };
    let (method, path) = (method.to_owned(), path.to_owned());
    let headers = Headers::read(reader, &mut line.len())?;
    Ok(Some(Head {
        method,
        path,
        headers,
    }))
}

/// Reads a request body, by `content-length` or chunked, and its trailers. For a streamed
/// response, reports when the first byte after the prelude's delimiter arrives; otherwise
/// when the first byte arrives.
fn read_body(
    reader: &mut impl BufRead,
    head: &Head,
    streamed: bool,
    tx: &Sender<Seen>,
) -> io::Result<(Vec<u8>, Headers)> {
    let mut body = Vec::new();
    let mut reported = false;
    let mut report = |body: &[u8]| {
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
    let chunked = head
        .header("transfer-encoding")
        .is_some_and(|t| t.eq_ignore_ascii_case("chunked"));
    if !chunked {
        let length: usize = head
            .header("content-length")
            .unwrap_or("0")
            .parse()
            .map_err(|_| invalid("bad content-length".into()))?;
        if length > MAX_REQUEST_BYTES {
            return Err(invalid("body too large".into()));
        }
        body.resize(length, 0);
        reader.read_exact(&mut body)?;
        report(&body);
        return Ok((body, Headers::default()));
    }
    loop {
        let mut line = String::new();
        reader.read_line(&mut line)?;
        let size = line.trim_end().split(';').next().unwrap_or("");
        let size = usize::from_str_radix(size.trim(), 16)
            .map_err(|_| invalid(format!("bad chunk size line {line:?}")))?;
        if size == 0 {
            let trailers = Headers::read(reader, &mut 0)?;
            return Ok((body, trailers));
        }
        if body.len() + size > MAX_REQUEST_BYTES {
            return Err(invalid("body too large".into()));
        }
        let start = body.len();
        body.resize(start + size, 0);
        reader.read_exact(&mut body[start..])?;
        report(&body);
        let mut crlf = [0u8; 2];
        reader.read_exact(&mut crlf)?;
    }
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

fn invalid(message: String) -> io::Error {
    io::Error::new(io::ErrorKind::InvalidData, message)
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

    fn head(raw: &str) -> Head {
        read_head(&mut raw.as_bytes()).unwrap().unwrap()
    }

    #[test]
    fn chunked_streamed_bodies_are_split_at_the_prelude_and_report_the_first_body_byte() {
        let raw = "POST /2018-06-01/runtime/invocation/x/response HTTP/1.1\r\n\
                   Transfer-Encoding: chunked\r\n\
                   Lambda-Runtime-Function-Response-Mode: streaming\r\n\r\n";
        let h = head(raw);
        let (tx, rx) = mpsc::channel();
        let mut wire = Vec::new();
        for chunk in [&b"{\"statusCode\":200}"[..], &[0; 8], b"da", b"ta: hi\n\n"] {
            wire.extend(format!("{:x};ext=1\r\n", chunk.len()).into_bytes());
            wire.extend_from_slice(chunk);
            wire.extend_from_slice(b"\r\n");
        }
        wire.extend_from_slice(b"0\r\nLambda-Runtime-Function-Error-Type: x\r\n\r\n");
        let (body, trailers) = read_body(&mut wire.as_slice(), &h, true, &tx).unwrap();
        assert_eq!(
            trailers.header("lambda-runtime-function-error-type"),
            Some("x")
        );
        let (prelude, body) = split_prelude(body);
        assert_eq!(prelude.as_deref(), Some("{\"statusCode\":200}"));
        assert_eq!(body, b"data: hi\n\n");
        let reports: Vec<Seen> = rx.try_iter().collect();
        assert_eq!(reports.len(), 1, "one first byte, at the body: {reports:?}");
    }

    #[test]
    fn whole_bodies_are_read_by_length_and_their_status_is_the_result_objects() {
        let h = head("POST /r/response HTTP/1.1\r\ncontent-length: 18\r\n\r\n");
        let (tx, rx) = mpsc::channel();
        let wire = b"{\"statusCode\":404}GET /next";
        let (body, _) = read_body(&mut &wire[..], &h, false, &tx).unwrap();
        assert_eq!(
            body, b"{\"statusCode\":404}",
            "exactly content-length bytes"
        );
        assert_eq!(rx.try_iter().count(), 1);
        let mut invoked = Invoked {
            init: Duration::ZERO,
            first_byte: None,
            complete: Duration::ZERO,
            peak_rss_kib: None,
            streamed: false,
            prelude: None,
            body,
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

    #[test]
    fn malformed_requests_are_errors_not_panics() {
        assert!(read_head(&mut &b"\r\n"[..]).is_err());
        assert!(read_head(&mut &b"GET / HTTP/1.1\r\nno colon\r\n\r\n"[..]).is_err());
        let h = head("POST /r HTTP/1.1\r\ntransfer-encoding: chunked\r\n\r\n");
        let (tx, _rx) = mpsc::channel();
        assert!(read_body(&mut &b"zz\r\n"[..], &h, false, &tx).is_err());
        let h = head("POST /r HTTP/1.1\r\ncontent-length: 10\r\n\r\n");
        assert!(read_body(&mut &b"short"[..], &h, false, &tx).is_err());
    }
}
