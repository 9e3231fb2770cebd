//! The prompts: `schema_system_prompt`, the schema of one or every source as a system prompt;
//! and, where AimDB records are served, `aimdb_guidance`, how to set them (see
//! `schemascope_tools::aimdb_guidance`).

use rmcp::{
    ErrorData as McpError,
    model::{GetPromptResult, JsonObject, Prompt, PromptArgument, PromptMessage, Role},
};
use schemascope_tools::{Services, SystemPromptParams, ToolError};
use serde_json::{Value, json};

/// The prompt's name.
pub(crate) const PROMPT_NAME: &str = "schema_system_prompt";

/// The AimDB guidance prompt's name.
pub(crate) const AIMDB_PROMPT_NAME: &str = "aimdb_guidance";

/// The prompts a server over `services` lists.
pub(crate) fn listed(services: &Services) -> Vec<Prompt> {
    let mut prompts = vec![prompt()];
    if schemascope_tools::aimdb_guidance::served(&services.sources) {
        prompts.push(aimdb_prompt());
    }
    prompts
}

/// The AimDB guidance prompt's definition.
fn aimdb_prompt() -> Prompt {
    Prompt::new(
        AIMDB_PROMPT_NAME,
        Some(
            "How to read and set AimDB records: units in field names, asking when a unit or id is unclear, \
             the example as a template, every required field, the timestamp unit the data uses.",
        ),
        Some(vec![
            PromptArgument::new("source")
                .with_description("An AimDB source, for the timestamp units its values use (default: the only one).")
                .with_required(false),
        ]),
    )
    .with_title("Working with AimDB records")
}

/// The prompt's definition.
pub(crate) fn prompt() -> Prompt {
    Prompt::new(
        PROMPT_NAME,
        Some(
            "A system prompt describing the data: the schema summary of a source (or of every source) \
             and how to use the schemascope tools.",
        ),
        Some(vec![
            PromptArgument::new("source").with_description("Source name (default: every source served).").with_required(false),
            PromptArgument::new("max_tokens")
                .with_description("Token budget for the schema section, a whole number (e.g. 1500).")
                .with_required(false),
        ]),
    )
    .with_title("Schema system prompt")
}

/// Reads a prompt argument that may arrive as a string (the MCP norm) or as a JSON value.
fn text_argument(name: &str, value: &Value) -> Result<Option<String>, McpError> {
    match value {
        Value::Null => Ok(None),
        Value::String(s) if s.trim().is_empty() => Ok(None),
        Value::String(s) => Ok(Some(s.trim().to_string())),
        Value::Number(n) => Ok(Some(n.to_string())),
        other => Err(McpError::invalid_params(
            format!("prompt argument `{name}` must be a string, not {other}"),
            Some(json!({ "argument": name })),
        )),
    }
}

/// Parses the prompt's arguments into the tool parameters.
fn parse(arguments: Option<JsonObject>) -> Result<SystemPromptParams, McpError> {
    let mut params = SystemPromptParams::default();
    for (key, value) in arguments.unwrap_or_default() {
        match key.as_str() {
            "source" => params.source = text_argument(&key, &value)?,
            "max_tokens" => {
                params.max_tokens = match text_argument(&key, &value)? {
                    None => None,
                    Some(text) => Some(text.parse::<usize>().map_err(|_| {
                        McpError::invalid_params(
                            format!("prompt argument `max_tokens` must be a whole number of tokens, not `{text}`"),
                            Some(json!({ "argument": "max_tokens" })),
                        )
                    })?),
                }
            }
            other => {
                return Err(McpError::invalid_params(
                    format!("unknown prompt argument `{other}`; `{PROMPT_NAME}` accepts `source` and `max_tokens`"),
                    Some(json!({ "argument": other, "accepted": ["source", "max_tokens"] })),
                ));
            }
        }
    }
    Ok(params)
}

/// Renders the prompt.
pub(crate) async fn get(
    services: Services,
    name: &str,
    arguments: Option<JsonObject>,
) -> Result<GetPromptResult, McpError> {
    let available: Vec<String> = listed(&services).iter().map(|p| p.name.to_string()).collect();
    if name == AIMDB_PROMPT_NAME && available.iter().any(|a| a == AIMDB_PROMPT_NAME) {
        return aimdb(services, arguments).await;
    }
    if name != PROMPT_NAME {
        return Err(McpError::invalid_params(
            format!("Unknown prompt `{name}`. Available prompts: {}", available.join(", ")),
            Some(json!({ "prompt": name, "available": available })),
        ));
    }
    let params = parse(arguments)?;
    let description = match &params.source {
        Some(source) => format!("Schema of `{source}` as a system prompt"),
        None => "Schema of every source as a system prompt".to_string(),
    };
    let text = tokio::task::spawn_blocking(move || {
        schemascope_tools::system_prompt(&services.sources, params)
    })
    .await
    .map_err(|error| {
        McpError::internal_error(format!("rendering the prompt failed unexpectedly: {error}"), None)
    })?
    .map_err(|error| match error {
        ToolError::UnknownSource(_) | ToolError::InvalidParams(_) => {
            McpError::invalid_params(error.to_string(), Some(json!({ "error": error.kind() })))
        }
        other => {
            McpError::internal_error(other.to_string(), Some(json!({ "error": other.kind() })))
        }
    })?;
    Ok(GetPromptResult::new(vec![PromptMessage::new_text(Role::User, text)])
        .with_description(description))
}

/// Renders `aimdb_guidance`: the advice, with the timestamps of the source named (or of the only
/// AimDB source).
async fn aimdb(
    services: Services,
    arguments: Option<JsonObject>,
) -> Result<GetPromptResult, McpError> {
    let mut source = None;
    for (key, value) in arguments.unwrap_or_default() {
        match key.as_str() {
            "source" => source = text_argument(&key, &value)?,
            other => {
                return Err(McpError::invalid_params(
                    format!(
                        "unknown prompt argument `{other}`; `{AIMDB_PROMPT_NAME}` accepts `source`"
                    ),
                    Some(json!({ "argument": other, "accepted": ["source"] })),
                ));
            }
        }
    }
    let text = tokio::task::spawn_blocking(move || {
        let live: Vec<_> =
            services.sources.sources().into_iter().filter(|s| s.aimdb.is_some()).collect();
        let chosen = match &source {
            Some(name) => Some(services.sources.get(Some(name)).map_err(|error| {
                McpError::invalid_params(error.to_string(), Some(json!({ "error": error.kind() })))
            })?),
            None if live.len() == 1 => live.into_iter().next(),
            None => None,
        };
        Ok::<_, McpError>(schemascope_tools::aimdb_guidance::section(chosen.as_deref()))
    })
    .await
    .map_err(|error| {
        McpError::internal_error(format!("rendering the prompt failed unexpectedly: {error}"), None)
    })??;
    Ok(GetPromptResult::new(vec![PromptMessage::new_text(Role::User, text)])
        .with_description("Working with AimDB records"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn arguments_parse_from_strings() {
        let mut arguments = JsonObject::new();
        arguments.insert("source".into(), json!("infrastructure"));
        arguments.insert("max_tokens".into(), json!("500"));
        let params = parse(Some(arguments)).unwrap_or_default();
        assert_eq!(params.source.as_deref(), Some("infrastructure"));
        assert_eq!(params.max_tokens, Some(500));
    }

    #[test]
    fn bad_max_tokens_is_named() {
        let mut arguments = JsonObject::new();
        arguments.insert("max_tokens".into(), json!("lots"));
        let Err(error) = parse(Some(arguments)) else { panic!("must fail") };
        assert!(error.message.contains("max_tokens"));
    }
}
