//! The chat function's integration tests, one binary (one link, one moto server).
#![allow(clippy::unwrap_used)] // test helpers may panic on broken fixtures

#[path = "../common/mod.rs"]
mod common;

mod bad_input;
mod bedrock;
mod bot_check;
mod dynamo;
mod feedback;
mod handler;
mod injection;
mod kb_s3;
mod limits;
mod runtime_api;
mod store_faults;
