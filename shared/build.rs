//! Precomputes the line offsets of the compiled-in lexicon tables, so a lookup bisects
//! over line starts directly instead of scanning the text for line breaks at every step,
//! and nothing is computed at run time (a cold start pays no indexing of 4 MB of text).

use std::path::Path;

fn main() {
    let out = std::env::var("OUT_DIR").expect("cargo sets OUT_DIR for build scripts");
    for name in ["lexicon_research", "lexicon_general", "cedict", "pinyin"] {
        let src = format!("data/{name}.tsv");
        println!("cargo:rerun-if-changed={src}");
        let text = std::fs::read(&src).unwrap_or_else(|e| panic!("reading {src}: {e}"));
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
        std::fs::write(Path::new(&out).join(format!("{name}.idx")), offsets)
            .unwrap_or_else(|e| panic!("writing {name}.idx: {e}"));
    }
}
