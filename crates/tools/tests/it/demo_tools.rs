//! The tools on the embedded demo data: every tool, real values.

use schemascope_tools::*;
use serde_json::{Value, json};

use crate::common::{demo, ok};

fn infra() -> Option<String> {
    Some("infrastructure".into())
}

#[test]
fn describe_schema_lists_graph_properties_with_types_enums_and_ranges() {
    let registry = demo();
    let data = ok(describe_schema(
        &registry.sources,
        DescribeSchemaParams { source: infra(), ..Default::default() },
    ));
    let nodes = &data["collections"][0];
    assert_eq!(nodes["name"], "nodes");
    assert_eq!(nodes["count"], 160);
    let prop = |path: &str| {
        nodes["properties"]
            .as_array()
            .unwrap()
            .iter()
            .find(|p| p["path"] == path)
            .cloned()
            .unwrap_or_else(|| panic!("{path}"))
    };
    assert_eq!(prop("type")["type"], "string");
    assert_eq!(prop("type")["enumValues"].as_array().unwrap().len(), 5);
    assert_eq!(prop("memory")["type"], "mixed");
    assert_eq!(prop("cpu")["presentCount"], 156);
    assert_eq!(prop("tags")["itemType"], "string");
    assert_eq!(prop("metadata.created")["format"], "date-time");
    assert_eq!(prop("metrics.cpu.current")["type"], "number");
    let rendered = ok(describe_schema(
        &registry.sources,
        DescribeSchemaParams {
            source: infra(),
            format: Some(SchemaFormat::Markdown),
            ..Default::default()
        },
    ));
    let markdown = rendered["markdown"].as_str().unwrap();
    assert!(markdown.starts_with("## Graph Data Schema"), "{markdown}");
    assert!(markdown.contains("**Graph Size:** 160 nodes, 240 edges"), "{markdown}");
    assert!(markdown.contains("- `type` (string): "), "{markdown}");
    assert!(markdown.contains("- `metrics.cpu.current` (number, 62/160 present)"), "{markdown}");
    assert!(markdown.contains("- `metrics` (object, 62/160 present)"), "{markdown}");
    assert_eq!(data["collections"][1]["count"], 240);
}

#[test]
fn markdown_fits_a_token_budget_by_dropping_whole_lines() {
    let registry = demo();
    let full = ok(describe_schema(
        &registry.sources,
        DescribeSchemaParams {
            source: infra(),
            format: Some(SchemaFormat::Markdown),
            ..Default::default()
        },
    ));
    let full_tokens = full["tokens"].as_u64().unwrap();
    for budget in [full_tokens as usize - 1, 300, 120, 40] {
        let data = ok(describe_schema(
            &registry.sources,
            DescribeSchemaParams {
                source: infra(),
                format: Some(SchemaFormat::Markdown),
                max_tokens: Some(budget),
                ..Default::default()
            },
        ));
        let tokens = data["tokens"].as_u64().unwrap() as usize;
        assert!(tokens <= budget, "{tokens} > {budget}");
        let markdown = data["markdown"].as_str().unwrap();
        assert!(markdown.ends_with('\n'));
        let full_lines: Vec<&str> = full["markdown"].as_str().unwrap().lines().collect();
        for line in markdown.lines() {
            assert!(
                line.contains("more properties")
                    || full_lines.iter().any(|f| f.starts_with(line.split(" (").next().unwrap())),
                "cut line: {line}"
            );
        }
        if data["propertiesOmitted"].as_u64().unwrap() > 0 && !data["truncated"].as_bool().unwrap()
        {
            assert!(markdown.contains("more properties"), "{markdown}");
        }
    }
}

