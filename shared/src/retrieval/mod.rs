//! Retrieval: query analysis with Chinese→English expansion, and BM25 ranking.
//!
//! [`Retriever`] owns an index over numbered units (passages). Callers map units back to
//! their documents; [`Retriever::search`] does that for units grouped by document.

mod bm25;
mod chars;
mod compound_names;
mod dict;
mod dict_format;
mod dict_names;
mod lexicon;
mod table;
mod tokenize;
mod translit;
mod versions;
mod zh_stopwords;

pub(crate) use bm25::{idf, Bm25Index, Bm25Params, TermTable, EMPTY};
use bm25::{top_k, Bm25Builder};
use chars::{char_of, char_term, CharBigrams, CharScorer, CharScratch};
use lexicon::Segment;
pub use lexicon::{is_zh_stopword, Lexicon};
use rustc_hash::FxHashMap;
use serde::Serialize;
use std::hash::BuildHasher;
pub(crate) use tokenize::nth_char_start;
use tokenize::{compounds, han_bigram_slices, run_spans};
pub use tokenize::{fold_char, is_han, runs, Analyzer, Script};
pub use translit::MAX_NAME_CHARS;
use translit::{han_skeleton, has_reading, is_translit_char, NameCounter, NameMatcher};
pub use versions::NONE as NO_VERSION;

/// The version of the text analysis (tokenizer, stopwords, stemming, bigrams, names): bump
/// it with any change to the terms a text or a query yields. It enters the prebuilt
/// index's analysis fingerprint ([`crate::index::analysis_fingerprint`], with the bytes of
/// the data files), so an index from a binary that analysed text differently is refused.
pub const ANALYSIS_VERSION: u32 = 2;

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

/// Fewest characters of a transliterated name that holds ordinary characters as well as
/// name characters (see `Retriever::match_span`).
const MIN_MIXED_NAME: usize = 4;

/// Most transliteration skeletons tried per query. A question names a few people; this
/// keeps a run of thousands of name characters from costing more than a short one.
pub const MAX_NAME_PROBES: usize = 512;

/// Most Han characters of one query that are segmented, translated and tried as names;
/// past them, Han text only adds its bigrams. Segmentation is the costliest step per
/// character, and a real question is far shorter: this keeps 4,000 pasted characters from
/// costing more than a long question does.
pub const MAX_ANALYSED_HAN_CHARS: usize = 256;

/// Most distinct terms one query analyses to. Ranking costs one posting list per term, so
/// this bounds its work whatever a visitor pastes; a real question has a few dozen.
pub const MAX_QUERY_TERMS: usize = 256;

/// The share of a query's words (weighted by specificity) that some passage must match for
/// [`Retriever::search`] to return any hit (see there).
pub const MIN_COVERAGE: f32 = 0.15;

/// How many of the best hits [`Retriever::search`] looks through for one that covers the
/// question, whatever the number of hits asked for: whether a site can answer a question
/// must not depend on how many hits the caller shows (a chat asking for 3 and a search
/// asking for 10 agree on it).
pub const COVERAGE_DEPTH: usize = 10;
/// The weight a query word's translations into the other language share; its own terms
/// weigh 1 each. Below 1 so that, on a site with both languages, the page in the
/// question's language outranks its translation, which still comes next.
pub const CROSS_WEIGHT: f32 = 0.8;

/// A query is *mostly unknown* to a site when words the site never uses carry more than
/// this share of its weight...
pub const MAX_UNKNOWN: f32 = 0.5;
/// ...and then a passage must match at least this many of its words to be a hit: a
/// question about something the site never mentions is not answered from the one generic
/// word it shares with the site ("怎么减肥最有效": 有效 "effective").
pub const MIN_WORDS_IF_UNKNOWN: usize = 2;
/// ...unless the one word it matches is rare on the site, in at most one passage in this
/// many, and carries at least [`RARE_MIN_SHARE`] of the question's weight. In a
/// two-word question the other word often misses only because the site says it
/// differently (a translation the dictionary lacks: "谁演唱了国歌" where the page says
/// "sang the national anthem"), while a word that specific to a few passages is not
/// shared by chance. A generic word is ("有效" effective is on many pages), and on a small
/// site every word is in too large a share of passages to count (a homepage of 30
/// passages keeps the two-word rule whole).
pub const RARE_PASSAGES: usize = 64;
/// The share of a question's weight a lone rare word must carry (see [`RARE_PASSAGES`]).
/// Beside one word the site never uses, a rare word carries about 0.45 (an absent word
/// weighs a little more); beside two or more, at most a third: an off-topic question that
/// shares one incidental word with a large site ("How much does a flight to Tokyo cost?"
/// on a software manual that mentions a cost once) stays unanswered.
pub const RARE_MIN_SHARE: f32 = 0.4;

/// The weight of the bigram across two adjacent words of a Chinese query (演唱国歌 → 唱国
/// is no word, but says the two words are written together). It says where the words
/// stand, not a word of its own: at a word's
/// full weight it counted the two words it joins a second time, so a passage repeating
/// a phrase of the question outranked one holding more of its words. Half a word: a
/// passage that writes the words together still ranks above one that holds them apart.
/// Beside a single character (煮米饭: 煮 "cook") too: the character stands for itself (see
/// [`CHAR_WEIGHT`]), so the bigram need not (at a word's weight it outweighed the words).
pub const CROSS_BIGRAM_WEIGHT: f32 = 0.5;

/// The weight of a single-character word of a Chinese query inside a run (哪个郡: 郡
/// "county"), matched wherever a passage writes the character (see `chars`): half a word,
/// since a character is one part of the passage's word (杜瓦尔郡 "Duval County") and many
/// words share it; its IDF, from the passages writing it, says the rest.
pub const CHAR_WEIGHT: f32 = 0.5;

/// How much a document's naming-field score counts beside its best passage's. Measured
/// on the real-site dev sets (docs/evaluation.md): 0.3 and 0.5 lift every site by
/// 0.02–0.06 nDCG@10; from 0.8 English questions fall back below no fields at all, as
/// titles crowd out the passage that answers.
pub const FIELD_WEIGHT: f32 = 0.3;

/// The share of its score a demoted document (release notes) keeps: half, so the notes
/// outrank the page about what they mention only when they match twice as well.
pub const DEMOTED_WEIGHT: f32 = 0.5;

/// BM25 over the naming fields: one unit per document, so `b` normalises a page with 300
/// headings against one with a title alone.
const FIELD_PARAMS: Bm25Params = Bm25Params { k1: 1.2, b: 0.75 };

/// Marks a title's terms in the naming-field index (`^term`): no analysed query term
/// starts with it, so they never score, and a test for a title word is one lookup.
const TITLE_MARK: char = '^';

/// A query word found in the title of at most one document in this many names the entry
/// it is found in: it answers the question however much of the question's
/// weight is in words the site never uses ("InsightFace 有多少 star" on a site that
/// writes the star count as a number). A word in more names (model, learning) says too
/// little about which entry is meant.
pub const NAMING_SHARE: usize = 8;

/// Query terms being collected: equal terms merged (weights added), at most
/// [`MAX_QUERY_TERMS`] distinct ones, found by hash so a long query stays linear; and the
/// query's words, each the set of terms that stand for it, kept flat (three arrays of
/// offsets rather than a `Vec` per word and per alternative) so collecting them allocates
/// nothing once the buffers of the thread's [`QueryScratch`] have grown.
#[derive(Default)]
struct TermSet {
    terms: Vec<QueryTerm>,
    /// The index id of each term (`None` when no unit has it), looked up once, when the
    /// term is first added.
    ids: Vec<Option<u32>>,
    /// An open-addressing table over `terms`: index + 1 (0 for a free slot), probed
    /// linearly from the term's hash. Its own table rather than a map keyed by `String`
    /// so a new term is not allocated twice; [`TERM_SLOTS`] keeps its load at most one half.
    slots: Vec<u16>,
    /// The slots taken, so clearing the table costs what filling it did.
    taken: Vec<u16>,
    /// The query's words (see [`Analysis::words`]): each one's flags and where its
    /// alternatives begin in `alts`.
    words: Vec<FlatWord>,
    /// Each alternative: where its terms begin in `alt_terms`.
    alts: Vec<u32>,
    /// The terms of every alternative, end to end, as indexes into `terms`.
    alt_terms: Vec<u32>,
    /// Whether terms being added belong to the last word of `words`.
    in_word: bool,
}

/// One word of [`TermSet`]: [`Word`] with its alternatives as offsets.
#[derive(Debug, Clone, Copy)]
struct FlatWord {
    /// Where its alternatives begin in [`TermSet::alts`] (they end where the next word's do).
    first_alt: u32,
    single: bool,
    neutral: bool,
    literal: bool,
    /// Latin letters as the visitor wrote them (a word or identifier, not a translation).
    written: bool,
}

impl TermSet {
    /// Empties the set, keeping its buffers.
    fn clear(&mut self) {
        self.terms.clear();
        self.ids.clear();
        for &slot in &self.taken {
            self.slots[slot as usize] = 0;
        }
        self.taken.clear();
        self.words.clear();
        self.alts.clear();
        self.alt_terms.clear();
        self.in_word = false;
    }

    /// Adds `weight` to `term`, appending it if new and there is room; within a word, the
    /// term becomes one of the word's alternatives.
    fn add(&mut self, term: &str, weight: f32, from: Option<&str>, index: &Bm25Index) {
        if let Some(i) = self.merge(term, weight, from, index) {
            self.alt_terms.push(i);
            self.close_alternative(self.alt_terms.len() - 1);
        }
    }

