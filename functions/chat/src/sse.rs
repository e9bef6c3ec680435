//! The streamed answer on the wire: a channel-backed body fed by the chat service from a
//! spawned task, each event framed as SSE.

use lambda_http::http::{header, HeaderValue, StatusCode};
use lambda_http::lambda_runtime::streaming::{channel, Body, Sender};
use lambda_http::Response;
use shared::chat::{ChatEvent, ChatRequest, ChatService, EventSink, RequestContext};
use shared::edge::RequestLog;
use shared::SearchIndex;
use std::sync::Arc;

/// Writes events into the response body as they come, noting what the request log reports.
struct SseSink(Sender, RequestLog);

#[async_trait::async_trait]
impl EventSink for SseSink {
    async fn send(&mut self, event: ChatEvent) -> bool {
        self.1.observe(&event);
        // Fails only when the body was dropped: the client went away.
        self.0
            .send_data(shared::edge::sse_event(&event).into())
            .await
            .is_ok()
    }
}

/// A 200 `text/event-stream` response whose body the chat fills from a spawned task; the
/// body ends when the chat (and its recording) is finished, and then `log` is reported.
pub(crate) fn stream(
    chat: &ChatService,
    index: Arc<SearchIndex>,
    req: ChatRequest,
    ctx: RequestContext,
    log: RequestLog,
) -> Response<Body> {
    let (tx, body) = channel();
    let chat = chat.clone();
    tokio::spawn(async move {
        let mut sink = SseSink(tx, log);
        chat.chat_stream(index, req, ctx, &mut sink).await;
        sink.1.finish_with_metrics();
    });
    let mut res = Response::new(body);
    *res.status_mut() = StatusCode::OK;
    let h = res.headers_mut();
    h.insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("text/event-stream; charset=utf-8"),
    );
    h.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-cache"));
    // Proxies (nginx and friends) must pass each event on at once.
    h.insert("x-accel-buffering", HeaderValue::from_static("no"));
    res
}

/// A whole (non-streamed) response moved into the streaming body type, so one handler can
/// return both.
pub(crate) fn whole(res: Response<lambda_http::Body>) -> Response<Body> {
    res.map(|b| match b {
        lambda_http::Body::Empty => Body::empty(),
        other => Body::from(other.to_vec()),
    })
}
