//! The layout of the dictionary hash tables that `build.rs` writes and `dict.rs` reads.
//! This file is compiled into both (the build script includes it by path), so the two
//! sides cannot disagree on the hash or the record format.
//!
//! A table is two blobs:
//! - *records*, one after another: `key_len`, `flags`, `value_len`, `terms_len` and `cost`
//!   as [`HEADER`] bytes below 0x80 (each length as two 7-bit digits, low first; `cost` a
//!   word's segmentation cost in [`COST_UNITS`] of a nat, 0 for none), then the key,
//!   the value and the terms (UTF-8). Header bytes below 0x80 keep the whole blob valid
//!   UTF-8, so it is compiled in with `include_str!` and read as `&str` without checks;
//! - *slots*: a power-of-two array of `u32 LE` record offsets ([`EMPTY`] for a free
//!   slot), filled by linear probing from [`slot_of`] at a load of at most one half, so a
//!   lookup (present or absent key) reads one or two slots on average.

/// A free slot.
pub(crate) const EMPTY: u32 = u32::MAX;
/// Bytes before a record's key.
pub(crate) const HEADER: usize = 7;

/// A record's segmentation cost, -ln P(word) under the unigram model of the word
/// frequencies (`data/zh_freq.tsv`), is stored in these fractions of a nat: fine enough
/// that the commonest and rarest counted words (about 4 and 18 nats) are ~85 steps apart,
/// coarse enough that the rarest fits a header byte below 0x80.
pub(crate) const COST_UNITS: f64 = 6.0;

/// Longest key, in characters, that the tables hold and segmentation tries.
pub(crate) const MAX_KEY_CHARS: usize = 8;

/// Flag: some word of a compiled-in table strictly extends this key.
pub(crate) const LONGER: u8 = 1;
/// Flag: the key is a Chinese function or question word.
pub(crate) const STOP: u8 = 2;
/// The three bits after [`STOP`] name the first table holding the key as a word (0: none,
/// 1: software senses, 2: research lexicon, 3: general lexicon, 4: CC-CEDICT).
pub(crate) const SOURCE_SHIFT: u8 = 2;

/// A translation's terms group (see `Expansion::terms`) that is exactly the translation
/// itself ("face", "big data") is written as this, which no term contains.
pub(crate) const SAME: &str = "=";

/// The hash of a key: FxHash's multiply-rotate over the bytes (keys are a few dozen bytes
/// at most), finished so the high bits, which [`slot_of`] uses, depend on every byte.
pub(crate) fn hash(key: &[u8]) -> u64 {
    const K: u64 = 0x51_7c_c1_b7_27_22_0a_95;
    let mut h: u64 = key.len() as u64;
    for &b in key {
        h = (h.rotate_left(5) ^ u64::from(b)).wrapping_mul(K);
    }
    (h ^ (h >> 29)).wrapping_mul(K)
}

/// The first slot to try for `key` in a table of `1 << bits` slots.
pub(crate) fn slot_of(key: &[u8], bits: u32) -> usize {
    (hash(key) >> (64 - bits)) as usize
}

/// A decoded record header (see the module docs).
#[derive(Debug, Clone, Copy)]
pub(crate) struct Header {
    pub(crate) key_len: usize,
    pub(crate) flags: u8,
    pub(crate) value_len: usize,
    pub(crate) terms_len: usize,
    /// The word's segmentation cost in [`COST_UNITS`]; 0 when the frequencies lack it.
    pub(crate) cost: u8,
}

/// Decodes a record header at the start of `bytes`.
pub(crate) fn header(bytes: &[u8]) -> Header {
    let two = |lo: u8, hi: u8| usize::from(lo) | usize::from(hi) << 7;
    Header {
        key_len: usize::from(bytes[0]),
        flags: bytes[1],
        value_len: two(bytes[2], bytes[3]),
        terms_len: two(bytes[4], bytes[5]),
        cost: bytes[6],
    }
}
