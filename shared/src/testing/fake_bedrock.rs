//! A fake Amazon Bedrock Runtime: a real HTTP/1.1 server on `127.0.0.1:0` that answers
//! `POST /model/{modelId}/converse-stream` like the service.
//!
//! Every request's AWS Signature Version 4 is verified first, recomputed here from the known
//! test secret with this module's own code (not the signer the client uses): a wrong
//! signature, key or session token gets the service's 403 and never reaches the script.
//! Answers are `application/vnd.amazon.eventstream` frames, encoded here too (prelude,
//! string headers, JSON payload, both CRC32s). The script can also stall, throttle (429
//! `ThrottlingException`), fail with a 5xx, or send an exception frame mid-stream.

use std::io;
use std::time::Duration;

use hmac::{Hmac, KeyInit, Mac};
use serde_json::{json, Value};
use sha2::{Digest, Sha256};
use tokio::io::AsyncWriteExt;
use tokio::net::TcpStream;

use super::http1::{self, Request};
use super::serve::{wait_for_close, Script, ScriptedServer};
use crate::llm::{AwsSigning, LlmConfig, LlmProvider};
use crate::secret::Secret;

/// The access key id the fake accepts.
pub const ACCESS_KEY_ID: &str = "ASIAFAKEBEDROCKTEST1";
/// The secret the fake checks signatures with.
pub const SECRET_ACCESS_KEY: &str = "fake/bedrock+secret/for/tests/only/0000";
/// The session token the fake expects (a role's credentials always carry one).
pub const SESSION_TOKEN: &str = "FakeSessionTokenForBedrockTests==";
/// The region the fake expects requests to be signed for.
pub const REGION: &str = "us-east-1";
/// The model id [`FakeBedrock::config`] configures (with its `:`, as real ids have).
pub const MODEL: &str = "anthropic.claude-3-haiku-20240307-v1:0";
/// Input tokens the fake reports for every answer; output tokens are one per delta.
pub const INPUT_TOKENS: u32 = 37;

/// How the fake answers one (correctly signed) request. The script is consumed one per
/// request; the last behaviour repeats.
#[derive(Debug, Clone)]
pub enum Behavior {
    /// `messageStart`, one `contentBlockDelta` per chunk (each after `delay`),
    /// `contentBlockStop`, `messageStop`, then `metadata` with the usage.
    Stream {
        /// The text deltas, in order.
        chunks: Vec<String>,
        /// Pause before each delta.
        delay: Duration,
    },
    /// An HTTP error before any frame, as the service sends it: `x-amzn-ErrorType` and a
    /// JSON body with the message.
    Status {
        /// The status (429, 500, 503...).
        code: u16,
        /// The error type (`ThrottlingException`, `InternalServerException`...).
        error_type: String,
    },
    /// Streams these deltas, then an exception frame of this type (`throttlingException`,
    /// `modelStreamErrorException`...), then ends the body.
    ExceptionAfter {
        /// The deltas sent first.
        chunks: Vec<String>,
        /// The `:exception-type`.
        exception_type: String,
    },
    /// Reads the request and never answers.
    Stall,
    /// Streams these deltas, then hangs without finishing.
    StallAfter {
        /// The deltas sent before hanging.
        chunks: Vec<String>,
    },
}

impl Behavior {
    /// A prompt [`Behavior::Stream`] of these deltas.
    pub fn stream(chunks: &[&str]) -> Self {
        Behavior::Stream {
            chunks: chunks.iter().map(|c| c.to_string()).collect(),
            delay: Duration::ZERO,
        }
    }

    /// A [`Behavior::Status`]: 429 is a `ThrottlingException`, 503
    /// `ServiceUnavailableException`, anything else an `InternalServerException`.
    pub fn status(code: u16) -> Self {
        let error_type = match code {
            429 => "ThrottlingException",
            503 => "ServiceUnavailableException",
            400 => "ValidationException",
            _ => "InternalServerException",
        };
        Behavior::Status {
            code,
            error_type: error_type.into(),
        }
    }
}

