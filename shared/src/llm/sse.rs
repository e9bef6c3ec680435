//! Pure decoding of provider responses: an incremental Server-Sent Events parser, the
//! chat.completion.chunk decoder on top of it, and the non-streaming response parser.
//!
//! Nothing here does I/O, so every framing corner (lines and characters split across reads,
//! `\r\n`, comments, multi-line `data:`) is unit-tested without a server.

use serde::Deserialize;

use super::transport::FrameDecoder;
use super::{truncate_utf8, Completion, LlmError, StreamEvent, MAX_ERROR_BODY};
use crate::message::Usage;

/// Splits a byte stream into SSE event payloads (the joined `data:` lines of each event).
///
/// Bytes are buffered until a full line is in; since `\n` never occurs inside a multi-byte
/// UTF-8 sequence, decoding whole lines also handles characters split across reads.
/// Lines end with `\n` or `\r\n` (a lone `\r`, legal in SSE, is not used by any provider).
#[derive(Debug, Default)]
pub(crate) struct SseParser {
    /// Bytes of the current, unfinished line.
    line: Vec<u8>,
    /// `data:` lines of the current event; `None` until one is seen.
    data: Option<String>,
}

impl SseParser {
    /// Feeds the next bytes and returns the payloads of the events they complete.
    pub(crate) fn feed(&mut self, bytes: &[u8]) -> Vec<String> {
        let mut payloads = Vec::new();
        let mut rest = bytes;
        while let Some(pos) = rest.iter().position(|&b| b == b'\n') {
            self.line.extend_from_slice(&rest[..pos]);
            rest = &rest[pos + 1..];
            let mut line = std::mem::take(&mut self.line);
            if line.last() == Some(&b'\r') {
                line.pop();
            }
            if let Some(payload) = self.process_line(&String::from_utf8_lossy(&line)) {
                payloads.push(payload);
            }
        }
        self.line.extend_from_slice(rest);
        payloads
    }

    fn process_line(&mut self, line: &str) -> Option<String> {
        if line.is_empty() {
            // A blank line dispatches the event; an event without data is dropped (SSE spec).
            return self.data.take();
        }
        if line.starts_with(':') {
            return None; // comment (keep-alive)
        }
        let (field, value) = match line.split_once(':') {
            Some((f, v)) => (f, v.strip_prefix(' ').unwrap_or(v)),
            None => (line, ""),
        };
        // `event:`, `id:` and `retry:` carry nothing a chat completion needs.
        if field == "data" {
            match &mut self.data {
                Some(data) => {
                    data.push('\n');
                    data.push_str(value);
                }
                None => self.data = Some(value.to_string()),
            }
        }
        None
    }
}

/// Turns SSE bytes into [`StreamEvent`]s and knows whether the answer finished properly.
#[derive(Debug, Default)]
pub(crate) struct ChunkDecoder {
    sse: SseParser,
    /// `[DONE]` was seen: everything after it is ignored.
    done: bool,
    /// A choice carried a `finish_reason`: the answer is complete even without `[DONE]`.
    finished: bool,
}

impl FrameDecoder for ChunkDecoder {
    /// Feeds bytes; returns the events they complete. After an error item (or `[DONE]`)
    /// nothing more is decoded: what follows a protocol error cannot be trusted.
    fn feed(&mut self, bytes: &[u8]) -> Vec<Result<StreamEvent, LlmError>> {
        let mut events = Vec::new();
        if self.done {
            return events;
        }
        for payload in self.sse.feed(bytes) {
            if payload.trim() == "[DONE]" {
                self.done = true;
                break;
            }
            match self.decode(&payload) {
                Ok(decoded) => events.extend(decoded.into_iter().map(Ok)),
                Err(e) => {
                    events.push(Err(e));
                    self.done = true;
                    break;
                }
            }
        }
        events
    }

