//! BM25 over an inverted index built once at load time.
//!
//! Score of unit `d` for weighted query terms `(t, w)`:
//! `Σ w · idf(t) · tf·(k1+1) / (tf + k1·(1 − b + b·|d|/avgdl))` with the Lucene IDF
//! `idf(t) = ln(1 + (N − df + 0.5)/(df + 0.5))` (never negative). Everything but the
//! query weight depends only on the corpus, so each posting stores its finished
//! `idf · tf-part` and a query is a weighted sum over posting lists.

use crate::varint;

/// BM25 parameters.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Bm25Params {
    /// Term-frequency saturation.
    pub k1: f32,
    /// Length normalisation strength.
    pub b: f32,
}

impl Default for Bm25Params {
    fn default() -> Self {
        Self { k1: 1.2, b: 0.75 }
    }
}

impl Bm25Params {
    /// The length normalisation of a unit of `len` terms, `k1·(1 − b + b·len/avgdl)`.
    pub(crate) fn norm(self, len: u32, avgdl: f32) -> f32 {
        self.k1 * (1.0 - self.b + self.b * len as f32 / avgdl)
    }

    /// A posting's finished weight, `idf · tf·(k1+1) / (tf + norm)`: the one function both
    /// the builder and a prebuilt file's reader compute it with, so a weight made again
    /// from a stored frequency has the same bits.
    pub(crate) fn weight(self, idf: f32, tf: u32, norm: f32) -> f32 {
        let tf = tf as f32;
        idf * tf * (self.k1 + 1.0) / (tf + norm)
    }
}

/// The average of the unit lengths `lens` (at least 1), as the weights use it.
pub(crate) fn average_length(lens: &[u32]) -> f32 {
    let total: u64 = lens.iter().map(|&l| u64::from(l)).sum();
    if lens.is_empty() {
        1.0
    } else {
        (total as f32 / lens.len() as f32).max(1.0)
    }
}

/// The Lucene BM25 inverse document frequency.
pub(crate) fn idf(n_docs: usize, df: usize) -> f32 {
    let (n, df) = (n_docs as f64, df as f64);
    (1.0 + (n - df + 0.5) / (df + 0.5)).ln() as f32
}

/// An immutable inverted index over numbered units (documents or passages).
///
/// Everything is held in flat arrays (a term table and CSR postings), so the same index
/// is built from text by [`Bm25Builder`] or read back from a prebuilt file
/// ([`crate::index`]) without a per-term allocation either way.
#[derive(Debug, Clone, Default)]
pub struct Bm25Index {
    /// The distinct terms, by id.
    pub(crate) terms: TermTable,
    /// Each term's postings.
    pub(crate) postings: Postings,
    /// Each unit's length in terms: with `params`, what the weights were made from (a
    /// prebuilt file stores these and each posting's frequency, not the weights).
    pub(crate) lens: Vec<u32>,
    pub(crate) params: Bm25Params,
    pub(crate) n_units: usize,
    pub(crate) avgdl: f32,
}

/// Where the postings are held.
#[derive(Debug, Clone)]
pub(crate) enum Postings {
    /// As the builder lays them out: postings of term `t` are `unit[offsets[t]..
    /// offsets[t+1]]` with their weights (CSR layout: three flat arrays instead of a Vec per
    /// term, fewer allocations and better locality).
    Built {
        offsets: Vec<u32>,
        unit: Vec<u32>,
        weight: Vec<f32>,
    },
    /// As a prebuilt file stores them, each term's decoded the first time a query needs it.
    Packed(PackedPostings),
}

impl Default for Postings {
    fn default() -> Self {
        Postings::Built {
            offsets: vec![0],
            unit: Vec::new(),
            weight: Vec::new(),
        }
    }
}

/// Postings kept as a prebuilt file stores them (per term its count, then per posting the
/// gap from the previous unit shifted left by one, the low bit set for a frequency of 1,
/// else the frequency after it, all varints), decoded a term at a time on first use into
/// units and weights, the weights made with [`Bm25Params::weight`] as the builder makes
/// them. Most of an index's terms are never queried: a cold start then neither decodes,
/// checks nor holds their postings (8 bytes each decoded, 1 to 2 packed).
///
/// A term's postings are checked when they are decoded (units ascending and below the
/// index's, frequencies of at least 1, the count's postings filling the term's bytes
/// exactly); a list that fails reads as empty, logged. Only a writer's bug can make one:
/// the file's checksum covers the bytes.
#[derive(Debug, Clone)]
pub(crate) struct PackedPostings {
    bytes: Box<[u8]>,
    /// Where each term's record (its count, then its postings) starts in `bytes`, and
    /// where the last one ends.
    starts: Vec<u32>,
    /// Each term's number of postings.
    df: Vec<u32>,
    /// Boxed: an unused term then costs 16 bytes here, not the 40 of a decoded pair.
    decoded: Box<[std::sync::OnceLock<Box<Decoded>>]>,
}

