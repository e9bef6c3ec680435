//! Serves the test suite's fake OpenAI-compatible model ([`shared::testing::FakeLlm`]) on a
//! free port of 127.0.0.1 until killed, for runs of the real stack without a provider
//! (`infra/load.sh`). Prints its base URL (for `LLM_BASE_URL`) as the first line of stdout.
//!
//! Every request gets the same answer, streamed or whole as the request asks, paced like a
//! real model: `--chunks` deltas of a word or two, each after `--delay-ms` milliseconds.
//! Like in the tests, every request is kept in memory (a few KB each): meant for bounded runs.
//! Usage: `cargo run -p shared --features test-util --example fake_llm -- [--chunks 40] [--delay-ms 10]`

use std::io::Write;
use std::time::Duration;

use shared::testing::{Behavior, FakeLlm};

type BoxError = Box<dyn std::error::Error + Send + Sync>;

/// Words the answer is made of, cycled to the requested length. Cites source 1 so the
/// answer looks like a grounded one to anything that inspects it.
const WORDS: &[&str] = &[
    "Partial",
    " FC",
    " trains",
    " face",
    " recognition",
    " on",
    " millions",
    " of",
    " identities",
    " by",
    " sampling",
    " the",
    " class",
    " centres",
    " each",
    " step",
    " [1].",
];

#[tokio::main]
async fn main() -> Result<(), BoxError> {
    let (mut chunks, mut delay_ms) = (40usize, 10u64);
    let mut args = std::env::args().skip(1);
    while let Some(flag) = args.next() {
        let value = args.next().ok_or(format!("{flag} needs a value"))?;
        match flag.as_str() {
            "--chunks" => chunks = value.parse()?,
            "--delay-ms" => delay_ms = value.parse()?,
            _ => {
                return Err(
                    format!("unknown option {flag}; expected --chunks or --delay-ms").into(),
                )
            }
        }
    }
    let answer = Behavior::Answer {
        chunks: WORDS
            .iter()
            .cycle()
            .take(chunks)
            .map(|w| (*w).to_owned())
            .collect(),
        delay: Duration::from_millis(delay_ms),
    };
    // A one-entry script: its only behaviour repeats for every request.
    let fake = FakeLlm::start(vec![answer]).await;
    let mut out = std::io::stdout();
    writeln!(out, "{}", fake.base_url())?;
    out.flush()?;
    // Serves until the process is killed; the server task runs on the runtime meanwhile.
    std::future::pending::<()>().await;
    Ok(())
}
