//! A question as the recogniser reads it: tokens (lowercase Latin/digit words, single Han
//! characters, `+`, `-` and `>`, full-width forms folded to ASCII), each marked once a
//! phrase has taken it out, so that what is left is the question's content.

#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub(super) enum Tok {
    /// Lowercase letters and digits (`+` and `-` are words of their own).
    Word(String),
    /// One Han character: Chinese phrases match character by character.
    Han(char),
}

/// A question being read: its tokens, and which of them a phrase has already taken.
pub(super) struct Question {
    /// The question's tokens, in order.
    pub(super) toks: Vec<Tok>,
    /// Which tokens a phrase already took out.
    pub(super) used: Vec<bool>,
}

/// The tokens of `text`; phrases are tokenized the same way, so they match token by token.
pub(super) fn tokenize(text: &str) -> Vec<Tok> {
    let mut out = Vec::new();
    let mut word = String::new();
    for c in text.chars() {
        // Full-width forms (０-９, Ａ-Ｚ) fold to ASCII.
        let c = match c {
            '\u{FF01}'..='\u{FF5E}' => char::from_u32(c as u32 - 0xFEE0).unwrap_or(c),
            _ => c,
        };
        let c = if matches!(c, '–' | '—' | '~') {
            '-'
        } else {
            c
        };
        if c.is_ascii_alphanumeric() || (c.is_alphanumeric() && !is_han(c)) {
            word.extend(c.to_lowercase());
            continue;
        }
        if !word.is_empty() {
            out.push(Tok::Word(std::mem::take(&mut word)));
        }
        if is_han(c) {
            out.push(Tok::Han(c));
        } else if c == '+' || c == '-' || c == '>' {
            out.push(Tok::Word(c.to_string()));
        }
    }
    if !word.is_empty() {
        out.push(Tok::Word(word));
    }
    out
}

fn is_han(c: char) -> bool {
    matches!(c, '\u{4E00}'..='\u{9FFF}' | '\u{3400}'..='\u{4DBF}' | '\u{F900}'..='\u{FAFF}')
}

impl Question {
    pub(super) fn new(text: &str) -> Self {
        let toks = tokenize(text);
        let used = vec![false; toks.len()];
        Self { toks, used }
    }

    /// Where `pattern` (tokenized the same way) occurs over unused tokens.
    pub(super) fn find(&self, pattern: &[Tok], from: usize) -> Option<usize> {
        if pattern.is_empty() || pattern.len() > self.toks.len() {
            return None;
        }
        (from..=self.toks.len() - pattern.len()).find(|&i| {
            self.toks[i..i + pattern.len()] == *pattern
                && !self.used[i..i + pattern.len()].iter().any(|&u| u)
        })
    }

    /// Marks every occurrence of any of `phrases` as used; true when one was found.
    pub(super) fn take_any(&mut self, phrases: &[&str]) -> bool {
        let mut found = false;
        for p in phrases {
            let pattern = tokenize(p);
            while let Some(i) = self.find(&pattern, 0) {
                self.mark(i, pattern.len());
                found = true;
            }
        }
        found
    }

    pub(super) fn mark(&mut self, at: usize, len: usize) {
        self.used[at..at + len].iter_mut().for_each(|u| *u = true);
    }

    pub(super) fn word(&self, i: usize) -> Option<&str> {
        match self.toks.get(i) {
            Some(Tok::Word(w)) if !self.used[i] => Some(w),
            _ => None,
        }
    }

    pub(super) fn is(&self, i: usize, words: &[&str]) -> bool {
        self.word(i).is_some_and(|w| words.contains(&w))
    }

    pub(super) fn han(&self, i: usize, c: char) -> bool {
        self.toks.get(i) == Some(&Tok::Han(c)) && !self.used[i]
    }
}
