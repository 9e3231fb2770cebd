//! The Chinook docs in testdata/docs/chinook: parsing, chunking, hybrid retrieval and the schema
//! context, on the real Chinook catalog (11 tables).

use schemascope_docs::{
    Catalog, ChunkKind, ChunkSource, ColumnNotes, FullReason, RetrievalConfig, SchemaIndex,
    Strategy, parse_docs,
};

const DOCS: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../../testdata/docs");

fn catalog() -> Catalog {
    let text =
        std::fs::read_to_string(format!("{DOCS}/chinook_catalog.json")).expect("catalog file");
    serde_json::from_str(&text).expect("catalog json")
}

fn doc_files() -> Vec<(String, String)> {
    let mut files: Vec<(String, String)> = std::fs::read_dir(format!("{DOCS}/chinook"))
        .expect("docs dir")
        .map(|e| e.expect("entry").path())
        // The examples directory: its files are read by the tools, checked on the database.
        .filter(|path| path.is_file())
        .map(|path| {
            let name = path.file_name().and_then(|n| n.to_str()).unwrap_or_default().to_string();
            (name, std::fs::read_to_string(&path).expect("doc file"))
        })
        .collect();
    files.sort();
    files
}

fn index(config: RetrievalConfig) -> SchemaIndex {
    let (docs, warnings) = parse_docs(&doc_files());
    assert!(warnings.is_empty(), "{warnings:?}");
    let mut notes = ColumnNotes::new();
    notes.insert("Track", "MediaTypeId", "1–5; 3 is video");
    let (index, warnings) = SchemaIndex::build(catalog(), docs, &notes, config);
    assert!(warnings.is_empty(), "{warnings:?}");
    index
}

#[test]
fn chinook_docs_parse_into_chunks_with_the_seed_metadata() {
    let index = index(RetrievalConfig::default());
    let customer: Vec<_> = index.chunks().iter().filter(|c| c.table == "Customer").collect();
    let count = |kind| customer.iter().filter(|c| c.kind == kind).count();
    assert_eq!(count(ChunkKind::Overview), 1);
    // 4 documented columns + 9 more from the catalog: every column is searchable.
    assert_eq!(count(ChunkKind::Column), 13);
    assert_eq!(count(ChunkKind::Query), 2);
    // Its docs' Relationships, and the semantic file's Customer.Country → Employee.Country.
    assert_eq!(count(ChunkKind::Relationship), 2);
    let overview = customer[0];
    assert!(
        overview.content.starts_with("**Purpose:** One row per customer"),
        "{}",
        overview.content
    );
    assert!(overview.content.contains("**Notes:**"));
    // FK neighbours both ways, then tables the text names ("bought at least one track").
    assert_eq!(overview.related_tables, vec!["Employee", "Invoice", "Track"]);
    assert!(
        overview.keywords.contains(&"support".to_string())
            && overview.keywords.contains(&"rep".to_string())
    );
    let country =
        customer.iter().find(|c| c.column.as_deref() == Some("Country")).expect("Country chunk");
    assert_eq!(country.source, ChunkSource::Docs("Customer.md".into()));
    assert!(country.tokens > 20 && country.tokens < 80, "{}", country.tokens);
    let fax = customer.iter().find(|c| c.column.as_deref() == Some("Fax")).expect("Fax chunk");
    assert_eq!(fax.source, ChunkSource::Catalog);
    let spending = customer
        .iter()
        .find(|c| c.kind == ChunkKind::Query && c.content.contains("Lifetime"))
        .expect("query");
    assert!(spending.related_tables.contains(&"Invoice".to_string()));
    // Undocumented tables still get an overview and column chunks from the catalog.
    let album: Vec<_> = index.chunks().iter().filter(|c| c.table == "Album").collect();
    assert_eq!(album[0].kind, ChunkKind::Overview);
    assert_eq!(album[0].content, "Table `Album` (347 rows). Columns: AlbumId, Title, ArtistId.");
    let media = index
        .chunks()
        .iter()
        .find(|c| c.table == "Track" && c.column.as_deref() == Some("MediaTypeId"))
        .expect("chunk");
    assert!(media.content.contains("3 is video"));
}

