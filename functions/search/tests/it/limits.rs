//! The search function's per-client rate limit: the chat's `RATE_LIMIT_PER_MINUTE`, by the
//! function URL's source address.

use crate::common;

use common::*;
use search::function_handler;
use serde_json::{json, Value};
use shared::limits::{ClientLimit, ClientLimitConfig, Counters, MemoryCounters};
use std::sync::Arc;

/// The fixture GET from `ip`.
fn get_from(ip: &str) -> lambda_http::Request {
    let mut ev: Value = serde_json::from_str(GET_EVENT).unwrap();
    ev["requestContext"]["http"]["sourceIp"] = json!(ip);
    lambda_http::request::from_str(&ev.to_string()).unwrap()
}

#[tokio::test]
async fn a_client_past_the_limit_gets_429_with_retry_after_and_others_are_served() {
    let counters: Arc<dyn Counters> = Arc::new(MemoryCounters::default());
    let config =
        ClientLimitConfig::from_lookup(|k| (k == "RATE_LIMIT_PER_MINUTE").then(|| "2".to_owned()))
            .unwrap();
    let mut state = state().await;
    state.limit = ClientLimit::new("search", config, counters);
    for _ in 0..2 {
        let res = function_handler(&state, get_from("198.51.100.4"))
            .await
            .unwrap();
        assert_eq!(res.status(), 200);
    }
    let res = function_handler(&state, get_from("198.51.100.4"))
        .await
        .unwrap();
    assert_eq!(res.status(), 429);
    let retry: u64 = res.headers()["retry-after"]
        .to_str()
        .unwrap()
        .parse()
        .unwrap();
    assert!((1..=60).contains(&retry), "{retry}");
    assert_eq!(
        res.headers()["access-control-allow-origin"],
        "https://site.example"
    );
    let body: Value = serde_json::from_slice(res.body().as_ref()).unwrap();
    assert_eq!(body["error"]["code"], "rate_limited");
    // Another address is not affected.
    let res = function_handler(&state, get_from("198.51.100.5"))
        .await
        .unwrap();
    assert_eq!(res.status(), 200);
}

#[tokio::test]
async fn with_the_limit_off_nothing_is_counted() {
    let state = state().await;
    assert_eq!(state.limit.per_minute(), 0);
    for _ in 0..30 {
        let res = function_handler(&state, get_from("198.51.100.4"))
            .await
            .unwrap();
        assert_eq!(res.status(), 200);
    }
}

#[tokio::test]
async fn mcp_calls_count_against_the_same_limit() {
    let counters: Arc<dyn Counters> = Arc::new(MemoryCounters::default());
    let config =
        ClientLimitConfig::from_lookup(|k| (k == "RATE_LIMIT_PER_MINUTE").then(|| "1".to_owned()))
            .unwrap();
    let mut state = state().await;
    state.limit = ClientLimit::new("search", config, counters);
    let mcp = || {
        let mut ev: Value =
            serde_json::from_str(include_str!("../data/function_url_mcp_post.json")).unwrap();
        ev["requestContext"]["http"]["sourceIp"] = json!("198.51.100.7");
        ev["body"] = json!(r#"{"jsonrpc": "2.0", "id": 1, "method": "ping"}"#);
        lambda_http::request::from_str(&ev.to_string()).unwrap()
    };
    let res = function_handler(&state, mcp()).await.unwrap();
    assert_eq!(res.status(), 200);
    // The agent's next call, MCP or the search API, is one past the limit.
    let res = function_handler(&state, mcp()).await.unwrap();
    assert_eq!(res.status(), 429);
    assert!(res.headers().contains_key("retry-after"));
    let res = function_handler(&state, get_from("198.51.100.7"))
        .await
        .unwrap();
    assert_eq!(res.status(), 429);
}
