//! How a turn's answer reaches the visitor: returned whole (JSON) or sent as events while
//! the model writes it (SSE). [`Delivery`] holds the steps of the turn flow that differ
//! between the two; everything else (what is reserved, settled, checked and recorded) is
//! the same code in `mod.rs`, so the two ways cannot drift apart.

use std::sync::Arc;
use std::time::Instant;

use futures_util::StreamExt;

use super::outcome::{Label, Outcome};
use super::{
    offline_deltas, reply_cap_chars, ChatEvent, ChatResponse, EventSink, SourcesEvent, Turn,
};
use crate::error::Error;
use crate::llm::{CompletionRequest, LlmClient, LlmError, StreamEvent};
use crate::prompt::estimate_tokens;

/// Where a turn's answer goes: returned in one piece (JSON) or sent as events while it is
/// written (SSE). The steps of [`ChatService::answer`] that differ between the two.
pub(super) enum Delivery<'a> {
    /// Returned whole; the model is asked for a whole completion.
    Whole,
    /// Sent as events: `sources`, `delta`s, then `done` or `error`.
    Events(&'a mut dyn EventSink),
}

impl Delivery<'_> {
    /// Opens the answer (the `sources` event); `false` when the visitor has gone.
    pub(super) async fn open(&mut self, turn: &Turn) -> bool {
        match self {
            Delivery::Whole => true,
            Delivery::Events(sink) => {
                sink.send(ChatEvent::Sources(SourcesEvent {
                    sources: turn.sources.clone(),
                    session_id: turn.session_id.clone(),
                    request_id: turn.request_id.clone(),
                }))
                .await
            }
        }
    }

    /// Asks the model: how the call ended, and its error when it failed.
    pub(super) async fn ask(
        &mut self,
        llm: &dyn LlmClient,
        request: &CompletionRequest,
        started: Instant,
    ) -> (Outcome, Option<LlmError>) {
        match self {
            Delivery::Whole => complete(llm, request, started).await,
            Delivery::Events(sink) => stream_model(llm, request, &mut **sink, started).await,
        }
    }

    /// Tells the visitor the model failed: streamed, an `error` event now (and the error is
    /// done with); whole, the error is handed back for the caller to return.
    pub(super) async fn fail(&mut self, e: LlmError) -> Option<LlmError> {
        match self {
            Delivery::Whole => Some(e),
            Delivery::Events(sink) => {
                sink.send(ChatEvent::Error(Arc::new(Error::Llm(e)))).await;
                None
            }
        }
    }

    /// Delivers an answer written without the model (offline or cached): streamed in
    /// pieces, at once; marks the outcome when the visitor leaves meanwhile.
    pub(super) async fn write(&mut self, outcome: &mut Outcome) {
        let Delivery::Events(sink) = self else {
            return;
        };
        let text = outcome.reply.clone().unwrap_or_default();
        for piece in offline_deltas(&text) {
            if !sink.send(ChatEvent::Delta { text: piece }).await {
                outcome.reply = None;
                outcome.label = Label::ClientDisconnected;
                break;
            }
        }
    }

    /// Closes a delivered answer: the `done` event.
    pub(super) async fn close(&mut self, response: &ChatResponse) {
        if let Delivery::Events(sink) = self {
            sink.send(ChatEvent::Done(Box::new(response.done.clone())))
                .await;
        }
    }
}

/// Asks the model for a whole completion, cut at [`reply_cap_chars`].
async fn complete(
    llm: &dyn LlmClient,
    request: &CompletionRequest,
    started: Instant,
) -> (Outcome, Option<LlmError>) {
    match llm.complete(request).await {
        Ok(c) => {
            let cap = reply_cap_chars(request.max_tokens);
            if c.text.chars().count() > cap {
                tracing::warn!(cap, "the model's reply passed its cap; cut there");
                let text = c.text.chars().take(cap).collect();
                (Outcome::capped(text, llm.model(), c.usage, started), None)
            } else {
                (Outcome::answered(c.text, &c.model, c.usage, started), None)
            }
        }
        Err(e) => (
            Outcome::failed(&e, llm.model(), started.elapsed(), 0),
            Some(e),
        ),
    }
}

/// Streams the model's answer into `sink` as `delta` events, cut at [`reply_cap_chars`].
async fn stream_model(
    llm: &dyn LlmClient,
    request: &CompletionRequest,
    sink: &mut dyn EventSink,
    started: Instant,
) -> (Outcome, Option<LlmError>) {
    let failed = |e: LlmError, partial: &str| {
        let tokens = estimate_tokens(partial) as u64;
        (
            Outcome::failed(&e, llm.model(), started.elapsed(), tokens),
            Some(e),
        )
    };
    let mut stream = match llm.stream(request).await {
        Ok(s) => s,
        Err(e) => return failed(e, ""),
    };
    let (mut text, mut usage) = (String::new(), None);
    let cap = reply_cap_chars(request.max_tokens);
    let mut chars = 0;
    while let Some(item) = stream.next().await {
        match item {
            Ok(StreamEvent::Delta(mut piece)) => {
                let n = piece.chars().count();
                let over = chars + n > cap;
                if over {
                    piece = piece.chars().take(cap - chars).collect();
                }
                chars += n.min(cap - chars);
                text.push_str(&piece);
                if !sink.send(ChatEvent::Delta { text: piece }).await {
                    // Dropping the stream closes the upstream connection: the provider
                    // stops generating (and billing) for a visitor who left.
                    drop(stream);
                    tracing::info!(chars = text.len(), "client went away mid-answer");
                    let outcome =
                        Outcome::disconnected(llm.model(), usage, started.elapsed(), true);
                    return (outcome, None);
                }
                if over {
                    // A provider ignoring `max_tokens`: what was sent stands and is
                    // recorded; dropping the stream stops the generation.
                    drop(stream);
                    tracing::warn!(cap, "the model's reply passed its cap; ended there");
                    return (Outcome::capped(text, llm.model(), usage, started), None);
                }
            }
            Ok(StreamEvent::Usage(u)) => usage = Some(u),
            Err(e) => return failed(e, &text),
        }
    }
    (Outcome::answered(text, llm.model(), usage, started), None)
}
