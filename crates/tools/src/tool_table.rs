//! The one table of tools. Each row says everything a surface needs about a tool — name,
//! description, parameters, hints, which servers list it — and how to call it with JSON
//! arguments. MCP's tool list and calls, `POST /v1/tools/{name}`, `POST /v1/ask` and the tool
//! list size the CLI reports all read this table, so adding a tool is adding a row (plus its
//! function and description).

use std::sync::LazyLock;

use schemars::JsonSchema;
use schemascope_core::ceilings::CEILINGS;
use serde::de::DeserializeOwned;
use serde_json::{Map, Value, json};

use crate::cap::SeeTheRest;
use crate::descriptions as text;
use crate::graph_session as graph;
use crate::graph_session::Caller;
use crate::params::*;
use crate::result::{ToolResult, Written};
use crate::services::Services;

/// What the served sources must offer for a server to list a tool.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Needs {
    /// Any source: the tools every server lists.
    AnySource,
    /// A database (SQLite, PostgreSQL) among the sources.
    Database,
    /// A database and an LLM to ask.
    DatabaseAndLlm,
    /// A graph among the sources.
    Graph,
    /// Never listed: called by name by the web view only (`report_viewport`).
    WebView,
    /// An AimDB source or directory of instances the operator enabled writes for.
    AimdbWrites,
    /// Directories of AimDB instances the operator allows (`serve --aimdb-dir`).
    AimdbDirs,
    /// A database and a file to record verified examples to (`--record-examples`).
    ExampleRecording,
}

/// What a tool does to the world, as MCP's tool annotations say it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Hints {
    /// It changes nothing.
    pub read_only: bool,
    /// Calling it again with the same arguments changes nothing more.
    pub idempotent: bool,
    /// It reaches beyond the served data (an LLM, an AimDB instance it writes to).
    pub open_world: bool,
    /// It may overwrite what was there (a record's value), which a client may ask a person to
    /// confirm.
    pub destructive: bool,
}

const READS: Hints =
    Hints { read_only: true, idempotent: true, open_world: false, destructive: false };
const READS_AT_RANDOM: Hints =
    Hints { read_only: true, idempotent: false, open_world: false, destructive: false };
const SETS: Hints =
    Hints { read_only: false, idempotent: true, open_world: false, destructive: false };
const ADDS: Hints =
    Hints { read_only: false, idempotent: false, open_world: false, destructive: false };
/// Changes data outside schemascope (an AimDB record): the one tool that writes.
const WRITES: Hints =
    Hints { read_only: false, idempotent: true, open_world: true, destructive: true };
const ASKS_AN_LLM: Hints =
    Hints { read_only: true, idempotent: false, open_world: true, destructive: false };

/// A step of a long call, reported while it runs (the `ask` pipeline's node entries).
#[derive(Debug, Clone, PartialEq)]
pub struct Progress {
    /// One line for the reader (MCP progress notifications carry it).
    pub message: String,
    /// The step as JSON (`POST /v1/ask` sends it as a `thought` event).
    pub detail: Value,
}

/// One call of a tool: who calls, with what, and where its progress goes.
pub struct Invocation<'a> {
    /// The tool called.
    pub spec: &'static ToolSpec,
    /// Who calls: what the call adds is recorded as theirs.
    pub caller: Caller,
    /// The arguments as sent (`null` reads as `{}`).
    pub arguments: Value,
    /// Receives the call's progress, if it reports any.
    pub progress: &'a mut dyn FnMut(Progress),
}

impl Invocation<'_> {
    /// Parses the arguments into the tool's parameters and runs `call` with them; arguments
    /// that do not fit are a failed result naming the parameter at fault and listing the
    /// accepted ones.
    pub fn with<P: DeserializeOwned>(self, call: impl FnOnce(P) -> ToolResult) -> ToolResult {
        match parse_arguments(self.spec, self.arguments) {
            Ok(params) => call(params),
            Err(invalid) => invalid,
        }
    }
}

/// A row of the table.
pub struct ToolSpec {
    /// The tool's name.
    pub name: &'static str,
    /// What it does, with examples, as an LLM reads it.
    pub description: &'static str,
    /// The JSON Schema of its arguments.
    pub input_schema: fn() -> Map<String, Value>,
    /// What it does to the world.
    pub hints: Hints,
    /// Which servers list it.
    pub needs: Needs,
    /// Whether a server's request timeout bounds it (`ask` is bounded by its own steps' timeouts
    /// and retries instead, as one call may ask the model several times).
    pub request_timeout_applies: bool,
    run: fn(&Services, Invocation<'_>) -> ToolResult,
}

impl std::fmt::Debug for ToolSpec {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ToolSpec")
            .field("name", &self.name)
            .field("needs", &self.needs)
            .finish_non_exhaustive()
    }
}

