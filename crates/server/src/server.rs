//! The MCP server handler: capabilities and instructions, and the wiring of tools, resources,
//! subscriptions and the prompt to their modules.

use std::sync::Arc;

use rmcp::task_manager::TaskManager;
use rmcp::{
    ErrorData as McpError, RoleServer, ServerHandler,
    model::{
        CacheScope, CallToolRequestParams, CallToolResponse, CancelTaskParams,
        CompleteRequestParams, CompleteResult, CustomRequest, CustomResult, GetPromptRequestParams,
        GetPromptResponse, GetTaskParams, GetTaskResult, Implementation, ListPromptsResult,
        ListResourceTemplatesResult, ListResourcesResult, ListToolsResult, PaginatedRequestParams,
        ReadResourceRequestParams, ReadResourceResponse, ServerCapabilities, ServerConfig,
        SubscribeRequestParams, SubscriptionFilter, Tool, UnsubscribeRequestParams,
        UpdateTaskParams,
    },
    service::{NotificationContext, RequestContext, SubscriptionContext},
};
use schemascope_tools::{Caller, Services};
use tokio_util::sync::CancellationToken;

use crate::{prompts, resources, subscriptions, subscriptions::McpSessionSubscriptions};

/// How long a client may keep a list (tools, resources, templates, prompts) without asking
/// again: they change only when the sources do, and then the server sends `list_changed`.
const LIST_TTL_MS: u64 = 60_000;

/// Resources per `resources/list` page (a source per resource, plus one per record of a live
/// AimDB source, which can hold thousands).
pub(crate) const RESOURCES_PAGE: usize = 100;

/// The schemascope MCP server: shares the services; each MCP session gets its own subscriptions.
#[derive(Clone)]
pub struct SchemascopeServer {
    services: Services,
    session: Arc<McpSessionSubscriptions>,
    closing: CancellationToken,
    /// How long a tool call may run before its work is cancelled (`--request-timeout` over
    /// HTTP; none over stdio, whose client cancels with `notifications/cancelled`).
    tool_timeout: Option<std::time::Duration>,
    /// Whether tool results leave their structured content to the transport, which writes the
    /// bytes of their text content there (stdio: `crate::stdio_transport`).
    structured_from_text: bool,
    /// The session's calls that became tasks (see `crate::tasks`).
    tasks: TaskManager,
}

impl std::fmt::Debug for SchemascopeServer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SchemascopeServer")
            .field("services", &self.services)
            .finish_non_exhaustive()
    }
}

impl SchemascopeServer {
    /// A server answering from `services`.
    pub fn new(services: Services) -> Self {
        let session = McpSessionSubscriptions::new(services.clone());
        Self {
            services,
            session,
            closing: CancellationToken::new(),
            tool_timeout: None,
            structured_from_text: false,
            tasks: TaskManager::new(),
        }
    }

    /// The same server, cancelling a tool call's work after `timeout` (the call then answers
    /// that it was stopped).
    pub fn with_tool_timeout(mut self, timeout: std::time::Duration) -> Self {
        self.tool_timeout = Some(timeout);
        self
    }

    /// The same server, ending its `subscriptions/listen` streams gracefully (with their final
    /// result) when `closing` is cancelled, before the transport goes away.
    pub(crate) fn with_closing(mut self, closing: CancellationToken) -> Self {
        self.closing = closing;
        self
    }

    /// The same server, its tool results without structured content: for a transport that
    /// writes the bytes of their text content as their structured content
    /// (`crate::stdio_transport`), which are the same bytes as the envelope's.
    pub(crate) fn with_structured_from_text(mut self) -> Self {
        self.structured_from_text = true;
        self
    }

    /// The services this server answers from.
    pub fn services(&self) -> &Services {
        &self.services
    }

    /// A handler for a new session: the same services and tools, fresh subscriptions.
    pub(crate) fn new_session(&self) -> Self {
        Self {
            services: self.services.clone(),
            session: McpSessionSubscriptions::new(self.services.clone()),
            closing: self.closing.clone(),
            tool_timeout: self.tool_timeout,
            structured_from_text: self.structured_from_text,
            tasks: TaskManager::new(),
        }
    }
}

