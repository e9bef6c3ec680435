//! Names written across dictionary words. A transliterated name often begins with a name
//! the dictionary has: 杰克逊维尔 segments as 杰克逊 (Jackson) + 维 + 尔, so the single
//! characters left over are too short to match anything, and the query asks about
//! Jackson where the page says Jacksonville. Here consecutive segments spelled only with
//! name characters are read together and matched exactly against the site's proper nouns.

use super::lexicon::Segment;
use super::translit::{han_skeleton, is_translit_char, MAX_NAME_CHARS};
use super::{Retriever, TermSet};

impl Retriever {
    /// Marks in `is_name` the runs of two or more segments, at least one of them a
    /// dictionary word, that together spell one of the site's proper nouns exactly, and
    /// adds each such name as a literal word (see [`super::Word::literal`]); the matched
    /// segments' own senses are then dropped (杰克逊 is no longer "Jackson"). Longer
    /// names before shorter, leftmost first, never overlapping; only exact matches, since
    /// a dictionary word is more often just a word than part of a name. Each skeleton
    /// tried costs one unit of `probes`.
    pub(super) fn match_compound_names(
        &self,
        exps: &[Segment<'_>],
        is_name: &mut [bool],
        terms: &mut TermSet,
        probes: &mut usize,
    ) {
        if self.names.is_empty() || exps.len() < 2 {
            return;
        }
        let spelled = |e: &Segment<'_>| {
            !e.stopword && !e.word.is_empty() && e.word.chars().all(is_translit_char)
        };
        for run in super::analysis::stretches(exps.len(), |j| spelled(&exps[j])) {
            if run.len() > 1 {
                self.match_segments(&exps[run.clone()], &mut is_name[run], terms, probes);
            }
        }
    }

    /// [`Retriever::match_compound_names`] within one run of segments spelled with name
    /// characters.
    fn match_segments(
        &self,
        span: &[Segment<'_>],
        is_name: &mut [bool],
        terms: &mut TermSet,
        probes: &mut usize,
    ) {
        let lens: Vec<usize> = span.iter().map(|e| e.word.chars().count()).collect();
        // (characters, first segment, end): sub-spans of two or more segments with a
        // dictionary word among them (runs of single characters are matched elsewhere),
        // at most MAX_NAME_CHARS long.
        let mut candidates: Vec<(usize, usize, usize)> = Vec::new();
        for start in 0..span.len() {
            let mut chars = lens[start];
            for end in start + 2..=span.len() {
                chars += lens[end - 1];
                if chars > MAX_NAME_CHARS {
                    break;
                }
                if lens[start..end].iter().any(|&n| n > 1) {
                    candidates.push((chars, start, end));
                }
            }
        }
        candidates.sort_by_key(|&(chars, start, _)| (std::cmp::Reverse(chars), start));
        for (_, start, end) in candidates {
            if *probes == 0 {
                return;
            }
            if is_name[start..end].iter().any(|&n| n) {
                continue;
            }
            *probes -= 1;
            let word: String = span[start..end].iter().map(|e| e.word).collect();
            let chars: Vec<char> = word.chars().collect();
            let Some(skeleton) = han_skeleton(&chars) else {
                continue;
            };
            let names = self.names.exact(&skeleton);
            if names.is_empty() {
                continue;
            }
            is_name[start..end].iter_mut().for_each(|n| *n = true);
            let share = 1.0 / names.len() as f32;
            terms.begin_word(false);
            terms.mark_literal();
            for t in names {
                terms.add(&t, share, Some(&word), &self.index);
            }
            terms.end_word();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::tests::site;

    #[test]
    fn a_name_spelled_across_a_dictionary_word_matches_the_sites_name() {
        let r = site(&[
            "Andrew Jackson was the seventh president.",
            "Jacksonville is the largest city in Florida.",
        ]);
        // 杰克逊 alone is Jackson; with 维尔 it is the city.
        let analysis = r.analyze("杰克逊维尔有多大");
        let city = r.latin_term("jacksonville");
        assert!(analysis
            .terms
            .iter()
            .any(|t| Some(&t.term) == city.as_ref()));
        assert!(!analysis.terms.iter().any(|t| t.term == "jackson"));
        let (_, hits) = r.search("杰克逊维尔有多大", 3, 0.0);
        assert_eq!(hits.first().map(|h| h.doc), Some(1));
        // The dictionary word alone keeps its sense.
        let (_, hits) = r.search("杰克逊是谁", 3, 0.0);
        assert_eq!(hits.first().map(|h| h.doc), Some(0));
    }
}
