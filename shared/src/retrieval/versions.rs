//! Language versions: on a bilingual site, which Chinese page and which English page are
//! the same page in two languages, so a hit can bring its other version next to it.
//!
//! A question only ever matches one version well: its own language's words match
//! directly, the other language's only through translation, which finds some of the
//! words. An English question about a Chinese-and-English site would rank the English
//! page first and then other English pages that share a word or two, pushing the Chinese
//! version of the answer far down. Pairing the versions once, when the index is built,
//! lets ranking put the other version right after its page, as a reader of either
//! language expects.
//!
//! Pairs are found from the index alone (no text, so a prebuilt index gets the same
//! pairs): a document is on the Chinese side when most of its indexed terms are Han
//! bigrams. A Chinese page's bigrams that are dictionary words are translated (every
//! sense the site contains, single English words), its Latin terms and numbers kept as
//! they are, giving its term set Z; E is an English page's terms. Terms on more than
//! [`MAX_COMMON_SHARE`] of the English pages are left out of both. The two are compared by
//! an IDF-weighted cosine:
//!
//! `sim(z, e) = Σ_{t ∈ Z ∩ E} idf(t) / sqrt((Σ_{t ∈ Z} idf(t) + U) · Σ_{t ∈ E} idf(t))`
//!
//! where U charges each word of the Chinese page that no English page says the IDF of an
//! absent term, so a short page sharing one word with an English page does not look like
//! its translation.
//!
//! Two pages pair when they share at least [`MIN_SHARED_TERMS`] terms, each is the
//! other's most similar page on the other side (mutual best match), the similarity reaches [`MIN_SIMILARITY`] and it is at least
//! [`MIN_MARGIN`] times the Chinese page's next best: a page with no translation on the
//! site, or with two English pages it matches about as well, pairs with nothing.

use super::bm25::{idf, Bm25Index};
use super::lexicon::Lexicon;
use super::tokenize::is_han;

/// The partner of a document with no version in the other language.
pub const NONE: u32 = u32::MAX;

/// The cosine similarity two pages need to be taken for versions of each other, on top of
/// being each other's best match. Measured on parallel Wikipedia paragraphs (Chinese and
/// English, 120 pairs, mixed with unrelated paragraphs of other articles, of the same
/// articles, and with English science abstracts): translations score 0.18–0.73; unrelated
/// pages that are each other's best match 0.07–0.33, the high ones paragraphs of one
/// article sharing its names and numbers, which [`MIN_MARGIN`] tells apart.
pub(crate) const MIN_SIMILARITY: f32 = 0.12;

/// How many times the Chinese page's next most similar English page a pair must score.
/// In the same measurement a translation scored 1.8–9.7 times the runner-up (median
/// 3.6), an unrelated best match 1.0–3.1 times (median 1.2): with both rules, 118 of 120
/// translations paired and 2 of 158 unrelated best matches did (measured without
/// [`MIN_SHARED_TERMS`], which can only remove pairs).
pub(crate) const MIN_MARGIN: f32 = 2.0;

/// The fewest terms a Chinese page and an English page must share to be compared at all:
/// on a small site one shared word can be a large share of a short page, and a
/// translation shares most of its words.
pub(crate) const MIN_SHARED_TERMS: u32 = 3;

/// English terms held by more than this share of the English pages are skipped when
/// comparing: they say little about which page is which, and their long postings would
/// make pairing cost grow with the square of the site's size.
pub(crate) const MAX_COMMON_SHARE: f32 = 0.2;

