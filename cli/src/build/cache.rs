//! The crawl cache (`.rag-cache.json` next to the output): each crawled URL's validators
//! (ETag, Last-Modified) and extracted page, so a re-run asks "changed since?" and reuses
//! what the server says is unchanged.

use std::collections::BTreeMap;
use std::path::Path;

use serde::{Deserialize, Serialize};

use super::page::Page;

/// The cache file's content.
#[derive(Debug, Default, Serialize, Deserialize)]
pub(crate) struct Cache {
    /// Per URL, sorted so the file is deterministic too.
    pub(crate) pages: BTreeMap<String, Cached>,
}

/// What is remembered of one URL.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub(crate) struct Cached {
    /// The `ETag` the server sent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) etag: Option<String>,
    /// The `Last-Modified` the server sent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) last_modified: Option<String>,
    /// The page extracted from that version.
    pub(crate) page: Page,
}

impl Cache {
    /// Reads the cache; a missing or unreadable one is empty (the crawl then fetches
    /// everything, which is always correct).
    pub(crate) fn load(path: &Path) -> Self {
        std::fs::read(path)
            .ok()
            .and_then(|b| serde_json::from_slice(&b).ok())
            .unwrap_or_default()
    }

    /// Writes the cache (through a temporary file, so a crash leaves the old one).
    pub(crate) fn save(&self, path: &Path) -> Result<(), String> {
        let text = serde_json::to_string_pretty(self).map_err(|e| e.to_string())?;
        super::write(path, (text + "\n").as_bytes())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_saved_cache_loads_back_and_a_broken_one_loads_empty() {
        let dir = std::env::temp_dir().join(format!("rag-cache-test-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join(".rag-cache.json");
        let mut c = Cache::default();
        c.pages.insert(
            "https://ex.org/".into(),
            Cached {
                etag: Some("\"abc\"".into()),
                last_modified: None,
                page: Page {
                    url: "https://ex.org/".into(),
                    title: "Home".into(),
                    content: "Hi".into(),
                    ..Page::default()
                },
            },
        );
        c.save(&path).unwrap();
        let back = Cache::load(&path);
        assert_eq!(
            back.pages["https://ex.org/"].etag.as_deref(),
            Some("\"abc\"")
        );
        assert_eq!(back.pages["https://ex.org/"].page.title, "Home");
        std::fs::write(&path, "not json").unwrap();
        assert!(Cache::load(&path).pages.is_empty());
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
