//! The search function over a knowledge base in S3 (moto): a cold start without a good
//! object fails naming it and the cause; afterwards a corrupt upload or a failing S3 never
//! replaces the last good index, and a good upload is picked up without a restart.
#![allow(clippy::unwrap_used)] // test helpers may panic on broken fixtures

use std::path::Path;

use lambda_http::{Body, Request};
use search::{function_handler, AppState};
use serde_json::{json, Value};
use shared::testing::fault_proxy::{Fault, Match, Times};
use shared::testing::kb_s3::{assert_cold_starts_fail_naming_the_object, ProxiedKb, KB_V1, KB_V2};
use shared::testing::MotoServer;
use shared::Config;

const GET_EVENT: &str = include_str!("../data/function_url_get.json");
const KEY: &str = "site/knowledge_base.json";

#[tokio::test]
async fn a_cold_start_without_a_good_knowledge_base_exits_naming_the_object_and_the_cause() {
    assert_cold_starts_fail_naming_the_object(
        Path::new(env!("CARGO_BIN_EXE_search")),
        &MotoServer::shared(),
        &[
            (None, "no knowledge base"),
            (
                Some(r#"{"documents": [{"id": "x", "type": "page"}]}"#),
                "invalid knowledge base",
            ),
        ],
    )
    .await;
}

/// A POST search for `query`, as a function URL delivers it.
fn search(query: &str) -> Request {
    let mut ev: Value = serde_json::from_str(GET_EVENT).unwrap();
    ev["requestContext"]["http"]["method"] = json!("POST");
    ev["rawQueryString"] = json!("");
    ev.as_object_mut().unwrap().remove("queryStringParameters");
    ev["body"] = json!(json!({"query": query, "top_k": 5}).to_string());
    ev["headers"]["content-type"] = json!("application/json");
    lambda_http::request::from_str(&ev.to_string()).unwrap()
}

async fn hit_ids(state: &AppState, query: &str) -> Vec<String> {
    let res = function_handler(state, search(query)).await.unwrap();
    assert_eq!(res.status(), 200);
    let body: Value = match res.body() {
        Body::Empty => Value::Null,
        b => serde_json::from_slice(b.as_ref()).unwrap(),
    };
    body["hits"]
        .as_array()
        .unwrap()
        .iter()
        .map(|h| h["id"].as_str().unwrap().to_owned())
        .collect()
}

#[tokio::test]
async fn bad_uploads_and_s3_failures_keep_the_last_good_index_until_a_good_upload() {
    let (site, kb) = ProxiedKb::start(&MotoServer::shared(), KEY, KB_V1).await;
    let config = Config::from_lookup(|_| None).unwrap();
    let state = AppState::new(kb, &config);
    let v1 = state.kb.snapshot().version().to_owned();
    assert_eq!(hit_ids(&state, "partial fc").await, ["pfc"]);
    assert!(hit_ids(&state, "kiwi trellis").await.is_empty());

    for bad in ["{\"documents\": [", ""] {
        site.upload(bad).await;
        assert_eq!(hit_ids(&state, "partial fc").await, ["pfc"], "{bad:?}");
        assert_eq!(state.kb.snapshot().version(), v1, "{bad:?}");
    }

    site.upload(KB_V2).await;
    assert_eq!(hit_ids(&state, "kiwi trellis").await, ["kiwi"]);
    let v2 = state.kb.snapshot().version().to_owned();

    site.proxy
        .inject(Match::Any, Fault::Status(503), Times::Always);
    assert_eq!(hit_ids(&state, "kiwi trellis").await, ["kiwi"]);
    assert_eq!(state.kb.snapshot().version(), v2);
    assert!(site.proxy.faulted(&Match::Any) > 0, "S3 was not asked");
}
