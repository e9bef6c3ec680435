//! Retrying a fallible async operation until a deadline.
//!
//! The AWS SDK retries on its own, a few times and briefly. This is the outer loop for work a
//! request must not lose and must not wait on forever (the chat's store calls), and the one
//! retry loop of the model client ([`crate::llm`]): transient failures are tried again with
//! exponential backoff and jitter (or after the wait the far side asked for), and nothing
//! runs past the caller's deadline. Each attempt is itself cut off at the deadline, so a dependency that
//! hangs (a black-holed endpoint) costs at most the budget, not the SDK's own timeouts.
//!
//! Cutting an attempt short means it may still have taken effect on the far side; callers
//! use it for idempotent operations (a chat exchange is keyed by its request id).
//!
//! ```no_run
//! # async fn demo(store: &dyn shared::ConversationStore, ex: &shared::Exchange) {
//! use std::time::Duration;
//! use shared::retry::retry_until;
//! use shared::StoreError;
//! let deadline = tokio::time::Instant::now() + Duration::from_secs(3);
//! let written = retry_until(deadline, StoreError::is_retryable, || store.record_exchange(ex)).await;
//! # let _ = written;
//! # }
//! ```

use std::fmt;
use std::future::Future;
use std::time::Duration;

use tokio::time::{timeout_at, Instant};

/// The deadline passed while an attempt was still running; the attempt was abandoned.
///
/// Error types used with [`retry_until`] convert from it (`From<DeadlineExceeded>`), so the
/// caller gets its own error type back either way.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DeadlineExceeded {
    /// Attempts started, the abandoned one included.
    pub attempts: u32,
    /// How the attempt before the abandoned one failed, if there was one: usually the
    /// reason the work was still being retried.
    pub last_error: Option<String>,
}

impl fmt::Display for DeadlineExceeded {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let plural = if self.attempts == 1 { "" } else { "s" };
        write!(
            f,
            "no answer within the time budget ({} attempt{plural}",
            self.attempts
        )?;
        match &self.last_error {
            Some(e) => write!(f, "; before that: {e})"),
            None => f.write_str(")"),
        }
    }
}

impl std::error::Error for DeadlineExceeded {}

/// How a failed attempt is treated.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verdict {
    /// Not worth another attempt: the error is returned at once.
    Fatal,
    /// Transient: try again after the backoff's delay.
    Retry,
    /// Transient, and the far side said when to come back (HTTP `Retry-After`): try again
    /// after exactly this long instead of the backoff's delay.
    RetryAfter(Duration),
}

/// Exponential backoff: `first · 2^retry`, capped at `max`, each delay jittered into
/// `[d/2, d]` so that many Lambda instances hit by the same outage do not retry in lockstep;
/// at most `max_retries` retries.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Backoff {
    /// The delay before the first retry (before jitter).
    pub first: Duration,
    /// The longest delay, whatever the retry number.
    pub max: Duration,
    /// Retries after the first attempt; the deadline usually stops them first.
    pub max_retries: u32,
}

impl Backoff {
    /// 50 ms, doubling to at most 800 ms, as many retries as the deadline allows: several
    /// tries fit in a budget of a few seconds, and a throttled table gets time to recover
    /// between them.
    pub const DEFAULT: Backoff = Backoff {
        first: Duration::from_millis(50),
        max: Duration::from_millis(800),
        max_retries: u32::MAX,
    };

    /// The jittered delay before retry number `retry` (0 for the first retry).
    pub fn delay(&self, retry: u32) -> Duration {
        let base = self.first.saturating_mul(1 << retry.min(16)).min(self.max);
        base / 2 + base.mul_f64(fastrand::f64() / 2.0)
    }

    /// Runs `op` until it succeeds, fails with an error `is_retryable` rejects, or
    /// `deadline` comes.
    ///
    /// Returns the first success, a non-retryable error at once, the last error when the
    /// next delay would end past the deadline, or [`DeadlineExceeded`] (converted to `E`)
    /// when the deadline cut an attempt short. Every retry is logged at `warn`.
    pub async fn retry_until<T, E, F, Fut>(
        &self,
        deadline: Instant,
        is_retryable: impl Fn(&E) -> bool,
        op: F,
    ) -> Result<T, E>
    where
        E: From<DeadlineExceeded> + fmt::Display,
        F: FnMut() -> Fut,
        Fut: Future<Output = Result<T, E>>,
    {
        let verdict = |e: &E| {
            if is_retryable(e) {
                Verdict::Retry
            } else {
                Verdict::Fatal
            }
        };
        self.run(deadline, verdict, E::from, op).await
    }

