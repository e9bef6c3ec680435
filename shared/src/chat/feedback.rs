//! A visitor's thumbs up or down on an answer (`POST {"feedback": {...}}`).
//!
//! Every answer carries a `feedback_token`: an HMAC-SHA256, under the deployment's secret
//! (the client-hash salt that also signs session ids, [`super::session`]), of the answer's
//! request id and session id. Only the visitor who received the answer has both the token
//! and the session, so only they can rate it; the server keeps no per-answer state for it.
//! A rating costs one conditional `UpdateItem` on the answer's audit record (the condition:
//! a chat record of that request in that session exists), no model call and no budget.

use serde::Serialize;
use serde_json::{Map, Value};

use hmac::{Hmac, KeyInit, Mac};
use sha2::Sha256;

use super::RequestContext;
use crate::error::{Error, Result};
use crate::secret::Secret;
use crate::store::{Feedback, FeedbackStored, Rating, StoreError};

/// Longest comment accepted, in characters, after control characters are taken out.
pub const MAX_COMMENT_CHARS: usize = 500;

/// Bytes of the MAC kept in a token: 128 bits, beyond guessing.
const TOKEN_BYTES: usize = 16;

/// The token that lets the holder of `session_id` rate the answer to `request_id`.
pub fn feedback_token(secret: &Secret, request_id: &str, session_id: &str) -> String {
    // Without a MAC (never: HMAC takes any key) the token is empty and never verifies.
    mac(secret, request_id, session_id).map_or_else(String::new, |m| {
        hex::encode(
            m.finalize()
                .into_bytes()
                .get(..TOKEN_BYTES)
                .unwrap_or_default(),
        )
    })
}

/// Whether `token` is this deployment's token for the answer (compared in constant time).
pub(super) fn verify_feedback_token(
    secret: &Secret,
    request_id: &str,
    session_id: &str,
    token: &str,
) -> bool {
    let Some(tag) = hex::decode(token).ok().filter(|t| t.len() == TOKEN_BYTES) else {
        return false;
    };
    mac(secret, request_id, session_id).is_some_and(|m| m.verify_truncated_left(&tag).is_ok())
}

fn mac(secret: &Secret, request_id: &str, session_id: &str) -> Option<Hmac<Sha256>> {
    // Domain-separated from session ids and client hashes made with the same secret; the
    // NUL keeps the two ids apart (neither may contain one, `is_valid_id`).
    let mut m = <Hmac<Sha256> as KeyInit>::new_from_slice(secret.expose().as_bytes()).ok()?;
    m.update(b"feedback\0");
    m.update(request_id.as_bytes());
    m.update(b"\0");
    m.update(session_id.as_bytes());
    Some(m)
}

/// A validated rating request.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FeedbackRequest {
    /// The rated answer's request id (from its `done` event or JSON response).
    pub request_id: String,
    /// The answer's session id.
    pub session_id: String,
    /// The answer's `feedback_token`.
    pub token: String,
    /// Up or down.
    pub rating: Rating,
    /// The comment, control characters taken out and trimmed; `None` when empty.
    pub comment: Option<String>,
}

impl FeedbackRequest {
    /// Reads the `feedback` object of a body: `request_id`, `session_id`, `token`,
    /// `rating` (`"up"` or `"down"`) and an optional `comment` of at most
    /// [`MAX_COMMENT_CHARS`] characters. Every error is [`Error::InvalidInput`] naming the
    /// field.
    pub fn from_value(value: &Value) -> Result<Self> {
        let Value::Object(obj) = value else {
            return Err(invalid(
                "feedback must be an object with request_id, session_id, token and rating",
            ));
        };
        let id = |key: &str| -> Result<String> {
            match obj.get(key) {
                Some(Value::String(s)) if super::is_valid_id(s) => Ok(s.clone()),
                _ => Err(invalid(format!(
                    "feedback.{key} must be the answer's {key} (1 to {} letters, digits, '-', '_', '.' or ':')",
                    super::MAX_ID_CHARS
                ))),
            }
        };
        let token = match obj.get("token") {
            Some(Value::String(t)) if t.len() == 2 * TOKEN_BYTES => t.clone(),
            _ => {
                return Err(invalid(
                    "feedback.token must be the answer's feedback_token (32 hex digits)",
                ))
            }
        };
        let rating = match obj.get("rating") {
            Some(Value::String(r)) => Rating::parse(r),
            _ => None,
        }
        .ok_or_else(|| invalid("feedback.rating must be \"up\" or \"down\""))?;
        Ok(Self {
            request_id: id("request_id")?,
            session_id: id("session_id")?,
            token,
            rating,
            comment: comment(obj)?,
        })
    }

