//! Behaviour every [`ConversationStore`] must show, written once and run against each backend.
//!
//! Each scenario uses fresh session and request ids, so scenarios can share one store (and
//! one moto server) and run in parallel. They panic on failure, like assertions in a test.
//! Backends differ in how their raw contents are read, so scenarios that count items take a
//! [`StoreInspector`] as well.

use std::sync::Arc;
use std::time::{Duration, SystemTime};

use async_trait::async_trait;

use super::moto::unique_name;
use crate::message::{ChatMessage, Role, Usage};
use crate::store::{
    AuditRecord, ConversationStore, Exchange, Feedback, FeedbackStored, MemoryConversationStore,
    Rating, Recorded, StoreError,
};

/// Reads what a backend holds beneath the trait, for checks the trait cannot express.
#[async_trait]
pub trait StoreInspector: Send + Sync {
    /// How many conversation items (user and assistant messages) a session has.
    async fn turn_count(&self, session_id: &str) -> usize;
    /// The audit record stored under a request id, read back field by field.
    async fn audit(&self, request_id: &str) -> Option<AuditRecord>;
}

#[async_trait]
impl StoreInspector for MemoryConversationStore {
    async fn turn_count(&self, session_id: &str) -> usize {
        self.session_turns(session_id).len()
    }

    async fn audit(&self, request_id: &str) -> Option<AuditRecord> {
        self.audit_record(request_id)
    }
}

/// Defines one `#[tokio::test]` per scenario of this module, for a backend: each test
/// runs `let $f = $setup;` (it may `.await`), then the scenario on `$store` (an `Arc` of
/// the store) and, where it counts items, `$inspect` (a `&dyn StoreInspector`). Every
/// backend so runs every scenario, under the scenario's own name.
///
/// ```ignore
/// shared::store_scenario_tests! {
///     let store = Arc::new(MemoryConversationStore::new());
///     store: store.clone(),
///     inspect: store.as_ref(),
/// }
/// ```
#[macro_export]
macro_rules! store_scenario_tests {
    (let $f:ident = $setup:expr; store: $store:expr, inspect: $inspect:expr $(,)?) => {
        $crate::store_scenario_tests!(@store $f = $setup; $store;
            turns_come_back_in_order,
            latest_n_returns_the_newest_oldest_first,
            unknown_session_has_no_turns,
            sessions_are_isolated,
        );
        $crate::store_scenario_tests!(@inspect $f = $setup; $store; $inspect;
            exchange_writes_user_assistant_and_audit,
            failed_model_writes_user_turn_and_audit_only,
            same_request_twice_is_a_duplicate,
            append_audit_is_idempotent,
            mismatched_request_ids_are_rejected,
            feedback_replaces_and_unknown_is_refused,
        );
        #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
        async fn concurrent_same_request_writes_once() {
            let $f = $setup;
            $crate::testing::store_scenarios::concurrent_same_request_writes_once(
                $store, $inspect,
            )
            .await;
        }
    };
    (@store $f:ident = $setup:expr; $store:expr; $($name:ident),* $(,)?) => {$(
        #[tokio::test]
        async fn $name() {
            let $f = $setup;
            $crate::testing::store_scenarios::$name(&*$store).await;
        }
    )*};
    (@inspect $f:ident = $setup:expr; $store:expr; $inspect:expr; $($name:ident),* $(,)?) => {$(
        #[tokio::test]
        async fn $name() {
            let $f = $setup;
            $crate::testing::store_scenarios::$name(&*$store, $inspect).await;
        }
    )*};
}

