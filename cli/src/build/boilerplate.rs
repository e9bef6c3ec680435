//! Site chrome left in the pages' text: a site without `<main>` (or landmark roles) puts
//! its header, navigation bar and footer around every page's content ("Home | Table of
//! contents | Index | Modules", "« previous | up | next »", "Last update:"). Such a line
//! stands on most pages of the site, where a line of the page's own text stands on one or a
//! few, so a line that most pages share is dropped from all of them. A folder with a
//! layout of its own (a manual beside generated example projects) gets the same test
//! among its pages, for the lines at their edges only, where a header and footer stand.
//!
//! The same holds for a meta description that many pages carry and none of them says: the
//! site's or a section's, not the page's ([`strip_shared_descriptions`]).
//!
//! Headings stay: they shape the passages (a man page's `## SEE ALSO` on every page is the
//! start of a section, not chrome), and a heading that only names the site is already left
//! out of the title (see `html::names_site`). A section's heading that the pages share
//! goes only with its section, when all that section held was chrome.

use std::collections::HashMap;
use std::hash::{DefaultHasher, Hash, Hasher};

use super::noise::normalise;
use super::page::{sub_folders, Page};

/// A line on at least this share of the pages is chrome (of the pages of content: see
/// [`strip_by_folder`]) ...
const MIN_SHARE: f64 = 0.5;
/// ... on a site of at least this many pages (on a few pages, one shared line may be
/// anything: the owner's signature, a course's name).
const MIN_PAGES: usize = 10;
/// Lines longer than this are never chrome: a header or a navigation bar is short, and
/// counting only short lines keeps the tally small on a large site.
const MAX_CHROME_CHARS: usize = 200;
/// A large site's pages are first sampled, this many evenly spread, for lines that could
/// be chrome ...
const SAMPLE_PAGES: usize = 256;
/// ... those on at least this share of the sample (below [`MIN_SHARE`], so sampling
/// misses no line that half the site shares: at 256 pages the share of a line on half of
/// them varies by about 3 points) are then counted over every page.
const SAMPLE_SHARE: f64 = 0.4;

/// Which lines of a page may be chrome.
#[derive(Clone, Copy)]
enum Lines {
    /// Any line: across the whole site, a line on half the pages is the layout's.
    All,
    /// Only the first and last [`EDGE_LINES`] of each page, where a header and a footer
    /// stand: within one folder, a line of the pages' own text (the same import line
    /// opening the examples of one chapter) may be on half of them.
    Edges,
}

/// The lines at either end of a page that a folder's chrome may be.
const EDGE_LINES: usize = 3;

/// [`strip_by_folder`]'s site-wide or folder pass, looking only at `lines`, with the
/// shares counted among the pages `counted` marks (one flag per page).
fn strip_lines(pages: &mut [Page], counted: &[bool], lines: Lines) -> usize {
    let n = counted.iter().filter(|&&c| c).count();
    if n < MIN_PAGES {
        return 0;
    }
    let counted_pages = || {
        pages
            .iter()
            .zip(counted)
            .filter(|(_, &c)| c)
            .map(|(p, _)| p)
    };
    // Lines that could be chrome, from an evenly spread sample of a large site; then on
    // how many pages each of those stands. Tallying every short line of every page
    // instead held 28 MiB more on the JDK's 10,000 pages.
    let step = n.div_ceil(SAMPLE_PAGES).max(1);
    let mut maybe = tally(counted_pages().step_by(step), lines, |_| true);
    let at_least = (SAMPLE_SHARE * n.div_ceil(step) as f64).ceil() as usize;
    maybe.retain(|_, n| *n >= at_least);
    if maybe.is_empty() {
        return 0;
    }
    let mut pages_with = tally(counted_pages(), lines, |h| maybe.contains_key(&h));
    let threshold = (MIN_SHARE * n as f64).ceil() as usize;
    pages_with.retain(|_, n| *n >= threshold);
    if pages_with.is_empty() {
        return 0;
    }
    let mut changed = 0;
    for page in pages.iter_mut() {
        // A line the pages share: chrome, or a heading that may go with its section.
        let shared = |(scope, line): (bool, &str)| {
            scope && candidate(line).is_some_and(|h| pages_with.contains_key(&h))
        };
        let is_chrome = |l: (bool, &str)| !is_heading(l.1) && shared(l);
        if !scoped(&page.content, lines).any(is_chrome) {
            continue;
        }
        changed += 1;
        let marked: Vec<Marked<'_>> = scoped(&page.content, lines)
            .zip(shared::kb::fenced_lines(&page.content))
            .map(|(l, (_, text, code))| Marked {
                text,
                shared: shared(l),
                code,
            })
            .collect();
        page.content = collapse_blank_runs(&without_emptied_headings(&marked));
    }
    changed
}

