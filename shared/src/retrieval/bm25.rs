//! BM25 over an inverted index built once at load time.
//!
//! Score of unit `d` for weighted query terms `(t, w)`:
//! `Σ w · idf(t) · tf·(k1+1) / (tf + k1·(1 − b + b·|d|/avgdl))` with the Lucene IDF
//! `idf(t) = ln(1 + (N − df + 0.5)/(df + 0.5))` (never negative). Everything but the
//! query weight depends only on the corpus, so each posting stores its finished
//! `idf · tf-part` and a query is a weighted sum over posting lists.

use rustc_hash::FxHashMap;

/// BM25 parameters.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Bm25Params {
    /// Term-frequency saturation.
    pub k1: f32,
    /// Length normalisation strength.
    pub b: f32,
}

impl Default for Bm25Params {
    fn default() -> Self {
        Self { k1: 1.2, b: 0.75 }
    }
}

/// The Lucene BM25 inverse document frequency.
pub fn idf(n_docs: usize, df: usize) -> f32 {
    let (n, df) = (n_docs as f64, df as f64);
    (1.0 + (n - df + 0.5) / (df + 0.5)).ln() as f32
}

/// An immutable inverted index over numbered units (documents or passages).
#[derive(Debug, Clone, Default)]
pub struct Bm25Index {
    vocab: FxHashMap<Box<str>, u32>,
    /// Postings of term `t` are `unit[offsets[t]..offsets[t+1]]` (CSR layout: three flat
    /// arrays instead of a Vec per term, fewer allocations and better locality).
    offsets: Vec<u32>,
    unit: Vec<u32>,
    weight: Vec<f32>,
    n_units: usize,
    avgdl: f32,
}

impl Bm25Index {
    /// Builds the index from each unit's terms (in unit order).
    pub fn build<I, T>(units: I, params: Bm25Params) -> Self
    where
        I: IntoIterator<Item = T>,
        T: IntoIterator<Item = String>,
    {
        let mut vocab: FxHashMap<Box<str>, u32> = FxHashMap::default();
        // Per term: (unit, tf) pairs, units ascending because units arrive in order.
        let mut lists: Vec<Vec<(u32, u32)>> = Vec::new();
        let mut lens: Vec<u32> = Vec::new();
        for (u, terms) in units.into_iter().enumerate() {
            let mut len = 0u32;
            for term in terms {
                len += 1;
                let next = vocab.len() as u32;
                let id = *vocab.entry(term.into_boxed_str()).or_insert(next);
                if id as usize == lists.len() {
                    lists.push(Vec::new());
                }
                let list = &mut lists[id as usize];
                match list.last_mut() {
                    Some((last, tf)) if *last == u as u32 => *tf += 1,
                    _ => list.push((u as u32, 1)),
                }
            }
            lens.push(len);
        }
        let n_units = lens.len();
        let total: u64 = lens.iter().map(|&l| u64::from(l)).sum();
        let avgdl = if n_units == 0 {
            1.0
        } else {
            (total as f32 / n_units as f32).max(1.0)
        };
        let postings: usize = lists.iter().map(Vec::len).sum();
        let mut offsets = Vec::with_capacity(lists.len() + 1);
        let mut unit = Vec::with_capacity(postings);
        let mut weight = Vec::with_capacity(postings);
        offsets.push(0);
        let Bm25Params { k1, b } = params;
        for list in &lists {
            let idf = idf(n_units, list.len());
            for &(u, tf) in list {
                let tf = tf as f32;
                let norm = k1 * (1.0 - b + b * lens[u as usize] as f32 / avgdl);
                unit.push(u);
                weight.push(idf * tf * (k1 + 1.0) / (tf + norm));
            }
            offsets.push(unit.len() as u32);
        }
        Self {
            vocab,
            offsets,
            unit,
            weight,
            n_units,
            avgdl,
        }
    }

    /// Number of indexed units.
    pub fn len(&self) -> usize {
        self.n_units
    }

    /// True when nothing is indexed.
    pub fn is_empty(&self) -> bool {
        self.n_units == 0
    }

    /// Number of distinct terms.
    pub fn vocabulary_size(&self) -> usize {
        self.vocab.len()
    }

    /// Average unit length in terms.
    pub fn avgdl(&self) -> f32 {
        self.avgdl
    }