    /// Adds the terms of a phrase, each with `weight`; within a word, the phrase is one
    /// alternative, matched only where all its terms are.
    fn add_phrase<'t>(
        &mut self,
        phrase: impl IntoIterator<Item = &'t str>,
        weight: f32,
        from: Option<&str>,
        index: &Bm25Index,
    ) {
        let start = self.alt_terms.len();
        for t in phrase {
            if let Some(i) = self.merge(t, weight, from, index) {
                self.alt_terms.push(i);
            }
        }
        if self.alt_terms.len() > start {
            self.close_alternative(start);
        }
    }

    /// Makes the terms from `start` on in `alt_terms` an alternative of the current word,
    /// or drops them when terms belong to no word.
    fn close_alternative(&mut self, start: usize) {
        if self.in_word && !self.words.is_empty() {
            self.alts.push(start as u32);
        } else {
            self.alt_terms.truncate(start);
        }
    }

    /// Merges `term` into the set; its index, or `None` when the set is full. A term
    /// already there costs no allocation.
    fn merge(
        &mut self,
        term: &str,
        weight: f32,
        from: Option<&str>,
        index: &Bm25Index,
    ) -> Option<u32> {
        if self.slots.is_empty() {
            self.slots = vec![0; TERM_SLOTS];
        }
        let mask = TERM_SLOTS - 1;
        let mut slot = rustc_hash::FxBuildHasher.hash_one(term) as usize & mask;
        while let Some(i) = self.slots[slot].checked_sub(1) {
            if self.terms[i as usize].term == term {
                break;
            }
            slot = (slot + 1) & mask;
        }
        let i = if let Some(i) = self.slots[slot].checked_sub(1) {
            let i = i as usize;
            self.terms[i].weight += weight;
            i
        } else if self.terms.len() < MAX_QUERY_TERMS {
            self.slots[slot] = self.terms.len() as u16 + 1;
            self.taken.push(slot as u16);
            self.terms.push(QueryTerm {
                term: term.to_owned(),
                weight,
                from: from.map(str::to_owned),
            });
            self.ids.push(index.term_id(term));
            self.terms.len() - 1
        } else {
            return None;
        };
        Some(i as u32)
    }

    /// Starts a new word of the query: terms added until [`TermSet::end_word`] stand for it.
    /// `single` marks a single Chinese character.
    fn begin_word(&mut self, single: bool) {
        if self.words.len() < MAX_QUERY_TERMS {
            self.words.push(FlatWord {
                first_alt: self.alts.len() as u32,
                single,
                neutral: false,
                literal: false,
                written: false,
            });
            self.in_word = true;
        }
    }

    /// Whether some alternative of the word being collected has every term indexed.
    fn word_indexed(&self) -> bool {
        match (self.in_word, self.words.len()) {
            (true, n) if n > 0 => self
                .alternatives(n - 1)
                .any(|alt| alt.iter().all(|&i| self.ids[i as usize].is_some())),
            _ => false,
        }
    }

    /// Marks the word just begun as written in Latin letters by the visitor.
    fn mark_written(&mut self) {
        if let (true, Some(w)) = (self.in_word, self.words.last_mut()) {
            w.written = true;
        }
    }

    /// Marks the word just begun as a literal name (see [`Word::literal`]).
    fn mark_literal(&mut self) {
        if let (true, Some(w)) = (self.in_word, self.words.last_mut()) {
            w.literal = true;
        }
    }

    /// Marks the word just begun as neutral (see [`Word::neutral`]).
    fn mark_neutral(&mut self) {
        if let (true, Some(w)) = (self.in_word, self.words.last_mut()) {
            w.neutral = true;
        }
    }

    /// Ends the current word (terms added next stand for no word in particular).
    fn end_word(&mut self) {
        self.in_word = false;
    }

    /// The alternatives of word `w`, as ranges of `alt_terms`.
    fn alternatives(&self, w: usize) -> impl Iterator<Item = &[u32]> + '_ {
        let first = self.words[w].first_alt as usize;
        let end = self
            .words
            .get(w + 1)
            .map_or(self.alts.len(), |next| next.first_alt as usize);
        (first..end).map(move |a| {
            let start = self.alts[a] as usize;
            let stop = self
                .alts
                .get(a + 1)
                .map_or(self.alt_terms.len(), |&next| next as usize);
            &self.alt_terms[start..stop]
        })
    }

    /// The words as [`Analysis::words`] gives them.
    fn nested_words(&self) -> Vec<Word> {
        (0..self.words.len())
            .map(|w| {
                let f = self.words[w];
                Word {
                    alternatives: self.alternatives(w).map(<[u32]>::to_vec).collect(),
                    single: f.single,
                    neutral: f.neutral,
                    literal: f.literal,
                }
            })
            .collect()
    }
}

/// Working memory of query analysis, one per thread, reused from query to query: the
/// folded query, the segmentation's arrays and the term set's buffers.
#[derive(Default)]
struct QueryScratch {
    folded: String,
    spans: Vec<(Script, std::ops::Range<u32>)>,
    segments: lexicon::Scratch,
    is_name: Vec<bool>,
    lone: Vec<(usize, usize)>,
    /// Translation shares of the words translated so far (see [`Translated`]).
    shares: Vec<(usize, f32)>,
    /// See [`Translated::few`].
    translated_few: Vec<(u32, u32, u32, u32)>,
    /// Translation work: candidates and term ids.
    candidates: Vec<(usize, usize, f32)>,
    ids: Vec<u32>,
    terms: TermSet,
    /// Words of the query as the no-answer test weighs them.
    weighed: Vec<Weighed>,
    /// Their indexed alternatives: ranges of `weighed_ids`, each with the number of
    /// passages holding it.
    weighed_alts: Vec<(u32, u32, u32)>,
    weighed_ids: Vec<u32>,
    /// Ranking's buffers.
    score: bm25::ScoreScratch,
    /// The naming fields' (an accumulator per document, not per passage).
    field_score: bm25::ScoreScratch,
    chars: CharScratch,
}

thread_local! {
    static SCRATCH: std::cell::RefCell<QueryScratch> = std::cell::RefCell::default();
}

/// Runs `f` with this thread's [`QueryScratch`] (a fresh one if it is in use).
fn with_scratch<R>(f: impl FnOnce(&mut QueryScratch) -> R) -> R {
    SCRATCH.with(|cell| match cell.try_borrow_mut() {
        Ok(mut scratch) => f(&mut scratch),
        Err(_) => f(&mut QueryScratch::default()),
    })
}

/// Words already translated in one query (a long query repeats its words): word → range
/// of [`QueryScratch::shares`]. A short query's few words are compared one by one (kept as
/// ranges of the folded query, in the thread's scratch); past [`Translated::LINEAR`] of
/// them, a hash map keeps a long query linear.
struct Translated<'q> {
    folded: &'q str,
    /// (word start, word end, shares start, shares end).
    few: &'q mut Vec<(u32, u32, u32, u32)>,
    many: FxHashMap<&'q str, (u32, u32)>,
}

impl<'q> Translated<'q> {
    const LINEAR: usize = 16;

    fn get(&self, word: &str) -> Option<(u32, u32)> {
        let found = self
            .few
            .iter()
            .find(|&&(s, e, _, _)| &self.folded[s as usize..e as usize] == word);
        match found {
            Some(&(_, _, a, b)) => Some((a, b)),
            None => self.many.get(word).copied(),
        }
    }

    /// Records the shares of `word`, which starts at byte `at` of the folded query.
    fn insert(&mut self, word: &'q str, at: usize, range: (u32, u32)) {
        if self.few.len() < Self::LINEAR {
            self.few
                .push((at as u32, (at + word.len()) as u32, range.0, range.1));
        } else {
            self.many.insert(word, range);
        }
    }
}

/// Slots of [`TermSet`]'s table: a power of two at least twice [`MAX_QUERY_TERMS`].
const TERM_SLOTS: usize = (2 * MAX_QUERY_TERMS).next_power_of_two();

/// A query after analysis: its terms, and which terms stand for each of its words.
#[derive(Debug, Clone, Default)]
pub struct Analysis {
    /// The weighted terms, as [`Retriever::analyze_query`] returns them.
    pub terms: Vec<QueryTerm>,
    /// The content words of the query (English words and identifiers, Chinese words,
    /// names), at most [`MAX_QUERY_TERMS`].
    pub words: Vec<Word>,
}

/// One content word of a query.
#[derive(Debug, Clone, Default)]
pub struct Word {
    /// What stands for it (its bigrams, translations, or the word itself), each as the
    /// indexes into [`Analysis::terms`] of terms that must all match (several for a phrase).
    pub alternatives: Vec<Vec<u32>>,
    /// Whether it is a single Chinese character: too ambiguous for its absence from the
    /// site to say anything, and not indexed by itself inside a longer run.
    pub single: bool,
    /// Whether its absence from the site says nothing about the question being off-topic:
    /// a word in an alphabet other than Latin (an Arabic or Hebrew greeting around a name
    /// the site does use: "ما هو LLaVA؟") or a fragment of two characters or fewer (`0m`
    /// from a terminal escape). Such a word counts only where the site has it.
    pub neutral: bool,
    /// Whether it is a name: a run of Chinese characters no dictionary joins, matched as
    /// written (李会晟), or an exact transliteration of one of the site's proper nouns
    /// (卡卡 → Gaga). A page that has it is about what the question names, so matching it
    /// answers the question on its own.
    pub literal: bool,
}

/// A word of the query as the no-answer test weighs it.
struct Weighed {
    /// Its IDF on this site (see [`Retriever::search`]).
    weight: f32,
    /// Its alternatives whose terms are all indexed: a range of the scratch's
    /// alternatives, each a range of term ids with the number of passages holding it.
    alts: (u32, u32),
    /// See [`Word::literal`].
    literal: bool,
    /// Written by the visitor in Latin letters: only such a word can name an entry.
    written: bool,
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
    /// What `names` was built from (kept for writing a prebuilt index).
    name_list: Vec<(String, String)>,
    index: Bm25Index,
    /// One unit per document: the words that name it (title, summary, headings; see
    /// [`Retriever::build_fielded`]), scored beside its passages.
    fields: Bm25Index,
    /// For each unit: (document, passage within it).
    units: Vec<(u32, u32)>,
    n_docs: usize,
    /// Whether any passage has Chinese text (else English words are not expanded).
    has_han: bool,
    /// English term → the glossary's Chinese words translating to it.
    glossary_zh: FxHashMap<String, Vec<String>>,
    /// Each document's version in the other language ([`versions::NONE`] for none); empty
    /// on a site without Chinese text.
    versions: Vec<u32>,
    /// Each Han character → the indexed bigrams holding it (see [`chars`]).
    char_bigrams: CharBigrams,
    /// Documents that mention many things in passing (release notes), ascending: they
    /// score at [`DEMOTED_WEIGHT`] (see [`Retriever::demote`]).
    demoted: Vec<u32>,
}

impl Retriever {
    /// Indexes `docs`, each given as its passages' texts, with the given glossary.
    pub fn build<D, P>(docs: D, glossary: &[(String, Vec<String>)]) -> Self
    where
        D: IntoIterator<Item = P>,
        P: IntoIterator<Item = String>,
    {
        Self::build_fielded(
            docs.into_iter().map(|passages| (String::new(), passages)),
            glossary,
        )
    }

