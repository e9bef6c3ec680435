//! The chat function over a knowledge base in S3 (moto): a cold start without a good
//! object fails naming it and the cause; afterwards a corrupt upload, a silent or failing
//! S3 never replace the last good index, which keeps answering, and a good upload is
//! picked up without a restart.
#![allow(clippy::unwrap_used)] // test helpers may panic on broken fixtures

use crate::common;

use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, Instant};

use common::*;
use serde_json::{json, Value};
use shared::chat::ChatConfig;
use shared::testing::fault_proxy::{Fault, Match, Times};
use shared::testing::kb_s3::{assert_cold_starts_fail_naming_the_object, ProxiedKb, KB_V1, KB_V2};
use shared::testing::MotoServer;
use shared::MemoryConversationStore;

const KEY: &str = "site/knowledge_base.json";
/// The refresh budget here: long enough for the SDK's three attempts at a failing S3,
/// a third of the production one ([`shared::search::REFRESH_BUDGET`]).
const REFRESH: Duration = Duration::from_secs(1);

#[tokio::test]
async fn a_cold_start_without_a_good_knowledge_base_exits_naming_the_object_and_the_cause() {
    assert_cold_starts_fail_naming_the_object(
        Path::new(env!("CARGO_BIN_EXE_chat")),
        &MotoServer::shared(),
        &[
            (None, "no knowledge base"),
            (Some("{\"documents\": ["), "invalid JSON"),
        ],
    )
    .await;
}

/// Ids of the sources the chat cites for `question`.
async fn cited(state: &chat::AppState, question: &str) -> Vec<String> {
    let (status, body, _) = call_json(state, post(&json!({"message": question}).to_string())).await;
    assert_eq!(status, 200, "{body}");
    body["sources"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["id"].as_str().unwrap().to_owned())
        .collect()
}

async fn health(state: &chat::AppState) -> Value {
    let (status, body, _) = call_json(state, event("GET", None, &[])).await;
    assert_eq!(status, 200, "{body}");
    body
}

#[tokio::test]
async fn bad_uploads_and_s3_faults_keep_the_last_good_index_answering_until_a_good_upload() {
    let (site, kb) = ProxiedKb::start(&MotoServer::shared(), KEY, KB_V1).await;
    let state = chat::AppState::new(
        kb.with_refresh_budget(REFRESH),
        None,
        Arc::new(MemoryConversationStore::new()),
        &config(),
        ChatConfig::default(),
    );
    let v1 = health(&state).await["kb_version"]
        .as_str()
        .unwrap()
        .to_owned();
    assert_eq!(cited(&state, "Partial FC training").await, ["pfc"]);
    assert!(cited(&state, "kiwi trellis").await.is_empty());
    // No index beside it: the JSON's bytes are what the instance read.
    let index = &health(&state).await["index"];
    assert_eq!(index["prebuilt"], false);
    assert_eq!(index["bytes"], KB_V1.len());
    assert!(index["resident"]["peak_mib"].as_u64() >= index["resident"]["now_mib"].as_u64());

    for bad in [
        "{\"documents\": [",
        r#"{"documents": [{"id": "x", "type": "page"}]}"#,
        "",
    ] {
        site.upload(bad).await;
        let h = health(&state).await;
        assert_eq!(
            (h["kb_version"].as_str(), h["documents"].as_u64()),
            (Some(v1.as_str()), Some(1)),
            "{bad}"
        );
        assert_eq!(cited(&state, "Partial FC training").await, ["pfc"], "{bad}");
    }

    site.upload(KB_V2).await;
    let h = health(&state).await;
    let v2 = h["kb_version"].as_str().unwrap().to_owned();
    assert_ne!(v2, v1);
    assert_eq!(h["documents"], 2);
    assert_eq!(cited(&state, "kiwi trellis").await, ["kiwi"]);

    // S3 stops answering (far longer than the SDK's 5 s per attempt): the request that
    // re-checks is cut at the refresh budget, then answers from the index it has.
    let (logs, _guard) = Logs::capture();
    let failures = || -> Vec<String> {
        logs.lines("knowledge-base refresh failed; keeping the last good version")
            .iter()
            .map(|l| l["error"].as_str().unwrap().to_owned())
            .collect()
    };
    site.proxy.inject(Match::Any, Fault::Stall, Times::Always);
    let start = Instant::now();
    assert_eq!(cited(&state, "kiwi trellis").await, ["kiwi"]);
    assert!(start.elapsed() >= REFRESH, "{:?}", start.elapsed());
    assert_eq!(failures(), [format!("no answer within {REFRESH:?}")]);
    // S3 fails outright: the same, on S3's error rather than the budget.
    site.proxy.clear();
    site.proxy
        .inject(Match::Any, Fault::Status(500), Times::Always);
    assert_eq!(health(&state).await["kb_version"], v2.as_str());
    assert!(site.proxy.faulted(&Match::Any) > 0, "S3 was not asked");
    let failures = failures();
    assert_eq!(failures.len(), 2, "{failures:?}");
    assert!(!failures[1].starts_with("no answer within"), "{failures:?}");
}
