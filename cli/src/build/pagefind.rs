//! Pagefind's page markup, honoured so an owner who annotated the site for Pagefind need
//! not annotate it again (the attributes as Pagefind's documentation describes them):
//!
//! - `data-pagefind-body` marks the main content (several such elements are joined); once
//!   any HTML page of the site has one, pages without it are left out ([`keep_marked`]).
//! - `data-pagefind-ignore` leaves an element out of the text, like `data-rag-ignore`. Its
//!   metadata and filters still count, unless the value is `all`, which hides the element
//!   from everything (title detection included).
//! - `data-pagefind-meta` and `data-pagefind-default-meta` (the fallback) give one value per
//!   key; `data-pagefind-filter` gives any number. Each is a comma-separated list of `key`
//!   (the element's text), `key[attr]` (an attribute's value) and, last only, `key:value`
//!   (the value running to the end, commas included). They count wherever they are in the
//!   page, inside the body element or not.
//!
//! What the values become is decided in [`apply`]: `title`, `description` and `date` set the
//! page's own fields, `keywords` adds keywords, anything else becomes an entry field of
//! that (normalised) name, which the search's `field.NAME` filter can select on.

use std::collections::BTreeMap;

use ego_tree::iter::Edge;
use scraper::node::Element;
use scraper::{ElementRef, Html};

use super::page::Page;
use super::Report;

/// The attribute marking the main content.
const BODY: &str = "data-pagefind-body";
/// The attribute leaving an element out.
const IGNORE: &str = "data-pagefind-ignore";
/// Longest field name kept (the search's `field.NAME` accepts up to 64 characters).
const MAX_KEY_CHARS: usize = 64;
/// Most values kept for one key, and most keys kept for one page: a template bug that tags
/// every word of a page is not worth a field per word.
const MAX_VALUES: usize = 100;
/// Longest value kept, in characters.
const MAX_VALUE_CHARS: usize = 1_000;
/// Keys markup may not set: what identifies an entry and where it links come from the
/// page itself.
const PROTECTED: &[&str] = &["id", "type", "url", "content", "content_hash", "lang"];

/// Whether the element is left out of the page's text (`data-pagefind-ignore`, any value).
pub(crate) fn ignored(el: &Element) -> bool {
    el.attr(IGNORE).is_some()
}

/// `data-pagefind-ignore="all"`: left out of metadata, filters and the title as well.
fn ignored_all(el: &Element) -> bool {
    el.attr(IGNORE)
        .is_some_and(|v| v.trim().eq_ignore_ascii_case("all"))
}

/// Whether `el` is inside (or is) a `data-pagefind-ignore="all"` element.
pub(crate) fn hidden(el: ElementRef<'_>) -> bool {
    std::iter::once(*el)
        .chain(el.ancestors())
        .any(|n| n.value().as_element().is_some_and(ignored_all))
}

/// The outermost `data-pagefind-body` elements, in document order (one inside another is
/// part of it already).
pub(crate) fn bodies(doc: &Html) -> Vec<ElementRef<'_>> {
    let mut out = Vec::new();
    let mut inside: Option<ego_tree::NodeId> = None;
    for edge in doc.root_element().traverse() {
        match edge {
            Edge::Open(node) if inside.is_none() => {
                if let Some(el) = ElementRef::wrap(node) {
                    if el.value().attr(BODY).is_some() && !hidden(el) {
                        inside = Some(node.id());
                        out.push(el);
                    }
                }
            }
            Edge::Close(node) if inside == Some(node.id()) => inside = None,
            _ => {}
        }
    }
    out
}

/// The metadata and filter values of one page.
#[derive(Debug, Default, PartialEq)]
pub(crate) struct Markup {
    /// `data-pagefind-meta`: one value per key, the last one in the page wins.
    meta: BTreeMap<String, String>,
    /// `data-pagefind-default-meta`: used for keys `meta` lacks.
    default_meta: BTreeMap<String, String>,
    /// `data-pagefind-filter`: every value, in page order, without repeats.
    filters: BTreeMap<String, Vec<String>>,
}

