//! Model-assisted queries: one short model call turns the question (with the last turns)
//! into a standalone query in the site's main language plus a short hypothetical answer
//! passage (query2doc / HyDE); both are searched and their hits fused with the question's
//! by reciprocal rank fusion ([`crate::search::fuse_expansion`]).
//!
//! # When
//! Only with a model configured, and as `QUERY_REWRITE` says ([`QueryRewrite`]):
//! - `weak`: the question refers back to the conversation ([`crate::search::refers_back`],
//!   with an earlier user turn), or the lexical pass is weak: no hit, a confidence below
//!   [`LOW_CONFIDENCE`], or a flat ranking (no hit stands out: [`FLAT_SPREAD`]);
//! - `cross_language` (the default): as `weak`, or the question is not in the site's main
//!   language ([`Language`]: a Chinese question over English pages finds them only through
//!   the lexicon's word-by-word translations, which miss the site's own terms);
//! - `always`: every question with something to search for;
//! - `off`: never.
//!
//! Both tests read the question's pages ranked by their best passage alone
//! ([`DocScore::BestPassage`]), as one passage's match with the question's words; that
//! second ranking is made only for a question the mode would not rewrite anyway (not under
//! `always`, nor for a question in another language under `cross_language`).
//! The confidence of a ranking is the best hit's score over the query's *ceiling*: the
//! most any passage could score for the query's terms, Σ weight · idf · (k1 + 1) over the
//! terms the index knows (BM25's term-frequency factor tends to k1 + 1 as a term repeats;
//! a term no document contains can be matched by none, so it does not raise the
//! ceiling). A question naming an entry's title words reaches 0.5–0.8; one whose words
//! mostly miss, or match only in passing, stays well below.
//!
//! The *spread* of a ranking is the standard deviation of its best [`SPREAD_DEPTH`] scores
//! (a missing hit counting 0) over the best score, a scale-free form of the normalised query
//! commitment (NQC) of Shtok, Kurland and Carmel's query-performance prediction. Where ten
//! pages score within a few percent of each other the question's words are on all of them
//! and none is about it: on a documentation site that is where the lexical pass fails
//! ("measure how long my code takes" against every page that says "code" and "run"), while
//! the confidence, which grows with how many of the question's words a page repeats, does
//! not tell those questions apart (`docs/evaluation.md` has both measured).
//!
//! # How
//! The model answers in two labelled lines (`query: …`, `passage: …`; see [`parse`]), at
//! most [`REWRITE_MAX_TOKENS`] tokens, reserved (plus the prompt's estimate) on the daily
//! token budget first and settled with the reported usage after; the call is abandoned
//! after `QUERY_REWRITE_TIMEOUT_MS`. Any failure (budget refused or unavailable, model
//! error, timeout, an answer with nothing usable) leaves the original hits as they were.

use std::time::{Duration, SystemTime};

use crate::error::{Error, Result};
use crate::limits::TokenBudget;
use crate::llm::{CompletionRequest, LlmClient, LlmError};
use crate::message::{ChatMessage, Role};
use crate::prompt::{neutralize, visitor_message_ceiling};
use crate::retrieval::{idf, Bm25Params};
use crate::retrieval::{DocScore, QueryTerm, Ranked, Retriever};
use crate::search::{Expansion, Language};

/// Below this confidence (best score / the query's ceiling) a ranking is weak.
pub(super) const LOW_CONFIDENCE: f32 = 0.3;
/// Below this spread (σ of the best [`SPREAD_DEPTH`] scores / the best) a ranking is flat.
pub(super) const FLAT_SPREAD: f32 = 0.1;
/// How many of the best scores the spread is measured over.
pub(super) const SPREAD_DEPTH: usize = 10;
/// The longest a rewrite may take by default, budget reservation included.
pub(super) const DEFAULT_TIMEOUT: Duration = Duration::from_millis(2000);
/// Most tokens the rewrite may answer with: a 12-word query and a 50-word passage, labelled.
pub(super) const REWRITE_MAX_TOKENS: u32 = 128;
/// Longest accepted query, in characters (a longer one is cut).
const MAX_QUERY_CHARS: usize = 200;
/// Longest accepted passage, in characters (a longer one is cut).
const MAX_PASSAGE_CHARS: usize = 500;
/// Earlier turns shown to the rewrite, and how much of each.
const HISTORY_TURNS: usize = 4;
const TURN_CHARS: usize = 300;