/// A chat exchange with a fully populated audit record (every optional field set).
pub fn exchange(
    session_id: &str,
    request_id: &str,
    user: &str,
    assistant: Option<&str>,
    at: SystemTime,
) -> Exchange {
    let audit = AuditRecord {
        action: "chat".into(),
        session_id: Some(session_id.into()),
        request_id: request_id.into(),
        doc_ids: vec!["pub-partial-fc".into(), "proj-insightface".into()],
        model: Some("qwen-plus".into()),
        usage: Some(Usage {
            prompt_tokens: 812,
            completion_tokens: 64,
            total_tokens: 876,
        }),
        latency_ms: 1_234,
        outcome: if assistant.is_some() {
            "ok"
        } else {
            "model_error:timeout"
        }
        .into(),
        client_hash: Some("3f1c9a".into()),
        grounding: assistant.map(|_| crate::grounding::Grounding {
            sentences: 3,
            cited: 2,
            uncited_sentences: 1,
            unsupported_sentences: 1,
            invalid_citations: 0,
        }),
        question: Some(user.into()),
        hits: Some(2),
        // Exactly representable, so it reads back equal from DynamoDB's decimal.
        top_score: Some(7.25),
        feedback: None,
    };
    Exchange {
        session_id: session_id.into(),
        request_id: request_id.into(),
        user: user.into(),
        assistant: assistant.map(Into::into),
        audit,
        at,
    }
}

/// Writes `n` complete exchanges 1 ms apart; returns their messages in order.
async fn write_exchanges(
    store: &dyn ConversationStore,
    session: &str,
    n: usize,
) -> Vec<ChatMessage> {
    let start = SystemTime::now();
    let mut expected = Vec::new();
    for i in 0..n {
        let (q, a) = (format!("question {i}"), format!("answer {i}"));
        let at = start + Duration::from_millis(i as u64);
        let ex = exchange(session, &unique_name("req"), &q, Some(&a), at);
        assert_eq!(record(store, &ex).await, Recorded::Written);
        expected.push(ChatMessage::new(Role::User, q));
        expected.push(ChatMessage::new(Role::Assistant, a));
    }
    expected
}

async fn record(store: &dyn ConversationStore, ex: &Exchange) -> Recorded {
    match store.record_exchange(ex).await {
        Ok(r) => r,
        Err(e) => panic!("record_exchange failed: {e:?}"),
    }
}

async fn recent(store: &dyn ConversationStore, session: &str, limit: usize) -> Vec<ChatMessage> {
    match store.recent_turns(session, limit).await {
        Ok(turns) => turns,
        Err(e) => panic!("recent_turns failed: {e:?}"),
    }
}

/// Several exchanges come back in the order they happened, each question before its answer,
/// even when written out of order.
pub async fn turns_come_back_in_order(store: &dyn ConversationStore) {
    let session = unique_name("s");
    let start = SystemTime::now();
    // Written newest first: order must come from the timestamps, not from insertion.
    for i in (0..3u64).rev() {
        let at = start + Duration::from_millis(10 * i);
        let ex = exchange(
            &session,
            &unique_name("req"),
            &format!("q{i}"),
            Some(&format!("a{i}")),
            at,
        );
        assert_eq!(record(store, &ex).await, Recorded::Written);
    }
    let got: Vec<String> = recent(store, &session, 100)
        .await
        .into_iter()
        .map(|m| m.content)
        .collect();
    assert_eq!(got, ["q0", "a0", "q1", "a1", "q2", "a2"]);
}

/// `recent_turns(limit)` returns exactly the newest `limit` messages, oldest first.
pub async fn latest_n_returns_the_newest_oldest_first(store: &dyn ConversationStore) {
    let session = unique_name("s");
    let all = write_exchanges(store, &session, 4).await;
    for limit in [0, 1, 3, 4, 8] {
        assert_eq!(
            recent(store, &session, limit).await,
            all[all.len() - limit..],
            "limit {limit}"
        );
    }
    assert_eq!(
        recent(store, &session, 50).await,
        all,
        "limit above the count"
    );
}

/// A session never written to has no turns (and is not an error).
pub async fn unknown_session_has_no_turns(store: &dyn ConversationStore) {
    assert!(recent(store, &unique_name("never"), 10).await.is_empty());
}

/// One exchange writes the user message, the assistant message and the full audit record.
pub async fn exchange_writes_user_assistant_and_audit(
    store: &dyn ConversationStore,
    inspect: &dyn StoreInspector,
) {
    let session = unique_name("s");
    let request = unique_name("req");
    let ex = exchange(
        &session,
        &request,
        "请介绍一下 Partial FC",
        Some("Partial FC is ... [1]"),
        SystemTime::now(),
    );
    assert_eq!(record(store, &ex).await, Recorded::Written);
    assert_eq!(
        recent(store, &session, 10).await,
        [
            ChatMessage::new(Role::User, "请介绍一下 Partial FC"),
            ChatMessage::new(Role::Assistant, "Partial FC is ... [1]"),
        ]
    );
    assert_eq!(inspect.turn_count(&session).await, 2);
    assert_eq!(inspect.audit(&request).await, Some(ex.audit));
}

