//! Which page gets a URL. A page names its own URL (`<link rel=canonical>`), and that is
//! trusted only so far: a canonical URL on another origin (`https://evil.example/phish`,
//! `//evil.example/x`) is not the site's, so the page keeps the URL it was found at, with a
//! warning; and of two pages claiming one URL the one found at that URL keeps it (a page
//! cannot replace another by naming it), with a warning naming both. Two pages of
//! different titles that both name a URL neither was found at are not one page under two
//! addresses: that URL is disputed, and each page claiming it keeps the URL it was found
//! at (Debian's ImageMagick pages name their stylesheet as the canonical URL of three
//! different pages).

use std::collections::{HashMap, HashSet};

use super::page::{url_path, Page};
use super::site::origin;
use super::Report;

/// Pages in the order found, each URL claimed once.
#[derive(Default)]
pub(crate) struct Claims {
    /// Each page with the URL it was found at.
    pages: Vec<(String, Page)>,
    /// Where each claimed URL's page is in `pages`.
    by_url: HashMap<String, usize>,
    /// URLs that pages of different titles named, none found at it.
    disputed: HashSet<String>,
}

impl Claims {
    /// Adds `page`, found at `found`.
    pub(crate) fn add(&mut self, found: &str, mut page: Page, report: &mut Report) {
        if page.url != found && origin(&page.url) != origin(found) {
            report.warn(format!(
                "{found}: canonical URL {} is on another site; kept the page's own URL",
                page.url
            ));
            page.url = found.to_owned();
        }
        let owns = |at: &str, url: &str| url_path(at) == url_path(url);
        if self.disputed.contains(&page.url) && !owns(found, &page.url) {
            report.warn(format!(
                "{found}: canonical URL {} is named by pages of different titles; kept the page's own URL",
                page.url
            ));
            page.url = found.to_owned();
        }
        if let Some(&i) = self.by_url.get(&page.url) {
            let (other, first) = &self.pages[i];
            if !owns(found, &page.url) && !owns(other, &page.url) && first.title != page.title {
                // Neither page is at the URL both name, and they are not the same page.
                report.warn(format!(
                    "{found} and {other} both name {} as their URL, with different titles; each keeps its own URL",
                    page.url
                ));
                let other = other.clone();
                self.disputed.insert(page.url.clone());
                // The first page goes back to where it was found, unless that URL is taken.
                if !self.by_url.contains_key(&other) {
                    self.by_url.remove(&page.url);
                    self.pages[i].1.url = other.clone();
                    self.by_url.insert(other, i);
                }
                page.url = found.to_owned();
            }
        }
        let Some(&i) = self.by_url.get(&page.url) else {
            self.by_url.insert(page.url.clone(), self.pages.len());
            self.pages.push((found.to_owned(), page));
            return;
        };
        let other = &self.pages[i].0;
        let replace = owns(found, &page.url) && !owns(other, &page.url);
        let (kept, dropped) = if replace {
            (found, other.as_str())
        } else {
            (other.as_str(), found)
        };
        report.warn(format!(
            "{found} and {other} both name {} as their URL; kept {kept}, left out {dropped}",
            page.url
        ));
        if replace {
            self.pages[i] = (found.to_owned(), page);
        }
    }

    /// The pages, in the order their URLs were first claimed.
    pub(crate) fn into_pages(self) -> Vec<Page> {
        self.pages.into_iter().map(|(_, p)| p).collect()
    }

    /// How many pages are kept.
    pub(crate) fn len(&self) -> usize {
        self.pages.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn page(url: &str, title: &str) -> Page {
        Page {
            url: url.to_owned(),
            title: title.to_owned(),
            content: "text".to_owned(),
            ..Page::default()
        }
    }

    #[test]
    fn an_off_site_canonical_url_is_replaced_by_the_pages_own() {
        let mut report = Report::default();
        let mut claims = Claims::default();
        claims.add(
            "https://me.example/a/",
            page("https://evil.example/phish", "A"),
            &mut report,
        );
        claims.add(
            "https://me.example/b/",
            page("http://me.example/b/", "B"),
            &mut report,
        );
        claims.add(
            "https://me.example/c/",
            page("https://me.example/about/", "C"),
            &mut report,
        );
        let urls: Vec<String> = claims.into_pages().into_iter().map(|p| p.url).collect();
        assert_eq!(
            urls,
            [
                "https://me.example/a/",
                "https://me.example/b/",
                "https://me.example/about/"
            ]
        );
        assert_eq!(report.warnings.len(), 2, "{:?}", report.warnings);
        assert!(report.warnings[0].contains("https://evil.example/phish"));
        assert!(report.warnings[1].contains("http://me.example/b/"));
    }

    #[test]
    fn a_page_naming_another_does_not_replace_it() {
        for order in [false, true] {
            let mut report = Report::default();
            let mut claims = Claims::default();
            let real = (
                "https://me.example/cv/",
                page("https://me.example/cv/", "CV"),
            );
            let fake = (
                "https://me.example/x/",
                page("https://me.example/cv/", "Fake"),
            );
            let (first, second) = if order { (fake, real) } else { (real, fake) };
            claims.add(first.0, first.1, &mut report);
            claims.add(second.0, second.1, &mut report);
            let pages = claims.into_pages();
            assert_eq!(pages.len(), 1);
            assert_eq!(pages[0].title, "CV");
            assert_eq!(report.warnings.len(), 1);
            let w = &report.warnings[0];
            assert!(
                w.contains("https://me.example/x/") && w.contains("kept https://me.example/cv/"),
                "{w}"
            );
        }
    }

    #[test]
    fn pages_of_different_titles_naming_one_url_found_at_neither_keep_their_own() {
        let mut report = Report::default();
        let mut claims = Claims::default();
        let css = "https://me.example/css/site.css";
        claims.add(
            "https://me.example/magick.html",
            page(css, "Magick"),
            &mut report,
        );
        claims.add(
            "https://me.example/perl.html",
            page(css, "PerlMagick"),
            &mut report,
        );
        claims.add("https://me.example/api.html", page(css, "API"), &mut report);
        // The same page under two addresses is still one page.
        claims.add(
            "https://me.example/a/index.html",
            page("https://me.example/a/", "A"),
            &mut report,
        );
        claims.add(
            "https://me.example/a/print.html",
            page("https://me.example/a/", "A"),
            &mut report,
        );
        let urls: Vec<String> = claims.into_pages().into_iter().map(|p| p.url).collect();
        assert_eq!(
            urls,
            [
                "https://me.example/magick.html",
                "https://me.example/perl.html",
                "https://me.example/api.html",
                "https://me.example/a/",
            ]
        );
        assert_eq!(report.warnings.len(), 3, "{:?}", report.warnings);
        assert!(report.warnings[0].contains("different titles"));
        assert!(report.warnings[1].contains("https://me.example/api.html"));
    }
}
