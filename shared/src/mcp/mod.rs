//! The site as a Model Context Protocol server, so AI assistants can search and read it:
//! the `search` function's `/mcp` path, speaking MCP's Streamable HTTP transport without
//! sessions or streams (`docs/mcp.md`).
//!
//! Each POST carries one JSON-RPC message and gets one plain JSON answer: `initialize`
//! (protocol version negotiation), `ping`, `tools/list` and `tools/call` with the tools
//! `search_site` and `get_page`. Notifications and client responses are accepted with 202
//! and no body. Nothing is kept between requests, so any instance answers any request.
//!
//! # Layout
//! - `jsonrpc`: reading a message, the protocol's error objects.
//! - `tools`: the tools' schemas and calls.
//!
//! This module knows no HTTP types: the handler passes the body and the
//! `MCP-Protocol-Version` header in and sends the [`Reply`]'s status and body out.

mod jsonrpc;
mod tools;

pub use jsonrpc::{
    parse, success, Message, RpcError, INVALID_PARAMS, INVALID_REQUEST, METHOD_NOT_FOUND,
    PARSE_ERROR,
};
use tools::{ToolContext, ToolOutcome};
pub use tools::{DEFAULT_PAGE_CHARS, MAX_PAGE_CHARS};

use serde_json::{json, Map, Value};

use crate::search::SearchIndex;

/// The protocol revisions served, newest first: the answer to an `initialize` asking for
/// another one. Older revisions are not offered: 2025-03-26 requires batches, which
/// 2025-06-18 removed and this endpoint refuses, and 2024-11-05 predates this transport.
/// 2026-07-28, which has no `initialize`, is not served either: a request naming it in its
/// header gets the plain 400 after which a client that speaks both eras initializes.
pub const PROTOCOL_VERSIONS: [&str; 2] = ["2025-11-25", "2025-06-18"];

/// The code of a refusal by the transport rather than the protocol (method, origin, body
/// size, protocol header): the first of JSON-RPC's server-defined codes.
pub const TRANSPORT_ERROR: i64 = -32000;

/// The request bounds and search defaults of an endpoint (the search API's own).
#[derive(Debug, Clone, Copy)]
pub struct Endpoint {
    /// Hits per query when a call names no `top_k`.
    pub top_k: usize,
    /// Lowest score a hit may have.
    pub min_score: f32,
    /// Largest accepted body, in bytes.
    pub max_body_bytes: usize,
}

/// What to send back: an HTTP status and a JSON body (none for 202).
#[derive(Debug, Clone, PartialEq)]
pub struct Reply {
    /// HTTP status: 200 for every answered request (errors included), 202 for
    /// notifications, 4xx when the message could not be read or the transport refuses it.
    pub status: u16,
    /// The JSON-RPC response.
    pub body: Option<Value>,
    /// Ids of the entries a tool returned, for the request's log line.
    pub ids: Vec<String>,
}

impl Reply {
    fn error(status: u16, err: RpcError) -> Self {
        Self {
            status,
            body: Some(err.to_json()),
            ids: Vec::new(),
        }
    }

    /// 405: only POST carries messages; this server opens no event stream for GET and has
    /// no session for DELETE to end.
    pub fn method_not_allowed() -> Self {
        Self::error(
            405,
            RpcError::anonymous(
                TRANSPORT_ERROR,
                "method not allowed: POST one JSON-RPC message (this server has no event \
                 stream and no sessions)",
            ),
        )
    }

    /// 403: a browser page from an origin not in `ALLOWED_ORIGINS`. The transport asks
    /// servers to refuse such requests outright (DNS rebinding).
    pub fn origin_refused(origin: &str) -> Self {
        Self::error(
            403,
            RpcError::anonymous(
                TRANSPORT_ERROR,
                format!(
                    "origin {:?} may not call this server (see ALLOWED_ORIGINS)",
                    clip(origin)
                ),
            ),
        )
    }
}

impl Endpoint {
    /// Answers one POST: its body and its `MCP-Protocol-Version` header, if any.
    pub fn post(&self, index: &SearchIndex, protocol_header: Option<&str>, body: &[u8]) -> Reply {
        if body.len() > self.max_body_bytes {
            return Reply::error(
                413,
                RpcError::anonymous(
                    TRANSPORT_ERROR,
                    format!("request body is larger than {} bytes", self.max_body_bytes),
                ),
            );
        }
        if let Some(v) = protocol_header.map(str::trim) {
            if !PROTOCOL_VERSIONS.contains(&v) {
                return Reply::error(
                    400,
                    RpcError::anonymous(
                        TRANSPORT_ERROR,
                        format!(
                            "unsupported MCP-Protocol-Version {:?}; supported: {}",
                            clip(v),
                            PROTOCOL_VERSIONS.join(", ")
                        ),
                    ),
                );
            }
        }
        let (id, method, params) = match jsonrpc::parse(body) {
            Err(err) => return Reply::error(400, err),
            Ok(Message::Notification { .. } | Message::Response) => {
                return Reply {
                    status: 202,
                    body: None,
                    ids: Vec::new(),
                }
            }
            Ok(Message::Request { id, method, params }) => (id, method, params),
        };
        match self.answer(index, &method, params) {
            Ok(outcome) => Reply {
                status: 200,
                body: Some(success(&id, outcome.result)),
                ids: outcome.ids,
            },
            Err((code, message)) => Reply::error(200, RpcError::new(&id, code, message)),
        }
    }

