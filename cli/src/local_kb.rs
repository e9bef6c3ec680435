//! A knowledge-base file on disk as `rag ingest` and `rag sync` see it: validated, with its
//! documents' summaries and fingerprints for diffing against the deployed one, and how a
//! diff is printed.

use std::path::Path;

use serde_json::Value;
use shared::kb::{fingerprint, parse_kb_bytes, rest_fingerprint, summaries, DocSummary, KbDiff};
use shared::Error;

use crate::out::outln;
use crate::stop::Stop;

/// A local knowledge-base file, validated, with what diffing it needs.
pub(crate) struct LocalKb {
    /// The file's bytes, uploaded as they are.
    pub(crate) bytes: Vec<u8>,
    /// The file as plain JSON: diffs are over the documents' JSON as written.
    pub(crate) value: Value,
    /// Each document's id, type and fingerprint: what a diff against the stored version
    /// compares.
    pub(crate) summaries: Vec<DocSummary>,
    /// How many glossary entries it has (printed beside the diff).
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
