//! Property tests of the input parsers and the tokenizer: generated inputs, checked against
//! what they were generated from (the SSE parser's properties are unit tests in
//! `llm/sse.rs`, since the parser is internal). Case counts are kept small so the suite
//! stays fast; `PROPTEST_CASES=10000` runs a deeper search locally.
#![allow(clippy::unwrap_used)] // generated inputs are valid by construction

use proptest::prelude::*;
use proptest::test_runner::Config;
use serde_json::{json, Map, Value};
use shared::chat::{ChatConfig, ChatRequest};
use shared::edge::ApiError;
use shared::retrieval::{fold_char, is_han, runs, Analyzer, Lexicon, Script};
use shared::{ChatMessage, Error, KnowledgeBase, Retriever, Role, SearchIndex};

fn cases(n: u32) -> Config {
    Config {
        cases: n,
        // Failures are reported with their minimal input; no regression files in the tree.
        failure_persistence: None,
        ..Config::default()
    }
}

/// Text a visitor might type: any Unicode, with extra weight on Han, Latin, RTL scripts,
/// emoji, full-width forms and control characters.
fn visitor_text() -> impl Strategy<Value = String> {
    let piece = prop_oneof![
        any::<char>().prop_map(String::from),
        "[a-zA-Z0-9 ]{1,8}",
        "[\u{4e00}-\u{9fff}]{1,4}",
        "[\u{0590}-\u{06ff} ]{1,6}",
        "[\u{1f300}-\u{1f6ff}\u{200d}\u{fe0f}]{1,3}",
        "[\u{ff01}-\u{ff5e}\u{3000}]{1,4}",
        "[\u{0}-\u{1f}\u{7f}\u{200b}-\u{200f}\u{202a}-\u{202e}]{1,3}",
        Just("人脸识别".to_owned()),
        Just("安翔".to_owned()),
        Just("LLaVA".to_owned()),
    ];
    prop::collection::vec(piece, 0..12).prop_map(|p| p.concat())
}

fn sample_index() -> &'static SearchIndex {
    static INDEX: std::sync::OnceLock<SearchIndex> = std::sync::OnceLock::new();
    INDEX.get_or_init(|| {
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../knowledge_base.json");
        SearchIndex::load_file(&path).unwrap()
    })
}

// ------------------------------------------------------------------ tokenizer and retrieval

