//! The search service: a knowledge base with its retriever, and the search operation the
//! `search` function, the chat pipeline and `rag search` share.
//!
//! # Layout
//! - `filter`: filters over typed entries (`type`, `year`, `venue`, ...) and listing
//!   orders ([`Filters`], [`Order`]).
//! - `intent`: the recogniser that reads listing questions into filters and an order
//!   ([`Intent`]).
//! - `request`: search requests (query string, JSON body, batches) and their validation
//!   ([`SearchRequest`], [`SearchCall`]).
//! - `prebuilt`: the prebuilt index file, public as [`crate::index`].
//! - `handle`: [`KbHandle`], the served index, loaded once per cold start and refreshed by
//!   the knowledge base's ETag.
//! - `refers_back`: [`refers_back`], whether a question refers back to the conversation.
//!
//! A query goes one of two ways ([`SearchIndex::plan`]): an ordinary question is ranked by
//! BM25 as it is; a listing question ("他发表过哪些 CVPR 论文") or a request with filters
//! returns every matching entry in the listing's order, or, when the question also has
//! content words, those words ranked by BM25 within the matching entries.

mod filter;
mod fusion;
mod intent;
mod language;
pub(crate) mod prebuilt;
mod request;

mod handle;
mod refers_back;

pub use crate::config::MAX_TOP_K;
pub use crate::kb::content_version;
pub use filter::{Facets, Filters, Order, Range};
pub use fusion::{fuse_expansion, rrf, Expansion, FUSION_DEPTH, PASSAGE_WEIGHT, RRF_K};
pub use handle::{index_object, KbHandle, Refresh, REFRESH_BUDGET};
pub use intent::{Intent, Vocabulary};
pub use language::Language;
pub use refers_back::refers_back;
pub use request::{SearchCall, SearchRequest, MAX_BATCH};

use crate::error::{Error, Result};
use crate::kb::{
    heading_marks, passage_spans, section_of_marks, Document, HeadingIds, HeadingMark,
    KnowledgeBase,
};
use crate::retrieval::{DocScore, QueryTerm, Ranked, Retriever};
use serde::Serialize;
use std::borrow::Cow;
use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Instant;

/// Longest accepted query, in characters.
pub const MAX_QUERY_CHARS: usize = 2000;
/// Longest snippet, in characters.
const SNIPPET_CHARS: usize = 240;

/// A loaded knowledge base, indexed: built once per cold start (or refresh), then shared
/// read-only by every request.
#[derive(Debug)]
pub struct SearchIndex {
    kb: KnowledgeBase,
    /// Each document's content passages.
    chunks: Vec<Chunks>,
    retriever: Retriever,
    /// Each document's typed fields, parsed for filters and listing orders.
    facets: Vec<Facets>,
    /// Venues and authors of this knowledge base, for the question recogniser.
    vocabulary: Vocabulary,
    /// The site's main language, read once at load (what a question is rewritten into).
    language: Language,
    version: String,
    /// Whether it was read from a prebuilt index file.
    prebuilt: bool,
    /// Bytes of what it was read from: the prebuilt index, or the JSON (0: built in memory).
    source_bytes: u64,
    /// The heading lines of the pages hits were shown from, by document: a page's
    /// headings are read once per warm function, not once per hit (on a manual of
    /// thousands of lines a read cost more than ranking the query). Boxed: the index is
    /// held beside plain rankers, and stays their size.
    marks: Box<Mutex<HashMap<u32, Arc<[HeadingMark]>>>>,
}

/// Pages whose heading lines [`SearchIndex`] keeps at most (the cache is emptied when
/// full): a few hundred bytes a page, against a warm function's requests.
const MARKS_CACHED: usize = 1024;

/// How a query is answered: ranked as it is, or as a filtered (and maybe ordered) listing.
#[derive(Debug, Clone, PartialEq)]
pub struct Plan {
    /// The conditions hits must meet (explicit ones and those read from the question).
    pub filters: Filters,
    /// The order of the hits.
    pub order: Order,
    /// The text ranked by BM25 within the matching entries (empty: no ranking).
    pub content: String,
    /// Whether every matching entry is returned (up to [`MAX_TOP_K`]) rather than `top_k`.
    pub listing: bool,
    /// Whether the recogniser read the question as a listing.
    pub recognised: bool,
}

