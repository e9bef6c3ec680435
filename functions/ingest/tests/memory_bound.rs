//! A knowledge base whose index the serving functions could not hold is refused before it
//! is stored (issue: a valid 5 MB KB of random CJK pages took the search function from 30 to
//! 239 MB). The index is measured with the allocator the ingest binary installs.
#![allow(clippy::unwrap_used)] // test helpers may panic on broken fixtures

mod common;

use std::sync::Arc;

use common::{call, error_of, Event, KB, TOKEN_SHA256};
use ingest::AppState;
use serde_json::json;
use shared::ingest::IngestConfig;
use shared::{Config, MemoryConversationStore, MemoryKbSource};

#[global_allocator]
static ALLOC: shared::heap::CountingAlloc = shared::heap::CountingAlloc;

/// `n` pages of text drawn from the basic CJK ideographs by a fixed LCG: every pair of
/// characters is a new bigram, the worst case for the index.
fn random_cjk_kb(pages: usize, chars: usize) -> String {
    let mut x: u32 = 12345;
    let docs: Vec<_> = (0..pages)
        .map(|i| {
            let text: String = (0..chars)
                .map(|_| {
                    x = x.wrapping_mul(1_103_515_245).wrapping_add(12345);
                    char::from_u32(0x4e00 + (x >> 8) % 20_000).unwrap()
                })
                .collect();
            json!({"id": format!("p{i}"), "type": "page", "title": format!("页 {i}"), "content": text})
        })
        .collect();
    json!({ "documents": docs }).to_string()
}

fn state_with_memory(source: Arc<MemoryKbSource>, index_memory_mb: &str) -> AppState {
    let ingest = IngestConfig::from_lookup(|k| match k {
        "INGEST_TOKEN_SHA256" => Some(TOKEN_SHA256.to_owned()),
        "INDEX_MEMORY_MB" => Some(index_memory_mb.to_owned()),
        _ => None,
    })
    .unwrap();
    let config = Config::from_lookup(|_| None).unwrap();
    AppState::new(
        source,
        Arc::new(MemoryConversationStore::new()),
        &config,
        &ingest,
    )
}

#[tokio::test]
async fn an_index_too_big_for_the_functions_is_refused_and_nothing_is_written() {
    let source = Arc::new(MemoryKbSource::with_bytes(KB));
    let before = source.object().unwrap().etag;
    let state = state_with_memory(source.clone(), "8");

    // ~600 KB of JSON whose index needs far more than 8 MiB.
    let big = random_cjk_kb(200, 1000);
    let put = Event::new("PUT").if_match(&before).body(Some(&big)).build();
    let (status, body, _) = call(&state, put).await;
    assert_eq!(status, 413, "{body}");
    let (code, message) = error_of(&body);
    assert_eq!(code, "payload_too_large");
    assert!(
        message.contains("INDEX_MEMORY_MB") && message.contains("over the 8 MiB"),
        "{message}"
    );
    // The figures: what loading the prebuilt index takes, and what requests add.
    assert!(
        message.contains("prebuilt index, which takes") && message.contains("as requests read"),
        "{message}"
    );
    println!("{message}");
    assert_eq!(source.object().unwrap().etag, before, "nothing was written");

    // The same functions take an ordinary site.
    let put = Event::new("PUT").if_match(&before).body(Some(KB)).build();
    let (status, body, _) = call(&state, put).await;
    assert_eq!(status, 200, "{body}");

    // Given the memory, the big one is accepted too.
    let roomy = state_with_memory(source.clone(), "1024");
    let current = source.object().unwrap().etag;
    let put = Event::new("PUT")
        .if_match(&current)
        .body(Some(&big))
        .build();
    let (status, body, _) = call(&roomy, put).await;
    assert_eq!(status, 200, "{body}");
}
