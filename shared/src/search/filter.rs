//! Filters over typed knowledge-base entries, and the orders a listing can take.
//!
//! A [`Filters`] value is what a search keeps of a request's `type`, `year`, `venue`,
//! `author`, `stars`, `role`, `has` and `field.NAME` parameters (or of what the question
//! recogniser read out of a listing question). Every condition must hold for an entry to
//! match. Matching runs over [`Facets`], the parsed form of each entry's typed fields,
//! computed once when the index is built, so a filter costs a few compares per entry.
//!
//! How each filter matches (all case-insensitive):
//! - `type`: the entry's type (`paper`/`papers` and `project`/`projects`/`repo` are read
//!   as `publication` and `github_project`).
//! - `year`: `2024` or an inclusive range `2020-2023`, `2020-`, `-2023`; an entry's year is
//!   its `year` field, else a year written in its venue.
//! - `venue`, `role`: the words of the value appear together in the field: `ICCV` matches
//!   `ICCV 2025 (Highlight)` but not `ICCVW 2021` (a workshop is another venue).
//! - `author`: the words appear together in one of the comma-separated authors.
//! - `stars`: a range like `year`, over the star count (`27k+` counts as 27,000).
//! - `has`: comma-separated field names the entry must have (`has=code_url`).
//! - `field.NAME=value`: the field (or an extra field of the entry) equals the value;
//!   `field.keywords=x` holds when one keyword equals it, and likewise for an extra field
//!   holding several values (an array of strings).

use std::cmp::Ordering;

use serde::Serialize;

use crate::error::{Error, Result};
use crate::kb::Document;

/// Longest accepted filter value, in characters.
pub(super) const MAX_FILTER_CHARS: usize = 200;
/// Most `field.NAME` and `has` conditions in one request.
pub(super) const MAX_FIELD_FILTERS: usize = 10;

/// An inclusive range of whole numbers; either end may be open.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Range {
    /// Smallest accepted value.
    pub min: Option<u64>,
    /// Largest accepted value.
    pub max: Option<u64>,
}

impl Range {
    /// Exactly `n`.
    pub fn exactly(n: u64) -> Self {
        Self {
            min: Some(n),
            max: Some(n),
        }
    }

    /// Whether `n` is inside.
    pub fn contains(&self, n: u64) -> bool {
        self.min.is_none_or(|m| n >= m) && self.max.is_none_or(|m| n <= m)
    }

    /// Parses `N`, `A-B`, `A-` or `-B`; `None` for anything else or a reversed range.
    pub fn parse(text: &str) -> Option<Self> {
        let text = text.trim();
        let number = |s: &str| -> Option<Option<u64>> {
            let s = s.trim();
            if s.is_empty() {
                return Some(None);
            }
            s.bytes()
                .all(|b| b.is_ascii_digit())
                .then(|| s.parse().ok().map(Some))
                .flatten()
        };
        let range = match text.split_once('-') {
            None => Self::exactly(number(text)??),
            Some((a, b)) => Self {
                min: number(a)?,
                max: number(b)?,
            },
        };
        let ordered = match (range.min, range.max) {
            (None, None) => false,
            (Some(a), Some(b)) => a <= b,
            _ => true,
        };
        ordered.then_some(range)
    }
}

impl std::fmt::Display for Range {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match (self.min, self.max) {
            (Some(a), Some(b)) if a == b => write!(f, "{a}"),
            (a, b) => {
                if let Some(a) = a {
                    write!(f, "{a}")?;
                }
                f.write_str("-")?;
                if let Some(b) = b {
                    write!(f, "{b}")?;
                }
                Ok(())
            }
        }
    }
}

