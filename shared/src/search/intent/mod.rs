//! The question recogniser: listing and filter questions ("他发表过哪些 CVPR 论文",
//! "projects with more than 1000 stars") read into [`Filters`] and an [`Order`], by rules,
//! in Chinese and English, without a model call.
//!
//! # How a question is read
//! The question is cut into tokens (Latin/digit words, single Han characters, `+` and `-`)
//! and phrases are taken out of it in this order: star thresholds ("more than 1000 stars",
//! "超过 1000 star"), years and year ranges ("2020-2023", "since 2021", "2020 年以来"),
//! venues and author names known to the knowledge base (plus a few common venues, and
//! Chinese names the glossary maps to an author), "with code", ordering phrases ("最多
//! star", "latest"), type words ("论文", "papers", "开源项目") and listing cues ("哪些",
//! "list", "all", "how many"). What is left, minus function words, is the question's
//! content: it is ranked by BM25 within the filtered entries.
//!
//! # When a question is a listing
//! - it names a year, venue, star threshold or "with code" and also a type word, a cue or
//!   nothing else ("2024 年的论文", "CVPR papers", "ICCV 2025");
//! - it names an author or a role together with a type word or a cue ("Kaicheng Yang 的论文");
//! - it has a type word with a listing cue ("有哪些开源项目", "which papers…", "list all
//!   papers") or an ordering phrase ("最多 star 的项目", "latest papers").
//!
//! A singular "which paper…" or a question that refers back ("这篇论文讲了什么") is not
//! a listing unless it names a filter. Everything else is not recognised and goes through
//! the ordinary ranking unchanged.

mod question;
mod ranges;

use super::filter::{words, Facets, Filters, Order};
use crate::kb::KnowledgeBase;
use question::{tokenize, Question, Tok};
use ranges::{take_stars, take_years};

/// What a listing question asks for.
#[derive(Debug, Clone, PartialEq)]
pub struct Intent {
    /// The conditions read from the question.
    pub filters: Filters,
    /// The order it asks for, if any ("latest", "最多 star").
    pub order: Option<Order>,
    /// The words left once the listing phrases are taken out (may be empty).
    pub content: String,
}

/// Venues, author names and glossary names of one knowledge base, for the recogniser.
#[derive(Debug, Clone, Default)]
pub struct Vocabulary {
    /// Venue names as lowercase words (`["acm", "mm"]`), longest first. (Boxed: a served
    /// index holds one vocabulary, kept small where it is moved around.)
    venues: Box<Phrases>,
    /// Authors of two or more words, lowercase, with the name as written; longest first.
    authors: Box<Phrases>,
    /// Chinese names (from the glossary) of authors, with the author's name.
    zh_authors: Box<Phrases>,
}

/// Phrases (token sequences, each with the name it stands for) in the order they are
/// tried, indexed by their first two tokens (or their only one): a question looks up the
/// phrases that start at each of its positions instead of trying every phrase, so a
/// listing question costs the same against six authors or eighty thousand.
#[derive(Debug, Clone, Default)]
struct Phrases {
    items: Vec<(Vec<Tok>, String)>,
    by_start: rustc_hash::FxHashMap<(Tok, Option<Tok>), Vec<u32>>,
}

impl Phrases {
    fn new(items: Vec<(Vec<Tok>, String)>) -> Self {
        let mut by_start: rustc_hash::FxHashMap<_, Vec<u32>> = Default::default();
        for (i, (pattern, _)) in items.iter().enumerate() {
            if let Some(first) = pattern.first() {
                let key = (first.clone(), pattern.get(1).cloned());
                by_start.entry(key).or_default().push(i as u32);
            }
        }
        Self { items, by_start }
    }

    /// The first phrase, in order, found over unused tokens of `q`; it is marked used.
    fn take_first(&self, q: &mut Question) -> Option<&str> {
        let mut candidates: Vec<u32> = Vec::new();
        for (i, tok) in q.toks.iter().enumerate() {
            let next = q.toks.get(i + 1).cloned();
            for key in [(tok.clone(), None), (tok.clone(), next)] {
                if let Some(ids) = self.by_start.get(&key) {
                    candidates.extend_from_slice(ids);
                }
            }
        }
        candidates.sort_unstable();
        candidates.dedup();
        candidates.into_iter().find_map(|id| {
            let (pattern, name) = &self.items[id as usize];
            let at = q.find(pattern, 0)?;
            q.mark(at, pattern.len());
            Some(name.as_str())
        })
    }
}

