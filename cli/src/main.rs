//! `rag`: search, validate, evaluate and upload a knowledge base from a terminal.
//!
//! `rag search "请介绍一下 Partial FC"` answers what the `search` function would;
//! `rag validate knowledge_base.json` checks a file before upload; `rag eval` measures
//! retrieval on a BEIR-format test set; `rag ingest --url URL --token-env VAR FILE` shows
//! what would change in the deployed knowledge base and uploads it; `rag sync --url URL
//! --token-env VAR [FILE]` sends only the documents that changed; `rag build` writes the
//! knowledge base from a site (built HTML, Markdown, a sitemap crawl, BibTeX, hand-kept
//! JSON) with its options in `rag.toml`; `rag index` writes the prebuilt index the functions
//! load at cold start; `rag report --since 2026-11-01 [--json|--csv|--html]`
//! summarises what visitors asked (from the audit table). Exit codes: 0 success,
//! 1 invalid input or failed check, 2 usage error.

mod build;
mod eval;
mod ingest;
mod local_kb;
mod out;
mod remote;
mod report;
#[cfg(test)]
mod scratch;
mod stop;
mod sync;

use clap::{Parser, Subcommand};
use out::outln;
use shared::{Config, Error, KbLocation, SearchIndex, SearchRequest};
use std::path::PathBuf;
use std::process::ExitCode;

#[derive(Parser)]
#[command(
    name = "rag",
    version,
    about = "Search, validate, evaluate and upload a RAG knowledge base"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Search a knowledge base the way the search function does.
    Search {
        /// Knowledge base file (default: KB_SOURCE, else ./knowledge_base.json).
        #[arg(long)]
        kb: Option<PathBuf>,
        /// Number of hits (default: TOP_K, else 3).
        #[arg(short = 'k')]
        k: Option<String>,
        /// Print the search function's JSON body.
        #[arg(long)]
        json: bool,
        /// What to search for: a question or keywords, in any language the site has.
        query: String,
    },
    /// Validate a knowledge base file; prints every problem.
    Validate {
        /// The file to check.
        path: PathBuf,
    },
    /// Write the prebuilt index beside a knowledge base file (`knowledge_base.json` →
    /// `knowledge_base.index`; docs/prebuilt-index.md), for a file uploaded without the
    /// ingest function, which writes its own.
    Index {
        /// The knowledge base file.
        path: PathBuf,
    },
    /// Evaluate retrieval on a BEIR-format set (corpus, queries, qrels).
    Eval(EvalArgs),
    /// Build knowledge_base.json from the site: built HTML, Markdown, a sitemap crawl,
    /// BibTeX and hand-kept JSON (options from rag.toml; flags override).
    Build(Box<build::BuildArgs>),
    /// Validate a knowledge base, show the diff against the deployed one, and upload it
    /// through the ingest function (conditional on the version the diff was made against).
    Ingest {
        #[command(flatten)]
        target: remote::Target,
        /// The knowledge base file to upload.
        path: PathBuf,
    },
    /// What visitors asked over a range of days, from the audit table (or a local dump):
    /// questions by count and language, coverage gaps (no or weak hits), answers rated
    /// down, model errors, tokens per day against the budget.
    Report(Box<report::ReportArgs>),
    /// Make the deployed knowledge base match a file, sending only what changed (a patch
    /// of the changed documents; the whole file when the glossary changed); retries when
    /// someone else wrote meanwhile.
    Sync {
        #[command(flatten)]
        target: remote::Target,
        /// The knowledge base file.
        #[arg(default_value = "knowledge_base.json")]
        path: PathBuf,
    },
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let result = match cli.command {
        Command::Search { kb, k, json, query } => search(kb, k.as_deref(), json, &query),
        Command::Validate { path } => validate(&path),
        Command::Report(args) => report::run(*args),
        Command::Index { path } => write_index(&path),
        Command::Build(args) => return build::run(*args),
        Command::Eval(args) => evaluate(args),
        Command::Ingest { target, path } => {
            return ingest::run(&ingest::Args {
                url: &target.url,
                token_env: &target.token_env,
                dry_run: target.dry_run,
                path: &path,
                stage_above: target.stage_above,
            })
        }
        Command::Sync { target, path } => {
            return sync::run(&sync::Args {
                url: &target.url,
                token_env: &target.token_env,
                dry_run: target.dry_run,
                path: &path,
                stage_above: target.stage_above,
            })
        }
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(message) => {
            eprintln!("error: {message}");
            ExitCode::from(1)
        }
    }
}