/// Each line of `content`, with whether it is among `lines`. Fenced code (its fences too)
/// is never chrome: a site's header and footer are not code, and the same code line
/// (`}`, an import) on half the pages is still part of each page's example.
fn scoped(content: &str, lines: Lines) -> impl Iterator<Item = (bool, &str)> {
    // Blank lines do not count: the Markdown puts one between blocks.
    let filled = match lines {
        Lines::All => 0,
        Lines::Edges => content.lines().filter(|l| !l.trim().is_empty()).count(),
    };
    let mut k = 0;
    shared::kb::fenced_lines(content).map(move |(_, l, code)| {
        let scope = match lines {
            Lines::All => true,
            Lines::Edges if l.trim().is_empty() => false,
            Lines::Edges => {
                k += 1;
                k <= EDGE_LINES || k + EDGE_LINES > filled
            }
        };
        (scope && !code, l)
    })
}

/// Drops from every page's content the lines that at least [`MIN_SHARE`] of `pages`
/// share, over the whole site, then within each folder of at least
/// [`super::page::FOLDER_MIN_PAGES`] pages that is not the whole site ([`sub_folders`]), at the pages'
/// edges ([`Lines::Edges`]): a part of a site with a layout of its own (a manual beside
/// generated example projects, a release log beside the reference) has chrome of its own,
/// which its pages share though the rest of the site does not. Returns how many pages lost
/// some.
///
/// The shares are of the pages of content, the generator's noise not counted
/// ([`super::noise::content_pages`]): Haddock writes a highlighted source listing and a few
/// identifier index pages beside each module's page, so the module pages' header ("Safe
/// Haskell | Trustworthy", "Synopsis") stood on 89 % of them but a third of the site's files.
pub(crate) fn strip_by_folder(pages: &mut [Page]) -> usize {
    let counted = super::noise::content_pages(pages);
    let mut changed = strip_lines(pages, &counted, Lines::All);
    for members in sub_folders(pages) {
        let mut part: Vec<Page> = members
            .iter()
            .map(|&i| std::mem::take(&mut pages[i]))
            .collect();
        let part_counted: Vec<bool> = members.iter().map(|&i| counted[i]).collect();
        changed += strip_lines(&mut part, &part_counted, Lines::Edges);
        for (&i, page) in members.iter().zip(part) {
            pages[i] = page;
        }
    }
    changed
}

/// Pages that share one description before it is the site's or a section's own rather
/// than theirs (an mdBook's or a Hugo theme's site description on every page).
const SHARED_DESCRIPTION_PAGES: usize = 10;

