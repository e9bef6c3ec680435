//! AWS SDK configuration shared by every function's `main`.

use std::time::Duration;

use aws_config::retry::RetryConfig;
use aws_config::timeout::TimeoutConfig;
use aws_config::BehaviorVersion;

/// Attempts per SDK call, the first included; retries back off with jitter and only happen
/// for throttling and transient errors (the SDK's standard retry mode).
pub const MAX_ATTEMPTS: u32 = 3;

/// The backoff multiplier of the SDK's retries for throttling: retry 1 waits up to 100 ms,
/// retry 2 up to 200 ms. The SDK's default (1 s, so up to 3 s per call) is sized for batch
/// jobs; here a visitor is waiting, and the chat's own retry loop ([`crate::retry`]) keeps
/// trying within the request's budget after the SDK gives up. Other transient errors
/// already start at 50 ms under the latest behaviour version.
pub const THROTTLING_BACKOFF: Duration = Duration::from_millis(100);

/// Loads the SDK configuration from the environment once per cold start.
///
/// Uses the default provider chain (Lambda's role credentials and `AWS_REGION` when deployed;
/// env vars or profiles locally). The chain also honours `AWS_ENDPOINT_URL` (and per-service
/// `AWS_ENDPOINT_URL_DYNAMODB`, `AWS_ENDPOINT_URL_S3`, ...), which is how a local run talks to
/// moto server; with a local endpoint also set `AWS_EC2_METADATA_DISABLED=true` and dummy keys,
/// or the chain first waits on instance metadata.
///
/// Retries and timeouts are set explicitly rather than inherited from SDK defaults, so what
/// a Lambda invocation can spend waiting on AWS is written down here: standard retry mode
/// with [`MAX_ATTEMPTS`] and [`THROTTLING_BACKOFF`], 3 s to connect, 5 s per attempt, 15 s
/// per call in all. Callers on a visitor's request bound their calls further with
/// [`crate::retry::retry_until`] (the chat's store calls do).
pub async fn sdk_config_from_env() -> aws_config::SdkConfig {
    aws_config::defaults(BehaviorVersion::latest())
        .retry_config(retry_config())
        .timeout_config(timeouts())
        .load()
        .await
}

/// The retries [`sdk_config_from_env`] applies (also used by test clients).
pub(crate) fn retry_config() -> RetryConfig {
    RetryConfig::standard()
        .with_max_attempts(MAX_ATTEMPTS)
        .with_initial_backoff(THROTTLING_BACKOFF)
}

/// The timeouts [`sdk_config_from_env`] applies (also used by test clients).
pub(crate) fn timeouts() -> TimeoutConfig {
    TimeoutConfig::builder()
        .connect_timeout(Duration::from_secs(3))
        .operation_attempt_timeout(Duration::from_secs(5))
        .operation_timeout(Duration::from_secs(15))
        .build()
}
