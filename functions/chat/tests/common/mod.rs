//! Helpers for driving the chat handler with function-URL events and reading what it
//! answers, whole or streamed.
#![allow(dead_code, unreachable_pub)] // each test binary uses a different subset

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use chat::{function_handler, AppState};
use futures_util::StreamExt;
use lambda_http::http::HeaderMap;
use lambda_http::lambda_runtime::streaming::Body;
use lambda_http::{Request, Response};
use serde_json::{json, Value};
use shared::chat::ChatConfig;
use shared::store::AuditRecord;
use shared::testing::FakeLlm;
use shared::{
    ChatMessage, Config, ConversationStore, KbHandle, LlmClient, LlmConfig,
    MemoryConversationStore, OpenAiCompatClient, Role, SearchIndex,
};

pub const POST_EVENT: &str = include_str!("../data/function_url_post.json");
/// The fixture's request id (the function URL's `requestContext.requestId`).
pub const EVENT_REQUEST_ID: &str = "0b6c2f7e-1d2a-4c3b-9e8f-7a6b5c4d3e2f";
pub const ORIGIN: &str = "https://site.example";

pub fn index() -> Arc<SearchIndex> {
    let kb = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../knowledge_base.json");
    Arc::new(SearchIndex::load_file(&kb).expect("sample knowledge base loads"))
}

pub fn config() -> Config {
    let vars: HashMap<&str, &str> = HashMap::from([("ALLOWED_ORIGINS", ORIGIN)]);
    Config::from_lookup(|k| vars.get(k).map(|v| v.to_string())).expect("config")
}

/// A state over the sample knowledge base with the given model and store.
pub fn state_with(llm: Option<Arc<dyn LlmClient>>, store: Arc<dyn ConversationStore>) -> AppState {
    state_tuned(llm, store, |_| {})
}

/// [`state_with`], with `tune` applied to its chat configuration.
pub fn state_tuned(
    llm: Option<Arc<dyn LlmClient>>,
    store: Arc<dyn ConversationStore>,
    tune: impl FnOnce(&mut ChatConfig),
) -> AppState {
    // Every request of a test comes from the fixture's one address; the limits have
    // their own tests (limits.rs).
    let mut chat = ChatConfig {
        rate_limit_per_minute: 0,
        // One model call per turn, as these tests script it; query rewriting has its
        // own tests (shared/tests/it/rewrite.rs).
        query_rewrite: shared::chat::QueryRewrite::Off,
        ..ChatConfig::default()
    };
    tune(&mut chat);
    AppState::new(KbHandle::fixed(index()), llm, store, &config(), chat)
}

/// A state whose model is the real client talking to `fake`, with `tune` applied to the
/// client's configuration, and an in-memory store to inspect.
pub fn state_with_fake(
    fake: &FakeLlm,
    tune: impl FnOnce(&mut LlmConfig),
) -> (AppState, Arc<MemoryConversationStore>) {
    let mut cfg = fake.config();
    tune(&mut cfg);
    let client: Arc<dyn LlmClient> = Arc::new(OpenAiCompatClient::new(cfg).expect("client"));
    let store = Arc::new(MemoryConversationStore::new());
    (state_with(Some(client), store.clone()), store)
}

/// An offline state (no model) with an in-memory store.
pub fn offline_state() -> (AppState, Arc<MemoryConversationStore>) {
    let store = Arc::new(MemoryConversationStore::new());
    (state_with(None, store.clone()), store)
}

/// The POST fixture with its method, body and extra headers replaced.
pub fn event(method: &str, body: Option<&str>, headers: &[(&str, &str)]) -> Request {
    let mut ev: Value = serde_json::from_str(POST_EVENT).unwrap();
    ev["requestContext"]["http"]["method"] = json!(method);
    match body {
        Some(b) => {
            ev["body"] = json!(b);
            ev["headers"]["content-length"] = json!(b.len().to_string());
        }
        None => {
            ev.as_object_mut().unwrap().remove("body");
            ev["headers"]
                .as_object_mut()
                .unwrap()
                .remove("content-length");
        }
    }
    for (k, v) in headers {
        ev["headers"][*k] = json!(v);
    }
    lambda_http::request::from_str(&ev.to_string()).expect("valid function URL event")
}

/// A POST whose body arrives base64-encoded (`isBase64Encoded`), as function URLs deliver
/// bodies that are not text: the bytes need not be UTF-8.
pub fn post_bytes(body: &[u8]) -> Request {
    let mut ev: Value = serde_json::from_str(POST_EVENT).unwrap();
    ev["body"] = json!(base64::Engine::encode(
        &base64::engine::general_purpose::STANDARD,
        body
    ));
    ev["isBase64Encoded"] = json!(true);
    ev["headers"]["content-length"] = json!(body.len().to_string());
    lambda_http::request::from_str(&ev.to_string()).expect("valid function URL event")
}

