//! Abuse and cost limits shared by every warm instance: request rates per client and per
//! session ([`RateLimiter`]; per client only for the search function, [`ClientLimit`]), the
//! opt-in proof of work (`bot_check`), what a chat request must pass before it is answered
//! ([`Admission`]: the bot check, then the rates, by client network) and the daily
//! model-token budget ([`TokenBudget`]).
//!
//! Both are counters in a [`Counters`] store. With `LIMITS_TABLE` set that is DynamoDB
//! ([`DynamoCounters`]), whose conditional updates are atomic, so every instance sees one
//! count and N concurrent requests at a limit of L admit exactly L. Without it the counters
//! live in process memory ([`MemoryCounters`]): exact per instance, which is all a local run
//! or a single instance needs. Every counter key names its time window and expires with
//! it, so nothing needs cleaning up.

mod admission;
mod bot_check;
mod budget;
mod client;
mod dynamodb;
mod fallback;
mod memory;
mod per_client;
mod rate;
mod salt;

use std::sync::Arc;
use std::time::{SystemTime, UNIX_EPOCH};

use async_trait::async_trait;

pub use admission::Admission;
pub use bot_check::{
    issue_challenge, solve_challenge, verify_proof, BotCheck, BotCheckError, BotCheckOff,
    Challenge, BOT_CHECK_OFF, DEFAULT_DIFFICULTY,
};
pub(crate) use bot_check::{DEFAULT_TTL_SECS, DIFFICULTY_RANGE};
pub use budget::{BudgetStatus, Reservation, TokenBudget};
pub use client::{client_hash, client_network};
pub(crate) use client::{short_digest, DEFAULT_IPV6_PREFIX};
pub use dynamodb::{create_limits_table, DynamoCounters};
pub use fallback::FallbackCounters;
pub use memory::MemoryCounters;
pub use per_client::{ClientLimit, ClientLimitConfig};
pub use rate::{Limited, RateLimiter};
pub(crate) use salt::random_salt;
pub use salt::{client_salt, ClientSalt};

use crate::store::StoreError;

/// How long the limit checks of one request may take, retries included. They run before
/// the answer starts, so this is what a visitor waits when DynamoDB is throttled or down
/// before getting a 503 (the rate limits) or an offline answer (the budget); a healthy
/// update takes milliseconds.
pub const LIMITS_BUDGET: std::time::Duration = std::time::Duration::from_millis(1500);

/// `op` retried with backoff while it fails with a retryable error (throttling, outages),
/// until `deadline`.
async fn retried<T, F, Fut>(deadline: tokio::time::Instant, op: F) -> Result<T, StoreError>
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = Result<T, StoreError>>,
{
    crate::retry::retry_until(deadline, StoreError::is_retryable, op).await
}

/// Named counters with an expiry, changed atomically.
#[async_trait]
pub trait Counters: Send + Sync {
    /// Short name of the backend (`"dynamodb"`, `"memory"`), shown in health output.
    fn kind(&self) -> &'static str;

    /// Whether other instances see these counters (so a secret kept in them is shared).
    fn is_shared(&self) -> bool;

    /// Whether the counters are standing in for a shared store that is down (see
    /// [`FallbackCounters`]).
    fn is_degraded(&self) -> bool {
        false
    }

    /// Adds `amount` to counter `key` if the sum stays at most `limit`, and returns the new
    /// value; `None` (and no change) when it would not fit. A missing or expired counter
    /// counts as 0 and lives until `expires_at` (epoch seconds). Atomic: of concurrent calls,
    /// exactly those that fit are admitted.
    async fn try_add(
        &self,
        key: &str,
        amount: u64,
        limit: u64,
        expires_at: u64,
    ) -> Result<Option<u64>, StoreError>;

    /// Adds `delta` to counter `key` unconditionally (negative: gives back part of an
    /// earlier [`Counters::try_add`]).
    async fn add(&self, key: &str, delta: i64, expires_at: u64) -> Result<(), StoreError>;

    /// The counter's value (0 when missing or expired; never negative).
    async fn get(&self, key: &str) -> Result<u64, StoreError>;
}

/// The counters a function is configured for: DynamoDB (the client of `aws`, behind a
/// [`FallbackCounters`]) when `LIMITS_TABLE` is set, else process memory.
pub async fn open_counters(
    config: &crate::config::Config,
    aws: &crate::config::AwsClients,
) -> Arc<dyn Counters> {
    match &config.limits_table {
        // While DynamoDB is down the limits count per instance: answering with looser
        // limits beats refusing every visitor.
        Some(table) => Arc::new(FallbackCounters::new(Arc::new(DynamoCounters::new(
            aws.dynamodb().await,
            table,
        )))),
        None => Arc::new(MemoryCounters::default()),
    }
}

/// Seconds since the Unix epoch (0 for a clock before it).
fn epoch_secs(at: SystemTime) -> u64 {
    at.duration_since(UNIX_EPOCH).map_or(0, |d| d.as_secs())
}