/// The input schema of parameters `P`, as plain as JSON Schema 2020-12 allows: what a model
/// needs to call the tool and nothing it pays for on every turn without use. Taken out of what
/// schemars writes: the wrapper's title, description and `$schema`; `$defs` and `$ref` (each
/// type written where it is used); `["string", "null"]` and `anyOf [T, null]` for an optional
/// parameter (optional is not being in `required`); `format` (`uint`, `double`…) and the
/// `minimum: 0` of unsigned integers (a negative number is refused naming the parameter);
/// defaults that say nothing (`null`, `""`, `false`, empty); `additionalProperties: false` (an
/// unknown parameter is refused with the accepted ones listed); an enum's per-value
/// descriptions (its parameter's description says what the values mean) and the newlines of
/// doc comments. The `source` parameter, which every tool takes, is described once in the
/// server's instructions (`instructions.rs`), and an unknown or missing source is refused with
/// the names served.
fn input_schema<P: JsonSchema>() -> Map<String, Value> {
    let schema = schemars::generate::SchemaSettings::draft2020_12()
        .into_generator()
        .into_root_schema_for::<P>();
    match serde_json::to_value(schema) {
        Ok(Value::Object(mut object)) => {
            for noise in ["$schema", "title", "description"] {
                object.remove(noise);
            }
            let definitions = match object.remove("$defs") {
                Some(Value::Object(definitions)) => definitions,
                _ => Map::new(),
            };
            let mut root = Value::Object(object);
            plain(&mut root, &definitions, 0);
            let Value::Object(mut object) = root else { return Map::new() };
            if let Some(Value::Object(source)) =
                object.get_mut("properties").and_then(|p| p.get_mut("source"))
            {
                source.remove("description");
            }
            // Some clients want `properties` even when there are none.
            object.entry("properties").or_insert_with(|| json!({}));
            // `type` first, as a reader expects it.
            let mut ordered = Map::new();
            for key in ["type", "properties", "required"] {
                if let Some(value) = object.remove(key) {
                    ordered.insert(key.into(), value);
                }
            }
            ordered.extend(object);
            ordered
        }
        // Every parameter type is a struct; an empty object schema is the harmless fallback.
        _ => json!({"type": "object", "properties": {}}).as_object().cloned().unwrap_or_default(),
    }
}

/// Deepest nesting [`plain`] follows (parameter types nest two or three levels).
const PLAIN_DEPTH: usize = 16;

/// `schema` without schemars' noise (see [`input_schema`]), its references to `definitions`
/// written in place.
fn plain(schema: &mut Value, definitions: &Map<String, Value>, depth: usize) {
    let Value::Object(object) = schema else { return };
    if depth > PLAIN_DEPTH {
        return;
    }
    // `anyOf: [T, {"type": "null"}]`: T.
    if let Some(Value::Array(choices)) = object.get("anyOf") {
        let not_null: Vec<&Value> =
            choices.iter().filter(|c| c.get("type") != Some(&json!("null"))).collect();
        if let [only] = not_null.as_slice()
            && let Value::Object(only) = (*only).clone()
        {
            object.shift_remove("anyOf");
            for (key, value) in only {
                object.entry(key).or_insert(value);
            }
        }
    }
    // `$ref`: the definition, under the description and default given here.
    if let Some(reference) = object.shift_remove("$ref")
        && let Some(Value::Object(definition)) = reference
            .as_str()
            .and_then(|r| r.strip_prefix("#/$defs/"))
            .and_then(|name| definitions.get(name))
    {
        // The definition's own description is the Rust type's: the parameter's says it here.
        for (key, value) in definition.iter().filter(|(key, _)| *key != "description") {
            object.entry(key.clone()).or_insert_with(|| value.clone());
        }
    }
    // An enum of strings, each with its description: the values alone.
    if let Some(Value::Array(choices)) = object.get("oneOf") {
        let values: Option<Vec<Value>> =
            choices.iter().map(|c| c.get("const").filter(|v| v.is_string()).cloned()).collect();
        if let Some(values) = values {
            object.shift_remove("oneOf");
            object.insert("type".into(), json!("string"));
            object.insert("enum".into(), Value::from(values));
        }
    }
    if let Some(Value::Array(types)) = object.get("type") {
        let not_null: Vec<Value> = types.iter().filter(|t| *t != &json!("null")).cloned().collect();
        match not_null.as_slice() {
            [one] => {
                object.insert("type".into(), one.clone());
            }
            _ => {
                object.insert("type".into(), Value::from(not_null));
            }
        }
    }
    object.shift_remove("format");
    object.shift_remove("additionalProperties");
    if object.get("minimum") == Some(&json!(0)) {
        object.shift_remove("minimum");
    }
    let says_nothing = |v: &Value| match v {
        Value::Null => true,
        Value::Bool(b) => !b,
        Value::String(s) => s.is_empty(),
        Value::Array(a) => a.is_empty(),
        Value::Object(o) => o.is_empty(),
        Value::Number(_) => false,
    };
    if object.get("default").is_some_and(says_nothing) {
        object.shift_remove("default");
    }
    if let Some(Value::String(text)) = object.get_mut("description") {
        *text = text.split_whitespace().collect::<Vec<_>>().join(" ");
    }
    if let Some(Value::Object(properties)) = object.get_mut("properties") {
        for property in properties.values_mut() {
            // Any JSON value, undescribed, is the schema `true`: some clients want an object.
            if *property == Value::Bool(true) {
                *property = json!({});
            }
            plain(property, definitions, depth + 1);
        }
    }
    if let Some(items) = object.get_mut("items") {
        plain(items, definitions, depth + 1);
    }
}

/// A row whose tool takes one service and its parameters, and that a request timeout bounds:
/// `row!(module::tool(service), DESCRIPTION, Params, hints, Needs)`, where `service` is
/// `services` (all of them) or the field of the one the tool takes.
macro_rules! row {
    ($module:ident::$tool:ident($service:ident), $text:ident, $params:ty, $hints:ident, $needs:ident) => {
        ToolSpec {
            name: stringify!($tool),
            description: text::$text,
            input_schema: input_schema::<$params>,
            hints: $hints,
            needs: Needs::$needs,
            request_timeout_applies: true,
            run: |r, call| call.with(|p: $params| $module::$tool(row!(@service r $service), p)),
        }
    };
    (@service $r:ident services) => {
        $r
    };
    (@service $r:ident $field:ident) => {
        &$r.$field
    };
}

