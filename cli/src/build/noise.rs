//! Generator noise: pages a documentation generator writes beside the real ones that answer
//! no question (link indexes, search pages, source listings, redirect stubs, print-all
//! pages), recognised by their structure, never by one generator's file names.
//!
//! [`measure`] takes a page's numbers while its HTML is parsed (how much of the main text
//! sits in links, in `<pre>`/`<code>`, whether a search form is there, a run of line
//! numbers); [`sift`] reads them, and for print-all pages compares each page's headings with
//! the other pages' titles. The thresholds were chosen on real generator output (asciidoc,
//! Sphinx, rustdoc, DocBook, Doxygen: see `docs/build.md`).

use ego_tree::iter::Edge;
use scraper::{ElementRef, Node};
use serde::{Deserialize, Serialize};
use std::collections::HashMap;

use super::page::Page;

/// What the main content of an HTML page (or a Markdown source, rendered) measures: the
/// numbers the noise rules read.
/// Characters are non-whitespace characters; words are whitespace-separated runs holding a
/// letter or digit (a Chinese, Japanese or Korean character counts as a word).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct Structure {
    /// Characters of the main text.
    pub(crate) chars: u32,
    /// Characters inside links (`<a href>` to another page or place; not `#anchors`).
    pub(crate) link_chars: u32,
    /// Characters inside `<pre>` or `<code>`.
    pub(crate) code_chars: u32,
    /// Words of the main text.
    pub(crate) words: u32,
    /// Words outside links, code and headings: the page's own prose.
    pub(crate) prose_words: u32,
    /// Links, as counted for [`Structure::link_chars`].
    pub(crate) links: u32,
    /// Blocks of text (paragraphs, list items, table rows, ...; headings not counted).
    pub(crate) blocks: u32,
    /// Blocks that are an index entry: at most [`ENTRY_MAX_WORDS`] words, a third of
    /// their characters inside links or a table row led by a link.
    pub(crate) entries: u32,
    /// Prose words (as [`Structure::prose_words`]) in blocks that are not index entries:
    /// what a page says besides its list of links.
    pub(crate) loose_words: u32,
    /// Characters outside links (prose and code) of the blocks that are not index
    /// entries before the page's [`INDEX_MIN_ENTRIES`]th entry: what a page opens with
    /// before any list it carries.
    pub(crate) opening_chars: u32,
    /// The most prose words (as [`Structure::prose_words`]) of any one block: a
    /// sentence of the page's own, or only labels.
    pub(crate) longest_prose: u32,
    /// The most prose words of any one block without a link that ends as a sentence: a
    /// sentence the page says on its own, where a stub's one sentence points to its link
    /// ("moved to ...") and a one-entry list's introduces it ("Here is a list of all
    /// documented files with brief descriptions:").
    pub(crate) unlinked_prose: u32,
    /// Bare line numbers in ascending order (`1`, `2`, `3`, ... each a text of its own,
    /// gaps of up to [`LINE_GAP`] allowed): a source listing's gutter.
    pub(crate) numbered_lines: u32,
    /// Whether the main content holds a search form.
    pub(crate) search_form: bool,
    /// Whether it was measured off a Markdown source rendered ([`super::markdown`]): a
    /// source has no site chrome, so it does not count towards the chrome's share
    /// ([`chrome_entries`]) when a build reads both kinds.
    #[serde(default)]
    pub(crate) source: bool,
}

/// The kinds of generator noise, in the order the summary lists them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) enum Noise {
    /// Mostly links: indexes, module lists, tag/category/archive listings, tables of
    /// contents.
    Links,
    /// A search form and no content of its own.
    Search,
    /// A source-code listing (text in `<pre>`/`<code>` with line numbers).
    Source,
    /// A stub: a redirect (`<meta http-equiv=refresh>`), or a tiny body with a link or
    /// two ("moved to ...", a generator's empty "Main Page" with its footer).
    Redirect,
    /// One page concatenating many others (its headings are other pages' titles).
    PrintAll,
    /// A few other pages' openings, each under its page's title: a blog's index, a tag,
    /// category or author page.
    Listing,
}

impl Noise {
    /// Every kind, in summary order.
    pub(crate) const ALL: [Noise; 6] = [
        Noise::Links,
        Noise::Search,
        Noise::Source,
        Noise::Redirect,
        Noise::PrintAll,
        Noise::Listing,
    ];

    fn label(self) -> &'static str {
        match self {
            Noise::Links => "link lists",
            Noise::Search => "search pages",
            Noise::Source => "source listings",
            Noise::Redirect => "stubs (redirects, near-empty pages)",
            Noise::PrintAll => "print-all pages",
            Noise::Listing => "post listings (blog, tag and author pages: other pages' openings)",
        }
    }
}

/// How many pages of each kind were skipped (or, with `keep_all`, found and kept), with a
/// few example paths each, and how many duplicates were collapsed.
#[derive(Debug, Default)]
pub(crate) struct Tally {
    /// Per kind: the count and up to [`SAMPLES`] example URL paths.
    found: HashMap<Noise, (usize, Vec<String>)>,
    /// Pages folded into another as its alternates.
    pub(crate) collapsed: usize,
    /// Pages marked as release notes.
    pub(crate) release_notes: usize,
    /// Whether noise was kept rather than skipped.
    pub(crate) kept: bool,
}

/// Example paths remembered per kind.
const SAMPLES: usize = 3;

impl Tally {
    /// Counts one page of this kind.
    pub(crate) fn add(&mut self, kind: Noise, path: String) {
        let (n, samples) = self.found.entry(kind).or_default();
        *n += 1;
        if samples.len() < SAMPLES {
            samples.push(path);
        }
    }

    /// Pages of this kind.
    pub(crate) fn count(&self, kind: Noise) -> usize {
        self.found.get(&kind).map_or(0, |(n, _)| *n)
    }

    /// The summary: "skipped 12 link lists, 3 source listings; 4 duplicates collapsed",
    /// or `None` when there is nothing to say.
    pub(crate) fn summary(&self) -> Option<String> {
        let kinds: Vec<String> = Noise::ALL
            .iter()
            .filter(|k| self.count(**k) > 0)
            .map(|k| format!("{} {}", self.count(*k), k.label()))
            .collect();
        let mut parts = Vec::new();
        if !kinds.is_empty() {
            let verb = if self.kept { "kept" } else { "skipped" };
            parts.push(format!("{verb} {}", kinds.join(", ")));
        }
        if self.collapsed > 0 {
            parts.push(format!("{} duplicates collapsed", self.collapsed));
        }
        if self.release_notes > 0 {
            parts.push(format!("{} release notes", self.release_notes));
        }
        (!parts.is_empty()).then(|| parts.join("; "))
    }

    /// One line per kind with its examples, for the notes.
    pub(crate) fn examples(&self) -> Vec<String> {
        Noise::ALL
            .iter()
            .filter_map(|k| {
                let (n, samples) = self.found.get(k)?;
                Some(format!("{n} {}, e.g. {}", k.label(), samples.join(", ")))
            })
            .collect()
    }
}

/// Measures the main content of `scope`, leaving out what the text extraction leaves out
/// ([`super::html::Scope::edges`]), except that a form is looked into for a search field.
pub(crate) fn measure(scope: &super::html::Scope<'_>) -> Structure {
    let root = scope.root;
    let mut m = Structure::default();
    let mut search_form = false;
    // Depths of the elements the current text is inside.
    let (mut link, mut code, mut heading) = (0u32, 0u32, 0u32);
    // Depth of `<pre>`; the outermost one's text, and whether an element inside it marks
    // it as code ([`marks_code`]), read as the text extraction reads it
    // ([`Preformatted::of`]), so that both take a `<pre>` for text alike; and those read.
    let mut pre = 0u32;
    let (mut pre_text, mut pre_marked) = (String::new(), false);
    let mut preformatted: Vec<Preformatted> = Vec::new();
    let mut next_line = 1u32;
    let mut block = Block::default();
    let left_out = |node| {
        if let Some(form) = ElementRef::wrap(node) {
            search_form |= is_search_form(form) && !in_link_bar(form, root);
        }
    };
    for edge in scope.edges(left_out) {
        match edge {
            Edge::Open(node) => {
                if let Node::Element(el) = node.value() {
                    pre_marked |= pre > 0 && marks_code(el);
                    if pre > 0 && (el.name() == "br" || BLOCKS.contains(&el.name())) {
                        pre_text.push('\n');
                    }
                }
                match node.value() {
                    Node::Element(el) => match el.name() {
                        name if BLOCKS.contains(&name) => {
                            block.end(&mut m);
                            block.row = name == "tr" || name == "li";
                            if name == "pre" {
                                if pre == 0 {
                                    pre_text.clear();
                                    pre_marked = false;
                                }
                                code += 1;
                                pre += 1;
                            }
                            if name.len() == 2 && name.starts_with('h') {
                                heading += 1;
                            }
                        }
                        "a" if is_link(el) => {
                            link += 1;
                            m.links += 1;
                        }
                        "code" => code += 1,
                        _ => {}
                    },
                    Node::Text(t) => {
                        let text: &str = t;
                        let trimmed = text.trim();
                        if trimmed.is_empty() {
                            continue;
                        }
                        // A gutter's numbers are no links: a numbered table of contents'
                        // are (Scribble's "1 Overview", "2 bitmap%").
                        let number = (link == 0).then(|| trimmed.parse::<u32>().ok());
                        if let Some(n) = number.flatten() {
                            if (next_line..=next_line.saturating_add(LINE_GAP)).contains(&n) {
                                m.numbered_lines += 1;
                                next_line = n.saturating_add(1);
                            }
                        }
                        let chars = trimmed.chars().filter(|c| !c.is_whitespace()).count() as u32;
                        let words = count_words(trimmed);
                        m.chars += chars;
                        m.words += words;
                        // A link that opens its block as a label ("Syntax:", linking to
                        // what the term means) leads a field of a definition, not an
                        // index entry: the block reads it as its own text.
                        let label = block.words == 0 && link > 0 && trimmed.ends_with(':');
                        if block.words == 0 {
                            block.starts_linked = link > 0 && !label;
                        }
                        block.words += words;
                        block.chars += chars;
                        block.heading |= heading > 0;
                        block.ends_sentence = trimmed.ends_with(['.', '!', '?', '。', '！', '？']);
                        if link > 0 {
                            m.link_chars += chars;
                            if !label {
                                block.link_chars += chars;
                            }
                        }
                        if code > 0 {
                            m.code_chars += chars;
                        }
                        if label {
                            block.own_tokens += words;
                        }
                        if link == 0 && code == 0 && heading == 0 {
                            m.prose_words += words;
                            block.prose += words;
                            block.own_tokens += trimmed
                                .split_whitespace()
                                .filter(|t| t.chars().any(char::is_alphanumeric))
                                .count() as u32;
                        }
                        if pre > 0 && heading == 0 {
                            pre_text.push_str(text);
                        }
                    }
                    _ => {}
                }
            }
            Edge::Close(node) => {
                if let Node::Element(el) = node.value() {
                    match el.name() {
                        name if BLOCKS.contains(&name) => {
                            block.end(&mut m);
                            if name == "pre" {
                                code = code.saturating_sub(1);
                                pre = pre.saturating_sub(1);
                                if pre == 0 {
                                    let read = Preformatted::of(&pre_text, pre_marked);
                                    if read.reads_as_text() {
                                        preformatted.push(read);
                                    }
                                }
                            } else if pre > 0 {
                                pre_text.push('\n');
                            }
                            if name.len() == 2 && name.starts_with('h') {
                                heading = heading.saturating_sub(1);
                            }
                        }
                        "a" if is_link(el) => link = link.saturating_sub(1),
                        "code" => code = code.saturating_sub(1),
                        _ => {}
                    }
                }
            }
        }
    }
    block.end(&mut m);
    // A page set in `<pre>`s of text: their sentences are its prose.
    if Preformatted::are_page_text(&preformatted, m.words) {
        for p in &preformatted {
            m.prose_words += p.sentences;
            m.longest_prose = m.longest_prose.max(p.sentences);
            m.unlinked_prose = m.unlinked_prose.max(p.sentences);
        }
    }
    m.search_form = search_form;
    m
}

