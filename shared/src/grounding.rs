//! Grounding check: is each sentence of an answer backed by the blocks the model was given,
//! and do its `[n]` markers name blocks that back it?
//!
//! The check is lexical, on the retriever's own analysis, so it works across languages the
//! way search does: a Chinese sentence is read into words whose alternatives include their
//! English translations (and an English sentence, on a site with Chinese pages, Chinese
//! bigrams), and a word is *supported* by a block when one of its alternatives is among the
//! block's index terms. A sentence is supported when its supported words carry at least
//! [`MIN_SUPPORT`] of its weight and every number it states (two digits or more) appears in
//! the blocks: invented facts mostly bring names, figures and terms the pages never use.
//!
//! Words weigh by how much they say: a name, acronym or figure ([`SPECIFIC_WEIGHT`]; mixed
//! case, a capital inside the sentence, a digit) counts more than an ordinary word (1), so
//! a paraphrase in other everyday words stays supported while a sentence built around a
//! name the pages never mention does not. Sentences carrying less than [`MIN_CLAIM_WEIGHT`]
//! ("Here is what I found:") make no claim and are not counted.
//!
//! Markers are read as `[1]`, `[1, 2]`, `[1][2]` or `【1】`. A marker is *invalid* when it
//! names no block, or when the sentence is supported by the blocks but not by the ones it
//! cites (a citation pointing at the wrong entry). The cost is one query analysis per
//! sentence plus one pass over the blocks' terms; the answer is capped upstream, so it is
//! bounded.

use rustc_hash::FxHashSet;
use serde::{Deserialize, Serialize};

use crate::retrieval::{Analysis, Retriever};

/// The share of a sentence's word weight that must be found in the blocks.
pub const MIN_SUPPORT: f32 = 0.6;
/// The weight of a name, acronym, identifier or figure; an ordinary word weighs 1.
pub const SPECIFIC_WEIGHT: f32 = 3.0;
/// Sentences whose words weigh less than this are not claims (greetings, lead-ins).
pub const MIN_CLAIM_WEIGHT: f32 = 3.0;

/// The grounding figures of one answer (in `done`, the JSON response and the audit record).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct Grounding {
    /// Sentences that make a claim (the others are not counted anywhere below).
    pub sentences: u32,
    /// Claims carrying at least one marker that names a block.
    pub cited: u32,
    /// Claims carrying no marker that names a block.
    pub uncited_sentences: u32,
    /// Claims the blocks do not back.
    pub unsupported_sentences: u32,
    /// Markers naming no block, or a block that does not back a claim the others do.
    pub invalid_citations: u32,
}

impl Grounding {
    /// Whether the answer says something the site's pages do not back, or cites wrongly
    /// (the widget marks such answers).
    pub fn flagged(&self) -> bool {
        self.unsupported_sentences > 0 || self.invalid_citations > 0
    }
}

/// One block's index terms and its digit runs (for the number rule).
struct BlockTerms {
    terms: FxHashSet<String>,
    numbers: FxHashSet<String>,
}

/// Checks `answer` against `blocks` (the numbered context blocks the model was sent, block
/// `[n]` at index `n - 1`), reading both with `retriever`.
pub fn check(answer: &str, blocks: &[String], retriever: &Retriever) -> Grounding {
    let block_terms: Vec<BlockTerms> = blocks
        .iter()
        .map(|b| BlockTerms {
            terms: retriever.text_terms(b).into_iter().collect(),
            numbers: numbers(b).collect(),
        })
        .collect();
    let all: Vec<usize> = (0..blocks.len()).collect();
    let mut g = Grounding::default();
    for sentence in sentences(answer) {
        let (text, markers) = strip_markers(&sentence);
        let words = weighted_words(&text, retriever);
        let total: f32 = words.iter().map(|w| w.weight).sum();
        if total < MIN_CLAIM_WEIGHT {
            continue;
        }
        g.sentences += 1;
        let named: Vec<usize> = markers
            .iter()
            .filter(|&&n| n >= 1 && n <= blocks.len())
            .map(|&n| n - 1)
            .collect();
        let invalid = (markers.len() - named.len()) as u32;
        g.invalid_citations += invalid;
        if named.is_empty() {
            g.uncited_sentences += 1;
        } else {
            g.cited += 1;
        }
        let numbers: Vec<String> = numbers(&text).collect();
        if !supported(&words, total, &numbers, &block_terms, &all) {
            g.unsupported_sentences += 1;
        } else if !named.is_empty() && !supported(&words, total, &numbers, &block_terms, &named) {
            g.invalid_citations += named.len() as u32;
        }
    }
    g
}

/// A content word of a sentence: what stands for it, and its weight.
struct WeightedWord {
    /// Alternatives, each a list of terms that must all be in one block.
    alternatives: Vec<Vec<String>>,
    weight: f32,
}

