//! The two tools the MCP endpoint offers: `search_site` (the search API's query, filters
//! and `top_k`, answered with ranked hits) and `get_page` (one entry's text by id or URL,
//! a window of bounded length at a time).
//!
//! A call whose arguments are wrong is answered as a tool result with `isError: true`
//! naming the problem, so the model that made the call can correct it; only an unknown
//! tool name is a protocol error (`-32602`), as the specification asks.

use serde::Serialize;
use serde_json::{json, Map, Value};

use super::clip;
use crate::config::MAX_TOP_K;
use crate::kb::Document;
use crate::search::{Filters, SearchHit, SearchIndex, SearchRequest, MAX_QUERY_CHARS};

/// Characters of a page `get_page` returns when the call names no `max_chars`.
pub const DEFAULT_PAGE_CHARS: usize = 8_000;
/// Most characters of a page one `get_page` call returns.
pub const MAX_PAGE_CHARS: usize = 40_000;
/// Longest id or URL `get_page` accepts, in characters.
const MAX_LOOKUP_CHARS: usize = 2_048;

/// What a tool call needs besides its arguments.
#[derive(Debug, Clone, Copy)]
pub(super) struct ToolContext<'a> {
    /// The served knowledge base.
    pub(super) index: &'a SearchIndex,
    /// Hits per query when the call names no `top_k`.
    pub(super) top_k: usize,
    /// Lowest score a hit may have.
    pub(super) min_score: f32,
}

/// A tool's answer: the `CallToolResult` object and the entry ids it returned (for the
/// request's log line).
#[derive(Debug, Clone, PartialEq)]
pub(super) struct ToolOutcome {
    /// `{"content": [...], "structuredContent": {...}}` or `{"content": [...], "isError": true}`.
    pub(super) result: Value,
    /// Ids of the entries in the answer.
    pub(super) ids: Vec<String>,
}

/// The `tools/list` result: both tools with their input and output schemas.
pub(super) fn list() -> Value {
    let order = ["relevance", "year_desc", "year_asc", "stars_desc"];
    json!({"tools": [
        {
            "name": "search_site",
            "title": "Search this site",
            "description": "Searches the site's pages, publications and projects (BM25; \
                Chinese questions also find English pages). Returns the best matches with \
                title, URL, a snippet and a score. Read a hit in full with get_page.",
            "inputSchema": {
                "type": "object",
                "properties": {
                    "query": {"type": "string", "minLength": 1, "maxLength": MAX_QUERY_CHARS,
                        "description": "What to look for, in any language."},
                    "top_k": {"type": "integer", "minimum": 1, "maximum": MAX_TOP_K,
                        "description": "Most hits to return (the site's default when absent)."},
                    "filters": {
                        "type": "object",
                        "description": "Conditions every hit meets: type (publication, \
                            github_project, page), year (2024 or 2020-2023), venue, author, \
                            stars (1000- or 100-5000), role, has (field names the entry \
                            must have), field.NAME (an exact field value).",
                        "properties": {
                            "type": {"type": "string"},
                            "year": {"type": ["string", "integer"]},
                            "venue": {"type": "string"},
                            "author": {"type": "string"},
                            "stars": {"type": ["string", "integer"]},
                            "role": {"type": "string"},
                            "has": {"type": ["string", "array"], "items": {"type": "string"}}
                        },
                        "additionalProperties": {"type": ["string", "number"]}
                    },
                    "sort": {"type": "string", "enum": order,
                        "description": "Order of the hits (relevance when absent)."}
                },
                "required": ["query"],
                "additionalProperties": false
            },
            "outputSchema": {
                "type": "object",
                "properties": {
                    "query": {"type": "string"},
                    "hits": {"type": "array", "items": {
                        "type": "object",
                        "properties": {
                            "id": {"type": "string"},
                            "type": {"type": "string"},
                            "title": {"type": "string"},
                            "url": {"type": "string"},
                            "score": {"type": "number"},
                            "snippet": {"type": "string"},
                            "section": {"type": "array", "items": {"type": "string"},
                                "description": "Headings the snippet's passage sits under on its page, outermost first."},
                            "section_url": {"type": "string",
                                "description": "Link to that section of the page."},
                            "alternates": {"type": "array", "items": {"type": "string"}}
                        },
                        "required": ["id", "type", "title", "score", "snippet"]
                    }},
                    "filters": {"type": "object"},
                    "listing": {"type": "boolean"}
                },
                "required": ["query", "hits"]
            },
            "annotations": {"readOnlyHint": true, "openWorldHint": false}
        },
        {
            "name": "get_page",
            "title": "Read an entry of this site",
            "description": format!("Returns the text of one entry of the site, named by \
                its id or its URL (as search_site gives them). Long pages come in windows \
                of max_chars characters (default {DEFAULT_PAGE_CHARS}, at most \
                {MAX_PAGE_CHARS}); a cut window ends with a [truncated ...] line naming the \
                offset to ask for next."),
            "inputSchema": {
                "type": "object",
                "properties": {
                    "id": {"type": "string", "maxLength": MAX_LOOKUP_CHARS,
                        "description": "The entry's id (give id or url)."},
                    "url": {"type": "string", "maxLength": MAX_LOOKUP_CHARS,
                        "description": "The entry's URL (give id or url)."},
                    "offset": {"type": "integer", "minimum": 0,
                        "description": "First character to return (0 when absent)."},
                    "max_chars": {"type": "integer", "minimum": 1, "maximum": MAX_PAGE_CHARS,
                        "description": "Most characters to return."}
                },
                "additionalProperties": false
            },
            "outputSchema": {
                "type": "object",
                "properties": {
                    "id": {"type": "string"},
                    "type": {"type": "string"},
                    "title": {"type": "string"},
                    "url": {"type": "string"},
                    "text": {"type": "string"},
                    "offset": {"type": "integer"},
                    "total_chars": {"type": "integer"},
                    "truncated": {"type": "boolean"},
                    "next_offset": {"type": "integer"}
                },
                "required": ["id", "type", "title", "text", "offset", "total_chars", "truncated"]
            },
            "annotations": {"readOnlyHint": true, "openWorldHint": false}
        }
    ]})
}

