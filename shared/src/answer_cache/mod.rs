//! The answer cache: a first-turn question asked again under the same knowledge base, in
//! the same answer style, that retrieves the same entries, gets the answer the model gave
//! the first time, without a model call or any of the token budget.
//!
//! # Key
//! SHA-256 of the knowledge base version, everything of the deployment that shapes an
//! answer ([`AnswerShape`]: the resolved system prompt, the model's provider and name, the
//! answer style, the context and answer limits and [`PROMPT_TEMPLATE_VERSION`]), the
//! question normalised ([`normalize_question`]: folded, spaces collapsed, closing
//! punctuation dropped) and the ids of the entries the prompt carried, in order. A
//! knowledge base change, and a deploy changing the prompt, the model or a limit, gives
//! every key a new value, so an earlier answer is never found; it expires with its time to
//! live.
//! Only first turns are cached (no history: the prompt then depends on nothing but these),
//! and only answers that ended normally and passed the grounding check.
//!
//! # Where
//! - [`DynamoAnswerCache`]: items in the conversations table under the partition
//!   `answer-cache#<key>` (a session id the chat never issues, as sessions are signed),
//!   sort key `answer`, with the table's `expires_at` TTL; the first write of a key wins
//!   (a condition), so instances answering the same question at once store one answer.
//! - [`MemoryAnswerCache`]: a bounded map in the instance's memory, when no tables are set.
//!
//! A cache that cannot be read or written is a miss, logged: the visitor still gets an
//! answer from the model.

mod dynamodb;
mod memory;

use async_trait::async_trait;
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

pub use dynamodb::DynamoAnswerCache;
pub use memory::MemoryAnswerCache;

use crate::grounding::Grounding;
use crate::retrieval::fold_char;
use crate::store::StoreError;

/// The cache a chat function shares with its other instances: DynamoDB's when
/// `CONVERSATIONS_TABLE` is set (with the audit table, as the store), else `None` (the
/// chat keeps its own [`MemoryAnswerCache`]).
pub async fn open_shared(
    config: &crate::config::Config,
    ttl: std::time::Duration,
    aws: &crate::config::AwsClients,
) -> Option<std::sync::Arc<dyn AnswerCache>> {
    match (&config.conversations_table, &config.audit_table) {
        (Some(table), Some(_)) => Some(std::sync::Arc::new(DynamoAnswerCache::new(
            aws.dynamodb().await,
            table,
            ttl,
        ))),
        _ => None,
    }
}

/// An answer kept for reuse.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CachedAnswer {
    /// The answer's text.
    pub reply: String,
    /// The model that wrote it.
    pub model: String,
    /// Its grounding figures when it was written.
    pub grounding: Option<Grounding>,
}

/// Where answers are kept between requests (and, in DynamoDB, between instances).
#[async_trait]
pub trait AnswerCache: Send + Sync {
    /// The answer stored under `key`, if one is and has not expired.
    async fn get(&self, key: &str) -> Result<Option<CachedAnswer>, StoreError>;

    /// Stores `answer` under `key` unless an answer is already there (the first one stays).
    async fn put(&self, key: &str, answer: &CachedAnswer) -> Result<(), StoreError>;
}

/// The version of the prompt's template (how `crate::prompt::build_prompt` lays out the
/// system prompt, the context blocks and the question, and how a style writes its blocks).
/// Bump it with any change to them: cached answers written under the old template are then
/// never served.
pub const PROMPT_TEMPLATE_VERSION: u32 = 1;

/// Everything of a deployment, besides the knowledge base, the question and the entries,
/// that shapes an answer: a change to any of it must not serve an answer written before.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct AnswerShape<'a> {
    /// The system prompt as sent: the owner's, with the style's instruction.
    pub system_prompt: &'a str,
    /// Where the model is served (the provider's base URL).
    pub provider: &'a str,
    /// The model's name.
    pub model: &'a str,
    /// The answer style's name.
    pub style: &'a str,
    /// The model's context window the prompt is fitted to.
    pub max_context_tokens: usize,
    /// The cap on answer tokens.
    pub max_answer_tokens: u32,
}

