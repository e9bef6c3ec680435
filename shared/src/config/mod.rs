//! Configuration read once from the environment into typed values.
//!
//! `Config::from_lookup` takes any `name → value` function so tests never touch the
//! process environment; `Config::from_env` is the one call `main` makes. A bad value fails
//! the cold start with an error naming the variable.
//!
//! `aws`: the AWS SDK configuration built from it once per cold start
//! ([`sdk_config_from_env`], [`AwsClients`]).

mod aws;

// Only the moto test clients build an SDK configuration by hand.
#[cfg(any(test, feature = "test-util"))]
pub(crate) use aws::{retry_config, timeouts};
pub use aws::{sdk_config_from_env, AwsClients, AWS_MAX_ATTEMPTS, AWS_THROTTLING_BACKOFF};

use crate::error::{Error, Result};
use std::path::PathBuf;
use std::str::FromStr;

/// Largest accepted `top_k` of a search, and of `TOP_K`. Kept here, below `search`,
/// because the configuration reads `TOP_K` against it.
pub const MAX_TOP_K: usize = 50;

/// `MIN_SCORE` when unset: the lowest BM25 score a hit may have.
pub const DEFAULT_MIN_SCORE: f32 = 0.5;

/// Where the knowledge base comes from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum KbLocation {
    /// A local file.
    File(PathBuf),
    /// An S3 object, `s3://bucket/key`.
    S3 {
        /// The bucket, without `s3://`.
        bucket: String,
        /// The object's key within the bucket (no leading `/`).
        key: String,
    },
}

impl FromStr for KbLocation {
    type Err = String;

    fn from_str(s: &str) -> std::result::Result<Self, String> {
        match s.strip_prefix("s3://") {
            Some(rest) => match rest.split_once('/') {
                Some((bucket, key)) if !bucket.is_empty() && !key.is_empty() => {
                    Ok(KbLocation::S3 {
                        bucket: bucket.to_owned(),
                        key: key.to_owned(),
                    })
                }
                _ => Err(format!("expected s3://bucket/key, got {s:?}")),
            },
            None if s.trim().is_empty() => Err("must not be empty".to_owned()),
            None => Ok(KbLocation::File(PathBuf::from(s))),
        }
    }
}

/// The typed configuration shared by the functions (the model client reads its own
/// variables, see `llm`).
#[derive(Debug, Clone, PartialEq)]
pub struct Config {
    /// `KB_SOURCE`: knowledge-base path or `s3://bucket/key` (default `knowledge_base.json`).
    pub kb_source: KbLocation,
    /// `KB_REFRESH_SECS`: how often a warm function re-checks the knowledge base (default 300).
    pub kb_refresh_secs: u64,
    /// `CONVERSATIONS_TABLE`: DynamoDB table for turns; none = in-memory store.
    pub conversations_table: Option<String>,
    /// `AUDIT_TABLE`: DynamoDB table for audit records; none = in-memory store.
    pub audit_table: Option<String>,
    /// `AUDIT_DUMP_FILE`: with the in-memory store, a file its audit records are appended
    /// to as JSON lines (the local stand-in for the audit table that `rag report --dump`
    /// reads); none = kept in memory only.
    pub audit_dump: Option<PathBuf>,
    /// `LIMITS_TABLE`: DynamoDB table for the rate-limit and token-budget counters, shared
    /// by all instances; none = counters in each instance's memory.
    pub limits_table: Option<String>,
    /// `TOP_K`: hits per query by default (default 3, 1..=50).
    pub top_k: usize,
    /// `MIN_SCORE`: lowest BM25 score a hit may have (default 0.5).
    pub min_score: f32,
    /// `ALLOWED_ORIGINS`: comma-separated origins allowed by CORS (`*` for any); empty = none.
    pub allowed_origins: Vec<String>,
}

impl Config {
    /// Reads the process environment.
    pub fn from_env() -> Result<Self> {
        Self::from_lookup(|k| std::env::var(k).ok())
    }