/// Every tool, in the order servers list them.
pub static TOOLS: &[ToolSpec] = &[
    row!(crate::list_sources(services), LIST_SOURCES, ListSourcesParams, READS, AnySource),
    row!(crate::describe_schema(sources), DESCRIBE_SCHEMA, DescribeSchemaParams, READS, AnySource),
    row!(crate::sample_data(sources), SAMPLE_DATA, SampleDataParams, READS_AT_RANDOM, AnySource),
    row!(
        crate::describe_property(services),
        DESCRIBE_PROPERTY,
        DescribePropertyParams,
        READS,
        AnySource
    ),
    row!(crate::query_schema(services), QUERY_SCHEMA, QuerySchemaParams, READS, AnySource),
    row!(crate::validate_value(services), VALIDATE_VALUE, ValidateValueParams, READS, AnySource),
    row!(crate::set_record(services), SET_RECORD, SetRecordParams, WRITES, AimdbWrites),
    row!(crate::find_items(sources), FIND_ITEMS, FindItemsParams, READS, AnySource),
    row!(
        crate::discover_instances(services),
        DISCOVER_INSTANCES,
        DiscoverInstancesParams,
        READS_AT_RANDOM,
        AimdbDirs
    ),
    row!(
        crate::search_schema_docs(docs),
        SEARCH_SCHEMA_DOCS,
        SearchSchemaDocsParams,
        READS,
        Database
    ),
    row!(
        crate::get_schema_context(docs),
        GET_SCHEMA_CONTEXT,
        GetSchemaContextParams,
        READS,
        Database
    ),
    row!(crate::execute_query(sources), EXECUTE_QUERY, ExecuteQueryParams, READS, Database),
    row!(crate::validate_query(docs), VALIDATE_QUERY, ValidateQueryParams, READS, Database),
    row!(crate::record_example(docs), RECORD_EXAMPLE, RecordExampleParams, ADDS, ExampleRecording),
    ToolSpec {
        name: "ask",
        description: text::ASK,
        input_schema: input_schema::<AskParams>,
        hints: ASKS_AN_LLM,
        needs: Needs::DatabaseAndLlm,
        request_timeout_applies: false,
        run: |r, call| {
            let progress = call.progress;
            let spec = call.spec;
            parse_arguments(spec, call.arguments).map_or_else(
                |invalid| invalid,
                |params| {
                    crate::ask_with(r, params, &mut |event| {
                        if event.phase == schemascope_agent::graph::Phase::Enter {
                            progress(Progress {
                                message: event.current_thought.clone(),
                                detail: json!({"node": event.node, "current_thought": event.current_thought, "execution_id": event.execution_id}),
                            });
                        }
                    })
                },
            )
        },
    },
    row!(graph::query_graph(graphs), QUERY_GRAPH, graph::QueryGraphParams, READS, Graph),
    row!(graph::find_nodes(graphs), FIND_NODES, graph::FindElementsParams, READS, Graph),
    row!(graph::find_edges(graphs), FIND_EDGES, graph::FindElementsParams, READS, Graph),
    ToolSpec {
        name: "find_and_style_nodes",
        description: text::FIND_AND_STYLE_NODES,
        input_schema: input_schema::<graph::StyleElementsParams>,
        hints: ADDS,
        needs: Needs::Graph,
        request_timeout_applies: true,
        run: |r, call| {
            let caller = call.caller;
            call.with(|p| graph::find_and_style_nodes(&r.graphs, caller, p))
        },
    },
    ToolSpec {
        name: "find_and_style_edges",
        description: text::FIND_AND_STYLE_EDGES,
        input_schema: input_schema::<graph::StyleEdgesSchema>,
        hints: ADDS,
        needs: Needs::Graph,
        request_timeout_applies: true,
        run: |r, call| {
            let caller = call.caller;
            call.with(|p| graph::find_and_style_edges(&r.graphs, caller, p))
        },
    },
    row!(graph::clear_styles(graphs), CLEAR_STYLES, graph::ClearStylesParams, SETS, Graph),
    row!(
        graph::describe_styles(graphs),
        DESCRIBE_STYLES,
        graph::DescribeStylesParams,
        READS,
        Graph
    ),
    row!(
        graph::describe_selection(graphs),
        DESCRIBE_SELECTION,
        graph::DescribeSelectionParams,
        READS,
        Graph
    ),
    row!(graph::select(graphs), SELECT, graph::SelectParams, SETS, Graph),
    row!(graph::set_layout(graphs), SET_LAYOUT, graph::SetLayoutParams, SETS, Graph),
    row!(graph::set_dimension(graphs), SET_DIMENSION, graph::SetDimensionParams, SETS, Graph),
    row!(graph::set_camera(graphs), SET_CAMERA, graph::SetCameraParams, SETS, Graph),
    row!(graph::zoom_to_nodes(graphs), ZOOM_TO_NODES, graph::ZoomToNodesParams, SETS, Graph),
    row!(
        graph::list_algorithms(graphs),
        LIST_ALGORITHMS,
        graph::ListAlgorithmsParams,
        READS,
        Graph
    ),
    row!(graph::run_algorithm(graphs), RUN_ALGORITHM, graph::RunAlgorithmParams, SETS, Graph),
    ToolSpec {
        name: "arrange_layer",
        description: "The web view's layer list hides, shows or moves a layer.",
        input_schema: input_schema::<graph::ArrangeLayerParams>,
        hints: SETS,
        needs: Needs::WebView,
        request_timeout_applies: true,
        run: |r, call| call.with(|p| graph::arrange_layer(&r.graphs, p)),
    },
    ToolSpec {
        name: "report_hover",
        description: "The web view reports the element under the pointer.",
        input_schema: input_schema::<graph::ReportHoverParams>,
        hints: SETS,
        needs: Needs::WebView,
        request_timeout_applies: true,
        run: |r, call| call.with(|p| graph::report_hover(&r.graphs, p)),
    },
    ToolSpec {
        name: "read_scene",
        description: "The web view inside a chat client reads what to draw, waiting for a change past the version it drew.",
        input_schema: input_schema::<graph::ReadSceneParams>,
        hints: READS,
        needs: Needs::WebView,
        request_timeout_applies: true,
        run: |r, call| call.with(|p| graph::read_scene(&r.graphs, p)),
    },
    ToolSpec {
        name: "report_viewport",
        description: "The web view reports its viewport size.",
        input_schema: input_schema::<graph::ReportViewportParams>,
        hints: SETS,
        needs: Needs::WebView,
        request_timeout_applies: true,
        run: |r, call| call.with(|p| graph::report_viewport(&r.graphs, p)),
    },
];