#[test]
fn describe_property_string_number_boolean_array_mixed_and_nested() {
    let registry = demo();
    let p = |property: &str, collection: Option<&str>| {
        ok(describe_property(
            &registry,
            DescribePropertyParams {
                source: infra(),
                property: property.into(),
                collection: collection.map(Into::into),
                ..Default::default()
            },
        ))
    };
    let t = p("type", None);
    assert_eq!(t["dataType"], "string");
    assert_eq!(t["values"][0], json!({"value": "server", "count": 62, "percentage": 38.75}));
    let pct: f64 =
        t["values"].as_array().unwrap().iter().map(|v| v["percentage"].as_f64().unwrap()).sum();
    assert!((pct - 100.0).abs() < 0.3, "{pct}");
    let cpu = p("cpu", None);
    assert_eq!(cpu["dataType"], "number");
    assert_eq!(cpu["presentCount"], 156);
    assert_eq!(cpu["missingCount"], 4);
    let hist: u64 =
        cpu["histogram"].as_array().unwrap().iter().map(|b| b["count"].as_u64().unwrap()).sum();
    assert_eq!(hist, 156);
    assert!(cpu["min"].as_f64().unwrap() >= 0.02 && cpu["max"].as_f64().unwrap() <= 0.98);
    let active = p("active", None);
    assert_eq!(active["dataType"], "boolean");
    assert_eq!(active["nullCount"], 3);
    assert_eq!(active["trueCount"].as_u64().unwrap() + active["falseCount"].as_u64().unwrap(), 157);
    let tags = p("tags", None);
    assert_eq!(tags["dataType"], "array");
    assert_eq!(tags["itemType"], "string");
    assert!(tags["valueCounts"].as_array().unwrap().len() > 3);
    let memory = p("memory", None);
    assert_eq!(memory["dataType"], "mixed");
    let breakdown = memory["typeBreakdown"].as_array().unwrap();
    assert_eq!(breakdown.iter().find(|b| b["type"] == "string").unwrap()["count"], 4);
    assert!(memory["string"]["values"].as_array().unwrap().iter().any(|v| v["value"] == "4GB"));
    assert!(memory["number"]["min"].as_f64().unwrap() >= 1024.0);
    let nested = p("metrics.cpu.current", None);
    // Counted over all 160 nodes, not over the 62 that have `metrics`.
    assert_eq!(
        (&nested["totalCount"], &nested["presentCount"], &nested["missingCount"]),
        (&json!(160), &json!(62), &json!(98))
    );
    let latency = p("latency", Some("edges"));
    assert_eq!(latency["missingCount"], 5);
    let bins = ok(describe_property(
        &registry,
        DescribePropertyParams {
            source: infra(),
            property: "latency".into(),
            collection: Some("edges".into()),
            bins: Some(4),
            ..Default::default()
        },
    ));
    assert_eq!(bins["histogram"].as_array().unwrap().len(), 4, "{bins}");
}

#[test]
fn missing_property_reports_suggestions_and_available_properties() {
    let registry = demo();
    let result = describe_property(
        &registry,
        DescribePropertyParams { source: infra(), property: "tpye".into(), ..Default::default() },
    );
    assert!(result.success);
    assert_eq!(result.data["exists"], false);
    assert_eq!(result.data["didYouMean"][0], "type");
    assert!(result.data["availableProperties"].as_array().unwrap().iter().any(|p| p == "region"));
    assert!(result.message.contains("Did you mean 'type'"), "{}", result.message);
}

#[test]
fn sample_data_random_is_reproducible_and_edges_show_endpoints() {
    let registry = demo();
    let params = || SampleDataParams {
        source: infra(),
        collection: Some("both".into()),
        count: Some(3),
        seed: Some(7),
        ..Default::default()
    };
    let a = ok(sample_data(&registry.sources, params()));
    let b = ok(sample_data(&registry.sources, params()));
    assert_eq!(a["nodes"], b["nodes"]);
    assert_eq!(a["nodes"].as_array().unwrap().len(), 3);
    let edge = &a["edges"][0];
    assert!(
        edge["source"].is_string() && edge["target"].is_string() && edge["data"].is_object(),
        "{edge}"
    );
}

