//! Helpers shared by the search handler tests: function-URL events and calls.
#![allow(dead_code, unreachable_pub)] // each test binary uses a different subset

use lambda_http::{Body, Request};
use search::{function_handler, AppState};
use serde_json::{json, Value};
use shared::{Config, FileKbSource, KbHandle};
use std::sync::Arc;
use std::time::Duration;

pub const GET_EVENT: &str = include_str!("../data/function_url_get.json");
/// The fixture's request id (the function URL's `requestContext.requestId`).
pub const EVENT_REQUEST_ID: &str = "6a1d6f2e-9c1b-4f5e-8a7d-3b2c1d0e9f8a";

/// A state over the repository's sample knowledge base.
pub async fn state() -> AppState {
    let kb = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../knowledge_base.json");
    let source = Arc::new(FileKbSource::new(kb));
    let kb = KbHandle::load(source, Duration::from_secs(300))
        .await
        .expect("sample knowledge base loads");
    let config = Config::from_lookup(|k| {
        (k == "ALLOWED_ORIGINS").then(|| "https://site.example".to_string())
    })
    .expect("config");
    AppState::new(kb, &config)
}

/// Percent-encodes a query-string value as a browser does (UTF-8, every byte outside the
/// unreserved set escaped).
pub fn percent_encode(value: &str) -> String {
    value
        .bytes()
        .map(|b| match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'.' | b'_' | b'~' => {
                char::from(b).to_string()
            }
            _ => format!("%{b:02X}"),
        })
        .collect()
}

/// The GET fixture with its method, query and body replaced.
pub fn event(method: &str, query: &[(&str, &str)], body: Option<&str>) -> Request {
    let raw: Vec<String> = query
        .iter()
        .map(|(k, v)| format!("{k}={}", percent_encode(v)))
        .collect();
    event_with_raw_query(method, &raw.join("&"), body)
}

/// The GET fixture with a raw query string exactly as the function URL received it.
pub fn event_with_raw_query(method: &str, raw_query: &str, body: Option<&str>) -> Request {
    let mut ev: Value = serde_json::from_str(GET_EVENT).unwrap();
    ev["requestContext"]["http"]["method"] = json!(method);
    ev["rawQueryString"] = json!(raw_query);
    // The runtime reads the raw query string; the parsed map is for readers of the event.
    ev.as_object_mut().unwrap().remove("queryStringParameters");
    if let Some(b) = body {
        ev["body"] = json!(b);
        ev["headers"]["content-type"] = json!("application/json");
    }
    lambda_http::request::from_str(&ev.to_string()).expect("valid function URL event")
}

/// A POST whose body arrives base64-encoded (`isBase64Encoded`): the bytes need not be
/// UTF-8.
pub fn post_bytes(body: &[u8]) -> Request {
    let mut ev: Value = serde_json::from_str(GET_EVENT).unwrap();
    ev["requestContext"]["http"]["method"] = json!("POST");
    ev["rawQueryString"] = json!("");
    ev.as_object_mut().unwrap().remove("queryStringParameters");
    ev["body"] = json!(base64::Engine::encode(
        &base64::engine::general_purpose::STANDARD,
        body
    ));
    ev["isBase64Encoded"] = json!(true);
    lambda_http::request::from_str(&ev.to_string()).expect("valid function URL event")
}

/// Calls the handler over a fresh state; returns status, JSON body (null when empty) and
/// headers.
pub async fn call(req: Request) -> (u16, Value, lambda_http::http::HeaderMap) {
    let res = function_handler(&state().await, req).await.unwrap();
    let status = res.status().as_u16();
    let body: Value = match res.body() {
        Body::Empty => Value::Null,
        b => serde_json::from_slice(b.as_ref()).unwrap(),
    };
    (status, body, res.headers().clone())
}
