//! Which LLM to call: provider, base URL, model and key, from the environment or flags.

use std::time::Duration;

use super::{AnthropicBackend, LlmBackend, LlmError, OpenAiBackend};

/// The API an LLM server speaks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Provider {
    /// OpenAI-compatible chat completions (`POST {base}/chat/completions`): OpenAI, vLLM,
    /// llama.cpp server, Ollama.
    OpenAi,
    /// Anthropic messages (`POST {base}/v1/messages`).
    Anthropic,
}

impl std::str::FromStr for Provider {
    type Err = LlmError;

    fn from_str(text: &str) -> Result<Self, Self::Err> {
        match text.to_ascii_lowercase().as_str() {
            "openai" | "openai-compatible" | "vllm" | "ollama" | "llama.cpp" | "llamacpp" => {
                Ok(Self::OpenAi)
            }
            "anthropic" | "claude" => Ok(Self::Anthropic),
            other => Err(LlmError::Config(format!(
                "unknown provider `{other}`; use openai (any OpenAI-compatible server) or anthropic"
            ))),
        }
    }
}

/// Everything needed to build a backend.
#[derive(Debug, Clone, PartialEq)]
pub struct LlmConfig {
    /// The API.
    pub provider: Provider,
    /// Base URL (OpenAI-compatible: up to `/v1`; Anthropic: the host).
    pub base_url: String,
    /// The model name.
    pub model: String,
    /// The API key, when the server needs one.
    pub api_key: Option<String>,
    /// Longest wait for one answer.
    pub timeout: Duration,
}

/// Default seconds to wait for an answer.
pub(super) const DEFAULT_TIMEOUT_S: u64 = 120;

impl LlmConfig {
    /// From the environment: `SCHEMASCOPE_LLM_PROVIDER` (openai or anthropic; default: anthropic
    /// when only `ANTHROPIC_API_KEY` is set, else openai), `SCHEMASCOPE_LLM_MODEL`,
    /// `SCHEMASCOPE_LLM_TIMEOUT` (seconds), and per provider `OPENAI_BASE_URL` / `OPENAI_API_KEY`
    /// or `ANTHROPIC_BASE_URL` / `ANTHROPIC_API_KEY`. `lookup` reads a variable (tests pass their own).
    pub fn from_env(lookup: impl Fn(&str) -> Option<String>) -> Result<Self, LlmError> {
        let provider = match lookup("SCHEMASCOPE_LLM_PROVIDER") {
            Some(name) => name.parse()?,
            None if lookup("ANTHROPIC_API_KEY").is_some() && lookup("OPENAI_API_KEY").is_none() => {
                Provider::Anthropic
            }
            None => Provider::OpenAi,
        };
        let (base_var, key_var, default_base) = match provider {
            Provider::OpenAi => ("OPENAI_BASE_URL", "OPENAI_API_KEY", "https://api.openai.com/v1"),
            Provider::Anthropic => {
                ("ANTHROPIC_BASE_URL", "ANTHROPIC_API_KEY", "https://api.anthropic.com")
            }
        };
        // A blank name is no model: sending "" would only fail at the first question.
        let model = lookup("SCHEMASCOPE_LLM_MODEL").filter(|m| !m.trim().is_empty()).ok_or_else(|| {
            LlmError::Config("set SCHEMASCOPE_LLM_MODEL to the model name (e.g. gpt-4o-mini, claude-sonnet-4-5, or your local server's model)".into())
        })?;
        let timeout = match lookup("SCHEMASCOPE_LLM_TIMEOUT") {
            None => DEFAULT_TIMEOUT_S,
            Some(text) => text.trim().parse().map_err(|_| {
                LlmError::Config(format!(
                    "SCHEMASCOPE_LLM_TIMEOUT=`{text}` is not a number of seconds"
                ))
            })?,
        };
        Ok(Self {
            provider,
            base_url: lookup(base_var).unwrap_or_else(|| default_base.to_string()),
            model,
            api_key: lookup(key_var).filter(|k| !k.is_empty()),
            timeout: Duration::from_secs(timeout.max(1)),
        })
    }

    /// The backend this configuration describes.
    pub fn backend(&self) -> Box<dyn LlmBackend> {
        match self.provider {
            Provider::OpenAi => Box::new(OpenAiBackend::new(self.clone())),
            Provider::Anthropic => Box::new(AnthropicBackend::new(self.clone())),
        }
    }
}
