//! Query analysis: a visitor's question into weighted terms. Latin runs become stemmed
//! words (and, on a site with Chinese text, their Chinese translations); Han runs are
//! segmented against the glossary, the curated lexicons and CC-CEDICT, each word matched by
//! its bigrams and by its translations shared by corpus evidence; names are matched by
//! their pinyin skeleton; identifiers are kept as written.

use super::*;
use rustc_hash::FxHashSet;

/// The buffers a word's translation lookup fills: candidate senses, their index ids, and the
/// chosen (translation index, weight) shares.
type SenseBuffers<'b> = (
    &'b mut Vec<(usize, usize, f32)>,
    &'b mut Vec<u32>,
    &'b mut Vec<(usize, f32)>,
);

impl Retriever {
    /// Analyzes a query: English words as they are (weight 1 each), Han runs as bigrams
    /// (for Chinese documents: the bigrams of one word share weight 1; the
    /// bigram where two words meet weighs [`CROSS_BIGRAM_WEIGHT`]) plus their English
    /// translations (each
    /// Chinese word's translations sharing weight 1, a phrase's words sharing a translation's
    /// share by √length) and any proper nouns of the corpus
    /// that a run of otherwise unmatched characters transliterates. Equal terms are
    /// merged, weights added.
    ///
    /// The work is linear in the query's length: segmentation tries at most a fixed number
    /// of prefixes per character, names are tried only on spans of at most
    /// [`MAX_NAME_CHARS`] within a budget of [`MAX_NAME_PROBES`] skeletons per query, and
    /// at most [`MAX_QUERY_TERMS`] distinct terms are kept.
    pub fn analyze_query(&self, query: &str) -> Vec<QueryTerm> {
        self.analyze(query).terms
    }

    /// Like [`Retriever::analyze_query`], also telling which terms stand for which word.
    pub fn analyze(&self, query: &str) -> Analysis {
        with_scratch(|scratch| {
            self.analyze_into(query, scratch);
            Analysis {
                words: scratch.terms.nested_words(),
                terms: std::mem::take(&mut scratch.terms.terms),
            }
        })
    }

