//! `rag ingest` end to end: the binary against the real ingest handler, served over HTTP
//! on a local port by a minimal HTTP/1.1 adapter, with an in-memory source and store.
#![allow(clippy::unwrap_used)] // test helpers may panic on broken fixtures

use std::net::SocketAddr;
use std::path::PathBuf;
use std::process::Output;
use std::sync::Arc;

use ingest::{function_handler, AppState};
use lambda_http::Body;
use shared::ingest::IngestConfig;
use shared::{Config, MemoryConversationStore, MemoryKbSource};
use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt, BufReader};
use tokio::net::TcpListener;

const TOKEN_SHA256: &str = "2bb80d537b1da3e38bd30361aa855686bde0eacd7162fef6a25fe97bf527a25b";
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

/// Serves the ingest handler on a free port until the test ends.
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
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr: SocketAddr = listener.local_addr().unwrap();
    tokio::spawn(async move {
        while let Ok((stream, _)) = listener.accept().await {
            let state = state.clone();
            tokio::spawn(async move { exchange(stream, &state).await });
        }
    });
    Server {
        url: format!("http://{addr}/"),
        source,
        audit,
    }
}

/// Reads one request, hands it to the handler, writes the response, closes.
async fn exchange(stream: tokio::net::TcpStream, state: &AppState) {
    let mut reader = BufReader::new(stream);
    let mut line = String::new();
    reader.read_line(&mut line).await.unwrap();
    let mut parts = line.split_whitespace();
    let (method, target) = (
        parts.next().unwrap().to_owned(),
        parts.next().unwrap().to_owned(),
    );
    let mut builder = lambda_http::http::Request::builder()
        .method(method.as_str())
        .uri(target);
    let mut length = 0usize;
    loop {
        line.clear();
        reader.read_line(&mut line).await.unwrap();
        let header = line.trim_end();
        if header.is_empty() {
            break;
        }
        let (name, value) = header.split_once(':').unwrap();
        if name.eq_ignore_ascii_case("content-length") {
            length = value.trim().parse().unwrap();
        }
        builder = builder.header(name, value.trim());
    }
    let mut body = vec![0u8; length];
    reader.read_exact(&mut body).await.unwrap();
    let request = builder.body(Body::from(body)).unwrap();
    let response = function_handler(state, request).await.unwrap();
    let mut head = format!("HTTP/1.1 {}\r\nconnection: close\r\n", response.status());
    for (name, value) in response.headers() {
        head.push_str(&format!("{name}: {}\r\n", value.to_str().unwrap()));
    }
    let body = response.body().as_ref().to_vec();
    head.push_str(&format!("content-length: {}\r\n\r\n", body.len()));
    let mut stream = reader.into_inner();
    stream.write_all(head.as_bytes()).await.unwrap();
    stream.write_all(&body).await.unwrap();
    stream.shutdown().await.unwrap();
}

fn kb_file(name: &str, text: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("rag-ingest-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join(name);
    std::fs::write(&path, text).unwrap();
    path
}

/// Runs `rag` with `RAG_TEST_TOKEN` set to `token` (unless `None`).
async fn rag(args: Vec<String>, token: Option<&str>) -> Output {
    let token = token.map(str::to_owned);
    tokio::task::spawn_blocking(move || {
        let mut cmd = std::process::Command::new(env!("CARGO_BIN_EXE_rag"));
        cmd.args(&args).env_remove("RAG_TEST_TOKEN");
        if let Some(t) = token {
            cmd.env("RAG_TEST_TOKEN", t);
        }
        cmd.output().unwrap()
    })
    .await
    .unwrap()
}

fn ingest_args(url: &str, path: &std::path::Path, extra: &[&str]) -> Vec<String> {
    let mut args: Vec<String> = ["ingest", "--url", url, "--token-env", "RAG_TEST_TOKEN"]
        .iter()
        .map(|s| s.to_string())
        .collect();
    args.extend(extra.iter().map(|s| s.to_string()));
    args.push(path.display().to_string());
    args
}

fn text(out: &Output) -> (String, String) {
    (
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[tokio::test(flavor = "multi_thread")]
async fn dry_run_shows_the_diff_and_uploads_nothing() {
    let server = serve(Some(STORED)).await;
    let before = server.source.object().unwrap();
    let path = kb_file("dry.json", LOCAL);
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
    let path = kb_file("upload.json", LOCAL);
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
    let path = kb_file("first.json", LOCAL);
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
    let path = kb_file(
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
    let path = kb_file("token.json", LOCAL);
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
