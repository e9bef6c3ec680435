//! Authenticated knowledge-base updates: what the `ingest` function does, without HTTP.
//!
//! [`IngestService`] reads the stored knowledge base, replaces it (`PUT`) or patches it
//! (`PATCH`), and audits every write. Writes are all-or-nothing and optimistic:
//! - the whole resulting knowledge base is validated before anything is written, and every
//!   problem is reported;
//! - a write names the version it is based on ([`Precondition`], from `If-Match`), and is
//!   stored with a conditional put on exactly that ETag, so of two writers that read the
//!   same version one wins and the other gets [`Error::Conflict`] (409) and must re-read,
//!   re-apply and retry. Nothing is ever lost silently.
//!
//! Knowledge bases too large for one request go through a [`StagingArea`]: [`IngestService::stage`]
//! hands out a presigned upload URL, [`IngestService::promote`] validates the uploaded
//! object and writes it like a `PUT` (see `staging`).
//!
//! The service reads the source on every request rather than caching it: ingest is rare,
//! must report the version actually stored (a cached ETag would make every write based on
//! it conflict), and must keep working when the stored object is corrupt, since a `PUT` is
//! how it gets repaired. Functions that serve the knowledge base hold a
//! [`KbHandle`](crate::search::KbHandle) instead.

mod auth;
mod config;
mod patch;
mod staging;
mod staging_s3;

pub use auth::{authorize, Caller, TokenHash};
pub use config::{
    IngestConfig, DEFAULT_INDEX_MEMORY_MB, DEFAULT_MAX_BYTES, DEFAULT_MAX_STAGED_BYTES,
    DEFAULT_STAGING_PREFIX, MAX_MAX_BYTES, MAX_MAX_STAGED_BYTES, RUNTIME_MEMORY_MB,
};
pub use patch::{Patch, Patched};
pub use staging::{MemoryStagingArea, PresignedPut, StagedObject, StagingArea};
pub use staging_s3::S3StagingArea;

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::{Duration, Instant};

use serde::Serialize;
use serde_json::Value;

use crate::error::{Error, Problem, Problems, Result};
use crate::heap;
use crate::kb::{
    fingerprint, rest_fingerprint, summaries, DocSummary, KbDiff, KbObject, KbSource,
    KbSourceError, KnowledgeBase, WriteCondition, Written,
};
use crate::search::SearchIndex;
use crate::store::{AuditRecord, ConversationStore};

/// Which stored version a write is based on, from the request's condition headers.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Precondition {
    /// `If-Match: <etag>[, <etag>...]`: only if the stored version is one of these.
    IfMatch(Vec<String>),
    /// `If-Match: *`: replace whatever version is stored (PUT only). Still atomic: the
    /// version read is the one replaced, or the write conflicts.
    Any,
    /// `If-None-Match: *`: only if nothing is stored yet (the first upload, PUT only).
    IfAbsent,
}

impl Precondition {
    /// Reads `If-Match` / `If-None-Match`; a write with neither is refused (428) so that no
    /// client can overwrite a version it never saw by leaving the header out.
    ///
    /// ETags may be quoted or bare; a list is split on commas.
    pub fn from_headers(if_match: Option<&str>, if_none_match: Option<&str>) -> Result<Self> {
        let if_match = if_match.map(str::trim).filter(|v| !v.is_empty());
        let if_none_match = if_none_match.map(str::trim).filter(|v| !v.is_empty());
        match (if_match, if_none_match) {
            (Some(_), Some(_)) => Err(Error::InvalidInput(
                "send either If-Match or If-None-Match, not both".into(),
            )),
            (None, Some("*")) => Ok(Self::IfAbsent),
            (None, Some(_)) => Err(Error::InvalidInput(
                "If-None-Match on a write only supports * (create the first version)".into(),
            )),
            (Some("*"), None) => Ok(Self::Any),
            (Some(list), None) => {
                let etags: Vec<String> = list
                    .split(',')
                    .map(|e| crate::kb::unquote_etag(e).to_owned())
                    .filter(|e| !e.is_empty())
                    .collect();
                if etags.is_empty() {
                    return Err(Error::InvalidInput("If-Match holds no etag".into()));
                }
                Ok(Self::IfMatch(etags))
            }
            (None, None) => Err(Error::PreconditionRequired(
                "send If-Match with the etag from GET (If-Match: * replaces whatever is \
                 stored; If-None-Match: * creates the first version)"
                    .into(),
            )),
        }
    }

