//! Checks a prebuilt index against its knowledge base at any size (the tests do it on the
//! sample and a generated site): `index_check KB.json [KB.index] [--load-only]`.
//!
//! Reads the index from the file as a function does (streamed, every bound checked),
//! printing its size against the JSON's and the time the read took; then, unless
//! `--load-only` (for measuring a load's peak RSS alone), indexes the JSON and asks both
//! the same questions: every 25th document's title and a few fixed ones. Each answer
//! (terms, ranked passages with their score bits and text, the search hits as JSON) must be
//! the same; the differences are printed and the exit status is 1.
#![allow(missing_docs)]

use std::path::PathBuf;
use std::time::Instant;

use shared::index::{content_hash, Expect, IndexReader};
use shared::{KnowledgeBase, SearchIndex};

const FIXED: &[&str] = &[
    "how do I read a file line by line",
    "HashMap iteration order",
    "rebase onto another branch",
    "stash changes",
    "thread pool executor shutdown",
    "模型 训练",
];

fn answer(index: &SearchIndex, q: &str) -> String {
    let (terms, hits) = index.rank(q, 10, 0.0);
    let ranked: Vec<(u32, u32, u32, std::borrow::Cow<'_, str>)> = hits
        .iter()
        .map(|h| (h.doc, h.passage, h.score.to_bits(), index.passage_text(h)))
        .collect();
    let shown = serde_json::to_string(&index.search(q, 10, 0.0).hits).unwrap_or_default();
    format!("{terms:?} {ranked:?} {shown}")
}

/// Milliseconds `index` takes to search every question (ten hits each, as the API shows).
fn time_searches(index: &SearchIndex, questions: &[&str]) -> f64 {
    let started = Instant::now();
    for q in questions {
        std::hint::black_box(index.search(q, 10, 0.0));
    }
    started.elapsed().as_secs_f64() * 1000.0
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let load_only = args.iter().any(|a| a == "--load-only");
    let paths: Vec<&String> = args.iter().filter(|a| !a.starts_with("--")).collect();
    let json_path = PathBuf::from(
        paths
            .first()
            .ok_or("usage: index_check KB.json [KB.index]")?,
    );
    let index_path = paths
        .get(1)
        .map_or_else(|| json_path.with_extension("index"), PathBuf::from);
    let json_len = std::fs::metadata(&json_path)?.len();
    let file = std::fs::File::open(&index_path)?;
    let index_len = file.metadata()?.len();
    println!(
        "index {index_len} bytes, JSON {json_len} bytes: {:.3}x",
        index_len as f64 / json_len as f64
    );
    let started = Instant::now();
    let reader = IndexReader::open(Box::new(std::io::BufReader::new(file)), index_len)?;
    let hash = reader.built_from().hash;
    let loaded = reader.decode(Expect::Hash(hash), "index".into())?;
    println!("index read in {} ms", started.elapsed().as_millis());
    if load_only {
        return Ok(());
    }
    // The questions: a few fixed ones and every 25th document's title (titles are read
    // without inflating any page text).
    let titles: Vec<String> = loaded
        .kb()
        .documents
        .iter()
        .step_by(25)
        .map(|d| d.display_title().to_owned())
        .collect();
    let questions: Vec<&str> = FIXED
        .iter()
        .copied()
        .chain(titles.iter().map(String::as_str))
        .collect();
    // Searched twice on the index as loaded: the first pass decodes the postings and
    // inflates the text its questions need, the second finds them ready.
    let cold = time_searches(&loaded, &questions);
    let warm = time_searches(&loaded, &questions);
    let bytes = std::fs::read(&json_path)?;
    if content_hash(&bytes) != hash {
        return Err("the index was built from other JSON bytes".into());
    }
    let started = Instant::now();
    let kb = KnowledgeBase::from_json_str(std::str::from_utf8(&bytes)?, "check")?;
    drop(bytes);
    let built = SearchIndex::new(kb, "json");
    println!("JSON indexed in {} ms", started.elapsed().as_millis());
    let json = time_searches(&built, &questions);
    println!(
        "{} searches: index {cold:.1} ms the first time, {warm:.1} ms again; JSON-built {json:.1} ms",
        questions.len()
    );
    if loaded.kb() != built.kb() {
        return Err("the documents differ".into());
    }
    let (mut asked, mut differ) = (0, 0);
    for &q in &questions {
        asked += 1;
        let (a, b) = (answer(&built, q), answer(&loaded, q));
        if a != b {
            differ += 1;
            println!("differs: {q:?}\n  json:  {a}\n  index: {b}");
        }
    }
    println!("{asked} questions, {differ} answered differently");
    if differ > 0 {
        std::process::exit(1);
    }
    Ok(())
}
