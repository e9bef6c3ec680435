//! The chat's two store calls, bounded and retried, so that a DynamoDB outage can neither
//! hang a request nor silently lose a turn that was answered.
//!
//! - The session's history is read within [`HISTORY_BUDGET`]; failing that, the turn is
//!   answered without it.
//! - The exchange is written within [`RECORD_BUDGET`], throttling and outages retried with
//!   backoff ([`crate::retry`]). The write is idempotent on the request id, so a retry after
//!   an attempt that did land (its response lost, or cut off at the deadline) cannot record
//!   the turn twice. When the write still fails, the whole exchange is logged at `error` as
//!   one `unrecorded_turn` line (session id, request id, outcome, error, and `exchange`: the
//!   [`Exchange`] as JSON). Written back with [`ConversationStore::record_exchange`], that
//!   line restores the turn exactly; writing it twice does nothing more.
//!
//! The line carries the visitor's question and the answer, which logs otherwise never do
//! (see [`crate::edge::RequestLog`]): losing an answered turn would be worse, and it appears only
//! when the store refused it. Keep the log group's retention no longer than the tables' TTL.
//!
//! Both budgets sit well inside the chat function's 90 s timeout next to the model's 60 s.

use std::time::Duration;

use tokio::time::Instant;

use crate::message::ChatMessage;
use crate::retry::retry_until;
use crate::store::{ConversationStore, Exchange, Recorded, StoreError};

/// How long the history read may take, retries included. A healthy `Query` answers in
/// milliseconds; this is what a visitor waits, before the answer starts, for context the
/// turn can do without.
pub const HISTORY_BUDGET: Duration = Duration::from_millis(1500);

/// How long writing an exchange may take, retries included. A throttled on-demand table
/// usually recovers within a few hundred milliseconds; 3 s fits several rounds of the SDK's
/// three attempts. The answer has already been produced: in a stream the visitor has it,
/// and a JSON answer waits at most this long for its record.
pub const RECORD_BUDGET: Duration = Duration::from_secs(3);

/// How long a turn's store calls may take, retries included: [`HISTORY_BUDGET`] and
/// [`RECORD_BUDGET`] by default. A field of [`super::ChatConfig`] rather than constants so
/// that tests of an outage wait milliseconds, not seconds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct StoreBudgets {
    /// Reading the session's history.
    pub history: Duration,
    /// Writing the exchange (and a visitor's feedback).
    pub record: Duration,
}

impl Default for StoreBudgets {
    fn default() -> Self {
        Self {
            history: HISTORY_BUDGET,
            record: RECORD_BUDGET,
        }
    }
}

/// The latest `limit` messages of a session, or none (logged) when the store cannot give
/// them within `budget` ([`HISTORY_BUDGET`] by default).
pub(super) async fn history(
    budget: Duration,
    store: &dyn ConversationStore,
    session_id: &str,
    limit: usize,
) -> Vec<ChatMessage> {
    let deadline = Instant::now() + budget;
    match retry_until(deadline, StoreError::is_retryable, || {
        store.recent_turns(session_id, limit)
    })
    .await
    {
        Ok(turns) => turns,
        Err(e) => {
            tracing::warn!(error = %e, "cannot read the session's history; answering without it");
            Vec::new()
        }
    }
}

