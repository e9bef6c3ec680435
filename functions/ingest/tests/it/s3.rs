//! The ingest function against S3 (and DynamoDB for audit) on a moto server, and the
//! acceptance test: a warm search function serves what ingest wrote, with no restart.
//!
//! The tests share the test binary's server; a missing moto fails them. Run:
//! `infra/venv.sh && cargo test -p ingest --test it s3::`.
#![allow(clippy::unwrap_used)] // test helpers may panic on broken fixtures

use crate::common;

use std::sync::Arc;
use std::time::Duration;

use common::{call, error_of, state_with, Event, KB, TOKEN_SHA256};
use ingest::AppState;
use serde_json::Value;
use shared::store::create_tables;
use shared::testing::moto::unique_name;
use shared::testing::MotoServer;
use shared::{
    Config, ConversationStore, DynamoConversationStore, KbHandle, MemoryConversationStore,
    S3KbSource,
};

const KEY: &str = "knowledge_base.json";
const KIWI: &str = r#"{"id": "kiwi", "type": "page", "title": "Kiwi growing notes", "content": "Kiwifruit vines need a sturdy trellis."}"#;

struct Fixture {
    moto: MotoServer,
    bucket: String,
    audit: Arc<MemoryConversationStore>,
    state: AppState,
}

impl Fixture {
    /// A bucket holding [`KB`] and an ingest state over it (memory audit store).
    async fn start() -> Self {
        let moto = MotoServer::shared();
        let bucket = moto.create_bucket("ingest").await;
        let audit = Arc::new(MemoryConversationStore::new());
        let f = Self {
            state: state_with(
                Arc::new(source(&moto, &bucket)),
                audit.clone(),
                Some(TOKEN_SHA256),
                None,
            ),
            moto,
            bucket,
            audit,
        };
        f.upload(KB).await;
        f
    }

    /// An ingest instance over the same object auditing into new DynamoDB tables on moto,
    /// and the audit table's name.
    async fn audited_in_dynamodb(&self) -> (AppState, String) {
        let client = self.moto.dynamodb_client();
        let (conversations, audit_table) = (unique_name("conversations"), unique_name("audit"));
        create_tables(&client, &conversations, &audit_table)
            .await
            .unwrap();
        let store = Arc::new(DynamoConversationStore::new(
            client.clone(),
            &conversations,
            &audit_table,
            ingest::AUDIT_TTL,
        ));
        let state = self.instance(store, Some(TOKEN_SHA256), None);
        (state, audit_table)
    }

    /// Another ingest "instance" over the same object, with its own audit store.
    fn instance(
        &self,
        store: Arc<dyn ConversationStore>,
        token_sha256: Option<&str>,
        max: Option<usize>,
    ) -> AppState {
        state_with(
            Arc::new(source(&self.moto, &self.bucket)),
            store,
            token_sha256,
            max,
        )
    }

    /// Writes the object directly to S3, around ingest.
    async fn upload(&self, body: &str) {
        self.moto.put_object(&self.bucket, KEY, body).await;
    }

    /// Replaces the prebuilt index behind the service's back.
    async fn put_index(&self, bytes: Vec<u8>) {
        let key = shared::index::index_name(KEY);
        self.moto.put_object(&self.bucket, &key, bytes).await;
    }

    /// The stored object's bytes and unquoted ETag, read directly from S3.
    async fn stored(&self) -> (String, String) {
        let (bytes, etag) = self.moto.get_object(&self.bucket, KEY).await;
        (String::from_utf8(bytes).unwrap(), etag)
    }

    async fn get(&self, state: &AppState) -> Value {
        let (status, body, _) = call(state, Event::new("GET").body(None).build()).await;
        assert_eq!(status, 200, "{body}");
        body
    }
}

fn source(moto: &MotoServer, bucket: &str) -> S3KbSource {
    S3KbSource::from_sdk_config(&moto.sdk_config(), bucket, KEY)
}

fn ids(kb_json: &str) -> Vec<String> {
    let v: Value = serde_json::from_str(kb_json).unwrap();
    v["documents"]
        .as_array()
        .or(v.as_array())
        .unwrap()
        .iter()
        .map(|d| d["id"].as_str().unwrap().to_owned())
        .collect()
}

