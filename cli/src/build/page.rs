//! A page extracted from any source (built HTML, Markdown, a crawl), before it becomes a
//! knowledge-base entry.

use std::collections::{BTreeMap, HashSet};

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::dedup::Signature;
use super::entry::Entry;
use super::ids;
use super::noise::Structure;

/// What `rag build` keeps of one page.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub(crate) struct Page {
    /// Canonical absolute URL.
    pub(crate) url: String,
    /// The page title.
    pub(crate) title: String,
    /// The main text as Markdown: headings as `#` lines, paragraphs split by blank lines.
    pub(crate) content: String,
    /// The page's language (`<html lang>`, front matter `lang`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) lang: Option<String>,
    /// Meta description or front matter `description`/`summary`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) description: Option<String>,
    /// Publication date as written (front matter `date`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) date: Option<String>,
    /// Tags and keywords.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub(crate) keywords: Vec<String>,
    /// Ordering weight (front matter `weight`; lower first).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) weight: Option<i64>,
    /// What its HTML (a Markdown source's as rendered) measured like, for recognising
    /// generator noise.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) structure: Option<Structure>,
    /// The URLs of near-duplicate pages folded into this one (see [`super::dedup`]).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub(crate) alternates: Vec<String>,
    /// What kind of page it is, when retrieval should know (`release-notes`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) kind: Option<String>,
    /// Further fields from the page's markup (Pagefind metadata and filters), each with
    /// one value or several.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub(crate) fields: BTreeMap<String, Vec<String>>,
    /// Whether the main content came from `data-pagefind-body` elements.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub(crate) pagefind_body: bool,
    /// The `<title>`, when the title was taken from an `<h1>` that differs from it (see
    /// [`super::titles`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) head_title: Option<String>,
    /// Whether the page has more than one `<h1>` (then they may be its sections).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub(crate) h1_sections: bool,
    /// The pages its main text links to, as [`super::links::targets`] and
    /// [`super::links::markdown_targets`] key them (dropped once [`super::links::count`] has
    /// read them).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub(crate) links: Vec<u64>,
    /// The key of where it was found, when links from its neighbours name it there rather
    /// than by its URL: an HTML page's address when its canonical URL is another, a Markdown
    /// page's source file ([`super::links::source_key`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) found_at: Option<u64>,
    /// How many other pages of the site link to it (see [`super::links`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) linked_from: Option<u32>,
    /// Heading lines of the content as extracted and the ids the HTML gave them, in order:
    /// written into the entry's content as `{#id}` attributes once every stage that reads
    /// the text is done ([`Page::to_entry`]), so links can go to a passage's section.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub(crate) anchors: Vec<(String, String)>,
    /// The signature near-duplicates are found by, when made at extraction (it is of the
    /// title and content as extracted: neither changes before duplicates are collapsed).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) signature: Option<Signature>,
}

/// Knowledge-base fields holding one string: several values from markup are joined with
/// `", "` (how `authors` lists names).
const ONE_STRING: &[&str] = &[
    "name", "authors", "venue", "year", "stars", "role", "summary",
];

impl Page {
    /// The URL's path (`https://site/a/b/` → `/a/b/`), which ids and filters use.
    pub(crate) fn path(&self) -> String {
        url_path(&self.url)
    }

    /// The knowledge-base entry for this page (type `page`, id from the URL path).
    pub(crate) fn to_entry(&self) -> Entry {
        let mut e = Entry::new(ids::page_id(&self.path()), "page");
        e.set_str("title", Some(self.title.as_str()));
        e.set_str("kind", self.kind.as_deref());
        e.set_str("url", Some(self.url.as_str()));
        if !self.alternates.is_empty() {
            e.set("alternates", self.alternates.clone().into());
        }
        e.set_str("lang", self.lang.as_deref());
        e.set_str("description", self.description.as_deref());
        e.set_str("date", self.date.as_deref());
        e.set_keywords(self.keywords.clone());
        if let Some(n) = self.linked_from {
            e.set("linked_from", n.into());
        }
        e.set_str(
            "content",
            Some(&with_heading_ids(&self.content, &self.anchors)),
        );
        for (k, values) in &self.fields {
            let value = match values.as_slice() {
                [] => continue,
                [one] => Value::String(one.clone()),
                _ if ONE_STRING.contains(&k.as_str()) => Value::String(values.join(", ")),
                _ => Value::Array(values.iter().cloned().map(Value::String).collect()),
            };
            e.set(k, value);
        }
        e
    }
}

