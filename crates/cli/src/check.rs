//! `schemascope check`: loads every source of a configuration file, as `serve` would, and says
//! per source what works — so a wrong path, URI or password is found before a client connects.

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::{Context, Result};
use schemascope_sources::NoProgress;

use crate::config::{self, Config};

/// Checks the configuration at `file` (or where `serve` finds one); fails when any source
/// does not load.
pub(crate) fn check(file: Option<PathBuf>) -> Result<ExitCode> {
    let file = file.or_else(config::default_path).with_context(|| {
        format!(
            "no configuration file: give --config FILE, set ${}, or put {} here or in ~/.config/schemascope/",
            config::PATH_VARIABLE,
            config::FILE_NAME
        )
    })?;
    let config = Config::load(&file)?;
    println!("{}: {} source(s)", file.display(), config.sources.len());
    let mut failed = 0;
    match config.server.http {
        Some(addr) => {
            // The checks `serve` makes before it listens: the token, and the address it needs one for.
            let exposure = crate::exposure::ExposureArgs::default().or_config(&config.server);
            let ready =
                exposure.http_options().and_then(|options| Ok(options.check_address(addr)?));
            match ready {
                Ok(()) => {
                    let token = config.server.token.is_some() || config.server.token_file.is_some();
                    println!(
                        "  server: streamable HTTP on http://{addr}/mcp, {}",
                        if token { "with a token" } else { "without a token" }
                    );
                }
                Err(error) => {
                    failed += 1;
                    println!("  FAILED  server ([server] http, token, token_file): {error}");
                }
            }
        }
        None => println!("  server: stdio (the client starts it)"),
    }
    let services = crate::new_services();
    for source in &config.sources {
        let name = &source.spec.name;
        match services.sources.load(std::slice::from_ref(&source.spec), &NoProgress) {
            Ok(()) => {
                let loaded = services.sources.get(Some(name))?;
                let collections = loaded.collections.len();
                // Not a count: past a thousand skipped lines, one warning counts the rest.
                let warned = !loaded.warnings.is_empty();
                print!(
                    "  ok      {name} ({}): {collections} collection(s)",
                    format!("{:?}", loaded.format).to_lowercase()
                );
                if warned {
                    print!(", with warnings (`schemascope sources SOURCE` lists them)");
                }
                println!();
            }
            Err(error) => {
                failed += 1;
                println!("  FAILED  {name} ({}): {error}", source.spec.display_text());
            }
        }
        if source.spec.description.is_none() {
            println!("          no description: the model sees only names and figures");
        }
        if let Some(dir) = &source.docs
            && !dir.is_dir()
        {
            println!("          docs directory {} does not exist", dir.display());
        }
    }
    // What a client is offered: the tools these sources use, as chosen by `tools = [...]`.
    services.choose_tools(config.server.tools.clone());
    if let Err(error) =
        crate::aimdb_access::AimdbAccessArgs::default().apply(&config.server, &services)
    {
        failed += 1;
        println!("  FAILED  AimDB directories or write log: {error:#}");
    }
    let list = schemascope_tools::tool_table::tool_list(&services, false);
    println!(
        "  tools: {} listed, {} tokens of definitions on every turn{}",
        list.data["count"],
        list.data["tokens"],
        list.data["chosen"].as_str().map(|c| format!(" (tools = {c})")).unwrap_or_default()
    );
    if failed > 0 {
        println!("{failed} check(s) failed.");
        return Ok(ExitCode::FAILURE);
    }
    println!("Every source loads.");
    Ok(ExitCode::SUCCESS)
}
