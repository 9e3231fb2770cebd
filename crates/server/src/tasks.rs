//! Long calls as MCP tasks (the Tasks extension, SEP-2663), for clients that declare it: a call
//! of a tool the table marks as possibly long (`tool_table::runs_long`: a profile, an algorithm,
//! an LLM pipeline) that has not answered within [`ANSWER_AT_ONCE`] becomes a task the client
//! polls (`tasks/get`) and may cancel (`tasks/cancel`), its steps shown as the task's status
//! message. A call that answers sooner is answered directly, as for any other client.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use rmcp::model::{CallToolResponse, CallToolResult, CreateTaskResult, ProgressToken};
use rmcp::task_manager::{TaskContext, TaskExit, TaskManager, TaskOptions};
use rmcp::{Peer, RoleServer};
use schemascope_tools::tool_table::Progress;
use schemascope_tools::{Caller, Services};
use serde_json::Value;
use tokio_util::sync::CancellationToken;

/// How long a call may take before it is turned into a task.
pub(crate) const ANSWER_AT_ONCE: Duration = Duration::from_secs(1);

/// How long a task and its result are kept (beyond it, rmcp marks it failed and drops it).
const TASK_TTL_MS: u64 = 30 * 60 * 1000;

/// The time limit of a call a client may get as a task: the task's own lifetime rather than the
/// request timeout (which is for a caller waiting on an open request), unless that is longer. A
/// task is followed by polling and can be cancelled (`tasks/cancel`), so a betweenness over
/// 50,000 nodes need not fail at 60 s.
pub(crate) fn task_timeout(request_timeout: Option<Duration>) -> Option<Duration> {
    request_timeout.map(|t| t.max(Duration::from_millis(TASK_TTL_MS)))
}

/// How often a client is told to poll.
const POLL_INTERVAL_MS: u64 = 500;

/// Where a call's steps go: progress notifications while the request is open, the task's
/// status message once it is a task.
#[derive(Clone, Default)]
struct StepSink {
    task: Arc<Mutex<Option<TaskContext>>>,
}

/// What a call needs to run as a task.
pub(crate) struct LongCall {
    pub(crate) services: Services,
    /// Who asked (see `crate::requester`).
    pub(crate) who: String,
    pub(crate) name: String,
    pub(crate) arguments: Value,
    pub(crate) timeout: Option<Duration>,
    pub(crate) peer: Peer<RoleServer>,
    pub(crate) progress_token: Option<ProgressToken>,
    /// The request's own token: cancelling the request before it became a task stops the work.
    pub(crate) request: CancellationToken,
}

/// Runs `call`: its answer if it comes within [`ANSWER_AT_ONCE`], else a task in `tasks`.
pub(crate) async fn run(tasks: &TaskManager, call: LongCall) -> CallToolResponse {
    let sink = StepSink::default();
    let cancel = CancellationToken::new();
    let LongCall { services, who, name, arguments, timeout, peer, progress_token, request } = call;
    let steps = sink.clone();
    let mut count = 0;
    let on_step = move |step: Progress| {
        count += 1;
        let (steps, peer, token, count) =
            (steps.clone(), peer.clone(), progress_token.clone(), count);
        async move {
            let task = schemascope_core::sync::lock(&steps.task).clone();
            match (task, token) {
                (Some(task), _) => task.set_status_message(step.message),
                (None, Some(token)) => crate::tools::notify(&peer, &token, count, step).await,
                (None, None) => {}
            }
        }
    };
    let work = crate::tools::run_written_reporting(
        services,
        Caller::Ai,
        who,
        name,
        arguments,
        timeout,
        on_step,
    );
    let mut handle = tokio::spawn(crate::cancel::with_request(cancel.clone(), work));
    let early = tokio::select! {
        joined = &mut handle => Some(joined),
        () = request.cancelled() => {
            cancel.cancel();
            Some((&mut handle).await)
        }
        () = tokio::time::sleep(ANSWER_AT_ONCE) => None,
    };
    if let Some(joined) = early {
        return CallToolResponse::from(answer(joined));
    }
    let options = TaskOptions::new()
        .with_ttl_ms(TASK_TTL_MS)
        .with_poll_interval_ms(POLL_INTERVAL_MS)
        .with_status_message("running");
    let task = tasks.spawn(options, move |context| {
        *schemascope_core::sync::lock(&sink.task) = Some(context.clone());
        Box::pin(async move {
            tokio::select! {
                joined = &mut handle => Ok(answer(joined)),
                () = context.cancelled() => {
                    cancel.cancel();
                    // The work stops at its next check; its partial answer is not the result.
                    let _ = handle.await;
                    Err(TaskExit::Cancelled)
                }
            }
        })
    });
    CallToolResponse::Task(CreateTaskResult::new(task))
}

/// The call's result as MCP sends it (with structured content: a task's result travels as
/// JSON in `tasks/get`).
fn answer(joined: Result<schemascope_tools::Written, tokio::task::JoinError>) -> CallToolResult {
    match joined {
        Ok(written) => crate::tools::call_tool_result(written, false),
        Err(error) => crate::tools::call_tool_result(
            schemascope_tools::ToolResult::failed(
                format!("the call stopped unexpectedly: {error}"),
                serde_json::json!({"error": "internal"}),
            )
            .written(1 << 20),
            false,
        ),
    }
}