#[test]
fn focused_retrieval_finds_the_tables_and_adds_fk_neighbours_beside_them() {
    let index = any_size();
    let r = index.retrieve("Which customers spent the most on invoices?", None);
    assert_eq!(r.strategy, Strategy::Focused);
    assert!(r.tables.contains(&"Customer") && r.tables.contains(&"Invoice"), "{:?}", r.tables);
    assert!(r.chunks.iter().all(|c| c.relevance >= 0.2 && c.relevance <= 1.0), "{:?}", r.chunks);
    assert!(r.confidence >= 0.3 && r.confidence <= 1.0, "{}", r.confidence);
    assert!(r.expanded_tables.contains(&"Employee") || r.tables.contains(&"Employee"));
    assert!(r.expanded_tables.iter().all(|t| !r.tables.contains(t)));
    let genre = index.retrieve("jazz genre tracks", Some(1));
    assert_eq!(genre.chunks.len(), 1);
    // One retrieved table; its neighbours come beside it and never replace it.
    assert_eq!(genre.tables.len(), 1);
    assert!(genre.tables[0] == "Genre" || genre.tables[0] == "Track", "{:?}", genre.tables);
    assert!(!genre.expanded_tables.is_empty());
    let meta = r.metadata(&index);
    assert_eq!(meta.chunks_retrieved, r.chunks.len());
    assert_eq!(meta.tables_included.len(), r.tables.len() + r.expanded_tables.len());
}

#[test]
fn hybrid_strategy_falls_back_to_the_full_schema_when_retrieval_cannot_help() {
    let index = index(RetrievalConfig::default());
    assert_eq!(
        index.retrieve("How many are there?", None).strategy,
        Strategy::Full(FullReason::QuestionTooShort { terms: 0, min: 1 })
    );
    assert_eq!(
        index.retrieve("zebra quantum xylophone", None).strategy,
        Strategy::Full(FullReason::NoMatches)
    );
    // Unknown words (often values, such as "Aruba") do not count against a question; the best
    // chunk's share of the known ones does.
    let picky = self::index(RetrievalConfig { min_confidence: 0.9, ..RetrievalConfig::default() });
    let weak = picky.retrieve("customer invoice track genre album artist employee playlist", None);
    assert!(
        matches!(weak.strategy, Strategy::Full(FullReason::WeakMatches { min: 0.9, .. })),
        "{:?}",
        weak.strategy
    );
    assert!(weak.chunks.is_empty());
    let small = self::index(RetrievalConfig { table_threshold: 12, ..RetrievalConfig::default() });
    assert_eq!(
        small.retrieve("customers by country", None).strategy,
        Strategy::Full(FullReason::SmallSchema { tables: 11, threshold: 12 })
    );
    let off = self::index(RetrievalConfig { enabled: false, ..RetrievalConfig::default() });
    assert_eq!(
        off.retrieve("customers by country", None).strategy,
        Strategy::Full(FullReason::Disabled)
    );
}

