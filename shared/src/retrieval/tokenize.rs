//! Text analysis shared by documents and queries.
//!
//! Text is folded (full-width forms to ASCII, lowercase) and cut into runs of one script:
//! Latin/digit runs become English terms (stopwords dropped, Snowball-stemmed), Han runs
//! become overlapping character bigrams (a lone character stays a unigram). Bigrams let
//! Chinese documents be searched without a segmenter; the query side additionally expands
//! Han runs into English through the lexicon (see `lexicon.rs`).

use rust_stemmers::{Algorithm, Stemmer};
use rustc_hash::{FxHashMap, FxHashSet};
use std::sync::LazyLock;

/// Which script a run of text belongs to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Script {
    /// Letters and digits of alphabetic scripts (Latin, Greek, Cyrillic, kana, ...).
    Latin,
    /// CJK ideographs.
    Han,
}

/// A maximal run of one script, already folded.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Run {
    /// The script of every character in the run.
    pub script: Script,
    /// The folded text of the run.
    pub text: String,
}

/// Folds one character: full-width ASCII variants and the ideographic space to their ASCII
/// forms, then lowercase. Returns the folded character (lowercasing never expands for the
/// characters we keep, because multi-char lowercase forms only arise for a few letters whose
/// first char is what search needs).
pub fn fold_char(c: char) -> char {
    let c = match c {
        '\u{FF01}'..='\u{FF5E}' => char::from_u32(c as u32 - 0xFEE0).unwrap_or(c),
        '\u{3000}' => ' ',
        _ => c,
    };
    if c.is_ascii() {
        c.to_ascii_lowercase()
    } else {
        c.to_lowercase().next().unwrap_or(c)
    }
}

/// True for CJK unified ideographs (basic block, extensions A–F and compatibility forms).
pub fn is_han(c: char) -> bool {
    matches!(c as u32,
        0x4E00..=0x9FFF | 0x3400..=0x4DBF | 0x20000..=0x2EBEF | 0xF900..=0xFAFF | 0x2F800..=0x2FA1F)
}

/// Cuts folded text into runs of one script; everything that is neither a Han character
/// nor alphanumeric (spaces, punctuation, emoji, symbols) separates runs and is dropped,
/// except spaces between two Han characters: Chinese is written without them, so a space
/// there ("6600万年 前", "该公司 安装了") is a typing habit, not a word boundary, and the
/// bigram across it is kept.
pub fn runs(text: &str) -> Vec<Run> {
    let mut folded = String::new();
    let mut spans = Vec::new();
    run_spans(text, &mut folded, &mut spans);
    spans
        .into_iter()
        .map(|(script, range)| Run {
            script,
            text: folded[range.start as usize..range.end as usize].to_owned(),
        })
        .collect()
}

/// [`runs`] without a string per run: clears `folded` and `spans`, then writes the runs'
/// folded texts end to end into `folded` and, per run, its script and byte range there
/// (buffers a query reuses from call to call).
pub(crate) fn run_spans(
    text: &str,
    folded: &mut String,
    spans: &mut Vec<(Script, std::ops::Range<u32>)>,
) {
    folded.clear();
    spans.clear();
    // The open run: its script and where it starts in `folded`.
    let mut current: Option<(Script, usize)> = None;
    // Spaces seen right after a Han character, not yet known to be inside a Han run.
    let mut spaced = false;
    for raw in text.chars() {
        let c = fold_char(raw);
        let script = if is_han(c) {
            Some(Script::Han)
        } else if c.is_alphanumeric() {
            Some(Script::Latin)
        } else {
            None
        };
        match (script, current) {
            (Some(s), Some((open, _))) if open == s && (!spaced || s == Script::Han) => {
                folded.push(c)
            }
            (Some(s), _) => {
                if let Some((open, start)) = current.take() {
                    spans.push((open, start as u32..folded.len() as u32));
                }
                current = Some((s, folded.len()));
                folded.push(c);
            }
            (None, Some((Script::Han, _))) if c.is_whitespace() => {
                spaced = true;
                continue;
            }
            (None, _) => {
                if let Some((open, start)) = current.take() {
                    spans.push((open, start as u32..folded.len() as u32));
                }
            }
        }
        spaced = false;
    }
    if let Some((open, start)) = current {
        spans.push((open, start as u32..folded.len() as u32));
    }
}

