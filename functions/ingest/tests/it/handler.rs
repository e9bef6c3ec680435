//! The ingest handler driven by Lambda function-URL events, over an in-memory source and
//! store (the same flows against S3 on moto are in `s3.rs`).
#![allow(clippy::unwrap_used)] // test helpers may panic on broken fixtures

use crate::common;

use std::sync::Arc;

use base64::Engine;
use common::{call, error_of, state_with, Event, KB, PUT_EVENT, TOKEN_SHA256};
use ingest::AppState;
use serde_json::Value;
use shared::{MemoryConversationStore, MemoryKbSource};

struct Fixture {
    source: Arc<MemoryKbSource>,
    audit: Arc<MemoryConversationStore>,
    state: AppState,
}

fn fixture_with(stored: Option<&str>, token_sha256: Option<&str>, max: Option<usize>) -> Fixture {
    let source = Arc::new(stored.map_or_else(MemoryKbSource::new, MemoryKbSource::with_bytes));
    let audit = Arc::new(MemoryConversationStore::new());
    let state = state_with(source.clone(), audit.clone(), token_sha256, max);
    Fixture {
        source,
        audit,
        state,
    }
}

fn fixture() -> Fixture {
    fixture_with(Some(KB), Some(TOKEN_SHA256), None)
}

impl Fixture {
    fn etag(&self) -> String {
        self.source.object().unwrap().etag
    }
}

#[tokio::test]
async fn get_reports_version_counts_and_summaries_with_an_etag_header() {
    let f = fixture();
    let get = Event::new("GET")
        .body(None)
        .header("origin", "https://site.example")
        .build();
    let (status, body, headers) = call(&f.state, get).await;
    assert_eq!(status, 200, "{body}");
    let etag = f.etag();
    assert_eq!(headers["etag"], format!("\"{etag}\""));
    assert_eq!(body["etag"], etag.as_str());
    assert_eq!(body["version"], etag.as_str());
    assert_eq!(body["valid"], true);
    assert_eq!(body["documents"], 2);
    assert_eq!(body["types"]["publication"], 1);
    assert_eq!(body["glossary_entries"], 1);
    assert_eq!(body["summaries"][0]["id"], "pfc");
    assert_eq!(body["location"], "memory");
    assert_eq!(
        headers["access-control-allow-origin"],
        "https://site.example"
    );
}

#[tokio::test]
async fn get_raw_returns_the_stored_bytes() {
    let f = fixture();
    let req = Event::new("GET").body(None).query("format", "raw").build();
    let res = ingest::function_handler(&f.state, req).await.unwrap();
    assert_eq!(res.status(), 200);
    assert_eq!(res.body().as_ref(), KB.as_bytes());
    assert_eq!(res.headers()["etag"], format!("\"{}\"", f.etag()));
}

#[tokio::test]
async fn the_put_fixture_based_on_a_stale_etag_gets_409_and_succeeds_with_the_current_one() {
    let f = fixture();
    let before = f.etag();
    let stale = lambda_http::request::from_str(PUT_EVENT).unwrap();
    let (status, body, _) = call(&f.state, stale).await;
    assert_eq!(status, 409, "{body}");
    let (code, message) = error_of(&body);
    assert_eq!(code, "conflict");
    assert!(message.contains("GET it again"), "{message}");
    assert_eq!(
        body["error"]["request_id"],
        "0c4f2a7e-5b1d-4e3a-9f6c-2d8e1a7b3c90"
    );
    assert_eq!(f.etag(), before);

    let (status, body, headers) = call(&f.state, Event::new("PUT").if_match(&before).build()).await;
    assert_eq!(status, 200, "{body}");
    let after = f.etag();
    assert_ne!(after, before);
    assert_eq!(headers["etag"], format!("\"{after}\""));
    assert_eq!(body["etag"], after.as_str());
    assert_eq!(body["previous_etag"], before.as_str());
    assert_eq!(body["added"], serde_json::json!(["kiwi"]));
    assert_eq!(body["removed"], serde_json::json!(["pfc", "notes"]));
    assert_eq!(body["documents"], 1);
    assert_eq!(body["audited"], true);
}

