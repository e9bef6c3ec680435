//! Logging set-up shared by the functions.

/// Installs the Lambda runtime's default subscriber: honours `AWS_LAMBDA_LOG_LEVEL`,
/// `RUST_LOG` and `AWS_LAMBDA_LOG_FORMAT=json` (one JSON object per line in CloudWatch).
pub fn init_tracing() {
    lambda_http::tracing::init_default_subscriber();
}