impl ServerHandler for SchemascopeServer {
    fn get_info(&self) -> ServerConfig {
        let capabilities = ServerCapabilities::builder()
            .enable_tools()
            .enable_tool_list_changed()
            .enable_resources()
            .enable_resources_subscribe()
            .enable_resources_list_changed()
            .enable_prompts()
            .enable_completions()
            .enable_tasks()
            .build();
        ServerConfig::new(capabilities)
            .with_server_info(Implementation::new("schemascope", env!("CARGO_PKG_VERSION")))
            .with_instructions(schemascope_tools::instructions(&self.services))
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, McpError> {
        let renders_apps = crate::apps::client_renders_apps(context.client_capabilities().as_ref());
        Ok(ListToolsResult::with_all_items(crate::apps::listed_tools(&self.services, renders_apps))
            .with_ttl_ms(LIST_TTL_MS)
            .with_cache_scope(CacheScope::Private))
    }

    fn get_tool(&self, name: &str) -> Option<Tool> {
        crate::tools::any(name)
    }

    /// Over MCP the caller is an LLM, so what the style tools add is recorded as `ai`.
    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, McpError> {
        let arguments =
            request.arguments.map_or(serde_json::Value::Null, serde_json::Value::Object);
        let token = context.meta.get_progress_token();
        let as_task = context.client_capabilities().is_some_and(|c| c.supports_tasks())
            && schemascope_tools::tool_table::find(&request.name)
                .is_some_and(schemascope_tools::tool_table::runs_long);
        if as_task {
            let call = crate::tasks::LongCall {
                services: self.services.clone(),
                who: crate::requester::of_mcp(&context),
                name: request.name.to_string(),
                arguments,
                timeout: crate::tasks::task_timeout(self.tool_timeout),
                peer: context.peer.clone(),
                progress_token: token,
                request: context.ct.clone(),
            };
            return Ok(crate::tasks::run(&self.tasks, call).await);
        }
        let mut count = 0;
        let report = |step| {
            count += 1;
            let (peer, token, count) = (context.peer.clone(), token.clone(), count);
            async move {
                if let Some(token) = token {
                    crate::tools::notify(&peer, &token, count, step).await;
                }
            }
        };
        let run = crate::tools::run_written_reporting(
            self.services.clone(),
            Caller::Ai,
            crate::requester::of_mcp(&context),
            request.name.to_string(),
            arguments,
            self.tool_timeout,
            report,
        );
        // The request's token (cancelled by rmcp on `notifications/cancelled`) is handed to the
        // tool's work through a task-local: see `crate::cancel`.
        let written = crate::cancel::with_request(context.ct.clone(), run).await;
        let result = crate::tools::call_tool_result(written, self.structured_from_text);
        Ok(CallToolResponse::from(result))
    }

    async fn get_task(
        &self,
        request: GetTaskParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<GetTaskResult, McpError> {
        Ok(GetTaskResult::new(self.tasks.get_task(&request.task_id)?))
    }

    async fn update_task(
        &self,
        request: UpdateTaskParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<(), McpError> {
        self.tasks.update_task(&request.task_id, request.input_responses)
    }

    async fn cancel_task(
        &self,
        request: CancelTaskParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<(), McpError> {
        self.tasks.cancel_task(&request.task_id)
    }

    async fn on_initialized(&self, context: NotificationContext<RoleServer>) {
        // Sessions that went through `initialize` (protocol 2025-11-25 and older) get change
        // notifications through their peer; 2026-07-28 clients use `subscriptions/listen`.
        self.session.start(context.peer);
    }

    async fn list_resources(
        &self,
        request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<ListResourcesResult, McpError> {
        let cursor = request.and_then(|r| r.cursor);
        // The apps only for a client that renders them (it reads them through the tools'
        // `_meta`); any client may still read one by its URI.
        let mut all = if crate::apps::client_renders_apps(context.client_capabilities().as_ref()) {
            crate::apps::resources(&self.services)
        } else {
            Vec::new()
        };
        all.extend(resources::list(&self.services));
        let (page, next) = resources::page(all, cursor.as_deref(), RESOURCES_PAGE)?;
        let mut result = ListResourcesResult::with_all_items(page)
            .with_ttl_ms(LIST_TTL_MS)
            .with_cache_scope(CacheScope::Private);
        result.next_cursor = next;
        Ok(result)
    }

    async fn list_resource_templates(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListResourceTemplatesResult, McpError> {
        Ok(ListResourceTemplatesResult::with_all_items(resources::templates())
            .with_ttl_ms(LIST_TTL_MS)
            .with_cache_scope(CacheScope::Private))
    }

    async fn read_resource(
        &self,
        request: ReadResourceRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<ReadResourceResponse, McpError> {
        if let Some(app) = crate::apps::read(&request.uri) {
            return Ok(ReadResourceResponse::from(rmcp::model::ReadResourceResult::new(vec![app])));
        }
        let read = resources::read(self.services.clone(), request.uri, self.tool_timeout);
        crate::cancel::with_request(context.ct, read).await.map(ReadResourceResponse::from)
    }

    async fn subscribe(
        &self,
        request: SubscribeRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<(), McpError> {
        resources::check_known(&self.services, &request.uri)?;
        self.session.subscribe(request.uri, context.peer);
        Ok(())
    }

    async fn unsubscribe(
        &self,
        request: UnsubscribeRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<(), McpError> {
        self.session.unsubscribe(&request.uri);
        Ok(())
    }

    fn accepted_subscription_filter(
        &self,
        requested: &SubscriptionFilter,
    ) -> Option<SubscriptionFilter> {
        Some(subscriptions::accepted_filter(&self.services, requested))
    }

    async fn listen(&self, context: SubscriptionContext) -> Result<(), McpError> {
        subscriptions::listen(&self.services, context, &self.closing).await
    }

    /// A request rmcp could not read as any request it knows arrives here: a known method with
    /// params that do not fit (`arguments` not an object, a missing `name`) is invalid params,
    /// naming what is wrong; any other method is not found.
    async fn on_custom_request(
        &self,
        request: CustomRequest,
        _context: RequestContext<RoleServer>,
    ) -> Result<CustomResult, McpError> {
        Err(crate::jsonrpc::custom_request_error(&request.method, request.params))
    }

    async fn complete(
        &self,
        request: CompleteRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<CompleteResult, McpError> {
        Ok(crate::completions::complete(&self.services, &request))
    }

    async fn list_prompts(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListPromptsResult, McpError> {
        Ok(ListPromptsResult::with_all_items(prompts::listed(&self.services))
            .with_ttl_ms(LIST_TTL_MS)
            .with_cache_scope(CacheScope::Private))
    }

    async fn get_prompt(
        &self,
        request: GetPromptRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<GetPromptResponse, McpError> {
        prompts::get(self.services.clone(), &request.name, request.arguments)
            .await
            .map(GetPromptResponse::from)
    }
}
