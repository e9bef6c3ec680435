//! Splitting long page content into passages.
//!
//! Retrieval and the prompt's context budget both work better on passages of a few
//! hundred words than on whole long pages: a passage that matches is shown without the
//! rest of the page. Cuts fall on paragraph breaks, then sentence ends, then spaces, so a
//! passage never ends mid-word. For content with Markdown headings (`## Teaching`), as
//! `rag build` writes for site pages, [`split_sections`] also cuts at the headings and
//! gives each passage the path of headings it sits under; the index uses
//! [`split_passages`], which packs across headings (see there why).

use std::borrow::Cow;
use std::ops::Range;

/// Content longer than this (in characters) is split; passages stay within it.
pub const PASSAGE_MAX_CHARS: usize = 1200;

/// A passage and the headings it sits under.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Passage {
    /// Enclosing headings, outermost first (`["Teaching", "Machine learning"]`); empty
    /// before the first heading or when the content has none.
    pub heading_path: Vec<String>,
    /// The passage text (a section's heading line included in its first passage).
    pub text: String,
}

/// Splits `content` into passages of at most [`PASSAGE_MAX_CHARS`] characters (a single
/// word longer than that is cut hard). Short content comes back whole.
pub fn split_passages(content: &str) -> Vec<String> {
    // Packed across headings: cutting at every heading first made many short passages
    // whose BM25 length normalisation favoured them, and cost the docs-site dev set
    // 0.889 → 0.871 nDCG@10. The sections stay available ([`split_sections`]).
    let content = content.trim();
    if HeadingIds::of(content).visible_len(content) <= PASSAGE_MAX_CHARS {
        return vec![content.to_owned()];
    }
    pack(content)
}

/// Where [`split_passages`]'s passages lie in `content`, as byte ranges: each from the
/// start of its first piece to the end of its last. So a served passage is a slice of the
/// content, not a copy (on a site of long pages the copies were as large as the content).
/// A span holds the same words as the passage [`split_passages`] returns, with the
/// content's own whitespace between pieces where that joins them with one space or line
/// break; only a word longer than [`PASSAGE_MAX_CHARS`], which that cuts hard, stays whole
/// in its span's text.
pub fn passage_spans(content: &str) -> Vec<std::ops::Range<usize>> {
    let base = content.as_ptr() as usize;
    let span = |s: &str| {
        let start = s.as_ptr() as usize - base;
        start..start + s.len()
    };
    let trimmed = content.trim();
    let ids = HeadingIds::of(trimmed);
    if ids.visible_len(trimmed) <= PASSAGE_MAX_CHARS {
        return vec![span(trimmed)];
    }
    // The grouping of `pack`, counting what it would join.
    let mut out = Vec::new();
    let mut current: Option<(std::ops::Range<usize>, usize)> = None;
    for piece in pieces(trimmed, &ids) {
        let piece_len = ids.visible_len(piece);
        let piece = span(piece.trim());
        let piece_chars = ids.visible_len(&content[piece.clone()]);
        current = match current.take() {
            Some((cur, len)) if len + 1 + piece_len > PASSAGE_MAX_CHARS => {
                out.push(cur);
                Some((piece, piece_chars))
            }
            Some((cur, len)) => Some((cur.start..piece.end, len + 1 + piece_chars)),
            None => Some((piece, piece_chars)),
        };
    }
    out.extend(current.map(|(cur, _)| cur));
    out
}

/// Like [`split_passages`], with each passage's heading path. Long content is cut at its
/// Markdown headings first (ATX `#` lines outside fenced code), so no passage spans two
/// sections; short content stays one passage, under the heading it opens with.
pub fn split_sections(content: &str) -> Vec<Passage> {
    let content = content.trim();
    let sections = sections(content);
    if HeadingIds::of(content).visible_len(content) <= PASSAGE_MAX_CHARS {
        let heading_path = match sections.first() {
            Some((path, text)) if text.trim_start().starts_with('#') => path.clone(),
            _ => Vec::new(),
        };
        return vec![Passage {
            heading_path,
            text: content.to_owned(),
        }];
    }
    let mut out = Vec::new();
    for (path, text) in sections {
        for part in pack(text) {
            out.push(Passage {
                heading_path: path.clone(),
                text: part,
            });
        }
    }
    out
}

