//! Markdown sources with front matter (a Hugo `content/`, a Jekyll or MkDocs `docs/`
//! tree): one page per file, drafts skipped, the URL from `permalink`/`url` or from a
//! pattern over the file's path and front matter.

use std::ops::ControlFlow;
use std::path::{Path, PathBuf};

use serde_json::{Map, Value};

use super::extract_cache::{self, BuildCache, Extracted, Line, Previous};
use super::parallel;
use super::progress::Progress;

use super::frontmatter;
use super::glob::Filter;
use super::page::{join_url, Page};
use super::Report;

/// Largest Markdown file read.
const MAX_FILE_BYTES: u64 = 10 * 1024 * 1024;

/// The default URL pattern: the file's path without extension, as a directory.
pub(crate) const DEFAULT_PERMALINK: &str = "/{path}/";

/// How to read Markdown sources.
pub(crate) struct MarkdownOptions<'a> {
    /// The folder of Markdown sources (`--markdown`), read recursively.
    pub(crate) dir: &'a Path,
    /// The site's base URL.
    pub(crate) base_url: &'a str,
    /// URL pattern: `{path}`, `{slug}`, `{section}`, `{year}`, `{month}`, `{day}`.
    pub(crate) permalink: &'a str,
    /// Include/exclude patterns over URL paths.
    pub(crate) filter: &'a Filter,
    /// Threads extracting pages.
    pub(crate) jobs: usize,
}

/// One file read (on any thread).
enum Read<'c> {
    /// Over the size limit: not read.
    TooLarge(PathBuf),
    /// Unreadable, or its front matter is broken: the build stops.
    Failed(String),
    /// Extracted (or reused from the cache).
    Done(Extracted, Option<Line<'c>>),
}

/// Reads and extracts one Markdown file.
fn read_one<'c>(file: PathBuf, opts: &MarkdownOptions<'_>, previous: &'c Previous) -> Read<'c> {
    let rel = match file.strip_prefix(opts.dir) {
        Ok(r) => r.to_string_lossy().replace('\\', "/"),
        Err(e) => return Read::Failed(e.to_string()),
    };
    if std::fs::metadata(&file).map(|m| m.len()).unwrap_or(0) > MAX_FILE_BYTES {
        return Read::TooLarge(file);
    }
    let text = match std::fs::read_to_string(&file) {
        Ok(t) => t,
        Err(e) => return Read::Failed(format!("{}: {e}", file.display())),
    };
    // A broken file is not cached: the build stops on it until it is fixed.
    let mut broken = None;
    let (out, line) =
        previous.extract(
            format!("markdown:{rel}"),
            text.as_bytes(),
            "",
            || match from_source(&rel, &text, opts) {
                Ok(Some(mut page)) => {
                    page.signature = Some(super::dedup::signature(&page));
                    Extracted::Page(Box::new(page))
                }
                Ok(None) => Extracted::Draft,
                Err(e) => {
                    broken = Some(format!("{}: {e}", file.display()));
                    Extracted::Draft
                }
            },
        );
    match broken {
        Some(why) => Read::Failed(why),
        None => Read::Done(out, line),
    }
}

/// Reads every `.md`/`.markdown` file under the directory (drafts left out).
pub(crate) fn read(
    opts: &MarkdownOptions<'_>,
    cache: &mut BuildCache,
    report: &mut Report,
) -> Result<Vec<Page>, String> {
    if !opts.dir.is_dir() {
        return Err(format!(
            "Markdown directory {} does not exist",
            opts.dir.display()
        ));
    }
    let tree = super::tree::files_with_extensions(opts.dir, &["md", "markdown"])
        .map_err(|e| format!("{}: {e}", opts.dir.display()))?;
    if let Some(warning) = tree.links_warning(opts.dir) {
        report.warn(warning);
    }
    let files = tree.files;
    let mut progress = Progress::new("markdown", files.len());
    let mut pages = Vec::new();
    let mut failed = None;
    let mut done = 0;
    let BuildCache { previous, next } = cache;
    let previous = &*previous;
    parallel::in_order(
        files,
        opts.jobs,
        |file| read_one(file, opts, previous),
        |read| {
            done += 1;
            progress.update(done);
            match read {
                Read::TooLarge(file) => {
                    report.warn(format!("{}: larger than 10 MiB, left out", file.display()));
                }
                Read::Failed(why) => {
                    failed = Some(why);
                    return ControlFlow::Break(());
                }
                Read::Done(out, line) => {
                    extract_cache::keep(next, line);
                    match out {
                        Extracted::Page(p) if opts.filter.allows(&p.path()) => {
                            pages.push(super::site::kept(*p));
                        }
                        _ => {}
                    }
                }
            }
            ControlFlow::Continue(())
        },
    );
    if let Some(why) = failed {
        return Err(why);
    }
    Ok(pages)
}

