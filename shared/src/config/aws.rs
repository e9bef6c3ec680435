//! AWS SDK configuration shared by every function's `main`, and the clients one function
//! instance makes from it ([`AwsClients`]).

use std::time::Duration;

use aws_config::retry::RetryConfig;
use aws_config::timeout::TimeoutConfig;
use aws_config::BehaviorVersion;

/// Attempts per SDK call, the first included; retries back off with jitter and only happen
/// for throttling and transient errors (the SDK's standard retry mode).
pub const AWS_MAX_ATTEMPTS: u32 = 3;

/// The backoff multiplier of the SDK's retries for throttling: retry 1 waits up to 100 ms,
/// retry 2 up to 200 ms. The SDK's default (1 s, so up to 3 s per call) is sized for batch
/// jobs; here a visitor is waiting, and the chat's own retry loop ([`crate::retry`]) keeps
/// trying within the request's budget after the SDK gives up. Other transient errors
/// already start at 50 ms under the latest behaviour version.
pub const AWS_THROTTLING_BACKOFF: Duration = Duration::from_millis(100);

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
/// with [`AWS_MAX_ATTEMPTS`] and [`AWS_THROTTLING_BACKOFF`], 3 s to connect, 5 s per attempt, 15 s
/// per call in all. Callers on a visitor's request bound their calls further with
/// [`crate::retry::retry_until`] (the chat's store calls do).
pub async fn sdk_config_from_env() -> aws_config::SdkConfig {
    aws_config::defaults(BehaviorVersion::latest())
        .retry_config(retry_config())
        .timeout_config(timeouts())
        .load()
        .await
}

/// The AWS clients of one function instance, each made on first use from one SDK
/// configuration that is loaded from the environment at most once.
///
/// The knowledge-base source, the conversation store and the limit counters all take
/// theirs from here, so a cold start loads the configuration once (each load walks the
/// provider chain and builds an HTTPS client) and the store and the counters share one
/// DynamoDB client and its connection pool. A local run that uses no AWS service never
/// loads the configuration at all: its provider chain would probe for a region and
/// credentials that do not exist.
#[derive(Debug, Default)]
pub struct AwsClients {
    sdk: tokio::sync::OnceCell<aws_config::SdkConfig>,
    dynamodb: tokio::sync::OnceCell<aws_sdk_dynamodb::Client>,
}

impl AwsClients {
    /// Clients configured by [`sdk_config_from_env`] when first needed.
    pub fn from_env() -> Self {
        Self::default()
    }

    /// Clients configured by `sdk` (tests point this at moto).
    pub fn with_config(sdk: aws_config::SdkConfig) -> Self {
        Self {
            sdk: tokio::sync::OnceCell::new_with(Some(sdk)),
            dynamodb: tokio::sync::OnceCell::new(),
        }
    }

    /// The SDK configuration, loaded on the first call.
    pub async fn sdk_config(&self) -> &aws_config::SdkConfig {
        self.sdk.get_or_init(sdk_config_from_env).await
    }

    /// The DynamoDB client, made on the first call; clones share its connection pool.
    pub async fn dynamodb(&self) -> aws_sdk_dynamodb::Client {
        let sdk = self.sdk_config().await;
        self.dynamodb
            .get_or_init(|| async { aws_sdk_dynamodb::Client::new(sdk) })
            .await
            .clone()
    }
}

/// The retries [`sdk_config_from_env`] applies (also used by test clients).
pub(crate) fn retry_config() -> RetryConfig {
    RetryConfig::standard()
        .with_max_attempts(AWS_MAX_ATTEMPTS)
        .with_initial_backoff(AWS_THROTTLING_BACKOFF)
}

/// The timeouts [`sdk_config_from_env`] applies (also used by test clients).
pub(crate) fn timeouts() -> TimeoutConfig {
    TimeoutConfig::builder()
        .connect_timeout(Duration::from_secs(3))
        .operation_attempt_timeout(Duration::from_secs(5))
        .operation_timeout(Duration::from_secs(15))
        .build()
}
