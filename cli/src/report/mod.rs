//! `rag report`: what visitors asked over a range of days, read from the audit table
//! (DynamoDB) or from the local store's dump (`AUDIT_DUMP_FILE`, JSON lines).
//!
//! Reads only what the audit already holds: the question (also in the conversation turn,
//! same time to live), retrieval's hit count and best score, the outcome, token usage and
//! the visitor's rating. No address (the audit keeps only a salted hash, which the report
//! does not show) and no answer text.

mod dates;
mod html;
mod render;
mod summary;
mod visible;

use std::collections::HashMap;
use std::path::PathBuf;
use std::time::{Duration, SystemTime};

use clap::{Args, ValueEnum};
use shared::store::AuditEntry;
use shared::{ChatConfig, Config, DynamoConversationStore};

use crate::out::outln;

/// `rag report`'s flags.
#[derive(Debug, Args)]
pub(crate) struct ReportArgs {
    /// First day, YYYY-MM-DD (UTC; default: six days before --until).
    #[arg(long)]
    since: Option<String>,
    /// Last day, included, YYYY-MM-DD (UTC; default: today).
    #[arg(long)]
    until: Option<String>,
    /// The audit table (default: AUDIT_TABLE). AWS credentials and region come from the
    /// usual environment (AWS_PROFILE, AWS_REGION, AWS_ENDPOINT_URL...).
    #[arg(long, conflicts_with = "dump")]
    table: Option<String>,
    /// Read the local store's dump (the AUDIT_DUMP_FILE of a local run) instead of a table.
    #[arg(long, value_name = "FILE")]
    dump: Option<PathBuf>,
    /// Output format.
    #[arg(long, value_enum, default_value_t = Format::Table)]
    format: Format,
    /// Same as --format json.
    #[arg(long, conflicts_with_all = ["csv", "html", "format"])]
    json: bool,
    /// Same as --format csv.
    #[arg(long, conflicts_with_all = ["html", "format"])]
    csv: bool,
    /// Same as --format html: one self-contained page with a chart.
    #[arg(long, conflicts_with = "format")]
    html: bool,
    /// Daily token budget to compare with (default: DAILY_TOKEN_BUDGET, else the chat's
    /// default).
    #[arg(long)]
    budget: Option<u64>,
    /// A question whose best hit scores below this counts as weakly covered.
    #[arg(long, default_value_t = 2.0)]
    weak_score: f32,
    /// Rows in the question and gap lists.
    #[arg(long, default_value_t = 50)]
    top: usize,
    /// Stop reading after this many records (the report then says it is partial).
    #[arg(long, default_value_t = 200_000)]
    max_records: usize,
}

/// How the report is written.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
enum Format {
    /// Aligned text for a terminal.
    Table,
    /// One JSON object.
    Json,
    /// One CSV table, a `section` column first.
    Csv,
    /// One HTML page, no external assets.
    Html,
}

/// Runs the command; an error is a message for the user.
pub(crate) fn run(args: ReportArgs) -> Result<(), String> {
    let format = match (args.json, args.csv, args.html) {
        (true, _, _) => Format::Json,
        (_, true, _) => Format::Csv,
        (_, _, true) => Format::Html,
        _ => args.format,
    };
    let today = dates::day_of(shared::store::epoch_ms(SystemTime::now()));
    let until = match &args.until {
        Some(d) => dates::parse_day(d).map_err(|e| format!("--until: {e}"))?,
        None => today,
    };
    let since = match &args.since {
        Some(d) => dates::parse_day(d).map_err(|e| format!("--since: {e}"))?,
        None => until - 6,
    };
    if since > until {
        return Err(format!(
            "--since {} is after --until {}",
            dates::format_day(since),
            dates::format_day(until)
        ));
    }
    // A range is drawn day by day (chart, CSV): bounded so a typo cannot ask for 10,000.
    if until - since >= 366 {
        return Err("the range is longer than 366 days; report a year at a time".into());
    }
    if !(args.weak_score.is_finite() && args.weak_score >= 0.0) {
        return Err("--weak-score must be a number ≥ 0".into());
    }
    let budget = match args.budget {
        Some(b) => b,
        None => {
            ChatConfig::from_env()
                .map_err(|e| e.to_string())?
                .daily_token_budget
        }
    };
    let (from_ms, to_ms) = (dates::start_ms(since), dates::start_ms(until + 1) - 1);
    let (entries, truncated) = match &args.dump {
        Some(path) => read_dump(path, from_ms, to_ms, args.max_records)?,
        None => scan_table(args.table.clone(), from_ms, to_ms, args.max_records)?,
    };
    let summary = summary::summarize(
        &entries,
        summary::Options {
            since_day: since,
            until_day: until,
            budget,
            weak_score: args.weak_score,
            top: args.top,
        },
        truncated,
    );
    let text = match format {
        Format::Table => render::table(&summary),
        Format::Json => visible::json_escaped(
            &serde_json::to_string_pretty(&summary).map_err(|e| e.to_string())?,
        ),
        Format::Csv => render::csv(&summary),
        Format::Html => html::page(&summary),
    };
    outln!("{}", text.trim_end());
    if truncated {
        eprintln!(
            "warning: stopped after {} records (--max-records); the figures are partial",
            args.max_records
        );
    }
    Ok(())
}

/// The audit records of a DynamoDB table written from `from_ms` to `to_ms`.
fn scan_table(
    table: Option<String>,
    from_ms: u64,
    to_ms: u64,
    max: usize,
) -> Result<(Vec<AuditEntry>, bool), String> {
    let table = match table {
        Some(t) => t,
        None => Config::from_env()
            .map_err(|e| e.to_string())?
            .audit_table
            .ok_or("name the audit table: --table NAME or AUDIT_TABLE (or --dump FILE)")?,
    };
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| format!("cannot start the async runtime: {e}"))?;
    runtime.block_on(async {
        let client = shared::config::AwsClients::from_env().dynamodb().await;
        // Only the audit table is read: the conversations table name and TTL are unused.
        let store = DynamoConversationStore::new(client, "", &table, Duration::ZERO);
        store
            .scan_audit(from_ms, to_ms, max)
            .await
            .map_err(|e| format!("reading {table}: {}", error_chain(&e)))
    })
}

/// An error and its sources, so an SDK failure says more than "service error".
fn error_chain(e: &dyn std::error::Error) -> String {
    let mut text = e.to_string();
    let mut source = e.source();
    while let Some(s) = source {
        text.push_str(&format!(": {s}"));
        source = s.source();
    }
    text
}

/// The records of a dump file written from `from_ms` to `to_ms`: the last line of each
/// request id is its current state (a rating appends the record again).
fn read_dump(
    path: &std::path::Path,
    from_ms: u64,
    to_ms: u64,
    max: usize,
) -> Result<(Vec<AuditEntry>, bool), String> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| format!("cannot read {}: {e}", path.display()))?;
    let mut latest: HashMap<String, AuditEntry> = HashMap::new();
    for (i, line) in text.lines().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        let entry: AuditEntry = serde_json::from_str(line)
            .map_err(|e| format!("{}:{}: not an audit record: {e}", path.display(), i + 1))?;
        if (from_ms..=to_ms).contains(&entry.at_ms) {
            latest.insert(entry.record.request_id.clone(), entry);
        }
    }
    let truncated = latest.len() > max;
    let mut entries: Vec<AuditEntry> = latest.into_values().collect();
    entries.sort_by_key(|e| e.at_ms);
    entries.truncate(max);
    Ok((entries, truncated))
}