impl SearchIndex {
    /// Indexes a knowledge base; `version` identifies it (an ETag, a hash) in health output.
    pub fn new(kb: KnowledgeBase, version: impl Into<String>) -> Self {
        Self::assemble(kb, version.into())
    }

    /// A served knowledge base from parts read back from a prebuilt index (its language
    /// as [`Language::of_kb`] read it when the index was written: reading it again would
    /// inflate the content of up to 500 documents).
    pub(crate) fn from_parts(
        kb: KnowledgeBase,
        chunks: Vec<Chunks>,
        mut retriever: Retriever,
        language: Language,
        version: String,
    ) -> Self {
        crate::heap::mark("retriever");
        weigh_documents(&mut retriever, &kb);
        let facets: Vec<Facets> = kb.documents.iter().map(Facets::of).collect();
        crate::heap::mark("facets");
        let vocabulary = Vocabulary::of(&kb, &facets);
        crate::heap::mark("vocabulary");
        Self {
            kb,
            chunks,
            retriever,
            facets,
            vocabulary,
            language,
            version,
            prebuilt: true,
            source_bytes: 0,
            marks: Box::default(),
        }
    }

    /// Each document's content passages.
    pub(crate) fn chunks(&self) -> &[Chunks] {
        &self.chunks
    }

    fn assemble(kb: KnowledgeBase, version: String) -> Self {
        let chunks: Vec<Chunks> = kb.documents.iter().map(Chunks::of).collect();
        crate::heap::mark("passages");
        let texts = kb
            .documents
            .iter()
            .zip(&chunks)
            .map(|(d, c)| (field_text(d), index_texts(d, &c.passages(d))));
        let mut retriever = Retriever::build_fielded(texts, &kb.glossary);
        weigh_documents(&mut retriever, &kb);
        let facets: Vec<Facets> = kb.documents.iter().map(Facets::of).collect();
        let vocabulary = Vocabulary::of(&kb, &facets);
        let language = Language::of_kb(&kb);
        crate::heap::mark("facets");
        Self {
            kb,
            chunks,
            retriever,
            facets,
            vocabulary,
            language,
            version,
            prebuilt: false,
            source_bytes: 0,
            marks: Box::default(),
        }
    }

    /// Whether it was read from a prebuilt index file rather than built from the JSON.
    pub fn is_prebuilt(&self) -> bool {
        self.prebuilt
    }

    /// Records the size of what it was read from (the prebuilt index or the JSON).
    pub fn read_from_bytes(mut self, bytes: u64) -> Self {
        self.source_bytes = bytes;
        self
    }

    /// Bytes of what it was read from: the prebuilt index when [`Self::is_prebuilt`], else
    /// the JSON; 0 when built from a knowledge base in memory.
    pub fn source_bytes(&self) -> u64 {
        self.source_bytes
    }

    /// Reads, validates and indexes a knowledge-base file; the version is a hash of its bytes.
    pub fn load_file(path: &std::path::Path) -> Result<Self> {
        let bytes = std::fs::read(path).map_err(|source| Error::Io {
            path: path.display().to_string(),
            source,
        })?;
        // As a function reads it: UTF-8 or refused, and the bytes gone before indexing.
        let kb = crate::kb::parse_kb_bytes(&bytes, &path.display().to_string())?;
        let version = content_version(&bytes);
        let len = bytes.len() as u64;
        drop(bytes);
        Ok(Self::new(kb, version).read_from_bytes(len))
    }

    /// The knowledge base this index was built from; a hit's `doc` indexes its
    /// `documents`.
    pub fn kb(&self) -> &KnowledgeBase {
        &self.kb
    }

    /// The ranking over the knowledge base's passages; the grounding check scores an
    /// answer's sentences with it too.
    pub fn retriever(&self) -> &Retriever {
        &self.retriever
    }

    /// The version string given at build time.
    pub fn version(&self) -> &str {
        &self.version
    }

