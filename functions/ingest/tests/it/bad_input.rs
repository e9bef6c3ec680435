//! Hostile and unusual input through the ingest handler (issue 7): bodies that are not
//! UTF-8, numbers no integer holds, deep nesting, a 10 MB body, control characters,
//! right-to-left text and emoji, in `PUT` and `PATCH` bodies. A refused write leaves the
//! stored knowledge base and the audit trail untouched; accepted text is stored intact.
#![allow(clippy::unwrap_used)] // test helpers may panic on broken fixtures

use crate::common;

use std::sync::Arc;

use base64::Engine;
use common::{call, error_of, state_with, Event, KB, TOKEN_SHA256};
use ingest::AppState;
use serde_json::{json, Value};
use shared::{MemoryConversationStore, MemoryKbSource};

struct Fixture {
    source: Arc<MemoryKbSource>,
    audit: Arc<MemoryConversationStore>,
    state: AppState,
}

fn fixture() -> Fixture {
    let source = Arc::new(MemoryKbSource::with_bytes(KB));
    let audit = Arc::new(MemoryConversationStore::new());
    let state = state_with(source.clone(), audit.clone(), Some(TOKEN_SHA256), None);
    Fixture {
        source,
        audit,
        state,
    }
}

impl Fixture {
    fn etag(&self) -> String {
        self.source.object().unwrap().etag
    }

    /// A write of `body` based on the stored version.
    fn write(&self, method: &str, body: &str) -> Event {
        Event::new(method).if_match(&self.etag()).body(Some(body))
    }

    /// A write whose body arrives base64-encoded, so it need not be UTF-8.
    fn write_bytes(&self, method: &str, body: &[u8]) -> Event {
        self.write(
            method,
            &base64::engine::general_purpose::STANDARD.encode(body),
        )
        .base64()
    }

    /// Sends `event` and asserts a rejection: status, code, a message (or a listed problem)
    /// containing `needle`, and nothing stored or audited. Returns the body.
    async fn assert_rejected(&self, event: Event, status: u16, code: &str, needle: &str) -> Value {
        let before = self.source.object().unwrap();
        let (got, body, _) = call(&self.state, event.build()).await;
        let (got_code, message) = error_of(&body);
        assert_eq!((got, got_code.as_str()), (status, code), "{body}");
        let problems = body["error"]["problems"].to_string();
        assert!(
            message.contains(needle) || problems.contains(needle),
            "{body} lacks {needle:?}"
        );
        assert_eq!(
            self.source.object().unwrap(),
            before,
            "the knowledge base changed"
        );
        assert!(
            self.audit.audit_records().is_empty(),
            "an audit record was written"
        );
        body
    }

    /// Sends `event` and asserts it was stored; returns the response body.
    async fn assert_stored(&self, event: Event) -> Value {
        let (status, body, _) = call(&self.state, event.build()).await;
        assert_eq!(status, 200, "{body}");
        assert_eq!(body["etag"], self.etag().as_str());
        body
    }

    fn stored_json(&self) -> Value {
        serde_json::from_slice(&self.source.object().unwrap().bytes).unwrap()
    }
}

#[tokio::test]
async fn a_body_that_is_not_utf8_is_a_400_and_changes_nothing() {
    let f = fixture();
    let doc = b"{\"documents\": [{\"id\": \"a\", \"type\": \"page\", \"title\": \"caf\xe9\"}]}";
    let body = f
        .assert_rejected(
            f.write_bytes("PUT", doc),
            400,
            "invalid_knowledge_base",
            "not valid JSON",
        )
        .await;
    assert_eq!(body["error"]["problems"][0]["path"], "");
    f.assert_rejected(
        f.write_bytes("PATCH", b"{\"delete\": [\"\xff\"]}"),
        400,
        "invalid_request",
        "body must be JSON",
    )
    .await;
    // The same bytes as UTF-8 are stored byte for byte: the base64 path itself works.
    let valid = "{\"documents\": [{\"id\": \"a\", \"type\": \"page\", \"title\": \"café\"}]}";
    f.assert_stored(f.write_bytes("PUT", valid.as_bytes()))
        .await;
    assert_eq!(f.source.object().unwrap().bytes, valid.as_bytes());
}

