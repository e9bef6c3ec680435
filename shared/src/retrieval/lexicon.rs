//! Chinese→English query expansion.
//!
//! Han runs of a query are segmented into the most probable sequence of words (see
//! [`Lexicon::expand_in`]) found in five sources, in the order a word is looked up: the
//! knowledge base's glossary; the software senses learnt from free programs' translations
//! (`build.rs` completes a word's learnt senses with its research-lexicon or CC-CEDICT
//! senses, so this table answers first); a curated research-domain lexicon; a curated
//! general/software lexicon; and a general dictionary derived from CC-CEDICT. The
//! compiled-in tables are merged by
//! `build.rs` into one hash table over their words and the words' prefixes (see
//! `dict_format.rs`), whose translations come already cut into index terms: a prefix costs
//! one hash probe, and a query stems no dictionary text.
//! A matched word's translations share weight 1 between them.

use super::dict::{dict, Dict};
use super::dict_format::{COST_UNITS, LONGER, MAX_KEY_CHARS, SAME, SOURCE_SHIFT, STOP};
use super::tokenize::Analyzer;
use super::zh_stopwords::ZH_STOPWORDS;
use rustc_hash::FxHashMap;
use std::borrow::Cow;
use std::sync::LazyLock;

/// Every word (and word prefix) of the research, general, software-senses and CC-CEDICT
/// tables, and the Chinese stopwords. The curated research-domain and general/software
/// lexicons are written by the team; the software senses are learnt by
/// `infra/build_software_senses.py` (see `data/SOFTWARE-SENSES-NOTICE.md`); CC-CEDICT is CC
/// BY-SA 4.0, see `data/CEDICT-NOTICE.md`.
const ZH: Dict = dict!("zh");

/// English stem → the Chinese words translating to it, the tables above read backwards
/// (written by `build.rs`, see there).
const REVERSE: Dict = dict!("reverse");

mod counts {
    include!(concat!(env!("OUT_DIR"), "/dict_counts.rs"));
}

/// The Chinese words (2–4 characters) of the compiled-in tables whose first senses are the
/// English word with Snowball stem `stem`, curated tables first.
pub(crate) fn chinese_for(stem: &str) -> impl Iterator<Item = &'static str> + use<> {
    let words = REVERSE.get(stem).map_or("", |e| e.value);
    words.split('|').filter(|w| !w.is_empty())
}

/// The compiled-in table a record's word comes from, in `build.rs`'s `LEXICONS` order
/// (its flags' source bits, see `dict_format::SOURCE_SHIFT`); `None` for a prefix only.
fn table_of(flags: u8) -> Option<Source> {
    match flags >> SOURCE_SHIFT {
        1 => Some(Source::Software),
        2 => Some(Source::Research),
        3 => Some(Source::General),
        4 => Some(Source::Cedict),
        _ => None,
    }
}

/// Where a translation came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Source {
    /// The knowledge base's own glossary.
    Glossary,
    /// The curated research-domain lexicon.
    Research,
    /// The curated general/software lexicon.
    General,
    /// Software senses learnt from free programs' Chinese translations
    /// (`data/lexicon_software.tsv`, see `infra/build_software_senses.py`).
    Software,
    /// The general CC-CEDICT-derived dictionary.
    Cedict,
}

/// One segment of a Han run and what it expands to.
#[derive(Debug, Clone, PartialEq)]
pub struct Expansion {
    /// The Chinese word as matched.
    pub word: String,
    /// Its English translations (empty for a stopword or an unknown character).
    pub translations: Vec<String>,
    /// Which source matched, if any.
    pub source: Option<Source>,
    /// Whether the word is a Chinese function or question word (no translations, and its
    /// characters do not count as query bigrams).
    pub stopword: bool,
    /// The index terms of each translation, as `a b|c` (one group per translation, terms
    /// separated by spaces, consecutive duplicates dropped; `=` for a translation that is
    /// its own terms), precomputed.
    pub(crate) terms: Cow<'static, str>,
}

impl Expansion {
    /// The index terms of each translation, space-separated, in order (see
    /// [`Expansion::translations`]).
    pub(crate) fn translation_terms(&self) -> impl Iterator<Item = &str> {
        self.terms
            .split('|')
            .zip(&self.translations)
            .map(|(group, tr)| if group == SAME { tr.as_str() } else { group })
    }
}

/// A word's translations: a glossary entry, or a table's precomputed record (its raw
/// value and its terms, split only when used).
#[derive(Debug, Clone, Copy)]
enum Translations<'a> {
    Glossary(&'a GlossaryEntry),
    Table(&'static str, &'static str),
}

fn split_translations(value: &str) -> Vec<String> {
    value
        .split('|')
        .filter(|t| !t.is_empty())
        .map(str::to_owned)
        .collect()
}

/// A glossary word's translations and their terms (as in [`Expansion::terms`]).
#[derive(Debug, Clone, Default)]
struct GlossaryEntry {
    translations: Vec<String>,
    terms: String,
}

