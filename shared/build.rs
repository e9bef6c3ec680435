//! Precomputes, so that nothing is computed at run time (a cold start pays no indexing of
//! 4 MB of text, a query no scan of it):
//! - the software-senses table's entries: `data/lexicon_software.tsv` holds only the
//!   senses learnt for each word, merged here with the word's current research or
//!   CC-CEDICT entry (see [`software_table`]), so editing either never leaves a stale copy;
//! - the line offsets of the compiled-in lexicon tables, so a lookup bisects over line
//!   starts directly instead of scanning the text for line breaks at every step;
//! - the English→Chinese table: the Chinese→English tables read backwards, keyed by the
//!   Snowball stem of each one-word translation (see [`reverse`]);
//! - hash tables over both directions (see [`dictionaries`]): a query's dictionary lookup
//!   is one hash probe, and the translations come already cut into index terms, so a query
//!   neither bisects text nor stems dictionary words.

use rust_stemmers::{Algorithm, Stemmer};
use std::collections::BTreeMap;
use std::path::Path;

// The query side's own code, so the precomputed terms are exactly what it would compute.
#[allow(dead_code, unreachable_pub)]
#[path = "src/retrieval/dict_format.rs"]
mod dict_format;
#[allow(dead_code, unreachable_pub)]
#[path = "src/retrieval/tokenize.rs"]
mod tokenize;
#[allow(dead_code, unreachable_pub)]
#[path = "src/retrieval/zh_stopwords.rs"]
mod zh_stopwords;

/// The tables, most specific first (the reverse table keeps that order per key). The
/// software senses come first: [`software_table`] makes each of their lines a word's whole
/// entry.
const LEXICONS: [&str; 4] = [
    "lexicon_software",
    "lexicon_research",
    "lexicon_general",
    "cedict",
];
/// Most Chinese words kept per English stem.
const MAX_PER_STEM: usize = 48;
/// Only a Chinese word's first senses count: its later ones are rarer meanings.
const SENSES: usize = 3;

fn main() {
    let out = std::env::var("OUT_DIR").expect("cargo sets OUT_DIR for build scripts");
    let out = Path::new(&out);
    let read = |name: &str| {
        let src = format!("data/{name}.tsv");
        println!("cargo:rerun-if-changed={src}");
        std::fs::read_to_string(&src).unwrap_or_else(|e| panic!("reading {src}: {e}"))
    };
    let mut tables: Vec<String> = LEXICONS.iter().map(|name| read(name)).collect();
    let at = |name: &str| {
        LEXICONS
            .iter()
            .position(|n| *n == name)
            .expect("a listed table")
    };
    let software = software_table(
        &tables[at("lexicon_software")],
        &tables[at("lexicon_research")],
        &tables[at("cedict")],
    );
    tables[at("lexicon_software")] = software;
    tables.push(read("pinyin"));
    for (name, text) in LEXICONS.iter().chain(&["pinyin"]).zip(&tables) {
        // The texts as compiled in, beside their offsets (`retrieval/table.rs`).
        std::fs::write(out.join(format!("{name}.tsv")), text)
            .unwrap_or_else(|e| panic!("writing {name}.tsv: {e}"));
        write(out, name, &offsets(text.as_bytes()));
    }
    let lexicons = &tables[..LEXICONS.len()];
    let reverse = reverse(lexicons);
    std::fs::write(out.join("reverse.tsv"), &reverse)
        .unwrap_or_else(|e| panic!("writing reverse.tsv: {e}"));
    write(out, "reverse", &offsets(reverse.as_bytes()));
    dictionaries(out, lexicons, &reverse);
    analysis_fingerprint(out);
}

/// The prebuilt index's analysis fingerprint (see `shared::index::analysis_fingerprint`):
/// a hash of every file under `data/` and of the Chinese stopword list (names and bytes,
/// in name order), written as `analysis_fingerprint.rs`, so a changed dictionary refuses
/// indexes built before it. The stopword list is data kept as Rust source (the analyzer
/// uses it too): it decides which words the language versions stored in an index were
/// paired by, so an edit to it alone must refuse old indexes as a dictionary's does.
fn analysis_fingerprint(out: &Path) {
    println!("cargo:rerun-if-changed=data");
    let mut files: Vec<_> = std::fs::read_dir("data")
        .expect("reading data/")
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.is_file())
        .collect();
    files.push(Path::new("src/retrieval/zh_stopwords.rs").to_path_buf());
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

