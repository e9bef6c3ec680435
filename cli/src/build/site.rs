//! A built site directory (Hugo's `public/`, Jekyll's `_site/`, MkDocs' `site/`, ...):
//! the pages its `sitemap.xml` lists, or every HTML file when it has none.

use std::ops::ControlFlow;
use std::path::{Path, PathBuf};

use super::extract_cache::{self, BuildCache, Extracted, Line, Previous};
use super::glob::Filter;
use super::html::{self, Skip};
use super::noise::Noise;
use super::page::{join_url, url_path, Page};
use super::parallel;
use super::progress::Progress;
use super::sitemap::{self, Sitemap};
use super::Report;

/// Largest HTML file read; a bigger one is reported and left out.
const MAX_FILE_BYTES: u64 = 10 * 1024 * 1024;

/// How to read a built site.
pub(crate) struct SiteOptions<'a> {
    /// The built site's root (`--site`): its HTML files, and `sitemap.xml` if any.
    pub(crate) dir: &'a Path,
    /// The site's base URL (what URLs in the sitemap start with).
    pub(crate) base_url: &'a str,
    /// Use `sitemap.xml` when the directory has one.
    pub(crate) use_sitemap: bool,
    /// Include/exclude patterns over URL paths.
    pub(crate) filter: &'a Filter,
    /// At most this many pages.
    pub(crate) max_pages: usize,
    /// Threads extracting pages.
    pub(crate) jobs: usize,
}

/// One file read (on any thread).
enum Read<'c> {
    /// Over the size limit: not read.
    TooLarge(PathBuf),
    /// Could not be read: the build stops.
    Failed(String),
    /// Extracted (or reused from the cache).
    Done {
        file: PathBuf,
        url: String,
        out: Extracted,
        line: Option<Line<'c>>,
    },
}

/// A page made on another thread, copied onto this one. The allocator gives each thread
/// its own heap and hands memory back to the system only where nothing in it is live:
/// pages left in the threads' heaps keep the parses' freed memory around them (a cached
/// rebuild of the JDK docs peaked at 244 MB without the copy, 193 MB with it).
pub(crate) fn kept(page: Page) -> Page {
    page.clone()
}

/// Reads and extracts one file of the site directory `dir`, found at `url`.
fn read_one<'c>(dir: &Path, file: PathBuf, url: String, previous: &'c Previous) -> Read<'c> {
    let size = std::fs::metadata(&file).map(|m| m.len()).unwrap_or(0);
    if size > MAX_FILE_BYTES {
        return Read::TooLarge(file);
    }
    let bytes = match std::fs::read(&file) {
        Ok(b) => b,
        Err(e) => return Read::Failed(format!("{}: {e}", file.display())),
    };
    let rel = file.strip_prefix(dir).unwrap_or(&file).to_string_lossy();
    let key = format!("site:{rel}");
    let (out, line) = previous.extract(key, &bytes, &url, || {
        let text = String::from_utf8_lossy(&bytes);
        if let Err(why) = super::html_bounds::check(&text) {
            return Extracted::Refused(why);
        }
        match html::extract(&text, &url) {
            Ok(mut page) => {
                page.signature = Some(super::dedup::signature(&page));
                Extracted::Page(Box::new(page))
            }
            Err(Skip::Empty) => Extracted::Empty,
            Err(Skip::Redirect) => Extracted::Redirect,
            Err(Skip::NoIndex) => Extracted::NoIndex,
        }
    });
    Read::Done {
        file,
        url,
        out,
        line,
    }
}