    /// Whether the stream is over (`[DONE]` or an error): the caller can stop reading.
    fn is_done(&self) -> bool {
        self.done
    }

    /// Called at the end of the byte stream: fine if the answer finished, else `Interrupted`.
    fn finish(&self) -> Result<(), LlmError> {
        if self.done || self.finished {
            Ok(())
        } else {
            Err(LlmError::Interrupted { source: None })
        }
    }
}

impl ChunkDecoder {
    fn decode(&mut self, payload: &str) -> Result<Vec<StreamEvent>, LlmError> {
        let chunk: WireChunk = serde_json::from_str(payload).map_err(|e| protocol(e, payload))?;
        if let Some(error) = chunk.error {
            // Some providers report failures mid-stream as a data event instead of a status.
            return Err(LlmError::Protocol {
                message: format!("provider error: {}", error.message.unwrap_or_default()),
                raw: truncate_utf8(payload.to_string(), MAX_ERROR_BODY),
            });
        }
        if chunk.choices.iter().any(|c| c.finish_reason.is_some()) {
            self.finished = true;
        }
        let mut events = Vec::new();
        let text = chunk
            .choices
            .into_iter()
            .next()
            .and_then(|c| c.delta)
            .and_then(|d| d.content);
        if let Some(text) = text.filter(|t| !t.is_empty()) {
            events.push(StreamEvent::Delta(text));
        }
        if let Some(usage) = chunk.usage {
            events.push(StreamEvent::Usage(usage.into()));
        }
        Ok(events)
    }
}

/// Parses a non-streaming chat.completion response body.
pub(crate) fn parse_completion(body: &str, fallback_model: &str) -> Result<Completion, LlmError> {
    let resp: WireCompletion = serde_json::from_str(body).map_err(|e| protocol(e, body))?;
    let Some(choice) = resp.choices.into_iter().next() else {
        return Err(LlmError::Protocol {
            message: "response has no choices".into(),
            raw: truncate_utf8(body.to_string(), MAX_ERROR_BODY),
        });
    };
    Ok(Completion {
        text: choice.message.content.unwrap_or_default(),
        usage: resp.usage.map(Usage::from),
        model: resp.model.unwrap_or_else(|| fallback_model.to_string()),
    })
}

fn protocol(err: serde_json::Error, raw: &str) -> LlmError {
    LlmError::Protocol {
        message: format!("invalid JSON: {err}"),
        raw: truncate_utf8(raw.to_string(), MAX_ERROR_BODY),
    }
}

// Wire types: only the fields we read; serde ignores the rest, and optional ones default
// because providers differ in what they send (`usage: null`, missing `total_tokens`...).

#[derive(Deserialize)]
struct WireChunk {
    #[serde(default)]
    choices: Vec<WireChunkChoice>,
    usage: Option<WireUsage>,
    error: Option<WireError>,
}

#[derive(Deserialize)]
struct WireChunkChoice {
    delta: Option<WireDelta>,
    finish_reason: Option<String>,
}

#[derive(Deserialize)]
struct WireDelta {
    content: Option<String>,
}

#[derive(Deserialize)]
struct WireError {
    message: Option<String>,
}

#[derive(Deserialize)]
struct WireCompletion {
    #[serde(default)]
    choices: Vec<WireChoice>,
    usage: Option<WireUsage>,
    model: Option<String>,
}

#[derive(Deserialize)]
struct WireChoice {
    message: WireMessage,
}

#[derive(Deserialize)]
struct WireMessage {
    content: Option<String>,
}

#[derive(Deserialize)]
struct WireUsage {
    #[serde(default)]
    prompt_tokens: u32,
    #[serde(default)]
    completion_tokens: u32,
    total_tokens: Option<u32>,
}

