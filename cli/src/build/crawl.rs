//! Crawling a live site from its sitemap: same origin only, robots.txt honoured, one
//! request at a time with a delay between them, at most `max_pages` pages, and
//! conditional requests (`If-None-Match`/`If-Modified-Since`) against the crawl cache so
//! an unchanged page costs a 304 and no download.

use std::collections::HashSet;
use std::path::Path;
use std::time::Duration;

use reqwest::header::{CONTENT_TYPE, ETAG, IF_MODIFIED_SINCE, IF_NONE_MATCH, LAST_MODIFIED};
use reqwest::{Client, StatusCode, Url};

use super::cache::{Cache, Cached};
use super::glob::Filter;
use super::html;
use super::page::Page;
use super::robots::{Robots, AGENT};
use super::site::origin;
use super::sitemap::{self, Sitemap};
use super::Report;

/// Largest response body read (a page, a sitemap or robots.txt).
const MAX_BODY_BYTES: usize = 5 * 1024 * 1024;
/// Time allowed for each request.
const TIMEOUT: Duration = Duration::from_secs(30);
/// Longest `Crawl-delay` honoured; a site asking more is crawled at this pace.
const MAX_CRAWL_DELAY: Duration = Duration::from_secs(30);
/// Most sitemaps followed from a sitemap index.
const MAX_SITEMAPS: usize = 50;
/// Most bytes of sitemaps read in one crawl (50 sitemaps of 5 MiB would be 250 MiB).
const MAX_SITEMAP_BYTES: usize = 20 << 20;

/// How to crawl.
pub(crate) struct CrawlOptions<'a> {
    /// The sitemap URL to start from.
    pub(crate) url: &'a str,
    /// Include/exclude patterns over URL paths.
    pub(crate) filter: &'a Filter,
    /// At most this many pages.
    pub(crate) max_pages: usize,
    /// Least time between two requests.
    pub(crate) delay: Duration,
    /// The crawl cache (ETags and Last-Modified of the last crawl): read for conditional
    /// requests, rewritten after.
    pub(crate) cache: &'a Path,
}

/// Crawls the site; returns its pages, in sitemap order.
pub(crate) fn crawl(opts: &CrawlOptions<'_>, report: &mut Report) -> Result<Vec<Page>, String> {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| format!("cannot start the HTTP runtime: {e}"))?;
    runtime.block_on(run(opts, report))
}

async fn run(opts: &CrawlOptions<'_>, report: &mut Report) -> Result<Vec<Page>, String> {
    let start = Url::parse(opts.url).map_err(|e| format!("--url {:?}: {e}", opts.url))?;
    if !matches!(start.scheme(), "http" | "https") {
        return Err(format!("--url {:?}: must be an http(s) URL", opts.url));
    }
    let home = start.origin().ascii_serialization();
    let client = client(home.clone())?;
    let mut crawler = Crawler {
        client,
        delay: opts.delay,
        first: true,
    };

    let robots = crawler.robots(&home).await?;
    if let Some(secs) = robots.crawl_delay {
        let asked = Duration::from_secs_f64(secs).min(MAX_CRAWL_DELAY);
        crawler.delay = crawler.delay.max(asked);
    }

    let mut wanted = Wanted {
        home: &home,
        robots: &robots,
        opts,
        seen: HashSet::new(),
        urls: Vec::new(),
        off_site: 0,
        not_urls: 0,
    };
    crawler.sitemap_urls(&start, &mut wanted, report).await?;
    if wanted.off_site > 0 {
        report.warn(format!(
            "sitemap: {} URLs on other hosts, left out",
            wanted.off_site
        ));
    }
    if wanted.not_urls > 0 {
        report.warn(format!("sitemap: {} entries are not URLs", wanted.not_urls));
    }
    let wanted = wanted.urls;

    let old = Cache::load(opts.cache);
    let mut cache = Cache::default();
    let mut pages = super::claims::Claims::default();
    let (mut fetched, mut unchanged) = (0usize, 0usize);
    let mut failed: Option<String> = None;
    for url in wanted {
        let cached = old.pages.get(&url);
        match crawler.page(&url, cached).await {
            Ok(Fetch::NotModified) => {
                if let Some(c) = cached {
                    unchanged += 1;
                    pages.add(&url, c.page.clone(), report);
                    cache.pages.insert(url, c.clone());
                }
            }
            Ok(Fetch::Page(entry)) => {
                fetched += 1;
                pages.add(&url, entry.page.clone(), report);
                cache.pages.insert(url, *entry);
            }
            Ok(Fetch::Gone(why)) => report.warn(format!("{url}: {why}, left out")),
            Err(why) => match cached {
                // A server hiccup must not drop a page from the knowledge base.
                Some(c) => {
                    report.warn(format!("{url}: {why}; kept the cached version"));
                    pages.add(&url, c.page.clone(), report);
                    cache.pages.insert(url, c.clone());
                }
                // One bad page (an off-site redirect, a body over 5 MiB, a redirect
                // loop) costs that page, not the crawl.
                None => {
                    report.warn(format!("{url}: {why}, left out"));
                    failed.get_or_insert(format!("{url}: {why}"));
                }
            },
        }
    }
    // Every page failing is the site, not a page: nothing is written.
    if let (0, Some(first)) = (pages.len(), failed) {
        return Err(format!("no page could be fetched; the first: {first}"));
    }
    cache.save(opts.cache)?;
    report.note(format!(
        "crawled {}: {fetched} fetched, {unchanged} not modified",
        opts.url
    ));
    Ok(pages.into_pages())
}