#[tokio::test]
async fn requests_without_the_right_bearer_token_are_refused_and_change_nothing() {
    let f = fixture();
    let before = f.etag();
    for method in ["GET", "PUT", "PATCH", "DELETE"] {
        let missing = Event::new(method)
            .if_match(&before)
            .without("authorization")
            .build();
        let (status, body, headers) = call(&f.state, missing).await;
        assert_eq!(
            (status, error_of(&body).0.as_str()),
            (401, "unauthorized"),
            "{method}"
        );
        assert_eq!(headers["www-authenticate"], "Bearer");
        for garbage in [
            "Basic c2VjcmV0",
            "Bearer",
            "secret",
            "Token secret",
            "Bearer  \t ",
        ] {
            let req = Event::new(method)
                .if_match(&before)
                .header("authorization", garbage)
                .build();
            let (status, _, _) = call(&f.state, req).await;
            assert_eq!(status, 401, "{method} {garbage:?}");
        }
        let wrong = Event::new(method)
            .if_match(&before)
            .header("authorization", "Bearer secret2")
            .build();
        let (status, body, _) = call(&f.state, wrong).await;
        assert_eq!(
            (status, error_of(&body).0.as_str()),
            (403, "forbidden"),
            "{method}"
        );
    }
    assert_eq!(f.etag(), before);
    assert!(f.audit.audit_records().is_empty());
}

#[tokio::test]
async fn without_a_configured_hash_ingest_refuses_everyone() {
    let f = fixture_with(Some(KB), None, None);
    let before = f.etag();
    for method in ["GET", "PUT"] {
        let req = Event::new(method).if_match(&before).build();
        let (status, body, _) = call(&f.state, req).await;
        assert_eq!(status, 403, "{method}");
        assert_eq!(
            error_of(&body).1,
            "ingest is disabled: set INGEST_TOKEN_SHA256"
        );
    }
    assert_eq!(f.etag(), before);
}

