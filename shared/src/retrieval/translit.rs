//! Matching transliterated names: 贾里德 (jia li de) → "Jared", 胡格诺 → "Huguenot".
//!
//! Chinese writes foreign names with characters chosen for their sound, so no dictionary
//! lists them all. Both sides are reduced to a consonant skeleton: English by spelling
//! rules (silent post-vocalic r, `th` → T, soft `c`/`g`, ...), Chinese through each
//! character's pinyin (initial consonant, plus N for a nasal final). Skeletons that are
//! equal, or one edit apart when long enough, match. Only words the corpus writes
//! capitalised (proper nouns) are candidates, which keeps the coarse key from matching
//! ordinary words.

use super::table::{sorted_table, SortedTable};
use rustc_hash::FxHashMap;

/// One reading per character, and a `1` column on characters Chinese mostly uses to
/// spell foreign names (derived from CC-CEDICT, see `data/CEDICT-NOTICE.md`).
const PINYIN: SortedTable = sorted_table!("pinyin");

/// Consonant classes. Voiced and voiceless pairs share a class because Chinese
/// transliteration does not keep them apart.
fn english_skeleton(word: &str) -> String {
    let b = word.as_bytes();
    let vowel = |i: usize| i < b.len() && matches!(b[i], b'a' | b'e' | b'i' | b'o' | b'u' | b'y');
    let mut out = Skeleton::default();
    let mut i = 0;
    while i < b.len() {
        if vowel(i) {
            out.vowel();
        }
        let rest = &b[i..];
        let (class, used): (Option<char>, usize) = match rest {
            [b's', b'c', b'h', ..] => (Some('S'), 3),
            [b's', b'h', ..] => (Some('S'), 2),
            [b'c', b'h', ..] => (Some('J'), 2),
            [b'p', b'h', ..] => (Some('F'), 2),
            [b't', b'h', ..] => (Some('T'), 2),
            [b'c', b'k', ..] => (Some('K'), 2),
            [b'g', b'h', ..] => (None, 2),
            [b'q', b'u', ..] => (Some('K'), 2),
            [b'c', b'e' | b'i' | b'y', ..] => (Some('S'), 1),
            [b'g', b'e' | b'i', ..] => (Some('J'), 1),
            [b'x', ..] => {
                out.push('K');
                (Some('S'), 1)
            }
            [b'b' | b'p', ..] => (Some('P'), 1),
            [b'd' | b't', ..] => (Some('T'), 1),
            [b'c' | b'g' | b'k' | b'q', ..] => (Some('K'), 1),
            [b'j', ..] => (Some('J'), 1),
            [b's' | b'z', ..] => (Some('S'), 1),
            [b'f' | b'v' | b'w', ..] => (Some('F'), 1),
            [b'l', ..] => (Some('L'), 1),
            // An r after a vowel and before a consonant (or at the end) is not heard.
            [b'r', ..] if i > 0 && vowel(i - 1) && !vowel(i + 1) => (None, 1),
            [b'r', ..] => (Some('L'), 1),
            [b'm', ..] => (Some('M'), 1),
            [b'n', ..] => (Some('N'), 1),
            [b'h', ..] if vowel(i + 1) => (Some('H'), 1),
            _ => (None, 1),
        };
        if let Some(c) = class {
            out.push(c);
        }
        i += used;
    }
    out.0
}

/// A skeleton being built: the classes so far, and whether a vowel came since the last.
#[derive(Default)]
struct Skeleton(String, bool);

impl Skeleton {
    /// Appends a class unless it repeats the last one with no vowel between (double
    /// letters, or a nasal final before a nasal initial, sound once).
    fn push(&mut self, c: char) {
        if self.1 || !self.0.ends_with(c) {
            self.0.push(c);
        }
        self.1 = false;
    }

    fn vowel(&mut self) {
        self.1 = true;
    }
}

