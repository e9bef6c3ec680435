//! The prebuilt index: a retriever's corpus-derived state as one flat little-endian file,
//! written next to the knowledge base by whoever writes it and read back at cold start
//! instead of re-indexing the JSON (the format is described in `docs/prebuilt-index.md`).
//!
//! Reading copies each array out of the buffer in one pass (no per-term allocation, no
//! parsing beyond lengths) after checking, in order: the magic, the format version, the
//! hash of the knowledge base it was built from, the length and the checksum of the body,
//! then every bound an array's values must keep, so no file, however damaged or hostile,
//! can make a lookup panic or loop. Any failure is an [`IndexError`] saying why, and the
//! caller indexes the JSON instead.

use crate::retrieval::bm25::{Bm25Index, TermTable, EMPTY};
use crate::retrieval::tokenize::Analyzer;
use crate::retrieval::Retriever;

/// The first bytes of every index file.
pub const MAGIC: &[u8; 8] = b"RAGINDEX";

/// The layout (and analysis) version this build writes and reads. Bump it whenever the
/// layout, the tokenizer, stemming, passage splitting or BM25 weights change: an index
/// from an older build would otherwise be served with terms the new analysis never emits.
pub const FORMAT_VERSION: u32 = 1;

/// Magic, version, flags, KB hash, body length, body checksum.
const HEADER_LEN: usize = 8 + 4 + 4 + 8 + 8 + 8;

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
    /// Built from another version of the knowledge base.
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
        found: usize,
        /// Bytes the header announces.
        expected: u64,
    },
    /// The body does not match its checksum.
    #[error("index checksum mismatch (corrupt)")]
    Checksum,
    /// The body's arrays break an invariant (a bug in whatever wrote it).
    #[error("malformed index: {0}")]
    Malformed(&'static str),
}

/// The hash identifying a knowledge base's bytes (and so the version an index was built
/// from): 64 bits over 8-byte little-endian words, each step a bijection of the state, so
/// any change confined to one word always changes it. About eight times faster than a
/// byte-wise hash, which matters on a 80 MB knowledge base read at every cold start.
pub fn content_hash(bytes: &[u8]) -> u64 {
    const K: u64 = 0x9e37_79b9_7f4a_7c15;
    let mut h: u64 = bytes.len() as u64 ^ 0x2545_f491_4f6c_dd1d;
    let mut words = bytes.chunks_exact(8);
    for w in &mut words {
        let w = u64::from_le_bytes(w.try_into().unwrap_or([0; 8]));
        h = (h ^ w).wrapping_mul(K).rotate_left(29);
    }
    let mut tail = [0u8; 8];
    tail[..words.remainder().len()].copy_from_slice(words.remainder());
    h = (h ^ u64::from_le_bytes(tail))
        .wrapping_mul(K)
        .rotate_left(29);
    h ^ (h >> 32)
}

/// The index object's name for a knowledge base's (an S3 key or a file path): a trailing
/// `.json` replaced by `.index`, else `.index` appended (`site/kb.json` → `site/kb.index`).
pub fn index_name(kb_name: &str) -> String {
    let stem = kb_name.strip_suffix(".json").unwrap_or(kb_name);
    format!("{stem}.index")
}

/// Writes `retriever`'s index for the knowledge base whose bytes hash to `kb_hash`.
pub fn encode(retriever: &Retriever, kb_hash: u64) -> Vec<u8> {
    let index = retriever.index();
    let mut body = Writer::default();
    body.u32(retriever.documents() as u32);
    body.u32(index.n_units as u32);
    body.u32(index.avgdl.to_bits());
    body.bytes(&index.terms.bytes);
    body.u32s(&index.terms.ends);
    body.u32s(&index.terms.slots);
    body.u32s(&index.offsets);
    body.u32s(&index.unit);
    body.u32s(&index.weight.iter().map(|w| w.to_bits()).collect::<Vec<_>>());
    let units: Vec<u32> = retriever
        .units()
        .iter()
        .flat_map(|&(d, p)| [d, p])
        .collect();
    body.u32s(&units);
    let mut names = Vec::new();
    let mut ends = Vec::new();
    for (word, term) in retriever.names() {
        for s in [word, term] {
            names.extend_from_slice(s.as_bytes());
            ends.push(names.len() as u32);
        }
    }
    body.bytes(&names);
    body.u32s(&ends);
    let body = body.0;
    let mut out = Vec::with_capacity(HEADER_LEN + body.len());
    out.extend_from_slice(MAGIC);
    out.extend_from_slice(&FORMAT_VERSION.to_le_bytes());
    let flags = if retriever.has_han() { FLAG_HAN } else { 0 };
    out.extend_from_slice(&flags.to_le_bytes());
    out.extend_from_slice(&kb_hash.to_le_bytes());
    out.extend_from_slice(&(body.len() as u64).to_le_bytes());
    out.extend_from_slice(&content_hash(&body).to_le_bytes());
    out.extend_from_slice(&body);
    out
}

