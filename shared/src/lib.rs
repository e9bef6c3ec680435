//! Core library of the serverless RAG chat backend: everything but the HTTP edge.
//!
//! # Layout
//! - [`error`]: the crate's error type and validation problems.
//! - [`message`]: roles, chat messages and token usage.
//! - [`store`]: the conversation store (turns by session + audit records): trait, DynamoDB
//!   adapter, in-memory stand-in.
//! - [`aws`]: the AWS SDK configuration every function's `main` loads once.
//! - `testing` (feature `test-util`): helpers for tests, such as a moto server per test.
//!
//! The Lambda handlers in `functions/*` stay thin: they decode a request, call one function
//! of this crate and encode the result.

pub mod aws;
pub mod error;
pub mod message;
pub mod store;
#[cfg(any(test, feature = "test-util"))]
pub mod testing;

pub use error::{Error, Problem, Problems, Result};
pub use message::{ChatMessage, Role, Usage};
pub use store::{
    AuditRecord, ConversationStore, DynamoConversationStore, Exchange, MemoryConversationStore,
    Recorded, StoreError,
};
