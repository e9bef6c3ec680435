//! The Bedrock client against the fake service over real sockets: signatures it checks,
//! frames it streams, failures it plays.

use std::time::Duration;

use futures_util::StreamExt;
use serde_json::json;

use super::*;
use crate::llm::{StreamEvent, TimeoutPhase};
use crate::message::Usage;
use crate::secret::Secret;
use crate::testing::fake_bedrock::{self, Behavior, FakeBedrock, INPUT_TOKENS};

fn request(messages: Vec<ChatMessage>) -> CompletionRequest {
    CompletionRequest {
        messages,
        max_tokens: 100_000,
        temperature: Some(0.2),
    }
}

fn question() -> CompletionRequest {
    request(vec![
        ChatMessage::new(Role::System, "Answer from the sources."),
        ChatMessage::new(Role::User, "What is Partial FC?"),
    ])
}

/// Everything a stream yields, errors included (as their messages, to compare).
async fn drain(stream: CompletionStream) -> Vec<Result<StreamEvent, String>> {
    stream.map(|e| e.map_err(|e| e.to_string())).collect().await
}

/// The error a drained stream ended with.
async fn last_error(stream: CompletionStream) -> LlmError {
    let events: Vec<_> = stream.collect().await;
    match events.into_iter().last() {
        Some(Err(e)) => e,
        other => panic!("expected the stream to end with an error, got {other:?}"),
    }
}

fn status_of(e: &LlmError) -> Option<u16> {
    match e {
        LlmError::Status { status, .. } => Some(*status),
        _ => None,
    }
}

#[tokio::test]
async fn a_signed_request_streams_the_answer_and_its_usage() {
    let fake = FakeBedrock::start(vec![Behavior::stream(&["Partial FC ", "is ", "fast."])]).await;
    let client = BedrockClient::new(fake.config()).unwrap();
    let events = drain(client.stream(&question()).await.unwrap()).await;
    assert_eq!(
        events,
        vec![
            Ok(StreamEvent::Delta("Partial FC ".into())),
            Ok(StreamEvent::Delta("is ".into())),
            Ok(StreamEvent::Delta("fast.".into())),
            Ok(StreamEvent::Usage(Usage {
                prompt_tokens: INPUT_TOKENS,
                completion_tokens: 3,
                total_tokens: INPUT_TOKENS + 3,
            })),
        ]
    );
    let seen = fake.requests();
    assert_eq!(seen.len(), 1);
    assert_eq!(seen[0].refused, None, "the signature checks out");
    assert_eq!(
        seen[0].path,
        "/model/anthropic.claude-3-haiku-20240307-v1%3A0/converse-stream"
    );
}

#[tokio::test]
async fn the_body_is_converse_shaped_with_the_token_cap_applied() {
    let fake = FakeBedrock::start(vec![Behavior::stream(&["ok"])]).await;
    let client = BedrockClient::new(fake.config()).unwrap();
    let req = request(vec![
        ChatMessage::new(Role::System, "Rules."),
        ChatMessage::new(Role::System, "Sources."),
        // A history that starts with the model, and two visitor turns in a row.
        ChatMessage::new(Role::Assistant, "Hello!"),
        ChatMessage::new(Role::User, "First."),
        ChatMessage::new(Role::Assistant, "Answer."),
        ChatMessage::new(Role::User, "  "),
        ChatMessage::new(Role::User, "Second."),
        ChatMessage::new(Role::User, "Third."),
    ]);
    client.complete(&req).await.unwrap();
    let body = &fake.requests()[0].body;
    assert_eq!(
        body,
        &json!({
            "messages": [
                {"role": "user", "content": [{"text": "First."}]},
                {"role": "assistant", "content": [{"text": "Answer."}]},
                {"role": "user", "content": [{"text": "Second."}, {"text": "Third."}]},
            ],
            "system": [{"text": "Rules."}, {"text": "Sources."}],
            "inferenceConfig": {"maxTokens": 256, "temperature": 0.2},
        })
    );
}

