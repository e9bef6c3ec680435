//! The body's primitives: little-endian scalars, strings and length-prefixed arrays,
//! written by [`Writer`] and read back by [`Input`] as they stream in (from a file or a
//! buffer), hashing what it reads for the checksum and never reading more than the body
//! holds (its header's length, which the reader has compared with the object's real one).
//! No count read from the file sizes an allocation: buffers grow block by block as the
//! bytes arrive, so a hostile count costs what the file actually holds, not what it claims.
//!
//! A *deflated section* ([`Writer::deflated`], [`Input::deflated`]) is the same primitives
//! written into a stream that is stored as deflate blocks: its raw length (`u64`), then
//! blocks of a `u32` raw length, a `u32` stored length and that many bytes of raw deflate
//! (`zlib-rs`), cut where the writer marks a boundary once a block holds [`BLOCK_TARGET`]
//! bytes. A block may expand at most [`MAX_RATIO`] times, so what a section decodes to is
//! bounded by the bytes that hold it. *Varints* are LEB128 (7 bits a byte, low first).

use std::io::Read;

use super::{ContentHasher, IndexError};

/// Raw bytes a deflate block is cut at (at the first boundary past it): 64 KiB blocks kept
/// 0.334 of git's manual's documents and 256 KiB 0.321, 1 MiB 0.317 (level 6).
const BLOCK_TARGET: usize = 256 << 10;

/// Most a block may expand: a block that deflates smaller than that is written as
/// deflate's stored blocks instead. Real text expands 3 to 6 times (git's manual, the
/// JDK's API docs).
pub(super) const MAX_RATIO: u64 = 128;

/// Deflate level of the blocks: level 9 saved 0.3% over 6 on git's manual.
const LEVEL: i32 = 6;

/// `raw` as raw deflate at `level`; stored when it would expand more than [`MAX_RATIO`]
/// times (or, which the bound rules out, did not fit).
fn deflate(raw: &[u8], level: i32) -> Vec<u8> {
    let mut out = vec![0u8; zlib_rs::compress_bound(raw.len())];
    let mut config = zlib_rs::DeflateConfig::new(level);
    config.window_bits = -15;
    let (packed, rc) = zlib_rs::compress_slice(&mut out, raw, config);
    let n = packed.len();
    if rc != zlib_rs::ReturnCode::Ok || raw.len() as u64 > MAX_RATIO * n as u64 {
        return stored(raw);
    }
    out.truncate(n);
    out
}

/// `raw` as deflate's stored blocks (RFC 1951 3.2.4: a header byte, the length and its
/// complement, the bytes), the last marked final.
fn stored(raw: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(raw.len() + 5 * (raw.len() / 0xffff + 1));
    let mut pieces = raw.chunks(0xffff).peekable();
    if pieces.peek().is_none() {
        out.extend_from_slice(&[1, 0, 0, 0xff, 0xff]);
    }
    while let Some(piece) = pieces.next() {
        out.push(u8::from(pieces.peek().is_none()));
        let len = piece.len() as u16;
        out.extend_from_slice(&len.to_le_bytes());
        out.extend_from_slice(&(!len).to_le_bytes());
        out.extend_from_slice(piece);
    }
    out
}

pub(super) use crate::varint::put as put_varint;

/// Reads varints from a byte array, failing (never panicking) on one that runs past the
/// end or past 32 bits.
pub(super) struct Varints<'b> {
    bytes: &'b [u8],
    at: usize,
}

impl<'b> Varints<'b> {
    pub(super) fn new(bytes: &'b [u8]) -> Self {
        Self { bytes, at: 0 }
    }

    /// How many bytes have been read.
    pub(super) fn position(&self) -> usize {
        self.at
    }

    /// Whether every byte has been read.
    pub(super) fn is_done(&self) -> bool {
        self.at == self.bytes.len()
    }

    pub(super) fn next(&mut self) -> Result<u32, IndexError> {
        crate::varint::read(self.bytes, &mut self.at).ok_or(IndexError::Malformed(
            "a varint runs past the end or past 32 bits",
        ))
    }
}