    /// The result of one request, or its error code and message.
    fn answer(
        &self,
        index: &SearchIndex,
        method: &str,
        mut params: Map<String, Value>,
    ) -> Result<ToolOutcome, (i64, String)> {
        let plain = |result: Value| ToolOutcome {
            result,
            ids: Vec::new(),
        };
        match method {
            "initialize" => {
                let Some(asked) = params.get("protocolVersion").and_then(Value::as_str) else {
                    return Err((
                        INVALID_PARAMS,
                        "initialize: protocolVersion must be a string".into(),
                    ));
                };
                let version = PROTOCOL_VERSIONS
                    .iter()
                    .find(|v| **v == asked)
                    .unwrap_or(&PROTOCOL_VERSIONS[0]);
                Ok(plain(initialize_result(version)))
            }
            "ping" => Ok(plain(json!({}))),
            "tools/list" => match params.get("cursor") {
                None | Some(Value::Null) => Ok(plain(tools::list())),
                Some(_) => Err((
                    INVALID_PARAMS,
                    "tools/list: no such cursor (the list has one page)".into(),
                )),
            },
            "tools/call" => {
                let name = match params.get("name") {
                    Some(Value::String(n)) if tools::exists(n) => n.clone(),
                    Some(Value::String(n)) => {
                        return Err((
                            INVALID_PARAMS,
                            format!(
                                "unknown tool {:?}; the tools are search_site and get_page",
                                clip(n)
                            ),
                        ))
                    }
                    _ => return Err((INVALID_PARAMS, "tools/call: name must be a string".into())),
                };
                let arguments = match params.remove("arguments") {
                    None | Some(Value::Null) => Value::Object(Map::new()),
                    Some(a @ Value::Object(_)) => a,
                    Some(_) => {
                        return Err((
                            INVALID_PARAMS,
                            "tools/call: arguments must be an object".into(),
                        ))
                    }
                };
                let ctx = ToolContext {
                    index,
                    top_k: self.top_k,
                    min_score: self.min_score,
                };
                Ok(tools::call(&ctx, &name, arguments))
            }
            other => Err((
                METHOD_NOT_FOUND,
                format!(
                    "method {:?} is not served; this server answers initialize, ping, \
                     tools/list and tools/call",
                    clip(other)
                ),
            )),
        }
    }
}

/// The `initialize` result for the negotiated `version`.
fn initialize_result(version: &str) -> Value {
    json!({
        "protocolVersion": version,
        "capabilities": {"tools": {"listChanged": false}},
        "serverInfo": {
            "name": "rag-chat-search",
            "title": "Site search",
            "version": env!("CARGO_PKG_VERSION"),
        },
        "instructions": "This server searches one website's pages, publications and \
            projects. Call search_site with a question or keywords (any language; Chinese \
            questions also find English pages), then get_page with a hit's id or URL to read \
            the entry. Cite the URLs the tools return.",
    })
}

