//! The grounding check on answers written from the sample knowledge base's own passages
//! (`data/grounding_answers.json`): how often a faithful sentence is flagged (the false
//! positive rate, issue 14), and whether each answer with an invented claim is caught.
//! Every answer goes through the real path: the question is retrieved with the deployed
//! defaults, its hits formatted as the prompt's blocks, and the answer checked against them.
#![allow(clippy::unwrap_used, clippy::expect_used)] // fixtures that fail to load should fail loudly

use serde::Deserialize;
use shared::grounding::{check, Grounding};
use shared::prompt::context_blocks;
use shared::SearchIndex;

/// The deployed defaults (`TOP_K`, `MIN_SCORE`).
const TOP_K: usize = 3;
const MIN_SCORE: f32 = 0.5;

#[derive(Deserialize)]
struct Answers {
    faithful: Vec<Case>,
    invented: Vec<Case>,
}

#[derive(Deserialize)]
struct Case {
    q: String,
    a: String,
}

fn fixtures() -> (SearchIndex, Answers) {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    let index = SearchIndex::load_file(&root.join("../knowledge_base.json")).unwrap();
    let text = std::fs::read_to_string(root.join("tests/data/grounding_answers.json")).unwrap();
    (index, serde_json::from_str(&text).unwrap())
}

/// Retrieves the case's question and checks its answer, `{doc_id}` replaced by the marker
/// of that entry's block.
fn grade(index: &SearchIndex, case: &Case) -> Grounding {
    let (_, hits) = index.rank(&case.q, TOP_K, MIN_SCORE);
    let blocks = context_blocks(index, &hits);
    let mut answer = case.a.clone();
    for (n, hit) in hits.iter().enumerate() {
        let id = &index.kb().documents[hit.doc as usize].id;
        answer = answer.replace(&format!("{{{id}}}"), &format!("[{}]", n + 1));
    }
    assert!(
        !answer.contains('{'),
        "{:?}: the answer cites an entry not retrieved: {answer}",
        case.q
    );
    check(&answer, &blocks, index.retriever())
}

#[test]
fn faithful_answers_are_rarely_flagged() {
    let (index, answers) = fixtures();
    assert!(answers.faithful.len() >= 30);
    let (mut sentences, mut flagged) = (0, 0);
    for case in &answers.faithful {
        let g = grade(&index, case);
        assert!(g.sentences > 0, "{:?}: no claim found", case.q);
        assert_eq!(g.uncited_sentences, 0, "{:?}: {g:?}", case.q);
        sentences += g.sentences;
        let bad = g
            .unsupported_sentences
            .max(u32::from(g.invalid_citations > 0));
        if bad > 0 {
            eprintln!("flagged: {:?} {g:?}", case.q);
        }
        flagged += bad;
    }
    let rate = f64::from(flagged) / f64::from(sentences);
    eprintln!(
        "grounding false positives: {flagged} of {sentences} faithful sentences ({:.1}%) in {} answers",
        rate * 100.0,
        answers.faithful.len()
    );
    assert!(rate <= 0.10, "false-positive rate {rate:.3}");
}

#[test]
fn answers_with_an_invented_claim_are_flagged() {
    let (index, answers) = fixtures();
    let missed: Vec<&str> = answers
        .invented
        .iter()
        .filter(|case| !grade(&index, case).flagged())
        .map(|case| case.a.as_str())
        .collect();
    eprintln!(
        "grounding caught {} of {} invented claims",
        answers.invented.len() - missed.len(),
        answers.invented.len()
    );
    assert!(missed.is_empty(), "not flagged: {missed:#?}");
}
