//! One BM25 index in the file: its terms in a deflated section, its unit lengths and its
//! postings as varints, and not its weights, which are made again at load from each
//! posting's frequency with the very function that made them ([`Bm25Params::weight`]), so
//! they have the same bits.
//!
//! Layout: `k1` and `b` (`f32` bits); a deflated section holding the term bytes (a byte
//! array) and each term's length in bytes (a byte array of varints); the unit lengths (a
//! byte array of varints, one per unit); the postings (a byte array: per term, in id
//! order, its number of postings, then per posting the gap from the previous posting's
//! unit (the first: the unit) shifted left by one, its low bit set when the term occurs
//! once in the unit, else followed by the frequency); then the weights (a `u32` array of
//! `f32` bits): empty when they are made from the frequencies, which is how every index
//! the builder lays out is written; else (an index whose weights no frequency gives back)
//! every posting's weight, the frequencies then being written as one.

use super::codec::{put_varint, Input, Varints, Writer};
use super::IndexError;
use crate::retrieval::{idf, Bm25Index, Bm25Params, PackedPostings, TermTable};

/// Writes `bm25` as [`read`] reads it back.
pub(super) fn write(bm25: &Bm25Index, w: &mut Writer) {
    let params = bm25.params;
    w.u32(params.k1.to_bits());
    w.u32(params.b.to_bits());
    w.deflated(|d| {
        d.bytes(&bm25.terms.bytes);
        let mut lengths = Vec::with_capacity(bm25.terms.ends.len());
        let mut start = 0;
        for &end in &bm25.terms.ends {
            put_varint(&mut lengths, end - start);
            start = end;
        }
        d.bytes(&lengths);
    });
    let mut lens = Vec::with_capacity(bm25.lens.len());
    bm25.lens.iter().for_each(|&l| put_varint(&mut lens, l));
    w.bytes(&lens);
    let (postings, lengths, exact) = postings(bm25);
    w.bytes(&postings);
    w.bytes(&lengths);
    if exact {
        w.u32s(&[]);
    } else {
        let weights: Vec<u32> = (0..bm25.terms.len() as u32)
            .flat_map(|t| bm25.postings(t).1.iter().map(|w| w.to_bits()))
            .collect();
        w.u32s(&weights);
    }
}

/// The postings as varints; each term's record length (its count and its postings), so a
/// reader finds any term's postings without reading the others; and whether every weight
/// is made again from its frequency.
pub(super) fn postings(bm25: &Bm25Index) -> (Vec<u8>, Vec<u8>, bool) {
    let norms: Vec<f32> = bm25
        .lens
        .iter()
        .map(|&l| bm25.params.norm(l, bm25.avgdl))
        .collect();
    let mut out = Vec::new();
    let mut lengths = Vec::with_capacity(bm25.terms.len());
    let mut exact = true;
    for t in 0..bm25.terms.len() as u32 {
        let start = out.len();
        let (units, weights) = bm25.postings(t);
        put_varint(&mut out, units.len() as u32);
        let idf = idf(bm25.n_units, units.len());
        let mut previous = 0;
        for (&u, &weight) in units.iter().zip(weights) {
            let tf = exact
                .then(|| frequency(bm25.params, idf, norms[u as usize], weight))
                .flatten();
            exact = tf.is_some();
            let tf = tf.unwrap_or(1);
            put_varint(&mut out, (u - previous) << 1 | u32::from(tf == 1));
            if tf > 1 {
                put_varint(&mut out, tf);
            }
            previous = u;
        }
        put_varint(&mut lengths, (out.len() - start) as u32);
    }
    (out, lengths, exact)
}

/// The frequency whose weight, made as the builder makes it, has the bits of `weight`:
/// the weight's inverse, rounded, and its neighbours, each checked by making the weight.
fn frequency(params: Bm25Params, idf: f32, norm: f32, weight: f32) -> Option<u32> {
    let top = f64::from(idf) * f64::from(params.k1 + 1.0) - f64::from(weight);
    let guess = f64::from(weight) * f64::from(norm) / top;
    if !(guess.is_finite() && guess < f64::from(u32::MAX - 2)) {
        return None;
    }
    let guess = guess.round().max(1.0) as u32;
    [guess, guess + 1, guess.saturating_sub(1), guess + 2]
        .into_iter()
        .filter(|&tf| tf >= 1)
        .find(|&tf| params.weight(idf, tf, norm).to_bits() == weight.to_bits())
}