    /// The write condition that makes this precondition atomic against `current`, or the
    /// conflict that makes writing pointless.
    fn against(&self, current: Option<&KbObject>) -> Result<WriteCondition> {
        match (self, current) {
            (Self::IfAbsent, None) => Ok(WriteCondition::IfAbsent),
            (Self::IfAbsent, Some(o)) => Err(Error::Conflict(format!(
                "a knowledge base is already stored (etag {}); GET it and send If-Match",
                o.etag
            ))),
            (Self::Any, Some(o)) => Ok(WriteCondition::IfMatch(o.etag.clone())),
            (Self::IfMatch(etags), Some(o)) if etags.contains(&o.etag) => {
                Ok(WriteCondition::IfMatch(o.etag.clone()))
            }
            (Self::IfMatch(etags), Some(o)) => Err(Error::Conflict(format!(
                "the knowledge base changed: it is at etag {} now, not {}; GET it again, \
                 re-apply your change and retry",
                o.etag,
                etags.join(", ")
            ))),
            (Self::IfMatch(_) | Self::Any, None) => Err(Error::Conflict(
                "no knowledge base is stored yet; create it with PUT and If-None-Match: *".into(),
            )),
        }
    }
}

/// The stored knowledge base, as `GET` reports it.
#[derive(Debug, Clone, Serialize)]
pub struct KbStatus {
    /// Where it is stored.
    pub location: String,
    /// The stored version's ETag: send it as `If-Match` to change this version.
    pub etag: String,
    /// Same as `etag`: the version string search and chat report.
    pub version: String,
    /// Size of the stored JSON in bytes.
    pub bytes: usize,
    /// [`fingerprint`] of the whole stored JSON (none when it is not JSON): equal for two
    /// files that differ only in whitespace or key order, so a client can tell that an
    /// upload would change nothing.
    pub content_hash: Option<String>,
    /// [`rest_fingerprint`] of the stored JSON: everything but the documents (the glossary),
    /// so a client can tell whether a change to the documents alone would make its file.
    pub rest_hash: Option<String>,
    /// Whether the stored JSON is a valid knowledge base (it may not be if it was written
    /// around ingest; search and chat then keep serving the last good version).
    pub valid: bool,
    /// Number of documents.
    pub documents: usize,
    /// Number of documents per type.
    pub types: BTreeMap<String, usize>,
    /// Number of glossary entries.
    pub glossary_entries: usize,
    /// Every validation problem of the stored JSON, when it is not valid.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub problems: Vec<Problem>,
    /// Each document's id, type and fingerprint, for diffing (see [`crate::kb::KbDiff`]).
    pub summaries: Vec<DocSummary>,
}

/// What a successful write did.
#[derive(Debug, Clone, Serialize)]
pub struct WriteReport {
    /// The new version's ETag.
    pub etag: String,
    /// The version that was replaced (none for the first upload).
    pub previous_etag: Option<String>,
    /// Number of documents now stored.
    pub documents: usize,
    /// Ids added, changed and removed.
    #[serde(flatten)]
    pub diff: KbDiff,
    /// Whether the audit record was written (the change stands either way; see the log).
    pub audited: bool,
}

/// How long a presigned staging URL stays valid: long enough to upload the default limit
/// (256 MiB) at 3 Mbit/s, short enough that a leaked URL is soon useless.
pub const STAGE_EXPIRES_IN: Duration = Duration::from_secs(15 * 60);

/// What `POST ?stage=1` hands out: where and how to upload, and the key to promote.
#[derive(Debug, Clone, Serialize)]
pub struct StagedUpload {
    /// The presigned URL to `PUT` the knowledge-base file to.
    pub upload_url: String,
    /// The method to use (`PUT`).
    pub method: &'static str,
    /// Headers the upload must carry (they are signed).
    pub headers: std::collections::BTreeMap<String, String>,
    /// The staging key, to name in `POST ?promote=<key>`.
    pub staging_key: String,
    /// Seconds the URL stays valid.
    pub expires_in: u64,
    /// Largest staged knowledge base that will be promoted, in bytes.
    pub max_bytes: usize,
}

/// The ingest operations over one knowledge-base source and an audit store.
pub struct IngestService {
    source: Arc<dyn KbSource>,
    audit: Arc<dyn ConversationStore>,
    token_hash: Option<TokenHash>,
    staging: Option<Arc<dyn StagingArea>>,
    max_staged_bytes: usize,
    /// Heap the serving functions can give the index, in bytes.
    index_memory: usize,
}