/// Whether `name` is one of the tools.
pub(super) fn exists(name: &str) -> bool {
    matches!(name, "search_site" | "get_page")
}

/// Runs tool `name` (one that [`exists`]) with its `arguments`.
pub(super) fn call(ctx: &ToolContext<'_>, name: &str, arguments: Value) -> ToolOutcome {
    let answer = match name {
        "search_site" => search_site(ctx, arguments),
        _ => get_page(ctx, &arguments),
    };
    answer.unwrap_or_else(|message| ToolOutcome {
        result: json!({"content": [{"type": "text", "text": message}], "isError": true}),
        ids: Vec::new(),
    })
}

/// The structured result of `search_site`: the search API's answer without its analysis
/// details (terms, timing), which are no use to a model.
#[derive(Serialize)]
struct SearchResult<'a> {
    query: &'a str,
    hits: &'a [SearchHit],
    #[serde(skip_serializing_if = "Option::is_none")]
    filters: Option<&'a Filters>,
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    listing: bool,
}

fn search_site(ctx: &ToolContext<'_>, arguments: Value) -> Result<ToolOutcome, String> {
    let req = SearchRequest::from_value(arguments, ctx.top_k)
        .map_err(|e| format!("search_site arguments: {}", invalid_input(e)))?;
    let found = ctx.index.run(&req, ctx.min_score);
    let structured = serde_json::to_value(SearchResult {
        query: &found.query,
        hits: &found.hits,
        filters: found.filters.as_ref(),
        listing: found.listing,
    })
    .map_err(|e| format!("search_site: {e}"))?;
    // The specification asks for the structured result also as serialized JSON in a text
    // block, for clients that predate structured content.
    let text = structured.to_string();
    Ok(ToolOutcome {
        result: json!({"content": [{"type": "text", "text": text}],
                       "structuredContent": structured}),
        ids: found.hits.iter().map(|h| h.id.clone()).collect(),
    })
}

/// The message of a validation error, without the error type's own prefix.
fn invalid_input(e: crate::Error) -> String {
    match e {
        crate::Error::InvalidInput(m) => m,
        other => other.to_string(),
    }
}

/// What `get_page` was asked for, validated.
#[derive(Debug, PartialEq)]
struct PageArgs {
    by_id: bool,
    key: String,
    offset: usize,
    max_chars: usize,
}

