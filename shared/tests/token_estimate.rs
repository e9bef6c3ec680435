//! The token estimator against real tokenizer counts (`tests/data/token_counts.json`,
//! produced by `infra/measure_tokens.cjs`): checks the error bounds stated in
//! `shared/src/tokens.rs`.
#![allow(clippy::unwrap_used)] // a broken fixture should fail loudly

use serde_json::Value;
use shared::tokens::estimate_tokens;

struct Measured {
    name: String,
    text: String,
    qwen3: usize,
    o200k: usize,
}

fn fixture() -> Vec<Measured> {
    let raw = include_str!("data/token_counts.json");
    let entries: Vec<Value> = serde_json::from_str(raw).unwrap();
    entries
        .iter()
        .map(|e| Measured {
            name: e["name"].as_str().unwrap().to_owned(),
            text: e["text"].as_str().unwrap().to_owned(),
            qwen3: e["qwen3"].as_u64().unwrap() as usize,
            o200k: e["o200k"].as_u64().unwrap() as usize,
        })
        .collect()
}

fn has_han(s: &str) -> bool {
    s.chars().any(|c| ('\u{4E00}'..='\u{9FFF}').contains(&c))
}

/// (estimate − real) / real.
fn rel(est: usize, real: usize) -> f64 {
    (est as f64 - real as f64) / real as f64
}

#[test]
fn fixture_covers_at_least_thirty_varied_texts() {
    let f = fixture();
    assert!(f.len() >= 30, "{}", f.len());
    for prefix in ["zh_", "en_", "mixed_", "code_", "url_", "kb_"] {
        assert!(
            f.iter().any(|m| m.name.starts_with(prefix)),
            "no {prefix} text"
        );
    }
}

#[test]
fn every_text_is_within_the_stated_per_text_bounds_against_qwen3() {
    let mut failures = Vec::new();
    for m in fixture() {
        let est = estimate_tokens(&m.text);
        let err = rel(est, m.qwen3);
        let small = est.abs_diff(m.qwen3) <= 2;
        let (lo, hi) = if has_han(&m.text) {
            (-0.20, 0.35)
        } else {
            (-0.20, 0.20)
        };
        if !small && !(lo..=hi).contains(&err) {
            failures.push(format!(
                "{}: estimated {est}, qwen3 {} ({:+.0}%)",
                m.name,
                m.qwen3,
                err * 100.0
            ));
        }
    }
    assert!(failures.is_empty(), "{failures:#?}");
}

#[test]
fn mean_and_total_error_against_qwen3_are_small() {
    let f = fixture();
    let (mut est_sum, mut real_sum, mut abs_sum) = (0usize, 0usize, 0.0f64);
    for m in &f {
        let est = estimate_tokens(&m.text);
        est_sum += est;
        real_sum += m.qwen3;
        abs_sum += rel(est, m.qwen3).abs();
    }
    let mean_abs = abs_sum / f.len() as f64;
    let total = rel(est_sum, real_sum);
    assert!(mean_abs < 0.10, "mean absolute error {mean_abs:.3}");
    assert!(total.abs() < 0.03, "total error {total:+.3}");
}

#[test]
fn texts_without_chinese_are_close_to_openai_o200k_in_total() {
    // Outside Chinese the BPE vocabularies mostly agree (o200k keeps up to three digits
    // together, so single numbers differ); in total the estimate holds for OpenAI too.
    let f = fixture();
    let latin: Vec<&Measured> = f.iter().filter(|m| !has_han(&m.text)).collect();
    let est: usize = latin.iter().map(|m| estimate_tokens(&m.text)).sum();
    let real: usize = latin.iter().map(|m| m.o200k).sum();
    let err = rel(est, real);
    assert!(err.abs() < 0.10, "{err:+.3} over {} texts", latin.len());
}
