//! Putting the knowledge base together: extracted publications and pages, then the
//! owner's hand-kept JSON merged over them, in a deterministic order with a content hash
//! per entry.
//!
//! Order: publications (BibTeX file order), then hand-kept entries that match nothing
//! extracted (their file order), then pages by front matter `weight` and URL path.
//! Document order breaks score ties in retrieval, so curated entries come before the bulk
//! of pages.

use std::collections::HashMap;
use std::path::Path;

use serde::Serialize;
use serde_json::{Map, Value};

use super::entry::Entry;
use super::ids::short_hash;
use super::page::Page;
use super::Report;

/// A hand-kept knowledge-base file: documents (whole entries or overrides) and glossary.
#[derive(Debug, Default)]
pub(crate) struct HandKept {
    /// Documents, each with at least an `id`.
    documents: Vec<Map<String, Value>>,
    /// Glossary entries.
    glossary: Map<String, Value>,
}

impl HandKept {
    /// Reads a hand-kept file: `{"documents": [...], "glossary": {...}}` or a bare array.
    pub(crate) fn read(path: &Path) -> Result<Self, String> {
        let text = std::fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))?;
        Self::parse(&text).map_err(|e| format!("{}: {e}", path.display()))
    }

    fn parse(text: &str) -> Result<Self, String> {
        let value: Value = serde_json::from_str(text).map_err(|e| e.to_string())?;
        let (docs, glossary) = match value {
            Value::Array(docs) => (docs, Map::new()),
            Value::Object(mut top) => {
                let docs = match top.remove("documents") {
                    None | Some(Value::Null) => Vec::new(),
                    Some(Value::Array(d)) => d,
                    Some(_) => return Err("\"documents\" must be an array".to_owned()),
                };
                let glossary = match top.remove("glossary") {
                    None | Some(Value::Null) => Map::new(),
                    Some(Value::Object(g)) => g,
                    Some(_) => return Err("\"glossary\" must be an object".to_owned()),
                };
                (docs, glossary)
            }
            _ => return Err("must be an object with \"documents\" or an array".to_owned()),
        };
        let mut documents = Vec::new();
        for (i, d) in docs.into_iter().enumerate() {
            match d {
                Value::Object(m) if m.get("id").is_some_and(Value::is_string) => documents.push(m),
                _ => {
                    return Err(format!(
                        "documents[{i}] must be an object with a string \"id\""
                    ))
                }
            }
        }
        Ok(Self {
            documents,
            glossary,
        })
    }
}

/// The knowledge base as written.
#[derive(Debug, Serialize)]
pub(crate) struct Output {
    /// The documents, in output order.
    pub(crate) documents: Vec<Entry>,
    /// The glossary (left out when empty).
    #[serde(skip_serializing_if = "Map::is_empty")]
    pub(crate) glossary: Map<String, Value>,
}

impl Output {
    /// The bytes written: pretty JSON with a final newline; the same input always gives
    /// the same bytes.
    pub(crate) fn to_bytes(&self) -> Vec<u8> {
        let mut bytes = serde_json::to_vec_pretty(self).unwrap_or_default();
        bytes.push(b'\n');
        bytes
    }
}

