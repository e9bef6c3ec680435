//! The knowledge base: documents a site owner describes, parsed and validated.
//!
//! Accepted shapes: `{"documents": [...], "glossary": {...}}` (the seed format) or a bare
//! array of documents. Every document has `id` and `type`; `publication`,
//! `github_project` and `page` (or any other type) have the fields listed in
//! `docs/knowledge-base.md`. Unknown string fields are kept and indexed. Validation walks
//! the whole input and reports every problem at once, so a site owner fixes a file in one
//! pass.
//!
//! # Lifecycle
//! - `source`: where the JSON is stored ([`KbSource`]: conditional get and put by ETag),
//!   with adapters for S3 ([`S3KbSource`]), a local file ([`FileKbSource`]) and memory
//!   ([`MemoryKbSource`]).
//! - [`KbHandle`](crate::search::KbHandle) (in `search`, as it serves an index): the
//!   indexed knowledge base a warm function serves, loaded once per cold start and
//!   re-checked by ETag every `KB_REFRESH_SECS`.
//! - `diff`: documents added, changed and removed between two versions ([`KbDiff`]).
//! - `hash`: the content hash and version string of the stored bytes ([`content_hash`]).

mod diff;
mod file;
mod hash;
mod memory;
mod passages;
mod read;
// `sdk_error` and `status` are shared with ingest's S3 staging area, inside the crate only.
pub(crate) mod s3;
mod source;
mod text;

pub use diff::{documents_of, fingerprint, rest_fingerprint, summaries, DocSummary, KbDiff};
pub use file::FileKbSource;
pub use hash::{content_hash, ContentHasher};
pub use memory::MemoryKbSource;
pub use passages::{
    fenced_lines, heading_marks, headings, passage_spans, section_of_marks, split_heading_id,
    split_passages, split_sections, HeadingIds, HeadingMark, Passage, PASSAGE_MAX_CHARS,
};
pub use s3::S3KbSource;
pub(crate) use source::unquote_etag;
pub use source::{
    content_version, index_name, open_source, version_of_hash, BoxError, Fetched, Head,
    IndexStream, KbObject, KbSource, KbSourceError, WriteCondition, Written,
};
pub use text::{PackedBlock, Text};

use crate::error::{Error, Problem, Problems, Result};
use serde_json::{Map, Value};

/// Parses and validates knowledge-base bytes, which must be UTF-8 JSON.
pub fn parse_kb_bytes(bytes: &[u8], origin: &str) -> Result<KnowledgeBase> {
    let text = std::str::from_utf8(bytes).map_err(|e| {
        Error::InvalidKb(Problems(vec![Problem::new(
            "",
            format!("{origin} is not UTF-8 text: {e}"),
        )]))
    })?;
    KnowledgeBase::from_json_str(text, origin)
}

/// Longest accepted document id, in characters.
pub const MAX_ID_CHARS: usize = 200;

/// The kinds of document the product formats differently.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DocKind {
    /// A paper: title, authors, venue, links, summary.
    Publication,
    /// A code repository: name, url, stars, role, description.
    GithubProject,
    /// Anything else: a page with a title and (possibly long) content.
    Page,
}

