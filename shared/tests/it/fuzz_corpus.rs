//! Replays every committed fuzz input (`fuzz/seeds/<target>/` and the minimized corpora in
//! `fuzz/corpus/<target>/`) through its harness, so each CI run re-checks what the fuzzers
//! found without needing nightly or libFuzzer.
#![allow(clippy::unwrap_used)] // a missing corpus is a broken checkout

use std::path::{Path, PathBuf};

use shared::testing::fuzz;

fn inputs(target: &str) -> Vec<PathBuf> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../fuzz");
    let mut files = Vec::new();
    for dir in ["seeds", "corpus"] {
        let Ok(entries) = std::fs::read_dir(root.join(dir).join(target)) else {
            continue;
        };
        files.extend(entries.map(|e| e.unwrap().path()).filter(|p| p.is_file()));
    }
    files.sort();
    files
}

/// Runs `harness` over every input of `target`, naming the file that fails.
fn replay(target: &str, harness: fn(&[u8])) {
    let files = inputs(target);
    assert!(
        files.len() >= 5,
        "fuzz/seeds/{target} and fuzz/corpus/{target} hold only {} inputs",
        files.len()
    );
    for file in files {
        let data = std::fs::read(&file).unwrap();
        if std::panic::catch_unwind(|| harness(&data)).is_err() {
            panic!(
                "{target} fails on {} (reproduce: cargo +nightly fuzz run {target} {})",
                file.display(),
                file.display()
            );
        }
    }
}

#[test]
fn request_body_corpus() {
    replay("request_body", fuzz::request_body);
}

#[test]
fn tokenize_corpus() {
    replay("tokenize", fuzz::tokenize);
}

#[test]
fn sse_corpus() {
    replay("sse", fuzz::sse);
}

#[test]
fn kb_validate_corpus() {
    replay("kb_validate", fuzz::kb_validate);
}

#[test]
fn prebuilt_index_corpus() {
    replay("prebuilt_index", fuzz::prebuilt_index);
}
