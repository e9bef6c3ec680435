//! The ingest function's HTTP API as `rag ingest` and `rag sync` call it: read the stored
//! version, write a whole knowledge base (in one request or staged), patch documents.
//!
//! Writes answer [`Written`]: a lost race (409) is an outcome the caller decides about
//! (`rag ingest` stops, `rag sync` re-reads and retries), not an error.

use std::time::Duration;

use reqwest::header::{AUTHORIZATION, CONTENT_TYPE, IF_MATCH, IF_NONE_MATCH};
use reqwest::{RequestBuilder, StatusCode};
use serde::Deserialize;
use serde_json::Value;
use shared::kb::DocSummary;

use crate::out::outln;
use crate::stop::Stop;

/// Time allowed for each call to the ingest function (a 5 MiB upload included): the
/// promotion of a large staged knowledge base validates, indexes and measures it there
/// (the template gives the function 300 s).
const TIMEOUT: Duration = Duration::from_secs(300);

/// Time allowed for uploading a staged file straight to the store (the default limit,
/// 256 MiB, at about 3 Mbit/s; a slower line should use a closer machine).
const UPLOAD_TIMEOUT: Duration = Duration::from_secs(15 * 60);

/// The deployed knowledge base `rag ingest` and `rag sync` write to, and how: the options
/// the two commands share.
#[derive(Debug, Clone, clap::Args)]
pub(crate) struct Target {
    /// The ingest function's URL.
    #[arg(long)]
    pub(crate) url: String,
    /// Name of the environment variable holding the ingest token (never the token).
    #[arg(long, value_name = "VAR")]
    pub(crate) token_env: String,
    /// Show the diff but send nothing.
    #[arg(long)]
    pub(crate) dry_run: bool,
    /// Send requests larger than this many bytes through a staged upload.
    #[arg(long, value_name = "BYTES", default_value_t = shared::ingest::DEFAULT_MAX_BYTES)]
    pub(crate) stage_above: usize,
}

/// What `GET` reports (the fields these commands use).
#[derive(Debug, Clone, Deserialize)]
pub(crate) struct Remote {
    /// The stored object's ETag: an update is conditional on it (`If-Match`), so a
    /// version changed meanwhile is not overwritten.
    pub(crate) etag: String,
    /// Whether it is a valid knowledge base.
    pub(crate) valid: bool,
    /// Fingerprint of the whole stored JSON.
    pub(crate) content_hash: Option<String>,
    /// Fingerprint of everything but the documents (absent from older functions).
    #[serde(default)]
    pub(crate) rest_hash: Option<String>,
    /// Number of glossary entries.
    #[serde(default)]
    pub(crate) glossary_entries: usize,
    /// Each document's id, type and fingerprint.
    pub(crate) summaries: Vec<DocSummary>,
}

/// Which stored version a write replaces.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Condition {
    /// The version with this ETag (`If-Match`).
    IfMatch(String),
    /// Nothing stored yet (`If-None-Match: *`).
    IfAbsent,
}

impl Condition {
    /// The condition for replacing what `GET` reported.
    pub(crate) fn for_remote(remote: Option<&Remote>) -> Self {
        remote.map_or(Self::IfAbsent, |r| Self::IfMatch(r.etag.clone()))
    }

    fn apply(&self, req: RequestBuilder) -> RequestBuilder {
        match self {
            Self::IfMatch(etag) => req.header(IF_MATCH, format!("\"{etag}\"")),
            Self::IfAbsent => req.header(IF_NONE_MATCH, "*"),
        }
    }
}

/// How a write ended, when the function answered.
#[derive(Debug)]
pub(crate) enum Written {
    /// Stored; the function's report (`etag`, `documents`, the diff, `audited`).
    Stored(Value),
    /// The stored version changed since it was read (409); nothing was written.
    Conflict(String),
    /// The request body is over the function's limit (413); nothing was written.
    TooLarge(String),
}