/// One knowledge-base entry.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Document {
    /// Unique id within the knowledge base.
    pub id: String,
    /// The `type` field as written (`publication`, `github_project`, `page`, ...).
    pub doc_type: String,
    /// Title (publications, pages).
    pub title: Option<String>,
    /// Name (projects).
    pub name: Option<String>,
    /// Author list as one string: written as a string, or as an array of names joined
    /// with `", "`.
    pub authors: Option<String>,
    /// Venue, e.g. `CVPR 2022`.
    pub venue: Option<String>,
    /// Year (a number or a string in the source).
    pub year: Option<String>,
    /// Link to the paper.
    pub paper_url: Option<String>,
    /// Link to the code.
    pub code_url: Option<String>,
    /// Link to the project or page.
    pub url: Option<String>,
    /// Star count (a number or a string such as `27k+`).
    pub stars: Option<String>,
    /// The site owner's role in a project.
    pub role: Option<String>,
    /// A publication's summary.
    pub summary: Option<String>,
    /// A project's description.
    pub description: Option<String>,
    /// A page's body (Markdown or plain text, may be long); from a prebuilt index, read
    /// from a compressed block on first use ([`Text`]).
    pub content: Option<Text>,
    /// Tags and keywords the owner gave (BibTeX `keywords`, front matter `tags`): indexed,
    /// matched by `keywords` filters, and given to the model with the entry.
    pub keywords: Vec<String>,
    /// What kind of entry it is when retrieval should know: one of [`ENTRY_KINDS`]
    /// (`release-notes`). Neither indexed nor shown.
    pub kind: Option<String>,
    /// URLs of near-duplicate pages folded into this one (other versions or editions of
    /// the same page). Not indexed; shown with search hits.
    pub alternates: Vec<String>,
    /// How many other pages of the site link to this one (`rag build` counts the links
    /// of each HTML page's main text): retrieval weighs a page many others send readers
    /// to a little above one none does ([`crate::retrieval::LINK_WEIGHT`]). Not indexed
    /// or shown; absent on entries whose links nobody counted.
    pub linked_from: Option<u32>,
    /// Unknown string fields, in source order: kept, indexed and shown.
    pub extra: Vec<(String, String)>,
}

impl Document {
    /// How this document is formatted.
    pub fn kind(&self) -> DocKind {
        match self.doc_type.as_str() {
            "publication" => DocKind::Publication,
            "github_project" => DocKind::GithubProject,
            _ => DocKind::Page,
        }
    }

    /// Its prose, in order: the summary, the description and the content (those it has).
    pub fn prose(&self) -> impl Iterator<Item = &str> {
        [
            self.summary.as_deref(),
            self.description.as_deref(),
            self.content.as_deref(),
        ]
        .into_iter()
        .flatten()
    }

    /// The title to show: a project's name, else the title, else the id.
    pub fn display_title(&self) -> &str {
        let primary = match self.kind() {
            DocKind::GithubProject => self.name.as_ref().or(self.title.as_ref()),
            _ => self.title.as_ref().or(self.name.as_ref()),
        };
        primary.map_or(self.id.as_str(), String::as_str)
    }

    /// The main link: the page/project URL, else the paper, else the code.
    pub fn link(&self) -> Option<&str> {
        self.url
            .as_deref()
            .or(self.paper_url.as_deref())
            .or(self.code_url.as_deref())
    }

    /// The text of its metadata fields (everything but `content`), for indexing.
    pub fn metadata_text(&self) -> String {
        let mut parts: Vec<&str> = Vec::new();
        for f in [
            &self.title,
            &self.name,
            &self.authors,
            &self.venue,
            &self.year,
            &self.role,
            &self.summary,
            &self.description,
            &self.url,
            &self.paper_url,
            &self.code_url,
        ]
        .into_iter()
        .flatten()
        {
            parts.push(f);
        }
        parts.extend(self.keywords.iter().map(String::as_str));
        parts.extend(self.extra.iter().map(|(_, v)| v.as_str()));
        parts.join("\n")
    }
}

/// A parsed and validated knowledge base.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct KnowledgeBase {
    /// The documents, in source order (which breaks score ties).
    pub documents: Vec<Document>,
    /// Site-specific Chinese → English translations, in source order.
    pub glossary: Vec<(String, Vec<String>)>,
}

impl KnowledgeBase {
    /// Reads and validates a knowledge base file.
    pub fn load_file(path: &std::path::Path) -> Result<Self> {
        let text = std::fs::read_to_string(path).map_err(|source| Error::Io {
            path: path.display().to_string(),
            source,
        })?;
        Self::from_json_str(&text, &path.display().to_string())
    }

