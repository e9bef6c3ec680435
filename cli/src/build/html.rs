//! Extracting a page from built HTML (any generator): the main content as Markdown-ish
//! text that keeps the heading structure, plus title, canonical URL, language and
//! description.
//!
//! The main content is the page's `data-pagefind-body` elements (see [`super::pagefind`]),
//! else the first `<main>`, else the first `[role=main]`, else the only `<article>` if it
//! holds at least half the page's text, else `<body>` without its `<header>`, `<footer>`
//! and `<nav>`. Everywhere, `nav`, `aside`, scripts, styles, forms and anything marked
//! `data-rag-ignore`, `data-pagefind-ignore`, `hidden` or `aria-hidden="true"` are left out,
//! and so are language switchers (a block of links to the page in other languages): they
//! repeat on every page and answer nothing. In the `<body>` fallback, link sidebars before
//! the content and a section's menu at its head ([`head_navigation`]) are left out too.

use std::collections::HashSet;

use ego_tree::iter::Edge;
use ego_tree::{NodeId, NodeRef};
use scraper::{ElementRef, Html, Node, Selector};

use super::page::Page;
use super::pagefind;

/// Elements never part of the main text.
const SKIPPED: &[&str] = &[
    "script", "style", "noscript", "template", "svg", "nav", "aside", "form", "button", "select",
    "iframe", "object", "canvas", "head", "dialog",
];

/// The most nodes an `<aside>` in the main content may hold and still be read as a note
/// set in the text ([`aside_in_text`]): a long one is a sidebar, and a walk is bounded.
const ASIDE_MAX_NODES: usize = 2048;

/// Elements that start and end a block of text.
const BLOCKS: &[&str] = &[
    "p",
    "div",
    "section",
    "article",
    "main",
    "header",
    "footer",
    "ul",
    "ol",
    "li",
    "table",
    "thead",
    "tbody",
    "tr",
    "blockquote",
    "pre",
    "dl",
    "dt",
    "dd",
    "figure",
    "figcaption",
    "details",
    "summary",
    "hr",
    "address",
];

/// Why a document is not a page worth indexing.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Skip {
    /// `<meta name="robots" content="noindex">`.
    NoIndex,
    /// A `<meta http-equiv="refresh">` redirect stub (generators write these for aliases).
    Redirect,
    /// No text in the main content.
    Empty,
}

/// The noise measures of an HTML fragment taken whole as a page's main content (a
/// Markdown source rendered: it has no site chrome to find the content in).
pub(crate) fn measure_fragment(html: &str) -> super::noise::Structure {
    let doc = Html::parse_fragment(html);
    super::noise::measure(&Scope::of(doc.root_element(), false))
}

/// Extracts a page; `url` is where it was found (used when it names no canonical URL).
pub(crate) fn extract(html: &str, url: &str) -> Result<Page, Skip> {
    let doc = Html::parse_document(&super::xhtml::closed(html));
    for meta in doc.select(&sel("meta")) {
        let attr = |n: &str| meta.value().attr(n).unwrap_or("").to_ascii_lowercase();
        if attr("name") == "robots" && attr("content").contains("noindex") {
            return Err(Skip::NoIndex);
        }
        if attr("http-equiv") == "refresh" {
            return Err(Skip::Redirect);
        }
    }
    let mut scope = main_content(&doc, url);
    let views = source_views(&scope);
    scope.left_out.extend(views);
    let root = scope.root;
    let bodies = pagefind::bodies(&doc);
    let (content, anchors) = if bodies.is_empty() {
        render_with_anchors(&scope, true)
    } else {
        // Pagefind indexes no attribute a page does not ask it to, alt text included: its
        // bodies are read as it reads them.
        let parts: Vec<(String, Vec<(String, String)>)> = bodies
            .iter()
            .map(|b| render_with_anchors(&Scope::of(*b, false), false))
            .filter(|(p, _)| !p.is_empty())
            .collect();
        let anchors = parts.iter().flat_map(|(_, a)| a.iter().cloned()).collect();
        let text = parts.into_iter().map(|(p, _)| p).collect::<Vec<_>>();
        (text.join("\n\n"), anchors)
    };
    if content.trim().is_empty() {
        return Err(Skip::Empty);
    }
    let canonical = doc
        .select(&sel("link[rel][href]"))
        .find(|l| {
            l.value().attr("rel").is_some_and(|r| {
                r.split_whitespace()
                    .any(|t| t.eq_ignore_ascii_case("canonical"))
            })
        })
        .and_then(|l| l.value().attr("href"))
        .and_then(|href| reqwest::Url::parse(url).ok()?.join(href.trim()).ok())
        .filter(|u| matches!(u.scheme(), "http" | "https"))
        .map(|u| u.to_string());
    let h1_selector = sel("h1");
    let mut h1s = bodies
        .first()
        .copied()
        .unwrap_or(root)
        .select(&h1_selector)
        .filter(|h| !pagefind::hidden(*h) && !names_site(*h))
        .map(|h| heading_text(&text_of(h)))
        .filter(|t| !t.is_empty());
    let h1 = h1s.next();
    let h1_sections = h1s.next().is_some();
    let head = doc
        .select(&sel("title"))
        .map(text_of)
        .find(|t| !t.is_empty());
    // An `<h1>` title keeps the `<title>` beside it when they differ: on some sites the
    // `<h1>`s are the page's sections (`super::titles` decides across the site).
    let head_title = head.clone().filter(|t| h1.as_ref().is_some_and(|h| h != t));
    let title = h1
        .or(head)
        .or_else(|| meta_content(&doc, "meta[property='og:title']"))
        .unwrap_or_else(|| super::page::url_path(url));
    let lang = doc
        .root_element()
        .value()
        .attr("lang")
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .map(str::to_owned);
    let links = super::links::targets(&scope, url);
    let found_at = canonical
        .as_deref()
        .filter(|c| *c != url)
        .and_then(|_| super::links::key(url));
    let mut page = Page {
        url: canonical.unwrap_or_else(|| url.to_owned()),
        links,
        found_at,
        title,
        content,
        lang,
        description: meta_content(&doc, "meta[name='description']"),
        structure: Some(super::noise::measure(&scope)),
        pagefind_body: !bodies.is_empty(),
        head_title,
        h1_sections,
        anchors,
        ..Page::default()
    };
    pagefind::apply(pagefind::read(&doc), &mut page);
    Ok(page)
}

fn sel(css: &str) -> Selector {
    // Only the constant selectors of this file reach here; each is covered by a test.
    Selector::parse(css).unwrap_or_else(|_| unreachable!("bad built-in selector {css}"))
}

fn meta_content(doc: &Html, css: &str) -> Option<String> {
    doc.select(&sel(css))
        .filter_map(|m| m.value().attr("content"))
        .map(|c| collapse(c).trim().to_owned())
        .find(|c| !c.is_empty())
}

/// The `<aside>`s inside `root` that are part of its text ([`aside_in_text`]); none in the
/// `<body>` fallback, whose asides are the site's sidebars.
fn text_asides(root: ElementRef<'_>, fallback: bool) -> Vec<NodeId> {
    if fallback {
        return Vec::new();
    }
    let mut asides: Vec<NodeId> = root
        .descendants()
        .filter(|n| n.id() != root.id())
        .filter(|n| n.value().as_element().is_some_and(|e| e.name() == "aside"))
        .filter(|&n| aside_in_text(n))
        .map(|n| n.id())
        .collect();
    // Sorted, for `Scope::leaves_out` to look each element up in any number of them.
    asides.sort_unstable();
    asides
}

/// Whether an `<aside>` inside a main content that a page marks as such is part of its
/// text: a note or warning set beside the paragraph it qualifies (Hugo's documentation
/// theme writes its admonitions as asides, docutils its footnotes), told from a table of
/// contents, a box of related links or a "Share this" label by reading as prose: a
/// sentence, and most of its text outside links. An aside of more than [`ASIDE_MAX_NODES`]
/// nodes is no note and is not read through, so nested asides cost a bounded walk each.
fn aside_in_text(node: NodeRef<'_, Node>) -> bool {
    let (mut unlinked, mut linked, mut in_links) = (String::new(), 0usize, 0usize);
    // Any `<a>`, unlike the noise measures' links ([`super::noise::is_link`]): a page's
    // table of contents in an aside (Hugo's "What's on this Page") links to its own
    // anchors, and is still a box of links.
    let is_link = |n: &NodeRef<'_, Node>| n.value().as_element().is_some_and(|e| e.name() == "a");
    for (seen, edge) in node.traverse().enumerate() {
        if seen > 2 * ASIDE_MAX_NODES {
            return false;
        }
        match edge {
            Edge::Open(n) if is_link(&n) => in_links += 1,
            Edge::Close(n) if is_link(&n) => in_links = in_links.saturating_sub(1),
            Edge::Open(n) => {
                let Node::Text(t) = n.value() else {
                    continue;
                };
                if in_links > 0 {
                    linked += t.trim().len();
                } else {
                    // Each run of text a line of its own: a footnote's "[1]" label is
                    // no word leading its sentence.
                    unlinked.push_str(&t.split_whitespace().collect::<Vec<_>>().join(" "));
                    unlinked.push('\n');
                }
            }
            Edge::Close(_) => {}
        }
    }
    linked < unlinked.len() && super::noise::sentence_words(&unlinked) > 0
}

/// Where a page's main text is read.
pub(crate) struct Scope<'a> {
    /// The element holding the main content.
    pub(crate) root: ElementRef<'a>,
    /// Whether `root` is the `<body>` fallback, where the site's header and footer must be
    /// left out too.
    pub(crate) fallback: bool,
    /// Blocks left out as `<nav>` is: a fallback body's link sidebars ([`sidebars`]) and
    /// language switchers ([`language_switchers`]).
    left_out: Vec<NodeId>,
    /// The `<aside>`s that are part of the text ([`aside_in_text`]), found once (the page's
    /// text, its noise measures and its links each walk the scope), sorted.
    text_asides: Vec<NodeId>,
}

impl<'a> Scope<'a> {
    /// The whole of `root`, less what is always left out.
    fn of(root: ElementRef<'a>, fallback: bool) -> Self {
        Scope {
            root,
            fallback,
            left_out: Vec::new(),
            text_asides: text_asides(root, fallback),
        }
    }

