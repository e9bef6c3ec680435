//! The files of a source folder, for the readers that take a whole tree (built HTML,
//! Markdown sources).

use std::path::{Path, PathBuf};

/// Every file below `dir` whose extension is one of `extensions` (ASCII case ignored),
/// sorted, so a build reads them, and numbers what it finds, in the same order on every
/// machine. Symbolic links are not followed: a link back up the tree would never end.
pub(super) fn files_with_extensions(
    dir: &Path,
    extensions: &[&str],
) -> std::io::Result<Vec<PathBuf>> {
    let mut files = Vec::new();
    walk(dir, extensions, &mut files)?;
    files.sort();
    Ok(files)
}

fn walk(dir: &Path, extensions: &[&str], out: &mut Vec<PathBuf>) -> std::io::Result<()> {
    for entry in std::fs::read_dir(dir)? {
        let entry = entry?;
        let path = entry.path();
        let kind = entry.file_type()?;
        if kind.is_dir() {
            walk(&path, extensions, out)?;
        } else if kind.is_file()
            && path.extension().is_some_and(|e| {
                extensions
                    .iter()
                    .any(|wanted| e.eq_ignore_ascii_case(wanted))
            })
        {
            out.push(path);
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_the_wanted_extensions_at_any_depth_in_order() {
        let dir = std::env::temp_dir().join(format!("rag-tree-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        let root = dir.as_path();
        std::fs::create_dir_all(root.join("b/c")).expect("dirs");
        for name in [
            "z.md",
            "b/c/a.MARKDOWN",
            "b/page.html",
            "a.md.txt",
            "b/c.md",
        ] {
            std::fs::write(root.join(name), "x").expect("write");
        }
        let found = files_with_extensions(root, &["md", "markdown"]).expect("walk");
        let names: Vec<_> = found
            .iter()
            .map(|p| p.strip_prefix(root).expect("below root").to_owned())
            .collect();
        // Paths sort by component: folder `b/c` before its sibling file `b/c.md`.
        let expected: Vec<PathBuf> = ["b/c/a.MARKDOWN", "b/c.md", "z.md"]
            .iter()
            .map(PathBuf::from)
            .collect();
        assert_eq!(names, expected);
        let _ = std::fs::remove_dir_all(&dir);
    }
}