/// Reads the site's pages, in sitemap order (or path order).
pub(crate) fn read(
    opts: &SiteOptions<'_>,
    cache: &mut BuildCache,
    report: &mut Report,
) -> Result<Vec<Page>, String> {
    if !opts.dir.is_dir() {
        return Err(format!(
            "site directory {} does not exist",
            opts.dir.display()
        ));
    }
    let sitemap_file = opts.dir.join("sitemap.xml");
    let by_sitemap = opts.use_sitemap && sitemap_file.is_file();
    let files: Vec<(PathBuf, String)> = if by_sitemap {
        from_sitemap(opts, &sitemap_file, report)?
    } else {
        let tree = super::tree::files_with_extensions(opts.dir, &["html", "htm"])
            .map_err(|e| format!("{}: {e}", opts.dir.display()))?;
        if let Some(warning) = tree.links_warning(opts.dir) {
            report.warn(warning);
        }
        tree.files
            .into_iter()
            .filter(|f| f.file_name().is_some_and(|n| n != "404.html"))
            .filter_map(|f| {
                let rel = f
                    .strip_prefix(opts.dir)
                    .ok()?
                    .to_string_lossy()
                    .replace('\\', "/");
                let path = format!("/{}", directory_url(&rel));
                Some((f, join_url(opts.base_url, &path)))
            })
            .collect()
    };
    let mut files: Vec<(PathBuf, String)> = files
        .into_iter()
        .filter(|(_, url)| opts.filter.allows(&url_path(url)))
        .collect();
    if !by_sitemap && files.len() > opts.max_pages {
        shallow_first(&mut files);
    }
    let mut progress = Progress::new("site", files.len());
    let mut pages = super::claims::Claims::default();
    let mut failed = None;
    let mut done = 0;
    let BuildCache { previous, next } = cache;
    let previous = &*previous;
    parallel::in_order(
        files,
        opts.jobs,
        |(file, url)| read_one(opts.dir, file, url, previous),
        |read| {
            done += 1;
            progress.update(done);
            if pages.len() >= opts.max_pages {
                let order = if by_sitemap {
                    "in the sitemap's order"
                } else {
                    "the shallowest first"
                };
                report.warn(format!(
                    "stopped at {} pages (max_pages; read {order}): --max-pages to read more",
                    opts.max_pages
                ));
                return ControlFlow::Break(());
            }
            let (file, url, out) = match read {
                Read::TooLarge(file) => {
                    report.warn(format!("{}: larger than 10 MiB, left out", file.display()));
                    return ControlFlow::Continue(());
                }
                Read::Failed(why) => {
                    failed = Some(why);
                    return ControlFlow::Break(());
                }
                Read::Done {
                    file,
                    url,
                    out,
                    line,
                } => {
                    extract_cache::keep(next, line);
                    (file, url, out)
                }
            };
            match out {
                Extracted::Page(page) if opts.filter.allows(&page.path()) => {
                    pages.add(&url, kept(*page), report);
                }
                Extracted::Empty => {
                    report.warn(format!("{}: no main text, left out", file.display()));
                }
                Extracted::Redirect => report.noise.add(Noise::Redirect, url_path(&url)),
                Extracted::Refused(why) => {
                    report.warn(format!("{}: {why}, left out", file.display()));
                }
                Extracted::Page(_) | Extracted::NoIndex | Extracted::Draft => {}
            }
            ControlFlow::Continue(())
        },
    );
    if let Some(why) = failed {
        return Err(why);
    }
    Ok(pages.into_pages())
}

/// Orders a directory's files by their depth under the root, keeping the walk's path order
/// within a depth:
/// when the page limit cuts a site, it keeps the pages near the root (overviews, guides,
/// module pages) and drops the deepest (one page per API item), rather than every folder
/// that sorts after the first big one (Rust's `core/`, 27,687 files, before `std/`).
fn shallow_first(files: &mut [(PathBuf, String)]) {
    files.sort_by_cached_key(|(_, url)| url_path(url).trim_end_matches('/').matches('/').count());
}

/// Sitemap URLs reported one by one before the rest are only counted.
const SITEMAP_WARNINGS: usize = 10;

