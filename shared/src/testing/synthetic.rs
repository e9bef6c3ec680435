//! A deterministic generated site, for tests that need a knowledge base larger or more
//! varied than the sample: pages shaped like `infra/gen_kb.py`'s, optionally with proper
//! nouns and Chinese sentences.

use std::fmt::Write;

/// What a generated site holds besides its English-like text. The default adds nothing,
/// and what is added draws its own random numbers, so the English text of a seed stays the
/// same with or without it.
#[derive(Debug, Clone, Copy, Default)]
pub struct Extras<'a> {
    /// Proper nouns: one, capitalised, after each paragraph.
    pub names: &'a [&'a str],
    /// Han characters: on every third page each paragraph ends with a Chinese sentence of
    /// 4–11 of them.
    pub han: &'a str,
}

/// The JSON of a site of `pages` pages, the same for the same `seed` and `extras`: 100–300
/// words a page from 20,000 invented words of Zipf-like frequency, in sentences and
/// paragraphs, with a title, a link, a few keywords, and the glossary 模型 → model.
pub fn site_json(pages: usize, seed: u64, extras: Extras<'_>) -> Vec<u8> {
    let mut seed = seed;
    let mut next = move |n: usize| {
        seed = seed
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        ((seed >> 33) as usize) % n
    };
    let syllables = [
        "ba", "ce", "di", "fo", "gu", "kai", "lou", "ma", "ne", "pi", "ro", "su", "ta", "ve", "zi",
        "sha", "tre",
    ];
    let vocab: Vec<String> = (0..20_000)
        .map(|i: usize| {
            let mut w = String::new();
            let mut x = i;
            // Distinct words: the digits of `i` in base 17, a syllable each.
            loop {
                w.push_str(syllables[x % syllables.len()]);
                x /= syllables.len();
                if x == 0 {
                    break w;
                }
            }
        })
        .collect();
    // Zipf-like: rank r weighs 1/r; `cumulative` in millionths of the total.
    let total: f64 = (1..=vocab.len()).map(|r| 1.0 / r as f64).sum();
    let mut acc = 0.0;
    let cumulative: Vec<u32> = (1..=vocab.len())
        .map(|r| {
            acc += 1.0 / r as f64;
            (acc / total * 1e6) as u32
        })
        .collect();
    let mut word = move || {
        let x = next(1_000_000) as u32;
        let rank = cumulative.partition_point(|&c| c <= x).min(vocab.len() - 1);
        vocab[rank].clone()
    };
    let han: Vec<char> = extras.han.chars().collect();
    // The extras' own sequence, so the English text is the same with or without them.
    let mut extra_seed = seed ^ 0x5eed;
    let mut pick = move |n: usize| {
        extra_seed = extra_seed
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        ((extra_seed >> 33) as usize) % n
    };
    let capitalised = |w: String| w[..1].to_uppercase() + &w[1..];
    let mut out = String::from(r#"{"documents": ["#);
    for p in 0..pages {
        let mut content = String::new();
        let mut remaining = 100 + next(201) as i64;
        while remaining > 0 {
            if !content.is_empty() {
                content.push_str("\\n\\n");
            }
            for s in 0..2 + next(5) {
                let n = 6 + next(13);
                remaining -= n as i64;
                let words: Vec<String> = (0..n).map(|_| word()).collect();
                if s > 0 {
                    content.push(' ');
                }
                content.push_str(&capitalised(words.join(" ")));
                content.push('.');
            }
            if !extras.names.is_empty() {
                content.push(' ');
                content.push_str(extras.names[pick(extras.names.len())]);
            }
            if !han.is_empty() && p % 3 == 0 {
                content.push_str(" 。");
                (0..4 + pick(8)).for_each(|_| content.push(han[pick(han.len())]));
            }
        }
        let title: Vec<String> = (0..2 + next(5)).map(|_| capitalised(word())).collect();
        let keywords: Vec<String> = (0..2 + next(4))
            .map(|_| format!("\"{}\"", word()))
            .collect();
        if p > 0 {
            out.push_str(", ");
        }
        // Writing to a String cannot fail.
        let _ = write!(
            out,
            concat!(
                r#"{{"id": "page_{p:06}", "type": "page", "title": "{}", "#,
                r#""url": "https://site.example/pages/{p}", "keywords": [{}], "#,
                r#""content": "{content}"}}"#
            ),
            title.join(" "),
            keywords.join(", "),
            p = p,
            content = content,
        );
    }
    out.push_str(r#"], "glossary": {"模型": ["model"]}}"#);
    out.into_bytes()
}
