//! The chat service: one visitor question in, one answer out (whole or streamed), with
//! the turn and its audit record stored.
//!
//! Per request: resolve the session and its history (the client's turns, else the store's
//! for a known session) → retrieve, resolving follow-ups (`followup`) → build the
//! prompt within the token budget ([`crate::prompt`]) → ask the model, or compose the
//! offline answer when none is configured → record the exchange
//! ([`ConversationStore::record_exchange`], idempotent on the request id).
//!
//! Before any of that, [`ChatService::admit`] applies the bot check and the per-client and
//! per-session rate limits ([`Admission`]; the edge answers 429 before a stream starts), and a turn calls the model only
//! with a reservation on the daily token budget ([`crate::limits`]); without one it is
//! answered offline, labelled as such.
//!
//! Failures after validation are handled here, not by the caller:
//! - the history cannot be read (within a short budget): the turn is answered without it
//!   (logged);
//! - the model fails: the user turn is still recorded, with the failure as the audit
//!   outcome; [`ChatService::chat`] returns the error (the edge answers 502/503/504) and
//!   [`ChatService::chat_stream`] emits an `error` event;
//! - the record cannot be written, even after retries within a budget: the answer is still
//!   delivered and the whole exchange is logged as `unrecorded_turn`, to be written later
//!   (see `storage`).
//!
//! Nothing here knows about HTTP or Lambda: the `chat` function maps requests and results.

mod config;
mod delivery;
mod feedback;
mod followup;
mod health;
mod offline;
mod outcome;
mod request;
mod response;
mod retrieve;
mod rewrite;
mod session;
mod storage;
mod style;
mod suggest;
pub use rewrite::{rewrites_first_question, QueryRewrite};
pub use storage::{StoreBudgets, HISTORY_BUDGET, RECORD_BUDGET};
pub use style::AnswerStyle;
pub use suggest::{suggestions, Handoff, Suggestion, MAX_SUGGESTIONS};

use crate::limits::short_digest;
use std::sync::Arc;
use std::time::{Duration, Instant, SystemTime};

pub use config::ChatConfig;
pub use feedback::{feedback_token, FeedbackAck, FeedbackRequest, MAX_COMMENT_CHARS};
pub use followup::{retrieve_followup, Retrieval};
pub use offline::{is_chinese, offline_answer, offline_deltas, OfflineReason};
use outcome::{audit_label, Outcome};
pub use outcome::{Label, ModelFailure, OFFLINE_MODEL};
pub use request::{is_valid_id, ChatRequest, Post, MAX_ID_CHARS};
pub use response::{
    ChatEvent, ChatResponse, DoneEvent, Health, IndexReport, LimitsReport, RetrievalInfo, Source,
    SourcesEvent, Timings,
};

use crate::answer_cache::{cache_key, AnswerCache, AnswerShape, CachedAnswer, MemoryAnswerCache};
use crate::error::Error;
use crate::grounding::{self, Grounding};
use crate::limits::{
    random_salt, Admission, Challenge, ClientSalt, Counters, MemoryCounters, RateLimiter,
    Reservation, TokenBudget,
};
use crate::llm::{CompletionRequest, LlmClient};
use crate::message::Usage;
use crate::prompt::{build_prompt, estimate_tokens, Prompt, PromptInput, ANSWER_RESERVE};
use crate::retrieval::Ranked;
use crate::search::SearchIndex;
use crate::store::StoreError;
use crate::store::{AuditRecord, ConversationStore, Exchange};
use delivery::Delivery;

/// Most answers an instance keeps in memory when the cache is not DynamoDB's. Each is at
/// most [`reply_cap_chars`] characters, so this bounds the cache to a few MB.
pub const MEMORY_CACHE_ANSWERS: usize = 256;

/// Longest wait for the answer cache, read or write; past it the turn goes on without.
pub const CACHE_BUDGET: Duration = Duration::from_millis(300);

