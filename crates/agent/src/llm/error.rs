//! Why an LLM call failed, with what to check.

use thiserror::Error;

/// An LLM call's failure.
#[derive(Debug, Error)]
pub enum LlmError {
    /// No answer within the timeout.
    #[error(
        "{url}: no answer within {seconds} s (the model is slow or the server hangs; raise the timeout or check the server)"
    )]
    Timeout {
        /// The endpoint.
        url: String,
        /// The timeout.
        seconds: u64,
    },
    /// The server could not be reached.
    #[error("{url}: cannot connect ({reason}); is the LLM server running at that base URL?")]
    Connection {
        /// The endpoint.
        url: String,
        /// The transport's reason.
        reason: String,
    },
    /// The server answered with an error status.
    #[error("{url}: HTTP {status}: {body}{hint}", hint = status_hint(*status))]
    Status {
        /// The endpoint.
        url: String,
        /// The HTTP status.
        status: u16,
        /// The provider's error message.
        body: String,
    },
    /// The answer is not in the API's format.
    #[error("{url}: unexpected answer: {reason}")]
    InvalidResponse {
        /// The endpoint.
        url: String,
        /// What was wrong.
        reason: String,
    },
    /// The model's text was not the JSON asked for, twice.
    #[error("the model did not answer with valid JSON after a re-ask: {reason}")]
    InvalidJson {
        /// The parse error of the last answer.
        reason: String,
        /// The last answer's text.
        text: String,
    },
    /// The configuration is incomplete.
    #[error("LLM configuration: {0}")]
    Config(String),
    /// The call was cancelled (its time was up, or its client went away) before the model was
    /// asked again.
    #[error("the call was stopped before the model was asked: {0}")]
    Cancelled(String),
}

fn status_hint(status: u16) -> &'static str {
    match status {
        401 | 403 => " (check the API key)",
        404 => " (check the base URL and the model name)",
        429 => " (rate limited: wait and retry)",
        500..=599 => " (the LLM server failed; retry later)",
        _ => "",
    }
}

impl LlmError {
    /// A transport failure, as a timeout or a connection error.
    pub(crate) fn from_transport(
        url: &str,
        timeout: std::time::Duration,
        error: ureq::Error,
    ) -> Self {
        match error {
            ureq::Error::Timeout(_) => {
                Self::Timeout { url: url.to_string(), seconds: timeout.as_secs() }
            }
            // Something answered, but not with HTTP: the base URL points at another service.
            ureq::Error::Protocol(_) | ureq::Error::LargeResponseHeader(..) => {
                Self::InvalidResponse {
                    url: url.to_string(),
                    reason: format!(
                        "not an HTTP answer ({error}); check that the base URL points at the LLM server"
                    ),
                }
            }
            other => Self::Connection { url: url.to_string(), reason: other.to_string() },
        }
    }

    /// A failure while reading an answer's body (the connection was open: not a connect error).
    pub(crate) fn from_body(url: &str, timeout: std::time::Duration, error: ureq::Error) -> Self {
        match error {
            ureq::Error::Timeout(_) => {
                Self::Timeout { url: url.to_string(), seconds: timeout.as_secs() }
            }
            other => Self::InvalidResponse {
                url: url.to_string(),
                reason: format!(
                    "the answer was cut off or unreadable ({other}); retry, and check the server (or a proxy in between)"
                ),
            },
        }
    }

    /// True when the same request may succeed if sent again (timeouts, 429, 5xx, connection).
    pub fn is_transient(&self) -> bool {
        match self {
            Self::Timeout { .. } | Self::Connection { .. } => true,
            Self::Status { status, .. } => *status == 429 || *status >= 500,
            _ => false,
        }
    }
}
