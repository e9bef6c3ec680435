//! What a page may cost before the HTML parser sees it: elements nested at most
//! [`MAX_DEPTH`] deep. The parser's work grows with the square of the nesting (50,000
//! nested `<div>` took 9 s, 200,000 more than three minutes); a page nested deeper than
//! any real one is skipped with a warning instead. Measured in one pass over the text,
//! counting open and close tags of elements that must be closed (void elements and those
//! whose end tag may be left out, like `<p>` and `<li>`, are not counted), skipping
//! comments and the text of scripts and styles.

/// Deepest element nesting a page may have (real pages stay well under 100).
pub(crate) const MAX_DEPTH: usize = 512;

/// Elements with no end tag, or whose end tag may be omitted: not counted.
const UNCOUNTED: &[&str] = &[
    "area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "source", "track",
    "wbr", "param", "keygen", "p", "li", "dt", "dd", "tr", "td", "th", "option", "optgroup",
    "thead", "tbody", "tfoot", "colgroup", "caption", "rb", "rt", "rp", "html", "head", "body",
    "!doctype",
];

/// Elements whose content is text up to their end tag.
const RAW_TEXT: &[&str] = &["script", "style", "textarea", "title", "xmp", "plaintext"];

/// `Err` with why, when the page is nested deeper than [`MAX_DEPTH`].
pub(crate) fn check(html: &str) -> Result<(), String> {
    let b = html.as_bytes();
    let mut at = 0;
    let mut depth = 0usize;
    while let Some(off) = b[at..].iter().position(|&c| c == b'<') {
        at += off + 1;
        if b[at..].starts_with(b"!--") {
            at = find(b, at + 3, b"-->").map_or(b.len(), |e| e + 3);
            continue;
        }
        let closing = b.get(at) == Some(&b'/');
        let start = at + usize::from(closing);
        let mut end = start;
        while end < b.len() && (b[end].is_ascii_alphanumeric() || b[end] == b'!') {
            end += 1;
        }
        if end == start {
            continue;
        }
        let name = html[start..end].to_ascii_lowercase();
        let Some(gt) = b[end..].iter().position(|&c| c == b'>').map(|p| end + p) else {
            break;
        };
        let self_closing = gt > 0 && b[gt - 1] == b'/';
        at = gt + 1;
        if UNCOUNTED.contains(&name.as_str()) {
            continue;
        }
        if closing {
            depth = depth.saturating_sub(1);
            continue;
        }
        if RAW_TEXT.contains(&name.as_str()) {
            let close = format!("</{name}");
            at = find_ci(b, at, close.as_bytes()).unwrap_or(b.len());
            continue;
        }
        if !self_closing {
            depth += 1;
            if depth > MAX_DEPTH {
                return Err(format!(
                    "elements nested more than {MAX_DEPTH} deep (at <{name}>)"
                ));
            }
        }
    }
    Ok(())
}

/// Where `what` next occurs in `b` from `from`.
pub(crate) fn find(b: &[u8], from: usize, what: &[u8]) -> Option<usize> {
    b.get(from..)?
        .windows(what.len())
        .position(|w| w == what)
        .map(|p| from + p)
}

/// [`find`], ASCII case ignored.
pub(crate) fn find_ci(b: &[u8], from: usize, what: &[u8]) -> Option<usize> {
    b.get(from..)?
        .windows(what.len())
        .position(|w| w.eq_ignore_ascii_case(what))
        .map(|p| from + p)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn deeply_nested_pages_are_refused_and_real_ones_pass() {
        let deep = format!(
            "<html><body>{}x{}</body></html>",
            "<div>".repeat(200_000),
            "</div>".repeat(200_000)
        );
        let started = std::time::Instant::now();
        let err = check(&deep).unwrap_err();
        assert!(err.contains("nested more than 512"), "{err}");
        // Refused on the way in: the scan stops at the bound.
        assert!(started.elapsed() < std::time::Duration::from_secs(5));
        let ok = format!(
            "<div>{}</div>",
            "<section><p>text<p>more</section>".repeat(10_000)
        );
        check(&ok).unwrap();
        // Unclosed paragraphs and list items, voids, comments and scripts do not count.
        let loose = format!(
            "<ul>{}</ul><!-- {} --><script>{}</script><br><img src=x>",
            "<li><p>item".repeat(5_000),
            "<div>".repeat(5_000),
            "'<div>'.repeat(9);".repeat(1_000)
        );
        check(&loose).unwrap();
        let at_bound = format!(
            "{}{}",
            "<div>".repeat(MAX_DEPTH),
            "</div>".repeat(MAX_DEPTH)
        );
        check(&at_bound).unwrap();
    }
}