#[tokio::test]
async fn writes_need_if_match_and_patch_needs_a_real_etag() {
    let f = fixture();
    let before = f.etag();
    for method in ["PUT", "PATCH"] {
        let (status, body, _) =
            call(&f.state, Event::new(method).without("if-match").build()).await;
        assert_eq!(
            (status, error_of(&body).0.as_str()),
            (428, "precondition_required"),
            "{method}"
        );
    }
    let patch = Event::new("PATCH")
        .header("if-match", "*")
        .body(Some(r#"{"delete": ["notes"]}"#))
        .build();
    let (status, _, _) = call(&f.state, patch).await;
    assert_eq!(status, 428);
    assert_eq!(f.etag(), before);
    // `If-Match: *` is the explicit "replace whatever is stored" for PUT.
    let (status, body, _) = call(&f.state, Event::new("PUT").header("if-match", "*").build()).await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(body["previous_etag"], before.as_str());
}

#[tokio::test]
async fn the_first_version_is_created_with_if_none_match_star() {
    let f = fixture_with(None, Some(TOKEN_SHA256), None);
    let (status, body, _) = call(&f.state, Event::new("GET").body(None).build()).await;
    assert_eq!((status, error_of(&body).0.as_str()), (404, "not_found"));
    let (status, _, _) = call(&f.state, Event::new("PUT").header("if-match", "*").build()).await;
    assert_eq!(status, 409);
    let create = Event::new("PUT")
        .without("if-match")
        .header("if-none-match", "*")
        .build();
    let (status, body, _) = call(&f.state, create).await;
    assert_eq!(status, 201, "{body}");
    assert_eq!(body["previous_etag"], Value::Null);
    let again = Event::new("PUT")
        .without("if-match")
        .header("if-none-match", "*")
        .build();
    assert_eq!(call(&f.state, again).await.0, 409);
}

#[tokio::test]
async fn bodies_over_the_limit_get_413() {
    let f = fixture_with(Some(KB), Some(TOKEN_SHA256), Some(64));
    let before = f.etag();
    let (status, body, _) = call(&f.state, Event::new("PUT").if_match(&before).build()).await;
    assert_eq!(
        (status, error_of(&body).0.as_str()),
        (413, "payload_too_large")
    );
    assert_eq!(f.etag(), before);
}

#[tokio::test]
async fn an_invalid_kb_is_400_with_every_problem_and_nothing_is_written() {
    let f = fixture();
    let before = f.etag();
    let bad = r#"{"documents": [{"id": "a", "type": "page"}, {"id": "a", "type": "page", "title": "A", "url": "ftp://x"}]}"#;
    let (status, body, _) = call(
        &f.state,
        Event::new("PUT").if_match(&before).body(Some(bad)).build(),
    )
    .await;
    assert_eq!(status, 400);
    assert_eq!(error_of(&body).0, "invalid_knowledge_base");
    let paths: Vec<&str> = body["error"]["problems"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["path"].as_str().unwrap())
        .collect();
    assert_eq!(
        paths,
        ["documents[0].title", "documents[1].url", "documents[1].id"]
    );
    let (status, body, _) = call(
        &f.state,
        Event::new("PUT")
            .if_match(&before)
            .body(Some("{\"documents\": ["))
            .build(),
    )
    .await;
    assert_eq!(status, 400);
    assert!(body["error"]["problems"][0]["message"]
        .as_str()
        .unwrap()
        .contains("not valid JSON"));
    assert_eq!(f.etag(), before);
    assert!(f.audit.audit_records().is_empty());
}

#[tokio::test]
async fn patch_upserts_and_deletes_and_an_unknown_id_is_400_listing_it() {
    let f = fixture();
    let before = f.etag();
    let unknown = r#"{"delete": ["notes", "ghost", "phantom"]}"#;
    let (status, body, _) = call(
        &f.state,
        Event::new("PATCH")
            .if_match(&before)
            .body(Some(unknown))
            .build(),
    )
    .await;
    assert_eq!(status, 400, "{body}");
    let problems = body["error"]["problems"].as_array().unwrap();
    assert_eq!(problems.len(), 2);
    assert_eq!(problems[0]["path"], "delete[1]");
    assert!(problems[0]["message"].as_str().unwrap().contains("ghost"));
    assert!(problems[1]["message"].as_str().unwrap().contains("phantom"));
    assert_eq!(f.etag(), before);

    let patch = r#"{"upsert": [{"id": "kiwi", "type": "page", "title": "Kiwi", "content": "trellis"}], "delete": ["notes"]}"#;
    let req = Event::new("PATCH")
        .if_match(&before)
        .body(Some(patch))
        .request_id("patch-1")
        .build();
    let (status, body, _) = call(&f.state, req).await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(body["added"], serde_json::json!(["kiwi"]));
    assert_eq!(body["removed"], serde_json::json!(["notes"]));
    let stored: Value = serde_json::from_slice(&f.source.object().unwrap().bytes).unwrap();
    assert_eq!(stored["glossary"]["人脸识别"][0], "face recognition");
    let records = f.audit.audit_records();
    assert_eq!(records.len(), 1);
    assert_eq!(
        (records[0].action.as_str(), records[0].request_id.as_str()),
        ("ingest_patch", "patch-1")
    );
    assert_eq!(records[0].doc_ids, ["kiwi", "notes"]);
    assert_eq!(records[0].client_hash.as_deref(), Some("token:2bb80d53"));
}

#[tokio::test]
async fn a_base64_body_is_decoded() {
    let f = fixture();
    let doc = r#"[{"id": "b64", "type": "page", "title": "Encoded"}]"#;
    // Function URLs base64-encode bodies with non-text content types.
    let encoded = base64::engine::general_purpose::STANDARD.encode(doc.as_bytes());
    let req = Event::new("PUT")
        .if_match(&f.etag())
        .header("content-type", "application/octet-stream")
        .body(Some(&encoded))
        .base64()
        .build();
    let (status, body, _) = call(&f.state, req).await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(f.source.object().unwrap().bytes, doc.as_bytes());
}

#[tokio::test]
async fn other_methods_get_405_and_preflight_is_answered() {
    let f = fixture();
    let (status, body, _) = call(&f.state, Event::new("DELETE").build()).await;
    assert_eq!(
        (status, error_of(&body).0.as_str()),
        (405, "method_not_allowed")
    );
    let (status, _, headers) = call(
        &f.state,
        Event::new("OPTIONS")
            .without("authorization")
            .header("origin", "https://site.example")
            .build(),
    )
    .await;
    assert_eq!(status, 204);
    assert!(headers["access-control-allow-methods"]
        .to_str()
        .unwrap()
        .contains("PATCH"));
}
