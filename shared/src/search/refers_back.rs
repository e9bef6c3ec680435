//! Whether a question refers back to the conversation ("它的代码在哪里？", "what about its
//! code?"): a pure text test, used by the listing recogniser ([`super::intent`]), follow-up
//! retrieval (`crate::chat::followup`) and query rewriting (`crate::chat::rewrite`).

/// Chinese words that point back at something said before. Substrings, so only forms
/// that are not also parts of unrelated words (该 alone is in 应该, 其 in 其他).
const ZH_REFERENCES: &[&str] = &[
    "它",
    "这篇",
    "那篇",
    "这个",
    "那个",
    "这项",
    "那项",
    "这些",
    "那些",
    "这款",
    "那款",
    "这套",
    "这部",
    "该文",
    "该论文",
    "该项目",
    "该方法",
    "该工作",
    "该模型",
    "该框架",
    "此文",
    "其中",
    "上述",
    "上面",
    "刚才",
    "前面提到",
    "详细",
    "展开",
    "继续",
    "还有呢",
    "多说",
    "再说",
];

/// English pronouns that always refer back.
const EN_PRONOUNS: &[&str] = &["it", "its", "it's", "they", "them", "their", "theirs"];

/// Demonstratives refer back when a noun like these follows (`this paper`), or when they
/// end the question (`what is that?`); elsewhere "that" is usually a conjunction.
const EN_DEMONSTRATIVES: &[&str] = &["this", "that", "these", "those", "the", "same"];
const EN_REFERRED_NOUNS: &[&str] = &[
    "paper",
    "papers",
    "project",
    "projects",
    "one",
    "ones",
    "work",
    "model",
    "models",
    "method",
    "repo",
    "repository",
    "approach",
    "framework",
    "library",
    "same",
];

/// Openings of elliptical English follow-ups.
const EN_ELLIPSIS: &[&str] = &[
    "what about",
    "how about",
    "and ",
    "tell me more",
    "more about",
    "go on",
    "continue",
    "anything else",
];

/// Whether a question refers back to the conversation (pronoun, demonstrative + noun,
/// elliptical form). Pure text test; see the module docs for where it is used.
pub fn refers_back(question: &str) -> bool {
    if refers_back_zh(question) {
        return true;
    }
    let lower = question.trim().to_lowercase();
    if EN_ELLIPSIS.iter().any(|e| lower.starts_with(e)) {
        return true;
    }
    let words: Vec<&str> = lower
        .split(|c: char| !(c.is_ascii_alphanumeric() || c == '\''))
        .filter(|w| !w.is_empty())
        .collect();
    words.iter().enumerate().any(|(i, w)| {
        EN_PRONOUNS.contains(w)
            || (EN_DEMONSTRATIVES.contains(w)
                && match words.get(i + 1) {
                    Some(next) => EN_REFERRED_NOUNS.contains(next),
                    // "the" closing a question is a typo, not a reference.
                    None => *w != "the",
                })
    })
}

fn refers_back_zh(question: &str) -> bool {
    // 其它 ("other") contains 它 without referring to anything.
    let q = question.replace("其它", "");
    if ZH_REFERENCES.iter().any(|r| q.contains(r)) {
        return true;
    }
    // "代码呢？", "那 Unicom 呢？": a question ending in 呢 asks about the current topic.
    let end = q.trim_end_matches(|c: char| c.is_whitespace() || "？?！!。.".contains(c));
    end.ends_with('呢')
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn chinese_references_and_ellipses_are_detected() {
        for q in [
            "它的代码在哪里？",
            "那篇论文是哪一年发表的？",
            "这个项目有多少星？",
            "该论文的第一作者是谁？",
            "代码呢？",
            "那 Unicom 呢?",
            "能详细说说吗",
        ] {
            assert!(refers_back(q), "{q}");
        }
    }

    #[test]
    fn chinese_words_that_only_contain_reference_characters_are_not_references() {
        for q in [
            "其它论文有哪些？",
            "我应该怎么联系他？",
            "安翔是谁？",
            "呢喃是什么意思",
        ] {
            assert!(!refers_back(q), "{q}");
        }
    }

    #[test]
    fn english_pronouns_demonstratives_and_ellipses_are_detected() {
        for q in [
            "Where is its code?",
            "Is it open source?",
            "Who wrote this paper?",
            "What is that?",
            "What about the code?",
            "And the year?",
            "Tell me more",
            "When was the paper published?",
        ] {
            assert!(refers_back(q), "{q}");
        }
    }

    #[test]
    fn english_conjunction_that_and_plain_questions_are_not_references() {
        for q in [
            "What is Unicom?",
            "Is there a paper that uses CLIP?",
            "Which projects use ViT?",
            "How many stars does InsightFace have?",
        ] {
            assert!(!refers_back(q), "{q}");
        }
    }
}