    /// The text of a ranked hit's passage: the content passage for pages (without its
    /// headings' id attributes, [`crate::kb::split_heading_id`]), the summary or
    /// description otherwise.
    pub fn passage_text(&self, hit: &Ranked) -> Cow<'_, str> {
        let raw = self.raw_passage(hit);
        match self.kb.documents[hit.doc as usize].content.as_deref() {
            Some(content) if raw.contains(" {#") => {
                HeadingIds::strip_marked(content, &self.heading_marks(hit.doc, content), raw)
            }
            _ => Cow::Borrowed(raw),
        }
    }

    /// Document `doc`'s heading lines (`content` is its content).
    fn heading_marks(&self, doc: u32, content: &str) -> Arc<[HeadingMark]> {
        let mut cache = self.marks.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some(marks) = cache.get(&doc) {
            return Arc::clone(marks);
        }
        if cache.len() >= MARKS_CACHED {
            cache.clear();
        }
        let marks: Arc<[HeadingMark]> = heading_marks(content, content.len()).into();
        cache.insert(doc, Arc::clone(&marks));
        marks
    }

    /// The passage's text as the content holds it.
    fn raw_passage(&self, hit: &Ranked) -> &str {
        let doc = &self.kb.documents[hit.doc as usize];
        let passage = match &self.chunks[hit.doc as usize] {
            Chunks::Whole if hit.passage == 0 => doc.content.as_deref().map(str::trim),
            Chunks::Split(spans) => spans.get(hit.passage as usize).and_then(|s| {
                doc.content
                    .as_deref()?
                    .get(s.start as usize..s.end as usize)
            }),
            _ => None,
        };
        if let Some(p) = passage {
            return p;
        }
        doc.summary
            .as_deref()
            .or(doc.description.as_deref())
            .unwrap_or("")
    }

    /// Where on its page a ranked hit's passage starts: the headings it sits under,
    /// outermost first, and a link to the innermost of them that has an id (passages are
    /// packed across headings, so one may run on into the next section, whose heading line
    /// it then holds). Empty for a passage that is its page's whole content or its
    /// summary. A first heading that only repeats the page's title (the `# Title` a built
    /// page opens with) is left out, so the path says where on the page the passage is,
    /// not again which page.
    pub fn passage_section(&self, hit: &Ranked) -> Section {
        let doc = &self.kb.documents[hit.doc as usize];
        let (Chunks::Split(spans), Some(content)) =
            (&self.chunks[hit.doc as usize], doc.content.as_deref())
        else {
            return Section::default();
        };
        let Some(span) = spans.get(hit.passage as usize) else {
            return Section::default();
        };
        let marks = self.heading_marks(hit.doc, content);
        let mut path = section_of_marks(content, &marks, span.start as usize);
        if path
            .first()
            .is_some_and(|(h, _)| h.trim().eq_ignore_ascii_case(doc.display_title().trim()))
        {
            path.remove(0);
        }
        let id = path.iter().rev().find_map(|(_, id)| id.as_deref());
        let url = match (doc.link(), id) {
            (Some(link), Some(id)) if !link.contains('#') => {
                Some(format!("{link}#{}", crate::percent::fragment(id)))
            }
            _ => None,
        };
        Section {
            headings: path.into_iter().map(|(h, _)| h).collect(),
            url,
        }
    }

    /// Runs a query: analysis, expansion and BM25 ranking (no recogniser, no filters).
    pub fn search(&self, query: &str, top_k: usize, min_score: f32) -> SearchResponse {
        let started = Instant::now();
        let (terms, ranked) = self.retriever.search(query, top_k, min_score);
        let hits = ranked.iter().map(|r| self.hit(r)).collect();
        SearchResponse {
            query: query.to_owned(),
            terms,
            hits,
            filters: None,
            order: None,
            listing: false,
            took_us: started.elapsed().as_micros() as u64,
        }
    }

    /// Runs a validated request: a listing or filtered search when the question is one or
    /// the request has filters ([`SearchIndex::plan`]), else [`SearchIndex::search`].
    pub fn run(&self, req: &SearchRequest, min_score: f32) -> SearchResponse {
        let started = Instant::now();
        let Some(plan) = self.plan(&req.query, &req.filters, req.sort) else {
            return self.search(&req.query, req.top_k, min_score);
        };
        let (terms, ranked) = self.rank_plan(&plan, req.top_k, min_score);
        SearchResponse {
            query: req.query.clone(),
            terms,
            hits: ranked.iter().map(|r| self.hit(r)).collect(),
            filters: (!plan.filters.is_empty()).then_some(plan.filters),
            order: Some(plan.order),
            listing: plan.listing,
            took_us: started.elapsed().as_micros() as u64,
        }
    }

    /// Runs each request of a batch.
    pub fn run_batch(&self, reqs: &[SearchRequest], min_score: f32) -> BatchResponse {
        BatchResponse {
            results: reqs.iter().map(|r| self.run(r, min_score)).collect(),
        }
    }

    /// The question recogniser over this knowledge base's venues and authors.
    pub fn vocabulary(&self) -> &Vocabulary {
        &self.vocabulary
    }

    /// The site's main language ([`Language::of_kb`], read when it was loaded).
    pub fn language(&self) -> Language {
        self.language
    }

    /// Decides how to answer `query` with the explicit `filters` and `sort` of a request:
    /// `None` for an ordinary ranked search (no filters, not a listing question), else the
    /// structured plan. Filters read from the question fill in those not given.
    pub fn plan(&self, query: &str, filters: &Filters, sort: Option<Order>) -> Option<Plan> {
        let (intent, recognised) = self.vocabulary.read(query);
        if !recognised && filters.is_empty() && sort.is_none() {
            return None;
        }
        let mut all = filters.clone();
        all.fill_from(&intent.filters);
        let has_terms = !intent.content.trim().is_empty()
            && !self.retriever.analyze_query(&intent.content).is_empty();
        let order = sort.or(intent.order).unwrap_or(if has_terms {
            Order::Relevance
        } else {
            Order::YearDesc
        });
        Some(Plan {
            filters: all,
            order,
            content: if has_terms {
                intent.content
            } else {
                String::new()
            },
            listing: recognised || !has_terms,
            recognised,
        })
    }

    /// The hits of a plan: the entries that pass its filters, ranked by BM25 on its content
    /// (at least `min_score`) when it has any, in the plan's order; at most `top_k`, or
    /// [`MAX_TOP_K`] for a listing. A recognised listing whose content words match none
    /// of the filtered entries lists them all (the filters are what the question is about).
    pub fn rank_plan(
        &self,
        plan: &Plan,
        top_k: usize,
        min_score: f32,
    ) -> (Vec<QueryTerm>, Vec<Ranked>) {
        let limit = if plan.listing { MAX_TOP_K } else { top_k };
        let terms = if plan.content.is_empty() {
            Vec::new()
        } else {
            self.retriever.analyze_query(&plan.content)
        };
        let passes = |doc: u32| {
            let d = doc as usize;
            plan.filters.matches(&self.kb.documents[d], &self.facets[d])
        };
        let mut ranked: Vec<Ranked> = if terms.is_empty() {
            Vec::new()
        } else {
            self.retriever
                .rank(&terms, self.retriever.documents(), min_score)
                .into_iter()
                .filter(|r| passes(r.doc))
                .collect()
        };
        let mut order = plan.order;
        if terms.is_empty() || (ranked.is_empty() && plan.recognised) {
            if order == Order::Relevance {
                order = Order::YearDesc;
            }
            ranked = (0..self.kb.documents.len() as u32)
                .filter(|&d| passes(d))
                .map(|doc| Ranked {
                    doc,
                    passage: 0,
                    score: 0.0,
                })
                .collect();
        }
        if order != Order::Relevance {
            // Stable: equal entries keep their score order.
            ranked.sort_by(|a, b| {
                order.compare(
                    (a.doc, &self.facets[a.doc as usize]),
                    (b.doc, &self.facets[b.doc as usize]),
                )
            });
        }
        ranked.truncate(limit);
        (terms, ranked)
    }

    /// The ranked documents for a query, without building a response (for the chat path):
    /// `top_k` distinct pages, a page's other-language version left out (the prompt needs
    /// its content once; another page is more use to the model).
    pub fn rank(&self, query: &str, top_k: usize, min_score: f32) -> (Vec<QueryTerm>, Vec<Ranked>) {
        self.rank_as(query, DocScore::Passages, top_k, min_score)
    }

    /// [`SearchIndex::rank`] with documents scored as `scoring` says (a model's
    /// hypothetical answer is matched against each page's best passage alone).
    pub fn rank_as(
        &self,
        query: &str,
        scoring: DocScore,
        top_k: usize,
        min_score: f32,
    ) -> (Vec<QueryTerm>, Vec<Ranked>) {
        self.retriever.search_distinct(
            query,
            scoring,
            top_k,
            min_score,
            crate::retrieval::MIN_COVERAGE,
        )
    }

    fn hit(&self, r: &Ranked) -> SearchHit {
        let doc: &Document = &self.kb.documents[r.doc as usize];
        let section = self.passage_section(r);
        SearchHit {
            id: doc.id.clone(),
            doc_type: doc.doc_type.clone(),
            title: doc.display_title().to_owned(),
            url: doc.link().map(str::to_owned),
            score: (r.score * 1000.0).round() / 1000.0,
            snippet: snippet(&self.passage_text(r)),
            section: section.headings,
            section_url: section.url,
            alternates: doc.alternates.clone(),
        }
    }
}

