//! The health report a `GET` of the chat function answers: the knowledge base served,
//! the model, the store, the limits in force and what the index costs the instance.

use std::time::SystemTime;

use super::{ChatService, Health, IndexReport, LimitsReport};
use crate::search::SearchIndex;

impl ChatService {
    /// The health report for `GET`, with today's token budget (left out, and logged, when
    /// its counter cannot be read).
    pub async fn health(&self, index: &SearchIndex) -> Health {
        let budget = match self.budget.status(SystemTime::now()).await {
            Ok(b) => Some(b),
            Err(e) => {
                tracing::warn!(error = %e, "cannot read the token budget for health");
                None
            }
        };
        Health {
            status: if self.budget.is_degraded() {
                "degraded"
            } else {
                "ok"
            },
            kb_version: index.version().to_owned(),
            documents: index.kb().documents.len(),
            model: self.model_name().to_owned(),
            store: self.store.kind(),
            contact_url: self.config.contact_url.clone(),
            limits: LimitsReport {
                counters: self.budget.counters_kind(),
                rate_limit_per_minute: self.admission.rate().per_minute(),
                max_tokens: self.max_tokens(),
                budget,
            },
            index: IndexReport {
                prebuilt: index.is_prebuilt(),
                bytes: index.source_bytes(),
                memory_limit_mb: crate::heap::memory_limit_mb(),
                resident: crate::heap::resident(),
            },
        }
    }
}