    /// Reads variables through `get`; unset and empty are the same.
    pub fn from_lookup(get: impl Fn(&str) -> Option<String>) -> Result<Self> {
        let get = trimmed(get);
        Ok(Self {
            kb_source: parse(&get, "KB_SOURCE")?
                .unwrap_or_else(|| KbLocation::File(PathBuf::from("knowledge_base.json"))),
            kb_refresh_secs: parse(&get, "KB_REFRESH_SECS")?.unwrap_or(300),
            conversations_table: get("CONVERSATIONS_TABLE"),
            audit_table: get("AUDIT_TABLE"),
            audit_dump: get("AUDIT_DUMP_FILE").map(PathBuf::from),
            limits_table: get("LIMITS_TABLE"),
            top_k: ranged(&get, "TOP_K", 1, MAX_TOP_K)?.unwrap_or(3),
            min_score: match parse::<f32>(&get, "MIN_SCORE")? {
                Some(s) if !(s.is_finite() && s >= 0.0) => {
                    return Err(bad("MIN_SCORE", "must be a number ≥ 0"))
                }
                s => s.unwrap_or(DEFAULT_MIN_SCORE),
            },
            allowed_origins: get("ALLOWED_ORIGINS")
                .map(|v| {
                    v.split(',')
                        .map(|o| o.trim().trim_end_matches('/').to_owned())
                        .filter(|o| !o.is_empty())
                        .collect()
                })
                .unwrap_or_default(),
        })
    }
}

fn bad(var: &'static str, message: impl Into<String>) -> Error {
    Error::Config {
        var,
        message: message.into(),
    }
}

/// The one variable lookup of every configuration (this one, the chat's, the model's,
/// ingest's): wraps `get` (the process environment, or a map in tests) so values come back
/// trimmed and unset, empty and blank read the same (`None`); SAM parameters and shell
/// exports often leave variables present but empty.
pub(crate) fn trimmed(get: impl Fn(&str) -> Option<String>) -> impl Fn(&str) -> Option<String> {
    move |k| {
        get(k)
            .map(|v| v.trim().to_owned())
            .filter(|v| !v.is_empty())
    }
}

/// Parses an optional variable with `FromStr`, naming the variable on failure.
pub(crate) fn parse<T: FromStr>(
    get: &impl Fn(&str) -> Option<String>,
    var: &'static str,
) -> Result<Option<T>>
where
    T::Err: std::fmt::Display,
{
    get(var)
        .map(|v| {
            v.parse::<T>()
                .map_err(|e| bad(var, format!("{e} (got {v:?})")))
        })
        .transpose()
}

/// Parses an optional whole number that must lie in `lo..=hi`.
pub(crate) fn ranged(
    get: &impl Fn(&str) -> Option<String>,
    var: &'static str,
    lo: usize,
    hi: usize,
) -> Result<Option<usize>> {
    match parse::<usize>(get, var)? {
        Some(v) if !(lo..=hi).contains(&v) => {
            Err(bad(var, format!("must be from {lo} to {hi}, got {v}")))
        }
        v => Ok(v),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;

    fn config(vars: &[(&str, &str)]) -> Result<Config> {
        let map: HashMap<String, String> = vars
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        Config::from_lookup(|k| map.get(k).cloned())
    }

    #[test]
    fn defaults_need_no_variables() {
        let c = config(&[]).unwrap();
        assert_eq!(c.kb_source, KbLocation::File("knowledge_base.json".into()));
        assert_eq!((c.top_k, c.min_score, c.kb_refresh_secs), (3, 0.5, 300));
        assert!(c.conversations_table.is_none() && c.allowed_origins.is_empty());
    }

    #[test]
    fn reads_every_variable() {
        let c = config(&[
            ("KB_SOURCE", "s3://bucket/kb/knowledge_base.json"),
            ("KB_REFRESH_SECS", "60"),
            ("CONVERSATIONS_TABLE", "conv"),
            ("AUDIT_TABLE", "audit"),
            ("TOP_K", "5"),
            ("MIN_SCORE", "0"),
            ("ALLOWED_ORIGINS", "https://a.example, https://b.example/"),
        ])
        .unwrap();
        assert_eq!(
            c.kb_source,
            KbLocation::S3 {
                bucket: "bucket".into(),
                key: "kb/knowledge_base.json".into()
            }
        );
        assert_eq!((c.kb_refresh_secs, c.top_k, c.min_score), (60, 5, 0.0));
        assert_eq!(c.conversations_table.as_deref(), Some("conv"));
        assert_eq!(
            c.allowed_origins,
            vec!["https://a.example", "https://b.example"]
        );
    }

    #[test]
    fn bad_values_name_the_variable() {
        for (var, value) in [
            ("TOP_K", "0"),
            ("TOP_K", "many"),
            ("MIN_SCORE", "-1"),
            ("MIN_SCORE", "NaN"),
            ("KB_REFRESH_SECS", "soon"),
            ("KB_SOURCE", "s3://bucket"),
        ] {
            let err = config(&[(var, value)]).unwrap_err().to_string();
            assert!(err.contains(var), "{var}={value}: {err}");
        }
    }
}
