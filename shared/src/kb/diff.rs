//! What changed between two versions of a knowledge base: documents added, changed and
//! removed, matched by id and compared by a fingerprint of their JSON.
//!
//! The ingest function reports this for every write (and audits it), and `rag ingest`
//! shows it before uploading; both fingerprint documents with [`fingerprint`], so a
//! summary fetched from the function compares with a file read locally.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::source::content_version;

/// One document's id, type and content fingerprint.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct DocSummary {
    /// The document's id.
    pub id: String,
    /// The document's `type` (empty when missing).
    #[serde(rename = "type")]
    pub doc_type: String,
    /// [`fingerprint`] of the document's JSON.
    pub hash: String,
}

/// Documents added, changed and removed, each list in knowledge-base order (`removed` in
/// the old version's order).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct KbDiff {
    /// Ids only in the new version.
    pub added: Vec<String>,
    /// Ids in both whose JSON differs.
    pub changed: Vec<String>,
    /// Ids only in the old version.
    pub removed: Vec<String>,
}

impl KbDiff {
    /// Compares two versions' document summaries by id.
    pub fn between(old: &[DocSummary], new: &[DocSummary]) -> Self {
        let old_by_id: std::collections::HashMap<&str, &str> = old
            .iter()
            .map(|d| (d.id.as_str(), d.hash.as_str()))
            .collect();
        let new_ids: std::collections::HashSet<&str> = new.iter().map(|d| d.id.as_str()).collect();
        let mut diff = Self::default();
        for d in new {
            match old_by_id.get(d.id.as_str()) {
                None => diff.added.push(d.id.clone()),
                Some(h) if *h != d.hash => diff.changed.push(d.id.clone()),
                Some(_) => {}
            }
        }
        diff.removed = old
            .iter()
            .filter(|d| !new_ids.contains(d.id.as_str()))
            .map(|d| d.id.clone())
            .collect();
        diff
    }

    /// True when no document was added, changed or removed.
    pub fn is_empty(&self) -> bool {
        self.added.is_empty() && self.changed.is_empty() && self.removed.is_empty()
    }

    /// At most `cap` ids, added then changed then removed, each group cut short once the
    /// cap is reached, and how many of each group are listed (an audit record names the
    /// documents a write touched, and a DynamoDB item holds at most 400 KB: 10k ids of up
    /// to 200 characters do not fit).
    pub fn ids_up_to(&self, cap: usize) -> (Vec<String>, [usize; 3]) {
        let mut out = Vec::with_capacity(cap.min(self.ids_count()));
        let mut listed = [0; 3];
        for (group, n) in [&self.added, &self.changed, &self.removed]
            .into_iter()
            .zip(&mut listed)
        {
            *n = group.len().min(cap - out.len());
            out.extend(group[..*n].iter().cloned());
        }
        (out, listed)
    }

    /// How many ids are involved (added, changed and removed).
    pub fn ids_count(&self) -> usize {
        self.added.len() + self.changed.len() + self.removed.len()
    }

    /// Every id involved: added, then changed, then removed.
    pub fn ids(&self) -> Vec<String> {
        [&self.added, &self.changed, &self.removed]
            .into_iter()
            .flatten()
            .cloned()
            .collect()
    }
}

/// The documents of knowledge-base JSON: the `documents` array of the seed format, or the
/// bare array.
pub fn documents_of(value: &Value) -> Option<&Vec<Value>> {
    match value {
        Value::Array(docs) => Some(docs),
        Value::Object(top) => top.get("documents").and_then(Value::as_array),
        _ => None,
    }
}

/// Summaries of the documents that have a string id, in order (best effort: anything else
/// is skipped, so an invalid old version still diffs).
pub fn summaries(value: &Value) -> Vec<DocSummary> {
    documents_of(value)
        .into_iter()
        .flatten()
        .filter_map(|doc| {
            let id = doc.get("id")?.as_str()?;
            Some(DocSummary {
                id: id.to_owned(),
                doc_type: doc
                    .get("type")
                    .and_then(Value::as_str)
                    .unwrap_or_default()
                    .to_owned(),
                hash: fingerprint(doc),
            })
        })
        .collect()
}

