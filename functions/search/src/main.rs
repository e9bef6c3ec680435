//! `search` function: retrieval only, for a site's search box and for debugging.
//!
//! Triggered by its function URL: `GET ?q=...&k=...` or `POST {"query", "top_k"}`.
//! Env: `KB_SOURCE` (path or `s3://bucket/key`), `KB_REFRESH_SECS`, `TOP_K`, `MIN_SCORE`,
//! `ALLOWED_ORIGINS`, `LIMITS_TABLE`, `RATE_LIMIT_PER_MINUTE`, `CLIENT_HASH_SALT`,
//! `CLIENT_IPV6_PREFIX` (see `docs/configuration.md`).
//! Local: `cargo lambda watch`, then `curl 'localhost:9000/lambda-url/search/?q=LLaVA'`.

use lambda_http::{service_fn, Adapter, Error, Request};
use search::{function_handler, AppState};
use shared::edge::RawQueryGuard;

#[tokio::main]
async fn main() -> Result<(), Error> {
    let state = shared::edge::cold_start(AppState::from_env()).await?;
    let handler = service_fn(move |event: Request| {
        let state = state.clone();
        async move { function_handler(&state, event).await }
    });
    // `lambda_http::run`, but a query string sent unescaped is escaped rather than a panic.
    lambda_http::lambda_runtime::run(RawQueryGuard(Adapter::from(handler))).await
}