    /// Analyses `query` into `scratch.terms` (see [`Retriever::analyze`]), reusing the
    /// scratch's buffers.
    pub(super) fn analyze_into(&self, query: &str, scratch: &mut QueryScratch) {
        let QueryScratch {
            folded,
            spans,
            segments: seg_scratch,
            is_name,
            lone,
            shares,
            candidates,
            ids,
            terms,
            translated_few,
            ..
        } = scratch;
        terms.clear();
        // The terms are handed to the caller at the end, so this is a new buffer: room
        // for a typical question's terms at once rather than growing it four times.
        terms.terms.reserve(16);
        shares.clear();
        translated_few.clear();
        run_spans(query, folded, spans);
        let folded: &str = folded;
        let index = &self.index;
        let mut name_probes = MAX_NAME_PROBES;
        let mut han_left = MAX_ANALYSED_HAN_CHARS;
        // Per query: words already looked up (a long query repeats its words).
        let mut translated = Translated {
            folded,
            few: translated_few,
            many: FxHashMap::default(),
        };
        let mut segments: Vec<lexicon::Segment<'_>> = Vec::new();
        for (script, range) in spans.iter() {
            let (run_start, run) = (
                range.start as usize,
                &folded[range.start as usize..range.end as usize],
            );
            match script {
                Script::Latin => self.add_latin_word(run, terms),
                Script::Han => {
                    // Past the budget, only bigrams (added last, standing for no word in
                    // particular), the first one joining the analysed part to the rest.
                    let (head, tail) =
                        run.split_at(nth_char_start(run, han_left).unwrap_or(run.len()));
                    han_left -= head.chars().count();
                    segments.clear();
                    self.lexicon.segment_in(
                        head,
                        |w| self.han_attested(w),
                        seg_scratch,
                        &mut segments,
                    );
                    is_name.clear();
                    is_name.resize(segments.len(), false);
                    self.match_compound_names(&segments, is_name, terms, &mut name_probes);
                    self.match_names(&segments, is_name, terms, &mut name_probes);
                    // Bigrams (for Chinese documents) of the content words only: the
                    // characters of question and filler words (是什么, 怎么, 的话) are cut
                    // out, so those do not match every Chinese page. A word's own bigrams
                    // and translations stand for it; a bigram across two words for neither.
                    // The last character of the previous content word.
                    let mut prev: Option<char> = None;
                    let whole_run = segments.len() == 1 && tail.is_empty();
                    lone_spans(&segments, is_name, lone);
                    // Where the segment starts in `folded`.
                    let mut at = run_start;
                    for (i, (ex, &name)) in segments.iter().zip(is_name.iter()).enumerate() {
                        let word_at = at;
                        at += ex.word.len();
                        if let Some(&(start, end)) = lone.iter().find(|s| s.0 == i) {
                            // The segments lie end to end in `folded`.
                            let len: usize =
                                segments[start..end].iter().map(|x| x.word.len()).sum();
                            self.add_unjoined(&folded[word_at..word_at + len], terms);
                        }
                        // Inside a span its bigrams are already in.
                        let inside = lone.iter().any(|&(start, end)| i > start && i < end);
                        if ex.is_function_word() {
                            prev = None;
                            continue;
                        }
                        let mut chars = ex.word.chars();
                        let first = chars.next();
                        let single = chars.next().is_none();
                        if let (Some(a), Some(b), false) = (prev, first, inside) {
                            self.add_cross_bigram(a, b, terms);
                        }
                        prev = ex.word.chars().last();
                        terms.begin_word(single);
                        let in_unjoined = lone.iter().any(|s| (s.0..s.1).contains(&i));
                        self.add_han_word(ex, single, whole_run, name || in_unjoined, terms);
                        if !name {
                            self.add_senses(
                                ex,
                                word_at,
                                &mut translated,
                                seg_scratch,
                                (candidates, ids, shares),
                                terms,
                            );
                        }
                        terms.end_word();
                    }
                    if !tail.is_empty() {
                        self.add_tail_bigrams(head, run, terms);
                    }
                }
            }
        }
        if spans.iter().any(|(script, _)| *script == Script::Han) {
            self.add_keywords(folded, spans, terms);
        }
        self.add_joined_words(query, folded, spans, terms);
        // Identifiers as written (`v-if`, `sys_platform`), beside their parts.
        compounds(query, &mut |t| {
            terms.begin_word(false);
            terms.mark_written();
            terms.add(&t, 1.0, None, index);
            terms.end_word();
        });
        // Operators standing alone ("& and &&"), as the index holds them.
        tokenize::operators(query, false, |op| {
            terms.begin_word(false);
            terms.mark_written();
            terms.add(op, 1.0, None, index);
            terms.end_word();
        });
    }

