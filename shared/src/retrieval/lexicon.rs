//! Chinese→English query expansion.
//!
//! Han runs of a query are segmented by longest match against three sources, most specific
//! first: the knowledge base's glossary, a curated research-domain lexicon, and a general
//! dictionary derived from CC-CEDICT. The compiled-in tables are sorted text (one
//! `key\tt1|t2|...` line per key) searched in place, so start-up parses nothing.
//! A matched word's translations share weight 1 between them.

use super::table::{sorted_table, SortedTable};
use rustc_hash::FxHashMap;
use std::sync::LazyLock;

/// The curated research-domain lexicon (written by the team).
const RESEARCH: SortedTable = sorted_table!("lexicon_research");
/// The general dictionary derived from CC-CEDICT (CC BY-SA 4.0, see `data/CEDICT-NOTICE.md`).
const CEDICT: SortedTable = sorted_table!("cedict");

/// The longest key, in characters, that segmentation tries.
const MAX_WORD_CHARS: usize = 8;

/// Chinese function and question words: matched as words (so they are not misread as
/// parts of neighbours) but never expanded, because their translations ("what", "how
/// many", "of") would match every English document.
const ZH_STOPWORDS: &[&str] = &[
    "一下",
    "一些",
    "一个",
    "一位",
    "上",
    "下",
    "不",
    "个",
    "中",
    "为",
    "为什么",
    "么",
    "之",
    "也",
    "了",
    "些",
    "人们",
    "什么",
    "他",
    "他们",
    "们",
    "以",
    "位",
    "何",
    "你",
    "你们",
    "其",
    "几",
    "到",
    "又",
    "及",
    "吗",
    "吧",
    "呀",
    "呢",
    "和",
    "哪",
    "哪个",
    "哪些",
    "哪里",
    "啊",
    "在",
    "多少",
    "她",
    "它",
    "对",
    "就",
    "己",
    "并",
    "怎么",
    "怎么样",
    // "Which" + a measure word asks for a thing; the measure word alone would translate
    // to noise (支 "support", 项 "neck", 部 "ministry").
    "哪支",
    "哪种",
    "哪项",
    "哪部",
    "哪家",
    "哪条",
    "哪座",
    "哪所",
    "哪本",
    "哪首",
    "哪场",
    "哪次",
    "哪类",
    "哪名",
    "哪届",
    "哪只",
    "哪位",
    "哪一",
    "哪一个",
    "哪一位",
    "第几",
    "多长",
    "最",
    "怎样",
    "我",
    "我们",
    "或",
    "所",
    "把",
    "是",
    "是否",
    "有",
    "有关",
    "有没有",
    "的",
    "着",
    "等",
    "给",
    "而",
    "被",
    "让",
    "请",
    "请问",
    "谁",
    "还",
    "这",
    "这个",
    "这些",
    "那",
    "那个",
    "那些",
    "都",
    "与",
    "即",
    "于",
    "由",
    "从",
    "向",
    "得",
    "地",
    "该",
    "如何",
    "曾",
    "过",
    "将",
    "能",
    "会",
    "要",
    "想",
    "可以",
    "关于",
    "一",
    "您",
];

/// Where a translation came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Source {
    /// The knowledge base's own glossary.
    Glossary,
    /// The curated research-domain lexicon.
    Research,
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
}

/// What a prefix looks like in one source.
struct Probe {
    /// The prefix itself is a word there, with this raw `t1|t2` value.
    exact: Option<&'static str>,
    /// Some longer word there starts with the prefix.
    longer: bool,
}

fn probe_table(table: SortedTable, prefix: &str) -> Probe {
    #[cfg(test)]
    steps::PROBES.with(|n| n.set(n.get() + 1));
    let i = table.lower_bound(prefix);
    let Some((key, value)) = table.line(i) else {
        return Probe {
            exact: None,
            longer: false,
        };
    };
    if key != prefix {
        return Probe {
            exact: None,
            longer: key.starts_with(prefix),
        };
    }
    // Keys extending `prefix` sort right after it, so the next line tells.
    let longer = table
        .line(i + 1)
        .is_some_and(|(k, _)| k.starts_with(prefix));
    Probe {
        exact: Some(value),
        longer,
    }
}

