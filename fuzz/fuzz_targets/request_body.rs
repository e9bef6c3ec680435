//! Fuzz target: see `shared::testing::fuzz::request_body`.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| shared::testing::fuzz::request_body(data));
