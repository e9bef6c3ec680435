//! Bearer-token authentication for ingest: the token's SHA-256 is configured
//! (`INGEST_TOKEN_SHA256`), never the token, and the comparison takes constant time.

use sha2::{Digest, Sha256};
use subtle::ConstantTimeEq;

use crate::error::{Error, Result};

/// The SHA-256 of the one token ingest accepts.
#[derive(Clone, PartialEq, Eq)]
pub struct TokenHash([u8; 32]);

impl TokenHash {
    /// Parses 64 hex digits (what `printf %s "$TOKEN" | sha256sum` prints).
    pub fn from_hex(hex: &str) -> std::result::Result<Self, String> {
        let hex = hex.trim();
        if hex.len() != 64 {
            return Err(format!(
                "must be 64 hex digits (a SHA-256), got {} characters",
                hex.len()
            ));
        }
        let mut out = [0u8; 32];
        for (i, byte) in out.iter_mut().enumerate() {
            *byte = hex
                .get(2 * i..2 * i + 2)
                .and_then(|pair| u8::from_str_radix(pair, 16).ok())
                .ok_or_else(|| "must be 64 hex digits (a SHA-256)".to_owned())?;
        }
        Ok(Self(out))
    }

    /// The hash of a token.
    pub fn of_token(token: &str) -> Self {
        Self(Sha256::digest(token.as_bytes()).into())
    }

    /// Whether `token` hashes to this value. Constant time in the hash bytes, so the time
    /// taken says nothing about how many leading bytes matched.
    pub fn matches(&self, token: &str) -> bool {
        Self::of_token(token).0.ct_eq(&self.0).into()
    }

    /// The first 8 hex digits: names a token in audit records and logs without making it
    /// guessable.
    pub fn short(&self) -> String {
        hex::encode(&self.0[..4])
    }
}

impl std::fmt::Debug for TokenHash {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "TokenHash({}…)", self.short())
    }
}

/// An authenticated ingest caller.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Caller {
    /// Who, for audit records: `token:` and the first 8 hex digits of the token's hash.
    pub who: String,
}

/// Checks an `Authorization` header against the configured hash.
///
/// With no hash configured every request is refused: ingest is never anonymous.
pub fn authorize(expected: Option<&TokenHash>, authorization: Option<&str>) -> Result<Caller> {
    let Some(expected) = expected else {
        return Err(Error::Forbidden(
            "ingest is disabled: set INGEST_TOKEN_SHA256".into(),
        ));
    };
    let token = authorization
        .and_then(|h| h.trim().split_once(' '))
        .filter(|(scheme, _)| scheme.eq_ignore_ascii_case("bearer"))
        .map(|(_, token)| token.trim())
        .filter(|t| !t.is_empty())
        .ok_or_else(|| Error::Unauthorized("send Authorization: Bearer <token>".into()))?;
    if !expected.matches(token) {
        return Err(Error::Forbidden("the token is not valid".into()));
    }
    Ok(Caller {
        who: format!("token:{}", expected.short()),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    // `printf %s secret | sha256sum`
    const SECRET_SHA256: &str = "2bb80d537b1da3e38bd30361aa855686bde0eacd7162fef6a25fe97bf527a25b";

    #[test]
    fn hex_hashes_parse_and_match_their_token_only() {
        let h = TokenHash::from_hex(SECRET_SHA256).unwrap();
        assert_eq!(h, TokenHash::of_token("secret"));
        assert!(h.matches("secret"));
        assert!(!h.matches("secret "));
        assert!(!h.matches(""));
        assert_eq!(h.short(), "2bb80d53");
        assert_eq!(format!("{h:?}"), "TokenHash(2bb80d53…)");
        assert_eq!(
            TokenHash::from_hex(&SECRET_SHA256.to_uppercase()).unwrap(),
            h
        );
        for bad in [
            "",
            "abc",
            &SECRET_SHA256.replace('2', "g"),
            &format!("{SECRET_SHA256}00"),
        ] {
            assert!(TokenHash::from_hex(bad).is_err(), "{bad}");
        }
        // A multi-byte character must not panic the slicing.
        assert!(TokenHash::from_hex(&format!("é{}", &SECRET_SHA256[2..])).is_err());
    }

    #[test]
    fn authorization_needs_a_configured_hash_and_the_right_bearer_token() {
        let h = TokenHash::of_token("secret");
        let status = |e: Error| crate::edge::ApiError::from(&e).status;
        let caller = authorize(Some(&h), Some("Bearer secret")).unwrap();
        assert_eq!(caller.who, "token:2bb80d53");
        assert!(authorize(Some(&h), Some("bearer  secret ")).is_ok());
        for missing in [
            None,
            Some(""),
            Some("Bearer"),
            Some("Bearer   "),
            Some("Basic c2VjcmV0"),
            Some("secret"),
        ] {
            assert_eq!(
                status(authorize(Some(&h), missing).unwrap_err()),
                401,
                "{missing:?}"
            );
        }
        assert_eq!(
            status(authorize(Some(&h), Some("Bearer wrong")).unwrap_err()),
            403
        );
        let disabled = authorize(None, Some("Bearer secret")).unwrap_err();
        assert!(disabled.to_string().contains("INGEST_TOKEN_SHA256"));
        assert_eq!(status(disabled), 403);
    }
}
