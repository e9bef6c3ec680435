//! `rag ingest`: validate a knowledge base locally, show what would change in the deployed
//! one, and upload it through the ingest function.
//!
//! The upload is conditional on the version the diff was computed against (`If-Match` with
//! the ETag from `GET`), so what the user saw is what gets replaced: if someone uploaded in
//! between, the function answers 409 and nothing is written. With nothing stored yet the
//! upload uses `If-None-Match: *`. The token comes from an environment variable, never from
//! the command line, where `ps` and shell history would show it. A file larger than
//! `--stage-above` bytes (default: the function's 5 MiB request limit) is uploaded through
//! a staged upload (see [`crate::remote`]).

use std::path::Path;
use std::process::ExitCode;

use serde_json::Value;
use shared::kb::parse_kb_bytes;
use shared::kb::{fingerprint, rest_fingerprint, summaries, DocSummary, KbDiff};
use shared::Error;

use crate::out::outln;
use crate::remote::{print_written, Condition, IngestClient, Written};

/// The arguments of `rag ingest`.
pub(crate) struct Args<'a> {
    pub(crate) url: &'a str,
    pub(crate) token_env: &'a str,
    pub(crate) dry_run: bool,
    pub(crate) path: &'a Path,
    /// Files larger than this many bytes go through a staged upload.
    pub(crate) stage_above: usize,
}

/// Why a command stops: a usage mistake (exit 2) or a failure (exit 1).
pub(crate) enum Stop {
    Usage(String),
    Failed(String),
}

/// The exit code for a command's result; prints the reason it stopped to stderr.
pub(crate) fn exit(result: Result<(), Stop>) -> ExitCode {
    match result {
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

/// Runs the command; prints progress to stdout and problems to stderr.
pub(crate) fn run(args: &Args<'_>) -> ExitCode {
    exit(execute(args))
}

/// A local knowledge-base file, validated, with what diffing it needs.
pub(crate) struct LocalKb {
    /// The file's bytes, uploaded as they are.
    pub(crate) bytes: Vec<u8>,
    /// The file as plain JSON: diffs are over the documents' JSON as written.
    pub(crate) value: Value,
    /// Its documents' summaries.
    pub(crate) summaries: Vec<DocSummary>,
    /// Its glossary entries.
    pub(crate) glossary_entries: usize,
    /// The path, for messages.
    pub(crate) origin: String,
}

impl LocalKb {
    /// Reads and validates `path`; every problem is printed to stderr.
    pub(crate) fn load(path: &Path) -> Result<Self, Stop> {
        let bytes =
            std::fs::read(path).map_err(|e| Stop::Failed(format!("{}: {e}", path.display())))?;
        let origin = path.display().to_string();
        let kb = match parse_kb_bytes(&bytes, &origin) {
            Ok(kb) => kb,
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
        };
        let value: Value =
            serde_json::from_slice(&bytes).map_err(|e| Stop::Failed(e.to_string()))?;
        Ok(Self {
            summaries: summaries(&value),
            glossary_entries: kb.glossary.len(),
            bytes,
            value,
            origin,
        })
    }

    /// [`fingerprint`] of the whole file.
    pub(crate) fn content_hash(&self) -> String {
        fingerprint(&self.value)
    }

    /// [`rest_fingerprint`] of the file: its glossary.
    pub(crate) fn rest_hash(&self) -> String {
        rest_fingerprint(&self.value)
    }
}

/// A single-threaded runtime for a command's HTTP calls.
pub(crate) fn runtime() -> Result<tokio::runtime::Runtime, Stop> {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| Stop::Failed(format!("cannot start the async runtime: {e}")))
}

fn execute(args: &Args<'_>) -> Result<(), Stop> {
    let client = IngestClient::new(args.url, args.token_env)?;
    let local = LocalKb::load(args.path)?;
    runtime()?.block_on(async {
        let remote = client.status().await?;
        let diff = match &remote {
            Some(r) => {
                outln!(
                    "stored: etag {} ({} documents{})",
                    r.etag,
                    r.summaries.len(),
                    if r.valid { "" } else { ", INVALID" }
                );
                KbDiff::between(&r.summaries, &local.summaries)
            }
            None => {
                outln!("stored: nothing yet");
                KbDiff::between(&[], &local.summaries)
            }
        };
        print_diff(&diff);
        let unchanged = remote.as_ref().is_some_and(|r| {
            r.valid && r.content_hash.as_deref() == Some(local.content_hash().as_str())
        });
        if unchanged {
            outln!(
                "no changes: {} matches the stored version; nothing uploaded",
                local.origin
            );
            return Ok(());
        }
        if args.dry_run {
            outln!("dry run: nothing uploaded");
            return Ok(());
        }
        let condition = Condition::for_remote(remote.as_ref());
        match client
            .replace(local.bytes.clone(), &condition, args.stage_above)
            .await?
        {
            Written::Stored(report) => {
                print_written(&report);
                Ok(())
            }
            Written::Conflict(why) => Err(Stop::Failed(format!(
                "the stored knowledge base changed since it was read (someone else uploaded); \
                 nothing was written: run rag ingest again to see the new diff ({why})"
            ))),
            Written::TooLarge(why) => Err(Stop::Failed(format!(
                "the knowledge base is too large to upload: {why}"
            ))),
        }
    })
}

/// Prints each id with `+` (added), `~` (changed) or `-` (removed), then the counts.
pub(crate) fn print_diff(diff: &KbDiff) {
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
