//! The search function's integration tests, one binary (one link, one moto server).
#![allow(clippy::unwrap_used)] // test helpers may panic on broken fixtures

#[path = "../common/mod.rs"]
mod common;

mod bad_input;
mod filters;
mod handler;
mod kb_s3;
mod limits;
mod mcp;
mod runtime_api;
