//! BibTeX → `publication` entries: title, authors, venue, year, links (url, doi, arXiv
//! eprint), code link, abstract as summary, keywords. Parsing (braces, `@string` macros,
//! LaTeX accents, `and`-separated and `Last, First` names) is the `biblatex` crate's.

use biblatex::{Bibliography, ChunksExt, Person};
use serde_json::Value;

use super::entry::Entry;
use super::ids;

/// Field names that may hold the venue, most specific first.
const VENUE_FIELDS: &[&str] = &[
    "venue",
    "booktitle",
    "journaltitle",
    "journal",
    "eventtitle",
    "howpublished",
    "school",
    "institution",
    "publisher",
];

/// Parses a `.bib` file's text into entries, in file order; `origin` names the file in
/// errors, `code_field` is the field holding a code link (e.g. `code`).
pub(crate) fn parse(text: &str, origin: &str, code_field: &str) -> Result<Vec<Entry>, String> {
    // Sizes first: the parser expands macros and recurses into braces as it goes.
    super::bibtex_bounds::check(text, origin)?;
    let bib = Bibliography::parse(text).map_err(|e| {
        let line = text[..e.span.start.min(text.len())].matches('\n').count() + 1;
        format!("{origin}: line {line}: {}", e.kind)
    })?;
    Ok(bib.iter().map(|e| to_entry(e, code_field)).collect())
}

fn to_entry(e: &biblatex::Entry, code_field: &str) -> Entry {
    let field = |name: &str| {
        e.get(name)
            .map(|chunks| tidy(&chunks.format_verbatim()))
            .filter(|v| !v.is_empty())
    };
    let mut out = Entry::new(ids::publication_id(&e.key), "publication");
    out.set_str("title", field("title"));
    let authors = e
        .author()
        .ok()
        .map(|people| people.iter().map(full_name).collect::<Vec<_>>().join(", "));
    out.set_str("authors", authors);
    out.set_str("venue", VENUE_FIELDS.iter().find_map(|f| field(f)));
    let year = field("year").or_else(|| field("date").map(|d| d.chars().take(4).collect()));
    out.set(
        "year",
        match year {
            Some(y) => y.parse::<i64>().map_or(Value::String(y), Value::from),
            None => Value::Null,
        },
    );
    out.set_str("paper_url", paper_url(&field));
    out.set_str("code_url", field(code_field));
    out.set_str("summary", field("abstract"));
    let keywords = field("keywords")
        .map(|k| k.split([',', ';']).map(|w| w.trim().to_owned()).collect())
        .unwrap_or_default();
    out.set_keywords(keywords);
    out
}

/// The paper's link: `url`, else the DOI resolver, else the arXiv abstract page.
fn paper_url(field: &dyn Fn(&str) -> Option<String>) -> Option<String> {
    if let Some(url) = field("url") {
        return Some(url);
    }
    if let Some(doi) = field("doi") {
        let doi = doi
            .trim_start_matches("https://doi.org/")
            .trim_start_matches("http://dx.doi.org/")
            .trim_start_matches("doi:");
        return Some(format!("https://doi.org/{doi}"));
    }
    let eprint = field("eprint")?;
    let kind = field("eprinttype")
        .or_else(|| field("archiveprefix"))
        .unwrap_or_else(|| "arxiv".to_owned());
    kind.eq_ignore_ascii_case("arxiv").then(|| {
        format!(
            "https://arxiv.org/abs/{}",
            eprint.trim_start_matches("arXiv:")
        )
    })
}

/// "Given prefix Family, suffix" as one reads it.
fn full_name(p: &Person) -> String {
    let mut parts: Vec<&str> = Vec::new();
    for part in [&p.given_name, &p.prefix, &p.name] {
        if !part.trim().is_empty() {
            parts.push(part.trim());
        }
    }
    let mut name = tidy(&parts.join(" "));
    if !p.suffix.trim().is_empty() {
        name = format!("{name}, {}", p.suffix.trim());
    }
    name
}