/// The words of a `<pre>`, and those of its lines that read as sentences
/// ([`sentence_words`]) when no element in it marks it as code ([`marks_code`]).
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct Preformatted {
    /// Its words (as [`count_words`]).
    pub(crate) words: u32,
    /// The words of its sentences (none when marked as code).
    pub(crate) sentences: u32,
}

/// Of the words of a `<pre>`, at least one in this many in sentences make it text...
const PAGE_TEXT_SHARE: u32 = 4;
/// ... with at least this many words of sentences ...
const PAGE_TEXT_MIN_SENTENCES: u32 = 20;

impl Preformatted {
    /// Measures a `<pre>`'s text; `marked`: an element in it marks it as code (a
    /// highlighter's tokens), so none of it is taken for sentences, not even the lines
    /// of a docstring or comment.
    pub(crate) fn of(text: &str, marked: bool) -> Self {
        Preformatted {
            words: count_words(text),
            sentences: if marked { 0 } else { sentence_words(text) },
        }
    }

    /// Whether `pres`, the page's `<pre>`s that read as text ([`Self::reads_as_text`]),
    /// are its text, not examples in it: together they hold half the page's words (of
    /// `page_words`) or more. Vim's help set whole in one `<pre>`, or an RFC in one per
    /// printed page, is; a console session or a program with comments inside a page's
    /// prose is not, nor a module's highlighted source, whose sentences are in its comment
    /// marks.
    pub(crate) fn are_page_text(pres: &[Preformatted], page_words: u32) -> bool {
        let words: u32 = pres.iter().map(|p| p.words).sum();
        !pres.is_empty() && 2 * words >= page_words
    }

    /// Whether a `<pre>` reads as text ([`PAGE_TEXT_SHARE`], [`PAGE_TEXT_MIN_SENTENCES`]).
    /// Measured on Vim's help pages: a half to nine tenths of their words in sentences, a
    /// quarter or more on all but its indexes.
    pub(crate) fn reads_as_text(&self) -> bool {
        self.sentences >= PAGE_TEXT_MIN_SENTENCES && PAGE_TEXT_SHARE * self.sentences >= self.words
    }
}

/// Elements that start and end a block of text, as measured.
const BLOCKS: &[&str] = &[
    "p",
    "div",
    "section",
    "article",
    "main",
    "ul",
    "ol",
    "li",
    "dl",
    "dt",
    "dd",
    "table",
    "tr",
    "pre",
    "blockquote",
    "figure",
    "figcaption",
    "details",
    "summary",
    "h1",
    "h2",
    "h3",
    "h4",
    "h5",
    "h6",
];

/// Most words of an index entry ("ABORT, \[ABORT\]", "abs() (built-in function)").
const ENTRY_MAX_WORDS: u32 = 12;

/// Line numbers a listing may skip (Doxygen leaves out the lines of doc comments, a
/// hundred at a time in a long header).
const LINE_GAP: u32 = 1000;

/// The block of text being measured.
#[derive(Default)]
struct Block {
    words: u32,
    prose: u32,
    chars: u32,
    link_chars: u32,
    /// Whether the block is a table row or a list item.
    row: bool,
    /// Whether its first words are a link.
    starts_linked: bool,
    heading: bool,
    /// Whether its text ends as a sentence does (a full stop, question or exclamation
    /// mark): not a title set in a `<div>`, nor a line introducing what follows ("Here is
    /// a list of all documented files:").
    ends_sentence: bool,
    /// Its tokens (runs between spaces, with a letter or digit) outside links, code and
    /// headings: a member index's "mdb_env_open() : lmdb.h" has one, the name its link
    /// (the file) stands beside.
    own_tokens: u32,
}

impl Block {
    /// Counts the block (if it has words) and starts the next.
    fn end(&mut self, m: &mut Structure) {
        if self.words > 0 && !self.heading {
            m.blocks += 1;
            m.longest_prose = m.longest_prose.max(self.prose);
            if self.link_chars == 0 && self.ends_sentence {
                m.unlinked_prose = m.unlinked_prose.max(self.prose);
            }
            // An entry's link is most of it ("$libdir, [Dynamic Loading]"), or it is a
            // table row or list item led by its link ("[abc] Abstract Base Classes", a
            // member list's "[start](int )" linking into the class's page); a definition
            // whose signature links its types is neither.
            // Or it is one name beside its link (Doxygen's member indexes: "mdb_env_open()
            // : lmdb.h", the link to the file it is declared in).
            let linked = 3 * self.link_chars >= self.chars
                || (self.row && self.starts_linked)
                || (self.link_chars > 0 && self.own_tokens <= 1);
            if self.words <= ENTRY_MAX_WORDS && linked {
                m.entries += 1;
            } else {
                m.loose_words += self.prose;
                if m.entries < INDEX_MIN_ENTRIES {
                    m.opening_chars += self.chars - self.link_chars;
                }
            }
        }
        *self = Block::default();
    }
}

/// A link to somewhere else: a heading's anchor to itself (`href="#section"`) is not one.
pub(crate) fn is_link(el: &scraper::node::Element) -> bool {
    el.attr("href")
        .is_some_and(|h| !h.trim_start().starts_with('#'))
}

/// Whether an element inside a `<pre>` marks its text as code ([`measure`]): a `<code>`
/// or an element with a class, but not a nested `<pre>` (counted as a `<pre>`).
pub(crate) fn marks_code(el: &scraper::node::Element) -> bool {
    el.name() != "pre" && (el.name() == "code" || el.attr("class").is_some())
}

/// The words (as [`count_words`]) of the lines of `text` that read as a sentence: at
/// least [`SENTENCE_MIN_WORDS`] tokens, opening with a word, four in five of them words
/// (letters, perhaps with an apostrophe or hyphen, between punctuation) and three in five
/// of those not in capitals: not code (`x = f(y);`), a comment's marker (`# ...`,
/// `// ...`) or SQL's keywords (`SELECT value FROM config WHERE name='x';`).
pub(crate) fn sentence_words(text: &str) -> u32 {
    let is_word = |token: &str| {
        let core = token
            .trim_start_matches(['(', '"', '\'', '“'])
            .trim_end_matches(|c: char| ".,;:!?)\"'”。，、；：！？".contains(c));
        core.chars().next().is_some_and(char::is_alphabetic)
            && core
                .chars()
                .all(|c| c.is_alphabetic() || matches!(c, '\'' | '’' | '-'))
    };
    text.lines()
        .filter(|line| {
            let tokens: Vec<&str> = line.split_whitespace().collect();
            let words: Vec<&&str> = tokens.iter().filter(|t| is_word(t)).collect();
            // A letter not in capitals: lower case, or a script without case (Chinese).
            let cased = words
                .iter()
                .filter(|w| w.chars().any(|c| c.is_alphabetic() && !c.is_uppercase()))
                .count();
            tokens.first().is_some_and(|t| is_word(t))
                && words.len() >= SENTENCE_MIN_WORDS as usize
                && 5 * words.len() >= 4 * tokens.len()
                && 5 * cased >= 3 * words.len()
        })
        .map(count_words)
        .sum()
}

/// Words in a text: whitespace-separated runs with a letter or digit, each CJK character
/// one word (those scripts put no spaces between words).
pub(crate) fn count_words(text: &str) -> u32 {
    let mut n = 0;
    for token in text.split_whitespace() {
        let cjk = token.chars().filter(|c| is_cjk(*c)).count() as u32;
        let rest = token.chars().any(|c| c.is_alphanumeric() && !is_cjk(c));
        n += cjk + u32::from(rest);
    }
    n
}

fn is_cjk(c: char) -> bool {
    matches!(c as u32, 0x3040..=0x30FF | 0x3400..=0x4DBF | 0x4E00..=0x9FFF | 0xAC00..=0xD7AF | 0xF900..=0xFAFF)
}

/// A form (or `role=search` element) with a text field that says it searches: an input
/// of type `search`, or named `q`, or "search" in the form's or the field's attributes.
/// Links beside a search box that make its block a navigation bar ...
const LINK_BAR_MIN_LINKS: usize = 3;