/// Where a streamed chat sends its events (the HTTP edge frames them as SSE).
#[async_trait::async_trait]
pub trait EventSink: Send {
    /// Delivers one event; `false` when the client has gone away (the chat then stops and
    /// drops the model stream, which cancels the upstream call).
    async fn send(&mut self, event: ChatEvent) -> bool;
}

#[async_trait::async_trait]
impl EventSink for tokio::sync::mpsc::Sender<ChatEvent> {
    async fn send(&mut self, event: ChatEvent) -> bool {
        tokio::sync::mpsc::Sender::send(self, event).await.is_ok()
    }
}

/// Facts about the invocation that are not in the body.
#[derive(Debug, Clone)]
pub struct RequestContext {
    /// The invocation's request id, used when the body names none.
    pub request_id: String,
    /// When the request arrived (for timings).
    pub received: Instant,
    /// The same moment on the wall clock (orders stored turns).
    pub at: SystemTime,
    /// The caller's network address, if known; only its salted hash is ever stored.
    pub client_ip: Option<String>,
}

impl RequestContext {
    /// A context for a request arriving now.
    pub fn new(request_id: impl Into<String>) -> Self {
        Self {
            request_id: request_id.into(),
            received: Instant::now(),
            at: SystemTime::now(),
            client_ip: None,
        }
    }

    /// The same context with the caller's address.
    pub fn with_client_ip(mut self, ip: Option<String>) -> Self {
        self.client_ip = ip;
        self
    }
}

/// The key a turn is recorded under when the client names its request: the client's id,
/// a dot, and a hash of the session and the question. A true retry (same id, session and
/// question) maps to the same key and is recorded once; an id reused for another question
/// or in another session gets its own key, so a turn that was answered is never dropped as
/// a "duplicate" of a different one.
pub fn idempotency_key(client_id: &str, session_id: &str, question: &str) -> String {
    let digest = short_digest(&[session_id.as_bytes(), question.as_bytes()]);
    format!("{client_id}.{digest}")
}

/// The chat orchestration, shared by every request of a warm instance. Cheap to clone
/// (everything is behind `Arc`), so a streamed answer can move a copy into its task.
#[derive(Clone)]
pub struct ChatService {
    llm: Option<Arc<dyn LlmClient>>,
    /// The model that expands questions (`REWRITE_MODEL`), when not the answering one.
    rewrite_llm: Option<Arc<dyn LlmClient>>,
    store: Arc<dyn ConversationStore>,
    config: Arc<ChatConfig>,
    top_k: usize,
    min_score: f32,
    /// The bot check and rate limits a request passes first; its salt also keys the audit
    /// records and signs session ids and feedback tokens.
    admission: Admission,
    budget: TokenBudget,
    /// Answers to first-turn questions, reused without a model call (`ANSWER_CACHE`).
    cache: Option<Arc<dyn AnswerCache>>,
}

impl std::fmt::Debug for ChatService {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ChatService")
            .field("model", &self.model_name())
            .field("store", &self.store.kind())
            .field("config", &self.config)
            .field("rate", self.admission.rate())
            .field("budget", &self.budget)
            .finish_non_exhaustive()
    }
}

/// Everything decided before the model is called.
struct Turn {
    session_id: String,
    request_id: String,
    question: String,
    sources: Vec<Source>,
    doc_ids: Vec<String>,
    prompt: Prompt,
    retrieval: RetrievalInfo,
    /// Every hit retrieved (the prompt may cite fewer).
    hits: Vec<Ranked>,
    /// The blocks the prompt carries (the ones that fit its budget), `[1]` first: what
    /// the model's answer is checked against.
    blocks: Vec<String>,
    /// Related entries to offer after the answer.
    suggestions: Vec<Suggestion>,
    /// The owner's contact, when the site had nothing on the question.
    handoff: Option<Handoff>,
    /// The answer cache's key, for a first turn the model would answer.
    cache_key: Option<String>,
    /// The offline answer and why, when the model is not called.
    offline: Option<(String, OfflineReason)>,
    received: Instant,
    at: SystemTime,
    retrieve: Duration,
    /// The salted hash of the caller's address, for the audit record.
    client_hash: Option<String>,
    /// What lets this visitor rate the answer ([`feedback`]).
    feedback_token: String,
}