/// The Chinese→English lexicon: compiled-in tables plus a knowledge base's glossary.
#[derive(Debug, Clone, Default)]
pub struct Lexicon {
    glossary: FxHashMap<String, GlossaryEntry>,
    /// Every prefix of a glossary key (the keys included) and what it is: [`GLOSSARY_WORD`]
    /// and/or [`GLOSSARY_LONGER`]. One probe tells segmentation both whether a glossary
    /// word ends here and whether a longer one may, so it stops trying longer prefixes as
    /// soon as neither the glossary nor the tables can extend them.
    glossary_prefixes: FxHashMap<String, u8>,
}

/// Flag of [`Lexicon::glossary_prefixes`]: the prefix is a glossary word.
const GLOSSARY_WORD: u8 = 1;
/// Flag of [`Lexicon::glossary_prefixes`]: a longer glossary word starts with the prefix.
const GLOSSARY_LONGER: u8 = 2;

impl Lexicon {
    /// A lexicon with the compiled-in tables and the given glossary (Chinese word →
    /// English translations). Glossary keys are folded like query text; their
    /// translations are cut into terms here, once, as the tables' are at build time.
    pub fn new(glossary: &[(String, Vec<String>)]) -> Self {
        let analyzer = Analyzer::new();
        let glossary: FxHashMap<String, GlossaryEntry> = glossary
            .iter()
            .map(|(k, v)| {
                // One group per translation, empty ones included, as `translations` keeps
                // them.
                let terms: Vec<String> = v
                    .iter()
                    .map(|tr| {
                        let mut ts = analyzer.terms(tr);
                        ts.dedup();
                        ts.join(" ")
                    })
                    .collect();
                (
                    k.chars().map(super::tokenize::fold_char).collect(),
                    GlossaryEntry {
                        translations: v.clone(),
                        terms: terms.join("|"),
                    },
                )
            })
            .collect();
        let mut glossary_prefixes: FxHashMap<String, u8> = FxHashMap::default();
        for key in glossary.keys() {
            *glossary_prefixes.entry(key.clone()).or_default() |= GLOSSARY_WORD;
            for (end, _) in key.char_indices().skip(1) {
                *glossary_prefixes.entry(key[..end].to_owned()).or_default() |= GLOSSARY_LONGER;
            }
        }
        Self {
            glossary,
            glossary_prefixes,
        }
    }

    /// Number of entries in each source: (glossary, research, general, software, cedict).
    pub fn sizes(&self) -> (usize, usize, usize, usize, usize) {
        let [software, research, general, cedict] = counts::COUNTS;
        (self.glossary.len(), research, general, software, cedict)
    }

    /// Segments a folded Han run (see [`Lexicon::expand_in`]) with no knowledge of a corpus.
    pub fn expand(&self, run: &str) -> Vec<Expansion> {
        self.expand_in(run, |_| false)
    }

    /// Segments a folded Han run into its most probable words and returns each word's
    /// expansion. Stopwords come back with no translations; characters found nowhere come
    /// back alone with no source. `attested` says whether the corpus being searched writes
    /// a (multi-character) word itself.
    ///
    /// The path chosen is the most probable under a unigram word model: it minimises the
    /// sum of each word's −ln P, from jieba's word counts (`data/zh_freq.tsv`, compiled
    /// into each table record; a CC-CEDICT word they lack costs as a rare word, a curated
    /// or glossary word as a common one, a character no table has more than any word),
    /// plus a fixed cost per word (`WORD_COST`); a word of two or more characters the
    /// corpus writes costs three quarters. So 很多数据 reads 很 + 多 + 数据 "data", not 很 + 多数
    /// "majority" + 据, and 只能读数据 reads 读 + 数据, not 读数 "meter reading" + 据: a
    /// dictionary alone cannot tell these apart, as both paths are made of its words.
    /// Costs are integers (sixths of a nat), so equal sums tie exactly; ties keep the
    /// longer first word.
    ///
    /// The tables are probed (one hash lookup) at most once per prefix length, at most
    /// `MAX_KEY_CHARS` per character, so the work is linear in the run's length.
    pub fn expand_in(&self, run: &str, attested: impl Fn(&str) -> bool) -> Vec<Expansion> {
        let mut scratch = Scratch::default();
        let mut segments = Vec::new();
        self.segment_in(run, attested, &mut scratch, &mut segments);
        segments.into_iter().map(Segment::to_expansion).collect()
    }

