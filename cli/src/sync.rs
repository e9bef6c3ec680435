//! `rag sync`: make the deployed knowledge base match a local file, sending only what
//! changed.
//!
//! The deployed version's document summaries (id, type, fingerprint) and glossary
//! fingerprint come from the ingest function's `GET`; the diff against the local file is
//! [`KbDiff`], the same the function reports. Changed documents go as one `PATCH
//! {"upsert", "delete"}` against the version read (`If-Match`). A glossary change, a
//! missing or invalid deployed version, or a patch too large for one request is sent as
//! the whole file instead (`PUT`, or a staged upload above `--stage-above`).
//!
//! Every write is conditional, so when someone else writes between the read and the write
//! the function answers 409 and nothing is written; sync then reads again, diffs again and
//! retries, up to [`MAX_ATTEMPTS`] times. Documents are matched by id, so a file whose
//! documents only moved is unchanged (new documents are appended to the deployed list).

use std::path::Path;
use std::process::ExitCode;
use std::time::Duration;

use serde_json::{json, Value};
use shared::kb::{documents_of, KbDiff};

use crate::local_kb::{print_diff, LocalKb};
use crate::out::outln;
use crate::remote::{print_written, Condition, IngestClient, Remote, Written};
use crate::stop::{exit, runtime, Stop};

/// Writes tried before giving up on conflicts (the first included).
pub(crate) const MAX_ATTEMPTS: u32 = 4;

/// Pause before retry n: n × 250 ms, so a burst of writers spreads out.
const RETRY_PAUSE: Duration = Duration::from_millis(250);

/// The arguments of `rag sync`.
pub(crate) struct Args<'a> {
    pub(crate) url: &'a str,
    pub(crate) token_env: &'a str,
    pub(crate) dry_run: bool,
    pub(crate) path: &'a Path,
    /// Requests larger than this many bytes go through a staged upload.
    pub(crate) stage_above: usize,
}

/// Runs the command; prints the diff and progress to stdout, problems to stderr.
pub(crate) fn run(args: &Args<'_>) -> ExitCode {
    exit(execute(args))
}

/// What has to be sent to make the deployed version match the file.
#[derive(Debug, PartialEq)]
enum Action {
    /// Nothing: the documents and glossary match.
    Nothing,
    /// Upsert and delete documents in the version read.
    Patch {
        /// The file's documents that are new or changed, in file order.
        upsert: Vec<Value>,
        /// Ids the file no longer has.
        delete: Vec<String>,
    },
    /// Send the whole file, for the reason given.
    Replace(&'static str),
}

/// How the glossary compares.
#[derive(Debug, PartialEq, Eq)]
enum Glossary {
    Same,
    Changed {
        from: usize,
        to: usize,
    },
    /// The function does not report a glossary fingerprint (an older deployment).
    Unknown,
}

/// The diff between the deployed version and the file, and what to send.
#[derive(Debug)]
struct Plan {
    diff: KbDiff,
    glossary: Glossary,
    action: Action,
}

impl Plan {
    fn new(remote: Option<&Remote>, local: &LocalKb) -> Self {
        let Some(remote) = remote else {
            return Self {
                diff: KbDiff::between(&[], &local.summaries),
                glossary: Glossary::Changed {
                    from: 0,
                    to: local.glossary_entries,
                },
                action: Action::Replace("nothing is deployed yet"),
            };
        };
        let diff = KbDiff::between(&remote.summaries, &local.summaries);
        let glossary = match &remote.rest_hash {
            None => Glossary::Unknown,
            Some(h) if *h == local.rest_hash() => Glossary::Same,
            Some(_) => Glossary::Changed {
                from: remote.glossary_entries,
                to: local.glossary_entries,
            },
        };
        let action = if !remote.valid {
            Action::Replace("the deployed version is not a valid knowledge base")
        } else {
            match glossary {
                Glossary::Changed { .. } => Action::Replace("the glossary changed"),
                // Without the glossary's fingerprint only the whole file's can tell.
                Glossary::Unknown
                    if remote.content_hash.as_deref() == Some(local.content_hash().as_str()) =>
                {
                    Action::Nothing
                }
                Glossary::Unknown => {
                    Action::Replace("the function does not report its glossary fingerprint")
                }
                Glossary::Same if diff.is_empty() => Action::Nothing,
                Glossary::Same => Action::Patch {
                    upsert: upserts(local, &diff),
                    delete: diff.removed.clone(),
                },
            }
        };
        Self {
            diff,
            glossary,
            action,
        }
    }

