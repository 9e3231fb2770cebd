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
pub const QUERY_SCHEMA: &str = "Get the JSON Schema (draft 2020-12) of a record, inferred from all of its values (or of a collection's items): the constraints are type facts only — types (with null), integer vs number, required fields (present in every value), array item types, nested objects. What was only observed is annotation, ignored by validators: `x-observed` {minimum, maximum, values (few repeated strings)} and `format`; new values may go beyond it. Plus the record's metadata and the latest value as an example. Use it before setting a record's value. A record set holding several records needs `record_name` (the error lists them); with one record, it is used. On a live AimDB source the schema is merged over up to `samples` values (default 20): those seen, the current one, and any produced within `window_ms` (default 1000); a record may be named by its key or its Rust type name.\n\nExamples:\n- What fields does the temperature record have? {\"record_name\": \"server::Temperature\"}\n- Schema without example: {\"record_name\": \"server::Config\", \"include_example\": false}\n- Live record, more values: {\"record_name\": \"sensors.outdoor\", \"samples\": 50, \"window_ms\": 5000}";

/// `validate_value`.
pub const VALIDATE_VALUE: &str = "Check a proposed value against a record's inferred schema (as query_schema) before setting it. Returns valid (exactly a standard JSON Schema 2020-12 validator's verdict) plus every error (wrong type, missing required field) and warning (beyond what `x-observed` or `format` records: outside the observed range, a string not among the observed values, an unseen field — often a unit mix-up or typo) with its JSON path, expected and actual. A record set holding several records needs `record_name`.\n\nExample: {\"record_name\": \"server::Temperature\", \"value\": {\"celsius\": 22.5, \"sensor_id\": \"sensor-01\", \"timestamp\": 1730649600}}";

/// `find_items`.
pub const FIND_ITEMS: &str = "Find items matching a JMESPath selector evaluated on each item's data (the root is the data itself: write `type == 'server'`, not `data.type`). String literals in 'single quotes', numbers in backticks, odd property names in \"double quotes\". Returns the count, matching ids and the first few items. A syntax error is reported with its position, never as zero matches.\n\nExamples:\n- All database nodes: {\"selector\": \"type == 'database'\"}\n- Busy servers: {\"selector\": \"type == 'server' && cpu > `0.8`\"}\n- Slow links: {\"selector\": \"latency > `100`\", \"collection\": \"edges\"}\n- Tagged critical: {\"selector\": \"contains(tags, 'critical')\"}";

/// `search_schema_docs`.
pub const SEARCH_SCHEMA_DOCS: &str = "Search the documentation of a SQL source's tables (per-table docs: purpose, columns, common queries, relationships, examples; generated from the catalog where none is written) for the chunks most relevant to a question, ranked by BM25 with a relevance from 0 to 1. Use it to find which tables and columns a question is about.\n\nExamples:\n- Which tables hold invoices? {\"question\": \"invoice totals per customer\"}\n- More hits: {\"question\": \"tracks by genre\", \"top_k\": 10}";

/// `get_schema_context`.
pub const GET_SCHEMA_CONTEXT: &str = "Get the schema context to write a query for a question: the full schema for small databases, else a focused one (the most relevant tables, their foreign-key neighbours, and the retrieved documentation), within a token budget. The metadata says which strategy was used, the tables included and the average relevance.\n\nExamples:\n- {\"question\": \"top 5 customers by total spent\", \"max_tokens\": 2000}\n- {\"question\": \"how many tracks per genre\"}";

/// `execute_query`.
pub const EXECUTE_QUERY: &str = "Run one read-only SQL statement on a SQL source and get its columns and rows (at most `max_rows`, default 1,000, and about `max_bytes` of data; `truncated` says when more were cut). Writes, several statements and forbidden functions are refused. On graph, record and document sources the query is a JMESPath selector and the rows are the matching items. Failures carry a `class`: syntax (fix the query and retry), refused, timeout, auth or resource (retrying the same query will not help). `columnTypes` names each column's type. PostgreSQL values: numeric and float values are JSON numbers when the number is exactly the stored value, else its exact text as a string (more digits than a double holds, NaN, Infinity; `exactTextNumbers` counts them per column); json/jsonb are JSON, a number in them that a double cannot hold exactly being its exact text; arrays are JSON arrays of their elements read by the same rules; domains read as their base type; every other type is its PostgreSQL text (ISO dates, bytea as \\x hex).\n\nExamples:\n- {\"query\": \"SELECT BillingCountry, SUM(Total) AS revenue FROM Invoice GROUP BY 1 ORDER BY 2 DESC LIMIT 5\"}\n- {\"query\": \"SELECT Name FROM Genre\", \"max_rows\": 50}";