    /// [`Lexicon::expand_in`] without allocating per word: appends to `out` the run's
    /// segments, borrowing each word from `run` and its translations from the tables (or
    /// the glossary); `scratch` holds the working arrays, reused from call to call.
    pub(crate) fn segment_in<'a>(
        &'a self,
        run: &'a str,
        attested: impl Fn(&str) -> bool,
        scratch: &mut Scratch,
        out: &mut Vec<Segment<'a>>,
    ) {
        self.segment_shorter(run, attested, usize::MAX, scratch, out);
    }

    /// The segments of one dictionary word as if the dictionary did not have it whole: its
    /// parts (调节器 → 调节 + 器). A compound's own entry may be a sense the site never
    /// uses (调节器 "regulator" on a site about mixers) where its parts' senses ("adjust")
    /// are the site's words.
    pub(crate) fn parts_in<'a>(
        &'a self,
        word: &'a str,
        attested: impl Fn(&str) -> bool,
        scratch: &mut Scratch,
        out: &mut Vec<Segment<'a>>,
    ) {
        let chars = word.chars().count();
        if chars > 1 {
            self.segment_shorter(word, attested, chars - 1, scratch, out);
        }
    }

    /// [`Lexicon::segment_in`] with words of at most `max_chars` characters.
    fn segment_shorter<'a>(
        &'a self,
        run: &'a str,
        attested: impl Fn(&str) -> bool,
        max_chars: usize,
        scratch: &mut Scratch,
        out: &mut Vec<Segment<'a>>,
    ) {
        let Scratch {
            starts,
            words,
            first,
            best,
        } = scratch;
        starts.clear();
        starts.extend(run.char_indices().map(|(i, _)| i as u32));
        starts.push(run.len() as u32);
        let at = |i: usize| starts[i] as usize;
        let n = starts.len() - 1;
        // Every word starting at each character: (length, cost, match), grouped by start
        // in ascending order; `first[i]` is where start i's words begin. A match is kept
        // as its kind (see `Kind`): for a table word, its record.
        words.clear();
        first.clear();
        let char_at = |i: usize| run[at(i)..].chars().next();
        for i in 0..n {
            first.push(words.len() as u32);
            let repeated = repeats_classifier(char_at, n, i);
            for len in 1..=MAX_KEY_CHARS.min(n - i).min(max_chars) {
                let prefix = &run[at(i)..at(i + len)];
                let entry = probe(prefix);
                let flags = entry.map_or(0, |e| e.flags);
                let glossary = self.glossary_prefixes.get(prefix).copied().unwrap_or(0);
                let more = glossary & GLOSSARY_LONGER != 0 || flags & LONGER != 0;
                let matched = if len == 2 && repeated {
                    // Read as 一 and the classifier, whatever the tables say of the pair.
                    None
                } else if flags & STOP != 0 {
                    Some(Kind::Stop)
                } else if glossary & GLOSSARY_WORD != 0 {
                    Some(Kind::Glossary)
                } else {
                    table_of(flags)
                        .zip(entry)
                        .map(|(s, e)| Kind::Table(s, e.value, e.terms))
                };
                if let Some(m) = matched {
                    let counted = entry.map_or(0, |e| u32::from(e.cost));
                    let cost = WORD_COST
                        + match (&m, counted) {
                            (Kind::Glossary, _) => GLOSSARY_COST,
                            // A learnt word jieba does not count is a CC-CEDICT headword.
                            (Kind::Table(Source::Cedict | Source::Software, ..), 0) => {
                                UNCOUNTED_COST
                            }
                            (_, 0) => UNCOUNTED_CURATED_COST,
                            (_, c) => c,
                        };
                    // A word the site writes is likelier on it than in general text.
                    let cost = if attested(prefix) && len > 1 {
                        cost * 3 / 4
                    } else {
                        cost
                    };
                    words.push((len as u32, cost, m));
                } else if len == 1 {
                    words.push((1, WORD_COST + UNKNOWN_COST, Kind::Unknown));
                }
                if !more {
                    break;
                }
            }
        }
        first.push(words.len() as u32);
        // best[i]: the cheapest segmentation of the run's suffix from character i, and the
        // index (into words) of its first word.
        best.clear();
        best.resize(n + 1, (0, 0));
        for i in (0..n).rev() {
            let mut pick = (u32::MAX, 0);
            // Longest first, so a tie keeps the longer word.
            for k in (first[i] as usize..first[i + 1] as usize).rev() {
                let (len, cost, _) = words[k];
                let total = cost + best[i + len as usize].0;
                if total < pick.0 {
                    pick = (total, k as u32);
                }
            }
            best[i] = pick;
        }
        let mut i = 0;
        while i < n {
            let k = best[i].1 as usize;
            let len = words[k].0 as usize;
            let word = &run[at(i)..at(i + len)];
            let (source, translations, stopword) = match words[k].2 {
                // The glossary entry is looked up again only for the words chosen.
                Kind::Glossary => match self.glossary.get(word) {
                    Some(g) => (
                        Some(Source::Glossary),
                        Some(Translations::Glossary(g)),
                        false,
                    ),
                    None => (None, None, false),
                },
                Kind::Table(s, value, terms) => {
                    (Some(s), Some(Translations::Table(value, terms)), false)
                }
                Kind::Stop => (None, None, true),
                Kind::Unknown => (None, None, false),
            };
            out.push(Segment {
                word,
                source,
                stopword,
                translations,
            });
            i += len;
        }
    }

    /// The expansion (translations and their precomputed terms) of exactly the folded
    /// word `word`, from the first source that has it (glossary, then the curated tables,
    /// then CC-CEDICT: the order segmentation prefers), without segmenting; `None` for a
    /// stopword or a word no source has. Like segmentation, it knows the compiled-in
    /// tables' words of at most `MAX_KEY_CHARS` (8) characters.
    pub fn word(&self, word: &str) -> Option<Expansion> {
        let entry = ZH.get(word);
        if entry.is_some_and(|e| e.flags & STOP != 0) {
            return None;
        }
        let (source, translations, terms) = if let Some(g) = self.glossary.get(word) {
            (
                Source::Glossary,
                g.translations.clone(),
                Cow::Owned(g.terms.clone()),
            )
        } else {
            let e = entry?;
            let source = table_of(e.flags)?;
            (source, split_translations(e.value), Cow::Borrowed(e.terms))
        };
        Some(Expansion {
            word: word.to_owned(),
            translations,
            source: Some(source),
            stopword: false,
            terms,
        })
    }
}

