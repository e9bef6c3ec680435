//! Core library of the serverless RAG chat backend: the services and the HTTP edge the
//! three functions share.
//!
//! # Layout
//! One module (file or folder) per concept; a module uses only those below it in this
//! list's dependency order, never one that uses it back (checked by a test,
//! `cargo test -p shared --lib architecture`).
//!
//! Foundations:
//! - [`error`]: the crate's error type, validation problems, the failures of the outside
//!   dependencies it wraps, and text made printable on one line ([`error::escape_controls`]).
//! - [`config`]: typed configuration read once from the environment, and the AWS SDK
//!   configuration built from it ([`config::sdk_config_from_env`]).
//! - [`message`]: roles, chat messages and token usage.
//! - [`secret`]: [`Secret`], a string that prints as `[redacted]`, and OS randomness.
//! - [`dates`]: civil dates from day numbers (the budget's UTC days, `rag report`).
//! - [`heap`]: the heap an index build takes, measured.
//! - [`retry`]: retrying transient failures with backoff and jitter until a deadline.
//!
//! Knowledge and retrieval:
//! - [`kb`]: the knowledge base: document model, parsing, validation, passages, and where
//!   it is stored ([`KbSource`]: S3, file, memory).
//! - [`retrieval`]: tokenizer, Chinese→English lexicon, BM25 index, ranking.
//! - [`index`] (`search/prebuilt/`): the prebuilt index file (documents and a retriever's
//!   arrays, versioned and checksummed) written beside the knowledge base and loaded at
//!   cold start instead of the JSON.
//! - [`search`]: an indexed knowledge base, the served self-refreshing [`KbHandle`], and
//!   the search operation (requests, batches, filters, the listing-question recogniser).
//! - [`mcp`]: the site as a Model Context Protocol server (JSON-RPC messages, the tools
//!   `search_site` and `get_page`) for the `search` function's `/mcp` path.
//! - [`ingest`]: authenticated knowledge-base updates (replace, patch, audit) for the
//!   `ingest` function and `rag ingest`.
//!
//! Answering:
//! - [`prompt`]: system prompt + delimited retrieved context
//!   ([`prompt::context_blocks`]) + history + question, fitted to the model's context
//!   window ([`prompt::estimate_tokens`]), with outside text neutralised
//!   ([`prompt::neutralize`]).
//! - [`grounding`]: each sentence of an answer checked against the blocks it was given.
//! - [`llm`]: the chat model client: [`LlmClient`] trait, OpenAI-compatible adapter
//!   (DashScope, OpenAI, any compatible server), its configuration and SSE decoding.
//! - [`store`]: the conversation store (turns by session + audit records): trait, DynamoDB
//!   adapter, in-memory stand-in.
//! - [`limits`]: per-client and per-session rate limits and the daily token budget, as
//!   counters shared by all instances (DynamoDB) or per instance (memory).
//! - [`answer_cache`]: answers to first-turn questions reused without a model call.
//! - [`chat`]: the chat service: request validation, turn retrieval (follow-ups
//!   [`chat::retrieve_followup`], query rewriting), the one turn flow (model,
//!   offline or cached answer, recording), events, feedback, health, bot check.
//!
//! The edge:
//! - [`edge`]: what serving over Lambda function URLs needs: error bodies, JSON and SSE
//!   responses, CORS, body limits (`http`), raw query strings (`raw_query`), logs and
//!   metrics (`telemetry`).
//! - `testing` (feature `test-util`): a scripted OpenAI-compatible HTTP server, a moto
//!   server per test, a fault-injecting proxy for the AWS APIs, and store behaviour scenarios.
//!
//! The Lambda handlers in `functions/*` stay thin: they decode a request, call one function
//! of this crate and encode the result.

pub mod answer_cache;
#[cfg(test)]
mod architecture;
pub mod chat;
pub mod config;
pub mod dates;
pub mod edge;
pub mod error;
pub mod grounding;
pub mod heap;
pub mod ingest;
pub mod kb;
pub mod limits;
pub mod llm;
pub mod mcp;
pub mod message;
pub mod percent;
pub mod prompt;
pub mod retrieval;
pub mod retry;
pub mod search;
/// The prebuilt index file: documents and a retriever's arrays, versioned and checksummed,
/// written beside the knowledge base and loaded at cold start instead of the JSON (format:
/// `docs/prebuilt-index.md`; code: `search/prebuilt/`).
pub mod index {
    // The whole surface of `prebuilt` is the format's API, so it is re-exported whole.
    pub use crate::search::prebuilt::*;
}
pub mod secret;
pub mod store;
#[cfg(any(test, feature = "test-util"))]
pub mod testing;
mod varint;

pub use chat::{ChatConfig, ChatEvent, ChatRequest, ChatResponse, ChatService};
pub use config::{Config, KbLocation};
pub use error::{Error, Problem, Problems, Result};
pub use kb::{
    DocKind, Document, FileKbSource, KbSource, KbSourceError, KnowledgeBase, MemoryKbSource,
    S3KbSource,
};
pub use llm::{
    BedrockClient, Completion, CompletionRequest, CompletionStream, LlmClient, LlmConfig, LlmError,
    OpenAiCompatClient, StreamEvent,
};
pub use message::{ChatMessage, Role, Usage};
pub use retrieval::{DocScore, QueryTerm, Ranked, Retriever};
pub use search::{
    BatchResponse, KbHandle, SearchCall, SearchHit, SearchIndex, SearchRequest, SearchResponse,
    Section,
};
pub use secret::Secret;
pub use store::{
    AuditRecord, ConversationStore, DynamoConversationStore, Exchange, MemoryConversationStore,
    Recorded, StoreError,
};
