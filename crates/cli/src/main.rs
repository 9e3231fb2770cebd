//! The `schemascope` command: CLI equivalents of every MCP tool, `serve` (MCP over stdio or
//! streamable HTTP), `demo`, and `profile` (a full profile report). It parses arguments into the
//! tools' parameters, calls the same functions as the MCP server, and prints the envelope.

mod aimdb_access;
mod aimdb_limits;
mod ask;
mod bus_error;
mod byte_size;
mod check;
mod config;
mod eval;
mod exposure;
mod interrupt;
mod progress;
mod render;
mod retrieval;

use std::net::SocketAddr;
use std::process::ExitCode;

use anyhow::{Context, Result, bail};
use clap::{Parser, Subcommand, ValueEnum};
use schemascope_sources::{ReadMode, SourceSpec, stream_schema};
use schemascope_tools::cap::SeeTheRest;
use schemascope_tools::{self as tools, Services, ToolResult};
use serde_json::{Value, json};

use byte_size::parse_bytes;
use eval::EvalCommand;
use render::View;
use retrieval::RetrievalArgs;

/// An accurate, compact, always-current map of your data for LLMs.
///
/// SOURCE is [NAME=]PATH_OR_URI: a graph JSON file (graphty or networkx node-link), a record set
/// (JSON object of named records, or NDJSON {key, value, metadata?}), documents (JSON array or
/// NDJSON), `graph:`/`records:`/`documents:` to force a format, or `demo:infrastructure` /
/// `demo:sensors` for the embedded demo data.
#[derive(Parser)]
#[command(name = "schemascope", version, about, long_about = None, after_help = "Examples:\n  schemascope demo\n  schemascope describe demo:infrastructure\n  schemascope property demo:infrastructure cpu --bins 5\n  schemascope find demo:infrastructure \"type == 'database'\"\n  schemascope schema demo:sensors server::Temperature\n  schemascope serve --http 127.0.0.1:8750 data/graph.json records=data/sensors.ndjson")]
struct Cli {
    #[command(subcommand)]
    command: Command,
    /// Largest source file read (graph, record or document set, evaluation data), in bytes; a
    /// larger file is refused before it is read [default: 4294967296, 4 GiB].
    #[arg(long, global = true, value_name = "BYTES")]
    max_file_bytes: Option<u64>,
    /// Memory for the statistics of an NDJSON document file profiled by streaming (`profile`,
    /// `describe`, `schema`, `property`; and `serve` for files of 1 GiB or more) and of a CSV or
    /// Parquet file, e.g. 512MiB; past it the heaviest
    /// properties' exact counters are spilled to temporary files (see `--spill-dir`), so every
    /// figure stays exact [default: 96MiB].
    #[arg(long, global = true, value_name = "BYTES", value_parser = parse_bytes)]
    memory_budget: Option<u64>,
    /// Where a streamed profile spills counters past its memory budget: unnamed temporary
    /// files, readable by you only, gone when the profile is finished or the process ends
    /// [default: $TMPDIR, else /tmp].
    #[arg(long, global = true, value_name = "DIR", conflicts_with = "no_spill")]
    spill_dir: Option<std::path::PathBuf>,
    /// Most bytes one streamed profile writes to temporary files, e.g. 8GiB; past it the
    /// properties left are estimated, and the output says so [default: 32GiB].
    #[arg(long, global = true, value_name = "BYTES", value_parser = parse_bytes, conflicts_with = "no_spill")]
    spill_cap: Option<u64>,
    /// Never write temporary files: past the memory budget a property's figures become
    /// estimates whose error the output states.
    #[arg(long, global = true)]
    no_spill: bool,
    /// Lower or raise the server-side ceiling on a number callers send (repeatable), e.g.
    /// `--ceiling max_rows=5000 --ceiling max_bytes=4MiB`. A call asking for more is refused
    /// with the ceiling stated; defaults past a lower ceiling are lowered to it. Ceilings:
    /// max_rows (10000), max_bytes (16MiB), timeout_ms (300000), count (100),
    /// max_string_length (100000), limit (50), bins (100), samples (100), window_ms (60000),
    /// top_k (50), max_tokens (1000000), iterations (10000); see SECURITY.md.
    #[arg(long, global = true, value_name = "NAME=N")]
    ceiling: Vec<String>,
    /// Keep database tables' profiles in DIR across runs, reused while a table's data is
    /// unchanged by what its engine says (PostgreSQL's change counters, ClickHouse's parts, a
    /// SQLite file's content) [default: $XDG_CACHE_HOME/schemascope/profiles, else
    /// ~/.cache/schemascope/profiles].
    #[arg(long, global = true, value_name = "DIR", conflicts_with = "no_profile_cache")]
    profile_cache: Option<std::path::PathBuf>,
    /// Profile every database table anew; keep no profile on disk.
    #[arg(long, global = true)]
    no_profile_cache: bool,
}

/// Where database tables' profiles are kept across runs, from the flags (set once in `run`).
static PROFILE_STORE: std::sync::OnceLock<Option<schemascope_sources::ProfileStore>> =
    std::sync::OnceLock::new();

/// Services with the profile store the flags chose.
fn new_services() -> Services {
    let services = Services::new();
    services.sources.set_profile_store(PROFILE_STORE.get().cloned().flatten());
    services
}

#[derive(clap::Args, Clone)]
struct Output {
    /// Print the {success, message, data} envelope as JSON, exactly as the MCP tool returns it.
    #[arg(long)]
    json: bool,
    /// Largest result, in bytes of JSON, as on every surface; a longer one is cut and says so in
    /// `truncated` (raise it to see everything); at least 4096 (a smaller cap is raised to it)
    /// [default: 262144].
    #[arg(long, value_name = "BYTES")]
    max_result_bytes: Option<usize>,
}

/// How many values of a live AimDB record the schema is merged over.
#[derive(clap::Args, Clone, Copy)]
struct LiveSampling {
    /// Live AimDB records: merge over at most this many values (default 20).
    #[arg(long)]
    samples: Option<usize>,
    /// Live AimDB records: wait at most this long for more values (default 1000 ms).
    #[arg(long)]
    window_ms: Option<u64>,
}

#[derive(Clone, Copy, ValueEnum)]
enum Strategy {
    Random,
    Stratified,
    Representative,
}

