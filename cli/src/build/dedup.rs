//! Near-duplicate pages (the same page under several versions, editions or crates, such as
//! rustdoc's `core::` and `std::` re-exports) collapse to one entry, which lists the others'
//! URLs as its `alternates`.
//!
//! Each page's normalised text gets a MinHash signature over 4-word shingles; pages that
//! share a band of it become candidates (locality-sensitive hashing, so no page is compared
//! with every other) and are merged when their signatures agree almost everywhere and their
//! lengths match, and their titles name the same subject (the same title, or the same
//! last word: `std::mem::swap`, `core::mem::swap`): rustdoc's `Iter`, `IterMut` and
//! `IntoIter` pages differ in a few words only, yet are three pages. Pages at the same path
//! in two folders that mirror each other ([`super::mirrors`]: `core/` and `std/`) are
//! copies at a looser agreement, [`MIN_TWIN_AGREEMENT`], since each copy writes its own
//! paths and implementors. The page kept is the one with the
//! shortest URL path (the most canonical: `/std/x` over `/core/x`, `/book/ch01` over
//! `/book/2018-edition/ch01`), ties broken by the path itself, so the choice does not
//! depend on reading order.

use std::collections::HashMap;

use serde::{Deserialize, Serialize};

use super::noise::normalise;
use super::page::Page;

/// MinHash values per page.
const HASHES: usize = 32;
/// Values per band: two pages become candidates when one band's values all agree.
const ROWS: usize = 4;
/// Words per shingle.
const SHINGLE: usize = 4;
/// Least share of equal signature values for two pages to be near-duplicates.
const MIN_AGREEMENT: f64 = 0.9;
/// Least ratio of the shorter page's words to the longer one's.
const MIN_LENGTH_RATIO: f64 = 0.8;
/// Least share of equal signature values for two pages at the same path in mirror folders
/// to be copies of one page. Measured on Rust's docs (4-word shingles, Jaccard): `core` and
/// `std` twins share a median 0.74, three in four more than 0.59; the module pages that
/// std extends (`core::sync` and `std::sync`, `alloc::collections` and
/// `std::collections`) 0.00 to 0.06, and stay apart.
const MIN_TWIN_AGREEMENT: f64 = 0.3;

/// What a page's text is compared by; made while the page is extracted (so the build
/// cache keeps it with the page), else here.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(crate) struct Signature {
    /// Per hash function, the least hash of the page's shingles.
    minhash: [u64; HASHES],
    /// How many words the text has.
    words: usize,
}

/// What a page is compared by.
struct Print {
    signature: [u64; HASHES],
    words: usize,
    title: String,
}

/// Collapses near-duplicates among `pages` (signatures computed on `jobs` threads); returns
/// the pages kept (in their order) and how many were folded into another.
pub(crate) fn collapse(pages: Vec<Page>, jobs: usize) -> (Vec<Page>, usize) {
    let mut prints: Vec<Print> = Vec::with_capacity(pages.len());
    let print = |page: &Page| {
        let s = page.signature.clone().unwrap_or_else(|| signature(page));
        Print {
            signature: s.minhash,
            words: s.words,
            title: normalise(&page.title),
        }
    };
    super::parallel::in_order(pages.iter().collect(), jobs, print, |p| {
        prints.push(p);
        std::ops::ControlFlow::Continue(())
    });
    let mut groups = UnionFind::new(pages.len());
    for band in 0..HASHES / ROWS {
        let mut buckets: HashMap<&[u64], usize> = HashMap::new();
        for (i, p) in prints.iter().enumerate() {
            if p.words == 0 {
                continue;
            }
            let key = &p.signature[band * ROWS..(band + 1) * ROWS];
            match buckets.get(key) {
                // Each page is checked against the bucket's first only: linear per band,
                // and a chain of near-duplicates still joins through union-find.
                Some(&first) => {
                    if pages[first].url != pages[i].url && alike(&prints[first], &prints[i]) {
                        groups.union(first, i);
                    }
                }
                None => {
                    buckets.insert(key, i);
                }
            }
        }
    }
    let paths: Vec<String> = pages.iter().map(Page::path).collect();
    for (a, b) in super::mirrors::twin_pairs(&paths) {
        if twins_alike(&prints[a], &prints[b]) {
            groups.union(a, b);
        }
    }
    let mut members: HashMap<usize, Vec<usize>> = HashMap::new();
    for i in 0..pages.len() {
        members.entry(groups.find(i)).or_default().push(i);
    }
    let mut keep = vec![true; pages.len()];
    let mut alternates: HashMap<usize, Vec<String>> = HashMap::new();
    let mut collapsed = 0;
    for group in members.values().filter(|g| g.len() > 1) {
        let Some(&canonical) = group.iter().min_by_key(|&&i| {
            let path = pages[i].path();
            (path.len(), path)
        }) else {
            continue;
        };
        let mut urls: Vec<String> = Vec::new();
        for &i in group.iter().filter(|&&i| i != canonical) {
            keep[i] = false;
            collapsed += 1;
            urls.push(pages[i].url.clone());
            urls.extend(pages[i].alternates.iter().cloned());
        }
        urls.sort();
        urls.dedup();
        alternates.insert(canonical, urls);
    }
    let kept = pages
        .into_iter()
        .enumerate()
        .filter(|(i, _)| keep[*i])
        .map(|(i, mut p)| {
            if let Some(urls) = alternates.remove(&i) {
                p.alternates.extend(urls);
                p.alternates.sort();
                p.alternates.dedup();
                let own = p.url.clone();
                p.alternates.retain(|u| *u != own);
            }
            p
        })
        .collect();
    (kept, collapsed)
}

