//! Sorted `key\tvalue` tables compiled into the binary, with their line offsets
//! precomputed by `build.rs`: a lookup is a bisection over line starts, allocation-free,
//! and a cold start parses nothing.

/// A sorted (bytewise by key) table of `key\tvalue` lines and the start of each line.
#[derive(Debug, Clone, Copy)]
pub(crate) struct SortedTable {
    text: &'static str,
    /// Little-endian `u32` line starts, one per line, ascending.
    offsets: &'static [u8],
}

/// Declares a table as `build.rs` compiled it from `data/<name>.tsv` (the software senses
/// completed with their words' other senses), with the offsets it wrote for it.
macro_rules! sorted_table {
    ($name:literal) => {
        $crate::retrieval::table::SortedTable::new(
            include_str!(concat!(env!("OUT_DIR"), "/", $name, ".tsv")),
            include_bytes!(concat!(env!("OUT_DIR"), "/", $name, ".idx")),
        )
    };
}
pub(crate) use sorted_table;

impl SortedTable {
    /// A table over `text` with `offsets` as written by `build.rs`.
    pub(crate) const fn new(text: &'static str, offsets: &'static [u8]) -> Self {
        Self { text, offsets }
    }

    /// Number of lines.
    pub(crate) fn len(&self) -> usize {
        self.offsets.len() / 4
    }

    fn start(&self, i: usize) -> usize {
        let b = &self.offsets[i * 4..i * 4 + 4];
        u32::from_le_bytes([b[0], b[1], b[2], b[3]]) as usize
    }

    /// Line `i` as `(key, value)`, or `None` past the end.
    pub(crate) fn line(&self, i: usize) -> Option<(&'static str, &'static str)> {
        if i >= self.len() {
            return None;
        }
        let start = self.start(i);
        let end = if i + 1 < self.len() {
            self.start(i + 1) - 1
        } else {
            self.text.len()
        };
        let line = self.text[start..end].trim_end_matches('\n');
        Some(line.split_once('\t').unwrap_or((line, "")))
    }

    /// Index of the first line whose key is ≥ `target` (bytewise), or `len()`.
    pub(crate) fn lower_bound(&self, target: &str) -> usize {
        let (mut lo, mut hi) = (0usize, self.len());
        while lo < hi {
            let mid = lo + (hi - lo) / 2;
            if key_less(&self.text.as_bytes()[self.start(mid)..], target.as_bytes()) {
                lo = mid + 1;
            } else {
                hi = mid;
            }
        }
        lo
    }

    /// The value of exactly `key`, if present.
    pub(crate) fn get(&self, key: &str) -> Option<&'static str> {
        self.line(self.lower_bound(key))
            .filter(|(k, _)| *k == key)
            .map(|(_, v)| v)
    }

    /// Every `(key, value)` line, in order.
    #[cfg(test)]
    pub(crate) fn entries(&self) -> impl Iterator<Item = (&'static str, &'static str)> + '_ {
        (0..self.len()).filter_map(|i| self.line(i))
    }
}

/// Compares the key that starts `line` (up to its tab) with `target`, without first
/// finding the tab: bytes are compared until they differ or the key ends.
fn key_less(line: &[u8], target: &[u8]) -> bool {
    for (i, &t) in target.iter().enumerate() {
        match line.get(i) {
            None | Some(b'\t') | Some(b'\n') => return true, // key is a proper prefix
            Some(&b) if b != t => return b < t,
            _ => {}
        }
    }
    false // key starts with target: not less
}

#[cfg(test)]
mod tests {
    use super::*;

    const TEXT: &str = "a\t1\nbb\t2\nc\t3\nd\t4\n多模态\t5\n";

    fn offsets() -> Vec<u8> {
        let mut out = Vec::new();
        let mut start = 0;
        for (i, b) in TEXT.bytes().enumerate() {
            if b == b'\n' {
                out.extend_from_slice(&(start as u32).to_le_bytes());
                start = i + 1;
            }
        }
        out
    }

    #[test]
    fn finds_every_key_and_rejects_absent_ones() {
        let offsets: &'static [u8] = Box::leak(offsets().into_boxed_slice());
        let t = SortedTable::new(TEXT, offsets);
        assert_eq!(t.len(), 5);
        for (k, v) in [
            ("a", "1"),
            ("bb", "2"),
            ("c", "3"),
            ("d", "4"),
            ("多模态", "5"),
        ] {
            assert_eq!(t.get(k), Some(v), "{k}");
        }
        for k in ["", "b", "bbb", "e", "0", "多"] {
            assert_eq!(t.get(k), None, "{k}");
        }
        assert_eq!(t.lower_bound("b"), 1);
        assert_eq!(t.lower_bound("zz"), 4);
        assert_eq!(t.lower_bound("多模态x"), 5);
    }
}
