//! Which of a page's two titles names it: its first `<h1>` or its `<title>`.
//!
//! Most generators put the page's name in both, the `<title>` with the site's name around
//! it ("Making queries — Django documentation"), so the `<h1>` is the cleaner of the two.
//! Some use `<h1>` for the sections inside a page and name the page elsewhere (Doxygen's
//! manual: `<title>` "Doxygen: Configuration", first `<h1>` "Format"); there the `<h1>` is
//! one section's name, and every page whose first section is "Introduction" would share
//! it. Others give every page the same `<title>` (the site's name), where only the `<h1>`
//! says which page it is. So the `<title>` is taken only when it names this page alone (no
//! other page has it, and it is not a part of other pages' `<title>`s, as a home page's
//! bare site name is) and the two name different things: they share nothing but the
//! words most `<title>`s of the site hold (the site's name) and neither is the other's
//! acronym, or, on a page with several `<h1>`s (a level of sections), neither holds the
//! other ("Standard Markdown" under "Markdown support"), or the `<h1>` is half the
//! site's (the site's name as every page's `<h1>`; two editions of a book share theirs).
//! That needs the whole site, so it is decided here, after every page is read.
//!
//! Then the site's name leaves the titles that carry it beside the page's own
//! ([`drop_site_name`]): a part at a separator that most titles start or end with.

use std::collections::{HashMap, HashSet};

use super::page::{sub_folders, Page};

/// A word in at least this share of the site's `<title>`s is the site's, not a page's ...
const SITE_WORD_SHARE: f64 = 0.5;
/// ... when at least this many `<title>`s hold it (on two pages, any shared word would
/// count).
const SITE_WORD_MIN: usize = 3;

/// The first and last parts (at a separator, lowercase) that at least half the pages'
/// `<title>`s share, and at least [`SITE_WORD_MIN`]: the site's name, for
/// [`drop_site_name`]. Read before [`settle`], which clears the `<title>`s it does not take.
pub(crate) fn site_name_parts(pages: &[Page]) -> HashSet<String> {
    let heads: Vec<String> = pages
        .iter()
        .map(|p| fold_case_kept(p.head_title.as_deref().unwrap_or(&p.title)))
        .collect();
    let (firsts, lasts) = end_parts(&heads);
    let at_least = most_of(pages.len());
    firsts
        .into_iter()
        .chain(lasts)
        .filter(|&(_, n)| n >= at_least)
        .map(|(part, _)| part)
        .collect()
}

/// How many of `n` titles make "most": [`SITE_WORD_SHARE`] of them, and at least
/// [`SITE_WORD_MIN`].
fn most_of(n: usize) -> usize {
    ((SITE_WORD_SHARE * n as f64).ceil() as usize).max(SITE_WORD_MIN)
}

/// How many of `titles` have each first part, and each last part (lowercase).
fn end_parts(titles: &[String]) -> (HashMap<String, usize>, HashMap<String, usize>) {
    let mut firsts: HashMap<String, usize> = HashMap::new();
    let mut lasts: HashMap<String, usize> = HashMap::new();
    for title in titles {
        if let Some((first, _)) = first_part(title) {
            *firsts.entry(first.to_lowercase()).or_default() += 1;
        }
        if let Some((_, last)) = last_part(title) {
            *lasts.entry(last.to_lowercase()).or_default() += 1;
        }
    }
    (firsts, lasts)
}

