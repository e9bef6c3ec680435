//! `rag sync` end to end: the binary against the real ingest handler over S3 on a moto
//! server (served over HTTP on a local port), then a search index loaded from the S3 object
//! as the search function loads it.
//!
//! Tests that need moto fail without it. Run: `infra/venv.sh && cargo test -p rag --test it
//! sync::`.
#![allow(clippy::unwrap_used)] // test helpers may panic on broken fixtures

use crate::common;

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use common::{kb_file, rag, text, Hook, TOKEN_SHA256};
use ingest::AppState;
use serde_json::Value;
use shared::ingest::{Caller, IngestConfig, Precondition};
use shared::kb::Fetched;
use shared::kb::{summaries, KbDiff};
use shared::search::index_object;
use shared::testing::MotoServer;
use shared::{Config, KbSource, MemoryConversationStore, MemoryKbSource, S3KbSource};

const KEY: &str = "knowledge_base.json";

const DEPLOYED: &str = r#"{"documents": [
  {"id": "pfc", "type": "publication", "title": "Partial FC: Training 10 Million Identities on a Single Machine",
   "summary": "Face recognition training at scale."},
  {"id": "notes", "type": "page", "title": "Notes", "content": "cooking recipes"},
  {"id": "old", "type": "page", "title": "Old news", "content": "A page that was taken down."}
], "glossary": {"人脸识别": ["face recognition"]}}"#;

/// [`DEPLOYED`] with `notes` edited, `old` deleted and a `kiwi` page added.
const EDITED: &str = r#"{"documents": [
  {"id": "pfc", "type": "publication", "title": "Partial FC: Training 10 Million Identities on a Single Machine",
   "summary": "Face recognition training at scale."},
  {"id": "notes", "type": "page", "title": "Notes", "content": "cooking recipes and bread"},
  {"id": "kiwi", "type": "page", "title": "Kiwi growing notes", "content": "Kiwifruit vines need a sturdy trellis."}
], "glossary": {"人脸识别": ["face recognition"]}}"#;

/// Ingest over a knowledge base in a moto bucket, staging under `staging/`.
struct Stack {
    moto: MotoServer,
    bucket: String,
    audit: Arc<MemoryConversationStore>,
    state: Arc<AppState>,
}

impl Stack {
    async fn start(deployed: &str) -> Self {
        let moto = MotoServer::shared();
        let bucket = moto.create_bucket("sync").await;
        moto.put_object(&bucket, KEY, deployed).await;
        let audit = Arc::new(MemoryConversationStore::new());
        let ingest = IngestConfig::from_lookup(|k| {
            (k == "INGEST_TOKEN_SHA256").then(|| TOKEN_SHA256.to_owned())
        })
        .unwrap();
        let config = Config::from_lookup(|_| None).unwrap();
        let source = S3KbSource::from_sdk_config(&moto.sdk_config(), &bucket, KEY);
        let staging = Arc::new(source.staging("staging/"));
        let state =
            AppState::new(Arc::new(source), audit.clone(), &config, &ingest).with_staging(staging);
        Self {
            moto,
            bucket,
            audit,
            state: Arc::new(state),
        }
    }

    fn source(&self) -> S3KbSource {
        S3KbSource::from_sdk_config(&self.moto.sdk_config(), &self.bucket, KEY)
    }

    /// The live object's bytes and ETag.
    async fn live(&self) -> (String, String) {
        match self.source().get(None).await.unwrap() {
            Fetched::Object(o) => (String::from_utf8(o.bytes).unwrap(), o.etag),
            Fetched::NotModified => unreachable!("unconditional read"),
        }
    }

    /// Every key under `staging/`.
    async fn staged_keys(&self) -> usize {
        self.moto.keys(&self.bucket, "staging/").await.len()
    }

