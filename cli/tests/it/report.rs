//! `rag report` as a site owner runs it: the real binary over an audit table on a moto
//! server seeded through the store (the chat's own writes), in every output format, each
//! parsed back and counted; and over a local store's dump file. Needs moto:
//! `infra/venv.sh` installs it.
//!
//! `RAG_REPORT_ARTIFACTS=DIR` keeps the HTML page there (the browser harness screenshots it).
#![allow(clippy::unwrap_used)] // test helpers may panic on broken fixtures

use std::process::{Command, Output};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use serde_json::Value;
use shared::grounding::Grounding;
use shared::store::{create_tables, AuditRecord, Exchange, Feedback, Rating};
use shared::testing::moto::unique_name;
use shared::testing::MotoServer;
use shared::{ConversationStore, DynamoConversationStore, MemoryConversationStore, Usage};

/// 2026-11-20T00:00:00Z.
const DAY0_SECS: u64 = 1_795_132_800;
const HOSTILE: &str = "<script>alert('x')</script> & \"quotes\"";
const FORMULA: &str = "=HYPERLINK(\"http://evil.example\",\"click\")";

fn at(day: u64, secs: u64) -> SystemTime {
    UNIX_EPOCH + Duration::from_secs(DAY0_SECS + day * 86_400 + secs)
}

/// One chat exchange as the chat function records it.
fn exchange(
    session: &str,
    question: &str,
    when: SystemTime,
    hits: u32,
    outcome: &str,
    tokens: u32,
) -> Exchange {
    let request_id = unique_name("req");
    Exchange {
        session_id: session.into(),
        request_id: request_id.clone(),
        user: question.into(),
        assistant: (!outcome.starts_with("model_error")).then(|| "answer".to_owned()),
        audit: AuditRecord {
            action: "chat".into(),
            session_id: Some(session.into()),
            request_id,
            doc_ids: vec![],
            model: Some("qwen-plus".into()),
            usage: (tokens > 0).then(|| Usage {
                prompt_tokens: tokens - 10,
                completion_tokens: 10,
                total_tokens: tokens,
            }),
            latency_ms: 900,
            outcome: outcome.into(),
            client_hash: Some("3f1c9a0b".into()),
            question: Some(question.into()),
            hits: Some(hits),
            top_score: (hits > 0).then_some(if outcome == "weak" { 1.25 } else { 9.5 }),
            feedback: None,
            grounding: None,
        },
        at: when,
    }
}

/// Seeds: day 0: three askings of one question (two spellings), one no-hit question;
/// day 1: a hostile question rated down with a hostile comment, a weak hit, a model
/// timeout; day 2: nothing; day 3 (outside the range): one question. Plus an ingest record.
async fn seed(store: &dyn ConversationStore) {
    let s = "s-visitor";
    let mut items = [
        exchange(s, "What is Partial FC?", at(0, 10), 3, "ok", 1200),
        exchange(s, "what is  partial FC", at(0, 20), 3, "ok", 1300),
        exchange(s, "What is Partial FC？", at(0, 30), 3, "ok", 1500),
        exchange(s, "有没有关于天气的文章", at(0, 40), 0, "no_hits", 0),
        exchange(s, HOSTILE, at(1, 10), 2, "ok", 2000),
        exchange(s, FORMULA, at(1, 20), 1, "weak", 800),
        exchange(
            s,
            "Tell me about ArcFace",
            at(1, 30),
            2,
            "model_error:timeout",
            0,
        ),
        exchange(s, "Too late", at(3, 10), 2, "ok", 9999),
    ];
    // The grounding check passed the first answer and flagged the second.
    let figures = |unsupported| Grounding {
        sentences: 3,
        cited: 3,
        unsupported_sentences: unsupported,
        ..Grounding::default()
    };
    items[0].audit.grounding = Some(figures(0));
    items[1].audit.grounding = Some(figures(2));
    for ex in &items {
        store.record_exchange(ex).await.unwrap();
    }
    let rated = &items[4];
    let down = Feedback {
        rating: Rating::Down,
        comment: Some(format!("{HOSTILE} wrong")),
        at_ms: 1,
    };
    store
        .record_feedback(&rated.request_id, s, &down)
        .await
        .unwrap();
    let up = Feedback {
        rating: Rating::Up,
        comment: None,
        at_ms: 2,
    };
    store
        .record_feedback(&items[0].request_id, s, &up)
        .await
        .unwrap();
    store
        .append_audit(&AuditRecord {
            action: "ingest".into(),
            request_id: unique_name("ingest"),
            outcome: "ok".into(),
            ..AuditRecord::default()
        })
        .await
        .unwrap();
}

fn rag(env: &[(&str, String)], args: &[&str]) -> Output {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_rag"));
    cmd.args(args)
        .env_remove("AUDIT_TABLE")
        .env_remove("DAILY_TOKEN_BUDGET");
    for (k, v) in env {
        cmd.env(k, v);
    }
    cmd.output().unwrap()
}

