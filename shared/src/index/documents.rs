//! The knowledge base itself in the index: every document field, each document's content
//! passages and the glossary, as one string table and three `u32` record streams, so a
//! function serves them without downloading or parsing the JSON.
//!
//! A document's record: its id, its type and its other string fields in `STRING_FIELDS`
//! order (a string number, or `u32::MAX` for none), the number of keywords and theirs, the
//! number of extra fields and a (name, value) pair of string numbers for each. A document's
//! passages: 0 (no content), 1 (the trimmed content is the passage) or 2 followed by a
//! count and the passages' strings. The
//! glossary: the number of entries, then per entry its word, a count and the translations.

use super::codec::{Reader, Stream, Strings, StringsWriter, Writer};
use super::IndexError;
use crate::kb::{Document, KnowledgeBase, STRING_FIELDS};
use crate::search::Chunks;

/// Writes the documents, their passages and the glossary.
pub(super) fn write(kb: &KnowledgeBase, chunks: &[Chunks], w: &mut Writer) {
    let mut strings = StringsWriter::default();
    let mut docs = Vec::new();
    for d in &kb.documents {
        docs.push(strings.push(&d.id));
        docs.push(strings.push(&d.doc_type));
        for &field in STRING_FIELDS {
            docs.push(strings.push_opt(crate::kb::string_field(d, field)));
        }
        docs.push(d.keywords.len() as u32);
        docs.extend(d.keywords.iter().map(|k| strings.push(k)));
        docs.push(d.extra.len() as u32);
        for (k, v) in &d.extra {
            docs.push(strings.push(k));
            docs.push(strings.push(v));
        }
    }
    let mut passages = Vec::new();
    for c in chunks {
        match c {
            Chunks::None => passages.push(0),
            Chunks::Whole => passages.push(1),
            Chunks::Split(parts) => {
                passages.extend([2, parts.len() as u32]);
                passages.extend(parts.iter().map(|p| strings.push(p)));
            }
        }
    }
    let mut glossary = vec![kb.glossary.len() as u32];
    for (word, translations) in &kb.glossary {
        glossary.extend([strings.push(word), translations.len() as u32]);
        glossary.extend(translations.iter().map(|t| strings.push(t)));
    }
    strings.write(w);
    w.u32(kb.documents.len() as u32);
    w.u32s(&docs);
    w.u32s(&passages);
    w.u32s(&glossary);
}

/// Reads what [`write`] wrote: the knowledge base and each document's passages.
pub(super) fn read(r: &mut Reader<'_>) -> Result<(KnowledgeBase, Vec<Chunks>), IndexError> {
    let strings = Strings::read(r)?;
    let n_docs = r.u32()? as usize;
    let docs = r.u32s()?;
    let passages = r.u32s()?;
    let glossary = r.u32s()?;
    // Each document takes at least its 2 + fields + 2 counts, so a count past that is
    // caught before anything is reserved for it.
    if n_docs > docs.len() / (STRING_FIELDS.len() + 4) {
        return Err(IndexError::Malformed("document count"));
    }
    let mut s = Stream::new(&docs);
    let owned = |i: u32| strings.get(i).map(str::to_owned);
    let mut documents = Vec::with_capacity(n_docs);
    for _ in 0..n_docs {
        let mut d = Document {
            id: owned(s.next()?)?,
            doc_type: owned(s.next()?)?,
            ..Document::default()
        };
        for &field in STRING_FIELDS {
            *crate::kb::string_slot(&mut d, field) = strings.get_opt(s.next()?)?.map(str::to_owned);
        }
        let n = s.count()?;
        d.keywords = (0..n).map(|_| owned(s.next()?)).collect::<Result<_, _>>()?;
        let n = s.count()?;
        d.extra = (0..n)
            .map(|_| Ok((owned(s.next()?)?, owned(s.next()?)?)))
            .collect::<Result<_, IndexError>>()?;
        documents.push(d);
    }
    if !s.is_empty() {
        return Err(IndexError::Malformed("values after the last document"));
    }
    let mut s = Stream::new(&passages);
    let mut chunks = Vec::with_capacity(n_docs);
    for d in &documents {
        chunks.push(match s.next()? {
            0 if d.content.as_deref().is_none_or(|c| c.trim().is_empty()) => Chunks::None,
            1 if d.content.is_some() => Chunks::Whole,
            2 => {
                let n = s.count()?;
                let parts = (0..n).map(|_| owned(s.next()?)).collect::<Result<_, _>>()?;
                Chunks::Split(parts)
            }
            _ => return Err(IndexError::Malformed("passage record")),
        });
    }
    if !s.is_empty() {
        return Err(IndexError::Malformed(
            "values after the last passage record",
        ));
    }
    let mut s = Stream::new(&glossary);
    let n = s.count()?;
    let mut entries = Vec::with_capacity(n);
    for _ in 0..n {
        let word = owned(s.next()?)?;
        let k = s.count()?;
        let translations = (0..k).map(|_| owned(s.next()?)).collect::<Result<_, _>>()?;
        entries.push((word, translations));
    }
    if !s.is_empty() {
        return Err(IndexError::Malformed("values after the glossary"));
    }
    Ok((
        KnowledgeBase {
            documents,
            glossary: entries,
        },
        chunks,
    ))
}