/// One term's postings decoded: its units (ascending) and their weights.
type Decoded = (Box<[u32]>, Box<[f32]>);

impl PackedPostings {
    /// Bytes a term costs held packed beyond its varints: its start, its count and its
    /// (empty) decoded slot.
    pub(crate) const PER_TERM: usize = 4 + 4 + 16;

    /// Postings `bytes` whose term `t`'s record is `bytes[starts[t]..starts[t + 1]]`, with
    /// `df[t]` postings (its count, which the caller has checked is at most its bytes).
    pub(crate) fn new(bytes: Box<[u8]>, starts: Vec<u32>, df: Vec<u32>) -> Self {
        let decoded = (0..df.len()).map(|_| std::sync::OnceLock::new()).collect();
        Self {
            bytes,
            starts,
            df,
            decoded,
        }
    }

    /// Term `t`'s units and weights, checked as they are decoded; a list that breaks an
    /// invariant reads as empty, logged.
    fn decode(&self, t: usize, index: &Bm25Index) -> Box<Decoded> {
        self.try_decode(t, index).unwrap_or_else(|| {
            tracing::error!(term = t, "a term's packed postings do not decode");
            Box::default()
        })
    }

    fn try_decode(&self, t: usize, index: &Bm25Index) -> Option<Box<Decoded>> {
        let record = self
            .bytes
            .get(self.starts[t] as usize..self.starts[t + 1] as usize)?;
        let mut at = 0;
        let df = varint::read(record, &mut at)? as usize;
        let idf = idf(index.n_units, df);
        // Each posting takes a byte at least: the count is believed only that far.
        let mut units = Vec::with_capacity(df.min(record.len()));
        let mut weights = Vec::with_capacity(df.min(record.len()));
        let mut previous: Option<u32> = None;
        for _ in 0..df {
            let (gap, tf) = next_posting(record, &mut at)?;
            let unit = match previous {
                None => gap,
                Some(p) if gap > 0 => p.checked_add(gap)?,
                Some(_) => return None,
            };
            let len = *index.lens.get(unit as usize)?;
            if tf == 0 {
                return None;
            }
            previous = Some(unit);
            units.push(unit);
            let norm = index.params.norm(len, index.avgdl);
            weights.push(index.params.weight(idf, tf, norm));
        }
        (at == record.len()).then(|| Box::new((units.into(), weights.into())))
    }
}

/// The posting at `*at` in `bytes`: its gap (the unit, for a list's first) and frequency.
fn next_posting(bytes: &[u8], at: &mut usize) -> Option<(u32, u32)> {
    let gap = varint::read(bytes, at)?;
    let tf = if gap & 1 == 1 {
        1
    } else {
        varint::read(bytes, at)?
    };
    Some((gap >> 1, tf))
}

impl PartialEq for Bm25Index {
    /// Equal when they hold the same terms, lengths and parameters and every term the same
    /// postings, however they are held.
    fn eq(&self, other: &Self) -> bool {
        self.terms == other.terms
            && self.lens == other.lens
            && self.params == other.params
            && self.n_units == other.n_units
            && self.avgdl.to_bits() == other.avgdl.to_bits()
            && (0..self.terms.len() as u32).all(|t| {
                let (a, b) = (self.postings(t), other.postings(t));
                a.0 == b.0
                    && a.1
                        .iter()
                        .map(|w| w.to_bits())
                        .eq(b.1.iter().map(|w| w.to_bits()))
            })
    }
}

/// Distinct term strings numbered from 0: their bytes end to end, where each ends, and an
/// open-addressing hash table of ids (linear probing, [`EMPTY`] for a free slot) keyed by
/// [`term_hash`], whose values never depend on the process, so the table can be stored.
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct TermTable {
    pub(crate) bytes: Vec<u8>,
    /// `ends[t]` is where term `t` ends in `bytes` (it starts where `t - 1` ends).
    pub(crate) ends: Vec<u32>,
    /// A power-of-two number of slots, at least twice the number of terms.
    pub(crate) slots: Vec<u32>,
}

/// A free slot of [`TermTable::slots`].
pub(crate) const EMPTY: u32 = u32::MAX;

/// FNV-1a 64 of a term: fixed across processes and platforms (a stored table depends on
/// it), and quick on the short strings terms are.
pub(crate) fn term_hash(term: &[u8]) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for &b in term {
        h ^= u64::from(b);
        h = h.wrapping_mul(0x0100_0000_01b3);
    }
    h
}