    /// The main text of `root`: [`Scope::of`], its language switchers left out too.
    fn main(root: ElementRef<'a>, fallback: bool) -> Self {
        Scope {
            left_out: language_switchers(root),
            ..Scope::of(root, fallback)
        }
    }

    /// Whether `node` (inside the root) and all it holds are left out of the main text.
    fn leaves_out(&self, node: NodeRef<'_, Node>) -> bool {
        match node.value() {
            Node::Element(el) if node.id() != self.root.id() => {
                (skipped(el, self.fallback) && self.text_asides.binary_search(&node.id()).is_err())
                    || self.left_out.contains(&node.id())
            }
            _ => false,
        }
    }

    /// The root's tree as the main text reads it, in document order: each element left out
    /// (see the module's docs) is passed over whole, after `left_out` is shown it. The one
    /// walk the text, the noise measures and the sidebar test share, so they agree on what
    /// the page holds.
    pub(crate) fn edges<'s>(
        &'s self,
        mut left_out: impl FnMut(NodeRef<'a, Node>) + 's,
    ) -> impl Iterator<Item = Edge<'a, Node>> + 's {
        // While inside a left-out element, that element's id.
        let mut skipping = None;
        self.root.traverse().filter(move |edge| match edge {
            Edge::Open(node) => {
                if skipping.is_some() {
                    false
                } else if self.leaves_out(*node) {
                    skipping = Some(node.id());
                    left_out(*node);
                    false
                } else {
                    true
                }
            }
            Edge::Close(node) => {
                if skipping == Some(node.id()) {
                    skipping = None;
                    false
                } else {
                    skipping.is_none()
                }
            }
        })
    }
}

/// The element holding the main content (see the module's docs).
fn main_content<'d>(doc: &'d Html, url: &str) -> Scope<'d> {
    if let Some(m) = doc.select(&sel("main")).next() {
        return Scope::main(m, false);
    }
    if let Some(m) = doc.select(&sel("[role=main]")).next() {
        return Scope::main(m, false);
    }
    let body = doc.select(&sel("body")).next();
    let articles: Vec<ElementRef<'_>> = doc.select(&sel("article")).collect();
    if let [article] = articles[..] {
        // Generators also wrap one item of a page in `<article>` (Erlang/OTP's reference
        // pages: each exported function, under the module's description): the only
        // article is the page's content when it holds most of what the page shows.
        if body.is_none_or(|b| 2 * visible_chars(article, false) >= visible_chars(b, true)) {
            return Scope::main(article, false);
        }
    }
    match body {
        Some(body) => {
            let mut left_out = sidebars(body);
            left_out.extend(language_switchers(body));
            let mut scope = Scope {
                left_out,
                ..Scope::of(body, true)
            };
            scope.left_out.extend(head_navigation(&scope, url));
            scope
        }
        None => Scope::main(doc.root_element(), true),
    }
}

/// Fewest line numbers that make a `<pre>` a numbered listing ([`numbered_listing`]).
const LISTING_MIN_NUMBERS: usize = 10;
/// The share of a listing's lines its gutter numbers (each line has one; a blank line may
/// have none).
const LISTING_MIN_SHARE: f64 = 0.8;
/// Line numbers a listing may skip between two of its lines.
const LISTING_MAX_GAP: u32 = 10;
/// The share of a block named source code ([`names_source`]) that must be code.
const SOURCE_BLOCK_MIN_CODE: f64 = 0.9;

/// The source listings in a page that has text of its own besides them: the source of what
/// the page documents, which the generator shows on request (pdoc's "View Source" under each
/// module, class and function, the whole file again with its line numbers; RDoc's "click to
/// toggle source" under each method, in a `<div class="method-source-code">`), or a gutter
/// of bare numbers beside an example (Sphinx's `linenos` table): a line-numbered `<pre>`
/// ([`numbered_listing`]), or code in a block its class names source code
/// ([`names_source`]). They answer nothing the page's own text does not, and would make a
/// documented module a source listing (most of its text code) that the noise rules skip. A
/// page that is nothing but listings keeps them, and is skipped as a source listing
/// ([`super::noise::classify`]).
fn source_views(scope: &Scope<'_>) -> Vec<NodeId> {
    let (pre, classed) = (sel("pre"), sel("div[class], table[class], pre[class]"));
    let numbered = scope.root.select(&pre).filter(|p| numbered_listing(*p));
    let named = scope.root.select(&classed).filter(|el| names_source(*el));
    let listings: Vec<NodeId> = numbered.chain(named).map(|el| el.id()).collect();
    if listings.is_empty() {
        return listings;
    }
    let without = Scope {
        left_out: scope.left_out.iter().chain(&listings).copied().collect(),
        ..Scope::of(scope.root, scope.fallback)
    };
    if super::noise::says_something(&super::noise::measure(&without)) {
        listings
    } else {
        Vec::new()
    }
}

/// Whether a `<pre>` is a listing with its file's line numbers: bare numbers counting up
/// (gaps allowed, as a listing may skip lines) opening nearly all its lines, each a text
/// of its own, set apart from the code by markup as a gutter is. A list typed into
/// preformatted text ("1. Install") has its numbers in the line's text, and a highlighted
/// literal in code (`Array(1, 2, 3)`) opens no line: neither is a gutter.
fn numbered_listing(pre: ElementRef<'_>) -> bool {
    let mut next: Option<u32> = None;
    let (mut numbers, mut lines) = (0usize, 0usize);
    let mut line_start = true;
    for text in pre.text() {
        for (i, segment) in text.split('\n').enumerate() {
            let opens = i > 0 || line_start;
            if i > 0 {
                line_start = true;
            }
            let bare = segment.trim();
            if bare.is_empty() {
                continue;
            }
            if line_start {
                lines += 1;
            }
            let number = opens.then(|| bare.parse::<u32>().ok()).flatten();
            if let Some(n) = number {
                if next.is_none_or(|x| (x..=x.saturating_add(LISTING_MAX_GAP)).contains(&n)) {
                    numbers += 1;
                    next = Some(n.saturating_add(1));
                }
            }
            line_start = false;
        }
    }
    numbers >= LISTING_MIN_NUMBERS && numbers as f64 >= LISTING_MIN_SHARE * lines as f64
}

/// Whether a `<div>`, `<table>` or `<pre>` is code that its class names source code: two
/// words of the class (split at anything not a letter or digit) are `source code`, and nearly
/// all its text is code, as [`super::noise::measure`] counts it (RDoc's `<div
/// class="method-source-code">`; YARD's `<table class="source_code">`, its line numbers and
/// its code a `<pre>` each). A section about sources holds its heading and prose besides.
/// Examples are named by their language (MediaWiki's `source-cpp`, GitHub's
/// `highlight-source-python`) or in one word (pandoc's `sourceCode`): none of them is a
/// source view.
fn names_source(el: ElementRef<'_>) -> bool {
    let class = el.value().attr("class").unwrap_or("");
    let words: Vec<&str> = class
        .split(|c: char| !c.is_ascii_alphanumeric())
        .filter(|w| !w.is_empty())
        .collect();
    if !words.windows(2).any(|w| w == ["source", "code"]) {
        return false;
    }
    // Measured as a page's text is, so what the text leaves out (a copy button) counts for
    // neither side.
    let s = super::noise::measure(&Scope::of(el, false));
    s.chars > 0 && f64::from(s.code_chars) >= SOURCE_BLOCK_MIN_CODE * f64::from(s.chars)
}

/// Most characters (whitespace aside) a language switcher holds outside its links, in
/// texts with a letter: a label ("Available Languages:", "Translations").
const SWITCHER_MAX_OWN_CHARS: u32 = 40;

/// The blocks under `root` that only link to the page in other languages: two links or
/// more, each marking its target's language (`hreflang`, as HTML has a link to a
/// translation do) but perhaps one (the page's own language, linked to itself), and
/// besides its links no more than a label ([`SWITCHER_MAX_OWN_CHARS`]). The Apache HTTP
/// Server manual opens and closes each page with "Available Languages: en | fr | ja | ko |
/// tr", whose list differs from page to page, so the site-chrome rule (a line on half the
/// pages) misses it; a link to a translation inside a sentence stays with the sentence.
fn language_switchers(root: ElementRef<'_>) -> Vec<NodeId> {
    let mut found: Vec<NodeId> = Vec::new();
    // Each block is weighed once, however many of its links carry a mark: a page of
    // thousands of them in one block costs one walk of that block.
    let mut weighed: HashSet<NodeId> = HashSet::new();
    for link in root.select(&sel("a[href][hreflang]")) {
        let Some(block) = link
            .ancestors()
            .filter_map(ElementRef::wrap)
            .take_while(|el| el.id() != root.id())
            .find(|el| {
                matches!(
                    el.value().name(),
                    "p" | "div" | "ul" | "ol" | "dl" | "table"
                )
            })
        else {
            continue;
        };
        if !weighed.insert(block.id()) {
            continue;
        }
        if is_language_switcher(block) {
            found.push(block.id());
        }
    }
    found
}

/// Whether `block` is a language switcher ([`language_switchers`]), from its link profile.
fn is_language_switcher(block: ElementRef<'_>) -> bool {
    let p = LinkProfile::of(block);
    // The page's own language may be linked without a mark ("en", to itself).
    !p.heading && p.links >= 2 && p.links - p.marked <= 1 && p.own_chars <= SWITCHER_MAX_OWN_CHARS
}

/// Characters (whitespace aside) of the text the extraction keeps from `root`.
fn visible_chars(root: ElementRef<'_>, fallback: bool) -> usize {
    render(&Scope::of(root, fallback), false)
        .chars()
        .filter(|c| !c.is_whitespace())
        .count()
}

/// A sidebar holds at least this many links to elsewhere ...
const SIDEBAR_MIN_LINKS: u32 = 5;
/// ... in at least this many blocks (items, rows: a list, where a header's "Prev | Up |
/// Next" is one line) ...
const SIDEBAR_MIN_BLOCKS: u32 = 3;
/// ... and at least this share of its text inside them.
const SIDEBAR_MIN_LINK_SHARE: f64 = 0.6;
/// Characters of its own a content part without a heading holds beside a sidebar.
const SIDEBAR_MIN_CONTENT: u32 = 80;
/// Wrappers (an element alone holding the page) looked through for the sidebar's level.
const SIDEBAR_MAX_DEPTH: usize = 8;