impl std::fmt::Debug for IngestService {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("IngestService")
            .field("source", &self.source.location())
            .field("audit", &self.audit.kind())
            .field("token_hash", &self.token_hash)
            .field("staging", &self.staging)
            .field("max_staged_bytes", &self.max_staged_bytes)
            .field("index_memory", &self.index_memory)
            .finish()
    }
}

impl IngestService {
    /// A service writing to `source`, auditing to `audit`, accepting the token whose hash is
    /// `token_hash` (none: every request is refused).
    pub fn new(
        source: Arc<dyn KbSource>,
        audit: Arc<dyn ConversationStore>,
        token_hash: Option<TokenHash>,
    ) -> Self {
        Self {
            source,
            audit,
            token_hash,
            staging: None,
            max_staged_bytes: DEFAULT_MAX_STAGED_BYTES,
            index_memory: DEFAULT_INDEX_MEMORY_MB << 20,
        }
    }

    /// The same service refusing a knowledge base whose index would need more than `mb`
    /// MiB in the serving functions.
    pub fn with_index_memory(mut self, mb: usize) -> Self {
        self.index_memory = mb << 20;
        self
    }

    /// The same service accepting staged uploads in `area`, up to `max_bytes` each
    /// (without an area, [`Self::stage`] and [`Self::promote`] are refused).
    pub fn with_staging(mut self, area: Arc<dyn StagingArea>, max_bytes: usize) -> Self {
        self.staging = Some(area);
        self.max_staged_bytes = max_bytes;
        self
    }

    /// The source written to.
    pub fn source(&self) -> &Arc<dyn KbSource> {
        &self.source
    }

    /// Checks an `Authorization` header (see [`authorize`]).
    pub fn authorize(&self, authorization: Option<&str>) -> Result<Caller> {
        authorize(self.token_hash.as_ref(), authorization)
    }

    /// The stored version, its counts and document summaries (404 when nothing is stored).
    pub async fn status(&self) -> Result<KbStatus> {
        let object = self.download().await?;
        let mut status = KbStatus {
            location: self.source.location(),
            etag: object.etag.clone(),
            version: object.etag.clone(),
            bytes: object.bytes.len(),
            content_hash: None,
            rest_hash: None,
            valid: false,
            documents: 0,
            types: BTreeMap::new(),
            glossary_entries: 0,
            problems: Vec::new(),
            summaries: Vec::new(),
        };
        let value = match serde_json::from_slice::<Value>(&object.bytes) {
            Ok(v) => v,
            Err(e) => {
                status.problems = vec![Problem::new("", format!("not valid JSON: {e}"))];
                return Ok(status);
            }
        };
        status.content_hash = Some(fingerprint(&value));
        status.rest_hash = Some(rest_fingerprint(&value));
        status.summaries = summaries(&value);
        status.documents = status.summaries.len();
        for s in &status.summaries {
            *status.types.entry(s.doc_type.clone()).or_default() += 1;
        }
        match KnowledgeBase::from_value(&value) {
            Ok(kb) => {
                status.valid = true;
                status.glossary_entries = kb.glossary.len();
            }
            Err(Problems(p)) => status.problems = p,
        }
        Ok(status)
    }

    /// The stored bytes and ETag, as they are.
    pub async fn download(&self) -> Result<KbObject> {
        match self.source.get(None).await? {
            crate::kb::Fetched::Object(o) => Ok(o),
            crate::kb::Fetched::NotModified => Err(Error::KbSource(KbSourceError::Other {
                location: self.source.location(),
                message: "answered \"not modified\" to an unconditional read".into(),
                source: None,
            })),
        }
    }

    /// Replaces the whole knowledge base with `body` (seed format or a bare array), stored
    /// byte for byte once it validates.
    pub async fn put(
        &self,
        caller: &Caller,
        request_id: &str,
        body: &[u8],
        precondition: &Precondition,
    ) -> Result<WriteReport> {
        self.replace(
            "ingest_put",
            caller,
            request_id,
            body.to_vec(),
            precondition,
        )
        .await
    }

