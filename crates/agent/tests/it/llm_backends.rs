//! The LLM backends against a local server speaking the real wire formats: request shapes,
//! headers, usage, JSON re-ask, error statuses, garbage, hangs and dead servers; and against a
//! server below HTTP: answers cut off, mislabelled, not HTTP at all, or never sent.

use std::time::{Duration, Instant};

use schemascope_agent::llm::{
    ChatMessage, ChatRequest, LlmConfig, LlmError, Provider, complete_json,
};
use schemascope_agent::replay::{RawServer, ReplayServer, Scripted};
use serde_json::json;

fn config(provider: Provider, server: &ReplayServer, timeout: Duration) -> LlmConfig {
    let base_url = match provider {
        Provider::OpenAi => format!("{}/v1", server.url()),
        Provider::Anthropic => server.url().to_string(),
    };
    LlmConfig {
        provider,
        base_url,
        model: "test-model".into(),
        api_key: Some("sk-test".into()),
        timeout,
    }
}

fn request(json: bool) -> ChatRequest {
    ChatRequest {
        system: "You write SQL.".into(),
        messages: vec![ChatMessage::user("How many genres?")],
        max_tokens: 500,
        temperature: 0.0,
        json,
    }
}

fn header<'a>(received: &'a schemascope_agent::replay::Received, name: &str) -> Option<&'a str> {
    received.headers.iter().find(|(n, _)| n == name).map(|(_, v)| v.as_str())
}

#[test]
fn openai_compatible_requests_carry_system_messages_key_and_json_mode() {
    let server = ReplayServer::start(vec![Scripted::Text("SELECT COUNT(*) FROM Genre".into())])
        .expect("server");
    let backend = config(Provider::OpenAi, &server, Duration::from_secs(5)).backend();
    let answer = backend.complete(&request(true)).expect("answer");
    assert_eq!(answer.text, "SELECT COUNT(*) FROM Genre");
    assert_eq!((answer.usage.input_tokens, answer.usage.output_tokens), (100, 4));
    assert_eq!(answer.model, "test-model");
    let got = &server.received()[0];
    assert_eq!(got.path, "/v1/chat/completions");
    assert_eq!(header(got, "authorization"), Some("Bearer sk-test"));
    assert_eq!(got.body["messages"][0], json!({"role": "system", "content": "You write SQL."}));
    assert_eq!(got.body["messages"][1], json!({"role": "user", "content": "How many genres?"}));
    assert_eq!(got.body["response_format"], json!({"type": "json_object"}));
    assert_eq!(got.body["model"], "test-model");
}

#[test]
fn anthropic_requests_carry_version_key_and_system_field() {
    let server =
        ReplayServer::start(vec![Scripted::Text("{\"ok\": true}".into())]).expect("server");
    let backend = config(Provider::Anthropic, &server, Duration::from_secs(5)).backend();
    let answer = backend.complete(&request(false)).expect("answer");
    assert_eq!(answer.text, "{\"ok\": true}");
    assert_eq!(answer.usage.output_tokens, 2);
    let got = &server.received()[0];
    assert_eq!(got.path, "/v1/messages");
    assert_eq!(header(got, "x-api-key"), Some("sk-test"));
    assert_eq!(header(got, "anthropic-version"), Some("2023-06-01"));
    assert_eq!(got.body["system"], "You write SQL.");
    assert_eq!(got.body["messages"], json!([{"role": "user", "content": "How many genres?"}]));
    assert_eq!(got.body["max_tokens"], 500);
}