fn client(home: String) -> Result<Client, String> {
    // Redirects stay on the site: a redirect elsewhere is not followed (it shows as an
    // error for that page).
    let policy = reqwest::redirect::Policy::custom(move |attempt| {
        if attempt.previous().len() >= 5 || attempt.url().origin().ascii_serialization() != home {
            attempt.stop()
        } else {
            attempt.follow()
        }
    });
    Client::builder()
        .user_agent(format!("{AGENT}/{}", env!("CARGO_PKG_VERSION")))
        .timeout(TIMEOUT)
        .redirect(policy)
        .build()
        .map_err(|e| format!("cannot build the HTTP client: {e}"))
}

fn path_and_query(u: &Url) -> String {
    match u.query() {
        Some(q) => format!("{}?{q}", u.path()),
        None => u.path().to_owned(),
    }
}

/// The pages a crawl will fetch, chosen as the sitemaps are read.
struct Wanted<'a> {
    home: &'a str,
    robots: &'a Robots,
    opts: &'a CrawlOptions<'a>,
    seen: HashSet<String>,
    urls: Vec<String>,
    /// URLs on other hosts (counted, reported once).
    off_site: usize,
    /// Entries that are not URLs (counted, reported once).
    not_urls: usize,
}

impl Wanted<'_> {
    /// Takes `url` if the crawl should fetch it; `false` once `max_pages` are taken and
    /// another is offered (nothing more needs reading).
    fn offer(&mut self, url: String, report: &mut Report) -> bool {
        let Ok(u) = Url::parse(&url) else {
            self.not_urls += 1;
            return true;
        };
        if u.origin().ascii_serialization() != self.home {
            self.off_site += 1;
            return true;
        }
        if !self.robots.allows(&path_and_query(&u)) {
            report.note(format!("robots.txt disallows {}", u.path()));
            return true;
        }
        if !self.opts.filter.allows(u.path()) || self.seen.contains(&url) {
            return true;
        }
        if self.urls.len() >= self.opts.max_pages {
            return false;
        }
        self.seen.insert(url.clone());
        self.urls.push(url);
        true
    }
}

/// The outcome of fetching one page.
enum Fetch {
    /// 304: the cached page is current.
    NotModified,
    /// A new or changed page.
    Page(Box<Cached>),
    /// The page is gone or is not an indexable HTML page.
    Gone(String),
}

struct Crawler {
    client: Client,
    delay: Duration,
    first: bool,
}

impl Crawler {
    /// Waits out the delay since the previous request (none before the first).
    async fn pace(&mut self) {
        if !self.first {
            tokio::time::sleep(self.delay).await;
        }
        self.first = false;
    }

    /// robots.txt: a 4xx means no rules; a 5xx or no answer means the site cannot say
    /// what is allowed, so nothing is crawled (RFC 9309 §2.3.1.4).
    async fn robots(&mut self, home: &str) -> Result<Robots, String> {
        self.pace().await;
        let url = format!("{home}/robots.txt");
        let resp = self
            .client
            .get(&url)
            .send()
            .await
            .map_err(|e| format!("{url}: {e}"))?;
        let status = resp.status();
        if status.is_client_error() {
            return Ok(Robots::default());
        }
        if !status.is_success() {
            return Err(format!("{url}: HTTP {status}; not crawling without it"));
        }
        Ok(Robots::parse(&body(resp).await?))
    }

