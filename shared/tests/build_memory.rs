//! The heap a function takes to index a knowledge base from its JSON (no prebuilt index),
//! measured with `shared::memory`'s counting allocator on a generated site. One test only:
//! the counters are process-wide, so nothing may allocate beside it.
#![allow(clippy::unwrap_used)] // a broken fixture may panic

use shared::kb::parse_kb_bytes;
use shared::memory::{measure, CountingAlloc};
use shared::search::SearchIndex;
use std::fmt::Write;

#[global_allocator]
static ALLOC: CountingAlloc = CountingAlloc;

/// A deterministic site of `pages` English-like pages shaped like `infra/gen_kb.py`'s:
/// 100–300 words each from 20,000 invented words of Zipf-like frequency, in sentences and
/// paragraphs, with a title, a link and a few keywords.
fn generated_json(pages: usize) -> Vec<u8> {
    let mut seed: u64 = 7;
    let mut next = move |n: usize| {
        seed = seed
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        ((seed >> 33) as usize) % n
    };
    let syllables = [
        "ba", "ce", "di", "fo", "gu", "kai", "lou", "ma", "ne", "pi", "ro", "su", "ta", "ve", "zi",
        "sha", "tre",
    ];
    let vocab: Vec<String> = (0..20_000)
        .map(|i: usize| {
            let mut w = String::new();
            let mut x = i;
            // Distinct words: the digits of `i` in base 17, a syllable each.
            loop {
                w.push_str(syllables[x % syllables.len()]);
                x /= syllables.len();
                if x == 0 {
                    break w;
                }
            }
        })
        .collect();
    // Zipf-like: rank r weighs 1/r; `cumulative` in millionths of the total.
    let total: f64 = (1..=vocab.len()).map(|r| 1.0 / r as f64).sum();
    let mut acc = 0.0;
    let cumulative: Vec<u32> = (1..=vocab.len())
        .map(|r| {
            acc += 1.0 / r as f64;
            (acc / total * 1e6) as u32
        })
        .collect();
    let mut word = move || {
        let x = next(1_000_000) as u32;
        let rank = cumulative.partition_point(|&c| c <= x).min(vocab.len() - 1);
        vocab[rank].clone()
    };
    let capitalised = |w: String| w[..1].to_uppercase() + &w[1..];
    let mut out = String::from(r#"{"documents": ["#);
    for p in 0..pages {
        let mut content = String::new();
        let mut remaining = 100 + next(201) as i64;
        while remaining > 0 {
            if !content.is_empty() {
                content.push_str("\\n\\n");
            }
            for s in 0..2 + next(5) {
                let n = 6 + next(13);
                remaining -= n as i64;
                let words: Vec<String> = (0..n).map(|_| word()).collect();
                if s > 0 {
                    content.push(' ');
                }
                content.push_str(&capitalised(words.join(" ")));
                content.push('.');
            }
        }
        let title: Vec<String> = (0..2 + next(5)).map(|_| capitalised(word())).collect();
        let keywords: Vec<String> = (0..2 + next(4))
            .map(|_| format!("\"{}\"", word()))
            .collect();
        if p > 0 {
            out.push_str(", ");
        }
        write!(
            out,
            concat!(
                r#"{{"id": "page_{p:06}", "type": "page", "title": "{}", "#,
                r#""url": "https://site.example/pages/{p}", "keywords": [{}], "#,
                r#""content": "{content}"}}"#
            ),
            title.join(" "),
            keywords.join(", "),
            p = p,
            content = content,
        )
        .unwrap();
    }
    out.push_str(r#"], "glossary": {"模型": ["model"]}}"#);
    out.into_bytes()
}

#[test]
fn indexing_the_json_takes_little_beyond_what_it_keeps() {
    let pages = 1500;
    let json = generated_json(pages);
    // As a function does: the bytes read (a copy, so they count), parsed, dropped, indexed.
    let (index, used) = measure(|| {
        let bytes = json.clone();
        let kb = parse_kb_bytes(&bytes, "generated").unwrap();
        drop(bytes);
        SearchIndex::new(kb, "generated")
    });
    let used = used.expect("the allocator is installed");
    assert_eq!(index.kb().documents.len(), pages);
    assert!(index.retriever().index().vocabulary_size() > 10_000);
    let of_json = |bytes: usize| bytes as f64 / json.len() as f64;
    let (peak, held) = (of_json(used.peak), of_json(used.retained));
    println!(
        "JSON {} bytes; peak {peak:.2}x, held {held:.2}x",
        json.len()
    );
    // Measured on this site: before the build was made lean, a peak of 5.5x the JSON of
    // which 1.8x was the parse's and the build's temporaries; after, 3.6x and under 0.1x. (What
    // is kept, 3.6x here, is a smaller share on a larger site: 2.2x at 10,000 pages.)
    assert!(peak <= 4.5, "peak {peak:.2}x the JSON");
    assert!(
        peak - held <= 0.5,
        "temporaries {:.2}x the JSON (peak {peak:.2}x, held {held:.2}x)",
        peak - held
    );
}
