//! Search requests as they arrive: one query (query string or JSON body) or a batch of
//! them, validated into [`SearchRequest`]s.

use serde::Deserialize;
use serde_json::Value;

use super::filter::{Filters, Order};
use super::{MAX_QUERY_CHARS, MAX_TOP_K};
use crate::error::{Error, Result};

/// Most queries in one batch.
pub const MAX_BATCH: usize = 50;

/// A validated search request.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct SearchRequest {
    /// The query text, trimmed.
    pub query: String,
    /// How many hits at most (a listing returns every match, up to [`MAX_TOP_K`]).
    pub top_k: usize,
    /// Conditions hits must meet (`type`, `year`, `venue`, ...; see [`Filters`]).
    pub filters: Filters,
    /// The order asked for with `sort`, if any.
    pub sort: Option<Order>,
}

/// One search or a batch, as a POST body asks.
#[derive(Debug, Clone, PartialEq)]
// One value per request, moved once: boxing the single request would buy nothing.
#[allow(clippy::large_enum_variant)]
pub enum SearchCall {
    /// `{"query": ...}`.
    One(SearchRequest),
    /// `{"queries": [...]}`: answered as `{"results": [...]}`, one response per query.
    Batch(Vec<SearchRequest>),
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct SearchBody {
    query: Option<Value>,
    top_k: Option<Value>,
    filters: Option<Value>,
    sort: Option<Value>,
}

impl SearchRequest {
    /// Validates a query and an optional `k` as they arrive (query string or JSON body).
    pub fn new(query: Option<&str>, k: Option<&str>, default_k: usize) -> Result<Self> {
        let query = query.map(str::trim).unwrap_or("");
        if query.is_empty() {
            return Err(Error::InvalidInput(
                "query is required and must not be empty".into(),
            ));
        }
        let chars = query.chars().count();
        if chars > MAX_QUERY_CHARS {
            return Err(Error::InvalidInput(format!(
                "query is {chars} characters long; the limit is {MAX_QUERY_CHARS}"
            )));
        }
        let top_k = match k.map(str::trim) {
            None | Some("") => default_k,
            Some(k) => k
                .parse::<usize>()
                .ok()
                .filter(|k| (1..=MAX_TOP_K).contains(k))
                .ok_or_else(|| {
                    Error::InvalidInput(format!(
                        "k must be a whole number from 1 to {MAX_TOP_K}, got {k:?}"
                    ))
                })?,
        };
        Ok(Self {
            query: query.to_owned(),
            top_k,
            ..Self::default()
        })
    }

    /// A request from query-string parameters: `q` (or `query`), `k` (or `top_k`), `sort`
    /// and the filters (`type`, `year`, `venue`, `author`, `stars`, `role`, `has`,
    /// `field.NAME`). `get` returns a parameter's first value; `names` lists the
    /// parameters present. Other parameters are ignored (cache busters and the like).
    pub fn from_params<'a>(
        get: impl Fn(&str) -> Option<&'a str>,
        names: impl IntoIterator<Item = &'a str>,
        default_k: usize,
    ) -> Result<Self> {
        let q = get("q").or_else(|| get("query"));
        let k = get("k").or_else(|| get("top_k"));
        let mut req = Self::new(q, k, default_k)?;
        for name in names {
            if let Some(value) = get(name) {
                req.filters.set(name, value)?;
            }
        }
        req.sort = get("sort").map(Order::parse).transpose()?;
        Ok(req)
    }

    /// Parses a POST body `{"query": "...", "top_k": N, "filters": {...}, "sort": "..."}`.
    pub fn from_json(body: &[u8], default_k: usize) -> Result<Self> {
        let b: SearchBody = serde_json::from_slice(body).map_err(|e| {
            Error::InvalidInput(format!(
                "body must be JSON like {{\"query\": \"...\", \"top_k\": 3}}: {e}"
            ))
        })?;
        Self::from_body(b, default_k)
    }

    /// A request from an already parsed JSON object with the fields of a POST body (an MCP
    /// tool's `arguments`, for one).
    pub fn from_value(value: Value, default_k: usize) -> Result<Self> {
        if !value.is_object() {
            return Err(Error::InvalidInput(
                "must be an object like {\"query\": \"...\", \"top_k\": 3}".into(),
            ));
        }
        let b: SearchBody =
            serde_json::from_value(value).map_err(|e| Error::InvalidInput(e.to_string()))?;
        Self::from_body(b, default_k)
    }