#[test]
fn stratified_sampling_gives_one_item_per_value() {
    let registry = demo();
    let data = ok(sample_data(
        &registry.sources,
        SampleDataParams {
            source: infra(),
            collection: Some("nodes".into()),
            count: Some(5),
            stratify_by: Some("type".into()),
            seed: Some(1),
            ..Default::default()
        },
    ));
    let types: std::collections::BTreeSet<String> = data["nodes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|n| n["data"]["type"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(types.len(), 5, "{types:?}");
    let active = ok(sample_data(
        &registry.sources,
        SampleDataParams {
            source: infra(),
            collection: Some("nodes".into()),
            count: Some(3),
            stratify_by: Some("active".into()),
            seed: Some(1),
            ..Default::default()
        },
    ));
    let strata: Vec<&Value> =
        active["nodes"].as_array().unwrap().iter().map(|n| &n["stratum"]).collect();
    assert!(
        strata.contains(&&json!(null))
            && strata.contains(&&json!(true))
            && strata.contains(&&json!(false)),
        "{strata:?}"
    );
}

#[test]
fn representative_sampling_covers_every_path() {
    let registry = demo();
    let data = ok(sample_data(
        &registry.sources,
        SampleDataParams {
            source: infra(),
            collection: Some("nodes".into()),
            strategy: Some(StrategyParam::Representative),
            count: Some(1),
            ..Default::default()
        },
    ));
    let coverage = &data["sampling"]["nodes"]["pathsCovered"];
    assert_eq!(coverage["covered"], coverage["total"]);
    assert!(data["nodes"].as_array().unwrap().len() > 1);
}

#[test]
fn query_schema_infers_from_all_record_values_with_metadata_and_example() {
    let registry = demo();
    let data = ok(query_schema(
        &registry,
        QuerySchemaParams {
            source: Some("sensors".into()),
            record_name: Some("server::Temperature".into()),
            ..Default::default()
        },
    ));
    assert_eq!(data["record_name"], "server::Temperature");
    assert_eq!(data["schema"]["$schema"], "https://json-schema.org/draft/2020-12/schema");
    assert_eq!(data["schema"]["required"], json!(["celsius", "sensor_id", "timestamp"]));
    assert_eq!(data["schema"]["properties"]["celsius"]["type"], "number");
    assert_eq!(data["metadata"]["value_count"], 30);
    assert!(data["metadata"]["buffer_type"].is_string());
    assert!(data["example"]["celsius"].is_number());
    assert!(chrono::DateTime::parse_from_rfc3339(data["inferred_at"].as_str().unwrap()).is_ok());
    let humidity = ok(query_schema(
        &registry,
        QuerySchemaParams {
            source: Some("sensors".into()),
            record_name: Some("server::Humidity".into()),
            include_example: Some(false),
            ..Default::default()
        },
    ));
    assert!(!humidity["schema"]["required"].as_array().unwrap().contains(&json!("calibrated")));
    assert!(humidity.get("example").is_none());
}

#[test]
fn query_schema_unknown_record_lists_available_records() {
    let registry = demo();
    let result = query_schema(
        &registry,
        QuerySchemaParams {
            source: Some("sensors".into()),
            record_name: Some("server::Temprature".into()),
            ..Default::default()
        },
    );
    assert!(!result.success);
    assert!(result.message.contains("Available records:"), "{}", result.message);
    assert!(result.message.contains("Did you mean 'server::Temperature'"), "{}", result.message);
    assert_eq!(result.data["error"], "unknown_record");
}

#[test]
fn query_schema_and_validate_value_on_a_record_set_of_several_need_the_record() {
    let registry = demo();
    let source = registry.sources.get(Some("sensors")).unwrap();
    let set = source.collections[0].name().to_string();
    let keys: Vec<String> =
        source.collections[0].record_profiles().iter().map(|(k, _)| k.clone()).collect();
    assert!(keys.len() > 1, "{keys:?}");
    for collection in [None, Some(set.clone())] {
        let schema = query_schema(
            &registry,
            QuerySchemaParams {
                source: Some("sensors".into()),
                collection: collection.clone(),
                ..Default::default()
            },
        );
        assert!(!schema.success, "{collection:?}: {}", schema.message);
        assert_eq!(schema.data["error"], "record_required");
        assert_eq!(schema.data["records"], json!(keys));
        for key in &keys {
            assert!(schema.message.contains(&format!("\n- {key}")), "{key}: {}", schema.message);
        }
        let verdict = validate_value(
            &registry,
            ValidateValueParams {
                source: Some("sensors".into()),
                collection,
                value: json!({"zzz": "anything"}),
                ..Default::default()
            },
        );
        assert_eq!(
            (verdict.success, verdict.data["error"].as_str()),
            (false, Some("record_required")),
            "{}",
            verdict.message
        );
    }
    // Named, {"zzz": …} is what it is: a value without any of the record's members.
    let named = ok(validate_value(
        &registry,
        ValidateValueParams {
            source: Some("sensors".into()),
            record_name: Some("server::Temperature".into()),
            value: json!({"zzz": "anything"}),
            ..Default::default()
        },
    ));
    assert_eq!(named["valid"], false);
    // A graph's nodes keep their collection schema.
    let nodes =
        ok(query_schema(&registry, QuerySchemaParams { source: infra(), ..Default::default() }));
    assert_eq!(
        (nodes["collection"].as_str(), nodes["record_name"].as_str()),
        (Some("nodes"), None)
    );
}

#[test]
fn inferred_schemas_assert_no_observation_and_plausible_next_values_validate() {
    let registry = demo();
    let data = ok(query_schema(
        &registry,
        QuerySchemaParams {
            source: Some("sensors".into()),
            record_name: Some("server::Temperature".into()),
            include_example: Some(false),
            ..Default::default()
        },
    ));
    let schema = &data["schema"];
    let celsius = &schema["properties"]["celsius"];
    let max = celsius["x-observed"]["maximum"].as_f64().expect("observed maximum");
    let timestamp_max = schema["properties"]["timestamp"]["x-observed"]["maximum"]
        .as_f64()
        .expect("observed maximum");
    assert!(celsius.get("maximum").is_none() && celsius.get("minimum").is_none(), "{celsius}");
    let next = json!({"celsius": max + 10.0, "sensor_id": "sensor-never-seen", "timestamp": timestamp_max + 1.5});
    assert!(
        jsonschema::draft202012::new(schema).expect("compiles").is_valid(&next),
        "{next} against {schema}"
    );
    let verdict = ok(validate_value(
        &registry,
        ValidateValueParams {
            source: Some("sensors".into()),
            record_name: Some("server::Temperature".into()),
            value: next,
            ..Default::default()
        },
    ));
    assert_eq!(verdict["valid"], true, "{verdict}");
    let keywords: Vec<&str> = verdict["warnings"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|w| w["keyword"].as_str())
        .collect();
    assert!(keywords.contains(&"maximum"), "{verdict}");
}

#[test]
fn every_record_value_validates_against_its_inferred_schema() {
    let registry = demo();
    let source = registry.sources.get(Some("sensors")).unwrap();
    let collection = &source.collections[0];
    for (key, _) in collection.record_profiles() {
        let data = ok(query_schema(
            &registry,
            QuerySchemaParams {
                source: Some("sensors".into()),
                record_name: Some(key.clone()),
                include_example: Some(false),
                ..Default::default()
            },
        ));
        let validator = jsonschema::draft202012::new(&data["schema"]).expect("compiles");
        for item in collection.items().filter(|i| i.id == key) {
            let value = item.value().unwrap();
            let errors: Vec<String> =
                validator.iter_errors(&value).map(|e| e.to_string()).collect();
            assert!(errors.is_empty(), "{key}: {value} -> {errors:?}");
        }
    }
    let nodes = ok(query_schema(
        &registry,
        QuerySchemaParams {
            source: infra(),
            collection: Some("nodes".into()),
            include_example: Some(false),
            ..Default::default()
        },
    ));
    let validator = jsonschema::draft202012::new(&nodes["schema"]).expect("compiles");
    let graph = registry.sources.get(Some("infrastructure")).unwrap();
    for item in graph.collections[0].items() {
        assert!(validator.is_valid(&item.value().unwrap()), "{}", item.json);
    }
}

#[test]
fn validate_value_reports_errors_with_paths_expected_and_actual() {
    let registry = demo();
    let params = |value: Value| ValidateValueParams {
        source: Some("sensors".into()),
        record_name: Some("server::Temperature".into()),
        collection: None,
        value,
        ..Default::default()
    };
    let bad = ok(validate_value(&registry, params(json!({"celsius": "hot", "sensor_id": 123}))));
    assert_eq!(bad["valid"], false);
    let errors = bad["errors"].as_array().unwrap();
    assert!(
        errors.iter().any(|e| e["path"] == "/celsius"
            && e["expected"] == "number"
            && e["actual"] == "string"),
        "{errors:?}"
    );
    assert!(errors.iter().any(|e| e["path"] == "/timestamp" && e["keyword"] == "required"));
    let good = ok(validate_value(
        &registry,
        params(json!({"celsius": 22.5, "sensor_id": "sensor-01", "timestamp": 1730649600.5})),
    ));
    assert_eq!(good["valid"], true);
}

#[test]
fn find_items_selects_and_reports_syntax_errors_with_position() {
    let registry = demo();
    let data = ok(find_items(
        &registry.sources,
        FindItemsParams {
            source: infra(),
            selector: "type == 'database'".into(),
            ..Default::default()
        },
    ));
    assert_eq!(data["count"], 20);
    assert_eq!(data["items"].as_array().unwrap().len(), 5);
    let slow = ok(find_items(
        &registry.sources,
        FindItemsParams {
            source: infra(),
            selector: "latency > `100`".into(),
            collection: Some("edges".into()),
            ..Default::default()
        },
    ));
    assert_eq!(slow["count"], 15);
    let bad = find_items(
        &registry.sources,
        FindItemsParams { source: infra(), selector: "type ==".into(), ..Default::default() },
    );
    assert!(!bad.success);
    assert_eq!(bad.data["error"], "invalid_selector");
    assert!(bad.data["column"].as_u64().unwrap() >= 7);
}

#[test]
fn unknown_source_and_collection_are_errors_listing_what_exists() {
    let registry = demo();
    let r = describe_schema(
        &registry.sources,
        DescribeSchemaParams { source: Some("infrastructur".into()), ..Default::default() },
    );
    assert!(!r.success && r.message.contains("Did you mean `infrastructure`"), "{}", r.message);
    let r = describe_schema(&registry.sources, DescribeSchemaParams::default());
    assert!(!r.success && r.message.contains("infrastructure, sensors"), "{}", r.message);
    let r = describe_property(
        &registry,
        DescribePropertyParams {
            source: infra(),
            property: "x".into(),
            collection: Some("nodez".into()),
            ..Default::default()
        },
    );
    assert!(!r.success && r.message.contains("Did you mean `nodes`"), "{}", r.message);
}

#[test]
fn list_sources_shows_collections_and_records() {
    let registry = demo();
    let data = ok(list_sources(&registry, ListSourcesParams::default()));
    let sources = data["sources"].as_array().unwrap();
    assert_eq!(sources.len(), 2);
    assert_eq!(sources[1]["collections"][0]["records"].as_array().unwrap().len(), 8);
}

#[test]
fn a_selector_query_returns_every_row_up_to_max_rows_and_says_when_it_cut() {
    let services = demo();
    let matching = ok(find_items(
        &services.sources,
        FindItemsParams {
            source: infra(),
            selector: "type == 'server'".into(),
            ..Default::default()
        },
    ))["count"]
        .as_u64()
        .unwrap_or(0) as usize;
    assert!(matching > 50, "the demo has more servers than one find_items page: {matching}");
    let query = |max_rows| {
        ok(execute_query(
            &services.sources,
            ExecuteQueryParams {
                source: infra(),
                query: json!("type == 'server'"),
                max_rows: Some(max_rows),
                ..Default::default()
            },
        ))
    };
    let all = query(1_000);
    assert_eq!(all["rowCount"], matching);
    assert_eq!(all["truncated"], false);
    let few = query(10);
    assert_eq!(few["rowCount"], 10);
    assert_eq!(few["truncated"], true);
}

#[test]
fn sql_runs_on_a_graph_and_a_sampled_source_says_why_it_runs_none() {
    let services = demo();
    let run = ok(execute_query(
        &services.sources,
        ExecuteQueryParams {
            source: infra(),
            query: json!("SELECT COUNT(*) FROM nodes"),
            ..Default::default()
        },
    ));
    assert_eq!(run["rows"], json!([[160]]));
    // A file profiled by streaming keeps a sample of its items: no SQL over the sample.
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("events.ndjson");
    let lines: Vec<String> = (0..20_000).map(|i| format!("{{\"i\": {i}}}")).collect();
    std::fs::write(&path, lines.join("\n")).expect("write");
    let sampled = Services::new();
    let spec: schemascope_sources::SourceSpec =
        format!("events={}", path.display()).parse().expect("spec");
    sampled
        .sources
        .load_with(
            &[spec],
            &schemascope_sources::NoProgress,
            schemascope_sources::ReadMode::COPY.streamed(),
        )
        .expect("load");
    let events = Some("events".to_string());
    let run = execute_query(
        &sampled.sources,
        ExecuteQueryParams {
            source: events.clone(),
            query: json!("SELECT COUNT(*) FROM events"),
            ..Default::default()
        },
    );
    assert!(!run.success, "{}", run.data);
    assert!(run.message.contains("runs no SQL"), "{}", run.message);
    let check = ok(validate_query(
        &sampled.docs,
        ValidateQueryParams { source: events, query: json!("select 1"), question: None },
    ));
    assert_eq!(check["valid"], false);
    let message = check["errors"][0]["message"].as_str().unwrap_or("");
    assert!(message.contains("runs no SQL") && message.contains("sample of 20000"), "{check}");
}

#[test]
fn sampling_a_record_that_does_not_exist_is_an_error_with_did_you_mean() {
    let services = demo();
    let result = sample_data(
        &services.sources,
        SampleDataParams {
            source: Some("sensors".into()),
            record_name: Some("sensor-01x".into()),
            ..Default::default()
        },
    );
    assert!(!result.success, "{}", result.message);
    assert_eq!(result.data["error"], "unknown_record", "{}", result.data);
}
