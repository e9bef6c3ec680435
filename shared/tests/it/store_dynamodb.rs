//! The DynamoDB conversation store against a moto server (`infra/venv.sh` installs it).
//!
//! The tests share the test binary's server and create uniquely named tables; a missing
//! moto fails them. Run: `infra/venv.sh && cargo test -p shared --all-features --test it
//! store_dynamodb`.

use std::collections::HashMap;
use std::net::{Ipv4Addr, TcpListener};
use std::sync::Arc;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use async_trait::async_trait;
use aws_sdk_dynamodb::config::{BehaviorVersion, Credentials, Region};
use aws_sdk_dynamodb::types::{AttributeValue, Select, TimeToLiveStatus};
use aws_sdk_dynamodb::Client;
use shared::grounding::Grounding;
use shared::store::create_tables;
use shared::store::{Feedback, Rating};
use shared::testing::moto::unique_name;
use shared::testing::store_scenarios::{self as scenario, StoreInspector};
use shared::testing::MotoServer;
use shared::{
    AuditRecord, ConversationStore, DynamoConversationStore, Recorded, StoreError, Usage,
};

const TTL: Duration = Duration::from_secs(30 * 24 * 3600);

/// A moto server with a fresh pair of tables and a store on them.
struct Fixture {
    moto: MotoServer,
    client: Client,
    conversations: String,
    audit: String,
    store: Arc<DynamoConversationStore>,
}

impl Fixture {
    /// On the test binary's shared server.
    async fn start() -> Fixture {
        Self::on(MotoServer::shared()).await
    }

    /// On `moto`: a test that resets its server starts one of its own.
    async fn on(moto: MotoServer) -> Fixture {
        let client = moto.dynamodb_client();
        let (conversations, audit) = (unique_name("conversations"), unique_name("audit"));
        create_tables(&client, &conversations, &audit)
            .await
            .expect("create tables");
        let store = Arc::new(DynamoConversationStore::new(
            client.clone(),
            &conversations,
            &audit,
            TTL,
        ));
        Fixture {
            moto,
            client,
            conversations,
            audit,
            store,
        }
    }

    async fn turn_items(&self, session_id: &str) -> Vec<HashMap<String, AttributeValue>> {
        let out = self
            .client
            .query()
            .table_name(&self.conversations)
            .key_condition_expression("session_id = :s")
            .expression_attribute_values(":s", AttributeValue::S(session_id.into()))
            .consistent_read(true)
            .send()
            .await
            .expect("raw query");
        out.items().to_vec()
    }

    async fn audit_item(&self, request_id: &str) -> Option<HashMap<String, AttributeValue>> {
        let out = self
            .client
            .get_item()
            .table_name(&self.audit)
            .key("request_id", AttributeValue::S(request_id.into()))
            .consistent_read(true)
            .send()
            .await
            .expect("raw get");
        out.item().cloned()
    }
}

/// Reads the tables with plain Query/GetItem, checking attribute types on the way.
#[async_trait]
impl StoreInspector for Fixture {
    async fn turn_count(&self, session_id: &str) -> usize {
        let out = self
            .client
            .query()
            .table_name(&self.conversations)
            .key_condition_expression("session_id = :s")
            .expression_attribute_values(":s", AttributeValue::S(session_id.into()))
            .select(Select::Count)
            .consistent_read(true)
            .send()
            .await
            .expect("raw count");
        usize::try_from(out.count()).expect("count")
    }

    async fn audit(&self, request_id: &str) -> Option<AuditRecord> {
        self.audit_item(request_id)
            .await
            .map(|item| parse_audit(&item))
    }
}

fn s<'a>(item: &'a HashMap<String, AttributeValue>, name: &str) -> Option<&'a String> {
    item.get(name).map(|v| {
        v.as_s()
            .unwrap_or_else(|_| panic!("{name} is not S: {v:?}"))
    })
}

fn n(item: &HashMap<String, AttributeValue>, name: &str) -> Option<u64> {
    item.get(name).map(|v| {
        v.as_n()
            .unwrap_or_else(|_| panic!("{name} is not N: {v:?}"))
            .parse()
            .expect("integer")
    })
}

