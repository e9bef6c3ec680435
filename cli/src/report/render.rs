//! `rag report` as terminal text and as CSV.
//!
//! Questions and comments are visitors' text: in the terminal every control and
//! bidirectional-formatting character is shown as an escape (a question cannot move the
//! cursor, recolour the screen or reverse a line), and long text is cut. In CSV a field
//! that a spreadsheet would run as a formula (`=`, `+`, `-`, `@` first) gets a leading `'`.

use std::fmt::Write;

use super::summary::Summary;

/// Widest question shown in the terminal, in characters.
const TEXT_CHARS: usize = 60;

/// The report as aligned text.
pub(crate) fn table(s: &Summary) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "Questions {} to {} (UTC): {} asked, {} rated up, {} rated down{}",
        s.since,
        s.until,
        s.questions,
        s.rated_up,
        s.rated_down,
        if s.truncated {
            " (partial: --max-records reached)"
        } else {
            ""
        }
    );
    let _ = writeln!(
        out,
        "\nPer day (daily token budget {})",
        s.daily_token_budget
    );
    let _ = writeln!(
        out,
        "  {:<10}  {:>9}  {:>10}  {:>7}  {:>7}  {:>12}",
        "date", "questions", "tokens", "budget", "no hits", "model errors"
    );
    for d in &s.days {
        let _ = writeln!(
            out,
            "  {:<10}  {:>9}  {:>10}  {:>6.1}%  {:>7}  {:>12}",
            d.date, d.questions, d.tokens, d.budget_used_pct, d.no_hits, d.model_errors
        );
    }
    let _ = writeln!(out, "\nMost asked");
    if s.top_questions.is_empty() {
        let _ = writeln!(out, "  (none)");
    }
    for q in &s.top_questions {
        let _ = writeln!(
            out,
            "  {:>5}  {:<6}  {}",
            q.count,
            q.language,
            terminal_text(&q.text)
        );
    }
    let _ = writeln!(
        out,
        "\nCoverage gaps (no hits, or best score under {})",
        s.weak_score
    );
    if s.coverage_gaps.is_empty() {
        let _ = writeln!(out, "  (none)");
    }
    for g in &s.coverage_gaps {
        let score = g
            .best_score
            .map(|v| format!(" best {v:.2}"))
            .unwrap_or_default();
        let _ = writeln!(
            out,
            "  {:>5}  {:<6}  {:<8}  {}{score}",
            g.count,
            g.language,
            g.kind,
            terminal_text(&g.text)
        );
    }
    let _ = writeln!(out, "\nRated down");
    if s.negative_feedback.is_empty() {
        let _ = writeln!(out, "  (none)");
    }
    for r in &s.negative_feedback {
        let _ = writeln!(
            out,
            "  {}  {}  {}",
            r.date,
            r.request_id,
            terminal_text(&r.question)
        );
        if let Some(c) = &r.comment {
            let _ = writeln!(out, "              “{}”", terminal_text(c));
        }
    }
    let _ = writeln!(out, "\nModel errors");
    if s.model_errors.is_empty() {
        let _ = writeln!(out, "  (none)");
    }
    for e in &s.model_errors {
        let _ = writeln!(out, "  {:>5}  {}", e.count, e.outcome);
    }
    let _ = writeln!(
        out,
        "\nPoorly grounded answers (unsupported / claims, bad citations)"
    );
    if s.poorly_grounded.is_empty() {
        let _ = writeln!(out, "  (none)");
    }
    for u in &s.poorly_grounded {
        let _ = writeln!(
            out,
            "  {}  {}  {}/{}  {}  {}",
            u.date,
            u.request_id,
            u.unsupported_sentences,
            u.sentences,
            u.invalid_citations,
            terminal_text(&u.question)
        );
    }
    out
}

/// Visitor text made safe for one terminal line and cut to [`TEXT_CHARS`].
fn terminal_text(text: &str) -> String {
    let escaped = shared::error::escape_controls(text);
    let mut out = String::new();
    for (i, c) in escaped.chars().enumerate() {
        if i == TEXT_CHARS {
            out.push('…');
            break;
        }
        if is_bidi_or_zero_width(c) {
            let _ = write!(out, "\\u{{{:04x}}}", u32::from(c));
        } else {
            out.push(c);
        }
    }
    out
}

