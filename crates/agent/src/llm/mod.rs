//! LLM backends over their real HTTP APIs: OpenAI-compatible chat completions (OpenAI, vLLM,
//! llama.cpp server, Ollama) and Anthropic messages. One small trait; JSON answers are parsed
//! with one re-ask when the model's text is not JSON (`json.rs`); token usage is recorded.

mod anthropic;
mod config;
mod error;
mod json;
mod openai;

use std::time::Duration;

use serde::Serialize;

pub use anthropic::AnthropicBackend;
pub use config::{LlmConfig, Provider};
pub use error::LlmError;
pub use json::{JsonAnswer, complete_json, extract_json};
pub use openai::OpenAiBackend;

/// Who wrote a message.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Role {
    /// The person (or the pipeline speaking for them).
    User,
    /// The model.
    Assistant,
}

/// One turn of a conversation.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ChatMessage {
    /// Who wrote it.
    pub role: Role,
    /// Its text.
    pub content: String,
}

impl ChatMessage {
    /// A user turn.
    pub fn user(content: impl Into<String>) -> Self {
        Self { role: Role::User, content: content.into() }
    }

    /// An assistant turn.
    pub fn assistant(content: impl Into<String>) -> Self {
        Self { role: Role::Assistant, content: content.into() }
    }
}

/// What to ask.
#[derive(Debug, Clone, PartialEq)]
pub struct ChatRequest {
    /// The system prompt.
    pub system: String,
    /// The conversation, oldest first, ending with a user turn.
    pub messages: Vec<ChatMessage>,
    /// Most tokens in the answer.
    pub max_tokens: u32,
    /// Sampling temperature (0 for the most deterministic answer).
    pub temperature: f32,
    /// Ask for a JSON object (OpenAI-compatible servers honour `response_format`).
    pub json: bool,
}

/// Tokens a call consumed.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Usage {
    /// Prompt tokens.
    pub input_tokens: u64,
    /// Answer tokens.
    pub output_tokens: u64,
}

impl std::ops::AddAssign for Usage {
    fn add_assign(&mut self, other: Self) {
        self.input_tokens += other.input_tokens;
        self.output_tokens += other.output_tokens;
    }
}

/// The model's answer.
#[derive(Debug, Clone, PartialEq)]
pub struct ChatResponse {
    /// Its text.
    pub text: String,
    /// Tokens used.
    pub usage: Usage,
    /// The model that answered, as the server names it.
    pub model: String,
}

/// A chat model behind an HTTP API.
pub trait LlmBackend: Send + Sync + std::fmt::Debug {
    /// Sends one request and waits for the whole answer.
    fn complete(&self, request: &ChatRequest) -> Result<ChatResponse, LlmError>;

    /// The provider and model, for traces.
    fn describe(&self) -> String;
}

/// An HTTP agent with the configured timeout; HTTP error statuses are returned as responses so
/// their bodies (the provider's error message) can be reported.
fn http_agent(timeout: Duration) -> ureq::Agent {
    ureq::Agent::config_builder()
        .timeout_global(Some(timeout))
        .timeout_connect(Some(timeout.min(Duration::from_secs(10))))
        .http_status_as_error(false)
        .build()
        .into()
}

/// Posts `body` as JSON and returns the decoded JSON answer, or an error naming the status and
/// the provider's message.
fn post_json(
    agent: &ureq::Agent,
    timeout: Duration,
    url: &str,
    headers: &[(&str, &str)],
    body: &serde_json::Value,
) -> Result<serde_json::Value, LlmError> {
    let mut request = agent.post(url);
    for (name, value) in headers {
        request = request.header(*name, *value);
    }
    let mut response =
        request.send_json(body).map_err(|e| LlmError::from_transport(url, timeout, e))?;
    let status = response.status().as_u16();
    let text =
        response.body_mut().read_to_string().map_err(|e| LlmError::from_body(url, timeout, e))?;
    if !(200..300).contains(&status) {
        return Err(LlmError::Status { url: url.to_string(), status, body: error_message(&text) });
    }
    serde_json::from_str(&text).map_err(|e| LlmError::InvalidResponse {
        url: url.to_string(),
        reason: format!("not JSON ({e}): {}", preview(&text)),
    })
}

/// The provider's error message from an error body (`{"error": {"message": …}}` in both APIs).
fn error_message(body: &str) -> String {
    serde_json::from_str::<serde_json::Value>(body)
        .ok()
        .and_then(|v| v.pointer("/error/message").and_then(|m| m.as_str()).map(str::to_string))
        .unwrap_or_else(|| preview(body))
}

fn preview(text: &str) -> String {
    let cut: String = text.chars().take(300).collect();
    if cut.len() < text.len() { format!("{cut}…") } else { cut }
}
