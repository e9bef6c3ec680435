//! Test doubles and harnesses for this crate's and other crates' tests (feature `test-util`).
//!
//! - [`base64`]: base64 for function-URL events with binary bodies.
//! - [`fake_llm`]: a real HTTP server on localhost that plays an OpenAI-compatible provider
//!   from a script, so the real client is tested over real sockets.
//! - [`fuzz`]: the fuzz targets' harnesses (`fuzz/`), replayed over their corpora in CI.
//! - [`moto`]: starts a private moto server (local DynamoDB/S3 API) for a test.
//! - [`store_scenarios`]: behaviour checks every [`ConversationStore`] must pass, shared by the
//!   in-memory store's unit tests and the DynamoDB store's tests against moto.
//!
//! [`ConversationStore`]: crate::store::ConversationStore

pub mod base64;
pub mod fake_llm;
pub mod fuzz;
pub mod moto;
pub mod store_scenarios;

pub use fake_llm::{Behavior, FakeLlm, RecordedRequest};
pub use moto::MotoServer;
