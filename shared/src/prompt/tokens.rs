//! Token estimates for the prompt budget, without a tokenizer.
//!
//! The chat prompt must fit the model's context window (`docs/architecture.md`, "Prompt"),
//! but loading a real BPE vocabulary (Qwen's is 151k entries, several MB) at every cold
//! start is not worth it for a budget that only has to be about right. [`estimate_tokens`] instead walks the text
//! once and charges each run of characters what a byte-level BPE tokenizer with Qwen's
//! pre-tokenizer typically spends on it:
//!
//! - an ASCII word: one token per 10 letters, split at lower→upper case changes
//!   (`InsightFace` is `Insight` + `Face`); its leading space is free;
//! - a Han (or kana) run: one token for a lone character, else `1 + 0.45·n` (common words
//!   merge into 2–4-character tokens); a space before it costs one more token;
//! - a digit: one token each (Qwen splits numbers into digits); a space before a number
//!   is a token of its own;
//! - ASCII punctuation: one token per two characters (`://`, `**`, `",` merge);
//! - a line break run: one token (indentation after it is merged); a run of 2+ spaces
//!   elsewhere: one token;
//! - anything else (CJK punctuation, full-width forms, emoji, other scripts): one token
//!   per character.
//!
//! # Measured error
//! Against the Qwen3 tokenizer (the same 151k BPE vocabulary as the Qwen models DashScope
//! serves, the default provider), on the 44 texts of `tests/data/token_counts.json`
//! (Chinese, English, mixed, code, URLs, numbers, knowledge-base entries, prompts; counts
//! from `infra/measure_tokens.cjs`):
//! - the total over all texts is within ±3% (−0.1% when measured);
//! - the mean absolute error per text is under 10% (8.9%);
//! - no text is under-estimated by more than 20% (worst: classical Chinese, −19%, whose
//!   one-character words do not merge) unless the error is at most 2 tokens;
//! - no text is over-estimated by more than 35% (worst: a colloquial Chinese greeting
//!   made of very common words that Qwen merges into long tokens, +31%) unless the error
//!   is at most 2 tokens;
//! - texts without Han characters are within ±20% (code, URLs, English: worst +19%);
//! - 40 of the 44 texts are within ±15% or 2 tokens.
//!
//! Chinese word structure is what a character count cannot see; the spread above is the
//! price of not shipping a vocabulary. OpenAI's o200k encoding (gpt-4o) is close too
//! (total +5% on texts without Chinese, −3% on texts with it); cl100k (gpt-4) spends
//! about 40% more tokens on Chinese than estimated here: with such a model, lower
//! `MAX_CONTEXT_TOKENS` accordingly.

//! # What the estimate cannot be fooled by
//! Text unlike the calibration texts is charged what it may really cost, so crafted input
//! cannot pass for cheap: an ideograph that is not a single Qwen token
//! (`data/han_single_token.bin`, made by `infra/han_single_tokens.cjs`) costs its UTF-8
//! bytes (a byte-level BPE spends at most one token per byte), as does a Latin "word" of six
//! or more letters that reads like no word (no vowel, or five consonants in a row); other
//! scripts, emoji and combining marks cost a token per two bytes, at least one per
//! character. The `adv_` texts of the fixture measure this.
//!
//! Text a visitor writes (the question and the conversation history, which the client may
//! send) is charged by [`visitor_ceiling`] instead: an upper bound for any input, at the
//! price of over-counting ordinary text about twofold, which matters little for a question.

use crate::message::ChatMessage;

/// Tokens a chat template adds around each message (Qwen's `<|im_start|>role\n` …
/// `<|im_end|>\n`).
pub(super) const MESSAGE_OVERHEAD: usize = 5;

/// Estimated tokens of one text (see the module docs for the rules and their measured
/// error against a real tokenizer).
pub fn estimate_tokens(text: &str) -> usize {
    let mut total = 0.0f64;
    let mut prev = Class::None;
    let mut run = Run::default();
    for c in text.chars() {
        let class = Class::of(c);
        if class == run.class && class.extends() {
            run.push(c);
            continue;
        }
        total += run.cost();
        // The class before the run that starts now decides whether a space joins it.
        prev = if run.class == Class::None {
            prev
        } else {
            run.class
        };
        run = Run::start(class, c, prev);
    }
    total += run.cost();
    total.ceil() as usize
}

/// An upper bound on the tokens of a message a visitor wrote (or could have written: the
/// history comes from the client too), template overhead included.
pub fn visitor_message_ceiling(message: &ChatMessage) -> usize {
    visitor_ceiling(&message.content) + MESSAGE_OVERHEAD
}

