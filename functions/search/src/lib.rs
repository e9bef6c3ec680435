//! The `search` function's state and handler (a library so tests can call the handler).

use lambda_http::http::Method;
use lambda_http::{Body, Error, Request, RequestExt, Response};
use shared::http::{self, ApiError, Cors};
use shared::{Config, KbLocation, SearchIndex, SearchRequest};
use std::sync::Arc;

/// Everything a request needs, built once per cold start.
pub struct AppState {
    /// The indexed knowledge base.
    pub index: Arc<SearchIndex>,
    /// Hits per query when the request names none.
    pub top_k: usize,
    /// Lowest score a hit may have.
    pub min_score: f32,
    /// Which browser origins may call.
    pub cors: Cors,
}

impl AppState {
    /// Reads the configuration and loads the knowledge base.
    pub fn from_env() -> Result<Self, Error> {
        let config = Config::from_env()?;
        let index = match &config.kb_source {
            KbLocation::File(path) => SearchIndex::load_file(path)?,
            KbLocation::S3 { .. } => return Err("KB_SOURCE s3:// is not supported yet".into()),
        };
        Ok(Self::new(Arc::new(index), &config))
    }

    /// State over an already loaded index.
    pub fn new(index: Arc<SearchIndex>, config: &Config) -> Self {
        Self {
            index,
            top_k: config.top_k,
            min_score: config.min_score,
            cors: Cors::new(&config.allowed_origins),
        }
    }
}

/// Decodes a search request, runs it, encodes the hits.
pub async fn function_handler(state: &AppState, event: Request) -> Result<Response<Body>, Error> {
    let origin = http::origin(&event);
    if event.method() == Method::OPTIONS {
        return Ok(state.cors.preflight(origin, "GET, POST, OPTIONS"));
    }
    let mut res = match parse(state, &event) {
        Ok(req) => http::json_response(
            200,
            &state.index.search(&req.query, req.top_k, state.min_score),
        ),
        Err(err) => http::error_response(&err, &http::request_id(&event), None),
    };
    state.cors.apply(origin, res.headers_mut());
    Ok(res)
}

fn parse(state: &AppState, event: &Request) -> Result<SearchRequest, ApiError> {
    let req = match *event.method() {
        Method::GET => {
            let params = event.query_string_parameters_ref();
            let q = params.and_then(|p| p.first("q").or_else(|| p.first("query")));
            let k = params.and_then(|p| p.first("k").or_else(|| p.first("top_k")));
            SearchRequest::new(q, k, state.top_k)
        }
        Method::POST => {
            SearchRequest::from_json(http::body_bytes(event, http::MAX_BODY_BYTES)?, state.top_k)
        }
        _ => return Err(ApiError::method_not_allowed("GET or POST")),
    };
    req.map_err(|e| ApiError::from(&e))
}