    /// Indexes `docs`, each given as the text of its naming fields (title on the first
    /// line, then summary, heading lines...: what [`FIELD_WEIGHT`] scores) and its
    /// passages' texts.
    pub fn build_fielded<D, P>(docs: D, glossary: &[(String, Vec<String>)]) -> Self
    where
        D: IntoIterator<Item = (String, P)>,
        P: IntoIterator<Item = String>,
    {
        let mut analyzer = Analyzer::new();
        let mut units = Vec::new();
        let mut builder = Bm25Builder::default();
        let mut fields = Bm25Builder::default();
        let mut counter = NameCounter::default();
        let mut has_han = false;
        let mut n_docs = 0;
        // One passage at a time: its terms go into the index and its text is dropped, so
        // neither every passage's text nor every passage's terms are held at once.
        for (d, (field_text, passages)) in docs.into_iter().enumerate() {
            n_docs += 1;
            // The first line is the title: its terms also stand marked ([`TITLE_MARK`]),
            // for the no-answer rule's test of a question naming an entry.
            let title = field_text.lines().next().unwrap_or("");
            let marked: Vec<String> = analyzer
                .learn_terms(title)
                .into_iter()
                .map(|t| format!("{TITLE_MARK}{t}"))
                .collect();
            fields.add_marked(analyzer.learn_terms(&field_text), marked);
            for (p, text) in passages.into_iter().enumerate() {
                units.push((d as u32, p as u32));
                builder.add(analyzer.learn_terms(&text));
                counter.add(&text);
                has_han = has_han || text.chars().any(tokenize::is_han);
            }
        }
        crate::heap::mark("analyze+postings");
        // The names before the postings are laid out, so the word counts are gone by then.
        let names: Vec<(String, String)> = counter
            .names()
            .filter_map(|w| analyzer.latin_term(&w).map(|t| (w, t)))
            .collect();
        crate::heap::mark("names");
        // Before the postings are laid out, the build's peak (docs/prebuilt-index.md).
        analyzer.forget_words();
        let index = builder.finish(Bm25Params::default());
        let fields = fields.finish(FIELD_PARAMS);
        crate::heap::mark("finish");
        Self::assemble(
            analyzer, index, fields, units, n_docs, has_han, names, glossary, None,
        )
    }

    /// A retriever over an index built elsewhere (by [`Retriever::build`], or read back
    /// from a prebuilt file): `names` are the corpus's proper nouns as `(lowercase word,
    /// index term)`, in the order [`Retriever::names`] lists them; `versions` as
    /// [`Retriever::versions`] gave them, or `None` to pair the documents now.
    #[allow(clippy::too_many_arguments)] // One per part of the stored layout.
    pub(crate) fn assemble(
        analyzer: Analyzer,
        index: Bm25Index,
        fields: Bm25Index,
        units: Vec<(u32, u32)>,
        n_docs: usize,
        has_han: bool,
        names: Vec<(String, String)>,
        glossary: &[(String, Vec<String>)],
        versions: Option<Vec<u32>>,
    ) -> Self {
        let mut glossary_zh: FxHashMap<String, Vec<String>> = FxHashMap::default();
        for (zh, translations) in glossary {
            for tr in translations {
                if let [term] = analyzer.terms(tr).as_slice() {
                    let zh: String = zh.chars().map(tokenize::fold_char).collect();
                    glossary_zh.entry(term.clone()).or_default().push(zh);
                }
            }
        }
        let lexicon = Lexicon::new(glossary);
        crate::heap::mark("glossary");
        let versions = match versions {
            Some(stored) => stored,
            None if has_han => versions::pair(&index, &units, n_docs, &lexicon),
            None => Vec::new(),
        };
        crate::heap::mark("versions");
        // Only a site with Chinese text has bigrams to list.
        let char_bigrams = if has_han {
            CharBigrams::build(&index)
        } else {
            CharBigrams::default()
        };
        crate::heap::mark("char bigrams");
        Self {
            char_bigrams,
            analyzer,
            lexicon,
            names: NameMatcher::new(names.iter().cloned()),
            name_list: names,
            index,
            fields,
            units,
            n_docs,
            has_han,
            glossary_zh,
            versions,
            demoted: Vec::new(),
        }
    }

    /// Ranks `docs` (release notes, which name every module that changed) at
    /// [`DEMOTED_WEIGHT`] of their score, so the page about a thing outranks the notes
    /// that mention it.
    pub fn demote(&mut self, docs: impl IntoIterator<Item = u32>) {
        self.demoted = docs.into_iter().collect();
        self.demoted.sort_unstable();
        self.demoted.dedup();
    }

    /// Each document's version in the other language on a bilingual site
    /// ([`versions::NONE`] for none; empty when the site has no Chinese text).
    pub fn versions(&self) -> &[u32] {
        &self.versions
    }

    /// The first `k` of `ranked` leaving out each hit whose other-language version ranks
    /// above it.
    pub fn one_version_each(&self, ranked: Vec<Ranked>, k: usize) -> Vec<Ranked> {
        let mut out: Vec<Ranked> = Vec::with_capacity(k.min(ranked.len()));
        for hit in ranked {
            if out.len() == k {
                break;
            }
            let other = self.versions.get(hit.doc as usize).copied();
            if !out.iter().any(|h| Some(h.doc) == other) {
                out.push(hit);
            }
        }
        out
    }

    /// `ranked` with each hit's other-language version right after it (scored as the hit:
    /// it is the same page), keeping the first `k`. The version's passage is the one at
    /// the hit's position when it has as many (translations keep their structure), else
    /// its first.
    fn with_versions(&self, ranked: Vec<Ranked>, k: usize) -> Vec<Ranked> {
        if self.versions.is_empty() {
            return ranked;
        }
        let mut out: Vec<Ranked> = Vec::with_capacity(ranked.len() + 1);
        for hit in &ranked {
            if out.iter().any(|h| h.doc == hit.doc) {
                continue;
            }
            out.push(*hit);
            let other = self.versions[hit.doc as usize];
            if other == versions::NONE || out.iter().any(|h| h.doc == other) {
                continue;
            }
            let passage = match ranked.iter().find(|h| h.doc == other) {
                Some(own) => own.passage,
                None if self.units.binary_search(&(other, hit.passage)).is_ok() => hit.passage,
                None => 0,
            };
            out.push(Ranked {
                doc: other,
                passage,
                score: hit.score,
            });
        }
        out.truncate(k);
        out
    }

