//! Counters in process memory, for runs without a limits table.

use std::collections::HashMap;
use std::sync::Mutex;
use std::time::SystemTime;

use async_trait::async_trait;

use super::{epoch_secs, Counters};
use crate::store::StoreError;

/// Counters in one process: atomic within it, not shared with other instances.
#[derive(Debug, Default)]
pub struct MemoryCounters {
    state: Mutex<State>,
}

#[derive(Debug, Default)]
struct State {
    /// key → (value, expires_at in epoch seconds).
    counters: HashMap<String, (i64, u64)>,
    /// When expired counters were last dropped (epoch seconds).
    purged_at: u64,
}

impl MemoryCounters {
    /// Runs `f` on the counters under the lock, with the current time.
    fn with<T>(&self, f: impl FnOnce(&mut HashMap<String, (i64, u64)>, u64) -> T) -> T {
        // A panic while holding the lock cannot leave a counter half-written (each change is
        // one insert), so a poisoned lock is still usable.
        let mut state = self
            .state
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        let now = epoch_secs(SystemTime::now());
        // Windows are short, so dropping expired counters keeps the map at about one entry
        // per client and session of the last two minutes; at most once a second, so a
        // flood of distinct clients does not make every call a full sweep.
        if state.purged_at != now {
            state
                .counters
                .retain(|_, (_, expires_at)| *expires_at > now);
            state.purged_at = now;
        }
        f(&mut state.counters, now)
    }
}

#[async_trait]
impl Counters for MemoryCounters {
    fn kind(&self) -> &'static str {
        "memory"
    }

    fn is_shared(&self) -> bool {
        false
    }

    async fn try_add(
        &self,
        key: &str,
        amount: u64,
        limit: u64,
        expires_at: u64,
    ) -> Result<Option<u64>, StoreError> {
        Ok(self.with(|map, now| {
            let current = live(map, key, now);
            let next = current.checked_add(amount).filter(|n| *n <= limit)?;
            let value = i64::try_from(next).ok()?;
            map.insert(key.to_owned(), (value, expires_at));
            Some(next)
        }))
    }

    async fn add(&self, key: &str, delta: i64, expires_at: u64) -> Result<(), StoreError> {
        self.with(|map, now| {
            let entry = map.entry(key.to_owned()).or_insert((0, expires_at));
            if entry.1 <= now {
                *entry = (0, expires_at);
            }
            entry.0 = entry.0.saturating_add(delta);
            entry.1 = entry.1.max(expires_at);
        });
        Ok(())
    }

    async fn get(&self, key: &str) -> Result<u64, StoreError> {
        Ok(self.with(|map, now| live(map, key, now)))
    }
}

/// A counter's value; one expired since the last sweep reads as absent.
fn live(map: &HashMap<String, (i64, u64)>, key: &str, now: u64) -> u64 {
    match map.get(key) {
        Some((v, expires_at)) if *expires_at > now => (*v).max(0) as u64,
        _ => 0,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn later() -> u64 {
        epoch_secs(SystemTime::now()) + 60
    }

    #[tokio::test]
    async fn admits_up_to_the_limit_then_refuses_without_changing_the_count() {
        let c = MemoryCounters::default();
        for expected in 1..=3 {
            assert_eq!(c.try_add("k", 1, 3, later()).await.unwrap(), Some(expected));
        }
        assert_eq!(c.try_add("k", 1, 3, later()).await.unwrap(), None);
        assert_eq!(c.get("k").await.unwrap(), 3);
        assert_eq!(c.try_add("other", 4, 3, later()).await.unwrap(), None);
        assert_eq!(c.get("other").await.unwrap(), 0);
    }

    #[tokio::test]
    async fn add_gives_back_and_expired_counters_start_again() {
        let c = MemoryCounters::default();
        c.try_add("k", 5, 10, later()).await.unwrap();
        c.add("k", -3, later()).await.unwrap();
        assert_eq!(c.get("k").await.unwrap(), 2);
        c.try_add("old", 5, 10, 1).await.unwrap();
        assert_eq!(c.get("old").await.unwrap(), 0, "expired in 1970");
    }
}
