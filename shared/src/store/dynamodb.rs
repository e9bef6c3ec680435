//! DynamoDB conversation store.
//!
//! # Tables
//! Conversations: partition key `session_id` (S), sort key `turn` (S) built by
//! [`turn_key`](super::turn_key) (`<epoch ms, 20 digits>#<request id>#0|1`), so one `Query`
//! with `ScanIndexForward=false, Limit=N` returns a session's newest N messages. Attributes:
//! `role`, `content`, `request_id`, `created_at` (N, epoch ms), `expires_at` (N, epoch s).
//!
//! Audit: partition key `request_id` (S). Attributes: `action`, `session_id`, `doc_ids` (L of
//! S, in retrieval order), `model`, `prompt_tokens`, `completion_tokens`, `total_tokens`,
//! `latency_ms`, `outcome`, `client_hash`, `at` (N, epoch ms), `expires_at` (N, epoch s);
//! for chat, also `question` (S, the visitor's message, as in the turn), `hits` (N) and
//! `top_score` (N); once the visitor rated the answer, `feedback_rating` (`up`/`down`),
//! `feedback_comment` and `feedback_at` (N, epoch ms), set by one `UpdateItem`.
//! Optional fields are absent rather than null.
//!
//! Both tables use `expires_at` as their TTL attribute and on-demand billing.
//!
//! # Retries
//! Left to the SDK client's retry configuration (standard mode, 3 attempts, set by
//! [`crate::config::sdk_config_from_env`]): throttling and transient errors are retried there
//! with backoff and jitter. What reaches this module is final and is only classified.

use std::collections::HashMap;
use std::time::{Duration, SystemTime};

use async_trait::async_trait;
use aws_sdk_dynamodb::config::http::HttpResponse;
use aws_sdk_dynamodb::error::{ProvideErrorMetadata, SdkError};
use aws_sdk_dynamodb::operation::transact_write_items::TransactWriteItemsError;
use aws_sdk_dynamodb::types::{
    AttributeDefinition, AttributeValue, BillingMode, KeySchemaElement, KeyType, Put,
    ScalarAttributeType, TableStatus, TimeToLiveSpecification, TimeToLiveStatus, TransactWriteItem,
};
use aws_sdk_dynamodb::Client;

use super::{
    check_exchange, epoch_millis, turn_key, AuditEntry, AuditRecord, ConversationStore, Exchange,
    Feedback, FeedbackStored, Rating, Recorded, StoreError,
};
use crate::grounding::Grounding;
use crate::message::{ChatMessage, Role, Usage};

/// Name of the TTL attribute on both tables (epoch seconds).
const EXPIRES_AT: &str = "expires_at";

/// Condition on every audit write, the idempotency guard: the first write of a request id
/// wins and DynamoDB itself refuses every later one, so there is no read-then-write race.
const FIRST_WRITE_ONLY: &str = "attribute_not_exists(request_id)";

/// Error codes meaning "too much, too fast, try later": capacity, request rate, or another
/// transaction holding the same items.
const THROTTLING_CODES: &[&str] = &[
    "ThrottlingException",
    "Throttling",
    "ProvisionedThroughputExceededException",
    "RequestLimitExceeded",
    "TransactionConflictException",
    "TransactionInProgressException",
];

/// Per-item reasons in a `TransactionCanceledException` that mean the same.
const THROTTLING_REASONS: &[&str] = &[
    "ThrottlingError",
    "ProvisionedThroughputExceeded",
    "RequestLimitExceeded",
    "TransactionConflict",
];

/// A [`ConversationStore`] on two DynamoDB tables (see the module docs for their schemas).
#[derive(Debug, Clone)]
pub struct DynamoConversationStore {
    client: Client,
    conversations_table: String,
    audit_table: String,
    ttl: Duration,
}