impl TermTable {
    /// The id of `term`, added as the next id when it is new. The slots are kept at the
    /// size [`TermTable::slots`] asks for the current number of terms (rebuilt in id order
    /// when that grows), so a table built term by term is the one a table of all its terms
    /// at once would be, slot for slot: the stored index does not depend on how it was built.
    fn intern(&mut self, term: &str) -> u32 {
        let hash = term_hash(term.as_bytes()) as usize;
        let mut i = 0;
        if !self.slots.is_empty() {
            let mask = self.slots.len() - 1;
            i = hash & mask;
            loop {
                match self.slots[i] {
                    EMPTY => break,
                    t if self.term(t) == term.as_bytes() => return t,
                    _ => i = (i + 1) & mask,
                }
            }
        }
        let id = self.ends.len() as u32;
        self.bytes.extend_from_slice(term.as_bytes());
        self.ends.push(self.bytes.len() as u32);
        let wanted = (self.ends.len() * 2).next_power_of_two().max(2);
        if wanted == self.slots.len() {
            self.slots[i] = id;
        } else {
            self.slots.clear();
            self.slots.resize(wanted, EMPTY);
            for t in 0..=id {
                self.place(t);
            }
        }
        id
    }

    /// The table of the terms whose bytes are `bytes`, term `t` ending at `ends[t]`: the
    /// slots are made again, as [`TermTable::intern`] leaves them, rather than stored. A
    /// term listed twice is refused.
    pub(crate) fn from_terms(bytes: Vec<u8>, ends: Vec<u32>) -> Result<Self, &'static str> {
        let ascending = ends.windows(2).all(|w| w[0] <= w[1]);
        if !ascending || ends.last().map_or(0, |&e| e as usize) != bytes.len() {
            return Err("term ends");
        }
        let size = if ends.is_empty() {
            0
        } else {
            (ends.len() * 2).next_power_of_two()
        };
        let mut table = Self {
            bytes,
            ends,
            slots: vec![EMPTY; size],
        };
        let mask = size.wrapping_sub(1);
        for t in 0..table.ends.len() as u32 {
            let mut i = term_hash(table.term(t)) as usize & mask;
            while table.slots[i] != EMPTY {
                if table.term(table.slots[i]) == table.term(t) {
                    return Err("a term listed twice");
                }
                i = (i + 1) & mask;
            }
            table.slots[i] = t;
        }
        Ok(table)
    }

    /// Puts term `t` in the first free slot from its hash.
    fn place(&mut self, t: u32) {
        let mask = self.slots.len() - 1;
        let mut i = term_hash(self.term(t)) as usize & mask;
        while self.slots[i] != EMPTY {
            i = (i + 1) & mask;
        }
        self.slots[i] = t;
    }

    /// Number of terms.
    pub(crate) fn len(&self) -> usize {
        self.ends.len()
    }

    /// The bytes of term `t`.
    pub(crate) fn term(&self, t: u32) -> &[u8] {
        let end = self.ends[t as usize] as usize;
        let start = if t == 0 {
            0
        } else {
            self.ends[t as usize - 1] as usize
        };
        &self.bytes[start..end]
    }

    /// The id of `term`.
    pub(crate) fn get(&self, term: &str) -> Option<u32> {
        if self.ends.is_empty() {
            return None;
        }
        let mask = self.slots.len() - 1;
        let mut i = term_hash(term.as_bytes()) as usize & mask;
        loop {
            match self.slots[i] {
                EMPTY => return None,
                t if self.term(t) == term.as_bytes() => return Some(t),
                _ => i = (i + 1) & mask,
            }
        }
    }
}

/// Builds a [`Bm25Index`] one unit at a time: each unit's terms go straight into a
/// compact record of the unit, so no unit's terms outlive it, and each distinct term is
/// stored once, in the term table the index keeps (postings hold integer ids).
///
/// The postings are laid out by term only at the end, so until then they are kept by unit:
/// each unit's distinct term ids ascending, as gaps, each with its frequency, all as
/// variable-length integers in blocks of bytes. That takes under 2 bytes a posting, where a
/// growing list of (unit, frequency) pairs per term took 8 and more; the build's peak is
/// this record plus the finished arrays (8 bytes a posting), which [`Bm25Builder::finish`]
/// fills in place from it.
#[derive(Debug, Default)]
pub(crate) struct Bm25Builder {
    terms: TermTable,
    /// Per unit: its number of distinct terms, then per term (ascending) the gap from the
    /// previous term's id, shifted left by one with the low bit set when the term occurs
    /// once, and else its frequency, each a LEB128 varint. A unit's record is never split
    /// across blocks.
    by_unit: Vec<Vec<u8>>,
    lens: Vec<u32>,
    /// Per term id: its counts so far.
    counts: Vec<TermCounts>,
    /// The unit being added's distinct term ids (reused from unit to unit).
    ids: Vec<u32>,
    /// The unit being added's record, before it goes into a block.
    record: Vec<u8>,
}

/// What the builder counts for one term.
#[derive(Debug, Clone, Copy, Default)]
struct TermCounts {
    /// The last unit that had the term, plus one (0: none yet).
    seen: u32,
    /// Its frequency in that unit.
    tf: u32,
    /// Number of units that have it.
    df: u32,
}

