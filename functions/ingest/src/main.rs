//! `ingest` function: authenticated knowledge-base updates in S3 (or the local file).
//!
//! Triggered by its function URL: `GET` (version, counts), `PUT` (whole KB), `PATCH
//! {"upsert", "delete"}`, all with `Authorization: Bearer <token>`; writes with `If-Match`.
//! Env: `KB_SOURCE`, `INGEST_TOKEN_SHA256`, `INGEST_MAX_BYTES`, `CONVERSATIONS_TABLE` +
//! `AUDIT_TABLE` (audit), `ALLOWED_ORIGINS`. Local: `cargo lambda watch`, then
//! `rag ingest --url http://localhost:9000/lambda-url/ingest/ --token-env TOKEN kb.json`.

use ingest::{function_handler, AppState};
use lambda_http::{service_fn, Adapter, Error, Request};
use shared::edge::RawQueryGuard;

// Counts heap use, so a new knowledge base's index is measured before it is stored
// (`shared::memory`).
#[global_allocator]
static ALLOC: shared::heap::CountingAlloc = shared::heap::CountingAlloc;

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
