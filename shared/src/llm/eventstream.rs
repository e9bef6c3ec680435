//! Decoding of Bedrock's ConverseStream answers: `application/vnd.amazon.eventstream` binary
//! frames (split and CRC-checked by the SDK's decoder) whose headers say what each JSON
//! payload is.
//!
//! A frame's `:message-type` is `event` (its `:event-type` names it: `messageStart`,
//! `contentBlockDelta`, `contentBlockStop`, `messageStop`, `metadata`), `exception` (the
//! service's error, `:exception-type` such as `throttlingException`, sent instead of an HTTP
//! status once the stream has begun) or `error`. Nothing here does I/O.

use aws_smithy_eventstream::frame::{DecodedFrame, MessageFrameDecoder};
use serde::Deserialize;

use super::transport::FrameDecoder;
use super::{truncate_utf8, LlmError, StreamEvent, MAX_ERROR_BODY};
use crate::message::Usage;

/// Turns event-stream bytes into [`StreamEvent`]s and knows whether the answer finished.
#[derive(Debug, Default)]
pub(crate) struct ConverseDecoder {
    frames: MessageFrameDecoder,
    /// Bytes not yet consumed by the frame decoder.
    buffer: Vec<u8>,
    /// `messageStop` came: the answer is complete even if `metadata` never does.
    finished: bool,
    /// `metadata` (the last event) or an error came: nothing more is decoded.
    done: bool,
}

impl FrameDecoder for ConverseDecoder {
    fn feed(&mut self, bytes: &[u8]) -> Vec<Result<StreamEvent, LlmError>> {
        let mut events = Vec::new();
        if self.done {
            return events;
        }
        self.buffer.extend_from_slice(bytes);
        loop {
            let mut rest: &[u8] = &self.buffer;
            let decoded = self.frames.decode_frame(&mut rest);
            // The decoder keeps a frame's prelude once read, so what it read is dropped here.
            let consumed = self.buffer.len() - rest.len();
            self.buffer.drain(..consumed);
            let message = match decoded {
                Ok(DecodedFrame::Complete(message)) => message,
                Ok(DecodedFrame::Incomplete) => break,
                Err(e) => {
                    events.push(Err(LlmError::Protocol {
                        message: format!("invalid event-stream frame: {e}"),
                        raw: String::new(),
                    }));
                    self.done = true;
                    break;
                }
            };
            let header = |name: &str| {
                message
                    .headers()
                    .iter()
                    .find(|h| h.name().as_str() == name)
                    .and_then(|h| h.value().as_string().ok())
                    .map(|v| v.as_str().to_owned())
            };
            let payload = String::from_utf8_lossy(message.payload()).into_owned();
            let frame = Frame {
                message_type: header(":message-type").unwrap_or_default(),
                event_type: header(":event-type").unwrap_or_default(),
                exception_type: header(":exception-type")
                    .or_else(|| header(":error-code"))
                    .unwrap_or_default(),
                payload,
            };
            match self.decode(frame) {
                Ok(Some(event)) => events.push(Ok(event)),
                Ok(None) => {}
                Err(e) => {
                    events.push(Err(e));
                    self.done = true;
                }
            }
            if self.done {
                break;
            }
        }
        events
    }

    fn is_done(&self) -> bool {
        self.done
    }

    fn finish(&self) -> Result<(), LlmError> {
        if self.finished || self.done {
            Ok(())
        } else {
            Err(LlmError::Interrupted { source: None })
        }
    }
}

/// The parts of a frame the decoder reads.
struct Frame {
    message_type: String,
    event_type: String,
    exception_type: String,
    payload: String,
}