/// A heading line of some content, outside code: where its line starts, its level and
/// where its id attribute lies, if it has one. What a search hit's section is read from,
/// kept per page so a hit does not read the page again.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HeadingMark {
    /// Byte offset of the line.
    pub at: u32,
    /// 1 to 6.
    pub level: u8,
    /// Byte range of the ` {#id}` at its end.
    pub id: Option<Range<u32>>,
}

/// The heading lines of `content` that start before `end` (outside fenced code).
pub fn heading_marks(content: &str, end: usize) -> Vec<HeadingMark> {
    heading_lines(content, 0..boundary(content, end))
        .into_iter()
        .filter_map(|(at, line)| {
            let (level, _, id) = heading_with_id(line)?;
            let id =
                id.map(|_| (at + split_heading_id(line).0.len()) as u32..(at + line.len()) as u32);
            Some(HeadingMark {
                at: at as u32,
                level: level as u8,
                id,
            })
        })
        .collect()
}

/// The path of headings, outermost first, that the byte `offset` of Markdown `content`
/// sits under, each with its id ([`split_heading_id`]) when it has one; `marks` are the
/// content's [`heading_marks`]. A heading whose line starts at `offset` counts (a passage
/// that opens with its section's heading is in that section).
pub fn section_of_marks(
    content: &str,
    marks: &[HeadingMark],
    offset: usize,
) -> Vec<(String, Option<String>)> {
    let mut stack: Vec<&HeadingMark> = Vec::new();
    for mark in marks.iter().take_while(|m| m.at as usize <= offset) {
        stack.retain(|m| m.level < mark.level);
        stack.push(mark);
    }
    stack
        .into_iter()
        .filter_map(|m| {
            let line = content.get(m.at as usize..)?;
            let line = &line[..line.find('\n').unwrap_or(line.len())];
            let (_, title, id) = heading_with_id(line.strip_suffix('\r').unwrap_or(line))?;
            Some((title, id.map(str::to_owned)))
        })
        .collect()
}

/// The lines of `text` that start in `within` and may be ATX headings (a `#` after at
/// most three spaces), outside fenced code, as (byte offset, the line without its line
/// break). Reads only the fence markers before them and the `#`s in `within`, not every
/// line: a search hit's section is found this way on pages of thousands of lines.
fn heading_lines(text: &str, within: Range<usize>) -> Vec<(usize, &str)> {
    let code = code_blocks(text, within.end);
    let mut out: Vec<(usize, &str)> = Vec::new();
    let mut block = 0;
    for (i, _) in text[within.clone()].match_indices('#') {
        let at = within.start + i;
        let start = line_start(text, at);
        let indent = &text[start..at];
        if indent.len() > 3 || indent.bytes().any(|b| b != b' ') {
            continue;
        }
        if out.last().is_some_and(|&(s, _)| s == start) {
            continue;
        }
        while code.get(block).is_some_and(|b| b.end <= start) {
            block += 1;
        }
        if code.get(block).is_some_and(|b| b.start <= start) {
            continue;
        }
        let line = &text[start..text[start..].find('\n').map_or(text.len(), |e| start + e)];
        out.push((start, line.strip_suffix('\r').unwrap_or(line)));
    }
    out
}

/// Where the fenced code blocks that start before `end` lie in `text` (from the opening
/// fence line to the end of the closing one, or of the text), read as [`fenced_lines`]
/// reads them but looking only at the lines that hold a fence marker.
fn code_blocks(text: &str, end: usize) -> Vec<Range<usize>> {
    // A single character is searched for fast (a three-character pattern is not).
    let mut fences: Vec<usize> = ['`', '~']
        .iter()
        .flat_map(|&mark| text[..end].match_indices(mark).map(|(i, _)| i))
        .filter(|&at| text[at..].starts_with("```") || text[at..].starts_with("~~~"))
        .filter_map(|at| {
            let start = line_start(text, at);
            text[start..at]
                .chars()
                .all(char::is_whitespace)
                .then_some(start)
        })
        .collect();
    fences.sort_unstable();
    fences.dedup();
    let mut out = Vec::new();
    let mut open: Option<(usize, &str)> = None;
    for start in fences {
        let marker = &text[start..].trim_start()[..3];
        match open {
            Some((from, fence)) if marker == fence => {
                let end = text[start..]
                    .find('\n')
                    .map_or(text.len(), |e| start + e + 1);
                out.push(from..end);
                open = None;
            }
            Some(_) => {}
            None => open = Some((start, marker)),
        }
    }
    out.extend(open.map(|(from, _)| from..text.len()));
    out
}