/// Characters that reorder or hide text on display.
fn is_bidi_or_zero_width(c: char) -> bool {
    matches!(c, '\u{200b}'..='\u{200f}' | '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}' | '\u{feff}')
}

/// The CSV header; every row has these columns.
pub(crate) const CSV_HEADER: &str =
    "section,date,text,language,count,detail,tokens,budget_used_pct";

/// The report as one CSV table (RFC 4180), a `section` column saying what each row is:
/// `day`, `question`, `gap`, `rated_down`, `model_error`, `poorly_grounded`.
pub(crate) fn csv(s: &Summary) -> String {
    let mut out = format!("{CSV_HEADER}\r\n");
    let mut row = |fields: [&str; 8]| {
        let cells: Vec<String> = fields.iter().map(|f| csv_field(f)).collect();
        out.push_str(&cells.join(","));
        out.push_str("\r\n");
    };
    for d in &s.days {
        let detail = format!("no_hits={} model_errors={}", d.no_hits, d.model_errors);
        row([
            "day",
            &d.date,
            "",
            "",
            &d.questions.to_string(),
            &detail,
            &d.tokens.to_string(),
            &d.budget_used_pct.to_string(),
        ]);
    }
    for q in &s.top_questions {
        row([
            "question",
            "",
            &q.text,
            q.language,
            &q.count.to_string(),
            "",
            "",
            "",
        ]);
    }
    for g in &s.coverage_gaps {
        let detail = match g.best_score {
            Some(v) => format!("{} best={v}", g.kind),
            None => g.kind.to_owned(),
        };
        row([
            "gap",
            "",
            &g.text,
            g.language,
            &g.count.to_string(),
            &detail,
            "",
            "",
        ]);
    }
    for r in &s.negative_feedback {
        row([
            "rated_down",
            &r.date,
            &r.question,
            "",
            "1",
            r.comment.as_deref().unwrap_or(""),
            "",
            "",
        ]);
    }
    for e in &s.model_errors {
        row([
            "model_error",
            "",
            "",
            "",
            &e.count.to_string(),
            &e.outcome,
            "",
            "",
        ]);
    }
    for u in &s.poorly_grounded {
        let detail = format!(
            "unsupported {} of {}, invalid citations {}",
            u.unsupported_sentences, u.sentences, u.invalid_citations
        );
        row([
            "poorly_grounded",
            &u.date,
            &u.question,
            "",
            "1",
            &detail,
            "",
            "",
        ]);
    }
    out
}

/// One CSV field: quoted when it holds a comma, quote or line break; a leading `'` when a
/// spreadsheet would read it as a formula.
fn csv_field(text: &str) -> String {
    let text = if text.starts_with(['=', '+', '-', '@', '\t', '\r']) {
        format!("'{text}")
    } else {
        text.to_owned()
    };
    if text.contains([',', '"', '\n', '\r']) {
        format!("\"{}\"", text.replace('"', "\"\""))
    } else {
        text
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn terminal_text_shows_escapes_for_controls_and_bidi_and_cuts_long_text() {
        assert_eq!(terminal_text("a\x1b[31mb\nc"), "a\\u{001b}[31mb\\nc");
        assert_eq!(terminal_text("x\u{202e}y"), "x\\u{202e}y");
        let long = "é".repeat(TEXT_CHARS + 5);
        assert_eq!(terminal_text(&long).chars().count(), TEXT_CHARS + 1);
    }

    #[test]
    fn csv_fields_are_quoted_and_formulas_defused() {
        assert_eq!(csv_field("plain"), "plain");
        assert_eq!(csv_field("a,b"), "\"a,b\"");
        assert_eq!(csv_field("say \"hi\"\nnow"), "\"say \"\"hi\"\"\nnow\"");
        assert_eq!(csv_field("=HYPERLINK(\"x\")"), "\"'=HYPERLINK(\"\"x\"\")\"");
        assert_eq!(csv_field("-1"), "'-1");
    }
}
