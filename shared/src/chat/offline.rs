//! The answer given without a model: the retrieved entries themselves (title, links, a
//! short summary), clearly labelled with why no model answered, in the visitor's language.
//! That happens when no model is configured, when today's token budget is used up, and when
//! the budget cannot be checked (the model is not called unmetered).
//!
//! Links come from the knowledge base only, like `sources`. Each line is a natural
//! streaming unit, so [`offline_deltas`] splits the answer into lines.

use crate::kb::{DocKind, Document};
use crate::retrieval::is_han;
use crate::retrieval::Ranked;
use crate::search::SearchIndex;

/// Longest summary shown per entry, in characters.
const SUMMARY_CHARS: usize = 220;

/// Labels in the two languages the answer can take.
struct Labels {
    no_model: &'static str,
    budget: &'static str,
    unavailable: &'static str,
    intro: &'static str,
    nothing: &'static str,
    paper: &'static str,
    code: &'static str,
    link: &'static str,
}

const ZH: Labels = Labels {
    no_model: "（离线模式：未配置语言模型，以下内容直接摘自知识库，并非模型生成的回答。）",
    budget: "（离线模式：今日的语言模型用量已达上限，以下内容直接摘自知识库，并非模型生成的回答。\
             明天（UTC）恢复正常回答。）",
    unavailable: "（离线模式：语言模型暂时不可用，以下内容直接摘自知识库，并非模型生成的回答。）",
    intro: "与您的问题最相关的条目：",
    nothing: "本站没有与您的问题相关的内容；如果您想问的是别的，请换个说法再试。",
    paper: "论文",
    code: "代码",
    link: "链接",
};

const EN: Labels = Labels {
    no_model: "(Offline mode: no language model is configured, so this answer lists entries \
               of the knowledge base directly; it was not written by a model.)",
    budget: "(Offline mode: today's budget for the language model is used up, so this answer \
             lists entries of the knowledge base directly; it was not written by a model. \
             Answers resume tomorrow, UTC.)",
    unavailable: "(Offline mode: the language model is unavailable right now, so this answer \
                  lists entries of the knowledge base directly; it was not written by a \
                  model.)",
    intro: "The entries most relevant to your question:",
    nothing:
        "This site has nothing on your question; if you meant something else, try other words.",
    paper: "Paper",
    code: "Code",
    link: "Link",
};

/// Whether the visitor wrote in Chinese (any Han character).
pub fn is_chinese(text: &str) -> bool {
    text.chars().any(is_han)
}

/// Why a turn is answered without the model.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OfflineReason {
    /// No model is configured.
    NoModel,
    /// Today's token budget is used up.
    DailyBudget,
    /// The budget could not be checked (its store failed), so the model was not called.
    Unavailable,
}

impl OfflineReason {
    /// The reason as reported in responses (`offline_reason`) and audit outcomes.
    pub fn as_str(self) -> &'static str {
        match self {
            OfflineReason::NoModel => "no_model",
            OfflineReason::DailyBudget => "daily_budget",
            OfflineReason::Unavailable => "unavailable",
        }
    }
}

/// The offline answer for `question` from its ranked hits (numbered like `sources`),
/// opened by a banner saying why no model answered.
pub fn offline_answer(
    index: &SearchIndex,
    hits: &[Ranked],
    question: &str,
    reason: OfflineReason,
) -> String {
    let zh = is_chinese(question);
    let l = if zh { &ZH } else { &EN };
    let banner = match reason {
        OfflineReason::NoModel => l.no_model,
        OfflineReason::DailyBudget => l.budget,
        OfflineReason::Unavailable => l.unavailable,
    };
    let mut out = format!("{banner}\n\n");
    if hits.is_empty() {
        out.push_str(l.nothing);
        return out;
    }
    out.push_str(l.intro);
    for (i, hit) in hits.iter().enumerate() {
        let doc = &index.kb().documents[hit.doc as usize];
        out.push_str("\n\n");
        entry(&mut out, i + 1, doc, &index.passage_text(hit), l, zh);
    }
    out
}

fn entry(out: &mut String, n: usize, doc: &Document, passage: &str, l: &Labels, zh: bool) {
    out.push_str(&format!("[{n}] **{}**", one_line(doc.display_title())));
    let venue = doc.venue.as_deref().or(doc.year.as_deref());
    if let (DocKind::Publication, Some(v)) = (doc.kind(), venue) {
        out.push_str(&if zh {
            format!("（{v}）")
        } else {
            format!(" ({v})")
        });
    }
    let sep = if zh { "：" } else { ": " };
    let mut link = |label: &str, url: Option<&str>| {
        if let Some(u) = url.map(str::trim).filter(|u| !u.is_empty()) {
            out.push_str(&format!("\n{label}{sep}{u}"));
        }
    };
    match doc.kind() {
        DocKind::Publication => {
            link(l.paper, doc.paper_url.as_deref().or(doc.url.as_deref()));
            link(l.code, doc.code_url.as_deref());
        }
        _ => link(l.link, doc.url.as_deref()),
    }
    let summary = shorten(passage);
    if !summary.is_empty() {
        out.push('\n');
        out.push_str(&summary);
    }
}

