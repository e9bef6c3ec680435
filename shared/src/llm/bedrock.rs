//! The Amazon Bedrock model client: `POST {endpoint}/model/{modelId}/converse-stream`
//! (the Converse API, one request shape for every model on Bedrock), signed with AWS
//! Signature Version 4 from the function's role credentials, its answer read as AWS event
//! stream frames ([`super::eventstream`]).
//!
//! Limits, retries and the mapping of HTTP statuses are the shared ones
//! ([`super::transport`]): a throttled call (429, before or inside the stream) is retried and
//! then reported busy, a 5xx is retried and then a model error, a stall times out. Each
//! attempt is signed afresh, so a retry never carries a stale date.
//!
//! Why signed by hand rather than through `aws-sdk-bedrockruntime`: the signer and the
//! event-stream decoder are crates the S3 client already builds, so this client adds no
//! dependency; the SDK's client would add a generated crate for one operation (the
//! measurement is in `docs/providers.md`).

use std::time::SystemTime;

use aws_credential_types::Credentials;
use aws_sigv4::http_request::{sign, SignableBody, SignableRequest, SigningSettings};
use aws_sigv4::sign::v4;
use reqwest::header::{ACCEPT, CONTENT_TYPE};
use serde::Serialize;

use super::eventstream::ConverseDecoder;
use super::transport;
use super::{
    AwsSigning, Completion, CompletionRequest, CompletionStream, LlmClient, LlmConfig, LlmError,
};
use crate::message::{ChatMessage, Role};
use crate::Error;

/// The signing name of Bedrock Runtime (its endpoints are `bedrock-runtime.*`).
const SIGNING_NAME: &str = "bedrock";

/// [`LlmClient`] for Amazon Bedrock.
///
/// Build it once per cold start and share it: it holds the connection pool.
#[derive(Debug, Clone)]
pub struct BedrockClient {
    http: reqwest::Client,
    url: String,
    config: LlmConfig,
    aws: AwsSigning,
}

impl BedrockClient {
    /// Builds the client from a configuration whose `aws` part is set (as
    /// [`LlmConfig::from_env`] does for `LLM_PROVIDER=bedrock`).
    pub fn new(config: LlmConfig) -> crate::Result<Self> {
        let Some(aws) = config.aws.clone() else {
            return Err(Error::Config {
                var: "AWS_ACCESS_KEY_ID",
                message: "Bedrock needs AWS credentials to sign with".into(),
            });
        };
        let http = transport::http_client(&config)?;
        // Model ids hold `:` (`...-v1:0`) and ARNs `/`: the id is one path segment.
        let url = format!(
            "{}/model/{}/converse-stream",
            config.base_url,
            crate::percent::component(&config.model)
        );
        Ok(Self {
            http,
            url,
            config,
            aws,
        })
    }

    /// The configuration the client was built with.
    pub fn config(&self) -> &LlmConfig {
        &self.config
    }

    fn body(&self, req: &CompletionRequest) -> Result<Vec<u8>, LlmError> {
        let (system, messages) = converse_messages(&req.messages);
        let wire = WireRequest {
            messages,
            system,
            inference_config: InferenceConfig {
                // The configured cap is a cost guard, so it holds whatever a caller asks for.
                max_tokens: req.max_tokens.clamp(1, self.config.max_tokens),
                temperature: req.temperature,
            },
        };
        serde_json::to_vec(&wire).map_err(|e| LlmError::Protocol {
            message: format!("cannot encode the request: {e}"),
            raw: String::new(),
        })
    }

    /// Signs and sends one attempt ([`transport::send`]).
    async fn send(&self, body: &[u8]) -> Result<reqwest::Response, LlmError> {
        let content_type = "application/json";
        let signature = self.signature(body, content_type, SystemTime::now())?;
        let mut request = self
            .http
            .post(&self.url)
            .header(CONTENT_TYPE, content_type)
            .header(ACCEPT, "application/vnd.amazon.eventstream")
            .body(body.to_vec());
        for (name, value) in signature {
            request = request.header(name, value);
        }
        transport::send(request).await
    }

