use super::*;
use serde_json::json;

/// [`KnowledgeBase::from_value`], checked against reading the same JSON text one document
/// at a time ([`KnowledgeBase::from_json_str`]): the two give the same knowledge base or
/// the same problems.
fn parsed(v: &Value) -> std::result::Result<KnowledgeBase, Problems> {
    let from_value = KnowledgeBase::from_value(v);
    let listed = |p: &Problems| p.0.iter().map(ToString::to_string).collect::<Vec<_>>();
    match (
        &from_value,
        KnowledgeBase::from_json_str(&v.to_string(), "t"),
    ) {
        (Ok(kb), Ok(read)) => assert_eq!(kb, &read),
        (Err(p), Err(Error::InvalidKb(read))) => assert_eq!(listed(p), listed(&read)),
        (value, read) => panic!("from a value: {value:?}; read from text: {read:?}"),
    }
    from_value
}

fn problems(v: Value) -> Vec<String> {
    match parsed(&v) {
        Ok(_) => panic!("expected problems"),
        Err(p) => p.0.iter().map(ToString::to_string).collect(),
    }
}

/// The problems of `v`, none when it is valid.
fn problems_or_none(v: Value) -> Vec<String> {
    parsed(&v)
        .err()
        .map_or_else(Vec::new, |p| p.0.iter().map(ToString::to_string).collect())
}

