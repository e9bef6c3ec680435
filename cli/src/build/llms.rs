//! `llms.txt` and `llms-full.txt` (the llmstxt.org layout) from the built knowledge base,
//! for AI assistants reading the site: an H1 with the site's name, a `>` summary, then H2
//! sections of `- [Title](url): description` links; the full file holds every entry's text.
//!
//! Sections: pages grouped by the first segment of their path under the base URL (a
//! segment with pages below it is a section of its own, the rest are "Pages"), then other
//! page-like types (one section each), then publications, then projects, each in
//! knowledge-base order. Both files are built from the validated knowledge base alone, so
//! the same knowledge base gives the same bytes.
//!
//! Bounds for huge sites: `llms.txt` lists at most [`MAX_LINKS`] links, shared fairly
//! between sections (a section smaller than its share keeps every link; the others split
//! the rest equally, earlier sections taking the remainder), and says how many it left out;
//! `llms-full.txt` stops before [`MAX_FULL_BYTES`], each entry's text cut at
//! [`MAX_ENTRY_BYTES`], and says how many entries it left out.

use shared::{DocKind, Document, KnowledgeBase};

/// Most links `llms.txt` lists.
pub(crate) const MAX_LINKS: usize = 1_000;
/// Largest `llms-full.txt`, in bytes.
pub(crate) const MAX_FULL_BYTES: usize = 8 * 1024 * 1024;
/// Most bytes of one entry's text in `llms-full.txt`.
pub(crate) const MAX_ENTRY_BYTES: usize = 256 * 1024;
/// Longest one-line description in `llms.txt`, in characters.
const MAX_DESCRIPTION_CHARS: usize = 200;

/// What the files say about the site as a whole.
#[derive(Debug, Default)]
pub(crate) struct Site<'a> {
    /// The H1 (`site_name`); else the home page's title, else the base URL's host.
    pub(crate) name: Option<&'a str>,
    /// The `>` summary (`site_summary`); else the home page's description.
    pub(crate) summary: Option<&'a str>,
    /// The site's base URL, if the build has one.
    pub(crate) base_url: Option<&'a str>,
}

/// The two files' text: (`llms.txt`, `llms-full.txt`).
pub(crate) fn render(kb: &KnowledgeBase, site: &Site<'_>) -> (String, String) {
    let sections = sections(&kb.documents, site.base_url);
    let head = header(&kb.documents, site);
    (index(&sections, &head), full(&sections, &head))
}

/// One H2 section: its title and its entries, in order.
struct Section<'a> {
    title: String,
    docs: Vec<&'a Document>,
}

/// The H1 and the summary blockquote, shared by both files.
fn header(docs: &[Document], site: &Site<'_>) -> String {
    let home = site.base_url.and_then(|base| {
        docs.iter().find(|d| {
            d.kind() == DocKind::Page && d.url.as_deref().is_some_and(|u| same_page(u, base))
        })
    });
    let host = site
        .base_url
        .and_then(|b| reqwest::Url::parse(b).ok())
        .and_then(|u| u.host_str().map(str::to_owned));
    let name = site
        .name
        .map(str::to_owned)
        .or_else(|| home.map(|h| h.display_title().to_owned()))
        .or(host)
        .unwrap_or_else(|| "Knowledge base".to_owned());
    let summary = site
        .summary
        .map(str::to_owned)
        .or_else(|| home.and_then(|h| h.description.clone().or_else(|| h.summary.clone())));
    let mut out = format!("# {}\n", one_line(&name));
    if let Some(s) = summary.map(|s| one_line(&s)).filter(|s| !s.is_empty()) {
        out.push_str(&format!("\n> {s}\n"));
    }
    out
}

/// Whether two URLs name the same page (a trailing slash aside).
fn same_page(a: &str, b: &str) -> bool {
    a.trim_end_matches('/') == b.trim_end_matches('/')
}

