//! The build cache (`.rag-build-cache` next to the output): what each input file (built
//! HTML, Markdown) was extracted to, keyed by a SHA-256 of the file's bytes, so a rebuild
//! parses only the files that changed. Whole-site stages (noise, near-duplicates, release
//! notes, ids, `llms.txt`) still run over every page; the cache only saves the per-file
//! parsing. It also remembers which prebuilt index was written for which knowledge base,
//! so an unchanged knowledge base does not rebuild an index it already has.
//!
//! The file is valid for one `rag` binary and one set of options that change extraction
//! (the base URL, the permalink pattern): its first line carries a hash of both, and a
//! cache with another is ignored whole, as is a damaged one (with a note on stderr; a
//! build never fails over its cache). It holds the files of the last build only, so it
//! never grows past the site. Format, one record a line:
//!
//! ```text
//! rag-build-cache <TAB> 1 <TAB> <key>
//! <sha256 of the file> <TAB> <"source:path" as a JSON string> <TAB> {"url": ..., "out": ...}
//! index <TAB> <knowledge base content hash> <TAB> <sha256 of the index file>
//! ```

use std::borrow::Cow;
use std::collections::HashMap;
use std::fs::File;
use std::io::{BufWriter, Read, Write};
use std::ops::Range;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use super::page::Page;

/// The cache's file name, next to the output.
pub(crate) const FILE_NAME: &str = ".rag-build-cache";
/// First field of the first line.
const MAGIC: &str = "rag-build-cache";
/// Version of the line format.
const FORMAT: &str = "1";
/// First field of the line naming the prebuilt index.
const INDEX: &str = "index";

/// What extracting one input file gave; cached as is.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub(crate) enum Extracted {
    /// A page (boxed: the other outcomes are small).
    Page(Box<Page>),
    /// HTML marked `noindex`.
    NoIndex,
    /// An HTML redirect stub.
    Redirect,
    /// HTML with no main text.
    Empty,
    /// HTML refused before parsing (why).
    Refused(String),
    /// A Markdown draft.
    Draft,
}

/// What the cache remembers of one file: the URL it was read for and what it gave.
#[derive(Serialize)]
struct RecordRef<'a> {
    url: &'a str,
    out: &'a Extracted,
}

/// [`RecordRef`] as read back.
#[derive(Deserialize)]
struct Record {
    url: String,
    out: Extracted,
}

/// The cache of the last build, as read.
#[derive(Default)]
pub(crate) struct Previous {
    /// Whether the cache is used at all (`--no-cache` turns it off).
    on: bool,
    /// The file's text; entries point into it and are parsed only when reused.
    text: String,
    /// Per file key: its hash and where its record is in `text`.
    entries: HashMap<String, (String, Range<usize>)>,
    /// The knowledge base hash and index file hash last written.
    index: Option<(u64, String)>,
}

/// One file's line for the next cache.
pub(crate) struct Line<'a> {
    key: String,
    hash: String,
    record: Cow<'a, str>,
    /// Whether it came from the previous cache.
    reused: bool,
}

/// The next cache, written while the build reads its files and put in place only when
/// the build succeeds.
pub(crate) struct Next {
    path: PathBuf,
    tmp: PathBuf,
    out: Option<BufWriter<File>>,
    /// Files whose extraction was reused.
    pub(crate) reused: usize,
    /// Files extracted anew.
    pub(crate) extracted: usize,
}

/// Both halves: what threads read from, what the build writes to.
pub(crate) struct BuildCache {
    /// The cache of the last build.
    pub(crate) previous: Previous,
    /// The one being written.
    pub(crate) next: Option<Next>,
}

/// Where the cache of a build writing `output` lives.
pub(crate) fn path_for(output: &Path) -> PathBuf {
    output.with_file_name(FILE_NAME)
}

/// The cache key: this binary's hash and the options that change what a file extracts
/// to; `None` (no cache) when the binary cannot be read.
pub(crate) fn key(options: &[&str]) -> Option<String> {
    let exe = std::env::current_exe().ok()?;
    let mut h = Sha256::new();
    h.update(std::fs::read(exe).ok()?);
    for o in options {
        h.update((o.len() as u64).to_le_bytes());
        h.update(o.as_bytes());
    }
    Some(hex(&h.finalize()))
}

/// A SHA-256 in hex.
pub(crate) fn sha256(bytes: &[u8]) -> String {
    hex(&Sha256::digest(bytes))
}

fn hex(bytes: &[u8]) -> String {
    const DIGITS: &[u8; 16] = b"0123456789abcdef";
    let mut out = String::with_capacity(bytes.len() * 2);
    for b in bytes {
        out.push(char::from(DIGITS[usize::from(b >> 4)]));
        out.push(char::from(DIGITS[usize::from(b & 15)]));
    }
    out
}

impl BuildCache {
    /// No cache: everything is extracted, nothing written.
    pub(crate) fn off() -> Self {
        Self {
            previous: Previous::default(),
            next: None,
        }
    }

