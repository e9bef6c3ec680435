//! Mirror folders: two top folders of a site that hold the same pages under the same paths,
//! such as rustdoc's `core/` and `std/` (std re-exports most of core, and each crate gets
//! its own copy of every page), `alloc/` and `std/`, or one manual under `3.2/` and `4.0/`.
//!
//! Such copies are not near-identical, so the general near-duplicate test misses them: each
//! writes its own paths and lists its own implementors (`core::marker::Copy` and
//! `std::marker::Copy` share about half their text). Two pages at the same path in any two
//! folders are not enough to call them copies either (`rc/struct.Weak.html` and
//! `sync/struct.Weak.html` are two types). What tells a copy is the folder: when many pages
//! of one folder have a twin at the same path in another, the two folders mirror each other,
//! and their twins are candidates for [`super::dedup`], which still compares their text.

use std::collections::HashMap;

/// The fewest twin pages two folders must share to mirror each other: a handful of shared
/// names is a shared vocabulary (`btree_map` and `hash_map` both have `Entry`, `Iter`,
/// `IntoIter`: 14 pages in Rust's docs), not a copy.
pub(crate) const MIN_TWINS: usize = 20;

/// The least share of the smaller folder's pages that must have a twin in the other. In
/// Rust's docs 0.42 of `std`'s pages are in `core`, 0.93 of `alloc`'s in `std`.
pub(crate) const MIN_SHARE: f64 = 1.0 / 3.0;

/// Top folders holding a page at the same path are compared pairwise; a path in more top
/// folders than this (a site of a hundred versions) is skipped, which bounds the pairs at
/// this many squared per path.
const MAX_FOLDERS_PER_PATH: usize = 32;

/// The pairs of pages (indexes into `paths`, the lower first) that sit at the same path in
/// two top folders of the site mirroring each other. `paths` are URL paths
/// (`/1.63.0/core/mem/fn.swap.html`); the top folders are those below the folders every
/// page is in (`/1.63.0/`). Only there: a site's versions, editions and crates are its
/// top folders, while folders of one name inside it are mostly siblings that share a
/// vocabulary (`f32/` and `f64/` both hold `constant.DIGITS.html`, of two values).
pub(crate) fn twin_pairs(paths: &[String]) -> Vec<(usize, usize)> {
    let segments: Vec<Vec<&str>> = paths
        .iter()
        .map(|p| p.trim_start_matches('/').split('/').collect())
        .collect();
    let Some(at) = shared_folders(&segments) else {
        return Vec::new();
    };
    // Pages under each top folder, and the pages at each path below one.
    let mut under: HashMap<&str, usize> = HashMap::new();
    let mut alike: HashMap<&[&str], Vec<usize>> = HashMap::new();
    for (i, segs) in segments.iter().enumerate() {
        if segs.len() > at + 1 {
            *under.entry(segs[at]).or_default() += 1;
            alike.entry(&segs[at + 1..]).or_default().push(i);
        }
    }
    let mut candidates: Vec<(usize, usize)> = Vec::new();
    let mut twins: HashMap<(&str, &str), usize> = HashMap::new();
    let folders = |a: usize, b: usize| {
        let (fa, fb) = (segments[a][at], segments[b][at]);
        if fa <= fb {
            (fa, fb)
        } else {
            (fb, fa)
        }
    };
    for pages in alike.values() {
        if pages.len() < 2 || pages.len() > MAX_FOLDERS_PER_PATH {
            continue;
        }
        for (n, &a) in pages.iter().enumerate() {
            for &b in &pages[n + 1..] {
                *twins.entry(folders(a, b)).or_default() += 1;
                candidates.push((a.min(b), a.max(b)));
            }
        }
    }
    let mirror = |a: usize, b: usize| {
        let key = folders(a, b);
        let shared = twins.get(&key).copied().unwrap_or(0);
        let pages_in = |folder: &str| under.get(folder).copied().unwrap_or(0);
        let smaller = pages_in(key.0).min(pages_in(key.1));
        shared >= MIN_TWINS && shared as f64 >= MIN_SHARE * smaller as f64
    };
    candidates.retain(|&(a, b)| mirror(a, b));
    candidates.sort_unstable();
    candidates
}

/// How many folders every page is in (the length of the folder path they all share), or
/// `None` for no pages.
fn shared_folders(segments: &[Vec<&str>]) -> Option<usize> {
    let first = segments.first()?;
    let mut depth = first.len() - 1;
    for segs in &segments[1..] {
        depth = depth.min(segs.len() - 1);
        depth = (0..depth).find(|&d| segs[d] != first[d]).unwrap_or(depth);
    }
    Some(depth)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn folders_sharing_many_pages_pair_their_twins_and_a_few_shared_names_do_not() {
        let mut list: Vec<String> = Vec::new();
        for i in 0..25 {
            list.push(format!("/doc/core/m{i}/fn.f.html"));
            list.push(format!("/doc/std/m{i}/fn.f.html"));
        }
        // std has more of its own; still over a third of it is in core.
        for i in 0..30 {
            list.push(format!("/doc/std/own{i}.html"));
        }
        // Two modules sharing many names below the top folders: siblings, not copies.
        for i in 0..25 {
            list.push(format!("/doc/std/f32/constant.C{i}.html"));
            list.push(format!("/doc/std/f64/constant.C{i}.html"));
        }
        let pairs = twin_pairs(&list);
        assert_eq!(pairs.len(), 25, "{pairs:?}");
        for (a, b) in pairs {
            let (a, b) = (&list[a], &list[b]);
            assert!(
                a.starts_with("/doc/core/") && b.starts_with("/doc/std/"),
                "{a} {b}"
            );
            assert_eq!(a.replace("/core/", "/std/"), *b);
        }
    }

    #[test]
    fn folders_sharing_too_small_a_share_or_too_few_pages_do_not_mirror() {
        let mut list: Vec<String> = vec!["/x/index.html".into()];
        // Top folders sharing a few names (an index, a "getting started"): not copies.
        for name in ["index.html", "start.html", "faq.html"] {
            list.push(format!("/c/{name}"));
            list.push(format!("/d/{name}"));
        }
        for i in 0..25 {
            list.push(format!("/a/p{i}.html"));
            list.push(format!("/b/p{i}.html"));
        }
        for i in 0..60 {
            list.push(format!("/a/only-a{i}.html"));
            list.push(format!("/b/only-b{i}.html"));
        }
        assert!(twin_pairs(&list).is_empty());
    }
}