#[tokio::test]
async fn complete_joins_the_stream_and_keeps_its_usage() {
    let fake = FakeBedrock::start(vec![Behavior::stream(&["a", "b"])]).await;
    let client = BedrockClient::new(fake.config()).unwrap();
    let done = client.complete(&question()).await.unwrap();
    assert_eq!(done.text, "ab");
    assert_eq!(done.model, fake_bedrock::MODEL);
    assert_eq!(done.usage.map(|u| u.total_tokens), Some(INPUT_TOKENS + 2));
}

#[tokio::test]
async fn a_wrong_secret_or_token_is_refused_with_403_and_not_retried() {
    let fake = FakeBedrock::start(vec![Behavior::stream(&["never"])]).await;
    let mut config = fake.config();
    if let Some(aws) = config.aws.as_mut() {
        aws.secret_access_key = Secret::new("not-the-secret");
    }
    let err = BedrockClient::new(config)
        .unwrap()
        .stream(&question())
        .await
        .unwrap_err();
    assert_eq!(status_of(&err), Some(403), "{err:?}");
    assert!(err.to_string().contains("signature"), "{err}");
    assert_eq!(err.http_status(), 502);

    let mut config = fake.config();
    if let Some(aws) = config.aws.as_mut() {
        aws.session_token = None;
    }
    let err = BedrockClient::new(config)
        .unwrap()
        .stream(&question())
        .await
        .unwrap_err();
    assert_eq!(status_of(&err), Some(403), "{err:?}");
    assert!(err.to_string().contains("security token"), "{err}");

    let seen = fake.requests();
    assert_eq!(seen.len(), 2, "a refusal is final: {seen:?}");
    assert_eq!(seen[0].refused.as_deref(), Some("signature mismatch"));
    assert!(seen[1]
        .refused
        .as_deref()
        .is_some_and(|r| r.starts_with("credential")));
    assert_eq!(fake.accepted(), 0);
}

#[tokio::test]
async fn a_signature_for_another_region_is_refused() {
    let fake = FakeBedrock::start(vec![Behavior::stream(&["never"])]).await;
    let mut config = fake.config();
    if let Some(aws) = config.aws.as_mut() {
        aws.region = "eu-west-1".into();
    }
    let err = BedrockClient::new(config)
        .unwrap()
        .stream(&question())
        .await
        .unwrap_err();
    assert_eq!(status_of(&err), Some(403), "{err:?}");
    assert!(fake.requests()[0]
        .refused
        .as_deref()
        .is_some_and(|r| r.contains("scope")));
}

#[tokio::test]
async fn throttling_is_retried_then_reported_busy() {
    let fake = FakeBedrock::start(vec![Behavior::status(429)]).await;
    let client = BedrockClient::new(fake.config()).unwrap();
    let err = client.stream(&question()).await.unwrap_err();
    assert_eq!(status_of(&err), Some(429), "{err:?}");
    assert_eq!(err.http_status(), 503, "busy, not broken");
    assert_eq!(
        fake.accepted(),
        3,
        "one attempt and two retries, each signed anew"
    );
}

#[tokio::test]
async fn a_server_error_is_retried_and_the_retry_answers() {
    let fake = FakeBedrock::start(vec![
        Behavior::status(500),
        Behavior::status(503),
        Behavior::stream(&["fine"]),
    ])
    .await;
    let client = BedrockClient::new(fake.config()).unwrap();
    let events = drain(client.stream(&question()).await.unwrap()).await;
    assert_eq!(events[0], Ok(StreamEvent::Delta("fine".into())));
    assert_eq!(fake.accepted(), 3);

    let fake = FakeBedrock::start(vec![Behavior::status(500)]).await;
    let err = BedrockClient::new(fake.config())
        .unwrap()
        .stream(&question())
        .await
        .unwrap_err();
    assert_eq!(status_of(&err), Some(500));
    assert_eq!(err.http_status(), 502, "a model error");
}

