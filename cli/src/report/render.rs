//! `rag report` as terminal text and as CSV.
//!
//! Questions and comments are visitors' text: every control, bidirectional-formatting and
//! invisible character is shown as an escape ([`super::visible`]: a question cannot move
//! the cursor, recolour the screen, reverse a line or hide words), and in the terminal long
//! text is cut. In CSV every field is quoted, and a formula character (`=`, `+`, `-`, `@`)
//! gets a leading `'` wherever a spreadsheet could start a cell: at the start and after
//! `,` `;` tab `|` or a line break.

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
    heading(&mut out, "Most asked", s.top_questions.is_empty());
    for q in &s.top_questions {
        let _ = writeln!(
            out,
            "  {:>5}  {:<6}  {}",
            q.count,
            q.language,
            terminal_text(&q.text)
        );
    }
    heading(
        &mut out,
        &format!(
            "Coverage gaps (no hits, or best score under {})",
            s.weak_score
        ),
        s.coverage_gaps.is_empty(),
    );
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
    heading(&mut out, "Rated down", s.negative_feedback.is_empty());
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
    heading(&mut out, "Model errors", s.model_errors.is_empty());
    for e in &s.model_errors {
        let _ = writeln!(out, "  {:>5}  {}", e.count, e.outcome);
    }
    heading(
        &mut out,
        "Poorly grounded answers (unsupported / claims, bad citations)",
        s.poorly_grounded.is_empty(),
    );
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

/// A section's title after a blank line, and `(none)` under it when it has no rows.
fn heading(out: &mut String, title: &str, empty: bool) {
    let _ = writeln!(out, "\n{title}");
    if empty {
        let _ = writeln!(out, "  (none)");
    }
}

/// Visitor text made safe for one terminal line and cut to [`TEXT_CHARS`].
fn terminal_text(text: &str) -> String {
    let mut out = String::new();
    for (i, c) in text.chars().enumerate() {
        if i == TEXT_CHARS {
            out.push('…');
            break;
        }
        match c {
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if super::visible::hidden(c) => {
                out.push_str(&super::visible::escaped(c.encode_utf8(&mut [0; 4])))
            }
            c => out.push(c),
        }
    }
    out
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

/// Characters a spreadsheet reads as the start of a formula (and their full-width forms).
const FORMULA_START: &[char] = &['=', '+', '-', '@', '＝', '＋', '－', '＠'];

/// Characters after which a spreadsheet may start a new cell: the separators of every
/// locale (`,` `;` tab, `|` in some imports) and line breaks.
const CELL_BREAK: &[char] = &[',', ';', '\t', '|', '\n', '\r'];

/// One CSV field, always quoted; hidden characters escaped ([`super::visible`]); a `'`
/// before a formula character wherever a cell could start: at the field's start and after
/// any separator or line break (a spreadsheet whose separator is `;` or tab splits the
/// field there, and runs `a;=cmd|' /C calc'!A0` as a formula).
fn csv_field(text: &str) -> String {
    let text = super::visible::escaped(text);
    let mut out = String::with_capacity(text.len() + 4);
    out.push('"');
    let mut cell_start = true;
    for c in text.chars() {
        if cell_start && FORMULA_START.contains(&c) {
            out.push('\'');
        }
        cell_start = CELL_BREAK.contains(&c) || (cell_start && c == ' ');
        if c == '"' {
            out.push('"');
        }
        out.push(c);
    }
    out.push('"');
    out
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
        assert_eq!(csv_field("plain"), "\"plain\"");
        assert_eq!(csv_field(""), "\"\"");
        assert_eq!(csv_field("a,b"), "\"a,b\"");
        assert_eq!(
            csv_field("say \"hi\"\nnow"),
            "\"say \"\"hi\"\"\\u{000a}now\""
        );
        assert_eq!(csv_field("=HYPERLINK(\"x\")"), "\"'=HYPERLINK(\"\"x\"\")\"");
        assert_eq!(csv_field("-1"), "\"'-1\"");
    }

    #[test]
    fn a_formula_after_a_separator_of_any_locale_is_defused() {
        // The review's cell: a formula once a `;` locale splits the field.
        assert_eq!(
            csv_field("a;=cmd|' /C calc'!A0"),
            "\"a;'=cmd|' /C calc'!A0\""
        );
        assert_eq!(csv_field("a, +1"), "\"a, '+1\"");
        assert_eq!(csv_field("x|@SUM(A1)"), "\"x|'@SUM(A1)\"");
        assert_eq!(csv_field("＝1+1"), "\"'＝1+1\"");
        // A tab is escaped, and what follows it defused all the same.
        assert_eq!(csv_field("a\t=1"), "\"a\\u{0009}=1\"");
        // Inside a cell, formula characters are text.
        assert_eq!(csv_field("e-mail x=1"), "\"e-mail x=1\"");
    }

    #[test]
    fn questions_and_comments_show_bidi_and_invisible_characters_as_escapes() {
        let text = "ok\u{202e}gnp.exe\u{061c}\u{200b}\u{e0041}";
        for shown in [csv_field(text), terminal_text(text)] {
            assert!(
                !shown.chars().any(super::super::visible::hidden),
                "{shown:?}"
            );
            assert!(shown.contains("\\u{202e}"), "{shown:?}");
            assert!(shown.contains("\\u{e0041}"), "{shown:?}");
        }
    }
}