/// Whether a search box stands in a navigation bar: the nearest block around it (short of
/// the main content itself) holds [`LINK_BAR_MIN_LINKS`] links besides it. Scribble puts
/// its "search manuals" box beside "top | contents | prev | up | next" on every page; a
/// search page's form stands in the page's text.
fn in_link_bar(form: ElementRef<'_>, root: ElementRef<'_>) -> bool {
    let Some(bar) = form
        .ancestors()
        .filter_map(ElementRef::wrap)
        .find(|a| a.id() == root.id() || BLOCKS.contains(&a.value().name()))
    else {
        return false;
    };
    bar.id() != root.id()
        && bar
            .descendants()
            .filter_map(ElementRef::wrap)
            .filter(|a| a.value().name() == "a" && is_link(a.value()))
            .filter(|a| !a.ancestors().any(|up| up.id() == form.id()))
            .count()
            >= LINK_BAR_MIN_LINKS
}

fn is_search_form(el: ElementRef<'_>) -> bool {
    let v = el.value();
    if v.name() != "form" && v.attr("role") != Some("search") {
        return false;
    }
    let says_search = |e: &scraper::node::Element| {
        e.attrs()
            .any(|(k, val)| k != "type" && val.to_ascii_lowercase().contains("search"))
    };
    let form_says = says_search(v);
    el.descendants()
        .filter_map(ElementRef::wrap)
        .filter(|i| i.value().name() == "input")
        .any(|i| {
            let iv = i.value();
            let ty = iv.attr("type").unwrap_or("text").to_ascii_lowercase();
            match ty.as_str() {
                "search" => true,
                "text" => form_says || says_search(iv) || iv.attr("name") == Some("q"),
                _ => false,
            }
        })
}

/// Most prose words a search page has besides its form (Sphinx's search page: 30). A site
/// without a `<main>` element puts its header's search box in every page's content, so a
/// short reference page (SQLite's C API pages: 50 to 100 words) must stay above it.
const SEARCH_MAX_PROSE: u32 = 40;
/// Most prose words and links of a redirect stub without a meta refresh ("This page has
/// moved to <a>...</a>").
const STUB_MAX_WORDS: u32 = 20;
/// An index: at least this many blocks are index entries (a link and a few words) ...
const INDEX_MIN_ENTRIES: u32 = 10;
/// ... making at least this share of its blocks (a back-of-book index, a member list).
const INDEX_MIN_SHARE: f64 = 0.7;
/// A page with this many words of its own prose besides its links is a page, however
/// many links it has (a chapter's introduction above its table of contents) ...
const OWN_PROSE_MIN: u32 = 150;
/// ... unless they are fewer than this many per index entry (a back-of-book index's or
/// a module index's few longer entries).
const OWN_PROSE_PER_ENTRY: u32 = 1;
/// A page that opens with this many characters of its own (prose and code, outside links)
/// before its list is a page with a list (rustdoc's trait pages: the trait's docs, then
/// hundreds of implementors), not an index or a table of contents, whose lists start at
/// the top.
const OPENING_MIN_CHARS: u32 = 400;
/// Prose words of a sentence: a code page with one is an example that says what it shows
/// (Rust by Example's chapters: a sentence, then the program), not a source listing.
const SENTENCE_MIN_WORDS: u32 = 5;
/// A table of contents: at least this share of the main text inside links ...
const TOC_MIN_LINK_SHARE: f64 = 0.5;
/// ... at least this many links ...
const TOC_MIN_LINKS: u32 = 5;
/// ... and fewer prose words than this many per link.
const TOC_MAX_PROSE_PER_LINK: f64 = 2.0;
/// A source listing: a run of at least this many line numbers ...
const SOURCE_MIN_LINES: u32 = 20;
/// ... and at least this share of the text in `<pre>`/`<code>`, or line numbers on at
/// least [`SOURCE_MIN_NUMBERED`] of the words (a listing set in `<div>` lines).
const SOURCE_MIN_CODE_SHARE: f64 = 0.8;
/// See [`SOURCE_MIN_CODE_SHARE`].
const SOURCE_MIN_NUMBERED: f64 = 0.1;
/// A listing without line numbers: at least [`SOURCE_MIN_CODE_SHARE`] of the text in code
/// and at most this many prose words (its heading).
const SOURCE_MAX_PROSE: u32 = 20;

/// Whether a page says something of its own besides its code: more prose words than a
/// heading has, or a block of them a sentence (what [`classify`]'s source listing without
/// line numbers lacks).
pub(crate) fn says_something(s: &Structure) -> bool {
    s.prose_words > SOURCE_MAX_PROSE || s.longest_prose >= SENTENCE_MIN_WORDS
}

/// The noise kind a page's own structure shows, if any (print-all pages need the others:
/// [`sift`]).
pub(crate) fn classify(s: &Structure) -> Option<Noise> {
    let share = |part: u32| {
        if s.chars == 0 {
            0.0
        } else {
            f64::from(part) / f64::from(s.chars)
        }
    };
    let numbered = s.numbered_lines >= SOURCE_MIN_LINES
        && (share(s.code_chars) >= SOURCE_MIN_CODE_SHARE
            || f64::from(s.numbered_lines) >= SOURCE_MIN_NUMBERED * f64::from(s.words));
    // Without line numbers (Sphinx's `viewcode` pages, "Source code for django.apps"):
    // code with no more prose than a heading.
    let bare =
        s.code_chars > 0 && share(s.code_chars) >= SOURCE_MIN_CODE_SHARE && !says_something(s);
    if numbered || bare {
        return Some(Noise::Source);
    }
    if s.search_form && s.prose_words <= SEARCH_MAX_PROSE {
        return Some(Noise::Search);
    }
    let index = s.entries >= INDEX_MIN_ENTRIES
        && f64::from(s.entries) >= INDEX_MIN_SHARE * f64::from(s.blocks)
        && (s.loose_words < OWN_PROSE_MIN || s.loose_words < OWN_PROSE_PER_ENTRY * s.entries);
    let toc = s.links >= TOC_MIN_LINKS
        && share(s.link_chars) >= TOC_MIN_LINK_SHARE
        && s.prose_words < OWN_PROSE_MIN
        && f64::from(s.prose_words) < TOC_MAX_PROSE_PER_LINK * f64::from(s.links);
    // A page that opens with text of its own is a page with a list under it, whichever
    // way the list is measured: rustdoc's `std::ops::Mul` (its docs and a long example,
    // then 174 implementors whose linked headings make most of its text) is no table of
    // contents.
    let list_first = s.opening_chars < OPENING_MIN_CHARS;
    if (index || toc) && list_first {
        return Some(Noise::Links);
    }
    // A sentence standing apart from the links is the page's own (an API page's one line,
    // "Raised when the datetime is outside the range that can be represented.", between
    // its previous and next links), not a notice pointing elsewhere.
    let says_something = s.unlinked_prose >= SENTENCE_MIN_WORDS;
    if (1..=2).contains(&s.links)
        && s.words <= STUB_MAX_WORDS
        && s.code_chars == 0
        && !says_something
    {
        // A listing with one entry (a section's archive page: a heading and a link) is a
        // link list; a sentence pointing elsewhere is a stub.
        return Some(if s.prose_words == 0 {
            Noise::Links
        } else {
            Noise::Redirect
        });
    }
    if s.links > 0
        && s.words <= STUB_MAX_WORDS
        && s.code_chars == 0
        && 2 * s.link_chars >= s.chars
        && !says_something
    {
        // A few links and next to nothing else, too few for an index (SQLite's syntax
        // diagram pages: the diagram's name and the statements that use it), unless a
        // sentence of its own stands beside them.
        return Some(Noise::Links);
    }
    None
}

/// A print-all page has at least this many headings that are other pages' titles ...
const PRINT_MIN_TITLES: usize = 8;
/// ... making at least this share of its headings, or of those at one level, ...
const PRINT_MIN_SHARE: f64 = 0.3;
/// ... and holds the opening text of at least this share of the pages they name (a
/// release-notes page's "django.contrib.admin" section names a page and copies nothing).
const PRINT_MIN_COPIED: f64 = 0.5;
/// A page's opening, looked for in a print-all page: its first paragraph of at least this
/// many bytes ...
const OPENING_MIN: usize = 40;
/// ... cut to about this many.
const OPENING_LEN: usize = 60;
/// At most this many of the named pages' openings are looked for (evenly spread), so a
/// page whose thousands of headings name other pages costs a bounded number of scans.
const OPENINGS_CHECKED: usize = 64;

/// The step that picks at most [`OPENINGS_CHECKED`] of `n` items, evenly spread.
fn spread(n: usize) -> usize {
    n.div_ceil(OPENINGS_CHECKED).max(1)
}

/// Leaves out the noise among `pages` (unless `keep_all`), counting each kind in `tally`.
pub(crate) fn sift(pages: Vec<Page>, keep_all: bool, tally: &mut Tally) -> Vec<Page> {
    tally.kept = keep_all;
    let chrome = chrome_entries(&pages);
    let mut titles: HashMap<String, usize> = HashMap::new();
    let mut openings: HashMap<String, String> = HashMap::new();
    let mut descriptions: HashMap<String, String> = HashMap::new();
    let mut lengths: HashMap<String, usize> = HashMap::new();
    for p in &pages {
        let title = normalise(&p.title);
        if let Some(opening) = opening(&p.content) {
            openings
                .entry(title.clone())
                .or_insert_with(|| opening.to_owned());
        }
        lengths.entry(title.clone()).or_insert(p.content.len());
        if let Some(start) = p.description.as_deref().and_then(opening) {
            descriptions
                .entry(title.clone())
                .or_insert_with(|| start.to_owned());
        }
        *titles.entry(title).or_default() += 1;
    }
    let titles = Titles {
        titles,
        openings,
        descriptions,
        lengths,
    };
    let compiled = super::compilations::find(&pages);
    pages
        .into_iter()
        .enumerate()
        .filter(|(i, p)| {
            // Every rule reads the page's own structure, the site's chrome taken off.
            let own = p.structure.map(|s| without_chrome(s, chrome));
            let kind = own
                .as_ref()
                .and_then(classify)
                .or_else(|| {
                    (print_all(p, &titles) || compiled.contains(i)).then_some(Noise::PrintAll)
                })
                .or_else(|| listing(p, &titles).then_some(Noise::Listing))
                .or_else(|| {
                    let part = own.as_ref()?;
                    index_part(part, &p.title, &titles.titles).then_some(Noise::Links)
                });
            match kind {
                Some(k) => {
                    tally.add(k, p.path());
                    keep_all
                }
                None => true,
            }
        })
        .map(|(_, p)| p)
        .collect()
}

