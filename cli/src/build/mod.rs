//! `rag build`: writes `knowledge_base.json` from what a static site already has.
//!
//! Sources, any mix: a built site directory ([`site`], pages through [`html`]), Markdown
//! with front matter ([`markdown`], [`frontmatter`]), a live site crawled from its sitemap
//! ([`crawl`], [`robots`], [`cache`]), BibTeX ([`bibtex`]), and the owner's hand-kept JSON
//! merged last ([`merge`]). Built HTML may carry Pagefind's markup ([`pagefind`]). Beside
//! the knowledge base go its prebuilt index and, for AI assistants, `llms.txt` and
//! `llms-full.txt` ([`llms`]). Options come from `rag.toml` and flags ([`config`]). Ids are
//! stable ([`ids`]), entries carry a content hash ([`entry`]), and the output is
//! deterministic: the same input writes the same bytes. The result is validated like any
//! knowledge base before it is written; on a problem nothing is written.

mod bibtex;
mod bibtex_bounds;
mod boilerplate;
mod cache;
mod claims;
mod compilations;
mod config;
mod crawl;
mod dedup;
mod entry;
mod extract_cache;
mod frontmatter;
mod glob;
mod html;
mod html_bounds;
mod ids;
mod links;
mod llms;
mod markdown;
mod merge;
mod mirrors;
mod noise;
mod page;
mod pagefind;
mod parallel;
mod progress;
mod releases;
mod robots;
mod site;
mod sitemap;
mod titles;
mod tree;
mod xhtml;

pub(crate) use config::BuildArgs;

use std::path::Path;
use std::process::ExitCode;

use shared::KnowledgeBase;

use crate::out::outln;

use config::Settings;
use glob::Filter;
use merge::{assemble, HandKept, Output};

/// Warnings and notes collected during a build, printed at the end.
#[derive(Debug, Default)]
pub(crate) struct Report {
    warnings: Vec<String>,
    notes: Vec<String>,
    /// Generator noise found, duplicates collapsed, release notes marked.
    noise: noise::Tally,
}

impl Report {
    /// Something the owner should look at (a page left out, a limit reached).
    pub(crate) fn warn(&mut self, message: String) {
        self.warnings.push(message);
    }

    /// Progress worth a line (what a crawl did, a page found twice).
    pub(crate) fn note(&mut self, message: String) {
        self.notes.push(message);
    }
}

/// Runs `rag build`: 0 when the knowledge base was written, 1 on any problem (printed).
pub(crate) fn run(args: BuildArgs) -> ExitCode {
    let mut report = Report::default();
    let result = Settings::resolve(args).and_then(|s| build(&s, &mut report).map(|o| (s, o)));
    for n in &report.notes {
        outln!("{n}");
    }
    for w in &report.warnings {
        eprintln!("warning: {w}");
    }
    match result {
        Ok((settings, counts)) => {
            let sifted = report.noise.summary().map(|s| format!("; {s}"));
            outln!(
                "wrote {} ({counts}{})",
                settings.output.display(),
                sifted.unwrap_or_default()
            );
            ExitCode::SUCCESS
        }
        Err(message) => {
            eprintln!("error: {message}");
            ExitCode::from(1)
        }
    }
}

