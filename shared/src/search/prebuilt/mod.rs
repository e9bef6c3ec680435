//! The prebuilt index: everything a function serves (the documents, their passages, the
//! glossary and the retriever's corpus-derived state) as one flat little-endian file,
//! written next to the knowledge base by whoever writes it and read back at cold start
//! instead of downloading and parsing the JSON (the format: `docs/prebuilt-index.md`).
//!
//! The header names the knowledge-base version the index was built from twice: by the
//! source's ETag (so a function can compare it with a `HeadObject` without the JSON) and
//! by the hash of the JSON bytes (so an index uploaded beside a JSON whose ETag nobody
//! recorded is still used once the JSON is read). It also carries a fingerprint of this
//! build's text analysis ([`analysis_fingerprint`]): an index whose terms another analysis
//! produced is refused.
//!
//! Reading copies each array out of the stream in one pass (no per-term allocation, one
//! allocation per document string) after checking, in order: the magic, the format
//! version, the analysis, the body's length against the object's real length, the
//! version it was built from, then the checksum of the body and every bound an array's
//! values must keep, so no file, however damaged or hostile, can make a read or a lookup
//! panic, loop or allocate more than the file holds. Any failure is an [`IndexError`]
//! saying why, and the caller reads the JSON instead.

mod codec;
mod documents;
mod postings;

use codec::{put_varint, Input, Varints, Writer};
use std::io::Read;

use crate::retrieval::{Analyzer, Retriever};
use crate::search::{Language, SearchIndex};
use crate::KnowledgeBase;

/// The first bytes of every index file.
pub const MAGIC: &[u8; 8] = b"RAGINDEX";

/// The layout version this build writes and reads. Bump it whenever the layout, passage
/// splitting, the indexed text or BM25 weights change; analysis changes are caught by
/// [`analysis_fingerprint`]. 8 adds each document's count of linking pages
/// (`linked_from`) after its alternates.
pub const FORMAT_VERSION: u32 = 8;

/// Magic, version, flags, analysis fingerprint, KB hash, body length, body checksum.
const HEADER_LEN: usize = 8 + 4 + 4 + 8 + 8 + 8 + 8;

/// Longest KB version (ETag) an index records; S3's are 32 to 40 characters.
const MAX_VERSION_LEN: usize = 256;

mod fingerprint {
    // Written by build.rs: `DATA_HASH`, a hash of the analysis data files' bytes.
    include!(concat!(env!("OUT_DIR"), "/analysis_fingerprint.rs"));
}

/// The fingerprint of this build's text analysis: the bytes of every dictionary and table
/// it reads (hashed by `build.rs`) and [`crate::retrieval::ANALYSIS_VERSION`], bumped by
/// hand when the analysis code changes. An index carrying another one is not used.
pub fn analysis_fingerprint() -> u64 {
    let mut h = ContentHasher::default();
    h.update(&fingerprint::DATA_HASH.to_le_bytes());
    h.update(&crate::retrieval::ANALYSIS_VERSION.to_le_bytes());
    h.finish()
}

/// Flag bit: some passage has Chinese text.
const FLAG_HAN: u32 = 1;

/// Why a prebuilt index was not used.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum IndexError {
    /// The bytes do not start like an index file.
    #[error("not an index file (bad magic)")]
    Magic,
    /// Written by a newer build than this one.
    #[error("index format {found} is newer than this build's {FORMAT_VERSION}")]
    Newer {
        /// The file's version.
        found: u32,
    },
    /// Written by an older build, whose analysis may differ.
    #[error("index format {found} is older than this build's {FORMAT_VERSION}")]
    Older {
        /// The file's version.
        found: u32,
    },
    /// Built by a binary whose text analysis differs from this one's.
    #[error("index built with text analysis {found:016x}, not this build's {expected:016x}")]
    Analysis {
        /// The file's fingerprint.
        found: u64,
        /// This build's ([`analysis_fingerprint`]).
        expected: u64,
    },
    /// Built from another version (ETag) of the knowledge base.
    #[error("index built from knowledge base version {found:?}, not the current {expected:?}")]
    OtherVersion {
        /// The version the index names.
        found: String,
        /// The source's current version.
        expected: String,
    },
    /// Built from other knowledge-base bytes.
    #[error("index built from knowledge base {found:016x}, not the served {expected:016x}")]
    OtherKb {
        /// The hash the index names.
        found: u64,
        /// The hash of the knowledge base being served.
        expected: u64,
    },
    /// Shorter or longer than its header says.
    #[error("index truncated or padded: body of {found} bytes, header says {expected}")]
    Length {
        /// Bytes present after the header.
        found: u64,
        /// Bytes the header announces.
        expected: u64,
    },
    /// The index could not be read (an I/O error).
    #[error("index unreadable: {0}")]
    Read(String),
    /// The body does not match its checksum.
    #[error("index checksum mismatch (corrupt)")]
    Checksum,
    /// The body's arrays break an invariant (a bug in whatever wrote it).
    #[error("malformed index: {0}")]
    Malformed(&'static str),
}