/// Which of `pages` are content by their own structure, not generator noise ([`classify`]:
/// source listings, indexes, search pages, stubs): the pages a site's chrome is counted
/// among (`super::boilerplate`). A page without measures is content.
pub(crate) fn content_pages(pages: &[Page]) -> Vec<bool> {
    let chrome = chrome_entries(pages);
    pages
        .iter()
        .map(|p| {
            p.structure
                .is_none_or(|s| classify(&without_chrome(s, chrome)).is_none())
        })
        .collect()
}

/// The share of a site's measured pages holding fewer index entries than its chrome: the
/// page at this rank (from the fewest entries) tells how many the chrome holds.
const CHROME_RANK: f64 = 0.1;
/// Sites of fewer measured pages than this have no chrome worked out.
const CHROME_MIN_PAGES: usize = 10;

/// The index entries nearly every page of the site holds. On a site without `<main>`
/// (SQLite's), the header's navigation is measured with each page's content: its 14 links
/// made a short reference page (`sqlite3_sleep()`: 110 words of its own) look like an
/// index, and 151 such pages were left out. The count of the page at [`CHROME_RANK`]; 0
/// where a tenth of the pages hold no entries (measured: git, Octave, Doxygen, Typer and
/// Commons Lang 0, Rust 1, PostgreSQL 2, Django 3, SQLite 14; Node.js 64, its list of
/// every module beside each page).
fn chrome_entries(pages: &[Page]) -> u32 {
    let mut entries: Vec<u32> = pages
        .iter()
        .filter_map(|p| p.structure.as_ref())
        .filter(|s| s.blocks > 0 && !s.source)
        .map(|s| s.entries)
        .collect();
    if entries.len() < CHROME_MIN_PAGES {
        return 0;
    }
    let rank = (entries.len() as f64 * CHROME_RANK) as usize;
    *entries.select_nth_unstable(rank).1
}

/// A page's structure less `chrome` index entries, each a block of its own.
fn without_chrome(mut s: Structure, chrome: u32) -> Structure {
    let chrome = chrome.min(s.entries);
    s.entries -= chrome;
    s.blocks = s.blocks.saturating_sub(chrome);
    s
}

/// Leaves out (or with `keep_all` only counts) the built pages that the site's chrome
/// removal left empty ([`emptied`]), as stubs.
pub(crate) fn sift_emptied(pages: Vec<Page>, keep_all: bool, tally: &mut Tally) -> Vec<Page> {
    pages
        .into_iter()
        .filter(|p| match emptied(p) {
            Some(kind) => {
                tally.add(kind, p.path());
                keep_all
            }
            None => true,
        })
        .collect()
}

/// Whether a built page is left with nothing but headings and no description: what
/// remains of a stub whose one notice the site's chrome removal took because every such
/// stub shares it (Rust's superseded book editions: 239 chapter headings over "The 2018
/// edition of the book is no longer distributed..."), a stub; or with headings and code
/// only, a source listing (Haddock's hyperlinked sources; gi-docgen's 2,276 `GDK_KEY_*`
/// pages: "Declaration", `#define GDK_KEY_Cyrillic_VE 1783`, an empty "Description"). Its
/// title would still match the item's words, with no text to answer from. A Markdown
/// source of headings alone (a Hugo section's `_index.md` holding only its title, whose
/// built page lists the section) is one too.
fn emptied(page: &Page) -> Option<Noise> {
    if page.structure.is_none() || page.description.is_some() {
        return None;
    }
    let mut code = false;
    for (_, line, fenced) in shared::kb::fenced_lines(&page.content) {
        let line = line.trim();
        code |= fenced;
        if !fenced && !line.is_empty() && !line.starts_with('#') {
            return None;
        }
    }
    Some(if code { Noise::Source } else { Noise::Redirect })
}

/// A part of an index split over pages: its title on at least this many pages ...
const PART_MIN_PAGES: usize = 3;
/// ... and at least this share of its blocks index entries (a part may hold one entry
/// under the index's introduction).
const PART_MIN_SHARE: f64 = 0.5;

/// Whether a page (its structure `s`, its `title`) is one part of an index split over
/// several pages under one title (Doxygen's "Globals" one page per letter, a member list
/// per class, an archive's pages): mostly index entries, with little prose of its own,
/// under a title other pages share. Alone, a part's few entries are not enough to tell it
/// from a short page.
fn index_part(s: &Structure, title: &str, titles: &HashMap<String, usize>) -> bool {
    s.entries > 0
        && f64::from(s.entries) >= PART_MIN_SHARE * f64::from(s.blocks)
        && s.loose_words < OWN_PROSE_MIN
        && titles
            .get(&normalise(title))
            .is_some_and(|&n| n >= PART_MIN_PAGES)
}

/// The site's titles, as print-all pages are told by.
struct Titles {
    /// How many pages carry each normalised title.
    titles: HashMap<String, usize>,
    /// The opening text of the first page with each normalised title (see [`opening`]).
    openings: HashMap<String, String>,
    /// The start of the description of the first page with each normalised title that has
    /// one (its `<meta name="description">`), as a listing may show it instead.
    descriptions: HashMap<String, String>,
    /// The length of the text of the first page with each normalised title: the most of a
    /// section under that title that can be a copy of it.
    lengths: HashMap<String, usize>,
}

/// The start of a page's first paragraph of prose ([`OPENING_MIN`] bytes or more), cut
/// to about [`OPENING_LEN`] bytes: a print-all page copies it under the page's title.
fn opening(content: &str) -> Option<&str> {
    let para = content
        .split("\n\n")
        .map(str::trim)
        .find(|p| p.len() >= OPENING_MIN && !p.starts_with('#'))?;
    let mut cut = OPENING_LEN.min(para.len());
    while !para.is_char_boundary(cut) {
        cut -= 1;
    }
    Some(&para[..cut])
}

/// Whether the page's headings repeat many other pages' titles, over all its headings or
/// at one heading level (Node.js's `all.html` has each page's title as an `<h2>` and 4,000
/// sections under them), and it copies those pages' text.
fn print_all(page: &Page, titles: &Titles) -> bool {
    let own = normalise(&page.title);
    // Headings, and those that are other pages' titles, per level (`#` to `######`).
    let mut headings = [0usize; 7];
    let mut others = [0usize; 7];
    let mut named: Vec<String> = Vec::new();
    for (_, level, text) in headings_of(&page.content) {
        headings[level] += 1;
        let n = titles.titles.get(&text).copied().unwrap_or(0);
        // A heading with the page's own title names this page, not another.
        if n > usize::from(text == own) {
            others[level] += 1;
            named.push(text);
        }
    }
    let repeats = |others: usize, headings: usize| {
        others >= PRINT_MIN_TITLES && others as f64 >= PRINT_MIN_SHARE * headings as f64
    };
    if !(repeats(others.iter().sum(), headings.iter().sum())
        || (1..7).any(|l| repeats(others[l], headings[l])))
    {
        return false;
    }
    named.sort_unstable();
    named.dedup();
    let openings: Vec<&String> = named
        .iter()
        .filter_map(|t| titles.openings.get(t))
        .collect();
    let checked: Vec<&&String> = openings.iter().step_by(spread(openings.len())).collect();
    let copied = checked
        .iter()
        .filter(|o| page.content.contains(o.as_str()))
        .count();
    copied as f64 >= PRINT_MIN_COPIED * checked.len() as f64
}

/// A listing shows at least this many other pages' openings ...
const LISTING_MIN: usize = 2;
/// ... and their sections hold at least this share of its text (a page quoting two others
/// among text of its own is a page).
const LISTING_MIN_SHARE: f64 = 0.6;

/// Whether an HTML page is a listing of other pages: at least [`LISTING_MIN`] of its
/// headings are other pages' titles with that page's opening or description in the
/// section under them (to the next heading as high), and those sections are most of the
/// page. Blog indexes, tag, category and author pages (Docusaurus, Hugo, Jekyll, Hexo) show
/// each post's title and its first paragraphs, often the whole of a short post, or the
/// summary its front matter gives (which the post's page carries as its description); they
/// hold too few posts for an index's link share or a print-all page, and would compete with
/// the posts for every question about them. Of a long listing (Hugo's category of 139
/// functions) [`OPENINGS_CHECKED`] sections, evenly spread, are looked in. One post under a
/// tag is not told from a page quoting another (Qt's "SQL Programming" opens its one
/// section with the class list of "Database Classes").
fn listing(page: &Page, titles: &Titles) -> bool {
    if page.structure.is_none_or(|s| s.source) {
        return false; // Markdown sources are the owner's own writing
    }
    let own = normalise(&page.title);
    let content = page.content.as_str();
    let headings: Vec<(usize, usize, String)> = headings_of(content).collect();
    // Each section under another page's title (a page has an opening or a description on
    // record only under its title): where it starts and ends, and that page's record.
    let on_record = |text: &String| {
        *text != own
            && (titles.openings.contains_key(text) || titles.descriptions.contains_key(text))
    };
    let sections: Vec<(usize, usize, &String)> = headings
        .iter()
        .enumerate()
        .filter(|(_, (_, _, text))| on_record(text))
        .map(|(i, (at, level, text))| {
            let end = headings[i + 1..]
                .iter()
                .find(|h| h.1 <= *level)
                .map_or(content.len(), |h| h.0);
            (*at, end, text)
        })
        .collect();
    let step = spread(sections.len());
    let (mut copied, mut copied_bytes) = (0, 0);
    for &(at, end, text) in sections.iter().step_by(step) {
        let section = &content[at..end];
        let shows = |record: &HashMap<String, String>| {
            record
                .get(text)
                .is_some_and(|o| section.contains(o.as_str()))
        };
        if shows(&titles.openings) || shows(&titles.descriptions) {
            copied += 1;
            // No more of the section than the page it shows is a copy: a class's last
            // section that quotes a module ("module FileUtils::DryRun", RDoc) runs on over
            // the class's own methods, which sit under lower headings.
            let quoted = titles.lengths.get(text).copied().unwrap_or(usize::MAX);
            copied_bytes += (end - at).min(quoted) * step;
        }
    }
    copied >= LISTING_MIN && copied_bytes as f64 >= LISTING_MIN_SHARE * content.len() as f64
}