/// Reads every source, merges, validates and writes; returns what was written (counts).
fn build(s: &Settings, report: &mut Report) -> Result<String, String> {
    let publications = read_bibtex(s)?;
    // An output that is no file (`-o /dev/null` to try a build, a pipe) gets nothing beside
    // it: the index, `llms.txt` and the cache would land in its folder (`/dev`).
    let beside = !is_special(&s.output);
    if !beside {
        report.note(format!(
            "{} is not a regular file: no prebuilt index, llms.txt or build cache written beside it",
            s.output.display()
        ));
    }
    let mut cache = if beside {
        open_cache(s)
    } else {
        extract_cache::BuildCache::off()
    };
    let mut pages = read_pages(s, &mut cache, report)?;
    // The site's chrome (and each folder's) out of the text before the pages are measured
    // against each other.
    boilerplate::strip_by_folder(&mut pages);
    boilerplate::strip_shared_descriptions(&mut pages);
    // A page the chrome removal left empty goes before the titles are settled: its title
    // would otherwise count as another page's (the same chapter in a superseded edition).
    let mut pages = noise::sift_emptied(pages, s.keep_all, &mut report.noise);
    // Titles before noise is measured (a print-all page repeats other pages' titles).
    let site_name = titles::site_name_parts(&pages);
    let retitled = titles::settle(&mut pages);
    if retitled > 0 {
        report.note(format!(
            "{retitled} pages named by their <title>: their <h1>s name sections or the site"
        ));
    }
    let unnamed = titles::drop_site_name(&mut pages, &site_name);
    if unnamed > 0 {
        report.note(format!(
            "{unnamed} titles without the site's name beside them"
        ));
    }
    // Generator noise and duplicates go before the owner's JSON is merged, so an override
    // can still name any page that is kept.
    let mut pages = noise::sift(pages, s.keep_all, &mut report.noise);
    if !s.keep_all {
        let (kept, collapsed) = dedup::collapse(pages, s.jobs);
        pages = kept;
        report.noise.collapsed = collapsed;
    }
    report.noise.release_notes = releases::mark(&mut pages);
    // Among the pages kept, so a link to noise or to a folded duplicate's own URL counts
    // for the page that stands for it, or for none.
    links::count(&mut pages);
    for line in report.noise.examples() {
        report.note(line);
    }
    let hand = s
        .json
        .iter()
        .map(|p| HandKept::read(p))
        .collect::<Result<Vec<_>, _>>()?;
    let output = assemble(publications, pages, hand, report);
    if output.documents.is_empty() {
        // Said as what happened, not as the schema's "must hold at least one document".
        return Err(format!(
            "nothing written: no page, publication or entry came out of the sources ({}); \
             a site directory needs .html/.htm files (or a sitemap.xml naming them), and \
             --keep-all keeps pages left out as generator noise",
            report
                .noise
                .summary()
                .unwrap_or_else(|| "nothing left out".into())
        ));
    }
    let bytes = output.to_bytes();
    let summary = counts(&output);
    // The entries go before the bytes are parsed back (their ids name the problems), and
    // the bytes before the index is built: the build's peaks are the parse and the index.
    let ids: Vec<String> = output.documents.iter().map(|d| d.id.clone()).collect();
    drop(output);
    let kb = validate(&ids, &bytes)?;
    drop(ids);
    write(&s.output, &bytes)?;
    let hash = shared::index::content_hash(&bytes);
    drop(bytes);
    if s.llms_txt && beside {
        write_llms_txt(s, &kb)?;
    }
    if !beside {
        return Ok(summary);
    }
    // Beside it, the prebuilt index the functions load instead of indexing the JSON; the
    // one already there when it was written for these very bytes by this very binary.
    let index_file = index_path(&s.output);
    let index_sha = match cache.previous.index_for(hash, &index_file) {
        Some(sha) => sha,
        None => {
            let retriever = shared::SearchIndex::new(kb, String::new());
            let index = shared::index::encode(&retriever, hash, &shared::kb::version_of_hash(hash));
            drop(retriever);
            write(&index_file, &index)?;
            extract_cache::sha256(&index)
        }
    };
    if let Some(next) = cache.next {
        report.note(format!(
            "build cache: {} files reused, {} extracted",
            next.reused, next.extracted
        ));
        if let Err(e) = next.commit(hash, &index_sha) {
            report.warn(format!("the build cache was not saved: {e}"));
        }
    }
    Ok(summary)
}

/// The publications of every `--bib` file, in the order given.
fn read_bibtex(s: &Settings) -> Result<Vec<entry::Entry>, String> {
    let mut publications = Vec::new();
    for path in &s.bib {
        let text = std::fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))?;
        publications.extend(bibtex::parse(
            &text,
            &path.display().to_string(),
            &s.code_field,
        )?);
    }
    Ok(publications)
}

/// The pages of the Markdown folder, the built site and the crawl, in that order; of the
/// HTML ones (site and crawl), only those marked `data-pagefind-body` once any page is.
fn read_pages(
    s: &Settings,
    cache: &mut extract_cache::BuildCache,
    report: &mut Report,
) -> Result<Vec<page::Page>, String> {
    let filter = Filter::new(s.include.clone(), s.exclude.clone());
    let base_url = s.base_url.as_deref().unwrap_or_default();
    let mut pages = Vec::new();
    if let Some(dir) = &s.markdown {
        pages.extend(markdown::read(
            &markdown::MarkdownOptions {
                dir,
                base_url,
                permalink: &s.permalink,
                filter: &filter,
                jobs: s.jobs,
            },
            cache,
            report,
        )?);
    }
    // The HTML pages (site and crawl) are one set for Pagefind's body rule.
    let mut html_pages = Vec::new();
    if let Some(dir) = &s.site {
        html_pages.extend(site::read(
            &site::SiteOptions {
                dir,
                base_url,
                use_sitemap: s.sitemap,
                filter: &filter,
                max_pages: s.site_max_pages(),
                jobs: s.jobs,
            },
            cache,
            report,
        )?);
    }
    if let Some(url) = &s.url {
        html_pages.extend(crawl::crawl(
            &crawl::CrawlOptions {
                url,
                filter: &filter,
                max_pages: s.crawl_max_pages(),
                delay: s.delay,
                cache: &s.cache,
            },
            report,
        )?);
    }
    cache.previous.forget_files();
    pagefind::keep_marked(&mut html_pages, report);
    pages.extend(html_pages);
    Ok(pages)
}