impl DynamoConversationStore {
    /// A store writing to the given tables; every item expires `ttl` after its exchange.
    ///
    /// The client's retry and timeout configuration is used as is (see the module docs).
    pub fn new(
        client: Client,
        conversations_table: impl Into<String>,
        audit_table: impl Into<String>,
        ttl: Duration,
    ) -> Self {
        Self {
            client,
            conversations_table: conversations_table.into(),
            audit_table: audit_table.into(),
            ttl,
        }
    }

    /// `expires_at` of an item written at `at`, as a DynamoDB number (epoch seconds).
    fn expires_at(&self, at: SystemTime) -> AttributeValue {
        let secs = (epoch_millis(at) / 1000).saturating_add(self.ttl.as_secs());
        AttributeValue::N(secs.to_string())
    }

    fn audit_item(&self, rec: &AuditRecord, at: SystemTime) -> HashMap<String, AttributeValue> {
        let mut item = HashMap::from([
            ("request_id".to_owned(), s(&rec.request_id)),
            ("action".to_owned(), s(&rec.action)),
            (
                "doc_ids".to_owned(),
                AttributeValue::L(rec.doc_ids.iter().map(|d| s(d)).collect()),
            ),
            ("latency_ms".to_owned(), n(rec.latency_ms)),
            ("outcome".to_owned(), s(&rec.outcome)),
            ("at".to_owned(), n(epoch_millis(at))),
            (EXPIRES_AT.to_owned(), self.expires_at(at)),
        ]);
        let optional = [
            ("session_id", rec.session_id.as_deref()),
            ("model", rec.model.as_deref()),
            ("client_hash", rec.client_hash.as_deref()),
            ("question", rec.question.as_deref()),
        ];
        for (name, value) in optional {
            if let Some(v) = value {
                item.insert(name.to_owned(), s(v));
            }
        }
        if let Some(u) = rec.usage {
            item.insert("prompt_tokens".to_owned(), n(u.prompt_tokens));
            item.insert("completion_tokens".to_owned(), n(u.completion_tokens));
            item.insert("total_tokens".to_owned(), n(u.total_tokens));
        }
        if let Some(g) = rec.grounding {
            let figures = [
                ("sentences", g.sentences),
                ("cited", g.cited),
                ("uncited_sentences", g.uncited_sentences),
                ("unsupported_sentences", g.unsupported_sentences),
                ("invalid_citations", g.invalid_citations),
            ];
            let map = figures.iter().map(|(k, v)| ((*k).to_owned(), n(*v)));
            item.insert("grounding".to_owned(), AttributeValue::M(map.collect()));
        }
        if let Some(hits) = rec.hits {
            item.insert("hits".to_owned(), n(hits));
        }
        if let Some(score) = rec.top_score.filter(|s| s.is_finite()) {
            item.insert("top_score".to_owned(), n(score));
        }
        if let Some(f) = &rec.feedback {
            item.extend(feedback_attributes(f));
        }
        item
    }

    /// The audit records written from `since_ms` to `until_ms` (epoch ms, both included), at
    /// most `max` of them; the flag is true when there were more.
    ///
    /// A `Scan` with a filter: the table has no index on time, and a report is an owner's
    /// occasional read, so it pays one read of the whole table (1 MB pages, 0.5 RCU per
    /// 4 KB eventually consistent) rather than every chat paying for an index.
    pub async fn scan_audit(
        &self,
        since_ms: u64,
        until_ms: u64,
        max: usize,
    ) -> Result<(Vec<AuditEntry>, bool), StoreError> {
        let mut entries = Vec::new();
        let mut start_key = None;
        loop {
            let page = self
                .client
                .scan()
                .table_name(&self.audit_table)
                .filter_expression("#at BETWEEN :since AND :until")
                .expression_attribute_names("#at", "at")
                .expression_attribute_values(":since", n(since_ms))
                .expression_attribute_values(":until", n(until_ms))
                .set_exclusive_start_key(start_key)
                .send()
                .await
                .map_err(|e| sdk_error("Scan audit", e))?;
            for item in page.items() {
                if entries.len() == max {
                    return Ok((entries, true));
                }
                entries.push(parse_audit_item(item)?);
            }
            start_key = page.last_evaluated_key;
            if start_key.is_none() {
                return Ok((entries, false));
            }
        }
    }

