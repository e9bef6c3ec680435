//! The knowledge base itself in the index: every document field, each document's content
//! passages and the glossary, so a function serves them without downloading or parsing the
//! JSON.
//!
//! Page content, most of an index's bytes, is written first as *packed texts*: the
//! contents of neighbouring documents concatenated and raw-deflated in blocks of about
//! [`TEXT_BLOCK`] bytes, each stored on its own (its inflated length, its stored length,
//! the bytes) and kept deflated in memory until a request reads one of its documents
//! ([`PackedBlock`]). The rest of each document is written into a deflated section whose
//! blocks are cut between documents, and read whole at load. Strings sit inline, in the
//! order they are read, so loading streams each one into its own `String` without ever
//! holding the whole table or the whole inflated section.
//!
//! Packed texts: the number of blocks, then per block its inflated length, its stored
//! length and the raw deflate.
//! Documents: their number, then per document its id, its type, its other string fields
//! in `STRING_FIELDS` order but `content` (each a string or none), its content (none, or
//! its block and the start and end of its bytes in the inflated block), the number of
//! keywords and the keywords, the number of extra fields and a (name, value) pair of
//! strings for each, the number of alternate URLs and the URLs, then its passages: 0 (no
//! content), 1 (the trimmed content is the passage) or 2 followed by a count and each
//! passage's (start, end) byte offsets in the content.
//! Glossary: the number of entries, then per entry its word, a count and the translations.

use std::sync::Arc;

use super::codec::{self, Deflater, Input, Writer};
use super::IndexError;
use crate::kb::{Document, KnowledgeBase, PackedBlock, Text, STRING_FIELDS};
use crate::search::Chunks;

/// Content bytes a packed-text block is cut at (at the first document end past it): a
/// request inflates whole blocks, so a small one costs little to read (32 KiB inflate in
/// about 0.1 ms), and deflate's window is 32 KiB, so a larger one compresses hardly better.
const TEXT_BLOCK: usize = 32 << 10;

/// Where each document's content went: its block and byte range there.
type Placement = Vec<Option<(u32, u32, u32)>>;

/// Writes the contents of `kb`'s documents as packed-text blocks, and says where each
/// went.
pub(super) fn write_texts(kb: &KnowledgeBase, w: &mut Writer) -> Placement {
    // The count is patched in at the end: each block is deflated and written as soon as
    // it is cut, so the raw text is never held whole (on the JDK's API docs, 65 MB).
    let count_at = w.0.len();
    w.u32(0);
    let mut blocks = 0u32;
    let mut raw: Vec<u8> = Vec::with_capacity(2 * TEXT_BLOCK);
    let mut placed = Vec::with_capacity(kb.documents.len());
    for d in &kb.documents {
        placed.push(d.content.as_deref().map(|c| {
            let start = raw.len() as u32;
            raw.extend_from_slice(c.as_bytes());
            (blocks, start, raw.len() as u32)
        }));
        if raw.len() >= TEXT_BLOCK {
            w.block(&raw);
            raw.clear();
            blocks += 1;
        }
    }
    if !raw.is_empty() {
        w.block(&raw);
        blocks += 1;
    }
    w.0[count_at..count_at + 4].copy_from_slice(&blocks.to_le_bytes());
    placed
}

/// Reads what [`write_texts`] wrote: the blocks, still deflated.
pub(super) fn read_texts(r: &mut Input<'_>) -> Result<Vec<Arc<PackedBlock>>, IndexError> {
    let n = r.count(8)?;
    let mut blocks = Vec::with_capacity(n.min(GROW));
    for _ in 0..n {
        let (deflated, len) = r.block()?;
        blocks.push(Arc::new(PackedBlock::new(deflated.into(), len)));
    }
    Ok(blocks)
}

/// Writes the documents (their content as placed by [`write_texts`]), their passages and
/// the glossary, into a deflated section whose
/// blocks end between two documents or entries.
pub(super) fn write(
    kb: &KnowledgeBase,
    chunks: &[Chunks],
    texts: &Placement,
    w: &mut Deflater<'_>,
) {
    w.u32(kb.documents.len() as u32);
    for ((d, c), text) in kb.documents.iter().zip(chunks).zip(texts) {
        w.str(&d.id);
        w.str(&d.doc_type);
        for &field in STRING_FIELDS.iter().filter(|&&f| f != "content") {
            w.opt_str(crate::kb::string_field(d, field));
        }
        match *text {
            Some((block, start, end)) => [block, start, end].into_iter().for_each(|v| w.u32(v)),
            None => w.u32(codec::NONE),
        }
        w.u32(d.keywords.len() as u32);
        d.keywords.iter().for_each(|k| w.str(k));
        w.u32(d.extra.len() as u32);
        for (k, v) in &d.extra {
            w.str(k);
            w.str(v);
        }
        w.u32(d.alternates.len() as u32);
        d.alternates.iter().for_each(|u| w.str(u));
        w.u32(d.linked_from.unwrap_or(codec::NONE));
        match c {
            Chunks::None => w.u32(0),
            Chunks::Whole => w.u32(1),
            Chunks::Split(spans) => {
                w.u32(2);
                w.u32(spans.len() as u32);
                for s in spans {
                    w.u32(s.start);
                    w.u32(s.end);
                }
            }
        }
        w.boundary();
    }
    w.u32(kb.glossary.len() as u32);
    for (word, translations) in &kb.glossary {
        w.str(word);
        w.u32(translations.len() as u32);
        translations.iter().for_each(|t| w.str(t));
        w.boundary();
    }
}

