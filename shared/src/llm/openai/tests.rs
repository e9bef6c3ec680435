//! The real client against the fake provider (`testing::fake_llm`) over real sockets.

use std::time::Duration;

use futures_util::StreamExt;
use tokio::time::Instant;

use super::*;
use crate::llm::{StreamEvent, MAX_ERROR_BODY};
use crate::message::{Role, Usage};
use crate::testing::fake_llm::PROMPT_TOKENS;
use crate::testing::{Behavior, FakeLlm};

fn request() -> CompletionRequest {
    CompletionRequest {
        messages: vec![
            ChatMessage::new(Role::System, "You answer questions about the site."),
            ChatMessage::new(Role::User, "请介绍一下 Partial FC"),
        ],
        max_tokens: 100,
        temperature: Some(0.25),
    }
}

/// `fut`'s output, or a panic if it never comes: a timeout that failed to fire would
/// otherwise hang the test rather than fail it. A minute is no timing assertion, only
/// "never" made finite.
async fn ended<T>(fut: impl std::future::Future<Output = T>) -> T {
    tokio::time::timeout(Duration::from_secs(60), fut)
        .await
        .expect("the call never ended: its timeout did not fire")
}

fn client(config: LlmConfig) -> OpenAiCompatClient {
    OpenAiCompatClient::new(config).unwrap()
}

/// Everything a stream yields: the joined text, the usage, and the error item if any.
#[derive(Debug, Default)]
struct Drained {
    text: String,
    deltas: usize,
    usage: Option<Usage>,
    error: Option<LlmError>,
}

async fn drain(mut stream: CompletionStream) -> Drained {
    let mut out = Drained::default();
    while let Some(item) = stream.next().await {
        match item {
            Ok(StreamEvent::Delta(t)) => {
                out.deltas += 1;
                out.text.push_str(&t);
            }
            Ok(StreamEvent::Usage(u)) => out.usage = Some(u),
            Err(e) => {
                assert!(out.error.is_none(), "a stream ends after its first error");
                out.error = Some(e);
            }
        }
    }
    out
}

fn usage(completion: u32) -> Usage {
    Usage {
        prompt_tokens: PROMPT_TOKENS,
        completion_tokens: completion,
        total_tokens: PROMPT_TOKENS + completion,
    }
}

#[tokio::test]
async fn streams_deltas_in_order_then_usage() {
    // The fake opens every stream with a `:` comment line and a content-less role chunk.
    let fake = FakeLlm::start(vec![Behavior::stream(&["Partial", " FC", " is", " fast."])]).await;
    let out = drain(client(fake.config()).stream(&request()).await.unwrap()).await;
    assert_eq!(out.text, "Partial FC is fast.");
    assert_eq!(out.deltas, 4);
    assert_eq!(out.usage, Some(usage(4)));
    assert!(out.error.is_none(), "{:?}", out.error);
    assert_eq!(fake.request_count(), 1);
}

#[tokio::test]
async fn reassembles_lines_and_characters_split_across_tcp_writes() {
    let fake = FakeLlm::start(vec![Behavior::Stream {
        chunks: vec!["部分".into(), "全连接".into(), " (Partial FC)".into()],
        delay: Duration::from_millis(3),
        split_lines: true,
    }])
    .await;
    let out = drain(client(fake.config()).stream(&request()).await.unwrap()).await;
    assert_eq!(out.text, "部分全连接 (Partial FC)");
    assert_eq!(out.deltas, 3);
    assert_eq!(out.usage, Some(usage(3)));
    assert!(out.error.is_none(), "{:?}", out.error);
}

#[tokio::test]
async fn sends_the_key_model_and_stream_options() {
    let fake = FakeLlm::start(vec![Behavior::stream(&["ok"])]).await;
    drain(client(fake.config()).stream(&request()).await.unwrap()).await;
    let req = &fake.requests()[0];
    assert_eq!(req.method, "POST");
    assert_eq!(req.path, "/v1/chat/completions");
    assert_eq!(req.header("authorization"), Some("Bearer test-key"));
    assert_eq!(req.header("content-type"), Some("application/json"));
    assert_eq!(req.body["model"], "fake-model");
    assert_eq!(req.body["max_tokens"], 100);
    assert_eq!(req.body["temperature"], 0.25);
    assert_eq!(req.body["stream"], true);
    assert_eq!(req.body["stream_options"]["include_usage"], true);
    assert_eq!(req.body["messages"][0]["role"], "system");
    assert_eq!(req.body["messages"][1]["content"], "请介绍一下 Partial FC");
}

