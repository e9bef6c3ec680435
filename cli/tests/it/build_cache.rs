//! `rag build`'s build cache and threads: an unchanged file is reused, a changed one
//! extracted again, a deleted one dropped from the cache; a damaged cache is ignored; and
//! the files written are the same bytes with or without the cache, on one thread or many.
#![allow(clippy::unwrap_used)] // test helpers may panic on broken fixtures

use std::path::Path;

use crate::common::Scratch;
use std::process::Command;

const BASE: &str = "https://cache.example.org/";

/// A scratch directory holding a small site (`site/`) and Markdown sources (`md/`).
fn site(name: &str) -> Scratch {
    let dir = Scratch::new("rag-bcache", name);
    for sub in ["site/guide", "md"] {
        std::fs::create_dir_all(dir.join(sub)).unwrap();
    }
    for (file, title) in [
        ("site/index.html", "Welcome"),
        ("site/guide/install.html", "Installing"),
        ("site/guide/config.html", "Configuring"),
        ("site/guide/upgrade.html", "Upgrading"),
    ] {
        std::fs::write(dir.join(file), page(title, "the first edition")).unwrap();
    }
    std::fs::write(
        dir.join("md/notes.md"),
        "---\ntitle: Release notes\n---\nVersion 2 reads sites faster.\n",
    )
    .unwrap();
    dir
}

fn page(title: &str, words: &str) -> String {
    format!(
        "<html lang=en><head><title>{title}</title></head><body><main><h1>{title}</h1>\
         <p>{title} is described here, in {words}, with enough words to be a page.</p>\
         </main></body></html>"
    )
}

/// `rag build` of `dir`'s site and sources into `dir/out/`: (stdout, stderr).
fn build(dir: &Path, extra: &[&str]) -> (String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_rag"))
        .current_dir(dir)
        .args([
            "build",
            "--site",
            "site",
            "--markdown",
            "md",
            "--base-url",
            BASE,
            "-o",
            "out/kb.json",
        ])
        .args(extra)
        .output()
        .unwrap();
    let (stdout, stderr) = (
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    );
    assert_eq!(out.status.code(), Some(0), "{stdout}\n{stderr}");
    (stdout, stderr)
}

/// Every file the build wrote (the cache aside), by name.
fn written(dir: &Path) -> Vec<(String, Vec<u8>)> {
    let mut files: Vec<(String, Vec<u8>)> = std::fs::read_dir(dir.join("out"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| !p.ends_with(".rag-build-cache"))
        .map(|p| {
            let bytes = std::fs::read(&p).unwrap();
            (p.file_name().unwrap().to_string_lossy().into_owned(), bytes)
        })
        .collect();
    files.sort();
    files
}

fn kb_text(dir: &Path) -> String {
    std::fs::read_to_string(dir.join("out/kb.json")).unwrap()
}

fn cache_text(dir: &Path) -> String {
    std::fs::read_to_string(dir.join("out/.rag-build-cache")).unwrap()
}

#[test]
fn unchanged_files_are_reused_changed_ones_extracted_and_deleted_ones_dropped() {
    let dir = site("cycle");
    let (stdout, _) = build(&dir, &[]);
    assert!(
        stdout.contains("build cache: 0 files reused, 5 extracted"),
        "{stdout}"
    );
    let first = written(&dir);
    assert_eq!(first.len(), 4, "kb, index, llms.txt, llms-full.txt");

    // Rewritten with the same bytes (as a site generator does on every run): reused.
    std::fs::write(
        dir.join("site/guide/config.html"),
        page("Configuring", "the first edition"),
    )
    .unwrap();
    let (stdout, _) = build(&dir, &[]);
    assert!(
        stdout.contains("build cache: 5 files reused, 0 extracted"),
        "{stdout}"
    );
    assert_eq!(
        written(&dir),
        first,
        "a rebuild from the cache writes the same bytes"
    );

    // One page changed, one Markdown source changed.
    std::fs::write(
        dir.join("site/guide/install.html"),
        page("Installing", "the second edition"),
    )
    .unwrap();
    std::fs::write(
        dir.join("md/notes.md"),
        "---\ntitle: Release notes\n---\nVersion 3 reads sites faster still.\n",
    )
    .unwrap();
    let (stdout, _) = build(&dir, &[]);
    assert!(
        stdout.contains("build cache: 3 files reused, 2 extracted"),
        "{stdout}"
    );
    let kb = kb_text(&dir);
    assert!(
        kb.contains("the second edition")
            && !kb.contains("Installing is described here, in the first"),
        "{kb}"
    );
    assert!(kb.contains("Version 3 reads sites faster still."), "{kb}");

    // A deleted page leaves the knowledge base and the cache.
    assert!(cache_text(&dir).contains("site:guide/upgrade.html"));
    std::fs::remove_file(dir.join("site/guide/upgrade.html")).unwrap();
    let (stdout, _) = build(&dir, &[]);
    assert!(
        stdout.contains("build cache: 4 files reused, 0 extracted"),
        "{stdout}"
    );
    assert!(!kb_text(&dir).contains("Upgrading"));
    let cache = cache_text(&dir);
    assert!(!cache.contains("upgrade.html"), "{cache}");
    assert_eq!(
        cache.lines().count(),
        1 + 4 + 1,
        "head, one line a file, index"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn the_output_is_the_same_with_or_without_the_cache_on_one_thread_or_many() {
    let dir = site("same");
    build(&dir, &["--no-cache", "--jobs", "1"]);
    assert!(
        !dir.join("out/.rag-build-cache").exists(),
        "--no-cache writes none"
    );
    let plain = written(&dir);
    for args in [&["--jobs", "4"][..], &["--jobs", "1"], &["--jobs", "3"]] {
        let (stdout, _) = build(&dir, args);
        assert!(stdout.contains("build cache:"), "{stdout}");
        assert_eq!(written(&dir), plain, "{args:?}");
    }
    // The index kept from the cache is the one a fresh build writes.
    let index = dir.join("out/kb.index");
    std::fs::write(&index, b"not an index").unwrap();
    build(&dir, &[]);
    assert_eq!(written(&dir), plain, "a damaged index is rebuilt");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_damaged_or_foreign_cache_is_ignored_with_a_note() {
    let dir = site("damaged");
    build(&dir, &[]);
    let good = written(&dir);
    let cache = dir.join("out/.rag-build-cache");
    let text = cache_text(&dir);
    let head = text.lines().next().unwrap();
    let foreign = text.replacen(head, "rag-build-cache\t1\tsomeone-else", 1);
    let cut = &text[..text.len() / 2];
    for damaged in ["{\"not\": \"a cache\"}", cut, &foreign] {
        std::fs::write(&cache, damaged).unwrap();
        let (stdout, stderr) = build(&dir, &[]);
        assert!(
            stderr.contains("note: ") && stderr.contains("ignored"),
            "{stderr}"
        );
        assert!(stdout.contains("0 files reused, 5 extracted"), "{stdout}");
        assert_eq!(written(&dir), good);
        // And the cache written in its place is whole again.
        let (stdout, stderr) = build(&dir, &[]);
        assert!(stdout.contains("5 files reused, 0 extracted"), "{stdout}");
        assert!(!stderr.contains("note: "), "{stderr}");
    }
    let _ = std::fs::remove_dir_all(&dir);
}
