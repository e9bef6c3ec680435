//! Core library of the serverless RAG chat backend: everything but the HTTP edge.
//!
//! # Layout
//! - [`error`]: the crate's error type and validation problems.
//! - [`message`]: roles, chat messages and token usage.
//! - [`llm`]: the chat model client: [`LlmClient`] trait, OpenAI-compatible adapter
//!   (DashScope, OpenAI, any compatible server), its configuration and SSE decoding.
//! - [`secret`]: [`Secret`], a string that prints as `[redacted]`.
//! - `testing` (feature `test-util`): fakes for tests, e.g. a scripted OpenAI-compatible
//!   HTTP server.
//!
//! The Lambda handlers in `functions/*` stay thin: they decode a request, call one function
//! of this crate and encode the result.

pub mod error;
pub mod llm;
pub mod message;
pub mod secret;
#[cfg(any(test, feature = "test-util"))]
pub mod testing;

pub use error::{Error, Problem, Problems, Result};
pub use llm::{
    Completion, CompletionRequest, CompletionStream, LlmClient, LlmConfig, LlmError,
    OpenAiCompatClient, StreamEvent,
};
pub use message::{ChatMessage, Role, Usage};
pub use secret::Secret;