/// The tool called `name`.
pub fn find(name: &str) -> Option<&'static ToolSpec> {
    TOOLS.iter().find(|spec| spec.name == name)
}

/// What the served sources offer, for deciding which tools to list.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
struct Offers {
    database: bool,
    graph: bool,
    llm: bool,
    aimdb_writes: bool,
    aimdb_dirs: bool,
    records_examples: bool,
}

fn offers(services: &Services) -> Offers {
    let sources = services.sources.sources();
    let loaded_database = sources.iter().any(|s| s.database.is_some());
    // A database that failed to load is retried: its tools are listed from the start.
    let failed_database = services.sources.failed_sources().iter().any(|f| {
        matches!(
            f.spec.location,
            schemascope_sources::Location::Sqlite(_)
                | schemascope_sources::Location::Postgres(_)
                | schemascope_sources::Location::ClickHouse(_)
                | schemascope_sources::Location::MySql(_)
        )
    });
    let dirs = services.sources.aimdb_dirs();
    // A live source that failed to load is retried: its writes are offered from the start.
    let failed_writes =
        services.sources.failed_sources().iter().any(|f| f.spec.limits.allow_writes);
    Offers {
        database: loaded_database || failed_database,
        graph: sources.iter().any(|s| graph::data::graph_collections(s).is_ok()),
        llm: services.asking.llm().is_ok(),
        aimdb_writes: dirs.any_writes()
            || failed_writes
            || sources.iter().any(|s| s.aimdb.is_some() && s.spec.limits.allow_writes),
        aimdb_dirs: !dirs.is_empty(),
        records_examples: services.docs.record_file().is_some(),
    }
}

/// Why a server does not list a tool.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NotListed {
    /// No served source is of the kind it needs (or, for `ask`, no LLM is configured).
    Unusable(Needs),
    /// The operator's choice (`--tools`, `tools = [...]`) leaves it out.
    NotChosen,
}

impl NotListed {
    /// Why, in a few words.
    pub fn reason(self) -> &'static str {
        match self {
            NotListed::Unusable(Needs::Database) => "no source served answers SQL",
            NotListed::Unusable(Needs::DatabaseAndLlm) => {
                "needs a database and an LLM (--llm-model or SCHEMASCOPE_LLM_MODEL)"
            }
            NotListed::Unusable(Needs::Graph) => "no graph served",
            NotListed::Unusable(Needs::AimdbWrites) => {
                "writes are not enabled (allow_writes, --allow-writes, --aimdb-write-dir)"
            }
            NotListed::Unusable(Needs::AimdbDirs) => "no AimDB directory allowed (--aimdb-dir)",
            NotListed::Unusable(Needs::ExampleRecording) => {
                "needs a database and a file to record to (--record-examples)"
            }
            NotListed::Unusable(Needs::AnySource | Needs::WebView) => "the web view's own",
            NotListed::NotChosen => "not chosen (--tools / tools = [...])",
        }
    }
}

/// The web view's own tools (`Needs::WebView`: the scene it reads, what it reports), callable
/// when a graph is served: a surface that hosts the view (an MCP App) lists them to the view.
pub fn view_tools(services: &Services) -> Vec<&'static ToolSpec> {
    if !offers(services).graph {
        return Vec::new();
    }
    TOOLS.iter().filter(|spec| spec.needs == Needs::WebView).collect()
}

/// A view a surface may show beside a tool's answer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum View {
    /// The live graph: the answer changed what it shows (a style, the selection, the layout,
    /// the camera, an algorithm's results).
    Graph,
    /// A chart of the answer itself: one property's figures, histogram and values.
    PropertyProfile,
}

/// The view beside `spec`'s answers, if any.
pub fn view_of(spec: &ToolSpec) -> Option<View> {
    if spec.needs == Needs::Graph && !spec.hints.read_only {
        Some(View::Graph)
    } else if spec.name == "describe_property" {
        Some(View::PropertyProfile)
    } else {
        None
    }
}