/// What `POST ?stage=1` answers.
#[derive(Deserialize)]
struct Ticket {
    upload_url: String,
    #[serde(default)]
    headers: std::collections::BTreeMap<String, String>,
    staging_key: String,
}

/// An authenticated client of one ingest function.
pub(crate) struct IngestClient {
    http: reqwest::Client,
    url: String,
    bearer: String,
}

impl IngestClient {
    /// A client for `url` with the token held in the environment variable `token_env`
    /// (read here, so a missing token is a usage error before any file is read).
    pub(crate) fn new(url: &str, token_env: &str) -> Result<Self, Stop> {
        let token = std::env::var(token_env)
            .ok()
            .filter(|t| !t.trim().is_empty())
            .ok_or_else(|| {
                Stop::Usage(format!(
                    "environment variable {token_env} is not set; it must hold the ingest token"
                ))
            })?;
        if !(url.starts_with("https://") || url.starts_with("http://")) {
            return Err(Stop::Usage(format!(
                "--url must be an http(s) URL, got {url:?}"
            )));
        }
        let http = reqwest::Client::builder()
            .timeout(TIMEOUT)
            .build()
            .map_err(|e| Stop::Failed(format!("cannot build the HTTP client: {e}")))?;
        Ok(Self {
            http,
            url: url.to_owned(),
            bearer: format!("Bearer {}", token.trim()),
        })
    }

    /// `GET` the stored version; `None` when nothing is stored yet (404).
    pub(crate) async fn status(&self) -> Result<Option<Remote>, Stop> {
        let req = self.http.get(&self.url).header(AUTHORIZATION, &self.bearer);
        let (status, body) = self.send("GET", req).await?;
        if status == StatusCode::NOT_FOUND {
            return Ok(None);
        }
        if !status.is_success() {
            return Err(self.failed("GET", status, &body));
        }
        serde_json::from_slice(&body)
            .map(Some)
            .map_err(|e| Stop::Failed(format!("GET {}: unexpected answer ({e})", self.url)))
    }

    /// Replaces the whole knowledge base: in one `PUT` when `bytes` fit in `stage_above`,
    /// else (or when the function answers 413) through a staged upload.
    pub(crate) async fn replace(
        &self,
        bytes: Vec<u8>,
        condition: &Condition,
        stage_above: usize,
    ) -> Result<Written, Stop> {
        if bytes.len() > stage_above {
            return self.staged(bytes, condition).await;
        }
        let req = self
            .http
            .put(&self.url)
            .header(AUTHORIZATION, &self.bearer)
            .header(CONTENT_TYPE, "application/json")
            .body(bytes.clone());
        match self.write("PUT", condition.apply(req)).await? {
            Written::TooLarge(why) => {
                outln!(
                    "the function refused one request of {} bytes ({why}); staging it",
                    bytes.len()
                );
                self.staged(bytes, condition).await
            }
            other => Ok(other),
        }
    }

    /// `PATCH {"upsert", "delete"}` against the version `etag`.
    pub(crate) async fn patch(&self, body: Vec<u8>, etag: &str) -> Result<Written, Stop> {
        let req = self
            .http
            .patch(&self.url)
            .header(AUTHORIZATION, &self.bearer)
            .header(CONTENT_TYPE, "application/json")
            .body(body);
        self.write("PATCH", Condition::IfMatch(etag.to_owned()).apply(req))
            .await
    }