#[tokio::test]
async fn numbers_no_integer_holds_are_refused_or_kept_as_written() {
    let f = fixture();
    let doc = |year: &str| {
        format!(
            r#"{{"documents": [{{"id": "a", "type": "publication", "title": "T", "year": {year}}}]}}"#
        )
    };
    f.assert_rejected(
        f.write("PUT", &doc("1e400")),
        400,
        "invalid_knowledge_base",
        "number out of range",
    )
    .await;
    f.assert_rejected(
        f.write("PATCH", r#"{"delete": [1e308, 18446744073709551616, -1]}"#),
        400,
        "invalid_knowledge_base",
        "must be a document id",
    )
    .await;
    // A year or star count is display text: any JSON number is stored exactly as sent.
    let huge = doc("18446744073709551616123");
    f.assert_stored(f.write("PUT", &huge)).await;
    assert_eq!(f.source.object().unwrap().bytes, huge.as_bytes());
}

#[tokio::test]
async fn deep_nesting_is_a_400_and_changes_nothing() {
    let f = fixture();
    let deep = "[".repeat(100_000);
    f.assert_rejected(
        f.write("PUT", &deep),
        400,
        "invalid_knowledge_base",
        "recursion limit",
    )
    .await;
    f.assert_rejected(
        f.write("PATCH", &deep),
        400,
        "invalid_request",
        "recursion limit",
    )
    .await;
    let in_a_document = format!(
        r#"{{"upsert": [{{"id": "x", "type": "page", "title": "T", "extra": {}{}}}]}}"#,
        "[".repeat(200),
        "]".repeat(200)
    );
    f.assert_rejected(
        f.write("PATCH", &in_a_document),
        400,
        "invalid_request",
        "recursion limit",
    )
    .await;
}

#[tokio::test]
async fn a_10_mb_body_is_a_413_and_changes_nothing() {
    let f = fixture();
    let huge = json!({"documents": [{"id": "a", "type": "page", "title": "T",
        "content": "x".repeat(10 * 1024 * 1024)}]})
    .to_string();
    for method in ["PUT", "PATCH"] {
        f.assert_rejected(
            f.write(method, &huge),
            413,
            "payload_too_large",
            "larger than 5242880 bytes",
        )
        .await;
    }
}

#[tokio::test]
async fn control_characters_are_refused_in_ids_and_links_and_kept_in_text() {
    let f = fixture();
    let body = f
        .assert_rejected(
            f.write(
                "PATCH",
                r#"{"upsert": [{"id": "a\u0000b", "type": "page", "title": "T"},
                    {"id": "c", "type": "page", "title": "T", "url": "https://x.example/\u0007"}]}"#,
            ),
            400,
            "invalid_knowledge_base",
            "control characters",
        )
        .await;
    let paths: Vec<&str> = body["error"]["problems"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["path"].as_str().unwrap())
        .collect();
    assert_eq!(paths, ["upsert[0].id", "upsert[1].url"]);
    f.assert_rejected(
        f.write("PUT", "{\"documents\": [{\"id\": \"a\u{1}\"}]}"),
        400,
        "invalid_knowledge_base",
        "control character",
    )
    .await;
    // In text fields they are content, stored as sent.
    let text = "line\u{0}one\u{7}\r\n\u{1b}[1mbold";
    f.assert_stored(
        f.write(
            "PATCH",
            &json!({"upsert": [{"id": "ctl", "type": "page", "title": text, "content": text}]})
                .to_string(),
        ),
    )
    .await;
    let stored = f.stored_json();
    let doc = stored["documents"]
        .as_array()
        .unwrap()
        .iter()
        .find(|d| d["id"] == "ctl")
        .unwrap();
    assert_eq!(
        (doc["title"].as_str(), doc["content"].as_str()),
        (Some(text), Some(text))
    );
}

#[tokio::test]
async fn an_id_with_an_emoji_or_a_direction_override_is_refused() {
    let f = fixture();
    for id in ["مقالة-🙂", "page\u{202e}fdp.exe"] {
        let body = json!({"upsert": [{"id": id, "type": "page", "title": "t"}]}).to_string();
        f.assert_rejected(
            f.write("PATCH", &body),
            400,
            "invalid_knowledge_base",
            "an id may not",
        )
        .await;
    }
}

#[tokio::test]
async fn right_to_left_text_and_emoji_are_stored_intact_and_reported_by_id() {
    let f = fixture();
    // Ids hold letters of any script (emoji are refused there: see
    // `an_id_with_an_emoji_or_a_direction_override_is_refused`); text holds anything.
    let id = "مقالة-٣";
    let title = "\u{202b}شبكة عصبية\u{202c} 👨‍👩‍👧 עברית";
    let body = f
        .assert_stored(
            f.write(
                "PATCH",
                &json!({"upsert": [{"id": id, "type": "page", "title": title, "content": "🦙🔥"}]})
                    .to_string(),
            ),
        )
        .await;
    assert_eq!(body["added"], json!([id]));
    let stored = f.stored_json();
    let doc = stored["documents"]
        .as_array()
        .unwrap()
        .iter()
        .find(|d| d["id"] == id)
        .unwrap();
    assert_eq!(doc["title"], title);
    let (status, body, _) = call(&f.state, Event::new("GET").body(None).build()).await;
    assert_eq!(status, 200);
    assert_eq!(body["valid"], true);
    assert!(body["summaries"]
        .as_array()
        .unwrap()
        .iter()
        .any(|s| s["id"] == id));
    let (status, body, _) = call(
        &f.state,
        f.write("PATCH", &json!({"delete": [id]}).to_string())
            .build(),
    )
    .await;
    assert_eq!((status, body["removed"].clone()), (200, json!([id])));
}
