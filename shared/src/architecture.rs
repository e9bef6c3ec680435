//! The crate's top-level module graph has no cycle, nor has the `rag` command's (`cli/`).
//!
//! Each top-level module (a file or folder of `src/`) is a concept; a concept may use the
//! ones below it, never one that uses it back, so any module can be read, tested and
//! changed knowing only what it uses. This test reads the sources, collects every
//! `crate::<module>` path (and root re-exports like `crate::Error`, resolved through
//! `lib.rs`) outside comments and test code, and fails listing each cycle with the files
//! that make it. Run it with `cargo test -p shared --lib architecture`.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// Edges of the graph: user module → used module → files of the user that use it.
type Graph = BTreeMap<String, BTreeMap<String, BTreeSet<String>>>;

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).expect("src/ is readable") {
        let path = entry.expect("directory entry").path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// The code of a file that is compiled outside tests, without comments: a trailing
/// `#[cfg(test)] mod …` is cut off, and `//` comments are dropped (doc links are not uses).
fn production_code(text: &str) -> String {
    let mut code = String::new();
    let mut lines = text.lines().peekable();
    while let Some(line) = lines.next() {
        if line.trim() == "#[cfg(test)]"
            && lines
                .peek()
                .is_some_and(|next| next.trim_start().starts_with("mod "))
        {
            break;
        }
        code.push_str(line.split("//").next().unwrap_or(""));
        code.push('\n');
    }
    code
}

fn ident_at(s: &str) -> &str {
    let end = s
        .find(|c: char| !(c.is_alphanumeric() || c == '_'))
        .unwrap_or(s.len());
    &s[..end]
}

/// The first path segment of each item of a `{…}` group starting at `s[0] == '{'`.
fn group_heads(s: &str) -> Vec<&str> {
    let mut heads = Vec::new();
    let mut depth = 0;
    let mut item_start = true;
    for (i, c) in s.char_indices() {
        match c {
            '{' => {
                depth += 1;
                item_start = depth == 1;
            }
            '}' => {
                depth -= 1;
                if depth == 0 {
                    break;
                }
            }
            ',' if depth == 1 => item_start = true,
            c if item_start && depth == 1 && !c.is_whitespace() => {
                heads.push(ident_at(&s[i..]));
                item_start = false;
            }
            _ => {}
        }
    }
    heads
}

/// Names the root re-exports (`pub use module::{A, B}` in `lib.rs`), mapped to their module.
fn root_reexports(lib: &str) -> BTreeMap<String, String> {
    let mut names = BTreeMap::new();
    let code = production_code(lib);
    for (at, _) in code.match_indices("pub use ") {
        let rest = &code[at + "pub use ".len()..];
        let statement = &rest[..rest.find(';').unwrap_or(rest.len())];
        let module = ident_at(statement).to_string();
        let items = statement
            .find('{')
            .map_or(statement, |open| &statement[open + 1..]);
        for item in items.split([',', '{', '}']) {
            let name = item.rsplit([':', ' ']).next().unwrap_or("").trim();
            if !name.is_empty() && name != module {
                names.insert(name.to_string(), module.clone());
            }
        }
    }
    // An inline module of the root that re-exports another (`pub mod index { pub use
    // crate::search::prebuilt::*; }`) stands for the module it re-exports.
    for (at, _) in code.match_indices("pub mod ") {
        let rest = &code[at + "pub mod ".len()..];
        let name = ident_at(rest);
        let body = &rest[name.len()..];
        if let Some(inner) = body.trim_start().strip_prefix('{') {
            let inner = &inner[..inner.find('}').unwrap_or(inner.len())];
            if let Some(at) = inner.find("pub use crate::") {
                let module = ident_at(&inner[at + "pub use crate::".len()..]);
                names.insert(name.to_string(), module.to_string());
            }
        }
    }
    names
}

fn module_graph(src: &Path) -> Graph {
    let mut files = Vec::new();
    rust_files(src, &mut files);
    let top_of = |path: &Path| -> String {
        let first = path
            .strip_prefix(src)
            .expect("under src")
            .components()
            .next();
        let name = first.expect("non-empty path").as_os_str().to_string_lossy();
        name.trim_end_matches(".rs").to_string()
    };
    let modules: BTreeSet<String> = files.iter().map(|f| top_of(f)).collect();
    // A library's root is lib.rs, a binary's main.rs; the root uses everything and holds
    // no concept of its own, so it is no node of the graph.
    let root = if src.join("lib.rs").exists() {
        "lib"
    } else {
        "main"
    };
    let lib = std::fs::read_to_string(src.join(format!("{root}.rs"))).expect("root is readable");
    let reexports = root_reexports(&lib);

    let mut graph = Graph::new();
    for file in &files {
        let user = top_of(file);
        let is_test_file = file.file_name().is_some_and(|n| n == "tests.rs");
        if user == root || is_test_file {
            continue;
        }
        let text = std::fs::read_to_string(file).expect("source is readable");
        let code = production_code(&text);
        for (at, _) in code.match_indices("crate::") {
            let rest = &code[at + "crate::".len()..];
            let heads = if rest.starts_with('{') {
                group_heads(rest)
            } else {
                vec![ident_at(rest)]
            };
            for head in heads {
                let used = if modules.contains(head) {
                    head.to_string()
                } else if let Some(module) = reexports.get(head) {
                    module.clone()
                } else {
                    continue;
                };
                if used != user {
                    let shown = file.strip_prefix(src).expect("under src").display();
                    graph
                        .entry(user.clone())
                        .or_default()
                        .entry(used)
                        .or_default()
                        .insert(shown.to_string());
                }
            }
        }
    }
    graph
}

/// Strongly connected components of more than one module (Tarjan's algorithm).
fn cycles(graph: &Graph) -> Vec<BTreeSet<String>> {
    struct State<'g> {
        graph: &'g Graph,
        index: BTreeMap<&'g str, usize>,
        low: BTreeMap<&'g str, usize>,
        stack: Vec<&'g str>,
        on_stack: BTreeSet<&'g str>,
        found: Vec<BTreeSet<String>>,
    }
    fn visit<'g>(s: &mut State<'g>, v: &'g str) {
        let n = s.index.len();
        s.index.insert(v, n);
        s.low.insert(v, n);
        s.stack.push(v);
        s.on_stack.insert(v);
        for w in s.graph.get(v).into_iter().flat_map(|e| e.keys()) {
            let w = w.as_str();
            if !s.index.contains_key(w) {
                visit(s, w);
                let low = s.low[v].min(s.low[w]);
                s.low.insert(v, low);
            } else if s.on_stack.contains(w) {
                let low = s.low[v].min(s.index[w]);
                s.low.insert(v, low);
            }
        }
        if s.low[v] == s.index[v] {
            let mut component = BTreeSet::new();
            while let Some(w) = s.stack.pop() {
                s.on_stack.remove(w);
                component.insert(w.to_string());
                if w == v {
                    break;
                }
            }
            if component.len() > 1 {
                s.found.push(component);
            }
        }
    }
    let mut state = State {
        graph,
        index: BTreeMap::new(),
        low: BTreeMap::new(),
        stack: Vec::new(),
        on_stack: BTreeSet::new(),
        found: Vec::new(),
    };
    for v in graph.keys() {
        if !state.index.contains_key(v.as_str()) {
            visit(&mut state, v);
        }
    }
    state.found
}