/// At most 80 characters of caller-supplied text, for quoting it in a message.
fn clip(s: &str) -> String {
    match s.char_indices().nth(80) {
        Some((i, _)) => format!("{}…", &s[..i]),
        None => s.to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::kb::KnowledgeBase;

    const ENDPOINT: Endpoint = Endpoint {
        top_k: 3,
        min_score: 0.0,
        max_body_bytes: 1024,
    };

    fn index() -> SearchIndex {
        let kb = KnowledgeBase::from_value(&json!({"documents": [
            {"id": "pfc", "type": "publication", "title": "Partial FC",
             "summary": "Face recognition training at scale.",
             "paper_url": "https://arxiv.org/abs/2203.15565"}
        ]}))
        .unwrap();
        SearchIndex::new(kb, "v1")
    }

    fn post(body: Value) -> Reply {
        ENDPOINT.post(&index(), None, body.to_string().as_bytes())
    }

    fn request(id: u64, method: &str, params: Value) -> Value {
        json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params})
    }

    #[test]
    fn initialize_agrees_on_a_served_version_or_offers_the_newest() {
        for (asked, agreed) in [
            ("2025-06-18", "2025-06-18"),
            ("2025-11-25", "2025-11-25"),
            ("2025-03-26", "2025-11-25"),
            ("2099-01-01", "2025-11-25"),
        ] {
            let r = post(request(
                1,
                "initialize",
                json!({"protocolVersion": asked, "capabilities": {},
                       "clientInfo": {"name": "t", "version": "1"}}),
            ));
            assert_eq!(r.status, 200);
            let body = r.body.unwrap();
            assert_eq!(body["id"], 1);
            assert_eq!(body["result"]["protocolVersion"], agreed, "{asked}");
            assert_eq!(
                body["result"]["capabilities"]["tools"]["listChanged"],
                false
            );
            assert_eq!(body["result"]["serverInfo"]["name"], "rag-chat-search");
        }
        let r = post(request(2, "initialize", json!({"capabilities": {}})));
        assert_eq!(r.body.unwrap()["error"]["code"], INVALID_PARAMS);
    }

    #[test]
    fn notifications_and_client_responses_get_202_and_no_body() {
        for body in [
            json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
            json!({"jsonrpc": "2.0", "method": "notifications/cancelled",
                   "params": {"requestId": 1}}),
            json!({"jsonrpc": "2.0", "method": "no/such/notification"}),
            json!({"jsonrpc": "2.0", "id": 5, "result": {}}),
        ] {
            let r = post(body.clone());
            assert_eq!((r.status, r.body), (202, None), "{body}");
        }
    }

    #[test]
    fn ping_and_tools_list_answer_and_unknown_methods_are_not_found() {
        let r = post(request(3, "ping", json!({})));
        assert_eq!(r.body.unwrap()["result"], json!({}));
        let r = post(request(4, "tools/list", json!({})));
        assert_eq!(r.body.unwrap()["result"]["tools"][1]["name"], "get_page");
        let r = post(request(5, "tools/list", json!({"cursor": "2"})));
        assert_eq!(r.body.unwrap()["error"]["code"], INVALID_PARAMS);
        let r = post(request(6, "resources/list", json!({})));
        assert_eq!(r.status, 200);
        let body = r.body.unwrap();
        assert_eq!(
            (body["id"].clone(), body["error"]["code"].clone()),
            (json!(6), json!(METHOD_NOT_FOUND))
        );
    }

    #[test]
    fn tools_call_runs_a_tool_and_names_the_entries_it_returned() {
        let r = post(request(
            7,
            "tools/call",
            json!({"name": "search_site", "arguments": {"query": "partial fc"}}),
        ));
        assert_eq!(r.ids, ["pfc"]);
        let body = r.body.unwrap();
        assert_eq!(body["result"]["structuredContent"]["hits"][0]["id"], "pfc");
        // A tool's own failure is a result the model can read, not a protocol error.
        let r = post(request(
            8,
            "tools/call",
            json!({"name": "get_page", "arguments": {"id": "missing"}}),
        ));
        let body = r.body.unwrap();
        assert_eq!(body["result"]["isError"], true);
        assert!(body.get("error").is_none());
    }

    #[test]
    fn malformed_tool_calls_are_invalid_params() {
        for params in [
            json!({}),
            json!({"name": 3}),
            json!({"name": "delete_site"}),
            json!({"name": "search_site", "arguments": "partial fc"}),
        ] {
            let r = post(request(9, "tools/call", params.clone()));
            let body = r.body.unwrap();
            assert_eq!(body["error"]["code"], INVALID_PARAMS, "{params}");
            assert_eq!(body["id"], 9);
        }
    }

    #[test]
    fn unreadable_messages_are_400_with_the_protocols_error_objects() {
        let idx = index();
        for (body, code) in [
            (&b"{oops"[..], PARSE_ERROR),
            (b"\xff\xfe", PARSE_ERROR),
            (
                br#"[{"jsonrpc":"2.0","id":1,"method":"ping"}]"#,
                INVALID_REQUEST,
            ),
            (
                br#"{"jsonrpc":"2.0","id":true,"method":"ping"}"#,
                INVALID_REQUEST,
            ),
        ] {
            let r = ENDPOINT.post(&idx, None, body);
            assert_eq!(r.status, 400);
            let b = r.body.unwrap();
            assert_eq!(
                (b["error"]["code"].clone(), b["id"].clone()),
                (json!(code), Value::Null)
            );
        }
    }

    #[test]
    fn the_transport_refuses_large_bodies_and_unknown_protocol_headers() {
        let idx = index();
        let big = format!(
            r#"{{"jsonrpc":"2.0","id":1,"method":"ping","params":{{"pad":"{}"}}}}"#,
            "x".repeat(1024)
        );
        let r = ENDPOINT.post(&idx, None, big.as_bytes());
        assert_eq!(r.status, 413);
        assert_eq!(r.body.unwrap()["error"]["code"], TRANSPORT_ERROR);
        let ping = br#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#;
        let r = ENDPOINT.post(&idx, Some("2024-11-05"), ping);
        assert_eq!(r.status, 400);
        assert!(r.body.unwrap()["error"]["message"]
            .as_str()
            .unwrap()
            .contains("2025-11-25, 2025-06-18"));
        assert_eq!(ENDPOINT.post(&idx, Some("2025-06-18"), ping).status, 200);
    }
}
