//! robots.txt (RFC 9309): the group for our user agent (else `*`), its `Allow`/`Disallow`
//! rules matched by longest path prefix (`*` and a final `$` supported), and
//! `Crawl-delay`.

/// The product token `rag build` identifies itself with.
pub(crate) const AGENT: &str = "rag-build";

/// How much of a robots.txt is read (RFC 9309 §2.5: at least 500 KiB).
const MAX_BYTES: usize = 500 << 10;

/// Most rules kept per group: every URL of a crawl is matched against each (230,000
/// wildcard rules cost 17 ms per URL). Real files have tens.
const MAX_RULES: usize = 10_000;

/// The rules that apply to `rag build`.
#[derive(Debug, Default, Clone, PartialEq)]
pub(crate) struct Robots {
    /// `(allow, pattern)` rules.
    rules: Vec<(bool, String)>,
    /// Seconds to wait between requests, when the site asks.
    pub(crate) crawl_delay: Option<f64>,
}

impl Robots {
    /// Parses robots.txt for [`AGENT`]: its first [`MAX_BYTES`] and, of the group that
    /// applies, its first [`MAX_RULES`] rules.
    pub(crate) fn parse(text: &str) -> Self {
        // RFC 9309 §2.5 lets a crawler stop at 500 KiB; whole lines only.
        let text = match text.get(..MAX_BYTES) {
            Some(head) if text.len() > MAX_BYTES => head.rsplit_once('\n').map_or("", |(h, _)| h),
            _ => text,
        };
        // Groups: consecutive user-agent lines, then rules. A group naming our agent
        // replaces the `*` group entirely (RFC 9309 §2.2.1).
        let mut ours: Option<Robots> = None;
        let mut star: Option<Robots> = None;
        let mut agents: Vec<String> = Vec::new();
        let mut current = Robots::default();
        let mut in_rules = false;
        let mut flush = |agents: &mut Vec<String>, current: &mut Robots| {
            let mine = agents.iter().any(|a| a == AGENT);
            if mine {
                merge(&mut ours, current.clone());
            }
            if agents.iter().any(|a| a == "*") {
                merge(&mut star, current.clone());
            }
            agents.clear();
            *current = Robots::default();
        };
        for line in text.lines() {
            let line = line.split('#').next().unwrap_or("").trim();
            let Some((key, value)) = line.split_once(':') else {
                continue;
            };
            let (key, value) = (key.trim().to_ascii_lowercase(), value.trim());
            match key.as_str() {
                "user-agent" => {
                    if in_rules {
                        flush(&mut agents, &mut current);
                        in_rules = false;
                    }
                    agents.push(value.to_ascii_lowercase());
                }
                "allow" | "disallow" => {
                    in_rules = true;
                    // An empty Disallow allows everything: no rule.
                    if !value.is_empty() && current.rules.len() < MAX_RULES {
                        current.rules.push((key == "allow", value.to_owned()));
                    }
                }
                "crawl-delay" => {
                    in_rules = true;
                    current.crawl_delay = value
                        .parse()
                        .ok()
                        .filter(|d: &f64| d.is_finite() && *d >= 0.0);
                }
                _ => {}
            }
        }
        flush(&mut agents, &mut current);
        ours.or(star).unwrap_or_default()
    }

    /// Whether a path (with its query) may be fetched: the longest matching rule wins,
    /// `Allow` on a tie; no rule means allowed.
    pub(crate) fn allows(&self, path: &str) -> bool {
        let mut best: Option<(usize, bool)> = None;
        for (allow, pattern) in &self.rules {
            if rule_matches(pattern, path) {
                let len = pattern.len();
                let better = match best {
                    None => true,
                    Some((l, a)) => len > l || (len == l && *allow && !a),
                };
                if better {
                    best = Some((len, *allow));
                }
            }
        }
        best.is_none_or(|(_, allow)| allow)
    }
}

fn merge(slot: &mut Option<Robots>, group: Robots) {
    match slot {
        Some(r) => {
            let room = MAX_RULES.saturating_sub(r.rules.len());
            r.rules.extend(group.rules.into_iter().take(room));
            r.crawl_delay = r.crawl_delay.or(group.crawl_delay);
        }
        None => *slot = Some(group),
    }
}

/// A rule is a path prefix where `*` matches any characters and a final `$` anchors it
/// at the end; everything else (`?` included) is literal.
fn rule_matches(pattern: &str, path: &str) -> bool {
    let anchored = pattern.ends_with('$');
    let pattern = pattern.strip_suffix('$').unwrap_or(pattern);
    let mut pieces = pattern.split('*');
    let first = pieces.next().unwrap_or("");
    let Some(mut rest) = path.strip_prefix(first) else {
        return false;
    };
    let pieces: Vec<&str> = pieces.collect();
    for (i, piece) in pieces.iter().enumerate() {
        // With only `*` wildcards, taking each piece at its leftmost match is optimal,
        // except that an anchored last piece must end the path.
        if anchored && i + 1 == pieces.len() {
            return rest.ends_with(piece);
        }
        match rest.find(piece) {
            Some(at) => rest = &rest[at + piece.len()..],
            None => return false,
        }
    }
    !anchored || rest.is_empty()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn our_group_wins_over_star_and_longest_rule_wins() {
        let r = Robots::parse(
            "User-agent: *\nDisallow: /\n\nUser-agent: rag-build\nUser-agent: other\nDisallow: /private/\nAllow: /private/ok.html\nCrawl-delay: 2\n",
        );
        assert!(r.allows("/"));
        assert!(r.allows("/about/"));
        assert!(!r.allows("/private/x.html"));
        assert!(r.allows("/private/ok.html"));
        assert_eq!(r.crawl_delay, Some(2.0));
    }

    #[test]
    fn the_star_group_applies_with_wildcards_and_anchors() {
        let r = Robots::parse(
            "# comment\nUser-agent: *\nDisallow: /drafts/\nDisallow: /*.pdf$\nDisallow:\n",
        );
        assert!(!r.allows("/drafts/a/"));
        assert!(!r.allows("/files/a.pdf"));
        assert!(r.allows("/files/a.pdf.html"));
        assert!(r.allows("/about/"));
        assert!(Robots::parse("").allows("/anything"));
        let q = Robots::parse("User-agent: *\nDisallow: /search?q=\n");
        assert!(!q.allows("/search?q=x"));
        assert!(q.allows("/search/"));
    }
}
