//! Reciprocal rank fusion of a question's ranking with the rankings of its model-written
//! expansions: the question in the site's language and a short hypothetical answer
//! passage (query2doc / HyDE).
//!
//! One function for the chat and for `rag eval --rewrites`, so that a rewriter's quality
//! measured offline is the quality the chat gets. Each list is ranked [`FUSION_DEPTH`]
//! deep: RRF lets a page found at rank 20 by two lists beat one found first by a single
//! list, so how deep the lists go changes the fused top ten, and both callers must agree.

use crate::retrieval::{DocScore, Ranked};

/// The constant of reciprocal rank fusion: a hit at rank r (from 1) adds 1 / (k + r). The
/// original RRF paper (Cormack et al., 2009) uses 60, which flattens the top of each list: a
/// first place weighs 7 % more than a fifth (1/61 against 1/65), so pages that every list
/// ranks a few places down, mentioning the question's words, beat the page one list is sure
/// of. At 10 a first place weighs 36 % more than a fifth (1/11 against 1/15), and agreement
/// lower down still counts. Swept on the ten real sites and docs-site-dev with the hand
/// rewrites (docs/evaluation.md): 10 lifts the Chinese questions of nine sites (git +0.065,
/// Django +0.076; Doxygen −0.003), English questions under `always` on eight (Doxygen
/// −0.001), and with translations alone (no passage) moves every site by less than 0.02; 8
/// of 359 rewritten questions lose more than 0.05 against their own ranking, against 10 at 60.
pub const RRF_K: f32 = 10.0;

/// How deep each list is ranked before fusing.
pub const FUSION_DEPTH: usize = 30;

/// The hypothetical passage's weight in the fusion (the question's and the rewrite's are 1).
/// The passage names what the answering page says (its commands, options and terms), which
/// neither the question nor its rewrite does, and those two are phrasings of one question
/// that agree with each other: at 2 the answer's evidence weighs as much as the question's
/// two lists together (measured in docs/evaluation.md: every real site gains, as many
/// questions lose to their own ranking as at 1).
pub const PASSAGE_WEIGHT: f32 = 2.0;

/// What a rewriter made of a question; either part may be missing.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Expansion {
    /// The question rewritten as a query in the site's language.
    pub query: Option<String>,
    /// A short passage answering the question as the site might (hypothetical).
    pub passage: Option<String>,
}

impl Expansion {
    /// True when there is nothing to search for.
    pub fn is_empty(&self) -> bool {
        self.query.is_none() && self.passage.is_none()
    }
}

/// Weighted reciprocal rank fusion: each document scores Σ w / (`k` + rank) over the lists
/// it is in (each list with its weight w, rank from 1); best first, ties in order of first
/// appearance (lists in order); at most `limit`. A document keeps the entry (score,
/// passage) of the first list it is in, so a hit of the question keeps the passage the
/// question matched.
pub fn rrf(lists: &[(&[Ranked], f32)], k: f32, limit: usize) -> Vec<Ranked> {
    let mut fused: Vec<(Ranked, f32)> = Vec::new();
    for &(list, weight) in lists {
        for (rank, hit) in list.iter().enumerate() {
            let add = weight / (k + rank as f32 + 1.0);
            match fused.iter_mut().find(|(h, _)| h.doc == hit.doc) {
                Some((_, s)) => *s += add,
                None => fused.push((*hit, add)),
            }
        }
    }
    // Stable sort: equal fused scores keep their order of first appearance.
    fused.sort_by(|a, b| b.1.total_cmp(&a.1));
    fused.into_iter().take(limit).map(|(h, _)| h).collect()
}