    /// Per word of the query: its weight (the IDF of its most specific term the site
    /// contains, or the IDF of an absent term when the site contains none of them: a word
    /// the site never uses is as specific as a word can be) and the ids of its indexed
    /// terms. Words without terms, and single characters the site has no term for, are
    /// left out.
    ///
    /// Fills `weighed` (the alternatives as ranges of `alt_ids` with their passage counts,
    /// in `alts`) from the term set of an analysed query.
    fn word_weights(
        &self,
        set: &TermSet,
        weighed: &mut Vec<Weighed>,
        alts: &mut Vec<(u32, u32, u32)>,
        alt_ids: &mut Vec<u32>,
    ) {
        weighed.clear();
        alts.clear();
        alt_ids.clear();
        let n = self.index.len();
        for (w, word) in set.words.iter().enumerate() {
            // Alternatives whose terms are all indexed, as term ids.
            let first = alts.len();
            let mut any = false;
            for alt in set.alternatives(w) {
                any = true;
                let start = alt_ids.len();
                let all = alt.iter().all(|&i| match set.ids[i as usize] {
                    Some(id) => {
                        alt_ids.push(id);
                        true
                    }
                    None => false,
                });
                if all {
                    let df = match &alt_ids[start..] {
                        &[t] => self.index.doc_freq_of(t),
                        ids => self.index.co_occurrence(ids),
                    };
                    // Passages are counted in u32 throughout the index.
                    alts.push((start as u32, alt_ids.len() as u32, df as u32));
                } else {
                    alt_ids.truncate(start);
                }
            }
            let indexed = &alts[first..];
            if !any || word.single || (word.neutral && indexed.is_empty()) {
                alts.truncate(first);
                continue;
            }
            let weight = indexed
                .iter()
                .map(|&(_, _, df)| df as usize)
                .filter(|&df| df > 0)
                .map(|df| idf(n, df))
                .fold(None, |m: Option<f32>, x| Some(m.map_or(x, |m| m.max(x))))
                .unwrap_or_else(|| idf(n, 0));
            weighed.push(Weighed {
                weight,
                alts: (first as u32, alts.len() as u32),
                literal: word.literal,
                written: word.written,
            });
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

    /// Every index term of `text`, as a passage would be indexed (for comparing other
    /// text, such as an answer, with indexed passages).
    pub fn text_terms(&self, text: &str) -> Vec<String> {
        self.analyzer.terms(text)
    }

    /// The index term of one lowercase Latin word, `None` for a stopword.
    pub fn latin_term(&self, word: &str) -> Option<String> {
        self.analyzer.latin_term(word)
    }

    /// The underlying index (for statistics).
    pub fn index(&self) -> &Bm25Index {
        &self.index
    }

    /// The naming fields' index: one unit per document.
    pub fn fields(&self) -> &Bm25Index {
        &self.fields
    }

    /// The number of passages a query term of [`Retriever::analyze_query`] matches: an
    /// index term's document frequency, or for a character term (`郡*`) the passages
    /// writing the character, as ranking counts them.
    pub fn doc_freq(&self, term: &str) -> usize {
        match char_of(term) {
            Some(c) => with_scratch(|scratch| {
                CharScorer::new(&self.index, &self.char_bigrams).doc_freq(c, &mut scratch.chars)
            }),
            None => self.index.doc_freq(term),
        }
    }

    /// The corpus's proper nouns as `(lowercase word, index term)`.
    pub fn names(&self) -> &[(String, String)] {
        &self.name_list
    }

    /// For each indexed passage: (document, passage within it).
    pub fn units(&self) -> &[(u32, u32)] {
        &self.units
    }

    /// Whether any passage has Chinese text.
    pub fn has_han(&self) -> bool {
        self.has_han
    }

    /// Analyzes a query: English words as they are (weight 1 each), Han runs as bigrams
    /// (for Chinese documents: the bigrams of one word share weight 1; the
    /// bigram where two words meet weighs [`CROSS_BIGRAM_WEIGHT`]) plus their English
    /// translations (each
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
        self.analyze(query).terms
    }

    /// Like [`Retriever::analyze_query`], also telling which terms stand for which word.
    pub fn analyze(&self, query: &str) -> Analysis {
        with_scratch(|scratch| {
            self.analyze_into(query, scratch);
            Analysis {
                words: scratch.terms.nested_words(),
                terms: std::mem::take(&mut scratch.terms.terms),
            }
        })
    }

    /// Analyses `query` into `scratch.terms` (see [`Retriever::analyze`]), reusing the
    /// scratch's buffers.
    fn analyze_into(&self, query: &str, scratch: &mut QueryScratch) {
        let QueryScratch {
            folded,
            spans,
            segments: seg_scratch,
            is_name,
            lone,
            shares,
            candidates,
            ids,
            terms,
            translated_few,
            ..
        } = scratch;
        terms.clear();
        // The terms are handed to the caller at the end, so this is a new buffer: room
        // for a typical question's terms at once rather than growing it four times.
        terms.terms.reserve(16);
        shares.clear();
        translated_few.clear();
        run_spans(query, folded, spans);
        let folded: &str = folded;
        let index = &self.index;
        let mut name_probes = MAX_NAME_PROBES;
        let mut han_left = MAX_ANALYSED_HAN_CHARS;
        // Per query: words already looked up (a long query repeats its words).
        let mut translated = Translated {
            folded,
            few: translated_few,
            many: FxHashMap::default(),
        };
        let mut segments: Vec<lexicon::Segment<'_>> = Vec::new();
        for (script, range) in spans.iter() {
            let (run_start, run) = (
                range.start as usize,
                &folded[range.start as usize..range.end as usize],
            );
            match script {
                Script::Latin => {
                    if let Some(t) = self.analyzer.latin_term_ref(run) {
                        terms.begin_word(false);
                        terms.mark_written();
                        if t.chars().count() <= 2 || !run.chars().any(|c| c.is_ascii_alphabetic()) {
                            terms.mark_neutral();
                        }
                        if self.has_han {
                            self.add_chinese(&t, run, terms);
                        }
                        terms.add(&t, 1.0, None, index);
                        terms.end_word();
                    }
                }
                Script::Han => {
                    // Past the budget, only bigrams (added last, standing for no word in
                    // particular), the first one joining the analysed part to the rest.
                    let (head, tail) =
                        run.split_at(nth_char_start(run, han_left).unwrap_or(run.len()));
                    han_left -= head.chars().count();
                    segments.clear();
                    self.lexicon.segment_in(
                        head,
                        |w| self.han_attested(w),
                        seg_scratch,
                        &mut segments,
                    );
                    is_name.clear();
                    is_name.resize(segments.len(), false);
                    self.match_compound_names(&segments, is_name, terms, &mut name_probes);
                    self.match_names(&segments, is_name, terms, &mut name_probes);
                    // Bigrams (for Chinese documents) of the content words only: the
                    // characters of question and filler words (是什么, 怎么, 的话) are cut
                    // out, so those do not match every Chinese page. A word's own bigrams
                    // and translations stand for it; a bigram across two words for neither.
                    // The last character of the previous content word.
                    let mut prev: Option<char> = None;
                    let whole_run = segments.len() == 1 && tail.is_empty();
                    lone_spans(&segments, is_name, lone);
                    // Where the segment starts in `folded`.
                    let mut at = run_start;
                    for (i, (ex, &name)) in segments.iter().zip(is_name.iter()).enumerate() {
                        let word_at = at;
                        at += ex.word.len();
                        if let Some(&(start, end)) = lone.iter().find(|s| s.0 == i) {
                            // Characters the dictionary could not join (a Chinese name:
                            // 李会晟, 元英宗) are one word as written, matched by its
                            // bigrams together; neutral, since single-character words in
                            // a row are often just that. They lie end to end in `folded`.
                            let len: usize =
                                segments[start..end].iter().map(|x| x.word.len()).sum();
                            let text = &folded[word_at..word_at + len];
                            terms.begin_word(false);
                            terms.mark_neutral();
                            terms.mark_literal();
                            terms.add_phrase(han_bigram_slices(text), 1.0, None, index);
                            terms.end_word();
                        }
                        // Inside a span its bigrams are already in.
                        let inside = lone.iter().any(|&(start, end)| i > start && i < end);
                        if ex.is_function_word() {
                            prev = None;
                            continue;
                        }
                        let mut chars = ex.word.chars();
                        let first = chars.next();
                        let single = chars.next().is_none();
                        if let (Some(a), Some(b), false) = (prev, first, inside) {
                            // The bigram across two words, built on the stack.
                            let mut buf = [0u8; 8];
                            let la = a.encode_utf8(&mut buf).len();
                            let lb = b.encode_utf8(&mut buf[la..]).len();
                            let bigram = std::str::from_utf8(&buf[..la + lb]).unwrap_or_default();
                            terms.add(bigram, CROSS_BIGRAM_WEIGHT, None, index);
                        }
                        prev = ex.word.chars().last();
                        terms.begin_word(single);
                        // A lone character is a term of the index only when it is the whole
                        // run; inside a run only bigrams are indexed. There it stands for
                        // itself, unless it is part of a name or of a run no dictionary
                        // joins (matched as written above).
                        if !single || whole_run {
                            let weight = bigram_share(ex.word);
                            for t in han_bigram_slices(ex.word) {
                                terms.add(t, weight, None, index);
                            }
                        } else if let (false, false, Some(c)) =
                            (name, lone.iter().any(|s| (s.0..s.1).contains(&i)), first)
                        {
                            // Inside a run, the character anywhere (see [`chars`]): a
                            // passage may write it in a word of its own (哪个郡 → 杜瓦尔郡).
                            terms.add(char_term(c, &mut [0; 8]), CHAR_WEIGHT, None, index);
                        }
                        if !name {
                            // A word repeated in the query is translated once.
                            let (a, b) = match translated.get(ex.word) {
                                Some(range) => range,
                                None => {
                                    let a = shares.len() as u32;
                                    self.translations_of(ex, candidates, ids, shares);
                                    let range = (a, shares.len() as u32);
                                    translated.insert(ex.word, word_at, range);
                                    range
                                }
                            };
                            // The shares come in translation order: one pass over the groups.
                            let mut groups = ex.translation_terms().enumerate();
                            for &(k, w) in &shares[a as usize..b as usize] {
                                if let Some((_, group)) = groups.find(|&(j, _)| j == k) {
                                    let phrase = group.split(' ').filter(|t| !t.is_empty());
                                    terms.add_phrase(phrase, w, Some(ex.word), index);
                                }
                            }
                            // The site writes neither the word nor any of its translations:
                            // perhaps a name the dictionary spells another way.
                            if !single && ex.has_translations() && !terms.word_indexed() {
                                self.add_respelled_name(ex, terms);
                            }
                            // Nor was it a name: its parts' senses may be the site's.
                            if !single && ex.has_translations() && !terms.word_indexed() {
                                self.add_parts(ex, seg_scratch, candidates, ids, shares, terms);
                            }
                        }
                        terms.end_word();
                    }
                    if !tail.is_empty() {
                        let joined = head.chars().last().map_or(0, char::len_utf8);
                        let rest = &run[head.len() - joined..];
                        for t in han_bigram_slices(rest) {
                            terms.add(t, 1.0, None, index);
                        }
                    }
                }
            }
        }
        // Identifiers as written (`v-if`, `sys_platform`), beside their parts.
        compounds(query, &mut |t| {
            terms.begin_word(false);
            terms.mark_written();
            terms.add(&t, 1.0, None, index);
            terms.end_word();
        });
    }

    /// Adds to the current word the translations of its dictionary parts of two or more
    /// characters (触发器 → 触发 "trigger"), for a compound whose own translations the
    /// site never writes. A lone character's senses are too many to stand for a word.
    /// `scratch`, `candidates`, `ids` and `shares` are working buffers (`shares` is only
    /// appended to).
    fn add_parts(
        &self,
        ex: &Segment<'_>,
        scratch: &mut lexicon::Scratch,
        candidates: &mut Vec<(usize, usize, f32)>,
        ids: &mut Vec<u32>,
        shares: &mut Vec<(usize, f32)>,
        terms: &mut TermSet,
    ) {
        let mut parts = Vec::new();
        self.lexicon
            .parts_in(ex.word, |w| self.han_attested(w), scratch, &mut parts);
        for part in parts
            .iter()
            .filter(|p| p.word.chars().nth(1).is_some() && !p.is_function_word())
        {
            let a = shares.len();
            self.translations_of(part, candidates, ids, shares);
            let mut groups = part.translation_terms().enumerate();
            for &(k, w) in &shares[a..] {
                if let Some((_, group)) = groups.find(|&(j, _)| j == k) {
                    let phrase = group.split(' ').filter(|t| !t.is_empty());
                    terms.add_phrase(phrase, w, Some(ex.word), &self.index);
                }
            }
        }
    }

    /// True when the corpus writes the Han `word` (every bigram of it is indexed), which
    /// makes it a likelier segment of a query about this site.
    fn han_attested(&self, word: &str) -> bool {
        han_bigram_slices(word).all(|b| self.index.doc_freq(b) > 0)
    }

    /// The English translations of one Chinese word and their weights, sharing [`CROSS_WEIGHT`]
    /// among the translations the corpus contains, by evidence:
    ///
    /// `share_i = ln(1 + df_i) / Σ_j ln(1 + df_j)`, where `df_i` is the number of indexed
    /// units holding every term of translation i (for a phrase, all its words in one
    /// unit). A sense the site never uses (卸载 → "disembark" on a software site) gets
    /// nothing; the senses it does use share by how much of the site uses them,
    /// logarithmically so a common word does not swamp a specific one (BM25's IDF still
    /// favours the rare one at ranking). When no translation occurs in the corpus, the
    /// single words share equally (they match nothing, but stay visible in the analysis).
    ///
    /// A phrase ("lose weight") is used only where the site has its words together: its
    /// loose words alone ("weight" in a paper) would be another meaning. Its words divide
    /// its share by the square root of its length: together they say more than one word,
    /// but are not independent evidence either.
    ///
    /// Appends `(translation's index, weight)` pairs to `out`; `candidates` and `ids` are
    /// working buffers.
    fn translations_of(
        &self,
        ex: &Segment<'_>,
        candidates: &mut Vec<(usize, usize, f32)>,
        ids: &mut Vec<u32>,
        out: &mut Vec<(usize, f32)>,
    ) {
        if !ex.has_translations() {
            return;
        }
        // (translation's index, its number of terms, evidence); the terms come precomputed.
        candidates.clear();
        for (k, group) in ex.translation_terms().enumerate() {
            let n = self.term_ids(group.split(' ').filter(|t| !t.is_empty()), ids);
            candidates.push((k, n, (self.df_of(ids, n) as f32).ln_1p()));
        }
        let evidence: f32 = candidates.iter().map(|(_, _, e)| e).sum();
        let singles = candidates.iter().filter(|(_, n, _)| *n == 1).count();
        for &(k, n, e) in candidates.iter() {
            let share = if evidence > 0.0 {
                e / evidence
            } else if n == 1 {
                1.0 / singles as f32
            } else {
                0.0
            };
            if share <= 0.0 || n == 0 {
                continue;
            }
            let w = CROSS_WEIGHT * share / (n as f32).sqrt();
            out.push((k, w));
        }
    }

    /// Fills `ids` with the index ids of `terms` and returns how many terms there were;
    /// `ids` is shorter when some term is not indexed.
    fn term_ids<'t>(&self, terms: impl Iterator<Item = &'t str>, ids: &mut Vec<u32>) -> usize {
        ids.clear();
        let mut n = 0;
        for t in terms {
            n += 1;
            ids.extend(self.index.term_id(t));
        }
        n
    }

