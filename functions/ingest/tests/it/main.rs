//! The ingest function's integration tests, one binary (one link, one moto server).
//!
//! `memory_bound.rs` stays a binary of its own: its allocator counts the whole process.
#![allow(clippy::unwrap_used)] // test helpers may panic on broken fixtures

#[path = "../common/mod.rs"]
mod common;

mod bad_input;
mod handler;
mod s3;
mod staged;
