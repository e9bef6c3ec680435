//! [`KbHandle`]: the indexed knowledge base a warm function serves, kept fresh by ETag.
//!
//! Loaded once per cold start, before the runtime loop. Afterwards, at most every
//! `KB_REFRESH_SECS`, one request does a conditional GET with the ETag it last saw (waiting
//! at most [`REFRESH_BUDGET`] for it); only when the object changed *and* the new bytes
//! parse and validate is a new index built and swapped in. The build runs on a blocking
//! thread, off the request: the request waits for it at most [`INDEX_WAIT`] (a small site
//! indexes in milliseconds, so it is served the new version at once), and a bigger one is
//! served from the last index while the build finishes in the background. Every failure
//! (network, 5xx, corrupt JSON, invalid knowledge base) keeps the last good index and is
//! logged, so a bad upload can never take search or chat down.

use std::sync::{Arc, PoisonError, RwLock};
use std::time::Duration;

use tokio::sync::Mutex;
use tokio::time::Instant;

use super::SearchIndex;
use crate::config::AwsClients;
use crate::config::Config;
use crate::error::{Error, Result};
use crate::index::IndexReader;
use crate::kb::{parse_kb_bytes, Fetched, Head, KbObject, KbSource, MemoryKbSource};

/// The longest a request waits on a refresh it triggered before serving the current index
/// anyway: a conditional GET answers in tens of milliseconds and a changed knowledge base of
/// a few megabytes downloads in well under a second, while the SDK's own limits would let a
/// black-holed S3 hold the request for 15 s. A refresh cut short is tried again after the
/// next interval.
pub const REFRESH_BUDGET: Duration = Duration::from_secs(3);

/// The longest a request waits for the index of a new version before it is served from
/// the last one: indexing is CPU-bound and cannot be cut short (5 MB of CJK pages took 4 s),
/// so the build goes on in the background and is swapped in when done.
pub(crate) const INDEX_WAIT: Duration = Duration::from_millis(200);

/// What a refresh found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Refresh {
    /// The source holds the version being served, or a version already rejected.
    Unchanged,
    /// A new version was loaded and is now served.
    Updated {
        /// The new version's ETag.
        version: String,
    },
}

/// The served knowledge base: an `Arc<SearchIndex>` swapped for a newer one when the
/// source changes (see the module docs).
#[derive(Debug)]
pub struct KbHandle {
    source: Arc<dyn KbSource>,
    interval: Duration,
    /// How long a request waits on the refresh it triggered ([`REFRESH_BUDGET`] unless
    /// [`KbHandle::with_refresh_budget`] says otherwise).
    refresh_budget: Duration,
    // A std lock held only to clone or replace the `Arc`, never across an `.await`: readers
    // then never wait on a refresh's network call or indexing, and a std lock is cheaper
    // than tokio's for a pointer copy.
    current: Arc<RwLock<Arc<SearchIndex>>>,
    // tokio's mutex because it *is* held across the conditional GET and, by the build in
    // the background, until the new index is swapped in. Requests only `try_lock` it, so at
    // most one refresh runs and nobody queues behind it.
    refresh: Arc<Mutex<RefreshState>>,
}

#[derive(Debug)]
struct RefreshState {
    /// When the source was last asked (successfully or not): failures also wait a full
    /// interval, so an outage is not hammered by every request.
    checked_at: Instant,
    /// The newest ETag seen, served or rejected. Sent as `If-None-Match`, so a rejected
    /// version is downloaded, parsed and logged once, not on every refresh.
    seen: String,
}

impl KbHandle {
    /// Loads and indexes the knowledge base from `source`; later calls to
    /// [`current`](Self::current) re-check it at most every `interval` (zero: every call).
    ///
    /// Fails, naming the location and the cause, when the object is missing, unreadable or
    /// invalid: a function must not start without a knowledge base.
    pub async fn load(source: Arc<dyn KbSource>, interval: Duration) -> Result<Self> {
        let location = source.location();
        let load_error = |e: Error| Error::KbLoad {
            location: location.clone(),
            source: Box::new(e),
        };
        let index = load_version(source.as_ref(), None)
            .await
            .map_err(load_error)?;
        tracing::info!(
            %location,
            version = %index.version(),
            documents = index.kb().documents.len(),
            "knowledge base loaded"
        );
        let seen = index.version().to_owned();
        Ok(Self {
            source,
            interval,
            refresh_budget: REFRESH_BUDGET,
            current: Arc::new(RwLock::new(Arc::new(index))),
            refresh: Arc::new(Mutex::new(RefreshState {
                checked_at: Instant::now(),
                seen,
            })),
        })
    }

