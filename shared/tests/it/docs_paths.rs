//! The documents name only files that exist: every repository path that README.md, the
//! other top-level documents and `docs/*.md` write in backticks or link to must be in the
//! checkout. A renamed or deleted file then fails here instead of leaving a reader at a
//! dead end. "In the checkout" means tracked by git when git can answer, so a file that
//! exists only on the machine that ran the tests (an untracked draft, a test's output)
//! cannot make this pass locally and fail on a clean clone; a path git ignores is an
//! output the document describes (`tests/artifacts/...`) and is not checked.

use std::path::{Path, PathBuf};

fn repo_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("shared/ has a parent")
        .to_path_buf()
}

/// The documents to check: the top-level and crate-level Markdown files and `docs/`.
fn documents(root: &Path) -> Vec<PathBuf> {
    let mut docs = Vec::new();
    for dir in [
        root.to_path_buf(),
        root.join("docs"),
        root.join("eval"),
        root.join("fuzz"),
        root.join("widget"),
    ] {
        let Ok(entries) = std::fs::read_dir(&dir) else {
            continue;
        };
        for entry in entries.flatten() {
            let path = entry.path();
            if path.extension().is_some_and(|e| e == "md") {
                docs.push(path);
            }
        }
    }
    docs.sort();
    docs
}

/// A path-like string of a document: an inline code span or a link target.
#[derive(Debug, Clone, PartialEq)]
enum Mention {
    /// `` `shared/src/lib.rs` ``: checked when it starts at a top-level entry of the
    /// checkout; `./x` and `../x` in code are the reader's own files (`./rag.toml`) or
    /// folders beside the clone, so they are not.
    Code(String),
    /// `[text](target)`: relative to the document's folder, and must stay in the checkout.
    Link(String),
}

/// The path-like strings of a Markdown text: inline code spans and link targets, in order.
fn mentions(text: &str) -> Vec<Mention> {
    let mut out = Vec::new();
    let mut in_fence = false;
    for line in text.lines() {
        if line.trim_start().starts_with("```") {
            in_fence = !in_fence;
            continue;
        }
        if in_fence {
            continue;
        }
        // Inline code: the text between each pair of backticks.
        let mut parts = line.split('`');
        parts.next();
        while let (Some(code), Some(_)) = (parts.next(), parts.next()) {
            out.push(Mention::Code(code.to_owned()));
        }
        // Link targets, `](target)`, outside code spans (which may show link syntax).
        let prose: String = line.split('`').step_by(2).collect();
        let mut rest = prose.as_str();
        while let Some(at) = rest.find("](") {
            rest = &rest[at + 2..];
            if let Some(end) = rest.find(')') {
                out.push(Mention::Link(rest[..end].to_owned()));
                rest = &rest[end..];
            }
        }
    }
    out
}

/// The repository path a mention names, resolved from the document's folder for a
/// relative link, or `None` when it is not a path into this repository (a URL, a command,
/// a pattern, an anchor, a placeholder).
fn as_repo_path(mention: &Mention, doc_dir: &Path, root: &Path, top: &[String]) -> Option<PathBuf> {
    let (m, link) = match mention {
        Mention::Code(m) => (m.trim(), false),
        Mention::Link(m) => (m.trim(), true),
    };
    if m.is_empty()
        || m.contains("://")
        || m.starts_with('#')
        || m.starts_with("mailto:")
        || m.chars()
            .any(|c| c.is_whitespace() || "<>*{}$|,;=\"'()[]…".contains(c))
    {
        return None;
    }
    // A line number or an anchor after the path.
    let path = m.split('#').next()?.split(':').next()?;
    let path = path.trim_end_matches(['.', '/']);
    if path.is_empty() {
        return None;
    }
    if link {
        return Some(doc_dir.join(path));
    }
    let first = path.split('/').next()?;
    (path.contains('/') && top.iter().any(|t| t == first)).then(|| root.join(path))
}

/// Folds `..` and `.` out of a path without touching the file system.
fn normalize(path: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for part in path.components() {
        match part {
            std::path::Component::ParentDir => {
                out.pop();
            }
            std::path::Component::CurDir => {}
            other => out.push(other),
        }
    }
    out
}

/// What git says about a repository path, or `None` when git cannot answer (no git, or
/// not a clone), in which case the file system decides.
fn git_knows(root: &Path, path: &Path) -> Option<bool> {
    let rel = path.strip_prefix(root).ok()?;
    let run = |args: &[&str]| {
        std::process::Command::new("git")
            .arg("-C")
            .arg(root)
            .args(args)
            .arg(rel)
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::null())
            .output()
            .ok()
    };
    // Tracked: a file, or a folder holding a tracked file.
    let listed = run(&["ls-files", "--"])?;
    if !listed.status.success() {
        return None;
    }
    if !listed.stdout.is_empty() {
        return Some(true);
    }
    // Ignored: an output a run writes (exit 0 means ignored).
    let ignored = run(&["check-ignore", "-q", "--no-index", "--"])?;
    Some(ignored.status.success())
}

