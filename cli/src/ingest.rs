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

use shared::kb::KbDiff;

use crate::local_kb::{print_diff, LocalKb};
use crate::out::outln;
use crate::remote::{print_written, Condition, IngestClient, Written};
use crate::stop::{exit, runtime, Stop};

/// The arguments of `rag ingest`.
pub(crate) struct Args<'a> {
    pub(crate) url: &'a str,
    pub(crate) token_env: &'a str,
    pub(crate) dry_run: bool,
    pub(crate) path: &'a Path,
    /// Files larger than this many bytes go through a staged upload.
    pub(crate) stage_above: usize,
}

/// Runs the command; prints progress to stdout and problems to stderr.
pub(crate) fn run(args: &Args<'_>) -> ExitCode {
    exit(execute(args))
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