fn describe(graph: &Graph, component: &BTreeSet<String>) -> String {
    let mut text = format!(
        "cycle among {{{}}}:\n",
        Vec::from_iter(component.clone()).join(", ")
    );
    for user in component {
        for (used, files) in graph.get(user).into_iter().flatten() {
            if component.contains(used) {
                let files = Vec::from_iter(files.clone()).join(", ");
                text.push_str(&format!("  {user} -> {used} ({files})\n"));
            }
        }
    }
    text
}

#[test]
fn top_level_modules_form_no_cycle() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let graph = module_graph(&src);
    let found = cycles(&graph);
    let report: String = found.iter().map(|c| describe(&graph, c)).collect();
    assert!(found.is_empty(), "the module graph has cycles:\n{report}");
}

/// The `rag` command's modules too: its subcommands share plumbing (`local_kb`, `remote`)
/// without using each other back.
#[test]
fn cli_modules_form_no_cycle() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("../cli/src");
    let graph = module_graph(&src);
    assert!(graph.contains_key("sync"), "the CLI's modules are read");
    let found = cycles(&graph);
    let report: String = found.iter().map(|c| describe(&graph, c)).collect();
    assert!(
        found.is_empty(),
        "the CLI's module graph has cycles:\n{report}"
    );
}

#[test]
fn the_check_sees_a_cycle_and_grouped_uses() {
    let mut graph = Graph::new();
    let mut edge = |a: &str, b: &str| {
        graph
            .entry(a.into())
            .or_default()
            .entry(b.into())
            .or_default()
            .insert(format!("{a}.rs"));
    };
    edge("a", "b");
    edge("b", "c");
    edge("c", "a");
    edge("c", "d");
    let found = cycles(&graph);
    assert_eq!(found.len(), 1);
    assert_eq!(Vec::from_iter(found[0].clone()), ["a", "b", "c"]);
    assert!(describe(&graph, &found[0]).contains("c -> a (c.rs)"));

    assert_eq!(
        group_heads("{kb::Document, search::{A, B}, Error} rest"),
        ["kb", "search", "Error"]
    );
    let code =
        production_code("use crate::x; // crate::y\n#[cfg(test)]\nmod tests {\n crate::z\n}");
    assert!(code.contains("crate::x") && !code.contains("crate::y") && !code.contains("crate::z"));
    let names = root_reexports(
        "pub use error::{Error, Result};\npub use secret::Secret;\n\
         pub mod index {\n    pub use crate::search::prebuilt::*;\n}\n",
    );
    assert_eq!(names.get("index").map(String::as_str), Some("search"));
    assert_eq!(names.get("Error").map(String::as_str), Some("error"));
    assert_eq!(names.get("Secret").map(String::as_str), Some("secret"));
}