impl Serialize for Range {
    fn serialize<S: serde::Serializer>(&self, s: S) -> std::result::Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

/// The conditions an entry must meet; the default matches everything. Serializes as the
/// request parameters that would set it (`{"type": ..., "year": "2020-2023",
/// "field.section": ...}`).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Filters {
    /// Document type (`publication`, `github_project`, `page`, ...).
    pub doc_type: Option<String>,
    /// Publication year range.
    pub year: Option<Range>,
    /// Words that must appear together in the venue.
    pub venue: Option<String>,
    /// Words that must appear together in one author's name.
    pub author: Option<String>,
    /// Star-count range.
    pub stars: Option<Range>,
    /// Words that must appear together in the role.
    pub role: Option<String>,
    /// Fields the entry must have.
    pub has: Vec<String>,
    /// `field.NAME=value` equalities, as (NAME, value).
    pub fields: Vec<(String, String)>,
}

impl Serialize for Filters {
    fn serialize<S: serde::Serializer>(&self, s: S) -> std::result::Result<S::Ok, S::Error> {
        use serde::ser::SerializeMap;
        let mut map = s.serialize_map(None)?;
        if let Some(t) = &self.doc_type {
            map.serialize_entry("type", t)?;
        }
        if let Some(y) = &self.year {
            map.serialize_entry("year", y)?;
        }
        for (key, value) in [("venue", &self.venue), ("author", &self.author)] {
            if let Some(v) = value {
                map.serialize_entry(key, v)?;
            }
        }
        if let Some(r) = &self.stars {
            map.serialize_entry("stars", r)?;
        }
        if let Some(r) = &self.role {
            map.serialize_entry("role", r)?;
        }
        if !self.has.is_empty() {
            map.serialize_entry("has", &self.has)?;
        }
        for (k, v) in &self.fields {
            map.serialize_entry(&format!("field.{k}"), v)?;
        }
        map.end()
    }
}

impl Filters {
    /// True when no condition is set.
    pub fn is_empty(&self) -> bool {
        *self == Self::default()
    }

    /// Sets one filter from a request parameter: `type`, `year`, `venue`, `author`,
    /// `stars`, `role`, `has` or `field.NAME`. `Ok(false)` when `name` is none of these;
    /// a bad value is [`Error::InvalidInput`] naming the filter.
    pub fn set(&mut self, name: &str, value: &str) -> Result<bool> {
        let known = matches!(
            name,
            "type" | "year" | "venue" | "author" | "stars" | "role" | "has"
        ) || name.starts_with("field.");
        if !known {
            return Ok(false);
        }
        let value = value.trim();
        let bad = |why: &str| Error::InvalidInput(format!("filter {name}: {why}, got {value:?}"));
        if value.is_empty() {
            return Err(Error::InvalidInput(format!(
                "filter {name} must not be empty"
            )));
        }
        if value.chars().count() > MAX_FILTER_CHARS || value.chars().any(char::is_control) {
            return Err(bad(&format!(
                "must be at most {MAX_FILTER_CHARS} characters without control characters"
            )));
        }
        match name {
            "type" => self.doc_type = Some(canonical_type(value).to_owned()),
            "year" => {
                let r = Range::parse(value)
                    .filter(|r| r.min.or(r.max).is_some_and(|y| (1000..=9999).contains(&y)))
                    .ok_or_else(|| bad("must be a year or a range like 2020-2023"))?;
                self.year = Some(r);
            }
            "stars" => {
                let r = Range::parse(value)
                    .ok_or_else(|| bad("must be a number or a range like 1000- or 100-5000"))?;
                self.stars = Some(r);
            }
            "venue" | "author" | "role" => {
                if words(value).is_empty() {
                    return Err(bad("needs at least one letter or digit"));
                }
                let slot = match name {
                    "venue" => &mut self.venue,
                    "author" => &mut self.author,
                    _ => &mut self.role,
                };
                *slot = Some(value.to_owned());
            }
            "has" => {
                for f in value.split(',').map(str::trim).filter(|f| !f.is_empty()) {
                    if !is_field_name(f) {
                        return Err(bad("must list field names (letters, digits, _)"));
                    }
                    if !self.has.iter().any(|h| h == f) {
                        self.has.push(f.to_owned());
                    }
                }
            }
            _ => {
                let Some(field) = name.strip_prefix("field.") else {
                    return Ok(false);
                };
                if !is_field_name(field) {
                    return Err(Error::InvalidInput(format!(
                        "filter {name}: a field name is 1 to 64 letters, digits or _"
                    )));
                }
                self.fields.retain(|(k, _)| k != field);
                self.fields.push((field.to_owned(), value.to_owned()));
            }
        }
        if self.has.len() + self.fields.len() > MAX_FIELD_FILTERS {
            return Err(Error::InvalidInput(format!(
                "filter {name}: at most {MAX_FIELD_FILTERS} field and has conditions"
            )));
        }
        Ok(true)
    }