/// A document's content passages: none, the whole content, or spans of it (byte ranges,
/// [`passage_spans`]), so no passage's text is a copy.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Chunks {
    /// No content.
    None,
    /// The trimmed content is the only passage.
    Whole,
    /// Several passages: where each lies in the content.
    Split(Vec<std::ops::Range<u32>>),
}

impl Chunks {
    fn of(doc: &Document) -> Self {
        let Some(content) = doc.content.as_deref().filter(|c| !c.trim().is_empty()) else {
            return Self::None;
        };
        match passage_spans(content) {
            spans if spans.len() == 1 => Self::Whole,
            spans => Self::Split(
                spans
                    .into_iter()
                    .map(|s| s.start as u32..s.end as u32)
                    .collect(),
            ),
        }
    }

    /// The passages' texts as they are indexed, without their headings' ids (`doc` is the
    /// document they were cut from).
    fn passages<'a>(&'a self, doc: &'a Document) -> Vec<Cow<'a, str>> {
        let content = doc.content.as_deref().unwrap_or("");
        let ids = HeadingIds::of(content);
        match self {
            Self::None => Vec::new(),
            Self::Whole => vec![ids.strip(content.trim())],
            Self::Split(spans) => spans
                .iter()
                .filter_map(|s| content.get(s.start as usize..s.end as usize))
                .map(|p| ids.strip(p))
                .collect(),
        }
    }
}

