//! Settings only the chat function reads (the shared ones are in [`crate::Config`]).

use std::time::Duration;

use crate::config::{parse, ranged, trimmed};
use crate::error::{Error, Result};
use crate::limits::{BotCheck, DEFAULT_DIFFICULTY, DEFAULT_TTL_SECS, DIFFICULTY_RANGE};
use crate::prompt::{ANSWER_RESERVE, DEFAULT_SYSTEM_PROMPT};
use crate::secret::Secret;

use super::rewrite::QueryRewrite;
use super::style::AnswerStyle;

/// Chat settings: the owner's prompt, the context window and the request limits.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ChatConfig {
    /// `SYSTEM_PROMPT`, else the contents of `SYSTEM_PROMPT_FILE`, else a default for a
    /// researcher's homepage.
    pub system_prompt: String,
    /// `MAX_CONTEXT_TOKENS`: the model's context window (default 8192, 1024..=1,000,000).
    pub max_context_tokens: usize,
    /// `MAX_MESSAGE_CHARS`: longest accepted message (default 4000, 1..=20,000).
    pub max_message_chars: usize,
    /// `MAX_MESSAGES`: most turns in one request (default 40, 1..=200).
    pub max_messages: usize,
    /// `HISTORY_MESSAGES`: messages read back from the store for a known session
    /// (default 20, 0..=200).
    pub history_messages: usize,
    /// `CONVERSATION_TTL_DAYS`: how long stored turns and audit records live (default 30,
    /// 1..=3650).
    pub ttl_days: u64,
    /// Largest `top_k` a request may ask for (not configurable: every hit costs prompt room).
    pub max_top_k: usize,
    /// `CLIENT_HASH_SALT`: salt of the client-address hashes (audit records, rate-limit
    /// keys). Unset: a salt kept in the limits table (read by the first request that needs
    /// it, not at cold start), else a random one per cold start (see
    /// [`crate::limits::client_salt`] and [`crate::limits::ClientSalt`]).
    pub client_salt: Option<Secret>,
    /// `RATE_LIMIT_PER_MINUTE`: chat requests per client and per session per minute
    /// (default 20, 0 = off, at most 100,000).
    pub rate_limit_per_minute: u64,
    /// `CLIENT_IPV6_PREFIX`: IPv6 clients are counted and hashed by this many leading bits
    /// of their address (default 64, 16..=128; see [`crate::limits::client_network`]). IPv4 clients by
    /// their address.
    pub ipv6_prefix: u8,
    /// `DAILY_TOKEN_BUDGET`: model tokens (prompt + completion) per UTC day for all clients
    /// together; when used up, chat answers offline until the next day (default 1,000,000,
    /// 0 = no budget).
    pub daily_token_budget: u64,
    /// `QUERY_REWRITE`: when one short model call expands the question into a query in the
    /// site's language and a hypothetical answer passage, searched and fused with it
    /// (`chat/rewrite.rs`): `off`, `weak` (a weak or back-referring question),
    /// `cross_language` (default: as `weak`, or a question not in the site's main
    /// language) or `always`.
    pub query_rewrite: QueryRewrite,
    /// `REWRITE_MODEL`: the model that expands questions, on the answering model's
    /// provider (default: the answering model, `LLM_MODEL`).
    pub rewrite_model: Option<String>,
    /// `QUERY_REWRITE_TIMEOUT_MS`: the longest the expansion may take, budget reservation
    /// included, before the question's own hits are used (default 2000, 100..=10,000).
    pub rewrite_timeout: Duration,
    /// `BOT_CHECK`: `off` (default) or `pow`, a proof-of-work challenge every chat request
    /// must carry solved (see [`crate::limits::verify_proof`]); with `pow`, `BOT_CHECK_DIFFICULTY`
    /// (leading zero bits, default 13, 1..=24) and `BOT_CHECK_TTL_SECS` (how long a
    /// challenge stays valid, default 300, 30..=3600).
    pub bot_check: BotCheck,
    /// `ANSWER_STYLE`: `concise`, `standard` (default) or `detailed` (see [`AnswerStyle`]).
    pub answer_style: AnswerStyle,
    /// `ANSWER_CACHE`: `on` (default) reuses the answer to a first-turn question asked
    /// again (see [`crate::answer_cache`]); `off` never does.
    pub answer_cache: bool,
    /// `ANSWER_CACHE_TTL_SECS`: how long a cached answer is reused (default 86,400,
    /// 60..=2,592,000).
    pub answer_cache_ttl_secs: u64,
    /// `CONTACT_URL`: the owner's contact (`mailto:` or an http(s) address), offered when
    /// the site has nothing on a question and reported by health for the widget.
    pub contact_url: Option<String>,
    /// How long the store calls of a turn may take (not configurable: fixed defaults,
    /// [`super::StoreBudgets`]; tests pass small ones).
    pub store_budgets: super::StoreBudgets,
}