impl ChatService {
    /// A service answering with `llm` (`None`: offline), storing turns in `store`,
    /// retrieving `top_k` hits scoring at least `min_score` by default. Its rate limits and
    /// token budget (from `config`) count in this process's memory until
    /// [`ChatService::with_counters`] shares them.
    pub fn new(
        llm: Option<Arc<dyn LlmClient>>,
        store: Arc<dyn ConversationStore>,
        config: ChatConfig,
        top_k: usize,
        min_score: f32,
    ) -> Self {
        let salt = ClientSalt::fixed(config.client_salt.clone().unwrap_or_else(random_salt));
        let cache_ttl = config.answer_cache_ttl();
        let counters: Arc<dyn Counters> = Arc::new(MemoryCounters::default());
        let (rate, budget) = limits(&config, llm.as_deref(), counters);
        Self {
            llm,
            rewrite_llm: None,
            store,
            admission: Admission::new(rate, salt, config.bot_check, config.ipv6_prefix),
            config: Arc::new(config),
            top_k,
            min_score,
            budget,
            cache: None,
        }
        .with_cache(Arc::new(MemoryAnswerCache::new(
            MEMORY_CACHE_ANSWERS,
            cache_ttl,
        )))
    }

    /// The same service counting its limits in `counters` (shared by all instances when
    /// they are DynamoDB's) and hashing client addresses with `salt` (a
    /// [`Secret`](crate::secret::Secret), or a [`ClientSalt::lazy`] one looked up by the
    /// first request that needs it).
    pub fn with_counters(
        mut self,
        counters: Arc<dyn Counters>,
        salt: impl Into<ClientSalt>,
    ) -> Self {
        let (rate, budget) = limits(&self.config, self.llm.as_deref(), counters);
        self.admission = Admission::new(
            rate,
            salt.into(),
            self.config.bot_check,
            self.config.ipv6_prefix,
        );
        self.budget = budget;
        self
    }

    /// The salted hash of a client address, as stored and as counted by the rate limits
    /// ([`Admission::client_key`]).
    pub async fn client_key(&self, ip: Option<&str>) -> Result<String, StoreError> {
        self.admission.client_key(ip).await
    }

    /// A bot-check challenge for the client at `ip` (`GET ?challenge`); `None` when the
    /// check is off ([`Admission::challenge`]).
    pub async fn challenge(
        &self,
        ip: Option<&str>,
        now: SystemTime,
    ) -> Result<Option<Challenge>, StoreError> {
        self.admission.challenge(ip, now).await
    }

    /// Admits a validated request before anything is answered or counted: its bot-check
    /// proof, then the rate limits of its client and (when this deployment issued it) its
    /// session ([`Admission::admit`] names the errors).
    pub async fn admit(&self, req: &ChatRequest, ctx: &RequestContext) -> Result<(), Error> {
        self.admission
            .admit(
                ctx.client_ip.as_deref(),
                req.proof.as_deref(),
                req.session_id.as_deref(),
                session::verify,
                ctx.at,
            )
            .await
    }

    /// The same service expanding questions (`chat/rewrite.rs`) with `llm` rather than the
    /// answering model: a cheaper one (`REWRITE_MODEL`). Used only while an answering
    /// model is configured; its tokens count against the same daily budget.
    pub fn with_rewrite_llm(mut self, llm: Arc<dyn LlmClient>) -> Self {
        self.rewrite_llm = Some(llm);
        self
    }

    /// The model that expands questions, if any.
    fn rewrite_llm(&self) -> Option<&dyn LlmClient> {
        let answering = self.llm.as_deref()?;
        Some(self.rewrite_llm.as_deref().unwrap_or(answering))
    }

    /// The same service keeping reusable answers in `cache` (shared by all instances when
    /// it is DynamoDB's); none at all when `ANSWER_CACHE=off`.
    pub fn with_cache(mut self, cache: Arc<dyn AnswerCache>) -> Self {
        self.cache = self.config.answer_cache.then_some(cache);
        self
    }

