//! DynamoDB faults through the chat handler: the real SDK talks to moto through a
//! fault-injecting proxy ([`FaultProxy`]), or to a port nobody listens on.
//!
//! The product rule under test: a store failure never costs the visitor the answer, and an
//! answered turn is never silently lost. Transient faults are retried until the exchange
//! lands, once; persistent ones end in one `unrecorded_turn` log line that writes the turn
//! back exactly; a history read that fails is answered without history; and an unreachable
//! or silent DynamoDB costs a bounded wait. The store budgets are the chat configuration's,
//! small here so that outages cost the tests about a second each; what the tests check
//! about time are lower bounds (a timer cannot fire early) and which budget cut a call
//! short (the error says so), never how quickly a loaded machine got there.
#![allow(clippy::unwrap_used)] // test helpers may panic on broken fixtures

use crate::common;

use std::sync::Arc;
use std::time::{Duration, Instant};

use common::*;
use serde_json::{json, Value};
use shared::chat::{idempotency_key, StoreBudgets};
use shared::config::AWS_MAX_ATTEMPTS;
use shared::store::create_tables;
use shared::testing::fault_proxy::{Fault, Match, Times};
use shared::testing::moto::unique_name;
use shared::testing::{FaultProxy, MotoServer};
use shared::{ChatMessage, ConversationStore, DynamoConversationStore, Exchange, Recorded, Role};

const TTL: Duration = Duration::from_secs(3600);

/// Budgets that leave room for two rounds of the SDK's own attempts (its throttling
/// backoff is 100 ms, doubling), so that the chat's retry shows, at a third of the
/// production record budget.
const RETRYING: StoreBudgets = StoreBudgets {
    history: Duration::from_secs(1),
    record: Duration::from_secs(1),
};

/// Budgets for a DynamoDB that never answers: only the cut-off matters.
const SHORT: StoreBudgets = StoreBudgets {
    history: Duration::from_millis(200),
    record: Duration::from_millis(300),
};

/// moto with the two tables, a proxy in front of it, a chat state whose store goes through
/// the proxy, and a store that reads the tables directly.
struct Rig {
    moto: MotoServer,
    proxy: FaultProxy,
    tables: (String, String),
    state: chat::AppState,
    direct: DynamoConversationStore,
    budgets: StoreBudgets,
}

/// The rig, its chat state answering within `budgets`.
async fn rig(budgets: StoreBudgets) -> Rig {
    let moto = MotoServer::shared();
    let tables = (unique_name("conversations"), unique_name("audit"));
    let client = moto.dynamodb_client();
    create_tables(&client, &tables.0, &tables.1).await.unwrap();
    let proxy = FaultProxy::start(&moto).await;
    let store: Arc<dyn ConversationStore> = Arc::new(DynamoConversationStore::new(
        proxy.dynamodb_client(&moto),
        &tables.0,
        &tables.1,
        TTL,
    ));
    let direct = DynamoConversationStore::new(client, &tables.0, &tables.1, TTL);
    Rig {
        state: state_tuned(None, store, |c| c.store_budgets = budgets),
        moto,
        proxy,
        tables,
        direct,
        budgets,
    }
}

impl Rig {
    /// A chat state whose store talks to DynamoDB at `endpoint` with moto's settings.
    fn state_at(&self, endpoint: &str) -> chat::AppState {
        let sdk = self
            .moto
            .sdk_config()
            .into_builder()
            .endpoint_url(endpoint)
            .build();
        let store = DynamoConversationStore::new(
            aws_sdk_dynamodb::Client::new(&sdk),
            &self.tables.0,
            &self.tables.1,
            TTL,
        );
        let budgets = self.budgets;
        state_tuned(None, Arc::new(store), |c| c.store_budgets = budgets)
    }

    /// The stored turns of the test session `session` (signed as the server issued it).
    async fn turns(&self, session: &str) -> Vec<ChatMessage> {
        let issued = sid(&self.state, session);
        self.direct.recent_turns(&issued, 50).await.unwrap()
    }

    /// The stored audit record's outcome, if there is one.
    async fn audit_outcome(&self, request_id: &str) -> Option<String> {
        let item = self
            .moto
            .dynamodb_client()
            .get_item()
            .table_name(&self.tables.1)
            .key(
                "request_id",
                aws_sdk_dynamodb::types::AttributeValue::S(request_id.into()),
            )
            .consistent_read(true)
            .send()
            .await
            .unwrap();
        item.item().map(|i| i["outcome"].as_s().unwrap().to_owned())
    }
}

fn ask(question: &str, session: &str, request: &str, stream: bool) -> String {
    json!({"message": question, "session_id": session, "request_id": request, "stream": stream})
        .to_string()
}