/// When a question is rewritten (`QUERY_REWRITE`; see the module docs).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum QueryRewrite {
    /// Never.
    Off,
    /// When the question refers back or retrieves weakly.
    Weak,
    /// As [`QueryRewrite::Weak`], or when the question's language is not the site's.
    #[default]
    CrossLanguage,
    /// Every question with something to search for.
    Always,
}

impl QueryRewrite {
    /// Reads `off`, `weak`, `cross_language` or `always` (any case). The switch's former
    /// values still read as what they did: `on`, `true`, `1` as `weak`; `false`, `0` as
    /// `off`.
    pub fn parse(value: &str) -> Result<Self> {
        match value.to_ascii_lowercase().as_str() {
            "off" | "false" | "0" => Ok(QueryRewrite::Off),
            "weak" | "on" | "true" | "1" => Ok(QueryRewrite::Weak),
            "cross_language" => Ok(QueryRewrite::CrossLanguage),
            "always" => Ok(QueryRewrite::Always),
            _ => Err(Error::Config {
                var: "QUERY_REWRITE",
                message: format!("must be off, weak, cross_language or always, got {value:?}"),
            }),
        }
    }
}

/// Why a question is rewritten.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Trigger {
    /// It refers back to the conversation.
    RefersBack,
    /// The lexical pass found nothing.
    NoHits,
    /// The best hit is far below what the query could score.
    LowConfidence,
    /// The best hits score alike: none stands out.
    Flat,
    /// It is not in the site's main language.
    CrossLanguage,
    /// Every question is (`QUERY_REWRITE=always`).
    Always,
}

/// The most any document could score for `terms` (see the module docs).
pub(super) fn ceiling(retriever: &Retriever, terms: &[QueryTerm]) -> f32 {
    let index = retriever.index();
    let k1 = Bm25Params::default().k1;
    terms
        .iter()
        .map(|t| match retriever.doc_freq(&t.term) {
            0 => 0.0,
            df => t.weight * idf(index.len(), df) * (k1 + 1.0),
        })
        .sum()
}

/// The best hit's score over the query's ceiling, in 0..=1 (0 without hits).
pub(super) fn confidence(retriever: &Retriever, terms: &[QueryTerm], hits: &[Ranked]) -> f32 {
    let top = hits.first().map_or(0.0, |h| h.score);
    let max = ceiling(retriever, terms);
    if max <= 0.0 {
        0.0
    } else {
        (top / max).min(1.0)
    }
}

/// The standard deviation of the best [`SPREAD_DEPTH`] scores (0 for each missing hit) over
/// the best score (0 without hits).
pub(super) fn spread(hits: &[Ranked]) -> f32 {
    let top = hits.first().map_or(0.0, |h| h.score);
    if top <= 0.0 {
        return 0.0;
    }
    let scores = || (0..SPREAD_DEPTH).map(|i| hits.get(i).map_or(0.0, |h| h.score.max(0.0)) / top);
    let n = SPREAD_DEPTH as f32;
    let mean = scores().sum::<f32>() / n;
    (scores().map(|s| (s - mean) * (s - mean)).sum::<f32>() / n).sqrt()
}

