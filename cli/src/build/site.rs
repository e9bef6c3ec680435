//! A built site directory (Hugo's `public/`, Jekyll's `_site/`, MkDocs' `site/`, ...):
//! the pages its `sitemap.xml` lists, or every HTML file when it has none.

use std::path::{Path, PathBuf};

use super::glob::Filter;
use super::html::{self, Skip};
use super::noise::Noise;
use super::page::{join_url, url_path, Page};
use super::sitemap::{self, Sitemap};
use super::Report;

/// Largest HTML file read; a bigger one is reported and left out.
const MAX_FILE_BYTES: u64 = 10 * 1024 * 1024;

/// How to read a built site.
pub(crate) struct SiteOptions<'a> {
    /// The directory.
    pub(crate) dir: &'a Path,
    /// The site's base URL (what URLs in the sitemap start with).
    pub(crate) base_url: &'a str,
    /// Use `sitemap.xml` when the directory has one.
    pub(crate) use_sitemap: bool,
    /// Include/exclude patterns over URL paths.
    pub(crate) filter: &'a Filter,
    /// At most this many pages.
    pub(crate) max_pages: usize,
}

/// Reads the site's pages, in sitemap order (or path order).
pub(crate) fn read(opts: &SiteOptions<'_>, report: &mut Report) -> Result<Vec<Page>, String> {
    if !opts.dir.is_dir() {
        return Err(format!(
            "site directory {} does not exist",
            opts.dir.display()
        ));
    }
    let sitemap_file = opts.dir.join("sitemap.xml");
    let files: Vec<(PathBuf, String)> = if opts.use_sitemap && sitemap_file.is_file() {
        from_sitemap(opts, &sitemap_file, report)?
    } else {
        super::tree::files_with_extensions(opts.dir, &["html", "htm"])
            .map_err(|e| format!("{}: {e}", opts.dir.display()))?
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
    let mut pages = super::claims::Claims::default();
    for (file, url) in files {
        if !opts.filter.allows(&url_path(&url)) {
            continue;
        }
        if pages.len() >= opts.max_pages {
            report.warn(format!("stopped at {} pages (max_pages)", opts.max_pages));
            break;
        }
        let size = std::fs::metadata(&file).map(|m| m.len()).unwrap_or(0);
        if size > MAX_FILE_BYTES {
            report.warn(format!("{}: larger than 10 MiB, left out", file.display()));
            continue;
        }
        let bytes = std::fs::read(&file).map_err(|e| format!("{}: {e}", file.display()))?;
        let text = String::from_utf8_lossy(&bytes);
        if let Err(why) = super::html_bounds::check(&text) {
            report.warn(format!("{}: {why}, left out", file.display()));
            continue;
        }
        match html::extract(&text, &url) {
            Ok(page) if opts.filter.allows(&page.path()) => pages.add(&url, page, report),
            Ok(_) => {}
            Err(Skip::Empty) => report.warn(format!("{}: no main text, left out", file.display())),
            Err(Skip::Redirect) => report.noise.add(Noise::Redirect, url_path(&url)),
            Err(_) => {}
        }
    }
    Ok(pages.into_pages())
}

/// The files behind the sitemap's URLs (URLs outside the base URL are reported).
fn from_sitemap(
    opts: &SiteOptions<'_>,
    file: &Path,
    report: &mut Report,
) -> Result<Vec<(PathBuf, String)>, String> {
    let mut queue = vec![file.to_path_buf()];
    let mut out = Vec::new();
    let mut seen_maps = 0;
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
                report.warn(format!(
                    "{}: {url} is not under {}",
                    map.display(),
                    opts.base_url
                ));
                continue;
            };
            if nested {
                queue.push(file);
            } else if file.is_file() {
                out.push((file, url));
            } else {
                report.warn(format!("{}: no file for {url}", map.display()));
            }
        }
    }
    Ok(out)
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
fn directory_url(rel: &str) -> &str {
    match rel.strip_suffix("index.html") {
        Some(dir) if dir.is_empty() || dir.ends_with('/') => dir,
        _ => rel,
    }
}

#[cfg(test)]
mod tests {
    use super::directory_url;

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