fn pair(question: &str, answer: &str) -> Vec<ChatMessage> {
    vec![
        ChatMessage::new(Role::User, question),
        ChatMessage::new(Role::Assistant, answer),
    ]
}

impl Logs {
    /// The `fields` of every `unrecorded_turn` line.
    fn unrecorded(&self) -> Vec<Value> {
        self.lines("unrecorded_turn")
    }

    /// The errors of every history read given up on.
    fn history_failures(&self) -> Vec<String> {
        self.lines("cannot read the session's history; answering without it")
            .iter()
            .map(|l| l["error"].as_str().unwrap().to_owned())
            .collect()
    }
}

#[tokio::test]
async fn transient_write_faults_are_retried_until_the_turn_lands_exactly_once() {
    // The production budgets: the write must land, however slow the machine.
    let r = rig(StoreBudgets::default()).await;
    let (logs, _guard) = Logs::capture();
    let write = Match::dynamodb("TransactWriteItems");
    // Four faults outlast the SDK's own three attempts, so the chat's retry is what lands
    // the write. A lost response means the first write did land: the retry must not
    // record it again.
    let cases = [
        (Fault::Throttle, 4, false),
        (Fault::Status(500), 4, true),
        (Fault::Drop, 4, false),
        (Fault::LoseResponse, 1, true),
    ];
    for (i, (fault, times, stream)) in cases.into_iter().enumerate() {
        let (session, request) = (format!("s-transient-{i}"), format!("r-transient-{i}"));
        let question = "What is Partial FC?";
        r.proxy.inject(write.clone(), fault, Times::Next(times));
        let faulted = r.proxy.faulted(&write);
        let body = post(&ask(question, &session, &request, stream));
        let answer = if stream {
            let s = call_stream(&r.state, body, None).await;
            assert_eq!(s.names().last(), Some(&"done"), "{fault:?}: {}", s.raw);
            s.text()
        } else {
            let (status, body, _) = call_json(&r.state, body).await;
            assert_eq!(status, 200, "{fault:?}: {body}");
            body["reply"].as_str().unwrap().to_owned()
        };
        assert_eq!(
            r.proxy.faulted(&write) - faulted,
            times,
            "{fault:?}: faults injected"
        );
        assert_eq!(
            r.turns(&session).await,
            pair(question, &answer),
            "{fault:?}"
        );
        assert_eq!(
            r.audit_outcome(&idempotency_key(
                &request,
                &sid(&r.state, &session),
                question
            ))
            .await
            .as_deref(),
            Some("offline"),
            "{fault:?}"
        );
    }
    assert!(logs.unrecorded().is_empty(), "{:?}", logs.unrecorded());
}

#[tokio::test]
async fn persistent_throttling_delivers_the_answer_and_logs_a_turn_that_replays_exactly() {
    let r = rig(RETRYING).await;
    let (logs, _guard) = Logs::capture();
    let write = Match::dynamodb("TransactWriteItems");
    r.proxy
        .inject(write.clone(), Fault::Throttle, Times::Always);
    let question = "What is Partial FC?";

    // JSON: the answer comes back once the record gives up.
    let (status, body, _) =
        call_json(&r.state, post(&ask(question, "s-lost", "r-lost", false))).await;
    assert_eq!(status, 200, "{body}");
    let reply = body["reply"].as_str().unwrap().to_owned();
    assert!(
        r.proxy.seen(&write) > AWS_MAX_ATTEMPTS as usize,
        "retried beyond the SDK's attempts: {}",
        r.proxy.seen(&write)
    );
    assert!(r.turns("s-lost").await.is_empty());

    // Stream: `done` reaches the visitor while the record is still being retried (only the
    // JSON turn's loss is logged by then); the stream ends once the record gives up.
    let mut lost_at_done = None;
    let s = call_stream_watching(
        &r.state,
        post(&ask(question, "s-lost-stream", "r-lost-stream", true)),
        None,
        |event| {
            if event.name == "done" {
                lost_at_done = Some(logs.unrecorded().len());
            }
        },
    )
    .await;
    assert_eq!(s.names().last(), Some(&"done"), "{}", s.raw);
    assert_eq!(lost_at_done, Some(1), "turns lost when `done` arrived");

    // One structured line per lost turn, with everything needed to write it back.
    let lines = logs.unrecorded();
    assert_eq!(lines.len(), 2, "{lines:?}");
    let mut replayed = Vec::new();
    for (line, (session, request, answer)) in lines.iter().zip([
        ("s-lost", "r-lost", reply.as_str()),
        ("s-lost-stream", "r-lost-stream", s.text().as_str()),
    ]) {
        assert_eq!(line["session_id"], sid(&r.state, session));
        assert_eq!(
            line["request_id"],
            idempotency_key(request, &sid(&r.state, session), question)
        );
        assert_eq!(line["outcome"], "offline");
        assert!(
            line["error"].as_str().unwrap().contains("throttled"),
            "{line}"
        );
        let exchange: Exchange = serde_json::from_str(line["exchange"].as_str().unwrap()).unwrap();
        assert_eq!(
            (exchange.user.as_str(), exchange.assistant.as_deref()),
            (question, Some(answer))
        );
        replayed.push((exchange, session.to_owned(), answer.to_owned()));
    }

    // Once DynamoDB is back, the logged exchange writes the turn back exactly, once.
    r.proxy.clear();
    for (exchange, session, answer) in &replayed {
        assert_eq!(
            r.direct.record_exchange(exchange).await.unwrap(),
            Recorded::Written
        );
        assert_eq!(
            r.direct.record_exchange(exchange).await.unwrap(),
            Recorded::Duplicate
        );
        assert_eq!(r.turns(session).await, pair(question, answer));
        assert_eq!(
            r.audit_outcome(&exchange.request_id).await.as_deref(),
            Some("offline")
        );
    }
}