/// Merges everything into the output.
pub(crate) fn assemble(
    publications: Vec<Entry>,
    mut pages: Vec<Page>,
    hand: Vec<HandKept>,
    report: &mut Report,
) -> Output {
    let mut documents: Vec<Entry> = Vec::new();
    let mut index: HashMap<String, usize> = HashMap::new();
    for p in publications {
        if index.contains_key(&p.id) {
            report.warn(format!(
                "publication {} appears twice; kept the first",
                p.id
            ));
            continue;
        }
        index.insert(p.id.clone(), documents.len());
        documents.push(p);
    }

    // Pages sorted first, so that which of two colliding pages keeps the plain id does
    // not depend on the order sources were read in.
    pages.sort_by(|a, b| {
        (a.weight.unwrap_or(i64::MAX), a.path(), &a.url).cmp(&(
            b.weight.unwrap_or(i64::MAX),
            b.path(),
            &b.url,
        ))
    });
    let mut page_entries = Vec::new();
    let mut page_urls: HashMap<String, String> = HashMap::new();
    // Each page goes as its entry is made, so the two are not held in full at once.
    for page in pages {
        let mut entry = page.to_entry();
        match page_urls.get(&entry.id) {
            Some(url) if *url == page.url => {
                report.note(format!(
                    "{} was found twice (site and Markdown); kept the first",
                    page.url
                ));
                continue;
            }
            Some(_) => entry.id = format!("{}_{}", entry.id, short_hash(&page.url)),
            None => {}
        }
        if index.contains_key(&entry.id) || page_urls.contains_key(&entry.id) {
            report.warn(format!("{}: id {} is taken; left out", page.url, entry.id));
            continue;
        }
        page_urls.insert(entry.id.clone(), page.url.clone());
        page_entries.push(entry);
    }

    let mut glossary = Map::new();
    let mut appended: Vec<Entry> = Vec::new();
    let page_index: HashMap<String, usize> = page_entries
        .iter()
        .enumerate()
        .map(|(i, e)| (e.id.clone(), i))
        .collect();
    let mut appended_index: HashMap<String, usize> = HashMap::new();
    for file in hand {
        for doc in file.documents {
            let id = doc
                .get("id")
                .and_then(Value::as_str)
                .unwrap_or_default()
                .to_owned();
            let target = if let Some(&i) = index.get(&id) {
                &mut documents[i]
            } else if let Some(&i) = page_index.get(&id) {
                &mut page_entries[i]
            } else {
                let i = *appended_index.entry(id.clone()).or_insert_with(|| {
                    let doc_type = doc.get("type").and_then(Value::as_str).unwrap_or("page");
                    appended.push(Entry::new(id.clone(), doc_type));
                    appended.len() - 1
                });
                &mut appended[i]
            };
            // Field by field: what the owner wrote wins, `null` deletes, the rest of
            // what was extracted stays.
            for (k, v) in doc {
                if k != "id" {
                    target.set(&k, v);
                }
            }
        }
        glossary.extend(file.glossary);
    }
    documents.extend(appended);
    documents.extend(page_entries);
    Output {
        documents: documents
            .into_iter()
            .map(Entry::with_content_hash)
            .collect(),
        glossary,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn page(url: &str, title: &str, weight: Option<i64>) -> Page {
        Page {
            url: url.into(),
            title: title.into(),
            content: format!("About {title}."),
            weight,
            ..Page::default()
        }
    }

    fn publication(id: &str) -> Entry {
        let mut e = Entry::new(id, "publication");
        e.set_str("title", Some(format!("Paper {id}")));
        e
    }

    #[test]
    fn hand_kept_entries_override_field_by_field_and_add_new_entries() {
        let hand = HandKept::parse(
            r#"{"documents": [
                {"id": "pub_a", "title": "Better title", "summary": null},
                {"id": "project_x", "type": "github_project", "name": "X", "url": "https://github.com/o/x"},
                {"id": "page_about", "keywords": ["bio"]}
              ],
              "glossary": {"安翔": ["xiang an"]}}"#,
        )
        .unwrap();
        let mut a = publication("pub_a");
        a.set_str("summary", Some("old"));
        a.set_str("venue", Some("CVPR"));
        let out = assemble(
            vec![a, publication("pub_b")],
            vec![page("https://ex.org/about/", "About", None)],
            vec![hand],
            &mut Report::default(),
        );
        let ids: Vec<&str> = out.documents.iter().map(|d| d.id.as_str()).collect();
        assert_eq!(ids, ["pub_a", "pub_b", "project_x", "page_about"]);
        let a = &out.documents[0];
        assert_eq!(a.get_str("title"), Some("Better title"));
        assert_eq!(a.get_str("venue"), Some("CVPR"));
        assert_eq!(a.get("summary"), None);
        assert_eq!(
            out.documents[3].get("keywords"),
            Some(&serde_json::json!(["bio"]))
        );
        assert_eq!(out.documents[3].get_str("title"), Some("About"));
        assert_eq!(out.glossary["安翔"], serde_json::json!(["xiang an"]));
        assert!(out
            .documents
            .iter()
            .all(|d| d.get_str("content_hash").is_some()));
    }

    #[test]
    fn pages_are_ordered_by_weight_then_path_and_colliding_ids_stay_distinct() {
        let out = assemble(
            vec![],
            vec![
                page("https://ex.org/z/", "Z", None),
                page("https://ex.org/a-b/", "AB dash", None),
                page("https://ex.org/a_b/", "AB underscore", None),
                page("https://ex.org/last/", "Weighted", Some(1)),
                page("https://ex.org/z/", "Z again", None),
            ],
            vec![],
            &mut Report::default(),
        );
        let ids: Vec<&str> = out.documents.iter().map(|d| d.id.as_str()).collect();
        assert_eq!(ids.len(), 4, "{ids:?}");
        assert_eq!(ids[0], "page_last");
        assert_eq!(ids[1], "page_a_b");
        assert!(ids[2].starts_with("page_a_b_"), "{ids:?}");
        assert_eq!(ids[3], "page_z");
    }

    #[test]
    fn hand_kept_files_without_ids_are_rejected() {
        assert!(HandKept::parse(r#"[{"type": "page"}]"#)
            .unwrap_err()
            .contains("documents[0]"));
        assert!(HandKept::parse(r#"{"documents": {}}"#).is_err());
        assert!(HandKept::parse("nope").is_err());
    }
}