#[test]
fn context_is_focused_and_fits_the_budget_without_cutting_lines() {
    let index = any_size();
    let question = "Which customers spent the most on invoices?";
    let full = index.render(&index.retrieve("How many are there?", None), None);
    assert_eq!(full.tokens, index.full_schema_tokens());
    for table in index.catalog().table_names() {
        assert!(full.text.contains(&format!("## {table}")), "{table}");
    }
    // The docs people wrote reach the model in the full schema too: the overview, each table's
    // purpose and rules under its heading, each column's description beside it.
    assert!(full.text.contains("\n\nA digital media store: customers buy tracks"), "{}", full.text);
    assert!(full.text.contains("- CustomerId INTEGER PK — Surrogate key of the customer\n"));
    assert!(full.text.contains(
        "- SupportRepId INTEGER → Employee.EmployeeId — The employee who supports this customer."
    ));
    assert!(full.text.contains(
        "## Invoice (412 rows)\nPurpose: One row per purchase: the bill a customer received, with \
         the billing address and total amount.\nBusiness context: Invoices are immutable once \
         issued; refunds are not recorded in this database. Amounts are in US dollars.\n\
         - InvoiceId"
    ));
    assert!(full.text.contains(
        "- Total NUMERIC(10,2) NOT NULL — Amount billed, the sum of the invoice lines' UnitPrice × \
         Quantity. Domain: 0.99 to 25.86 dollars\n"
    ));
    // An undocumented column's line is as before.
    assert!(full.text.contains("- FirstName NVARCHAR(40) NOT NULL\n"));
    let focused = index.context(question, None);
    // Chinook is small: the focused context has fewer tables but adds documentation, which is
    // why schemas under the table threshold get the full schema.
    assert!(focused.metadata.tables_included.len() < 11, "{:?}", focused.metadata.tables_included);
    assert!(focused.text.contains("## Retrieved Documentation\n\n### "));
    assert!(focused.text.starts_with("# Database schema: "));
    assert!(focused.omitted_tables.is_empty() && focused.omitted_chunks == 0);
    let tight = index.context(question, Some(150));
    assert!(tight.tokens <= 150, "{}", tight.tokens);
    assert!(tight.text.contains("_Not shown (token budget): "), "{}", tight.text);
    assert!(!tight.omitted_tables.is_empty() || tight.omitted_chunks > 0);
    for line in tight
        .text
        .lines()
        .filter(|l| !l.starts_with("_Not shown") && !l.starts_with("_Shown without"))
        .filter(|l| !l.starts_with("# Database schema: "))
    {
        // Whole lines, or a column's line without the notes after its declaration.
        assert!(
            focused.text.lines().any(|f| f == line || f.starts_with(&format!("{line} "))),
            "cut line: {line:?}"
        );
    }
    let tiny = index.context(question, Some(20));
    assert!(tiny.tokens <= 20, "{}", tiny.tokens);
}

/// The index with focusing allowed whatever the saving, to look at retrieval itself.
fn any_size() -> SchemaIndex {
    index(RetrievalConfig { max_focused_share: f64::INFINITY, ..RetrievalConfig::default() })
}

#[test]
fn numbers_and_generated_text_do_not_create_matches() {
    let index = any_size();
    let r = index.retrieve("top 5 customers by total spent", None);
    assert_eq!(r.strategy, Strategy::Focused);
    assert_eq!(r.tables.first(), Some(&"Customer"), "{:?}", r.tables);
    // "5" once matched "Table `MediaType` (5 rows)" and profile notes such as "integers 3, 4, 5".
    for stray in ["MediaType", "Playlist"] {
        assert!(!r.tables.contains(&stray), "{stray} in {:?}", r.tables);
    }
    // Words of the docs' scaffolding ("rows", "type", "primary key") match names only.
    let rows = index.retrieve("rows with a primary key and a type", None);
    // Only tables with "type" in a table or column name (MediaType, Track.MediaTypeId).
    assert!(rows.tables.iter().all(|t| ["MediaType", "Track"].contains(t)), "{:?}", rows.tables);
}

#[test]
fn vague_questions_get_the_full_schema_and_say_why() {
    let index = index(RetrievalConfig::default());
    for question in [
        "show me the data",
        "what's in here",
        "Show me everything in the database",
        "list all tables and records",
        "top 10",
    ] {
        let context = index.context(question, None);
        assert!(
            matches!(
                context.metadata.strategy,
                Strategy::Full(FullReason::QuestionTooShort { terms: 0, .. })
            ),
            "{question}: {:?}",
            context.metadata
        );
        assert_eq!(context.tokens, index.full_schema_tokens());
        assert_eq!(context.metadata.tables_included.len(), 11);
    }
}