    /// Asks for an upload URL, uploads `bytes` to it, and has the function validate and
    /// promote the staged object (which it deletes either way).
    async fn staged(&self, bytes: Vec<u8>, condition: &Condition) -> Result<Written, Stop> {
        let req = self
            .http
            .post(self.with_query(&[("stage", "1"), ("bytes", &bytes.len().to_string())])?)
            .header(AUTHORIZATION, &self.bearer);
        let (status, body) = self.send("POST ?stage=1", req).await?;
        if !status.is_success() {
            return Err(self.failed("POST ?stage=1", status, &body));
        }
        let ticket: Ticket = serde_json::from_slice(&body)
            .map_err(|e| Stop::Failed(format!("POST ?stage=1: unexpected answer ({e})")))?;
        outln!(
            "staged upload: {} bytes to {}",
            bytes.len(),
            ticket.staging_key
        );
        let mut upload = self
            .http
            .put(&ticket.upload_url)
            .timeout(UPLOAD_TIMEOUT)
            .body(bytes);
        for (name, value) in &ticket.headers {
            upload = upload.header(name, value);
        }
        // The URL is signed; its query string is a credential and stays out of messages.
        let res = upload
            .send()
            .await
            .map_err(|e| Stop::Failed(format!("upload to the staging URL: {}", e.without_url())))?;
        let status = res.status();
        if !status.is_success() {
            let text = res.text().await.unwrap_or_default();
            let head: String = text.chars().take(300).collect();
            return Err(Stop::Failed(format!(
                "upload to the staging URL: HTTP {}: {head}",
                status.as_u16()
            )));
        }
        let req = self
            .http
            .post(self.with_query(&[("promote", &ticket.staging_key)])?)
            .header(AUTHORIZATION, &self.bearer);
        self.write("POST ?promote", condition.apply(req)).await
    }

    /// Sends a write and sorts its answer into [`Written`].
    async fn write(&self, what: &str, req: RequestBuilder) -> Result<Written, Stop> {
        let (status, body) = self.send(what, req).await?;
        match status {
            StatusCode::CONFLICT => Ok(Written::Conflict(describe(status, &body))),
            StatusCode::PAYLOAD_TOO_LARGE => Ok(Written::TooLarge(describe(status, &body))),
            s if s.is_success() => Ok(Written::Stored(
                serde_json::from_slice(&body).unwrap_or(Value::Null),
            )),
            s => Err(self.failed(what, s, &body)),
        }
    }

    async fn send(&self, what: &str, req: RequestBuilder) -> Result<(StatusCode, Vec<u8>), Stop> {
        let res = req
            .send()
            .await
            .map_err(|e| Stop::Failed(format!("{what} {}: {e}", self.url)))?;
        let status = res.status();
        let body = res
            .bytes()
            .await
            .map_err(|e| Stop::Failed(format!("{what} {}: {e}", self.url)))?;
        Ok((status, body.to_vec()))
    }

    /// The function's URL with `pairs` added to its query string.
    fn with_query(&self, pairs: &[(&str, &str)]) -> Result<reqwest::Url, Stop> {
        let mut url = reqwest::Url::parse(&self.url)
            .map_err(|e| Stop::Usage(format!("--url {:?}: {e}", self.url)))?;
        url.query_pairs_mut().extend_pairs(pairs);
        Ok(url)
    }

    fn failed(&self, what: &str, status: StatusCode, body: &[u8]) -> Stop {
        Stop::Failed(format!("{what} {}: {}", self.url, describe(status, body)))
    }
}

/// Prints what a successful write reported.
pub(crate) fn print_written(report: &Value) {
    outln!(
        "uploaded: etag {} ({} documents)",
        report["etag"].as_str().unwrap_or("?"),
        report["documents"]
    );
    if report["audited"] == Value::Bool(false) {
        eprintln!("warning: the function could not write the audit record (see its log)");
    }
}

/// An error answer in words: its status, message and every listed problem.
pub(crate) fn describe(status: StatusCode, body: &[u8]) -> String {
    let v: Value = serde_json::from_slice(body).unwrap_or(Value::Null);
    let mut out = format!("HTTP {}", status.as_u16());
    if let Some(m) = v["error"]["message"].as_str() {
        out.push_str(": ");
        out.push_str(m);
    }
    for p in v["error"]["problems"].as_array().into_iter().flatten() {
        out.push_str(&format!(
            "\n  {}: {}",
            p["path"].as_str().unwrap_or(""),
            p["message"].as_str().unwrap_or("")
        ));
    }
    out
}
