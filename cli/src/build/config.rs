//! `rag.toml` and the command line: every option can live in the file (so CI runs a bare
//! `rag build`), and a flag overrides the file. Paths in the file are relative to the
//! file's directory; paths on the command line to the working directory.

use std::path::{Path, PathBuf};
use std::time::Duration;

use serde::Deserialize;

use super::markdown::DEFAULT_PERMALINK;

/// Default page limit for a site directory: above the largest documentation sites measured
/// (Rust's standard library docs keep ~20,000 of their 32,101 files, and read in 18 s at
/// 323 MB peak), so a local build takes the whole site unless told otherwise.
pub(crate) const DEFAULT_SITE_MAX_PAGES: usize = 50_000;
/// Default page limit for a crawl, which costs the site's server a request per page.
pub(crate) const DEFAULT_CRAWL_MAX_PAGES: usize = 10_000;
/// Default pause between two requests of a crawl.
pub(crate) const DEFAULT_DELAY_MS: u64 = 250;

/// The options of `rag build` (flags; each overrides the same key in `rag.toml`).
#[derive(Debug, Default, clap::Args)]
pub(crate) struct BuildArgs {
    /// Config file (default: ./rag.toml when it exists).
    #[arg(long)]
    pub(crate) config: Option<PathBuf>,
    /// Where to write the knowledge base (default: knowledge_base.json).
    #[arg(long, short = 'o')]
    pub(crate) out: Option<PathBuf>,
    /// The site's public base URL, e.g. <https://example.org/>.
    #[arg(long)]
    pub(crate) base_url: Option<String>,
    /// A built site directory (Hugo public/, Jekyll _site/, MkDocs site/, ...).
    #[arg(long)]
    pub(crate) site: Option<PathBuf>,
    /// Read every HTML file of --site even when it has a sitemap.xml.
    #[arg(long)]
    pub(crate) no_sitemap: bool,
    /// Keep generator noise (link indexes, search pages, source listings, stubs,
    /// print-all pages) and near-duplicate pages instead of leaving them out.
    #[arg(long)]
    pub(crate) keep_all: bool,
    /// A directory of Markdown sources with front matter.
    #[arg(long)]
    pub(crate) markdown: Option<PathBuf>,
    /// URL pattern for Markdown pages: {path}, {slug}, {section}, {year}, {month}, {day}.
    #[arg(long)]
    pub(crate) permalink: Option<String>,
    /// Crawl a live site from its sitemap (https://site/sitemap.xml).
    #[arg(long)]
    pub(crate) url: Option<String>,
    /// Most pages read from a site directory (default 50000) or a crawl (default 10000).
    #[arg(long)]
    pub(crate) max_pages: Option<usize>,
    /// Milliseconds between two requests of a crawl.
    #[arg(long)]
    pub(crate) delay_ms: Option<u64>,
    /// BibTeX file(s) of publications (repeatable).
    #[arg(long)]
    pub(crate) bib: Vec<PathBuf>,
    /// The BibTeX field holding a code link (default: code).
    #[arg(long)]
    pub(crate) code_field: Option<String>,
    /// Hand-kept knowledge-base JSON merged last (repeatable).
    #[arg(long)]
    pub(crate) json: Vec<PathBuf>,
    /// Only pages whose URL path matches (repeatable glob: /blog/**).
    #[arg(long)]
    pub(crate) include: Vec<String>,
    /// Leave out pages whose URL path matches (repeatable glob: /tags/**).
    #[arg(long)]
    pub(crate) exclude: Vec<String>,
    /// Do not write llms.txt and llms-full.txt next to the knowledge base.
    #[arg(long)]
    pub(crate) no_llms_txt: bool,
    /// The site's name, the H1 of llms.txt (default: the home page's title).
    #[arg(long)]
    pub(crate) site_name: Option<String>,
    /// One-line summary of the site for llms.txt (default: the home page's description).
    #[arg(long)]
    pub(crate) site_summary: Option<String>,
    /// Threads extracting pages (default: one per core).
    #[arg(long, short = 'j')]
    pub(crate) jobs: Option<usize>,
    /// Neither read nor write the build cache (.rag-build-cache next to the output).
    #[arg(long)]
    pub(crate) no_cache: bool,
}

