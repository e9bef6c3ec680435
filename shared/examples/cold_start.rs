//! Times a function binary's cold start the way Lambda runs it: each run spawns the binary
//! under a fake Runtime API on 127.0.0.1 ([`shared::testing::runtime_api`]), hands it one
//! event (a function-URL payload) and records the init (spawn → first `/next`), the first
//! response-body byte and the complete response (both from the event being handed out), and
//! the peak RSS. The function gets this process's environment (`KB_SOURCE`, tables, AWS
//! endpoint...).
//!
//! Prints every run to stderr, then one line of medians to stdout:
//! `<label> init_ms=.. first_byte_ms=.. complete_ms=.. peak_rss_mib=.. runs=..`.
//! A run whose status differs from `--status` (default 200) is an error: timing a failure
//! measures nothing.
//! Usage: `cargo run -p shared --features test-util --example cold_start --
//! [--runs 5] [--label NAME] [--status 200] <function-binary> <event.json>`

use std::path::PathBuf;
use std::time::Duration;

use shared::testing::runtime_api::{invoke_once, Invoked};

type BoxError = Box<dyn std::error::Error + Send + Sync>;

/// How long one run may take, init included (a 50k-page knowledge base takes seconds).
const RUN_TIMEOUT: Duration = Duration::from_secs(120);

struct Args {
    runs: usize,
    label: String,
    status: u16,
    exe: PathBuf,
    event: PathBuf,
}

fn parse_args() -> Result<Args, BoxError> {
    let usage = "usage: cold_start [--runs N] [--label NAME] [--status CODE] <exe> <event.json>";
    let mut args = std::env::args().skip(1);
    let (mut runs, mut label, mut status) = (5, None, 200);
    let mut positional = Vec::new();
    while let Some(arg) = args.next() {
        let mut value = || args.next().ok_or(usage);
        match arg.as_str() {
            "--runs" => runs = value()?.parse()?,
            "--label" => label = Some(value()?),
            "--status" => status = value()?.parse()?,
            _ if arg.starts_with("--") => return Err(format!("{usage} (unknown {arg})").into()),
            _ => positional.push(PathBuf::from(arg)),
        }
    }
    let [exe, event] = <[PathBuf; 2]>::try_from(positional).map_err(|_| usage)?;
    if runs == 0 {
        return Err("--runs must be at least 1".into());
    }
    let label = label.unwrap_or_else(|| exe.display().to_string());
    Ok(Args {
        runs,
        label,
        status,
        exe,
        event,
    })
}

fn main() -> Result<(), BoxError> {
    let args = parse_args()?;
    let event = std::fs::read(&args.event)
        .map_err(|e| format!("cannot read {}: {e}", args.event.display()))?;
    let mut runs: Vec<Invoked> = Vec::with_capacity(args.runs);
    for i in 1..=args.runs {
        let run = invoke_once(&args.exe, None, event.clone(), RUN_TIMEOUT)?;
        if run.status() != Some(args.status) {
            return Err(format!(
                "{}: run {i} answered {:?}, expected {}\n--- body ---\n{}\n--- output ---\n{}",
                args.label,
                run.status(),
                args.status,
                String::from_utf8_lossy(&run.body),
                run.output
            )
            .into());
        }
        eprintln!(
            "{} run {i}: init {:.2} ms, first byte {} ms, complete {:.2} ms, peak RSS {} KiB",
            args.label,
            ms(run.init),
            run.first_byte
                .map_or("-".into(), |d| format!("{:.2}", ms(d))),
            ms(run.complete),
            run.peak_rss_kib.map_or("-".into(), |k| k.to_string()),
        );
        runs.push(run);
    }
    let median_ms = |f: &dyn Fn(&Invoked) -> Option<Duration>| {
        median(runs.iter().filter_map(f).map(ms).collect())
            .map_or("-".into(), |m| format!("{m:.2}"))
    };
    let rss = median(
        runs.iter()
            .filter_map(|r| r.peak_rss_kib)
            .map(|k| k as f64 / 1024.0)
            .collect(),
    );
    println!(
        "{} init_ms={} first_byte_ms={} complete_ms={} peak_rss_mib={} runs={}",
        args.label,
        median_ms(&|r| Some(r.init)),
        median_ms(&|r| r.first_byte),
        median_ms(&|r| Some(r.complete)),
        rss.map_or("-".into(), |m| format!("{m:.1}")),
        runs.len()
    );
    Ok(())
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1000.0
}

/// The middle value (the mean of the two middle ones for an even count).
fn median(mut values: Vec<f64>) -> Option<f64> {
    if values.is_empty() {
        return None;
    }
    values.sort_by(f64::total_cmp);
    let mid = values.len() / 2;
    Some(if values.len() % 2 == 0 {
        (values[mid - 1] + values[mid]) / 2.0
    } else {
        values[mid]
    })
}
