//! `rag eval`: retrieval quality and speed on a BEIR-format test set.
//!
//! Metrics follow trec_eval/BEIR conventions: graded gains taken as the qrels score,
//! DCG = Σ gain_i / log2(i + 1) over ranks i = 1.., nDCG@10 against the ideal ordering of
//! the judged documents; Recall@k over documents with a positive judgment; MRR@10 is the
//! reciprocal rank of the first relevant document in the top 10. Only queries that have
//! judgments are evaluated.
//!
//! With rewrites (`--rewrites FILE`: per query id, the question rewritten and optionally a
//! hypothetical answer passage, as a model would write them for the chat), a query that
//! has one is ranked as the chat ranks an expanded question: the question, the rewrite
//! and the passage each [`FUSION_DEPTH`] deep, fused by [`fuse_expansion`] (the chat's own
//! function). The other queries are ranked as without rewrites.

use serde::Serialize;
use shared::chat::{rewrites_first_question, QueryRewrite};
use shared::config::DEFAULT_MIN_SCORE;
use shared::search::{fuse_expansion, Expansion, Language, FUSION_DEPTH};
use shared::{DocScore, KnowledgeBase, Ranked, Retriever};
use std::collections::HashMap;
use std::path::Path;
use std::time::{Duration, Instant};

/// Documents of a BEIR corpus read for its language.
const LANGUAGE_SAMPLE_DOCS: usize = 500;

/// A corpus to evaluate: document ids and an index over them.
pub(crate) struct Corpus {
    pub(crate) ids: Vec<String>,
    engine: Engine,
    /// The site's main language, as the chat reads it (for `--rewrite-mode`).
    language: Language,
    pub(crate) index_ms: f64,
}

/// A BEIR corpus is a plain retriever; a knowledge base goes through the product's own
/// indexing (passages, metadata) so its numbers are the product's.
enum Engine {
    Plain(Retriever),
    Kb(shared::SearchIndex),
}

impl Corpus {
    fn retriever(&self) -> &Retriever {
        match &self.engine {
            Engine::Plain(r) => r,
            Engine::Kb(index) => index.retriever(),
        }
    }
}

/// Reads a BEIR `corpus.jsonl` (title + text indexed, one unit per document) or a
/// knowledge base (`.json`, indexed as the product indexes it).
pub(crate) fn load_corpus(path: &Path) -> Result<Corpus, String> {
    let text = std::fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))?;
    if path.extension().is_some_and(|e| e == "json") {
        let kb = KnowledgeBase::from_json_str(&text, &path.display().to_string())
            .map_err(|e| e.to_string())?;
        let ids = kb.documents.iter().map(|d| d.id.clone()).collect();
        let started = Instant::now();
        let index = shared::SearchIndex::new(kb, "eval");
        let index_ms = ms(started.elapsed());
        return Ok(Corpus {
            ids,
            language: index.language(),
            engine: Engine::Kb(index),
            index_ms,
        });
    }
    #[derive(serde::Deserialize)]
    struct Doc {
        #[serde(rename = "_id")]
        id: String,
        #[serde(default)]
        title: String,
        #[serde(default)]
        text: String,
    }
    let mut ids = Vec::new();
    let mut texts = Vec::new();
    // The start of the first documents, for the corpus's language (`Language::of_kb`
    // reads as much of a knowledge base).
    let mut sample = String::new();
    for (n, line) in text
        .lines()
        .enumerate()
        .filter(|(_, l)| !l.trim().is_empty())
    {
        let d: Doc =
            serde_json::from_str(line).map_err(|e| format!("{}:{}: {e}", path.display(), n + 1))?;
        if ids.len() < LANGUAGE_SAMPLE_DOCS {
            sample.push_str(&d.title);
            sample.extend(d.text.chars().take(600));
        }
        ids.push(d.id);
        texts.push((d.title.clone(), [format!("{}\n{}", d.title, d.text)]));
    }
    let started = Instant::now();
    // The title is the document's naming field, as a page's is.
    let retriever = Retriever::build_fielded(texts, &[]);
    Ok(Corpus {
        ids,
        language: Language::of_text(&sample),
        engine: Engine::Plain(retriever),
        index_ms: ms(started.elapsed()),
    })
}

