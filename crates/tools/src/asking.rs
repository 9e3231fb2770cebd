//! What the `ask` pipeline needs besides the data: the LLM it calls, the file its traces go to,
//! and its metrics.

use std::path::PathBuf;
use std::sync::Mutex;

use schemascope_agent::llm::LlmConfig;
use schemascope_core::sync::lock;

use crate::metrics::Metrics;
use crate::result::ToolError;

/// The `ask` pipeline's LLM, trace file and metrics.
#[derive(Debug, Default)]
pub struct Asking {
    llm: Mutex<Option<LlmConfig>>,
    trace_file: Mutex<Option<PathBuf>>,
    metrics: Metrics,
}

impl Asking {
    /// Sets the LLM the `ask` pipeline calls (else it is configured from the environment).
    pub fn set_llm(&self, config: Option<LlmConfig>) {
        *lock(&self.llm) = config;
    }

    /// The LLM configuration: the one set, else from the environment.
    pub fn llm(&self) -> Result<LlmConfig, ToolError> {
        if let Some(config) = lock(&self.llm).clone() {
            return Ok(config);
        }
        LlmConfig::from_env(|name| std::env::var(name).ok())
            .map_err(|e| ToolError::InvalidParams(e.to_string()))
    }

    /// Appends every `ask` run's trace to `path`, one JSON object per line.
    pub fn set_trace_file(&self, path: Option<PathBuf>) {
        *lock(&self.trace_file) = path;
    }

    /// Appends one line to the trace file, if one is set; a write failure is logged, not fatal.
    pub fn write_trace(&self, line: &serde_json::Value) {
        let Some(path) = lock(&self.trace_file).clone() else { return };
        // Opened without blocking and only as a regular file: a FIFO or device named as the
        // trace file must not stall or feed the pipeline.
        let written = schemascope_sources::file::open_append_regular(&path)
            .map_err(|e| e.to_string())
            .and_then(|mut file| {
                use std::io::Write;
                writeln!(file, "{line}").map_err(|e| e.to_string())
            });
        if let Err(error) = written {
            tracing::warn!(path = %path.display(), %error, "cannot write the trace file");
        }
    }

    /// The pipeline metrics.
    pub fn metrics(&self) -> &Metrics {
        &self.metrics
    }
}