// Parsed once per run and matched at once: the size of its largest variant (`serve`'s options)
// costs nothing.
#[allow(clippy::large_enum_variant)]
#[derive(Subcommand)]
enum Command {
    /// Schema summary: per collection, per property its type, presence, values, ranges (describe_schema).
    Describe {
        /// The source.
        source: String,
        /// Only this collection (nodes, edges, a record set or document set).
        #[arg(long)]
        collection: Option<String>,
        /// Token budget for the markdown (o200k_base tokens).
        #[arg(long)]
        max_tokens: Option<usize>,
        /// With --json: the markdown rendering (and its token count) instead of the structured summary.
        #[arg(long)]
        markdown: bool,
        #[command(flatten)]
        output: Output,
    },
    /// A few real items (sample_data).
    Sample {
        /// The source.
        source: String,
        /// Collection: nodes, edges, both, a record set or document set (default: all).
        #[arg(long)]
        collection: Option<String>,
        /// Items per collection [default: 3, or the `count` ceiling if lower].
        #[arg(long)]
        count: Option<usize>,
        /// How to choose items.
        #[arg(long, value_enum)]
        strategy: Option<Strategy>,
        /// Property to stratify by (implies --strategy stratified).
        #[arg(long)]
        stratify_by: Option<String>,
        /// Random seed, for a reproducible sample.
        #[arg(long)]
        seed: Option<u64>,
        /// Only values of this record.
        #[arg(long)]
        record: Option<String>,
        #[command(flatten)]
        output: Output,
    },
    /// One property in depth: values, statistics, histogram (describe_property).
    Property {
        /// The source.
        source: String,
        /// Dot path, e.g. type, metadata.category, tags, readings[].v.
        property: String,
        /// Collection (default: nodes for graphs, else the first).
        #[arg(long)]
        collection: Option<String>,
        /// Only values of this record.
        #[arg(long)]
        record: Option<String>,
        /// Most distinct values listed.
        #[arg(long)]
        limit: Option<usize>,
        /// Histogram bins: how many (from 4 bins on, skewed data still gets log-scale or outlier
        /// bins; 1 to 3 are always equal-width).
        #[arg(long)]
        bins: Option<usize>,
        /// Look a value up: stored exactly or not, and the closest stored values.
        #[arg(long, allow_hyphen_values = true)]
        value: Option<String>,
        #[command(flatten)]
        output: Output,
    },
    /// JSON Schema inferred from all values of a record or collection (query_schema).
    Schema {
        /// The source.
        source: String,
        /// A record name or a collection (default: the only record of the first record set, else the
        /// first collection; a record set of several records needs a record name).
        target: Option<String>,
        /// Leave the example value out.
        #[arg(long)]
        no_example: bool,
        #[command(flatten)]
        live: LiveSampling,
        #[command(flatten)]
        output: Output,
    },
    /// Check a proposed value against the inferred schema (validate_value).
    Validate {
        /// The source.
        source: String,
        /// A record name or a collection (a record set of several records needs a record name).
        target: String,
        /// The value as JSON, `@FILE` to read a file, or `-` for standard input (`-5` is the
        /// number).
        #[arg(allow_hyphen_values = true)]
        value: String,
        #[command(flatten)]
        live: LiveSampling,
        #[command(flatten)]
        output: Output,
    },
    /// Items matching a JMESPath selector on their data (find_items).
    Find {
        /// The source.
        source: String,
        /// Selector, e.g. "type == 'server' && cpu > `0.8`".
        selector: String,
        /// Collection (default: nodes for graphs, else the first).
        #[arg(long)]
        collection: Option<String>,
        /// Items shown in full.
        #[arg(long)]
        limit: Option<usize>,
        #[command(flatten)]
        output: Output,
    },
    /// The sources, their collections and load warnings (list_sources).
    Sources {
        /// Sources to load.
        #[arg(required = true)]
        sources: Vec<String>,
        #[command(flatten)]
        output: Output,
    },
    /// The MCP tools a server over these sources lists, and their size in tokens (what every turn of an LLM conversation pays).
    Tools {
        /// Sources to load.
        #[arg(required = true)]
        sources: Vec<String>,
        /// Show each tool's full definition.
        #[arg(long)]
        definitions: bool,
        /// Only these tools, as `serve --tools` offers them.
        #[arg(long, value_name = "NAMES")]
        tools: Option<String>,
        #[command(flatten)]
        llm: ask::LlmArgs,
        #[command(flatten)]
        output: Output,
    },
    /// Full profile: every property described in depth plus the JSON Schema, as one line of JSON.
    Profile {
        /// The source.
        source: String,
        /// Accepted for symmetry; the profile is always JSON.
        #[arg(long)]
        json: bool,
    },
    /// Serve sources over MCP: stdio by default, streamable HTTP at /mcp with --http.
    Serve {
        /// Listen address for streamable HTTP, e.g. 127.0.0.1:8750 (port 0 picks a free one).
        #[arg(long)]
        http: Option<SocketAddr>,
        /// Do not reload sources when their files change.
        #[arg(long)]
        no_watch: bool,
        /// How long a call waits for database tables' profiles before it answers with what is
        /// known (the catalog, row estimates, the columns profiled so far) while the profiles go
        /// on in the background, in milliseconds [default: 2000]; as long for the embedding model
        /// to encode a schema's docs (until then, ranked by words).
        #[arg(long, value_name = "MS")]
        profile_wait: Option<u64>,
        /// The configuration file: sources with descriptions, secrets from the environment, and
        /// the server's settings (see `schemascope init`). Edits apply while serving. Without
        /// it and without SOURCES: $SCHEMASCOPE_CONFIG, ./schemascope.toml, then
        /// ~/.config/schemascope/schemascope.toml.
        // A string, not a path: an empty one (a blank client setting) is accepted as none.
        #[arg(long, value_name = "FILE")]
        config: Option<String>,
        /// Sources to serve, besides the configuration file's.
        sources: Vec<String>,
        #[command(flatten)]
        retrieval: RetrievalArgs,
        #[command(flatten)]
        llm: ask::LlmArgs,
        /// Append every `ask` run's trace to FILE, one JSON object per line.
        #[arg(long, value_name = "FILE")]
        trace_json: Option<std::path::PathBuf>,
        /// Offer only these tools, by name or toolset, comma-separated: discovery (list_sources,
        /// describe_schema, sample_data, describe_property, query_schema, validate_value,
        /// find_items), sql (search_schema_docs, get_schema_context, execute_query,
        /// validate_query, ask, record_example), graph-style (query_graph, find_nodes, find_edges, the style,
        /// selection and algorithm tools), graph-view (set_layout, set_dimension, set_camera,
        /// zoom_to_nodes), all; e.g. `--tools discovery,execute_query`. Others are not listed and
        /// a call to one is refused [default: every tool the sources can use].
        #[arg(long, value_name = "NAMES")]
        tools: Option<String>,
        #[command(flatten)]
        session: SessionFileArgs,
        #[command(flatten)]
        exposure: exposure::ExposureArgs,
        #[command(flatten)]
        aimdb: aimdb_limits::AimdbLimitArgs,
        #[command(flatten)]
        aimdb_access: aimdb_access::AimdbAccessArgs,
    },
    /// The documentation chunks of a SQL source most relevant to a question (search_schema_docs).
    SearchDocs {
        /// The source (sqlite:PATH, a .sqlite/.db file, or a postgres:// URI).
        source: String,
        /// The question.
        question: String,
        /// Chunks to return.
        #[arg(long)]
        top_k: Option<usize>,
        #[command(flatten)]
        retrieval: RetrievalArgs,
        #[command(flatten)]
        output: Output,
    },
    /// The schema context an LLM should get for a question: full or focused (get_schema_context).
    Context {
        /// The source (a SQL database).
        source: String,
        /// The question.
        question: String,
        /// Token budget (o200k_base tokens).
        #[arg(long)]
        max_tokens: Option<usize>,
        /// Chunks to retrieve.
        #[arg(long)]
        top_k: Option<usize>,
        #[command(flatten)]
        retrieval: RetrievalArgs,
        #[command(flatten)]
        output: Output,
    },
    /// Answer a question with the question-to-query pipeline (needs an LLM; see --llm-*).
    Ask {
        /// The source (a SQL database).
        source: String,
        /// The question.
        question: String,
        /// Earlier turns, as a JSON file: [{question, answer, query?, shown_entities?}].
        #[arg(long, value_name = "FILE")]
        history: Option<std::path::PathBuf>,
        /// Append the run's trace (every node, attempts, usage) to FILE as one JSON line.
        #[arg(long, value_name = "FILE")]
        trace_json: Option<std::path::PathBuf>,
        #[command(flatten)]
        llm: ask::LlmArgs,
        #[command(flatten)]
        retrieval: RetrievalArgs,
        #[command(flatten)]
        output: Output,
    },
    /// Check a query against a SQL source without running it (validate_query).
    ValidateQuery {
        /// The source (a SQL database).
        source: String,
        /// SQL text, or a structured query as JSON (`{"fields": [...]}`), or @FILE, or - for stdin.
        #[arg(allow_hyphen_values = true)]
        query: String,
        /// The question the query answers: a wrong column name is then matched by meaning too.
        #[arg(long)]
        question: Option<String>,
        #[command(flatten)]
        retrieval: RetrievalArgs,
        #[command(flatten)]
        output: Output,
    },
    /// Run one read-only SQL statement on a SQL source (execute_query).
    Execute {
        /// The source (a SQL database).
        source: String,
        /// SQL text, or a structured query as JSON (`{"fields": [...]}`), or @FILE, or - for stdin.
        #[arg(allow_hyphen_values = true)]
        query: String,
        /// Most rows returned [default: 1000].
        #[arg(long)]
        max_rows: Option<usize>,
        /// Most bytes of row data returned, as JSON, e.g. 4MiB [default: 1000000].
        #[arg(long, value_name = "BYTES", value_parser = parse_bytes)]
        max_bytes: Option<u64>,
        /// Statement timeout in milliseconds [default: 30000].
        #[arg(long)]
        timeout_ms: Option<u64>,
        #[command(flatten)]
        output: Output,
    },
    /// Schema documentation of a SQL source.
    Docs {
        #[command(subcommand)]
        command: DocsCommand,
    },
    /// Evaluations.
    Eval {
        #[command(subcommand)]
        command: EvalCommand,
    },
    /// Write a starting configuration file for the sources given (descriptions left to fill,
    /// passwords moved out of URIs into environment variables).
    Init {
        /// Sources to put in it.
        sources: Vec<String>,
        /// Where to write it [default: ./schemascope.toml]; `-` prints it.
        #[arg(long, short, value_name = "FILE")]
        output: Option<std::path::PathBuf>,
        /// Replace an existing file.
        #[arg(long)]
        force: bool,
    },
    /// Load every source of a configuration file and say what works.
    Check {
        /// The configuration file [default: as `serve` finds it].
        #[arg(long, value_name = "FILE")]
        config: Option<std::path::PathBuf>,
    },
    /// Serve the embedded demo data over HTTP and print how to connect.
    Demo {
        /// Listen address.
        #[arg(long, default_value = "127.0.0.1:8750")]
        http: SocketAddr,
        /// Serve over stdio instead (for an MCP client that starts the process).
        #[arg(long)]
        stdio: bool,
        #[command(flatten)]
        session: SessionFileArgs,
        #[command(flatten)]
        exposure: exposure::ExposureArgs,
    },
}

