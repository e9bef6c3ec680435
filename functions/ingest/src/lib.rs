//! The `ingest` function's state and handler (a library so tests can call the handler).
//!
//! `GET` reports the stored version (`?format=raw` returns the stored JSON itself), `PUT`
//! replaces the knowledge base, `PATCH {"upsert", "delete"}` changes part of it. A knowledge
//! base too large for one request is staged: `POST ?stage=1[&bytes=N]` answers a presigned
//! upload URL and a staging key, `POST ?promote=<key>` validates the uploaded object and
//! writes it like a `PUT`. Every call needs `Authorization: Bearer <token>`; writes need
//! `If-Match: <etag>` (see [`shared::ingest`] for the rules).

use std::sync::Arc;
use std::time::Duration;

use lambda_http::http::header::{self, HeaderValue};
use lambda_http::http::Method;
use lambda_http::{Body, Error, Request, RequestExt, Response};
use shared::edge::{self, ApiError, Cors, RequestLog};
use shared::ingest::StagingArea;
use shared::ingest::{IngestConfig, IngestService, Precondition};
use shared::{Config, ConversationStore, KbLocation, KbSource, S3KbSource};

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
    /// Largest staged knowledge base (`INGEST_MAX_STAGED_BYTES`).
    pub max_staged_bytes: usize,
    /// Whether staged uploads are on (the knowledge base is in S3).
    pub staged_uploads: bool,
}

impl AppState {
    /// Reads the configuration and builds the source (`KB_SOURCE`), the audit store
    /// (DynamoDB with `CONVERSATIONS_TABLE` and `AUDIT_TABLE`, else memory) and, for a
    /// knowledge base in S3, the staging area (`INGEST_STAGING_PREFIX` in the same bucket).
    ///
    /// Does not read the knowledge base: ingest must start when it is missing or corrupt,
    /// since a `PUT` is how it gets created or repaired.
    pub async fn from_env() -> Result<Self, Error> {
        let config = Config::from_env()?;
        let ingest = IngestConfig::from_env()?;
        // One SDK configuration for the source, the staging area and the store.
        let aws = shared::config::AwsClients::from_env();
        let store = shared::store::open_store(&config, AUDIT_TTL, &aws).await;
        if ingest.token_hash.is_none() {
            tracing::warn!("INGEST_TOKEN_SHA256 is not set: every ingest request is refused");
        }
        let state = match &config.kb_source {
            KbLocation::S3 { bucket, key } => {
                if key.starts_with(&ingest.staging_prefix) {
                    return Err(format!(
                        "INGEST_STAGING_PREFIX {:?} holds the live key {key:?}: choose \
                         another prefix",
                        ingest.staging_prefix
                    )
                    .into());
                }
                let source = S3KbSource::from_sdk_config(aws.sdk_config().await, bucket, key);
                let staging = Arc::new(source.staging(ingest.staging_prefix.clone()));
                Self::new(Arc::new(source), store, &config, &ingest).with_staging(staging)
            }
            KbLocation::File(_) => {
                let source = shared::kb::open_source(&config.kb_source, &aws).await;
                Self::new(source, store, &config, &ingest)
            }
        };
        tracing::info!(
            source = %state.ingest.source().location(),
            staging = state.staged_uploads,
            "ingest ready"
        );
        Ok(state)
    }

    /// State over an already built source and store.
    pub fn new(
        source: Arc<dyn KbSource>,
        store: Arc<dyn ConversationStore>,
        config: &Config,
        ingest: &IngestConfig,
    ) -> Self {
        Self {
            ingest: IngestService::new(source, store, ingest.token_hash.clone())
                .with_index_memory(ingest.index_memory_mb),
            max_bytes: ingest.max_bytes,
            cors: Cors::new(&config.allowed_origins),
            max_staged_bytes: ingest.max_staged_bytes,
            staged_uploads: false,
        }
    }

    /// The same state accepting staged uploads in `area` (`POST ?stage=1`).
    pub fn with_staging(mut self, area: Arc<dyn StagingArea>) -> Self {
        self.ingest = self.ingest.with_staging(area, self.max_staged_bytes);
        self.staged_uploads = true;
        self
    }
}

/// Authenticates, dispatches on the method, encodes the result or the error.
pub async fn function_handler(state: &AppState, event: Request) -> Result<Response<Body>, Error> {
    let origin = edge::origin(&event);
    if event.method() == Method::OPTIONS {
        return Ok(state
            .cors
            .preflight(origin, "GET, PUT, PATCH, POST, OPTIONS"));
    }
    let request_id = edge::request_id(&event);
    let log = RequestLog::start("ingest", &request_id);
    let mut res = match handle(state, &event, &request_id).await {
        Ok(res) => res,
        Err(Failure::Api(api)) => edge::error_response(&api, &request_id, None),
        Err(Failure::Lib(err)) => {
            let api = ApiError::from(&err);
            let mut res = edge::error_response(&api, &request_id, Some(&err));
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
        return Ok(with_etag(edge::json_response(200, &status), &status.etag));
    }
    if method != Method::PUT && method != Method::PATCH && method != Method::POST {
        return Err(ApiError::method_not_allowed("GET, PUT, PATCH or POST").into());
    }
    let body = edge::body_bytes(event, state.max_bytes)?;
    let query = event.query_string_parameters_ref();
    let param = |name: &str| query.and_then(|p| p.first(name));
    if method == Method::POST && param("stage").is_some() {
        let declared = param("bytes")
            .map(|n| {
                n.parse::<u64>().map_err(|_| {
                    ApiError::bad_request(format!("bytes must be a byte count, got {n:?}"))
                })
            })
            .transpose()?;
        let ticket = state.ingest.stage(request_id, declared).await?;
        return Ok(edge::json_response(201, &ticket));
    }
    let precondition = Precondition::from_headers(
        header_str(event, header::IF_MATCH),
        header_str(event, header::IF_NONE_MATCH),
    )?;
    if method == Method::POST {
        let key = param("promote").ok_or_else(|| {
            ApiError::bad_request("POST needs ?stage=1 (get an upload URL) or ?promote=<key>")
        })?;
        let report = state
            .ingest
            .promote(&caller, request_id, key, &precondition)
            .await?;
        return Ok(written(report));
    }
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
    Ok(written(report))
}

/// A write's report: 201 when it created the first version, else 200.
fn written(report: shared::ingest::WriteReport) -> Response<Body> {
    let status = if report.previous_etag.is_none() {
        201
    } else {
        200
    };
    with_etag(edge::json_response(status, &report), &report.etag)
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