/// An upper bound on the tokens any text costs a byte-level BPE tokenizer with Qwen's
/// vocabulary, close enough to use for budgets: a digit, ASCII symbol, line break or extra
/// space is at most one token; a single-token ideograph or a kana is one; a Latin word part
/// with a vowel at most one token per two letters, one without a vowel one per letter;
/// anything else its UTF-8 bytes.
pub fn visitor_ceiling(text: &str) -> usize {
    let mut total = 0usize;
    let mut word = 0usize;
    let mut word_vowels = false;
    let mut last_lower = false;
    let mut prev_space = false;
    let flush = |len: usize, vowels: bool| {
        if vowels {
            len.div_ceil(2)
        } else {
            len
        }
    };
    for c in text.chars() {
        if c.is_ascii_alphabetic() {
            // A camel-case boundary starts a new part, as in the estimate.
            if c.is_ascii_uppercase() && last_lower {
                total += flush(word, word_vowels);
                word = 0;
                word_vowels = false;
            }
            word += 1;
            word_vowels |= is_vowel(c);
            last_lower = c.is_ascii_lowercase();
            prev_space = false;
            continue;
        }
        total += flush(word, word_vowels);
        word = 0;
        word_vowels = false;
        last_lower = false;
        total += match c {
            // One space joins the word after it; more are a token each at most.
            ' ' if !prev_space => 0,
            c if c.is_ascii() => 1,
            c if is_single_token_han(c) || is_kana(c) => 1,
            c => c.len_utf8(),
        };
        prev_space = c == ' ';
    }
    total + flush(word, word_vowels)
}

fn is_vowel(c: char) -> bool {
    matches!(c.to_ascii_lowercase(), 'a' | 'e' | 'i' | 'o' | 'u' | 'y')
}

fn is_kana(c: char) -> bool {
    ('\u{3040}'..='\u{30FF}').contains(&c)
}

/// One bit per ideograph of U+4E00..=U+9FFF: set when Qwen3 spends one token on it alone.
static HAN_SINGLE_TOKEN: &[u8; 2624] = include_bytes!("../../data/han_single_token.bin");

/// True for an ideograph Qwen's vocabulary holds as one token (8,501 of the 20,992 basic
/// ideographs: every common character).
fn is_single_token_han(c: char) -> bool {
    let Some(i) = (c as usize).checked_sub(0x4E00) else {
        return false;
    };
    HAN_SINGLE_TOKEN
        .get(i / 8)
        .is_some_and(|b| b & (1 << (i % 8)) != 0)
}

/// What a character outside the calibrated classes costs: CJK punctuation and full-width
/// forms are one token each; anything else a token per two UTF-8 bytes, at least one.
fn other_cost(c: char) -> f64 {
    if matches!(c, '\u{3000}'..='\u{303F}' | '\u{FF00}'..='\u{FFEF}') {
        1.0
    } else {
        c.len_utf8().div_ceil(2) as f64
    }
}

/// Character classes that cost differently.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Class {
    /// Before the first character.
    None,
    /// Space or tab.
    Space,
    /// `\r` or `\n`.
    Newline,
    /// Han ideographs and Japanese kana.
    Han,
    /// ASCII letters.
    Latin,
    /// ASCII digits.
    Digit,
    /// Other ASCII (punctuation, symbols).
    Punct,
    /// Ideographs that are not one token (rare, extension blocks): their UTF-8 bytes.
    RareHan,
    /// Everything else: see [`other_cost`].
    Other,
}

impl Class {
    fn of(c: char) -> Self {
        match c {
            ' ' | '\t' => Class::Space,
            '\r' | '\n' => Class::Newline,
            'a'..='z' | 'A'..='Z' => Class::Latin,
            '0'..='9' => Class::Digit,
            c if c.is_ascii() => Class::Punct,
            c if is_kana(c) || is_single_token_han(c) => Class::Han,
            // Other ideographs cost their bytes, like any script the estimate does not know.
            c if is_han_or_kana(c) => Class::RareHan,
            _ => Class::Other,
        }
    }

    /// Whether a character of this class continues a run of the same class.
    fn extends(self) -> bool {
        !matches!(self, Class::Other | Class::RareHan)
    }
}

/// CJK ideographs (unified, extension A, B and later, compatibility) and kana.
fn is_han_or_kana(c: char) -> bool {
    matches!(c,
        '\u{3040}'..='\u{30FF}'
        | '\u{3400}'..='\u{4DBF}'
        | '\u{4E00}'..='\u{9FFF}'
        | '\u{F900}'..='\u{FAFF}'
        | '\u{20000}'..='\u{3134F}')
}

/// One run of same-class characters being measured.
#[derive(Debug)]
struct Run {
    class: Class,
    /// Characters in the run.
    len: usize,
    /// The class of the run before it (a space before Han or digits costs a token).
    after: Class,
    /// Latin runs: tokens of the finished camel-case parts, the current part's length,
    /// and whether the last letter was lowercase.
    parts_tokens: usize,
    part_len: usize,
    last_lower: bool,
    /// Latin runs: the current part's vowels and its longest consonant cluster so far.
    part_vowels: usize,
    cluster: usize,
    part_max_cluster: usize,
    /// The cost of a one-character run of class `Other` or `RareHan`.
    single: f64,
}

impl Default for Run {
    fn default() -> Self {
        Self::start(Class::None, ' ', Class::None)
    }
}