/// True for the characters that join the parts of a code identifier or file name
/// (`v-if`, `sys_platform`, `uv.lock`, `v-model.lazy`).
fn is_connector(c: char) -> bool {
    matches!(c, '-' | '_' | '.')
}

/// Calls `emit` with each identifier of `text` written with connectors (`v-if`,
/// `v-model.lazy`, `sys_platform`, `--no-cache` → `no-cache`, `3.8`), folded and whole.
/// Their parts are terms anyway ([`runs`] splits at the connectors); the whole form lets a
/// query naming `v-if` find the page that writes it rather than every page with a "v".
/// Connectors at either end are dropped, so a sentence's full stop is not part of a word.
pub(crate) fn compounds(text: &str, emit: &mut impl FnMut(String)) {
    let mut token = String::new();
    let mut flush = |token: &mut String| {
        let whole = token.trim_matches(is_connector);
        if whole.contains(is_connector) {
            emit(whole.to_owned());
        }
        token.clear();
    };
    for raw in text.chars() {
        let c = fold_char(raw);
        if (c.is_alphanumeric() && !is_han(c)) || is_connector(c) {
            token.push(c);
        } else {
            flush(&mut token);
        }
    }
    flush(&mut token);
}

/// The two-part identifiers `text` writes, each as two parts around one connector
/// ([`compounds`]'s `ab-cd`, and `ab-cd` and `cd_ef` of `ab-cd_ef`), folded.
pub(crate) fn two_part_identifiers(text: &str) -> FxHashSet<String> {
    let mut pairs = FxHashSet::default();
    compounds(text, &mut |t| {
        // Where the part before the last connector seen starts, and where the next begins.
        let (mut pair_start, mut part_start) = (None, 0);
        for (i, c) in t.char_indices() {
            if is_connector(c) {
                if let Some(p) = pair_start {
                    pairs.insert(t[p..i].to_owned());
                }
                pair_start = Some(part_start);
                part_start = i + c.len_utf8();
            }
        }
        if let Some(p) = pair_start {
            pairs.insert(t[p..].to_owned());
        }
    });
    pairs
}

/// True for the ASCII symbols operators are written with (`&&`, `+`, `//`, `=>`, `::`,
/// `%`, `?`). `.` and `,` end sentences, brackets and quotes wrap, `_` joins words: none
/// of them is one.
fn is_operator_char(c: char) -> bool {
    matches!(
        c,
        '!' | '#'
            | '$'
            | '%'
            | '&'
            | '*'
            | '+'
            | '-'
            | '/'
            | ':'
            | '<'
            | '='
            | '>'
            | '?'
            | '@'
            | '\\'
            | '^'
            | '|'
            | '~'
    )
}

/// The longest operator kept, in symbols (`>>=`, `===`, `<=>`); a longer run is a rule
/// line or ASCII art, not something a visitor asks about.
const MAX_OPERATOR_LEN: usize = 3;