impl AnswerShape<'_> {
    /// A digest of every field and [`PROMPT_TEMPLATE_VERSION`], each field delimited (so
    /// moving text between two fields changes it).
    pub fn digest(&self) -> String {
        let mut h = Sha256::new();
        h.update(PROMPT_TEMPLATE_VERSION.to_le_bytes());
        for part in [self.system_prompt, self.provider, self.model, self.style] {
            h.update((part.len() as u64).to_le_bytes());
            h.update(part.as_bytes());
        }
        h.update((self.max_context_tokens as u64).to_le_bytes());
        h.update(self.max_answer_tokens.to_le_bytes());
        hex::encode(&h.finalize()[..16])
    }
}

/// The cache key of a first-turn question (see the module docs); `shape` is
/// [`AnswerShape::digest`] of the deployment answering it.
pub fn cache_key(kb_version: &str, shape: &str, question: &str, doc_ids: &[String]) -> String {
    let mut h = Sha256::new();
    for part in [kb_version, shape, &normalize_question(question)] {
        h.update(part.as_bytes());
        h.update([0]);
    }
    for id in doc_ids {
        h.update(id.as_bytes());
        h.update([0]);
    }
    hex::encode(&h.finalize()[..16])
}

/// A question as compared for caching: characters folded (full-width to ASCII, lowercase),
/// runs of whitespace as one space, and closing punctuation and spaces at the ends dropped,
/// so "What is Partial FC?" and "what is  partial fc" are one question.
pub fn normalize_question(question: &str) -> String {
    let folded: String = question.chars().map(fold_char).collect();
    let spaced = folded.split_whitespace().collect::<Vec<_>>().join(" ");
    spaced
        .trim_matches(|c: char| c.is_whitespace() || "?？!！.。,，;；~～؟".contains(c))
        .to_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn questions_differing_in_case_spacing_and_closing_marks_are_one() {
        assert_eq!(
            normalize_question("What is  Partial FC？"),
            "what is partial fc"
        );
        assert_eq!(
            normalize_question(" what is partial fc "),
            "what is partial fc"
        );
        assert_eq!(normalize_question("ＧＰＵ 是什么。"), "gpu 是什么");
    }

    fn shape() -> AnswerShape<'static> {
        AnswerShape {
            system_prompt: "You answer about my papers.",
            provider: "https://api.example/v1",
            model: "model-a",
            style: "standard",
            max_context_tokens: 8192,
            max_answer_tokens: 512,
        }
    }

    #[test]
    fn the_shape_changes_with_every_field() {
        let base = shape().digest();
        assert_eq!(base, shape().digest());
        let changed = [
            AnswerShape {
                system_prompt: "Never mention authors. Answer in French.",
                ..shape()
            },
            AnswerShape {
                provider: "https://other.example/v1",
                ..shape()
            },
            AnswerShape {
                model: "model-b",
                ..shape()
            },
            AnswerShape {
                style: "concise",
                ..shape()
            },
            AnswerShape {
                max_context_tokens: 4096,
                ..shape()
            },
            AnswerShape {
                max_answer_tokens: 256,
                ..shape()
            },
            // Text moved from one field to the next.
            AnswerShape {
                system_prompt: "You answer about my papers.h",
                provider: "ttps://api.example/v1",
                ..shape()
            },
        ];
        for other in changed {
            assert_ne!(other.digest(), base, "{other:?}");
        }
    }

    #[test]
    fn the_key_changes_with_version_style_question_and_entries() {
        let ids = vec!["a".to_owned(), "b".to_owned()];
        let base = cache_key("v1", "standard", "What is X?", &ids);
        assert_eq!(base, cache_key("v1", "standard", "what is x", &ids));
        assert_ne!(base, cache_key("v2", "standard", "What is X?", &ids));
        assert_ne!(base, cache_key("v1", "concise", "What is X?", &ids));
        assert_ne!(base, cache_key("v1", "standard", "What is Y?", &ids));
        assert_ne!(base, cache_key("v1", "standard", "What is X?", &ids[..1]));
        // Parts are separated: moving a character between them changes the key.
        assert_ne!(
            cache_key("v1", "standard", "q", &["ab".to_owned()]),
            cache_key("v1", "standard", "q", &["a".to_owned(), "b".to_owned()])
        );
    }
}
