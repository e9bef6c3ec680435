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
use crate::search::SearchIndex;

/// Below this best BM25 score a question alone is considered not to name a topic.
pub const WEAK_TOP_SCORE: f32 = 1.5;

/// How many earlier user turns a follow-up may reach back.
pub const MAX_LOOKBACK: usize = 3;

/// Weight of a follow-up's own query terms relative to the earlier turns' terms.
pub const QUESTION_WEIGHT: f32 = 0.5;

/// What was retrieved for a turn, and how.
#[derive(Debug, Clone, PartialEq)]
pub struct Retrieval {
    /// The ranked hits, best first.
    pub hits: Vec<Ranked>,
    /// The text that was searched: the question, or earlier turns + the question.
    pub query: String,
    /// Whether earlier turns were added to the question.
    pub followup: bool,
}

/// Retrieves for `question`, resolving it against the user turns of `history` (oldest
/// first) when it is a follow-up (see the module docs).
pub fn retrieve(
    index: &SearchIndex,
    question: &str,
    history: &[ChatMessage],
    top_k: usize,
    min_score: f32,
) -> Retrieval {
    let (_, hits) = index.rank(question, top_k, min_score);
    let alone = Retrieval {
        hits,
        query: question.to_owned(),
        followup: false,
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
    let mut terms: Vec<QueryTerm> = index
        .retriever()
        .analyze_query(question)
        .into_iter()
        .map(|t| QueryTerm {
            weight: t.weight * QUESTION_WEIGHT,
            ..t
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
    }
}

/// No hit, or a best score too low to mean the question named a topic.
fn is_weak(hits: &[Ranked]) -> bool {
    hits.first().is_none_or(|h| h.score < WEAK_TOP_SCORE)
}

/// Chinese words that point back at something said before. Substrings, so only forms
/// that are not also parts of unrelated words (该 alone is in 应该, 其 in 其他).
const ZH_REFERENCES: &[&str] = &[
    "它",
    "这篇",
    "那篇",
    "这个",
    "那个",
    "这项",
    "那项",
    "这些",
    "那些",
    "这款",
    "那款",
    "这套",
    "这部",
    "该文",
    "该论文",
    "该项目",
    "该方法",
    "该工作",
    "该模型",
    "该框架",
    "此文",
    "其中",
    "上述",
    "上面",
    "刚才",
    "前面提到",
    "详细",
    "展开",
    "继续",
    "还有呢",
    "多说",
    "再说",
];

/// English pronouns that always refer back.
const EN_PRONOUNS: &[&str] = &["it", "its", "it's", "they", "them", "their", "theirs"];

/// Demonstratives refer back when a noun like these follows (`this paper`), or when they
/// end the question (`what is that?`); elsewhere "that" is usually a conjunction.
const EN_DEMONSTRATIVES: &[&str] = &["this", "that", "these", "those", "the", "same"];
const EN_REFERRED_NOUNS: &[&str] = &[
    "paper",
    "papers",
    "project",
    "projects",
    "one",
    "ones",
    "work",
    "model",
    "models",
    "method",
    "repo",
    "repository",
    "approach",
    "framework",
    "library",
    "same",
];

/// Openings of elliptical English follow-ups.
const EN_ELLIPSIS: &[&str] = &[
    "what about",
    "how about",
    "and ",
    "tell me more",
    "more about",
    "go on",
    "continue",
    "anything else",
];

/// Whether a question refers back to the conversation (pronoun, demonstrative + noun,
/// elliptical form). Pure text test; see the module docs for where it is used.
pub fn refers_back(question: &str) -> bool {
    if refers_back_zh(question) {
        return true;
    }
    let lower = question.trim().to_lowercase();
    if EN_ELLIPSIS.iter().any(|e| lower.starts_with(e)) {
        return true;
    }
    let words: Vec<&str> = lower
        .split(|c: char| !(c.is_ascii_alphanumeric() || c == '\''))
        .filter(|w| !w.is_empty())
        .collect();
    words.iter().enumerate().any(|(i, w)| {
        EN_PRONOUNS.contains(w)
            || (EN_DEMONSTRATIVES.contains(w)
                && match words.get(i + 1) {
                    Some(next) => EN_REFERRED_NOUNS.contains(next),
                    // "the" closing a question is a typo, not a reference.
                    None => *w != "the",
                })
    })
}

fn refers_back_zh(question: &str) -> bool {
    // 其它 ("other") contains 它 without referring to anything.
    let q = question.replace("其它", "");
    if ZH_REFERENCES.iter().any(|r| q.contains(r)) {
        return true;
    }
    // "代码呢？", "那 Unicom 呢？": a question ending in 呢 asks about the current topic.
    let end = q.trim_end_matches(|c: char| c.is_whitespace() || "？?！!。.".contains(c));
    end.ends_with('呢')
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn chinese_references_and_ellipses_are_detected() {
        for q in [
            "它的代码在哪里？",
            "那篇论文是哪一年发表的？",
            "这个项目有多少星？",
            "该论文的第一作者是谁？",
            "代码呢？",
            "那 Unicom 呢?",
            "能详细说说吗",
        ] {
            assert!(refers_back(q), "{q}");
        }
    }

    #[test]
    fn chinese_words_that_only_contain_reference_characters_are_not_references() {
        for q in [
            "其它论文有哪些？",
            "我应该怎么联系他？",
            "安翔是谁？",
            "呢喃是什么意思",
        ] {
            assert!(!refers_back(q), "{q}");
        }
    }

    #[test]
    fn english_pronouns_demonstratives_and_ellipses_are_detected() {
        for q in [
            "Where is its code?",
            "Is it open source?",
            "Who wrote this paper?",
            "What is that?",
            "What about the code?",
            "And the year?",
            "Tell me more",
            "When was the paper published?",
        ] {
            assert!(refers_back(q), "{q}");
        }
    }

    #[test]
    fn english_conjunction_that_and_plain_questions_are_not_references() {
        for q in [
            "What is Unicom?",
            "Is there a paper that uses CLIP?",
            "Which projects use ViT?",
            "How many stars does InsightFace have?",
        ] {
            assert!(!refers_back(q), "{q}");
        }
    }
}