impl Default for ChatConfig {
    fn default() -> Self {
        Self {
            system_prompt: DEFAULT_SYSTEM_PROMPT.to_owned(),
            max_context_tokens: 8192,
            max_message_chars: 4000,
            max_messages: 40,
            history_messages: 20,
            ttl_days: 30,
            max_top_k: 10,
            client_salt: None,
            rate_limit_per_minute: 20,
            ipv6_prefix: crate::limits::DEFAULT_IPV6_PREFIX,
            daily_token_budget: 1_000_000,
            query_rewrite: QueryRewrite::default(),
            rewrite_model: None,
            rewrite_timeout: super::rewrite::DEFAULT_TIMEOUT,
            bot_check: BotCheck::Off,
            answer_style: AnswerStyle::Standard,
            answer_cache: true,
            answer_cache_ttl_secs: 86_400,
            contact_url: None,
            store_budgets: super::StoreBudgets::default(),
        }
    }
}

impl ChatConfig {
    /// How long a cached answer is reused.
    pub fn answer_cache_ttl(&self) -> std::time::Duration {
        std::time::Duration::from_secs(self.answer_cache_ttl_secs)
    }

    /// How long stored items live.
    pub fn ttl(&self) -> std::time::Duration {
        std::time::Duration::from_secs(self.ttl_days * 24 * 3600)
    }

    /// Reads the process environment.
    pub fn from_env() -> Result<Self> {
        Self::from_lookup(|k| std::env::var(k).ok())
    }