impl ConverseDecoder {
    fn decode(&mut self, frame: Frame) -> Result<Option<StreamEvent>, LlmError> {
        match frame.message_type.as_str() {
            "event" => {}
            "exception" | "error" => return Err(exception(&frame)),
            other => {
                return Err(LlmError::Protocol {
                    message: format!("unknown event-stream message type {other:?}"),
                    raw: truncate_utf8(frame.payload, MAX_ERROR_BODY),
                })
            }
        }
        let protocol = |e: serde_json::Error| LlmError::Protocol {
            message: format!("invalid {} payload: {e}", frame.event_type),
            raw: truncate_utf8(frame.payload.clone(), MAX_ERROR_BODY),
        };
        Ok(match frame.event_type.as_str() {
            "contentBlockDelta" => {
                let event: WireDeltaEvent =
                    serde_json::from_str(&frame.payload).map_err(protocol)?;
                // Tool-use and reasoning deltas carry no answer text.
                event
                    .delta
                    .text
                    .filter(|t| !t.is_empty())
                    .map(StreamEvent::Delta)
            }
            "messageStop" => {
                self.finished = true;
                None
            }
            "metadata" => {
                self.done = true;
                let event: WireMetadata = serde_json::from_str(&frame.payload).map_err(protocol)?;
                event.usage.map(|u| {
                    StreamEvent::Usage(Usage {
                        prompt_tokens: u.input_tokens,
                        completion_tokens: u.output_tokens,
                        total_tokens: u.total_tokens.unwrap_or(u.input_tokens + u.output_tokens),
                    })
                })
            }
            // messageStart, contentBlockStart, contentBlockStop, and events added later.
            _ => None,
        })
    }
}

/// An in-stream exception as the HTTP status the service gives the same error before the
/// stream begins (its API reference), so it is retried and reported like that status.
fn exception(frame: &Frame) -> LlmError {
    let status = match frame.exception_type.as_str() {
        "throttlingException" => 429,
        "validationException" => 400,
        "modelStreamErrorException" => 424,
        "serviceUnavailableException" => 503,
        "modelTimeoutException" => 408,
        // internalServerException and anything unknown: the service's fault.
        _ => 500,
    };
    let message = serde_json::from_str::<WireException>(&frame.payload)
        .ok()
        .and_then(|e| e.message)
        .unwrap_or_else(|| frame.payload.clone());
    LlmError::Status {
        status,
        body: truncate_utf8(
            format!("{}: {message}", frame.exception_type),
            MAX_ERROR_BODY,
        ),
        retry_after: None,
    }
}

// Wire types: only the fields read; serde ignores the rest.

#[derive(Deserialize)]
struct WireDeltaEvent {
    delta: WireDelta,
}

#[derive(Deserialize)]
struct WireDelta {
    text: Option<String>,
}

#[derive(Deserialize)]
struct WireMetadata {
    usage: Option<WireUsage>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct WireUsage {
    input_tokens: u32,
    output_tokens: u32,
    total_tokens: Option<u32>,
}

#[derive(Deserialize)]
struct WireException {
    #[serde(alias = "Message")]
    message: Option<String>,
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::fake_bedrock::{encode_frame, event_frame, exception_frame};

    fn decode_all(bytes: &[u8], piece: usize) -> (Vec<Result<StreamEvent, LlmError>>, bool) {
        let mut d = ConverseDecoder::default();
        let mut out = Vec::new();
        for chunk in bytes.chunks(piece) {
            out.extend(d.feed(chunk));
        }
        (out, d.finish().is_ok())
    }

    /// The events, errors as their messages (to compare).
    fn shown(events: Vec<Result<StreamEvent, LlmError>>) -> Vec<Result<StreamEvent, String>> {
        events
            .into_iter()
            .map(|e| e.map_err(|e| e.to_string()))
            .collect()
    }

