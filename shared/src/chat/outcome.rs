//! How the model part of a turn ended, and the label its audit record stores.
//!
//! The labels are stored strings: audit records in DynamoDB and the dump file keep them,
//! and `rag report` groups and counts them (`model_error:*`, `no_hits`), so
//! [`Label`]'s `Display` must keep writing exactly the strings records already hold.

use std::fmt;
use std::time::{Duration, Instant};

use super::offline::OfflineReason;
use crate::answer_cache::CachedAnswer;
use crate::llm::LlmError;
use crate::message::Usage;

/// The `model` reported when no model is configured.
pub const OFFLINE_MODEL: &str = "offline";

/// How a turn ended, as its audit record says.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Label {
    /// The model answered in full: `ok`.
    Answered,
    /// Answered without the model: `offline` (no model configured) or
    /// `offline:<reason>` (`offline:daily_budget`, `offline:unavailable`).
    Offline(OfflineReason),
    /// Answered from the answer cache: `cached`.
    Cached,
    /// The model's reply passed its cap and was cut there: `reply_capped`.
    ReplyCapped,
    /// The visitor left before the answer was delivered: `client_disconnected`.
    ClientDisconnected,
    /// The model call failed: `model_error:<kind>`.
    ModelError(ModelFailure),
    /// Answered (by the model or offline) with nothing retrieved: `no_hits`. Only the
    /// audit record carries it.
    NoHits,
}

/// How a model call failed, as its label names it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ModelFailure {
    /// `connect`: the provider could not be reached.
    Connect,
    /// `timeout`: a time limit passed.
    Timeout,
    /// `status_<code>`: the provider answered with an error status.
    Status(u16),
    /// `protocol`: the provider's answer could not be read.
    Protocol,
    /// `interrupted`: the answer stream broke off.
    Interrupted,
}

impl From<&LlmError> for ModelFailure {
    fn from(e: &LlmError) -> Self {
        match e {
            LlmError::Connect { .. } => Self::Connect,
            LlmError::Timeout { .. } => Self::Timeout,
            LlmError::Status { status, .. } => Self::Status(*status),
            LlmError::Protocol { .. } => Self::Protocol,
            LlmError::Interrupted { .. } => Self::Interrupted,
        }
    }
}

impl fmt::Display for Label {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Label::Answered => f.write_str("ok"),
            Label::Offline(OfflineReason::NoModel) => f.write_str("offline"),
            Label::Offline(reason) => write!(f, "offline:{}", reason.as_str()),
            Label::Cached => f.write_str("cached"),
            Label::ReplyCapped => f.write_str("reply_capped"),
            Label::ClientDisconnected => f.write_str("client_disconnected"),
            Label::ModelError(kind) => match kind {
                ModelFailure::Connect => f.write_str("model_error:connect"),
                ModelFailure::Timeout => f.write_str("model_error:timeout"),
                ModelFailure::Status(status) => write!(f, "model_error:status_{status}"),
                ModelFailure::Protocol => f.write_str("model_error:protocol"),
                ModelFailure::Interrupted => f.write_str("model_error:interrupted"),
            },
            Label::NoHits => f.write_str("no_hits"),
        }
    }
}

/// How the model part of a turn ended.
pub(super) struct Outcome {
    /// The answer delivered; `None` when the model failed or the visitor left.
    pub(super) reply: Option<String>,
    pub(super) model: String,
    pub(super) usage: Option<Usage>,
    pub(super) label: Label,
    pub(super) generate: Duration,
    /// Whether the model was asked at all (an answer without it costs nothing).
    pub(super) model_called: bool,
    /// The provider refused the call (an error status, or no connection) before
    /// generating anything: nothing was billed.
    pub(super) refused: bool,
}

impl Outcome {
    /// The model answered `text` in full.
    pub(super) fn answered(
        text: String,
        model: &str,
        usage: Option<Usage>,
        started: Instant,
    ) -> Self {
        Self::model_reply(text, model, usage, started, Label::Answered)
    }

    /// The model's reply passed its cap ([`super::reply_cap_chars`]) and was cut to `text`:
    /// answered and recorded, labelled so the audit shows the provider overran.
    pub(super) fn capped(
        text: String,
        model: &str,
        usage: Option<Usage>,
        started: Instant,
    ) -> Self {
        Self::model_reply(text, model, usage, started, Label::ReplyCapped)
    }

