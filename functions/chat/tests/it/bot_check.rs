//! The opt-in bot check through the chat handler, with function-URL events: `GET ?challenge`
//! issues a signed proof-of-work challenge, and with `BOT_CHECK=pow` a POST is answered only
//! with a solution of one issued to its address; anything else is a 403 that reaches neither
//! the model nor the store nor the rate-limit counters. Off (the default), nothing changes.
#![allow(clippy::unwrap_used)] // test helpers may panic on broken fixtures

use crate::common;

use std::collections::HashMap;
use std::sync::Arc;
use std::time::{Duration, SystemTime};

use chat::AppState;
use common::*;
use serde_json::{json, Value};
use shared::chat::ChatConfig;
use shared::limits::{issue_challenge, solve_challenge, MemoryCounters};
use shared::testing::{Behavior, FakeLlm};
use shared::{
    ConversationStore, KbHandle, LlmClient, MemoryConversationStore, OpenAiCompatClient, Secret,
};

const SALT: &str = "test-salt";
const VISITOR: &str = "198.51.100.7";

/// A state answering with `fake`, with the given chat variables, a known salt and a memory
/// store to inspect.
fn state(fake: &FakeLlm, vars: &[(&str, &str)]) -> (AppState, Arc<MemoryConversationStore>) {
    let vars: HashMap<&str, &str> = vars.iter().copied().collect();
    let chat_config = ChatConfig::from_lookup(|k| vars.get(k).map(|v| v.to_string())).unwrap();
    let llm: Arc<dyn LlmClient> = Arc::new(OpenAiCompatClient::new(fake.config()).unwrap());
    let store = Arc::new(MemoryConversationStore::new());
    let mut state = AppState::new(
        KbHandle::fixed(index()),
        Some(llm),
        store.clone() as Arc<dyn ConversationStore>,
        &config(),
        chat_config,
    );
    state.chat = state
        .chat
        .with_counters(Arc::new(MemoryCounters::default()), Secret::new(SALT));
    (state, store)
}

fn pow(difficulty: &str) -> Vec<(&'static str, &str)> {
    vec![("BOT_CHECK", "pow"), ("BOT_CHECK_DIFFICULTY", difficulty)]
}

/// A function-URL event from `ip` with the given method, query and body.
fn request(
    ip: &str,
    method: &str,
    query: Option<&str>,
    body: Option<Value>,
) -> lambda_http::Request {
    let mut ev: Value = serde_json::from_str(POST_EVENT).unwrap();
    ev["requestContext"]["http"]["sourceIp"] = json!(ip);
    ev["requestContext"]["http"]["method"] = json!(method);
    if let Some(q) = query {
        ev["rawQueryString"] = json!(q);
        ev["queryStringParameters"] = json!({ q: "" });
    }
    match body {
        Some(b) => {
            let text = b.to_string();
            ev["headers"]["content-length"] = json!(text.len().to_string());
            ev["body"] = json!(text);
        }
        None => {
            ev.as_object_mut().unwrap().remove("body");
            ev["headers"]
                .as_object_mut()
                .unwrap()
                .remove("content-length");
        }
    }
    lambda_http::request::from_str(&ev.to_string()).unwrap()
}

fn ask(ip: &str, proof: Option<&str>) -> lambda_http::Request {
    let mut body = json!({"message": "What is InsightFace?"});
    if let Some(p) = proof {
        body["proof"] = json!(p);
    }
    request(ip, "POST", None, Some(body))
}

/// `GET ?challenge` from `ip`: its status, JSON and `Cache-Control`.
async fn challenge(state: &AppState, ip: &str) -> (u16, Value, String) {
    let (status, body, headers) =
        call_json(state, request(ip, "GET", Some("challenge"), None)).await;
    let cache = headers
        .get("cache-control")
        .map(|v| v.to_str().unwrap().to_owned())
        .unwrap_or_default();
    (status, body, cache)
}

/// A solution of a challenge fetched by `ip`.
async fn solved(state: &AppState, ip: &str) -> String {
    let (status, c, _) = challenge(state, ip).await;
    assert_eq!(status, 200, "{c}");
    solve_challenge(
        c["challenge"].as_str().unwrap(),
        c["difficulty"].as_u64().unwrap() as u8,
    )
}

fn error_code(body: &Value) -> &str {
    body["error"]["code"].as_str().unwrap_or_default()
}

#[tokio::test]
async fn with_pow_a_request_without_a_proof_is_refused_before_the_model_the_store_and_the_limits() {
    let fake = FakeLlm::start(vec![Behavior::Echo]).await;
    let mut vars = pow("8");
    vars.push(("RATE_LIMIT_PER_MINUTE", "1"));
    let (state, store) = state(&fake, &vars);

    for proof in [
        None,
        Some("pow1.8.1.2.3:4"),
        Some(""),
        Some("not a proof at all"),
    ] {
        let (status, body, _) = call_json(&state, ask(VISITOR, proof)).await;
        assert_eq!(status, 403, "{proof:?}: {body}");
        let want = if proof.is_none() {
            "bot_check_required"
        } else {
            "bot_check_failed"
        };
        assert_eq!(error_code(&body), want, "{proof:?}: {body}");
        assert!(
            body["error"]["message"]
                .as_str()
                .unwrap()
                .contains("?challenge"),
            "the message says what to do: {body}"
        );
    }
    // Asked for a stream: the refusal is still a plain JSON 403, before any event.
    let mut streamed = json!({"message": "What is InsightFace?", "stream": true});
    streamed["proof"] = json!("pow1.8.1.2.3:4");
    let (status, body, headers) =
        call_json(&state, request(VISITOR, "POST", None, Some(streamed))).await;
    assert_eq!(
        (status, error_code(&body)),
        (403, "bot_check_failed"),
        "{body}"
    );
    assert_eq!(headers["content-type"], "application/json");

    assert_eq!(fake.request_count(), 0, "the model was never called");
    assert!(store.audit_records().is_empty(), "nothing was recorded");
    // Nothing was counted either: the one request this minute allows still gets through.
    let proof = solved(&state, VISITOR).await;
    let (status, body, _) = call_json(&state, ask(VISITOR, Some(&proof))).await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(fake.request_count(), 1);
}