    /// Hands out a presigned URL for uploading a knowledge base too large for one request;
    /// `declared_bytes`, the size the client means to upload, is refused early when over
    /// the limit (the limit is enforced again on promotion, since the URL cannot cap it).
    pub async fn stage(
        &self,
        request_id: &str,
        declared_bytes: Option<u64>,
    ) -> Result<StagedUpload> {
        let area = self.staging_area()?;
        if let Some(n) = declared_bytes.filter(|&n| n > self.max_staged_bytes as u64) {
            return Err(self.too_large(n));
        }
        let key = staging::new_key(area.prefix());
        let presigned = area.presign_put(&key, STAGE_EXPIRES_IN).await?;
        tracing::info!(request_id, staging_key = %key, "staged upload handed out");
        Ok(StagedUpload {
            upload_url: presigned.url,
            method: "PUT",
            headers: presigned.headers,
            staging_key: key,
            expires_in: STAGE_EXPIRES_IN.as_secs(),
            max_bytes: self.max_staged_bytes,
        })
    }

    /// Validates the staged object at `key` and writes it as the knowledge base, exactly
    /// like [`Self::put`] (same problems, same precondition); the staged object is
    /// deleted afterwards whether or not it was promoted.
    pub async fn promote(
        &self,
        caller: &Caller,
        request_id: &str,
        key: &str,
        precondition: &Precondition,
    ) -> Result<WriteReport> {
        let area = self.staging_area()?;
        if !staging::is_staging_key(area.prefix(), key) {
            return Err(Error::InvalidInput(format!(
                "{key:?} is not a staging key handed out by POST ?stage=1"
            )));
        }
        let result = match area.read(key, self.max_staged_bytes).await {
            Ok(StagedObject::Bytes(bytes)) => {
                self.replace("ingest_staged", caller, request_id, bytes, precondition)
                    .await
            }
            Ok(StagedObject::TooLarge { bytes }) => Err(self.too_large(bytes)),
            Err(KbSourceError::NotFound { .. }) => Err(Error::InvalidInput(format!(
                "nothing was uploaded to {key} (or it expired or was already promoted); \
                 ask for a new URL with POST ?stage=1"
            ))),
            Err(e) => Err(e.into()),
        };
        // Promoted or refused, the staged copy is done with. A failed delete loses nothing
        // (the bucket's lifecycle rule expires the prefix), so it is only logged.
        if let Err(e) = area.delete(key).await {
            tracing::warn!(request_id, staging_key = key, error = %e, "staged upload not deleted");
        }
        result
    }

    fn staging_area(&self) -> Result<&Arc<dyn StagingArea>> {
        self.staging.as_ref().ok_or_else(|| {
            Error::InvalidInput(format!(
                "staged uploads need a knowledge base in S3 (this one is {}); send it with PUT",
                self.source.location()
            ))
        })
    }

    fn too_large(&self, bytes: u64) -> Error {
        Error::TooLarge(format!(
            "the staged knowledge base is {bytes} bytes, over the limit of {} bytes \
             (INGEST_MAX_STAGED_BYTES)",
            self.max_staged_bytes
        ))
    }

    /// Validates a whole knowledge base and writes it under `precondition` (PUT and
    /// promotion).
    async fn replace(
        &self,
        action: &'static str,
        caller: &Caller,
        request_id: &str,
        bytes: Vec<u8>,
        precondition: &Precondition,
    ) -> Result<WriteReport> {
        let started = Instant::now();
        let (value, kb) = parse_put_body(&bytes)?;
        let current = self.current().await?;
        let condition = precondition.against(current.as_ref())?;
        let old = current
            .as_ref()
            .and_then(|o| serde_json::from_slice::<Value>(&o.bytes).ok())
            .map_or_else(Vec::new, |v| summaries(&v));
        let diff = KbDiff::between(&old, &summaries(&value));
        self.write(Write {
            action,
            caller,
            request_id,
            bytes,
            condition,
            previous: current.map(|o| o.etag),
            documents: kb.documents.len(),
            diff,
            started,
        })
        .await
    }

