//! HTTP/1.1 requests read off a socket, for the test servers that speak HTTP by hand (the
//! fake model in [`super::fake_llm`], the fault proxy in [`super::fault_proxy`], the fake
//! Lambda Runtime API in [`super::runtime_api`]): they need the bytes exactly as sent and
//! control over every byte of the answer (split writes, stalls, dropped connections), which
//! a server framework would take away.
//!
//! [`read_request`] reads one request with a `content-length` body: the SDKs and reqwest
//! send no chunked requests to the fake model or the proxy, and one that came would be
//! refused rather than forwarded re-framed. A [`Reader`] reads the requests of a keep-alive
//! connection one after another, with `content-length` or chunked bodies and their
//! trailers, reporting each piece of a body as it arrives (the runtime client streams a
//! response as chunks).
//!
//! Whatever arrives, the reader answers with a request or an
//! [`io::ErrorKind::InvalidData`] error saying what was wrong; it never panics, and it
//! bounds what it buffers ([`MAX_HEAD`], [`MAX_BODY`]).

use std::io;

use tokio::io::{AsyncRead, AsyncReadExt};

/// The longest request head (request line and headers, or a chunked body's trailers) read;
/// a longer one is refused.
pub const MAX_HEAD: usize = 64 * 1024;

/// The largest request body read; a larger one is refused. A function's answer to the fake
/// Runtime API is far smaller, and so is anything sent to the fake model.
pub const MAX_BODY: usize = 64 << 20;

/// A request as read off the socket.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Request {
    /// The request line (`POST /chat/completions HTTP/1.1`).
    pub line: String,
    /// Headers in arrival order, names as sent.
    pub headers: Vec<(String, String)>,
    /// The body (empty until [`Reader::body`] has read it).
    pub body: Vec<u8>,
}

impl Request {
    /// The method (`POST`).
    pub fn method(&self) -> &str {
        self.line.split(' ').next().unwrap_or_default()
    }

    /// The request target (`/chat/completions`).
    pub fn target(&self) -> &str {
        self.line.split(' ').nth(1).unwrap_or_default()
    }

    /// The first value of header `name` (case-insensitive).
    pub fn header(&self, name: &str) -> Option<&str> {
        field(&self.headers, name)
    }

    /// Whether the body comes chunked (`transfer-encoding: chunked`).
    fn is_chunked(&self) -> bool {
        self.header("transfer-encoding")
            .is_some_and(|v| v.eq_ignore_ascii_case("chunked"))
    }
}

/// The first value of field `name` (case-insensitive) in `fields`.
pub fn field<'a>(fields: &'a [(String, String)], name: &str) -> Option<&'a str> {
    fields
        .iter()
        .find(|(n, _)| n.eq_ignore_ascii_case(name))
        .map(|(_, v)| v.as_str())
}

/// Reads one request with its `content-length` body: `None` if the client closed the
/// connection before it was whole. A head longer than [`MAX_HEAD`], a malformed head or a
/// chunked body is an [`io::ErrorKind::InvalidData`] error saying so.
pub async fn read_request(socket: &mut (impl AsyncRead + Unpin)) -> io::Result<Option<Request>> {
    let mut reader = Reader::new(socket);
    let Some(mut request) = reader.head().await? else {
        return Ok(None);
    };
    if request.is_chunked() {
        return Err(invalid("chunked request bodies are not supported"));
    }
    Ok(reader.body(&mut request, |_| {}).await?.map(|_| request))
}

/// The requests of one connection, read one after another: bytes that arrive past one
/// request are kept for the next.
#[derive(Debug)]
pub struct Reader<S> {
    socket: S,
    buf: Vec<u8>,
}

impl<S: AsyncRead + Unpin> Reader<S> {
    /// A reader of the requests `socket` brings.
    pub fn new(socket: S) -> Self {
        Self {
            socket,
            buf: Vec::new(),
        }
    }

    /// Reads the next request's line and headers (its body stays to be read with
    /// [`Reader::body`]): `None` if the connection closed first.
    pub async fn head(&mut self) -> io::Result<Option<Request>> {
        let mut budget = MAX_HEAD;
        let Some(line) = self.line(&mut budget).await? else {
            return Ok(None);
        };
        // Method SP target SP version, split as `Request::method` and `target` split it.
        let parts: Vec<&str> = line.split(' ').collect();
        if parts.len() != 3 || parts.iter().any(|p| p.is_empty()) {
            return Err(invalid(format!("bad request line {line:?}")));
        }
        let Some(headers) = self.fields(&mut budget).await? else {
            return Ok(None);
        };
        Ok(Some(Request {
            line,
            headers,
            body: Vec::new(),
        }))
    }