/// The sentence's content words with their weights (see the module docs).
fn weighted_words(text: &str, retriever: &Retriever) -> Vec<WeightedWord> {
    let specific = specific_terms(text, retriever);
    let Analysis { terms, words } = retriever.analyze(text);
    words
        .into_iter()
        .filter(|w| !w.single && !w.neutral && !w.alternatives.is_empty())
        .filter_map(|w| {
            let alternatives: Vec<Vec<String>> = w
                .alternatives
                .iter()
                .map(|alt| {
                    alt.iter()
                        .map(|&i| terms[i as usize].term.clone())
                        .collect()
                })
                .collect();
            let head = alternatives.first()?.first()?;
            // An identifier's parts are words already; counting it whole again would
            // weigh it twice.
            if head.contains(['-', '_', '.']) {
                return None;
            }
            let weight = if specific.contains(head) {
                SPECIFIC_WEIGHT
            } else {
                1.0
            };
            Some(WeightedWord {
                alternatives,
                weight,
            })
        })
        .collect()
}

/// The index terms of the sentence's specific words: written with a capital after the
/// first letter (`LLaVA`, `CLIP`), capitalised anywhere but at the start of the sentence,
/// or holding a digit.
fn specific_terms(text: &str, retriever: &Retriever) -> FxHashSet<String> {
    let mut out = FxHashSet::default();
    let tokens = text
        .split(|c: char| !c.is_alphanumeric())
        .filter(|t| !t.is_empty() && t.is_ascii());
    for (i, token) in tokens.enumerate() {
        let mut chars = token.chars();
        let first_upper = chars.next().is_some_and(|c| c.is_ascii_uppercase());
        let inner_upper = chars.any(|c| c.is_ascii_uppercase());
        let digit = token.chars().any(|c| c.is_ascii_digit());
        if inner_upper || digit || (first_upper && i > 0) {
            if let Some(term) = retriever.latin_term(&token.to_ascii_lowercase()) {
                out.insert(term);
            }
        }
    }
    out
}

/// Whether the blocks at `which` back the sentence: enough of its weight found (an
/// alternative wholly inside one of them) and each of its numbers written in one of them.
fn supported(
    words: &[WeightedWord],
    total: f32,
    numbers: &[String],
    blocks: &[BlockTerms],
    which: &[usize],
) -> bool {
    let found: f32 = words
        .iter()
        .filter(|w| {
            w.alternatives.iter().any(|alt| {
                which
                    .iter()
                    .any(|&b| alt.iter().all(|t| blocks[b].terms.contains(t)))
            })
        })
        .map(|w| w.weight)
        .sum();
    let numbers_found = numbers
        .iter()
        .all(|n| which.iter().any(|&b| blocks[b].numbers.contains(n)));
    numbers_found && found >= MIN_SUPPORT * total
}

/// The figures `text` states, each as its value, so that "10 million", "10M", "1000万" and
/// "10,000,000" are one figure: a run of digits (with `,` between groups of three and one
/// `.`), times the scale word or suffix after it (thousand, million, billion, k, M, B, 千,
/// 万, 亿). A bare number of one digit is left out: "3D", "one of 2 authors" say little.
fn numbers(text: &str) -> impl Iterator<Item = String> + '_ {
    let bytes = text.as_bytes();
    let mut i = 0;
    std::iter::from_fn(move || {
        while i < bytes.len() {
            if !bytes[i].is_ascii_digit() || (i > 0 && bytes[i - 1].is_ascii_alphanumeric()) {
                i += 1;
                continue;
            }
            let start = i;
            let mut digits = String::new();
            while i < bytes.len() {
                let b = bytes[i];
                let grouped = b == b','
                    && bytes.get(i + 1..i + 4).is_some_and(|g| {
                        g.iter().all(u8::is_ascii_digit)
                            && bytes.get(i + 4).is_none_or(|n| !n.is_ascii_digit())
                    });
                let decimal = b == b'.'
                    && !digits.contains('.')
                    && bytes.get(i + 1).is_some_and(u8::is_ascii_digit);
                if b.is_ascii_digit() || decimal {
                    digits.push(b as char);
                } else if !grouped {
                    break;
                }
                i += 1;
            }
            let (scale, len) = scale_after(&text[i..]);
            i += len;
            let plain = digits.chars().filter(char::is_ascii_digit).count();
            if plain < 2 && scale == 1.0 {
                continue;
            }
            let Ok(value) = digits.parse::<f64>() else {
                i = start + 1;
                continue;
            };
            let value = value * scale;
            return Some(if value.fract() == 0.0 && value < 1e18 {
                format!("{}", value as u64)
            } else {
                format!("{value}")
            });
        }
        None
    })
}