    /// A handle that always serves `index` and never re-checks a source: for tests and
    /// benchmarks that build their index directly.
    pub fn fixed(index: Arc<SearchIndex>) -> Self {
        let seen = index.version().to_owned();
        Self {
            source: Arc::new(MemoryKbSource::new()),
            interval: Duration::MAX,
            refresh_budget: REFRESH_BUDGET,
            current: Arc::new(RwLock::new(index)),
            refresh: Arc::new(Mutex::new(RefreshState {
                checked_at: Instant::now(),
                seen,
            })),
        }
    }

    /// This handle, waiting at most `budget` on a refresh instead of [`REFRESH_BUDGET`]
    /// (tests of an unanswering source use a short one).
    pub fn with_refresh_budget(mut self, budget: Duration) -> Self {
        self.refresh_budget = budget;
        self
    }

    /// Loads from `config.kb_source` (a file, or S3 through `aws`), re-checking every
    /// `config.kb_refresh_secs`.
    pub async fn from_config(config: &Config, aws: &AwsClients) -> Result<Self> {
        let source = crate::kb::open_source(&config.kb_source, aws).await;
        Self::load(source, Duration::from_secs(config.kb_refresh_secs)).await
    }

    /// The index to answer a request with, after re-checking the source if the interval
    /// has passed and no other request is already doing so.
    pub async fn current(&self) -> Arc<SearchIndex> {
        // Whoever holds the lock is refreshing; its result is swapped in for later
        // requests, and this one serves the current index instead of waiting.
        if let Ok(mut state) = self.refresh.clone().try_lock_owned() {
            if state.checked_at.elapsed() >= self.interval {
                state.checked_at = Instant::now();
                let fetched =
                    tokio::time::timeout(self.refresh_budget, self.fetch(&mut state)).await;
                let error = match fetched {
                    Ok(Ok(Some(found))) => {
                        // The lock goes with the build, so no second refresh starts before
                        // this one has swapped its index in.
                        let build = self.build_in_background(found, state);
                        if tokio::time::timeout(INDEX_WAIT, build).await.is_err() {
                            tracing::info!(
                                wait_ms = INDEX_WAIT.as_millis() as u64,
                                "indexing the new knowledge base in the background; \
                                 serving the last version meanwhile"
                            );
                        }
                        None
                    }
                    Ok(Ok(None)) => None,
                    Ok(Err(e)) => Some(e.to_string()),
                    Err(_elapsed) => Some(format!("no answer within {:?}", self.refresh_budget)),
                };
                if let Some(error) = error {
                    self.log_failure(&error);
                }
            }
        }
        self.snapshot()
    }

    fn log_failure(&self, error: &str) {
        tracing::warn!(
            location = %self.source.location(),
            serving = %self.snapshot().version(),
            %error,
            "knowledge-base refresh failed; keeping the last good version"
        );
    }

    /// Loads the version `found` on a blocking thread (from its prebuilt index or its
    /// JSON) and swaps it in, holding the refresh lock `guard` until then. The returned
    /// future ends with the build; dropping it does not stop the build.
    fn build_in_background(
        &self,
        found: Found,
        guard: tokio::sync::OwnedMutexGuard<RefreshState>,
    ) -> tokio::task::JoinHandle<()> {
        let current = self.current.clone();
        let source = self.source.clone();
        let runtime = tokio::runtime::Handle::current();
        tokio::task::spawn_blocking(move || {
            let _refreshing = guard;
            let location = source.location();
            // Indexing is CPU-bound: on this thread, with the reads it needs driven by the
            // runtime, so no request's worker is held.
            match runtime.block_on(load_version(source.as_ref(), Some(found))) {
                Ok(index) => {
                    tracing::info!(
                        %location,
                        version = %index.version(),
                        documents = index.kb().documents.len(),
                        "knowledge base updated"
                    );
                    *current.write().unwrap_or_else(PoisonError::into_inner) = Arc::new(index);
                }
                Err(error) => tracing::warn!(
                    %location,
                    %error,
                    "knowledge-base refresh failed; keeping the last good version"
                ),
            }
        })
    }

