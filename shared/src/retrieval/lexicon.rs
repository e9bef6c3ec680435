//! Chinese→English query expansion.
//!
//! Han runs of a query are segmented into the most probable sequence of words (see
//! [`Lexicon::expand_in`]) found in four sources, most specific first: the knowledge base's
//! glossary, a curated research-domain lexicon, a curated general/software lexicon, and a
//! general dictionary derived from CC-CEDICT. The compiled-in tables are sorted text (one
//! `key\tt1|t2|...` line per key) searched in place, so start-up parses nothing.
//! A matched word's translations share weight 1 between them.

use super::table::{sorted_table, SortedTable};
use rustc_hash::FxHashMap;
use std::sync::LazyLock;

/// The curated research-domain lexicon (written by the team).
const RESEARCH: SortedTable = sorted_table!("lexicon_research");
/// The curated general and software lexicon (written by the team): the words site visitors
/// use about installing, configuring and using things, with the senses they mean.
const GENERAL: SortedTable = sorted_table!("lexicon_general");
/// The general dictionary derived from CC-CEDICT (CC BY-SA 4.0, see `data/CEDICT-NOTICE.md`).
const CEDICT: SortedTable = sorted_table!("cedict");

/// English stem → the Chinese words translating to it, the tables above read backwards
/// (written by `build.rs`, see there).
const REVERSE: SortedTable = SortedTable::new(
    include_str!(concat!(env!("OUT_DIR"), "/reverse.tsv")),
    include_bytes!(concat!(env!("OUT_DIR"), "/reverse.idx")),
);

