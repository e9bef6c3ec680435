use super::analysis::stretches;
use super::*;

#[test]
fn stretches_are_the_maximal_runs_where_the_test_holds() {
    let keep = [false, true, true, false, true, false, false, true];
    let found: Vec<_> = stretches(keep.len(), |i| keep[i]).collect();
    assert_eq!(found, [1..3, 4..5, 7..8]);
    assert_eq!(stretches(0, |_| true).count(), 0);
    assert_eq!(stretches(3, |_| false).count(), 0);
}

/// A site of one-passage pages, no glossary.
pub(super) fn site(pages: &[&str]) -> Retriever {
    Retriever::build(pages.iter().map(|p| [p.to_string()]), &[])
}

/// Asserts that `r` ranks document `doc` first for `query`; a failure prints the query's
/// terms and the hits.
#[track_caller]
fn assert_first(r: &Retriever, query: &str, doc: u32) {
    let (terms, hits) = r.search(query, 3, 0.0);
    let first = hits.first().map(|h| h.doc);
    assert_eq!(first, Some(doc), "{query}: {terms:?} {hits:?}");
}

fn weight(terms: &[QueryTerm], term: &str) -> f32 {
    terms
        .iter()
        .find(|t| t.term == term)
        .map_or(0.0, |t| t.weight)
}

#[test]
fn a_words_translations_share_the_cross_weight_and_phrases_split_by_sqrt_length() {
    let glossary = [(
        "测试词".to_string(),
        vec![
            "alpha".to_string(),
            "beta".to_string(),
            "gamma delta".to_string(),
        ],
    )];
    let r = Retriever::build([["alpha beta gamma delta".to_string()]], &glossary);
    let terms = r.analyze_query("测试词");
    let third = CROSS_WEIGHT / 3.0;
    assert!((weight(&terms, "alpha") - third).abs() < 1e-6);
    assert!((weight(&terms, "beta") - third).abs() < 1e-6);
    assert!((weight(&terms, "gamma") - third / 2f32.sqrt()).abs() < 1e-6);
    assert!((weight(&terms, "delta") - third / 2f32.sqrt()).abs() < 1e-6);
    // The Han bigrams stay, for Chinese documents, sharing one word's weight.
    assert_eq!(weight(&terms, "测试"), 0.5);
    assert!(
        terms
            .iter()
            .filter(|t| t.from.as_deref() == Some("测试词"))
            .count()
            == 4
    );
}

#[test]
fn translations_share_by_corpus_evidence_and_absent_ones_get_nothing() {
    let glossary = [(
        "测试词".to_string(),
        vec![
            "alpha".to_string(),
            "beta".to_string(),
            "gamma delta".to_string(),
        ],
    )];
    // alpha in 3 units, beta in 1, gamma and delta nowhere.
    let r = Retriever::build(
        [
            ["alpha".to_string()],
            ["alpha".to_string()],
            ["alpha beta".to_string()],
        ],
        &glossary,
    );
    let terms = r.analyze_query("测试词");
    // ln(1+3) = 2·ln 2 against ln(1+1) = ln 2: two thirds and one third of the
    // cross-language weight.
    let (alpha, beta) = (CROSS_WEIGHT * 2.0 / 3.0, CROSS_WEIGHT / 3.0);
    assert!((weight(&terms, "alpha") - alpha).abs() < 1e-6, "{terms:?}");
    assert!((weight(&terms, "beta") - beta).abs() < 1e-6, "{terms:?}");
    assert_eq!(weight(&terms, "gamma"), 0.0);
    assert_eq!(weight(&terms, "delta"), 0.0);
}

#[test]
fn with_no_translation_in_the_corpus_they_share_equally() {
    let glossary = [(
        "测试词".to_string(),
        vec!["alpha".to_string(), "beta".to_string()],
    )];
    let r = Retriever::build([["unrelated".to_string()]], &glossary);
    let terms = r.analyze_query("测试词");
    assert_eq!(weight(&terms, "alpha"), CROSS_WEIGHT / 2.0);
    assert_eq!(weight(&terms, "beta"), CROSS_WEIGHT / 2.0);
}

#[test]
fn a_compound_whose_senses_the_site_never_uses_is_translated_by_its_parts() {
    // The dictionary's 调节器 is "regulator"; 调节 is "adjust" (among others).
    let r = site(&["a regulator circuit", "adjust the volume of the mixer"]);
    let terms = r.analyze_query("调节器");
    assert_eq!(
        weight(&terms, "adjust"),
        0.0,
        "regulator is on the site: {terms:?}"
    );
    let r = site(&["the mixer has channels", "adjust the volume of the mixer"]);
    let terms = r.analyze_query("调节器怎么写");
    assert!(weight(&terms, "adjust") > 0.0, "{terms:?}");
    assert_first(&r, "调节器怎么写", 1);
    // A lone character's senses stand for no part: 器 ("device") is not added.
    assert_eq!(weight(&terms, "devic"), 0.0, "{terms:?}");
}

#[test]
fn a_research_word_also_has_its_software_sense_and_the_site_picks() {
    // The research lexicon reads 引用 "citation|cite"; programs' translators write it for
    // "reference". A code site's page on references is found, a paper list's citations too.
    let code = site(&[
        "a mutable reference to a value",
        "the borrow checker rejects the program",
    ]);
    let terms = code.analyze_query("可变的引用");
    assert!(weight(&terms, "refer") > 0.0, "{terms:?}");
    assert_eq!(weight(&terms, "cite"), 0.0, "{terms:?}");
    assert_first(&code, "引用", 0);
    let papers = site(&["cite this paper as follows", "our lab and its members"]);
    let terms = papers.analyze_query("引用");
    assert!(weight(&terms, "cite") > 0.0, "{terms:?}");
    assert_eq!(weight(&terms, "refer"), 0.0, "{terms:?}");
}

