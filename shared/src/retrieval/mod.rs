//! Retrieval: query analysis with Chinese→English expansion, and BM25 ranking.
//!
//! [`Retriever`] owns an index over numbered units (passages). Callers map units back to
//! their documents; [`Retriever::search`] does that for units grouped by document.

pub mod bm25;
pub mod lexicon;
mod table;
pub mod tokenize;
pub mod translit;

use bm25::{top_k, Bm25Index, Bm25Params};
use lexicon::{Expansion, Lexicon};
use serde::Serialize;
use tokenize::{han_bigrams, runs, Analyzer, Script};
use translit::{han_skeleton, is_translit_char, NameCounter, NameMatcher};

/// A query term after analysis and expansion.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct QueryTerm {
    /// The index term (stemmed English word, or Han bigram).
    pub term: String,
    /// Its weight in the BM25 sum.
    pub weight: f32,
    /// The Chinese word it was translated from, when it came from expansion.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub from: Option<String>,
}

/// Adds `weight` to `term`, appending it if new (queries have few terms; a linear scan
/// beats hashing here).
fn add_term(terms: &mut Vec<QueryTerm>, term: String, weight: f32, from: Option<&str>) {
    if let Some(t) = terms.iter_mut().find(|t| t.term == term) {
        t.weight += weight;
    } else {
        terms.push(QueryTerm {
            term,
            weight,
            from: from.map(str::to_owned),
        });
    }
}

/// One ranked document: which document, its best passage and score.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Ranked {
    /// Index of the document in the corpus.
    pub doc: u32,
    /// Index of its best-scoring passage within the document.
    pub passage: u32,
    /// The best passage's BM25 score.
    pub score: f32,
}

/// An index over passages grouped into documents, with the analyzer and lexicon that
/// queries go through.
#[derive(Debug)]
pub struct Retriever {
    analyzer: Analyzer,
    lexicon: Lexicon,
    /// Proper nouns of the corpus, for transliterated names in queries.
    names: NameMatcher,
    index: Bm25Index,
    /// For each unit: (document, passage within it).
    units: Vec<(u32, u32)>,
    n_docs: usize,
}

impl Retriever {
    /// Indexes `docs`, each given as its passages' texts, with the given glossary.
    pub fn build<D, P>(docs: D, glossary: &[(String, Vec<String>)]) -> Self
    where
        D: IntoIterator<Item = P>,
        P: IntoIterator<Item = String>,
    {
        let mut analyzer = Analyzer::new();
        let mut units = Vec::new();
        let mut texts = Vec::new();
        let mut n_docs = 0;
        for (d, passages) in docs.into_iter().enumerate() {
            n_docs += 1;
            for (p, text) in passages.into_iter().enumerate() {
                units.push((d as u32, p as u32));
                texts.push(text);
            }
        }
        let index = Bm25Index::build(
            texts
                .iter()
                .map(|t| analyzer.learn_terms(t))
                .collect::<Vec<_>>(),
            Bm25Params::default(),
        );
        let mut counter = NameCounter::default();
        texts.iter().for_each(|t| counter.add(t));
        let names = NameMatcher::new(
            counter
                .names()
                .filter_map(|w| analyzer.latin_term(&w).map(|t| (w, t))),
        );
        Self {
            analyzer,
            lexicon: Lexicon::new(glossary),
            names,
            index,
            units,
            n_docs,
        }
    }

    /// Number of documents.
    pub fn documents(&self) -> usize {
        self.n_docs
    }

    /// Number of indexed passages.
    pub fn passages(&self) -> usize {
        self.units.len()
    }

    /// The underlying index (for statistics).
    pub fn index(&self) -> &Bm25Index {
        &self.index
    }

