//! The HTTP edge shared by the functions: error bodies, JSON responses and CORS.
//!
//! Every error leaves as `{"error": {"code", "message", "request_id"}}`
//! (`docs/architecture.md`, "HTTP API"). 4xx messages say what was wrong; 5xx messages are
//! generic and the cause goes to the log.
//! CORS is decided here and nowhere else (the template sets none on the function URLs).

use crate::chat::ChatEvent;
use crate::error::escape_controls;
use crate::error::Error;
use lambda_http::http::{header, HeaderMap, HeaderValue, StatusCode};
use lambda_http::{Body, Request, RequestExt, Response};
use serde::Serialize;

/// Largest accepted request body for search and chat, in bytes.
pub const MAX_BODY_BYTES: usize = 64 * 1024;

/// An error ready to be sent: status, machine-readable code, human message.
#[derive(Debug, Clone, PartialEq)]
pub struct ApiError {
    /// HTTP status: 4xx for the caller's mistakes, 5xx for ours or a dependency's.
    pub status: u16,
    /// Stable machine-readable code, e.g. `invalid_request`.
    pub code: &'static str,
    /// What went wrong, for the caller.
    pub message: String,
    /// Seconds to wait before retrying (sent as `Retry-After`).
    pub retry_after: Option<u64>,
    /// Every validation problem, when the error is about a knowledge base.
    pub problems: Vec<crate::error::Problem>,
}

impl ApiError {
    /// An error with no retry hint or problem list. Control characters in `message` (which
    /// may quote the request) are escaped: it is both sent and logged.
    pub fn new(status: u16, code: &'static str, message: impl Into<String>) -> Self {
        let message: String = message.into();
        Self {
            status,
            code,
            message: escape_controls(&message).into_owned(),
            retry_after: None,
            problems: Vec::new(),
        }
    }

    /// 400: the request is malformed or invalid.
    pub fn bad_request(message: impl Into<String>) -> Self {
        Self::new(400, "invalid_request", message)
    }

    /// 405: the method is not served; `allowed` lists what is.
    pub fn method_not_allowed(allowed: &str) -> Self {
        Self::new(405, "method_not_allowed", format!("use {allowed}"))
    }

    /// 403: the calling page's origin is not in `ALLOWED_ORIGINS`.
    pub fn origin_not_allowed(origin: &str) -> Self {
        Self::new(
            403,
            "origin_not_allowed",
            format!("origin {origin:?} may not call this function (see ALLOWED_ORIGINS)"),
        )
    }

    /// 413: the body is larger than `limit` bytes.
    pub fn payload_too_large(limit: usize) -> Self {
        Self::new(
            413,
            "payload_too_large",
            format!("request body is larger than {limit} bytes"),
        )
    }

    /// True for 5xx errors, whose cause belongs in the log rather than the response.
    pub fn is_server_error(&self) -> bool {
        self.status >= 500
    }
}

impl From<&Error> for ApiError {
    fn from(err: &Error) -> Self {
        match err {
            Error::InvalidInput(m) => Self::bad_request(m.clone()),
            Error::InvalidKb(p) => Self {
                problems: p.0.clone(),
                ..Self::new(
                    400,
                    "invalid_knowledge_base",
                    format!("the knowledge base has {} problem(s)", p.0.len()),
                )
            },
            Error::Llm(e) if e.http_status() == 504 => Self::new(
                504,
                "model_timeout",
                "the language model did not answer in time",
            ),
            Error::Llm(e) if e.http_status() == 503 => {
                let secs = e
                    .retry_after_secs()
                    .unwrap_or(crate::llm::BUSY_RETRY_AFTER_SECS);
                Self {
                    retry_after: Some(secs),
                    ..Self::new(
                        503,
                        "model_busy",
                        format!("the language model is busy; retry in {secs} s"),
                    )
                }
            }
            Error::Llm(_) => Self::new(502, "model_error", "the language model request failed"),
            Error::Store(e) if e.is_retryable() => Self {
                retry_after: Some(1),
                ..Self::new(
                    503,
                    "store_unavailable",
                    "storage is busy or unavailable; retry shortly",
                )
            },
            Error::KbSource(e @ crate::kb::KbSourceError::NotFound { .. }) => {
                Self::new(404, "not_found", e.to_string())
            }
            Error::KbSource(e) if e.is_retryable() => Self {
                retry_after: Some(1),
                ..Self::new(
                    503,
                    "kb_unavailable",
                    "knowledge-base storage is unavailable; retry shortly",
                )
            },
            Error::KbSource(_) => {
                Self::new(502, "kb_source_error", "knowledge-base storage failed")
            }
            Error::Conflict(m) => Self::new(409, "conflict", m.clone()),
            Error::PreconditionRequired(m) => Self::new(428, "precondition_required", m.clone()),
            Error::TooLarge(m) => Self::new(413, "payload_too_large", m.clone()),
            Error::Unauthorized(m) => Self::new(401, "unauthorized", m.clone()),
            Error::Forbidden(m) => Self::new(403, "forbidden", m.clone()),
            Error::BotCheck(e) => Self::new(403, e.code(), e.message()),
            Error::NotFound(m) => Self::new(404, "not_found", m.clone()),
            Error::RateLimited {
                retry_after_secs, ..
            } => Self {
                retry_after: Some(*retry_after_secs),
                ..Self::new(429, "rate_limited", err.to_string())
            },
            _ => Self::new(500, "internal", "internal error"),
        }
    }
}