    /// The cached answer of a turn that may have one; a cache that cannot be read is a
    /// miss (logged), within [`CACHE_BUDGET`].
    async fn cached(&self, turn: &Turn) -> Option<CachedAnswer> {
        let (cache, key) = (self.cache.as_ref()?, turn.cache_key.as_deref()?);
        match tokio::time::timeout(CACHE_BUDGET, cache.get(key)).await {
            Ok(Ok(hit)) => hit,
            Ok(Err(e)) => {
                tracing::warn!(error = %e, "answer cache unreadable; asking the model");
                None
            }
            Err(_) => {
                tracing::warn!("answer cache too slow; asking the model");
                None
            }
        }
    }

    /// Keeps a turn's answer for reuse when it may be: a first turn, answered in full by
    /// the model, and backed by its blocks (an answer the grounding check flags is not
    /// handed to the next visitor).
    async fn remember(&self, turn: &Turn, outcome: &Outcome, grounding: Option<Grounding>) {
        let (Some(cache), Some(key), Some(reply)) = (
            self.cache.as_ref(),
            turn.cache_key.as_deref(),
            outcome.reply.as_ref(),
        ) else {
            return;
        };
        if outcome.label != Label::Answered || grounding.is_none_or(|g| g.flagged()) {
            return;
        }
        let answer = CachedAnswer {
            reply: reply.clone(),
            model: outcome.model.clone(),
            grounding,
        };
        match tokio::time::timeout(CACHE_BUDGET, cache.put(key, &answer)).await {
            Ok(Ok(())) => {}
            Ok(Err(e)) => tracing::warn!(error = %e, "answer not cached"),
            Err(_) => tracing::warn!("answer cache too slow; answer not cached"),
        }
    }

    /// The most answer tokens one call may produce: the chat's reserve, capped by the
    /// client's `LLM_MAX_TOKENS`.
    pub fn max_tokens(&self) -> u32 {
        max_tokens(self.llm.as_deref())
    }

    /// The chat settings (limits for request validation).
    pub fn config(&self) -> &ChatConfig {
        &self.config
    }

    /// The configured model's name, or `offline`.
    pub fn model_name(&self) -> &str {
        self.llm.as_ref().map_or(OFFLINE_MODEL, |l| l.model())
    }

    /// Answers a validated request in one piece. Errors are model failures
    /// ([`Error::Llm`]); the turn has been recorded either way.
    #[tracing::instrument(skip_all, fields(request_id = %ctx.request_id))]
    pub async fn chat(
        &self,
        index: &SearchIndex,
        req: ChatRequest,
        ctx: RequestContext,
    ) -> Result<ChatResponse, Error> {
        self.answer(index, req, ctx, &mut Delivery::Whole).await
    }

    /// Answers a validated request as events into `sink`: `sources` first (before the
    /// model is called), then `delta`s, then `done` or `error`. Takes the index by `Arc`
    /// so the whole chat can run in a spawned task.
    #[tracing::instrument(skip_all, fields(request_id = %ctx.request_id))]
    pub async fn chat_stream(
        &self,
        index: Arc<SearchIndex>,
        req: ChatRequest,
        ctx: RequestContext,
        sink: &mut dyn EventSink,
    ) {
        // A failure has already reached the visitor as an `error` event.
        let _ = self
            .answer(index, req, ctx, &mut Delivery::Events(sink))
            .await;
    }