    /// Analyzes a query: English words as they are (weight 1 each), Han runs as bigrams
    /// (weight 1 each, for Chinese documents) plus their English translations (each
    /// Chinese word's translations sharing weight 1, a phrase's words sharing a translation's
    /// share by √length) and any proper nouns of the corpus
    /// that a run of otherwise unmatched characters transliterates. Equal terms are
    /// merged, weights added.
    pub fn analyze_query(&self, query: &str) -> Vec<QueryTerm> {
        let mut terms: Vec<QueryTerm> = Vec::new();
        for run in runs(query) {
            match run.script {
                Script::Latin => {
                    if let Some(t) = self.analyzer.latin_term(&run.text) {
                        add_term(&mut terms, t, 1.0, None);
                    }
                }
                Script::Han => {
                    han_bigrams(&run.text, &mut |t| add_term(&mut terms, t, 1.0, None));
                    let expansions = self.lexicon.expand(&run.text);
                    let mut is_name = vec![false; expansions.len()];
                    self.match_names(&expansions, &mut is_name, &mut terms);
                    for (ex, _) in expansions.iter().zip(&is_name).filter(|(_, n)| !**n) {
                        if ex.translations.is_empty() {
                            continue;
                        }
                        let share = 1.0 / ex.translations.len() as f32;
                        for tr in &ex.translations {
                            let ts = self.analyzer.terms(tr);
                            // A phrase ("face recognition") divides its share by the square
                            // root of its length: its words together say more than one word
                            // but are not independent evidence either.
                            let w = share / (ts.len().max(1) as f32).sqrt();
                            for t in ts {
                                add_term(&mut terms, t, w, Some(&ex.word));
                            }
                        }
                    }
                }
            }
        }
        terms
    }

    /// Finds transliterated names among runs of single name characters that the lexicon
    /// could only read one by one (alone, a name's characters are ordinary words: 贾
    /// "merchant", 德 "virtue"). Matched segments are marked so those senses are dropped.
    fn match_names(&self, exps: &[Expansion], is_name: &mut [bool], terms: &mut Vec<QueryTerm>) {
        if self.names.is_empty() {
            return;
        }
        let single = |e: &Expansion| {
            let mut chars = e.word.chars();
            matches!((chars.next(), chars.next()), (Some(c), None) if is_translit_char(c))
        };
        let mut i = 0;
        while i < exps.len() {
            let end = (i..exps.len())
                .find(|&j| !single(&exps[j]))
                .unwrap_or(exps.len());
            if end > i + 1 {
                self.match_span(&exps[i..end], &mut is_name[i..end], terms);
            }
            i = end.max(i + 1);
        }
    }

    /// Longest sub-span first, exact skeleton matches before near ones; then the parts
    /// left and right of a match, recursively.
    fn match_span(&self, span: &[Expansion], is_name: &mut [bool], terms: &mut Vec<QueryTerm>) {
        for near in [false, true] {
            for len in (2..=span.len()).rev() {
                for start in 0..=span.len() - len {
                    let part = &span[start..start + len];
                    let chars: Vec<char> =
                        part.iter().filter_map(|e| e.word.chars().next()).collect();
                    let Some(skeleton) = han_skeleton(&chars) else {
                        continue;
                    };
                    let found = if near {
                        self.names.near(&skeleton)
                    } else {
                        self.names.exact(&skeleton)
                    };
                    if found.is_empty() {
                        continue;
                    }
                    let word: String = chars.iter().collect();
                    let share = 1.0 / found.len() as f32;
                    for t in found {
                        add_term(terms, t, share, Some(&word));
                    }
                    is_name[start..start + len]
                        .iter_mut()
                        .for_each(|n| *n = true);
                    let (left, right) = span.split_at(start + len);
                    let (left_names, right_names) = is_name.split_at_mut(start + len);
                    self.match_span(&left[..start], &mut left_names[..start], terms);
                    self.match_span(right, right_names, terms);
                    return;
                }
            }
        }
    }

