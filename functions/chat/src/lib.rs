//! The `chat` function's state and handler (a library so tests and benches can call the
//! handler directly).

mod sse;

use lambda_http::http::{header, Method};
use lambda_http::lambda_runtime::streaming::Body;
use lambda_http::{Error, Request, RequestExt, Response};
use shared::chat::{ChatConfig, ChatRequest, ChatService, Post, RequestContext};
use shared::config::AwsClients;
use shared::edge::{self, ApiError, Cors, RequestLog};
use shared::limits;
use shared::{Config, ConversationStore, KbHandle, LlmClient, LlmConfig};
use std::sync::Arc;

/// Everything a request needs, built once per cold start.
pub struct AppState {
    /// The served knowledge base, re-checked at most every `KB_REFRESH_SECS`; each request
    /// takes the current index (an `Arc`, so a refresh never disturbs answers in flight).
    pub kb: KbHandle,
    /// The chat orchestration (model, store, limits).
    pub chat: ChatService,
    /// Which browser origins may call.
    pub cors: Cors,
}

impl AppState {
    /// Reads the configuration, loads the knowledge base and builds the model client, the
    /// store (DynamoDB when both tables are named, else in memory) and the limit counters
    /// (DynamoDB when `LIMITS_TABLE` is named, else in memory). Reading the knowledge base
    /// is the only network call.
    pub async fn from_env() -> Result<Self, Error> {
        let config = Config::from_env()?;
        let chat_config = ChatConfig::from_env()?;
        // One SDK configuration and one DynamoDB client for the source, store and counters.
        let aws = AwsClients::from_env();
        let kb = KbHandle::from_config(&config, &aws).await?;
        let llm_config = LlmConfig::from_env()?;
        // The rewrite model (`REWRITE_MODEL`) is another model on the same provider.
        let rewrite_llm: Option<Arc<dyn LlmClient>> =
            match (&llm_config, &chat_config.rewrite_model) {
                (Some(c), Some(model)) => Some(shared::llm::client(LlmConfig {
                    model: model.clone(),
                    ..c.clone()
                })?),
                _ => None,
            };
        let llm: Option<Arc<dyn LlmClient>> = match llm_config {
            Some(c) => Some(shared::llm::client(c)?),
            None => None,
        };
        let store = shared::store::open_store(&config, chat_config.ttl(), &aws).await;
        let counters = limits::open_counters(&config, &aws).await;
        // Looked up by the first request that hashes an address, not here: init makes no
        // call beyond reading the knowledge base.
        let salt = limits::ClientSalt::lazy(chat_config.client_salt.clone(), counters.clone());
        tracing::info!(
            model = llm.as_ref().map_or("offline", |l| l.model()),
            rewrite_model = rewrite_llm.as_ref().map(|l| l.model()),
            query_rewrite = ?chat_config.query_rewrite,
            store = store.kind(),
            limits = counters.kind(),
            rate_limit_per_minute = chat_config.rate_limit_per_minute,
            daily_token_budget = chat_config.daily_token_budget,
            "chat ready"
        );
        let cache_ttl = chat_config.answer_cache_ttl();
        let mut state = Self::new(kb, llm, store, &config, chat_config);
        state.chat = state.chat.with_counters(counters, salt);
        if let Some(rewrite_llm) = rewrite_llm {
            state.chat = state.chat.with_rewrite_llm(rewrite_llm);
        }
        if let Some(cache) = shared::answer_cache::open_shared(&config, cache_ttl, &aws).await {
            state.chat = state.chat.with_cache(cache);
        }
        Ok(state)
    }

    /// State over already built parts (tests and benches use fakes here).
    pub fn new(
        kb: KbHandle,
        llm: Option<Arc<dyn LlmClient>>,
        store: Arc<dyn ConversationStore>,
        config: &Config,
        chat: ChatConfig,
    ) -> Self {
        Self {
            kb,
            chat: ChatService::new(llm, store, chat, config.top_k, config.min_score),
            cors: Cors::new(&config.allowed_origins),
        }
    }
}

