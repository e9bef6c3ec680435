//! Ranking: analysed terms into ranked documents. A document scores as its best passage,
//! its next few at falling weights ([`NEXT_PASSAGE_WEIGHT`]) and its naming fields at
//! [`FIELD_WEIGHT`]; [`Retriever::search`] adds the no-answer rule (a question the site
//! cannot answer gets no hits).

use super::*;

impl Retriever {
    /// Ranks documents for already analyzed terms of a question: a document scores as its
    /// best passages and its naming fields ([`DocScore::Passages`]). Returns at most `k`
    /// documents scoring at least `min_score`.
    pub fn rank(&self, terms: &[QueryTerm], k: usize, min_score: f32) -> Vec<Ranked> {
        let (scored, fields) = with_scratch(|scratch| {
            let triples = terms
                .iter()
                .map(|t| (t.term.as_str(), self.index.term_id(&t.term), t.weight));
            let fields = self.score_fields(triples.clone(), &mut scratch.field_score);
            let scored = self.score_terms(triples, &mut scratch.score, &mut scratch.chars);
            (scored, fields)
        });
        let named = self.named_documents(terms.iter().map(|t| t.term.as_str()));
        self.rank_scored(scored, &fields, &named, DocScore::Passages, k, min_score)
    }

    /// The documents the query names ([`NAMED_WEIGHT`]), ascending: those every one of
    /// whose distinctive title words is among `terms`.
    pub(super) fn named_documents<'t>(&self, terms: impl Iterator<Item = &'t str>) -> Vec<u32> {
        let totals = self.title_words.get_or_init(|| self.count_title_words());
        if totals.is_empty() {
            return Vec::new();
        }
        // A document once for each title word of the query it has (a query's terms are
        // distinct: equal ones were merged).
        let mut found: Vec<u32> = Vec::new();
        for f in terms.filter_map(|term| self.title_term(term)) {
            if self.distinctive_title_word(f) {
                found.extend_from_slice(self.fields.postings(f).0);
            }
        }
        found.sort_unstable();
        found
            .chunk_by(|a, b| a == b)
            .filter(|run| run.len() >= usize::from(totals[run[0] as usize]))
            .map(|run| run[0])
            .collect()
    }

    /// The naming-field term that marks `term` in a title ([`TITLE_MARK`]), if any title
    /// has it.
    fn title_term(&self, term: &str) -> Option<u32> {
        let mut marked = String::with_capacity(term.len() + TITLE_MARK.len_utf8());
        marked.push(TITLE_MARK);
        marked.push_str(term);
        self.fields.term_id(&marked)
    }

    /// Whether naming-field term `f` is in few documents' titles ([`NAMING_SHARE`]): a
    /// word in more names nothing in particular (model, learning; a generator's "Manual").
    fn in_few_titles(&self, f: u32) -> bool {
        self.fields.doc_freq_of(f) * NAMING_SHARE <= self.fields.len()
    }

    /// Whether naming-field term `f` is a title's word in few titles ([`in_few_titles`])
    /// with a letter (a section's number names nothing). An identifier's whole
    /// (`git-revert`) is not one: its parts, title words too, stand for it, as a visitor
    /// writes it ("git revert", "revert").
    ///
    /// [`in_few_titles`]: Retriever::in_few_titles
    fn distinctive_title_word(&self, f: u32) -> bool {
        let Ok(term) = std::str::from_utf8(self.fields.terms.term(f)) else {
            return false;
        };
        term.strip_prefix(TITLE_MARK).is_some_and(|word| {
            word.chars().any(char::is_alphabetic) && word.chars().all(char::is_alphanumeric)
        }) && self.in_few_titles(f)
    }

    /// Each document's number of distinctive title words: one pass over the naming
    /// fields' terms. Empty when there are no naming fields.
    fn count_title_words(&self) -> Vec<u16> {
        let mut counts = vec![0u16; self.fields.len()];
        for f in 0..self.fields.terms.len() as u32 {
            if self.distinctive_title_word(f) {
                self.fields.for_each_unit(f, |u| {
                    if let Some(c) = counts.get_mut(u as usize) {
                        *c = c.saturating_add(1);
                    }
                });
            }
        }
        counts
    }

    /// Each document's score on its naming fields (its unit of `fields`) for the query's
    /// terms, in document order. Character terms (`郡*`) stay out: they stand for many
    /// words, which a title would then seem to hold.
    pub(super) fn score_fields<'t>(
        &self,
        terms: impl Iterator<Item = (&'t str, Option<u32>, f32)>,
        scratch: &mut bm25::ScoreScratch,
    ) -> Vec<(u32, f32)> {
        if self.fields.vocabulary_size() == 0 {
            return Vec::new();
        }
        self.fields.score_into(
            // A term no passage holds is in no field either (fields repeat passage text),
            // but for a stopword named as a keyword, which only the fields hold.
            terms.filter_map(|(term, id, w)| {
                let keyword = term.starts_with(tokenize::KEYWORD_MARK);
                Some((
                    self.fields
                        .term_id(term)
                        .filter(|_| id.is_some() || keyword)?,
                    w,
                ))
            }),
            scratch,
        )
    }

    /// Scores units for `(term, its index id, weight)` triples: a character term (`郡*`)
    /// stands for the character anywhere (see [`chars`]; no index term is one), any other
    /// term for itself.
    pub(super) fn score_terms<'t>(
        &self,
        terms: impl Iterator<Item = (&'t str, Option<u32>, f32)> + Clone,
        score: &mut bm25::ScoreScratch,
        chars: &mut CharScratch,
    ) -> Vec<(u32, f32)> {
        let scored = self
            .index
            .score_into(terms.clone().filter_map(|(_, id, w)| Some((id?, w))), score);
        let mut scorer = CharScorer::new(&self.index, &self.char_bigrams);
        for (c, w) in terms.filter_map(|(term, _, w)| Some((char_of(term)?, w))) {
            scorer.add(c, w, chars);
        }
        CharScorer::merge(scored, chars)
    }

    /// [`Retriever::rank`] for units already scored, with each document's naming-field
    /// score (`fields`, in document order) added at [`FIELD_WEIGHT`]: a document scores as
    /// its best passage, with [`DocScore::Passages`] its next best few at falling weights
    /// ([`NEXT_PASSAGE_WEIGHT`]), and its fields, so a page that answers in several sections
    /// outranks one that mentions the words once, a page of many passages gets no more
    /// chances than one of a few, and a page named for the question's words outranks one
    /// that mentions them; then weighed by what kind of page it is ([`DEMOTED_WEIGHT`]) and
    /// by its standing on the site ([`LINK_WEIGHT`]).
    pub(super) fn rank_scored(
        &self,
        scored: Vec<(u32, f32)>,
        fields: &[(u32, f32)],
        named: &[u32],
        scoring: DocScore,
        k: usize,
        min_score: f32,
    ) -> Vec<Ranked> {
        // Each document's best passage (the one a hit shows) and its score from its
        // passages, ascending by document.
        let best: Vec<Ranked> = if self.units_are_docs {
            // One passage per document (short entries, BEIR corpora): units are documents.
            scored
                .into_iter()
                .map(|(doc, score)| Ranked {
                    doc,
                    passage: 0,
                    score,
                })
                .collect()
        } else {
            // Units of one document are contiguous and ascending, so one pass with a
            // "current document" slot (kept in locals: this loop runs once per passage
            // scored) suffices.
            let count_next = scoring == DocScore::Passages;
            let mut best: Vec<Ranked> = Vec::with_capacity(scored.len().min(self.n_docs));
            let mut current: Option<Ranked> = None;
            let mut next = [0.0; NEXT_PASSAGES];
            let with_next = |r: Ranked, next: &[f32; NEXT_PASSAGES]| Ranked {
                score: r.score + next_passages_score(next),
                ..r
            };
            for (u, score) in scored {
                let (doc, passage) = self.units[u as usize];
                match current.as_mut() {
                    Some(r) if r.doc == doc => {
                        let runner_up = if score > r.score {
                            r.passage = passage;
                            std::mem::replace(&mut r.score, score)
                        } else {
                            score
                        };
                        if count_next {
                            keep_next(&mut next, runner_up);
                        }
                    }
                    _ => {
                        if let Some(r) = current.replace(Ranked {
                            doc,
                            passage,
                            score,
                        }) {
                            best.push(with_next(r, &next));
                        }
                        next = [0.0; NEXT_PASSAGES];
                    }
                }
            }
            best.extend(current.map(|r| with_next(r, &next)));
            best
        };
        // The four lists (passages, fields, demoted, named) ascend by document: merge them,
        // a document matched by its fields alone standing with its first passage.
        let mut candidates: Vec<(u32, f32)> = Vec::with_capacity(best.len());
        let (mut i, mut j, mut d, mut m) = (0, 0, 0, 0);
        while i < best.len() || j < fields.len() {
            let b = best.get(i).map_or(u32::MAX, |r| r.doc);
            let f = fields.get(j).map_or(u32::MAX, |&(d, _)| d);
            let doc = b.min(f);
            let mut score = 0.0;
            if b == doc {
                score += best[i].score;
                i += 1;
            }
            if f == doc {
                score += FIELD_WEIGHT * fields[j].1;
                j += 1;
            }
            while self.demoted.get(d).is_some_and(|&x| x < doc) {
                d += 1;
            }
            if self.demoted.get(d) == Some(&doc) {
                score *= DEMOTED_WEIGHT;
            }
            if let Some(&standing) = self.standing.get(doc as usize) {
                score *= standing;
            }
            while named.get(m).is_some_and(|&x| x < doc) {
                m += 1;
            }
            if named.get(m) == Some(&doc) {
                score *= NAMED_WEIGHT;
            }
            if score >= min_score {
                candidates.push((doc, score));
            }
        }
        let passage_of = |doc: u32| {
            best.binary_search_by_key(&doc, |r| r.doc)
                .map_or(0, |i| best[i].passage)
        };
        top_k(candidates, k)
            .into_iter()
            .map(|(doc, score)| Ranked {
                doc,
                passage: passage_of(doc),
                score,
            })
            .collect()
    }

    /// Whether the index terms `terms` (one alternative of a query word) are all in
    /// document `doc`'s title, and in few documents' titles ([`NAMING_SHARE`]): the
    /// question names that entry ("InsightFace 有多少 star"). The title alone: a summary's
    /// words are incidental (a summary's "approach" does not name its paper).
    pub(super) fn names_document(&self, terms: &[u32], doc: u32) -> bool {
        !terms.is_empty()
            && terms.iter().all(|&t| {
                std::str::from_utf8(self.index.terms.term(t))
                    .ok()
                    .and_then(|term| self.title_term(term))
                    .is_some_and(|f| self.in_few_titles(f) && self.fields.contains(f, doc))
            })
    }

    /// Analyzes and ranks in one call, returning no hits for a question the site cannot
    /// answer. Each content word of the query (an English word or identifier; a Chinese
    /// word with its bigrams and translations; a name) weighs its specificity on this site:
    /// the IDF of its most specific indexed alternative, or the IDF of an absent term when
    /// the site has none (a word the site never uses is as specific as words get). A
    /// passage matches a word when it holds any of its alternatives (a phrase: all its
    /// terms). The question is answered when one of the best [`COVERAGE_DEPTH`] hits' passage
    /// matches at least
    /// [`MIN_COVERAGE`] of the total weight, and, when words the site never uses carry
    /// more than [`MAX_UNKNOWN`] of it, at least [`MIN_WORDS_IF_UNKNOWN`] of its words (or
    /// a name no dictionary has, as written: [`Word::literal`], or a word rare on the site:
    /// [`RARE_PASSAGES`]);
    /// then every hit stays (a lower one may answer another part). Both tests are shares
    /// and counts of the query's own words, so they hold across site sizes, where raw BM25
    /// scores do not: "香蕉面包的做法" on a research homepage shares only 做法 with it.
    pub fn search(&self, query: &str, k: usize, min_score: f32) -> (Vec<QueryTerm>, Vec<Ranked>) {
        self.search_covering(query, k, min_score, MIN_COVERAGE)
    }

    /// [`Retriever::search`] with another minimum coverage (0 keeps every hit).
    pub fn search_covering(
        &self,
        query: &str,
        k: usize,
        min_score: f32,
        min_coverage: f32,
    ) -> (Vec<QueryTerm>, Vec<Ranked>) {
        self.search_as(query, DocScore::Passages, k, min_score, min_coverage)
    }

    /// [`Retriever::search_as`] for `k` distinct pages: a page's version in the other
    /// language is left out (the chat's prompt needs its content once; another page is more
    /// use to the model).
    pub fn search_distinct(
        &self,
        query: &str,
        scoring: DocScore,
        k: usize,
        min_score: f32,
        min_coverage: f32,
    ) -> (Vec<QueryTerm>, Vec<Ranked>) {
        if self.versions.is_empty() {
            return self.search_as(query, scoring, k, min_score, min_coverage);
        }
        let (terms, ranked) =
            self.search_as(query, scoring, k.saturating_mul(2), min_score, min_coverage);
        (terms, self.one_version_each(ranked, k))
    }

    /// [`Retriever::search_covering`] with documents scored as `scoring` says.
    pub fn search_as(
        &self,
        query: &str,
        scoring: DocScore,
        k: usize,
        min_score: f32,
        min_coverage: f32,
    ) -> (Vec<QueryTerm>, Vec<Ranked>) {
        with_scratch(|scratch| {
            self.analyze_into(query, scratch);
            let set = &scratch.terms;
            // The terms' index ids were looked up as they were added.
            let triples = set
                .ids
                .iter()
                .zip(&set.terms)
                .map(|(&id, t)| (t.term.as_str(), id, t.weight));
            let fields = self.score_fields(triples.clone(), &mut scratch.field_score);
            let scored = self.score_terms(triples, &mut scratch.score, &mut scratch.chars);
            let covering = min_coverage > 0.0;
            let depth = if covering { k.max(COVERAGE_DEPTH) } else { k };
            let named = self.named_documents(set.terms.iter().map(|t| t.term.as_str()));
            let mut ranked = self.rank_scored(scored, &fields, &named, scoring, depth, min_score);
            if covering && !ranked.is_empty() {
                self.word_weights(
                    set,
                    &mut scratch.weighed,
                    &mut scratch.weighed_alts,
                    &mut scratch.weighed_ids,
                );
                let (words, alts, ids) = (
                    &scratch.weighed,
                    &scratch.weighed_alts,
                    &scratch.weighed_ids,
                );
                let n = self.index.len();
                let total: f32 = words.iter().map(|w| w.weight).sum();
                // (share of the weight, number of words) a hit's passage matches; a literal
                // name counts as enough words by itself.
                let coverage = |hit: &Ranked| {
                    let Ok(unit) = self.units.binary_search(&(hit.doc, hit.passage)) else {
                        return (0.0, 0);
                    };
                    let holds = |&(a, b, _): &(u32, u32, u32)| {
                        ids[a as usize..b as usize]
                            .iter()
                            .all(|&t| self.index.contains(t, unit as u32))
                    };
                    let (matched, count) = words.iter().fold((0.0, 0), |(m, c), w| {
                        let word_alts = &alts[w.alts.0 as usize..w.alts.1 as usize];
                        // The fewest passages among the word's alternatives this one holds.
                        let held = word_alts
                            .iter()
                            .filter(|alt| holds(alt))
                            .map(|&(_, _, df)| df as usize)
                            .min();
                        let names = || {
                            w.written
                                && word_alts.iter().any(|&(a, b, _)| {
                                    self.names_document(&ids[a as usize..b as usize], hit.doc)
                                })
                        };
                        match held {
                            None => (m, c),
                            Some(df)
                                if w.literal
                                    || (df * RARE_PASSAGES <= n
                                        && w.weight >= RARE_MIN_SHARE * total)
                                    || names() =>
                            {
                                (m + w.weight, c + MIN_WORDS_IF_UNKNOWN)
                            }
                            Some(_) => (m + w.weight, c + 1),
                        }
                    });
                    (matched / total, count)
                };
                // Words the site never uses anywhere (no alternative indexed).
                let unknown: f32 = words
                    .iter()
                    .filter(|w| w.alts.0 == w.alts.1)
                    .map(|w| w.weight)
                    .sum();
                let mostly_unknown = unknown > MAX_UNKNOWN * total;
                let answerable = total <= 0.0
                    || ranked.iter().take(COVERAGE_DEPTH).any(|hit| {
                        let (share, count) = coverage(hit);
                        share >= min_coverage && (!mostly_unknown || count >= MIN_WORDS_IF_UNKNOWN)
                    });
                if !answerable {
                    ranked.clear();
                }
            }
            ranked.truncate(k);
            let terms = std::mem::take(&mut scratch.terms.terms);
            let chinese_question = query.chars().any(tokenize::is_han);
            (terms, self.with_versions(ranked, k, chinese_question))
        })
    }
}

/// Keeps `score` among a document's next best passages' scores (`next`, descending; the
/// lowest falls off). Walked from the low end: most of a long page's passages score below
/// all of them, one comparison and done.
#[inline]
fn keep_next(next: &mut [f32; NEXT_PASSAGES], score: f32) {
    let mut i = NEXT_PASSAGES;
    while i > 0 && next[i - 1] < score {
        if i < NEXT_PASSAGES {
            next[i] = next[i - 1];
        }
        i -= 1;
    }
    if i < NEXT_PASSAGES {
        next[i] = score;
    }
}

/// What a document's next best passages add to its best one's score: each at
/// [`NEXT_PASSAGE_WEIGHT`] times the weight of the one before.
fn next_passages_score(next: &[f32; NEXT_PASSAGES]) -> f32 {
    let mut total = 0.0;
    let mut weight = NEXT_PASSAGE_WEIGHT;
    for s in next {
        total += weight * s;
        weight *= NEXT_PASSAGE_WEIGHT;
    }
    total
}
