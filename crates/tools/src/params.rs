//! Tool parameters: one struct per tool, shared by MCP (which derives input schemas from them),
//! the CLI and the tests. Field names are the contract's snake_case names.

use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::Value;

/// Parameters of `list_sources`.
#[derive(Debug, Clone, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ListSourcesParams {}

/// Parameters of `describe_schema`.
#[derive(Debug, Clone, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct DescribeSchemaParams {
    /// Source name (optional when only one source is served). See list_sources.
    #[serde(default)]
    pub source: Option<String>,
    /// Collection to describe, e.g. "nodes", "edges", a record set's name, or "both"/"all"
    /// (default: every collection of the source).
    #[serde(default)]
    pub collection: Option<String>,
    /// Output format: "json" (default, structured) or "markdown" (the system-prompt section, with
    /// its token count).
    #[serde(default)]
    pub format: Option<SchemaFormat>,
    /// Token budget for the markdown rendering (o200k_base tokens). Samples and then the rarest
    /// properties are dropped to fit, always saying "+N more".
    #[serde(default)]
    pub max_tokens: Option<usize>,
}

/// Rendering of describe_schema.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum SchemaFormat {
    /// Structured JSON.
    #[default]
    Json,
    /// Only the markdown section.
    Markdown,
}

/// Sampling strategy of `sample_data`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum StrategyParam {
    /// Uniformly random (reproducible with `seed`).
    #[default]
    Random,
    /// One item per distinct value of `stratify_by`.
    Stratified,
    /// A small set that together shows every property path.
    Representative,
}

/// Parameters of `sample_data`.
#[derive(Debug, Clone, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SampleDataParams {
    /// Source name (optional when only one source is served).
    #[serde(default)]
    pub source: Option<String>,
    /// What to sample: "nodes", "edges", "both" (graphs), or a collection name (default: all).
    #[serde(default)]
    pub collection: Option<String>,
    /// Items per collection (default 3, at most 100).
    #[serde(default)]
    pub count: Option<usize>,
    /// "random" (default), "stratified" (needs stratify_by) or "representative".
    #[serde(default)]
    pub strategy: Option<StrategyParam>,
    /// Property (dot path) to stratify by, e.g. "type": one item per value. Implies "stratified".
    #[serde(default)]
    pub stratify_by: Option<String>,
    /// Random seed, for reproducible samples (a fresh one is drawn and reported otherwise).
    #[serde(default)]
    pub seed: Option<u64>,
    /// Longest string shown before truncation (default 100 characters).
    #[serde(default)]
    pub max_string_length: Option<usize>,
    /// For record sets: only values of this record.
    #[serde(default)]
    pub record_name: Option<String>,
}

/// Parameters of `describe_property`.
#[derive(Debug, Clone, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct DescribePropertyParams {
    /// Source name (optional when only one source is served).
    #[serde(default)]
    pub source: Option<String>,
    /// Property to inspect, as a dot path: "type", "metadata.category", "tags", "readings[].v".
    pub property: String,
    /// Collection: "nodes" (default for graphs), "edges", a record set or document set name.
    #[serde(default)]
    pub collection: Option<String>,
    /// For record sets: describe the property within this record's values only.
    #[serde(default)]
    pub record_name: Option<String>,
    /// Most distinct values listed (default 20, at most 50).
    #[serde(default)]
    pub limit: Option<usize>,
    /// Histogram bins for numbers (default: chosen by the Freedman–Diaconis rule, at most 20).
    /// Fixes the number of bins; skewed data still gets log-scale or outlier bins
    /// (`histogramScale` says which) when 4 or more are asked: 1 to 3 bins are always
    /// equal-width, too few to tell a skew from its bins.
    #[serde(default)]
    pub bins: Option<usize>,
    /// A value to look up (optional): whether the property stores it exactly, and the stored
    /// values closest to it, case, accents, word order and typos aside ("bossa nova" →
    /// "Bossa Nova"). Check a filter value with it before writing the query.
    #[serde(default)]
    pub value: Option<String>,
}

/// Parameters of `query_schema`.
#[derive(Debug, Clone, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct QuerySchemaParams {
    /// Source name (optional when only one source is served).
    #[serde(default)]
    pub source: Option<String>,
    /// Record (key) to infer the schema of, from all of its values, e.g. "server::Temperature".
    /// Required when the record set holds several records; without it, the only record, or the
    /// schema of a collection's items (graph nodes, documents, table rows).
    #[serde(default)]
    pub record_name: Option<String>,
    /// Collection (default: the only record set, or the first collection).
    #[serde(default)]
    pub collection: Option<String>,
    /// Include the latest value as `example` (default true).
    #[serde(default)]
    pub include_example: Option<bool>,
    /// Live AimDB records only: merge the schema over at most this many recent values (default
    /// 20, at most 100): those already seen plus the current one and any produced within
    /// `window_ms`.
    #[serde(default)]
    pub samples: Option<usize>,
    /// Live AimDB records only: how long to wait for more values when fewer than `samples` were
    /// seen (default 1000 ms, at most 60000; 0 takes only the current value).
    #[serde(default)]
    pub window_ms: Option<u64>,
}