/// The link sidebars of a page without `<main>`, `<nav>` or landmark roles: before the
/// part where the content starts (its first heading, or the most text of its own), a part with no heading whose text is mostly links, in
/// several blocks. Scribble (Racket's documentation) puts the manual's table of contents
/// there on every page; measured with the page, its numbered chapter links read as a
/// source listing's line numbers and its entries as an index, and its lines became part
/// of every page's text.
fn sidebars(body: ElementRef<'_>) -> Vec<NodeId> {
    // Down through wrappers to the level with several parts showing text; only those are
    // profiled (a wrapper's profile is the whole page's, taken again at each level).
    let mut level = body;
    let mut shown: Vec<ElementRef<'_>> = Vec::new();
    for _ in 0..SIDEBAR_MAX_DEPTH {
        shown = level
            .children()
            .filter_map(ElementRef::wrap)
            .filter(|el| !skipped(el.value(), true) && shows_text(*el))
            .collect();
        match shown.as_slice() {
            [only] => level = *only,
            _ => break,
        }
    }
    let parts: Vec<(ElementRef<'_>, LinkProfile)> = shown
        .into_iter()
        .map(|el| (el, LinkProfile::of(el)))
        .collect();
    // The content starts at the first part with a heading, else it is the part with the
    // most words of its own; a sidebar stands before it, as a layout's header, menu or
    // table of contents does. A list of links after the first heading is the page's own
    // (a homepage written straight into `<body>`: its name, then its papers).
    let main = match parts.iter().position(|(_, p)| p.heading) {
        Some(i) => i,
        None => {
            let Some(i) = parts
                .iter()
                .enumerate()
                .max_by_key(|&(i, (_, p))| (p.own_chars, std::cmp::Reverse(i)))
                .map(|(i, _)| i)
            else {
                return Vec::new();
            };
            // A content part without a heading must say something (a footer's "Last
            // updated" beside a page that is a list of links is not the page).
            if parts[i].1.own_chars < SIDEBAR_MIN_CONTENT {
                return Vec::new();
            }
            i
        }
    };
    parts[..main]
        .iter()
        .filter(|(_, p)| p.is_sidebar())
        .map(|(el, _)| el.id())
        .collect()
}

/// A navigation box holds at least this many links to elsewhere (and, as a sidebar,
/// [`SIDEBAR_MIN_LINK_SHARE`] of its text in them).
const NAV_BOX_MIN_LINKS: u32 = 20;
/// Characters of words (links' included) the content may show between its first heading
/// and a navigation box: a tagline ("From cppreference.com"), a breadcrumb trail.
const NAV_BOX_MAX_LEAD: u32 = 40;
/// Blocks weighed as a navigation box, at most, per page: each weighing walks the whole
/// block, so a page of many nested wrappers costs at most this many walks of itself
/// (cppreference's menu is the fifth block after the title).
const NAV_BOX_MAX_TRIES: usize = 16;

/// The navigation box at the head of a page's content, if there is one: right after the
/// first heading, before the content says anything of its own (but a tagline), a block of
/// many links to other pages ([`NAV_BOX_MIN_LINKS`]) that is mostly links and holds no
/// heading, followed by text of the page's own. A wiki's section menu sits there
/// (cppreference's, listing every page of the section on each of them): left in, every
/// page of a section matched every other's name, and a short page read as a link list.
fn head_navigation(scope: &Scope<'_>, url: &str) -> Option<NodeId> {
    let up = section_keys(url);
    let base = reqwest::Url::parse(url).ok().filter(|_| !up.is_empty())?;
    let mut heading = false;
    let mut lead = 0u32;
    let mut tries = 0;
    let mut found = None;
    let mut skipping: Option<NodeId> = None;
    for edge in scope.edges(|_| {}) {
        match edge {
            Edge::Open(node) if skipping.is_none() => match node.value() {
                Node::Element(e) if heading_level(e.name()).is_some() => {
                    if heading && found.is_none() && lead > 0 {
                        return None;
                    }
                    heading = true;
                    skipping = Some(node.id());
                }
                Node::Element(e) if heading && found.is_none() && BLOCKS.contains(&e.name()) => {
                    let Some(el) = ElementRef::wrap(node) else {
                        continue;
                    };
                    tries += 1;
                    if tries > NAV_BOX_MAX_TRIES {
                        return None;
                    }
                    let p = LinkProfile::of(el);
                    if !p.heading
                        && p.links >= NAV_BOX_MIN_LINKS
                        && f64::from(p.link_chars) >= SIDEBAR_MIN_LINK_SHARE * f64::from(p.chars)
                        && links_up(el, &base, &up)
                    {
                        found = Some(node.id());
                        lead = 0;
                        skipping = Some(node.id());
                    }
                }
                Node::Text(t) if heading => {
                    if t.chars().any(char::is_alphabetic) {
                        lead += t.chars().filter(|c| !c.is_whitespace()).count() as u32;
                    }
                    if found.is_none() && lead > NAV_BOX_MAX_LEAD {
                        return None;
                    }
                    if found.is_some() && lead >= SIDEBAR_MIN_CONTENT {
                        return found;
                    }
                }
                _ => {}
            },
            Edge::Close(node) if skipping == Some(node.id()) => skipping = None,
            _ => {}
        }
    }
    None
}

/// The keys ([`super::links::key`]) the page at `url` names its section by: its folder
/// (`cpp/algorithm/`, which its `index.html` stands for) and the folder's own page
/// (`cpp/algorithm.html` for `cpp/algorithm/sort.html`, as a wiki's subpages hang under
/// their parent). A folder's index page is its folder: its section is the one above.
/// Empty for a page of the site's root folder.
fn section_keys(url: &str) -> Vec<u64> {
    let Ok(page) = reqwest::Url::parse(url) else {
        return Vec::new();
    };
    let own = super::links::key_of(&page);
    let folder = match page.join("./") {
        Ok(f) if super::links::key_of(&f) == own => page.join("../"),
        other => other,
    };
    let Some(folder) = folder.ok().filter(|f| f.path() != "/") else {
        return Vec::new();
    };
    let as_page = format!("{}.html", folder.as_str().trim_end_matches('/'));
    [super::links::key_of(&folder), super::links::key(&as_page)]
        .into_iter()
        .flatten()
        .filter(|&k| Some(k) != own)
        .collect()
}

/// Whether a link in `el` leads to one of `up`, the page's section ([`section_keys`]): a
/// menu of the section's pages leads back to the section; a table of contents leads down
/// to the parts of the page it opens.
fn links_up(el: ElementRef<'_>, base: &reqwest::Url, up: &[u64]) -> bool {
    el.select(&sel("a[href]")).any(|a| {
        a.value()
            .attr("href")
            .and_then(|h| base.join(h.trim()).ok())
            .and_then(|t| super::links::key_of(&t))
            .is_some_and(|k| up.contains(&k))
    })
}

/// Whether the element shows any text (what the extraction leaves out aside); stops at the
/// first.
fn shows_text(el: ElementRef<'_>) -> bool {
    Scope::of(el, true).edges(|_| {}).any(|edge| {
        matches!(edge, Edge::Open(node) if matches!(node.value(), Node::Text(t) if !t.trim().is_empty()))
    })
}

/// How much of an element's text sits in links.
#[derive(Default)]
struct LinkProfile {
    /// Characters of its text (whitespace aside).
    chars: u32,
    /// Characters inside links to elsewhere.
    link_chars: u32,
    /// Characters outside links, in texts with a letter (a table of contents' chapter
    /// numbers beside its links are not text of its own).
    own_chars: u32,
    /// Links to elsewhere.
    links: u32,
    /// Links to elsewhere that name their target's language (`hreflang`): a translation.
    marked: u32,
    /// Blocks holding a link.
    linked_blocks: u32,
    /// Whether it holds a heading.
    heading: bool,
}

impl LinkProfile {
    fn of(el: ElementRef<'_>) -> Self {
        let mut p = LinkProfile::default();
        // Depth inside links; whether the current block has a link yet.
        let (mut link, mut linked) = (0u32, false);
        for edge in Scope::of(el, true).edges(|_| {}) {
            match edge {
                Edge::Open(node) => match node.value() {
                    Node::Element(e) => {
                        if heading_level(e.name()).is_some() {
                            p.heading = true;
                        }
                        if BLOCKS.contains(&e.name()) {
                            linked = false;
                        }
                        if super::noise::is_link(e) {
                            link += 1;
                            p.links += 1;
                            p.marked += u32::from(e.attr("hreflang").is_some());
                            if !linked {
                                linked = true;
                                p.linked_blocks += 1;
                            }
                        }
                    }
                    Node::Text(t) => {
                        let n = t.chars().filter(|c| !c.is_whitespace()).count() as u32;
                        p.chars += n;
                        if link > 0 {
                            p.link_chars += n;
                        } else if t.chars().any(char::is_alphabetic) {
                            p.own_chars += n;
                        }
                    }
                    _ => {}
                },
                Edge::Close(node) => {
                    if let Node::Element(e) = node.value() {
                        if super::noise::is_link(e) {
                            link = link.saturating_sub(1);
                        }
                    }
                }
            }
        }
        p
    }

    fn is_sidebar(&self) -> bool {
        !self.heading
            && self.links >= SIDEBAR_MIN_LINKS
            && self.linked_blocks >= SIDEBAR_MIN_BLOCKS
            && f64::from(self.link_chars) >= SIDEBAR_MIN_LINK_SHARE * f64::from(self.chars)
    }
}

/// ARIA landmark roles that mark what the skipped elements are (a Sphinx sidebar is a
/// `<div role="navigation">`, its search box a `<div role="search">`).
const SKIPPED_ROLES: &[&str] = &["navigation", "search", "complementary"];
/// The roles of `<header>` and `<footer>`, left out as they are: only outside `<main>`.
const FALLBACK_ROLES: &[&str] = &["banner", "contentinfo"];

fn skipped(el: &scraper::node::Element, fallback: bool) -> bool {
    let name = el.name();
    let role = el.attr("role").map(str::trim).unwrap_or("");
    SKIPPED.contains(&name)
        || SKIPPED_ROLES.iter().any(|r| role.eq_ignore_ascii_case(r))
        || (fallback && matches!(name, "header" | "footer"))
        || (fallback && FALLBACK_ROLES.iter().any(|r| role.eq_ignore_ascii_case(r)))
        || el.attr("data-rag-ignore").is_some()
        || pagefind::ignored(el)
        || el.attr("hidden").is_some()
        || el.attr("aria-hidden") == Some("true")
}

/// The scope's text as Markdown: `#` headings, blank lines between blocks, `- ` items,
/// and, with `alt_text`, an image's alt text where it stands. Walks the tree iteratively,
/// so deeply nested markup cannot exhaust the stack.
fn render(scope: &Scope<'_>, alt_text: bool) -> String {
    render_with_anchors(scope, alt_text).0
}

/// [`render`], and each heading line written with the id a link to its section takes
/// ([`anchor_of`]), in order.
fn render_with_anchors(scope: &Scope<'_>, alt_text: bool) -> (String, Vec<(String, String)>) {
    let mut out = Writer::default();
    for edge in scope.edges(|_| {}) {
        match edge {
            Edge::Open(node) => match node.value() {
                Node::Element(el) => {
                    out.pre_marked |= out.pre > 0 && super::noise::marks_code(el);
                    out.open(el.name());
                    if heading_level(el.name()).is_some() {
                        out.anchor = ElementRef::wrap(node).and_then(anchor_of);
                    }
                    // An image's alt text stands for it, as a screen reader reads it
                    // (Doxygen draws the word LaTeX as an image in running text).
                    let image = alt_text && el.name() == "img";
                    if let Some(alt) = el.attr("alt").filter(|_| image) {
                        if !names_a_file(alt) {
                            out.text(&format!(" {alt} "));
                        }
                    }
                }
                Node::Text(t) => out.text(t),
                _ => {}
            },
            Edge::Close(node) => {
                if let Node::Element(el) = node.value() {
                    out.close(el.name());
                }
            }
        }
    }
    let anchors = std::mem::take(&mut out.anchors);
    (out.finish(), anchors)
}

/// Preformatted text as Markdown paragraphs: split at its blank lines, each line trimmed,
/// lines of only rules and marks (`=====`) dropped, and a line that Markdown would read as
/// a heading or a fence escaped (Vim's `#` command opens a line of its own).
fn preformatted_paragraphs(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut paragraph: Vec<String> = Vec::new();
    for line in text.lines().map(str::trim).chain([""]) {
        if line.is_empty() {
            if !paragraph.is_empty() {
                out.push(std::mem::take(&mut paragraph).join("\n"));
            }
        } else if line.chars().any(char::is_alphanumeric) {
            let markup =
                line.starts_with('#') || line.starts_with("```") || line.starts_with("~~~");
            paragraph.push(if markup {
                format!("\\{line}")
            } else {
                line.to_owned()
            });
        }
    }
    out
}

/// The id a link to the section a heading opens takes, as generators mark it: the
/// heading's own `id` (asciidoc, MkDocs, rustdoc, qdoc); an anchor inside it, named (`<a
/// id>`, `<a name>`: Doxygen, gtk-doc, Node.js) or a permalink to this page's fragment
/// (Sphinx's `¶`); an empty anchor just before it (`<a name="x"></a><h2>`, older
/// Texinfo and qdoc); or the element it opens (`<section id>` of Sphinx, DocBook's `<div
/// class="sect1" id>` a few wrappers up).
fn anchor_of(h: ElementRef<'_>) -> Option<String> {
    let usable = |id: &str| {
        let id = id.trim();
        let fits = !id.is_empty()
            && !id.contains(|c: char| c.is_whitespace() || matches!(c, '{' | '}' | '%'));
        fits.then(|| id.to_owned())
    };
    if let Some(id) = h.value().attr("id").and_then(usable) {
        return Some(id);
    }
    let inside = || {
        h.descendants()
            .filter_map(ElementRef::wrap)
            .map(|e| e.value())
    };
    // An anchor, not any element with an id (rustdoc's title holds a copy button's).
    let named = inside()
        .filter(|e| matches!(e.name(), "a" | "span"))
        .find_map(|e| {
            let name = (e.name() == "a").then(|| e.attr("name")).flatten();
            e.attr("id").or(name).and_then(usable)
        });
    let permalink = || {
        inside()
            .filter(|e| e.name() == "a")
            .find_map(|e| e.attr("href")?.strip_prefix('#').and_then(usable))
    };
    if let Some(id) = named.or_else(permalink) {
        return Some(id);
    }
    // An empty element with an id just before it, or an empty permalink (rustdoc's
    // `<a href="#method.clone" class="anchor"></a><h4>`, whose own link goes to the trait).
    let before = h
        .prev_siblings()
        .find(|n| !matches!(n.value(), Node::Text(t) if t.trim().is_empty()))
        .and_then(ElementRef::wrap)
        .filter(|e| e.text().all(|t| t.trim().is_empty()));
    if let Some(id) = before.and_then(|e| {
        let v = e.value();
        let link = (v.name() == "a").then(|| v.attr("href")?.strip_prefix('#'));
        v.attr("id")
            .or(v.attr("name"))
            .or(link.flatten())
            .and_then(usable)
    }) {
        return Some(id);
    }
    // The element the heading opens: each wrapper up whose first child it is.
    let mut node = *h;
    for _ in 0..5 {
        let parent = node.parent()?;
        let first = parent.children().find(|c| match c.value() {
            Node::Element(_) => true,
            Node::Text(t) => !t.trim().is_empty(),
            _ => false,
        });
        if first.map(|f| f.id()) != Some(node.id()) {
            return None;
        }
        let id = parent.value().as_element().and_then(|e| e.attr("id"));
        if let Some(id) = id.and_then(usable) {
            return Some(id);
        }
        node = parent;
    }
    None
}

/// Whether an image's alt text is only its file's name or path, which some generators
/// write where the author gave none (`../_images/postmortem.png`): no words of the page.
fn names_a_file(alt: &str) -> bool {
    let alt = alt.trim().to_ascii_lowercase();
    !alt.contains(char::is_whitespace)
        && (alt.contains('/')
            || [".png", ".jpg", ".jpeg", ".gif", ".svg", ".webp"]
                .iter()
                .any(|ext| alt.ends_with(ext)))
}

/// Builds the Markdown text block by block.
#[derive(Default)]
struct Writer {
    blocks: Vec<String>,
    current: String,
    /// Depth of `<pre>` elements: their whitespace is kept.
    pre: usize,
    /// How many blocks were written when the outermost `<pre>` opened: its blocks are
    /// fenced when it closes.
    pre_start: usize,
    /// Whether an element inside the outermost `<pre>` marked its text as code
    /// ([`super::noise::marks_code`]).
    pre_marked: bool,
    /// The unmarked `<pre>` blocks that may be the page's text: where each stands in
    /// `blocks` (fenced), its text and measure ([`super::noise::Preformatted`]).
    preformatted: Vec<(usize, String, super::noise::Preformatted)>,
    /// The level of the heading being written, if any.
    heading: Option<usize>,
    /// The id of the heading being written, if it has one.
    anchor: Option<String>,
    /// Each heading line written with an id, and the id, in order.
    anchors: Vec<(String, String)>,
}

impl Writer {
    fn open(&mut self, name: &str) {
        if let Some(level) = heading_level(name) {
            self.brk();
            self.heading = Some(level);
        } else if name == "br" {
            self.current.push('\n');
        } else if BLOCKS.contains(&name) {
            self.brk();
            if name == "li" {
                self.current.push_str("- ");
            }
            if name == "pre" {
                if self.pre == 0 {
                    self.pre_start = self.blocks.len();
                    self.pre_marked = false;
                }
                self.pre += 1;
            }
        } else if matches!(name, "td" | "th") && !self.current.trim().is_empty() {
            self.current.push_str(" | ");
        }
    }

    fn close(&mut self, name: &str) {
        if heading_level(name).is_some() {
            let text = heading_text(&self.current);
            if let (Some(level), false) = (self.heading.take(), text.is_empty()) {
                let heading = format!("{} {text}", "#".repeat(level));
                // A heading repeated with nothing between is said once (Erlang/OTP's pages
                // carry their title in a top bar and again over the content).
                if self.blocks.last() != Some(&heading) {
                    if let Some(id) = self.anchor.take() {
                        self.anchors.push((heading.clone(), id));
                    }
                    self.blocks.push(heading);
                }
            }
            self.anchor = None;
            self.current.clear();
        } else if BLOCKS.contains(&name) {
            // The block ends while still inside `<pre>`, so its whitespace is kept.
            self.brk();
            if name == "pre" {
                self.pre = self.pre.saturating_sub(1);
                if self.pre == 0 {
                    self.fence_code();
                }
            }
        }
    }

    /// Puts the blocks of the `<pre>` just closed in one fenced code block: without the
    /// fence a code line starting with `#` (a shell or Python comment, `#include`, a
    /// debugger's `#0  0x...` frame) reads as a heading, which cuts the page's sections
    /// there and names them after the comment.
    ///
    /// A `<pre>` that no highlighter marked and that reads as text may turn out to be the
    /// page's text ([`Writer::finish`]): it is kept aside for that.
    fn fence_code(&mut self) {
        let start = self.pre_start.min(self.blocks.len());
        if start == self.blocks.len() {
            return;
        }
        let code = self.blocks.split_off(start).join("\n");
        // A fence the code does not itself start a line with (a Markdown example's own).
        let fence = if code.lines().any(|l| l.trim_start().starts_with("```")) {
            "~~~"
        } else {
            "```"
        };
        let block = format!("{fence}\n{code}\n{fence}");
        // The same code again with nothing between is shown once: VitePress writes each
        // block twice, highlighted for the light and for the dark theme, one of them hidden
        // by the style sheet.
        if self.blocks.last() == Some(&block) {
            return;
        }
        let measure = super::noise::Preformatted::of(&code, self.pre_marked);
        if measure.reads_as_text() {
            self.preformatted
                .push((self.blocks.len(), code.clone(), measure));
        }
        self.blocks.push(block);
    }

    fn text(&mut self, text: &str) {
        if self.pre > 0 && self.heading.is_none() {
            self.current.push_str(text);
            return;
        }
        let collapsed = collapse(text);
        if collapsed.trim().is_empty() {
            if !self.current.is_empty() && !self.current.ends_with([' ', '\n']) {
                self.current.push(' ');
            }
            return;
        }
        if self.current.ends_with([' ', '\n']) || self.current.is_empty() {
            self.current.push_str(collapsed.trim_start());
        } else {
            self.current.push_str(&collapsed);
        }
    }

    /// Ends the current block.
    fn brk(&mut self) {
        if self.heading.is_some() {
            // A block inside a heading (rare) stays part of the heading.
            return;
        }
        let block = if self.pre > 0 {
            self.current.trim_matches('\n').trim_end().to_owned()
        } else {
            self.current
                .lines()
                .map(str::trim)
                .filter(|l| !l.is_empty())
                .collect::<Vec<_>>()
                .join("\n")
        };
        // A list item's marker alone is no block.
        if !block.is_empty() && block != "-" {
            self.blocks.push(block);
        }
        self.current.clear();
    }

    fn finish(mut self) -> String {
        self.heading = None;
        self.brk();
        // `<pre>`s that are the page's text (Vim's help set whole in one, an RFC in one per
        // printed page) are written as paragraphs, so that they are read, split and
        // searched as the page's text, not left out as a listing.
        let words = self
            .blocks
            .iter()
            .map(|b| super::noise::count_words(b))
            .sum();
        let pres = std::mem::take(&mut self.preformatted);
        let measures: Vec<super::noise::Preformatted> = pres.iter().map(|p| p.2).collect();
        if super::noise::Preformatted::are_page_text(&measures, words) {
            for (at, text, _) in pres {
                self.blocks[at] = preformatted_paragraphs(&text).join("\n\n");
            }
        }
        self.blocks.join("\n\n")
    }
}

fn heading_level(name: &str) -> Option<usize> {
    match name.as_bytes() {
        [b'h', d @ b'1'..=b'6'] => Some(usize::from(d - b'0')),
        _ => None,
    }
}

/// A heading's text on one line, without the permalink marks generators append
/// (`¶`, `#`, `§`, `🔗`, `↑`).
fn heading_text(text: &str) -> String {
    // A permalink's glyph: a mark, a link back to the top (RDoc ends each heading with "¶
    // ↑"), or an icon font's character from Unicode's private use area (MkDocs' theme draws
    // its link icon as U+F0C1), which means nothing as text.
    let glyph = |c: char| {
        matches!(
            c,
            '¶' | '#' | '§' | '🔗' | '↑' | ' ' | '\u{E000}'..='\u{F8FF}'
        )
    };
    collapse(text)
        .trim()
        .trim_end_matches(glyph)
        .trim()
        .to_owned()
}

/// Whether a heading is only a link to another page: a site's name in its header
/// (`<h1><a href="../index.html">Django documentation</a></h1>`, on every page of some
/// Sphinx themes), not the page's title. A page's own heading may end in a link to itself
/// (`<a class="headerlink" href="#t">¶</a>`), which is not another page.
fn names_site(h: ElementRef<'_>) -> bool {
    let linked: String = h
        .select(&sel("a[href]"))
        .filter(|a| {
            a.value()
                .attr("href")
                .is_some_and(|u| !u.trim().starts_with('#'))
        })
        .map(text_of)
        .collect();
    let all: String = text_of(h).split_whitespace().collect();
    !all.is_empty() && linked.split_whitespace().collect::<String>() == all
}

/// The element's text, a `<br>` standing for the space it shows as (javadoc's
/// `<h1>Uses of Class<br>org.apache...Range</h1>` is not "Classorg").
fn text_of(el: ElementRef<'_>) -> String {
    let mut text = String::new();
    for node in el.descendants() {
        match node.value() {
            Node::Text(t) => text.push_str(t),
            Node::Element(e) if e.name() == "br" => text.push(' '),
            _ => {}
        }
    }
    collapse(&text).trim().to_owned()
}

/// Runs of whitespace folded to one space; zero-width spaces and byte-order marks (U+200B,
/// U+FEFF) dropped, as a reader sees them: DocBook and qdoc put one inside a long
/// identifier where a line may break (`administrable_role_\u{200b}authorizations`,
/// `QT_AUTO_SCREEN\u{200b}_SCALE_FACTOR`), which would otherwise split it, and Docusaurus
/// ends every heading with one, inside its anchor link.
fn collapse(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut space = false;
    for c in text.chars() {
        if matches!(c, '\u{200b}' | '\u{feff}') {
            continue;
        }
        if c.is_whitespace() {
            space = true;
        } else {
            if space {
                out.push(' ');
            }
            space = false;
            out.push(c);
        }
    }
    if space {
        out.push(' ');
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    const PAGE: &str = r##"<!doctype html><html lang="en-GB"><head>
        <title>Teaching | My Site</title>
        <meta name="description" content="  Courses   I teach. ">
        <link rel="canonical" href="/teaching/">
        <script>var x = "not text";</script></head>
      <body><header><a href="/">My Site</a></header>
        <nav><a href="/a">Menu item</a></nav>
        <main><h1>Teaching <a class="headerlink" href="#t">¶</a></h1>
          <p>I teach <b>two</b>
             courses.</p>
          <div data-rag-ignore><p>Share this page</p></div>
          <h2 id="ml">Machine learning</h2>
          <ul><li>Lectures</li><li>Labs</li></ul>
          <aside>Related posts</aside>
          <pre>fn main() {
    println!("hi");
}</pre>
        </main><footer>© 2025</footer></body></html>"##;

    #[test]
    fn landmark_roles_are_left_out_as_their_elements_are() {
        let html = r##"<html><body>
            <div role="banner"><p>Site banner</p></div>
            <div class="section"><h1>Queries</h1><p>Filter the rows.</p></div>
            <div class="sphinxsidebar" role="navigation"><h3>Table of contents</h3>
              <ul><li><a href="other.html">Aggregation</a></li></ul></div>
            <div id="searchbox" role="search"><h3>Quick search</h3></div>
            <div role="complementary"><p>Related posts</p></div>
            <div role="contentinfo"><p>Last update: today</p></div>
            </body></html>"##;
        let p = extract(html, "https://ex.org/q.html").unwrap();
        assert!(p.content.contains("Filter the rows."), "{}", p.content);
        for chrome in [
            "Site banner",
            "Aggregation",
            "Quick search",
            "Related posts",
            "Last update",
        ] {
            assert!(!p.content.contains(chrome), "{chrome}: {}", p.content);
        }
        // Inside <main>, a banner or contentinfo role is the page's own (as <header> is).
        let html = r##"<html><body><main><h1>T</h1><div role="banner"><p>Intro banner</p></div>
            <p>Body.</p></main></body></html>"##;
        let p = extract(html, "https://ex.org/t.html").unwrap();
        assert!(p.content.contains("Intro banner"), "{}", p.content);
    }

    #[test]
    fn a_list_of_the_page_in_other_languages_is_left_out() {
        // The Apache HTTP Server manual's line, its own language linked without a mark.
        let html = r##"<html><body><div id="page-header"><p>Modules | Directives</p></div>
            <div class="toplang"><p><span>Available Languages: </span>
              <a href="../../en/mod/mod_alias.html" title="English">&nbsp;en&nbsp;</a> |
              <a href="../../fr/mod/mod_alias.html" hreflang="fr" rel="alternate">&nbsp;fr&nbsp;</a> |
              <a href="../../ko/mod/mod_alias.html" hreflang="ko" rel="alternate">&nbsp;ko&nbsp;</a></p></div>
            <h1>Apache Module mod_alias</h1>
            <p>Maps parts of the file system into the document tree. A French reading is in
              <a href="../../fr/mod/mod_alias.html" hreflang="fr">the French manual</a> and
              <a href="../../ko/mod/mod_alias.html" hreflang="ko">the Korean one</a>.</p>
            <ul><li><a href="../../de/index.html" hreflang="de">Deutsch</a></li>
              <li><a href="../../ja/index.html" hreflang="ja">日本語</a></li></ul>
            </body></html>"##;
        let p = extract(html, "https://ex.org/mod/mod_alias.html").unwrap();
        assert!(!p.content.contains("Available Languages"), "{}", p.content);
        assert!(!p.content.contains("Deutsch"), "{}", p.content);
        // A sentence linking to a translation says more than a label: it stays whole.
        assert!(p.content.contains("the French manual"), "{}", p.content);
        assert!(
            p.content.contains("Maps parts of the file system"),
            "{}",
            p.content
        );
        // Inside <main> as well.
        let html = r##"<html><body><main><h1>Intro</h1><p>Read on.</p>
            <p>Translations: <a href="de.html" hreflang="de">de</a>
              <a href="fr.html" hreflang="fr">fr</a></p></main></body></html>"##;
        let p = extract(html, "https://ex.org/intro.html").unwrap();
        assert!(
            p.content.contains("Read on.") && !p.content.contains("Translations"),
            "{}",
            p.content
        );
        // A language mark on an anchor that links nowhere counts for nothing.
        let html = r##"<html><body><main><h1>Intro</h1><p>Read on:
            <a href="a.html">first</a> <a href="b.html">second</a> <a hreflang="fr">fr</a>
            <a hreflang="de">de</a> <a hreflang="ja">ja</a></p></main></body></html>"##;
        let p = extract(html, "https://ex.org/intro.html").unwrap();
        assert!(p.content.contains("second"), "{}", p.content);
    }

    #[test]
    fn a_permalink_icon_is_not_part_of_a_heading() {
        // MkDocs' readthedocs theme: the permalink is an icon font's private-use glyph.
        let html = "<html><body><main><h1 id=\"license\">License<a class=\"headerlink\" \
                    href=\"#license\">\u{f0c1}</a></h1><p>The legal stuff.</p>\
                    <h2>Included projects<a href=\"#inc\">\u{f0c1}</a></h2><p>Themes.</p>\
                    </main></body></html>";
        let p = extract(html, "https://ex.org/about/license.html").unwrap();
        assert_eq!(p.title, "License");
        assert!(
            p.content.contains("## Included projects\n") && !p.content.contains('\u{f0c1}'),
            "{:?}",
            p.content
        );
    }

    #[test]
    fn zero_width_spaces_and_byte_order_marks_are_not_text() {
        // Docusaurus ends each heading with a zero-width space inside its anchor link;
        // DocBook breaks long identifiers with one.
        let html = "<html><body><main><h1>Intro</h1><h2 id=\"start\">Getting Started<a \
                    class=\"hash-link\" href=\"#start\">\u{200b}</a></h2><p>See \
                    administrable_role_\u{200b}authorizations, \u{feff}today.</p></main></body></html>";
        let p = extract(html, "https://ex.org/docs/intro").unwrap();
        assert!(
            p.content.contains("## Getting Started\n")
                && p.content
                    .contains("See administrable_role_authorizations, today."),
            "{:?}",
            p.content
        );
    }

    #[test]
    fn a_line_break_in_a_heading_reads_as_a_space() {
        // javadoc's class-use pages.
        let html = "<html><body><main><h1 class=\"title\">Uses of Class<br>\
                    org.example.Range</h1><p>Packages that use Range.</p></main></body></html>";
        let p = extract(html, "https://ex.org/class-use/Range.html").unwrap();
        assert_eq!(p.title, "Uses of Class org.example.Range");
    }

    #[test]
    fn a_heading_that_only_links_elsewhere_names_the_site_not_the_page() {
        // A Sphinx theme's layout: no <main>, the site's name as an <h1> link in a header
        // <div> on every page, then the page's own <h1> with its permalink.
        let html = r##"<html><head><title>Making queries — Pony docs</title></head><body>
            <div id="hd"><h1><a href="../../index.html">Pony 3.2 docs</a></h1></div>
            <div id="bd"><div class="section">
              <h1>Making queries<a class="headerlink" href="#making-queries">¶</a></h1>
              <p>Once you have created your data models, you query them.</p>
            </div></div></body></html>"##;
        let p = extract(html, "https://ex.org/topics/queries.html").unwrap();
        assert_eq!(p.title, "Making queries");
        // A heading of plain text with a link inside is the page's own.
        let html = r##"<html><body><main><h1>Using <a href="/pony">Pony</a> here</h1>
            <p>Text.</p></main></body></html>"##;
        let p = extract(html, "https://ex.org/using.html").unwrap();
        assert_eq!(p.title, "Using Pony here");
    }

    #[test]
    fn an_image_in_the_text_reads_as_its_alt_text_unless_that_is_a_file_name() {
        // Doxygen draws the word LaTeX as a formula image in running text; Sphinx writes
        // the image's path where the author gave no alt text.
        let html = r##"<html><body><main><h1>Output</h1>
            <p>The <img class="formulaInl" alt="{\LaTeX}" src="form_0.png"/> output is
               compiled by a <img alt="" src="dot.png"> compiler.</p>
            <p><img alt="Admin index page" src="admin.png"></p>
            <p><img alt="../_images/postmortem.png" src="../_images/postmortem.png"></p>
            </main></body></html>"##;
        let p = extract(html, "https://ex.org/output.html").unwrap();
        assert_eq!(
            p.content,
            "# Output\n\nThe {\\LaTeX} output is compiled by a compiler.\n\nAdmin index page"
        );
    }

    #[test]
    fn main_content_keeps_headings_and_drops_navigation() {
        let p = extract(PAGE, "https://ex.org/teaching/index.html").unwrap();
        assert_eq!(p.title, "Teaching");
        assert_eq!(p.url, "https://ex.org/teaching/");
        assert_eq!(p.lang.as_deref(), Some("en-GB"));
        assert_eq!(p.description.as_deref(), Some("Courses I teach."));
        assert_eq!(
            p.content,
            "# Teaching\n\nI teach two courses.\n\n## Machine learning\n\n- Lectures\n\n- Labs\n\n\
             ```\nfn main() {\n    println!(\"hi\");\n}\n```"
        );
    }

    #[test]
    fn a_code_block_written_twice_for_two_colour_themes_is_kept_once() {
        // VitePress 1.0 with Shiki's two themes: each block twice in a row, the dark one
        // hidden by the style sheet.
        let html = r#"<html><body><main><h1>Tutorial</h1><p>Install it:</p>
            <div class="language-sh"><pre class="shiki github-light vp-code-light"><code><span class="line"><span style="color:#6F42C1">npm</span> install rollup</span></code></pre>
            <pre class="shiki github-dark vp-code-dark"><code><span class="line"><span style="color:#B392F0">npm</span> install rollup</span></code></pre></div>
            <p>Then run it twice:</p><pre><code>rollup</code></pre><p>and</p><pre><code>rollup</code></pre>
            </main></body></html>"#;
        let p = extract(html, "https://ex.org/tutorial/").unwrap();
        assert_eq!(
            p.content.matches("npm install rollup").count(),
            1,
            "{}",
            p.content
        );
        // The same code twice with text between is the page's own repetition.
        assert_eq!(
            p.content.matches("```\nrollup\n```").count(),
            2,
            "{}",
            p.content
        );
    }

    #[test]
    fn code_is_fenced_so_its_comment_lines_are_no_headings() {
        // R's manual shows a debugger's backtrace; shell and Python examples open with
        // `# comments`; a Markdown example holds its own fence.
        let html = r#"<html><body><main><h1>Debugging</h1>
            <p>Run it under gdb:</p>
            <pre class="example">#0  0x00397682 in _int_free () from /lib/tls/libc.so.6
#1  0x00397fe9 in free () from /lib/tls/libc.so.6</pre>
            <h2>Install</h2>
            <pre><span># install the tools</span>
pip install rag</pre>
            <pre>```toml
a = 1
```</pre></main></body></html>"#;
        let p = extract(html, "https://ex.org/debugging.html").unwrap();
        let headings: Vec<String> = shared::kb::headings(&p.content)
            .map(|(_, _, title)| title)
            .collect();
        assert_eq!(headings, ["Debugging", "Install"]);
        assert!(p.content.contains(
            "```\n#0  0x00397682 in _int_free () from /lib/tls/libc.so.6\n\
             #1  0x00397fe9 in free () from /lib/tls/libc.so.6\n```"
        ));
        assert!(p
            .content
            .contains("```\n# install the tools\npip install rag\n```"));
        assert!(p.content.ends_with("~~~\n```toml\na = 1\n```\n~~~"));
    }

    /// A page laid out as Scribble (Racket's documentation) lays out every page: the
    /// manual's numbered table of contents in a `<div>` beside the content, a search box
    /// among the content's "top | prev | up | next" links.
    const SCRIBBLE: &str = r#"<html><head><title>2.5 vline%</title></head><body>
        <div class="tocset"><div class="tocview"><table>
          <tr><td></td><td><a href="index.html">Embedded GUI: Widgets Within Editors</a></td></tr>
          <tr><td align="right">1&nbsp;</td><td><a href="Containers.html">Containers</a></td></tr>
          <tr><td align="right">2&nbsp;</td><td><a href="Controls.html">Controls</a></td></tr>
          <tr><td align="right">3&nbsp;</td><td><a href="Control_Snips.html">Control Snips</a></td></tr>
          <tr><td align="right">4&nbsp;</td><td><a href="Helpers.html">Helpers</a></td></tr>
          <tr><td align="right">5&nbsp;</td><td><a href="Snip_Functions.html">Snip Functions</a></td></tr>
          <tr><td></td><td><a href="doc-index.html">Index</a></td></tr>
        </table></div></div>
        <div class="maincolumn"><div class="main">
          <div class="navsettop"><span class="navleft"><form class="searchform">
            <input class="searchbox" type="text" placeholder="...search manuals..."/></form>
            <a href="../index.html">top</a></span><span class="navright">
            <a href="hline_.html">&larr; prev</a> <a href="Controls.html">up</a>
            <a href="text-button-snip_.html">next &rarr;</a></span></div>
          <h4>vline%</h4>
          <p><a href="x.html">vline%</a> : <a href="c.html">class?</a> superclass:
             <a href="s.html">snip-wrapper%</a></p>
          <p>Displays a vertical line across the region that is inserted into.</p>
          <p>(new <a href="v.html">vline%</a> [parent parent]) &rarr;
             (is-a?/c <a href="v.html">vline%</a>)</p>
        </div></div></body></html>"#;

    /// A wiki page's content as cppreference's offline archive lays it out: the title, a
    /// tagline, then its section's menu (every page of the section, and the section's own
    /// page above them), then the page's text.
    fn wiki_page(menu_links: &str) -> String {
        let mut menu = String::new();
        for name in [
            "sort",
            "stable_sort",
            "partial_sort",
            "nth_element",
            "lower_bound",
        ]
        .iter()
        .cycle()
        .take(24)
        {
            menu.push_str(&format!(
                r#"<tr><td><a href="{name}.html">{name}</a></td></tr>"#
            ));
        }
        format!(
            r#"<html><body><div id="content"><h1 id="firstHeading">std::sort</h1>
            <div id="bodyContent"><div id="siteSub">From the wiki</div>
            <div id="mw-content-text"><div class="t-navbar">{menu_links}<table>{menu}</table></div>
            <p>Sorts the elements in the range in ascending order. The order of equal
            elements is not guaranteed to be preserved.</p>
            <p>Elements are compared using the given comparison function object, which
            returns true when its first argument is ordered before its second. The sort is
            not stable: use stable_sort where equal elements must keep their order, and
            partial_sort where only the first few elements of the range are wanted.</p>
            <h2>Complexity</h2><p>On average N log N comparisons.</p>
            </div></div></div></body></html>"#
        )
    }

    #[test]
    fn a_menu_of_the_sections_pages_at_the_head_of_the_content_is_left_out() {
        let url = "https://ex.org/w/cpp/algorithm/sort.html";
        let p = extract(
            &wiki_page(r#"<a href="../algorithm.html">Algorithms</a>"#),
            url,
        )
        .unwrap();
        assert!(p.content.contains("Sorts the elements"), "{}", p.content);
        assert!(!p.content.contains("nth_element"), "{}", p.content);
        let s = p.structure.unwrap();
        assert_eq!(super::super::noise::classify(&s), None, "{s:?}");
        // Left in, the menu made the short page a link list.
        let p = extract(&wiki_page(""), url).unwrap();
        assert!(p.content.contains("nth_element"), "{}", p.content);
        let s = p.structure.unwrap();
        assert!(super::super::noise::classify(&s).is_some(), "{s:?}");
    }

    #[test]
    fn a_table_of_contents_leading_down_to_the_parts_of_its_page_stays() {
        // A DocBook chapter's contents: links to its sections, none back up to a section
        // above the page, so it is the page's own list of what it covers.
        let url = "https://ex.org/docs/15/datatype.html";
        let p = extract(
            &wiki_page(r#"<a href="datatype-numeric.html">Numeric</a>"#),
            url,
        )
        .unwrap();
        assert!(p.content.contains("nth_element"), "{}", p.content);
        // A page at the site's root has no section above it.
        let p = extract(
            &wiki_page(r#"<a href="index.html">Home</a>"#),
            "https://ex.org/sort.html",
        )
        .unwrap();
        assert!(p.content.contains("nth_element"), "{}", p.content);
        // An index page's own folder is the page: its section is the folder above.
        let p = extract(
            &wiki_page(r#"<a href="index.html">This folder</a>"#),
            "https://ex.org/w/cpp/algorithm/index.html",
        )
        .unwrap();
        assert!(p.content.contains("nth_element"), "{}", p.content);
        let p = extract(
            &wiki_page(r#"<a href="../../cpp.html">C++</a>"#),
            "https://ex.org/w/cpp/algorithm/index.html",
        )
        .unwrap();
        assert!(!p.content.contains("nth_element"), "{}", p.content);
    }

    /// A module page as pdoc writes it: the docstring, then the module's whole source behind
    /// a "View Source" toggle, each line in a span of its own led by its number.
    fn pdoc_page(docstring: &str) -> String {
        let lines = [
            "\"\"\"The optional bytecode cache system.\"\"\"",
            "import errno",
            "import marshal",
            "",
            "class Bucket:",
            "    def __init__(self, environment, key, checksum):",
            "        self.environment = environment",
            "        self.key = key",
            "",
            "    def load_bytecode(self, f):",
            "        magic = f.read(len(bc_magic))",
            "        self.code = marshal.load(f)",
        ];
        let source: String = lines
            .iter()
            .enumerate()
            .map(|(i, l)| {
                let n = i + 1;
                format!(
                    r##"<span id="L-{n}"><a href="#L-{n}"><span class="linenos">{n:>3}</span></a>{l}
</span>"##
                )
            })
            .collect();
        format!(
            r#"<html><body><nav class="pdoc"><a href="../jinja2.html">jinja2</a></nav>
            <main class="pdoc"><section class="module-info"><h1 class="modulename">jinja2.bccache</h1>
            {docstring}
            <input id="mod-view-source" class="view-source-toggle-state" type="checkbox">
            <label class="view-source-button" for="mod-view-source"><span>View Source</span></label>
            <div class="pdoc-code codehilite"><pre>{source}</pre></div></section></main></body></html>"#
        )
    }

    #[test]
    fn a_documented_page_s_numbered_source_is_left_out_and_a_bare_listing_stays_one() {
        let url = "https://ex.org/jinja2/bccache.html";
        let docs = "<div class=\"docstring\"><p>The optional bytecode cache system. This is \
                    useful if you have very complex template situations and the compilation \
                    of all those templates slows down your application too much.</p></div>";
        let p = extract(&pdoc_page(docs), url).unwrap();
        assert!(
            p.content.contains("complex template situations"),
            "{}",
            p.content
        );
        assert!(!p.content.contains("marshal.load"), "{}", p.content);
        let s = p.structure.unwrap();
        assert_eq!(s.numbered_lines, 0, "{s:?}");
        assert_eq!(super::super::noise::classify(&s), None, "{s:?}");
        // With no text of its own the listing is all the page is: kept as its text, and the
        // page a source listing.
        let p = extract(&pdoc_page(""), url).unwrap();
        assert!(p.content.contains("marshal.load"), "{}", p.content);
        let s = p.structure.unwrap();
        assert!(s.numbered_lines >= LISTING_MIN_NUMBERS as u32, "{s:?}");
    }

    #[test]
    fn a_numbered_gutter_goes_with_its_numbers_and_a_typed_list_stays() {
        // Sphinx's `linenos`: a table of the gutter's `<pre>` and the code's.
        let html = r#"<html><body><main><h1>Tutorial</h1><p>Write this into the file
            spider.py and run it from the project's folder.</p>
            <table class="highlighttable"><tr><td class="linenos"><div class="linenodiv"><pre>{gutter}</pre></div></td><td class="code"><div class="highlight"><pre><span class="kn">import</span> scrapy
<span class="k">class</span> QuotesSpider(scrapy.Spider):
    name = <span class="s2">"quotes"</span></pre></div></td></tr></table>
            <pre>{steps}</pre><pre>{typed}</pre>
            <pre>&gt;&gt;&gt; for i in range(1, 5): print(i)
<span class="mi">1</span>
<span class="mi">2</span>
<span class="mi">3</span>
<span class="mi">4</span></pre></main></body></html>"#;
        let gutter: String = (1..=12)
            .map(|n| format!("<span class=\"normal\">{n}</span>\n"))
            .collect();
        let steps: String = (1..=12)
            .map(|n| format!("{n}\nStep number {n}.\n"))
            .collect();
        let typed: String = (1..=12).map(|n| format!("{n}. Do thing {n}\n")).collect();
        let html = html
            .replace("{gutter}", &gutter)
            .replace("{steps}", &steps)
            .replace("{typed}", &typed);
        let p = extract(&html, "https://ex.org/intro/tutorial.html").unwrap();
        let c = &p.content;
        assert!(c.contains("class QuotesSpider(scrapy.Spider)"), "{c}");
        assert!(!c.contains("10\n11\n12"), "{c}");
        // Numbers alone on half the lines between steps are no gutter; a numbered list
        // typed as text is none either, nor a program's few lines of numbers.
        assert!(c.contains("Step number 12."), "{c}");
        assert!(c.contains("12. Do thing 12"), "{c}");
        assert!(c.contains("print(i)\n1\n2\n3\n4"), "{c}");
    }

    #[test]
    fn code_in_a_block_its_class_names_source_is_left_out_of_a_documented_page() {
        // RDoc: each method's source in a `<div class="method-source-code">`, shown by a
        // click, as YARD's in a `<table class="source_code">`; pandoc's examples are
        // `<div class="sourceCode">` and MediaWiki's `<div class="ruby source-ruby">`, which
        // name no source code.
        let page = |docs: &str| {
            format!(
                r#"<html><body><main><h1>class String</h1>
                <div class="method-detail">{docs}
                <div class="method-source-code" id="split-source"><pre>static VALUE
rb_str_split_m(int argc, VALUE *argv, VALUE str)
{{ return rb_ary_new(); }}</pre></div></div>
                <table class="source_code"><tr><td><pre class="lines">18
19</pre></td><td><pre class="code">def yard_source_of_split
end</pre></td></tr></table>
                <div class="sourceCode"><pre class="sourceCode ruby">"a,b".split(",")</pre></div>
                <div class="ruby source-ruby"><pre>"a b".split</pre></div>
                </main></body></html>"#
            )
        };
        let docs = "<div class=\"method-heading\">split(pattern) → an_array \
                    <span class=\"method-click-advice\">click to toggle source</span></div>\
                    <div class=\"method-description\"><p>Divides the string into substrings \
                    based on a delimiter, returning an array of these substrings.</p></div>";
        let p = extract(&page(docs), "https://ex.org/String.html").unwrap();
        let c = &p.content;
        assert!(c.contains("Divides the string"), "{c}");
        assert!(!c.contains("rb_str_split_m"), "{c}");
        assert!(!c.contains("yard_source_of_split"), "{c}");
        assert!(c.contains(r#""a,b".split(",")"#), "{c}");
        assert!(c.contains(r#""a b".split"#), "{c}");
        // A page with nothing but the code keeps it.
        let p = extract(&page(""), "https://ex.org/String.html").unwrap();
        assert!(p.content.contains("rb_str_split_m"), "{}", p.content);
    }

    #[test]
    fn a_table_of_contents_beside_the_content_is_left_out_like_nav() {
        let p = extract(SCRIBBLE, "https://ex.org/embedded-gui/vline_.html").unwrap();
        assert!(p.content.contains("Displays a vertical line"));
        assert!(!p.content.contains("Control Snips"), "{}", p.content);
        let s = p.structure.unwrap();
        assert_eq!(s.numbered_lines, 0, "{s:?}");
        assert!(!s.search_form, "{s:?}");
        assert_eq!(super::super::noise::classify(&s), None, "{s:?}");
    }

    #[test]
    fn a_list_of_links_in_text_written_straight_into_the_body_stays() {
        // A homepage without wrappers: its list of papers is its own.
        let html = r#"<html><body><h1>Jane Doe</h1><p>I study retrieval.</p>
            <h2>Papers</h2><ul>
            <li><a href="a.pdf">Alpha</a></li><li><a href="b.pdf">Beta</a></li>
            <li><a href="c.pdf">Gamma</a></li><li><a href="d.pdf">Delta</a></li>
            <li><a href="e.pdf">Epsilon</a></li></ul><p>Contact me by mail.</p></body></html>"#;
        let p = extract(html, "https://ex.org/").unwrap();
        assert!(p.content.contains("- Epsilon"), "{}", p.content);
    }

    #[test]
    fn the_content_is_no_sidebar_however_many_links_it_holds() {
        // A page that is itself a list of links, with nothing beside it, keeps its list
        // for the noise rules to judge.
        let html = r#"<html><body><div><p>Favourite sites:</p><ul>
            <li><a href="a.html">Alpha</a></li><li><a href="b.html">Beta</a></li>
            <li><a href="c.html">Gamma</a></li><li><a href="d.html">Delta</a></li>
            <li><a href="e.html">Epsilon</a></li></ul></div>
            <div><p>Last updated 2024.</p></div></body></html>"#;
        let p = extract(html, "https://ex.org/links.html").unwrap();
        assert!(p.content.contains("- Epsilon"), "{}", p.content);
    }

    #[test]
    fn without_main_the_body_is_used_minus_header_footer_and_nav() {
        let html = r#"<html><head><title>Plain</title></head><body>
            <header>Site name</header><nav>Home About</nav>
            <h2>Section</h2><p>Body text.</p><footer>Footer text</footer></body></html>"#;
        let p = extract(html, "https://ex.org/plain.html").unwrap();
        assert_eq!(p.content, "## Section\n\nBody text.");
        assert_eq!(p.title, "Plain");
        assert_eq!(p.url, "https://ex.org/plain.html");
        assert_eq!(p.lang, None);
    }

    #[test]
    fn a_note_set_aside_in_the_content_is_text_and_a_box_of_links_is_not() {
        // Hugo's documentation theme: the page's description and each admonition are
        // `<aside>`s inside `<main>`; a box of related links there is still chrome, and so
        // is a table of contents linking to the page's own anchors.
        let html = r##"<body><aside><p>The site's sidebar, in prose.</p></aside><main>
            <h1>.AddDate</h1><aside class="description"><p>Adds years, months and days.</p></aside>
            <p>Examples.</p><aside class="admonition note"><div><p>Hugo normalizes a day that
            does not exist, as <a href="https://go.dev/">Go</a> does.</p></div></aside>
            <aside class="related"><p><a href="/a/">Format</a> <a href="/b/">Unix</a></p></aside>
            <aside><h4>On this page</h4><p><a href="#syntax">The syntax of the function
            explained</a></p></aside></main></body>"##;
        let content = extract(html, "https://ex.org/adddate/").unwrap().content;
        assert_eq!(
            content,
            "# .AddDate\n\nAdds years, months and days.\n\nExamples.\n\n\
             Hugo normalizes a day that does not exist, as Go does."
        );
        // Without a main content, the body's asides are the site's sidebars.
        let html = r#"<body><h2>Section</h2><p>Body text.</p>
            <aside><p>About the author, in prose.</p></aside></body>"#;
        assert_eq!(
            extract(html, "https://ex.org/p.html").unwrap().content,
            "## Section\n\nBody text."
        );
    }

    #[test]
    fn a_long_aside_is_a_sidebar_and_is_not_read_through() {
        let spans =
            "<span>A sentence of the sidebar's own prose here. </span>".repeat(ASIDE_MAX_NODES);
        let html = format!("<body><main><p>Body text.</p><aside>{spans}</aside></main></body>");
        let content = extract(&html, "https://ex.org/p.html").unwrap().content;
        assert_eq!(content, "Body text.");
    }

    #[test]
    fn hugo_s_description_and_note_asides_are_in_the_text() {
        // Hugo 0.111's documentation as Hugo builds it (`functions/adddate/`, cut): the
        // description and the one note beside the examples are `<aside>`s in `<main>`.
        let path = format!(
            "{}/tests/data/noise/hugo-adddate.html",
            env!("CARGO_MANIFEST_DIR")
        );
        let html = std::fs::read_to_string(path).unwrap();
        let p = extract(&html, "https://gohugo.io/functions/adddate/").unwrap();
        assert!(p
            .content
            .contains("Returns the time corresponding to adding"));
        assert!(p
            .content
            .contains("When adding months or years, Hugo normalizes"));
    }

    #[test]
    fn role_main_and_a_single_article_count_as_main_content() {
        let html = r#"<body><div class="nav">x</div><div role="main"><p>Inside.</p></div></body>"#;
        assert_eq!(extract(html, "https://ex.org/").unwrap().content, "Inside.");
        let html =
            r#"<body><p>Outside.</p><article><p>Inside, the post itself.</p></article></body>"#;
        assert_eq!(
            extract(html, "https://ex.org/").unwrap().content,
            "Inside, the post itself."
        );
    }

    #[test]
    fn a_heading_repeated_with_nothing_between_is_kept_once() {
        let html = r#"<body><div class="topbar"><h1>lists</h1></div><div id="content">
            <h1>lists</h1><p>List processing functions.</p><h2>Exports</h2><h2>Exports</h2>
            <p>x</p><h1>lists</h1></div></body>"#;
        let content = extract(html, "https://ex.org/lists.html").unwrap().content;
        assert_eq!(
            content,
            "# lists\n\nList processing functions.\n\n## Exports\n\nx\n\n# lists"
        );
    }

    #[test]
    fn an_article_holding_one_item_of_the_page_is_not_its_content() {
        // As Erlang/OTP's reference page for a module with one function: the module's
        // description, then the function in the page's only `<article>`.
        let html = r#"<body><nav><a href="a.html">every module</a></nav><div id="content">
            <h1>observer</h1><p>Observer is a graphical tool for observing the
            characteristics of Erlang systems: process information, ETS tables and
            supervisor trees.</p><h3>Exports</h3><article class="func"><h4>start() -> ok</h4>
            <p>Starts the Observer GUI.</p></article></div></body>"#;
        let content = extract(html, "https://ex.org/observer.html")
            .unwrap()
            .content;
        assert!(content.contains("graphical tool"), "{content}");
        assert!(content.contains("Starts the Observer GUI."), "{content}");
        assert!(!content.contains("every module"), "{content}");
    }

    #[test]
    fn noindex_pages_redirect_stubs_and_empty_pages_are_skipped() {
        let noindex = r#"<meta name="robots" content="noindex, follow"><main>x</main>"#;
        assert_eq!(extract(noindex, "https://ex.org/"), Err(Skip::NoIndex));
        let stub = r#"<meta http-equiv="refresh" content="0; url=/new/"><p>x</p>"#;
        assert_eq!(extract(stub, "https://ex.org/"), Err(Skip::Redirect));
        let empty = r#"<main><nav>only nav</nav></main>"#;
        assert_eq!(extract(empty, "https://ex.org/"), Err(Skip::Empty));
    }

    #[test]
    fn deeply_nested_markup_does_not_overflow_the_stack() {
        // (html5ever's tree building is quadratic in nesting depth, so the depth stays
        // moderate; a recursive walk would still overflow a test thread's stack.)
        let html = format!("{}text{}", "<div>".repeat(10_000), "</div>".repeat(10_000));
        assert_eq!(extract(&html, "https://ex.org/").unwrap().content, "text");
    }

    #[test]
    fn a_canonical_link_to_another_scheme_is_ignored() {
        let html = r#"<link rel="canonical" href="javascript:alert(1)"><p>x</p>"#;
        assert_eq!(
            extract(html, "https://ex.org/a/").unwrap().url,
            "https://ex.org/a/"
        );
    }
    /// The (heading line, id) pairs of `html`'s main text.
    fn anchors(html: &str) -> Vec<(String, String)> {
        extract(html, "https://x.test/p.html").unwrap().anchors
    }

    #[test]
    fn a_heading_takes_the_id_its_generator_marks_its_section_with() {
        let html = r##"<html><body><main>
            <h1 id="own">Own id</h1><p>a</p>
            <h2><a class="anchor" id="inner"></a>Anchor inside</h2><p>b</p>
            <h2><a name="named"></a>Named anchor</h2><p>c</p>
            <h2>Permalink<a class="headerlink" href="#perma">¶</a></h2><p>d</p>
            <h2 id="rdoc">Back to top<span><a href="#rdoc">¶</a> <a href="#top">↑</a></span></h2><p>d2</p>
            <a name="before"></a>
            <h2>Anchor before</h2><p>e</p>
            <a href="#self" class="anchor"></a><h3>Permalink before <a href="other.html#x">x</a></h3>
            <p>e2</p>
            <section id="wrapper"><h2>Section opened</h2><p>f</p></section>
            <div class="sect1" id="docbook"><div class="titlepage"><div><div>
              <h2 class="title">Wrapped deep</h2></div></div></div><p>g</p></div>
            <div id="not-first"><p>h</p><h2>Not the first</h2></div>
            <h2>Copy<button id="copy-path">copy</button></h2><p>i</p>
            <h2>No id</h2><p>j</p>
            <h2 id="has space">Bad id</h2><p>k</p>
            </main></body></html>"##;
        let got = anchors(html);
        let want = [
            ("# Own id", "own"),
            ("## Anchor inside", "inner"),
            ("## Named anchor", "named"),
            ("## Permalink", "perma"),
            ("## Back to top", "rdoc"),
            ("## Anchor before", "before"),
            ("### Permalink before x", "self"),
            ("## Section opened", "wrapper"),
            ("## Wrapped deep", "docbook"),
        ];
        let want: Vec<(String, String)> = want
            .iter()
            .map(|(l, i)| (l.to_string(), i.to_string()))
            .collect();
        assert_eq!(got, want);
    }

    #[test]
    fn real_generators_headings_keep_their_ids() {
        let fixture = |name: &str| {
            let path = format!("{}/tests/data/{name}", env!("CARGO_MANIFEST_DIR"));
            anchors(&std::fs::read_to_string(path).unwrap())
        };
        let has = |got: &[(String, String)], line: &str, id: &str| {
            assert!(
                got.iter().any(|(l, i)| l == line && i == id),
                "{line} {{#{id}}} not in {got:?}"
            );
        };
        // qdoc: the id on the heading.
        has(
            &fixture("noise/qdoc-class.html"),
            "## Properties",
            "properties",
        );
        // rustdoc: the id on the heading, a permalink inside it.
        let rust = fixture("noise/rustdoc-trait.html");
        has(
            &rust,
            "## Required Associated Types",
            "required-associated-types",
        );
        assert!(rust.iter().all(|(_, i)| i != "copy-path"), "{rust:?}");
        // rustdoc: an empty permalink just before an impl's heading.
        assert!(
            rust.iter()
                .any(|(l, i)| l.starts_with("### impl FromStr for IpAddr") && i == "impl-FromStr"),
            "{rust:?}"
        );
        // mdBook: the id on the heading.
        has(
            &fixture("noise/mdbook-example.html"),
            "# Argument parsing",
            "argument-parsing",
        );
        // Doxygen: an empty anchor inside the heading.
        let doxygen = fixture("sites/doxygen/setup.html");
        assert!(
            doxygen.iter().any(|(_, i)| i == "setup_step0"),
            "{doxygen:?}"
        );
    }
}