#[test]
fn one_bigram_of_a_compound_in_an_example_string_does_not_make_the_site_write_it() {
    // 调节器 ("regulator"; 调节 "adjust"): an English page's example string holds 调节,
    // one of its bigrams, which is not the compound.
    let r = site(&[
        "const s = '调节'; // a string in another script",
        "adjust the volume of the mixer",
    ]);
    let terms = r.analyze_query("调节器怎么写");
    assert!(weight(&terms, "adjust") > 0.0, "{terms:?}");
    assert_first(&r, "调节器怎么写", 1);
    // Where the site writes the whole compound, it is the site's own word.
    let r = site(&["用调节器", "adjust the volume of the mixer"]);
    let terms = r.analyze_query("调节器怎么写");
    assert_eq!(weight(&terms, "adjust"), 0.0, "{terms:?}");
}

#[test]
fn question_and_filler_words_add_no_bigrams() {
    let r = Retriever::build([["卸载工具".to_string()]], &[]);
    let terms = r.analyze_query("请问卸载这个工具是怎么做的话");
    for filler in ["请问", "问卸", "是怎", "怎么", "这个", "的话", "做的"] {
        assert_eq!(weight(&terms, filler), 0.0, "{filler}: {terms:?}");
    }
    assert_eq!(weight(&terms, "卸载"), 1.0);
    assert_eq!(weight(&terms, "工具"), 1.0);
    // "而不是" is "rather than": 不是 is no word of the question's ("fault").
    let r = Retriever::build([["the default error page, not a fault".to_string()]], &[]);
    let terms = r.analyze_query("显示错误页面而不是默认的");
    assert_eq!(weight(&terms, "fault"), 0.0, "{terms:?}");
    assert!(weight(&terms, "default") > 0.0, "{terms:?}");
}

#[test]
fn a_query_naming_an_identifier_finds_the_page_that_writes_it() {
    let r = site(&["v v v v v else", "use v-if to render conditionally"]);
    let (_, ranked) = r.search("v-if 怎么用", 2, 0.0);
    assert_eq!(ranked[0].doc, 1, "{ranked:?}");
    let (_, ranked) = r.search("sys_platform", 2, 0.0);
    assert!(ranked.is_empty());
}

#[test]
fn a_question_about_an_operator_finds_the_page_that_writes_it() {
    let pages = [
        // Both operators' words, no operator: what ranked first before operators were terms.
        "the difference between element by element and short circuit boolean operators",
        "short circuit: a && b evaluates b only when a is true",
        "element by element: a & b on arrays, also x->y and --all",
    ];
    let r = site(&pages);
    assert_first(&r, "what is the difference between & and &&", 1);
    assert_first(&r, "what does & do", 2);
    // A symbol glued to a word is that word's spelling, on the page as in the question.
    let (terms, _) = r.search("x->y", 3, 0.0);
    assert!(terms.iter().all(|t| t.term != "->"), "{terms:?}");
    // The passages' lengths leave the operators out: each page weighs "element" as the
    // same page without its operators does.
    let without: Vec<String> = pages
        .iter()
        .map(|p| p.replace(" && ", " ").replace(" & ", " "))
        .collect();
    let plain = site(&without.iter().map(String::as_str).collect::<Vec<_>>());
    let scores = |r: &Retriever| {
        let (_, hits) = r.search("element", 3, 0.0);
        hits.iter().map(|h| (h.doc, h.score)).collect::<Vec<_>>()
    };
    assert_eq!(scores(&r), scores(&plain));
}

#[test]
fn english_questions_find_chinese_pages() {
    let r = site(&[
        "今天天气很好，适合出门。",
        "如何安装这个软件：先下载，再安装。",
    ]);
    let (terms, ranked) = r.search("How do I install it?", 2, 0.0);
    assert_eq!(ranked.first().map(|h| h.doc), Some(1), "{ranked:?}");
    // 安装 is the one Chinese word for "install" this site writes: it takes the whole
    // cross-language weight (one bigram, so no √ split).
    assert!(
        (weight(&terms, "安装") - CROSS_WEIGHT).abs() < 1e-6,
        "{terms:?}"
    );
    assert!(
        terms.iter().all(|t| t.term == "instal" || t.term == "安装"),
        "{terms:?}"
    );
    // A site without Chinese text gets no Chinese terms.
    let english = Retriever::build([["install".to_string()]], &[]);
    assert_eq!(english.analyze_query("install").len(), 1);
}

#[test]
fn on_a_bilingual_site_each_language_ranks_its_own_page_first_and_the_other_next() {
    let r = site(&[
        "How to install the package manager on Windows.",
        "如何在 Windows 上安装包管理器。",
        "Cooking rice in a pot takes twenty minutes.",
        "用锅煮米饭需要二十分钟。",
    ]);
    let order = |q: &str| -> Vec<u32> { r.search(q, 4, 0.0).1.iter().map(|h| h.doc).collect() };
    assert_eq!(order("install the package manager")[..2], [0, 1]);
    // 安装 + 包管理器: the two-word translation "package manager" outweighs the compound's
    // three bigrams here, so the English page scores higher; the question's language
    // still puts the Chinese version first.
    let raw = r.rank(&r.analyze_query("安装包管理器"), 4, 0.0);
    assert_eq!(raw[0].doc, 0, "{raw:?}");
    assert_eq!(order("安装包管理器")[..2], [1, 0]);
    assert_eq!(order("how long to cook rice")[..2], [2, 3]);
    assert_eq!(order("煮米饭要多久")[..2], [3, 2]);
}

