//! Hostile and unusual input through the chat handler (issue 7): bodies that are not UTF-8,
//! numbers no integer holds, nesting deeper than any parser should follow, bodies far over
//! the limit, control characters, right-to-left text and emoji. Bad input gets a clear 4xx
//! and never reaches the model or the store; unusual but valid text is answered intact.
#![allow(clippy::unwrap_used)] // test helpers may panic on broken fixtures

use crate::common;

use common::*;
use lambda_http::Request;
use serde_json::{json, Value};
use shared::testing::{Behavior, FakeLlm};
use shared::{MemoryConversationStore, Role};

/// A chat whose model echoes the question, with its store.
async fn echoing() -> (
    FakeLlm,
    chat::AppState,
    std::sync::Arc<MemoryConversationStore>,
) {
    let fake = FakeLlm::start(vec![Behavior::Echo]).await;
    let (state, store) = state_with_fake(&fake, |_| {});
    (fake, state, store)
}

/// Asserts a rejection: status, code, a message containing `needle`, the request id, and
/// that neither the model nor the store was touched.
async fn assert_rejected(req: Request, status: u16, code: &str, needle: &str) {
    let (fake, state, store) = echoing().await;
    let (got, body, headers) = call_json(&state, req).await;
    let message = body["error"]["message"].as_str().unwrap_or_default();
    assert_eq!(
        (got, body["error"]["code"].as_str()),
        (status, Some(code)),
        "{body}"
    );
    assert!(message.contains(needle), "{message:?} lacks {needle:?}");
    assert_eq!(body["error"]["request_id"], EVENT_REQUEST_ID);
    assert_eq!(headers["content-type"], "application/json");
    assert_eq!(fake.request_count(), 0, "the model was called");
    assert!(store.audit_records().is_empty(), "something was written");
}

/// Asserts that `question` (sent as `message`) is answered, reaches the model as the
/// prompt's neutralization leaves it (invisible and direction-override characters removed,
/// see `shared::prompt::neutralize`) and is stored unchanged; returns the response body.
async fn assert_answered_intact(question: &str) -> Value {
    let (fake, state, store) = echoing().await;
    let (status, body, _) =
        call_json(&state, post(&json!({"message": question}).to_string())).await;
    assert_eq!(status, 200, "{body}");
    let sent = &fake.requests()[0].body["messages"];
    let last = sent.as_array().unwrap().last().unwrap();
    let to_model = shared::prompt::neutralize(question.trim()).into_owned();
    assert_eq!(last["content"], to_model, "the model got another question");
    assert!(
        body["reply"].as_str().unwrap().ends_with(&to_model),
        "{body}"
    );
    let session = body["session_id"].as_str().unwrap();
    let turns = store.session_turns(session);
    assert_eq!(turns.len(), 2, "question and answer are stored");
    assert_eq!(
        (turns[0].role, turns[0].content.as_str()),
        (Role::User, question.trim())
    );
    body
}

