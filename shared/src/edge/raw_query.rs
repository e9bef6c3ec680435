//! Function-URL query strings the runtime would choke on.
//!
//! A function URL passes the query string on as the client sent it (`rawQueryString`),
//! and a client such as curl may send a quote, a brace or a control character unescaped.
//! `lambda_http` builds the request URI from that string and panics (`failed to build
//! request: InvalidUriChar`) when it is not a valid URI query, before any handler runs:
//! the visitor gets a 502 and the log a panic instead of a 200 or a clear 400.
//!
//! [`RawQueryGuard`] sits between the runtime and `lambda_http`'s adapter and
//! percent-escapes exactly those bytes first. Escaping does not change what the handler
//! reads: query parameters are percent-decoded, so `q=a"b` and `q=a%22b` mean the same.

use std::task::{Context, Poll};

use lambda_http::request::LambdaRequest;
use lambda_http::tower::Service;
use lambda_http::LambdaEvent;

/// Whether `b` may stand unescaped in a URI query as the `http` crate parses it.
fn allowed(b: u8) -> bool {
    // Controls, space, DEL and the characters RFC 3986 excludes from URIs (`#` would
    // end the query). Bytes of UTF-8 characters (>= 0x80) are accepted as they are.
    !(b <= b' ' || b == 0x7f || b"\"#<>\\^`{|}".contains(&b))
}

/// `query` with every byte a URI query may not hold percent-escaped; borrowed when
/// nothing needed escaping (the usual case).
pub fn escape_raw_query(query: &str) -> std::borrow::Cow<'_, str> {
    if query.bytes().all(allowed) {
        return query.into();
    }
    let mut out = String::with_capacity(query.len() + 8);
    for c in query.chars() {
        if c.is_ascii() && !allowed(c as u8) {
            out.push_str(&format!("%{:02X}", c as u8));
        } else {
            out.push(c);
        }
    }
    out.into()
}

/// A service that escapes the raw query string of function-URL (API Gateway v2) events
/// before handing them to `inner` (`lambda_http`'s adapter).
#[derive(Debug, Clone)]
pub struct RawQueryGuard<S>(pub S);

impl<S> Service<LambdaEvent<LambdaRequest>> for RawQueryGuard<S>
where
    S: Service<LambdaEvent<LambdaRequest>>,
{
    type Response = S::Response;
    type Error = S::Error;
    type Future = S::Future;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), Self::Error>> {
        self.0.poll_ready(cx)
    }

    fn call(&mut self, mut event: LambdaEvent<LambdaRequest>) -> Self::Future {
        if let LambdaRequest::ApiGatewayV2(request) = &mut event.payload {
            if let Some(query) = request.raw_query_string.as_mut() {
                if let std::borrow::Cow::Owned(escaped) = escape_raw_query(query) {
                    *query = escaped;
                }
            }
        }
        self.0.call(event)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_bytes_a_uri_query_cannot_hold_are_escaped() {
        assert!(matches!(
            escape_raw_query("q=LLaVA%20x&k=2"),
            std::borrow::Cow::Borrowed(_)
        ));
        assert_eq!(escape_raw_query("q=ما هو"), "q=ما%20هو");
        assert_eq!(
            escape_raw_query("q=a\"b<c>{d}|e^`\\#\u{0}\u{7f}\t"),
            "q=a%22b%3Cc%3E%7Bd%7D%7Ce%5E%60%5C%23%00%7F%09"
        );
    }

    #[test]
    fn every_escaped_query_makes_a_valid_uri() {
        let mut all = String::from("q=");
        all.extend((0u8..0x80).map(char::from));
        all.push_str("é中🦙");
        let uri = format!("https://x.example/?{}", escape_raw_query(&all));
        assert!(
            lambda_http::http::Uri::try_from(uri.as_str()).is_ok(),
            "{uri}"
        );
    }
}