    fn turn_put(
        &self,
        ex: &Exchange,
        role: Role,
        content: &str,
        at_ms: u64,
    ) -> Result<TransactWriteItem, StoreError> {
        let item = HashMap::from([
            ("session_id".to_owned(), s(&ex.session_id)),
            (
                "turn".to_owned(),
                s(&turn_key(at_ms, &ex.request_id, role == Role::Assistant)),
            ),
            ("role".to_owned(), s(role.as_str())),
            ("content".to_owned(), s(content)),
            ("request_id".to_owned(), s(&ex.request_id)),
            ("created_at".to_owned(), n(at_ms)),
            (EXPIRES_AT.to_owned(), self.expires_at(ex.at)),
        ]);
        let put = Put::builder()
            .table_name(&self.conversations_table)
            .set_item(Some(item))
            .build()
            .map_err(|e| build_error("turn item", e))?;
        Ok(TransactWriteItem::builder().put(put).build())
    }
}

#[async_trait]
impl ConversationStore for DynamoConversationStore {
    fn kind(&self) -> &'static str {
        "dynamodb"
    }

    async fn recent_turns(
        &self,
        session_id: &str,
        limit: usize,
    ) -> Result<Vec<ChatMessage>, StoreError> {
        let mut newest_first = Vec::with_capacity(limit.min(256));
        let mut start_key = None;
        // One query in practice; a second page only when the newest `limit` items exceed the
        // 1 MB a Query returns at most.
        while newest_first.len() < limit {
            let remaining = i32::try_from(limit - newest_first.len()).unwrap_or(i32::MAX);
            let page = self
                .client
                .query()
                .table_name(&self.conversations_table)
                .key_condition_expression("#s = :s")
                .expression_attribute_names("#s", "session_id")
                .expression_attribute_names("#r", "role")
                .expression_attribute_names("#c", "content")
                .expression_attribute_values(":s", s(session_id))
                .projection_expression("#r, #c")
                .scan_index_forward(false)
                .limit(remaining)
                // The visitor's next message often follows the last answer within a second;
                // a strongly consistent read makes sure that answer is part of the history.
                .consistent_read(true)
                .set_exclusive_start_key(start_key)
                .send()
                .await
                .map_err(|e| sdk_error("Query conversations", e))?;
            for item in page.items() {
                newest_first.push(parse_turn(item)?);
            }
            start_key = page.last_evaluated_key;
            if start_key.is_none() {
                break;
            }
        }
        newest_first.truncate(limit);
        newest_first.reverse();
        Ok(newest_first)
    }

    async fn record_exchange(&self, ex: &Exchange) -> Result<Recorded, StoreError> {
        check_exchange(ex)?;
        let at_ms = epoch_millis(ex.at);
        // The audit Put comes first: its index in the cancellation reasons is relied on below.
        let audit = Put::builder()
            .table_name(&self.audit_table)
            .set_item(Some(self.audit_item(&ex.audit, ex.at)))
            .condition_expression(FIRST_WRITE_ONLY)
            .build()
            .map_err(|e| build_error("audit item", e))?;
        let mut items = vec![TransactWriteItem::builder().put(audit).build()];
        items.push(self.turn_put(ex, Role::User, &ex.user, at_ms)?);
        if let Some(answer) = &ex.assistant {
            items.push(self.turn_put(ex, Role::Assistant, answer, at_ms)?);
        }
        // No ClientRequestToken is set: the SDK generates one per call and reuses it across
        // its own retries, so an attempt that committed but lost its response is answered
        // "success" on retry instead of tripping the audit condition and reading as Duplicate.
        let result = self
            .client
            .transact_write_items()
            .set_transact_items(Some(items))
            .send()
            .await;
        let err = match result {
            Ok(_) => return Ok(Recorded::Written),
            Err(err) => err,
        };
        let cancelled = match err.as_service_error() {
            Some(TransactWriteItemsError::TransactionCanceledException(e)) => {
                let reasons = e.cancellation_reasons();
                let codes: Vec<&str> = reasons.iter().map(|r| r.code().unwrap_or("None")).collect();
                // Per-item messages say what a rejected item got wrong (size, types), which
                // the exception's own message does not.
                let detail: Vec<String> = reasons
                    .iter()
                    .map(|r| match (r.code(), r.message()) {
                        (Some(code), Some(msg)) => format!("{code} ({msg})"),
                        (code, _) => code.unwrap_or("None").to_owned(),
                    })
                    .collect();
                Some((classify_cancellation(&codes), detail.join(", ")))
            }
            _ => None,
        };
        let message = |detail: &str| format!("TransactWriteItems cancelled: [{detail}]");
        match cancelled {
            None => Err(sdk_error("TransactWriteItems", err)),
            Some((Cancellation::Duplicate, _)) => {
                tracing::debug!(request_id = %ex.request_id, "exchange already recorded");
                Ok(Recorded::Duplicate)
            }
            Some((Cancellation::Contention, detail)) => Err(StoreError::Throttled {
                message: message(&detail),
                source: Some(Box::new(err)),
            }),
            Some((Cancellation::Rejected, detail)) => Err(StoreError::Other {
                message: message(&detail),
                source: Some(Box::new(err)),
            }),
        }
    }

    async fn append_audit(&self, rec: &AuditRecord) -> Result<(), StoreError> {
        let result = self
            .client
            .put_item()
            .table_name(&self.audit_table)
            .set_item(Some(self.audit_item(rec, SystemTime::now())))
            .condition_expression(FIRST_WRITE_ONLY)
            .send()
            .await;
        match result {
            Ok(_) => Ok(()),
            // Already recorded by an earlier attempt of the same request: that is success.
            Err(err)
                if err
                    .as_service_error()
                    .is_some_and(|e| e.is_conditional_check_failed_exception()) =>
            {
                tracing::debug!(request_id = %rec.request_id, "audit record already written");
                Ok(())
            }
            Err(err) => Err(sdk_error("PutItem audit", err)),
        }
    }

    async fn record_feedback(
        &self,
        request_id: &str,
        session_id: &str,
        feedback: &Feedback,
    ) -> Result<FeedbackStored, StoreError> {
        // One UpdateItem: SET replaces an earlier rating; a rating without a comment removes
        // the earlier one's comment. The condition keeps it to an existing chat record of
        // the same session, so a rating never creates an item.
        let mut update = "SET feedback_rating = :r, feedback_at = :t".to_owned();
        let mut req = self
            .client
            .update_item()
            .table_name(&self.audit_table)
            .key("request_id", s(request_id))
            .condition_expression("attribute_exists(request_id) AND session_id = :s AND #a = :chat")
            .expression_attribute_names("#a", "action")
            .expression_attribute_values(":s", s(session_id))
            .expression_attribute_values(":chat", s("chat"))
            .expression_attribute_values(":r", s(feedback.rating.as_str()))
            .expression_attribute_values(":t", n(feedback.at_ms));
        match &feedback.comment {
            Some(c) => {
                update.push_str(", feedback_comment = :c");
                req = req.expression_attribute_values(":c", s(c));
            }
            None => update.push_str(" REMOVE feedback_comment"),
        }
        match req.update_expression(update).send().await {
            Ok(_) => Ok(FeedbackStored::Stored),
            Err(err)
                if err
                    .as_service_error()
                    .is_some_and(|e| e.is_conditional_check_failed_exception()) =>
            {
                Ok(FeedbackStored::UnknownRequest)
            }
            Err(err) => Err(sdk_error("UpdateItem audit feedback", err)),
        }
    }
}

