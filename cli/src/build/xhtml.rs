//! XHTML written as XML and read as HTML: a page that declares itself XHTML (an `<?xml`
//! declaration, an XHTML DOCTYPE or the XHTML namespace) may close any element with `/>`,
//! as XML allows. HTML's parser ignores that slash but on a void element (`<br/>`,
//! `<img/>`), so the element stays open: a self-closed `<a href="x"/>` makes a link of all
//! the text after it, and one whose content HTML reads as raw text (`<iframe>`,
//! `<script>`, `<title>`, ...) takes the whole rest of the page as its text. Debian
//! rewrote its ImageMagick pages so: a sponsor button's `<iframe .../>` in every
//! navigation bar left 126 pages with no main text, and each API function's heading,
//! `<h2><a href=... id=.../></h2>`, made the rest of its page a link. [`closed`] gives
//! every such element its end tag before the page is parsed, as an XML reader would;
//! pages that do not declare XHTML are left as a browser reads them.

use std::borrow::Cow;

use super::html_bounds::{find, find_ci};

/// Elements that have no content in HTML: `/>` is how HTML writes them too.
const VOID: &[&str] = &[
    "area", "base", "br", "col", "embed", "hr", "img", "input", "keygen", "link", "meta", "param",
    "source", "track", "wbr",
];

/// How far into the page its XHTML marks are looked for: they come before the `<html>`
/// start tag ends.
const PROLOGUE_BYTES: usize = 2048;

/// Whether the page says it is XHTML before its `<html>` start tag ends: an XML
/// declaration, a DOCTYPE naming XHTML, or the XHTML namespace on `<html>`.
fn declares_xhtml(html: &str) -> bool {
    let end = (0..=PROLOGUE_BYTES.min(html.len()))
        .rev()
        .find(|&i| html.is_char_boundary(i))
        .unwrap_or(0);
    let head = html[..end].to_ascii_lowercase();
    if head
        .trim_start_matches('\u{feff}')
        .trim_start()
        .starts_with("<?xml")
    {
        return true;
    }
    let tag = |open: &str| {
        head.find(open)
            .map(|s| &head[s..head[s..].find('>').map_or(head.len(), |e| s + e)])
    };
    tag("<!doctype").is_some_and(|d| d.contains("xhtml"))
        || tag("<html").is_some_and(|h| h.contains("http://www.w3.org/1999/xhtml"))
}

/// The page with every self-closed element that is not void given its end tag
/// (`<iframe src="x"/>` → `<iframe src="x"></iframe>`) when the page declares itself
/// XHTML; the page itself otherwise, or when it has none.
pub(crate) fn closed(html: &str) -> Cow<'_, str> {
    if !declares_xhtml(html) {
        return Cow::Borrowed(html);
    }
    let b = html.as_bytes();
    let mut out: Option<String> = None;
    // Where the text not yet copied into `out` starts.
    let mut copied = 0;
    let mut at = 0;
    while let Some(off) = b[at..].iter().position(|&c| c == b'<') {
        let open = at + off;
        at = open + 1;
        if b[at..].starts_with(b"!--") {
            at = find(b, at + 3, b"-->").map_or(b.len(), |e| e + 3);
            continue;
        }
        let name_end = (at..b.len())
            .find(|&i| !b[i].is_ascii_alphanumeric())
            .unwrap_or(b.len());
        let name = &html[at..name_end];
        if name.is_empty() || VOID.iter().any(|v| name.eq_ignore_ascii_case(v)) {
            continue;
        }
        let Some(close) = tag_end(b, name_end) else {
            break;
        };
        if b[close - 1] == b'/' {
            let o = out.get_or_insert_with(|| String::with_capacity(html.len() + 64));
            o.push_str(&html[copied..close - 1]);
            o.push_str("></");
            o.push_str(name);
            o.push('>');
            copied = close + 1;
        } else if name.eq_ignore_ascii_case("script") || name.eq_ignore_ascii_case("style") {
            // A script's or style's text may hold `<iframe/>` as a string: it is not a tag.
            let end_tag = format!("</{name}");
            at = find_ci(b, close + 1, end_tag.as_bytes()).unwrap_or(b.len());
            continue;
        }
        at = close + 1;
    }
    match out {
        Some(mut o) => {
            o.push_str(&html[copied..]);
            Cow::Owned(o)
        }
        None => Cow::Borrowed(html),
    }
}

