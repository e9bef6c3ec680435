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
///
/// Everything is held in flat arrays (a term table and CSR postings), so the same index
/// is built from text by [`Bm25Builder`] or read back from a prebuilt file
/// ([`crate::index`]) without a per-term allocation either way.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Bm25Index {
    /// The distinct terms, by id.
    pub(crate) terms: TermTable,
    /// Postings of term `t` are `unit[offsets[t]..offsets[t+1]]` (CSR layout: three flat
    /// arrays instead of a Vec per term, fewer allocations and better locality).
    pub(crate) offsets: Vec<u32>,
    pub(crate) unit: Vec<u32>,
    pub(crate) weight: Vec<f32>,
    pub(crate) n_units: usize,
    pub(crate) avgdl: f32,
}

/// Distinct term strings numbered from 0: their bytes end to end, where each ends, and an
/// open-addressing hash table of ids (linear probing, [`EMPTY`] for a free slot) keyed by
/// [`term_hash`], whose values never depend on the process, so the table can be stored.
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct TermTable {
    pub(crate) bytes: Vec<u8>,
    /// `ends[t]` is where term `t` ends in `bytes` (it starts where `t - 1` ends).
    pub(crate) ends: Vec<u32>,
    /// A power-of-two number of slots, at least twice the number of terms.
    pub(crate) slots: Vec<u32>,
}

/// A free slot of [`TermTable::slots`].
pub(crate) const EMPTY: u32 = u32::MAX;

/// FNV-1a 64 of a term: fixed across processes and platforms (a stored table depends on
/// it), and quick on the short strings terms are.
pub(crate) fn term_hash(term: &[u8]) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for &b in term {
        h ^= u64::from(b);
        h = h.wrapping_mul(0x0100_0000_01b3);
    }
    h
}

impl TermTable {
    /// The table of `terms`, numbered in the order given (which must hold no duplicates).
    fn new<'a>(terms: impl ExactSizeIterator<Item = &'a str>) -> Self {
        let n = terms.len();
        let mut table = Self {
            bytes: Vec::new(),
            ends: Vec::with_capacity(n),
            slots: vec![EMPTY; (n * 2).next_power_of_two().max(2)],
        };
        for (id, term) in terms.enumerate() {
            table.bytes.extend_from_slice(term.as_bytes());
            table.ends.push(table.bytes.len() as u32);
            let mask = table.slots.len() - 1;
            let mut i = term_hash(term.as_bytes()) as usize & mask;
            while table.slots[i] != EMPTY {
                i = (i + 1) & mask;
            }
            table.slots[i] = id as u32;
        }
        table
    }

    /// Number of terms.
    pub(crate) fn len(&self) -> usize {
        self.ends.len()
    }

    /// The bytes of term `t`.
    pub(crate) fn term(&self, t: u32) -> &[u8] {
        let end = self.ends[t as usize] as usize;
        let start = if t == 0 {
            0
        } else {
            self.ends[t as usize - 1] as usize
        };
        &self.bytes[start..end]
    }

    /// The id of `term`.
    pub(crate) fn get(&self, term: &str) -> Option<u32> {
        if self.ends.is_empty() {
            return None;
        }
        let mask = self.slots.len() - 1;
        let mut i = term_hash(term.as_bytes()) as usize & mask;
        loop {
            match self.slots[i] {
                EMPTY => return None,
                t if self.term(t) == term.as_bytes() => return Some(t),
                _ => i = (i + 1) & mask,
            }
        }
    }
}

/// Builds a [`Bm25Index`] one unit at a time: each unit's terms go straight into the
/// postings, so no unit's terms outlive it, and each distinct term string is allocated
/// once (postings hold integer ids).
#[derive(Debug, Default)]
pub struct Bm25Builder {
    vocab: FxHashMap<Box<str>, u32>,
    /// Per term: (unit, tf) pairs, units ascending because units arrive in order.
    lists: Vec<Vec<(u32, u32)>>,
    lens: Vec<u32>,
}

impl Bm25Builder {
    /// Adds the next unit (units are numbered in the order added).
    pub fn add<S: AsRef<str>>(&mut self, terms: impl IntoIterator<Item = S>) {
        let u = self.lens.len() as u32;
        let mut len = 0u32;
        for term in terms {
            let term = term.as_ref();
            len += 1;
            let id = match self.vocab.get(term) {
                Some(&id) => id,
                None => {
                    let id = self.lists.len() as u32;
                    self.vocab.insert(term.into(), id);
                    self.lists.push(Vec::new());
                    id
                }
            };
            let list = &mut self.lists[id as usize];
            match list.last_mut() {
                Some((last, tf)) if *last == u => *tf += 1,
                _ => list.push((u, 1)),
            }
        }
        self.lens.push(len);
    }

