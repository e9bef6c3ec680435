//! Reading `sitemap.xml`: the `<loc>` URLs of a URL set, or of the nested sitemaps of a
//! sitemap index. A sitemap is machine-written XML with one text element per URL, so a
//! scan for `<loc>` elements (CDATA and the five XML entities handled) reads every
//! generator's output without an XML parser.

/// What a sitemap lists.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Sitemap {
    /// Page URLs, in document order.
    Pages(Vec<String>),
    /// URLs of further sitemaps (a `<sitemapindex>`).
    Index(Vec<String>),
}

/// Parses a sitemap or sitemap index.
pub(crate) fn parse(xml: &str) -> Sitemap {
    let locs = locs(xml);
    if xml.contains("<sitemapindex") {
        Sitemap::Index(locs)
    } else {
        Sitemap::Pages(locs)
    }
}

fn locs(xml: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut rest = xml;
    while let Some(start) = rest.find("<loc>") {
        let after = &rest[start + "<loc>".len()..];
        let Some(end) = after.find("</loc>") else {
            break;
        };
        let raw = after[..end].trim();
        let raw = raw
            .strip_prefix("<![CDATA[")
            .and_then(|r| r.strip_suffix("]]>"))
            .map_or_else(|| unescape(raw), str::to_owned);
        if !raw.trim().is_empty() {
            out.push(raw.trim().to_owned());
        }
        rest = &after[end..];
    }
    out
}

fn unescape(text: &str) -> String {
    text.replace("&lt;", "<")
        .replace("&gt;", ">")
        .replace("&quot;", "\"")
        .replace("&apos;", "'")
        .replace("&amp;", "&")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn url_sets_and_indexes_are_told_apart() {
        let set = r#"<?xml version="1.0"?><urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">
          <url><loc>https://ex.org/</loc><lastmod>2024-01-01</lastmod></url>
          <url><loc> https://ex.org/a?x=1&amp;y=2 </loc></url>
          <url><loc><![CDATA[https://ex.org/b&c]]></loc></url></urlset>"#;
        assert_eq!(
            parse(set),
            Sitemap::Pages(vec![
                "https://ex.org/".into(),
                "https://ex.org/a?x=1&y=2".into(),
                "https://ex.org/b&c".into()
            ])
        );
        let index = r#"<sitemapindex><sitemap><loc>https://ex.org/en/sitemap.xml</loc></sitemap></sitemapindex>"#;
        assert_eq!(
            parse(index),
            Sitemap::Index(vec!["https://ex.org/en/sitemap.xml".into()])
        );
        assert_eq!(
            parse("<urlset><url><loc>unterminated"),
            Sitemap::Pages(vec![])
        );
    }
}
