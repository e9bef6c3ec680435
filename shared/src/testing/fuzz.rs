//! Fuzz harnesses: one function per `cargo fuzz` target in `fuzz/`, also replayed over the
//! committed corpora by `tests/it/fuzz_corpus.rs`, so every CI run checks them.
//!
//! Each harness takes arbitrary bytes, drives one family of input parsers the way the
//! functions do, and panics only when an invariant breaks (a panic is what the fuzzer
//! reports). "Rejected with a 4xx" is a correct outcome for any input; what must never
//! happen is a panic in the code under test, a 5xx for bad input, or an accepted input
//! that breaks what later stages rely on.

use std::sync::OnceLock;

use lambda_http::aws_lambda_events::query_map::QueryMap;
use lambda_http::http::Uri;
use serde_json::{json, Value};

use crate::chat::{
    is_valid_id, offline_answer, offline_deltas, retrieve_followup, ChatConfig, ChatRequest,
    OfflineReason,
};
use crate::edge::{error_response, escape_raw_query, ApiError};
use crate::error::Error;
use crate::index as prebuilt;
use crate::ingest::{authorize, parse_put_body, Patch, Precondition, TokenHash};
use crate::kb::{
    fingerprint, parse_kb_bytes, split_passages, summaries, KbDiff, PASSAGE_MAX_CHARS,
};
use crate::llm::sse::{parse_completion, ChunkDecoder, SseParser};
use crate::llm::transport::FrameDecoder;
use crate::message::{ChatMessage, Role};
use crate::prompt::{build_prompt, context_blocks, estimate_tokens, PromptInput, ANSWER_RESERVE};
use crate::retrieval::{is_han, runs, Analyzer, Lexicon, Script};
use crate::search::{content_version, SearchIndex, SearchRequest, MAX_QUERY_CHARS, MAX_TOP_K};

/// The repository's sample knowledge base (29 documents and a glossary): what the
/// harnesses search, chat over and patch.
pub const SAMPLE_KB: &str = include_str!("../../../knowledge_base.json");

/// Hits per query when a request names none (the functions' default `TOP_K`).
const DEFAULT_TOP_K: usize = 3;
/// The functions' default `MIN_SCORE`.
const MIN_SCORE: f32 = 0.5;
/// The ingest token the `request_body` harness authenticates against.
const TOKEN: &str = "fuzz-token";

struct Sample {
    index: SearchIndex,
    value: Value,
    lexicon: Lexicon,
}

/// The sample knowledge base, parsed and indexed once per process.
fn sample() -> &'static Sample {
    static SAMPLE: OnceLock<Sample> = OnceLock::new();
    SAMPLE.get_or_init(|| {
        let kb = parse_kb_bytes(SAMPLE_KB.as_bytes(), "knowledge_base.json")
            .unwrap_or_else(|e| panic!("the sample knowledge base is invalid: {e}"));
        let lexicon = Lexicon::new(&kb.glossary);
        let value = serde_json::from_str(SAMPLE_KB)
            .unwrap_or_else(|e| panic!("the sample knowledge base is not JSON: {e}"));
        Sample {
            index: SearchIndex::new(kb, content_version(SAMPLE_KB.as_bytes())),
            value,
            lexicon,
        }
    })
}

/// Asserts that `err` is the caller's fault as the functions report it: a 4xx with a code,
/// a message, and a body that is the JSON error shape.
fn assert_client_error(err: &Error, what: &str) -> ApiError {
    let api = ApiError::from(err);
    assert!(
        (400..500).contains(&api.status),
        "{what}: bad input became {} {}: {err}",
        api.status,
        api.code
    );
    assert!(!api.message.is_empty(), "{what}: empty error message");
    let res = error_response(&api, "fuzz", None);
    let body: Value = serde_json::from_slice(res.body().as_ref())
        .unwrap_or_else(|e| panic!("{what}: the error body is not JSON: {e}"));
    assert_eq!(body["error"]["code"], api.code, "{what}");
    assert_eq!(body["error"]["request_id"], "fuzz", "{what}");
    api
}

/// Request bodies and headers of all three functions: the chat body (then, when valid, the
/// whole offline chat pipeline up to the prompt), the search body and query string (also
/// as a raw query string the runtime must escape), the
/// ingest `PATCH` body (applied to the sample knowledge base), and ingest's
/// `Authorization` and `If-Match`/`If-None-Match` headers.
pub fn request_body(data: &[u8]) {
    chat_body(data);
    search_body(data);
    patch_body(data);
    ingest_headers(data);
}

