//! The ingest function's own variables, read once like [`Config`](crate::Config).

use crate::config::ranged;
use crate::error::{Error, Result};

use super::auth::TokenHash;

/// Default largest accepted ingest body: 5 MiB, under the 6 MB a function URL carries.
pub const DEFAULT_MAX_BYTES: usize = 5 * 1024 * 1024;
/// Largest `INGEST_MAX_BYTES` accepted: a function URL's request payload limit (6 MB).
pub const MAX_MAX_BYTES: usize = 6 * 1000 * 1000;

/// Default largest staged knowledge base (`POST ?stage=1`): 256 MiB, past the largest real
/// sites measured (the JDK's API docs, 10k pages: 71 MB). Promotion needs about 4 times it
/// in the ingest function's memory (the template gives it 1,024 MB).
pub const DEFAULT_MAX_STAGED_BYTES: usize = 256 * 1024 * 1024;
/// Largest `INGEST_MAX_STAGED_BYTES` accepted: 1 GiB. Promotion parses and validates the
/// whole object in the function's memory, so the limit is really the function's memory.
pub const MAX_MAX_STAGED_BYTES: usize = 1024 * 1024 * 1024;
/// Default heap a serving function can give its knowledge base's index, in MiB, when
/// neither `INDEX_MEMORY_MB` nor `SERVING_MEMORY_MB` is set: the template's default
/// `ServingMemorySize` (512 MB) less [`RUNTIME_MEMORY_MB`], so a local run refuses what a
/// default deployment would.
pub const DEFAULT_INDEX_MEMORY_MB: usize = 512 - RUNTIME_MEMORY_MB;
/// What a serving function holds besides its knowledge base's index, in MiB: the runtime,
/// the binary's dictionaries and a request in flight (search resident with the sample
/// knowledge base: about 15 MiB; chat with its SDK clients more).
pub const RUNTIME_MEMORY_MB: usize = 40;

/// Default key prefix of staged uploads, beside the live key in the same bucket.
pub const DEFAULT_STAGING_PREFIX: &str = "staging/";

/// The ingest function's settings, from its environment (the shared ones are in
/// [`crate::Config`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct IngestConfig {
    /// `INGEST_TOKEN_SHA256`: hex SHA-256 of the bearer token; unset = ingest refuses all.
    pub token_hash: Option<TokenHash>,
    /// `INGEST_MAX_BYTES`: largest accepted body (default 5 MiB).
    pub max_bytes: usize,
    /// `INGEST_MAX_STAGED_BYTES`: largest staged knowledge base promoted (default 256 MiB).
    pub max_staged_bytes: usize,
    /// `INGEST_STAGING_PREFIX`: where staged uploads go in the knowledge base's bucket
    /// (default `staging/`); must end with `/`.
    pub staging_prefix: String,
    /// `INDEX_MEMORY_MB`: heap the serving functions can give the knowledge base (8..=10,240);
    /// unset, `SERVING_MEMORY_MB` (their memory, 128..=10,240, which the template passes)
    /// less [`RUNTIME_MEMORY_MB`], else [`DEFAULT_INDEX_MEMORY_MB`]. A version whose index
    /// would need more is refused (see [`super::IngestService::with_index_memory`]).
    pub index_memory_mb: usize,
}

impl IngestConfig {
    /// Reads the process environment.
    pub fn from_env() -> Result<Self> {
        Self::from_lookup(|k| std::env::var(k).ok())
    }