/// The skeleton of one pinyin syllable, appended to `out`.
fn push_syllable(out: &mut Skeleton, syl: &str) {
    if syl == "er" {
        // 尔 transliterates an r or l sound.
        out.push('L');
        return;
    }
    let initial = match syl.as_bytes() {
        [b'z' | b'c', b'h', ..] => Some('J'),
        [b's', b'h', ..] => Some('S'),
        [b'b' | b'p', ..] => Some('P'),
        [b'd' | b't', ..] => Some('T'),
        [b'g' | b'k', ..] => Some('K'),
        [b'j' | b'q', ..] => Some('J'),
        [b'x' | b's' | b'z' | b'c', ..] => Some('S'),
        [b'f' | b'w', ..] => Some('F'),
        [b'l' | b'r', ..] => Some('L'),
        [b'm', ..] => Some('M'),
        [b'n', ..] => Some('N'),
        [b'h', ..] => Some('H'),
        _ => None,
    };
    if let Some(c) = initial {
        out.push(c);
    }
    // Every syllable has a vowel after its initial.
    out.vowel();
    if syl.len() > 1 && (syl.ends_with('n') || syl.ends_with("ng")) {
        out.push('N');
    }
}

/// The pinyin of one character, if known.
fn pinyin_of(c: char) -> Option<&'static str> {
    reading(c).map(|(syllable, _)| syllable)
}

/// True for a character mostly used to spell foreign names (德, 贾, 诺, 曼...). Only runs
/// of these are tried as names: ordinary words (黑豹队, 首歌) would otherwise match
/// proper nouns by accident.
pub(crate) fn is_translit_char(c: char) -> bool {
    reading(c).is_some_and(|(_, name)| name)
}

/// True for a character with a reading, which a transliterated name may hold.
pub(crate) fn has_reading(c: char) -> bool {
    reading(c).is_some()
}

/// A character's `(syllable, transliteration flag)`.
fn reading(c: char) -> Option<(&'static str, bool)> {
    let mut buf = [0u8; 4];
    let v = PINYIN.get(c.encode_utf8(&mut buf))?;
    let (syllable, flag) = v.split_once('\t').unwrap_or((v, ""));
    Some((syllable, flag == "1"))
}

/// The skeleton of a run of Han characters, or `None` if a character has no reading.
pub(crate) fn han_skeleton(chars: &[char]) -> Option<String> {
    #[cfg(test)]
    steps::SKELETONS.with(|n| n.set(n.get() + 1));
    let mut out = Skeleton::default();
    for &c in chars {
        push_syllable(&mut out, pinyin_of(c)?);
    }
    Some(out.0)
}

/// Longest run of characters tried as one name. Transliterations of a single name run to
/// about six characters (阿诺德 3, 威腾博格 4, 布鲁克海文 5); longer spans are several
/// names or not names, and capping them keeps matching linear in the query's length.
pub const MAX_NAME_CHARS: usize = 8;

/// Shortest skeleton that may match at all (two consonants), and the shortest that may
/// match with one edit (shorter keys collide with too many words).
const MIN_EXACT: usize = 2;
const MIN_FUZZY: usize = 4;
/// More candidates than this means the key is too coarse to say which name is meant.
const MAX_MATCHES: usize = 3;

/// Proper nouns of a corpus, indexed by skeleton and by each single-deletion variant of
/// it, so a lookup finds everything within one edit without scanning the names.
///
/// Both indexes are sorted arrays of (hash of the key, name) rather than maps of strings:
/// a site with tens of thousands of proper nouns (an API reference's class names) has
/// about seven variants per name, and a string and a list per variant held 16 MiB for the
/// JDK's API docs and took a good part of a cold start to build. A lookup takes the run
/// of its key's hash and checks each name against the key itself, so a hash shared by
/// two keys changes nothing; runs keep the order the names came in, which is the order a
/// lookup returns them.
#[derive(Debug, Clone, Default)]
pub(crate) struct NameMatcher {
    /// (skeleton, index term) of each name kept, in the order given.
    names: Vec<(Box<str>, Box<str>)>,
    /// (hash of its skeleton, name), sorted by hash.
    exact: Vec<(u64, u32)>,
    /// (hash of a variant, name, the byte of the name's skeleton the variant drops:
    /// [`WHOLE`] for the skeleton itself), sorted by hash.
    near: Vec<(u64, (u32, u16))>,
}

/// A [`NameMatcher`] variant that drops nothing.
const WHOLE: u16 = u16::MAX;

/// The hash a [`NameMatcher`] keys a skeleton or variant by.
fn key_hash(key: &str) -> u64 {
    use std::hash::Hasher;
    let mut h = rustc_hash::FxHasher::default();
    h.write(key.as_bytes());
    h.finish()
}