    /// The rating as stored, given at `at_ms` (epoch milliseconds).
    pub fn feedback(&self, at_ms: u64) -> Feedback {
        Feedback {
            rating: self.rating,
            comment: self.comment.clone(),
            at_ms,
        }
    }
}

/// The optional comment: line breaks and tabs become spaces, every other control or
/// bidirectional-formatting character is dropped (the comment is shown in a terminal and
/// on a page), then trimmed and bounded.
fn comment(obj: &Map<String, Value>) -> Result<Option<String>> {
    let text = match obj.get("comment") {
        None | Some(Value::Null) => return Ok(None),
        Some(Value::String(s)) => s,
        Some(_) => return Err(invalid("feedback.comment must be a string")),
    };
    // The body is already bounded (`MAX_BODY_BYTES`): this is one pass over at most that.
    let cleaned: String = text
        .chars()
        .filter_map(|c| match c {
            '\n' | '\r' | '\t' | '\u{2028}' | '\u{2029}' => Some(' '),
            c if c.is_control() || is_bidi_control(c) => None,
            c => Some(c),
        })
        .collect();
    let cleaned = cleaned.trim();
    let chars = cleaned.chars().count();
    if chars > MAX_COMMENT_CHARS {
        return Err(invalid(format!(
            "feedback.comment is {chars} characters long; the limit is {MAX_COMMENT_CHARS}"
        )));
    }
    Ok((!cleaned.is_empty()).then(|| cleaned.to_owned()))
}

/// Characters that reorder the text around them on display (embeddings, overrides,
/// isolates, marks): a comment could otherwise disguise itself in the report.
fn is_bidi_control(c: char) -> bool {
    matches!(c, '\u{200e}' | '\u{200f}' | '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}')
}

fn invalid(message: impl Into<String>) -> Error {
    Error::InvalidInput(message.into())
}

/// What a stored rating answers.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct FeedbackAck {
    /// The rated answer.
    pub request_id: String,
    /// The rating now stored (`up`, `down`).
    pub rating: Rating,
    /// Whether a comment was stored with it.
    pub comment: bool,
}

