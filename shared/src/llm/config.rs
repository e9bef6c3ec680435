//! Model provider configuration, read once at cold start from the environment.

use std::time::Duration;

use crate::secret::Secret;
use crate::Error;

const DASHSCOPE_BASE: &str = "https://dashscope.aliyuncs.com/compatible-mode/v1";
const OPENAI_BASE: &str = "https://api.openai.com/v1";
/// Hard ceiling on answer length: a public chat must not become a free long-form generator.
const MAX_TOKENS_CAP: u32 = 4096;

/// Which provider family the base URL, key variable and default model come from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LlmProvider {
    /// Alibaba DashScope (Qwen) in OpenAI-compatible mode; the default.
    DashScope,
    /// OpenAI.
    OpenAi,
    /// Any OpenAI-compatible server at `LLM_BASE_URL` (vLLM, Ollama, llama.cpp...).
    Custom,
}

impl LlmProvider {
    /// The `LLM_PROVIDER` spelling.
    pub fn as_str(self) -> &'static str {
        match self {
            LlmProvider::DashScope => "dashscope",
            LlmProvider::OpenAi => "openai",
            LlmProvider::Custom => "custom",
        }
    }
}

/// Everything the model client needs: where, which model, which key, how long, how often.
///
/// `Debug` is safe to log: the key is a [`Secret`].
#[derive(Debug, Clone)]
pub struct LlmConfig {
    /// The provider family.
    pub provider: LlmProvider,
    /// Base URL without a trailing slash; requests go to `{base_url}/chat/completions`.
    pub base_url: String,
    /// Model name sent with every request.
    pub model: String,
    /// Bearer key; `None` only for a custom (local) server that needs none.
    pub api_key: Option<Secret>,
    /// Limit on a whole call, retries and streaming included (`LLM_TIMEOUT_SECS`).
    pub timeout: Duration,
    /// Limit on opening a connection (`LLM_CONNECT_TIMEOUT_SECS`).
    pub connect_timeout: Duration,
    /// Limit from the start of a streamed call to its first token
    /// (`LLM_FIRST_TOKEN_TIMEOUT_SECS`).
    pub first_token_timeout: Duration,
    /// Retries after the first attempt, before the first token only (`LLM_MAX_RETRIES`).
    pub max_retries: u32,
    /// Cap on answer tokens per call (`LLM_MAX_TOKENS`, at most 4096).
    pub max_tokens: u32,
    /// First retry delay; it doubles per retry (capped) with jitter. Not an env variable:
    /// tests shorten it.
    pub retry_backoff: Duration,
}

impl LlmConfig {
    /// Reads the configuration from the process environment (see [`LlmConfig::from_lookup`]).
    pub fn from_env() -> Result<Option<Self>, Error> {
        Self::from_lookup(|name| std::env::var(name).ok())
    }

    /// Reads the configuration through `get` (the environment, or a map in tests).
    ///
    /// Returns `Ok(None)` when no API key is configured: the chat then runs offline, answering
    /// from retrieved entries only. A `custom` provider with a base URL is online even without
    /// a key (local servers need none). Empty values count as unset. A value that cannot be
    /// used is an [`Error::Config`] naming the variable.
    pub fn from_lookup(get: impl Fn(&str) -> Option<String>) -> Result<Option<Self>, Error> {
        // SAM parameters and shell exports often leave variables present but empty.
        let get = crate::config::trimmed(get);

        let provider = match get("LLM_PROVIDER")
            .map(|p| p.to_ascii_lowercase())
            .as_deref()
        {
            None | Some("dashscope") => LlmProvider::DashScope,
            Some("openai") => LlmProvider::OpenAi,
            Some("custom") => LlmProvider::Custom,
            Some(other) => {
                return Err(config_error(
                    "LLM_PROVIDER",
                    format!("unknown provider {other:?}; expected dashscope, openai or custom"),
                ))
            }
        };
        let (default_base, key_var, default_model) = match provider {
            LlmProvider::DashScope => {
                (Some(DASHSCOPE_BASE), Some("DASHSCOPE_API_KEY"), "qwen-plus")
            }
            LlmProvider::OpenAi => (Some(OPENAI_BASE), Some("OPENAI_API_KEY"), "gpt-4o-mini"),
            LlmProvider::Custom => (None, None, ""),
        };
        let api_key = key_var
            .and_then(&get)
            .or_else(|| get("LLM_API_KEY"))
            .map(Secret::from);
        if api_key.is_none() && provider != LlmProvider::Custom {
            return Ok(None);
        }

        let base_url = match get("LLM_BASE_URL") {
            Some(url) => parse_base_url(&url)?,
            None => match default_base {
                Some(base) => base.to_string(),
                None => {
                    return Err(config_error(
                        "LLM_BASE_URL",
                        "required when LLM_PROVIDER=custom",
                    ))
                }
            },
        };
        let model = match get("LLM_MODEL") {
            Some(model) => model,
            // Guessing a model name for an arbitrary server would only fail later, per request.
            None if provider == LlmProvider::Custom => {
                return Err(config_error(
                    "LLM_MODEL",
                    "required when LLM_PROVIDER=custom",
                ))
            }
            None => default_model.to_string(),
        };

        let secs = |var: &'static str, default: u64| -> Result<Duration, Error> {
            let n: u64 = parse_number(var, get(var), default)?;
            if n == 0 {
                return Err(config_error(var, "must be at least 1 second"));
            }
            Ok(Duration::from_secs(n))
        };
        let max_retries: u32 = parse_number("LLM_MAX_RETRIES", get("LLM_MAX_RETRIES"), 2)?;
        if max_retries > 10 {
            return Err(config_error("LLM_MAX_RETRIES", "must be at most 10"));
        }
        let max_tokens: u32 = parse_number("LLM_MAX_TOKENS", get("LLM_MAX_TOKENS"), 1024)?;
        if !(1..=MAX_TOKENS_CAP).contains(&max_tokens) {
            return Err(config_error(
                "LLM_MAX_TOKENS",
                format!("must be between 1 and {MAX_TOKENS_CAP}"),
            ));
        }

