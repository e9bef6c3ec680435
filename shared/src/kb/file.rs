//! A [`KbSource`] on a local file: the default `knowledge_base.json`, local runs, the CLI.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Mutex, PoisonError};

use async_trait::async_trait;

use super::source::{content_version, version_of_hash};
use super::source::{
    Fetched, Head, IndexStream, KbObject, KbSource, KbSourceError, WriteCondition, Written,
};

/// A knowledge-base file; its ETag is the content hash ([`content_version`]), the same
/// version string [`SearchIndex::load_file`](crate::SearchIndex::load_file) reports.
///
/// Conditional writes compare the file's current hash under a lock, then write a temporary
/// file next to it and rename it into place, so a reader sees the old file or the new one,
/// never half of one. The lock is per process: two processes writing the same file at once
/// are not serialised (the S3 source is what deployments use). The I/O is blocking, which
/// is fine for a file of a few megabytes read by local runs and the CLI.
#[derive(Debug)]
pub struct FileKbSource {
    path: PathBuf,
    // Serialises compare-and-write within the process. A std mutex: the section is plain
    // blocking file I/O with no `.await` inside.
    write_lock: Mutex<()>,
}

impl FileKbSource {
    /// A source on `path` (which need not exist yet).
    pub fn new(path: impl Into<PathBuf>) -> Self {
        Self {
            path: path.into(),
            write_lock: Mutex::new(()),
        }
    }

    /// The file's path.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Where the prebuilt index goes: beside the file, named by
    /// [`super::source::index_name`] (`knowledge_base.json` → `knowledge_base.index`).
    pub fn index_path(&self) -> PathBuf {
        let name = self
            .path
            .file_name()
            .map_or_else(|| "kb".into(), |n| n.to_string_lossy());
        self.path.with_file_name(super::source::index_name(&name))
    }

    fn read(&self) -> Result<Option<KbObject>, KbSourceError> {
        match std::fs::read(&self.path) {
            Ok(bytes) => Ok(Some(KbObject {
                etag: content_version(&bytes),
                bytes,
            })),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
            Err(e) => Err(self.io_error("cannot read", e)),
        }
    }

    /// The file's [`content_version`], computed over blocks as they are read.
    fn hash(&self) -> std::io::Result<String> {
        use std::io::Read;
        let mut file = std::fs::File::open(&self.path)?;
        let mut hasher = super::hash::ContentHasher::default();
        let mut block = vec![0u8; 1 << 20];
        loop {
            match file.read(&mut block) {
                Ok(0) => break,
                Ok(n) => hasher.update(&block[..n]),
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                Err(e) => return Err(e),
            }
        }
        Ok(version_of_hash(hasher.finish()))
    }

    fn io_error(&self, what: &str, e: std::io::Error) -> KbSourceError {
        KbSourceError::Other {
            location: self.location(),
            message: format!("{what}: {e}"),
            source: Some(Box::new(e)),
        }
    }

    /// Writes `bytes` to a temporary file in the same directory (same file system, so the
    /// rename is atomic), flushes it to disk, then renames it over the target.
    fn write_atomically(&self, path: &Path, bytes: &[u8]) -> Result<(), KbSourceError> {
        static COUNTER: AtomicU64 = AtomicU64::new(0);
        let name = path
            .file_name()
            .map_or_else(|| "kb".into(), |n| n.to_string_lossy());
        let tmp = path.with_file_name(format!(
            ".{name}.{}.{}.tmp",
            std::process::id(),
            COUNTER.fetch_add(1, Ordering::Relaxed)
        ));
        let result = (|| {
            let mut f = std::fs::File::create(&tmp)?;
            f.write_all(bytes)?;
            f.sync_all()?;
            std::fs::rename(&tmp, path)
        })();
        result.map_err(|e| {
            // Best effort: a leftover temporary file is harmless but untidy.
            let _ = std::fs::remove_file(&tmp);
            self.io_error("cannot write", e)
        })
    }
}

#[async_trait]
impl KbSource for FileKbSource {
    fn location(&self) -> String {
        self.path.display().to_string()
    }