#[tokio::test]
async fn get_reports_the_s3_etag_and_put_replaces_the_object() {
    let f = Fixture::start().await;
    let (_, s3_etag) = f.stored().await;
    let status = f.get(&f.state).await;
    assert_eq!(status["etag"], s3_etag.as_str());
    assert_eq!(status["location"], format!("s3://{}/{KEY}", f.bucket));
    let new_kb = format!("[{KIWI}]");
    let req = Event::new("PUT")
        .if_match(&s3_etag)
        .body(Some(&new_kb))
        .build();
    let (code, body, headers) = call(&f.state, req).await;
    assert_eq!(code, 200, "{body}");
    let (stored, etag) = f.stored().await;
    assert_eq!(stored, new_kb, "stored byte for byte");
    assert_eq!(body["etag"], etag.as_str());
    assert_eq!(headers["etag"], format!("\"{etag}\""));
}

#[tokio::test]
async fn a_corrupt_upload_is_rejected_by_ingest_and_nothing_is_written() {
    let f = Fixture::start().await;
    let (before, etag) = f.stored().await;
    for bad in [
        "{\"documents\": [",
        r#"{"documents": [{"id": "x", "type": "page"}]}"#,
    ] {
        let req = Event::new("PUT").if_match(&etag).body(Some(bad)).build();
        let (status, body, _) = call(&f.state, req).await;
        assert_eq!(status, 400, "{bad}: {body}");
        assert!(!body["error"]["problems"].as_array().unwrap().is_empty());
    }
    let patch = r#"{"upsert": [{"id": "x", "type": "publication"}]}"#;
    let req = Event::new("PATCH")
        .if_match(&etag)
        .body(Some(patch))
        .build();
    let (status, body, _) = call(&f.state, req).await;
    assert_eq!(status, 400);
    assert_eq!(body["error"]["problems"][0]["path"], "upsert[0].title");
    assert_eq!(f.stored().await, (before, etag), "etag unchanged");
    assert!(f.audit.audit_records().is_empty());
}

#[tokio::test]
async fn a_corrupt_object_written_around_ingest_never_replaces_the_served_index() {
    let f = Fixture::start().await;
    let search = search_state(&f, Duration::ZERO).await;
    assert_eq!(search_ids(&search, "partial").await, ["pfc"]);
    f.upload("{\"documents\": [{\"id\": ").await;
    assert_eq!(
        search_ids(&search, "partial").await,
        ["pfc"],
        "search still answers from the last good index"
    );
    // Ingest reports the corrupt object as it is, so it can be repaired with its etag.
    let status = f.get(&f.state).await;
    assert_eq!(status["valid"], false);
    let (_, corrupt_etag) = f.stored().await;
    assert_eq!(status["etag"], corrupt_etag.as_str());
    let repaired = format!("[{KIWI}]");
    let req = Event::new("PUT")
        .if_match(&corrupt_etag)
        .body(Some(&repaired))
        .build();
    assert_eq!(call(&f.state, req).await.0, 200);
    assert_eq!(search_ids(&search, "kiwi trellis").await, ["kiwi"]);
}

