//! Admission of a chat request: what it must pass before anything is answered or counted.
//! The bot check's proof (`BOT_CHECK=pow`, [`super::bot_check`]), then the per-client and
//! per-session rate limits ([`RateLimiter`]), the client known by the salted hash of its
//! network ([`client_network`]). The chat service holds one [`Admission`] and asks it
//! first; the search function's counterpart is [`super::ClientLimit`].

use std::time::SystemTime;

use super::bot_check::{self, BotCheck, Challenge};
use super::{client_hash, client_network, ClientSalt, RateLimiter};
use crate::error::Error;
use crate::secret::Secret;
use crate::store::StoreError;

/// The chat's door: the rate limits, the bot check and the salt that keys both by client.
/// Cheap to clone (the counters and the salt are shared behind `Arc`).
#[derive(Clone)]
pub struct Admission {
    rate: RateLimiter,
    /// Salt of client-address hashes (rate-limit keys, audit records), and the secret
    /// challenges and session ids are signed with.
    salt: ClientSalt,
    bot_check: BotCheck,
    /// The prefix length an IPv6 client is keyed by (`CLIENT_IPV6_PREFIX`).
    ipv6_prefix: u8,
}

impl Admission {
    /// Admission by `rate`, keying clients with `salt` (IPv6 ones by their `ipv6_prefix`
    /// network) and asking for a proof when `bot_check` is on.
    pub fn new(rate: RateLimiter, salt: ClientSalt, bot_check: BotCheck, ipv6_prefix: u8) -> Self {
        Self {
            rate,
            salt,
            bot_check,
            ipv6_prefix,
        }
    }

    /// The rate limiter requests are counted by (for the health report).
    pub fn rate(&self) -> &RateLimiter {
        &self.rate
    }

    /// The client-hash salt, also the deployment's signing secret.
    pub fn salt(&self) -> &ClientSalt {
        &self.salt
    }

    /// The salted hash of a client address, as stored and as counted by the rate limits
    /// (IPv6 addresses by their network, [`client_network`]); `"unknown"` without an
    /// address; an error when the salt is still unknown and cannot be looked up.
    pub async fn client_key(&self, ip: Option<&str>) -> Result<String, StoreError> {
        match ip {
            None => Ok("unknown".to_owned()),
            Some(ip) => Ok(client_hash(
                self.salt.get().await?,
                &client_network(ip, self.ipv6_prefix),
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
        let BotCheck::Pow { difficulty, ttl } = self.bot_check else {
            return Ok(None);
        };
        let client = self.client_key(ip).await?;
        let secret = self.salt.get().await?;
        Ok(Some(bot_check::issue_challenge(
            secret, &client, difficulty, ttl, now,
        )))
    }

    /// Admits a request from `ip` carrying `proof` and naming `session`, at `at`: with
    /// `BOT_CHECK=pow` the proof must solve a live challenge issued to this client
    /// ([`Error::BotCheck`], 403); then the rate limits: [`Error::RateLimited`] (429) when
    /// the client (by its source address) or the session has used up this minute,
    /// [`Error::Store`] (503 when retryable) when the counters cannot be reached: refusing
    /// is safer than serving unmetered. The session is counted only when `issued` (the
    /// chat's check of its signature under the salt) accepts it; any other starts a new
    /// session, limited with its client.
    pub async fn admit(
        &self,
        ip: Option<&str>,
        proof: Option<&str>,
        session: Option<&str>,
        issued: fn(&Secret, &str) -> bool,
        at: SystemTime,
    ) -> Result<(), Error> {
        let client = self
            .client_key(ip)
            .await
            .inspect_err(|e| tracing::error!(error = %e, "cannot look up the client-hash salt"))?;
        if let BotCheck::Pow { difficulty, .. } = self.bot_check {
            // The salt is known: `client_key` just found it (or there is no address, and
            // then the lookup below is the first).
            let secret = self.salt.get().await?;
            bot_check::verify_proof(secret, &client, proof, difficulty, at).map_err(|e| {
                tracing::info!(code = e.code(), client = %client, "bot check refused");
                Error::BotCheck(e)
            })?;
        }
        let session = match session {
            None => None,
            Some(s) => {
                let secret = self.salt.get().await.inspect_err(
                    |e| tracing::error!(error = %e, "cannot look up the client-hash salt"),
                )?;
                issued(secret, s).then_some(s)
            }
        };
        let limited = self
            .rate
            .check(&client, session, at)
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
}

impl std::fmt::Debug for Admission {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Admission")
            .field("rate", &self.rate)
            .field("bot_check", &self.bot_check)
            .field("ipv6_prefix", &self.ipv6_prefix)
            .finish_non_exhaustive()
    }
}
