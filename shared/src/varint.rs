//! LEB128 varints (7 bits a byte, low first, at most 5 bytes for 32 bits): how the prebuilt
//! index stores its integer arrays, and how packed postings are read back a term at a time.

/// Appends `v` as a varint.
pub(crate) fn put(out: &mut Vec<u8>, mut v: u32) {
    while v >= 0x80 {
        out.push(v as u8 | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
}

/// The varint at `*at` in `bytes`, moving past it; `None` (and `*at` somewhere inside it)
/// for one that runs past the end or past 32 bits.
pub(crate) fn read(bytes: &[u8], at: &mut usize) -> Option<u32> {
    // Most varints (gaps, frequencies, lengths) are one byte.
    if let Some(&b) = bytes.get(*at).filter(|&&b| b < 0x80) {
        *at += 1;
        return Some(u32::from(b));
    }
    let mut v = 0u32;
    for shift in [0, 7, 14, 21, 28] {
        let b = *bytes.get(*at)?;
        *at += 1;
        let bits = u32::from(b & 0x7f);
        if shift == 28 && (bits >> 4 != 0 || b >= 0x80) {
            return None;
        }
        v |= bits << shift;
        if b < 0x80 {
            return Some(v);
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values_round_trip_and_overlong_or_cut_ones_are_refused() {
        let mut out = Vec::new();
        for v in [0, 1, 127, 128, 300, u32::MAX] {
            put(&mut out, v);
        }
        let mut at = 0;
        let read_all: Vec<u32> = (0..6).map(|_| read(&out, &mut at).unwrap()).collect();
        assert_eq!(read_all, [0, 1, 127, 128, 300, u32::MAX]);
        assert_eq!(at, out.len());
        for bad in [
            &[0xff, 0xff, 0xff, 0xff, 0x1f][..],
            &[0x80, 0x80, 0x80, 0x80, 0x80, 0x01],
            &[0x80],
            &[],
        ] {
            assert_eq!(read(bad, &mut 0), None, "{bad:?}");
        }
    }
}
