//! Fuzz target: see `shared::testing::fuzz::prebuilt_index`.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| shared::testing::fuzz::prebuilt_index(data));
