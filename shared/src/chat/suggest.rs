//! What the visitor is offered after an answer: related entries to ask about next
//! (suggestions), and the owner's contact when the site has nothing on the question
//! (handoff). Neither calls the model.
//!
//! Suggestions are the entries nearest the best hit that the answer did not already use:
//! the best hit's title and keywords are searched like a question (one ranking, bounded by
//! [`NEIGHBOUR_QUERY_WORDS`]), and the first [`MAX_SUGGESTIONS`] entries that are not among
//! the hits are offered, each with a question about it in the visitor's language.

use serde::Serialize;

use super::offline::is_chinese;
use crate::retrieval::Ranked;
use crate::search::SearchIndex;

/// Most suggestions after an answer.
pub const MAX_SUGGESTIONS: usize = 3;
/// Most words of the best hit's title and keywords searched for its neighbours.
pub(super) const NEIGHBOUR_QUERY_WORDS: usize = 32;

/// A related entry the visitor may ask about next.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Suggestion {
    /// The entry's id.
    pub id: String,
    /// Its display title.
    pub title: String,
    /// Its link, if it has one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub url: Option<String>,
    /// A question about it, in the language of the visitor's question.
    pub question: String,
}

/// Up to [`MAX_SUGGESTIONS`] entries related to the best of `hits` and not among them.
pub fn suggestions(index: &SearchIndex, hits: &[Ranked], question: &str) -> Vec<Suggestion> {
    let Some(best) = hits.first() else {
        return Vec::new();
    };
    let docs = &index.kb().documents;
    let doc = &docs[best.doc as usize];
    let query: String = std::iter::once(doc.display_title())
        .chain(doc.keywords.iter().map(String::as_str))
        .flat_map(str::split_whitespace)
        .take(NEIGHBOUR_QUERY_WORDS)
        .collect::<Vec<_>>()
        .join(" ");
    let (_, near) =
        index
            .retriever()
            .search_covering(&query, MAX_SUGGESTIONS + hits.len(), 0.0, 0.0);
    let chinese = is_chinese(question);
    near.iter()
        .filter(|n| hits.iter().all(|h| h.doc != n.doc))
        .take(MAX_SUGGESTIONS)
        .map(|n| {
            let d = &docs[n.doc as usize];
            let title = d.display_title().to_owned();
            Suggestion {
                id: d.id.clone(),
                question: ask_about(&title, chinese),
                url: d.link().map(str::to_owned),
                title,
            }
        })
        .collect()
}

/// A question about an entry: its title up to the first `:` (a paper's short name), asked
/// in Chinese or English.
fn ask_about(title: &str, chinese: bool) -> String {
    let short = title.split([':', '：']).next().unwrap_or(title).trim();
    if chinese {
        format!("介绍一下「{short}」")
    } else {
        format!("Tell me about {short}")
    }
}

/// Where the visitor is sent to reach the owner when the site has nothing on the question.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Handoff {
    /// The owner's contact: the configured `mailto:` with the question as the subject and
    /// body, or the configured web address as it is.
    pub url: String,
}

/// The handoff for `question` to `contact` (a `mailto:` or `http(s)` URL, checked at
/// configuration).
pub(super) fn handoff(contact: &str, question: &str) -> Handoff {
    if !contact.starts_with("mailto:") {
        return Handoff {
            url: contact.to_owned(),
        };
    }
    let subject: String = question.chars().take(80).collect();
    let joiner = if contact.contains('?') { '&' } else { '?' };
    Handoff {
        url: format!(
            "{contact}{joiner}subject={}&body={}",
            crate::percent::component(&subject),
            crate::percent::component(question)
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn index() -> SearchIndex {
        let kb = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../knowledge_base.json");
        SearchIndex::load_file(&kb).expect("sample KB")
    }

    fn ids(index: &SearchIndex, hits: &[Ranked]) -> Vec<String> {
        hits.iter()
            .map(|h| index.kb().documents[h.doc as usize].id.clone())
            .collect()
    }

    #[test]
    fn suggestions_are_neighbours_of_the_best_hit_not_already_shown() {
        let index = index();
        let (_, hits) = index.rank("What is Partial FC?", 3, 0.5);
        let shown = ids(&index, &hits);
        let got = suggestions(&index, &hits, "What is Partial FC?");
        assert!(!got.is_empty() && got.len() <= MAX_SUGGESTIONS, "{got:?}");
        for s in &got {
            assert!(!shown.contains(&s.id), "{} was already a source", s.id);
            assert!(s.question.starts_with("Tell me about "), "{s:?}");
        }
        // Partial FC's neighbours are about faces: InsightFace and the face papers, and the
        // pages whose text on face recognition names its 10 million identities.
        let face = [
            "page_about",
            "pub_masked_face",
            "pub_insightface",
            "project_insightface",
            "pub_partial_fc_cvpr",
            "pub_partial_fc_iccvw",
            "pub_hust",
            "page_open_source",
            "page_research_topics",
        ];
        assert!(face.contains(&got[0].id.as_str()), "{got:?}");
    }

    #[test]
    fn a_chinese_question_gets_chinese_suggestions_and_no_hits_get_none() {
        let index = index();
        let (_, hits) = index.rank("请介绍一下 Partial FC", 3, 0.5);
        let got = suggestions(&index, &hits, "请介绍一下 Partial FC");
        assert!(
            got.iter().all(|s| s.question.starts_with("介绍一下「")),
            "{got:?}"
        );
        assert!(suggestions(&index, &[], "香蕉面包的做法").is_empty());
    }

    #[test]
    fn short_titles_stop_at_the_colon() {
        assert_eq!(
            ask_about(
                "Unicom: Universal and Compact Representation Learning",
                false
            ),
            "Tell me about Unicom"
        );
        assert_eq!(ask_about("InsightFace", true), "介绍一下「InsightFace」");
    }

    #[test]
    fn a_mailto_handoff_carries_the_question_and_a_web_one_is_kept() {
        assert_eq!(
            handoff("mailto:me@site.example", "How do I cite 论文 & code?").url,
            "mailto:me@site.example?subject=How%20do%20I%20cite%20%E8%AE%BA%E6%96%87%20%26%20code%3F\
             &body=How%20do%20I%20cite%20%E8%AE%BA%E6%96%87%20%26%20code%3F"
        );
        assert!(handoff("mailto:me@site.example?cc=a@b.example", "q")
            .url
            .starts_with("mailto:me@site.example?cc=a@b.example&subject=q&body=q"));
        assert_eq!(
            handoff("https://site.example/contact", "q").url,
            "https://site.example/contact"
        );
    }
}