/// Whether a server over `services`' sources lists `spec`, or why not.
pub fn why_not_listed(services: &Services, spec: &ToolSpec) -> Option<NotListed> {
    why_not(&offers(services), services, spec)
}

fn why_not(offers: &Offers, services: &Services, spec: &ToolSpec) -> Option<NotListed> {
    let usable = match spec.needs {
        Needs::AnySource => true,
        Needs::Database => offers.database,
        Needs::DatabaseAndLlm => offers.database && offers.llm,
        Needs::Graph => offers.graph,
        Needs::AimdbWrites => offers.aimdb_writes,
        Needs::AimdbDirs => offers.aimdb_dirs,
        Needs::ExampleRecording => offers.database && offers.records_examples,
        Needs::WebView => false,
    };
    if !usable {
        Some(NotListed::Unusable(spec.needs))
    } else if !services.is_chosen(spec.name) {
        Some(NotListed::NotChosen)
    } else {
        None
    }
}

/// The tools a server over `services`' sources lists, in table order: graph tools only with a
/// graph, SQL tools only with a database, `ask` only with a database and an LLM configured, and
/// of those only the ones the operator chose (all, when they chose none).
pub fn listed(services: &Services) -> Vec<&'static ToolSpec> {
    let offers = offers(services);
    TOOLS.iter().filter(|spec| why_not(&offers, services, spec).is_none()).collect()
}

/// Whether a call of `spec` may take long — it computes profiles, runs a graph algorithm, asks
/// an LLM or runs a statement — so that a client that supports tasks gets it as one when it
/// does not answer at once.
pub fn runs_long(spec: &ToolSpec) -> bool {
    matches!(
        spec.name,
        "ask"
            | "run_algorithm"
            | "describe_schema"
            | "describe_property"
            | "get_schema_context"
            | "execute_query"
            | "sample_data"
    )
}

/// The input schema of `spec`, generated once per tool (lists and argument errors read it).
fn schema_of(spec: &ToolSpec) -> &'static Map<String, Value> {
    static SCHEMAS: LazyLock<Vec<Map<String, Value>>> =
        LazyLock::new(|| TOOLS.iter().map(|spec| (spec.input_schema)()).collect());
    static EMPTY: LazyLock<Map<String, Value>> = LazyLock::new(Map::new);
    // Every spec is a row of TOOLS; the empty schema answers for none.
    TOOLS.iter().position(|s| s.name == spec.name).and_then(|i| SCHEMAS.get(i)).unwrap_or(&EMPTY)
}

/// A tool as MCP lists it (`tools/list`): name, description, input schema and annotations. No
/// output schema: every tool returns the same envelope, which the server's instructions
/// describe once instead of 27 times.
pub fn definition(spec: &ToolSpec) -> Value {
    let schema = schema_of(spec).clone();
    json!({
        "name": spec.name,
        "title": title(spec.name),
        "description": spec.description,
        "inputSchema": schema,
        "annotations": annotations(spec.hints),
    })
}

/// The name a client shows a person: the tool's name as words (`describe_schema` → "Describe
/// schema"), which says what it does as plainly as the name does, for a few tokens.
fn title(name: &str) -> String {
    let words = name.replace('_', " ");
    let mut chars = words.chars();
    chars.next().map_or_else(String::new, |first| first.to_uppercase().chain(chars).collect())
}

/// MCP's tool annotations for `hints`, without those the specification says to ignore: a tool
/// that changes nothing has no `destructiveHint` or `idempotentHint` to give (they are
/// "meaningful only when readOnlyHint == false").
fn annotations(hints: Hints) -> Value {
    let mut annotations = json!({"readOnlyHint": hints.read_only});
    if !hints.read_only {
        annotations["destructiveHint"] = json!(hints.destructive);
        annotations["idempotentHint"] = json!(hints.idempotent);
    }
    annotations["openWorldHint"] = json!(hints.open_world);
    annotations
}

/// The tool list a server over `services`' sources sends, with its size in bytes and in tokens
/// as an LLM counts them (what every turn of a conversation pays for it), each tool's tokens
/// (`perTool`), and the tools not listed with why (`notListed`, `why`); `definitions` adds each
/// tool's full definition.
pub fn tool_list(services: &Services, definitions: bool) -> ToolResult {
    let listed = listed(services);
    let full: Vec<Value> = listed.iter().map(|spec| definition(spec)).collect();
    let text = json!({"tools": full}).to_string();
    let tokens = schemascope_core::tokens::count(&text);
    let shown: Vec<&str> = listed.iter().map(|spec| spec.name).collect();
    let per_tool: Vec<Value> = listed
        .iter()
        .zip(&full)
        .map(|(spec, definition)| {
            let tokens = schemascope_core::tokens::count(&definition.to_string());
            json!({"name": spec.name, "tokens": tokens})
        })
        .collect();
    let offers = offers(services);
    let left_out: Vec<(&str, NotListed)> = TOOLS
        .iter()
        .filter(|spec| spec.needs != Needs::WebView)
        .filter_map(|spec| why_not(&offers, services, spec).map(|why| (spec.name, why)))
        .collect();
    let chosen = services.chosen_tools().map(|c| c.written());
    let mut data = json!({
        "tools": shown,
        "count": shown.len(),
        "bytes": text.len(),
        "tokens": tokens,
        "perTool": per_tool,
        "notListed": left_out.iter().map(|(name, _)| *name).collect::<Vec<_>>(),
        "why": left_out.iter().map(|(name, why)| (name.to_string(), json!(why.reason()))).collect::<Map<_, _>>(),
        "chosen": chosen,
    });
    if definitions {
        data["definitions"] = Value::from(full);
    }
    let mut message = format!(
        "A server over these sources lists {} tools: {} bytes, {tokens} tokens on every turn.",
        shown.len(),
        text.len(),
    );
    let mut reasons: Vec<NotListed> = Vec::new();
    for (_, why) in &left_out {
        if !reasons.contains(why) {
            reasons.push(*why);
        }
    }
    for reason in reasons {
        let names: Vec<&str> =
            left_out.iter().filter(|(_, why)| *why == reason).map(|(name, _)| *name).collect();
        message.push_str(&format!(" Not listed, {}: {}.", reason.reason(), names.join(", ")));
    }
    ToolResult::ok(message, data)
}