#[tokio::test]
async fn keyless_client_sends_no_authorization_and_caps_max_tokens() {
    let fake = FakeLlm::start(vec![Behavior::stream(&["ok"])]).await;
    let mut config = fake.config();
    config.api_key = None;
    config.max_tokens = 64;
    let mut req = request();
    req.max_tokens = 10_000;
    req.temperature = None;
    drain(client(config).stream(&req).await.unwrap()).await;
    let recorded = &fake.requests()[0];
    assert_eq!(recorded.header("authorization"), None);
    assert_eq!(recorded.body["max_tokens"], 64);
    assert!(recorded.body.get("temperature").is_none());
}

#[tokio::test]
async fn an_answer_behaviour_streams_or_completes_as_asked_with_its_delays() {
    let delay = Duration::from_millis(20);
    let fake = FakeLlm::start(vec![Behavior::Answer {
        chunks: vec!["Partial".into(), " FC".into(), " samples.".into()],
        delay,
    }])
    .await;
    let client = client(fake.config());

    let started = Instant::now();
    let c = client.complete(&request()).await.unwrap();
    assert_eq!(c.text, "Partial FC samples.");
    assert!(started.elapsed() >= delay * 3, "{:?}", started.elapsed());

    // The last behaviour repeats: the same answer again, streamed this time.
    let started = Instant::now();
    let out = drain(client.stream(&request()).await.unwrap()).await;
    assert_eq!(out.text, "Partial FC samples.");
    assert_eq!(out.deltas, 3);
    assert!(out.error.is_none(), "{:?}", out.error);
    assert!(started.elapsed() >= delay * 3, "{:?}", started.elapsed());
    assert_eq!(fake.request_count(), 2);
}

#[tokio::test]
async fn complete_returns_text_usage_and_model_without_stream_fields() {
    let fake = FakeLlm::start(vec![Behavior::Json {
        text: "Partial FC samples classes.".into(),
    }])
    .await;
    let c = client(fake.config()).complete(&request()).await.unwrap();
    assert_eq!(c.text, "Partial FC samples classes.");
    assert_eq!(c.model, "fake-model");
    assert_eq!(c.usage, Some(usage(4)));
    let body = &fake.requests()[0].body;
    assert!(
        body.get("stream").is_none() && body.get("stream_options").is_none(),
        "{body}"
    );
    assert_eq!(
        fake.requests()[0].header("authorization"),
        Some("Bearer test-key")
    );
}

#[tokio::test]
async fn complete_retries_a_503() {
    let fake = FakeLlm::start(vec![
        Behavior::status(503),
        Behavior::Json { text: "ok".into() },
    ])
    .await;
    let c = client(fake.config()).complete(&request()).await.unwrap();
    assert_eq!(c.text, "ok");
    assert_eq!(fake.request_count(), 2);
}

#[tokio::test]
async fn retries_a_429_then_streams() {
    let fake = FakeLlm::start(vec![
        Behavior::status(429),
        Behavior::stream(&["after", " retry"]),
    ])
    .await;
    let out = drain(client(fake.config()).stream(&request()).await.unwrap()).await;
    assert_eq!(out.text, "after retry");
    assert_eq!(fake.request_count(), 2);
}

#[tokio::test]
async fn waits_for_retry_after_when_it_fits_the_budget() {
    let retry_after = Behavior::Status {
        code: 429,
        body: "slow down".into(),
        retry_after: Some(1),
    };
    let fake = FakeLlm::start(vec![retry_after, Behavior::stream(&["ok"])]).await;
    let mut config = fake.config();
    config.first_token_timeout = Duration::from_secs(3);
    config.timeout = Duration::from_secs(4);
    let start = Instant::now();
    let out = drain(client(config).stream(&request()).await.unwrap()).await;
    assert_eq!(out.text, "ok");
    assert!(
        start.elapsed() >= Duration::from_secs(1),
        "waited only {:?}",
        start.elapsed()
    );
    assert_eq!(fake.request_count(), 2);
}

