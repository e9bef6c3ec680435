//! Rating an answer (`POST {"feedback": {...}}`) through the handler, with function-URL
//! events: the token of the answer's `done` event (or JSON body) rates that answer only,
//! a second rating replaces the first, and every refusal is a clear 4xx that writes
//! nothing. The last test runs on DynamoDB (moto).
#![allow(clippy::unwrap_used)] // test helpers may panic on broken fixtures

use crate::common;

use std::sync::Arc;

use aws_sdk_dynamodb::types::AttributeValue;
use common::*;
use serde_json::{json, Value};
use shared::chat::feedback_token;
use shared::chat::ChatConfig;
use shared::store::Rating;
use shared::testing::moto::unique_name;
use shared::testing::MotoServer;
use shared::{ConversationStore, KbHandle, MemoryConversationStore, Secret};

/// Asks one question (JSON) and returns the answer's `(request_id, session_id, token)`.
/// Each ask names its own request id: the fixture's invocation id is the same for all.
async fn ask(state: &chat::AppState, question: &str) -> (String, String, String) {
    let body = json!({ "message": question, "request_id": unique_name("r") }).to_string();
    let (status, body, _) = call_json(state, post(&body)).await;
    assert_eq!(status, 200, "{body}");
    let field = |k: &str| body[k].as_str().unwrap().to_owned();
    (
        field("request_id"),
        field("session_id"),
        field("feedback_token"),
    )
}

/// The deployment secret of [`salted_state`], so tests can make tokens for any answer.
const SALT: &str = "test deployment secret";

/// A state whose deployment secret is [`SALT`].
fn salted_state(store: Arc<dyn ConversationStore>) -> chat::AppState {
    chat::AppState::new(
        KbHandle::fixed(index()),
        None,
        store,
        &config(),
        ChatConfig {
            rate_limit_per_minute: 0,
            query_rewrite: shared::chat::QueryRewrite::Off,
            client_salt: Some(Secret::new(SALT)),
            ..ChatConfig::default()
        },
    )
}

fn rating(request_id: &str, session_id: &str, token: &str, rating: &str, comment: Value) -> String {
    json!({ "feedback": {
        "request_id": request_id, "session_id": session_id, "token": token,
        "rating": rating, "comment": comment
    }})
    .to_string()
}

#[tokio::test]
async fn a_rating_with_the_answers_token_is_stored_and_a_second_replaces_it() {
    let (state, store) = offline_state();
    let (req, session, token) = ask(&state, "请介绍一下 Partial FC").await;
    assert_eq!(token.len(), 32, "{token}");

    let body = rating(&req, &session, &token, "down", json!("the\nyear is wrong"));
    let (status, ack, headers) = call_json(&state, post(&body)).await;
    assert_eq!(status, 200, "{ack}");
    assert_eq!(
        ack,
        json!({"request_id": req, "rating": "down", "comment": true})
    );
    assert_eq!(headers["access-control-allow-origin"], ORIGIN);
    let fb = store.audit_record(&req).unwrap().feedback.unwrap();
    assert_eq!(fb.rating, Rating::Down);
    assert_eq!(fb.comment.as_deref(), Some("the year is wrong"));

    let body = rating(&req, &session, &token, "up", Value::Null);
    let (status, _, _) = call_json(&state, post(&body)).await;
    assert_eq!(status, 200);
    let record = store.audit_record(&req).unwrap();
    let fb = record.feedback.unwrap();
    assert_eq!((fb.rating, fb.comment), (Rating::Up, None));
    // Rating is not asking: still one record, one question and answer.
    assert_eq!(store.audit_records().len(), 1);
    assert_eq!(store.session_turns(&session).len(), 2);
    // The record now says what the report needs.
    assert_eq!(record.question.as_deref(), Some("请介绍一下 Partial FC"));
    assert!(record.hits.unwrap() > 0 && record.top_score.unwrap() > 0.0);
}

#[tokio::test]
async fn the_done_event_of_a_stream_carries_the_token() {
    let (state, store) = offline_state();
    let body = json!({"message": "What is InsightFace?", "stream": true}).to_string();
    let streamed = call_stream(&state, post(&body), None).await;
    let done = &streamed.first("done").data;
    let (req, session, token) = (
        done["request_id"].as_str().unwrap(),
        done["session_id"].as_str().unwrap(),
        done["feedback_token"].as_str().unwrap(),
    );
    audit_outcome(&store, req).await;
    let (status, ack, _) = call_json(
        &state,
        post(&rating(req, session, token, "up", Value::Null)),
    )
    .await;
    assert_eq!(status, 200, "{ack}");
    assert_eq!(
        store.audit_record(req).unwrap().feedback.unwrap().rating,
        Rating::Up
    );
}

