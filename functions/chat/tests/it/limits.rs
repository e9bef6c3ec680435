//! Abuse and cost limits through the chat handler: per-client and per-session rate limits
//! (429 with `Retry-After`, keyed by the function URL's source address, never by a header),
//! and the daily token budget (offline answers once it is used up). The DynamoDB tests run
//! against a moto server, whose conditional updates are atomic like DynamoDB's (see
//! `infra/moto_serial.py`), and check that concurrent requests are limited exactly.
#![allow(clippy::unwrap_used)] // test helpers may panic on broken fixtures

use crate::common;

use std::collections::HashMap;
use std::sync::Arc;
use std::time::SystemTime;

use chat::AppState;
use common::*;
use serde_json::{json, Value};
use shared::chat::ChatConfig;
use shared::limits::{
    create_limits_table, Counters, DynamoCounters, FallbackCounters, MemoryCounters, TokenBudget,
};
use shared::testing::fault_proxy::{Fault, Match, Times};
use shared::testing::moto::unique_name;
use shared::testing::{Behavior, FakeLlm, FaultProxy, MotoServer};
use shared::{ConversationStore, KbHandle, LlmClient, MemoryConversationStore, OpenAiCompatClient};

fn chat_config(vars: &[(&str, &str)]) -> ChatConfig {
    let vars: HashMap<&str, &str> = vars.iter().copied().collect();
    ChatConfig::from_lookup(|k| vars.get(k).map(|v| v.to_string())).unwrap()
}

/// A state with the given limits over `counters`, answering with `fake` (offline when
/// `None`), recording into a memory store.
fn state(
    fake: Option<&FakeLlm>,
    vars: &[(&str, &str)],
    counters: Arc<dyn Counters>,
) -> (AppState, Arc<MemoryConversationStore>) {
    let llm =
        fake.map(|f| Arc::new(OpenAiCompatClient::new(f.config()).unwrap()) as Arc<dyn LlmClient>);
    let store = Arc::new(MemoryConversationStore::new());
    let mut state = AppState::new(
        KbHandle::fixed(index()),
        llm,
        store.clone() as Arc<dyn ConversationStore>,
        &config(),
        chat_config(vars),
    );
    state.chat = state
        .chat
        .with_counters(counters, shared::Secret::new("test-salt"));
    (state, store)
}

/// A chat POST from `ip` (the function URL's `sourceIp`) with the given body fields and
/// extra headers.
fn from_ip(ip: &str, body: Value, headers: &[(&str, &str)]) -> lambda_http::Request {
    let mut ev: Value = serde_json::from_str(POST_EVENT).unwrap();
    ev["requestContext"]["http"]["sourceIp"] = json!(ip);
    let mut b = json!({"message": "What is InsightFace?"});
    for (k, v) in body.as_object().unwrap() {
        b[k] = v.clone();
    }
    let text = b.to_string();
    ev["headers"]["content-length"] = json!(text.len().to_string());
    ev["body"] = json!(text);
    for (k, v) in headers {
        ev["headers"][*k] = json!(v);
    }
    lambda_http::request::from_str(&ev.to_string()).unwrap()
}

fn memory() -> Arc<dyn Counters> {
    Arc::new(MemoryCounters::default())
}

#[tokio::test]
async fn a_client_over_its_limit_gets_429_with_retry_after_and_reaches_neither_model_nor_store() {
    let fake = FakeLlm::start(vec![Behavior::Echo]).await;
    let (state, store) = state(Some(&fake), &[("RATE_LIMIT_PER_MINUTE", "2")], memory());
    let a = "198.51.100.7";
    for n in 1..=2 {
        let (status, body, _) = call_json(
            &state,
            from_ip(a, json!({"request_id": format!("r-{n}")}), &[]),
        )
        .await;
        assert_eq!(status, 200, "{body}");
    }
    let (status, body, headers) =
        call_json(&state, from_ip(a, json!({"request_id": "r-3"}), &[])).await;
    assert_eq!(status, 429, "{body}");
    assert_eq!(body["error"]["code"], "rate_limited");
    let message = body["error"]["message"].as_str().unwrap();
    assert!(message.contains("client"), "{message}");
    let retry: u64 = headers["retry-after"].to_str().unwrap().parse().unwrap();
    assert!((1..=60).contains(&retry), "Retry-After {retry}");
    assert_eq!(headers["access-control-allow-origin"], ORIGIN);
    assert_eq!(
        fake.request_count(),
        2,
        "the refused request never reached the model"
    );
    assert!(
        audit_for(&store, "r-3").is_none(),
        "a refused request writes nothing"
    );
    assert_eq!(store.audit_records().len(), 2);

    // Another address has its own allowance.
    let (status, _, _) = call_json(
        &state,
        from_ip("198.51.100.8", json!({"request_id": "r-4"}), &[]),
    )
    .await;
    assert_eq!(status, 200);
}

