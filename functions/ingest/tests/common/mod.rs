//! Helpers shared by the ingest handler tests: function-URL events and calls.
#![allow(dead_code)] // each test binary uses a different subset

use std::sync::Arc;

use ingest::{function_handler, AppState};
use lambda_http::http::HeaderMap;
use lambda_http::{Body, Request};
use serde_json::{json, Value};
use shared::ingest::IngestConfig;
use shared::{Config, ConversationStore, KbSource};

/// A PUT with a bearer token, an `If-Match` and a one-document body, as a function URL
/// delivers it.
pub(crate) const PUT_EVENT: &str = include_str!("../data/function_url_put.json");

pub(crate) const KB: &str = r#"{"documents": [
  {"id": "pfc", "type": "publication", "title": "Partial FC: Training 10 Million Identities on a Single Machine",
   "summary": "Face recognition training at scale.", "paper_url": "https://arxiv.org/abs/2010.05222"},
  {"id": "notes", "type": "page", "title": "Notes", "content": "cooking recipes"}
], "glossary": {"人脸识别": ["face recognition"]}}"#;

/// A function-URL event built from the PUT fixture.
pub(crate) struct Event {
    ev: Value,
}

impl Event {
    /// The fixture with its method replaced; token and `If-Match` as in the fixture.
    pub(crate) fn new(method: &str) -> Self {
        let mut ev: Value = serde_json::from_str(PUT_EVENT).unwrap();
        ev["requestContext"]["http"]["method"] = json!(method);
        Self { ev }
    }

    /// Sets a header.
    pub(crate) fn header(mut self, name: &str, value: &str) -> Self {
        self.ev["headers"][name] = json!(value);
        self
    }

    /// Removes a header.
    pub(crate) fn without(mut self, name: &str) -> Self {
        if let Some(h) = self.ev["headers"].as_object_mut() {
            h.remove(name);
        }
        self
    }

    /// Sets `If-Match` to a quoted etag.
    pub(crate) fn if_match(self, etag: &str) -> Self {
        self.header("if-match", &format!("\"{etag}\""))
    }

    /// Sets the body (or removes it).
    pub(crate) fn body(mut self, body: Option<&str>) -> Self {
        match body {
            Some(b) => {
                self.ev["headers"]["content-length"] = json!(b.len().to_string());
                self.ev["body"] = json!(b);
            }
            None => {
                if let Some(e) = self.ev.as_object_mut() {
                    e.remove("body");
                }
            }
        }
        self
    }

    /// Sets a query parameter.
    pub(crate) fn query(mut self, name: &str, value: &str) -> Self {
        self.ev["rawQueryString"] = json!(format!("{name}={}", value.replace(' ', "%20")));
        self.ev["queryStringParameters"] = json!({ name: value });
        self
    }

    /// Sets several query parameters (replacing any set before).
    pub(crate) fn queries(mut self, pairs: &[(&str, &str)]) -> Self {
        let raw: Vec<String> = pairs
            .iter()
            .map(|(k, v)| format!("{k}={}", v.replace(' ', "%20")))
            .collect();
        self.ev["rawQueryString"] = json!(raw.join("&"));
        let map: serde_json::Map<String, Value> = pairs
            .iter()
            .map(|(k, v)| ((*k).to_owned(), json!(v)))
            .collect();
        self.ev["queryStringParameters"] = Value::Object(map);
        self
    }

    /// Sets a different request id (audit records are keyed by it).
    pub(crate) fn request_id(mut self, id: &str) -> Self {
        self.ev["requestContext"]["requestId"] = json!(id);
        self
    }

    /// Marks the body as base64, as function URLs deliver non-text content types.
    pub(crate) fn base64(mut self) -> Self {
        self.ev["isBase64Encoded"] = json!(true);
        self
    }

    /// The event as the runtime hands it to the handler.
    pub(crate) fn build(self) -> Request {
        lambda_http::request::from_str(&self.ev.to_string()).expect("valid function URL event")
    }
}

/// A state over `source` and `store` accepting the token whose hash is `token_sha256` (none:
/// ingest disabled).
pub(crate) fn state_with(
    source: Arc<dyn KbSource>,
    store: Arc<dyn ConversationStore>,
    token_sha256: Option<&str>,
    max_bytes: Option<usize>,
) -> AppState {
    let max = max_bytes.map(|m| m.to_string());
    let ingest = IngestConfig::from_lookup(|k| match k {
        "INGEST_TOKEN_SHA256" => token_sha256.map(str::to_owned),
        "INGEST_MAX_BYTES" => max.clone(),
        _ => None,
    })
    .unwrap();
    let config = Config::from_lookup(|k| {
        (k == "ALLOWED_ORIGINS").then(|| "https://site.example".to_string())
    })
    .unwrap();
    AppState::new(source, store, &config, &ingest)
}

/// The hash of the fixture's token, `secret` (`printf %s secret | sha256sum`).
pub(crate) const TOKEN_SHA256: &str =
    "2bb80d537b1da3e38bd30361aa855686bde0eacd7162fef6a25fe97bf527a25b";

/// Calls the handler; returns status, JSON body (null when empty or not JSON) and headers.
pub(crate) async fn call(state: &AppState, req: Request) -> (u16, Value, HeaderMap) {
    let res = function_handler(state, req).await.unwrap();
    let status = res.status().as_u16();
    let body = match res.body() {
        Body::Empty => Value::Null,
        b => serde_json::from_slice(b.as_ref()).unwrap_or(Value::Null),
    };
    (status, body, res.headers().clone())
}

/// The `error.code` and `error.message` of an error body.
pub(crate) fn error_of(body: &Value) -> (String, String) {
    (
        body["error"]["code"]
            .as_str()
            .unwrap_or_default()
            .to_owned(),
        body["error"]["message"]
            .as_str()
            .unwrap_or_default()
            .to_owned(),
    )
}
