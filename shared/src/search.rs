//! The search service: a knowledge base with its retriever, and the search operation the
//! `search` function, the chat pipeline and `rag search` share.

use crate::error::{Error, Result};
use crate::kb::{split_passages, Document, KnowledgeBase};
use crate::retrieval::{QueryTerm, Ranked, Retriever};
use serde::{Deserialize, Serialize};
use std::time::Instant;

/// Longest accepted query, in characters.
pub const MAX_QUERY_CHARS: usize = 2000;
/// Largest accepted `top_k`.
pub const MAX_TOP_K: usize = 50;
/// Longest snippet, in characters.
const SNIPPET_CHARS: usize = 240;

/// A loaded knowledge base, indexed: built once per cold start (or refresh), then shared
/// read-only by every request.
#[derive(Debug)]
pub struct SearchIndex {
    kb: KnowledgeBase,
    /// Each document's content passages (empty when it has no content).
    chunks: Vec<Vec<String>>,
    retriever: Retriever,
    version: String,
}

impl SearchIndex {
    /// Indexes a knowledge base; `version` identifies it (an ETag, a hash) in health output.
    pub fn new(kb: KnowledgeBase, version: impl Into<String>) -> Self {
        let chunks: Vec<Vec<String>> = kb
            .documents
            .iter()
            .map(|d| {
                d.content
                    .as_deref()
                    .filter(|c| !c.trim().is_empty())
                    .map_or_else(Vec::new, split_passages)
            })
            .collect();
        let texts = kb
            .documents
            .iter()
            .zip(&chunks)
            .map(|(d, c)| index_texts(d, c));
        let retriever = Retriever::build(texts, &kb.glossary);
        Self {
            kb,
            chunks,
            retriever,
            version: version.into(),
        }
    }

    /// Reads, validates and indexes a knowledge-base file; the version is a hash of its bytes.
    pub fn load_file(path: &std::path::Path) -> Result<Self> {
        let bytes = std::fs::read(path).map_err(|source| Error::Io {
            path: path.display().to_string(),
            source,
        })?;
        let text = String::from_utf8_lossy(&bytes);
        let kb = KnowledgeBase::from_json_str(&text, &path.display().to_string())?;
        Ok(Self::new(kb, content_version(&bytes)))
    }

    /// The knowledge base.
    pub fn kb(&self) -> &KnowledgeBase {
        &self.kb
    }

    /// The retriever.
    pub fn retriever(&self) -> &Retriever {
        &self.retriever
    }

    /// The version string given at build time.
    pub fn version(&self) -> &str {
        &self.version
    }

    /// The text of a ranked hit's passage: the content passage for pages, the summary or
    /// description otherwise.
    pub fn passage_text(&self, hit: &Ranked) -> &str {
        let doc = &self.kb.documents[hit.doc as usize];
        if let Some(p) = self.chunks[hit.doc as usize].get(hit.passage as usize) {
            return p;
        }
        doc.summary
            .as_deref()
            .or(doc.description.as_deref())
            .unwrap_or("")
    }

    /// Runs a query: analysis, expansion and ranking.
    pub fn search(&self, query: &str, top_k: usize, min_score: f32) -> SearchResponse {
        let started = Instant::now();
        let (terms, ranked) = self.retriever.search(query, top_k, min_score);
        let hits = ranked.iter().map(|r| self.hit(r)).collect();
        SearchResponse {
            query: query.to_owned(),
            terms,
            hits,
            took_us: started.elapsed().as_micros() as u64,
        }
    }

    /// The ranked documents for a query, without building a response (for the chat path).
    pub fn rank(&self, query: &str, top_k: usize, min_score: f32) -> (Vec<QueryTerm>, Vec<Ranked>) {
        self.retriever.search(query, top_k, min_score)
    }

    fn hit(&self, r: &Ranked) -> SearchHit {
        let doc: &Document = &self.kb.documents[r.doc as usize];
        SearchHit {
            id: doc.id.clone(),
            doc_type: doc.doc_type.clone(),
            title: doc.display_title().to_owned(),
            url: doc.link().map(str::to_owned),
            score: (r.score * 1000.0).round() / 1000.0,
            snippet: snippet(self.passage_text(r)),
        }
    }
}

/// The texts retrieval indexes for one document: its metadata alone, or, with content,
/// metadata + first passage and then each further passage under the title (so a passage
/// found on its own still names its page).
fn index_texts(doc: &Document, chunks: &[String]) -> Vec<String> {
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

/// A short version tag for content: FNV-1a 64 of the bytes, hex. Stable across runs, so
/// the same file always reports the same version.
pub fn content_version(bytes: &[u8]) -> String {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for &b in bytes {
        h ^= u64::from(b);
        h = h.wrapping_mul(0x0100_0000_01b3);
    }
    format!("{h:016x}")
}

/// The first ~240 characters of a passage with runs of whitespace folded to one space,
/// cut at a word boundary where there is one.
fn snippet(text: &str) -> String {
    // This runs for every hit of every search: look only at the head, and copy it as it is
    // unless it has whitespace to fold (summaries usually do not).
    let text = text.trim();
    let cut = text.char_indices().nth(SNIPPET_CHARS).map(|(i, _)| i);
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
    /// Time spent searching, in microseconds.
    pub took_us: u64,
}

/// One search hit.
#[derive(Debug, Clone, Serialize)]
pub struct SearchHit {
    /// Document id.
    pub id: String,
    /// Document type.
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
}

/// A validated search request.
#[derive(Debug, Clone, PartialEq)]
pub struct SearchRequest {
    /// The query text, trimmed.
    pub query: String,
    /// How many hits at most.
    pub top_k: usize,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct SearchBody {
    query: Option<serde_json::Value>,
    top_k: Option<serde_json::Value>,
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
        })
    }

    /// Parses a POST body `{"query": "...", "top_k": N}`.
    pub fn from_json(body: &[u8], default_k: usize) -> Result<Self> {
        let b: SearchBody = serde_json::from_slice(body).map_err(|e| {
            Error::InvalidInput(format!(
                "body must be JSON like {{\"query\": \"...\", \"top_k\": 3}}: {e}"
            ))
        })?;
        let query = match &b.query {
            None | Some(serde_json::Value::Null) => None,
            Some(serde_json::Value::String(s)) => Some(s.as_str()),
            Some(_) => return Err(Error::InvalidInput("query must be a string".into())),
        };
        let k = match &b.top_k {
            None | Some(serde_json::Value::Null) => None,
            Some(v) => Some(v.to_string()),
        };
        Self::new(query, k.as_deref(), default_k)
    }
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
    fn min_score_and_top_k_limit_hits() {
        let idx = sample();
        assert!(idx.search("partial", 3, 1e6).hits.is_empty());
        assert_eq!(
            idx.search("partial multimodal cooking", 2, 0.0).hits.len(),
            2
        );
    }

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
                top_k: 5
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
    fn snippets_are_cut_at_a_word_boundary() {
        let s = snippet(&"word ".repeat(100));
        assert!(s.ends_with("word…"), "{s}");
        assert!(s.chars().count() <= SNIPPET_CHARS + 1);
    }

    #[test]
    fn content_version_is_stable_and_content_sensitive() {
        assert_eq!(content_version(b"abc"), content_version(b"abc"));
        assert_ne!(content_version(b"abc"), content_version(b"abd"));
    }
}