#[tokio::test]
async fn of_two_patches_based_on_the_same_etag_one_wins_and_the_loser_retries() {
    let f = Fixture::start().await;
    // Two warm instances of the function, as Lambda runs concurrent requests.
    let a = f.instance(f.audit.clone(), Some(TOKEN_SHA256), None);
    let b = f.instance(f.audit.clone(), Some(TOKEN_SHA256), None);
    let base = f.get(&a).await["etag"].as_str().unwrap().to_owned();
    let add_kiwi = format!(r#"{{"upsert": [{KIWI}]}}"#);
    let drop_notes = r#"{"delete": ["notes"]}"#;
    let req_a = Event::new("PATCH")
        .if_match(&base)
        .body(Some(&add_kiwi))
        .request_id("patch-a")
        .build();
    let req_b = Event::new("PATCH")
        .if_match(&base)
        .body(Some(drop_notes))
        .request_id("patch-b")
        .build();
    let ((status_a, body_a, _), (status_b, body_b, _)) =
        tokio::join!(call(&a, req_a), call(&b, req_b));
    let (loser, loser_patch, lost, winner_ids) = match (status_a, status_b) {
        (200, 409) => (
            &b,
            drop_notes.to_owned(),
            body_b,
            ["pfc", "notes", "kiwi"].as_slice(),
        ),
        (409, 200) => (&a, add_kiwi.clone(), body_a, ["pfc"].as_slice()),
        other => panic!("expected one 200 and one 409, got {other:?}\na: {body_a}\nb: {body_b}"),
    };
    assert_eq!(error_of(&lost).0, "conflict");
    // The winner's change is stored, the loser's is not (yet).
    let (stored, _) = f.stored().await;
    assert_eq!(ids(&stored), winner_ids);
    // The loser re-reads, re-applies and wins: both changes are present.
    let fresh = f.get(loser).await["etag"].as_str().unwrap().to_owned();
    let retry = Event::new("PATCH")
        .if_match(&fresh)
        .body(Some(&loser_patch))
        .request_id("retry")
        .build();
    let (status, body, _) = call(loser, retry).await;
    assert_eq!(status, 200, "{body}");
    let (stored, _) = f.stored().await;
    assert_eq!(ids(&stored), ["pfc", "kiwi"]);
    let audited: Vec<String> = f
        .audit
        .audit_records()
        .into_iter()
        .map(|r| r.request_id)
        .collect();
    assert_eq!(
        audited.len(),
        2,
        "one record per successful write: {audited:?}"
    );
    assert_eq!(audited[1], "retry");
}

#[tokio::test]
async fn rejected_requests_leave_the_object_and_the_audit_table_untouched() {
    let f = Fixture::start().await;
    let (before, etag) = f.stored().await;
    let disabled = f.instance(f.audit.clone(), None, None);
    let small = f.instance(f.audit.clone(), Some(TOKEN_SHA256), Some(32));
    let cases: Vec<(&AppState, Event, u16)> = vec![
        (
            &f.state,
            Event::new("PUT").if_match(&etag).without("authorization"),
            401,
        ),
        (
            &f.state,
            Event::new("PUT")
                .if_match(&etag)
                .header("authorization", "Bearer"),
            401,
        ),
        (
            &f.state,
            Event::new("PUT")
                .if_match(&etag)
                .header("authorization", "Basic eDp5"),
            401,
        ),
        (
            &f.state,
            Event::new("PUT")
                .if_match(&etag)
                .header("authorization", "Bearer wrong"),
            403,
        ),
        (&disabled, Event::new("PUT").if_match(&etag), 403),
        (&small, Event::new("PUT").if_match(&etag), 413),
        (&f.state, Event::new("PUT").without("if-match"), 428),
        (
            &f.state,
            Event::new("PUT").if_match("0123456789abcdef"),
            409,
        ),
        (
            &f.state,
            Event::new("PATCH")
                .if_match(&etag)
                .body(Some(r#"{"delete": ["ghost"]}"#)),
            400,
        ),
    ];
    for (i, (state, event, want)) in cases.into_iter().enumerate() {
        let (status, body, _) = call(state, event.build()).await;
        assert_eq!(status, want, "case {i}: {body}");
    }
    assert_eq!(f.stored().await, (before, etag));
    assert!(f.audit.audit_records().is_empty());
}

#[tokio::test]
async fn each_successful_write_is_audited_in_dynamodb() {
    let f = Fixture::start().await;
    let (state, audit_table) = f.audited_in_dynamodb().await;
    let client = f.moto.dynamodb_client();
    let etag = f.get(&state).await["etag"].as_str().unwrap().to_owned();
    let patch = format!(r#"{{"upsert": [{KIWI}], "delete": ["notes"]}}"#);
    let ok = Event::new("PATCH")
        .if_match(&etag)
        .body(Some(&patch))
        .request_id("audited-1")
        .build();
    let (status, body, _) = call(&state, ok).await;
    assert_eq!(status, 200, "{body}");
    let stale = Event::new("PATCH")
        .if_match(&etag)
        .body(Some(&patch))
        .request_id("rejected-1")
        .build();
    assert_eq!(call(&state, stale).await.0, 409);
    let items = client.scan().table_name(&audit_table).send().await.unwrap();
    let items = items.items();
    assert_eq!(items.len(), 1, "{items:?}");
    let s = |k: &str| items[0][k].as_s().unwrap().clone();
    assert_eq!(s("request_id"), "audited-1");
    assert_eq!(s("action"), "ingest_patch");
    assert_eq!(s("client_hash"), "token:2bb80d53");
    assert!(s("outcome").starts_with(&format!("ok etag={}", body["etag"].as_str().unwrap())));
    let doc_ids: Vec<&str> = items[0]["doc_ids"]
        .as_l()
        .unwrap()
        .iter()
        .map(|v| v.as_s().unwrap().as_str())
        .collect();
    assert_eq!(doc_ids, ["kiwi", "notes"]);
}

/// A search function over the same S3 object, as deployed: its own handle and interval.
async fn search_state(f: &Fixture, interval: Duration) -> search::AppState {
    let kb = KbHandle::load(Arc::new(source(&f.moto, &f.bucket)), interval)
        .await
        .unwrap();
    search::AppState::new(kb, &Config::from_lookup(|_| None).unwrap())
}

async fn search_ids(state: &search::AppState, q: &str) -> Vec<String> {
    let req = Event::new("GET").body(None).query("q", q).build();
    let res = search::function_handler(state, req).await.unwrap();
    assert_eq!(res.status(), 200);
    let body: Value = serde_json::from_slice(res.body().as_ref()).unwrap();
    body["hits"]
        .as_array()
        .unwrap()
        .iter()
        .map(|h| h["id"].as_str().unwrap().to_owned())
        .collect()
}

/// Acceptance (issue 4): after an ingest PUT of a changed knowledge base, a warm search
/// function returns the new entry with no restart.
#[tokio::test]
async fn after_an_ingest_put_a_warm_search_function_returns_the_new_entry() {
    let f = Fixture::start().await;
    let interval = Duration::from_secs(1);
    let search = search_state(&f, interval).await;
    assert!(search_ids(&search, "kiwi trellis").await.is_empty());
    let etag = f.get(&f.state).await["etag"].as_str().unwrap().to_owned();
    let mut kb: Value = serde_json::from_str(KB).unwrap();
    kb["documents"]
        .as_array_mut()
        .unwrap()
        .push(serde_json::from_str(KIWI).unwrap());
    let req = Event::new("PUT")
        .if_match(&etag)
        .body(Some(&kb.to_string()))
        .build();
    let (status, body, _) = call(&f.state, req).await;
    assert_eq!(status, 200, "{body}");
    // The handle re-checks once `interval` has passed, and swaps the new index in when it
    // is built: ask until it answers. A minute is no timing assertion, only "never" made
    // finite.
    tokio::time::sleep(interval).await;
    let mut hits = Vec::new();
    for _ in 0..600 {
        hits = search_ids(&search, "kiwi trellis").await;
        if hits == ["kiwi"] {
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert_eq!(hits, ["kiwi"], "search never answered with the new entry");
    assert_eq!(search_ids(&search, "partial").await, ["pfc"]);
}

/// Issue 13: ingest writes the prebuilt index beside the knowledge base, built from the
/// bytes it stored, and a refresh of a warm handle loads both (the index, not the JSON,
/// is what it searches). An upload around ingest leaves the index stale: the next
/// refresh sees that and indexes the JSON instead.
#[tokio::test]
async fn ingest_writes_the_index_beside_the_kb_and_a_refresh_uses_both() {
    let f = Fixture::start().await;
    let handle = KbHandle::load(Arc::new(source(&f.moto, &f.bucket)), Duration::ZERO)
        .await
        .unwrap();
    assert!(!handle.snapshot().is_prebuilt(), "no index uploaded yet");
    let etag = f.get(&f.state).await["etag"].as_str().unwrap().to_owned();
    let mut kb: Value = serde_json::from_str(KB).unwrap();
    kb["documents"]
        .as_array_mut()
        .unwrap()
        .push(serde_json::from_str(KIWI).unwrap());
    let req = Event::new("PUT")
        .if_match(&etag)
        .body(Some(&kb.to_string()))
        .build();
    let (status, body, _) = call(&f.state, req).await;
    assert_eq!(status, 200, "{body}");

    let (stored, stored_etag) = f.stored().await;
    let index_key = shared::index::index_name(KEY);
    assert_eq!(index_key, "knowledge_base.index");
    // Panics (naming the key) unless ingest wrote the index.
    let (index, _) = f.moto.get_object(&f.bucket, &index_key).await;
    let built = shared::index::built_from(&index).unwrap();
    assert_eq!(
        built.version, stored_etag,
        "named by the ETag S3 gave the JSON"
    );
    assert_eq!(built.hash, shared::index::content_hash(stored.as_bytes()));
    let expect = shared::index::Expect::Version(&stored_etag);
    let decoded = shared::index::decode(&index, expect, stored_etag.clone()).unwrap();
    let parsed = shared::KnowledgeBase::from_json_str(&stored, "stored").unwrap();
    assert_eq!(decoded.kb(), &parsed);

    handle.refresh_now().await.unwrap();
    let served = handle.snapshot();
    assert!(served.is_prebuilt(), "the refresh read the index");
    assert_eq!(served.version(), stored_etag);
    let hits = served.search("kiwi trellis", 5, 0.0).hits;
    assert_eq!(hits.first().map(|h| h.id.as_str()), Some("kiwi"));

    // A cold start compares the index's version with a HeadObject and never reads the
    // JSON: shown by an index that names the current ETag but holds other documents
    // (which no writer would produce), served as it is.
    let other = r#"[{"id": "other", "type": "page", "title": "Other", "content": "plums"}]"#;
    let other_kb = shared::KnowledgeBase::from_json_str(other, "other").unwrap();
    let other_index = shared::index::encode(
        &shared::SearchIndex::new(other_kb, ""),
        shared::index::content_hash(other.as_bytes()),
        &stored_etag,
    );
    f.put_index(other_index).await;
    let cold = KbHandle::load(Arc::new(source(&f.moto, &f.bucket)), Duration::ZERO)
        .await
        .unwrap();
    assert!(cold.snapshot().is_prebuilt());
    assert_eq!(cold.snapshot().kb().documents[0].id, "other");
    f.put_index(index.to_vec()).await;

    // Around ingest: the JSON changes, the index does not.
    f.upload(&format!("[{KIWI}]")).await;
    handle.refresh_now().await.unwrap();
    let served = handle.snapshot();
    assert!(!served.is_prebuilt(), "a stale index is not served");
    assert_eq!(served.kb().documents.len(), 1);
    let hits = served.search("kiwi trellis", 5, 0.0).hits;
    assert_eq!(hits.first().map(|h| h.id.as_str()), Some("kiwi"));
    let cold = KbHandle::load(Arc::new(source(&f.moto, &f.bucket)), Duration::ZERO)
        .await
        .unwrap();
    assert!(!cold.snapshot().is_prebuilt(), "nor at a cold start");
    assert_eq!(cold.snapshot().kb().documents.len(), 1);
}

#[tokio::test]
async fn a_write_of_thousands_of_documents_is_audited_within_dynamodbs_item_size() {
    let f = Fixture::start().await;
    let (state, audit_table) = f.audited_in_dynamodb().await;
    let client = f.moto.dynamodb_client();
    let status = f.get(&state).await;
    let (etag, removed) = (
        status["etag"].as_str().unwrap(),
        status["documents"].clone(),
    );
    // 3,000 pages with ids of 180 characters: listing them all takes 540 KB, over the
    // 400 KB a DynamoDB item holds (moto enforces it as DynamoDB does).
    let docs: Vec<Value> = (0..3000)
        .map(|i| {
            serde_json::json!({"id": format!("{i:0>180}"), "type": "page", "title": format!("Page {i}")})
        })
        .collect();
    let kb = serde_json::json!({ "documents": docs }).to_string();
    let put = Event::new("PUT")
        .if_match(etag)
        .body(Some(&kb))
        .request_id("many-1")
        .build();
    let (status, body, _) = call(&state, put).await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(body["audited"], true, "{body}");
    let items = client.scan().table_name(&audit_table).send().await.unwrap();
    let items = items.items();
    assert_eq!(items.len(), 1, "{items:?}");
    let outcome = items[0]["outcome"].as_s().unwrap();
    // The sample's documents are removed: 3,000 added, its ids removed, 1,000 listed.
    assert!(
        outcome.ends_with(&format!(
            "added=3000 changed=0 removed={removed} listed=1000,0,0"
        )),
        "{outcome}"
    );
    assert_eq!(items[0]["doc_ids"].as_l().unwrap().len(), 1000);
}