#[derive(Serialize)]
struct ErrorBody<'a> {
    error: ErrorDetail<'a>,
}

#[derive(Serialize)]
struct ErrorDetail<'a> {
    code: &'a str,
    message: &'a str,
    request_id: &'a str,
    #[serde(skip_serializing_if = "<[_]>::is_empty")]
    problems: &'a [crate::error::Problem],
}

#[derive(Serialize)]
struct DeltaData<'a> {
    text: &'a str,
}

#[derive(Serialize)]
struct EventError<'a> {
    code: &'a str,
    message: &'a str,
}

/// A streamed chat event framed for the wire: `event: <name>\ndata: <json>\n\n`. JSON
/// escapes line breaks, so the data is always a single line. An error is sent as its
/// [`ApiError`] code and message, the same as a JSON answer's.
pub fn sse_event(event: &ChatEvent) -> String {
    let data = match event {
        ChatEvent::Sources(s) => serde_json::to_string(s),
        ChatEvent::Delta { text } => serde_json::to_string(&DeltaData { text }),
        ChatEvent::Done(d) => serde_json::to_string(d),
        ChatEvent::Error(e) => {
            let api = ApiError::from(&**e);
            serde_json::to_string(&EventError {
                code: api.code,
                message: &api.message,
            })
        }
    }
    .unwrap_or_else(|_| "{}".to_owned());
    format!("event: {}\ndata: {data}\n\n", event.name())
}

/// A JSON response with the given status.
pub fn json_response(status: u16, body: &impl Serialize) -> Response<Body> {
    let text = serde_json::to_string(body).unwrap_or_else(|_| "{}".to_owned());
    let mut res = Response::new(Body::from(text));
    *res.status_mut() = StatusCode::from_u16(status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
    res.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/json"),
    );
    res
}

/// The error's JSON response; logs 4xx at `warn` and 5xx at `error` (with `cause`).
pub fn error_response(err: &ApiError, request_id: &str, cause: Option<&Error>) -> Response<Body> {
    if err.is_server_error() {
        tracing::error!(status = err.status, code = err.code, request_id, cause = ?cause, "request failed");
    } else {
        tracing::warn!(status = err.status, code = err.code, request_id, message = %err.message, "request rejected");
    }
    let body = ErrorBody {
        error: ErrorDetail {
            code: err.code,
            message: &err.message,
            request_id,
            problems: &err.problems,
        },
    };
    let mut res = json_response(err.status, &body);
    if let Some(secs) = err.retry_after {
        if let Ok(v) = HeaderValue::from_str(&secs.to_string()) {
            res.headers_mut().insert(header::RETRY_AFTER, v);
        }
    }
    res
}

/// The request id of an event: the Lambda invocation's, else the function URL's request
/// context's, else `local`.
pub fn request_id(event: &Request) -> String {
    if let Some(ctx) = event.lambda_context_ref() {
        return ctx.request_id.clone();
    }
    match event.request_context_ref() {
        Some(lambda_http::request::RequestContext::ApiGatewayV2(ctx)) => {
            ctx.request_id.clone().unwrap_or_else(|| "local".to_owned())
        }
        _ => "local".to_owned(),
    }
}

