//! Core library of the serverless RAG chat backend: everything but the HTTP edge.
//!
//! # Layout
//! - [`config`]: typed configuration read once from the environment.
//! - [`error`]: the crate's error type and validation problems.
//! - [`message`]: roles, chat messages and token usage.
//! - [`kb`]: the knowledge base: document model, parsing, validation, passages; where it is
//!   stored ([`KbSource`]: S3, file, memory) and the served, self-refreshing [`KbHandle`].
//! - [`ingest`]: authenticated knowledge-base updates (replace, patch, audit) for the
//!   `ingest` function and `rag ingest`.
//! - [`retrieval`]: tokenizer, Chinese→English lexicon, BM25 index, ranking.
//! - [`index`]: the prebuilt index file (a retriever's arrays, versioned and checksummed)
//!   written beside the knowledge base and loaded at cold start instead of re-indexing.
//! - [`search`]: an indexed knowledge base and the search operation (requests, batches,
//!   filters, the listing-question recogniser, responses).
//! - [`context`]: retrieved entries as numbered Markdown blocks for the prompt.
//! - [`followup`]: retrieval for a chat turn; follow-up questions ("它的代码在哪里？") are
//!   searched together with the earlier turn they depend on.
//! - [`tokens`]: token estimates for the prompt budget (measured against Qwen3's tokenizer).
//! - [`prompt`]: system prompt + delimited retrieved context + history + question, fitted to
//!   the model's context window; the budget decisions.
//! - [`untrusted`]: retrieved and visitor text made unable to write delimiters, chat-template
//!   tokens or invisible characters into the prompt.
//! - [`chat`]: the chat service: request validation, orchestration (history, retrieval,
//!   prompt, model or offline answer, recording), streamed events, health.
//! - [`limits`]: per-client and per-session rate limits and the daily token budget, as
//!   counters shared by all instances (DynamoDB) or per instance (memory).
//! - [`http`]: error responses, JSON responses, body limits and CORS for the functions.
//! - [`raw_query`]: escapes function-URL query strings `lambda_http` would panic on.
//! - [`llm`]: the chat model client: [`LlmClient`] trait, OpenAI-compatible adapter
//!   (DashScope, OpenAI, any compatible server), its configuration and SSE decoding.
//! - [`telemetry`]: logging set-up, the per-request summary line and EMF metrics.
//! - [`secret`]: [`Secret`], a string that prints as `[redacted]`.
//! - [`rewrite`]: query rewriting by one short model call when retrieval is weak or the
//!   question refers back, fused with the original hits.
//! - [`retry`]: retrying transient failures with backoff and jitter until a deadline.
//! - [`store`]: the conversation store (turns by session + audit records): trait, DynamoDB
//!   adapter, in-memory stand-in.
//! - [`aws`]: the AWS SDK configuration every function's `main` loads once.
//! - `testing` (feature `test-util`): a scripted OpenAI-compatible HTTP server, a moto
//!   server per test, a fault-injecting proxy for the AWS APIs, and store behaviour scenarios.
//!
//! The Lambda handlers in `functions/*` stay thin: they decode a request, call one function
//! of this crate and encode the result.

pub mod answer_cache;
#[cfg(test)]
mod architecture;
pub mod aws;
pub mod chat;
pub mod config;
pub mod context;
pub mod dates;
pub mod error;
pub mod followup;
pub mod grounding;
pub mod http;
pub mod index;
pub mod ingest;
pub mod kb;
pub mod limits;
pub mod llm;
pub mod memory;
pub mod message;
pub mod printable;
pub mod prompt;
pub mod raw_query;
pub mod retrieval;
pub mod retry;
pub mod rewrite;
pub mod search;
pub mod secret;
pub mod store;
pub mod telemetry;
#[cfg(any(test, feature = "test-util"))]
pub mod testing;
pub mod tokens;
pub mod untrusted;

pub use chat::{ChatConfig, ChatEvent, ChatRequest, ChatResponse, ChatService};
pub use config::{Config, KbLocation};
pub use error::{Error, Problem, Problems, Result};
pub use kb::{
    DocKind, Document, FileKbSource, KbSource, KbSourceError, KnowledgeBase, MemoryKbSource,
    S3KbSource,
};
pub use llm::{
    Completion, CompletionRequest, CompletionStream, LlmClient, LlmConfig, LlmError,
    OpenAiCompatClient, StreamEvent,
};
pub use message::{ChatMessage, Role, Usage};
pub use retrieval::{QueryTerm, Ranked, Retriever};
pub use search::{
    BatchResponse, KbHandle, SearchCall, SearchHit, SearchIndex, SearchRequest, SearchResponse,
};
pub use secret::Secret;
pub use store::{
    AuditRecord, ConversationStore, DynamoConversationStore, Exchange, MemoryConversationStore,
    Recorded, StoreError,
};