/// A string's length meaning "no string".
pub(super) const NONE: u32 = u32::MAX;

/// Appends little-endian values, strings and length-prefixed arrays.
#[derive(Default)]
pub(super) struct Writer(pub(super) Vec<u8>);

impl Writer {
    pub(super) fn u32(&mut self, v: u32) {
        self.0.extend_from_slice(&v.to_le_bytes());
    }

    /// A deflated section holding what `write` writes into the [`Deflater`] it is given.
    pub(super) fn deflated(&mut self, write: impl FnOnce(&mut Deflater<'_>)) {
        let at = self.0.len();
        self.0.extend_from_slice(&0u64.to_le_bytes());
        let mut section = Deflater {
            out: self,
            raw: Writer::default(),
            total: 0,
        };
        write(&mut section);
        section.flush();
        let total = section.total;
        self.0[at..at + 8].copy_from_slice(&total.to_le_bytes());
    }

    pub(super) fn bytes(&mut self, b: &[u8]) {
        self.0.extend_from_slice(&(b.len() as u64).to_le_bytes());
        self.0.extend_from_slice(b);
    }

    pub(super) fn u32s(&mut self, v: &[u32]) {
        self.0.extend_from_slice(&(v.len() as u64).to_le_bytes());
        self.0.reserve(v.len() * 4);
        for x in v {
            self.0.extend_from_slice(&x.to_le_bytes());
        }
    }

    /// `raw` as one deflate block: its raw length, its stored length, the raw deflate.
    pub(super) fn block(&mut self, raw: &[u8]) {
        let packed = deflate(raw, LEVEL);
        self.u32(raw.len() as u32);
        self.u32(packed.len() as u32);
        self.0.extend_from_slice(&packed);
    }

    /// A string: its `u32` byte length, then its UTF-8.
    pub(super) fn str(&mut self, s: &str) {
        self.u32(s.len() as u32);
        self.0.extend_from_slice(s.as_bytes());
    }

    /// A string or none (the length `u32::MAX`, no bytes).
    pub(super) fn opt_str(&mut self, s: Option<&str>) {
        match s {
            Some(s) => self.str(s),
            None => self.u32(NONE),
        }
    }
}

/// The inside of a deflated section being written: a [`Writer`] whose bytes are deflated
/// a block at a time.
pub(super) struct Deflater<'w> {
    out: &'w mut Writer,
    raw: Writer,
    /// Raw bytes written in blocks so far.
    total: u64,
}

impl Deflater<'_> {
    /// Marks a place the stream may be cut at (between two records): a block that holds
    /// [`BLOCK_TARGET`] bytes is written out.
    pub(super) fn boundary(&mut self) {
        if self.raw.0.len() >= BLOCK_TARGET {
            self.flush();
        }
    }

    fn flush(&mut self) {
        let raw = &self.raw.0;
        if raw.is_empty() {
            return;
        }
        self.out.block(raw);
        self.total += raw.len() as u64;
        self.raw.0.clear();
    }
}

impl std::ops::Deref for Deflater<'_> {
    type Target = Writer;
    fn deref(&self) -> &Writer {
        &self.raw
    }
}

impl std::ops::DerefMut for Deflater<'_> {
    fn deref_mut(&mut self) -> &mut Writer {
        &mut self.raw
    }
}

/// Reads what [`Writer`] wrote from a stream, failing (never panicking) past the end.
pub(super) struct Input<'a> {
    inner: Box<dyn Read + Send + 'a>,
    /// Body bytes not read yet, per the header.
    left: u64,
    /// Body bytes read so far.
    read: u64,
    /// The body's checksum so far; none inside a deflated section (its stored bytes are
    /// hashed as the body's).
    hasher: Option<ContentHasher>,
}

/// The raw bytes of a deflated section, read block by block from the body as they are
/// asked for.
struct Inflate<'o, 'a> {
    outer: &'o mut Input<'a>,
    /// The current block, inflated.
    block: Vec<u8>,
    /// How much of it has been handed out.
    at: usize,
    /// Raw bytes the blocks not read yet must hold.
    left: u64,
}

