//! Core library of the serverless RAG chat backend: everything but the HTTP edge.
//!
//! # Layout
//! - [`config`]: typed configuration read once from the environment.
//! - [`error`]: the crate's error type and validation problems.
//! - [`message`]: roles, chat messages and token usage.
//! - [`kb`]: the knowledge base: document model, parsing, validation, passages.
//! - [`retrieval`]: tokenizer, Chinese→English lexicon, BM25 index, ranking.
//! - [`search`]: an indexed knowledge base and the search operation (request, response).
//!
//! The Lambda handlers in `functions/*` stay thin: they decode a request, call one function
//! of this crate and encode the result.

pub mod config;
pub mod error;
pub mod kb;
pub mod message;
pub mod retrieval;
pub mod search;

pub use config::{Config, KbLocation};
pub use error::{Error, Problem, Problems, Result};
pub use kb::{DocKind, Document, KnowledgeBase};
pub use message::{ChatMessage, Role, Usage};
pub use retrieval::{QueryTerm, Ranked, Retriever};
pub use search::{SearchHit, SearchIndex, SearchRequest, SearchResponse};