/// The caller's address as the function URL saw it (the TCP peer, not a header a client
/// could forge), when the event carries one.
pub fn source_ip(event: &Request) -> Option<String> {
    match event.request_context_ref() {
        Some(lambda_http::request::RequestContext::ApiGatewayV2(ctx)) => {
            ctx.http.source_ip.clone().filter(|ip| !ip.is_empty())
        }
        _ => None,
    }
}

/// The event's body, or 413 when it exceeds `limit` bytes.
pub fn body_bytes(event: &Request, limit: usize) -> Result<&[u8], ApiError> {
    let body: &[u8] = event.body().as_ref();
    if body.len() > limit {
        return Err(ApiError::payload_too_large(limit));
    }
    Ok(body)
}

/// The CORS policy: which browser origins may call the functions.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Cors {
    origins: Vec<String>,
    any: bool,
}

impl Cors {
    /// A policy from `ALLOWED_ORIGINS` entries; `*` allows any origin, none allows none.
    pub fn new(origins: &[String]) -> Self {
        Self {
            any: origins.iter().any(|o| o == "*"),
            origins: origins.to_vec(),
        }
    }

    /// The value for `Access-Control-Allow-Origin`, if `origin` may call.
    fn allow(&self, origin: Option<&str>) -> Option<HeaderValue> {
        let origin = origin?;
        if self.any {
            return Some(HeaderValue::from_static("*"));
        }
        let origin = origin.trim_end_matches('/');
        self.origins
            .iter()
            .any(|o| o.eq_ignore_ascii_case(origin))
            .then(|| HeaderValue::from_str(origin).ok())
            .flatten()
    }

    /// True when a browser says which page sent the request (`Origin`) and that origin may
    /// not call. CORS only hides the answer from such a page; a "simple" cross-origin `POST`
    /// (`content-type: text/plain`) still arrives and would still be answered and paid for,
    /// so it is refused before any work. Requests without `Origin` (curl, servers) pass.
    pub fn refuses(&self, origin: Option<&str>) -> bool {
        origin.is_some() && self.allow(origin).is_none()
    }

    /// Adds the CORS headers for `origin` to a response.
    pub fn apply(&self, origin: Option<&str>, headers: &mut HeaderMap) {
        if let Some(v) = self.allow(origin) {
            headers.insert(header::ACCESS_CONTROL_ALLOW_ORIGIN, v);
            headers.insert(
                header::ACCESS_CONTROL_EXPOSE_HEADERS,
                HeaderValue::from_static("retry-after"),
            );
        }
        if !self.any {
            // Responses differ by origin; caches must keep them apart.
            headers.insert(header::VARY, HeaderValue::from_static("origin"));
        }
    }

    /// The answer to a preflight `OPTIONS` request: 204 with the allowed methods and
    /// headers if the origin may call, 403 otherwise.
    pub fn preflight(&self, origin: Option<&str>, methods: &'static str) -> Response<Body> {
        self.preflight_allowing(
            origin,
            methods,
            "content-type, authorization, accept, if-match",
        )
    }

    /// [`Cors::preflight`] allowing the request headers `headers` (a comma-separated list).
    pub fn preflight_allowing(
        &self,
        origin: Option<&str>,
        methods: &'static str,
        headers: &'static str,
    ) -> Response<Body> {
        let mut res = Response::new(Body::Empty);
        if self.allow(origin).is_none() {
            *res.status_mut() = StatusCode::FORBIDDEN;
            return res;
        }
        *res.status_mut() = StatusCode::NO_CONTENT;
        let h = res.headers_mut();
        self.apply(origin, h);
        h.insert(
            header::ACCESS_CONTROL_ALLOW_METHODS,
            HeaderValue::from_static(methods),
        );
        h.insert(
            header::ACCESS_CONTROL_ALLOW_HEADERS,
            HeaderValue::from_static(headers),
        );
        h.insert(
            header::ACCESS_CONTROL_MAX_AGE,
            HeaderValue::from_static("600"),
        );
        res
    }
}