    /// Reads the sitemap (and the sitemaps an index names) into `wanted`, until it holds
    /// `max_pages` URLs or [`MAX_SITEMAP_BYTES`] of sitemaps were read: a sitemap index
    /// fanning out to 50 sitemaps of 5 MiB is not collected whole (21 million URLs, 2 GB)
    /// to keep the first few.
    async fn sitemap_urls(
        &mut self,
        start: &Url,
        wanted: &mut Wanted<'_>,
        report: &mut Report,
    ) -> Result<(), String> {
        let mut queue = vec![start.to_string()];
        let mut visited = 0;
        let mut read = 0usize;
        while !queue.is_empty() {
            let map = queue.remove(0);
            visited += 1;
            if visited > MAX_SITEMAPS {
                report.warn(format!("followed {MAX_SITEMAPS} sitemaps, left the rest"));
                break;
            }
            if read > MAX_SITEMAP_BYTES {
                report.warn(format!(
                    "read {} MiB of sitemaps, left the rest",
                    MAX_SITEMAP_BYTES >> 20
                ));
                break;
            }
            self.pace().await;
            let resp = self
                .client
                .get(&map)
                .send()
                .await
                .map_err(|e| format!("{map}: {e}"))?;
            if !resp.status().is_success() {
                return Err(format!("{map}: HTTP {}", resp.status()));
            }
            let xml = body(resp).await?;
            read += xml.len();
            if !xml.contains("<urlset") && !xml.contains("<sitemapindex") {
                return Err(format!(
                    "{map}: not a sitemap (no <urlset> or <sitemapindex>)"
                ));
            }
            match sitemap::parse(&xml) {
                Sitemap::Pages(urls) => {
                    for url in urls {
                        if !wanted.offer(url, report) {
                            report.warn(format!(
                                "stopped at {} pages (max_pages)",
                                wanted.opts.max_pages
                            ));
                            return Ok(());
                        }
                    }
                }
                Sitemap::Index(maps) => {
                    for m in maps {
                        let allowed = Url::parse(&m).is_ok_and(|u| {
                            origin(&m).as_deref() == Some(wanted.home)
                                && wanted.robots.allows(&path_and_query(&u))
                        });
                        if allowed {
                            queue.push(m);
                        } else {
                            report.warn(format!("sitemap {m} is off the site or disallowed"));
                        }
                    }
                }
            }
        }
        Ok(())
    }

    /// One page, conditional on the cached version's validators.
    async fn page(&mut self, url: &str, cached: Option<&Cached>) -> Result<Fetch, String> {
        self.pace().await;
        let mut req = self.client.get(url);
        if let Some(c) = cached {
            if let Some(etag) = &c.etag {
                req = req.header(IF_NONE_MATCH, etag);
            }
            if let Some(lm) = &c.last_modified {
                req = req.header(IF_MODIFIED_SINCE, lm);
            }
        }
        let resp = req.send().await.map_err(|e| e.to_string())?;
        let status = resp.status();
        if status == StatusCode::NOT_MODIFIED && cached.is_some() {
            return Ok(Fetch::NotModified);
        }
        if matches!(status, StatusCode::NOT_FOUND | StatusCode::GONE) {
            return Ok(Fetch::Gone(format!("HTTP {status}")));
        }
        if !status.is_success() {
            return Err(format!("HTTP {status}"));
        }
        let header = |name| {
            resp.headers()
                .get(name)
                .and_then(|v: &reqwest::header::HeaderValue| v.to_str().ok())
                .map(str::to_owned)
        };
        let (etag, last_modified) = (header(ETAG), header(LAST_MODIFIED));
        let is_html = header(CONTENT_TYPE).is_none_or(|t| t.contains("html"));
        if !is_html {
            return Ok(Fetch::Gone("not HTML".to_owned()));
        }
        let text = body(resp).await?;
        if let Err(why) = super::html_bounds::check(&text) {
            return Ok(Fetch::Gone(why));
        }
        match html::extract(&text, url) {
            Ok(page) => Ok(Fetch::Page(Box::new(Cached {
                etag,
                last_modified,
                page,
            }))),
            Err(skip) => Ok(Fetch::Gone(format!("{skip:?}"))),
        }
    }
}

/// A response body as text, refused past [`MAX_BODY_BYTES`].
async fn body(mut resp: reqwest::Response) -> Result<String, String> {
    let url = resp.url().to_string();
    let mut bytes = Vec::new();
    while let Some(chunk) = resp.chunk().await.map_err(|e| format!("{url}: {e}"))? {
        if bytes.len() + chunk.len() > MAX_BODY_BYTES {
            return Err(format!("{url}: larger than 5 MiB"));
        }
        bytes.extend_from_slice(&chunk);
    }
    Ok(String::from_utf8_lossy(&bytes).into_owned())
}