    /// Adds `other`'s conditions where this one has none (explicit parameters win over
    /// what the recogniser read from the question).
    pub fn fill_from(&mut self, other: &Filters) {
        self.doc_type = self.doc_type.take().or_else(|| other.doc_type.clone());
        self.year = self.year.or(other.year);
        self.venue = self.venue.take().or_else(|| other.venue.clone());
        self.author = self.author.take().or_else(|| other.author.clone());
        self.stars = self.stars.or(other.stars);
        self.role = self.role.take().or_else(|| other.role.clone());
        for h in &other.has {
            if !self.has.contains(h) {
                self.has.push(h.clone());
            }
        }
        for (k, v) in &other.fields {
            if !self.fields.iter().any(|(mine, _)| mine == k) {
                self.fields.push((k.clone(), v.clone()));
            }
        }
    }

    /// Whether the entry meets every condition.
    pub fn matches(&self, doc: &Document, facets: &Facets) -> bool {
        let seq = |needle: &Option<String>, hay: &[String]| {
            needle
                .as_deref()
                .is_none_or(|n| contains_words(hay, &words(n)))
        };
        self.doc_type
            .as_deref()
            .is_none_or(|t| doc.doc_type.eq_ignore_ascii_case(t))
            && self
                .year
                .is_none_or(|r| facets.year.is_some_and(|y| r.contains(u64::from(y))))
            && self
                .stars
                .is_none_or(|r| facets.stars.is_some_and(|s| r.contains(s)))
            && seq(&self.venue, &facets.venue)
            && seq(&self.role, &facets.role)
            && self.author.as_deref().is_none_or(|a| {
                let wanted = words(a);
                facets
                    .authors
                    .iter()
                    .any(|name| contains_words(name, &wanted))
            })
            && self
                .has
                .iter()
                .all(|f| field_values(doc, f).iter().any(|v| !v.trim().is_empty()))
            && self.fields.iter().all(|(f, want)| {
                field_values(doc, f)
                    .iter()
                    .any(|v| v.trim().eq_ignore_ascii_case(want.trim()))
            })
    }
}

/// The order of a listing.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Order {
    /// By score (BM25), best first.
    Relevance,
    /// Newest first (entries without a year last), then most stars, then KB order.
    YearDesc,
    /// Oldest first (entries without a year last), then KB order.
    YearAsc,
    /// Most stars first (entries without a count last), then KB order.
    StarsDesc,
}

impl Order {
    /// Parses a `sort` parameter.
    pub fn parse(text: &str) -> Result<Self> {
        match text.trim().to_ascii_lowercase().as_str() {
            "relevance" | "score" => Ok(Self::Relevance),
            "year" | "year_desc" | "newest" => Ok(Self::YearDesc),
            "year_asc" | "oldest" => Ok(Self::YearAsc),
            "stars" | "stars_desc" => Ok(Self::StarsDesc),
            _ => Err(Error::InvalidInput(format!(
                "sort must be relevance, year_desc, year_asc or stars_desc, got {text:?}"
            ))),
        }
    }