    fn from_body(b: SearchBody, default_k: usize) -> Result<Self> {
        let query = match &b.query {
            None | Some(Value::Null) => None,
            Some(Value::String(s)) => Some(s.as_str()),
            Some(_) => return Err(Error::InvalidInput("query must be a string".into())),
        };
        let k = match &b.top_k {
            None | Some(Value::Null) => None,
            Some(v) => Some(v.to_string()),
        };
        let mut req = Self::new(query, k.as_deref(), default_k)?;
        match b.filters {
            None | Some(Value::Null) => {}
            Some(Value::Object(map)) => {
                for (name, value) in &map {
                    let text = match value {
                        Value::String(s) => s.clone(),
                        Value::Number(n) => n.to_string(),
                        Value::Array(items) if name == "has" => items
                            .iter()
                            .map(|i| i.as_str().map(str::to_owned))
                            .collect::<Option<Vec<_>>>()
                            .ok_or_else(|| {
                                Error::InvalidInput("filter has must list field names".into())
                            })?
                            .join(","),
                        _ => {
                            return Err(Error::InvalidInput(format!(
                                "filter {name} must be a string or a number"
                            )))
                        }
                    };
                    if !req.filters.set(name, &text)? {
                        return Err(Error::InvalidInput(format!(
                            "unknown filter {name:?}: filters are type, year, venue, author, \
                             stars, role, has and field.NAME"
                        )));
                    }
                }
            }
            Some(_) => {
                return Err(Error::InvalidInput(
                    "filters must be an object like {\"type\": \"publication\"}".into(),
                ))
            }
        }
        req.sort = match &b.sort {
            None | Some(Value::Null) => None,
            Some(Value::String(s)) => Some(Order::parse(s)?),
            Some(_) => return Err(Error::InvalidInput("sort must be a string".into())),
        };
        Ok(req)
    }
}

