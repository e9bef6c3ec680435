//! Release-notes pages (changelogs, "what's new", release notes) mention every feature of
//! a version in passing, so they match many questions a page about the feature answers
//! better. They are marked `kind: "release-notes"` for retrieval to rank below the page
//! about the thing they mention.
//!
//! Recognised by the title's words (in English and Chinese), by a title that names a
//! release ("Release 15.4", "Version 2.0"), or by headings that are mostly version numbers
//! ("Python 3.11.4 final", "v2.3.0").

use std::collections::{HashMap, HashSet};

use super::noise::normalise;
use super::page::Page;

/// The `kind` given to release-notes pages.
pub(crate) const RELEASE_NOTES: &str = "release-notes";

/// Title phrases (normalised: lowercase words, single spaces) that name release notes.
const TITLE_PHRASES: &[&str] = &[
    "release notes",
    "release note",
    "changelog",
    "change log",
    "changes in version",
    "what s new",
    "whats new",
    "version history",
    "release history",
    "更新日志",
    "发布说明",
    "发行说明",
    "版本说明",
    "更新说明",
    "版本历史",
    "新特性",
];

/// A page with at least this many version-number headings ...
const MIN_VERSION_HEADINGS: usize = 3;
/// ... making at least this share of its headings, is release notes.
const MIN_VERSION_SHARE: f64 = 0.3;

/// A heading names a release when one of its first this many words is a version.
const VERSION_WITHIN: usize = 3;

/// A series of at least this many pages titled by one name and as many versions
/// ("Hugo 0.26: Language Style Edition", "Hugo 0.27", …) announces releases.
const MIN_SERIES: usize = 3;

/// Marks the release-notes pages among `pages`; returns how many.
pub(crate) fn mark(pages: &mut [Page]) -> usize {
    let mut n = 0;
    for p in pages.iter_mut().filter(|p| p.kind.is_none()) {
        if is_release_notes(p) {
            p.kind = Some(RELEASE_NOTES.to_owned());
            n += 1;
        }
    }
    // A title naming a product and a version is the product's home as often as a release
    // ("Qt 5.15"); the same name with three versions or more is a series of announcements.
    let announced: Vec<Option<(String, String)>> = pages
        .iter()
        .map(|p| {
            p.kind
                .is_none()
                .then(|| release_title(&p.title))
                .flatten()
                .map(|(name, version)| (name, version.to_owned()))
        })
        .collect();
    let mut series: HashMap<&str, HashSet<&str>> = HashMap::new();
    for (name, version) in announced.iter().flatten() {
        series.entry(name).or_default().insert(version);
    }
    for (p, title) in pages.iter_mut().zip(&announced) {
        let named = title
            .as_ref()
            .and_then(|(name, _)| series.get(name.as_str()))
            .is_some_and(|versions| versions.len() >= MIN_SERIES);
        if named {
            p.kind = Some(RELEASE_NOTES.to_owned());
            n += 1;
        }
    }
    n
}

/// The name and version a title announces a release by: at most two words and a version
/// that ends the title or its first part ("Hugo 0.27: Fast and Flexible Related Content!",
/// "Hugo 0.10", "0.17: Hugo is going global") or is said to be released ("Jekyll 3.8.1
/// Released"). A section number followed by its words ("7.1 Application Concept") is none.
fn release_title(title: &str) -> Option<(String, &str)> {
    let words: Vec<&str> = unnumbered(title).split_whitespace().collect();
    let at = words.iter().take(3).position(|w| is_version(w))?;
    let version = words[at];
    let ends = match words.get(at + 1) {
        None => true,
        Some(next) => {
            version.ends_with([':', ','])
                || matches!(*next, "-" | "–" | "—" | ":" | "|")
                || next.trim_end_matches('!').eq_ignore_ascii_case("released")
        }
    };
    let name = words[..at].join(" ").to_lowercase();
    ends.then(|| (name, version.trim_end_matches([':', ','])))
}