fn alike(a: &Print, b: &Print) -> bool {
    let (short, long) = (a.words.min(b.words), a.words.max(b.words));
    agreement(a, b) >= MIN_AGREEMENT
        && short as f64 >= MIN_LENGTH_RATIO * long as f64
        && same_subject(&a.title, &b.title)
}

/// The share of the two signatures' values that are equal: an estimate of the share of
/// shingles the two texts have in common (their Jaccard similarity).
fn agreement(a: &Print, b: &Print) -> f64 {
    let equal = a
        .signature
        .iter()
        .zip(&b.signature)
        .filter(|(x, y)| x == y)
        .count();
    equal as f64 / HASHES as f64
}

/// Whether two pages at the same path in mirror folders are one page's copies: their text
/// agrees at [`MIN_TWIN_AGREEMENT`] and their titles name the same subject. Their lengths
/// may differ (std's copy of a module lists what std adds).
fn twins_alike(a: &Print, b: &Print) -> bool {
    a.words > 0
        && b.words > 0
        && agreement(a, b) >= MIN_TWIN_AGREEMENT
        && same_subject(&a.title, &b.title)
}

/// Whether two (normalised) titles name the same thing: equal, or ending in the same word
/// (`function std mem swap` and `function core mem swap`: the item, under two paths).
fn same_subject(a: &str, b: &str) -> bool {
    a == b || (!a.is_empty() && a.rsplit(' ').next() == b.rsplit(' ').next())
}

/// The signature of the page's text: per hash function, the least hash of its shingles.
pub(crate) fn signature(page: &Page) -> Signature {
    let words: Vec<u64> = normalise(&page.content)
        .split(' ')
        .filter(|w| !w.is_empty())
        .map(|w| fnv(w.as_bytes()))
        .collect();
    let mut signature = [u64::MAX; HASHES];
    // A page shorter than a shingle is one shingle.
    for shingle in words.windows(SHINGLE.min(words.len().max(1))) {
        let base = shingle.iter().fold(0u64, |h, w| mix(h.rotate_left(17) ^ w));
        for (k, slot) in signature.iter_mut().enumerate() {
            let h = mix(base ^ SEEDS[k]);
            if h < *slot {
                *slot = h;
            }
        }
    }
    Signature {
        minhash: signature,
        words: words.len(),
    }
}

/// FNV-1a: a fixed hash, so the same site always collapses the same way.
fn fnv(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325, |h, b| {
        (h ^ u64::from(*b)).wrapping_mul(0x0100_0000_01b3)
    })
}