    async fn get(&self, if_none_match: Option<&str>) -> Result<Fetched, KbSourceError> {
        // The whole file is read even when it turns out unchanged: the hash is the ETag, and
        // a knowledge base is small enough that this costs less than tracking mtimes.
        match self.read()? {
            None => Err(KbSourceError::NotFound {
                location: self.location(),
            }),
            Some(o) if Some(o.etag.as_str()) == if_none_match => Ok(Fetched::NotModified),
            Some(o) => Ok(Fetched::Object(o)),
        }
    }

    async fn head(&self, if_none_match: Option<&str>) -> Result<Head, KbSourceError> {
        // The file's hash, read in blocks: what `get` would report as its ETag, without
        // holding the file. Any edit changes it, however soon after the last one.
        let etag = match self.hash() {
            Ok(etag) => etag,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                return Err(KbSourceError::NotFound {
                    location: self.location(),
                })
            }
            Err(e) => return Err(self.io_error("cannot read", e)),
        };
        Ok(if Some(etag.as_str()) == if_none_match {
            Head::NotModified
        } else {
            Head::Current(etag)
        })
    }

    async fn put(
        &self,
        bytes: Vec<u8>,
        condition: WriteCondition,
    ) -> Result<Written, KbSourceError> {
        // Poisoning only means another write panicked; the file itself is intact because
        // writes go through a rename.
        let _guard = self
            .write_lock
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        let current = self.read()?;
        let holds = match (&condition, &current) {
            (WriteCondition::IfMatch(want), Some(o)) => o.etag == *want,
            (WriteCondition::IfAbsent, None) => true,
            _ => false,
        };
        if !holds {
            return Ok(Written::PreconditionFailed);
        }
        self.write_atomically(&self.path, &bytes)?;
        Ok(Written::Stored {
            etag: content_version(&bytes),
        })
    }

    async fn open_index(&self) -> Result<Option<IndexStream>, KbSourceError> {
        match std::fs::File::open(self.index_path()) {
            Ok(file) => {
                let len = file
                    .metadata()
                    .map_err(|e| self.io_error("cannot read the index", e))?
                    .len();
                Ok(Some(IndexStream {
                    reader: Box::new(std::io::BufReader::with_capacity(1 << 16, file)),
                    len,
                }))
            }
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
            Err(e) => Err(self.io_error("cannot read the index", e)),
        }
    }

    async fn put_index(&self, bytes: Vec<u8>) -> Result<(), KbSourceError> {
        self.write_atomically(&self.index_path(), &bytes)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn temp_path(name: &str) -> PathBuf {
        let dir = std::env::temp_dir().join(format!(
            "kb-file-{}-{}",
            std::process::id(),
            content_version(name.as_bytes())
        ));
        std::fs::create_dir_all(&dir).unwrap();
        dir.join("knowledge_base.json")
    }

    #[tokio::test]
    async fn writes_are_conditional_on_the_content_hash_and_leave_no_temp_files() {
        let path = temp_path("conditional");
        let _ = std::fs::remove_file(&path);
        let s = FileKbSource::new(&path);
        assert!(matches!(
            s.get(None).await,
            Err(KbSourceError::NotFound { .. })
        ));
        let Written::Stored { etag } = s
            .put(b"one".to_vec(), WriteCondition::IfAbsent)
            .await
            .unwrap()
        else {
            panic!("first write must be stored")
        };
        assert_eq!(etag, content_version(b"one"));
        assert_eq!(s.get(Some(&etag)).await.unwrap(), Fetched::NotModified);
        assert_eq!(
            s.put(b"two".to_vec(), WriteCondition::IfMatch("other".into()))
                .await
                .unwrap(),
            Written::PreconditionFailed
        );
        assert_eq!(std::fs::read(&path).unwrap(), b"one");
        assert!(matches!(
            s.put(b"two".to_vec(), WriteCondition::IfMatch(etag))
                .await
                .unwrap(),
            Written::Stored { .. }
        ));
        assert_eq!(std::fs::read(&path).unwrap(), b"two");
        let dir = path.parent().unwrap();
        let leftovers: Vec<_> = std::fs::read_dir(dir)
            .unwrap()
            .filter_map(|e| e.ok())
            .filter(|e| e.file_name().to_string_lossy().ends_with(".tmp"))
            .collect();
        assert!(leftovers.is_empty(), "{leftovers:?}");
        let _ = std::fs::remove_dir_all(dir);
    }
}
