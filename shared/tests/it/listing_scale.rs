//! Author lists at any scale: a knowledge base of publications with thousands of distinct
//! authors loads (from JSON and from its prebuilt index) and answers listing questions at
//! the cost of plain pages of the same size, not at the square of the number of names.
//!
//! Costs are compared as ratios of this thread's CPU time against a baseline measured in
//! the same process, never as absolute times, so a slow or busy machine does not fail them.

use shared::index::{content_hash, decode, encode, Expect};
use shared::SearchIndex;

/// This thread's CPU time so far, in nanoseconds (`/proc/thread-self/schedstat`).
fn cpu_ns() -> u64 {
    let stat = std::fs::read_to_string("/proc/thread-self/schedstat").unwrap();
    stat.split_whitespace().next().unwrap().parse().unwrap()
}

/// The CPU time `f` takes on this thread, in nanoseconds, and its result.
fn cpu<T>(f: impl FnOnce() -> T) -> (u64, T) {
    let start = cpu_ns();
    let out = f();
    (cpu_ns() - start, out)
}

/// A distinct invented name for `i` (syllables of its base-17 digits).
fn name(i: usize, salt: usize) -> String {
    const SYL: [&str; 17] = [
        "ba", "ce", "di", "fo", "gu", "kai", "lou", "ma", "ne", "pi", "ro", "su", "ta", "ve", "zi",
        "sha", "tre",
    ];
    let mut x = i * 7 + salt;
    let mut s = String::new();
    loop {
        s.push_str(SYL[x % SYL.len()]);
        x /= SYL.len();
        if x == 0 {
            break;
        }
    }
    let mut c = s.chars();
    c.next()
        .map(|f| f.to_uppercase().chain(c).collect())
        .unwrap_or_default()
}

/// `pubs` publications with `per` distinct authors each (every name in the KB distinct),
/// and a site of as many plain pages carrying the same number of bytes as text.
fn kbs(pubs: usize, per: usize) -> (Vec<u8>, Vec<u8>) {
    let mut authors_docs = Vec::new();
    let mut plain_docs = Vec::new();
    for p in 0..pubs {
        let authors: Vec<String> = (0..per)
            .map(|a| {
                let i = p * per + a;
                format!("{} {}", name(i, 1), name(i, 3))
            })
            .collect();
        let authors = authors.join(", ");
        let title = format!("Study number {p} of the measured effect");
        authors_docs.push(serde_json::json!({
            "id": format!("pub-{p}"), "type": "paper", "title": title,
            "authors": authors, "venue": "CVPR", "year": 2000 + (p % 25) as u64,
        }));
        let words: String = authors.replace(',', "");
        plain_docs.push(serde_json::json!({
            "id": format!("page-{p}"), "type": "page", "title": title,
            "content": words, "year": 2000 + (p % 25) as u64,
        }));
    }
    let json = |docs| serde_json::to_vec(&serde_json::json!({ "documents": docs })).unwrap();
    (json(authors_docs), json(plain_docs))
}

/// The CPU time of a cold start from the JSON and from the prebuilt index of `json`.
fn load_costs(json: &[u8]) -> (u64, u64) {
    let kb = || shared::kb::parse_kb_bytes(json, "kb.json").unwrap();
    let (from_json, index) = cpu(|| SearchIndex::new(kb(), "v"));
    let bytes = encode(&index, content_hash(json), "v");
    drop(index);
    let expect = Expect::Hash(content_hash(json));
    let (prebuilt, loaded) = cpu(|| decode(&bytes, expect, "v".into()).unwrap());
    assert!(loaded.is_prebuilt());
    (from_json, prebuilt)
}

#[test]
fn thousands_of_distinct_authors_load_like_plain_pages_of_the_same_size() {
    // The review's KB (1,000 × 40 = 40,000 distinct names: 3 s of a 10 s init with a scan
    // per name) and one half its size, so growth is seen too.
    for pubs in [500, 1000] {
        let (authors, plain) = kbs(pubs, 40);
        let ratio = authors.len() as f64 / plain.len() as f64;
        assert!((0.9..1.6).contains(&ratio), "sizes differ: {ratio}");
        let (a_json, a_index) = load_costs(&authors);
        let (p_json, p_index) = load_costs(&plain);
        let json_ratio = a_json as f64 / p_json as f64;
        let index_ratio = a_index as f64 / p_index as f64;
        eprintln!(
            "{pubs} pubs x 40 authors: from JSON {:.0} ms vs plain {:.0} ms ({json_ratio:.2}x), \
             prebuilt {:.0} ms vs plain {:.0} ms ({index_ratio:.2}x)",
            a_json as f64 / 1e6,
            p_json as f64 / 1e6,
            a_index as f64 / 1e6,
            p_index as f64 / 1e6,
        );
        assert!(
            json_ratio < 3.0,
            "{pubs} pubs from JSON: {json_ratio:.2}x plain"
        );
        assert!(
            index_ratio < 3.0,
            "{pubs} pubs prebuilt: {index_ratio:.2}x plain"
        );
    }
}

#[test]
fn a_listing_question_costs_the_same_against_forty_thousand_authors_as_against_forty() {
    let (many, _) = kbs(1000, 40);
    let (few, _) = kbs(1, 40);
    let many = SearchIndex::new(shared::kb::parse_kb_bytes(&many, "m").unwrap(), "m");
    let few = SearchIndex::new(shared::kb::parse_kb_bytes(&few, "f").unwrap(), "f");
    // Names of the first publication, on both; one of the last, only on the large one.
    let first = format!("{} {}", name(0, 1), name(0, 3));
    let last = format!("{} {}", name(39_999, 1), name(39_999, 3));
    let questions = [
        format!("papers by {first}"),
        format!("{first} 的论文"),
        format!("list all papers of {last}"),
        "CVPR 2020 papers".to_owned(),
        "which papers have code".to_owned(),
        "what is the measured effect".to_owned(),
    ];
    let many_first = many.vocabulary().recognise(&questions[0]).unwrap();
    assert_eq!(
        many_first.filters.author.as_deref(),
        Some(first.to_lowercase().as_str())
    );
    let many_last = many.vocabulary().recognise(&questions[2]).unwrap();
    assert_eq!(
        many_last.filters.author.as_deref(),
        Some(last.to_lowercase().as_str())
    );
    let batch = |index: &SearchIndex| {
        for q in &questions {
            std::hint::black_box(index.vocabulary().read(q));
        }
    };
    // As many rounds as take the small KB 200 ms of CPU (the clock ticks in milliseconds),
    // then as many against the large one.
    batch(&many);
    let (mut rounds, start) = (0u32, cpu_ns());
    while cpu_ns() - start < 200_000_000 {
        batch(&few);
        rounds += 1;
    }
    let f = cpu_ns() - start;
    let (m, ()) = cpu(|| (0..rounds).for_each(|_| batch(&many)));
    let ratio = m as f64 / f as f64;
    eprintln!(
        "{rounds} x 6 questions: {:.0} ms against 40,000 authors, {:.0} ms against 40 \
         ({ratio:.2}x)",
        m as f64 / 1e6,
        f as f64 / 1e6
    );
    assert!(ratio < 3.0, "{ratio:.2}x the cost of a small KB");
}