proptest! {
    #![proptest_config(cases(256))]

    #[test]
    fn runs_keep_exactly_the_folded_letters_digits_and_han(text in visitor_text()) {
        let runs = runs(&text);
        for run in &runs {
            prop_assert!(!run.text.is_empty());
            for c in run.text.chars() {
                match run.script {
                    Script::Han => prop_assert!(is_han(c), "{c:?} in a Han run"),
                    Script::Latin => prop_assert!(c.is_alphanumeric() && !is_han(c), "{c:?}"),
                }
            }
        }
        let kept: String = runs.iter().map(|r| r.text.as_str()).collect();
        let expected: String = text
            .chars()
            .map(fold_char)
            .filter(|&c| is_han(c) || c.is_alphanumeric())
            .collect();
        prop_assert_eq!(kept, expected);
    }

    #[test]
    fn terms_are_nonempty_and_han_terms_are_unigrams_or_bigrams(text in visitor_text()) {
        let analyzer = Analyzer::new();
        for term in analyzer.terms(&text) {
            prop_assert!(!term.is_empty());
            if term.chars().any(is_han) {
                prop_assert!(term.chars().count() <= 2 && term.chars().all(is_han), "{term}");
            }
            if term.is_ascii() {
                prop_assert!(!term.chars().any(|c| c.is_ascii_uppercase()), "{term}");
            }
        }
    }

    #[test]
    fn segmentation_covers_every_han_run_in_order(text in "[\u{4e00}-\u{9fff}人脸识别安翔聚类判别的]{1,16}") {
        let lexicon = Lexicon::new(&[("安翔".into(), vec!["xiang an".into()])]);
        let words: Vec<String> = lexicon.expand(&text).into_iter().map(|e| e.word).collect();
        prop_assert!(words.iter().all(|w| !w.is_empty()));
        prop_assert_eq!(words.concat(), text);
    }

    #[test]
    fn search_returns_at_most_k_sorted_finite_distinct_hits(query in visitor_text(), k in 0usize..60) {
        let index = sample_index();
        let (terms, ranked) = index.rank(&query, k, 0.0);
        for t in &terms {
            prop_assert!(t.weight.is_finite() && t.weight > 0.0, "{t:?}");
        }
        prop_assert!(ranked.len() <= k);
        for (i, r) in ranked.iter().enumerate() {
            prop_assert!(r.score.is_finite() && r.score > 0.0, "{r:?}");
            prop_assert!((r.doc as usize) < index.kb().documents.len());
            prop_assert!(ranked[..i].iter().all(|p| p.doc != r.doc && p.score >= r.score));
        }
        let response = index.search(&query, k, 0.0);
        prop_assert_eq!(response.hits.len(), ranked.len());
        prop_assert!(serde_json::to_string(&response).is_ok());
    }

    #[test]
    fn whether_a_question_is_answered_does_not_depend_on_how_many_hits_are_asked(
        query in visitor_text(),
    ) {
        let index = sample_index();
        let one = index.search(&query, 1, 0.0).hits.is_empty();
        prop_assert_eq!(index.search(&query, 10, 0.0).hits.is_empty(), one);
        prop_assert_eq!(index.search(&query, 50, 0.0).hits.is_empty(), one);
    }

    #[test]
    fn case_and_full_width_forms_do_not_change_a_query(word in "[a-zA-Z0-9]{1,12}( [a-zA-Z0-9]{1,12}){0,3}") {
        let index = sample_index();
        let full_width: String = word
            .chars()
            .map(|c| if c == ' ' { '\u{3000}' } else { char::from_u32(c as u32 + 0xFEE0).unwrap() })
            .collect();
        let base = index.retriever().analyze_query(&word.to_lowercase());
        prop_assert_eq!(&index.retriever().analyze_query(&word.to_uppercase()), &base);
        prop_assert_eq!(&index.retriever().analyze_query(&full_width), &base);
    }

    #[test]
    fn a_word_only_one_document_holds_finds_that_document(
        docs in prop::collection::vec("[a-z]{3,9}( [a-z]{3,9}){0,8}", 2..12),
        pick in any::<prop::sample::Index>(),
    ) {
        let target = pick.index(docs.len());
        // The documents are made of letters only, so a word with a digit is in none of them.
        let marker = "qz7marker";
        let texts = docs.iter().enumerate().map(|(i, d)| {
            let text = if i == target { format!("{d} {marker}") } else { d.clone() };
            vec![text]
        });
        let retriever = Retriever::build(texts, &[]);
        let (_, ranked) = retriever.search(marker, 3, 0.0);
        prop_assert_eq!(ranked.len(), 1, "{:?}", ranked);
        prop_assert_eq!(ranked[0].doc as usize, target);
    }
}

// ------------------------------------------------------------------ chat requests

/// Any JSON value, nested a few levels, with the chat fields' names as likely keys.
fn any_json() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::from),
        any::<i64>().prop_map(Value::from),
        any::<u64>().prop_map(Value::from),
        any::<f64>().prop_map(|f| json!(f)),
        visitor_text().prop_map(Value::from),
        Just(json!("user")),
        Just(json!("assistant")),
        Just(json!("system")),
    ];
    let key = prop_oneof![
        Just("message".to_owned()),
        Just("messages".to_owned()),
        Just("query".to_owned()),
        Just("role".to_owned()),
        Just("content".to_owned()),
        Just("session_id".to_owned()),
        Just("request_id".to_owned()),
        Just("stream".to_owned()),
        Just("top_k".to_owned()),
        "[a-z_]{1,6}",
    ];
    leaf.prop_recursive(4, 48, 6, move |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..6).prop_map(Value::Array),
            prop::collection::vec((key.clone(), inner), 0..6)
                .prop_map(|kv| Value::Object(kv.into_iter().collect::<Map<_, _>>())),
        ]
    })
}

/// Text that is a valid message: not blank, within the limit once trimmed.
fn message_text() -> impl Strategy<Value = String> {
    (
        visitor_text(),
        "[a-zA-Z\u{4e00}-\u{9fff}]{1,3}",
        visitor_text(),
    )
        .prop_map(|(a, core, b)| format!("{a}{core}{b}"))
}

fn id() -> impl Strategy<Value = String> {
    "[A-Za-z0-9._:-]{1,128}"
}

