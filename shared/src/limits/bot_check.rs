//! The opt-in bot check (`BOT_CHECK=pow`): a proof-of-work puzzle the widget solves before it
//! asks, so that a script sending questions from many addresses pays CPU for each one.
//!
//! A challenge is stateless: `pow1.<bits>.<expires_at>.<nonce>.<mac>`, where the MAC is an
//! HMAC-SHA256, under the deployment's secret (the client-hash salt that also signs session
//! ids), of the rest of the token and of the salted hash of the address it was issued to.
//! Issuing one writes nothing. The client answers with `<challenge>:<counter>`, any decimal
//! counter for which SHA-256 of that whole string starts with `bits` zero bits; on average
//! that takes 2^bits hashes to find and one to check.
//!
//! A solved challenge may be sent again until it expires, from the same address (by the
//! rate limits' key: the IPv4 address, or the IPv6 network): that is what keeps the check
//! invisible to a visitor, who solves once per lifetime while typing. Tying it to the
//! address keeps one solution from being shared by many machines; the per-client rate limit
//! bounds what one address can ask with it. Counting the uses of a solution would need a
//! write per request, which the check exists to avoid.

use std::time::{Duration, SystemTime};

use hmac::{Hmac, KeyInit, Mac};
use sha2::{Digest, Sha256};

use crate::secret::Secret;

/// Version prefix of a challenge, so a later format can be told apart.
const PREFIX: &str = "pow1";
/// Bytes of the MAC kept in a challenge: 128 bits, beyond guessing.
const MAC_BYTES: usize = 16;
/// Longest accepted proof, in bytes: a challenge is about 80 and the counter at most 20.
const MAX_PROOF_BYTES: usize = 160;

/// Default `BOT_CHECK_DIFFICULTY`: 2^13 = 8,192 hashes on average. WebCrypto in headless
/// Chromium on the project's (busy) 2-core test machine took a median 0.3 s at 13 bits and
/// 0.5 s at 14 (`tests/widget/bot-check.test.mjs`); 13 leaves room for slower phones.
pub const DEFAULT_DIFFICULTY: u8 = 13;
/// Accepted `BOT_CHECK_DIFFICULTY` values: each bit doubles a visitor's wait, and above 24
/// (16.8 million hashes, minutes in a browser) no visitor would get an answer.
pub(crate) const DIFFICULTY_RANGE: std::ops::RangeInclusive<u8> = 1..=24;
/// Default `BOT_CHECK_TTL_SECS`: how long a solved challenge stays usable.
pub(crate) const DEFAULT_TTL_SECS: u64 = 300;

/// Whether chat requests must carry a solved challenge, and how hard it is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BotCheck {
    /// No check (the default).
    Off,
    /// Proof of work: `difficulty` leading zero bits of SHA-256, challenges valid for `ttl`.
    Pow {
        /// Leading zero bits the solution's hash must have.
        difficulty: u8,
        /// How long an issued challenge (and its solution) stays valid.
        ttl: Duration,
    },
}

/// A challenge as the chat's `GET ?challenge` sends it.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Challenge {
    /// Always `pow`.
    pub bot_check: &'static str,
    /// The token to solve and send back (`<challenge>:<counter>` as the request's `proof`).
    pub challenge: String,
    /// Leading zero bits the solution's SHA-256 must have.
    pub difficulty: u8,
    /// When the challenge and its solution stop being accepted (Unix seconds).
    pub expires_at: u64,
}

/// What `GET ?challenge` answers while the check is off: `{"bot_check": "off"}`, so a
/// widget knows to send no proof.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
pub struct BotCheckOff {
    /// Always `off`.
    pub bot_check: &'static str,
}

/// The one [`BotCheckOff`] answer.
pub const BOT_CHECK_OFF: BotCheckOff = BotCheckOff { bot_check: "off" };

pub use crate::error::BotCheckError;

/// A new challenge for the client whose (salted, hashed) address is `client`.
pub fn issue_challenge(
    secret: &Secret,
    client: &str,
    difficulty: u8,
    ttl: Duration,
    now: SystemTime,
) -> Challenge {
    let expires_at = unix(now).saturating_add(ttl.as_secs());
    let body = format!("{PREFIX}.{difficulty}.{expires_at}.{}", nonce());
    let tag = mac(secret, client, &body);
    Challenge {
        bot_check: "pow",
        challenge: format!(
            "{body}.{}",
            hex::encode(tag.get(..MAC_BYTES).unwrap_or_default())
        ),
        difficulty,
        expires_at,
    }
}

