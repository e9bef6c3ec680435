//! Print-all pages told by what they hold rather than by their headings: a page holding
//! the whole text of several other pages of the site. [`super::noise`]'s first test looks
//! for other pages' titles among a page's headings (Node.js's `all.html`, an mdBook's
//! `print.html`); a compilation made from the sources the pages are made from has its own
//! headings instead. FFmpeg's manual has `ffmpeg-all.html`, `ffplay-all.html` and
//! `ffprobe-all.html` (1.1–1.4 million characters each), which hold every paragraph of
//! `ffmpeg-codecs.html`, `ffmpeg-filters.html`, `ffmpeg-formats.html` and seven more
//! under numbered chapter headings of their own: each would stand beside the page it
//! copies in every ranking, and win by length where it lost by words.
//!
//! A page *holds* a smaller one when at least [`HELD_SHARE`] of the other's paragraphs
//! (by bytes; paragraphs of [`PARAGRAPH_MIN`] bytes or more, headings left out) are among
//! its own. A page is a compilation when it holds at least [`MIN_HELD`] *parts* (pages
//! held by at most [`MAX_HOSTS`] pages that are no compilations themselves), the parts
//! are different pages (at least [`DISJOINT`] of their bytes in one part only), and they
//! make at least [`MIN_COVERED`] of its own paragraphs. Documentation that every subclass
//! page copies (scaladoc prints each inherited member in full) is held by dozens of pages
//! and makes none of them a compilation; a family of near-identical pages, the larger
//! holding the smaller, has parts that are one text.
//!
//! Cost: each page's paragraphs are hashed once; a page is looked for in another only
//! when all of its [`SIGNATURE`] longest paragraphs are there, so the work and memory grow
//! with the site's text, not with the pairs of its pages.

use std::collections::{HashMap, HashSet};
use std::hash::{DefaultHasher, Hash, Hasher};

use super::page::Page;

/// The shortest paragraph compared, in bytes: shorter ones ("See also", a one-line
/// example) are common to unrelated pages.
const PARAGRAPH_MIN: usize = 80;
/// How many of a page's longest paragraphs stand for it when looking for its holders.
const SIGNATURE: usize = 3;
/// The fewest paragraphs a page needs to be counted as held: a page of one or two
/// paragraphs is as likely quoted as copied whole.
const HELD_MIN_PARAGRAPHS: usize = 3;
/// The share of a page's paragraph bytes another must have to hold it.
const HELD_SHARE: f64 = 0.9;
/// The fewest pages a compilation holds.
const MIN_HELD: usize = 3;
/// A page held by more pages than this is shared text (inherited documentation), not a
/// part of a compilation.
const MAX_HOSTS: usize = 4;
/// The share of a compilation's paragraph bytes its held pages make.
const MIN_COVERED: f64 = 0.6;
/// The share of its parts' paragraph bytes that are in no other part: a compilation
/// holds different pages.
const DISJOINT: f64 = 0.8;
/// A paragraph among the longest of more pages than this is shared text: the pages it
/// stands for are parts of no compilation, and no page is compared with them all (a
/// notice on every page of a site would make that a comparison of every pair).
const MAX_SIGNED: usize = 64;

/// A page's paragraphs of [`PARAGRAPH_MIN`] bytes or more, headings left out, as (hash of
/// their words, bytes).
fn paragraphs(content: &str) -> Vec<(u64, usize)> {
    content
        .split("\n\n")
        .map(str::trim)
        .filter(|p| p.len() >= PARAGRAPH_MIN && !p.starts_with('#'))
        .map(|p| {
            let mut h = DefaultHasher::new();
            p.split_whitespace().for_each(|w| w.hash(&mut h));
            (h.finish(), p.len())
        })
        .collect()
}