    fn answer() -> Vec<u8> {
        let mut bytes = Vec::new();
        bytes.extend(event_frame("messageStart", r#"{"role":"assistant"}"#));
        bytes.extend(event_frame(
            "contentBlockDelta",
            r#"{"contentBlockIndex":0,"delta":{"text":"Hé"}}"#,
        ));
        bytes.extend(event_frame(
            "contentBlockDelta",
            r#"{"contentBlockIndex":0,"delta":{"text":"llo"}}"#,
        ));
        bytes.extend(event_frame(
            "contentBlockStop",
            r#"{"contentBlockIndex":0}"#,
        ));
        bytes.extend(event_frame("messageStop", r#"{"stopReason":"end_turn"}"#));
        bytes.extend(event_frame(
            "metadata",
            r#"{"usage":{"inputTokens":12,"outputTokens":2,"totalTokens":14},"metrics":{"latencyMs":5}}"#,
        ));
        bytes
    }

    #[test]
    fn deltas_and_usage_come_out_whatever_the_read_sizes() {
        let expected = vec![
            Ok(StreamEvent::Delta("Hé".into())),
            Ok(StreamEvent::Delta("llo".into())),
            Ok(StreamEvent::Usage(Usage {
                prompt_tokens: 12,
                completion_tokens: 2,
                total_tokens: 14,
            })),
        ];
        let bytes = answer();
        for piece in [1, 3, 7, 64, bytes.len()] {
            let (events, finished) = decode_all(&bytes, piece);
            assert_eq!(shown(events), expected, "reads of {piece} bytes");
            assert!(finished);
        }
    }

    #[test]
    fn a_stream_cut_before_message_stop_is_interrupted() {
        let mut bytes = event_frame("messageStart", r#"{"role":"assistant"}"#);
        bytes.extend(event_frame(
            "contentBlockDelta",
            r#"{"delta":{"text":"Hi"}}"#,
        ));
        let (events, finished) = decode_all(&bytes, 5);
        assert_eq!(shown(events), vec![Ok(StreamEvent::Delta("Hi".into()))]);
        assert!(!finished);
        // Half a frame at the end is no answer either.
        let (_, finished) = decode_all(&bytes[..bytes.len() - 3], 5);
        assert!(!finished);
    }

    #[test]
    fn exceptions_become_the_services_statuses() {
        for (kind, status) in [
            ("throttlingException", 429),
            ("validationException", 400),
            ("modelStreamErrorException", 424),
            ("internalServerException", 500),
            ("serviceUnavailableException", 503),
        ] {
            let mut bytes = event_frame("contentBlockDelta", r#"{"delta":{"text":"a"}}"#);
            bytes.extend(exception_frame(kind, "went wrong"));
            bytes.extend(event_frame(
                "contentBlockDelta",
                r#"{"delta":{"text":"b"}}"#,
            ));
            let (events, _) = decode_all(&bytes, 4);
            assert_eq!(events.len(), 2, "{kind}: nothing after the exception");
            match &events[1] {
                Err(LlmError::Status {
                    status: s, body, ..
                }) => {
                    assert_eq!(*s, status, "{kind}");
                    assert!(body.contains("went wrong") && body.contains(kind), "{body}");
                }
                other => panic!("{kind}: expected a status error, got {other:?}"),
            }
        }
    }

    #[test]
    fn a_corrupt_frame_is_a_protocol_error() {
        let mut bytes = event_frame("contentBlockDelta", r#"{"delta":{"text":"a"}}"#);
        let last = bytes.len() - 1;
        bytes[last] ^= 0xff; // the message CRC no longer matches
        let (events, finished) = decode_all(&bytes, 8);
        assert!(
            matches!(events[..], [Err(LlmError::Protocol { .. })]),
            "{events:?}"
        );
        assert!(finished, "an error ends the stream as answered-with-error");
        let bad_json = encode_frame(
            &[
                (":message-type", "event"),
                (":event-type", "contentBlockDelta"),
            ],
            b"{not json",
        );
        let (events, _) = decode_all(&bad_json, 100);
        assert!(
            matches!(events[..], [Err(LlmError::Protocol { .. })]),
            "{events:?}"
        );
    }
}