fn chat_body(data: &[u8]) {
    let limits = ChatConfig::default();
    let req = match ChatRequest::from_json(data, &limits) {
        Ok(req) => req,
        Err(e) => {
            assert_eq!(assert_client_error(&e, "chat").code, "invalid_request");
            return;
        }
    };
    // What the rest of the pipeline relies on.
    let trimmed_nonempty = |s: &str| !s.is_empty() && s.trim() == s;
    assert!(
        trimmed_nonempty(&req.question),
        "question {:?}",
        req.question
    );
    assert!(req.question.chars().count() <= limits.max_message_chars);
    assert!(req.history.len() < limits.max_messages);
    for m in &req.history {
        assert!(matches!(m.role, Role::User | Role::Assistant), "{m:?}");
        assert!(trimmed_nonempty(&m.content), "{m:?}");
        assert!(m.content.chars().count() <= limits.max_message_chars);
    }
    assert!(req
        .top_k
        .is_none_or(|k| (1..=limits.max_top_k).contains(&k)));
    assert!(req.session_id.as_deref().is_none_or(is_valid_id));
    assert!(req.request_id.as_deref().is_none_or(is_valid_id));

    // The request in canonical form parses back to itself.
    let mut messages: Vec<Value> = req
        .history
        .iter()
        .map(|m| json!({"role": m.role.as_str(), "content": m.content}))
        .collect();
    messages.push(json!({"role": "user", "content": req.question}));
    let canonical = json!({"messages": messages, "session_id": req.session_id,
        "stream": req.stream, "top_k": req.top_k, "request_id": req.request_id});
    let again = ChatRequest::from_json(canonical.to_string().as_bytes(), &limits);
    assert_eq!(again.ok().as_ref(), Some(&req), "canonical form of {req:?}");

    chat_pipeline(&req, &limits);
}

/// Everything the chat service does with a valid request before the model: retrieval
/// (with follow-up resolution), context blocks, the prompt within its budget, and the
/// offline answer with its streamed pieces.
fn chat_pipeline(req: &ChatRequest, limits: &ChatConfig) {
    let index = &sample().index;
    let top_k = req.top_k.unwrap_or(DEFAULT_TOP_K);
    let found = retrieve_followup(index, &req.question, &req.history, top_k, MIN_SCORE);
    assert!(found.hits.len() <= top_k);
    let blocks = context_blocks(index, &found.hits);
    let prompt = build_prompt(&PromptInput {
        system_prompt: &limits.system_prompt,
        blocks: &blocks,
        history: &req.history,
        question: &req.question,
        max_context_tokens: limits.max_context_tokens,
    });
    let b = prompt.budget;
    assert_eq!(b.blocks_kept + b.blocks_dropped, blocks.len(), "{b:?}");
    assert_eq!(
        b.history_kept + b.history_dropped,
        req.history.len(),
        "{b:?}"
    );
    if !b.overflow {
        assert!(
            b.estimated_prompt_tokens <= limits.max_context_tokens - ANSWER_RESERVE,
            "{b:?}"
        );
    }
    // The question goes last, neutralized like all visitor text (crate::prompt::neutralize).
    assert_eq!(
        prompt.messages.last(),
        Some(&ChatMessage::new(
            Role::User,
            crate::prompt::neutralize(&req.question).into_owned()
        ))
    );
    let answer = offline_answer(index, &found.hits, &req.question, OfflineReason::NoModel);
    assert_eq!(offline_deltas(&answer).concat(), answer);
}

fn search_body(data: &[u8]) {
    match SearchRequest::from_json(data, DEFAULT_TOP_K) {
        Ok(req) => check_search_request(&req),
        Err(e) => {
            assert_client_error(&e, "search body");
        }
    }
    // The same bytes as a query string's `q` and `k`, split at the first `&`.
    let text = String::from_utf8_lossy(data);
    let (q, k) = match text.split_once('&') {
        Some((q, k)) => (q, Some(k)),
        None => (text.as_ref(), None),
    };
    // The same bytes as a raw query string a client sent unescaped: escaped for the
    // runtime, they make a valid URI and the same parameters.
    let escaped = escape_raw_query(&text);
    let uri = format!("https://x.example/?{escaped}");
    assert!(Uri::try_from(uri.as_str()).is_ok(), "{uri:?}");
    let params = |q: &str| q.parse::<QueryMap>().ok();
    assert_eq!(params(&escaped), params(&text), "escaping changed {text:?}");
    match SearchRequest::new(Some(q), k, DEFAULT_TOP_K) {
        Ok(req) => check_search_request(&req),
        Err(e) => {
            assert_client_error(&e, "search query");
        }
    }
}

