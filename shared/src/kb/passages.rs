//! Splitting long page content into passages.
//!
//! Retrieval and the prompt's context budget both work better on passages of a few
//! hundred words than on whole long pages: a passage that matches is shown without the
//! rest of the page. Cuts fall on paragraph breaks, then sentence ends, then spaces, so a
//! passage never ends mid-word.

/// Content longer than this (in characters) is split; passages stay within it.
pub const PASSAGE_MAX_CHARS: usize = 1200;

/// Splits `content` into passages of at most [`PASSAGE_MAX_CHARS`] characters (a single
/// word longer than that is cut hard). Short content comes back whole.
pub fn split_passages(content: &str) -> Vec<String> {
    let content = content.trim();
    if content.chars().count() <= PASSAGE_MAX_CHARS {
        return vec![content.to_owned()];
    }
    let mut out: Vec<String> = Vec::new();
    let mut current = String::new();
    for piece in pieces(content) {
        let (cur_len, piece_len) = (current.chars().count(), piece.chars().count());
        if cur_len > 0 && cur_len + 1 + piece_len > PASSAGE_MAX_CHARS {
            out.push(std::mem::take(&mut current));
        }
        if !current.is_empty() {
            current.push(if piece.starts_with('\n') { '\n' } else { ' ' });
        }
        current.push_str(piece.trim());
    }
    if !current.trim().is_empty() {
        out.push(current);
    }
    out
}

/// Cuts content into pieces no longer than the limit: paragraphs, or sentences of an
/// over-long paragraph, or words of an over-long sentence, or hard cuts of a huge word.
fn pieces(content: &str) -> Vec<&str> {
    let mut out = Vec::new();
    for para in content.split("\n\n").filter(|p| !p.trim().is_empty()) {
        if para.chars().count() <= PASSAGE_MAX_CHARS {
            out.push(para);
            continue;
        }
        for sentence in split_inclusive_any(para, &['.', '!', '?', '。', '！', '？', '\n']) {
            if sentence.chars().count() <= PASSAGE_MAX_CHARS {
                out.push(sentence);
                continue;
            }
            for word in sentence.split(' ') {
                let mut w = word;
                while w.chars().count() > PASSAGE_MAX_CHARS {
                    let cut = w
                        .char_indices()
                        .nth(PASSAGE_MAX_CHARS)
                        .map_or(w.len(), |(i, _)| i);
                    out.push(&w[..cut]);
                    w = &w[cut..];
                }
                out.push(w);
            }
        }
    }
    out.retain(|p| !p.trim().is_empty());
    out
}

fn split_inclusive_any<'a>(text: &'a str, ends: &[char]) -> Vec<&'a str> {
    text.split_inclusive(|c| ends.contains(&c)).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn short_content_is_one_passage() {
        assert_eq!(split_passages("  hello world \n"), vec!["hello world"]);
    }

    #[test]
    fn long_content_splits_on_paragraphs_within_the_limit() {
        let para = "word ".repeat(100); // 500 chars
        let content = [para.as_str(); 5].join("\n\n");
        let parts = split_passages(&content);
        assert!(parts.len() >= 3, "{}", parts.len());
        assert!(parts.iter().all(|p| p.chars().count() <= PASSAGE_MAX_CHARS));
        // Nothing is lost: every word survives.
        let words: usize = parts.iter().map(|p| p.split_whitespace().count()).sum();
        assert_eq!(words, 500);
    }

    #[test]
    fn one_huge_paragraph_splits_on_sentences_and_a_huge_word_is_cut() {
        let content = format!("{} {}", "A sentence here. ".repeat(200), "x".repeat(3000));
        let parts = split_passages(&content);
        assert!(parts.iter().all(|p| p.chars().count() <= PASSAGE_MAX_CHARS));
        let xs: usize = parts.iter().map(|p| p.matches('x').count()).sum();
        assert_eq!(xs, 3000);
    }

    #[test]
    fn chinese_text_splits_on_chinese_sentence_ends() {
        let content = "这是一个句子。".repeat(400);
        let parts = split_passages(&content);
        assert!(parts.len() > 1);
        assert!(parts.iter().all(|p| p.chars().count() <= PASSAGE_MAX_CHARS));
        assert!(parts[0].ends_with('。'));
    }
}