/// Where graph sessions (styles, selection, view, layout, algorithm results) are saved.
#[derive(clap::Args)]
struct SessionFileArgs {
    /// SQLite file graph sessions are saved to on every change and restored from
    /// [default: $XDG_STATE_HOME/schemascope/sessions.sqlite, else ~/.local/state/schemascope/sessions.sqlite]
    #[arg(long, value_name = "FILE")]
    session_file: Option<std::path::PathBuf>,
    /// Keep graph sessions in memory only (lost when the server stops).
    #[arg(long, conflicts_with = "session_file")]
    no_session_file: bool,
}

impl SessionFileArgs {
    fn apply(&self, services: &Services) -> Result<()> {
        if self.no_session_file {
            return Ok(());
        }
        let path = match &self.session_file {
            Some(path) => path.clone(),
            None => {
                let state = std::env::var_os("XDG_STATE_HOME")
                    .map(std::path::PathBuf::from)
                    .or_else(|| {
                        std::env::var_os("HOME")
                            .map(|home| std::path::PathBuf::from(home).join(".local").join("state"))
                    });
                match state {
                    Some(dir) => dir.join("schemascope").join("sessions.sqlite"),
                    None => return Ok(()),
                }
            }
        };
        services
            .graphs
            .set_session_file(&path)
            .map_err(|e| anyhow::anyhow!("{e} (use --session-file FILE or --no-session-file)"))
    }
}