/// One Markdown file (`rel` is its path under the source directory) as a page, or `None`
/// for a draft.
pub(crate) fn from_source(
    rel: &str,
    text: &str,
    opts: &MarkdownOptions<'_>,
) -> Result<Option<Page>, String> {
    let (meta, body) = frontmatter::split(text)?;
    if meta.get("draft").is_some_and(truthy) || meta.get("published") == Some(&Value::Bool(false)) {
        return Ok(None);
    }
    let body = body.trim();
    let stem = rel
        .rsplit('/')
        .next()
        .unwrap_or(rel)
        .split('.')
        .next()
        .unwrap_or("");
    let title = string(&meta, "title")
        .or_else(|| {
            // The first level-1 heading, not a `# comment` in a code block.
            shared::kb::headings(body)
                .find(|(_, level, title)| *level == 1 && !title.is_empty())
                .map(|(_, _, title)| title)
        })
        .unwrap_or_else(|| stem.to_owned());
    let date = string(&meta, "date");
    let permalink = string(&meta, "permalink").or_else(|| string(&meta, "url"));
    let url = match permalink {
        Some(p) if p.starts_with("http://") || p.starts_with("https://") => p,
        Some(p) => join_url(opts.base_url, &p),
        None => join_url(
            opts.base_url,
            &expand(opts.permalink, rel, &meta, date.as_deref()),
        ),
    };
    let mut keywords = Vec::new();
    for key in ["tags", "keywords", "categories"] {
        match meta.get(key) {
            Some(Value::Array(items)) => {
                keywords.extend(items.iter().filter_map(scalar));
            }
            Some(Value::String(s)) => keywords.extend(s.split(',').map(|k| k.trim().to_owned())),
            _ => {}
        }
    }
    keywords.retain(|k| !k.is_empty());
    keywords.dedup();
    Ok(Some(Page {
        links: super::links::markdown_targets(body, rel, &url),
        found_at: super::links::source_key(rel),
        url,
        title,
        structure: structure(body),
        content: shown(body),
        lang: string(&meta, "lang").or_else(|| string(&meta, "language")),
        description: string(&meta, "description").or_else(|| string(&meta, "summary")),
        date,
        keywords,
        weight: meta.get("weight").and_then(Value::as_i64),
        ..Page::default()
    }))
}

/// The part of a Markdown body a reader sees: HTML comments (`<!-- more -->`, a linter's
/// switches, Node.js's `<!-- YAML ... -->` change logs) and link reference definitions
/// (`[caveats]: #caveats`, often a long block at a page's end) render as nothing, so they
/// are left out of what is indexed. Found by the CommonMark parser, so a comment shown in
/// a code block or code span stays. The links are read from the whole body beforehand.
fn shown(body: &str) -> String {
    use pulldown_cmark::{Event, Parser, Tag};
    let parser = Parser::new(body);
    let mut hidden: Vec<std::ops::Range<usize>> = parser
        .reference_definitions()
        .iter()
        .map(|(_, def)| def.span.clone())
        .collect();
    for (event, range) in parser.into_offset_iter() {
        if matches!(event, Event::Start(Tag::HtmlBlock) | Event::InlineHtml(_)) {
            hidden.extend(comments_in(body, range));
        }
    }
    if hidden.is_empty() {
        return body.to_owned();
    }
    hidden.sort_unstable_by_key(|r| r.start);
    let mut out = String::with_capacity(body.len());
    let mut at = 0;
    for r in hidden {
        if r.start >= at {
            out.push_str(&body[at..r.start]);
        }
        at = at.max(r.end);
    }
    out.push_str(&body[at.min(body.len())..]);
    out.trim().to_owned()
}

/// The noise measures of a Markdown body, read off its HTML as a browser would get it, so
/// a source that is only a list of links (an `index.md` naming every page) is measured as
/// its built page would be. `None` (kept as content, unmeasured) when the HTML nests deeper
/// than the parser is given ([`super::html_bounds`]): its work grows with the square of the
/// nesting, and 50,000 nested `>` quotes, 50 KB of source, took 11 s.
fn structure(body: &str) -> Option<super::noise::Structure> {
    let mut html = String::with_capacity(body.len() + body.len() / 4);
    pulldown_cmark::html::push_html(&mut html, pulldown_cmark::Parser::new(body));
    super::html_bounds::check(&html).ok()?;
    Some(super::noise::Structure {
        source: true,
        ..super::html::measure_fragment(&html)
    })
}