fn is_release_notes(page: &Page) -> bool {
    let title = unnumbered(&page.title);
    let words = normalise(title);
    let padded = format!(" {words} ");
    if TITLE_PHRASES
        .iter()
        .any(|p| padded.contains(&format!(" {p} ")) || (!p.is_ascii() && words.contains(p)))
    {
        return true;
    }
    // "Release 15.4", "Version 2.0": a title naming one release.
    let tokens: Vec<&str> = title.split_whitespace().collect();
    let named = |w: &str| matches!(w.to_lowercase().as_str(), "release" | "version");
    if let [first, second] = tokens.as_slice() {
        if (named(first) && is_version(second)) || (is_version(first) && named(second)) {
            return true;
        }
    }
    // The two run together, as a title taken from a file's name is ("version9" for Vim's
    // `version9.txt`, "release15").
    if let [only] = tokens.as_slice() {
        let split = only
            .find(|c: char| c.is_ascii_digit())
            .unwrap_or(only.len());
        let (word, number) = only.split_at(split);
        let number = number.trim_start_matches(['-', '_']);
        let numeric = (1..=4).contains(&number.len()) && number.chars().all(|c| c.is_ascii_digit());
        if named(word.trim_end_matches(['-', '_'])) && (numeric || is_version(number)) {
            return true;
        }
    }
    // Headings outside fenced code: a code line may start with `#` (`#include`, a
    // debugger's `#0  0x...` frame).
    let titles: Vec<(usize, String)> = shared::kb::headings(&page.content)
        .map(|(_, level, title)| (level, title))
        .collect();
    let headings: Vec<(usize, &str)> = titles
        .iter()
        .map(|(level, text)| (*level, unnumbered(text)))
        .filter(|(_, text)| !text.is_empty())
        .collect();
    // Numbers leading the headings in ascending order number the sections ("7.1
    // Application Concept", "7.2 Application Callback Module", as Erlang/OTP's guides
    // write them, whose pages repeat their title's "7 Applications"); release notes list
    // their versions newest first.
    let leading: Vec<Vec<u32>> = headings
        .iter()
        .filter_map(|(_, h)| section_number(h.split_whitespace().next()?))
        .collect();
    let numbered = leading.len() >= 2 && leading.windows(2).all(|w| w[0] <= w[1]);
    // A release's heading leads with its version ("Version 5.0.21", "Python 3.11.4 final",
    // "2022-12-28 - Version 3.40.1": the dash is no word); an API reference's function
    // heading ends with the release it came in ("get(Key, Map) -> Value OTP 17.0").
    let enough = |versions: usize, of: usize| {
        versions >= MIN_VERSION_HEADINGS && versions as f64 >= MIN_VERSION_SHARE * of as f64
    };
    let mut versions = 0;
    // Per level: its headings, and those whose version leads plainly.
    let mut by_level: HashMap<usize, (usize, usize)> = HashMap::new();
    for &(level, text) in &headings {
        let lead = version_lead(if numbered {
            after_section_number(text)
        } else {
            text
        });
        versions += usize::from(lead.is_some());
        let (plain, all) = by_level.entry(level).or_default();
        *all += 1;
        *plain += usize::from(lead == Some(true));
    }
    // Or among the headings of one level: a changelog gives each release its own
    // subheadings ("## v3.7.3" over "### Summary", "### Bug Fixes", "### Deprecated
    // functions"; Keep a Changelog's "## [1.0.0]" over "### Added", "### Fixed"), which
    // outnumber the versions on the page as a whole. Read so, a module page's function
    // headings are a level of their own, so there a version must lead plainly.
    enough(versions, headings.len()) || by_level.values().any(|&(plain, all)| enough(plain, all))
}