/// Whether character `i` of a run of `n` characters (`char_at` reads them) starts one half
/// of a repeated numeral and classifier: 一行一行 "line by line", 一步一步 "step by step",
/// 一条一条 "one by one". Repeated so, the pair is distributive and means its classifier,
/// whatever the tables say of it as a word (一行 "party; delegation", as in 代表团一行 "the
/// delegation"): it is read as 一, a stopword, and the classifier. The test is the form
/// alone, so any character said so (一天一天 "day by day") is taken for a classifier.
fn repeats_classifier(char_at: impl Fn(usize) -> Option<char>, n: usize, i: usize) -> bool {
    let one = |k: usize| char_at(k) == Some('一');
    // 一 at `k` and `k + 2`, the same other character after each.
    let pair = |k: usize| {
        k + 3 < n && one(k) && one(k + 2) && !one(k + 1) && char_at(k + 1) == char_at(k + 3)
    };
    pair(i) || (i >= 2 && pair(i - 2))
}

/// Segmentation costs are in these fractions of a nat (see [`COST_UNITS`]).
const fn nats(n: f64) -> u32 {
    (n * COST_UNITS) as u32
}
/// What every word costs on top of its improbability: a unigram model alone splits a rare
/// compound into two common characters (时区 "time zone", counted 34 times in 60 million,
/// costs more than 时 + 区), so each further word is charged, as a speech recogniser
/// charges a word insertion. Measured from 0 to 6 nats (docs/evaluation.md): 4 and 5 rank
/// every real site alike; below, compounds split (git, Django lose); at 6 PostgreSQL loses.
const WORD_COST: u32 = nats(4.0);
/// The cost of a CC-CEDICT word the frequencies do not count: a rare word's (a count of
/// about 50 in jieba's 60 million; its rarest word, counted once, is 17.9 nats), not
/// the rarest's, since jieba leaves out common phrases it splits by design (不一定
/// "maybe" must not read 不 + 一定 "certainly").
const UNCOUNTED_COST: u32 = nats(14.0);
/// The cost of an uncounted word of the curated tables or the stopword list, entered
/// for the sites' vocabulary (包管理器 "package manager", 都会): a common word's.
const UNCOUNTED_CURATED_COST: u32 = nats(10.0);
/// The cost of a glossary word: the site owner's own term, as likely as a common word
/// (8 nats, a count of about 20,000).
const GLOSSARY_COST: u32 = nats(8.0);
/// The cost of a character no table has: splitting off one is the last resort.
const UNKNOWN_COST: u32 = nats(20.0);

/// The compiled-in record of a prefix: one hash lookup.
fn probe(prefix: &str) -> Option<super::dict::Entry> {
    #[cfg(test)]
    steps::PROBES.with(|n| n.set(n.get() + 1));
    ZH.get(prefix)
}

/// What a candidate word is: a stopword, a glossary word (its entry is looked up again
/// if it wins, so [`Scratch`] borrows nothing between queries), a table word (its source,
/// raw value and terms), or an unknown character.
#[derive(Debug, Clone, Copy)]
enum Kind {
    Stop,
    Glossary,
    Table(Source, &'static str, &'static str),
    Unknown,
}

/// The working arrays of [`Lexicon::segment_in`], kept between calls so segmenting a run
/// allocates nothing once they have grown.
#[derive(Debug, Default)]
pub(crate) struct Scratch {
    /// Byte offset of each character of the run, and the run's length.
    starts: Vec<u32>,
    /// Candidate words: (length in characters, cost in sixths of a nat, what it is).
    words: Vec<(u32, u32, Kind)>,
    /// Where each start's candidates begin in `words`.
    first: Vec<u32>,
    /// Cheapest cost from each character on, and its first word's index in `words`.
    best: Vec<(u32, u32)>,
}

/// One segment of a Han run, borrowed from the run and the dictionaries (what
/// [`Expansion`] owns).
#[derive(Debug, Clone, Copy)]
pub(crate) struct Segment<'a> {
    /// The Chinese word as matched.
    pub(crate) word: &'a str,
    /// Which source matched, if any.
    pub(crate) source: Option<Source>,
    /// Whether the word is a stopword (see [`Expansion::stopword`]).
    pub(crate) stopword: bool,
    /// Its translations, when a source has it.
    translations: Option<Translations<'a>>,
}

impl<'a> Segment<'a> {
    /// Whether it has any translation (as [`Expansion::translations`] is non-empty).
    pub(crate) fn has_translations(&self) -> bool {
        match self.translations {
            Some(Translations::Glossary(g)) => !g.translations.is_empty(),
            Some(Translations::Table(value, _)) => value.split('|').any(|t| !t.is_empty()),
            None => false,
        }
    }