/// What a question is checked against to decide on a rewrite.
pub(super) struct Situation<'a> {
    /// The index searched.
    pub(super) retriever: &'a Retriever,
    /// The site's main language.
    pub(super) site: Language,
    /// The visitor's question.
    pub(super) question: &'a str,
    /// Its analysed terms, as its hits were searched with.
    pub(super) terms: &'a [QueryTerm],
    /// Whether the conversation has an earlier user turn.
    pub(super) has_earlier_turn: bool,
    /// The hits retrieved so far.
    pub(super) hits: &'a [Ranked],
    /// The lowest score a hit may have, as they were retrieved with.
    pub(super) min_score: f32,
    /// Whether they came from the question joined with earlier turns, which happens only
    /// when it refers back or was weak alone.
    pub(super) followup: bool,
}

/// Whether (and why) a question should be rewritten under `mode`.
pub(super) fn trigger(mode: QueryRewrite, s: &Situation<'_>) -> Option<Trigger> {
    if mode == QueryRewrite::Off {
        return None;
    }
    if s.has_earlier_turn && crate::search::refers_back(s.question) {
        return Some(Trigger::RefersBack);
    }
    if s.followup {
        return Some(Trigger::LowConfidence);
    }
    if s.terms.is_empty() {
        // Nothing to search for ("👋", "???"): a rewrite has nothing to work from either.
        return None;
    }
    if s.hits.is_empty() {
        return Some(Trigger::NoHits);
    }
    // The mode's own reasons first: they rewrite whatever the ranking says, so a question
    // they rewrite (every one under `always`, a Chinese question on an English site) costs
    // no second ranking.
    match mode {
        QueryRewrite::Always => return Some(Trigger::Always),
        QueryRewrite::CrossLanguage if Language::of_text(s.question) != s.site => {
            return Some(Trigger::CrossLanguage);
        }
        _ => {}
    }
    // How well one passage matches the question's words: the pages ranked by their best
    // passage alone (the confidence's ceiling is the most one passage could score, and both
    // tests were measured so; a page's next passages would lift the confidence and spread
    // the scores), and without their standing on the site (a query-independent prior
    // would spread a flat ranking's scores by up to a tenth). Whether the site answers at
    // all is the hits' to say (above): this ranking only measures, so nothing empties it.
    let (_, best) = s.retriever.search_distinct(
        s.question,
        DocScore::BestPassage,
        SPREAD_DEPTH,
        s.min_score,
        0.0,
    );
    let hits = s.retriever.text_scores(&best);
    if confidence(s.retriever, s.terms, &hits) < LOW_CONFIDENCE {
        return Some(Trigger::LowConfidence);
    }
    if spread(&hits) < FLAT_SPREAD {
        return Some(Trigger::Flat);
    }
    None
}

/// Whether a conversation's first question is rewritten under `mode`, given the terms and
/// hits its lexical pass found on `site` at `min_score` (what `rag eval --rewrite-mode`
/// scores offline; the chat also weighs the earlier turns).
pub fn rewrites_first_question(
    mode: QueryRewrite,
    retriever: &Retriever,
    site: Language,
    question: &str,
    (terms, hits): (&[QueryTerm], &[Ranked]),
    min_score: f32,
) -> bool {
    let situation = Situation {
        retriever,
        site,
        question,
        terms,
        has_earlier_turn: false,
        hits,
        min_score,
        followup: false,
    };
    trigger(mode, &situation).is_some()
}

/// The rewrite prompt: the instruction, the last turns, the question.
pub(super) fn rewrite_messages(
    question: &str,
    history: &[ChatMessage],
    language: Language,
) -> Vec<ChatMessage> {
    let language = language.name();
    let system = format!(
        "You help a keyword search over a website written in {language}. Answer with exactly \
         two lines and nothing else:\n\
         query: the visitor's question as a search query in {language}, at most 12 words. \
         Resolve words like \"it\", \"this paper\", 它, 这篇 from the earlier turns. Keep \
         names, commands, titles and acronyms exactly as written.\n\
         passage: one or two sentences in {language}, at most 50 words, that a page of the \
         site answering the question would contain, in the words such a page would use."
    );
    let mut user = String::new();
    let earlier: Vec<&ChatMessage> = history
        .iter()
        .filter(|m| matches!(m.role, Role::User | Role::Assistant))
        .rev()
        .take(HISTORY_TURNS)
        .collect();
    if !earlier.is_empty() {
        user.push_str("Earlier turns:\n");
        for m in earlier.into_iter().rev() {
            let text: String = m.content.chars().take(TURN_CHARS).collect();
            user.push_str(&format!("{}: {}\n", m.role.as_str(), neutralize(&text)));
        }
        user.push('\n');
    }
    user.push_str(&format!("Question: {}", neutralize(question)));
    vec![
        ChatMessage::new(Role::System, system),
        ChatMessage::new(Role::User, user),
    ]
}

