//! Test doubles and harnesses for this crate's and other crates' tests (feature `test-util`).
//!
//! - [`fake_llm`]: a real HTTP server on localhost that plays an OpenAI-compatible provider
//!   from a script, so the real client is tested over real sockets.
//! - [`fake_bedrock`]: a real HTTP server on localhost that plays Amazon Bedrock's
//!   ConverseStream, checking each request's SigV4 signature and answering in event-stream
//!   frames from a script.
//! - [`http1`]: HTTP/1.1 requests read off a socket (one, or a keep-alive connection's in
//!   turn), for the hand-written test servers.
//! - [`fuzz`]: the fuzz targets' harnesses (`fuzz/`), replayed over their corpora in CI.
//! - [`moto`]: moto servers (local DynamoDB/S3 API): one shared by a test binary's tests,
//!   or a private one for a test that stops or resets it.
//! - [`fault_proxy`]: a proxy in front of moto that answers chosen AWS operations with
//!   throttling, 5xx, dropped connections or silence, so store faults run through the real SDK.
//! - [`cold_start`]: runs a function's binary with a given environment until it exits.
//! - [`kb_s3`]: two versions of a small knowledge base in a moto bucket, served through a
//!   fault proxy.
//! - [`runtime_api`]: a minimal Lambda Runtime API that runs a function's binary through
//!   one invocation and times its init, first response byte and response, with its peak
//!   memory (`examples/cold_start.rs`, `infra/coldstart.sh`).
//! - [`synthetic`]: a deterministic generated site of any size, with proper nouns and
//!   Chinese sentences if asked.
//! - [`store_scenarios`]: behaviour checks every [`ConversationStore`] must pass, shared by the
//!   in-memory store's unit tests and the DynamoDB store's tests against moto.
//!
//! [`ConversationStore`]: crate::store::ConversationStore

pub mod cold_start;
pub mod fake_bedrock;
pub mod fake_llm;
pub mod fault_proxy;
pub mod fuzz;
pub mod http1;
pub mod kb_s3;
pub mod moto;
pub mod runtime_api;
mod serve;
pub mod store_scenarios;
pub mod synthetic;

pub use fake_llm::{Behavior, FakeLlm, RecordedRequest};
pub use fault_proxy::FaultProxy;
pub use moto::MotoServer;
