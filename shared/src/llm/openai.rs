//! The OpenAI-compatible model client: `POST {base}/chat/completions` over reqwest, its
//! answers streamed as Server-Sent Events. Limits, retries and error mapping are the shared
//! ones ([`super::transport`]).

use reqwest::header::{ACCEPT, CONTENT_TYPE};
use serde::Serialize;
use tokio::time::Instant;

use super::sse::{parse_completion, ChunkDecoder};
use super::transport;
use super::{
    Completion, CompletionRequest, CompletionStream, LlmClient, LlmConfig, LlmError, TimeoutPhase,
};
use crate::message::ChatMessage;

/// [`LlmClient`] for DashScope, OpenAI and any OpenAI-compatible server.
///
/// Build it once per cold start and share it: it holds the connection pool.
#[derive(Debug, Clone)]
pub struct OpenAiCompatClient {
    http: reqwest::Client,
    url: String,
    config: LlmConfig,
}

impl OpenAiCompatClient {
    /// Builds the client (and its rustls HTTP connection pool) from a configuration.
    pub fn new(config: LlmConfig) -> crate::Result<Self> {
        let http = transport::http_client(&config)?;
        let url = format!("{}/chat/completions", config.base_url);
        Ok(Self { http, url, config })
    }

    /// The configuration the client was built with.
    pub fn config(&self) -> &LlmConfig {
        &self.config
    }

    fn body(&self, req: &CompletionRequest, stream: bool) -> Result<Vec<u8>, LlmError> {
        let wire = WireRequest {
            model: &self.config.model,
            messages: &req.messages,
            // The configured cap is a cost guard, so it holds whatever a caller asks for.
            max_tokens: req.max_tokens.clamp(1, self.config.max_tokens),
            temperature: req.temperature,
            stream: stream.then_some(true),
            stream_options: stream.then_some(StreamOptions {
                include_usage: true,
            }),
        };
        serde_json::to_vec(&wire).map_err(|e| LlmError::Protocol {
            message: format!("cannot encode the request: {e}"),
            raw: String::new(),
        })
    }

    /// Sends one request ([`transport::send`]).
    async fn send(&self, body: &[u8]) -> Result<reqwest::Response, LlmError> {
        let mut request = self
            .http
            .post(&self.url)
            .header(CONTENT_TYPE, "application/json")
            .header(ACCEPT, "application/json, text/event-stream")
            .body(body.to_vec());
        if let Some(key) = &self.config.api_key {
            // bearer_auth marks the header sensitive, so reqwest never prints it either.
            request = request.bearer_auth(key.expose());
        }
        transport::send(request).await
    }
}

#[async_trait::async_trait]
impl LlmClient for OpenAiCompatClient {
    fn model(&self) -> &str {
        &self.config.model
    }

    fn provider(&self) -> &str {
        &self.config.base_url
    }

    fn max_tokens(&self) -> u32 {
        self.config.max_tokens
    }

    async fn complete(&self, req: &CompletionRequest) -> Result<Completion, LlmError> {
        let deadline = Instant::now() + self.config.timeout;
        let body = self.body(req, false)?;
        let body = body.as_slice();
        transport::with_retries(
            &self.config,
            deadline,
            TimeoutPhase::Total,
            move || async move {
                let response = self.send(body).await?;
                let text = response.text().await.map_err(|e| LlmError::Interrupted {
                    source: Some(Box::new(e)),
                })?;
                parse_completion(&text, &self.config.model)
            },
        )
        .await
    }

    async fn stream(&self, req: &CompletionRequest) -> Result<CompletionStream, LlmError> {
        let body = self.body(req, true)?;
        let body = body.as_slice();
        transport::stream(&self.config, ChunkDecoder::default, || self.send(body)).await
    }
}

#[derive(Serialize)]
struct WireRequest<'a> {
    model: &'a str,
    messages: &'a [ChatMessage],
    max_tokens: u32,
    #[serde(skip_serializing_if = "Option::is_none")]
    temperature: Option<f32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    stream: Option<bool>,
    #[serde(skip_serializing_if = "Option::is_none")]
    stream_options: Option<StreamOptions>,
}

#[derive(Serialize)]
struct StreamOptions {
    include_usage: bool,
}

#[cfg(test)]
mod tests;