impl PageArgs {
    fn parse(arguments: &Value) -> Result<Self, String> {
        let Value::Object(args) = arguments else {
            return Err("get_page arguments must be an object with id or url".into());
        };
        if let Some(other) = args
            .keys()
            .find(|k| !matches!(k.as_str(), "id" | "url" | "offset" | "max_chars"))
        {
            return Err(format!(
                "get_page: unknown argument {:?}; it takes id or url, offset and max_chars",
                clip(other)
            ));
        }
        let text = |name: &str| -> Result<Option<String>, String> {
            match args.get(name) {
                None | Some(Value::Null) => Ok(None),
                Some(Value::String(s)) if s.trim().is_empty() => {
                    Err(format!("get_page: {name} must not be empty"))
                }
                Some(Value::String(s)) if s.chars().count() > MAX_LOOKUP_CHARS => Err(format!(
                    "get_page: {name} is longer than {MAX_LOOKUP_CHARS} characters"
                )),
                Some(Value::String(s)) => Ok(Some(s.trim().to_owned())),
                Some(_) => Err(format!("get_page: {name} must be a string")),
            }
        };
        let (by_id, key) = match (text("id")?, text("url")?) {
            (Some(id), None) => (true, id),
            (None, Some(url)) => (false, url),
            (Some(_), Some(_)) => return Err("get_page: give id or url, not both".into()),
            (None, None) => return Err("get_page needs an id or a url".into()),
        };
        let number = |name: &str, min: u64, max: u64| -> Result<Option<usize>, String> {
            match args.get(name) {
                None | Some(Value::Null) => Ok(None),
                Some(v) => v
                    .as_u64()
                    .filter(|n| (min..=max).contains(n))
                    .map(|n| Some(n as usize))
                    .ok_or_else(|| {
                        format!("get_page: {name} must be a whole number from {min} to {max}")
                    }),
            }
        };
        Ok(Self {
            by_id,
            key,
            offset: number("offset", 0, u32::MAX as u64)?.unwrap_or(0),
            max_chars: number("max_chars", 1, MAX_PAGE_CHARS as u64)?.unwrap_or(DEFAULT_PAGE_CHARS),
        })
    }
}

fn get_page(ctx: &ToolContext<'_>, arguments: &Value) -> Result<ToolOutcome, String> {
    let args = PageArgs::parse(arguments)?;
    let docs = &ctx.index.kb().documents;
    let doc = if args.by_id {
        ctx.index.kb().get(&args.key)
    } else {
        find_by_url(docs, &args.key)
    }
    .ok_or_else(|| {
        let what = if args.by_id { "id" } else { "URL" };
        format!(
            "no entry of this site has the {what} {:?}; search_site lists the ids and URLs",
            clip(&args.key)
        )
    })?;
    let full = page_text(doc);
    let total = full.chars().count();
    if args.offset > 0 && args.offset >= total {
        return Err(format!(
            "get_page: offset {} is past the end of {:?} ({total} characters)",
            args.offset, doc.id
        ));
    }
    let start = char_start(&full, args.offset);
    let end_char = (args.offset + args.max_chars).min(total);
    let end = char_start(&full, end_char);
    let window = &full[start..end];
    let truncated = end_char < total;
    let mut text = String::with_capacity(window.len() + 160);
    if args.offset > 0 {
        text.push_str(&format!(
            "[continued: characters {}-{end_char} of {total}]\n\n",
            args.offset
        ));
    }
    text.push_str(window);
    if truncated {
        text.push_str(&format!(
            "\n\n[truncated: characters {}-{end_char} of {total} shown; call get_page with \
             offset {end_char} for the rest]",
            args.offset
        ));
    }
    let mut structured = Map::new();
    structured.insert("id".into(), json!(doc.id));
    structured.insert("type".into(), json!(doc.doc_type));
    structured.insert("title".into(), json!(doc.display_title()));
    if let Some(url) = doc.link() {
        structured.insert("url".into(), json!(url));
    }
    structured.insert("text".into(), json!(window));
    structured.insert("offset".into(), json!(args.offset));
    structured.insert("total_chars".into(), json!(total));
    structured.insert("truncated".into(), json!(truncated));
    if truncated {
        structured.insert("next_offset".into(), json!(end_char));
    }
    // The text block is the page as a model reads it (with the window's markers); the
    // structured content carries the same window and where it lies.
    Ok(ToolOutcome {
        result: json!({"content": [{"type": "text", "text": text}],
                       "structuredContent": structured}),
        ids: vec![doc.id.clone()],
    })
}

