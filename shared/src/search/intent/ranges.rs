//! Numeric conditions of a listing question: star thresholds ("more than 1000 stars",
//! "超过 1000 star", "1k+ stars") and years or year ranges ("2020-2023", "since 2021",
//! "2020 年以来"), each taken out of the question as it is read.

use super::question::{tokenize, Question, Tok};
use crate::search::filter::Range;

const STAR_WORDS: &[&str] = &["star", "stars", "starred", "stargazers", "stared"];
/// Comparators that keep the number itself ("at least 1000", "1000 以上").
const AT_LEAST: &[&str] = &["至少", "不少于", "以上", "起", "least", "+", "minimum"];
/// Comparators that exclude it ("more than 1000").
const MORE_THAN: &[&str] = &[
    "超过",
    "多于",
    "大于",
    "高于",
    "more",
    "over",
    "above",
    "greater",
    "exceeding",
    ">",
];

/// Star thresholds: a number with a star word and a comparator within four tokens.
pub(super) fn take_stars(q: &mut Question) -> Option<Range> {
    for i in 0..q.toks.len() {
        let Some(n) = q.word(i).and_then(parse_count) else {
            continue;
        };
        let window = i.saturating_sub(4)..(i + 5).min(q.toks.len());
        let Some(star) = window
            .clone()
            .find(|&j| q.is(j, STAR_WORDS) || (q.han(j, '星') && !q.han(j + 1, '期')))
        else {
            continue;
        };
        let text_at = |j: usize| -> String {
            (j..(j + 3).min(q.toks.len()))
                .map(|k| match &q.toks[k] {
                    Tok::Word(w) => w.clone(),
                    Tok::Han(c) => c.to_string(),
                })
                .collect::<Vec<_>>()
                .join("")
        };
        let starts = |j: usize, set: &[&str]| {
            let t = text_at(j);
            set.iter()
                .find(|s| t.starts_with(*s))
                .map(|s| tokenize(s).len())
        };
        // A number near a star word is a threshold only with a comparator: in "LLaVA-1.5
        // 有多少 star" the numbers are part of a name.
        let mut comparator = None;
        for j in window.clone() {
            if let Some(len) = starts(j, AT_LEAST) {
                comparator = Some((j, len, true));
            } else if let Some(len) = starts(j, MORE_THAN) {
                comparator = Some((j, len, false));
            }
        }
        let Some((at, len, inclusive)) = comparator else {
            continue;
        };
        q.mark(at, len);
        q.take_any(&["than", "at", "with", "个"]);
        q.mark(i, 1);
        q.mark(star, 1);
        // "1000+ stars", a 千/万 after the number.
        if q.han(i + 1, '千') || q.han(i + 1, '万') {
            q.mark(i + 1, 1);
        }
        let scale = match q.toks.get(i + 1) {
            Some(Tok::Han('千')) => 1_000,
            Some(Tok::Han('万')) => 10_000,
            _ => 1,
        };
        let n = n.saturating_mul(scale);
        return Some(Range {
            min: Some(if inclusive { n } else { n + 1 }),
            max: None,
        });
    }
    None
}

/// `1000`, `1k`, `2m`.
fn parse_count(w: &str) -> Option<u64> {
    let (digits, scale) = match w.strip_suffix('k') {
        Some(d) => (d, 1_000),
        None => (w, 1),
    };
    (!digits.is_empty() && digits.bytes().all(|b| b.is_ascii_digit()))
        .then(|| digits.parse::<u64>().ok())
        .flatten()
        .map(|n| n.saturating_mul(scale))
}

fn as_year(w: &str) -> Option<u64> {
    (w.len() == 4)
        .then(|| w.parse::<u64>().ok())
        .flatten()
        .filter(|y| (1900..=2099).contains(y))
}

/// Years and year ranges.
pub(super) fn take_years(q: &mut Question) -> Option<Range> {
    let years: Vec<(usize, u64)> = (0..q.toks.len())
        .filter_map(|i| q.word(i).and_then(as_year).map(|y| (i, y)))
        .collect();
    let (&(first_at, first), rest) = years.split_first()?;
    for &(i, _) in &years {
        q.mark(i, 1);
        if q.han(i + 1, '年') {
            q.mark(i + 1, 1);
        }
    }
    let connectors = [
        "between", "from", "to", "and", "到", "至", "和", "或", "-", "in", "of",
    ];
    if let Some(&(_, last)) = rest.last() {
        q.take_any(&connectors);
        let (lo, hi) = (first.min(last), first.max(last));
        return Some(Range {
            min: Some(lo),
            max: Some(hi),
        });
    }
    // One year, perhaps with "since", "after", "以来"...
    let before_word = |words: &[&str]| first_at > 0 && q.is(first_at - 1, words);
    let mut after = first_at + 1;
    if q.toks.get(after) == Some(&Tok::Han('年')) {
        after += 1;
    }
    let follows = |q: &Question, phrases: &[&str]| {
        phrases.iter().find_map(|p| {
            let pat = tokenize(p);
            (q.find(&pat, after) == Some(after)).then_some(pat.len())
        })
    };
    let range = if before_word(&["since", "from"]) {
        Range {
            min: Some(first),
            max: None,
        }
    } else if before_word(&["after"]) {
        Range {
            min: Some(first + 1),
            max: None,
        }
    } else if before_word(&["before"]) {
        Range {
            min: None,
            max: Some(first - 1),
        }
    } else if before_word(&["until", "through"]) {
        Range {
            min: None,
            max: Some(first),
        }
    } else if let Some(len) = follows(q, &["以来", "以后", "起", "开始"]) {
        q.mark(after, len);
        Range {
            min: Some(first),
            max: None,
        }
    } else if let Some(len) = follows(q, &["之后", "后"]) {
        q.mark(after, len);
        Range {
            min: Some(first + 1),
            max: None,
        }
    } else if let Some(len) = follows(q, &["之前", "以前", "前"]) {
        q.mark(after, len);
        Range {
            min: None,
            max: Some(first - 1),
        }
    } else {
        Range::exactly(first)
    };
    q.take_any(&["since", "after", "before", "until", "through"]);
    q.take_any(&connectors);
    Some(range)
}
