//! Single Chinese characters at query time: a one-character word of a question (郡
//! "county" in 哪个郡) matches the passages that write the character anywhere.
//!
//! Inside a run of Han text the index holds only bigrams (杜瓦尔郡 → 杜瓦, 瓦尔, 尔郡), so
//! a lone character has no term of its own there. Rather than indexing every character
//! as well (a third more memory held on a Chinese site, measured on 10,000 generated
//! pages), a character stands for the union of the indexed bigrams holding it, found
//! through [`CharBigrams`], a table from character to bigram ids built from the term
//! table when the retriever is assembled (never stored: it follows from the terms). It is
//! scored as one BM25 term would be: its IDF from the number of passages in the union,
//! and in each passage the strongest term-frequency part among its bigrams there.

use super::bm25::{idf, Bm25Index};
use super::tokenize::is_han;
use rustc_hash::FxHashMap;

/// Most postings (summed over its bigrams and its own term) a character may cost to be
/// matched: a character in more is common on the site (in many words), so says little
/// alone, and skipping it bounds the work one character costs to a frequent word's.
const MAX_CHAR_POSTINGS: usize = 8192;

/// Most postings the characters of one query may cost together: a pasted run of hundreds
/// of distinct characters costs no more than four common ones.
const MAX_QUERY_CHAR_POSTINGS: usize = 4 * MAX_CHAR_POSTINGS;

/// What follows a Han character in a query term standing for the character anywhere
/// (`郡*`). No index term holds it (the tokenizer splits text there), so such a term is
/// never mistaken for a character the index holds on its own (one standing alone, as in
/// “质”, keeps its own exact term).
const CHAR_MARK: char = '*';

/// The query term for Han character `c` anywhere, written into `buf`.
pub(crate) fn char_term(c: char, buf: &mut [u8; 8]) -> &str {
    let n = c.encode_utf8(&mut buf[..]).len();
    let m = CHAR_MARK.encode_utf8(&mut buf[n..]).len();
    std::str::from_utf8(&buf[..n + m]).unwrap_or_default()
}

/// The Han character a query term from [`char_term`] stands for, if it is one.
pub(crate) fn char_of(term: &str) -> Option<char> {
    let mut cs = term.chars();
    match (cs.next(), cs.next(), cs.next()) {
        (Some(c), Some(CHAR_MARK), None) if is_han(c) => Some(c),
        _ => None,
    }
}

/// The Han characters of a bigram term, if it is one.
fn han_pair(term: &[u8]) -> Option<(char, char)> {
    let mut cs = std::str::from_utf8(term).ok()?.chars();
    match (cs.next(), cs.next(), cs.next()) {
        (Some(a), Some(b), None) if is_han(a) && is_han(b) => Some((a, b)),
        _ => None,
    }
}

/// Each Han character of the index's bigrams → the ids of the bigrams holding it, in
/// flat arrays (CSR): the characters sorted, where each one's ids start, and the ids.
/// About 8 bytes a Han bigram, listed under each of its two characters (3.6 MiB for
/// 10,000 generated Chinese pages).
#[derive(Debug, Default)]
pub(crate) struct CharBigrams {
    chars: Vec<char>,
    starts: Vec<u32>,
    ids: Vec<u32>,
}

impl CharBigrams {
    /// The table of the index's Han bigrams: two passes over the terms (count, then
    /// place), so nothing larger than the table itself is held while building it.
    pub(crate) fn build(index: &Bm25Index) -> Self {
        let table = &index.terms;
        let n_terms = table.len() as u32;
        let mut count: FxHashMap<char, u32> = FxHashMap::default();
        for t in 0..n_terms {
            if let Some((a, b)) = han_pair(table.term(t)) {
                *count.entry(a).or_default() += 1;
                if b != a {
                    *count.entry(b).or_default() += 1;
                }
            }
        }
        let mut chars: Vec<char> = count.keys().copied().collect();
        chars.sort_unstable();
        let mut starts = Vec::with_capacity(chars.len() + 1);
        starts.push(0u32);
        for c in &chars {
            starts.push(starts[starts.len() - 1] + count[c]);
        }
        drop(count);
        let mut next: Vec<u32> = starts[..chars.len()].to_vec();
        let mut ids = vec![0u32; starts[chars.len()] as usize];
        let mut place = |c: char, t: u32| {
            if let Ok(i) = chars.binary_search(&c) {
                ids[next[i] as usize] = t;
                next[i] += 1;
            }
        };
        for t in 0..n_terms {
            if let Some((a, b)) = han_pair(table.term(t)) {
                place(a, t);
                if b != a {
                    place(b, t);
                }
            }
        }
        Self { chars, starts, ids }
    }