#[derive(Subcommand)]
enum DocsCommand {
    /// Write a starting set of docs (`_index.md`, one `<table>.md` per table) from the catalog and
    /// the column profiles, for people to enrich. Files edited since generation are kept.
    Generate {
        /// The source (a SQL database).
        source: String,
        /// Directory to write.
        dir: String,
        /// Overwrite files even if they were edited.
        #[arg(long)]
        force: bool,
        #[command(flatten)]
        output: Output,
    },
}

fn services_for(specs: &[String]) -> Result<Services> {
    let specs: Vec<SourceSpec> = specs.iter().map(|s| s.parse()).collect::<Result<_, _>>()?;
    let services = new_services();
    // A one-shot command answers with whole profiles: it waits for them.
    services.sources.set_profile_patience(None);
    services.sources.load(&specs, &progress::Bar::new())?;
    print_load_warnings(&services);
    progress::watch_table_profiles(&services);
    Ok(services)
}

/// Warnings shown per source before the rest are counted.
const WARNINGS_SHOWN: usize = 10;

/// Tells the user on stderr what loading skipped (bad lines, dangling edges): an answer about
/// a file with skipped lines is about part of it.
fn print_load_warnings(services: &Services) {
    for source in services.sources.sources() {
        print_warnings(&source.spec.display_text(), &source.warnings);
    }
}

/// Prints the warnings of loading the source shown as `shown`: the first few at a place (a
/// line) in full, then every one without a place, as those say what was left out in all (a
/// count of the lines skipped, a file left out of a folder).
fn print_warnings(shown: &str, warnings: &[schemascope_sources::LoadWarning]) {
    if warnings.is_empty() {
        return;
    }
    let (placed, notes): (Vec<_>, Vec<_>) = warnings.iter().partition(|w| w.line.is_some());
    eprintln!("schemascope: warning: {shown} (while loading):");
    for warning in placed.iter().take(WARNINGS_SHOWN) {
        eprintln!("  {warning}");
    }
    if placed.len() > WARNINGS_SHOWN {
        eprintln!(
            "  … and {} more listed at other lines (`schemascope sources SOURCE` lists them)",
            placed.len() - WARNINGS_SHOWN
        );
    }
    for warning in notes.iter().take(WARNINGS_SHOWN) {
        eprintln!("  {warning}");
    }
    if notes.len() > WARNINGS_SHOWN {
        eprintln!(
            "  … and {} more (`schemascope sources SOURCE` lists them)",
            notes.len() - WARNINGS_SHOWN
        );
    }
}

/// Loads the sources of `serve`: one that fails to load (missing file, database down, dead
/// socket) is reported here and in `list_sources`, and retried while the others are served.
fn services_serving(specs: &[SourceSpec]) -> Result<Services> {
    let services = new_services();
    let failed = services.sources.load_serving(specs, &progress::Bar::new())?;
    print_load_warnings(&services);
    for failure in &failed {
        eprintln!(
            "schemascope: source `{}` failed to load: {}; serving without it and retrying (list_sources shows its state)",
            failure.spec.name, failure.error
        );
    }
    if !failed.is_empty() && services.sources.names().is_empty() {
        eprintln!("schemascope: no source loaded yet; the server starts and keeps retrying");
    }
    Ok(services)
}

/// Loads the one source of a one-shot command. Its file is mapped rather than copied: the
/// command answers and exits (`serve` keeps private copies, see `ReadMode`).
fn one_source(source: &str) -> Result<(Services, String)> {
    one_source_read(source, false)
}

/// Loads the one source of a command that needs its profile rather than every item: an NDJSON
/// document file is profiled by streaming, within the memory budget.
fn profiled_source(source: &str) -> Result<(Services, String)> {
    one_source_read(source, true)
}

#[allow(unsafe_code)] // choosing to map the file (`ReadMode::map`), its contract met below
fn one_source_read(source: &str, streamed: bool) -> Result<(Services, String)> {
    let spec: SourceSpec = source.parse()?;
    bus_error::report_truncated_sources();
    let services = new_services();
    // A one-shot command answers with whole profiles: it waits for them.
    services.sources.set_profile_patience(None);
    // SAFETY: a one-shot command reads its source once and exits; a file another process
    // truncates meanwhile ends it with SIGBUS, which `bus_error` above reports by name, and
    // the README says not to rewrite a file a one-shot command is reading.
    let mapped = unsafe { ReadMode::map() };
    let mode = if streamed { mapped.streamed() } else { mapped };
    services.sources.load_with(&[spec], &progress::Bar::new(), mode)?;
    print_load_warnings(&services);
    progress::watch_table_profiles(&services);
    let name = services.sources.names().into_iter().next().context("no source loaded")?;
    Ok((services, name))
}

/// The tools `--tools` chose, if given (a blank value, as a client's empty setting passes it, is
/// none given).
fn chosen_tools(list: Option<&str>) -> Result<Option<tools::toolsets::ChosenTools>> {
    list.filter(|list| !list.trim().is_empty())
        .map(|list| {
            tools::toolsets::ChosenTools::parse_list(list)
                .map_err(|e| anyhow::anyhow!("--tools: {e}"))
        })
        .transpose()
}