/// A name's words as the question's tokens.
fn word_toks(words: &[String]) -> Vec<Tok> {
    words.iter().map(|w| Tok::Word(w.clone())).collect()
}

/// Venues recognised even when no entry has them, so "SIGGRAPH papers" is a listing
/// (with no match) rather than a keyword search.
const COMMON_VENUES: &[&str] = &[
    "cvpr", "iccv", "eccv", "neurips", "nips", "icml", "iclr", "aaai", "ijcai", "acl", "emnlp",
    "naacl", "acm mm", "wacv", "bmvc", "tpami", "ijcv", "siggraph", "kdd", "cvprw", "iccvw",
    "eccvw", "arxiv", "preprint",
];

impl Vocabulary {
    /// Collects the venues, authors and glossary names of `kb` (`facets` are its entries'
    /// parsed fields, in the same order).
    pub fn of(kb: &KnowledgeBase, facets: &[Facets]) -> Self {
        // Sets, not scans of what is kept so far: a KB of thousands of distinct names
        // costs linear time at every cold start (a scan cost 3 s at 40,000 authors).
        // The entries' venues first, then the common ones they lack.
        let mut venues: Vec<Vec<String>> = Vec::new();
        let mut seen: rustc_hash::FxHashSet<Vec<String>> = Default::default();
        for doc in &kb.documents {
            let Some(v) = doc.venue.as_deref() else {
                continue;
            };
            // The venue's name is its words before any number or parenthesis.
            let head = v.split(['(', '（']).next().unwrap_or("");
            let name: Vec<String> = words(head)
                .into_iter()
                .take_while(|w| !w.bytes().all(|b| b.is_ascii_digit()))
                .collect();
            // "GitHub 2020" names where code lives, not a venue a visitor asks about.
            if !name.is_empty() && name != ["github"] && seen.insert(name.clone()) {
                venues.push(name);
            }
        }
        let from_entries = venues.len();
        for common in COMMON_VENUES.iter().map(|v| words(v)) {
            if seen.insert(common.clone()) {
                venues.push(common);
            }
        }
        // Where one pattern stands for two venues the first wins: the entries' own
        // spelling, then a workshop's other spelling, then a common venue.
        let as_is = |v: &Vec<String>| (v.clone(), v.join(" "));
        let mut venues: Vec<(Vec<String>, String)> = venues[..from_entries]
            .iter()
            .map(as_is)
            .chain(workshop_aliases(&venues, &seen))
            .chain(venues[from_entries..].iter().map(as_is))
            .collect();
        // Longest first, so "acm mm" is taken before a shorter name could split it.
        venues.sort_by_key(|(v, _)| std::cmp::Reverse(v.len()));
        let mut authors: Vec<(Vec<String>, String)> = Vec::new();
        let mut by_words: rustc_hash::FxHashMap<Vec<String>, usize> = Default::default();
        for f in facets {
            for name in &f.authors {
                if name.len() >= 2 && !by_words.contains_key(name) {
                    by_words.insert(name.clone(), authors.len());
                    authors.push((name.clone(), name.join(" ")));
                }
            }
        }
        let zh_authors = kb
            .glossary
            .iter()
            .filter_map(|(zh, translations)| {
                let author = translations.iter().find_map(|t| by_words.get(&words(t)))?;
                let pattern = zh.chars().map(Tok::Han).collect();
                Some((pattern, authors[*author].1.clone()))
            })
            .collect();
        authors.sort_by_key(|(a, _)| std::cmp::Reverse(a.len()));
        Self {
            venues: Box::new(Phrases::new(
                venues
                    .into_iter()
                    .map(|(v, value)| (word_toks(&v), value))
                    .collect(),
            )),
            authors: Box::new(Phrases::new(
                authors
                    .into_iter()
                    .map(|(a, name)| (word_toks(&a), name))
                    .collect(),
            )),
            zh_authors: Box::new(Phrases::new(zh_authors)),
        }
    }
}