/// The attributes a rating adds to an audit item.
fn feedback_attributes(f: &Feedback) -> Vec<(String, AttributeValue)> {
    let mut attrs = vec![
        ("feedback_rating".to_owned(), s(f.rating.as_str())),
        ("feedback_at".to_owned(), n(f.at_ms)),
    ];
    if let Some(c) = &f.comment {
        attrs.push(("feedback_comment".to_owned(), s(c)));
    }
    attrs
}

/// An audit item read back (the inverse of `audit_item`); an error names what is missing.
pub fn parse_audit_item(item: &HashMap<String, AttributeValue>) -> Result<AuditEntry, StoreError> {
    let text = |name: &str| item.get(name).and_then(|v| v.as_s().ok()).cloned();
    let number = |name: &str| -> Result<Option<u64>, StoreError> {
        match item.get(name) {
            None => Ok(None),
            Some(v) => v
                .as_n()
                .ok()
                .and_then(|n| n.parse().ok())
                .map(Some)
                .ok_or_else(|| StoreError::other(format!("audit item with a bad {name}"))),
        }
    };
    let required = |name: &str| {
        text(name).ok_or_else(|| StoreError::other(format!("audit item without string {name}")))
    };
    let small = |v: u64| u32::try_from(v).unwrap_or(u32::MAX);
    let usage = match (
        number("prompt_tokens")?,
        number("completion_tokens")?,
        number("total_tokens")?,
    ) {
        (Some(p), Some(c), Some(t)) => Some(Usage {
            prompt_tokens: small(p),
            completion_tokens: small(c),
            total_tokens: small(t),
        }),
        _ => None,
    };
    let feedback = match (
        text("feedback_rating").as_deref().and_then(Rating::parse),
        number("feedback_at")?,
    ) {
        (Some(rating), Some(at_ms)) => Some(Feedback {
            rating,
            comment: text("feedback_comment"),
            at_ms,
        }),
        _ => None,
    };
    let doc_ids = match item.get("doc_ids") {
        Some(AttributeValue::L(list)) => {
            list.iter().filter_map(|v| v.as_s().ok().cloned()).collect()
        }
        _ => Vec::new(),
    };
    Ok(AuditEntry {
        at_ms: number("at")?.unwrap_or(0),
        record: AuditRecord {
            action: required("action")?,
            session_id: text("session_id"),
            request_id: required("request_id")?,
            doc_ids,
            model: text("model"),
            usage,
            latency_ms: number("latency_ms")?.unwrap_or(0),
            outcome: required("outcome")?,
            client_hash: text("client_hash"),
            question: text("question"),
            hits: number("hits")?.map(small),
            top_score: item
                .get("top_score")
                .and_then(|v| v.as_n().ok())
                .and_then(|n| n.parse().ok()),
            feedback,
            grounding: parse_grounding(item.get("grounding")),
        },
    })
}

