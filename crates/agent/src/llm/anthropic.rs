//! Anthropic messages: `POST {base}/v1/messages`.

use serde_json::{Value, json};

use super::{
    ChatRequest, ChatResponse, LlmBackend, LlmConfig, LlmError, Usage, http_agent, post_json,
};

/// The API version this client speaks.
const API_VERSION: &str = "2023-06-01";

/// Anthropic's messages API.
#[derive(Debug)]
pub struct AnthropicBackend {
    config: LlmConfig,
    agent: ureq::Agent,
}

impl AnthropicBackend {
    /// A backend for `config` (its provider is not checked).
    pub fn new(config: LlmConfig) -> Self {
        let agent = http_agent(config.timeout);
        Self { config, agent }
    }
}

impl LlmBackend for AnthropicBackend {
    fn complete(&self, request: &ChatRequest) -> Result<ChatResponse, LlmError> {
        let url = format!("{}/v1/messages", self.config.base_url.trim_end_matches('/'));
        let body = json!({
            "model": self.config.model,
            "system": request.system,
            "messages": request.messages.iter().map(|m| json!({"role": m.role, "content": m.content})).collect::<Vec<_>>(),
            "max_tokens": request.max_tokens,
            "temperature": request.temperature,
        });
        let mut headers = vec![("anthropic-version", API_VERSION)];
        if let Some(key) = &self.config.api_key {
            headers.push(("x-api-key", key.as_str()));
        }
        let answer = post_json(&self.agent, self.config.timeout, &url, &headers, &body)?;
        let blocks = answer.get("content").and_then(Value::as_array).ok_or_else(|| {
            LlmError::InvalidResponse { url: url.clone(), reason: "no content blocks".into() }
        })?;
        let text: String = blocks
            .iter()
            .filter(|b| b.get("type").and_then(Value::as_str) == Some("text"))
            .filter_map(|b| b.get("text").and_then(Value::as_str))
            .collect();
        let count = |path: &str| answer.pointer(path).and_then(Value::as_u64).unwrap_or(0);
        Ok(ChatResponse {
            text,
            usage: Usage {
                input_tokens: count("/usage/input_tokens"),
                output_tokens: count("/usage/output_tokens"),
            },
            model: answer
                .get("model")
                .and_then(Value::as_str)
                .unwrap_or(&self.config.model)
                .to_string(),
        })
    }

    fn describe(&self) -> String {
        format!("anthropic {} at {}", self.config.model, self.config.base_url)
    }
}
