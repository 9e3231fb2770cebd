//! The schema-docs commands on real data: `docs generate` (never overwriting edits), `context`
//! and `search-docs` with written docs and the retrieval configuration layers, and
//! `eval retrieval` on Spider.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use serde_json::Value;

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn chinook() -> String {
    root().join("testdata/chinook/Chinook_Sqlite.sqlite").display().to_string()
}

fn run(args: &[&str], env: &[(&str, &str)]) -> Output {
    let mut command = Command::new(env!("CARGO_BIN_EXE_schemascope"));
    command.args(args);
    for var in [
        "ENABLE_DOC_RETRIEVAL",
        "DOC_RETRIEVAL_TOP_K",
        "DOC_RELEVANCE_THRESHOLD",
        "RETRIEVAL_TABLE_THRESHOLD",
        "SCHEMASCOPE_RETRIEVAL_CONFIG",
        "SCHEMASCOPE_EMBEDDING_MODEL",
    ] {
        command.env_remove(var);
    }
    command.envs(env.iter().copied());
    command.output().expect("runs")
}

fn json(out: &Output) -> Value {
    assert!(
        out.status.success(),
        "failed: {}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).expect("json")
}

#[test]
fn docs_generate_writes_parsable_docs_and_keeps_edited_files() {
    let dir = tempfile::tempdir().expect("tempdir");
    let docs = dir.path().display().to_string();
    let first = json(&run(&["docs", "generate", &chinook(), &docs, "--json"], &[]));
    assert_eq!(
        first["data"]["written"].as_array().map(Vec::len),
        Some(12),
        "_index.md and 11 tables"
    );
    let again = json(&run(&["docs", "generate", &chinook(), &docs, "--json"], &[]));
    assert_eq!(again["data"]["unchanged"].as_array().map(Vec::len), Some(12));
    let genre = dir.path().join("Genre.md");
    let edited = std::fs::read_to_string(&genre)
        .expect("read")
        .replace("## Purpose\n", "## Purpose\n\nMusic genres, curated by the catalogue team.\n");
    std::fs::write(&genre, &edited).expect("edit");
    let kept = json(&run(&["docs", "generate", &chinook(), &docs, "--json"], &[]));
    assert_eq!(kept["data"]["keptEdited"], serde_json::json!(["Genre.md"]));
    assert_eq!(std::fs::read_to_string(&genre).expect("read"), edited, "the edit survives");
    // The full schema shows what a person wrote in the generated files, and none of the
    // generator's own sentences (the structure and value notes say them already).
    let full =
        json(&run(&["context", &chinook(), "--docs", &docs, "show me the data", "--json"], &[]));
    assert_eq!(full["data"]["metadata"]["strategy"], "full", "{full}");
    let text = full["data"]["context"].as_str().expect("context");
    assert!(
        text.contains(
            "## Genre (25 rows)\nPurpose: Music genres, curated by the catalogue team.\n- GenreId"
        ),
        "{text}"
    );
    assert!(!text.contains("of the database,"), "{text}");
    assert!(!text.contains("Primary key of"), "{text}");
    let forced = json(&run(&["docs", "generate", &chinook(), &docs, "--force", "--json"], &[]));
    assert_eq!(forced["data"]["written"], serde_json::json!(["Genre.md"]));
    // The generated docs, with the values the profiles found, are what retrieval reads.
    let context =
        json(&run(&["context", &chinook(), "--docs", &docs, "tracks per genre", "--json"], &[]));
    assert_eq!(context["data"]["warnings"], serde_json::json!([]));
    assert_eq!(context["data"]["metadata"]["strategy"], "focused");
}

#[test]
fn written_docs_are_searched_and_malformed_files_are_reported_and_skipped() {
    let dir = tempfile::tempdir().expect("tempdir");
    for entry in std::fs::read_dir(root().join("testdata/docs/chinook")).expect("docs") {
        let path = entry.expect("entry").path();
        if path.is_file() {
            std::fs::copy(&path, dir.path().join(path.file_name().expect("name"))).expect("copy");
        }
    }
    std::fs::write(
        dir.path().join("Album.md"),
        "# Table: Album\n\n## Purpose\n\n```sql\nSELECT 1\n",
    )
    .expect("write");
    let docs = dir.path().display().to_string();
    let out = json(&run(
        &["search-docs", &chinook(), "--docs", &docs, "are refunds recorded", "--json"],
        &[],
    ));
    assert_eq!(
        out["data"]["chunks"][0]["table"], "Invoice",
        "only Invoice.md speaks of refunds: {out}"
    );
    let warnings = out["data"]["warnings"].as_array().expect("warnings");
    assert!(
        warnings
            .iter()
            .any(|w| w.as_str().is_some_and(|w| w.contains("Album.md:5") && w.contains("skipped"))),
        "{warnings:?}"
    );
    // The docs are beside their tables in the context, full or focused; the retrieved chunk
    // that says the same (Invoice's overview) is not repeated below.
    for question in ["are refunds recorded", "show me the data"] {
        let context =
            json(&run(&["context", &chinook(), "--docs", &docs, question, "--json"], &[]));
        let text = context["data"]["context"].as_str().expect("context");
        assert_eq!(text.matches("refunds are not recorded in this database").count(), 1, "{text}");
        assert!(text.contains("- Total NUMERIC(10,2) NOT NULL — Amount billed"), "{text}");
    }
    // Under a budget the tables shown without their docs are named in the answer.
    let tight = json(&run(
        &[
            "context",
            &chinook(),
            "--docs",
            &docs,
            "show me the data",
            "--max-tokens",
            "900",
            "--json",
        ],
        &[],
    ));
    let undocumented = tight["data"]["undocumentedTables"].as_array().expect("undocumentedTables");
    let text = tight["data"]["context"].as_str().expect("context");
    assert!(tight["data"]["tokens"].as_u64().is_some_and(|t| t <= 900), "{tight}");
    for table in undocumented {
        let table = table.as_str().expect("name");
        assert!(text.contains("_Shown without their docs and value notes (token budget): "));
        assert!(text.contains(table), "{table}");
    }
    // A semantic file naming a column the database lacks: that entry is reported by line, the
    // others are used.
    let semantic = dir.path().join("_semantic.toml");
    let text = std::fs::read_to_string(&semantic).expect("the Chinook semantic file");
    std::fs::write(
        &semantic,
        format!("{text}\n[[term]]\nname = \"vat\"\nmeans = [\"Invoice.Vat\"]\n"),
    )
    .expect("write");
    let line = text.lines().count() + 4;
    let out = json(&run(
        &["context", &chinook(), "--docs", &docs, "average basket per country", "--json"],
        &[],
    ));
    let warnings = out["data"]["warnings"].as_array().expect("warnings");
    let expected = format!(
        "_semantic.toml:{line}: term means `Invoice.Vat` is not a table or column of the database; left out"
    );
    assert!(warnings.iter().any(|w| w.as_str() == Some(expected.as_str())), "{warnings:?}");
    let text = out["data"]["context"].as_str().expect("context");
    assert!(text.contains("**average basket** = `AVG(Invoice.Total)`"), "{text}");
    let without = json(&run(&["search-docs", &chinook(), "are refunds recorded", "--json"], &[]));
    assert_ne!(
        without["data"]["chunks"][0]["table"], "Invoice",
        "without the docs nothing speaks of refunds"
    );
}

#[test]
fn retrieval_configuration_layers_file_environment_and_flags() {
    let question = "which genre has the most tracks";
    let strategy = |out: &Output| {
        let data = json(out);
        (
            data["data"]["metadata"]["strategy"].as_str().unwrap_or_default().to_string(),
            data["data"]["metadata"]["reason"].clone(),
        )
    };
    assert_eq!(
        strategy(&run(&["context", &chinook(), question, "--json"], &[])).0,
        "focused",
        "11 tables ≥ the threshold of 10"
    );
    let env = [("RETRIEVAL_TABLE_THRESHOLD", "20")];
    assert_eq!(
        strategy(&run(&["context", &chinook(), question, "--json"], &env)),
        ("full".into(), Value::from("smallSchema"))
    );
    assert_eq!(
        strategy(&run(
            &["context", &chinook(), question, "--json", "--table-threshold", "5"],
            &env
        ))
        .0,
        "focused",
        "flags win"
    );
    let dir = tempfile::tempdir().expect("tempdir");
    let file = dir.path().join("retrieval.toml");
    std::fs::write(&file, "enabled = false\ntop_k = 3\n").expect("write");
    let config = file.display().to_string();
    assert_eq!(
        strategy(&run(
            &["context", &chinook(), question, "--json", "--retrieval-config", &config],
            &[]
        )),
        ("full".into(), Value::from("disabled"))
    );
    let bad = run(&["context", &chinook(), question], &[("DOC_RETRIEVAL_TOP_K", "many")]);
    assert!(!bad.status.success());
    let message = String::from_utf8_lossy(&bad.stderr);
    assert!(message.contains("DOC_RETRIEVAL_TOP_K") && message.contains("many"), "{message}");
}

#[test]
fn schema_docs_of_a_graph_are_its_tables_docs() {
    let out = run(&["search-docs", "demo:infrastructure", "servers per region", "--json"], &[]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("nodes") && text.contains("region"), "{text}");
}

#[test]
fn eval_retrieval_on_pooled_spider_meets_the_recall_and_reduction_targets() {
    let tables = root().join("testdata/spider/tables.json").display().to_string();
    let questions = root().join("testdata/spider/dev_open.json").display().to_string();
    let out = run(
        &[
            "eval",
            "retrieval",
            "--tables",
            &tables,
            "--questions",
            &questions,
            "--pooled",
            "--json",
        ],
        &[],
    );
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let report: Value = serde_json::from_slice(&out.stdout).expect("json");
    assert_eq!(report["questions"], 493);
    assert_eq!(report["goldParseFailures"], 0);
    assert!(report["avgTables"].as_f64().unwrap_or(0.0) > 870.0, "{report}");
    assert!(report["recallAtK"].as_f64().unwrap_or(0.0) >= 0.90, "{report}");
    assert!(report["reduction"].as_f64().unwrap_or(0.0) >= 0.90, "{report}");
    let single = run(
        &[
            "eval",
            "retrieval",
            "--tables",
            &tables,
            "--questions",
            &questions,
            "--k",
            "3",
            "--json",
        ],
        &[],
    );
    let single: Value = serde_json::from_slice(&single.stdout).expect("json");
    assert_eq!(single["setting"], "perDatabase");
    assert!(single["recallAtK"].as_f64().unwrap_or(0.0) >= 0.95, "{single}");
}

#[test]
fn eval_validator_accepts_every_spider_gold_query() {
    let tables = root().join("testdata/spider/tables.json").display().to_string();
    let questions = root().join("testdata/spider/dev_open.json").display().to_string();
    let out =
        run(&["eval", "validator", "--tables", &tables, "--questions", &questions, "--json"], &[]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stdout));
    let report: Value = serde_json::from_slice(&out.stdout).expect("json");
    let gold = &report["gold"];
    assert_eq!(
        (gold["total"].as_u64(), gold["accepted"].as_u64(), gold["rejected"].as_u64()),
        (Some(493), Some(493), Some(0)),
        "{gold}"
    );
}

