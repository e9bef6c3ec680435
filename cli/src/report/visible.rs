//! Which characters of visitors' text a report never writes as they are: controls (C0,
//! DEL, C1), bidirectional formatting (U+202A–U+202E, U+2066–U+2069, U+200E/F, U+061C),
//! and invisible ones (zero-width U+200B–U+200D, U+2060–U+2064, U+FEFF, U+180E, the soft
//! hyphen, the tag characters U+E0000–U+E007F). Each is shown as an escape instead, so a
//! question or comment cannot reverse a line, hide words, or smuggle text a reader does
//! not see, in any format.

/// Whether `c` is written as an escape (see the module docs).
pub(crate) fn hidden(c: char) -> bool {
    c.is_control()
        || matches!(
            c,
            '\u{00ad}'
                | '\u{061c}'
                | '\u{180e}'
                | '\u{200b}'..='\u{200f}'
                | '\u{2028}'..='\u{202e}'
                | '\u{2060}'..='\u{2069}'
                | '\u{feff}'
                | '\u{e0000}'..='\u{e007f}'
        )
}

/// `text` with every [`hidden`] character written as `\u{…}` (its code point in hex).
pub(crate) fn escaped(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        if hidden(c) {
            out.push_str(&format!("\\u{{{:04x}}}", u32::from(c)));
        } else {
            out.push(c);
        }
    }
    out
}

/// JSON text with every [`hidden`] character written as a JSON escape (`\u202e`; a
/// surrogate pair above U+FFFF): the value read back is the visitor's exact text, but the
/// file shows no raw bidi or invisible character. Such characters only occur inside
/// strings (JSON's own syntax is ASCII), where the escape means the same character.
pub(crate) fn json_escaped(json: &str) -> String {
    let mut out = String::with_capacity(json.len());
    for c in json.chars() {
        // A raw line break or tab is the pretty-printer's layout: inside a string
        // serde_json has escaped them already.
        if hidden(c) && !matches!(c, '\n' | '\r' | '\t') {
            let mut units = [0u16; 2];
            for u in c.encode_utf16(&mut units) {
                out.push_str(&format!("\\u{u:04x}"));
            }
        } else {
            out.push(c);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn controls_bidi_and_invisible_characters_are_escaped_and_others_kept() {
        let text = "a\tb\u{202e}c\u{061c}d\u{200b}e\u{e0041}f\u{2066}g\u{7f}h\u{85}";
        assert_eq!(
            escaped(text),
            "a\\u{0009}b\\u{202e}c\\u{061c}d\\u{200b}e\\u{e0041}f\\u{2066}g\\u{007f}h\\u{0085}"
        );
        assert_eq!(escaped("模型 café ≥ 1"), "模型 café ≥ 1");
    }

    #[test]
    fn json_keeps_the_value_and_shows_no_raw_character() {
        let value = serde_json::json!({"q": "x\u{202e}y\u{e0041}z\u{200b}"});
        let json = json_escaped(&serde_json::to_string(&value).unwrap_or_default());
        assert_eq!(json, r#"{"q":"x\u202ey\udb40\udc41z\u200b"}"#);
        let back: serde_json::Value = serde_json::from_str(&json).unwrap_or_default();
        assert_eq!(back, value);
    }
}