/// Checks `proof` (`<challenge>:<counter>`) for the client `client` at `now`: the challenge
/// was issued by this deployment to this client (MAC compared in constant time), asks for
/// at least `min_difficulty` bits, has not expired, and the proof's SHA-256 has that many
/// leading zero bits. One HMAC and one SHA-256, whatever the input.
pub fn verify_proof(
    secret: &Secret,
    client: &str,
    proof: Option<&str>,
    min_difficulty: u8,
    now: SystemTime,
) -> Result<(), BotCheckError> {
    let proof = proof.ok_or(BotCheckError::Required)?;
    let parsed = parse(proof).ok_or(BotCheckError::Failed)?;
    let Ok(mut m) = Hmac::<Sha256>::new_from_slice(secret.expose().as_bytes()) else {
        return Err(BotCheckError::Failed);
    };
    feed(&mut m, client, parsed.body);
    m.verify_truncated_left(&parsed.tag)
        .map_err(|_| BotCheckError::Failed)?;
    // Signed, so these were set by the issuer: a raised difficulty refuses old challenges.
    if parsed.difficulty < min_difficulty {
        return Err(BotCheckError::Failed);
    }
    if unix(now) > parsed.expires_at {
        return Err(BotCheckError::Expired);
    }
    if leading_zero_bits(&Sha256::digest(proof.as_bytes())) < u32::from(parsed.difficulty) {
        return Err(BotCheckError::Failed);
    }
    Ok(())
}

/// Finds a counter solving `challenge` at `difficulty` bits: what the widget does, for
/// tests and tools. Returns the proof to send.
pub fn solve_challenge(challenge: &str, difficulty: u8) -> String {
    (0u64..)
        .map(|n| format!("{challenge}:{n}"))
        .find(|p| leading_zero_bits(&Sha256::digest(p.as_bytes())) >= u32::from(difficulty))
        .unwrap_or_default()
}

/// The parts of a proof that its check needs.
struct Parsed<'a> {
    /// `pow1.<bits>.<expires_at>.<nonce>`: what the MAC covers.
    body: &'a str,
    tag: Vec<u8>,
    difficulty: u8,
    expires_at: u64,
}

/// Splits `pow1.<bits>.<expires_at>.<nonce>.<mac>:<counter>`; `None` for any other shape.
fn parse(proof: &str) -> Option<Parsed<'_>> {
    if proof.len() > MAX_PROOF_BYTES {
        return None;
    }
    let (challenge, counter) = proof.split_once(':')?;
    if counter.is_empty() || counter.len() > 20 || !counter.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let (body, tag) = challenge.rsplit_once('.')?;
    let tag = hex::decode(tag).ok().filter(|t| t.len() == MAC_BYTES)?;
    let mut parts = body.split('.');
    if parts.next()? != PREFIX {
        return None;
    }
    let difficulty = parts.next()?.parse().ok()?;
    let expires_at = parts.next()?.parse().ok()?;
    parts.next()?;
    if parts.next().is_some() {
        return None;
    }
    Some(Parsed {
        body,
        tag,
        difficulty,
        expires_at,
    })
}

fn mac(secret: &Secret, client: &str, body: &str) -> Vec<u8> {
    // HMAC takes keys of any length, so this cannot fail; an empty MAC would never verify.
    let Ok(mut m) = Hmac::<Sha256>::new_from_slice(secret.expose().as_bytes()) else {
        return Vec::new();
    };
    feed(&mut m, client, body);
    m.finalize().into_bytes().to_vec()
}

/// What a challenge's MAC covers: domain-separated from session ids and client hashes made
/// with the same secret, and bound to the client it was issued to.
fn feed(m: &mut Hmac<Sha256>, client: &str, body: &str) {
    m.update(b"pow\0");
    m.update(client.as_bytes());
    m.update(b"\0");
    m.update(body.as_bytes());
}

/// Leading zero bits of a hash.
fn leading_zero_bits(hash: &[u8]) -> u32 {
    let mut bits = 0;
    for &b in hash {
        bits += b.leading_zeros();
        if b != 0 {
            break;
        }
    }
    bits
}

/// 128 unpredictable bits: the standard library's OS-keyed hashers over the clock (as
/// session ids are drawn), so that two challenges never share a nonce.
fn nonce() -> String {
    hex::encode(crate::secret::random_bytes::<16>())
}

fn unix(t: SystemTime) -> u64 {
    t.duration_since(SystemTime::UNIX_EPOCH)
        .unwrap_or_default()
        .as_secs()
}

#[cfg(test)]
mod tests {
    use super::*;

    const CLIENT: &str = "0123456789abcdef";
    const TTL: Duration = Duration::from_secs(300);

    fn secret() -> Secret {
        Secret::new("deployment secret")
    }

    fn at(secs: u64) -> SystemTime {
        SystemTime::UNIX_EPOCH + Duration::from_secs(secs)
    }

    /// A solved proof issued at t = 1,000,000 s.
    fn solved(difficulty: u8) -> String {
        let c = issue_challenge(&secret(), CLIENT, difficulty, TTL, at(1_000_000));
        solve_challenge(&c.challenge, difficulty)
    }

