//! `rag search … | head`: a reader that closes the pipe early ends the command quietly.
#![allow(clippy::unwrap_used)] // test helpers may panic on broken fixtures

use std::io::Read;
use std::path::Path;
use std::process::{Command, Stdio};

/// Runs `rag` with `args`, closing the read end of its stdout before it can write anything
/// (it still has to load and index the knowledge base); returns its status and stderr.
fn run_with_closed_stdout(args: &[&str]) -> (Option<i32>, String) {
    let mut child = Command::new(env!("CARGO_BIN_EXE_rag"))
        .args(args)
        .env_remove("KB_SOURCE")
        .env_remove("TOP_K")
        .env_remove("MIN_SCORE")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    drop(child.stdout.take());
    let mut stderr = String::new();
    child
        .stderr
        .take()
        .unwrap()
        .read_to_string(&mut stderr)
        .unwrap();
    (child.wait().unwrap().code(), stderr)
}

#[test]
fn search_into_a_closed_pipe_exits_0_without_a_panic() {
    let kb = Path::new(env!("CARGO_MANIFEST_DIR")).join("../knowledge_base.json");
    let kb = kb.to_str().unwrap();
    for args in [
        vec!["search", "--kb", kb, "-k", "10", "face recognition"],
        vec!["search", "--kb", kb, "--json", "请介绍一下 Partial FC"],
        vec!["validate", kb],
    ] {
        let (code, stderr) = run_with_closed_stdout(&args);
        assert_eq!(code, Some(0), "{args:?}: {stderr}");
        assert_eq!(stderr, "", "{args:?}");
    }
}
