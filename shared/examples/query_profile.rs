//! Runs one query many times over the sample knowledge base, for a profiler
//! (`valgrind --tool=callgrind`, `perf record`): `query_profile [rank|search] QUERY [N]`.
#![allow(missing_docs)]

use shared::SearchIndex;
use std::hint::black_box;
use std::path::PathBuf;

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let mode = args.get(1).map_or("rank", String::as_str);
    let query = args.get(2).map_or("人脸识别训练", String::as_str);
    let n: usize = args.get(3).and_then(|s| s.parse().ok()).unwrap_or(10_000);
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../knowledge_base.json");
    let index = SearchIndex::load_file(&path).expect("sample KB loads");
    let started = std::time::Instant::now();
    for _ in 0..n {
        if mode == "search" {
            black_box(index.search(black_box(query), 3, 0.5));
        } else {
            black_box(index.retriever().search(black_box(query), 3, 0.5));
        }
    }
    let per = started.elapsed().as_nanos() as f64 / n as f64;
    println!("{mode} {query:?}: {per:.0} ns per query");
}