/// `schema` of an NDJSON document file (the file's own collection, not a live record): streamed
/// for its schema alone, no profile computed (see `schemascope_sources::stream_schema`); `None`
/// for any other source or target, which `query_schema` answers from the source's profile.
#[allow(unsafe_code)] // choosing to map the file (`ReadMode::map`), its contract met below
fn streamed_schema(
    source: &str,
    target: Option<&str>,
    live: &LiveSampling,
    no_example: bool,
) -> Result<Option<ToolResult>> {
    if live.samples.is_some() || live.window_ms.is_some() {
        return Ok(None);
    }
    let spec: SourceSpec = source.parse()?;
    if target.is_some_and(|t| t != spec.name) {
        return Ok(None);
    }
    let Some(path) = stream_schema::document_file(&spec) else { return Ok(None) };
    bus_error::report_truncated_sources();
    // SAFETY: as in `one_source_read`: a one-shot command reads its source once and exits; a
    // truncation meanwhile ends it with SIGBUS, which `bus_error` reports by name.
    let mapped = unsafe { ReadMode::map() };
    let streamed = match stream_schema::stream_schema(&spec, path, mapped, &progress::Bar::new()) {
        // Not JSON lines after all: the whole load decides what it is.
        Err(schemascope_sources::SourceError::ValuesOverLines { .. }) => return Ok(None),
        streamed => streamed?,
    };
    print_warnings(&spec.display_text(), &streamed.warnings);
    Ok(Some(tools::query_schema_streamed(&streamed, Some(!no_example))))
}

/// Runs tool `name` with `params` through the tool table, the one path every surface takes: the
/// same argument checks, ceilings, data age and result cap as over MCP, so the CLI shows what a
/// model would get.
fn call(
    services: &Services,
    name: &str,
    params: impl serde::Serialize,
    output: &Output,
) -> ToolResult {
    services.set_max_result_bytes(
        output.max_result_bytes.unwrap_or(tools::cap::DEFAULT_MAX_RESULT_BYTES),
    );
    let arguments = match serde_json::to_value(params) {
        Ok(arguments) => arguments,
        // Plain structs of options, strings and JSON values always write.
        Err(error) => {
            return ToolResult::failed(
                format!("Invalid arguments for `{name}`: {error}"),
                json!({"error": "invalid_params"}),
            );
        }
    };
    tools::tool_table::call_tool(services, tools::Caller::User, name, arguments)
}

/// `result`, answered by a command that is not a tool of the table, within the cap the table
/// would put on it.
fn capped(result: ToolResult, output: &Output, see_the_rest: SeeTheRest) -> ToolResult {
    result.capped_as(
        output.max_result_bytes.unwrap_or(tools::cap::DEFAULT_MAX_RESULT_BYTES),
        see_the_rest,
    )
}

/// Prints a tool's answer (capped already) and gives the exit code its success says.
fn finish(result: &ToolResult, output: &Output, view: View) -> ExitCode {
    if output.json {
        println!("{}", serde_json::to_string_pretty(result).unwrap_or_default());
    } else {
        render::print(result, view);
    }
    if result.success { ExitCode::SUCCESS } else { ExitCode::FAILURE }
}

fn read_raw(text: &str) -> Result<String> {
    use schemascope_sources::file;
    Ok(if text == "-" {
        file::read_small_stream(std::path::Path::new("standard input"), std::io::stdin().lock())?
    } else if let Some(path) = text.strip_prefix('@') {
        file::read_small_string(std::path::Path::new(path))?
    } else {
        text.to_string()
    })
}

/// A query given on the command line as the tools take it: a JSON object is a structured query,
/// anything else SQL text.
fn query_argument(text: &str) -> Result<Value> {
    match serde_json::from_str::<Value>(text) {
        Ok(object @ Value::Object(_)) => Ok(object),
        // No SQL statement starts with a brace: this was meant as a structured query.
        Err(error) if text.trim_start().starts_with('{') => {
            anyhow::bail!("the structured query is not valid JSON: {error}")
        }
        _ => Ok(Value::String(text.to_string())),
    }
}

fn read_value(text: &str) -> Result<Value> {
    let raw = read_raw(text)?;
    serde_json::from_str(&raw).map_err(|error| {
        // A bare word is most often a string the shell unquoted: say how to pass it. In an
        // object or an array, or for a number out of range (`1e999`), the parser's words say
        // what is wrong.
        let structured = raw.trim_start().starts_with(['{', '[', '"']);
        let hint = if structured || error.to_string().starts_with("number out of range") {
            error.to_string()
        } else {
            let quoted = serde_json::to_string(&raw).unwrap_or_default();
            format!("a string is written quoted: '{quoted:.80}'")
        };
        anyhow::anyhow!("the value is not valid JSON: {raw:.80} ({hint})")
    })
}

fn profile(source: &str) -> Result<ExitCode> {
    let (services, name) = profiled_source(source)?;
    let report = tools::profile_report(&services, Some(name));
    println!("{}", serde_json::to_string(&report)?);
    std::io::Write::flush(&mut std::io::stdout())?;
    // A one-shot command: exit without freeing a large source item by item on the way out.
    std::process::exit(if report.success { 0 } else { 1 })
}

fn serve(
    services: Services,
    http: Option<SocketAddr>,
    exposure: &exposure::ExposureArgs,
    watch: bool,
    banner: Option<&dyn Fn(SocketAddr, bool)>,
) -> Result<ExitCode> {
    exposure.apply(&services);
    // Only HTTP reads the token and checks the address; both before anything starts.
    let http = match http {
        Some(addr) => {
            let options = exposure.http_options()?;
            options.check_address(addr)?;
            Some((addr, options))
        }
        None => None,
    };
    if watch {
        services.watch()?;
    }
    // Over stdio a tool call is bounded when the operator set a request timeout.
    let stdio_timeout = if http.is_none() { exposure.request_timeout()? } else { None };
    // One client over stdio: its messages are handled on one thread (tools run on the blocking
    // pool), so a call is not handed between workers at every step; HTTP serves many clients on
    // every core.
    let mut builder = match http {
        None => tokio::runtime::Builder::new_current_thread(),
        Some(_) => tokio::runtime::Builder::new_multi_thread(),
    };
    let runtime = builder.enable_all().build()?;
    runtime.block_on(async move {
        match http {
            None => schemascope_server::serve_stdio(services, stdio_timeout).await?,
            Some((addr, options)) => {
                let (listener, bound) = schemascope_server::bind_http(addr)
                    .await
                    .with_context(|| format!("cannot listen on {addr}; pick another address with --http (port 0 picks a free one)"))?;
                match banner {
                    Some(show) => show(bound, options.token.is_some()),
                    None => eprintln!("schemascope: MCP streamable HTTP on http://{bound}/mcp; graph view on http://{bound}/"),
                }
                let shutdown = async {
                    let _ = tokio::signal::ctrl_c().await;
                };
                schemascope_server::serve_http_listener(services, listener, options, shutdown).await?;
            }
        }
        anyhow::Ok(())
    })?;
    Ok(ExitCode::SUCCESS)
}

