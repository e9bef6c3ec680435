//! The daily model-token budget, shared by all clients and instances.
//!
//! Before a model call the chat reserves what the call can cost at most (the prompt's
//! estimate plus the answer cap); a reservation that does not fit in what is left today is
//! refused, and the turn is answered offline. After the call the reservation is replaced by
//! what the provider reported. Reserving first keeps concurrent calls from overrunning the
//! budget together; a day is a UTC day.

use std::sync::Arc;
use std::time::SystemTime;

use serde::Serialize;

use super::{epoch_secs, Counters};
use crate::store::StoreError;

/// Tokens set aside for one model call, to be settled once its usage is known.
#[derive(Debug, Clone, PartialEq, Eq)]
#[must_use = "a reservation is settled with the real usage"]
pub struct Reservation {
    key: String,
    reserved: u64,
    expires_at: u64,
}

impl Reservation {
    /// The tokens reserved: the call's worst case.
    pub fn tokens(&self) -> u64 {
        self.reserved
    }
}

/// Today's budget, for health output.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct BudgetStatus {
    /// The UTC day counted, `YYYY-MM-DD`.
    pub day: String,
    /// Tokens allowed per day (0: no budget).
    pub daily_limit: u64,
    /// Tokens used or reserved so far today.
    pub used: u64,
    /// Whether no further model answer fits today (chat answers offline).
    pub exhausted: bool,
}

/// The daily token budget.
#[derive(Clone)]
pub struct TokenBudget {
    counters: Arc<dyn Counters>,
    daily: u64,
    /// The smallest call worth making: with less than this left the budget is exhausted.
    min_call: u64,
}

impl std::fmt::Debug for TokenBudget {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TokenBudget")
            .field("daily", &self.daily)
            .field("counters", &self.counters.kind())
            .finish()
    }
}

impl TokenBudget {
    /// A budget of `daily` tokens per UTC day kept in `counters` (0: unlimited). With less
    /// than `min_call` tokens left the budget counts as exhausted.
    pub fn new(counters: Arc<dyn Counters>, daily: u64, min_call: u64) -> Self {
        Self {
            counters,
            daily,
            min_call,
        }
    }

    /// Tokens per day (0: unlimited).
    pub fn daily(&self) -> u64 {
        self.daily
    }

    /// Where the budget is counted (`dynamodb`, `memory`, `memory-fallback`).
    pub fn counters_kind(&self) -> &'static str {
        self.counters.kind()
    }

    /// Whether the budget is counted per instance because the shared store is down.
    pub fn is_degraded(&self) -> bool {
        self.counters.is_degraded()
    }

    /// Sets aside `tokens` of the budget of `now`'s day. `None` when they do not fit: the
    /// model must not be called. Throttled or failed updates are retried within
    /// [`LIMITS_BUDGET`](super::LIMITS_BUDGET).
    pub async fn reserve(
        &self,
        tokens: u64,
        now: SystemTime,
    ) -> Result<Option<Reservation>, StoreError> {
        let (key, expires_at) = day_key(now);
        if self.daily == 0 {
            return Ok(Some(Reservation {
                key,
                reserved: 0,
                expires_at,
            }));
        }
        let deadline = tokio::time::Instant::now() + super::LIMITS_BUDGET;
        let admitted = super::retried(deadline, || {
            self.counters.try_add(&key, tokens, self.daily, expires_at)
        })
        .await?;
        Ok(admitted.map(|_| Reservation {
            key,
            reserved: tokens,
            expires_at,
        }))
    }

    /// Replaces a reservation by the tokens the call really `used` (the difference is
    /// given back, or added when the provider counted more).
    pub async fn settle(&self, r: Reservation, used: u64) -> Result<(), StoreError> {
        if self.daily == 0 {
            return Ok(());
        }
        let delta = i64::try_from(used)
            .unwrap_or(i64::MAX)
            .saturating_sub(i64::try_from(r.reserved).unwrap_or(i64::MAX));
        if delta == 0 {
            return Ok(());
        }
        let deadline = tokio::time::Instant::now() + super::LIMITS_BUDGET;
        super::retried(deadline, || self.counters.add(&r.key, delta, r.expires_at)).await
    }

    /// The budget of `now`'s day.
    pub async fn status(&self, now: SystemTime) -> Result<BudgetStatus, StoreError> {
        let (key, _) = day_key(now);
        let used = if self.daily == 0 {
            0
        } else {
            self.counters.get(&key).await?
        };
        Ok(BudgetStatus {
            day: key.trim_start_matches("budget:").to_owned(),
            daily_limit: self.daily,
            used,
            exhausted: self.daily > 0 && used.saturating_add(self.min_call) > self.daily,
        })
    }
}

/// The counter key of `now`'s UTC day (`budget:YYYY-MM-DD`) and when it may expire (a day
/// after the day ends).
fn day_key(now: SystemTime) -> (String, u64) {
    let days = epoch_secs(now) / 86_400;
    let (y, m, d) = crate::dates::civil_from_days(i64::try_from(days).unwrap_or(i64::MAX));
    (format!("budget:{y:04}-{m:02}-{d:02}"), (days + 2) * 86_400)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::limits::MemoryCounters;
    use std::time::{Duration, UNIX_EPOCH};

    #[test]
    fn day_keys_are_utc_dates() {
        let at = |s: u64| UNIX_EPOCH + Duration::from_secs(s);
        assert_eq!(day_key(at(0)).0, "budget:1970-01-01");
        // 2000-02-29 (a leap day in a century year) and the second before 2026-11-23.
        assert_eq!(day_key(at(951_782_400)).0, "budget:2000-02-29");
        assert_eq!(day_key(at(1_795_391_999)).0, "budget:2026-11-22");
        assert_eq!(day_key(at(1_795_392_000)).0, "budget:2026-11-23");
    }

    #[tokio::test]
    async fn reservations_that_do_not_fit_are_refused_and_settling_gives_back() {
        let b = TokenBudget::new(Arc::new(MemoryCounters::default()), 1000, 100);
        let now = SystemTime::now();
        let first = b.reserve(600, now).await.unwrap().unwrap();
        assert_eq!(b.reserve(600, now).await.unwrap(), None, "600 + 600 > 1000");
        b.settle(first, 250).await.unwrap();
        let status = b.status(now).await.unwrap();
        assert_eq!((status.used, status.exhausted), (250, false));
        let second = b.reserve(600, now).await.unwrap().unwrap();
        b.settle(second, 700).await.unwrap();
        let status = b.status(now).await.unwrap();
        assert_eq!((status.used, status.exhausted), (950, true));
    }

    #[tokio::test]
    async fn zero_is_unlimited_and_touches_no_counter() {
        let counters = Arc::new(MemoryCounters::default());
        let b = TokenBudget::new(counters.clone(), 0, 100);
        let now = SystemTime::now();
        let r = b.reserve(u64::MAX, now).await.unwrap().unwrap();
        b.settle(r, 5000).await.unwrap();
        let status = b.status(now).await.unwrap();
        assert_eq!((status.used, status.exhausted), (0, false));
        assert_eq!(counters.get(&day_key(now).0).await.unwrap(), 0);
    }
}
