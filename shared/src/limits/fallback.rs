//! Shared counters that degrade to this instance's memory when their store is down.
//!
//! When DynamoDB cannot be reached every limit check would otherwise fail: refusing every
//! visitor (503) turns a store outage into a site outage, and health checks hang in the
//! SDK's retries. [`FallbackCounters`] gives each call to the shared counters
//! [`PRIMARY_TIMEOUT`]; on an error or a timeout it logs a warning, answers from per-instance
//! [`MemoryCounters`] instead, and keeps doing so for [`DEGRADED_FOR`] before trying the
//! shared store again, so an outage costs one bounded wait per instance and period, not one
//! per request. Limits then hold per instance (each warm instance allows the configured
//! rate and budget): looser than shared, far better than none or than refusing everyone.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use async_trait::async_trait;
use tokio::time::Instant;

use super::{Counters, MemoryCounters};
use crate::store::StoreError;

/// How long one call to the shared counters may take before this instance falls back. A
/// healthy conditional update answers in milliseconds, a throttled one within a few SDK
/// retries; a health check that meets a dead store still answers within 2 s.
pub(super) const PRIMARY_TIMEOUT: Duration = Duration::from_secs(1);

/// How long an instance counts in memory after the shared store failed, before it tries
/// the shared store again.
pub(super) const DEGRADED_FOR: Duration = Duration::from_secs(30);

/// Shared counters with a per-instance fallback (see the module docs).
pub struct FallbackCounters {
    primary: Arc<dyn Counters>,
    local: MemoryCounters,
    /// Until when calls go straight to `local`.
    degraded_until: Mutex<Option<Instant>>,
}