    /// The ids of the bigrams holding `c`.
    fn bigrams(&self, c: char) -> &[u32] {
        match self.chars.binary_search(&c) {
            Ok(i) => &self.ids[self.starts[i] as usize..self.starts[i + 1] as usize],
            Err(_) => &[],
        }
    }
}

/// Working buffers of [`CharScorer`], kept from query to query.
#[derive(Debug, Default)]
pub(crate) struct CharScratch {
    /// (unit, term-frequency part) of one character's postings.
    parts: Vec<(u32, f32)>,
    /// (unit, score) of every character of the query.
    scores: Vec<(u32, f32)>,
}

/// Scores the characters of one query, within [`MAX_QUERY_CHAR_POSTINGS`].
pub(crate) struct CharScorer<'a> {
    index: &'a Bm25Index,
    table: &'a CharBigrams,
    /// Postings the query may still spend.
    budget: usize,
}

impl<'a> CharScorer<'a> {
    /// A scorer for one query over `index`, whose bigrams `table` lists.
    pub(crate) fn new(index: &'a Bm25Index, table: &'a CharBigrams) -> Self {
        Self {
            index,
            table,
            budget: MAX_QUERY_CHAR_POSTINGS,
        }
    }

    /// Adds the scores of character `c` with query weight `weight` to `scratch`: the
    /// passages holding a bigram with `c` (or `c` as a term of its own, a character
    /// standing alone), each scoring `weight × IDF(c) × its best term-frequency part`.
    /// A character costing more than [`MAX_CHAR_POSTINGS`], or than the query has left,
    /// adds nothing.
    pub(crate) fn add(&mut self, c: char, weight: f32, scratch: &mut CharScratch) {
        let Some((own, ids)) = self.postings_of(c, self.budget) else {
            return;
        };
        self.budget -= own
            .iter()
            .chain(ids)
            .map(|&t| self.index.doc_freq_of(t))
            .sum::<usize>();
        let n = self.index.len();
        let parts = &mut scratch.parts;
        parts.clear();
        for &t in own.iter().chain(ids) {
            let (units, weights) = self.index.postings(t);
            // A posting's weight is its term's IDF times its term-frequency part.
            let term_idf = idf(n, units.len());
            parts.extend(units.iter().zip(weights).map(|(&u, &w)| (u, w / term_idf)));
        }
        parts.sort_unstable_by_key(|&(u, _)| u);
        parts.dedup_by(|later, kept| {
            let same = later.0 == kept.0;
            if same {
                kept.1 = kept.1.max(later.1);
            }
            same
        });
        let scale = weight * idf(n, parts.len());
        scratch
            .scores
            .extend(parts.iter().map(|&(u, tf)| (u, scale * tf)));
    }

    /// The terms holding `c` (its own, and the bigrams with it) when their postings number
    /// at least one and at most [`MAX_CHAR_POSTINGS`] and `budget`. Counting stops as soon
    /// as they pass that, so a common character costs no more to refuse than to score.
    fn postings_of(&self, c: char, budget: usize) -> Option<(Option<u32>, &'a [u32])> {
        let limit = MAX_CHAR_POSTINGS.min(budget);
        let mut buf = [0u8; 4];
        let own = self.index.term_id(c.encode_utf8(&mut buf));
        let ids = self.table.bigrams(c);
        let cost = own.iter().chain(ids).try_fold(0usize, |sum, &t| {
            Some(sum + self.index.doc_freq_of(t)).filter(|&s| s <= limit)
        })?;
        (cost > 0).then_some((own, ids))
    }

    /// The number of passages writing `c`, as [`CharScorer::add`] would count them for its
    /// IDF (0 for a character it would skip as too common).
    pub(crate) fn doc_freq(&self, c: char, scratch: &mut CharScratch) -> usize {
        let Some((own, ids)) = self.postings_of(c, MAX_CHAR_POSTINGS) else {
            return 0;
        };
        let units = &mut scratch.parts;
        units.clear();
        for &t in own.iter().chain(ids) {
            units.extend(self.index.postings(t).0.iter().map(|&u| (u, 0.0)));
        }
        units.sort_unstable_by_key(|&(u, _)| u);
        units.dedup_by_key(|&mut (u, _)| u);
        units.len()
    }