pub fn post(body: &str) -> Request {
    event("POST", Some(body), &[])
}

/// Calls the handler. Tests name the sessions they continue `s-<name>` (no dot): such a
/// `session_id` in the body is signed first, as the server would have issued it ([`sid`]).
/// Any other id (one with a dot, or not starting with `s-`) is sent as it is.
pub async fn call(state: &AppState, req: Request) -> Response<Body> {
    function_handler(state, sign_sessions(state, req))
        .await
        .expect("handler never fails")
}

/// The session id the server issues for the test session `name` (see [`call`]).
pub fn sid(state: &AppState, name: &str) -> String {
    state.chat.sign_session(name)
}

fn sign_sessions(state: &AppState, req: Request) -> Request {
    let (mut parts, body) = req.into_parts();
    let bytes: &[u8] = body.as_ref();
    let mut json: Value = match serde_json::from_slice(bytes) {
        Ok(v) => v,
        Err(_) => return Request::from_parts(parts, body),
    };
    let name = match json.get("session_id").and_then(Value::as_str) {
        Some(n) if n.starts_with("s-") && !n.contains('.') => n.to_owned(),
        _ => return Request::from_parts(parts, body),
    };
    json["session_id"] = json!(sid(state, &name));
    let text = json.to_string();
    parts.headers.insert(
        "content-length",
        text.len()
            .to_string()
            .parse()
            .expect("a number is a header value"),
    );
    Request::from_parts(parts, lambda_http::Body::from(text))
}

/// Status, JSON body (`Null` when empty) and headers of a whole response.
pub async fn call_json(state: &AppState, req: Request) -> (u16, Value, HeaderMap) {
    let res = call(state, req).await;
    let status = res.status().as_u16();
    let headers = res.headers().clone();
    let bytes = res.into_body().collect().await.expect("body").to_bytes();
    let body = if bytes.is_empty() {
        Value::Null
    } else {
        serde_json::from_slice(&bytes).expect("JSON body")
    };
    (status, body, headers)
}

/// One parsed Server-Sent Event and when its last byte arrived.
#[derive(Debug, Clone)]
pub struct Sse {
    pub name: String,
    pub data: Value,
    pub at: Duration,
}

/// A streamed response read to its end, chunk by chunk as the handler wrote it.
#[derive(Debug)]
pub struct Streamed {
    pub status: u16,
    pub headers: HeaderMap,
    pub events: Vec<Sse>,
    /// When the first byte of the body arrived, from the handler call.
    pub first_byte: Duration,
    /// The body's bytes, exactly as sent.
    pub raw: String,
}

impl Streamed {
    pub fn names(&self) -> Vec<&str> {
        self.events.iter().map(|e| e.name.as_str()).collect()
    }

    pub fn text(&self) -> String {
        self.events
            .iter()
            .filter(|e| e.name == "delta")
            .map(|e| e.data["text"].as_str().unwrap().to_owned())
            .collect()
    }

    pub fn first(&self, name: &str) -> &Sse {
        self.events
            .iter()
            .find(|e| e.name == name)
            .unwrap_or_else(|| panic!("no {name} event in {:?}", self.names()))
    }
}

/// Calls the handler and reads the streamed body to its end (or `stop_after` events, then
/// drops the body like a client that goes away).
pub async fn call_stream(state: &AppState, req: Request, stop_after: Option<usize>) -> Streamed {
    call_stream_watching(state, req, stop_after, |_| {}).await
}

/// [`call_stream`], calling `seen` on each event as it arrives (while the handler may still
/// be working), for tests of what happens after a given event.
pub async fn call_stream_watching(
    state: &AppState,
    req: Request,
    stop_after: Option<usize>,
    mut seen: impl FnMut(&Sse),
) -> Streamed {
    let start = Instant::now();
    let res = call(state, req).await;
    let status = res.status().as_u16();
    let headers = res.headers().clone();
    let mut body = res.into_body();
    let (mut raw, mut buf, mut events, mut first_byte) =
        (String::new(), String::new(), Vec::new(), None);
    let read = async {
        while let Some(chunk) = body.next().await {
            let chunk = chunk.expect("body chunk");
            first_byte.get_or_insert_with(|| start.elapsed());
            let text = std::str::from_utf8(&chunk).expect("UTF-8 chunk");
            raw.push_str(text);
            buf.push_str(text);
            while let Some(end) = buf.find("\n\n") {
                let frame: String = buf.drain(..end + 2).collect();
                let event = parse_frame(&frame, start.elapsed());
                seen(&event);
                events.push(event);
            }
            if stop_after.is_some_and(|n| events.len() >= n) {
                return;
            }
        }
    };
    tokio::time::timeout(Duration::from_secs(20), read)
        .await
        .expect("stream ends within 20 s");
    assert!(buf.is_empty(), "unterminated event: {buf:?}");
    Streamed {
        status,
        headers,
        events,
        first_byte: first_byte.unwrap_or_default(),
        raw,
    }
}

