//! Scratch folders for tests (the unit tests here, and by `#[path]` the integration tests'
//! `common`): made empty, removed when the test passes (a failing test's stays to look at),
//! so a test run leaves nothing behind in the temp dir.

use std::path::{Path, PathBuf};

/// A test's scratch folder, `<temp>/<prefix>-<pid>-<name>`.
pub(crate) struct Scratch(PathBuf);

impl Scratch {
    /// Makes the folder, empty.
    pub(crate) fn new(prefix: &str, name: &str) -> Scratch {
        let dir = std::env::temp_dir().join(format!("{prefix}-{}-{name}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display()));
        Scratch(dir)
    }

    /// Writes `text` to the file `name` in the folder; returns its path.
    pub(crate) fn file(&self, name: &str, text: &str) -> PathBuf {
        let path = self.0.join(name);
        std::fs::write(&path, text).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        path
    }
}

impl std::ops::Deref for Scratch {
    type Target = Path;
    fn deref(&self) -> &Path {
        &self.0
    }
}

impl AsRef<Path> for Scratch {
    fn as_ref(&self) -> &Path {
        &self.0
    }
}

impl AsRef<std::ffi::OsStr> for Scratch {
    fn as_ref(&self) -> &std::ffi::OsStr {
        self.0.as_os_str()
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        if !std::thread::panicking() {
            let _ = std::fs::remove_dir_all(&self.0);
        }
    }
}
