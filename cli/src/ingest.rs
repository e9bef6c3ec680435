//! `rag ingest`: validate a knowledge base locally, show what would change in the deployed
//! one, and upload it through the ingest function.
//!
//! The upload is conditional on the version the diff was computed against (`If-Match` with
//! the ETag from `GET`), so what the user saw is what gets replaced: if someone uploaded in
//! between, the function answers 409 and nothing is written. With nothing stored yet the
//! upload uses `If-None-Match: *`. The token comes from an environment variable, never from
//! the command line, where `ps` and shell history would show it.

use std::path::Path;
use std::process::ExitCode;
use std::time::Duration;

use reqwest::header::{AUTHORIZATION, CONTENT_TYPE, IF_MATCH, IF_NONE_MATCH};
use reqwest::StatusCode;
use serde::Deserialize;
use serde_json::Value;
use shared::kb::diff::{fingerprint, summaries, DocSummary, KbDiff};
use shared::kb::parse_kb_bytes;
use shared::Error;

use crate::out::outln;

/// Time allowed for each call to the ingest function (a 5 MiB upload included).
const TIMEOUT: Duration = Duration::from_secs(60);

/// The arguments of `rag ingest`.
pub(crate) struct Args<'a> {
    pub(crate) url: &'a str,
    pub(crate) token_env: &'a str,
    pub(crate) dry_run: bool,
    pub(crate) path: &'a Path,
}

/// Why the command stops: a usage mistake (exit 2) or a failure (exit 1).
enum Stop {
    Usage(String),
    Failed(String),
}

/// Runs the command; prints progress to stdout and problems to stderr.
pub(crate) fn run(args: &Args<'_>) -> ExitCode {
    match execute(args) {
        Ok(()) => ExitCode::SUCCESS,
        Err(Stop::Usage(m)) => {
            eprintln!("error: {m}");
            ExitCode::from(2)
        }
        Err(Stop::Failed(m)) => {
            eprintln!("error: {m}");
            ExitCode::from(1)
        }
    }
}

/// What `GET` reports (the fields this command uses).
#[derive(Deserialize)]
struct Remote {
    etag: String,
    valid: bool,
    content_hash: Option<String>,
    summaries: Vec<DocSummary>,
}

fn execute(args: &Args<'_>) -> Result<(), Stop> {
    let token = std::env::var(args.token_env)
        .ok()
        .filter(|t| !t.trim().is_empty())
        .ok_or_else(|| {
            Stop::Usage(format!(
                "environment variable {} is not set; it must hold the ingest token",
                args.token_env
            ))
        })?;
    if !(args.url.starts_with("https://") || args.url.starts_with("http://")) {
        return Err(Stop::Usage(format!(
            "--url must be an http(s) URL, got {:?}",
            args.url
        )));
    }
    let bytes = std::fs::read(args.path)
        .map_err(|e| Stop::Failed(format!("{}: {e}", args.path.display())))?;
    let origin = args.path.display().to_string();
    match parse_kb_bytes(&bytes, &origin) {
        Ok(_) => {}
        Err(Error::InvalidKb(problems)) => {
            for p in &problems.0 {
                eprintln!("{origin}: {p}");
            }
            return Err(Stop::Failed(format!(
                "{} problem(s) in {origin}; nothing uploaded",
                problems.0.len()
            )));
        }
        Err(e) => return Err(Stop::Failed(e.to_string())),
    }
    // Parsed again as a plain value: the diff is over the documents' JSON as written.
    let local: Value = serde_json::from_slice(&bytes).map_err(|e| Stop::Failed(e.to_string()))?;

    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| Stop::Failed(format!("cannot start the async runtime: {e}")))?;
    runtime.block_on(async {
        let client = reqwest::Client::builder()
            .timeout(TIMEOUT)
            .build()
            .map_err(|e| Stop::Failed(format!("cannot build the HTTP client: {e}")))?;
        let bearer = format!("Bearer {}", token.trim());
        let remote = fetch(&client, args.url, &bearer).await?;
        let local_summaries = summaries(&local);
        let diff = match &remote {
            Some(r) => {
                outln!(
                    "stored: etag {} ({} documents{})",
                    r.etag,
                    r.summaries.len(),
                    if r.valid { "" } else { ", INVALID" }
                );
                KbDiff::between(&r.summaries, &local_summaries)
            }
            None => {
                outln!("stored: nothing yet");
                KbDiff::between(&[], &local_summaries)
            }
        };
        print_diff(&diff);
        let unchanged = remote.as_ref().is_some_and(|r| {
            r.valid && r.content_hash.as_deref() == Some(fingerprint(&local).as_str())
        });
        if unchanged {
            outln!("no changes: {origin} matches the stored version; nothing uploaded");
            return Ok(());
        }
        if args.dry_run {
            outln!("dry run: nothing uploaded");
            return Ok(());
        }
        upload(&client, args.url, &bearer, bytes, remote.as_ref()).await
    })
}