    /// The number of units holding all of `n` terms whose indexed ids are `ids` (0 when
    /// one is not indexed, or there are none).
    fn df_of(&self, ids: &[u32], n: usize) -> usize {
        match ids {
            _ if ids.len() != n => 0,
            [] => 0,
            &[t] => self.index.doc_freq_of(t),
            ids => self.index.co_occurrence(ids),
        }
    }

    /// Adds the Chinese words an English query word (index term `stem`, as written `word`)
    /// translates to, for Chinese pages: the glossary's and the compiled-in tables' words
    /// read backwards, kept only where the corpus writes them (all their bigrams in one
    /// unit), sharing [`CROSS_WEIGHT`] by the same evidence as Chinese→English,
    /// `ln(1 + df)` (see [`Retriever::translations_of`]). A word's bigrams must match
    /// together and divide its share by the square root of their number.
    fn add_chinese(&self, stem: &str, word: &str, terms: &mut TermSet) {
        let glossary = self.glossary_zh.get(stem).into_iter().flatten();
        // Shortened from `'static` so it chains with the glossary's words.
        let tables = lexicon::chinese_for(stem).map::<&str, _>(|w| w);
        let mut seen: Vec<&str> = Vec::new();
        // (word, number of bigrams, evidence)
        let mut candidates: Vec<(&str, usize, f32)> = Vec::new();
        let mut ids: Vec<u32> = Vec::new();
        for zh in glossary.map(String::as_str).chain(tables) {
            if seen.contains(&zh) {
                continue;
            }
            seen.push(zh);
            let n = self.term_ids(han_bigram_slices(zh), &mut ids);
            let df = self.df_of(&ids, n);
            if df > 0 {
                candidates.push((zh, n, (df as f32).ln_1p()));
            }
        }
        let evidence: f32 = candidates.iter().map(|(_, _, e)| e).sum();
        for (zh, n, e) in candidates {
            let w = CROSS_WEIGHT * e / evidence / (n as f32).sqrt();
            terms.add_phrase(han_bigram_slices(zh), w, Some(word), &self.index);
        }
    }

    /// Finds transliterated names among runs of single characters (two or more of them name
    /// characters) that the lexicon
    /// could only read one by one (alone, a name's characters are ordinary words: 贾
    /// "merchant", 德 "virtue"). Matched segments are marked so those senses are dropped.
    /// Each skeleton tried costs one unit of `probes`; none are tried once it is spent.
    fn match_names(
        &self,
        exps: &[Segment<'_>],
        is_name: &mut [bool],
        terms: &mut TermSet,
        probes: &mut usize,
    ) {
        if self.names.is_empty() {
            return;
        }
        // Ordinary characters (not stopwords) join the run too: a name may begin or end
        // with one (胡格诺派 "Huguenots": 胡 and 派 are words of their own), and
        // `match_span` decides which sub-spans may hold them.
        let single = |e: &Segment<'_>| {
            let mut chars = e.word.chars();
            matches!((chars.next(), chars.next()),
                (Some(c), None) if is_translit_char(c) || (!e.stopword && has_reading(c)))
        };
        let translit = |e: &Segment<'_>| e.word.chars().all(is_translit_char);
        for run in stretches(exps.len(), |j| single(&exps[j])) {
            if exps[run.clone()].iter().filter(|e| translit(e)).count() >= 2 {
                self.match_span(&exps[run.clone()], &mut is_name[run], terms, probes);
            }
        }
    }

