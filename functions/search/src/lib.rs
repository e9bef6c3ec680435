//! The `search` function's state and handler (a library so tests can call the handler).
//!
//! `GET ?q=&k=` plus filters (`type`, `year`, `venue`, `author`, `stars`, `role`, `has`,
//! `field.NAME`) and `sort`; `POST` one request or `{"queries": [...]}` (a batch). The `/mcp`
//! path is the same search as an MCP server (`mcp`, `docs/mcp.md`).

use lambda_http::http::Method;
use lambda_http::{Body, Error, Request, RequestExt, Response};
use shared::edge::{self, ApiError, Cors, RequestLog};
use shared::limits::{ClientLimit, ClientLimitConfig};
use shared::{Config, KbHandle, SearchCall, SearchRequest};

mod mcp;

/// Everything a request needs, built once per cold start.
pub struct AppState {
    /// The indexed knowledge base, re-checked every `KB_REFRESH_SECS`.
    pub kb: KbHandle,
    /// Hits per query when the request names none.
    pub top_k: usize,
    /// Lowest score a hit may have.
    pub min_score: f32,
    /// Which browser origins may call.
    pub cors: Cors,
    /// The MCP endpoint's search defaults and body limit (the search API's).
    pub mcp: shared::mcp::Endpoint,
    /// Requests per client and minute, as for the chat (`RATE_LIMIT_PER_MINUTE`, counted
    /// in `LIMITS_TABLE` when set).
    pub limit: ClientLimit,
}

impl AppState {
    /// Reads the configuration and loads the knowledge base from `KB_SOURCE` (a file or
    /// `s3://bucket/key`).
    pub async fn from_env() -> Result<Self, Error> {
        let config = Config::from_env()?;
        let aws = shared::config::AwsClients::from_env();
        let kb = KbHandle::from_config(&config, &aws).await?;
        let counters = shared::limits::open_counters(&config, &aws).await;
        let limit = ClientLimit::new(
            "search",
            ClientLimitConfig::from_lookup(|k| std::env::var(k).ok())?,
            counters,
        );
        Ok(Self {
            limit,
            ..Self::new(kb, &config)
        })
    }

    /// State over an already loaded knowledge base, with no rate limit.
    pub fn new(kb: KbHandle, config: &Config) -> Self {
        Self {
            kb,
            top_k: config.top_k,
            min_score: config.min_score,
            cors: Cors::new(&config.allowed_origins),
            mcp: shared::mcp::Endpoint {
                top_k: config.top_k,
                min_score: config.min_score,
                max_body_bytes: edge::MAX_BODY_BYTES,
            },
            limit: ClientLimit::off("search"),
        }
    }
}

/// Decodes a search request, runs it, encodes the hits.
pub async fn function_handler(state: &AppState, event: Request) -> Result<Response<Body>, Error> {
    if mcp::is_mcp_path(&event) {
        return Ok(mcp::handle(state, &event).await);
    }
    let origin = edge::origin(&event);
    if event.method() == Method::OPTIONS {
        return Ok(state.cors.preflight(origin, "GET, POST, OPTIONS"));
    }
    let request_id = edge::request_id(&event);
    let mut log = RequestLog::start("search", &request_id);
    let admitted = state
        .limit
        .admit(
            edge::source_ip(&event).as_deref(),
            std::time::SystemTime::now(),
        )
        .await;
    let mut res = match admitted
        .map_err(|e| ApiError::from(&e))
        .and_then(|()| parse(state, &event))
    {
        Ok(SearchCall::One(req)) => {
            let index = state.kb.current().await;
            let found = index.run(&req, state.min_score);
            log.hit_ids = found.hits.iter().map(|h| h.id.clone()).collect();
            edge::json_response(200, &found)
        }
        Ok(SearchCall::Batch(reqs)) => {
            let index = state.kb.current().await;
            let found = index.run_batch(&reqs, state.min_score);
            log.hit_ids = found
                .results
                .iter()
                .flat_map(|r| r.hits.iter().map(|h| h.id.clone()))
                .take(100)
                .collect();
            edge::json_response(200, &found)
        }
        Err(err) => edge::error_response(&err, &request_id, None),
    };
    log.finish_status(res.status().as_u16());
    state.cors.apply(origin, res.headers_mut());
    Ok(res)
}

fn parse(state: &AppState, event: &Request) -> Result<SearchCall, ApiError> {
    let req = match *event.method() {
        Method::GET => {
            let params = event.query_string_parameters_ref();
            // Sorted, so a request's filters are applied (and reported) the same every time.
            let names: std::collections::BTreeSet<&str> = params
                .iter()
                .flat_map(|p| p.iter().map(|(k, _)| k))
                .collect();
            SearchRequest::from_params(|k| params.and_then(|p| p.first(k)), names, state.top_k)
                .map(SearchCall::One)
        }
        Method::POST => {
            SearchCall::from_json(edge::body_bytes(event, edge::MAX_BODY_BYTES)?, state.top_k)
        }
        _ => return Err(ApiError::method_not_allowed("GET or POST")),
    };
    req.map_err(|e| ApiError::from(&e))
}
