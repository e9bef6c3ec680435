//! Listing questions over the sample knowledge base return exactly the matching entries.
//!
//! The expected sets are computed here from the JSON file itself (its raw fields, with
//! simple string tests), not through the search code, so a recogniser or filter bug shows
//! up as a difference.
#![allow(clippy::unwrap_used)] // tests may panic on broken fixtures

use serde_json::Value;
use shared::search::{Filters, SearchRequest};
use shared::SearchIndex;

fn kb_path() -> std::path::PathBuf {
    std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../knowledge_base.json")
}

fn raw_docs() -> Vec<Value> {
    let text = std::fs::read_to_string(kb_path()).unwrap();
    let v: Value = serde_json::from_str(&text).unwrap();
    v["documents"].as_array().unwrap().clone()
}

fn s<'a>(d: &'a Value, f: &str) -> &'a str {
    d[f].as_str().unwrap_or("")
}

fn year(d: &Value) -> Option<u64> {
    d["year"]
        .as_u64()
        .or_else(|| d["year"].as_str().and_then(|y| y.parse().ok()))
}

/// The ids the raw JSON says match, in the order the search should give: newest first,
/// then most stars, then file order.
fn expected(pred: impl Fn(&Value) -> bool) -> Vec<String> {
    let stars = |d: &Value| -> Option<u64> {
        let t = s(d, "stars").trim_end_matches('+').to_lowercase();
        t.strip_suffix('k')
            .map(|k| k.parse::<u64>().ok().map(|n| n * 1000))
            .unwrap_or_else(|| t.parse().ok())
    };
    let mut docs: Vec<(usize, Value)> = raw_docs()
        .into_iter()
        .enumerate()
        .filter(|(_, d)| pred(d))
        .collect();
    docs.sort_by_key(|(i, d)| {
        (
            std::cmp::Reverse(year(d).map_or(0, |y| y + 1)),
            std::cmp::Reverse(stars(d).map_or(0, |n| n + 1)),
            *i,
        )
    });
    docs.into_iter()
        .map(|(_, d)| s(&d, "id").to_owned())
        .collect()
}

fn ask(index: &SearchIndex, q: &str) -> Vec<String> {
    let req = SearchRequest::new(Some(q), None, 3).unwrap();
    let res = index.run(&req, 0.5);
    assert!(res.listing, "{q} was not read as a listing");
    res.hits.iter().map(|h| h.id.clone()).collect()
}

/// Venue's first word, as a reader would say it ("ICCV 2025 (Highlight)" → "ICCV").
fn venue_is(d: &Value, name: &str) -> bool {
    s(d, "venue").split_whitespace().next() == Some(name)
}

#[test]
fn the_issue_listing_questions_return_exactly_the_matching_entries() {
    let index = SearchIndex::load_file(&kb_path()).unwrap();
    let is = |t: &'static str| move |d: &Value| s(d, "type") == t;
    let cases: Vec<(&str, Vec<String>)> = vec![
        (
            "他发表过哪些 CVPR 论文",
            expected(|d| is("publication")(d) && venue_is(d, "CVPR")),
        ),
        ("2024 年发表了什么", expected(|d| year(d) == Some(2024))),
        (
            "2024 年的论文",
            expected(|d| is("publication")(d) && year(d) == Some(2024)),
        ),
        ("有哪些开源项目", expected(is("github_project"))),
        (
            "list all papers with code",
            expected(|d| is("publication")(d) && !s(d, "code_url").is_empty()),
        ),
        (
            "which papers were published at ICCV",
            expected(|d| is("publication")(d) && venue_is(d, "ICCV")),
        ),
        (
            "projects with more than 1000 stars",
            expected(|d| {
                is("github_project")(d)
                    && s(d, "stars").starts_with(|c: char| c.is_ascii_digit())
                    && s(d, "stars").contains('k')
            }),
        ),
        (
            "Which papers appeared at AAAI 2026?",
            expected(|d| is("publication")(d) && s(d, "venue").starts_with("AAAI 2026")),
        ),
        (
            "2020-2022 年的论文",
            expected(|d| {
                is("publication")(d) && year(d).is_some_and(|y| (2020..=2022).contains(&y))
            }),
        ),
    ];
    for (q, want) in cases {
        assert!(!want.is_empty(), "{q}: the fixture has matches");
        assert_eq!(ask(&index, q), want, "{q}");
    }
}