/// The software-senses table with each word's whole entry: `learnt` holds `word<TAB>senses`
/// lines of the senses learnt from programs' translations (`infra/build_software_senses.py`),
/// which this table, read first, would otherwise stand for alone. A word of the research
/// lexicon keeps its own senses first and gains the learnt ones (引用 "citation|cite" then
/// "reference": a research homepage's usage still leads where its pages use it); any other
/// word's learnt senses come before CC-CEDICT's everyday ones (检出 "checkout|detect"). A
/// sense already there is not repeated.
fn software_table(learnt: &str, research: &str, cedict: &str) -> String {
    let research = entries(research);
    let cedict = entries(cedict);
    let mut out = String::new();
    for line in learnt.lines().filter(|l| !l.is_empty()) {
        let (word, senses) = line.split_once('\t').unwrap_or((line, ""));
        let senses = senses.split('|');
        let merged: Vec<&str> = match (research.get(word), cedict.get(word)) {
            (Some(own), _) => own.split('|').chain(senses).collect(),
            (None, Some(everyday)) => senses.chain(everyday.split('|')).collect(),
            (None, None) => senses.collect(),
        };
        let mut seen = std::collections::HashSet::new();
        let merged: Vec<&str> = merged.into_iter().filter(|s| seen.insert(*s)).collect();
        out.push_str(word);
        out.push('\t');
        out.push_str(&merged.join("|"));
        out.push('\n');
    }
    out
}