/// Whether a version is among a heading's first [`VERSION_WITHIN`] words, and if so whether
/// only plain words (a name, a date) stand before it, no signature: Erlang/OTP's short
/// signatures read "get() -> ListOTP 21.2", without a space before the release.
fn version_lead(heading: &str) -> Option<bool> {
    let plain = |w: &str| w.chars().all(|c| c.is_alphanumeric() || "-/.".contains(c));
    let mut lead_plain = true;
    for w in heading
        .split_whitespace()
        .filter(|w| w.chars().any(char::is_alphanumeric))
        .take(VERSION_WITHIN)
    {
        if is_version(w) {
            return Some(lead_plain);
        }
        lead_plain &= plain(w);
    }
    None
}

/// A heading without the section number it starts with, if it does.
fn after_section_number(heading: &str) -> &str {
    let (first, rest) = heading
        .split_once(char::is_whitespace)
        .unwrap_or((heading, ""));
    if section_number(first).is_some() {
        rest.trim_start()
    } else {
        heading
    }
}

/// The groups of a section number (`7`, `7.1`, `7.1.2`, maybe with a final dot).
fn section_number(token: &str) -> Option<Vec<u32>> {
    let token = token.strip_suffix('.').unwrap_or(token);
    token
        .split('.')
        .map(|g| (1..=3).contains(&g.len()).then(|| g.parse().ok()).flatten())
        .collect()
}

/// A heading without a leading section number (`5.1. Table Basics`, `E.1. Release 15.4`):
/// DocBook and others number every heading, and those numbers are not versions.
fn unnumbered(text: &str) -> &str {
    let text = text.trim();
    match text.split_once(char::is_whitespace) {
        Some((first, rest))
            if first.ends_with('.')
                && first.split('.').all(|g| {
                    g.chars()
                        .all(|c| c.is_ascii_digit() || c.is_ascii_uppercase())
                }) =>
        {
            rest.trim()
        }
        _ => text,
    }
}

/// `3.11.4`, `v2.0`, `15.20,`, `2.0.0-rc.1`: two to four dot-separated groups of digits,
/// maybe after a `v`, before a pre-release's suffix ([`is_pre_release`]) and punctuation.
fn is_version(token: &str) -> bool {
    let t = token.trim_matches(|c: char| !c.is_alphanumeric());
    let t = t.strip_prefix(['v', 'V']).unwrap_or(t);
    // A pre-release follows the numbers after a hyphen or a dot ("2.0.0-rc.1",
    // "1.3.0.rc1", "4.0.0.pre.alpha1"), and is one too.
    let (numbers, pre) = match t.split_once('-') {
        Some((numbers, pre)) => (numbers, Some(pre)),
        None => match t.find(|c: char| c.is_ascii_alphabetic()) {
            Some(at) if at > 0 && t[..at].ends_with('.') => (&t[..at - 1], Some(&t[at..])),
            _ => (t, None),
        },
    };
    let groups: Vec<&str> = numbers.split('.').collect();
    (2..=4).contains(&groups.len())
        && groups
            .iter()
            .all(|g| (1..=4).contains(&g.len()) && g.chars().all(|c| c.is_ascii_digit()))
        && pre.is_none_or(is_pre_release)
}

/// Words that name a pre-release in a version's suffix.
const PRE_RELEASE_WORDS: &[&str] = &["alpha", "beta", "rc", "pre", "preview", "dev"];

/// Whether a version's suffix names a pre-release: its words (letters) all pre-release
/// words, between numbers and dots ("rc.1", "beta1", "pre.alpha1").
fn is_pre_release(suffix: &str) -> bool {
    let mut words = suffix
        .split(|c: char| !c.is_ascii_alphabetic())
        .filter(|w| !w.is_empty())
        .peekable();
    words.peek().is_some()
        && words.all(|w| PRE_RELEASE_WORDS.contains(&w.to_ascii_lowercase().as_str()))
        && suffix
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '.')
}

#[cfg(test)]
mod tests {
    use super::*;

    fn page(title: &str, content: &str) -> Page {
        Page {
            url: "https://ex.org/p.html".into(),
            title: title.into(),
            content: content.into(),
            ..Page::default()
        }
    }