#[test]
fn a_hit_brings_its_other_language_version_right_after_it() {
    let r = site(&[
        "The library lends books to students and teachers for two weeks.",
        "Students can borrow computers and cameras from the office.",
        "图书馆向学生和教师借出图书，期限两周。",
        "学生可以从办公室借电脑和相机。",
    ]);
    assert_eq!(r.versions(), &[2, 3, 0, 1]);
    let (_, hits) = r.search("can students borrow books from the library", 4, 0.0);
    let order: Vec<u32> = hits.iter().map(|h| h.doc).collect();
    assert_eq!(order, [0, 2, 1, 3]);
    // The version is scored as its page, so scores still descend.
    assert_eq!(hits[1].score, hits[0].score);
    assert!(hits.windows(2).all(|w| w[0].score >= w[1].score));
    // At most k: the version takes the place of the last hit.
    let (_, two) = r.search("library books for students", 2, 0.0);
    assert_eq!(two.iter().map(|h| h.doc).collect::<Vec<_>>(), [0, 2]);
    // One version of each page, for a prompt.
    let once = r.one_version_each(hits, 2);
    assert_eq!(once.iter().map(|h| h.doc).collect::<Vec<_>>(), [0, 1]);
}

#[test]
fn a_name_no_dictionary_has_is_matched_as_written() {
    let r = site(&[
        "韩国经济学家李会晟自2015年起担任委员会主席。",
        "元英宗是元仁宗的儿子，统治时间仅有两年。",
        "英国的经济学家研究国籍与移民。",
    ]);
    // 会 is a stopword and 李, 晟 single words: only the name as written finds the page.
    assert_first(&r, "李会晟的国籍是？", 0);
    // 登基 is nowhere on the site; the name still answers.
    assert_first(&r, "元英宗何时登基？", 1);
}

#[test]
fn a_transliterated_name_may_hold_ordinary_characters() {
    let r = site(&[
        "The Huguenots were French Protestants who settled abroad.",
        "Lindisfarne are a folk-rock group from Tyneside.",
        "Many settlers arrived from abroad in that century.",
    ]);
    // 胡 and 派 are words of their own ("beard", "faction"), 法 too ("law").
    assert_first(&r, "胡格诺派在哪里定居？", 0);
    assert_first(&r, "林迪斯法恩是什么乐队？", 1);
    // Three characters, one of them ordinary, are too few to be sure of a name: 胡格诺
    // spells Hogan exactly, but 胡 is "beard".
    let r = Retriever::build([["Ben Hogan won the open.".to_string()]], &[]);
    let analysis = r.analyze("胡格诺");
    assert!(
        !analysis.terms.iter().any(|t| t.term == "hogan"),
        "{analysis:?}"
    );
}

#[test]
fn a_transliterated_name_of_the_site_answers_on_its_own() {
    let r = site(&[
        "Lady Gaga sang at the halftime show of the final.",
        "The defense recovered the ball in the third quarter.",
        "Tickets for the final were sold out in March.",
    ]);
    // 女神 ("goddess") is nowhere on the site, but 卡卡 is its Gaga.
    assert_first(&r, "女神卡卡唱了什么歌？", 0);
}

#[test]
fn english_words_weigh_one_each_and_repeats_add_up() {
    let r = Retriever::build([["face model".to_string()]], &[]);
    let terms = r.analyze_query("Face face the model");
    assert_eq!(weight(&terms, "face"), 2.0);
    assert_eq!(weight(&terms, "model"), 1.0);
    assert_eq!(weight(&terms, "the"), 0.0);
}

#[test]
fn a_chinese_words_bigrams_share_one_words_weight() {
    let r = Retriever::build([["超级市场播放国歌".to_string()]], &[]);
    let terms = r.analyze_query("超级市场国歌");
    for bigram in ["超级", "级市", "市场"] {
        assert!(
            (weight(&terms, bigram) - 1.0 / 3.0).abs() < 1e-6,
            "{terms:?}"
        );
    }
    assert_eq!(weight(&terms, "国歌"), 1.0);
    // Where the two words meet: half a word.
    assert_eq!(weight(&terms, "场国"), CROSS_BIGRAM_WEIGHT);
}

#[test]
fn a_long_word_repeated_on_sibling_pages_does_not_drown_the_other_word() {
    // An article's pages all name its subject (a word of four characters); only one
    // has the other word of the question.
    let r = site(&[
        "超级市场开门了，超级市场很大。",
        "开幕时歌手唱了国歌。",
        "超级市场卖水果。",
        "超级市场在河边。",
    ]);
    assert_first(&r, "谁在超级市场唱了国歌？", 1);
}

#[test]
fn a_passage_with_more_of_the_words_outranks_one_with_two_of_them_side_by_side() {
    let r = site(&[
        "河流污染很严重。",
        "河流，污染，治理，都要认真谈。",
        "河流很长。",
        "今天天气好。",
    ]);
    assert_first(&r, "河流污染治理", 1);
    // Written together, two words still outrank the same two words apart.
    assert_first(&r, "河流污染", 0);
}

#[test]
fn documents_score_as_their_best_passage() {
    let r = Retriever::build(
        [
            vec!["cooking".to_string(), "face face recognition".to_string()],
            vec!["face".to_string()],
        ],
        &[],
    );
    let (_, ranked) = r.search("face recognition", 5, 0.0);
    assert_eq!(ranked.len(), 2);
    assert_eq!((ranked[0].doc, ranked[0].passage), (0, 1));
    assert_eq!(ranked[1].doc, 1);
    assert_eq!(r.passages(), 3);
    assert_eq!(r.documents(), 2);
}