/// One request the fake received, with what its signature check found.
#[derive(Debug, Clone)]
pub struct RecordedRequest {
    /// Request path as sent (`/model/anthropic.claude...%3A0/converse-stream`).
    pub path: String,
    /// The JSON body (`Value::Null` if it was not JSON).
    pub body: Value,
    /// `None` when the signature was valid, else why it was refused.
    pub refused: Option<String>,
}

/// A running fake; stops accepting connections when dropped.
#[derive(Debug)]
pub struct FakeBedrock {
    server: ScriptedServer<Behavior, RecordedRequest>,
}

/// What the server keeps between connections.
type State = Script<Behavior, RecordedRequest>;

impl FakeBedrock {
    /// Starts the server on a free port of 127.0.0.1 with this script.
    ///
    /// # Panics
    /// If no local port can be bound (a broken test machine).
    pub async fn start(script: Vec<Behavior>) -> FakeBedrock {
        let server = ScriptedServer::start(script, |socket, state| async move {
            handle(socket, &state).await
        })
        .await;
        FakeBedrock { server }
    }

    /// The endpoint to configure (`BEDROCK_ENDPOINT`): `http://127.0.0.1:<port>`.
    pub fn endpoint(&self) -> String {
        format!("http://{}", self.server.addr)
    }

    /// Every request received so far, signed well or not, in arrival order.
    pub fn requests(&self) -> Vec<RecordedRequest> {
        self.server.requests()
    }

    /// How many correctly signed requests arrived (the ones the script answered).
    pub fn accepted(&self) -> usize {
        self.server
            .requests()
            .iter()
            .filter(|r| r.refused.is_none())
            .count()
    }

    /// How many times a client left before its answer was complete.
    pub fn disconnects(&self) -> usize {
        self.server.disconnects()
    }

    /// The signing credentials the fake accepts.
    pub fn signing(&self) -> AwsSigning {
        AwsSigning {
            region: REGION.into(),
            access_key_id: ACCESS_KEY_ID.into(),
            secret_access_key: Secret::new(SECRET_ACCESS_KEY),
            session_token: Some(Secret::new(SESSION_TOKEN)),
        }
    }

    /// A client configuration for this fake: model [`MODEL`], the accepted credentials, and
    /// the same short limits as the OpenAI-compatible fake's (2 retries with a 5 ms backoff,
    /// connect and first token 500 ms, total 2 s). Adjust fields as a test needs.
    pub fn config(&self) -> LlmConfig {
        LlmConfig {
            provider: LlmProvider::Bedrock,
            base_url: self.endpoint(),
            model: MODEL.to_string(),
            api_key: None,
            aws: Some(self.signing()),
            timeout: Duration::from_secs(2),
            connect_timeout: Duration::from_millis(500),
            first_token_timeout: Duration::from_millis(500),
            max_retries: 2,
            max_tokens: 256,
            retry_backoff: Duration::from_millis(5),
        }
    }

    /// The environment that makes a function use this fake (`LLM_PROVIDER=bedrock`, the
    /// endpoint, model, region and credentials), as Lambda plus the template would set it.
    pub fn env(&self) -> Vec<(&'static str, String)> {
        vec![
            ("LLM_PROVIDER", "bedrock".into()),
            ("BEDROCK_ENDPOINT", self.endpoint()),
            ("LLM_MODEL", MODEL.into()),
            ("AWS_REGION", REGION.into()),
            ("AWS_ACCESS_KEY_ID", ACCESS_KEY_ID.into()),
            ("AWS_SECRET_ACCESS_KEY", SECRET_ACCESS_KEY.into()),
            ("AWS_SESSION_TOKEN", SESSION_TOKEN.into()),
        ]
    }
}