/// The multiplier a scale word or suffix after a number stands for (one space allowed
/// between them), and how many bytes it takes.
fn scale_after(rest: &str) -> (f64, usize) {
    const SCALES: [(&str, f64); 10] = [
        ("thousand", 1e3),
        ("million", 1e6),
        ("billion", 1e9),
        ("k", 1e3),
        ("m", 1e6),
        ("b", 1e9),
        ("千", 1e3),
        ("万", 1e4),
        ("亿", 1e8),
        ("萬", 1e4),
    ];
    let spaced = rest.strip_prefix(' ').unwrap_or(rest);
    let gap = rest.len() - spaced.len();
    for (word, scale) in SCALES {
        let Some(head) = spaced.get(..word.len()) else {
            continue;
        };
        // A letter scale must end its word: "10M" and "27k+", not "10 Mbps" or "2025 Best".
        let ends = spaced[word.len()..]
            .chars()
            .next()
            .is_none_or(|c| !c.is_ascii_alphanumeric());
        if head.eq_ignore_ascii_case(word) && ends {
            return (scale, gap + word.len());
        }
    }
    (1.0, 0)
}

/// The answer's sentences, Markdown dropped: fenced code is skipped, each line is cut after
/// `.`, `!`, `?` followed by a space (or at `。！？；`), and a piece holding only markers
/// (a citation written after the full stop) joins the sentence before it.
pub fn sentences(answer: &str) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    let mut in_code = false;
    for line in answer.lines() {
        if line.trim_start().starts_with("```") {
            in_code = !in_code;
            continue;
        }
        if in_code {
            continue;
        }
        let mut current = String::new();
        let mut chars = line.chars().peekable();
        while let Some(c) = chars.next() {
            current.push(c);
            let ends = matches!(c, '。' | '！' | '？' | '；')
                || (matches!(c, '.' | '!' | '?') && chars.peek().is_none_or(|n| n.is_whitespace()));
            if ends {
                push_sentence(&mut out, std::mem::take(&mut current));
            }
        }
        push_sentence(&mut out, current);
    }
    out
}

fn push_sentence(out: &mut Vec<String>, piece: String) {
    let mut rest = piece.trim();
    // Markers written after the previous sentence's full stop belong to it.
    let lead = leading_markers(rest);
    if lead > 0 {
        if let Some(last) = out.last_mut() {
            last.push(' ');
            last.push_str(rest[..lead].trim());
            rest = rest[lead..].trim_start();
        }
    }
    if !rest.is_empty() {
        out.push(rest.to_owned());
    }
}

/// The length of the markers (and spaces between them) that `text` starts with.
fn leading_markers(text: &str) -> usize {
    let mut end = 0;
    loop {
        let rest = &text[end..];
        let start = rest.len() - rest.trim_start().len();
        let Some(close) = rest.find([']', '】']) else {
            return end;
        };
        let after = close + rest[close..].chars().next().map_or(1, char::len_utf8);
        let (stripped, markers) = strip_markers(&rest[start..after]);
        if markers.is_empty() || !stripped.trim().is_empty() {
            return end;
        }
        end += after;
    }
}