/// Most bytes of a [`Bm25Builder::by_unit`] block. Blocks start small and double up to
/// this size, so a small index takes little and a large one wastes at most one block's
/// tail, where one growing array would be up to half empty.
const BLOCK: usize = 1 << 20;
/// Bytes of the first block.
const FIRST_BLOCK: usize = 4 << 10;

/// Appends `v` as a LEB128 varint (7 bits a byte, low first).
fn put_varint(out: &mut Vec<u8>, mut v: u32) {
    while v >= 0x80 {
        out.push(v as u8 | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
}

/// Reads a varint [`put_varint`] wrote at `*at`, moving `*at` past it.
fn get_varint(bytes: &[u8], at: &mut usize) -> u32 {
    let mut v = 0u32;
    let mut shift = 0;
    loop {
        let b = bytes[*at];
        *at += 1;
        v |= u32::from(b & 0x7f) << shift;
        if b < 0x80 {
            return v;
        }
        shift += 7;
    }
}

/// Calls `each(unit, term, tf)` for every posting of a [`Bm25Builder::by_unit`] record, in
/// unit order and, within a unit, term order.
fn for_each_posting(by_unit: &[Vec<u8>], mut each: impl FnMut(u32, u32, u32)) {
    let mut unit = 0;
    for block in by_unit {
        let mut at = 0;
        while at < block.len() {
            let distinct = get_varint(block, &mut at);
            let mut term = 0;
            for _ in 0..distinct {
                let gap = get_varint(block, &mut at);
                term += gap >> 1;
                let tf = if gap & 1 == 1 {
                    1
                } else {
                    get_varint(block, &mut at)
                };
                each(unit, term, tf);
            }
            unit += 1;
        }
    }
}

impl Bm25Builder {
    /// Adds the next unit (units are numbered in the order added).
    pub(crate) fn add<S: AsRef<str>>(&mut self, terms: impl IntoIterator<Item = S>) {
        self.add_marked(terms, std::iter::empty::<&str>());
    }

    /// [`Bm25Builder::add`] with `marks` too: terms the unit holds that are not part of
    /// its text (they leave its length, and so its other terms' weights, as they were).
    pub(crate) fn add_marked<S: AsRef<str>, M: AsRef<str>>(
        &mut self,
        terms: impl IntoIterator<Item = S>,
        marks: impl IntoIterator<Item = M>,
    ) {
        let seen = self.lens.len() as u32 + 1;
        let mut len = 0;
        self.ids.clear();
        for term in terms {
            len += 1;
            self.count(term.as_ref(), seen);
        }
        for mark in marks {
            self.count(mark.as_ref(), seen);
        }
        self.lens.push(len);
        self.ids.sort_unstable();
        let record = &mut self.record;
        record.clear();
        put_varint(record, self.ids.len() as u32);
        let mut previous = 0;
        for &id in &self.ids {
            // Most terms occur once in a unit: that is the gap's low bit, and only a
            // frequency above one follows it.
            let tf = self.counts[id as usize].tf;
            put_varint(record, (id - previous) << 1 | u32::from(tf == 1));
            if tf > 1 {
                put_varint(record, tf);
            }
            previous = id;
        }
        match self.by_unit.last_mut() {
            Some(block) if block.capacity() - block.len() >= record.len() => {
                block.extend_from_slice(record)
            }
            last => {
                let size = last.map_or(FIRST_BLOCK, |b| (2 * b.capacity()).min(BLOCK));
                let mut block = Vec::with_capacity(size.max(record.len()));
                block.extend_from_slice(record);
                self.by_unit.push(block);
            }
        }
    }

    /// Counts one occurrence of `term` in the unit being added (`seen`: its number + 1).
    fn count(&mut self, term: &str, seen: u32) {
        let id = self.terms.intern(term);
        if id as usize == self.counts.len() {
            self.counts.push(TermCounts::default());
        }
        let counts = &mut self.counts[id as usize];
        if counts.seen != seen {
            *counts = TermCounts {
                seen,
                tf: 0,
                df: counts.df + 1,
            };
            self.ids.push(id);
        }
        counts.tf += 1;
    }

    /// The finished index.
    pub(crate) fn finish(self, params: Bm25Params) -> Bm25Index {
        let Self {
            mut terms,
            by_unit,
            lens,
            counts,
            ids,
            record,
        } = self;
        drop((ids, record));
        terms.bytes.shrink_to_fit();
        terms.ends.shrink_to_fit();
        let n_units = lens.len();
        let avgdl = average_length(&lens);
        // Where each term's postings start (CSR offsets), from the document frequencies.
        let n_terms = terms.len();
        let mut offsets = Vec::with_capacity(n_terms + 1);
        offsets.push(0u32);
        for c in &counts {
            offsets.push(offsets[offsets.len() - 1] + c.df);
        }
        let idfs: Vec<f32> = counts.iter().map(|c| idf(n_units, c.df as usize)).collect();
        drop(counts);
        let postings = offsets[n_terms] as usize;
        let mut unit = vec![0u32; postings];
        let mut weight = vec![0f32; postings];
        // Where each term's next posting goes: units arrive in order, so each term's
        // postings come out ascending.
        let mut next: Vec<u32> = offsets[..n_terms].to_vec();
        let mut norm = 0.0;
        let mut current = u32::MAX;
        for_each_posting(&by_unit, |u, t, tf| {
            if u != current {
                current = u;
                norm = params.norm(lens[u as usize], avgdl);
            }
            let at = &mut next[t as usize];
            unit[*at as usize] = u;
            weight[*at as usize] = params.weight(idfs[t as usize], tf, norm);
            *at += 1;
        });
        Bm25Index {
            terms,
            postings: Postings::Built {
                offsets,
                unit,
                weight,
            },
            lens,
            params,
            n_units,
            avgdl,
        }
    }
}

impl Bm25Index {
    /// An index from its persisted arrays (a prebuilt file's), every invariant checked
    /// first: term ends ascending within the bytes, a slot table that holds each term once
    /// with room to spare, one offset per term and one more, units in range and ascending
    /// in each list. So no file, however damaged or hostile, yields an index whose lookups
    /// could panic or loop. The error names the array that broke its invariant.
    pub(crate) fn from_parts(
        terms: TermTable,
        offsets: Vec<u32>,
        unit: Vec<u32>,
        weight: Vec<f32>,
        lens: Vec<u32>,
        params: Bm25Params,
    ) -> Result<Self, &'static str> {
        check_terms(&terms)?;
        let n_units = lens.len();
        check_postings(&offsets, &unit, &weight, terms.len(), n_units)?;
        Ok(Self {
            terms,
            postings: Postings::Built {
                offsets,
                unit,
                weight,
            },
            avgdl: average_length(&lens),
            lens,
            params,
            n_units,
        })
    }

    /// An index whose postings stay packed ([`PackedPostings`], one entry per term), its
    /// term table checked as [`Self::from_parts`] checks it.
    pub(crate) fn from_packed(
        terms: TermTable,
        postings: PackedPostings,
        lens: Vec<u32>,
        params: Bm25Params,
    ) -> Result<Self, &'static str> {
        check_terms(&terms)?;
        if postings.df.len() != terms.len() || postings.starts.len() != terms.len() + 1 {
            return Err("posting offsets");
        }
        Ok(Self {
            terms,
            postings: Postings::Packed(postings),
            avgdl: average_length(&lens),
            n_units: lens.len(),
            lens,
            params,
        })
    }

    /// Builds the index from each unit's terms (in unit order).
    pub fn build<I, T>(units: I, params: Bm25Params) -> Self
    where
        I: IntoIterator<Item = T>,
        T: IntoIterator<Item = String>,
    {
        let mut builder = Bm25Builder::default();
        for terms in units {
            builder.add(terms);
        }
        builder.finish(params)
    }

    /// Number of indexed units.
    pub fn len(&self) -> usize {
        self.n_units
    }

    /// True when nothing is indexed.
    pub fn is_empty(&self) -> bool {
        self.n_units == 0
    }

    /// Number of distinct terms.
    pub fn vocabulary_size(&self) -> usize {
        self.terms.len()
    }

    /// Average unit length in terms.
    pub fn avgdl(&self) -> f32 {
        self.avgdl
    }

    /// Number of units containing `term`.
    pub fn doc_freq(&self, term: &str) -> usize {
        self.terms.get(term).map_or(0, |t| self.doc_freq_of(t))
    }

    /// The id of `term`, if any unit contains it.
    pub fn term_id(&self, term: &str) -> Option<u32> {
        self.terms.get(term)
    }

    /// Number of postings held packed and not decoded yet: what decoding every one would
    /// add (8 bytes each).
    pub fn undecoded_postings(&self) -> usize {
        match &self.postings {
            Postings::Built { .. } => 0,
            Postings::Packed(p) => (p.df.iter().zip(&p.decoded))
                .filter(|(_, d)| d.get().is_none())
                .map(|(&df, _)| df as usize)
                .sum(),
        }
    }

    /// Number of units containing the term with id `t`.
    pub fn doc_freq_of(&self, t: u32) -> usize {
        match &self.postings {
            Postings::Built { offsets, .. } => {
                (offsets[t as usize + 1] - offsets[t as usize]) as usize
            }
            Postings::Packed(p) => p.df[t as usize] as usize,
        }
    }

    /// Whether `unit` contains the term with id `t` (a bisection of its postings).
    pub fn contains(&self, t: u32, unit: u32) -> bool {
        self.postings(t).0.binary_search(&unit).is_ok()
    }

    /// Number of units containing every one of the terms with ids `terms` (all units for
    /// none). Walks the shortest posting list and bisects the others.
    pub fn co_occurrence(&self, terms: &[u32]) -> usize {
        let Some(&rarest) = terms.iter().min_by_key(|&&t| self.doc_freq_of(t)) else {
            return self.n_units;
        };
        self.postings(rarest)
            .0
            .iter()
            .filter(|&&u| terms.iter().all(|&t| t == rarest || self.contains(t, u)))
            .count()
    }

    /// The units holding term `t` (ascending) and their BM25 term weights.
    pub(crate) fn postings(&self, t: u32) -> (&[u32], &[f32]) {
        match &self.postings {
            Postings::Built {
                offsets,
                unit,
                weight,
            } => {
                let (a, b) = (
                    offsets[t as usize] as usize,
                    offsets[t as usize + 1] as usize,
                );
                (&unit[a..b], &weight[a..b])
            }
            Postings::Packed(p) => {
                let decoded = p.decoded[t as usize].get_or_init(|| p.decode(t as usize, self));
                (&decoded.0, &decoded.1)
            }
        }
    }

    /// Calls `f` with term `t`'s units, ascending, without keeping a packed term's postings
    /// decoded: for one pass over many terms (every title's words), whose postings a
    /// question may never need.
    pub(crate) fn for_each_unit(&self, t: u32, mut f: impl FnMut(u32)) {
        match &self.postings {
            Postings::Packed(p) if p.decoded[t as usize].get().is_none() => {
                p.decode(t as usize, self).0.iter().for_each(|&u| f(u));
            }
            _ => self.postings(t).0.iter().for_each(|&u| f(u)),
        }
    }

    /// Scores every unit matching at least one query term; returns `(unit, score)` for
    /// units with a positive score, in unit order. Unknown terms are ignored.
    pub fn score<'a>(&self, query: impl IntoIterator<Item = (&'a str, f32)>) -> Vec<(u32, f32)> {
        self.score_into(
            query
                .into_iter()
                .filter_map(|(term, w)| self.terms.get(term).map(|t| (t, w))),
            &mut ScoreScratch::default(),
        )
    }

    /// [`Bm25Index::score`] for query terms given by id (as [`Bm25Index::term_id`] gives
    /// them, when the caller has looked them up already), with the working buffers in
    /// `scratch`, which a caller scoring many queries keeps, so the accumulator is not
    /// allocated (and freed) per query.
    pub(crate) fn score_into(
        &self,
        query: impl IntoIterator<Item = (u32, f32)>,
        scratch: &mut ScoreScratch,
    ) -> Vec<(u32, f32)> {
        let ScoreScratch {
            lists,
            acc,
            touched,
        } = scratch;
        lists.clear();
        lists.extend(query);
        // `acc` is all zeros between queries (reset below, as cheaply as it was filled).
        if acc.len() != self.n_units {
            acc.clear();
            acc.resize(self.n_units, 0.0);
        }
        touched.clear();
        let total: usize = lists.iter().map(|&(t, _)| self.doc_freq_of(t)).sum();
        // Two strategies for listing the matched units in order: when the postings cover
        // a good part of the corpus, one pass over the accumulator beats tracking and
        // sorting the touched units; when they are few, tracking avoids the full pass.
        let dense = total * 16 > self.n_units;
        for &(t, w) in lists.iter() {
            let (units, weights) = self.postings(t);
            if dense {
                for (&u, &pw) in units.iter().zip(weights) {
                    acc[u as usize] += w * pw;
                }
            } else {
                for (&u, &pw) in units.iter().zip(weights) {
                    let slot = &mut acc[u as usize];
                    if *slot == 0.0 {
                        touched.push(u);
                    }
                    *slot += w * pw;
                }
            }
        }
        let positive = |u: u32| Some((u, acc[u as usize])).filter(|&(_, s)| s > 0.0);
        let out = if dense {
            let mut out = Vec::with_capacity(total.min(self.n_units));
            out.extend((0..self.n_units as u32).filter_map(positive));
            out
        } else {
            touched.sort_unstable();
            touched.iter().copied().filter_map(positive).collect()
        };
        if dense {
            acc.fill(0.0);
        } else {
            // The units the postings reached, as many as were added to.
            for &(t, _) in lists.iter() {
                for &u in self.postings(t).0 {
                    acc[u as usize] = 0.0;
                }
            }
        }
        out
    }
}