/// The other ways of writing each workshop among `venues` (`known` holds them all), with
/// the venue they stand for: a workshop is written both "ICCVW" and "ICCV Workshop(s)",
/// and a visitor uses either whichever the entries use. Only for a conference that is
/// itself a venue, so an ordinary word ending in "w" is left alone.
fn workshop_aliases(
    venues: &[Vec<String>],
    known: &rustc_hash::FxHashSet<Vec<String>>,
) -> Vec<(Vec<String>, String)> {
    let mut out = Vec::new();
    for v in venues {
        let value = v.join(" ");
        match v.as_slice() {
            [one] if one.len() > 2 && one.ends_with('w') => {
                let base = one[..one.len() - 1].to_owned();
                if known.contains(std::slice::from_ref(&base)) {
                    for w in ["workshop", "workshops"] {
                        out.push((vec![base.clone(), w.to_owned()], value.clone()));
                    }
                }
            }
            [base, w]
                if (w == "workshop" || w == "workshops")
                    && known.contains(std::slice::from_ref(base)) =>
            {
                out.push((vec![format!("{base}w")], value.clone()));
            }
            _ => {}
        }
    }
    out
}

/// Type words, most specific first: (phrase, type, plural).
const TYPE_WORDS: &[(&str, &str, bool)] = &[
    ("开源项目", "github_project", true),
    ("open source projects", "github_project", true),
    ("open-source projects", "github_project", true),
    ("github projects", "github_project", true),
    ("github 项目", "github_project", true),
    ("github 仓库", "github_project", true),
    ("github repos", "github_project", true),
    ("代码库", "github_project", true),
    ("开源库", "github_project", true),
    ("项目", "github_project", true),
    ("仓库", "github_project", true),
    ("projects", "github_project", true),
    ("repositories", "github_project", true),
    ("repos", "github_project", true),
    ("project", "github_project", false),
    ("repository", "github_project", false),
    ("repo", "github_project", false),
    ("论文", "publication", true),
    ("文章", "publication", true),
    ("出版物", "publication", true),
    ("发表", "publication", true),
    ("papers", "publication", true),
    ("publications", "publication", true),
    ("articles", "publication", true),
    ("paper", "publication", false),
    ("publication", "publication", false),
    ("published", "publication", false),
    ("publish", "publication", false),
    ("页面", "page", true),
    ("网页", "page", true),
    ("pages", "page", true),
];

const HAS_CODE: &[&str] = &[
    "有开源代码",
    "开源代码",
    "有代码",
    "附代码",
    "带代码",
    "代码开源",
    "公开代码",
    "有源码",
    "with source code",
    "with open source code",
    "with code",
    "code available",
    "have code",
    "has code",
    "code released",
];

const STARS_DESC: &[&str] = &[
    "star 数最多",
    "star 最多",
    "stars 最多",
    "最多 star",
    "最多 stars",
    "最多的 star",
    "星最多",
    "最多星",
    "星标最多",
    "最受欢迎",
    "最火",
    "most stars",
    "most starred",
    "most popular",
    "by stars",
    "highest stars",
];
const YEAR_DESC: &[&str] = &[
    "最新",
    "最近",
    "近期",
    "latest",
    "newest",
    "most recent",
    "recent",
    "recently",
];
const YEAR_ASC: &[&str] = &["最早", "最初", "earliest", "oldest"];

/// Cues that make a type word a listing on their own.
const STRONG_CUES: &[&str] = &[
    "哪些",
    "列出",
    "列举",
    "所有",
    "全部",
    "多少篇",
    "多少个",
    "几篇",
    "几个",
    "一共",
    "总共",
    "清单",
    "列表",
    "都有",
    "list",
    "all",
    "every",
    "how many",
    "show me",
    "enumerate",
    "any",
];

const ROLE_LEADER: &[&str] = &[
    "主导", "领导", "牵头", "带领", "负责", "led", "leads", "lead", "leader", "leading",
];
const ROLE_CONTRIBUTOR: &[&str] = &["贡献", "contributed", "contributor", "contributes"];