    fn print(&self) {
        print_diff(&self.diff);
        match self.glossary {
            Glossary::Same => outln!("glossary: unchanged"),
            Glossary::Changed { from, to } => {
                outln!("glossary: changed ({from} -> {to} entries)")
            }
            Glossary::Unknown => outln!("glossary: not compared (older ingest function)"),
        }
    }
}

/// The file's added and changed documents, in file order.
fn upserts(local: &LocalKb, diff: &KbDiff) -> Vec<Value> {
    documents_of(&local.value)
        .into_iter()
        .flatten()
        .filter(|d| {
            d.get("id")
                .and_then(Value::as_str)
                .is_some_and(|id| diff.added.iter().chain(&diff.changed).any(|x| x == id))
        })
        .cloned()
        .collect()
}

fn execute(args: &Args<'_>) -> Result<(), Stop> {
    let client = IngestClient::new(args.url, args.token_env)?;
    let local = LocalKb::load(args.path)?;
    runtime()?.block_on(async {
        for attempt in 1..=MAX_ATTEMPTS {
            let remote = client.status().await?;
            match &remote {
                Some(r) => outln!(
                    "deployed: etag {} ({} documents)",
                    r.etag,
                    r.summaries.len()
                ),
                None => outln!("deployed: nothing yet"),
            }
            let plan = Plan::new(remote.as_ref(), &local);
            plan.print();
            if plan.action == Action::Nothing {
                outln!(
                    "no changes: {} matches the deployed knowledge base; nothing sent",
                    local.origin
                );
                return Ok(());
            }
            if args.dry_run {
                outln!("dry run: nothing sent");
                return Ok(());
            }
            match send(
                &client,
                &local,
                remote.as_ref(),
                plan.action,
                args.stage_above,
            )
            .await?
            {
                Written::Stored(report) => {
                    print_written(&report);
                    return Ok(());
                }
                Written::Conflict(why) => {
                    eprintln!("conflict (attempt {attempt} of {MAX_ATTEMPTS}): {why}");
                    if attempt < MAX_ATTEMPTS {
                        outln!("the deployed version changed meanwhile; reading it again");
                        tokio::time::sleep(RETRY_PAUSE * attempt).await;
                    }
                }
                Written::TooLarge(why) => {
                    return Err(Stop::Failed(format!(
                        "the knowledge base is too large to upload: {why}"
                    )))
                }
            }
        }
        Err(Stop::Failed(format!(
            "the deployed knowledge base kept changing during {MAX_ATTEMPTS} attempts; \
             nothing of this run was written: run rag sync again"
        )))
    })
}

/// Sends `action`: a patch when it fits one request, else the whole file.
async fn send(
    client: &IngestClient,
    local: &LocalKb,
    remote: Option<&Remote>,
    action: Action,
    stage_above: usize,
) -> Result<Written, Stop> {
    let condition = Condition::for_remote(remote);
    let why = match (action, remote) {
        (Action::Patch { upsert, delete }, Some(r)) => {
            let body = serde_json::to_vec(&json!({"upsert": upsert, "delete": delete}))
                .map_err(|e| Stop::Failed(format!("cannot encode the patch: {e}")))?;
            if body.len() <= stage_above {
                outln!(
                    "sending: PATCH ({} upserted, {} deleted, {} bytes)",
                    upsert.len(),
                    delete.len(),
                    body.len()
                );
                match client.patch(body, &r.etag).await? {
                    Written::TooLarge(why) => {
                        outln!("the function refused the patch ({why}); sending the whole file");
                    }
                    other => return Ok(other),
                }
                "the patch is too large for one request"
            } else {
                "the patch is larger than --stage-above"
            }
        }
        (Action::Replace(why), _) => why,
        (Action::Nothing | Action::Patch { .. }, _) => return Ok(Written::Stored(Value::Null)),
    };
    outln!(
        "sending: the whole file ({}; {} bytes)",
        why,
        local.bytes.len()
    );
    client
        .replace(local.bytes.clone(), &condition, stage_above)
        .await
}

#[cfg(test)]
mod tests {
    use super::*;
    use shared::kb::{rest_fingerprint, summaries};