    /// Parses and validates knowledge-base JSON; `origin` names the input in errors.
    ///
    /// The documents are read one at a time: each is validated and moved into its
    /// [`Document`] before the next is parsed, so the input is never held whole as a tree
    /// of JSON values beside its text.
    pub fn from_json_str(text: &str, origin: &str) -> Result<Self> {
        let top = read::top_level(text).map_err(|source| Error::Json {
            what: origin.to_owned(),
            source,
        })?;
        Self::validate(top).map_err(Error::InvalidKb)
    }

    /// Validates an already parsed JSON value, listing every problem.
    pub fn from_value(value: &Value) -> std::result::Result<Self, Problems> {
        // Walking a `Value` cannot fail (its keys are strings); were it to, it is a problem
        // with the whole input.
        let top = read::top_level_of(value)
            .map_err(|e| Problems(vec![Problem::new("", e.to_string())]))?;
        Self::validate(top)
    }

    /// The knowledge base the top level holds, or every problem found in it.
    fn validate(top: Top) -> std::result::Result<Self, Problems> {
        let mut problems = Vec::new();
        let (collector, glossary) = match top {
            Top::Documents(c) => (Some(c), None),
            Top::Object {
                documents,
                glossary,
            } => {
                match &documents {
                    None => problems.push(Problem::new("documents", "is required")),
                    Some(None) => {
                        problems.push(Problem::new("documents", "must be an array of documents"))
                    }
                    Some(Some(_)) => {}
                }
                (documents.flatten(), glossary)
            }
            Top::Other => {
                problems.push(Problem::new(
                    "",
                    "must be an object with \"documents\" or an array of documents",
                ));
                (None, None)
            }
        };
        let mut documents = Vec::new();
        if let Some(c) = collector {
            if c.count == 0 {
                problems.push(Problem::new("documents", "must hold at least one document"));
            }
            problems.extend(c.problems);
            documents = c.documents;
            // Its growth's slack: a large knowledge base is kept for the function's life.
            documents.shrink_to_fit();
        }
        let glossary = match glossary {
            None | Some(Value::Null) => Vec::new(),
            Some(g) => parse_glossary(&g, &mut problems),
        };
        if problems.is_empty() {
            Ok(Self {
                documents,
                glossary,
            })
        } else {
            Err(Problems(problems))
        }
    }

    /// The document with this id.
    pub fn get(&self, id: &str) -> Option<&Document> {
        self.documents.iter().find(|d| d.id == id)
    }
}

/// What the top level of knowledge-base JSON holds, its documents already validated.
enum Top {
    /// A bare array of documents.
    Documents(Collector),
    /// An object: its `documents` (`Some(None)` when not an array) and `glossary`.
    Object {
        documents: Option<Option<Collector>>,
        glossary: Option<Value>,
    },
    /// Anything else.
    Other,
}

/// Documents validated one at a time, in order: the valid ones, and every problem found.
#[derive(Default)]
struct Collector {
    documents: Vec<Document>,
    problems: Vec<Problem>,
    /// Each id seen, with the index of the document that used it first.
    seen: rustc_hash::FxHashMap<String, usize>,
    /// Documents seen, valid or not.
    count: usize,
}

impl Collector {
    /// Validates the next document, moving its text out of `doc` (which is left with
    /// empty strings in its place).
    fn add(&mut self, doc: &mut Value) {
        let i = self.count;
        self.count += 1;
        let path = format!("documents[{i}]");
        let parsed = parse_document(doc, &path, &mut self.problems);
        // Ids are checked on the raw JSON, so a duplicate is reported even when either
        // document has other problems too.
        if let Some(Value::String(id)) = doc.get("id") {
            match self.seen.get(id.as_str()) {
                Some(first) => self.problems.push(Problem::new(
                    format!("{path}.id"),
                    format!("duplicate id {id:?} (first used by documents[{first}])"),
                )),
                None => {
                    self.seen.insert(id.clone(), i);
                }
            }
        }
        if let Some(d) = parsed {
            // Grown by an eighth rather than doubled: read one at a time, the documents'
            // number is not known ahead, and doubling could leave half the vector empty
            // at the parse's peak.
            if self.documents.len() == self.documents.capacity() {
                self.documents
                    .reserve_exact(self.documents.capacity() / 8 + 16);
            }
            self.documents.push(d);
        }
    }
}