/// For each document, its version in the other language, or [`NONE`]; and whether each
/// document is on the Chinese side (worked out on the way, and kept for ordering a pair by
/// the question's language). `units[u]` is the (document, passage) of index unit `u`,
/// ascending.
pub(crate) fn pair(
    index: &Bm25Index,
    units: &[(u32, u32)],
    n_docs: usize,
    lexicon: &Lexicon,
) -> (Vec<u32>, Vec<bool>) {
    let n_terms = index.vocabulary_size();
    let han_term = han_terms(index);
    let chinese = chinese_docs(index, units, n_docs, &han_term);
    let n_zh = chinese.iter().filter(|&&c| c).count();
    let n_en = n_docs - n_zh;
    if n_zh == 0 || n_en == 0 {
        return (vec![NONE; n_docs], chinese);
    }
    let n_units = index.len();
    let weight: Vec<f32> = (0..n_terms as u32)
        .map(|t| idf(n_units, index.doc_freq_of(t)))
        .collect();
    // What a word the English side never uses weighs: as specific as a word gets.
    let absent = idf(n_units, 0);
    let (zh_terms, en_df) = split_terms(index, units, n_docs, &han_term, &chinese);
    let max_df = ((n_en as f32 * MAX_COMMON_SHARE).ceil() as u32).max(2);
    let usable = |t: u32| en_df[t as usize] > 0 && en_df[t as usize] <= max_df;
    // Each English page's norm: the weight of its usable terms.
    let mut en_norm = vec![0f32; n_docs];
    for t in (0..n_terms as u32).filter(|&t| usable(t)) {
        let mut last = NONE;
        for &u in index.postings(t).0 {
            let d = units[u as usize].0;
            if d != last && !chinese[d as usize] {
                en_norm[d as usize] += weight[t as usize];
            }
            last = d;
        }
    }
    // A Han bigram's translations into the index's terms, computed once per bigram.
    let mut translated: Vec<Option<Translated>> = vec![None; n_terms];
    let mut best_of_en: Vec<(f32, u32)> = vec![(0.0, NONE); n_docs];
    let mut best_of_zh: Vec<(f32, u32)> = vec![(0.0, NONE); n_docs];
    // The runner-up similarity of each Chinese page.
    let mut second = vec![0f32; n_docs];
    let mut acc = vec![0f32; n_docs];
    let mut shared_terms = vec![0u32; n_docs];
    let mut touched: Vec<u32> = Vec::new();
    let mut query: Vec<u32> = Vec::new();
    for z in (0..n_docs).filter(|&d| chinese[d]) {
        // The page's usable terms, and the weight of its words the English side never says.
        query.clear();
        let mut unsaid = 0.0;
        for &t in &zh_terms[z] {
            let (ids, any_terms) = if han_term[t as usize] {
                let tr = translated[t as usize].get_or_insert_with(|| translate(index, lexicon, t));
                (tr.ids.as_slice(), tr.any_terms)
            } else {
                (std::slice::from_ref(&t), true)
            };
            let before = query.len();
            query.extend(ids.iter().copied().filter(|&i| usable(i)));
            if query.len() == before
                && any_terms
                && !ids.iter().any(|&i| en_df[i as usize] > max_df)
            {
                unsaid += absent;
            }
        }
        query.sort_unstable();
        query.dedup();
        let norm = query.iter().map(|&t| weight[t as usize]).sum::<f32>() + unsaid;
        if norm <= 0.0 {
            continue;
        }
        for &t in &query {
            let mut last = NONE;
            for &u in index.postings(t).0 {
                let e = units[u as usize].0;
                if e == last || chinese[e as usize] {
                    continue;
                }
                last = e;
                if acc[e as usize] == 0.0 {
                    touched.push(e);
                }
                acc[e as usize] += weight[t as usize];
                shared_terms[e as usize] += 1;
            }
        }
        for e in touched.drain(..) {
            let shared = std::mem::take(&mut acc[e as usize]);
            if std::mem::take(&mut shared_terms[e as usize]) < MIN_SHARED_TERMS {
                continue;
            }
            let sim = shared / (norm * en_norm[e as usize]).sqrt();
            let better = |(s, d): (f32, u32), by: u32| sim > s || (sim == s && by < d);
            if better(best_of_zh[z], e) {
                second[z] = best_of_zh[z].0;
                best_of_zh[z] = (sim, e);
            } else if sim > second[z] {
                second[z] = sim;
            }
            if better(best_of_en[e as usize], z as u32) {
                best_of_en[e as usize] = (sim, z as u32);
            }
        }
    }
    (mutual_pairs(&best_of_zh, &best_of_en, &second), chinese)
}

/// Whether each document is on the Chinese side of the site (see [`chinese_docs`]), for an
/// index whose pairs were read back rather than made.
pub(crate) fn chinese_sides(index: &Bm25Index, units: &[(u32, u32)], n_docs: usize) -> Vec<bool> {
    chinese_docs(index, units, n_docs, &han_terms(index))
}

/// Whether each term of the index is a Han term (a bigram or character), by its first
/// character.
fn han_terms(index: &Bm25Index) -> Vec<bool> {
    (0..index.vocabulary_size() as u32)
        .map(|t| {
            std::str::from_utf8(index.terms.term(t))
                .ok()
                .and_then(|s| s.chars().next())
                .is_some_and(is_han)
        })
        .collect()
}

/// Each document's side: Chinese when most of its (term, passage) postings are Han terms.
fn chinese_docs(
    index: &Bm25Index,
    units: &[(u32, u32)],
    n_docs: usize,
    han_term: &[bool],
) -> Vec<bool> {
    let mut han = vec![0u32; n_docs];
    let mut other = vec![0u32; n_docs];
    for t in 0..index.vocabulary_size() as u32 {
        for &u in index.postings(t).0 {
            let d = units[u as usize].0 as usize;
            if han_term[t as usize] {
                han[d] += 1;
            } else {
                other[d] += 1;
            }
        }
    }
    (0..n_docs).map(|d| han[d] > other[d]).collect()
}