fn check_search_request(req: &SearchRequest) {
    assert!(!req.query.is_empty() && req.query.trim() == req.query);
    assert!(req.query.chars().count() <= MAX_QUERY_CHARS);
    assert!((1..=MAX_TOP_K).contains(&req.top_k));
    let found = sample().index.search(&req.query, req.top_k, MIN_SCORE);
    assert!(found.hits.len() <= req.top_k);
    assert!(serde_json::to_string(&found).is_ok());
}

fn patch_body(data: &[u8]) {
    let patch = match Patch::from_json(data) {
        Ok(p) => p,
        Err(e) => {
            assert_client_error(&e, "patch body");
            return;
        }
    };
    assert!(!patch.upsert.is_empty() || !patch.delete.is_empty());
    let mut ids: Vec<&str> = patch
        .upsert
        .iter()
        .map(|d| d.get("id").and_then(Value::as_str).unwrap_or_default())
        .collect();
    ids.extend(patch.delete.iter().map(String::as_str));
    let total = ids.len();
    ids.sort_unstable();
    ids.dedup();
    assert_eq!(ids.len(), total, "an id is upserted or deleted twice");
    match patch.apply(&sample().value) {
        Ok(patched) => {
            // The result is what a PUT of it would be: valid, and indexable.
            let bytes = serde_json::to_vec(&patched.value).unwrap_or_default();
            let (_, kb) = parse_put_body(&bytes)
                .unwrap_or_else(|e| panic!("an applied patch does not validate: {e}"));
            let ids = |kb: &crate::kb::KnowledgeBase| {
                kb.documents
                    .iter()
                    .map(|d| d.id.clone())
                    .collect::<Vec<_>>()
            };
            assert_eq!(ids(&kb), ids(&patched.kb));
            SearchIndex::new(patched.kb, "patched");
        }
        Err(e) => {
            assert_client_error(&e, "patch apply");
        }
    }
}

fn ingest_headers(data: &[u8]) {
    let text = String::from_utf8_lossy(data);
    let mut parts = text.splitn(3, '\0');
    let (first, second, third) = (parts.next(), parts.next(), parts.next());
    match Precondition::from_headers(first, second) {
        Ok(Precondition::IfMatch(etags)) => {
            assert!(!etags.is_empty() && etags.iter().all(|e| !e.is_empty()));
        }
        Ok(_) => {}
        Err(e) => {
            assert_client_error(&e, "precondition");
        }
    }
    let expected = TokenHash::of_token(TOKEN);
    match authorize(Some(&expected), third.or(first)) {
        Ok(caller) => assert!(caller.who.starts_with("token:"), "{caller:?}"),
        Err(e) => {
            let status = assert_client_error(&e, "authorization").status;
            assert!(status == 401 || status == 403, "{status}");
        }
    }
}

/// The query path: script runs, English terms, Chinese segmentation and expansion, and
/// ranking over the sample knowledge base. The first byte picks `k`, the rest is the query.
pub fn tokenize(data: &[u8]) {
    let Some((&first, rest)) = data.split_first() else {
        return;
    };
    let k = usize::from(first % 64);
    let text = String::from_utf8_lossy(rest);
    let s = sample();

    for run in runs(&text) {
        assert!(!run.text.is_empty());
        let fits = |c: char| match run.script {
            Script::Han => is_han(c),
            Script::Latin => c.is_alphanumeric() && !is_han(c),
        };
        assert!(run.text.chars().all(fits), "{run:?}");
        if run.script == Script::Han {
            // Segmentation covers the run exactly, in order.
            let words: String = s
                .lexicon
                .expand(&run.text)
                .into_iter()
                .map(|e| e.word)
                .collect();
            assert_eq!(words, run.text);
        }
    }
    for term in Analyzer::new().terms(&text) {
        assert!(!term.is_empty());
    }
    let _ = estimate_tokens(&text);

    let (terms, ranked) = s.index.rank(&text, k, 0.0);
    for t in &terms {
        assert!(
            !t.term.is_empty() && t.weight.is_finite() && t.weight > 0.0,
            "{t:?}"
        );
    }
    assert!(ranked.len() <= k, "{} hits for k = {k}", ranked.len());
    let n_docs = s.index.kb().documents.len();
    for (i, r) in ranked.iter().enumerate() {
        assert!(r.score.is_finite() && r.score >= 0.0, "{r:?}");
        assert!((r.doc as usize) < n_docs);
        assert!(ranked[..i].iter().all(|p| p.doc != r.doc), "doc twice");
        if let Some(prev) = i.checked_sub(1).map(|p| ranked[p]) {
            assert!(prev.score >= r.score, "not sorted: {prev:?} then {r:?}");
        }
    }
    let found = s.index.search(&text, k, MIN_SCORE);
    assert!(found.hits.iter().all(|h| h.score >= MIN_SCORE - 1e-3));
    let answer = offline_answer(&s.index, &ranked, &text, OfflineReason::DailyBudget);
    assert!(!answer.is_empty());
}

