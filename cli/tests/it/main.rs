//! The `rag` CLI's integration tests, one binary (one link, one moto server).
#![allow(clippy::unwrap_used)] // test helpers may panic on broken fixtures

#[path = "../common/mod.rs"]
mod common;

mod build_cache;
mod build_crawl;
mod build_sites;
mod commands;
mod ingest;
mod pipe;
mod report;
mod sync;
mod validate_authors;