        Ok(Some(LlmConfig {
            provider,
            base_url,
            model,
            api_key,
            timeout: secs("LLM_TIMEOUT_SECS", 60)?,
            connect_timeout: secs("LLM_CONNECT_TIMEOUT_SECS", 5)?,
            first_token_timeout: secs("LLM_FIRST_TOKEN_TIMEOUT_SECS", 20)?,
            max_retries,
            max_tokens,
            retry_backoff: Duration::from_millis(200),
        }))
    }
}

fn config_error(var: &'static str, message: impl Into<String>) -> Error {
    Error::Config {
        var,
        message: message.into(),
    }
}

fn parse_number<T: std::str::FromStr>(
    var: &'static str,
    value: Option<String>,
    default: T,
) -> Result<T, Error> {
    match value {
        None => Ok(default),
        Some(v) => v
            .parse()
            .map_err(|_| config_error(var, format!("expected a whole number, got {v:?}"))),
    }
}

fn parse_base_url(value: &str) -> Result<String, Error> {
    let url = reqwest::Url::parse(value)
        .map_err(|e| config_error("LLM_BASE_URL", format!("invalid URL {value:?}: {e}")))?;
    if !matches!(url.scheme(), "http" | "https") || url.host_str().is_none() {
        return Err(config_error(
            "LLM_BASE_URL",
            format!("expected an http(s) URL, got {value:?}"),
        ));
    }
    Ok(value.trim_end_matches('/').to_string())
}

#[cfg(test)]
mod tests {
    use std::collections::HashMap;

    use super::*;

    fn parse(vars: &[(&str, &str)]) -> Result<Option<LlmConfig>, Error> {
        let map: HashMap<String, String> = vars
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        LlmConfig::from_lookup(|k| map.get(k).cloned())
    }

    fn config(vars: &[(&str, &str)]) -> LlmConfig {
        parse(vars).unwrap().expect("an online config")
    }

