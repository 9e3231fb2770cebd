//! Tool parameters: one struct per tool, shared by MCP (which derives input schemas from them),
//! the CLI (which writes them as the arguments it passes through the tool table) and the tests. Field names are the contract's snake_case names.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// Parameters of `list_sources`.
#[derive(Debug, Clone, Default, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ListSourcesParams {
    /// Only this source, with all its warnings (default: all, 20 warnings each).
    #[serde(default)]
    pub source: Option<String>,
}

/// Parameters of `describe_schema`.
#[derive(Debug, Clone, Default, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct DescribeSchemaParams {
    /// Source name (optional when only one source is served).
    #[serde(default)]
    pub source: Option<String>,
    /// One collection (default: all).
    #[serde(default)]
    pub collection: Option<String>,
    /// Output format (default json).
    #[serde(default)]
    pub format: Option<SchemaFormat>,
    /// Token budget of the markdown.
    #[serde(default)]
    pub max_tokens: Option<usize>,
}

/// Rendering of describe_schema.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum SchemaFormat {
    /// Structured JSON.
    #[default]
    Json,
    /// Only the markdown section.
    Markdown,
}

/// Sampling strategy of `sample_data`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize, Serialize, JsonSchema)]
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
#[derive(Debug, Clone, Default, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SampleDataParams {
    /// Source name (optional when only one source is served).
    #[serde(default)]
    pub source: Option<String>,
    /// nodes, edges, both, or a collection (default: all).
    #[serde(default)]
    pub collection: Option<String>,
    /// Items per collection (default 3).
    #[serde(default)]
    pub count: Option<usize>,
    /// random (default), stratified (one per value of `stratify_by`) or representative (few
    /// items showing every property).
    #[serde(default)]
    pub strategy: Option<StrategyParam>,
    /// Property: one item per value.
    #[serde(default)]
    pub stratify_by: Option<String>,
    /// Repeats a sample (the answer gives the seed it drew).
    #[serde(default)]
    #[schemars(description = "")]
    pub seed: Option<u64>,
    /// Longest string shown (default 100).
    #[serde(default)]
    #[schemars(description = "")]
    pub max_string_length: Option<usize>,
    /// Only this record's values.
    #[serde(default)]
    pub record_name: Option<String>,
}

/// Parameters of `describe_property`.
#[derive(Debug, Clone, Default, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct DescribePropertyParams {
    /// Source name (optional when only one source is served).
    #[serde(default)]
    pub source: Option<String>,
    /// Dot path: `type`, `metadata.category`, `readings[].v`.
    pub property: String,
    /// Default: nodes on a graph, else the first collection.
    #[serde(default)]
    #[schemars(description = "")]
    pub collection: Option<String>,
    /// Only this record's values.
    #[serde(default)]
    pub record_name: Option<String>,
    /// Values listed (default 20).
    #[serde(default)]
    pub limit: Option<usize>,
    /// Histogram bins (default: automatic). Skewed data gets log-scale or outlier bins when 4 or
    /// more are asked (`histogramScale` says which).
    #[schemars(description = "")]
    #[serde(default)]
    pub bins: Option<usize>,
    /// A value to look up, case, accents, word order and typos aside ("bossa nova" →
    /// "Bossa Nova").
    #[serde(default)]
    pub value: Option<String>,
}

/// Parameters of `query_schema`.
#[derive(Debug, Clone, Default, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct QuerySchemaParams {
    /// Source name (optional when only one source is served).
    #[serde(default)]
    pub source: Option<String>,
    /// Key or Rust type name: needed when there are several (the error lists them).
    #[serde(default)]
    pub record_name: Option<String>,
    /// Default: the only record set, or the first collection.
    #[serde(default)]
    #[schemars(description = "")]
    pub collection: Option<String>,
    /// Default true.
    #[serde(default)]
    pub include_example: Option<bool>,
    /// Default 20.
    #[serde(default)]
    pub samples: Option<usize>,
    /// Default 1000; 0 takes the current value only.
    #[serde(default)]
    pub window_ms: Option<u64>,
}

/// Parameters of `validate_value`.
#[derive(Debug, Clone, Default, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ValidateValueParams {
    /// Source name (optional when only one source is served).
    #[serde(default)]
    pub source: Option<String>,
    /// As for query_schema.
    #[serde(default)]
    #[schemars(description = "")]
    pub record_name: Option<String>,
    /// As for query_schema.
    #[serde(default)]
    #[schemars(description = "")]
    pub collection: Option<String>,
    /// The proposed value.
    #[schemars(description = "")]
    pub value: Value,
    /// As for query_schema.
    #[serde(default)]
    #[schemars(description = "")]
    pub samples: Option<usize>,
    /// As for query_schema.
    #[schemars(description = "")]
    #[serde(default)]
    pub window_ms: Option<u64>,
}