impl SearchCall {
    /// Parses a POST body: one request, or `{"queries": [...]}` with 1 to [`MAX_BATCH`]
    /// items, each a query string or an object like a single request's body. A bad item is
    /// reported with its index (`queries[3]: ...`).
    pub fn from_json(body: &[u8], default_k: usize) -> Result<Self> {
        let value: Value = serde_json::from_slice(body).map_err(|e| {
            Error::InvalidInput(format!(
                "body must be JSON like {{\"query\": \"...\", \"top_k\": 3}}: {e}"
            ))
        })?;
        let Value::Object(mut top) = value else {
            return Err(Error::InvalidInput(
                "body must be a JSON object with \"query\" or \"queries\"".into(),
            ));
        };
        let Some(queries) = top.remove("queries") else {
            let b: SearchBody = serde_json::from_value(Value::Object(top))
                .map_err(|e| Error::InvalidInput(format!("body: {e}")))?;
            return SearchRequest::from_body(b, default_k).map(Self::One);
        };
        if let Some(other) = top.keys().next() {
            return Err(Error::InvalidInput(format!(
                "a batch body has only \"queries\"; unexpected field {other:?}"
            )));
        }
        let Value::Array(items) = queries else {
            return Err(Error::InvalidInput("queries must be an array".into()));
        };
        if items.is_empty() || items.len() > MAX_BATCH {
            return Err(Error::InvalidInput(format!(
                "queries must hold 1 to {MAX_BATCH} queries, got {}",
                items.len()
            )));
        }
        items
            .into_iter()
            .enumerate()
            .map(|(i, item)| {
                let parsed = match item {
                    Value::String(s) => SearchRequest::new(Some(&s), None, default_k),
                    Value::Object(_) => serde_json::from_value::<SearchBody>(item)
                        .map_err(|e| Error::InvalidInput(e.to_string()))
                        .and_then(|b| SearchRequest::from_body(b, default_k)),
                    _ => Err(Error::InvalidInput(
                        "must be a query string or an object with \"query\"".into(),
                    )),
                };
                parsed.map_err(|e| match e {
                    Error::InvalidInput(m) => Error::InvalidInput(format!("queries[{i}]: {m}")),
                    other => other,
                })
            })
            .collect::<Result<Vec<_>>>()
            .map(Self::Batch)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn request_validation_names_the_problem() {
        let err =
            |q: Option<&str>, k: Option<&str>| SearchRequest::new(q, k, 3).unwrap_err().to_string();
        assert!(err(None, None).contains("query is required"));
        assert!(err(Some("   "), None).contains("query is required"));
        assert!(err(Some(&"x".repeat(MAX_QUERY_CHARS + 1)), None).contains("limit is 2000"));
        assert!(err(Some("q"), Some("0")).contains("k must be"));
        assert!(err(Some("q"), Some("51")).contains("k must be"));
        assert!(err(Some("q"), Some("-1")).contains("k must be"));
        assert_eq!(
            SearchRequest::new(Some(" q "), Some("5"), 3).unwrap(),
            SearchRequest {
                query: "q".into(),
                top_k: 5,
                ..SearchRequest::default()
            }
        );
        assert_eq!(SearchRequest::new(Some("q"), None, 3).unwrap().top_k, 3);
    }

    #[test]
    fn json_bodies_are_validated() {
        assert_eq!(
            SearchRequest::from_json(br#"{"query":"a","top_k":2}"#, 3)
                .unwrap()
                .top_k,
            2
        );
        for bad in [
            &b"{"[..],
            br#"{"query": 5}"#,
            br#"{"query":"a","top_k":"x"}"#,
            br#"{"query":"a","top_k":1e99}"#,
            br#"{"q":"a"}"#,
        ] {
            assert!(
                SearchRequest::from_json(bad, 3).is_err(),
                "{}",
                String::from_utf8_lossy(bad)
            );
        }
    }

    #[test]
    fn filters_come_from_params_and_bodies_and_bad_ones_name_themselves() {
        let params = [
            ("q", "x"),
            ("year", "2020-2023"),
            ("field.section", "News"),
            ("_", "1"),
        ];
        let get = |k: &str| params.iter().find(|(n, _)| *n == k).map(|(_, v)| *v);
        let req = SearchRequest::from_params(get, params.iter().map(|(k, _)| *k), 3).unwrap();
        assert_eq!(
            req.filters.year.map(|r| r.to_string()).as_deref(),
            Some("2020-2023")
        );
        assert_eq!(
            req.filters.fields,
            [("section".to_owned(), "News".to_owned())]
        );
        let body = br#"{"query":"x","filters":{"type":"publication","year":2024,"has":["code_url"]},"sort":"year_desc"}"#;
        let req = SearchRequest::from_json(body, 3).unwrap();
        assert_eq!(req.filters.doc_type.as_deref(), Some("publication"));
        assert_eq!(req.sort, Some(Order::YearDesc));
        for (body, named) in [
            (r#"{"query":"x","filters":{"year":"last year"}}"#, "year"),
            (r#"{"query":"x","filters":{"colour":"red"}}"#, "colour"),
            (r#"{"query":"x","filters":{"venue":["a"]}}"#, "venue"),
            (r#"{"query":"x","filters":"type=page"}"#, "filters"),
            (r#"{"query":"x","sort":"random"}"#, "sort"),
        ] {
            let err = SearchRequest::from_json(body.as_bytes(), 3)
                .unwrap_err()
                .to_string();
            assert!(err.contains(named), "{body}: {err}");
        }
    }

    #[test]
    fn batches_hold_one_to_fifty_queries_and_bad_items_are_named_by_index() {
        let call = SearchCall::from_json(
            br#"{"queries": ["a", {"query": "b", "top_k": 5, "filters": {"type": "page"}}]}"#,
            3,
        )
        .unwrap();
        let SearchCall::Batch(reqs) = call else {
            panic!("not a batch")
        };
        assert_eq!((reqs[0].top_k, reqs[1].top_k), (3, 5));
        assert_eq!(reqs[1].filters.doc_type.as_deref(), Some("page"));
        assert!(matches!(
            SearchCall::from_json(br#"{"query": "a"}"#, 3),
            Ok(SearchCall::One(_))
        ));
        let err = |body: &str| {
            SearchCall::from_json(body.as_bytes(), 3)
                .unwrap_err()
                .to_string()
        };
        assert!(err(r#"{"queries": []}"#).contains("1 to 50"));
        let many = format!("{{\"queries\": [{}]}}", vec!["\"a\""; 51].join(","));
        assert!(err(&many).contains("got 51"));
        assert!(err(r#"{"queries": ["a", "  "]}"#).contains("queries[1]"));
        assert!(err(r#"{"queries": ["a", 7]}"#).contains("queries[1]"));
        assert!(
            err(r#"{"queries": ["a", {"query": "b", "filters": {"year": "x"}}]}"#)
                .contains("queries[1]: filter year")
        );
        assert!(err(r#"{"queries": "a"}"#).contains("array"));
        assert!(err(r#"{"queries": ["a"], "top_k": 3}"#).contains("top_k"));
        assert!(err("[1]").contains("object"));
    }
}