#[tokio::test]
async fn bad_tokens_unknown_answers_and_bad_fields_are_refused_and_write_nothing() {
    let (state, store) = offline_state();
    let (req, session, token) = ask(&state, "What is InsightFace?").await;
    let (other_req, other_session, other_token) = ask(&state, "Partial FC").await;
    let flipped = format!(
        "{}{}",
        &token[..31],
        if token.ends_with('0') { '1' } else { '0' }
    );
    let long = "x".repeat(501);
    let cases: Vec<(String, u16, &str)> = vec![
        // Another answer's token, a tampered one, another session's.
        (
            rating(&req, &session, &other_token, "down", Value::Null),
            403,
            "feedback.token",
        ),
        (
            rating(&req, &session, &flipped, "down", Value::Null),
            403,
            "feedback.token",
        ),
        (
            rating(&req, &other_session, &token, "down", Value::Null),
            403,
            "feedback.token",
        ),
        (
            rating(&req, &session, &token, "down", json!(long)),
            400,
            "the limit is 500",
        ),
        (
            rating(&req, &session, &token, "meh", Value::Null),
            400,
            "feedback.rating",
        ),
        (
            json!({"feedback": {"request_id": req, "token": token, "rating": "up"}}).to_string(),
            400,
            "feedback.session_id",
        ),
        (
            json!({"message": "hi", "feedback": {}}).to_string(),
            400,
            "not both",
        ),
        (
            json!({"feedback": "up"}).to_string(),
            400,
            "must be an object",
        ),
    ];
    for (body, want, needle) in cases {
        let (status, err, _) = call_json(&state, post(&body)).await;
        assert_eq!(status, want, "{body} → {err}");
        assert!(
            err["error"]["message"].as_str().unwrap().contains(needle),
            "{body} → {err}"
        );
    }
    // A token made under another secret (another deployment) is refused.
    let foreign = feedback_token(&Secret::new("another deployment"), &req, &session);
    let (status, _, _) = call_json(
        &state,
        post(&rating(&req, &session, &foreign, "up", Value::Null)),
    )
    .await;
    assert_eq!(status, 403);
    for id in [&req, &other_req] {
        assert_eq!(
            store.audit_record(id).unwrap().feedback,
            None,
            "nothing written"
        );
    }
    assert_eq!(store.audit_records().len(), 2);
}

#[tokio::test]
async fn a_rating_of_an_answer_never_recorded_is_a_404() {
    // A token made with the deployment's secret for a request this store never recorded
    // (as for a rating that arrives before its answer's record, or after it expired).
    let store = Arc::new(MemoryConversationStore::new());
    let state = salted_state(store.clone());
    let (_, session, _) = ask(&state, "What is InsightFace?").await;
    let token = feedback_token(&Secret::new(SALT), "never-asked", &session);
    let (status, err, _) = call_json(
        &state,
        post(&rating("never-asked", &session, &token, "up", Value::Null)),
    )
    .await;
    assert_eq!(status, 404, "{err}");
    assert_eq!(err["error"]["code"], "not_found");
    assert!(store.audit_record("never-asked").is_none());
}

#[tokio::test]
async fn ratings_are_rate_limited_apart_from_questions() {
    let store = Arc::new(MemoryConversationStore::new());
    let state = chat::AppState::new(
        KbHandle::fixed(index()),
        None,
        store.clone(),
        &config(),
        ChatConfig {
            rate_limit_per_minute: 2,
            query_rewrite: shared::chat::QueryRewrite::Off,
            ..ChatConfig::default()
        },
    );
    let (req, session, token) = ask(&state, "What is InsightFace?").await;
    for want in [200, 200, 429] {
        let body = rating(&req, &session, &token, "up", Value::Null);
        let (status, body, _) = call_json(&state, post(&body)).await;
        assert_eq!(status, want, "{body}");
    }
    // The question allowance is untouched by the ratings: one of two is left.
    ask(&state, "Partial FC").await;
}

#[tokio::test]
async fn a_rating_lands_on_the_dynamodb_audit_item() {
    let moto = MotoServer::shared();
    let (client, audit_table, store) = dynamo_store(&moto).await;
    let state = salted_state(store);
    let (req, session, token) = ask(&state, "请介绍一下 Partial FC").await;
    let get = || async {
        client
            .get_item()
            .table_name(&audit_table)
            .key("request_id", AttributeValue::S(req.clone()))
            .consistent_read(true)
            .send()
            .await
            .unwrap()
            .item()
            .cloned()
            .unwrap()
    };
    let item = get().await;
    assert_eq!(item["question"].as_s().unwrap(), "请介绍一下 Partial FC");
    assert!(item["hits"].as_n().unwrap().parse::<u32>().unwrap() > 0);
    assert!(!item.contains_key("feedback_rating"));

    let body = rating(&req, &session, &token, "down", json!("outdated"));
    let (status, ack, _) = call_json(&state, post(&body)).await;
    assert_eq!(status, 200, "{ack}");
    let item = get().await;
    assert_eq!(item["feedback_rating"].as_s().unwrap(), "down");
    assert_eq!(item["feedback_comment"].as_s().unwrap(), "outdated");
    assert_eq!(
        item["outcome"].as_s().unwrap(),
        "offline",
        "the record is kept"
    );

    let body = rating(&req, &session, &token, "up", Value::Null);
    assert_eq!(call_json(&state, post(&body)).await.0, 200);
    let item = get().await;
    assert_eq!(item["feedback_rating"].as_s().unwrap(), "up");
    assert!(!item.contains_key("feedback_comment"), "replaced whole");

    // A valid token for an answer never recorded: 404, and no item is created.
    let token = feedback_token(&Secret::new(SALT), "never-asked", &session);
    let body = rating("never-asked", &session, &token, "up", Value::Null);
    assert_eq!(call_json(&state, post(&body)).await.0, 404);
    let none = client
        .get_item()
        .table_name(&audit_table)
        .key("request_id", AttributeValue::S("never-asked".into()))
        .consistent_read(true)
        .send()
        .await
        .unwrap();
    assert!(none.item().is_none());
}
