//! MCP over stdio: one session on stdin/stdout, until the client closes stdin.
//!
//! Every line from the client passes the same JSON-RPC check as an HTTP body
//! (`jsonrpc::check`) before rmcp reads it: rmcp drops a line it cannot parse (malformed JSON,
//! nesting past serde_json's limit, a batch) without an answer, which leaves the client
//! waiting forever. Here such a line is answered with its JSON-RPC error, as over HTTP, and a
//! line longer than [`MAX_LINE_BYTES`] is refused without being held. The server's messages
//! (written by `stdio_transport`), rmcp's own answers and these errors reach stdout one whole
//! line at a time.

use rmcp::ServiceExt;
use rmcp::model::ErrorCode;
use schemascope_tools::Services;
use tokio::io::{AsyncBufReadExt, AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt, BufReader};
use tokio::sync::mpsc;

use crate::jsonrpc::Refusal;
use crate::stdio_transport::StdioTransport;
use crate::{SchemascopeServer, ServerError};

/// The longest message read from stdin (the HTTP transport's default body limit is 4 MiB).
pub(crate) const MAX_LINE_BYTES: u64 = 16 * 1024 * 1024;

/// Serves one MCP session over stdin/stdout until the client disconnects; a tool call is
/// cancelled after `tool_timeout` when one is given (else only by the client).
///
/// Nothing else may write to stdout while this runs: it is the transport.
pub async fn serve_stdio(
    services: Services,
    tool_timeout: Option<std::time::Duration>,
) -> Result<(), ServerError> {
    use tokio::net::unix::pipe;
    // Pipes (as MCP clients start servers) are read and written by the runtime's own thread
    // when ready; tokio's stdin and stdout would hand every read and write to a blocking-pool
    // thread and back. Both are checked first: a pipe made non-blocking cannot go back to
    // tokio's blocking reads or writes.
    if let (Some(input), Some(output)) = (pipe_end(std::io::stdin()), pipe_end(std::io::stdout()))
        && let Ok(input) = pipe::Receiver::from_file(input)
    {
        return match pipe::Sender::from_file(output) {
            Ok(output) => serve_pipes(services, tool_timeout, input, output).await,
            Err(_) => serve_pipes(services, tool_timeout, input, tokio::io::stdout()).await,
        };
    }
    // A terminal or a file.
    serve_pipes(services, tool_timeout, tokio::io::stdin(), tokio::io::stdout()).await
}

/// A second descriptor of `stdio` (stdin or stdout), when it is a pipe.
fn pipe_end(stdio: impl std::os::fd::AsFd) -> Option<std::fs::File> {
    use std::os::unix::fs::FileTypeExt;
    let file = std::fs::File::from(stdio.as_fd().try_clone_to_owned().ok()?);
    file.metadata().ok().filter(|m| m.file_type().is_fifo()).map(|_| file)
}

/// [`serve_stdio`] over any pair of pipes.
async fn serve_pipes(
    services: Services,
    tool_timeout: Option<std::time::Duration>,
    input: impl AsyncRead + Unpin + Send + 'static,
    output: impl AsyncWrite + Unpin + Send + 'static,
) -> Result<(), ServerError> {
    let (to_rmcp, rmcp_input) = tokio::io::duplex(64 * 1024);
    // Only what rmcp answers itself (a message it cannot read as MCP) is written here; the
    // server's messages come as lines (`crate::stdio_transport`).
    let (rmcp_output, from_rmcp) = tokio::io::duplex(64 * 1024);
    let (lines, to_write) = mpsc::unbounded_channel::<Vec<u8>>();
    let reading = tokio::spawn(gate(input, to_rmcp, lines.clone()));
    let writing = tokio::spawn(write_lines(from_rmcp, to_write, output));
    let transport = StdioTransport::new(rmcp_input, rmcp_output, lines);
    let mut server = SchemascopeServer::new(services).with_structured_from_text();
    if let Some(timeout) = tool_timeout {
        server = server.with_tool_timeout(timeout);
    }
    let running = server.serve(transport).await;
    let outcome = match running {
        Ok(running) => running.waiting().await.map(|_| ()).map_err(ServerError::from),
        Err(error) => Err(error.into()),
    };
    reading.abort();
    // The writer ends when rmcp's output closes, after its last message.
    let _ = writing.await;
    outcome
}

