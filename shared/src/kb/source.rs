//! Where the knowledge-base JSON is stored: the [`KbSource`] trait and its errors.
//!
//! A source holds one object (the KB file's bytes) identified by an ETag that changes
//! whenever the bytes do. Reads can be conditional (`If-None-Match`), so a warm function
//! re-checks for nothing but a round trip; writes can be conditional (`If-Match` /
//! `If-None-Match: *`), so two concurrent ingests never overwrite each other's work.
//!
//! ETags are opaque strings without the surrounding quotes HTTP puts on them: adapters strip
//! them on the way in and add them on the way out, so an ETag from one call can be compared
//! with `==` to an ETag from another.

use std::sync::Arc;

use async_trait::async_trait;

use super::{FileKbSource, S3KbSource};
use crate::config::AwsClients;
use crate::config::KbLocation;

/// Boxed source error kept inside [`KbSourceError`], so no SDK type appears in the API.
pub use crate::error::BoxError;

/// A prebuilt index being read ([`KbSource::open_index`]): its bytes as a stream and the
/// object's real length, which the reader holds the index's own header to (a header may
/// claim anything; the object's size is what is there).
pub struct IndexStream {
    /// The object's bytes, from the start.
    pub reader: Box<dyn std::io::Read + Send>,
    /// The object's length in bytes.
    pub len: u64,
}

impl std::fmt::Debug for IndexStream {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("IndexStream")
            .field("len", &self.len)
            .finish_non_exhaustive()
    }
}

/// The stored knowledge base: its bytes and the ETag that names this version.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KbObject {
    /// The object's bytes (knowledge-base JSON, unparsed).
    pub bytes: Vec<u8>,
    /// The version's ETag, unquoted.
    pub etag: String,
}

/// The answer to a (conditional) read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Fetched {
    /// The object still has the ETag the caller holds.
    NotModified,
    /// The object, because it changed or because no ETag was given.
    Object(KbObject),
}

/// The answer to [`KbSource::head`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Head {
    /// The object still has the ETag the caller holds.
    NotModified,
    /// The object's current ETag (its bytes not read).
    Current(String),
    /// The whole object: a source with no cheaper check read it anyway, so the caller
    /// need not read it again.
    Object(KbObject),
}

/// The condition a write is made under.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum WriteCondition {
    /// Only if the current object has this ETag (compare-and-swap).
    IfMatch(String),
    /// Only if there is no object yet (first upload).
    IfAbsent,
}

/// The answer to a conditional write.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Written {
    /// The bytes are stored; the new version's ETag.
    Stored {
        /// ETag of the version just written, unquoted.
        etag: String,
    },
    /// The condition did not hold (someone else wrote first); nothing was written.
    PreconditionFailed,
}

pub use crate::error::KbSourceError;

pub use super::hash::{content_version, version_of_hash};

/// The index object's name for a knowledge base's (an S3 key or a file path): a trailing
/// `.json` replaced by `.index`, else `.index` appended (`site/kb.json` → `site/kb.index`).
pub fn index_name(kb_name: &str) -> String {
    let stem = kb_name.strip_suffix(".json").unwrap_or(kb_name);
    format!("{stem}.index")
}

/// Where one knowledge-base object lives (S3, a local file, memory).
///
/// Shared as `Arc<dyn KbSource>` by the [`KbHandle`](crate::search::KbHandle) that serves reads and
/// the ingest service that writes.
#[async_trait]
pub trait KbSource: Send + Sync + std::fmt::Debug {
    /// Where the object lives, for logs and error messages (`s3://bucket/key`, a path).
    fn location(&self) -> String;

    /// Reads the object; with `if_none_match`, answers [`Fetched::NotModified`] when the
    /// object still has that ETag.
    async fn get(&self, if_none_match: Option<&str>) -> Result<Fetched, KbSourceError>;

    /// The object's current ETag without its bytes (S3: `HeadObject`; a file: its hash,
    /// computed block by block); with `if_none_match`, [`Head::NotModified`] when it still
    /// has that ETag. Lets a function holding a prebuilt index of a version check that the
    /// version is current without downloading it. The default reads the object.
    async fn head(&self, if_none_match: Option<&str>) -> Result<Head, KbSourceError> {
        Ok(match self.get(if_none_match).await? {
            Fetched::NotModified => Head::NotModified,
            Fetched::Object(o) => Head::Object(o),
        })
    }

    /// Writes the object if `condition` holds; atomic: readers see the old bytes or the new
    /// ones, never a mix.
    async fn put(
        &self,
        bytes: Vec<u8>,
        condition: WriteCondition,
    ) -> Result<Written, KbSourceError>;

    /// The prebuilt index stored beside the knowledge base (named by [`index_name`]) as a
    /// stream, read as it is decoded, so it is never held whole next to what is decoded
    /// from it; `None` when there is none. A source that keeps no index answers `None`.
    async fn open_index(&self) -> Result<Option<IndexStream>, KbSourceError> {
        Ok(None)
    }

    /// Stores the prebuilt index beside the knowledge base, unconditionally: the index
    /// names the version it was built from, and readers ignore one that does not match. A
    /// source that keeps no index does nothing.
    async fn put_index(&self, bytes: Vec<u8>) -> Result<(), KbSourceError> {
        let _ = bytes;
        Ok(())
    }
}

/// Strips the quotes (and a weak `W/` marker) HTTP puts around an ETag.
pub(crate) fn unquote_etag(etag: &str) -> &str {
    let e = etag.trim();
    let e = e.strip_prefix("W/").unwrap_or(e);
    e.strip_prefix('"')
        .and_then(|e| e.strip_suffix('"'))
        .unwrap_or(e)
}

/// The source for a configured location: a [`FileKbSource`], or an [`S3KbSource`] whose
/// client is configured by `aws`.
pub async fn open_source(location: &KbLocation, aws: &AwsClients) -> Arc<dyn KbSource> {
    match location {
        KbLocation::File(path) => Arc::new(FileKbSource::new(path)),
        KbLocation::S3 { bucket, key } => Arc::new(S3KbSource::from_sdk_config(
            aws.sdk_config().await,
            bucket,
            key,
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn etags_lose_their_quotes_and_weak_marker() {
        assert_eq!(unquote_etag("\"abc\""), "abc");
        assert_eq!(unquote_etag(" W/\"abc\" "), "abc");
        assert_eq!(unquote_etag("abc"), "abc");
        assert_eq!(unquote_etag("\"abc"), "\"abc");
    }
}