/// The files behind the sitemap's URLs (URLs outside the base URL are reported). A sitemap
/// none of whose pages is under the base URL is an error that names the base URL its pages
/// have: the site was built for another address than `--base-url` says.
fn from_sitemap(
    opts: &SiteOptions<'_>,
    file: &Path,
    report: &mut Report,
) -> Result<Vec<(PathBuf, String)>, String> {
    let mut queue = vec![file.to_path_buf()];
    let mut out = Vec::new();
    let mut seen_maps = 0;
    let mut outside: Vec<String> = Vec::new();
    let mut missing = 0;
    let root =
        std::fs::canonicalize(opts.dir).map_err(|e| format!("{}: {e}", opts.dir.display()))?;
    let mut linked_out = 0;
    while let Some(map) = queue.pop() {
        seen_maps += 1;
        if seen_maps > 100 {
            return Err("more than 100 nested sitemaps".to_owned());
        }
        let xml = std::fs::read_to_string(&map).map_err(|e| format!("{}: {e}", map.display()))?;
        let (urls, nested) = match sitemap::parse(&xml) {
            Sitemap::Pages(urls) => (urls, false),
            Sitemap::Index(urls) => (urls, true),
        };
        for url in urls {
            let Some(file) = local_file(opts, &url) else {
                if outside.len() < SITEMAP_WARNINGS {
                    report.warn(format!(
                        "{}: {url} is not under {}",
                        map.display(),
                        opts.base_url
                    ));
                }
                outside.push(url);
                continue;
            };
            if file.exists() && !super::tree::inside(&root, &file) {
                // A symbolic link out of the site: not read (see `tree`).
                linked_out += 1;
                if linked_out <= SITEMAP_WARNINGS {
                    report.warn(format!(
                        "{}: the file for {url} is a link leading outside {}, not read",
                        map.display(),
                        opts.dir.display()
                    ));
                }
                continue;
            }
            if nested {
                queue.push(file);
            } else if file.is_file() {
                out.push((file, url));
            } else {
                missing += 1;
                if missing <= SITEMAP_WARNINGS {
                    report.warn(format!("{}: no file for {url}", map.display()));
                }
            }
        }
    }
    if outside.len() > SITEMAP_WARNINGS {
        report.warn(format!(
            "{}: {} more sitemap URLs are not under {}",
            file.display(),
            outside.len() - SITEMAP_WARNINGS,
            opts.base_url
        ));
    }
    if missing > SITEMAP_WARNINGS {
        report.warn(format!(
            "{}: {} more sitemap URLs have no file",
            file.display(),
            missing - SITEMAP_WARNINGS
        ));
    }
    if out.is_empty() && !outside.is_empty() {
        return Err(format!(
            "{}: none of its {} URLs is under --base-url {}; they are under {}. Give the base \
             URL the site was built for, or --no-sitemap to read every HTML file under {}",
            file.display(),
            outside.len(),
            opts.base_url,
            common_base(&outside),
            opts.base_url
        ));
    }
    Ok(out)
}

/// The longest directory URL every one of `urls` starts with (`https://a.org/docs/x.html`
/// and `https://a.org/docs/y/` → `https://a.org/docs/`).
fn common_base(urls: &[String]) -> &str {
    let Some((first, rest)) = urls.split_first() else {
        return "";
    };
    let mut shared = first.as_str();
    for url in rest {
        let end = shared
            .char_indices()
            .zip(url.chars())
            .find(|((_, a), b)| a != b)
            .map_or(shared.len().min(url.len()), |((i, _), _)| i);
        shared = &shared[..end];
    }
    shared.rfind('/').map_or(shared, |i| &shared[..=i])
}

/// The file serving `url` in the site directory: `a/b/` → `a/b/index.html`,
/// `a/b` → `a/b`, `a/b.html` or `a/b/index.html`.
fn local_file(opts: &SiteOptions<'_>, url: &str) -> Option<PathBuf> {
    let base_path = url_path(opts.base_url);
    let base_origin = origin(opts.base_url)?;
    if origin(url)? != base_origin {
        return None;
    }
    let path = url_path(url);
    let rel = path.strip_prefix(base_path.trim_end_matches('/'))?;
    let rel = percent_decode(rel.trim_start_matches('/'));
    if rel.split('/').any(|s| s == "..") {
        return None;
    }
    let base = opts.dir.join(&rel);
    if rel.is_empty() || rel.ends_with('/') {
        return Some(base.join("index.html"));
    }
    [
        base.clone(),
        base.with_extension("html"),
        base.join("index.html"),
    ]
    .into_iter()
    .find(|f| f.is_file())
    .or(Some(base))
}

