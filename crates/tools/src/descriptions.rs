//! Tool descriptions as an LLM reads them. MCP and the CLI help both use these.
//!
//! Every server sends them on every turn of a conversation, so each says what the tool does and
//! what a model needs to choose it and call it right, once: the largest server (graph, database
//! and an LLM for `ask`, 27 tools) lists in under 4,000 tokens (`schemascope tools`; the bound is
//! tested per server kind in `tool_table.rs` and `tests/it/tool_list.rs`). Parameters are
//! described in their structs (`params.rs`, the graph session's `params.rs`), a parameter only
//! where its name and type do not say enough.
//!
//! What was cut when the descriptions were shortened (issue 29), and where a model still learns
//! it:
//! - The `source` parameter, described in every tool (27 times): once in the server's
//!   instructions (`instructions.rs`); a missing or unknown source is refused listing the names.
//! - Examples of calls: kept only where they prevent a known mistake — the JMESPath root
//!   (`type == 'server'`, not `data.type`) and backticks for numbers (find_items, find_nodes,
//!   and the instructions). The rest showed parameters the schema already names.
//! - Result fields listed in full (describe_schema's, query_graph's, list_algorithms'): the
//!   result itself shows them; descriptions name what a model chooses the tool for.
//! - Enum values' descriptions (strategies, camera presets, query_graph's parts, layer scopes):
//!   the values stay in the schema's `enum`; a wrong one is refused naming the accepted ones.
//! - Limits and defaults (256 style layers, the histogram's skew rules, `max_string_length`'s
//!   default, result caps of 100 ids): the answer says when one applies (`removedLayer`,
//!   `histogramScale`, `truncated`, "+N more").
//! - execute_query's PostgreSQL value rules: each column says its type (`columnTypes`), and a
//!   number a double cannot hold is its exact text, counted in `exactTextNumbers`.
//! - What each tool returns, field by field (ask's answer, query, rows, `shown_entities` and
//!   trace; validate_value's `valid`; a sample's edges with source and target): the result.
//! - That a syntax error names its position, that docs are generated where none are written: the
//!   error and the result say so when it happens.
//! - validate_query's structured-query example: the `query` parameter keeps its shape in brief;
//!   a wrong field is refused naming the accepted ones.
//! - The style fields of find_and_style_nodes/edges, typed one by one (500 tokens each): named
//!   once in the `style` parameter; an unknown one is refused listing the accepted ones.
//! - The ask pipeline's environment variables: `ask` is listed only when an LLM is configured.
//! - Workflows (pagerank, then describe_property, then a style): in the instructions' workflow.

/// `list_sources`.
pub const LIST_SOURCES: &str = "Served sources: collections, counts, descriptions, load warnings.";

/// `describe_schema`.
pub const DESCRIBE_SCHEMA: &str = "The schema of a source: per collection, per property (dot path) its type, how often present or null, enum values, ranges, formats and samples. With format \"markdown\", a compact summary for a prompt, fitted to `max_tokens`.";

/// `sample_data`.
pub const SAMPLE_DATA: &str = "A few real items, to see their actual structure before writing selectors or values. Long strings and deep values are cut (marked).";

/// `describe_property`.
pub const DESCRIBE_PROPERTY: &str = "Exact statistics of one property: values with counts; for numbers min, max, mean, median, stdDev and a histogram; per type when mixed. An unknown property answers with did-you-mean. With `value`: whether that value is stored exactly, and the closest stored values (check a filter value before writing a query).";

/// `query_schema`.
pub const QUERY_SCHEMA: &str = "The JSON Schema of a record inferred from all its values (or of a collection's items): types, required fields; observed ranges and values as `x-observed`; the latest value as `example`. Use it before setting a record's value. A live AimDB record's is merged over up to `samples` recent values, waiting `window_ms` for new ones.";

/// `validate_value`.
pub const VALIDATE_VALUE: &str = "Check a proposed value against a record's inferred schema (as query_schema): errors (wrong type, missing field) and warnings (outside the observed values or range, unseen fields: often a unit mix-up or typo), each with its JSON path.";

/// `set_record`.
pub const SET_RECORD: &str = "Set a writable record of a live AimDB instance to a whole new value. Call query_schema first: field names carry units (`celsius`), the example is a template, every required field must be given. The value is checked as validate_value does and refused before anything is sent if a type is wrong or a field missing; `dry_run` shows what would be sent. The answer reads the record back and says what changed.";

/// `discover_instances`.
pub const DISCOVER_INSTANCES: &str = "List the AimDB instances in the directories this server allows: each socket path with its AimX protocol version and records (writable ones marked). Any tool takes a socket path as `source`.";

/// `find_items`.
pub const FIND_ITEMS: &str = "Find items matching a JMESPath selector evaluated on each item's data. The data is the root: write `type == 'server'`, not `data.type`. Strings in 'single quotes', numbers in backticks: cpu > `0.8`. Returns the count, ids and the first items.";

