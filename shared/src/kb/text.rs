//! A page's content as a function holds it. Read from the JSON it is a plain string. Read
//! from a prebuilt index it is a range of a *packed block*: the deflated content of a few
//! neighbouring documents, inflated the first time any of them is read and kept from then
//! on. Most of a site's bytes are page text that no request reads (ranking needs only the
//! postings), so a cold start does not inflate it, and a warm function holds the text of
//! the blocks its requests touched beside the deflated rest (0.16 to 0.32 of the text).
//!
//! [`Text`] dereferences to `str` either way, so nothing that reads a document's content
//! knows which it is.

use std::ops::{Deref, Range};
use std::sync::{Arc, OnceLock};

/// A document's content: a string, or a range of a [`PackedBlock`].
#[derive(Clone)]
pub struct Text(Repr);

#[derive(Clone)]
enum Repr {
    Plain(String),
    Packed(Arc<PackedBlock>, Range<u32>),
}

impl Text {
    /// The text `range` (byte offsets) of `block`'s inflated bytes. A range that does not
    /// fall on character boundaries inside the block reads as empty.
    pub fn packed(block: Arc<PackedBlock>, range: Range<u32>) -> Self {
        Self(Repr::Packed(block, range))
    }

    /// Its length in bytes, known without inflating its block (for a range that does not
    /// read as text, the range's length).
    pub fn byte_len(&self) -> usize {
        match &self.0 {
            Repr::Plain(s) => s.len(),
            Repr::Packed(_, range) => range.len(),
        }
    }

    /// The packed block it reads from, if it is packed.
    #[cfg(test)]
    pub(crate) fn block(&self) -> Option<&PackedBlock> {
        match &self.0 {
            Repr::Plain(_) => None,
            Repr::Packed(block, _) => Some(block),
        }
    }

    /// The text, inflating its block if no one has yet.
    pub fn as_str(&self) -> &str {
        match &self.0 {
            Repr::Plain(s) => s,
            Repr::Packed(block, range) => block
                .text()
                .get(range.start as usize..range.end as usize)
                .unwrap_or(""),
        }
    }
}

impl From<String> for Text {
    fn from(s: String) -> Self {
        Self(Repr::Plain(s))
    }
}

impl From<&str> for Text {
    fn from(s: &str) -> Self {
        Self(Repr::Plain(s.to_owned()))
    }
}

impl Deref for Text {
    type Target = str;
    fn deref(&self) -> &str {
        self.as_str()
    }
}

impl Default for Text {
    fn default() -> Self {
        Self(Repr::Plain(String::new()))
    }
}

impl PartialEq for Text {
    fn eq(&self, other: &Self) -> bool {
        self.as_str() == other.as_str()
    }
}

impl std::fmt::Debug for Text {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        std::fmt::Debug::fmt(self.as_str(), f)
    }
}

/// The raw-deflated content of neighbouring documents, inflated on first read.
pub struct PackedBlock {
    deflated: Box<[u8]>,
    /// The inflated length the writer recorded (bounds the inflation).
    len: u32,
    text: OnceLock<Box<str>>,
}

impl std::fmt::Debug for PackedBlock {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PackedBlock")
            .field("deflated", &self.deflated.len())
            .field("len", &self.len)
            .field("inflated", &self.text.get().is_some())
            .finish()
    }
}

impl PackedBlock {
    /// A block of `deflated` bytes (raw deflate) that inflate to `len` bytes of UTF-8.
    pub fn new(deflated: Box<[u8]>, len: u32) -> Self {
        Self {
            deflated,
            len,
            text: OnceLock::new(),
        }
    }

    /// The inflated length the writer recorded.
    pub fn len(&self) -> u32 {
        self.len
    }

    /// Whether it holds no text.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Whether it has been inflated (a request read one of its documents).
    #[cfg(test)]
    pub(crate) fn is_inflated(&self) -> bool {
        self.text.get().is_some()
    }

    /// The inflated text. A block that does not inflate to its length or is not UTF-8
    /// (only a writer's bug: the index's checksum covers its bytes) reads as empty, with
    /// an error logged once.
    pub fn text(&self) -> &str {
        self.text.get_or_init(|| {
            inflate(&self.deflated, self.len).unwrap_or_else(|why| {
                tracing::error!(why, "a packed text block of the index is unreadable");
                Box::from("")
            })
        })
    }
}

/// `deflated` (raw deflate) inflated to exactly `len` bytes of UTF-8.
fn inflate(deflated: &[u8], len: u32) -> Result<Box<str>, &'static str> {
    let mut out = vec![0u8; len as usize];
    let config = zlib_rs::InflateConfig { window_bits: -15 };
    let (inflated, rc) = zlib_rs::decompress_slice(&mut out, deflated, config);
    if rc != zlib_rs::ReturnCode::Ok || inflated.len() != out.len() {
        return Err("it does not inflate to its recorded length");
    }
    String::from_utf8(out)
        .map(String::into_boxed_str)
        .map_err(|_| "it is not UTF-8")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn deflate(raw: &[u8]) -> Box<[u8]> {
        let mut out = vec![0u8; zlib_rs::compress_bound(raw.len())];
        let mut config = zlib_rs::DeflateConfig::new(6);
        config.window_bits = -15;
        let (packed, rc) = zlib_rs::compress_slice(&mut out, raw, config);
        assert_eq!(rc, zlib_rs::ReturnCode::Ok);
        packed.into()
    }

    #[test]
    fn a_packed_range_reads_as_its_slice_of_the_inflated_block() {
        let raw = "first page. 第二页。third";
        let block = Arc::new(PackedBlock::new(deflate(raw.as_bytes()), raw.len() as u32));
        let second = raw.find('第').unwrap() as u32..raw.find("third").unwrap() as u32;
        let a = Text::packed(block.clone(), 0..11);
        let b = Text::packed(block.clone(), second);
        assert!(block.text.get().is_none(), "not inflated before a read");
        assert_eq!(a.as_str(), "first page.");
        assert_eq!(b.as_str(), "第二页。");
        assert!(block.text.get().is_some(), "inflated once read");
        assert_eq!(a, Text::from("first page."));
    }

    #[test]
    fn a_bad_range_or_block_reads_as_empty() {
        let raw = "第二页";
        let block = Arc::new(PackedBlock::new(deflate(raw.as_bytes()), raw.len() as u32));
        // Inside a character, and past the end.
        assert_eq!(Text::packed(block.clone(), 1..3).as_str(), "");
        assert_eq!(Text::packed(block, 0..100).as_str(), "");
        // Recorded longer than it inflates to, garbage, and not UTF-8.
        let short = Arc::new(PackedBlock::new(deflate(b"abc"), 4));
        assert_eq!(Text::packed(short, 0..3).as_str(), "");
        let garbage = Arc::new(PackedBlock::new(Box::from(&[0xffu8, 0xfe, 7][..]), 3));
        assert_eq!(Text::packed(garbage, 0..3).as_str(), "");
        let latin1 = Arc::new(PackedBlock::new(deflate(&[b'a', 0xe9]), 2));
        assert_eq!(Text::packed(latin1, 0..1).as_str(), "");
    }
}
