//! Retrieval: query analysis with Chinese→English expansion, and BM25 ranking.
//!
//! [`Retriever`] owns an index over numbered units (passages). Callers map units back to
//! their documents; [`Retriever::search`] does that for units grouped by document.
//!
//! This file holds the retriever (building, assembling from a prebuilt index, its parts)
//! and the query's term set; `analysis` turns a question into weighted terms (segmenting,
//! translating, matching names), `ranking` turns terms into ranked documents (passages,
//! naming fields, the no-answer rule). Below them: `bm25` (the inverted index), `chars`
//! (a Chinese character anywhere), `tokenize`, `lexicon` and its tables (`dict`, `table`),
//! `translit` and `compound_names` (names), `versions` (a bilingual site's page pairs).

mod analysis;
mod bm25;
mod chars;
mod compound_names;
mod dict;
mod dict_format;
mod dict_names;
mod lexicon;
mod ranking;
mod table;
mod tokenize;
mod translit;
mod versions;
mod zh_stopwords;

#[cfg(test)]
pub(crate) use bm25::Postings;
pub(crate) use bm25::{average_length, idf, Bm25Index, Bm25Params, PackedPostings, TermTable};
use bm25::{top_k, Bm25Builder};
use chars::{char_of, char_term, CharBigrams, CharScorer, CharScratch};
use lexicon::Segment;
pub use lexicon::{is_zh_stopword, Lexicon};
use rustc_hash::FxHashMap;
use serde::Serialize;
use std::hash::BuildHasher;
pub(crate) use tokenize::nth_char_start;
use tokenize::{compounds, han_bigram_slices, run_spans, two_part_identifiers};
pub use tokenize::{fold_char, is_han, runs, Analyzer, Script};
pub use translit::MAX_NAME_CHARS;
use translit::{han_skeleton, has_reading, is_translit_char, NameCounter, NameMatcher};
pub use versions::NONE as NO_VERSION;

/// The version of the text analysis (tokenizer, stopwords, stemming, bigrams, names): bump
/// it with any change to the terms a text or a query yields. It enters the prebuilt
/// index's analysis fingerprint ([`crate::index::analysis_fingerprint`], with the bytes of
/// the data files), so an index from a binary that analysed text differently is refused.
pub const ANALYSIS_VERSION: u32 = 6;

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

/// Most Latin words in a row, all stopwords, that a Chinese question may quote as names
/// ("where 函数" has one, "用 for in 遍历" two): a longer run is an English phrase quoted
/// whole (an error message), whose stopwords are English.
pub const MAX_KEYWORD_RUN: usize = 2;

/// A quoted keyword's weight ([`MAX_KEYWORD_RUN`]): the naming fields alone hold it, so
/// its field score counts in full ([`FIELD_WEIGHT`] undone), as a word matched in a
/// passage would.
pub const KEYWORD_WEIGHT: f32 = 1.0 / FIELD_WEIGHT;

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

/// The weight of two words of the question joined into one term the site writes
/// ("row id" → `rowid`; see `Retriever::add_joined_words`): half a word, beside the two
/// words that still count on their own.
pub const JOINED_WEIGHT: f32 = 0.5;

/// What joins two words into the identifier a question may name with a space between
/// them (see [`JOINED_WEIGHT`]): `git-commit`, `unique_together`.
const IDENTIFIER_JOINS: [char; 2] = ['-', '_'];

/// The longest word joined with another (see [`JOINED_WEIGHT`]), in bytes.
const MAX_JOINED_PART: usize = 24;

/// How much a document's naming-field score counts beside its best passage's. Measured
/// on the real-site dev sets (docs/evaluation.md): 0.3 and 0.5 lift every site by
/// 0.02–0.06 nDCG@10; from 0.8 English questions fall back below no fields at all, as
/// titles crowd out the passage that answers.
pub const FIELD_WEIGHT: f32 = 0.3;

/// How much a document's next best passage counts beside the one before it: a document
/// scores as its best passage plus `0.3 ×` its second, `0.09 ×` its third and so on over
/// [`NEXT_PASSAGES`] more (then its naming fields, [`FIELD_WEIGHT`]). A page that answers
/// the question in several of its sections is about it more surely than one that matches
/// it once in passing, as Callan (SIGIR 1994) found combining passage-level evidence; the
/// weights fall geometrically, so the next passages add at most 0.43 × the best one's
/// score and a page of 200 passages gains nothing over one of 5 that matches as well.
/// Measured on the real-site dev sets (docs/evaluation.md): 0.15, 0.25 and 0.4 for the
/// second passage alone, and 0.3 and 0.4 falling over four, lifted every site's mean.
pub const NEXT_PASSAGE_WEIGHT: f32 = 0.3;

/// How many passages after its best one a document's score reads
/// ([`NEXT_PASSAGE_WEIGHT`]).
pub const NEXT_PASSAGES: usize = 4;