/// The retriever of the sample knowledge base (many proper nouns for names to match).
fn sample() -> &'static Retriever {
    static INDEX: std::sync::OnceLock<crate::SearchIndex> = std::sync::OnceLock::new();
    INDEX
        .get_or_init(|| {
            let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../knowledge_base.json");
            let text = std::fs::read_to_string(path).expect("the sample KB is in the repo");
            let kb = crate::KnowledgeBase::from_json_str(&text, path).expect("sample KB parses");
            crate::SearchIndex::new(kb, "test")
        })
        .retriever()
}

/// Analyses `query` and returns (terms, skeletons computed, lexicon probes made).
fn counted(r: &Retriever, query: &str) -> (Vec<QueryTerm>, usize, usize) {
    translit::steps::SKELETONS.with(|n| n.set(0));
    lexicon::steps::PROBES.with(|n| n.set(0));
    let terms = r.analyze_query(query);
    (
        terms,
        translit::steps::SKELETONS.with(std::cell::Cell::get),
        lexicon::steps::PROBES.with(std::cell::Cell::get),
    )
}

/// The work any query may cost: a fixed budget of name skeletons, a bounded number of
/// lexicon probes per character, and a bounded number of distinct terms.
fn assert_bounded(r: &Retriever, query: &str) {
    let chars = query.chars().count();
    let (terms, skeletons, probes) = counted(r, query);
    assert!(
        skeletons <= MAX_NAME_PROBES,
        "{skeletons} skeletons for {chars} chars"
    );
    // Segmentation probes the dictionary at most once per prefix length, for the first
    // MAX_ANALYSED_HAN_CHARS Han characters only.
    let analysed = chars.min(MAX_ANALYSED_HAN_CHARS);
    assert!(probes <= 8 * analysed, "{probes} probes for {chars} chars");
    assert!(terms.len() <= MAX_QUERY_TERMS, "{} terms", terms.len());
}

#[test]
fn repeated_name_characters_cost_a_bounded_number_of_skeletons() {
    // The reported denial of service: one name character repeated made matching try
    // every sub-span of every length (n^3.5 in time).
    for c in ['临', '德', '诺', '卡'] {
        for n in [20, 200, 2000, 4000] {
            assert_bounded(sample(), &c.to_string().repeat(n));
        }
    }
}

#[test]
fn a_single_character_word_matches_the_character_in_a_longer_word() {
    // Both pages name the city; only the second writes 郡 "county", in a name of its
    // own (杜瓦尔郡), so no bigram of the question is on it. The first is shorter, and
    // wins whenever the character does not count.
    let r = site(&[
        "杰克逊维尔的河流很长。",
        "杰克逊维尔位于杜瓦尔郡，是一座大城市。",
    ]);
    let q = "杰克逊维尔在哪个郡？";
    let analysis = r.analyze(q);
    let term = analysis.terms.iter().find(|t| t.term == "郡*");
    assert_eq!(
        term.map(|t| t.weight),
        Some(CHAR_WEIGHT),
        "{:?}",
        analysis.terms
    );
    let (_, hits) = r.search(q, 2, 0.0);
    assert_eq!(hits.first().map(|h| h.doc), Some(1), "{:?}", analysis.terms);
    // A character standing alone in the question keeps its own exact term.
    let quoted = r.analyze_query("“郡”");
    assert!(quoted.iter().any(|t| t.term == "郡"), "{quoted:?}");
    assert!(!quoted.iter().any(|t| t.term == "郡*"), "{quoted:?}");
    // Ranking analysed terms matches the character too.
    let hits = r.rank(&analysis.terms, 2, 0.0);
    assert_eq!(hits.first().map(|h| h.doc), Some(1));
    // And the character term counts the one page writing it (the rewrite's ceiling).
    assert_eq!(r.doc_freq("郡*"), 1);
    assert_eq!(r.doc_freq("杰克"), 2);
}

#[test]
fn han_text_past_the_budget_is_matched_by_its_bigrams_only() {
    let r = site(&["人脸识别 face recognition", "苹果派的做法"]);
    let filler = "的".repeat(MAX_ANALYSED_HAN_CHARS);
    // Within the budget, 人脸识别 is a word with its English translation...
    let near = r.analyze(&format!("人脸识别{filler}"));
    assert!(
        near.terms.iter().any(|t| t.term == "recognit"),
        "{:?}",
        near.terms
    );
    // ...past it, only its bigrams: the Chinese page still matches, nothing is
    // translated, and the analysed part's words come first.
    let far = r.analyze(&format!("{filler}人脸识别"));
    assert!(
        far.terms.iter().all(|t| t.from.is_none()),
        "{:?}",
        far.terms
    );
    assert!(far.terms.iter().any(|t| t.term == "识别"));
    let (_, hits) = r.search_covering(&format!("{filler}人脸识别"), 2, 0.0, 0.0);
    assert_eq!(hits.first().map(|h| h.doc), Some(0));
}

#[test]
fn names_are_still_found_inside_long_runs_of_name_characters() {
    // The corpus is built here so the expected name is certain.
    let r = Retriever::build([["Jared Allen met Norman".to_string()]], &[]);
    let terms = r.analyze_query(&format!("{}贾里德{}", "临".repeat(200), "临".repeat(600)));
    assert!(
        terms.iter().any(|t| t.from.as_deref() == Some("贾里德")),
        "{terms:?}"
    );
    let (_, skeletons, _) = counted(&r, &"临".repeat(4000));
    assert!(skeletons <= MAX_NAME_PROBES);
}

