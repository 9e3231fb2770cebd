//! JSON answers: the object is taken from the model's text (fenced or bare, with prose around it
//! tolerated); if there is none, the model is asked once more, told what was wrong.

use serde_json::Value;

use super::{ChatMessage, ChatRequest, LlmBackend, LlmError, Usage};

/// A parsed JSON answer.
#[derive(Debug, Clone, PartialEq)]
pub struct JsonAnswer {
    /// The object.
    pub value: Value,
    /// The text it came from.
    pub text: String,
    /// Tokens of every call it took.
    pub usage: Usage,
    /// True when the first answer was not JSON and the model was asked again.
    pub reasked: bool,
}

/// The JSON object in `text`: the whole text, a ```json fence, or the outermost `{…}`.
pub fn extract_json(text: &str) -> Result<Value, String> {
    let trimmed = text.trim();
    if let Ok(value @ Value::Object(_)) = serde_json::from_str::<Value>(trimmed) {
        return Ok(value);
    }
    let fenced = trimmed
        .split("```")
        .skip(1)
        .step_by(2)
        .map(|block| block.trim_start_matches("json").trim());
    for block in fenced {
        if let Ok(value @ Value::Object(_)) = serde_json::from_str::<Value>(block) {
            return Ok(value);
        }
    }
    let (Some(start), Some(end)) = (trimmed.find('{'), trimmed.rfind('}')) else {
        return Err("no JSON object in the answer".into());
    };
    if end < start {
        return Err("no JSON object in the answer".into());
    }
    match serde_json::from_str::<Value>(&trimmed[start..=end]) {
        Ok(value @ Value::Object(_)) => Ok(value),
        Ok(_) => Err("the answer is JSON but not an object".into()),
        Err(e) => Err(format!("invalid JSON: {e}")),
    }
}

/// Asks `backend` for a JSON object; when the answer has none, asks once more with the parse
/// error, then gives up with [`LlmError::InvalidJson`].
pub fn complete_json(
    backend: &dyn LlmBackend,
    request: &ChatRequest,
) -> Result<JsonAnswer, LlmError> {
    let first = backend.complete(request)?;
    let mut usage = first.usage;
    let reason = match extract_json(&first.text) {
        Ok(value) => return Ok(JsonAnswer { value, text: first.text, usage, reasked: false }),
        Err(reason) => reason,
    };
    let mut again = request.clone();
    again.messages.push(ChatMessage::assistant(first.text));
    again
        .messages
        .push(ChatMessage::user(format!("Your answer could not be used: {reason}. Reply with only the JSON object, no prose and no code fence.")));
    let second = backend.complete(&again)?;
    usage += second.usage;
    match extract_json(&second.text) {
        Ok(value) => Ok(JsonAnswer { value, text: second.text, usage, reasked: true }),
        Err(reason) => Err(LlmError::InvalidJson { reason, text: second.text }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_the_object_bare_fenced_or_wrapped_in_prose() {
        assert_eq!(extract_json(r#"{"a": 1}"#), Ok(serde_json::json!({"a": 1})));
        assert_eq!(
            extract_json("Here it is:\n```json\n{\"a\": [1, 2]}\n```\nDone."),
            Ok(serde_json::json!({"a": [1, 2]}))
        );
        assert_eq!(
            extract_json("Sure! {\"query\": \"SELECT 1\"} Hope that helps."),
            Ok(serde_json::json!({"query": "SELECT 1"}))
        );
        assert!(extract_json("SELECT * FROM t").unwrap_err().contains("no JSON object"));
        assert!(extract_json("{\"a\": }").unwrap_err().contains("invalid JSON"));
        assert!(extract_json("[1, 2]").is_err());
    }
}