    /// The index terms of each translation, as [`Expansion::translation_terms`] gives them.
    pub(crate) fn translation_terms(&self) -> impl Iterator<Item = &'a str> + use<'a> {
        let (glossary, table) = match self.translations {
            Some(Translations::Glossary(g)) => (Some(g), None),
            Some(Translations::Table(value, terms)) => (None, Some((value, terms))),
            None => (None, None),
        };
        let glossary = glossary.into_iter().flat_map(|g| {
            g.terms.split('|').zip(&g.translations).map(|(group, tr)| {
                if group == SAME {
                    tr.as_str()
                } else {
                    group
                }
            })
        });
        let table = table.into_iter().flat_map(|(value, terms)| {
            terms
                .split('|')
                .zip(value.split('|').filter(|t| !t.is_empty()))
                .map(|(group, tr)| if group == SAME { tr } else { group })
        });
        glossary.chain(table)
    }

    /// Whether the word's first sense is grammatical: its first translation is English
    /// stopwords only (别的 "other", 之前 "before", 只有 "only have"). Dictionaries list a
    /// word's commonest sense first, so in a question such a word frames the content
    /// words as a stopword does; its later senses are rarer readings (别的 "else", 之前
    /// "previous") that would otherwise take all its weight, the grammatical sense having
    /// no index term to share it with.
    pub(crate) fn is_function_word(&self) -> bool {
        self.stopword
            || self
                .translation_terms()
                .next()
                .is_some_and(|group| group.trim().is_empty())
    }

    /// The owned [`Expansion`] of this segment.
    pub(crate) fn to_expansion(self) -> Expansion {
        let (translations, terms) = match self.translations {
            Some(Translations::Glossary(g)) => {
                (g.translations.clone(), Cow::Owned(g.terms.clone()))
            }
            Some(Translations::Table(value, terms)) => {
                (split_translations(value), Cow::Borrowed(terms))
            }
            None => (Vec::new(), Cow::Borrowed("")),
        };
        Expansion {
            word: self.word.to_owned(),
            translations,
            source: self.source,
            stopword: self.stopword,
            terms,
        }
    }
}

/// True for a Chinese function or question word that expansion skips.
pub fn is_zh_stopword(word: &str) -> bool {
    // Sorted once; a binary search keeps segmentation cheap per character.
    static SORTED: LazyLock<Vec<&'static str>> = LazyLock::new(|| {
        let mut v = ZH_STOPWORDS.to_vec();
        v.sort_unstable();
        v.dedup();
        v
    });
    SORTED.binary_search(&word).is_ok()
}

#[cfg(test)]
pub(crate) mod steps {
    use std::cell::Cell;

    thread_local! {
        /// Table probes made on this thread.
        pub(crate) static PROBES: Cell<usize> = const { Cell::new(0) };
    }
}

#[cfg(test)]
mod tests {
    use super::super::table::{sorted_table, SortedTable};
    use super::*;

    /// The tables as sorted text, as they were searched before `build.rs` hashed them: the
    /// reference the hash tables are checked against.
    const RESEARCH: SortedTable = sorted_table!("lexicon_research");
    const GENERAL: SortedTable = sorted_table!("lexicon_general");
    const SOFTWARE: SortedTable = sorted_table!("lexicon_software");
    const CEDICT: SortedTable = sorted_table!("cedict");
    const REVERSE_TEXT: SortedTable = SortedTable::new(
        include_str!(concat!(env!("OUT_DIR"), "/reverse.tsv")),
        include_bytes!(concat!(env!("OUT_DIR"), "/reverse.idx")),
    );
    const TABLES: [(Source, SortedTable); 4] = [
        (Source::Software, SOFTWARE),
        (Source::Research, RESEARCH),
        (Source::General, GENERAL),
        (Source::Cedict, CEDICT),
    ];