#[test]
fn overlapping_names_prefer_exact_then_longer_then_leftmost() {
    let r = Retriever::build([["Jared and Norman wrote".to_string()]], &[]);
    let terms = r.analyze_query("贾里德诺曼");
    let from: Vec<_> = terms.iter().filter_map(|t| t.from.clone()).collect();
    assert!(from.contains(&"贾里德".to_string()), "{terms:?}");
    assert!(from.contains(&"诺曼".to_string()), "{terms:?}");
}

#[test]
fn distinct_terms_are_capped() {
    let words: Vec<String> = (0..5000).map(|i| format!("w{i}x")).collect();
    let terms = sample().analyze_query(&words.join(" "));
    assert_eq!(terms.len(), MAX_QUERY_TERMS);
    // Repeats of a kept term still add weight after the cap is reached.
    let mut q = words.join(" ");
    q.push_str(" w0x w0x");
    assert_eq!(weight(&sample().analyze_query(&q), "w0x"), 3.0);
}

use proptest::prelude::*;

/// Queries of up to 4,000 characters (the chat limit) built from the pieces that cost
/// query analysis the most.
fn costly_query() -> impl Strategy<Value = String> {
    let piece = prop_oneof![
        // Characters Chinese uses to spell names, alone and repeated.
        proptest::sample::select(vec![
            '临', '德', '诺', '曼', '卡', '贾', '里', '斯', '特', '尔'
        ])
        .prop_flat_map(|c| (1usize..400).prop_map(move |n| c.to_string().repeat(n))),
        "[\\u{4e00}-\\u{9fff}]{1,40}",
        "[a-z]{1,12}( [a-z]{1,12}){0,20}",
        "[\\u{1f300}-\\u{1f6ff}\\u{200d}\\u{fe0f}]{1,8}",
        "(a\\u{0301}\\u{0327}){1,20}",
    ];
    proptest::collection::vec(piece, 0..40)
        .prop_map(|parts| parts.concat().chars().take(4000).collect::<String>())
}

#[test]
fn a_translation_matches_the_irregular_forms_of_its_word() {
    // 演唱 translates to "sing"; the page says "sang".
    let r = site(&[
        "The choir sang at the opening.",
        "The stadium opened in 1990.",
    ]);
    let (_, hits) = r.search("演唱", 3, 0.0);
    assert_eq!(hits.iter().map(|h| h.doc).collect::<Vec<_>>(), vec![0]);
}

/// Docs-site questions name things the way users say them (同时 "at once", 账号密码
/// "account and password", 公共仓库 "public repository"), the pages the way docs
/// write them (concurrently, credentials, public registry). The software lexicon
/// carries those senses, so the answering page wins over one sharing a looser word.
#[test]
fn software_paraphrases_reach_the_words_docs_use() {
    let site = |pages: [&str; 2]| Retriever::build(pages.map(|p| [p.to_string()]), &[]);
    let cases = [
        (
            "同时跑好几个命令",
            [
                "It is safe to run multiple commands concurrently.",
                "Each command prints the time it took to run.",
            ],
        ),
        (
            "账号密码会被保存吗",
            [
                "Credentials are never saved to the lockfile.",
                "Your account page shows your plan.",
            ],
        ),
        (
            "怎么防止误传到公共仓库",
            [
                "Preventing accidental uploads to a public registry.",
                "Shared helpers live in the common module.",
            ],
        ),
    ];
    for (query, pages) in cases {
        assert_first(&site(pages), query, 0);
    }
}

/// 别的 is "other" first and "else" second: with "other" an English stopword, "else"
/// alone would carry the word. A word whose first sense is grammatical is skipped as a
/// stopword is, on either side of the index (its bigram too).
#[test]
fn a_word_whose_first_sense_is_grammatical_is_not_expanded() {
    let r = Retriever::build(
        [["The else branch runs on other systems. 别的系统".to_string()]],
        &[],
    );
    let terms = r.analyze_query("别的系统");
    assert_eq!(weight(&terms, "els"), 0.0, "{terms:?}");
    assert_eq!(weight(&terms, "别的"), 0.0, "{terms:?}");
    assert!(weight(&terms, "system") > 0.0, "{terms:?}");
    assert_eq!(weight(&terms, "系统"), 1.0, "{terms:?}");
}

/// A site of `n` passages: one about an anthem, the others all "effective".
fn anthem_site(n: usize) -> Retriever {
    let mut docs = vec![["The national anthem opened the final game.".to_string()]];
    for i in 1..n {
        docs.push([format!(
            "Page {i} sets the effective options of module {i}."
        )]);
    }
    Retriever::build(docs, &[])
}

#[test]
fn one_word_rare_on_a_large_site_answers_a_mostly_unknown_question() {
    let large = anthem_site(4 * RARE_PASSAGES);
    // A word the site never uses, and one it has in a single passage.
    assert_first(&large, "quixotic anthem", 0);
    // A word on most of its pages is no such evidence.
    assert!(large.search("quixotic effective", 3, 0.0).1.is_empty());
    // Beside two unknown words, the rare one is an incidental match.
    assert!(large.search("quixotic zebras anthem", 3, 0.0).1.is_empty());
    // On a small site every word is in a large share of its passages.
    let small = anthem_site(RARE_PASSAGES / 4);
    assert!(small.search("quixotic anthem", 3, 0.0).1.is_empty());
}