/// The bytes of the paragraphs whose hash is `among` a set.
fn bytes_among(paras: &[(u64, usize)], among: impl Fn(&u64) -> bool) -> usize {
    paras
        .iter()
        .filter(|(h, _)| among(h))
        .map(|&(_, b)| b)
        .sum()
}

/// The indices (into `pages`) of the compilations among them.
pub(crate) fn find(pages: &[Page]) -> HashSet<usize> {
    let paras: Vec<Vec<(u64, usize)>> = pages.iter().map(|p| paragraphs(&p.content)).collect();
    let bytes: Vec<usize> = paras
        .iter()
        .map(|ps| ps.iter().map(|&(_, b)| b).sum())
        .collect();
    // Each page that could be held, by the hashes of its longest paragraphs.
    let mut signed: HashMap<u64, Vec<u32>> = HashMap::new();
    // How many distinct paragraphs stand for each page (none: it is never held).
    let mut signature_len: Vec<usize> = Vec::with_capacity(pages.len());
    for (i, ps) in paras.iter().enumerate() {
        let mut sig: Vec<(usize, u64)> = ps.iter().map(|&(h, n)| (n, h)).collect();
        sig.sort_unstable_by(|a, b| b.cmp(a));
        sig.dedup_by_key(|s| s.1);
        sig.truncate(SIGNATURE);
        let sig: Vec<u64> = if ps.len() >= HELD_MIN_PARAGRAPHS {
            sig.into_iter().map(|s| s.1).collect()
        } else {
            Vec::new()
        };
        for &h in &sig {
            signed.entry(h).or_default().push(i as u32);
        }
        signature_len.push(sig.len());
    }
    // For each page, the pages it holds; for each page, how many hold it.
    let mut holds: Vec<Vec<u32>> = vec![Vec::new(); pages.len()];
    let mut hosts: Vec<usize> = vec![0; pages.len()];
    for (p, ps) in paras.iter().enumerate() {
        let own: HashSet<u64> = ps.iter().map(|&(h, _)| h).collect();
        let mut seen: HashMap<u32, usize> = HashMap::new();
        for h in &own {
            let Some(qs) = signed.get(h).filter(|qs| qs.len() <= MAX_SIGNED) else {
                continue;
            };
            for &q in qs {
                *seen.entry(q).or_default() += 1;
            }
        }
        for (q, n) in seen {
            let qi = q as usize;
            if qi == p || n < signature_len[qi] {
                continue;
            }
            let inside = bytes_among(&paras[qi], |h| own.contains(h));
            // Held, and smaller: of two copies of one page neither compiles the other.
            if inside as f64 >= HELD_SHARE * bytes[qi] as f64 && bytes[qi] < bytes[p] {
                holds[p].push(q);
                hosts[qi] += 1;
            }
        }
    }
    let mut out = HashSet::new();
    for (p, held) in holds.iter().enumerate() {
        // A page that itself holds several is another compilation, not a part (FFmpeg's
        // `ffmpeg-all.html` holds `ffplay-all.html` whole).
        let parts: Vec<usize> = held
            .iter()
            .map(|&q| q as usize)
            .filter(|&q| hosts[q] <= MAX_HOSTS && holds[q].len() < MIN_HELD)
            .collect();
        if parts.len() < MIN_HELD {
            continue;
        }
        // The parts are different pages, not one page's near-copies (Boost's
        // `param_type` of each random distribution: the same text, the larger page
        // holding the smaller ones).
        let mut union: HashMap<u64, usize> = HashMap::new();
        for &q in &parts {
            union.extend(paras[q].iter().copied());
        }
        let sum: usize = parts.iter().map(|&q| bytes[q]).sum();
        if (union.values().sum::<usize>() as f64) < DISJOINT * sum as f64 {
            continue;
        }
        let covered = bytes_among(&paras[p], |h| union.contains_key(h));
        if covered as f64 >= MIN_COVERED * bytes[p] as f64 {
            out.insert(p);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A page of `n` paragraphs of its own, each over [`PARAGRAPH_MIN`] bytes.
    fn text(name: &str, n: usize) -> String {
        (0..n)
            .map(|i| {
                format!(
                    "Paragraph {i} of {name} says what {name} does, at enough length to be \
                     compared with the paragraphs of the other pages."
                )
            })
            .collect::<Vec<_>>()
            .join("\n\n")
    }

    fn page(content: String) -> Page {
        Page {
            content,
            ..Page::default()
        }
    }

    #[test]
    fn a_page_holding_several_whole_pages_is_a_compilation_and_they_are_not() {
        let parts = ["codecs", "filters", "formats", "protocols"];
        let mut pages: Vec<Page> = parts.iter().map(|p| page(text(p, 6))).collect();
        // The compilation has chapter headings of its own and an introduction.
        let all = std::iter::once(format!("# 1 Synopsis\n\n{}", text("ffmpeg", 2)))
            .chain(parts.iter().map(|p| format!("# Chapter\n\n{}", text(p, 6))))
            .collect::<Vec<_>>()
            .join("\n\n");
        pages.push(page(all.clone()));
        assert_eq!(find(&pages), HashSet::from([4]));
        // A second compilation of the same parts, which the first (longer) holds too.
        pages.push(page(all.replace("# 1 Synopsis", "# 1 Player").replacen(
            &text("ffmpeg", 2),
            "",
            1,
        )));
        assert_eq!(find(&pages), HashSet::from([4, 5]));
    }

    #[test]
    fn a_page_quoting_two_pages_is_a_page() {
        let mut pages = vec![page(text("a", 5)), page(text("b", 5))];
        pages.push(page(format!("{}\n\n{}", text("a", 5), text("b", 5))));
        assert!(find(&pages).is_empty());
    }

    #[test]
    fn text_that_many_pages_copy_makes_none_a_compilation() {
        // Three ancestors' member docs, copied onto each of six subclass pages.
        let inherited = ["traversable", "iterable", "seq"];
        let mut pages: Vec<Page> = inherited.iter().map(|p| page(text(p, 5))).collect();
        for class in ["list", "vector", "stream", "queue", "stack", "range"] {
            let copied = inherited.iter().map(|p| text(p, 5)).collect::<Vec<_>>();
            pages.push(page(format!(
                "{}\n\n{}",
                text(class, 2),
                copied.join("\n\n")
            )));
        }
        assert!(find(&pages).is_empty());
    }

    #[test]
    fn a_paragraph_on_every_page_makes_no_page_a_part() {
        // The same long notice on many pages, and the longest paragraph of each.
        let notice = "This page documents an experimental interface that may change in any \
                      release, without notice, and is not covered by the stability promise of \
                      the rest of the library whatsoever.";
        let parts = ["codecs", "filters", "formats"];
        let mut pages: Vec<Page> = (0..MAX_SIGNED)
            .map(|i| page(format!("{notice}\n\n{}", text(&format!("item{i}"), 3))))
            .collect();
        pages.extend(
            parts
                .iter()
                .map(|p| page(format!("{notice}\n\n{}", text(p, 6)))),
        );
        let all = parts
            .iter()
            .map(|p| text(p, 6))
            .collect::<Vec<_>>()
            .join("\n\n");
        pages.push(page(format!("{notice}\n\n{all}")));
        assert!(find(&pages).is_empty());
        // Without the notice on so many pages, the same compilation is found.
        let few = pages.split_off(MAX_SIGNED);
        assert_eq!(find(&few), HashSet::from([3]));
    }

    #[test]
    fn near_copies_of_one_page_are_no_parts() {
        // Each page the same text and a line of its own; the longest holds the others.
        let pages: Vec<Page> = (1..=4)
            .map(|i| page(format!("{}\n\n{}", text("param_type", 5), text("x", i))))
            .collect();
        assert!(find(&pages).is_empty());
    }
}