/// Fields every document may carry that hold a single string (or, for `year` and
/// `stars`, a number).
pub(crate) const STRING_FIELDS: &[&str] = &[
    "title",
    "name",
    "authors",
    "venue",
    "year",
    "paper_url",
    "code_url",
    "url",
    "stars",
    "role",
    "summary",
    "description",
    "content",
    "kind",
];

/// The values `kind` may take: `release-notes` marks a changelog, "what's new" or
/// release-notes page, which mentions many things in passing and should rank below the
/// page about the thing it mentions.
pub const ENTRY_KINDS: &[&str] = &["release-notes"];

/// The entry at `path` (`documents[3]`) as a [`Document`], its string fields moved out of
/// `doc`; `None` when it has any problem, each added to `problems` (all of them, not the
/// first, so one validation run lists everything to fix).
fn parse_document(doc: &mut Value, path: &str, problems: &mut Vec<Problem>) -> Option<Document> {
    let Value::Object(obj) = doc else {
        problems.push(Problem::new(path, "must be an object"));
        return None;
    };
    let before = problems.len();
    let mut d = Document::default();
    if let Some(id) = parse_id(obj.get("id"), path, problems) {
        d.id = id;
    }
    match obj.get("type") {
        Some(Value::String(s)) if !s.trim().is_empty() => d.doc_type = s.clone(),
        Some(Value::String(_)) => {
            problems.push(Problem::new(format!("{path}.type"), "must not be empty"))
        }
        Some(_) => problems.push(Problem::new(format!("{path}.type"), "must be a string")),
        None => problems.push(Problem::new(
            format!("{path}.type"),
            "is required (publication, github_project, page, ...)",
        )),
    }
    let mut content = None;
    for &field in STRING_FIELDS {
        let Some(slot) = (match field {
            "content" => Some(&mut content),
            _ => string_slot(&mut d, field),
        }) else {
            continue;
        };
        match obj.get_mut(field) {
            None | Some(Value::Null) => {}
            Some(Value::String(s)) => *slot = Some(std::mem::take(s)),
            // BibTeX-style exports and hand-written files list authors one name each.
            Some(Value::Array(items)) if field == "authors" => {
                *slot = author_list(items, &format!("{path}.authors"), problems)
            }
            Some(Value::Number(n)) if matches!(field, "year" | "stars") => {
                *slot = Some(n.to_string())
            }
            Some(_) if matches!(field, "year" | "stars") => problems.push(Problem::new(
                format!("{path}.{field}"),
                "must be a string or a number",
            )),
            Some(_) if field == "authors" => problems.push(Problem::new(
                format!("{path}.authors"),
                "must be a string or an array of strings",
            )),
            Some(_) => problems.push(Problem::new(format!("{path}.{field}"), "must be a string")),
        }
    }
    d.content = content.map(Text::from);
    d.keywords = parse_keywords(obj.get("keywords"), path, problems);
    if let Some(kind) = d.kind.as_deref().filter(|k| !ENTRY_KINDS.contains(k)) {
        problems.push(Problem::new(
            format!("{path}.kind"),
            format!(
                "{kind:?} is not a known kind (one of: {})",
                ENTRY_KINDS.join(", ")
            ),
        ));
    }
    d.alternates = parse_alternates(obj.get("alternates"), path, problems);
    d.linked_from = parse_linked_from(obj.get("linked_from"), path, problems);
    collect_extra(obj, &mut d);
    // A required field that is present but mistyped was reported above already.
    let absent = |f: &str| obj.get(f).is_none_or(Value::is_null);
    let required = match d.kind() {
        DocKind::GithubProject => ("name", !absent("name")),
        _ => ("title", !absent("title") || !absent("name")),
    };
    if !d.doc_type.is_empty() && !required.1 {
        problems.push(Problem::new(
            format!("{path}.{}", required.0),
            format!("is required for type {:?}", d.doc_type),
        ));
    }
    check_links(&d, path, problems);
    (problems.len() == before).then_some(d)
}