    /// The one turn flow of both ways to answer: prepare → (cache) → reserve → deliver
    /// (model, offline or cached answer) → settle → grounding → cache → record. Only the
    /// delivery steps differ ([`Delivery`]), so what is spent and recorded cannot drift
    /// between JSON and streaming. `index` is dropped once the answer is checked, before
    /// the recording, so a refreshed knowledge base can free the old one.
    async fn answer<I>(
        &self,
        index: I,
        req: ChatRequest,
        ctx: RequestContext,
        out: &mut Delivery<'_>,
    ) -> Result<ChatResponse, Error>
    where
        I: std::ops::Deref<Target = SearchIndex> + Send,
    {
        let mut turn = self.prepare(&index, req, ctx).await;
        let hit = self.cached(&turn).await;
        let reservation = match hit {
            Some(_) => None,
            None => self.reserve(&index, &mut turn).await,
        };
        let started = Instant::now();
        if !out.open(&turn).await {
            let gone = Outcome::disconnected(self.model_name(), None, Duration::ZERO, false);
            if let Some(r) = reservation {
                self.settle(r, &gone).await;
            }
            self.record(&turn, &gone, None).await;
            return Ok(response(&turn, &gone, None));
        }
        let (outcome, failed) = match (&hit, &self.llm, reservation) {
            (None, Some(llm), Some(reservation)) => {
                let request = completion_request(&turn.prompt, self.max_tokens());
                let (outcome, failed) = out.ask(llm.as_ref(), &request, started).await;
                let failed = match failed {
                    Some(e) => out.fail(e).await,
                    None => None,
                };
                self.settle(reservation, &outcome).await;
                (outcome, failed)
            }
            _ => {
                let mut outcome = match &hit {
                    Some(hit) => Outcome::cached(hit, started),
                    None => {
                        let (text, reason) = turn
                            .offline
                            .clone()
                            .unwrap_or((String::new(), OfflineReason::NoModel));
                        Outcome::offline(text, reason, started)
                    }
                };
                out.write(&mut outcome).await;
                (outcome, None)
            }
        };
        // Checked against the index the answer was retrieved from.
        let grounding = match &hit {
            Some(hit) => hit.grounding,
            None => grounded(&index, &turn, &outcome),
        };
        drop(index);
        let response = response(&turn, &outcome, grounding);
        if outcome.reply.is_some() {
            out.close(&response).await;
        }
        self.remember(&turn, &outcome, grounding).await;
        self.record(&turn, &outcome, grounding).await;
        match failed {
            Some(e) => Err(Error::Llm(e)),
            None => Ok(response),
        }
    }

    /// Reserves the turn's worst-case tokens on today's budget before the model is called.
    /// `None` when the model must not be called: no model, the budget is used up, or it
    /// cannot be checked; the turn is then switched to the offline answer.
    async fn reserve(&self, index: &SearchIndex, turn: &mut Turn) -> Option<Reservation> {
        self.llm.as_ref()?;
        let tokens =
            turn.prompt.budget.estimated_prompt_tokens as u64 + u64::from(self.max_tokens());
        let reason = match self.budget.reserve(tokens, turn.at).await {
            Ok(Some(r)) => return Some(r),
            Ok(None) => {
                tracing::warn!(
                    daily_limit = self.budget.daily(),
                    needed = tokens,
                    "daily token budget exhausted; answering offline"
                );
                OfflineReason::DailyBudget
            }
            Err(e) => {
                tracing::error!(error = %e, "cannot reserve tokens on the daily budget; answering offline");
                OfflineReason::Unavailable
            }
        };
        let answer = offline_answer(index, &turn.hits, &turn.question, reason);
        turn.offline = Some((answer, reason));
        turn.sources = sources(index, &turn.hits);
        turn.doc_ids = turn.sources.iter().map(|s| s.id.clone()).collect();
        None
    }

    /// Replaces a reservation by what the call cost: the provider's usage; nothing for a
    /// call it refused before generating; else (usage never arrived: the visitor left, the
    /// stream broke) the whole reservation, since an estimate could be fooled and the
    /// reservation is the most the call can have cost.
    async fn settle(&self, reservation: Reservation, outcome: &Outcome) {
        let used = match (outcome.usage, outcome.model_called) {
            (Some(u), _) => u64::from(u.total_tokens),
            (None, true) if outcome.refused => 0,
            (None, true) => reservation.tokens(),
            (None, false) => 0,
        };
        if let Err(e) = self.budget.settle(reservation, used).await {
            // The reservation stays counted: the budget errs towards spending less.
            tracing::error!(error = %e, used, "cannot settle the token budget");
        }
    }