/// `rag.toml` as written.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct File {
    output: Option<PathBuf>,
    base_url: Option<String>,
    site: Option<PathBuf>,
    sitemap: Option<bool>,
    markdown: Option<PathBuf>,
    permalink: Option<String>,
    url: Option<String>,
    max_pages: Option<usize>,
    delay_ms: Option<u64>,
    #[serde(default)]
    bib: Vec<PathBuf>,
    code_field: Option<String>,
    #[serde(default)]
    json: Vec<PathBuf>,
    #[serde(default)]
    include: Vec<String>,
    #[serde(default)]
    exclude: Vec<String>,
    cache: Option<PathBuf>,
    keep_all: Option<bool>,
    llms_txt: Option<bool>,
    site_name: Option<String>,
    site_summary: Option<String>,
    jobs: Option<usize>,
    build_cache: Option<bool>,
}

/// Every option resolved: the file's values, overridden by flags, defaults filled in.
#[derive(Debug)]
pub(crate) struct Settings {
    /// Output file.
    pub(crate) output: PathBuf,
    /// Base URL (needed for site and Markdown pages).
    pub(crate) base_url: Option<String>,
    /// Built site directory.
    pub(crate) site: Option<PathBuf>,
    /// Whether to use the site's sitemap.xml.
    pub(crate) sitemap: bool,
    /// Markdown source directory.
    pub(crate) markdown: Option<PathBuf>,
    /// Markdown URL pattern.
    pub(crate) permalink: String,
    /// Sitemap URL to crawl.
    pub(crate) url: Option<String>,
    /// Page limit the owner set, for a site directory and a crawl alike; each has its own
    /// default ([`Settings::site_max_pages`], [`Settings::crawl_max_pages`]).
    pub(crate) max_pages: Option<usize>,
    /// Pause between requests.
    pub(crate) delay: Duration,
    /// BibTeX files.
    pub(crate) bib: Vec<PathBuf>,
    /// BibTeX field holding the code link.
    pub(crate) code_field: String,
    /// Hand-kept JSON files.
    pub(crate) json: Vec<PathBuf>,
    /// Include globs.
    pub(crate) include: Vec<String>,
    /// Exclude globs.
    pub(crate) exclude: Vec<String>,
    /// Crawl cache file.
    pub(crate) cache: PathBuf,
    /// Keep generator noise and near-duplicates.
    pub(crate) keep_all: bool,
    /// Whether to write `llms.txt` and `llms-full.txt` next to the output.
    pub(crate) llms_txt: bool,
    /// The site's name for `llms.txt`.
    pub(crate) site_name: Option<String>,
    /// The site's summary for `llms.txt`.
    pub(crate) site_summary: Option<String>,
    /// Threads extracting pages.
    pub(crate) jobs: usize,
    /// Whether to read and write the build cache.
    pub(crate) build_cache: bool,
}