/// The Chinese words (2–4 characters) of the compiled-in tables whose first senses are the
/// English word with Snowball stem `stem`, curated tables first.
pub fn chinese_for(stem: &str) -> impl Iterator<Item = &'static str> + use<> {
    REVERSE
        .get(stem)
        .into_iter()
        .flat_map(|v| v.split('|'))
        .filter(|w| !w.is_empty())
}

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
    "为何",
    "么",
    "之",
    "也",
    "了",
    "些",
    "人们",
    "什么",
    "什么时候",
    "他",
    "他们",
    "们",
    "以",
    "位",
    "何",
    "何人",
    "何地",
    "何处",
    "何时",
    "何种",
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
    // Question and filler words of colloquial questions: they say how something is asked,
    // not what about.
    "的话",
    "多久",
    "多长时间",
    "什么时候",
    "几个",
    "几次",
    "几年",
    "什么的",
    "做什么",
    "干什么",
    "干嘛",
    "为啥",
    "啥",
    "咋",
    "咋样",
    "是不是",
    "是怎么",
    "是什么",
    "什么样",
    "怎么办",
    "怎么做",
    "怎么弄",
    "怎么样",
    "怎样才能",
    "怎么才能",
    "能不能",
    "可不可以",
    "会不会",
    "要不要",
    "有什么",
    "有哪些",
    "到底",
    "究竟",
    "呢",
    "嘛",
    "吧",
    "某",
    "某个",
    "某些",
    "某一",
    "某一种",
    "一种",
    "一下子",
    "一样",
    "还是",
    "或者",
    "而且",
    "然后",
    "那么",
    "这样",
    "那样",
    "这么",
    "那么",
    "这种",
    "那种",
    "这里",
    "那里",
    "哪儿",
    "已经",
    "时候",
    "的时候",
    "应该",
    "需要",
    "我的",
    "你的",
    "它的",
    "自己",
    "明明",
    "就是",
    "只是",
    "可是",
    "但是",
    "因为",
    "所以",
    "如果",
    "为了",
    "之后",
    "以后",
    "时",
    "着",
    "啦",
    "才",
    "再",
    "很",
    "太",
    "挺",
];

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

    /// Number of entries in each source: (glossary, research, general, cedict).
    pub fn sizes(&self) -> (usize, usize, usize, usize) {
        (
            self.glossary.len(),
            RESEARCH.len(),
            GENERAL.len(),
            CEDICT.len(),
        )
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
    /// The path chosen minimises the sum of word costs, a stand-in for −log P of a unigram
    /// word model whose tables carry no frequencies: a dictionary word of two or more
    /// characters costs 1 (0.75 when the corpus writes it, 0.9 for a glossary word), a
    /// single-character stopword 0.8 (particles are the commonest words), another
    /// single-character word 1.5 and an unknown character 2. So two words beat one word
    /// plus a stray character (一同步 → 一 + 同步, not 一同 + 步) and a particle is cut off
    /// before a word is split (某个头文件 → 某个 + 头文件). Ties keep the longer first word.
    ///
    /// Each source is probed at most once per prefix length (at most
    /// `MAX_WORD_CHARS` per character), so the work is linear in the run's length.
    pub fn expand_in(&self, run: &str, attested: impl Fn(&str) -> bool) -> Vec<Expansion> {
        let starts: Vec<usize> = run
            .char_indices()
            .map(|(i, _)| i)
            .chain([run.len()])
            .collect();
        let n = starts.len() - 1;
        // Every word starting at each character: (length, cost, match).
        let mut words: Vec<Vec<(usize, f32, Found<'_>)>> = Vec::with_capacity(n);
        for i in 0..n {
            let mut here = Vec::new();
            for len in 1..=MAX_WORD_CHARS.min(n - i) {
                let prefix = &run[starts[i]..starts[i + len]];
                let mut more = len < self.glossary_max_chars;
                let mut matched: Option<Found<'_>> = None;
                if is_zh_stopword(prefix) {
                    matched = Some(Found::Stop);
                } else if let Some(t) = self.glossary.get(prefix) {
                    matched = Some(Found::Word(Source::Glossary, Translations::Owned(t)));
                }
                for (source, table) in [
                    (Source::Research, RESEARCH),
                    (Source::General, GENERAL),
                    (Source::Cedict, CEDICT),
                ] {
                    let probe = probe_table(table, prefix);
                    more |= probe.longer;
                    if matched.is_none() {
                        matched = probe
                            .exact
                            .map(|t| Found::Word(source, Translations::Raw(t)));
                    }
                }
                if let Some(m) = matched {
                    let cost = match (&m, len) {
                        (Found::Stop, 1) => 0.8,
                        (_, 1) => 1.5,
                        (Found::Word(Source::Glossary, _), _) => 0.9,
                        _ if attested(prefix) => 0.75,
                        _ => 1.0,
                    };
                    here.push((len, cost, m));
                } else if len == 1 {
                    here.push((1, 2.0, Found::Unknown));
                }
                if !more {
                    break;
                }
            }
            words.push(here);
        }
        // best[i]: the cheapest segmentation of the run's suffix from character i, and the
        // index (into words[i]) of its first word.
        let mut best: Vec<(f32, usize)> = vec![(0.0, 0); n + 1];
        for i in (0..n).rev() {
            let mut pick = (f32::INFINITY, 0);
            // Longest first, so a tie keeps the longer word.
            for (k, (len, cost, _)) in words[i].iter().enumerate().rev() {
                let total = cost + best[i + len].0;
                if total < pick.0 {
                    pick = (total, k);
                }
            }
            best[i] = pick;
        }
        let mut out = Vec::new();
        let mut i = 0;
        while i < n {
            let k = best[i].1;
            let (len, _, found) = words[i].swap_remove(k);
            let word = run[starts[i]..starts[i + len]].to_owned();
            // Translations are split into strings only for the words on the chosen path.
            let (source, translations, stopword) = match found {
                Found::Word(s, Translations::Owned(t)) => (Some(s), t.clone(), false),
                Found::Word(s, Translations::Raw(t)) => (Some(s), split_translations(t), false),
                Found::Stop => (None, Vec::new(), true),
                Found::Unknown => (None, Vec::new(), false),
            };
            out.push(Expansion {
                word,
                translations,
                source,
                stopword,
            });
            i += len;
        }
        out
    }

    /// The translations of exactly the folded word `word`, from the first source that has
    /// it (glossary, then the curated tables, then CC-CEDICT: the order segmentation
    /// prefers), without segmenting; `None` for a stopword or a word no source has.
    pub fn word(&self, word: &str) -> Option<Vec<String>> {
        if is_zh_stopword(word) {
            return None;
        }
        if let Some(t) = self.glossary.get(word) {
            return Some(t.clone());
        }
        [RESEARCH, GENERAL, CEDICT]
            .into_iter()
            .find_map(|table| table.get(word))
            .map(split_translations)
    }
}

/// What a candidate word is: a stopword, a dictionary word, or an unknown character.
enum Found<'a> {
    Stop,
    Word(Source, Translations<'a>),
    Unknown,
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
            assert_eq!(lex.word(word), Some(ex[0].translations.clone()), "{word}");
        }
        assert_eq!(lex.word("模型"), Some(vec!["checkpoint".to_string()]));
        assert_eq!(lex.word("的"), None, "a stopword");
        assert_eq!(lex.word("学的"), None, "not a word");
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
    fn words_the_corpus_writes_win_segmentation_ties() {
        let lex = Lexicon::default();
        // 同步 and 步骤 are both words; with 同步骤 the corpus decides.
        let ex = lex.expand_in("同步骤", |w| w == "步骤");
        assert_eq!(ex[1].word, "步骤", "{ex:?}");
        let ex = lex.expand_in("同步骤", |w| w == "同步");
        assert_eq!(ex[0].word, "同步", "{ex:?}");
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
