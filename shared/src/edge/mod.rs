//! The HTTP edge the three functions share: what is specific to serving over Lambda
//! function URLs, kept out of the services.
//!
//! - `http`: error bodies ([`ApiError`]: every [`crate::Error`] mapped to a status and
//!   code), JSON responses and chat events on the wire, body limits, [`Cors`], the client
//!   address.
//! - `raw_query`: function-URL query strings `lambda_http` would panic on, escaped
//!   ([`RawQueryGuard`]).
//! - `telemetry`: log set-up, the per-request summary line ([`RequestLog`]) and EMF metrics.
//! - `bootstrap`: a function's start ([`cold_start`]), shared by the three `main.rs`.

mod bootstrap;
mod http;
mod raw_query;
mod telemetry;

pub use bootstrap::cold_start;
pub use http::{
    body_bytes, error_response, json_response, origin, request_id, source_ip, sse_event, ApiError,
    Cors, MAX_BODY_BYTES,
};
pub use raw_query::{escape_raw_query, RawQueryGuard};
pub use telemetry::{init_tracing, Metric, RequestLog};