#[test]
fn invalid_json_is_asked_again_once_with_the_reason() {
    for provider in [Provider::OpenAi, Provider::Anthropic] {
        let server = ReplayServer::start(vec![
            Scripted::Text("Sure, here is the query: SELECT 1".into()),
            Scripted::json(json!({"query": "SELECT 1"})),
        ])
        .expect("server");
        let backend = config(provider, &server, Duration::from_secs(5)).backend();
        let answer = complete_json(&*backend, &request(true)).expect("second answer is JSON");
        assert_eq!(answer.value, json!({"query": "SELECT 1"}));
        assert!(answer.reasked);
        assert_eq!(answer.usage.input_tokens, 200, "both calls counted");
        let second = &server.received()[1].body["messages"];
        let last = second.as_array().and_then(|m| m.last()).cloned().unwrap_or_default();
        assert!(last["content"].as_str().unwrap_or_default().contains("no JSON object"), "{last}");
    }
    let server =
        ReplayServer::start(vec![Scripted::Text("nope".into()), Scripted::Text("still no".into())])
            .expect("server");
    let backend = config(Provider::OpenAi, &server, Duration::from_secs(5)).backend();
    match complete_json(&*backend, &request(true)) {
        Err(LlmError::InvalidJson { text, .. }) => assert_eq!(text, "still no"),
        other => panic!("expected InvalidJson, got {other:?}"),
    }
    assert_eq!(server.received().len(), 2, "exactly one re-ask");
}

#[test]
fn error_statuses_garbage_hangs_and_dead_servers_give_clear_errors() {
    let server = ReplayServer::start(vec![
        Scripted::Status(500, "upstream model crashed".into()),
        Scripted::Status(401, "invalid api key".into()),
        Scripted::Garbage,
        Scripted::Hang(Duration::from_secs(3)),
    ])
    .expect("server");
    let backend = config(Provider::OpenAi, &server, Duration::from_secs(1)).backend();
    let first = backend.complete(&request(false)).expect_err("500");
    assert!(matches!(first, LlmError::Status { status: 500, .. }) && first.is_transient());
    assert!(
        first.to_string().contains("upstream model crashed")
            && first.to_string().contains("retry later"),
        "{first}"
    );
    let second = backend.complete(&request(false)).expect_err("401");
    assert!(second.to_string().contains("check the API key") && !second.is_transient(), "{second}");
    let third = backend.complete(&request(false)).expect_err("garbage");
    assert!(
        matches!(third, LlmError::InvalidResponse { .. }) && third.to_string().contains("not JSON"),
        "{third}"
    );
    let fourth = backend.complete(&request(false)).expect_err("hang");
    assert!(matches!(fourth, LlmError::Timeout { seconds: 1, .. }), "{fourth:?}");
    let dead = LlmConfig {
        base_url: "http://127.0.0.1:9/v1".into(),
        ..config(Provider::OpenAi, &server, Duration::from_secs(2))
    };
    let err = dead.backend().complete(&request(false)).expect_err("dead");
    assert!(err.to_string().contains("is the LLM server running"), "{err}");
}

#[test]
fn configuration_comes_from_the_environment_with_clear_errors() {
    let env = |pairs: &'static [(&'static str, &'static str)]| {
        move |name: &str| pairs.iter().find(|(k, _)| *k == name).map(|(_, v)| v.to_string())
    };
    let config = LlmConfig::from_env(env(&[
        ("SCHEMASCOPE_LLM_MODEL", "llama3"),
        ("OPENAI_BASE_URL", "http://127.0.0.1:11434/v1"),
    ]))
    .expect("ollama");
    assert_eq!(
        (config.provider, config.base_url.as_str(), config.api_key.as_deref()),
        (Provider::OpenAi, "http://127.0.0.1:11434/v1", None)
    );
    let config = LlmConfig::from_env(env(&[
        ("SCHEMASCOPE_LLM_MODEL", "claude-sonnet-4-5"),
        ("ANTHROPIC_API_KEY", "k"),
    ]))
    .expect("anthropic");
    assert_eq!(
        (config.provider, config.base_url.as_str()),
        (Provider::Anthropic, "https://api.anthropic.com")
    );
    let err = LlmConfig::from_env(env(&[])).expect_err("no model");
    assert!(err.to_string().contains("SCHEMASCOPE_LLM_MODEL"), "{err}");
    let err = LlmConfig::from_env(env(&[
        ("SCHEMASCOPE_LLM_MODEL", "m"),
        ("SCHEMASCOPE_LLM_PROVIDER", "gemini"),
    ]))
    .expect_err("provider");
    assert!(err.to_string().contains("unknown provider `gemini`"), "{err}");
}