    /// Asserts the live documents and glossary are the file's (order aside).
    async fn assert_live_matches(&self, file: &str) {
        let (live, _) = self.live().await;
        let live: Value = serde_json::from_str(&live).unwrap();
        let file: Value = serde_json::from_str(file).unwrap();
        let diff = KbDiff::between(&summaries(&live), &summaries(&file));
        assert!(diff.is_empty(), "live differs from the file: {diff:?}");
        assert_eq!(live["glossary"], file["glossary"]);
    }
}

fn sync_args(url: &str, path: &std::path::Path, extra: &[&str]) -> Vec<String> {
    common::args("sync", url, path, extra)
}

fn assert_lines(out: &str, lines: &[&str]) {
    for line in lines {
        assert!(out.contains(line), "missing {line:?} in\n{out}");
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn sync_patches_an_edit_a_new_page_and_a_deletion_and_search_serves_the_new_page() {
    let stack = Stack::start(DEPLOYED).await;
    let url = common::serve(stack.state.clone(), None).await;
    let (_dir, path) = kb_file("edited.json", EDITED);
    let out = rag(sync_args(&url, &path, &[]), Some("secret")).await;
    let (stdout, stderr) = text(&out);
    assert_eq!(out.status.code(), Some(0), "{stdout}{stderr}");
    assert_lines(
        &stdout,
        &[
            "  + kiwi",
            "  ~ notes",
            "  - old",
            "1 added, 1 changed, 1 removed",
            "glossary: unchanged",
            "sending: PATCH (2 upserted, 1 deleted",
        ],
    );
    stack.assert_live_matches(EDITED).await;
    let records = stack.audit.audit_records();
    assert_eq!(records.len(), 1);
    assert_eq!(
        records[0].action, "ingest_patch",
        "only the changes were sent"
    );

    // What the search function would load from the same object now finds the new page.
    let object = match stack.source().get(None).await.unwrap() {
        Fetched::Object(o) => o,
        Fetched::NotModified => unreachable!(),
    };
    let index = index_object(object, None, "s3").unwrap();
    let hits = index.search("kiwi trellis", 3, 0.0).hits;
    assert_eq!(hits.first().map(|h| h.id.as_str()), Some("kiwi"));
    assert!(index
        .search("taken down", 3, 0.0)
        .hits
        .iter()
        .all(|h| h.id != "old"));

    // In sync now: a dry run (and a real run) report no change and write nothing.
    let (_, etag) = stack.live().await;
    for extra in [&["--dry-run"][..], &[]] {
        let again = rag(sync_args(&url, &path, extra), Some("secret")).await;
        let (stdout, stderr) = text(&again);
        assert_eq!(again.status.code(), Some(0), "{stdout}{stderr}");
        assert_lines(&stdout, &["0 added, 0 changed, 0 removed", "no changes"]);
    }
    assert_eq!(stack.live().await.1, etag);
    assert_eq!(stack.audit.audit_records().len(), 1);
}

#[tokio::test(flavor = "multi_thread")]
async fn a_change_over_the_threshold_syncs_through_a_staged_upload() {
    let stack = Stack::start(DEPLOYED).await;
    let url = common::serve(stack.state.clone(), None).await;
    // The patch (kiwi and notes) is over 200 bytes: the whole file goes staged.
    let (_dir, path) = kb_file("staged.json", EDITED);
    let out = rag(
        sync_args(&url, &path, &["--stage-above", "200"]),
        Some("secret"),
    )
    .await;
    let (stdout, stderr) = text(&out);
    assert_eq!(out.status.code(), Some(0), "{stdout}{stderr}");
    assert_lines(
        &stdout,
        &[
            "the patch is larger than --stage-above",
            "staged upload: ",
            "uploaded: etag",
        ],
    );
    assert_eq!(stack.live().await.0, EDITED, "promoted byte for byte");
    assert_eq!(stack.staged_keys().await, 0, "the staged object is deleted");
    assert_eq!(stack.audit.audit_records()[0].action, "ingest_staged");

    // A glossary change is sent as the whole file, staged too.
    let glossary = EDITED.replace("\"face recognition\"]", "\"face recognition\", \"FR\"]");
    let (_dir, path) = kb_file("glossary.json", &glossary);
    let out = rag(
        sync_args(&url, &path, &["--stage-above", "200"]),
        Some("secret"),
    )
    .await;
    let (stdout, stderr) = text(&out);
    assert_eq!(out.status.code(), Some(0), "{stdout}{stderr}");
    assert_lines(
        &stdout,
        &[
            "0 added, 0 changed, 0 removed",
            "glossary: changed (1 -> 1 entries)",
            "the glossary changed",
            "staged upload: ",
        ],
    );
    assert_eq!(stack.live().await.0, glossary);
    assert_eq!(stack.staged_keys().await, 0);
}

#[tokio::test(flavor = "multi_thread")]
async fn a_concurrent_change_makes_sync_conflict_then_re_diff_and_succeed() {
    let stack = Stack::start(DEPLOYED).await;
    // Right after sync's first read, someone else replaces the knowledge base.
    let state = stack.state.clone();
    let done = Arc::new(AtomicBool::new(false));
    let hook: Hook = Arc::new(move |method: String| {
        let state = state.clone();
        let done = done.clone();
        Box::pin(async move {
            if method == "GET" && !done.swap(true, Ordering::SeqCst) {
                let other = DEPLOYED.replace("cooking recipes", "someone else's recipes");
                let caller = Caller {
                    who: "token:other".into(),
                };
                state
                    .ingest
                    .put(&caller, "other", other.as_bytes(), &Precondition::Any)
                    .await
                    .unwrap();
            }
        })
    });
    let url = common::serve(stack.state.clone(), Some(hook)).await;
    let (_dir, path) = kb_file("race.json", EDITED);
    let out = rag(sync_args(&url, &path, &[]), Some("secret")).await;
    let (stdout, stderr) = text(&out);
    assert_eq!(out.status.code(), Some(0), "{stdout}{stderr}");
    assert!(
        stderr.contains("conflict (attempt 1 of 4): HTTP 409"),
        "{stderr}"
    );
    assert_lines(&stdout, &["reading it again", "uploaded: etag"]);
    assert_eq!(
        stdout.matches("deployed: etag").count(),
        2,
        "read twice: {stdout}"
    );
    stack.assert_live_matches(EDITED).await;
    let actions: Vec<String> = stack
        .audit
        .audit_records()
        .into_iter()
        .map(|r| r.action)
        .collect();
    assert_eq!(
        actions,
        ["ingest_put", "ingest_patch"],
        "the other write, then sync's"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn a_dry_run_prints_the_diff_and_sends_nothing() {
    let source = Arc::new(MemoryKbSource::with_bytes(DEPLOYED));
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
    let url = common::serve(state, None).await;
    let before = source.object().unwrap();
    let (_dir, path) = kb_file("dry.json", EDITED);
    let out = rag(sync_args(&url, &path, &["--dry-run"]), Some("secret")).await;
    let (stdout, stderr) = text(&out);
    assert_eq!(out.status.code(), Some(0), "{stdout}{stderr}");
    assert_lines(
        &stdout,
        &["  + kiwi", "  ~ notes", "  - old", "dry run: nothing sent"],
    );
    assert_eq!(source.object().unwrap(), before);
    assert!(audit.audit_records().is_empty());

    // An invalid file is refused before anything is sent; a missing token is a usage error.
    let (_bad_dir, bad) = kb_file("bad.json", r#"[{"id": "x", "type": "page"}]"#);
    let out = rag(sync_args(&url, &bad, &[]), Some("secret")).await;
    let (_, stderr) = text(&out);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(stderr.contains("documents[0].title"), "{stderr}");
    let out = rag(sync_args(&url, &path, &[]), None).await;
    assert_eq!(out.status.code(), Some(2));
    assert_eq!(source.object().unwrap(), before);
}