impl FallbackCounters {
    /// Counts in `primary` while it answers, else in this process's memory.
    pub fn new(primary: Arc<dyn Counters>) -> Self {
        Self {
            primary,
            local: MemoryCounters::default(),
            degraded_until: Mutex::new(None),
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Option<Instant>> {
        self.degraded_until
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    fn is_degraded_now(&self) -> bool {
        self.lock().is_some_and(|until| Instant::now() < until)
    }

    /// Runs `op` on the shared counters unless degraded; `None` means "use the local ones".
    async fn try_primary<T, Fut>(&self, op: impl FnOnce() -> Fut) -> Option<T>
    where
        Fut: std::future::Future<Output = Result<T, StoreError>>,
    {
        if self.is_degraded_now() {
            return None;
        }
        let failure = match tokio::time::timeout(PRIMARY_TIMEOUT, op()).await {
            Ok(Ok(v)) => {
                let mut until = self.lock();
                if until.take().is_some() {
                    tracing::warn!(
                        counters = self.primary.kind(),
                        "shared limit counters answer again; limits are shared again"
                    );
                }
                return Some(v);
            }
            Ok(Err(e)) => e.to_string(),
            Err(_) => format!("no answer within {} ms", PRIMARY_TIMEOUT.as_millis()),
        };
        let mut until = self.lock();
        if until.is_none_or(|u| Instant::now() >= u) {
            tracing::warn!(
                counters = self.primary.kind(),
                error = %failure,
                retry_in_s = DEGRADED_FOR.as_secs(),
                "shared limit counters unavailable; counting per instance"
            );
        }
        *until = Some(Instant::now() + DEGRADED_FOR);
        None
    }
}

#[async_trait]
impl Counters for FallbackCounters {
    fn kind(&self) -> &'static str {
        if self.is_degraded_now() {
            "memory-fallback"
        } else {
            self.primary.kind()
        }
    }

    fn is_shared(&self) -> bool {
        self.primary.is_shared()
    }

    fn is_degraded(&self) -> bool {
        self.is_degraded_now()
    }

    async fn try_add(
        &self,
        key: &str,
        amount: u64,
        limit: u64,
        expires_at: u64,
    ) -> Result<Option<u64>, StoreError> {
        match self
            .try_primary(|| self.primary.try_add(key, amount, limit, expires_at))
            .await
        {
            Some(v) => Ok(v),
            None => self.local.try_add(key, amount, limit, expires_at).await,
        }
    }

    async fn add(&self, key: &str, delta: i64, expires_at: u64) -> Result<(), StoreError> {
        match self
            .try_primary(|| self.primary.add(key, delta, expires_at))
            .await
        {
            Some(()) => Ok(()),
            None => self.local.add(key, delta, expires_at).await,
        }
    }

    async fn get(&self, key: &str) -> Result<u64, StoreError> {
        match self.try_primary(|| self.primary.get(key)).await {
            Some(v) => Ok(v),
            None => self.local.get(key).await,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicUsize, Ordering};

    /// Counters whose store is down (or, with `stall`, never answers); counts the calls.
    #[derive(Default)]
    struct Down {
        calls: AtomicUsize,
        stall: bool,
    }

    #[async_trait]
    impl Counters for Down {
        fn kind(&self) -> &'static str {
            "dynamodb"
        }
        fn is_shared(&self) -> bool {
            true
        }
        async fn try_add(
            &self,
            _: &str,
            _: u64,
            _: u64,
            _: u64,
        ) -> Result<Option<u64>, StoreError> {
            self.fail().await
        }
        async fn add(&self, _: &str, _: i64, _: u64) -> Result<(), StoreError> {
            self.fail().await
        }
        async fn get(&self, _: &str) -> Result<u64, StoreError> {
            self.fail().await
        }
    }

    impl Down {
        async fn fail<T>(&self) -> Result<T, StoreError> {
            self.calls.fetch_add(1, Ordering::SeqCst);
            if self.stall {
                std::future::pending::<()>().await;
            }
            Err(StoreError::Unavailable {
                message: "connection refused".into(),
                source: None,
            })
        }
    }

    #[tokio::test(start_paused = true)]
    async fn a_store_that_is_down_is_asked_once_per_period_and_limits_hold_per_instance() {
        let down = Arc::new(Down::default());
        let c = FallbackCounters::new(down.clone());
        assert_eq!(c.kind(), "dynamodb");
        assert_eq!(c.try_add("k", 1, 2, u64::MAX).await.unwrap(), Some(1));
        assert_eq!(c.try_add("k", 1, 2, u64::MAX).await.unwrap(), Some(2));
        assert_eq!(
            c.try_add("k", 1, 2, u64::MAX).await.unwrap(),
            None,
            "the limit holds"
        );
        assert_eq!(c.get("k").await.unwrap(), 2);
        assert_eq!(
            down.calls.load(Ordering::SeqCst),
            1,
            "asked once, then degraded"
        );
        assert!(c.is_degraded());
        assert_eq!(c.kind(), "memory-fallback");

        tokio::time::advance(DEGRADED_FOR + Duration::from_millis(1)).await;
        c.add("k", -1, u64::MAX).await.unwrap();
        assert_eq!(
            down.calls.load(Ordering::SeqCst),
            2,
            "tried again after the period"
        );
        assert_eq!(c.get("k").await.unwrap(), 1);
    }

    #[tokio::test(start_paused = true)]
    async fn a_store_that_never_answers_costs_one_bounded_wait() {
        let down = Arc::new(Down {
            stall: true,
            ..Down::default()
        });
        let c = FallbackCounters::new(down.clone());
        let started = Instant::now();
        assert_eq!(c.get("k").await.unwrap(), 0);
        assert_eq!(c.get("k").await.unwrap(), 0);
        assert_eq!(
            started.elapsed(),
            PRIMARY_TIMEOUT,
            "the second call did not wait"
        );
        assert_eq!(down.calls.load(Ordering::SeqCst), 1);
    }

    #[tokio::test]
    async fn a_healthy_store_is_used_and_never_shadowed() {
        let shared = Arc::new(MemoryCounters::default());
        let c = FallbackCounters::new(shared.clone());
        c.try_add("k", 3, 10, u64::MAX).await.unwrap();
        assert_eq!(shared.get("k").await.unwrap(), 3);
        assert!(!c.is_degraded());
    }
}