/// What retrieval weighs each document by beside its text, read from the knowledge base
/// (not stored in the index, so a JSON load and a prebuilt one agree): release notes rank
/// below the page about what they mention, and each page by its standing on the site.
fn weigh_documents(retriever: &mut Retriever, kb: &KnowledgeBase) {
    retriever.demote(
        kb.documents
            .iter()
            .enumerate()
            .filter(|(_, d)| d.kind.as_deref() == Some("release-notes"))
            .map(|(i, _)| i as u32),
    );
    let linked_from: Vec<Option<u32>> = kb.documents.iter().map(|d| d.linked_from).collect();
    retriever.weigh_links(&linked_from);
}

/// The words that name a document, which retrieval scores as a field of their own: its
/// title (or name), summary, description and keywords, its content's lead paragraph and
/// its headings.
fn field_text(doc: &Document) -> String {
    let mut text = String::from(doc.display_title());
    for part in [&doc.summary, &doc.description].into_iter().flatten() {
        text.push('\n');
        text.push_str(part);
    }
    for keyword in &doc.keywords {
        text.push('\n');
        text.push_str(keyword);
    }
    if let Some(content) = &doc.content {
        if let Some(lead) = lead_paragraph(content, doc.display_title()) {
            text.push('\n');
            text.push_str(lead);
        }
        for (_, _, title) in crate::kb::headings(content) {
            text.push('\n');
            text.push_str(&title);
        }
    }
    text
}

/// Longest lead paragraph kept as a naming field, in bytes (cut at a word).
const LEAD_MAX: usize = 300;

/// The content's first paragraph of prose (not a heading, not code, not the title again),
/// cut to about [`LEAD_MAX`] bytes: what most generators put first under a page's title is
/// what the page is about (a man page's NAME line, a module's one-line summary, an API
/// item's first sentence).
fn lead_paragraph<'a>(content: &'a str, title: &str) -> Option<&'a str> {
    let para = content.split("\n\n").map(str::trim).find(|p| {
        !p.is_empty()
            && !p.starts_with('#')
            && !p.starts_with("```")
            && !p.starts_with("~~~")
            && !repeats_title(p, title)
    })?;
    if para.len() <= LEAD_MAX {
        return Some(para);
    }
    let mut cut = LEAD_MAX;
    while !para.is_char_boundary(cut) {
        cut -= 1;
    }
    Some(
        para[..cut]
            .rsplit_once(' ')
            .map_or(&para[..cut], |(head, _)| head),
    )
}