    /// Two words of the question that the site writes as one ("read-only" → `readonly`,
    /// "file name" → `filename`, "the id of the row" → `rowid`): a term of their
    /// concatenation, where the site indexes it, at [`JOINED_WEIGHT`], standing for no
    /// word in particular (the no-answer test counts the words themselves). Tried: each
    /// two runs written next to each other, in order, the first a content word; each two
    /// content words in a row
    /// (question words between them skipped), in order; and, where "of" stands between
    /// them, the other way round ("the size of the page" → `pagesize`). Two runs next to
    /// each other also try the identifiers they would spell joined by `-` or `_` ("git
    /// commit" → `git-commit`, "unique together" → `unique_together`), as a man page or an
    /// API names its subject. Identifiers and code are one run already, so this mends only
    /// the visitor's spelling.
    fn add_joined_words(
        &self,
        query: &str,
        folded: &str,
        spans: &[(Script, std::ops::Range<u32>)],
        terms: &mut TermSet,
    ) {
        // Parts are plain words: at least two letters, no digits (`v` + `2` is no word).
        let word = |r: &std::ops::Range<u32>| {
            let w = &folded[r.start as usize..r.end as usize];
            (w.len() >= 2
                && w.len() <= MAX_JOINED_PART
                && w.bytes().all(|b| b.is_ascii_alphabetic()))
            .then_some(w)
        };
        // The two-part identifiers the question writes itself (`read-only`): terms
        // already, at a word's weight. Read only once a join is one the site indexes.
        let mut written: Option<FxHashSet<String>> = None;
        let mut joined = String::new();
        let mut try_join = |a: &str, b: &str, adjacent: bool, terms: &mut TermSet| {
            joined.clear();
            joined.push_str(a);
            joined.push_str(b);
            if let Some(t) = self.analyzer.latin_term_ref(&joined) {
                if self.index.doc_freq(&t) > 0 {
                    terms.add(&t, JOINED_WEIGHT, None, &self.index);
                }
            }
            // The identifier the two words name (`git commit` → `git-commit`, `unique
            // together` → `unique_together`), unless the question writes it already.
            if !adjacent {
                return;
            }
            for c in IDENTIFIER_JOINS {
                joined.clear();
                joined.push_str(a);
                joined.push(c);
                joined.push_str(b);
                if self.index.doc_freq(&joined) > 0
                    && !written
                        .get_or_insert_with(|| two_part_identifiers(query))
                        .contains(joined.as_str())
                {
                    terms.add(&joined, JOINED_WEIGHT, None, &self.index);
                }
            }
        };
        // The previous Latin run (its place among the runs, and whether it is a content
        // word), the previous content word, and whether "of" came after that.
        let mut last_run: Option<(usize, &str, bool)> = None;
        let mut last_content: Option<&str> = None;
        let mut of = false;
        for (i, (script, range)) in spans.iter().enumerate() {
            if *script != Script::Latin {
                (last_run, last_content) = (None, None);
                continue;
            }
            let Some(w) = word(range) else {
                last_run = None;
                continue;
            };
            let content = self.analyzer.latin_term_ref(w).is_some();
            of |= w == "of";
            // A question word may follow ("read only", "log in"), not lead ("all tables"
            // is not `alltables`).
            let after_content = matches!(last_run, Some((j, _, true)) if j + 1 == i);
            if let (true, Some((_, prev, _))) = (after_content, last_run) {
                try_join(prev, w, true, terms);
            }
            if let (true, Some(prev)) = (content, last_content) {
                if !after_content {
                    try_join(prev, w, false, terms);
                }
                if of {
                    try_join(w, prev, false, terms);
                }
            }
            last_run = Some((i, w, content));
            if content {
                (last_content, of) = (Some(w), false);
            }
        }
    }

    /// A Chinese content word's own terms: its bigrams (or the word, one or two characters,
    /// when it is a whole run), else a lone character inside a run as the character
    /// anywhere (see [`chars`]), unless it is `literal` (part of a name or of a span no
    /// dictionary joins, matched as written).
    fn add_han_word(
        &self,
        ex: &Segment<'_>,
        single: bool,
        whole_run: bool,
        literal: bool,
        terms: &mut TermSet,
    ) {
        // A lone character is a term of the index only when it is the whole run; inside a
        // run only bigrams are indexed.
        if !single || whole_run {
            let weight = bigram_share(ex.word);
            for t in han_bigram_slices(ex.word) {
                terms.add(t, weight, None, &self.index);
            }
        } else if let (false, Some(c)) = (literal, ex.word.chars().next()) {
            // A passage may write it in a word of its own (哪个郡 → 杜瓦尔郡).
            terms.add(char_term(c, &mut [0; 8]), CHAR_WEIGHT, None, &self.index);
        }
    }