#[test]
fn the_most_starred_project_comes_first_and_every_project_is_listed() {
    let index = SearchIndex::load_file(&kb_path()).unwrap();
    let got = ask(&index, "最多 star 的项目");
    let mut want = expected(|d| s(d, "type") == "github_project");
    // Only one project has a star count in the sample: it leads, the rest keep file order.
    assert_eq!(got.first().map(String::as_str), Some("project_insightface"));
    want.sort();
    let mut sorted = got.clone();
    sorted.sort();
    assert_eq!(sorted, want);
}

#[test]
fn content_words_are_ranked_within_the_filtered_entries() {
    let index = SearchIndex::load_file(&kb_path()).unwrap();
    let got = ask(&index, "2024 年关于 CLIP 的论文");
    let want: Vec<String> = raw_docs()
        .iter()
        .filter(|d| year(d) == Some(2024) && s(d, "type") == "publication")
        .filter(|d| {
            let all = format!("{} {} {:?}", s(d, "title"), s(d, "summary"), d["keywords"]);
            all.to_lowercase().contains("clip")
        })
        .map(|d| s(d, "id").to_owned())
        .collect();
    let mut sorted = got.clone();
    sorted.sort();
    let mut want_sorted = want.clone();
    want_sorted.sort();
    assert_eq!(sorted, want_sorted);
}

#[test]
fn explicit_filters_work_without_the_recogniser_and_report_themselves() {
    let index = SearchIndex::load_file(&kb_path()).unwrap();
    let mut req = SearchRequest::new(Some("representation learning"), Some("10"), 3).unwrap();
    req.filters.set("year", "2023-2025").unwrap();
    req.filters.set("has", "code_url").unwrap();
    let res = index.run(&req, 0.5);
    assert!(!res.listing, "content words: a ranked search");
    let json = serde_json::to_value(&res).unwrap();
    assert_eq!(json["filters"]["year"], "2023-2025");
    assert_eq!(json["filters"]["has"][0], "code_url");
    let allowed: Vec<String> = raw_docs()
        .iter()
        .filter(|d| year(d).is_some_and(|y| (2023..=2025).contains(&y)))
        .filter(|d| !s(d, "code_url").is_empty())
        .map(|d| s(d, "id").to_owned())
        .collect();
    assert!(!res.hits.is_empty());
    for h in &res.hits {
        assert!(allowed.contains(&h.id), "{} is outside the filters", h.id);
    }
    // The same filters with a query that has no content words list every match.
    let mut listing = SearchRequest::new(Some("list papers"), None, 3).unwrap();
    listing.filters = Filters::default();
    listing.filters.set("author", "Kaicheng Yang").unwrap();
    let res = index.run(&listing, 0.5);
    let want = expected(|d| s(d, "authors").contains("Kaicheng Yang"));
    assert_eq!(
        res.hits.iter().map(|h| h.id.clone()).collect::<Vec<_>>(),
        want
    );
}

#[test]
fn ordinary_questions_keep_their_bm25_ranking() {
    let index = SearchIndex::load_file(&kb_path()).unwrap();
    for q in [
        "请介绍一下 Partial FC",
        "What is Unicom?",
        "多模态大模型",
        "它的代码在哪里？",
    ] {
        let req = SearchRequest::new(Some(q), None, 3).unwrap();
        let ran = index.run(&req, 0.5);
        let plain = index.search(q, 3, 0.5);
        assert!(ran.filters.is_none() && !ran.listing, "{q}");
        let ids =
            |r: &shared::SearchResponse| r.hits.iter().map(|h| h.id.clone()).collect::<Vec<_>>();
        assert_eq!(ids(&ran), ids(&plain), "{q}");
    }
}
