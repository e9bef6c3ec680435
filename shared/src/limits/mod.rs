//! Abuse and cost limits shared by every warm instance: request rates per client and per
//! session ([`RateLimiter`]) and the daily model-token budget ([`TokenBudget`]).
//!
//! Both are counters in a [`Counters`] store. With `LIMITS_TABLE` set that is DynamoDB
//! ([`DynamoCounters`]), whose conditional updates are atomic, so every instance sees one
//! count and N concurrent requests at a limit of L admit exactly L. Without it the counters
//! live in process memory ([`MemoryCounters`]): exact per instance, which is all a local run
//! or a single instance needs. Every counter key names its time window and expires with
//! it, so nothing needs cleaning up.

mod budget;
mod dynamodb;
pub mod fallback;
mod memory;
mod rate;

use std::sync::Arc;
use std::time::{SystemTime, UNIX_EPOCH};

use async_trait::async_trait;

pub use budget::{BudgetStatus, Reservation, TokenBudget};
pub use dynamodb::{create_limits_table, DynamoCounters};
pub use fallback::FallbackCounters;
pub use memory::MemoryCounters;
pub use rate::{Limited, RateLimiter};

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

/// The counters a function is configured for: DynamoDB when `LIMITS_TABLE` is set (behind
/// a [`FallbackCounters`]), else process memory.
pub async fn open_counters(config: &crate::config::Config) -> Arc<dyn Counters> {
    match &config.limits_table {
        Some(table) => {
            let sdk = crate::aws::sdk_config_from_env().await;
            // While DynamoDB is down the limits count per instance: answering with looser
            // limits beats refusing every visitor.
            Arc::new(FallbackCounters::new(Arc::new(DynamoCounters::new(
                aws_sdk_dynamodb::Client::new(&sdk),
                table,
            ))))
        }
        None => Arc::new(MemoryCounters::default()),
    }
}

/// Seconds since the Unix epoch (0 for a clock before it).
fn epoch_secs(at: SystemTime) -> u64 {
    at.duration_since(UNIX_EPOCH).map_or(0, |d| d.as_secs())
}

/// The salt for client-address hashes: `configured` (`CLIENT_HASH_SALT`) when set; else,
/// with shared counters, one kept in them, so that every instance derives the same key for
/// one client (per-client limits would otherwise be per instance) without the site owner
/// configuring a secret; else a random salt for this process.
///
/// The first instance to start stores a random 63-bit value with an add that only fits into
/// an absent counter, so of instances starting together exactly one wins and all read its
/// value back.
pub async fn client_salt(
    configured: Option<&crate::secret::Secret>,
    counters: &dyn Counters,
) -> Result<crate::secret::Secret, StoreError> {
    if let Some(salt) = configured {
        return Ok(salt.clone());
    }
    if !counters.is_shared() {
        return Ok(crate::chat::random_salt());
    }
    const KEY: &str = "secret:client-hash-salt";
    // No TTL: the item must outlive every instance (DynamoDB ignores a TTL this far out).
    const NEVER: u64 = 4_102_444_800; // 2100-01-01
    let mine = random_u63().max(1);
    counters.try_add(KEY, mine, mine, NEVER).await?;
    let salt = counters.get(KEY).await?;
    Ok(crate::secret::Secret::new(format!("{salt:016x}")))
}

/// 63 random bits from the standard library's OS-seeded hasher keys.
fn random_u63() -> u64 {
    use std::hash::{BuildHasher, RandomState};
    RandomState::new().hash_one(std::time::SystemTime::now()) >> 1
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::secret::Secret;

    #[tokio::test]
    async fn a_configured_salt_wins_and_memory_counters_get_a_process_salt() {
        let memory = MemoryCounters::default();
        let pepper = Secret::new("pepper");
        let salt = client_salt(Some(&pepper), &memory).await.unwrap();
        assert_eq!(salt.expose(), "pepper");
        let a = client_salt(None, &memory).await.unwrap();
        let b = client_salt(None, &memory).await.unwrap();
        assert_eq!(a.expose(), b.expose(), "one salt per process");
        assert_ne!(a.expose(), "pepper");
    }
}