/// `search_schema_docs`.
pub const SEARCH_SCHEMA_DOCS: &str = "Search a SQL source's table documentation for the chunks most relevant to a question, with relevance from 0 to 1: which tables and columns a question is about.";

/// `get_schema_context`.
pub const GET_SCHEMA_CONTEXT: &str = "The schema to write a query for a question: the whole schema of a small database, else the relevant tables, their foreign-key neighbours and docs, within `max_tokens`. Stored values the question names loosely are listed as stored (\"bossa nova\" → 'Bossa Nova').";

/// `execute_query`.
pub const EXECUTE_QUERY: &str = "Run one read-only SQL statement (on a database, a table file or the collections held in memory): columns, their types and rows (`truncated` when cut at `max_rows` or `max_bytes`). A failure's `class` says whether to fix the query (syntax) or not to retry it (refused, timeout, auth, resource).";

/// `validate_query`.
pub const VALIDATE_QUERY: &str = "Check a query without running it: one read-only statement; tables, columns and functions exist in this engine (else the right ones); GROUP BY consistent; filter values stored (\"Californa\" → \"California\"); joins on foreign keys; then the engine compiles it. Returns valid, errors with suggestions, warnings and `rewritten_query` (a limit added, a business metric's name expanded to its SQL).";

/// `ask`.
pub const ASK: &str = "Answer a question over a source with the server's LLM: it reads the schema, writes, validates and runs a query (retrying on errors) and summarises the rows.";

/// `record_example`.
pub const RECORD_EXAMPLE: &str = "Record a question and the SQL that answered it as a verified example, shown with similar questions from then on. Only after the user confirmed the answer is right. The SQL is validated first.";

/// `query_graph`.
pub const QUERY_GRAPH: &str = "The graph session's state: a summary (counts, layout, styles, selection, algorithms run), the view (camera, 2D/3D), the layout, or all. Check the view before changing it.";

/// `find_nodes`.
pub const FIND_NODES: &str = "Find nodes matching a JMESPath selector over their data plus `algorithmResults` (after run_algorithm). The data is the root: `type == 'server'`, not `data.type`; numbers in backticks. Returns the count, ids and the first nodes. To sort (top 10 by PageRank) or group, use execute_query.";

/// `find_edges`.
pub const FIND_EDGES: &str = "Find edges as find_nodes finds nodes; they show source and target.";

/// `find_and_style_nodes`.
pub const FIND_AND_STYLE_NODES: &str = "Style the nodes a selector (as find_nodes) or `ids` match, as a new style layer; later layers win, and a `layer_name` in use is replaced. `color_by`/`size_by` map a property to colour/size. If nothing matches, no layer is added and success is false.";

/// `find_and_style_edges`.
pub const FIND_AND_STYLE_EDGES: &str =
    "Style the edges a selector or `ids` match, as find_and_style_nodes does nodes.";

/// `clear_styles`.
pub const CLEAR_STYLES: &str = "Remove the style layer `layer_name`, or without it every layer of `layers`: ai (default, those an AI added), user (the person's) or all. describe_styles lists them.";

/// `describe_styles`.
pub const DESCRIBE_STYLES: &str = "The style layers in order (later win): name, who added it, selector, summary; `verbose` for full styles; `compute_for` an element id gives its merged style and which layer set what (\"why is node-5 red?\").";

/// `describe_selection`.
pub const DESCRIBE_SELECTION: &str = "The nodes and edges the person selected in the web view: ids, or with `include_data` their data.";

/// `select`.
pub const SELECT: &str = "Change the selection the web view shows: `ids`, or a `selector` over nodes (over edges with elements \"edges\"); mode replace (default), add, remove or clear.";

/// `set_layout`.
pub const SET_LAYOUT: &str = "Lay the graph out. Options: forceDirected {iterations, seed, tolerance}, circular {radius}, random {seed, size}, spiral or grid {spacing}, shell {shells: nodes per ring, spacing}, fixed {x, y, z: node property paths}. Says whether it settled.";

/// `set_dimension`.
pub const SET_DIMENSION: &str = "Switch the view to 2D or 3D.";

/// `set_camera`.
pub const SET_CAMERA: &str =
    "Move the camera to a `preset`, or to `position` looking at `target` ([x, y, z]).";

/// `zoom_to_nodes`.
pub const ZOOM_TO_NODES: &str = "Frame some nodes (`ids` or a `selector`) in the view.";

/// `list_algorithms`.
pub const LIST_ALGORITHMS: &str = "The graph algorithms with their options and the properties they write, the graph's direction, past runs (`stale` when the data changed since) and the algorithm properties usable now.";

/// `run_algorithm`.
pub const RUN_ALGORITHM: &str = "Run a graph algorithm, writing its results on each node or edge under `algorithmResults.schemascope.<type>.<name>` for selectors and styles. Types: degree, pagerank, betweenness, closeness, components, louvain (options seed, resolution; method \"networkx\" for networkx's), clustering, shortestPath {source, target}, minimumSpanningTree. Options weight (an edge property) and directed (default: the graph's own direction); betweenness k: sample k sources.";