#[tokio::test]
async fn ipv6_clients_are_limited_by_network_not_by_address() {
    // Before: each address of a /64 had its own bucket, so one client had 2^64 of them.
    let (by64, store) = state(None, &[("RATE_LIMIT_PER_MINUTE", "2")], memory());
    let in_net = ["2001:db8:7:1::1", "2001:db8:7:1::2", "2001:db8:7:1:ffff::9"];
    let statuses: Vec<u16> = {
        let mut v = Vec::new();
        for (n, ip) in in_net.iter().enumerate() {
            let body = json!({"request_id": format!("v6-{n}")});
            v.push(call_json(&by64, from_ip(ip, body, &[])).await.0);
        }
        v
    };
    assert_eq!(statuses, [200, 200, 429], "one /64, one allowance");
    let (status, _, _) = call_json(
        &by64,
        from_ip("2001:db8:7:2::1", json!({"request_id": "v6-next"}), &[]),
    )
    .await;
    assert_eq!(status, 200, "the next /64 is another client");
    let hashes: Vec<_> = store
        .audit_records()
        .into_iter()
        .map(|r| r.client_hash)
        .collect();
    assert_eq!(hashes[0], hashes[1], "the audit names the network too");
    assert_ne!(hashes[0], hashes[2]);

    // A site whose visitors each get a /56 can say so.
    let (by56, _) = state(
        None,
        &[("RATE_LIMIT_PER_MINUTE", "1"), ("CLIENT_IPV6_PREFIX", "56")],
        memory(),
    );
    let (first, _, _) = call_json(&by56, from_ip("2001:db8:7:100::1", json!({}), &[])).await;
    let (second, _, _) = call_json(&by56, from_ip("2001:db8:7:1ff::1", json!({}), &[])).await;
    assert_eq!((first, second), (200, 429));
}

#[tokio::test]
async fn forwarding_headers_cannot_reset_the_client_limit() {
    let (state, _) = state(None, &[("RATE_LIMIT_PER_MINUTE", "1")], memory());
    let (status, _, _) = call_json(&state, from_ip("198.51.100.7", json!({}), &[])).await;
    assert_eq!(status, 200);
    for (n, spoofed) in ["10.0.0.1", "192.0.2.1, 198.51.100.9"].iter().enumerate() {
        let headers = [("x-forwarded-for", *spoofed), ("x-real-ip", *spoofed)];
        let req = from_ip(
            "198.51.100.7",
            json!({"request_id": format!("s-{n}")}),
            &headers,
        );
        let (status, body, _) = call_json(&state, req).await;
        assert_eq!(
            status, 429,
            "X-Forwarded-For {spoofed} must not count: {body}"
        );
    }
}

#[tokio::test]
async fn a_session_is_limited_across_addresses_and_streams_are_refused_before_they_start() {
    let (state, _) = state(None, &[("RATE_LIMIT_PER_MINUTE", "1")], memory());
    let session = "s-0123456789abcdef0123456789abcdef";
    let (status, _, _) = call_json(
        &state,
        from_ip("198.51.100.1", json!({"session_id": session}), &[]),
    )
    .await;
    assert_eq!(status, 200);
    let req = from_ip(
        "198.51.100.2",
        json!({"session_id": session, "stream": true, "request_id": "r-2"}),
        &[],
    );
    let (status, body, headers) = call_json(&state, req).await;
    assert_eq!(status, 429, "{body}");
    assert_eq!(
        headers["content-type"], "application/json",
        "a plain 429, no stream"
    );
    assert!(
        body["error"]["message"]
            .as_str()
            .unwrap()
            .contains("session"),
        "{body}"
    );
}

