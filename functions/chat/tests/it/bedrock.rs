//! Amazon Bedrock as the chat's model, through the fake Bedrock service
//! (`shared::testing::fake_bedrock`, which checks every request's signature): the `chat`
//! binary configured only by its environment (`LLM_PROVIDER=bedrock` and the role's
//! credentials, as Lambda and the template set them) streams an answer under the Runtime
//! API and counts its usage in the token budget on moto; in-process, the service's failures
//! reach the visitor as the other providers' do (busy, model error, timeout).

use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use serde_json::{json, Value};
use shared::testing::fake_bedrock::{Behavior, FakeBedrock, INPUT_TOKENS};
use shared::testing::moto::unique_name;
use shared::testing::runtime_api::{invoke_once, Invoked};
use shared::testing::MotoServer;
use shared::{BedrockClient, LlmClient, LlmConfig, MemoryConversationStore};

use crate::common::*;

/// The fixture's function-URL event with another method and body.
fn runtime_event(method: &str, body: Option<&str>) -> Vec<u8> {
    let mut event: Value = serde_json::from_str(POST_EVENT).unwrap();
    event["requestContext"]["http"]["method"] = json!(method);
    event["body"] = body.map_or(Value::Null, |b| json!(b));
    serde_json::to_vec(&event).unwrap()
}

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
async fn the_binary_streams_a_bedrock_answer_and_counts_its_tokens_in_the_budget() {
    let chunks = ["Partial FC ", "trains on ", "10M identities [1]."];
    let fake = FakeBedrock::start(vec![Behavior::stream(&chunks)]).await;
    let moto = MotoServer::shared();
    let limits = unique_name("limits");
    shared::limits::create_limits_table(&moto.dynamodb_client(), &limits)
        .await
        .unwrap();
    let kb = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../knowledge_base.json");
    // moto takes any key (its tables live in the region both are signed for); the fake
    // Bedrock only its own, so the role's credentials win.
    let mut env = moto.process_env();
    env.retain(|(k, _)| !k.starts_with("AWS_") || *k == "AWS_ENDPOINT_URL");
    env.push(("AWS_EC2_METADATA_DISABLED", "true".into()));
    env.extend(fake.env());
    env.extend([
        ("KB_SOURCE", kb.display().to_string()),
        ("ALLOWED_ORIGINS", ORIGIN.into()),
        ("LIMITS_TABLE", limits),
        ("DAILY_TOKEN_BUDGET", "100000".into()),
        ("QUERY_REWRITE", "off".into()),
    ]);

    let body = json!({"message": "What is Partial FC?", "stream": true}).to_string();
    let run = invoke(env.clone(), runtime_event("POST", Some(&body))).await;
    assert_eq!(run.status(), Some(200), "{run:?}");
    let sse = String::from_utf8_lossy(&run.body);
    let deltas: String = sse
        .split("\n\n")
        .filter(|e| e.starts_with("event: delta"))
        .filter_map(|e| e.split_once("data: "))
        .map(|(_, data)| serde_json::from_str::<Value>(data).unwrap()["text"].clone())
        .map(|t| t.as_str().unwrap_or_default().to_owned())
        .collect();
    assert_eq!(deltas, chunks.concat(), "{sse}");
    assert!(sse.contains("event: done"), "{sse}");
    let seen = fake.requests();
    assert_eq!(seen.len(), 1, "{seen:?}");
    assert_eq!(seen[0].refused, None, "signed with the role's credentials");
    // The site's question and its sources reached the model, the rules as the system part.
    let request = &seen[0].body;
    assert!(request["system"][0]["text"]
        .as_str()
        .is_some_and(|s| !s.is_empty()));
    let asked = request["messages"].as_array().unwrap().last().unwrap();
    assert_eq!(asked["role"], "user");
    assert!(asked.to_string().contains("What is Partial FC?"), "{asked}");

    // Another instance (a new process) sees the tokens Bedrock reported in the budget.
    let run = invoke(env, runtime_event("GET", None)).await;
    let health: Value = serde_json::from_slice(&run.body).unwrap();
    assert_eq!(
        health["limits"]["budget"]["used"],
        u64::from(INPUT_TOKENS) + chunks.len() as u64,
        "{health}"
    );
    assert_eq!(
        health["model"],
        shared::testing::fake_bedrock::MODEL,
        "{health}"
    );
    assert_eq!(health["limits"]["counters"], "dynamodb", "{health}");
}

/// A state answering through the real Bedrock client against `fake`.
fn bedrock_state(
    fake: &FakeBedrock,
    tune: impl FnOnce(&mut LlmConfig),
) -> (chat::AppState, Arc<MemoryConversationStore>) {
    let mut config = fake.config();
    tune(&mut config);
    let client: Arc<dyn LlmClient> = Arc::new(BedrockClient::new(config).unwrap());
    let store = Arc::new(MemoryConversationStore::new());
    (state_with(Some(client), store.clone()), store)
}