/// Reads the client's lines: each one that is a JSON-RPC message goes on to rmcp, each one that
/// is not is answered with its error. Ends at the end of the input.
async fn gate(
    input: impl AsyncRead + Unpin,
    mut to_rmcp: impl AsyncWrite + Unpin,
    errors: mpsc::UnboundedSender<Vec<u8>>,
) {
    let mut reader = BufReader::new(input);
    let mut line = Vec::new();
    loop {
        line.clear();
        let read = (&mut reader).take(MAX_LINE_BYTES + 1).read_until(b'\n', &mut line).await;
        match read {
            Ok(0) | Err(_) => return,
            Ok(_) => {}
        }
        if line.len() as u64 > MAX_LINE_BYTES && line.last() != Some(&b'\n') {
            // Too long: skip to its end without holding it, then say so.
            loop {
                let mut rest = Vec::new();
                match (&mut reader).take(64 * 1024).read_until(b'\n', &mut rest).await {
                    Ok(0) | Err(_) => break,
                    Ok(_) if rest.last() == Some(&b'\n') => break,
                    Ok(_) => {}
                }
            }
            let refusal = Refusal {
                code: ErrorCode::PARSE_ERROR,
                id: None,
                message: format!(
                    "parse error: a message longer than {MAX_LINE_BYTES} bytes is not read"
                ),
            };
            let _ = errors.send(error_line(refusal));
            continue;
        }
        if line.iter().all(u8::is_ascii_whitespace) {
            continue;
        }
        match crate::jsonrpc::check(&line) {
            Ok(checked) => {
                let mut bytes = checked.bytes;
                bytes.push(b'\n');
                if to_rmcp.write_all(&bytes).await.is_err() {
                    return;
                }
            }
            Err(refusal) => {
                let _ = errors.send(error_line(refusal));
            }
        }
    }
}

/// `refusal` as one line of the stdio transport.
fn error_line(refusal: Refusal) -> Vec<u8> {
    let mut line = refusal.into_json().to_string().into_bytes();
    line.push(b'\n');
    line
}

/// Writes the server's messages and the gate's errors (`lines`) and what rmcp answers itself
/// to `output`, a whole line at a time, until both have ended.
async fn write_lines(
    from_rmcp: impl AsyncRead + Unpin,
    mut lines: mpsc::UnboundedReceiver<Vec<u8>>,
    mut output: impl AsyncWrite + Unpin,
) {
    let mut reader = BufReader::new(from_rmcp);
    let mut line = Vec::new();
    let (mut rmcp_open, mut lines_open) = (true, true);
    while rmcp_open || lines_open {
        line.clear();
        tokio::select! {
            read = reader.read_until(b'\n', &mut line), if rmcp_open => match read {
                Ok(0) | Err(_) => {
                    rmcp_open = false;
                    continue;
                }
                Ok(_) => {}
            },
            next = lines.recv(), if lines_open => match next {
                Some(next) => line = next,
                None => {
                    lines_open = false;
                    continue;
                }
            },
        }
        if output.write_all(&line).await.is_err() || output.flush().await.is_err() {
            return;
        }
    }
    let _ = output.flush().await;
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::Value;

    /// Sends `lines` to a server over pipes and returns the lines it answers until `expect`
    /// answers have come.
    async fn exchange(lines: &[&str], expect: usize) -> Vec<Value> {
        let (mut client, server_input) = tokio::io::duplex(1024 * 1024);
        let (server_output, client_output) = tokio::io::duplex(1024 * 1024);
        let server = tokio::spawn(serve_pipes(Services::new(), None, server_input, server_output));
        for line in lines {
            client.write_all(line.as_bytes()).await.expect("write");
            client.write_all(b"\n").await.expect("write");
        }
        let mut reader = BufReader::new(client_output);
        let mut answers = Vec::new();
        while answers.len() < expect {
            let mut line = String::new();
            let read = tokio::time::timeout(
                std::time::Duration::from_secs(10),
                reader.read_line(&mut line),
            )
            .await
            .expect("an answer in time")
            .expect("read");
            assert!(read > 0, "the server closed before answering: {answers:?}");
            answers.push(serde_json::from_str(&line).expect("JSON"));
        }
        drop(client);
        server.abort();
        answers
    }

    #[tokio::test]
    async fn a_tool_result_carries_the_bytes_of_its_text_as_structured_content() {
        let initialize = r#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}"#;
        let answers = exchange(
            &[
                initialize,
                r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#,
                r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"list_sources","arguments":{}}}"#,
                r#"{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"list_sources"}}"#,
                r#"{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"no_such_tool","arguments":{}}}"#,
            ],
            4,
        )
        .await;
        for id in 1..=3 {
            let answer = answers.iter().find(|a| a["id"] == id).expect("answered");
            let result = &answer["result"];
            let text = result["content"][0]["text"].as_str().expect("text content");
            let envelope: Value = serde_json::from_str(text).expect("the text is JSON");
            assert_eq!(result["structuredContent"], envelope, "{answer}");
            assert_eq!(result["isError"], Value::Bool(id == 3), "{answer}");
        }
    }

    #[tokio::test]
    async fn lines_rmcp_would_drop_are_answered_and_the_session_goes_on() {
        let deep = format!("{}{}", "[".repeat(200), "]".repeat(200));
        let answers = exchange(
            &[
                r#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}"#,
                r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#,
                "{not json",
                &deep,
                r#"[{"jsonrpc":"2.0","id":1,"method":"ping"}]"#,
                r#"{"jsonrpc":"2.0","id":7,"method":"ping"}"#,
            ],
            5,
        )
        .await;
        let codes: Vec<i64> = answers.iter().filter_map(|a| a["error"]["code"].as_i64()).collect();
        assert_eq!(codes, vec![-32700, -32700, -32600], "{answers:?}");
        let pong = answers.iter().find(|a| a["id"] == 7).expect("the ping after them is answered");
        assert!(pong.get("result").is_some(), "{pong}");
    }
}