#[test]
fn focused_context_is_smaller_than_the_full_schema_or_the_full_schema_is_used() {
    let index = index(RetrievalConfig::default());
    let full = index.full_schema_tokens();
    for question in [
        "top 5 customers by total spent",
        "Which customers spent the most on invoices?",
        "which artist has the most albums",
        "tracks in the jazz genre",
        "employees and the customers they support",
        "names",
        "playlist track album artist genre media invoice customer employee",
    ] {
        let context = index.context(question, None);
        match context.metadata.strategy {
            Strategy::Focused => {
                assert!(
                    (context.tokens as f64) < 0.8 * full as f64,
                    "{question}: {} of {full}",
                    context.tokens
                );
                assert!(context.metadata.confidence >= 0.3, "{question}: {:?}", context.metadata);
                assert!(
                    context.text.contains("focused on the question, confidence 0."),
                    "{}",
                    context.text
                );
                // The header shows the confidence to 6 significant digits (it showed two decimals)
                // and the metadata without float noise.
                let confidence = context.metadata.confidence;
                assert_eq!(confidence, schemascope_core::figure::stat(confidence), "{question}");
                let shown = schemascope_core::figure::text(schemascope_core::figure::significant(
                    confidence, 6,
                ));
                assert!(shown.len() > 4 || shown == confidence.to_string(), "{question}: {shown}");
                assert!(context.text.contains(&format!("confidence {shown})")), "{}", context.text);
            }
            Strategy::Full(reason) => {
                assert_eq!(context.tokens, full, "{question}");
                assert!(
                    matches!(
                        reason,
                        FullReason::NotSmaller { .. }
                            | FullReason::WeakMatches { .. }
                            | FullReason::QuestionTooShort { .. }
                    ),
                    "{question}: {reason:?}"
                );
                if let FullReason::NotSmaller { focused_tokens, full_tokens, .. } = reason {
                    assert_eq!(full_tokens, full);
                    assert!(
                        focused_tokens as f64 >= 0.8 * full as f64,
                        "{question}: {focused_tokens}"
                    );
                }
            }
        }
    }
    // A question about one corner of the schema focuses.
    let artist = index.context("which artist has the most albums", None);
    assert_eq!(artist.metadata.strategy, Strategy::Focused, "{:?}", artist.metadata);
}

#[test]
fn a_budget_never_drops_a_retrieved_table_for_a_neighbour_and_the_metadata_names_what_is_shown() {
    let index = any_size();
    for question in [
        "top 5 customers by total spent",
        "Which customers spent the most on invoices?",
        "tracks in the jazz genre",
        "artist albums",
    ] {
        let retrieval = index.retrieve(question, None);
        assert_eq!(retrieval.strategy, Strategy::Focused, "{question}");
        for budget in [60, 150, 300, 500, 800, 1200, 2000] {
            let context = index.render(&retrieval, Some(budget));
            assert!(context.tokens <= budget, "{question} @{budget}: {}", context.tokens);
            let kept = |t: &str| {
                context.text.contains(&format!("## {t} ("))
                    || context.text.contains(&format!("## {t}\n"))
            };
            let kept_retrieved: Vec<bool> = retrieval.tables.iter().map(|t| kept(t)).collect();
            // A retrieved table is left out only when it does not fit in what is left, and the
            // metadata names exactly the tables shown.
            for (table, kept) in retrieval.tables.iter().zip(&kept_retrieved) {
                assert_eq!(
                    context.metadata.tables_included.contains(&table.to_string()),
                    *kept,
                    "{question} @{budget}: {table}"
                );
            }
            if let Some(first_dropped) = kept_retrieved.iter().position(|k| !k) {
                assert!(
                    context.tokens + 20 < budget
                        || kept_retrieved[..first_dropped].iter().all(|k| *k),
                    "{question} @{budget}"
                );
            }
            if kept_retrieved.iter().any(|k| !k) {
                for neighbour in &retrieval.expanded_tables {
                    assert!(
                        !kept(neighbour),
                        "{question} @{budget}: neighbour {neighbour} kept, a retrieved table dropped"
                    );
                }
            }
        }
    }
    // Through the context call: when the full schema does not fit, the question's tables win.
    let index = self::index(RetrievalConfig::default());
    assert!(index.full_schema_tokens() > 300);
    let tight = index.context("top 5 customers by total spent", Some(300));
    assert_eq!(tight.metadata.strategy, Strategy::Focused);
    assert!(tight.tokens <= 300);
    assert!(tight.text.contains("## Customer ("), "{}", tight.text);
    assert!(!tight.text.contains("## MediaType ("), "{}", tight.text);
}