/// `llms.txt` (the index) and `llms-full.txt` (every entry) beside the output.
fn write_llms_txt(s: &Settings, kb: &KnowledgeBase) -> Result<(), String> {
    let (index, full) = llms::render(
        kb,
        &llms::Site {
            name: s.site_name.as_deref(),
            summary: s.site_summary.as_deref(),
            base_url: s.base_url.as_deref(),
        },
    );
    write(&s.output.with_file_name("llms.txt"), index.as_bytes())?;
    write(&s.output.with_file_name("llms-full.txt"), full.as_bytes())
}

/// The build cache next to the output, unless turned off. A cache that cannot be used is
/// a note, never a reason to fail.
fn open_cache(s: &Settings) -> extract_cache::BuildCache {
    if !s.build_cache {
        return extract_cache::BuildCache::off();
    }
    let options = [
        env!("CARGO_PKG_VERSION"),
        s.base_url.as_deref().unwrap_or_default(),
        s.permalink.as_str(),
    ];
    let Some(key) = extract_cache::key(&options) else {
        eprintln!("note: cannot read the rag binary to key the build cache; not using it");
        return extract_cache::BuildCache::off();
    };
    let mut notes = Vec::new();
    let cache =
        extract_cache::BuildCache::open(&extract_cache::path_for(&s.output), &key, &mut notes);
    for n in notes {
        eprintln!("note: {n}");
    }
    cache
}

/// The written bytes must load as a knowledge base, exactly as the functions will load
/// them; each problem is reported with the id of the entry it is in.
fn validate(ids: &[String], bytes: &[u8]) -> Result<KnowledgeBase, String> {
    let text = String::from_utf8_lossy(bytes);
    match KnowledgeBase::from_json_str(&text, "the built knowledge base") {
        Ok(kb) => Ok(kb),
        Err(shared::Error::InvalidKb(problems)) => {
            let lines: Vec<String> = problems
                .0
                .iter()
                .map(|p| {
                    let line = p.to_string();
                    match entry_of(&line).and_then(|i| ids.get(i)) {
                        Some(id) => format!("{id} ({line})"),
                        None => line,
                    }
                })
                .collect();
            Err(format!(
                "the built knowledge base is invalid, nothing written:\n  {}",
                lines.join("\n  ")
            ))
        }
        Err(e) => Err(e.to_string()),
    }
}

/// The document index in a problem's path (`documents[3].url: ...` → 3).
fn entry_of(problem: &str) -> Option<usize> {
    let rest = problem.split("documents[").nth(1)?;
    rest.split(']').next()?.parse().ok()
}

/// Where the prebuilt index of the knowledge base at `path` goes (`knowledge_base.json` →
/// `knowledge_base.index`, see [`shared::index::index_name`]).
pub(crate) fn index_path(path: &Path) -> std::path::PathBuf {
    let name = path
        .file_name()
        .map_or_else(|| "kb".into(), |n| n.to_string_lossy());
    path.with_file_name(shared::index::index_name(&name))
}

/// Whether `path` exists as something other than a regular file or a directory: a device
/// (`/dev/null`, `/dev/stdout`), a pipe or a socket (a symbolic link read as what it names).
fn is_special(path: &Path) -> bool {
    std::fs::metadata(path).is_ok_and(|m| !m.is_file() && !m.is_dir())
}

/// Writes through a temporary file, so a reader never sees half a file. A symbolic link is
/// followed (the file it names is replaced, the link stays), and a device or pipe is written
/// into: renamed over, `/dev/null` would become a regular file that every later write to it
/// fills and every read returns.
pub(crate) fn write(path: &Path, bytes: &[u8]) -> Result<(), String> {
    let resolved = std::fs::canonicalize(path).ok();
    let path = resolved.as_deref().unwrap_or(path);
    if is_special(path) {
        return std::fs::write(path, bytes).map_err(|e| format!("{}: {e}", path.display()));
    }
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    }
    let mut tmp = path.as_os_str().to_owned();
    tmp.push(".tmp");
    let tmp = std::path::PathBuf::from(tmp);
    std::fs::write(&tmp, bytes).map_err(|e| format!("{}: {e}", tmp.display()))?;
    std::fs::rename(&tmp, path).map_err(|e| format!("{}: {e}", path.display()))
}

/// "29 documents: 22 publication, 4 github_project, 3 page; 18 glossary entries".
fn counts(output: &Output) -> String {
    let mut by_type: Vec<(String, usize)> = Vec::new();
    for d in &output.documents {
        let t = d.get_str("type").unwrap_or("?").to_owned();
        match by_type.iter_mut().find(|(k, _)| *k == t) {
            Some((_, n)) => *n += 1,
            None => by_type.push((t, 1)),
        }
    }
    let parts: Vec<String> = by_type.iter().map(|(t, n)| format!("{n} {t}")).collect();
    format!(
        "{} documents: {}; {} glossary entries",
        output.documents.len(),
        parts.join(", "),
        output.glossary.len()
    )
}