    #[test]
    fn code_lines_starting_with_a_hash_are_no_headings() {
        // R's "Writing R Extensions": numbered sections, one of them showing a debugger's
        // backtrace, whose `#5  0xb7d6...` frame read as a heading broke the ascending
        // numbers, and then every "1.1 Package structure" counted as a version.
        let mut pages = vec![page(
            "Writing R Extensions",
            "# Writing R Extensions\n\n### 1.1 Package structure\n\nText.\n\n\
             #### 1.1.1 The DESCRIPTION file\n\nText.\n\n### 4.4 Debugging compiled code\n\n\
             ```\n#0  0x00397682 in _int_free () from /lib/tls/libc.so.6\n\
             #5  0xb7d6c0a5 in do_random2 (call=0x94bf7d4)\n```\n\n\
             #### 4.4.1 Finding entry points\n\nText.\n\n#### 4.4.2 Inspecting objects\n\nText.",
        )];
        assert_eq!(mark(&mut pages), 0);
    }

    #[test]
    fn release_notes_are_known_by_title_or_by_version_headings() {
        let mut pages =
            vec![
            page("What’s New In Python 3.11", "# What’s New In Python 3.11\n\nText."),
            page("E.1. Release 15.20", "Text."),
            page("Changelog", "Text."),
            page("更新日志", "内容。"),
            page(
                "Project history",
                "# Project history\n\n## v2.1.0\n\nFixes.\n\n## v2.0.3\n\nMore.\n\n## 1.9\n\nOld.",
            ),
            // DocBook numbers its sections; those numbers are no versions.
            page(
                "Chapter 5. Data Definition",
                "## 5.1. Table Basics\n\nText.\n\n## 5.2. Default Values\n\nText.\n\n\
                 ## 5.3. Generated Columns\n\nText.\n\n## 5.4. Constraints\n\nText.",
            ),
            page(
                "git-stash - Stash the changes in a dirty working directory away",
                "Text.",
            ),
            // Section numbers without a final dot, in ascending order (Erlang/OTP's guides).
            page(
                "Erlang -- Applications",
                "# 7 Applications\n\n# 7 Applications\n\n### 7.1 Application Concept\n\nText.\n\n\
                 ### 7.2 Application Callback Module\n\nText.\n\n### 7.3 Application \
                 Resource File\n\nText.\n\n### 7.10 Application Start Types\n\nText.",
            ),
            // Each function's heading ends with the release it came in.
            page(
                "maps",
                "# maps\n\n#### get(Key, Map) -> Value OTP 17.0\n\nText.\n\n\
                 #### put(Key, Value, Map1) -> Map2 OTP 17.0\n\nText.\n\n\
                 #### new() -> Map OTP 17.0\n\nText.",
            ),
            // Versions newest first, each leading its heading.
            page(
                "Project history",
                "# Project history\n\n## 2024-05-02 - Version 2.1.0\n\nFixes.\n\n\
                 ## 2.0.3 (2023)\n\nMore.\n\n## 1.9 (2022)\n\nOld.",
            ),
            // A title taken from a file's name runs the two together (Vim's help files).
            page("version9", "*version9.txt* For Tool version 9.0\n\nText."),
            page("versioning", "How the project numbers its releases."),
        ];
        assert_eq!(mark(&mut pages), 7);
        let kinds: Vec<Option<&str>> = pages.iter().map(|p| p.kind.as_deref()).collect();
        let r = Some(RELEASE_NOTES);
        assert_eq!(kinds, [r, r, r, r, r, None, None, None, None, r, r, None]);
    }

