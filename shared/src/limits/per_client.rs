//! A per-client request limit for an endpoint that has no sessions (the search function):
//! the chat's `RATE_LIMIT_PER_MINUTE` and `CLIENT_IPV6_PREFIX`, counted in the same
//! counters (the limits table when `LIMITS_TABLE` is set) under the same salted hash of
//! the client's address, in a counter of its own, so searching does not use up a visitor's
//! chat allowance nor chatting their searches.

use std::sync::Arc;
use std::time::SystemTime;

use super::{ClientSalt, Counters, MemoryCounters, RateLimiter};
use crate::config::ranged;
use crate::error::{Error, Result};
use crate::secret::Secret;

/// The chat's default IPv6 prefix (one network is one client).
fn default_ipv6_prefix() -> u8 {
    super::DEFAULT_IPV6_PREFIX
}

/// What [`ClientLimit`] is configured with (read from the same variables as the chat's).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ClientLimitConfig {
    /// `RATE_LIMIT_PER_MINUTE`: requests per client per minute (default 20, 0 = off, at
    /// most 100,000).
    pub per_minute: u64,
    /// `CLIENT_IPV6_PREFIX`: IPv6 clients are counted by this many leading bits (default
    /// 64, 16..=128).
    pub ipv6_prefix: u8,
    /// `CLIENT_HASH_SALT`: the salt of the client-address hashes; unset: the one kept in
    /// the limits table, else one per process.
    pub salt: Option<Secret>,
}

impl ClientLimitConfig {
    /// Reads the variables through `get`; unset and empty are the same.
    pub fn from_lookup(get: impl Fn(&str) -> Option<String>) -> Result<Self> {
        let get = crate::config::trimmed(get);
        Ok(Self {
            per_minute: ranged(&get, "RATE_LIMIT_PER_MINUTE", 0, 100_000)?.map_or(20, |n| n as u64),
            ipv6_prefix: ranged(&get, "CLIENT_IPV6_PREFIX", 16, 128)?
                .map_or(default_ipv6_prefix(), |n| n as u8),
            salt: get("CLIENT_HASH_SALT").map(Secret::new),
        })
    }
}

/// Admits at most the configured number of requests per client (by source address) and
/// minute.
#[derive(Debug)]
pub struct ClientLimit {
    /// Names this endpoint's counters apart from the chat's (`rate:client:<scope>:…`).
    scope: &'static str,
    rate: RateLimiter,
    salt: ClientSalt,
    ipv6_prefix: u8,
}

impl ClientLimit {
    /// A limit for the endpoint `scope` (`"search"`) counting in `counters`.
    pub fn new(
        scope: &'static str,
        config: ClientLimitConfig,
        counters: Arc<dyn Counters>,
    ) -> Self {
        Self {
            scope,
            salt: ClientSalt::lazy(config.salt, counters.clone()),
            rate: RateLimiter::new(counters, config.per_minute),
            ipv6_prefix: config.ipv6_prefix,
        }
    }

    /// No limit at all (tests and tools that call the handler directly).
    pub fn off(scope: &'static str) -> Self {
        let config = ClientLimitConfig {
            per_minute: 0,
            ipv6_prefix: default_ipv6_prefix(),
            salt: None,
        };
        Self::new(scope, config, Arc::new(MemoryCounters::default()))
    }

    /// The configured limit (0: off).
    pub fn per_minute(&self) -> u64 {
        self.rate.per_minute()
    }