#[tokio::test]
async fn a_body_that_is_not_utf8_is_a_400() {
    assert_rejected(
        post_bytes(b"{\"message\": \"caf\xe9 \xff\xfe\"}"),
        400,
        "invalid_request",
        "must be JSON",
    )
    .await;
    assert_rejected(
        post_bytes(&[0xff, 0xfe, 0x00, 0x7b]),
        400,
        "invalid_request",
        "must be JSON",
    )
    .await;
    // A lone surrogate escape is not a character either.
    assert_rejected(
        post(r#"{"message": "\ud800 hi"}"#),
        400,
        "invalid_request",
        "must be JSON",
    )
    .await;
}

#[tokio::test]
async fn a_base64_body_that_is_valid_utf8_is_answered() {
    let (fake, state, _) = echoing().await;
    let body = json!({"message": "InsightFace 是什么？"}).to_string();
    let (status, json, _) = call_json(&state, post_bytes(body.as_bytes())).await;
    assert_eq!(status, 200, "{json}");
    assert!(json["reply"]
        .as_str()
        .unwrap()
        .ends_with("InsightFace 是什么？"));
    assert_eq!(fake.request_count(), 1);
}

#[tokio::test]
async fn numbers_no_integer_holds_are_a_400() {
    for (top_k, needle) in [
        ("1e308", "top_k must be a whole number from 1 to 10"),
        ("-1", "top_k must be"),
        ("18446744073709551616", "top_k must be"),
        ("18446744073709551615", "top_k must be"),
        ("3.0", "top_k must be"),
        ("-0", "top_k must be"),
        // Beyond f64: the parser itself refuses it.
        ("1e400", "must be JSON"),
    ] {
        let body = format!(r#"{{"message": "LLaVA", "top_k": {top_k}}}"#);
        assert_rejected(post(&body), 400, "invalid_request", needle).await;
    }
    assert_rejected(
        post(r#"{"message": "q", "session_id": 123456789012345678901234567890}"#),
        400,
        "invalid_request",
        "session_id must be",
    )
    .await;
}

#[tokio::test]
async fn deep_nesting_is_a_400_and_a_deep_body_over_the_limit_a_413() {
    let deep = format!("{}{}", "[".repeat(60_000), "]".repeat(4));
    assert_rejected(post(&deep), 400, "invalid_request", "recursion limit").await;
    let in_a_field = format!(
        r#"{{"message": "q", "extra": {}{}}}"#,
        "[".repeat(1000),
        "]".repeat(1000)
    );
    assert_rejected(post(&in_a_field), 400, "invalid_request", "recursion limit").await;
    assert_rejected(
        post(&"[".repeat(100_000)),
        413,
        "payload_too_large",
        "larger than 65536 bytes",
    )
    .await;
}

#[tokio::test]
async fn a_10_mb_body_is_a_413() {
    let huge = json!({"message": "x".repeat(10 * 1024 * 1024)}).to_string();
    assert_rejected(post(&huge), 413, "payload_too_large", "65536").await;
    assert_rejected(
        post_bytes(&vec![0xffu8; 10 * 1024 * 1024]),
        413,
        "payload_too_large",
        "65536",
    )
    .await;
}

#[tokio::test]
async fn control_characters_are_refused_where_they_break_json_or_ids() {
    // Raw (unescaped) control characters are not allowed inside JSON strings.
    assert_rejected(
        post("{\"message\": \"a\u{0}b\"}"),
        400,
        "invalid_request",
        "control character",
    )
    .await;
    assert_rejected(
        post(r#"{"message": "q", "session_id": "a\u0000b"}"#),
        400,
        "invalid_request",
        "session_id must be",
    )
    .await;
    assert_rejected(
        post(r#"{"messages": [{"role": "user\u0000", "content": "q"}]}"#),
        400,
        "invalid_request",
        "role must be",
    )
    .await;
    // Whitespace and invisible characters alone are no question.
    assert_rejected(
        post(r#"{"message": " \t\r\n\u3000\u2029 "}"#),
        400,
        "invalid_request",
        "must not be empty",
    )
    .await;
}

#[tokio::test]
async fn escaped_control_characters_and_nul_in_a_question_pass_through_intact() {
    assert_answered_intact("InsightFace\u{0} code?\u{7}\u{1b}[31m \u{7f}").await;
}

#[tokio::test]
async fn right_to_left_text_and_emoji_are_answered_and_find_their_latin_words() {
    let body = assert_answered_intact("مرحبا، ما هو InsightFace؟ 👋🏽").await;
    let ids: Vec<&str> = body["sources"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["id"].as_str().unwrap())
        .collect();
    assert!(ids.iter().any(|id| id.contains("insightface")), "{ids:?}");
    // Bidirectional overrides, joiners and emoji only: answered, nothing to cite.
    let body = assert_answered_intact("\u{202e}👨‍👩‍👧\u{200d}🔥\u{2066}שלום\u{2069}").await;
    assert_eq!(body["sources"], json!([]));
}

#[tokio::test]
async fn a_streamed_answer_to_control_characters_and_emoji_stays_well_framed() {
    let (fake, state, _) = echoing().await;
    let question = "line1\nline2\r\n\u{0}data: fake\n\nevent: done 🙂";
    let req = event(
        "POST",
        Some(&json!({"message": question, "stream": true}).to_string()),
        &[],
    );
    // `call_stream` parses every frame; a raw newline from the text would break one.
    let streamed = call_stream(&state, req, None).await;
    assert_eq!(streamed.status, 200);
    assert_eq!(streamed.names().first(), Some(&"sources"));
    assert_eq!(streamed.names().last(), Some(&"done"));
    assert!(streamed.text().ends_with(question), "{:?}", streamed.text());
    assert_eq!(fake.request_count(), 1);
}
