//! Fuzz target: see `shared::testing::fuzz::sse`.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| shared::testing::fuzz::sse(data));
