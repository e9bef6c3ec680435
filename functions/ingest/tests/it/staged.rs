//! Staged uploads through the handler, against S3 on a moto server: `POST ?stage=1` hands
//! out a presigned URL that really accepts the upload, `POST ?promote=<key>` validates and
//! promotes it like a `PUT`, and the staged object is gone afterwards either way.
//!
//! The tests share the test binary's server; a missing moto fails them. Run:
//! `infra/venv.sh && cargo test -p ingest --test it staged`.
#![allow(clippy::unwrap_used)] // test helpers may panic on broken fixtures

use crate::common;

use std::sync::Arc;

use common::{call, error_of, state_with, Event, KB, TOKEN_SHA256};
use ingest::AppState;
use serde_json::Value;
use shared::ingest::IngestConfig;
use shared::testing::MotoServer;
use shared::{Config, MemoryConversationStore, S3KbSource};

const KEY: &str = "knowledge_base.json";
const BIG: &str = r#"{"documents": [
  {"id": "kiwi", "type": "page", "title": "Kiwi growing notes", "content": "Kiwifruit vines need a sturdy trellis."},
  {"id": "fig", "type": "page", "title": "Figs", "content": "Fig trees like a warm wall."}
], "glossary": {"猕猴桃": ["kiwi"]}}"#;

struct Fixture {
    moto: MotoServer,
    bucket: String,
    state: AppState,
}

impl Fixture {
    /// A bucket holding [`KB`] and an ingest state over it with staging under `staging/`,
    /// promoting at most `max_staged` bytes.
    async fn start(max_staged: Option<usize>) -> Self {
        let moto = MotoServer::shared();
        let bucket = moto.create_bucket("staged").await;
        moto.put_object(&bucket, KEY, KB).await;
        let source = S3KbSource::from_sdk_config(&moto.sdk_config(), &bucket, KEY);
        let staging = Arc::new(source.staging("staging/"));
        let mut state = state_with(
            Arc::new(source),
            Arc::new(MemoryConversationStore::new()),
            Some(TOKEN_SHA256),
            None,
        );
        if let Some(max) = max_staged {
            let ingest = IngestConfig::from_lookup(|k| match k {
                "INGEST_TOKEN_SHA256" => Some(TOKEN_SHA256.to_owned()),
                "INGEST_MAX_STAGED_BYTES" => Some(max.to_string()),
                _ => None,
            })
            .unwrap();
            let config = Config::from_lookup(|_| None).unwrap();
            let source = S3KbSource::from_sdk_config(&moto.sdk_config(), &bucket, KEY);
            state = AppState::new(
                Arc::new(source),
                Arc::new(MemoryConversationStore::new()),
                &config,
                &ingest,
            );
        }
        Self {
            state: state.with_staging(staging),
            moto,
            bucket,
        }
    }

    /// The live object's bytes and ETag, read straight from S3.
    async fn live(&self) -> (String, String) {
        let (bytes, etag) = self.moto.get_object(&self.bucket, KEY).await;
        (String::from_utf8(bytes).unwrap(), etag)
    }

    /// Every key under `staging/`.
    async fn staged_keys(&self) -> Vec<String> {
        self.moto.keys(&self.bucket, "staging/").await
    }

    /// `POST ?stage=1`, then uploads `body` to the URL it answered, as a client would;
    /// returns the staging key.
    async fn stage(&self, body: &str) -> String {
        let (status, ticket, _) = call(
            &self.state,
            Event::new("POST")
                .without("if-match")
                .body(None)
                .query("stage", "1")
                .build(),
        )
        .await;
        assert_eq!(status, 201, "{ticket}");
        let url = ticket["upload_url"].as_str().unwrap();
        assert!(url.starts_with(&self.moto.endpoint()), "{url}");
        assert!(url.contains("X-Amz-Signature="), "presigned: {url}");
        let mut put = reqwest::Client::new().put(url).body(body.to_owned());
        for (name, value) in ticket["headers"].as_object().unwrap() {
            put = put.header(name, value.as_str().unwrap());
        }
        let res = put.send().await.unwrap();
        assert!(res.status().is_success(), "upload: {}", res.status());
        ticket["staging_key"].as_str().unwrap().to_owned()
    }