/// Every tool a client may call (all but the web view's own), in table order.
pub fn names() -> Vec<&'static str> {
    TOOLS.iter().filter(|spec| spec.needs != Needs::WebView).map(|spec| spec.name).collect()
}

/// [`call_tool_reporting`] for a call whose progress nobody follows.
pub fn call_tool(services: &Services, caller: Caller, name: &str, arguments: Value) -> ToolResult {
    call_tool_reporting(services, caller, name, arguments, &mut |_| {})
}

/// Runs the tool called `name` for `caller` with JSON `arguments`, reporting progress to
/// `progress`. The one path every surface calls: an unknown name is a failed result with
/// did-you-mean; answers from a live source whose connection is lost say the data's age; every
/// result is within the services' byte cap ([`ToolResult::capped`]).
pub fn call_tool_reporting(
    services: &Services,
    caller: Caller,
    name: &str,
    arguments: Value,
    progress: &mut dyn FnMut(Progress),
) -> ToolResult {
    answer(services, caller, name, arguments, progress)
        .capped_as(result_cap(services, name), see_the_rest(name))
}

/// How a cut answer of tool `name` says to see the rest: by asking for less, unless the tool
/// takes no arguments, when only a larger cap shows more.
pub fn see_the_rest(name: &str) -> SeeTheRest {
    // Read from the tools' schemas once: a call must not build a schema to be answered.
    static TAKE_NO_ARGUMENTS: LazyLock<Vec<&'static str>> = LazyLock::new(|| {
        let takes_none = |spec: &&ToolSpec| {
            (spec.input_schema)()
                .get("properties")
                .and_then(Value::as_object)
                .is_none_or(Map::is_empty)
        };
        TOOLS.iter().filter(takes_none).map(|spec| spec.name).collect()
    });
    if TAKE_NO_ARGUMENTS.contains(&name) {
        SeeTheRest::RaiseTheCap
    } else {
        SeeTheRest::NarrowTheRequest
    }
}

/// The byte cap on a result of `name`: the services' cap, which keeps a model's context small —
/// except for the web view's own tools, whose answers (a scene: every node and edge) no model
/// reads; those are bounded by [`MAX_VIEW_RESULT_BYTES`].
pub fn result_cap(services: &Services, name: &str) -> usize {
    match find(name) {
        Some(spec) if spec.needs == Needs::WebView => {
            services.max_result_bytes().max(MAX_VIEW_RESULT_BYTES)
        }
        _ => services.max_result_bytes(),
    }
}

/// The cap on a web view tool's answer (a 100k-node / 200k-edge scene is about 20 MB).
pub const MAX_VIEW_RESULT_BYTES: usize = 64 << 20;

/// [`call_tool_reporting`] with the answer's JSON text, written once (the cap's measure is the
/// text). A list_sources call whose answer nothing has changed since the last one gets that
/// answer again, text and all (`list_sources::ListingMemo`).
pub fn call_tool_written(
    services: &Services,
    caller: Caller,
    name: &str,
    arguments: Value,
    progress: &mut dyn FnMut(Progress),
) -> Written {
    let listing = name == "list_sources"
        && crate::list_sources::takes_no_arguments(&arguments)
        && services.is_chosen(name);
    let stamp = if listing {
        match services.listing.recall(services) {
            Ok(written) => return written,
            Err(stamp) => stamp,
        }
    } else {
        None
    };
    let written = answer(services, caller, name, arguments, progress)
        .written_as(result_cap(services, name), see_the_rest(name));
    if let Some(stamp) = stamp {
        services.listing.keep(stamp, &written);
    }
    written
}

/// The answer of a call that needs no I/O, no profile and no index built — a search that
/// reuses its index, a list_sources whose last answer still holds — computed now on the calling
/// thread; `None` for any other call, which the caller runs where blocking is allowed
/// ([`call_tool_written`]). A surface spares such calls the hand-off to a worker thread and back.
/// (Between the check and the search, the docs may change: that search reads them again, and is
/// only slower.)
pub fn answer_at_once(
    services: &Services,
    caller: Caller,
    name: &str,
    arguments: &Value,
) -> Option<Written> {
    match name {
        "list_sources"
            if crate::list_sources::takes_no_arguments(arguments) && services.is_chosen(name) =>
        {
            services.listing.recall(services).ok()
        }
        "search_schema_docs" => {
            let source = arguments.get("source").and_then(Value::as_str);
            crate::schema_docs::index_is_ready(&services.docs, source)
                .then(|| call_tool_written(services, caller, name, arguments.clone(), &mut |_| {}))
        }
        _ => None,
    }
}

