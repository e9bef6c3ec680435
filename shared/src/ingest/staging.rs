//! Staged uploads: where a knowledge base too large for one request is put before ingest
//! validates and promotes it.
//!
//! A function URL carries at most 6 MB per request, so a bigger knowledge base cannot be
//! sent to ingest. Instead ingest hands out a short-lived presigned `PUT` URL for a fresh
//! key under a staging prefix ([`StagingArea::presign_put`]); the client uploads the file
//! there, straight to the store, and asks ingest to promote it. Ingest then reads the
//! staged object ([`StagingArea::read`], bounded), validates it exactly like a `PUT` body,
//! writes it to the live key with the same conditional write, and deletes the staged
//! object whatever happened. Search and chat only ever read the live key, so nothing
//! unvalidated is served.

use std::collections::{BTreeMap, HashMap};
use std::sync::{Mutex, MutexGuard, PoisonError};
use std::time::Duration;

use async_trait::async_trait;

use crate::kb::KbSourceError;

/// A presigned upload: the request a client makes to put bytes at a staging key.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PresignedPut {
    /// The URL to `PUT` the bytes to; it carries its own signature and expiry.
    pub url: String,
    /// Headers the client must send with the upload (they are part of the signature).
    pub headers: BTreeMap<String, String>,
}

/// What reading a staged object found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum StagedObject {
    /// The object's bytes (no more than the limit asked for).
    Bytes(Vec<u8>),
    /// The object is larger than the limit; its body was not read.
    TooLarge {
        /// Its size in bytes.
        bytes: u64,
    },
}

/// A place for uploads awaiting validation, beside the live knowledge base.
#[async_trait]
pub trait StagingArea: Send + Sync + std::fmt::Debug {
    /// The key prefix every staged object has (ends with `/`).
    fn prefix(&self) -> &str;

    /// Where the object at `key` lives, for logs and error messages.
    fn location(&self, key: &str) -> String;

    /// A URL that lets whoever holds it `PUT` one object at `key` for `expires_in`.
    async fn presign_put(
        &self,
        key: &str,
        expires_in: Duration,
    ) -> Result<PresignedPut, KbSourceError>;

    /// Reads the object at `key`, or only its size when it is larger than `max_bytes`
    /// ([`KbSourceError::NotFound`] when nothing was uploaded there).
    async fn read(&self, key: &str, max_bytes: usize) -> Result<StagedObject, KbSourceError>;

    /// Deletes the object at `key`; deleting a missing object succeeds.
    async fn delete(&self, key: &str) -> Result<(), KbSourceError>;
}

/// A [`StagingArea`] in process memory, for tests: uploads are made with
/// [`MemoryStagingArea::upload`] instead of the (unusable) `memory://` URL it hands out.
#[derive(Debug)]
pub struct MemoryStagingArea {
    prefix: String,
    // A std mutex: every section is one map operation with no `.await` inside.
    objects: Mutex<HashMap<String, Vec<u8>>>,
}

impl MemoryStagingArea {
    /// An empty area whose keys start with `prefix`.
    pub fn new(prefix: impl Into<String>) -> Self {
        Self {
            prefix: prefix.into(),
            objects: Mutex::new(HashMap::new()),
        }
    }

    /// Stores `bytes` at `key`, as the client's upload to the presigned URL would.
    pub fn upload(&self, key: &str, bytes: impl Into<Vec<u8>>) {
        self.lock().insert(key.to_owned(), bytes.into());
    }

    /// The keys currently staged, sorted.
    pub fn keys(&self) -> Vec<String> {
        let mut keys: Vec<String> = self.lock().keys().cloned().collect();
        keys.sort();
        keys
    }

    fn lock(&self) -> MutexGuard<'_, HashMap<String, Vec<u8>>> {
        // Each section is a single insert, remove or read: a poisoned map is still whole.
        self.objects.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

#[async_trait]
impl StagingArea for MemoryStagingArea {
    fn prefix(&self) -> &str {
        &self.prefix
    }

    fn location(&self, key: &str) -> String {
        format!("memory://{key}")
    }

    async fn presign_put(
        &self,
        key: &str,
        _expires_in: Duration,
    ) -> Result<PresignedPut, KbSourceError> {
        Ok(PresignedPut {
            url: self.location(key),
            headers: BTreeMap::new(),
        })
    }

    async fn read(&self, key: &str, max_bytes: usize) -> Result<StagedObject, KbSourceError> {
        match self.lock().get(key) {
            None => Err(KbSourceError::NotFound {
                location: self.location(key),
            }),
            Some(b) if b.len() > max_bytes => Ok(StagedObject::TooLarge {
                bytes: b.len() as u64,
            }),
            Some(b) => Ok(StagedObject::Bytes(b.clone())),
        }
    }

    async fn delete(&self, key: &str) -> Result<(), KbSourceError> {
        self.lock().remove(key);
        Ok(())
    }
}

/// Length of the random part of a staging key, in hex digits (128 bits).
const KEY_HEX_DIGITS: usize = 32;

/// A fresh staging key: the prefix, 32 hex digits, `.json`.
///
/// The digits are 128 bits from the operating system's random source: unique per call, and
/// not guessable (though guessing one would gain nothing: uploading needs the presigned URL
/// and promoting needs the ingest token).
pub(crate) fn new_key(prefix: &str) -> String {
    let random: [u8; KEY_HEX_DIGITS / 2] = crate::secret::random_bytes();
    format!("{prefix}{}.json", hex::encode(random))
}

/// Whether `key` is one [`new_key`] could have made under `prefix`: promotion only ever
/// reads such keys, never the live object or anything else in the bucket.
pub(crate) fn is_staging_key(prefix: &str, key: &str) -> bool {
    key.strip_prefix(prefix)
        .and_then(|rest| rest.strip_suffix(".json"))
        .is_some_and(|hex| {
            hex.len() == KEY_HEX_DIGITS
                && hex
                    .bytes()
                    .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn new_keys_are_distinct_and_recognized_while_other_keys_are_not() {
        let a = new_key("staging/");
        let b = new_key("staging/");
        assert_ne!(a, b);
        assert!(a.starts_with("staging/") && a.ends_with(".json"), "{a}");
        assert!(is_staging_key("staging/", &a));
        let hex = &a["staging/".len()..a.len() - ".json".len()];
        for bad in [
            "knowledge_base.json".to_owned(),
            "staging/../knowledge_base.json".to_owned(),
            format!("other/{hex}.json"),
            format!("staging/{hex}"),
            format!("staging/{}.json", hex.to_uppercase()),
            format!("staging/{hex}0.json"),
            format!("staging/x/{hex}.json"),
        ] {
            assert!(!is_staging_key("staging/", &bad), "{bad}");
        }
    }

    #[tokio::test]
    async fn the_memory_area_reads_within_the_limit_and_deletes() {
        let area = MemoryStagingArea::new("staging/");
        area.upload("staging/a.json", "12345");
        assert_eq!(
            area.read("staging/a.json", 5).await.unwrap(),
            StagedObject::Bytes(b"12345".to_vec())
        );
        assert_eq!(
            area.read("staging/a.json", 4).await.unwrap(),
            StagedObject::TooLarge { bytes: 5 }
        );
        area.delete("staging/a.json").await.unwrap();
        assert!(matches!(
            area.read("staging/a.json", 5).await,
            Err(KbSourceError::NotFound { .. })
        ));
        area.delete("staging/a.json").await.unwrap();
        assert!(area.keys().is_empty());
    }
}