/// The query and passage of a model's answer. Lines are read as `label: text` (a colon or
/// a full-width colon, the label in any case, markdown bullets and bold around it ignored):
/// `query` (or `search query`) and `passage` (or `answer`); the first of each counts. An
/// answer without either label is read as a bare query on its first non-empty line (what
/// a model that ignores the format usually sends; "git config: user name" included). Each part loses quotes and control
/// characters and is cut to [`MAX_QUERY_CHARS`] / [`MAX_PASSAGE_CHARS`]; an empty part is
/// missing.
pub(super) fn parse(text: &str) -> Expansion {
    let mut out = Expansion::default();
    let mut labelled = false;
    for line in text.lines() {
        let Some((label, rest)) = labelled_line(line) else {
            continue;
        };
        let (slot, cap) = match label.as_str() {
            "query" | "search query" => (&mut out.query, MAX_QUERY_CHARS),
            "passage" | "answer" => (&mut out.passage, MAX_PASSAGE_CHARS),
            _ => continue,
        };
        labelled = true;
        if slot.is_none() {
            *slot = clean(rest, cap);
        }
    }
    if !labelled {
        out.query = text
            .lines()
            .find(|l| !l.trim().is_empty())
            .and_then(|l| clean(l, MAX_QUERY_CHARS));
    }
    out
}

/// `(label, text)` of a `label: text` line whose label is one to three words.
fn labelled_line(line: &str) -> Option<(String, &str)> {
    let at = line.find([':', '：'])?;
    let colon = line[at..].chars().next().map_or(1, char::len_utf8);
    let label = line[..at]
        .trim()
        .trim_matches(|c: char| matches!(c, '*' | '-' | '#' | '_' | '`') || c.is_whitespace())
        .to_lowercase();
    let words = label.split_whitespace().count();
    ((1..=3).contains(&words)).then(|| (label, line[at + colon..].trim_start_matches('*')))
}

/// `text` without surrounding quotes, markdown emphasis or control characters, at most
/// `cap` characters; `None` when nothing is left.
fn clean(text: &str, cap: usize) -> Option<String> {
    let text = text
        .trim()
        .trim_matches(|c| matches!(c, '"' | '\'' | '“' | '”' | '`' | '*'));
    let out: String = text.chars().filter(|c| !c.is_control()).take(cap).collect();
    let out = out.trim().to_owned();
    (!out.is_empty()).then_some(out)
}

