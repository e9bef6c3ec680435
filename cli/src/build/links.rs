//! Links between a site's pages: how many other pages link to each page from their main
//! text (`linked_from`), which retrieval reads as a page's standing on its site.
//!
//! A page that many others send their readers to (`git-commit`, a chapter's overview, the
//! class a tutorial builds on) is the one a visitor's question more often means than a
//! page linked from none (`git-commit-tree`, a generated example). Only the main text's
//! links count, each linking page once: a navigation bar or sidebar is left out of it, as
//! it is of the text, so a site's template endorses nothing.
//!
//! [`targets`] takes a page's links while its HTML is parsed, as 64-bit hashes of their
//! normalised URLs (a large API site holds millions of links: 8 bytes each, not the URL's
//! text); [`markdown_targets`] does the same for a Markdown source, whose links name other
//! source files (`../guide/setup.md`) as often as URLs; [`count`] matches them against the
//! pages kept, after noise and duplicates are gone, so a link to a page folded into another
//! counts for the page that stands for both.

use std::collections::HashMap;
use std::hash::{Hash, Hasher};

use ego_tree::iter::Edge;
use scraper::Node;

use super::html::Scope;
use super::page::Page;

/// The hashes of the pages the scope's links lead to (`href` resolved against `url`, where
/// the page was found), sorted, each once; links within the page itself (`#anchor`) and
/// out of the web (`mailto:`) are none.
pub(crate) fn targets(scope: &Scope<'_>, url: &str) -> Vec<u64> {
    let Ok(base) = reqwest::Url::parse(url) else {
        return Vec::new();
    };
    let own = key_of(&base);
    // Each distinct `href` resolved once: an API page names one type in many signatures.
    let mut hrefs: Vec<&str> = scope
        .edges(|_| {})
        .filter_map(|edge| match edge {
            Edge::Open(node) => match node.value() {
                Node::Element(el) if el.name() == "a" => el.attr("href").map(str::trim),
                _ => None,
            },
            Edge::Close(_) => None,
        })
        .filter(|href| !href.starts_with('#'))
        .collect();
    hrefs.sort_unstable();
    hrefs.dedup();
    let mut out: Vec<u64> = hrefs
        .into_iter()
        .filter_map(|href| base.join(href).ok())
        .filter_map(|target| key_of(&target))
        .filter(|&k| Some(k) != own)
        .collect();
    out.sort_unstable();
    out.dedup();
    out
}

/// The pages a Markdown source's text links to (`[text](target)`, reference links,
/// autolinks; not images, and nothing inside code), sorted, each once. `rel` is the file's
/// path under the source folder and `url` the page's URL: a target that is a Markdown file
/// (`setup.md`, `../guide/setup.md#install`) is resolved against `rel` and keyed as that
/// source ([`source_key`]), which is how MkDocs, Docusaurus and GitHub read such links;
/// any other target is resolved against `url`, as a link in HTML is.
pub(crate) fn markdown_targets(body: &str, rel: &str, url: &str) -> Vec<u64> {
    use pulldown_cmark::{Event, Parser, Tag};
    let (Ok(page), Some(source)) = (reqwest::Url::parse(url), source_url(rel)) else {
        return Vec::new();
    };
    let own = [key_of(&page), source_key_of(&source)];
    let mut out: Vec<u64> = Parser::new(body)
        .filter_map(|event| match event {
            Event::Start(Tag::Link { dest_url, .. }) => Some(dest_url),
            _ => None,
        })
        .filter(|dest| !dest.trim().is_empty() && !dest.starts_with('#'))
        .filter_map(|dest| {
            let dest = dest.trim();
            let path = dest.split(['?', '#']).next().unwrap_or(dest);
            let is_source = reqwest::Url::parse(dest).is_err() && is_markdown_file(path);
            if is_source {
                source_key_of(&source.join(dest).ok()?)
            } else {
                key_of(&page.join(dest).ok()?)
            }
        })
        .filter(|k| !own.contains(&Some(*k)))
        .collect();
    out.sort_unstable();
    out.dedup();
    out
}

/// The key links from other Markdown sources name the file `rel` (its path under the
/// source folder) by.
pub(crate) fn source_key(rel: &str) -> Option<u64> {
    source_key_of(&source_url(rel)?)
}

/// A source file's path as a `file:` URL under an empty root, so that joining a link to
/// it resolves `..`, `.` and percent-encoding as a browser resolves them against a URL.
fn source_url(rel: &str) -> Option<reqwest::Url> {
    reqwest::Url::parse("file:///").ok()?.join(rel).ok()
}

/// The key of a source file's URL from [`source_url`], without its query and fragment
/// (`setup.md#install` is `setup.md`); never equal to a page URL's key, which is of an
/// `http(s)` URL.
fn source_key_of(url: &reqwest::Url) -> Option<u64> {
    (url.scheme() == "file").then(|| hash(url.path()))
}