/// A table's `key → value`, the first line of a key winning as a lookup's bisection finds it.
fn entries(text: &str) -> std::collections::HashMap<&str, &str> {
    let mut map = std::collections::HashMap::new();
    for (key, value) in text.lines().filter_map(|l| l.split_once('\t')) {
        map.entry(key).or_insert(value);
    }
    map
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
fn reverse(lexicons: &[String]) -> String {
    let stemmer = Stemmer::create(Algorithm::English);
    // stem → (source, sense, chars, word)
    let mut map: BTreeMap<String, Vec<(usize, usize, usize, String)>> = BTreeMap::new();
    for (source, text) in lexicons.iter().enumerate() {
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
                let stem = stemmer.stem(tokenize::base_form(&en)).into_owned();
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

/// One key of a precomputed hash table.
#[derive(Default)]
struct Record {
    flags: u8,
    value: String,
    terms: String,
    /// Segmentation cost in `dict_format::COST_UNITS` (0: not counted).
    cost: u8,
}

/// Writes the hash tables (layout in `dict_format.rs`) for both directions:
/// - `zh.{records,slots}`: every Chinese word of the compiled-in tables of at most
///   [`dict_format::MAX_KEY_CHARS`] characters, every Chinese stopword, and every prefix
///   of either; flagged with whether a longer word extends it, whether it is a stopword,
///   and the first table holding it, whose raw `t1|t2` value it carries, with the terms
///   of each non-empty translation as the query analyzer computes them (consecutive
///   duplicates dropped) as `a b|c`, [`dict_format::SAME`] for a translation that is its
///   own terms;
/// - `reverse.{records,slots}`: the English→Chinese table (its words' bigrams are slices
///   of them, computed at query time without allocating).
///
/// Also `dict_counts.rs`: the number of entries of each Chinese→English table.
fn dictionaries(out: &Path, lexicons: &[String], reverse: &str) {
    let analyzer = tokenize::Analyzer::new();
    let terms_of = |value: &str| -> String {
        let per: Vec<String> = value
            .split('|')
            .filter(|t| !t.is_empty())
            .map(|tr| {
                let mut ts = analyzer.terms(tr);
                ts.dedup();
                let group = ts.join(" ");
                if group == tr {
                    dict_format::SAME.to_owned()
                } else {
                    group
                }
            })
            .collect();
        per.join("|")
    };
    let mut zh: BTreeMap<String, Record> = BTreeMap::new();
    let mut counts = Vec::new();
    for (source, text) in lexicons.iter().enumerate() {
        let mut count = 0usize;
        for line in text.lines().filter(|l| !l.is_empty()) {
            count += 1;
            let (key, value) = line.split_once('\t').unwrap_or((line, ""));
            let starts: Vec<usize> = key.char_indices().map(|(i, _)| i).skip(1).collect();
            for &end in starts.iter().take(dict_format::MAX_KEY_CHARS) {
                zh.entry(key[..end].to_owned()).or_default().flags |= dict_format::LONGER;
            }
            if starts.len() >= dict_format::MAX_KEY_CHARS {
                continue; // longer than segmentation tries
            }
            let record = zh.entry(key.to_owned()).or_default();
            if record.flags >> dict_format::SOURCE_SHIFT == 0 {
                record.flags |= (source as u8 + 1) << dict_format::SOURCE_SHIFT;
                record.value = value.to_owned();
                record.terms = terms_of(value);
            }
        }
        counts.push(count);
    }
    for word in zh_stopwords::ZH_STOPWORDS {
        // Its prefixes are marked too, or segmentation stops short of a stopword no table
        // holds (怎么才能 read 怎么 + 才能 "talent", 的时候 read 的 + 时候 "time").
        for (end, _) in word.char_indices().skip(1) {
            zh.entry(word[..end].to_owned()).or_default().flags |= dict_format::LONGER;
        }
        zh.entry((*word).to_owned()).or_default().flags |= dict_format::STOP;
    }
    for (word, cost) in word_costs() {
        // Only words the tables hold: a counted word they lack has no translation, and a
        // prefix-only record must not become a word.
        if let Some(record) = zh.get_mut(&word) {
            record.cost = cost;
        }
    }
    write_table(out, "zh", &zh);

    let mut rev: BTreeMap<String, Record> = BTreeMap::new();
    for line in reverse.lines() {
        let (stem, words) = line.split_once('\t').unwrap_or((line, ""));
        let record = Record {
            flags: 0,
            value: words.to_owned(),
            terms: String::new(),
            cost: 0,
        };
        rev.insert(stem.to_owned(), record);
    }
    write_table(out, "reverse", &rev);

    let counts = format!(
        "/// Entries of the software-senses, research, general and CC-CEDICT tables (written by\n\
         /// `build.rs`).\n\
         pub(crate) const COUNTS: [usize; 4] = [{}, {}, {}, {}];\n",
        counts[0], counts[1], counts[2], counts[3]
    );
    std::fs::write(out.join("dict_counts.rs"), counts)
        .unwrap_or_else(|e| panic!("writing dict_counts.rs: {e}"));
}

/// The segmentation cost of each counted word of `data/zh_freq.tsv` (`#total<TAB>N`, then
/// `word<TAB>count` lines; see `infra/build_zh_freq.py`): -ln(count / N) in
/// `dict_format::COST_UNITS`, at least 1 and below 0x80.
fn word_costs() -> Vec<(String, u8)> {
    let src = "data/zh_freq.tsv";
    println!("cargo:rerun-if-changed={src}");
    let text = std::fs::read_to_string(src).unwrap_or_else(|e| panic!("reading {src}: {e}"));
    let mut lines = text.lines();
    let total: f64 = lines
        .next()
        .and_then(|l| l.strip_prefix("#total\t"))
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("{src}: the first line must be #total<TAB>N"));
    lines
        .filter_map(|line| {
            let (word, count) = line.split_once('\t')?;
            let count: f64 = count.parse().ok().filter(|&c| c > 0.0)?;
            let cost = ((total / count).ln() * dict_format::COST_UNITS).round();
            Some((word.to_owned(), cost.clamp(1.0, 127.0) as u8))
        })
        .collect()
}

/// Writes `<name>.records` and `<name>.slots` for `table` (layout in `dict_format.rs`).
fn write_table(out: &Path, name: &str, table: &BTreeMap<String, Record>) {
    let seven = |n: usize, what: &str| -> [u8; 2] {
        assert!(
            n < 1 << 14,
            "{name}: {what} of {n} bytes does not fit a header"
        );
        [(n & 0x7f) as u8, (n >> 7) as u8]
    };
    let bits = (table.len() * 2)
        .next_power_of_two()
        .trailing_zeros()
        .max(1);
    let mut slots = vec![dict_format::EMPTY; 1 << bits];
    let mut records: Vec<u8> = Vec::new();
    for (key, r) in table {
        assert!(key.len() < 0x80 && r.flags < 0x80, "{name}: key {key:?}");
        let offset = u32::try_from(records.len()).expect("records fit u32 offsets");
        records.push(key.len() as u8);
        records.push(r.flags);
        records.extend(seven(r.value.len(), "value"));
        records.extend(seven(r.terms.len(), "terms"));
        records.push(r.cost);
        records.extend(key.as_bytes());
        records.extend(r.value.as_bytes());
        records.extend(r.terms.as_bytes());
        let mut slot = dict_format::slot_of(key.as_bytes(), bits);
        while slots[slot] != dict_format::EMPTY {
            slot = (slot + 1) & ((1 << bits) - 1);
        }
        slots[slot] = offset;
    }
    let slot_bytes: Vec<u8> = slots.iter().flat_map(|s| s.to_le_bytes()).collect();
    for (ext, bytes) in [("records", &records), ("slots", &slot_bytes)] {
        std::fs::write(out.join(format!("{name}.{ext}")), bytes)
            .unwrap_or_else(|e| panic!("writing {name}.{ext}: {e}"));
    }
}