/// A short page named for stashing, and a long manual with one passage holding the
/// same words in fewer others (which gives it the higher passage score).
fn stash_site() -> Vec<(String, Vec<String>)> {
    let stash = (
        "git-stash\nStash the changes in a dirty working directory away".to_string(),
        vec![
            "Stash the changes in a dirty working directory away when you want to \
             record the current state and go back to a clean one."
                .to_string(),
            "Options: --include-untracked, --keep-index, --quiet.".to_string(),
        ],
    );
    let mut manual = vec!["The user manual covers branches, merges and history.".to_string()];
    manual.extend((0..40).map(|i| format!("Chapter {i}: commits, trees and blobs.")));
    manual.push(
        "Stash the changes in a dirty working directory away to record the current \
         state and go back to a clean one."
            .to_string(),
    );
    let manual = ("Git User Manual\nBranches\nHistory".to_string(), manual);
    // Other pages, so the names' IDF is a site's rather than two pages'.
    let others = (0..20).map(|i| {
        let name = format!("git-command{i}\nDo thing {i} to the repository");
        (name.clone(), vec![name])
    });
    [manual, stash].into_iter().chain(others).collect()
}

/// A function named by a stopword, among pages that use the word as English.
fn keyword_site() -> Vec<(String, Vec<String>)> {
    let page = |title: &str, text: &str| (title.to_string(), vec![text.to_string()]);
    let mut pages = vec![
        page(
            "where",
            "Filters an array to only the elements containing a matching value.",
        ),
        page(
            "Filters",
            "Where a filter is set, the function filters the array by the value given.",
        ),
    ];
    pages.extend((0..20).map(|i| {
        page(
            &format!("Topic {i}"),
            &format!("Where the value {i} is found, the array is kept as it was."),
        )
    }));
    pages
}

#[test]
fn a_chinese_question_quoting_a_stopword_finds_the_page_it_names() {
    let r = Retriever::build_fielded(keyword_site(), &[]);
    // Written in Chinese text, "where" names the function.
    let (terms, _) = r.search("where 函数怎么按值筛选数组", 3, 0.0);
    assert!(weight(&terms, "~where") > 0.0, "{terms:?}");
    assert_first(&r, "where 函数怎么按值筛选数组", 0);
    // Without the keyword the page about filters, which says "where" as English, wins.
    assert_first(&r, "函数怎么按值筛选数组", 1);
    // In an English question the word is English: no keyword term.
    let (terms, _) = r.search("where do I filter an array by value", 3, 0.0);
    assert!(terms.iter().all(|t| !t.term.starts_with('~')), "{terms:?}");
    // Nor in a run of three Latin words, an English phrase.
    let (terms, _) = r.search("where is it 在哪里", 3, 0.0);
    assert!(terms.iter().all(|t| !t.term.starts_with('~')), "{terms:?}");
}

#[test]
fn a_page_named_for_the_question_beats_the_same_words_deep_in_a_long_page() {
    let pages = stash_site();
    let fielded = Retriever::build_fielded(pages.clone(), &[]);
    assert_first(&fielded, "stash changes", 1);
    // Without the naming fields the long page's best passage wins: the field is
    // what decides it.
    let flat = Retriever::build(pages.into_iter().map(|(_, p)| p), &[]);
    assert_first(&flat, "stash changes", 0);
}

#[test]
fn a_page_the_question_names_outranks_the_same_text_under_another_name() {
    let text = || vec!["Timers schedule a callback to run after a delay.".to_string()];
    let mut pages = vec![
        ("Timers Manual".to_string(), text()),
        ("Timers Handbook".to_string(), text()),
        (
            "6.1 Alarms Manual".to_string(),
            vec!["Alarms ring.".to_string()],
        ),
        (
            "git-mv Manual".to_string(),
            vec!["Move or rename a file.".to_string()],
        ),
    ];
    // "Manual" and "Topic" are in most titles, as a generator's boilerplate is.
    pages.extend((0..20).map(|i| (format!("Topic {i} Manual"), vec![format!("Topic {i}.")])));
    let r = Retriever::build_fielded(pages, &[]);
    let named = |q: &str| {
        let (terms, _) = r.search(q, 3, 0.0);
        r.named_documents(terms.iter().map(|t| t.term.as_str()))
    };
    // Said whole, less the boilerplate; "Handbook" is in one title, so it must be said.
    assert_eq!(named("timers"), [0]);
    assert_eq!(named("timers handbook"), [0, 1]);
    // A section's number need not be said; a word of the title alone is not its name.
    assert_eq!(named("alarms"), [2]);
    // An identifier is named by its parts, joined or not.
    assert_eq!(named("git mv"), [3]);
    assert_eq!(named("git-mv"), [3]);
    assert!(named("callback").is_empty());
    assert!(named("topic manual").is_empty());
    // The two pages match alike but for the name: the named one scores NAMED_WEIGHT more.
    let (_, hits) = r.search("timers", 2, 0.0);
    assert_eq!(hits.iter().map(|h| h.doc).collect::<Vec<_>>(), [0, 1]);
    let ratio = hits[0].score / hits[1].score;
    assert!((ratio - NAMED_WEIGHT).abs() < 1e-4, "{hits:?}");
}

#[test]
fn a_document_gains_nothing_from_passages_past_its_best_few() {
    let answer = "Rebase replays commits onto another base.".to_string();
    let mention = |i: usize| format!("Section {i} mentions commits once.");
    // The same page twice: with as many passages holding a query word as the score reads
    // after its best, and with 198 of them.
    let few: Vec<String> = std::iter::once(answer.clone())
        .chain((0..NEXT_PASSAGES).map(mention))
        .collect();
    let padded: Vec<String> = std::iter::once(answer)
        .chain((0..198).map(mention))
        .collect();
    let pages = vec![
        ("Rebasing".to_string(), few),
        ("Rebasing".to_string(), padded),
    ];
    let r = Retriever::build_fielded(pages, &[]);
    let (_, hits) = r.search("rebase commits", 2, 0.0);
    assert_eq!(hits.len(), 2, "{hits:?}");
    let (short, long) = (hits[0], hits[1]);
    assert_eq!(
        (short.doc, long.doc),
        (0, 1),
        "the shorter page keeps its place"
    );
    assert!((short.score - long.score).abs() < 1e-5, "{hits:?}");
}

