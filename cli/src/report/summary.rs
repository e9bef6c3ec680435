//! What `rag report` says, computed from audit entries: pure, no I/O.
//!
//! Only chat records count. Questions are grouped by the form the answer cache compares
//! ([`normalize_question`]: case, width and spacing folded, closing punctuation dropped), so
//! "What is Partial FC?" and "what is partial fc" are one question here as there. A
//! record is a coverage gap when retrieval found nothing (`hits` 0, or the outcome
//! `no_hits` of records older than the `hits` field) or only weak hits (best score under
//! the threshold).

use std::collections::BTreeMap;

use serde::Serialize;
use shared::answer_cache::normalize_question;
use shared::store::{AuditEntry, Rating};

use super::dates::{day_of, format_day};

/// Records of `rag report`'s input that are not chat (ingests) or outside the range are
/// dropped before this; the totals count what is left.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub(crate) struct Summary {
    /// First day of the range, `YYYY-MM-DD` (UTC).
    pub(crate) since: String,
    /// Last day of the range, included.
    pub(crate) until: String,
    /// Chat records in the range.
    pub(crate) questions: usize,
    /// True when the read stopped at `--max-records`: the figures are a lower bound.
    pub(crate) truncated: bool,
    /// The daily token budget the days are compared with.
    pub(crate) daily_token_budget: u64,
    /// Best-hit score under which a question counts as weakly covered.
    pub(crate) weak_score: f32,
    /// Answers of the range visitors rated up.
    pub(crate) rated_up: usize,
    /// Answers of the range visitors rated down (each listed in `negative_feedback`).
    pub(crate) rated_down: usize,
    /// One row per day of the range, oldest first (days without questions included).
    pub(crate) days: Vec<Day>,
    /// Questions by normalised text, most asked first.
    pub(crate) top_questions: Vec<Question>,
    /// Questions the site had nothing or little for, most asked first.
    pub(crate) coverage_gaps: Vec<Gap>,
    /// Answers rated down, newest first.
    pub(crate) negative_feedback: Vec<Rated>,
    /// Failed model calls by outcome, most frequent first.
    pub(crate) model_errors: Vec<ErrorCount>,
    /// Answers with sentences the retrieved entries do not back, or wrong citations
    /// (the grounding check), newest first.
    pub(crate) poorly_grounded: Vec<Ungrounded>,
}

/// An answer the grounding check flagged.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub(crate) struct Ungrounded {
    /// Day of the question.
    pub(crate) date: String,
    /// The answer's request id.
    pub(crate) request_id: String,
    /// The question as asked (empty for records without one).
    pub(crate) question: String,
    /// Claims in the answer.
    pub(crate) sentences: u32,
    /// Claims the entries do not back.
    pub(crate) unsupported_sentences: u32,
    /// Citations naming no entry or the wrong one.
    pub(crate) invalid_citations: u32,
}

/// One day's figures.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub(crate) struct Day {
    /// `YYYY-MM-DD` (UTC).
    pub(crate) date: String,
    /// Chat records of the day (every answered or failed question).
    pub(crate) questions: usize,
    /// Tokens the model reported (prompt + answer).
    pub(crate) tokens: u64,
    /// `tokens` as a percentage of the daily budget (0 when the budget is 0).
    pub(crate) budget_used_pct: f64,
    /// Requests with no hits.
    pub(crate) no_hits: usize,
    /// Failed model calls.
    pub(crate) model_errors: usize,
}

/// A question as visitors asked it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub(crate) struct Question {
    /// The question as first asked (trimmed).
    pub(crate) text: String,
    /// The text questions are grouped by ([`normalize_question`]: case, width and
    /// closing punctuation folded).
    pub(crate) normalized: String,
    /// Guessed from the script: `zh`, `ja`, `ko`, `latin` or `other`.
    pub(crate) language: &'static str,
    /// How often it was asked.
    pub(crate) count: usize,
}

/// A question the knowledge base does not cover well.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub(crate) struct Gap {
    /// The question as first asked.
    pub(crate) text: String,
    /// Guessed from the script.
    pub(crate) language: &'static str,
    /// How often it was asked with no or weak hits.
    pub(crate) count: usize,
    /// `no_hits` when retrieval found nothing at least once, else `weak`.
    pub(crate) kind: &'static str,
    /// The best score seen among its weak answers, if any.
    pub(crate) best_score: Option<f32>,
}