    #[test]
    fn versions_leading_one_level_of_headings_are_release_notes() {
        // Each release has its own subheadings, three to a version: the versions are a
        // quarter of the headings, all of their level's.
        let release = |v: &str| {
            format!("## v{v}\n\n### Summary\n\nText.\n\n### Bug Fixes\n\n- a fix\n\n### Deprecated functions\n\n- one\n\n")
        };
        let changelog: String = ["3.7.3", "3.7.2", "3.7.1", "3.7.0"].map(release).concat();
        // The same subheadings under sections that are no versions, and one section that is.
        let guide = "## Install\n\n### Summary\n\nText.\n\n### Linux\n\nText.\n\n\
                     ## Configure\n\n### Summary\n\nText.\n\n### Files\n\nText.\n\n\
                     ## Upgrade to 2.0\n\nText.\n\n## Uninstall\n\nText.";
        // Erlang/OTP's module pages: each function's heading ends with the release it came
        // in, and most of that level's headings are functions.
        let module = "# persistent_term\n\n### Module\n\n### Module Summary\n\n### Since\n\n\
                      ### Description\n\nText.\n\n### Data Types\n\n#### key() = term()\n\n\
                      ### Exports\n\n#### erase(Key) -> ResultOTP 21.2\n\n### Types\n\n\
                      #### get() -> ListOTP 21.2\n\n### Types\n\n\
                      #### info() -> InfoOTP 21.2\n\n### Types\n\nText.";
        let mut pages = vec![
            page("Releases", &format!("# Releases\n\n{changelog}")),
            page("Getting started", &format!("# Getting started\n\n{guide}")),
            page("persistent_term", module),
        ];
        assert_eq!(mark(&mut pages), 1);
        assert_eq!(pages[0].kind.as_deref(), Some(RELEASE_NOTES));
        assert_eq!(pages[1].kind, None);
        assert_eq!(pages[2].kind, None);
    }

    #[test]
    fn a_series_of_titles_naming_one_product_s_versions_is_release_notes() {
        // Hugo's news: each release announced under "Hugo <version>", often with a subtitle.
        let mut pages = vec![
            page("Hugo 0.26: Language Style Edition", "Text."),
            page("Hugo 0.27", "Text."),
            page("Hugo 0.27.1: One bugfix", "Text."),
            page("0.17: Hugo is going global", "Text."),
            // One product version is a product's home as often as a release.
            page("Qt 5.15", "Text."),
            // Section numbers followed by their words are no versions.
            page("7.1 Application Concept", "Text."),
            page("7.2 Application Callback Module", "Text."),
            page("7.3 Application Resource File", "Text."),
        ];
        assert_eq!(mark(&mut pages), 3);
        let kinds: Vec<Option<&str>> = pages.iter().map(|p| p.kind.as_deref()).collect();
        let r = Some(RELEASE_NOTES);
        assert_eq!(kinds, [r, r, r, None, None, None, None, None]);

        // Jekyll's news: "Jekyll <version> Released", the version said to be released
        // rather than ending the title, pre-releases among them.
        let mut pages = vec![
            page("Jekyll 3.8.1 Released", "Text."),
            page("Jekyll 3.1.2 Released!", "Text."),
            page("Jekyll 4.0.0.pre.alpha1 Released", "Text."),
            // A version followed by other words is not announced.
            page("Python 3.11 features for data work", "Text."),
            page("Python 3.12 features for data work", "Text."),
            page("Python 3.13 features for data work", "Text."),
        ];
        assert_eq!(mark(&mut pages), 3);
        let kinds: Vec<Option<&str>> = pages.iter().map(|p| p.kind.as_deref()).collect();
        assert_eq!(kinds, [r, r, r, None, None, None]);
    }

    #[test]
    fn versions_may_name_a_pre_release() {
        for v in [
            "3.8.1",
            "v2.0",
            "2.0.0-rc.1",
            "1.3.0.rc1",
            "4.0.0.pre.alpha1",
            "3.0.0.beta1",
        ] {
            assert!(is_version(v), "{v}");
        }
        for not in [
            "7",
            "2.0.0-linux",
            "1.2.x",
            "3.0.0.final-draft",
            "10.2.1.4.5",
            "ab.1",
        ] {
            assert!(!is_version(not), "{not}");
        }
    }
}