/// Whitespace folded (BibTeX values wrap over lines) and leftover braces dropped.
fn tidy(text: &str) -> String {
    text.replace(['{', '}'], "")
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ")
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Entries as they come from Google Scholar, DBLP and hand-kept files.
    const PUBS: &str = r#"
@string{cvpr = "IEEE/CVF Conference on Computer Vision and Pattern Recognition (CVPR)"}

@inproceedings{an2022killing,
  title     = {Killing Two Birds with One Stone: Efficient and Robust Training of
               Face Recognition {CNNs} by Partial {FC}},
  author    = {An, Xiang and Deng, Jiankang and Guo, Jia and M{\"u}ller, J{\"o}rg},
  booktitle = cvpr,
  year      = {2022},
  eprint    = {2203.15565},
  archivePrefix = {arXiv},
  code      = {https://github.com/deepinsight/insightface},
  keywords  = {face recognition; partial fc},
  abstract  = {Training face recognition with
               millions of identities.}
}

@article{Deng:2019,
  title   = "{ArcFace}: Additive Angular Margin Loss",
  author  = "Jiankang Deng and Jia Guo and Niannan Xue and Stefanos Zafeiriou and Ludwig van Beethoven and King, Jr., Martin Luther",
  journal = {IEEE TPAMI},
  doi     = {10.1109/TPAMI.2021.3087709},
  date    = {2021-06-08},
}

@misc{bare,
  title = {A note with {\'e}t{\'e} and \c{c}a},
}
"#;

    fn get(entries: &[Entry], id: &str) -> Entry {
        entries.iter().find(|e| e.id == id).unwrap().clone()
    }

    #[test]
    fn real_world_entries_become_publications() {
        let entries = parse(PUBS, "pubs.bib", "code").unwrap();
        assert_eq!(entries.len(), 3);
        let a = get(&entries, "pub_an2022killing");
        assert_eq!(
            a.get_str("title"),
            Some("Killing Two Birds with One Stone: Efficient and Robust Training of Face Recognition CNNs by Partial FC")
        );
        assert_eq!(
            a.get_str("authors"),
            Some("Xiang An, Jiankang Deng, Jia Guo, Jörg Müller")
        );
        assert_eq!(
            a.get_str("venue"),
            Some("IEEE/CVF Conference on Computer Vision and Pattern Recognition (CVPR)")
        );
        assert_eq!(a.get("year"), Some(&Value::from(2022)));
        assert_eq!(
            a.get_str("paper_url"),
            Some("https://arxiv.org/abs/2203.15565")
        );
        assert_eq!(
            a.get_str("code_url"),
            Some("https://github.com/deepinsight/insightface")
        );
        assert_eq!(
            a.get_str("summary"),
            Some("Training face recognition with millions of identities.")
        );
        assert_eq!(
            a.get("keywords"),
            Some(&serde_json::json!(["face recognition", "partial fc"]))
        );

        let d = get(&entries, "pub_deng_2019");
        assert_eq!(
            d.get_str("title"),
            Some("ArcFace: Additive Angular Margin Loss")
        );
        assert_eq!(
            d.get_str("authors"),
            Some("Jiankang Deng, Jia Guo, Niannan Xue, Stefanos Zafeiriou, Ludwig van Beethoven, Martin Luther King, Jr.")
        );
        assert_eq!(
            d.get_str("paper_url"),
            Some("https://doi.org/10.1109/TPAMI.2021.3087709")
        );
        assert_eq!(d.get("year"), Some(&Value::from(2021)));
        assert_eq!(d.get_str("venue"), Some("IEEE TPAMI"));

        let b = get(&entries, "pub_bare");
        assert_eq!(b.get_str("title"), Some("A note with été and ça"));
        for missing in [
            "authors",
            "venue",
            "year",
            "paper_url",
            "code_url",
            "summary",
            "keywords",
        ] {
            assert_eq!(b.get(missing), None, "{missing}");
        }
    }

    #[test]
    fn a_syntax_error_names_the_file_and_line() {
        let err = parse("\n\n@article{x,\n  title = {unclosed\n", "pubs.bib", "code").unwrap_err();
        assert!(err.starts_with("pubs.bib: line "), "{err}");
    }
}
