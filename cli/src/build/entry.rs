//! One knowledge-base entry as `rag build` writes it: fields in a fixed order, so the
//! same entry always serializes to the same bytes, and a content hash of those bytes.

use serde::ser::{Serialize, SerializeMap, Serializer};
use serde_json::{Map, Value};
use sha2::{Digest, Sha256};

/// The field recording a hash of the rest of the entry (see [`Entry::with_content_hash`]).
pub(crate) const CONTENT_HASH: &str = "content_hash";

/// Where fields go in the output, before any other field (others follow sorted by name).
/// The order follows DESIGN §4: what an entry is, then its links, then its text.
const FIELD_ORDER: &[&str] = &[
    "id",
    "type",
    "kind",
    "title",
    "name",
    "authors",
    "venue",
    "year",
    "date",
    "url",
    "alternates",
    "paper_url",
    "code_url",
    "stars",
    "role",
    "lang",
    "description",
    "summary",
    "keywords",
    "content",
];

/// A knowledge-base document under construction: an id, a type and JSON fields.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Entry {
    /// The document id (stable across runs: derived from a URL path or a citation key).
    pub(crate) id: String,
    /// Everything but the id, `type` included.
    fields: Map<String, Value>,
}

impl Entry {
    /// A new entry of this type.
    pub(crate) fn new(id: impl Into<String>, doc_type: &str) -> Self {
        let mut fields = Map::new();
        fields.insert("type".to_owned(), Value::String(doc_type.to_owned()));
        Self {
            id: id.into(),
            fields,
        }
    }

    /// Sets a string field; an empty or blank value leaves the field out.
    pub(crate) fn set_str(&mut self, key: &str, value: Option<impl Into<String>>) {
        match value.map(Into::into) {
            Some(v) if !v.trim().is_empty() => {
                self.fields.insert(key.to_owned(), Value::String(v));
            }
            _ => {
                self.fields.remove(key);
            }
        }
    }

    /// Sets any JSON value; `null` removes the field (how hand-kept JSON deletes one).
    pub(crate) fn set(&mut self, key: &str, value: Value) {
        if key == "id" {
            if let Value::String(id) = value {
                self.id = id;
            }
        } else if value.is_null() {
            self.fields.remove(key);
        } else {
            self.fields.insert(key.to_owned(), value);
        }
    }

    /// Sets `keywords` (left out when empty).
    pub(crate) fn set_keywords(&mut self, keywords: Vec<String>) {
        let kws: Vec<Value> = keywords
            .into_iter()
            .filter(|k| !k.trim().is_empty())
            .map(Value::String)
            .collect();
        self.set(
            "keywords",
            if kws.is_empty() {
                Value::Null
            } else {
                Value::Array(kws)
            },
        );
    }

    /// A field's value.
    #[cfg(test)]
    pub(crate) fn get(&self, key: &str) -> Option<&Value> {
        self.fields.get(key)
    }

    /// A string field's value.
    pub(crate) fn get_str(&self, key: &str) -> Option<&str> {
        self.fields.get(key).and_then(Value::as_str)
    }

    /// The entry with [`CONTENT_HASH`] set to a SHA-256 of its other fields as written:
    /// a consumer (or a reviewer of a diff) sees at a glance which entries changed.
    pub(crate) fn with_content_hash(mut self) -> Self {
        self.fields.remove(CONTENT_HASH);
        // Serializing an entry cannot fail: its keys are strings and its values JSON.
        let bytes = serde_json::to_vec(&self).unwrap_or_default();
        let digest = Sha256::digest(&bytes);
        let hex: String = digest[..16].iter().map(|b| format!("{b:02x}")).collect();
        self.fields.insert(
            CONTENT_HASH.to_owned(),
            Value::String(format!("sha256:{hex}")),
        );
        self
    }

    fn ordered_keys(&self) -> Vec<&str> {
        let mut keys: Vec<&str> = FIELD_ORDER
            .iter()
            .copied()
            .filter(|k| *k != "id" && self.fields.contains_key(*k))
            .collect();
        let mut rest: Vec<&str> = self
            .fields
            .keys()
            .map(String::as_str)
            .filter(|k| !FIELD_ORDER.contains(k) && *k != CONTENT_HASH)
            .collect();
        rest.sort_unstable();
        keys.extend(rest);
        if self.fields.contains_key(CONTENT_HASH) {
            keys.push(CONTENT_HASH);
        }
        keys
    }
}

impl Serialize for Entry {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let keys = self.ordered_keys();
        let mut map = s.serialize_map(Some(keys.len() + 1))?;
        map.serialize_entry("id", &self.id)?;
        for k in keys {
            map.serialize_entry(k, &self.fields[k])?;
        }
        map.end()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fields_are_written_in_a_fixed_order_whatever_the_insertion_order() {
        let mut a = Entry::new("p", "page");
        a.set_str("zeta", Some("z"));
        a.set_str("content", Some("body"));
        a.set_str("title", Some("T"));
        let mut b = Entry::new("p", "page");
        b.set_str("title", Some("T"));
        b.set_str("content", Some("body"));
        b.set_str("zeta", Some("z"));
        let (a, b) = (a.with_content_hash(), b.with_content_hash());
        let text = serde_json::to_string(&a).unwrap();
        assert_eq!(text, serde_json::to_string(&b).unwrap());
        assert!(
            text.starts_with(r#"{"id":"p","type":"page","title":"T","content":"body","zeta":"z","content_hash":"sha256:"#),
            "{text}"
        );
    }

    #[test]
    fn the_content_hash_changes_with_any_field() {
        let mut a = Entry::new("p", "page");
        a.set_str("title", Some("T"));
        let h1 = a.clone().with_content_hash();
        a.set_str("title", Some("U"));
        let h2 = a.with_content_hash();
        assert_ne!(h1.get(CONTENT_HASH), h2.get(CONTENT_HASH));
        // Recomputing is idempotent: the old hash is not hashed in.
        assert_eq!(h2.clone().with_content_hash(), h2);
    }

    #[test]
    fn blank_strings_and_nulls_leave_fields_out() {
        let mut e = Entry::new("p", "page");
        e.set_str("title", Some("  "));
        e.set_str("lang", None::<String>);
        e.set("url", Value::Null);
        e.set_keywords(vec![" ".into()]);
        assert_eq!(
            serde_json::to_string(&e).unwrap(),
            r#"{"id":"p","type":"page"}"#
        );
    }
}