/// When the model failed, the user's message and the audit record (with the failure as its
/// outcome) are written, and no assistant message.
pub async fn failed_model_writes_user_turn_and_audit_only(
    store: &dyn ConversationStore,
    inspect: &dyn StoreInspector,
) {
    let session = unique_name("s");
    let request = unique_name("req");
    let mut ex = exchange(&session, &request, "hello?", None, SystemTime::now());
    ex.audit.model = None;
    ex.audit.usage = None;
    ex.audit.client_hash = None;
    ex.audit.doc_ids.clear();
    assert_eq!(record(store, &ex).await, Recorded::Written);
    assert_eq!(
        recent(store, &session, 10).await,
        [ChatMessage::new(Role::User, "hello?")]
    );
    assert_eq!(inspect.turn_count(&session).await, 1);
    let audit = inspect.audit(&request).await;
    assert_eq!(
        audit.as_ref().map(|a| a.outcome.as_str()),
        Some("model_error:timeout")
    );
    assert_eq!(
        audit,
        Some(ex.audit),
        "absent optional fields read back as absent"
    );
}

/// Recording the same request id again writes nothing, even if the payload differs (a retry
/// whose clock moved on), and says so.
pub async fn same_request_twice_is_a_duplicate(
    store: &dyn ConversationStore,
    inspect: &dyn StoreInspector,
) {
    let session = unique_name("s");
    let request = unique_name("req");
    let first = exchange(&session, &request, "q", Some("a"), SystemTime::now());
    assert_eq!(record(store, &first).await, Recorded::Written);
    assert_eq!(record(store, &first).await, Recorded::Duplicate);
    let mut retry = exchange(
        &session,
        &request,
        "q",
        Some("another answer"),
        SystemTime::now() + Duration::from_secs(1),
    );
    retry.audit.latency_ms = 99;
    assert_eq!(record(store, &retry).await, Recorded::Duplicate);
    assert_eq!(inspect.turn_count(&session).await, 2);
    assert_eq!(inspect.audit(&request).await, Some(first.audit));
    assert_eq!(recent(store, &session, 10).await.len(), 2);
}

/// Five concurrent writes of one request id: exactly one writes, the others see a duplicate
/// (or, on DynamoDB, may lose a transaction conflict, which is a retryable error).
pub async fn concurrent_same_request_writes_once(
    store: Arc<dyn ConversationStore>,
    inspect: &dyn StoreInspector,
) {
    let session = unique_name("s");
    let request = unique_name("req");
    let ex = exchange(&session, &request, "q", Some("a"), SystemTime::now());
    let mut tasks = tokio::task::JoinSet::new();
    for _ in 0..5 {
        let (store, ex) = (Arc::clone(&store), ex.clone());
        tasks.spawn(async move { store.record_exchange(&ex).await });
    }
    let mut written = 0;
    while let Some(joined) = tasks.join_next().await {
        match joined.expect("task panicked") {
            Ok(Recorded::Written) => written += 1,
            Ok(Recorded::Duplicate) => {}
            Err(e) if e.is_retryable() => {}
            Err(e) => panic!("unexpected error: {e:?}"),
        }
    }
    assert_eq!(written, 1);
    assert_eq!(inspect.turn_count(&session).await, 2);
    assert!(inspect.audit(&request).await.is_some());
}

/// Turns of one session never show up in another.
pub async fn sessions_are_isolated(store: &dyn ConversationStore) {
    let (a, b) = (unique_name("s"), unique_name("s"));
    let in_a = write_exchanges(store, &a, 2).await;
    let in_b = write_exchanges(store, &b, 1).await;
    assert_eq!(recent(store, &a, 10).await, in_a);
    assert_eq!(recent(store, &b, 10).await, in_b);
}