/// The working buffers of [`Bm25Index::score_into`].
#[derive(Debug, Default)]
pub(crate) struct ScoreScratch {
    /// The query's (term id, weight) pairs.
    lists: Vec<(u32, f32)>,
    /// Each unit's score so far.
    acc: Vec<f32>,
    /// Units scored, when they are few.
    touched: Vec<u32>,
}

/// Keeps the `k` best `(id, score)` pairs: score descending, ties by id ascending (so
/// equal scores rank in document order, deterministically). Scores must not be negative.
pub(crate) fn top_k(scored: Vec<(u32, f32)>, k: usize) -> Vec<(u32, f32)> {
    if k == 0 {
        return Vec::new();
    }
    // For non-negative floats the IEEE bit pattern orders like the value, so one u64 key
    // (inverted score bits, then id) sorts best-first with plain integer compares, which
    // is several times cheaper than comparing (f32, u32) pairs over thousands of hits.
    let mut keys: Vec<u64> = scored
        .into_iter()
        .map(|(id, s)| (u64::from(!s.max(0.0).to_bits()) << 32) | u64::from(id))
        .collect();
    if keys.len() > k {
        keys.select_nth_unstable(k - 1);
        keys.truncate(k);
    }
    keys.sort_unstable();
    keys.into_iter()
        .map(|key| (key as u32, f32::from_bits(!((key >> 32) as u32))))
        .collect()
}

