//! Fuzz target: see `shared::testing::fuzz::tokenize`.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| shared::testing::fuzz::tokenize(data));
