//! What a `.bib` file may cost before the BibTeX parser sees it: braces nested at most
//! [`MAX_DEPTH`] deep, and each field's value, with its `@string` macros expanded, at most
//! [`MAX_FIELD_BYTES`] long and [`MAX_FIELD_PIECES`] pieces, the whole file at most
//! [`MAX_FILE_BYTES`] expanded. Measured on the raw text in one pass, keeping only each
//! macro's expanded size (saturating), never its text: a thousand bytes of macros that
//! double at each level (`@string{b = a # a}`) are refused by name in microseconds, where
//! expanding them took minutes and gigabytes. An owner's CI often builds exports from
//! elsewhere, so a hostile file must cost an error message, not the build machine.
//!
//! The scanner is lenient: whatever it does not understand it leaves to the parser, which
//! reports it. It only has to be right about sizes of what it does understand.

use std::collections::HashMap;

/// Deepest brace nesting accepted (real files use 2 or 3: `{{CNN}}`, `{\"{o}}`).
pub(crate) const MAX_DEPTH: usize = 64;
/// Longest field value, macros expanded (an abstract is a few KB).
pub(crate) const MAX_FIELD_BYTES: u64 = 256 << 10;
/// Most pieces (quoted or braced parts and macro uses, expanded) one value joins.
pub(crate) const MAX_FIELD_PIECES: u64 = 4096;
/// Most bytes of all field values of a file together, macros expanded.
pub(crate) const MAX_FILE_BYTES: u64 = 64 << 20;

/// A value's expanded size: bytes and pieces, both saturating.
#[derive(Debug, Clone, Copy, Default)]
struct Size {
    bytes: u64,
    pieces: u64,
}

impl Size {
    fn add(self, o: Size) -> Size {
        Size {
            bytes: self.bytes.saturating_add(o.bytes),
            pieces: self.pieces.saturating_add(o.pieces),
        }
    }
}

/// Checks `text` against the bounds; the error names `origin`, the line and the entry.
pub(crate) fn check(text: &str, origin: &str) -> Result<(), String> {
    Scanner {
        b: text.as_bytes(),
        at: 0,
        origin,
        entry: String::new(),
        macros: HashMap::new(),
        total: 0,
    }
    .run()
}

struct Scanner<'a> {
    b: &'a [u8],
    at: usize,
    origin: &'a str,
    /// The entry being read (its key, or `@string`), for errors.
    entry: String,
    /// Macro names (lowercase) and their expanded sizes.
    macros: HashMap<String, Size>,
    total: u64,
}