/// The question's ranking fused ([`rrf`], k = [`RRF_K`]) with the rankings `rank` gives the
/// expansion's query (documents scored by their passages, [`DocScore::Passages`]) and
/// passage (by their best passage alone, [`DocScore::BestPassage`]), in that order, the passage's at [`PASSAGE_WEIGHT`]; at most
/// `limit`. `rank` should rank [`FUSION_DEPTH`] deep, as should `original`. Without an expansion, `original` as it is
/// (cut to `limit`).
pub fn fuse_expansion(
    original: &[Ranked],
    expansion: &Expansion,
    limit: usize,
    rank: impl Fn(&str, DocScore) -> Vec<Ranked>,
) -> Vec<Ranked> {
    let found: Vec<(Vec<Ranked>, f32)> = [
        (&expansion.query, DocScore::Passages, 1.0),
        (&expansion.passage, DocScore::BestPassage, PASSAGE_WEIGHT),
    ]
    .into_iter()
    .filter_map(|(text, scoring, weight)| Some((rank(text.as_deref()?, scoring), weight)))
    .collect();
    if found.is_empty() {
        return original.iter().take(limit).copied().collect();
    }
    let mut lists: Vec<(&[Ranked], f32)> = vec![(original, 1.0)];
    lists.extend(
        found
            .iter()
            .map(|(list, weight)| (list.as_slice(), *weight)),
    );
    rrf(&lists, RRF_K, limit)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hit(doc: u32, passage: u32) -> Ranked {
        Ranked {
            doc,
            passage,
            score: 1.0,
        }
    }

    fn docs(hits: &[Ranked]) -> Vec<u32> {
        hits.iter().map(|h| h.doc).collect()
    }

    #[test]
    fn rrf_adds_reciprocal_ranks_and_keeps_first_appearance_on_ties() {
        let a = [hit(1, 0), hit(2, 0), hit(3, 0)];
        let b = [hit(3, 7), hit(4, 0)];
        // 3: 1/63 + 1/61 = 0.0323 beats 1: 1/61 = 0.0164; 4 and 2 tie at 1/62: 2 came first.
        let fused = rrf(&[(&a, 1.0), (&b, 1.0)], 60.0, 10);
        assert_eq!(docs(&fused), [3, 1, 2, 4]);
        // Document 3 keeps the entry of the first list it was in.
        assert_eq!(fused[0].passage, 0);
        assert_eq!(rrf(&[(&a, 1.0), (&b, 1.0)], 60.0, 2).len(), 2);
        assert!(rrf(&[], 60.0, 3).is_empty());
        // Weighted: b's first place at 3 (3/61) beats 1's (1/61) and 3's agreement alike.
        let fused = rrf(&[(&a, 1.0), (&b, 3.0)], 60.0, 10);
        assert_eq!(docs(&fused), [3, 4, 1, 2]);
    }

    #[test]
    fn the_constant_decides_between_one_first_place_and_agreement_lower_down() {
        // 9 is first in one list; 5 is third in two. With k = 60: 1/61 = 0.01639 against
        // 2/63 = 0.03175, agreement wins; with k = 0: 1/1 = 1 against 2/3, first place wins.
        let a = [hit(9, 0), hit(7, 0), hit(5, 0)];
        let b = [hit(8, 0), hit(6, 0), hit(5, 0)];
        assert_eq!(rrf(&[(&a, 1.0), (&b, 1.0)], 60.0, 1)[0].doc, 5);
        assert_eq!(rrf(&[(&a, 1.0), (&b, 1.0)], 0.0, 1)[0].doc, 9);
    }

    #[test]
    fn an_expansion_fuses_the_query_and_the_passage_with_the_original() {
        let original = [hit(1, 0), hit(2, 0)];
        // The rewrite is ranked as a question, the passage as a passage.
        let rank = |text: &str, scoring: DocScore| match (text, scoring) {
            ("query", DocScore::Passages) => vec![hit(3, 0), hit(2, 0)],
            ("passage", DocScore::BestPassage) => vec![hit(3, 0), hit(4, 0)],
            _ => Vec::new(),
        };
        let both = Expansion {
            query: Some("query".into()),
            passage: Some("passage".into()),
        };
        // The passage's list counts twice: 3: 1/11 + 2/11; 2: 1/12 + 1/12 = 2/12 ties
        // 4: 2/12, 2 first; 1: 1/11.
        assert_eq!(
            docs(&fuse_expansion(&original, &both, 10, rank)),
            [3, 2, 4, 1]
        );
        // A page first for the passage alone beats one second for the question and its
        // rewrite both (2/11 against 2/12), and ties one first for both (2/11, the
        // question's first): the answer's words weigh as much as the question's two
        // phrasings.
        let rank_apart = |text: &str, scoring: DocScore| match (text, scoring) {
            ("query", DocScore::Passages) => vec![hit(1, 0), hit(2, 0)],
            ("passage", DocScore::BestPassage) => vec![hit(5, 0)],
            _ => Vec::new(),
        };
        let fused = fuse_expansion(&[hit(1, 0), hit(2, 0)], &both, 10, rank_apart);
        assert_eq!(docs(&fused)[..3], [1, 5, 2]);
        let query_only = Expansion {
            passage: None,
            ..both.clone()
        };
        // 2: 2/12 beats 1 and 3 (1/11 each, 1 first).
        assert_eq!(
            docs(&fuse_expansion(&original, &query_only, 10, rank)),
            [2, 1, 3]
        );
        let none = Expansion::default();
        assert!(none.is_empty());
        assert_eq!(docs(&fuse_expansion(&original, &none, 1, rank)), [1]);
    }
}