    fn model_reply(
        text: String,
        model: &str,
        usage: Option<Usage>,
        started: Instant,
        label: Label,
    ) -> Self {
        Self {
            reply: Some(text),
            model: model.to_owned(),
            usage,
            label,
            generate: started.elapsed(),
            model_called: true,
            refused: false,
        }
    }

    /// The visitor left before the answer was delivered; `model_called` when the model had
    /// been asked (what it generated may have been billed).
    pub(super) fn disconnected(
        model: &str,
        usage: Option<Usage>,
        generate: Duration,
        model_called: bool,
    ) -> Self {
        Self {
            reply: None,
            model: model.to_owned(),
            usage,
            label: Label::ClientDisconnected,
            generate,
            model_called,
            refused: false,
        }
    }

    /// A turn answered from the answer cache: no model call, nothing spent.
    pub(super) fn cached(hit: &CachedAnswer, started: Instant) -> Self {
        Self {
            reply: Some(hit.reply.clone()),
            model: hit.model.clone(),
            usage: None,
            label: Label::Cached,
            generate: started.elapsed(),
            model_called: false,
            refused: false,
        }
    }

    /// A turn answered without the model, with `text` (empty when there is none).
    pub(super) fn offline(text: String, reason: OfflineReason, started: Instant) -> Self {
        Self {
            reply: Some(text),
            model: OFFLINE_MODEL.to_owned(),
            usage: None,
            label: Label::Offline(reason),
            generate: started.elapsed(),
            model_called: false,
            refused: false,
        }
    }

    /// A failed model call, after `generated_tokens` of answer (estimated) were delivered.
    pub(super) fn failed(
        e: &LlmError,
        model: &str,
        generate: Duration,
        generated_tokens: u64,
    ) -> Self {
        tracing::error!(error = %e, "model call failed");
        Self {
            reply: None,
            model: model.to_owned(),
            usage: None,
            label: Label::ModelError(e.into()),
            generate,
            model_called: true,
            // A refusal comes before any generation; a timeout or a broken stream may come
            // after the provider started (and billed) work.
            refused: generated_tokens == 0
                && matches!(e, LlmError::Connect { .. } | LlmError::Status { .. }),
        }
    }
}

/// The audit label of a turn: [`Label::NoHits`] when the site had nothing for the question
/// and the visitor was told so (by the model or offline), else the outcome's own.
pub(super) fn audit_label(no_hits: bool, outcome: &Outcome) -> Label {
    let answered = matches!(outcome.label, Label::Answered | Label::Offline(_));
    if no_hits && answered {
        Label::NoHits
    } else {
        outcome.label
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn labels_are_the_strings_stored_audit_records_hold() {
        // Written out by hand: records already in DynamoDB and `rag report` use these.
        let cases = [
            (Label::Answered, "ok"),
            (Label::Offline(OfflineReason::NoModel), "offline"),
            (
                Label::Offline(OfflineReason::DailyBudget),
                "offline:daily_budget",
            ),
            (
                Label::Offline(OfflineReason::Unavailable),
                "offline:unavailable",
            ),
            (Label::Cached, "cached"),
            (Label::ReplyCapped, "reply_capped"),
            (Label::ClientDisconnected, "client_disconnected"),
            (
                Label::ModelError(ModelFailure::Connect),
                "model_error:connect",
            ),
            (
                Label::ModelError(ModelFailure::Timeout),
                "model_error:timeout",
            ),
            (
                Label::ModelError(ModelFailure::Status(429)),
                "model_error:status_429",
            ),
            (
                Label::ModelError(ModelFailure::Protocol),
                "model_error:protocol",
            ),
            (
                Label::ModelError(ModelFailure::Interrupted),
                "model_error:interrupted",
            ),
            (Label::NoHits, "no_hits"),
        ];
        for (label, stored) in cases {
            assert_eq!(label.to_string(), stored);
        }
    }

    #[test]
    fn only_answered_turns_without_hits_are_audited_as_no_hits() {
        let started = Instant::now();
        let ok = Outcome::answered("a".into(), "m", None, started);
        let offline = Outcome::offline("a".into(), OfflineReason::DailyBudget, started);
        let gone = Outcome::disconnected("m", None, Duration::ZERO, true);
        assert_eq!(audit_label(true, &ok), Label::NoHits);
        assert_eq!(audit_label(true, &offline), Label::NoHits);
        assert_eq!(audit_label(true, &gone), Label::ClientDisconnected);
        assert_eq!(audit_label(false, &ok), Label::Answered);
    }
}