/// The entry's `id`, when it is a string an id may be; else a problem at `path.id`.
fn parse_id(value: Option<&Value>, path: &str, problems: &mut Vec<Problem>) -> Option<String> {
    match value {
        Some(Value::String(s)) if s.trim().is_empty() => {
            problems.push(Problem::new(format!("{path}.id"), "must not be empty"))
        }
        Some(Value::String(s)) if s.chars().count() > MAX_ID_CHARS => problems.push(Problem::new(
            format!("{path}.id"),
            format!("is longer than {MAX_ID_CHARS} characters"),
        )),
        Some(Value::String(s)) if !s.chars().all(is_id_char) => problems.push(Problem::new(
            format!("{path}.id"),
            format!(
                "{s:?} has characters an id may not: use letters, digits and {}",
                ID_PUNCTUATION.iter().collect::<String>()
            ),
        )),
        Some(Value::String(s)) => return Some(s.clone()),
        Some(_) => problems.push(Problem::new(format!("{path}.id"), "must be a string")),
        None => problems.push(Problem::new(format!("{path}.id"), "is required")),
    }
    None
}

/// The entry's `keywords` (none when absent or null); each item that is not a string,
/// or a value that is not an array, is a problem.
fn parse_keywords(value: Option<&Value>, path: &str, problems: &mut Vec<Problem>) -> Vec<String> {
    let mut keywords = Vec::new();
    match value {
        None | Some(Value::Null) => {}
        Some(Value::Array(items)) => {
            for (j, k) in items.iter().enumerate() {
                match k {
                    Value::String(s) => keywords.push(s.clone()),
                    _ => problems.push(Problem::new(
                        format!("{path}.keywords[{j}]"),
                        "must be a string",
                    )),
                }
            }
        }
        Some(_) => problems.push(Problem::new(
            format!("{path}.keywords"),
            "must be an array of strings",
        )),
    }
    keywords
}

/// The entry's `alternates`: the URLs of the same page elsewhere; each item that is not a
/// URL [`check_url`] accepts is a problem.
fn parse_alternates(value: Option<&Value>, path: &str, problems: &mut Vec<Problem>) -> Vec<String> {
    let mut alternates = Vec::new();
    match value {
        None | Some(Value::Null) => {}
        Some(Value::Array(items)) => {
            for (j, u) in items.iter().enumerate() {
                match u {
                    Value::String(s) => match check_url(s) {
                        Ok(()) => alternates.push(s.clone()),
                        Err(why) => {
                            problems.push(Problem::new(format!("{path}.alternates[{j}]"), why))
                        }
                    },
                    _ => problems.push(Problem::new(
                        format!("{path}.alternates[{j}]"),
                        "must be a string",
                    )),
                }
            }
        }
        Some(_) => problems.push(Problem::new(
            format!("{path}.alternates"),
            "must be an array of URLs",
        )),
    }
    alternates
}

/// Most pages a `linked_from` count may name: more than any site has, and below the
/// prebuilt index's mark for an absent count.
pub const MAX_LINKED_FROM: u64 = 1_000_000_000;

/// The entry's `linked_from`: a whole number of pages, 0 to [`MAX_LINKED_FROM`].
fn parse_linked_from(
    value: Option<&Value>,
    path: &str,
    problems: &mut Vec<Problem>,
) -> Option<u32> {
    match value {
        None | Some(Value::Null) => None,
        Some(Value::Number(n)) => {
            match n.as_u64().filter(|&n| n <= MAX_LINKED_FROM) {
                Some(n) => u32::try_from(n).ok(),
                None => {
                    problems.push(Problem::new(
                    format!("{path}.linked_from"),
                    format!("{n} is not a count of pages (a whole number from 0 to {MAX_LINKED_FROM})"),
                ));
                    None
                }
            }
        }
        Some(_) => {
            problems.push(Problem::new(
                format!("{path}.linked_from"),
                "must be a number: how many other pages link to this one",
            ));
            None
        }
    }
}