    /// What segmentation learns about `prefix` by bisecting the sorted tables: (the first
    /// table holding it and its raw value, whether a longer word of any table extends it).
    fn reference_probe(prefix: &str) -> (Option<(Source, &'static str)>, bool) {
        let mut exact = None;
        let mut longer = false;
        for (source, table) in TABLES {
            let i = table.lower_bound(prefix);
            if let Some((key, value)) = table.line(i) {
                if key == prefix {
                    exact = exact.or(Some((source, value)));
                    longer |= table
                        .line(i + 1)
                        .is_some_and(|(k, _)| k.starts_with(prefix));
                } else {
                    longer |= key.starts_with(prefix);
                }
            }
        }
        longer |= ZH_STOPWORDS
            .iter()
            .any(|w| w.len() > prefix.len() && w.starts_with(prefix));
        (exact, longer)
    }

    /// The terms the query analyzer makes of a raw `t1|t2` value, as `a b|c`.
    fn reference_terms(value: &str) -> String {
        let analyzer = Analyzer::new();
        let groups: Vec<String> = split_translations(value)
            .iter()
            .map(|tr| {
                let mut ts = analyzer.terms(tr);
                ts.dedup();
                ts.join(" ")
            })
            .collect();
        groups.join("|")
    }

    /// Checks the hash table's record of `key` against the sorted tables.
    fn check_key(key: &str) {
        let (exact, longer) = reference_probe(key);
        let stop = is_zh_stopword(key);
        let Some(e) = ZH.get(key) else {
            assert!(exact.is_none() && !longer && !stop, "{key:?} missing");
            return;
        };
        assert_eq!(e.flags & LONGER != 0, longer, "{key:?} longer");
        assert_eq!(e.flags & STOP != 0, stop, "{key:?} stop");
        assert_eq!(table_of(e.flags), exact.map(|(s, _)| s), "{key:?} source");
        let value = exact.map_or("", |(_, v)| v);
        assert_eq!(e.value, value, "{key:?} value");
        let translations = split_translations(value);
        let terms: Vec<&str> = e
            .terms
            .split('|')
            .zip(&translations)
            .map(|(g, tr)| if g == SAME { tr.as_str() } else { g })
            .collect();
        assert_eq!(terms.join("|"), reference_terms(value), "{key:?} terms");
    }

    #[test]
    fn the_hash_table_answers_every_word_and_prefix_as_the_sorted_tables_do() {
        let mut checked = 0;
        for (_, table) in TABLES {
            for (key, _) in table.entries() {
                let ends = key.char_indices().map(|(i, _)| i).skip(1);
                for end in ends.chain([key.len()]).take(MAX_KEY_CHARS) {
                    check_key(&key[..end]);
                    checked += 1;
                }
            }
        }
        for word in ZH_STOPWORDS {
            let ends = word.char_indices().map(|(i, _)| i).skip(1);
            for end in ends.chain([word.len()]) {
                check_key(&word[..end]);
            }
        }
        assert!(checked > 150_000, "{checked}");
        assert_eq!(
            Lexicon::default().sizes(),
            (
                0,
                RESEARCH.len(),
                GENERAL.len(),
                SOFTWARE.len(),
                CEDICT.len()
            )
        );
    }

    #[test]
    fn keys_in_no_table_are_not_found() {
        // A dictionary-absent extension-B ideograph appended to real words, and text no
        // table has.
        for (_, table) in TABLES {
            for (key, _) in table.entries().step_by(97) {
                let absent = format!("{key}\u{2A6D6}");
                assert_eq!(reference_probe(&absent), (None, false));
                assert_eq!(ZH.get(&absent), None, "{absent:?}");
            }
        }
        for absent in ["", "\u{2A6D6}", "zzzz", "人脸识别人脸识别人脸识别"] {
            assert_eq!(ZH.get(absent), None, "{absent:?}");
        }
        assert_eq!(REVERSE.get("zzzz"), None);
        assert_eq!(REVERSE.get(""), None);
    }

    #[test]
    fn the_reverse_hash_table_matches_the_sorted_reverse_table() {
        assert!(REVERSE_TEXT.len() > 1000);
        for (stem, words) in REVERSE_TEXT.entries() {
            let found: Vec<&str> = chinese_for(stem).collect();
            let expected: Vec<&str> = words.split('|').filter(|w| !w.is_empty()).collect();
            assert_eq!(found, expected, "{stem:?}");
        }
    }

    fn check_sorted_unique(name: &str, table: SortedTable) {
        let keys: Vec<&str> = table.entries().map(|(k, _)| k).collect();
        assert!(
            keys.iter().all(|k| !k.is_empty() && !k.contains('\n')),
            "{name}"
        );
        for w in keys.windows(2) {
            assert!(
                w[0].as_bytes() < w[1].as_bytes(),
                "{name}: {:?} !< {:?}",
                w[0],
                w[1]
            );
        }
    }

    #[test]
    fn compiled_tables_are_sorted_with_unique_keys() {
        check_sorted_unique("research", RESEARCH);
        check_sorted_unique("general", GENERAL);
        check_sorted_unique("cedict", CEDICT);
    }

    #[test]
    fn research_lexicon_has_at_least_300_entries() {
        assert!(RESEARCH.len() >= 300);
    }

    #[test]
    fn every_research_entry_is_found_by_lookup() {
        for table in [RESEARCH, GENERAL] {
            for (k, v) in table.entries() {
                assert_eq!(table.get(k), Some(v));
            }
        }
        assert!(GENERAL.len() >= 1500);
        assert_eq!(CEDICT.get("超级碗"), Some("super bowl"));
    }

    #[test]
    fn longest_match_prefers_the_longer_word() {
        let lex = Lexicon::default();
        let ex = lex.expand("人脸识别训练");
        let words: Vec<&str> = ex.iter().map(|e| e.word.as_str()).collect();
        assert_eq!(words, vec!["人脸识别", "训练"]);
        assert!(ex[0].translations.iter().any(|t| t == "face recognition"));
        assert_eq!(ex[0].source, Some(Source::Research));
    }

    #[test]
    fn a_word_looked_up_alone_has_the_translations_segmentation_gives_it() {
        let lex = Lexicon::new(&[("模型".to_string(), vec!["checkpoint".to_string()])]);
        for word in ["卸载", "图书馆", "人脸识别", "米饭", "模型"] {
            let ex = lex.expand(word);
            assert_eq!(ex.len(), 1, "{word} is one word");
            assert_eq!(lex.word(word).as_ref(), Some(&ex[0]), "{word}");
        }
        let glossary = lex.word("模型").expect("a glossary word");
        assert_eq!(glossary.translations, ["checkpoint"]);
        assert_eq!(
            glossary.translation_terms().collect::<Vec<_>>(),
            ["checkpoint"]
        );
        assert!(lex.word("的").is_none(), "a stopword");
        assert!(lex.word("学的").is_none(), "not a word");
    }

    fn words(lex: &Lexicon, run: &str) -> Vec<String> {
        lex.expand(run).into_iter().map(|e| e.word).collect()
    }

    #[test]
    fn segmentation_takes_the_most_probable_path_not_the_longest_first_word() {
        let lex = Lexicon::default();
        // Longest match read 一同 + 步 and 个头 + 文件.
        assert_eq!(words(&lex, "一同步"), vec!["一", "同步"]);
        assert_eq!(words(&lex, "某个头文件"), vec!["某个", "头文件"]);
        // Where the longest word is also the best path, it stays.
        assert_eq!(words(&lex, "人脸识别训练"), vec!["人脸识别", "训练"]);
    }

    #[test]
    fn a_question_frame_on_the_stopword_list_is_read_whole() {
        let lex = Lexicon::default();
        // No table holds these, so only the stopword list leads segmentation to them: read
        // short, 才能 is "talent; ability" and 时候 "time", which the question never asks.
        assert_eq!(words(&lex, "怎么才能访问"), vec!["怎么才能", "访问"]);
        assert_eq!(words(&lex, "启动的时候"), vec!["启动", "的时候"]);
        for frame in ["怎么才能", "的时候", "有什么", "有哪些"] {
            assert_eq!(words(&lex, frame), vec![frame]);
        }
    }

    #[test]
    fn the_commoner_words_win_where_both_paths_are_dictionary_words() {
        let lex = Lexicon::default();
        // Every path here is made of table words; only their frequencies decide. Fewest
        // words read 多数 "majority" + 据, 读数 "meter reading" + 据, 人参 "ginseng" + 加.
        assert_eq!(words(&lex, "很多数据"), vec!["很", "多", "数据"]);
        assert_eq!(words(&lex, "读数据"), vec!["读", "数据"]);
        assert_eq!(words(&lex, "人参加"), vec!["人", "参加"]);
        // A rare compound still beats its common characters (the per-word cost).
        assert_eq!(words(&lex, "时区"), vec!["时区"]);
        // The counts reach the records: commoner is cheaper, and a word jieba does not
        // count has none (包管理器, of the general lexicon, then costs a common word's).
        let cost = |w: &str| probe(w).map(|e| e.cost);
        assert!(
            cost("数据") < cost("读数"),
            "{:?} {:?}",
            cost("数据"),
            cost("读数")
        );
        assert!(cost("数据").is_some_and(|c| c > 0));
        assert_eq!(cost("包管理器"), Some(0));
        assert_eq!(words(&lex, "安装包管理器"), vec!["安装", "包管理器"]);
    }

    #[test]
    fn a_repeated_numeral_and_classifier_reads_as_the_classifier() {
        let lex = Lexicon::default();
        // 一行 alone is a word, "party; delegation": repeated, it is "line by line".
        let line = |e: &Expansion| e.translations.iter().any(|t| t == "line");
        let ex = lex.expand("一行");
        assert!(ex.len() == 1 && !line(&ex[0]), "{ex:?}");
        let ex = lex.expand("一行一行地读取文件");
        let read: Vec<&str> = ex.iter().map(|e| e.word.as_str()).collect();
        assert_eq!(read, ["一", "行", "一", "行", "地", "读取", "文件"]);
        assert!(ex.iter().filter(|e| line(e)).count() == 2, "{ex:?}");
        assert_eq!(words(&lex, "一步一步"), vec!["一", "步", "一", "步"]);
        // Not repeated, or not the same classifier: the tables decide as before.
        assert_eq!(words(&lex, "一行代码"), vec!["一行", "代码"]);
        assert_eq!(words(&lex, "一起一样"), vec!["一起", "一样"]);
        assert_eq!(words(&lex, "一一"), vec!["一一"]);
    }

    #[test]
    fn words_the_corpus_writes_win_segmentation_ties() {
        let lex = Lexicon::default();
        // 线性 + 方程组 "system of equations" and 线性方程 "linear equation" + 组 are
        // about equally probable in general text: the corpus decides.
        let ex = lex.expand_in("线性方程组", |w| w == "方程组");
        assert_eq!(ex[1].word, "方程组", "{ex:?}");
        let ex = lex.expand_in("线性方程组", |w| w == "线性方程");
        assert_eq!(ex[0].word, "线性方程", "{ex:?}");
    }

    #[test]
    fn a_superlative_reads_as_one_word() {
        let lex = Lexicon::default();
        // 最大 "largest" + 能 + 存, not 最 + 大能 "almighty" + 存 (with flat costs the two
        // tied, and only the tie rule kept the longer first word).
        let words: Vec<String> = lex.expand("最大能存").into_iter().map(|e| e.word).collect();
        assert_eq!(words, ["最大", "能", "存"]);
        let ex = lex.expand("修改最大连接数");
        let max = ex.iter().find(|e| e.word == "最大");
        assert!(
            max.is_some_and(|e| e.translations.iter().any(|t| t == "maximum")),
            "{ex:?}"
        );
    }

    #[test]
    fn function_words_of_questions_expand_to_nothing() {
        let lex = Lexicon::default();
        for (run, word) in [
            ("它都会改", "都会"),
            ("我不想用", "不想"),
            ("文件中的设置", "中的"),
            ("没单独指定", "没"),
            ("往终端加", "往"),
        ] {
            let ex = lex.expand(run);
            let w = ex.iter().find(|e| e.word == word);
            assert!(w.is_some_and(|w| w.stopword), "{run}: {ex:?}");
        }
    }

    #[test]
    fn general_lexicon_gives_software_senses() {
        let lex = Lexicon::default();
        let ex = lex.expand("卸载");
        assert_eq!(ex[0].source, Some(Source::General));
        assert_eq!(ex[0].translations[0], "uninstall");
        assert!(lex.expand("装")[0]
            .translations
            .iter()
            .any(|t| t == "install"));
    }

    #[test]
    fn learnt_software_senses_come_before_the_dictionarys_everyday_ones() {
        let lex = Lexicon::default();
        // CC-CEDICT reads 检出 "detect" only; programs' translators write it for checkout.
        let ex = lex.expand("检出");
        assert_eq!(ex[0].source, Some(Source::Software), "{ex:?}");
        assert_eq!(ex[0].translations, ["checkout", "detect"]);
        // A word CC-CEDICT lacks, found as one word rather than 描述 + 符.
        let ex = lex.expand("文件描述符");
        let w = ex.iter().find(|e| e.word == "描述符");
        assert!(
            w.is_some_and(|w| w.translations == ["descriptor"]),
            "{ex:?}"
        );
        // And read backwards, an English question's "descriptor" finds it.
        assert!(chinese_for("descriptor").any(|w| w == "描述符"));
    }

    /// `data/lexicon_software.tsv` holds only learnt senses; `build.rs` makes each line the
    /// word's whole entry, since the table answers first: after a research word's own senses,
    /// before a CC-CEDICT word's, so an edit to either table shows through without relearning.
    #[test]
    fn software_lines_are_completed_with_the_words_current_senses() {
        let find = |table: &SortedTable, word: &str| {
            table
                .line(table.lower_bound(word))
                .filter(|(key, _)| *key == word)
                .map(|(_, senses)| senses)
        };
        let learnt = include_str!("../../data/lexicon_software.tsv");
        let mut lines = 0;
        for line in learnt.lines().filter(|l| !l.is_empty()) {
            let (word, senses) = line.split_once('\t').expect("word<TAB>senses");
            let expected = match (find(&RESEARCH, word), find(&CEDICT, word)) {
                (Some(own), _) => format!("{own}|{senses}"),
                (None, Some(everyday)) => format!("{senses}|{everyday}"),
                (None, None) => senses.to_owned(),
            };
            assert_eq!(find(&SOFTWARE, word), Some(expected.as_str()), "{word}");
            lines += 1;
        }
        assert_eq!(lines, SOFTWARE.len());
        // The two orders, on words the tests above rely on.
        assert_eq!(find(&SOFTWARE, "检出"), Some("checkout|detect"));
        assert!(find(&SOFTWARE, "引用").is_some_and(|s| s.starts_with("citation|")));
    }

    #[test]
    fn negated_dictionary_senses_are_left_out() {
        let lex = Lexicon::default();
        // CC-CEDICT: 不服 "not to accept|remain unconvinced by", 不一定 "not
        // necessarily|maybe": searching for "accept" or "necessarily" would ask for the
        // opposite.
        let ex = lex.expand("不服");
        assert_eq!(ex[0].source, Some(Source::Cedict), "{ex:?}");
        assert_eq!(
            ex[0].translations,
            vec!["remain unconvinced by".to_string()]
        );
        assert_eq!(
            lex.expand("不一定")[0].translations,
            vec!["maybe".to_string()]
        );
    }

    #[test]
    fn english_stems_find_their_chinese_words() {
        let install: Vec<&str> = chinese_for("instal").collect();
        assert!(install.contains(&"安装"), "{install:?}");
        let sync: Vec<&str> = chinese_for("sync").collect();
        assert!(sync.contains(&"同步"), "{sync:?}");
        assert_eq!(chinese_for("zzzz").count(), 0);
        for w in chinese_for("train") {
            assert!((2..=4).contains(&w.chars().count()), "{w}");
        }
    }

    #[test]
    fn glossary_wins_over_compiled_tables() {
        let lex = Lexicon::new(&[("人脸识别".into(), vec!["facerec".into()])]);
        let ex = lex.expand("人脸识别");
        assert_eq!(ex[0].translations, vec!["facerec".to_string()]);
        assert_eq!(ex[0].source, Some(Source::Glossary));
    }

    #[test]
    fn glossary_enables_longer_site_specific_words() {
        let lex = Lexicon::new(&[("安翔".into(), vec!["xiang an".into()])]);
        let ex = lex.expand("安翔的论文");
        assert_eq!(ex[0].word, "安翔");
        assert_eq!(ex[0].translations, vec!["xiang an".to_string()]);
        assert!(ex[1].translations.is_empty(), "的 is a stopword");
    }

    #[test]
    fn stopwords_and_unknown_characters_expand_to_nothing() {
        let lex = Lexicon::default();
        let ex = lex.expand("什么");
        assert_eq!(ex.len(), 1);
        assert!(ex[0].translations.is_empty());
        // A private-use-free but dictionary-absent ideograph from extension B.
        let ex = lex.expand("\u{2A6D6}");
        assert_eq!(ex[0].source, None);
    }
}