/// SplitMix64's finaliser: spreads every input bit over the output.
fn mix(mut x: u64) -> u64 {
    x = (x ^ (x >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    x = (x ^ (x >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    x ^ (x >> 31)
}

/// One seed per hash function (the first values of SplitMix64 from 0).
const SEEDS: [u64; HASHES] = seeds();

const fn seeds() -> [u64; HASHES] {
    let mut out = [0u64; HASHES];
    let mut state = 0u64;
    let mut i = 0;
    while i < HASHES {
        state = state.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = state;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        out[i] = z ^ (z >> 31);
        i += 1;
    }
    out
}

/// Disjoint sets of page indexes.
struct UnionFind {
    parent: Vec<usize>,
}

impl UnionFind {
    fn new(n: usize) -> Self {
        Self {
            parent: (0..n).collect(),
        }
    }

    fn find(&mut self, mut i: usize) -> usize {
        while self.parent[i] != i {
            self.parent[i] = self.parent[self.parent[i]];
            i = self.parent[i];
        }
        i
    }

    fn union(&mut self, a: usize, b: usize) {
        let (a, b) = (self.find(a), self.find(b));
        if a != b {
            self.parent[a.max(b)] = a.min(b);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::build::html::extract;

    fn fixture(name: &str, url: &str) -> Page {
        let path = format!("{}/tests/data/noise/{name}", env!("CARGO_MANIFEST_DIR"));
        extract(&std::fs::read_to_string(path).unwrap(), url).unwrap()
    }

    fn page(url: &str, title: &str, content: &str) -> Page {
        Page {
            url: url.into(),
            title: title.into(),
            content: content.into(),
            ..Page::default()
        }
    }

    #[test]
    fn a_re_export_collapses_into_the_shorter_path() {
        let std = fixture(
            "rustdoc-fn.html",
            "https://doc.example/std/mem/fn.swap.html",
        );
        let core = fixture(
            "rustdoc-core-fn.html",
            "https://doc.example/core/mem/fn.swap.html",
        );
        let other = fixture(
            "sphinx-keyword.html",
            "https://doc.example/library/keyword.html",
        );
        let (kept, collapsed) = collapse(vec![core, other, std], 2);
        assert_eq!(collapsed, 1);
        let urls: Vec<&str> = kept.iter().map(|p| p.url.as_str()).collect();
        assert_eq!(
            urls,
            [
                "https://doc.example/library/keyword.html",
                "https://doc.example/std/mem/fn.swap.html"
            ]
        );
        assert_eq!(
            kept[1].alternates,
            ["https://doc.example/core/mem/fn.swap.html"]
        );
        assert!(kept[0].alternates.is_empty());
    }

    #[test]
    fn editions_collapse_and_different_pages_with_a_shared_template_do_not() {
        let body: String = (0..60)
            .map(|i| format!("Paragraph {i} explains ownership and borrowing rules. "))
            .collect();
        let edited = body.replace("Paragraph 7 ", "Paragraph seven ");
        let pages = vec![
            page(
                "https://ex.org/book/2018-edition/ch04.html",
                "Ownership",
                &edited,
            ),
            page("https://ex.org/book/ch04.html", "Ownership", &body),
            page(
                "https://ex.org/book/first-edition/ch04.html",
                "Ownership",
                &body,
            ),
            // Short pages alike but for their subject: different titles keep them apart.
            page(
                "https://ex.org/api/a.html",
                "fn a",
                "Deprecated since 1.0. Use b.",
            ),
            page(
                "https://ex.org/api/c.html",
                "fn c",
                "Deprecated since 1.0. Use b.",
            ),
            // Long pages of one template (rustdoc's iterator structs) are not one page.
            page(
                "https://ex.org/option/struct.Iter.html",
                "Struct Iter",
                &body,
            ),
            page(
                "https://ex.org/option/struct.IterMut.html",
                "Struct IterMut",
                &body,
            ),
        ];
        let (kept, collapsed) = collapse(pages, 2);
        assert_eq!(collapsed, 2);
        assert_eq!(kept.len(), 5);
        let book = kept.iter().find(|p| p.title == "Ownership").unwrap();
        assert_eq!(book.url, "https://ex.org/book/ch04.html");
        assert_eq!(
            book.alternates,
            [
                "https://ex.org/book/2018-edition/ch04.html",
                "https://ex.org/book/first-edition/ch04.html"
            ]
        );
    }

    #[test]
    fn copies_in_mirror_folders_collapse_and_a_lone_twin_does_not() {
        // Text of item `i`, written by crate `krate`: half of it the item's own docs, half
        // the crate's paths and implementors, as rustdoc's copies of one item differ.
        let text = |krate: &str, i: usize| {
            let own: String = (0..40).map(|w| format!("item{i} doc{w} ")).collect();
            let paths: String = (0..20).map(|w| format!("{krate}{i} path{w} ")).collect();
            format!("{own}{paths}")
        };
        let mut pages = Vec::new();
        for i in 0..24 {
            for krate in ["core", "std"] {
                pages.push(page(
                    &format!("https://doc.example/{krate}/m{i}/fn.f{i}.html"),
                    &format!("Function {krate}::m{i}::f{i}"),
                    &text(krate, i),
                ));
            }
        }
        // Two types of one name in two modules that share no more pages: kept apart
        // however alike their text.
        for module in ["rc", "sync"] {
            pages.push(page(
                &format!("https://doc.example/std/{module}/struct.Weak.html"),
                &format!("Struct std::{module}::Weak"),
                &text(module, 99),
            ));
        }
        let (kept, collapsed) = collapse(pages, 2);
        assert_eq!(collapsed, 24);
        assert_eq!(kept.len(), 26);
        let swap = kept
            .iter()
            .find(|p| p.title == "Function std::m3::f3")
            .unwrap();
        assert_eq!(swap.alternates, ["https://doc.example/core/m3/fn.f3.html"]);
        assert!(kept.iter().all(|p| !p.url.contains("/core/")));
        assert!(kept.iter().any(|p| p.url.ends_with("/rc/struct.Weak.html")));
        assert!(kept
            .iter()
            .any(|p| p.url.ends_with("/sync/struct.Weak.html")));
    }

    #[test]
    fn a_page_that_only_shares_its_start_is_kept() {
        let start: String = (0..200).map(|i| format!("word{i} ")).collect();
        let more: String = (0..200).map(|i| format!("other{i} ")).collect();
        let pages = vec![
            page("https://ex.org/a.html", "A", &start),
            page("https://ex.org/b.html", "A", &format!("{start}{more}")),
        ];
        assert_eq!(collapse(pages, 1).1, 0);
    }
}