/// How a document's passages make its score.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DocScore {
    /// Its best passage and its next few ([`NEXT_PASSAGE_WEIGHT`]): for a visitor's
    /// question or the model's rewrite of it, whose few words a page that answers in
    /// several sections is about.
    Passages,
    /// Its best passage alone: for a query that is itself a passage (the model's
    /// hypothetical answer, [`crate::search::Expansion`]), each of whose many words is on
    /// many pages, so that summed over a long page's sections they would measure how much
    /// of that vocabulary the page covers rather than whether it says what the passage
    /// says; and for how well a question matches the site at all (the chat's rewrite
    /// trigger, whose confidence is over the most one passage could score). Measured in
    /// docs/evaluation.md.
    BestPassage,
}

/// The share of its score a demoted document (release notes) keeps: half, so the notes
/// outrank the page about what they mention only when they match twice as well.
pub const DEMOTED_WEIGHT: f32 = 0.5;

/// How much a page's standing on its site (how many other pages link to it, the
/// knowledge base's `linked_from`) moves its score: each document's score is multiplied
/// by `1 + LINK_WEIGHT · n / (n + m)` for `n` linking pages, `m` the site's median (at
/// least 1), over the same for a median page. So a typical page keeps its score, the most
/// linked gain under 5 % and a page none links to loses under 5 % (on a site whose median
/// page no page links to, the most linked gain under 10 % and the rest keep theirs), and
/// a document nobody counted for stands as the median. A query-independent prior in the
/// saturating form Craswell, Robertson, Zaragoza and Taylor (SIGIR 2005) found for link
/// counts: it breaks near-ties and cannot let a page's links outweigh its text, however
/// many an API reference's generated signatures give one type (Rust's `__m128i`: 2,393
/// pages). The weight and form were measured on the real-site dev sets
/// (docs/evaluation.md).
pub const LINK_WEIGHT: f32 = 0.1;

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