/// The audit item as an [`AuditRecord`], failing on unknown attributes so that a schema
/// change has to be made here (and in the docs) too.
fn parse_audit(item: &HashMap<String, AttributeValue>) -> AuditRecord {
    const KNOWN: &[&str] = &[
        "request_id",
        "action",
        "session_id",
        "doc_ids",
        "model",
        "prompt_tokens",
        "completion_tokens",
        "total_tokens",
        "latency_ms",
        "outcome",
        "client_hash",
        "grounding",
        "at",
        "expires_at",
        "question",
        "hits",
        "top_score",
        "feedback_rating",
        "feedback_comment",
        "feedback_at",
    ];
    for name in item.keys() {
        assert!(
            KNOWN.contains(&name.as_str()),
            "unexpected attribute {name}"
        );
    }
    assert!(n(item, "at").is_some() && n(item, "expires_at").is_some());
    let doc_ids = match item.get("doc_ids") {
        Some(AttributeValue::L(list)) => list
            .iter()
            .map(|v| v.as_s().expect("doc id is S").clone())
            .collect(),
        other => panic!("doc_ids is not a list: {other:?}"),
    };
    let usage = n(item, "prompt_tokens").map(|prompt| Usage {
        prompt_tokens: u32::try_from(prompt).expect("u32"),
        completion_tokens: n(item, "completion_tokens")
            .and_then(|v| u32::try_from(v).ok())
            .expect("completion_tokens"),
        total_tokens: n(item, "total_tokens")
            .and_then(|v| u32::try_from(v).ok())
            .expect("total_tokens"),
    });
    AuditRecord {
        action: s(item, "action").expect("action").clone(),
        session_id: s(item, "session_id").cloned(),
        request_id: s(item, "request_id").expect("request_id").clone(),
        doc_ids,
        model: s(item, "model").cloned(),
        usage,
        latency_ms: n(item, "latency_ms").expect("latency_ms"),
        outcome: s(item, "outcome").expect("outcome").clone(),
        client_hash: s(item, "client_hash").cloned(),
        grounding: item.get("grounding").map(|g| {
            let g = g.as_m().expect("grounding is M");
            let figure = |k: &str| {
                n(g, k)
                    .and_then(|v| u32::try_from(v).ok())
                    .unwrap_or_else(|| panic!("grounding.{k}"))
            };
            Grounding {
                sentences: figure("sentences"),
                cited: figure("cited"),
                uncited_sentences: figure("uncited_sentences"),
                unsupported_sentences: figure("unsupported_sentences"),
                invalid_citations: figure("invalid_citations"),
            }
        }),
        question: s(item, "question").cloned(),
        hits: n(item, "hits").map(|h| u32::try_from(h).expect("u32")),
        top_score: item
            .get("top_score")
            .map(|v| v.as_n().expect("top_score is N").parse().expect("number")),
        feedback: s(item, "feedback_rating").map(|r| Feedback {
            rating: Rating::parse(r).expect("up or down"),
            comment: s(item, "feedback_comment").cloned(),
            at_ms: n(item, "feedback_at").expect("feedback_at"),
        }),
    }
}

fn now_secs() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .expect("clock after 1970")
        .as_secs()
}

shared::store_scenario_tests! {
    let f = Fixture::start().await;
    store: f.store.clone(),
    inspect: &f,
}

/// The report's read: a scan of one time range, records parsed back whole (the store's own
/// parser agrees with this file's field-by-field one), bounded by `max`.
#[tokio::test]
async fn scan_audit_reads_back_the_records_of_a_time_range() {
    let f = Fixture::start().await;
    let base = UNIX_EPOCH + Duration::from_secs(1_800_000_000);
    let session = unique_name("s");
    let mut ids = Vec::new();
    for day in 0..3u64 {
        let id = unique_name("req");
        let at = base + Duration::from_secs(day * 86_400);
        let ex = scenario::exchange(&session, &id, &format!("q{day}"), Some("a"), at);
        assert_eq!(
            f.store.record_exchange(&ex).await.unwrap(),
            Recorded::Written
        );
        ids.push(id);
    }
    let rating = Feedback {
        rating: Rating::Down,
        comment: Some("off".into()),
        at_ms: 5,
    };
    f.store
        .record_feedback(&ids[1], &session, &rating)
        .await
        .unwrap();
    let base_ms = 1_800_000_000_000u64;
    let (entries, more) = f
        .store
        .scan_audit(base_ms + 86_400_000, base_ms + 3 * 86_400_000, 100)
        .await
        .unwrap();
    assert!(!more);
    let mut got: Vec<(u64, String)> = entries
        .iter()
        .map(|e| (e.at_ms, e.record.request_id.clone()))
        .collect();
    got.sort();
    assert_eq!(
        got,
        vec![
            (base_ms + 86_400_000, ids[1].clone()),
            (base_ms + 2 * 86_400_000, ids[2].clone())
        ]
    );
    for e in &entries {
        assert_eq!(Some(e.record.clone()), f.audit(&e.record.request_id).await);
    }
    let (one, more) = f.store.scan_audit(0, u64::MAX, 1).await.unwrap();
    assert_eq!((one.len(), more), (1, true));
}