/// The Chinese pages' terms, one list per page (distinct, ascending), and the English-side
/// document frequency of each non-Han term.
fn split_terms(
    index: &Bm25Index,
    units: &[(u32, u32)],
    n_docs: usize,
    han_term: &[bool],
    chinese: &[bool],
) -> (Vec<Vec<u32>>, Vec<u32>) {
    let n_terms = index.vocabulary_size();
    let mut zh_terms: Vec<Vec<u32>> = vec![Vec::new(); n_docs];
    let mut en_df = vec![0u32; n_terms];
    for t in 0..n_terms as u32 {
        let mut last = NONE;
        for &u in index.postings(t).0 {
            let d = units[u as usize].0;
            if d == last {
                continue; // Units of one document are contiguous: count it once.
            }
            last = d;
            if chinese[d as usize] {
                zh_terms[d as usize].push(t);
            } else if !han_term[t as usize] {
                en_df[t as usize] += 1;
            }
        }
    }
    (zh_terms, en_df)
}

/// The pairs: a Chinese page and its best English match, when each is the other's best
/// match and the similarity clears [`MIN_SIMILARITY`] and [`MIN_MARGIN`] times the
/// Chinese page's runner-up (`second`). Best matches are (similarity, document).
fn mutual_pairs(best_of_zh: &[(f32, u32)], best_of_en: &[(f32, u32)], second: &[f32]) -> Vec<u32> {
    let mut partner = vec![NONE; best_of_zh.len()];
    for (z, &(sim, e)) in best_of_zh.iter().enumerate() {
        if e != NONE
            && sim >= MIN_SIMILARITY
            && sim >= MIN_MARGIN * second[z]
            && best_of_en[e as usize].1 == z as u32
        {
            partner[z] = e;
            partner[e as usize] = z as u32;
        }
    }
    partner
}

/// What the Han bigram term `t` translates to, when the bigram is a dictionary word by
/// itself (most two-character words are; a bigram straddling two words is usually none).
fn translate(index: &Bm25Index, lexicon: &Lexicon, t: u32) -> Translated {
    let mut out = Translated::default();
    let Some(word) = std::str::from_utf8(index.terms.term(t))
        .ok()
        .and_then(|bigram| lexicon.word(bigram))
    else {
        return out;
    };
    // The translations' terms come cut at build time. Single words only: a phrase's
    // words alone are other senses.
    for term in word.translation_terms() {
        if !term.is_empty() && !term.contains(' ') {
            out.any_terms = true;
            out.ids.extend(index.term_id(term));
        }
    }
    out
}

/// A Han bigram's single-word translations.
#[derive(Debug, Clone, Default)]
struct Translated {
    /// Those the index holds, as term ids.
    ids: Vec<u32>,
    /// Whether it has any (a word whose translations are all stopwords has none).
    any_terms: bool,
}

#[cfg(test)]
mod tests {
    use super::super::Retriever;
    use super::NONE;

    fn texts(pages: &[&str]) -> Vec<Vec<String>> {
        pages.iter().map(|p| vec![p.to_string()]).collect()
    }

    #[test]
    fn each_page_pairs_with_its_translation_and_an_untranslated_page_with_none() {
        let r = Retriever::build(
            texts(&[
                "The library lends books to students and teachers for two weeks.",
                "Cooking rice in a pot takes twenty minutes over a low fire.",
                "图书馆向学生和教师借出图书，期限两周。",
                "用锅在小火上煮米饭需要二十分钟。",
                "The museum opens at nine every weekend.",
                "这座城市的火车站建于十九世纪，周末人很多。",
            ]),
            &[],
        );
        assert_eq!(r.versions(), &[2, 3, 0, 1, NONE, NONE]);
    }

    #[test]
    fn a_page_matching_two_pages_about_as_well_pairs_with_neither() {
        let r = Retriever::build(
            texts(&[
                "The library lends books to students for two weeks.",
                "The library lends books to teachers for two weeks.",
                "图书馆向学生和教师借出图书，期限两周。",
            ]),
            &[],
        );
        assert_eq!(r.versions(), &[NONE, NONE, NONE]);
    }

    #[test]
    fn a_single_language_site_has_no_pairs() {
        let r = Retriever::build(texts(&["Install the package.", "Remove the package."]), &[]);
        assert!(r.versions().iter().all(|&p| p == NONE));
    }
}