/// The entries of a sorted `(hash, ..)` array whose hash is `hash`, in order.
fn run<T: Copy>(sorted: &[(u64, T)], hash: u64) -> &[(u64, T)] {
    let from = sorted.partition_point(|e| e.0 < hash);
    let to = from + sorted[from..].partition_point(|e| e.0 == hash);
    &sorted[from..to]
}

impl NameMatcher {
    /// Builds the matcher from `(lowercase word, index term)` pairs of proper nouns.
    pub(crate) fn new(names: impl IntoIterator<Item = (String, String)>) -> Self {
        let mut m = Self::default();
        for (word, term) in names {
            let sk = english_skeleton(&word);
            // Skeletons are ASCII and short (a word's consonants); a longer one is no name.
            if sk.len() < MIN_EXACT || sk.len() >= usize::from(WHOLE) {
                continue;
            }
            let name = m.names.len() as u32;
            m.exact.push((key_hash(&sk), name));
            if sk.len() >= MIN_FUZZY - 1 {
                m.near.push((key_hash(&sk), (name, WHOLE)));
                for i in 0..sk.len() {
                    let variant = format!("{}{}", &sk[..i], &sk[i + 1..]);
                    m.near.push((key_hash(&variant), (name, i as u16)));
                }
            }
            m.names.push((sk.into(), term.into()));
        }
        // Stable: each run keeps the order the names (and their variants) came in.
        m.exact.sort_by_key(|e| e.0);
        m.near.sort_by_key(|e| e.0);
        m.names.shrink_to_fit();
        m
    }

    /// True when the corpus has no proper nouns.
    pub(crate) fn is_empty(&self) -> bool {
        self.names.is_empty()
    }

    /// Index terms of the names with exactly this skeleton, each once, in order.
    fn exact_terms(&self, skeleton: &str) -> Vec<String> {
        let mut out: Vec<String> = Vec::new();
        for &(_, name) in run(&self.exact, key_hash(skeleton)) {
            let (sk, term) = &self.names[name as usize];
            if **sk == *skeleton && !out.iter().any(|t| **t == **term) {
                out.push(term.to_string());
            }
        }
        out
    }

    /// Index terms of the names with exactly this skeleton (none if ambiguous).
    pub(crate) fn exact(&self, skeleton: &str) -> Vec<String> {
        let terms = self.exact_terms(skeleton);
        if skeleton.len() >= MIN_EXACT && terms.len() <= MAX_MATCHES {
            terms
        } else {
            Vec::new()
        }
    }

    /// Index terms of the names one insertion, deletion or substitution away from a long
    /// skeleton (none if ambiguous).
    pub(crate) fn near(&self, skeleton: &str) -> Vec<String> {
        let mut out = self.all_near(skeleton);
        if out.len() > MAX_MATCHES {
            out.clear();
        }
        out
    }

    /// Index terms of every name one edit away from a long skeleton, however many.
    fn all_near(&self, skeleton: &str) -> Vec<String> {
        if skeleton.len() < MIN_FUZZY {
            return Vec::new();
        }
        let mut out: Vec<String> = Vec::new();
        for v in variants(skeleton) {
            for &(_, (name, dropped)) in run(&self.near, key_hash(&v)) {
                let (sk, term) = &self.names[name as usize];
                let is_variant = match dropped {
                    WHOLE => **sk == *v,
                    i => {
                        let i = usize::from(i);
                        v.len() + 1 == sk.len() && v[..i] == sk[..i] && v[i..] == sk[i + 1..]
                    }
                };
                if is_variant && within_one_edit(sk, skeleton) && !out.iter().any(|t| **t == **term)
                {
                    out.push(term.to_string());
                }
            }
        }
        out
    }
}

/// Shortest dictionary word tried against the site's names by spelling: shorter words
/// are common words more often than names, and one edit makes a different short word.
const MIN_RESPELL_LETTERS: usize = 5;

