//! `rag ingest` end to end: the binary against the real ingest handler, served over HTTP
//! on a local port by a minimal HTTP/1.1 adapter, with an in-memory source and store.
#![allow(clippy::unwrap_used)] // test helpers may panic on broken fixtures

use crate::common;

use std::sync::Arc;

use common::{kb_file, rag, text, TOKEN_SHA256};
use ingest::AppState;
use shared::ingest::IngestConfig;
use shared::{Config, MemoryConversationStore, MemoryKbSource};

const STORED: &str = r#"{"documents": [
  {"id": "a", "type": "page", "title": "Alpha"},
  {"id": "b", "type": "page", "title": "Beta"}
]}"#;
const LOCAL: &str = r#"{"documents": [
  {"id": "a", "type": "page", "title": "Alpha, revised"},
  {"id": "c", "type": "page", "title": "Gamma"}
]}"#;

struct Server {
    url: String,
    source: Arc<MemoryKbSource>,
    audit: Arc<MemoryConversationStore>,
}

/// Serves the ingest handler over an in-memory source and store until the test ends.
async fn serve(stored: Option<&str>) -> Server {
    let source = Arc::new(stored.map_or_else(MemoryKbSource::new, MemoryKbSource::with_bytes));
    let audit = Arc::new(MemoryConversationStore::new());
    let ingest = IngestConfig::from_lookup(|k| {
        (k == "INGEST_TOKEN_SHA256").then(|| TOKEN_SHA256.to_owned())
    })
    .unwrap();
    let config = Config::from_lookup(|_| None).unwrap();
    let state = Arc::new(AppState::new(
        source.clone(),
        audit.clone(),
        &config,
        &ingest,
    ));
    Server {
        url: common::serve(state, None).await,
        source,
        audit,
    }
}

fn ingest_args(url: &str, path: &std::path::Path, extra: &[&str]) -> Vec<String> {
    common::args("ingest", url, path, extra)
}

#[tokio::test(flavor = "multi_thread")]
async fn dry_run_shows_the_diff_and_uploads_nothing() {
    let server = serve(Some(STORED)).await;
    let before = server.source.object().unwrap();
    let (_dir, path) = kb_file("dry.json", LOCAL);
    let out = rag(
        ingest_args(&server.url, &path, &["--dry-run"]),
        Some("secret"),
    )
    .await;
    let (stdout, stderr) = text(&out);
    assert_eq!(out.status.code(), Some(0), "{stdout}{stderr}");
    assert!(
        stdout.contains(&format!("stored: etag {}", before.etag)),
        "{stdout}"
    );
    for line in [
        "  + c",
        "  ~ a",
        "  - b",
        "1 added, 1 changed, 1 removed",
        "dry run",
    ] {
        assert!(stdout.contains(line), "missing {line:?} in\n{stdout}");
    }
    assert_eq!(server.source.object().unwrap(), before);
}

#[tokio::test(flavor = "multi_thread")]
async fn an_upload_replaces_the_stored_version_and_a_rerun_changes_nothing() {
    let server = serve(Some(STORED)).await;
    let (_dir, path) = kb_file("upload.json", LOCAL);
    let out = rag(ingest_args(&server.url, &path, &[]), Some("secret")).await;
    let (stdout, stderr) = text(&out);
    assert_eq!(out.status.code(), Some(0), "{stdout}{stderr}");
    let stored = server.source.object().unwrap();
    assert_eq!(stored.bytes, LOCAL.as_bytes());
    assert!(
        stdout.contains(&format!("uploaded: etag {} (2 documents)", stored.etag)),
        "{stdout}"
    );
    assert_eq!(server.audit.audit_records().len(), 1);

    let again = rag(ingest_args(&server.url, &path, &[]), Some("secret")).await;
    let (stdout, _) = text(&again);
    assert_eq!(again.status.code(), Some(0));
    assert!(stdout.contains("no changes"), "{stdout}");
    assert_eq!(
        server.audit.audit_records().len(),
        1,
        "nothing written the second time"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn the_first_upload_creates_the_knowledge_base() {
    let server = serve(None).await;
    let (_dir, path) = kb_file("first.json", LOCAL);
    let out = rag(ingest_args(&server.url, &path, &[]), Some("secret")).await;
    let (stdout, stderr) = text(&out);
    assert_eq!(out.status.code(), Some(0), "{stdout}{stderr}");
    assert!(
        stdout.contains("stored: nothing yet") && stdout.contains("2 added"),
        "{stdout}"
    );
    assert_eq!(server.source.object().unwrap().bytes, LOCAL.as_bytes());
}

#[tokio::test(flavor = "multi_thread")]
async fn an_invalid_file_is_reported_problem_by_problem_and_not_uploaded() {
    let server = serve(Some(STORED)).await;
    let (_dir, path) = kb_file(
        "invalid.json",
        r#"[{"id": "a", "type": "page"}, {"id": "b", "title": "B", "url": "javascript:x"}]"#,
    );
    let out = rag(ingest_args(&server.url, &path, &[]), Some("secret")).await;
    let (_, stderr) = text(&out);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    for needle in [
        "documents[0].title",
        "documents[1].type",
        "documents[1].url",
        "3 problem(s)",
    ] {
        assert!(stderr.contains(needle), "missing {needle:?} in\n{stderr}");
    }
    assert_eq!(server.source.object().unwrap().bytes, STORED.as_bytes());
}

#[tokio::test(flavor = "multi_thread")]
async fn a_missing_token_variable_is_a_usage_error_and_a_wrong_token_fails() {
    let server = serve(Some(STORED)).await;
    let (_dir, path) = kb_file("token.json", LOCAL);
    let out = rag(ingest_args(&server.url, &path, &[]), None).await;
    let (_, stderr) = text(&out);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("RAG_TEST_TOKEN is not set"), "{stderr}");
    let out = rag(ingest_args(&server.url, &path, &[]), Some("wrong")).await;
    let (_, stderr) = text(&out);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(stderr.contains("HTTP 403"), "{stderr}");
    assert!(
        !stderr.contains("wrong"),
        "the token is never printed: {stderr}"
    );
    let usage = rag(
        vec!["ingest".into(), path.display().to_string()],
        Some("secret"),
    )
    .await;
    assert_eq!(
        usage.status.code(),
        Some(2),
        "--url and --token-env are required"
    );
    assert_eq!(server.source.object().unwrap().bytes, STORED.as_bytes());
}
