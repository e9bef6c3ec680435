//! The search handler driven by Lambda function-URL events (API Gateway v2 payloads).
#![allow(clippy::unwrap_used)] // test helpers may panic on broken fixtures

use crate::common;

use common::*;

#[tokio::test]
async fn get_returns_hits_terms_and_timing_for_the_fixture_event() {
    let req = lambda_http::request::from_str(GET_EVENT).unwrap();
    let (status, body, headers) = call(req).await;
    assert_eq!(status, 200);
    assert_eq!(body["query"], "LLaVA");
    let hits = body["hits"].as_array().unwrap();
    assert_eq!(hits.len(), 2);
    for h in hits {
        assert!(h["id"].as_str().unwrap().contains("llava"), "{h}");
        for key in ["type", "title", "score", "snippet"] {
            assert!(!h[key].is_null(), "hit lacks {key}: {h}");
        }
    }
    assert_eq!(body["terms"][0]["term"], "llava");
    assert!(body["took_us"].is_u64());
    assert_eq!(
        headers["access-control-allow-origin"],
        "https://site.example"
    );
}

#[tokio::test]
async fn post_chinese_query_finds_partial_fc_with_expanded_terms() {
    let (status, body, _) = call(event(
        "POST",
        &[],
        Some(r#"{"query": "请介绍一下 Partial FC", "top_k": 3}"#),
    ))
    .await;
    assert_eq!(status, 200);
    let ids: Vec<&str> = body["hits"]
        .as_array()
        .unwrap()
        .iter()
        .map(|h| h["id"].as_str().unwrap())
        .collect();
    assert!(
        ids.contains(&"pub_partial_fc_cvpr") && ids.contains(&"pub_partial_fc_iccvw"),
        "{ids:?}"
    );
    let chinese = event("GET", &[("q", "人脸识别训练")], None);
    let (_, body, _) = call(chinese).await;
    let terms: Vec<&str> = body["terms"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|t| t["from"] == "人脸识别")
        .map(|t| t["term"].as_str().unwrap())
        .collect();
    assert!(terms.contains(&"face"), "{terms:?}");
}

#[tokio::test]
async fn returns_400_when_query_missing_empty_or_too_long() {
    for (query, needle) in [
        (vec![], "query is required"),
        (vec![("q", "   ")], "query is required"),
        (vec![("q", "LLaVA"), ("k", "0")], "k must be"),
        (vec![("q", "LLaVA"), ("k", "abc")], "k must be"),
    ] {
        let (status, body, _) = call(event("GET", &query, None)).await;
        assert_eq!(status, 400, "{query:?}");
        assert_eq!(body["error"]["code"], "invalid_request");
        assert!(
            body["error"]["message"].as_str().unwrap().contains(needle),
            "{body}"
        );
        assert_eq!(body["error"]["request_id"], EVENT_REQUEST_ID);
    }
    let long = "a".repeat(2001);
    let (status, _, _) = call(event("GET", &[("q", &long)], None)).await;
    assert_eq!(status, 400);
}

#[tokio::test]
async fn returns_400_for_bad_json_and_413_for_huge_bodies() {
    let (status, body, _) = call(event("POST", &[], Some("{not json"))).await;
    assert_eq!(status, 400);
    assert!(body["error"]["message"].as_str().unwrap().contains("JSON"));
    let huge = format!(r#"{{"query": "{}"}}"#, "x".repeat(70_000));
    let (status, body, _) = call(event("POST", &[], Some(&huge))).await;
    assert_eq!(status, 413);
    assert_eq!(body["error"]["code"], "payload_too_large");
}

#[tokio::test]
async fn other_methods_get_405_and_preflight_gets_cors_headers() {
    let (status, _, _) = call(event("DELETE", &[], None)).await;
    assert_eq!(status, 405);
    let (status, _, headers) = call(event("OPTIONS", &[], None)).await;
    assert_eq!(status, 204);
    assert!(headers["access-control-allow-methods"]
        .to_str()
        .unwrap()
        .contains("POST"));
}