impl NameMatcher {
    /// The site's name a dictionary's spelling of it stands for, when the two differ
    /// (CC-CEDICT's "khubilai" for the site's "Kublai"): the one name (index term) whose
    /// skeleton is equal or one edit away (among any number of such names), whose letters
    /// are at most 1 apart by [`edit_distance`] (2 when either word has seven letters or
    /// more), and whose first letter is the same. `None` when there is no such name or
    /// more than one at the least distance.
    pub(crate) fn respelling(&self, word: &str) -> Option<String> {
        if word.len() < MIN_RESPELL_LETTERS || !word.is_ascii() {
            return None;
        }
        let skeleton = english_skeleton(word);
        let mut best: Option<(usize, String)> = None;
        let mut tied = false;
        // Every name near in sound, however many: the spelling picks among them.
        let mut candidates = self.exact_terms(&skeleton);
        candidates.extend(self.all_near(&skeleton));
        for term in candidates {
            if term == word || term.as_bytes().first() != word.as_bytes().first() {
                continue;
            }
            let limit = if term.len().max(word.len()) >= 7 {
                2
            } else {
                1
            };
            let d = edit_distance(word.as_bytes(), term.as_bytes());
            if d > limit {
                continue;
            }
            match &best {
                Some((b, t)) if *b == d && *t != term => tied = true,
                Some((b, _)) if *b <= d => {}
                _ => {
                    best = Some((d, term));
                    tied = false;
                }
            }
        }
        best.filter(|_| !tied).map(|(_, t)| t)
    }
}

/// Edit distance between two short lowercase words, where replacing a consonant costs 2
/// (as much as deleting one letter and inserting another) and replacing a vowel with
/// another 1: spellings of one name differ in vowels and in letters dropped or added
/// (Khubilai, Kublai; Muhammad, Mohammed), while another consonant makes another name
/// (Dupont, Dumont).
fn edit_distance(a: &[u8], b: &[u8]) -> usize {
    let vowel = |c: u8| matches!(c, b'a' | b'e' | b'i' | b'o' | b'u' | b'y');
    let mut row: Vec<usize> = (0..=b.len()).collect();
    for (i, &x) in a.iter().enumerate() {
        let mut diagonal = row[0];
        row[0] = i + 1;
        for (j, &y) in b.iter().enumerate() {
            let cost = match (x == y, vowel(x) && vowel(y)) {
                (true, _) => 0,
                (false, true) => 1,
                (false, false) => 2,
            };
            let substitution = diagonal + cost;
            diagonal = row[j + 1];
            row[j + 1] = substitution.min(row[j] + 1).min(row[j + 1] + 1);
        }
    }
    row[b.len()]
}

/// The skeleton itself and every string with one class deleted.
fn variants(sk: &str) -> Vec<String> {
    let mut out = vec![sk.to_owned()];
    for i in 0..sk.len() {
        out.push(format!("{}{}", &sk[..i], &sk[i + 1..]));
    }
    out
}

/// Levenshtein distance ≤ 1 (skeletons are ASCII).
fn within_one_edit(a: &str, b: &str) -> bool {
    let (a, b) = (a.as_bytes(), b.as_bytes());
    let (short, long) = if a.len() <= b.len() { (a, b) } else { (b, a) };
    if long.len() - short.len() > 1 {
        return false;
    }
    let prefix = short.iter().zip(long).take_while(|(x, y)| x == y).count();
    if short.len() == long.len() {
        short[prefix + 1.min(short.len() - prefix)..] == long[prefix + 1.min(long.len() - prefix)..]
    } else {
        short[prefix..] == long[prefix + 1..]
    }
}

/// Collects proper-noun candidates from raw text: words (≥ 3 ASCII letters) whose
/// capitalised occurrences are at least as frequent as their lowercase ones.
#[derive(Debug, Default)]
pub(crate) struct NameCounter {
    counts: FxHashMap<String, (u32, u32)>,
}

impl NameCounter {
    /// Counts the words of one text.
    pub(crate) fn add(&mut self, text: &str) {
        for word in text.split(|c: char| !c.is_ascii_alphabetic()) {
            if word.len() < 3 {
                continue;
            }
            let capital = word.as_bytes()[0].is_ascii_uppercase();
            let entry = self.counts.entry(word.to_ascii_lowercase()).or_default();
            if capital {
                entry.0 += 1;
            } else {
                entry.1 += 1;
            }
        }
    }

    /// The lowercase words that look like proper nouns.
    pub(crate) fn names(self) -> impl Iterator<Item = String> {
        self.counts
            .into_iter()
            .filter(|(_, (cap, low))| cap >= low && *cap > 0)
            .map(|(w, _)| w)
    }
}

/// Counts of the work query analysis does, for the tests that bound it.
#[cfg(test)]
pub(crate) mod steps {
    use std::cell::Cell;