/// Words that carry no content in a listing question.
const EN_FILLER: &[&str] = &[
    "a", "an", "the", "of", "at", "in", "on", "to", "for", "from", "by", "with", "and", "or", "is",
    "are", "was", "were", "be", "been", "has", "have", "had", "do", "does", "did", "he", "she",
    "his", "her", "him", "they", "their", "i", "me", "my", "you", "your", "we", "which", "what",
    "who", "where", "there", "that", "this", "these", "those", "please", "can", "could", "would",
    "give", "tell", "about", "many", "much", "more", "than", "written", "wrote", "write",
    "authored", "other", "also", "some", "so", "far", "ever", "out", "up", "same", "year", "years",
    "s", "-", "+", "get", "find", "know",
];
const ZH_FILLER: &str = "他她我你您的了过是在有和与及或吗呢吧啊呀都也上中里年些哪请问一下给出这那个篇关于之所共有哪些什么发布过写做参与来目前已经还以及并且被该把让能可以麽么";

impl Vocabulary {
    /// Reads a question as a listing, or `None` when it is not one (see the module docs).
    pub fn recognise(&self, question: &str) -> Option<Intent> {
        let (intent, listing) = self.read(question);
        listing.then_some(intent)
    }

    /// Reads whatever filters, order and content words a question has, and whether it is
    /// a listing. A request with explicit filters uses this even for a question that is not
    /// a listing, so "papers" in `?q=papers&venue=ICCV` is not searched for as a word.
    pub fn read(&self, question: &str) -> (Intent, bool) {
        let mut q = Question::new(question);
        if q.toks.len() > 400 {
            // Listing questions are short; a long text is searched as it is.
            let plain = Intent {
                filters: Filters::default(),
                order: None,
                content: question.to_owned(),
            };
            return (plain, false);
        }
        // Fields are taken in the order written: stars and years first, so a year is not
        // read as part of a venue's or an author's name.
        let mut filters = Filters {
            stars: take_stars(&mut q),
            year: take_years(&mut q),
            venue: self.venues.take_first(&mut q).map(str::to_owned),
            author: self
                .authors
                .take_first(&mut q)
                .or_else(|| self.zh_authors.take_first(&mut q))
                .map(str::to_owned),
            ..Filters::default()
        };
        if q.take_any(HAS_CODE) {
            filters.has.push("code_url".to_owned());
        }
        let order = if q.take_any(STARS_DESC) {
            Some(Order::StarsDesc)
        } else if q.take_any(YEAR_ASC) {
            Some(Order::YearAsc)
        } else if q.take_any(YEAR_DESC) {
            Some(Order::YearDesc)
        } else {
            None
        };
        // Type words, and whether a "which"/"what"/"什么" cue sits right before one.
        let mut types: Vec<&str> = Vec::new();
        let mut plural = false;
        let mut weak_cue = false;
        for &(phrase, t, is_plural) in TYPE_WORDS {
            let pattern = tokenize(phrase);
            while let Some(i) = q.find(&pattern, 0) {
                let before = |w: &[&str]| {
                    i > 0 && matches!(&q.toks[i - 1], Tok::Word(x) if w.contains(&x.as_str()))
                };
                let zh_what = i >= 2 && q.toks[i - 2..i] == [Tok::Han('什'), Tok::Han('么')];
                weak_cue |= (is_plural && before(&["which", "what"])) || zh_what;
                q.mark(i, pattern.len());
                plural |= is_plural;
                if !types.contains(&t) {
                    types.push(t);
                }
            }
        }
        let strong_cue = q.take_any(STRONG_CUES);
        let typed = !types.is_empty();
        if typed || filters.author.is_some() {
            if q.take_any(ROLE_LEADER) {
                filters.role = Some("leader".to_owned());
            } else if q.take_any(ROLE_CONTRIBUTOR) {
                filters.role = Some("contributor".to_owned());
            }
        }
        if let [t] = types.as_slice() {
            filters.doc_type = Some((*t).to_owned());
        }
        let content = self.residual(&mut q);
        let listing_filter = filters.year.is_some()
            || filters.venue.is_some()
            || filters.stars.is_some()
            || !filters.has.is_empty();
        let person_filter = filters.author.is_some() || filters.role.is_some();
        let cue = strong_cue || weak_cue;
        let listing = (listing_filter && (typed || cue || content.is_empty()))
            || (person_filter && (typed || cue))
            || (typed && (cue || order.is_some()) && (plural || listing_filter || strong_cue))
            || (order.is_some() && listing_filter);
        // "这篇论文讲了什么" asks about the paper under discussion, not for a list.
        let listing =
            listing && !q.toks.is_empty() && (listing_filter || !super::refers_back(question));
        let intent = Intent {
            filters,
            order,
            content,
        };
        (intent, listing)
    }