    /// Applies a `{"upsert": [...], "delete": [...]}` patch to the stored knowledge base;
    /// only [`Precondition::IfMatch`] is accepted (a patch is relative to a version).
    pub async fn patch(
        &self,
        caller: &Caller,
        request_id: &str,
        body: &[u8],
        precondition: &Precondition,
    ) -> Result<WriteReport> {
        let started = Instant::now();
        if !matches!(precondition, Precondition::IfMatch(_)) {
            return Err(Error::PreconditionRequired(
                "PATCH must name the version it is based on: If-Match: <etag from GET>".into(),
            ));
        }
        let patch = Patch::from_json(body)?;
        let current = self.download().await?;
        let condition = precondition.against(Some(&current))?;
        let old: Value = serde_json::from_slice(&current.bytes).map_err(|e| {
            Error::Conflict(format!(
                "the stored knowledge base is not valid JSON ({e}); replace it with PUT"
            ))
        })?;
        let patched = patch.apply(&old)?;
        let diff = KbDiff::between(&summaries(&old), &summaries(&patched.value));
        let bytes = serde_json::to_vec_pretty(&patched.value).map_err(|e| Error::Json {
            what: "patched knowledge base".into(),
            source: e,
        })?;
        self.write(Write {
            action: "ingest_patch",
            caller,
            request_id,
            bytes,
            condition,
            previous: Some(current.etag),
            documents: patched.kb.documents.len(),
            diff,
            started,
        })
        .await
    }

    /// The stored object, or none when nothing is stored yet.
    async fn current(&self) -> Result<Option<KbObject>> {
        match self.download().await {
            Ok(o) => Ok(Some(o)),
            Err(Error::KbSource(KbSourceError::NotFound { .. })) => Ok(None),
            Err(e) => Err(e),
        }
    }

    async fn write(&self, w: Write<'_>) -> Result<WriteReport> {
        let unnamed = self.check_fits(&w.bytes)?;
        let etag = match self.source.put(w.bytes, w.condition).await? {
            Written::Stored { etag } => etag,
            Written::PreconditionFailed => {
                return Err(Error::Conflict(
                    "the knowledge base changed while this write was in progress; GET it \
                     again, re-apply your change and retry"
                        .into(),
                ))
            }
        };
        tracing::info!(
            action = w.action,
            who = %w.caller.who,
            request_id = w.request_id,
            etag = %etag,
            previous = ?w.previous,
            added = w.diff.added.len(),
            changed = w.diff.changed.len(),
            removed = w.diff.removed.len(),
            "knowledge base written"
        );
        // After the JSON, naming the ETag it was stored as: an index naming a version not
        // (yet) stored is ignored by readers. Without it the functions index the JSON,
        // slower but right, so a failure here does not fail the write either.
        let prebuilt = crate::index::with_version(&unnamed, &etag);
        drop(unnamed);
        match prebuilt {
            Some(index) => {
                if let Err(error) = self.source.put_index(index).await {
                    tracing::error!(request_id = w.request_id, %error, "prebuilt index not written");
                }
            }
            None => tracing::error!(request_id = w.request_id, "prebuilt index not made"),
        }
        // `doc_ids` lists added, then changed, then removed ids; the counts in `outcome`
        // say where each group ends. Past MAX_AUDIT_IDS each group is cut short and
        // `listed=a,c,r` says how many of each are there.
        let (doc_ids, listed) = w.diff.ids_up_to(MAX_AUDIT_IDS);
        let record = AuditRecord {
            action: w.action.to_owned(),
            request_id: w.request_id.to_owned(),
            doc_ids,
            latency_ms: u64::try_from(w.started.elapsed().as_millis()).unwrap_or(u64::MAX),
            outcome: format!(
                "ok etag={etag} added={} changed={} removed={}{}",
                w.diff.added.len(),
                w.diff.changed.len(),
                w.diff.removed.len(),
                match listed {
                    [a, c, r] if a + c + r < w.diff.ids_count() => format!(" listed={a},{c},{r}"),
                    _ => String::new(),
                }
            ),
            client_hash: Some(w.caller.who.clone()),
            ..AuditRecord::default()
        };
        // The knowledge base is already replaced and cannot be un-written, so a failed audit
        // does not fail the request (a retry would only conflict); the log line above and
        // this error keep the trail.
        let audited = match self.audit.append_audit(&record).await {
            Ok(()) => true,
            Err(e) => {
                tracing::error!(request_id = w.request_id, error = %e, ?record, "audit record not written");
                false
            }
        };
        Ok(WriteReport {
            etag,
            previous_etag: w.previous,
            documents: w.documents,
            diff: w.diff,
            audited,
        })
    }
}

