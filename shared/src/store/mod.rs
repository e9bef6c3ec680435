//! The conversation store: chat turns keyed by session and one audit record per request.
//!
//! The chat service reads the latest turns of a session to rebuild history and, once an answer
//! is complete (or the model failed), writes the exchange: the visitor's message, the model's
//! answer and the audit record, all or nothing. Writes are idempotent on the request id, so a
//! request retried by Lambda or by the client never duplicates a turn.
//!
//! Two implementations sit behind [`ConversationStore`]:
//! - [`DynamoConversationStore`]: DynamoDB, one `TransactWriteItems` per exchange;
//! - [`MemoryConversationStore`]: process memory, used when no tables are configured.

use std::time::{Duration, SystemTime, UNIX_EPOCH};

use async_trait::async_trait;
use serde::{Deserialize, Serialize};

use crate::message::{ChatMessage, Usage};

pub(crate) mod dynamodb;
mod memory;

pub use dynamodb::{create_tables, parse_audit_item, DynamoConversationStore};
pub use memory::MemoryConversationStore;

/// Milliseconds since the Unix epoch of `t` (0 before it), the precision the stores keep.
pub fn epoch_ms(t: SystemTime) -> u64 {
    epoch_millis(t)
}

/// The store a function is configured for: DynamoDB (the client of `aws`) when
/// `CONVERSATIONS_TABLE` and `AUDIT_TABLE` are both set, else process memory (appending
/// its audit records to `AUDIT_DUMP_FILE` when that is set, for `rag report --dump`).
/// Items written to DynamoDB live for `ttl`.
pub async fn open_store(
    config: &crate::config::Config,
    ttl: Duration,
    aws: &crate::config::AwsClients,
) -> std::sync::Arc<dyn ConversationStore> {
    match (&config.conversations_table, &config.audit_table) {
        (Some(turns), Some(audit)) => {
            let client = aws.dynamodb().await;
            std::sync::Arc::new(DynamoConversationStore::new(client, turns, audit, ttl))
        }
        _ => match &config.audit_dump {
            Some(path) => std::sync::Arc::new(MemoryConversationStore::with_dump(path)),
            None => std::sync::Arc::new(MemoryConversationStore::new()),
        },
    }
}

/// Boxed source error kept inside [`StoreError`] so callers can walk the chain without the
/// SDK's types appearing in this crate's API.
pub use crate::error::BoxError;

/// Where conversation turns and audit records are kept.
///
/// Shared as `Arc<dyn ConversationStore>` by every request of a warm Lambda instance.
#[async_trait]
pub trait ConversationStore: Send + Sync {
    /// Short name of the backend (`"dynamodb"`, `"memory"`), shown in health output.
    fn kind(&self) -> &'static str;

    /// The latest `limit` messages of a session, oldest first (empty for an unknown session).
    async fn recent_turns(
        &self,
        session_id: &str,
        limit: usize,
    ) -> Result<Vec<ChatMessage>, StoreError>;

    /// Writes an exchange's user message, assistant message (if any) and audit record together.
    ///
    /// Either everything is written or nothing is. A second call with the same
    /// `ex.request_id` writes nothing and returns [`Recorded::Duplicate`].
    async fn record_exchange(&self, ex: &Exchange) -> Result<Recorded, StoreError>;

    /// Writes the audit record of a non-chat action (an ingest, say).
    ///
    /// Idempotent on `rec.request_id`: a record already stored under that id is kept as is.
    async fn append_audit(&self, rec: &AuditRecord) -> Result<(), StoreError>;

    /// Attaches a visitor's rating to the chat audit record of `request_id` in `session_id`,
    /// replacing an earlier rating (so a second click changes the rating, never duplicates
    /// it). [`FeedbackStored::UnknownRequest`] when no chat record of that request and
    /// session exists: nothing is written then.
    ///
    /// The default refuses: a backend that cannot update records in place says so.
    async fn record_feedback(
        &self,
        request_id: &str,
        session_id: &str,
        feedback: &Feedback,
    ) -> Result<FeedbackStored, StoreError> {
        let _ = (request_id, session_id, feedback);
        Err(StoreError::other(format!(
            "the {} store keeps no feedback",
            self.kind()
        )))
    }
}

/// What [`ConversationStore::record_feedback`] did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FeedbackStored {
    /// The rating is now on the audit record (the first, or replacing an earlier one).
    Stored,
    /// There is no chat audit record of that request in that session.
    UnknownRequest,
}

/// A visitor's thumbs up or down.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Rating {
    /// The answer helped.
    Up,
    /// The answer did not help.
    Down,
}

impl Rating {
    /// `"up"` or `"down"`, as sent and stored.
    pub fn as_str(self) -> &'static str {
        match self {
            Rating::Up => "up",
            Rating::Down => "down",
        }
    }

    /// The rating named `s` (`"up"`, `"down"`).
    pub fn parse(s: &str) -> Option<Self> {
        match s {
            "up" => Some(Rating::Up),
            "down" => Some(Rating::Down),
            _ => None,
        }
    }
}

/// A visitor's rating of one answer, kept on the answer's audit record.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Feedback {
    /// Up or down.
    pub rating: Rating,
    /// An optional short comment, already bounded and stripped of control characters.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub comment: Option<String>,
    /// When the rating was given, epoch milliseconds.
    pub at_ms: u64,
}

/// An audit record as read back for reporting, with the time it was written.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AuditEntry {
    /// When the audited request arrived, epoch milliseconds (the item's `at`).
    pub at_ms: u64,
    /// The record as written; its fields sit beside `at_ms` in JSON.
    #[serde(flatten)]
    pub record: AuditRecord,
}

