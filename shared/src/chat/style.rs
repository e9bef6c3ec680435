//! Answer styles (`ANSWER_STYLE`): how long an answer the model is asked for, and how much
//! of each retrieved entry it is given to write it from.
//!
//! | style | instruction | blocks |
//! | --- | --- | --- |
//! | `concise` | at most three sentences or five list items | summary blocks: title, venue/year and link, one line on what it is ([`crate::prompt::format_summary_block`]) |
//! | `standard` (default) | none beyond the owner's prompt | full blocks ([`crate::prompt::format_block`]) |
//! | `detailed` | a paragraph or list item per relevant entry, then what to read next | full blocks |
//!
//! The token cost of each is measured by the test `styles_cost_what_the_docs_say` (see
//! `docs/configuration.md`).

use crate::error::{Error, Result};
use crate::prompt::{context_blocks, summary_blocks};
use crate::retrieval::Ranked;
use crate::search::SearchIndex;

/// How the model is asked to answer.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum AnswerStyle {
    /// Short answers from summary blocks: the cheapest prompt.
    Concise,
    /// The owner's prompt as written, full blocks.
    #[default]
    Standard,
    /// Thorough answers, an item per relevant entry.
    Detailed,
}

impl AnswerStyle {
    /// Reads `ANSWER_STYLE` (`concise`, `standard`, `detailed`; case ignored).
    pub fn parse(value: &str) -> Result<Self> {
        match value.trim().to_ascii_lowercase().as_str() {
            "concise" => Ok(Self::Concise),
            "standard" => Ok(Self::Standard),
            "detailed" => Ok(Self::Detailed),
            other => Err(Error::Config {
                var: "ANSWER_STYLE",
                message: format!("must be concise, standard or detailed, got {other:?}"),
            }),
        }
    }

    /// The style's name as configured.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Concise => "concise",
            Self::Standard => "standard",
            Self::Detailed => "detailed",
        }
    }

    /// What is added after the owner's prompt (nothing for `standard`).
    pub fn instruction(self) -> Option<&'static str> {
        match self {
            Self::Concise => Some(
                "Answer style: brief. At most three short sentences, or a list of at most \
                 five items of one line each. Give only what the visitor asked for, with \
                 its [n] citations; no background, no closing offer.",
            ),
            Self::Standard => None,
            Self::Detailed => Some(
                "Answer style: thorough. Cover every retrieved entry that bears on the \
                 question, each in its own short paragraph or list item (what it is, where \
                 and when it appeared, its links), with its [n] citation; end with one line \
                 on what the visitor could read next.",
            ),
        }
    }

    /// The owner's prompt with the style's instruction after it.
    pub fn system_prompt(self, owner: &str) -> String {
        match self.instruction() {
            Some(i) => format!("{}\n\n{i}", owner.trim_end()),
            None => owner.to_owned(),
        }
    }

    /// The numbered blocks the prompt carries for `hits`, in this style's format.
    pub fn blocks(self, index: &SearchIndex, hits: &[Ranked]) -> Vec<String> {
        match self {
            Self::Concise => summary_blocks(index, hits),
            Self::Standard | Self::Detailed => context_blocks(index, hits),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::prompt::{build_prompt, PromptInput, DEFAULT_SYSTEM_PROMPT};

    #[test]
    fn parses_the_three_styles_and_refuses_others() {
        assert_eq!(
            AnswerStyle::parse(" Concise ").unwrap(),
            AnswerStyle::Concise
        );
        assert_eq!(
            AnswerStyle::parse("standard").unwrap(),
            AnswerStyle::Standard
        );
        assert_eq!(
            AnswerStyle::parse("DETAILED").unwrap(),
            AnswerStyle::Detailed
        );
        let err = AnswerStyle::parse("verbose").unwrap_err().to_string();
        assert!(
            err.contains("ANSWER_STYLE") && err.contains("verbose"),
            "{err}"
        );
    }

    /// Questions a visitor of the sample site asks, in both languages.
    const QUESTIONS: [&str; 8] = [
        "What is Partial FC?",
        "请介绍一下 Partial FC",
        "What has Xiang An published on multimodal models?",
        "安翔有哪些开源项目？",
        "What is UNICOM?",
        "LLaVA-OneVision-1.5 是什么？",
        "Which papers are about face recognition?",
        "CLIP 相关的论文有哪些？",
    ];

    /// Mean estimated prompt tokens of the sample questions (no history) in `style`.
    fn mean_prompt_tokens(index: &SearchIndex, style: AnswerStyle) -> usize {
        let system = style.system_prompt(DEFAULT_SYSTEM_PROMPT);
        let total: usize = QUESTIONS
            .iter()
            .map(|q| {
                let (_, hits) = index.rank(q, 3, 0.5);
                let blocks = style.blocks(index, &hits);
                let prompt = build_prompt(&PromptInput {
                    system_prompt: &system,
                    blocks: &blocks,
                    history: &[],
                    question: q,
                    max_context_tokens: 8192,
                });
                prompt.budget.estimated_prompt_tokens
            })
            .sum();
        total / QUESTIONS.len()
    }

    #[test]
    fn styles_cost_what_the_docs_say() {
        let kb = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../knowledge_base.json");
        let index = SearchIndex::load_file(&kb).expect("sample KB");
        let [concise, standard, detailed] = [
            AnswerStyle::Concise,
            AnswerStyle::Standard,
            AnswerStyle::Detailed,
        ]
        .map(|s| mean_prompt_tokens(&index, s));
        eprintln!(
            "mean estimated prompt tokens (sample KB, TOP_K 3): concise {concise}, \
             standard {standard}, detailed {detailed}"
        );
        assert!(concise < standard, "{concise} vs {standard}");
        assert!(standard < detailed, "{standard} vs {detailed}");
        // The instruction is all that detailed adds: about a sentence.
        assert!(detailed - standard < 80, "{standard} vs {detailed}");
    }
}