#[test]
fn eval_validator_on_bird_predictions_flags_what_sqlite_rejects_and_points_to_fixes() {
    let bird = root().join("testdata/bird");
    let path = |p: &str| bird.join(p).display().to_string();
    let out = run(
        &[
            "eval",
            "validator",
            "--tables",
            &path("dev_tables.json"),
            "--questions",
            &path("mini_dev_sqlite.json"),
            "--predictions",
            &path("predictions/predict_mini_dev_gpt-35-turbo_sqlite.json"),
            "--predictions",
            &path("predictions/predict_mini_dev_gpt-4_sqlite.json"),
            "--json",
        ],
        &[],
    );
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stdout));
    let report: Value = serde_json::from_slice(&out.stdout).expect("json");
    assert_eq!(
        (report["gold"]["total"].as_u64(), report["gold"]["rejected"].as_u64()),
        (Some(500), Some(0))
    );
    let all = &report["all_predictions"];
    let count = |key: &str| all[key].as_u64().unwrap_or(0);
    assert_eq!(count("total"), 1000);
    // Real models' mistakes: SQLite rejects about a tenth; every one is flagged before it runs,
    // and nothing SQLite accepts is rejected.
    assert!(count("engine_rejected") > 50, "{all}");
    assert_eq!(count("flagged"), count("engine_rejected"), "{all}");
    assert_eq!(count("false_rejections"), 0, "{all}");
    // Borrowed functions come with the engine's spelling; identifier errors point to the fix.
    assert!(count("unknown_functions_with_fix") * 100 >= count("unknown_functions") * 90, "{all}");
    // (37 of 49 on these two files: the docs' words for a column, the table nearest the
    // qualifier and the question's definitions of a name all count.)
    assert!(count("identifier_fixes_in_gold") * 100 >= count("identifier_errors") * 72, "{all}");
    assert!(count("heldout_identifier_errors") < count("identifier_errors"), "{all}");
    let per_file = report["predictions"].as_array().map_or(0, Vec::len);
    assert_eq!(per_file, 2);
}

