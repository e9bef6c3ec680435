//! The HTTP edge the three functions share: what is specific to serving over Lambda
//! function URLs, kept out of the services.
//!
//! - [`http`]: error bodies (every [`crate::Error`] mapped to a status and code), JSON
//!   responses and chat events on the wire, body limits, CORS, the client address.
//! - [`raw_query`]: function-URL query strings `lambda_http` would panic on, escaped.
//! - [`telemetry`]: log set-up, the per-request summary line and EMF metrics.

pub mod http;
pub mod raw_query;
pub mod telemetry;