/// Settles the title of every page that has both an `<h1>` title and a different
/// `<title>` ([`Page::head_title`], then cleared); returns how many took the `<title>`.
pub(crate) fn settle(pages: &mut [Page]) -> usize {
    // Each page's `<title>`: kept beside an `<h1>` title, else (no `<h1>`) its title.
    let head = |p: &Page| p.head_title.as_deref().unwrap_or(&p.title).to_owned();
    let mut same: HashMap<String, usize> = HashMap::new();
    let mut holding: HashMap<String, usize> = HashMap::new();
    // The parts of `<title>`s made of several ("Setup - Pony docs"): a `<title>` that is
    // a part of another one is the site's name (the home page's "Pony docs").
    let mut parts: HashSet<String> = HashSet::new();
    // How many pages each `<h1>` title names: one that half the pages share (at least
    // [`SITE_WORD_MIN`]) is the site's name, not theirs (Node.js's docs have the site's
    // name as every page's `<h1>`, "Node.js v18.20.4 documentation", and the page's in
    // its `<title>`, "Assert | Node.js ...").
    let mut h1s: HashMap<String, usize> = HashMap::new();
    for page in pages.iter() {
        if page.head_title.is_some() {
            *h1s.entry(fold(&page.title)).or_default() += 1;
        }
        let h = fold(&head(page));
        for w in words(&h).into_iter().collect::<HashSet<_>>() {
            *holding.entry(w).or_default() += 1;
        }
        let pieces = split_parts(&h);
        if pieces.len() > 1 {
            parts.extend(pieces.into_iter().map(str::to_owned));
        }
        *same.entry(h).or_default() += 1;
    }
    let at_least = most_of(pages.len());
    let site: HashSet<String> = holding
        .into_iter()
        .filter(|&(_, n)| n >= at_least)
        .map(|(w, _)| w)
        .collect();
    let mut changed = 0;
    for page in pages.iter_mut() {
        let Some(head) = page.head_title.take() else {
            continue;
        };
        let sharing_h1 = h1s.get(&fold(&page.title)).copied().unwrap_or(0);
        let shared_h1 = sharing_h1 >= at_least;
        let different = shared_h1
            || if page.h1_sections {
                !overlaps(&page.title, &head)
            } else {
                unrelated(&page.title, &head, &site)
            };
        let key = fold(&head);
        let sharing_head = same.get(&key).copied().unwrap_or(0);
        if parts.contains(&key) || !different {
            continue;
        }
        if sharing_head == 1 {
            page.title = head;
            changed += 1;
        } else if (SITE_WORD_MIN..at_least).contains(&sharing_h1) && sharing_head < sharing_h1 {
            // An `<h1>` that a few pages share names their group (Jekyll's step-by-step
            // tutorial: "Step by Step Tutorial" over each step) and the `<title>` each
            // one, but as another page's does too ("Front Matter" is also the reference
            // page's): the page's own name, qualified by its group, tells it apart.
            page.title = format!("{} – {}", own_part(&head, &site), page.title);
            changed += 1;
        }
    }
    changed
}

/// A `<title>` without a first or last part made only of the words most `<title>`s hold
/// (`site`): "Front Matter | Jekyll • Simple, blog-aware, static sites" → "Front Matter".
fn own_part<'a>(head: &'a str, site: &HashSet<String>) -> &'a str {
    let of_site = |part: &str| {
        let w = words(part);
        !w.is_empty() && w.iter().all(|w| site.contains(w))
    };
    without_end_parts(head, of_site, of_site)
}

/// A title without its last part where `drop_last` says so, then without its first part
/// where `drop_first` says so (each at a separator, the rest non-empty).
fn without_end_parts(
    title: &str,
    drop_first: impl Fn(&str) -> bool,
    drop_last: impl Fn(&str) -> bool,
) -> &str {
    let mut title = title;
    if let Some((rest, last)) = last_part(title) {
        if drop_last(last) {
            title = rest;
        }
    }
    if let Some((first, rest)) = first_part(title) {
        if drop_first(first) {
            title = rest;
        }
    }
    title
}