/// An answer rated down.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub(crate) struct Rated {
    /// Day of the question.
    pub(crate) date: String,
    /// The answer's request id (to find it in the table).
    pub(crate) request_id: String,
    /// The question (empty for records without one).
    pub(crate) question: String,
    /// The visitor's comment, if any.
    pub(crate) comment: Option<String>,
    /// How the answer ended (`ok`, `offline`, ...).
    pub(crate) outcome: String,
}

/// How often one kind of model failure happened.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub(crate) struct ErrorCount {
    /// The audit outcome, e.g. `model_error:timeout`.
    pub(crate) outcome: String,
    /// How many records of the range ended with it.
    pub(crate) count: usize,
}

/// Options of the summary.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Options {
    /// First day, as days since 1970-01-01.
    pub(crate) since_day: i64,
    /// Last day, included.
    pub(crate) until_day: i64,
    /// The deployment's `DAILY_TOKEN_BUDGET`, for the per-day percentage.
    pub(crate) budget: u64,
    /// A question whose best hit scored under this (BM25) is a coverage gap.
    pub(crate) weak_score: f32,
    /// Rows kept in the question and gap lists.
    pub(crate) top: usize,
}

/// The report over `entries` (any order; non-chat and out-of-range ones are skipped).
pub(crate) fn summarize(entries: &[AuditEntry], opts: Options, truncated: bool) -> Summary {
    let span = usize::try_from(opts.until_day - opts.since_day + 1).unwrap_or(0);
    let mut days: Vec<Day> = (0..span)
        .map(|i| Day {
            date: format_day(opts.since_day + i as i64),
            questions: 0,
            tokens: 0,
            budget_used_pct: 0.0,
            no_hits: 0,
            model_errors: 0,
        })
        .collect();
    let mut tally = Tally::default();
    let mut chats: Vec<&AuditEntry> = entries
        .iter()
        .filter(|e| e.record.action == "chat")
        .collect();
    // Oldest first, so "as first asked" is the first in time.
    chats.sort_by_key(|e| e.at_ms);
    for e in chats {
        let day = day_of(e.at_ms);
        let Some(row) = usize::try_from(day - opts.since_day)
            .ok()
            .and_then(|i| days.get_mut(i))
        else {
            continue;
        };
        tally.add(e, day, row, opts.weak_score);
    }
    for d in &mut days {
        d.budget_used_pct = if opts.budget == 0 {
            0.0
        } else {
            // Two decimals are plenty for a percentage read by a person.
            (d.tokens as f64 * 10_000.0 / opts.budget as f64).round() / 100.0
        };
    }
    let Tally {
        asked,
        gaps,
        errors,
        mut negative,
        mut ungrounded,
        up,
        down,
        total,
    } = tally;
    let mut top_questions: Vec<Question> = asked.into_values().collect();
    // Most asked first; ties by text so the output is stable.
    top_questions.sort_by(|a, b| b.count.cmp(&a.count).then(a.normalized.cmp(&b.normalized)));
    top_questions.truncate(opts.top);
    let mut coverage_gaps: Vec<Gap> = gaps.into_values().collect();
    coverage_gaps.sort_by(|a, b| b.count.cmp(&a.count).then(a.text.cmp(&b.text)));
    coverage_gaps.truncate(opts.top);
    negative.sort_by_key(|n| std::cmp::Reverse(n.0));
    ungrounded.sort_by_key(|n| std::cmp::Reverse(n.0));
    ungrounded.truncate(opts.top);
    let mut model_errors: Vec<ErrorCount> = errors
        .into_iter()
        .map(|(outcome, count)| ErrorCount { outcome, count })
        .collect();
    model_errors.sort_by(|a, b| b.count.cmp(&a.count).then(a.outcome.cmp(&b.outcome)));
    Summary {
        since: format_day(opts.since_day),
        until: format_day(opts.until_day),
        questions: total,
        truncated,
        daily_token_budget: opts.budget,
        weak_score: opts.weak_score,
        rated_up: up,
        rated_down: down,
        days,
        top_questions,
        coverage_gaps,
        negative_feedback: negative.into_iter().map(|(_, r)| r).collect(),
        model_errors,
        poorly_grounded: ungrounded.into_iter().map(|(_, u)| u).collect(),
    }
}