fn sections<'a>(docs: &'a [Document], base_url: Option<&str>) -> Vec<Section<'a>> {
    let base_path = base_url.map(super::page::url_path).unwrap_or_default();
    let segments = |d: &Document| -> Vec<String> {
        let path = d
            .url
            .as_deref()
            .map(super::page::url_path)
            .unwrap_or_default();
        let rel = path
            .strip_prefix(base_path.trim_end_matches('/'))
            .unwrap_or(&path);
        rel.split('/')
            .filter(|s| !s.is_empty())
            .map(str::to_owned)
            .collect()
    };
    let plain: Vec<(&Document, Vec<String>)> = docs
        .iter()
        .filter(|d| d.doc_type == "page")
        .map(|d| (d, segments(d)))
        .collect();
    // A first segment with pages below it is a section (`/posts/` and `/posts/a/`).
    let nested: Vec<&str> = plain
        .iter()
        .filter(|(_, s)| s.len() >= 2)
        .map(|(_, s)| s[0].as_str())
        .collect();
    let mut out: Vec<Section<'a>> = vec![Section {
        title: "Pages".to_owned(),
        docs: Vec::new(),
    }];
    let mut keys: Vec<String> = vec![String::new()];
    let mut push =
        |key: String, title: String, doc: &'a Document| match keys.iter().position(|k| *k == key) {
            Some(i) => out[i].docs.push(doc),
            None => {
                keys.push(key);
                out.push(Section {
                    title,
                    docs: vec![doc],
                });
            }
        };
    for (d, segs) in &plain {
        match segs.first() {
            Some(first) if nested.contains(&first.as_str()) => {
                push(format!("/{first}"), humanise(first), d);
            }
            _ => push(String::new(), String::new(), d),
        }
    }
    for d in docs
        .iter()
        .filter(|d| d.kind() == DocKind::Page && d.doc_type != "page")
    {
        push(
            format!("type:{}", d.doc_type),
            plural(&humanise(&d.doc_type)),
            d,
        );
    }
    for d in docs.iter().filter(|d| d.kind() == DocKind::Publication) {
        push("type:publication".to_owned(), "Publications".to_owned(), d);
    }
    for d in docs.iter().filter(|d| d.kind() == DocKind::GithubProject) {
        push("type:github_project".to_owned(), "Projects".to_owned(), d);
    }
    out.retain(|s| !s.docs.is_empty());
    out
}

/// `research-topics` → `Research topics` (percent-escapes decoded).
fn humanise(segment: &str) -> String {
    let text = super::site::percent_decode(segment).replace(['-', '_'], " ");
    let text = one_line(&text);
    let mut chars = text.chars();
    match chars.next() {
        Some(c) => c.to_uppercase().chain(chars).collect(),
        None => text,
    }
}

fn plural(word: &str) -> String {
    if word.ends_with('s') {
        word.to_owned()
    } else {
        format!("{word}s")
    }
}

/// How many links each section keeps so that all together keep at most `cap`: max-min
/// fair (a small section keeps all; the rest share equally, earlier ones the remainder).
fn shares(sizes: &[usize], cap: usize) -> Vec<usize> {
    if sizes.iter().sum::<usize>() <= cap {
        return sizes.to_vec();
    }
    let mut out = vec![0; sizes.len()];
    let mut order: Vec<usize> = (0..sizes.len()).collect();
    order.sort_by_key(|&i| (sizes[i], i));
    let mut left = cap;
    let mut open: Vec<usize> = Vec::new();
    for (n, &i) in order.iter().enumerate() {
        let remaining = sizes.len() - n;
        if sizes[i] * remaining <= left {
            out[i] = sizes[i];
            left -= sizes[i];
        } else {
            open.extend_from_slice(&order[n..]);
            break;
        }
    }
    open.sort_unstable();
    if !open.is_empty() {
        let (each, extra) = (left / open.len(), left % open.len());
        for (k, &i) in open.iter().enumerate() {
            out[i] = each + usize::from(k < extra);
        }
    }
    out
}