impl From<WireUsage> for Usage {
    fn from(u: WireUsage) -> Self {
        Usage {
            prompt_tokens: u.prompt_tokens,
            completion_tokens: u.completion_tokens,
            total_tokens: u
                .total_tokens
                .unwrap_or(u.prompt_tokens + u.completion_tokens),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn delta(text: &str) -> String {
        format!(
            r#"{{"id":"c1","object":"chat.completion.chunk","choices":[{{"index":0,"delta":{{"content":{}}},"finish_reason":null}}]}}"#,
            serde_json::Value::from(text)
        )
    }

    /// Feeds `input` to a fresh parser in pieces of `size` bytes.
    fn feed_in_pieces(input: &[u8], size: usize) -> Vec<String> {
        let mut parser = SseParser::default();
        input
            .chunks(size)
            .flat_map(|piece| parser.feed(piece))
            .collect()
    }

    fn texts(events: &[Result<StreamEvent, LlmError>]) -> Vec<String> {
        events
            .iter()
            .filter_map(|e| match e {
                Ok(StreamEvent::Delta(t)) => Some(t.clone()),
                _ => None,
            })
            .collect()
    }

    #[test]
    fn yields_payloads_of_complete_events_only() {
        let mut p = SseParser::default();
        assert_eq!(p.feed(b"data: one\n\ndata: tw"), vec!["one"]);
        assert_eq!(p.feed(b"o\n"), Vec::<String>::new());
        assert_eq!(p.feed(b"\n"), vec!["two"]);
    }

    #[test]
    fn handles_any_split_including_inside_a_utf8_character() {
        let input = "data: 你好，世界\r\n\r\n: keep-alive\n\ndata: é\n\n".as_bytes();
        for size in 1..=input.len() {
            assert_eq!(
                feed_in_pieces(input, size),
                vec!["你好，世界", "é"],
                "piece size {size}"
            );
        }
    }

    #[test]
    fn ignores_comments_and_other_fields() {
        let input = b": OPENROUTER PROCESSING\nevent: message\nid: 7\nretry: 100\ndata: x\n\n";
        assert_eq!(feed_in_pieces(input, 1000), vec!["x"]);
        // An event with no data line is not dispatched at all.
        assert!(feed_in_pieces(b"event: ping\n\n", 1000).is_empty());
    }

    #[test]
    fn joins_multi_line_data_with_newlines() {
        let input = b"data: {\"a\":\ndata:1}\n\ndata\n\n";
        assert_eq!(feed_in_pieces(input, 3), vec!["{\"a\":\n1}", ""]);
    }

    #[test]
    fn decodes_deltas_then_usage_and_stops_at_done() {
        let body = format!(
            "data: {}\n\ndata: {}\n\ndata: {}\n\ndata: {}\n\ndata: {}\n\ndata: [DONE]\n\ndata: {}\n\n",
            r#"{"choices":[{"index":0,"delta":{"role":"assistant","content":""}}]}"#,
            delta("Hello"),
            delta(", 世界"),
            r#"{"choices":[{"index":0,"delta":{},"finish_reason":"stop"}],"usage":null}"#,
            r#"{"choices":[],"usage":{"prompt_tokens":9,"completion_tokens":2,"total_tokens":11}}"#,
            delta("after done"),
        );
        let mut d = ChunkDecoder::default();
        let events: Vec<_> = body.as_bytes().chunks(7).flat_map(|c| d.feed(c)).collect();
        let usage = Usage {
            prompt_tokens: 9,
            completion_tokens: 2,
            total_tokens: 11,
        };
        let expected = [
            StreamEvent::Delta("Hello".into()),
            StreamEvent::Delta(", 世界".into()),
            StreamEvent::Usage(usage),
        ];
        assert_eq!(events.len(), 3);
        for (got, want) in events.iter().zip(expected) {
            assert_eq!(got.as_ref().ok(), Some(&want));
        }
        assert!(d.is_done());
        assert!(d.finish().is_ok());
    }

    #[test]
    fn malformed_chunk_is_a_protocol_error_with_the_raw_payload() {
        let mut d = ChunkDecoder::default();
        let body = format!(
            "data: {}\n\ndata: {{not json\n\ndata: {}\n\n",
            delta("a"),
            delta("b")
        );
        let events = d.feed(body.as_bytes());
        assert_eq!(texts(&events), vec!["a"]);
        assert_eq!(events.len(), 2, "nothing is decoded after the error");
        match &events[1] {
            Err(LlmError::Protocol { raw, .. }) => assert_eq!(raw, "{not json"),
            other => panic!("expected a protocol error, got {other:?}"),
        }
    }

    #[test]
    fn provider_error_event_is_a_protocol_error() {
        let mut d = ChunkDecoder::default();
        let events = d.feed(b"data: {\"error\":{\"message\":\"quota exceeded\"}}\n\n");
        match &events[..] {
            [Err(LlmError::Protocol { message, .. })] => assert!(message.contains("quota")),
            other => panic!("unexpected {other:?}"),
        }
    }

    #[test]
    fn end_without_done_or_finish_reason_is_interrupted() {
        let mut d = ChunkDecoder::default();
        assert_eq!(
            texts(&d.feed(format!("data: {}\n\n", delta("partial")).as_bytes())),
            ["partial"]
        );
        assert!(matches!(d.finish(), Err(LlmError::Interrupted { .. })));

        // A finish reason without [DONE] is a complete answer.
        let mut d = ChunkDecoder::default();
        d.feed(br#"data: {"choices":[{"delta":{},"finish_reason":"stop"}]}"#);
        d.feed(b"\n\n");
        assert!(d.finish().is_ok());
    }

    #[test]
    fn usage_without_total_is_summed() {
        let mut d = ChunkDecoder::default();
        let events = d.feed(b"data: {\"usage\":{\"prompt_tokens\":3,\"completion_tokens\":4}}\n\n");
        let usage = Usage {
            prompt_tokens: 3,
            completion_tokens: 4,
            total_tokens: 7,
        };
        assert_eq!(events[0].as_ref().ok(), Some(&StreamEvent::Usage(usage)));
    }

    #[test]
    fn parses_a_non_streaming_completion() {
        let body = r#"{"id":"x","object":"chat.completion","model":"qwen-plus-2025",
            "choices":[{"index":0,"message":{"role":"assistant","content":"Hi [1]"},"finish_reason":"stop"}],
            "usage":{"prompt_tokens":5,"completion_tokens":2,"total_tokens":7}}"#;
        let c = parse_completion(body, "qwen-plus").unwrap();
        assert_eq!(c.text, "Hi [1]");
        assert_eq!(c.model, "qwen-plus-2025");
        assert_eq!(c.usage.map(|u| u.total_tokens), Some(7));
    }

    /// Property tests: generated streams, cut anywhere, decode to what was encoded.
    mod props {
        use super::*;
        use proptest::prelude::*;

        /// One event as a provider writes it: its data lines, noise lines (comments and
        /// fields chat ignores) before them, and each line's ending.
        #[derive(Debug, Clone)]
        struct Event {
            noise: Vec<String>,
            data: Vec<String>,
            crlf: Vec<bool>,
        }

        /// Line text: anything but line breaks (a lone `\r` included only mid-line, where
        /// it is content).
        fn line_text() -> impl Strategy<Value = String> {
            "[^\r\n]{0,12}(\r[^\r\n]{1,4})?"
        }

        fn event() -> impl Strategy<Value = Event> {
            let noise = prop_oneof![
                line_text().prop_map(|t| format!(":{t}")),
                line_text().prop_map(|t| format!("event: {t}")),
                "[0-9]{1,4}".prop_map(|t| format!("id: {t}")),
                Just("retry: 100".to_owned()),
            ];
            (
                prop::collection::vec(noise, 0..3),
                prop::collection::vec(line_text(), 1..4),
                prop::collection::vec(any::<bool>(), 8),
            )
                .prop_map(|(noise, data, crlf)| Event { noise, data, crlf })
        }

        fn encode(events: &[Event]) -> Vec<u8> {
            let mut out = String::new();
            for e in events {
                let lines = e
                    .noise
                    .iter()
                    .cloned()
                    .chain(e.data.iter().map(|d| format!("data: {d}")));
                for (i, line) in lines.chain([String::new()]).enumerate() {
                    out.push_str(&line);
                    out.push_str(if e.crlf[i % e.crlf.len()] {
                        "\r\n"
                    } else {
                        "\n"
                    });
                }
            }
            out.into_bytes()
        }

        /// Feeds `bytes` cut at the given points (taken modulo the length).
        fn feed_cut(bytes: &[u8], cuts: &[usize]) -> Vec<String> {
            let mut at: Vec<usize> = cuts.iter().map(|c| c % (bytes.len() + 1)).collect();
            at.extend([0, bytes.len()]);
            at.sort_unstable();
            let mut parser = SseParser::default();
            at.windows(2)
                .flat_map(|w| parser.feed(&bytes[w[0]..w[1]]))
                .collect()
        }

        proptest! {
            #![proptest_config(ProptestConfig { cases: 256, failure_persistence: None, ..ProptestConfig::default() })]

            #[test]
            fn any_cutting_yields_the_encoded_payloads(
                events in prop::collection::vec(event(), 0..6),
                cuts in prop::collection::vec(any::<usize>(), 0..24),
            ) {
                let bytes = encode(&events);
                let expected: Vec<String> = events.iter().map(|e| e.data.join("\n")).collect();
                prop_assert_eq!(&SseParser::default().feed(&bytes), &expected);
                prop_assert_eq!(&feed_cut(&bytes, &cuts), &expected);
            }

            #[test]
            fn arbitrary_bytes_decode_the_same_however_they_are_cut(
                bytes in prop::collection::vec(any::<u8>(), 0..200),
                cuts in prop::collection::vec(any::<usize>(), 0..16),
            ) {
                prop_assert_eq!(feed_cut(&bytes, &cuts), SseParser::default().feed(&bytes));
            }

            #[test]
            fn streamed_deltas_reassemble_the_answer(
                pieces in prop::collection::vec("\\PC{0,6}", 1..12),
                finish in any::<bool>(),
                done in any::<bool>(),
                cuts in prop::collection::vec(any::<usize>(), 0..24),
            ) {
                let mut body = String::new();
                for p in &pieces {
                    body.push_str(&format!("data: {}\n\n", delta(p)));
                }
                if finish {
                    body.push_str("data: {\"choices\":[{\"delta\":{},\"finish_reason\":\"stop\"}]}\n\n");
                }
                if done {
                    body.push_str("data: [DONE]\n\n");
                }
                let bytes = body.as_bytes();
                let mut at: Vec<usize> = cuts.iter().map(|c| c % (bytes.len() + 1)).collect();
                at.extend([0, bytes.len()]);
                at.sort_unstable();
                let mut d = ChunkDecoder::default();
                let events: Vec<_> = at.windows(2).flat_map(|w| d.feed(&bytes[w[0]..w[1]])).collect();
                prop_assert_eq!(texts(&events).concat(), pieces.concat());
                prop_assert!(events.iter().all(Result::is_ok));
                prop_assert_eq!(d.finish().is_ok(), finish || done);
            }
        }
    }

    #[test]
    fn non_streaming_without_choices_or_json_is_a_protocol_error() {
        let err = parse_completion(r#"{"choices":[]}"#, "m").unwrap_err();
        assert!(matches!(err, LlmError::Protocol { .. }));
        match parse_completion("<html>bad gateway</html>", "m").unwrap_err() {
            LlmError::Protocol { raw, .. } => assert_eq!(raw, "<html>bad gateway</html>"),
            other => panic!("unexpected {other:?}"),
        }
    }
}
