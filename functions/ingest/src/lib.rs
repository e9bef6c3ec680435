//! The `ingest` function's state and handler (a library so tests can call the handler).
//!
//! `GET` reports the stored version (`?format=raw` returns the stored JSON itself), `PUT`
//! replaces the knowledge base, `PATCH {"upsert", "delete"}` changes part of it. Every call
//! needs `Authorization: Bearer <token>`; writes need `If-Match: <etag>` (see
//! [`shared::ingest`] for the rules).

use std::sync::Arc;
use std::time::Duration;

use lambda_http::http::header::{self, HeaderValue};
use lambda_http::http::Method;
use lambda_http::{Body, Error, Request, RequestExt, Response};
use shared::http::{self, ApiError, Cors};
use shared::ingest::{IngestConfig, IngestService, Precondition};
use shared::telemetry::RequestLog;
use shared::{Config, ConversationStore, KbSource};

/// How long ingest audit records are kept in DynamoDB.
pub const AUDIT_TTL: Duration = Duration::from_secs(365 * 24 * 3600);

/// Everything a request needs, built once per cold start.
#[derive(Debug)]
pub struct AppState {
    /// The ingest operations over the configured source and audit store.
    pub ingest: IngestService,
    /// Largest accepted body (`INGEST_MAX_BYTES`).
    pub max_bytes: usize,
    /// Which browser origins may call.
    pub cors: Cors,
}

impl AppState {
    /// Reads the configuration and builds the source (`KB_SOURCE`) and the audit store
    /// (DynamoDB with `CONVERSATIONS_TABLE` and `AUDIT_TABLE`, else memory).
    ///
    /// Does not read the knowledge base: ingest must start when it is missing or corrupt,
    /// since a `PUT` is how it gets created or repaired.
    pub async fn from_env() -> Result<Self, Error> {
        let config = Config::from_env()?;
        let ingest = IngestConfig::from_env()?;
        let aws = shared::aws::AwsClients::from_env();
        let source = shared::kb::open_source(&config.kb_source, &aws).await;
        let store = shared::store::open_store(&config, AUDIT_TTL, &aws).await;
        if ingest.token_hash.is_none() {
            tracing::warn!("INGEST_TOKEN_SHA256 is not set: every ingest request is refused");
        }
        tracing::info!(source = %source.location(), store = store.kind(), "ingest ready");
        Ok(Self::new(source, store, &config, &ingest))
    }

    /// State over an already built source and store.
    pub fn new(
        source: Arc<dyn KbSource>,
        store: Arc<dyn ConversationStore>,
        config: &Config,
        ingest: &IngestConfig,
    ) -> Self {
        Self {
            ingest: IngestService::new(source, store, ingest.token_hash.clone()),
            max_bytes: ingest.max_bytes,
            cors: Cors::new(&config.allowed_origins),
        }
    }
}

/// Authenticates, dispatches on the method, encodes the result or the error.
pub async fn function_handler(state: &AppState, event: Request) -> Result<Response<Body>, Error> {
    let origin = http::origin(&event);
    if event.method() == Method::OPTIONS {
        return Ok(state.cors.preflight(origin, "GET, PUT, PATCH, OPTIONS"));
    }
    let request_id = http::request_id(&event);
    let log = RequestLog::start("ingest", &request_id);
    let mut res = match handle(state, &event, &request_id).await {
        Ok(res) => res,
        Err(Failure::Api(api)) => http::error_response(&api, &request_id, None),
        Err(Failure::Lib(err)) => {
            let api = ApiError::from(&err);
            let mut res = http::error_response(&api, &request_id, Some(&err));
            if api.status == 401 {
                res.headers_mut()
                    .insert(header::WWW_AUTHENTICATE, HeaderValue::from_static("Bearer"));
            }
            res
        }
    };
    log.finish_status(res.status().as_u16());
    state.cors.apply(origin, res.headers_mut());
    Ok(res)
}

/// An error from the HTTP edge itself, or from the library.
enum Failure {
    Api(ApiError),
    Lib(shared::Error),
}

impl From<ApiError> for Failure {
    fn from(e: ApiError) -> Self {
        Failure::Api(e)
    }
}

impl From<shared::Error> for Failure {
    fn from(e: shared::Error) -> Self {
        Failure::Lib(e)
    }
}

async fn handle(
    state: &AppState,
    event: &Request,
    request_id: &str,
) -> Result<Response<Body>, Failure> {
    // Before anything else, so an unauthenticated caller learns nothing (not even 405/413).
    let caller = state
        .ingest
        .authorize(header_str(event, header::AUTHORIZATION))?;
    let method = event.method().clone();
    if method == Method::GET {
        let raw = event
            .query_string_parameters_ref()
            .and_then(|p| p.first("format"))
            == Some("raw");
        if raw {
            let object = state.ingest.download().await?;
            let mut res = Response::new(Body::from(object.bytes));
            res.headers_mut().insert(
                header::CONTENT_TYPE,
                HeaderValue::from_static("application/json"),
            );
            return Ok(with_etag(res, &object.etag));
        }
        let status = state.ingest.status().await?;
        return Ok(with_etag(http::json_response(200, &status), &status.etag));
    }
    if method != Method::PUT && method != Method::PATCH {
        return Err(ApiError::method_not_allowed("GET, PUT or PATCH").into());
    }
    let body = http::body_bytes(event, state.max_bytes)?;
    let precondition = Precondition::from_headers(
        header_str(event, header::IF_MATCH),
        header_str(event, header::IF_NONE_MATCH),
    )?;
    let report = if method == Method::PUT {
        state
            .ingest
            .put(&caller, request_id, body, &precondition)
            .await?
    } else {
        state
            .ingest
            .patch(&caller, request_id, body, &precondition)
            .await?
    };
    let status = if report.previous_etag.is_none() {
        201
    } else {
        200
    };
    Ok(with_etag(
        http::json_response(status, &report),
        &report.etag,
    ))
}

fn header_str(event: &Request, name: header::HeaderName) -> Option<&str> {
    event.headers().get(name).and_then(|v| v.to_str().ok())
}

/// Sets the `ETag` header (quoted, as HTTP wants it).
fn with_etag(mut res: Response<Body>, etag: &str) -> Response<Body> {
    if let Ok(v) = HeaderValue::from_str(&format!("\"{etag}\"")) {
        res.headers_mut().insert(header::ETAG, v);
    }
    res
}
