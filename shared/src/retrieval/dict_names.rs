//! Names a dictionary spells differently from the site. CC-CEDICT writes 忽必烈 as
//! "Khubilai Khan" where an English page says "Kublai Khan"; the transliteration matcher
//! never sees such a word, because the dictionary joins its characters into one word with
//! a translation. When neither a Chinese word nor any of its translations occurs on the
//! site (on a Chinese page the word itself is matched, and its translations are absent
//! as a rule, not because of a spelling), each
//! absent word of a translation is looked up among the site's proper nouns by spelling
//! (see [`super::translit::NameMatcher::respelling`]), and a translation whose every word
//! is then on the site stands for the Chinese word as a name.

use super::lexicon::Segment;
use super::{Retriever, TermSet, CROSS_WEIGHT};

impl Retriever {
    /// Adds to the word being collected (segment `ex`, which the site writes neither as
    /// it is nor as any of its translations) the first of its translations that the site writes once its absent words are
    /// respelled as the site's proper nouns, as a phrase sharing [`CROSS_WEIGHT`] like any
    /// translation (by the square root of its length), and marks the word a name
    /// ([`super::Word::literal`]): a page naming it is about what the question names.
    /// A translation with no absent word is no respelling, and one with a word that
    /// matches no name is left out whole.
    pub(super) fn add_respelled_name(&self, ex: &Segment<'_>, terms: &mut TermSet) {
        if self.names.is_empty() {
            return;
        }
        for group in ex.translation_terms() {
            let mut words: Vec<String> = Vec::new();
            let mut respelled = false;
            for t in group.split(' ').filter(|t| !t.is_empty()) {
                if self.index.term_id(t).is_some() {
                    words.push(t.to_owned());
                } else if let Some(name) = self.names.respelling(t) {
                    words.push(name);
                    respelled = true;
                } else {
                    respelled = false;
                    break;
                }
            }
            if respelled {
                let w = CROSS_WEIGHT / (words.len() as f32).sqrt();
                terms.mark_literal();
                terms.add_phrase(
                    words.iter().map(String::as_str),
                    w,
                    Some(ex.word),
                    &self.index,
                );
                return;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::Retriever;

    #[test]
    fn a_name_the_dictionary_spells_otherwise_finds_the_sites_spelling() {
        let glossary = [("忽必烈".to_string(), vec!["khubilai khan".to_string()])];
        let r = Retriever::build(
            [
                ["Kublai Khan founded the Yuan dynasty.".to_string()],
                ["Genghis Khan united the Mongol tribes.".to_string()],
                ["The cable car runs all year.".to_string()],
            ],
            &glossary,
        );
        let (terms, hits) = r.search("忽必烈是谁", 3, 0.0);
        assert!(terms.iter().any(|t| t.term == "kublai"), "{terms:?}");
        assert_eq!(hits.first().map(|h| h.doc), Some(0), "{terms:?}");
        // A word the site does translate is left alone.
        let glossary = [("可汗".to_string(), vec!["khan".to_string()])];
        let r = Retriever::build([["Kublai Khan".to_string()]], &glossary);
        assert!(!r.analyze_query("可汗").iter().any(|t| t.term == "kublai"));
        // So is a word a Chinese page writes as it is, whatever its translations.
        let glossary = [("忽必烈".to_string(), vec!["khubilai khan".to_string()])];
        let r = Retriever::build(
            [["忽必烈 (Kublai Khan) 建立了元朝。".to_string()]],
            &glossary,
        );
        assert!(!r.analyze_query("忽必烈").iter().any(|t| t.term == "kublai"));
    }
}