/// Whether a paragraph only repeats (part of) the title, as a generator's page header
/// does ("38.2. The PostgreSQL Type System" above PostgreSQL's section, "Custom Commands"
/// under "Doxygen: Custom Commands"): as the lead it would name nothing the title does not.
fn repeats_title(paragraph: &str, title: &str) -> bool {
    // Only a paragraph no longer than the title can be part of it: a long one is not copied.
    if paragraph.split_whitespace().map(str::len).sum::<usize>() > title.len() {
        return false;
    }
    let fold = |s: &str| {
        s.split_whitespace()
            .collect::<Vec<_>>()
            .join(" ")
            .to_lowercase()
    };
    let (paragraph, title) = (fold(paragraph), fold(title));
    !paragraph.is_empty() && title.contains(&paragraph)
}

/// The texts retrieval indexes for one document: its metadata alone, or, with content,
/// metadata + first passage and then each further passage under the title (so a passage
/// found on its own still names its page).
fn index_texts(doc: &Document, chunks: &[Cow<'_, str>]) -> Vec<String> {
    let meta = doc.metadata_text();
    if chunks.is_empty() {
        return vec![meta];
    }
    chunks
        .iter()
        .enumerate()
        .map(|(i, c)| {
            if i == 0 {
                format!("{meta}\n{c}")
            } else {
                format!("{}\n{c}", doc.display_title())
            }
        })
        .collect()
}

/// The first ~240 characters of a passage with runs of whitespace folded to one space,
/// cut at a word boundary where there is one.
fn snippet(text: &str) -> String {
    // This runs for every hit of every search: look only at the head, and copy it as it is
    // unless it has whitespace to fold (summaries usually do not).
    let text = text.trim();
    let cut = crate::retrieval::nth_char_start(text, SNIPPET_CHARS);
    let head = &text[..cut.unwrap_or(text.len())];
    let messy = head.bytes().any(|b| matches!(b, b'\n' | b'\r' | b'\t')) || head.contains("  ");
    let mut out = if messy {
        head.split_whitespace().collect::<Vec<_>>().join(" ")
    } else {
        head.to_owned()
    };
    if cut.is_some() {
        // Cut at the last space if that keeps at least half the snippet.
        if let Some(at) = out.rfind(' ').filter(|&at| at > out.len() / 2) {
            out.truncate(at);
        }
        out.push('…');
    }
    out
}

/// The body of a search response (`docs/architecture.md`, "HTTP API").
#[derive(Debug, Clone, Serialize)]
pub struct SearchResponse {
    /// The query as received.
    pub query: String,
    /// Query terms after analysis and expansion, with weights.
    pub terms: Vec<QueryTerm>,
    /// Ranked hits, best first.
    pub hits: Vec<SearchHit>,
    /// The filters applied (given, or read from a listing question); absent when none.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub filters: Option<Filters>,
    /// The order of the hits, for filtered and listing searches.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub order: Option<Order>,
    /// True when every matching entry was returned (a listing), not the top `k`.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub listing: bool,
    /// Time spent searching, in microseconds.
    pub took_us: u64,
}

/// The body of a batch search: one response per query, in order.
#[derive(Debug, Clone, Serialize)]
pub struct BatchResponse {
    /// One response per query, in the order of the request's `queries`.
    pub results: Vec<SearchResponse>,
}

/// Where on its page a passage is ([`SearchIndex::passage_section`]).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Section {
    /// The headings it starts under, outermost first; empty for a whole page.
    pub headings: Vec<String>,
    /// The page's link to the innermost of them with an id (`…/git-config.html#_syntax`).
    pub url: Option<String>,
}