/// `at`, or the next character boundary of `text` after it (its length at most).
fn boundary(text: &str, at: usize) -> usize {
    let mut at = at.min(text.len());
    while !text.is_char_boundary(at) {
        at += 1;
    }
    at
}

/// Where the line holding byte `at` starts.
fn line_start(text: &str, at: usize) -> usize {
    text[..at].rfind('\n').map_or(0, |i| i + 1)
}

/// The content cut before each heading line, with the heading path each part sits under.
fn sections(content: &str) -> Vec<(Vec<String>, &str)> {
    let mut out = Vec::new();
    // (level, text) of the enclosing headings.
    let mut stack: Vec<(usize, String)> = Vec::new();
    let mut start = 0;
    for (offset, level, title) in headings(content) {
        if offset > start {
            out.push((path_of(&stack), &content[start..offset]));
        }
        stack.retain(|(l, _)| *l < level);
        stack.push((level, title));
        start = offset;
    }
    if content.len() > start {
        out.push((path_of(&stack), &content[start..]));
    }
    out.retain(|(_, text)| !text.trim().is_empty());
    out
}

/// Each line of Markdown `content` as (byte offset, the line without its line break, whether
/// it is fenced code, its fence lines included): a code line may look like a heading
/// (`# comment`, `#include`) or like a site's chrome, and is neither.
pub fn fenced_lines(content: &str) -> impl Iterator<Item = (usize, &str, bool)> + '_ {
    let mut fence: Option<&str> = None;
    let mut offset = 0;
    content.split_inclusive('\n').map(move |full| {
        let at = offset;
        offset += full.len();
        let line = full.strip_suffix('\n').unwrap_or(full);
        let line = line.strip_suffix('\r').unwrap_or(line);
        let t = line.trim_start();
        let code = match fence {
            Some(f) => {
                if t.starts_with(f) {
                    fence = None;
                }
                true
            }
            None if t.starts_with("```") || t.starts_with("~~~") => {
                fence = Some(&t[..3]);
                true
            }
            None => false,
        };
        (at, line, code)
    })
}

/// The content's Markdown heading lines (ATX, outside fenced code) as (byte offset of the
/// line, level, title), in order.
pub fn headings(content: &str) -> impl Iterator<Item = (usize, usize, String)> + '_ {
    fenced_lines(content)
        .filter(|&(_, _, code)| !code)
        .filter_map(|(at, line, _)| heading(line).map(|(level, title)| (at, level, title)))
}

fn path_of(stack: &[(usize, String)]) -> Vec<String> {
    stack.iter().map(|(_, t)| t.clone()).collect()
}

/// An ATX heading line: up to three spaces, 1–6 `#`, a space (or nothing), the title
/// (closing `#`s and an id attribute, [`split_heading_id`], dropped).
fn heading(line: &str) -> Option<(usize, String)> {
    heading_with_id(line).map(|(level, title, _)| (level, title))
}

/// [`heading`], with the heading's id when the line carries one.
fn heading_with_id(line: &str) -> Option<(usize, String, Option<&str>)> {
    let indent = line.len() - line.trim_start_matches(' ').len();
    if indent > 3 {
        return None;
    }
    let rest = line.trim_start_matches(' ');
    let level = rest.len() - rest.trim_start_matches('#').len();
    let after = &rest[level..];
    if !(1..=6).contains(&level)
        || !(after.is_empty() || after.starts_with([' ', '\t', '\n', '\r']))
    {
        return None;
    }
    let (after, id) = split_heading_id(after);
    let title = after.trim().trim_end_matches('#').trim_end();
    Some((level, title.to_owned(), id))
}

