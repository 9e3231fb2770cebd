//! The MCP tools: the rows of the tool table (`schemascope_tools::tool_table`) that the served
//! sources can use, and a call run through the table's one path on the blocking pool —
//! cancellable, its progress sent as `notifications/progress` when the client asked for it — or,
//! when it needs no I/O, at once; returning the `{success, message, data}` envelope as both
//! text and structured content.

use std::time::Duration;

use rmcp::{
    Peer, RoleServer,
    model::{CallToolResult, ProgressNotificationParam, ProgressToken, Tool},
};
use schemascope_tools::tool_table::{self, Progress};
use schemascope_tools::{Caller, Services, ToolResult, Written};
use serde_json::Value;
use tokio::sync::mpsc;

/// Any tool of the table by name, listed or not (rmcp validates request headers with it).
pub(crate) fn any(name: &str) -> Option<Tool> {
    tool_table::find(name).and_then(|spec| as_mcp_tool(&tool_table::definition(spec)))
}

/// A definition of the tool table as rmcp's tool.
pub(crate) fn as_mcp_tool(definition: &Value) -> Option<Tool> {
    // The definition is written in MCP's own shape, so this cannot fail short of a bug, which
    // the server test `every_table_row_is_an_mcp_tool` catches.
    serde_json::from_value(definition.clone()).ok()
}

/// The written envelope as an MCP tool result, `isError` = !success: its JSON text as the text
/// content, and the envelope as structured content — or, when `structured_from_text` (the stdio
/// transport, which writes the text's bytes there itself: `crate::stdio_transport`), none.
pub(crate) fn call_tool_result(written: Written, structured_from_text: bool) -> CallToolResult {
    let mut answer = if written.success {
        CallToolResult::structured(Value::Null)
    } else {
        CallToolResult::structured_error(Value::Null)
    };
    answer.content = vec![rmcp::model::ContentBlock::text(written.text.to_string())];
    answer.structured_content =
        if structured_from_text { None } else { Some(written.into_envelope()) };
    answer
}

/// The call of a tool, as a surface runs it: `call_tool_reporting` or `call_tool_written`.
type Call<T> = fn(&Services, Caller, &str, Value, &mut dyn FnMut(Progress)) -> T;

/// Starts tool `name` for `caller`, asked by `who` (see `crate::requester`): the returned
/// future runs it through `call` on the blocking pool (cancelled when `timeout` passes — if the tool is one a request timeout bounds — or the
/// client cancels, see [`crate::cancel`]; the answers made then become a `T` through `answer`),
/// and each step it reports arrives on the receiver as it happens.
#[allow(clippy::too_many_arguments)] // one call's parts, passed on as they came
fn start<T: Send + 'static>(
    services: Services,
    caller: Caller,
    who: String,
    name: String,
    arguments: Value,
    timeout: Option<Duration>,
    call: Call<T>,
    answer: impl FnOnce(ToolResult) -> T + Send + 'static,
) -> (mpsc::UnboundedReceiver<Progress>, impl Future<Output = T> + Send) {
    let timeout = timeout
        .filter(|_| tool_table::find(&name).is_some_and(|spec| spec.request_timeout_applies));
    let (sender, progress) = mpsc::unbounded_channel();
    let work = async move {
        let label = name.clone();
        let work = move || {
            // Long work's own progress lines (an algorithm's count of steps) go out as steps too.
            let lines = sender.clone();
            let sink: schemascope_core::progress::Sink =
                std::sync::Arc::new(move |line: String| {
                    let detail = serde_json::json!({"progress": line});
                    let _ = lines.send(Progress { message: line, detail });
                });
            schemascope_tools::requester::with(who, || {
                schemascope_core::progress::with(sink, || {
                    call(&services, caller, &name, arguments, &mut |step| {
                        // Nobody listening any more is fine: the call still finishes.
                        let _ = sender.send(step);
                    })
                })
            })
        };
        crate::cancel::run_cancellable(&label, timeout, work, answer).await
    };
    (progress, work)
}

/// [`start`] for a call whose progress nobody follows.
pub(crate) async fn run(
    services: Services,
    caller: Caller,
    who: String,
    name: String,
    arguments: Value,
    timeout: Option<Duration>,
) -> ToolResult {
    let call: Call<ToolResult> = tool_table::call_tool_reporting;
    start(services, caller, who, name, arguments, timeout, call, |result| result).1.await
}