pub use crate::kb::{content_hash, ContentHasher};

pub use crate::kb::index_name;

/// What an index must have been built from to be used.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Expect<'a> {
    /// The knowledge-base version (ETag) the source holds now.
    Version(&'a str),
    /// The hash ([`content_hash`]) of the JSON bytes just read.
    Hash(u64),
}

/// What an index's header and first field say it was built from (read by [`built_from`]
/// without checking the body).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BuiltFrom {
    /// The knowledge base's version (ETag) when it was written; empty when unknown.
    pub version: String,
    /// The hash of the knowledge base's JSON bytes.
    pub hash: u64,
}

/// Writes `index` (documents, passages and retriever) for the knowledge base whose JSON
/// bytes hash to `kb_hash` and which the source stores as version `kb_version` (its ETag;
/// empty when not known yet: then only [`Expect::Hash`] can match it).
pub fn encode(index: &SearchIndex, kb_hash: u64, kb_version: &str) -> Vec<u8> {
    let retriever = index.retriever();
    // The header goes in front once the body is written (its length and checksum), so the
    // body is never copied.
    let mut body = Writer(vec![0; HEADER_LEN]);
    let version = &kb_version.as_bytes()[..kb_version.len().min(MAX_VERSION_LEN)];
    body.bytes(version);
    let texts = documents::write_texts(index.kb(), &mut body);
    body.deflated(|d| documents::write(index.kb(), index.chunks(), &texts, d));
    body.u32(match index.language() {
        Language::English => 0,
        Language::Chinese => 1,
    });
    body.u32(retriever.documents() as u32);
    postings::write(retriever.index(), &mut body);
    postings::write(retriever.fields(), &mut body);
    // Each passage as the gap from the previous one's document and its number in it.
    let mut units = Vec::with_capacity(retriever.units().len() * 2);
    let mut previous = 0;
    for &(d, p) in retriever.units() {
        put_varint(&mut units, d - previous);
        put_varint(&mut units, p);
        previous = d;
    }
    body.bytes(&units);
    body.deflated(|d| {
        d.u32(retriever.names().len() as u32);
        for (word, term) in retriever.names() {
            d.str(word);
            d.str(term);
        }
    });
    body.u32s(retriever.versions());
    let mut out = body.0;
    let body_len = (out.len() - HEADER_LEN) as u64;
    let checksum = content_hash(&out[HEADER_LEN..]);
    let flags = if retriever.has_han() { FLAG_HAN } else { 0 };
    let mut header = Vec::with_capacity(HEADER_LEN);
    header.extend_from_slice(MAGIC);
    header.extend_from_slice(&FORMAT_VERSION.to_le_bytes());
    header.extend_from_slice(&flags.to_le_bytes());
    header.extend_from_slice(&analysis_fingerprint().to_le_bytes());
    header.extend_from_slice(&kb_hash.to_le_bytes());
    header.extend_from_slice(&body_len.to_le_bytes());
    header.extend_from_slice(&checksum.to_le_bytes());
    out[..HEADER_LEN].copy_from_slice(&header);
    out
}

