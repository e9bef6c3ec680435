//! Include/exclude patterns over URL paths: `*` matches within one path segment, `**`
//! across segments, `?` one character (`/tags/**`, `/blog/*.html`, `**/draft-*`).

/// A set of include and exclude patterns.
#[derive(Debug, Clone, Default)]
pub(crate) struct Filter {
    include: Vec<String>,
    exclude: Vec<String>,
}

impl Filter {
    /// Everything passes when `include` is empty; `exclude` wins over `include`.
    pub(crate) fn new(include: Vec<String>, exclude: Vec<String>) -> Self {
        Self { include, exclude }
    }

    /// Whether a URL path (`/about/`) is kept.
    pub(crate) fn allows(&self, path: &str) -> bool {
        let included = self.include.is_empty() || self.include.iter().any(|p| matches(p, path));
        included && !self.exclude.iter().any(|p| matches(p, path))
    }
}

/// Whether `pattern` matches all of `text`.
pub(crate) fn matches(pattern: &str, text: &str) -> bool {
    let p: Vec<char> = pattern.chars().collect();
    let t: Vec<char> = text.chars().collect();
    // Dynamic programming over (pattern position, text position): linear in the product,
    // with none of the exponential backtracking a recursive matcher has on `*a*a*a*b`.
    let mut reach = vec![vec![false; t.len() + 1]; p.len() + 1];
    reach[0][0] = true;
    let mut i = 0;
    while i < p.len() {
        let double = p[i] == '*' && p.get(i + 1) == Some(&'*');
        let width = if double { 2 } else { 1 };
        for j in 0..=t.len() {
            if !reach[i][j] {
                continue;
            }
            match p[i] {
                '*' => {
                    // A star may match nothing, or extend over characters (not `/`
                    // unless doubled). `**/` also matches no directory at all.
                    reach[i + width][j] = true;
                    if double && p.get(i + 2) == Some(&'/') {
                        reach[i + 3][j] = true;
                    }
                    let mut k = j;
                    while k < t.len() && (double || t[k] != '/') {
                        k += 1;
                        reach[i + width][k] = true;
                    }
                }
                '?' if j < t.len() && t[j] != '/' => reach[i + 1][j + 1] = true,
                c if j < t.len() && t[j] == c => reach[i + 1][j + 1] = true,
                _ => {}
            }
        }
        i += width;
    }
    reach[p.len()][t.len()]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stars_match_within_a_segment_and_double_stars_across() {
        assert!(matches("/tags/**", "/tags/a/b/"));
        assert!(matches("/tags/*", "/tags/rust"));
        assert!(!matches("/tags/*", "/tags/rust/page/2/"));
        assert!(matches("**/draft-*", "/blog/2024/draft-one"));
        assert!(matches("**/draft-*", "draft-one"));
        assert!(matches("/p?st/", "/post/"));
        assert!(!matches("/p?st/", "/p/st/"));
        assert!(!matches("/blog/*.html", "/blog/a/b.html"));
        assert!(matches(&"*a".repeat(20), &"a".repeat(40)));
        assert!(!matches(&format!("{}b", "*a".repeat(20)), &"a".repeat(60)));
    }

    #[test]
    fn exclude_wins_and_an_empty_include_keeps_everything() {
        let f = Filter::new(vec![], vec!["/tags/**".into()]);
        assert!(f.allows("/about/"));
        assert!(!f.allows("/tags/x/"));
        let f = Filter::new(vec!["/blog/**".into()], vec!["/blog/old/**".into()]);
        assert!(f.allows("/blog/new/"));
        assert!(!f.allows("/blog/old/x/"));
        assert!(!f.allows("/about/"));
    }
}
