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
use rustc_hash::FxHashMap;
use serde::Serialize;
use tokenize::{han_bigrams, runs, Analyzer, Script};
use translit::{han_skeleton, is_translit_char, NameCounter, NameMatcher, MAX_NAME_CHARS};

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

/// Most transliteration skeletons tried per query. A question names a few people; this
/// keeps a run of thousands of name characters from costing more than a short one.
pub const MAX_NAME_PROBES: usize = 512;

/// Most distinct terms one query analyses to. Ranking costs one posting list per term, so
/// this bounds its work whatever a visitor pastes; a real question has a few dozen.
pub const MAX_QUERY_TERMS: usize = 256;

/// Query terms being collected: equal terms merged (weights added), at most
/// [`MAX_QUERY_TERMS`] distinct ones, found by hash so a long query stays linear.
#[derive(Default)]
struct TermSet {
    terms: Vec<QueryTerm>,
    position: FxHashMap<String, usize>,
}

impl TermSet {
    /// Adds `weight` to `term`, appending it if new and there is room.
    fn add(&mut self, term: String, weight: f32, from: Option<&str>) {
        if let Some(&i) = self.position.get(&term) {
            self.terms[i].weight += weight;
        } else if self.terms.len() < MAX_QUERY_TERMS {
            self.position.insert(term.clone(), self.terms.len());
            self.terms.push(QueryTerm {
                term,
                weight,
                from: from.map(str::to_owned),
            });
        }
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
    ///
    /// The work is linear in the query's length: segmentation tries at most a fixed number
    /// of prefixes per character, names are tried only on spans of at most
    /// [`MAX_NAME_CHARS`] within a budget of [`MAX_NAME_PROBES`] skeletons per query, and
    /// at most [`MAX_QUERY_TERMS`] distinct terms are kept.
    pub fn analyze_query(&self, query: &str) -> Vec<QueryTerm> {
        let mut terms = TermSet::default();
        let mut name_probes = MAX_NAME_PROBES;
        for run in runs(query) {
            match run.script {
                Script::Latin => {
                    if let Some(t) = self.analyzer.latin_term(&run.text) {
                        terms.add(t, 1.0, None);
                    }
                }
                Script::Han => {
                    han_bigrams(&run.text, &mut |t| terms.add(t, 1.0, None));
                    let expansions = self.lexicon.expand(&run.text);
                    let mut is_name = vec![false; expansions.len()];
                    self.match_names(&expansions, &mut is_name, &mut terms, &mut name_probes);
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
                                terms.add(t, w, Some(&ex.word));
                            }
                        }
                    }
                }
            }
        }
        terms.terms
    }

    /// Finds transliterated names among runs of single name characters that the lexicon
    /// could only read one by one (alone, a name's characters are ordinary words: 贾
    /// "merchant", 德 "virtue"). Matched segments are marked so those senses are dropped.
    /// Each skeleton tried costs one unit of `probes`; none are tried once it is spent.
    fn match_names(
        &self,
        exps: &[Expansion],
        is_name: &mut [bool],
        terms: &mut TermSet,
        probes: &mut usize,
    ) {
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
                self.match_span(&exps[i..end], &mut is_name[i..end], terms, probes);
            }
            i = end.max(i + 1);
        }
    }

    /// Picks names in a span of single name characters: exact skeleton matches before
    /// near ones, longer before shorter, leftmost first, never overlapping. Sub-spans are
    /// at most [`MAX_NAME_CHARS`] long, so a span of n characters has fewer than
    /// n × MAX_NAME_CHARS of them, each probed once.
    fn match_span(
        &self,
        span: &[Expansion],
        is_name: &mut [bool],
        terms: &mut TermSet,
        probes: &mut usize,
    ) {
        let chars: Vec<char> = span.iter().filter_map(|e| e.word.chars().next()).collect();
        // (near, length, start, matched terms); exact beats near, then longer, then leftmost.
        let mut found: Vec<(bool, usize, usize, Vec<String>)> = Vec::new();
        // Equal sub-spans match alike: each distinct one is probed (and charged) once, so a
        // repeated character costs a handful of probes however long the run.
        let mut seen: FxHashMap<&[char], Option<(bool, Vec<String>)>> = FxHashMap::default();
        for start in 0..chars.len() {
            for len in 2..=MAX_NAME_CHARS.min(chars.len() - start) {
                let part = &chars[start..start + len];
                let matched = match seen.get(part) {
                    Some(m) => m.clone(),
                    None if *probes == 0 => continue,
                    None => {
                        *probes -= 1;
                        let m = self.probe_name(part);
                        seen.insert(part, m.clone());
                        m
                    }
                };
                if let Some((near, names)) = matched {
                    found.push((near, len, start, names));
                }
            }
        }
        found.sort_by_key(|&(near, len, start, _)| (near, std::cmp::Reverse(len), start));
        for (_, len, start, names) in found {
            if is_name[start..start + len].iter().any(|&n| n) {
                continue;
            }
            is_name[start..start + len]
                .iter_mut()
                .for_each(|n| *n = true);
            let word: String = chars[start..start + len].iter().collect();
            let share = 1.0 / names.len() as f32;
            for t in names {
                terms.add(t, share, Some(&word));
            }
        }
    }

    /// The corpus names one sub-span may spell: `(near, terms)`, exact matches first.
    fn probe_name(&self, part: &[char]) -> Option<(bool, Vec<String>)> {
        let skeleton = han_skeleton(part)?;
        let exact = self.names.exact(&skeleton);
        if !exact.is_empty() {
            return Some((false, exact));
        }
        let near = self.names.near(&skeleton);
        (!near.is_empty()).then_some((true, near))
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

    /// The retriever of the sample knowledge base (many proper nouns for names to match).
    fn sample() -> &'static Retriever {
        static INDEX: std::sync::OnceLock<crate::SearchIndex> = std::sync::OnceLock::new();
        INDEX
            .get_or_init(|| {
                let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../knowledge_base.json");
                let text = std::fs::read_to_string(path).expect("the sample KB is in the repo");
                let kb =
                    crate::KnowledgeBase::from_json_str(&text, path).expect("sample KB parses");
                crate::SearchIndex::new(kb, "test")
            })
            .retriever()
    }

    /// Analyses `query` and returns (terms, skeletons computed, lexicon probes made).
    fn counted(r: &Retriever, query: &str) -> (Vec<QueryTerm>, usize, usize) {
        translit::steps::SKELETONS.with(|n| n.set(0));
        lexicon::steps::PROBES.with(|n| n.set(0));
        let terms = r.analyze_query(query);
        (
            terms,
            translit::steps::SKELETONS.with(std::cell::Cell::get),
            lexicon::steps::PROBES.with(std::cell::Cell::get),
        )
    }

    /// The work any query may cost: a fixed budget of name skeletons, a bounded number of
    /// lexicon probes per character, and a bounded number of distinct terms.
    fn assert_bounded(r: &Retriever, query: &str) {
        let chars = query.chars().count();
        let (terms, skeletons, probes) = counted(r, query);
        assert!(
            skeletons <= MAX_NAME_PROBES,
            "{skeletons} skeletons for {chars} chars"
        );
        // Segmentation probes each of the three sources at most once per prefix length.
        assert!(probes <= 3 * 8 * chars, "{probes} probes for {chars} chars");
        assert!(terms.len() <= MAX_QUERY_TERMS, "{} terms", terms.len());
    }

    #[test]
    fn repeated_name_characters_cost_a_bounded_number_of_skeletons() {
        // The reported denial of service: one name character repeated made matching try
        // every sub-span of every length (n^3.5 in time).
        for c in ['临', '德', '诺', '卡'] {
            for n in [20, 200, 2000, 4000] {
                assert_bounded(sample(), &c.to_string().repeat(n));
            }
        }
    }

    #[test]
    fn names_are_still_found_inside_long_runs_of_name_characters() {
        // The corpus is built here so the expected name is certain.
        let r = Retriever::build([["Jared Allen met Norman".to_string()]], &[]);
        let terms = r.analyze_query(&format!("{}贾里德{}", "临".repeat(300), "临".repeat(300)));
        assert!(
            terms.iter().any(|t| t.from.as_deref() == Some("贾里德")),
            "{terms:?}"
        );
        let (_, skeletons, _) = counted(&r, &"临".repeat(4000));
        assert!(skeletons <= MAX_NAME_PROBES);
    }

    #[test]
    fn overlapping_names_prefer_exact_then_longer_then_leftmost() {
        let r = Retriever::build([["Jared and Norman wrote".to_string()]], &[]);
        let terms = r.analyze_query("贾里德诺曼");
        let from: Vec<_> = terms.iter().filter_map(|t| t.from.clone()).collect();
        assert!(from.contains(&"贾里德".to_string()), "{terms:?}");
        assert!(from.contains(&"诺曼".to_string()), "{terms:?}");
    }

    #[test]
    fn distinct_terms_are_capped() {
        let words: Vec<String> = (0..5000).map(|i| format!("w{i}x")).collect();
        let terms = sample().analyze_query(&words.join(" "));
        assert_eq!(terms.len(), MAX_QUERY_TERMS);
        // Repeats of a kept term still add weight after the cap is reached.
        let mut q = words.join(" ");
        q.push_str(" w0x w0x");
        assert_eq!(weight(&sample().analyze_query(&q), "w0x"), 3.0);
    }

    use proptest::prelude::*;

    /// Queries of up to 4,000 characters (the chat limit) built from the pieces that cost
    /// query analysis the most.
    fn costly_query() -> impl Strategy<Value = String> {
        let piece = prop_oneof![
            // Characters Chinese uses to spell names, alone and repeated.
            proptest::sample::select(vec![
                '临', '德', '诺', '曼', '卡', '贾', '里', '斯', '特', '尔'
            ])
            .prop_flat_map(|c| (1usize..400).prop_map(move |n| c.to_string().repeat(n))),
            "[\\u{4e00}-\\u{9fff}]{1,40}",
            "[a-z]{1,12}( [a-z]{1,12}){0,20}",
            "[\\u{1f300}-\\u{1f6ff}\\u{200d}\\u{fe0f}]{1,8}",
            "(a\\u{0301}\\u{0327}){1,20}",
        ];
        proptest::collection::vec(piece, 0..40)
            .prop_map(|parts| parts.concat().chars().take(4000).collect::<String>())
    }

    proptest! {
        #![proptest_config(proptest::test_runner::Config {
            cases: 64,
            failure_persistence: None,
            ..proptest::test_runner::Config::default()
        })]

        #[test]
        fn any_query_up_to_the_chat_limit_analyses_in_bounded_steps(
            query in costly_query()
        ) {
            assert_bounded(sample(), &query);
        }
    }
}