/// The provider's event stream: the SSE parser and the chunk decoder fed the input in one
/// piece, byte by byte, and in pieces cut where the first two bytes say, must agree; the
/// non-streaming response parser must not panic on the same bytes.
pub fn sse(data: &[u8]) {
    let (seed, body) = match data {
        [a, b, rest @ ..] => (u16::from_le_bytes([*a, *b]), rest),
        _ => return,
    };
    let whole = SseParser::default().feed(body);
    assert_eq!(feed_pieces(body, |_| 1), whole, "byte by byte");
    let cuts = piece_sizes(seed);
    assert_eq!(feed_pieces(body, &cuts), whole, "in pieces");

    let decode = |sizes: &dyn Fn(usize) -> usize| {
        let mut d = ChunkDecoder::default();
        let mut events = Vec::new();
        let mut rest = body;
        let mut i = 0;
        while !rest.is_empty() {
            let (piece, tail) = rest.split_at(sizes(i).min(rest.len()));
            events.extend(d.feed(piece).into_iter().map(|e| format!("{e:?}")));
            rest = tail;
            i += 1;
        }
        (events, d.is_done(), d.finish().is_ok())
    };
    let one = decode(&|_| usize::MAX);
    assert_eq!(decode(&cuts), one, "decoded in pieces");
    assert_eq!(decode(&|_| 1), one, "decoded byte by byte");

    let _ = parse_completion(&String::from_utf8_lossy(body), "fuzz-model");
}

/// Piece sizes 1..=16 from a seed (a small linear congruential sequence).
fn piece_sizes(seed: u16) -> impl Fn(usize) -> usize {
    move |i| {
        let x = u32::from(seed)
            .wrapping_mul(2_654_435_761)
            .wrapping_add((i as u32).wrapping_mul(40_503));
        (x >> 16) as usize % 16 + 1
    }
}

/// The SSE parser's payloads for `body` fed in pieces of the given sizes.
fn feed_pieces(body: &[u8], sizes: impl Fn(usize) -> usize) -> Vec<String> {
    let mut parser = SseParser::default();
    let mut out = Vec::new();
    let mut rest = body;
    let mut i = 0;
    while !rest.is_empty() {
        let (piece, tail) = rest.split_at(sizes(i).min(rest.len()));
        out.extend(parser.feed(piece));
        rest = tail;
        i += 1;
    }
    out
}

/// Knowledge-base JSON as ingest `PUT` and every cold start read it: invalid input is a
/// 400 listing problems at real paths (and is refused by a cold start too); a valid
/// knowledge base indexes and answers searches, its long pages split into bounded
/// passages that lose no text.
pub fn kb_validate(data: &[u8]) {
    let put = parse_put_body(data);
    let stored = parse_kb_bytes(data, "fuzz");
    assert_eq!(
        put.as_ref().ok().map(|(_, kb)| kb),
        stored.as_ref().ok(),
        "ingest and a cold start disagree"
    );
    let (value, kb) = match put {
        Ok(parsed) => parsed,
        Err(e) => {
            let api = assert_client_error(&e, "knowledge base");
            assert_eq!(api.code, "invalid_knowledge_base");
            assert!(!api.problems.is_empty());
            for p in &api.problems {
                let known = ["", "documents", "glossary"]
                    .iter()
                    .any(|root| p.path == *root || p.path.starts_with(&format!("{root}[")))
                    || p.path.starts_with("glossary.");
                assert!(known, "problem at an unknown path: {p:?}");
                assert!(!p.message.is_empty());
            }
            return;
        }
    };
    assert!(!kb.documents.is_empty());
    let mut ids: Vec<&str> = kb.documents.iter().map(|d| d.id.as_str()).collect();
    ids.sort_unstable();
    ids.dedup();
    assert_eq!(ids.len(), kb.documents.len(), "duplicate ids accepted");

    // What ingest reports: summaries of a valid knowledge base diff to nothing against
    // themselves.
    let s = summaries(&value);
    assert_eq!(s.len(), kb.documents.len());
    assert!(KbDiff::between(&s, &s).is_empty());
    let _ = fingerprint(&value);

    for content in kb.documents.iter().filter_map(|d| d.content.as_deref()) {
        let passages = split_passages(content);
        for p in &passages {
            assert!(p.chars().count() <= PASSAGE_MAX_CHARS, "passage too long");
        }
        let visible = |s: &str| s.chars().filter(|c| !c.is_whitespace()).collect::<String>();
        assert_eq!(
            visible(&passages.concat()),
            visible(content),
            "passages lost text"
        );
    }

    let index = SearchIndex::new(kb, content_version(data));
    assert_eq!(index.retriever().documents(), index.kb().documents.len());
    for doc in index.kb().documents.iter().take(3) {
        let found = index.search(doc.display_title(), 5, 0.0);
        assert!(found.hits.len() <= 5);
        let (_, ranked) = index.rank(doc.display_title(), 5, 0.0);
        let blocks = context_blocks(&index, &ranked);
        assert_eq!(blocks.len(), ranked.len());
        let _ = offline_answer(
            &index,
            &ranked,
            doc.display_title(),
            OfflineReason::Unavailable,
        );
    }
}