/// A problem for each link of `d` (`url`, `paper_url`, `code_url` and any extra `*_url`
/// field) that [`check_url`] refuses.
fn check_links(d: &Document, path: &str, problems: &mut Vec<Problem>) {
    let mut links: Vec<(&str, &str)> = Vec::new();
    for (field, value) in [
        ("url", &d.url),
        ("paper_url", &d.paper_url),
        ("code_url", &d.code_url),
    ] {
        links.extend(value.as_deref().map(|v| (field, v)));
    }
    links.extend(
        d.extra
            .iter()
            .filter(|(k, _)| k.ends_with("_url"))
            .map(|(k, v)| (k.as_str(), v.as_str())),
    );
    for (field, value) in links {
        if let Err(why) = check_url(value) {
            problems.push(Problem::new(format!("{path}.{field}"), why));
        }
    }
}

/// An `authors` array as one string, names joined with `", "` (blank names skipped; none
/// left = no authors). A name that is not a string is a problem at its index.
fn author_list(items: &[Value], path: &str, problems: &mut Vec<Problem>) -> Option<String> {
    let mut names = Vec::with_capacity(items.len());
    for (j, item) in items.iter().enumerate() {
        match item {
            Value::String(s) if s.trim().is_empty() => {}
            Value::String(s) => names.push(s.trim()),
            _ => problems.push(Problem::new(format!("{path}[{j}]"), "must be a string")),
        }
    }
    (!names.is_empty()).then(|| names.join(", "))
}

/// The field named `field`: one of [`STRING_FIELDS`] but `content`, which is held as a
/// [`Text`]; `None` for any other name.
pub(crate) fn string_slot<'a>(d: &'a mut Document, field: &str) -> Option<&'a mut Option<String>> {
    Some(match field {
        "title" => &mut d.title,
        "name" => &mut d.name,
        "authors" => &mut d.authors,
        "venue" => &mut d.venue,
        "year" => &mut d.year,
        "paper_url" => &mut d.paper_url,
        "code_url" => &mut d.code_url,
        "url" => &mut d.url,
        "stars" => &mut d.stars,
        "role" => &mut d.role,
        "summary" => &mut d.summary,
        "description" => &mut d.description,
        "kind" => &mut d.kind,
        _ => return None,
    })
}

/// [`string_slot`], read only, and `content` too.
pub(crate) fn string_field<'a>(d: &'a Document, field: &str) -> Option<&'a str> {
    match field {
        "title" => d.title.as_deref(),
        "name" => d.name.as_deref(),
        "authors" => d.authors.as_deref(),
        "venue" => d.venue.as_deref(),
        "year" => d.year.as_deref(),
        "paper_url" => d.paper_url.as_deref(),
        "code_url" => d.code_url.as_deref(),
        "url" => d.url.as_deref(),
        "stars" => d.stars.as_deref(),
        "role" => d.role.as_deref(),
        "summary" => d.summary.as_deref(),
        "description" => d.description.as_deref(),
        "kind" => d.kind.as_deref(),
        "content" => d.content.as_deref(),
        _ => None,
    }
}

/// Fields that describe the entry rather than its subject: carried in the source, never
/// indexed or shown (`rag build` records a hash of each entry's content in `content_hash`;
/// its hex digits would only add noise to retrieval and tokens to the prompt).
const BOOKKEEPING_FIELDS: &[&str] = &["content_hash"];