/// Term ends ascending within the bytes; a power-of-two slot table with room to spare
/// (else a miss would probe forever) holding each id once.
fn check_terms(t: &TermTable) -> Result<(), &'static str> {
    let ascending = t.ends.windows(2).all(|w| w[0] <= w[1]);
    if !ascending || t.ends.last().is_some_and(|&e| e as usize != t.bytes.len()) {
        return Err("term ends");
    }
    // An index of no terms has no table at all.
    let empty = t.ends.is_empty() && t.slots.is_empty();
    if !empty && (!t.slots.len().is_power_of_two() || t.slots.len() <= t.ends.len()) {
        return Err("term slot count");
    }
    let mut seen = vec![false; t.ends.len()];
    for &s in &t.slots {
        if s == EMPTY {
            continue;
        }
        match seen.get_mut(s as usize) {
            Some(slot @ false) => *slot = true,
            _ => return Err("term slots"),
        }
    }
    if seen.iter().any(|&s| !s) {
        return Err("a term missing from its slots");
    }
    Ok(())
}

/// One offset per term and one more, ascending from 0 to the number of postings; units
/// within range and ascending in each list.
fn check_postings(
    offsets: &[u32],
    unit: &[u32],
    weight: &[f32],
    n_terms: usize,
    n_units: usize,
) -> Result<(), &'static str> {
    if offsets.len() != n_terms + 1
        || offsets.first() != Some(&0)
        || offsets.last().map(|&o| o as usize) != Some(unit.len())
        || unit.len() != weight.len()
    {
        return Err("posting offsets");
    }
    // One pass: an offset out of order is caught by the slice it would bound failing
    // (never by slicing first and checking later).
    for w in offsets.windows(2) {
        let list = (w[0] <= w[1])
            .then(|| unit.get(w[0] as usize..w[1] as usize))
            .flatten()
            .ok_or("posting offsets")?;
        let sorted = list.windows(2).all(|p| p[0] < p[1]);
        if !sorted || list.last().is_some_and(|&u| u as usize >= n_units) {
            return Err("posting units");
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    macro_rules! assert_near {
        ($a:expr, $b:expr) => {{
            let (a, b) = ($a as f64, $b as f64);
            assert!((a - b).abs() < 1e-4, "{a} != {b}");
        }};
    }

    fn toks(s: &str) -> Vec<String> {
        s.split_whitespace().map(str::to_owned).collect()
    }

    /// Three units: lengths 3, 2, 1 (avgdl 2).
    fn tiny() -> Bm25Index {
        Bm25Index::build(
            [toks("face face model"), toks("face train"), toks("llava")],
            Bm25Params::default(),
        )
    }

    #[test]
    fn idf_matches_the_lucene_formula_by_hand() {
        // N = 3, df = 2: ln(1 + 1.5/2.5) = ln(1.6)
        assert_near!(idf(3, 2), 0.470_003_6);
        // N = 3, df = 1: ln(1 + 2.5/1.5) = ln(2.666..)
        assert_near!(idf(3, 1), 0.980_829_3);
        // A term in every unit still scores above zero.
        assert!(idf(3, 3) > 0.0);
    }

    #[test]
    fn scores_match_hand_computed_bm25() {
        let idx = tiny();
        assert_near!(idx.avgdl(), 2.0);
        let s = idx.score([("face", 1.0)]);
        // unit 0: tf 2, len 3: norm = 1.2·(0.25 + 0.75·1.5) = 1.65; 2·2.2/(2+1.65) = 1.205479
        // unit 1: tf 1, len 2: norm = 1.2; 2.2/2.2 = 1
        assert_eq!(s.len(), 2);
        assert_near!(s[0].1, 0.470_003_6 * 1.205_479_5);
        assert_near!(s[1].1, 0.470_003_6);
    }

    #[test]
    fn query_weights_scale_and_sum_term_scores() {
        let idx = tiny();
        let s = idx.score([("face", 0.5), ("train", 2.0), ("absent", 9.0)]);
        // unit 1: 0.5·idf(face)·1 + 2·idf(train)·1
        assert_near!(s[1].1, 0.5 * 0.470_003_6 + 2.0 * 0.980_829_3);
    }

    #[test]
    fn co_occurrence_counts_units_holding_every_term() {
        let idx = tiny();
        let id = |t: &str| idx.term_id(t).unwrap();
        assert_eq!(idx.co_occurrence(&[id("face")]), 2);
        assert_eq!(idx.co_occurrence(&[id("face"), id("model")]), 1);
        assert_eq!(idx.co_occurrence(&[id("model"), id("train")]), 0);
        assert!(idx.contains(id("train"), 1) && !idx.contains(id("train"), 0));
    }

    #[test]
    fn top_k_keeps_the_best_of_many_in_order() {
        let scored: Vec<(u32, f32)> = (0..1000).map(|i| (i, ((i * 7919) % 1000) as f32)).collect();
        let mut expected = scored.clone();
        expected.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
        expected.truncate(10);
        assert_eq!(top_k(scored, 10), expected);
    }

    #[test]
    fn sparse_and_dense_scoring_agree() {
        // 40 units; "rare" is in one (sparse path), "common" in all (dense path).
        let units: Vec<Vec<String>> = (0..40)
            .map(|i| {
                if i == 7 {
                    toks("rare common")
                } else {
                    toks("common filler")
                }
            })
            .collect();
        let idx = Bm25Index::build(units, Bm25Params::default());
        let rare = idx.score([("rare", 1.0)]);
        assert_eq!(rare.len(), 1);
        let both = idx.score([("rare", 1.0), ("common", 1.0)]);
        assert_eq!(both.len(), 40);
        assert!(both.windows(2).all(|w| w[0].0 < w[1].0), "unit order");
        assert_eq!(both[7].1, rare[0].1 + idx.score([("common", 1.0)])[7].1);
    }

    #[test]
    fn top_k_orders_by_score_then_unit() {
        let ranked = top_k(vec![(3, 1.0), (1, 2.0), (0, 1.0), (2, 0.5)], 3);
        assert_eq!(ranked, vec![(1, 2.0), (0, 1.0), (3, 1.0)]);
        assert!(top_k(vec![(0, 1.0)], 0).is_empty());
    }

    #[test]
    fn a_table_interned_term_by_term_is_the_table_of_all_its_terms_at_once() {
        let words: Vec<String> = (0..1000).map(|i| format!("w{}", i * 7919 % 1009)).collect();
        let mut table = TermTable::default();
        let ids: Vec<u32> = words.iter().map(|w| table.intern(w)).collect();
        // Repeats get their first id; new terms the next one.
        for (w, &id) in words.iter().zip(&ids) {
            assert_eq!(table.get(w), Some(id));
            assert_eq!(table.term(id), w.as_bytes());
        }
        // What a table of the same terms built at once holds: each placed in id order by
        // linear probing into twice as many slots, rounded up to a power of two.
        let n = table.len();
        let mut slots = vec![EMPTY; (2 * n).next_power_of_two()];
        for t in 0..n as u32 {
            let mut i = term_hash(table.term(t)) as usize & (slots.len() - 1);
            while slots[i] != EMPTY {
                i = (i + 1) & (slots.len() - 1);
            }
            slots[i] = t;
        }
        assert_eq!(table.slots, slots);
    }

    #[test]
    fn varints_round_trip_at_every_width() {
        let values = [
            0,
            1,
            0x7f,
            0x80,
            0x3fff,
            0x4000,
            0x1f_ffff,
            0x20_0000,
            u32::MAX,
        ];
        let mut bytes = Vec::new();
        for v in values {
            put_varint(&mut bytes, v);
        }
        let mut at = 0;
        let read: Vec<u32> = values.iter().map(|_| get_varint(&bytes, &mut at)).collect();
        assert_eq!(read, values);
        assert_eq!(at, bytes.len());
    }

    #[test]
    fn units_without_terms_keep_their_numbers() {
        let idx = Bm25Index::build(
            [toks(""), toks("b a b"), toks(""), toks("a")],
            Bm25Params::default(),
        );
        assert_eq!(idx.len(), 4);
        let a = idx.term_id("a").unwrap();
        let b = idx.term_id("b").unwrap();
        assert_eq!(idx.postings(a).0, &[1, 3]);
        assert_eq!(idx.postings(b).0, &[1]);
        // Ids in order of first appearance.
        assert_eq!((b, a), (0, 1));
    }

    #[test]
    fn empty_index_scores_nothing() {
        let idx = Bm25Index::build(Vec::<Vec<String>>::new(), Bm25Params::default());
        assert!(idx.is_empty());
        assert!(idx.score([("x", 1.0)]).is_empty());
    }
}