/// One chat request's worth of writes.
///
/// Serializes to JSON (`at` as `at_ms`, epoch milliseconds) so that an exchange the store
/// refused can be logged whole and written later: see [`crate::chat`]'s `unrecorded_turn`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Exchange {
    /// The conversation this turn belongs to.
    pub session_id: String,
    /// The request that produced it; the idempotency key. Must equal `audit.request_id`.
    pub request_id: String,
    /// The visitor's message.
    pub user: String,
    /// The model's answer; `None` when the model failed (the audit outcome says how).
    pub assistant: Option<String>,
    /// What happened, for the audit table.
    pub audit: AuditRecord,
    /// When the request arrived; orders turns and starts the items' time to live.
    #[serde(rename = "at_ms", with = "epoch_ms")]
    pub at: SystemTime,
}

/// What a write did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Recorded {
    /// The items were written by this call.
    Written,
    /// An earlier call with the same request id already wrote them; nothing was written.
    Duplicate,
}

/// One audited action: who asked for what, what it cost and how it ended.
///
/// The fields after `client_hash` came with the question report (`rag report`): absent in
/// records written before, hence `serde(default)`.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct AuditRecord {
    /// What was done: `"chat"`, `"ingest"`, ...
    pub action: String,
    /// The conversation, for chat actions.
    pub session_id: Option<String>,
    /// The request's id; the audit table's key.
    pub request_id: String,
    /// Knowledge-base documents involved (retrieved for chat, changed for ingest), in order.
    pub doc_ids: Vec<String>,
    /// The model that answered, if one was called.
    pub model: Option<String>,
    /// Tokens the model reported, if it did.
    pub usage: Option<Usage>,
    /// Wall time of the whole request.
    pub latency_ms: u64,
    /// How it ended: `"ok"`, `"model_error:timeout"`, ...
    pub outcome: String,
    /// The client's address, already salted and hashed by the caller; never a raw IP.
    pub client_hash: Option<String>,
    /// How well the answer is backed by the retrieved blocks, for answers the model wrote.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub grounding: Option<crate::grounding::Grounding>,
    /// The visitor's question, for chat actions. The same text the conversation turn
    /// already holds, for the same time to live: the report groups questions without
    /// reading the conversations table, and nothing is kept that was not kept before.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub question: Option<String>,
    /// How many entries retrieval found (before the prompt's budget cut), for chat actions.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hits: Option<u32>,
    /// The best hit's score, for chat actions with hits: low values mark weak coverage.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub top_score: Option<f32>,
    /// The visitor's rating of the answer, when one was given.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub feedback: Option<Feedback>,
}

pub use crate::error::StoreError;

/// Checks what every backend relies on before writing an exchange: one request id for both
/// the turn and its audit record, so the idempotency key cannot silently diverge.
fn check_exchange(ex: &Exchange) -> Result<(), StoreError> {
    if ex.request_id != ex.audit.request_id {
        return Err(StoreError::other(format!(
            "exchange request id {:?} differs from its audit record's {:?}",
            ex.request_id, ex.audit.request_id
        )));
    }
    Ok(())
}

/// Milliseconds since the Unix epoch; times before it (a broken clock) count as 0.
pub(crate) fn epoch_millis(t: SystemTime) -> u64 {
    let ms = t
        .duration_since(UNIX_EPOCH)
        .unwrap_or(Duration::ZERO)
        .as_millis();
    u64::try_from(ms).unwrap_or(u64::MAX)
}

/// [`SystemTime`] as whole epoch milliseconds, the precision the stores keep (turn keys,
/// `created_at`), so a logged exchange written later gets the same keys.
mod epoch_ms {
    use std::time::{Duration, SystemTime, UNIX_EPOCH};

    use serde::{Deserialize, Deserializer, Serializer};

    pub(super) fn serialize<S: Serializer>(t: &SystemTime, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_u64(super::epoch_millis(*t))
    }

    pub(super) fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<SystemTime, D::Error> {
        Ok(UNIX_EPOCH + Duration::from_millis(u64::deserialize(d)?))
    }
}

/// Sort key of one message of an exchange; both backends order turns by it.
///
/// Zero-padded to the width of `u64::MAX` so that string order is time order, then the
/// request id so that two exchanges of the same millisecond stay apart, then `0` for the
/// user's message and `1` for the assistant's so the question sorts before its answer.
fn turn_key(at_ms: u64, request_id: &str, assistant: bool) -> String {
    format!("{at_ms:020}#{request_id}#{}", u8::from(assistant))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn turn_keys_sort_by_time_then_request_then_user_first() {
        let mut keys = vec![
            turn_key(10_000, "a", true),
            turn_key(9_999, "z", false),
            turn_key(10_000, "a", false),
            turn_key(10_000, "b", false),
        ];
        keys.sort();
        assert_eq!(
            keys,
            vec![
                turn_key(9_999, "z", false),
                turn_key(10_000, "a", false),
                turn_key(10_000, "a", true),
                turn_key(10_000, "b", false),
            ]
        );
        assert_eq!(turn_key(5, "r", true), "00000000000000000005#r#1");
    }

    #[test]
    fn only_throttling_and_outages_are_retryable() {
        let t = StoreError::Throttled {
            message: "x".into(),
            source: None,
        };
        let u = StoreError::Unavailable {
            message: "x".into(),
            source: None,
        };
        assert!(t.is_retryable());
        assert!(u.is_retryable());
        assert!(!StoreError::other("x").is_retryable());
    }

    #[test]
    fn times_before_the_epoch_count_as_zero() {
        assert_eq!(epoch_millis(UNIX_EPOCH - Duration::from_secs(1)), 0);
        assert_eq!(epoch_millis(UNIX_EPOCH + Duration::from_millis(1234)), 1234);
    }
}