#[test]
fn eval_values_finds_the_stored_values_questions_name_loosely() {
    let sets = [
        ("testdata/chinook/Chinook_Sqlite.sqlite", "testdata/eval/chinook_questions.json"),
        ("testdata/northwind/create.sql", "testdata/eval/northwind_questions.json"),
        ("testdata/chinook/Chinook_Sqlite.sqlite", "testdata/eval/heldout/chinook_questions.json"),
        ("testdata/northwind/create.sql", "testdata/eval/heldout/northwind_questions.json"),
    ];
    for (database, questions) in sets {
        let database = root().join(database).display().to_string();
        let questions = root().join(questions).display().to_string();
        let out = run(
            &["eval", "values", "--database", &database, "--questions", &questions, "--json"],
            &[],
        );
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
        let report: Value = serde_json::from_slice(&out.stdout).expect("json");
        let recall = report["value_recall"].as_f64().unwrap_or(0.0);
        let without = report["value_recall_without_index"].as_f64().unwrap_or(1.0);
        assert!(report["with_values"].as_u64().unwrap_or(0) >= 30, "{questions}: {report}");
        assert!(recall >= 0.9, "{questions}: {report}");
        assert!(recall > without, "{questions}: the index adds nothing: {report}");
        assert!(report["table_recall"].as_f64().unwrap_or(0.0) >= 0.8, "{questions}: {report}");
    }
}