/// Letters per token in an ASCII word part.
const LETTERS_PER_TOKEN: usize = 10;
/// Han: tokens per character in a run of two or more, and the run's base cost.
const HAN_PER_CHAR: f64 = 0.45;
const HAN_RUN_BASE: f64 = 1.0;

impl Run {
    fn start(class: Class, c: char, after: Class) -> Self {
        let mut run = Self {
            class,
            len: 0,
            after,
            parts_tokens: 0,
            part_len: 0,
            last_lower: false,
            part_vowels: 0,
            cluster: 0,
            part_max_cluster: 0,
            single: match class {
                Class::RareHan => c.len_utf8() as f64,
                Class::Other => other_cost(c),
                _ => 0.0,
            },
        };
        if class != Class::None {
            run.push(c);
        }
        run
    }

    fn push(&mut self, c: char) {
        self.len += 1;
        if self.class == Class::Latin {
            if c.is_ascii_uppercase() && self.last_lower {
                self.parts_tokens += self.part_tokens();
                self.part_len = 0;
                self.part_vowels = 0;
                self.cluster = 0;
                self.part_max_cluster = 0;
            }
            self.part_len += 1;
            self.last_lower = c.is_ascii_lowercase();
            if is_vowel(c) {
                self.part_vowels += 1;
                self.cluster = 0;
            } else {
                self.cluster += 1;
                self.part_max_cluster = self.part_max_cluster.max(self.cluster);
            }
        }
    }

    /// Tokens of the current Latin part: one per [`LETTERS_PER_TOKEN`] letters for
    /// something that reads like a word, one per letter for a long part that does not (no
    /// vowel, or five consonants in a row): random letters do not merge.
    fn part_tokens(&self) -> usize {
        let wordlike = self.part_len < 6 || (self.part_vowels > 0 && self.part_max_cluster < 5);
        if wordlike {
            self.part_len.div_ceil(LETTERS_PER_TOKEN)
        } else {
            self.part_len
        }
    }

    fn cost(&self) -> f64 {
        let spaced = f64::from(u8::from(self.after == Class::Space));
        match self.class {
            Class::None => 0.0,
            Class::Latin => (self.parts_tokens + self.part_tokens()) as f64,
            Class::Han if self.len == 1 => 1.0 + spaced,
            Class::Han => HAN_RUN_BASE + HAN_PER_CHAR * self.len as f64 + spaced,
            Class::Digit => self.len as f64 + spaced,
            Class::Punct => self.len.div_ceil(2) as f64,
            Class::Newline => 1.0,
            // Indentation merges with the line break before it; a single space merges
            // with the word after it.
            Class::Space if self.len > 1 && self.after != Class::Newline => 1.0,
            Class::Space => 0.0,
            Class::Other | Class::RareHan => self.single,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::message::Role;

    #[test]
    fn empty_text_is_zero_tokens() {
        assert_eq!(estimate_tokens(""), 0);
    }

    #[test]
    fn common_english_words_are_one_token_each() {
        assert_eq!(estimate_tokens("What is Partial FC?"), 5);
        assert_eq!(estimate_tokens("hello"), 1);
    }

    #[test]
    fn camel_case_and_long_words_split() {
        assert_eq!(estimate_tokens("InsightFace"), 2);
        assert_eq!(estimate_tokens("internationalization"), 2);
    }

    #[test]
    fn digits_are_one_token_each_and_a_space_before_them_is_one_more() {
        assert_eq!(estimate_tokens("2021"), 4);
        assert_eq!(estimate_tokens("in 2021"), 6);
    }

    #[test]
    fn han_runs_cost_less_than_one_token_per_character() {
        assert_eq!(estimate_tokens("好"), 1);
        // 1 + 0.45 · 8 = 4.6
        assert_eq!(estimate_tokens("人脸识别训练方法"), 5);
        // The space before a Han run is charged.
        assert_eq!(estimate_tokens("FC 训练"), 4);
    }

    #[test]
    fn visitor_messages_include_the_template_overhead() {
        let m = ChatMessage::new(Role::User, "hello");
        assert_eq!(visitor_message_ceiling(&m), 3 + MESSAGE_OVERHEAD);
    }

    #[test]
    fn text_unlike_the_calibration_costs_what_it_may_really_cost() {
        // Eight consonants in a row read like no word: one token per letter.
        assert_eq!(estimate_tokens("bcdfghjk"), 8);
        // A rare ideograph (not one Qwen token) costs its three bytes; a common one merges.
        assert!(!is_single_token_han('\u{3400}'));
        assert!(is_single_token_han('的'));
        assert_eq!(estimate_tokens("\u{3400}"), 3);
        // An emoji costs a token per two bytes.
        assert_eq!(estimate_tokens("🎉"), 2);
    }

    #[test]
    fn the_visitor_ceiling_charges_every_character_at_its_worst() {
        assert_eq!(visitor_ceiling("bcd"), 3);
        assert_eq!(visitor_ceiling("model"), 3);
        assert_eq!(visitor_ceiling("人脸识别"), 4);
        assert_eq!(visitor_ceiling("a  b"), 3);
        assert_eq!(visitor_ceiling("\u{3400}🎉"), 7);
    }
}