/// The prebuilt index header's length, its body length and its checksum fields.
const INDEX_HEADER_LEN: usize = 48;

/// Queries a decoded index answers: words of the sample, Chinese, a listing question.
const INDEX_QUERIES: &[&str] = &[
    "face recognition",
    "多模态大模型",
    "他发表过哪些论文",
    "papers by Jiankang Deng",
    "what is installed",
];

/// A prebuilt index file as a cold start reads it. The first byte says what to mend
/// before reading, so the fuzzer's mutations reach past the checks they would otherwise
/// never pass: bit 0 writes this build's magic, format version and analysis fingerprint,
/// bit 1 the body's real length and checksum (the review's "bytes changed, checksum
/// recomputed" file). Any file is refused with a reason or served; a served one answers
/// searches without panicking, its hits naming its own documents.
pub fn prebuilt_index(data: &[u8]) {
    let Some((&mode, file)) = data.split_first() else {
        return;
    };
    let mut file = file.to_vec();
    if mode & 1 != 0 && file.len() >= INDEX_HEADER_LEN {
        file[..8].copy_from_slice(prebuilt::MAGIC);
        file[8..12].copy_from_slice(&prebuilt::FORMAT_VERSION.to_le_bytes());
        file[16..24].copy_from_slice(&prebuilt::analysis_fingerprint().to_le_bytes());
    }
    if mode & 2 != 0 && file.len() >= INDEX_HEADER_LEN {
        let body = &file[INDEX_HEADER_LEN..];
        let (len, sum) = (body.len() as u64, prebuilt::content_hash(body));
        file[32..40].copy_from_slice(&len.to_le_bytes());
        file[40..48].copy_from_slice(&sum.to_le_bytes());
    }
    let Ok(built) = prebuilt::built_from(&file) else {
        return;
    };
    let expect = if mode & 4 != 0 && !built.version.is_empty() {
        prebuilt::Expect::Version(&built.version)
    } else {
        prebuilt::Expect::Hash(built.hash)
    };
    let Ok(index) = prebuilt::decode(&file, expect, "fuzz".into()) else {
        return;
    };
    let n_docs = index.kb().documents.len();
    assert_eq!(index.retriever().documents(), n_docs);
    // Packed postings are checked when decoded: every term's, as a long-lived function
    // would come to.
    for bm25 in [index.retriever().index(), index.retriever().fields()] {
        for t in 0..bm25.vocabulary_size() as u32 {
            let (units, weights) = bm25.postings(t);
            assert_eq!(units.len(), weights.len());
        }
    }
    // Page text is inflated when read: every document's, as a long-lived function would.
    for d in &index.kb().documents {
        let text = d.content.as_deref().unwrap_or("");
        assert!(text.len() <= d.content.as_ref().map_or(0, |t| t.byte_len()));
    }
    let titles = index
        .kb()
        .documents
        .iter()
        .take(2)
        .map(|d| d.display_title());
    for query in INDEX_QUERIES.iter().copied().chain(titles) {
        let found = index.search(query, 5, 0.0);
        assert!(found.hits.len() <= 5);
        let (_, ranked) = index.rank(query, 5, 0.0);
        let blocks = context_blocks(&index, &ranked);
        assert_eq!(blocks.len(), ranked.len());
        let _ = offline_answer(&index, &ranked, query, OfflineReason::Unavailable);
    }
}