    /// Compares two entries (`a` and `b` are their positions in the KB) for this order;
    /// `Relevance` keeps KB order (scores are compared by the caller).
    pub fn compare(self, a: (u32, &Facets), b: (u32, &Facets)) -> Ordering {
        // `None` sorts after every value: Reverse(Some) < Reverse(None) is false, so map
        // missing values explicitly.
        let desc = |x: Option<u64>, y: Option<u64>| match (x, y) {
            (Some(x), Some(y)) => y.cmp(&x),
            (Some(_), None) => Ordering::Less,
            (None, Some(_)) => Ordering::Greater,
            (None, None) => Ordering::Equal,
        };
        let asc = |x: Option<u64>, y: Option<u64>| match (x, y) {
            (Some(x), Some(y)) => x.cmp(&y),
            _ => desc(x, y),
        };
        let year = |f: &Facets| f.year.map(u64::from);
        let primary = match self {
            Self::Relevance => Ordering::Equal,
            Self::YearDesc => desc(year(a.1), year(b.1)).then(desc(a.1.stars, b.1.stars)),
            Self::YearAsc => asc(year(a.1), year(b.1)),
            Self::StarsDesc => desc(a.1.stars, b.1.stars),
        };
        primary.then(a.0.cmp(&b.0))
    }
}

/// An entry's typed fields, parsed once for filtering and ordering.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Facets {
    /// The `year` field, else a year (1900–2099) written in the venue.
    pub year: Option<u16>,
    /// The star count (`27k+` → 27,000).
    pub stars: Option<u64>,
    /// The venue's words, lowercase.
    pub venue: Vec<String>,
    /// The role's words, lowercase.
    pub role: Vec<String>,
    /// Each author's name as lowercase words (parenthesised notes dropped).
    pub authors: Vec<Vec<String>>,
}

impl Facets {
    /// Parses a document's typed fields.
    pub fn of(doc: &Document) -> Self {
        let year = doc
            .year
            .as_deref()
            .and_then(first_year)
            .or_else(|| doc.venue.as_deref().and_then(first_year));
        let authors = doc
            .authors
            .as_deref()
            .map(|a| {
                strip_parentheses(a)
                    .split([',', ';'])
                    .flat_map(|p| p.split(" and "))
                    .map(words)
                    .filter(|w| !w.is_empty() && w != &["et", "al"])
                    .collect()
            })
            .unwrap_or_default();
        Self {
            year,
            stars: doc.stars.as_deref().and_then(parse_stars),
            venue: doc.venue.as_deref().map(words).unwrap_or_default(),
            role: doc.role.as_deref().map(words).unwrap_or_default(),
            authors,
        }
    }
}

/// The canonical type for common spellings (`papers` → `publication`); anything else as
/// given.
pub(super) fn canonical_type(t: &str) -> &str {
    match t.to_ascii_lowercase().as_str() {
        "paper" | "papers" | "publication" | "publications" => "publication",
        "project" | "projects" | "repo" | "repos" | "repository" | "github_project" => {
            "github_project"
        }
        "page" | "pages" => "page",
        _ => t,
    }
}

/// Lowercase runs of letters and digits.
pub(super) fn words(text: &str) -> Vec<String> {
    text.split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
        .map(str::to_lowercase)
        .collect()
}

/// Whether `needle` appears in `hay` as consecutive words (an empty needle never does).
fn contains_words(hay: &[String], needle: &[String]) -> bool {
    !needle.is_empty() && hay.windows(needle.len()).any(|w| w == needle)
}

fn is_field_name(f: &str) -> bool {
    (1..=64).contains(&f.len()) && f.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_')
}

/// The values of a field by name: the typed fields, `keywords` (each), `id`, `type`, then
/// extra string fields.
fn field_values<'a>(doc: &'a Document, name: &str) -> Vec<&'a str> {
    let one = |v: &'a Option<String>| v.as_deref().into_iter().collect();
    match name {
        "id" => vec![doc.id.as_str()],
        "type" => vec![doc.doc_type.as_str()],
        "title" => one(&doc.title),
        "name" => one(&doc.name),
        "authors" => one(&doc.authors),
        "venue" => one(&doc.venue),
        "year" => one(&doc.year),
        "paper_url" => one(&doc.paper_url),
        "code_url" => one(&doc.code_url),
        "url" => one(&doc.url),
        "stars" => one(&doc.stars),
        "role" => one(&doc.role),
        "summary" => one(&doc.summary),
        "description" => one(&doc.description),
        "content" => doc.content.as_deref().into_iter().collect(),
        "keywords" => doc.keywords.iter().map(String::as_str).collect(),
        _ => doc
            .extra
            .iter()
            .filter(|(k, _)| k == name)
            .map(|(_, v)| v.as_str())
            .collect(),
    }
}

