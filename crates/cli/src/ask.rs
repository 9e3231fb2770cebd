//! `schemascope ask`: the question-to-query pipeline from the shell, with each step shown live on
//! standard error, and the LLM chosen by flags over the environment.

use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use anyhow::{Context, Result};
use schemascope_agent::graph::HistoryTurn;
use schemascope_agent::graph::Phase;
use schemascope_agent::llm::LlmConfig;
use schemascope_tools::{AskParams, Recorded, Services};

/// Which LLM to call (each flag overrides its environment variable).
#[derive(clap::Args, Clone, Default)]
pub(crate) struct LlmArgs {
    /// openai (any OpenAI-compatible server: vLLM, llama.cpp, Ollama) or anthropic
    /// [env: SCHEMASCOPE_LLM_PROVIDER].
    #[arg(long, value_name = "PROVIDER")]
    llm_provider: Option<String>,
    /// Base URL, e.g. http://127.0.0.1:11434/v1 [env: OPENAI_BASE_URL / ANTHROPIC_BASE_URL].
    #[arg(long, value_name = "URL")]
    llm_base_url: Option<String>,
    /// Model name [env: SCHEMASCOPE_LLM_MODEL].
    #[arg(long, value_name = "NAME")]
    llm_model: Option<String>,
    /// Seconds to wait for one answer [env: SCHEMASCOPE_LLM_TIMEOUT; default 120].
    #[arg(long, value_name = "SECONDS")]
    llm_timeout: Option<u64>,
}

impl LlmArgs {
    /// Applies the flags (over the environment) to `services`, when any is given.
    pub(crate) fn apply(&self, services: &Services) -> Result<()> {
        if self.llm_provider.is_none()
            && self.llm_base_url.is_none()
            && self.llm_model.is_none()
            && self.llm_timeout.is_none()
        {
            return Ok(());
        }
        let provider = self.llm_provider.clone();
        let model = self.llm_model.clone();
        let timeout = self.llm_timeout.map(|t| t.to_string());
        let mut config = LlmConfig::from_env(|name| match name {
            "SCHEMASCOPE_LLM_PROVIDER" if provider.is_some() => provider.clone(),
            "SCHEMASCOPE_LLM_MODEL" if model.is_some() => model.clone(),
            "SCHEMASCOPE_LLM_TIMEOUT" if timeout.is_some() => timeout.clone(),
            other => std::env::var(other).ok(),
        })?;
        if let Some(url) = &self.llm_base_url {
            config.base_url = url.clone();
        }
        if let Some(seconds) = self.llm_timeout {
            config.timeout = Duration::from_secs(seconds.max(1));
        }
        services.asking.set_llm(Some(config));
        Ok(())
    }
}

/// Runs one question and prints the answer (within `max_result_bytes`, as every surface); steps
/// go to standard error as they happen.
pub(crate) fn run(
    services: &Services,
    source: String,
    question: String,
    history: Option<PathBuf>,
    json: bool,
    max_result_bytes: usize,
) -> Result<ExitCode> {
    let history: Option<Vec<HistoryTurn>> = match history {
        None => None,
        Some(path) => {
            let text = schemascope_sources::file::read_small_string(&path)?;
            Some(
                parse_history(&text)
                    .with_context(|| format!("{}: not a history (a JSON array of {{question, answer, query?, shown_entities?}})", path.display()))?,
            )
        }
    };
    let mut stderr = std::io::stderr();
    let result = schemascope_tools::ask_with(
        services,
        AskParams { source: Some(source.clone()), question: question.clone(), history },
        &mut |event| {
            if event.phase == Phase::Enter {
                let _ = writeln!(stderr, "· {}", event.current_thought);
            } else if let Some(error) = &event.error {
                let _ = writeln!(stderr, "  ✗ {}: {error}", event.node.name());
            }
        },
    )
    // The same cap as the MCP and HTTP surfaces, so the CLI shows what a model would get.
    .capped(max_result_bytes);
    if json {
        println!("{}", serde_json::to_string_pretty(&result)?);
    } else {
        println!("\n{}", result.message);
        if let Some(query) = result.data.get("query").filter(|q| !q.is_null()) {
            println!(
                "\nquery: {}",
                query.as_str().map_or_else(|| query.to_string(), str::to_string)
            );
        }
        let rows = result.data.get("rows").and_then(|r| r.as_array()).map_or(0, Vec::len);
        if rows > 0 {
            println!("rows: {rows} (--json shows them)");
        }
    }
    // A JSON answer is for a program: nobody is there to confirm.
    if result.success
        && !json
        && let Some(sql) = result.data.get("query").and_then(|q| q.as_str())
    {
        offer_to_record(services, &source, &question, sql)?;
    }
    Ok(if result.success { ExitCode::SUCCESS } else { ExitCode::FAILURE })
}

/// With `--record-examples`, asks on the terminal whether the answer is right and, if the
/// person says yes, records the question and its SQL as a verified example.
fn offer_to_record(services: &Services, source: &str, question: &str, sql: &str) -> Result<()> {
    let Some(file) = services.docs.record_file() else { return Ok(()) };
    eprint!("\nIs this answer right? Record the question and its SQL in {} [y/N] ", file.display());
    let _ = std::io::stderr().flush();
    let mut answer = String::new();
    // No answer (end of input) is a no.
    std::io::stdin().read_line(&mut answer)?;
    if !matches!(answer.trim().to_ascii_lowercase().as_str(), "y" | "yes") {
        eprintln!("Not recorded.");
        return Ok(());
    }
    let served = services.sources.get(Some(source))?;
    match schemascope_tools::record_confirmed(&services.docs, &served, question, sql)? {
        Recorded::Added => eprintln!("Recorded in {}.", file.display()),
        Recorded::AddedNotUsed(why) => eprintln!("Recorded in {}, but {why}.", file.display()),
        Recorded::AlreadyKnown(place) => {
            eprintln!("Already a verified example ({place}); nothing recorded.")
        }
    }
    Ok(())
}

fn parse_history(text: &str) -> serde_json::Result<Vec<HistoryTurn>> {
    serde_json::from_str(text)
}