/// The fingerprint of everything in knowledge-base JSON but its documents: the glossary
/// (and any other top-level field). A bare array has nothing else, like `{}`.
pub fn rest_fingerprint(value: &Value) -> String {
    match value {
        Value::Object(top) => {
            let mut rest = top.clone();
            rest.remove("documents");
            fingerprint(&Value::Object(rest))
        }
        _ => fingerprint(&Value::Object(serde_json::Map::new())),
    }
}

/// A document's fingerprint: [`content_version`] of its JSON with object keys sorted, so
/// key order and whitespace do not count as changes.
pub fn fingerprint(doc: &Value) -> String {
    let mut out = String::new();
    canonical(doc, &mut out);
    content_version(out.as_bytes())
}

fn canonical(v: &Value, out: &mut String) {
    match v {
        Value::Object(map) => {
            let mut keys: Vec<&String> = map.keys().collect();
            keys.sort();
            out.push('{');
            for (i, k) in keys.into_iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                out.push_str(&Value::String(k.clone()).to_string());
                out.push(':');
                if let Some(item) = map.get(k) {
                    canonical(item, out);
                }
            }
            out.push('}');
        }
        Value::Array(items) => {
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                canonical(item, out);
            }
            out.push(']');
        }
        scalar => out.push_str(&scalar.to_string()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_past_the_cap_are_cut_short_group_by_group() {
        let ids = |p: &str, n: usize| (0..n).map(|i| format!("{p}{i}")).collect::<Vec<_>>();
        let diff = KbDiff {
            added: ids("a", 3),
            changed: ids("c", 2),
            removed: ids("r", 4),
        };
        assert_eq!(diff.ids_up_to(100), (diff.ids(), [3, 2, 4]));
        let (some, listed) = diff.ids_up_to(4);
        assert_eq!(
            (some, listed),
            (
                vec!["a0".into(), "a1".into(), "a2".into(), "c0".into()],
                [3, 1, 0]
            )
        );
        assert_eq!(diff.ids_up_to(0), (Vec::new(), [0, 0, 0]));
    }
    use serde_json::json;

    #[test]
    fn diff_reports_added_changed_and_removed_ids_in_order() {
        let old = json!({"documents": [
            {"id": "a", "type": "page", "title": "A"},
            {"id": "b", "type": "page", "title": "B"},
            {"id": "c", "type": "page", "title": "C"}
        ]});
        let new = json!([
            {"title": "A", "type": "page", "id": "a"},
            {"id": "d", "type": "page", "title": "D"},
            {"id": "c", "type": "page", "title": "C2"}
        ]);
        let diff = KbDiff::between(&summaries(&old), &summaries(&new));
        assert_eq!(diff.added, ["d"]);
        assert_eq!(diff.changed, ["c"]);
        assert_eq!(diff.removed, ["b"]);
        assert_eq!(diff.ids(), ["d", "c", "b"]);
        assert!(KbDiff::between(&summaries(&old), &summaries(&old)).is_empty());
    }

    #[test]
    fn fingerprints_ignore_key_order_but_not_values() {
        let a = json!({"id": "x", "n": {"b": 1, "a": [1, 2]}});
        let b = json!({"n": {"a": [1, 2], "b": 1}, "id": "x"});
        assert_eq!(fingerprint(&a), fingerprint(&b));
        assert_ne!(
            fingerprint(&a),
            fingerprint(&json!({"id": "x", "n": {"a": [2, 1], "b": 1}}))
        );
    }

    #[test]
    fn rest_fingerprints_see_the_glossary_but_not_the_documents() {
        let a = json!({"documents": [{"id": "a"}], "glossary": {"x": ["y"]}});
        let b = json!({"glossary": {"x": ["y"]}, "documents": [{"id": "b"}]});
        assert_eq!(rest_fingerprint(&a), rest_fingerprint(&b));
        let c = json!({"documents": [{"id": "a"}], "glossary": {"x": ["z"]}});
        assert_ne!(rest_fingerprint(&a), rest_fingerprint(&c));
        assert_eq!(
            rest_fingerprint(&json!([{"id": "a"}])),
            rest_fingerprint(&json!({"documents": []}))
        );
    }

    #[test]
    fn summaries_skip_documents_without_a_string_id() {
        let s = summaries(&json!([{"id": 1}, "x", {"id": "ok"}]));
        assert_eq!(s.len(), 1);
        assert_eq!((s[0].id.as_str(), s[0].doc_type.as_str()), ("ok", ""));
        assert!(summaries(&json!("nothing")).is_empty());
    }
}
