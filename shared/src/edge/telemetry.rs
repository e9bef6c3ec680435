//! Logging set-up and per-request telemetry shared by the functions.
//!
//! Each request ends with one structured log line (`request done`: request id, function,
//! status, latency, hit ids, model, tokens) and, for chat, one CloudWatch Embedded Metric
//! Format (EMF) line on stdout, from which CloudWatch extracts metrics with no API call and
//! no extra permission. Neither ever carries prompts, answers, keys or client addresses:
//! only ids, counts and timings.

use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use serde_json::{json, Map, Value};

use crate::chat::{ChatEvent, ChatResponse};
use crate::message::Usage;

/// The CloudWatch namespace of the custom metrics (the template's alarms read it).
pub(super) const NAMESPACE: &str = "RagChat";

/// Installs the Lambda runtime's default subscriber: honours `AWS_LAMBDA_LOG_LEVEL`,
/// `RUST_LOG` and `AWS_LAMBDA_LOG_FORMAT=json` (one JSON object per line in CloudWatch).
pub fn init_tracing() {
    lambda_http::tracing::init_default_subscriber();
}

/// One metric value with its CloudWatch unit (`Milliseconds`, `Count`, ...).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Metric {
    /// The CloudWatch metric name (`Latency`, `Errors`, `TimeToFirstToken`, ...): what
    /// dashboards and alarms select on, so renaming one breaks them.
    pub name: &'static str,
    /// CloudWatch's name of the unit `value` is in.
    pub unit: &'static str,
    /// One observation, in `unit`.
    pub value: f64,
}

/// One EMF document: `metrics` under [`NAMESPACE`] with the single dimension
/// `Function=<function>`, stamped `timestamp_ms` (Unix epoch milliseconds).
///
/// One dimension set keeps the metric count (and its cost) fixed: per-request values such as
/// the request id would create a metric per request.
pub(super) fn emf_document(function: &str, timestamp_ms: u64, metrics: &[Metric]) -> Value {
    let definitions: Vec<Value> = metrics
        .iter()
        .map(|m| json!({ "Name": m.name, "Unit": m.unit }))
        .collect();
    let mut doc = Map::new();
    doc.insert(
        "_aws".into(),
        json!({
            "Timestamp": timestamp_ms,
            "CloudWatchMetrics": [{
                "Namespace": NAMESPACE,
                "Dimensions": [["Function"]],
                "Metrics": definitions,
            }],
        }),
    );
    doc.insert("Function".into(), Value::from(function));
    for m in metrics {
        doc.insert(m.name.into(), Value::from(m.value));
    }
    Value::Object(doc)
}

/// Prints [`emf_document`] as one line on stdout, where Lambda's log capture picks it up.
pub(super) fn emit_metrics(function: &str, metrics: &[Metric]) {
    if metrics.is_empty() {
        return;
    }
    let now = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX));
    println!("{}", emf_document(function, now, metrics));
}

/// What one request did, gathered while it runs and reported once by [`Self::finish`].
#[derive(Debug)]
pub struct RequestLog {
    function: &'static str,
    request_id: String,
    started: Instant,
    /// The HTTP status sent (a stream is 200 even when the model fails).
    pub status: u16,
    /// Ids of the documents found (search) or offered as sources (chat).
    pub hit_ids: Vec<String>,
    /// The model that answered (`offline` when none).
    pub model: Option<String>,
    /// Tokens the model read and wrote.
    pub usage: Option<Usage>,
    /// From the request's arrival to the first piece of the answer (chat streams).
    pub first_token: Option<Duration>,
    /// A failure the status does not show (an `error` event in a stream).
    pub error: Option<&'static str>,
}

impl RequestLog {
    /// Starts timing a request to `function`.
    pub fn start(function: &'static str, request_id: impl Into<String>) -> Self {
        Self {
            function,
            request_id: request_id.into(),
            started: Instant::now(),
            status: 200,
            hit_ids: Vec::new(),
            model: None,
            usage: None,
            first_token: None,
            error: None,
        }
    }

    /// Takes what is worth reporting from a streamed chat event.
    pub fn observe(&mut self, event: &ChatEvent) {
        match event {
            ChatEvent::Sources(s) => {
                self.hit_ids = s.sources.iter().map(|s| s.id.clone()).collect();
            }
            ChatEvent::Delta { .. } => {
                self.first_token
                    .get_or_insert_with(|| self.started.elapsed());
            }
            ChatEvent::Done(done) => {
                self.model = Some(done.model.clone());
                self.usage = Some(done.usage);
            }
            ChatEvent::Error(e) => self.error = Some(crate::edge::http::ApiError::from(&**e).code),
        }
    }

    /// Takes what is worth reporting from a whole chat answer.
    pub fn observe_response(&mut self, res: &ChatResponse) {
        self.hit_ids = res.sources.iter().map(|s| s.id.clone()).collect();
        self.model = Some(res.done.model.clone());
        self.usage = Some(res.done.usage);
    }