/// The byte index where character `n` starts (the end when `n` is past it).
fn char_start(text: &str, n: usize) -> usize {
    text.char_indices().nth(n).map_or(text.len(), |(i, _)| i)
}

/// The entry a URL names: one whose link is that URL as written, else one whose link is
/// the same once the fragment, a trailing slash and the case of scheme and host are set
/// aside (a model may drop or add them), in knowledge-base order.
fn find_by_url<'a>(docs: &'a [Document], url: &str) -> Option<&'a Document> {
    let links = |d: &'a Document| {
        [&d.url, &d.paper_url, &d.code_url]
            .into_iter()
            .flatten()
            .map(String::as_str)
    };
    if let Some(d) = docs.iter().find(|d| links(d).any(|l| l == url)) {
        return Some(d);
    }
    let wanted = normalize_url(url);
    docs.iter()
        .find(|d| links(d).any(|l| normalize_url(l) == wanted))
}

fn normalize_url(url: &str) -> String {
    let url = url.trim();
    let url = url.split('#').next().unwrap_or(url).trim_end_matches('/');
    // Scheme and host are case-insensitive; the path is not.
    let host_end = url
        .find("://")
        .map(|s| s + 3)
        .map(|h| url[h..].find('/').map_or(url.len(), |p| h + p));
    match host_end {
        Some(end) => format!("{}{}", url[..end].to_ascii_lowercase(), &url[end..]),
        None => url.to_owned(),
    }
}