fn demo_banner(services: &Services, addr: SocketAddr, token: bool) {
    let sources = tools::list_sources(services, Default::default());
    println!("schemascope demo — serving the embedded demo data over MCP (streamable HTTP)\n");
    for source in sources.data["sources"].as_array().cloned().unwrap_or_default() {
        let parts: Vec<String> = source["collections"]
            .as_array()
            .map(|cs| {
                cs.iter()
                    .map(|c| match c["records"].as_array() {
                        Some(records) => {
                            format!("{} records, {} values", records.len(), c["count"])
                        }
                        None => {
                            format!("{} {}", c["count"], c["name"].as_str().unwrap_or_default())
                        }
                    })
                    .collect()
            })
            .unwrap_or_default();
        println!("  {:<16} {}", source["name"].as_str().unwrap_or_default(), parts.join(", "));
    }
    let url = format!("http://{addr}/mcp");
    let header = token.then(|| json!({"Authorization": "Bearer <your token>"}));
    let mut desktop = json!({"mcpServers": {"schemascope": {"type": "http", "url": url}}});
    let mut vscode = json!({"servers": {"schemascope": {"type": "http", "url": url}}});
    if let Some(header) = &header {
        desktop["mcpServers"]["schemascope"]["headers"] = header.clone();
        vscode["servers"]["schemascope"]["headers"] = header.clone();
    }
    // The absolute path of this very binary: a client starts it from a directory of its own.
    let exe = std::env::current_exe()
        .ok()
        .and_then(|p| p.to_str().map(str::to_string))
        .unwrap_or_else(|| "schemascope".into());
    let stdio = json!({"mcpServers": {"schemascope": {"command": exe, "args": ["serve", "demo:infrastructure", "demo:sensors"]}}});
    let login = if token { "?token=<your token>" } else { "" };
    let code_header = if token { " --header \"Authorization: Bearer <your token>\"" } else { "" };
    println!("\nGraph view (open in a browser): http://{addr}/{login}");
    println!("\nMCP endpoint: {url}");
    println!(
        "\nCursor (.cursor/mcp.json; other clients that take a URL the same way):\n{}",
        serde_json::to_string_pretty(&desktop).unwrap_or_default()
    );
    println!("\nClaude Code:\n  claude mcp add --transport http schemascope {url}{code_header}");
    println!(
        "\nVS Code (.vscode/mcp.json):\n{}",
        serde_json::to_string_pretty(&vscode).unwrap_or_default()
    );
    println!(
        "\nClaude Desktop (claude_desktop_config.json), or any client that starts the server itself:\n{}",
        serde_json::to_string_pretty(&stdio).unwrap_or_default()
    );
    println!(
        "\nTry the same tools from the shell:\n  schemascope describe demo:infrastructure\n  schemascope property demo:infrastructure cpu\n  schemascope find demo:infrastructure \"type == 'database'\"\n  schemascope schema demo:sensors server::Temperature\n\nPress Ctrl-C to stop."
    );
}

fn run(cli: Cli) -> Result<ExitCode> {
    let store = if cli.no_profile_cache {
        None
    } else {
        cli.profile_cache.or_else(schemascope_sources::profile_store::default_dir)
    };
    let _ = PROFILE_STORE.set(store.map(schemascope_sources::ProfileStore::new));
    for setting in &cli.ceiling {
        schemascope_core::ceilings::set_from_text(setting).context("--ceiling")?;
    }
    if let Some(bytes) = cli.memory_budget {
        schemascope_sources::stream::set_memory_budget(
            usize::try_from(bytes).unwrap_or(usize::MAX),
        );
    }
    if cli.no_spill {
        schemascope_sources::stream::set_spill(None);
    } else if cli.spill_dir.is_some() || cli.spill_cap.is_some() {
        let defaults = schemascope_sources::scratch::SpillOptions::default();
        schemascope_sources::stream::set_spill(Some(schemascope_sources::scratch::SpillOptions {
            dir: cli.spill_dir.clone(),
            cap: cli.spill_cap.unwrap_or(defaults.cap),
        }));
    }
    if let Some(bytes) = cli.max_file_bytes {
        if bytes == 0 {
            anyhow::bail!("--max-file-bytes must be at least 1");
        }
        schemascope_sources::file::set_max_source_bytes(bytes);
    }
    // A one-shot command's work stops on Ctrl-C, on the database server too; a server handles
    // its own shutdown and its calls' cancellation.
    if matches!(cli.command, Command::Serve { .. } | Command::Demo { .. }) {
        return dispatch(cli.command);
    }
    let work = schemascope_core::cancel::Cancel::new();
    interrupt::cancel_on_ctrl_c(&work);
    schemascope_core::cancel::with(&work, || dispatch(cli.command))
}

