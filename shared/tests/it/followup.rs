//! Follow-up questions against the sample knowledge base (issue 3): a question that refers
//! back, or names no topic, is searched together with the earlier turn it depends on; a
//! self-contained new question is not.
#![allow(clippy::unwrap_used)] // a missing sample knowledge base should fail loudly

use shared::chat::retrieve_followup;
use shared::{ChatMessage, Role, SearchIndex};

const TOP_K: usize = 3;
const MIN_SCORE: f32 = 0.5;

fn index() -> SearchIndex {
    let kb = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../knowledge_base.json");
    SearchIndex::load_file(&kb).unwrap()
}

/// User questions with a stand-in answer after each, as a conversation arrives.
fn history(questions: &[&str]) -> Vec<ChatMessage> {
    questions
        .iter()
        .flat_map(|q| {
            [
                ChatMessage::new(Role::User, *q),
                ChatMessage::new(Role::Assistant, "(an answer)"),
            ]
        })
        .collect()
}

fn ids(index: &SearchIndex, earlier: &[&str], question: &str) -> (Vec<String>, bool) {
    let r = retrieve_followup(index, question, &history(earlier), TOP_K, MIN_SCORE);
    let ids = r
        .hits
        .iter()
        .map(|h| index.kb().documents[h.doc as usize].id.clone())
        .collect();
    (ids, r.followup)
}

/// (earlier questions, follow-up, ids that must all be retrieved)
const FOLLOW_UPS: &[(&[&str], &str, &[&str])] = &[
    (
        &["请介绍一下 Partial FC"],
        "它的代码在哪里？",
        &["pub_partial_fc_iccvw", "project_insightface"],
    ),
    (
        &["请介绍一下 Partial FC"],
        "那篇论文是哪一年发表的？",
        &["pub_partial_fc_iccvw"],
    ),
    (
        &["请介绍一下 Partial FC"],
        "谁是第一作者？",
        &["pub_partial_fc_iccvw"],
    ),
    (
        &["InsightFace 是什么项目？"],
        "它有多少 star？",
        &["project_insightface"],
    ),
    (
        &["LLaVA-OneVision-1.5 是什么？"],
        "它的代码开源了吗？",
        &["project_llava_onevision"],
    ),
    (&["介绍一下 Unicom"], "第一作者是谁？", &["pub_unicom"]),
    (
        &["RWKV-CLIP 是做什么的？"],
        "这篇论文发表在哪里？",
        &["pub_rwkv_clip"],
    ),
    (&["ORID 是什么？"], "能详细说说吗？", &["pub_orid"]),
    (
        &["他做过文档图像矫正的工作吗？"],
        "代码呢？",
        &["pub_forcennet"],
    ),
    (
        &["StreamAgent 讲的是什么？"],
        "这项工作解决了什么问题？",
        &["pub_streamagent"],
    ),
    (
        &["介绍一下口罩人脸识别比赛"],
        "该论文的作者有哪些？",
        &["pub_masked_face"],
    ),
    (
        &["What is Partial FC?"],
        "Where is its code?",
        &["pub_partial_fc_iccvw", "project_insightface"],
    ),
    (
        &["Tell me about RealSyn"],
        "Is it open source?",
        &["pub_realsyn"],
    ),
    (
        &["What is UniViT?"],
        "Who are the authors?",
        &["pub_univit"],
    ),
    (
        &["What does HUST do?"],
        "When was this paper published?",
        &["pub_hust"],
    ),
    (
        &["What is CLIP-CID?"],
        "What about the code?",
        &["pub_clip_cid"],
    ),
    (
        &["Tell me about IDAdapter"],
        "Which venue was it published in?",
        &["pub_idadapter"],
    ),
    (
        &["What is LLaVA-OneVision-1.5?"],
        "它用了什么视觉编码器？",
        &["project_llava_onevision"],
    ),
    (
        &["请介绍一下 Partial FC", "它的代码在哪里？"],
        "那篇论文是哪一年发表的？",
        &["pub_partial_fc_iccvw"],
    ),
];

