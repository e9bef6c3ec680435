//! The `search` binary run the way Lambda runs it: under a Runtime API on 127.0.0.1
//! (`shared::testing::runtime_api`), given the fixture's function-URL event, it posts one
//! whole (not streamed) function-URL result with the hits.
#![allow(clippy::unwrap_used)] // test helpers may panic on broken fixtures

use std::path::Path;
use std::time::Duration;

use serde_json::Value;
use shared::testing::runtime_api::invoke_once;

const GET_EVENT: &str = include_str!("../data/function_url_get.json");

#[tokio::test]
async fn a_query_is_answered_whole_through_the_runtime_api() {
    let kb = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../knowledge_base.json");
    let env = vec![("KB_SOURCE", kb.display().to_string())];
    let run = tokio::task::spawn_blocking(move || {
        invoke_once(
            Path::new(env!("CARGO_BIN_EXE_search")),
            Some(&env),
            GET_EVENT.as_bytes().to_vec(),
            Duration::from_secs(60),
        )
    })
    .await
    .unwrap()
    .unwrap_or_else(|e| panic!("{e}"));
    assert!(!run.streamed);
    assert_eq!(run.status(), Some(200), "{run:?}");
    let result: Value = serde_json::from_slice(&run.body).unwrap();
    let answer: Value = serde_json::from_str(result["body"].as_str().unwrap()).unwrap();
    let hits = answer["hits"].as_array().unwrap();
    assert_eq!(hits.len(), 2, "{answer}");
    assert!(
        hits[0]["id"].as_str().unwrap().contains("llava"),
        "{answer}"
    );
    assert!(run.init > Duration::ZERO && run.complete > Duration::ZERO);
}
