//! Fuzz target: see `shared::testing::fuzz::kb_validate`.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| shared::testing::fuzz::kb_validate(data));