    /// `scored` (units ascending, as [`Bm25Index::score_into`] gives them) with the
    /// characters' scores added; the scratch is left ready for the next query.
    pub(crate) fn merge(scored: Vec<(u32, f32)>, scratch: &mut CharScratch) -> Vec<(u32, f32)> {
        let scores = &mut scratch.scores;
        if scores.is_empty() {
            return scored;
        }
        scores.sort_unstable_by_key(|&(u, _)| u);
        let mut out: Vec<(u32, f32)> = Vec::with_capacity(scored.len() + scores.len());
        let (mut i, mut j) = (0, 0);
        while i < scored.len() || j < scores.len() {
            let take_scored = j == scores.len() || (i < scored.len() && scored[i].0 <= scores[j].0);
            let (u, s) = if take_scored {
                i += 1;
                scored[i - 1]
            } else {
                j += 1;
                scores[j - 1]
            };
            match out.last_mut() {
                // The unit's term score and its characters' scores add up.
                Some(last) if last.0 == u => last.1 += s,
                _ => out.push((u, s)),
            }
        }
        scores.clear();
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn index(units: &[&[&str]]) -> Bm25Index {
        Bm25Index::build(
            units
                .iter()
                .map(|u| u.iter().map(|t| t.to_string()).collect::<Vec<_>>()),
            Default::default(),
        )
    }

    #[test]
    fn a_character_term_is_its_character_and_no_other_term() {
        let mut buf = [0; 8];
        assert_eq!(char_term('郡', &mut buf), "郡*");
        assert_eq!(char_of("郡*"), Some('郡'));
        for other in ["郡", "尔郡", "a*", "郡**", "*", ""] {
            assert_eq!(char_of(other), None, "{other}");
        }
    }

    #[test]
    fn a_character_lists_every_bigram_holding_it_once() {
        let idx = index(&[&["尔郡", "郡长", "郡郡", "ab", "郡"], &["长安"]]);
        let table = CharBigrams::build(&idx);
        let names = |c| {
            let mut v: Vec<String> = table
                .bigrams(c)
                .iter()
                .map(|&t| String::from_utf8_lossy(idx.terms.term(t)).into_owned())
                .collect();
            v.sort();
            v
        };
        assert_eq!(names('郡'), ["尔郡", "郡郡", "郡长"]);
        assert_eq!(names('长'), ["郡长", "长安"]);
        assert!(names('a').is_empty());
    }

    #[test]
    fn a_character_scores_the_units_writing_it_as_one_term() {
        // Units 0 and 2 write 郡 (in two words, and alone); unit 1 does not.
        let idx = index(&[
            &["尔郡", "郡长", "人口"],
            &["人口", "河流"],
            &["郡", "河流"],
        ]);
        let table = CharBigrams::build(&idx);
        let mut scratch = CharScratch::default();
        let mut scorer = CharScorer::new(&idx, &table);
        scorer.add('郡', 1.0, &mut scratch);
        let scored = idx.score(["河流"].map(|t| (t, 1.0)));
        let merged = CharScorer::merge(scored.clone(), &mut scratch);
        let units: Vec<u32> = merged.iter().map(|&(u, _)| u).collect();
        assert_eq!(units, [0, 1, 2]);
        // It scores as 郡 would where each unit writing it held it once as a term of its
        // own: the same site with a plain term in its place (units as long as before).
        let plain = index(&[&["郡", "x", "人口"], &["人口", "河流"], &["郡", "河流"]]);
        let as_term = plain.score(["郡"].map(|t| (t, 1.0)));
        assert_eq!(as_term.iter().map(|&(u, _)| u).collect::<Vec<_>>(), [0, 2]);
        assert!((merged[0].1 - as_term[0].1).abs() < 1e-6, "{merged:?}");
        // Unit 2: its term's score plus the character's.
        let river = scored.iter().find(|s| s.0 == 2).unwrap().1;
        assert!(
            (merged[2].1 - (river + as_term[1].1)).abs() < 1e-6,
            "{merged:?}"
        );
        assert!(scratch.scores.is_empty());
    }

    #[test]
    fn a_character_in_too_many_postings_costs_nothing() {
        // One bigram holding 的 in more units than a character may cost.
        let units: Vec<&[&str]> = vec![&["的人"]; MAX_CHAR_POSTINGS + 1];
        let idx = index(&units);
        let table = CharBigrams::build(&idx);
        let mut scratch = CharScratch::default();
        let mut scorer = CharScorer::new(&idx, &table);
        scorer.add('的', 1.0, &mut scratch);
        assert!(scratch.scores.is_empty());
        // Characters at the most a character may cost each: the query's budget holds four.
        let idx = index(&vec![
            &["人口", "河流", "山川"][..];
            MAX_CHAR_POSTINGS
        ]);
        let table = CharBigrams::build(&idx);
        let mut scorer = CharScorer::new(&idx, &table);
        for c in ['人', '口', '河', '流'] {
            scorer.add(c, 1.0, &mut scratch);
        }
        let spent = scratch.scores.len();
        assert_eq!(spent, MAX_QUERY_CHAR_POSTINGS);
        scorer.add('山', 1.0, &mut scratch);
        assert_eq!(scratch.scores.len(), spent, "past the query's budget");
        assert_eq!(scorer.doc_freq('山', &mut scratch), MAX_CHAR_POSTINGS);
    }
}