/// One search hit.
#[derive(Debug, Clone, Serialize)]
pub struct SearchHit {
    /// The entry's id in the knowledge base (what `get_page` and ingest take).
    pub id: String,
    /// The entry's `type` as the knowledge base has it (`publication`, `page`, ...).
    #[serde(rename = "type")]
    pub doc_type: String,
    /// Title (a project's name).
    pub title: String,
    /// The document's main link, from the knowledge base.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub url: Option<String>,
    /// BM25 score, rounded to 3 decimals.
    pub score: f32,
    /// The start of the best passage.
    pub snippet: String,
    /// The headings the best passage starts under on its page, outermost first
    /// ([`SearchIndex::passage_section`]); left out when the passage is the whole page.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub section: Vec<String>,
    /// The page's link to that section, when one of its headings has an id.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub section_url: Option<String>,
    /// Other versions of the same page (knowledge-base `alternates`), if any.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub alternates: Vec<String>,
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn sample() -> SearchIndex {
        let kb = KnowledgeBase::from_value(&json!({"documents": [
            {"id": "pfc", "type": "publication", "title": "Partial FC: Training 10 Million Identities on a Single Machine",
             "summary": "Face recognition training at scale.", "paper_url": "https://arxiv.org/abs/2010.05222"},
            {"id": "llava", "type": "github_project", "name": "LLaVA-OneVision-1.5",
             "url": "https://github.com/EvolvingLMMs-Lab/LLaVA-OneVision-1.5", "description": "A multimodal model."},
            {"id": "page", "type": "page", "title": "Notes", "content": "cooking recipes"}
        ]}))
        .unwrap();
        SearchIndex::new(kb, "v1")
    }

    #[test]
    fn chinese_query_finds_english_document() {
        let r = sample().search("人脸识别训练", 3, 0.0);
        assert_eq!(r.hits[0].id, "pfc");
        assert!(r
            .terms
            .iter()
            .any(|t| t.term == "face" && t.from.as_deref() == Some("人脸识别")));
    }

    #[test]
    fn hits_carry_kb_links_titles_and_snippets() {
        let r = sample().search("LLaVA multimodal", 3, 0.0);
        let h = &r.hits[0];
        assert_eq!(
            (h.id.as_str(), h.doc_type.as_str()),
            ("llava", "github_project")
        );
        assert_eq!(h.title, "LLaVA-OneVision-1.5");
        assert_eq!(
            h.url.as_deref(),
            Some("https://github.com/EvolvingLMMs-Lab/LLaVA-OneVision-1.5")
        );
        assert_eq!(h.snippet, "A multimodal model.");
    }

    #[test]
    fn a_hit_deep_in_a_long_page_names_the_section_of_its_passage() {
        let filler = "Other words fill this part of the page. ".repeat(40);
        let kb = KnowledgeBase::from_value(&serde_json::json!([
            {"id": "guide", "type": "page", "title": "User guide", "content": format!(
                "# User guide\n\n{filler}\n\n## Branches\n\n{filler}\n\n### Merging\n\n{filler}\n\n\
                 A fast-forward merge moves the branch pointer.")},
            {"id": "short", "type": "page", "title": "Merge", "content": "Merging joins histories."}
        ]))
        .unwrap();
        let r = SearchIndex::new(kb, "t").search("fast-forward merge", 2, 0.0);
        let json = serde_json::to_value(&r.hits).unwrap();
        let hit = |id: &str| {
            json.as_array()
                .unwrap()
                .iter()
                .find(|h| h["id"] == id)
                .unwrap()
        };
        assert_eq!(
            hit("guide")["section"],
            serde_json::json!(["Branches", "Merging"])
        );
        // A page shown whole has no section to name.
        assert!(hit("short").get("section").is_none(), "{}", hit("short"));
    }

    #[test]
    fn a_hit_links_to_its_section_and_ranks_as_the_page_without_ids_does() {
        let filler = "Other words fill this part of the page. ".repeat(40);
        let page = |ids: bool| {
            let id = |s: &str| {
                if ids {
                    format!(" {{#{s}}}")
                } else {
                    String::new()
                }
            };
            format!(
                "# User guide{}\n\n{filler}\n\n## Branches{}\n\n{filler}\n\n\
                 ### Merging\n\n{filler}\n\nA fast-forward merge moves the branch pointer.",
                id("top"),
                id("branches"),
            )
        };
        let kb = |ids: bool| {
            KnowledgeBase::from_value(&serde_json::json!([
                {"id": "guide", "type": "page", "title": "User guide",
                 "url": "https://x.test/guide.html", "content": page(ids)},
                {"id": "merge", "type": "page", "title": "Merge", "content": "Merging joins histories."}
            ]))
            .unwrap()
        };
        let (with, without) = (
            SearchIndex::new(kb(true), "t"),
            SearchIndex::new(kb(false), "t"),
        );
        let q = "fast-forward merge branch";
        let (a, b) = (with.search(q, 2, 0.0), without.search(q, 2, 0.0));
        let guide = a.hits.iter().find(|h| h.id == "guide").unwrap();
        assert_eq!(guide.section, ["Branches", "Merging"]);
        // Merging has no id: the link goes to the section around it.
        assert_eq!(
            guide.section_url.as_deref(),
            Some("https://x.test/guide.html#branches")
        );
        assert!(!guide.snippet.contains("{#"), "{}", guide.snippet);
        let plain = b.hits.iter().find(|h| h.id == "guide").unwrap();
        assert_eq!(plain.section_url, None);
        // The ids are no words of the page: the same scores, passages and snippets.
        let scored = |r: &SearchResponse| {
            r.hits
                .iter()
                .map(|h| (h.id.clone(), h.score.to_bits(), h.snippet.clone()))
                .collect::<Vec<_>>()
        };
        assert_eq!(scored(&a), scored(&b));
        let (_, ranked) = with.rank(q, 1, 0.0);
        assert!(!with.passage_text(&ranked[0]).contains("{#"));
    }

