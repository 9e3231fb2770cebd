//! JSON-RPC errors where rmcp gives the wrong one: a body that is not one JSON-RPC message
//! (`-32700` parse error, `-32600` invalid request, answered with HTTP 400 as the MCP transport
//! asks, instead of rmcp's 415), and a known method whose params do not fit it (`-32602`
//! invalid params, instead of `-32601` method not found) — from the handler when rmcp can read
//! the request as a custom one, here (HTTP 400) when it cannot read it at all (array params).
//!
//! The envelope is judged on the parsed value, and what passes is handed on re-serialised from
//! that value, so rmcp reads exactly what was checked (duplicate keys, for one, cannot make the
//! two readings differ). Which methods exist is what rmcp's own request types say: a method is
//! "known" when one of them is named by it, and its params error is that type's own.

use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use rmcp::ErrorData as McpError;
use rmcp::model::{ClientJsonRpcMessage, ConstString, ErrorCode};
use schemascope_core::display::json_kind as kind;
use serde_json::{Value, json};

/// A body that may go on to rmcp: the message and its canonical bytes.
pub struct Checked {
    /// The message as rmcp reads it.
    pub message: ClientJsonRpcMessage,
    /// The bytes to hand on: the checked value, serialised again.
    pub bytes: Vec<u8>,
}

/// Why a body is not a message: a JSON-RPC error, answered with HTTP 400.
#[derive(Debug)]
pub struct Refusal {
    /// `-32700`, `-32600`, or for a request rmcp cannot represent `-32602` / `-32601`.
    pub code: ErrorCode,
    /// The request's id, when it could be read.
    pub id: Option<Value>,
    /// What is wrong.
    pub message: String,
}

impl Refusal {
    /// The JSON-RPC error response (id `null` when the id could not be read).
    pub fn into_json(self) -> Value {
        json!({"jsonrpc": "2.0", "id": self.id.unwrap_or(Value::Null), "error": {"code": self.code.0, "message": self.message}})
    }
}

impl IntoResponse for Refusal {
    fn into_response(self) -> Response {
        let mut response = (StatusCode::BAD_REQUEST, axum::Json(self.into_json())).into_response();
        response
            .headers_mut()
            .insert(header::CONTENT_TYPE, HeaderValue::from_static("application/json"));
        response
    }
}

fn error_response(code: ErrorCode, id: Option<&Value>, message: String) -> Refusal {
    Refusal { code, id: id.cloned(), message }
}

/// The id of a request that does not parse as a value but is JSON — a number past a 64-bit
/// float's range (`1e400`) — read with everything else skipped unconverted, so the client's call
/// gets its answer instead of waiting for one with its id.
fn readable_id(body: &[u8]) -> Option<Value> {
    #[derive(serde::Deserialize)]
    struct IdOnly {
        id: Option<Value>,
    }
    let id = serde_json::from_slice::<IdOnly>(body).ok()?.id?;
    match &id {
        Value::String(_) => Some(id),
        Value::Number(n) if n.is_i64() => Some(id),
        _ => None,
    }
}

/// Checks that `body` is one JSON-RPC 2.0 message MCP accepts, or says why not.
pub fn check(body: &[u8]) -> Result<Checked, Refusal> {
    let value: Value = serde_json::from_slice(body).map_err(|e| {
        let message = if e.to_string().starts_with("number out of range") {
            format!(
                "parse error: a number in the request is beyond what a 64-bit float holds ({e}); send it as a string or a smaller number"
            )
        } else {
            format!("parse error: the request body is not JSON ({e})")
        };
        Refusal { code: ErrorCode::PARSE_ERROR, id: readable_id(body), message }
    })?;
    let Value::Object(fields) = &value else {
        let message = if value.is_array() {
            "invalid request: JSON-RPC batches are not accepted (MCP sends one message per HTTP request since 2025-06-18); send the messages one by one".to_string()
        } else {
            format!("invalid request: a JSON-RPC message is an object, not {}", kind(&value))
        };
        return Err(error_response(ErrorCode::INVALID_REQUEST, None, message));
    };
    let id = match fields.get("id") {
        None => None,
        Some(id @ Value::String(_)) => Some(id),
        Some(id @ Value::Number(n)) if n.is_i64() => Some(id),
        Some(other) => {
            let message = format!(
                "invalid request: `id` must be a string or an integer, not {}",
                kind(other)
            );
            return Err(error_response(ErrorCode::INVALID_REQUEST, None, message));
        }
    };
    // Owned: the value is consumed below, and an error may still need the id.
    let id = id.cloned();
    let invalid = |message: String| {
        error_response(
            ErrorCode::INVALID_REQUEST,
            id.as_ref(),
            format!("invalid request: {message}"),
        )
    };
    if fields.get("jsonrpc").and_then(Value::as_str) != Some("2.0") {
        return Err(invalid("`jsonrpc` must be \"2.0\"".into()));
    }
    match fields.get("method") {
        Some(Value::String(_)) => {}
        Some(other) => {
            return Err(invalid(format!("`method` must be a string, not {}", kind(other))));
        }
        None if fields.contains_key("result") || fields.contains_key("error") => {}
        None => {
            return Err(invalid("the message has no `method` (nor `result` or `error`)".into()));
        }
    }
    // A request rmcp cannot represent at all (params of a type no request has, such as an
    // array): judged as the handler judges the ones it can, by method.
    let request_parts = match (&id, fields.get("method")) {
        (Some(_), Some(Value::String(method))) => {
            Some((method.clone(), fields.get("params").cloned()))
        }
        _ => None,
    };
    let bytes = serde_json::to_vec(&value).map_err(|e| invalid(e.to_string()))?;
    let message: ClientJsonRpcMessage =
        serde_json::from_value(value).map_err(|e| match request_parts {
            Some((method, params)) => {
                let error = custom_request_error(&method, params);
                Refusal { code: error.code, id: id.clone(), message: error.message.into_owned() }
            }
            None => invalid(format!("not a JSON-RPC message MCP accepts ({e})")),
        })?;
    Ok(Checked { message, bytes })
}