#[tokio::test]
async fn turn_items_carry_the_documented_attributes() {
    let f = Fixture::start().await;
    let (session, request) = (unique_name("s"), unique_name("req"));
    // Now, to the millisecond, so that the expected keys can be spelled out (and the items
    // are not already past their TTL).
    let at_ms = (now_secs() - 1) * 1000 + 123;
    let at = UNIX_EPOCH + Duration::from_millis(at_ms);
    let ex = scenario::exchange(&session, &request, "q", Some("a"), at);
    assert_eq!(
        f.store.record_exchange(&ex).await.expect("record"),
        Recorded::Written
    );
    let items = f.turn_items(&session).await;
    assert_eq!(items.len(), 2);
    for (item, (suffix, role, content)) in items
        .iter()
        .zip([("0", "user", "q"), ("1", "assistant", "a")])
    {
        let turn = format!("{at_ms:020}#{request}#{suffix}");
        assert_eq!(s(item, "turn"), Some(&turn));
        assert_eq!(s(item, "session_id"), Some(&session));
        assert_eq!(s(item, "role").map(String::as_str), Some(role));
        assert_eq!(s(item, "content").map(String::as_str), Some(content));
        assert_eq!(s(item, "request_id"), Some(&request));
        assert_eq!(n(item, "created_at"), Some(at_ms));
        assert_eq!(n(item, "expires_at"), Some(at_ms / 1000 + TTL.as_secs()));
        assert_eq!(item.len(), 7, "no other attributes: {item:?}");
    }
}

#[tokio::test]
async fn every_item_expires_ttl_after_its_write() {
    let f = Fixture::start().await;
    let (session, chat, ingest) = (unique_name("s"), unique_name("req"), unique_name("req"));
    let before = now_secs();
    let ex = scenario::exchange(&session, &chat, "q", Some("a"), SystemTime::now());
    f.store.record_exchange(&ex).await.expect("record");
    let rec = AuditRecord {
        action: "ingest".into(),
        request_id: ingest.clone(),
        outcome: "ok".into(),
        ..AuditRecord::default()
    };
    f.store.append_audit(&rec).await.expect("append");
    let after = now_secs();

    let mut items = f.turn_items(&session).await;
    items.extend(f.audit_item(&chat).await);
    items.extend(f.audit_item(&ingest).await);
    assert_eq!(items.len(), 4);
    for item in &items {
        let expires = n(item, "expires_at").expect("expires_at on every item");
        assert!(
            (before + TTL.as_secs()..=after + TTL.as_secs()).contains(&expires),
            "expires_at {expires} not within now + ttl ({before}..={after} + {})",
            TTL.as_secs()
        );
    }
}

#[tokio::test]
async fn create_tables_is_idempotent_and_enables_ttl() {
    let f = Fixture::start().await;
    create_tables(&f.client, &f.conversations, &f.audit)
        .await
        .expect("second create_tables");
    for table in [&f.conversations, &f.audit] {
        let ttl = f
            .client
            .describe_time_to_live()
            .table_name(table)
            .send()
            .await
            .expect("describe ttl");
        let desc = ttl.time_to_live_description().expect("ttl description");
        assert_eq!(desc.time_to_live_status(), Some(&TimeToLiveStatus::Enabled));
        assert_eq!(desc.attribute_name(), Some("expires_at"));
    }
}

#[tokio::test]
async fn missing_table_is_an_error_not_a_panic() {
    let moto = MotoServer::shared();
    let store = DynamoConversationStore::new(
        moto.dynamodb_client(),
        unique_name("no-such-table"),
        unique_name("no-such-audit"),
        TTL,
    );
    let err = store
        .recent_turns("s", 10)
        .await
        .expect_err("query on a missing table");
    assert!(
        matches!(err, StoreError::Other { .. }) && !err.is_retryable(),
        "{err:?}"
    );
    assert!(
        err.to_string().contains("ResourceNotFoundException"),
        "{err}"
    );

    let ex = scenario::exchange("s", "r", "q", Some("a"), SystemTime::now());
    let err = store
        .record_exchange(&ex)
        .await
        .expect_err("write to a missing table");
    assert!(!err.is_retryable(), "{err:?}");
    let rec = AuditRecord {
        request_id: "r".into(),
        ..AuditRecord::default()
    };
    let err = store
        .append_audit(&rec)
        .await
        .expect_err("audit to a missing table");
    assert!(!err.is_retryable(), "{err:?}");
}