/// `validate_query`.
pub const VALIDATE_QUERY: &str = "Check a query against a SQL source before running it, without an LLM: one read-only statement; every table and column exists (with did-you-mean suggestions); aggregation and GROUP BY are consistent; filter values exist in the data (\"Californa\" → \"California\"); joins follow foreign keys; a limit is added to large unbounded results (`rewritten_query`). Accepts SQL or a structured query; on graph, record and document sources, a JMESPath selector (or {\"selector\", \"collection\"}) whose syntax and property names are checked. Returns {valid, errors: [{kind, message, location, suggestion}], warnings, rewritten_query}.\n\nExamples:\n- {\"query\": \"SELECT BillingCountry, SUM(Total) FROM Invoice GROUP BY BillingCountry\"}\n- {\"query\": {\"fields\": [{\"fieldCaption\": \"Genre.Name\"}, {\"fieldCaption\": \"Track.TrackId\", \"function\": \"COUNT\", \"sortDirection\": \"DESC\", \"sortPriority\": 1}], \"options\": {\"rowLimit\": 5}}}";

/// `ask`.
pub const ASK: &str = "Answer a question about a SQL source: the pipeline fetches the (focused) schema, has the LLM write a query, validates it locally, runs it, and has the LLM summarise the rows — retrying with the exact errors when validation or execution fails (3 attempts each). Returns the answer, the final query, its rows, the values the answer shows (`shown_entities`, pass them back in `history` for follow-ups) and a trace of every step. Progress notifications carry each step's thought. Needs an LLM: SCHEMASCOPE_LLM_MODEL with OPENAI_BASE_URL/OPENAI_API_KEY or ANTHROPIC_API_KEY.\n\nExamples:\n- {\"question\": \"Which 5 customers spent the most?\"}\n- {\"question\": \"and in 2024?\", \"history\": [{\"question\": \"Revenue per country in 2023?\", \"answer\": \"…\", \"shown_entities\": {\"BillingCountry\": [\"USA\", \"Canada\"]}}]}";

/// `query_graph`.
pub const QUERY_GRAPH: &str = "Get information about the graph session: `nodeCount`, `edgeCount`, `currentLayout`, `summary` (default: counts, layout, 2D/3D, style layers, selection, algorithms run), `view` (2D/3D mode, camera position/target/distance, active preset, viewport size), `layout` (type, options, settled, available layouts) or `all`. Check the view before switching modes: it may already be as asked.\n\nExamples:\n- How big is the graph? {\"query\": \"summary\"}\n- Switch to 3D (check first): {\"query\": \"view\"}";

/// `find_nodes`.
pub const FIND_NODES: &str = "Find nodes matching a JMESPath selector over the node's data plus `algorithmResults` (after run_algorithm). The root is the data: `type == 'server'`, not `data.type`. Strings in 'single quotes', numbers in backticks. Returns the count, ids and the first items; a syntax error names its position.\n\nExamples:\n- {\"selector\": \"type == 'database'\"}\n- {\"selector\": \"algorithmResults.schemascope.pagerank.rankPct > `50`\"}";

/// `find_edges`.
pub const FIND_EDGES: &str = "Find edges matching a JMESPath selector over the edge's data plus `algorithmResults`. Returns the count, ids and the first items (with source and target).\n\nExamples:\n- {\"selector\": \"latency > `100`\"}\n- {\"selector\": \"relationship == 'depends_on'\"}";

/// `find_and_style_nodes`.
pub const FIND_AND_STYLE_NODES: &str = "Style the nodes a selector matches by adding a named style layer (later layers win). Style: color (CSS name or hex), size (1 = default), shape (sphere, box, cone, cylinder, …), glow (true or a colour) with glow_strength, outline (colour) with outline_width, opacity, hidden. Name the layer (`layer_name`) so it can be removed later. A session keeps at most 256 layers: past that an unnamed layer replaces the oldest unnamed layer of the same source (the result names it in `removedLayer`) and a named one is refused until layers are cleared. If nothing matches, success is false and no layer is added: check the selector with find_nodes or describe_property.\n\nExamples:\n- Make all database nodes red: {\"selector\": \"type == 'database'\", \"style\": {\"color\": \"red\"}, \"layer_name\": \"databases-red\"}\n- Highlight busy servers: {\"selector\": \"cpu > `0.8`\", \"style\": {\"glow\": true, \"color\": \"orange\"}}\n- Size by importance (after run_algorithm pagerank): {\"selector\": \"algorithmResults.schemascope.pagerank.rankPct > `50`\", \"style\": {\"size\": 2}}\n- Make the selected nodes bigger (ids from describe_selection): {\"ids\": [\"server-001\", \"server-007\"], \"style\": {\"size\": 2}}";