/// The sentence without its citation markers, and the block numbers they name.
fn strip_markers(sentence: &str) -> (String, Vec<usize>) {
    let mut text = String::with_capacity(sentence.len());
    let mut markers = Vec::new();
    let mut rest = sentence;
    while let Some(open) = rest.find(['[', '【']) {
        text.push_str(&rest[..open]);
        let after = &rest[open..];
        let bracket = after.chars().next().map_or(1, char::len_utf8);
        let close = after.find([']', '】']);
        let inner = close.map(|c| &after[bracket..c]);
        let numbers: Option<Vec<usize>> = inner.filter(|s| !s.trim().is_empty()).and_then(|s| {
            s.split([',', '，', ' '])
                .filter(|p| !p.is_empty())
                .map(|p| p.parse::<usize>().ok())
                .collect()
        });
        match (numbers, close) {
            (Some(ns), Some(c)) => {
                markers.extend(ns);
                let closing = after[c..].chars().next().map_or(1, char::len_utf8);
                rest = &after[c + closing..];
            }
            _ => {
                text.push_str(&after[..bracket]);
                rest = &after[bracket..];
            }
        }
    }
    text.push_str(rest);
    (text, markers)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn retriever() -> Retriever {
        let docs = vec![
            vec![
                "ViCToR improves visual comprehension via token reconstruction for \
                  pretraining large multimodal models. Published at ICCV 2025."
                    .to_owned(),
            ],
            vec![
                "Partial FC trains face recognition with 10 million identities on a \
                  single machine by sampling the softmax classes."
                    .to_owned(),
            ],
            vec!["苹果派的做法：先把面粉和黄油揉成面团。".to_owned()],
        ];
        Retriever::build(docs, &[])
    }

    fn blocks() -> Vec<String> {
        vec![
            "[1] **ViCToR**\n- Summary: improves visual comprehension via token \
             reconstruction for pretraining large multimodal models.\n- Venue: ICCV, 2025"
                .to_owned(),
            "[2] **Partial FC**\n- Summary: trains face recognition with 10 million \
             identities on a single machine by sampling the softmax classes."
                .to_owned(),
        ]
    }

    #[test]
    fn a_faithful_cited_answer_passes() {
        let g = check(
            "ViCToR improves visual comprehension through token reconstruction [1]. \
             Partial FC trains face recognition on a single machine [2].",
            &blocks(),
            &retriever(),
        );
        assert_eq!(
            g,
            Grounding {
                sentences: 2,
                cited: 2,
                ..Grounding::default()
            }
        );
        assert!(!g.flagged());
    }

    #[test]
    fn a_missing_citation_is_counted_but_not_flagged() {
        let g = check(
            "Partial FC trains face recognition with 10 million identities.",
            &blocks(),
            &retriever(),
        );
        assert_eq!((g.sentences, g.uncited_sentences, g.cited), (1, 1, 0));
        assert!(!g.flagged());
    }

    #[test]
    fn a_marker_naming_no_block_is_invalid() {
        let g = check(
            "ViCToR improves visual comprehension through token reconstruction [7].",
            &blocks(),
            &retriever(),
        );
        assert_eq!(
            (g.invalid_citations, g.cited, g.uncited_sentences),
            (1, 0, 1)
        );
        assert!(g.flagged());
    }

    #[test]
    fn a_marker_naming_the_wrong_block_is_invalid() {
        let g = check(
            "Partial FC trains face recognition with 10 million identities [1].",
            &blocks(),
            &retriever(),
        );
        assert_eq!((g.invalid_citations, g.unsupported_sentences), (1, 0));
    }

    #[test]
    fn an_invented_claim_is_unsupported_even_when_cited() {
        let g = check(
            "Xiang An received his PhD from Stanford University under Fei-Fei Li [1].",
            &blocks(),
            &retriever(),
        );
        assert_eq!(g.unsupported_sentences, 1);
        assert!(g.flagged());
    }

    #[test]
    fn an_invented_figure_is_unsupported() {
        let faithful = check(
            "Partial FC trains with 10 million identities [2].",
            &blocks(),
            &retriever(),
        );
        let invented = check(
            "Partial FC trains with 40 million identities [2].",
            &blocks(),
            &retriever(),
        );
        assert_eq!(faithful.unsupported_sentences, 0);
        assert_eq!(invented.unsupported_sentences, 1);
    }

    #[test]
    fn a_chinese_sentence_is_checked_through_translation() {
        let g = check(
            "ViCToR 通过令牌重建提升视觉理解能力【1】。",
            &blocks(),
            &retriever(),
        );
        assert_eq!((g.sentences, g.cited, g.unsupported_sentences), (1, 1, 0));
        let invented = check(
            "该论文获得了诺贝尔物理学奖和图灵奖。",
            &blocks(),
            &retriever(),
        );
        assert_eq!(invented.unsupported_sentences, 1);
    }

    #[test]
    fn figures_are_compared_by_value_across_languages() {
        let all = |t: &str| numbers(t).collect::<Vec<_>>();
        assert_eq!(all("10 million identities"), vec!["10000000"]);
        assert_eq!(all("1000 万个身份"), vec!["10000000"]);
        assert_eq!(
            all("10,000,000 ids and 27k+ stars"),
            vec!["10000000", "27000"]
        );
        assert_eq!(
            all("version 1.5, 3D faces, ICCV 2025 Best"),
            vec!["1.5", "2025"]
        );
        assert_eq!(all("10 Mbps, arcface_r100"), vec!["10"]);
    }

    #[test]
    fn lead_ins_and_code_are_not_claims() {
        let g = check(
            "Here is what I found:\n```\nfn main() { invented_function(42); }\n```",
            &blocks(),
            &retriever(),
        );
        assert_eq!(g.sentences, 0);
    }

    #[test]
    fn sentences_split_at_stops_and_keep_trailing_markers() {
        assert_eq!(
            sentences("First claim here. [1] Second one! 第三句。第四句？\n- a list item"),
            vec![
                "First claim here. [1]",
                "Second one!",
                "第三句。",
                "第四句？",
                "- a list item"
            ]
        );
        assert_eq!(
            sentences("Version 1.5 is out."),
            vec!["Version 1.5 is out."]
        );
    }

    #[test]
    fn markers_are_read_in_every_written_form() {
        let (text, ns) = strip_markers("a [1] b [2, 3] c [4][5] d 【6】 e [link] f [x](u)");
        assert_eq!(ns, vec![1, 2, 3, 4, 5, 6]);
        assert_eq!(text, "a  b  c  d  e [link] f [x](u)");
    }
}