/// A heading's text and its id, when it ends in an id attribute: `Syntax {#_syntax}`, the
/// syntax of Pandoc, kramdown and Markdown Extra, which `rag build` writes for a heading
/// that has an id in the built HTML, so a passage can link to its section. The id is one
/// word (no space or brace) after ` {#`.
pub fn split_heading_id(text: &str) -> (&str, Option<&str>) {
    let trimmed = text.trim_end();
    let Some(open) = trimmed.strip_suffix('}').and_then(|t| t.rfind(" {#")) else {
        return (text, None);
    };
    let id = &trimmed[open + 3..trimmed.len() - 1];
    if id.is_empty() || id.contains(|c: char| c.is_whitespace() || c == '{' || c == '}') {
        return (text, None);
    }
    (&trimmed[..open], Some(id))
}

/// Where the id attributes of a text's heading lines (outside code) lie: retrieval reads
/// a page as if they were not there, so passages are cut where they would be without
/// them and index the same words.
#[derive(Debug)]
pub struct HeadingIds<'a> {
    /// The text they were found in.
    text: &'a str,
    /// Byte ranges of each ` {#id}` (with any space after it), in order.
    ranges: Vec<Range<usize>>,
}

impl<'a> HeadingIds<'a> {
    /// The ids of `text`'s heading lines (code lines keep what they say).
    pub fn of(text: &'a str) -> Self {
        // Most text has none: one scan for the marker, no line walk.
        if !text.contains(" {#") {
            return Self::of_marks(text, &[]);
        }
        Self::of_marks(text, &heading_marks(text, text.len()))
    }

    /// The ids that lie wholly inside `part`.
    fn within(&self, part: &str) -> &[Range<usize>] {
        let Some(at) = place(self.text, part).filter(|_| !self.ranges.is_empty()) else {
            return &[];
        };
        let first = self.ranges.partition_point(|r| r.start < at.start);
        let last = self.ranges.partition_point(|r| r.end <= at.end);
        &self.ranges[first..last.max(first)]
    }

    /// `part`, a slice of `text` (else it comes back as it is), without the ids of the
    /// heading lines among `marks` (the [`heading_marks`] of `text`) that start in it.
    pub fn strip_marked<'b>(text: &str, marks: &[HeadingMark], part: &'b str) -> Cow<'b, str> {
        let Some(at) = place(text, part) else {
            return Cow::Borrowed(part);
        };
        let first = marks.partition_point(|m| (m.at as usize) < at.start);
        let last = marks.partition_point(|m| (m.at as usize) < at.end);
        HeadingIds::of_marks(text, &marks[first..last.max(first)]).strip(part)
    }

    /// The ids among `marks`, the [`heading_marks`] of `text`.
    fn of_marks(text: &'a str, marks: &[HeadingMark]) -> Self {
        let ranges = marks
            .iter()
            .filter_map(|m| m.id.clone())
            .map(|r| r.start as usize..r.end as usize)
            .collect();
        Self { text, ranges }
    }

    /// `part`, a slice of the text, without the ids inside it.
    pub fn strip<'b>(&self, part: &'b str) -> Cow<'b, str> {
        let ids = self.within(part);
        let Some(at) = place(self.text, part).filter(|_| !ids.is_empty()) else {
            return Cow::Borrowed(part);
        };
        let mut out = String::with_capacity(part.len());
        let mut copied = 0;
        for id in ids {
            out.push_str(&part[copied..id.start - at.start]);
            copied = id.end - at.start;
        }
        out.push_str(&part[copied..]);
        Cow::Owned(out)
    }

    /// Characters of `part`, a slice of the text, without its ids.
    fn visible_len(&self, part: &str) -> usize {
        let ids: usize = self
            .within(part)
            .iter()
            .map(|r| self.text[r.clone()].chars().count())
            .sum();
        part.chars().count() - ids
    }
}

/// Where `part` lies in `text`, when it is a slice of it; `None` for other memory.
fn place(text: &str, part: &str) -> Option<Range<usize>> {
    let start = (part.as_ptr() as usize).checked_sub(text.as_ptr() as usize)?;
    (start + part.len() <= text.len()).then(|| start..start + part.len())
}