/// Reads every `data-pagefind-meta`, `-default-meta` and `-filter` of the page, outside
/// `data-pagefind-ignore="all"` elements.
pub(crate) fn read(doc: &Html) -> Markup {
    let mut markup = Markup::default();
    let mut skipping = None;
    for edge in doc.tree.root().traverse() {
        match edge {
            Edge::Open(node) if skipping.is_none() => {
                let Some(el) = ElementRef::wrap(node) else {
                    continue;
                };
                if ignored_all(el.value()) {
                    skipping = Some(node.id());
                    continue;
                }
                for (key, value) in captures(el, "data-pagefind-meta") {
                    markup.meta.insert(key, value);
                }
                for (key, value) in captures(el, "data-pagefind-default-meta") {
                    markup.default_meta.insert(key, value);
                }
                for (key, value) in captures(el, "data-pagefind-filter") {
                    let values = markup.filters.entry(key).or_default();
                    if !values.contains(&value) {
                        values.push(value);
                    }
                }
            }
            Edge::Close(node) if skipping == Some(node.id()) => skipping = None,
            _ => {}
        }
    }
    markup
}

/// The (key, value) pairs one attribute of `el` names: `key`, `key[attr]`, and a final
/// `key:value`. Pairs with an empty key or value are dropped.
fn captures(el: ElementRef<'_>, attr: &str) -> Vec<(String, String)> {
    let Some(spec) = el.value().attr(attr) else {
        return Vec::new();
    };
    // Only the last capture may carry an inline value, and that value may hold commas.
    let (list, inline) = match spec.split_once(':') {
        Some((list, value)) => (list, Some(value)),
        None => (spec, None),
    };
    let items: Vec<&str> = list.split(',').map(str::trim).collect();
    let last = items.len().saturating_sub(1);
    let mut out = Vec::new();
    for (i, item) in items.into_iter().enumerate() {
        let (key, value) = match (item.split_once('['), inline) {
            (_, Some(v)) if i == last => (item, v.to_owned()),
            (Some((key, rest)), _) => match rest.strip_suffix(']') {
                Some(a) => (key, el.value().attr(a.trim()).unwrap_or("").to_owned()),
                None => continue,
            },
            (None, _) => (item, el.text().collect::<String>()),
        };
        let value = normalise(&value);
        if !key.trim().is_empty() && !value.is_empty() {
            out.push((key.trim().to_owned(), value));
        }
    }
    out
}

/// Whitespace folded to single spaces, trimmed, at most [`MAX_VALUE_CHARS`].
fn normalise(text: &str) -> String {
    let folded = text.split_whitespace().collect::<Vec<_>>().join(" ");
    match folded.char_indices().nth(MAX_VALUE_CHARS) {
        Some((cut, _)) => folded[..cut].trim_end().to_owned(),
        None => folded,
    }
}

/// A markup key as an entry field name: lowercase ASCII letters, digits and `_` (what the
/// search's `field.NAME` accepts), other characters as `_`; `None` for a key that folds to
/// nothing or names a [`PROTECTED`] field.
fn field_name(key: &str) -> Option<String> {
    let mut name = String::new();
    for c in key.trim().chars().flat_map(char::to_lowercase) {
        let c = if c.is_ascii_alphanumeric() { c } else { '_' };
        if !(c == '_' && (name.is_empty() || name.ends_with('_'))) {
            name.push(c);
        }
    }
    let name = name.trim_end_matches('_');
    (!name.is_empty() && name.len() <= MAX_KEY_CHARS && !PROTECTED.contains(&name))
        .then(|| name.to_owned())
}