/// Whether a link's path names a Markdown file, as [`super::markdown`] reads them.
fn is_markdown_file(path: &str) -> bool {
    let lower = path.to_ascii_lowercase();
    lower.ends_with(".md") || lower.ends_with(".markdown")
}

/// A string's 64-bit key. Deterministic (the build cache stores keys): FxHasher has no
/// random seed.
fn hash(text: &str) -> u64 {
    let mut h = rustc_hash::FxHasher::default();
    text.hash(&mut h);
    h.finish()
}

/// The key of a page's URL as links name it: `http(s)` only, without its query and
/// fragment, a directory's `index.html` standing for the directory (as `rag build` serves
/// it: [`super::site::directory_url`]).
pub(crate) fn key_of(url: &reqwest::Url) -> Option<u64> {
    if !matches!(url.scheme(), "http" | "https") {
        return None;
    }
    // A parsed URL writes `?` and `#` only where its query and fragment begin.
    let text = url.as_str();
    let text = text.split(['?', '#']).next().unwrap_or(text);
    Some(hash(super::site::directory_url(text)))
}

/// The key of a page's URL (its own, an alternate's, where it was found).
pub(crate) fn key(url: &str) -> Option<u64> {
    key_of(&reqwest::Url::parse(url).ok()?)
}

/// Sets each page's `linked_from`: how many other pages of `pages` link to it, to one of
/// its alternates or to its source file. A site whose pages link to none of each other gets
/// no counts at all: all alike, they would say nothing (and a hand-kept site's knowledge
/// base stays as it was). Drops the pages' link lists, which nothing needs after.
pub(crate) fn count(pages: &mut [Page]) {
    let mut by_key: HashMap<u64, usize> = HashMap::with_capacity(pages.len());
    for (i, page) in pages.iter().enumerate() {
        let urls = std::iter::once(&page.url).chain(&page.alternates);
        for k in urls.filter_map(|u| key(u)).chain(page.found_at) {
            by_key.entry(k).or_insert(i);
        }
    }
    let mut linked_from = vec![0u32; pages.len()];
    let mut seen: Vec<usize> = Vec::new();
    for (source, page) in pages.iter().enumerate() {
        seen.clear();
        seen.extend(
            page.links
                .iter()
                .filter_map(|k| by_key.get(k).copied())
                .filter(|&target| target != source),
        );
        // Two of its links may name one page (itself and an alternate): counted once.
        seen.sort_unstable();
        seen.dedup();
        for &target in &seen {
            linked_from[target] += 1;
        }
    }
    let any = linked_from.iter().any(|&n| n > 0);
    for (page, n) in pages.iter_mut().zip(linked_from) {
        page.linked_from = any.then_some(n);
        page.links = Vec::new();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn page(url: &str, html: &str) -> Page {
        super::super::html::extract(html, url).expect("a page")
    }

    #[test]
    fn only_the_main_text_s_links_count_and_each_linking_page_once() {
        // Every page's navigation links to all three: the template endorses nothing.
        let nav = r#"<nav><a href="/a.html">A</a> <a href="/b.html">B</a>
            <a href="/c/">C</a></nav>"#;
        let html =
            |body: &str| format!("<html><body>{nav}<main><h1>T</h1>{body}</main></body></html>");
        let mut pages = vec![
            page(
                "https://ex.org/a.html",
                &html(
                    r##"<p>See <a href="b.html#usage">b</a>, <a href="b.html">b again</a>,
                    <a href="#top">this page</a> and <a href="/c/index.html?x=1">c</a>.</p>"##,
                ),
            ),
            page(
                "https://ex.org/b.html",
                &html(
                    r#"<p>Back to <a href="https://ex.org/c/">c</a>, <a href="b.html">me</a>,
                    <a href="mailto:x@ex.org">mail</a>, <a href="https://other.org/b.html">elsewhere</a>.</p>"#,
                ),
            ),
            page("https://ex.org/c/", &html("<p>No links of its own.</p>")),
        ];
        count(&mut pages);
        let linked: Vec<Option<u32>> = pages.iter().map(|p| p.linked_from).collect();
        // b: from a (twice, and with an anchor: once); c: from a (its index.html, a
        // query) and b; a: only from the navigation, and b's link to itself is none.
        assert_eq!(linked, [Some(0), Some(1), Some(2)]);
        assert!(pages.iter().all(|p| p.links.is_empty()));
    }

    #[test]
    fn a_link_to_a_folded_duplicate_counts_for_the_page_kept() {
        let mut pages = vec![
            page(
                "https://ex.org/guide.html",
                r#"<main><h1>Guide</h1><p><a href="v1/api.html">the API</a></p></main>"#,
            ),
            page(
                "https://ex.org/tour.html",
                r#"<main><h1>Tour</h1><p><a href="api.html">the API</a></p></main>"#,
            ),
            page(
                "https://ex.org/api.html",
                "<main><h1>API</h1><p>Calls.</p></main>",
            ),
        ];
        pages[2].alternates = vec!["https://ex.org/v1/api.html".into()];
        count(&mut pages);
        assert_eq!(pages[2].linked_from, Some(2));
        assert_eq!(pages[0].linked_from, Some(0));
    }

    #[test]
    fn a_site_whose_pages_link_to_none_of_each_other_gets_no_counts() {
        let mut pages = vec![
            page(
                "https://ex.org/a.html",
                r#"<main><h1>A</h1><p><a href="https://other.org/">elsewhere</a></p></main>"#,
            ),
            page(
                "https://ex.org/b.html",
                "<main><h1>B</h1><p>Text.</p></main>",
            ),
        ];
        count(&mut pages);
        assert_eq!(pages[0].linked_from, None);
        assert_eq!(pages[1].linked_from, None);
    }

    /// A page as `rag build --markdown` reads it, at `https://ex.org/docs/` + its path.
    fn source(rel: &str, body: &str) -> Page {
        let url = format!("https://ex.org/docs/{}/", rel.trim_end_matches(".md"));
        Page {
            links: markdown_targets(body, rel, &url),
            found_at: source_key(rel),
            url,
            content: body.into(),
            ..Page::default()
        }
    }

    #[test]
    fn markdown_links_name_source_files_or_urls_and_code_and_images_are_none() {
        let body = "See [setup](setup.md), [setup again](./setup.md#install),
[the FAQ](../faq.md) and [ref][api]; ![diagram](setup.md) is an image.

`[not a link](setup.md)` is code, as is

```text
[nor this](../faq.md)
```

and <https://ex.org/docs/about/> an autolink; [out](https://other.org/x.md) leaves.

[api]: /docs/guide/api/ \"The API\"
";
        let targets = markdown_targets(body, "guide/start.md", "https://ex.org/docs/guide/start/");
        let mut want: Vec<u64> = [
            source_key("guide/setup.md"),
            source_key("faq.md"),
            key("https://ex.org/docs/guide/api/"),
            key("https://ex.org/docs/about/"),
            key("https://other.org/x.md"),
        ]
        .into_iter()
        .map(|k| k.expect("a key"))
        .collect();
        want.sort_unstable();
        assert_eq!(targets, want);
        // A link to itself, by its file or its URL, is none.
        let own = "[me](start.md) and [me again](https://ex.org/docs/guide/start/)";
        assert!(
            markdown_targets(own, "guide/start.md", "https://ex.org/docs/guide/start/").is_empty()
        );
    }

    #[test]
    fn a_markdown_page_counts_the_sources_linking_to_its_file_or_its_url() {
        let mut pages = vec![
            source("index.md", "Start with [the guide](guide/setup.md)."),
            source(
                "guide/setup.md",
                "Then [the options](options.md) and [home](../index.md).",
            ),
            source("guide/options.md", "Back to [setup](/docs/guide/setup/)."),
            source(
                "faq.md",
                "Nothing links here, and it links [nowhere](#top).",
            ),
        ];
        count(&mut pages);
        let linked: Vec<Option<u32>> = pages.iter().map(|p| p.linked_from).collect();
        assert_eq!(linked, [Some(1), Some(2), Some(1), Some(0)]);
    }

    #[test]
    fn only_a_file_named_index_html_stands_for_its_folder() {
        let mut pages = vec![
            page(
                "https://ex.org/sql-create",
                "<main><h1>Create</h1><p>Make.</p></main>",
            ),
            page(
                "https://ex.org/sql-createindex.html",
                "<main><h1>Index</h1><p>Find.</p></main>",
            ),
            page(
                "https://ex.org/tour.html",
                r#"<main><h1>Tour</h1><p><a href="sql-createindex.html">indexes</a></p></main>"#,
            ),
        ];
        count(&mut pages);
        let linked: Vec<Option<u32>> = pages.iter().map(|p| p.linked_from).collect();
        assert_eq!(linked, [Some(0), Some(1), Some(0)]);
    }

    #[test]
    fn a_page_whose_canonical_url_is_another_is_found_where_its_neighbours_link() {
        // Served at `/guide/`, it names `/guide` (no slash) as canonical; links say `/guide/`.
        let mut pages = vec![
            page(
                "https://ex.org/guide/",
                r#"<html><head><link rel="canonical" href="https://ex.org/guide"></head>
                <body><main><h1>Guide</h1><p>Read on.</p></main></body></html>"#,
            ),
            page(
                "https://ex.org/faq.html",
                r#"<main><h1>FAQ</h1><p>See <a href="guide/">the guide</a>.</p></main>"#,
            ),
        ];
        assert_eq!(pages[0].url, "https://ex.org/guide");
        count(&mut pages);
        assert_eq!(pages[0].linked_from, Some(1));
    }
}
