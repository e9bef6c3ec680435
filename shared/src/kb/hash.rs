//! The hash naming a knowledge base's bytes: its version when the source has no ETag of
//! its own (a file, memory), and what a prebuilt index says it was built from.

/// The hash identifying a knowledge base's bytes (and so the version an index was built
/// from): 64 bits over 8-byte little-endian words, each step a bijection of the state, so
/// any change confined to one word always changes it. About eight times faster than a
/// byte-wise hash, which matters on a 80 MB knowledge base read at every cold start.
pub fn content_hash(bytes: &[u8]) -> u64 {
    let mut h = ContentHasher::default();
    h.update(bytes);
    h.finish()
}

/// [`content_hash`] over bytes given in pieces (a file read in blocks): the same value as
/// over the whole.
#[derive(Debug, Clone, Default)]
pub struct ContentHasher {
    state: u64,
    len: u64,
    /// Bytes of a word not yet complete.
    pending: [u8; 8],
    pending_len: usize,
}

impl ContentHasher {
    const K: u64 = 0x9e37_79b9_7f4a_7c15;

    fn word(&mut self, w: u64) {
        self.state = (self.state ^ w).wrapping_mul(Self::K).rotate_left(29);
    }

    /// Adds the next bytes.
    pub fn update(&mut self, mut bytes: &[u8]) {
        self.len += bytes.len() as u64;
        if self.pending_len > 0 {
            let n = (8 - self.pending_len).min(bytes.len());
            self.pending[self.pending_len..self.pending_len + n].copy_from_slice(&bytes[..n]);
            self.pending_len += n;
            bytes = &bytes[n..];
            if self.pending_len < 8 {
                return;
            }
            self.word(u64::from_le_bytes(self.pending));
            self.pending_len = 0;
        }
        let mut words = bytes.chunks_exact(8);
        for w in &mut words {
            self.word(u64::from_le_bytes(w.try_into().unwrap_or([0; 8])));
        }
        let rest = words.remainder();
        self.pending[..rest.len()].copy_from_slice(rest);
        self.pending_len = rest.len();
    }

    /// The hash of everything added.
    pub fn finish(&self) -> u64 {
        // The length enters last (the state starts at zero), so bytes can stream in
        // before it is known.
        let mut h = self.clone();
        let mut tail = [0u8; 8];
        tail[..h.pending_len].copy_from_slice(&h.pending[..h.pending_len]);
        h.word(u64::from_le_bytes(tail));
        h.word(h.len ^ 0x2545_f491_4f6c_dd1d);
        h.state ^ (h.state >> 32)
    }
}

/// A short version tag for content without an ETag of its own (a file, memory):
/// [`content_hash`] of the bytes, hex. Stable across runs, so the same file always reports
/// the same version, and computable over a file streamed in blocks ([`version_of_hash`]).
pub fn content_version(bytes: &[u8]) -> String {
    version_of_hash(content_hash(bytes))
}

/// [`content_version`] from the bytes' [`content_hash`] (computed elsewhere, e.g. while a
/// file streams in).
pub fn version_of_hash(hash: u64) -> String {
    format!("{hash:016x}")
}