    /// Reads variables through `get`; unset and empty are the same. `SYSTEM_PROMPT_FILE`
    /// is read here, once, so a missing file fails the cold start.
    pub fn from_lookup(get: impl Fn(&str) -> Option<String>) -> Result<Self> {
        let trimmed = trimmed(&get);
        let defaults = Self::default();
        // The prompt is kept as written, whitespace included; every other value is trimmed.
        let prompt = get("SYSTEM_PROMPT").filter(|v| !v.trim().is_empty());
        let system_prompt = match (prompt, trimmed("SYSTEM_PROMPT_FILE")) {
            (Some(prompt), _) => prompt,
            (None, Some(path)) => std::fs::read_to_string(&path).map_err(|e| Error::Config {
                var: "SYSTEM_PROMPT_FILE",
                message: format!("cannot read {path:?}: {e}"),
            })?,
            (None, None) => defaults.system_prompt,
        };
        Ok(Self {
            system_prompt,
            // Below ~1k tokens the reserve and the fixed prompt leave no room for context.
            max_context_tokens: ranged(
                &trimmed,
                "MAX_CONTEXT_TOKENS",
                2 * ANSWER_RESERVE,
                1_000_000,
            )?
            .unwrap_or(defaults.max_context_tokens),
            max_message_chars: ranged(&trimmed, "MAX_MESSAGE_CHARS", 1, 20_000)?
                .unwrap_or(defaults.max_message_chars),
            max_messages: ranged(&trimmed, "MAX_MESSAGES", 1, 200)?
                .unwrap_or(defaults.max_messages),
            history_messages: match parse::<usize>(&trimmed, "HISTORY_MESSAGES")? {
                Some(n) if n > 200 => {
                    return Err(Error::Config {
                        var: "HISTORY_MESSAGES",
                        message: format!("must be from 0 to 200, got {n}"),
                    })
                }
                n => n.unwrap_or(defaults.history_messages),
            },
            ttl_days: ranged(&trimmed, "CONVERSATION_TTL_DAYS", 1, 3650)?
                .map_or(defaults.ttl_days, |d| d as u64),
            max_top_k: defaults.max_top_k,
            store_budgets: defaults.store_budgets,
            client_salt: trimmed("CLIENT_HASH_SALT").map(Secret::new),
            rate_limit_per_minute: ranged(&trimmed, "RATE_LIMIT_PER_MINUTE", 0, 100_000)?
                .map_or(defaults.rate_limit_per_minute, |n| n as u64),
            ipv6_prefix: ranged(&trimmed, "CLIENT_IPV6_PREFIX", 16, 128)?
                .map_or(defaults.ipv6_prefix, |n| n as u8),
            daily_token_budget: parse::<u64>(&trimmed, "DAILY_TOKEN_BUDGET")?
                .unwrap_or(defaults.daily_token_budget),
            query_rewrite: match trimmed("QUERY_REWRITE") {
                Some(v) => QueryRewrite::parse(&v)?,
                None => defaults.query_rewrite,
            },
            rewrite_model: trimmed("REWRITE_MODEL"),
            rewrite_timeout: ranged(&trimmed, "QUERY_REWRITE_TIMEOUT_MS", 100, 10_000)?
                .map_or(defaults.rewrite_timeout, |ms| {
                    Duration::from_millis(ms as u64)
                }),
            answer_style: match trimmed("ANSWER_STYLE") {
                Some(v) => AnswerStyle::parse(&v)?,
                None => defaults.answer_style,
            },
            answer_cache: on_off(&trimmed, "ANSWER_CACHE")?.unwrap_or(defaults.answer_cache),
            answer_cache_ttl_secs: ranged(&trimmed, "ANSWER_CACHE_TTL_SECS", 60, 2_592_000)?
                .map_or(defaults.answer_cache_ttl_secs, |n| n as u64),
            contact_url: trimmed("CONTACT_URL")
                .map(|v| check_contact(&v).map(|()| v))
                .transpose()?,
            bot_check: bot_check_config(&trimmed)?,
        })
    }
}

/// `BOT_CHECK`, `BOT_CHECK_DIFFICULTY` and `BOT_CHECK_TTL_SECS`. The two numbers are
/// checked even while the check is off, so that switching it on cannot fail a deploy later.
fn bot_check_config(get: &impl Fn(&str) -> Option<String>) -> Result<BotCheck> {
    let range = &DIFFICULTY_RANGE;
    let difficulty = ranged(
        get,
        "BOT_CHECK_DIFFICULTY",
        usize::from(*range.start()),
        usize::from(*range.end()),
    )?
    .map_or(DEFAULT_DIFFICULTY, |d| d as u8);
    let ttl_secs =
        ranged(get, "BOT_CHECK_TTL_SECS", 30, 3600)?.map_or(DEFAULT_TTL_SECS, |s| s as u64);
    match get("BOT_CHECK").map(|v| v.to_ascii_lowercase()).as_deref() {
        None | Some("off") => Ok(BotCheck::Off),
        Some("pow") => Ok(BotCheck::Pow {
            difficulty,
            ttl: Duration::from_secs(ttl_secs),
        }),
        Some(v) => Err(Error::Config {
            var: "BOT_CHECK",
            message: format!("must be off or pow, got {v:?}"),
        }),
    }
}