/// An entry as text: a heading, one line per metadata field, then its summary,
/// description and content.
fn page_text(doc: &Document) -> String {
    let mut out = format!("# {}\n", doc.display_title());
    let mut line = |label: &str, value: Option<&str>| {
        if let Some(v) = value.map(str::trim).filter(|v| !v.is_empty()) {
            out.push_str(&format!(
                "{label}: {}\n",
                v.split_whitespace().collect::<Vec<_>>().join(" ")
            ));
        }
    };
    line("Type", Some(&doc.doc_type));
    // A project's name is its heading and a publication's title is; the other one, if
    // the entry has both, is a field.
    let shown = doc.display_title();
    for (label, value) in [("Title", &doc.title), ("Name", &doc.name)] {
        line(label, value.as_deref().filter(|v| *v != shown));
    }
    line("URL", doc.url.as_deref());
    line("Authors", doc.authors.as_deref());
    line("Venue", doc.venue.as_deref());
    line("Year", doc.year.as_deref());
    line("Paper", doc.paper_url.as_deref());
    line("Code", doc.code_url.as_deref());
    line("Stars", doc.stars.as_deref());
    line("Role", doc.role.as_deref());
    if !doc.keywords.is_empty() {
        line("Keywords", Some(&doc.keywords.join(", ")));
    }
    for (k, v) in &doc.extra {
        line(k, Some(v));
    }
    for body in doc.prose().map(|b| b.trim()).filter(|b| !b.is_empty()) {
        out.push('\n');
        out.push_str(body);
        out.push('\n');
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::kb::KnowledgeBase;

    fn index() -> SearchIndex {
        let long = "Lorem ipsum dolor sit amet. ".repeat(1000);
        let kb = KnowledgeBase::from_value(&json!({"documents": [
            {"id": "pfc", "type": "publication", "title": "Partial FC",
             "authors": ["Xiang An", "Jiankang Deng"], "venue": "CVPR 2022", "year": 2022,
             "summary": "Face recognition training at scale.",
             "paper_url": "https://arxiv.org/abs/2203.15565"},
            {"id": "llava", "type": "github_project", "name": "LLaVA-OneVision",
             "url": "https://github.com/EvolvingLMMs-Lab/LLaVA-OneVision", "stars": "4k",
             "description": "A multimodal model."},
            {"id": "long", "type": "page", "title": "Long notes",
             "url": "https://site.example/notes/", "content": long},
            {"id": "zh", "type": "page", "title": "中文", "url": "https://site.example/zh",
             "content": "人脸识别".repeat(10)}
        ]}))
        .unwrap();
        SearchIndex::new(kb, "v1")
    }

    fn call_tool(index: &SearchIndex, name: &str, args: Value) -> ToolOutcome {
        let ctx = ToolContext {
            index,
            top_k: 3,
            min_score: 0.0,
        };
        call(&ctx, name, args)
    }

    fn error_text(outcome: &ToolOutcome) -> &str {
        assert_eq!(outcome.result["isError"], true, "{}", outcome.result);
        outcome.result["content"][0]["text"].as_str().unwrap()
    }

    #[test]
    fn search_site_returns_hits_as_structured_content_and_as_json_text() {
        let idx = index();
        let out = call_tool(
            &idx,
            "search_site",
            json!({"query": "partial fc", "top_k": 1}),
        );
        let s = &out.result["structuredContent"];
        assert_eq!(s["query"], "partial fc");
        let hits = s["hits"].as_array().unwrap();
        assert_eq!(hits.len(), 1);
        assert_eq!(hits[0]["id"], "pfc");
        assert_eq!(hits[0]["url"], "https://arxiv.org/abs/2203.15565");
        assert!(hits[0]["score"].as_f64().unwrap() > 0.0);
        assert!(hits[0]["snippet"]
            .as_str()
            .unwrap()
            .contains("Face recognition"));
        assert!(s.get("terms").is_none() && s.get("took_us").is_none());
        let text: Value =
            serde_json::from_str(out.result["content"][0]["text"].as_str().unwrap()).unwrap();
        assert_eq!(&text, s);
        assert_eq!(out.ids, ["pfc"]);
        assert!(out.result.get("isError").is_none());
    }

    #[test]
    fn search_site_takes_the_search_apis_filters_and_sort() {
        let idx = index();
        let out = call_tool(
            &idx,
            "search_site",
            json!({"query": "model", "filters": {"type": "github_project"}, "sort": "stars_desc"}),
        );
        assert_eq!(out.ids, ["llava"]);
        assert_eq!(
            out.result["structuredContent"]["filters"]["type"],
            "github_project"
        );
    }

    #[test]
    fn bad_search_arguments_are_tool_errors_naming_the_problem() {
        let idx = index();
        for (args, needle) in [
            (json!({}), "query is required"),
            (json!({"query": "  "}), "query is required"),
            (
                json!({"query": "x".repeat(MAX_QUERY_CHARS + 1)}),
                "limit is 2000",
            ),
            (json!({"query": "a", "top_k": 0}), "k must be"),
            (json!({"query": "a", "top_k": 51}), "k must be"),
            (json!({"query": "a", "q": "b"}), "unknown field `q`"),
            (
                json!({"query": "a", "filters": {"colour": "red"}}),
                "unknown filter",
            ),
            (json!({"query": "a", "sort": "random"}), "sort must be"),
            (json!(["a"]), "must be an object"),
        ] {
            let out = call_tool(&idx, "search_site", args.clone());
            let text = error_text(&out);
            assert!(text.contains(needle), "{args}: {text}");
            assert!(out.ids.is_empty());
        }
    }

    #[test]
    fn get_page_finds_an_entry_by_id_or_by_url_as_a_model_may_write_it() {
        let idx = index();
        let out = call_tool(&idx, "get_page", json!({"id": "pfc"}));
        let text = out.result["content"][0]["text"].as_str().unwrap();
        assert!(text.starts_with("# Partial FC\n"), "{text}");
        assert!(text.contains("Authors: Xiang An, Jiankang Deng"), "{text}");
        assert!(text.contains("Face recognition training at scale."));
        assert_eq!(out.result["structuredContent"]["truncated"], false);
        assert_eq!(out.ids, ["pfc"]);
        for url in [
            "https://github.com/EvolvingLMMs-Lab/LLaVA-OneVision",
            "HTTPS://GitHub.com/EvolvingLMMs-Lab/LLaVA-OneVision/",
            "https://github.com/EvolvingLMMs-Lab/LLaVA-OneVision#readme",
        ] {
            let out = call_tool(&idx, "get_page", json!({"url": url}));
            assert_eq!(out.ids, ["llava"], "{url}");
        }
        // The path keeps its case.
        let out = call_tool(
            &idx,
            "get_page",
            json!({"url": "https://github.com/evolvinglmms-lab/llava-onevision"}),
        );
        assert!(error_text(&out).contains("no entry"));
        assert!(
            error_text(&call_tool(&idx, "get_page", json!({"id": "nope"}))).contains("\"nope\"")
        );
    }

    #[test]
    fn a_long_page_comes_in_bounded_windows_with_a_truncation_marker() {
        let idx = index();
        let first = call_tool(&idx, "get_page", json!({"id": "long", "max_chars": 1000}));
        let s = &first.result["structuredContent"];
        let total = s["total_chars"].as_u64().unwrap() as usize;
        assert!(total > 28_000);
        assert_eq!(s["text"].as_str().unwrap().chars().count(), 1000);
        assert_eq!(
            (s["truncated"].clone(), s["next_offset"].clone()),
            (json!(true), json!(1000))
        );
        let text = first.result["content"][0]["text"].as_str().unwrap();
        assert!(
            text.ends_with(&format!(
                "[truncated: characters 0-1000 of {total} shown; call get_page with offset 1000 for the rest]"
            )),
            "{}",
            &text[text.len() - 200..]
        );
        // The default window, then the last one.
        let default = call_tool(&idx, "get_page", json!({"id": "long"}));
        assert_eq!(
            default.result["structuredContent"]["text"]
                .as_str()
                .unwrap()
                .chars()
                .count(),
            DEFAULT_PAGE_CHARS
        );
        let last = call_tool(
            &idx,
            "get_page",
            json!({"id": "long", "offset": total - 10}),
        );
        let s = &last.result["structuredContent"];
        assert_eq!(s["text"].as_str().unwrap().chars().count(), 10);
        assert_eq!(s["truncated"], false);
        assert!(s.get("next_offset").is_none());
        assert!(last.result["content"][0]["text"]
            .as_str()
            .unwrap()
            .starts_with(&format!(
                "[continued: characters {}-{total} of {total}]",
                total - 10
            )));
        let past = call_tool(&idx, "get_page", json!({"id": "long", "offset": total}));
        assert!(error_text(&past).contains("past the end"));
    }

    #[test]
    fn windows_are_counted_in_characters_not_bytes() {
        let idx = index();
        let out = call_tool(
            &idx,
            "get_page",
            json!({"id": "zh", "offset": 5, "max_chars": 7}),
        );
        let window = out.result["structuredContent"]["text"].as_str().unwrap();
        assert_eq!(window.chars().count(), 7);
        assert_eq!(
            window,
            &page_text(idx.kb().get("zh").unwrap())
                .chars()
                .skip(5)
                .take(7)
                .collect::<String>()
        );
    }

    #[test]
    fn bad_page_arguments_are_tool_errors_naming_the_problem() {
        let idx = index();
        for (args, needle) in [
            (json!({}), "needs an id or a url"),
            (json!({"id": "pfc", "url": "https://x"}), "not both"),
            (json!({"id": ""}), "must not be empty"),
            (json!({"id": 5}), "id must be a string"),
            (
                json!({"id": "x".repeat(MAX_LOOKUP_CHARS + 1)}),
                "longer than",
            ),
            (json!({"id": "pfc", "max_chars": 0}), "max_chars must be"),
            (
                json!({"id": "pfc", "max_chars": MAX_PAGE_CHARS + 1}),
                "max_chars must be",
            ),
            (json!({"id": "pfc", "offset": -1}), "offset must be"),
            (json!({"id": "pfc", "offset": 1.5}), "offset must be"),
            (json!({"id": "pfc", "page": 2}), "unknown argument \"page\""),
            (json!("pfc"), "must be an object"),
        ] {
            let out = call_tool(&idx, "get_page", args.clone());
            assert!(
                error_text(&out).contains(needle),
                "{args}: {}",
                error_text(&out)
            );
        }
    }

    #[test]
    fn the_listed_tools_are_the_ones_that_exist() {
        let tools = list();
        let names: Vec<&str> = tools["tools"]
            .as_array()
            .unwrap()
            .iter()
            .map(|t| t["name"].as_str().unwrap())
            .collect();
        assert_eq!(names, ["search_site", "get_page"]);
        assert!(names.iter().all(|n| exists(n)));
        assert!(!exists("search"));
    }
}
