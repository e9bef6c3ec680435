//! The files of a source folder, for the readers that take a whole tree (built HTML,
//! Markdown sources).

use std::path::{Path, PathBuf};

/// What a walk of a source folder found.
#[derive(Debug, Default)]
pub(super) struct Tree {
    /// The wanted files, sorted.
    pub(super) files: Vec<PathBuf>,
    /// Symbolic links leading outside the folder, or nowhere, sorted: left out.
    pub(super) links_out: Vec<PathBuf>,
}

/// Every file below `dir` whose extension is one of `extensions` (ASCII case ignored),
/// sorted, so a build reads them, and numbers what it finds, in the same order on every
/// machine. Symbolic links are not followed. One inside the folder is another name for a
/// file or folder the walk reaches anyway (and a link back up the tree would never end);
/// one leading outside is reported, not read: a link added to a site's sources must not
/// publish what it points at (`secret.html -> ~/.aws/credentials`), and the owner can point
/// the build at the folder it leads to (Debian's `r-doc-html` links its manuals in from
/// `/usr/share/R/doc`).
pub(super) fn files_with_extensions(dir: &Path, extensions: &[&str]) -> std::io::Result<Tree> {
    let root = std::fs::canonicalize(dir)?;
    let mut tree = Tree::default();
    walk(dir, &root, extensions, &mut tree)?;
    tree.files.sort();
    tree.links_out.sort();
    Ok(tree)
}

impl Tree {
    /// A warning naming the links left out (up to three), if any.
    pub(super) fn links_warning(&self, dir: &Path) -> Option<String> {
        let n = self.links_out.len();
        (n > 0).then(|| {
            let names: Vec<String> = self
                .links_out
                .iter()
                .take(3)
                .map(|p| p.strip_prefix(dir).unwrap_or(p).display().to_string())
                .collect();
            format!(
                "{n} symbolic link(s) in {} lead outside it or nowhere and were not read \
                 (e.g. {}): to build what they lead to, name that folder",
                dir.display(),
                names.join(", ")
            )
        })
    }
}

/// Whether `path`, resolved, lies inside the canonical folder `root`.
pub(super) fn inside(root: &Path, path: &Path) -> bool {
    std::fs::canonicalize(path).is_ok_and(|real| real.starts_with(root))
}

fn walk(dir: &Path, root: &Path, extensions: &[&str], tree: &mut Tree) -> std::io::Result<()> {
    for entry in std::fs::read_dir(dir)? {
        let entry = entry?;
        let path = entry.path();
        let kind = entry.file_type()?;
        if kind.is_dir() {
            walk(&path, root, extensions, tree)?;
        } else if kind.is_symlink() {
            // Only links that would have given pages are worth a word (a Sphinx site's
            // `jquery.js` linked in from the system's copy is not).
            let would_read = wanted(&path, extensions) || path.is_dir();
            if would_read && !inside(root, &path) {
                tree.links_out.push(path);
            }
        } else if kind.is_file() && wanted(&path, extensions) {
            tree.files.push(path);
        }
    }
    Ok(())
}

fn wanted(path: &Path, extensions: &[&str]) -> bool {
    path.extension().is_some_and(|e| {
        extensions
            .iter()
            .any(|wanted| e.eq_ignore_ascii_case(wanted))
    })
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
            .files
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

    #[cfg(unix)]
    #[test]
    fn links_are_not_followed_and_those_leading_out_are_reported() {
        use std::os::unix::fs::symlink;
        let dir = std::env::temp_dir().join(format!("rag-tree-links-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        let (site, outside) = (dir.join("site"), dir.join("outside"));
        std::fs::create_dir_all(site.join("manual")).expect("dirs");
        std::fs::create_dir_all(&outside).expect("dirs");
        std::fs::write(site.join("manual/intro.html"), "x").expect("write");
        std::fs::write(outside.join("secret.html"), "x").expect("write");
        // Another name for a page, a folder linked in again, a link back up the tree, a
        // link out of the folder (a file, a folder) and one to nowhere.
        symlink("manual/intro.html", site.join("start.html")).expect("link");
        symlink("manual", site.join("docs")).expect("link");
        symlink("..", site.join("manual/up")).expect("link");
        symlink("../outside/secret.html", site.join("secret.html")).expect("link");
        symlink("../outside", site.join("more")).expect("link");
        symlink("gone.html", site.join("dangling.html")).expect("link");
        symlink("../outside/secret.html", site.join("jquery.js")).expect("link");
        let found = files_with_extensions(&site, &["html"]).expect("walk");
        let rel = |paths: &[PathBuf]| -> Vec<String> {
            paths
                .iter()
                .map(|p| p.strip_prefix(&site).expect("below").display().to_string())
                .collect()
        };
        assert_eq!(rel(&found.files), ["manual/intro.html"]);
        assert_eq!(
            rel(&found.links_out),
            ["dangling.html", "more", "secret.html"]
        );
        let _ = std::fs::remove_dir_all(&dir);
    }
}