    /// A Chinese word's senses: its translations (looked up once per query, `translated`),
    /// and when the site writes none of them, the word respelled as a name, then its parts'
    /// translations. `word_at` is where it starts in the folded query.
    fn add_senses<'q>(
        &self,
        ex: &Segment<'q>,
        word_at: usize,
        translated: &mut Translated<'q>,
        seg_scratch: &mut lexicon::Scratch,
        (candidates, ids, shares): SenseBuffers<'_>,
        terms: &mut TermSet,
    ) {
        let single = ex.word.chars().nth(1).is_none();
        let (a, b) = match translated.get(ex.word) {
            Some(range) => range,
            None => {
                let a = shares.len() as u32;
                self.translations_of(ex, candidates, ids, shares);
                let range = (a, shares.len() as u32);
                translated.insert(ex.word, word_at, range);
                range
            }
        };
        let mark = terms.alt_mark();
        self.add_translations(ex, ex.word, &shares[a as usize..b as usize], terms);
        // Whether the site writes neither the word (all of it: one of its bigrams in an
        // English page's example string, 测试 of "中文测试", is not 单元测试) nor any of
        // its translations.
        let unwritten =
            |terms: &TermSet| !terms.word_indexed_since(mark) && !self.han_attested(ex.word);
        // Then perhaps a name the dictionary spells another way.
        if !single && ex.has_translations() && unwritten(terms) {
            self.add_respelled_name(ex, terms);
        }
        // Nor was it a name: its parts' senses may be the site's.
        if !single && ex.has_translations() && unwritten(terms) {
            self.add_parts(ex, seg_scratch, candidates, ids, shares, terms);
        }
    }

    /// The bigrams of a Han run past the analysis budget (`head` is the analysed part of
    /// `run`), the first one joining the analysed part to the rest; they stand for no word
    /// in particular.
    fn add_tail_bigrams(&self, head: &str, run: &str, terms: &mut TermSet) {
        let joined = head.chars().last().map_or(0, char::len_utf8);
        for t in han_bigram_slices(&run[head.len() - joined..]) {
            terms.add(t, 1.0, None, &self.index);
        }
    }

    /// Stopwords a Chinese question quotes as names ("with 语句", "where 函数", "用 FROM
    /// 关联别的表"): a run of at most [`MAX_KEYWORD_RUN`] Latin words beside Chinese text,
    /// every one a stopword; called for a question with Chinese text. Chinese has no reason
    /// to switch script for an English function word, so one written there names a keyword,
    /// which the naming fields hold marked ([`tokenize::keyword_marks`]). Its marked term
    /// stands for no word: the no-answer test counts the question's words as before.
    fn add_keywords(
        &self,
        folded: &str,
        spans: &[(Script, std::ops::Range<u32>)],
        terms: &mut TermSet,
    ) {
        let mut i = 0;
        while i < spans.len() {
            if spans[i].0 != Script::Latin {
                i += 1;
                continue;
            }
            let start = i;
            while spans
                .get(i)
                .is_some_and(|(script, _)| *script == Script::Latin)
            {
                i += 1;
            }
            // The run is maximal and the question has Chinese text (the caller's test), so
            // Chinese stands before or after it.
            let run = &spans[start..i];
            let words = || {
                run.iter()
                    .map(|(_, r)| &folded[r.start as usize..r.end as usize])
            };
            if run.len() <= MAX_KEYWORD_RUN && words().all(tokenize::is_stopword) {
                for word in words() {
                    let marked = format!("{}{word}", tokenize::KEYWORD_MARK);
                    terms.add(&marked, KEYWORD_WEIGHT, None, &self.index);
                }
            }
        }
    }

    /// A Latin run's word: its term as written (neutral when it is two characters or fewer,
    /// or has no letter), and on a site with Chinese text its Chinese translations.
    fn add_latin_word(&self, run: &str, terms: &mut TermSet) {
        let Some(t) = self.analyzer.latin_term_ref(run) else {
            return;
        };
        terms.begin_word(false);
        terms.mark_written();
        if t.chars().count() <= 2 || !run.chars().any(|c| c.is_ascii_alphabetic()) {
            terms.mark_neutral();
        }
        if self.has_han {
            self.add_chinese(&t, run, terms);
        }
        terms.add(&t, 1.0, None, &self.index);
        terms.end_word();
    }

    /// Characters the dictionary could not join (a Chinese name: 李会晟, 元英宗): one word
    /// as written, matched by its bigrams together; neutral, since single-character words
    /// in a row are often just that.
    fn add_unjoined(&self, text: &str, terms: &mut TermSet) {
        terms.begin_word(false);
        terms.mark_neutral();
        terms.mark_literal();
        terms.add_phrase(han_bigram_slices(text), 1.0, None, &self.index);
        terms.end_word();
    }

    /// The bigram across two words (the last character of one, the first of the next),
    /// standing for neither: built on the stack.
    fn add_cross_bigram(&self, a: char, b: char, terms: &mut TermSet) {
        let mut buf = [0u8; 8];
        let la = a.encode_utf8(&mut buf).len();
        let lb = b.encode_utf8(&mut buf[la..]).len();
        let bigram = std::str::from_utf8(&buf[..la + lb]).unwrap_or_default();
        terms.add(bigram, CROSS_BIGRAM_WEIGHT, None, &self.index);
    }

    /// Adds the translations of `of` at their `shares` (translation index, weight), which
    /// come in translation order (one pass over its translation groups), as standing for
    /// the query word `word` (`of` itself, or a compound `of` is a part of).
    fn add_translations(
        &self,
        of: &Segment<'_>,
        word: &str,
        shares: &[(usize, f32)],
        terms: &mut TermSet,
    ) {
        let mut groups = of.translation_terms().enumerate();
        for &(k, w) in shares {
            if let Some((_, group)) = groups.find(|&(j, _)| j == k) {
                let phrase = group.split(' ').filter(|t| !t.is_empty());
                terms.add_phrase(phrase, w, Some(word), &self.index);
            }
        }
    }

    /// Adds to the current word the translations of its dictionary parts of two or more
    /// characters (调节器 → 调节 "adjust"), for a compound whose own translations the
    /// site never writes. A lone character's senses are too many to stand for a word.
    /// `scratch`, `candidates`, `ids` and `shares` are working buffers (`shares` is only
    /// appended to).
    pub(super) fn add_parts(
        &self,
        ex: &Segment<'_>,
        scratch: &mut lexicon::Scratch,
        candidates: &mut Vec<(usize, usize, f32)>,
        ids: &mut Vec<u32>,
        shares: &mut Vec<(usize, f32)>,
        terms: &mut TermSet,
    ) {
        let mut parts = Vec::new();
        self.lexicon
            .parts_in(ex.word, |w| self.han_attested(w), scratch, &mut parts);
        for part in parts
            .iter()
            .filter(|p| p.word.chars().nth(1).is_some() && !p.is_function_word())
        {
            let a = shares.len();
            self.translations_of(part, candidates, ids, shares);
            self.add_translations(part, ex.word, &shares[a..], terms);
        }
    }

    /// True when the corpus writes the Han `word` (every bigram of it is indexed), which
    /// makes it a likelier segment of a query about this site.
    pub(super) fn han_attested(&self, word: &str) -> bool {
        han_bigram_slices(word).all(|b| self.index.doc_freq(b) > 0)
    }

    /// The English translations of one Chinese word and their weights, sharing [`CROSS_WEIGHT`]
    /// among the translations the corpus contains, by evidence:
    ///
    /// `share_i = ln(1 + df_i) / Σ_j ln(1 + df_j)`, where `df_i` is the number of indexed
    /// units holding every term of translation i (for a phrase, all its words in one
    /// unit). A sense the site never uses (卸载 → "disembark" on a software site) gets
    /// nothing; the senses it does use share by how much of the site uses them,
    /// logarithmically so a common word does not swamp a specific one (BM25's IDF still
    /// favours the rare one at ranking). When no translation occurs in the corpus, the
    /// single words share equally (they match nothing, but stay visible in the analysis).
    ///
    /// A phrase ("lose weight") is used only where the site has its words together: its
    /// loose words alone ("weight" in a paper) would be another meaning. Its words divide
    /// its share by the square root of its length: together they say more than one word,
    /// but are not independent evidence either.
    ///
    /// Appends `(translation's index, weight)` pairs to `out`; `candidates` and `ids` are
    /// working buffers.
    pub(super) fn translations_of(
        &self,
        ex: &Segment<'_>,
        candidates: &mut Vec<(usize, usize, f32)>,
        ids: &mut Vec<u32>,
        out: &mut Vec<(usize, f32)>,
    ) {
        if !ex.has_translations() {
            return;
        }
        // (translation's index, its number of terms, evidence); the terms come precomputed.
        candidates.clear();
        for (k, group) in ex.translation_terms().enumerate() {
            let n = self.term_ids(group.split(' ').filter(|t| !t.is_empty()), ids);
            candidates.push((k, n, (self.df_of(ids, n) as f32).ln_1p()));
        }
        let evidence: f32 = candidates.iter().map(|(_, _, e)| e).sum();
        let singles = candidates.iter().filter(|(_, n, _)| *n == 1).count();
        for &(k, n, e) in candidates.iter() {
            let share = if evidence > 0.0 {
                e / evidence
            } else if n == 1 {
                1.0 / singles as f32
            } else {
                0.0
            };
            if share <= 0.0 || n == 0 {
                continue;
            }
            let w = CROSS_WEIGHT * share / (n as f32).sqrt();
            out.push((k, w));
        }
    }

    /// Fills `ids` with the index ids of `terms` and returns how many terms there were;
    /// `ids` is shorter when some term is not indexed.
    pub(super) fn term_ids<'t>(
        &self,
        terms: impl Iterator<Item = &'t str>,
        ids: &mut Vec<u32>,
    ) -> usize {
        ids.clear();
        let mut n = 0;
        for t in terms {
            n += 1;
            ids.extend(self.index.term_id(t));
        }
        n
    }

    /// The number of units holding all of `n` terms whose indexed ids are `ids` (0 when
    /// one is not indexed, or there are none).
    pub(super) fn df_of(&self, ids: &[u32], n: usize) -> usize {
        match ids {
            _ if ids.len() != n => 0,
            [] => 0,
            &[t] => self.index.doc_freq_of(t),
            ids => self.index.co_occurrence(ids),
        }
    }

    /// Adds the Chinese words an English query word (index term `stem`, as written `word`)
    /// translates to, for Chinese pages: the glossary's and the compiled-in tables' words
    /// read backwards, kept only where the corpus writes them (all their bigrams in one
    /// unit), sharing [`CROSS_WEIGHT`] by the same evidence as Chinese→English,
    /// `ln(1 + df)` (see [`Retriever::translations_of`]). A word's bigrams must match
    /// together and divide its share by the square root of their number.
    pub(super) fn add_chinese(&self, stem: &str, word: &str, terms: &mut TermSet) {
        let glossary = self.glossary_zh.get(stem).into_iter().flatten();
        // Shortened from `'static` so it chains with the glossary's words.
        let tables = lexicon::chinese_for(stem).map::<&str, _>(|w| w);
        let mut seen: Vec<&str> = Vec::new();
        // (word, number of bigrams, evidence)
        let mut candidates: Vec<(&str, usize, f32)> = Vec::new();
        let mut ids: Vec<u32> = Vec::new();
        for zh in glossary.map(String::as_str).chain(tables) {
            if seen.contains(&zh) {
                continue;
            }
            seen.push(zh);
            let n = self.term_ids(han_bigram_slices(zh), &mut ids);
            let df = self.df_of(&ids, n);
            if df > 0 {
                candidates.push((zh, n, (df as f32).ln_1p()));
            }
        }
        let evidence: f32 = candidates.iter().map(|(_, _, e)| e).sum();
        for (zh, n, e) in candidates {
            let w = CROSS_WEIGHT * e / evidence / (n as f32).sqrt();
            terms.add_phrase(han_bigram_slices(zh), w, Some(word), &self.index);
        }
    }

    /// Finds transliterated names among runs of single characters (two or more of them name
    /// characters) that the lexicon
    /// could only read one by one (alone, a name's characters are ordinary words: 贾
    /// "merchant", 德 "virtue"). Matched segments are marked so those senses are dropped.
    /// Each skeleton tried costs one unit of `probes`; none are tried once it is spent.
    pub(super) fn match_names(
        &self,
        exps: &[Segment<'_>],
        is_name: &mut [bool],
        terms: &mut TermSet,
        probes: &mut usize,
    ) {
        if self.names.is_empty() {
            return;
        }
        // Ordinary characters (not stopwords) join the run too: a name may begin or end
        // with one (胡格诺派 "Huguenots": 胡 and 派 are words of their own), and
        // `match_span` decides which sub-spans may hold them.
        let single = |e: &Segment<'_>| {
            let mut chars = e.word.chars();
            matches!((chars.next(), chars.next()),
                (Some(c), None) if is_translit_char(c) || (!e.stopword && has_reading(c)))
        };
        let translit = |e: &Segment<'_>| e.word.chars().all(is_translit_char);
        for run in stretches(exps.len(), |j| single(&exps[j])) {
            if exps[run.clone()].iter().filter(|e| translit(e)).count() >= 2 {
                self.match_span(&exps[run.clone()], &mut is_name[run], terms, probes);
            }
        }
    }

    /// Picks names in a span of single name characters: exact skeleton matches before
    /// near ones, longer before shorter, leftmost first, never overlapping. Sub-spans are
    /// at most [`MAX_NAME_CHARS`] long, so a span of n characters has fewer than
    /// n × MAX_NAME_CHARS of them, each probed once.
    pub(super) fn match_span(
        &self,
        span: &[Segment<'_>],
        is_name: &mut [bool],
        terms: &mut TermSet,
        probes: &mut usize,
    ) {
        let chars: Vec<char> = span.iter().filter_map(|e| e.word.chars().next()).collect();
        // (near, length, start, matched terms); exact beats near, then longer, then leftmost.
        let mut found: Vec<(bool, usize, usize, Vec<String>)> = Vec::new();
        // Equal sub-spans match alike: each distinct one is probed (and charged) once, so a
        // repeated character costs a handful of probes however long the run.
        let mut seen: FxHashMap<&[char], Option<(bool, Vec<String>)>> = FxHashMap::default();
        for start in 0..chars.len() {
            for len in 2..=MAX_NAME_CHARS.min(chars.len() - start) {
                let part = &chars[start..start + len];
                // A name of name characters; or a longer one (four or more, as long as a
                // near match needs) with at most half of them ordinary: in fewer, or with
                // more ordinary ones, the skeleton says too little to tell words from a name.
                let ordinary = part.iter().filter(|&&c| !is_translit_char(c)).count();
                if ordinary > 0 && (len < MIN_MIXED_NAME || 2 * ordinary > len) {
                    continue;
                }
                let matched = match seen.get(part) {
                    Some(m) => m.clone(),
                    None if *probes == 0 => continue,
                    None => {
                        *probes -= 1;
                        let m = self.probe_name(part);
                        seen.insert(part, m.clone());
                        m
                    }
                };
                if let Some((near, names)) = matched {
                    found.push((near, len, start, names));
                }
            }
        }
        found.sort_by_key(|&(near, len, start, _)| (near, std::cmp::Reverse(len), start));
        for (near, len, start, names) in found {
            if is_name[start..start + len].iter().any(|&n| n) {
                continue;
            }
            is_name[start..start + len]
                .iter_mut()
                .for_each(|n| *n = true);
            let word: String = chars[start..start + len].iter().collect();
            let share = 1.0 / names.len() as f32;
            terms.begin_word(false);
            if !near {
                terms.mark_literal();
            }
            for t in names {
                terms.add(&t, share, Some(&word), &self.index);
            }
            terms.end_word();
        }
    }

    /// The corpus names one sub-span may spell: `(near, terms)`, exact matches first.
    pub(super) fn probe_name(&self, part: &[char]) -> Option<(bool, Vec<String>)> {
        let skeleton = han_skeleton(part)?;
        let exact = self.names.exact(&skeleton);
        if !exact.is_empty() {
            return Some((false, exact));
        }
        let near = self.names.near(&skeleton);
        (!near.is_empty()).then_some((true, near))
    }
}