/// Where the tag whose name ends at `from` ends (its `>`), quoted attribute values skipped.
fn tag_end(b: &[u8], from: usize) -> Option<usize> {
    let mut quote: Option<u8> = None;
    for (i, &c) in b.iter().enumerate().skip(from) {
        match quote {
            Some(q) if c == q => quote = None,
            Some(_) => {}
            None if c == b'"' || c == b'\'' => quote = Some(c),
            None if c == b'>' => return Some(i),
            None => {}
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    const XHTML: &str = r#"<!DOCTYPE html PUBLIC "-//W3C//DTD XHTML 1.1//EN" "http://www.w3.org/TR/xhtml11/DTD/xhtml11.dtd">"#;

    #[test]
    fn a_self_closed_iframe_in_an_xhtml_page_gets_its_end_tag() {
        let page = format!(
            r#"{XHTML}<html><body><nav><iframe src="b" title="a/b"/></nav><main><p>Text</p></main></body></html>"#
        );
        assert_eq!(
            closed(&page),
            format!(
                r#"{XHTML}<html><body><nav><iframe src="b" title="a/b"></iframe></nav><main><p>Text</p></main></body></html>"#
            )
        );
    }

    #[test]
    fn every_element_but_a_void_one_is_closed() {
        let page = r#"<?xml version="1.0"?><html><head><script src="a.js"/><STYLE/></head>
            <body><h2><a href="f.html" id="f"/></h2><br/><img src="i.png"/><textarea name="t"/>
            <p>Text</p></body></html>"#;
        let got = closed(page);
        assert!(got.contains(r#"<script src="a.js"></script>"#), "{got}");
        assert!(got.contains("<STYLE></STYLE>"), "{got}");
        assert!(
            got.contains(r#"<h2><a href="f.html" id="f"></a></h2>"#),
            "{got}"
        );
        assert!(got.contains(r#"<textarea name="t"></textarea>"#), "{got}");
        // A void element is written so in HTML too.
        assert!(got.contains(r#"<br/><img src="i.png"/>"#), "{got}");
    }

    #[test]
    fn an_html_page_and_an_xhtml_page_without_one_are_borrowed_as_they_are() {
        // Not XHTML: what a browser shows is what HTML's parser reads.
        let html = r#"<!DOCTYPE html><html><body><iframe src="b"/><p>Text</p></body></html>"#;
        assert!(matches!(closed(html), Cow::Borrowed(_)));
        let xhtml = format!(r#"{XHTML}<html><body><iframe src="b"></iframe></body></html>"#);
        assert!(matches!(closed(&xhtml), Cow::Borrowed(_)));
    }

    #[test]
    fn xhtml_is_what_the_prologue_declares() {
        assert!(declares_xhtml(
            r#"<?xml version="1.0"?><html><body/></html>"#
        ));
        assert!(declares_xhtml(XHTML));
        assert!(declares_xhtml(
            r#"<!DOCTYPE html><html xmlns="http://www.w3.org/1999/xhtml" lang="en">"#
        ));
        // A page that only speaks of XHTML, or links a stylesheet named so, is HTML.
        assert!(!declares_xhtml(
            r#"<!DOCTYPE html><html lang="en"><head><link href="xhtml.css"/></head><body>XHTML</body>"#
        ));
    }

    #[test]
    fn a_tag_written_inside_a_script_or_a_comment_is_text() {
        let page = format!(
            r#"{XHTML}<body><!-- <iframe/> --><script>var s = "<iframe/>";</script><p>T</p></body>"#
        );
        assert!(matches!(closed(&page), Cow::Borrowed(_)));
    }

    #[test]
    fn an_unfinished_tag_ends_the_scan() {
        let page = format!(r#"{XHTML}<body><p>T</p><iframe src="b"#);
        assert_eq!(closed(&page), page);
    }

    #[test]
    fn the_rest_of_an_xhtml_page_is_text_again_once_parsed() {
        let page = format!(
            r#"{XHTML}<html><body><nav><iframe src="b"/></nav><main><h1>Convert</h1><p>Use the convert program.</p></main></body></html>"#
        );
        let got =
            crate::build::html::extract(&page, "https://ex.org/convert.html").expect("a page");
        assert!(
            got.content.contains("Use the convert program."),
            "{}",
            got.content
        );
    }

    #[test]
    fn text_after_a_self_closed_link_is_not_the_links() {
        let page = format!(
            r#"{XHTML}<html><body><main><h1>Resize</h1><h2><a href="r.html" id="resize"/></h2>
            <p>Resizes an image to the given size, with the filter named.</p></main></body></html>"#
        );
        let got = crate::build::html::extract(&page, "https://ex.org/resize.html").expect("a page");
        let s = got.structure.expect("measured");
        assert_eq!(s.link_chars, 0, "{s:?}");
    }
}