/// Scheme, host and port of a URL.
pub(crate) fn origin(url: &str) -> Option<String> {
    let u = reqwest::Url::parse(url).ok()?;
    Some(u.origin().ascii_serialization())
}

/// `%XX` escapes decoded (invalid UTF-8 replaced).
pub(crate) fn percent_decode(text: &str) -> String {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        let hex = |b: u8| (b as char).to_digit(16);
        match (bytes[i], bytes.get(i + 1), bytes.get(i + 2)) {
            (b'%', Some(&h), Some(&l)) if hex(h).is_some() && hex(l).is_some() => {
                out.push((hex(h).unwrap_or(0) * 16 + hex(l).unwrap_or(0)) as u8);
                i += 3;
            }
            (b, _, _) => {
                out.push(b);
                i += 1;
            }
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// The URL path a file is served at: a directory's `index.html` by the directory, any other
/// file by its own name (`sql-createindex.html` is not a directory index).
pub(crate) fn directory_url(rel: &str) -> &str {
    match rel.strip_suffix("index.html") {
        Some(dir) if dir.is_empty() || dir.ends_with('/') => dir,
        _ => rel,
    }
}

#[cfg(test)]
mod tests {
    use std::path::PathBuf;

    use super::{common_base, directory_url, shallow_first};

    #[test]
    fn a_cut_site_keeps_its_shallowest_pages_in_path_order() {
        // As the directory walk gives them: in path order.
        let mut files: Vec<(PathBuf, String)> = [
            "https://a.org/docs/",
            "https://a.org/docs/core/",
            "https://a.org/docs/core/arch/x86/fn.a.html",
            "https://a.org/docs/core/num/",
            "https://a.org/docs/guide.html",
            "https://a.org/docs/std/fs/",
            "https://a.org/docs/std/fs/struct.File.html",
        ]
        .iter()
        .map(|u| (PathBuf::new(), (*u).to_owned()))
        .collect();
        shallow_first(&mut files);
        let urls: Vec<&str> = files.iter().map(|(_, u)| u.as_str()).collect();
        assert_eq!(
            urls,
            [
                "https://a.org/docs/",
                "https://a.org/docs/core/",
                "https://a.org/docs/guide.html",
                "https://a.org/docs/core/num/",
                "https://a.org/docs/std/fs/",
                "https://a.org/docs/std/fs/struct.File.html",
                "https://a.org/docs/core/arch/x86/fn.a.html",
            ]
        );
    }

    #[test]
    fn the_base_of_sitemap_urls_is_their_shared_directory() {
        let urls = |u: &[&str]| u.iter().map(|s| (*s).to_owned()).collect::<Vec<_>>();
        assert_eq!(
            common_base(&urls(&[
                "https://www.mkdocs.org/index.html",
                "https://www.mkdocs.org/about/license.html",
            ])),
            "https://www.mkdocs.org/"
        );
        assert_eq!(
            common_base(&urls(&["https://a.org/docs/x/", "https://a.org/docs/xy/"])),
            "https://a.org/docs/"
        );
        assert_eq!(
            common_base(&urls(&["https://a.org/docs/"])),
            "https://a.org/docs/"
        );
        assert_eq!(
            common_base(&urls(&["https://a.org/é/1", "https://a.org/é/2"])),
            "https://a.org/é/"
        );
        assert_eq!(common_base(&[]), "");
    }

    #[test]
    fn only_a_file_named_index_html_stands_for_its_directory() {
        assert_eq!(directory_url("index.html"), "");
        assert_eq!(directory_url("docs/index.html"), "docs/");
        assert_eq!(
            directory_url("sql-createindex.html"),
            "sql-createindex.html"
        );
        assert_eq!(
            directory_url("docs/partialindex.html"),
            "docs/partialindex.html"
        );
        assert_eq!(directory_url("docs/page.html"), "docs/page.html");
    }
}
