//! Helpers for tests of this crate and of the functions (feature `test-util`).
//!
//! - [`moto`]: starts a private moto server (local DynamoDB/S3 API) for a test.
//! - [`store_scenarios`]: behaviour checks every [`ConversationStore`] must pass, shared by the
//!   in-memory store's unit tests and the DynamoDB store's tests against moto.
//!
//! [`ConversationStore`]: crate::store::ConversationStore

pub mod moto;
pub mod store_scenarios;

pub use moto::MotoServer;
