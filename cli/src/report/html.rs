//! `rag report --html`: one self-contained page (inline CSS and SVG, no script, no external
//! asset), so it can be mailed or archived as one file and opened offline.
//!
//! Every value written into the page goes through [`esc`], visitors' questions and comments
//! above all: a question like `<script>` shows as text.

use std::fmt::Write;

use super::summary::Summary;

/// Text escaped for HTML element content and quoted attribute values; controls, bidi and
/// invisible characters shown as `\u{…}` ([`super::visible`]).
pub(crate) fn esc(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            c if super::visible::hidden(c) => {
                out.push_str(&super::visible::escaped(c.encode_utf8(&mut [0; 4])))
            }
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

/// The whole page.
pub(crate) fn page(s: &Summary) -> String {
    let mut h = String::new();
    let title = format!("Questions {} to {}", s.since, s.until);
    let _ = write!(
        h,
        "<!doctype html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\
         <meta name=\"viewport\" content=\"width=device-width,initial-scale=1\">\
         <title>{}</title><style>{STYLE}</style></head><body>\n<h1>{}</h1>\n",
        esc(&title),
        esc(&title)
    );
    let _ = writeln!(
        h,
        "<p class=\"totals\">{} questions · {} rated up · {} rated down · daily token budget {}{}</p>",
        s.questions,
        s.rated_up,
        s.rated_down,
        s.daily_token_budget,
        if s.truncated { " · <strong>partial: the record limit was reached</strong>" } else { "" }
    );
    h.push_str(&chart(s));
    tables(&mut h, s);
    h.push_str("</body></html>\n");
    h
}

/// The report's tables, in the order the terminal shows them.
fn tables(h: &mut String, s: &Summary) {
    table(
        h,
        "Per day",
        &[
            "Date",
            "Questions",
            "Tokens",
            "Budget used",
            "No hits",
            "Model errors",
        ],
        s.days.iter().map(|d| {
            vec![
                d.date.clone(),
                d.questions.to_string(),
                d.tokens.to_string(),
                format!("{:.1}%", d.budget_used_pct),
                d.no_hits.to_string(),
                d.model_errors.to_string(),
            ]
        }),
    );
    table(
        h,
        "Most asked",
        &["Count", "Language", "Question"],
        s.top_questions
            .iter()
            .map(|q| vec![q.count.to_string(), q.language.to_owned(), q.text.clone()]),
    );
    table(
        h,
        &format!(
            "Coverage gaps (no hits, or best score under {})",
            s.weak_score
        ),
        &["Count", "Language", "Kind", "Best score", "Question"],
        s.coverage_gaps.iter().map(|g| {
            vec![
                g.count.to_string(),
                g.language.to_owned(),
                g.kind.to_owned(),
                g.best_score.map(|v| format!("{v:.2}")).unwrap_or_default(),
                g.text.clone(),
            ]
        }),
    );
    table(
        h,
        "Rated down",
        &["Date", "Request", "Question", "Comment", "Outcome"],
        s.negative_feedback.iter().map(|r| {
            vec![
                r.date.clone(),
                r.request_id.clone(),
                r.question.clone(),
                r.comment.clone().unwrap_or_default(),
                r.outcome.clone(),
            ]
        }),
    );
    table(
        h,
        "Model errors",
        &["Count", "Outcome"],
        s.model_errors
            .iter()
            .map(|e| vec![e.count.to_string(), e.outcome.clone()]),
    );
    table(
        h,
        "Poorly grounded answers",
        &[
            "Date",
            "Request",
            "Question",
            "Unsupported",
            "Claims",
            "Bad citations",
        ],
        s.poorly_grounded.iter().map(|u| {
            vec![
                u.date.clone(),
                u.request_id.clone(),
                u.question.clone(),
                u.unsupported_sentences.to_string(),
                u.sentences.to_string(),
                u.invalid_citations.to_string(),
            ]
        }),
    );
}

const STYLE: &str = "body{font:14px/1.45 system-ui,sans-serif;margin:2em auto;max-width:60em;\
padding:0 1em;color:#1d2733}h1{font-size:1.5em}h2{font-size:1.15em;margin-top:2em}\
table{border-collapse:collapse;width:100%}th,td{text-align:left;padding:.3em .6em;\
border-bottom:1px solid #dde3ea;vertical-align:top;overflow-wrap:anywhere}th{background:#f3f6f9}\
td.n{text-align:right;font-variant-numeric:tabular-nums}td:first-child{white-space:nowrap}.totals{color:#4a5867}\
svg{width:100%;height:auto;background:#fbfcfd;border:1px solid #dde3ea}";

/// One section: a heading and a table (a "none" row when empty). Cells that are numbers
/// are right-aligned.
fn table(h: &mut String, title: &str, head: &[&str], rows: impl Iterator<Item = Vec<String>>) {
    let _ = write!(h, "<h2>{}</h2>\n<table><thead><tr>", esc(title));
    for c in head {
        let _ = write!(h, "<th>{}</th>", esc(c));
    }
    h.push_str("</tr></thead><tbody>\n");
    let mut any = false;
    for row in rows {
        any = true;
        h.push_str("<tr>");
        for cell in row {
            let numeric = !cell.is_empty()
                && cell
                    .chars()
                    .all(|c| c.is_ascii_digit() || c == '.' || c == '%');
            let class = if numeric { " class=\"n\"" } else { "" };
            let _ = write!(h, "<td{class}>{}</td>", esc(&cell));
        }
        h.push_str("</tr>\n");
    }
    if !any {
        let _ = writeln!(h, "<tr><td colspan=\"{}\">none</td></tr>", head.len());
    }
    h.push_str("</tbody></table>\n");
}

/// Daily questions (bars, left scale) and tokens (line, right scale), with the daily
/// budget as a dashed line when it is within the token scale.
fn chart(s: &Summary) -> String {
    const W: f64 = 720.0;
    const H: f64 = 260.0;
    const LEFT: f64 = 48.0;
    const RIGHT: f64 = 64.0;
    const TOP: f64 = 28.0;
    const BOTTOM: f64 = 40.0;
    let (pw, ph) = (W - LEFT - RIGHT, H - TOP - BOTTOM);
    let n = s.days.len().max(1) as f64;
    let slot = pw / n;
    let max_q = s.days.iter().map(|d| d.questions).max().unwrap_or(0).max(1) as f64;
    let max_t = s.days.iter().map(|d| d.tokens).max().unwrap_or(0).max(1) as f64;
    let mut g = String::new();
    let _ = write!(
        g,
        "<h2>Questions and tokens per day</h2>\n<svg xmlns=\"http://www.w3.org/2000/svg\" \
         viewBox=\"0 0 {W} {H}\" role=\"img\" aria-label=\"{}\">",
        esc("Bars: questions per day. Line: tokens per day.")
    );
    // Axes and scale labels.
    let _ = write!(
        g,
        "<line x1=\"{LEFT}\" y1=\"{}\" x2=\"{}\" y2=\"{}\" stroke=\"#8a97a6\"/>\
         <text x=\"{}\" y=\"{}\" font-size=\"11\" text-anchor=\"end\" fill=\"#3b6fb6\">{}</text>\
         <text x=\"{}\" y=\"{}\" font-size=\"11\" fill=\"#c2571a\">{}</text>\
         <text x=\"{LEFT}\" y=\"14\" font-size=\"11\" fill=\"#3b6fb6\">{}</text>\
         <text x=\"{}\" y=\"14\" font-size=\"11\" text-anchor=\"end\" fill=\"#c2571a\">{}</text>",
        TOP + ph,
        LEFT + pw,
        TOP + ph,
        LEFT - 6.0,
        TOP + 4.0,
        esc(&(max_q as u64).to_string()),
        LEFT + pw + 6.0,
        TOP + 4.0,
        esc(&(max_t as u64).to_string()),
        esc("■ questions"),
        W - 4.0,
        esc("— tokens"),
    );
    let mut points = Vec::with_capacity(s.days.len());
    for (i, d) in s.days.iter().enumerate() {
        let x = LEFT + slot * i as f64;
        let bh = ph * d.questions as f64 / max_q;
        let _ = write!(
            g,
            "<rect x=\"{:.1}\" y=\"{:.1}\" width=\"{:.1}\" height=\"{:.1}\" fill=\"#8fb3e0\">\
             <title>{}</title></rect>",
            x + slot * 0.15,
            TOP + ph - bh,
            slot * 0.7,
            bh,
            esc(&format!(
                "{}: {} questions, {} tokens",
                d.date, d.questions, d.tokens
            ))
        );
        let ty = TOP + ph - ph * d.tokens as f64 / max_t;
        points.push(format!("{:.1},{:.1}", x + slot / 2.0, ty));
        // A date label under every day when they fit, else under every 7th.
        if s.days.len() <= 14 || i % 7 == 0 {
            let _ = write!(
                g,
                "<text x=\"{:.1}\" y=\"{}\" font-size=\"10\" text-anchor=\"middle\" fill=\"#4a5867\">{}</text>",
                x + slot / 2.0,
                TOP + ph + 16.0,
                esc(d.date.get(5..).unwrap_or(&d.date))
            );
        }
    }
    let _ = write!(
        g,
        "<polyline points=\"{}\" fill=\"none\" stroke=\"#c2571a\" stroke-width=\"2\"/>",
        esc(&points.join(" "))
    );
    let budget = s.daily_token_budget as f64;
    if budget > 0.0 && budget <= max_t {
        let y = TOP + ph - ph * budget / max_t;
        let _ = write!(
            g,
            "<line x1=\"{LEFT}\" y1=\"{y:.1}\" x2=\"{}\" y2=\"{y:.1}\" stroke=\"#c2571a\" \
             stroke-dasharray=\"4 3\"><title>{}</title></line>",
            LEFT + pw,
            esc(&format!("daily budget {}", s.daily_token_budget))
        );
    }
    g.push_str("</svg>\n");
    g
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bidi_and_invisible_characters_show_as_escapes() {
        assert_eq!(
            esc("a\u{202e}b\u{200b}c\u{e0041}\td"),
            "a\\u{202e}b\\u{200b}c\\u{e0041}\\u{0009}d"
        );
    }

    #[test]
    fn escaping_covers_markup_and_both_quotes() {
        assert_eq!(
            esc(r#"<img src=x onerror="a('b')">&"#),
            "&lt;img src=x onerror=&quot;a(&#39;b&#39;)&quot;&gt;&amp;"
        );
    }
}