fn stdout(o: &Output) -> String {
    assert!(
        o.status.success(),
        "rag failed: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    String::from_utf8(o.stdout.clone()).unwrap()
}

const RANGE: [&str; 4] = ["--since", "2026-11-20", "--until", "2026-11-22"];

/// Checks the JSON report of the seeded records.
fn check_json(json: &Value) {
    assert_eq!(json["since"], "2026-11-20");
    assert_eq!(
        json["questions"], 7,
        "the ingest and day-3 records are left out"
    );
    assert_eq!(
        (json["rated_up"].as_u64(), json["rated_down"].as_u64()),
        (Some(1), Some(1))
    );
    let days = json["days"].as_array().unwrap();
    let per_day: Vec<(u64, u64)> = days
        .iter()
        .map(|d| {
            (
                d["questions"].as_u64().unwrap(),
                d["tokens"].as_u64().unwrap(),
            )
        })
        .collect();
    assert_eq!(per_day, vec![(4, 4000), (3, 2800), (0, 0)]);
    assert_eq!(days[0]["budget_used_pct"], 40.0, "4000 of 10000");
    let top = &json["top_questions"][0];
    assert_eq!(
        (top["count"].as_u64(), top["text"].as_str()),
        (Some(3), Some("What is Partial FC?"))
    );
    let gaps: Vec<(&str, &str)> = json["coverage_gaps"]
        .as_array()
        .unwrap()
        .iter()
        .map(|g| (g["text"].as_str().unwrap(), g["kind"].as_str().unwrap()))
        .collect();
    assert!(
        gaps.contains(&("有没有关于天气的文章", "no_hits")),
        "{gaps:?}"
    );
    assert!(gaps.contains(&(FORMULA, "weak")), "{gaps:?}");
    assert_eq!(gaps.len(), 2);
    let neg = &json["negative_feedback"][0];
    assert_eq!(neg["question"], HOSTILE);
    assert_eq!(neg["comment"], format!("{HOSTILE} wrong"));
    assert_eq!(json["model_errors"][0]["outcome"], "model_error:timeout");
    assert_eq!(json["model_errors"][0]["count"], 1);
    let flagged = json["poorly_grounded"].as_array().unwrap();
    assert_eq!(flagged.len(), 1, "{flagged:?}");
    assert_eq!(flagged[0]["question"], "what is  partial FC");
    assert_eq!(
        (
            flagged[0]["unsupported_sentences"].as_u64(),
            flagged[0]["sentences"].as_u64()
        ),
        (Some(2), Some(3))
    );
}

/// Splits RFC 4180 CSV into rows of fields.
fn parse_csv(text: &str) -> Vec<Vec<String>> {
    let (mut rows, mut row, mut field) = (Vec::new(), Vec::new(), String::new());
    let mut chars = text.chars().peekable();
    let mut quoted = false;
    while let Some(c) = chars.next() {
        match (quoted, c) {
            (true, '"') if chars.peek() == Some(&'"') => {
                chars.next();
                field.push('"');
            }
            (true, '"') => quoted = false,
            (true, c) => field.push(c),
            (false, '"') => quoted = true,
            (false, ',') => row.push(std::mem::take(&mut field)),
            (false, '\r') => {}
            (false, '\n') => {
                row.push(std::mem::take(&mut field));
                rows.push(std::mem::take(&mut row));
            }
            (false, c) => field.push(c),
        }
    }
    if !field.is_empty() || !row.is_empty() {
        row.push(field);
        rows.push(row);
    }
    rows
}

#[tokio::test]
async fn the_report_of_a_seeded_audit_table_in_every_format() {
    let moto = MotoServer::shared();
    let client = moto.dynamodb_client();
    let (turns, audit) = (unique_name("conversations"), unique_name("audit"));
    create_tables(&client, &turns, &audit).await.unwrap();
    let store = DynamoConversationStore::new(client, &turns, &audit, Duration::from_secs(3600));
    seed(&store).await;
    let mut env = moto.process_env();
    env.push(("DAILY_TOKEN_BUDGET", "10000".into()));
    let with = |extra: &[&str]| {
        let mut args = vec!["report", "--table", audit.as_str()];
        args.extend_from_slice(&RANGE);
        args.extend_from_slice(extra);
        stdout(&rag(&env, &args))
    };

    let json: Value = serde_json::from_str(&with(&["--json"])).unwrap();
    check_json(&json);

    // The table name from AUDIT_TABLE gives the same report.
    let mut from_env = env.clone();
    from_env.push(("AUDIT_TABLE", audit.clone()));
    let mut args = vec!["report", "--format", "json"];
    args.extend_from_slice(&RANGE);
    let again: Value = serde_json::from_str(&stdout(&rag(&from_env, &args))).unwrap();
    assert_eq!(again, json);

    let csv = with(&["--csv"]);
    let rows = parse_csv(&csv);
    assert_eq!(
        rows[0].join(","),
        "section,date,text,language,count,detail,tokens,budget_used_pct"
    );
    assert!(rows.iter().all(|r| r.len() == 8), "{rows:?}");
    let section = |name: &str| rows.iter().filter(|r| r[0] == name).collect::<Vec<_>>();
    let days = section("day");
    assert_eq!(days.len(), 3);
    let asked: u64 = days.iter().map(|r| r[4].parse::<u64>().unwrap()).sum();
    let tokens: u64 = days.iter().map(|r| r[6].parse::<u64>().unwrap()).sum();
    assert_eq!((asked, tokens), (7, 6800));
    let questions = section("question");
    assert_eq!(
        questions
            .iter()
            .map(|r| r[4].parse::<u64>().unwrap())
            .sum::<u64>(),
        7
    );
    assert!(
        questions.iter().any(|r| r[2] == HOSTILE),
        "quotes and commas survive"
    );
    assert!(
        questions.iter().any(|r| r[2] == format!("'{FORMULA}")),
        "a formula is defused: {questions:?}"
    );
    assert_eq!(section("gap").len(), 2);
    let down = section("rated_down");
    assert_eq!(down.len(), 1);
    assert_eq!(down[0][5], format!("{HOSTILE} wrong"));
    assert_eq!(section("model_error")[0][5], "model_error:timeout");
    let flagged = section("poorly_grounded");
    assert_eq!(flagged.len(), 1);
    assert_eq!(flagged[0][5], "unsupported 2 of 3, invalid citations 0");

    let html = with(&["--html"]);
    assert!(html.starts_with("<!doctype html>"), "{html:.80}");
    assert!(html.trim_end().ends_with("</html>"));
    assert!(
        !html.contains("<script"),
        "the hostile question is text, not markup"
    );
    assert!(
        html.contains("&lt;script&gt;alert(&#39;x&#39;)&lt;/script&gt; &amp; &quot;quotes&quot;")
    );
    assert!(html.contains("<svg") && html.contains("<polyline"));
    assert!(html.contains("Poorly grounded answers"));
    // Self-contained: no external reference (the SVG namespace is a name, not a fetch).
    for needle in ["src=", "href=", "@import", "url("] {
        assert!(!html.contains(needle), "{needle} in the page");
    }
    assert_eq!(html.matches("<rect").count(), 3, "one bar per day");
    if let Some(dir) = std::env::var_os("RAG_REPORT_ARTIFACTS") {
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(std::path::Path::new(&dir).join("report.html"), &html).unwrap();
    }

    let table = with(&[]);
    assert!(
        table.contains(
            "Questions 2026-11-20 to 2026-11-22 (UTC): 7 asked, 1 rated up, 1 rated down"
        ),
        "{table}"
    );
    let day0: Vec<&str> = table
        .lines()
        .find(|l| l.trim_start().starts_with("2026-11-20"))
        .unwrap()
        .split_whitespace()
        .collect();
    assert_eq!(
        day0,
        ["2026-11-20", "4", "4000", "40.0%", "1", "0"],
        "{table}"
    );
    assert!(table.contains("有没有关于天气的文章"));
    assert!(table.contains("model_error:timeout"));
}

#[tokio::test]
async fn the_report_reads_a_local_dump_and_refuses_bad_input() {
    let path = std::env::temp_dir().join(format!("{}.jsonl", unique_name("audit-dump")));
    let store = MemoryConversationStore::with_dump(&path);
    seed(&store).await;
    let path_arg = path.display().to_string();
    let env = [("DAILY_TOKEN_BUDGET", "10000".to_owned())];
    let mut args = vec!["report", "--dump", path_arg.as_str(), "--json"];
    args.extend_from_slice(&RANGE);
    let json: Value = serde_json::from_str(&stdout(&rag(&env, &args))).unwrap();
    check_json(&json);

    let bad = |args: &[&str], needle: &str| {
        let out = rag(&env, args);
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(
            !out.status.success() && err.contains(needle),
            "{args:?} → {err}"
        );
    };
    bad(
        &["report", "--dump", &path_arg, "--since", "2026-02-30"],
        "--since",
    );
    bad(
        &[
            "report",
            "--dump",
            &path_arg,
            "--since",
            "2026-11-22",
            "--until",
            "2026-11-20",
        ],
        "after",
    );
    bad(
        &[
            "report",
            "--dump",
            &path_arg,
            "--since",
            "2020-01-01",
            "--until",
            "2026-01-01",
        ],
        "366 days",
    );
    bad(&["report"], "--table NAME or AUDIT_TABLE");
    std::fs::write(&path, "{\"not\": \"a record\"}\n").unwrap();
    bad(&["report", "--dump", &path_arg], ":1: not an audit record");
    let _ = std::fs::remove_file(&path);
}