/// Calls `emit` with each operator `text` writes standing alone: a run of up to
/// [`MAX_OPERATOR_LEN`] operator symbols with no letter, digit or `_` on either side and
/// no closing bracket or full stop before it (`a && b`, "between & and &&", `` `=>` ``),
/// as written. On a programming site the symbol is the name of what a visitor asks about
/// ("the difference between & and &&", "overload the + operator"), and [`runs`] drops it.
/// A symbol touching a word is part of that word's spelling (`x->y`, `--no-cache`, `C++`,
/// `#lang`, `&str`, `<Leader>`) and is not one.
///
/// `markdown` is for a knowledge base's text, which is Markdown: there the heading and
/// list marks that open a line (`#`, `##`, `-`, `*`, `+`, `>`) and a lone `|`, which
/// separates a table's cells, are its layout, not its words. A visitor's question is plain
/// text, but a lone `|` is never one of its terms either, so that both sides agree.
pub(crate) fn operators<'t>(text: &'t str, markdown: bool, mut emit: impl FnMut(&'t str)) {
    let is_word = |c: char| c.is_alphanumeric() || c == '_';
    // Where the open run of symbols starts, and whether only spaces precede it on its line.
    let mut run: Option<(usize, bool)> = None;
    let mut line_start = true;
    let mut glued = false;
    let mut close = |start: usize, at_line_start: bool, end: usize, next_word: bool| {
        let op = &text[start..end];
        let layout = op == "|"
            || (markdown
                && at_line_start
                && (matches!(op, "-" | "*" | "+" | ">") || op.bytes().all(|b| b == b'#')));
        if !next_word && op.len() <= MAX_OPERATOR_LEN && !layout {
            emit(op);
        }
    };
    for (i, c) in text.char_indices() {
        if is_operator_char(c) {
            if run.is_none() {
                // A run right after a word is part of its spelling: skipped by
                // `glued` until the next space or wrapper.
                run = (!glued).then_some((i, line_start));
            }
            line_start = false;
            continue;
        }
        if let Some((start, at_line_start)) = run.take() {
            close(start, at_line_start, i, is_word(c));
        }
        // Symbols skip this line, so a run glued to a word (`x->`) is skipped whole; so is
        // one after a closing bracket or a full stop, the sentence's punctuation ("(a ||
        // b)?", "e.g.:").
        glued = is_word(c) || matches!(c, ')' | ']' | '}' | '.' | ',');
        if c == '\n' {
            line_start = true;
        } else if !c.is_whitespace() {
            line_start = false;
        }
    }
    if let Some((start, at_line_start)) = run {
        close(start, at_line_start, text.len(), false);
    }
}

/// The operators of a knowledge base's (Markdown) text, as [`operators`] finds them: what
/// the index holds as marks beside the text's terms.
pub(crate) fn operator_marks(text: &str) -> Vec<&str> {
    let mut ops = Vec::new();
    operators(text, true, |op| ops.push(op));
    ops
}

/// The mark of a name that is an English stopword ("where", "with", "if", "FROM"): the
/// naming fields hold `~where` beside their terms, and a question quoting the word as a
/// name ([`keyword_marks`]'s other side, in the query's analysis) asks for it there.
pub(crate) const KEYWORD_MARK: char = '~';

/// Most Latin words a naming line (a title, a heading) may have for its stopwords to stand
/// marked ([`KEYWORD_MARK`]): "where", "The with statement", "UPDATE FROM", `\if
/// (section-label)` name a keyword; in a longer line ("Working with missing data in a
/// DataFrame") the stopword is just English.
pub(crate) const KEYWORD_LINE_WORDS: usize = 4;

/// The stopwords of `text`'s short lines ([`KEYWORD_LINE_WORDS`]), lowercase and marked
/// ([`KEYWORD_MARK`]): what the naming fields hold so a name that is a stopword can be
/// found. Digits are not words ("8.5. The with statement" has three).
pub(crate) fn keyword_marks(text: &str) -> Vec<String> {
    let mut marks = Vec::new();
    for line in text.lines() {
        let words = || {
            line.split(|c: char| !c.is_alphanumeric())
                .filter(|w| w.chars().any(|c| c.is_ascii_alphabetic()))
        };
        if words().count() > KEYWORD_LINE_WORDS {
            continue;
        }
        for word in words() {
            let lower = word.to_ascii_lowercase();
            if is_stopword(&lower) {
                marks.push(format!("{KEYWORD_MARK}{lower}"));
            }
        }
    }
    marks
}