/// Puts the markup's values on the page: `title`, `description` and `date` replace what
/// the HTML gave; `keywords` adds keywords; links (`image`, `*_url`) are resolved against
/// the page's URL and kept only when they are http(s); the rest become fields.
pub(crate) fn apply(markup: Markup, page: &mut Page) {
    let mut fields: BTreeMap<String, Vec<String>> = BTreeMap::new();
    let mut add = |key: &str, values: Vec<String>| {
        let Some(name) = field_name(key) else {
            return;
        };
        if !fields.contains_key(&name) && fields.len() >= MAX_VALUES {
            return;
        }
        let slot = fields.entry(name).or_default();
        for v in values {
            if !slot.contains(&v) && slot.len() < MAX_VALUES {
                slot.push(v);
            }
        }
    };
    let mut meta = markup.default_meta;
    meta.extend(markup.meta);
    for (key, value) in meta {
        add(&key, vec![value]);
    }
    for (key, values) in markup.filters {
        add(&key, values);
    }
    for (name, values) in fields {
        let joined = || values.join(", ");
        match name.as_str() {
            "title" => {
                // The owner named the page: no `<title>` stands against it.
                page.title = joined();
                page.head_title = None;
            }
            "description" => page.description = Some(joined()),
            "date" => page.date = Some(joined()),
            "keywords" => page.keywords.extend(values),
            link if link == "image" || link.ends_with("_url") => {
                let resolved: Vec<String> = values
                    .iter()
                    .filter_map(|v| resolve(&page.url, v))
                    .collect();
                if !resolved.is_empty() {
                    page.fields.insert(name, resolved);
                }
            }
            _ => {
                page.fields.insert(name, values);
            }
        }
    }
}

/// `value` as an absolute http(s) URL, relative to `base`.
fn resolve(base: &str, value: &str) -> Option<String> {
    let url = reqwest::Url::parse(base).ok()?.join(value).ok()?;
    matches!(url.scheme(), "http" | "https").then(|| url.to_string())
}