impl super::ChatService {
    /// Stores a visitor's rating of an earlier answer: the token must be the answer's
    /// ([`Error::Forbidden`], 403), the rating is rate-limited per client and session like a
    /// question but counted apart, so rating never uses up the visitor's questions
    /// ([`Error::RateLimited`], 429), and the answer must be recorded in that session
    /// ([`Error::NotFound`], 404). Nothing is written on any refusal; a second rating of
    /// the same answer replaces the first. One conditional `UpdateItem`, no model call.
    #[tracing::instrument(skip_all, fields(request_id = %ctx.request_id))]
    pub async fn feedback(
        &self,
        req: &FeedbackRequest,
        ctx: &RequestContext,
    ) -> Result<FeedbackAck, Error> {
        let secret =
            self.admission.salt().get().await.inspect_err(
                |e| tracing::error!(error = %e, "cannot look up the client-hash salt"),
            )?;
        if !verify_feedback_token(secret, &req.request_id, &req.session_id, &req.token) {
            return Err(Error::Forbidden(
                "feedback.token is not the feedback_token of that answer in that session".into(),
            ));
        }
        let client = self.client_key(ctx.client_ip.as_deref()).await?;
        let limited = self
            .admission
            .rate()
            .check(
                &format!("feedback:{client}"),
                Some(&format!("feedback:{}", req.session_id)),
                ctx.at,
            )
            .await
            .inspect_err(|e| tracing::error!(error = %e, "cannot check the rate limits"))?;
        if let Some(l) = limited {
            return Err(Error::RateLimited {
                scope: l.scope,
                retry_after_secs: l.retry_after_secs,
            });
        }
        let at_ms = crate::store::epoch_ms(ctx.at);
        // Throttling and outages retried within the record budget: the update sets the same
        // values every time, so an attempt that landed unseen is harmless to repeat.
        let deadline = tokio::time::Instant::now() + self.config.store_budgets.record;
        let feedback = req.feedback(at_ms);
        let stored = crate::retry::retry_until(deadline, StoreError::is_retryable, || {
            self.store
                .record_feedback(&req.request_id, &req.session_id, &feedback)
        })
        .await
        .inspect_err(|e| tracing::error!(error = %e, "cannot store feedback"))?;
        match stored {
            FeedbackStored::Stored => {
                tracing::info!(rating = req.rating.as_str(), rated = %req.request_id, "feedback stored");
                Ok(FeedbackAck {
                    request_id: req.request_id.clone(),
                    rating: req.rating,
                    comment: req.comment.is_some(),
                })
            }
            FeedbackStored::UnknownRequest => Err(Error::NotFound(
                "no recorded answer has that request_id in that session (an answer is recorded \
                 just after its done event: retry in a moment)"
                    .into(),
            )),
        }
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    const TOKEN_LEN: usize = 2 * TOKEN_BYTES;

    #[test]
    fn tokens_verify_only_for_their_answer_session_and_deployment() {
        let secret = Secret::new("deployment secret");
        let t = feedback_token(&secret, "req-1", "s-abc.0123");
        assert_eq!(t.len(), TOKEN_LEN);
        assert!(verify_feedback_token(&secret, "req-1", "s-abc.0123", &t));
        assert!(!verify_feedback_token(&secret, "req-2", "s-abc.0123", &t));
        assert!(!verify_feedback_token(&secret, "req-1", "s-abd.0123", &t));
        assert!(!verify_feedback_token(
            &Secret::new("other"),
            "req-1",
            "s-abc.0123",
            &t
        ));
        // The ids cannot be shifted into each other: ("req-1", "s") and ("req-1\0s", ...)
        // are impossible (ids have no NUL), and the two fields are hashed apart.
        assert!(!verify_feedback_token(&secret, "req-1s-abc.0123", "", &t));
        let flipped = format!("{}{}", &t[..31], if t.ends_with('0') { '1' } else { '0' });
        assert!(!verify_feedback_token(
            &secret,
            "req-1",
            "s-abc.0123",
            &flipped
        ));
        assert!(!verify_feedback_token(
            &secret,
            "req-1",
            "s-abc.0123",
            &t[..30]
        ));
        assert!(!verify_feedback_token(&secret, "req-1", "s-abc.0123", "zz"));
    }

    fn body(extra: Value) -> Value {
        let mut v = json!({
            "request_id": "req-1", "session_id": "s-1.ab", "token": "0".repeat(TOKEN_LEN),
            "rating": "down"
        });
        if let (Value::Object(o), Value::Object(e)) = (&mut v, extra) {
            o.extend(e);
        }
        v
    }

    #[test]
    fn a_valid_request_is_read_and_its_comment_cleaned() {
        let r = FeedbackRequest::from_value(&body(json!({
            "comment": "  wrong\ndate\u{0007} \u{202e}reversed\u{202c} "
        })))
        .unwrap();
        assert_eq!(r.rating, Rating::Down);
        assert_eq!(r.comment.as_deref(), Some("wrong date reversed"));
        let r = FeedbackRequest::from_value(&body(json!({"comment": " \n "}))).unwrap();
        assert_eq!(r.comment, None);
        assert_eq!(r.feedback(7).at_ms, 7);
    }

    #[test]
    fn every_bad_field_is_named() {
        let long = "é".repeat(MAX_COMMENT_CHARS + 1);
        let cases = [
            (json!("up"), "must be an object"),
            (body(json!({"rating": "meh"})), "feedback.rating"),
            (body(json!({"rating": null})), "feedback.rating"),
            (body(json!({"token": "abc"})), "feedback.token"),
            (body(json!({"request_id": "a b"})), "feedback.request_id"),
            (body(json!({"session_id": 5})), "feedback.session_id"),
            (body(json!({"comment": 5})), "feedback.comment must be"),
            (body(json!({"comment": long})), "the limit is 500"),
        ];
        for (value, needle) in cases {
            let e = FeedbackRequest::from_value(&value).unwrap_err().to_string();
            assert!(e.contains(needle), "{value} → {e}");
        }
        // Exactly at the limit (control characters do not count) is accepted.
        let at_limit = format!("{}\u{0001}", "é".repeat(MAX_COMMENT_CHARS));
        assert!(FeedbackRequest::from_value(&body(json!({ "comment": at_limit }))).is_ok());
    }
}