#[test]
fn follow_ups_retrieve_the_earlier_topic() {
    assert!(FOLLOW_UPS.len() >= 15);
    let index = index();
    let mut failures = Vec::new();
    for (earlier, question, expected) in FOLLOW_UPS {
        let (got, followup) = ids(&index, earlier, question);
        if !followup || !expected.iter().all(|e| got.iter().any(|g| g == e)) {
            failures.push(format!(
                "{earlier:?} → {question}: followup={followup}, got {got:?}, want {expected:?}"
            ));
        }
    }
    assert!(failures.is_empty(), "{failures:#?}");
}

#[test]
fn partial_fc_code_follow_up_finds_both_partial_fc_papers_with_a_wider_k() {
    let index = index();
    let r = retrieve_followup(
        &index,
        "它的代码在哪里？",
        &history(&["请介绍一下 Partial FC"]),
        5,
        MIN_SCORE,
    );
    let got: Vec<&str> = r
        .hits
        .iter()
        .map(|h| index.kb().documents[h.doc as usize].id.as_str())
        .collect();
    for id in [
        "pub_partial_fc_iccvw",
        "pub_partial_fc_cvpr",
        "project_insightface",
    ] {
        assert!(got.contains(&id), "{got:?}");
    }
    assert_eq!(r.query, "请介绍一下 Partial FC\n它的代码在哪里？");
}

/// (earlier question, self-contained new question, must be retrieved, must not be)
const NEW_TOPICS: &[(&str, &str, &str, &[&str])] = &[
    (
        "请介绍一下 Partial FC",
        "What is Unicom?",
        "pub_unicom",
        &["pub_partial_fc_iccvw", "pub_partial_fc_cvpr"],
    ),
    (
        "请介绍一下 Partial FC",
        "LLaVA-OneVision-1.5 是什么？",
        "project_llava_onevision",
        &["pub_partial_fc_iccvw", "pub_partial_fc_cvpr"],
    ),
    (
        "What is RWKV-CLIP?",
        "ORID 是做什么的？",
        "pub_orid",
        &["pub_rwkv_clip"],
    ),
    (
        "InsightFace 有多少 star？",
        "Tell me about the StreamAgent paper",
        "pub_streamagent",
        &["project_insightface"],
    ),
    (
        "介绍一下 Unicom",
        "How many stars does InsightFace have?",
        "project_insightface",
        &["pub_unicom", "project_unicom"],
    ),
    (
        "LLaVA-OneVision-1.5 是什么？",
        "RWKV-CLIP 是做什么的？",
        "pub_rwkv_clip",
        &["project_llava_onevision", "pub_llava_onevision_1_5"],
    ),
    (
        "What is Partial FC?",
        "他做过哪些文档图像矫正的工作？",
        "pub_forcennet",
        &["pub_partial_fc_iccvw", "pub_partial_fc_cvpr"],
    ),
];

#[test]
fn self_contained_new_questions_do_not_drag_the_old_topic_in() {
    let index = index();
    let mut failures = Vec::new();
    for (earlier, question, wanted, unwanted) in NEW_TOPICS {
        let (got, followup) = ids(&index, &[earlier], question);
        if followup
            || !got.iter().any(|g| g == wanted)
            || got.iter().any(|g| unwanted.contains(&g.as_str()))
        {
            failures.push(format!(
                "{earlier} → {question}: followup={followup}, got {got:?}"
            ));
        }
    }
    assert!(failures.is_empty(), "{failures:#?}");
}

#[test]
fn first_question_is_never_a_follow_up() {
    let index = index();
    let r = retrieve_followup(&index, "它的代码在哪里？", &[], TOP_K, MIN_SCORE);
    assert!(!r.followup);
    assert_eq!(r.query, "它的代码在哪里？");
}
