//! The stdio transport's messages to the client, written here rather than by rmcp: each one a
//! line of JSON, as rmcp writes it, except that a tool result's structured content is copied
//! from its text content (the envelope's JSON text, written once by the tool's call) instead of
//! the envelope being serialised again. Messages from the client are read by rmcp's own line
//! transport.

use rmcp::RoleServer;
use rmcp::model::{CallToolResult, JsonRpcMessage, JsonRpcResponse, ServerResult};
use rmcp::service::{RxJsonRpcMessage, TxJsonRpcMessage};
use rmcp::transport::Transport;
use rmcp::transport::async_rw::AsyncRwTransport;
use serde_json::Value;
use tokio::io::{AsyncRead, AsyncWrite};
use tokio::sync::mpsc;

/// Stands in for a tool result's structured content while the message is serialised; a JSON
/// string holding NUL characters, which no text content can hold unescaped.
const PLACEHOLDER: &str = "\u{0}schemascope: the structured content is the text content\u{0}";

/// rmcp's line transport for reading, and lines sent to the stdio writer for writing.
pub(crate) struct StdioTransport<R: AsyncRead, W: AsyncWrite> {
    /// Reads the client's messages; a well-formed message rmcp cannot read as MCP is answered
    /// on its own writer.
    reader: AsyncRwTransport<RoleServer, R, W>,
    /// Whole lines, newline included, to the writer of stdout.
    lines: mpsc::UnboundedSender<Vec<u8>>,
}

impl<R, W> StdioTransport<R, W>
where
    R: AsyncRead + Send + Unpin,
    W: AsyncWrite + Send + Unpin + 'static,
{
    /// Reads from `input` (rmcp answering what it cannot read on `rmcp_output`) and sends each
    /// message as a line on `lines`.
    pub(crate) fn new(input: R, rmcp_output: W, lines: mpsc::UnboundedSender<Vec<u8>>) -> Self {
        Self { reader: AsyncRwTransport::new_server(input, rmcp_output), lines }
    }
}

impl<R, W> Transport<RoleServer> for StdioTransport<R, W>
where
    R: AsyncRead + Send + Unpin + 'static,
    W: AsyncWrite + Send + Unpin + 'static,
{
    type Error = std::io::Error;

    fn send(
        &mut self,
        item: TxJsonRpcMessage<RoleServer>,
    ) -> impl Future<Output = Result<(), Self::Error>> + Send + 'static {
        let sent = self.lines.send(line(item)).map_err(|_| {
            std::io::Error::new(std::io::ErrorKind::BrokenPipe, "the stdout writer has stopped")
        });
        std::future::ready(sent)
    }

    fn receive(&mut self) -> impl Future<Output = Option<RxJsonRpcMessage<RoleServer>>> + Send {
        self.reader.receive()
    }

    async fn close(&mut self) -> Result<(), Self::Error> {
        self.reader.close().await
    }
}

/// `message` as one line of JSON, newline included: the bytes rmcp writes for it when a tool
/// result carries its envelope as structured content, given here a tool result without one
/// whose only content is the envelope's text (what `tools::call_tool_result` makes for stdio).
pub(crate) fn line(mut message: TxJsonRpcMessage<RoleServer>) -> Vec<u8> {
    let from_text = match result_of(&mut message) {
        Some(result) if result.structured_content.is_none() && text_of(result).is_some() => {
            result.structured_content = Some(Value::String(PLACEHOLDER.into()));
            true
        }
        _ => false,
    };
    // A message always serialises (string keys, no failing `Serialize` impl).
    let mut bytes = serde_json::to_vec(&message).unwrap_or_default();
    if from_text && let Some(result) = result_of(&mut message) {
        let text = text_of(result).unwrap_or_default();
        match with_placeholder_replaced(&bytes, text.as_bytes()) {
            Some(replaced) => bytes = replaced,
            // Not found (it always is): the envelope read back from its text, written again.
            None => {
                result.structured_content = serde_json::from_str(text).ok();
                bytes = serde_json::to_vec(&message).unwrap_or_default();
            }
        }
    }
    bytes.push(b'\n');
    bytes
}

/// The tool result `message` answers with, if it is one.
fn result_of(message: &mut TxJsonRpcMessage<RoleServer>) -> Option<&mut CallToolResult> {
    match message {
        JsonRpcMessage::Response(JsonRpcResponse {
            result: ServerResult::CallToolResult(result),
            ..
        }) => Some(result),
        _ => None,
    }
}

/// The text of a tool result whose only content is text.
fn text_of(result: &CallToolResult) -> Option<&str> {
    match result.content.as_slice() {
        [only] => only.as_text().map(|text| text.text.as_str()),
        _ => None,
    }
}

/// `bytes` with the last [`PLACEHOLDER`] string in them replaced by `json`, if there is one. The placeholder is
/// the last string of the message (only `isError` follows it), so it is looked for from the end.
fn with_placeholder_replaced(bytes: &[u8], json: &[u8]) -> Option<Vec<u8>> {
    let placeholder = serde_json::to_vec(PLACEHOLDER).ok()?;
    let at = bytes.windows(placeholder.len()).rposition(|w| w == placeholder.as_slice())?;
    let mut out = Vec::with_capacity(bytes.len() + json.len());
    out.extend_from_slice(&bytes[..at]);
    out.extend_from_slice(json);
    out.extend_from_slice(&bytes[at + placeholder.len()..]);
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use rmcp::model::{JsonRpcVersion2_0, NumberOrString};
    use schemascope_tools::ToolResult;
    use serde_json::json;

    fn response(result: CallToolResult) -> TxJsonRpcMessage<RoleServer> {
        JsonRpcMessage::Response(JsonRpcResponse {
            jsonrpc: JsonRpcVersion2_0,
            id: NumberOrString::Number(7),
            result: ServerResult::CallToolResult(result),
        })
    }

    #[test]
    fn a_tool_result_is_the_line_rmcp_writes() {
        let data = json!({
            "s": "quote \" slash \\ line\n nul \u{0} \u{7f} é \u{2028} 😀",
            "looksLikeThePlaceholder": PLACEHOLDER,
            "x": [1.5, -0.0, 1e300, null],
        });
        for result in [ToolResult::ok("fine", data.clone()), ToolResult::failed("no", data)] {
            let written = result.written(1 << 20);
            let ours = line(response(crate::tools::call_tool_result(written.clone(), true)));
            let theirs = response(crate::tools::call_tool_result(written, false));
            let mut theirs = serde_json::to_vec(&theirs).unwrap_or_default();
            theirs.push(b'\n');
            assert_eq!(String::from_utf8_lossy(&ours), String::from_utf8_lossy(&theirs));
        }
    }

    #[test]
    fn other_messages_are_written_as_they_are() {
        let written = ToolResult::ok("fine", json!({"n": 1})).written(1 << 20);
        // A tool result that carries its structured content is written as it is too.
        let carried = response(crate::tools::call_tool_result(written, false));
        let pong: TxJsonRpcMessage<RoleServer> = JsonRpcMessage::Response(JsonRpcResponse {
            jsonrpc: JsonRpcVersion2_0,
            id: NumberOrString::Number(8),
            result: ServerResult::empty(()),
        });
        for message in [carried, pong] {
            let mut expected = serde_json::to_vec(&message).unwrap_or_default();
            expected.push(b'\n');
            assert_eq!(line(message), expected);
        }
    }
}
