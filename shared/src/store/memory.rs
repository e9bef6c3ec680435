//! In-process conversation store, used when no tables are configured (local runs, tests).
//!
//! Same semantics as the DynamoDB store (ordering, latest N, all-or-nothing, idempotent on the
//! request id) without the time to live: everything lives as long as the process.
//!
//! With a dump file ([`MemoryConversationStore::with_dump`], `AUDIT_DUMP_FILE`), every audit
//! record written or rated is also appended to it as one JSON line ([`AuditEntry`]): the
//! local stand-in for the audit table that `rag report --dump` reads. A record rated later
//! appears again, whole; the last line of a request id is its current state.

use std::collections::{BTreeMap, HashMap};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::{Mutex, MutexGuard, PoisonError};
use std::time::SystemTime;

use async_trait::async_trait;

use super::{
    check_exchange, epoch_millis, turn_key, AuditEntry, AuditRecord, ConversationStore, Exchange,
    Feedback, FeedbackStored, Recorded, StoreError,
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
    /// Where audit records are appended as JSON lines, if anywhere.
    dump: Option<PathBuf>,
}

#[derive(Debug, Default)]
struct State {
    /// Session id → turns ordered by the same sort key the DynamoDB table uses.
    sessions: HashMap<String, BTreeMap<String, ChatMessage>>,
    /// Request id → audit record, with when it was written.
    audit: HashMap<String, AuditEntry>,
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

    /// An empty store that also appends every audit record it writes or rates to `path`
    /// as a JSON line (created when missing, never truncated).
    pub fn with_dump(path: impl AsRef<Path>) -> Self {
        Self {
            dump: Some(path.as_ref().to_owned()),
            ..Self::default()
        }
    }

    /// Every audit record, in the order written.
    pub fn audit_records(&self) -> Vec<AuditRecord> {
        self.audit_entries().into_iter().map(|e| e.record).collect()
    }

    /// Every audit record with its time, in the order written.
    pub fn audit_entries(&self) -> Vec<AuditEntry> {
        let state = self.lock();
        state
            .audit_order
            .iter()
            .filter_map(|id| state.audit.get(id).cloned())
            .collect()
    }

    /// The audit record stored under a request id.
    pub fn audit_record(&self, request_id: &str) -> Option<AuditRecord> {
        self.lock().audit.get(request_id).map(|e| e.record.clone())
    }

    /// Appends `entry` to the dump file, if there is one. A local convenience, so a failure
    /// is logged rather than failing the request.
    fn dump(&self, entry: &AuditEntry) {
        let Some(path) = &self.dump else { return };
        let written = serde_json::to_string(entry)
            .map_err(std::io::Error::other)
            .and_then(|line| {
                let mut file = std::fs::OpenOptions::new()
                    .create(true)
                    .append(true)
                    .open(path)?;
                // One write of the whole line, so lines of concurrent requests never mix.
                file.write_all(format!("{line}\n").as_bytes())
            });
        if let Err(e) = written {
            tracing::warn!(path = %path.display(), error = %e, "cannot append to the audit dump");
        }
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

    fn insert_audit(&self, state: &mut State, rec: &AuditRecord, at: SystemTime) -> Recorded {
        if state.audit.contains_key(&rec.request_id) {
            return Recorded::Duplicate;
        }
        let entry = AuditEntry {
            at_ms: epoch_millis(at),
            record: rec.clone(),
        };
        self.dump(&entry);
        state.audit.insert(rec.request_id.clone(), entry);
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
        if self.insert_audit(&mut state, &ex.audit, ex.at) == Recorded::Duplicate {
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
        self.insert_audit(&mut self.lock(), rec, SystemTime::now());
        Ok(())
    }

    async fn record_feedback(
        &self,
        request_id: &str,
        session_id: &str,
        feedback: &Feedback,
    ) -> Result<FeedbackStored, StoreError> {
        let mut state = self.lock();
        let Some(entry) = state.audit.get_mut(request_id).filter(|e| {
            e.record.action == "chat" && e.record.session_id.as_deref() == Some(session_id)
        }) else {
            return Ok(FeedbackStored::UnknownRequest);
        };
        entry.record.feedback = Some(feedback.clone());
        let entry = entry.clone();
        drop(state);
        self.dump(&entry);
        Ok(FeedbackStored::Stored)
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use super::*;
    use crate::testing::store_scenarios as scenario;

    crate::store_scenario_tests! {
        let store = Arc::new(MemoryConversationStore::new());
        store: store.clone(),
        inspect: store.as_ref(),
    }

    #[tokio::test]
    async fn the_dump_holds_one_line_per_write_and_the_last_is_current() {
        let path = std::env::temp_dir().join(format!(
            "audit-dump-{}.jsonl",
            crate::testing::moto::unique_name("t")
        ));
        let store = MemoryConversationStore::with_dump(&path);
        scenario::feedback_replaces_and_unknown_is_refused(&store, &store).await;
        let text = std::fs::read_to_string(&path).unwrap();
        let _ = std::fs::remove_file(&path);
        let entries: Vec<AuditEntry> = text
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect();
        // The chat record, its two ratings, the ingest record.
        assert_eq!(entries.len(), 4, "{text}");
        assert_eq!(entries[0].record.feedback, None);
        assert!(entries[0].at_ms > 0);
        assert_eq!(
            entries[1].record.feedback.as_ref().map(|f| f.rating),
            Some(crate::store::Rating::Down)
        );
        assert_eq!(entries[2].record.request_id, entries[0].record.request_id);
        assert_eq!(entries[2].record, store.audit_records()[0]);
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