impl Inflate<'_, '_> {
    fn next_block(&mut self) -> Result<(), IndexError> {
        let (packed, raw) = self.outer.block()?;
        let raw = u64::from(raw);
        if raw == 0 || raw > self.left {
            return Err(IndexError::Malformed("a deflate block's length"));
        }
        // Zeroed only where it grows: inflating overwrites the rest, and a block that does
        // not fill its length is refused.
        self.block.resize(raw as usize, 0);
        let config = zlib_rs::InflateConfig { window_bits: -15 };
        let (inflated, rc) = zlib_rs::decompress_slice(&mut self.block, &packed, config);
        if rc != zlib_rs::ReturnCode::Ok || inflated.len() as u64 != raw {
            return Err(IndexError::Malformed("a deflate block"));
        }
        self.left -= raw;
        self.at = 0;
        Ok(())
    }
}

impl Read for Inflate<'_, '_> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        if self.at == self.block.len() {
            if self.left == 0 {
                return Ok(0);
            }
            self.next_block().map_err(std::io::Error::other)?;
        }
        let n = buf.len().min(self.block.len() - self.at);
        buf[..n].copy_from_slice(&self.block[self.at..self.at + n]);
        self.at += n;
        Ok(n)
    }
}

/// How much of a large array is read at once.
const BLOCK: usize = 64 << 10;

/// Makes room in `out` for `more` items, doubling as a vector does but never past `n`, the
/// items it will hold: a large string or array ends at its size, not up to twice it.
fn grow<T>(out: &mut Vec<T>, more: usize, n: usize) {
    let at = out.len();
    if out.capacity() < at + more {
        let target = (2 * out.capacity()).clamp(at + more, n.max(at + more));
        out.reserve_exact(target - at);
    }
}

impl<'a> Input<'a> {
    pub(super) fn new(inner: Box<dyn Read + Send + 'a>, body_len: u64) -> Self {
        Self {
            inner,
            left: body_len,
            read: 0,
            hasher: Some(ContentHasher::default()),
        }
    }