/// A valid request and the JSON a client would send for it.
fn valid_request() -> impl Strategy<Value = (ChatRequest, Value)> {
    (
        prop::collection::vec(message_text(), 0..8),
        message_text(),
        prop::option::of(id()),
        any::<bool>(),
        prop::option::of(1usize..=10),
        prop::option::of(id()),
        any::<bool>(),
    )
        .prop_map(
            |(turns, question, session_id, stream, top_k, request_id, single)| {
                let history: Vec<ChatMessage> = turns
                    .iter()
                    .enumerate()
                    .map(|(i, t)| {
                        let role = if i % 2 == 0 {
                            Role::User
                        } else {
                            Role::Assistant
                        };
                        ChatMessage::new(role, t.trim())
                    })
                    .collect();
                let mut body = json!({"stream": stream, "top_k": top_k, "session_id": session_id,
                "request_id": request_id, "widget_version": "2"});
                if history.is_empty() && single {
                    body["message"] = json!(question);
                } else {
                    let mut messages: Vec<Value> = history
                        .iter()
                        .map(|m| json!({"role": m.role.as_str(), "content": m.content}))
                        .collect();
                    messages.push(json!({"role": "user", "content": question}));
                    body["messages"] = Value::Array(messages);
                }
                let request = ChatRequest {
                    question: question.trim().to_owned(),
                    history,
                    session_id,
                    stream,
                    top_k,
                    request_id,
                    proof: None,
                };
                (request, body)
            },
        )
}

proptest! {
    #![proptest_config(cases(256))]

    #[test]
    fn any_json_body_is_parsed_or_refused_with_a_400(value in any_json()) {
        let body = serde_json::to_vec(&value).unwrap();
        if let Err(e) = ChatRequest::from_json(&body, &ChatConfig::default()) {
            prop_assert!(matches!(e, Error::InvalidInput(_)), "{e:?}");
            prop_assert_eq!(ApiError::from(&e).status, 400);
        }
        // The same for a chat-shaped object holding the value in each field.
        for key in ["message", "messages", "top_k", "session_id", "stream"] {
            let body = json!({"message": "q", (key): value.clone()}).to_string();
            if let Err(e) = ChatRequest::from_json(body.as_bytes(), &ChatConfig::default()) {
                prop_assert_eq!(ApiError::from(&e).status, 400);
            }
        }
    }

    #[test]
    fn any_bytes_are_parsed_or_refused_with_a_400(bytes in prop::collection::vec(any::<u8>(), 0..256)) {
        if let Err(e) = ChatRequest::from_json(&bytes, &ChatConfig::default()) {
            prop_assert_eq!(ApiError::from(&e).status, 400);
        }
    }

    #[test]
    fn valid_requests_parse_to_what_was_sent((expected, body) in valid_request()) {
        let parsed = ChatRequest::from_json(body.to_string().as_bytes(), &ChatConfig::default());
        prop_assert_eq!(parsed.ok(), Some(expected));
    }
}

// ------------------------------------------------------------------ knowledge bases

/// A valid document (as JSON) with the given unique id.
fn document(id: String) -> impl Strategy<Value = Value> {
    let text = "[a-zA-Z\u{4e00}-\u{9fff}][a-zA-Z0-9 ,.\u{4e00}-\u{9fff}]{0,40}";
    let url = "https?://[a-z]{1,10}\\.example(/[a-z0-9]{1,8}){0,2}";
    (
        prop_oneof![
            Just("publication"),
            Just("github_project"),
            Just("page"),
            Just("talk")
        ],
        text,
        prop::option::of(url),
        prop::option::of(prop_oneof![
            (1990u32..2030).prop_map(Value::from),
            "[0-9]{4}".prop_map(Value::from)
        ]),
        // Long enough, when repeated, to be split into passages.
        prop::option::of((visitor_text(), 0usize..200).prop_map(|(t, n)| vec![t; n].join(". "))),
        prop::collection::vec("[a-z]{2,8}", 0..3),
        prop::option::of(visitor_text()),
    )
        .prop_map(
            move |(doc_type, title, url, year, content, keywords, extra)| {
                let title_key = if doc_type == "github_project" {
                    "name"
                } else {
                    "title"
                };
                let mut doc = json!({"id": id.clone(), "type": doc_type, title_key: title,
                    "keywords": keywords});
                if let Some(u) = url {
                    doc["url"] = json!(u);
                }
                if let Some(y) = year {
                    doc["year"] = y;
                }
                if let Some(c) = content {
                    doc["content"] = json!(c);
                }
                if let Some(e) = extra {
                    doc["venue_note"] = json!(e);
                }
                doc
            },
        )
}

fn valid_kb() -> impl Strategy<Value = Value> {
    prop::collection::vec("[A-Za-z0-9_\u{4e00}-\u{9fff}-]{1,12}", 1..8)
        .prop_flat_map(|stems| {
            let docs: Vec<_> = stems
                .into_iter()
                .enumerate()
                .map(|(i, s)| document(format!("{i}-{s}")))
                .collect();
            (docs, any::<bool>())
        })
        .prop_map(|(docs, bare)| {
            if bare {
                Value::Array(docs)
            } else {
                json!({"documents": docs, "glossary": {"安翔": ["xiang an"], "聚类": "clustering"}})
            }
        })
}

