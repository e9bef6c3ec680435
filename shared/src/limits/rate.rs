//! Requests per client and per session per minute, as fixed one-minute windows.
//!
//! A fixed window is one counter per key and minute: one atomic update per request, exact
//! under concurrency, and a `Retry-After` that is simply the rest of the minute. Its known
//! weakness (up to twice the rate across a window boundary) is acceptable for a chat
//! widget, where the point is to stop floods, not to meter.

use std::sync::Arc;
use std::time::SystemTime;

use super::{epoch_secs, Counters};
use crate::store::StoreError;

/// Why a request was refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limited {
    /// Whose limit was reached: `"client"` (the source address) or `"session"`.
    pub scope: &'static str,
    /// Seconds until the window ends (at least 1), sent as `Retry-After`.
    pub retry_after_secs: u64,
}

/// Admits at most `per_minute` requests per client and per session each minute.
#[derive(Clone)]
pub struct RateLimiter {
    counters: Arc<dyn Counters>,
    per_minute: u64,
}

impl std::fmt::Debug for RateLimiter {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RateLimiter")
            .field("per_minute", &self.per_minute)
            .field("counters", &self.counters.kind())
            .finish()
    }
}

impl RateLimiter {
    /// A limiter counting in `counters`; `per_minute` 0 admits everything.
    pub fn new(counters: Arc<dyn Counters>, per_minute: u64) -> Self {
        Self {
            counters,
            per_minute,
        }
    }

    /// The configured limit (0: off).
    pub fn per_minute(&self) -> u64 {
        self.per_minute
    }

    /// Counts one request at `now` from `client` (an opaque key: the salted hash of the
    /// source address) in an existing `session`, if any. `None` admits it; a refusal says
    /// whose limit was reached. The client is checked first, so a refused client does not
    /// use up its session's allowance. Throttled or failed updates are retried within
    /// [`LIMITS_BUDGET`](super::LIMITS_BUDGET); an update whose answer was lost and is
    /// retried may count twice, which errs towards refusing.
    pub async fn check(
        &self,
        client: &str,
        session: Option<&str>,
        now: SystemTime,
    ) -> Result<Option<Limited>, StoreError> {
        if self.per_minute == 0 {
            return Ok(None);
        }
        let secs = epoch_secs(now);
        let minute = secs / 60;
        let window_end = (minute + 1) * 60;
        // A minute of slack before the TTL, so a counter never disappears within its window
        // on a clock that runs a little behind DynamoDB's.
        let expires_at = window_end + 60;
        let deadline = tokio::time::Instant::now() + super::LIMITS_BUDGET;
        let scopes = [("client", Some(client)), ("session", session)];
        for (scope, id) in scopes {
            let Some(id) = id else { continue };
            let key = format!("rate:{scope}:{id}:{minute}");
            let admitted = super::retried(deadline, || {
                self.counters.try_add(&key, 1, self.per_minute, expires_at)
            })
            .await?;
            if admitted.is_none() {
                return Ok(Some(Limited {
                    scope,
                    retry_after_secs: (window_end - secs).max(1),
                }));
            }
        }
        Ok(None)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::limits::MemoryCounters;
    use std::time::{Duration, UNIX_EPOCH};

    fn at(secs: u64) -> SystemTime {
        UNIX_EPOCH + Duration::from_secs(secs)
    }

    fn limiter(per_minute: u64) -> RateLimiter {
        RateLimiter::new(Arc::new(MemoryCounters::default()), per_minute)
    }

    #[tokio::test]
    async fn admits_the_limit_per_minute_then_says_how_long_to_wait() {
        // Far in the future so the memory store does not treat the windows as expired.
        let base = 60 * 40_000_000;
        let l = limiter(2);
        assert_eq!(l.check("c", None, at(base + 5)).await.unwrap(), None);
        assert_eq!(l.check("c", None, at(base + 6)).await.unwrap(), None);
        let refused = l.check("c", None, at(base + 45)).await.unwrap();
        assert_eq!(
            refused,
            Some(Limited {
                scope: "client",
                retry_after_secs: 15
            })
        );
        assert_eq!(l.check("other", None, at(base + 45)).await.unwrap(), None);
        assert_eq!(
            l.check("c", None, at(base + 60)).await.unwrap(),
            None,
            "a new minute starts a new window"
        );
    }

    #[tokio::test]
    async fn a_session_is_limited_across_clients() {
        let base = 60 * 40_000_000;
        let l = limiter(1);
        assert_eq!(l.check("a", Some("s"), at(base)).await.unwrap(), None);
        let refused = l.check("b", Some("s"), at(base + 59)).await.unwrap();
        assert_eq!(
            refused,
            Some(Limited {
                scope: "session",
                retry_after_secs: 1
            })
        );
    }

    #[tokio::test]
    async fn zero_is_off() {
        let l = limiter(0);
        for _ in 0..100 {
            assert_eq!(
                l.check("c", Some("s"), SystemTime::now()).await.unwrap(),
                None
            );
        }
    }
}
