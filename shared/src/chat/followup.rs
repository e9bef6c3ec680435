//! Retrieval for a chat turn, with follow-up questions resolved against earlier turns.
//!
//! "它的代码在哪里？" after a question about Partial FC names nothing BM25 can find: alone it
//! retrieves whatever mentions "code". No extra model call rewrites the question; instead,
//! a question that *depends on* the conversation is searched together with the earlier
//! user turn(s) it depends on.
//!
//! # The rule
//! A question is a follow-up when there is an earlier user turn and either
//! - it refers back: a pronoun or demonstrative (它, 这篇, 那个, 该论文, it, its, they, this
//!   paper...) or an elliptical form (…呢？, 详细说说, "what about…", "tell me more"); or
//! - it retrieves weakly on its own: no hit, or a best score below [`WEAK_TOP_SCORE`]
//!   (a question naming a topic of the knowledge base scores well above it: one rare term
//!   matched in a title or summary already gives 2–3).
//!
//! A follow-up is searched as `earlier turn + question`, the question's terms at half
//! weight ([`QUESTION_WEIGHT`]). When the earlier turn was itself
//! a follow-up, the search reaches further back, up to [`MAX_LOOKBACK`] user turns, so
//! "那篇论文是哪一年发表的？" after "它的代码在哪里？" after "请介绍一下 Partial FC" still
//! finds Partial FC. A self-contained question ("What is Unicom?") retrieves strongly and
//! has no back-reference, so the old topic is not dragged in.
//!
//! Known limit: a question the knowledge base cannot answer at all ("今天天气怎么样？")
//! retrieves weakly, so it is searched with the previous topic; the model then sees entries
//! it does not need and says it does not know.

use crate::message::{ChatMessage, Role};
use crate::retrieval::{QueryTerm, Ranked};
use crate::search::{refers_back, SearchIndex};

/// Below this best BM25 score a question alone is considered not to name a topic.
pub(super) const WEAK_TOP_SCORE: f32 = 1.5;

/// How many earlier user turns a follow-up may reach back.
pub(super) const MAX_LOOKBACK: usize = 3;

/// Weight of a follow-up's own query terms relative to the earlier turns' terms.
pub(super) const QUESTION_WEIGHT: f32 = 0.5;

/// What was retrieved for a turn, and how.
#[derive(Debug, Clone, PartialEq)]
pub struct Retrieval {
    /// The ranked hits, best first.
    pub hits: Vec<Ranked>,
    /// The text that was searched: the question, or earlier turns + the question.
    pub query: String,
    /// Whether earlier turns were added to the question.
    pub followup: bool,
    /// The question's own analysed terms (without the earlier turns'), for what else
    /// reads them (the rewrite trigger) rather than analysing the question again.
    pub question_terms: Vec<QueryTerm>,
}

/// Retrieves for `question`, resolving it against the user turns of `history` (oldest
/// first) when it is a follow-up (see the module docs).
pub fn retrieve_followup(
    index: &SearchIndex,
    question: &str,
    history: &[ChatMessage],
    top_k: usize,
    min_score: f32,
) -> Retrieval {
    let (question_terms, hits) = index.rank(question, top_k, min_score);
    let alone = Retrieval {
        hits,
        query: question.to_owned(),
        followup: false,
        question_terms,
    };
    let earlier: Vec<&str> = history
        .iter()
        .rev()
        .filter(|m| m.role == Role::User)
        .map(|m| m.content.as_str())
        .take(MAX_LOOKBACK)
        .collect();
    if earlier.is_empty() || !(refers_back(question) || is_weak(&alone.hits)) {
        return alone;
    }
    // The question's own words are mostly generic ("code", "open source", "authors");
    // at full weight they would outvote the one rare term that names the topic, so they
    // count half as much as the earlier turns' words.
    let mut terms: Vec<QueryTerm> = alone
        .question_terms
        .iter()
        .map(|t| QueryTerm {
            weight: t.weight * QUESTION_WEIGHT,
            ..t.clone()
        })
        .collect();
    let mut query = question.to_owned();
    for turn in earlier {
        query = format!("{turn}\n{query}");
        for t in index.retriever().analyze_query(turn) {
            match terms.iter_mut().find(|known| known.term == t.term) {
                Some(known) => known.weight += t.weight,
                None => terms.push(t),
            }
        }
        // A turn that itself refers back needs the one before it too.
        if !refers_back(turn) {
            break;
        }
    }
    let hits = index.retriever().rank(&terms, top_k, min_score);
    if hits.is_empty() {
        return alone;
    }
    Retrieval {
        hits,
        query,
        followup: true,
        question_terms: alone.question_terms,
    }
}

/// No hit, or a best score too low to mean the question named a topic.
fn is_weak(hits: &[Ranked]) -> bool {
    hits.first().is_none_or(|h| h.score < WEAK_TOP_SCORE)
}
