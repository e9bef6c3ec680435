//! The token estimator against real tokenizer counts (`tests/data/token_counts.json`,
//! produced by `infra/measure_tokens.cjs`): checks the error bounds stated in
//! `shared/src/prompt/tokens.rs`.
#![allow(clippy::unwrap_used)] // a broken fixture should fail loudly

use serde_json::Value;
use shared::prompt::{estimate_tokens, visitor_ceiling};

struct Measured {
    name: String,
    text: String,
    qwen3: usize,
    o200k: usize,
}

/// The calibration texts: what sites and visitors write (the `adv_` texts are crafted to
/// cost as much as possible and are checked separately).
fn fixture() -> Vec<Measured> {
    all_texts()
        .into_iter()
        .filter(|m| !m.name.starts_with("adv_"))
        .collect()
}

fn all_texts() -> Vec<Measured> {
    let raw = include_str!("../data/token_counts.json");
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

#[test]
fn the_visitor_ceiling_is_never_below_the_real_count() {
    let all = all_texts();
    assert!(all.iter().filter(|m| m.name.starts_with("adv_")).count() >= 10);
    let mut failures = Vec::new();
    for m in &all {
        let ceiling = visitor_ceiling(&m.text);
        if ceiling < m.qwen3 {
            failures.push(format!("{}: ceiling {ceiling} < qwen3 {}", m.name, m.qwen3));
        }
    }
    assert!(failures.is_empty(), "{failures:#?}");
}

#[test]
fn crafted_text_cannot_pass_for_cheap() {
    // Before, random consonants were estimated at a fifth of their real count and
    // extension-A ideographs at a fifth; what is left is words that read like words
    // ("bako tilu"), which the visitor ceiling covers for visitor text.
    let mut failures = Vec::new();
    for m in all_texts().iter().filter(|m| m.name.starts_with("adv_")) {
        let est = estimate_tokens(&m.text);
        let floor = if m.name == "adv_pronounceable_nonsense" {
            0.3
        } else {
            0.7
        };
        if (est as f64) < floor * m.qwen3 as f64 {
            failures.push(format!("{}: estimated {est}, qwen3 {}", m.name, m.qwen3));
        }
    }
    assert!(failures.is_empty(), "{failures:#?}");
}

#[test]
fn the_visitor_ceiling_of_ordinary_text_is_at_most_three_times_the_real_count() {
    // Over-counting a question costs context room, not safety; it must stay usable.
    for m in fixture() {
        let ceiling = visitor_ceiling(&m.text);
        assert!(
            ceiling <= 3 * m.qwen3 + 4,
            "{}: ceiling {ceiling}, qwen3 {}",
            m.name,
            m.qwen3
        );
    }
}

#[test]
fn crafted_history_cannot_push_the_prompt_past_the_context_window() {
    use shared::prompt::{build_prompt, PromptInput, ANSWER_RESERVE};
    use shared::{ChatMessage, Role};
    // The client sends the history: fill it with the texts that cost the most per
    // character, and count what was kept with the real tokenizer's numbers.
    let adv: Vec<Measured> = all_texts()
        .into_iter()
        .filter(|m| m.name.starts_with("adv_"))
        .collect();
    let history: Vec<ChatMessage> = adv
        .iter()
        .cycle()
        .take(40)
        .enumerate()
        .map(|(i, m)| {
            let role = if i % 2 == 0 {
                Role::User
            } else {
                Role::Assistant
            };
            ChatMessage::new(role, m.text.clone())
        })
        .collect();
    // The prompt carries the texts neutralized (invisible characters removed), which only
    // makes them cheaper: the original's count bounds the kept text's.
    let real_of = |text: &str| {
        adv.iter()
            .find(|m| shared::prompt::neutralize(&m.text) == text)
            .map_or(0, |m| m.qwen3)
    };
    let max_context_tokens = 8192;
    let prompt = build_prompt(&PromptInput {
        system_prompt: "You answer questions about this site.",
        blocks: &[],
        history: &history,
        question: "What is this?",
        max_context_tokens,
    });
    let real: usize = prompt.messages.iter().map(|m| real_of(&m.content)).sum();
    assert!(prompt.budget.history_kept > 0, "{:?}", prompt.budget);
    assert!(
        real <= max_context_tokens - ANSWER_RESERVE,
        "kept {real} real tokens of crafted text: {:?}",
        prompt.budget
    );
}