    /// The index being served, without re-checking the source.
    pub fn snapshot(&self) -> Arc<SearchIndex> {
        // Poisoning needs a panic while the lock is held, and the sections only copy or
        // assign an `Arc`; the value inside is always whole.
        self.current
            .read()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }

    /// Re-checks the source now, whatever the interval, waiting for a refresh in progress;
    /// errors are returned rather than logged (the served index is kept either way).
    ///
    /// For a function that has just written the knowledge base and wants to serve the new
    /// version at once, and for tests.
    pub async fn refresh_now(&self) -> Result<Refresh> {
        let mut state = self.refresh.lock().await;
        state.checked_at = Instant::now();
        self.check(&mut state).await
    }

    /// The source this handle reads.
    pub fn source(&self) -> &Arc<dyn KbSource> {
        &self.source
    }

    /// How often the source is re-checked.
    pub fn interval(&self) -> Duration {
        self.interval
    }

    /// The source's version, when it is one neither served nor seen before: its ETag, or
    /// the whole object from a source that cannot tell its version without reading it.
    async fn fetch(&self, state: &mut RefreshState) -> Result<Option<Found>> {
        let found = match self.source.head(Some(&state.seen)).await? {
            Head::NotModified => return Ok(None),
            Head::Current(etag) => Found::Version(etag),
            Head::Object(o) => Found::Object(o),
        };
        let etag = found.etag();
        if etag == state.seen {
            return Ok(None);
        }
        // Remembered before loading: a bad version is then reported once, not per interval.
        state.seen = etag.to_owned();
        if etag == self.snapshot().version() {
            return Ok(None);
        }
        Ok(Some(found))
    }

    async fn check(&self, state: &mut RefreshState) -> Result<Refresh> {
        let Some(found) = self.fetch(state).await? else {
            return Ok(Refresh::Unchanged);
        };
        let location = self.source.location();
        let index = load_version(self.source.as_ref(), Some(found)).await?;
        tracing::info!(
            %location,
            version = %index.version(),
            documents = index.kb().documents.len(),
            "knowledge base updated"
        );
        let version = index.version().to_owned();
        *self.current.write().unwrap_or_else(PoisonError::into_inner) = Arc::new(index);
        Ok(Refresh::Updated { version })
    }
}

/// A version of the knowledge base found at the source.
#[derive(Debug)]
enum Found {
    /// Its ETag; the bytes not read yet.
    Version(String),
    /// The whole object.
    Object(KbObject),
}

impl Found {
    fn etag(&self) -> &str {
        match self {
            Found::Version(etag) => etag,
            Found::Object(o) => &o.etag,
        }
    }
}

/// Loads the version `found` (the source's current one when `None`): from the prebuilt
/// index alone when it names that version (the JSON is then neither downloaded nor
/// parsed), else from the JSON, which still takes the index's documents and retriever
/// when the index was built from exactly its bytes ([`index_object`]).
///
/// The index's version is compared with the source's current ETag, read after the index:
/// if they match, the index was built from the version the source holds, whatever order
/// the two objects were written in, and that is the version served.
async fn load_version(source: &dyn KbSource, found: Option<Found>) -> Result<SearchIndex> {
    let location = source.location();
    let mut prebuilt = open_index(source).await;
    let found = match found {
        Some(found) => found,
        None if prebuilt.is_some() => match source.head(None).await? {
            Head::Current(etag) => Found::Version(etag),
            Head::Object(o) => Found::Object(o),
            Head::NotModified => return Err(not_modified()),
        },
        None => Found::Object(read_object(source).await?),
    };
    let object = match found {
        Found::Object(o) => o,
        Found::Version(etag) => {
            if let Some(reader) = prebuilt.take() {
                let built = reader.built_from().clone();
                if built.version == etag {
                    let expect = crate::index::Expect::Version(&etag);
                    match reader.decode(expect, etag.clone()) {
                        Ok(index) => {
                            tracing::info!(%location, version = %etag, "prebuilt index loaded");
                            return Ok(index);
                        }
                        Err(reason) => tracing::warn!(
                            %location,
                            %reason,
                            "prebuilt index not used; reading the JSON instead"
                        ),
                    }
                } else {
                    // Perhaps written beside this JSON by someone who did not know its
                    // ETag (`rag index` and an upload): its hash may still match.
                    tracing::info!(
                        %location,
                        index_version = %built.version,
                        version = %etag,
                        "prebuilt index names another version; reading the JSON"
                    );
                    prebuilt = Some(reader);
                }
            }
            read_object(source).await?
        }
    };
    index_object(object, prebuilt, &location)
}

