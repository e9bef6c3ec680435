//! Query rewriting: when the lexical pass is weak or the question refers back, one short
//! model call turns the question (with the last turns) into a standalone search query in
//! the site's main language, and its hits are fused with the original ones.
//!
//! # When
//! Only with a model configured and `QUERY_REWRITE` not `off`, and only when
//! - the question refers back to the conversation ([`crate::search::refers_back`], with
//!   an earlier user turn), or
//! - the lexical pass is weak: no hit, or a confidence below [`LOW_CONFIDENCE`].
//!
//! The confidence of a ranking is the best hit's score over the query's *ceiling*: the
//! most any document could score for the query's terms, Σ weight · idf · (k1 + 1) over the
//! terms the index knows (BM25's term-frequency factor tends to k1 + 1 as a term repeats;
//! a term no document contains can be matched by none, so it does not raise the
//! ceiling). A question naming an entry's title words reaches 0.5–0.8; one whose words
//! mostly miss, or match only in passing, stays well below.
//!
//! # How
//! The call asks for at most [`REWRITE_MAX_TOKENS`] tokens, reserves them (plus the
//! prompt's estimate) on the daily token budget first and settles with the reported usage
//! after, and is abandoned after [`REWRITE_TIMEOUT`]. Any failure (budget refused or
//! unavailable, model error, timeout, an empty answer) leaves the original hits as they
//! were. The rewrite's hits are fused with the original's by reciprocal rank fusion
//! ([`fuse`], k = [`RRF_K`]).

use std::time::{Duration, SystemTime};

use crate::limits::TokenBudget;
use crate::llm::{CompletionRequest, LlmClient, LlmError};
use crate::message::{ChatMessage, Role};
use crate::prompt::{neutralize, visitor_message_ceiling};
use crate::retrieval::{idf, Bm25Params};
use crate::retrieval::{QueryTerm, Ranked, Retriever};

/// Below this confidence (best score / the query's ceiling) a ranking is weak.
pub(super) const LOW_CONFIDENCE: f32 = 0.3;
/// The longest a rewrite may take, budget reservation included.
pub(super) const REWRITE_TIMEOUT: Duration = Duration::from_millis(1500);
/// Most tokens the rewrite may answer with.
pub(super) const REWRITE_MAX_TOKENS: u32 = 48;
/// The constant of reciprocal rank fusion: a hit at rank r adds 1 / (RRF_K + r).
pub(super) const RRF_K: f32 = 60.0;
/// Longest accepted rewrite, in characters (a longer answer is cut).
const MAX_REWRITE_CHARS: usize = 200;
/// Earlier turns shown to the rewrite, and how much of each.
const HISTORY_TURNS: usize = 4;
const TURN_CHARS: usize = 300;

/// Why a question is rewritten.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Trigger {
    /// It refers back to the conversation.
    RefersBack,
    /// The lexical pass found nothing.
    NoHits,
    /// The best hit is far below what the query could score.
    LowConfidence,
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

/// Whether (and why) a question should be rewritten: `followup` says whether the hits
/// already came from the question joined with earlier turns, which happens only when it
/// refers back or was weak alone.
pub(super) fn trigger(
    retriever: &Retriever,
    question: &str,
    has_earlier_turn: bool,
    hits: &[Ranked],
    followup: bool,
) -> Option<Trigger> {
    if has_earlier_turn && crate::search::refers_back(question) {
        return Some(Trigger::RefersBack);
    }
    if followup {
        return Some(Trigger::LowConfidence);
    }
    let terms = retriever.analyze_query(question);
    if terms.is_empty() {
        // Nothing to search for ("👋", "???"): a rewrite has nothing to work from either.
        return None;
    }
    if hits.is_empty() {
        return Some(Trigger::NoHits);
    }
    (confidence(retriever, &terms, hits) < LOW_CONFIDENCE).then_some(Trigger::LowConfidence)
}