    /// The inside of a deflated section, read as it is inflated; [`Input::end`] checks it
    /// was read to its end.
    pub(super) fn deflated(&mut self) -> Result<Input<'_>, IndexError> {
        let total = self.u64()?;
        if total > self.left.saturating_mul(MAX_RATIO) {
            return Err(IndexError::Malformed("a deflated section's length"));
        }
        Ok(Input {
            inner: Box::new(Inflate {
                outer: self,
                block: Vec::new(),
                at: 0,
                left: total,
            }),
            left: total,
            read: 0,
            hasher: None,
        })
    }

    /// Checks that a deflated section has been read to its end.
    pub(super) fn end(self) -> Result<(), IndexError> {
        match self.left {
            0 => Ok(()),
            _ => Err(IndexError::Malformed(
                "a deflated section holds more than its fields",
            )),
        }
    }

    /// Fills `buf` from the stream; the body's length bounds every read.
    fn fill(&mut self, buf: &mut [u8]) -> Result<(), IndexError> {
        if buf.len() as u64 > self.left {
            return Err(IndexError::Malformed("an array runs past the end"));
        }
        self.inner.read_exact(buf).map_err(|e| {
            // A deflated section's own error, passed through `Read`.
            if let Some(inner) = e.get_ref().and_then(|e| e.downcast_ref::<IndexError>()) {
                return inner.clone();
            }
            match e.kind() {
                std::io::ErrorKind::UnexpectedEof => IndexError::Length {
                    found: self.read,
                    expected: self.read + self.left,
                },
                _ => IndexError::Read(e.to_string()),
            }
        })?;
        if let Some(h) = &mut self.hasher {
            h.update(buf);
        }
        self.left -= buf.len() as u64;
        self.read += buf.len() as u64;
        Ok(())
    }

    /// Checks a count of `size`-byte items against what is left, before anything is
    /// reserved for it.
    fn fits(&self, n: u64, size: u64) -> Result<usize, IndexError> {
        match n.checked_mul(size) {
            Some(b) if b <= self.left => Ok(n as usize),
            _ => Err(IndexError::Malformed("a count runs past the end")),
        }
    }

    pub(super) fn u32(&mut self) -> Result<u32, IndexError> {
        let mut b = [0u8; 4];
        self.fill(&mut b)?;
        Ok(u32::from_le_bytes(b))
    }

    pub(super) fn u64(&mut self) -> Result<u64, IndexError> {
        let mut b = [0u8; 8];
        self.fill(&mut b)?;
        Ok(u64::from_le_bytes(b))
    }

    /// A count of items at least `size` bytes each.
    pub(super) fn count(&mut self, size: u64) -> Result<usize, IndexError> {
        let n = self.u32()?;
        self.fits(u64::from(n), size)
    }

    /// `n` bytes, read a block at a time into a buffer that grows as they arrive.
    fn raw(&mut self, n: usize) -> Result<Vec<u8>, IndexError> {
        let mut out = Vec::with_capacity(n.min(BLOCK));
        while out.len() < n {
            let at = out.len();
            let take = (n - at).min(BLOCK);
            grow(&mut out, take, n);
            out.resize(at + take, 0);
            self.fill(&mut out[at..])?;
        }
        Ok(out)
    }

    /// What [`Writer::block`] wrote, not inflated: the stored bytes and the raw length,
    /// which is at most [`MAX_RATIO`] times theirs.
    pub(super) fn block(&mut self) -> Result<(Vec<u8>, u32), IndexError> {
        let raw = self.u32()?;
        let stored = u64::from(self.u32()?);
        if u64::from(raw) > MAX_RATIO * stored {
            return Err(IndexError::Malformed("a deflate block's length"));
        }
        let stored = self.fits(stored, 1)?;
        Ok((self.raw(stored)?, raw))
    }

    pub(super) fn bytes(&mut self) -> Result<Vec<u8>, IndexError> {
        let n = self.u64()?;
        let n = self.fits(n, 1)?;
        self.raw(n)
    }

    pub(super) fn u32s(&mut self) -> Result<Vec<u32>, IndexError> {
        let n = self.u64()?;
        let n = self.fits(n, 4)?;
        let mut out = Vec::with_capacity(n.min(BLOCK / 4));
        let mut block = vec![0u8; BLOCK.min(n * 4)];
        while out.len() < n {
            let take = ((n - out.len()) * 4).min(BLOCK);
            self.fill(&mut block[..take])?;
            grow(&mut out, take / 4, n);
            out.extend(
                block[..take]
                    .chunks_exact(4)
                    .map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]])),
            );
        }
        Ok(out)
    }

    pub(super) fn str(&mut self) -> Result<String, IndexError> {
        self.opt_str()?
            .ok_or(IndexError::Malformed("a string is missing"))
    }

    pub(super) fn opt_str(&mut self) -> Result<Option<String>, IndexError> {
        let n = self.u32()?;
        if n == NONE {
            return Ok(None);
        }
        let n = self.fits(u64::from(n), 1)?;
        String::from_utf8(self.raw(n)?)
            .map(Some)
            .map_err(|_| IndexError::Malformed("a string is not UTF-8"))
    }

    /// Reads the rest of the body (after a malformed array, so damage is told from a
    /// writer's bug by the checksum), then checks that nothing follows it and that it
    /// matches `checksum`.
    pub(super) fn finish(&mut self, checksum: u64) -> Result<(), IndexError> {
        let mut block = vec![0u8; BLOCK];
        while self.left > 0 {
            let take = (self.left as usize).min(BLOCK);
            self.fill(&mut block[..take])?;
        }
        let mut extra = [0u8; 1];
        match self.inner.read(&mut extra) {
            Ok(0) => {}
            Ok(_) => {
                return Err(IndexError::Length {
                    found: self.read + 1,
                    expected: self.read,
                })
            }
            Err(e) => return Err(IndexError::Read(e.to_string())),
        }
        if self.hasher.as_ref().map(ContentHasher::finish) != Some(checksum) {
            return Err(IndexError::Checksum);
        }
        Ok(())
    }
}
