//! Admission: what a request must pass before anything is answered or counted. The
//! bot check's proof (`BOT_CHECK=pow`), then the per-client and per-session rate limits,
//! the client known by the salted hash of its network ([`crate::limits::client_network`]).

use std::sync::Arc;
use std::time::SystemTime;

use super::bot_check::{self, BotCheck, Challenge};
use super::{max_tokens, ChatConfig, ChatRequest, ChatService, RequestContext};
use crate::error::Error;
use crate::limits::{client_hash, client_network, ClientSalt, Counters, RateLimiter, TokenBudget};
use crate::llm::LlmClient;
use crate::store::StoreError;

impl ChatService {
    /// The same service counting its limits in `counters` (shared by all instances when
    /// they are DynamoDB's) and hashing client addresses with `salt` (a [`Secret`](crate::secret::Secret), or a
    /// [`ClientSalt::lazy`] one looked up by the first request that needs it).
    pub fn with_counters(
        mut self,
        counters: Arc<dyn Counters>,
        salt: impl Into<ClientSalt>,
    ) -> Self {
        (self.rate, self.budget) = limits(&self.config, self.llm.as_deref(), counters);
        self.salt = salt.into();
        self
    }

    /// The salted hash of a client address, as stored and as counted by the rate limits
    /// (IPv6 addresses by their network, [`client_network`]); an error when the
    /// salt is still unknown and cannot be looked up.
    pub async fn client_key(&self, ip: Option<&str>) -> Result<String, StoreError> {
        match ip {
            None => Ok("unknown".to_owned()),
            Some(ip) => Ok(client_hash(
                self.salt.get().await?,
                &client_network(ip, self.config.ipv6_prefix),
            )),
        }
    }

    /// A bot-check challenge for the client at `ip` (`GET ?challenge`); `None` when the
    /// check is off. Writes nothing; an error only when the salt is still unknown and
    /// cannot be looked up.
    pub async fn challenge(
        &self,
        ip: Option<&str>,
        now: SystemTime,
    ) -> Result<Option<Challenge>, StoreError> {
        let BotCheck::Pow { difficulty, ttl } = self.config.bot_check else {
            return Ok(None);
        };
        let client = self.client_key(ip).await?;
        let secret = self.salt.get().await?;
        Ok(Some(bot_check::issue_challenge(
            secret, &client, difficulty, ttl, now,
        )))
    }

    /// Admits a validated request, before anything is answered or counted: with
    /// `BOT_CHECK=pow` its proof must solve a live challenge issued to this client
    /// ([`Error::BotCheck`], 403); then the rate limits: [`Error::RateLimited`] (429) when
    /// the client (by its source address) or the session has used up this minute,
    /// [`Error::Store`] (503 when retryable) when the counters cannot be reached: refusing
    /// is safer than serving unmetered.
    pub async fn admit(&self, req: &ChatRequest, ctx: &RequestContext) -> Result<(), Error> {
        let client = self
            .client_key(ctx.client_ip.as_deref())
            .await
            .inspect_err(|e| tracing::error!(error = %e, "cannot look up the client-hash salt"))?;
        if let BotCheck::Pow { difficulty, .. } = self.config.bot_check {
            // The salt is known: `client_key` just found it (or there is no address, and
            // then the lookup below is the first).
            let secret = self.salt.get().await?;
            bot_check::verify_proof(secret, &client, req.proof.as_deref(), difficulty, ctx.at)
                .map_err(|e| {
                    tracing::info!(code = e.code(), client = %client, "bot check refused");
                    Error::BotCheck(e)
                })?;
        }
        let session = self
            .issued_session(req)
            .await
            .inspect_err(|e| tracing::error!(error = %e, "cannot look up the client-hash salt"))?;
        let limited = self
            .rate
            .check(&client, session, ctx.at)
            .await
            .inspect_err(|e| tracing::error!(error = %e, "cannot check the rate limits"))?;
        match limited {
            None => Ok(()),
            Some(l) => {
                tracing::info!(scope = l.scope, client = %client, retry_after = l.retry_after_secs, "rate limited");
                Err(Error::RateLimited {
                    scope: l.scope,
                    retry_after_secs: l.retry_after_secs,
                })
            }
        }
    }

    /// The request's session when this deployment issued it: only those are counted (any
    /// other starts a new session, limited with its client).
    async fn issued_session<'a>(
        &self,
        req: &'a ChatRequest,
    ) -> Result<Option<&'a str>, StoreError> {
        let Some(s) = req.session_id.as_deref() else {
            return Ok(None);
        };
        let secret = self.salt.get().await?;
        Ok(super::session::verify(secret, s).then_some(s))
    }
}

/// The rate limiter and token budget `config` asks for, counting in `counters`.
pub(super) fn limits(
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