/// Reads BEIR `queries.jsonl` as (id, text) in file order.
pub(crate) fn load_queries(path: &Path) -> Result<Vec<(String, String)>, String> {
    #[derive(serde::Deserialize)]
    struct Query {
        #[serde(rename = "_id")]
        id: String,
        text: String,
    }
    let text = std::fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))?;
    text.lines()
        .enumerate()
        .filter(|(_, l)| !l.trim().is_empty())
        .map(|(n, l)| {
            serde_json::from_str::<Query>(l)
                .map(|q| (q.id, q.text))
                .map_err(|e| format!("{}:{}: {e}", path.display(), n + 1))
        })
        .collect()
}

/// Rewrites: query id → what a rewriter made of the question.
pub(crate) type Rewrites = HashMap<String, Expansion>;

/// Reads rewrites: JSON Lines (`{"id": "q1", "query": "…", "passage": "…"}`, `_id` and
/// `rewrite` accepted for `id` and `query`; `passage` optional) when the file's first
/// non-blank character is `{`, else TSV (`id <TAB> query [<TAB> passage]`, an optional
/// header line starting `query-id` or `id`). An id given twice is an error.
pub(crate) fn load_rewrites(path: &Path) -> Result<Rewrites, String> {
    #[derive(serde::Deserialize)]
    #[serde(deny_unknown_fields)]
    struct Line {
        #[serde(alias = "_id")]
        id: String,
        #[serde(alias = "rewrite", default)]
        query: Option<String>,
        #[serde(default)]
        passage: Option<String>,
    }
    let text = std::fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))?;
    let jsonl = text.trim_start().starts_with('{');
    let mut out = Rewrites::new();
    for (n, line) in text.lines().enumerate() {
        let at = || format!("{}:{}", path.display(), n + 1);
        if line.trim().is_empty() {
            continue;
        }
        let (id, query, passage) = if jsonl {
            let l: Line = serde_json::from_str(line).map_err(|e| format!("{}: {e}", at()))?;
            (l.id, l.query, l.passage)
        } else {
            let cols: Vec<&str> = line.split('\t').map(str::trim).collect();
            if n == 0 && matches!(cols.first(), Some(&"query-id" | &"id")) {
                continue;
            }
            match cols[..] {
                [id, query] => (id.to_owned(), Some(query.to_owned()), None),
                [id, query, passage] => (
                    id.to_owned(),
                    Some(query.to_owned()),
                    Some(passage.to_owned()),
                ),
                _ => return Err(format!("{}: expected 2 or 3 tab-separated columns", at())),
            }
        };
        let nonempty = |s: Option<String>| s.map(|s| s.trim().to_owned()).filter(|s| !s.is_empty());
        let expansion = Expansion {
            query: nonempty(query),
            passage: nonempty(passage),
        };
        if expansion.is_empty() {
            return Err(format!(
                "{}: neither a query nor a passage for {id:?}",
                at()
            ));
        }
        if out.insert(id.clone(), expansion).is_some() {
            return Err(format!("{}: {id:?} given twice", at()));
        }
    }
    Ok(out)
}

/// Judgments: query id → document id → graded relevance.
pub(crate) type Qrels = HashMap<String, HashMap<String, i64>>;

/// Reads a BEIR qrels TSV (`query-id corpus-id score`, header optional).
pub(crate) fn load_qrels(path: &Path) -> Result<Qrels, String> {
    let text = std::fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))?;
    let mut qrels = Qrels::new();
    for (n, line) in text.lines().enumerate() {
        let cols: Vec<&str> = line.split('\t').map(str::trim).collect();
        if line.trim().is_empty() || (n == 0 && cols.first() == Some(&"query-id")) {
            continue;
        }
        let [q, d, s] = cols[..] else {
            return Err(format!(
                "{}:{}: expected 3 tab-separated columns",
                path.display(),
                n + 1
            ));
        };
        let s: i64 = s
            .parse()
            .map_err(|e| format!("{}:{}: score: {e}", path.display(), n + 1))?;
        qrels
            .entry(q.to_owned())
            .or_default()
            .insert(d.to_owned(), s);
    }
    Ok(qrels)
}

