//! The S3 knowledge-base source and the refreshing handle against a moto server.
//!
//! The tests share the test binary's server, each with its own bucket; a missing moto fails
//! them. Run: `infra/venv.sh && cargo test -p shared --all-features --test it kb_s3`.
#![allow(clippy::unwrap_used)] // test helpers may panic on broken fixtures

use std::sync::Arc;
use std::time::Duration;

use shared::kb::{Fetched, KbSourceError, WriteCondition, Written};
use shared::search::Refresh;
use shared::testing::kb_s3::{KB_V1, KB_V2};
use shared::testing::MotoServer;
use shared::{KbHandle, KbSource, S3KbSource};

const KEY: &str = "kb/knowledge_base.json";

struct Fixture {
    moto: MotoServer,
    bucket: String,
    source: Arc<S3KbSource>,
}

impl Fixture {
    /// On the test binary's shared server.
    async fn start() -> Self {
        Self::on(MotoServer::shared()).await
    }

    /// On `moto`: a test that stops its server starts one of its own.
    async fn on(moto: MotoServer) -> Self {
        let bucket = moto.create_bucket("kb").await;
        // Built the way `main` builds it: from an SDK config that names an endpoint, which
        // must switch on path-style addressing by itself.
        let source = Arc::new(S3KbSource::from_sdk_config(
            &moto.sdk_config(),
            &bucket,
            KEY,
        ));
        Self {
            moto,
            bucket,
            source,
        }
    }

    /// Writes the object directly, around every check (as a console upload would).
    async fn upload(&self, body: &str) {
        self.moto.put_object(&self.bucket, KEY, body).await;
    }

    async fn handle(&self) -> KbHandle {
        KbHandle::load(self.source.clone(), Duration::ZERO)
            .await
            .unwrap()
    }
}

fn hit_ids(handle_index: &shared::SearchIndex, query: &str) -> Vec<String> {
    handle_index
        .search(query, 5, 0.0)
        .hits
        .into_iter()
        .map(|h| h.id)
        .collect()
}

#[tokio::test]
async fn s3_reads_and_writes_are_conditional_on_the_etag() {
    let f = Fixture::start().await;
    let s = &f.source;
    assert_eq!(s.location(), format!("s3://{}/{KEY}", f.bucket));
    assert!(matches!(
        s.get(None).await,
        Err(KbSourceError::NotFound { .. })
    ));
    assert_eq!(
        s.put(KB_V1.into(), WriteCondition::IfMatch("nope".into()))
            .await
            .unwrap(),
        Written::PreconditionFailed,
        "If-Match on a missing key"
    );
    let Written::Stored { etag: v1 } = s.put(KB_V1.into(), WriteCondition::IfAbsent).await.unwrap()
    else {
        panic!("the first version must be stored");
    };
    assert!(!v1.contains('"'), "ETags are unquoted: {v1}");
    assert_eq!(
        s.put(KB_V2.into(), WriteCondition::IfAbsent).await.unwrap(),
        Written::PreconditionFailed
    );
    assert_eq!(s.get(Some(&v1)).await.unwrap(), Fetched::NotModified);
    let Fetched::Object(o) = s.get(None).await.unwrap() else {
        panic!("unconditional reads return the object");
    };
    assert_eq!(
        (o.bytes.as_slice(), o.etag.as_str()),
        (KB_V1.as_bytes(), v1.as_str())
    );
    assert_eq!(
        s.put(KB_V2.into(), WriteCondition::IfMatch("0123".into()))
            .await
            .unwrap(),
        Written::PreconditionFailed
    );
    let Written::Stored { etag: v2 } = s
        .put(KB_V2.into(), WriteCondition::IfMatch(v1.clone()))
        .await
        .unwrap()
    else {
        panic!("a write based on the current version must be stored");
    };
    assert_ne!(v1, v2);
    let Fetched::Object(o) = s.get(Some(&v1)).await.unwrap() else {
        panic!("a changed object is returned");
    };
    assert_eq!((o.bytes.as_slice(), o.etag), (KB_V2.as_bytes(), v2));
}

#[tokio::test]
async fn a_handle_loads_from_s3_and_picks_up_a_change_without_restart() {
    let f = Fixture::start().await;
    f.upload(KB_V1).await;
    let handle = f.handle().await;
    let index = handle.current().await;
    assert_eq!(index.kb().documents.len(), 1);
    assert!(hit_ids(&index, "kiwi trellis").is_empty());
    f.upload(KB_V2).await;
    let index = handle.current().await;
    assert_eq!(hit_ids(&index, "kiwi trellis"), ["kiwi"]);
    assert_eq!(handle.refresh_now().await.unwrap(), Refresh::Unchanged);
}

#[tokio::test]
async fn a_corrupt_or_invalid_upload_never_replaces_the_good_index() {
    let f = Fixture::start().await;
    f.upload(KB_V1).await;
    let handle = f.handle().await;
    let good = handle.snapshot().version().to_owned();
    for bad in [
        "{\"documents\": [",
        r#"{"documents": [{"id": "x", "type": "page"}]}"#,
    ] {
        f.upload(bad).await;
        let index = handle.current().await;
        assert_eq!(index.version(), good, "{bad}");
        assert_eq!(
            hit_ids(&index, "partial fc"),
            ["pfc"],
            "search answers from the old index"
        );
    }
    f.upload(KB_V2).await;
    assert_eq!(hit_ids(&*handle.current().await, "kiwi"), ["kiwi"]);
}

#[tokio::test]
async fn an_unreachable_store_keeps_the_last_good_index() {
    let moto = MotoServer::start();
    let f = Fixture::on(moto).await;
    f.upload(KB_V1).await;
    let handle = f.handle().await;
    let good = handle.snapshot().version().to_owned();
    let Fixture { moto, .. } = f;
    drop(moto);
    assert_eq!(handle.current().await.version(), good);
    let err = handle.refresh_now().await.unwrap_err().to_string();
    assert!(err.contains("unavailable"), "{err}");
}

#[tokio::test]
async fn a_cold_start_without_a_good_object_fails_naming_location_and_cause() {
    let f = Fixture::start().await;
    let location = format!("s3://{}/{KEY}", f.bucket);
    let missing = KbHandle::load(f.source.clone(), Duration::ZERO)
        .await
        .unwrap_err()
        .to_string();
    assert!(
        missing.contains(&location) && missing.contains("no knowledge base"),
        "{missing}"
    );
    f.upload("{oops").await;
    let corrupt = KbHandle::load(f.source.clone(), Duration::ZERO)
        .await
        .unwrap_err()
        .to_string();
    assert!(
        corrupt.contains(&location) && corrupt.contains("invalid JSON"),
        "{corrupt}"
    );
}