    /// Session, history, retrieval and prompt: everything before the model.
    async fn prepare(&self, index: &SearchIndex, req: ChatRequest, ctx: RequestContext) -> Turn {
        let secret = self.session_secret().await;
        let (session_id, known) = session::resolve(&secret, req.session_id);
        let request_id = match req.request_id {
            Some(client) => idempotency_key(&client, &session_id, &req.question),
            None => ctx.request_id,
        };
        let history = if !req.history.is_empty() || !known || self.config.history_messages == 0 {
            req.history
        } else {
            storage::history(
                self.config.store_budgets.history,
                self.store.as_ref(),
                &session_id,
                self.config.history_messages,
            )
            .await
        };
        let top_k = req.top_k.unwrap_or(self.top_k);
        let found = self
            .retrieve_turn(index, &req.question, &history, top_k, ctx.at)
            .await;
        let style = self.config.answer_style;
        let mut blocks = style.blocks(index, &found.hits);
        let system_prompt = style.system_prompt(&self.config.system_prompt);
        let prompt = build_prompt(&PromptInput {
            system_prompt: &system_prompt,
            blocks: &blocks,
            history: &history,
            question: &req.question,
            max_context_tokens: self.config.max_context_tokens,
        });
        let offline = self.llm.is_none().then(|| {
            let reason = OfflineReason::NoModel;
            (
                offline_answer(index, &found.hits, &req.question, reason),
                reason,
            )
        });
        // Online, the model can cite only the blocks that fit the budget; offline, every
        // hit is listed.
        let cited = if offline.is_some() {
            found.hits.len()
        } else {
            prompt.budget.blocks_kept
        };
        let sources = sources(index, &found.hits[..cited]);
        blocks.truncate(prompt.budget.blocks_kept);
        // Only a first turn's prompt depends on nothing but the question and the entries.
        let cache_key = (offline.is_none() && history.is_empty())
            .then(|| self.answer_cache_key(index, &system_prompt, &req.question, &sources))
            .flatten();
        let suggestions = suggest::suggestions(index, &found.hits, &req.question);
        let handoff = match &self.config.contact_url {
            Some(contact) if found.hits.is_empty() => {
                Some(suggest::handoff(contact, &req.question))
            }
            _ => None,
        };
        tracing::info!(
            hits = found.hits.len(),
            followup = found.info.followup,
            history = history.len(),
            prompt_tokens = prompt.budget.estimated_prompt_tokens,
            "retrieved"
        );
        Turn {
            feedback_token: feedback::feedback_token(&secret, &request_id, &session_id),
            session_id,
            request_id,
            doc_ids: sources.iter().map(|s| s.id.clone()).collect(),
            question: req.question,
            sources,
            prompt,
            retrieval: found.info,
            hits: found.hits,
            blocks,
            suggestions,
            handoff,
            cache_key,
            offline,
            client_hash: self.audit_client_hash(ctx.client_ip.as_deref()).await,
            received: ctx.received,
            at: ctx.at,
            retrieve: ctx.received.elapsed(),
        }
    }

    /// The answer cache's key for a turn the model answers: `None` without a cache or a
    /// model. The key names everything of this deployment that shapes the answer, so a
    /// redeploy with another prompt, model or limit never serves an earlier one.
    fn answer_cache_key(
        &self,
        index: &SearchIndex,
        system_prompt: &str,
        question: &str,
        sources: &[Source],
    ) -> Option<String> {
        let llm = self.llm.as_deref().filter(|_| self.cache.is_some())?;
        let ids: Vec<String> = sources.iter().map(|s| s.id.clone()).collect();
        let shape = AnswerShape {
            system_prompt,
            provider: llm.provider(),
            model: llm.model(),
            style: self.config.answer_style.as_str(),
            max_context_tokens: self.config.max_context_tokens,
            max_answer_tokens: max_tokens(Some(llm)),
        };
        Some(cache_key(index.version(), &shape.digest(), question, &ids))
    }