/// Whitespace collapsed to single spaces.
fn one_line(s: &str) -> String {
    s.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// The first sentences of a text, up to [`SUMMARY_CHARS`]; cut with `…` when a single
/// sentence is longer.
fn shorten(text: &str) -> String {
    let text = one_line(text);
    if text.chars().count() <= SUMMARY_CHARS {
        return text;
    }
    let limit = text
        .char_indices()
        .nth(SUMMARY_CHARS)
        .map_or(text.len(), |(i, _)| i);
    let head = &text[..limit];
    match head.rfind(". ").or_else(|| head.rfind('。')) {
        Some(i) if i > SUMMARY_CHARS / 3 => {
            let end = i + head[i..].chars().next().map_or(1, char::len_utf8);
            head[..end].to_owned()
        }
        _ => format!("{}…", head.trim_end()),
    }
}

/// The answer as streaming deltas: one per line, each with its line break.
pub fn offline_deltas(answer: &str) -> Vec<String> {
    answer.split_inclusive('\n').map(str::to_owned).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::kb::KnowledgeBase;
    use serde_json::json;

    fn index() -> SearchIndex {
        let kb = KnowledgeBase::from_value(&json!([
            {"id": "pfc", "type": "publication", "title": "Partial FC", "venue": "CVPR 2022",
             "paper_url": "https://arxiv.org/abs/2203.15565", "code_url": "https://github.com/deepinsight/insightface",
             "summary": "Efficient training of face recognition. It samples class centers. More text follows here."},
            {"id": "if", "type": "github_project", "name": "InsightFace",
             "url": "https://github.com/deepinsight/insightface", "description": "Face analysis."}
        ]))
        .unwrap();
        SearchIndex::new(kb, "t")
    }

    #[test]
    fn chinese_question_gets_a_labelled_chinese_answer_with_kb_links() {
        let idx = index();
        let (_, hits) = idx.rank("Partial FC insightface", 3, 0.0);
        let a = offline_answer(&idx, &hits, "请介绍一下 Partial FC", OfflineReason::NoModel);
        assert!(a.starts_with("（离线模式"), "{a}");
        assert!(a.contains("[1] **Partial FC**（CVPR 2022）"), "{a}");
        assert!(a.contains("论文：https://arxiv.org/abs/2203.15565"), "{a}");
        assert!(
            a.contains("代码：https://github.com/deepinsight/insightface"),
            "{a}"
        );
        assert!(a.contains("[2] **InsightFace**\n链接：https://github.com/deepinsight/insightface\nFace analysis."), "{a}");
    }

    #[test]
    fn english_question_gets_an_english_answer_and_no_hits_say_so() {
        let idx = index();
        let a = offline_answer(&idx, &[], "What is the weather?", OfflineReason::NoModel);
        assert!(a.starts_with("(Offline mode"), "{a}");
        assert!(a.ends_with("try other words."), "{a}");
        let (_, hits) = idx.rank("insightface", 3, 0.0);
        let a = offline_answer(
            &idx,
            &hits,
            "What is InsightFace?",
            OfflineReason::DailyBudget,
        );
        assert!(
            a.contains("Link: https://github.com/deepinsight/insightface"),
            "{a}"
        );
        assert!(
            a.contains("budget for the language model is used up"),
            "{a}"
        );
        let zh = offline_answer(&idx, &hits, "它是什么？", OfflineReason::Unavailable);
        assert!(zh.starts_with("（离线模式：语言模型暂时不可用"), "{zh}");
    }

    #[test]
    fn long_summaries_are_cut_at_a_sentence() {
        let long = format!("{}. {}", "a".repeat(100), "b".repeat(300));
        assert_eq!(shorten(&long), format!("{}.", "a".repeat(100)));
        let one = "c".repeat(400);
        assert!(shorten(&one).ends_with('…'));
        assert_eq!(shorten("Short."), "Short.");
    }

    #[test]
    fn deltas_are_lines_that_join_back_into_the_answer() {
        let d = offline_deltas("a\nb\n\nc");
        assert_eq!(d, vec!["a\n", "b\n", "\n", "c"]);
        assert_eq!(d.concat(), "a\nb\n\nc");
    }
}