#[tokio::test]
async fn an_unreachable_or_silent_dynamodb_costs_a_bounded_wait_and_loses_nothing() {
    let r = rig(SHORT).await;
    let (logs, _guard) = Logs::capture();
    let question = "What is Partial FC?";

    // Nothing listens: every connection is refused, history and record alike.
    let closed = {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        format!("http://{}", listener.local_addr().unwrap())
    };
    let state = r.state_at(&closed);
    let (status, body, _) = call_json(
        &state,
        post(&ask(question, "s-refused", "r-refused", false)),
    )
    .await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(body["budget"]["history_kept"], 0);

    // A black hole: every request is read and never answered, far longer than the SDK's
    // per-attempt timeout (5 s) would wait. History and record are each cut at their
    // budget (the errors say so), the history before anything is sent.
    r.proxy.inject(Match::Any, Fault::Stall, Times::Always);
    let start = Instant::now();
    let s = call_stream(
        &r.state,
        post(&ask(question, "s-silent", "r-silent", true)),
        None,
    )
    .await;
    let took = start.elapsed();
    assert_eq!(s.names().last(), Some(&"done"), "{}", s.raw);
    let sources_at = s.first("sources").at;
    assert!(sources_at >= SHORT.history, "sources after {sources_at:?}");
    assert!(took >= SHORT.history + SHORT.record, "took {took:?}");
    let history = logs.history_failures();
    assert!(
        history
            .last()
            .is_some_and(|e| e.contains("no answer within the time budget")),
        "{history:?}"
    );

    let lines = logs.unrecorded();
    let ids: Vec<&str> = lines
        .iter()
        .map(|l| l["request_id"].as_str().unwrap())
        .collect();
    assert_eq!(
        ids,
        [
            idempotency_key("r-refused", &sid(&r.state, "s-refused"), question),
            idempotency_key("r-silent", &sid(&r.state, "s-silent"), question),
        ]
    );
    assert!(
        lines[1]["error"]
            .as_str()
            .unwrap()
            .contains("no answer within the time budget"),
        "{}",
        lines[1]
    );
    let exchange: Exchange = serde_json::from_str(lines[1]["exchange"].as_str().unwrap()).unwrap();
    assert_eq!(exchange.assistant.as_deref(), Some(s.text().as_str()));
}

#[tokio::test]
async fn a_failing_history_query_is_answered_without_history_and_still_recorded() {
    let r = rig(RETRYING).await;
    let first = "请介绍一下 Partial FC";
    let (status, _, _) = call_json(&r.state, post(&ask(first, "s-history", "r-h1", false))).await;
    assert_eq!(status, 200);
    assert_eq!(r.turns("s-history").await.len(), 2);

    let query = Match::dynamodb("Query");
    r.proxy
        .inject(query.clone(), Fault::Status(500), Times::Always);
    let follow_up = "它的代码在哪里？";
    let (status, body, _) =
        call_json(&r.state, post(&ask(follow_up, "s-history", "r-h2", false))).await;
    assert_eq!(status, 200, "{body}");
    // Without the earlier turn the follow-up cannot be resolved, and no history is sent.
    assert_eq!(body["budget"]["history_kept"], 0);
    assert_eq!(body["retrieval"]["followup"], false);
    assert!(
        r.proxy.seen(&query) > AWS_MAX_ATTEMPTS as usize,
        "retried beyond the SDK's attempts: {}",
        r.proxy.seen(&query)
    );
    // The write does not depend on the read: the turn is stored.
    r.proxy.clear();
    let turns = r.turns("s-history").await;
    assert_eq!(turns.len(), 4);
    assert_eq!(turns[2], ChatMessage::new(Role::User, follow_up));
}
