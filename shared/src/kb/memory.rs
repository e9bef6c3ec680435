//! An in-memory [`KbSource`]: for tests, and for local runs that need no file.

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Mutex, MutexGuard, PoisonError};

use async_trait::async_trait;

use super::source::content_version;
use super::source::{
    Fetched, Head, IndexStream, KbObject, KbSource, KbSourceError, WriteCondition, Written,
};

/// A [`KbSource`] holding the object in process memory; ETag = content hash.
///
/// It can be told to fail ([`MemoryKbSource::set_unavailable`]) and counts reads, so tests
/// can check what a [`KbHandle`](crate::search::KbHandle) does when the store is down and how often
/// it asks.
#[derive(Debug, Default)]
pub struct MemoryKbSource {
    // A std mutex: every critical section is a compare and a swap with no `.await` inside,
    // which also makes the conditional write atomic.
    object: Mutex<Option<KbObject>>,
    /// The prebuilt index stored beside it.
    index: Mutex<Option<Vec<u8>>>,
    unavailable: AtomicBool,
    gets: AtomicUsize,
    heads: AtomicUsize,
}

impl MemoryKbSource {
    /// A source with no object yet.
    pub fn new() -> Self {
        Self::default()
    }

    /// A source holding `bytes`.
    pub fn with_bytes(bytes: impl Into<Vec<u8>>) -> Self {
        let source = Self::new();
        source.replace(bytes);
        source
    }

    /// Replaces the object unconditionally (a write behind the service's back); returns
    /// the new ETag.
    pub fn replace(&self, bytes: impl Into<Vec<u8>>) -> String {
        let bytes = bytes.into();
        let etag = content_version(&bytes);
        *self.lock() = Some(KbObject {
            bytes,
            etag: etag.clone(),
        });
        etag
    }

    /// The current object, if any.
    pub fn object(&self) -> Option<KbObject> {
        self.lock().clone()
    }

    /// The stored prebuilt index, if any.
    pub fn index(&self) -> Option<Vec<u8>> {
        self.index
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }

    /// Makes every later call fail with [`KbSourceError::Unavailable`] (or work again).
    pub fn set_unavailable(&self, unavailable: bool) {
        self.unavailable.store(unavailable, Ordering::SeqCst);
    }

    /// How many reads (of the whole object) were asked for so far.
    pub fn get_count(&self) -> usize {
        self.gets.load(Ordering::SeqCst)
    }

    /// How many version checks ([`KbSource::head`]) were asked for so far.
    pub fn head_count(&self) -> usize {
        self.heads.load(Ordering::SeqCst)
    }

    fn lock(&self) -> MutexGuard<'_, Option<KbObject>> {
        // Each section replaces the whole value in one assignment, so a poisoned lock
        // still guards a consistent object.
        self.object.lock().unwrap_or_else(PoisonError::into_inner)
    }

    fn check_available(&self) -> Result<(), KbSourceError> {
        if self.unavailable.load(Ordering::SeqCst) {
            return Err(KbSourceError::Unavailable {
                location: self.location(),
                message: "set unavailable".to_owned(),
                source: None,
            });
        }
        Ok(())
    }
}

#[async_trait]
impl KbSource for MemoryKbSource {
    fn location(&self) -> String {
        "memory".to_owned()
    }

    async fn get(&self, if_none_match: Option<&str>) -> Result<Fetched, KbSourceError> {
        self.gets.fetch_add(1, Ordering::SeqCst);
        self.check_available()?;
        match &*self.lock() {
            None => Err(KbSourceError::NotFound {
                location: self.location(),
            }),
            Some(o) if Some(o.etag.as_str()) == if_none_match => Ok(Fetched::NotModified),
            Some(o) => Ok(Fetched::Object(o.clone())),
        }
    }

    async fn head(&self, if_none_match: Option<&str>) -> Result<Head, KbSourceError> {
        self.heads.fetch_add(1, Ordering::SeqCst);
        self.check_available()?;
        match &*self.lock() {
            None => Err(KbSourceError::NotFound {
                location: self.location(),
            }),
            Some(o) if Some(o.etag.as_str()) == if_none_match => Ok(Head::NotModified),
            Some(o) => Ok(Head::Current(o.etag.clone())),
        }
    }

    async fn put(
        &self,
        bytes: Vec<u8>,
        condition: WriteCondition,
    ) -> Result<Written, KbSourceError> {
        self.check_available()?;
        let mut object = self.lock();
        let holds = match (&condition, &*object) {
            (WriteCondition::IfMatch(want), Some(o)) => o.etag == *want,
            (WriteCondition::IfAbsent, None) => true,
            _ => false,
        };
        if !holds {
            return Ok(Written::PreconditionFailed);
        }
        let etag = content_version(&bytes);
        *object = Some(KbObject {
            bytes,
            etag: etag.clone(),
        });
        Ok(Written::Stored { etag })
    }

    async fn open_index(&self) -> Result<Option<IndexStream>, KbSourceError> {
        self.check_available()?;
        Ok(self.index().map(|bytes| IndexStream {
            len: bytes.len() as u64,
            reader: Box::new(std::io::Cursor::new(bytes)),
        }))
    }

    async fn put_index(&self, bytes: Vec<u8>) -> Result<(), KbSourceError> {
        self.check_available()?;
        *self.index.lock().unwrap_or_else(PoisonError::into_inner) = Some(bytes);
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn conditional_reads_and_writes_follow_the_etag() {
        let s = MemoryKbSource::new();
        assert!(matches!(
            s.get(None).await,
            Err(KbSourceError::NotFound { .. })
        ));
        let Written::Stored { etag } = s
            .put(b"a".to_vec(), WriteCondition::IfAbsent)
            .await
            .unwrap()
        else {
            panic!("first write must be stored")
        };
        assert_eq!(
            s.put(b"b".to_vec(), WriteCondition::IfAbsent)
                .await
                .unwrap(),
            Written::PreconditionFailed
        );
        assert_eq!(s.get(Some(&etag)).await.unwrap(), Fetched::NotModified);
        assert_eq!(
            s.put(b"b".to_vec(), WriteCondition::IfMatch("stale".into()))
                .await
                .unwrap(),
            Written::PreconditionFailed
        );
        let written = s
            .put(b"b".to_vec(), WriteCondition::IfMatch(etag.clone()))
            .await
            .unwrap();
        assert!(matches!(written, Written::Stored { etag: e } if e != etag));
        let Fetched::Object(o) = s.get(Some(&etag)).await.unwrap() else {
            panic!("changed object must be returned")
        };
        assert_eq!(o.bytes, b"b");
        s.set_unavailable(true);
        assert!(s.get(None).await.unwrap_err().is_retryable());
        assert_eq!(s.get_count(), 4);
    }
}