/// Reads an index back into a retriever with `glossary` (from the knowledge base), if it
/// was built from the knowledge base whose bytes hash to `kb_hash` and is whole.
pub fn decode(
    bytes: &[u8],
    kb_hash: u64,
    glossary: &[(String, Vec<String>)],
) -> Result<Retriever, IndexError> {
    if bytes.len() < HEADER_LEN || &bytes[..8] != MAGIC {
        return Err(IndexError::Magic);
    }
    let mut header = Reader(&bytes[8..HEADER_LEN]);
    let version = header.u32()?;
    if version > FORMAT_VERSION {
        return Err(IndexError::Newer { found: version });
    }
    if version < FORMAT_VERSION {
        return Err(IndexError::Older { found: version });
    }
    let flags = header.u32()?;
    let found = header.u64()?;
    if found != kb_hash {
        return Err(IndexError::OtherKb {
            found,
            expected: kb_hash,
        });
    }
    let body_len = header.u64()?;
    let checksum = header.u64()?;
    let body = &bytes[HEADER_LEN..];
    if body.len() as u64 != body_len {
        return Err(IndexError::Length {
            found: body.len(),
            expected: body_len,
        });
    }
    if content_hash(body) != checksum {
        return Err(IndexError::Checksum);
    }
    let mut r = Reader(body);
    let n_docs = r.u32()? as usize;
    let n_units = r.u32()? as usize;
    let avgdl = f32::from_bits(r.u32()?);
    let terms = TermTable {
        bytes: r.bytes()?.to_vec(),
        ends: r.u32s()?,
        slots: r.u32s()?,
    };
    let offsets = r.u32s()?;
    let unit = r.u32s()?;
    let weight: Vec<f32> = r.u32s()?.into_iter().map(f32::from_bits).collect();
    let pairs = r.u32s()?;
    let name_bytes = r.bytes()?;
    let name_ends = r.u32s()?;
    if !r.0.is_empty() {
        return Err(IndexError::Malformed("bytes after the last array"));
    }
    check_terms(&terms)?;
    check_postings(&offsets, &unit, &weight, terms.len(), n_units)?;
    if pairs.len() != n_units * 2 {
        return Err(IndexError::Malformed("passage list length"));
    }
    let units: Vec<(u32, u32)> = pairs.chunks_exact(2).map(|p| (p[0], p[1])).collect();
    // Passages of a document are contiguous and ascending (ranking relies on it).
    let ordered = units.windows(2).all(|w| w[0] < w[1]);
    if !ordered || units.last().is_some_and(|&(d, _)| d as usize >= n_docs) {
        return Err(IndexError::Malformed("passage list order"));
    }
    let names = split_strings(name_bytes, &name_ends)?;
    if names.len() % 2 != 0 {
        return Err(IndexError::Malformed("names come in pairs"));
    }
    let mut names = names.into_iter();
    let mut pairs_out = Vec::with_capacity(names.len() / 2);
    while let (Some(word), Some(term)) = (names.next(), names.next()) {
        pairs_out.push((word, term));
    }
    let index = Bm25Index {
        terms,
        offsets,
        unit,
        weight,
        n_units,
        avgdl,
    };
    Ok(Retriever::assemble(
        Analyzer::new(),
        index,
        units,
        n_docs,
        flags & FLAG_HAN != 0,
        pairs_out,
        glossary,
    ))
}