    /// The headers that sign this request at `time` (`authorization`, `x-amz-date` and, for
    /// a role's credentials, `x-amz-security-token`). `host` and `content-type` are signed
    /// too; reqwest sends both exactly as given here.
    fn signature(
        &self,
        body: &[u8],
        content_type: &str,
        time: SystemTime,
    ) -> Result<Vec<(&'static str, String)>, LlmError> {
        let failed = |e: &dyn std::fmt::Display| LlmError::Protocol {
            message: format!("cannot sign the request: {e}"),
            raw: String::new(),
        };
        let identity = Credentials::new(
            &self.aws.access_key_id,
            self.aws.secret_access_key.expose(),
            self.aws
                .session_token
                .as_ref()
                .map(|t| t.expose().to_owned()),
            None,
            "lambda-environment",
        )
        .into();
        let params = v4::SigningParams::builder()
            .identity(&identity)
            .region(&self.aws.region)
            .name(SIGNING_NAME)
            .time(time)
            .settings(SigningSettings::default())
            .build()
            .map_err(|e| failed(&e))?
            .into();
        let request = SignableRequest::new(
            "POST",
            self.url.as_str(),
            [("content-type", content_type)].into_iter(),
            SignableBody::Bytes(body),
        )
        .map_err(|e| failed(&e))?;
        let (instructions, _) = sign(request, &params).map_err(|e| failed(&e))?.into_parts();
        let (headers, _) = instructions.into_parts();
        Ok(headers
            .into_iter()
            .map(|h| (h.name(), h.value().to_owned()))
            .collect())
    }
}

#[async_trait::async_trait]
impl LlmClient for BedrockClient {
    fn model(&self) -> &str {
        &self.config.model
    }

    fn provider(&self) -> &str {
        &self.config.base_url
    }

    fn max_tokens(&self) -> u32 {
        self.config.max_tokens
    }

    /// The streamed answer read to its end: one request shape and one decoder for both
    /// calls, under the streaming limits (a first-token wait, then the total).
    async fn complete(&self, req: &CompletionRequest) -> Result<Completion, LlmError> {
        let stream = self.stream(req).await?;
        transport::collect(stream, &self.config.model).await
    }

    async fn stream(&self, req: &CompletionRequest) -> Result<CompletionStream, LlmError> {
        let body = self.body(req)?;
        let body = body.as_slice();
        transport::stream(&self.config, ConverseDecoder::default, || self.send(body)).await
    }
}

/// The conversation as Converse wants it: system prompts apart, then turns that start with
/// the visitor and alternate, none empty (the service refuses anything else with a
/// validation error). Consecutive messages of one role become one turn of several blocks.
fn converse_messages(messages: &[ChatMessage]) -> (Vec<TextBlock<'_>>, Vec<WireMessage<'_>>) {
    let mut system = Vec::new();
    let mut turns: Vec<WireMessage<'_>> = Vec::new();
    for m in messages.iter().filter(|m| !m.content.trim().is_empty()) {
        let role = match m.role {
            Role::System => {
                system.push(TextBlock { text: &m.content });
                continue;
            }
            Role::User => "user",
            Role::Assistant if turns.is_empty() => continue,
            Role::Assistant => "assistant",
        };
        match turns.last_mut() {
            Some(last) if last.role == role => last.content.push(TextBlock { text: &m.content }),
            _ => turns.push(WireMessage {
                role,
                content: vec![TextBlock { text: &m.content }],
            }),
        }
    }
    (system, turns)
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct WireRequest<'a> {
    messages: Vec<WireMessage<'a>>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    system: Vec<TextBlock<'a>>,
    inference_config: InferenceConfig,
}

#[derive(Serialize)]
struct WireMessage<'a> {
    role: &'static str,
    content: Vec<TextBlock<'a>>,
}

#[derive(Serialize)]
struct TextBlock<'a> {
    text: &'a str,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct InferenceConfig {
    max_tokens: u32,
    #[serde(skip_serializing_if = "Option::is_none")]
    temperature: Option<f32>,
}

#[cfg(test)]
mod tests;