/// `append_audit` stores a non-chat record once; a second call with the same id keeps the first.
pub async fn append_audit_is_idempotent(
    store: &dyn ConversationStore,
    inspect: &dyn StoreInspector,
) {
    let request = unique_name("req");
    let rec = AuditRecord {
        action: "ingest".into(),
        request_id: request.clone(),
        doc_ids: vec!["pub-1".into()],
        latency_ms: 42,
        outcome: "ok".into(),
        client_hash: Some("abc".into()),
        ..AuditRecord::default()
    };
    store.append_audit(&rec).await.expect("first append");
    let again = AuditRecord {
        outcome: "conflict".into(),
        ..rec.clone()
    };
    store.append_audit(&again).await.expect("second append");
    assert_eq!(inspect.audit(&request).await, Some(rec));
}

/// An exchange whose audit record names another request is refused before anything is
/// written: the idempotency key must be one value.
pub async fn mismatched_request_ids_are_rejected(
    store: &dyn ConversationStore,
    inspect: &dyn StoreInspector,
) {
    let session = unique_name("s");
    let mut ex = exchange(
        &session,
        &unique_name("req"),
        "q",
        Some("a"),
        SystemTime::now(),
    );
    ex.audit.request_id = unique_name("other");
    let err = store
        .record_exchange(&ex)
        .await
        .expect_err("mismatch must fail");
    assert!(matches!(err, StoreError::Other { .. }), "{err:?}");
    assert_eq!(inspect.turn_count(&session).await, 0);
    assert!(inspect.audit(&ex.audit.request_id).await.is_none());
}

/// A rating lands on the answer's audit record; a second replaces it (a rating without a
/// comment drops the earlier comment); a rating of an unknown request, of another session's
/// answer or of a non-chat record writes nothing.
pub async fn feedback_replaces_and_unknown_is_refused(
    store: &dyn ConversationStore,
    inspect: &dyn StoreInspector,
) {
    let (session, req) = (unique_name("s"), unique_name("req"));
    let ex = exchange(
        &session,
        &req,
        "question",
        Some("answer"),
        SystemTime::now(),
    );
    assert_eq!(record(store, &ex).await, Recorded::Written);
    let down = Feedback {
        rating: Rating::Down,
        comment: Some("wrong year".into()),
        at_ms: 1_000,
    };
    let rate = |req: String, session: String, f: Feedback| async move {
        match store.record_feedback(&req, &session, &f).await {
            Ok(r) => r,
            Err(e) => panic!("record_feedback failed: {e:?}"),
        }
    };
    assert_eq!(
        rate(req.clone(), session.clone(), down.clone()).await,
        FeedbackStored::Stored
    );
    let stored = inspect.audit(&req).await.expect("audit record");
    assert_eq!(stored.feedback.as_ref(), Some(&down));
    assert_eq!(
        stored.question.as_deref(),
        Some("question"),
        "the rest is kept"
    );

    let up = Feedback {
        rating: Rating::Up,
        comment: None,
        at_ms: 2_000,
    };
    assert_eq!(
        rate(req.clone(), session.clone(), up.clone()).await,
        FeedbackStored::Stored
    );
    assert_eq!(
        inspect.audit(&req).await.expect("audit record").feedback,
        Some(up.clone())
    );

    assert_eq!(
        rate(unique_name("req"), session.clone(), down.clone()).await,
        FeedbackStored::UnknownRequest
    );
    assert_eq!(
        rate(req.clone(), unique_name("s"), down.clone()).await,
        FeedbackStored::UnknownRequest
    );
    assert_eq!(
        inspect.audit(&req).await.expect("audit record").feedback,
        Some(up)
    );

    let ingest = AuditRecord {
        action: "ingest".into(),
        request_id: unique_name("req"),
        session_id: Some(session.clone()),
        outcome: "ok".into(),
        ..AuditRecord::default()
    };
    store.append_audit(&ingest).await.expect("append");
    assert_eq!(
        rate(ingest.request_id.clone(), session, down).await,
        FeedbackStored::UnknownRequest
    );
    assert_eq!(
        inspect
            .audit(&ingest.request_id)
            .await
            .expect("ingest record")
            .feedback,
        None
    );
}