    /// Whether the request failed (a 5xx, or a failure inside a 200 stream). 4xx are the
    /// caller's mistakes, not the service's.
    pub fn failed(&self) -> bool {
        self.status >= 500 || self.error.is_some()
    }

    /// The metrics this request contributes: latency and errors always; time to first
    /// token and tokens when there was a model answer.
    pub fn metrics(&self, latency: Duration) -> Vec<Metric> {
        let ms = |d: Duration| d.as_secs_f64() * 1000.0;
        let mut out = vec![
            Metric {
                name: "Latency",
                unit: "Milliseconds",
                value: ms(latency),
            },
            Metric {
                name: "Errors",
                unit: "Count",
                value: if self.failed() { 1.0 } else { 0.0 },
            },
        ];
        if let Some(t) = self.first_token {
            out.push(Metric {
                name: "TimeToFirstToken",
                unit: "Milliseconds",
                value: ms(t),
            });
        }
        if let Some(u) = self.usage {
            for (name, value) in [
                ("TokensIn", u.prompt_tokens),
                ("TokensOut", u.completion_tokens),
                ("TokensTotal", u.total_tokens),
            ] {
                out.push(Metric {
                    name,
                    unit: "Count",
                    value: f64::from(value),
                });
            }
        }
        out
    }

    /// Logs the request's one summary line.
    pub fn finish(self) {
        self.log(self.started.elapsed());
    }

    /// [`Self::finish`] with the status sent.
    pub fn finish_status(mut self, status: u16) {
        self.status = status;
        self.finish();
    }

    /// Logs the summary line and prints the request's EMF metrics. Only chat answers use
    /// this: Lambda's own metrics already cover the other functions' duration and errors,
    /// and every custom metric is billed.
    pub fn finish_with_metrics(self) {
        let latency = self.started.elapsed();
        self.log(latency);
        emit_metrics(self.function, &self.metrics(latency));
    }

    fn log(&self, latency: Duration) {
        let usage = self.usage.unwrap_or_default();
        tracing::info!(
            request_id = %self.request_id,
            function = self.function,
            status = self.status,
            latency_ms = u64::try_from(latency.as_millis()).unwrap_or(u64::MAX),
            first_token_ms = self.first_token.map(|d| d.as_millis() as u64),
            hits = ?self.hit_ids,
            model = self.model.as_deref(),
            tokens_in = usage.prompt_tokens,
            tokens_out = usage.completion_tokens,
            error = self.error,
            "request done"
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn emf_document_declares_every_metric_and_carries_its_value() {
        let doc = emf_document(
            "chat",
            1_700_000_000_000,
            &[
                Metric {
                    name: "Latency",
                    unit: "Milliseconds",
                    value: 12.5,
                },
                Metric {
                    name: "TokensTotal",
                    unit: "Count",
                    value: 42.0,
                },
            ],
        );
        let expected = json!({
            "_aws": {
                "Timestamp": 1_700_000_000_000_u64,
                "CloudWatchMetrics": [{
                    "Namespace": "RagChat",
                    "Dimensions": [["Function"]],
                    "Metrics": [
                        {"Name": "Latency", "Unit": "Milliseconds"},
                        {"Name": "TokensTotal", "Unit": "Count"}
                    ]
                }]
            },
            "Function": "chat",
            "Latency": 12.5,
            "TokensTotal": 42.0
        });
        assert_eq!(doc, expected);
        // One line: CloudWatch reads one log event per line.
        assert!(!doc.to_string().contains('\n'));
    }

    #[test]
    fn metrics_follow_what_the_request_did() {
        let mut log = RequestLog::start("chat", "r1");
        let names = |log: &RequestLog| -> Vec<&str> {
            log.metrics(Duration::from_millis(5))
                .iter()
                .map(|m| m.name)
                .collect()
        };
        assert_eq!(names(&log), ["Latency", "Errors"]);
        log.observe(&ChatEvent::Delta { text: "a".into() });
        log.usage = Some(Usage {
            prompt_tokens: 10,
            completion_tokens: 3,
            total_tokens: 13,
        });
        assert_eq!(
            names(&log),
            [
                "Latency",
                "Errors",
                "TimeToFirstToken",
                "TokensIn",
                "TokensOut",
                "TokensTotal"
            ]
        );
        assert!(!log.failed());
        let refused = crate::llm::LlmError::Status {
            status: 500,
            body: String::new(),
            retry_after: None,
        };
        log.observe(&ChatEvent::Error(std::sync::Arc::new(
            crate::error::Error::Llm(refused),
        )));
        assert!(log.failed());
        let errors = log.metrics(Duration::ZERO)[1];
        assert_eq!((errors.name, errors.value), ("Errors", 1.0));
    }
}