    /// Reads `request`'s body into `request.body`, by `content-length` or chunked, calling
    /// `progress` with the body so far after each piece arrives. Returns a chunked body's
    /// trailers (none for a `content-length` body), or `None` if the connection closed
    /// before the body was whole.
    pub async fn body(
        &mut self,
        request: &mut Request,
        mut progress: impl FnMut(&[u8]),
    ) -> io::Result<Option<Vec<(String, String)>>> {
        if request.is_chunked() {
            return self.chunks(&mut request.body, progress).await;
        }
        let length = match request.header("content-length") {
            None => 0,
            Some(v) => v
                .parse::<usize>()
                .map_err(|_| invalid(format!("bad content-length {v:?}")))?,
        };
        if length > MAX_BODY {
            return Err(invalid("request body too large for a test server"));
        }
        if !self.take(length, &mut request.body).await? {
            return Ok(None);
        }
        progress(&request.body);
        Ok(Some(Vec::new()))
    }

    /// Reads a chunked body and its trailers.
    async fn chunks(
        &mut self,
        body: &mut Vec<u8>,
        mut progress: impl FnMut(&[u8]),
    ) -> io::Result<Option<Vec<(String, String)>>> {
        loop {
            let mut budget = MAX_HEAD;
            let Some(line) = self.line(&mut budget).await? else {
                return Ok(None);
            };
            let size = line.split(';').next().unwrap_or_default().trim();
            let size = usize::from_str_radix(size, 16)
                .map_err(|_| invalid(format!("bad chunk size line {line:?}")))?;
            if size == 0 {
                let mut budget = MAX_HEAD;
                return self.fields(&mut budget).await;
            }
            if body.len().saturating_add(size) > MAX_BODY {
                return Err(invalid("request body too large for a test server"));
            }
            if !self.take(size, body).await? {
                return Ok(None);
            }
            progress(body);
            let mut crlf = Vec::new();
            if !self.take(2, &mut crlf).await? {
                return Ok(None);
            }
            if crlf != b"\r\n" {
                return Err(invalid("a chunk does not end with CRLF"));
            }
        }
    }

    /// Reads header (or trailer) fields up to the blank line that ends them.
    async fn fields(&mut self, budget: &mut usize) -> io::Result<Option<Vec<(String, String)>>> {
        let mut fields = Vec::new();
        loop {
            let Some(line) = self.line(budget).await? else {
                return Ok(None);
            };
            if line.is_empty() {
                return Ok(Some(fields));
            }
            let (name, value) = line
                .split_once(':')
                .ok_or_else(|| invalid(format!("bad header {line:?}")))?;
            fields.push((name.trim().to_owned(), value.trim().to_owned()));
        }
    }

    /// One line without its CRLF, taken from `budget` bytes at most.
    async fn line(&mut self, budget: &mut usize) -> io::Result<Option<String>> {
        let mut searched = 0;
        loop {
            if let Some(pos) = self.buf[searched..].windows(2).position(|w| w == b"\r\n") {
                let end = searched + pos;
                if end + 2 > *budget {
                    return Err(invalid("request head too large for a test server"));
                }
                *budget -= end + 2;
                let line = String::from_utf8_lossy(&self.buf[..end]).into_owned();
                self.buf.drain(..end + 2);
                return Ok(Some(line));
            }
            if self.buf.len() > *budget {
                return Err(invalid("request head too large for a test server"));
            }
            searched = self.buf.len().saturating_sub(1);
            if !self.fill().await? {
                return Ok(None);
            }
        }
    }

    /// Moves the next `n` bytes to `out`; false if the connection closed first.
    async fn take(&mut self, n: usize, out: &mut Vec<u8>) -> io::Result<bool> {
        while self.buf.len() < n {
            if !self.fill().await? {
                return Ok(false);
            }
        }
        out.extend(self.buf.drain(..n));
        Ok(true)
    }

    /// Appends what the socket has to the buffer; false when it is closed.
    async fn fill(&mut self) -> io::Result<bool> {
        let mut chunk = [0u8; 8192];
        let n = self.socket.read(&mut chunk).await?;
        self.buf.extend_from_slice(&chunk[..n]);
        Ok(n > 0)
    }
}

fn invalid(why: impl Into<Box<dyn std::error::Error + Send + Sync>>) -> io::Error {
    io::Error::new(io::ErrorKind::InvalidData, why)
}

#[cfg(test)]
mod tests {
    use super::*;

    async fn read(raw: &[u8]) -> io::Result<Option<Request>> {
        read_request(&mut &raw[..]).await
    }

    #[tokio::test]
    async fn a_request_is_read_with_its_content_length_body() {
        let raw = b"POST /chat/completions HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\n\r\n{}";
        let request = read(raw).await.unwrap().unwrap();
        assert_eq!(request.method(), "POST");
        assert_eq!(request.target(), "/chat/completions");
        assert_eq!(request.header("content-length"), Some("2"));
        assert_eq!(request.headers[0], ("Host".to_owned(), "x".to_owned()));
        assert_eq!(request.body, b"{}");
    }

