//! One HTTP/1.1 request read off a socket, for the test servers that speak HTTP by hand
//! (the fake model in [`super::fake_llm`], the fault proxy in [`super::fault_proxy`]): they
//! need the bytes exactly as sent and control over every byte of the answer (split writes,
//! stalls, dropped connections), which a server framework would take away.
//!
//! Bodies are `content-length` only: the SDKs and reqwest send no chunked requests to these
//! servers, and one that came would be refused rather than misread.

use std::io;

use tokio::io::{AsyncRead, AsyncReadExt};

/// The longest request head read; a longer one is refused ([`io::ErrorKind::InvalidData`]).
pub const MAX_HEAD: usize = 64 * 1024;

/// A request as read off the socket.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Request {
    /// The request line (`POST /chat/completions HTTP/1.1`).
    pub line: String,
    /// Headers in arrival order, names as sent.
    pub headers: Vec<(String, String)>,
    /// The body, `content-length` bytes.
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
        self.headers
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }
}

/// Reads one request: `None` if the client closed the connection first. A head longer than
/// [`MAX_HEAD`] or a chunked body is an [`io::ErrorKind::InvalidData`] error saying so.
pub async fn read_request(socket: &mut (impl AsyncRead + Unpin)) -> io::Result<Option<Request>> {
    let mut buf = Vec::new();
    let head_end = loop {
        if let Some(pos) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
            break pos;
        }
        if buf.len() > MAX_HEAD {
            return Err(refused("request head too large for a test server"));
        }
        if !read_more(socket, &mut buf).await? {
            return Ok(None);
        }
    };
    let head = String::from_utf8_lossy(&buf[..head_end]).into_owned();
    let mut lines = head.split("\r\n");
    let line = lines.next().unwrap_or_default().to_owned();
    let headers = lines
        .filter_map(|l| l.split_once(':'))
        .map(|(n, v)| (n.trim().to_owned(), v.trim().to_owned()))
        .collect();
    let mut request = Request {
        line,
        headers,
        body: buf.split_off(head_end + 4),
    };
    if request
        .header("transfer-encoding")
        .is_some_and(|v| v.eq_ignore_ascii_case("chunked"))
    {
        return Err(refused("chunked request bodies are not supported"));
    }
    let length = request
        .header("content-length")
        .and_then(|v| v.parse::<usize>().ok())
        .unwrap_or(0);
    while request.body.len() < length {
        if !read_more(socket, &mut request.body).await? {
            return Ok(None);
        }
    }
    Ok(Some(request))
}

/// Appends what the socket has to `buf`; false when it is closed.
async fn read_more(socket: &mut (impl AsyncRead + Unpin), buf: &mut Vec<u8>) -> io::Result<bool> {
    let mut chunk = [0u8; 8192];
    let n = socket.read(&mut chunk).await?;
    buf.extend_from_slice(&chunk[..n]);
    Ok(n > 0)
}

fn refused(why: &'static str) -> io::Error {
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
    }
}