/// The `grounding` map of an audit item; `None` when absent or not all five figures read.
fn parse_grounding(value: Option<&AttributeValue>) -> Option<Grounding> {
    let map = value?.as_m().ok()?;
    let figure = |k: &str| -> Option<u32> { map.get(k)?.as_n().ok()?.parse().ok() };
    Some(Grounding {
        sentences: figure("sentences")?,
        cited: figure("cited")?,
        uncited_sentences: figure("uncited_sentences")?,
        unsupported_sentences: figure("unsupported_sentences")?,
        invalid_citations: figure("invalid_citations")?,
    })
}

/// Creates the conversations and audit tables (on-demand billing, TTL on `expires_at`).
///
/// Idempotent: existing tables are left as they are and only get TTL enabled if it is off.
/// Waits until both tables are active, as DynamoDB refuses the TTL change before that. Used
/// by tests and the local-stack setup; deployed tables come from the SAM template.
pub async fn create_tables(
    client: &Client,
    conversations_table: &str,
    audit_table: &str,
) -> Result<(), StoreError> {
    create_table(
        client,
        conversations_table,
        &[("session_id", KeyType::Hash), ("turn", KeyType::Range)],
    )
    .await?;
    create_table(client, audit_table, &[("request_id", KeyType::Hash)]).await?;
    for table in [conversations_table, audit_table] {
        wait_until_active(client, table).await?;
        enable_ttl(client, table).await?;
    }
    Ok(())
}

