//! The salt of client-address hashes (audit records, per-client rate-limit keys): configured,
//! shared by every instance through the counters, or drawn per process.

use std::sync::Arc;

use super::Counters;
use crate::secret::{random_bytes, Secret};
use crate::store::StoreError;

/// The salt for client-address hashes: `configured` (`CLIENT_HASH_SALT`) when set; else,
/// with shared counters, one kept in them, so that every instance derives the same key for
/// one client (per-client limits would otherwise be per instance) without the site owner
/// configuring a secret; else a random salt for this process.
///
/// The first instance to need it stores a random 63-bit value with an add that only fits
/// into an absent counter, so of instances asking together exactly one wins and all read
/// its value back.
pub async fn client_salt(
    configured: Option<&Secret>,
    counters: &dyn Counters,
) -> Result<Secret, StoreError> {
    if let Some(salt) = configured {
        return Ok(salt.clone());
    }
    if !counters.is_shared() {
        return Ok(random_salt());
    }
    const KEY: &str = "secret:client-hash-salt";
    // No TTL: the item must outlive every instance (DynamoDB ignores a TTL this far out).
    const NEVER: u64 = 4_102_444_800; // 2100-01-01
    let mine = random_u63().max(1);
    counters.try_add(KEY, mine, mine, NEVER).await?;
    let salt = counters.get(KEY).await?;
    Ok(Secret::new(format!("{salt:016x}")))
}

/// 63 random bits.
fn random_u63() -> u64 {
    u64::from_le_bytes(random_bytes()) >> 1
}

/// A salt nobody outside this process knows (128 random bits, hex), drawn once per process
/// (cold start): for counters that are not shared, and when the chat has no configured salt.
pub(crate) fn random_salt() -> Secret {
    static SALT: std::sync::LazyLock<Secret> =
        std::sync::LazyLock::new(|| Secret::new(hex::encode(random_bytes::<16>())));
    SALT.clone()
}

/// A process's client-hash salt, looked up by the first request that needs it and kept.
///
/// Lazy because a lookup at cold start would cost every instance two DynamoDB calls before
/// its first request, and most requests (health checks, preflights, refused input) never
/// hash an address. Requests arriving together wait for one lookup; a failed lookup is not kept,
/// so the next request tries again. Cheap to clone (shared).
#[derive(Clone)]
pub struct ClientSalt(Arc<Inner>);

struct Inner {
    salt: tokio::sync::OnceCell<Secret>,
    /// Where an unknown salt comes from: `client_salt(configured, counters)`.
    source: Option<(Option<Secret>, Arc<dyn Counters>)>,
}

impl ClientSalt {
    /// A salt known up front.
    pub fn fixed(salt: Secret) -> Self {
        Self(Arc::new(Inner {
            salt: tokio::sync::OnceCell::new_with(Some(salt)),
            source: None,
        }))
    }

    /// The salt [`client_salt`] gives for `configured` and `counters`, looked up on the
    /// first [`ClientSalt::get`]: making this calls nothing.
    pub fn lazy(configured: Option<Secret>, counters: Arc<dyn Counters>) -> Self {
        Self(Arc::new(Inner {
            salt: tokio::sync::OnceCell::new(),
            source: Some((configured, counters)),
        }))
    }

    /// The salt if a call has already found it (or it was given), without looking it up.
    pub fn known(&self) -> Option<&Secret> {
        self.0.salt.get()
    }

    /// The salt, looked up now if no call has found it yet.
    pub async fn get(&self) -> Result<&Secret, StoreError> {
        self.0
            .salt
            .get_or_try_init(|| async {
                match &self.0.source {
                    Some((configured, counters)) => {
                        client_salt(configured.as_ref(), counters.as_ref()).await
                    }
                    // `fixed` always holds its salt, so this is never reached.
                    None => Err(StoreError::other("a fixed salt is missing")),
                }
            })
            .await
    }
}

impl From<Secret> for ClientSalt {
    fn from(salt: Secret) -> Self {
        Self::fixed(salt)
    }
}

impl std::fmt::Debug for ClientSalt {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ClientSalt")
            .field("known", &self.0.salt.initialized())
            .finish_non_exhaustive()
    }
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

    use async_trait::async_trait;

    use super::*;
    use crate::limits::MemoryCounters;

    #[tokio::test]
    async fn a_configured_salt_wins_and_memory_counters_get_a_process_salt() {
        let memory = MemoryCounters::default();
        let pepper = Secret::new("pepper");
        let salt = client_salt(Some(&pepper), &memory).await.unwrap();
        assert_eq!(salt.expose(), "pepper");
        let a = client_salt(None, &memory).await.unwrap();
        let b = client_salt(None, &memory).await.unwrap();
        assert_eq!(a.expose(), b.expose(), "one salt per process");
        assert_ne!(a.expose(), "pepper");
    }

    /// Memory counters that claim to be shared, count the calls made to them and fail
    /// while `down` is set.
    #[derive(Default)]
    struct Watched {
        inner: MemoryCounters,
        calls: AtomicUsize,
        down: AtomicBool,
    }

    impl Watched {
        fn call(&self) -> Result<(), StoreError> {
            self.calls.fetch_add(1, Ordering::SeqCst);
            if self.down.load(Ordering::SeqCst) {
                return Err(StoreError::Unavailable {
                    message: "down".into(),
                    source: None,
                });
            }
            Ok(())
        }
    }

    #[async_trait]
    impl Counters for Watched {
        fn kind(&self) -> &'static str {
            "watched"
        }
        fn is_shared(&self) -> bool {
            true
        }
        async fn try_add(
            &self,
            k: &str,
            a: u64,
            l: u64,
            e: u64,
        ) -> Result<Option<u64>, StoreError> {
            self.call()?;
            self.inner.try_add(k, a, l, e).await
        }
        async fn add(&self, key: &str, delta: i64, expires_at: u64) -> Result<(), StoreError> {
            self.call()?;
            self.inner.add(key, delta, expires_at).await
        }
        async fn get(&self, key: &str) -> Result<u64, StoreError> {
            self.call()?;
            self.inner.get(key).await
        }
    }

    #[tokio::test]
    async fn a_lazy_salt_is_looked_up_once_on_first_use_and_retried_after_a_failure() {
        let counters = Arc::new(Watched::default());
        counters.down.store(true, Ordering::SeqCst);
        let salt = ClientSalt::lazy(None, counters.clone());
        assert_eq!(counters.calls.load(Ordering::SeqCst), 0, "nothing at start");

        assert!(
            salt.get().await.is_err(),
            "an unreachable table is an error"
        );
        counters.down.store(false, Ordering::SeqCst);
        let first = salt.get().await.unwrap().clone();
        let calls = counters.calls.load(Ordering::SeqCst);
        assert_eq!(salt.get().await.unwrap(), &first, "kept");
        assert_eq!(
            counters.calls.load(Ordering::SeqCst),
            calls,
            "no call once known"
        );

        // Another instance over the same table finds the same salt.
        let other = ClientSalt::lazy(None, counters.clone());
        assert_eq!(other.get().await.unwrap(), &first);
    }

    #[tokio::test]
    async fn a_configured_or_fixed_salt_needs_no_call() {
        let counters = Arc::new(Watched::default());
        let configured = ClientSalt::lazy(Some(Secret::new("pepper")), counters.clone());
        assert_eq!(configured.get().await.unwrap().expose(), "pepper");
        let fixed = ClientSalt::from(Secret::new("salt"));
        assert_eq!(fixed.get().await.unwrap().expose(), "salt");
        assert_eq!(counters.calls.load(Ordering::SeqCst), 0);
    }
}