/// An on/off switch: `on`, `true`, `1` or `off`, `false`, `0` (any case); `None` unset.
fn on_off(get: &impl Fn(&str) -> Option<String>, var: &'static str) -> Result<Option<bool>> {
    match get(var).map(|v| v.to_ascii_lowercase()) {
        None => Ok(None),
        Some(v) if matches!(v.as_str(), "on" | "true" | "1") => Ok(Some(true)),
        Some(v) if matches!(v.as_str(), "off" | "false" | "0") => Ok(Some(false)),
        Some(v) => Err(Error::Config {
            var,
            message: format!("must be on or off, got {v:?}"),
        }),
    }
}

/// A contact the widget can link to: `mailto:` an address, or an absolute http(s) URL that
/// passes the knowledge base's link rules, with nothing a careless renderer could let out
/// of an attribute.
fn check_contact(url: &str) -> Result<()> {
    let unsafe_char = |c: char| c.is_whitespace() || c.is_control() || "\"'<>\\`".contains(c);
    let problem = match url.strip_prefix("mailto:") {
        _ if url.len() > 2000 => Some(format!("must be at most 2000 bytes, got {}", url.len())),
        Some(rest) if !rest.contains('@') => {
            Some(format!("a mailto: contact needs an address, got {url:?}"))
        }
        Some(rest) if rest.chars().any(unsafe_char) => Some(format!(
            "must not contain spaces, quotes, angle brackets or backslashes: {url:?}"
        )),
        Some(_) => None,
        None => crate::kb::check_url(url).err(),
    };
    problem.map_or(Ok(()), |message| {
        Err(Error::Config {
            var: "CONTACT_URL",
            message,
        })
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;

    fn config(vars: &[(&str, &str)]) -> Result<ChatConfig> {
        let map: HashMap<String, String> = vars
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        ChatConfig::from_lookup(|k| map.get(k).cloned())
    }

    #[test]
    fn a_contact_is_a_mailto_address_or_a_safe_web_address() {
        for ok in ["mailto:me@site.example", "https://site.example/contact"] {
            assert_eq!(
                config(&[("CONTACT_URL", ok)])
                    .unwrap()
                    .contact_url
                    .as_deref(),
                Some(ok)
            );
        }
        for bad in [
            "mailto:",
            "mailto:nobody",
            "mailto:me@site.example?body=\"><script>",
            "javascript:alert(1)",
            "https://user:pw@site.example/",
            "/contact",
        ] {
            let err = config(&[("CONTACT_URL", bad)]).unwrap_err().to_string();
            assert!(err.contains("CONTACT_URL"), "{bad}: {err}");
        }
        let long = format!("https://site.example/{}", "a".repeat(2000));
        assert!(config(&[("CONTACT_URL", &long)]).is_err());
    }

    #[test]
    fn defaults_need_no_variables() {
        assert_eq!(config(&[]).unwrap(), ChatConfig::default());
        assert_eq!(ChatConfig::default().max_context_tokens, 8192);
    }

    #[test]
    fn reads_every_variable() {
        let c = config(&[
            ("SYSTEM_PROMPT", "You answer for Ada's site."),
            ("MAX_CONTEXT_TOKENS", "32768"),
            ("MAX_MESSAGE_CHARS", "1000"),
            ("MAX_MESSAGES", "10"),
            ("HISTORY_MESSAGES", "0"),
            ("CONVERSATION_TTL_DAYS", "7"),
            ("CLIENT_HASH_SALT", " pepper "),
            ("RATE_LIMIT_PER_MINUTE", "0"),
            ("DAILY_TOKEN_BUDGET", "250000"),
            ("QUERY_REWRITE", "OFF"),
            ("REWRITE_MODEL", " qwen-turbo "),
            ("QUERY_REWRITE_TIMEOUT_MS", "800"),
            ("BOT_CHECK", "PoW"),
            ("BOT_CHECK_DIFFICULTY", "18"),
            ("BOT_CHECK_TTL_SECS", "60"),
        ])
        .unwrap();
        assert_eq!(c.query_rewrite, QueryRewrite::Off);
        assert_eq!(c.rewrite_model.as_deref(), Some("qwen-turbo"));
        assert_eq!(c.rewrite_timeout, Duration::from_millis(800));
        assert_eq!(
            c.bot_check,
            BotCheck::Pow {
                difficulty: 18,
                ttl: Duration::from_secs(60)
            }
        );
        assert_eq!(c.client_salt.as_ref().map(Secret::expose), Some("pepper"));
        assert_eq!(
            (c.rate_limit_per_minute, c.daily_token_budget),
            (0, 250_000)
        );
        assert_eq!(c.system_prompt, "You answer for Ada's site.");
        assert_eq!(
            (
                c.max_context_tokens,
                c.max_message_chars,
                c.max_messages,
                c.history_messages
            ),
            (32768, 1000, 10, 0)
        );
        assert_eq!(c.ttl_days, 7);
    }

    #[test]
    fn the_bot_check_is_off_by_default_and_pow_takes_the_default_difficulty() {
        assert_eq!(config(&[]).unwrap().bot_check, BotCheck::Off);
        assert_eq!(
            config(&[("BOT_CHECK", "off"), ("BOT_CHECK_DIFFICULTY", "20")])
                .unwrap()
                .bot_check,
            BotCheck::Off
        );
        assert_eq!(
            config(&[("BOT_CHECK", " pow ")]).unwrap().bot_check,
            BotCheck::Pow {
                difficulty: 13,
                ttl: Duration::from_secs(300)
            }
        );
    }

    #[test]
    fn system_prompt_file_is_read_and_a_missing_one_names_the_variable() {
        let path = std::env::temp_dir().join(format!("prompt-{}.txt", std::process::id()));
        std::fs::write(&path, "From a file.").unwrap();
        let c = config(&[("SYSTEM_PROMPT_FILE", path.to_str().unwrap())]).unwrap();
        assert_eq!(c.system_prompt, "From a file.");
        let _ = std::fs::remove_file(&path);
        let err = config(&[("SYSTEM_PROMPT_FILE", "/no/such/prompt.txt")])
            .unwrap_err()
            .to_string();
        assert!(err.contains("SYSTEM_PROMPT_FILE"), "{err}");
    }

    #[test]
    fn bad_values_name_the_variable() {
        for (var, value) in [
            ("MAX_CONTEXT_TOKENS", "100"),
            ("MAX_CONTEXT_TOKENS", "lots"),
            ("MAX_MESSAGE_CHARS", "0"),
            ("MAX_MESSAGES", "201"),
            ("HISTORY_MESSAGES", "-1"),
            ("HISTORY_MESSAGES", "500"),
            ("CONVERSATION_TTL_DAYS", "0"),
            ("RATE_LIMIT_PER_MINUTE", "-1"),
            ("RATE_LIMIT_PER_MINUTE", "100001"),
            ("DAILY_TOKEN_BUDGET", "a lot"),
            ("QUERY_REWRITE", "sometimes"),
            ("QUERY_REWRITE", "cross-language"),
            ("QUERY_REWRITE_TIMEOUT_MS", "50"),
            ("QUERY_REWRITE_TIMEOUT_MS", "60000"),
            ("BOT_CHECK", "captcha"),
            ("BOT_CHECK_DIFFICULTY", "0"),
            ("BOT_CHECK_DIFFICULTY", "25"),
            ("BOT_CHECK_DIFFICULTY", "hard"),
            ("BOT_CHECK_TTL_SECS", "5"),
            ("BOT_CHECK_TTL_SECS", "86400"),
        ] {
            let err = config(&[(var, value)]).unwrap_err().to_string();
            assert!(err.contains(var), "{var}={value}: {err}");
        }
    }
}
