//! `rag validate` and the served knowledge base agree on `authors`: a string or an array of
//! names is accepted, anything else is reported with what is accepted.
#![allow(clippy::unwrap_used)] // test helpers may panic on broken fixtures

use std::path::Path;
use std::process::{Command, Output};

use crate::common::Scratch;

fn validate(dir: &Path, json: &str, name: &str) -> Output {
    let path = dir.join(name);
    std::fs::write(&path, json).unwrap();
    Command::new(env!("CARGO_BIN_EXE_rag"))
        .arg("validate")
        .arg(&path)
        .output()
        .unwrap()
}

#[test]
fn an_array_of_author_names_validates_and_is_searchable() {
    let kb = r#"{"documents": [{"id": "pfc", "type": "publication", "title": "Partial FC",
        "authors": ["Xiang An", "Jiankang Deng"]}]}"#;
    let dir = Scratch::new("rag-authors", "array");
    let out = validate(&dir, kb, "array.json");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    assert!(String::from_utf8_lossy(&out.stdout).starts_with("ok: 1 documents"));

    // The same file serves: a search for an author finds the paper.
    let search = Command::new(env!("CARGO_BIN_EXE_rag"))
        .args(["search", "--json", "--kb"])
        .arg(dir.join("array.json"))
        .arg("Jiankang Deng")
        .env_remove("TOP_K")
        .env_remove("MIN_SCORE")
        .output()
        .unwrap();
    let body: serde_json::Value = serde_json::from_slice(&search.stdout).unwrap();
    assert_eq!(body["hits"][0]["id"], "pfc", "{body}");
}

#[test]
fn authors_of_another_shape_are_reported_with_what_is_accepted() {
    let kb = r#"[{"id": "pfc", "type": "publication", "title": "Partial FC",
        "authors": [{"name": "Xiang An"}]},
        {"id": "u", "type": "publication", "title": "Unicom", "authors": 2023}]"#;
    let dir = Scratch::new("rag-authors", "bad");
    let out = validate(&dir, kb, "bad.json");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains("documents[0].authors[0]: must be a string"),
        "{stderr}"
    );
    assert!(
        stderr.contains("documents[1].authors: must be a string or an array of strings"),
        "{stderr}"
    );
}
