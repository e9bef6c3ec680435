//! JSON-RPC 2.0 as MCP's Streamable HTTP transport carries it: one message per POST body,
//! read into a request, a notification or a client's response, and the protocol's error
//! objects for everything else.
//!
//! Batches (a JSON array of messages) were part of MCP 2025-03-26 only; 2025-06-18 removed
//! them, so an array is an invalid request here.

use serde_json::{json, Map, Value};

/// The body is not JSON.
pub const PARSE_ERROR: i64 = -32700;
/// The JSON is not a valid JSON-RPC request.
pub const INVALID_REQUEST: i64 = -32600;
/// The method is not served.
pub const METHOD_NOT_FOUND: i64 = -32601;
/// The method's parameters are missing or malformed.
pub const INVALID_PARAMS: i64 = -32602;

/// One message read from a POST body.
#[derive(Debug, Clone, PartialEq)]
pub enum Message {
    /// A call that expects an answer with the same `id`.
    Request {
        /// The caller's id: a string or a number, echoed in the answer.
        id: Value,
        /// What is asked (`initialize`, `tools/list`, `tools/call`, ...).
        method: String,
        /// The parameters object (an empty one when absent).
        params: Map<String, Value>,
    },
    /// A one-way message (no `id`): never answered.
    Notification {
        /// What happened (`notifications/initialized`, ...).
        method: String,
    },
    /// A client's answer to a request from the server. This server sends none, so it is
    /// accepted and dropped.
    Response,
}

/// A JSON-RPC error object and the id of the message it answers (`null` when the message
/// could not be read far enough to know it).
#[derive(Debug, Clone, PartialEq)]
pub struct RpcError {
    /// The id of the request, or `Value::Null`.
    pub id: Value,
    /// One of the codes above.
    pub code: i64,
    /// What was wrong, for the caller.
    pub message: String,
}

impl RpcError {
    /// An error answering the request `id`.
    pub fn new(id: &Value, code: i64, message: impl Into<String>) -> Self {
        Self {
            id: id.clone(),
            code,
            message: message.into(),
        }
    }

    /// An error for a message whose id is not known.
    pub fn anonymous(code: i64, message: impl Into<String>) -> Self {
        Self::new(&Value::Null, code, message)
    }

    /// The error as a JSON-RPC response object.
    pub fn to_json(&self) -> Value {
        json!({
            "jsonrpc": "2.0",
            "id": self.id,
            "error": {"code": self.code, "message": self.message},
        })
    }
}

/// A successful JSON-RPC response to request `id`.
pub fn success(id: &Value, result: Value) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "result": result})
}