#[tokio::test]
async fn unreachable_endpoint_is_unavailable_and_retryable() {
    // A port nothing listens on: bound, read, released.
    let port = TcpListener::bind((Ipv4Addr::LOCALHOST, 0))
        .and_then(|l| l.local_addr())
        .expect("free port")
        .port();
    let config = aws_sdk_dynamodb::Config::builder()
        .behavior_version(BehaviorVersion::latest())
        .endpoint_url(format!("http://127.0.0.1:{port}"))
        .region(Region::new("us-east-1"))
        .credentials_provider(Credentials::new("testing", "testing", None, None, "test"))
        .build();
    let store = DynamoConversationStore::new(Client::from_conf(config), "c", "a", TTL);
    let err = store
        .recent_turns("s", 10)
        .await
        .expect_err("nothing listens there");
    assert!(
        matches!(err, StoreError::Unavailable { .. }) && err.is_retryable(),
        "{err:?}"
    );
    // The SDK error is kept as the source for logs.
    assert!(std::error::Error::source(&err).is_some());
}

#[tokio::test]
async fn reset_drops_every_table() {
    let moto = MotoServer::start();
    let f = Fixture::on(moto).await;
    f.moto.reset().await.expect("reset");
    let tables = f.client.list_tables().send().await.expect("list tables");
    assert!(
        tables.table_names().is_empty(),
        "{:?}",
        tables.table_names()
    );
}

// ---------------------------------------------------------------- answer cache

fn cached(reply: &str) -> shared::answer_cache::CachedAnswer {
    shared::answer_cache::CachedAnswer {
        reply: reply.to_owned(),
        model: "qwen-plus".to_owned(),
        grounding: Some(Grounding {
            sentences: 1,
            cited: 1,
            ..Grounding::default()
        }),
    }
}

/// Instances storing the same question's answer at once leave one answer, which every
/// instance then reads; the item lives in the conversations table with the table's TTL.
#[tokio::test]
async fn the_answer_cache_keeps_the_first_answer_of_concurrent_writers() {
    use shared::answer_cache::{AnswerCache, DynamoAnswerCache};
    let f = Fixture::start().await;
    let caches: Vec<DynamoAnswerCache> = (0..8)
        .map(|_| DynamoAnswerCache::new(f.client.clone(), &f.conversations, TTL))
        .collect();
    let key = unique_name("key");
    assert_eq!(caches[0].get(&key).await.unwrap(), None);
    let writes = caches
        .iter()
        .enumerate()
        .map(|(i, c)| {
            let (key, answer) = (key.clone(), cached(&format!("answer {i}")));
            async move { c.put(&key, &answer).await }
        })
        .collect::<Vec<_>>();
    for result in futures_util::future::join_all(writes).await {
        result.expect("a losing writer is not an error");
    }
    let seen: Vec<_> = futures_util::future::join_all(caches.iter().map(|c| c.get(&key)))
        .await
        .into_iter()
        .map(|r| r.unwrap().expect("cached"))
        .collect();
    assert!(seen.iter().all(|a| *a == seen[0]), "{seen:?}");
    assert!(seen[0].reply.starts_with("answer "));
    // A later writer does not replace it.
    caches[0].put(&key, &cached("later")).await.unwrap();
    assert_eq!(caches[1].get(&key).await.unwrap().as_ref(), Some(&seen[0]));
    let items = f.turn_items(&format!("answer-cache#{key}")).await;
    assert_eq!(items.len(), 1);
    let expires = n(&items[0], "expires_at").unwrap();
    assert!(expires >= now_secs() + TTL.as_secs() - 60, "{expires}");

    // An expired item is not served, and may be replaced.
    let short = DynamoAnswerCache::new(f.client.clone(), &f.conversations, Duration::ZERO);
    let other = unique_name("key");
    short.put(&other, &cached("stale")).await.unwrap();
    assert_eq!(short.get(&other).await.unwrap(), None);
    caches[0].put(&other, &cached("fresh")).await.unwrap();
    assert_eq!(caches[1].get(&other).await.unwrap(), Some(cached("fresh")));
}