/// Drops a description that at least [`SHARED_DESCRIPTION_PAGES`] pages carry, from each of
/// them whose text does not say it: it describes the site or a section (Rust by Example's
/// "Rust by Example (RBE) is a collection of runnable examples…" on its 178 pages), and in
/// every page's naming field it would match the same words for all of them. Where the
/// page's text holds it, it is that page's own (many API items with one doc comment), and
/// stays. Returns how many pages lost theirs.
pub(crate) fn strip_shared_descriptions(pages: &mut [Page]) -> usize {
    let mut carried: HashMap<&str, usize> = HashMap::new();
    for page in pages.iter() {
        if let Some(d) = page.description.as_deref() {
            *carried.entry(d).or_default() += 1;
        }
    }
    // Each shared description and its words, compared as words, so a description in
    // Markdown ("values from `slice`") is found in the page's text ("values from slice").
    let shared: HashMap<String, String> = carried
        .into_iter()
        .filter(|&(_, n)| n >= SHARED_DESCRIPTION_PAGES)
        .map(|(d, _)| (d.to_owned(), normalise(d)))
        .collect();
    if shared.is_empty() {
        return 0;
    }
    let mut changed = 0;
    for page in pages.iter_mut() {
        let drop = page
            .description
            .as_deref()
            .and_then(|d| shared.get(d))
            .is_some_and(|words| !normalise(&page.content).contains(words.as_str()));
        if drop {
            page.description = None;
            changed += 1;
        }
    }
    changed
}

/// On how many of `pages` each line (by its [`candidate`] hash) among `lines` that `keep`
/// accepts stands.
fn tally<'p>(
    pages: impl Iterator<Item = &'p Page>,
    lines: Lines,
    keep: impl Fn(u64) -> bool,
) -> HashMap<u64, usize> {
    let mut pages_with: HashMap<u64, usize> = HashMap::new();
    let mut seen: Vec<u64> = Vec::new();
    for page in pages {
        seen.clear();
        seen.extend(
            scoped(&page.content, lines)
                .filter(|&(scope, _)| scope)
                .filter_map(|(_, l)| candidate(l))
                .filter(|&h| keep(h)),
        );
        seen.sort_unstable();
        seen.dedup();
        for &h in &seen {
            *pages_with.entry(h).or_default() += 1;
        }
    }
    pages_with
}

/// The lines of a page that are not chrome, in order, less each section heading (level 2
/// and below) that the pages share as they share chrome and whose section the drop
/// emptied: its lines, up to the next heading of its level or above, were all chrome
/// (Apache's "Bugfix checklist" over three links on every module page). Such a heading is
/// part of the chrome. A heading of the page's own stays, though only chrome followed it
/// (an Erlang module's last type, `wxPaintEventType() = paint`, over the site's footer), and
/// so does a heading that had nothing under it before, as the page wrote it.
fn without_emptied_headings<'l>(lines: &[Marked<'l>]) -> Vec<&'l str> {
    // Walked from the end: for each level, whether the text from here to the next heading
    // of that level or above holds a kept line (`held`), and whether it lost one (`lost`).
    let mut held = [false; 7];
    let mut lost = [false; 7];
    let mut gone = vec![false; lines.len()];
    for (i, line) in lines.iter().enumerate().rev() {
        if line.text.trim().is_empty() {
            continue;
        }
        let level = if line.code {
            None
        } else {
            shared::kb::headings(line.text)
                .next()
                .map(|(_, level, _)| level)
        };
        // The levels whose sections this line is part of: a heading is part of those above
        // its own, and ends those of its level and below that start above it.
        let within = match level {
            Some(h) => {
                // A top heading names the page or the site, not a section, and stays:
                // Django's "Django 3.2.25 documentation" over the navigation of every page
                // gone cost its questions 0.010 nDCG@10 (docs/evaluation.md).
                gone[i] = h > 1 && line.shared && lost[h] && !held[h];
                held[h..].fill(false);
                lost[h..].fill(false);
                h
            }
            None => {
                gone[i] = line.chrome();
                held.len()
            }
        };
        let mark = if gone[i] { &mut lost } else { &mut held };
        mark[1..within].fill(true);
    }
    // A page whose every line goes keeps its headings: a stub the chrome removal emptied
    // is told by its headings left alone (`noise::sift_emptied`).
    if lines
        .iter()
        .zip(&gone)
        .all(|(l, &g)| g || l.text.trim().is_empty())
    {
        for (g, l) in gone.iter_mut().zip(lines) {
            *g = l.chrome();
        }
    }
    lines
        .iter()
        .zip(gone)
        .filter(|&(_, gone)| !gone)
        .map(|(line, _)| line.text)
        .collect()
}

