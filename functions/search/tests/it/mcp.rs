//! The `/mcp` path driven by function-URL events (API Gateway v2 payloads) as an MCP client
//! sends them over Streamable HTTP.
#![allow(clippy::unwrap_used)] // test helpers may panic on broken fixtures

use crate::common::*;
use lambda_http::Request;
use serde_json::{json, Value};

const MCP_EVENT: &str = include_str!("../data/function_url_mcp_post.json");

/// The MCP fixture with its method, body and extra headers replaced (`None` drops a
/// header).
fn mcp_event(method: &str, body: Option<&str>, headers: &[(&str, Option<&str>)]) -> Request {
    let mut ev: Value = serde_json::from_str(MCP_EVENT).unwrap();
    ev["requestContext"]["http"]["method"] = json!(method);
    match body {
        Some(b) => ev["body"] = json!(b),
        None => {
            ev.as_object_mut().unwrap().remove("body");
        }
    }
    for (name, value) in headers {
        match value {
            Some(v) => ev["headers"][*name] = json!(v),
            None => {
                ev["headers"].as_object_mut().unwrap().remove(*name);
            }
        }
    }
    lambda_http::request::from_str(&ev.to_string()).expect("valid function URL event")
}

fn rpc(id: u64, method: &str, params: Value) -> String {
    json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}).to_string()
}

async fn post(body: &str) -> (u16, Value, lambda_http::http::HeaderMap) {
    call(mcp_event("POST", Some(body), &[])).await
}

#[tokio::test]
async fn the_fixture_tool_call_returns_hits_with_title_url_snippet_and_score() {
    let req = lambda_http::request::from_str(MCP_EVENT).unwrap();
    let (status, body, headers) = call(req).await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(headers["content-type"], "application/json");
    assert_eq!(
        (body["jsonrpc"].clone(), body["id"].clone()),
        (json!("2.0"), json!(2))
    );
    let result = &body["result"];
    let hits = result["structuredContent"]["hits"].as_array().unwrap();
    assert_eq!(hits.len(), 2, "{body}");
    for h in hits {
        assert!(h["id"].as_str().unwrap().contains("llava"), "{h}");
        assert!(h["url"].as_str().unwrap().starts_with("https://"), "{h}");
        assert!(h["score"].as_f64().unwrap() > 0.0);
        assert!(!h["title"].as_str().unwrap().is_empty());
        assert!(!h["snippet"].as_str().unwrap().is_empty());
    }
    let text: Value = serde_json::from_str(result["content"][0]["text"].as_str().unwrap()).unwrap();
    assert_eq!(text, result["structuredContent"]);
}