/// The request's `Origin` header.
pub fn origin(event: &Request) -> Option<&str> {
    event
        .headers()
        .get(header::ORIGIN)
        .and_then(|v| v.to_str().ok())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn events_are_framed_as_single_line_sse() {
        let e = ChatEvent::Delta {
            text: "line one\nline two".into(),
        };
        assert_eq!(
            sse_event(&e),
            "event: delta\ndata: {\"text\":\"line one\\nline two\"}\n\n"
        );
        let timeout = crate::llm::LlmError::Timeout {
            phase: crate::llm::TimeoutPhase::FirstToken,
        };
        let e = ChatEvent::Error(std::sync::Arc::new(Error::Llm(timeout)));
        assert_eq!(
            sse_event(&e),
            "event: error\ndata: {\"code\":\"model_timeout\",\"message\":\"the language model did not answer in time\"}\n\n"
        );
    }

    #[test]
    fn cors_allows_listed_origins_only() {
        let cors = Cors::new(&["https://site.example".to_string()]);
        let mut h = HeaderMap::new();
        cors.apply(Some("https://site.example"), &mut h);
        assert_eq!(
            h[header::ACCESS_CONTROL_ALLOW_ORIGIN],
            "https://site.example"
        );
        let mut h = HeaderMap::new();
        cors.apply(Some("https://evil.example"), &mut h);
        assert!(h.get(header::ACCESS_CONTROL_ALLOW_ORIGIN).is_none());
        assert_eq!(
            cors.preflight(Some("https://evil.example"), "GET").status(),
            403
        );
        let ok = cors.preflight(Some("https://site.example"), "GET, POST");
        assert_eq!(ok.status(), 204);
        assert_eq!(
            ok.headers()[header::ACCESS_CONTROL_ALLOW_METHODS],
            "GET, POST"
        );
    }

    #[test]
    fn cors_star_allows_any_origin_and_none_allows_nothing() {
        let mut h = HeaderMap::new();
        Cors::new(&["*".to_string()]).apply(Some("https://x.example"), &mut h);
        assert_eq!(h[header::ACCESS_CONTROL_ALLOW_ORIGIN], "*");
        let mut h = HeaderMap::new();
        Cors::default().apply(Some("https://x.example"), &mut h);
        assert!(h.get(header::ACCESS_CONTROL_ALLOW_ORIGIN).is_none());
    }

    #[test]
    fn error_body_has_code_message_request_id_and_retry_after() {
        let err = ApiError {
            retry_after: Some(7),
            ..ApiError::new(429, "rate_limited", "slow down")
        };
        let res = error_response(&err, "req-1", None);
        assert_eq!(res.status(), 429);
        assert_eq!(res.headers()[header::RETRY_AFTER], "7");
        let body: serde_json::Value = serde_json::from_slice(res.body().as_ref()).unwrap();
        assert_eq!(
            body,
            serde_json::json!({"error": {"code": "rate_limited", "message": "slow down", "request_id": "req-1"}})
        );
    }

    #[test]
    fn library_errors_map_to_statuses() {
        assert_eq!(ApiError::from(&Error::InvalidInput("x".into())).status, 400);
        let kb = Error::InvalidKb(crate::error::Problems(vec![crate::error::Problem::new(
            "documents",
            "is required",
        )]));
        let api = ApiError::from(&kb);
        assert_eq!((api.status, api.problems.len()), (400, 1));
        let internal = ApiError::from(&Error::Config {
            var: "X",
            message: "secret detail".into(),
        });
        assert_eq!(internal.status, 500);
        for (err, status) in [
            (Error::Conflict("x".into()), 409),
            (Error::PreconditionRequired("x".into()), 428),
            (Error::TooLarge("x".into()), 413),
            (Error::Unauthorized("x".into()), 401),
            (Error::Forbidden("x".into()), 403),
            (
                Error::KbSource(crate::kb::KbSourceError::NotFound {
                    location: "s3://b/k".into(),
                }),
                404,
            ),
            (
                Error::KbSource(crate::kb::KbSourceError::Unavailable {
                    location: "s3://b/k".into(),
                    message: "timed out".into(),
                    source: None,
                }),
                503,
            ),
            (
                Error::KbSource(crate::kb::KbSourceError::Other {
                    location: "s3://b/k".into(),
                    message: "AccessDenied".into(),
                    source: None,
                }),
                502,
            ),
        ] {
            assert_eq!(ApiError::from(&err).status, status, "{err}");
        }
        assert!(
            !internal.message.contains("secret"),
            "5xx messages stay generic"
        );
    }
}