    thread_local! {
        /// Han skeletons computed on this thread.
        pub(crate) static SKELETONS: Cell<usize> = const { Cell::new(0) };
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn han(s: &str) -> String {
        han_skeleton(&s.chars().collect::<Vec<_>>()).unwrap()
    }

    #[test]
    fn english_and_chinese_spellings_of_names_share_skeletons() {
        for (zh, en) in [
            ("贾里德", "jared"),
            ("卡卡", "gaga"),
            ("诺曼", "norman"),
            ("路德", "luther"),
            ("梅尔菲", "melfi"),
            ("威腾博格", "wittenberg"),
            ("麦特琳", "matlin"),
            ("舍勒", "scheele"),
        ] {
            assert_eq!(han(zh), english_skeleton(en), "{zh} vs {en}");
        }
    }

    #[test]
    fn one_edit_apart_matches_only_long_skeletons() {
        assert!(within_one_edit("HKN", "HKNT"));
        assert!(within_one_edit("HKNP", "HKNT"));
        assert!(within_one_edit("HKNT", "HKNT"));
        assert!(!within_one_edit("HKN", "HKTP"));
        assert!(!within_one_edit("KL", "KLMN"));
        let m = NameMatcher::new([("huguenot".to_string(), "huguenot".to_string())]);
        assert_eq!(m.near(&han("胡格诺派")), vec!["huguenot"]);
        assert!(
            m.near(&han("胡格诺")).is_empty(),
            "three classes are too few to guess"
        );
        let short = NameMatcher::new([("gaga".to_string(), "gaga".to_string())]);
        assert!(
            short.near("KKL").is_empty(),
            "short names need an exact match"
        );
        assert_eq!(short.exact("KK"), vec!["gaga"]);
        let many = NameMatcher::new(
            ["kim", "kang", "king", "kong"].map(|w| (w.to_string(), w.to_string())),
        );
        assert!(
            many.exact("KN").is_empty(),
            "four names share KN: too ambiguous"
        );
    }

    #[test]
    fn a_dictionary_spelling_finds_the_sites_spelling_of_the_name() {
        let m = NameMatcher::new(
            [
                "kublai", "cable", "keppel", "beijing", "iqbal", "calabria", "khoroo",
            ]
            .map(|w| (w.to_string(), w.to_string())),
        );
        assert_eq!(m.respelling("khubilai").as_deref(), Some("kublai"));
        // Too far apart in letters, or another first letter: not the same name.
        assert_eq!(m.respelling("kabul"), None);
        assert_eq!(m.respelling("peking"), None);
        // The site's own spelling needs no respelling; short words are not tried.
        assert_eq!(m.respelling("kublai"), None);
        assert_eq!(m.respelling("cabl"), None);
        assert_eq!(edit_distance(b"khubilai", b"kublai"), 2);
        assert_eq!(edit_distance(b"", b"abc"), 3);
        assert_eq!(edit_distance(b"kitten", b"sitting"), 4);
        assert_eq!(edit_distance(b"muhammad", b"mohammed"), 2);
        let dumont = NameMatcher::new([("dumont".to_string(), "dumont".to_string())]);
        assert_eq!(
            dumont.respelling("dupont"),
            None,
            "another consonant, another name"
        );
    }

    #[test]
    fn only_mostly_capitalised_words_count_as_names() {
        let mut c = NameCounter::default();
        c.add("Jared Allen played. The defense of Jared. the defense held; Defense wins.");
        let mut names: Vec<String> = c.names().collect();
        names.sort();
        // "the" counts too (once each way); callers drop stopwords before matching.
        assert_eq!(names, vec!["allen", "jared", "the"]);
    }

    #[test]
    fn every_pinyin_line_is_found() {
        for (k, v) in PINYIN.entries().step_by(97) {
            let syllable = v.split('\t').next().unwrap();
            assert_eq!(pinyin_of(k.chars().next().unwrap()), Some(syllable));
        }
        assert_eq!(pinyin_of('a'), None);
    }

    #[test]
    fn name_characters_are_flagged_and_ordinary_ones_are_not() {
        for c in ['贾', '德', '诺', '曼', '卡'] {
            assert!(is_translit_char(c), "{c}");
        }
        for c in ['黑', '首', '大', '的'] {
            assert!(!is_translit_char(c), "{c}");
        }
    }
}
