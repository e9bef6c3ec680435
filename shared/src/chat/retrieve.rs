//! Retrieval for a chat turn: a listing question gets every matching entry
//! ([`SearchIndex::plan`]); any other question is retrieved with its follow-up resolution
//! (`followup`) and, when `QUERY_REWRITE` asks for it and a model is configured, expanded
//! once by the model and fused (`rewrite`).

use std::time::SystemTime;

use super::{ChatService, RetrievalInfo};
use crate::chat::followup::retrieve_followup;
use crate::chat::rewrite::{rewrite, rewrite_messages, trigger, QueryRewrite, Situation};
use crate::message::{ChatMessage, Role};
use crate::retrieval::Ranked;
use crate::search::{fuse_expansion, Filters, SearchIndex, FUSION_DEPTH};

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
        let llm = self
            .rewrite_llm()
            .filter(|_| self.config.query_rewrite != QueryRewrite::Off);
        // Fusion needs each list ranked as deep as `rag eval --rewrites` ranks it.
        let depth = if llm.is_some() {
            top_k.max(FUSION_DEPTH)
        } else {
            top_k
        };
        let mut found = retrieve_followup(index, question, history, depth, self.min_score);
        let mut out = TurnRetrieval {
            info: RetrievalInfo {
                query: found.query,
                followup: found.followup,
                rewritten_query: None,
                fused: false,
                filters: None,
                listing: false,
            },
            hits: Vec::new(),
        };
        let situation = Situation {
            retriever: index.retriever(),
            site: index.language(),
            question,
            terms: &found.question_terms,
            has_earlier_turn: history.iter().any(|m| m.role == Role::User),
            hits: &found.hits,
            min_score: self.min_score,
            followup: found.followup,
        };
        let why = llm.and_then(|_| trigger(self.config.query_rewrite, &situation));
        let expansion = match (llm, why) {
            (Some(llm), Some(_)) => {
                let messages = rewrite_messages(question, history, index.language());
                rewrite(llm, &self.budget, messages, self.config.rewrite_timeout, at).await
            }
            _ => None,
        };
        let Some(expansion) = expansion else {
            found.hits.truncate(top_k);
            out.hits = found.hits;
            return out;
        };
        out.hits = fuse_expansion(&found.hits, &expansion, top_k, |text, scoring| {
            index.rank_as(text, scoring, depth, self.min_score).1
        });
        tracing::info!(
            trigger = ?why,
            query = expansion.query.is_some(),
            passage = expansion.passage.is_some(),
            "question expanded by the model"
        );
        out.info.rewritten_query = expansion.query;
        out.info.fused = true;
        out
    }
}
