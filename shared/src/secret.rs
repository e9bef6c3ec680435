//! A string that must never be printed (API keys and tokens), and the random bytes secrets
//! and ids are drawn from.
//!
//! `Debug` and `Display` both print `[redacted]`, so a secret inside a config struct can be
//! logged with `?config` without leaking. The only way to the value is [`Secret::expose`],
//! which makes every use greppable.

use std::fmt;

/// A secret string (API key, token) whose `Debug` and `Display` print `[redacted]`.
#[derive(Clone, PartialEq, Eq)]
pub struct Secret(String);

impl Secret {
    /// `value` as a secret; from here on only [`Secret::expose`] reads it.
    pub fn new(value: impl Into<String>) -> Self {
        Self(value.into())
    }

    /// The value itself; call only where it is sent (an `Authorization` header), never to log.
    pub fn expose(&self) -> &str {
        &self.0
    }
}

impl From<String> for Secret {
    fn from(value: String) -> Self {
        Self(value)
    }
}

/// `N` bytes from the operating system's random generator, for salts, nonces and ids that
/// nobody may predict.
///
/// # Panics
/// When the operating system gives no randomness (`getrandom(2)` failing), which does not
/// happen on Lambda or any host this runs on; a secret drawn from something weaker would be
/// worse than a failed request.
pub fn random_bytes<const N: usize>() -> [u8; N] {
    let mut bytes = [0; N];
    if let Err(e) = getrandom::fill(&mut bytes) {
        panic!("the operating system gave no random bytes: {e}");
    }
    bytes
}

impl fmt::Debug for Secret {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("[redacted]")
    }
}

impl fmt::Display for Secret {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("[redacted]")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn debug_and_display_never_show_the_value() {
        let s = Secret::new("sk-live-123");
        assert_eq!(format!("{s:?}"), "[redacted]");
        assert_eq!(format!("{s}"), "[redacted]");
        assert_eq!(format!("{:?}", Some(s.clone())), "Some([redacted])");
    }

    #[test]
    fn expose_returns_the_value() {
        assert_eq!(Secret::from("sk-1".to_string()).expose(), "sk-1");
    }
}
