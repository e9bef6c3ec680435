//! The knowledge base itself in the index: every document field, each document's content
//! passages and the glossary, so a function serves them without downloading or parsing the
//! JSON. They are written into a deflated section (most of an index's bytes are this text,
//! which deflate keeps 0.16 to 0.32 of), its blocks cut between documents. Strings sit
//! inline, in the order they are read, so loading streams each one into its own `String`
//! without ever holding the whole table or the whole inflated section.
//!
//! Documents: their number, then per document its id, its type and its other string
//! fields in `STRING_FIELDS` order (each a string or none), the number of keywords and
//! the keywords, the number of extra fields and a (name, value) pair of strings for each,
//! the number of alternate URLs and the URLs, then its passages: 0 (no content), 1 (the trimmed content is the passage) or 2
//! followed by a count and each passage's (start, end) byte offsets in the content.
//! Glossary: the number of entries, then per entry its word, a count and the translations.

use super::codec::{Deflater, Input};
use super::IndexError;
use crate::kb::{Document, KnowledgeBase, STRING_FIELDS};
use crate::search::Chunks;

/// Writes the documents, their passages and the glossary, into a deflated section whose
/// blocks end between two documents or entries.
pub(super) fn write(kb: &KnowledgeBase, chunks: &[Chunks], w: &mut Deflater<'_>) {
    w.u32(kb.documents.len() as u32);
    for (d, c) in kb.documents.iter().zip(chunks) {
        w.str(&d.id);
        w.str(&d.doc_type);
        for &field in STRING_FIELDS {
            w.opt_str(crate::kb::string_field(d, field));
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

/// The fewest bytes a document's record takes: the lengths of its strings, its three
/// counts and its passage kind.
const MIN_RECORD: u64 = 4 * (2 + STRING_FIELDS.len() as u64 + 4);

/// Most items reserved ahead of a count; past it, a list grows as its items arrive.
const GROW: usize = 1024;

/// Reads what [`write`] wrote: the knowledge base and each document's passages.
pub(super) fn read(r: &mut Input<'_>) -> Result<(KnowledgeBase, Vec<Chunks>), IndexError> {
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
        for &field in STRING_FIELDS {
            *crate::kb::string_slot(&mut d, field) = r.opt_str()?;
        }
        let n = r.count(4)?;
        d.keywords = (0..n).map(|_| r.str()).collect::<Result<_, _>>()?;
        let n = r.count(8)?;
        d.extra = (0..n)
            .map(|_| Ok((r.str()?, r.str()?)))
            .collect::<Result<_, IndexError>>()?;
        let n = r.count(4)?;
        d.alternates = (0..n).map(|_| r.str()).collect::<Result<_, _>>()?;
        let content = d.content.as_deref();
        chunks.push(match r.u32()? {
            0 if content.is_none_or(|c| c.trim().is_empty()) => Chunks::None,
            1 if content.is_some() => Chunks::Whole,
            2 => {
                let n = r.count(8)?;
                let mut spans = Vec::with_capacity(n.min(GROW));
                for _ in 0..n {
                    let span = r.u32()?..r.u32()?;
                    // Served as slices of the content: on character boundaries, in it.
                    let slice = content.and_then(|c| c.get(span.start as usize..span.end as usize));
                    if slice.is_none() {
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