/// The chat records of the period counted, before the lists are sorted and cut. Questions,
/// gaps and errors are keyed by normalised text (the first-seen text and language ride
/// along); ratings and flagged answers carry their time for newest-first order.
#[derive(Default)]
struct Tally {
    asked: BTreeMap<String, Question>,
    gaps: BTreeMap<String, Gap>,
    errors: BTreeMap<String, usize>,
    negative: Vec<(u64, Rated)>,
    ungrounded: Vec<(u64, Ungrounded)>,
    up: usize,
    down: usize,
    total: usize,
}

impl Tally {
    /// Counts one chat record of `day` (days since 1970-01-01) into the tally and its
    /// day's `row`; a top score under `weak_score` makes its question a gap.
    fn add(&mut self, e: &AuditEntry, day: i64, row: &mut Day, weak_score: f32) {
        self.total += 1;
        let r = &e.record;
        row.questions += 1;
        row.tokens += r.usage.map_or(0, |u| u64::from(u.total_tokens));
        let no_hits = r.hits == Some(0) || r.outcome == "no_hits";
        row.no_hits += usize::from(no_hits);
        if r.outcome.starts_with("model_error") {
            row.model_errors += 1;
            *self.errors.entry(r.outcome.clone()).or_default() += 1;
        }
        let text = r.question.as_deref().unwrap_or("").trim();
        let weak = r.top_score.filter(|s| !no_hits && *s < weak_score);
        self.ask(text, no_hits, weak);
        if let Some(g) = r.grounding.filter(|g| g.flagged()) {
            self.ungrounded.push((
                e.at_ms,
                Ungrounded {
                    date: format_day(day),
                    request_id: r.request_id.clone(),
                    question: text.to_owned(),
                    sentences: g.sentences,
                    unsupported_sentences: g.unsupported_sentences,
                    invalid_citations: g.invalid_citations,
                },
            ));
        }
        match r.feedback.as_ref().map(|f| f.rating) {
            Some(Rating::Up) => self.up += 1,
            Some(Rating::Down) => {
                self.down += 1;
                self.negative.push((
                    e.at_ms,
                    Rated {
                        date: format_day(day),
                        request_id: r.request_id.clone(),
                        question: text.to_owned(),
                        comment: r.feedback.as_ref().and_then(|f| f.comment.clone()),
                        outcome: r.outcome.clone(),
                    },
                ));
            }
            None => {}
        }
    }

    /// Counts a question asked (an empty one is not counted), and as a coverage gap when
    /// it found nothing (`no_hits`) or only a `weak` best score.
    fn ask(&mut self, text: &str, no_hits: bool, weak: Option<f32>) {
        let key = normalize_question(text);
        if key.is_empty() {
            return;
        }
        self.asked
            .entry(key.clone())
            .or_insert_with(|| Question {
                text: text.to_owned(),
                normalized: key.clone(),
                language: language(text),
                count: 0,
            })
            .count += 1;
        if no_hits || weak.is_some() {
            let gap = self.gaps.entry(key).or_insert_with(|| Gap {
                text: text.to_owned(),
                language: language(text),
                count: 0,
                kind: "weak",
                best_score: None,
            });
            gap.count += 1;
            if no_hits {
                gap.kind = "no_hits";
            }
            if let Some(s) = weak {
                gap.best_score = Some(gap.best_score.map_or(s, |b| b.max(s)));
            }
        }
    }
}