    #[tokio::test]
    async fn a_client_that_leaves_early_is_none_and_unsupported_requests_are_errors() {
        assert_eq!(read(b"POST / HTTP/1.1\r\nHost").await.unwrap(), None);
        let short = b"POST / HTTP/1.1\r\ncontent-length: 9\r\n\r\n{}";
        assert_eq!(read(short).await.unwrap(), None);
        let chunked = b"POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n";
        let err = read(chunked).await.unwrap_err();
        assert_eq!(err.kind(), io::ErrorKind::InvalidData);
        assert!(err.to_string().contains("chunked"), "{err}");
        let huge = [b'a'; MAX_HEAD + 10];
        assert_eq!(
            read(&huge).await.unwrap_err().kind(),
            io::ErrorKind::InvalidData
        );
        let many_headers = [
            &b"GET / HTTP/1.1\r\n"[..],
            &b"a: b\r\n".repeat(MAX_HEAD / 6 + 1),
        ]
        .concat();
        assert_eq!(
            read(&many_headers).await.unwrap_err().kind(),
            io::ErrorKind::InvalidData,
            "the bound is on the whole head, not each line"
        );
    }

    #[tokio::test]
    async fn malformed_heads_and_bodies_are_errors_not_panics() {
        for raw in [
            &b"\r\n"[..],
            b"GET\r\n\r\n",
            b"GET  /x HTTP/1.1\r\n\r\n",
            b"GET\t/x HTTP/1.1\r\n\r\n",
            b"GET / HTTP/1.1\r\nno colon\r\n\r\n",
            b"POST / HTTP/1.1\r\ncontent-length: ten\r\n\r\n",
            b"POST / HTTP/1.1\r\ncontent-length: 99999999999\r\n\r\n",
        ] {
            let err = read(raw).await.unwrap_err();
            assert_eq!(err.kind(), io::ErrorKind::InvalidData, "{raw:?}: {err}");
        }
        let mut reader =
            Reader::new(&b"POST /r HTTP/1.1\r\ntransfer-encoding: chunked\r\n\r\nzz\r\n"[..]);
        let mut request = reader.head().await.unwrap().unwrap();
        let err = reader.body(&mut request, |_| {}).await.unwrap_err();
        assert!(err.to_string().contains("chunk size"), "{err}");
        let mut reader =
            Reader::new(&b"POST /r HTTP/1.1\r\ntransfer-encoding: chunked\r\n\r\n2\r\nabXY"[..]);
        let mut request = reader.head().await.unwrap().unwrap();
        let err = reader.body(&mut request, |_| {}).await.unwrap_err();
        assert!(err.to_string().contains("CRLF"), "{err}");
    }

    #[tokio::test]
    async fn a_keep_alive_connection_yields_its_requests_in_turn_chunked_bodies_with_trailers() {
        let mut wire = b"GET /next HTTP/1.1\r\nHost: x\r\n\r\n".to_vec();
        wire.extend_from_slice(b"POST /response HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n");
        for chunk in [&b"{\"a\":1}"[..], b"xyz"] {
            wire.extend(format!("{:x};ext=1\r\n", chunk.len()).into_bytes());
            wire.extend_from_slice(chunk);
            wire.extend_from_slice(b"\r\n");
        }
        wire.extend_from_slice(b"0\r\nError-Type: x\r\n\r\n");
        wire.extend_from_slice(b"POST /error HTTP/1.1\r\ncontent-length: 3\r\n\r\nabc");

        let mut reader = Reader::new(&wire[..]);
        let mut next = reader.head().await.unwrap().unwrap();
        assert_eq!((next.method(), next.target()), ("GET", "/next"));
        assert_eq!(reader.body(&mut next, |_| {}).await.unwrap(), Some(vec![]));
        assert!(next.body.is_empty());

        let mut response = reader.head().await.unwrap().unwrap();
        assert!(response.is_chunked());
        let mut pieces = Vec::new();
        let trailers = reader
            .body(&mut response, |so_far| pieces.push(so_far.len()))
            .await
            .unwrap()
            .unwrap();
        assert_eq!(response.body, b"{\"a\":1}xyz");
        assert_eq!(pieces, [7, 10], "progress after each chunk");
        assert_eq!(field(&trailers, "error-type"), Some("x"));

        let mut error = reader.head().await.unwrap().unwrap();
        reader.body(&mut error, |_| {}).await.unwrap().unwrap();
        assert_eq!((error.target(), &error.body[..]), ("/error", &b"abc"[..]));
        assert_eq!(
            reader.head().await.unwrap(),
            None,
            "then the connection ends"
        );
    }

    #[tokio::test]
    async fn a_body_cut_short_is_none() {
        let mut reader =
            Reader::new(&b"POST /r HTTP/1.1\r\ntransfer-encoding: chunked\r\n\r\n5\r\nab"[..]);
        let mut request = reader.head().await.unwrap().unwrap();
        assert_eq!(reader.body(&mut request, |_| {}).await.unwrap(), None);
    }
}