/// The `<!-- ... -->` comments within `range` of raw HTML in `body` (a comment left open
/// runs to the range's end, as a browser reads it).
fn comments_in(body: &str, range: std::ops::Range<usize>) -> Vec<std::ops::Range<usize>> {
    let mut out = Vec::new();
    let mut at = range.start;
    while let Some(open) = body.get(at..range.end).and_then(|s| s.find("<!--")) {
        let start = at + open;
        let end = body[start + 4..range.end]
            .find("-->")
            .map_or(range.end, |close| start + 4 + close + 3);
        out.push(start..end);
        at = end;
    }
    out
}

/// The URL path for a file from the pattern. `{path}` is the file's path without its
/// extension, with `index`/`_index`/`README` naming their directory.
fn expand(pattern: &str, rel: &str, meta: &Map<String, Value>, date: Option<&str>) -> String {
    let no_ext = rel.rsplit_once('.').map_or(rel, |(head, _)| head);
    let (dir, stem) = no_ext.rsplit_once('/').unwrap_or(("", no_ext));
    let is_index = matches!(stem, "index" | "_index" | "README");
    // A pattern naming files (`/{path}.html`) gives an index file its folder's
    // `index.html`, as a generator writing files does (MkDocs without directory URLs);
    // naming its folder would give the site's home `/.html`.
    let names_files = pattern.contains("{path}.");
    let path = match (is_index, names_files) {
        (true, false) => dir.to_owned(),
        (true, true) if dir.is_empty() => "index".to_owned(),
        (true, true) => format!("{dir}/index"),
        (false, _) => no_ext.to_owned(),
    };
    let slug = string(meta, "slug").unwrap_or_else(|| {
        if is_index {
            dir.rsplit('/').next().unwrap_or("").to_owned()
        } else {
            stem.to_owned()
        }
    });
    let section = no_ext.split_once('/').map_or("", |(s, _)| s);
    let date = date.unwrap_or("");
    let part = |i: usize| date.get(i..).unwrap_or("");
    let out = pattern
        .replace("{path}", &path)
        .replace("{slug}", &slug)
        .replace("{section}", section)
        .replace("{year}", part(0).get(..4).unwrap_or(""))
        .replace("{month}", part(5).get(..2).unwrap_or(""))
        .replace("{day}", part(8).get(..2).unwrap_or(""));
    // Empty parts (the root index, a missing date) leave doubled slashes behind.
    let mut clean = String::with_capacity(out.len());
    for c in out.chars() {
        if !(c == '/' && clean.ends_with('/')) {
            clean.push(c);
        }
    }
    if clean.is_empty() {
        "/".to_owned()
    } else {
        clean
    }
}

fn truthy(v: &Value) -> bool {
    matches!(v, Value::Bool(true)) || v.as_str().is_some_and(|s| s.eq_ignore_ascii_case("true"))
}

fn scalar(v: &Value) -> Option<String> {
    match v {
        Value::String(s) => Some(s.trim().to_owned()),
        Value::Number(n) => Some(n.to_string()),
        _ => None,
    }
}