/// Pagefind's site-wide rule: once any HTML page carries `data-pagefind-body`, the pages
/// without it are left out (the owner marked what is worth indexing). The count left out
/// goes to the build's report.
pub(crate) fn keep_marked(pages: &mut Vec<Page>, report: &mut Report) {
    let marked = pages.iter().filter(|p| p.pagefind_body).count();
    if marked == 0 {
        return;
    }
    let before = pages.len();
    pages.retain(|p| p.pagefind_body);
    let left_out = before - pages.len();
    if left_out > 0 {
        report.note(format!(
            "data-pagefind-body marks {marked} page(s): left out {left_out} HTML page(s) \
             without it, as Pagefind does"
        ));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn markup(html: &str) -> Markup {
        read(&Html::parse_document(html))
    }

    fn map<V: Clone>(pairs: &[(&str, V)]) -> BTreeMap<String, V> {
        pairs
            .iter()
            .map(|(k, v)| ((*k).to_owned(), v.clone()))
            .collect()
    }

    #[test]
    fn captures_read_text_attributes_and_a_final_inline_value() {
        let m = markup(
            r#"<a href="/" title="Homepage"
                  data-pagefind-meta="link_text, link_title[title], other:Freeform text, captured to the end">
                 Hello   World</a>
               <img src="/hero.png" alt="Hero" data-pagefind-meta="image[src], image_alt[alt], gone[nope]">"#,
        );
        assert_eq!(
            m.meta,
            map(&[
                ("image", "/hero.png".to_owned()),
                ("image_alt", "Hero".to_owned()),
                ("link_text", "Hello World".to_owned()),
                ("link_title", "Homepage".to_owned()),
                ("other", "Freeform text, captured to the end".to_owned()),
            ])
        );
    }

    #[test]
    fn filters_gather_every_value_and_ignore_all_hides_markup() {
        let m = markup(
            r#"<h1 data-section="Documentation" data-category="Article"
                   data-pagefind-filter="heading, tag[data-section], tag[data-category], author:Freeform, text">Hello World</h1>
               <span data-pagefind-filter="tag">Article</span>
               <aside data-pagefind-ignore><span data-pagefind-filter="tag">Kept</span></aside>
               <aside data-pagefind-ignore="all"><span data-pagefind-filter="tag">Hidden</span>
                 <p data-pagefind-meta="b">no</p></aside>
               <p data-pagefind-default-meta="b:fallback"></p>"#,
        );
        assert_eq!(
            m.filters,
            map(&[
                ("author", vec!["Freeform, text".to_owned()]),
                ("heading", vec!["Hello World".to_owned()]),
                (
                    "tag",
                    vec![
                        "Documentation".to_owned(),
                        "Article".to_owned(),
                        "Kept".to_owned()
                    ]
                ),
            ])
        );
        assert!(m.meta.is_empty(), "{:?}", m.meta);
        assert_eq!(m.default_meta, map(&[("b", "fallback".to_owned())]));
    }

    #[test]
    fn values_land_on_the_page_and_protected_keys_are_dropped() {
        let mut page = Page {
            url: "https://ex.org/posts/a/".into(),
            title: "From h1".into(),
            head_title: Some("From title - Site".into()),
            keywords: vec!["k".into()],
            ..Page::default()
        };
        let m = Markup {
            meta: map(&[
                ("title", "Meta title".to_owned()),
                ("image", "../hero.png".to_owned()),
                ("slides_url", "javascript:alert(1)".to_owned()),
                ("url", "https://evil.example/".to_owned()),
                ("Last Updated!", "2024-05-01".to_owned()),
            ]),
            default_meta: map(&[
                ("title", "Default".to_owned()),
                ("description", "Fallback text".to_owned()),
            ]),
            filters: map(&[
                ("keywords", vec!["bm25".to_owned()]),
                ("Tag", vec!["rust".to_owned(), "wasm".to_owned()]),
                ("tag", vec!["rust".to_owned()]),
                ("--", vec!["x".to_owned()]),
            ]),
        };
        apply(m, &mut page);
        assert_eq!(page.title, "Meta title");
        // The owner's title is not weighed against the <title> later.
        assert_eq!(page.head_title, None);
        assert_eq!(page.description.as_deref(), Some("Fallback text"));
        assert_eq!(page.keywords, ["k", "bm25"]);
        assert_eq!(page.url, "https://ex.org/posts/a/");
        assert_eq!(
            page.fields,
            map(&[
                ("image", vec!["https://ex.org/posts/hero.png".to_owned()]),
                ("last_updated", vec!["2024-05-01".to_owned()]),
                ("tag", vec!["rust".to_owned(), "wasm".to_owned()]),
            ])
        );
    }

    #[test]
    fn nested_bodies_count_once_and_hidden_ones_not_at_all() {
        let doc = Html::parse_document(
            r#"<body><div data-pagefind-body id="a"><p data-pagefind-body>x</p></div>
               <div data-pagefind-ignore="all"><p data-pagefind-body>y</p></div>
               <section data-pagefind-body id="b">z</section></body>"#,
        );
        let ids: Vec<_> = bodies(&doc)
            .iter()
            .map(|b| b.value().attr("id").unwrap_or(""))
            .collect();
        assert_eq!(ids, ["a", "b"]);
    }

    #[test]
    fn once_one_page_is_marked_unmarked_html_pages_are_left_out() {
        let page = |url: &str, marked: bool| Page {
            url: url.into(),
            pagefind_body: marked,
            ..Page::default()
        };
        let mut report = Report::default();
        let mut pages = vec![page("https://ex.org/a/", false)];
        keep_marked(&mut pages, &mut report);
        assert_eq!(pages.len(), 1, "no marked page: nothing changes");
        pages.push(page("https://ex.org/b/", true));
        keep_marked(&mut pages, &mut report);
        assert_eq!(pages, [page("https://ex.org/b/", true)]);
        assert!(report.notes[0].contains("left out 1"), "{:?}", report.notes);
    }
}