    /// The loop behind [`Backoff::retry_until`], for callers whose errors carry more than
    /// retryable-or-not: `verdict` judges each failure (and may name the wait), and
    /// `on_deadline` makes the caller's error when the deadline cuts an attempt short.
    pub async fn run<T, E, F, Fut>(
        &self,
        deadline: Instant,
        verdict: impl Fn(&E) -> Verdict,
        on_deadline: impl FnOnce(DeadlineExceeded) -> E,
        mut op: F,
    ) -> Result<T, E>
    where
        E: fmt::Display,
        F: FnMut() -> Fut,
        Fut: Future<Output = Result<T, E>>,
    {
        let mut attempts = 0;
        let mut last_error = None;
        loop {
            attempts += 1;
            let error = match timeout_at(deadline, op()).await {
                Ok(Ok(value)) => return Ok(value),
                Ok(Err(e)) => e,
                Err(_elapsed) => {
                    return Err(on_deadline(DeadlineExceeded {
                        attempts,
                        last_error,
                    }))
                }
            };
            let retry = attempts - 1;
            let delay = match verdict(&error) {
                _ if retry >= self.max_retries => return Err(error),
                Verdict::Fatal => return Err(error),
                Verdict::Retry => self.delay(retry),
                Verdict::RetryAfter(wait) => wait,
            };
            // Sleeping past the deadline would only turn this error into a timeout.
            if Instant::now() + delay >= deadline {
                return Err(error);
            }
            tracing::warn!(
                attempt = attempts,
                delay_ms = u64::try_from(delay.as_millis()).unwrap_or(u64::MAX),
                error = %error,
                "transient failure, retrying"
            );
            tokio::time::sleep(delay).await;
            last_error = Some(error.to_string());
        }
    }
}

impl Default for Backoff {
    fn default() -> Self {
        Self::DEFAULT
    }
}

