//! `PATCH {"upsert": [docs], "delete": [ids]}`: a change applied to the stored JSON.
//!
//! Documents keep their original JSON (unknown fields included): an upserted document
//! replaces the one with its id in place, or is appended; deleted ids are removed. The
//! result is validated as a whole, and problems inside upserted documents are reported
//! at `upsert[i]...`, where the caller wrote them, not at their index in the result.

use serde::Deserialize;
use serde_json::Value;

use crate::error::{Error, Problem, Problems, Result};
use crate::kb::documents_of;
use crate::kb::KnowledgeBase;

/// A parsed patch request.
#[derive(Debug, Clone, PartialEq)]
pub struct Patch {
    /// Documents to insert or replace (objects with a string `id`).
    pub upsert: Vec<Value>,
    /// Ids to remove.
    pub delete: Vec<String>,
}

/// A patch applied and validated: the new JSON and the knowledge base it holds.
#[derive(Debug, Clone)]
pub struct Patched {
    /// The whole new knowledge-base JSON, in the shape of the old one.
    pub value: Value,
    /// The validated knowledge base.
    pub kb: KnowledgeBase,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct PatchBody {
    #[serde(default)]
    upsert: Vec<Value>,
    #[serde(default)]
    delete: Vec<Value>,
}

impl Patch {
    /// Parses a body; every problem in it is listed.
    pub fn from_json(body: &[u8]) -> Result<Self> {
        let b: PatchBody = serde_json::from_slice(body).map_err(|e| {
            Error::InvalidInput(format!(
                "body must be JSON like {{\"upsert\": [documents], \"delete\": [ids]}}: {e}"
            ))
        })?;
        if b.upsert.is_empty() && b.delete.is_empty() {
            return Err(Error::InvalidInput(
                "nothing to change: send \"upsert\" and/or \"delete\"".into(),
            ));
        }
        let mut problems = Vec::new();
        let mut upserted: Vec<&str> = Vec::new();
        for (i, doc) in b.upsert.iter().enumerate() {
            let path = format!("upsert[{i}]");
            match doc.get("id") {
                _ if !doc.is_object() => problems.push(Problem::new(path, "must be an object")),
                Some(Value::String(id)) => {
                    if let Some(first) = upserted.iter().position(|u| u == id) {
                        problems.push(Problem::new(
                            format!("{path}.id"),
                            format!("{id:?} is already upserted by upsert[{first}]"),
                        ));
                    }
                    upserted.push(id);
                }
                Some(_) => problems.push(Problem::new(format!("{path}.id"), "must be a string")),
                None => problems.push(Problem::new(format!("{path}.id"), "is required")),
            }
        }
        let mut delete = Vec::new();
        for (j, id) in b.delete.iter().enumerate() {
            let path = format!("delete[{j}]");
            match id {
                Value::String(id) if upserted.contains(&id.as_str()) => {
                    problems.push(Problem::new(
                        path,
                        format!("{id:?} is also upserted; do one or the other"),
                    ))
                }
                Value::String(id) if delete.contains(id) => {
                    problems.push(Problem::new(path, format!("{id:?} is listed twice")))
                }
                Value::String(id) => delete.push(id.clone()),
                _ => problems.push(Problem::new(path, "must be a document id (a string)")),
            }
        }
        if !problems.is_empty() {
            return Err(Error::InvalidKb(Problems(problems)));
        }
        Ok(Self {
            upsert: b.upsert,
            delete,
        })
    }