/// English stopwords: function words that carry no topic. The list is larger than
/// Lucene's 33 words on purpose: query expansion turns Chinese question words into
/// "what", "how", "many", "which"..., and those must not match every document.
const STOPWORDS: &[&str] = &[
    "a",
    "about",
    "above",
    "after",
    "again",
    "against",
    "all",
    "also",
    "am",
    "an",
    "and",
    "any",
    "are",
    "as",
    "at",
    "be",
    "because",
    "been",
    "before",
    "being",
    "below",
    "between",
    "both",
    "but",
    "by",
    "can",
    "could",
    "did",
    "do",
    "does",
    "doing",
    "down",
    "during",
    "each",
    "etc",
    "few",
    "for",
    "from",
    "further",
    "had",
    "has",
    "have",
    "having",
    "he",
    "her",
    "here",
    "hers",
    "herself",
    "him",
    "himself",
    "his",
    "how",
    "i",
    "if",
    "in",
    "into",
    "is",
    "it",
    "its",
    "itself",
    "just",
    "may",
    "me",
    "might",
    "more",
    "most",
    "much",
    "must",
    "my",
    "myself",
    "no",
    "nor",
    "not",
    "of",
    "off",
    "on",
    "once",
    "only",
    "or",
    "other",
    "our",
    "ours",
    "ourselves",
    "out",
    "over",
    "own",
    "same",
    "she",
    "should",
    "so",
    "some",
    "such",
    "than",
    "that",
    "the",
    "their",
    "theirs",
    "them",
    "themselves",
    "then",
    "there",
    "these",
    "they",
    "this",
    "those",
    "through",
    "to",
    "too",
    "under",
    "until",
    "up",
    "very",
    "was",
    "we",
    "were",
    "what",
    "when",
    "where",
    "which",
    "while",
    "who",
    "whom",
    "whose",
    "why",
    "will",
    "with",
    "would",
    "you",
    "your",
    "yours",
    "yourself",
    "yourselves",
    "s",
    "t",
    "many",
    "shall",
    "within",
    "without",
    "upon",
    "via",
    "please",
    "tell",
];

/// True when `word` (lowercase) is an English stopword.
pub(crate) fn is_stopword(word: &str) -> bool {
    // Hashed once: this runs for every token of every document and query.
    static SET: LazyLock<FxHashSet<&'static str>> =
        LazyLock::new(|| STOPWORDS.iter().copied().collect());
    SET.contains(word)
}

/// The base word of an irregular English form ("sang" → "sing", "lost" → "lose",
/// "children" → "child", "indices" → "index"), else `word` itself. The stemmer only strips
/// regular endings, so without this a page saying "who sang" never matches "sing", which
/// is also what the dictionaries translate 演唱 to (translations are base forms), nor one
/// about "sparse matrices" a question about a "sparse matrix". Two tables: the team's
/// irregular verbs and common plurals (`english_forms.tsv`; forms with a common meaning of
/// their own, "left", "found", "saw", "felt", "bound", left out), and the plurals WordNet
/// lists as exceptions, chosen by the rules of `infra/build_english_plurals.py`
/// (`english_plurals.tsv`: Latin and Greek plurals, "vertices", "criteria", "radii").
pub(crate) fn base_form(word: &str) -> &str {
    sorted_lookup(include_str!("../../data/english_forms.tsv"), word)
        .or_else(|| sorted_lookup(include_str!("../../data/english_plurals.tsv"), word))
        .unwrap_or(word)
}

/// The second column of the line of `table` (`key<TAB>value` lines, sorted by key, byte
/// order) whose key is `key`: a binary search over the text itself, so a table costs no
/// heap (as a hash map, WordNet's 1,272 plurals took 70 KB of every function's heap).
fn sorted_lookup<'t>(table: &'t str, key: &str) -> Option<&'t str> {
    let bytes = table.as_bytes();
    // Line starts are searched in `lo..hi`; a line is cut out around the middle byte.
    let (mut lo, mut hi) = (0, bytes.len());
    while lo < hi {
        let mid = lo + (hi - lo) / 2;
        let start = bytes[lo..mid]
            .iter()
            .rposition(|&b| b == b'\n')
            .map_or(lo, |i| lo + i + 1);
        let end = bytes[mid..]
            .iter()
            .position(|&b| b == b'\n')
            .map_or(bytes.len(), |i| mid + i);
        // Cut at newlines (ASCII), so both ends are character boundaries.
        let (line_key, value) = table.get(start..end)?.split_once('\t')?;
        match line_key.cmp(key) {
            std::cmp::Ordering::Equal => return Some(value),
            std::cmp::Ordering::Less => lo = end + 1,
            std::cmp::Ordering::Greater => hi = start,
        }
    }
    None
}