    #[test]
    fn a_solved_challenge_verifies_until_it_expires_and_can_be_sent_again() {
        let c = issue_challenge(&secret(), CLIENT, 8, TTL, at(1_000_000));
        assert_eq!(c.expires_at, 1_000_300);
        assert!(
            c.challenge.starts_with("pow1.8.1000300."),
            "{}",
            c.challenge
        );
        let proof = solve_challenge(&c.challenge, 8);
        for now in [1_000_000, 1_000_100, 1_000_300] {
            assert_eq!(
                verify_proof(&secret(), CLIENT, Some(&proof), 8, at(now)),
                Ok(())
            );
        }
        assert_eq!(
            verify_proof(&secret(), CLIENT, Some(&proof), 8, at(1_000_301)),
            Err(BotCheckError::Expired)
        );
    }

    #[test]
    fn no_proof_is_required_and_two_challenges_differ() {
        assert_eq!(
            verify_proof(&secret(), CLIENT, None, 8, at(1_000_000)),
            Err(BotCheckError::Required)
        );
        let a = issue_challenge(&secret(), CLIENT, 8, TTL, at(1_000_000));
        let b = issue_challenge(&secret(), CLIENT, 8, TTL, at(1_000_000));
        assert_ne!(a.challenge, b.challenge);
    }

    #[test]
    fn too_little_work_fails() {
        let c = issue_challenge(&secret(), CLIENT, 12, TTL, at(1_000_000));
        // A counter whose hash has fewer than 12 leading zero bits.
        let weak = (0u64..)
            .map(|n| format!("{}:{n}", c.challenge))
            .find(|p| leading_zero_bits(&Sha256::digest(p.as_bytes())) < 12)
            .unwrap();
        assert_eq!(
            verify_proof(&secret(), CLIENT, Some(&weak), 12, at(1_000_000)),
            Err(BotCheckError::Failed)
        );
    }

    #[test]
    fn a_wrong_nonce_counter_or_signature_fails() {
        let proof = solved(8);
        let (challenge, counter) = proof.split_once(':').unwrap();
        let (body, tag) = challenge.rsplit_once('.').unwrap();
        let flip = |s: &str| {
            let last = if s.ends_with('0') { '1' } else { '0' };
            format!("{}{last}", &s[..s.len() - 1])
        };
        let other_counter = (counter.parse::<u64>().unwrap() + 1).to_string();
        for bad in [
            format!("{}.{tag}:{counter}", flip(body)),  // another nonce
            format!("{body}.{}:{counter}", flip(tag)),  // tampered signature
            format!("{body}.{}:{counter}", &tag[..16]), // truncated signature
            format!("{challenge}:{counter}x"),
            format!("{challenge}:"),
            format!("{challenge}:-1"),
            challenge.to_owned(),
            String::new(),
            format!("{}:{counter}", challenge.replacen("pow1", "pow2", 1)),
            format!("{challenge}:{}", "9".repeat(200)),
        ] {
            assert_eq!(
                verify_proof(&secret(), CLIENT, Some(&bad), 8, at(1_000_000)),
                Err(BotCheckError::Failed),
                "{bad}"
            );
        }
        // Another counter usually has too few zero bits; when it happens to have enough it
        // is a valid solution too, so only the first case is asserted.
        let other = format!("{challenge}:{other_counter}");
        if leading_zero_bits(&Sha256::digest(other.as_bytes())) < 8 {
            assert_eq!(
                verify_proof(&secret(), CLIENT, Some(&other), 8, at(1_000_000)),
                Err(BotCheckError::Failed)
            );
        }
    }

    #[test]
    fn a_longer_lifetime_or_lower_difficulty_cannot_be_written_in() {
        let proof = solved(8);
        for (from, to) in [(".1000300.", ".9000300."), ("pow1.8.", "pow1.1.")] {
            let forged = proof.replacen(from, to, 1);
            assert_ne!(forged, proof);
            // Re-solved, so only the signature can refuse it.
            let (challenge, _) = forged.split_once(':').unwrap();
            let resolved = solve_challenge(challenge, 8);
            assert_eq!(
                verify_proof(&secret(), CLIENT, Some(&resolved), 1, at(1_000_000)),
                Err(BotCheckError::Failed),
                "{resolved}"
            );
        }
    }

    #[test]
    fn another_deployment_or_client_or_a_raised_difficulty_fails() {
        let proof = solved(8);
        let now = at(1_000_000);
        let other = Secret::new("another deployment");
        assert_eq!(
            verify_proof(&other, CLIENT, Some(&proof), 8, now),
            Err(BotCheckError::Failed)
        );
        assert_eq!(
            verify_proof(&secret(), "fedcba9876543210", Some(&proof), 8, now),
            Err(BotCheckError::Failed)
        );
        assert_eq!(
            verify_proof(&secret(), CLIENT, Some(&proof), 9, now),
            Err(BotCheckError::Failed)
        );
    }

    #[test]
    fn leading_zero_bits_counts_across_bytes() {
        assert_eq!(leading_zero_bits(&[0xff]), 0);
        assert_eq!(leading_zero_bits(&[0x00, 0x10]), 11);
        assert_eq!(leading_zero_bits(&[0x00, 0x00, 0x01]), 23);
        assert_eq!(leading_zero_bits(&[0, 0]), 16);
    }
}