/// `GET` the stored version; `None` when nothing is stored yet (404).
async fn fetch(client: &reqwest::Client, url: &str, bearer: &str) -> Result<Option<Remote>, Stop> {
    let res = client
        .get(url)
        .header(AUTHORIZATION, bearer)
        .send()
        .await
        .map_err(|e| Stop::Failed(format!("GET {url}: {e}")))?;
    let status = res.status();
    let body = res
        .bytes()
        .await
        .map_err(|e| Stop::Failed(format!("GET {url}: {e}")))?;
    if status == StatusCode::NOT_FOUND {
        return Ok(None);
    }
    if !status.is_success() {
        return Err(Stop::Failed(format!(
            "GET {url}: {}",
            describe(status, &body)
        )));
    }
    serde_json::from_slice(&body)
        .map(Some)
        .map_err(|e| Stop::Failed(format!("GET {url}: unexpected answer ({e})")))
}

async fn upload(
    client: &reqwest::Client,
    url: &str,
    bearer: &str,
    bytes: Vec<u8>,
    remote: Option<&Remote>,
) -> Result<(), Stop> {
    let req = client
        .put(url)
        .header(AUTHORIZATION, bearer)
        .header(CONTENT_TYPE, "application/json");
    let req = match remote {
        Some(r) => req.header(IF_MATCH, format!("\"{}\"", r.etag)),
        None => req.header(IF_NONE_MATCH, "*"),
    };
    let res = req
        .body(bytes)
        .send()
        .await
        .map_err(|e| Stop::Failed(format!("PUT {url}: {e}")))?;
    let status = res.status();
    let body = res
        .bytes()
        .await
        .map_err(|e| Stop::Failed(format!("PUT {url}: {e}")))?;
    if status == StatusCode::CONFLICT {
        return Err(Stop::Failed(format!(
            "the stored knowledge base changed since it was read (someone else uploaded); \
             nothing was written: run rag ingest again to see the new diff ({})",
            describe(status, &body)
        )));
    }
    if !status.is_success() {
        return Err(Stop::Failed(format!(
            "PUT {url}: {}",
            describe(status, &body)
        )));
    }
    let report: Value = serde_json::from_slice(&body).unwrap_or(Value::Null);
    outln!(
        "uploaded: etag {} ({} documents)",
        report["etag"].as_str().unwrap_or("?"),
        report["documents"]
    );
    if report["audited"] == Value::Bool(false) {
        eprintln!("warning: the function could not write the audit record (see its log)");
    }
    Ok(())
}

fn print_diff(diff: &KbDiff) {
    for (mark, ids) in [
        ("+", &diff.added),
        ("~", &diff.changed),
        ("-", &diff.removed),
    ] {
        for id in ids {
            outln!("  {mark} {id}");
        }
    }
    outln!(
        "{} added, {} changed, {} removed",
        diff.added.len(),
        diff.changed.len(),
        diff.removed.len()
    );
}

/// An error answer in words: its status, message and every listed problem.
fn describe(status: StatusCode, body: &[u8]) -> String {
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