#[test]
fn eval_retrieval_on_pooled_bird_with_evidence_meets_the_recall_target() {
    let bird = root().join("testdata/bird");
    let path = |p: &str| bird.join(p).display().to_string();
    let out = run(
        &[
            "eval",
            "retrieval",
            "--tables",
            &path("dev_tables.json"),
            "--questions",
            &path("mini_dev_sqlite.json"),
            "--pooled",
            "--with-evidence",
            "--json",
        ],
        &[],
    );
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let report: Value = serde_json::from_slice(&out.stdout).expect("json");
    assert!(report["recallAtK"].as_f64().unwrap_or(0.0) >= 0.92, "{report}");
    assert!(report["reduction"].as_f64().unwrap_or(0.0) >= 0.70, "{report}");
}

#[test]
fn eval_validator_counts_refused_writes_apart_from_false_rejections() {
    let bird = root().join("testdata/bird");
    let questions: Vec<Value> = serde_json::from_str(
        &std::fs::read_to_string(bird.join("mini_dev_sqlite.json")).expect("questions"),
    )
    .expect("json");
    // Gold SQL as predictions, the first replaced by a write SQLite compiles.
    let mut predictions: Vec<Value> = questions.iter().map(|q| q["SQL"].clone()).collect();
    predictions[0] = Value::from("DELETE FROM customers");
    let dir = tempfile::tempdir().expect("tempdir");
    let file = dir.path().join("predictions.json");
    std::fs::write(&file, serde_json::to_string(&predictions).expect("json")).expect("write");
    let path = |p: &str| bird.join(p).display().to_string();
    let out = run(
        &[
            "eval",
            "validator",
            "--tables",
            &path("dev_tables.json"),
            "--questions",
            &path("mini_dev_sqlite.json"),
            "--predictions",
            &file.display().to_string(),
            "--json",
        ],
        &[],
    );
    let report: Value = serde_json::from_slice(&out.stdout).expect("json");
    let all = &report["all_predictions"];
    assert_eq!(
        (all["refused_by_policy"].as_u64(), all["false_rejections"].as_u64()),
        (Some(1), Some(0)),
        "{all}"
    );
}