#[test]
fn parses_the_seed_format_with_glossary() {
    let kb = parsed(&json!({
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
fn an_unknown_array_of_strings_gives_one_extra_value_per_string() {
    let kb = parsed(&json!([
        {"id": "pg", "type": "page", "title": "About", "tag": ["rust", "wasm"],
         "mixed": ["a", 1], "lab": "X"}
    ]))
    .unwrap();
    let values = |k: &str| -> Vec<&str> {
        kb.documents[0]
            .extra
            .iter()
            .filter(|(key, _)| key == k)
            .map(|(_, v)| v.as_str())
            .collect()
    };
    assert_eq!(values("tag"), ["rust", "wasm"]);
    assert_eq!(values("lab"), ["X"]);
    assert!(values("mixed").is_empty());
}

#[test]
fn the_content_hash_is_kept_out_of_the_indexed_and_shown_fields() {
    let kb = parsed(&json!([
        {"id": "pg", "type": "page", "title": "About", "content_hash": "sha256:00ff", "lab": "X"}
    ]))
    .unwrap();
    assert_eq!(
        kb.documents[0].extra,
        vec![("lab".to_string(), "X".to_string())]
    );
    assert!(!kb.documents[0].metadata_text().contains("00ff"));
}

#[test]
fn accepts_a_bare_array_of_documents() {
    let kb = parsed(&json!([{"id": "a", "type": "note", "title": "T"}])).unwrap();
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
fn links_that_hide_their_host_or_break_out_of_markup_are_refused() {
    let bad = [
        "https://user:pass@site.example/",
        "https://trusted.example@evil.example/",
        "https://site.example/\"onmouseover=\"x",
        "https://site.example/'x'",
        "https://site.example/<script>",
        "https://site.example\\@evil.example/",
        "https://site.example/`x`",
    ];
    for url in bad {
        let got = problems_or_none(json!([{"id": "a", "type": "page", "title": "t", "url": url}]));
        assert_eq!(got.len(), 1, "{url}: {got:?}");
        assert!(
            got[0].starts_with("documents[0].url: must not"),
            "{url}: {got:?}"
        );
    }
    // An @ after the host (a path, a query) is ordinary.
    for url in [
        "https://site.example/@ada",
        "https://site.example/p?mail=a@b.example",
        "https://site.example/a%22b",
    ] {
        let got = problems_or_none(json!([{"id": "a", "type": "page", "title": "t", "url": url}]));
        assert!(got.is_empty(), "{url}: {got:?}");
    }
}

#[test]
fn ids_hold_letters_digits_and_path_punctuation_only() {
    for id in [
        "pub_a",
        "docs/guide/install",
        "页面_关于",
        "a.b:c@d+e#f~g-h",
    ] {
        let got = problems_or_none(json!([{"id": id, "type": "page", "title": "t"}]));
        assert!(got.is_empty(), "{id}: {got:?}");
    }
    for id in [
        "a b",
        "a\"b",
        "<b>",
        "a\\b",
        "a'b",
        "a\u{202e}b",
        "a\u{200b}b",
        "a&b",
    ] {
        let got = problems_or_none(json!([{"id": id, "type": "page", "title": "t"}]));
        assert_eq!(got.len(), 1, "{id:?}: {got:?}");
        assert!(got[0].contains("has characters an id may not"), "{got:?}");
    }
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
    let kb = parsed(&json!([
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

#[test]
fn read_from_text_a_repeated_key_counts_as_its_last_value_and_others_are_ignored() {
    let text = r#"{"documents": [{"id": "a"}], "note": {"x": [1, 2]},
        "documents": [{"id": "b", "type": "page", "title": "B"}], "glossary": null}"#;
    let kb = KnowledgeBase::from_json_str(text, "t").unwrap();
    assert_eq!(kb.documents.len(), 1);
    assert_eq!(kb.documents[0].id, "b");
    let text = r#"{"documents": [{"id": "b", "type": "page", "title": "B"}], "documents": 3}"#;
    let err = KnowledgeBase::from_json_str(text, "t").unwrap_err();
    assert_eq!(
        err.to_string(),
        Error::InvalidKb(Problems(vec![Problem::new(
            "documents",
            "must be an array of documents"
        )]))
        .to_string()
    );
}

#[test]
fn read_from_text_trailing_garbage_is_invalid_json() {
    let err = KnowledgeBase::from_json_str(
        r#"[{"id": "a", "type": "page", "title": "A"}] x"#,
        "kb.json",
    )
    .unwrap_err();
    assert!(
        err.to_string().starts_with("invalid JSON in kb.json"),
        "{err}"
    );
}

#[test]
fn linked_from_is_a_count_of_pages_neither_indexed_nor_shown() {
    let kb = parsed(&json!([
        {"id": "a", "type": "page", "title": "Commit", "linked_from": 42},
        {"id": "b", "type": "page", "title": "Tree", "linked_from": 0},
        {"id": "c", "type": "page", "title": "Notes", "linked_from": null}
    ]))
    .unwrap();
    let counts: Vec<Option<u32>> = kb.documents.iter().map(|d| d.linked_from).collect();
    assert_eq!(counts, [Some(42), Some(0), None]);
    let d = &kb.documents[0];
    assert!(d.extra.is_empty(), "not an extra field: {:?}", d.extra);
    assert!(!d.metadata_text().contains("42"), "not indexed");

    let p = problems(json!([
        {"id": "a", "type": "page", "title": "T", "linked_from": -1},
        {"id": "b", "type": "page", "title": "T", "linked_from": 2.5},
        {"id": "c", "type": "page", "title": "T", "linked_from": "many"},
        {"id": "d", "type": "page", "title": "T", "linked_from": 4_000_000_000u64}
    ]));
    assert_eq!(p.len(), 4, "{p:?}");
    assert!(
        p[0].contains("documents[0].linked_from") && p[0].contains("whole number"),
        "{p:?}"
    );
    assert!(
        p[1].contains("documents[1].linked_from") && p[1].contains("2.5"),
        "{p:?}"
    );
    assert!(
        p[2].contains("documents[2].linked_from: must be a number"),
        "{p:?}"
    );
    assert!(
        p[3].contains("documents[3].linked_from") && p[3].contains("4000000000"),
        "{p:?}"
    );
}

#[test]
fn kind_must_be_known_and_alternates_must_be_links() {
    let kb = parsed(&json!([{"id": "a", "type": "page", "title": "Changelog",
        "kind": "release-notes", "alternates": ["https://ex.org/v1/changelog/"]}]))
    .unwrap();
    let d = &kb.documents[0];
    assert_eq!(d.kind.as_deref(), Some("release-notes"));
    assert_eq!(d.alternates, ["https://ex.org/v1/changelog/"]);
    assert!(
        d.extra.is_empty(),
        "neither is an extra field: {:?}",
        d.extra
    );
    assert!(
        !d.metadata_text().contains("release-notes"),
        "kind is not indexed"
    );
    assert!(
        !d.metadata_text().contains("/v1/"),
        "alternates are not indexed"
    );

    let p = problems(json!([{"id": "a", "type": "page", "title": "T",
        "kind": "release_notes", "alternates": ["javascript:alert(1)", 3]}]));
    assert!(
        p[0].contains("documents[0].kind") && p[0].contains("release-notes"),
        "{p:?}"
    );
    assert!(p[1].contains("documents[0].alternates[0]"), "{p:?}");
    assert!(
        p[2].contains("documents[0].alternates[1]: must be a string"),
        "{p:?}"
    );
    let p = problems(
        json!([{"id": "a", "type": "page", "title": "T", "alternates": "https://ex.org/"}]),
    );
    assert!(p[0].contains("must be an array of URLs"), "{p:?}");
}
