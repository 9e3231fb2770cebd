//! Tool descriptions, with examples, as an LLM reads them (seed 000 shows the style). MCP and the
//! CLI help both use these.

/// `list_sources`.
pub const LIST_SOURCES: &str = "List the data sources being served, with their collections (graph nodes/edges, record sets, document sets), item counts and load warnings.\n\nCall this first when you do not know the source names. Example: {}";

/// `describe_schema`.
pub const DESCRIBE_SCHEMA: &str = "Describe the schema of a source: per collection its size and, per property (dot paths like `metadata.category`), the type (string, number, boolean, array with item type, object, null, or mixed with counts per type), how often it is present or null, enum values when there are few, numeric ranges, string formats (date-time, date, uuid, email, uri), cardinality and sample values. Returns JSON, or with format \"markdown\" the schema section for a system prompt, which `max_tokens` fits to a token budget.\n\nExamples:\n- What properties do the nodes have? {\"collection\": \"nodes\"}\n- Give me a compact summary for my prompt: {\"format\": \"markdown\", \"max_tokens\": 500}";

/// `sample_data`.
pub const SAMPLE_DATA: &str = "Get a few real items (nodes, edges, records, documents) to see their actual data structure before writing selectors or values. Strategies: random (default, reproducible with seed), stratified (one per value of `stratify_by`), representative (a small set that together shows every property). Long strings are truncated (marked), deep values cut (marked); edges show source/target.\n\nExamples:\n- Show me some example nodes: {\"collection\": \"nodes\"}\n- What does the data look like? {\"collection\": \"both\", \"count\": 3}\n- Show one node of each type: {\"collection\": \"nodes\", \"stratify_by\": \"type\"}";

/// `describe_property`.
pub const DESCRIBE_PROPERTY: &str = "Get detailed, exact statistics of one property (dot path): for strings the values with counts and percentages; for numbers min/max/avg/median/stdDev and a histogram; for booleans true/false shares; for arrays item type, lengths and value counts; for mixed types a breakdown with per-type stats. An unknown property returns exists:false with did-you-mean suggestions and the available properties.\n\nExamples:\n- What values does `type` have? {\"property\": \"type\"}\n- Describe edge weights: {\"property\": \"weight\", \"collection\": \"edges\"}\n- Nested: {\"property\": \"metrics.cpu.current\", \"bins\": 5}";

/// `query_schema`.
pub const QUERY_SCHEMA: &str = "Get the JSON Schema (draft 2020-12) of a record, inferred from all of its values (or of a whole collection): required fields, types (with null), integer vs number, array item types, nested objects, enums for few repeated strings, observed minimum/maximum; plus the record's metadata and the latest value as an example. Use it before setting a record's value.\n\nExamples:\n- What fields does the temperature record have? {\"record_name\": \"server::Temperature\"}\n- Schema without example: {\"record_name\": \"server::Config\", \"include_example\": false}";

/// `validate_value`.
pub const VALIDATE_VALUE: &str = "Check a proposed value against a record's inferred schema before setting it. Returns valid plus every error (wrong type, missing required field) and warning (outside the observed range, unseen enum value or field — often a unit mix-up or typo) with its JSON path, expected and actual.\n\nExample: {\"record_name\": \"server::Temperature\", \"value\": {\"celsius\": 22.5, \"sensor_id\": \"sensor-01\", \"timestamp\": 1730649600}}";

/// `find_items`.
pub const FIND_ITEMS: &str = "Find items matching a JMESPath selector evaluated on each item's data (the root is the data itself: write `type == 'server'`, not `data.type`). String literals in 'single quotes', numbers in backticks, odd property names in \"double quotes\". Returns the count, matching ids and the first few items. A syntax error is reported with its position, never as zero matches.\n\nExamples:\n- All database nodes: {\"selector\": \"type == 'database'\"}\n- Busy servers: {\"selector\": \"type == 'server' && cpu > `0.8`\"}\n- Slow links: {\"selector\": \"latency > `100`\", \"collection\": \"edges\"}\n- Tagged critical: {\"selector\": \"contains(tags, 'critical')\"}";

/// `search_schema_docs`.
pub const SEARCH_SCHEMA_DOCS: &str = "Search the documentation of a SQL source's tables (per-table docs: purpose, columns, common queries, relationships, examples; generated from the catalog where none is written) for the chunks most relevant to a question, ranked by BM25 with a relevance from 0 to 1. Use it to find which tables and columns a question is about.\n\nExamples:\n- Which tables hold invoices? {\"question\": \"invoice totals per customer\"}\n- More hits: {\"question\": \"tracks by genre\", \"top_k\": 10}";

/// `get_schema_context`.
pub const GET_SCHEMA_CONTEXT: &str = "Get the schema context to write a query for a question: the full schema for small databases, else a focused one (the most relevant tables, their foreign-key neighbours, and the retrieved documentation), within a token budget. The metadata says which strategy was used, the tables included and the average relevance.\n\nExamples:\n- {\"question\": \"top 5 customers by total spent\", \"max_tokens\": 2000}\n- {\"question\": \"how many tracks per genre\"}";

/// `execute_query`.
pub const EXECUTE_QUERY: &str = "Run one read-only SQL statement on a SQL source and get its columns and rows (at most `max_rows`, default 1,000, and about `max_bytes` of data; `truncated` says when more were cut). Writes, several statements and forbidden functions are refused. Failures carry a `class`: syntax (fix the query and retry), refused, timeout, auth or resource (retrying the same query will not help).\n\nExamples:\n- {\"query\": \"SELECT BillingCountry, SUM(Total) AS revenue FROM Invoice GROUP BY 1 ORDER BY 2 DESC LIMIT 5\"}\n- {\"query\": \"SELECT Name FROM Genre\", \"max_rows\": 50}";
