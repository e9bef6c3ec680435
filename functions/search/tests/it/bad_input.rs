//! Hostile and unusual input through the search handler (issue 7): bodies that are not
//! UTF-8, numbers no integer holds, deep nesting, bodies far over the limit, control
//! characters, right-to-left text and emoji, in the query string and in POST bodies.
#![allow(clippy::unwrap_used)] // test helpers may panic on broken fixtures

use crate::common;

use common::*;
use lambda_http::Request;
use serde_json::{json, Value};

/// Asserts a rejection: status, code, a message containing `needle` and the request id.
async fn assert_rejected(req: Request, status: u16, code: &str, needle: &str) {
    let (got, body, headers) = call(req).await;
    let message = body["error"]["message"].as_str().unwrap_or_default();
    assert_eq!(
        (got, body["error"]["code"].as_str()),
        (status, Some(code)),
        "{body}"
    );
    assert!(message.contains(needle), "{message:?} lacks {needle:?}");
    assert_eq!(body["error"]["request_id"], EVENT_REQUEST_ID);
    assert_eq!(headers["content-type"], "application/json");
}

/// Searches `query` by GET and by POST; both must answer 200 with the same hits and echo
/// the query (trimmed). Returns the hit ids.
async fn search_both_ways(query: &str) -> Vec<String> {
    let (status, get, _) = call(event("GET", &[("q", query)], None)).await;
    assert_eq!(status, 200, "{get}");
    let body = json!({"query": query}).to_string();
    let (status, post, _) = call(event("POST", &[], Some(&body))).await;
    assert_eq!(status, 200, "{post}");
    assert_eq!(get["query"], query.trim());
    assert_eq!(get["hits"], post["hits"]);
    assert_eq!(get["terms"], post["terms"]);
    get["hits"]
        .as_array()
        .unwrap()
        .iter()
        .map(|h| h["id"].as_str().unwrap().to_owned())
        .collect()
}

