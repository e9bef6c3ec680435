//! The prebuilt index against the JSON-built one: same hits and scores after a round
//! trip, and every kind of bad file refused with the JSON result served instead.

use super::*;
use crate::kb::PackedBlock;
use crate::search::{Chunks, SearchIndex, SearchRequest};
use crate::testing::synthetic::{site_json, Extras};
use crate::KnowledgeBase;

/// Queries in English, Chinese and both, with names, identifiers and words no page has.
const QUERIES: &[&str] = &[
    "What is Partial FC?",
    "face recognition training",
    "多模态大模型",
    "他发表过哪些论文",
    "LLaVA 的代码在哪里",
    "how do I install 卸载 uv",
    "贾德 模型",
    "vorakai shumeti trabou",
    "明天的天气怎么样",
    "Tavoki 是谁",
];

/// Proper nouns of the generated KB.
const NAMES: &[&str] = &[
    "Tavoki", "Jared", "Norman", "Merandu", "Shubaire", "Kolvena",
];

fn sample_json() -> Vec<u8> {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../knowledge_base.json");
    std::fs::read(path).expect("the sample KB is in the repo")
}

/// A deterministic generated KB of `pages` pages: invented words with a skewed frequency,
/// capitalised names, Chinese sentences on every third page, and pages long enough to be
/// split into several passages.
fn generated_json(pages: usize) -> Vec<u8> {
    let han = "模型数据训练人脸识别多模态代码论文发表检索系统学习方法网络图像";
    site_json(pages, 42, Extras { names: NAMES, han })
}

/// A knowledge base of one page per `(id, text)`, titled by its id.
fn pages_json(pages: &[(&str, &str)]) -> Vec<u8> {
    let documents: Vec<serde_json::Value> = pages
        .iter()
        .map(|(id, text)| serde_json::json!({"id": id, "type": "page", "title": id, "content": text}))
        .collect();
    serde_json::to_vec(&serde_json::json!({ "documents": documents })).unwrap()
}

fn kb_of(json: &[u8]) -> KnowledgeBase {
    KnowledgeBase::from_json_str(std::str::from_utf8(json).unwrap(), "test").unwrap()
}