/// Runs `command`.
fn dispatch(command: Command) -> Result<ExitCode> {
    Ok(match command {
        Command::Describe { source, collection, max_tokens, markdown, output } => {
            let (services, name) = profiled_source(&source)?;
            // People read the markdown; `--json` alone gives the structured summary.
            let format = (markdown || !output.json).then_some(tools::SchemaFormat::Markdown);
            let params =
                tools::DescribeSchemaParams { source: Some(name), collection, format, max_tokens };
            finish(&call(&services, "describe_schema", params, &output), &output, View::Describe)
        }
        Command::Sample {
            source,
            collection,
            count,
            strategy,
            stratify_by,
            seed,
            record,
            output,
        } => {
            let (services, name) = one_source(&source)?;
            let strategy = strategy.map(|s| match s {
                Strategy::Random => tools::StrategyParam::Random,
                Strategy::Stratified => tools::StrategyParam::Stratified,
                Strategy::Representative => tools::StrategyParam::Representative,
            });
            let params = tools::SampleDataParams {
                source: Some(name),
                collection,
                count,
                strategy,
                stratify_by,
                seed,
                max_string_length: None,
                record_name: record,
            };
            finish(&call(&services, "sample_data", params, &output), &output, View::Data)
        }
        Command::Property { source, property, collection, record, limit, bins, value, output } => {
            let (services, name) = profiled_source(&source)?;
            let params = tools::DescribePropertyParams {
                source: Some(name),
                property,
                collection,
                record_name: record,
                limit,
                bins,
                value,
            };
            finish(&call(&services, "describe_property", params, &output), &output, View::Data)
        }
        Command::Schema { source, target, no_example, live, output } => {
            if let Some(result) = streamed_schema(&source, target.as_deref(), &live, no_example)? {
                // Answered without a source loaded, so without the table's call.
                let result = capped(result, &output, SeeTheRest::NarrowTheRequest);
                return Ok(finish(&result, &output, View::Schema));
            }
            let (services, name) = profiled_source(&source)?;
            let params = tools::QuerySchemaParams {
                source: Some(name),
                record_name: None,
                collection: target,
                include_example: Some(!no_example),
                samples: live.samples,
                window_ms: live.window_ms,
            };
            finish(&call(&services, "query_schema", params, &output), &output, View::Schema)
        }
        Command::Validate { source, target, value, live, output } => {
            let (services, name) = one_source(&source)?;
            let value = read_value(&value)?;
            let params = tools::ValidateValueParams {
                source: Some(name),
                record_name: None,
                collection: Some(target),
                value,
                samples: live.samples,
                window_ms: live.window_ms,
            };
            let result = call(&services, "validate_value", params, &output);
            let code = finish(&result, &output, View::Data);
            if result.success && result.data["valid"] == json!(false) {
                ExitCode::from(2)
            } else {
                code
            }
        }
        Command::Find { source, selector, collection, limit, output } => {
            let (services, name) = one_source(&source)?;
            let params = tools::FindItemsParams { source: Some(name), selector, collection, limit };
            finish(&call(&services, "find_items", params, &output), &output, View::Find)
        }
        Command::Sources { sources, output } => {
            let services = services_for(&sources)?;
            // One source given: listed with every warning it holds.
            let source = match sources.len() {
                1 => services.sources.names().into_iter().next(),
                _ => None,
            };
            let listed =
                call(&services, "list_sources", tools::ListSourcesParams { source }, &output);
            finish(&listed, &output, View::Data)
        }
        Command::Tools { sources, definitions, tools: chosen, llm, output } => {
            let services = services_for(&sources)?;
            llm.apply(&services)?;
            services.choose_tools(chosen_tools(chosen.as_deref())?);
            let view = if definitions { View::Data } else { View::Tools };
            let list = tools::tool_table::tool_list(&services, definitions);
            finish(&capped(list, &output, SeeTheRest::RaiseTheCap), &output, view)
        }
        Command::Profile { source, json: _ } => profile(&source)?,
        Command::Serve {
            http,
            no_watch,
            profile_wait,
            config: config_arg,
            sources,
            retrieval,
            llm,
            trace_json,
            tools: chosen,
            session,
            exposure,
            aimdb,
            aimdb_access,
        } => {
            // A client that fills arguments from optional settings (a Claude Desktop bundle's
            // user_config) passes an empty string for one left blank: nothing given.
            let sources: Vec<String> =
                sources.into_iter().filter(|s| !s.trim().is_empty()).collect();
            let config_arg =
                config_arg.filter(|file| !file.is_empty()).map(std::path::PathBuf::from);
            let config_file =
                config_arg.or_else(|| sources.is_empty().then(config::default_path).flatten());
            let config = config_file.map(|file| config::Config::load(&file)).transpose()?;
            let settings = config.as_ref().map(|c| c.server.clone()).unwrap_or_default();
            if config.is_none() && sources.is_empty() && !aimdb_access.has_dirs(&settings) {
                bail!(
                    "nothing to serve: give sources (e.g. `schemascope serve data.json`) or a configuration file with --config FILE (`schemascope init` writes one); none was found at ${}, ./{} or ~/.config/schemascope/{}",
                    config::PATH_VARIABLE,
                    config::FILE_NAME,
                    config::FILE_NAME
                );
            }
            let mut specs: Vec<SourceSpec> =
                sources.iter().map(|s| s.parse()).collect::<Result<_, _>>()?;
            specs.extend(config.iter().flat_map(|c| c.sources.iter().map(|s| s.spec.clone())));
            aimdb_access.mark_writes(&mut specs)?;
            // Before the sources load: an instance's values are bounded from the first read.
            aimdb.apply()?;
            let services = services_serving(&specs)?;
            aimdb_access.apply(&settings, &services)?;
            for source in config.iter().flat_map(|c| &c.sources) {
                if let Some(dir) = &source.docs {
                    services.docs.set_dir(&source.spec.name, dir.clone());
                }
                if let Some(path) = &source.dbt {
                    services.docs.set_dbt(&source.spec.name, path.clone());
                }
            }
            // The flag wins over the file, as every setting's does.
            services.choose_tools(chosen_tools(chosen.as_deref())?.or(settings.tools.clone()));
            let profile_wait = profile_wait.or(settings.profile_wait_ms).unwrap_or(2000);
            services
                .sources
                .set_profile_patience(Some(std::time::Duration::from_millis(profile_wait)));
            session.apply(&services)?;
            retrieval.apply(&services)?;
            if !retrieval.names_model()
                && let Some(dir) = &settings.embedding_model
            {
                let model = schemascope_tools::embedding_model::EmbeddingModel::load(dir)?;
                services.docs.set_encoder(Some(model));
            }
            // A served schema's docs are encoded in the background as its profiles are computed:
            // a call waits as long for either, then answers with what is ready.
            services
                .docs
                .set_encoding_patience(Some(std::time::Duration::from_millis(profile_wait)));
            llm.apply(&services)?;
            // An LLM configured by the environment but wrongly is said at start, not found out
            // by a client that never sees `ask` listed.
            let configured = ["SCHEMASCOPE_LLM_PROVIDER", "SCHEMASCOPE_LLM_MODEL"]
                .iter()
                .any(|name| std::env::var_os(name).is_some());
            if configured && let Err(error) = services.asking.llm() {
                eprintln!("schemascope: warning: `ask` is not offered: {error}");
            }
            services.asking.set_trace_file(trace_json);
            let watch = !no_watch && settings.watch.unwrap_or(true);
            let exposure = exposure.or_config(&settings);
            // Held while serving: dropping it ends the watch.
            let _config_watch = match config {
                Some(config) if watch => Some(config::reload::watch(
                    &services,
                    config,
                    schemascope_tools::sources::REFRESH_DEBOUNCE,
                    watch,
                )?),
                _ => None,
            };
            serve(services, http.or(settings.http), &exposure, watch, None)?
        }
        Command::Init { sources, output, force } => {
            let specs: Vec<SourceSpec> =
                sources.iter().map(|s| s.parse()).collect::<Result<_, _>>()?;
            let base = std::env::current_dir()?;
            let text = config::starter::starter(&specs, &base);
            let output = output.unwrap_or_else(|| config::FILE_NAME.into());
            if output.as_os_str() == "-" {
                print!("{text}");
            } else {
                if output.exists() && !force {
                    bail!(
                        "{} exists; give --force to replace it, or --output FILE",
                        output.display()
                    );
                }
                std::fs::write(&output, text)
                    .with_context(|| format!("cannot write {}", output.display()))?;
                println!(
                    "Wrote {}. Fill in each source's description, then:\n  schemascope check --config {}\n  schemascope serve --config {}",
                    output.display(),
                    output.display(),
                    output.display()
                );
            }
            ExitCode::SUCCESS
        }
        Command::Check { config } => check::check(config)?,
        Command::SearchDocs { source, question, top_k, retrieval, output } => {
            let (services, name) = one_source(&source)?;
            retrieval.apply(&services)?;
            let params = tools::SearchSchemaDocsParams { source: Some(name), question, top_k };
            let result = call(&services, "search_schema_docs", params, &output);
            finish(&result, &output, View::Data)
        }
        Command::Context { source, question, max_tokens, top_k, retrieval, output } => {
            let (services, name) = one_source(&source)?;
            retrieval.apply(&services)?;
            let params =
                tools::GetSchemaContextParams { source: Some(name), question, max_tokens, top_k };
            let result = call(&services, "get_schema_context", params, &output);
            finish(&result, &output, View::Context)
        }
        Command::Ask { source, question, history, trace_json, llm, retrieval, output } => {
            let (services, name) = one_source(&source)?;
            retrieval.apply(&services)?;
            llm.apply(&services)?;
            services.asking.set_trace_file(trace_json);
            let max_bytes = output.max_result_bytes.unwrap_or(tools::cap::DEFAULT_MAX_RESULT_BYTES);
            ask::run(&services, name, question, history, output.json, max_bytes)?
        }
        Command::ValidateQuery { source, query, question, retrieval, output } => {
            let (services, name) = one_source(&source)?;
            retrieval.apply(&services)?;
            let query = query_argument(&read_raw(&query)?)?;
            let params = tools::ValidateQueryParams { source: Some(name), query, question };
            let result = call(&services, "validate_query", params, &output);
            let code = finish(&result, &output, View::Data);
            if result.success && result.data["valid"] == json!(false) {
                ExitCode::from(2)
            } else {
                code
            }
        }
        Command::Execute { source, query, max_rows, max_bytes, timeout_ms, output } => {
            let (services, name) = one_source(&source)?;
            let params = tools::ExecuteQueryParams {
                source: Some(name),
                query: query_argument(&read_raw(&query)?)?,
                max_rows,
                max_bytes: max_bytes.map(|b| usize::try_from(b).unwrap_or(usize::MAX)),
                timeout_ms,
            };
            finish(&call(&services, "execute_query", params, &output), &output, View::Data)
        }
        Command::Docs { command: DocsCommand::Generate { source, dir, force, output } } => {
            let (services, name) = one_source(&source)?;
            // A command of the CLI alone (it writes files where the user says), not a tool.
            let result = tools::generate_schema_docs(
                &services.docs,
                tools::GenerateDocsParams { source: Some(name), dir: Some(dir), force },
            );
            finish(&capped(result, &output, SeeTheRest::NarrowTheRequest), &output, View::Message)
        }
        Command::Eval { command } => eval::run(command)?,
        Command::Demo { http, stdio, session, exposure } => {
            let services =
                services_for(&["demo:infrastructure".to_string(), "demo:sensors".to_string()])?;
            session.apply(&services)?;
            if stdio {
                serve(services, None, &exposure, false, None)?
            } else {
                let shown = services.clone();
                serve(
                    services,
                    Some(http),
                    &exposure,
                    false,
                    Some(&move |addr, token| demo_banner(&shown, addr, token)),
                )?
            }
        }
    })
}