fn missing_paths(root: &Path) -> Vec<String> {
    let top: Vec<String> = std::fs::read_dir(root)
        .expect("the checkout is readable")
        .flatten()
        .filter_map(|e| e.file_name().into_string().ok())
        .filter(|n| !n.starts_with('.') && n != "target")
        .collect();
    let mut missing = Vec::new();
    for doc in documents(root) {
        let text = std::fs::read_to_string(&doc).expect("a document is UTF-8 text");
        let dir = doc.parent().expect("a document has a folder");
        for mention in mentions(&text) {
            let Some(path) = as_repo_path(&mention, dir, root, &top) else {
                continue;
            };
            let (Mention::Code(shown) | Mention::Link(shown)) = &mention;
            let path = normalize(&path);
            let present =
                path.starts_with(root) && git_knows(root, &path).unwrap_or_else(|| path.exists());
            if !present {
                missing.push(format!(
                    "{}: `{shown}`",
                    doc.strip_prefix(root).unwrap_or(&doc).display()
                ));
            }
        }
    }
    missing
}

#[test]
fn documents_name_only_paths_that_exist() {
    let missing = missing_paths(&repo_root());
    assert!(
        missing.is_empty(),
        "documents name paths that are not in the checkout:\n{}",
        missing.join("\n")
    );
}

#[test]
fn a_renamed_file_is_reported_at_the_document_that_names_it() {
    let dir = std::env::temp_dir().join(format!("rag-docs-paths-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(dir.join("docs")).unwrap();
    std::fs::create_dir_all(dir.join("shared/src")).unwrap();
    std::fs::write(dir.join("shared/src/lib.rs"), "").unwrap();
    std::fs::write(
        dir.join("README.md"),
        "See `shared/src/lib.rs`, [the guide](docs/guide.md) and `shared/src/gone.rs`.\n\
         Not paths: `cargo test -p shared`, `https://example.com/x/y`, `<id>/x`.\n",
    )
    .unwrap();
    std::fs::write(
        dir.join("docs/guide.md"),
        "Back to [the readme](../README.md); outside: [design](../../shared/DESIGN.md).\n\
         The reader's own file: `./rag.toml`.\n",
    )
    .unwrap();
    let missing = missing_paths(&dir);
    assert_eq!(
        missing,
        vec![
            "README.md: `shared/src/gone.rs`".to_owned(),
            "docs/guide.md: `../../shared/DESIGN.md`".to_owned(),
        ]
    );
    std::fs::rename(
        dir.join("shared/src/lib.rs"),
        dir.join("shared/src/main.rs"),
    )
    .unwrap();
    assert_eq!(missing_paths(&dir).len(), 3);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn in_a_clone_an_untracked_file_is_missing_and_an_ignored_output_is_not_checked() {
    let dir = std::env::temp_dir().join(format!("rag-docs-git-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(dir.join("shared/src")).unwrap();
    std::fs::create_dir_all(dir.join("tests/artifacts")).unwrap();
    let git = |args: &[&str]| {
        std::process::Command::new("git")
            .arg("-C")
            .arg(&dir)
            .args(args)
            .output()
            .is_ok_and(|o| o.status.success())
    };
    if !git(&["init", "-q"]) {
        // No git on this machine: the file-system check above is the one that runs.
        let _ = std::fs::remove_dir_all(&dir);
        return;
    }
    std::fs::write(dir.join(".gitignore"), "/tests/artifacts\n").unwrap();
    std::fs::write(dir.join("shared/src/lib.rs"), "").unwrap();
    std::fs::write(dir.join("shared/src/draft.rs"), "").unwrap();
    std::fs::write(dir.join("tests/artifacts/shot.png"), "").unwrap();
    std::fs::write(
        dir.join("README.md"),
        "`shared/src/lib.rs`, `shared/src/draft.rs`, `tests/artifacts/shot.png`, \
         `tests/artifacts/later.png`.\n",
    )
    .unwrap();
    assert!(git(&[
        "add",
        "README.md",
        ".gitignore",
        "shared/src/lib.rs"
    ]));
    assert_eq!(
        missing_paths(&dir),
        vec!["README.md: `shared/src/draft.rs`".to_owned()],
        "the untracked draft exists on disk but not in a clone; the ignored outputs are \
         described, not shipped"
    );
    let _ = std::fs::remove_dir_all(&dir);
}