/// One way to break a valid document, and the problem path it must be reported at.
#[derive(Debug, Clone, Copy)]
enum Corruption {
    RemoveId,
    NumericId,
    ControlInId,
    EmptyType,
    TitleNotString,
    JavascriptUrl,
    KeywordsNotArray,
    DuplicateId,
    NotAnObject,
}

fn corrupt(doc: &mut Value, how: Corruption, first_id: &Value) -> &'static str {
    let title_key = if doc["type"] == "github_project" {
        "name"
    } else {
        "title"
    };
    match how {
        Corruption::RemoveId => {
            doc.as_object_mut().unwrap().remove("id");
            "id"
        }
        Corruption::NumericId => {
            doc["id"] = json!(7);
            "id"
        }
        Corruption::ControlInId => {
            doc["id"] = json!("a\u{0}b");
            "id"
        }
        Corruption::EmptyType => {
            doc["type"] = json!(" ");
            "type"
        }
        Corruption::TitleNotString => {
            doc[title_key] = json!(42);
            title_key
        }
        Corruption::JavascriptUrl => {
            doc["url"] = json!("javascript:alert(1)");
            "url"
        }
        Corruption::KeywordsNotArray => {
            doc["keywords"] = json!("a, b");
            "keywords"
        }
        Corruption::DuplicateId => {
            doc["id"] = first_id.clone();
            "id"
        }
        Corruption::NotAnObject => {
            *doc = json!(["not", "a", "document"]);
            ""
        }
    }
}

proptest! {
    #![proptest_config(cases(64))]

    #[test]
    fn generated_valid_knowledge_bases_validate_and_index(kb in valid_kb()) {
        let parsed = KnowledgeBase::from_value(&kb);
        prop_assert!(parsed.is_ok(), "{:?}", parsed.err());
        let parsed = parsed.unwrap();
        let docs = kb.as_array().or_else(|| kb["documents"].as_array()).unwrap();
        let ids: Vec<&str> = parsed.documents.iter().map(|d| d.id.as_str()).collect();
        let expected: Vec<&str> = docs.iter().map(|d| d["id"].as_str().unwrap()).collect();
        prop_assert_eq!(ids, expected);
        let index = SearchIndex::new(parsed, "v");
        prop_assert_eq!(index.retriever().documents(), docs.len());
        for doc in index.kb().documents.iter() {
            let (_, ranked) = index.rank(doc.display_title(), 3, 0.0);
            prop_assert!(ranked.len() <= 3);
        }
    }

    #[test]
    fn a_single_corruption_is_the_one_problem_reported_at_its_path(
        kb in valid_kb(),
        which in any::<prop::sample::Index>(),
        how in prop_oneof![
            Just(Corruption::RemoveId), Just(Corruption::NumericId), Just(Corruption::ControlInId),
            Just(Corruption::EmptyType), Just(Corruption::TitleNotString),
            Just(Corruption::JavascriptUrl), Just(Corruption::KeywordsNotArray),
            Just(Corruption::DuplicateId), Just(Corruption::NotAnObject),
        ],
    ) {
        let mut kb = kb;
        let docs = match kb.as_array_mut() {
            Some(docs) => docs,
            None => kb["documents"].as_array_mut().unwrap(),
        };
        let first_id = docs[0]["id"].clone();
        // A duplicate needs another document to copy its id from.
        let i = match how {
            Corruption::DuplicateId if docs.len() < 2 => return Ok(()),
            Corruption::DuplicateId => 1 + which.index(docs.len() - 1),
            _ => which.index(docs.len()),
        };
        let field = corrupt(&mut docs[i], how, &first_id);
        let expected = if field.is_empty() {
            format!("documents[{i}]")
        } else {
            format!("documents[{i}].{field}")
        };
        let problems = KnowledgeBase::from_value(&kb).err().map(|p| p.0).unwrap_or_default();
        let paths: Vec<&str> = problems.iter().map(|p| p.path.as_str()).collect();
        prop_assert_eq!(paths, vec![expected.as_str()], "{:?}", problems);
    }
}

/// Found by the property above: this query had a hit at k = 2 and none at k = 1, because
/// the no-answer rule looked only at the hits asked for.
#[test]
fn a_question_answered_at_two_hits_is_answered_at_one() {
    let index = sample_index();
    let query = "LLaVALLaVA餾LLaVA";
    assert_eq!(index.search(query, 2, 0.0).hits.len(), 2);
    assert_eq!(index.search(query, 1, 0.0).hits.len(), 1);
}
