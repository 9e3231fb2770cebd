//! OpenAI-compatible chat completions: `POST {base}/chat/completions`.

use serde_json::{Value, json};

use super::{
    ChatRequest, ChatResponse, LlmBackend, LlmConfig, LlmError, Usage, http_agent, post_json,
};

/// A chat-completions server (OpenAI, vLLM, llama.cpp server, Ollama's `/v1`).
#[derive(Debug)]
pub struct OpenAiBackend {
    config: LlmConfig,
    agent: ureq::Agent,
}

impl OpenAiBackend {
    /// A backend for `config` (its provider is not checked).
    pub fn new(config: LlmConfig) -> Self {
        let agent = http_agent(config.timeout);
        Self { config, agent }
    }
}

impl LlmBackend for OpenAiBackend {
    fn complete(&self, request: &ChatRequest) -> Result<ChatResponse, LlmError> {
        let url = format!("{}/chat/completions", self.config.base_url.trim_end_matches('/'));
        let mut messages = vec![json!({"role": "system", "content": request.system})];
        messages
            .extend(request.messages.iter().map(|m| json!({"role": m.role, "content": m.content})));
        let mut body = json!({
            "model": self.config.model,
            "messages": messages,
            "max_tokens": request.max_tokens,
            "temperature": request.temperature,
        });
        if request.json {
            body["response_format"] = json!({"type": "json_object"});
        }
        let bearer = self.config.api_key.as_ref().map(|k| format!("Bearer {k}"));
        let headers: Vec<(&str, &str)> =
            bearer.iter().map(|b| ("Authorization", b.as_str())).collect();
        let answer = post_json(&self.agent, self.config.timeout, &url, &headers, &body)?;
        let invalid = |reason: &str| LlmError::InvalidResponse {
            url: url.clone(),
            reason: reason.to_string(),
        };
        let text = answer
            .pointer("/choices/0/message/content")
            .and_then(Value::as_str)
            .ok_or_else(|| invalid("no choices[0].message.content"))?;
        let count = |path: &str| answer.pointer(path).and_then(Value::as_u64).unwrap_or(0);
        Ok(ChatResponse {
            text: text.to_string(),
            usage: Usage {
                input_tokens: count("/usage/prompt_tokens"),
                output_tokens: count("/usage/completion_tokens"),
            },
            model: answer
                .get("model")
                .and_then(Value::as_str)
                .unwrap_or(&self.config.model)
                .to_string(),
        })
    }

    fn describe(&self) -> String {
        format!("openai-compatible {} at {}", self.config.model, self.config.base_url)
    }
}