    /// Reads variables through `get`; unset and empty are the same.
    pub fn from_lookup(get: impl Fn(&str) -> Option<String>) -> Result<Self> {
        let get = crate::config::trimmed(get);
        let token_hash = get("INGEST_TOKEN_SHA256")
            .map(|v| TokenHash::from_hex(&v))
            .transpose()
            .map_err(|message| Error::Config {
                var: "INGEST_TOKEN_SHA256",
                message,
            })?;
        let staging_prefix =
            get("INGEST_STAGING_PREFIX").unwrap_or_else(|| DEFAULT_STAGING_PREFIX.to_owned());
        // A prefix ending in `/` is a folder of its own, so no staged key can be the live
        // key or start another folder's name (`staging` would also match `staging-old/`).
        if !staging_prefix.ends_with('/') || staging_prefix.starts_with('/') {
            return Err(Error::Config {
                var: "INGEST_STAGING_PREFIX",
                message: format!(
                    "must be a key prefix like staging/ (ending, not starting, with /), got \
                     {staging_prefix:?}"
                ),
            });
        }
        Ok(Self {
            token_hash,
            max_bytes: ranged(&get, "INGEST_MAX_BYTES", 1, MAX_MAX_BYTES)?
                .unwrap_or(DEFAULT_MAX_BYTES),
            max_staged_bytes: ranged(&get, "INGEST_MAX_STAGED_BYTES", 1, MAX_MAX_STAGED_BYTES)?
                .unwrap_or(DEFAULT_MAX_STAGED_BYTES),
            staging_prefix,
            index_memory_mb: match ranged(&get, "INDEX_MEMORY_MB", 8, 10_240)? {
                Some(mb) => mb,
                None => ranged(&get, "SERVING_MEMORY_MB", 128, 10_240)?
                    .map_or(DEFAULT_INDEX_MEMORY_MB, |mb| mb - RUNTIME_MEMORY_MB),
            },
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn config(vars: &[(&str, &str)]) -> Result<IngestConfig> {
        let vars: Vec<(String, String)> = vars
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        IngestConfig::from_lookup(|k| {
            vars.iter()
                .find(|(name, _)| name == k)
                .map(|(_, v)| v.clone())
        })
    }

    #[test]
    fn defaults_disable_ingest_and_allow_5_mib() {
        let c = config(&[]).unwrap();
        assert_eq!((c.token_hash, c.max_bytes), (None, DEFAULT_MAX_BYTES));
        assert_eq!(c.max_staged_bytes, 256 * 1024 * 1024);
        assert_eq!(c.staging_prefix, "staging/");
    }

    /// The `Default:` of parameter `name` in the SAM template.
    fn template_default(name: &str) -> usize {
        let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../template.yaml");
        let template = std::fs::read_to_string(path).expect("the repository's template");
        let block = template
            .split(&format!("\n  {name}:\n"))
            .nth(1)
            .unwrap_or_else(|| panic!("parameter {name}"));
        let line = block
            .lines()
            .find(|l| l.trim_start().starts_with("Default:"));
        let value = line.and_then(|l| l.split(':').nth(1)).map(str::trim);
        value
            .and_then(|v| v.parse().ok())
            .unwrap_or_else(|| panic!("{name}'s default"))
    }

    #[test]
    fn the_defaults_are_the_templates_so_a_local_run_refuses_what_a_deployment_would() {
        let serving = template_default("ServingMemorySize");
        assert_eq!(DEFAULT_INDEX_MEMORY_MB, serving - RUNTIME_MEMORY_MB);
        assert_eq!(
            DEFAULT_MAX_STAGED_BYTES,
            template_default("IngestMaxStagedBytes")
        );
        assert_eq!(DEFAULT_MAX_BYTES, template_default("IngestMaxBytes"));
    }

    #[test]
    fn the_index_memory_follows_the_serving_functions_memory_unless_given() {
        assert_eq!(config(&[]).unwrap().index_memory_mb, 472);
        let serving = config(&[("SERVING_MEMORY_MB", "256")]).unwrap();
        assert_eq!(serving.index_memory_mb, 256 - RUNTIME_MEMORY_MB);
        let both = config(&[("SERVING_MEMORY_MB", "256"), ("INDEX_MEMORY_MB", "100")]);
        assert_eq!(both.unwrap().index_memory_mb, 100);
        let small = config(&[("SERVING_MEMORY_MB", "64")])
            .unwrap_err()
            .to_string();
        assert!(small.contains("SERVING_MEMORY_MB"), "{small}");
    }

    #[test]
    fn reads_the_hash_and_limit_and_names_bad_variables() {
        let hash = "2bb80d537b1da3e38bd30361aa855686bde0eacd7162fef6a25fe97bf527a25b";
        let c = config(&[
            ("INGEST_TOKEN_SHA256", hash),
            ("INGEST_MAX_BYTES", "1024"),
            ("INGEST_MAX_STAGED_BYTES", "2048"),
            ("INGEST_STAGING_PREFIX", "kb/incoming/"),
        ])
        .unwrap();
        assert_eq!(c.token_hash, Some(TokenHash::of_token("secret")));
        assert_eq!((c.max_bytes, c.max_staged_bytes), (1024, 2048));
        assert_eq!(c.staging_prefix, "kb/incoming/");
        for (var, value) in [
            ("INGEST_TOKEN_SHA256", "secret"),
            ("INGEST_MAX_BYTES", "0"),
            ("INGEST_MAX_BYTES", "7000000"),
            ("INGEST_MAX_BYTES", "lots"),
            ("INGEST_MAX_STAGED_BYTES", "0"),
            ("INGEST_MAX_STAGED_BYTES", "2000000000"),
            ("INGEST_STAGING_PREFIX", "staging"),
            ("INGEST_STAGING_PREFIX", "/staging/"),
        ] {
            let err = config(&[(var, value)]).unwrap_err().to_string();
            assert!(err.contains(var), "{var}={value}: {err}");
        }
        // A token pasted where its hash belongs must not reach the log.
        let err = config(&[("INGEST_TOKEN_SHA256", "hunter2")]).unwrap_err();
        assert!(!err.to_string().contains("hunter2"), "{err}");
    }
}