    async fn promote(&self, key: &str, etag: &str) -> (u16, Value) {
        let req = Event::new("POST")
            .if_match(etag)
            .body(None)
            .query("promote", key)
            .build();
        let (status, body, _) = call(&self.state, req).await;
        (status, body)
    }
}

#[tokio::test]
async fn a_staged_upload_is_validated_promoted_conditionally_and_cleaned_up() {
    let f = Fixture::start(None).await;
    let (_, etag) = f.live().await;
    let key = f.stage(BIG).await;
    assert!(key.starts_with("staging/"), "{key}");
    assert_eq!(f.staged_keys().await, std::slice::from_ref(&key));
    let (status, report) = f.promote(&key, &etag).await;
    assert_eq!(status, 200, "{report}");
    let (live, new_etag) = f.live().await;
    assert_eq!(live, BIG, "promoted byte for byte");
    assert_eq!(report["etag"], new_etag.as_str());
    assert_eq!(report["added"], serde_json::json!(["kiwi", "fig"]));
    assert_eq!(report["removed"], serde_json::json!(["pfc", "notes"]));
    assert!(f.staged_keys().await.is_empty(), "staged object deleted");
    // The key was used up: promoting it again finds nothing.
    let (status, body) = f.promote(&key, &new_etag).await;
    assert_eq!(status, 400, "{body}");
    assert!(error_of(&body).1.contains("nothing was uploaded"), "{body}");
}

#[tokio::test]
async fn an_invalid_staged_object_is_refused_with_every_problem_and_never_served() {
    let f = Fixture::start(None).await;
    let (before, etag) = f.live().await;
    let key = f.stage(r#"[{"id": "a", "type": "page"}, {"id": "a", "type": "page", "title": "A", "url": "javascript:x"}]"#)
        .await;
    let (status, body) = f.promote(&key, &etag).await;
    assert_eq!(status, 400, "{body}");
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
    assert_eq!(
        f.live().await,
        (before, etag),
        "live knowledge base unchanged"
    );
    assert!(f.staged_keys().await.is_empty(), "refused object deleted");
}

#[tokio::test]
async fn a_stale_etag_conflicts_and_an_oversized_object_names_the_limit() {
    let f = Fixture::start(Some(100)).await;
    let (before, etag) = f.live().await;
    let key = f.stage(BIG).await;
    let (status, body) = f.promote(&key, &etag).await;
    assert_eq!(status, 413, "{body}");
    let message = error_of(&body).1;
    assert!(
        message.contains("100 bytes") && message.contains("INGEST_MAX_STAGED_BYTES"),
        "{message}"
    );
    assert!(f.staged_keys().await.is_empty());

    // Declared up front, the size is refused before any URL is handed out.
    let req = Event::new("POST")
        .without("if-match")
        .body(None)
        .queries(&[("stage", "1"), ("bytes", "101")])
        .build();
    let (status, body, _) = call(&f.state, req).await;
    assert_eq!(status, 413, "{body}");
    assert!(f.staged_keys().await.is_empty());

    let small = r#"[{"id": "s", "type": "page", "title": "S"}]"#;
    let key = f.stage(small).await;
    let (status, body) = f.promote(&key, "0123456789abcdef").await;
    assert_eq!(status, 409, "{body}");
    assert!(f.staged_keys().await.is_empty());
    assert_eq!(f.live().await, (before, etag));
}

#[tokio::test]
async fn only_handed_out_keys_are_promoted_and_every_call_needs_the_token() {
    let f = Fixture::start(None).await;
    let (before, etag) = f.live().await;
    for key in [
        "knowledge_base.json",
        "staging/../knowledge_base.json",
        "other/x.json",
    ] {
        let (status, body) = f.promote(key, &etag).await;
        assert_eq!(status, 400, "{key}: {body}");
        assert!(error_of(&body).1.contains("not a staging key"), "{body}");
    }
    let anonymous = Event::new("POST")
        .without("authorization")
        .body(None)
        .query("stage", "1")
        .build();
    assert_eq!(call(&f.state, anonymous).await.0, 401);
    let bare = Event::new("POST").body(None).build();
    let (status, body, _) = call(&f.state, bare).await;
    assert_eq!(status, 400, "{body}");
    assert_eq!(f.live().await, (before, etag));
}
