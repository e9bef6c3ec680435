//! In-process conversation store, used when no tables are configured (local runs, tests).
//!
//! Same semantics as the DynamoDB store (ordering, latest N, all-or-nothing, idempotent on the
//! request id) without the time to live: everything lives as long as the process.

use std::collections::{BTreeMap, HashMap};
use std::sync::{Mutex, MutexGuard, PoisonError};

use async_trait::async_trait;

use super::{
    check_exchange, epoch_millis, turn_key, AuditRecord, ConversationStore, Exchange, Recorded,
    StoreError,
};
use crate::message::{ChatMessage, Role};

/// A [`ConversationStore`] in process memory.
#[derive(Debug, Default)]
pub struct MemoryConversationStore {
    // A std mutex, not tokio's: every critical section is a few map operations with no
    // `.await` inside, so it is never held across a suspension point and never contended for
    // long (the pattern of mini-redis's `Shared.state`). That also makes the
    // check-then-insert of `record_exchange` atomic, which is what idempotency needs.
    state: Mutex<State>,
}

#[derive(Debug, Default)]
struct State {
    /// Session id → turns ordered by the same sort key the DynamoDB table uses.
    sessions: HashMap<String, BTreeMap<String, ChatMessage>>,
    /// Request id → audit record.
    audit: HashMap<String, AuditRecord>,
    /// Request ids in the order their audit records were written, for [`audit_records`].
    ///
    /// [`audit_records`]: MemoryConversationStore::audit_records
    audit_order: Vec<String>,
}

impl MemoryConversationStore {
    /// An empty store.
    pub fn new() -> Self {
        Self::default()
    }

    /// Every audit record, in the order written.
    pub fn audit_records(&self) -> Vec<AuditRecord> {
        let state = self.lock();
        state
            .audit_order
            .iter()
            .filter_map(|id| state.audit.get(id).cloned())
            .collect()
    }

    /// The audit record stored under a request id.
    pub fn audit_record(&self, request_id: &str) -> Option<AuditRecord> {
        self.lock().audit.get(request_id).cloned()
    }

    /// Every message of a session, oldest first.
    pub fn session_turns(&self, session_id: &str) -> Vec<ChatMessage> {
        self.lock()
            .sessions
            .get(session_id)
            .map(|turns| turns.values().cloned().collect())
            .unwrap_or_default()
    }

    fn lock(&self) -> MutexGuard<'_, State> {
        // A panic while the lock was held cannot leave the maps half-updated (each section
        // finishes its checks before its first insert), so a poisoned lock is still usable.
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    fn insert_audit(state: &mut State, rec: &AuditRecord) -> Recorded {
        if state.audit.contains_key(&rec.request_id) {
            return Recorded::Duplicate;
        }
        state.audit.insert(rec.request_id.clone(), rec.clone());
        state.audit_order.push(rec.request_id.clone());
        Recorded::Written
    }
}

#[async_trait]
impl ConversationStore for MemoryConversationStore {
    fn kind(&self) -> &'static str {
        "memory"
    }

    async fn recent_turns(
        &self,
        session_id: &str,
        limit: usize,
    ) -> Result<Vec<ChatMessage>, StoreError> {
        let state = self.lock();
        let Some(turns) = state.sessions.get(session_id) else {
            return Ok(Vec::new());
        };
        // Newest first, like the DynamoDB query, then flipped to oldest first.
        let mut latest: Vec<ChatMessage> = turns.values().rev().take(limit).cloned().collect();
        latest.reverse();
        Ok(latest)
    }

    async fn record_exchange(&self, ex: &Exchange) -> Result<Recorded, StoreError> {
        check_exchange(ex)?;
        let at_ms = epoch_millis(ex.at);
        let mut state = self.lock();
        if Self::insert_audit(&mut state, &ex.audit) == Recorded::Duplicate {
            return Ok(Recorded::Duplicate);
        }
        let turns = state.sessions.entry(ex.session_id.clone()).or_default();
        turns.insert(
            turn_key(at_ms, &ex.request_id, false),
            ChatMessage::new(Role::User, ex.user.clone()),
        );
        if let Some(answer) = &ex.assistant {
            turns.insert(
                turn_key(at_ms, &ex.request_id, true),
                ChatMessage::new(Role::Assistant, answer.clone()),
            );
        }
        Ok(Recorded::Written)
    }

    async fn append_audit(&self, rec: &AuditRecord) -> Result<(), StoreError> {
        Self::insert_audit(&mut self.lock(), rec);
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use super::*;
    use crate::testing::store_scenarios as scenario;

    #[tokio::test]
    async fn turns_come_back_in_order() {
        scenario::turns_come_back_in_order(&MemoryConversationStore::new()).await;
    }

    #[tokio::test]
    async fn latest_n_returns_the_newest_oldest_first() {
        scenario::latest_n_returns_the_newest_oldest_first(&MemoryConversationStore::new()).await;
    }

    #[tokio::test]
    async fn unknown_session_has_no_turns() {
        scenario::unknown_session_has_no_turns(&MemoryConversationStore::new()).await;
    }

    #[tokio::test]
    async fn exchange_writes_user_assistant_and_audit() {
        let store = MemoryConversationStore::new();
        scenario::exchange_writes_user_assistant_and_audit(&store, &store).await;
    }

    #[tokio::test]
    async fn failed_model_writes_user_turn_and_audit_only() {
        let store = MemoryConversationStore::new();
        scenario::failed_model_writes_user_turn_and_audit_only(&store, &store).await;
    }

    #[tokio::test]
    async fn same_request_twice_is_a_duplicate() {
        let store = MemoryConversationStore::new();
        scenario::same_request_twice_is_a_duplicate(&store, &store).await;
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn concurrent_same_request_writes_once() {
        let store = Arc::new(MemoryConversationStore::new());
        scenario::concurrent_same_request_writes_once(store.clone(), store.as_ref()).await;
    }

    #[tokio::test]
    async fn sessions_are_isolated() {
        scenario::sessions_are_isolated(&MemoryConversationStore::new()).await;
    }

    #[tokio::test]
    async fn append_audit_is_idempotent() {
        let store = MemoryConversationStore::new();
        scenario::append_audit_is_idempotent(&store, &store).await;
    }

    #[tokio::test]
    async fn mismatched_request_ids_are_rejected() {
        let store = MemoryConversationStore::new();
        scenario::mismatched_request_ids_are_rejected(&store, &store).await;
    }

    #[tokio::test]
    async fn audit_records_keep_write_order() {
        let store = MemoryConversationStore::new();
        for id in ["r1", "r2", "r3"] {
            let rec = AuditRecord {
                request_id: id.into(),
                ..AuditRecord::default()
            };
            store.append_audit(&rec).await.unwrap();
        }
        let ids: Vec<String> = store
            .audit_records()
            .into_iter()
            .map(|r| r.request_id)
            .collect();
        assert_eq!(ids, ["r1", "r2", "r3"]);
        assert_eq!(store.kind(), "memory");
    }
}
