//! `rag build` over the outputs of real site generators (Hugo 0.111 and MkDocs 1.6,
//! committed under `tests/data/sites/` with the script that regenerates them) and over
//! the sample site of `examples/sample-site`: the entries a site owner would get.
#![allow(clippy::unwrap_used)] // test helpers may panic on broken fixtures

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use serde_json::Value;

fn rag(dir: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_rag"))
        .current_dir(dir)
        .args(args)
        .output()
        .unwrap()
}

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

fn sites() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/sites")
}

/// A scratch directory for one test's files (no rag.toml in it unless the test writes one).
fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("rag-build-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

fn built(dir: &Path, args: &[&str]) -> Value {
    let out = rag(dir, args);
    assert_eq!(
        out.status.code(),
        Some(0),
        "stdout: {}\nstderr: {}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&std::fs::read(dir.join("kb.json")).unwrap()).unwrap()
}

/// `rag build ARGS -o kb.json` in a fresh scratch directory `name`: the knowledge base it
/// wrote.
fn build(name: &str, args: &[&str]) -> Value {
    let args = [&["build"], args, &["-o", "kb.json"]].concat();
    built(&scratch(name), &args)
}

fn doc<'a>(kb: &'a Value, id: &str) -> &'a Value {
    kb["documents"]
        .as_array()
        .unwrap()
        .iter()
        .find(|d| d["id"] == id)
        .unwrap_or_else(|| panic!("no {id} in {kb:#}"))
}

/// The ids of `kb`'s entries, sorted.
fn ids(kb: &Value) -> Vec<String> {
    let mut ids: Vec<String> = kb["documents"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| d["id"].as_str().unwrap().to_owned())
        .collect();
    ids.sort();
    ids
}

/// The pages of the Hugo site: home, about and the post (the draft is never built or
/// read; the posts list is a listing, left out as generator noise).
const HUGO_PAGES: [&str; 3] = ["page_about", "page_home", "page_posts_first_post"];

/// The same site's Markdown sources: the posts section's `_index.md` is a page of its own
/// (only built HTML is measured for generator noise).
const MARKDOWN_PAGES: [&str; 4] = [
    "page_about",
    "page_home",
    "page_posts",
    "page_posts_first_post",
];

#[test]
fn a_hugo_site_gives_its_pages_main_text_headings_and_metadata() {
    let site = sites().join("hugo");
    let kb = build(
        "hugo",
        &[
            "--site",
            site.to_str().unwrap(),
            "--base-url",
            "https://hugo.example.org/",
            "--exclude",
            "/tags/**",
            "--exclude",
            "/categories/**",
        ],
    );
    // Hugo's sitemap lists the pages; the taxonomy pages are excluded.
    assert_eq!(ids(&kb), HUGO_PAGES);

    let post = doc(&kb, "page_posts_first_post");
    assert_eq!(post["type"], "page");
    assert_eq!(post["title"], "First post: BM25 by hand");
    assert_eq!(post["url"], "https://hugo.example.org/posts/first-post/");
    assert_eq!(post["lang"], "en-gb");
    let content = post["content"].as_str().unwrap();
    assert!(
        content.starts_with("# First post: BM25 by hand\n\nBM25 scores a document"),
        "{content}"
    );
    assert!(
        content.contains("\n\n## Saturation\n\nThe k1 parameter"),
        "{content}"
    );
    assert!(
        content.contains("\n\n### Length normalisation\n\n"),
        "{content}"
    );
    for chrome in [
        "Hugo Test Site",
        "Posts",
        "Share this post",
        "Related posts",
        "Site footer",
    ] {
        assert!(
            !content.contains(chrome),
            "{chrome:?} leaked into {content}"
        );
    }
    let about = doc(&kb, "page_about");
    assert_eq!(about["description"], "Who writes this site.");
    assert!(about["content"].as_str().unwrap().contains("## Contact"));
    assert!(post["content_hash"]
        .as_str()
        .unwrap()
        .starts_with("sha256:"));
}

#[test]
fn a_mkdocs_site_under_a_base_path_gives_its_pages() {
    let site = sites().join("mkdocs");
    let kb = build(
        "mkdocs",
        &[
            "--site",
            site.to_str().unwrap(),
            "--base-url",
            "https://docs.example.org/manual/",
        ],
    );
    // Ids come from the URL path, base path included; 404.html is not in the sitemap.
    assert_eq!(ids(&kb), ["page_manual", "page_manual_guide_setup"]);
    let setup = doc(&kb, "page_manual_guide_setup");
    assert_eq!(setup["title"], "Setup");
    assert_eq!(setup["url"], "https://docs.example.org/manual/guide/setup/");
    assert_eq!(setup["lang"], "en");
    assert_eq!(
        setup["content"],
        "# Setup\n\nInstall the tool before the first run.\n\n## Requirements\n\n\
         A recent Rust toolchain and Python 3.\n\n## Configuration\n\nPut every option in rag.toml."
    );
    assert_eq!(doc(&kb, "page_manual")["title"], "Welcome to the manual");
}

