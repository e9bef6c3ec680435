//! `rag search`, `rag validate` and `rag eval` as a site owner runs them: the real binary,
//! its output and its exit codes (0 success, 1 invalid input, 2 usage error).
#![allow(clippy::unwrap_used)] // test helpers may panic on broken fixtures

use std::path::Path;

use crate::common::Scratch;
use std::process::{Command, Output};

fn rag(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_rag"))
        .args(args)
        // The binary reads TOP_K / MIN_SCORE / KB_SOURCE; the tests want the defaults.
        .env_remove("KB_SOURCE")
        .env_remove("TOP_K")
        .env_remove("MIN_SCORE")
        .output()
        .unwrap()
}

fn sample_kb() -> String {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../knowledge_base.json")
        .display()
        .to_string()
}

fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// A scratch directory for one test's files.
fn scratch(name: &str) -> Scratch {
    Scratch::new("rag-cli", name)
}

#[test]
fn search_prints_hits_and_json_matches_the_search_function_body() {
    let kb = sample_kb();
    let out = rag(&["search", "--kb", &kb, "请介绍一下 Partial FC"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(stdout(&out).contains("Partial FC"), "{}", stdout(&out));

    let out = rag(&["search", "--kb", &kb, "--json", "-k", "2", "LLaVA"]);
    assert_eq!(out.status.code(), Some(0));
    let body: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(body["hits"].as_array().unwrap().len(), 2);
    for key in ["query", "terms", "hits", "took_us"] {
        assert!(!body[key].is_null(), "missing {key}");
    }
}

#[test]
fn search_rejects_bad_k_and_missing_files_with_exit_1() {
    let out = rag(&["search", "--kb", &sample_kb(), "-k", "0", "LLaVA"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(stderr(&out).contains("k must be"), "{}", stderr(&out));
    let out = rag(&["search", "--kb", "/nonexistent/kb.json", "LLaVA"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(stderr(&out).contains("/nonexistent/kb.json"));
}

#[test]
fn validate_summarises_a_good_file_and_lists_every_problem_of_a_bad_one() {
    let out = rag(&["validate", &sample_kb()]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(stdout(&out).starts_with("ok: "), "{}", stdout(&out));
    assert!(stdout(&out).contains("publication: "));

    let dir = scratch("validate");
    let bad = dir.join("bad.json");
    std::fs::write(
        &bad,
        r#"{"documents": [{"id": "a", "type": "publication"}, {"id": "a", "type": "page", "title": "t", "url": "ftp://x"}]}"#,
    )
    .unwrap();
    let out = rag(&["validate", bad.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(1));
    let err = stderr(&out);
    for needle in [
        "documents[0].title: is required",
        "documents[1].id: duplicate id",
        "documents[1].url: must be an absolute http(s) URL",
        "3 problem(s)",
    ] {
        assert!(err.contains(needle), "missing {needle:?} in {err}");
    }

    std::fs::write(&bad, "{\"documents\": [").unwrap();
    let out = rag(&["validate", bad.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(1));
    assert!(stderr(&out).contains("invalid JSON"));
}

#[test]
fn usage_errors_exit_2() {
    assert_eq!(rag(&[]).status.code(), Some(2));
    assert_eq!(rag(&["search"]).status.code(), Some(2));
    assert_eq!(rag(&["frobnicate"]).status.code(), Some(2));
}

#[test]
fn index_writes_a_prebuilt_index_the_functions_accept_beside_the_file() {
    let dir = scratch("index");
    let kb = dir.join("site.json");
    std::fs::copy(sample_kb(), &kb).unwrap();
    let out = rag(&["index", kb.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let bytes = std::fs::read(dir.join("site.index")).unwrap();
    let json = std::fs::read(&kb).unwrap();
    let parsed =
        shared::KnowledgeBase::from_json_str(std::str::from_utf8(&json).unwrap(), "kb").unwrap();
    // Named by the file source's ETag, so a function reading the file loads the index
    // without parsing the JSON, with the same documents.
    let etag = shared::search::content_version(&json);
    let expect = shared::index::Expect::Version(&etag);
    let decoded = shared::index::decode(&bytes, expect, etag.clone()).unwrap();
    assert_eq!(decoded.kb(), &parsed);
    let source = std::sync::Arc::new(shared::kb::FileKbSource::new(&kb));
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let handle = runtime
        .block_on(shared::search::KbHandle::load(
            source,
            std::time::Duration::ZERO,
        ))
        .unwrap();
    assert!(handle.snapshot().is_prebuilt());
    assert_eq!(handle.snapshot().version(), etag);
    // An invalid file gets no index.
    std::fs::write(dir.join("bad.json"), "{\"documents\": 3}").unwrap();
    let out = rag(&["index", dir.join("bad.json").to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(1));
    assert!(!dir.join("bad.index").exists());
}

#[test]
fn eval_reports_metrics_as_json_and_writes_the_run() {
    let dir = scratch("eval");
    let corpus = dir.join("corpus.jsonl");
    let queries = dir.join("queries.jsonl");
    let qrels = dir.join("qrels.tsv");
    let run = dir.join("run.json");
    std::fs::write(
        &corpus,
        concat!(
            r#"{"_id": "d1", "title": "Face recognition", "text": "Training face recognition models at scale."}"#, "\n",
            r#"{"_id": "d2", "title": "Multimodal models", "text": "Large multimodal models read images."}"#, "\n",
            r#"{"_id": "d3", "title": "Cooking", "text": "Bread needs flour and water."}"#, "\n",
        ),
    )
    .unwrap();
    std::fs::write(
        &queries,
        concat!(
            r#"{"_id": "q1", "text": "人脸识别训练"}"#,
            "\n",
            r#"{"_id": "q2", "text": "multimodal images"}"#,
            "\n"
        ),
    )
    .unwrap();
    std::fs::write(&qrels, "query-id\tcorpus-id\tscore\nq1\td1\t1\nq2\td2\t1\n").unwrap();
    let p = |p: &Path| p.to_str().unwrap().to_owned();
    let out = rag(&[
        "eval",
        "--corpus",
        &p(&corpus),
        "--queries",
        &p(&queries),
        "--qrels",
        &p(&qrels),
        "--json",
        "--k",
        "2",
        "--run",
        &p(&run),
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let report: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let keys: Vec<&str> = report
        .as_object()
        .unwrap()
        .keys()
        .map(String::as_str)
        .collect();
    let mut want = vec![
        "index_ms",
        "mrr@10",
        "ndcg@10",
        "qps",
        "queries",
        "recall@10",
        "recall@100",
        "recall@3",
    ];
    want.sort();
    let mut got = keys.clone();
    got.sort();
    assert_eq!(got, want);
    // Both queries put their relevant document first: every rank metric is 1.
    assert_eq!(report["ndcg@10"], 1.0);
    assert_eq!(report["mrr@10"], 1.0);
    assert_eq!(report["queries"], 2);
    let run: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&run).unwrap()).unwrap();
    assert_eq!(run["q1"][0][0], "d1");
    assert!(run["q1"].as_array().unwrap().len() <= 2);

    std::fs::write(&qrels, "q1\td1\n").unwrap();
    let out = rag(&[
        "eval",
        "--corpus",
        &p(&corpus),
        "--queries",
        &p(&queries),
        "--qrels",
        &p(&qrels),
    ]);
    assert_eq!(out.status.code(), Some(1), "malformed qrels");
}

#[test]
fn eval_scores_rewritten_queries_through_the_fused_path_and_names_a_bad_rewrite_line() {
    let dir = scratch("eval-rewrites");
    let (corpus, queries, qrels, rewrites) = (
        dir.join("corpus.jsonl"),
        dir.join("queries.jsonl"),
        dir.join("qrels.tsv"),
        dir.join("rewrites.tsv"),
    );
    std::fs::write(
        &corpus,
        concat!(
            r#"{"_id": "d1", "title": "git-reflog", "text": "Reference logs record when branch tips were updated."}"#, "\n",
            r#"{"_id": "d2", "title": "git-commit", "text": "Record changes to the repository."}"#, "\n",
        ),
    )
    .unwrap();
    // Words the corpus never uses: only the rewrite can find d1.
    std::fs::write(&queries, r#"{"_id": "q1", "text": "plugh xyzzy"}"#).unwrap();
    std::fs::write(&qrels, "q1\td1\t1\n").unwrap();
    let p = |p: &Path| p.to_str().unwrap().to_owned();
    let eval = |extra: &[&str]| {
        let mut args = vec![
            "eval".to_owned(),
            "--corpus".into(),
            p(&corpus),
            "--queries".into(),
            p(&queries),
            "--qrels".into(),
            p(&qrels),
            "--json".into(),
        ];
        args.extend(extra.iter().map(|a| a.to_string()));
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        rag(&args)
    };
    let plain: serde_json::Value = serde_json::from_slice(&eval(&[]).stdout).unwrap();
    assert_eq!(plain["ndcg@10"], 0.0);
    std::fs::write(
        &rewrites,
        "q1\treference logs\tgit reflog shows where branch tips were.\n",
    )
    .unwrap();
    let out = eval(&["--rewrites", &p(&rewrites)]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let fused: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(
        (fused["ndcg@10"].as_f64(), fused["rewritten"].as_u64()),
        (Some(1.0), Some(1))
    );

    // The chat's modes: `off` never calls the model; the question here has no hit, so the
    // default `cross_language` does. An unknown mode is a usage error naming the four.
    let modes: Vec<Option<u64>> = ["off", "cross_language"]
        .iter()
        .map(|m| {
            let out = eval(&["--rewrites", &p(&rewrites), "--rewrite-mode", m]);
            let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
            v["rewritten"].as_u64()
        })
        .collect();
    assert_eq!(modes, [Some(0), Some(1)]);
    let out = eval(&["--rewrites", &p(&rewrites), "--rewrite-mode", "sometimes"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr(&out).contains("must be off, weak, cross_language or always"),
        "{}",
        stderr(&out)
    );

    std::fs::write(&rewrites, "q1\tok\nq1\tagain\n").unwrap();
    let out = eval(&["--rewrites", &p(&rewrites)]);
    assert_eq!(out.status.code(), Some(1));
    assert!(stderr(&out).contains("rewrites.tsv:2"), "{}", stderr(&out));
}

#[test]
fn the_ci_recipe_runs_on_push_and_nightly_with_flags_rag_has() {
    use yaml_rust2::YamlLoader;
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../examples/github-actions/rag.yml");
    let text = std::fs::read_to_string(&path).unwrap();
    let doc = &YamlLoader::load_from_str(&text).unwrap()[0];
    let on = &doc["on"];
    assert!(!on["push"]["branches"].is_badvalue(), "runs on pushes");
    assert!(
        on["schedule"][0]["cron"].as_str().is_some(),
        "and on a schedule"
    );
    let steps = doc["jobs"]["sync"]["steps"].as_vec().unwrap();
    let runs: Vec<&str> = steps.iter().filter_map(|s| s["run"].as_str()).collect();
    // Every `rag <command> --flag` the recipe uses must exist in this rag.
    let mut used = 0;
    for line in runs.iter().flat_map(|r| r.lines()) {
        let Some(rest) = line.trim().strip_prefix("rag ") else {
            continue;
        };
        let mut words = rest.split_whitespace();
        let command = words.next().unwrap();
        let help = stdout(&rag(&[command, "--help"]));
        for flag in words.filter(|w| w.starts_with("--")) {
            assert!(help.contains(flag), "rag {command} has no {flag}:\n{help}");
        }
        used += 1;
    }
    assert_eq!(used, 2, "the recipe builds and syncs: {runs:?}");
    // The token reaches rag only through the environment, from a secret.
    let sync = steps
        .iter()
        .find(|s| s["run"].as_str().is_some_and(|r| r.contains("rag sync")));
    let token = sync.unwrap()["env"]["RAG_INGEST_TOKEN"].as_str().unwrap();
    assert_eq!(token, "${{ secrets.RAG_INGEST_TOKEN }}");
}