/// Every query's terms and hits (document, passage, score bits), and what a visitor and the
/// model see of them: the search hits (titles, links, snippets) and each passage's text.
fn answers(index: &SearchIndex) -> Vec<String> {
    QUERIES
        .iter()
        .map(|q| {
            let (terms, hits) = index.rank(q, 10, 0.0);
            let ranked: Vec<(u32, u32, u32, std::borrow::Cow<'_, str>)> = hits
                .iter()
                .map(|h| (h.doc, h.passage, h.score.to_bits(), index.passage_text(h)))
                .collect();
            let shown = serde_json::to_string(&index.search(q, 10, 0.0).hits).unwrap();
            let listed = format!(
                "{:?}",
                index
                    .run(&SearchRequest::new(Some(q), None, 10).unwrap(), 0.0)
                    .hits
            );
            format!("{q}: {terms:?} {ranked:?} {shown} {listed}")
        })
        .collect()
}

/// Builds from JSON, writes the index naming version `E1`, reads it back by that version
/// and by the JSON's hash: the same documents, passages, arrays and answers, which are
/// not all empty.
fn round_trip(json: &[u8]) {
    let hash = content_hash(json);
    let built = SearchIndex::new(kb_of(json), "v");
    let bytes = encode(&built, hash, "E1");
    // Format 4 took 1.4 to 2 times the JSON: the text and postings are compressed now.
    assert!(
        bytes.len() < json.len(),
        "index {} bytes, JSON {}",
        bytes.len(),
        json.len()
    );
    assert_eq!(
        built_from(&bytes).unwrap(),
        BuiltFrom {
            version: "E1".into(),
            hash
        }
    );
    let by_hash = decode(&bytes, Expect::Hash(hash), "v".into()).unwrap();
    let loaded = decode(&bytes, Expect::Version("E1"), "E1".into()).unwrap();
    assert!(loaded.is_prebuilt() && !built.is_prebuilt());
    assert_eq!(loaded.version(), "E1");
    assert_eq!(by_hash.version(), "v");
    assert_eq!(loaded.kb(), built.kb());
    assert_eq!(loaded.chunks(), built.chunks());
    let (a, b) = (built.retriever(), loaded.retriever());
    assert_eq!(a.index(), b.index());
    assert_eq!(a.fields(), b.fields());
    assert_eq!(a.units(), b.units());
    assert_eq!(a.names(), b.names());
    assert_eq!(a.versions(), b.versions());
    assert_eq!(a.has_han(), b.has_han());
    let expected = answers(&built);
    assert_eq!(answers(&loaded), expected);
    assert_eq!(answers(&by_hash), expected);
    let hits: usize = QUERIES.iter().map(|q| built.rank(q, 10, 0.0).1.len()).sum();
    assert!(
        hits > QUERIES.len(),
        "the queries find something: {expected:#?}"
    );
}

#[test]
fn the_sample_kb_round_trips_with_the_same_documents_hits_and_scores() {
    round_trip(&sample_json());
}

#[test]
fn a_generated_1k_page_kb_round_trips_with_the_same_documents_hits_and_scores() {
    let json = generated_json(1000);
    let kb = kb_of(&json);
    let index = SearchIndex::new(kb, "v");
    assert!(index.retriever().passages() > 1100, "some pages are split");
    assert!(index.chunks().iter().any(|c| matches!(c, Chunks::Split(_))));
    assert!(index.retriever().has_han());
    assert!(!index.retriever().names().is_empty());
    round_trip(&json);
}

#[test]
fn a_bilingual_kb_round_trips_with_its_language_versions() {
    let pages = [
        (
            "lib-en",
            "The library lends books to students and teachers for two weeks.",
        ),
        (
            "rice-en",
            "Cooking rice in a pot takes twenty minutes over a low fire.",
        ),
        ("lib-zh", "图书馆向学生和教师借出图书，期限两周。"),
        ("rice-zh", "用锅在小火上煮米饭需要二十分钟。"),
    ];
    let json = pages_json(&pages);
    let built = SearchIndex::new(kb_of(&json), "v");
    assert_eq!(built.retriever().versions(), &[2, 3, 0, 1]);
    let bytes = encode(&built, content_hash(&json), "E1");
    let loaded = decode(&bytes, Expect::Version("E1"), "E1".into()).unwrap();
    assert_eq!(loaded.retriever().versions(), built.retriever().versions());
    let order = |index: &SearchIndex| -> Vec<u32> {
        let (_, hits) = index
            .retriever()
            .search("library books for students", 4, 0.0);
        hits.iter().map(|h| h.doc).collect()
    };
    assert_eq!(order(&loaded), order(&built));
    assert_eq!(order(&loaded)[..2], [0, 2]);
    // A Chinese question gets the Chinese version first, from the pairs as read back (the
    // sides worked out at the first such question) as from those just made.
    let order_zh = |index: &SearchIndex| -> Vec<u32> {
        let (_, hits) = index.retriever().search("图书馆给学生借图书", 4, 0.0);
        hits.iter().map(|h| h.doc).collect()
    };
    assert_eq!(order_zh(&loaded), order_zh(&built));
    assert_eq!(order_zh(&loaded)[..2], [2, 0]);
    // The stored pairing is what the loaded index serves, not one made again at load.
    let paired = [2u32, 3, 0, 1].map(u32::to_le_bytes).concat();
    assert_eq!(
        &bytes[bytes.len() - 16..],
        &paired[..],
        "the pairs end the body"
    );
    let swapped = rechecksummed(&bytes, |body| {
        let at = body.len() - 16;
        body[at..].copy_from_slice(&[3u32, 2, 1, 0].map(u32::to_le_bytes).concat());
    });
    let loaded = decode(&swapped, Expect::Version("E1"), "E1".into()).unwrap();
    assert_eq!(loaded.retriever().versions(), &[3, 2, 1, 0]);
    // A pairing naming a document that is not there is refused.
    let broken = rechecksummed(&bytes, |body| {
        let at = body.len() - 4;
        body[at..].copy_from_slice(&7u32.to_le_bytes());
    });
    assert!(decode(&broken, Expect::Version("E1"), "E1".into()).is_err());
}

#[test]
fn a_question_about_an_operator_finds_its_page_through_the_prebuilt_index() {
    // What a deployed function serves: the index `rag index` or ingest wrote, read back.
    let pages = [
        (
            "operators",
            "Boolean operators: the difference between element by element and short circuit.",
        ),
        (
            "short-circuit",
            "The difference: `a && b` evaluates b only when a is true, where `a & b` takes both.",
        ),
        ("element-wise", "Element by element: `a & b` on two arrays."),
    ];
    let json = pages_json(&pages);
    let built = SearchIndex::new(kb_of(&json), "v");
    let bytes = encode(&built, content_hash(&json), "E1");
    let loaded = decode(&bytes, Expect::Version("E1"), "E1".into()).unwrap();
    assert_eq!(loaded.retriever().index(), built.retriever().index());
    let ids = |index: &SearchIndex, q: &str| -> Vec<String> {
        index
            .search(q, 3, 0.0)
            .hits
            .into_iter()
            .map(|h| h.id)
            .collect()
    };
    for index in [&built, &loaded] {
        // The page writing both operators answers the comparison, before the overview that
        // only says "difference".
        let compared = ids(index, "what is the difference between & and &&");
        assert_eq!(compared.first().map(String::as_str), Some("short-circuit"));
        // `&` alone: the two pages that write it, not the overview.
        let mut single = ids(index, "what does & do");
        single.sort();
        assert_eq!(single, ["element-wise", "short-circuit"]);
    }
}

/// Why `bytes` is refused as the index of the sample KB (expected by its hash).
fn refused(bytes: &[u8]) -> IndexError {
    let hash = content_hash(&sample_json());
    decode(bytes, Expect::Hash(hash), "v".into()).expect_err("the file is refused")
}

fn sample_index() -> Vec<u8> {
    let json = sample_json();
    encode(
        &SearchIndex::new(kb_of(&json), "v"),
        content_hash(&json),
        "E1",
    )
}

#[test]
fn an_index_of_another_kb_version_is_refused() {
    let json = sample_json();
    let mut other = json.clone();
    other.extend_from_slice(b"\n");
    let stale = encode(
        &SearchIndex::new(kb_of(&other), "v"),
        content_hash(&other),
        "E0",
    );
    assert!(matches!(refused(&stale), IndexError::OtherKb { .. }));
    // By version: another ETag, or none recorded, never matches.
    let good = sample_index();
    let why = decode(&good, Expect::Version("E2"), "E2".into()).unwrap_err();
    assert!(matches!(why, IndexError::OtherVersion { .. }), "{why}");
    let unnamed = encode(
        &SearchIndex::new(kb_of(&json), "v"),
        content_hash(&json),
        "",
    );
    let why = decode(&unnamed, Expect::Version(""), "".into()).unwrap_err();
    assert!(matches!(why, IndexError::OtherVersion { .. }), "{why}");
}

#[test]
fn an_index_from_another_analysis_is_refused() {
    let mut other = sample_index();
    let fingerprint = analysis_fingerprint();
    assert_eq!(other[16..24], fingerprint.to_le_bytes());
    other[16..24].copy_from_slice(&(fingerprint ^ 1).to_le_bytes());
    assert_eq!(
        refused(&other),
        IndexError::Analysis {
            found: fingerprint ^ 1,
            expected: fingerprint
        }
    );
    assert!(built_from(&other).is_err());
}

#[test]
fn a_flipped_byte_anywhere_in_the_body_is_caught() {
    let good = sample_index();
    for at in [HEADER_LEN, HEADER_LEN + 9, good.len() / 2, good.len() - 1] {
        let mut bad = good.clone();
        bad[at] ^= 0x10;
        assert_eq!(refused(&bad), IndexError::Checksum, "byte {at}");
    }
}

#[test]
fn a_truncated_or_padded_index_is_refused() {
    let good = sample_index();
    assert!(matches!(
        refused(&good[..good.len() - 1]),
        IndexError::Length { .. }
    ));
    assert_eq!(refused(&good[..20]), IndexError::Magic);
    assert_eq!(refused(&[]), IndexError::Magic);
    let mut padded = good.clone();
    padded.push(0);
    assert!(matches!(refused(&padded), IndexError::Length { .. }));
}

#[test]
fn a_newer_or_older_format_is_refused() {
    let good = sample_index();
    for (version, newer) in [(FORMAT_VERSION + 1, true), (FORMAT_VERSION - 1, false)] {
        let mut other = good.clone();
        other[8..12].copy_from_slice(&version.to_le_bytes());
        let why = refused(&other);
        assert_eq!(
            why,
            if newer {
                IndexError::Newer { found: version }
            } else {
                IndexError::Older { found: version }
            }
        );
    }
    let mut json = good;
    json[..8].copy_from_slice(b"{\"docume");
    assert_eq!(refused(&json), IndexError::Magic);
}

/// `good` with its body changed by `edit` and the length and checksum made right again.
fn rechecksummed(good: &[u8], edit: impl FnOnce(&mut Vec<u8>)) -> Vec<u8> {
    let mut body = good[HEADER_LEN..].to_vec();
    edit(&mut body);
    let mut bad = good[..HEADER_LEN].to_vec();
    bad[32..40].copy_from_slice(&(body.len() as u64).to_le_bytes());
    bad[40..48].copy_from_slice(&content_hash(&body).to_le_bytes());
    bad.extend_from_slice(&body);
    bad
}

#[test]
fn a_well_checksummed_but_inconsistent_body_is_refused_not_served() {
    // A writer bug, not damage: the checksum is right, an array is not. The body starts
    // with the version (8 + 2 bytes), then the number of documents.
    let more_docs = documents_edited(&sample_index(), |raw| {
        raw[..4].copy_from_slice(&1_000_000u32.to_le_bytes());
    });
    assert!(matches!(refused(&more_docs), IndexError::Malformed(_)));
    // A string cut inside a character.
    let json = r#"{"documents": [{"id": "a", "type": "page", "title": "模型"}]}"#.as_bytes();
    let good = encode(
        &SearchIndex::new(kb_of(json), "v"),
        content_hash(json),
        "E1",
    );
    let cut = documents_edited(&good, |body| {
        let at = body
            .windows(6)
            .position(|w| w == "模型".as_bytes())
            .unwrap();
        assert_eq!(body[at - 4..at], 6u32.to_le_bytes());
        body[at - 4..at].copy_from_slice(&5u32.to_le_bytes());
    });
    let why = decode(&cut, Expect::Hash(content_hash(json)), "v".into()).unwrap_err();
    assert_eq!(why, IndexError::Malformed("a string is not UTF-8"));
    // A passage span outside its content.
    let json = generated_json(30);
    let built = SearchIndex::new(kb_of(&json), "v");
    let (doc, spans) = built
        .chunks()
        .iter()
        .enumerate()
        .find_map(|(i, c)| match c {
            Chunks::Split(spans) => Some((i, spans.clone())),
            _ => None,
        })
        .unwrap();
    let content_len = built.kb().documents[doc].content.as_ref().unwrap().len() as u32;
    let good = encode(&built, content_hash(&json), "E1");
    let last = spans.last().unwrap();
    let pattern: Vec<u8> = [last.start, last.end]
        .iter()
        .flat_map(|v| v.to_le_bytes())
        .collect();
    let outside = documents_edited(&good, |body| {
        let at = body.windows(8).position(|w| w == pattern).unwrap();
        body[at + 4..at + 8].copy_from_slice(&(content_len + 1).to_le_bytes());
    });
    let why = decode(&outside, Expect::Hash(content_hash(&json)), "v".into()).unwrap_err();
    assert_eq!(why, IndexError::Malformed("passage span"));
    // A content placed past the end of its packed block.
    let content = built.kb().documents[doc].content.as_deref().unwrap();
    let placed = documents_edited(&good, |body| {
        let title = built.kb().documents[doc].title.as_deref().unwrap();
        let at = body
            .windows(title.len())
            .position(|w| w == title.as_bytes());
        // After the title: the other fields, then the content's block, start and end.
        let from = at.unwrap() + title.len();
        let end = (from..body.len() - 12)
            .find(|&i| {
                let w = |k: usize| u32::from_le_bytes(body[k..k + 4].try_into().unwrap());
                w(i + 8).checked_sub(w(i + 4)) == Some(content.len() as u32)
            })
            .unwrap()
            + 8;
        body[end..end + 4].copy_from_slice(&u32::MAX.to_le_bytes());
    });
    let why = decode(&placed, Expect::Hash(content_hash(&json)), "v".into()).unwrap_err();
    assert_eq!(
        why,
        IndexError::Malformed("a content's place in the packed texts")
    );
}

#[test]
fn page_text_stays_deflated_until_a_request_reads_it() {
    let (built, loaded, good) = generated_round_trip(200);
    let (_, blocks) = texts_at(&good[HEADER_LEN..]);
    assert!(blocks.len() > 2, "{} blocks", blocks.len());
    let inflated = |index: &SearchIndex| {
        let mut seen: Vec<*const PackedBlock> = index
            .kb()
            .documents
            .iter()
            .filter_map(|d| d.content.as_ref()?.block())
            .filter(|b| b.is_inflated())
            .map(|b| b as *const PackedBlock)
            .collect();
        seen.dedup();
        seen.len()
    };
    assert_eq!(inflated(&loaded), 0, "loading inflates no page text");
    let page = built.kb().documents[150].content.as_deref().unwrap();
    let query: Vec<&str> = page.split_whitespace().take(8).collect();
    let hits = loaded.search(&query.join(" "), 3, 0.0).hits;
    assert!(!hits.is_empty());
    let touched = inflated(&loaded);
    assert!(
        (1..=3).contains(&touched),
        "{touched} blocks read for 3 hits"
    );
    // What it reads is the text the JSON holds.
    assert_eq!(loaded.kb(), built.kb());
}

#[test]
fn a_damaged_packed_block_is_refused_and_a_miswritten_one_reads_as_empty() {
    let json = generated_json(200);
    let built = SearchIndex::new(kb_of(&json), "v");
    let good = encode(&built, content_hash(&json), "E1");
    let (_, blocks) = texts_at(&good[HEADER_LEN..]);
    let at = HEADER_LEN + blocks[1];
    let refused = |bytes: &[u8]| {
        decode(bytes, Expect::Hash(content_hash(&json)), "v".into()).expect_err("refused")
    };
    // Damage: the checksum tells it at load.
    let mut damaged = good.clone();
    damaged[at + 20] ^= 0x55;
    assert_eq!(refused(&damaged), IndexError::Checksum);
    // Cut inside the block, the lengths and checksum mended: refused.
    let cut = rechecksummed(&good, |body| body.truncate(at + 20 - HEADER_LEN));
    assert!(matches!(refused(&cut), IndexError::Malformed(_)));
    // A block claiming to expand more than a block may: refused.
    let bloated = rechecksummed(&good, |body| {
        let stored = u32::from_le_bytes(body[at - HEADER_LEN + 4..][..4].try_into().unwrap());
        let claim = codec::MAX_RATIO as u32 * stored + 1;
        body[at - HEADER_LEN..][..4].copy_from_slice(&claim.to_le_bytes());
    });
    assert_eq!(
        refused(&bloated),
        IndexError::Malformed("a deflate block's length")
    );
    // A writer's bug (its bytes changed, the checksum right): served, since page text is
    // not read at load; the documents of that block then read as empty, never a panic.
    let miswritten = rechecksummed(&good, |body| body[at - HEADER_LEN + 8] ^= 0xff);
    let served = decode(&miswritten, Expect::Hash(content_hash(&json)), "v".into()).unwrap();
    let contents = |index: &SearchIndex| -> Vec<String> {
        index
            .kb()
            .documents
            .iter()
            .map(|d| d.content.as_deref().unwrap_or("-").to_owned())
            .collect()
    };
    let (before, after) = (contents(&built), contents(&served));
    let changed: Vec<usize> = (0..before.len())
        .filter(|&i| before[i] != after[i])
        .collect();
    assert!(!changed.is_empty());
    assert!(changed.iter().all(|&i| after[i].is_empty()), "{changed:?}");
    for q in QUERIES {
        let _ = served.search(q, 10, 0.0);
    }
}

#[test]
fn an_index_read_from_a_stream_is_the_one_read_from_memory() {
    let json = sample_json();
    let bytes = sample_index();
    let stream = std::io::BufReader::with_capacity(7, std::io::Cursor::new(bytes.clone()));
    let reader = IndexReader::open(Box::new(stream), bytes.len() as u64).unwrap();
    assert_eq!(reader.built_from().version, "E1");
    let streamed = reader.decode(Expect::Version("E1"), "E1".into()).unwrap();
    let held = decode(&bytes, Expect::Version("E1"), "E1".into()).unwrap();
    assert_eq!(streamed.kb(), held.kb());
    assert_eq!(answers(&streamed), answers(&held));
    assert_eq!(streamed.kb(), &kb_of(&json));
}

#[test]
fn the_streamed_content_hash_is_the_whole_one() {
    let json = generated_json(5);
    for block in [1, 3, 8, 13, 4096] {
        let mut h = ContentHasher::default();
        json.chunks(block).for_each(|c| h.update(c));
        assert_eq!(h.finish(), content_hash(&json), "blocks of {block}");
    }
}

#[test]
fn the_content_hash_sees_every_byte_and_the_length() {
    let base = generated_json(3);
    let h = content_hash(&base);
    for at in [0, 7, 8, base.len() / 2, base.len() - 1] {
        let mut other = base.clone();
        other[at] ^= 1;
        assert_ne!(content_hash(&other), h, "byte {at}");
    }
    assert_ne!(content_hash(&[0]), content_hash(&[0, 0]));
    assert_eq!(content_hash(&base), h, "deterministic");
}

#[test]
fn the_index_is_named_after_the_kb() {
    assert_eq!(index_name("site/kb.json"), "site/kb.index");
    assert_eq!(index_name("knowledge_base.json"), "knowledge_base.index");
    assert_eq!(index_name("kb"), "kb.index");
}

#[test]
fn kind_alternates_and_linked_from_round_trip() {
    let json = serde_json::json!({"documents": [
        {"id": "a", "type": "page", "title": "What's new in 2.0", "kind": "release-notes",
         "url": "https://ex.org/whatsnew/", "content": "Version 2.0 adds streaming replies."},
        {"id": "b", "type": "page", "title": "Streaming replies", "url": "https://ex.org/std/stream/",
         "alternates": ["https://ex.org/core/stream/", "https://ex.org/v1/stream/"],
         "linked_from": 17, "content": "How streaming replies work, and how to turn them off."},
        {"id": "c", "type": "page", "title": "Replies", "linked_from": 0,
         "content": "What a reply holds."}
    ]});
    let bytes = serde_json::to_vec(&json).unwrap();
    let kb = kb_of(&bytes);
    assert_eq!(kb.documents[0].kind.as_deref(), Some("release-notes"));
    assert_eq!(kb.documents[1].alternates.len(), 2);
    let counts: Vec<Option<u32>> = kb.documents.iter().map(|d| d.linked_from).collect();
    assert_eq!(counts, [None, Some(17), Some(0)]);
    let built = SearchIndex::new(kb, "v");
    let index = encode(&built, content_hash(&bytes), "E1");
    let loaded = decode(&index, Expect::Version("E1"), "E1".into()).unwrap();
    assert_eq!(loaded.kb(), built.kb());
    // And the ranking reads them as the JSON's index does.
    let hits = |i: &SearchIndex| {
        let (_, hits) = i.retriever().search("replies", 3, 0.0);
        hits.iter().map(|h| (h.doc, h.score)).collect::<Vec<_>>()
    };
    assert_eq!(hits(&loaded), hits(&built));
}

/// Where the packed texts (the body's second field: a count, then blocks of a raw
/// length, a stored length and the bytes) start in `body`, and where each block starts.
fn texts_at(body: &[u8]) -> (usize, Vec<usize>) {
    let word = |at: usize| u32::from_le_bytes(body[at..at + 4].try_into().unwrap()) as usize;
    let start = 8 + u64::from_le_bytes(body[..8].try_into().unwrap()) as usize;
    let mut at = start + 4;
    let blocks = (0..word(start))
        .map(|_| {
            let block = at;
            at += 8 + word(at + 4);
            block
        })
        .collect();
    (start, blocks)
}

/// Where the documents' deflated section (after the packed texts) starts in `body`.
fn documents_start(body: &[u8]) -> usize {
    let (start, blocks) = texts_at(body);
    let word = |at: usize| u32::from_le_bytes(body[at..at + 4].try_into().unwrap()) as usize;
    blocks.last().map_or(start + 4, |&b| b + 8 + word(b + 4))
}

/// `good` with the raw bytes of its documents' deflated section (the body's third field)
/// edited by `edit`, deflated again and checksummed: a writer's bug, not damage.
fn documents_edited(good: &[u8], edit: impl FnOnce(&mut Vec<u8>)) -> Vec<u8> {
    let word = |b: &[u8], at: usize| u64::from_le_bytes(b[at..at + 8].try_into().unwrap());
    rechecksummed(good, |body| {
        let start = documents_start(body);
        let total = word(body, start) as usize;
        let (mut at, mut raw) = (start + 8, Vec::new());
        while raw.len() < total {
            let n = u32::from_le_bytes(body[at..at + 4].try_into().unwrap()) as usize;
            let stored = u32::from_le_bytes(body[at + 4..at + 8].try_into().unwrap()) as usize;
            let mut block = vec![0u8; n];
            let config = zlib_rs::InflateConfig { window_bits: -15 };
            let (out, rc) =
                zlib_rs::decompress_slice(&mut block, &body[at + 8..][..stored], config);
            assert_eq!((rc, out.len()), (zlib_rs::ReturnCode::Ok, n));
            raw.extend_from_slice(&block);
            at += 8 + stored;
        }
        edit(&mut raw);
        let mut section = codec::Writer::default();
        section.deflated(|d| d.0.extend_from_slice(&raw));
        body.splice(start..at, section.0);
    })
}

/// Where the main index's postings array (its `u64` length, then its varints) starts in
/// the body of `good` (the index of `json`), and its varints.
fn postings_at(json: &[u8], good: &[u8]) -> (usize, Vec<u8>) {
    let built = SearchIndex::new(kb_of(json), "v");
    let (postings, _, exact) = postings::postings(built.retriever().index());
    assert!(exact, "the weights are made from the frequencies");
    let mut pattern = (postings.len() as u64).to_le_bytes().to_vec();
    pattern.extend_from_slice(&postings);
    let body = &good[HEADER_LEN..];
    let at = body
        .windows(pattern.len())
        .position(|w| w == pattern)
        .expect("the postings are in the body");
    (at, postings)
}

/// The sample's index with its first term's number of postings made 127: its units then
/// run out of order, past the last or past the end.
fn miscounted_postings() -> Vec<u8> {
    let (at, postings) = postings_at(&sample_json(), &sample_index());
    assert!(postings[0] < 0x7f, "a one-byte count");
    rechecksummed(&sample_index(), |body| body[at + 8] = 0x7f)
}

/// Where the documents' first deflate block starts in `good` (its raw and stored lengths,
/// then its bytes), and its stored length.
fn first_block(good: &[u8]) -> (usize, usize) {
    let at = HEADER_LEN + documents_start(&good[HEADER_LEN..]) + 8;
    let stored = u32::from_le_bytes(good[at + 4..at + 8].try_into().unwrap());
    (at, stored as usize)
}

#[test]
fn postings_out_of_order_or_past_the_end_are_refused_not_sliced() {
    assert!(matches!(
        refused(&miscounted_postings()),
        IndexError::Malformed(_)
    ));
}

#[test]
fn damaged_cut_or_bloated_deflate_blocks_are_refused_without_panic() {
    let good = sample_index();
    let json = sample_json();
    let (at, stored) = first_block(&good);
    let block = at + 8..at + 8 + stored;
    // Bytes of the first block flipped, the checksum mended: refused or, where deflate
    // cannot tell, served with other documents; never a panic.
    for i in block.clone().step_by(5) {
        let bad = rechecksummed(&good, |body| body[i - HEADER_LEN] ^= 0x55);
        if let Ok(served) = decode(&bad, Expect::Hash(content_hash(&json)), "v".into()) {
            assert_ne!(served.kb(), &kb_of(&json), "byte {i}");
        }
    }
    // A block that inflates to less than its length.
    let longer = rechecksummed(&good, |body| {
        let raw = u32::from_le_bytes(body[at - HEADER_LEN..][..4].try_into().unwrap());
        body[at - HEADER_LEN..][..4].copy_from_slice(&(raw + 1).to_le_bytes());
        let total = u64::from_le_bytes(body[at - HEADER_LEN - 8..][..8].try_into().unwrap());
        body[at - HEADER_LEN - 8..][..8].copy_from_slice(&(total + 1).to_le_bytes());
    });
    assert_eq!(refused(&longer), IndexError::Malformed("a deflate block"));
    // Cut inside the block, the length and checksum mended.
    for cut in [block.start + 1, block.start + stored / 2, block.end - 1] {
        let short = rechecksummed(&good, |body| body.truncate(cut - HEADER_LEN));
        assert!(
            matches!(refused(&short), IndexError::Malformed(_)),
            "cut at {cut}"
        );
    }
    // A block claiming to expand more than a block may: refused before anything is made
    // for it.
    let bloated = rechecksummed(&good, |body| {
        let claim = codec::MAX_RATIO as u32 * stored as u32 + 1;
        body[at - HEADER_LEN..][..4].copy_from_slice(&claim.to_le_bytes());
        body[at - HEADER_LEN - 8..][..8].copy_from_slice(&u64::from(claim).to_le_bytes());
    });
    assert_eq!(
        refused(&bloated),
        IndexError::Malformed("a deflate block's length")
    );
}

#[test]
fn a_header_claiming_more_than_the_object_holds_is_refused_before_anything_is_allocated() {
    // The review's file: a body length of 2^62 and a first array of 2^44 bytes, both
    // within what the header claims (16 TB were reserved, and the process aborted).
    let good = sample_index();
    let mut huge = good.clone();
    huge[32..40].copy_from_slice(&(1u64 << 62).to_le_bytes());
    huge[HEADER_LEN..HEADER_LEN + 8].copy_from_slice(&(1u64 << 44).to_le_bytes());
    let body = (good.len() - HEADER_LEN) as u64;
    assert_eq!(
        refused(&huge),
        IndexError::Length {
            found: body,
            expected: 1 << 62
        }
    );
    // The header right, a count that runs past the real end.
    let counted = rechecksummed(&good, |body| {
        body[..8].copy_from_slice(&(1u64 << 44).to_le_bytes());
    });
    assert!(matches!(refused(&counted), IndexError::Malformed(_)));
}

#[test]
fn a_stream_shorter_than_its_announced_length_fails_without_reserving_the_claim() {
    // A source announcing more than it delivers (the length is the object's, the stream is
    // cut): the arrays grow as bytes arrive, so the read fails at the cut, not on a
    // reservation of what the header claims.
    let good = sample_index();
    let mut claims = good.clone();
    let claim = 1u64 << 40;
    claims[32..40].copy_from_slice(&claim.to_le_bytes());
    let (at, _) = postings_at(&sample_json(), &good);
    claims[HEADER_LEN + at..HEADER_LEN + at + 8].copy_from_slice(&(1u64 << 37).to_le_bytes());
    let reader = IndexReader::open(
        Box::new(std::io::Cursor::new(claims)),
        claim + HEADER_LEN as u64,
    )
    .unwrap();
    let why = reader
        .decode(Expect::Version("E1"), "E1".into())
        .unwrap_err();
    assert!(matches!(why, IndexError::Length { .. }), "{why:?}");
}

#[tokio::test]
async fn a_malformed_index_is_logged_and_the_json_served() {
    use crate::kb::{KbSource, MemoryKbSource};
    use crate::search::KbHandle;
    let json = sample_json();
    let bad = miscounted_postings();
    let source = std::sync::Arc::new(MemoryKbSource::with_bytes(json.clone()));
    source.put_index(bad).await.unwrap();
    let handle = KbHandle::load(source, std::time::Duration::ZERO)
        .await
        .unwrap();
    let served = handle.snapshot();
    assert!(!served.is_prebuilt());
    assert_eq!(served.kb(), &kb_of(&json));
}

#[test]
fn a_block_that_would_expand_too_much_is_stored_and_read_back() {
    // 300 KiB of one byte deflates to under a thousandth of it: stored instead, so a reader
    // can hold every block to 128 times its bytes.
    let raw = vec![b'a'; 300 << 10];
    let mut w = codec::Writer::default();
    w.deflated(|d| {
        d.bytes(&raw);
        d.boundary();
        d.bytes(b"after");
    });
    let stored = u32::from_le_bytes(w.0[12..16].try_into().unwrap()) as u64;
    assert!(stored >= 300 << 10, "stored: {stored}");
    let mut r = codec::Input::new(Box::new(&w.0[..]), w.0.len() as u64);
    let mut section = r.deflated().unwrap();
    assert_eq!(section.bytes().unwrap(), raw);
    assert_eq!(section.bytes().unwrap(), b"after");
    section.end().unwrap();
}

#[test]
fn random_damage_with_the_checksum_mended_is_refused_or_served_never_a_panic() {
    // What the fuzz target does, a few thousand times on a real index: bytes flipped,
    // runs overwritten or the body cut, the checksum then made right, so the body's own
    // checks (deflate blocks, varints, counts) are what stands between it and a panic.
    let good = sample_index();
    let json = sample_json();
    let mut rng = fastrand::Rng::with_seed(25);
    let (mut refused, mut served) = (0, 0);
    for _ in 0..1500 {
        let bad = rechecksummed(&good, |body| match rng.u8(0..3) {
            0 => {
                for _ in 0..rng.usize(1..4) {
                    let at = rng.usize(..body.len());
                    body[at] ^= rng.u8(1..);
                }
            }
            1 => {
                let at = rng.usize(..body.len());
                let end = (at + rng.usize(1..16)).min(body.len());
                body[at..end].fill(rng.u8(..));
            }
            _ => body.truncate(rng.usize(..body.len())),
        });
        match decode(&bad, Expect::Hash(content_hash(&json)), "v".into()) {
            Ok(index) => {
                served += 1;
                for q in QUERIES {
                    let _ = index.search(q, 5, 0.0);
                }
            }
            Err(_) => refused += 1,
        }
    }
    assert!(refused > 1000, "refused {refused}, served {served}");
}

#[test]
fn an_index_given_its_version_afterwards_is_the_one_written_with_it() {
    let json = sample_json();
    let built = SearchIndex::new(kb_of(&json), "v");
    let unnamed = encode(&built, content_hash(&json), "");
    let named = with_version(&unnamed, "\"etag-42\"").unwrap();
    assert_eq!(named, encode(&built, content_hash(&json), "\"etag-42\""));
    let loaded = decode(&named, Expect::Version("\"etag-42\""), "v".into()).unwrap();
    assert_eq!(loaded.kb(), built.kb());
    // Renamed again, and to nothing; and not an index at all.
    let back = with_version(&named, "").unwrap();
    assert_eq!(back, unnamed);
    assert_eq!(with_version(b"RAGINDEX", "x"), None);
    assert_eq!(with_version(&json, "x"), None);
}

#[test]
fn the_postings_of_a_site_stay_packed_until_a_query_needs_them() {
    let (built, loaded, _) = generated_round_trip(1000);
    let index = loaded.retriever().index();
    // Packed, and none decoded at load.
    assert!(index.undecoded_postings() > 0);
    let page = built.kb().documents[500].content.as_deref().unwrap();
    let query: Vec<&str> = page.split_whitespace().take(6).collect();
    let query = query.join(" ");
    let left = index.undecoded_postings();
    let hits = |index: &SearchIndex| serde_json::to_string(&index.search(&query, 5, 0.0).hits);
    assert_eq!(hits(&loaded).unwrap(), hits(&built).unwrap());
    assert!(
        index.undecoded_postings() < left,
        "the query's terms were decoded"
    );
    // Every term decoded (the comparison reads them all) gives the builder's postings.
    assert_eq!(index, built.retriever().index());
    assert_eq!(index.undecoded_postings(), 0);
}

/// A generated site of `pages` pages indexed from its JSON, the same index read back from
/// its prebuilt file (version `E1`), and that file.
fn generated_round_trip(pages: usize) -> (SearchIndex, SearchIndex, Vec<u8>) {
    let json = generated_json(pages);
    let built = SearchIndex::new(kb_of(&json), "v");
    let good = encode(&built, content_hash(&json), "E1");
    let loaded = decode(&good, Expect::Version("E1"), "E1".into()).unwrap();
    (built, loaded, good)
}