#[test]
fn without_the_sitemap_every_html_file_but_404_is_read() {
    let site = sites().join("mkdocs");
    let kb = build(
        "nositemap",
        &[
            "--site",
            site.to_str().unwrap(),
            "--no-sitemap",
            "--base-url",
            "https://docs.example.org/manual/",
        ],
    );
    assert_eq!(ids(&kb), ["page_manual", "page_manual_guide_setup"]);
}

#[test]
fn markdown_sources_skip_drafts_and_take_urls_from_the_pattern() {
    let content = sites().join("src/hugo/content");
    let kb = build(
        "markdown",
        &[
            "--markdown",
            content.to_str().unwrap(),
            "--base-url",
            "https://hugo.example.org/",
            "--permalink",
            "/{path}/",
        ],
    );
    assert_eq!(ids(&kb), MARKDOWN_PAGES);
    let post = doc(&kb, "page_posts_first_post");
    assert_eq!(post["url"], "https://hugo.example.org/posts/first-post/");
    assert_eq!(post["date"], "2024-05-01");
    assert_eq!(post["keywords"], serde_json::json!(["retrieval", "bm25"]));
    assert!(post["content"].as_str().unwrap().contains("## Saturation"));
}

#[test]
fn the_sample_site_rebuilds_the_committed_sample_knowledge_base() {
    let config = repo().join("examples/sample-site/rag.toml");
    let kb = build("sample", &["--config", config.to_str().unwrap()]);
    let committed: Value =
        serde_json::from_slice(&std::fs::read(repo().join("knowledge_base.json")).unwrap())
            .unwrap();
    let summary = |kb: &Value| -> Vec<Vec<Value>> {
        kb["documents"]
            .as_array()
            .unwrap()
            .iter()
            .map(|d| {
                [
                    "id",
                    "type",
                    "title",
                    "name",
                    "url",
                    "paper_url",
                    "code_url",
                ]
                .iter()
                .map(|k| d[k].clone())
                .collect()
            })
            .collect()
    };
    assert_eq!(summary(&kb), summary(&committed));
    assert_eq!(kb["glossary"], committed["glossary"]);
    // Every field, not only the ones above: the committed file is this build's output.
    assert_eq!(
        kb, committed,
        "regenerate with: cargo run -p rag -- build --config examples/sample-site/rag.toml"
    );
}

#[test]
fn a_second_run_writes_the_same_bytes_and_the_result_validates() {
    let dir = scratch("determinism");
    let config = repo().join("examples/sample-site/rag.toml");
    let args = [
        "build",
        "--config",
        config.to_str().unwrap(),
        "-o",
        "kb.json",
    ];
    built(&dir, &args);
    let first = std::fs::read(dir.join("kb.json")).unwrap();
    built(&dir, &args);
    assert_eq!(first, std::fs::read(dir.join("kb.json")).unwrap());
    let out = rag(&dir, &["validate", "kb.json"]);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

#[test]
fn rag_toml_in_the_working_directory_is_used_without_flags() {
    let dir = scratch("bare");
    std::fs::write(
        dir.join("pubs.bib"),
        "@article{key1, title = {A {GPU} paper}, author = {Doe, Jane}, year = 2020, doi = {10.1/x}}\n",
    )
    .unwrap();
    std::fs::write(
        dir.join("rag.toml"),
        "output = 'kb.json'\nbib = ['pubs.bib']\n",
    )
    .unwrap();
    let kb = built(&dir, &["build"]);
    let p = doc(&kb, "pub_key1");
    assert_eq!(p["title"], "A GPU paper");
    assert_eq!(p["authors"], "Jane Doe");
    assert_eq!(p["paper_url"], "https://doi.org/10.1/x");
}

#[test]
fn an_invalid_result_writes_nothing_and_names_the_entry() {
    let dir = scratch("invalid");
    std::fs::write(dir.join("kb.json"), "previous").unwrap();
    std::fs::write(
        dir.join("hand.json"),
        r#"[{"id": "project_x", "type": "github_project", "name": "X", "url": "javascript:alert(1)"}]"#,
    )
    .unwrap();
    let out = rag(&dir, &["build", "--json", "hand.json", "-o", "kb.json"]);
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("project_x") && err.contains("url"), "{err}");
    assert_eq!(
        std::fs::read_to_string(dir.join("kb.json")).unwrap(),
        "previous"
    );

    let out = rag(&dir, &["build", "-o", "kb.json"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("nothing to build from"));
}