    /// The finished index.
    pub fn finish(self, params: Bm25Params) -> Bm25Index {
        let Self { vocab, lists, lens } = self;
        let mut by_id: Vec<&str> = vec![""; lists.len()];
        for (term, &id) in &vocab {
            by_id[id as usize] = term;
        }
        let terms = TermTable::new(by_id.into_iter());
        drop(vocab);
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
        // Each list is freed as soon as it is copied, so the lists and the flat arrays
        // are not both whole at once.
        for list in lists {
            let idf = idf(n_units, list.len());
            for (u, tf) in list {
                let tf = tf as f32;
                let norm = k1 * (1.0 - b + b * lens[u as usize] as f32 / avgdl);
                unit.push(u);
                weight.push(idf * tf * (k1 + 1.0) / (tf + norm));
            }
            offsets.push(unit.len() as u32);
        }
        Bm25Index {
            terms,
            offsets,
            unit,
            weight,
            n_units,
            avgdl,
        }
    }
}

impl Bm25Index {
    /// Builds the index from each unit's terms (in unit order).
    pub fn build<I, T>(units: I, params: Bm25Params) -> Self
    where
        I: IntoIterator<Item = T>,
        T: IntoIterator<Item = String>,
    {
        let mut builder = Bm25Builder::default();
        for terms in units {
            builder.add(terms);
        }
        builder.finish(params)
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
        self.terms.len()
    }

    /// Average unit length in terms.
    pub fn avgdl(&self) -> f32 {
        self.avgdl
    }

    /// Number of units containing `term`.
    pub fn doc_freq(&self, term: &str) -> usize {
        self.terms.get(term).map_or(0, |t| self.postings(t).0.len())
    }

    /// The id of `term`, if any unit contains it.
    pub fn term_id(&self, term: &str) -> Option<u32> {
        self.terms.get(term)
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

    /// The units holding term `t` (ascending) and their BM25 term weights.
    pub(crate) fn postings(&self, t: u32) -> (&[u32], &[f32]) {
        let (a, b) = (
            self.offsets[t as usize] as usize,
            self.offsets[t as usize + 1] as usize,
        );
        (&self.unit[a..b], &self.weight[a..b])
    }

    /// Scores every unit matching at least one query term; returns `(unit, score)` for
    /// units with a positive score, in unit order. Unknown terms are ignored.
    pub fn score<'a>(&self, query: impl IntoIterator<Item = (&'a str, f32)>) -> Vec<(u32, f32)> {
        self.score_into(
            query
                .into_iter()
                .filter_map(|(term, w)| self.terms.get(term).map(|t| (t, w))),
            &mut ScoreScratch::default(),
        )
    }

    /// [`Bm25Index::score`] for query terms given by id (as [`Bm25Index::term_id`] gives
    /// them, when the caller has looked them up already), with the working buffers in
    /// `scratch`, which a caller scoring many queries keeps, so the accumulator is not
    /// allocated (and freed) per query.
    pub(crate) fn score_into(
        &self,
        query: impl IntoIterator<Item = (u32, f32)>,
        scratch: &mut ScoreScratch,
    ) -> Vec<(u32, f32)> {
        let ScoreScratch {
            lists,
            acc,
            touched,
        } = scratch;
        lists.clear();
        lists.extend(query);
        // `acc` is all zeros between queries (reset below, as cheaply as it was filled).
        if acc.len() != self.n_units {
            acc.clear();
            acc.resize(self.n_units, 0.0);
        }
        touched.clear();
        let total: usize = lists.iter().map(|&(t, _)| self.postings(t).0.len()).sum();
        // Two strategies for listing the matched units in order: when the postings cover
        // a good part of the corpus, one pass over the accumulator beats tracking and
        // sorting the touched units; when they are few, tracking avoids the full pass.
        let dense = total * 16 > self.n_units;
        for &(t, w) in lists.iter() {
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
        let out = if dense {
            let mut out = Vec::with_capacity(total.min(self.n_units));
            out.extend((0..self.n_units as u32).filter_map(positive));
            out
        } else {
            touched.sort_unstable();
            touched.iter().copied().filter_map(positive).collect()
        };
        if dense {
            acc.fill(0.0);
        } else {
            // The units the postings reached, as many as were added to.
            for &(t, _) in lists.iter() {
                for &u in self.postings(t).0 {
                    acc[u as usize] = 0.0;
                }
            }
        }
        out
    }
}

/// The working buffers of [`Bm25Index::score_into`].
#[derive(Debug, Default)]
pub(crate) struct ScoreScratch {
    /// The query's (term id, weight) pairs.
    lists: Vec<(u32, f32)>,
    /// Each unit's score so far.
    acc: Vec<f32>,
    /// Units scored, when they are few.
    touched: Vec<u32>,
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