    fn local(text: &str) -> LocalKb {
        let value: Value = serde_json::from_str(text).unwrap_or_default();
        LocalKb {
            bytes: text.as_bytes().to_vec(),
            summaries: summaries(&value),
            glossary_entries: value["glossary"].as_object().map_or(0, |g| g.len()),
            value,
            origin: "kb.json".into(),
        }
    }

    fn remote(text: &str) -> Remote {
        let value: Value = serde_json::from_str(text).unwrap_or_default();
        Remote {
            etag: "e1".into(),
            valid: true,
            content_hash: Some(shared::kb::fingerprint(&value)),
            rest_hash: Some(rest_fingerprint(&value)),
            glossary_entries: value["glossary"].as_object().map_or(0, |g| g.len()),
            summaries: summaries(&value),
        }
    }

    const DEPLOYED: &str = r#"{"documents": [
        {"id": "a", "type": "page", "title": "A"},
        {"id": "b", "type": "page", "title": "B"}
    ], "glossary": {"x": "y"}}"#;

    #[test]
    fn changed_documents_become_one_patch_in_file_order() {
        let file = local(
            r#"{"glossary": {"x": "y"}, "documents": [
            {"id": "c", "type": "page", "title": "C"},
            {"id": "a", "type": "page", "title": "A2"}
        ]}"#,
        );
        let plan = Plan::new(Some(&remote(DEPLOYED)), &file);
        assert_eq!(plan.glossary, Glossary::Same);
        assert_eq!(
            plan.action,
            Action::Patch {
                upsert: vec![
                    json!({"id": "c", "type": "page", "title": "C"}),
                    json!({"id": "a", "type": "page", "title": "A2"})
                ],
                delete: vec!["b".into()],
            }
        );
    }

    #[test]
    fn moved_documents_and_reformatting_are_no_change() {
        let file = local(
            r#"{"documents": [{"title": "B", "id": "b", "type": "page"},
                {"id": "a", "type": "page", "title": "A"}], "glossary": {"x": "y"}}"#,
        );
        let plan = Plan::new(Some(&remote(DEPLOYED)), &file);
        assert!(plan.diff.is_empty());
        assert_eq!(plan.action, Action::Nothing);
    }

    #[test]
    fn a_glossary_change_nothing_deployed_or_an_invalid_version_send_the_whole_file() {
        let file = local(
            r#"{"documents": [{"id": "a", "type": "page", "title": "A"},
                {"id": "b", "type": "page", "title": "B"}], "glossary": {"x": "z", "p": "q"}}"#,
        );
        let plan = Plan::new(Some(&remote(DEPLOYED)), &file);
        assert!(plan.diff.is_empty());
        assert_eq!(plan.glossary, Glossary::Changed { from: 1, to: 2 });
        assert_eq!(plan.action, Action::Replace("the glossary changed"));

        let created = Plan::new(None, &file);
        assert_eq!(created.diff.added, ["a", "b"]);
        assert!(matches!(created.action, Action::Replace(_)));

        let mut invalid = remote(DEPLOYED);
        invalid.valid = false;
        let same = local(DEPLOYED);
        assert!(matches!(
            Plan::new(Some(&invalid), &same).action,
            Action::Replace(_)
        ));
    }

    #[test]
    fn without_a_glossary_fingerprint_only_an_identical_file_is_unchanged() {
        let mut old = remote(DEPLOYED);
        old.rest_hash = None;
        assert_eq!(
            Plan::new(Some(&old), &local(DEPLOYED)).action,
            Action::Nothing
        );
        let edited = local(&DEPLOYED.replace("\"B\"", "\"B2\""));
        let plan = Plan::new(Some(&old), &edited);
        assert_eq!(plan.glossary, Glossary::Unknown);
        assert!(matches!(plan.action, Action::Replace(_)));
    }
}