#[tokio::test]
async fn gives_up_at_once_when_retry_after_exceeds_the_budget() {
    let retry_after = Behavior::Status {
        code: 429,
        body: "slow down".into(),
        retry_after: Some(30),
    };
    let fake = FakeLlm::start(vec![retry_after, Behavior::stream(&["never"])]).await;
    let err = client(fake.config()).stream(&request()).await.unwrap_err();
    assert!(
        matches!(err, LlmError::Status { status: 429, .. }),
        "{err:?}"
    );
    // One request and no second: it did not wait out the 30 s (no timing assertion, which
    // a loaded machine would break).
    assert_eq!(fake.request_count(), 1);
}

#[tokio::test]
async fn gives_up_after_max_retries_with_the_status_and_body() {
    let fake = FakeLlm::start(vec![Behavior::Status {
        code: 500,
        body: "upstream exploded".into(),
        retry_after: None,
    }])
    .await;
    let err = client(fake.config()).stream(&request()).await.unwrap_err();
    match &err {
        LlmError::Status { status, body, .. } => {
            assert_eq!(*status, 500);
            assert_eq!(body, "upstream exploded");
        }
        other => panic!("expected a status error, got {other:?}"),
    }
    assert_eq!(err.http_status(), 502);
    assert_eq!(fake.request_count(), 3, "one attempt + max_retries (2)");
}

#[tokio::test]
async fn does_not_retry_a_client_error() {
    let fake = FakeLlm::start(vec![Behavior::status(401), Behavior::stream(&["never"])]).await;
    let err = client(fake.config()).stream(&request()).await.unwrap_err();
    assert!(
        matches!(err, LlmError::Status { status: 401, .. }),
        "{err:?}"
    );
    assert_eq!(fake.request_count(), 1);
}

#[tokio::test]
async fn keeps_at_most_2_kb_of_an_error_body() {
    let body = "é".repeat(3000);
    let fake = FakeLlm::start(vec![Behavior::Status {
        code: 400,
        body,
        retry_after: None,
    }])
    .await;
    match client(fake.config()).stream(&request()).await.unwrap_err() {
        LlmError::Status { body, .. } => {
            assert!(body.len() <= MAX_ERROR_BODY && body.len() > MAX_ERROR_BODY - 4);
            assert!(body.chars().all(|c| c == 'é'));
        }
        other => panic!("unexpected {other:?}"),
    }
}

#[tokio::test]
async fn a_failure_after_the_first_token_is_an_item_and_not_retried() {
    let fake = FakeLlm::start(vec![
        Behavior::CloseMidStream {
            chunks: vec!["half an ".into(), "answer".into()],
        },
        Behavior::stream(&["must not be requested"]),
    ])
    .await;
    let out = drain(client(fake.config()).stream(&request()).await.unwrap()).await;
    assert_eq!(out.text, "half an answer");
    assert!(
        matches!(out.error, Some(LlmError::Interrupted { .. })),
        "{:?}",
        out.error
    );
    assert_eq!(out.error.map(|e| e.http_status()), Some(502));
    assert_eq!(fake.request_count(), 1);
}

#[tokio::test]
async fn a_stream_cut_before_any_token_is_retried() {
    let fake = FakeLlm::start(vec![
        Behavior::CloseMidStream { chunks: vec![] },
        Behavior::stream(&["second try"]),
    ])
    .await;
    let out = drain(client(fake.config()).stream(&request()).await.unwrap()).await;
    assert_eq!(out.text, "second try");
    assert_eq!(fake.request_count(), 2);
}

#[tokio::test]
async fn malformed_chunk_is_a_protocol_error_with_the_raw_payload() {
    let fake = FakeLlm::start(vec![Behavior::Malformed, Behavior::stream(&["never"])]).await;
    match client(fake.config()).stream(&request()).await.unwrap_err() {
        LlmError::Protocol { raw, .. } => assert_eq!(raw, "{\"choices\": [ {not json"),
        other => panic!("expected a protocol error, got {other:?}"),
    }
    assert_eq!(fake.request_count(), 1, "a protocol error is not retried");
}