/// Keeps unknown string fields, and each string of an unknown array of strings (a field
/// with several values, like a page's tags: a `field.NAME` filter matches any of them);
/// other unknown values are carried in the source but not indexed (a number or a flag
/// says nothing a visitor would search for).
fn collect_extra(obj: &Map<String, Value>, d: &mut Document) {
    for (k, v) in obj {
        if k == "id"
            || k == "type"
            || k == "keywords"
            || k == "alternates"
            || k == "linked_from"
            || STRING_FIELDS.contains(&k.as_str())
            || BOOKKEEPING_FIELDS.contains(&k.as_str())
        {
            continue;
        }
        match v {
            Value::String(s) => d.extra.push((k.clone(), s.clone())),
            Value::Array(items) if items.iter().all(Value::is_string) => {
                for s in items.iter().filter_map(Value::as_str) {
                    d.extra.push((k.clone(), s.to_owned()));
                }
            }
            _ => {}
        }
    }
}

/// Punctuation an id may hold besides letters and digits (any script): enough for slugs,
/// paths and citation keys, nothing that quotes, escapes, or marks up.
pub const ID_PUNCTUATION: &[char] = &['-', '_', '.', ':', '/', '@', '+', '#', '~'];

/// Whether `c` may appear in a document id: ids are shown in the widget, logged, stored
/// in audit records and compared by visitors' tools, so they hold no quotes, brackets,
/// spaces, backslashes, or invisible and control characters.
pub fn is_id_char(c: char) -> bool {
    c.is_alphanumeric() || ID_PUNCTUATION.contains(&c)
}

/// Links reach visitors through the widget, so only absolute http(s) URLs pass: no
/// `javascript:`, no relative paths, no whitespace or control characters; no credentials
/// (`https://user:pass@host` shows one host and opens another); no quotes, angle brackets
/// or backslashes, which a careless renderer would let out of an attribute and which
/// browsers read as `/`.
pub(crate) fn check_url(url: &str) -> std::result::Result<(), String> {
    let lower = url.to_ascii_lowercase();
    let rest = lower
        .strip_prefix("https://")
        .or_else(|| lower.strip_prefix("http://"));
    let authority = rest.map(|r| r.split(['/', '?', '#']).next().unwrap_or(""));
    match rest {
        None => Err(format!("must be an absolute http(s) URL, got {url:?}")),
        Some(r) if r.is_empty() || r.starts_with('/') => Err(format!("has no host: {url:?}")),
        Some(_) if url.chars().any(|c| c.is_whitespace() || c.is_control()) => {
            Err("must not contain spaces or control characters".to_owned())
        }
        Some(_) if url.contains(['"', '\'', '<', '>', '\\', '`']) => Err(format!(
            "must not contain quotes, angle brackets, backquotes or backslashes \
             (percent-encode them): {url:?}"
        )),
        Some(_) if authority.is_some_and(|a| a.contains('@')) => Err(format!(
            "must not carry a user name or password before the host: {url:?}"
        )),
        Some(_) => Ok(()),
    }
}

fn parse_glossary(g: &Value, problems: &mut Vec<Problem>) -> Vec<(String, Vec<String>)> {
    let Value::Object(map) = g else {
        problems.push(Problem::new(
            "glossary",
            "must be an object mapping words to translations",
        ));
        return Vec::new();
    };
    let mut out = Vec::new();
    for (word, v) in map {
        let path = format!("glossary.{word}");
        if word.trim().is_empty() {
            problems.push(Problem::new(path, "key must not be empty"));
            continue;
        }
        let translations: Vec<String> = match v {
            Value::String(s) => vec![s.clone()],
            Value::Array(items) if items.iter().all(Value::is_string) => items
                .iter()
                .filter_map(|i| i.as_str().map(str::to_owned))
                .collect(),
            _ => {
                problems.push(Problem::new(
                    path,
                    "must be a string or an array of strings",
                ));
                continue;
            }
        };
        if translations.iter().all(|t| t.trim().is_empty()) {
            problems.push(Problem::new(
                path,
                "needs at least one non-empty translation",
            ));
            continue;
        }
        out.push((word.clone(), translations));
    }
    out
}

#[cfg(test)]
mod tests;
