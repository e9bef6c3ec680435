//! Text from a request made safe to print on one line: in a log, or in an error message.
//!
//! A log line is a record only as long as input cannot end it. Field names, ids and values
//! echoed from a request (an unknown JSON field, a knowledge base's bad id) could otherwise
//! carry a newline and write what looks like another line: a forged `request done` or a
//! CloudWatch metric. [`escape_controls`] spells every control character out instead.

use std::borrow::Cow;

/// `text` with every control character written as an escape: `\n`, `\r`, `\t`, and
/// `\u{…}` for the rest of C0 and C1, DEL, and the Unicode line and paragraph separators
/// (U+2028, U+2029), which some log viewers also break on. A backslash is left alone: the
/// escapes only need to be unambiguous to a reader, not reversible. Borrowed when nothing
/// needed escaping, which is the usual case.
pub fn escape_controls(text: &str) -> Cow<'_, str> {
    if !text.chars().any(needs_escape) {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 8);
    for c in text.chars() {
        match c {
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if needs_escape(c) => out.push_str(&format!("\\u{{{:04x}}}", u32::from(c))),
            c => out.push(c),
        }
    }
    Cow::Owned(out)
}

fn needs_escape(c: char) -> bool {
    c.is_control() || c == '\u{2028}' || c == '\u{2029}'
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn line_breaks_and_other_controls_are_spelled_out() {
        assert_eq!(
            escape_controls("a\nb\r\nc\td\u{0}e\u{1b}[31mf\u{85}g\u{2028}h\u{7f}"),
            "a\\nb\\r\\nc\\td\\u{0000}e\\u{001b}[31mf\\u{0085}g\\u{2028}h\\u{007f}"
        );
    }

    #[test]
    fn ordinary_text_is_borrowed_unchanged() {
        for text in ["", "unknown field `mesage`", "问题 «quoted» \\n"] {
            assert!(matches!(escape_controls(text), Cow::Borrowed(t) if t == text));
        }
    }

    #[test]
    fn nothing_escaped_can_break_a_line() {
        let all: String = (0u32..0x3000).filter_map(char::from_u32).collect();
        let escaped = escape_controls(&all);
        assert!(!escaped.chars().any(needs_escape));
        assert!(!escaped.contains('\n') && !escaped.contains('\r'));
    }
}