/// Term ends ascending within the bytes; a power-of-two slot table with room to spare
/// (else a miss would probe forever) holding each id once.
fn check_terms(t: &TermTable) -> Result<(), IndexError> {
    let ascending = t.ends.windows(2).all(|w| w[0] <= w[1]);
    if !ascending || t.ends.last().is_some_and(|&e| e as usize != t.bytes.len()) {
        return Err(IndexError::Malformed("term ends"));
    }
    if !t.slots.len().is_power_of_two() || t.slots.len() <= t.ends.len() {
        return Err(IndexError::Malformed("term slot count"));
    }
    let mut seen = vec![false; t.ends.len()];
    for &s in &t.slots {
        if s == EMPTY {
            continue;
        }
        match seen.get_mut(s as usize) {
            Some(slot @ false) => *slot = true,
            _ => return Err(IndexError::Malformed("term slots")),
        }
    }
    if seen.iter().any(|&s| !s) {
        return Err(IndexError::Malformed("a term missing from its slots"));
    }
    Ok(())
}

/// One offset per term and one more, ascending from 0 to the number of postings; units
/// within range and ascending in each list.
fn check_postings(
    offsets: &[u32],
    unit: &[u32],
    weight: &[f32],
    n_terms: usize,
    n_units: usize,
) -> Result<(), IndexError> {
    if offsets.len() != n_terms + 1
        || offsets.first() != Some(&0)
        || offsets.last().map(|&o| o as usize) != Some(unit.len())
        || unit.len() != weight.len()
    {
        return Err(IndexError::Malformed("posting offsets"));
    }
    for w in offsets.windows(2) {
        if w[0] > w[1] {
            return Err(IndexError::Malformed("posting offsets"));
        }
        let list = &unit[w[0] as usize..w[1] as usize];
        let sorted = list.windows(2).all(|p| p[0] < p[1]);
        if !sorted || list.last().is_some_and(|&u| u as usize >= n_units) {
            return Err(IndexError::Malformed("posting units"));
        }
    }
    Ok(())
}

/// Strings stored end to end with their ends.
fn split_strings(bytes: &[u8], ends: &[u32]) -> Result<Vec<String>, IndexError> {
    let mut out = Vec::with_capacity(ends.len());
    let mut start = 0usize;
    for &end in ends {
        let s = bytes
            .get(start..end as usize)
            .and_then(|b| std::str::from_utf8(b).ok())
            .ok_or(IndexError::Malformed("string table"))?;
        out.push(s.to_owned());
        start = end as usize;
    }
    if start != bytes.len() {
        return Err(IndexError::Malformed("string table"));
    }
    Ok(out)
}

/// Appends little-endian values and length-prefixed arrays.
#[derive(Default)]
struct Writer(Vec<u8>);

impl Writer {
    fn u32(&mut self, v: u32) {
        self.0.extend_from_slice(&v.to_le_bytes());
    }

    fn bytes(&mut self, b: &[u8]) {
        self.0.extend_from_slice(&(b.len() as u64).to_le_bytes());
        self.0.extend_from_slice(b);
    }

    fn u32s(&mut self, v: &[u32]) {
        self.0.extend_from_slice(&(v.len() as u64).to_le_bytes());
        self.0.reserve(v.len() * 4);
        for x in v {
            self.0.extend_from_slice(&x.to_le_bytes());
        }
    }
}

/// Reads what [`Writer`] wrote, failing (never panicking) past the end.
struct Reader<'a>(&'a [u8]);

impl<'a> Reader<'a> {
    fn take(&mut self, n: usize) -> Result<&'a [u8], IndexError> {
        if n > self.0.len() {
            return Err(IndexError::Malformed("an array runs past the end"));
        }
        let (head, rest) = self.0.split_at(n);
        self.0 = rest;
        Ok(head)
    }

    fn u32(&mut self) -> Result<u32, IndexError> {
        let b = self.take(4)?;
        Ok(u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
    }

    fn u64(&mut self) -> Result<u64, IndexError> {
        let b = self.take(8)?;
        Ok(u64::from_le_bytes(b.try_into().unwrap_or([0; 8])))
    }

    fn len(&mut self) -> Result<usize, IndexError> {
        usize::try_from(self.u64()?).map_err(|_| IndexError::Malformed("array length"))
    }

    fn bytes(&mut self) -> Result<&'a [u8], IndexError> {
        let n = self.len()?;
        self.take(n)
    }

    fn u32s(&mut self) -> Result<Vec<u32>, IndexError> {
        let n = self.len()?;
        let b = self.take(
            n.checked_mul(4)
                .ok_or(IndexError::Malformed("array length"))?,
        )?;
        Ok(b.chunks_exact(4)
            .map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]]))
            .collect())
    }
}

#[cfg(test)]
mod tests;