/// The content's headings (fenced code left out: a `# comment` is none), each as (where
/// its line starts, its level, its text as titles are compared), empty ones skipped.
fn headings_of(content: &str) -> impl Iterator<Item = (usize, usize, String)> + '_ {
    shared::kb::headings(content)
        .map(|(at, level, title)| (at, level, normalise(&title)))
        .filter(|(_, _, text)| !text.is_empty())
}

/// A title or heading as compared: lowercase letters and digits, single spaces.
pub(crate) fn normalise(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for word in text
        .split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
    {
        if !out.is_empty() {
            out.push(' ');
        }
        out.extend(word.chars().flat_map(char::to_lowercase));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::build::html::extract;

    fn fixture(name: &str) -> Page {
        let path = format!("{}/tests/data/noise/{name}", env!("CARGO_MANIFEST_DIR"));
        let html = std::fs::read_to_string(&path).unwrap();
        extract(&html, &format!("https://docs.example/{name}")).unwrap()
    }

    fn kind(name: &str) -> Option<Noise> {
        classify(&fixture(name).structure.unwrap())
    }

    #[test]
    fn real_generator_noise_is_recognised_by_structure() {
        assert_eq!(kind("sphinx-genindex.html"), Some(Noise::Links));
        assert_eq!(kind("sphinx-search.html"), Some(Noise::Search));
        assert_eq!(kind("rustdoc-src.html"), Some(Noise::Source));
        // qdoc's "List of All Members": each item the member's name, linked into its
        // class's page, and its parameters and type unlinked.
        assert_eq!(kind("qdoc-members.html"), Some(Noise::Links));
    }

    #[test]
    fn real_content_pages_are_not_noise() {
        // A short reference page, a function with a long example, a rustdoc item page
        // (whose search box sits in the page's own navigation).
        for name in [
            "sphinx-keyword.html",
            "sphinx-bisect.html",
            "rustdoc-fn.html",
            // A trait's docs and example, then its implementors: a list of links longer
            // than the docs, after them.
            "rustdoc-trait.html",
            // A book chapter that is one sentence and the program it introduces.
            "mdbook-example.html",
            // A class page: its member tables link each name to the page's own anchors.
            "qdoc-class.html",
        ] {
            assert_eq!(kind(name), None, "{name}: {:?}", fixture(name).structure);
        }
    }

    /// The structure of a page whose `<main>` is `title` as its `<h1>`, then `body`.
    fn main_structure(title: &str, body: &str) -> Structure {
        let page = format!("<main><h1>{title}</h1>{body}</main>");
        extract(&page, "https://ex.org/page.html")
            .unwrap()
            .structure
            .unwrap()
    }

    #[test]
    fn a_few_links_and_next_to_nothing_else_are_a_link_list() {
        // SQLite's syntax-diagram pages: the diagram (an image) and where it is used.
        let syntax = main_structure(
            "alter-table-stmt:",
            r#"<p><img src="alter-table-stmt.gif"></p><p>Used by: <a href="sql-stmt.html">
               sql-stmt</a> <a href="lang_altertable.html">ALTER TABLE</a>
               <a href="x.html">References</a></p>"#,
        );
        assert_eq!(classify(&syntax), Some(Noise::Links), "{syntax:?}");
        // A short reference page says what its item does.
        let api = main_structure(
            "Reset All Bindings On A Prepared Statement",
            r#"<pre>int sqlite3_clear_bindings(sqlite3_stmt*);</pre><p>Contrary to the
               intuition of many, <a href="reset.html">sqlite3_reset()</a> does not reset
               the <a href="bind_blob.html">bindings</a> on a prepared statement. Use this
               routine to reset all host parameters to NULL.</p>"#,
        );
        assert_eq!(classify(&api), None, "{api:?}");
    }

    #[test]
    fn a_list_under_an_opening_of_its_own_is_a_page_and_a_bare_list_an_index() {
        let entries: String = (0..80)
            .map(|i| format!(r#"<li><a href="t{i}.html">Type{i}</a> 1.{i}</li>"#))
            .collect();
        let measure =
            |opening: &str| main_structure("Trait Parse", &format!("{opening}<ul>{entries}</ul>"));
        let bare = measure("");
        assert_eq!(classify(&bare), Some(Noise::Links), "{bare:?}");
        // The same list after a paragraph and an example: fewer words of prose than the
        // list has entries, as on a trait with many implementors.
        let docs = measure(
            "<p>Parses a value from a string, returning an error that says which part of \
             the input could not be read.</p><pre>let port: u16 = \"8080\".parse()?;\n\
             let addr: IpAddr = \"127.0.0.1\".parse()?;\nassert_eq!(port, 8080);\n\
             assert!(addr.is_loopback());</pre><p>Implement it for your own types to \
             use them with str::parse. The error type is chosen by the implementor; most \
             of the standard library's own implementations return a small error struct \
             that can be shown to the user or converted with the question mark operator \
             into the caller's error.</p>",
        );
        assert!(docs.loose_words < docs.entries, "{docs:?}");
        assert_eq!(classify(&docs), None, "{docs:?}");
    }

    #[test]
    fn rows_led_by_a_label_linking_to_its_meaning_are_a_definition_not_an_index() {
        // The Apache HTTP Server manual: a module's table, then each directive's, every
        // row's label a link to the page explaining the term.
        let row = |label: &str, value: &str| {
            format!(
                r#"<tr><th><a href="directive-dict.html#{label}">{label}:</a></th><td>{value}</td></tr>"#
            )
        };
        let directive = |name: &str| {
            format!(
                "<h2>{name} Directive</h2><table>{}{}{}{}{}{}</table><p>Sets how often the watchdog runs {name}.</p>",
                row("Description", "Interval between runs"),
                row("Syntax", &format!("{name} time-interval[ms]")),
                row("Default", "1"),
                row("Context", "server config"),
                row("Status", "Base"),
                row("Module", "mod_watchdog"),
            )
        };
        let body = format!(
            "<table>{}{}{}</table><p>Defines hooks for other modules to run tasks \
             periodically.</p>{}{}",
            row("Description", "infrastructure for periodic tasks"),
            row("Status", "Base"),
            row("Module Identifier", "watchdog_module"),
            directive("WatchdogInterval"),
            directive("WatchdogTimeout"),
        );
        let page = main_structure("Apache Module mod_watchdog", &body);
        assert_eq!(page.entries, 0, "{page:?}");
        assert_eq!(classify(&page), None, "{page:?}");
        // Rows led by the names they link to are an index, however they are laid out.
        let rows: String = (0..15)
            .map(|i| {
                format!(r#"<tr><th><a href="m{i}.html">mod_{i}</a></th><td>Module {i}</td></tr>"#)
            })
            .collect();
        let index = main_structure("Modules", &format!("<table>{rows}</table>"));
        assert_eq!(classify(&index), Some(Noise::Links), "{index:?}");
    }

    #[test]
    fn implementors_in_linked_headings_under_an_opening_are_a_page() {
        // rustdoc 1.63's trait pages: each implementor a heading of links ("impl Mul<f32>
        // for f32") beside a "source" link, so links make most of the text.
        let implementors: String = (0..60)
            .map(|i| {
                format!(
                    r#"<div><a href="src/t.rs.html#{i}">source</a></div><h3>impl <a href="trait.Mul.html">Mul</a>&lt;<a href="t{i}.html">Type{i}</a>&gt; for <a href="t{i}.html">Type{i}</a></h3>"#
                )
            })
            .collect();
        let measure =
            |opening: &str| main_structure("Trait Mul", &format!("{opening}{implementors}"));
        let bare = measure("");
        assert_eq!(classify(&bare), Some(Noise::Links), "{bare:?}");
        let docs = measure(
            "<pre>pub trait Mul&lt;Rhs = Self&gt; {\n    type Output;\n    \
             fn mul(self, rhs: Rhs) -&gt; Self::Output;\n}</pre><p>The multiplication \
             operator. Note that Rhs is Self by default, but this is not mandatory.</p>\
             <pre>struct Scalar { value: usize }\nstruct Vector { value: \
             Vec&lt;usize&gt; }\nimpl Mul&lt;Scalar&gt; for Vector {\n    type Output = \
             Self;\n    fn mul(self, rhs: Scalar) -&gt; Self::Output {\n        Self { \
             value: self.value.iter().map(|v| v * rhs.value).collect() }\n    }\n}\n\
             let v = Vector { value: vec![2, 4, 6] };\nassert_eq!(v * Scalar { value: 3 }, \
             Vector { value: vec![6, 12, 18] });</pre>",
        );
        assert!(
            docs.link_chars * 2 >= docs.chars,
            "links most of it: {docs:?}"
        );
        assert_eq!(classify(&docs), None, "{docs:?}");
    }

    #[test]
    fn a_short_page_under_a_header_search_box_is_a_page() {
        // As SQLite's C API pages are laid out: no <main>, the site's search form in the
        // header, a reference entry of some sixty words.
        let words = "Register a callback to handle locked tables. ".repeat(8);
        let page = format!(
            r#"<body><div class=nav><form method=GET action="../search">
            <input type=text name=q></form></div><h2>Set A Busy Timeout</h2>
            <p>{words}</p></body>"#
        );
        let s = extract(&page, "https://ex.org/c3ref/busy_timeout.html")
            .unwrap()
            .structure
            .unwrap();
        assert!(s.search_form, "{s:?}");
        assert_eq!(classify(&s), None, "{s:?}");
    }

    #[test]
    fn code_with_no_prose_but_its_heading_is_a_source_listing() {
        // Sphinx's `viewcode` layout: a heading, then the module in one <pre>, no line
        // numbers.
        let code = "def handler(request):\n    return respond(request.path)\n".repeat(12);
        let page = format!(
            r#"<main><h1>Source code for pony.views</h1><div class=highlight><pre>{code}</pre>
            </div></main>"#
        );
        let s = extract(&page, "https://ex.org/_modules/pony/views.html")
            .unwrap()
            .structure
            .unwrap();
        assert_eq!(classify(&s), Some(Noise::Source), "{s:?}");
        // The same code under a paragraph that explains it is a page.
        let prose = "The view answers each request with the page for its path, so that a \
            visitor who follows a link sees what the link promised; errors fall back to \
            the default handler, which logs them.";
        let page = format!(
            r#"<main><h1>Views</h1><p>{prose}</p><div class=highlight><pre>{code}</pre>
            </div></main>"#
        );
        let s = extract(&page, "https://ex.org/topics/views.html")
            .unwrap()
            .structure
            .unwrap();
        assert_eq!(classify(&s), None, "{s:?}");
    }

    #[test]
    fn help_text_set_in_one_pre_is_a_page_and_a_highlighted_listing_is_not() {
        // vim2html's layout: the whole help file in one <pre>, its tags as anchors, its
        // references as links between bars, its sections between rules of "=".
        let help = r#"*<a name="fold.txt"></a><b>fold.txt</b>*   For Tool version 9.0

Folding hides a range of lines behind a single line that says how many it holds.
You can open the fold again whenever you want to read what is inside it.

==============================================================================
1. Fold methods                                 *<a name="fold-methods"></a><b>fold-methods</b>*

The method decides how the folds of a window are made.  See |<a href="options.html#'foldmethod'">'foldmethod'</a>|.
#               Fold the lines that start with a hash sign, as shell comments do.
zf{motion}      Create a fold over the lines the motion moves across.
"#;
        let page = format!(
            r#"<html><body><h1>Tool documentation: fold</h1><a href="index.html">main help file</a>
            <hr><pre>{help}</pre></body></html>"#
        );
        let p = extract(&page, "https://ex.org/htmldoc/fold.html").unwrap();
        let s = p.structure.unwrap();
        assert_eq!(classify(&s), None, "{s:?}");
        // Written as the page's text: no fence, its `#` line not a heading, no rule.
        assert!(!p.content.contains("```"), "{}", p.content);
        assert!(
            p.content
                .contains("\n\nFolding hides a range of lines behind a single line"),
            "{}",
            p.content
        );
        assert!(
            p.content.contains("\n\\#               Fold the lines"),
            "{}",
            p.content
        );
        assert!(!p.content.contains("====="), "{}", p.content);
        // An RFC as rendered one `<pre>` per printed page: together they are the text.
        let printed = "The sender opens a connection and waits for the greeting before it says\n\
            anything, so that a server which is not ready can refuse it politely and\n\
            the client can try another server without having sent a single byte.\n";
        let page = format!(
            "<html><body><h1>RFC 9999</h1><pre class=newpage>{printed}</pre>\
             <pre class=newpage>{printed}</pre><pre class=newpage>{printed}</pre></body></html>"
        );
        let p = extract(&page, "https://ex.org/rfc/rfc9999.html").unwrap();
        assert!(!p.content.contains("```"), "{}", p.content);
        assert_eq!(classify(&p.structure.unwrap()), None);
        // A console session inside a page's prose stays an example, sentences and all.
        let prose = "<p>Switching to a tag detaches the working tree from every branch, \
            and the program says so at length when it happens; read it once, then carry \
            on looking around, since nothing is lost until you commit on top of it and \
            switch away again without naming a branch for the new commits.</p>"
            .repeat(3);
        let session = "$ tool switch --detach v2.6\nNote: switching to 'v2.6'.\n\nYou are \
            in a detached state where you can look around and make changes.\nYou can \
            discard any commits you make in this state without touching any branch.";
        let page = format!("<main><h1>Tags</h1>{prose}<pre>{session}</pre></main>");
        let p = extract(&page, "https://ex.org/manual.html").unwrap();
        assert!(p.content.contains("```\n$ tool switch"), "{}", p.content);
        // The same sentences as a highlighter's docstring in a module's source: a listing.
        let code = "def fold(lines):\n    return hide(lines)\n".repeat(12);
        let listing = format!(
            r#"<main><h1>Source code for tool.fold</h1><div class=highlight><pre>{code}<span class="sd">"""Folding hides a range of lines behind a single line that says how many
    it holds. You can open the fold again whenever you want to read what is inside it."""</span>
{code}</pre></div></main>"#
        );
        let p = extract(&listing, "https://ex.org/_modules/tool/fold.html").unwrap();
        assert!(p.content.contains("```"), "{}", p.content);
        let s = p.structure.unwrap();
        assert_eq!(classify(&s), Some(Noise::Source), "{s:?}");
    }

    #[test]
    fn help_text_whose_words_are_links_is_measured_as_it_is_written() {
        // vim2html links every word that is a help tag ("it", "as", "window"), so a line of
        // text is cut into pieces by links. The page is written as text, and must be measured
        // as text too: measured piece by piece, no piece was a sentence and the page was
        // left out as a source listing that its own text said was prose.
        let line = concat!(
            r#"Use <a href="motion.html#it">it</a> when the <a href="windows.html#window">window</a>"#,
            r#" is split, <a href="motion.html#as">as</a> the cursor then <a href="m.html#moves">moves</a>"#,
            r#" between the <a href="windows.html">windows</a> of a <a href="tabpage.html">tab</a> page"#
        );
        let help = format!("{line}\n").repeat(6);
        let page = format!(
            r#"<html><body><h1>Tool documentation: windows</h1><a href="index.html">main help file</a>
            <hr><pre>{help}</pre></body></html>"#
        );
        let p = extract(&page, "https://ex.org/htmldoc/windows.html").unwrap();
        assert!(!p.content.contains("```"), "{}", p.content);
        let s = p.structure.unwrap();
        assert_eq!(classify(&s), None, "{s:?}");
    }

    #[test]
    fn a_member_index_of_names_beside_their_files_is_a_link_list() {
        // Doxygen's "Globals" pages: each name, unlinked, beside a link to the file (or
        // group) that documents it.
        let items: String = (0..40)
            .map(|i| {
                format!(
                    "<li>pony_env_set_option_{i}() : <a class=el href=\"group__env.html#a{i}\">pony.h</a></li>"
                )
            })
            .collect();
        let page = format!(
            r#"<body><div class=contents><div class=textblock>Here is a list of all
            documented functions with links to the documentation:</div>
            <h3>- p -</h3><ul>{items}</ul></div></body>"#
        );
        let s = extract(&page, "https://ex.org/globals_func.html")
            .unwrap()
            .structure
            .unwrap();
        assert_eq!(classify(&s), Some(Noise::Links), "{s:?}");
        // A reference page's short lines that each name a thing and link on stay a page:
        // its prose is its own.
        let prose = "Opening an environment reads the lock file, maps the data file and \
            checks that the format matches this version of the library; it fails when \
            another process holds the lock in a way that excludes readers. "
            .repeat(3);
        let page = format!(
            r#"<main><h1>Environments</h1><p>{prose}</p><ul>
            <li>Opening: <a href="open.html">pony_env_open()</a></li>
            <li>Closing: <a href="close.html">pony_env_close()</a></li></ul></main>"#
        );
        let s = extract(&page, "https://ex.org/env.html")
            .unwrap()
            .structure
            .unwrap();
        assert_eq!(classify(&s), None, "{s:?}");
    }

    #[test]
    fn a_link_with_a_line_of_text_is_a_stub_but_a_short_paragraph_is_not() {
        let stub = r#"<main><p>This page moved to <a href="/new/">the new guide</a>.</p></main>"#;
        let s = extract(stub, "https://ex.org/old/")
            .unwrap()
            .structure
            .unwrap();
        assert_eq!(classify(&s), Some(Noise::Redirect));
        let short = r#"<main><h1>git-whatchanged</h1><p>Show logs with the difference each
            commit introduces. New users are encouraged to use <a href="git-log.html">git-log</a>
            instead; this command is kept for historical reasons.</p></main>"#;
        let s = extract(short, "https://ex.org/w/")
            .unwrap()
            .structure
            .unwrap();
        assert_eq!(classify(&s), None, "{s:?}");
    }

    #[test]
    fn a_one_sentence_page_between_its_previous_and_next_links_is_a_page() {
        // Sphinx's API page for an exception: its name, one sentence, and the theme's
        // links to the previous and next pages, each a block of its own.
        let page = r#"<main><h1>pandas.errors.OutOfBoundsDatetime</h1>
            <p>Raised when the datetime is outside the range that can be represented.</p>
            <a href="pandas.errors.OptionError.html"><p>previous</p><p>OptionError</p></a>
            <a href="pandas.errors.OutOfBoundsTimedelta.html"><p>next</p>
            <p>OutOfBoundsTimedelta</p></a></main>"#;
        let s = extract(page, "https://ex.org/api/x.html")
            .unwrap()
            .structure
            .unwrap();
        assert_eq!(classify(&s), None, "{s:?}");
        // With a third link (its source) whose long names make half its text.
        let page = r#"<main><h1>pandas.Index.is_unique</h1>
            <p><a href="../_modules/index.html">[source]</a></p>
            <p>Return if the index has unique values.</p>
            <a href="pandas.Index.is_monotonic_increasing.html"><p>previous</p>
            <p>pandas.Index.is_monotonic_increasing</p></a>
            <a href="pandas.Index.name.html"><p>next</p><p>pandas.Index.name</p></a></main>"#;
        let s = extract(page, "https://ex.org/api/x.html")
            .unwrap()
            .structure
            .unwrap();
        assert_eq!(classify(&s), None, "{s:?}");
        // A one-entry list under the sentence that introduces it (Doxygen's "File List"
        // of a one-file project), or a title set in a `<div>` over a footer's link: no
        // sentence of its own.
        let list = r#"<main><h1>File List</h1>
            <p>Here is a list of all documented files with brief descriptions:</p>
            <table><tr><td><a href="afterdoc_8h.html">afterdoc.h</a></td></tr></table></main>"#;
        let s = extract(list, "https://ex.org/files.html")
            .unwrap()
            .structure
            .unwrap();
        assert!(classify(&s).is_some(), "{s:?}");
        let title = r#"<main><div class="title">Manual inheritance and membership Documentation</div>
            <address>Generated by <a href="https://www.doxygen.org/">doxygen</a></address></main>"#;
        let s = extract(title, "https://ex.org/manual/")
            .unwrap()
            .structure
            .unwrap();
        assert!(classify(&s).is_some(), "{s:?}");
        // The same words as a notice with its link in the sentence: a stub.
        let stub = r#"<main><h1>pandas.errors.OutOfBoundsDatetime</h1>
            <p>This page has moved to <a href="errors.html">the exceptions page</a>.</p>
            <a href="index.html"><p>next</p><p>Index</p></a></main>"#;
        let s = extract(stub, "https://ex.org/api/y.html")
            .unwrap()
            .structure
            .unwrap();
        assert_eq!(classify(&s), Some(Noise::Redirect), "{s:?}");
    }

    fn page(path: &str, title: &str, content: &str) -> Page {
        Page {
            url: format!("https://ex.org{path}"),
            title: title.into(),
            content: content.into(),
            ..Page::default()
        }
    }

    /// The paths of the pages [`sift`] keeps, with its tally.
    fn kept_paths(pages: Vec<Page>) -> (Vec<String>, Tally) {
        let mut tally = Tally::default();
        let kept = sift(pages, false, &mut tally)
            .iter()
            .map(Page::path)
            .collect();
        (kept, tally)
    }

    #[test]
    fn a_page_holding_other_pages_whole_under_its_own_headings_is_left_out_as_print_all() {
        // FFmpeg's `ffmpeg-all.html`: the component pages' text under chapter headings
        // of its own, titled as the program's page.
        let text = |name: &str| {
            (0..5)
                .map(|i| {
                    format!(
                        "Paragraph {i} of the {name} page describes its options in a \
                         sentence long enough to be compared."
                    )
                })
                .collect::<Vec<_>>()
                .join("\n\n")
        };
        let parts = ["codecs", "filters", "formats", "protocols"];
        let mut pages: Vec<Page> = parts
            .iter()
            .map(|p| page(&format!("/ffmpeg-{p}.html"), p, &text(p)))
            .collect();
        pages.push(page(
            "/ffmpeg.html",
            "ffmpeg Documentation",
            &text("ffmpeg"),
        ));
        let all: String = parts
            .iter()
            .enumerate()
            .map(|(i, p)| format!("# {} Chapter\n\n{}\n\n", i + 10, text(p)))
            .collect();
        pages.push(page("/ffmpeg-all.html", "ffmpeg Documentation", &all));
        the_one_print_all_page_is(pages, "/ffmpeg-all.html");
    }

    /// `path` is the one page of `pages` left out, as a print-all page; `--keep-all`
    /// keeps it and still counts it. The tally, for the summary's wording.
    fn the_one_print_all_page_is(pages: Vec<Page>, path: &str) -> Tally {
        let n = pages.len();
        let mut tally = Tally::default();
        let kept = sift(pages.clone(), false, &mut tally);
        assert_eq!(kept.len(), n - 1);
        assert!(kept.iter().all(|p| p.path() != path));
        assert_eq!(tally.count(Noise::PrintAll), 1);
        let mut tally = Tally::default();
        assert_eq!(sift(pages, true, &mut tally).len(), n, "keep_all keeps it");
        assert_eq!(tally.count(Noise::PrintAll), 1, "and still counts it");
        tally
    }

    #[test]
    fn a_page_whose_headings_are_other_pages_titles_is_a_print_all_page() {
        let titles: Vec<String> = (0..10).map(|i| format!("Chapter {i} topic")).collect();
        let mut pages: Vec<Page> = titles
            .iter()
            .enumerate()
            .map(|(i, t)| page(&format!("/ch{i}.html"), t, &format!("# {t}\n\nText {i}.")))
            .collect();
        let all: String = titles
            .iter()
            .map(|t| format!("# {t}\n\nText.\n\n"))
            .collect();
        pages.push(page("/print.html", "The whole book", &all));
        // A long page with its own sections is not one.
        let own: String = (0..10)
            .map(|i| format!("## Part {i}\n\nText.\n\n"))
            .collect();
        pages.push(page("/manual.html", "User manual", &own));
        // Nor is a script whose comments repeat the titles: code holds no headings.
        let script: String = titles.iter().map(|t| format!("# {t}\necho ok\n")).collect();
        pages.push(page(
            "/script.html",
            "Script",
            &format!("```sh\n{script}```"),
        ));
        let tally = the_one_print_all_page_is(pages, "/print.html");
        assert!(tally.summary().unwrap().starts_with("kept 1 print-all"));
    }

    #[test]
    fn a_page_naming_other_pages_in_its_headings_without_their_text_is_kept() {
        // Django's release notes: a section per component, each named like the
        // component's page ("django.contrib.admin"), with what changed, not the page.
        let titles: Vec<String> = (0..10).map(|i| format!("component {i}")).collect();
        let text = |i: usize| {
            format!("Component {i} does one thing well, as this opening sentence says at length.")
        };
        let mut pages: Vec<Page> = titles
            .iter()
            .enumerate()
            .map(|(i, t)| page(&format!("/c{i}.html"), t, &format!("# {t}\n\n{}", text(i))))
            .collect();
        let notes: String = titles
            .iter()
            .map(|t| format!("### {t}\n\nA new option was added to it in this release.\n\n"))
            .collect();
        pages.push(page("/releases/2.0.html", "Release 2.0", &notes));
        let all: String = titles
            .iter()
            .enumerate()
            .map(|(i, t)| format!("## {t}\n\n{}\n\n", text(i)))
            .collect();
        pages.push(page("/all.html", "Everything", &all));
        let mut tally = Tally::default();
        let kept = sift(pages, false, &mut tally);
        assert_eq!(tally.count(Noise::PrintAll), 1);
        assert!(kept.iter().any(|p| p.path() == "/releases/2.0.html"));
        assert!(kept.iter().all(|p| p.path() != "/all.html"));
    }

    #[test]
    fn a_blog_index_or_tag_page_of_posts_openings_is_a_listing() {
        let built = |path: &str, title: &str, content: &str| Page {
            structure: Some(Structure::default()),
            ..page(path, title, content)
        };
        let opening =
            |i: usize| format!("Post {i} opens with a sentence of its own, long enough to tell.");
        let mut pages: Vec<Page> = (0..3)
            .map(|i| {
                let text = format!(
                    "# Post number {i}\n\nMay {i}, 2024 · One min read\n\n{}\n\nThe rest of post {i}.",
                    opening(i)
                );
                built(&format!("/blog/post-{i}/"), &format!("Post number {i}"), &text)
            })
            .collect();
        // Each post's title over its date and opening, as Docusaurus and Hugo list them.
        let listed = |posts: &[usize]| -> String {
            posts
                .iter()
                .map(|&i| {
                    format!(
                        "## Post number {i}\n\nMay {i}, 2024\n\n{}\n\nRead more\n\n",
                        opening(i)
                    )
                })
                .collect()
        };
        pages.push(built("/blog/", "Blog", &listed(&[0, 1, 2])));
        let tag = format!(
            "# 2 posts tagged with Rust\n\nView all tags\n\n{}",
            listed(&[0, 2])
        );
        pages.push(built("/blog/tags/rust/", "2 posts tagged with Rust", &tag));
        // One post under a tag is not told from a page quoting another: kept.
        let one = format!("# One post tagged with Go\n\n{}", listed(&[1]));
        pages.push(built("/blog/tags/go/", "One post tagged with Go", &one));
        // A page quoting two posts amid more text of its own: kept.
        let own = "An essay's own paragraph, longer than what it quotes. ".repeat(20);
        let essay = format!(
            "# Essay\n\n{own}\n\n{}## Conclusion\n\n{own}",
            listed(&[0, 1])
        );
        pages.push(built("/essay/", "Essay", &essay));
        // A class quoting two modules in its description, its own methods under lower
        // headings after the last of them (RDoc's FileUtils): no more of that section than
        // the quoted page is a copy, so the quotes are a small part of the page: kept.
        let methods = "### Public Class Methods\n\ncd(dir) changes the directory.\n\n".repeat(20);
        let class = format!(
            "# module Utils\n\nUtilities.\n\n{}{methods}",
            listed(&[1, 2])
        );
        pages.push(built("/Utils.html", "module Utils", &class));
        // Markdown sources are the owner's own writing, whatever they quote.
        let source = Structure {
            source: true,
            ..Structure::default()
        };
        pages.push(Page {
            structure: Some(source),
            ..page("/notes/", "Notes", &listed(&[0, 1, 2]))
        });

        let mut tally = Tally::default();
        let kept: Vec<String> = sift(pages.clone(), false, &mut tally)
            .iter()
            .map(Page::path)
            .collect();
        assert_eq!(tally.count(Noise::Listing), 2, "{kept:?}");
        for gone in ["/blog/", "/blog/tags/rust/"] {
            assert!(!kept.iter().any(|p| p == gone), "{gone} kept: {kept:?}");
        }
        for stays in [
            "/blog/post-0/",
            "/blog/tags/go/",
            "/essay/",
            "/Utils.html",
            "/notes/",
        ] {
            assert!(
                kept.iter().any(|p| p == stays),
                "{stays} left out: {kept:?}"
            );
        }
        let mut tally = Tally::default();
        assert_eq!(
            sift(pages, true, &mut tally).len(),
            9,
            "keep_all keeps them"
        );
        assert_eq!(tally.count(Noise::Listing), 2, "and counts them");
    }

    #[test]
    fn a_category_page_of_the_pages_summaries_is_a_listing_however_long() {
        // Hugo's category and section pages: each page's title over the summary its front
        // matter gives (the page's `<meta name="description">`, not its opening) and "Read
        // More »"; a category of the function reference holds 139 of them.
        let built = |path: &str, title: &str, content: &str, description: Option<String>| Page {
            structure: Some(Structure::default()),
            description,
            ..page(path, title, content)
        };
        let summary = |i: usize| format!("Returns the value number {i} of a collection, or nil.");
        let mut pages: Vec<Page> = (0..139)
            .map(|i| {
                let text = format!(
                    "# fn{i}\n\n## Syntax\n\n```\nfn{i} COLLECTION\n```\n\n\
                     The function walks its collection and stops at the first match."
                );
                built(
                    &format!("/functions/fn{i}/"),
                    &format!("fn{i}"),
                    &text,
                    Some(summary(i)),
                )
            })
            .collect();
        let cards = |posts: std::ops::Range<usize>| -> String {
            posts
                .map(|i| format!("# fn{i}\n\n{} Read More »\n\n", summary(i)))
                .collect()
        };
        let category = format!("# Category: functions\n\n{}", cards(0..139));
        pages.push(built(
            "/categories/functions/",
            "Category: functions",
            &category,
            None,
        ));
        pages.push(built(
            "/categories/dates/",
            "Category: dates",
            &cards(3..6),
            None,
        ));
        // Two summaries quoted amid a guide's own text: a page.
        let own = "A guide's own paragraph, longer than what it quotes. ".repeat(20);
        let guide = format!("# Guide\n\n{own}\n\n{}## More\n\n{own}", cards(7..9));
        pages.push(built("/guide/", "Guide", &guide, None));

        let (kept, tally) = kept_paths(pages);
        assert_eq!(tally.count(Noise::Listing), 2, "{:?}", tally.examples());
        for gone in ["/categories/functions/", "/categories/dates/"] {
            assert!(!kept.iter().any(|p| p == gone), "{gone} kept");
        }
        assert!(kept.iter().any(|p| p == "/guide/"));
        assert!(kept.iter().any(|p| p == "/functions/fn0/"));
    }

    #[test]
    fn hugo_s_category_page_of_cards_is_a_listing_and_the_pages_it_lists_stay() {
        // Cut from Hugo 0.111's documentation as Hugo builds it: a category page's cards
        // show each page's front-matter description, which the page sets in an `<aside>`.
        let mut pages: Vec<Page> = [
            "hugo-category.html",
            "hugo-modules-section.html",
            "hugo-configure-modules.html",
            "hugo-use-modules.html",
            "hugo-theme-components.html",
        ]
        .into_iter()
        .map(fixture)
        .collect();
        // As the build does first: " | Hugo" off the titles the cards show.
        let site_name = crate::build::titles::site_name_parts(&pages);
        crate::build::titles::drop_site_name(&mut pages, &site_name);
        let (kept, tally) = kept_paths(pages);
        assert_eq!(tally.count(Noise::Listing), 1, "{:?}", tally.examples());
        assert_eq!(
            kept,
            [
                "/hugo-modules-section.html",
                "/hugo-configure-modules.html",
                "/hugo-use-modules.html",
                "/hugo-theme-components.html"
            ]
        );
    }

    #[test]
    fn the_site_header_s_links_do_not_make_a_short_page_an_index() {
        // A site without <main> (SQLite's): every page's measured content holds the
        // header's 14 navigation links, each an index entry of its own block.
        let measured = |path: &str, title: &str, own_entries: u32, own_words: u32| Page {
            structure: Some(Structure {
                entries: 14 + own_entries,
                blocks: 14 + own_entries + 3,
                links: 14 + own_entries,
                loose_words: own_words,
                prose_words: own_words,
                words: own_words + 14 + 2 * own_entries,
                chars: 6 * (own_words + 14 + 2 * own_entries),
                link_chars: 6 * (14 + 2 * own_entries),
                opening_chars: 60,
                longest_prose: own_words.min(40),
                ..Structure::default()
            }),
            ..page(path, title, "text")
        };
        // Short reference pages: 110 words of their own under the header, four of them
        // sharing a title ("Deprecated Functions"), as no part of a split index does.
        let mut pages: Vec<Page> = (0..12)
            .map(|i| {
                let title = if i < 4 {
                    "Deprecated".into()
                } else {
                    format!("f{i}")
                };
                measured(&format!("/c3ref/f{i}.html"), &title, 0, 110)
            })
            .collect();
        // The keyword index: 400 entries of its own under the same header.
        pages.push(measured("/keyword_index.html", "Keywords", 400, 20));
        let mut tally = Tally::default();
        let kept = sift(pages.clone(), false, &mut tally);
        assert_eq!(tally.count(Noise::Links), 1);
        assert_eq!(kept.len(), 12);
        assert!(kept.iter().all(|p| p.path() != "/keyword_index.html"));
        // Alone (too few pages to tell the chrome), a short page is judged as measured.
        let mut tally = Tally::default();
        sift(pages[..1].to_vec(), false, &mut tally);
        assert_eq!(tally.count(Noise::Links), 1);
    }

    #[test]
    fn a_stub_left_with_only_its_heading_once_the_chrome_is_gone_is_a_stub() {
        // Built pages carry their structure; the test gives them an empty one.
        let built = |path: &str, title: &str, content: &str| Page {
            structure: Some(Structure::default()),
            ..page(path, title, content)
        };
        // Rust's superseded book editions: each chapter's page is its heading over one
        // notice that every such page shares, which the chrome removal takes.
        let notice = "The 2018 edition of the book is no longer distributed with Rust.";
        let mut pages: Vec<Page> = (0..12)
            .map(|i| {
                let t = format!("Chapter {i}");
                built(
                    &format!("/old/ch{i}.html"),
                    &t,
                    &format!("## {t}\n\n{notice}"),
                )
            })
            .collect();
        pages.extend((0..12).map(|i| {
            let t = format!("Chapter {i}");
            let text = format!("## {t}\n\nWhat chapter {i} teaches, in words of its own.");
            built(&format!("/ch{i}.html"), &t, &text)
        }));
        // Headings and code alone are a source listing (its `# comment` no heading)...
        pages.push(built(
            "/code.html",
            "Listing",
            "## Listing\n\n```\n# a comment\n```",
        ));
        // ... and not empty: code a sentence introduces, a heading with a description,
        // and a page not measured (no structure).
        pages.push(built(
            "/example.html",
            "Example",
            "## Example\n\nRun the tool:\n\n```\n# a comment\n```",
        ));
        pages.push(Page {
            description: Some("What the section holds.".into()),
            ..built("/section.html", "Section", "# Section")
        });
        pages.push(page("/posts/", "Posts", "# Posts"));
        crate::build::boilerplate::strip_by_folder(&mut pages);
        assert_eq!(pages[0].content, "## Chapter 0", "the notice is chrome");
        let mut tally = Tally::default();
        let kept = sift_emptied(pages.clone(), false, &mut tally);
        assert_eq!(tally.count(Noise::Redirect), 12);
        assert_eq!(tally.count(Noise::Source), 1);
        assert_eq!(kept.len(), 15);
        assert!(kept.iter().all(|p| !p.path().starts_with("/old/")));
        assert!(kept.iter().all(|p| p.path() != "/code.html"));
        let mut tally = Tally::default();
        let all = sift_emptied(pages, true, &mut tally);
        assert_eq!(
            (all.len(), tally.count(Noise::Redirect)),
            (28, 12),
            "keep_all keeps and counts them"
        );
    }

    #[test]
    fn a_print_all_page_is_found_by_the_level_its_titles_stand_at() {
        // Node.js's all.html: each page's title an `<h2>`, many sections under each, so
        // the titles are few among all its headings.
        let titles: Vec<String> = (0..10).map(|i| format!("Module {i}")).collect();
        let mut pages: Vec<Page> = titles
            .iter()
            .enumerate()
            .map(|(i, t)| page(&format!("/m{i}.html"), t, &format!("## {t}\n\nText {i}.")))
            .collect();
        let all: String = titles
            .iter()
            .map(|t| {
                let sections: String = (0..30)
                    .map(|j| format!("### {t} function {j}\n\nText.\n\n"))
                    .collect();
                format!("## {t}\n\n{sections}")
            })
            .collect();
        pages.push(page("/all.html", "Documentation", &all));
        let mut tally = Tally::default();
        let kept = sift(pages, false, &mut tally);
        assert_eq!(kept.len(), 10);
        assert_eq!(tally.count(Noise::PrintAll), 1);
    }

    #[test]
    fn the_parts_of_an_index_split_over_pages_under_one_title_are_link_lists() {
        // Doxygen's member index, one page per letter: an introduction and a few names,
        // too few on any one page to tell it from a short page.
        let part = |letter: char, title: &str| {
            let items: String = (0..3)
                .map(|i| {
                    format!("<li>{letter}_name_{i} : <a href=\"file_8h.html#{i}\">file.h</a></li>")
                })
                .collect();
            let html = format!(
                r#"<html><head><title>{title}</title></head><body><p>Here is a list of all
                documented functions with links to the documentation:</p><h3>- {letter} -</h3>
                <ul>{items}</ul></body></html>"#
            );
            extract(&html, &format!("https://ex.org/globals_{letter}.html")).unwrap()
        };
        let mut pages: Vec<Page> = "abc".chars().map(|c| part(c, "Pony: Globals")).collect();
        // The same layout under a title of its own is a short page like any other.
        pages.push(part('d', "Pony: Deprecated names"));
        for p in &pages {
            assert_eq!(
                classify(p.structure.as_ref().unwrap()),
                None,
                "{:?}",
                p.structure
            );
        }
        let mut tally = Tally::default();
        let kept = sift(pages, false, &mut tally);
        assert_eq!(tally.count(Noise::Links), 3);
        assert_eq!(kept.len(), 1);
        assert_eq!(kept[0].title, "Pony: Deprecated names");
    }

    #[test]
    fn the_summary_names_each_kind_skipped() {
        let mut t = Tally::default();
        t.add(Noise::Links, "/genindex.html".into());
        t.add(Noise::Links, "/contents.html".into());
        t.add(Noise::Source, "/src/lib.rs.html".into());
        t.collapsed = 3;
        assert_eq!(
            t.summary().unwrap(),
            "skipped 2 link lists, 1 source listings; 3 duplicates collapsed"
        );
        assert_eq!(
            t.examples()[0],
            "2 link lists, e.g. /genindex.html, /contents.html"
        );
    }
}
