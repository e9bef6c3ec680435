//! Session ids the server issues and signs, so a visitor can only continue a conversation
//! it was given.
//!
//! A session id is the key to a conversation's stored history: the chat reads it back into
//! the prompt. If a client could choose one, guessing or copying another visitor's id would
//! put that visitor's conversation into the guesser's answer. So the server issues every id
//! as `s-<32 hex random>.<16 hex MAC>`, the MAC an HMAC-SHA256 of the random part under the
//! deployment's secret (the client-hash salt, shared by all instances), and continues a
//! session only when the MAC checks out. Any other id (chosen, truncated, tampered) starts
//! a new session, whose signed id the answer returns.

use hmac::{Hmac, KeyInit, Mac};
use sha2::Sha256;

use crate::limits::random_salt;
use crate::secret::Secret;

/// Bytes of the MAC kept in an id: 64 bits, beyond guessing at any request rate.
const MAC_BYTES: usize = 8;

/// A new signed session id: 128 random bits and their MAC.
pub(super) fn issue(secret: &Secret) -> String {
    sign(
        secret,
        &format!("s-{}", hex::encode(crate::secret::random_bytes::<16>())),
    )
}

/// `body` with this deployment's MAC appended: the id [`verify`] accepts. For issuing, and
/// for tests and tools that need a known session.
pub(super) fn sign(secret: &Secret, body: &str) -> String {
    let mac = mac(secret, body);
    format!(
        "{body}.{}",
        hex::encode(mac.get(..MAC_BYTES).unwrap_or_default())
    )
}

/// Whether `id` is a session id this deployment issued (its MAC checks out, compared in
/// constant time).
pub(super) fn verify(secret: &Secret, id: &str) -> bool {
    let Some((body, tag)) = id.rsplit_once('.') else {
        return false;
    };
    let Some(tag) = hex::decode(tag).ok().filter(|t| t.len() == MAC_BYTES) else {
        return false;
    };
    let Ok(mut m) = Hmac::<Sha256>::new_from_slice(secret.expose().as_bytes()) else {
        return false;
    };
    m.update(b"session\0");
    m.update(body.as_bytes());
    m.verify_truncated_left(&tag).is_ok()
}

/// The session a request continues, and whether it is one this deployment issued (only
/// then is its history read); any other id, or none, gets a new signed id.
pub(super) fn resolve(secret: &Secret, requested: Option<String>) -> (String, bool) {
    match requested {
        Some(s) if verify(secret, &s) => (s, true),
        Some(_) => {
            // Chosen, tampered, or from another deployment: never read its history.
            tracing::info!("session id not issued here; starting a new session");
            (issue(secret), false)
        }
        None => (issue(secret), false),
    }
}

fn mac(secret: &Secret, body: &str) -> Vec<u8> {
    // HMAC takes keys of any length, so this cannot fail; an empty MAC would never verify.
    let Ok(mut m) = Hmac::<Sha256>::new_from_slice(secret.expose().as_bytes()) else {
        return Vec::new();
    };
    // Domain-separated from the client-address hashes made with the same secret.
    m.update(b"session\0");
    m.update(body.as_bytes());
    m.finalize().into_bytes().to_vec()
}

impl super::ChatService {
    /// `name` signed as a session id of this deployment (`session::sign`): for tests and
    /// tools that continue a session they name. Before the salt is known (a lazy salt not
    /// yet looked up) `name` is returned as it is, and will not verify.
    pub fn sign_session(&self, name: &str) -> String {
        self.admission
            .salt()
            .known()
            .map_or_else(|| name.to_owned(), |secret| sign(secret, name))
    }

    /// The secret sessions are signed with: the client-hash salt. Known once the request
    /// was admitted; should its lookup still fail, a per-process secret signs a new
    /// session (which then lives on this instance only) rather than failing the turn.
    pub(super) async fn session_secret(&self) -> Secret {
        match self.admission.salt().get().await {
            Ok(secret) => secret.clone(),
            Err(e) => {
                tracing::warn!(error = %e, "client-hash salt unknown: session signed per instance");
                random_salt()
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::chat::is_valid_id;

    #[test]
    fn issued_ids_verify_and_are_fresh_and_well_formed() {
        let secret = Secret::new("deployment secret");
        let a = issue(&secret);
        let b = issue(&secret);
        assert_ne!(a, b);
        for id in [&a, &b] {
            assert!(verify(&secret, id), "{id}");
            assert!(is_valid_id(id), "{id}");
            assert!(id.starts_with("s-") && id.len() == 2 + 32 + 1 + 16, "{id}");
        }
    }

    #[test]
    fn chosen_tampered_or_foreign_ids_do_not_verify() {
        let secret = Secret::new("deployment secret");
        let id = issue(&secret);
        let (body, tag) = id.rsplit_once('.').unwrap();
        let flipped_body = format!(
            "{}{}",
            &body[..body.len() - 1],
            if body.ends_with('0') { '1' } else { '0' }
        );
        let flipped_tag = format!(
            "{}{}",
            &tag[..tag.len() - 1],
            if tag.ends_with('0') { '1' } else { '0' }
        );
        for bad in [
            "s-history".to_owned(),
            body.to_owned(),
            format!("{flipped_body}.{tag}"),
            format!("{body}.{flipped_tag}"),
            format!("{body}.{}", &tag[..8]),
            format!("{body}.{tag}00"),
            format!("{body}.zz{}", &tag[2..]),
            String::new(),
        ] {
            assert!(!verify(&secret, &bad), "{bad}");
        }
        assert!(!verify(&Secret::new("another deployment"), &id));
    }
}
