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
    /// Amazon Bedrock's Converse API, signed with the function's AWS credentials (no key).
    Bedrock,
}

impl LlmProvider {
    /// The `LLM_PROVIDER` spelling.
    pub fn as_str(self) -> &'static str {
        match self {
            LlmProvider::DashScope => "dashscope",
            LlmProvider::OpenAi => "openai",
            LlmProvider::Custom => "custom",
            LlmProvider::Bedrock => "bedrock",
        }
    }
}

/// Everything the model client needs: where, which model, which key, how long, how often.
///
/// `Debug` is safe to log: the key is a [`Secret`].
#[derive(Debug, Clone)]
pub struct LlmConfig {
    /// The provider family (`LLM_PROVIDER`): decides the defaults below and, for Bedrock,
    /// the client used.
    pub provider: LlmProvider,
    /// Base URL without a trailing slash; requests go to `{base_url}/chat/completions`.
    pub base_url: String,
    /// Model name sent with every request.
    pub model: String,
    /// Bearer key; `None` for a custom (local) server that needs none, and for Bedrock.
    pub api_key: Option<Secret>,
    /// Region and credentials that sign Bedrock requests; `None` for the other providers.
    pub aws: Option<AwsSigning>,
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

/// What signs a Bedrock request (AWS Signature Version 4): the region and the credentials
/// of the function's role, which Lambda puts in the environment.
///
/// `Debug` is safe to log: the secret key and the session token are [`Secret`]s.
#[derive(Debug, Clone)]
pub struct AwsSigning {
    /// The region the requests are signed for (`AWS_REGION`).
    pub region: String,
    /// `AWS_ACCESS_KEY_ID`.
    pub access_key_id: String,
    /// `AWS_SECRET_ACCESS_KEY`.
    pub secret_access_key: Secret,
    /// `AWS_SESSION_TOKEN`: present for a role's temporary credentials (always on Lambda).
    pub session_token: Option<Secret>,
}

impl AwsSigning {
    /// Reads the region and credentials through `get`, naming the first missing variable.
    fn from_lookup(get: &impl Fn(&str) -> Option<String>) -> Result<Self, Error> {
        let required = |var: &'static str| {
            get(var).ok_or_else(|| {
                config_error(
                    var,
                    "required when LLM_PROVIDER=bedrock (Lambda sets it from the function's role)",
                )
            })
        };
        // The SDK's own fallback for the region, honoured so a local shell behaves the same.
        let region = match get("AWS_DEFAULT_REGION") {
            Some(region) if get("AWS_REGION").is_none() => region,
            _ => required("AWS_REGION")?,
        };
        Ok(Self {
            region,
            access_key_id: required("AWS_ACCESS_KEY_ID")?,
            secret_access_key: Secret::from(required("AWS_SECRET_ACCESS_KEY")?),
            session_token: get("AWS_SESSION_TOKEN").map(Secret::from),
        })
    }
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
            Some("bedrock") => LlmProvider::Bedrock,
            Some(other) => {
                return Err(config_error(
                    "LLM_PROVIDER",
                    format!(
                        "unknown provider {other:?}; expected dashscope, openai, custom or bedrock"
                    ),
                ))
            }
        };
        if provider == LlmProvider::Bedrock {
            return Self::bedrock_from_lookup(&get).map(Some);
        }
        let (default_base, key_var, default_model) = match provider {
            LlmProvider::DashScope => {
                (Some(DASHSCOPE_BASE), Some("DASHSCOPE_API_KEY"), "qwen-plus")
            }
            LlmProvider::OpenAi => (Some(OPENAI_BASE), Some("OPENAI_API_KEY"), "gpt-4o-mini"),
            LlmProvider::Custom | LlmProvider::Bedrock => (None, None, ""),
        };
        let api_key = key_var
            .and_then(&get)
            .or_else(|| get("LLM_API_KEY"))
            .map(Secret::from);
        if api_key.is_none() && provider != LlmProvider::Custom {
            return Ok(None);
        }

        let base_url = match get("LLM_BASE_URL") {
            Some(url) => parse_url("LLM_BASE_URL", &url)?,
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

        let limits = Limits::from_lookup(&get)?;
        Ok(Some(
            limits.into_config(provider, base_url, model, api_key, None),
        ))
    }

    /// The Bedrock branch of [`LlmConfig::from_lookup`]: the model is required (model ids
    /// differ by region and account access, so no default would be right), the endpoint is
    /// the region's unless `BEDROCK_ENDPOINT` overrides it (tests, local runs), and the
    /// credentials come from the environment, never from a key variable.
    fn bedrock_from_lookup(get: &impl Fn(&str) -> Option<String>) -> Result<Self, Error> {
        let model = get("LLM_MODEL")
            .ok_or_else(|| config_error("LLM_MODEL", "required when LLM_PROVIDER=bedrock"))?;
        let aws = AwsSigning::from_lookup(get)?;
        let base_url = match get("BEDROCK_ENDPOINT") {
            Some(url) => parse_url("BEDROCK_ENDPOINT", &url)?,
            None => format!("https://bedrock-runtime.{}.amazonaws.com", aws.region),
        };
        let limits = Limits::from_lookup(get)?;
        Ok(limits.into_config(LlmProvider::Bedrock, base_url, model, None, Some(aws)))
    }
}