/// The source's object, read unconditionally.
async fn read_object(source: &dyn KbSource) -> Result<KbObject> {
    match source.get(None).await? {
        Fetched::Object(o) => Ok(o),
        // Only an ETag can produce NotModified, and none was sent.
        Fetched::NotModified => Err(not_modified()),
    }
}

fn not_modified() -> Error {
    Error::InvalidInput("the source answered \"not modified\" to an unconditional read".into())
}

/// The source's prebuilt index, its header read, if there is one this build can read; a
/// failure to read it is logged and costs only the time to read the JSON, so it is never
/// an error.
async fn open_index(source: &dyn KbSource) -> Option<IndexReader<'static>> {
    let stream = match source.open_index().await {
        Ok(stream) => stream?,
        Err(error) => {
            tracing::warn!(%error, "prebuilt index unreadable; reading the JSON instead");
            return None;
        }
    };
    match IndexReader::open(stream.reader, stream.len) {
        Ok(reader) => Some(reader),
        Err(reason) => {
            tracing::warn!(
                location = %source.location(),
                %reason,
                "prebuilt index not used; reading the JSON instead"
            );
            None
        }
    }
}

/// Parses, validates and indexes a stored object; the index's version is its ETag. When
/// `prebuilt` was built from exactly these bytes and is whole, it is served instead and the
/// JSON is not even parsed; otherwise the JSON is indexed, and why is logged. The bytes are
/// dropped once parsed, before the index is built, so the two never share the peak.
pub fn index_object(
    object: KbObject,
    prebuilt: Option<IndexReader<'_>>,
    origin: &str,
) -> Result<SearchIndex> {
    let KbObject { bytes, etag } = object;
    match prebuilt {
        None => tracing::info!(%origin, "no prebuilt index; indexing the JSON"),
        Some(prebuilt) => {
            let hash = crate::index::content_hash(&bytes);
            match prebuilt.decode(crate::index::Expect::Hash(hash), etag.clone()) {
                Ok(index) => {
                    tracing::info!(%origin, version = %etag, "prebuilt index loaded");
                    return Ok(index);
                }
                Err(reason) => tracing::warn!(
                    %origin,
                    %reason,
                    "prebuilt index not used; indexed the JSON instead"
                ),
            }
        }
    }
    let kb = parse_kb_bytes(&bytes, origin)?;
    let len = bytes.len() as u64;
    drop(bytes);
    Ok(SearchIndex::new(kb, etag).read_from_bytes(len))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::kb::MemoryKbSource;

    const KB_V1: &str =
        r#"{"documents": [{"id": "a", "type": "page", "title": "Alpha", "content": "apples"}]}"#;
    const KB_V2: &str = r#"{"documents": [{"id": "a", "type": "page", "title": "Alpha", "content": "apples"},
        {"id": "b", "type": "page", "title": "Beta", "content": "bananas"}]}"#;

    async fn handle(interval: Duration) -> (Arc<MemoryKbSource>, KbHandle) {
        let source = Arc::new(MemoryKbSource::with_bytes(KB_V1));
        let handle = KbHandle::load(source.clone(), interval).await.unwrap();
        (source, handle)
    }

    fn ids(index: Arc<SearchIndex>) -> Vec<String> {
        index.kb().documents.iter().map(|d| d.id.clone()).collect()
    }

    /// The index of `json`, naming version `etag`.
    fn index_of(json: &str, etag: &str) -> Vec<u8> {
        let built = SearchIndex::new(parse_kb_bytes(json.as_bytes(), "t").unwrap(), "");
        crate::index::encode(&built, crate::index::content_hash(json.as_bytes()), etag)
    }

    #[tokio::test]
    async fn a_matching_index_is_served_without_reading_the_json_and_a_stale_one_is_not() {
        let source = Arc::new(MemoryKbSource::with_bytes(KB_V1));
        let v1 = source.object().unwrap().etag;
        source.put_index(index_of(KB_V1, &v1)).await.unwrap();
        let handle = KbHandle::load(source.clone(), Duration::ZERO)
            .await
            .unwrap();
        let served = handle.snapshot();
        assert!(served.is_prebuilt());
        assert_eq!(served.version(), v1);
        assert_eq!(source.get_count(), 0, "the JSON was not read");
        assert_eq!(source.head_count(), 1);
        assert_eq!(served.search("apples", 5, 0.0).hits.len(), 1);
        let json = SearchIndex::new(parse_kb_bytes(KB_V1.as_bytes(), "t").unwrap(), "");
        assert_eq!(served.kb(), json.kb());
        // The JSON changes and the index stays behind: never paired, the JSON is indexed.
        let v2 = source.replace(KB_V2);
        assert!(matches!(
            handle.refresh_now().await.unwrap(),
            Refresh::Updated { .. }
        ));
        let served = handle.snapshot();
        assert!(!served.is_prebuilt());
        assert_eq!(served.version(), v2);
        assert_eq!(ids(served.clone()), ["a", "b"]);
        assert_eq!(served.search("bananas", 5, 0.0).hits.len(), 1);
        assert_eq!(source.get_count(), 1);
    }

    #[tokio::test]
    async fn a_refresh_picks_up_a_new_kb_and_index_pair_from_the_index_alone() {
        let source = Arc::new(MemoryKbSource::with_bytes(KB_V1));
        let handle = KbHandle::load(source.clone(), Duration::ZERO)
            .await
            .unwrap();
        assert!(!handle.snapshot().is_prebuilt(), "no index yet");
        let reads = source.get_count();
        // As ingest writes them: the JSON, then the index naming its ETag.
        let v2 = source.replace(KB_V2);
        source.put_index(index_of(KB_V2, &v2)).await.unwrap();
        assert_eq!(
            handle.refresh_now().await.unwrap(),
            Refresh::Updated {
                version: v2.clone()
            }
        );
        let served = handle.snapshot();
        assert!(served.is_prebuilt());
        assert_eq!(ids(served.clone()), ["a", "b"]);
        assert_eq!(source.get_count(), reads, "the JSON was not read");
        // Unchanged: nothing more is read.
        assert_eq!(handle.refresh_now().await.unwrap(), Refresh::Unchanged);
        assert_eq!(source.get_count(), reads);
    }

    #[tokio::test]
    async fn an_index_of_the_same_bytes_under_another_name_or_a_damaged_one_falls_back() {
        // `rag index` beside a JSON uploaded by hand: no ETag recorded, but the same bytes.
        let source = Arc::new(MemoryKbSource::with_bytes(KB_V2));
        source.put_index(index_of(KB_V2, "")).await.unwrap();
        let handle = KbHandle::load(source.clone(), Duration::ZERO)
            .await
            .unwrap();
        assert!(
            handle.snapshot().is_prebuilt(),
            "matched by the JSON's hash"
        );
        assert_eq!(source.get_count(), 1, "after reading the JSON");
        assert_eq!(ids(handle.snapshot()), ["a", "b"]);
        // Naming the current version but damaged: the JSON is served.
        let etag = source.object().unwrap().etag;
        let mut bad = index_of(KB_V2, &etag);
        let last = bad.len() - 1;
        bad[last] ^= 1;
        source.put_index(bad).await.unwrap();
        let handle = KbHandle::load(source.clone(), Duration::ZERO)
            .await
            .unwrap();
        assert!(!handle.snapshot().is_prebuilt());
        assert_eq!(ids(handle.snapshot()), ["a", "b"]);
        assert_eq!(handle.snapshot().version(), etag);
    }

    #[tokio::test]
    async fn a_file_edited_in_place_is_never_served_with_the_index_of_before() {
        let dir = std::env::temp_dir().join(format!("kb-handle-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("knowledge_base.json");
        std::fs::write(&path, KB_V1).unwrap();
        let source = Arc::new(crate::kb::FileKbSource::new(&path));
        let etag = crate::search::content_version(KB_V1.as_bytes());
        source.put_index(index_of(KB_V1, &etag)).await.unwrap();
        let handle = KbHandle::load(source.clone(), Duration::ZERO)
            .await
            .unwrap();
        assert!(handle.snapshot().is_prebuilt());
        assert_eq!(handle.snapshot().version(), etag);
        // Same length, same second: only the bytes tell.
        let edited = KB_V1.replace("apples", "grapes");
        assert_eq!(edited.len(), KB_V1.len());
        std::fs::write(&path, &edited).unwrap();
        assert!(matches!(
            handle.refresh_now().await.unwrap(),
            Refresh::Updated { .. }
        ));
        let served = handle.snapshot();
        assert!(!served.is_prebuilt());
        assert_eq!(served.search("grapes", 5, 0.0).hits.len(), 1);
        assert!(served.search("apples", 5, 0.0).hits.is_empty());
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[tokio::test]
    async fn a_change_is_served_after_the_interval() {
        let (source, handle) = handle(Duration::ZERO).await;
        assert_eq!(ids(handle.current().await), ["a"]);
        let v2 = source.replace(KB_V2);
        let index = handle.current().await;
        assert_eq!(ids(index.clone()), ["a", "b"]);
        assert_eq!(index.version(), v2);
    }

    #[tokio::test]
    async fn the_source_is_not_asked_again_within_the_interval() {
        let (source, handle) = handle(Duration::from_secs(3600)).await;
        source.replace(KB_V2);
        for _ in 0..3 {
            assert_eq!(ids(handle.current().await), ["a"]);
        }
        assert_eq!(source.get_count(), 1, "only the cold-start load");
        assert_eq!(
            handle.refresh_now().await.unwrap(),
            Refresh::Updated {
                version: crate::search::content_version(KB_V2.as_bytes())
            }
        );
        assert_eq!(ids(handle.current().await), ["a", "b"]);
    }

    /// A source whose conditional reads wait at a gate, to hold a refresh in flight.
    #[derive(Debug)]
    struct GatedSource {
        inner: MemoryKbSource,
        entered: tokio::sync::Notify,
        gate: tokio::sync::Semaphore,
    }

    #[async_trait::async_trait]
    impl KbSource for GatedSource {
        fn location(&self) -> String {
            "gated".into()
        }
        async fn get(
            &self,
            if_none_match: Option<&str>,
        ) -> std::result::Result<Fetched, crate::kb::KbSourceError> {
            if if_none_match.is_some() {
                self.entered.notify_one();
                self.gate.acquire().await.unwrap().forget();
            }
            self.inner.get(if_none_match).await
        }
        async fn put(
            &self,
            bytes: Vec<u8>,
            condition: crate::kb::WriteCondition,
        ) -> std::result::Result<crate::kb::Written, crate::kb::KbSourceError> {
            self.inner.put(bytes, condition).await
        }
    }

    #[tokio::test]
    async fn requests_do_not_wait_for_a_refresh_in_progress() {
        let source = Arc::new(GatedSource {
            inner: MemoryKbSource::new(),
            entered: tokio::sync::Notify::new(),
            gate: tokio::sync::Semaphore::new(0),
        });
        source.inner.replace(KB_V1);
        let handle = Arc::new(
            KbHandle::load(source.clone(), Duration::ZERO)
                .await
                .unwrap(),
        );
        source.inner.replace(KB_V2);
        let refreshing = tokio::spawn({
            let handle = handle.clone();
            async move { handle.current().await }
        });
        source.entered.notified().await;
        // The refresh holds the lock and waits on the store; this request is served at
        // once, from the index already loaded, and starts no second refresh.
        let other = tokio::time::timeout(Duration::from_secs(5), handle.current())
            .await
            .expect("a request waited for someone else's refresh");
        assert_eq!(ids(other), ["a"]);
        assert_eq!(
            source.inner.get_count(),
            1,
            "only the cold-start load finished"
        );
        source.gate.add_permits(1);
        assert_eq!(ids(refreshing.await.unwrap()), ["a", "b"]);
    }

    /// `pages` pages of pseudo-random CJK text: every character pair a new bigram, the
    /// slowest text to index.
    fn random_cjk_kb(pages: usize, chars: usize) -> String {
        let mut x: u32 = 7;
        let docs: Vec<String> = (0..pages)
            .map(|i| {
                let text: String = (0..chars)
                    .filter_map(|_| {
                        x = x.wrapping_mul(1_103_515_245).wrapping_add(12345);
                        char::from_u32(0x4e00 + (x >> 8) % 20_000)
                    })
                    .collect();
                format!(r#"{{"id": "p{i}", "type": "page", "title": "p{i}", "content": "{text}"}}"#)
            })
            .collect();
        format!(r#"{{"documents": [{}]}}"#, docs.join(","))
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_slow_index_is_built_off_the_request_while_the_last_version_is_served() {
        // Before: the request that found a new version indexed it inline: 4 s for 5 MB of
        // CJK pages, past the refresh budget, with the visitor waiting.
        let (source, handle) = handle(Duration::ZERO).await;
        // About 1 MB: seconds to index in a test build, far beyond INDEX_WAIT.
        let v2 = source.replace(random_cjk_kb(300, 1200));
        assert_eq!(
            ids(handle.current().await),
            ["a"],
            "served from the last index"
        );
        assert_eq!(ids(handle.current().await), ["a"], "still building");
        let mut waited = 0;
        while handle.snapshot().version() != v2 && waited < 600 {
            tokio::time::sleep(Duration::from_millis(100)).await;
            waited += 1;
        }
        assert_eq!(handle.snapshot().version(), v2, "swapped in when built");
        assert_eq!(handle.snapshot().kb().documents.len(), 300);
    }

    #[tokio::test]
    async fn corrupt_invalid_or_unreachable_sources_keep_the_last_good_index() {
        let (source, handle) = handle(Duration::ZERO).await;
        let good = handle.snapshot().version().to_owned();
        for bad in ["{not json", r#"{"documents": []}"#, r#"[{"id": "x"}]"#] {
            source.replace(bad);
            assert_eq!(handle.current().await.version(), good, "{bad}");
            assert!(
                handle.refresh_now().await.is_ok(),
                "rejected once, then unchanged"
            );
        }
        source.replace(b"\xff\xfe".to_vec());
        assert!(matches!(
            handle.refresh_now().await,
            Err(Error::InvalidKb(_))
        ));
        source.set_unavailable(true);
        source.replace(KB_V2);
        assert_eq!(handle.current().await.version(), good);
        assert!(handle
            .refresh_now()
            .await
            .unwrap_err()
            .to_string()
            .contains("unavailable"));
        source.set_unavailable(false);
        assert_eq!(ids(handle.current().await), ["a", "b"]);
    }

    #[tokio::test]
    async fn a_rejected_version_is_not_downloaded_again_but_a_fix_is_picked_up() {
        let (source, handle) = handle(Duration::ZERO).await;
        source.replace("{broken");
        assert!(handle.refresh_now().await.is_err());
        assert_eq!(handle.refresh_now().await.unwrap(), Refresh::Unchanged);
        source.replace(KB_V1);
        assert_eq!(handle.refresh_now().await.unwrap(), Refresh::Unchanged);
        source.replace(KB_V2);
        assert!(matches!(
            handle.refresh_now().await.unwrap(),
            Refresh::Updated { .. }
        ));
    }

    #[tokio::test]
    async fn cold_start_fails_naming_the_location_and_cause() {
        let missing = KbHandle::load(Arc::new(MemoryKbSource::new()), Duration::ZERO)
            .await
            .unwrap_err()
            .to_string();
        assert!(
            missing.contains("memory") && missing.contains("no knowledge base"),
            "{missing}"
        );
        let corrupt = KbHandle::load(
            Arc::new(MemoryKbSource::with_bytes("{oops")),
            Duration::ZERO,
        )
        .await
        .unwrap_err()
        .to_string();
        assert!(
            corrupt.contains("memory") && corrupt.contains("invalid JSON"),
            "{corrupt}"
        );
        let invalid = KbHandle::load(
            Arc::new(MemoryKbSource::with_bytes(r#"[{"id": "x"}]"#)),
            Duration::ZERO,
        )
        .await
        .unwrap_err()
        .to_string();
        assert!(invalid.contains("documents[0].type"), "{invalid}");
    }

    #[tokio::test]
    async fn local_files_load_with_their_content_hash_as_version() {
        let kb = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../knowledge_base.json");
        let config = Config {
            kb_source: crate::config::KbLocation::File(kb.clone()),
            ..Config::from_lookup(|_| None).unwrap()
        };
        let handle = KbHandle::from_config(&config, &AwsClients::from_env())
            .await
            .unwrap();
        let bytes = std::fs::read(&kb).unwrap();
        assert_eq!(
            handle.snapshot().version(),
            crate::search::content_version(&bytes)
        );
        assert_eq!(handle.refresh_now().await.unwrap(), Refresh::Unchanged);
    }
}