/// An HTTP/1.1 answer with `body`, declaring `declared` bytes (the body's length unless given).
fn http(status: &str, content_type: &str, body: &str, declared: Option<usize>) -> Vec<u8> {
    let length = declared.unwrap_or(body.len());
    format!("HTTP/1.1 {status}\r\nContent-Type: {content_type}\r\nContent-Length: {length}\r\nConnection: close\r\n\r\n{body}").into_bytes()
}

#[test]
fn cut_off_mislabelled_non_http_and_unanswered_replies_give_clear_errors() {
    for provider in [Provider::OpenAi, Provider::Anthropic] {
        let good = match provider {
            Provider::OpenAi => json!({"choices": [{"message": {"role": "assistant", "content": "SELECT 1"}}], "model": "m"}),
            Provider::Anthropic => json!({"content": [{"type": "text", "text": "SELECT 1"}], "model": "m"}),
        }
        .to_string();
        let half = &good[..good.len() / 2];
        let server = RawServer::start(vec![
            http("200 OK", "application/json", half, Some(good.len())),
            http("200 OK", "application/json", half, None),
            http(
                "200 OK",
                "text/html",
                "<html><body>Please sign in to the proxy</body></html>",
                None,
            ),
            b"SSH-2.0-OpenSSH_9.2p1\r\n".to_vec(),
            http("502 Bad Gateway", "text/html", "<html>upstream is down</html>", None),
            http("200 OK", "application/json", r#"{"object": "list", "data": []}"#, None),
            // A correct answer under the wrong content type is still read.
            http("200 OK", "text/plain", &good, None),
        ])
        .expect("server");
        let base_url = match provider {
            Provider::OpenAi => format!("{}/v1", server.url()),
            Provider::Anthropic => server.url().to_string(),
        };
        let config = LlmConfig {
            provider,
            base_url,
            model: "m".into(),
            api_key: None,
            timeout: Duration::from_secs(1),
        };
        let backend = config.backend();
        let next = |what: &str| match backend.complete(&request(false)) {
            Ok(answer) => Ok(answer.text),
            Err(e) => {
                let text = e.to_string();
                assert!(
                    text.contains(server.url()),
                    "{provider:?} {what}: the error names the endpoint: {text}"
                );
                Err(e)
            }
        };
        let cut = next("cut off").expect_err("cut off");
        assert!(
            matches!(cut, LlmError::InvalidResponse { .. }) && cut.to_string().contains("cut off"),
            "{provider:?}: {cut}"
        );
        let truncated = next("truncated JSON").expect_err("truncated JSON");
        assert!(
            truncated.to_string().contains("not JSON") && truncated.to_string().contains("EOF"),
            "{provider:?}: {truncated}"
        );
        let html = next("HTML").expect_err("HTML");
        assert!(
            html.to_string().contains("not JSON")
                && html.to_string().contains("sign in to the proxy"),
            "{provider:?}: {html}"
        );
        let ssh = next("not HTTP").expect_err("not HTTP");
        assert!(
            matches!(ssh, LlmError::InvalidResponse { .. })
                && ssh.to_string().contains("not an HTTP answer"),
            "{provider:?}: {ssh}"
        );
        let gateway = next("502").expect_err("502");
        assert!(
            matches!(gateway, LlmError::Status { status: 502, .. }) && gateway.is_transient(),
            "{provider:?}: {gateway}"
        );
        assert!(
            gateway.to_string().contains("upstream is down")
                && gateway.to_string().contains("retry later"),
            "{provider:?}: {gateway}"
        );
        let shape = next("wrong shape").expect_err("wrong shape");
        assert!(shape.to_string().contains("unexpected answer"), "{provider:?}: {shape}");
        assert_eq!(next("text/plain").expect("a JSON answer labelled text/plain"), "SELECT 1");
        // Past the script the server accepts and never answers: a timeout, not a hang (the
        // bound is far above the 1 s timeout).
        let started = Instant::now();
        let silent = next("silent").expect_err("silent");
        assert!(
            started.elapsed() < Duration::from_secs(20),
            "{provider:?}: the silent server hung the call"
        );
        assert!(
            matches!(silent, LlmError::Timeout { seconds: 1, .. }) && silent.is_transient(),
            "{provider:?}: {silent:?}"
        );
        assert!(silent.to_string().contains("no answer within 1 s"), "{silent}");
    }
}
