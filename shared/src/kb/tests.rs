use super::*;
use serde_json::json;

fn problems(v: Value) -> Vec<String> {
    match KnowledgeBase::from_value(&v) {
        Ok(_) => panic!("expected problems"),
        Err(p) => p.0.iter().map(ToString::to_string).collect(),
    }
}

#[test]
fn parses_the_seed_format_with_glossary() {
    let kb = KnowledgeBase::from_value(&json!({
        "documents": [
            {"id": "p1", "type": "publication", "title": "Partial FC", "year": 2021,
             "keywords": ["face recognition"], "paper_url": "https://arxiv.org/abs/2010.05222"},
            {"id": "g1", "type": "github_project", "name": "InsightFace", "stars": "27k+",
             "url": "https://github.com/deepinsight/insightface"},
            {"id": "pg", "type": "page", "title": "About", "content": "Hello", "lab": "DeepGlint",
             "count": 3}
        ],
        "glossary": {"安翔": ["xiang an"], "格灵深瞳": "deepglint"}
    }))
    .unwrap();
    assert_eq!(kb.documents.len(), 3);
    assert_eq!(kb.documents[0].year.as_deref(), Some("2021"));
    assert_eq!(kb.documents[1].display_title(), "InsightFace");
    assert_eq!(kb.documents[1].kind(), DocKind::GithubProject);
    assert_eq!(
        kb.documents[2].extra,
        vec![("lab".to_string(), "DeepGlint".to_string())]
    );
    assert_eq!(
        kb.glossary[1],
        ("格灵深瞳".to_string(), vec!["deepglint".to_string()])
    );
}

#[test]
fn accepts_a_bare_array_of_documents() {
    let kb =
        KnowledgeBase::from_value(&json!([{"id": "a", "type": "note", "title": "T"}])).unwrap();
    assert_eq!(kb.documents[0].kind(), DocKind::Page);
    assert!(kb.glossary.is_empty());
}

#[test]
fn lists_every_problem_with_its_path() {
    let got = problems(json!({
        "documents": [
            {"id": "a", "type": "publication"},
            {"id": "a", "type": "page", "title": "x"},
            {"type": "page", "title": 5},
            {"id": "b", "type": "github_project", "name": "n", "url": "javascript:alert(1)"},
            "not an object",
            {"id": "c", "type": "page", "title": "t", "keywords": ["ok", 3], "year": []}
        ],
        "glossary": {"词": 7}
    }));
    assert_eq!(
        got,
        vec![
            "documents[0].title: is required for type \"publication\"",
            "documents[1].id: duplicate id \"a\" (first used by documents[0])",
            "documents[2].id: is required",
            "documents[2].title: must be a string",
            "documents[3].url: must be an absolute http(s) URL, got \"javascript:alert(1)\"",
            "documents[4]: must be an object",
            "documents[5].year: must be a string or a number",
            "documents[5].keywords[1]: must be a string",
            "glossary.词: must be a string or an array of strings",
        ]
    );
}

#[test]
fn duplicate_ids_name_the_first_use() {
    let got = problems(json!([
        {"id": "a", "type": "page", "title": "x"},
        {"id": "a", "type": "page", "title": "y"}
    ]));
    assert_eq!(
        got,
        vec!["documents[1].id: duplicate id \"a\" (first used by documents[0])"]
    );
}

#[test]
fn rejects_wrong_top_level_shapes_and_empty_knowledge_bases() {
    assert_eq!(
        problems(json!(3)),
        vec![": must be an object with \"documents\" or an array of documents"]
    );
    assert_eq!(problems(json!({})), vec!["documents: is required"]);
    assert_eq!(
        problems(json!({"documents": {}})),
        vec!["documents: must be an array of documents"]
    );
    assert_eq!(
        problems(json!([])),
        vec!["documents: must hold at least one document"]
    );
}

#[test]
fn invalid_json_is_reported_with_its_origin() {
    let err = KnowledgeBase::from_json_str("{\"documents\": [", "kb.json").unwrap_err();
    assert!(
        err.to_string().starts_with("invalid JSON in kb.json"),
        "{err}"
    );
}

#[test]
fn the_sample_knowledge_base_is_valid() {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../knowledge_base.json");
    let kb = KnowledgeBase::load_file(&path).unwrap();
    assert!(kb.documents.len() >= 26);
}

#[test]
fn authors_may_be_a_string_or_an_array_of_names() {
    let kb = KnowledgeBase::from_value(&json!([
        {"id": "s", "type": "publication", "title": "A", "authors": "Xiang An, Jiankang Deng"},
        {"id": "a", "type": "publication", "title": "B", "authors": ["Xiang An", " Jiankang Deng ", ""]},
        {"id": "e", "type": "publication", "title": "C", "authors": []}
    ]))
    .unwrap();
    let authors: Vec<Option<&str>> = kb.documents.iter().map(|d| d.authors.as_deref()).collect();
    assert_eq!(
        authors,
        vec![
            Some("Xiang An, Jiankang Deng"),
            Some("Xiang An, Jiankang Deng"),
            None
        ]
    );
    // The names are indexed either way.
    assert!(kb.documents[1].metadata_text().contains("Jiankang Deng"));
}

#[test]
fn authors_of_another_shape_say_what_is_accepted() {
    let got = problems(json!([
        {"id": "n", "type": "publication", "title": "A", "authors": 3},
        {"id": "o", "type": "publication", "title": "B", "authors": {"first": "Xiang An"}},
        {"id": "m", "type": "publication", "title": "C", "authors": ["Xiang An", 7, null]}
    ]));
    assert_eq!(
        got,
        vec![
            "documents[0].authors: must be a string or an array of strings",
            "documents[1].authors: must be a string or an array of strings",
            "documents[2].authors[1]: must be a string",
            "documents[2].authors[2]: must be a string",
        ]
    );
}
