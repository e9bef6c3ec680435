//! The body's primitives: little-endian scalars, strings and length-prefixed arrays,
//! written by [`Writer`] and read back by [`Input`] as they stream in (from a file or a
//! buffer), hashing what it reads for the checksum and never reading more than the body
//! holds (its header's length, which the reader has compared with the object's real one).
//! No count read from the file sizes an allocation: buffers grow block by block as the
//! bytes arrive, so a hostile count costs what the file actually holds, not what it claims.

use std::io::Read;

use super::{ContentHasher, IndexError};

/// A string's length meaning "no string".
const NONE: u32 = u32::MAX;

/// Appends little-endian values, strings and length-prefixed arrays.
#[derive(Default)]
pub(super) struct Writer(pub(super) Vec<u8>);

impl Writer {
    pub(super) fn u32(&mut self, v: u32) {
        self.0.extend_from_slice(&v.to_le_bytes());
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

/// Reads what [`Writer`] wrote from a stream, failing (never panicking) past the end.
pub(super) struct Input<'a> {
    inner: Box<dyn Read + Send + 'a>,
    /// Body bytes not read yet, per the header.
    left: u64,
    /// Body bytes read so far.
    read: u64,
    hasher: ContentHasher,
}

/// How much of a large array is read at once.
const BLOCK: usize = 64 << 10;

impl<'a> Input<'a> {
    pub(super) fn new(inner: Box<dyn Read + Send + 'a>, body_len: u64) -> Self {
        Self {
            inner,
            left: body_len,
            read: 0,
            hasher: ContentHasher::default(),
        }
    }

    /// Fills `buf` from the stream; the body's length bounds every read.
    fn fill(&mut self, buf: &mut [u8]) -> Result<(), IndexError> {
        if buf.len() as u64 > self.left {
            return Err(IndexError::Malformed("an array runs past the end"));
        }
        self.inner.read_exact(buf).map_err(|e| match e.kind() {
            std::io::ErrorKind::UnexpectedEof => IndexError::Length {
                found: self.read,
                expected: self.read + self.left,
            },
            _ => IndexError::Read(e.to_string()),
        })?;
        self.hasher.update(buf);
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
            out.resize(at + take, 0);
            self.fill(&mut out[at..])?;
        }
        Ok(out)
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
        if self.hasher.finish() != checksum {
            return Err(IndexError::Checksum);
        }
        Ok(())
    }
}
