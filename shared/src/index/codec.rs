//! The body's primitives: little-endian scalars, length-prefixed arrays and a string table,
//! written by [`Writer`] and read back by [`Reader`] without ever panicking past the end.

use super::IndexError;

/// Appends little-endian values and length-prefixed arrays.
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
}

/// Reads what [`Writer`] wrote, failing (never panicking) past the end.
pub(super) struct Reader<'a>(pub(super) &'a [u8]);

impl<'a> Reader<'a> {
    fn take(&mut self, n: usize) -> Result<&'a [u8], IndexError> {
        if n > self.0.len() {
            return Err(IndexError::Malformed("an array runs past the end"));
        }
        let (head, rest) = self.0.split_at(n);
        self.0 = rest;
        Ok(head)
    }

    pub(super) fn u32(&mut self) -> Result<u32, IndexError> {
        let b = self.take(4)?;
        Ok(u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
    }

    pub(super) fn u64(&mut self) -> Result<u64, IndexError> {
        let b = self.take(8)?;
        Ok(u64::from_le_bytes(b.try_into().unwrap_or([0; 8])))
    }

    fn len(&mut self) -> Result<usize, IndexError> {
        usize::try_from(self.u64()?).map_err(|_| IndexError::Malformed("array length"))
    }

    pub(super) fn bytes(&mut self) -> Result<&'a [u8], IndexError> {
        let n = self.len()?;
        self.take(n)
    }

    pub(super) fn u32s(&mut self) -> Result<Vec<u32>, IndexError> {
        let n = self.len()?;
        let b = self.take(
            n.checked_mul(4)
                .ok_or(IndexError::Malformed("array length"))?,
        )?;
        Ok(b.chunks_exact(4)
            .map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]]))
            .collect())
    }
}

/// "No string" in a string reference.
pub(super) const NONE: u32 = u32::MAX;

/// Strings stored end to end, referred to by number: the text of every document field.
#[derive(Default)]
pub(super) struct StringsWriter {
    text: Vec<u8>,
    ends: Vec<u32>,
}

impl StringsWriter {
    /// Stores `s`; its number.
    pub(super) fn push(&mut self, s: &str) -> u32 {
        self.text.extend_from_slice(s.as_bytes());
        self.ends.push(self.text.len() as u32);
        (self.ends.len() - 1) as u32
    }

    /// Stores `s` if there is one; its number or [`NONE`].
    pub(super) fn push_opt(&mut self, s: Option<&str>) -> u32 {
        s.map_or(NONE, |s| self.push(s))
    }

    pub(super) fn write(&self, w: &mut Writer) {
        w.bytes(&self.text);
        w.u32s(&self.ends);
    }
}

/// A string table as read: the text is checked to be UTF-8 once, and each string's bounds
/// to fall on character boundaries when it is looked up.
pub(super) struct Strings<'a> {
    text: &'a str,
    ends: Vec<u32>,
}

impl<'a> Strings<'a> {
    pub(super) fn read(r: &mut Reader<'a>) -> Result<Self, IndexError> {
        let text = std::str::from_utf8(r.bytes()?)
            .map_err(|_| IndexError::Malformed("string table is not UTF-8"))?;
        let ends = r.u32s()?;
        Ok(Self { text, ends })
    }

    /// String number `i`.
    pub(super) fn get(&self, i: u32) -> Result<&'a str, IndexError> {
        let i = i as usize;
        let end = *self
            .ends
            .get(i)
            .ok_or(IndexError::Malformed("string number out of range"))?;
        let start = if i == 0 { 0 } else { self.ends[i - 1] };
        self.text
            .get(start as usize..end as usize)
            .ok_or(IndexError::Malformed("string bounds"))
    }

    /// How many strings there are.
    pub(super) fn len(&self) -> usize {
        self.ends.len()
    }

    /// String number `i`, or `None` for [`NONE`].
    pub(super) fn get_opt(&self, i: u32) -> Result<Option<&'a str>, IndexError> {
        if i == NONE {
            return Ok(None);
        }
        self.get(i).map(Some)
    }
}

/// Reads a flat `u32` record stream in order, failing past its end.
pub(super) struct Stream<'a> {
    values: &'a [u32],
}

impl<'a> Stream<'a> {
    pub(super) fn new(values: &'a [u32]) -> Self {
        Self { values }
    }

    pub(super) fn next(&mut self) -> Result<u32, IndexError> {
        let (&first, rest) = self
            .values
            .split_first()
            .ok_or(IndexError::Malformed("a record runs past the end"))?;
        self.values = rest;
        Ok(first)
    }

    /// A count that must fit in what is left (so no hostile count allocates much).
    pub(super) fn count(&mut self) -> Result<usize, IndexError> {
        let n = self.next()? as usize;
        if n > self.values.len() {
            return Err(IndexError::Malformed("a count runs past the end"));
        }
        Ok(n)
    }

    pub(super) fn is_empty(&self) -> bool {
        self.values.is_empty()
    }
}