impl IngestService {
    /// Refuses (413) a version whose index the serving functions could not hold.
    ///
    /// They read the prebuilt index ingest writes beside the JSON (streamed from S3 through
    /// a file, never held whole), while on a refresh the index of the version before stays
    /// in memory: so what they need is the load's peak and one more index like this one.
    /// Both are measured by loading the index here exactly as they will
    /// ([`heap::measure`]); without the counting allocator (a test process, the CLI) both
    /// together are estimated at [`UNMEASURED_FACTOR`] times the index's bytes. Page text
    /// and postings stay packed until a request reads them ([`crate::kb::Text`]), and are
    /// kept once read, so a long-lived function can come to hold all of them: that is
    /// added too (the text's bytes, 8 bytes a posting).
    ///
    /// Returns the prebuilt index, naming no version yet (its ETag is known once the JSON
    /// is stored: [`crate::index::with_version`]).
    fn check_fits(&self, bytes: &[u8]) -> Result<Vec<u8>> {
        let hash = crate::index::content_hash(bytes);
        let built = crate::kb::parse_kb_bytes(bytes, "the new version")
            .map(|kb| SearchIndex::new(kb, String::new()))?;
        let index = crate::index::encode(&built, hash, "");
        drop(built);
        let (loaded, used) = heap::measure(|| {
            crate::index::decode(&index, crate::index::Expect::Hash(hash), String::new())
        });
        // What a warm function adds as requests read page text and postings, at most:
        // every block inflated and every term's postings decoded (8 bytes each).
        let warm = match &loaded {
            Ok(loaded) => {
                let text: usize = (loaded.kb().documents.iter())
                    .filter_map(|d| d.content.as_ref().map(crate::kb::Text::byte_len))
                    .sum();
                let r = loaded.retriever();
                text + 8 * (r.index().undecoded_postings() + r.fields().undecoded_postings())
            }
            Err(reason) => {
                // A bug (it was just written): the functions will index the JSON instead.
                tracing::error!(%reason, "the new version's prebuilt index does not read back");
                0
            }
        };
        drop(loaded);
        let (peak, held) = used.map_or((index.len() * UNMEASURED_FACTOR, 0), |u| {
            (u.peak, u.retained)
        });
        let need = peak + held + warm;
        if need <= self.index_memory {
            return Ok(index);
        }
        let mib = |b: usize| b.div_ceil(1 << 20);
        Err(Error::TooLarge(format!(
            "this knowledge base's index would need about {} MiB in the functions that serve \
             it ({} MiB of JSON make a {} MiB prebuilt index, which takes {} MiB to load, {} \
             MiB to hold next to the version before, and up to {} MiB more as requests read \
             its page text and postings), over the {} MiB they have for it (their memory, \
             SERVING_MEMORY_MB, less {} MiB for the runtime; or INDEX_MEMORY_MB): remove \
             pages, shorten long ones, or deploy with a larger ServingMemorySize",
            mib(need),
            mib(bytes.len()),
            mib(index.len()),
            mib(peak),
            mib(held),
            mib(warm),
            mib(self.index_memory),
            config::RUNTIME_MEMORY_MB,
        )))
    }
}

/// Most document ids an ingest audit record lists: 1,000 ids of at most 200 characters
/// keep it well inside DynamoDB's 400 KB item (a 10k-page site's first sync names them all).
pub const MAX_AUDIT_IDS: usize = 1000;

/// Heap per byte of prebuilt index assumed when it cannot be measured (load peak and the
/// index held beside the one before, together): the worst measured, random CJK pages,
/// whose 2 MiB index took 10 MiB to load and held 10 MiB.
pub const UNMEASURED_FACTOR: usize = 10;

/// One write's inputs, gathered so `write` reads as one step.
struct Write<'a> {
    action: &'static str,
    caller: &'a Caller,
    request_id: &'a str,
    bytes: Vec<u8>,
    condition: WriteCondition,
    previous: Option<String>,
    documents: usize,
    diff: KbDiff,
    started: Instant,
}

/// Parses and validates a `PUT` body; a JSON syntax error is reported as a problem, like
/// validation.
pub(crate) fn parse_put_body(body: &[u8]) -> Result<(Value, KnowledgeBase)> {
    let value: Value = serde_json::from_slice(body).map_err(|e| {
        Error::InvalidKb(Problems(vec![Problem::new(
            "",
            format!("the body is not valid JSON: {e}"),
        )]))
    })?;
    let kb = KnowledgeBase::from_value(&value).map_err(Error::InvalidKb)?;
    Ok((value, kb))
}

#[cfg(test)]
mod tests;