fn string(meta: &Map<String, Value>, key: &str) -> Option<String> {
    meta.get(key).and_then(scalar).filter(|s| !s.is_empty())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn opts<'a>(permalink: &'a str, filter: &'a Filter) -> MarkdownOptions<'a> {
        MarkdownOptions {
            dir: Path::new("."),
            base_url: "https://ex.org/",
            permalink,
            filter,
            jobs: 1,
        }
    }

    #[test]
    fn without_a_title_the_first_heading_outside_code_names_the_page() {
        let f = Filter::default();
        let text = "```sh\n# install first\npip install rag\n```\n\n# Setting up\n\nText.\n";
        let p = from_source("setup.md", text, &opts(DEFAULT_PERMALINK, &f))
            .unwrap()
            .unwrap();
        assert_eq!(p.title, "Setting up");
    }

    #[test]
    fn front_matter_gives_title_date_tags_and_the_url_pattern_the_path() {
        let f = Filter::default();
        let text = "---\ntitle: Hello\ndate: 2024-05-01\ntags: [a, b]\nlang: zh\n---\nBody.\n";
        let p = from_source("blog/hello.md", text, &opts(DEFAULT_PERMALINK, &f))
            .unwrap()
            .unwrap();
        assert_eq!(p.title, "Hello");
        assert_eq!(p.url, "https://ex.org/blog/hello/");
        assert_eq!(p.date.as_deref(), Some("2024-05-01"));
        assert_eq!(p.keywords, vec!["a", "b"]);
        assert_eq!(p.lang.as_deref(), Some("zh"));
        assert_eq!(p.content, "Body.");
        let p = from_source(
            "blog/hello.md",
            text,
            &opts("/{year}/{month}/{day}/{slug}.html", &f),
        )
        .unwrap()
        .unwrap();
        assert_eq!(p.url, "https://ex.org/2024/05/01/hello.html");
    }

    #[test]
    fn permalink_and_slug_override_the_path_and_index_files_name_their_directory() {
        let f = Filter::default();
        let o = opts(DEFAULT_PERMALINK, &f);
        let p = from_source("a.md", "---\npermalink: /custom/x/\n---\nt", &o)
            .unwrap()
            .unwrap();
        assert_eq!(p.url, "https://ex.org/custom/x/");
        let p = from_source(
            "a.md",
            "+++\nslug = 'nice'\n+++\nt",
            &opts("/{section}/{slug}/", &f),
        )
        .unwrap()
        .unwrap();
        assert_eq!(p.url, "https://ex.org/nice/");
        let p = from_source("docs/_index.md", "# Docs home\n", &o)
            .unwrap()
            .unwrap();
        assert_eq!(
            (p.url.as_str(), p.title.as_str()),
            ("https://ex.org/docs/", "Docs home")
        );
        let p = from_source("index.md", "text", &o).unwrap().unwrap();
        assert_eq!(
            (p.url.as_str(), p.title.as_str()),
            ("https://ex.org/", "index")
        );
        // A pattern naming files: an index file is its folder's `index.html`.
        let files = opts("/{path}.html", &f);
        for (rel, url) in [
            ("index.md", "https://ex.org/index.html"),
            ("guide/README.md", "https://ex.org/guide/index.html"),
            ("guide/_index.md", "https://ex.org/guide/index.html"),
            ("guide/setup.md", "https://ex.org/guide/setup.html"),
        ] {
            assert_eq!(from_source(rel, "text", &files).unwrap().unwrap().url, url);
        }
    }

    #[test]
    fn comments_and_link_definitions_are_not_indexed_but_code_showing_them_is() {
        let f = Filter::default();
        let text = "# Files\n\n<!-- YAML\nadded: v0.1.0\n-->\n\nRead [a file][read] here. \
                    <!-- inline note -->Then close it.\n\n`<!-- kept -->`\n\n\
                    ```html\n<!-- shown in code -->\n```\n\n[read]: streams.md \"Reading\"\n";
        let p = from_source("fs.md", text, &opts(DEFAULT_PERMALINK, &f))
            .unwrap()
            .unwrap();
        assert_eq!(
            p.content,
            "# Files\n\n\n\nRead [a file][read] here. Then close it.\n\n`<!-- kept -->`\n\n\
             ```html\n<!-- shown in code -->\n```"
        );
        // The link is still read, through its definition.
        assert_eq!(p.links.len(), 1);
        let plain = "# T\n\nNo comment here.";
        assert_eq!(shown(plain), plain);
    }

    #[test]
    fn a_source_is_measured_off_its_html_unless_nested_past_the_parsers_bound() {
        let s = structure("# Contents\n\n- [one](one.md)\n- [two](two.md)\n").unwrap();
        assert_eq!((s.links, s.source), (2, true));
        let deep = format!(
            "{} too deep\n",
            ">".repeat(super::super::html_bounds::MAX_DEPTH + 1)
        );
        assert_eq!(structure(&deep), None);
        let page = from_source(
            "deep.md",
            &deep,
            &opts(DEFAULT_PERMALINK, &Filter::default()),
        )
        .unwrap()
        .unwrap();
        assert!(page.structure.is_none() && page.content.contains("too deep"));
    }

    #[test]
    fn drafts_are_skipped_and_bad_front_matter_is_reported() {
        let f = Filter::default();
        let o = opts(DEFAULT_PERMALINK, &f);
        assert_eq!(
            from_source("d.md", "---\ndraft: true\n---\nx", &o).unwrap(),
            None
        );
        assert_eq!(
            from_source("d.md", "+++\ndraft = true\n+++\nx", &o).unwrap(),
            None
        );
        assert_eq!(
            from_source("d.md", "---\npublished: false\n---\nx", &o).unwrap(),
            None
        );
        assert!(from_source("d.md", "---\ntitle: [\n---\nx", &o).is_err());
    }
}