/// The language a question is written in, guessed from its script: kana → `ja`, hangul →
/// `ko`, Han → `zh`, Latin letters → `latin`, else `other`.
pub(crate) fn language(text: &str) -> &'static str {
    let has = |f: fn(u32) -> bool| text.chars().any(|c| f(u32::from(c)));
    if has(|c| (0x3040..=0x30FF).contains(&c)) {
        "ja"
    } else if has(|c| (0xAC00..=0xD7AF).contains(&c) || (0x1100..=0x11FF).contains(&c)) {
        "ko"
    } else if shared::chat::is_chinese(text) {
        "zh"
    } else if text
        .chars()
        .any(|c| c.is_ascii_alphabetic() || ('\u{00C0}'..='\u{024F}').contains(&c))
    {
        "latin"
    } else {
        "other"
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use shared::store::{AuditRecord, Feedback};
    use shared::Usage;

    const DAY_MS: u64 = 86_400_000;

    fn chat(at_ms: u64, q: &str, hits: u32, score: f32, outcome: &str, tokens: u32) -> AuditEntry {
        AuditEntry {
            at_ms,
            record: AuditRecord {
                action: "chat".into(),
                request_id: format!("r{at_ms}"),
                question: Some(q.into()),
                hits: Some(hits),
                top_score: (hits > 0).then_some(score),
                outcome: outcome.into(),
                usage: (tokens > 0).then(|| Usage {
                    prompt_tokens: tokens - 1,
                    completion_tokens: 1,
                    total_tokens: tokens,
                }),
                ..AuditRecord::default()
            },
        }
    }

    fn opts() -> Options {
        Options {
            since_day: 10,
            until_day: 12,
            budget: 1000,
            weak_score: 2.0,
            top: 10,
        }
    }

    #[test]
    fn questions_group_by_normalised_text_and_days_add_up() {
        let mut rated = chat(11 * DAY_MS + 5, "Who wrote it", 3, 9.0, "ok", 300);
        rated.record.feedback = Some(Feedback {
            rating: Rating::Down,
            comment: Some("wrong".into()),
            at_ms: 0,
        });
        let entries = vec![
            chat(10 * DAY_MS, "What is Partial FC?", 2, 8.0, "ok", 100),
            chat(
                10 * DAY_MS + 1,
                "  what is   PARTIAL fc ",
                2,
                8.0,
                "ok",
                150,
            ),
            chat(
                11 * DAY_MS,
                "ｗｈａｔ ｉｓ partial fc？",
                0,
                0.0,
                "no_hits",
                0,
            ),
            chat(11 * DAY_MS + 1, "天气如何", 1, 1.5, "ok", 50),
            chat(11 * DAY_MS + 2, "Tell me", 1, 5.0, "model_error:timeout", 0),
            rated,
            // Outside the range, and not a chat: both skipped.
            chat(13 * DAY_MS, "later", 1, 5.0, "ok", 999),
            AuditEntry {
                at_ms: 10 * DAY_MS,
                record: AuditRecord {
                    action: "ingest".into(),
                    ..AuditRecord::default()
                },
            },
        ];
        let s = summarize(&entries, opts(), false);
        assert_eq!(s.questions, 6);
        assert_eq!(s.days.len(), 3);
        assert_eq!(
            s.days
                .iter()
                .map(|d| (d.questions, d.tokens))
                .collect::<Vec<_>>(),
            vec![(2, 250), (4, 350), (0, 0)]
        );
        assert_eq!(s.days[0].budget_used_pct, 25.0);
        assert_eq!(s.days[1].no_hits, 1);
        assert_eq!(s.days[1].model_errors, 1);
        assert_eq!(s.top_questions[0].count, 3);
        assert_eq!(s.top_questions[0].normalized, "what is partial fc");
        assert_eq!(s.top_questions[0].text, "What is Partial FC?");
        let gaps: Vec<(&str, &str, usize)> = s
            .coverage_gaps
            .iter()
            .map(|g| (g.text.as_str(), g.kind, g.count))
            .collect();
        // Equal counts sort by text: 天 (U+5929) before ｗ (U+FF57).
        assert_eq!(
            gaps,
            vec![
                ("天气如何", "weak", 1),
                ("ｗｈａｔ ｉｓ partial fc？", "no_hits", 1)
            ]
        );
        assert_eq!(s.coverage_gaps[0].best_score, Some(1.5));
        assert_eq!(s.coverage_gaps[0].language, "zh");
        assert_eq!(s.coverage_gaps[1].best_score, None);
        assert_eq!((s.rated_up, s.rated_down), (0, 1));
        assert_eq!(s.negative_feedback[0].comment.as_deref(), Some("wrong"));
        assert_eq!(
            s.model_errors,
            vec![ErrorCount {
                outcome: "model_error:timeout".into(),
                count: 1
            }]
        );
    }

    #[test]
    fn languages_are_guessed_from_the_script() {
        assert_eq!(language("请介绍一下 Partial FC"), "zh");
        assert_eq!(language("パーシャルFCとは"), "ja");
        assert_eq!(language("부분 FC란"), "ko");
        assert_eq!(language("Qu'est-ce que c'est"), "latin");
        assert_eq!(language("Что это"), "other");
    }
}