    /// The salted hash of the caller's address for the audit record; `None` without an
    /// address, or (logged) when the salt cannot be looked up. Known here whenever the
    /// request was admitted first (the handler always does).
    async fn audit_client_hash(&self, ip: Option<&str>) -> Option<String> {
        match self.client_key(ip).await {
            Ok(key) => ip.is_some().then_some(key),
            Err(e) => {
                tracing::warn!(error = %e, "client-hash salt unknown: audit without it");
                None
            }
        }
    }

    /// Writes the exchange, retrying within a budget; a failure is logged with the whole
    /// exchange ([`storage::record`]), never returned (the answer stands).
    async fn record(&self, turn: &Turn, outcome: &Outcome, grounding: Option<Grounding>) {
        let exchange = Exchange {
            session_id: turn.session_id.clone(),
            request_id: turn.request_id.clone(),
            user: turn.question.clone(),
            assistant: outcome.reply.clone(),
            audit: AuditRecord {
                action: "chat".into(),
                session_id: Some(turn.session_id.clone()),
                request_id: turn.request_id.clone(),
                doc_ids: turn.doc_ids.clone(),
                model: (outcome.model != OFFLINE_MODEL).then(|| outcome.model.clone()),
                usage: outcome.usage,
                latency_ms: u64::try_from(turn.received.elapsed().as_millis()).unwrap_or(u64::MAX),
                outcome: audit_label(turn.hits.is_empty(), outcome).to_string(),
                client_hash: turn.client_hash.clone(),
                grounding,
                question: Some(turn.question.clone()),
                hits: Some(u32::try_from(turn.hits.len()).unwrap_or(u32::MAX)),
                top_score: turn.hits.iter().map(|h| h.score).reduce(f32::max),
                feedback: None,
            },
            at: turn.at,
        };
        storage::record(
            self.config.store_budgets.record,
            self.store.as_ref(),
            &exchange,
        )
        .await;
    }
}

/// The rate limiter and token budget `config` asks for, counting in `counters`.
fn limits(
    config: &ChatConfig,
    llm: Option<&dyn LlmClient>,
    counters: Arc<dyn Counters>,
) -> (RateLimiter, TokenBudget) {
    let rate = RateLimiter::new(counters.clone(), config.rate_limit_per_minute);
    // With less left than one answer's cap, no answer fits: the budget is exhausted.
    let budget = TokenBudget::new(
        counters,
        config.daily_token_budget,
        u64::from(max_tokens(llm)),
    );
    (rate, budget)
}

fn completion_request(prompt: &Prompt, max_tokens: u32) -> CompletionRequest {
    CompletionRequest {
        messages: prompt.messages.clone(),
        max_tokens,
        temperature: None,
    }
}

/// The answer cap: the prompt's answer reserve, within the client's own maximum.
fn max_tokens(llm: Option<&dyn LlmClient>) -> u32 {
    let reserve = ANSWER_RESERVE as u32;
    llm.map_or(reserve, |l| reserve.min(l.max_tokens()))
}

/// The sources of `hits`, numbered from 1 as in the prompt; from the knowledge base only.
fn sources(index: &SearchIndex, hits: &[Ranked]) -> Vec<Source> {
    hits.iter()
        .enumerate()
        .map(|(i, h)| {
            let doc = &index.kb().documents[h.doc as usize];
            let section = index.passage_section(h);
            Source {
                n: i + 1,
                id: doc.id.clone(),
                doc_type: doc.doc_type.clone(),
                title: doc.display_title().to_owned(),
                url: doc.link().map(str::to_owned),
                section: section.headings,
                section_url: section.url,
                score: (h.score * 1000.0).round() / 1000.0,
            }
        })
        .collect()
}