/// Takes the site's name out of the titles that carry it beside the page's own
/// ("Assert | Node.js v20.20.2 Documentation" → "Assert", "Doxygen: Configuration" →
/// "Configuration"); returns how many changed. The site's name is a first or last part
/// (at a separator) that at least half the titles share, and at least
/// [`SITE_WORD_MIN`]; then the same within each folder of at least [`super::page::FOLDER_MIN_PAGES`]
/// pages that is not the whole site (a manual beside generated example projects names
/// itself on its own pages only). What is left must tell the pages apart, as it is what a
/// citation says and what a print-all page's headings repeat: a title whose rest another
/// page also has ("Class List" of each example project) keeps the name, as does a title
/// that is the name alone (the home page's).
///
/// `site_name` ([`site_name_parts`]) are the parts that most `<title>`s share, read before
/// the titles were settled: where most pages are named by their `<h1>`, the name stays on
/// fewer than half the titles (Jekyll's website: its 93 news posts, titled by their
/// `<title>`, end with " | Jekyll • Simple, blog-aware, static sites", as every `<title>`
/// of the site does, while the documentation takes its `<h1>`s).
pub(crate) fn drop_site_name(pages: &mut [Page], site_name: &HashSet<String>) -> usize {
    let mut proposed: Vec<Option<String>> = vec![None; pages.len()];
    let all: Vec<usize> = (0..pages.len()).collect();
    propose_without_common_part(pages, &all, site_name, &mut proposed);
    for members in sub_folders(pages) {
        propose_without_common_part(pages, &members, site_name, &mut proposed);
    }
    let shown = |i: usize| {
        proposed[i]
            .as_deref()
            .unwrap_or(&pages[i].title)
            .to_lowercase()
    };
    let mut holding: HashMap<String, usize> = HashMap::new();
    for i in 0..pages.len() {
        *holding.entry(shown(i)).or_default() += 1;
    }
    let mut changed = 0;
    for (i, page) in pages.iter_mut().enumerate() {
        if let Some(title) = proposed[i].take() {
            if holding.get(&title.to_lowercase()) == Some(&1) {
                page.title = title;
                changed += 1;
            }
        }
    }
    changed
}

/// For the pages `members` (indexes into `pages`), proposes each title without the first
/// or last part that at least half of theirs share (and at least [`SITE_WORD_MIN`]), or
/// that is the site's name (`site_name`), from the title already proposed, if any.
fn propose_without_common_part(
    pages: &[Page],
    members: &[usize],
    site_name: &HashSet<String>,
    proposed: &mut [Option<String>],
) {
    // Each member's title as it stands: the one proposed already, if any.
    let current: Vec<String> = members
        .iter()
        .map(|&i| fold_case_kept(proposed[i].as_deref().unwrap_or(&pages[i].title)))
        .collect();
    let (firsts, lasts) = end_parts(&current);
    let at_least = most_of(members.len());
    let common = |counts: &HashMap<String, usize>, part: &str| {
        let part = part.to_lowercase();
        site_name.contains(&part) || counts.get(&part).is_some_and(|&n| n >= at_least)
    };
    for (&i, before) in members.iter().zip(&current) {
        let title = without_end_parts(
            before,
            |first| common(&firsts, first),
            |last| common(&lasts, last),
        );
        if title != before {
            proposed[i] = Some(title.to_owned());
        }
    }
}

/// A title's first part and the rest after the first separator, both non-empty.
fn first_part(title: &str) -> Option<(&str, &str)> {
    split_at_separator(title, false)
}

/// A title up to its last separator and its last part, both non-empty.
fn last_part(title: &str) -> Option<(&str, &str)> {
    split_at_separator(title, true)
}

/// The title before and after its first separator (its last, `from_end`), both non-empty.
fn split_at_separator(title: &str, from_end: bool) -> Option<(&str, &str)> {
    let found = SEPARATORS.iter().filter_map(|sep| {
        let at = if from_end {
            title.rfind(sep)
        } else {
            title.find(sep)
        };
        at.map(|at| (at, *sep))
    });
    let (at, sep) = if from_end {
        found.max_by_key(|&(at, _)| at)
    } else {
        found.min_by_key(|&(at, _)| at)
    }?;
    let (before, after) = (title[..at].trim(), title[at + sep.len()..].trim());
    (!before.is_empty() && !after.is_empty()).then_some((before, after))
}