/// Writes `exchange` within `budget` ([`RECORD_BUDGET`] by default); a failure is logged as
/// `unrecorded_turn` (see the module docs), never returned: the answer stands. True when it
/// is stored.
pub(super) async fn record(
    budget: Duration,
    store: &dyn ConversationStore,
    exchange: &Exchange,
) -> bool {
    let deadline = Instant::now() + budget;
    let outcome = &exchange.audit.outcome;
    match retry_until(deadline, StoreError::is_retryable, || {
        store.record_exchange(exchange)
    })
    .await
    {
        Ok(Recorded::Duplicate) => {
            // A retry of a request already recorded (same id, session and question).
            tracing::info!(
                request_id = %exchange.request_id,
                %outcome,
                "duplicate request: the turn is already recorded; this one is not stored again"
            );
            true
        }
        Ok(Recorded::Written) => {
            tracing::info!(%outcome, "chat recorded");
            true
        }
        Err(e) => {
            // Serializing plain strings and numbers cannot fail; should it ever, the ids
            // and the error still make the line worth having.
            let json = serde_json::to_string(exchange).unwrap_or_default();
            tracing::error!(
                session_id = %exchange.session_id,
                request_id = %exchange.request_id,
                %outcome,
                error = %e,
                exchange = %json,
                "unrecorded_turn"
            );
            false
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::message::Role;
    use crate::store::{AuditRecord, MemoryConversationStore, Recorded};
    use async_trait::async_trait;
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::time::SystemTime;

    /// A store that refuses the first `failures` writes (retryably or not), then delegates.
    struct Flaky {
        inner: MemoryConversationStore,
        failures: usize,
        retryable: bool,
        calls: AtomicUsize,
    }

    #[async_trait]
    impl ConversationStore for Flaky {
        fn kind(&self) -> &'static str {
            "flaky"
        }

        async fn recent_turns(
            &self,
            session_id: &str,
            limit: usize,
        ) -> Result<Vec<ChatMessage>, StoreError> {
            self.inner.recent_turns(session_id, limit).await
        }

        async fn record_exchange(&self, ex: &Exchange) -> Result<Recorded, StoreError> {
            if self.calls.fetch_add(1, Ordering::SeqCst) < self.failures {
                return Err(if self.retryable {
                    StoreError::Throttled {
                        message: "slow down".into(),
                        source: None,
                    }
                } else {
                    StoreError::other("table missing")
                });
            }
            self.inner.record_exchange(ex).await
        }

        async fn append_audit(&self, rec: &AuditRecord) -> Result<(), StoreError> {
            self.inner.append_audit(rec).await
        }
    }

    fn flaky(failures: usize, retryable: bool) -> Flaky {
        Flaky {
            inner: MemoryConversationStore::new(),
            failures,
            retryable,
            calls: AtomicUsize::new(0),
        }
    }

    fn exchange() -> Exchange {
        Exchange {
            session_id: "s-1".into(),
            request_id: "r-1".into(),
            user: "What is Partial FC?".into(),
            assistant: Some("A way to train on 10M identities [1].".into()),
            audit: AuditRecord {
                action: "chat".into(),
                request_id: "r-1".into(),
                outcome: "ok".into(),
                ..AuditRecord::default()
            },
            at: SystemTime::now(),
        }
    }

    #[tokio::test]
    async fn throttled_writes_are_retried_and_land_once() {
        let store = flaky(3, true);
        assert!(record(RECORD_BUDGET, &store, &exchange()).await);
        assert_eq!(store.calls.load(Ordering::SeqCst), 4);
        assert_eq!(store.inner.session_turns("s-1").len(), 2);
        assert_eq!(store.inner.audit_records().len(), 1);
    }

    #[tokio::test]
    async fn a_permanent_failure_is_not_retried() {
        let store = flaky(usize::MAX, false);
        assert!(!record(RECORD_BUDGET, &store, &exchange()).await);
        assert_eq!(store.calls.load(Ordering::SeqCst), 1);
    }

    // Paused time: the budget passes at once and exactly.
    #[tokio::test(start_paused = true)]
    async fn a_history_read_that_never_answers_gives_up_within_its_budget() {
        struct Hanging;
        #[async_trait]
        impl ConversationStore for Hanging {
            fn kind(&self) -> &'static str {
                "hanging"
            }
            async fn recent_turns(
                &self,
                _: &str,
                _: usize,
            ) -> Result<Vec<ChatMessage>, StoreError> {
                std::future::pending().await
            }
            async fn record_exchange(&self, _: &Exchange) -> Result<Recorded, StoreError> {
                std::future::pending().await
            }
            async fn append_audit(&self, _: &AuditRecord) -> Result<(), StoreError> {
                Ok(())
            }
        }
        let start = Instant::now();
        assert!(history(HISTORY_BUDGET, &Hanging, "s-1", 10)
            .await
            .is_empty());
        assert_eq!(start.elapsed(), HISTORY_BUDGET);
        let store = MemoryConversationStore::new();
        store.record_exchange(&exchange()).await.unwrap();
        assert_eq!(
            history(HISTORY_BUDGET, &store, "s-1", 10).await,
            vec![
                ChatMessage::new(Role::User, "What is Partial FC?"),
                ChatMessage::new(Role::Assistant, "A way to train on 10M identities [1]."),
            ]
        );
    }
}