/// The params type of an rmcp request type, to name the field that does not fit: the whole
/// request's deserialiser reports only `params`.
trait ParamsOf {
    type Params: serde::de::DeserializeOwned;
}

impl<M, P: serde::de::DeserializeOwned> ParamsOf for rmcp::model::Request<M, P> {
    type Params = P;
}

impl<M, P: serde::de::DeserializeOwned> ParamsOf for rmcp::model::RequestOptionalParam<M, P> {
    type Params = P;
}

impl<M> ParamsOf for rmcp::model::RequestNoParam<M> {
    type Params = serde::de::IgnoredAny;
}

fn path_error<T: serde::de::DeserializeOwned>(value: &Value, prefix: &str) -> Result<(), String> {
    serde_path_to_error::deserialize::<_, T>(value).map(|_| ()).map_err(|e| {
        match e.path().to_string().as_str() {
            "." if prefix.is_empty() => e.inner().to_string(),
            "." => format!("`{prefix}`: {}", e.inner()),
            path if prefix.is_empty() => format!("`{path}`: {}", e.inner()),
            path => format!("`{prefix}.{path}`: {}", e.inner()),
        }
    })
}

/// Deserialises `request` as rmcp's request type `T`; when it does not fit, says where — in
/// the params when they alone do not fit their type.
fn fits<T: serde::de::DeserializeOwned + ParamsOf>(request: &Value) -> Result<(), String> {
    let whole = path_error::<T>(request, "");
    match (&whole, request.get("params")) {
        (Err(_), Some(params)) => path_error::<T::Params>(params, "params").and(whole),
        _ => whole,
    }
}

/// Every request rmcp knows, by method name, with the check of its params.
macro_rules! known_requests {
    ($($method:ident => $request:ident),* $(,)?) => {
        &[$((<rmcp::model::$method as ConstString>::VALUE, fits::<rmcp::model::$request> as fn(&Value) -> Result<(), String>)),*]
    };
}

type ParamsCheck = fn(&Value) -> Result<(), String>;

// Deprecated requests (logging, legacy subscriptions) are still sent by clients of older
// protocol versions and still served: their params are checked like the rest.
#[allow(deprecated)]
const KNOWN: &[(&str, ParamsCheck)] = known_requests![
    PingRequestMethod => PingRequest,
    InitializeResultMethod => InitializeRequest,
    DiscoverRequestMethod => DiscoverRequest,
    CompleteRequestMethod => CompleteRequest,
    SetLevelRequestMethod => SetLevelRequest,
    GetPromptRequestMethod => GetPromptRequest,
    ListPromptsRequestMethod => ListPromptsRequest,
    ListResourcesRequestMethod => ListResourcesRequest,
    ListResourceTemplatesRequestMethod => ListResourceTemplatesRequest,
    ReadResourceRequestMethod => ReadResourceRequest,
    SubscriptionsListenRequestMethod => SubscriptionsListenRequest,
    SubscribeRequestMethod => SubscribeRequest,
    UnsubscribeRequestMethod => UnsubscribeRequest,
    CallToolRequestMethod => CallToolRequest,
    ListToolsRequestMethod => ListToolsRequest,
    GetTaskMethod => GetTaskRequest,
    UpdateTaskMethod => UpdateTaskRequest,
    CancelTaskMethod => CancelTaskRequest,
    ListSkillsRequestMethod => ListSkillsRequest,
    GetSkillRequestMethod => GetSkillRequest,
    ReadResourceDirectoryRequestMethod => ReadResourceDirectoryRequest,
];