    /// Number of units containing `term`.
    pub fn doc_freq(&self, term: &str) -> usize {
        self.vocab
            .get(term)
            .map_or(0, |&t| self.postings(t).0.len())
    }

    /// The id of `term`, if any unit contains it.
    pub fn term_id(&self, term: &str) -> Option<u32> {
        self.vocab.get(term).copied()
    }

    /// Number of units containing the term with id `t`.
    pub fn doc_freq_of(&self, t: u32) -> usize {
        self.postings(t).0.len()
    }

    /// Whether `unit` contains the term with id `t` (a bisection of its postings).
    pub fn contains(&self, t: u32, unit: u32) -> bool {
        self.postings(t).0.binary_search(&unit).is_ok()
    }

    /// Number of units containing every one of the terms with ids `terms` (all units for
    /// none). Walks the shortest posting list and bisects the others.
    pub fn co_occurrence(&self, terms: &[u32]) -> usize {
        let Some(&rarest) = terms.iter().min_by_key(|&&t| self.doc_freq_of(t)) else {
            return self.n_units;
        };
        self.postings(rarest)
            .0
            .iter()
            .filter(|&&u| terms.iter().all(|&t| t == rarest || self.contains(t, u)))
            .count()
    }

    fn postings(&self, t: u32) -> (&[u32], &[f32]) {
        let (a, b) = (
            self.offsets[t as usize] as usize,
            self.offsets[t as usize + 1] as usize,
        );
        (&self.unit[a..b], &self.weight[a..b])
    }

    /// Scores every unit matching at least one query term; returns `(unit, score)` for
    /// units with a positive score, in unit order. Unknown terms are ignored.
    pub fn score<'a>(&self, query: impl IntoIterator<Item = (&'a str, f32)>) -> Vec<(u32, f32)> {
        let lists: Vec<(u32, f32)> = query
            .into_iter()
            .filter_map(|(term, w)| self.vocab.get(term).map(|&t| (t, w)))
            .collect();
        let total: usize = lists.iter().map(|&(t, _)| self.postings(t).0.len()).sum();
        let mut acc = vec![0f32; self.n_units];
        // Two strategies for listing the matched units in order: when the postings cover
        // a good part of the corpus, one pass over the accumulator beats tracking and
        // sorting the touched units; when they are few, tracking avoids the full pass.
        let dense = total * 16 > self.n_units;
        let mut touched: Vec<u32> = Vec::new();
        for &(t, w) in &lists {
            let (units, weights) = self.postings(t);
            if dense {
                for (&u, &pw) in units.iter().zip(weights) {
                    acc[u as usize] += w * pw;
                }
            } else {
                for (&u, &pw) in units.iter().zip(weights) {
                    let slot = &mut acc[u as usize];
                    if *slot == 0.0 {
                        touched.push(u);
                    }
                    *slot += w * pw;
                }
            }
        }
        let positive = |u: u32| Some((u, acc[u as usize])).filter(|&(_, s)| s > 0.0);
        if dense {
            let mut out = Vec::with_capacity(total.min(self.n_units));
            out.extend((0..self.n_units as u32).filter_map(positive));
            out
        } else {
            touched.sort_unstable();
            touched.into_iter().filter_map(positive).collect()
        }
    }
}