#[tokio::test]
async fn a_json_answer_carries_bedrocks_usage() {
    let fake = FakeBedrock::start(vec![Behavior::stream(&["Partial FC [1]."])]).await;
    let (state, _) = bedrock_state(&fake, |_| {});
    let (status, body, _) = call_json(&state, post(r#"{"message": "What is Partial FC?"}"#)).await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(body["reply"], "Partial FC [1].");
    assert_eq!(body["usage"]["prompt_tokens"], INPUT_TOKENS);
    assert_eq!(body["usage"]["total_tokens"], INPUT_TOKENS + 1);
}

#[tokio::test]
async fn throttling_on_every_attempt_is_a_busy_503() {
    let fake = FakeBedrock::start(vec![Behavior::status(429)]).await;
    let (state, store) = bedrock_state(&fake, |_| {});
    let (status, body, headers) =
        call_json(&state, post(r#"{"message": "What is Partial FC?"}"#)).await;
    assert_eq!(status, 503, "{body}");
    assert_eq!(body["error"]["code"], "model_busy");
    assert_eq!(headers["retry-after"], "5");
    assert_eq!(fake.accepted(), 3, "one attempt and two retries");
    assert_eq!(
        audit_outcome(&store, EVENT_REQUEST_ID).await,
        "model_error:status_429"
    );
}

#[tokio::test]
async fn a_server_error_is_a_502_model_error() {
    let fake = FakeBedrock::start(vec![Behavior::status(500)]).await;
    let (state, store) = bedrock_state(&fake, |_| {});
    let (status, body, _) = call_json(&state, post(r#"{"message": "What is Partial FC?"}"#)).await;
    assert_eq!(status, 502, "{body}");
    assert_eq!(body["error"]["code"], "model_error");
    assert_eq!(
        audit_outcome(&store, EVENT_REQUEST_ID).await,
        "model_error:status_500"
    );
}

#[tokio::test]
async fn a_refused_signature_is_a_502_and_is_not_retried() {
    let fake = FakeBedrock::start(vec![Behavior::stream(&["never"])]).await;
    let (state, store) = bedrock_state(&fake, |c| {
        if let Some(aws) = c.aws.as_mut() {
            aws.secret_access_key = shared::Secret::new("stale");
        }
    });
    let (status, body, _) = call_json(&state, post(r#"{"message": "What is Partial FC?"}"#)).await;
    assert_eq!(status, 502, "{body}");
    assert_eq!(fake.requests().len(), 1);
    assert_eq!(fake.accepted(), 0);
    assert_eq!(
        audit_outcome(&store, EVENT_REQUEST_ID).await,
        "model_error:status_403"
    );
}

#[tokio::test]
async fn a_stall_is_a_504_timeout() {
    let fake = FakeBedrock::start(vec![Behavior::Stall]).await;
    let (state, store) = bedrock_state(&fake, |c| {
        c.first_token_timeout = Duration::from_millis(300);
        c.max_retries = 0;
    });
    let (status, body, _) = call_json(&state, post(r#"{"message": "What is Partial FC?"}"#)).await;
    assert_eq!(status, 504, "{body}");
    assert_eq!(body["error"]["code"], "model_timeout");
    assert_eq!(
        audit_outcome(&store, EVENT_REQUEST_ID).await,
        "model_error:timeout"
    );
}

#[tokio::test]
async fn an_exception_mid_stream_ends_the_answer_with_an_error_event() {
    let fake = FakeBedrock::start(vec![Behavior::ExceptionAfter {
        chunks: vec!["Partial ".into()],
        exception_type: "modelStreamErrorException".into(),
    }])
    .await;
    let (state, store) = bedrock_state(&fake, |_| {});
    let s = call_stream(
        &state,
        post(r#"{"message": "What is Partial FC?", "stream": true, "session_id": "s-b"}"#),
        None,
    )
    .await;
    assert_eq!(s.names(), ["sources", "delta", "error"], "{}", s.raw);
    assert_eq!(s.events[2].data["code"], "model_error");
    assert_unanswered(&state, &store, "s-b", "model_error:status_424").await;
}

#[tokio::test]
async fn a_stall_mid_stream_ends_the_answer_with_a_timeout_event() {
    let fake = FakeBedrock::start(vec![Behavior::StallAfter {
        chunks: vec!["Partial ".into(), "FC".into()],
    }])
    .await;
    let (state, _) = bedrock_state(&fake, |c| c.timeout = Duration::from_millis(600));
    let s = call_stream(
        &state,
        post(r#"{"message": "What is Partial FC?", "stream": true}"#),
        None,
    )
    .await;
    assert_eq!(
        s.names(),
        ["sources", "delta", "delta", "error"],
        "{}",
        s.raw
    );
    assert_eq!(s.events[3].data["code"], "model_timeout");
}