    /// The variable named by a config error, or a panic with what came back instead.
    fn bad_var(vars: &[(&str, &str)]) -> &'static str {
        match parse(vars) {
            Err(Error::Config { var, .. }) => var,
            other => panic!("expected a config error, got {other:?}"),
        }
    }

    #[test]
    fn no_key_means_offline() {
        assert!(parse(&[]).unwrap().is_none());
        assert!(
            parse(&[("LLM_PROVIDER", "openai"), ("DASHSCOPE_API_KEY", "k")])
                .unwrap()
                .is_none()
        );
        assert!(parse(&[("DASHSCOPE_API_KEY", "  ")]).unwrap().is_none());
    }

    #[test]
    fn dashscope_is_the_default_with_its_defaults() {
        let c = config(&[("DASHSCOPE_API_KEY", "sk-ds")]);
        assert_eq!(c.provider, LlmProvider::DashScope);
        assert_eq!(c.base_url, DASHSCOPE_BASE);
        assert_eq!(c.model, "qwen-plus");
        assert_eq!(c.api_key.as_ref().map(Secret::expose), Some("sk-ds"));
        assert_eq!(c.timeout, Duration::from_secs(60));
        assert_eq!(c.connect_timeout, Duration::from_secs(5));
        assert_eq!(c.first_token_timeout, Duration::from_secs(20));
        assert_eq!(c.max_retries, 2);
        assert_eq!(c.max_tokens, 1024);
    }

    #[test]
    fn provider_key_wins_over_the_generic_key() {
        let c = config(&[
            ("DASHSCOPE_API_KEY", "specific"),
            ("LLM_API_KEY", "generic"),
        ]);
        assert_eq!(c.api_key.as_ref().map(Secret::expose), Some("specific"));
        let c = config(&[("LLM_API_KEY", "generic")]);
        assert_eq!(c.api_key.as_ref().map(Secret::expose), Some("generic"));
    }

    #[test]
    fn openai_provider_uses_its_base_key_and_model() {
        let c = config(&[("LLM_PROVIDER", "OpenAI"), ("OPENAI_API_KEY", "sk-oa")]);
        assert_eq!(c.provider, LlmProvider::OpenAi);
        assert_eq!(c.base_url, OPENAI_BASE);
        assert_eq!(c.model, "gpt-4o-mini");
        assert_eq!(c.api_key.as_ref().map(Secret::expose), Some("sk-oa"));
    }

    #[test]
    fn every_variable_is_read() {
        let c = config(&[
            ("LLM_PROVIDER", "openai"),
            ("LLM_API_KEY", "k"),
            ("LLM_BASE_URL", "https://proxy.example.com/v1/"),
            ("LLM_MODEL", "gpt-4.1"),
            ("LLM_TIMEOUT_SECS", "30"),
            ("LLM_CONNECT_TIMEOUT_SECS", "2"),
            ("LLM_FIRST_TOKEN_TIMEOUT_SECS", "9"),
            ("LLM_MAX_RETRIES", "0"),
            ("LLM_MAX_TOKENS", "4096"),
        ]);
        assert_eq!(c.base_url, "https://proxy.example.com/v1");
        assert_eq!(c.model, "gpt-4.1");
        assert_eq!(c.timeout, Duration::from_secs(30));
        assert_eq!(c.connect_timeout, Duration::from_secs(2));
        assert_eq!(c.first_token_timeout, Duration::from_secs(9));
        assert_eq!(c.max_retries, 0);
        assert_eq!(c.max_tokens, 4096);
    }

    #[test]
    fn custom_base_url_without_key_is_online_and_keyless() {
        let c = config(&[
            ("LLM_PROVIDER", "custom"),
            ("LLM_BASE_URL", "http://127.0.0.1:11434/v1"),
            ("LLM_MODEL", "qwen2.5:7b"),
            ("DASHSCOPE_API_KEY", "ignored for custom"),
        ]);
        assert_eq!(c.provider, LlmProvider::Custom);
        assert_eq!(c.base_url, "http://127.0.0.1:11434/v1");
        assert!(c.api_key.is_none());
        let c = config(&[
            ("LLM_PROVIDER", "custom"),
            ("LLM_BASE_URL", "http://localhost:8000/v1"),
            ("LLM_MODEL", "m"),
            ("LLM_API_KEY", "local-key"),
        ]);
        assert_eq!(c.api_key.as_ref().map(Secret::expose), Some("local-key"));
    }

    #[test]
    fn custom_needs_a_base_url_and_a_model() {
        assert_eq!(
            bad_var(&[("LLM_PROVIDER", "custom"), ("LLM_MODEL", "m")]),
            "LLM_BASE_URL"
        );
        assert_eq!(
            bad_var(&[
                ("LLM_PROVIDER", "custom"),
                ("LLM_BASE_URL", "http://h:1/v1")
            ]),
            "LLM_MODEL"
        );
    }

    #[test]
    fn bad_values_name_their_variable() {
        let key = ("DASHSCOPE_API_KEY", "k");
        assert_eq!(
            bad_var(&[key, ("LLM_PROVIDER", "anthropic")]),
            "LLM_PROVIDER"
        );
        assert_eq!(
            bad_var(&[key, ("LLM_BASE_URL", "not a url")]),
            "LLM_BASE_URL"
        );
        assert_eq!(
            bad_var(&[key, ("LLM_BASE_URL", "ftp://h/v1")]),
            "LLM_BASE_URL"
        );
        assert_eq!(
            bad_var(&[key, ("LLM_TIMEOUT_SECS", "1m")]),
            "LLM_TIMEOUT_SECS"
        );
        assert_eq!(
            bad_var(&[key, ("LLM_TIMEOUT_SECS", "0")]),
            "LLM_TIMEOUT_SECS"
        );
        assert_eq!(
            bad_var(&[key, ("LLM_CONNECT_TIMEOUT_SECS", "-1")]),
            "LLM_CONNECT_TIMEOUT_SECS"
        );
        assert_eq!(
            bad_var(&[key, ("LLM_FIRST_TOKEN_TIMEOUT_SECS", "x")]),
            "LLM_FIRST_TOKEN_TIMEOUT_SECS"
        );
        assert_eq!(
            bad_var(&[key, ("LLM_MAX_RETRIES", "11")]),
            "LLM_MAX_RETRIES"
        );
        assert_eq!(bad_var(&[key, ("LLM_MAX_TOKENS", "0")]), "LLM_MAX_TOKENS");
        assert_eq!(
            bad_var(&[key, ("LLM_MAX_TOKENS", "4097")]),
            "LLM_MAX_TOKENS"
        );
        let msg = parse(&[key, ("LLM_MAX_TOKENS", "lots")])
            .unwrap_err()
            .to_string();
        assert!(
            msg.contains("LLM_MAX_TOKENS") && msg.contains("lots"),
            "{msg}"
        );
    }

    #[test]
    fn debug_output_never_shows_the_key() {
        let c = config(&[("DASHSCOPE_API_KEY", "sk-very-secret")]);
        let debug = format!("{c:?}");
        assert!(!debug.contains("sk-very-secret"), "{debug}");
        assert!(debug.contains("[redacted]"), "{debug}");
    }
}
