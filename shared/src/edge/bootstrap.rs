//! What every function does before its first event: log set-up, then its state (the
//! configuration and the knowledge base), a failure logged with its cause.

use std::fmt::Display;
use std::future::Future;
use std::sync::Arc;

use super::init_tracing;

/// Starts a function: installs the log subscriber, then awaits `state`. A failure is
/// logged (`cold start failed`, with the cause in words: which object, which variable)
/// as well as returned, because the runtime prints only the error's debug form.
pub async fn cold_start<S, E: Display>(
    state: impl Future<Output = Result<S, E>>,
) -> Result<Arc<S>, E> {
    init_tracing();
    let state = state
        .await
        .inspect_err(|e| tracing::error!(error = %e, "cold start failed"))?;
    Ok(Arc::new(state))
}
