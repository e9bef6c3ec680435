//! `rag build` over the outputs of real site generators (Hugo 0.111, MkDocs 1.6, Doxygen
//! 1.9 and Docusaurus 3.10,
//! committed under `tests/data/sites/` with the script that regenerates them) and over
//! the sample site of `examples/sample-site`: the entries a site owner would get.
#![allow(clippy::unwrap_used)] // test helpers may panic on broken fixtures

use std::path::{Path, PathBuf};

use crate::common::Scratch;
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
fn scratch(name: &str) -> Scratch {
    Scratch::new("rag-build", name)
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

/// `rag build --site SITE --base-url BASE -o kb.json` in `dir`, whatever it exits with.
fn build_site(dir: &Path, site: &Path, base: &str) -> Output {
    let site = site.to_str().unwrap();
    rag(
        dir,
        &["build", "--site", site, "--base-url", base, "-o", "kb.json"],
    )
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

/// One string field of each of `kb`'s entries that has it, in order.
fn each<'a>(kb: &'a Value, field: &str) -> Vec<&'a str> {
    kb["documents"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|d| d[field].as_str())
        .collect()
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
/// The Hugo fixture's Markdown pages with text: `posts/_index.md`, a section's title
/// alone, is a stub.
const MARKDOWN_PAGES: [&str; 3] = ["page_about", "page_home", "page_posts_first_post"];

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
    // Hugo gives each heading an id; the heading line carries it, for links to its section.
    assert!(
        content.contains("\n\n## Saturation {#saturation}\n\nThe k1 parameter"),
        "{content}"
    );
    assert!(
        content.contains("\n\n### Length normalisation {#length-normalisation}\n\n"),
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
        "# Setup {#setup}\n\nInstall the tool before the first run.\n\n\
         ## Requirements {#requirements}\n\nA recent Rust toolchain and Python 3.\n\n\
         ## Configuration {#configuration}\n\nPut every option in rag.toml."
    );
    assert_eq!(doc(&kb, "page_manual")["title"], "Welcome to the manual");
}

#[test]
fn a_docusaurus_blog_s_index_and_tag_pages_are_left_out_as_listings() {
    // The blog's index shows each post's title over its byline and opening (the whole of
    // a short post), a tag page the same for the posts it holds.
    let site = sites().join("docusaurus");
    let dir = scratch("docusaurus");
    let out = build_site(&dir, &site, "https://tidepool.example.org/");
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    assert!(stdout.contains("skipped 2 post listings"), "{stdout}");
    let kb: Value = serde_json::from_slice(&std::fs::read(dir.join("kb.json")).unwrap()).unwrap();
    // Left out: `/blog` (three posts) and `/blog/tags/release` (two). A tag of one post
    // stays, not told from a page that quotes one other (docs/build.md).
    assert_eq!(
        ids(&kb),
        [
            "page_blog_community_stations",
            "page_blog_offline_charts",
            "page_blog_station_alerts",
            "page_blog_tags_charts",
            "page_docs_intro"
        ]
    );
    // Each heading ends in a zero-width space inside its anchor link; it is not text.
    let intro = doc(&kb, "page_docs_intro")["content"].as_str().unwrap();
    assert!(intro.contains("\n## Install {#install}\n"), "{intro}");
    assert!(!intro.contains('\u{200b}'), "{intro}");
}

#[test]
fn a_page_counts_the_kept_pages_whose_text_links_to_it_not_their_navigation() {
    // Docusaurus' posts link each other only from the "Newer post / Older post" bar (a
    // `<nav>` inside `<main>`), and each post's tags from its footer; the tag page of
    // "charts" links its one post; the blog's index and the "release" tag page, which
    // link every post, are left out as listings.
    let site = sites().join("docusaurus");
    let dir = scratch("docusaurus-links");
    let out = build_site(&dir, &site, "https://tidepool.example.org/");
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let kb: Value = serde_json::from_slice(&std::fs::read(dir.join("kb.json")).unwrap()).unwrap();
    let linked: Vec<(String, u64)> = ids(&kb)
        .into_iter()
        .map(|id| {
            let n = doc(&kb, &id)["linked_from"].as_u64();
            let n = n.unwrap_or_else(|| panic!("{id} has no count"));
            (id, n)
        })
        .collect();
    let expect = |id: &str, n: u64| (id.to_owned(), n);
    assert_eq!(
        linked,
        [
            expect("page_blog_community_stations", 0),
            expect("page_blog_offline_charts", 1),
            expect("page_blog_station_alerts", 0),
            expect("page_blog_tags_charts", 1),
            expect("page_docs_intro", 0),
        ]
    );
}

