//! The `/mcp` path of the function URL: the site as an MCP server (`shared::mcp`), with the
//! search API's CORS policy and body limit.

use lambda_http::http::{header, HeaderValue, Method, StatusCode};
use lambda_http::{Body, Request, RequestExt, Response};
use shared::edge::{self, RequestLog};
use shared::mcp::Reply;

use crate::AppState;

/// Request headers a browser-based MCP client may send across origins.
const MCP_HEADERS: &str =
    "content-type, accept, authorization, mcp-protocol-version, mcp-session-id, last-event-id";

/// Whether the request is for the MCP endpoint (`/mcp`, with or without a trailing slash).
pub(crate) fn is_mcp_path(event: &Request) -> bool {
    event.raw_http_path().trim_end_matches('/') == "/mcp"
}

/// Answers one request to `/mcp`.
pub(crate) async fn handle(state: &AppState, event: &Request) -> Response<Body> {
    let origin = edge::origin(event);
    if event.method() == Method::OPTIONS {
        return state
            .cors
            .preflight_allowing(origin, "POST, OPTIONS", MCP_HEADERS);
    }
    let request_id = edge::request_id(event);
    let mut log = RequestLog::start("search", &request_id);
    // The search API's per-client limit: an agent's calls count as its searches do.
    if *event.method() == Method::POST {
        let admitted = state
            .limit
            .admit(
                edge::source_ip(event).as_deref(),
                std::time::SystemTime::now(),
            )
            .await;
        if let Err(e) = admitted {
            let mut res =
                edge::error_response(&shared::edge::ApiError::from(&e), &request_id, None);
            state.cors.apply(origin, res.headers_mut());
            log.finish_status(res.status().as_u16());
            return res;
        }
    }
    let reply = match *event.method() {
        Method::POST if state.cors.refuses(origin) => {
            Reply::origin_refused(origin.unwrap_or_default())
        }
        Method::POST => {
            // A header that is not text is passed as an empty value: unsupported, refused.
            let version = event
                .headers()
                .get("mcp-protocol-version")
                .map(|v| v.to_str().unwrap_or(""));
            let index = state.kb.current().await;
            state.mcp.post(&index, version, event.body().as_ref())
        }
        _ => Reply::method_not_allowed(),
    };
    let mut res = match &reply.body {
        Some(body) => edge::json_response(reply.status, body),
        None => {
            let mut res = Response::new(Body::Empty);
            *res.status_mut() = StatusCode::from_u16(reply.status).unwrap_or(StatusCode::ACCEPTED);
            res
        }
    };
    if reply.status == 405 {
        res.headers_mut()
            .insert(header::ALLOW, HeaderValue::from_static("POST, OPTIONS"));
    }
    state.cors.apply(origin, res.headers_mut());
    log.hit_ids = reply.ids;
    log.finish_status(reply.status);
    res
}