/// `content` with each heading line that `anchors` names (in order; lines the stages
/// after extraction dropped are passed over) ending in its id attribute, ` {#id}`, the
/// syntax [`shared::kb::split_heading_id`] reads. A heading longer than a passage (an
/// Erlang/OTP type's whole definition) gets none: passages would cut it, and the piece
/// holding its end would not read as a heading, so its id would be indexed as words.
fn with_heading_ids(content: &str, anchors: &[(String, String)]) -> String {
    if anchors.is_empty() {
        return content.to_owned();
    }
    let mut out = String::with_capacity(content.len() + anchors.len() * 16);
    let mut copied = 0;
    let mut next = 0;
    for (at, line, code) in shared::kb::fenced_lines(content) {
        if code || !line.starts_with('#') {
            continue;
        }
        let Some(found) = anchors[next..].iter().position(|(l, _)| l == line) else {
            continue;
        };
        if line.chars().count() > shared::kb::PASSAGE_MAX_CHARS {
            next += found + 1;
            continue;
        }
        let id = &anchors[next + found].1;
        next += found + 1;
        out.push_str(&content[copied..at + line.len()]);
        out.push_str(" {#");
        out.push_str(id);
        out.push('}');
        copied = at + line.len();
        if next == anchors.len() {
            break;
        }
    }
    out.push_str(&content[copied..]);
    out
}

/// A folder of at least this many pages may have a layout of its own (chrome, a name in
/// its titles).
pub(crate) const FOLDER_MIN_PAGES: usize = 10;

/// The indexes of `pages` grouped by the folder of their URL path, for each folder of at
/// least [`FOLDER_MIN_PAGES`] pages that is not the whole site: a part of a site with a
/// layout of its own (a manual beside generated example projects, a release log beside the
/// reference). In folder order. A page at a folder's URL (`/news/0.22-relnotes/`, as Hugo,
/// Jekyll and MkDocs publish every page) is in the folder above it, beside its siblings, as
/// `/news/0.22-relnotes.html` would be, unless pages stand in its folder: then it is their
/// folder's index (`/news/` over them, Doxygen's `html/` over its files).
pub(crate) fn sub_folders(pages: &[Page]) -> Vec<Vec<usize>> {
    let parent = |path: &str| path.rsplit_once('/').map_or("", |(f, _)| f).to_owned();
    let paths: Vec<String> = pages.iter().map(Page::path).collect();
    let outer: Vec<String> = paths
        .iter()
        .map(|p| parent(p.strip_suffix('/').unwrap_or(p)))
        .collect();
    let holding: HashSet<&str> = outer.iter().map(String::as_str).collect();
    let mut folders: BTreeMap<String, Vec<usize>> = BTreeMap::new();
    for (i, path) in paths.iter().enumerate() {
        let folder = match path.strip_suffix('/') {
            Some(own) if holding.contains(own) => own.to_owned(),
            _ => outer[i].clone(),
        };
        folders.entry(folder).or_default().push(i);
    }
    folders
        .into_values()
        .filter(|members| members.len() >= FOLDER_MIN_PAGES && members.len() < pages.len())
        .collect()
}

/// The path part of an absolute URL (`/` when it has none), without query or fragment.
pub(crate) fn url_path(url: &str) -> String {
    match reqwest::Url::parse(url) {
        Ok(u) => u.path().to_owned(),
        Err(_) => "/".to_owned(),
    }
}