/// `llms.txt`. An entry without a link (a paper known only by its venue) is listed by its
/// title alone: leaving it out would hide it from the reader altogether.
fn index(sections: &[Section<'_>], head: &str) -> String {
    let sizes: Vec<usize> = sections.iter().map(|s| s.docs.len()).collect();
    let keep = shares(&sizes, MAX_LINKS);
    let total: usize = sizes.iter().sum();
    let kept: usize = keep.iter().sum();
    let mut out = head.to_owned();
    if kept < total {
        out.push_str(&format!(
            "\nThis index lists {kept} of the site's {total} entries (at most {MAX_LINKS}, \
             shared between the sections); llms-full.txt holds their text.\n"
        ));
    }
    for (section, n) in sections.iter().zip(keep) {
        if n == 0 {
            continue;
        }
        out.push_str(&format!("\n## {}\n\n", section.title));
        for doc in section.docs.iter().take(n) {
            let title = escape_text(&one_line(doc.display_title()));
            match doc.link() {
                Some(link) => out.push_str(&format!("- [{title}]({})", escape_url(link))),
                None => out.push_str(&format!("- {title}")),
            }
            let description = describe(doc);
            if !description.is_empty() {
                out.push_str(&format!(": {description}"));
            }
            out.push('\n');
        }
    }
    out
}

/// A one-line description of an entry for its link.
fn describe(doc: &Document) -> String {
    let text = match doc.kind() {
        DocKind::Publication => {
            let venue = match (&doc.venue, &doc.year) {
                (Some(v), Some(y)) if !v.contains(y.as_str()) => Some(format!("{v}, {y}")),
                (Some(v), _) => Some(v.clone()),
                (None, y) => y.clone(),
            };
            [doc.authors.clone(), venue]
                .into_iter()
                .flatten()
                .collect::<Vec<_>>()
                .join("; ")
        }
        DocKind::GithubProject => {
            let text = doc.description.clone().or_else(|| doc.summary.clone());
            match (text, &doc.stars) {
                (Some(t), Some(s)) => format!("{t} ({s} stars)"),
                (Some(t), None) => t,
                (None, Some(s)) => format!("{s} stars"),
                (None, None) => String::new(),
            }
        }
        DocKind::Page => doc
            .description
            .clone()
            .or_else(|| doc.summary.clone())
            .or_else(|| doc.content.as_deref().and_then(first_paragraph))
            .unwrap_or_default(),
    };
    shorten(&one_line(&text), MAX_DESCRIPTION_CHARS)
}

/// The first paragraph of Markdown-ish content that is prose (no heading, list, code
/// fence, table or quote).
fn first_paragraph(content: &str) -> Option<String> {
    content
        .split("\n\n")
        .map(str::trim)
        .find(|p| {
            !p.is_empty() && !p.starts_with(['#', '-', '*', '`', '|', '>', '<', '!', '[', '~'])
        })
        .map(str::to_owned)
}

/// `text` cut at a word boundary to at most `max` characters, with `…` when cut.
fn shorten(text: &str, max: usize) -> String {
    if text.chars().count() <= max {
        return text.to_owned();
    }
    let cut: String = text.chars().take(max.saturating_sub(1)).collect();
    let cut = match cut.rfind(' ') {
        Some(i) if i > cut.len() / 2 => &cut[..i],
        _ => &cut,
    };
    format!("{}…", cut.trim_end_matches([' ', ',', ';', ':', '.']))
}

/// Whitespace (newlines included) folded to single spaces, trimmed.
fn one_line(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// Link text with the characters that would end or break it escaped.
fn escape_text(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        if matches!(c, '[' | ']' | '\\' | '`' | '*' | '_' | '<') {
            out.push('\\');
        }
        out.push(c);
    }
    out
}

/// A link target with the characters that would end it percent-encoded (the knowledge
/// base's links are validated http(s) URLs, so nothing else needs care).
fn escape_url(url: &str) -> String {
    url.replace('(', "%28")
        .replace(')', "%29")
        .replace(' ', "%20")
        .replace('<', "%3C")
        .replace('>', "%3E")
}

/// `llms-full.txt`: every entry (linked or not) as `# Title`, `Source:`, its fields and
/// its text.
fn full(sections: &[Section<'_>], head: &str) -> String {
    let mut out = head.to_owned();
    let total: usize = sections.iter().map(|s| s.docs.len()).sum();
    let mut written = 0;
    'sections: for section in sections {
        for doc in &section.docs {
            let entry = full_entry(doc);
            if out.len() + entry.len() + 1 > MAX_FULL_BYTES {
                break 'sections;
            }
            out.push('\n');
            out.push_str(&entry);
            written += 1;
        }
    }
    if written < total {
        out.push_str(&format!(
            "\n(The rest, {} of {total} entries, is left out: this file stops before {} MiB.)\n",
            total - written,
            MAX_FULL_BYTES / (1024 * 1024)
        ));
    }
    out
}

fn full_entry(doc: &Document) -> String {
    let title = one_line(doc.display_title());
    let mut out = format!("# {title}\n\n");
    let mut fields: Vec<(&str, &str)> = Vec::new();
    if let Some(link) = doc.link() {
        fields.push(("Source", link));
    }
    for (label, value) in [
        ("Authors", &doc.authors),
        ("Venue", &doc.venue),
        ("Year", &doc.year),
        ("Paper", &doc.paper_url),
        ("Code", &doc.code_url),
        ("Stars", &doc.stars),
        ("Role", &doc.role),
    ] {
        if let Some(v) = value {
            fields.push((label, v.as_str()));
        }
    }
    // A paper's or project's own link already shows as Source.
    fields.retain(|(l, v)| *l == "Source" || Some(*v) != doc.link());
    let keywords = doc.keywords.join(", ");
    if !keywords.is_empty() {
        fields.push(("Keywords", keywords.as_str()));
    }
    for (k, v) in &doc.extra {
        if k != "lang" {
            fields.push((k.as_str(), v.as_str()));
        }
    }
    // A field with several values (a page's tags) is one line.
    let mut lines: Vec<(&str, String)> = Vec::new();
    for (label, value) in &fields {
        match lines.last_mut() {
            Some((last, text)) if last == label => {
                text.push_str(", ");
                text.push_str(&one_line(value));
            }
            _ => lines.push((label, one_line(value))),
        }
    }
    for (label, value) in &lines {
        out.push_str(&format!("{label}: {value}\n"));
    }
    let mut text = Vec::new();
    for t in [&doc.summary, &doc.description].into_iter().flatten() {
        text.push(t.trim().to_owned());
    }
    if let Some(content) = doc.content.as_deref() {
        // The page's own `# Title` line repeats the heading above.
        let content = content.trim();
        let first = content.lines().next().unwrap_or("");
        let (shown, _) = shared::kb::split_heading_id(first.trim());
        let body = if shown == format!("# {title}") {
            content[first.len()..].trim_start()
        } else {
            content
        };
        text.push(cut(body, MAX_ENTRY_BYTES));
    }
    let text: Vec<String> = text.into_iter().filter(|t| !t.is_empty()).collect();
    if !text.is_empty() {
        if !fields.is_empty() {
            out.push('\n');
        }
        out.push_str(&text.join("\n\n"));
        out.push('\n');
    }
    out
}

/// `text` cut to at most `max` bytes at a line end (a character boundary at worst), with a
/// note when cut.
fn cut(text: &str, max: usize) -> String {
    if text.len() <= max {
        return text.to_owned();
    }
    let mut end = max;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    let end = text[..end].rfind('\n').filter(|&i| i > 0).unwrap_or(end);
    format!(
        "{}\n\n(cut here: the entry is longer)",
        text[..end].trim_end()
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kb(docs: serde_json::Value) -> KnowledgeBase {
        KnowledgeBase::from_value(&docs).unwrap()
    }

    #[test]
    fn shares_are_fair_and_never_exceed_the_cap() {
        assert_eq!(shares(&[3, 4], 10), [3, 4]);
        assert_eq!(shares(&[2, 50, 50], 20), [2, 9, 9]);
        assert_eq!(shares(&[50, 2, 50], 21), [10, 2, 9]);
        assert_eq!(shares(&[100, 100, 100], 10), [4, 3, 3]);
        assert_eq!(shares(&[], 10), Vec::<usize>::new());
    }

    #[test]
    fn pages_group_by_their_first_segment_and_types_follow() {
        let kb = kb(serde_json::json!([
            {"id": "pub_a", "type": "publication", "title": "A [paper]", "authors": "X, Y",
             "venue": "CVPR", "year": 2022, "paper_url": "https://doi.org/10.1/a(b)"},
            {"id": "project_p", "type": "github_project", "name": "P", "stars": "1k",
             "url": "https://github.com/o/p", "description": "A tool."},
            {"id": "talk_t", "type": "talk", "title": "T", "url": "https://ex.org/talks/t"},
            {"id": "page_home", "type": "page", "title": "Home", "url": "https://ex.org/base/",
             "description": "The home page.", "content": "# Home\n\nWelcome."},
            {"id": "page_about", "type": "page", "title": "About", "url": "https://ex.org/base/about/",
             "content": "# About\n\n## Me\n\n- item\n\nI write   things.\nTwo lines."},
            {"id": "page_posts", "type": "page", "title": "Posts", "url": "https://ex.org/base/posts/"},
            {"id": "page_posts_a", "type": "page", "title": "Post A", "url": "https://ex.org/base/posts/a/"},
            {"id": "page_notes", "type": "page", "title": "No link"}
        ]));
        let (index, _) = render(
            &kb,
            &Site {
                base_url: Some("https://ex.org/base/"),
                ..Site::default()
            },
        );
        assert_eq!(
            index,
            "# Home\n\n> The home page.\n\n\
             ## Pages\n\n\
             - [Home](https://ex.org/base/): The home page.\n\
             - [About](https://ex.org/base/about/): I write things. Two lines.\n\
             - No link\n\n\
             ## Posts\n\n\
             - [Posts](https://ex.org/base/posts/)\n\
             - [Post A](https://ex.org/base/posts/a/)\n\n\
             ## Talks\n\n\
             - [T](https://ex.org/talks/t)\n\n\
             ## Publications\n\n\
             - [A \\[paper\\]](https://doi.org/10.1/a%28b%29): X, Y; CVPR, 2022\n\n\
             ## Projects\n\n\
             - [P](https://github.com/o/p): A tool. (1k stars)\n"
        );
    }

    #[test]
    fn the_full_file_holds_every_entry_with_its_fields_and_text() {
        let kb = kb(serde_json::json!([
            {"id": "pub_a", "type": "publication", "title": "A", "authors": "X",
             "paper_url": "https://doi.org/10.1/a", "summary": "We show things."},
            {"id": "page_about", "type": "page", "title": "About", "url": "https://ex.org/about/",
             "lang": "en", "tag": ["a", "b"], "content": "# About\n\nText.\n\n## More\n\nMore text."},
            {"id": "page_notes", "type": "page", "title": "Notes", "content": "Unlinked."}
        ]));
        let (_, full) = render(
            &kb,
            &Site {
                name: Some("My site"),
                summary: Some("What it is."),
                base_url: Some("https://ex.org/"),
            },
        );
        assert_eq!(
            full,
            "# My site\n\n> What it is.\n\n\
             # About\n\nSource: https://ex.org/about/\ntag: a, b\n\nText.\n\n## More\n\nMore text.\n\n\
             # Notes\n\nUnlinked.\n\n\
             # A\n\nSource: https://doi.org/10.1/a\nAuthors: X\n\nWe show things.\n"
        );
    }

    #[test]
    fn long_descriptions_and_entries_are_cut() {
        let long = "word ".repeat(100);
        let short = shorten(&one_line(&long), 50);
        assert!(
            short.ends_with("word…") && short.chars().count() <= 50,
            "{short}"
        );
        let text = "line\n".repeat(100);
        let c = cut(&text, 52);
        assert!(c.starts_with("line\nline") && c.ends_with("(cut here: the entry is longer)"));
        assert!(c.len() < 52 + 40, "{c}");
    }
}
