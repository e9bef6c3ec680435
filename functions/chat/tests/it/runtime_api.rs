//! The `chat` binary run the way Lambda runs it: under a Runtime API on 127.0.0.1
//! (`shared::testing::runtime_api`), one function-URL event each. Its streamed answers arrive
//! whole through the real runtime client, and its cold start "as deployed" (knowledge base
//! in S3, tables, no `CLIENT_HASH_SALT`) calls AWS only to read the knowledge base; the
//! client-hash salt is looked up by the first request that needs it.
#![allow(clippy::unwrap_used)] // test helpers may panic on broken fixtures

use std::path::Path;
use std::time::Duration;

use serde_json::{json, Value};
use shared::testing::fault_proxy::Match;
use shared::testing::moto::unique_name;
use shared::testing::runtime_api::{invoke_once, Invoked};
use shared::testing::{FaultProxy, MotoServer};

const POST_EVENT: &str = include_str!("../data/function_url_post.json");
const SALT_KEY: &str = "secret:client-hash-salt";

/// The fixture's function-URL event with another method and body.
fn event(method: &str, body: Option<&str>) -> Vec<u8> {
    let mut event: Value = serde_json::from_str(POST_EVENT).unwrap();
    event["requestContext"]["http"]["method"] = json!(method);
    event["body"] = body.map_or(Value::Null, |b| json!(b));
    if method == "OPTIONS" {
        event["headers"]["access-control-request-method"] = json!("POST");
    }
    serde_json::to_vec(&event).unwrap()
}

fn sample_kb() -> String {
    let kb = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../knowledge_base.json");
    kb.display().to_string()
}

/// Runs the binary through one invocation with exactly `env`, off the test's runtime.
async fn invoke(env: Vec<(&'static str, String)>, event: Vec<u8>) -> Invoked {
    tokio::task::spawn_blocking(move || {
        invoke_once(
            Path::new(env!("CARGO_BIN_EXE_chat")),
            Some(&env),
            event,
            Duration::from_secs(60),
        )
    })
    .await
    .unwrap()
    .unwrap_or_else(|e| panic!("{e}"))
}

#[tokio::test]
async fn a_health_check_streams_through_the_runtime_api_with_its_status_in_the_prelude() {
    let env = vec![
        ("KB_SOURCE", sample_kb()),
        ("ALLOWED_ORIGINS", "https://site.example".into()),
    ];
    let run = invoke(env, event("GET", None)).await;
    assert!(run.streamed, "chat answers in streaming mode");
    assert_eq!(run.status(), Some(200), "{run:?}");
    let health: Value = serde_json::from_slice(&run.body).unwrap();
    assert_eq!(health["status"], "ok");
    assert_eq!(health["documents"], 29);
    // What the index cost, against the memory the runtime says the function has.
    let index = &health["index"];
    assert_eq!(index["prebuilt"], false);
    assert_eq!(
        index["bytes"],
        std::fs::metadata(sample_kb()).unwrap().len()
    );
    assert_eq!(index["memory_limit_mb"], 1024);
    let peak_mib = index["resident"]["peak_mib"].as_u64().unwrap();
    assert!(
        peak_mib > 0 && peak_mib <= run.peak_rss_kib.unwrap() / 1024,
        "{index}"
    );
    let prelude: Value = serde_json::from_str(run.prelude.as_deref().unwrap()).unwrap();
    assert_eq!(
        prelude["headers"]["access-control-allow-origin"],
        "https://site.example"
    );
    assert!(run.first_byte.is_some());
    assert!(run.peak_rss_kib.is_some_and(|k| k > 0));
}

#[tokio::test]
async fn a_cold_start_as_deployed_calls_aws_only_for_the_knowledge_base() {
    let moto = MotoServer::shared();
    let dynamo = moto.dynamodb_client();
    let (turns, audit, limits) = (
        unique_name("turns"),
        unique_name("audit"),
        unique_name("limits"),
    );
    shared::store::create_tables(&dynamo, &turns, &audit)
        .await
        .unwrap();
    shared::limits::create_limits_table(&dynamo, &limits)
        .await
        .unwrap();
    let bucket = moto.create_bucket("kb").await;
    let kb = std::fs::read_to_string(sample_kb()).unwrap();
    moto.put_object(&bucket, "kb.json", &kb).await;
    // The function talks to AWS through a proxy that lists every request it makes.
    let proxy = FaultProxy::start(&moto).await;
    let mut env = moto.process_env();
    env.retain(|(k, _)| *k != "AWS_ENDPOINT_URL");
    env.extend([
        ("AWS_ENDPOINT_URL", proxy.endpoint()),
        ("KB_SOURCE", format!("s3://{bucket}/kb.json")),
        ("CONVERSATIONS_TABLE", turns),
        ("AUDIT_TABLE", audit),
        ("LIMITS_TABLE", limits.clone()),
        ("ALLOWED_ORIGINS", "https://site.example".into()),
    ]);
    let salt_stored = || async {
        let item = dynamo
            .get_item()
            .table_name(&limits)
            .key(
                "counter_key",
                aws_sdk_dynamodb::types::AttributeValue::S(SALT_KEY.into()),
            )
            .send()
            .await
            .unwrap();
        item.item.is_some()
    };

    // A preflight needs nothing from AWS, so all the process asked for was its start's.
    let run = invoke(env.clone(), event("OPTIONS", None)).await;
    assert_eq!(run.status(), Some(204), "{run:?}");
    // Two S3 reads: the knowledge base and its prebuilt index (absent here).
    let seen = proxy.requests();
    assert_eq!(
        seen.len(),
        2,
        "the KB and its index, nothing else: {seen:?}"
    );
    assert!(
        seen.iter().all(|s| s.target.is_none()),
        "not a DynamoDB call: {seen:?}"
    );
    assert!(!salt_stored().await, "the salt is not looked up at start");

    // The first question hashes the client's address: the salt is looked up then.
    let body = json!({"message": "What is Partial FC?"}).to_string();
    let run = invoke(env, event("POST", Some(&body))).await;
    assert_eq!(run.status(), Some(200), "{run:?}");
    assert!(proxy.seen(&Match::dynamodb("UpdateItem")) > 0);
    assert!(
        salt_stored().await,
        "the first request stored the shared salt"
    );
}