    #[test]
    fn min_score_and_top_k_limit_hits() {
        let idx = sample();
        assert!(idx.search("partial", 3, 1e6).hits.is_empty());
        assert_eq!(
            idx.search("partial multimodal cooking", 2, 0.0).hits.len(),
            2
        );
    }

    #[test]
    fn snippets_fold_whitespace_and_keep_short_text_whole() {
        assert_eq!(
            snippet("  Face\n\n recognition\ttraining "),
            "Face recognition training"
        );
        assert_eq!(snippet(""), "");
        let exact = "x".repeat(SNIPPET_CHARS);
        assert_eq!(snippet(&exact), exact);
        let long = "字".repeat(SNIPPET_CHARS + 10);
        assert_eq!(
            snippet(&long).chars().count(),
            SNIPPET_CHARS + 1,
            "hard cut plus ellipsis"
        );
    }

    #[test]
    fn a_file_that_is_not_utf8_is_refused_as_a_function_would() {
        let path = std::env::temp_dir().join(format!("rag-latin1-{}.json", std::process::id()));
        // "café" in Latin-1: the é is one byte that is not UTF-8.
        std::fs::write(
            &path,
            b"[{\"id\": \"a\", \"type\": \"page\", \"title\": \"caf\xe9\"}]",
        )
        .expect("write");
        let err = SearchIndex::load_file(&path).err().map(|e| e.to_string());
        let _ = std::fs::remove_file(&path);
        let err = err.expect("refused");
        assert!(err.contains("is not UTF-8 text"), "{err}");
    }

    #[test]
    fn snippets_are_cut_at_a_word_boundary() {
        let s = snippet(&"word ".repeat(100));
        assert!(s.ends_with("word…"), "{s}");
        assert!(s.chars().count() <= SNIPPET_CHARS + 1);
    }

    #[test]
    fn the_lead_paragraph_is_the_first_that_says_more_than_the_title() {
        // PostgreSQL's page header repeats the section title as a line of its own, and
        // Doxygen's repeats the title without the site's name: the lead is what follows.
        let pg = "38.2. The PostgreSQL Type System\n\n## 38.2. The PostgreSQL Type System\n\n\
                  PostgreSQL data types can be divided into base types and domains.";
        assert_eq!(
            lead_paragraph(pg, "38.2.  The PostgreSQL Type System"),
            Some("PostgreSQL data types can be divided into base types and domains.")
        );
        let doxygen = "Custom Commands\n\nDoxygen provides a large number of special commands.";
        assert_eq!(
            lead_paragraph(doxygen, "Doxygen: Custom Commands"),
            Some("Doxygen provides a large number of special commands.")
        );
        // A paragraph holding the title and more is the lead (a man page's NAME line).
        let man = "git-mv - Move or rename a file\n\nMore.";
        assert_eq!(
            lead_paragraph(man, "git-mv"),
            Some("git-mv - Move or rename a file")
        );
        assert_eq!(lead_paragraph("Notes", "Notes"), None);
    }

    #[test]
    fn content_version_is_stable_and_content_sensitive() {
        assert_eq!(content_version(b"abc"), content_version(b"abc"));
        assert_ne!(content_version(b"abc"), content_version(b"abd"));
    }
}