#[tokio::test]
async fn a_session_initializes_lists_searches_and_reads_a_page() {
    let (status, body, _) = post(&rpc(
        1,
        "initialize",
        json!({"protocolVersion": "2025-06-18", "capabilities": {},
               "clientInfo": {"name": "test", "version": "0"}}),
    ))
    .await;
    assert_eq!(status, 200);
    assert_eq!(body["result"]["protocolVersion"], "2025-06-18");
    assert!(body["result"]["capabilities"]["tools"].is_object());
    let (status, body, _) = post(r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#).await;
    assert_eq!((status, body), (202, Value::Null));
    let (_, body, _) = post(&rpc(2, "tools/list", json!({}))).await;
    let names: Vec<&str> = body["result"]["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["search_site", "get_page"]);
    let (_, body, _) = post(&rpc(
        3,
        "tools/call",
        json!({"name": "search_site", "arguments": {"query": "请介绍一下 Partial FC"}}),
    ))
    .await;
    let hit = &body["result"]["structuredContent"]["hits"][0];
    assert!(hit["id"].as_str().unwrap().contains("partial_fc"), "{body}");
    let (_, body, _) = post(&rpc(
        4,
        "tools/call",
        json!({"name": "get_page", "arguments": {"url": hit["url"]}}),
    ))
    .await;
    let page = &body["result"]["structuredContent"];
    assert_eq!(page["id"], hit["id"], "{body}");
    let text = body["result"]["content"][0]["text"].as_str().unwrap();
    assert!(
        text.starts_with(&format!("# {}", hit["title"].as_str().unwrap())),
        "{text}"
    );
}

#[tokio::test]
async fn malformed_messages_get_json_rpc_error_objects() {
    for (body, status, code) in [
        ("{not json", 400, -32700),
        ("", 400, -32700),
        (r#"[{"jsonrpc":"2.0","id":1,"method":"ping"}]"#, 400, -32600),
        (r#"{"jsonrpc":"2.0","id":1}"#, 400, -32600),
        (
            r#"{"jsonrpc":"2.0","id":1,"method":"resources/list"}"#,
            200,
            -32601,
        ),
        (
            r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"rm"}}"#,
            200,
            -32602,
        ),
        (
            r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{}}"#,
            200,
            -32602,
        ),
    ] {
        let (got, reply, _) = post(body).await;
        assert_eq!(got, status, "{body}: {reply}");
        assert_eq!(reply["jsonrpc"], "2.0");
        assert_eq!(reply["error"]["code"], code, "{body}: {reply}");
        assert!(reply.get("result").is_none());
    }
    // Bytes that are not UTF-8 arrive base64-encoded: still a parse error, not a panic.
    let mut ev: Value = serde_json::from_str(MCP_EVENT).unwrap();
    ev["body"] = json!("//4=");
    ev["isBase64Encoded"] = json!(true);
    let (status, reply, _) = call(lambda_http::request::from_str(&ev.to_string()).unwrap()).await;
    assert_eq!(
        (status, reply["error"]["code"].clone()),
        (400, json!(-32700))
    );
}

#[tokio::test]
async fn a_tools_own_failure_is_an_is_error_result() {
    let (status, body, _) = post(&rpc(
        5,
        "tools/call",
        json!({"name": "search_site", "arguments": {"query": "x", "top_k": 500}}),
    ))
    .await;
    assert_eq!(status, 200);
    assert_eq!(body["result"]["isError"], true);
    assert!(body["result"]["content"][0]["text"]
        .as_str()
        .unwrap()
        .contains("k must be"));
}

#[tokio::test]
async fn the_search_apis_body_limit_cors_and_methods_apply() {
    let huge = rpc(1, "ping", json!({"pad": "x".repeat(70_000)}));
    let (status, body, _) = post(&huge).await;
    assert_eq!(
        (status, body["error"]["code"].clone()),
        (413, json!(-32000))
    );
    for method in ["GET", "DELETE", "PUT"] {
        let (status, body, headers) = call(mcp_event(method, None, &[])).await;
        assert_eq!(status, 405, "{method}");
        assert_eq!(headers["allow"], "POST, OPTIONS");
        assert_eq!(body["error"]["code"], -32000);
    }
    let foreign = [("origin", Some("https://evil.example"))];
    let (status, _, headers) = call(mcp_event(
        "POST",
        Some(&rpc(1, "ping", json!({}))),
        &foreign,
    ))
    .await;
    assert_eq!(status, 403);
    assert!(headers.get("access-control-allow-origin").is_none());
    let site = [("origin", Some("https://site.example"))];
    let (status, _, headers) =
        call(mcp_event("POST", Some(&rpc(1, "ping", json!({}))), &site)).await;
    assert_eq!(status, 200);
    assert_eq!(
        headers["access-control-allow-origin"],
        "https://site.example"
    );
    let (status, _, headers) = call(mcp_event("OPTIONS", None, &site)).await;
    assert_eq!(status, 204);
    let allowed = headers["access-control-allow-headers"].to_str().unwrap();
    assert!(allowed.contains("mcp-protocol-version"), "{allowed}");
    let (status, _, _) = call(mcp_event("OPTIONS", None, &foreign)).await;
    assert_eq!(status, 403);
}

#[tokio::test]
async fn an_unsupported_protocol_version_header_is_a_400_and_none_is_accepted() {
    let ping = rpc(1, "ping", json!({}));
    let old = [("mcp-protocol-version", Some("2024-11-05"))];
    let (status, body, _) = call(mcp_event("POST", Some(&ping), &old)).await;
    assert_eq!(status, 400);
    assert!(body["error"]["message"]
        .as_str()
        .unwrap()
        .contains("2024-11-05"));
    let none = [("mcp-protocol-version", None)];
    let (status, body, _) = call(mcp_event("POST", Some(&ping), &none)).await;
    assert_eq!((status, body["result"].clone()), (200, json!({})));
}

#[tokio::test]
async fn the_path_takes_a_trailing_slash_and_the_root_is_still_the_search_api() {
    let mut ev: Value = serde_json::from_str(MCP_EVENT).unwrap();
    ev["rawPath"] = json!("/mcp/");
    let (status, body, _) = call(lambda_http::request::from_str(&ev.to_string()).unwrap()).await;
    assert_eq!((status, body["id"].clone()), (200, json!(2)));
    ev["rawPath"] = json!("/");
    ev["body"] = json!(r#"{"query": "LLaVA"}"#);
    let (status, body, _) = call(lambda_http::request::from_str(&ev.to_string()).unwrap()).await;
    assert_eq!(status, 200);
    assert!(body["hits"].is_array(), "{body}");
}