async fn handle(mut socket: TcpStream, state: &State) -> io::Result<()> {
    socket.set_nodelay(true)?;
    let Some(request) = http1::read_request(&mut socket).await? else {
        return Ok(());
    };
    let refused = verify(&request).err();
    state.record(RecordedRequest {
        path: request.target().to_owned(),
        body: serde_json::from_slice(&request.body).unwrap_or(Value::Null),
        refused: refused.clone(),
    });
    if let Some((error_type, message)) = refused.as_deref().map(refusal) {
        return write_error(&mut socket, 403, error_type, &message).await;
    }
    if !(request.method() == "POST" && request.target().ends_with("/converse-stream")) {
        return write_error(&mut socket, 404, "UnknownOperationException", "").await;
    }
    let behavior = state.next(|| Behavior::status(500));
    match behavior {
        Behavior::Stream { chunks, delay } => {
            write_stream_head(&mut socket).await?;
            write_frame(
                &mut socket,
                &event_frame("messageStart", r#"{"role":"assistant"}"#),
            )
            .await?;
            for chunk in &chunks {
                if !delay.is_zero() {
                    tokio::time::sleep(delay).await;
                }
                write_frame(&mut socket, &delta_frame(chunk)).await?;
            }
            let output = u32::try_from(chunks.len()).unwrap_or(u32::MAX);
            let usage = json!({"usage": {"inputTokens": INPUT_TOKENS, "outputTokens": output,
                "totalTokens": INPUT_TOKENS + output}, "metrics": {"latencyMs": 42}});
            for frame in [
                event_frame("contentBlockStop", r#"{"contentBlockIndex":0}"#),
                event_frame("messageStop", r#"{"stopReason":"end_turn"}"#),
                event_frame("metadata", &usage.to_string()),
            ] {
                write_frame(&mut socket, &frame).await?;
            }
            finish_chunked(&mut socket).await
        }
        Behavior::Status { code, error_type } => {
            let message = format!("fake {error_type}");
            write_error(&mut socket, code, &error_type, &message).await
        }
        Behavior::ExceptionAfter {
            chunks,
            exception_type,
        } => {
            write_stream_head(&mut socket).await?;
            for chunk in &chunks {
                write_frame(&mut socket, &delta_frame(chunk)).await?;
            }
            let frame = exception_frame(&exception_type, "fake in-stream failure");
            write_frame(&mut socket, &frame).await?;
            finish_chunked(&mut socket).await
        }
        Behavior::Stall => wait_for_close(&mut socket).await,
        Behavior::StallAfter { chunks } => {
            write_stream_head(&mut socket).await?;
            for chunk in &chunks {
                write_frame(&mut socket, &delta_frame(chunk)).await?;
            }
            wait_for_close(&mut socket).await
        }
    }
}

/// The service's error type and message for a refused signature.
fn refusal(reason: &str) -> (&'static str, String) {
    if reason.starts_with("credential") {
        (
            "UnrecognizedClientException",
            "The security token included in the request is invalid.".into(),
        )
    } else {
        (
            "InvalidSignatureException",
            format!(
                "The request signature we calculated does not match the signature you \
                 provided. ({reason})"
            ),
        )
    }
}

/// Checks a request's SigV4 `authorization` header against the test credentials:
/// `Err(reason)` when anything differs. Reasons about the key or token start with
/// `credential`.
pub fn verify(request: &Request) -> Result<(), String> {
    let auth = request
        .header("authorization")
        .ok_or("missing authorization header")?;
    let rest = auth
        .strip_prefix("AWS4-HMAC-SHA256 ")
        .ok_or("not AWS4-HMAC-SHA256")?;
    let mut credential = None;
    let mut signed_headers = None;
    let mut signature = None;
    for part in rest.split(',') {
        match part.trim().split_once('=') {
            Some(("Credential", v)) => credential = Some(v),
            Some(("SignedHeaders", v)) => signed_headers = Some(v),
            Some(("Signature", v)) => signature = Some(v),
            _ => return Err(format!("unexpected part {part:?}")),
        }
    }
    let (credential, signed_headers, signature) = match (credential, signed_headers, signature) {
        (Some(c), Some(h), Some(s)) => (c, h, s),
        _ => return Err("incomplete authorization header".into()),
    };
    let scope: Vec<&str> = credential.split('/').collect();
    let [key_id, date, region, service, terminator] = scope[..] else {
        return Err(format!("malformed credential scope {credential:?}"));
    };
    if key_id != ACCESS_KEY_ID {
        return Err(format!("credential: unknown access key {key_id:?}"));
    }
    if request.header("x-amz-security-token") != Some(SESSION_TOKEN) {
        return Err("credential: missing or wrong session token".into());
    }
    if region != REGION || service != "bedrock" || terminator != "aws4_request" {
        return Err(format!("wrong scope {region}/{service}/{terminator}"));
    }
    let amz_date = request.header("x-amz-date").ok_or("missing x-amz-date")?;
    if !amz_date.starts_with(date) {
        return Err("x-amz-date is not the scope's date".into());
    }
    let names: Vec<&str> = signed_headers.split(';').collect();
    for required in ["host", "x-amz-date", "x-amz-security-token"] {
        if !names.contains(&required) {
            return Err(format!("{required} is not signed"));
        }
    }
    let mut canonical_headers = String::new();
    for name in &names {
        let value = request
            .header(name)
            .ok_or_else(|| format!("signed header {name} was not sent"))?;
        let value = value.split_whitespace().collect::<Vec<_>>().join(" ");
        canonical_headers.push_str(&format!("{name}:{value}\n"));
    }
    let (path, query) = match request.target().split_once('?') {
        Some((p, q)) => (p, q),
        None => (request.target(), ""),
    };
    if !query.is_empty() {
        return Err("unexpected query string".into());
    }
    // Every service but S3 signs the path encoded once more than it is sent.
    let canonical_request = format!(
        "{}\n{}\n\n{canonical_headers}\n{signed_headers}\n{}",
        request.method(),
        crate::percent::path(path),
        hex::encode(Sha256::digest(&request.body)),
    );
    let string_to_sign = format!(
        "AWS4-HMAC-SHA256\n{amz_date}\n{date}/{region}/{service}/aws4_request\n{}",
        hex::encode(Sha256::digest(canonical_request.as_bytes()))
    );
    let mut key = hmac(
        format!("AWS4{SECRET_ACCESS_KEY}").as_bytes(),
        date.as_bytes(),
    );
    for part in [region, service, "aws4_request"] {
        key = hmac(&key, part.as_bytes());
    }
    let expected = hex::encode(hmac(&key, string_to_sign.as_bytes()));
    if expected == signature {
        Ok(())
    } else {
        Err("signature mismatch".into())
    }
}

fn hmac(key: &[u8], data: &[u8]) -> Vec<u8> {
    // HMAC takes a key of any length; the error branch cannot happen.
    let Ok(mut mac) = Hmac::<Sha256>::new_from_slice(key) else {
        return Vec::new();
    };
    mac.update(data);
    mac.finalize().into_bytes().to_vec()
}

// ---------------------------------------------------------------- event-stream frames

/// One event-stream message: prelude (total and headers length, their CRC32), string
/// headers, payload, CRC32 of everything before it.
pub fn encode_frame(headers: &[(&str, &str)], payload: &[u8]) -> Vec<u8> {
    let mut encoded_headers = Vec::new();
    for (name, value) in headers {
        encoded_headers.push(name.len() as u8);
        encoded_headers.extend_from_slice(name.as_bytes());
        encoded_headers.push(7); // string
        encoded_headers.extend_from_slice(&(value.len() as u16).to_be_bytes());
        encoded_headers.extend_from_slice(value.as_bytes());
    }
    let total = 12 + encoded_headers.len() + payload.len() + 4;
    let mut frame = Vec::with_capacity(total);
    frame.extend_from_slice(&(total as u32).to_be_bytes());
    frame.extend_from_slice(&(encoded_headers.len() as u32).to_be_bytes());
    let prelude_crc = crc32(&frame);
    frame.extend_from_slice(&prelude_crc.to_be_bytes());
    frame.extend_from_slice(&encoded_headers);
    frame.extend_from_slice(payload);
    let message_crc = crc32(&frame);
    frame.extend_from_slice(&message_crc.to_be_bytes());
    frame
}

/// An `event` frame of this type with a JSON payload.
pub fn event_frame(event_type: &str, payload: &str) -> Vec<u8> {
    encode_frame(
        &[
            (":event-type", event_type),
            (":content-type", "application/json"),
            (":message-type", "event"),
        ],
        payload.as_bytes(),
    )
}

/// An `exception` frame of this type with the service's `{"message": ...}` payload.
pub fn exception_frame(exception_type: &str, message: &str) -> Vec<u8> {
    encode_frame(
        &[
            (":exception-type", exception_type),
            (":content-type", "application/json"),
            (":message-type", "exception"),
        ],
        json!({ "message": message }).to_string().as_bytes(),
    )
}

fn delta_frame(text: &str) -> Vec<u8> {
    let payload = json!({"contentBlockIndex": 0, "delta": {"text": text}, "p": "abcd"});
    event_frame("contentBlockDelta", &payload.to_string())
}

/// CRC-32 (IEEE, reflected, as gzip), bit by bit: a few frames per test need no table.
fn crc32(bytes: &[u8]) -> u32 {
    let mut crc = !0u32;
    for &b in bytes {
        crc ^= u32::from(b);
        for _ in 0..8 {
            crc = if crc & 1 == 1 {
                (crc >> 1) ^ 0xEDB8_8320
            } else {
                crc >> 1
            };
        }
    }
    !crc
}

// ---------------------------------------------------------------- HTTP

async fn write_error(
    socket: &mut TcpStream,
    code: u16,
    error_type: &str,
    message: &str,
) -> io::Result<()> {
    let body = json!({ "message": message }).to_string();
    let head = format!(
        "HTTP/1.1 {code} Fake\r\ncontent-type: application/json\r\n\
         x-amzn-errortype: {error_type}:http://internal.amazon.com/coral/com.amazon.bedrock/\r\n\
         content-length: {}\r\nconnection: close\r\n\r\n",
        body.len()
    );
    socket.write_all(head.as_bytes()).await?;
    socket.write_all(body.as_bytes()).await?;
    let _ = socket.shutdown().await;
    Ok(())
}

async fn write_stream_head(socket: &mut TcpStream) -> io::Result<()> {
    let head = "HTTP/1.1 200 OK\r\ncontent-type: application/vnd.amazon.eventstream\r\n\
                transfer-encoding: chunked\r\nconnection: close\r\n\r\n";
    socket.write_all(head.as_bytes()).await?;
    socket.flush().await
}

/// One frame as one HTTP chunk, in a single write.
async fn write_frame(socket: &mut TcpStream, frame: &[u8]) -> io::Result<()> {
    let mut chunk = format!("{:x}\r\n", frame.len()).into_bytes();
    chunk.extend_from_slice(frame);
    chunk.extend_from_slice(b"\r\n");
    socket.write_all(&chunk).await?;
    socket.flush().await
}

async fn finish_chunked(socket: &mut TcpStream) -> io::Result<()> {
    socket.write_all(b"0\r\n\r\n").await?;
    // Once the answer is out, a client that already closed did nothing wrong.
    let _ = socket.shutdown().await;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn crc32_matches_the_standard_check_value() {
        // The CRC-32 check value every implementation publishes.
        assert_eq!(crc32(b"123456789"), 0xCBF4_3926);
    }

    #[test]
    fn uri_encoding_encodes_the_percent_of_an_encoded_path_again() {
        assert_eq!(
            crate::percent::path("/model/a.b-v1%3A0/x"),
            "/model/a.b-v1%253A0/x"
        );
    }
}