#[tokio::test]
async fn a_solved_challenge_is_answered_and_may_be_sent_again_from_the_same_address() {
    let fake = FakeLlm::start(vec![Behavior::Echo]).await;
    let (state, store) = state(&fake, &pow("10"));

    let (status, c, cache) = challenge(&state, VISITOR).await;
    assert_eq!(status, 200, "{c}");
    assert_eq!(cache, "no-store", "every challenge is fresh");
    assert_eq!(c["bot_check"], "pow");
    assert_eq!(c["difficulty"], 10);
    let now = SystemTime::now()
        .duration_since(SystemTime::UNIX_EPOCH)
        .unwrap()
        .as_secs();
    let expires_at = c["expires_at"].as_u64().unwrap();
    assert!(
        (now + 299..=now + 301).contains(&expires_at),
        "{expires_at} vs {now}"
    );
    assert!(store.audit_records().is_empty(), "issuing writes nothing");
    assert_ne!(
        challenge(&state, VISITOR).await.1["challenge"],
        c["challenge"],
        "a new nonce every time"
    );

    let proof = solve_challenge(c["challenge"].as_str().unwrap(), 10);
    for turn in 1..=2 {
        let (status, body, _) = call_json(&state, ask(VISITOR, Some(&proof))).await;
        assert_eq!(status, 200, "turn {turn}: {body}");
        assert!(!body["reply"].as_str().unwrap().is_empty());
        assert_eq!(fake.request_count(), turn);
    }
    // Streamed too.
    let mut streamed = json!({"message": "What is InsightFace?", "stream": true});
    streamed["proof"] = json!(proof);
    let res = call_stream(&state, request(VISITOR, "POST", None, Some(streamed)), None).await;
    assert_eq!(res.status, 200);
    assert_eq!(res.names().last(), Some(&"done"), "{:?}", res.names());
}

#[tokio::test]
async fn a_proof_from_another_address_another_deployment_or_an_expired_challenge_is_refused() {
    let fake = FakeLlm::start(vec![Behavior::Echo]).await;
    let (state, store) = state(&fake, &pow("8"));

    // Solved by one address, sent from another: a botnet cannot share it.
    let proof = solved(&state, VISITOR).await;
    let (status, body, _) = call_json(&state, ask("203.0.113.50", Some(&proof))).await;
    assert_eq!(
        (status, error_code(&body)),
        (403, "bot_check_failed"),
        "{body}"
    );

    // Issued by another deployment (another secret) to the same address.
    let client = state.chat.client_key(Some(VISITOR)).await.unwrap();
    let foreign = issue_challenge(
        &Secret::new("another deployment"),
        &client,
        8,
        Duration::from_secs(300),
        SystemTime::now(),
    );
    let foreign = solve_challenge(&foreign.challenge, 8);
    let (status, body, _) = call_json(&state, ask(VISITOR, Some(&foreign))).await;
    assert_eq!(
        (status, error_code(&body)),
        (403, "bot_check_failed"),
        "{body}"
    );

    // Issued here to this address, but ten minutes ago with a five-minute lifetime.
    let old = issue_challenge(
        &Secret::new(SALT),
        &client,
        8,
        Duration::from_secs(300),
        SystemTime::now() - Duration::from_secs(600),
    );
    let old = solve_challenge(&old.challenge, 8);
    let (status, body, _) = call_json(&state, ask(VISITOR, Some(&old))).await;
    assert_eq!(
        (status, error_code(&body)),
        (403, "bot_check_expired"),
        "{body}"
    );

    assert_eq!(fake.request_count(), 0);
    assert!(store.audit_records().is_empty());
}

#[tokio::test]
async fn with_the_check_off_nothing_changes_and_the_challenge_says_so() {
    let fake = FakeLlm::start(vec![Behavior::Echo]).await;
    let (state, _) = state(&fake, &[]);
    let (status, body, _) = challenge(&state, VISITOR).await;
    assert_eq!((status, body), (200, json!({"bot_check": "off"})));
    for proof in [None, Some("anything")] {
        let (status, body, _) = call_json(&state, ask(VISITOR, proof)).await;
        assert_eq!(status, 200, "{proof:?}: {body}");
    }
    assert_eq!(fake.request_count(), 2);
    // A plain GET is still the health report.
    let (status, health, _) = call_json(&state, request(VISITOR, "GET", None, None)).await;
    assert_eq!((status, health["status"].as_str()), (200, Some("ok")));
}