    /// Counts one request from `ip` (the source address; `None` counts as one unknown
    /// client) at `now`: [`Error::RateLimited`] (429) past the limit, [`Error::Store`]
    /// (503 when retryable) when the counters cannot be reached, as for the chat.
    pub async fn admit(&self, ip: Option<&str>, now: SystemTime) -> Result<()> {
        if self.rate.per_minute() == 0 {
            return Ok(());
        }
        let client = match ip {
            None => "unknown".to_owned(),
            Some(ip) => super::client_hash(
                self.salt.get().await?,
                &super::client_network(ip, self.ipv6_prefix),
            ),
        };
        let key = format!("{}:{client}", self.scope);
        match self.rate.check(&key, None, now).await? {
            None => Ok(()),
            Some(l) => {
                tracing::info!(scope = self.scope, client = %client, retry_after = l.retry_after_secs, "rate limited");
                Err(Error::RateLimited {
                    scope: l.scope,
                    retry_after_secs: l.retry_after_secs,
                })
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::{Duration, UNIX_EPOCH};

    /// `secs` into the current minute (the memory counters expire by the real clock).
    fn this_minute(secs: u64) -> SystemTime {
        let now = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .unwrap()
            .as_secs();
        UNIX_EPOCH + Duration::from_secs(now / 60 * 60 + secs)
    }

    fn limit(per_minute: u64, counters: Arc<dyn Counters>) -> ClientLimit {
        let config = ClientLimitConfig {
            per_minute,
            ipv6_prefix: 64,
            salt: Some(Secret::new("s")),
        };
        ClientLimit::new("search", config, counters)
    }

    #[tokio::test]
    async fn a_client_past_its_limit_is_refused_until_the_next_minute_and_others_are_not() {
        let counters: Arc<dyn Counters> = Arc::new(MemoryCounters::default());
        let l = limit(3, counters);
        let at = this_minute(10);
        for _ in 0..3 {
            l.admit(Some("203.0.113.7"), at).await.unwrap();
        }
        let refused = l.admit(Some("203.0.113.7"), at).await.unwrap_err();
        assert!(
            matches!(
                refused,
                Error::RateLimited {
                    retry_after_secs: 50,
                    ..
                }
            ),
            "{refused:?}"
        );
        // Another address, and the same one in the next minute.
        l.admit(Some("203.0.113.8"), at).await.unwrap();
        l.admit(Some("203.0.113.7"), at + Duration::from_secs(60))
            .await
            .unwrap();
        // One IPv6 network is one client.
        for i in 0..3 {
            l.admit(Some(&format!("2001:db8::{i}")), at).await.unwrap();
        }
        assert!(l.admit(Some("2001:db8::ff"), at).await.is_err());
    }

    #[tokio::test]
    async fn search_counts_apart_from_chat_in_the_same_counters() {
        let counters: Arc<dyn Counters> = Arc::new(MemoryCounters::default());
        let at = this_minute(0);
        let chat = RateLimiter::new(counters.clone(), 1);
        let search = limit(1, counters);
        let hash = crate::limits::client_hash(&Secret::new("s"), "203.0.113.7");
        assert!(chat.check(&hash, None, at).await.unwrap().is_none());
        search.admit(Some("203.0.113.7"), at).await.unwrap();
        assert!(search.admit(Some("203.0.113.7"), at).await.is_err());
    }

    #[test]
    fn the_settings_are_the_chats() {
        let env = |pairs: &'static [(&'static str, &'static str)]| {
            move |k: &str| {
                pairs
                    .iter()
                    .find(|(n, _)| *n == k)
                    .map(|(_, v)| v.to_string())
            }
        };
        let c = ClientLimitConfig::from_lookup(env(&[])).unwrap();
        assert_eq!((c.per_minute, c.ipv6_prefix), (20, 64));
        let c = ClientLimitConfig::from_lookup(env(&[
            ("RATE_LIMIT_PER_MINUTE", "0"),
            ("CLIENT_IPV6_PREFIX", "48"),
        ]))
        .unwrap();
        assert_eq!((c.per_minute, c.ipv6_prefix), (0, 48));
        assert!(ClientLimitConfig::from_lookup(env(&[("RATE_LIMIT_PER_MINUTE", "-1")])).is_err());
        let chat = crate::chat::ChatConfig::default();
        assert_eq!(
            (chat.rate_limit_per_minute, chat.ipv6_prefix),
            (
                ClientLimitConfig::from_lookup(env(&[])).unwrap().per_minute,
                64
            )
        );
    }
}