#[tokio::test]
async fn zero_turns_the_rate_limit_off() {
    let (state, _) = state(None, &[("RATE_LIMIT_PER_MINUTE", "0")], memory());
    for n in 0..30 {
        let req = from_ip("198.51.100.7", json!({"request_id": format!("r-{n}")}), &[]);
        assert_eq!(call_json(&state, req).await.0, 200);
    }
}

/// Uses up what is left of today's budget, as other instances would.
async fn spend_the_rest(counters: &Arc<dyn Counters>, daily: u64) {
    let other_instance = TokenBudget::new(counters.clone(), daily, 0);
    let now = SystemTime::now();
    let used = other_instance.status(now).await.unwrap().used;
    let rest = other_instance.reserve(daily - used, now).await.unwrap();
    assert!(rest.is_some(), "the rest of the budget fits");
}

#[tokio::test]
async fn an_exhausted_daily_budget_answers_offline_without_calling_the_model() {
    let fake = FakeLlm::start(vec![Behavior::Echo]).await;
    let counters = memory();
    let daily = 100_000;
    let (state, store) = state(
        Some(&fake),
        &[
            ("DAILY_TOKEN_BUDGET", "100000"),
            ("RATE_LIMIT_PER_MINUTE", "0"),
        ],
        counters.clone(),
    );
    // Within budget: the model answers and its reported usage is what the budget counts.
    let (status, body, _) = call_json(
        &state,
        from_ip("198.51.100.7", json!({"request_id": "r-1"}), &[]),
    )
    .await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(body["offline"], false);
    let (_, health, _) = call_json(&state, event("GET", None, &[])).await;
    let limits = &health["limits"];
    assert_eq!(
        limits["budget"]["used"], body["usage"]["total_tokens"],
        "{health}"
    );
    assert_eq!(limits["budget"]["daily_limit"], daily);
    assert_eq!(limits["budget"]["exhausted"], false);
    assert_eq!(
        limits["max_tokens"], 256,
        "the answer cap (the fake client's maximum)"
    );
    assert_eq!(limits["counters"], "memory");

    spend_the_rest(&counters, daily).await;
    let (status, body, _) = call_json(
        &state,
        from_ip(
            "198.51.100.7",
            json!({"request_id": "r-2", "message": "InsightFace 是什么？"}),
            &[],
        ),
    )
    .await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(body["offline"], true);
    assert_eq!(body["offline_reason"], "daily_budget");
    assert_eq!(body["model"], "offline");
    let reply = body["reply"].as_str().unwrap();
    assert!(
        reply.starts_with("（离线模式：今日的语言模型用量已达上限"),
        "{reply}"
    );
    assert!(!body["sources"].as_array().unwrap().is_empty(), "{body}");
    assert_eq!(
        fake.request_count(),
        1,
        "the model is not called over budget"
    );
    assert_eq!(
        audit_for(&store, "r-2").unwrap().outcome,
        "offline:daily_budget"
    );

    // The stream says the same in its done event.
    let req = from_ip(
        "198.51.100.7",
        json!({"request_id": "r-3", "stream": true}),
        &[],
    );
    let streamed = call_stream(&state, req, None).await;
    assert_eq!(streamed.names().first(), Some(&"sources"));
    let done = &streamed.first("done").data;
    assert_eq!(done["offline_reason"], "daily_budget", "{done}");
    assert!(
        streamed.text().starts_with("(Offline mode: today's budget"),
        "{}",
        streamed.text()
    );
    assert_eq!(fake.request_count(), 1);

    let (_, health, _) = call_json(&state, event("GET", None, &[])).await;
    assert_eq!(health["limits"]["budget"]["exhausted"], true, "{health}");
}

#[tokio::test]
async fn a_budget_that_cannot_fit_one_call_never_calls_the_model() {
    let fake = FakeLlm::start(vec![Behavior::Echo]).await;
    let (state, store) = state(Some(&fake), &[("DAILY_TOKEN_BUDGET", "100")], memory());
    let (status, body, _) = call_json(&state, from_ip("198.51.100.7", json!({}), &[])).await;
    assert_eq!(
        (status, &body["offline_reason"]),
        (200, &json!("daily_budget")),
        "{body}"
    );
    assert_eq!(fake.request_count(), 0);
    assert_eq!(store.audit_records()[0].usage, None);
}