/// Reads one JSON-RPC message from a POST body.
pub fn parse(body: &[u8]) -> Result<Message, RpcError> {
    let value: Value = serde_json::from_slice(body)
        .map_err(|e| RpcError::anonymous(PARSE_ERROR, format!("parse error: {e}")))?;
    let mut object = match value {
        Value::Object(o) => o,
        Value::Array(_) => {
            return Err(RpcError::anonymous(
                INVALID_REQUEST,
                "batches are not supported: since MCP 2025-06-18 a POST carries one \
                 JSON-RPC message",
            ))
        }
        _ => {
            return Err(RpcError::anonymous(
                INVALID_REQUEST,
                "a JSON-RPC message is an object with \"jsonrpc\": \"2.0\" and \"method\"",
            ))
        }
    };
    // The id first, so every later error can name the request it answers.
    let id = match object.remove("id") {
        None => None,
        Some(id @ (Value::String(_) | Value::Number(_))) => Some(id),
        Some(_) => {
            return Err(RpcError::anonymous(
                INVALID_REQUEST,
                "id must be a string or a number",
            ))
        }
    };
    let known = id.clone().unwrap_or(Value::Null);
    if object.get("jsonrpc").and_then(Value::as_str) != Some("2.0") {
        return Err(RpcError::new(
            &known,
            INVALID_REQUEST,
            "jsonrpc must be \"2.0\"",
        ));
    }
    let method = match object.remove("method") {
        Some(Value::String(m)) => m,
        Some(_) => {
            return Err(RpcError::new(
                &known,
                INVALID_REQUEST,
                "method must be a string",
            ))
        }
        None if id.is_some() && (object.contains_key("result") || object.contains_key("error")) => {
            return Ok(Message::Response)
        }
        None => return Err(RpcError::new(&known, INVALID_REQUEST, "method is required")),
    };
    let Some(id) = id else {
        return Ok(Message::Notification { method });
    };
    let params = match object.remove("params") {
        None | Some(Value::Null) => Map::new(),
        Some(Value::Object(p)) => p,
        Some(_) => {
            return Err(RpcError::new(
                &id,
                INVALID_PARAMS,
                "params must be an object",
            ))
        }
    };
    Ok(Message::Request { id, method, params })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn err(body: &str) -> RpcError {
        parse(body.as_bytes()).unwrap_err()
    }

    #[test]
    fn requests_notifications_and_responses_are_told_apart() {
        assert_eq!(
            parse(br#"{"jsonrpc":"2.0","id":7,"method":"ping"}"#).unwrap(),
            Message::Request {
                id: json!(7),
                method: "ping".into(),
                params: Map::new()
            }
        );
        let Message::Request { id, params, .. } =
            parse(br#"{"jsonrpc":"2.0","id":"a","method":"tools/call","params":{"name":"x"}}"#)
                .unwrap()
        else {
            panic!("not a request")
        };
        assert_eq!((id, params["name"].clone()), (json!("a"), json!("x")));
        assert_eq!(
            parse(br#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#).unwrap(),
            Message::Notification {
                method: "notifications/initialized".into()
            }
        );
        assert_eq!(
            parse(br#"{"jsonrpc":"2.0","id":1,"result":{}}"#).unwrap(),
            Message::Response
        );
    }

    #[test]
    fn malformed_messages_get_the_protocol_codes_and_the_id_when_known() {
        for (body, code, id) in [
            ("{", PARSE_ERROR, Value::Null),
            ("", PARSE_ERROR, Value::Null),
            ("[]", INVALID_REQUEST, Value::Null),
            (
                r#"[{"jsonrpc":"2.0","id":1,"method":"ping"}]"#,
                INVALID_REQUEST,
                Value::Null,
            ),
            ("42", INVALID_REQUEST, Value::Null),
            (
                r#"{"jsonrpc":"2.0","id":null,"method":"ping"}"#,
                INVALID_REQUEST,
                Value::Null,
            ),
            (
                r#"{"jsonrpc":"2.0","id":{},"method":"ping"}"#,
                INVALID_REQUEST,
                Value::Null,
            ),
            (r#"{"id":3,"method":"ping"}"#, INVALID_REQUEST, json!(3)),
            (
                r#"{"jsonrpc":"1.0","id":3,"method":"ping"}"#,
                INVALID_REQUEST,
                json!(3),
            ),
            (
                r#"{"jsonrpc":"2.0","id":"q","method":5}"#,
                INVALID_REQUEST,
                json!("q"),
            ),
            (r#"{"jsonrpc":"2.0","id":4}"#, INVALID_REQUEST, json!(4)),
            (
                r#"{"jsonrpc":"2.0","id":4,"method":"ping","params":[1]}"#,
                INVALID_PARAMS,
                json!(4),
            ),
        ] {
            let e = err(body);
            assert_eq!((e.code, &e.id), (code, &id), "{body}: {}", e.message);
        }
        assert!(err("[]").message.contains("batches are not supported"));
    }

    #[test]
    fn errors_are_json_rpc_error_objects() {
        let e = RpcError::new(&json!(9), METHOD_NOT_FOUND, "no such method");
        assert_eq!(
            e.to_json(),
            json!({"jsonrpc": "2.0", "id": 9,
                   "error": {"code": -32601, "message": "no such method"}})
        );
        assert_eq!(
            success(&json!("x"), json!({})),
            json!({"jsonrpc": "2.0", "id": "x", "result": {}})
        );
    }
}