    /// Applies the patch to the current knowledge-base JSON and validates the result.
    ///
    /// Deleting an id the knowledge base lacks is a problem (the caller's picture of it is
    /// wrong); every such id is listed along with the result's validation problems.
    pub fn apply(&self, current: &Value) -> Result<Patched> {
        let docs = documents_of(current).ok_or_else(|| {
            Error::Conflict(
                "the stored knowledge base has no documents array to patch; replace it with PUT"
                    .into(),
            )
        })?;
        let id_of = |d: &Value| d.get("id").and_then(Value::as_str).map(str::to_owned);
        let mut problems: Vec<Problem> = self
            .delete
            .iter()
            .enumerate()
            .filter(|(_, id)| {
                !docs
                    .iter()
                    .any(|d| id_of(d).as_deref() == Some(id.as_str()))
            })
            .map(|(j, id)| {
                Problem::new(format!("delete[{j}]"), format!("no document has id {id:?}"))
            })
            .collect();
        // `origin[k]` is the upsert index that produced result document k, if any.
        let mut result: Vec<Value> = Vec::with_capacity(docs.len() + self.upsert.len());
        let mut origin: Vec<Option<usize>> = Vec::with_capacity(result.capacity());
        for d in docs {
            if !id_of(d).is_some_and(|id| self.delete.contains(&id)) {
                result.push(d.clone());
                origin.push(None);
            }
        }
        for (i, doc) in self.upsert.iter().enumerate() {
            let id = id_of(doc);
            match result.iter().position(|d| id.is_some() && id_of(d) == id) {
                Some(k) => {
                    result[k] = doc.clone();
                    origin[k] = Some(i);
                }
                None => {
                    result.push(doc.clone());
                    origin.push(Some(i));
                }
            }
        }
        let value = match current {
            Value::Object(top) => {
                let mut top = top.clone();
                top.insert("documents".into(), Value::Array(result));
                Value::Object(top)
            }
            _ => Value::Array(result),
        };
        match KnowledgeBase::from_value(&value) {
            Ok(kb) if problems.is_empty() => Ok(Patched { value, kb }),
            Ok(_) => Err(Error::InvalidKb(Problems(problems))),
            Err(Problems(found)) => {
                problems.extend(found.into_iter().map(|p| relocate(p, &origin)));
                Err(Error::InvalidKb(Problems(problems)))
            }
        }
    }
}

/// Rewrites `documents[k]...` to `upsert[i]...` when result document k came from upsert i.
fn relocate(p: Problem, origin: &[Option<usize>]) -> Problem {
    let moved = p
        .path
        .strip_prefix("documents[")
        .and_then(|rest| rest.split_once(']'))
        .and_then(|(k, tail)| {
            let i = (*origin.get(k.parse::<usize>().ok()?)?)?;
            Some(format!("upsert[{i}]{tail}"))
        });
    match moved {
        Some(path) => Problem { path, ..p },
        None => p,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn current() -> Value {
        json!({"documents": [
            {"id": "a", "type": "page", "title": "A", "custom": 7},
            {"id": "b", "type": "page", "title": "B"}
        ], "glossary": {"安翔": ["xiang an"]}})
    }

    fn problems(err: Error) -> Vec<(String, String)> {
        match err {
            Error::InvalidKb(p) => p.0.into_iter().map(|p| (p.path, p.message)).collect(),
            other => panic!("expected problems, got {other}"),
        }
    }

    #[test]
    fn upserts_replace_in_place_or_append_and_deletes_remove() {
        let patch = Patch::from_json(
            br#"{"upsert": [{"id": "c", "type": "page", "title": "C"},
                            {"id": "a", "type": "page", "title": "A2"}],
                 "delete": ["b"]}"#,
        )
        .unwrap();
        let out = patch.apply(&current()).unwrap();
        assert_eq!(
            out.value,
            json!({"documents": [
                {"id": "a", "type": "page", "title": "A2"},
                {"id": "c", "type": "page", "title": "C"}
            ], "glossary": {"安翔": ["xiang an"]}})
        );
        assert_eq!(out.kb.glossary.len(), 1);
        let bare = Patch::from_json(br#"{"delete": ["a"]}"#)
            .unwrap()
            .apply(&json!([{"id": "a", "type": "page", "title": "A"}, {"id": "b", "type": "page", "title": "B", "x": 1}]))
            .unwrap();
        assert_eq!(
            bare.value,
            json!([{"id": "b", "type": "page", "title": "B", "x": 1}])
        );
    }

    #[test]
    fn unknown_delete_ids_are_all_listed() {
        let err = Patch::from_json(br#"{"delete": ["zz", "a", "yy"]}"#)
            .unwrap()
            .apply(&current())
            .unwrap_err();
        assert_eq!(
            problems(err),
            [
                (
                    "delete[0]".to_owned(),
                    "no document has id \"zz\"".to_owned()
                ),
                (
                    "delete[2]".to_owned(),
                    "no document has id \"yy\"".to_owned()
                ),
            ]
        );
    }

    #[test]
    fn problems_in_upserted_documents_point_at_the_upsert() {
        let err = Patch::from_json(
            br#"{"upsert": [{"id": "b", "type": "page"},
                            {"id": "n", "type": "page", "title": "N", "url": "javascript:x"}]}"#,
        )
        .unwrap()
        .apply(&current())
        .unwrap_err();
        let paths: Vec<String> = problems(err).into_iter().map(|(p, _)| p).collect();
        assert_eq!(paths, ["upsert[0].title", "upsert[1].url"]);
    }

    #[test]
    fn malformed_patches_are_rejected_with_every_problem() {
        for (body, needle) in [
            (&br#"{}"#[..], "nothing to change"),
            (br#"{"upsert": [], "delete": []}"#, "nothing to change"),
            (br#"{"replace": []}"#, "unknown field"),
            (br#"{"delete": "a"}"#, "invalid type"),
            (b"[1]", "must be JSON like"),
        ] {
            let err = Patch::from_json(body).unwrap_err().to_string();
            assert!(
                err.contains(needle),
                "{}: {err}",
                String::from_utf8_lossy(body)
            );
        }
        let err = Patch::from_json(
            br#"{"upsert": [5, {"type": "page"}, {"id": 1}, {"id": "x"}, {"id": "x"}],
                 "delete": ["x", 3, "y", "y"]}"#,
        )
        .unwrap_err();
        let paths: Vec<String> = problems(err).into_iter().map(|(p, _)| p).collect();
        assert_eq!(
            paths,
            [
                "upsert[0]",
                "upsert[1].id",
                "upsert[2].id",
                "upsert[4].id",
                "delete[0]",
                "delete[1]",
                "delete[3]"
            ]
        );
    }

    #[test]
    fn a_stored_value_without_documents_cannot_be_patched() {
        let patch = Patch::from_json(br#"{"delete": ["a"]}"#).unwrap();
        assert!(matches!(patch.apply(&json!("x")), Err(Error::Conflict(_))));
    }
}