/// A limits table on a fresh moto server.
async fn dynamo_counters(moto: &MotoServer) -> Arc<dyn Counters> {
    let client = moto.dynamodb_client();
    let table = unique_name("limits");
    create_limits_table(&client, &table).await.unwrap();
    Arc::new(DynamoCounters::new(client, table))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn concurrent_requests_at_a_dynamodb_limit_admit_exactly_the_limit() {
    let moto = MotoServer::shared();
    let counters = dynamo_counters(&moto).await;
    const LIMIT: usize = 7;
    const REQUESTS: usize = 40;
    // Two instances sharing the table, each with the salt the table gives it.
    let mut instances = Vec::new();
    for _ in 0..2 {
        let (mut s, store) = state(None, &[("RATE_LIMIT_PER_MINUTE", "7")], counters.clone());
        let salt = shared::limits::client_salt(None, counters.as_ref())
            .await
            .unwrap();
        s.chat = s.chat.with_counters(counters.clone(), salt);
        instances.push((Arc::new(s), store));
    }
    let tasks: Vec<_> = (0..REQUESTS)
        .map(|n| {
            let state = instances[n % 2].0.clone();
            tokio::spawn(async move {
                let req = from_ip("198.51.100.7", json!({"request_id": format!("r-{n}")}), &[]);
                call_json(&state, req).await.0
            })
        })
        .collect();
    let mut statuses = Vec::new();
    for t in tasks {
        statuses.push(t.await.unwrap());
    }
    let ok = statuses.iter().filter(|s| **s == 200).count();
    let limited = statuses.iter().filter(|s| **s == 429).count();
    assert_eq!((ok, limited), (LIMIT, REQUESTS - LIMIT), "{statuses:?}");
    let recorded: usize = instances
        .iter()
        .map(|(_, store)| store.audit_records().len())
        .sum();
    assert_eq!(
        recorded, LIMIT,
        "one turn per admitted request, none for refused ones"
    );
}

/// The health report.
async fn health(state: &AppState) -> Value {
    let (status, body, _) = call_json(state, event("GET", None, &[])).await;
    assert_eq!(status, 200, "{body}");
    body
}

#[tokio::test]
async fn an_unreachable_or_missing_limits_store_falls_back_to_per_instance_limits() {
    // Before: every visitor got 503 while DynamoDB was down, and health took 18 s.
    let moto = MotoServer::shared();
    // A port nothing listens on: every attempt is refused, as when DynamoDB is unreachable.
    let closed = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap();
    let config = aws_sdk_dynamodb::config::Builder::from(&moto.sdk_config())
        .endpoint_url(format!("http://{closed}"))
        .build();
    let stores: [(&str, Arc<dyn Counters>); 2] = [
        (
            "unreachable",
            Arc::new(FallbackCounters::new(Arc::new(DynamoCounters::new(
                aws_sdk_dynamodb::Client::from_conf(config),
                "limits",
            )))),
        ),
        // A table that does not exist stands in for a misconfigured or deleted one.
        (
            "missing table",
            Arc::new(FallbackCounters::new(Arc::new(DynamoCounters::new(
                moto.dynamodb_client(),
                "no-such-table",
            )))),
        ),
    ];
    for (what, counters) in stores {
        let (state, store) = state(None, &[("RATE_LIMIT_PER_MINUTE", "2")], counters);
        let before = health(&state).await;
        assert_eq!(before["status"], "degraded", "{what}: {before}");
        assert_eq!(before["limits"]["counters"], "memory-fallback", "{what}");
        let mut statuses = Vec::new();
        for n in 0..3 {
            let req = from_ip("198.51.100.7", json!({"request_id": format!("f-{n}")}), &[]);
            statuses.push(call_json(&state, req).await.0);
        }
        assert_eq!(
            statuses,
            [200, 200, 429],
            "{what}: answered, and limited per instance"
        );
        assert_eq!(store.audit_records().len(), 2, "{what}");
    }
}

/// Counters on a moto table reached through a fault-injecting proxy.
async fn proxied_counters(moto: &MotoServer, proxy: &FaultProxy) -> Arc<dyn Counters> {
    let table = unique_name("limits");
    create_limits_table(&moto.dynamodb_client(), &table)
        .await
        .unwrap();
    Arc::new(DynamoCounters::new(proxy.dynamodb_client(moto), table))
}

#[tokio::test]
async fn throttled_failing_or_silent_limit_counters_fall_back_and_health_says_so() {
    let moto = MotoServer::shared();
    for fault in [Fault::Throttle, Fault::Status(500), Fault::Stall] {
        let proxy = FaultProxy::start(&moto).await;
        // As `open_counters` wraps the deployed table.
        let counters = Arc::new(FallbackCounters::new(proxied_counters(&moto, &proxy).await));
        let fake = FakeLlm::start(vec![Behavior::Echo]).await;
        let (state, store) = state(
            Some(&fake),
            &[
                ("RATE_LIMIT_PER_MINUTE", "5"),
                ("DAILY_TOKEN_BUDGET", "100000"),
            ],
            counters,
        );
        let body = health(&state).await;
        assert_eq!(body["status"], "ok", "{fault:?}: {body}");
        proxy.inject(Match::Any, fault, Times::Always);

        // The first check after the store fails waits at most PRIMARY_TIMEOUT (a bound the
        // unit tests of `limits::fallback` check on paused time), then this instance counts
        // in memory, and health says so.
        let body = health(&state).await;
        assert_eq!(body["status"], "degraded", "{fault:?}: {body}");
        assert_eq!(body["limits"]["counters"], "memory-fallback", "{fault:?}");
        let req = from_ip("198.51.100.7", json!({"request_id": "r-1"}), &[]);
        let (status, body, _) = call_json(&state, req).await;
        assert_eq!(status, 200, "{fault:?}: {body}");
        assert_eq!(
            body["offline"], false,
            "{fault:?}: metered per instance, answered"
        );
        assert_eq!(fake.request_count(), 1);
        assert!(audit_for(&store, "r-1").is_some());
        assert!(
            budget_used(&state).await > 0,
            "{fault:?}: spend is still counted"
        );
    }
}

/// Today's budget use as the health output reports it.
async fn budget_used(state: &AppState) -> u64 {
    let (_, health, _) = call_json(state, event("GET", None, &[])).await;
    health["limits"]["budget"]["used"].as_u64().unwrap()
}

#[tokio::test]
async fn a_call_whose_usage_never_arrives_is_charged_its_whole_reservation() {
    let vars = [
        ("DAILY_TOKEN_BUDGET", "100000"),
        ("RATE_LIMIT_PER_MINUTE", "0"),
    ];
    // The prompt's ceiling, from an identical request that completes.
    let fake = FakeLlm::start(vec![Behavior::Echo]).await;
    let (app, _) = state(Some(&fake), &vars, memory());
    let (_, body, _) = call_json(&app, from_ip("198.51.100.7", json!({}), &[])).await;
    let prompt = body["budget"]["estimated_prompt_tokens"].as_u64().unwrap();

    // The stream breaks before the provider reports usage: an estimate of what came back
    // could be fooled, so the reservation (prompt ceiling + answer cap) is charged.
    let cut = FakeLlm::start(vec![Behavior::CloseMidStream {
        chunks: vec!["Insight".into(), "Face".into()],
    }])
    .await;
    let (app, store) = state(Some(&cut), &vars, memory());
    let req = from_ip("198.51.100.7", json!({"stream": true}), &[]);
    let streamed = call_stream(&app, req, None).await;
    assert!(
        streamed.names().contains(&"error"),
        "{:?}",
        streamed.names()
    );
    assert_eq!(budget_used(&app).await, prompt + 256);
    assert_eq!(store.audit_records().len(), 1);
}

#[tokio::test]
async fn a_call_the_provider_refused_costs_nothing() {
    let refusing = FakeLlm::start(vec![Behavior::Status {
        code: 500,
        body: "{\"error\": \"overloaded\"}".into(),
        retry_after: None,
    }])
    .await;
    let (app, store) = state(
        Some(&refusing),
        &[
            ("DAILY_TOKEN_BUDGET", "100000"),
            ("RATE_LIMIT_PER_MINUTE", "0"),
        ],
        memory(),
    );
    let (status, body, _) = call_json(&app, from_ip("198.51.100.7", json!({}), &[])).await;
    assert_eq!(status, 502, "{body}");
    assert_eq!(
        budget_used(&app).await,
        0,
        "nothing was generated or billed"
    );
    assert_eq!(
        store.audit_records()[0].outcome,
        "model_error:status_500",
        "the failure is still recorded"
    );
}