/// The numbers `rag eval` reports; `--json` prints exactly these keys.
#[derive(Debug, Serialize)]
pub(crate) struct Report {
    #[serde(rename = "ndcg@10")]
    pub(crate) ndcg10: f64,
    #[serde(rename = "recall@3")]
    pub(crate) recall3: f64,
    #[serde(rename = "recall@10")]
    pub(crate) recall10: f64,
    #[serde(rename = "recall@100")]
    pub(crate) recall100: f64,
    #[serde(rename = "mrr@10")]
    pub(crate) mrr10: f64,
    pub(crate) queries: usize,
    /// Judged queries ranked with a rewrite (only with `--rewrites`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) rewritten: Option<usize>,
    pub(crate) qps: f64,
    pub(crate) index_ms: f64,
}

/// A ranked list: (document id, score), best first.
pub(crate) type Run = Vec<(String, f32)>;

/// Ranks every judged query (no minimum score), with its rewrite when `rewrites` has one
/// (see the module docs), and computes the report.
pub(crate) fn evaluate(
    corpus: &Corpus,
    queries: &[(String, String)],
    qrels: &Qrels,
    rewrites: Option<(&Rewrites, QueryRewrite)>,
    k: usize,
    min_coverage: f32,
) -> (Report, Vec<(String, Run)>) {
    let judged: Vec<&(String, String)> = queries
        .iter()
        .filter(|(id, _)| qrels.contains_key(id))
        .collect();
    let depth = k.max(100);
    let search_at = |text: &str, scoring: DocScore, depth: usize| -> Vec<Ranked> {
        corpus
            .retriever()
            .search_as(text, scoring, depth, f32::MIN, min_coverage)
            .1
    };
    let search = |text: &str| search_at(text, DocScore::Passages, depth);
    let mut runs = Vec::with_capacity(judged.len());
    let mut rewritten = 0;
    let (mut ndcg, mut r3, mut r10, mut r100, mut mrr) = (0.0, 0.0, 0.0, 0.0, 0.0);
    for (qid, text) in &judged {
        // The chat's test: the question's own hits at its default minimum score.
        let wanted = |mode| {
            let (terms, hits) = corpus.retriever().search_covering(
                text,
                FUSION_DEPTH,
                DEFAULT_MIN_SCORE,
                min_coverage,
            );
            rewrites_first_question(
                mode,
                corpus.retriever(),
                corpus.language,
                text,
                (&terms, &hits),
                DEFAULT_MIN_SCORE,
            )
        };
        let rewrite = rewrites
            .and_then(|(r, mode)| Some((r.get(qid.as_str())?, mode)))
            .filter(|&(_, mode)| wanted(mode));
        let hits = match rewrite {
            Some((expansion, _)) => {
                rewritten += 1;
                let original = search_at(text, DocScore::Passages, FUSION_DEPTH);
                fuse_expansion(&original, expansion, depth, |t, scoring| {
                    search_at(t, scoring, FUSION_DEPTH)
                })
            }
            None => search(text),
        };
        let ranked: Vec<&str> = hits
            .iter()
            .map(|r| corpus.ids[r.doc as usize].as_str())
            .collect();
        let rel = &qrels[qid.as_str()];
        ndcg += ndcg_at(&ranked, rel, 10);
        r3 += recall_at(&ranked, rel, 3);
        r10 += recall_at(&ranked, rel, 10);
        r100 += recall_at(&ranked, rel, 100);
        mrr += ranked
            .iter()
            .take(10)
            .position(|d| rel.get(*d).is_some_and(|&g| g > 0))
            .map_or(0.0, |p| 1.0 / (p + 1) as f64);
        let run = hits
            .iter()
            .take(k)
            .map(|r| (corpus.ids[r.doc as usize].clone(), r.score))
            .collect();
        runs.push((qid.clone(), run));
    }
    let n = judged.len().max(1) as f64;
    let report = Report {
        ndcg10: ndcg / n,
        recall3: r3 / n,
        recall10: r10 / n,
        recall100: r100 / n,
        mrr10: mrr / n,
        queries: judged.len(),
        rewritten: rewrites.map(|_| rewritten),
        qps: throughput(&judged, &search),
        index_ms: corpus.index_ms,
    };
    (report, runs)
}

