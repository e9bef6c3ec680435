//! Where the heap goes when a function indexes a knowledge base from its JSON (no prebuilt
//! index): reads, parses and indexes one file exactly as the search function does, under
//! the counting allocator, and prints the peak and what was held at the end of each phase
//! the build marks ([`shared::heap::mark`]), both above what was live before the read.
//!
//! With `--index`, the same for a load of the prebuilt index beside it (`rag index
//! KB.json` writes it), streamed from the file as a function reads it.
//!
//! Usage: `cargo run -p shared --example build_memory -- KB.json [--index]` (a large one
//! from `infra/gen_kb.py 10000 kb.json`).

use shared::heap::{measure, record, CountingAlloc};
use shared::retrieval::Analyzer;

#[global_allocator]
static ALLOC: CountingAlloc = CountingAlloc;

type BoxError = Box<dyn std::error::Error + Send + Sync>;

/// The heap at each mark, as a table.
fn print_marks(marks: &[shared::heap::Mark]) {
    println!("{:<18} {:>10} {:>10}", "phase", "peak MiB", "live MiB");
    for m in marks {
        println!(
            "{:<18} {:>10.1} {:>10.1}",
            m.label,
            mib(m.peak),
            mib(m.live)
        );
    }
}

fn mib(bytes: usize) -> f64 {
    bytes as f64 / (1 << 20) as f64
}

fn main() -> Result<(), BoxError> {
    let path = std::env::args()
        .nth(1)
        .ok_or("usage: build_memory <knowledge_base.json> [--index]")?;
    let json_len = std::fs::metadata(&path)?.len() as usize;
    if std::env::args().any(|a| a == "--index") {
        return prebuilt(&path, json_len);
    }
    let started = std::time::Instant::now();
    let (index, marks) = record(|| -> Result<_, BoxError> {
        let bytes = std::fs::read(&path)?;
        shared::heap::mark("read");
        let kb = shared::kb::parse_kb_bytes(&bytes, &path)?;
        shared::heap::mark("parse");
        drop(bytes);
        shared::heap::mark("drop json");
        Ok(shared::search::SearchIndex::new(kb, "measured"))
    });
    let index = index?;
    let took = started.elapsed();
    if marks.is_empty() {
        return Err("the counting allocator is not installed".into());
    }
    println!(
        "{path}: JSON {:.1} MiB, {} documents, {} passages, {} terms, built in {:.2} s",
        mib(json_len),
        index.kb().documents.len(),
        index.retriever().passages(),
        index.retriever().index().vocabulary_size(),
        took.as_secs_f64()
    );
    print_marks(&marks);
    let peak = marks.iter().map(|m| m.peak).max().unwrap_or(0);
    println!(
        "overall peak {:.1} MiB = {:.2}x the JSON; held after {:.1} MiB = {:.2}x",
        mib(peak),
        peak as f64 / json_len as f64,
        mib(marks.last().map_or(0, |m| m.live)),
        marks.last().map_or(0, |m| m.live) as f64 / json_len as f64,
    );

    // The analyzer's memo of the corpus's words on its own (part of "analyze+postings",
    // dropped before "finish"): learned again here from every document's text.
    let (memo, used) = measure(|| {
        let mut analyzer = Analyzer::new();
        for doc in &index.kb().documents {
            analyzer.learn_terms(&doc.metadata_text());
            analyzer.learn_terms(doc.content.as_deref().unwrap_or(""));
        }
        analyzer
    });
    if let Some(used) = used {
        println!(
            "analyzer memo alone: peak {:.1} MiB, held {:.1} MiB",
            mib(used.peak),
            mib(used.retained)
        );
    }
    drop(memo);
    Ok(())
}

/// The heap of a load of the prebuilt index beside `path`, phase by phase.
fn prebuilt(path: &str, json_len: usize) -> Result<(), BoxError> {
    let index_path = std::path::Path::new(path).with_extension("index");
    let file = std::fs::File::open(&index_path)?;
    let len = file.metadata()?.len();
    let started = std::time::Instant::now();
    let (index, marks) = record(|| -> Result<_, BoxError> {
        let reader =
            shared::index::IndexReader::open(Box::new(std::io::BufReader::new(file)), len)?;
        let hash = reader.built_from().hash;
        Ok(reader.decode(shared::index::Expect::Hash(hash), "measured".into())?)
    });
    let index = index?;
    let took = started.elapsed();
    println!(
        "{}: {:.1} MiB for a JSON of {:.1} MiB, {} documents, {} passages, {} terms, read in {:.3} s",
        index_path.display(),
        mib(len as usize),
        mib(json_len),
        index.kb().documents.len(),
        index.retriever().passages(),
        index.retriever().index().vocabulary_size(),
        took.as_secs_f64()
    );
    print_marks(&marks);
    // What requests add: each search decodes the postings of terms not seen before and
    // inflates the text blocks of its hits. Every 25th title, then every 5th, as questions.
    for step in [25, 5] {
        let titles: Vec<String> = index
            .kb()
            .documents
            .iter()
            .step_by(step)
            .map(|d| d.display_title().to_owned())
            .collect();
        let ((), used) = measure(|| {
            for t in &titles {
                std::hint::black_box(index.search(t, 10, 0.0));
            }
        });
        if let Some(used) = used {
            println!(
                "after {} more searches: {:.1} MiB more held",
                titles.len(),
                mib(used.retained)
            );
        }
    }
    Ok(())
}