/// The answer of tool `name`, before the cap.
fn answer(
    services: &Services,
    caller: Caller,
    name: &str,
    arguments: Value,
    progress: &mut dyn FnMut(Progress),
) -> ToolResult {
    let Some(spec) = find(name) else {
        // Only what this server lists is offered: a tool its sources cannot use is no answer.
        let names: Vec<&str> = listed(services).into_iter().map(|spec| spec.name).collect();
        let hint = schemascope_core::suggest::did_you_mean(name, names.iter().copied());
        return ToolResult::failed(
            format!("Unknown tool `{name}`.{hint} Tools: {}", names.join(", ")),
            json!({"error": "unknown_tool"}),
        );
    };
    if spec.needs != Needs::WebView && !services.is_chosen(name) {
        let chosen = services.chosen_tools().map(|c| c.written()).unwrap_or_default();
        let names: Vec<&str> = listed(services).into_iter().map(|spec| spec.name).collect();
        return ToolResult::failed(
            format!(
                "Tool `{name}` is not offered: this server offers only the tools chosen with `--tools {chosen}` (`tools = [...]` in the configuration's [server] section). Tools: {}",
                names.join(", ")
            ),
            json!({"error": "tool_not_chosen", "chosen": chosen}),
        );
    }
    let named = arguments.get("source").and_then(Value::as_str).map(str::to_string);
    let mut result = (spec.run)(services, Invocation { spec, caller, arguments, progress });
    services.live.mark_data_age_of(named.as_deref(), &mut result);
    result
}

/// Parses tool arguments (`null` reads as `{}`), naming the parameter at fault and listing the
/// accepted ones on error.
#[allow(clippy::result_large_err)] // the error is the envelope returned to the caller as it is
fn parse_arguments<P: DeserializeOwned>(
    spec: &ToolSpec,
    arguments: Value,
) -> Result<P, ToolResult> {
    let arguments = match arguments {
        Value::Null => json!({}),
        object @ Value::Object(_) => object,
        // serde reads a struct from an array by position: `["chinook", "Total"]` would run.
        other => {
            let kind = schemascope_core::display::json_kind(&other);
            return Err(ToolResult::failed(
                format!(
                    "Invalid arguments for `{}`: they must be a JSON object of named parameters, not {kind}.",
                    spec.name
                ),
                json!({"error": "invalid_params", "parameter": null}),
            ));
        }
    };
    // A number past every integer type (1e30, 2^64) fails as "a float" in serde; past its
    // ceiling, it is refused as such, naming the ceiling.
    for (name, value) in arguments.as_object().into_iter().flatten() {
        let ceiling = CEILINGS.iter().find(|c| c.name == name.as_str()).map(|c| c.ceiling);
        if let (Some(ceiling), Some(asked)) = (ceiling, value.as_f64())
            && asked > ceiling.get() as f64
        {
            return Err(crate::result::ToolError::from(ceiling.past(value.to_string())).into());
        }
    }
    serde_path_to_error::deserialize::<_, P>(arguments).map_err(|error| {
        let path = error.path().to_string();
        let inner = error.into_inner().to_string();
        let parameter =
            if path != "." && !path.is_empty() { Some(path) } else { backticked(&inner) };
        let schema = schema_of(spec);
        let accepted: Vec<String> = schema
            .get("properties")
            .and_then(Value::as_object)
            .map(|properties| properties.keys().cloned().collect())
            .unwrap_or_default();
        let required = schema.get("required").cloned().unwrap_or_else(|| json!([]));
        let tool = spec.name;
        let message = match &parameter {
            Some(parameter) if !inner.contains(&format!("`{parameter}`")) => {
                format!("Invalid arguments for `{tool}`: parameter `{parameter}`: {inner}.")
            }
            _ => format!("Invalid arguments for `{tool}`: {inner}."),
        };
        ToolResult::failed(
            if accepted.is_empty() {
                format!("{message} It takes no parameters.")
            } else {
                format!("{message} Accepted parameters: {}.", accepted.join(", "))
            },
            json!({
                "error": "invalid_params",
                "parameter": parameter,
                "accepted": accepted,
                "required": required,
            }),
        )
    })
}

