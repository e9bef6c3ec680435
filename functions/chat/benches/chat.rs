//! Chat overhead without the model: a request through the real handler (event decoding,
//! validation, history, retrieval with follow-up check, prompt and budget, response
//! encoding, recording in the in-memory store) with a model that answers instantly, in
//! process. Also the time to the first byte of a streamed answer.
//!
//! Run: `cargo bench -p chat --bench chat` (criterion estimates, then a percentile report
//! over 2000 requests each).

use std::hint::black_box;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use chat::{function_handler, AppState};
use criterion::{criterion_group, BatchSize, Criterion};
use futures_util::StreamExt;
use lambda_http::Request;
use shared::chat::ChatConfig;
use shared::{
    Completion, CompletionRequest, CompletionStream, Config, KbHandle, LlmClient, LlmError,
    MemoryConversationStore, SearchIndex, StreamEvent, Usage,
};

const EVENT: &str = include_str!("../tests/data/function_url_post.json");
const ANSWER: &str = "Partial FC 是一种大规模人脸识别训练方法 [1]，代码在 InsightFace 仓库 [2]。";

/// A model that answers at once, so what is measured is everything around it.
struct InstantLlm;

#[async_trait::async_trait]
impl LlmClient for InstantLlm {
    fn model(&self) -> &str {
        "instant"
    }

    async fn complete(&self, _req: &CompletionRequest) -> Result<Completion, LlmError> {
        Ok(Completion {
            text: ANSWER.to_owned(),
            usage: Some(usage()),
            model: "instant".to_owned(),
        })
    }

    async fn stream(&self, _req: &CompletionRequest) -> Result<CompletionStream, LlmError> {
        let cut = ANSWER.char_indices().nth(12).map_or(0, |(i, _)| i);
        let (head, tail) = ANSWER.split_at(cut);
        Ok(CompletionStream::from_events(vec![
            Ok(StreamEvent::Delta(head.to_owned())),
            Ok(StreamEvent::Delta(tail.to_owned())),
            Ok(StreamEvent::Usage(usage())),
        ]))
    }
}

fn usage() -> Usage {
    Usage {
        prompt_tokens: 900,
        completion_tokens: 30,
        total_tokens: 930,
    }
}

fn state() -> AppState {
    let kb = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../knowledge_base.json");
    let index = SearchIndex::load_file(&kb).expect("sample knowledge base");
    let config = Config::from_lookup(|_| None).expect("config");
    AppState::new(
        KbHandle::fixed(Arc::new(index)),
        Some(Arc::new(InstantLlm)),
        Arc::new(MemoryConversationStore::new()),
        &config,
        ChatConfig {
            // The limits stay on, so their cost is measured: each request comes from its own
            // address (see `request`), and the budget is large enough never to run out.
            daily_token_budget: u64::MAX / 2,
            ..ChatConfig::default()
        },
    )
}

static COUNTER: AtomicU64 = AtomicU64::new(0);

/// A fresh request (new request id, so every one is really recorded).
fn request(stream: bool) -> Request {
    let n = COUNTER.fetch_add(1, Ordering::Relaxed);
    let body = format!(
        r#"{{"message": "请介绍一下 Partial FC", "stream": {stream}, "request_id": "bench-{n}"}}"#
    );
    let mut ev: serde_json::Value = serde_json::from_str(EVENT).expect("fixture");
    ev["body"] = serde_json::Value::String(body);
    // A distinct visitor per request, each well within its rate limit.
    ev["requestContext"]["http"]["sourceIp"] =
        format!("10.{}.{}.{}", (n >> 16) & 255, (n >> 8) & 255, n & 255).into();
    lambda_http::request::from_str(&ev.to_string()).expect("event")
}

/// One JSON chat through the handler, body read to the end.
async fn json_chat(state: &AppState, req: Request) -> usize {
    let res = function_handler(state, req).await.expect("handler");
    assert_eq!(res.status(), 200);
    res.into_body()
        .collect()
        .await
        .expect("body")
        .to_bytes()
        .len()
}

/// A streamed chat: time to the first body byte; the rest is drained untimed.
async fn first_sse_byte(state: &AppState, req: Request) -> Duration {
    let start = Instant::now();
    let res = function_handler(state, req).await.expect("handler");
    let mut body = res.into_body();
    let first = body.next().await.expect("a first chunk").expect("chunk");
    let elapsed = start.elapsed();
    black_box(first);
    while body.next().await.is_some() {}
    elapsed
}

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("runtime")
}

fn benches(c: &mut Criterion) {
    let rt = runtime();
    let state = state();
    c.bench_function("chat_json_overhead", |b| {
        b.iter_batched(
            || request(false),
            |req| rt.block_on(json_chat(&state, req)),
            BatchSize::SmallInput,
        )
    });
    c.bench_function("chat_sse_first_byte", |b| {
        b.iter_custom(|iters| {
            let mut total = Duration::ZERO;
            for _ in 0..iters {
                let req = request(true);
                total += rt.block_on(first_sse_byte(&state, req));
            }
            total
        })
    });
}

criterion_group!(group, benches);

/// Median and p99 over `n` timed runs (criterion reports means and confidence intervals).
fn percentiles(name: &str, mut samples: Vec<Duration>) {
    samples.sort();
    let at = |q: f64| samples[((samples.len() as f64 - 1.0) * q).round() as usize];
    println!(
        "{name}: n={} median={:.1} µs p99={:.1} µs max={:.1} µs",
        samples.len(),
        at(0.5).as_secs_f64() * 1e6,
        at(0.99).as_secs_f64() * 1e6,
        at(1.0).as_secs_f64() * 1e6,
    );
}

fn report() {
    const N: usize = 2000;
    let rt = runtime();
    let state = state();
    // Warm-up: first-touch allocations and the runtime's threads.
    for _ in 0..100 {
        rt.block_on(json_chat(&state, request(false)));
    }
    let json: Vec<Duration> = (0..N)
        .map(|_| {
            let req = request(false);
            let start = Instant::now();
            black_box(rt.block_on(json_chat(&state, req)));
            start.elapsed()
        })
        .collect();
    percentiles("chat_json_overhead (handler, instant model)", json);
    let sse: Vec<Duration> = (0..N)
        .map(|_| rt.block_on(first_sse_byte(&state, request(true))))
        .collect();
    percentiles("chat_sse_first_byte", sse);
}

fn main() {
    group();
    Criterion::default().configure_from_args().final_summary();
    report();
}
