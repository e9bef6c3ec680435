//! A knowledge base in a moto bucket, for the tests of how the crate and the functions load
//! it and keep serving the last good version: two small versions of it, and a handle that
//! reads it through a fault proxy.

use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use super::cold_start::run_to_exit;
use super::{FaultProxy, MotoServer};
use crate::{KbHandle, S3KbSource};

/// One publication (`pfc`), found by "Partial FC training".
pub const KB_V1: &str = r#"{"documents": [
  {"id": "pfc", "type": "publication", "title": "Partial FC: Training 10 Million Identities",
   "summary": "Face recognition training at scale."}
]}"#;

/// [`KB_V1`] and a page (`kiwi`, found by "kiwi trellis") that nothing in V1 answers.
pub const KB_V2: &str = r#"{"documents": [
  {"id": "pfc", "type": "publication", "title": "Partial FC: Training 10 Million Identities",
   "summary": "Face recognition training at scale."},
  {"id": "kiwi", "type": "page", "title": "Kiwi growing notes", "content": "Kiwifruit vines need a trellis."}
]}"#;

/// Starts the function binary `exe` with `KB_SOURCE` on a key of a new bucket of `moto`,
/// once per case: with nothing there (`None`), or after uploading the case's body. Each
/// start must fail, logging that the knowledge base cannot be loaded from that location
/// and the case's cause.
///
/// # Panics
/// When a start succeeds or its log misses the location or the cause (naming the log).
pub async fn assert_cold_starts_fail_naming_the_object(
    exe: &Path,
    moto: &MotoServer,
    cases: &[(Option<&str>, &str)],
) {
    const KEY: &str = "site/knowledge_base.json";
    let bucket = moto.create_bucket("kb").await;
    let location = format!("s3://{bucket}/{KEY}");
    for &(upload, cause) in cases {
        if let Some(body) = upload {
            moto.put_object(&bucket, KEY, body).await;
        }
        let mut env = moto.process_env();
        env.push(("KB_SOURCE", location.clone()));
        let exited = run_to_exit(exe, &env, Duration::from_secs(30));
        let log = exited.cold_start_failure();
        assert!(
            log.contains(&format!("cannot load the knowledge base from {location}"))
                && log.contains(cause),
            "{log}"
        );
    }
}

/// A knowledge base uploaded to its own bucket, for a handle that reads it through a fault
/// proxy ([`ProxiedKb::start`]): uploads go straight to S3 ([`ProxiedKb::upload`]), reads
/// can be made to fail ([`ProxiedKb::proxy`]).
#[derive(Debug)]
pub struct ProxiedKb {
    /// The moto server holding the bucket.
    moto: MotoServer,
    /// The bucket.
    bucket: String,
    /// The object's key.
    key: String,
    /// The proxy every read of the handle goes through; it forwards until told otherwise.
    pub proxy: FaultProxy,
}

impl ProxiedKb {
    /// Uploads `first` to `key` in a new bucket of `moto` and loads a handle from it
    /// through the proxy. The handle's interval is zero: every request re-checks the object.
    ///
    /// # Panics
    /// When `first` cannot be loaded (a test fixture that must be good).
    pub async fn start(moto: &MotoServer, key: &str, first: &str) -> (Self, KbHandle) {
        let bucket = moto.create_bucket("kb").await;
        moto.put_object(&bucket, key, first).await;
        let proxy = FaultProxy::start(moto).await;
        let source = S3KbSource::from_sdk_config(&proxy.sdk_config(moto), &bucket, key);
        let kb = KbHandle::load(Arc::new(source), Duration::ZERO)
            .await
            .unwrap_or_else(|e| panic!("the first upload does not load: {e}"));
        let site = Self {
            moto: moto.clone(),
            bucket,
            key: key.to_owned(),
            proxy,
        };
        (site, kb)
    }

    /// Replaces the object directly, as a console upload would.
    pub async fn upload(&self, body: &str) {
        self.moto.put_object(&self.bucket, &self.key, body).await;
    }
}