pub(crate) async fn create_table(
    client: &Client,
    table: &str,
    keys: &[(&str, KeyType)],
) -> Result<(), StoreError> {
    let mut req = client
        .create_table()
        .table_name(table)
        .billing_mode(BillingMode::PayPerRequest);
    for (name, key_type) in keys {
        req = req
            .attribute_definitions(
                AttributeDefinition::builder()
                    .attribute_name(*name)
                    .attribute_type(ScalarAttributeType::S)
                    .build()
                    .map_err(|e| build_error("attribute definition", e))?,
            )
            .key_schema(
                KeySchemaElement::builder()
                    .attribute_name(*name)
                    .key_type(key_type.clone())
                    .build()
                    .map_err(|e| build_error("key schema", e))?,
            );
    }
    match req.send().await {
        Ok(_) => Ok(()),
        Err(err)
            if err
                .as_service_error()
                .is_some_and(|e| e.is_resource_in_use_exception()) =>
        {
            Ok(())
        }
        Err(err) => Err(sdk_error("CreateTable", err)),
    }
}

pub(crate) async fn wait_until_active(client: &Client, table: &str) -> Result<(), StoreError> {
    // Tables take seconds to create on AWS and none on moto; poll briefly rather than use the
    // SDK waiter, whose 20 s minimum delay would slow every local setup.
    const POLL: Duration = Duration::from_millis(500);
    const ATTEMPTS: u32 = 120;
    for _ in 0..ATTEMPTS {
        let out = client
            .describe_table()
            .table_name(table)
            .send()
            .await
            .map_err(|e| sdk_error("DescribeTable", e))?;
        if out.table().and_then(|t| t.table_status()) == Some(&TableStatus::Active) {
            return Ok(());
        }
        tokio::time::sleep(POLL).await;
    }
    Err(StoreError::other(format!(
        "table {table} not active after {:?}",
        POLL * ATTEMPTS
    )))
}

pub(crate) async fn enable_ttl(client: &Client, table: &str) -> Result<(), StoreError> {
    let current = client
        .describe_time_to_live()
        .table_name(table)
        .send()
        .await
        .map_err(|e| sdk_error("DescribeTimeToLive", e))?;
    let status = current
        .time_to_live_description()
        .and_then(|d| d.time_to_live_status());
    // Enabling twice is an error on AWS ("TimeToLive is already enabled"). A table whose TTL
    // is on another attribute is left alone too: changing it is a deliberate migration.
    if matches!(
        status,
        Some(TimeToLiveStatus::Enabled | TimeToLiveStatus::Enabling)
    ) {
        return Ok(());
    }
    let spec = TimeToLiveSpecification::builder()
        .enabled(true)
        .attribute_name(EXPIRES_AT)
        .build()
        .map_err(|e| build_error("TTL specification", e))?;
    client
        .update_time_to_live()
        .table_name(table)
        .time_to_live_specification(spec)
        .send()
        .await
        .map_err(|e| sdk_error("UpdateTimeToLive", e))?;
    Ok(())
}

/// How a cancelled transaction is read, from the per-item reason codes (audit item first).
#[derive(Debug, PartialEq, Eq)]
enum Cancellation {
    /// The audit item's `attribute_not_exists` failed: this request id was recorded before.
    Duplicate,
    /// Throttling or a concurrent transaction on the same items: retryable.
    Contention,
    /// Anything else (validation, item too large): not retryable.
    Rejected,
}

/// Reads the per-item reason codes of a cancelled transaction (`"None"` for items that were
/// fine), in request order: the audit item first.
fn classify_cancellation(codes: &[&str]) -> Cancellation {
    if codes.first() == Some(&"ConditionalCheckFailed") {
        Cancellation::Duplicate
    } else if codes.iter().any(|c| THROTTLING_REASONS.contains(c)) {
        Cancellation::Contention
    } else {
        Cancellation::Rejected
    }
}

