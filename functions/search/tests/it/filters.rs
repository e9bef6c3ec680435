//! Filters, listing questions and batches through the search handler, with function-URL
//! events.
#![allow(clippy::unwrap_used)] // test helpers may panic on broken fixtures

use crate::common;

use common::*;
use serde_json::Value;

fn ids(body: &Value) -> Vec<&str> {
    body["hits"]
        .as_array()
        .unwrap()
        .iter()
        .map(|h| h["id"].as_str().unwrap())
        .collect()
}

/// The sample file's documents, read directly (expected sets are computed from them).
fn raw_docs() -> Vec<Value> {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../knowledge_base.json");
    let v: Value = serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    v["documents"].as_array().unwrap().clone()
}

#[tokio::test]
async fn get_filters_apply_and_are_echoed() {
    let (status, body, _) = call(event(
        "GET",
        &[
            ("q", "papers"),
            ("venue", "ICCV"),
            ("year", "2025"),
            ("k", "2"),
        ],
        None,
    ))
    .await;
    assert_eq!(status, 200, "{body}");
    let mut want: Vec<&str> = Vec::new();
    let docs = raw_docs();
    for d in &docs {
        let venue = d["venue"].as_str().unwrap_or("");
        if venue.split_whitespace().next() == Some("ICCV") && d["year"] == 2025 {
            want.push(d["id"].as_str().unwrap());
        }
    }
    let mut got = ids(&body);
    got.sort();
    want.sort();
    assert_eq!(
        got, want,
        "a listing returns every match, k notwithstanding"
    );
    assert_eq!(body["filters"]["venue"], "ICCV");
    assert_eq!(body["filters"]["year"], "2025");
    assert_eq!(body["listing"], true);
}

#[tokio::test]
async fn post_filters_with_content_words_rank_within_the_filter() {
    let (status, body, _) = call(event(
        "POST",
        &[],
        Some(r#"{"query": "face recognition", "top_k": 10, "filters": {"type": "publication", "year": "-2021", "field.keywords": "insightface"}}"#),
    ))
    .await;
    assert_eq!(status, 200, "{body}");
    let got = ids(&body);
    assert!(!got.is_empty());
    for id in &got {
        let d = raw_docs().into_iter().find(|d| d["id"] == *id).unwrap();
        assert!(d["year"].as_u64().unwrap() <= 2021, "{id}");
        let kws = d["keywords"].as_array().unwrap();
        assert!(kws.iter().any(|k| k == "insightface"), "{id}");
    }
    assert_eq!(body["order"], "relevance");
    assert!(body.get("listing").is_none(), "{body}");
}

#[tokio::test]
async fn listing_questions_work_through_get() {
    let (status, body, _) = call(event("GET", &[("q", "最多 star 的项目")], None)).await;
    assert_eq!(status, 200);
    assert_eq!(body["filters"]["type"], "github_project");
    assert_eq!(body["order"], "stars_desc");
    let projects = raw_docs()
        .iter()
        .filter(|d| d["type"] == "github_project")
        .count();
    assert_eq!(ids(&body).len(), projects);
}

#[tokio::test]
async fn bad_filters_are_400_naming_the_filter() {
    for (query, body, named) in [
        (vec![("q", "x"), ("year", "soon")], None, "year"),
        (vec![("q", "x"), ("year", "2024-2020")], None, "year"),
        (vec![("q", "x"), ("stars", "lots")], None, "stars"),
        (vec![("q", "x"), ("field.a-b", "1")], None, "field.a-b"),
        (vec![("q", "x"), ("sort", "random")], None, "sort"),
        (
            vec![],
            Some(r#"{"query": "x", "filters": {"colour": "red"}}"#),
            "colour",
        ),
        (
            vec![],
            Some(r#"{"query": "x", "filters": {"venue": ""}}"#),
            "venue",
        ),
    ] {
        let method = if body.is_some() { "POST" } else { "GET" };
        let (status, res, _) = call(event(method, &query, body)).await;
        assert_eq!(status, 400, "{query:?} {body:?}: {res}");
        let msg = res["error"]["message"].as_str().unwrap();
        assert!(msg.contains(named), "{msg}");
    }
}

#[tokio::test]
async fn a_batch_answers_each_query_in_order() {
    let (status, body, _) = call(event(
        "POST",
        &[],
        Some(r#"{"queries": ["LLaVA", {"query": "Partial FC", "top_k": 1}, {"query": "papers", "filters": {"venue": "CVPR"}}]}"#),
    ))
    .await;
    assert_eq!(status, 200, "{body}");
    let results = body["results"].as_array().unwrap();
    assert_eq!(results.len(), 3);
    assert_eq!(results[0]["query"], "LLaVA");
    assert!(ids(&results[0]).iter().all(|id| id.contains("llava")));
    assert_eq!(ids(&results[1]).len(), 1);
    assert_eq!(ids(&results[2]), ["pub_partial_fc_cvpr"]);
}

#[tokio::test]
async fn batch_limits_and_bad_items_are_400() {
    let fifty = format!("{{\"queries\": [{}]}}", vec!["\"LLaVA\""; 50].join(","));
    let (status, body, _) = call(event("POST", &[], Some(&fifty))).await;
    assert_eq!(status, 200);
    assert_eq!(body["results"].as_array().unwrap().len(), 50);
    let fifty_one = format!("{{\"queries\": [{}]}}", vec!["\"LLaVA\""; 51].join(","));
    let long = format!(r#"{{"queries": ["a", "{}"]}}"#, "x".repeat(2001));
    for (body, says) in [
        (r#"{"queries": []}"#.to_owned(), "1 to 50"),
        (fifty_one, "got 51"),
        (
            r#"{"queries": ["a", {"query": "b", "top_k": 0}]}"#.to_owned(),
            "queries[1]",
        ),
        (
            r#"{"queries": ["a", "b", {"query": "c", "filters": {"year": "x"}}]}"#.to_owned(),
            "queries[2]: filter year",
        ),
        (r#"{"queries": [null]}"#.to_owned(), "queries[0]"),
        (long, "queries[1]: query is 2001 characters"),
    ] {
        let (status, res, _) = call(event("POST", &[], Some(&body))).await;
        assert_eq!(status, 400, "{res}");
        let msg = res["error"]["message"].as_str().unwrap();
        assert!(msg.contains(says), "{msg}");
    }
}