/// The fewest bytes a document's record takes: the lengths of its strings (its content's
/// place among them), its three counts, its linking pages and its passage kind.
const MIN_RECORD: u64 = 4 * (2 + STRING_FIELDS.len() as u64 + 5);

/// A document's content: none, or a range of one of `texts`.
fn read_text(r: &mut Input<'_>, texts: &[Arc<PackedBlock>]) -> Result<Option<Text>, IndexError> {
    let block = r.u32()?;
    if block == codec::NONE {
        return Ok(None);
    }
    let (start, end) = (r.u32()?, r.u32()?);
    match texts.get(block as usize) {
        Some(b) if start <= end && end <= b.len() => Ok(Some(Text::packed(b.clone(), start..end))),
        _ => Err(IndexError::Malformed(
            "a content's place in the packed texts",
        )),
    }
}

/// Most items reserved ahead of a count; past it, a list grows as its items arrive.
const GROW: usize = 1024;

/// Reads what [`write`] wrote: the knowledge base (its content in `texts`) and each
/// document's passages.
pub(super) fn read(
    r: &mut Input<'_>,
    texts: &[Arc<PackedBlock>],
) -> Result<(KnowledgeBase, Vec<Chunks>), IndexError> {
    let n_docs = r.count(MIN_RECORD)?;
    // A document takes far more memory than its fewest bytes on file: the lists grow as
    // records arrive rather than trusting the count.
    let mut documents = Vec::with_capacity(n_docs.min(GROW));
    let mut chunks = Vec::with_capacity(n_docs.min(GROW));
    for _ in 0..n_docs {
        let mut d = Document {
            id: r.str()?,
            doc_type: r.str()?,
            ..Document::default()
        };
        for &field in STRING_FIELDS.iter().filter(|&&f| f != "content") {
            let value = r.opt_str()?;
            if let Some(slot) = crate::kb::string_slot(&mut d, field) {
                *slot = value;
            }
        }
        d.content = read_text(r, texts)?;
        let n = r.count(4)?;
        d.keywords = (0..n).map(|_| r.str()).collect::<Result<_, _>>()?;
        let n = r.count(8)?;
        d.extra = (0..n)
            .map(|_| Ok((r.str()?, r.str()?)))
            .collect::<Result<_, IndexError>>()?;
        let n = r.count(4)?;
        d.alternates = (0..n).map(|_| r.str()).collect::<Result<_, _>>()?;
        d.linked_from = match r.u32()? {
            codec::NONE => None,
            n if u64::from(n) <= crate::kb::MAX_LINKED_FROM => Some(n),
            _ => return Err(IndexError::Malformed("a count of linking pages")),
        };
        // The content is not inflated here: a span is checked against its length, and one
        // off a character boundary reads as no passage ([`SearchIndex::passage_text`]).
        let content_len = d.content.as_ref().map(Text::byte_len);
        chunks.push(match r.u32()? {
            0 => Chunks::None,
            1 if content_len.is_some() => Chunks::Whole,
            2 => {
                let n = r.count(8)?;
                let mut spans = Vec::with_capacity(n.min(GROW));
                for _ in 0..n {
                    let span = r.u32()?..r.u32()?;
                    if span.start > span.end || content_len < Some(span.end as usize) {
                        return Err(IndexError::Malformed("passage span"));
                    }
                    spans.push(span);
                }
                Chunks::Split(spans)
            }
            _ => return Err(IndexError::Malformed("passage record")),
        });
        documents.push(d);
    }
    let n = r.count(8)?;
    let mut glossary = Vec::with_capacity(n.min(GROW));
    for _ in 0..n {
        let word = r.str()?;
        let k = r.count(4)?;
        let translations = (0..k).map(|_| r.str()).collect::<Result<_, _>>()?;
        glossary.push((word, translations));
    }
    Ok((
        KnowledgeBase {
            documents,
            glossary,
        },
        chunks,
    ))
}