/// Parameters of `validate_value`.
#[derive(Debug, Clone, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ValidateValueParams {
    /// Source name (optional when only one source is served).
    #[serde(default)]
    pub source: Option<String>,
    /// Record whose inferred schema the value must match (required when the record set holds
    /// several records).
    #[serde(default)]
    pub record_name: Option<String>,
    /// Collection (default as for query_schema).
    #[serde(default)]
    pub collection: Option<String>,
    /// The proposed value.
    pub value: Value,
    /// Live AimDB records only: values the schema is merged over, as for query_schema.
    #[serde(default)]
    pub samples: Option<usize>,
    /// Live AimDB records only: how long to wait for more values, as for query_schema (default
    /// 1000 ms).
    #[serde(default)]
    pub window_ms: Option<u64>,
}

/// Parameters of `find_items`.
#[derive(Debug, Clone, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct FindItemsParams {
    /// Source name (optional when only one source is served).
    #[serde(default)]
    pub source: Option<String>,
    /// JMESPath selector evaluated on each item's data, e.g. "type == 'server' && cpu > `0.8`".
    pub selector: String,
    /// Collection to search (default "nodes" for graphs, else the first collection).
    #[serde(default)]
    pub collection: Option<String>,
    /// Matching items returned in full (default 5, at most 50); all ids are listed up to 1000.
    #[serde(default)]
    pub limit: Option<usize>,
}

/// Parameters of the schema system prompt.
#[derive(Debug, Clone, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SystemPromptParams {
    /// Source name (optional when only one source is served).
    #[serde(default)]
    pub source: Option<String>,
    /// Token budget for the schema section.
    #[serde(default)]
    pub max_tokens: Option<usize>,
}

/// Parameters of `search_schema_docs`.
#[derive(Debug, Clone, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SearchSchemaDocsParams {
    /// Source name (a SQL source; optional when only one source is served).
    #[serde(default)]
    pub source: Option<String>,
    /// The question, in words, e.g. "total sales per country last year".
    pub question: String,
    /// Chunks to return (default 5, at most 50).
    #[serde(default)]
    pub top_k: Option<usize>,
}

/// Parameters of `get_schema_context`.
#[derive(Debug, Clone, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct GetSchemaContextParams {
    /// Source name (a SQL source; optional when only one source is served).
    #[serde(default)]
    pub source: Option<String>,
    /// The question the context is for.
    pub question: String,
    /// Token budget of the context (o200k_base tokens); tables and chunks that do not fit are
    /// left out and listed.
    #[serde(default)]
    pub max_tokens: Option<usize>,
    /// Chunks to retrieve (default from the configuration: 5; at most 50).
    #[serde(default)]
    pub top_k: Option<usize>,
}

/// Parameters of `docs generate`.
#[derive(Debug, Clone, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct GenerateDocsParams {
    /// Source name (a SQL source).
    #[serde(default)]
    pub source: Option<String>,
    /// Directory to write (default: the source's docs directory).
    #[serde(default)]
    pub dir: Option<String>,
    /// Overwrite files edited since they were generated.
    #[serde(default)]
    pub force: bool,
}

/// Parameters of `execute_query`.
#[derive(Debug, Clone, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ExecuteQueryParams {
    /// Source name (a SQL source; optional when only one source is served).
    #[serde(default)]
    pub source: Option<String>,
    /// The query: one read-only SQL statement.
    pub query: Value,
    /// Most rows returned (default 1,000; at most 10,000). More rows set `truncated`.
    #[serde(default)]
    pub max_rows: Option<usize>,
    /// Most bytes of row data returned, as JSON (default 1,000,000). More set `truncated`.
    #[serde(default)]
    pub max_bytes: Option<usize>,
    /// Statement timeout in milliseconds (default 30,000; at most 300,000).
    #[serde(default)]
    pub timeout_ms: Option<u64>,
}

/// Parameters of `validate_query`.
#[derive(Debug, Clone, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ValidateQueryParams {
    /// Source name (a SQL source; optional when only one source is served).
    #[serde(default)]
    pub source: Option<String>,
    /// The query: an SQL string, or a structured-query object
    /// (`{"fields": [{"fieldCaption": "Genre.Name"}, {"fieldCaption": "Track.TrackId", "function": "COUNT"}], "options": {"rowLimit": 10}}`).
    pub query: Value,
    /// The question the query answers (optional): a wrong column name is then matched by
    /// meaning as well as spelling.
    #[serde(default)]
    pub question: Option<String>,
}

/// Parameters of `ask`.
#[derive(Debug, Clone, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct AskParams {
    /// Source name (a SQL source; optional when only one source is served).
    #[serde(default)]
    pub source: Option<String>,
    /// The question, in words.
    pub question: String,
    /// Earlier turns, oldest first, so a follow-up ("and in 2024?") can build on them.
    #[serde(default)]
    pub history: Option<Vec<schemascope_agent::graph::HistoryTurn>>,
}
