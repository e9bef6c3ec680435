//! The crate's error type: one enum, each variant naming a kind of failure that the HTTP
//! edge maps to one status (see `edge/http.rs`); and `printable`, input made safe to
//! print on one line in errors and logs ([`escape_controls`]).
//!
//! The failures of the outside dependencies it wraps (the conversation store, the
//! knowledge-base store, the model, the bot check) are defined here too and re-exported by
//! their modules, so every module can use this one without a cycle.

use std::fmt;

mod bot_check;
mod kb_source;
mod llm;
mod printable;
mod store;

pub use bot_check::BotCheckError;
pub use kb_source::KbSourceError;
pub use llm::{LlmError, TimeoutPhase, BUSY_RETRY_AFTER_SECS, MAX_ERROR_BODY};
pub use printable::escape_controls;
pub use store::StoreError;

/// Boxed source error kept inside the errors of outside dependencies, so no SDK or
/// transport type appears in the API.
pub type BoxError = Box<dyn std::error::Error + Send + Sync + 'static>;

/// Result alias used throughout the crate.
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// One validation problem: where (a JSON-pointer-like path) and what is wrong.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Problem {
    /// Location of the problem, e.g. `documents[3].title`.
    pub path: String,
    /// What is wrong there, in words a site owner understands.
    pub message: String,
}

impl Problem {
    /// Builds a problem from a path and a message. Both may quote the input (an id, a field
    /// name), so their control characters are escaped: problems are sent, logged and
    /// printed one per line.
    pub fn new(path: impl Into<String>, message: impl Into<String>) -> Self {
        let (path, message): (String, String) = (path.into(), message.into());
        Self {
            path: escape_controls(&path).into_owned(),
            message: escape_controls(&message).into_owned(),
        }
    }
}

impl fmt::Display for Problem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.path, self.message)
    }
}

/// Every problem found while validating one input, reported together.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Problems(pub Vec<Problem>);

impl fmt::Display for Problems {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} problem(s)", self.0.len())?;
        for p in &self.0 {
            write!(f, "\n  {p}")?;
        }
        Ok(())
    }
}

/// Everything that can go wrong in the core library.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// The caller sent something unusable (maps to 400).
    #[error("{0}")]
    InvalidInput(String),
    /// A knowledge base (or a change to one) failed validation; every problem is listed.
    #[error("invalid knowledge base: {0}")]
    InvalidKb(Problems),
    /// A file could not be read.
    #[error("cannot read {path}: {source}")]
    Io {
        /// The path that was being read.
        path: String,
        /// The underlying I/O error.
        #[source]
        source: std::io::Error,
    },
    /// A JSON document could not be parsed.
    #[error("invalid JSON in {what}: {source}")]
    Json {
        /// What was being parsed (a path, "request body", ...).
        what: String,
        /// The parser's error, with line and column.
        #[source]
        source: serde_json::Error,
    },
    /// A configuration variable holds a value that cannot be used.
    #[error("configuration variable {var}: {message}")]
    Config {
        /// The environment variable's name.
        var: &'static str,
        /// What is wrong with its value.
        message: String,
    },
    /// A call to the chat model failed (maps to 502, or 504 for timeouts).
    #[error(transparent)]
    Llm(#[from] LlmError),
    /// The conversation store failed (DynamoDB or its in-memory stand-in); the store's own
    /// message already says so, hence `transparent`.
    #[error(transparent)]
    Store(#[from] StoreError),
    /// The knowledge-base store failed (S3, a file); its message names the location.
    #[error(transparent)]
    KbSource(#[from] KbSourceError),
    /// The knowledge base could not be loaded at cold start; the function must not start.
    #[error("cannot load the knowledge base from {location}: {source}")]
    KbLoad {
        /// Where it was loaded from (`s3://bucket/key` or a path).
        location: String,
        /// Why: missing, unreadable, corrupt JSON or invalid.
        #[source]
        source: Box<Error>,
    },
    /// A conditional write lost: the data changed since the caller read it (maps to 409).
    #[error("{0}")]
    Conflict(String),
    /// A write did not say which version it is based on (maps to 428).
    #[error("{0}")]
    PreconditionRequired(String),
    /// An input is larger than a configured limit, which the message names (maps to 413).
    #[error("{0}")]
    TooLarge(String),
    /// The request carries no usable credentials (maps to 401).
    #[error("{0}")]
    Unauthorized(String),
    /// The credentials are wrong, or the action is switched off (maps to 403).
    #[error("{0}")]
    Forbidden(String),
    /// The bot check is on and the request's proof of work is missing, wrong or expired
    /// (maps to 403 with the error's own code).
    #[error("{}", .0.message())]
    BotCheck(BotCheckError),
    /// The request names something that does not exist, which the message says (maps to
    /// 404).
    #[error("{0}")]
    NotFound(String),
    /// The client or its session sent too many requests this minute (maps to 429 with
    /// `Retry-After`).
    #[error("too many requests from this {scope}; retry in {retry_after_secs} s")]
    RateLimited {
        /// Whose limit: `client` or `session`.
        scope: &'static str,
        /// Seconds until the limit resets.
        retry_after_secs: u64,
    },
}