/// The exit status of a process whose output was closed (128 + SIGPIPE), as shells report it.
const OUTPUT_CLOSED: i32 = 141;

/// Output piped into `head` and closed early ends the process quietly, as for other Unix tools,
/// instead of a panic message. SIGPIPE itself stays ignored (Rust's default): with its default
/// action, a write to a database connection the server dropped would kill the process — a
/// server with every source it serves — instead of failing that one connection.
fn quiet_on_closed_output() {
    let default = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        let message = info
            .payload()
            .downcast_ref::<String>()
            .map(String::as_str)
            .or_else(|| info.payload().downcast_ref::<&str>().copied())
            .unwrap_or_default();
        if message.starts_with("failed printing to std") && message.contains("Broken pipe") {
            std::process::exit(OUTPUT_CLOSED);
        }
        default(info);
    }));
}

fn main() -> ExitCode {
    quiet_on_closed_output();
    // Logs (per-node spans of `ask`, reload errors) go to standard error, warnings only unless
    // asked for: SCHEMASCOPE_LOG=info (or debug, or a filter such as schemascope_agent=info).
    // Writes to AimDB records are always logged, as `serve --help` promises.
    let filter =
        tracing_subscriber::EnvFilter::try_from_env("SCHEMASCOPE_LOG").unwrap_or_else(|_| {
            let writes = schemascope_tools::record_write::LOG_TARGET;
            tracing_subscriber::EnvFilter::new(format!("warn,{writes}=info"))
        });
    let ansi = std::io::IsTerminal::is_terminal(&std::io::stderr());
    let _ = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        .with_ansi(ansi)
        .try_init();
    match run(Cli::parse()) {
        Ok(code) => code,
        Err(error) => {
            eprintln!("error: {error:#}");
            ExitCode::FAILURE
        }
    }
}
