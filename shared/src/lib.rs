//! Core library of the serverless RAG chat backend: everything but the HTTP edge.
//!
//! # Layout
//! - [`error`]: the crate's error type and validation problems.
//! - [`message`]: roles, chat messages and token usage.
//! - [`secret`]: [`Secret`], a string that prints as `[redacted]`.
//!
//! The Lambda handlers in `functions/*` stay thin: they decode a request, call one function
//! of this crate and encode the result.

pub mod error;
pub mod message;
pub mod secret;

pub use error::{Error, Problem, Problems, Result};
pub use message::{ChatMessage, Role, Usage};
pub use secret::Secret;