#[tokio::test]
async fn stall_is_a_first_token_timeout_and_cancels_the_upstream_call() {
    let fake = FakeLlm::start(vec![Behavior::Stall]).await;
    let mut config = fake.config();
    config.first_token_timeout = Duration::from_millis(300);
    let start = Instant::now();
    let err = ended(client(config).stream(&request())).await.unwrap_err();
    let elapsed = start.elapsed();
    assert!(
        matches!(
            err,
            LlmError::Timeout {
                phase: TimeoutPhase::FirstToken
            }
        ),
        "{err:?}"
    );
    assert_eq!(err.http_status(), 504);
    // A timer cannot fire early, so this lower bound is exact; how late it may fire on a
    // loaded machine is not this test's business (a hang is caught by `ended`).
    assert!(
        elapsed >= Duration::from_millis(300),
        "too early: {elapsed:?}"
    );
    assert_eq!(fake.request_count(), 1);
    assert!(
        fake.wait_for_disconnect(Duration::from_secs(1)).await,
        "upstream still open"
    );
}

#[tokio::test]
async fn stall_after_the_first_token_ends_with_a_total_timeout_item() {
    let fake = FakeLlm::start(vec![Behavior::StallAfter {
        chunks: vec!["Hello".into()],
    }])
    .await;
    let mut config = fake.config();
    config.timeout = Duration::from_millis(400);
    let start = Instant::now();
    let out = ended(async { drain(client(config).stream(&request()).await.unwrap()).await }).await;
    let elapsed = start.elapsed();
    assert_eq!(out.text, "Hello");
    assert!(
        matches!(
            out.error,
            Some(LlmError::Timeout {
                phase: TimeoutPhase::Total
            })
        ),
        "{:?}",
        out.error
    );
    assert!(
        elapsed >= Duration::from_millis(400),
        "too early: {elapsed:?}"
    );
    assert_eq!(fake.request_count(), 1);
}

#[tokio::test]
async fn dropping_the_stream_closes_the_upstream_connection() {
    let fake = FakeLlm::start(vec![Behavior::StallAfter {
        chunks: vec!["first".into()],
    }])
    .await;
    let mut config = fake.config();
    config.timeout = Duration::from_secs(30); // only the drop may end this call
    let mut stream = client(config).stream(&request()).await.unwrap();
    let first = stream.next().await.unwrap().unwrap();
    assert_eq!(first, StreamEvent::Delta("first".into()));
    assert_eq!(fake.disconnects(), 0);
    drop(stream);
    assert!(
        fake.wait_for_disconnect(Duration::from_secs(2)).await,
        "upstream still open"
    );
}

#[tokio::test]
async fn a_stream_can_be_consumed_in_a_spawned_task() {
    let fake = FakeLlm::start(vec![Behavior::stream(&["spawned"])]).await;
    let stream = client(fake.config()).stream(&request()).await.unwrap();
    let out = tokio::spawn(drain(stream)).await.unwrap();
    assert_eq!(out.text, "spawned");
}

#[tokio::test]
async fn an_answer_without_tokens_ends_cleanly_with_usage() {
    let fake = FakeLlm::start(vec![Behavior::stream(&[])]).await;
    let out = drain(client(fake.config()).stream(&request()).await.unwrap()).await;
    assert_eq!(out.deltas, 0);
    assert_eq!(out.usage, Some(usage(0)));
    assert!(out.error.is_none(), "{:?}", out.error);
}

#[tokio::test]
async fn unreachable_provider_is_a_connect_error_after_retries() {
    // Bind then free a port so that nothing listens on it.
    let port = {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        listener.local_addr().unwrap().port()
    };
    let fake = FakeLlm::start(vec![]).await;
    let mut config = fake.config();
    config.base_url = format!("http://127.0.0.1:{port}/v1");
    let err = client(config).stream(&request()).await.unwrap_err();
    assert!(matches!(err, LlmError::Connect { .. }), "{err:?}");
    assert!(err.is_retryable());
    assert_eq!(err.http_status(), 502);
}

#[tokio::test]
async fn echo_streams_back_the_system_prompt_and_the_question() {
    let fake = FakeLlm::start(vec![Behavior::Echo]).await;
    let client = client(fake.config());
    let out = drain(client.stream(&request()).await.unwrap()).await;
    assert_eq!(
        out.text,
        "You answer questions about the site.\n\n请介绍一下 Partial FC"
    );
    let whole = client.complete(&request()).await.unwrap();
    assert_eq!(whole.text, out.text);
}