#[test]
fn a_page_answering_in_two_sections_outranks_one_mentioning_the_words_once() {
    let answer = "Rebase replays commits onto another base.";
    let pages = vec![
        (
            "Rebasing".to_string(),
            vec![answer.to_string(), "Dinner is at eight.".to_string()],
        ),
        (
            "Rebasing".to_string(),
            vec![
                answer.to_string(),
                "Its commits can be reordered as well.".to_string(),
            ],
        ),
    ];
    let r = Retriever::build_fielded(pages, &[]);
    let (_, hits) = r.search("rebase commits", 2, 0.0);
    assert_eq!(hits.iter().map(|h| h.doc).collect::<Vec<_>>(), [1, 0]);
    // Both show the passage that answers best; the second passage adds a fraction of it.
    assert_eq!((hits[0].passage, hits[1].passage), (0, 0), "{hits:?}");
    assert!(
        hits[0].score < hits[1].score * (1.0 + NEXT_PASSAGE_WEIGHT),
        "{hits:?}"
    );
    // A query that is itself a passage (a model's hypothetical answer) is matched against
    // one passage at a time: the two pages' best passages are the same, so they tie.
    let (_, hits) = r.search_as(
        "rebase commits",
        DocScore::BestPassage,
        2,
        0.0,
        MIN_COVERAGE,
    );
    assert_eq!(hits.len(), 2, "{hits:?}");
    assert!((hits[0].score - hits[1].score).abs() < 1e-6, "{hits:?}");
}

#[test]
fn of_two_pages_matching_alike_the_one_more_pages_link_to_ranks_first() {
    // Two commands' pages that answer "sign commits" in the same words, and other pages
    // that make the site's median.
    let command = |name: &str| {
        let text = format!("{name}\nCreate commits. Use --gpg-sign to sign commits with GPG.");
        (name.to_string(), vec![text])
    };
    let mut pages = vec![command("alpha-tool"), command("omega-tool")];
    pages.extend((0..10).map(|i| {
        (
            format!("topic {i}"),
            vec![format!("Topic {i} of the manual.")],
        )
    }));
    let mut r = Retriever::build_fielded(pages, &[]);
    let ranked = |r: &Retriever| {
        let (_, hits) = r.search("sign commits with GPG", 2, 0.0);
        hits.iter().map(|h| (h.doc, h.score)).collect::<Vec<_>>()
    };
    let before = ranked(&r);
    assert!(
        (before[0].1 - before[1].1).abs() < 1e-6 && before[0].0 == 0,
        "equal text, equal scores: the first page wins the tie {before:?}"
    );
    let mut counts = vec![Some(3); 12];
    counts[0] = Some(0);
    counts[1] = Some(40);
    r.weigh_links(&counts);
    let after = ranked(&r);
    assert_eq!(
        after[0].0, 1,
        "linked from 40 pages, against none: {after:?}"
    );
    // A small prior: each score moves by a few per cent, not by the text's measure.
    for (doc, score) in &after {
        let was = before
            .iter()
            .find(|(d, _)| d == doc)
            .map(|(_, s)| *s)
            .unwrap();
        assert!((score / was - 1.0).abs() < 0.1, "{before:?} {after:?}");
    }
    // The text's own scores are there to be had (the rewrite's tests measure the text).
    let (_, hits) = r.search("sign commits with GPG", 2, 0.0);
    for h in r.text_scores(&hits) {
        let was = before
            .iter()
            .find(|(d, _)| *d == h.doc)
            .map(|(_, s)| *s)
            .unwrap();
        assert!((h.score - was).abs() < 1e-5, "{hits:?} {before:?}");
    }
    // Counted for nobody, or all alike: nothing moves.
    r.weigh_links(&[None; 12]);
    assert_eq!(ranked(&r), before);
    r.weigh_links(&[Some(5); 12]);
    assert_eq!(ranked(&r), before);
    // A page nobody counted for stands as the site's median, above the page none links to.
    counts[1] = None;
    r.weigh_links(&counts);
    assert_eq!(ranked(&r)[0].0, 1, "{:?}", ranked(&r));
}

#[test]
fn a_question_naming_an_entry_returns_it_whatever_else_it_asks() {
    // A homepage whose project entry keeps its star count as a number: "star" is a
    // word the site never writes, and carries most of the question's weight.
    let mut docs: Vec<(String, Vec<String>)> = vec![(
        "InsightFace".to_string(),
        vec!["InsightFace\n2D and 3D face analysis project".to_string()],
    )];
    docs.extend((0..3).map(|i| {
        (
            format!("Face paper {i}"),
            vec![format!(
                "Face paper {i}\nCode in the InsightFace repository."
            )],
        )
    }));
    docs.extend((0..26).map(|i| {
        (
            format!("Paper {i}"),
            vec![format!(
                "Paper {i}\nVision language pretraining, topic {i}."
            )],
        )
    }));
    let fielded = Retriever::build_fielded(docs.clone(), &[]);
    assert_first(&fielded, "InsightFace 有多少 star", 0);
    // Without naming fields the no-answer rule refuses it.
    let flat = Retriever::build(docs.into_iter().map(|(_, p)| p), &[]);
    assert!(flat.search("InsightFace 有多少 star", 3, 0.0).1.is_empty());
    // A word many entries are named with is no such evidence.
    assert!(fielded.search("paper quixotic zebras", 3, 0.0).1.is_empty());
}