impl Settings {
    /// Reads the config file (the named one, else `./rag.toml` if present) and applies
    /// the flags over it.
    pub(crate) fn resolve(args: BuildArgs) -> Result<Self, String> {
        let (file, dir) = match &args.config {
            Some(path) => (read(path)?, parent(path)),
            None if Path::new("rag.toml").is_file() => {
                (read(Path::new("rag.toml"))?, PathBuf::from("."))
            }
            None => (File::default(), PathBuf::from(".")),
        };
        let rel = |p: PathBuf| if p.is_absolute() { p } else { dir.join(p) };
        let output = args
            .out
            .or_else(|| file.output.map(rel))
            .unwrap_or_else(|| PathBuf::from("knowledge_base.json"));
        let cache = file
            .cache
            .map(rel)
            .unwrap_or_else(|| parent(&output).join(".rag-cache.json"));
        // Repeatable flags replace the file's list rather than add to it, like every
        // other flag.
        let list = |flags: Vec<PathBuf>, from_file: Vec<PathBuf>| {
            if flags.is_empty() {
                from_file.into_iter().map(rel).collect()
            } else {
                flags
            }
        };
        let globs = |flags: Vec<String>, from_file: Vec<String>| {
            if flags.is_empty() {
                from_file
            } else {
                flags
            }
        };
        let settings = Self {
            output,
            base_url: args.base_url.or(file.base_url),
            site: args.site.or_else(|| file.site.map(rel)),
            sitemap: !args.no_sitemap && file.sitemap.unwrap_or(true),
            markdown: args.markdown.or_else(|| file.markdown.map(rel)),
            permalink: args
                .permalink
                .or(file.permalink)
                .unwrap_or_else(|| DEFAULT_PERMALINK.to_owned()),
            url: args.url.or(file.url),
            max_pages: args.max_pages.or(file.max_pages),
            delay: Duration::from_millis(
                args.delay_ms.or(file.delay_ms).unwrap_or(DEFAULT_DELAY_MS),
            ),
            bib: list(args.bib, file.bib),
            code_field: args
                .code_field
                .or(file.code_field)
                .unwrap_or_else(|| "code".to_owned()),
            json: list(args.json, file.json),
            include: globs(args.include, file.include),
            exclude: globs(args.exclude, file.exclude),
            cache,
            keep_all: args.keep_all || file.keep_all.unwrap_or(false),
            llms_txt: !args.no_llms_txt && file.llms_txt.unwrap_or(true),
            site_name: args.site_name.or(file.site_name),
            site_summary: args.site_summary.or(file.site_summary),
            jobs: args
                .jobs
                .or(file.jobs)
                .unwrap_or_else(super::parallel::default_jobs),
            build_cache: !args.no_cache && file.build_cache.unwrap_or(true),
        };
        settings.check()?;
        Ok(settings)
    }

    /// Most pages read from a site directory.
    pub(crate) fn site_max_pages(&self) -> usize {
        self.max_pages.unwrap_or(DEFAULT_SITE_MAX_PAGES)
    }

    /// Most pages fetched by a crawl.
    pub(crate) fn crawl_max_pages(&self) -> usize {
        self.max_pages.unwrap_or(DEFAULT_CRAWL_MAX_PAGES)
    }

    fn check(&self) -> Result<(), String> {
        if self.site.is_none()
            && self.markdown.is_none()
            && self.url.is_none()
            && self.bib.is_empty()
            && self.json.is_empty()
        {
            return Err(
                "nothing to build from: give --site, --markdown, --url, --bib or --json \
                        (or set them in rag.toml)"
                    .to_owned(),
            );
        }
        if (self.site.is_some() || self.markdown.is_some()) && self.base_url.is_none() {
            return Err(
                "--site and --markdown need the site's base URL: --base-url \
                        https://example.org/ (or base_url in rag.toml)"
                    .to_owned(),
            );
        }
        if let Some(base) = &self.base_url {
            let ok = reqwest::Url::parse(base)
                .is_ok_and(|u| matches!(u.scheme(), "http" | "https") && u.host().is_some());
            if !ok {
                return Err(format!("base_url {base:?} must be an absolute http(s) URL"));
            }
        }
        if self.max_pages == Some(0) {
            return Err("max_pages must be at least 1".to_owned());
        }
        if self.jobs == 0 {
            return Err("jobs must be at least 1".to_owned());
        }
        Ok(())
    }
}

fn read(path: &Path) -> Result<File, String> {
    let text = std::fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))?;
    toml::from_str(&text).map_err(|e| format!("{}: {e}", path.display()))
}