/// Keeps the `k` best `(id, score)` pairs: score descending, ties by id ascending (so
/// equal scores rank in document order, deterministically). Scores must not be negative.
pub fn top_k(scored: Vec<(u32, f32)>, k: usize) -> Vec<(u32, f32)> {
    if k == 0 {
        return Vec::new();
    }
    // For non-negative floats the IEEE bit pattern orders like the value, so one u64 key
    // (inverted score bits, then id) sorts best-first with plain integer compares, which
    // is several times cheaper than comparing (f32, u32) pairs over thousands of hits.
    let mut keys: Vec<u64> = scored
        .into_iter()
        .map(|(id, s)| (u64::from(!s.max(0.0).to_bits()) << 32) | u64::from(id))
        .collect();
    if keys.len() > k {
        keys.select_nth_unstable(k - 1);
        keys.truncate(k);
    }
    keys.sort_unstable();
    keys.into_iter()
        .map(|key| (key as u32, f32::from_bits(!((key >> 32) as u32))))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    macro_rules! assert_near {
        ($a:expr, $b:expr) => {{
            let (a, b) = ($a as f64, $b as f64);
            assert!((a - b).abs() < 1e-4, "{a} != {b}");
        }};
    }

    fn toks(s: &str) -> Vec<String> {
        s.split_whitespace().map(str::to_owned).collect()
    }

    /// Three units: lengths 3, 2, 1 (avgdl 2).
    fn tiny() -> Bm25Index {
        Bm25Index::build(
            [toks("face face model"), toks("face train"), toks("llava")],
            Bm25Params::default(),
        )
    }

    #[test]
    fn idf_matches_the_lucene_formula_by_hand() {
        // N = 3, df = 2: ln(1 + 1.5/2.5) = ln(1.6)
        assert_near!(idf(3, 2), 0.470_003_6);
        // N = 3, df = 1: ln(1 + 2.5/1.5) = ln(2.666..)
        assert_near!(idf(3, 1), 0.980_829_3);
        // A term in every unit still scores above zero.
        assert!(idf(3, 3) > 0.0);
    }

    #[test]
    fn scores_match_hand_computed_bm25() {
        let idx = tiny();
        assert_near!(idx.avgdl(), 2.0);
        let s = idx.score([("face", 1.0)]);
        // unit 0: tf 2, len 3: norm = 1.2·(0.25 + 0.75·1.5) = 1.65; 2·2.2/(2+1.65) = 1.205479
        // unit 1: tf 1, len 2: norm = 1.2; 2.2/2.2 = 1
        assert_eq!(s.len(), 2);
        assert_near!(s[0].1, 0.470_003_6 * 1.205_479_5);
        assert_near!(s[1].1, 0.470_003_6);
    }

    #[test]
    fn query_weights_scale_and_sum_term_scores() {
        let idx = tiny();
        let s = idx.score([("face", 0.5), ("train", 2.0), ("absent", 9.0)]);
        // unit 1: 0.5·idf(face)·1 + 2·idf(train)·1
        assert_near!(s[1].1, 0.5 * 0.470_003_6 + 2.0 * 0.980_829_3);
    }

    #[test]
    fn co_occurrence_counts_units_holding_every_term() {
        let idx = tiny();
        let id = |t: &str| idx.term_id(t).unwrap();
        assert_eq!(idx.co_occurrence(&[id("face")]), 2);
        assert_eq!(idx.co_occurrence(&[id("face"), id("model")]), 1);
        assert_eq!(idx.co_occurrence(&[id("model"), id("train")]), 0);
        assert!(idx.contains(id("train"), 1) && !idx.contains(id("train"), 0));
    }

    #[test]
    fn top_k_keeps_the_best_of_many_in_order() {
        let scored: Vec<(u32, f32)> = (0..1000).map(|i| (i, ((i * 7919) % 1000) as f32)).collect();
        let mut expected = scored.clone();
        expected.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
        expected.truncate(10);
        assert_eq!(top_k(scored, 10), expected);
    }

    #[test]
    fn sparse_and_dense_scoring_agree() {
        // 40 units; "rare" is in one (sparse path), "common" in all (dense path).
        let units: Vec<Vec<String>> = (0..40)
            .map(|i| {
                if i == 7 {
                    toks("rare common")
                } else {
                    toks("common filler")
                }
            })
            .collect();
        let idx = Bm25Index::build(units, Bm25Params::default());
        let rare = idx.score([("rare", 1.0)]);
        assert_eq!(rare.len(), 1);
        let both = idx.score([("rare", 1.0), ("common", 1.0)]);
        assert_eq!(both.len(), 40);
        assert!(both.windows(2).all(|w| w[0].0 < w[1].0), "unit order");
        assert_eq!(both[7].1, rare[0].1 + idx.score([("common", 1.0)])[7].1);
    }

    #[test]
    fn top_k_orders_by_score_then_unit() {
        let ranked = top_k(vec![(3, 1.0), (1, 2.0), (0, 1.0), (2, 0.5)], 3);
        assert_eq!(ranked, vec![(1, 2.0), (0, 1.0), (3, 1.0)]);
        assert!(top_k(vec![(0, 1.0)], 0).is_empty());
    }

    #[test]
    fn empty_index_scores_nothing() {
        let idx = Bm25Index::build(Vec::<Vec<String>>::new(), Bm25Params::default());
        assert!(idx.is_empty());
        assert!(idx.score([("x", 1.0)]).is_empty());
    }
}