    /// The unused words, minus function words: Latin words and Han runs of two or more
    /// characters.
    fn residual(&self, q: &mut Question) -> String {
        let mut out: Vec<String> = Vec::new();
        let mut han = String::new();
        let flush = |han: &mut String, out: &mut Vec<String>| {
            if han.chars().count() >= 2 {
                out.push(std::mem::take(han));
            }
            han.clear();
        };
        for (t, &used) in q.toks.iter().zip(&q.used) {
            match t {
                _ if used => flush(&mut han, &mut out),
                Tok::Han(c) if ZH_FILLER.contains(*c) => flush(&mut han, &mut out),
                Tok::Han(c) => han.push(*c),
                Tok::Word(w) => {
                    flush(&mut han, &mut out);
                    if !EN_FILLER.contains(&w.as_str()) {
                        out.push(w.clone());
                    }
                }
            }
        }
        flush(&mut han, &mut out);
        out.join(" ")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::search::filter::Range;
    use serde_json::json;

    fn vocab() -> Vocabulary {
        let kb = KnowledgeBase::from_value(&json!({"documents": [
            {"id": "a", "type": "publication", "title": "A", "venue": "CVPR 2022", "year": 2022,
             "authors": "Xiang An, Jiankang Deng, Kaicheng Yang"},
            {"id": "b", "type": "publication", "title": "B", "venue": "ACM MM 2025", "year": 2025,
             "authors": "Tiancheng Gu, Kaicheng Yang (Project Leader)"},
            {"id": "c", "type": "publication", "title": "C", "venue": "GitHub 2020", "year": 2020},
            {"id": "p", "type": "github_project", "name": "P", "stars": "27k+"}
        ], "glossary": {"邓健康": ["jiankang deng"], "格灵深瞳": ["deepglint"]}}))
        .unwrap();
        let facets: Vec<Facets> = kb.documents.iter().map(Facets::of).collect();
        Vocabulary::of(&kb, &facets)
    }

    fn read(q: &str) -> Intent {
        vocab()
            .recognise(q)
            .unwrap_or_else(|| panic!("not recognised: {q}"))
    }

    #[test]
    fn a_workshop_is_recognised_in_either_spelling() {
        let kb = KnowledgeBase::from_value(&json!({"documents": [
            {"id": "a", "type": "publication", "title": "A", "venue": "ICCVW 2021"},
            {"id": "b", "type": "publication", "title": "B", "venue": "ICCV 2023"},
            {"id": "c", "type": "publication", "title": "C", "venue": "CVPR Workshops 2024"}
        ]}))
        .unwrap();
        let facets: Vec<Facets> = kb.documents.iter().map(Facets::of).collect();
        let vocab = Vocabulary::of(&kb, &facets);
        let venue = |q: &str| vocab.read(q).0.filters.venue;
        assert_eq!(
            venue("他在 ICCV workshop 发过什么").as_deref(),
            Some("iccvw")
        );
        assert_eq!(venue("ICCV workshops papers").as_deref(), Some("iccvw"));
        assert_eq!(venue("CVPRW 的论文").as_deref(), Some("cvpr workshops"));
        // The conference itself stays itself.
        assert_eq!(venue("他在 ICCV 发过什么").as_deref(), Some("iccv"));
    }

    #[test]
    fn the_issue_questions_are_recognised() {
        let cvpr = read("他发表过哪些 CVPR 论文");
        assert_eq!(cvpr.filters.venue.as_deref(), Some("cvpr"));
        assert_eq!(cvpr.filters.doc_type.as_deref(), Some("publication"));
        assert_eq!(cvpr.content, "");
        for q in ["2024 年发表了什么", "2024 年的论文"] {
            let i = read(q);
            assert_eq!(i.filters.year, Some(Range::exactly(2024)), "{q}");
            assert_eq!(i.content, "", "{q}");
        }
        let stars = read("最多 star 的项目");
        assert_eq!(stars.order, Some(Order::StarsDesc));
        assert_eq!(stars.filters.doc_type.as_deref(), Some("github_project"));
        let open = read("有哪些开源项目");
        assert_eq!(open.filters.doc_type.as_deref(), Some("github_project"));
        assert_eq!(open.content, "");
        let code = read("list all papers with code");
        assert_eq!(code.filters.has, ["code_url"]);
        assert_eq!(code.filters.doc_type.as_deref(), Some("publication"));
        let iccv = read("which papers were published at ICCV");
        assert_eq!(
            iccv.filters.venue.as_deref(),
            Some("iccv"),
            "a common venue"
        );
        assert_eq!(iccv.content, "");
        let thousand = read("projects with more than 1000 stars");
        assert_eq!(thousand.filters.stars.and_then(|r| r.min), Some(1001));
        assert_eq!(thousand.content, "");
    }

    #[test]
    fn years_ranges_thresholds_authors_and_content_are_read() {
        let y = |q: &str| read(q).filters.year.unwrap();
        assert_eq!(y("papers from 2020 to 2023").to_string(), "2020-2023");
        assert_eq!(y("2020-2023 年的论文").to_string(), "2020-2023");
        assert_eq!(y("2021 年以来的论文").to_string(), "2021-");
        assert_eq!(y("papers published after 2023").to_string(), "2024-");
        assert_eq!(y("papers before 2021").to_string(), "-2020");
        let s = |q: &str| read(q).filters.stars.unwrap().min.unwrap();
        assert_eq!(s("超过 1000 star 的项目"), 1001);
        assert_eq!(s("至少 500 个 star 的项目"), 500);
        assert_eq!(s("projects with 2k+ stars"), 2000);
        assert_eq!(
            read("Kaicheng Yang 的论文").filters.author.as_deref(),
            Some("kaicheng yang")
        );
        assert_eq!(
            read("邓健康发表了哪些论文").filters.author.as_deref(),
            Some("jiankang deng")
        );
        assert_eq!(
            read("ACM MM papers").filters.venue.as_deref(),
            Some("acm mm")
        );
        let content = read("2024 年关于 CLIP 的论文");
        assert_eq!(content.content, "clip");
        assert_eq!(read("which projects use ViT?").content, "use vit");
        assert_eq!(
            read("他主导了哪些项目").filters.role.as_deref(),
            Some("leader")
        );
        assert_eq!(read("latest papers").order, Some(Order::YearDesc));
    }

    #[test]
    fn ordinary_questions_are_not_listings() {
        let v = vocab();
        for q in [
            "What is Partial FC?",
            "请介绍一下 Partial FC",
            "它的代码在哪里？",
            "那篇论文是哪一年发表的？",
            "Partial FC 是哪一年发表的？",
            "这篇论文讲了什么",
            "How many stars does InsightFace have?",
            "LLaVA-OneVision-1.5 有多少 star？",
            "这个项目有多少星？",
            "InsightFace 项目有多少星",
            "Is LLaVA-OneVision-1.5 open source?",
            "安翔是谁？",
            "Who is Jiankang Deng?",
            "邓健康是谁",
            "What is the difference between ArcFace and Partial FC?",
            "UniME-V2 的作者有哪些？",
            "Who wrote this paper?",
            "Which paper introduced Partial FC?",
            "人脸识别训练",
            "LLaVA multimodal",
            "How do I contact him?",
            "Where is the code of Unicom?",
            "What is the GitHub repo of InsightFace?",
            "格灵深瞳是什么公司",
            "多模态大模型",
            "今天天气怎么样？",
            "",
        ] {
            assert_eq!(v.recognise(q), None, "{q}");
        }
    }

    #[test]
    fn github_is_not_a_venue() {
        let i = read("有哪些 GitHub 项目");
        assert_eq!(i.filters.venue, None);
        assert_eq!(i.filters.doc_type.as_deref(), Some("github_project"));
    }
}