/// A match's translations before the winner is known: a glossary entry, or a table's raw
/// `t1|t2` value (split only if it wins).
enum Translations<'a> {
    Owned(&'a Vec<String>),
    Raw(&'static str),
}

fn split_translations(value: &str) -> Vec<String> {
    value
        .split('|')
        .filter(|t| !t.is_empty())
        .map(str::to_owned)
        .collect()
}

/// The Chinese→English lexicon: compiled-in tables plus a knowledge base's glossary.
#[derive(Debug, Clone, Default)]
pub struct Lexicon {
    glossary: FxHashMap<String, Vec<String>>,
    /// Longest glossary key in characters, so segmentation knows how far to try.
    glossary_max_chars: usize,
}

impl Lexicon {
    /// A lexicon with the compiled-in tables and the given glossary (Chinese word →
    /// English translations). Glossary keys are folded like query text.
    pub fn new(glossary: &[(String, Vec<String>)]) -> Self {
        let glossary: FxHashMap<String, Vec<String>> = glossary
            .iter()
            .map(|(k, v)| {
                (
                    k.chars().map(super::tokenize::fold_char).collect(),
                    v.clone(),
                )
            })
            .collect();
        let glossary_max_chars = glossary
            .keys()
            .map(|k| k.chars().count())
            .max()
            .unwrap_or(0);
        Self {
            glossary,
            glossary_max_chars,
        }
    }

    /// Number of entries in each source: (glossary, research, cedict).
    pub fn sizes(&self) -> (usize, usize, usize) {
        (self.glossary.len(), RESEARCH.len(), CEDICT.len())
    }

    /// Segments a folded Han run by longest match and returns each segment's expansion.
    /// Stopwords come back with no translations; characters found nowhere come back alone
    /// with no source.
    pub fn expand(&self, run: &str) -> Vec<Expansion> {
        let starts: Vec<usize> = run
            .char_indices()
            .map(|(i, _)| i)
            .chain([run.len()])
            .collect();
        let n = starts.len() - 1;
        let mut out = Vec::new();
        let mut i = 0;
        while i < n {
            // Grow the candidate one character at a time while some source still has a
            // longer word with this prefix; remember the longest exact match.
            let mut best: (usize, Option<(Source, Translations<'_>)>) = (1, None);
            for len in 1..=MAX_WORD_CHARS.min(n - i) {
                let prefix = &run[starts[i]..starts[i + len]];
                let mut more = len < self.glossary_max_chars;
                // Outer Option: the prefix is a word somewhere; inner: its translations
                // (none for a stopword, which is matched only to keep it whole).
                let mut matched: Option<Option<(Source, Translations<'_>)>> = None;
                if is_zh_stopword(prefix) {
                    matched = Some(None);
                } else if let Some(t) = self.glossary.get(prefix) {
                    matched = Some(Some((Source::Glossary, Translations::Owned(t))));
                }
                for (source, table) in [(Source::Research, RESEARCH), (Source::Cedict, CEDICT)] {
                    let probe = probe_table(table, prefix);
                    more |= probe.longer;
                    if matched.is_none() {
                        matched = probe.exact.map(|t| Some((source, Translations::Raw(t))));
                    }
                }
                if let Some(m) = matched {
                    best = (len, m);
                }
                if !more {
                    break;
                }
            }
            let (len, found) = best;
            let word = run[starts[i]..starts[i + len]].to_owned();
            // Translations are split into strings only for the match that won.
            let (source, translations) = match found {
                Some((s, Translations::Owned(t))) => (Some(s), t.clone()),
                Some((s, Translations::Raw(t))) => (Some(s), split_translations(t)),
                None => (None, Vec::new()),
            };
            out.push(Expansion {
                word,
                translations,
                source,
            });
            i += len;
        }
        out
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

/// Counts of the work segmentation does, for the tests that bound it.
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
    use super::*;

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
        check_sorted_unique("cedict", CEDICT);
    }

    #[test]
    fn research_lexicon_has_at_least_300_entries() {
        assert!(RESEARCH.len() >= 300);
    }

    #[test]
    fn every_research_entry_is_found_by_lookup() {
        for (k, v) in RESEARCH.entries() {
            assert_eq!(RESEARCH.get(k), Some(v));
        }
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