/// [`Backoff::retry_until`] with [`Backoff::DEFAULT`].
pub async fn retry_until<T, E, F, Fut>(
    deadline: Instant,
    is_retryable: impl Fn(&E) -> bool,
    op: F,
) -> Result<T, E>
where
    E: From<DeadlineExceeded> + fmt::Display,
    F: FnMut() -> Fut,
    Fut: Future<Output = Result<T, E>>,
{
    Backoff::DEFAULT
        .retry_until(deadline, is_retryable, op)
        .await
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicU32, Ordering};

    #[derive(Debug, PartialEq)]
    enum TestError {
        Busy(u32),
        Fatal,
        Late(DeadlineExceeded),
    }

    impl fmt::Display for TestError {
        fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            write!(f, "{self:?}")
        }
    }

    impl From<DeadlineExceeded> for TestError {
        fn from(e: DeadlineExceeded) -> Self {
            TestError::Late(e)
        }
    }

    fn busy(e: &TestError) -> bool {
        matches!(e, TestError::Busy(_))
    }

    const FAST: Backoff = Backoff {
        first: Duration::from_millis(2),
        max: Duration::from_millis(8),
        max_retries: u32::MAX,
    };

    #[tokio::test]
    async fn transient_failures_are_retried_until_the_operation_succeeds() {
        let calls = AtomicU32::new(0);
        let deadline = Instant::now() + Duration::from_secs(5);
        let got = FAST
            .retry_until(deadline, busy, || async {
                match calls.fetch_add(1, Ordering::SeqCst) {
                    n @ 0..=2 => Err(TestError::Busy(n)),
                    n => Ok(n),
                }
            })
            .await;
        assert_eq!(got, Ok(3));
        assert_eq!(calls.load(Ordering::SeqCst), 4);
    }

    #[tokio::test]
    async fn a_permanent_failure_is_returned_without_retrying() {
        let calls = AtomicU32::new(0);
        let deadline = Instant::now() + Duration::from_secs(5);
        let got: Result<(), _> = FAST
            .retry_until(deadline, busy, || async {
                calls.fetch_add(1, Ordering::SeqCst);
                Err(TestError::Fatal)
            })
            .await;
        assert_eq!(got, Err(TestError::Fatal));
        assert_eq!(calls.load(Ordering::SeqCst), 1);
    }

    /// `fut`'s output, or a panic when it has not ended after an hour of (paused) time: a
    /// loop that ignores its deadline fails the test instead of hanging it.
    async fn ended<T>(fut: impl Future<Output = T>) -> T {
        tokio::time::timeout(Duration::from_secs(3600), fut)
            .await
            .expect("still retrying long after the deadline")
    }

    // Paused time: the runtime jumps the clock to the next timer whenever every task waits,
    // so the deadline arithmetic is exact and nothing waits in real time.
    #[tokio::test(start_paused = true)]
    async fn persistent_transient_failures_stop_at_the_deadline_with_the_last_error() {
        let calls = AtomicU32::new(0);
        let start = Instant::now();
        let budget = Duration::from_millis(150);
        let got: Result<(), _> = ended(FAST.retry_until(start + budget, busy, || async {
            Err(TestError::Busy(calls.fetch_add(1, Ordering::SeqCst)))
        }))
        .await;
        let n = calls.load(Ordering::SeqCst);
        assert_eq!(
            got,
            Err(TestError::Busy(n - 1)),
            "the last error comes back"
        );
        assert!(n > 5, "only {n} attempts in {budget:?}");
        // It gives up at the deadline, not a backoff round later: the last delay that still
        // fit ended by the deadline (tokio's timers round up to the millisecond, so exactly
        // at it is possible), and no delay is longer than the backoff's cap.
        let took = start.elapsed();
        assert!(took <= budget && took + FAST.max >= budget, "ran {took:?}");
    }

    #[tokio::test(start_paused = true)]
    async fn an_attempt_that_hangs_is_abandoned_at_the_deadline() {
        let calls = AtomicU32::new(0);
        let start = Instant::now();
        let budget = Duration::from_millis(100);
        let got: Result<(), _> = ended(FAST.retry_until(start + budget, busy, || async {
            if calls.fetch_add(1, Ordering::SeqCst) == 0 {
                Err(TestError::Busy(0))
            } else {
                std::future::pending().await
            }
        }))
        .await;
        assert_eq!(
            got,
            Err(TestError::Late(DeadlineExceeded {
                attempts: 2,
                last_error: Some("Busy(0)".into())
            }))
        );
        assert_eq!(start.elapsed(), budget, "returned at the deadline");
    }

    #[tokio::test(start_paused = true)]
    async fn a_retry_after_replaces_the_backoff_and_max_retries_caps_the_attempts() {
        let calls = AtomicU32::new(0);
        let start = Instant::now();
        let capped = Backoff {
            max_retries: 2,
            ..FAST
        };
        let wait = Duration::from_secs(1);
        let got: Result<(), _> = ended(capped.run(
            start + Duration::from_secs(60),
            |_: &TestError| Verdict::RetryAfter(wait),
            TestError::Late,
            || async { Err(TestError::Busy(calls.fetch_add(1, Ordering::SeqCst))) },
        ))
        .await;
        assert_eq!(got, Err(TestError::Busy(2)));
        assert_eq!(calls.load(Ordering::SeqCst), 3, "one attempt + two retries");
        assert_eq!(start.elapsed(), wait * 2, "waited as asked, twice");
    }

    #[tokio::test(start_paused = true)]
    async fn a_retry_after_past_the_deadline_returns_the_error_at_once() {
        let calls = AtomicU32::new(0);
        let start = Instant::now();
        let got: Result<(), _> = ended(FAST.run(
            start + Duration::from_secs(1),
            |_: &TestError| Verdict::RetryAfter(Duration::from_secs(5)),
            TestError::Late,
            || async { Err(TestError::Busy(calls.fetch_add(1, Ordering::SeqCst))) },
        ))
        .await;
        assert_eq!(got, Err(TestError::Busy(0)));
        assert_eq!(start.elapsed(), Duration::ZERO);
    }

    #[test]
    fn delays_double_up_to_the_cap_and_keep_at_least_half() {
        let b = Backoff {
            first: Duration::from_millis(100),
            max: Duration::from_millis(1000),
            max_retries: u32::MAX,
        };
        for (retry, full) in [
            (0, 100),
            (1, 200),
            (2, 400),
            (3, 800),
            (4, 1000),
            (30, 1000),
        ] {
            let full = Duration::from_millis(full);
            for _ in 0..50 {
                let d = b.delay(retry);
                assert!(d >= full / 2 && d <= full, "retry {retry}: {d:?}");
            }
        }
        // Jitter: fifty draws are not all the same.
        let draws: std::collections::HashSet<Duration> = (0..50).map(|_| b.delay(3)).collect();
        assert!(draws.len() > 1);
    }

    #[test]
    fn the_deadline_error_says_how_many_attempts_ran_and_why_they_were_retried() {
        let late = |attempts, last: Option<&str>| DeadlineExceeded {
            attempts,
            last_error: last.map(str::to_owned),
        };
        assert_eq!(
            late(3, Some("throttled")).to_string(),
            "no answer within the time budget (3 attempts; before that: throttled)"
        );
        assert_eq!(
            late(1, None).to_string(),
            "no answer within the time budget (1 attempt)"
        );
    }
}