/// A line of a page as [`strip_lines`] weighs it.
struct Marked<'l> {
    text: &'l str,
    /// Whether the pages share it (never fenced code): a line so shared is chrome, a
    /// heading so shared is chrome's ("Bugfix checklist") and may go with its section.
    shared: bool,
    /// Whether it is fenced code (a `# comment` there is no heading).
    code: bool,
}

impl Marked<'_> {
    /// Whether the line is chrome, to be dropped.
    fn chrome(&self) -> bool {
        self.shared && !is_heading(self.text)
    }
}

/// Whether a line (outside fenced code) is a Markdown heading.
fn is_heading(line: &str) -> bool {
    line.trim_start().starts_with('#')
}

/// The hash of a line that could be chrome, or a heading over chrome: not blank, not long.
fn candidate(line: &str) -> Option<u64> {
    let line = line.trim();
    if line.is_empty() || line.chars().count() > MAX_CHROME_CHARS {
        return None;
    }
    let mut h = DefaultHasher::new();
    line.hash(&mut h);
    Some(h.finish())
}

/// The lines joined again, with no more than one blank line in a row (a dropped line
/// between two blank ones would leave two) and none at either end.
fn collapse_blank_runs(lines: &[&str]) -> String {
    let mut out = String::new();
    let mut blank = false;
    for line in lines {
        if line.trim().is_empty() {
            blank = !out.is_empty();
            continue;
        }
        if blank {
            out.push('\n');
            blank = false;
        }
        out.push_str(line);
        out.push('\n');
    }
    while out.ends_with('\n') {
        out.pop();
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The site-wide pass alone.
    fn strip(pages: &mut [Page]) -> usize {
        let counted = super::super::noise::content_pages(pages);
        strip_lines(pages, &counted, Lines::All)
    }

    fn page(i: usize, content: String) -> Page {
        Page {
            url: format!("https://ex.org/p{i}.html"),
            title: format!("Page {i}"),
            content,
            ..Page::default()
        }
    }

    #[test]
    fn a_description_many_pages_share_goes_unless_their_text_says_it() {
        let site = "A collection of runnable examples of the language.";
        let mut pages: Vec<Page> = (0..12)
            .map(|i| Page {
                description: Some(site.into()),
                ..page(i, format!("# Example {i}\n\nWhat example {i} shows."))
            })
            .collect();
        // One page's own description, and one whose text holds the shared one.
        pages.push(Page {
            description: Some("Its own summary.".into()),
            ..page(12, "# Own\n\nText.".into())
        });
        pages.push(Page {
            description: Some(site.into()),
            ..page(13, format!("# Intro\n\n{site}"))
        });
        // Its text may say it in other marks ("of the `language`").
        pages.push(Page {
            description: Some(site.into()),
            ..page(
                14,
                "# About\n\nA collection of runnable examples of the **language**!".into(),
            )
        });
        assert_eq!(strip_shared_descriptions(&mut pages), 12);
        assert!(pages[..12].iter().all(|p| p.description.is_none()));
        assert_eq!(pages[12].description.as_deref(), Some("Its own summary."));
        assert_eq!(pages[13].description.as_deref(), Some(site));
        assert_eq!(pages[14].description.as_deref(), Some(site));
        // Fewer pages than the threshold keep it.
        let mut few: Vec<Page> = pages[..5]
            .iter()
            .map(|p| Page {
                description: Some(site.into()),
                ..p.clone()
            })
            .collect();
        assert_eq!(strip_shared_descriptions(&mut few), 0);
    }

    #[test]
    fn a_folder_with_a_layout_of_its_own_loses_its_chrome_at_the_pages_edges() {
        // A manual of 12 pages beside 20 generated example pages: the manual's footer is
        // on fewer than half the site's pages, all of the folder's. Its pages also open
        // their examples with the same line, which is text, not chrome.
        let mut pages: Vec<Page> = (0..12)
            .map(|i| Page {
                url: format!("https://ex.org/manual/ch{i}.html"),
                content: format!(
                    "Pony\n\nChapter {i} explains one thing.\n\nIt has reason {i}.\n\n\
                     It has an example.\n\nfrom pony import models\n\nExample {i} runs.\n\n\
                     Then chapter {i} goes on.\n\nGo to the next section or return to the index."
                ),
                ..Page::default()
            })
            .chain((0..20).map(|i| Page {
                url: format!("https://ex.org/manual/examples/e{i}/html/index.html"),
                // Two tools, neither line on half the site.
                content: format!("Example {i}\n\nGenerated by tool {}.", i % 2),
                ..Page::default()
            }))
            .collect();
        strip_by_folder(&mut pages);
        assert_eq!(
            pages[0].content,
            "Chapter 0 explains one thing.\n\nIt has reason 0.\n\nIt has an example.\n\n\
             from pony import models\n\nExample 0 runs.\n\nThen chapter 0 goes on."
        );
        // Each example is alone in its folder: nothing of it goes.
        assert_eq!(pages[12].content, "Example 0\n\nGenerated by tool 0.");
    }

    #[test]
    fn lines_most_pages_share_are_dropped_and_headings_and_own_text_stay() {
        let mut pages: Vec<Page> = (0..12)
            .map(|i| {
                // Chrome on every page but the last two; a heading on all of them.
                let nav = if i < 10 {
                    "Home | Index | Modules\n\n"
                } else {
                    ""
                };
                page(
                    i,
                    format!(
                        "{nav}# Topic {i}\n\nText of page {i}.\n\n## See also\n\nPage {}.\n\n\
                         Last update: today",
                        i + 1
                    ),
                )
            })
            .collect();
        assert_eq!(strip(&mut pages), 12);
        assert_eq!(
            pages[0].content,
            "# Topic 0\n\nText of page 0.\n\n## See also\n\nPage 1."
        );
        assert_eq!(
            pages[11].content,
            "# Topic 11\n\nText of page 11.\n\n## See also\n\nPage 12."
        );
    }

    #[test]
    fn a_heading_over_nothing_but_chrome_goes_with_it() {
        // Every page opens with the site's name over its navigation, has links under a
        // heading of their own ("Bugfix checklist") and a section of two levels whose
        // only text is chrome, and ends with an item of its own over the footer; the last
        // page writes an empty heading of its own, and one whose section keeps a line of
        // its own text.
        let mut pages: Vec<Page> = (0..12)
            .map(|i| {
                page(
                    i,
                    format!(
                        "# Site\n\nHome | Index\n\n# Module {i}\n\nWhat module {i} does.\n\n### Checklist\n\n\
                         Changelog\n\nKnown issues\n\n### See also\n\nModule {}.\n\n\
                         ## Links\n\n### Bug tracker\n\nReport a bug\n\n\
                         ## Notes\n\nReport a bug\n\nNote {i}.\n\n\
                         ```\n# Checklist\n```\n\n### item{i}() = atom\n\nGenerated by the tool",
                        i + 1
                    ),
                )
            })
            .collect();
        pages[11]
            .content
            .push_str("\n\n## Empty\n\n## Last\n\nThe end.");
        assert_eq!(strip(&mut pages), 12);
        assert_eq!(
            pages[0].content,
            "# Site\n\n# Module 0\n\nWhat module 0 does.\n\n### See also\n\nModule 1.\n\n\
             ## Notes\n\nNote 0.\n\n```\n# Checklist\n```\n\n### item0() = atom"
        );
        assert!(pages[11]
            .content
            .ends_with("\n\n## Empty\n\n## Last\n\nThe end."));
    }

    #[test]
    fn chrome_is_counted_among_the_pages_of_content_not_the_generators_noise() {
        use crate::build::noise::{classify, Structure};
        // Haddock's layout: each module page opens with the same header rows, and beside
        // the modules stand more source listings than modules, which lack the header.
        let listing = Structure {
            chars: 5000,
            code_chars: 5000,
            words: 800,
            numbered_lines: 200,
            ..Structure::default()
        };
        assert!(classify(&listing).is_some(), "the listing reads as noise");
        let mut pages: Vec<Page> = (0..12)
            .map(|i| {
                page(
                    i,
                    format!("Safe Haskell | Safe\n\nSynopsis\n\n# Data.M{i}\n\nModule {i}."),
                )
            })
            .collect();
        pages.extend((12..40).map(|i| Page {
            structure: Some(listing),
            ..page(i, format!("```\nmodule Data.M{i} where\n```"))
        }));
        assert_eq!(strip_by_folder(&mut pages), 12);
        assert_eq!(pages[3].content, "# Data.M3\n\nModule 3.");
        assert_eq!(pages[20].content, "```\nmodule Data.M20 where\n```");
    }

    #[test]
    fn code_the_pages_share_is_no_chrome() {
        // Every example opens with the same import and closes its block the same way.
        let mut pages: Vec<Page> = (0..12)
            .map(|i| {
                page(
                    i,
                    format!(
                        "Home | Index\n\n# Topic {i}\n\nText {i}.\n\n\
                         ```\nimport typer\n\napp = typer.Typer({i})\n```\n\n\
                         ~~~\n}}\n~~~"
                    ),
                )
            })
            .collect();
        assert_eq!(strip(&mut pages), 12);
        assert_eq!(
            pages[3].content,
            "# Topic 3\n\nText 3.\n\n```\nimport typer\n\napp = typer.Typer(3)\n```\n\n~~~\n}\n~~~"
        );
    }

    #[test]
    fn on_a_large_site_the_sample_finds_every_line_half_the_pages_share() {
        let mut pages: Vec<Page> = (0..1000)
            .map(|i| {
                let mut text = format!("Text of page {i}.");
                if i % 5 > 1 {
                    text.push_str("\n\nHome | Index"); // 60 % of the pages
                }
                if i % 2 == 0 {
                    text.push_str("\n\nEvery other page"); // 50 %
                }
                if i % 5 <= 1 {
                    text.push_str("\n\nTwo in five"); // 40 %: stays
                }
                page(i, text)
            })
            .collect();
        strip(&mut pages);
        let all = |line: &str| pages.iter().filter(|p| p.content.contains(line)).count();
        assert_eq!(all("Home | Index"), 0);
        assert_eq!(all("Every other page"), 0);
        assert_eq!(all("Two in five"), 400);
        assert_eq!(all("Text of page"), 1000);
    }

    #[test]
    fn a_line_fewer_than_half_the_pages_share_stays_and_small_sites_are_left_alone() {
        let shared = "Part of the course on compilers.";
        let mut pages: Vec<Page> = (0..12)
            .map(|i| {
                let extra = if i < 5 { shared } else { "" };
                page(i, format!("Text {i}.\n\n{extra}"))
            })
            .collect();
        assert_eq!(strip(&mut pages), 0);
        assert!(pages[0].content.contains(shared));
        // Nine pages that all share a line: too few to tell chrome from a signature.
        let mut pages: Vec<Page> = (0..9)
            .map(|i| page(i, format!("Text {i}.\n\n{shared}")))
            .collect();
        assert_eq!(strip(&mut pages), 0);
        assert!(pages[8].content.contains(shared));
    }
}