/// `index` (as [`encode`] wrote it) naming `kb_version` as the version it was built from:
/// the version is the body's first field, so it is replaced there and the header's length
/// and checksum made again, without encoding the index anew (ingest measures an index
/// before the JSON is stored, and learns its ETag only then). `None` if `index` is not an
/// index this build wrote.
pub fn with_version(index: &[u8], kb_version: &str) -> Option<Vec<u8>> {
    if index.len() < HEADER_LEN + 8 || &index[..8] != MAGIC {
        return None;
    }
    let body = &index[HEADER_LEN..];
    let old = u64::from_le_bytes(body[..8].try_into().ok()?);
    let rest = body.get(8 + usize::try_from(old).ok()?..)?;
    let version = &kb_version.as_bytes()[..kb_version.len().min(MAX_VERSION_LEN)];
    let mut body = Writer(Vec::with_capacity(8 + version.len() + rest.len()));
    body.bytes(version);
    body.0.extend_from_slice(rest);
    let mut out = Vec::with_capacity(HEADER_LEN + body.0.len());
    out.extend_from_slice(&index[..32]);
    out.extend_from_slice(&(body.0.len() as u64).to_le_bytes());
    out.extend_from_slice(&content_hash(&body.0).to_le_bytes());
    out.extend_from_slice(&body.0);
    Some(out)
}

/// The header's fields, checked up to the analysis.
struct Header {
    flags: u32,
    kb_hash: u64,
    body_len: u64,
    checksum: u64,
}

/// An index being read: its header checked up to the analysis and the version it names
/// read, the rest still in the stream (a file is never held whole: each array and string
/// goes straight where it is served from).
pub struct IndexReader<'a> {
    header: Header,
    built: BuiltFrom,
    input: Input<'a>,
}

impl std::fmt::Debug for IndexReader<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("IndexReader")
            .field("built", &self.built)
            .finish_non_exhaustive()
    }
}

impl<'a> IndexReader<'a> {
    /// Reads the header and the version from `stream`, an object of `len` bytes, if this
    /// build can read the index. The header's body length must be what the object holds:
    /// every count in the body is then bounded by bytes that are really there.
    pub fn open(mut stream: Box<dyn Read + Send + 'a>, len: u64) -> Result<Self, IndexError> {
        let mut bytes = [0u8; HEADER_LEN];
        stream.read_exact(&mut bytes).map_err(|e| match e.kind() {
            std::io::ErrorKind::UnexpectedEof => IndexError::Magic,
            _ => IndexError::Read(e.to_string()),
        })?;
        if &bytes[..8] != MAGIC {
            return Err(IndexError::Magic);
        }
        let field = |at: usize| u64::from_le_bytes(bytes[at..at + 8].try_into().unwrap_or([0; 8]));
        let word = |at: usize| u32::from_le_bytes(bytes[at..at + 4].try_into().unwrap_or([0; 4]));
        let version = word(8);
        if version > FORMAT_VERSION {
            return Err(IndexError::Newer { found: version });
        }
        if version < FORMAT_VERSION {
            return Err(IndexError::Older { found: version });
        }
        if field(16) != analysis_fingerprint() {
            return Err(IndexError::Analysis {
                found: field(16),
                expected: analysis_fingerprint(),
            });
        }
        let header = Header {
            flags: word(12),
            kb_hash: field(24),
            body_len: field(32),
            checksum: field(40),
        };
        let present = len.saturating_sub(HEADER_LEN as u64);
        if header.body_len != present {
            return Err(IndexError::Length {
                found: present,
                expected: header.body_len,
            });
        }
        let mut input = Input::new(stream, header.body_len);
        let version = input.bytes()?;
        let built = BuiltFrom {
            version: String::from_utf8_lossy(&version).into_owned(),
            hash: header.kb_hash,
        };
        Ok(Self {
            header,
            built,
            input,
        })
    }

    /// What the index says it was built from (not yet checked against its checksum).
    pub fn built_from(&self) -> &BuiltFrom {
        &self.built
    }

    /// Reads the rest into the served knowledge base, labelled `label` (the version it is
    /// served as), if it was built from what `expect` says and is whole.
    pub fn decode(mut self, expect: Expect<'_>, label: String) -> Result<SearchIndex, IndexError> {
        match expect {
            Expect::Hash(expected) if self.header.kb_hash != expected => {
                return Err(IndexError::OtherKb {
                    found: self.header.kb_hash,
                    expected,
                })
            }
            Expect::Version(expected)
                if self.built.version.is_empty() || self.built.version != expected =>
            {
                return Err(IndexError::OtherVersion {
                    found: self.built.version,
                    expected: expected.to_owned(),
                })
            }
            _ => {}
        }
        let parts = read_parts(&mut self.input, self.header.flags);
        // The whole body is read and checked whatever happened: a damaged file is then
        // told apart (checksum) from a writer's bug (a malformed array).
        self.input.finish(self.header.checksum)?;
        let (kb, chunks, retriever, language) = parts?;
        let len = HEADER_LEN as u64 + self.header.body_len;
        Ok(SearchIndex::from_parts(kb, chunks, retriever, language, label).read_from_bytes(len))
    }
}

