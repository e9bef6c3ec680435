//! Retrieval speed on the sample knowledge base: load + index time, and search latency for
//! Chinese, English and mixed questions. `cargo bench -p shared --bench retrieval`.
#![allow(missing_docs)]

use criterion::{criterion_group, criterion_main, Criterion};
use shared::SearchIndex;
use std::hint::black_box;
use std::path::PathBuf;

fn sample_kb() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../knowledge_base.json")
}

fn load_and_index(c: &mut Criterion) {
    let path = sample_kb();
    c.bench_function("sample_kb/load_and_index", |b| {
        b.iter(|| SearchIndex::load_file(black_box(&path)).expect("sample KB loads"))
    });
}

/// Questions a visitor of the sample site asks, by language.
const QUERIES: [(&str, &str); 6] = [
    ("zh_partial_fc", "请介绍一下 Partial FC"),
    ("zh_face_training", "人脸识别训练"),
    ("zh_multimodal", "多模态大模型"),
    ("en_llava", "What is LLaVA-OneVision-1.5?"),
    ("zh_followup", "它的代码在哪里？"),
    (
        "mixed_long",
        "安翔在 CVPR 和 ICCV 上发表过哪些关于 face recognition 的论文？代码开源了吗？",
    ),
];

/// What the search function does for a query: retrieval plus the response's hits
/// (titles, links, snippets).
fn search(c: &mut Criterion) {
    let index = SearchIndex::load_file(&sample_kb()).expect("sample KB loads");
    let mut group = c.benchmark_group("sample_kb/search");
    for (name, query) in QUERIES {
        group.bench_function(name, |b| b.iter(|| index.search(black_box(query), 3, 0.5)));
    }
    group.finish();
}

/// The query alone: analysis, expansion, BM25 ranking and the no-answer test, without
/// building a response (what the chat's retrieval costs, and the "query" time).
fn rank(c: &mut Criterion) {
    let index = SearchIndex::load_file(&sample_kb()).expect("sample KB loads");
    let retriever = index.retriever();
    let mut group = c.benchmark_group("sample_kb/rank");
    for (name, query) in QUERIES {
        group.bench_function(name, |b| {
            b.iter(|| retriever.search(black_box(query), 3, 0.5))
        });
    }
    group.finish();
}

/// The characters the pinyin table flags as mostly spelling foreign names.
fn name_chars() -> Vec<char> {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("data/pinyin.tsv");
    let text = std::fs::read_to_string(path).expect("pinyin table is in the repo");
    text.lines()
        .filter(|l| l.ends_with("\t1"))
        .filter_map(|l| l.chars().next())
        .collect()
}

/// The most expensive queries we could construct for query analysis, each searched in
/// full (analysis + ranking): repeated and random name characters, thousands of distinct
/// words, emoji and combining marks. Each must stay within a few milliseconds.
fn adversarial(c: &mut Criterion) {
    let index = SearchIndex::load_file(&sample_kb()).expect("sample KB loads");
    let names = name_chars();
    // A fixed linear congruential sequence: the same "random" query on every run.
    let mut seed: u64 = 0x9e37_79b9_7f4a_7c15;
    let random_names: String = (0..2000)
        .map(|_| {
            seed = seed
                .wrapping_mul(6_364_136_223_846_793_005)
                .wrapping_add(1_442_695_040_888_963_407);
            names[(seed >> 33) as usize % names.len()]
        })
        .collect();
    let words: Vec<String> = (0..5000).map(|i| format!("w{i:x}q")).collect();
    let mut group = c.benchmark_group("adversarial/search");
    for (name, query) in [
        ("repeated_name_char_2000", "临".repeat(2000)),
        ("repeated_name_char_4000", "临".repeat(4000)),
        ("random_name_chars_2000", random_names),
        ("distinct_words_5000", words.join(" ")),
        ("emoji_2000", "👩\u{200d}👩\u{200d}👧🎉".repeat(400)),
        (
            "combining_marks_4000",
            "a\u{0301}\u{0327}\u{0308}".repeat(1000),
        ),
        (
            "han_random_4000",
            "的人脸识别训练模型安翔多模态".repeat(286),
        ),
    ] {
        group.bench_function(name, |b| b.iter(|| index.search(black_box(&query), 3, 0.5)));
    }
    group.finish();
}

/// The suggestions after an answer (one ranking of the best hit's title and keywords), and
/// the grounding check of a typical answer (English, Chinese) against its three blocks,
/// and of the longest reply chat relays (the 512-token cap, 16,384 characters).
fn grounding(c: &mut Criterion) {
    let index = SearchIndex::load_file(&sample_kb()).expect("sample KB loads");
    let (_, hits) = index.rank("What is Partial FC?", 3, 0.5);
    let blocks = shared::prompt::context_blocks(&index, &hits);
    let en = "Partial FC trains face recognition models with 10 million identities on a \
              single machine [1]. The CVPR 2022 follow-up makes training efficient and robust \
              [2]. The code is in the InsightFace repository under recognition/arcface_torch \
              [1]. Xiang An is the first author of both papers [1][2].";
    let zh = "Partial FC 可以在单台机器上训练包含 1000 万个身份的人脸识别模型【1】。\
              CVPR 2022 的后续工作让训练既高效又鲁棒【2】。相关代码在 InsightFace 仓库中【1】。";
    let long: String = en.chars().cycle().take(16_384).collect();
    c.bench_function("suggestions/partial_fc", |b| {
        b.iter(|| shared::chat::suggestions(&index, black_box(&hits), "What is Partial FC?"))
    });
    let mut group = c.benchmark_group("grounding");
    for (name, answer) in [
        ("en_4_sentences", en),
        ("zh_3_sentences", zh),
        ("en_16k_chars", &long),
    ] {
        group.bench_function(name, |b| {
            b.iter(|| shared::grounding::check(black_box(answer), &blocks, index.retriever()))
        });
    }
    group.finish();
}

criterion_group!(
    benches,
    load_and_index,
    search,
    rank,
    adversarial,
    grounding
);
criterion_main!(benches);