/// Whitespace folded, case kept: a title as it is shown.
fn fold_case_kept(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// Whether an `<h1>` and a `<title>` name different things: neither holds the other,
/// they share no word outside the site's own (`site`), and neither is an acronym of the
/// other.
fn unrelated(h1: &str, head: &str, site: &HashSet<String>) -> bool {
    if overlaps(h1, head) {
        return false;
    }
    let own: HashSet<String> = words(head)
        .into_iter()
        .filter(|w| !site.contains(w))
        .collect();
    let theirs: HashSet<String> = words(h1).into_iter().collect();
    // An acronym of one is a word of the other ("FFI", "Foreign Function Interface").
    let abbreviates = |w: &String, of: &str| w.chars().count() >= 2 && *w == initials(of);
    !theirs
        .iter()
        .any(|w| own.contains(w) || abbreviates(w, head))
        && !own.iter().any(|w| abbreviates(w, h1))
}

/// The first letters of a title's words, lowercase ("Foreign Function Interface" → "ffi").
fn initials(title: &str) -> String {
    words(title)
        .iter()
        .filter_map(|w| w.chars().next())
        .collect()
}

/// What stands between the parts of a `<title>` (its page's name, the site's name); a
/// double hyphen is the plain-text dash ("Erlang -- Applications", Erlang/OTP's docs).
const SEPARATORS: &[&str] = &[
    " - ", " -- ", " | ", " — ", " – ", ": ", " · ", " » ", " :: ",
];

/// A `<title>`'s parts (itself, when it has no separator), trimmed, none empty.
fn split_parts(head: &str) -> Vec<&str> {
    let mut parts = vec![head];
    for sep in SEPARATORS {
        parts = parts.into_iter().flat_map(|p| p.split(sep)).collect();
    }
    parts
        .into_iter()
        .map(str::trim)
        .filter(|p| !p.is_empty())
        .collect()
}

/// Whether either title holds the other (or the `<h1>` is empty).
fn overlaps(h1: &str, head: &str) -> bool {
    let (a, b) = (fold(h1), fold(head));
    a.is_empty() || a.contains(&b) || b.contains(&a)
}

/// Lowercase, whitespace folded, punctuation kept: a `<title>` is split into its parts at
/// its separators (" - ", ": "), which [`super::noise::normalise`] would drop.
fn fold(text: &str) -> String {
    fold_case_kept(text).to_lowercase()
}

/// The lowercase words (runs of letters and digits), in order, as the noise rules compare
/// titles.
fn words(text: &str) -> Vec<String> {
    super::noise::normalise(text)
        .split(' ')
        .filter(|w| !w.is_empty())
        .map(str::to_owned)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn page(h1: &str, head: Option<&str>) -> Page {
        Page {
            url: format!("https://site/{h1}"),
            title: h1.into(),
            head_title: head.map(str::to_owned),
            ..Page::default()
        }
    }

    fn titles(pages: &[Page]) -> Vec<&str> {
        pages.iter().map(|p| p.title.as_str()).collect()
    }

    #[test]
    fn a_section_heading_gives_way_to_the_title_that_names_the_page() {
        // Doxygen's manual: the chapter in `<title>`, its sections in `<h1>`; "Doxygen"
        // in every `<title>` is the site's name, not a word the two share.
        let mut pages = vec![
            page("Format", Some("Doxygen: Configuration")),
            page("Introduction", Some("Doxygen: Special Commands")),
            page(
                "Step 0: Check if doxygen supports your language",
                Some("Doxygen: Getting started"),
            ),
            page("Doxygen: Output Formats", None),
            // One of several `<h1>`s, which are sections: a shared word is not enough.
            Page {
                h1_sections: true,
                ..page("Standard Markdown", Some("Doxygen: Markdown support"))
            },
        ];
        assert_eq!(settle(&mut pages), 4);
        assert_eq!(
            titles(&pages),
            [
                "Doxygen: Configuration",
                "Doxygen: Special Commands",
                "Doxygen: Getting started",
                "Doxygen: Output Formats",
                "Doxygen: Markdown support"
            ]
        );
        assert!(pages.iter().all(|p| p.head_title.is_none()));
    }

    #[test]
    fn an_h1_that_several_pages_share_gives_way_to_their_own_titles() {
        // Node.js 18's docs: the site's name is every page's <h1>, inside its <title>.
        let mut pages = vec![
            page(
                "Node.js v18 documentation",
                Some("Assert | Node.js v18 Documentation"),
            ),
            page(
                "Node.js v18 documentation",
                Some("File system | Node.js v18 Documentation"),
            ),
            page(
                "Node.js v18 documentation",
                Some("HTTP | Node.js v18 Documentation"),
            ),
        ];
        assert_eq!(settle(&mut pages), 3);
        assert_eq!(drop_site_name(&mut pages, &HashSet::new()), 3);
        assert_eq!(titles(&pages), ["Assert", "File system", "HTTP"]);

        // Two editions of a book share a chapter's <h1>: it still names the chapter.
        let mut pages = vec![
            page("Writing Tests", Some("Writing Tests - The Book")),
            page(
                "Writing Tests",
                Some("Writing Tests - The Book, 2018 edition"),
            ),
            page("Patterns", Some("Patterns - The Book")),
            page("Ownership", Some("Ownership - The Book")),
        ];
        assert_eq!(settle(&mut pages), 0);
    }

    #[test]
    fn the_h1_stays_where_the_title_repeats_it_or_names_the_site() {
        let mut pages = vec![
            // The `<title>` holds the `<h1>` with the site's name around it.
            page("Making queries", Some("Making queries — Pony docs")),
            // The `<h1>` holds the `<title>`'s words (asciidoc: "git-add(1)").
            page("git-add(1) Manual Page", Some("git-add(1)")),
            // Shares a word of its own with the `<title>`.
            page("Installing on Linux", Some("Pony docs: Linux setup")),
            // One is the other's acronym.
            page("Foreign Function Interface", Some("FFI - The Pony Book")),
            // Every page's `<title>` is the site's name: only the `<h1>` names the page.
            page("Teaching", Some("My Site")),
            page("Research", Some("My Site")),
            // The home page's `<title>` is the site's name alone, which the other
            // `<title>`s end with.
            page("Welcome", Some("Pony Manual")),
            page("Setup", Some("Setup - Pony Manual")),
            // Several `<h1>`s, the first of them in the `<title>`.
            Page {
                h1_sections: true,
                ..page("Release notes", Some("Release notes | Pony docs"))
            },
        ];
        assert_eq!(settle(&mut pages), 0);
        assert_eq!(
            titles(&pages),
            [
                "Making queries",
                "git-add(1) Manual Page",
                "Installing on Linux",
                "Foreign Function Interface",
                "Teaching",
                "Research",
                "Welcome",
                "Setup",
                "Release notes"
            ]
        );
    }

    #[test]
    fn the_site_name_beside_most_titles_is_taken_out() {
        let named = |t: &str| Page {
            title: t.into(),
            ..Page::default()
        };
        let mut pages: Vec<Page> = [
            "Assert | Node.js v20 Documentation",
            "File system | Node.js v20 Documentation",
            "HTTP | Node.js v20 Documentation",
            // The home page is the site's name alone.
            "Node.js v20 Documentation",
            // Not the shared last part: kept whole.
            "Errors | Codes",
            "Doxygen: Configuration",
        ]
        .into_iter()
        .map(named)
        .collect();
        assert_eq!(drop_site_name(&mut pages, &HashSet::new()), 3);
        assert_eq!(
            titles(&pages),
            [
                "Assert",
                "File system",
                "HTTP",
                "Node.js v20 Documentation",
                "Errors | Codes",
                "Doxygen: Configuration"
            ]
        );

        // A first part, on at least half the titles and at least three.
        let mut pages: Vec<Page> = [
            "Doxygen: Configuration",
            "doxygen:  Special Commands",
            "Doxygen: Getting started",
            "Python: docstring Namespace Reference",
        ]
        .into_iter()
        .map(named)
        .collect();
        assert_eq!(drop_site_name(&mut pages, &HashSet::new()), 3);
        assert_eq!(
            titles(&pages),
            [
                "Configuration",
                "Special Commands",
                "Getting started",
                "Python: docstring Namespace Reference"
            ]
        );
        // A double hyphen for a dash.
        let mut pages: Vec<Page> = [
            "Erlang -- Applications",
            "Erlang -- Records",
            "Erlang -- Maps",
        ]
        .into_iter()
        .map(named)
        .collect();
        assert_eq!(drop_site_name(&mut pages, &HashSet::new()), 3);
        assert_eq!(titles(&pages), ["Applications", "Records", "Maps"]);
        // Two pages sharing a part are not enough to call it the site's.
        let mut pages = vec![named("A - Site"), named("B - Site")];
        assert_eq!(drop_site_name(&mut pages, &HashSet::new()), 0);

        // A manual's name on its own folder's pages, beside as many pages elsewhere.
        let mut pages: Vec<Page> = (0..12)
            .map(|i| Page {
                url: format!("https://ex.org/manual/p{i}.html"),
                ..named(&format!("Manual: Chapter {i}"))
            })
            .chain((0..14).map(|i| Page {
                url: format!("https://ex.org/examples/e{i}/x.html"),
                ..named(&format!("Example {i}: Class X{i}"))
            }))
            .collect();
        assert_eq!(drop_site_name(&mut pages, &HashSet::new()), 12);
        assert_eq!(pages[0].title, "Chapter 0");
        assert_eq!(pages[12].title, "Example 0: Class X0");

        // Two example projects, each naming itself on its pages, with the same pages: the
        // rest would not tell them apart, so they keep their names.
        let mut pages: Vec<Page> = ["Alpha", "Beta"]
            .iter()
            .flat_map(|project| {
                (0..10).map(move |i| Page {
                    url: format!("https://ex.org/{project}/p{i}.html"),
                    ..named(&format!("{project}: Page {i}"))
                })
            })
            .collect();
        assert_eq!(drop_site_name(&mut pages, &HashSet::new()), 0);
        assert_eq!(pages[0].title, "Alpha: Page 0");
    }

    #[test]
    fn chinese_titles_are_compared_as_text() {
        // No spaces between Chinese words: containment decides.
        let mut pages = vec![
            page("教学", Some("教学 | 我的主页")),
            page("概述", Some("安装指南")),
        ];
        assert_eq!(settle(&mut pages), 1);
        assert_eq!(titles(&pages), ["教学", "安装指南"]);
    }

    #[test]
    fn pages_under_a_group_s_h1_are_named_by_their_own_titles() {
        // Jekyll's website: each step of the tutorial has the tutorial's name as its
        // <h1> and its own in <title>; two steps share theirs with a reference page.
        let site = " | Jekyll • Simple, blog-aware, static sites";
        let mut pages = vec![
            page("Step by Step Tutorial", Some(&format!("Setup{site}"))),
            page(
                "Step by Step Tutorial",
                Some(&format!("Front Matter{site}")),
            ),
            page("Step by Step Tutorial", Some(&format!("Layouts{site}"))),
            page("Front Matter", Some(&format!("Front Matter{site}"))),
            page("Layouts", Some(&format!("Layouts{site}"))),
            page("Permalinks", Some(&format!("Permalinks{site}"))),
            page("Pagination", Some(&format!("Pagination{site}"))),
            page("Themes", Some(&format!("Themes{site}"))),
        ];
        let site_name = site_name_parts(&pages);
        assert_eq!(settle(&mut pages), 3);
        drop_site_name(&mut pages, &site_name);
        assert_eq!(
            titles(&pages),
            [
                "Setup",
                "Front Matter – Step by Step Tutorial",
                "Layouts – Step by Step Tutorial",
                "Front Matter",
                "Layouts",
                "Permalinks",
                "Pagination",
                "Themes"
            ]
        );
    }

    #[test]
    fn the_site_name_of_most_title_elements_leaves_the_titles_that_carry_it() {
        // Most pages are named by their <h1>; the news posts, which have none, by their
        // <title>, which ends with the site's name as every page's <title> does. They
        // are under half the titles.
        let site = " | Jekyll • Simple, blog-aware, static sites";
        let mut pages = vec![
            page(&format!("Jekyll 3.8.1 Released{site}"), None),
            page(&format!("Meet Jekyll's New Lead Developer{site}"), None),
            page("Front Matter", Some(&format!("Front Matter{site}"))),
            page("Permalinks", Some(&format!("Permalinks{site}"))),
            page("Pagination", Some(&format!("Pagination{site}"))),
            page("Themes", Some(&format!("Themes{site}"))),
            page("Plugins", Some(&format!("Plugins{site}"))),
        ];
        let site_name = site_name_parts(&pages);
        settle(&mut pages);
        assert_eq!(drop_site_name(&mut pages, &HashSet::new()), 0);
        assert_eq!(drop_site_name(&mut pages, &site_name), 2);
        assert_eq!(
            titles(&pages)[..2],
            ["Jekyll 3.8.1 Released", "Meet Jekyll's New Lead Developer"]
        );
    }
}
