//! Precomputes, so that nothing is computed at run time (a cold start pays no indexing of
//! 4 MB of text, a query no scan of it):
//! - the line offsets of the compiled-in lexicon tables, so a lookup bisects over line
//!   starts directly instead of scanning the text for line breaks at every step;
//! - the English→Chinese table: the Chinese→English tables read backwards, keyed by the
//!   Snowball stem of each one-word translation (see [`reverse`]).

use rust_stemmers::{Algorithm, Stemmer};
use std::collections::BTreeMap;
use std::path::Path;

/// The tables, most specific first (the reverse table keeps that order per key).
const LEXICONS: [&str; 3] = ["lexicon_research", "lexicon_general", "cedict"];
/// Most Chinese words kept per English stem.
const MAX_PER_STEM: usize = 48;
/// Only a Chinese word's first senses count: its later ones are rarer meanings.
const SENSES: usize = 3;

fn main() {
    let out = std::env::var("OUT_DIR").expect("cargo sets OUT_DIR for build scripts");
    let out = Path::new(&out);
    for name in LEXICONS.iter().chain(&["pinyin"]) {
        let src = format!("data/{name}.tsv");
        println!("cargo:rerun-if-changed={src}");
        let text = std::fs::read(&src).unwrap_or_else(|e| panic!("reading {src}: {e}"));
        write(out, name, &offsets(&text));
    }
    let reverse = reverse();
    std::fs::write(out.join("reverse.tsv"), &reverse)
        .unwrap_or_else(|e| panic!("writing reverse.tsv: {e}"));
    write(out, "reverse", &offsets(reverse.as_bytes()));
    analysis_fingerprint(out);
}

/// The prebuilt index's analysis fingerprint (see `shared::index::analysis_fingerprint`):
/// a hash of every file under `data/` (names and bytes, in name order), written as
/// `analysis_fingerprint.rs`, so a changed dictionary refuses indexes built before it.
fn analysis_fingerprint(out: &Path) {
    println!("cargo:rerun-if-changed=data");
    let mut files: Vec<_> = std::fs::read_dir("data")
        .expect("reading data/")
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.is_file())
        .collect();
    files.sort();
    // FNV-1a 64: the build's own hash, fast enough for 20 MB at build time.
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for path in files {
        println!("cargo:rerun-if-changed={}", path.display());
        let name = path.file_name().map(|n| n.to_string_lossy().into_owned());
        let bytes = std::fs::read(&path).unwrap_or_else(|e| panic!("reading {path:?}: {e}"));
        for chunk in [name.unwrap_or_default().as_bytes(), &[0], &bytes[..]] {
            for &b in chunk {
                h = (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3);
            }
        }
    }
    let code = format!(
        "/// A hash of the analysis data files.\npub(super) const DATA_HASH: u64 = {h:#018x};\n"
    );
    std::fs::write(out.join("analysis_fingerprint.rs"), code)
        .unwrap_or_else(|e| panic!("writing analysis_fingerprint.rs: {e}"));
}

fn write(out: &Path, name: &str, offsets: &[u8]) {
    std::fs::write(out.join(format!("{name}.idx")), offsets)
        .unwrap_or_else(|e| panic!("writing {name}.idx: {e}"));
}

/// Little-endian `u32` starts of the non-empty lines of `text`.
fn offsets(text: &[u8]) -> Vec<u8> {
    let mut offsets: Vec<u8> = Vec::new();
    let mut start = 0usize;
    for (i, &b) in text.iter().enumerate() {
        if b == b'\n' {
            if i > start {
                offsets.extend_from_slice(&(start as u32).to_le_bytes());
            }
            start = i + 1;
        }
    }
    if start < text.len() {
        offsets.extend_from_slice(&(start as u32).to_le_bytes());
    }
    offsets
}

/// The English→Chinese table as sorted `stem\tzh1|zh2|...` lines: for every Chinese word of
/// 2 to 4 characters (what a bigram index can match) and each of its first [`SENSES`]
/// translations that is one ASCII word, the word's stem → the Chinese word. Per stem, the
/// curated tables' words come first, then by sense rank, then shorter words; at most
/// [`MAX_PER_STEM`]. Which of them a site actually writes is decided at query time.
fn reverse() -> String {
    let stemmer = Stemmer::create(Algorithm::English);
    // stem → (source, sense, chars, word)
    let mut map: BTreeMap<String, Vec<(usize, usize, usize, String)>> = BTreeMap::new();
    for (source, name) in LEXICONS.iter().enumerate() {
        let src = format!("data/{name}.tsv");
        let text = std::fs::read_to_string(&src).unwrap_or_else(|e| panic!("reading {src}: {e}"));
        for line in text.lines() {
            let Some((zh, value)) = line.split_once('\t') else {
                continue;
            };
            let chars = zh.chars().count();
            if !(2..=4).contains(&chars)
                || !zh.chars().all(|c| ('\u{4e00}'..='\u{9fff}').contains(&c))
            {
                continue;
            }
            for (sense, en) in value.split('|').take(SENSES).enumerate() {
                let en = en.trim().to_ascii_lowercase();
                if en.len() < 2 || !en.bytes().all(|b| b.is_ascii_lowercase()) {
                    continue;
                }
                let stem = stemmer.stem(&en).into_owned();
                map.entry(stem)
                    .or_default()
                    .push((source, sense, chars, zh.to_owned()));
            }
        }
    }
    let mut out = String::new();
    for (stem, mut words) in map {
        words.sort();
        let mut seen = std::collections::HashSet::new();
        let kept: Vec<&str> = words
            .iter()
            .filter(|w| seen.insert(w.3.as_str()))
            .take(MAX_PER_STEM)
            .map(|w| w.3.as_str())
            .collect();
        out.push_str(&stem);
        out.push('\t');
        out.push_str(&kept.join("|"));
        out.push('\n');
    }
    out
}