/// `POST` answers (JSON, or SSE when asked) or stores a rating (`{"feedback": ...}`), `GET`
/// reports health (`GET ?challenge` issues a bot-check challenge), `OPTIONS` is the CORS
/// preflight.
pub async fn function_handler(state: &AppState, event: Request) -> Result<Response<Body>, Error> {
    let origin = edge::origin(&event);
    let request_id = edge::request_id(&event);
    let log = RequestLog::start("chat", &request_id);
    let mut res = match *event.method() {
        Method::OPTIONS => sse::whole(state.cors.preflight(origin, "GET, POST, OPTIONS")),
        Method::GET if wants_challenge(&event) => {
            sse::whole(challenge(state, &event, &request_id).await)
        }
        Method::GET => {
            let index = state.kb.current().await;
            sse::whole(edge::json_response(200, &state.chat.health(&index).await))
        }
        // Refused before parsing: a page the site does not trust gets nothing answered.
        Method::POST if state.cors.refuses(origin) => sse::whole(edge::error_response(
            &ApiError::origin_not_allowed(origin.unwrap_or_default()),
            &request_id,
            None,
        )),
        Method::POST => match parse(state, &event) {
            Err(err) => sse::whole(edge::error_response(&err, &request_id, None)),
            Ok(Post::Feedback(req)) => {
                let ctx =
                    RequestContext::new(request_id.clone()).with_client_ip(edge::source_ip(&event));
                sse::whole(match state.chat.feedback(&req, &ctx).await {
                    Ok(ack) => edge::json_response(200, &ack),
                    Err(e) => edge::error_response(&ApiError::from(&e), &request_id, Some(&e)),
                })
            }
            Ok(Post::Chat(req)) => {
                // The answer reports the request itself (a stream only once it is complete).
                let client_ip = edge::source_ip(&event);
                let mut res = answer(state, req, request_id, client_ip, log).await;
                state.cors.apply(origin, res.headers_mut());
                return Ok(res);
            }
        },
        _ => sse::whole(edge::error_response(
            &ApiError::method_not_allowed("GET or POST"),
            &request_id,
            None,
        )),
    };
    log.finish_status(res.status().as_u16());
    state.cors.apply(origin, res.headers_mut());
    Ok(res)
}

/// Answers a valid request, as a stream or as one JSON body, and reports it to `log`.
async fn answer(
    state: &AppState,
    req: ChatRequest,
    request_id: String,
    client_ip: Option<String>,
    mut log: RequestLog,
) -> Response<Body> {
    let ctx = RequestContext::new(request_id.clone()).with_client_ip(client_ip);
    // Limits are applied before a stream starts, so a refusal is a plain 429 (or 503).
    if let Err(e) = state.chat.admit(&req, &ctx).await {
        let res = edge::error_response(&ApiError::from(&e), &request_id, Some(&e));
        log.status = res.status().as_u16();
        log.finish_with_metrics();
        return sse::whole(res);
    }
    let index = state.kb.current().await;
    if req.stream {
        return sse::stream(&state.chat, index, req, ctx, log);
    }
    let res = match state.chat.chat(&index, req, ctx).await {
        Ok(answer) => {
            log.observe_response(&answer);
            edge::json_response(200, &answer)
        }
        Err(e) => edge::error_response(&ApiError::from(&e), &request_id, Some(&e)),
    };
    log.status = res.status().as_u16();
    log.finish_with_metrics();
    sse::whole(res)
}

/// Whether a `GET` asks for a bot-check challenge (`?challenge`, with or without a value).
fn wants_challenge(event: &Request) -> bool {
    event
        .query_string_parameters_ref()
        .is_some_and(|q| q.first("challenge").is_some())
}

/// A fresh bot-check challenge for the caller's address, or `{"bot_check": "off"}`; never
/// cached, since every challenge is new. Writes nothing.
async fn challenge(
    state: &AppState,
    event: &Request,
    request_id: &str,
) -> lambda_http::Response<lambda_http::Body> {
    let ip = edge::source_ip(event);
    let mut res = match state
        .chat
        .challenge(ip.as_deref(), std::time::SystemTime::now())
        .await
    {
        Ok(Some(c)) => edge::json_response(200, &c),
        Ok(None) => edge::json_response(200, &shared::limits::BOT_CHECK_OFF),
        Err(e) => {
            let e = shared::Error::from(e);
            edge::error_response(&ApiError::from(&e), request_id, Some(&e))
        }
    };
    res.headers_mut().insert(
        header::CACHE_CONTROL,
        header::HeaderValue::from_static("no-store"),
    );
    res
}

/// The validated question or rating; for a question, `Accept: text/event-stream` asks for
/// a stream too.
fn parse(state: &AppState, event: &Request) -> Result<Post, ApiError> {
    let body = edge::body_bytes(event, edge::MAX_BODY_BYTES)?;
    let mut post = Post::from_json(body, state.chat.config()).map_err(|e| ApiError::from(&e))?;
    if let Post::Chat(req) = &mut post {
        let accept = event
            .headers()
            .get(header::ACCEPT)
            .and_then(|v| v.to_str().ok());
        req.stream |= accept.is_some_and(|a| a.contains("text/event-stream"));
    }
    Ok(post)
}