/// A file's directory (`.` for a bare file name).
fn parent(path: &Path) -> PathBuf {
    match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
        _ => PathBuf::from("."),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scratch::Scratch;

    /// `rag.toml` holding `text` in a scratch folder of its own (kept while the guard is).
    fn write_config(name: &str, text: &str) -> (Scratch, PathBuf) {
        let dir = Scratch::new("rag-config", name);
        let path = dir.file("rag.toml", text);
        (dir, path)
    }

    #[test]
    fn the_file_sets_options_relative_to_itself_and_flags_override() {
        let (_dir, path) = write_config(
            "override",
            "output = 'out/kb.json'\nbase_url = 'https://ex.org/'\nsite = 'public'\nbib = ['pubs.bib']\nexclude = ['/tags/**']\nmax_pages = 5\nsite_name = 'Ex'\njobs = 3\nbuild_cache = false\n",
        );
        let dir = path.parent().unwrap().to_path_buf();
        let s = Settings::resolve(BuildArgs {
            config: Some(path.clone()),
            ..BuildArgs::default()
        })
        .unwrap();
        assert_eq!(s.output, dir.join("out/kb.json"));
        assert_eq!(s.site, Some(dir.join("public")));
        assert_eq!(s.bib, vec![dir.join("pubs.bib")]);
        assert_eq!(s.cache, dir.join("out/.rag-cache.json"));
        assert_eq!(s.exclude, vec!["/tags/**"]);
        assert_eq!(s.max_pages, Some(5));
        assert_eq!((s.site_max_pages(), s.crawl_max_pages()), (5, 5));
        assert!(s.sitemap);
        assert!(s.llms_txt);
        assert_eq!(s.site_name.as_deref(), Some("Ex"));
        assert_eq!(s.jobs, 3);
        assert!(!s.build_cache);

        let s = Settings::resolve(BuildArgs {
            config: Some(path),
            out: Some("elsewhere.json".into()),
            max_pages: Some(7),
            bib: vec!["other.bib".into()],
            no_sitemap: true,
            no_llms_txt: true,
            site_name: Some("Flag".into()),
            jobs: Some(1),
            ..BuildArgs::default()
        })
        .unwrap();
        assert_eq!(s.output, PathBuf::from("elsewhere.json"));
        assert_eq!(s.max_pages, Some(7));
        assert_eq!(s.bib, vec![PathBuf::from("other.bib")]);
        assert!(!s.sitemap);
        assert!(!s.llms_txt);
        assert_eq!(s.site_name.as_deref(), Some("Flag"));
        assert_eq!(s.jobs, 1);
    }

    #[test]
    fn a_site_directory_reads_more_pages_by_default_than_a_crawl_fetches() {
        let (_dir, path) = write_config(
            "defaults",
            "site = 'public'\nbase_url = 'https://ex.org/'\n",
        );
        let s = Settings::resolve(BuildArgs {
            config: Some(path),
            ..BuildArgs::default()
        })
        .unwrap();
        assert_eq!(s.max_pages, None);
        assert_eq!(s.site_max_pages(), DEFAULT_SITE_MAX_PAGES);
        assert_eq!(s.crawl_max_pages(), DEFAULT_CRAWL_MAX_PAGES);
        assert!(s.site_max_pages() > s.crawl_max_pages());
    }

    #[test]
    fn unknown_keys_missing_sources_and_a_missing_base_url_are_errors() {
        let (_dir, path) = write_config("unknown", "outptu = 'x'\n");
        let err = Settings::resolve(BuildArgs {
            config: Some(path),
            ..BuildArgs::default()
        })
        .unwrap_err();
        assert!(err.contains("outptu"), "{err}");

        let (_dir, path) = write_config("empty", "");
        let err = Settings::resolve(BuildArgs {
            config: Some(path.clone()),
            ..BuildArgs::default()
        })
        .unwrap_err();
        assert!(err.contains("nothing to build from"), "{err}");

        let err = Settings::resolve(BuildArgs {
            config: Some(path.clone()),
            site: Some("public".into()),
            ..BuildArgs::default()
        })
        .unwrap_err();
        assert!(err.contains("base URL"), "{err}");

        let err = Settings::resolve(BuildArgs {
            config: Some(path),
            site: Some("public".into()),
            base_url: Some("example.org".into()),
            ..BuildArgs::default()
        })
        .unwrap_err();
        assert!(err.contains("absolute"), "{err}");
    }
}