    /// Picks names in a span of single name characters: exact skeleton matches before
    /// near ones, longer before shorter, leftmost first, never overlapping. Sub-spans are
    /// at most [`MAX_NAME_CHARS`] long, so a span of n characters has fewer than
    /// n × MAX_NAME_CHARS of them, each probed once.
    fn match_span(
        &self,
        span: &[Segment<'_>],
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
                // A name of name characters; or a longer one (four or more, as long as a
                // near match needs) with at most half of them ordinary: in fewer, or with
                // more ordinary ones, the skeleton says too little to tell words from a name.
                let ordinary = part.iter().filter(|&&c| !is_translit_char(c)).count();
                if ordinary > 0 && (len < MIN_MIXED_NAME || 2 * ordinary > len) {
                    continue;
                }
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
        for (near, len, start, names) in found {
            if is_name[start..start + len].iter().any(|&n| n) {
                continue;
            }
            is_name[start..start + len]
                .iter_mut()
                .for_each(|n| *n = true);
            let word: String = chars[start..start + len].iter().collect();
            let share = 1.0 / names.len() as f32;
            terms.begin_word(false);
            if !near {
                terms.mark_literal();
            }
            for t in names {
                terms.add(&t, share, Some(&word), &self.index);
            }
            terms.end_word();
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
        let (scored, fields) = with_scratch(|scratch| {
            let triples = terms
                .iter()
                .map(|t| (t.term.as_str(), self.index.term_id(&t.term), t.weight));
            let fields = self.score_fields(triples.clone(), &mut scratch.field_score);
            let scored = self.score_terms(triples, &mut scratch.score, &mut scratch.chars);
            (scored, fields)
        });
        self.rank_scored(scored, &fields, k, min_score)
    }

    /// Each document's score on its naming fields (its unit of `fields`) for the query's
    /// terms, in document order. Character terms (`郡*`) stay out: they stand for many
    /// words, which a title would then seem to hold.
    fn score_fields<'t>(
        &self,
        terms: impl Iterator<Item = (&'t str, Option<u32>, f32)>,
        scratch: &mut bm25::ScoreScratch,
    ) -> Vec<(u32, f32)> {
        if self.fields.vocabulary_size() == 0 {
            return Vec::new();
        }
        self.fields.score_into(
            // A term no passage holds is in no field either (fields repeat passage text).
            terms.filter_map(|(term, id, w)| {
                Some((self.fields.term_id(term).filter(|_| id.is_some())?, w))
            }),
            scratch,
        )
    }

    /// Scores units for `(term, its index id, weight)` triples: a character term (`郡*`)
    /// stands for the character anywhere (see [`chars`]; no index term is one), any other
    /// term for itself.
    fn score_terms<'t>(
        &self,
        terms: impl Iterator<Item = (&'t str, Option<u32>, f32)> + Clone,
        score: &mut bm25::ScoreScratch,
        chars: &mut CharScratch,
    ) -> Vec<(u32, f32)> {
        let scored = self
            .index
            .score_into(terms.clone().filter_map(|(_, id, w)| Some((id?, w))), score);
        let mut scorer = CharScorer::new(&self.index, &self.char_bigrams);
        for (c, w) in terms.filter_map(|(term, _, w)| Some((char_of(term)?, w))) {
            scorer.add(c, w, chars);
        }
        CharScorer::merge(scored, chars)
    }

    /// [`Retriever::rank`] for units already scored, with each document's naming-field
    /// score (`fields`, in document order) added at [`FIELD_WEIGHT`]: a document scores as
    /// its best passage plus its fields, so it gets no more chances for having more
    /// passages, and a page named for the question's words outranks one that mentions them.
    fn rank_scored(
        &self,
        scored: Vec<(u32, f32)>,
        fields: &[(u32, f32)],
        k: usize,
        min_score: f32,
    ) -> Vec<Ranked> {
        // Best passage per document; units of one document are contiguous and ascending,
        // so one pass with a "current document" slot suffices.
        let mut best: Vec<Ranked> = Vec::with_capacity(scored.len().min(self.n_docs));
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
        // Both lists ascend by document: merge, a document matched by its fields alone
        // standing with its first passage.
        let mut candidates: Vec<(u32, f32)> = Vec::with_capacity(best.len());
        let mut passage_of: Vec<(u32, u32)> = Vec::with_capacity(best.len());
        let (mut i, mut j) = (0, 0);
        while i < best.len() || j < fields.len() {
            let b = best.get(i).map_or(u32::MAX, |r| r.doc);
            let f = fields.get(j).map_or(u32::MAX, |&(d, _)| d);
            let doc = b.min(f);
            let mut score = 0.0;
            let mut passage = 0;
            if b == doc {
                score += best[i].score;
                passage = best[i].passage;
                i += 1;
            }
            if f == doc {
                score += FIELD_WEIGHT * fields[j].1;
                j += 1;
            }
            if self.demoted.binary_search(&doc).is_ok() {
                score *= DEMOTED_WEIGHT;
            }
            if score >= min_score {
                candidates.push((doc, score));
                passage_of.push((doc, passage));
            }
        }
        let passage_of = |doc: u32| {
            passage_of
                .binary_search_by_key(&doc, |&(d, _)| d)
                .map_or(0, |i| passage_of[i].1)
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

    /// Whether the index terms `terms` (one alternative of a query word) are all in
    /// document `doc`'s title, and in few documents' titles ([`NAMING_SHARE`]): the
    /// question names that entry ("InsightFace 有多少 star"). The title alone: a summary's
    /// words are incidental (a summary's "approach" does not name its paper).
    fn names_document(&self, terms: &[u32], doc: u32) -> bool {
        let n_docs = self.fields.len();
        !terms.is_empty()
            && terms.iter().all(|&t| {
                let field_term = std::str::from_utf8(self.index.terms.term(t))
                    .ok()
                    .and_then(|term| self.fields.term_id(&format!("{TITLE_MARK}{term}")));
                field_term.is_some_and(|f| {
                    self.fields.doc_freq_of(f) * NAMING_SHARE <= n_docs
                        && self.fields.contains(f, doc)
                })
            })
    }

    /// Analyzes and ranks in one call, returning no hits for a question the site cannot
    /// answer. Each content word of the query (an English word or identifier; a Chinese
    /// word with its bigrams and translations; a name) weighs its specificity on this site:
    /// the IDF of its most specific indexed alternative, or the IDF of an absent term when
    /// the site has none (a word the site never uses is as specific as words get). A
    /// passage matches a word when it holds any of its alternatives (a phrase: all its
    /// terms). The question is answered when one of the best [`COVERAGE_DEPTH`] hits' passage
    /// matches at least
    /// [`MIN_COVERAGE`] of the total weight, and, when words the site never uses carry
    /// more than [`MAX_UNKNOWN`] of it, at least [`MIN_WORDS_IF_UNKNOWN`] of its words (or
    /// a name no dictionary has, as written: [`Word::literal`], or a word rare on the site:
    /// [`RARE_PASSAGES`]);
    /// then every hit stays (a lower one may answer another part). Both tests are shares
    /// and counts of the query's own words, so they hold across site sizes, where raw BM25
    /// scores do not: "香蕉面包的做法" on a research homepage shares only 做法 with it.
    pub fn search(&self, query: &str, k: usize, min_score: f32) -> (Vec<QueryTerm>, Vec<Ranked>) {
        self.search_covering(query, k, min_score, MIN_COVERAGE)
    }

    /// [`Retriever::search`] with another minimum coverage (0 keeps every hit).
    pub fn search_covering(
        &self,
        query: &str,
        k: usize,
        min_score: f32,
        min_coverage: f32,
    ) -> (Vec<QueryTerm>, Vec<Ranked>) {
        with_scratch(|scratch| {
            self.analyze_into(query, scratch);
            let set = &scratch.terms;
            // The terms' index ids were looked up as they were added.
            let triples = set
                .ids
                .iter()
                .zip(&set.terms)
                .map(|(&id, t)| (t.term.as_str(), id, t.weight));
            let fields = self.score_fields(triples.clone(), &mut scratch.field_score);
            let scored = self.score_terms(triples, &mut scratch.score, &mut scratch.chars);
            let covering = min_coverage > 0.0;
            let depth = if covering { k.max(COVERAGE_DEPTH) } else { k };
            let mut ranked = self.rank_scored(scored, &fields, depth, min_score);
            if covering && !ranked.is_empty() {
                self.word_weights(
                    set,
                    &mut scratch.weighed,
                    &mut scratch.weighed_alts,
                    &mut scratch.weighed_ids,
                );
                let (words, alts, ids) = (
                    &scratch.weighed,
                    &scratch.weighed_alts,
                    &scratch.weighed_ids,
                );
                let n = self.index.len();
                let total: f32 = words.iter().map(|w| w.weight).sum();
                // (share of the weight, number of words) a hit's passage matches; a literal
                // name counts as enough words by itself.
                let coverage = |hit: &Ranked| {
                    let Ok(unit) = self.units.binary_search(&(hit.doc, hit.passage)) else {
                        return (0.0, 0);
                    };
                    let holds = |&(a, b, _): &(u32, u32, u32)| {
                        ids[a as usize..b as usize]
                            .iter()
                            .all(|&t| self.index.contains(t, unit as u32))
                    };
                    let (matched, count) = words.iter().fold((0.0, 0), |(m, c), w| {
                        let word_alts = &alts[w.alts.0 as usize..w.alts.1 as usize];
                        // The fewest passages among the word's alternatives this one holds.
                        let held = word_alts
                            .iter()
                            .filter(|alt| holds(alt))
                            .map(|&(_, _, df)| df as usize)
                            .min();
                        let names = || {
                            w.written
                                && word_alts.iter().any(|&(a, b, _)| {
                                    self.names_document(&ids[a as usize..b as usize], hit.doc)
                                })
                        };
                        match held {
                            None => (m, c),
                            Some(df)
                                if w.literal
                                    || (df * RARE_PASSAGES <= n
                                        && w.weight >= RARE_MIN_SHARE * total)
                                    || names() =>
                            {
                                (m + w.weight, c + MIN_WORDS_IF_UNKNOWN)
                            }
                            Some(_) => (m + w.weight, c + 1),
                        }
                    });
                    (matched / total, count)
                };
                // Words the site never uses anywhere (no alternative indexed).
                let unknown: f32 = words
                    .iter()
                    .filter(|w| w.alts.0 == w.alts.1)
                    .map(|w| w.weight)
                    .sum();
                let mostly_unknown = unknown > MAX_UNKNOWN * total;
                let answerable = total <= 0.0
                    || ranked.iter().take(COVERAGE_DEPTH).any(|hit| {
                        let (share, count) = coverage(hit);
                        share >= min_coverage && (!mostly_unknown || count >= MIN_WORDS_IF_UNKNOWN)
                    });
                if !answerable {
                    ranked.clear();
                }
            }
            ranked.truncate(k);
            let terms = std::mem::take(&mut scratch.terms.terms);
            (terms, self.with_versions(ranked, k))
        })
    }
}

/// Runs of two or more single-character segments in a row (not matched as names), without
/// the stopwords at their ends, as `(first, end)` indexes into `expansions`: what
/// segmentation leaves of a word no dictionary has, such as a person's name.
fn lone_spans(expansions: &[Segment<'_>], is_name: &[bool], out: &mut Vec<(usize, usize)>) {
    let lone = |k: usize| !is_name[k] && expansions[k].word.chars().nth(1).is_none();
    out.clear();
    for run in stretches(expansions.len(), lone) {
        let (mut start, mut end) = (run.start, run.end);
        while start < end && expansions[start].stopword {
            start += 1;
        }
        while end > start && expansions[end - 1].stopword {
            end -= 1;
        }
        if end - start >= 2 {
            out.push((start, end));
        }
    }
}

/// The maximal runs of consecutive indexes below `len` at which `keep` holds, in order:
/// how the name matchers cut a question's segments into the stretches they try.
fn stretches(
    len: usize,
    keep: impl Fn(usize) -> bool,
) -> impl Iterator<Item = std::ops::Range<usize>> {
    let mut i = 0;
    std::iter::from_fn(move || {
        while i < len && !keep(i) {
            i += 1;
        }
        let start = i;
        while i < len && keep(i) {
            i += 1;
        }
        (start < i).then_some(start..i)
    })
}

/// The weight of each bigram of the Chinese word `word`: its bigrams share one word's
/// weight, as its translations do. They overlap and a page that writes the word has them
/// all, so they are one piece of evidence, not several: weighed 1 each, a word of four
/// characters (杰克逊维尔 has four bigrams) counted four times as much as a word of two, and
/// the name an article repeats in every paragraph drowned the words of the question that
/// tell its paragraphs apart (which of them says who sang the anthem at the Super Bowl).
fn bigram_share(word: &str) -> f32 {
    let bigrams = word.chars().count().saturating_sub(1).max(1);
    1.0 / bigrams as f32
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stretches_are_the_maximal_runs_where_the_test_holds() {
        let keep = [false, true, true, false, true, false, false, true];
        let found: Vec<_> = stretches(keep.len(), |i| keep[i]).collect();
        assert_eq!(found, [1..3, 4..5, 7..8]);
        assert_eq!(stretches(0, |_| true).count(), 0);
        assert_eq!(stretches(3, |_| false).count(), 0);
    }

    /// A site of one-passage pages, no glossary.
    pub(super) fn site(pages: &[&str]) -> Retriever {
        Retriever::build(pages.iter().map(|p| [p.to_string()]), &[])
    }

    fn weight(terms: &[QueryTerm], term: &str) -> f32 {
        terms
            .iter()
            .find(|t| t.term == term)
            .map_or(0.0, |t| t.weight)
    }

    #[test]
    fn a_words_translations_share_the_cross_weight_and_phrases_split_by_sqrt_length() {
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
        let third = CROSS_WEIGHT / 3.0;
        assert!((weight(&terms, "alpha") - third).abs() < 1e-6);
        assert!((weight(&terms, "beta") - third).abs() < 1e-6);
        assert!((weight(&terms, "gamma") - third / 2f32.sqrt()).abs() < 1e-6);
        assert!((weight(&terms, "delta") - third / 2f32.sqrt()).abs() < 1e-6);
        // The Han bigrams stay, for Chinese documents, sharing one word's weight.
        assert_eq!(weight(&terms, "测试"), 0.5);
        assert!(
            terms
                .iter()
                .filter(|t| t.from.as_deref() == Some("测试词"))
                .count()
                == 4
        );
    }

    #[test]
    fn translations_share_by_corpus_evidence_and_absent_ones_get_nothing() {
        let glossary = [(
            "测试词".to_string(),
            vec![
                "alpha".to_string(),
                "beta".to_string(),
                "gamma delta".to_string(),
            ],
        )];
        // alpha in 3 units, beta in 1, gamma and delta nowhere.
        let r = Retriever::build(
            [
                ["alpha".to_string()],
                ["alpha".to_string()],
                ["alpha beta".to_string()],
            ],
            &glossary,
        );
        let terms = r.analyze_query("测试词");
        // ln(1+3) = 2·ln 2 against ln(1+1) = ln 2: two thirds and one third of the
        // cross-language weight.
        let (alpha, beta) = (CROSS_WEIGHT * 2.0 / 3.0, CROSS_WEIGHT / 3.0);
        assert!((weight(&terms, "alpha") - alpha).abs() < 1e-6, "{terms:?}");
        assert!((weight(&terms, "beta") - beta).abs() < 1e-6, "{terms:?}");
        assert_eq!(weight(&terms, "gamma"), 0.0);
        assert_eq!(weight(&terms, "delta"), 0.0);
    }

    #[test]
    fn with_no_translation_in_the_corpus_they_share_equally() {
        let glossary = [(
            "测试词".to_string(),
            vec!["alpha".to_string(), "beta".to_string()],
        )];
        let r = Retriever::build([["unrelated".to_string()]], &glossary);
        let terms = r.analyze_query("测试词");
        assert_eq!(weight(&terms, "alpha"), CROSS_WEIGHT / 2.0);
        assert_eq!(weight(&terms, "beta"), CROSS_WEIGHT / 2.0);
    }

    #[test]
    fn a_compound_whose_senses_the_site_never_uses_is_translated_by_its_parts() {
        // The dictionary's 触发器 is "flip-flop"; 触发 is "trigger".
        let r = site(&["a flip-flop circuit", "create a trigger on the table"]);
        let terms = r.analyze_query("触发器");
        assert_eq!(
            weight(&terms, "trigger"),
            0.0,
            "flip-flop is on the site: {terms:?}"
        );
        let r = site(&["the table has columns", "create a trigger on the table"]);
        let terms = r.analyze_query("触发器怎么写");
        assert!(weight(&terms, "trigger") > 0.0, "{terms:?}");
        let (_, ranked) = r.search("触发器怎么写", 2, 0.0);
        assert_eq!(ranked.first().map(|h| h.doc), Some(1), "{ranked:?}");
        // A lone character's senses stand for no part: 器 ("device") is not added.
        assert_eq!(weight(&terms, "devic"), 0.0, "{terms:?}");
    }

    #[test]
    fn question_and_filler_words_add_no_bigrams() {
        let r = Retriever::build([["卸载工具".to_string()]], &[]);
        let terms = r.analyze_query("请问卸载这个工具是怎么做的话");
        for filler in ["请问", "问卸", "是怎", "怎么", "这个", "的话", "做的"] {
            assert_eq!(weight(&terms, filler), 0.0, "{filler}: {terms:?}");
        }
        assert_eq!(weight(&terms, "卸载"), 1.0);
        assert_eq!(weight(&terms, "工具"), 1.0);
    }

    #[test]
    fn a_query_naming_an_identifier_finds_the_page_that_writes_it() {
        let r = site(&["v v v v v else", "use v-if to render conditionally"]);
        let (_, ranked) = r.search("v-if 怎么用", 2, 0.0);
        assert_eq!(ranked[0].doc, 1, "{ranked:?}");
        let (_, ranked) = r.search("sys_platform", 2, 0.0);
        assert!(ranked.is_empty());
    }

    #[test]
    fn english_questions_find_chinese_pages() {
        let r = site(&[
            "今天天气很好，适合出门。",
            "如何安装这个软件：先下载，再安装。",
        ]);
        let (terms, ranked) = r.search("How do I install it?", 2, 0.0);
        assert_eq!(ranked.first().map(|h| h.doc), Some(1), "{terms:?}");
        // 安装 is the one Chinese word for "install" this site writes: it takes the whole
        // cross-language weight (one bigram, so no √ split).
        assert!(
            (weight(&terms, "安装") - CROSS_WEIGHT).abs() < 1e-6,
            "{terms:?}"
        );
        assert!(
            terms.iter().all(|t| t.term == "instal" || t.term == "安装"),
            "{terms:?}"
        );
        // A site without Chinese text gets no Chinese terms.
        let english = Retriever::build([["install".to_string()]], &[]);
        assert_eq!(english.analyze_query("install").len(), 1);
    }

    #[test]
    fn on_a_bilingual_site_each_language_ranks_its_own_page_first_and_the_other_next() {
        let r = site(&[
            "How to install the package manager on Windows.",
            "如何在 Windows 上安装包管理器。",
            "Cooking rice in a pot takes twenty minutes.",
            "用锅煮米饭需要二十分钟。",
        ]);
        let order = |q: &str| -> Vec<u32> { r.search(q, 4, 0.0).1.iter().map(|h| h.doc).collect() };
        assert_eq!(order("install the package manager")[..2], [0, 1]);
        assert_eq!(order("安装包管理器")[..2], [1, 0]);
        assert_eq!(order("how long to cook rice")[..2], [2, 3]);
        assert_eq!(order("煮米饭要多久")[..2], [3, 2]);
    }

    #[test]
    fn a_hit_brings_its_other_language_version_right_after_it() {
        let r = site(&[
            "The library lends books to students and teachers for two weeks.",
            "Students can borrow computers and cameras from the office.",
            "图书馆向学生和教师借出图书，期限两周。",
            "学生可以从办公室借电脑和相机。",
        ]);
        assert_eq!(r.versions(), &[2, 3, 0, 1]);
        let (_, hits) = r.search("can students borrow books from the library", 4, 0.0);
        let order: Vec<u32> = hits.iter().map(|h| h.doc).collect();
        assert_eq!(order, [0, 2, 1, 3]);
        // The version is scored as its page, so scores still descend.
        assert_eq!(hits[1].score, hits[0].score);
        assert!(hits.windows(2).all(|w| w[0].score >= w[1].score));
        // At most k: the version takes the place of the last hit.
        let (_, two) = r.search("library books for students", 2, 0.0);
        assert_eq!(two.iter().map(|h| h.doc).collect::<Vec<_>>(), [0, 2]);
        // One version of each page, for a prompt.
        let once = r.one_version_each(hits, 2);
        assert_eq!(once.iter().map(|h| h.doc).collect::<Vec<_>>(), [0, 1]);
    }

    #[test]
    fn a_name_no_dictionary_has_is_matched_as_written() {
        let r = site(&[
            "韩国经济学家李会晟自2015年起担任委员会主席。",
            "元英宗是元仁宗的儿子，统治时间仅有两年。",
            "英国的经济学家研究国籍与移民。",
        ]);
        // 会 is a stopword and 李, 晟 single words: only the name as written finds the page.
        let (_, hits) = r.search("李会晟的国籍是？", 3, 0.0);
        assert_eq!(hits.first().map(|h| h.doc), Some(0), "{hits:?}");
        // 登基 is nowhere on the site; the name still answers.
        let (_, hits) = r.search("元英宗何时登基？", 3, 0.0);
        assert_eq!(hits.first().map(|h| h.doc), Some(1), "{hits:?}");
    }

    #[test]
    fn a_transliterated_name_may_hold_ordinary_characters() {
        let r = site(&[
            "The Huguenots were French Protestants who settled abroad.",
            "Lindisfarne are a folk-rock group from Tyneside.",
            "Many settlers arrived from abroad in that century.",
        ]);
        // 胡 and 派 are words of their own ("beard", "faction"), 法 too ("law").
        let (terms, hits) = r.search("胡格诺派在哪里定居？", 3, 0.0);
        assert_eq!(hits.first().map(|h| h.doc), Some(0), "{terms:?}");
        let (terms, hits) = r.search("林迪斯法恩是什么乐队？", 3, 0.0);
        assert_eq!(hits.first().map(|h| h.doc), Some(1), "{terms:?}");
        // Three characters, one of them ordinary, are too few to be sure of a name: 胡格诺
        // spells Hogan exactly, but 胡 is "beard".
        let r = Retriever::build([["Ben Hogan won the open.".to_string()]], &[]);
        let analysis = r.analyze("胡格诺");
        assert!(
            !analysis.terms.iter().any(|t| t.term == "hogan"),
            "{analysis:?}"
        );
    }

    #[test]
    fn a_transliterated_name_of_the_site_answers_on_its_own() {
        let r = site(&[
            "Lady Gaga sang at the halftime show of the final.",
            "The defense recovered the ball in the third quarter.",
            "Tickets for the final were sold out in March.",
        ]);
        // 女神 ("goddess") is nowhere on the site, but 卡卡 is its Gaga.
        let (_, hits) = r.search("女神卡卡唱了什么歌？", 3, 0.0);
        assert_eq!(hits.first().map(|h| h.doc), Some(0), "{hits:?}");
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
    fn a_chinese_words_bigrams_share_one_words_weight() {
        let r = Retriever::build([["超级市场播放国歌".to_string()]], &[]);
        let terms = r.analyze_query("超级市场国歌");
        for bigram in ["超级", "级市", "市场"] {
            assert!(
                (weight(&terms, bigram) - 1.0 / 3.0).abs() < 1e-6,
                "{terms:?}"
            );
        }
        assert_eq!(weight(&terms, "国歌"), 1.0);
        // Where the two words meet: half a word.
        assert_eq!(weight(&terms, "场国"), CROSS_BIGRAM_WEIGHT);
    }

    #[test]
    fn a_long_word_repeated_on_sibling_pages_does_not_drown_the_other_word() {
        // An article's pages all name its subject (a word of four characters); only one
        // has the other word of the question.
        let r = site(&[
            "超级市场开门了，超级市场很大。",
            "开幕时歌手唱了国歌。",
            "超级市场卖水果。",
            "超级市场在河边。",
        ]);
        let (_, hits) = r.search("谁在超级市场唱了国歌？", 3, 0.0);
        assert_eq!(hits.first().map(|h| h.doc), Some(1), "{hits:?}");
    }

    #[test]
    fn a_passage_with_more_of_the_words_outranks_one_with_two_of_them_side_by_side() {
        let r = site(&[
            "河流污染很严重。",
            "河流，污染，治理，都要认真谈。",
            "河流很长。",
            "今天天气好。",
        ]);
        let (_, hits) = r.search("河流污染治理", 3, 0.0);
        assert_eq!(hits.first().map(|h| h.doc), Some(1), "{hits:?}");
        // Written together, two words still outrank the same two words apart.
        let (_, hits) = r.search("河流污染", 3, 0.0);
        assert_eq!(hits.first().map(|h| h.doc), Some(0), "{hits:?}");
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
        // Segmentation probes the dictionary at most once per prefix length, for the first
        // MAX_ANALYSED_HAN_CHARS Han characters only.
        let analysed = chars.min(MAX_ANALYSED_HAN_CHARS);
        assert!(probes <= 8 * analysed, "{probes} probes for {chars} chars");
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
    fn a_single_character_word_matches_the_character_in_a_longer_word() {
        // Both pages name the city; only the second writes 郡 "county", in a name of its
        // own (杜瓦尔郡), so no bigram of the question is on it. The first is shorter, and
        // wins whenever the character does not count.
        let r = site(&[
            "杰克逊维尔的河流很长。",
            "杰克逊维尔位于杜瓦尔郡，是一座大城市。",
        ]);
        let q = "杰克逊维尔在哪个郡？";
        let analysis = r.analyze(q);
        let term = analysis.terms.iter().find(|t| t.term == "郡*");
        assert_eq!(
            term.map(|t| t.weight),
            Some(CHAR_WEIGHT),
            "{:?}",
            analysis.terms
        );
        let (_, hits) = r.search(q, 2, 0.0);
        assert_eq!(hits.first().map(|h| h.doc), Some(1), "{:?}", analysis.terms);
        // A character standing alone in the question keeps its own exact term.
        let quoted = r.analyze_query("“郡”");
        assert!(quoted.iter().any(|t| t.term == "郡"), "{quoted:?}");
        assert!(!quoted.iter().any(|t| t.term == "郡*"), "{quoted:?}");
        // Ranking analysed terms matches the character too.
        let hits = r.rank(&analysis.terms, 2, 0.0);
        assert_eq!(hits.first().map(|h| h.doc), Some(1));
        // And the character term counts the one page writing it (the rewrite's ceiling).
        assert_eq!(r.doc_freq("郡*"), 1);
        assert_eq!(r.doc_freq("杰克"), 2);
    }

    #[test]
    fn han_text_past_the_budget_is_matched_by_its_bigrams_only() {
        let r = site(&["人脸识别 face recognition", "苹果派的做法"]);
        let filler = "的".repeat(MAX_ANALYSED_HAN_CHARS);
        // Within the budget, 人脸识别 is a word with its English translation...
        let near = r.analyze(&format!("人脸识别{filler}"));
        assert!(
            near.terms.iter().any(|t| t.term == "recognit"),
            "{:?}",
            near.terms
        );
        // ...past it, only its bigrams: the Chinese page still matches, nothing is
        // translated, and the analysed part's words come first.
        let far = r.analyze(&format!("{filler}人脸识别"));
        assert!(
            far.terms.iter().all(|t| t.from.is_none()),
            "{:?}",
            far.terms
        );
        assert!(far.terms.iter().any(|t| t.term == "识别"));
        let (_, hits) = r.search_covering(&format!("{filler}人脸识别"), 2, 0.0, 0.0);
        assert_eq!(hits.first().map(|h| h.doc), Some(0));
    }

    #[test]
    fn names_are_still_found_inside_long_runs_of_name_characters() {
        // The corpus is built here so the expected name is certain.
        let r = Retriever::build([["Jared Allen met Norman".to_string()]], &[]);
        let terms = r.analyze_query(&format!("{}贾里德{}", "临".repeat(200), "临".repeat(600)));
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

    #[test]
    fn a_translation_matches_the_irregular_forms_of_its_word() {
        // 演唱 translates to "sing"; the page says "sang".
        let r = site(&[
            "The choir sang at the opening.",
            "The stadium opened in 1990.",
        ]);
        let (_, hits) = r.search("演唱", 3, 0.0);
        assert_eq!(hits.iter().map(|h| h.doc).collect::<Vec<_>>(), vec![0]);
    }

    /// Docs-site questions name things the way users say them (同时 "at once", 账号密码
    /// "account and password", 公共仓库 "public repository"), the pages the way docs
    /// write them (concurrently, credentials, public registry). The software lexicon
    /// carries those senses, so the answering page wins over one sharing a looser word.
    #[test]
    fn software_paraphrases_reach_the_words_docs_use() {
        let site = |pages: [&str; 2]| Retriever::build(pages.map(|p| [p.to_string()]), &[]);
        let cases = [
            (
                "同时跑好几个命令",
                [
                    "It is safe to run multiple commands concurrently.",
                    "Each command prints the time it took to run.",
                ],
            ),
            (
                "账号密码会被保存吗",
                [
                    "Credentials are never saved to the lockfile.",
                    "Your account page shows your plan.",
                ],
            ),
            (
                "怎么防止误传到公共仓库",
                [
                    "Preventing accidental uploads to a public registry.",
                    "Shared helpers live in the common module.",
                ],
            ),
        ];
        for (query, pages) in cases {
            let (_, hits) = site(pages).search(query, 2, 0.0);
            assert_eq!(hits.first().map(|h| h.doc), Some(0), "{query}: {hits:?}");
        }
    }

    /// 别的 is "other" first and "else" second: with "other" an English stopword, "else"
    /// alone would carry the word. A word whose first sense is grammatical is skipped as a
    /// stopword is, on either side of the index (its bigram too).
    #[test]
    fn a_word_whose_first_sense_is_grammatical_is_not_expanded() {
        let r = Retriever::build(
            [["The else branch runs on other systems. 别的系统".to_string()]],
            &[],
        );
        let terms = r.analyze_query("别的系统");
        assert_eq!(weight(&terms, "els"), 0.0, "{terms:?}");
        assert_eq!(weight(&terms, "别的"), 0.0, "{terms:?}");
        assert!(weight(&terms, "system") > 0.0, "{terms:?}");
        assert_eq!(weight(&terms, "系统"), 1.0, "{terms:?}");
    }

    /// A site of `n` passages: one about an anthem, the others all "effective".
    fn anthem_site(n: usize) -> Retriever {
        let mut docs = vec![["The national anthem opened the final game.".to_string()]];
        for i in 1..n {
            docs.push([format!(
                "Page {i} sets the effective options of module {i}."
            )]);
        }
        Retriever::build(docs, &[])
    }

    #[test]
    fn one_word_rare_on_a_large_site_answers_a_mostly_unknown_question() {
        let large = anthem_site(4 * RARE_PASSAGES);
        // A word the site never uses, and one it has in a single passage.
        let (_, hits) = large.search("quixotic anthem", 3, 0.0);
        assert_eq!(hits.first().map(|h| h.doc), Some(0));
        // A word on most of its pages is no such evidence.
        assert!(large.search("quixotic effective", 3, 0.0).1.is_empty());
        // Beside two unknown words, the rare one is an incidental match.
        assert!(large.search("quixotic zebras anthem", 3, 0.0).1.is_empty());
        // On a small site every word is in a large share of its passages.
        let small = anthem_site(RARE_PASSAGES / 4);
        assert!(small.search("quixotic anthem", 3, 0.0).1.is_empty());
    }

    /// A short page named for stashing, and a long manual with one passage holding the
    /// same words in fewer others (which gives it the higher passage score).
    fn stash_site() -> Vec<(String, Vec<String>)> {
        let stash = (
            "git-stash\nStash the changes in a dirty working directory away".to_string(),
            vec![
                "Stash the changes in a dirty working directory away when you want to \
                 record the current state and go back to a clean one."
                    .to_string(),
                "Options: --include-untracked, --keep-index, --quiet.".to_string(),
            ],
        );
        let mut manual = vec!["The user manual covers branches, merges and history.".to_string()];
        manual.extend((0..40).map(|i| format!("Chapter {i}: commits, trees and blobs.")));
        manual.push(
            "Stash the changes in a dirty working directory away to record the current \
             state and go back to a clean one."
                .to_string(),
        );
        let manual = ("Git User Manual\nBranches\nHistory".to_string(), manual);
        // Other pages, so the names' IDF is a site's rather than two pages'.
        let others = (0..20).map(|i| {
            let name = format!("git-command{i}\nDo thing {i} to the repository");
            (name.clone(), vec![name])
        });
        [manual, stash].into_iter().chain(others).collect()
    }

    #[test]
    fn a_page_named_for_the_question_beats_the_same_words_deep_in_a_long_page() {
        let pages = stash_site();
        let fielded = Retriever::build_fielded(pages.clone(), &[]);
        let (_, hits) = fielded.search("stash changes", 2, 0.0);
        assert_eq!(hits.first().map(|h| h.doc), Some(1), "{hits:?}");
        // Without the naming fields the long page's best passage wins: the field is
        // what decides it.
        let flat = Retriever::build(pages.into_iter().map(|(_, p)| p), &[]);
        let (_, hits) = flat.search("stash changes", 2, 0.0);
        assert_eq!(hits.first().map(|h| h.doc), Some(0), "{hits:?}");
    }

    #[test]
    fn a_document_gains_nothing_from_more_passages() {
        let answer = "Rebase replays commits onto another base.".to_string();
        // The same page twice, once with 198 more passages that each hold a query word.
        let padded: Vec<String> = std::iter::once(answer.clone())
            .chain((0..198).map(|i| format!("Section {i} mentions commits once.")))
            .collect();
        let pages = vec![
            (
                "Rebasing".to_string(),
                vec![answer.clone(), "See also merge.".to_string()],
            ),
            ("Rebasing".to_string(), padded),
        ];
        let r = Retriever::build_fielded(pages, &[]);
        let (_, hits) = r.search("rebase commits", 2, 0.0);
        assert_eq!(hits.len(), 2, "{hits:?}");
        let (short, long) = (hits[0], hits[1]);
        assert_eq!(
            (short.doc, long.doc),
            (0, 1),
            "the shorter page keeps its place"
        );
        assert!((short.score - long.score).abs() < 1e-5, "{hits:?}");
    }

    #[test]
    fn a_question_naming_an_entry_returns_it_whatever_else_it_asks() {
        // A homepage whose project entry keeps its star count as a number: "star" is a
        // word the site never writes, and carries most of the question's weight.
        let mut docs: Vec<(String, Vec<String>)> = vec![(
            "InsightFace".to_string(),
            vec!["InsightFace\n2D and 3D face analysis project".to_string()],
        )];
        docs.extend((0..3).map(|i| {
            (
                format!("Face paper {i}"),
                vec![format!(
                    "Face paper {i}\nCode in the InsightFace repository."
                )],
            )
        }));
        docs.extend((0..26).map(|i| {
            (
                format!("Paper {i}"),
                vec![format!(
                    "Paper {i}\nVision language pretraining, topic {i}."
                )],
            )
        }));
        let fielded = Retriever::build_fielded(docs.clone(), &[]);
        let (_, hits) = fielded.search("InsightFace 有多少 star", 3, 0.0);
        assert_eq!(hits.first().map(|h| h.doc), Some(0), "{hits:?}");
        // Without naming fields the no-answer rule refuses it.
        let flat = Retriever::build(docs.into_iter().map(|(_, p)| p), &[]);
        assert!(flat.search("InsightFace 有多少 star", 3, 0.0).1.is_empty());
        // A word many entries are named with is no such evidence.
        assert!(fielded.search("paper quixotic zebras", 3, 0.0).1.is_empty());
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
