//! Test doubles for this crate's and other crates' tests (feature `test-util`).
//!
//! - [`fake_llm`]: a real HTTP server on localhost that plays an OpenAI-compatible provider
//!   from a script, so the real client is tested over real sockets.

pub mod fake_llm;

pub use fake_llm::{Behavior, FakeLlm, RecordedRequest};
