//! Retrieval for a chat turn: a listing question gets every matching entry
//! ([`SearchIndex::plan`]); any other question is retrieved with its follow-up resolution
//! (`followup`) and, when that is weak or the question refers back and a model is
//! configured, rewritten once and fused (`rewrite`).

use std::time::SystemTime;

use super::{ChatService, RetrievalInfo};
use crate::chat::followup::retrieve_followup;
use crate::chat::rewrite::{fuse, main_language, rewrite, rewrite_messages, trigger};
use crate::message::{ChatMessage, Role};
use crate::retrieval::Ranked;
use crate::search::{Filters, SearchIndex};

/// What a turn retrieved, and how (for the response).
pub(super) struct TurnRetrieval {
    pub(super) hits: Vec<Ranked>,
    pub(super) info: RetrievalInfo,
}

impl ChatService {
    /// Retrieves for `question` (see the module docs). Never fails: a failed rewrite keeps
    /// the lexical hits.
    pub(super) async fn retrieve_turn(
        &self,
        index: &SearchIndex,
        question: &str,
        history: &[ChatMessage],
        top_k: usize,
        at: SystemTime,
    ) -> TurnRetrieval {
        if let Some(plan) = index.plan(question, &Filters::default(), None) {
            let (_, hits) = index.rank_plan(&plan, top_k, self.min_score);
            tracing::info!(hits = hits.len(), filters = ?plan.filters, "listing question");
            return TurnRetrieval {
                hits,
                info: RetrievalInfo {
                    query: question.to_owned(),
                    followup: false,
                    rewritten_query: None,
                    fused: false,
                    filters: (!plan.filters.is_empty()).then_some(plan.filters),
                    listing: plan.listing,
                },
            };
        }
        let found = retrieve_followup(index, question, history, top_k, self.min_score);
        let mut out = TurnRetrieval {
            info: RetrievalInfo {
                query: found.query,
                followup: found.followup,
                rewritten_query: None,
                fused: false,
                filters: None,
                listing: false,
            },
            hits: found.hits,
        };
        let Some(llm) = self.llm.as_deref().filter(|_| self.config.query_rewrite) else {
            return out;
        };
        let earlier = history.iter().any(|m| m.role == Role::User);
        let Some(why) = trigger(
            index.retriever(),
            question,
            earlier,
            &out.hits,
            found.followup,
        ) else {
            return out;
        };
        let messages = rewrite_messages(question, history, main_language(index.kb()));
        let Some(query) = rewrite(llm, &self.budget, messages, at).await else {
            return out;
        };
        let (_, rewritten) = index.rank(&query, top_k, self.min_score);
        tracing::info!(trigger = ?why, rewritten_hits = rewritten.len(), "query rewritten");
        out.hits = fuse(&[&out.hits, &rewritten], top_k);
        out.info.rewritten_query = Some(query);
        out.info.fused = true;
        out
    }
}