/// Queries per second on one thread: one warm-up pass, then passes until ≥ 1 s has run.
fn throughput<T>(queries: &[&(String, String)], search: &impl Fn(&str) -> T) -> f64 {
    if queries.is_empty() {
        return 0.0;
    }
    for (_, q) in queries {
        std::hint::black_box(search(q));
    }
    let started = Instant::now();
    let mut done = 0usize;
    while started.elapsed() < Duration::from_secs(1) {
        for (_, q) in queries {
            std::hint::black_box(search(q));
        }
        done += queries.len();
    }
    done as f64 / started.elapsed().as_secs_f64()
}

fn ndcg_at(ranked: &[&str], rel: &HashMap<String, i64>, k: usize) -> f64 {
    let gain = |g: i64| g.max(0) as f64;
    let dcg: f64 = ranked
        .iter()
        .take(k)
        .enumerate()
        .map(|(i, d)| gain(*rel.get(*d).unwrap_or(&0)) / (i as f64 + 2.0).log2())
        .sum();
    let mut ideal: Vec<i64> = rel.values().copied().filter(|&g| g > 0).collect();
    ideal.sort_unstable_by(|a, b| b.cmp(a));
    let idcg: f64 = ideal
        .iter()
        .take(k)
        .enumerate()
        .map(|(i, &g)| gain(g) / (i as f64 + 2.0).log2())
        .sum();
    if idcg == 0.0 {
        0.0
    } else {
        dcg / idcg
    }
}