/// Turns folded text into index terms. One `Analyzer` is built per index and reused; it
/// holds the stemmer, and while the index is built a memo of every word seen (stemming is
/// the costliest step of analysis, and a corpus repeats its words), dropped once the
/// terms are in (`Analyzer::forget_words`).
pub struct Analyzer {
    stemmer: Stemmer,
    /// Word → its term (`None` for a stopword), filled while indexing.
    memo: FxHashMap<Box<str>, Option<Box<str>>>,
}

impl Default for Analyzer {
    fn default() -> Self {
        Self::new()
    }
}

impl std::fmt::Debug for Analyzer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Analyzer(english snowball)")
    }
}

impl Analyzer {
    /// An analyzer with the English Snowball stemmer.
    pub fn new() -> Self {
        Self {
            stemmer: Stemmer::create(Algorithm::English),
            memo: FxHashMap::default(),
        }
    }

    /// The index term for one Latin word, or `None` for a stopword.
    pub fn latin_term(&self, word: &str) -> Option<String> {
        match self.memo.get(word) {
            Some(term) => term.as_deref().map(str::to_owned),
            None => self.compute_term(word),
        }
    }

    /// Drops the memo of the words indexed, once they are: at 10k pages it held 2.4 MiB
    /// for the rest of the function's life, to spare a query the stemming of its few
    /// words (an index loaded from a prebuilt file never had it).
    pub(crate) fn forget_words(&mut self) {
        self.memo = FxHashMap::default();
    }

    /// Like [`Analyzer::latin_term`], borrowing the term from the memo while an index is
    /// being built (a corpus repeats its words, so most are there).
    pub fn latin_term_ref(&self, word: &str) -> Option<std::borrow::Cow<'_, str>> {
        match self.memo.get(word) {
            Some(term) => term.as_deref().map(std::borrow::Cow::Borrowed),
            None => self.compute_term(word).map(std::borrow::Cow::Owned),
        }
    }

    /// Like [`Analyzer::terms`], remembering each new word's term for later queries.
    pub fn learn_terms(&mut self, text: &str) -> Vec<String> {
        let mut out = Vec::new();
        for run in runs(text) {
            match run.script {
                Script::Latin => {
                    let term = match self.memo.get(run.text.as_str()) {
                        Some(t) => t.as_deref().map(str::to_owned),
                        None => {
                            let t = self.compute_term(&run.text);
                            let memo = t.as_deref().map(Box::from);
                            self.memo.insert(run.text.into_boxed_str(), memo);
                            t
                        }
                    };
                    out.extend(term);
                }
                Script::Han => han_bigrams(&run.text, &mut |t| out.push(t)),
            }
        }
        compounds(text, &mut |t| out.push(t));
        out
    }

    fn compute_term(&self, word: &str) -> Option<String> {
        if is_stopword(word) {
            return None;
        }
        // Only ASCII words go through the English stemmer: stemming other scripts with
        // English rules would mangle them.
        if word.is_ascii() {
            Some(self.stemmer.stem(base_form(word)).into_owned())
        } else {
            Some(word.to_owned())
        }
    }

    /// Calls `emit` with every index term of `text`, in order (duplicates included, as
    /// term frequency needs them).
    pub fn for_each_term(&self, text: &str, mut emit: impl FnMut(String)) {
        for run in runs(text) {
            match run.script {
                Script::Latin => {
                    if let Some(t) = self.latin_term(&run.text) {
                        emit(t);
                    }
                }
                Script::Han => han_bigrams(&run.text, &mut emit),
            }
        }
        compounds(text, &mut emit);
    }

    /// All index terms of `text`, in order.
    pub fn terms(&self, text: &str) -> Vec<String> {
        let mut out = Vec::new();
        self.for_each_term(text, |t| out.push(t));
        out
    }
}

