//! The `shared` crate's integration tests, one binary (one link, one moto server).
//!
//! Each module was a test binary of its own; `memory.rs` stays one, as its allocator
//! counts the whole process. The modules that need `shared::testing` (moto, fault proxy,
//! fuzz harnesses) run with `--features test-util` (`--all-features`).
#![allow(clippy::unwrap_used)] // test helpers may panic on broken fixtures

mod docs_paths;
mod followup;
#[cfg(feature = "test-util")]
mod fuzz_corpus;
mod grounding;
#[cfg(feature = "test-util")]
mod kb_s3;
#[cfg(feature = "test-util")]
mod limits_dynamodb;
mod listing;
mod listing_scale;
mod no_answer;
mod properties;
#[cfg(feature = "test-util")]
mod rewrite;
mod sample_kb;
#[cfg(feature = "test-util")]
mod store_dynamodb;
mod token_estimate;