/// One BM25 index written by [`write`], every bound checked.
pub(super) fn read(r: &mut Input<'_>) -> Result<Bm25Index, IndexError> {
    let params = Bm25Params {
        k1: f32::from_bits(r.u32()?),
        b: f32::from_bits(r.u32()?),
    };
    // Weights made from other parameters could be negative or not numbers.
    let sane = params.k1.is_finite() && params.k1 >= 0.0 && (0.0..=1.0).contains(&params.b);
    if !sane {
        return Err(IndexError::Malformed("BM25 parameters"));
    }
    let mut section = r.deflated()?;
    let bytes = section.bytes()?;
    let lengths = section.bytes()?;
    section.end()?;
    let mut ends = Vec::new();
    let (mut lengths, mut end) = (Varints::new(&lengths), 0u32);
    while !lengths.is_done() {
        end = end
            .checked_add(lengths.next()?)
            .ok_or(IndexError::Malformed("term ends"))?;
        ends.push(end);
    }
    let terms = TermTable::from_terms(bytes, ends).map_err(IndexError::Malformed)?;
    let lens_bytes = r.bytes()?;
    let mut lens = Vec::new();
    let mut varints = Varints::new(&lens_bytes);
    while !varints.is_done() {
        lens.push(varints.next()?);
    }
    drop(lens_bytes);
    let postings = r.bytes()?;
    let lengths = r.bytes()?;
    let stored: Vec<f32> = r.u32s()?.into_iter().map(f32::from_bits).collect();
    if stored.is_empty() {
        // The weights are made from the frequencies: the postings may stay packed, each
        // term's checked and decoded when a query first needs it. Kept so when that holds
        // less than decoding them all (8 bytes a posting, 4 a term): not on a corpus of
        // rare terms (random CJK text: a bigram per character pair, most found once).
        let (starts, df) = records(&postings, &lengths, terms.len())?;
        let total: usize = df.iter().map(|&d| d as usize).sum();
        let packed_bytes = postings.len() + terms.len() * PackedPostings::PER_TERM;
        if packed_bytes < 8 * total + 4 * terms.len() {
            let packed = PackedPostings::new(postings.into(), starts, df);
            return Bm25Index::from_packed(terms, packed, lens, params)
                .map_err(IndexError::Malformed);
        }
    }
    let avgdl = crate::retrieval::average_length(&lens);
    let norms: Vec<f32> = lens.iter().map(|&l| params.norm(l, avgdl)).collect();
    let csr = read_postings(&postings, terms.len(), &norms, params, stored)?;
    Bm25Index::from_parts(terms, csr.offsets, csr.unit, csr.weight, lens, params)
        .map_err(IndexError::Malformed)
}

/// Where each of `n_terms` terms' records starts in `bytes` (one more entry for the end),
/// from their `lengths` (varints), and each one's count, read from its first varint: the
/// lengths must cover the bytes exactly, and a count may not exceed its record's bytes.
/// The postings themselves are checked when a term is decoded.
fn records(
    bytes: &[u8],
    lengths: &[u8],
    n_terms: usize,
) -> Result<(Vec<u32>, Vec<u32>), IndexError> {
    if u32::try_from(bytes.len()).is_err() {
        return Err(IndexError::Malformed("postings past 4 GiB"));
    }
    // Each term takes at least a byte: a term count is believed only that far.
    let mut starts = Vec::with_capacity((n_terms + 1).min(bytes.len() + 1));
    let mut df = Vec::with_capacity(n_terms.min(bytes.len()));
    let mut v = Varints::new(lengths);
    let mut start = 0u32;
    for _ in 0..n_terms {
        let len = v.next()?;
        let end = start
            .checked_add(len)
            .filter(|&e| e as usize <= bytes.len() && len > 0)
            .ok_or(IndexError::Malformed("posting record lengths"))?;
        let record = &bytes[start as usize..end as usize];
        let mut count = Varints::new(record);
        let n = count.next()?;
        if n as usize > record.len() - count.position() {
            return Err(IndexError::Malformed("a posting count"));
        }
        starts.push(start);
        df.push(n);
        start = end;
    }
    starts.push(start);
    if !v.is_done() || start as usize != bytes.len() {
        return Err(IndexError::Malformed("posting record lengths"));
    }
    Ok((starts, df))
}