/// The time, retry and length limits every provider shares.
struct Limits {
    timeout: Duration,
    connect_timeout: Duration,
    first_token_timeout: Duration,
    max_retries: u32,
    max_tokens: u32,
}

impl Limits {
    fn from_lookup(get: &impl Fn(&str) -> Option<String>) -> Result<Self, Error> {
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
        Ok(Self {
            timeout: secs("LLM_TIMEOUT_SECS", 60)?,
            connect_timeout: secs("LLM_CONNECT_TIMEOUT_SECS", 5)?,
            first_token_timeout: secs("LLM_FIRST_TOKEN_TIMEOUT_SECS", 20)?,
            max_retries,
            max_tokens,
        })
    }

    fn into_config(
        self,
        provider: LlmProvider,
        base_url: String,
        model: String,
        api_key: Option<Secret>,
        aws: Option<AwsSigning>,
    ) -> LlmConfig {
        LlmConfig {
            provider,
            base_url,
            model,
            api_key,
            aws,
            timeout: self.timeout,
            connect_timeout: self.connect_timeout,
            first_token_timeout: self.first_token_timeout,
            max_retries: self.max_retries,
            max_tokens: self.max_tokens,
            retry_backoff: Duration::from_millis(200),
        }
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

fn parse_url(var: &'static str, value: &str) -> Result<String, Error> {
    let url = reqwest::Url::parse(value)
        .map_err(|e| config_error(var, format!("invalid URL {value:?}: {e}")))?;
    if !matches!(url.scheme(), "http" | "https") || url.host_str().is_none() {
        return Err(config_error(
            var,
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

    const LAMBDA_ROLE: [(&str, &str); 4] = [
        ("AWS_REGION", "eu-central-1"),
        ("AWS_ACCESS_KEY_ID", "ASIAEXAMPLE"),
        ("AWS_SECRET_ACCESS_KEY", "role-secret"),
        ("AWS_SESSION_TOKEN", "role-token"),
    ];

    #[test]
    fn bedrock_signs_with_the_role_in_the_environment_and_needs_no_key() {
        let mut vars = vec![
            ("LLM_PROVIDER", "Bedrock"),
            ("LLM_MODEL", "amazon.nova-lite-v1:0"),
        ];
        vars.extend(LAMBDA_ROLE);
        let c = config(&vars);
        assert_eq!(c.provider, LlmProvider::Bedrock);
        assert_eq!(
            c.base_url,
            "https://bedrock-runtime.eu-central-1.amazonaws.com"
        );
        assert_eq!(c.model, "amazon.nova-lite-v1:0");
        assert!(c.api_key.is_none());
        let aws = c.aws.expect("signing credentials");
        assert_eq!(aws.region, "eu-central-1");
        assert_eq!(aws.access_key_id, "ASIAEXAMPLE");
        assert_eq!(aws.secret_access_key.expose(), "role-secret");
        assert_eq!(
            aws.session_token.as_ref().map(Secret::expose),
            Some("role-token")
        );
        assert_eq!(c.max_tokens, 1024, "the shared limits apply");

        vars.push(("BEDROCK_ENDPOINT", "http://127.0.0.1:4010/"));
        assert_eq!(config(&vars).base_url, "http://127.0.0.1:4010");
        let debug = format!("{:?}", config(&vars));
        assert!(
            !debug.contains("role-secret") && !debug.contains("role-token"),
            "{debug}"
        );
    }

    #[test]
    fn bedrock_needs_a_model_a_region_and_credentials() {
        let with = |skip: &str, extra: &[(&'static str, &'static str)]| {
            let mut vars = vec![
                ("LLM_PROVIDER", "bedrock"),
                ("LLM_MODEL", "amazon.nova-lite-v1:0"),
            ];
            vars.extend(LAMBDA_ROLE);
            vars.retain(|(k, _)| *k != skip);
            vars.extend_from_slice(extra);
            bad_var(&vars)
        };
        assert_eq!(with("LLM_MODEL", &[]), "LLM_MODEL");
        assert_eq!(with("AWS_REGION", &[]), "AWS_REGION");
        assert_eq!(with("AWS_ACCESS_KEY_ID", &[]), "AWS_ACCESS_KEY_ID");
        assert_eq!(with("AWS_SECRET_ACCESS_KEY", &[]), "AWS_SECRET_ACCESS_KEY");
        assert_eq!(
            with("", &[("BEDROCK_ENDPOINT", "not a url")]),
            "BEDROCK_ENDPOINT"
        );
        assert_eq!(with("", &[("LLM_MAX_TOKENS", "0")]), "LLM_MAX_TOKENS");
        // The SDK's fallback region variable is honoured.
        let mut vars = vec![
            ("LLM_PROVIDER", "bedrock"),
            ("LLM_MODEL", "m"),
            ("AWS_DEFAULT_REGION", "ap-northeast-1"),
        ];
        vars.extend(LAMBDA_ROLE.into_iter().filter(|(k, _)| *k != "AWS_REGION"));
        assert_eq!(
            config(&vars).aws.map(|a| a.region).as_deref(),
            Some("ap-northeast-1")
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