#[tokio::test]
async fn an_exception_frame_before_any_text_is_retried_like_its_status() {
    let fake = FakeBedrock::start(vec![
        Behavior::ExceptionAfter {
            chunks: vec![],
            exception_type: "throttlingException".into(),
        },
        Behavior::stream(&["after"]),
    ])
    .await;
    let client = BedrockClient::new(fake.config()).unwrap();
    let events = drain(client.stream(&question()).await.unwrap()).await;
    assert_eq!(events[0], Ok(StreamEvent::Delta("after".into())));
    assert_eq!(fake.accepted(), 2);
}

#[tokio::test]
async fn an_exception_frame_mid_answer_ends_the_stream_with_its_error() {
    let fake = FakeBedrock::start(vec![Behavior::ExceptionAfter {
        chunks: vec!["Partial ".into()],
        exception_type: "modelStreamErrorException".into(),
    }])
    .await;
    let client = BedrockClient::new(fake.config()).unwrap();
    let events = drain(client.stream(&question()).await.unwrap()).await;
    assert_eq!(events.len(), 2, "{events:?}");
    assert_eq!(events[0], Ok(StreamEvent::Delta("Partial ".into())));
    let err = last_error(client.stream(&question()).await.unwrap()).await;
    assert_eq!(status_of(&err), Some(424), "{err:?}");
    assert_eq!(err.http_status(), 502);
    assert_eq!(
        fake.accepted(),
        2,
        "text was shown: never retried (one request per call)"
    );
}

#[tokio::test]
async fn a_stall_before_the_first_token_times_out() {
    let fake = FakeBedrock::start(vec![Behavior::Stall]).await;
    let mut config = fake.config();
    config.first_token_timeout = Duration::from_millis(300);
    let err = BedrockClient::new(config)
        .unwrap()
        .stream(&question())
        .await
        .unwrap_err();
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
}

#[tokio::test]
async fn a_stall_mid_answer_times_out_at_the_total_limit() {
    let fake = FakeBedrock::start(vec![Behavior::StallAfter {
        chunks: vec!["Partial ".into(), "FC".into()],
    }])
    .await;
    let mut config = fake.config();
    config.timeout = Duration::from_millis(600);
    let client = BedrockClient::new(config).unwrap();
    let stream = client.stream(&question()).await.unwrap();
    let events: Vec<_> = stream.collect().await;
    assert_eq!(events.len(), 3, "{events:?}");
    assert!(matches!(
        events[2],
        Err(LlmError::Timeout {
            phase: TimeoutPhase::Total
        })
    ));
    assert!(
        tokio::time::timeout(Duration::from_secs(2), async {
            while fake.disconnects() == 0 {
                tokio::time::sleep(Duration::from_millis(5)).await;
            }
        })
        .await
        .is_ok(),
        "the client hung up on the stalled stream"
    );
}

#[tokio::test]
async fn a_client_without_credentials_is_a_config_error() {
    let fake = FakeBedrock::start(vec![]).await;
    let config = LlmConfig {
        aws: None,
        ..fake.config()
    };
    assert!(matches!(
        BedrockClient::new(config),
        Err(Error::Config { .. })
    ));
}

#[test]
fn model_ids_and_arns_are_one_encoded_segment() {
    assert_eq!(
        crate::percent::component("anthropic.claude-3-haiku-20240307-v1:0"),
        "anthropic.claude-3-haiku-20240307-v1%3A0"
    );
    assert_eq!(
        crate::percent::component("arn:aws:bedrock:eu-west-1:1:inference-profile/eu.x"),
        "arn%3Aaws%3Abedrock%3Aeu-west-1%3A1%3Ainference-profile%2Feu.x"
    );
}