    /// Opens the cache at `path` for `key`: the previous one read (ignored with a note
    /// when it is damaged or was written for another key), the next one started. Notes
    /// go to `notes`.
    pub(crate) fn open(path: &Path, key: &str, notes: &mut Vec<String>) -> Self {
        let previous = match std::fs::read(path) {
            Err(_) => Previous {
                on: true,
                ..Previous::default()
            },
            Ok(bytes) => match Previous::parse(bytes, key) {
                Ok(p) => p,
                Err(why) => {
                    notes.push(format!(
                        "{}: {why}; ignored, every file is extracted anew",
                        path.display()
                    ));
                    Previous {
                        on: true,
                        ..Previous::default()
                    }
                }
            },
        };
        let next = match Next::create(path, key) {
            Ok(n) => Some(n),
            Err(e) => {
                notes.push(format!(
                    "{}: {e}; the build cache is not written",
                    path.display()
                ));
                None
            }
        };
        Self { previous, next }
    }
}

/// Takes one file's line into the next cache (when there is one).
pub(crate) fn keep(next: &mut Option<Next>, line: Option<Line<'_>>) {
    if let (Some(next), Some(line)) = (next, line) {
        next.keep(&line);
    }
}

impl Previous {
    fn parse(bytes: Vec<u8>, key: &str) -> Result<Self, &'static str> {
        let text = String::from_utf8(bytes).map_err(|_| "not a rag build cache")?;
        let mut lines = text.split_inclusive('\n');
        let head = lines.next().unwrap_or_default();
        let mut fields = head.trim_end_matches('\n').split('\t');
        if fields.next() != Some(MAGIC) || fields.next() != Some(FORMAT) {
            return Err("not a rag build cache of this version");
        }
        if fields.next() != Some(key) {
            return Err("written by another rag binary or with other options");
        }
        let mut entries = HashMap::new();
        let mut index = None;
        let mut at = head.len();
        for line in lines {
            let start = at;
            at += line.len();
            let Some(body) = line.strip_suffix('\n') else {
                return Err("damaged (a line is cut off)");
            };
            let mut fields = body.splitn(3, '\t');
            let (Some(first), Some(second), Some(third)) =
                (fields.next(), fields.next(), fields.next())
            else {
                return Err("damaged (a line has too few fields)");
            };
            if first == INDEX {
                let kb = second.parse().map_err(|_| "damaged (an index line)")?;
                index = Some((kb, third.to_owned()));
                continue;
            }
            if first.len() != 64 || !first.bytes().all(|b| b.is_ascii_hexdigit()) {
                return Err("damaged (a hash is not SHA-256)");
            }
            let file: String = serde_json::from_str(second).map_err(|_| "damaged (a file name)")?;
            let record_start = start + first.len() + second.len() + 2;
            entries.insert(file, (first.to_owned(), record_start..at - 1));
        }
        Ok(Self {
            on: true,
            text,
            entries,
            index,
        })
    }

    /// Extracts file `key` (its bytes, the URL it is read for) with `extract`, unless the
    /// cache has it for exactly these bytes and this URL; with the line for the next cache.
    pub(crate) fn extract(
        &self,
        key: String,
        bytes: &[u8],
        url: &str,
        extract: impl FnOnce() -> Extracted,
    ) -> (Extracted, Option<Line<'_>>) {
        if !self.on {
            return (extract(), None);
        }
        let hash = sha256(bytes);
        if let Some((old, range)) = self.entries.get(&key) {
            let raw = self.text.get(range.clone()).unwrap_or_default();
            // A record that does not parse is extracted again: the cache is only a hint.
            match serde_json::from_str::<Record>(raw) {
                Ok(r) if *old == hash && r.url == url => {
                    let line = Line {
                        key,
                        hash,
                        record: Cow::Borrowed(raw),
                        reused: true,
                    };
                    return (r.out, Some(line));
                }
                _ => {}
            }
        }
        let out = extract();
        // Serializing a record cannot fail: its keys are strings, its values text.
        let record = serde_json::to_string(&RecordRef { url, out: &out }).unwrap_or_default();
        let line = Line {
            key,
            hash,
            record: Cow::Owned(record),
            reused: false,
        };
        (out, Some(line))
    }

    /// Lets go of the files' records once every file has been read.
    pub(crate) fn forget_files(&mut self) {
        self.text = String::new();
        self.entries = HashMap::new();
    }

    /// The SHA-256 of the index file at `path` when the cache says it was written for the
    /// knowledge base with hash `kb` and the file still has those bytes.
    pub(crate) fn index_for(&self, kb: u64, path: &Path) -> Option<String> {
        let (was, sha) = self.index.as_ref()?;
        if *was != kb {
            return None;
        }
        // Read in pieces: the index can be as big as the knowledge base.
        let mut file = File::open(path).ok()?;
        let mut h = Sha256::new();
        let mut buf = vec![0u8; 1 << 20];
        loop {
            match file.read(&mut buf) {
                Ok(0) => break,
                Ok(n) => h.update(buf.get(..n)?),
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                Err(_) => return None,
            }
        }
        (hex(&h.finalize()) == *sha).then(|| sha.clone())
    }
}

