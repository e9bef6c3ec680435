//! Stable document ids: derived from a page's URL path or a publication's citation key,
//! so an entry keeps its id across runs (and the deployed diff shows edits, not churn).
//!
//! Ids use lowercase letters, digits and `_` (other letters, such as Han characters, are
//! kept): what KB validation accepts, and readable in a diff.

use shared::kb::MAX_ID_CHARS;

/// `page_` + the URL path's segments joined by `_` (`/research-topics/` →
/// `page_research_topics`); the site root is `page_home`.
pub(crate) fn page_id(url_path: &str) -> String {
    // `index.html` and an `.html` extension name the same page as the bare path.
    let path = url_path
        .trim_end_matches("index.html")
        .trim_end_matches(".html")
        .trim_end_matches(".htm");
    let slug = slugify(path);
    if slug.is_empty() {
        "page_home".to_owned()
    } else {
        bounded(format!("page_{slug}"))
    }
}

/// `pub_` + the citation key (`an2022partial` → `pub_an2022partial`); a key that already
/// starts with `pub_` is kept as it is.
pub(crate) fn publication_id(key: &str) -> String {
    let slug = slugify(key);
    if slug.starts_with("pub_") {
        bounded(slug)
    } else {
        bounded(format!("pub_{slug}"))
    }
}

/// Lowercase alphanumerics; every run of anything else becomes one `_`, none at the ends.
pub(crate) fn slugify(text: &str) -> String {
    let mut out = String::new();
    let mut gap = false;
    for c in text.chars() {
        if c.is_alphanumeric() {
            if gap && !out.is_empty() {
                out.push('_');
            }
            gap = false;
            out.extend(c.to_lowercase());
        } else {
            gap = true;
        }
    }
    out
}

/// Cuts an over-long id, keeping it unique with a hash of the whole.
fn bounded(id: String) -> String {
    if id.chars().count() <= MAX_ID_CHARS {
        return id;
    }
    let hash = short_hash(&id);
    let head: String = id.chars().take(MAX_ID_CHARS - hash.len() - 1).collect();
    format!("{head}_{hash}")
}

/// Eight hex digits of a SHA-256: enough to tell apart the few ids that collide.
pub(crate) fn short_hash(text: &str) -> String {
    use sha2::{Digest, Sha256};
    let d = Sha256::digest(text.as_bytes());
    d[..4].iter().map(|b| format!("{b:02x}")).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn page_ids_come_from_the_url_path() {
        assert_eq!(page_id("/"), "page_home");
        assert_eq!(page_id("/index.html"), "page_home");
        assert_eq!(page_id("/about/"), "page_about");
        assert_eq!(page_id("/research-topics/"), "page_research_topics");
        assert_eq!(
            page_id("/blog/2024/Hello World.html"),
            "page_blog_2024_hello_world"
        );
        assert_eq!(page_id("/docs/setup/index.html"), "page_docs_setup");
        assert_eq!(page_id("/关于/"), "page_关于");
    }

    #[test]
    fn publication_ids_come_from_the_citation_key() {
        assert_eq!(publication_id("an2022partial"), "pub_an2022partial");
        assert_eq!(publication_id("Deng:2019:ArcFace"), "pub_deng_2019_arcface");
        assert_eq!(publication_id("pub_mlcd"), "pub_mlcd");
    }

    #[test]
    fn long_ids_are_cut_within_the_limit_and_stay_distinct() {
        let a = page_id(&format!("/{}a/", "x".repeat(300)));
        let b = page_id(&format!("/{}b/", "x".repeat(300)));
        assert!(a.chars().count() <= MAX_ID_CHARS);
        assert_ne!(a, b);
    }
}