/// The factor a document's score takes when the question names it: every distinctive
/// word of its title (in few documents' titles, [`NAMING_SHARE`], and neither a bare
/// number, as a section's "6.1", nor an identifier whose parts are its words, `git-mv`) is
/// among the query's terms. An API reference's page is named for
/// its subject (`Timers`, `file`, `ATTACH DATABASE`), and a question that says the whole
/// name asks about it more surely than one whose words its passages share; a title's
/// boilerplate (a man page's "Manual Page", in every title) is not distinctive, so it need
/// not be said. Measured on the real-site dev sets (docs/evaluation.md).
pub const NAMED_WEIGHT: f32 = 1.15;

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

    /// A mark of the alternatives added so far, for [`TermSet::word_indexed_since`].
    fn alt_mark(&self) -> usize {
        self.alts.len()
    }

    /// Whether some alternative of the word being collected, added since `mark`, has every
    /// term indexed.
    fn word_indexed_since(&self, mark: usize) -> bool {
        match (self.in_word, self.words.len()) {
            (true, n) if n > 0 => {
                let first = (self.words[n - 1].first_alt as usize).max(mark);
                (first..self.alts.len()).any(|a| {
                    let start = self.alts[a] as usize;
                    let stop = self
                        .alts
                        .get(a + 1)
                        .map_or(self.alt_terms.len(), |&next| next as usize);
                    self.alt_terms[start..stop]
                        .iter()
                        .all(|&i| self.ids[i as usize].is_some())
                })
            }
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
    /// The document's score: its best passages' BM25 scores and its naming fields', as
    /// [`Retriever::rank`] weighs them.
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
    /// Whether unit `i` is passage 0 of document `i` for every `i` (one passage per
    /// document), so ranking can skip grouping units into documents.
    units_are_docs: bool,
    n_docs: usize,
    /// Whether any passage has Chinese text (else English words are not expanded).
    has_han: bool,
    /// English term → the glossary's Chinese words translating to it.
    glossary_zh: FxHashMap<String, Vec<String>>,
    /// Each document's version in the other language ([`versions::NONE`] for none); empty
    /// on a site without Chinese text.
    versions: Vec<u32>,
    /// Whether each document is on the Chinese side of its site: kept from pairing when the
    /// pairs were made here; for pairs read from a prebuilt index, worked out (one pass over
    /// the postings) the first time a question brings a pair, so loading pays nothing.
    chinese: std::sync::OnceLock<Vec<bool>>,
    /// Each document's number of distinctive title words ([`NAMED_WEIGHT`]), counted on
    /// the first question (one pass over the titles' words), so loading pays nothing.
    title_words: std::sync::OnceLock<Vec<u16>>,
    /// Each Han character → the indexed bigrams holding it (see [`chars`]).
    char_bigrams: CharBigrams,
    /// Documents that mention many things in passing (release notes), ascending: they
    /// score at [`DEMOTED_WEIGHT`] (see [`Retriever::demote`]).
    demoted: Vec<u32>,
    /// Each document's factor for its standing on the site ([`LINK_WEIGHT`]); empty when
    /// no document's links were counted, or all stand alike.
    standing: Vec<f32>,
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
            let mut marked: Vec<String> = analyzer
                .learn_terms(title)
                .into_iter()
                .map(|t| format!("{TITLE_MARK}{t}"))
                .collect();
            // And the stopwords that short lines hold as names ("where", "The with
            // statement"), which no other term keeps.
            marked.extend(tokenize::keyword_marks(&field_text));
            fields.add_marked(analyzer.learn_terms(&field_text), marked);
            for (p, text) in passages.into_iter().enumerate() {
                units.push((d as u32, p as u32));
                // Operators as marks: they leave the passage's length as it was, so a
                // page of code weighs its words as before. Not in the naming fields: there
                // they moved only rewritten questions, down (docs/evaluation.md).
                builder.add_marked(analyzer.learn_terms(&text), tokenize::operator_marks(&text));
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
        let chinese = std::sync::OnceLock::new();
        let versions = match versions {
            Some(stored) => stored,
            None if has_han => {
                let (versions, sides) = versions::pair(&index, &units, n_docs, &lexicon);
                let _ = chinese.set(sides); // Just made, so empty.
                versions
            }
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
        let units_are_docs = units.len() == n_docs
            && units
                .iter()
                .enumerate()
                .all(|(i, &(doc, passage))| doc as usize == i && passage == 0);
        Self {
            char_bigrams,
            analyzer,
            lexicon,
            names: NameMatcher::new(names.iter().cloned()),
            name_list: names,
            index,
            fields,
            units,
            units_are_docs,
            n_docs,
            has_han,
            glossary_zh,
            versions,
            chinese,
            title_words: std::sync::OnceLock::new(),
            demoted: Vec::new(),
            standing: Vec::new(),
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

    /// Weighs each document by how many other pages link to it (`linked_from[doc]`, `None`
    /// where nobody counted: the site's median), at [`LINK_WEIGHT`].
    pub fn weigh_links(&mut self, linked_from: &[Option<u32>]) {
        let mut counted: Vec<u32> = linked_from.iter().flatten().copied().collect();
        if counted.is_empty() {
            self.standing = Vec::new();
            return;
        }
        let mid = counted.len() / 2;
        let median = *counted.select_nth_unstable(mid).1;
        let half = median.max(1) as f32;
        let prior = |n: u32| 1.0 + LINK_WEIGHT * n as f32 / (n as f32 + half);
        let typical = prior(median);
        self.standing = linked_from
            .iter()
            .map(|n| n.map_or(1.0, |n| prior(n) / typical))
            .collect();
        if self.standing.iter().all(|&f| f == 1.0) {
            self.standing = Vec::new();
        }
    }

    /// `hits` with each score as the text alone made it: the factor for the document's
    /// standing on the site ([`Retriever::weigh_links`]) taken out again.
    pub fn text_scores(&self, hits: &[Ranked]) -> Vec<Ranked> {
        hits.iter()
            .map(|h| Ranked {
                score: h.score / self.standing.get(h.doc as usize).copied().unwrap_or(1.0),
                ..*h
            })
            .collect()
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

    /// `ranked` with each hit's other-language version beside it (scored as the hit: it is
    /// the same page), the one in the question's language first (`chinese_question`: the
    /// question has Chinese text), keeping the first `k`. Which of two versions matched
    /// better says little (a question's own words and their translations weigh within
    /// [`CROSS_WEIGHT`] of each other, and a long compound's translation can outweigh its
    /// bigrams), so the reader's language orders them. The version's passage is the one
    /// at the hit's position when it has as many (translations keep their structure), else
    /// its first.
    fn with_versions(&self, ranked: Vec<Ranked>, k: usize, chinese_question: bool) -> Vec<Ranked> {
        if self.versions.is_empty() {
            return ranked;
        }
        let mut out: Vec<Ranked> = Vec::with_capacity(ranked.len() + 1);
        for hit in &ranked {
            if out.iter().any(|h| h.doc == hit.doc) {
                continue;
            }
            let at = out.len();
            out.push(*hit);
            let other = self.versions[hit.doc as usize];
            if other == versions::NONE || out.iter().any(|h| h.doc == other) {
                continue;
            }
            let chinese = self
                .chinese
                .get_or_init(|| versions::chinese_sides(&self.index, &self.units, self.n_docs));
            let version_first = chinese[hit.doc as usize] != chinese_question
                && chinese[other as usize] == chinese_question;
            let passage = match ranked.iter().find(|h| h.doc == other) {
                Some(own) => own.passage,
                None if self.units.binary_search(&(other, hit.passage)).is_ok() => hit.passage,
                None => 0,
            };
            let version = Ranked {
                doc: other,
                passage,
                score: hit.score,
            };
            if version_first {
                out.insert(at, version);
            } else {
                out.push(version);
            }
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
}

#[cfg(test)]
mod tests;