fn search(kb: Option<PathBuf>, k: Option<&str>, json: bool, query: &str) -> Result<(), String> {
    let config = Config::from_env().map_err(|e| e.to_string())?;
    let path = match (kb, &config.kb_source) {
        (Some(p), _) => p,
        (None, KbLocation::File(p)) => p.clone(),
        (None, KbLocation::S3 { .. }) => {
            return Err("KB_SOURCE is an S3 URL; pass --kb PATH for a local file".into())
        }
    };
    let index = SearchIndex::load_file(&path).map_err(|e| e.to_string())?;
    let req = SearchRequest::new(Some(query), k, config.top_k).map_err(|e| e.to_string())?;
    let res = index.run(&req, config.min_score);
    if json {
        outln!(
            "{}",
            serde_json::to_string_pretty(&res).map_err(|e| e.to_string())?
        );
        return Ok(());
    }
    let terms: Vec<String> = res
        .terms
        .iter()
        .map(|t| format!("{}:{:.2}", t.term, t.weight))
        .collect();
    outln!("terms: {}", terms.join(" "));
    if res.hits.is_empty() {
        outln!("no hits (min score {})", config.min_score);
    }
    for (i, h) in res.hits.iter().enumerate() {
        outln!(
            "[{}] {:.3}  {}  ({}, {})",
            i + 1,
            h.score,
            h.title,
            h.id,
            h.doc_type
        );
        if let Some(url) = &h.url {
            outln!("      {url}");
        }
    }
    outln!("took {} µs", res.took_us);
    Ok(())
}

fn write_index(path: &std::path::Path) -> Result<(), String> {
    let bytes = std::fs::read(path).map_err(|e| format!("{}: {e}", path.display()))?;
    let kb = shared::KnowledgeBase::from_json_str(
        &String::from_utf8_lossy(&bytes),
        &path.display().to_string(),
    )
    .map_err(|e| e.to_string())?;
    let index = SearchIndex::new(kb, String::new());
    // Named by the file source's ETag (the bytes' hash), so a function reading this file
    // uses the index without reading the JSON.
    let hash = shared::index::content_hash(&bytes);
    let file = shared::index::encode(&index, hash, &shared::kb::version_of_hash(hash));
    let out = build::index_path(path);
    build::write(&out, &file)?;
    outln!("wrote {} ({} bytes)", out.display(), file.len());
    Ok(())
}

fn validate(path: &std::path::Path) -> Result<(), String> {
    let index = match SearchIndex::load_file(path) {
        Ok(index) => index,
        Err(Error::InvalidKb(problems)) => {
            for p in &problems.0 {
                eprintln!("{}: {p}", path.display());
            }
            return Err(format!(
                "{} problem(s) in {}",
                problems.0.len(),
                path.display()
            ));
        }
        Err(e) => return Err(e.to_string()),
    };
    let kb = index.kb();
    let mut counts: Vec<(String, usize)> = Vec::new();
    for d in &kb.documents {
        match counts.iter_mut().find(|(t, _)| *t == d.doc_type) {
            Some((_, n)) => *n += 1,
            None => counts.push((d.doc_type.clone(), 1)),
        }
    }
    let by_type: Vec<String> = counts.iter().map(|(t, n)| format!("{t}: {n}")).collect();
    outln!(
        "ok: {} documents ({}), {} passages, {} glossary entries, version {}",
        kb.documents.len(),
        by_type.join(", "),
        index.retriever().passages(),
        kb.glossary.len(),
        index.version()
    );
    Ok(())
}