impl Next {
    fn create(path: &Path, key: &str) -> std::io::Result<Self> {
        let mut tmp = path.as_os_str().to_owned();
        tmp.push(".tmp");
        let tmp = PathBuf::from(tmp);
        if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
            std::fs::create_dir_all(dir)?;
        }
        let mut out = BufWriter::new(File::create(&tmp)?);
        writeln!(out, "{MAGIC}\t{FORMAT}\t{key}")?;
        Ok(Self {
            path: path.to_path_buf(),
            tmp,
            out: Some(out),
            reused: 0,
            extracted: 0,
        })
    }

    fn keep(&mut self, line: &Line<'_>) {
        if line.reused {
            self.reused += 1;
        } else {
            self.extracted += 1;
        }
        let Some(out) = &mut self.out else { return };
        // A file name is text: it always serializes.
        let name = serde_json::to_string(&line.key).unwrap_or_default();
        if writeln!(out, "{}\t{name}\t{}", line.hash, line.record).is_err() {
            // A cache that cannot be written is left unwritten, not half written.
            self.out = None;
        }
    }

    /// Puts the cache in place, naming the index written for knowledge base `kb`.
    pub(crate) fn commit(mut self, kb: u64, index_sha: &str) -> Result<(), String> {
        let Some(mut out) = self.out.take() else {
            return Err(format!("{}: not written", self.tmp.display()));
        };
        writeln!(out, "{INDEX}\t{kb}\t{index_sha}")
            .and_then(|()| out.flush())
            .map_err(|e| format!("{}: {e}", self.tmp.display()))?;
        drop(out);
        std::fs::rename(&self.tmp, &self.path).map_err(|e| format!("{}: {e}", self.path.display()))
    }
}

impl Drop for Next {
    /// A build that failed leaves the previous cache as it was.
    fn drop(&mut self) {
        if self.out.is_some() {
            self.out = None;
            let _ = std::fs::remove_file(&self.tmp);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn page(title: &str) -> Extracted {
        Extracted::Page(Box::new(Page {
            url: "https://ex.org/a/".into(),
            title: title.into(),
            content: "Text\twith a tab\nand a line".into(),
            ..Page::default()
        }))
    }

    #[test]
    fn a_file_is_reused_only_for_the_same_bytes_url_and_key() {
        let dir = std::env::temp_dir().join(format!("rag-xcache-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        let path = dir.join(FILE_NAME);
        let mut notes = Vec::new();
        let mut cache = BuildCache::open(&path, "k1", &mut notes);
        let (out, line) =
            cache
                .previous
                .extract("site:a.html".into(), b"<p>A", "https://ex.org/a/", || {
                    page("A")
                });
        assert_eq!(out, page("A"));
        keep(&mut cache.next, line);
        let next = cache.next.take().unwrap();
        assert_eq!((next.reused, next.extracted), (0, 1));
        next.commit(7, "ff").unwrap();
        assert!(notes.is_empty(), "{notes:?}");

        let cache = BuildCache::open(&path, "k1", &mut notes);
        let fresh = || page("fresh");
        let (out, line) =
            cache
                .previous
                .extract("site:a.html".into(), b"<p>A", "https://ex.org/a/", fresh);
        assert_eq!(out, page("A"), "same bytes and URL: reused");
        assert!(line.unwrap().reused);
        for (bytes, url) in [
            (&b"<p>B"[..], "https://ex.org/a/"),
            (b"<p>A", "https://ex.org/b/"),
        ] {
            let (out, _) = cache
                .previous
                .extract("site:a.html".into(), bytes, url, fresh);
            assert_eq!(out, page("fresh"), "{url}");
        }
        assert_eq!(cache.previous.index, Some((7, "ff".to_owned())));
        drop(cache);

        let cache = BuildCache::open(&path, "k2", &mut notes);
        let (out, _) =
            cache
                .previous
                .extract("site:a.html".into(), b"<p>A", "https://ex.org/a/", fresh);
        assert_eq!(out, page("fresh"), "another key: not reused");
        assert!(notes[0].contains("another rag binary"), "{notes:?}");
        drop(cache);
        assert!(!dir.join(".rag-build-cache.tmp").exists());
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn a_damaged_cache_is_refused_whole() {
        for text in [
            "",
            "something else\n",
            "rag-build-cache\t1\tk\nnot a line\n",
            "rag-build-cache\t1\tk\nabc\t\"a\"\t{}\n",
            "rag-build-cache\t1\tk\nindex\tx\tff\n",
        ] {
            assert!(
                Previous::parse(text.as_bytes().to_vec(), "k").is_err(),
                "{text:?}"
            );
        }
        let cut = format!("rag-build-cache\t1\tk\n{}\t\"a\"\t{{}}", "0".repeat(64));
        assert!(Previous::parse(cut.into_bytes(), "k").is_err());
    }
}
