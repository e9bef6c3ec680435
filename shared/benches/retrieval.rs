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

fn search(c: &mut Criterion) {
    let index = SearchIndex::load_file(&sample_kb()).expect("sample KB loads");
    let mut group = c.benchmark_group("sample_kb/search");
    for (name, query) in [
        ("zh_partial_fc", "请介绍一下 Partial FC"),
        ("zh_face_training", "人脸识别训练"),
        ("zh_multimodal", "多模态大模型"),
        ("en_llava", "What is LLaVA-OneVision-1.5?"),
        ("zh_followup", "它的代码在哪里？"),
        (
            "mixed_long",
            "安翔在 CVPR 和 ICCV 上发表过哪些关于 face recognition 的论文？代码开源了吗？",
        ),
    ] {
        group.bench_function(name, |b| b.iter(|| index.search(black_box(query), 3, 0.5)));
    }
    group.finish();
}

criterion_group!(benches, load_and_index, search);
criterion_main!(benches);