/// The first stand-alone number from 1900 to 2099 in `text`.
fn first_year(text: &str) -> Option<u16> {
    text.split(|c: char| !c.is_ascii_digit())
        .filter(|d| d.len() == 4)
        .filter_map(|d| d.parse::<u16>().ok())
        .find(|y| (1900..=2099).contains(y))
}

/// A star count as sites write it: `1234`, `1,234`, `1.2k`, `27k+`, `3M`.
pub(super) fn parse_stars(text: &str) -> Option<u64> {
    let t = text
        .trim()
        .trim_end_matches('+')
        .replace([',', '_', ' '], "");
    let lower = t.to_ascii_lowercase();
    let (digits, scale) = match lower.strip_suffix('k') {
        Some(d) => (d, 1_000.0),
        None => match lower.strip_suffix('m') {
            Some(d) => (d, 1_000_000.0),
            None => (lower.as_str(), 1.0),
        },
    };
    let n: f64 = digits
        .parse()
        .ok()
        .filter(|n: &f64| n.is_finite() && *n >= 0.0)?;
    Some((n * scale).round() as u64)
}

fn strip_parentheses(text: &str) -> String {
    let mut depth = 0usize;
    text.chars()
        .filter(|&c| {
            match c {
                '(' | '（' => depth += 1,
                ')' | '）' => {
                    depth = depth.saturating_sub(1);
                    return false;
                }
                _ => {}
            }
            depth == 0
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn doc(fields: serde_json::Value) -> Document {
        let kb = crate::kb::KnowledgeBase::from_value(&serde_json::json!([fields])).unwrap();
        kb.documents[0].clone()
    }

    fn matches(f: &Filters, d: &Document) -> bool {
        f.matches(d, &Facets::of(d))
    }

    fn filters(pairs: &[(&str, &str)]) -> Filters {
        let mut f = Filters::default();
        for (k, v) in pairs {
            assert!(f.set(k, v).unwrap(), "{k}");
        }
        f
    }

    #[test]
    fn ranges_parse_exact_open_and_closed_and_refuse_the_rest() {
        assert_eq!(Range::parse("2024"), Some(Range::exactly(2024)));
        assert_eq!(
            Range::parse("2020-2023"),
            Some(Range {
                min: Some(2020),
                max: Some(2023)
            })
        );
        assert_eq!(Range::parse("2020-").map(|r| r.max), Some(None));
        assert_eq!(Range::parse("-2023").map(|r| r.min), Some(None));
        for bad in ["", "-", "2023-2020", "20x4", "1e3", "2020--2023", "+5"] {
            assert_eq!(Range::parse(bad), None, "{bad}");
        }
        assert_eq!(Range::parse("2020-").unwrap().to_string(), "2020-");
        assert_eq!(Range::parse("7").unwrap().to_string(), "7");
    }

    #[test]
    fn venue_words_match_together_and_workshops_are_other_venues() {
        let iccv = doc(
            serde_json::json!({"id": "a", "type": "publication", "title": "T",
            "venue": "ICCV 2025 (Highlight)"}),
        );
        let iccvw = doc(
            serde_json::json!({"id": "b", "type": "publication", "title": "T",
            "venue": "ICCVW 2021"}),
        );
        let f = filters(&[("venue", "iccv")]);
        assert!(matches(&f, &iccv));
        assert!(!matches(&f, &iccvw));
        assert!(matches(&filters(&[("venue", "ICCV 2025")]), &iccv));
        assert!(!matches(&filters(&[("venue", "2025 ICCV")]), &iccv));
        assert_eq!(
            Facets::of(&iccvw).year,
            Some(2021),
            "year read from the venue"
        );
    }

    #[test]
    fn authors_match_one_name_and_notes_are_ignored() {
        let d = doc(
            serde_json::json!({"id": "a", "type": "publication", "title": "T",
            "authors": "Yin Xie, Xiang An (Project Leader), Jiankang Deng, et al."}),
        );
        assert!(matches(&filters(&[("author", "xiang an")]), &d));
        assert!(matches(&filters(&[("author", "Deng")]), &d));
        assert!(!matches(&filters(&[("author", "An Xiang")]), &d));
        assert!(
            !matches(&filters(&[("author", "Xie Xiang")]), &d),
            "across two names"
        );
    }

    #[test]
    fn stars_years_types_has_and_fields() {
        let p = doc(
            serde_json::json!({"id": "p", "type": "github_project", "name": "N",
            "stars": "27k+", "role": "Project Leader and Main Author", "section": "Code"}),
        );
        assert_eq!(Facets::of(&p).stars, Some(27_000));
        assert!(matches(&filters(&[("stars", "1001-")]), &p));
        assert!(!matches(&filters(&[("stars", "-1000")]), &p));
        assert!(matches(&filters(&[("type", "projects")]), &p));
        assert!(!matches(&filters(&[("type", "page")]), &p));
        assert!(matches(&filters(&[("role", "leader")]), &p));
        assert!(matches(&filters(&[("field.section", "code")]), &p));
        assert!(!matches(&filters(&[("field.section", "cod")]), &p));
        let tagged = doc(serde_json::json!({"id": "t", "type": "page", "title": "T",
            "tag": ["Rust", "WebAssembly"]}));
        assert!(matches(&filters(&[("field.tag", "webassembly")]), &tagged));
        assert!(matches(&filters(&[("field.tag", "rust")]), &tagged));
        assert!(!matches(&filters(&[("field.tag", "go")]), &tagged));
        assert!(!matches(&filters(&[("has", "code_url")]), &p));
        assert!(matches(&filters(&[("has", "name")]), &p));
        assert!(!matches(&filters(&[("has", "name, url")]), &p), "no url");
        assert!(!matches(&filters(&[("year", "2020-")]), &p), "no year");
        assert_eq!(parse_stars("1,234"), Some(1234));
        assert_eq!(parse_stars("1.5k"), Some(1500));
        assert_eq!(parse_stars("lots"), None);
    }

    #[test]
    fn bad_values_are_refused_naming_the_filter() {
        let mut f = Filters::default();
        for (name, value) in [
            ("year", "soon"),
            ("year", "2024-2020"),
            ("year", "12"),
            ("stars", "many"),
            ("venue", " "),
            ("venue", "--"),
            ("field.", "x"),
            ("field.a b", "x"),
            ("has", "code url"),
        ] {
            let err = f.set(name, value).unwrap_err().to_string();
            assert!(err.contains(name), "{name}={value}: {err}");
        }
        assert!(!f.set("q", "x").unwrap(), "not a filter");
        assert!(f.is_empty());
    }

    #[test]
    fn orders_put_missing_values_last_and_break_ties_by_kb_order() {
        let f = |year: Option<u16>, stars: Option<u64>| Facets {
            year,
            stars,
            ..Facets::default()
        };
        let (a, b, c) = (f(Some(2020), None), f(Some(2024), None), f(None, Some(5)));
        let mut v = [(0u32, &a), (1, &b), (2, &c)];
        v.sort_by(|x, y| Order::YearDesc.compare(*x, *y));
        assert_eq!(v.map(|x| x.0), [1, 0, 2]);
        v.sort_by(|x, y| Order::YearAsc.compare(*x, *y));
        assert_eq!(v.map(|x| x.0), [0, 1, 2]);
        v.sort_by(|x, y| Order::StarsDesc.compare(*x, *y));
        assert_eq!(v.map(|x| x.0), [2, 0, 1]);
    }

    #[test]
    fn filters_serialize_as_request_parameters() {
        let f = filters(&[
            ("type", "paper"),
            ("year", "2020-2023"),
            ("field.section", "News"),
        ]);
        assert_eq!(
            serde_json::to_value(&f).unwrap(),
            serde_json::json!({"type": "publication", "year": "2020-2023", "field.section": "News"})
        );
    }
}