/// Packs content into passages within the limit, cutting on paragraphs, then sentences,
/// then words.
fn pack(content: &str) -> Vec<String> {
    let content = content.trim();
    let ids = HeadingIds::of(content);
    if ids.visible_len(content) <= PASSAGE_MAX_CHARS {
        return vec![content.to_owned()];
    }
    let mut out: Vec<String> = Vec::new();
    let mut current = String::new();
    // Characters of `current` as passages count them.
    let mut cur_len = 0;
    for piece in pieces(content, &ids) {
        let piece_len = ids.visible_len(piece);
        if cur_len > 0 && cur_len + 1 + piece_len > PASSAGE_MAX_CHARS {
            out.push(std::mem::take(&mut current));
            cur_len = 0;
        }
        if !current.is_empty() {
            current.push(if piece.starts_with('\n') { '\n' } else { ' ' });
            cur_len += 1;
        }
        current.push_str(piece.trim());
        cur_len += ids.visible_len(piece.trim());
    }
    if !current.trim().is_empty() {
        out.push(current);
    }
    out
}

/// Cuts content into pieces no longer than the limit: paragraphs, or sentences of an
/// over-long paragraph, or words of an over-long sentence, or hard cuts of a huge word.
fn pieces<'a>(content: &'a str, ids: &HeadingIds<'_>) -> Vec<&'a str> {
    let mut out = Vec::new();
    for para in content.split("\n\n").filter(|p| !p.trim().is_empty()) {
        if ids.visible_len(para) <= PASSAGE_MAX_CHARS {
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

    /// The headings `offset` of `content` sits under, as a search hit reads them.
    fn section_at(content: &str, offset: usize) -> Vec<String> {
        section_with_ids(content, offset)
            .into_iter()
            .map(|(title, _)| title)
            .collect()
    }

    fn section_with_ids(content: &str, offset: usize) -> Vec<(String, Option<String>)> {
        section_of_marks(content, &heading_marks(content, content.len()), offset)
    }

    /// `part` of `text` as a search hit shows it.
    fn strip_in<'b>(text: &str, part: &'b str) -> Cow<'b, str> {
        HeadingIds::strip_marked(text, &heading_marks(text, text.len()), part)
    }

    fn without_heading_ids(text: &str) -> Cow<'_, str> {
        strip_in(text, text)
    }

    #[test]
    fn fenced_lines_mark_code_and_its_fences_without_line_breaks() {
        let text = "# Run\r\n```sh\n# a comment\n```\n~~~\n```\n~~~\nDone.";
        let lines: Vec<(usize, &str, bool)> = fenced_lines(text).collect();
        assert_eq!(
            lines,
            [
                (0, "# Run", false),
                (7, "```sh", true),
                (13, "# a comment", true),
                (25, "```", true),
                (29, "~~~", true),
                (33, "```", true),
                (37, "~~~", true),
                (41, "Done.", false),
            ]
        );
    }

    #[test]
    fn spans_hold_the_passages_words_in_the_contents_own_text() {
        let para = "word. ".repeat(150);
        let content = format!(
            "  {}\n\n{}\n\n short tail \n",
            para,
            "模型。数据。".repeat(300)
        );
        let spans = passage_spans(&content);
        let passages = split_passages(&content);
        assert!(passages.len() >= 3);
        assert_eq!(spans.len(), passages.len());
        for (span, passage) in spans.iter().zip(&passages) {
            let text = &content[span.clone()];
            let words = |t: &str| t.split_whitespace().collect::<String>();
            assert_eq!(words(text), words(passage));
        }
        assert_eq!(passage_spans(" short "), vec![1..6]);
    }

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

    #[test]
    fn long_content_is_cut_at_headings_and_passages_carry_their_heading_path() {
        let para = "word ".repeat(100);
        let content = format!(
            "Intro {para}\n\n# Teaching\n\n{para}\n\n## Machine learning\n\n{para}\n\n\
             ```\n# not a heading\n```\n\n## Vision ##\n\n{para}\n\n# Contact\n\nMail me."
        );
        let parts = split_sections(&content);
        let paths: Vec<Vec<&str>> = parts
            .iter()
            .map(|p| p.heading_path.iter().map(String::as_str).collect())
            .collect();
        assert_eq!(
            paths,
            vec![
                vec![],
                vec!["Teaching"],
                vec!["Teaching", "Machine learning"],
                vec!["Teaching", "Vision"],
                vec!["Contact"],
            ]
        );
        assert!(parts[2].text.starts_with("## Machine learning"));
        assert!(parts[2].text.contains("# not a heading"));
        assert_eq!(parts[4].text, "# Contact\n\nMail me.");
        // Nothing is lost or added.
        let visible = |s: &str| s.chars().filter(|c| !c.is_whitespace()).collect::<String>();
        let joined: String = parts.iter().map(|p| p.text.as_str()).collect();
        assert_eq!(visible(&joined), visible(&content));
        // The index packs across headings instead, losing nothing either.
        let packed: String = split_passages(&content).concat();
        assert_eq!(visible(&packed), visible(&content));
    }

    #[test]
    fn short_content_stays_whole_under_the_heading_it_opens_with() {
        let parts = split_sections("# About\n\nShort.\n\n## More\n\nText.");
        assert_eq!(parts.len(), 1);
        assert_eq!(parts[0].heading_path, vec!["About"]);
        assert!(split_sections("No heading.\n\n# Later")[0]
            .heading_path
            .is_empty());
        assert!(split_sections("#hashtag is not a heading")[0]
            .heading_path
            .is_empty());
    }

    #[test]
    fn an_offset_sits_under_the_headings_before_it_and_the_one_it_opens() {
        let content = "Intro.\n\n# Git config\n\n## Files\n\nRead from three files.\n\n\
                       ```\n# not a heading\n```\n\n### Syntax\n\nKeys and values.\n\n## Variables\n\nMany.";
        let at = |s: &str| content.find(s).unwrap();
        assert!(section_at(content, 0).is_empty());
        assert_eq!(
            section_at(content, at("Read from")),
            ["Git config", "Files"]
        );
        // The code line is no heading.
        assert_eq!(section_at(content, at("```") + 5), ["Git config", "Files"]);
        // A passage opening with a heading is in that heading's section.
        assert_eq!(
            section_at(content, at("### Syntax")),
            ["Git config", "Files", "Syntax"]
        );
        // A heading of the same level closes the one before, a deeper one with it.
        assert_eq!(section_at(content, at("Many")), ["Git config", "Variables"]);
        assert_eq!(
            section_at(content, content.len()),
            ["Git config", "Variables"]
        );
    }
    #[test]
    fn a_heading_id_is_read_and_left_out_of_the_heading_and_the_text() {
        assert_eq!(
            split_heading_id("Syntax {#_syntax}"),
            ("Syntax", Some("_syntax"))
        );
        assert_eq!(
            split_heading_id("Syntax {#_syntax}  "),
            ("Syntax", Some("_syntax"))
        );
        // Not an id: no space before it, a space inside it, empty, or not at the end.
        for text in [
            "Syntax{#a}",
            "Syntax {#a b}",
            "Syntax {#}",
            "Syntax {#a} more",
            "a {b}",
        ] {
            assert_eq!(split_heading_id(text), (text, None), "{text}");
        }
        assert_eq!(
            section_with_ids("# Git config {#top}\n\n## Files\n\nText.", 30),
            [
                ("Git config".to_owned(), Some("top".to_owned())),
                ("Files".to_owned(), None)
            ]
        );
        // Only heading lines lose it: prose and code keep theirs.
        let text =
            "## Syntax {#_syntax}\r\nWrite {#x} in prose.\n```\nprint('{#y}')\n```\n### Keys {#k}";
        assert_eq!(
            without_heading_ids(text),
            "## Syntax\r\nWrite {#x} in prose.\n```\nprint('{#y}')\n```\n### Keys"
        );
        // A passage cut inside a code block reads its lines as the whole content does:
        // the code's example of the syntax stays, the heading after the code loses its id.
        let content = format!(
            "```\n{}## Header {{#labelid}}\n```\n\n## After {{#after}}\n\nText.",
            "x = 1\n".repeat(300)
        );
        let spans = passage_spans(&content);
        let last = &content[spans.last().unwrap().clone()];
        assert!(!last.starts_with("```"), "{last}");
        assert_eq!(
            strip_in(&content, last),
            last.replace("## After {#after}", "## After")
        );
        assert!(strip_in(&content, last).contains("## Header {#labelid}"));
        // Text that is no part of it comes back as it is.
        assert_eq!(strip_in(&content, "## X {#x}"), "## X {#x}");
        assert!(matches!(
            without_heading_ids("No ids here."),
            std::borrow::Cow::Borrowed(_)
        ));
    }

    #[test]
    fn heading_ids_do_not_move_where_a_page_is_cut() {
        let para = |n: usize| format!("Sentence number {n} of the page says something. ").repeat(9);
        let mut plain = String::from("# Page");
        let mut with_ids = String::from("# Page {#page}");
        for n in 0..12 {
            plain.push_str(&format!("\n\n## Part {n}\n\n{}", para(n)));
            with_ids.push_str(&format!(
                "\n\n## Part {n} {{#part-{n}-with-a-long-generated-id}}\n\n{}",
                para(n)
            ));
        }
        let cut = |c: &str| -> Vec<String> {
            passage_spans(c)
                .into_iter()
                .map(|r| without_heading_ids(&c[r]).into_owned())
                .collect()
        };
        let plain_spans = cut(&plain);
        assert!(plain_spans.len() > 3);
        assert_eq!(cut(&with_ids), plain_spans);
        assert_eq!(
            split_passages(&with_ids).len(),
            split_passages(&plain).len()
        );
        // Content just under the limit stays whole with its ids.
        let short = format!("# Page {{#{}}}\n\n{}", "x".repeat(60), "word ".repeat(235));
        assert!(
            HeadingIds::of(&short).visible_len(&short) <= PASSAGE_MAX_CHARS
                && short.chars().count() > PASSAGE_MAX_CHARS
        );
        assert_eq!(passage_spans(&short).len(), 1);
    }
    /// [`section_with_ids`] and [`HeadingIds`] read every line, as [`fenced_lines`] does.
    fn sections_line_by_line(content: &str, offset: usize) -> Vec<(String, Option<String>)> {
        let mut stack: Vec<(usize, String, Option<String>)> = Vec::new();
        for (at, line, code) in fenced_lines(content) {
            if at > offset {
                break;
            }
            if let (false, Some((level, title, id))) = (code, heading_with_id(line)) {
                stack.retain(|(l, _, _)| *l < level);
                stack.push((level, title, id.map(str::to_owned)));
            }
        }
        stack.into_iter().map(|(_, t, id)| (t, id)).collect()
    }

    #[test]
    fn headings_found_by_their_marks_are_those_every_line_gives() {
        let texts = [
            "# Top {#top}\n\nText with a # inside and C# too.\n\n## A {#a}\r\n\nx\n   ### Indented {#i}\n    #### Four spaces is code\n",
            "```\n# not a heading {#no}\n~~~\n# still code\n```\n## After {#after}\n~~~ rust\n```\n# code\n~~~\n#hashtag\n# Real\n",
            "Intro\n\n  ```\n## in indented fence {#x}\n  ```\n## Out {#out}\n```\nunclosed\n# code {#c}",
            "# 标题 {#zh}\n\n中文内容。\n\n## 小节 {#sub}\n\n更多。",
            "##Not a heading\n## Empty {#}\n## Spaced {#a b}\n# Closing ## {#closed}\n####### seven",
        ];
        for text in texts {
            for offset in (0..=text.len()).filter(|&i| text.is_char_boundary(i)) {
                assert_eq!(
                    section_with_ids(text, offset),
                    sections_line_by_line(text, offset),
                    "{text:?} at {offset}"
                );
            }
            let by_lines: Vec<Range<usize>> = fenced_lines(text)
                .filter(|&(_, line, code)| {
                    !code && heading_with_id(line).is_some_and(|h| h.2.is_some())
                })
                .map(|(at, line, _)| at + split_heading_id(line).0.len()..at + line.len())
                .collect();
            assert_eq!(HeadingIds::of(text).ranges, by_lines, "{text:?}");
        }
    }
}