proptest! {
    #![proptest_config(proptest::test_runner::Config {
        cases: 64,
        failure_persistence: None,
        ..proptest::test_runner::Config::default()
    })]

    #[test]
    fn any_query_up_to_the_chat_limit_analyses_in_bounded_steps(
        query in costly_query()
    ) {
        assert_bounded(sample(), &query);
    }
}

/// The term of `word` on `r`'s site (stemmed as the index stems it).
fn term_of(r: &Retriever, word: &str) -> String {
    r.latin_term(word).expect("a content word")
}

#[test]
fn two_words_the_site_writes_as_one_are_joined() {
    let r = site(&[
        "Open the connection with the READONLY flag to forbid writes.",
        "The last_insert_rowid function returns the rowid of the newest row.",
        "A filename is resolved against the working directory.",
        "Read the file, then write only the changed rows back.",
    ]);
    // Written apart, a hyphen between, or a question word after the first.
    let terms = r.analyze_query("open the database read-only");
    assert_eq!(weight(&terms, &term_of(&r, "readonly")), JOINED_WEIGHT);
    let terms = r.analyze_query("how is a file name resolved");
    assert_eq!(weight(&terms, &term_of(&r, "filename")), JOINED_WEIGHT);
    // "the id of the row": the other way round, across "of".
    let terms = r.analyze_query("get the id of the row I just inserted");
    assert_eq!(weight(&terms, &term_of(&r, "rowid")), JOINED_WEIGHT);
    // The words still count on their own.
    assert_eq!(weight(&terms, &term_of(&r, "row")), 1.0);
    // ...and the page that writes the joined word comes first.
    assert_first(&r, "get the id of the row I just inserted", 1);
}

#[test]
fn words_are_joined_only_where_the_site_writes_the_join_and_in_spoken_order() {
    let r = site(&[
        "SELECT name FROM sqlite_schema lists alltables and rowid values; idrow is a typo.",
        "Tables hold rows.",
    ]);
    // A question word does not lead a join ("all tables" is not `alltables`).
    let terms = r.analyze_query("list all tables");
    assert_eq!(weight(&terms, &term_of(&r, "alltables")), 0.0, "{terms:?}");
    // Without "of" between them, two words join only in the order written.
    let terms = r.analyze_query("row id");
    assert_eq!(weight(&terms, &term_of(&r, "rowid")), JOINED_WEIGHT);
    assert_eq!(weight(&terms, &term_of(&r, "idrow")), 0.0);
    let terms = r.analyze_query("id row");
    assert_eq!(weight(&terms, &term_of(&r, "rowid")), 0.0);
    assert_eq!(weight(&terms, &term_of(&r, "idrow")), JOINED_WEIGHT);
    // A join the site never writes adds nothing.
    let terms = r.analyze_query("table rows");
    assert!(terms.iter().all(|t| t.weight == 1.0), "{terms:?}");
    // Digits are no word to join (`v` + `2`), and Chinese between two words parts them.
    let terms = r.analyze_query("row 表 id");
    assert_eq!(weight(&terms, &term_of(&r, "rowid")), 0.0);
}

#[test]
fn two_words_find_the_identifier_they_name() {
    let r = site(&[
        // A long page that says both words often, and the command's own short page.
        "Every git command, from git init to git log, records or reads a commit. \
         A commit has a parent commit; git walks commits from the newest commit.",
        "git-commit - Record changes to the repository.",
        "Set unique_together in Meta for fields unique as a set.",
    ]);
    let terms = r.analyze_query("options of git commit");
    assert_eq!(weight(&terms, "git-commit"), JOINED_WEIGHT, "{terms:?}");
    assert_first(&r, "git commit", 1);
    let terms = r.analyze_query("make two fields unique together");
    assert_eq!(
        weight(&terms, "unique_together"),
        JOINED_WEIGHT,
        "{terms:?}"
    );
    // An identifier the question writes itself counts once, as written.
    let terms = r.analyze_query("git-commit options");
    assert_eq!(weight(&terms, "git-commit"), 1.0, "{terms:?}");
    // Only words written next to each other, in order.
    let terms = r.analyze_query("commit with git");
    assert_eq!(weight(&terms, "git-commit"), 0.0, "{terms:?}");
}

#[test]
fn adverbs_of_degree_grade_a_word_and_stand_for_nothing() {
    let r = site(&[
        "Special characters must be escaped.",
        "Inserts are slow outside a transaction.",
    ]);
    for q in ["插入特别慢", "插入非常慢", "插入十分慢"] {
        let terms = r.analyze_query(q);
        assert_eq!(weight(&terms, "special"), 0.0, "{q}: {terms:?}");
        assert!(weight(&terms, "slow") > 0.0, "{q}: {terms:?}");
        let (_, ranked) = r.search(q, 1, 0.0);
        assert_eq!(ranked.first().map(|h| h.doc), Some(1), "{q}");
    }
    // 比较 is also the verb "compare", and stays one.
    let r = site(&["Compare two branches.", "Branches are cheap."]);
    assert!(weight(&r.analyze_query("比较两个分支"), "compar") > 0.0);
}

#[test]
fn a_question_asking_line_by_line_finds_the_page_about_lines() {
    // 一行 is a dictionary word, "party; delegation"; 一行一行 is "line by line". The
    // second page holds "read" and "file" too, and the delegation words the pair spells.
    let r = Retriever::build(
        [
            vec!["Read a file line by line with readline.".to_string()],
            vec!["The party delegation will read the file.".to_string()],
        ],
        &[],
    );
    assert_first(&r, "怎么一行一行地读取文件", 0);
}