/// Parameters of `set_record`.
#[derive(Debug, Clone, Default, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SetRecordParams {
    /// Source name (optional when only one source is served).
    #[serde(default)]
    pub source: Option<String>,
    /// Key or Rust type name of a writable record.
    pub record_name: String,
    /// The whole new value, every required field (query_schema's example is a template).
    pub value: Value,
    /// Default false: check it and show what would be sent, sending nothing.
    #[serde(default)]
    pub dry_run: Option<bool>,
}

/// Parameters of `discover_instances`.
#[derive(Debug, Clone, Default, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct DiscoverInstancesParams {}

/// Parameters of `find_items`.
#[derive(Debug, Clone, Default, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct FindItemsParams {
    /// Source name (optional when only one source is served).
    #[serde(default)]
    pub source: Option<String>,
    /// JMESPath, e.g. `type == 'server' && cpu > \`0.8\``.
    #[schemars(description = "")]
    pub selector: String,
    /// Default: nodes on a graph, else the first collection.
    #[serde(default)]
    #[schemars(description = "")]
    pub collection: Option<String>,
    /// Items shown in full (default 5; ids up to 1000).
    #[serde(default)]
    pub limit: Option<usize>,
}

/// Parameters of the schema system prompt.
#[derive(Debug, Clone, Default, Deserialize, Serialize, JsonSchema)]
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
#[derive(Debug, Clone, Default, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SearchSchemaDocsParams {
    /// Source name (a SQL source; optional when only one source is served).
    #[serde(default)]
    pub source: Option<String>,
    /// The question, in words.
    #[schemars(description = "")]
    pub question: String,
    /// Chunks returned (default 5).
    #[serde(default)]
    pub top_k: Option<usize>,
}

/// Parameters of `get_schema_context`.
#[derive(Debug, Clone, Default, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct GetSchemaContextParams {
    /// Source name (a SQL source; optional when only one source is served).
    #[serde(default)]
    pub source: Option<String>,
    /// The question the context is for.
    #[schemars(description = "")]
    pub question: String,
    /// Token budget; what does not fit is left out and listed.
    #[serde(default)]
    pub max_tokens: Option<usize>,
    /// Chunks retrieved (default 5).
    #[serde(default)]
    pub top_k: Option<usize>,
}

/// Parameters of `docs generate`.
#[derive(Debug, Clone, Default, Deserialize, Serialize, JsonSchema)]
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
#[derive(Debug, Clone, Default, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ExecuteQueryParams {
    /// Source name (a SQL source; optional when only one source is served).
    #[serde(default)]
    pub source: Option<String>,
    /// One read-only SQL statement.
    pub query: Value,
    /// Default 1000.
    #[serde(default)]
    pub max_rows: Option<usize>,
    /// Bytes of rows as JSON (default 1000000).
    #[serde(default)]
    pub max_bytes: Option<usize>,
    /// Default 30000.
    #[serde(default)]
    pub timeout_ms: Option<u64>,
}

/// Parameters of `validate_query`.
#[derive(Debug, Clone, Default, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ValidateQueryParams {
    /// Source name (a SQL source; optional when only one source is served).
    #[serde(default)]
    pub source: Option<String>,
    /// SQL, or a structured query: `{"fields": [{"fieldCaption": "Table.Column", "function"?,
    /// "sortDirection"?}], "options": {"rowLimit"?}}`.
    pub query: Value,
    /// The question it answers: a wrong column name is then matched by meaning too.
    #[serde(default)]
    pub question: Option<String>,
}

/// Parameters of `record_example`.
#[derive(Debug, Clone, Default, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RecordExampleParams {
    /// Source name (a SQL source; optional when only one source is served).
    #[serde(default)]
    pub source: Option<String>,
    /// The question, as the user asked it.
    pub question: String,
    /// The SQL whose answer the user confirmed.
    pub sql: String,
}

/// Parameters of `ask`.
#[derive(Debug, Clone, Default, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct AskParams {
    /// Source name (a SQL source; optional when only one source is served).
    #[serde(default)]
    pub source: Option<String>,
    /// The question, in words.
    #[schemars(description = "")]
    pub question: String,
    /// Earlier turns, oldest first, for a follow-up ("and in 2024?").
    #[serde(default)]
    pub history: Option<Vec<schemascope_agent::graph::HistoryTurn>>,
}
