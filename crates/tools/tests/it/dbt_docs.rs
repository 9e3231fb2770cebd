//! dbt's docs on dbt-labs' jaffle_shop (its own schema.yml files and docs blocks, over the
//! tables its models build): descriptions reach the context beside their tables and columns,
//! `{{ doc() }}` blocks rendered, relationships tests shown as joins, stale entries reported
//! with file and line, the markdown docs first, and an edit seen while served.

use std::path::{Path, PathBuf};

use schemascope_tools::{GetSchemaContextParams, Services, get_schema_context};
use serde_json::Value;

use crate::common::{ok, registry};

fn testdata() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../testdata/dbt")
}

fn served(dbt: &Path) -> Services {
    let registry =
        registry(&[&format!("shop={}", testdata().join("jaffle_shop.sqlite").display())]);
    registry.docs.set_dbt("shop", dbt.to_path_buf());
    registry
}

fn context(registry: &Services, question: &str) -> Value {
    ok(get_schema_context(
        &registry.docs,
        GetSchemaContextParams {
            source: Some("shop".into()),
            question: question.into(),
            max_tokens: None,
            top_k: None,
        },
    ))
}

#[test]
fn a_dbt_projects_descriptions_and_joins_reach_the_context() {
    let registry = served(&testdata().join("jaffle_shop"));
    let data = context(&registry, "order status per customer");
    let text = data["context"].as_str().expect("context");
    assert!(text.contains("Purpose: This table has basic information about orders"), "{text}");
    assert!(text.contains("- first_name — Customer's first name. PII"), "{text}");
    // The status column's description is a docs block of models/docs.md.
    assert!(text.contains("status — Orders can be one of the following statuses:"), "{text}");
    assert!(!text.contains("{{"), "no Jinja reaches the model: {text}");
    assert!(text.contains("orders.customer_id → customers.customer_id"), "{text}");
    // The project's schema.yml still documents a column its model renamed: said, not shown.
    let warnings = data["warnings"].to_string();
    assert!(
        warnings.contains("jaffle_shop/models/schema.yml:29: documents column `total_order_amount`, which table `customers` does not have; not used"),
        "{warnings}"
    );
    assert!(!text.contains("total_order_amount"), "{text}");
    // A focused context lists the join between two of its tables, which no key shows.
    registry.docs.set_config(schemascope_docs::RetrievalConfig {
        table_threshold: 1,
        ..schemascope_docs::RetrievalConfig::default()
    });
    let focused = context(&registry, "which customer placed each order, with its status");
    assert_eq!(focused["metadata"]["strategy"], "focused", "{}", focused["metadata"]);
    let text = focused["context"].as_str().expect("context");
    assert!(
        text.contains(
            "## Joins the schema does not declare\n- orders.customer_id → customers.customer_id"
        ),
        "{text}"
    );
}

#[test]
fn generated_docs_give_way_to_dbts_and_yaml_nulls_are_no_text() {
    let registry = served(&testdata().join("jaffle_shop"));
    let generated = tempfile::tempdir().expect("docs");
    registry.docs.set_dir("shop", generated.path().to_path_buf());
    ok(schemascope_tools::generate_schema_docs(
        &registry.docs,
        schemascope_tools::GenerateDocsParams {
            source: Some("shop".into()),
            dir: None,
            force: false,
        },
    ));
    let text = context(&registry, "order status per customer")["context"].to_string();
    assert!(
        text.contains("basic information about orders"),
        "dbt's words, not the generator's: {text}"
    );

    let dir = tempfile::tempdir().expect("tempdir");
    let file = dir.path().join("schema.yml");
    std::fs::write(
        &file,
        "models:\n  - name: orders\n    description: ~\n    columns:\n      - name: status\n        description: null\n      - name: amount\n        description: \"null\"\n",
    )
    .expect("yml");
    let registry = served(&file);
    let text = context(&registry, "order amount")["context"].to_string();
    assert!(!text.contains("Purpose: ~") && !text.contains("status — null"), "{text}");
    assert!(text.contains("amount — null"), "a quoted \"null\" is text: {text}");
}

#[test]
fn markdown_docs_come_first_and_a_broken_or_edited_file_is_handled_while_served() {
    let dir = tempfile::tempdir().expect("tempdir");
    let models = dir.path().join("models");
    std::fs::create_dir(&models).expect("mkdir");
    let original = std::fs::read_to_string(testdata().join("jaffle_shop/models/schema.yml"))
        .expect("schema.yml");
    std::fs::write(models.join("schema.yml"), &original).expect("copy");
    std::fs::write(models.join("broken.yml"), "models:\n  - name: [x\n").expect("broken");
    let registry = served(dir.path());
    let docs = tempfile::tempdir().expect("docs");
    std::fs::write(
        docs.path().join("orders.md"),
        "# Table: orders\n\n## Purpose\n\nOrders as the shop's staff describe them.\n",
    )
    .expect("md");
    registry.docs.set_dir("shop", docs.path().to_path_buf());
    let data = context(&registry, "order status per customer");
    let text = data["context"].as_str().expect("context");
    assert!(text.contains("Purpose: Orders as the shop's staff describe them."), "{text}");
    assert!(!text.contains("basic information about orders"), "{text}");
    assert!(text.contains("basic information about a customer"), "{text}");
    // No docs blocks in this copy: the status description cites one, and is not shown.
    assert!(!text.contains("{{ doc"), "{text}");
    assert!(
        data["warnings"].to_string().contains("broken.yml:3: not YAML"),
        "{}",
        data["warnings"]
    );
    // Edited while served.
    let edited = original.replace(
        "This table has basic information about a customer",
        "People who ordered at least once",
    );
    std::fs::write(models.join("schema.yml"), edited).expect("edit");
    let text = context(&registry, "order status per customer")["context"].to_string();
    assert!(text.contains("People who ordered at least once"), "{text}");
}

#[test]
fn a_join_dbt_declares_is_a_join_validation_accepts() {
    let join = "SELECT c.first_name, o.status FROM orders o JOIN customers c ON c.customer_id = o.customer_id";
    let validate = |registry: &Services| {
        ok(schemascope_tools::validate_query(
            &registry.docs,
            schemascope_tools::ValidateQueryParams {
                source: Some("shop".into()),
                query: serde_json::json!(join),
                question: None,
            },
        ))
    };
    let bare = registry(&[&format!("shop={}", testdata().join("jaffle_shop.sqlite").display())]);
    assert!(validate(&bare).to_string().contains("follows no foreign key"), "no key without dbt");
    let report = validate(&served(&testdata().join("jaffle_shop")));
    assert_eq!(report["valid"], true, "{report}");
    assert!(!report.to_string().contains("follows no foreign key"), "{report}");
}