/// How many characters a reply may have per token of `max_tokens`. The densest text
/// we measured runs under 6 characters per token (English prose; Chinese under 2, see
/// `shared/tests/data/token_counts.json`). The cap is there to bound a provider that
/// ignores `max_tokens`, not to trim honest answers, so it leaves 5× room: code, long URLs
/// and whitespace never reach it, and a capped 512-token reply (16,384 characters, at most
/// 64 KB of UTF-8) still fits a DynamoDB item with its question.
pub const REPLY_CHARS_PER_TOKEN: usize = 32;

/// The longest reply kept and relayed, in characters: [`REPLY_CHARS_PER_TOKEN`] per answer
/// token, which also keeps a recorded turn far below DynamoDB's 400 KB item limit.
pub fn reply_cap_chars(max_tokens: u32) -> usize {
    (max_tokens as usize).max(1) * REPLY_CHARS_PER_TOKEN
}

/// The grounding of an answer the model wrote (an offline answer lists entries verbatim,
/// and a failed or abandoned one has nothing to check).
fn grounded(index: &SearchIndex, turn: &Turn, outcome: &Outcome) -> Option<Grounding> {
    let reply = outcome.reply.as_deref().filter(|_| outcome.model_called)?;
    Some(grounding::check(reply, &turn.blocks, index.retriever()))
}

fn response(turn: &Turn, outcome: &Outcome, grounding: Option<Grounding>) -> ChatResponse {
    let reply = outcome.reply.clone().unwrap_or_default();
    let offline = turn.offline.is_some();
    let offline_reason = turn.offline.as_ref().map(|(_, r)| r.as_str());
    let cached = outcome.label == Label::Cached;
    let usage = match (outcome.usage, offline || cached) {
        (Some(u), _) => u,
        (None, true) => Usage::default(),
        // The provider did not report usage: the estimates are better than nothing.
        (None, false) => {
            let prompt = turn.prompt.budget.estimated_prompt_tokens as u32;
            let completion = estimate_tokens(&reply) as u32;
            Usage {
                prompt_tokens: prompt,
                completion_tokens: completion,
                total_tokens: prompt + completion,
            }
        }
    };
    let done = DoneEvent {
        session_id: turn.session_id.clone(),
        request_id: turn.request_id.clone(),
        model: outcome.model.clone(),
        offline,
        offline_reason,
        usage,
        timings_ms: Timings {
            retrieve: ms(turn.retrieve),
            generate: ms(outcome.generate),
            total: ms(turn.received.elapsed()),
        },
        budget: turn.prompt.budget,
        retrieval: turn.retrieval.clone(),
        grounding,
        suggestions: turn.suggestions.clone(),
        handoff: turn.handoff.clone(),
        feedback_token: turn.feedback_token.clone(),
        cached,
    };
    ChatResponse {
        reply,
        sources: turn.sources.clone(),
        done,
    }
}

/// Milliseconds with microsecond precision.
fn ms(d: Duration) -> f64 {
    (d.as_micros() as f64) / 1000.0
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::limits::client_hash;
    use crate::secret::Secret;

    #[test]
    fn client_hashes_are_stable_per_salt_and_hide_the_address() {
        let (a, b) = (Secret::new("salt-a"), Secret::new("salt-b"));
        let h = client_hash(&a, "203.0.113.9");
        assert_eq!(h, client_hash(&a, "203.0.113.9"));
        assert_ne!(
            h,
            client_hash(&b, "203.0.113.9"),
            "the salt changes the hash"
        );
        assert_ne!(h, client_hash(&a, "203.0.113.10"));
        assert_eq!(h.len(), 16);
        assert!(h.bytes().all(|c| c.is_ascii_hexdigit()));
    }

    #[test]
    fn hashes_are_sha256_of_the_parts_joined_by_nul() {
        // Expected values from `hashlib.sha256(b"salt-a\x00203.0.113.9")` and
        // `hashlib.sha256(b"s-1\x00What?")`, first 16 hex digits: the keys of records
        // already stored must not change.
        assert_eq!(
            client_hash(&Secret::new("salt-a"), "203.0.113.9"),
            "e75168654482714d"
        );
        assert_eq!(idempotency_key("r", "s-1", "What?"), "r.d175dbffcfcf8deb");
    }
}
