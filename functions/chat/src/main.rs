//! `chat` function: POST a question, get an answer as JSON or as Server-Sent Events; POST
//! `{"feedback": ...}` to rate an answer.
//!
//! Triggered by its function URL (invoke mode `RESPONSE_STREAM`); `GET` is a health check.
//! Env: `KB_SOURCE`, `TOP_K`, `MIN_SCORE`, `ALLOWED_ORIGINS`, `CONVERSATIONS_TABLE` +
//! `AUDIT_TABLE`, the `LLM_*` / `*_API_KEY` variables (none: offline answers),
//! `SYSTEM_PROMPT`(`_FILE`), `MAX_CONTEXT_TOKENS`, `LIMITS_TABLE`, `RATE_LIMIT_PER_MINUTE`,
//! `DAILY_TOKEN_BUDGET`, `QUERY_REWRITE`, `REWRITE_MODEL`, `QUERY_REWRITE_TIMEOUT_MS`,
//! `AUDIT_DUMP_FILE` (`docs/configuration.md`).
//! Local: `cargo lambda watch`, then `curl -N localhost:9000/lambda-url/chat/ -d '{"message":"hi","stream":true}'`.

use chat::{function_handler, AppState};
use lambda_http::{service_fn, Error, Request, StreamAdapter};
use shared::edge::RawQueryGuard;

#[tokio::main]
async fn main() -> Result<(), Error> {
    let state = shared::edge::cold_start(AppState::from_env()).await?;
    let handler = service_fn(move |event: Request| {
        let state = state.clone();
        async move { function_handler(&state, event).await }
    });
    // `lambda_http::run_with_streaming_response`, but a query string sent unescaped is escaped rather than a panic.
    lambda_http::lambda_runtime::run(RawQueryGuard(StreamAdapter::from(handler))).await
}