fn parse_frame(frame: &str, at: Duration) -> Sse {
    let mut name = String::new();
    let mut data = String::new();
    for line in frame.lines() {
        if let Some(n) = line.strip_prefix("event: ") {
            name = n.to_owned();
        } else if let Some(d) = line.strip_prefix("data: ") {
            data.push_str(d);
        }
    }
    Sse {
        name,
        data: serde_json::from_str(&data).unwrap_or_else(|e| panic!("{e}: {frame:?}")),
        at,
    }
}

/// The audit record of a request: `id` is the invocation's request id, or the `request_id`
/// the client sent (recorded as `{id}.{hash of session and question}`).
pub fn audit_for(store: &MemoryConversationStore, id: &str) -> Option<AuditRecord> {
    let prefix = format!("{id}.");
    store.audit_record(id).or_else(|| {
        store
            .audit_records()
            .into_iter()
            .find(|r| r.request_id.starts_with(&prefix))
    })
}

/// Waits (briefly) for the audit record of a request ([`audit_for`]): a streamed chat
/// records after its last event, so a test that stopped reading early must wait for it.
pub async fn audit_outcome(store: &MemoryConversationStore, request_id: &str) -> String {
    for _ in 0..200 {
        if let Some(r) = audit_for(store, request_id) {
            return r.outcome;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    panic!("no audit record for {request_id}");
}

/// The question the chat's failure tests ask ("What is Partial FC?").
pub const QUESTION: &str = "What is Partial FC?";

/// Asserts what a failed model call leaves: session `name`'s only turn is the visitor's
/// [`QUESTION`], unanswered, and the request's audit record says `outcome`.
pub async fn assert_unanswered(
    state: &AppState,
    store: &MemoryConversationStore,
    name: &str,
    outcome: &str,
) {
    assert_eq!(
        store.session_turns(&sid(state, name)),
        vec![ChatMessage::new(Role::User, QUESTION)]
    );
    assert_eq!(audit_outcome(store, EVENT_REQUEST_ID).await, outcome);
}

/// A DynamoDB conversation store on fresh tables of `moto`: the raw client (to read items
/// back), the audit table's name and the store.
pub async fn dynamo_store(
    moto: &shared::testing::MotoServer,
) -> (aws_sdk_dynamodb::Client, String, Arc<dyn ConversationStore>) {
    let client = moto.dynamodb_client();
    let turns = shared::testing::moto::unique_name("conversations");
    let audit = shared::testing::moto::unique_name("audit");
    shared::store::create_tables(&client, &turns, &audit)
        .await
        .expect("create tables");
    let store: Arc<dyn ConversationStore> = Arc::new(shared::DynamoConversationStore::new(
        client.clone(),
        &turns,
        &audit,
        Duration::from_secs(3600),
    ));
    (client, audit, store)
}

/// Log lines written while a test holds the guard, as the JSON the Lambda runtime's
/// `AWS_LAMBDA_LOG_FORMAT=json` would print.
#[derive(Clone, Default)]
pub struct Logs(Arc<Mutex<Vec<u8>>>);

impl std::io::Write for Logs {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0.lock().unwrap().extend_from_slice(buf);
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

impl Logs {
    /// Captures this thread's events (tokio tests run on one thread, spawned tasks too).
    pub fn capture() -> (Self, tracing::subscriber::DefaultGuard) {
        let logs = Logs::default();
        let writer = logs.clone();
        let subscriber = lambda_http::tracing::subscriber::fmt()
            .json()
            .with_writer(move || writer.clone())
            .finish();
        (logs, tracing::subscriber::set_default(subscriber))
    }

    /// The `fields` of every line whose message is `message`.
    pub fn lines(&self, message: &str) -> Vec<Value> {
        let bytes = self.0.lock().unwrap().clone();
        String::from_utf8(bytes)
            .unwrap()
            .lines()
            .map(|l| serde_json::from_str::<Value>(l).unwrap())
            .filter(|v| v["fields"]["message"] == message)
            .map(|v| v["fields"].clone())
            .collect()
    }
}