/// [`start`], with each step the call reports handed to `on_step` as it happens, in order, and
/// all of them before the result.
pub(crate) async fn run_reporting<F: Future<Output = ()>>(
    services: Services,
    caller: Caller,
    who: String,
    name: String,
    arguments: Value,
    timeout: Option<Duration>,
    on_step: impl FnMut(Progress) -> F,
) -> ToolResult {
    let call: Call<ToolResult> = tool_table::call_tool_reporting;
    let (steps, work) =
        start(services, caller, who, name, arguments, timeout, call, |result| result);
    follow(steps, work, on_step).await
}

/// [`run_reporting`], the answer written as JSON text once (MCP sends it as text and as
/// structured content). A call that needs no I/O — a search reusing its index, a list_sources
/// answered again — is answered on this thread (`tool_table::answer_at_once`), without the
/// hand-off to the blocking pool and back that would cost more than its work.
#[allow(clippy::too_many_arguments)] // one call's parts, passed on as they came
pub(crate) async fn run_written_reporting<F: Future<Output = ()>>(
    services: Services,
    caller: Caller,
    who: String,
    name: String,
    arguments: Value,
    timeout: Option<Duration>,
    on_step: impl FnMut(Progress) -> F,
) -> Written {
    if let Some(written) = tool_table::answer_at_once(&services, caller, &name, &arguments) {
        return written;
    }
    let max_bytes = tool_table::result_cap(&services, &name);
    let call: Call<Written> = tool_table::call_tool_written;
    let written = move |result: ToolResult| result.written(max_bytes);
    let (steps, work) = start(services, caller, who, name, arguments, timeout, call, written);
    follow(steps, work, on_step).await
}

/// Hands each step on `steps` to `on_step` while `work` runs, and those left after it ended,
/// then gives its answer.
async fn follow<T, F: Future<Output = ()>>(
    mut steps: mpsc::UnboundedReceiver<Progress>,
    work: impl Future<Output = T>,
    mut on_step: impl FnMut(Progress) -> F,
) -> T {
    tokio::pin!(work);
    let answer = loop {
        tokio::select! {
            answer = &mut work => break answer,
            Some(step) = steps.recv() => on_step(step).await,
        }
    };
    while let Ok(step) = steps.try_recv() {
        on_step(step).await;
    }
    answer
}

/// Sends `step`, the `count`th of the call, as an MCP progress notification (the step's
/// message is the notification's message).
pub(crate) async fn notify(
    peer: &Peer<RoleServer>,
    token: &ProgressToken,
    count: u32,
    step: Progress,
) {
    let progress =
        ProgressNotificationParam::new(token.clone(), f64::from(count)).with_message(step.message);
    // A client gone away misses its progress; the call still answers.
    let _ = peer.notify_progress(progress).await;
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn envelope_is_text_and_structured() {
        let written = ToolResult::ok("fine", json!({ "n": 1 })).written(1 << 20);
        let result = call_tool_result(written, false);
        assert_eq!(result.is_error, Some(false));
        let structured = result.structured_content.clone().unwrap_or_default();
        assert_eq!(structured["data"]["n"], 1);
        let text = result
            .content
            .first()
            .and_then(|c| c.as_text())
            .map(|t| t.text.clone())
            .unwrap_or_default();
        assert_eq!(serde_json::from_str::<Value>(&text).unwrap_or_default(), structured);
    }

    #[test]
    fn the_text_is_the_one_rmcp_writes() {
        let data = json!({"s": "quote \" slash \\ line\n tab\t \u{7f} é \u{2028} 😀", "x": [1.5, -0.0, 1e300, null]});
        for (success, message) in [(true, "fine"), (false, "not fine")] {
            let result = if success {
                ToolResult::ok(message, data.clone())
            } else {
                ToolResult::failed(message, data.clone())
            };
            let envelope = result.clone().into_value();
            let theirs = if success {
                CallToolResult::structured(envelope)
            } else {
                CallToolResult::structured_error(envelope)
            };
            let ours = call_tool_result(result.written(1 << 20), false);
            assert_eq!(
                serde_json::to_string(&ours).unwrap_or_default(),
                serde_json::to_string(&theirs).unwrap_or_default()
            );
        }
    }

    #[test]
    fn every_table_row_is_an_mcp_tool() {
        for spec in tool_table::TOOLS {
            let tool = any(spec.name)
                .unwrap_or_else(|| panic!("{} does not read as an MCP tool", spec.name));
            assert_eq!(tool.name, spec.name);
            assert_eq!(
                tool.annotations.as_ref().and_then(|a| a.read_only_hint),
                Some(spec.hints.read_only)
            );
            assert!(tool.output_schema.is_none());
        }
    }
}