/// The rewrite prompt: the instruction, the last turns, the question.
pub(super) fn rewrite_messages(
    question: &str,
    history: &[ChatMessage],
    language: &str,
) -> Vec<ChatMessage> {
    let system = format!(
        "You turn a visitor's question into one search query for a keyword search over a \
         website written in {language}. Resolve words like \"it\", \"this paper\", 它, 这篇 \
         from the earlier turns. Keep names, titles and acronyms exactly as written. Answer \
         with the query only, in {language}, at most 12 words: no explanation, no quotes."
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

/// The query in a model's answer: its first non-empty line, without quotes or a
/// `Query:` label, at most 200 characters; `None` when nothing is left.
pub(super) fn clean_rewrite(text: &str) -> Option<String> {
    let line = text.lines().map(str::trim).find(|l| !l.is_empty())?;
    let line = line
        .strip_prefix("Query:")
        .or_else(|| line.strip_prefix("query:"))
        .unwrap_or(line);
    let line = line
        .trim()
        .trim_matches(|c| matches!(c, '"' | '\'' | '“' | '”' | '`'));
    let out: String = line
        .chars()
        .filter(|c| !c.is_control())
        .take(MAX_REWRITE_CHARS)
        .collect();
    let out = out.trim().to_owned();
    (!out.is_empty()).then_some(out)
}

/// Asks the model for a rewrite within the budget and [`REWRITE_TIMEOUT`]; `None` on any
/// failure (logged). The reservation is settled with the reported usage; without it, with
/// the whole reservation, unless the provider refused the call (nothing generated).
pub(super) async fn rewrite(
    llm: &dyn LlmClient,
    budget: &TokenBudget,
    messages: Vec<ChatMessage>,
    at: SystemTime,
) -> Option<String> {
    let deadline = tokio::time::Instant::now() + REWRITE_TIMEOUT;
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
    let (text, used) = match result {
        Ok(Ok(c)) => {
            let used = c.usage.map_or(reserved, |u| u64::from(u.total_tokens));
            (clean_rewrite(&c.text), used)
        }
        Ok(Err(e)) => {
            tracing::warn!(error = %e, "query rewrite failed; using the original hits");
            let refused = matches!(e, LlmError::Connect { .. } | LlmError::Status { .. });
            (None, if refused { 0 } else { reserved })
        }
        Err(_) => {
            tracing::warn!(
                timeout_ms = REWRITE_TIMEOUT.as_millis() as u64,
                "query rewrite timed out; using the original hits"
            );
            (None, reserved)
        }
    };
    if let Err(e) = budget.settle(reservation, used).await {
        tracing::error!(error = %e, used, "cannot settle the query rewrite's tokens");
    }
    text
}

/// Reciprocal rank fusion of ranked lists: each document scores Σ 1 / ([`RRF_K`] + rank)
/// over the lists it is in (rank from 1); best first, ties in order of first appearance;
/// at most `k`. A document keeps its entry (score, passage) from the first list it is in.
pub(super) fn fuse(lists: &[&[Ranked]], k: usize) -> Vec<Ranked> {
    let mut fused: Vec<(Ranked, f32)> = Vec::new();
    for list in lists {
        for (rank, hit) in list.iter().enumerate() {
            let add = 1.0 / (RRF_K + rank as f32 + 1.0);
            match fused.iter_mut().find(|(h, _)| h.doc == hit.doc) {
                Some((_, s)) => *s += add,
                None => fused.push((*hit, add)),
            }
        }
    }
    // Stable sort: equal fused scores keep their order of first appearance.
    fused.sort_by(|a, b| b.1.total_cmp(&a.1));
    fused.into_iter().take(k).map(|(h, _)| h).collect()
}

/// The main language of a knowledge base for rewrites: `Chinese` when Han characters
/// outnumber Latin letters in its titles and summaries, else `English`.
pub(super) fn main_language(kb: &crate::kb::KnowledgeBase) -> &'static str {
    let (mut han, mut latin) = (0usize, 0usize);
    for doc in kb.documents.iter().take(500) {
        let text = [
            doc.display_title(),
            doc.summary.as_deref().unwrap_or(""),
            doc.description.as_deref().unwrap_or(""),
        ];
        for c in text.iter().flat_map(|t| t.chars()) {
            if c.is_ascii_alphabetic() {
                latin += 1;
            } else if ('\u{4E00}'..='\u{9FFF}').contains(&c) {
                han += 1;
            }
        }
    }
    // A Han character carries about as much as a short English word: weigh it so.
    if han * 4 > latin {
        "Chinese"
    } else {
        "English"
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hit(doc: u32) -> Ranked {
        Ranked {
            doc,
            passage: 0,
            score: 1.0,
        }
    }

    #[test]
    fn fusion_adds_reciprocal_ranks_and_keeps_first_appearance_on_ties() {
        let a = [hit(1), hit(2), hit(3)];
        let b = [hit(3), hit(4)];
        let fused: Vec<u32> = fuse(&[&a, &b], 10).iter().map(|h| h.doc).collect();
        // 3: 1/63 + 1/61 beats 1: 1/61; 4 (1/62) ties with 2 (1/62): 2 came first.
        assert_eq!(fused, [3, 1, 2, 4]);
        assert_eq!(fuse(&[&a, &b], 2).len(), 2);
        assert!(fuse(&[], 3).is_empty());
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
    fn rewrites_are_cleaned_to_one_short_line() {
        assert_eq!(
            clean_rewrite("\n \"Partial FC code\"\nbecause...").as_deref(),
            Some("Partial FC code")
        );
        assert_eq!(clean_rewrite("Query: unicom").as_deref(), Some("unicom"));
        assert_eq!(clean_rewrite(" \n "), None);
        assert_eq!(
            clean_rewrite(&"x".repeat(500)).map(|s| s.len()),
            Some(MAX_REWRITE_CHARS)
        );
    }

    #[test]
    fn the_prompt_carries_the_last_turns_and_the_question() {
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
        let m = rewrite_messages("它的代码在哪里？", &history, "English");
        assert_eq!(m.len(), 2);
        assert!(m[0].content.contains("English"));
        assert!(!m[1].content.contains("turn 1\n") && m[1].content.contains("turn 2"));
        assert!(m[1].content.ends_with("Question: 它的代码在哪里？"));
    }
}
