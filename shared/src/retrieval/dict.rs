//! The dictionary hash tables precomputed by `build.rs` (layout in `dict_format.rs`): a
//! lookup hashes the key once and compares it with a record or two, allocation-free.

use super::dict_format::{header, slot_of, EMPTY, HEADER};

/// One table: its records and slots, compiled in.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Dict {
    records: &'static str,
    slots: &'static [u8],
    bits: u32,
}

/// One record of a [`Dict`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Entry {
    /// Flags (see `dict_format.rs`).
    pub(crate) flags: u8,
    /// The raw value (`t1|t2|...`).
    pub(crate) value: &'static str,
    /// The value's items already cut into terms: `a b|c|...`, one group per non-empty item.
    pub(crate) terms: &'static str,
    /// The word's segmentation cost (see `dict_format::COST_UNITS`); 0 when unknown.
    pub(crate) cost: u8,
}

/// Declares a table from the `<name>.records` and `<name>.slots` that `build.rs` wrote.
macro_rules! dict {
    ($name:literal) => {
        $crate::retrieval::dict::Dict::new(
            include_str!(concat!(env!("OUT_DIR"), "/", $name, ".records")),
            include_bytes!(concat!(env!("OUT_DIR"), "/", $name, ".slots")),
        )
    };
}
pub(crate) use dict;

impl Dict {
    /// A table over `records` and `slots` as written by `build.rs`.
    pub(crate) const fn new(records: &'static str, slots: &'static [u8]) -> Self {
        // `slots` holds 1 << bits four-byte slots.
        let bits = (slots.len() / 4).trailing_zeros();
        Self {
            records,
            slots,
            bits,
        }
    }

    fn slot(&self, i: usize) -> u32 {
        let b = &self.slots[i * 4..i * 4 + 4];
        u32::from_le_bytes([b[0], b[1], b[2], b[3]])
    }

    /// The record of exactly `key`, if the table has it.
    pub(crate) fn get(&self, key: &str) -> Option<Entry> {
        let mask = (1usize << self.bits) - 1;
        let mut i = slot_of(key.as_bytes(), self.bits);
        loop {
            let offset = self.slot(i);
            if offset == EMPTY {
                return None;
            }
            let at = offset as usize;
            let bytes = &self.records.as_bytes()[at..];
            let h = header(bytes);
            if bytes.get(HEADER..HEADER + h.key_len) == Some(key.as_bytes()) {
                let value = at + HEADER + h.key_len;
                let terms = value + h.value_len;
                return Some(Entry {
                    flags: h.flags,
                    value: &self.records[value..terms],
                    terms: &self.records[terms..terms + h.terms_len],
                    cost: h.cost,
                });
            }
            i = (i + 1) & mask;
        }
    }
}