/// Asks the model for an expansion within the budget and `timeout`; `None` on any failure
/// (logged). The reservation is settled with the reported usage; without it, with the
/// whole reservation, unless the provider refused the call (nothing generated).
pub(super) async fn rewrite(
    llm: &dyn LlmClient,
    budget: &TokenBudget,
    messages: Vec<ChatMessage>,
    timeout: Duration,
    at: SystemTime,
) -> Option<Expansion> {
    let deadline = tokio::time::Instant::now() + timeout;
    let prompt_tokens: u64 = messages
        .iter()
        .map(|m| visitor_message_ceiling(m) as u64)
        .sum();
    let max_tokens = REWRITE_MAX_TOKENS.min(llm.max_tokens());
    let reserve = budget.reserve(prompt_tokens + u64::from(max_tokens), at);
    let reservation = match tokio::time::timeout_at(deadline, reserve).await {
        Ok(Ok(Some(r))) => r,
        Ok(Ok(None)) => {
            tracing::info!("daily token budget exhausted; no query rewrite");
            return None;
        }
        Ok(Err(e)) => {
            tracing::warn!(error = %e, "cannot reserve tokens for a query rewrite");
            return None;
        }
        Err(_) => {
            tracing::warn!("token budget too slow; no query rewrite");
            return None;
        }
    };
    let request = CompletionRequest {
        messages,
        max_tokens,
        temperature: Some(0.0),
    };
    let result = tokio::time::timeout_at(deadline, llm.complete(&request)).await;
    // Without reported usage the reservation (the most the call can cost) is charged, as
    // for the answer; a call the provider refused before generating costs nothing.
    let reserved = reservation.tokens();
    let (expansion, used) = match result {
        Ok(Ok(c)) => {
            let used = c.usage.map_or(reserved, |u| u64::from(u.total_tokens));
            (Some(parse(&c.text)).filter(|e| !e.is_empty()), used)
        }
        Ok(Err(e)) => {
            tracing::warn!(error = %e, "query rewrite failed; using the original hits");
            let refused = matches!(e, LlmError::Connect { .. } | LlmError::Status { .. });
            (None, if refused { 0 } else { reserved })
        }
        Err(_) => {
            tracing::warn!(
                timeout_ms = timeout.as_millis() as u64,
                "query rewrite timed out; using the original hits"
            );
            (None, reserved)
        }
    };
    if let Err(e) = budget.settle(reservation, used).await {
        tracing::error!(error = %e, used, "cannot settle the query rewrite's tokens");
    }
    expansion
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A conversation's first question on an English site, with the hits it found at no
    /// minimum score.
    fn first_question<'a>(
        r: &'a Retriever,
        question: &'a str,
        (terms, hits): &'a (Vec<QueryTerm>, Vec<Ranked>),
    ) -> Situation<'a> {
        Situation {
            retriever: r,
            site: Language::English,
            question,
            terms,
            has_earlier_turn: false,
            hits,
            min_score: 0.0,
            followup: false,
        }
    }

    #[test]
    fn confidence_is_the_top_score_over_the_ceiling_of_known_terms() {
        let r = Retriever::build(
            [
                vec!["face recognition training".to_string()],
                vec!["cooking".to_string()],
            ],
            &[],
        );
        let terms = r.analyze_query("face unknownword");
        let hits = r.rank(&terms, 3, 0.0);
        let k1 = Bm25Params::default().k1;
        let expected_ceiling = idf(2, 1) * (k1 + 1.0);
        assert!((ceiling(&r, &terms) - expected_ceiling).abs() < 1e-5);
        let c = confidence(&r, &terms, &hits);
        assert!((c - hits[0].score / expected_ceiling).abs() < 1e-5 && c > 0.0 && c < 1.0);
        assert_eq!(confidence(&r, &terms, &[]), 0.0);
    }

    #[test]
    fn spread_is_the_deviation_of_the_best_ten_scores_over_the_best() {
        let ranked = |scores: &[f32]| -> Vec<Ranked> {
            (0u32..)
                .zip(scores)
                .map(|(doc, &score)| Ranked {
                    doc,
                    passage: 0,
                    score,
                })
                .collect()
        };
        // Ten equal scores: nothing stands out.
        assert_eq!(spread(&ranked(&[2.0; 10])), 0.0);
        // One hit, nine missing (0): mean 0.1, variance (0.9² + 9 · 0.1²) / 10 = 0.09.
        assert!((spread(&ranked(&[5.0])) - 0.3).abs() < 1e-6);
        // Half at the best, half at half of it: σ = 0.25 whatever the scale; an eleventh
        // hit is beyond the depth measured.
        let halves = [8.0, 8.0, 8.0, 8.0, 8.0, 4.0, 4.0, 4.0, 4.0, 4.0, 0.1];
        assert!((spread(&ranked(&halves)) - 0.25).abs() < 1e-6);
        assert!((spread(&ranked(&halves.map(|s| s * 3.0))) - 0.25).abs() < 1e-6);
        assert_eq!(spread(&[]), 0.0);
    }

    #[test]
    fn a_flat_ranking_is_weak_and_one_that_stands_out_is_not() {
        // Twelve pages say "cache" and "settings" once each, alike: no page is about the
        // question, though each matches all of its words (the confidence is high).
        let alike: Vec<Vec<String>> = (0..12)
            .map(|i| vec![format!("cache settings page{i} covers topic{i} words{i}")])
            .collect();
        let r = Retriever::build(alike.clone(), &[]);
        let question = "cache settings";
        let found = r.search(question, 30, 0.0);
        let flat = first_question(&r, question, &found);
        let hits = &found.1;
        assert!(hits.len() >= SPREAD_DEPTH && spread(hits) < FLAT_SPREAD);
        assert!(confidence(&r, &found.0, hits) >= LOW_CONFIDENCE);
        assert_eq!(trigger(QueryRewrite::Weak, &flat), Some(Trigger::Flat));
        assert_eq!(trigger(QueryRewrite::Off, &flat), None);
        // The mode's own reasons come before the ranking's: they need no second ranking.
        assert_eq!(trigger(QueryRewrite::Always, &flat), Some(Trigger::Always));
        let other_language = Situation {
            site: Language::Chinese,
            ..flat
        };
        assert_eq!(
            trigger(QueryRewrite::CrossLanguage, &other_language),
            Some(Trigger::CrossLanguage)
        );
        // One page about the cache's settings, the rest naming the cache only: it stands out.
        let mut distinct = alike;
        for (i, page) in distinct.iter_mut().enumerate() {
            page[0] = format!("cache page{i} covers topic{i} words{i}");
        }
        distinct[3][0] = "cache settings: the cache settings page".to_string();
        let r = Retriever::build(distinct, &[]);
        let found = r.search(question, 30, 0.0);
        assert!(spread(&found.1) >= FLAT_SPREAD, "{}", spread(&found.1));
        let standing_out = first_question(&r, question, &found);
        assert_eq!(trigger(QueryRewrite::Weak, &standing_out), None);
    }

    #[test]
    fn the_tests_read_one_passage_s_match_not_a_page_s_several() {
        // Twelve pages that match the question alike in one passage; three of them say it
        // again in four more. Ranked by their passages those three stand out, but no page
        // is about "cache settings" more than another: the ranking is flat.
        let pages: Vec<Vec<String>> = (0..12)
            .map(|i| {
                let text = format!("cache settings page{i} covers topic{i} words{i}");
                let copies = if i < 3 { 5 } else { 1 };
                vec![text; copies]
            })
            .collect();
        let r = Retriever::build(pages, &[]);
        let question = "cache settings";
        let found = r.search(question, 30, 0.0);
        assert!(spread(&found.1) >= FLAT_SPREAD, "{}", spread(&found.1));
        let situation = first_question(&r, question, &found);
        assert_eq!(trigger(QueryRewrite::Weak, &situation), Some(Trigger::Flat));
    }

    #[test]
    fn the_two_labelled_lines_are_read_in_any_dress() {
        let e = parse("query: undo the last commit\npassage: Use git reset HEAD~1 to undo it.");
        assert_eq!(e.query.as_deref(), Some("undo the last commit"));
        assert_eq!(
            e.passage.as_deref(),
            Some("Use git reset HEAD~1 to undo it.")
        );
        let e =
            parse("Sure!\n**Query:** \"stash pop vs apply\"\n- Passage： git stash pop applies.\n");
        assert_eq!(e.query.as_deref(), Some("stash pop vs apply"));
        assert_eq!(e.passage.as_deref(), Some("git stash pop applies."));
        // Only a passage: the query is missing, not taken from the passage.
        let e = parse("passage: Lockfiles pin versions.");
        assert_eq!(
            (e.query, e.passage.as_deref()),
            (None, Some("Lockfiles pin versions."))
        );
    }

    #[test]
    fn an_unlabelled_answer_is_a_bare_query_and_nothing_usable_is_empty() {
        let e = parse("\n \"Partial FC code\"\nbecause...");
        assert_eq!(e.query.as_deref(), Some("Partial FC code"));
        assert_eq!(e.passage, None);
        assert!(parse(" \n ").is_empty());
        assert!(parse("query: \"\"\npassage:").is_empty());
        assert_eq!(
            parse("git config: user name").query.as_deref(),
            Some("git config: user name")
        );
    }

    #[test]
    fn each_part_is_capped() {
        let long = format!("query: {}\npassage: {}", "q".repeat(900), "p".repeat(900));
        let e = parse(&long);
        assert_eq!(e.query.map(|q| q.chars().count()), Some(MAX_QUERY_CHARS));
        assert_eq!(
            e.passage.map(|p| p.chars().count()),
            Some(MAX_PASSAGE_CHARS)
        );
    }

    #[test]
    fn modes_parse_by_name_and_refuse_others() {
        assert_eq!(QueryRewrite::parse("OFF").unwrap(), QueryRewrite::Off);
        assert_eq!(QueryRewrite::parse("weak").unwrap(), QueryRewrite::Weak);
        assert_eq!(
            QueryRewrite::parse("Cross_Language").unwrap(),
            QueryRewrite::CrossLanguage
        );
        assert_eq!(QueryRewrite::parse("always").unwrap(), QueryRewrite::Always);
        assert_eq!(QueryRewrite::parse("on").unwrap(), QueryRewrite::Weak);
        assert!(QueryRewrite::parse("sometimes").is_err());
        assert_eq!(QueryRewrite::default(), QueryRewrite::CrossLanguage);
    }

    #[test]
    fn the_mode_decides_which_strong_questions_are_rewritten() {
        let r = Retriever::build(
            [
                vec!["git stash saves local changes".to_string()],
                vec!["git commit records changes".to_string()],
            ],
            &[],
        );
        let question = "git stash saves local changes";
        let found = r.search(question, 3, 0.0);
        let situation = |site| Situation {
            site,
            ..first_question(&r, question, &found)
        };
        let english = situation(Language::English);
        let chinese = situation(Language::Chinese);
        // A strong English question on an English site: only `always` rewrites it.
        assert_eq!(trigger(QueryRewrite::Weak, &english), None);
        assert_eq!(trigger(QueryRewrite::CrossLanguage, &english), None);
        assert_eq!(
            trigger(QueryRewrite::Always, &english),
            Some(Trigger::Always)
        );
        // On a Chinese site it is another language.
        assert_eq!(
            trigger(QueryRewrite::CrossLanguage, &chinese),
            Some(Trigger::CrossLanguage)
        );
        assert_eq!(trigger(QueryRewrite::Weak, &chinese), None);
        assert_eq!(trigger(QueryRewrite::Off, &chinese), None);
        // No hits is weak in every mode but off.
        let none = Situation {
            hits: &[],
            ..situation(Language::English)
        };
        assert_eq!(trigger(QueryRewrite::Weak, &none), Some(Trigger::NoHits));
        assert_eq!(trigger(QueryRewrite::Off, &none), None);
    }

    #[test]
    fn the_prompt_carries_the_last_turns_the_question_and_the_format() {
        let history: Vec<ChatMessage> = (0..6)
            .map(|i| {
                ChatMessage::new(
                    if i % 2 == 0 {
                        Role::User
                    } else {
                        Role::Assistant
                    },
                    format!("turn {i}"),
                )
            })
            .collect();
        let m = rewrite_messages("它的代码在哪里？", &history, Language::English);
        assert_eq!(m.len(), 2);
        assert!(m[0].content.contains("English"));
        assert!(m[0].content.contains("\nquery:") && m[0].content.contains("\npassage:"));
        assert!(!m[1].content.contains("turn 1\n") && m[1].content.contains("turn 2"));
        assert!(m[1].content.ends_with("Question: 它的代码在哪里？"));
    }
}