fn recall_at(ranked: &[&str], rel: &HashMap<String, i64>, k: usize) -> f64 {
    let relevant = rel.values().filter(|&&g| g > 0).count();
    if relevant == 0 {
        return 0.0;
    }
    let found = ranked
        .iter()
        .take(k)
        .filter(|d| rel.get(**d).is_some_and(|&g| g > 0))
        .count();
    found as f64 / relevant as f64
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1000.0
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rel(pairs: &[(&str, i64)]) -> HashMap<String, i64> {
        pairs.iter().map(|(d, g)| (d.to_string(), *g)).collect()
    }

    #[test]
    fn ndcg_by_hand() {
        // Relevant b (gain 1) at rank 2: DCG = 1/log2(3); ideal puts it at rank 1: IDCG = 1.
        let v = ndcg_at(&["a", "b"], &rel(&[("b", 1)]), 10);
        assert!((v - 1.0 / 3f64.log2()).abs() < 1e-12, "{v}");
        assert_eq!(ndcg_at(&["b", "a"], &rel(&[("b", 1)]), 10), 1.0);
        assert_eq!(ndcg_at(&["a"], &rel(&[("b", 0)]), 10), 0.0);
    }

    #[test]
    fn rewrites_are_read_from_json_lines_or_tsv() {
        let dir = crate::scratch::Scratch::new("rag-eval", "rewrites");
        let file = |name: &str, text: &str| dir.file(name, text);
        let jsonl = file(
            "r.jsonl",
            "{\"id\": \"z1\", \"query\": \"undo a commit\", \"passage\": \"Use git reset.\"}\n\n\
             {\"_id\": \"z2\", \"rewrite\": \"stash pop\"}\n",
        );
        let r = load_rewrites(&jsonl).unwrap();
        assert_eq!(r["z1"].passage.as_deref(), Some("Use git reset."));
        assert_eq!(
            (r["z2"].query.as_deref(), r["z2"].passage.as_deref()),
            (Some("stash pop"), None)
        );
        let tsv = file(
            "r.tsv",
            "query-id\tquery\tpassage\nz1\tundo a commit\nz2\t\tOnly a passage.\n",
        );
        let r = load_rewrites(&tsv).unwrap();
        assert_eq!(r["z1"].query.as_deref(), Some("undo a commit"));
        assert_eq!(
            (r["z2"].query.as_deref(), r["z2"].passage.as_deref()),
            (None, Some("Only a passage."))
        );
        for (name, bad) in [
            ("dup.tsv", "z1\ta\nz1\tb\n"),
            ("empty.tsv", "z1\t \n"),
            ("cols.tsv", "z1\n"),
            ("field.jsonl", "{\"id\": \"z1\", \"qeury\": \"a\"}\n"),
        ] {
            let err = load_rewrites(&file(name, bad)).unwrap_err();
            assert!(err.contains(":1") || err.contains(":2"), "{name}: {err}");
        }
    }

    /// An English corpus of one-passage documents, `(id, text)`.
    fn english_corpus(docs: &[(&str, &str)]) -> Corpus {
        Corpus {
            ids: docs.iter().map(|(id, _)| id.to_string()).collect(),
            engine: Engine::Plain(Retriever::build(
                docs.iter().map(|(_, text)| [text.to_string()]),
                &[],
            )),
            index_ms: 0.0,
            language: Language::English,
        }
    }

    #[test]
    fn a_rewrite_changes_only_its_own_query_and_ranks_as_the_chat_fuses() {
        let corpus = english_corpus(&[
            ("stash", "git stash saves uncommitted changes"),
            ("reset", "git reset undoes the last commit"),
            ("tags", "git tag names a release"),
        ]);
        let queries = vec![
            // Words the site never uses: only the rewrite can find the page.
            ("q1".to_string(), "plugh xyzzy".to_string()),
            ("q2".to_string(), "git tag".to_string()),
        ];
        let qrels: Qrels = [
            ("q1".to_string(), rel(&[("reset", 1)])),
            ("q2".to_string(), rel(&[("tags", 1)])),
        ]
        .into_iter()
        .collect();
        let (plain, _) = evaluate(&corpus, &queries, &qrels, None, 10, 0.0);
        let rewrites: Rewrites = [(
            "q1".to_string(),
            Expansion {
                query: Some("undo the last commit".into()),
                passage: None,
            },
        )]
        .into_iter()
        .collect();
        let with_rewrites = Some((&rewrites, QueryRewrite::Always));
        let (with, runs) = evaluate(&corpus, &queries, &qrels, with_rewrites, 10, 0.0);
        assert_eq!((plain.rewritten, with.rewritten), (None, Some(1)));
        // q2 (no rewrite) is ranked as before; q1 finds `reset` through its rewrite alone.
        assert_eq!(runs[1].1[0].0, "tags");
        assert_eq!(runs[0].1[0].0, "reset");
        assert!(
            with.ndcg10 > plain.ndcg10,
            "{} vs {}",
            with.ndcg10,
            plain.ndcg10
        );
    }

    #[test]
    fn the_rewrite_mode_decides_which_questions_get_theirs_as_the_chat_does() {
        let corpus = english_corpus(&[
            ("stash", "git stash saves uncommitted changes"),
            ("tags", "git tag names a release"),
            ("other", "the history of the project"),
        ]);
        let queries = vec![
            // No hit at all, a strong English question, and a Chinese one.
            ("q1".to_string(), "plugh xyzzy".to_string()),
            ("q2".to_string(), "git tag".to_string()),
            ("q3".to_string(), "怎么暂存修改".to_string()),
        ];
        let qrels: Qrels = [
            ("q1".to_string(), rel(&[("stash", 1)])),
            ("q2".to_string(), rel(&[("tags", 1)])),
            ("q3".to_string(), rel(&[("stash", 1)])),
        ]
        .into_iter()
        .collect();
        let expansion = Expansion {
            query: Some("stash changes".into()),
            passage: None,
        };
        let rewrites: Rewrites = ["q1", "q2", "q3"]
            .into_iter()
            .map(|q| (q.to_string(), expansion.clone()))
            .collect();
        let rewritten = |mode| {
            let (report, _) = evaluate(&corpus, &queries, &qrels, Some((&rewrites, mode)), 10, 0.0);
            report.rewritten
        };
        assert_eq!(rewritten(QueryRewrite::Always), Some(3));
        assert_eq!(rewritten(QueryRewrite::CrossLanguage), Some(2));
        assert_eq!(rewritten(QueryRewrite::Weak), Some(1));
        assert_eq!(rewritten(QueryRewrite::Off), Some(0));
    }

    #[test]
    fn recall_by_hand() {
        let r = rel(&[("a", 1), ("b", 1), ("c", 0)]);
        assert_eq!(recall_at(&["x", "a", "c", "b"], &r, 3), 0.5);
        assert_eq!(recall_at(&["x", "a", "c", "b"], &r, 4), 1.0);
    }
}