impl Scanner<'_> {
    fn fail(&self, what: String) -> String {
        let line = self.b[..self.at.min(self.b.len())]
            .iter()
            .filter(|&&c| c == b'\n')
            .count()
            + 1;
        format!("{}: line {line}: entry {}: {what}", self.origin, self.entry)
    }

    fn run(mut self) -> Result<(), String> {
        while let Some(off) = self.b[self.at..].iter().position(|&c| c == b'@') {
            self.at += off + 1;
            let kind = self.ident().to_ascii_lowercase();
            self.ws();
            let close = match self.b.get(self.at) {
                Some(b'{') => b'}',
                Some(b'(') => b')',
                _ => continue,
            };
            self.at += 1;
            match kind.as_str() {
                "comment" | "preamble" => {
                    self.entry = format!("@{kind}");
                    self.at -= 1;
                    self.skip_group()?;
                }
                "string" => {
                    self.entry = "@string".to_owned();
                    self.fields(close, true)?;
                }
                _ => {
                    self.ws();
                    let start = self.at;
                    while self.at < self.b.len() && !matches!(self.b[self.at], b',' | b'}' | b')') {
                        self.at += 1;
                    }
                    self.entry = String::from_utf8_lossy(&self.b[start..self.at])
                        .trim()
                        .to_owned();
                    if self.b.get(self.at) == Some(&b',') {
                        self.at += 1;
                    }
                    self.fields(close, false)?;
                }
            }
        }
        Ok(())
    }

    /// `name = value` pairs up to `close`; with `define`, each is a macro.
    fn fields(&mut self, close: u8, define: bool) -> Result<(), String> {
        loop {
            self.ws();
            match self.b.get(self.at) {
                None => return Ok(()),
                Some(&c) if c == close => {
                    self.at += 1;
                    return Ok(());
                }
                Some(b',') => {
                    self.at += 1;
                    continue;
                }
                _ => {}
            }
            let name = self.ident().to_ascii_lowercase();
            self.ws();
            if name.is_empty() || self.b.get(self.at) != Some(&b'=') {
                // Not a field: leave the rest of the entry to the parser.
                return Ok(());
            }
            self.at += 1;
            let size = self.value()?;
            if size.bytes > MAX_FIELD_BYTES || size.pieces > MAX_FIELD_PIECES {
                return Err(self.fail(format!(
                    "field `{name}` expands to {} bytes in {} pieces (at most {MAX_FIELD_BYTES} \
                     bytes, {MAX_FIELD_PIECES} pieces): @string macros that grow at each use?",
                    size.bytes, size.pieces
                )));
            }
            self.total = self.total.saturating_add(size.bytes);
            if self.total > MAX_FILE_BYTES {
                return Err(self.fail(format!(
                    "the file's fields expand to more than {MAX_FILE_BYTES} bytes"
                )));
            }
            if define {
                self.macros.insert(name, size);
            }
        }
    }

    /// A value: pieces joined by `#`.
    fn value(&mut self) -> Result<Size, String> {
        let mut size = Size::default();
        loop {
            self.ws();
            let piece = match self.b.get(self.at) {
                Some(b'{') => {
                    let start = self.at;
                    self.skip_group()?;
                    Size {
                        bytes: (self.at - start) as u64,
                        pieces: 1,
                    }
                }
                Some(b'"') => {
                    let start = self.at;
                    self.quoted()?;
                    Size {
                        bytes: (self.at - start) as u64,
                        pieces: 1,
                    }
                }
                Some(c) if c.is_ascii_digit() => {
                    let start = self.at;
                    while self.b.get(self.at).is_some_and(u8::is_ascii_digit) {
                        self.at += 1;
                    }
                    Size {
                        bytes: (self.at - start) as u64,
                        pieces: 1,
                    }
                }
                _ => {
                    let name = self.ident().to_ascii_lowercase();
                    if name.is_empty() {
                        return Ok(size);
                    }
                    // Month names and unknown macros are short; a known one is its size.
                    self.macros.get(&name).copied().unwrap_or(Size {
                        bytes: name.len() as u64,
                        pieces: 1,
                    })
                }
            };
            size = size.add(piece);
            self.ws();
            if self.b.get(self.at) != Some(&b'#') {
                return Ok(size);
            }
            self.at += 1;
        }
    }

    /// Past a `{…}` group (at its `{`), checking the nesting depth.
    fn skip_group(&mut self) -> Result<(), String> {
        let mut depth = 0usize;
        while let Some(&c) = self.b.get(self.at) {
            self.at += 1;
            match c {
                b'\\' => self.at += 1,
                b'{' => {
                    depth += 1;
                    if depth > MAX_DEPTH {
                        return Err(self.fail(format!("braces nested more than {MAX_DEPTH} deep")));
                    }
                }
                b'}' => {
                    depth = depth.saturating_sub(1);
                    if depth == 0 {
                        return Ok(());
                    }
                }
                _ => {}
            }
        }
        Ok(())
    }

    /// Past a `"…"` string (at its opening quote): braces inside it nest.
    fn quoted(&mut self) -> Result<(), String> {
        self.at += 1;
        let mut depth = 0usize;
        while let Some(&c) = self.b.get(self.at) {
            self.at += 1;
            match c {
                b'\\' => self.at += 1,
                b'{' => {
                    depth += 1;
                    if depth > MAX_DEPTH {
                        return Err(self.fail(format!("braces nested more than {MAX_DEPTH} deep")));
                    }
                }
                b'}' => depth = depth.saturating_sub(1),
                b'"' if depth == 0 => return Ok(()),
                _ => {}
            }
        }
        Ok(())
    }

    fn ident(&mut self) -> &str {
        let start = self.at;
        while self.b.get(self.at).is_some_and(|&c| {
            c.is_ascii_alphanumeric() || matches!(c, b'_' | b'-' | b':' | b'.' | b'+' | b'/')
        }) {
            self.at += 1;
        }
        std::str::from_utf8(&self.b[start..self.at]).unwrap_or("")
    }

    fn ws(&mut self) {
        while self.b.get(self.at).is_some_and(u8::is_ascii_whitespace) {
            self.at += 1;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `levels` @string macros, each twice the one before (the review's 1,000 bytes).
    fn doubling(levels: usize) -> String {
        let mut text = String::from("@string{m0 = \"xxxxxxxxxxxxxxxx\"}\n");
        for i in 1..=levels {
            text.push_str(&format!("@string{{m{i} = m{p} # m{p}}}\n", p = i - 1));
        }
        text.push_str(&format!(
            "@article{{boom, title = m{levels}, year = 2020}}\n"
        ));
        text
    }

    #[test]
    fn doubling_macros_are_refused_naming_the_macro_or_entry() {
        // m13 joins 2^13 pieces: over the bound, refused at its definition.
        let err = check(&doubling(14), "pubs.bib").unwrap_err();
        assert!(
            err.starts_with("pubs.bib: line 14: entry @string: field `m13`"),
            "{err}"
        );
        // Empty pieces cost nothing in bytes but everything in work.
        let empty = doubling(100).replace("xxxxxxxxxxxxxxxx", "");
        let err = check(&empty, "pubs.bib").unwrap_err();
        assert!(err.contains("pieces"), "{err}");
        // The review's file: 100 levels, far past any bound, refused at once.
        assert!(check(&doubling(100), "pubs.bib").is_err());
        // Below the bound it is fine: the entry's title is 64 KiB.
        check(&doubling(12), "pubs.bib").unwrap();
    }

    #[test]
    fn a_used_macro_counts_in_the_entry_that_uses_it() {
        let text = format!(
            "@string{{big = \"{}\"}}\n@article{{k1, title = big # big # big # big # big}}",
            "y".repeat(60_000)
        );
        let err = check(&text, "a.bib").unwrap_err();
        assert!(err.contains("entry k1: field `title`"), "{err}");
    }

    #[test]
    fn deep_braces_are_refused_naming_the_entry() {
        let deep = format!(
            "@article{{deep, title = {}x{}}}",
            "{".repeat(100_000),
            "}".repeat(100_000)
        );
        let err = check(&deep, "d.bib").unwrap_err();
        assert!(
            err.contains("entry deep") && err.contains("nested"),
            "{err}"
        );
        let quoted = format!("@article{{q, title = \"{}\"}}", "{".repeat(1000));
        assert!(check(&quoted, "d.bib").unwrap_err().contains("entry q"));
    }

    #[test]
    fn ordinary_files_pass() {
        let text = r#"
@string{cvpr = "IEEE/CVF Conference on Computer Vision and Pattern Recognition (CVPR)"}
@comment{ anything { here } }
@inproceedings{an2022partial,
  title     = {Killing Two Birds with One Stone: {E}fficient and Robust Training of {Face Recognition CNNs} by Partial {FC}},
  author    = "An, Xiang and Deng, Jiankang and {\"O}zt{\"u}rk, Ali",
  booktitle = cvpr # " 2022",
  month = jun,
  year      = 2022,
}
@article(paren, title = "x")
"#;
        check(text, "ok.bib").unwrap();
    }
}