/// The index with a long value note on every column, as profiles give them.
fn with_notes(config: RetrievalConfig) -> SchemaIndex {
    let (docs, _) = parse_docs(&doc_files());
    let catalog = catalog();
    let mut notes = ColumnNotes::new();
    for table in &catalog.tables {
        for column in &table.columns {
            notes.insert(
                &table.name,
                &column.name,
                "59 distinct texts, 3–40 characters, e.g. 'Berlin', 'London', 'Mountain View'",
            );
        }
    }
    SchemaIndex::build(catalog, docs, &notes, config).0
}

/// Under any budget the tables a question needs are shown before any is left out (shortened to
/// their structure first), the heading counts only the tables shown, and every doc chunk shown
/// comes with its table — full or focused.
#[test]
fn a_budget_shortens_tables_before_it_drops_one_the_question_needs() {
    let question = "top 5 customers by total spent";
    for config in [
        RetrievalConfig::default(),
        RetrievalConfig { enabled: false, ..RetrievalConfig::default() },
    ] {
        let index = with_notes(config);
        for budget in [250, 400, 600, 800, 1_200, 2_000] {
            let context = index.context(question, Some(budget));
            let text = &context.text;
            assert!(context.tokens <= budget, "{} > {budget}", context.tokens);
            let shown: Vec<&str> = text
                .lines()
                .filter_map(|l| l.strip_prefix("## "))
                .map(|l| l.split(' ').next().unwrap_or(l))
                .collect();
            let shown: Vec<&str> = shown
                .into_iter()
                .filter(|t| !["Retrieved", "Business", "Joins", "Verified", "Values"].contains(t))
                .collect();
            // Both fit in their short form from about 350 tokens on.
            for needed in ["Customer", "Invoice"].into_iter().filter(|_| budget >= 400) {
                assert!(shown.contains(&needed), "{budget}: {needed} missing: {text}");
            }
            let heading = text.lines().next().expect("heading");
            let total = index.catalog().tables.len();
            let count = if shown.len() == total {
                format!("{total} tables")
            } else {
                format!("{} of {total} tables", shown.len())
            };
            assert!(heading.contains(&count), "{budget}: {heading} but {} shown", shown.len());
            for documented in text.lines().filter_map(|l| l.strip_prefix("### ")) {
                let table = documented.split(['.', ' ']).next().unwrap_or_default();
                assert!(
                    shown.contains(&table),
                    "{budget}: a chunk of {table} without its table: {text}"
                );
            }
            // What was shortened is said, and shortened tables keep every column.
            for table in &context.compact_tables {
                assert!(
                    text.contains("_Shown without their columns' value notes (token budget):"),
                    "{text}"
                );
                let columns = &index.catalog().table(table).expect("table").columns;
                for column in columns {
                    assert!(
                        text.contains(&format!("- {} ", column.name)),
                        "{table}.{}",
                        column.name
                    );
                }
            }
        }
    }
}