#[tokio::test]
async fn a_body_that_is_not_utf8_is_a_400() {
    assert_rejected(
        post_bytes(b"{\"query\": \"caf\xe9\"}"),
        400,
        "invalid_request",
        "must be JSON",
    )
    .await;
    assert_rejected(
        post_bytes(&[0xc3, 0x28, 0xa0, 0xa1]),
        400,
        "invalid_request",
        "must be JSON",
    )
    .await;
    // The same body as valid UTF-8 is answered, so the base64 path itself works.
    let (status, body, _) = call(post_bytes(br#"{"query": "LLaVA"}"#)).await;
    assert_eq!(status, 200, "{body}");
    assert!(!body["hits"].as_array().unwrap().is_empty());
}

#[tokio::test]
async fn percent_encoded_bytes_that_are_not_utf8_become_replacement_characters() {
    // A browser never sends these, but a client can; they decode to U+FFFD, which holds
    // no searchable word.
    let (status, body, _) = call(event_with_raw_query("GET", "q=%FF%FE%C3", None)).await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(body["query"], "\u{FFFD}\u{FFFD}\u{FFFD}");
    assert_eq!(
        (body["hits"].clone(), body["terms"].clone()),
        (json!([]), json!([]))
    );
    // Next to a real word, the word is still found.
    let (status, body, _) = call(event_with_raw_query("GET", "q=%FFLLaVA%FE", None)).await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(body["terms"][0]["term"], "llava");
}

#[tokio::test]
async fn numbers_no_integer_holds_are_a_400() {
    for k in [
        "1e308",
        "-1",
        "18446744073709551616",
        "99999999999999999999999999",
        "0x10",
        "3.0",
        "NaN",
    ] {
        let req = event("GET", &[("q", "LLaVA"), ("k", k)], None);
        assert_rejected(
            req,
            400,
            "invalid_request",
            "k must be a whole number from 1 to 50",
        )
        .await;
    }
    for top_k in ["1e308", "-1", "18446744073709551616", "3.5", "\"3\"", "[3]"] {
        let body = format!(r#"{{"query": "LLaVA", "top_k": {top_k}}}"#);
        let req = event("POST", &[], Some(&body));
        assert_rejected(req, 400, "invalid_request", "k must be").await;
    }
    let req = event("POST", &[], Some(r#"{"query": "LLaVA", "top_k": 1e400}"#));
    assert_rejected(req, 400, "invalid_request", "must be JSON").await;
}

#[tokio::test]
async fn deep_nesting_is_a_400_and_a_deep_body_over_the_limit_a_413() {
    let deep = "[".repeat(60_000);
    assert_rejected(
        event("POST", &[], Some(&deep)),
        400,
        "invalid_request",
        "must be JSON",
    )
    .await;
    let in_query = format!(r#"{{"query": {}1{}}}"#, "[".repeat(500), "]".repeat(500));
    assert_rejected(
        event("POST", &[], Some(&in_query)),
        400,
        "invalid_request",
        "recursion limit",
    )
    .await;
    let over = "[".repeat(100_000);
    assert_rejected(
        event("POST", &[], Some(&over)),
        413,
        "payload_too_large",
        "65536",
    )
    .await;
}

#[tokio::test]
async fn a_10_mb_body_is_a_413() {
    let huge = json!({"query": "x".repeat(10 * 1024 * 1024)}).to_string();
    assert_rejected(
        event("POST", &[], Some(&huge)),
        413,
        "payload_too_large",
        "65536",
    )
    .await;
}

#[tokio::test]
async fn control_characters_are_searched_around_or_refused_when_raw_in_json() {
    let ids = search_both_ways("\u{0}LLaVA\u{7}\u{1b}[0m\u{7f}").await;
    assert!(ids.iter().any(|id| id.contains("llava")), "{ids:?}");
    // Only control characters: a valid query that matches nothing.
    assert!(search_both_ways("\u{0}\u{1}\u{1f}").await.is_empty());
    assert_rejected(
        event("POST", &[], Some("{\"query\": \"a\u{1}b\"}")),
        400,
        "invalid_request",
        "control character",
    )
    .await;
    // Whitespace of any script is no query.
    let blank = event("GET", &[("q", " \t\u{3000}\u{2029}\n")], None);
    assert_rejected(blank, 400, "invalid_request", "query is required").await;
}

#[tokio::test]
async fn right_to_left_text_and_emoji_are_searched_for_their_words() {
    let ids = search_both_ways("ما هو LLaVA؟ 🦙🔥").await;
    assert!(ids.iter().any(|id| id.contains("llava")), "{ids:?}");
    let ids = search_both_ways("\u{202e}InsightFace\u{202c} שלום 👨‍👩‍👧").await;
    assert!(ids.iter().any(|id| id.contains("insightface")), "{ids:?}");
    // Emoji and RTL words alone: answered, nothing found, nothing invented.
    assert!(search_both_ways("🦙🔥👍🏽").await.is_empty());
    let (_, body, _) = call(event("GET", &[("q", "مرحبا 🦙")], None)).await;
    let terms: Vec<Value> = body["terms"].as_array().unwrap().clone();
    assert_eq!(terms, vec![json!({"term": "مرحبا", "weight": 1.0})]);
}

#[tokio::test]
async fn the_longest_query_is_counted_in_characters_not_bytes() {
    // 2000 four-byte emoji are 8000 bytes but 2000 characters: accepted.
    let (status, body, _) = call(event(
        "POST",
        &[],
        Some(&json!({"query": "🔥".repeat(2000)}).to_string()),
    ))
    .await;
    assert_eq!(status, 200, "{body}");
    let over = json!({"query": "🔥".repeat(2001)}).to_string();
    assert_rejected(
        event("POST", &[], Some(&over)),
        400,
        "invalid_request",
        "2001 characters",
    )
    .await;
}

#[tokio::test]
async fn unencoded_utf8_and_stray_percent_signs_in_the_raw_query_are_taken_literally() {
    // curl sends UTF-8 unencoded; a lone `%` escapes nothing and stays as it is.
    for (raw, query) in [("q=LLaVA🦙", "LLaVA🦙"), ("q=50%", "50%"), ("q=a%2", "a%2")] {
        let (status, body, _) = call(event_with_raw_query("GET", raw, None)).await;
        assert_eq!(
            (status, body["query"].as_str()),
            (200, Some(query)),
            "{raw}"
        );
    }
}

/// Runs a function-URL event through what `main` runs: the runtime's adapter behind
/// [`RawQueryGuard`], then the handler. Returns status and JSON body.
async fn through_the_runtime_adapter(raw_query: &str) -> (u16, Value) {
    use lambda_http::request::LambdaRequest;
    use lambda_http::tower::Service;
    use lambda_http::{lambda_runtime::Context, service_fn, Adapter, LambdaEvent};
    use shared::edge::RawQueryGuard;

    let mut ev: Value = serde_json::from_str(GET_EVENT).unwrap();
    ev["rawQueryString"] = json!(raw_query);
    ev.as_object_mut().unwrap().remove("queryStringParameters");
    let payload: LambdaRequest = serde_json::from_value(ev).unwrap();
    let state = state().await;
    let handler = service_fn(|req| search::function_handler(&state, req));
    let mut service = RawQueryGuard(Adapter::from(handler));
    let res = service
        .call(LambdaEvent::new(payload, Context::default()))
        .await
        .unwrap();
    let res = serde_json::to_value(res).unwrap();
    let status = u16::try_from(res["statusCode"].as_u64().unwrap()).unwrap();
    (
        status,
        serde_json::from_str(res["body"].as_str().unwrap()).unwrap(),
    )
}

#[tokio::test]
async fn characters_a_uri_cannot_hold_in_the_raw_query_are_searched_not_a_panic() {
    // lambda_http panics building the request URI from these unless they are escaped
    // first (curl sends them as typed).
    for (raw, query) in [
        ("q=ما هو LLaVA", "ما هو LLaVA"),
        ("q=\"LLaVA\" {x} <y> | ^ ` \\", "\"LLaVA\" {x} <y> | ^ ` \\"),
        ("q=LLaVA\u{0}\u{7f}#frag", "LLaVA\u{0}\u{7f}#frag"),
    ] {
        let (status, body) = through_the_runtime_adapter(raw).await;
        assert_eq!(
            (status, body["query"].as_str()),
            (200, Some(query)),
            "{raw:?}: {body}"
        );
        let terms = body["terms"].as_array().unwrap();
        assert!(terms.iter().any(|t| t["term"] == "llava"), "{body}");
    }
    let (status, body) = through_the_runtime_adapter("q=\u{1}&k=\"9\"").await;
    assert_eq!(
        (status, body["error"]["code"].as_str()),
        (400, Some("invalid_request"))
    );
}

/// A log sink for one test: what the handler logs while `f` runs, as text.
async fn logged_while<F: std::future::Future>(f: F) -> (F::Output, String) {
    use lambda_http::tracing::subscriber;
    use std::sync::{Arc, Mutex};
    use subscriber::util::SubscriberInitExt;

    #[derive(Clone)]
    struct Sink(Arc<Mutex<Vec<u8>>>);
    impl std::io::Write for Sink {
        fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
            self.0.lock().unwrap().extend_from_slice(buf);
            Ok(buf.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }
    let sink = Sink(Arc::default());
    let writer = sink.clone();
    // The functions' own text format (CloudWatch's default), where a raw newline would
    // start a new record.
    let collector = subscriber::fmt()
        .with_ansi(false)
        .with_writer(move || writer.clone())
        .finish();
    let out = {
        let _guard = collector.set_default();
        f.await
    };
    let text = String::from_utf8(sink.0.lock().unwrap().clone()).unwrap();
    (out, text)
}

#[tokio::test]
async fn field_names_with_line_breaks_cannot_forge_log_lines_or_messages() {
    // Before: the unknown field's name went raw into the 400 message and the log, so this
    // body wrote a second line that read as chat's `request done` and an EMF metric.
    let forged = "x\n1999-12-31T00:00:00.000Z  INFO request done function=\"chat\" \
                  status=200\r\n{\"_aws\":{\"CloudWatchMetrics\":[]},\"Tokens\":1}\u{2028}";
    let cases = [
        json!({"query": "Partial FC", forged: 1}),
        json!({"query": "Partial FC", "filters": {forged: "x"}}),
    ];
    for body in cases {
        let ((status, res, _), log) =
            logged_while(call(event("POST", &[], Some(&body.to_string())))).await;
        assert_eq!(status, 400, "{res}");
        let message = res["error"]["message"].as_str().unwrap();
        assert!(message.contains("x\\n1999-12-31"), "{message:?}");
        assert!(!message.contains(['\n', '\r', '\u{2028}']), "{message:?}");
        assert!(
            log.contains("request rejected"),
            "the rejection is logged: {log}"
        );
        for line in log.lines() {
            assert!(
                !line.starts_with("1999-12-31") && !line.starts_with('{'),
                "a forged line: {line:?}"
            );
        }
    }
}
