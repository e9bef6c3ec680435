//! Retrieval acceptance on the sample knowledge base (issue 2): the questions visitors ask
//! most must find the right entries, in Chinese and in English.
#![allow(clippy::unwrap_used)]

use shared::SearchIndex;
use std::path::Path;

fn index() -> SearchIndex {
    SearchIndex::load_file(&Path::new(env!("CARGO_MANIFEST_DIR")).join("../knowledge_base.json"))
        .unwrap()
}

fn top(index: &SearchIndex, query: &str, k: usize) -> Vec<String> {
    index
        .search(query, k, 0.5)
        .hits
        .into_iter()
        .map(|h| h.id)
        .collect()
}

fn sorted(mut v: Vec<String>) -> Vec<String> {
    v.sort();
    v
}

#[test]
fn partial_fc_questions_return_insightface_and_both_papers_as_top_3() {
    let index = index();
    let want = vec![
        "project_insightface",
        "pub_partial_fc_cvpr",
        "pub_partial_fc_iccvw",
    ];
    for q in ["请介绍一下 Partial FC", "人脸识别训练"] {
        assert_eq!(sorted(top(&index, q, 3)), want, "{q}");
    }
}

#[test]
fn multimodal_large_model_returns_llava_entries_first() {
    let index = index();
    let hits = top(&index, "多模态大模型", 3);
    assert_eq!(hits.len(), 3);
    assert!(hits.iter().all(|id| id.contains("llava")), "{hits:?}");
}

#[test]
fn llava_onevision_question_returns_both_onevision_entries_first() {
    let index = index();
    let hits = top(&index, "What is LLaVA-OneVision-1.5?", 2);
    assert_eq!(
        sorted(hits),
        vec!["project_llava_onevision", "pub_llava_onevision_1_5"]
    );
}

#[test]
fn glossary_names_find_the_researcher_and_collaborators() {
    let index = index();
    let hits = top(&index, "邓健康和安翔合作的论文", 3);
    assert_eq!(hits.len(), 3);
    let terms = index.search("安翔", 3, 0.5).terms;
    assert!(
        terms
            .iter()
            .any(|t| t.term == "xiang" && t.from.as_deref() == Some("安翔")),
        "{terms:?}"
    );
}

#[test]
fn unrelated_questions_return_nothing_above_the_minimum_score() {
    let index = index();
    assert!(top(&index, "recipe for banana bread", 3).is_empty());
}