/// Like [`han_bigrams`], as slices of `run` instead of new strings: a query's bigrams are
/// looked up and merged without allocating.
pub(crate) fn han_bigram_slices(run: &str) -> impl Iterator<Item = &str> {
    let one = run.chars().nth(1).is_none();
    let whole = (one && !run.is_empty()).then_some(run);
    // Each character's start paired with the end of the character after it.
    let ends = run
        .char_indices()
        .skip(2)
        .map(|(i, _)| i)
        .chain([run.len()]);
    let pairs = run
        .char_indices()
        .zip(ends)
        .filter(move |_| !one)
        .map(move |((start, _), end)| &run[start..end]);
    whole.into_iter().chain(pairs)
}

/// Overlapping character bigrams of a Han run; a run of one character is its own term.
pub(crate) fn han_bigrams(run: &str, emit: &mut impl FnMut(String)) {
    let chars: Vec<char> = run.chars().collect();
    if chars.len() == 1 {
        emit(chars[0].to_string());
        return;
    }
    for pair in chars.windows(2) {
        emit(pair.iter().collect());
    }
}

/// Where the character after the first `n` of `text` starts (`text.char_indices().nth(n)`),
/// `None` when `text` has no more than `n` characters. Counted over bytes, not decoded
/// characters: ASCII text is answered from its length, and other text by counting the
/// bytes that start a character (all but UTF-8 continuation bytes, `0b10xxxxxx`) a block
/// at a time, which the compiler vectorises.
pub(crate) fn nth_char_start(text: &str, n: usize) -> Option<usize> {
    let bytes = text.as_bytes();
    if bytes.len() <= n {
        // n bytes hold at most n characters.
        return None;
    }
    if bytes[..n].is_ascii() {
        return Some(n);
    }
    let starts = |b: &u8| (*b as i8) >= -0x40;
    let mut seen = 0;
    let mut at = 0;
    for block in bytes.chunks_exact(32) {
        let count = block.iter().filter(|b| starts(b)).count();
        if seen + count > n {
            break;
        }
        seen += count;
        at += block.len();
    }
    for (i, b) in bytes[at..].iter().enumerate() {
        if starts(b) {
            if seen == n {
                return Some(at + i);
            }
            seen += 1;
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_nth_character_is_found_by_counting_bytes_as_by_decoding() {
        let texts = [
            String::new(),
            "a".repeat(300),
            "字".repeat(300),
            "ab字é😀".repeat(70),
            format!("{}字{}", "x".repeat(239), "y".repeat(50)),
            format!("{}字", "x".repeat(240)),
        ];
        for text in &texts {
            for n in [0, 1, 31, 32, 33, 239, 240, 241, 400] {
                let decoded = text.char_indices().nth(n).map(|(i, _)| i);
                assert_eq!(nth_char_start(text, n), decoded, "n = {n} in {text:?}");
            }
        }
    }

    #[test]
    fn two_part_identifiers_are_each_connector_with_its_neighbours() {
        let mut pairs: Vec<String> = two_part_identifiers("Open Read-Only, or ab-cd_ef.gh; x.")
            .into_iter()
            .collect();
        pairs.sort();
        assert_eq!(pairs, ["ab-cd", "cd_ef", "ef.gh", "read-only"]);
        assert!(two_part_identifiers("no identifiers here.").is_empty());
    }

    fn texts(s: &str) -> Vec<(Script, String)> {
        runs(s).into_iter().map(|r| (r.script, r.text)).collect()
    }

    #[test]
    fn splits_han_and_latin_runs() {
        assert_eq!(
            texts("什么是Partial FC？"),
            vec![
                (Script::Han, "什么是".into()),
                (Script::Latin, "partial".into()),
                (Script::Latin, "fc".into())
            ]
        );
    }

    #[test]
    fn spaces_inside_chinese_text_do_not_break_its_bigrams() {
        assert_eq!(
            texts("6600万年 前，该公司　安装了 x 机器"),
            vec![
                (Script::Latin, "6600".into()),
                (Script::Han, "万年前".into()),
                (Script::Han, "该公司安装了".into()),
                (Script::Latin, "x".into()),
                (Script::Han, "机器".into()),
            ]
        );
        assert_eq!(
            texts("ab cd"),
            vec![(Script::Latin, "ab".into()), (Script::Latin, "cd".into())]
        );
    }

    #[test]
    fn folds_full_width_forms_and_ideographic_space() {
        assert_eq!(fold_char('Ａ'), 'a');
        assert_eq!(fold_char('１'), '1');
        assert_eq!(
            texts("ＬＬａＶＡ\u{3000}２０２５"),
            vec![
                (Script::Latin, "llava".into()),
                (Script::Latin, "2025".into())
            ]
        );
    }

    #[test]
    fn punctuation_and_emoji_separate_runs_and_vanish() {
        assert_eq!(
            texts("face-recognition😀!!人脸，识别"),
            vec![
                (Script::Latin, "face".into()),
                (Script::Latin, "recognition".into()),
                (Script::Han, "人脸".into()),
                (Script::Han, "识别".into())
            ]
        );
    }

    #[test]
    fn empty_and_symbol_only_text_has_no_terms() {
        let a = Analyzer::new();
        assert!(a.terms("").is_empty());
        assert!(a.terms("  ?! 😀 —— ").is_empty());
    }

    #[test]
    fn english_terms_are_stemmed_and_stopwords_dropped() {
        let a = Analyzer::new();
        assert_eq!(a.terms("The Training of models"), vec!["train", "model"]);
    }

    #[test]
    fn irregular_forms_index_as_their_base_word() {
        let a = Analyzer::new();
        assert_eq!(
            a.terms("She sang; they lost; children wrote"),
            a.terms("she sings; they lose; child writes")
        );
        // A form with a common meaning of its own keeps it.
        assert_eq!(a.terms("left found"), vec!["left", "found"]);
        // Latin and Greek plurals (WordNet's exceptions) join their singular...
        assert_eq!(
            a.terms("sparse matrices, the vertices and indices"),
            a.terms("sparse matrix, the vertex and index")
        );
        // ... but not where the form is also a regular one of another word: "axes" of
        // "axe" (and of "axis"), "bases" of "base", "lives" of "live".
        assert_eq!(a.terms("axes bases lives"), vec!["axe", "base", "live"]);
    }

    #[test]
    fn the_sorted_table_is_searched_whole() {
        let table = "axes\taxis\nindices\tindex\nmatrices\tmatrix\nvertices\tvertex\n";
        for (key, value) in [
            ("axes", "axis"),
            ("indices", "index"),
            ("vertices", "vertex"),
        ] {
            assert_eq!(sorted_lookup(table, key), Some(value));
        }
        for absent in ["", "a", "axe", "indicesx", "m", "zz"] {
            assert_eq!(sorted_lookup(table, absent), None, "{absent}");
        }
        assert_eq!(sorted_lookup("", "x"), None);
        // The shipped tables are in the order the search needs, every line a pair.
        for (name, table) in [
            (
                "english_forms.tsv",
                include_str!("../../data/english_forms.tsv"),
            ),
            (
                "english_plurals.tsv",
                include_str!("../../data/english_plurals.tsv"),
            ),
        ] {
            let keys: Vec<&str> = table
                .lines()
                .map(|l| l.split_once('\t').map(|(k, _)| k).unwrap_or(""))
                .collect();
            assert!(keys.iter().all(|k| !k.is_empty()), "{name}");
            assert!(keys.windows(2).all(|w| w[0] < w[1]), "{name} is not sorted");
            for line in table.lines() {
                let (k, v) = line.split_once('\t').unwrap_or_default();
                assert_eq!(sorted_lookup(table, k), Some(v), "{name}");
            }
        }
    }

    #[test]
    fn han_runs_become_bigrams_and_single_chars_stay() {
        let a = Analyzer::new();
        assert_eq!(a.terms("人脸识别"), vec!["人脸", "脸识", "识别"]);
        assert_eq!(a.terms("脸 x"), vec!["脸", "x"]);
    }

    #[test]
    fn non_ascii_letters_are_kept_unstemmed() {
        let a = Analyzer::new();
        assert_eq!(a.terms("Café Ωmega"), vec!["café", "ωmega"]);
    }

    #[test]
    fn learned_terms_match_computed_terms() {
        let mut learner = Analyzer::new();
        let text = "Training trained models; the LLaVA café 人脸";
        let learned = learner.learn_terms(text);
        assert_eq!(learned, Analyzer::new().terms(text));
        // The memo answers later lookups the same way, stopwords included.
        assert_eq!(learner.latin_term("training").as_deref(), Some("train"));
        assert_eq!(learner.latin_term_ref("training").as_deref(), Some("train"));
        assert_eq!(
            learner.latin_term_ref("trainings").as_deref(),
            Some("train")
        );
        assert_eq!(learner.latin_term_ref("the"), None);
        assert_eq!(learner.latin_term("the"), None);
        assert_eq!(
            learner.latin_term("unseen"),
            Analyzer::new().latin_term("unseen")
        );
    }

    #[test]
    fn identifiers_are_kept_whole_beside_their_parts() {
        let a = Analyzer::new();
        assert_eq!(a.terms("use v-if"), vec!["use", "v", "v-if"]);
        assert_eq!(
            a.terms("v-model.lazy, sys_platform and --no-cache."),
            vec![
                "v",
                "model",
                "lazi",
                "sys",
                "platform",
                "cach",
                "v-model.lazy",
                "sys_platform",
                "no-cache"
            ]
        );
        // A sentence's full stop and a lone dash are not identifiers.
        assert_eq!(a.terms("It ends. - Then"), vec!["end"]);
        assert_eq!(a.terms("Python 3.8"), vec!["python", "3", "8", "3.8"]);
    }

    #[test]
    fn short_lines_mark_their_stopwords_as_keywords() {
        let marks = keyword_marks(
            "where\n8.5. The with statement\nUPDATE FROM\n\\if (section-label)\n\
             Working with missing data in a DataFrame\nGetting started",
        );
        assert_eq!(
            marks,
            ["~where", "~the", "~with", "~from", "~if"],
            "a long line's stopwords are English, and a line without any marks nothing"
        );
        // Four words still name; five do not.
        assert_eq!(
            keyword_marks("The for loop body here"),
            Vec::<String>::new()
        );
        assert_eq!(keyword_marks("The for loop body"), ["~the", "~for"]);
    }

    #[test]
    fn operators_are_the_symbols_standing_alone() {
        fn ops(text: &str, markdown: bool) -> Vec<&str> {
            let mut out = Vec::new();
            operators(text, markdown, |op| out.push(op));
            out
        }
        assert_eq!(
            ops("the difference between & and &&, `=>` or (a || b)?", false),
            ["&", "&&", "=>", "||"]
        );
        // Glued to a word: part of its spelling. Longer than three: a rule line.
        assert!(ops(
            "x->y --no-cache C++ #lang &str <Leader> a+b ----- i++",
            false
        )
        .is_empty());
        let page = "# Title\n- item\n  * sub\n> quote\ncell | cell\n$ ls\nx = 1 // c\n+ and ##";
        assert_eq!(ops(page, true), ["$", "=", "//", "##"]);
        // A question is plain text: only the table's lone bar is layout there too.
        assert_eq!(
            ops(page, false),
            ["#", "-", "*", ">", "$", "=", "//", "+", "##"]
        );
    }

    #[test]
    fn bigram_slices_are_the_bigrams() {
        for run in ["", "人", "人脸", "人脸识别", "\u{2A6D6}脸\u{2A6D7}", "a人b"] {
            let mut owned = Vec::new();
            han_bigrams(run, &mut |b| owned.push(b));
            let slices: Vec<&str> = han_bigram_slices(run).collect();
            assert_eq!(slices, owned, "{run:?}");
        }
        assert_eq!(
            han_bigram_slices("人脸识").collect::<Vec<_>>(),
            ["人脸", "脸识"]
        );
    }

    #[test]
    fn stopword_lookup_works_for_first_and_last_entries() {
        assert!(is_stopword("a"));
        assert!(is_stopword("yourselves"));
        assert!(!is_stopword("face"));
    }
}