/// `find_and_style_edges`.
pub const FIND_AND_STYLE_EDGES: &str = "Style the edges a selector matches by adding a named style layer. Style: color, width, arrow (normal, none, …), opacity, hidden. If nothing matches, success is false and no layer is added.\n\nExamples:\n- {\"selector\": \"latency > `100`\", \"style\": {\"color\": \"red\", \"width\": 3}, \"layer_name\": \"slow-links\"}";

/// `clear_styles`.
pub const CLEAR_STYLES: &str = "Remove a style layer by name, or without a name every layer added by the AI; the person's own layers (source user) stay unless `layers` is \"user\" or \"all\". An unknown name is an error listing the layers. Use describe_styles first to find the layer and its source (\"remove the red highlighting\").\n\nExamples:\n- {\"layer_name\": \"highlight-servers\"}\n- Remove all AI styles: {}\n- Remove the person's layers too: {\"layers\": \"all\"}";

/// `describe_styles`.
pub const DESCRIBE_STYLES: &str = "Describe the style layers in order (later layers override earlier ones): name, source (system, user, ai), selectors and a one-line summary; `verbose` for full styles; `layer_name` for one layer; `compute_for` an element id for its merged style and which layer contributed which property (\"why is node-5 glowing?\").\n\nExamples:\n- What styles are applied? {}\n- Why is node-5 red? {\"compute_for\": \"node-5\"}";

/// `describe_selection`.
pub const DESCRIBE_SELECTION: &str = "Get the selected nodes and edges (ids, or with `include_data` their data). Long selections are cut at 100 with the full counts. Use it to operate on what the person selected (\"make the selected nodes bigger\").\n\nExamples:\n- What's selected? {}\n- With data: {\"include_data\": true}";

/// `select`.
pub const SELECT: &str = "Change the selection: by `ids` (nodes or edges) or a `selector` (over nodes, or edges with elements \"edges\"), with mode replace (default), add, remove or clear. The web view shows the selection.\n\nExamples:\n- {\"ids\": [\"server-001\", \"server-002\"]}\n- {\"selector\": \"type == 'database'\", \"mode\": \"add\"}\n- {\"mode\": \"clear\"}";

/// `set_layout`.
pub const SET_LAYOUT: &str = "Lay the graph out: forceDirected (2D or 3D by the view; options iterations, seed, tolerance), circular (radius), random (seed, size), spiral (spacing), shell (shells: node counts per ring), grid (spacing) or fixed (positions from node properties x, y, z, or the paths given). Reports whether the layout settled.\n\nExamples:\n- {\"type\": \"circular\"}\n- {\"type\": \"forceDirected\", \"options\": {\"iterations\": 300, \"seed\": 7}}\n- {\"type\": \"fixed\", \"options\": {\"x\": \"pos.x\", \"y\": \"pos.y\"}}";

/// `set_dimension`.
pub const SET_DIMENSION: &str =
    "Switch the view between 2D and 3D. If it already is in that mode, nothing changes and the answer says so.\n\nExample: {\"dimension\": \"3d\"}";

/// `set_camera`.
pub const SET_CAMERA: &str = "Move the camera: a preset (fitToGraph, topView, sideView, frontView, isometric) or a `position` and/or `target` as [x, y, z].\n\nExamples:\n- {\"preset\": \"fitToGraph\"}\n- {\"position\": [0, 0, 200], \"target\": [0, 0, 0]}";

/// `zoom_to_nodes`.
pub const ZOOM_TO_NODES: &str = "Point the camera at some nodes (by `ids` or `selector`) and frame them.\n\nExamples:\n- {\"ids\": [\"database-012\"]}\n- {\"selector\": \"type == 'gateway'\"}";

/// `list_algorithms`.
pub const LIST_ALGORITHMS: &str = "List the graph algorithms that can run (with their options and the properties they write), the graph's direction, the run history (when, how long, added properties, graph-level results; runs marked `stale` ran on data since reloaded, and their results are gone from the elements) and the algorithm properties available for selectors and styles now.\n\nExample: {}";

/// `run_algorithm`.
pub const RUN_ALGORITHM: &str = "Run a graph algorithm and write its results on every node/edge under `algorithmResults.<namespace>.<type>.<name>` (namespace `schemascope`), usable in selectors and styles and visible to describe_schema and describe_property. Types: degree, pagerank, betweenness, closeness, components, louvain, clustering, shortestPath (options source, target), minimumSpanningTree; most take {\"weight\": edge property, \"directed\": bool}. Without `directed` an algorithm follows the graph's own direction (the file's `directed` flag; else a networkx `links` file is undirected and a file with `edges` directed, source to target); every result says which it used (`directed`, `graphResults.directedBasis`).\n\nExamples:\n- Color nodes by importance: {\"type\": \"pagerank\"} then describe_property algorithmResults.schemascope.pagerank.rank, then find_and_style_nodes\n- {\"type\": \"shortestPath\", \"options\": {\"source\": \"gateway-001\", \"target\": \"database-012\"}}";
