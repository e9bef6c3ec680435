//! What the bot check costs the chat function per request: verifying a solved challenge
//! (one HMAC-SHA256 and one SHA-256), refusing a forged one, and issuing one.
//! `cargo bench -p shared --bench bot_check`.
#![allow(missing_docs)]

use std::hint::black_box;
use std::time::{Duration, SystemTime};

use criterion::{criterion_group, criterion_main, Criterion};
use shared::limits::{issue_challenge, solve_challenge, verify_proof, DEFAULT_DIFFICULTY};
use shared::Secret;

fn bot_check(c: &mut Criterion) {
    let secret = Secret::new("0123456789abcdef");
    let client = "e75168654482714d";
    let ttl = Duration::from_secs(300);
    let now = SystemTime::now();
    let challenge = issue_challenge(&secret, client, DEFAULT_DIFFICULTY, ttl, now);
    let proof = solve_challenge(&challenge.challenge, DEFAULT_DIFFICULTY);
    assert!(verify_proof(&secret, client, Some(&proof), DEFAULT_DIFFICULTY, now).is_ok());
    // The same proof with one MAC digit changed: refused only after the HMAC is computed.
    let (head, counter) = proof.split_once(':').expect("a proof has a counter");
    let flipped = if head.ends_with('0') { '1' } else { '0' };
    let forged = format!("{}{flipped}:{counter}", &head[..head.len() - 1]);
    assert!(verify_proof(&secret, client, Some(&forged), DEFAULT_DIFFICULTY, now).is_err());

    let mut group = c.benchmark_group("bot_check");
    group.bench_function("verify_valid", |b| {
        b.iter(|| {
            verify_proof(
                black_box(&secret),
                black_box(client),
                black_box(Some(proof.as_str())),
                DEFAULT_DIFFICULTY,
                now,
            )
        })
    });
    group.bench_function("verify_forged", |b| {
        b.iter(|| {
            verify_proof(
                black_box(&secret),
                black_box(client),
                black_box(Some(forged.as_str())),
                DEFAULT_DIFFICULTY,
                now,
            )
        })
    });
    group.bench_function("issue", |b| {
        b.iter(|| issue_challenge(black_box(&secret), client, DEFAULT_DIFFICULTY, ttl, now))
    });
    // What a script pays natively per solution at the default difficulty (2^14 hashes on
    // average; this challenge's count is fixed, so this is one sample of that spread).
    group.sample_size(10);
    group.bench_function("solve_native", |b| {
        b.iter(|| solve_challenge(black_box(&challenge.challenge), DEFAULT_DIFFICULTY))
    });
    group.finish();
}

criterion_group!(benches, bot_check);
criterion_main!(benches);