/// The error for a request rmcp could not read as any of its request types (it then arrives
/// as a custom request): invalid params for a known method, naming what does not fit; method
/// not found otherwise.
pub fn custom_request_error(method: &str, params: Option<Value>) -> McpError {
    let Some((_, check)) = KNOWN.iter().find(|(name, _)| *name == method) else {
        return McpError::new(
            ErrorCode::METHOD_NOT_FOUND,
            format!("method not found: `{method}`"),
            None,
        );
    };
    let mut request = json!({"method": method});
    if let Some(params) = params {
        request["params"] = params;
    }
    let why = match check(&request) {
        Err(why) => why,
        // It fits on its own, yet did not as part of the message: say what is known.
        Ok(()) => "the params do not fit this method".into(),
    };
    McpError::new(ErrorCode::INVALID_PARAMS, format!("invalid params for `{method}`: {why}"), None)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn code(body: &str) -> Option<i32> {
        check(body.as_bytes()).err().map(|refusal| refusal.code.0)
    }

    #[test]
    fn malformed_envelopes_are_refused_and_good_ones_pass_canonical() {
        for unparsable in ["", "{", "{\"jsonrpc\": \"2.0\",", "\u{0}", "[[[["] {
            assert_eq!(code(unparsable), Some(-32700), "{unparsable:?}");
        }
        let deep = format!("{}{}", "[".repeat(10_000), "]".repeat(10_000));
        assert_eq!(code(&deep), Some(-32700), "nested past serde_json's depth limit");
        // JSON, but a number past a float's range: refused, answering the request's own id.
        for id in [r#"7"#, r#""seven""#] {
            let body = format!(
                r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/call","params":{{"name":"set_record","arguments":{{"value":{{"celsius":1e400}}}}}}}}"#
            );
            let refusal = check(body.as_bytes()).err().expect("refused");
            assert_eq!(refusal.code.0, -32700);
            assert_eq!(refusal.id, serde_json::from_str(id).ok(), "{}", refusal.message);
            assert!(refusal.message.contains("64-bit float"), "{}", refusal.message);
        }
        for bad in [
            "[]",
            r#"[{"jsonrpc":"2.0","id":1,"method":"ping"}]"#,
            "null",
            "\"ping\"",
            r#"{"jsonrpc":"2.0","id":{"a":1},"method":"ping"}"#,
            r#"{"jsonrpc":"2.0","id":[1],"method":"ping"}"#,
            r#"{"jsonrpc":"2.0","id":1.5,"method":"ping"}"#,
            r#"{"jsonrpc":"2.0","id":true,"method":"ping"}"#,
            r#"{"jsonrpc":"2.0","id":18446744073709551615,"method":"ping"}"#,
            r#"{"jsonrpc":"1.0","id":1,"method":"ping"}"#,
            r#"{"id":1,"method":"ping"}"#,
            r#"{"jsonrpc":"2.0","id":1,"method":5}"#,
            r#"{"jsonrpc":"2.0","id":1}"#,
        ] {
            assert_eq!(code(bad), Some(-32600), "{bad}");
        }
        let echoed =
            check(br#"{"jsonrpc":"1.0","id":"x","method":"ping"}"#).err().expect("refused");
        assert_eq!(echoed.id, Some(json!("x")), "a readable id is echoed");
        assert_eq!(
            check(br#"{"jsonrpc":"2.0","id":{"a":1},"method":"ping"}"#).err().expect("refused").id,
            None,
            "an unreadable one is not"
        );
        let good = check(br#"{"jsonrpc":"2.0","id":"a","method":"ping","method":"tools/list"}"#)
            .expect("passes");
        assert_eq!(
            serde_json::from_slice::<Value>(&good.bytes).expect("json")["method"],
            "tools/list",
            "what rmcp reads is what was checked"
        );
        assert!(check(br#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#).is_ok());
    }

    #[test]
    fn known_methods_with_params_that_do_not_fit_are_invalid_params() {
        let error = custom_request_error(
            "tools/call",
            Some(json!({"name": "describe_schema", "arguments": [1, 2]})),
        );
        assert_eq!(error.code, ErrorCode::INVALID_PARAMS);
        assert!(
            error.message.contains("invalid params for `tools/call`")
                && error.message.contains("arguments"),
            "{}",
            error.message
        );
        let missing = custom_request_error("tools/call", Some(json!({"arguments": {}})));
        assert_eq!(missing.code, ErrorCode::INVALID_PARAMS);
        assert!(missing.message.contains("name"), "{}", missing.message);
        assert_eq!(
            custom_request_error("resources/read", Some(json!("x"))).code,
            ErrorCode::INVALID_PARAMS
        );
        // Params rmcp cannot represent at all are judged the same way, before rmcp.
        let array = check(br#"{"jsonrpc":"2.0","id":4,"method":"tools/call","params":[]}"#)
            .err()
            .expect("refused");
        assert_eq!((array.code, array.id), (ErrorCode::INVALID_PARAMS, Some(json!(4))));
        assert_eq!(
            code(r#"{"jsonrpc":"2.0","id":5,"method":"tools/nope","params":[1]}"#),
            Some(-32601)
        );
        let unknown = custom_request_error("tools/explode", None);
        assert_eq!(unknown.code, ErrorCode::METHOD_NOT_FOUND);
        assert!(unknown.message.contains("`tools/explode`"));
    }
}