/// Runs of two or more single-character segments in a row (not matched as names), without
/// the stopwords at their ends, as `(first, end)` indexes into `expansions`: what
/// segmentation leaves of a word no dictionary has, such as a person's name.
pub(super) fn lone_spans(
    expansions: &[Segment<'_>],
    is_name: &[bool],
    out: &mut Vec<(usize, usize)>,
) {
    let lone = |k: usize| !is_name[k] && expansions[k].word.chars().nth(1).is_none();
    out.clear();
    for run in stretches(expansions.len(), lone) {
        let (mut start, mut end) = (run.start, run.end);
        while start < end && expansions[start].stopword {
            start += 1;
        }
        while end > start && expansions[end - 1].stopword {
            end -= 1;
        }
        if end - start >= 2 {
            out.push((start, end));
        }
    }
}

/// The maximal runs of consecutive indexes below `len` at which `keep` holds, in order:
/// how the name matchers cut a question's segments into the stretches they try.
pub(super) fn stretches(
    len: usize,
    keep: impl Fn(usize) -> bool,
) -> impl Iterator<Item = std::ops::Range<usize>> {
    let mut i = 0;
    std::iter::from_fn(move || {
        while i < len && !keep(i) {
            i += 1;
        }
        let start = i;
        while i < len && keep(i) {
            i += 1;
        }
        (start < i).then_some(start..i)
    })
}

/// The weight of each bigram of the Chinese word `word`: its bigrams share one word's
/// weight, as its translations do. They overlap and a page that writes the word has them
/// all, so they are one piece of evidence, not several: weighed 1 each, a word of four
/// characters (杰克逊维尔 has four bigrams) counted four times as much as a word of two, and
/// the name an article repeats in every paragraph drowned the words of the question that
/// tell its paragraphs apart (which of them says who sang the anthem at the Super Bowl).
pub(super) fn bigram_share(word: &str) -> f32 {
    let bigrams = word.chars().count().saturating_sub(1).max(1);
    1.0 / bigrams as f32
}