/// What the index in `bytes` says it was built from, if this build can read it: a cheap
/// look (no checksum) to decide whether the JSON must be read at all.
pub fn built_from(bytes: &[u8]) -> Result<BuiltFrom, IndexError> {
    IndexReader::open(Box::new(bytes), bytes.len() as u64).map(|r| r.built)
}

/// Reads an index held in memory ([`IndexReader::decode`]).
pub fn decode(bytes: &[u8], expect: Expect<'_>, label: String) -> Result<SearchIndex, IndexError> {
    IndexReader::open(Box::new(bytes), bytes.len() as u64)?.decode(expect, label)
}

/// The body after the version: the documents, then the retriever.
fn read_parts(
    r: &mut Input<'_>,
    flags: u32,
) -> Result<
    (
        KnowledgeBase,
        Vec<crate::search::Chunks>,
        Retriever,
        Language,
    ),
    IndexError,
> {
    let texts = documents::read_texts(r)?;
    crate::heap::mark("packed texts");
    let mut section = r.deflated()?;
    let (kb, chunks) = documents::read(&mut section, &texts)?;
    section.end()?;
    crate::heap::mark("documents");
    let language = match r.u32()? {
        0 => Language::English,
        1 => Language::Chinese,
        _ => return Err(IndexError::Malformed("the site's language")),
    };
    let n_docs = r.u32()? as usize;
    let index = postings::read(r)?;
    crate::heap::mark("passage index");
    let fields = postings::read(r)?;
    crate::heap::mark("field index");
    let n_units = index.n_units;
    let pairs = r.bytes()?;
    let mut section = r.deflated()?;
    let n_names = section.count(8)?;
    let names = (0..n_names)
        .map(|_| Ok((section.str()?, section.str()?)))
        .collect::<Result<Vec<_>, IndexError>>()?;
    section.end()?;
    let versions = r.u32s()?;
    if n_docs != kb.documents.len() {
        return Err(IndexError::Malformed("document count"));
    }
    // No fields at all (a retriever built without them), or one unit per document.
    if fields.n_units != n_docs && !(fields.n_units == 0 && fields.terms.len() == 0) {
        return Err(IndexError::Malformed("field unit count"));
    }
    // Each passage takes at least two bytes: the count is believed only that far.
    let mut units = Vec::with_capacity(n_units.min(pairs.len() / 2));
    let (mut v, mut doc) = (Varints::new(&pairs), 0u32);
    while !v.is_done() {
        doc = doc
            .checked_add(v.next()?)
            .ok_or(IndexError::Malformed("passage list order"))?;
        units.push((doc, v.next()?));
    }
    drop(pairs);
    if units.len() != n_units {
        return Err(IndexError::Malformed("passage list length"));
    }
    // Passages of a document are contiguous and ascending (ranking relies on it).
    let ordered = units.windows(2).all(|w| w[0] < w[1]);
    if !ordered || units.last().is_some_and(|&(d, _)| d as usize >= n_docs) {
        return Err(IndexError::Malformed("passage list order"));
    }
    // None, or one per document, each another document (or none).
    let paired = |&v: &u32| v == crate::retrieval::NO_VERSION || (v as usize) < n_docs;
    if !(versions.is_empty() || versions.len() == n_docs) || !versions.iter().all(paired) {
        return Err(IndexError::Malformed("language versions"));
    }
    let retriever = Retriever::assemble(
        Analyzer::new(),
        index,
        fields,
        units,
        n_docs,
        flags & FLAG_HAN != 0,
        names,
        &kb.glossary,
        Some(versions),
    );
    Ok((kb, chunks, retriever, language))
}

#[cfg(test)]
mod tests;