/// `base` (an absolute URL, maybe with a path of its own) joined with a site path, whose
/// characters that cannot stand in a URL are percent-encoded: file names have spaces
/// (CMake's `guide/tutorial/Installing and Testing.html`, linked as `Installing%20and%20...`).
/// A `%` is left as it is: a permalink may be written encoded already.
pub(crate) fn join_url(base: &str, path: &str) -> String {
    let base = base.trim_end_matches('/');
    let path = path.trim_start_matches('/');
    let mut url = String::with_capacity(base.len() + path.len() + 1);
    url.push_str(base);
    url.push('/');
    for c in path.chars() {
        if c.is_ascii_control() || c.is_whitespace() || "\"<>\\^`{|}".contains(c) {
            let mut bytes = [0; 4];
            for b in c.encode_utf8(&mut bytes).bytes() {
                url.push_str(&format!("%{b:02X}"));
            }
        } else {
            url.push(c);
        }
    }
    url
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_page_at_a_folder_s_url_is_in_the_folder_above_it() {
        // Hugo publishes every page as a folder (`/news/0.22-relnotes/`): its siblings are
        // the folder's other pages, as `/news/0.22-relnotes.html` would be beside them.
        // Before, each was a folder of one, and the rules for a folder's own layout (its name
        // in the titles, its chrome) never applied.
        let at = |path: &str| Page {
            url: format!("https://ex.org{path}"),
            ..Page::default()
        };
        let mut pages: Vec<Page> = (0..FOLDER_MIN_PAGES)
            .map(|i| at(&format!("/news/0.{i}-relnotes/")))
            .collect();
        pages.extend((0..FOLDER_MIN_PAGES).map(|i| at(&format!("/api/item{i}.html"))));
        // A folder's index over the pages in it is theirs, at a folder's URL too.
        pages.push(at("/news/"));
        pages.push(at("/api/"));
        pages.push(at("/"));
        let folders = sub_folders(&pages);
        let n = FOLDER_MIN_PAGES;
        let news: Vec<usize> = (0..n).chain([2 * n]).collect();
        let api: Vec<usize> = (n..2 * n).chain([2 * n + 1]).collect();
        assert_eq!(folders, [api, news]);
    }

    #[test]
    fn pages_become_page_entries_keyed_by_their_path() {
        let p = Page {
            url: "https://ex.org/notes/rust/".into(),
            title: "Rust".into(),
            content: "# Rust\n\nText.".into(),
            lang: Some("en".into()),
            ..Page::default()
        };
        let e = p.to_entry();
        assert_eq!(e.id, "page_notes_rust");
        assert_eq!(e.get_str("url"), Some("https://ex.org/notes/rust/"));
        assert_eq!(e.get_str("lang"), Some("en"));
        assert_eq!(e.get("tag"), None);

        let mut p = p;
        for (k, v) in [
            ("tag", &["a", "b"][..]),
            ("authors", &["X", "Y"]),
            ("lab", &["L"]),
        ] {
            p.fields
                .insert(k.into(), v.iter().map(|s| (*s).to_owned()).collect());
        }
        let e = p.to_entry();
        assert_eq!(e.get("tag"), Some(&serde_json::json!(["a", "b"])));
        assert_eq!(e.get_str("authors"), Some("X, Y"));
        assert_eq!(e.get_str("lab"), Some("L"));
        assert_eq!(
            join_url("https://ex.org/base/", "/a/"),
            "https://ex.org/base/a/"
        );
    }

    #[test]
    fn a_file_name_with_spaces_joins_as_a_valid_url() {
        let url = join_url("https://ex.org/", "/guide/Installing and Testing.html");
        assert_eq!(url, "https://ex.org/guide/Installing%20and%20Testing.html");
        // What cannot stand in a URL is encoded; a permalink's own encoding and letters of
        // any script stay as written.
        assert_eq!(
            join_url("https://ex.org/", "a\tb|c/caf%C3%A9/笔记/"),
            "https://ex.org/a%09b%7Cc/caf%C3%A9/笔记/"
        );
        assert_eq!(url_path(&url), "/guide/Installing%20and%20Testing.html");
    }
    #[test]
    fn heading_ids_are_written_into_the_entry_s_content_where_their_lines_still_are() {
        let page = Page {
            url: "https://x.test/p".into(),
            title: "P".into(),
            content: "# P\n\n## Files\n\nText.\n\n```\n## Files\n```\n\n## Gone later\n\n\
                      ## Syntax\n\nMore."
                .into(),
            anchors: [
                ("## Files", "files"),
                ("## Dropped", "x"),
                ("## Syntax", "syntax"),
            ]
            .iter()
            .map(|(l, i)| (l.to_string(), i.to_string()))
            .collect(),
            ..Page::default()
        };
        let entry = serde_json::to_value(page.to_entry()).unwrap();
        // The code line that reads like a heading is not one; a line a later stage dropped
        // ("## Dropped") is passed over; a heading without an id keeps none.
        assert_eq!(
            entry["content"],
            "# P\n\n## Files {#files}\n\nText.\n\n```\n## Files\n```\n\n## Gone later\n\n\
             ## Syntax {#syntax}\n\nMore."
        );
        let read = shared::kb::headings(entry["content"].as_str().unwrap())
            .map(|(_, _, t)| t)
            .collect::<Vec<_>>();
        assert_eq!(read, ["P", "Files", "Gone later", "Syntax"]);
    }
    #[test]
    fn a_heading_longer_than_a_passage_gets_no_id() {
        let long = format!("### {}", "type_spec() | ".repeat(100));
        let page = Page {
            url: "https://x.test/p".into(),
            title: "P".into(),
            content: format!("# P\n\n{long}\n\nText.\n\n## Short\n\nMore."),
            anchors: vec![
                (long.clone(), "type-spec".into()),
                ("## Short".into(), "short".into()),
            ],
            ..Page::default()
        };
        let entry = serde_json::to_value(page.to_entry()).unwrap();
        let content = entry["content"].as_str().unwrap();
        assert!(!content.contains("{#type-spec}"), "{content}");
        assert!(content.ends_with("## Short {#short}\n\nMore."), "{content}");
    }
}