/// Maps a failed SDK call to a [`StoreError`], keeping the SDK error as the source.
pub(crate) fn sdk_error<E>(op: &str, err: SdkError<E, HttpResponse>) -> StoreError
where
    E: ProvideErrorMetadata + std::error::Error + Send + Sync + 'static,
{
    let (kind, message) = match &err {
        SdkError::TimeoutError(_) => (Kind::Unavailable, format!("{op}: timed out")),
        SdkError::DispatchFailure(_) => {
            (Kind::Unavailable, format!("{op}: could not reach DynamoDB"))
        }
        SdkError::ResponseError(_) => (Kind::Unavailable, format!("{op}: unreadable response")),
        SdkError::ServiceError(ctx) => {
            let code = ctx.err().code().unwrap_or("unknown");
            let message = format!("{op}: {code}: {}", ctx.err().message().unwrap_or_default());
            let kind = if THROTTLING_CODES.contains(&code) {
                Kind::Throttled
            } else if ctx.raw().status().is_server_error() {
                Kind::Unavailable
            } else {
                Kind::Other
            };
            (kind, message)
        }
        // Construction failures (a request the SDK could not build) and future variants.
        _ => (Kind::Other, format!("{op}: {err}")),
    };
    let source: Option<super::BoxError> = Some(Box::new(err));
    match kind {
        Kind::Throttled => StoreError::Throttled { message, source },
        Kind::Unavailable => StoreError::Unavailable { message, source },
        Kind::Other => StoreError::Other { message, source },
    }
}

enum Kind {
    Throttled,
    Unavailable,
    Other,
}

fn build_error(what: &str, err: aws_sdk_dynamodb::error::BuildError) -> StoreError {
    StoreError::Other {
        message: format!("cannot build {what}"),
        source: Some(Box::new(err)),
    }
}

fn parse_turn(item: &HashMap<String, AttributeValue>) -> Result<ChatMessage, StoreError> {
    let text = |name: &str| {
        item.get(name)
            .and_then(|v| v.as_s().ok())
            .ok_or_else(|| StoreError::other(format!("conversation item without string {name}")))
    };
    let role = match text("role")?.as_str() {
        "user" => Role::User,
        "assistant" => Role::Assistant,
        other => {
            return Err(StoreError::other(format!(
                "conversation item with role {other:?}"
            )))
        }
    };
    Ok(ChatMessage::new(role, text("content")?.clone()))
}

fn s(v: &str) -> AttributeValue {
    AttributeValue::S(v.to_owned())
}

fn n(v: impl ToString) -> AttributeValue {
    AttributeValue::N(v.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn condition_failure_on_the_audit_item_is_a_duplicate() {
        let codes = ["ConditionalCheckFailed", "None", "None"];
        assert_eq!(classify_cancellation(&codes), Cancellation::Duplicate);
    }

    #[test]
    fn conflicts_and_throttling_in_a_cancellation_are_contention() {
        for reason in THROTTLING_REASONS {
            let codes = ["None", reason];
            assert_eq!(
                classify_cancellation(&codes),
                Cancellation::Contention,
                "{reason}"
            );
        }
    }

    #[test]
    fn other_cancellations_are_rejections() {
        assert_eq!(
            classify_cancellation(&["None", "ValidationError"]),
            Cancellation::Rejected
        );
        assert_eq!(classify_cancellation(&[]), Cancellation::Rejected);
        // A condition failure on a turn item is not ours to interpret as a duplicate.
        assert_eq!(
            classify_cancellation(&["None", "ConditionalCheckFailed"]),
            Cancellation::Rejected
        );
    }

    #[test]
    fn turns_with_unknown_roles_are_errors() {
        let item = HashMap::from([
            ("role".to_owned(), s("system")),
            ("content".to_owned(), s("x")),
        ]);
        assert!(matches!(parse_turn(&item), Err(StoreError::Other { .. })));
        let item = HashMap::from([("role".to_owned(), s("user"))]);
        assert!(parse_turn(&item).is_err());
    }
}