    /// Ranks documents for already analyzed terms: a document scores as its best passage.
    /// Returns at most `k` documents scoring at least `min_score`.
    pub fn rank(&self, terms: &[QueryTerm], k: usize, min_score: f32) -> Vec<Ranked> {
        let scored = self
            .index
            .score(terms.iter().map(|t| (t.term.as_str(), t.weight)));
        if self.units.len() == self.n_docs {
            // One passage per document (short entries, BEIR corpora): units are documents.
            let candidates = scored
                .into_iter()
                .filter(|&(_, s)| s >= min_score)
                .collect();
            return top_k(candidates, k)
                .into_iter()
                .map(|(doc, score)| Ranked {
                    doc,
                    passage: 0,
                    score,
                })
                .collect();
        }
        // Best passage per document; units of one document are contiguous and ascending,
        // so one pass with a "current document" slot suffices.
        let mut best: Vec<Ranked> = Vec::new();
        for (u, score) in scored {
            let (doc, passage) = self.units[u as usize];
            match best.last_mut() {
                Some(r) if r.doc == doc => {
                    if score > r.score {
                        *r = Ranked {
                            doc,
                            passage,
                            score,
                        };
                    }
                }
                _ => best.push(Ranked {
                    doc,
                    passage,
                    score,
                }),
            }
        }
        let candidates: Vec<(u32, f32)> = best
            .iter()
            .filter(|r| r.score >= min_score)
            .map(|r| (r.doc, r.score))
            .collect();
        let passage_of = |doc: u32| {
            best.binary_search_by_key(&doc, |r| r.doc)
                .map_or(0, |i| best[i].passage)
        };
        top_k(candidates, k)
            .into_iter()
            .map(|(doc, score)| Ranked {
                doc,
                passage: passage_of(doc),
                score,
            })
            .collect()
    }

    /// Analyzes and ranks in one call.
    pub fn search(&self, query: &str, k: usize, min_score: f32) -> (Vec<QueryTerm>, Vec<Ranked>) {
        let terms = self.analyze_query(query);
        let ranked = self.rank(&terms, k, min_score);
        (terms, ranked)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn weight(terms: &[QueryTerm], term: &str) -> f32 {
        terms
            .iter()
            .find(|t| t.term == term)
            .map_or(0.0, |t| t.weight)
    }

    #[test]
    fn a_words_translations_share_weight_one_and_phrases_split_by_sqrt_length() {
        let glossary = [(
            "测试词".to_string(),
            vec![
                "alpha".to_string(),
                "beta".to_string(),
                "gamma delta".to_string(),
            ],
        )];
        let r = Retriever::build([["alpha beta gamma delta".to_string()]], &glossary);
        let terms = r.analyze_query("测试词");
        let third = 1.0 / 3.0;
        assert!((weight(&terms, "alpha") - third).abs() < 1e-6);
        assert!((weight(&terms, "beta") - third).abs() < 1e-6);
        assert!((weight(&terms, "gamma") - third / 2f32.sqrt()).abs() < 1e-6);
        assert!((weight(&terms, "delta") - third / 2f32.sqrt()).abs() < 1e-6);
        // The Han bigrams stay, at weight 1, for Chinese documents.
        assert_eq!(weight(&terms, "测试"), 1.0);
        assert!(
            terms
                .iter()
                .filter(|t| t.from.as_deref() == Some("测试词"))
                .count()
                == 4
        );
    }

    #[test]
    fn english_words_weigh_one_each_and_repeats_add_up() {
        let r = Retriever::build([["face model".to_string()]], &[]);
        let terms = r.analyze_query("Face face the model");
        assert_eq!(weight(&terms, "face"), 2.0);
        assert_eq!(weight(&terms, "model"), 1.0);
        assert_eq!(weight(&terms, "the"), 0.0);
    }

    #[test]
    fn documents_score_as_their_best_passage() {
        let r = Retriever::build(
            [
                vec!["cooking".to_string(), "face face recognition".to_string()],
                vec!["face".to_string()],
            ],
            &[],
        );
        let (_, ranked) = r.search("face recognition", 5, 0.0);
        assert_eq!(ranked.len(), 2);
        assert_eq!((ranked[0].doc, ranked[0].passage), (0, 1));
        assert_eq!(ranked[1].doc, 1);
        assert_eq!(r.passages(), 3);
        assert_eq!(r.documents(), 2);
    }
}
