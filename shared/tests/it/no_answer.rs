//! Questions the sample knowledge base (a researcher's homepage) cannot answer get no
//! hits, in Chinese and in English, while its own questions keep theirs: the minimum
//! coverage of [`shared::Retriever::search`] decides, not a raw score threshold.
#![allow(clippy::unwrap_used)]

use shared::SearchIndex;
use std::path::Path;

/// The chat's default minimum BM25 score (`MIN_SCORE`).
const MIN_SCORE: f32 = 0.5;

fn index() -> SearchIndex {
    SearchIndex::load_file(&Path::new(env!("CARGO_MANIFEST_DIR")).join("../knowledge_base.json"))
        .unwrap()
}

/// Cooking, sports, weather, celebrities, travel, health, shopping, finance...
const OUT_OF_DOMAIN: &[&str] = &[
    "香蕉面包的做法",
    "红烧肉怎么做才好吃？",
    "明天北京会下雨吗？",
    "今天上海的天气怎么样",
    "周杰伦的新歌叫什么名字？",
    "梅西在哪个俱乐部踢球？",
    "世界杯冠军是哪支球队",
    "去日本旅游需要办签证吗？",
    "感冒发烧吃什么药好得快",
    "比特币现在多少钱一个",
    "附近有什么好吃的火锅店",
    "怎么减肥最有效",
    "iPhone 手机电池不耐用怎么办",
    "How do I bake banana bread?",
    "What's the weather like in Paris tomorrow?",
    "Who won the NBA finals last year?",
    "Best pizza restaurant near me",
    "How much does a flight to Tokyo cost?",
    "Taylor Swift concert tickets",
    "How to lose weight fast",
    "What is the capital of Australia?",
    "Recommend a good romantic comedy movie",
    "How do I change a flat tire on my car?",
    "猫咪不吃饭怎么办",
];

#[test]
fn questions_the_site_cannot_answer_get_no_hits() {
    let index = index();
    let answered: Vec<(&str, Vec<String>)> = OUT_OF_DOMAIN
        .iter()
        .map(|q| {
            let hits = index.search(q, 5, MIN_SCORE).hits;
            (*q, hits.into_iter().map(|h| h.id).collect::<Vec<_>>())
        })
        .filter(|(_, hits)| !hits.is_empty())
        .collect();
    assert!(answered.is_empty(), "{answered:#?}");
}

#[test]
fn questions_the_site_answers_keep_their_hits() {
    let index = index();
    for q in [
        "请介绍一下 Partial FC",
        "人脸识别训练",
        "多模态大模型",
        "What is LLaVA-OneVision-1.5?",
        "安翔发表过哪些论文？",
        "有哪些关于文档图像矫正的工作？",
        "face recognition with millions of identities",
        "他的研究方向是什么",
        "代码开源了吗",
    ] {
        assert!(!index.search(q, 5, MIN_SCORE).hits.is_empty(), "{q}");
    }
}