/// The first `name` quoted in backticks in a serde message ("missing field `property`").
fn backticked(message: &str) -> Option<String> {
    let start = message.find('`')? + 1;
    let length = message[start..].find('`')?;
    Some(message[start..start + length].to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec(name: &str) -> &'static ToolSpec {
        find(name).unwrap_or_else(|| panic!("no tool {name}"))
    }

    /// The tokens of the list of the tools whose needs `kinds` meet, as `tool_list` counts them.
    fn list_tokens(kinds: &[Needs]) -> usize {
        let definitions: Vec<Value> = TOOLS
            .iter()
            .filter(|spec| spec.needs == Needs::AnySource || kinds.contains(&spec.needs))
            .map(definition)
            .collect();
        for d in &definitions {
            let tokens = schemascope_core::tokens::count(&d.to_string());
            eprintln!("{:24} {tokens}", d["name"].as_str().unwrap_or(""));
            if std::env::var_os("SHOW_DEFINITIONS").is_some() {
                eprintln!("{d}");
            }
        }
        schemascope_core::tokens::count(&json!({"tools": definitions}).to_string())
    }

    #[test]
    fn every_tool_has_a_title_and_says_whether_it_changes_anything() {
        for spec in TOOLS {
            let definition = definition(spec);
            let title = definition["title"].as_str().unwrap_or_default();
            assert!(title.starts_with(char::is_uppercase) && !title.contains('_'), "{title}");
            assert_eq!(definition["annotations"]["readOnlyHint"], spec.hints.read_only);
        }
        assert_eq!(title("describe_schema"), "Describe schema");
        assert_eq!(title("find_and_style_nodes"), "Find and style nodes");
    }

    #[test]
    fn every_server_kind_lists_its_tools_in_under_4000_tokens() {
        for (kind, needs) in [
            ("records", &[][..]),
            ("graph", &[Needs::Graph][..]),
            ("database", &[Needs::Database][..]),
            ("graph + database", &[Needs::Graph, Needs::Database][..]),
            ("graph + database + LLM", &[Needs::Graph, Needs::Database, Needs::DatabaseAndLlm][..]),
        ] {
            let tokens = list_tokens(needs);
            eprintln!("== {kind}: {tokens} tokens");
            assert!(tokens < 4_000, "{kind}: {tokens} tokens");
        }
    }

    #[test]
    fn schemas_carry_no_schemars_noise() {
        for spec in TOOLS {
            let schema = (spec.input_schema)();
            let properties = schema["properties"].as_object().cloned().unwrap_or_default();
            assert!(properties.values().all(Value::is_object), "{}: {properties:?}", spec.name);
            let text = Value::Object(schema).to_string();
            for noise in [
                "\"null\"",
                ":null",
                "\"format\":\"",
                "$ref",
                "$defs",
                "\\n",
                "additionalProperties",
            ] {
                assert!(!text.contains(noise), "{}: {noise} in {text}", spec.name);
            }
        }
    }

    #[test]
    fn the_edges_style_schema_has_the_parameters_that_parse_it() {
        let keys = |schema: Map<String, Value>| {
            (
                schema["properties"].as_object().map(|p| p.keys().cloned().collect::<Vec<_>>()),
                schema.get("required").cloned(),
            )
        };
        assert_eq!(
            keys(input_schema::<graph::StyleEdgesSchema>()),
            keys(input_schema::<graph::StyleElementsParams>())
        );
    }

    #[test]
    fn names_are_unique() {
        let mut names: Vec<&str> = TOOLS.iter().map(|s| s.name).collect();
        names.sort_unstable();
        names.dedup();
        assert_eq!(names.len(), TOOLS.len());
    }

    #[test]
    fn every_schema_is_an_object_without_noise() {
        for spec in TOOLS {
            let schema = (spec.input_schema)();
            assert_eq!(schema.get("type"), Some(&json!("object")), "{}", spec.name);
            assert!(
                !schema.contains_key("$schema") && !schema.contains_key("title"),
                "{}",
                spec.name
            );
        }
    }

    #[test]
    fn missing_parameter_is_named() {
        let Err(result) =
            parse_arguments::<DescribePropertyParams>(spec("describe_property"), json!({}))
        else {
            panic!("a missing property must be rejected");
        };
        assert!(!result.success);
        assert!(result.message.contains("`property`"), "{}", result.message);
        assert_eq!(result.data["parameter"], "property");
        assert_eq!(result.data["error"], "invalid_params");
        assert!(
            result.data["accepted"].as_array().is_some_and(|a| a.contains(&json!("source"))),
            "{}",
            result.data
        );
    }

    #[test]
    fn wrong_type_names_the_parameter() {
        let Err(result) = parse_arguments::<FindItemsParams>(
            spec("find_items"),
            json!({"selector": "type == 'x'", "limit": "five"}),
        ) else {
            panic!("a string limit must be rejected");
        };
        assert_eq!(result.data["parameter"], "limit");
        assert!(result.message.contains("`limit`"), "{}", result.message);
    }

    #[test]
    fn unknown_parameter_is_named() {
        let Err(result) = parse_arguments::<FindItemsParams>(
            spec("find_items"),
            json!({"selector": "type == 'x'", "query": "x"}),
        ) else {
            panic!("an unknown parameter must be rejected");
        };
        assert_eq!(result.data["parameter"], "query");
    }

    #[test]
    fn unknown_tool_suggests_the_closest() {
        let services = Services::new();
        let result = call_tool(&services, Caller::Ai, "describe_shema", json!({}));
        assert!(!result.success);
        assert_eq!(result.data["error"], "unknown_tool");
        assert!(result.message.contains("describe_schema"), "{}", result.message);
        assert!(!result.message.contains("report_viewport"), "{}", result.message);
    }

    #[test]
    fn arguments_must_be_an_object() {
        let result = call_tool(&Services::new(), Caller::User, "list_sources", json!(["x", 1]));
        assert!(!result.success);
        assert_eq!(result.data["error"], "invalid_params");
        assert!(result.message.contains("JSON object"), "{}", result.message);
    }

    #[test]
    fn an_unknown_tool_offers_only_the_listed_tools() {
        // No graph is served: `find_node` must not be taken for `find_nodes`.
        let result = call_tool(&Services::new(), Caller::Ai, "find_node", json!({}));
        assert_eq!(result.data["error"], "unknown_tool");
        assert!(!result.message.contains("find_nodes"), "{}", result.message);
        assert!(result.message.contains("find_items"), "{}", result.message);
    }
}
