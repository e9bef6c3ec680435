//! The main language of a text or of a whole site, told apart by script: Chinese (Han
//! characters) or English (Latin letters). Enough to decide whether a visitor's question
//! is in the language the site is written in, and which language to rewrite it into.

use crate::kb::KnowledgeBase;
use crate::retrieval::is_han;

/// A language the rewrite can target.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Language {
    /// Mostly Han characters.
    Chinese,
    /// Mostly Latin letters (or no text at all).
    English,
}

/// Characters read per sampled document of a site.
const SAMPLE_CHARS: usize = 600;
/// Documents sampled, evenly spread over the knowledge base.
const SAMPLE_DOCS: usize = 500;

impl Language {
    /// The language's English name, as a prompt names it.
    pub fn name(self) -> &'static str {
        match self {
            Language::Chinese => "Chinese",
            Language::English => "English",
        }
    }

    /// The main language of `text`: Chinese when its Han characters, each weighed as four
    /// Latin letters (a Han character carries about as much as a short English word), outweigh
    /// its Latin letters. A Chinese sentence with English names in it ("uv sync 和 uv lock
    /// 有什么区别") is Chinese.
    pub fn of_text(text: &str) -> Language {
        let mut counts = Counts::default();
        counts.add(text);
        counts.language()
    }

    /// The main language of a site: [`Language::of_text`] over the titles, descriptions and
    /// the start of the content of up to 500 documents spread evenly over the knowledge
    /// base (a few hundred kilobytes at most, read once when it is loaded).
    pub fn of_kb(kb: &KnowledgeBase) -> Language {
        let step = kb.documents.len().div_ceil(SAMPLE_DOCS).max(1);
        let mut counts = Counts::default();
        for doc in kb.documents.iter().step_by(step) {
            counts.add(doc.display_title());
            for text in doc.prose() {
                let end = text
                    .char_indices()
                    .nth(SAMPLE_CHARS)
                    .map_or(text.len(), |(i, _)| i);
                counts.add(&text[..end]);
            }
        }
        counts.language()
    }
}

#[derive(Default)]
struct Counts {
    han: usize,
    latin: usize,
}

impl Counts {
    fn add(&mut self, text: &str) {
        for c in text.chars() {
            if c.is_ascii_alphabetic() {
                self.latin += 1;
            } else if is_han(c) {
                self.han += 1;
            }
        }
    }

    fn language(&self) -> Language {
        if self.han * 4 > self.latin {
            Language::Chinese
        } else {
            Language::English
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_question_is_chinese_when_han_outweighs_latin_four_to_one() {
        assert_eq!(Language::of_text("怎么撤销上一次提交"), Language::Chinese);
        // 6 Han (24) against 12 Latin letters.
        assert_eq!(
            Language::of_text("uv sync 和 uv lock 有什么区别"),
            Language::Chinese
        );
        // 1 Han (4) against 18 Latin letters: an English question naming a Chinese term.
        assert_eq!(
            Language::of_text("How do I stash changes 吗"),
            Language::English
        );
        assert_eq!(Language::of_text("🙂 ???"), Language::English);
    }

    #[test]
    fn a_site_is_read_from_its_titles_and_the_start_of_its_pages() {
        let kb = |content: &str| {
            let json = serde_json::json!({"documents": [
                {"id": "a", "type": "page", "title": "Git", "content": content},
                {"id": "b", "type": "page", "title": "Stash", "content": content},
            ]});
            KnowledgeBase::from_json_str(&json.to_string(), "test").unwrap()
        };
        assert_eq!(
            Language::of_kb(&kb("Record changes to the repository.")),
            Language::English
        );
        assert_eq!(
            Language::of_kb(&kb("把工作区的改动暂存起来，稍后再恢复。")),
            Language::Chinese
        );
        // Only the first 600 characters of a page count: Chinese past them changes nothing.
        let late = format!("{}{}", "a".repeat(600), "中".repeat(5000));
        assert_eq!(Language::of_kb(&kb(&late)), Language::English);
    }
}