#[test]
fn a_doxygen_manual_names_its_pages_by_title_not_by_their_first_section() {
    // Doxygen puts a `\page`'s name in <title> ("Pony: Configuration") and a <div>, and
    // its `\section`s in <h1>s ("Format", "Project options"): the first <h1> names a
    // section, not the page.
    let site = sites().join("doxygen");
    let kb = build(
        "doxygen",
        &[
            "--site",
            site.to_str().unwrap(),
            "--base-url",
            "https://pony.example.org/manual/",
        ],
    );
    // "Pony: ", on every <title>, is the site's name, which then leaves them.
    let title = |id: &str| doc(&kb, id)["title"].as_str().unwrap().to_owned();
    assert_eq!(title("page_manual_settings"), "Configuration");
    assert_eq!(title("page_manual_setup"), "Getting started");
    // One section only, which shares no word with the page's name.
    assert_eq!(title("page_manual_macros"), "Custom commands");
    // The sections stay in the text as headings.
    let settings = doc(&kb, "page_manual_settings")["content"]
        .as_str()
        .unwrap()
        .to_owned();
    assert!(settings.contains("# Format"), "{settings}");
    assert!(settings.contains("# Project options"), "{settings}");
}

#[test]
fn a_search_hit_deep_in_a_long_built_page_links_to_its_section() {
    let dir = scratch("sections");
    let filler = "<p>Other words fill this part of the manual page.</p>".repeat(40);
    let page = format!(
        "<html><head><title>Manual</title></head><body><main><h1>Manual</h1>{filler}\
         <div class=\"sect1\"><h2 id=\"_branches\">Branches</h2>{filler}\
         <h3>Merging</h3>{filler}<p>A fast-forward merge moves the branch pointer.</p></div>\
         </main></body></html>"
    );
    std::fs::create_dir_all(dir.join("site")).unwrap();
    dir.file("site/manual.html", &page);
    let out = build_site(&dir, &dir.join("site"), "https://docs.example.org/");
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    let kb: Value = serde_json::from_slice(&std::fs::read(dir.join("kb.json")).unwrap()).unwrap();
    let content = doc(&kb, "page_manual")["content"].as_str().unwrap();
    assert!(
        content.contains("\n## Branches {#_branches}\n"),
        "{content}"
    );
    let out = rag(
        &dir,
        &[
            "search",
            "--kb",
            "kb.json",
            "--json",
            "-k",
            "1",
            "fast-forward merge",
        ],
    );
    let body: Value = serde_json::from_slice(&out.stdout).unwrap();
    let hit = &body["hits"][0];
    assert_eq!(hit["id"], "page_manual");
    assert_eq!(hit["section"], serde_json::json!(["Branches", "Merging"]));
    // Merging has no id of its own: the link goes to the section it is in.
    assert_eq!(
        hit["section_url"],
        "https://docs.example.org/manual.html#_branches"
    );
    assert!(!hit["snippet"].as_str().unwrap().contains("{#"), "{hit}");
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
fn a_site_over_the_page_limit_keeps_its_pages_nearest_the_root() {
    let dir = scratch("limit");
    let site = dir.join("site");
    // Path order puts the deep API pages first, as Rust's `core/` comes before `std/`.
    let pages = [
        ("api/item/deep/fn.one.html", "first deep function"),
        ("api/item/deep/fn.two.html", "second deep function"),
        ("api/module.html", "module overview"),
        ("guide.html", "getting started guide"),
        ("index.html", "home page"),
    ];
    for (i, (path, words)) in pages.iter().enumerate() {
        let file = site.join(path);
        std::fs::create_dir_all(file.parent().unwrap()).unwrap();
        // Distinct prose, long enough not to be a stub.
        let body: String = (0..40)
            .map(|j| format!("Sentence {j} of the {words}, number {i}, says something. "))
            .collect();
        let html = format!(
            "<!doctype html><html><head><title>{words}</title></head>\
             <body><main><h1>{words}</h1><p>{body}</p></main></body></html>"
        );
        std::fs::write(file, html).unwrap();
    }
    let out = rag(
        &dir,
        &[
            "build",
            "--site",
            site.to_str().unwrap(),
            "--base-url",
            "https://ex.org/",
            "--max-pages",
            "3",
            "-o",
            "kb.json",
        ],
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    assert!(
        stderr.contains("shallowest first") && stderr.contains("--max-pages"),
        "{stderr}"
    );
    let kb: Value = serde_json::from_slice(&std::fs::read(dir.join("kb.json")).unwrap()).unwrap();
    let mut urls: Vec<&str> = kb["documents"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| d["url"].as_str().unwrap())
        .collect();
    urls.sort_unstable();
    assert_eq!(
        urls,
        [
            "https://ex.org/",
            "https://ex.org/api/module.html",
            "https://ex.org/guide.html"
        ]
    );
}

#[test]
fn a_sitemap_of_another_address_is_refused_with_the_address_it_names() {
    // The site was built for https://docs.example.org/manual/: with another base URL no
    // page of its sitemap is the site's, which says what to pass instead of an empty build.
    let dir = scratch("othersite");
    let out = build_site(
        &dir,
        &sites().join("mkdocs"),
        "https://staging.example.com/",
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_ne!(out.status.code(), Some(0), "{stderr}");
    assert!(
        stderr.contains("none of its 2 URLs is under --base-url https://staging.example.com/")
            && stderr.contains("they are under https://docs.example.org/manual/")
            && stderr.contains("--no-sitemap"),
        "{stderr}"
    );
    assert!(!dir.join("kb.json").exists());
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
    // Its pages link to none of each other: no page gets a count of linking pages.
    assert!(
        kb["documents"]
            .as_array()
            .unwrap()
            .iter()
            .all(|d| d.get("linked_from").is_none()),
        "{kb}"
    );
}

#[test]
fn markdown_pages_count_the_sources_that_link_to_their_files_or_urls() {
    // An MkDocs-style tree: links name other sources by relative path (with an anchor, or
    // `..`), or the built site's URL; a code block's link is no link.
    let dir = scratch("markdown-links");
    let docs = dir.join("docs");
    std::fs::create_dir_all(docs.join("user-guide")).unwrap();
    let files = [
        (
            "index.md",
            "# Home\n\nThe tool turns a folder of notes into a searchable site.\n\n\
             Read [installing](user-guide/installing.md) first, then \
             [configuring](user-guide/configuring.md#the-file).\n",
        ),
        (
            "user-guide/installing.md",
            "# Installing\n\nThe package installs with the system's package manager.\n\n\
             Once installed, see [configuring](configuring.md) and the \
             [home page](../index.md).\n\n```md\n[not a link](../about.md)\n```\n",
        ),
        (
            "user-guide/configuring.md",
            "# Configuring\n\nThe settings live in one file beside the notes.\n\n\
             Install first: [installing](/user-guide/installing/).\n",
        ),
        (
            "about.md",
            "# About\n\nNo page links here, and it says so plainly.\n",
        ),
    ];
    for (rel, text) in files {
        std::fs::write(docs.join(rel), text).unwrap();
    }
    let kb = built(
        &dir,
        &[
            "build",
            "--markdown",
            "docs",
            "--base-url",
            "https://docs.example.org/",
            "-o",
            "kb.json",
        ],
    );
    let linked: Vec<(String, Option<u64>)> = ids(&kb)
        .into_iter()
        .map(|id| {
            let n = doc(&kb, &id)["linked_from"].as_u64();
            (id, n)
        })
        .collect();
    let expect = |id: &str, n: u64| (id.to_owned(), Some(n));
    assert_eq!(
        linked,
        [
            expect("page_about", 0),
            expect("page_home", 1),
            expect("page_user_guide_configuring", 2),
            expect("page_user_guide_installing", 2),
        ]
    );
}

#[test]
fn a_markdown_table_of_contents_is_left_out_as_its_built_page_would_be() {
    // An mdBook-style source tree: `SUMMARY.md` is only the book's chapter list, as a
    // generator's index page is; the home page opens with its own text before its links,
    // so it stays; `moved.md` is a stub pointing elsewhere.
    let dir = scratch("markdown-noise");
    let src = dir.join("src");
    std::fs::create_dir_all(&src).unwrap();
    let chapters = [
        "install",
        "configure",
        "deploy",
        "upgrade",
        "backup",
        "restore",
    ];
    let mut summary = String::from("# Summary\n\n");
    for c in chapters {
        summary.push_str(&format!("- [{c}]({c}.md)\n"));
        std::fs::write(
            src.join(format!("{c}.md")),
            format!(
                "# {c}\n\nHow to {c} the service on a single machine, step by step, \
                 with the commands to run and what each of them prints.\n"
            ),
        )
        .unwrap();
    }
    std::fs::write(src.join("SUMMARY.md"), summary).unwrap();
    std::fs::write(
        src.join("index.md"),
        "# Home\n\nThis book explains how to run the service on your own machines, \
         from the first install to the day you restore it from a backup.\n\n\
         - [install](install.md)\n- [configure](configure.md)\n- [deploy](deploy.md)\n\
         - [upgrade](upgrade.md)\n- [backup](backup.md)\n- [restore](restore.md)\n",
    )
    .unwrap();
    std::fs::write(
        src.join("moved.md"),
        "# Old guide\n\nThis page is now [the install chapter](install.md).\n",
    )
    .unwrap();
    let args = |keep: bool| {
        let mut a = vec![
            "build",
            "--markdown",
            "src",
            "--base-url",
            "https://book.example.org/",
            "-o",
            "kb.json",
        ];
        if keep {
            a.push("--keep-all");
        }
        a
    };
    let out = rag(&dir, &args(false));
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(stdout.contains("skipped 1 link lists, 1 stubs"), "{stdout}");
    let kb: Value = serde_json::from_slice(&std::fs::read(dir.join("kb.json")).unwrap()).unwrap();
    let mut want: Vec<String> = chapters.iter().map(|c| format!("page_{c}")).collect();
    want.push("page_home".to_owned());
    want.sort();
    assert_eq!(ids(&kb), want);
    // `--keep-all` keeps them.
    let kept = built(&dir, &args(true));
    assert_eq!(ids(&kept).len(), want.len() + 2, "{kept}");
}

/// `rag build --markdown src -o OUT` in `dir`, over [`two_pages`], whatever it exits with.
fn build_two_pages(dir: &Path, out: &str) -> Output {
    let args = [
        "build",
        "--markdown",
        "src",
        "--base-url",
        "https://ex.org/",
        "-o",
        out,
    ];
    rag(dir, &args)
}

/// A folder of two Markdown pages with text, for the output tests.
fn two_pages(dir: &Path) {
    let src = dir.join("src");
    std::fs::create_dir_all(&src).unwrap();
    for name in ["alpha", "beta"] {
        std::fs::write(
            src.join(format!("{name}.md")),
            format!("# {name}\n\nThe {name} page says something of its own, in a sentence.\n"),
        )
        .unwrap();
    }
}

#[test]
fn an_output_through_a_symbolic_link_replaces_the_file_and_keeps_the_link() {
    let dir = scratch("output-link");
    two_pages(&dir);
    std::fs::create_dir_all(dir.join("real")).unwrap();
    std::fs::write(dir.join("real/kb.json"), "old").unwrap();
    std::os::unix::fs::symlink("real/kb.json", dir.join("kb.json")).unwrap();
    let out = build_two_pages(&dir, "kb.json");
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    let kb: Value = serde_json::from_slice(&std::fs::read(dir.join("kb.json")).unwrap()).unwrap();
    assert_eq!(ids(&kb), ["page_alpha", "page_beta"]);
    let link = std::fs::symlink_metadata(dir.join("kb.json")).unwrap();
    assert!(link.file_type().is_symlink(), "the link was replaced");
    // The prebuilt index stands where a loader given `kb.json` looks for it.
    assert!(dir.join("kb.index").is_file(), "no index beside the link");
    let written: Value =
        serde_json::from_slice(&std::fs::read(dir.join("real/kb.json")).unwrap()).unwrap();
    assert_eq!(written, kb);
}

#[test]
fn an_output_that_is_a_pipe_is_written_into_and_gets_nothing_beside_it() {
    use std::os::unix::fs::FileTypeExt;
    // A named pipe stands for any device (`-o /dev/null`): renamed over, it would become a
    // regular file. `cat` reads what the build writes into it.
    let dir = scratch("output-pipe");
    two_pages(&dir);
    let out = dir.join("out");
    std::fs::create_dir_all(&out).unwrap();
    let pipe = out.join("kb.json");
    let made = Command::new("mkfifo").arg(&pipe).status().unwrap();
    assert!(made.success());
    let mut reader = Command::new("cat")
        .arg(&pipe)
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let built = build_two_pages(&dir, "out/kb.json");
    let stdout = String::from_utf8_lossy(&built.stdout);
    // Had the build never opened the pipe, `cat` would wait on it for ever: give up on it
    // after a while, so the assertions below say what went wrong.
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
    while reader.try_wait().unwrap().is_none() && std::time::Instant::now() < deadline {
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    let _ = reader.kill();
    let read = reader.wait_with_output().unwrap().stdout;
    assert_eq!(
        built.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&built.stderr)
    );
    assert!(
        std::fs::symlink_metadata(&pipe)
            .unwrap()
            .file_type()
            .is_fifo(),
        "the pipe was replaced by a file"
    );
    let kb: Value = serde_json::from_slice(&read).expect("the pipe carried the knowledge base");
    assert_eq!(ids(&kb), ["page_alpha", "page_beta"]);
    let beside: Vec<String> = std::fs::read_dir(&out)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(beside, ["kb.json"], "{stdout}");
    assert!(stdout.contains("is not a regular file"), "{stdout}");
}

#[test]
fn the_sample_site_rebuilds_the_committed_sample_knowledge_base() {
    let config = repo().join("examples/sample-site/rag.toml");
    let dir = scratch("sample");
    let kb = built(
        &dir,
        &[
            "build",
            "--config",
            config.to_str().unwrap(),
            "-o",
            "kb.json",
        ],
    );
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
    for name in ["llms.txt", "llms-full.txt"] {
        let built = std::fs::read_to_string(dir.join(name)).unwrap();
        let committed = std::fs::read_to_string(repo().join(name)).unwrap();
        assert!(
            built == committed,
            "{name} differs; regenerate with: cargo run -p rag -- build --config \
             examples/sample-site/rag.toml"
        );
    }
}

#[test]
fn the_sample_site_gets_an_llms_txt_of_its_sections_and_an_llms_full_txt() {
    let dir = scratch("llms");
    let config = repo().join("examples/sample-site/rag.toml");
    let kb = built(
        &dir,
        &[
            "build",
            "--config",
            config.to_str().unwrap(),
            "-o",
            "kb.json",
        ],
    );
    let docs = kb["documents"].as_array().unwrap();
    let of_type = |t: &str| docs.iter().filter(|d| d["type"] == t).count();
    let index = std::fs::read_to_string(dir.join("llms.txt")).unwrap();
    assert!(
        index.starts_with("# Xiang An\n\n> Researcher in computer vision"),
        "{index}"
    );
    let headings: Vec<&str> = index.lines().filter(|l| l.starts_with("## ")).collect();
    assert_eq!(headings, ["## Pages", "## Publications", "## Projects"]);
    // One link line per entry, each `- [Title](https://...)`, in its type's section.
    let section = |h: &str| -> Vec<&str> {
        index
            .split(&format!("{h}\n\n"))
            .nth(1)
            .unwrap()
            .split("\n\n")
            .next()
            .unwrap()
            .lines()
            .collect()
    };
    assert_eq!(section("## Pages").len(), of_type("page"));
    assert_eq!(section("## Publications").len(), of_type("publication"));
    assert_eq!(section("## Projects").len(), of_type("github_project"));
    // Entries with a link are Markdown links; a paper known only by its venue is listed
    // by its title.
    let linked = docs
        .iter()
        .filter(|d| {
            ["url", "paper_url", "code_url"]
                .iter()
                .any(|k| d[k].is_string())
        })
        .count();
    let links = index.lines().filter(|l| l.starts_with("- [")).count();
    assert_eq!(links, linked);
    assert!(linked < docs.len(), "the sample has unlinked papers");
    assert!(
        index.contains("\n- ViCToR: Improving Visual Comprehension via Token Reconstruction for Pretraining LMMs: Yin Xie,"),
        "{index}"
    );
    assert!(
        index.contains("- [About Xiang An](https://xiangan.example.org/about/): Xiang An (安翔) is a researcher"),
        "{index}"
    );
    let full = std::fs::read_to_string(dir.join("llms-full.txt")).unwrap();
    assert!(full.starts_with("# Xiang An\n\n> "));
    // Every entry's text is there: each page's content, each publication's title.
    for d in docs {
        let probe = match d["content"].as_str() {
            Some(content) => content.lines().last().unwrap().to_owned(),
            None => format!("# {}", d["title"].as_str().or(d["name"].as_str()).unwrap()),
        };
        assert!(
            full.contains(&probe),
            "{probe:?} missing from llms-full.txt"
        );
    }

    // Turned off, neither is written.
    let dir = scratch("nollms");
    built(
        &dir,
        &[
            "build",
            "--config",
            config.to_str().unwrap(),
            "-o",
            "kb.json",
            "--no-llms-txt",
        ],
    );
    assert!(!dir.join("llms.txt").exists() && !dir.join("llms-full.txt").exists());
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
    let files = ["kb.json", "llms.txt", "llms-full.txt"];
    let first: Vec<Vec<u8>> = files
        .iter()
        .map(|f| std::fs::read(dir.join(f)).unwrap())
        .collect();
    built(&dir, &args);
    for (f, bytes) in files.iter().zip(first) {
        assert!(bytes == std::fs::read(dir.join(f)).unwrap(), "{f} changed");
    }
    let out = rag(&dir, &["validate", "kb.json"]);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// The words of a text, lowercased: Pagefind's fragment text joins blocks with `. ` where
/// `rag build` keeps the Markdown structure, so the two compare word by word.
fn words(text: &str) -> Vec<String> {
    text.split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
        .map(str::to_lowercase)
        .collect()
}

#[test]
fn a_pagefind_annotated_site_gives_what_pagefind_itself_indexes() {
    // pagefind.expected.json is Pagefind 1.6's own index of the site (regenerate.sh).
    let expected: Value =
        serde_json::from_slice(&std::fs::read(sites().join("pagefind.expected.json")).unwrap())
            .unwrap();
    let dir = scratch("pagefind");
    let out = build_site(&dir, &sites().join("pagefind"), "https://pf.example.org/");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{stdout}");
    // The home and tags pages lack data-pagefind-body, so Pagefind skips them: so do we.
    assert!(
        stdout.contains("left out 2 HTML page(s) without it"),
        "{stdout}"
    );
    let kb: Value = serde_json::from_slice(&std::fs::read(dir.join("kb.json")).unwrap()).unwrap();
    let pages = expected.as_array().unwrap();
    assert_eq!(pages.len(), 2);
    assert_eq!(ids(&kb), ["page_about", "page_posts_bm25"]);
    for page in pages {
        let url = format!("https://pf.example.org{}", page["url"].as_str().unwrap());
        let entry = kb["documents"]
            .as_array()
            .unwrap()
            .iter()
            .find(|d| d["url"] == url.as_str())
            .unwrap_or_else(|| panic!("no entry for {url}"));
        let content = entry["content"].as_str().unwrap();
        assert_eq!(
            words(content),
            words(page["content"].as_str().unwrap()),
            "{url}: {content}"
        );
        for (key, value) in page["meta"].as_object().unwrap() {
            let value = value.as_str().unwrap();
            match key.as_str() {
                "image" => assert_eq!(entry["image"], format!("https://pf.example.org{value}")),
                _ => assert_eq!(entry[key], value, "{url}: meta {key}"),
            }
        }
        for (key, values) in page["filters"].as_object().unwrap() {
            let got = match &entry[key] {
                Value::String(one) => vec![Value::String(one.clone())],
                Value::Array(many) => many.clone(),
                other => panic!("{url}: filter {key} is {other}"),
            };
            assert_eq!(&got, values.as_array().unwrap(), "{url}: filter {key}");
        }
    }
    let post = doc(&kb, "page_posts_bm25");
    assert_eq!(post["title"], "BM25, explained");
    assert!(post["content"]
        .as_str()
        .unwrap()
        .starts_with("# BM25 by hand\n\nBy Jane Doe"));
    // The filters are search filters: the built knowledge base loads, and `field.tag`
    // selects on any of a page's tags.
    let text = std::fs::read_to_string(dir.join("kb.json")).unwrap();
    let kb = shared::KnowledgeBase::from_json_str(&text, "kb.json").unwrap();
    let matching = |name: &str, value: &str| -> Vec<&str> {
        let mut f = shared::search::Filters::default();
        assert!(f.set(name, value).unwrap());
        kb.documents
            .iter()
            .filter(|d| f.matches(d, &shared::search::Facets::of(d)))
            .map(|d| d.id.as_str())
            .collect()
    };
    assert_eq!(matching("field.tag", "Ranking"), ["page_posts_bm25"]);
    assert_eq!(matching("field.author", "jane doe"), ["page_posts_bm25"]);
    assert!(matching("field.tag", "Blog").is_empty());
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

    // A site folder that gives no page says so, not what the schema requires.
    let site = dir.join("public");
    std::fs::create_dir_all(&site).unwrap();
    std::fs::write(site.join("notes.txt"), "not a page").unwrap();
    let out = build_site(&dir, &site, "https://ex.org/");
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("nothing written: no page, publication or entry came out of the sources"),
        "{err}"
    );
    assert_eq!(
        std::fs::read_to_string(dir.join("kb.json")).unwrap(),
        "previous"
    );
}

#[cfg(unix)]
#[test]
fn a_link_out_of_the_site_folder_is_not_read_with_or_without_a_sitemap() {
    use std::os::unix::fs::symlink;
    let dir = scratch("links-out");
    let site = dir.join("site");
    std::fs::create_dir_all(&site).unwrap();
    let page = |title: &str| {
        format!(
            "<html><head><title>{title}</title></head><body><main><h1>{title}</h1>\
             <p>The text of the page called {title}, long enough to be a page.</p>\
             </main></body></html>"
        )
    };
    std::fs::write(site.join("guide.html"), page("Guide")).unwrap();
    std::fs::write(dir.join("secret.html"), page("Credentials")).unwrap();
    symlink(dir.join("secret.html"), site.join("notes.html")).unwrap();
    for sitemap in [false, true] {
        if sitemap {
            std::fs::write(
                site.join("sitemap.xml"),
                r#"<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">
                   <url><loc>https://ex.org/guide.html</loc></url>
                   <url><loc>https://ex.org/notes.html</loc></url></urlset>"#,
            )
            .unwrap();
        }
        let out = build_site(&dir, &site, "https://ex.org/");
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(0), "{err}");
        assert!(
            err.contains("notes.html") && err.contains("outside"),
            "{err}"
        );
        let kb: Value =
            serde_json::from_str(&std::fs::read_to_string(dir.join("kb.json")).unwrap()).unwrap();
        assert_eq!(each(&kb, "title"), ["Guide"], "sitemap: {sitemap}");
    }
}

#[test]
fn file_names_with_spaces_give_percent_encoded_urls() {
    // CMake's Sphinx docs name pages after their titles ("Installing and Testing.html"),
    // and a Markdown folder may hold "My Notes.md": a URL holds no spaces.
    let dir = scratch("spaces");
    let site = dir.join("site/guide");
    std::fs::create_dir_all(&site).unwrap();
    std::fs::write(
        site.join("Installing and Testing.html"),
        "<html><head><title>Installing and Testing</title></head><body><main>\
         <h1>Installing and Testing</h1><p>Add install rules to the project, then test \
         that the installed executable runs.</p></main></body></html>",
    )
    .unwrap();
    let notes = dir.join("notes");
    std::fs::create_dir_all(&notes).unwrap();
    std::fs::write(
        notes.join("My Notes.md"),
        "---\ntitle: My notes\n---\nThings worth keeping.\n",
    )
    .unwrap();
    let kb = built(
        &dir,
        &[
            "build",
            "--site",
            dir.join("site").to_str().unwrap(),
            "--markdown",
            notes.to_str().unwrap(),
            "--base-url",
            "https://ex.org/",
            "-o",
            "kb.json",
        ],
    );
    let urls = each(&kb, "url");
    assert!(
        urls.contains(&"https://ex.org/guide/Installing%20and%20Testing.html"),
        "{urls:?}"
    );
    assert!(urls.iter().any(|u| u.contains("My%20Notes")), "{urls:?}");
}
