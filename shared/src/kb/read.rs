//! Knowledge-base JSON read one document at a time.
//!
//! Parsed whole into a [`Value`], a knowledge base's text would be held three times at the
//! peak: the input, the tree of values, and the documents taken from it (a large one's
//! content moves, but the tree's maps and small strings stay until the end). Here the top level is
//! walked with serde's visitors instead: each document is parsed into a `Value` on its
//! own, validated and moved into its `Document` by [`Collector::add`], and dropped before
//! the next is read. [`KnowledgeBase::from_value`](super::KnowledgeBase::from_value) walks
//! an already parsed value with the same visitors, so the two give the same result,
//! problems included.

use super::{Collector, Top};
use serde::de::{self, DeserializeSeed, Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor};
use serde_json::Value;
use std::fmt;

/// Reads the top level of `text`, validating each document as it goes. Only malformed
/// JSON is an error here; JSON of the wrong shape becomes problems later, as a `Value`'s
/// would.
pub(super) fn top_level(text: &str) -> serde_json::Result<Top> {
    let mut de = serde_json::Deserializer::from_str(text);
    let top = de.deserialize_any(TopVisitor)?;
    de.end()?;
    Ok(top)
}

/// The top level of an already parsed value, read the same way: each document is copied
/// out of it on its own and validated before the next, instead of the whole tree at once.
pub(super) fn top_level_of(value: &Value) -> serde_json::Result<Top> {
    value.deserialize_any(TopVisitor)
}

/// Answers `fallback` for every JSON value but arrays and objects (`null`, booleans,
/// numbers, strings).
macro_rules! scalars_are {
    ($fallback:expr) => {
        fn visit_unit<E: de::Error>(self) -> Result<Self::Value, E> {
            Ok($fallback)
        }
        fn visit_bool<E: de::Error>(self, _: bool) -> Result<Self::Value, E> {
            Ok($fallback)
        }
        fn visit_i64<E: de::Error>(self, _: i64) -> Result<Self::Value, E> {
            Ok($fallback)
        }
        fn visit_u64<E: de::Error>(self, _: u64) -> Result<Self::Value, E> {
            Ok($fallback)
        }
        fn visit_f64<E: de::Error>(self, _: f64) -> Result<Self::Value, E> {
            Ok($fallback)
        }
        fn visit_str<E: de::Error>(self, _: &str) -> Result<Self::Value, E> {
            Ok($fallback)
        }
    };
}

/// The documents of an array, read one at a time.
fn collect<'de, A: SeqAccess<'de>>(mut seq: A) -> Result<Collector, A::Error> {
    let mut c = Collector {
        // Known for a parsed value; text streams in without a count.
        documents: Vec::with_capacity(seq.size_hint().unwrap_or(0)),
        ..Collector::default()
    };
    while let Some(mut doc) = seq.next_element::<Value>()? {
        c.add(&mut doc);
    }
    Ok(c)
}

struct TopVisitor;

impl<'de> Visitor<'de> for TopVisitor {
    type Value = Top;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a knowledge base")
    }

    scalars_are!(Top::Other);

    fn visit_seq<A: SeqAccess<'de>>(self, seq: A) -> Result<Top, A::Error> {
        Ok(Top::Documents(collect(seq)?))
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Top, A::Error> {
        let (mut documents, mut glossary) = (None, None);
        // A key given twice counts as its last value, as in a parsed `Value`.
        while let Some(key) = map.next_key::<String>()? {
            match key.as_str() {
                "documents" => documents = Some(map.next_value_seed(DocumentsSeed)?),
                "glossary" => glossary = Some(map.next_value::<Value>()?),
                _ => {
                    map.next_value::<IgnoredAny>()?;
                }
            }
        }
        Ok(Top::Object {
            documents,
            glossary,
        })
    }
}

/// The value of `documents`: its documents when it is an array, else `None`.
struct DocumentsSeed;

impl<'de> DeserializeSeed<'de> for DocumentsSeed {
    type Value = Option<Collector>;

    fn deserialize<D: Deserializer<'de>>(self, de: D) -> Result<Self::Value, D::Error> {
        de.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for DocumentsSeed {
    type Value = Option<Collector>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("an array of documents")
    }

    scalars_are!(None);

    fn visit_seq<A: SeqAccess<'de>>(self, seq: A) -> Result<Self::Value, A::Error> {
        collect(seq).map(Some)
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
        while map.next_entry::<IgnoredAny, IgnoredAny>()?.is_some() {}
        Ok(None)
    }
}