/// The number of postings in the varints of `n_terms` terms' postings, each taking at
/// least a byte (so no more than the bytes).
fn count(bytes: &[u8], n_terms: usize) -> Result<usize, IndexError> {
    let mut v = Varints::new(bytes);
    let mut total = 0;
    for _ in 0..n_terms {
        let df = v.next()?;
        for _ in 0..df {
            if v.next()? & 1 == 0 {
                v.next()?;
            }
        }
        total += df as usize;
    }
    Ok(total)
}

/// An index's postings as [`Bm25Index`] holds them.
struct Csr {
    offsets: Vec<u32>,
    unit: Vec<u32>,
    weight: Vec<f32>,
}

/// The CSR arrays from the postings' varints: units ascending and in range in each list,
/// and the weights made again (or `stored`, when there are any).
fn read_postings(
    bytes: &[u8],
    n_terms: usize,
    norms: &[f32],
    params: Bm25Params,
    stored: Vec<f32>,
) -> Result<Csr, IndexError> {
    let n_units = norms.len();
    let make = stored.is_empty();
    // Each posting takes at least a byte: a term count is believed only that far.
    let mut offsets = Vec::with_capacity((n_terms + 1).min(bytes.len() + 1));
    offsets.push(0u32);
    // Sized exactly (a list grown as it fills ends up to twice the size, and stays so).
    let total = count(bytes, n_terms)?;
    let mut unit = Vec::with_capacity(total);
    let mut weight = Vec::with_capacity(if make { total } else { 0 });
    let mut v = Varints::new(bytes);
    for _ in 0..n_terms {
        let df = v.next()? as usize;
        let idf = idf(n_units, df);
        let mut previous = None;
        for _ in 0..df {
            let gap = v.next()?;
            let tf = if gap & 1 == 1 { 1 } else { v.next()? };
            let u = match previous {
                None => Some(gap >> 1),
                Some(p) if gap >> 1 > 0 => u32::checked_add(p, gap >> 1),
                Some(_) => None,
            };
            let Some(norm) = u.and_then(|u| norms.get(u as usize)) else {
                return Err(IndexError::Malformed("posting units"));
            };
            if tf == 0 {
                return Err(IndexError::Malformed("a posting's frequency"));
            }
            previous = u;
            unit.extend(u);
            if make {
                weight.push(params.weight(idf, tf, *norm));
            }
        }
        offsets.push(unit.len() as u32);
    }
    if !v.is_done() {
        return Err(IndexError::Malformed("postings past the last term"));
    }
    let weight = if make { weight } else { stored };
    Ok(Csr {
        offsets,
        unit,
        weight,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::search::prebuilt::codec::Input;

    fn index() -> Bm25Index {
        let units = [
            "face face model",
            "face train",
            "llava",
            "model model model train",
        ];
        Bm25Index::build(
            units
                .iter()
                .map(|u| u.split(' ').map(str::to_owned).collect::<Vec<_>>()),
            Bm25Params::default(),
        )
    }

    fn round_trip(bm25: &Bm25Index) -> (Vec<u8>, Result<Bm25Index, IndexError>) {
        let mut w = Writer::default();
        write(bm25, &mut w);
        let bytes = w.0;
        let read = read(&mut Input::new(Box::new(&bytes[..]), bytes.len() as u64));
        (bytes, read)
    }

    #[test]
    fn weights_made_from_frequencies_have_the_built_bits() {
        let built = index();
        let (bytes, read) = round_trip(&built);
        assert_eq!(read.unwrap(), built);
        // Made again, not stored: the empty weight array ends the index.
        assert_eq!(bytes[bytes.len() - 8..], 0u64.to_le_bytes());
    }

    #[test]
    fn weights_no_frequency_gives_are_stored() {
        let mut odd = index();
        let crate::retrieval::Postings::Built { weight, .. } = &mut odd.postings else {
            unreachable!("built by the builder")
        };
        weight[1] = 0.123;
        let n = weight.len() as u64;
        let (bytes, read) = round_trip(&odd);
        assert_eq!(read.unwrap(), odd);
        assert_eq!(
            bytes[bytes.len() - 8 - 4 * n as usize..][..8],
            n.to_le_bytes()
        );
    }

    /// The bytes of `bm25` with its postings array replaced by `postings`, whose terms'
    /// records are `first` bytes long for the first and 2 for the others, read back.
    fn with_postings(
        bm25: &Bm25Index,
        postings: &[u8],
        first: u32,
    ) -> Result<Bm25Index, IndexError> {
        let mut w = Writer::default();
        write(bm25, &mut w);
        let (written, written_lengths, exact) = super::postings(bm25);
        assert!(exact);
        // The postings, their record lengths and the empty weight array end what `write`
        // wrote.
        let tail = 8 + written.len() + 8 + written_lengths.len() + 8;
        assert_eq!(w.0[w.0.len() - tail + 8..][..written.len()], written[..]);
        let mut lengths = Vec::new();
        put_varint(&mut lengths, first);
        (1..bm25.terms.len()).for_each(|_| put_varint(&mut lengths, 2));
        let mut edited = Writer(w.0[..w.0.len() - tail].to_vec());
        edited.bytes(postings);
        edited.bytes(&lengths);
        edited.u32s(&[]);
        let mut r = Input::new(Box::new(&edited.0[..]), edited.0.len() as u64);
        read(&mut r)
    }

    /// A record per term: one posting in unit 0, occurring once.
    fn one_each(n_terms: usize) -> Vec<u8> {
        [1u8, 1].repeat(n_terms)
    }

    /// First records that break an invariant, with what they break.
    fn bad_records() -> [(&'static str, Vec<u8>); 4] {
        [
            ("a repeated unit", vec![2, 1, 1]),
            ("a unit past the last", vec![1, 9]),
            ("a frequency of 0", vec![1, 0, 0]),
            ("a record shorter than its postings", vec![2, 1]),
        ]
    }

    #[test]
    fn postings_out_of_order_past_the_units_or_the_end_are_refused() {
        // Few postings a term: decoded at load, where every list is checked.
        let bm25 = index();
        let n_terms = bm25.terms.len();
        let valid = one_each(n_terms);
        assert!(with_postings(&bm25, &valid, 2).is_ok());
        for (what, first) in bad_records() {
            let bytes = [first.clone(), valid[2..].to_vec()].concat();
            let read = with_postings(&bm25, &bytes, first.len() as u32);
            assert!(matches!(read, Err(IndexError::Malformed(_))), "{what}");
        }
        let cases: [(&str, Vec<u8>, u32); 3] = [
            (
                "a count past its record",
                [vec![200, 1], valid[2..].to_vec()].concat(),
                2,
            ),
            ("a cut varint", [valid.clone(), vec![0x80]].concat(), 2),
            (
                "bytes past the last term",
                [valid.clone(), vec![1]].concat(),
                2,
            ),
        ];
        for (what, bytes, first) in cases {
            let read = with_postings(&bm25, &bytes, first);
            assert!(matches!(read, Err(IndexError::Malformed(_))), "{what}");
        }
    }

    #[test]
    fn a_packed_list_that_breaks_an_invariant_reads_as_empty_and_the_others_decode() {
        let bm25 = index();
        let n_terms = bm25.terms.len();
        let valid = one_each(n_terms);
        for (what, first) in bad_records() {
            let bytes = [first.clone(), valid[2..].to_vec()].concat();
            let mut lengths = Vec::new();
            put_varint(&mut lengths, first.len() as u32);
            (1..n_terms).for_each(|_| put_varint(&mut lengths, 2));
            let read = records(&bytes, &lengths, n_terms);
            let Ok((starts, df)) = read else {
                // Refused at load: only a count past its record's bytes is.
                assert_eq!(what, "a record shorter than its postings");
                continue;
            };
            let packed = PackedPostings::new(bytes.into(), starts, df);
            let lens = bm25.lens.clone();
            let index =
                Bm25Index::from_packed(bm25.terms.clone(), packed, lens, bm25.params).unwrap();
            assert!(index.postings(0).0.is_empty(), "{what}");
            for t in 1..n_terms as u32 {
                assert_eq!(index.postings(t).0, [0], "{what}");
            }
        }
    }

    #[test]
    fn a_term_listed_twice_is_refused() {
        let table = TermTable::from_terms(b"abab".to_vec(), vec![2, 4]);
        assert_eq!(table, Err("a term listed twice"));
        assert!(TermTable::from_terms(b"abc".to_vec(), vec![2, 1]).is_err());
        assert!(TermTable::from_terms(b"abc".to_vec(), vec![2]).is_err());
    }
}