/// The all-MiniLM-L6-v2 directory scripts/test installs.
fn embedding_model() -> String {
    std::env::var("SCHEMASCOPE_TEST_EMBED_MODEL").expect(
        "SCHEMASCOPE_TEST_EMBED_MODEL names the all-MiniLM-L6-v2 directory (scripts/test installs tests/embed/requirements.txt and sets it)",
    )
}

#[test]
fn an_embedding_model_finds_tables_a_question_names_in_other_words() {
    let model = embedding_model();
    let database = chinook();
    let first_table = |question: &str, env: &[(&str, &str)], extra: &[&str]| {
        let mut args = vec!["search-docs", database.as_str(), question, "--json"];
        args.extend_from_slice(extra);
        let out = json(&run(&args, env));
        let semantic = out["data"]["metadata"]["semantic"].as_bool().expect("semantic");
        (out["data"]["chunks"][0]["table"].as_str().map(str::to_string), semantic)
    };
    for (question, table) in [
        ("which songs last longest", "Track"),
        ("how much money came in from each nation", "Invoice"),
    ] {
        let (words, semantic) = first_table(question, &[], &[]);
        assert!(!semantic);
        assert_ne!(words.as_deref(), Some(table), "{question}: words alone miss it");
        let (meaning, semantic) = first_table(question, &[], &["--embedding-model", &model]);
        assert!(semantic);
        assert_eq!(meaning.as_deref(), Some(table), "{question}");
    }
    // The setting can come from the environment too, and reaches the context's metadata.
    let context = json(&run(
        &["context", &chinook(), "which songs last longest", "--json"],
        &[("SCHEMASCOPE_EMBEDDING_MODEL", &model)],
    ));
    assert_eq!(context["data"]["metadata"]["semantic"], true, "{context}");
}

#[test]
fn a_directory_that_holds_no_model_is_refused_at_start_with_its_name() {
    let dir = tempfile::tempdir().expect("tempdir");
    std::fs::write(dir.path().join("config.json"), "{not json").expect("write");
    for path in [dir.path().display().to_string(), "/nonexistent/model".to_string()] {
        let out = run(&["context", &chinook(), "songs", "--embedding-model", &path], &[]);
        assert!(!out.status.success());
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(stderr.contains(&format!("--embedding-model {path}")), "{stderr}");
        assert!(stderr.contains("sentence-transformers model directory"), "{stderr}");
    }
}

#[test]
fn retrieval_settings_out_of_range_are_refused_by_name() {
    let dir = tempfile::tempdir().expect("tempdir");
    for (setting, expected) in [
        ("semantic_weight = inf", "semantic_weight = inf"),
        ("semantic_weight = -6.0", "semantic_weight = -6"),
        ("semantic_floor = 1.0", "semantic_floor = 1"),
        ("semantic_floor = nan", "semantic_floor = NaN"),
        ("k1 = -inf", "k1 = -inf"),
    ] {
        let file = dir.path().join("retrieval.toml");
        std::fs::write(&file, setting).expect("write");
        let out = run(
            &[
                "search-docs",
                &chinook(),
                "songs",
                "--retrieval-config",
                &file.display().to_string(),
            ],
            &[],
        );
        assert!(!out.status.success(), "{setting}");
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(stderr.contains(&format!("retrieval setting {expected} is invalid")), "{stderr}");
    }
}
