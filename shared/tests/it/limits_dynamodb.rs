//! The DynamoDB counters behind the rate limits and the token budget, on a moto server:
//! conditional adds are exact under concurrency, refunds and reads work, and instances
//! starting together agree on one client-hash salt.
#![allow(clippy::unwrap_used)] // test helpers may panic on broken fixtures

use std::sync::Arc;
use std::time::{SystemTime, UNIX_EPOCH};

use shared::limits::{client_salt, create_limits_table, Counters, DynamoCounters, TokenBudget};
use shared::testing::moto::unique_name;
use shared::testing::MotoServer;

async fn counters(moto: &MotoServer) -> Arc<DynamoCounters> {
    let client = moto.dynamodb_client();
    let table = unique_name("limits");
    create_limits_table(&client, &table).await.unwrap();
    // Idempotent, as a second deploy or local setup would call it.
    create_limits_table(&client, &table).await.unwrap();
    Arc::new(DynamoCounters::new(client, table))
}

fn in_an_hour() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap()
        .as_secs()
        + 3600
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn concurrent_adds_admit_exactly_what_fits() {
    let moto = MotoServer::shared();
    let c = counters(&moto).await;
    let tasks: Vec<_> = (0..60)
        .map(|_| {
            let c = c.clone();
            tokio::spawn(async move { c.try_add("k", 1, 25, in_an_hour()).await.unwrap() })
        })
        .collect();
    let mut admitted = Vec::new();
    for t in tasks {
        if let Some(v) = t.await.unwrap() {
            admitted.push(v);
        }
    }
    admitted.sort_unstable();
    assert_eq!(
        admitted,
        (1..=25).collect::<Vec<u64>>(),
        "each admitted add saw its own count"
    );
    assert_eq!(c.get("k").await.unwrap(), 25);
    assert_eq!(c.try_add("k", 1, 25, in_an_hour()).await.unwrap(), None);
}

#[tokio::test]
async fn adds_refunds_and_reads() {
    let moto = MotoServer::shared();
    let c = counters(&moto).await;
    assert_eq!(c.get("absent").await.unwrap(), 0);
    assert_eq!(
        c.try_add("t", 900, 1000, in_an_hour()).await.unwrap(),
        Some(900)
    );
    assert_eq!(c.try_add("t", 200, 1000, in_an_hour()).await.unwrap(), None);
    c.add("t", -700, in_an_hour()).await.unwrap();
    assert_eq!(c.get("t").await.unwrap(), 200);
    assert_eq!(
        c.try_add("t", 2000, 1000, in_an_hour()).await.unwrap(),
        None,
        "more than the limit"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn concurrent_reservations_never_overrun_the_budget() {
    let moto = MotoServer::shared();
    let c: Arc<dyn Counters> = counters(&moto).await;
    let budget = Arc::new(TokenBudget::new(c, 10_000, 100));
    let now = SystemTime::now();
    let tasks: Vec<_> = (0..30)
        .map(|_| {
            let b = budget.clone();
            tokio::spawn(async move {
                let r = b.reserve(1_500, now).await.unwrap();
                if let Some(r) = r {
                    // The call used less than reserved: the rest is given back.
                    b.settle(r, 1_000).await.unwrap();
                    true
                } else {
                    false
                }
            })
        })
        .collect();
    let mut admitted = 0;
    for t in tasks {
        admitted += usize::from(t.await.unwrap());
    }
    let status = budget.status(now).await.unwrap();
    assert_eq!(status.used, admitted as u64 * 1_000);
    assert!(status.used <= 10_000, "{status:?}");
    // Reservations of 1,500 that settle at 1,000: at least 6 fit before any refund and at
    // most 9 (the 10th would need 9,000 + 1,500).
    assert!((6..=9).contains(&admitted), "{admitted}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn instances_starting_together_share_one_salt() {
    let moto = MotoServer::shared();
    let c: Arc<dyn Counters> = counters(&moto).await;
    let tasks: Vec<_> = (0..8)
        .map(|_| {
            let c = c.clone();
            tokio::spawn(async move { client_salt(None, c.as_ref()).await.unwrap() })
        })
        .collect();
    let mut salts = Vec::new();
    for t in tasks {
        salts.push(t.await.unwrap().expose().to_owned());
    }
    salts.dedup();
    assert_eq!(salts.len(), 1, "{salts:?}");
    assert_eq!(salts[0].len(), 16);
}
