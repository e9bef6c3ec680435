//! What a chat answers: the JSON body, the stream's events and the health report.
//!
//! Event names and payloads follow the HTTP API (`docs/architecture.md`): `sources`
//! (sources + session id) first, then `delta` (`{"text"}`) pieces, then `done` (usage,
//! timings, model, budget) or `error` (`{"code", "message"}`). The edge frames each event
//! for the wire (`crate::edge::sse_event`), mapping an error to its code and message as it
//! does for a JSON answer.

use std::sync::Arc;

use serde::Serialize;

use super::suggest::{Handoff, Suggestion};
use crate::error::Error;
use crate::grounding::Grounding;
use crate::message::Usage;
use crate::prompt::Budget;

/// One retrieved entry cited as `[n]`; built from the knowledge base only, never from
/// model output.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Source {
    /// The citation number, from 1, as in the prompt.
    pub n: usize,
    /// The entry's id in the knowledge base.
    pub id: String,
    /// The entry's `type` as the knowledge base has it (`publication`, `page`, ...).
    #[serde(rename = "type")]
    pub doc_type: String,
    /// Title (a project's name).
    pub title: String,
    /// The document's main link.
    pub url: Option<String>,
    /// The headings the cited passage starts under on its page, outermost first; left out
    /// when the passage is the whole page ([`crate::search::SearchIndex::passage_section`]).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub section: Vec<String>,
    /// The page's link to that section, when one of its headings has an id: where a
    /// citation of a long page should take the reader.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub section_url: Option<String>,
    /// BM25 score, rounded to 3 decimals.
    pub score: f32,
}

/// Wall times of a request, in milliseconds (microsecond precision).
#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize)]
pub struct Timings {
    /// History lookup, retrieval and prompt assembly.
    pub retrieve: f64,
    /// The model call (or composing the offline answer).
    pub generate: f64,
    /// From the request's arrival to the answer.
    pub total: f64,
}

/// How retrieval went for this turn.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct RetrievalInfo {
    /// The text searched: the question, or earlier turns + the question.
    pub query: String,
    /// Whether the question was treated as a follow-up of earlier turns.
    pub followup: bool,
    /// The standalone query the model rewrote the question into, when it was rewritten.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rewritten_query: Option<String>,
    /// True when the rewrite's hits were fused with the original's (reciprocal rank fusion).
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub fused: bool,
    /// The filters of a listing question ("他发表过哪些 CVPR 论文"), when it was one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub filters: Option<crate::search::Filters>,
    /// True when the question was answered as a listing: every matching entry, in order.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub listing: bool,
}

/// The JSON response of a non-streamed chat: the text, the sources, and everything the
/// stream's `done` event carries, as fields of the same object.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ChatResponse {
    /// The answer (the field existing widgets read).
    pub reply: String,
    /// The entries the answer may cite.
    pub sources: Vec<Source>,
    /// The rest, exactly as a stream's `done` event says it.
    #[serde(flatten)]
    pub done: DoneEvent,
}

/// The payload of the `sources` event.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SourcesEvent {
    /// The entries the answer may cite.
    pub sources: Vec<Source>,
    /// The signed session id to send with the next question: the one asked with, or a new
    /// one when that was not issued here.
    pub session_id: String,
    /// The request's id.
    pub request_id: String,
}

/// The payload of the `done` event: everything of [`ChatResponse`] but the text and the
/// sources (sent first, in `sources`).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct DoneEvent {
    /// The signed session id to send with the next question (as in `sources`).
    pub session_id: String,
    /// The request's id.
    pub request_id: String,
    /// The model that answered, or `offline`.
    pub model: String,
    /// True when the model was not called.
    pub offline: bool,
    /// Why, when offline: `no_model`, `daily_budget` or `unavailable`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub offline_reason: Option<&'static str>,
    /// Tokens used: the provider's count, else an estimate; zero when no model was called
    /// (offline, or a cached answer).
    pub usage: Usage,
    /// Where the time went.
    pub timings_ms: Timings,
    /// How the context window was shared out.
    pub budget: Budget,
    /// What was searched.
    pub retrieval: RetrievalInfo,
    /// How well the answer is backed by the blocks it was given (answers the model wrote).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub grounding: Option<Grounding>,
    /// Related entries the visitor may ask about next (at most three).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub suggestions: Vec<Suggestion>,
    /// The owner's contact, when the site had nothing on the question and one is set.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub handoff: Option<Handoff>,
    /// Sent back with a rating of this answer (`POST {"feedback": {...}}`): proves the
    /// rating comes from the visitor who got the answer.
    pub feedback_token: String,
    /// True when the answer came from the answer cache (no model call, nothing spent).
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub cached: bool,
}

/// One Server-Sent Event of a streamed chat.
#[derive(Debug, Clone)]
pub enum ChatEvent {
    /// Sent first, before the model is called.
    Sources(SourcesEvent),
    /// The next piece of the answer.
    Delta {
        /// Text to append to what was sent so far (a piece of any size).
        text: String,
    },
    /// The answer is complete.
    Done(Box<DoneEvent>),
    /// The answer failed; nothing follows. The edge sends the error's code and its
    /// message for visitors (generic; the cause is logged).
    Error(Arc<Error>),
}

impl ChatEvent {
    /// The SSE event name.
    pub fn name(&self) -> &'static str {
        match self {
            ChatEvent::Sources(_) => "sources",
            ChatEvent::Delta { .. } => "delta",
            ChatEvent::Done(_) => "done",
            ChatEvent::Error(_) => "error",
        }
    }
}

/// The `GET` health report.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Health {
    /// `ok`, or `degraded` while the shared limit counters are down and limits are
    /// counted per instance.
    pub status: &'static str,
    /// The knowledge base's version (content hash or ETag).
    pub kb_version: String,
    /// Documents in the knowledge base.
    pub documents: usize,
    /// The configured model, or `offline`.
    pub model: String,
    /// The conversation store backend (`dynamodb`, `memory`).
    pub store: &'static str,
    /// The owner's contact (`CONTACT_URL`), for the widget's "contact the owner".
    #[serde(skip_serializing_if = "Option::is_none")]
    pub contact_url: Option<String>,
    /// The abuse and cost limits in force.
    pub limits: LimitsReport,
    /// What the knowledge base's index costs this instance, and the memory it runs under.
    pub index: IndexReport,
}

/// The index part of the health report: whether a knowledge base fits the deployment.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct IndexReport {
    /// Whether it was read from the prebuilt index (else from the JSON).
    pub prebuilt: bool,
    /// Bytes of what it was read from (the prebuilt index or the JSON).
    pub bytes: u64,
    /// The function's memory in MB (`AWS_LAMBDA_FUNCTION_MEMORY_SIZE`); absent outside
    /// Lambda.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub memory_limit_mb: Option<u64>,
    /// This instance's resident memory now and at its peak; absent where the system does
    /// not say.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub resident: Option<crate::heap::Resident>,
}

/// The limits part of the health report.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct LimitsReport {
    /// Where the limits are counted: `dynamodb` (shared by all instances), `memory`, or
    /// `memory-fallback` (this instance's memory while DynamoDB is down).
    pub counters: &'static str,
    /// Chat requests per client and per session per minute (0: off).
    pub rate_limit_per_minute: u64,
    /// The cap on answer tokens per model call.
    pub max_tokens: u32,
    /// Today's token budget; absent when its counter could not be read.
    pub budget: Option<crate::limits::BudgetStatus>,
}