/// `rag eval`'s arguments.
#[derive(Debug, clap::Args)]
struct EvalArgs {
    /// BEIR corpus.jsonl, or a knowledge_base.json.
    #[arg(long)]
    corpus: PathBuf,
    /// BEIR queries.jsonl.
    #[arg(long)]
    queries: PathBuf,
    /// BEIR qrels TSV.
    #[arg(long)]
    qrels: PathBuf,
    /// Depth of the run written by --run.
    #[arg(long, default_value_t = 100)]
    k: usize,
    /// Write the ranked run as JSON: {"query-id": [["doc-id", score], ...]}.
    #[arg(long)]
    run: Option<PathBuf>,
    /// Print one JSON object with the metrics.
    #[arg(long)]
    json: bool,
    /// Share of a query's words a hit must match (the product's default unless given;
    /// 0 keeps every hit).
    #[arg(long, default_value_t = shared::retrieval::MIN_COVERAGE)]
    min_coverage: f32,
    /// Rewrites to score the chat's fused path with: JSONL (`{"id", "query",
    /// "passage"}`) or TSV (`id, query[, passage]`), one query id per line.
    #[arg(long)]
    rewrites: Option<PathBuf>,
    /// Which questions get their rewrite, as the chat's `QUERY_REWRITE` decides for a first
    /// question: `always` (every question with one), `cross_language` (the chat's default:
    /// a question not in the site's language, or a weak one), `weak` or `off`.
    #[arg(long, default_value = "always", value_parser = parse_rewrite_mode)]
    rewrite_mode: shared::chat::QueryRewrite,
}

fn parse_rewrite_mode(value: &str) -> Result<shared::chat::QueryRewrite, String> {
    shared::chat::QueryRewrite::parse(value).map_err(|e| e.to_string())
}

fn evaluate(args: EvalArgs) -> Result<(), String> {
    let EvalArgs {
        corpus,
        queries,
        qrels,
        k,
        run,
        json,
        min_coverage,
        rewrites,
        rewrite_mode,
    } = args;
    let corpus = eval::load_corpus(&corpus)?;
    let queries = eval::load_queries(&queries)?;
    let qrels = eval::load_qrels(&qrels)?;
    let rewrites = rewrites.as_deref().map(eval::load_rewrites).transpose()?;
    let (report, runs) = eval::evaluate(
        &corpus,
        &queries,
        &qrels,
        rewrites.as_ref().map(|r| (r, rewrite_mode)),
        k,
        min_coverage,
    );
    if let Some(path) = run {
        let map: serde_json::Map<String, serde_json::Value> = runs
            .into_iter()
            .map(|(q, hits)| (q, serde_json::json!(hits)))
            .collect();
        let text = serde_json::to_string(&map).map_err(|e| e.to_string())?;
        std::fs::write(&path, text).map_err(|e| format!("{}: {e}", path.display()))?;
    }
    if json {
        outln!(
            "{}",
            serde_json::to_string(&report).map_err(|e| e.to_string())?
        );
    } else {
        outln!("queries     {}", report.queries);
        if let Some(n) = report.rewritten {
            outln!("rewritten   {n}");
        }
        outln!("nDCG@10     {:.4}", report.ndcg10);
        outln!("Recall@3    {:.4}", report.recall3);
        outln!("Recall@10   {:.4}", report.recall10);
        outln!("Recall@100  {:.4}", report.recall100);
        outln!("MRR@10      {:.4}", report.mrr10);
        outln!("queries/s   {:.0} (one thread)", report.qps);
        outln!(
            "index       {:.1} ms ({} documents)",
            report.index_ms,
            corpus.ids.len()
        );
    }
    Ok(())
}