#[test]
fn a_budget_cuts_the_overview_then_value_notes_then_docs_then_tables() {
    let (docs, _) = parse_docs(&doc_files());
    // Value notes on every column, as a profiled source has.
    let catalog = catalog();
    let mut notes = ColumnNotes::new();
    for table in &catalog.tables {
        for column in &table.columns {
            notes.insert(&table.name, &column.name, format!("values of {}", column.name));
        }
    }
    notes.insert("Track", "MediaTypeId", "1–5; 3 is video");
    let (index, _) = SchemaIndex::build(catalog, docs, &notes, RetrievalConfig::default());
    let full = index.full_schema_tokens();
    let vague = index.retrieve("show me the data", None);
    // The largest budget at which each cut is first made.
    let (mut overview, mut notes, mut docs, mut tables) = (None, None, None, None);
    for budget in (150..full).rev().step_by(5) {
        let context = index.render(&vague, Some(budget));
        let text = &context.text;
        assert!(context.tokens <= budget, "{budget}: {}", context.tokens);
        if !text.contains("A digital media store") {
            overview.get_or_insert(budget);
            assert!(text.contains("the database overview"), "{budget}: {text}");
        }
        if !context.compact_tables.is_empty() {
            notes.get_or_insert(budget);
            assert!(text.contains("_Shown without their columns' value notes (token budget): "));
            assert!(!text.contains("3 is video"), "{budget}: Track's value note");
        }
        if !context.undocumented_tables.is_empty() {
            docs.get_or_insert(budget);
            assert!(text.contains("_Shown without their docs and value notes (token budget): "));
            // No table keeps value notes while another's docs are cut.
            assert!(!text.contains("(values of "), "{budget}: {text}");
        }
        if !context.omitted_tables.is_empty() {
            tables.get_or_insert(budget);
        }
        for table in &context.undocumented_tables {
            let block = text.split(&format!("## {table} (")).nth(1).expect("shown");
            let block = block.split("\n## ").next().unwrap_or_default();
            assert!(!block.contains(" — "), "{budget}: {table} keeps docs: {block}");
            for column in &index.catalog().table(table).expect("table").columns {
                assert!(block.contains(&format!("- {} ", column.name)), "{table}.{}", column.name);
            }
        }
    }
    let order = [overview, notes, docs, tables];
    assert!(order.iter().all(Option::is_some), "{order:?}");
    // The overview goes at once (it is as short as the room kept for the note on cuts).
    assert!(overview >= notes && notes > docs && docs > tables, "cut at budgets {order:?}");
    // Just under the full schema the tables keep their docs.
    let under = index.render(&vague, Some(full - 5));
    assert!(under.undocumented_tables.is_empty() && under.omitted_tables.is_empty());
    assert!(under.text.contains("Amounts are in US dollars."));
}

#[test]
fn business_words_find_their_tables_and_metrics_show_in_the_context() {
    let focusing = any_size();
    for (question, table) in [
        ("which band has the most albums", "Artist"),
        ("who is the account manager of each customer", "Employee"),
        ("the longest tune", "Track"),
        ("turnover per billing country", "Invoice"),
    ] {
        let retrieval = focusing.retrieve(question, None);
        assert!(retrieval.tables.contains(&table), "{question}: {:?}", retrieval.tables);
    }
    // The metric a question names is in its context, focused or full.
    for built in [any_size(), index(RetrievalConfig::default())] {
        let context = built.context("average basket per country", None);
        assert!(
            context.text.contains("**average basket** = `AVG(Invoice.Total)`: Mean amount billed"),
            "{}",
            context.text
        );
    }
    // The full context lists the whole file once.
    let full = index(RetrievalConfig::default()).context("show me the data", None);
    assert_eq!(full.text.matches("## Business terms and metrics\n").count(), 1, "{}", full.text);
    assert!(full.text.contains(
        "- **sales rep** (also: rep, account manager, support agent) means Employee, \
         Customer.SupportRepId: The employee who looks after a customer.\n"
    ));
    assert!(full.text.contains(
        "- Customer.Country → Employee.Country (not declared in the schema): Customers and \
         employees in the same country (not a key: many to many)."
    ));
}
