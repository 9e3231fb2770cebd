//! The selector module's evaluators held to the jmespath crate's own answers (the fast path on
//! parsed items and on columns, the bounded evaluator on items read cut), and find_items end to
//! end: matches, items not evaluated, parse errors and the hints of a zero match.

use serde_json::{Value, json};

use super::columns::{FieldPath, PathColumn, evaluate};
use super::{FindResult, Selector, find_items};
use crate::collection::{Collection, CollectionKind, OwnedItem};
use crate::display::DisplayLimits;
use crate::error::CoreError;

/// The jmespath crate's own answer, the reference every evaluator here is held to.
fn crate_search(text: &str, data: jmespath::Variable) -> Result<bool, String> {
    let expression = jmespath::compile(text).map_err(|e| e.reason.to_string())?;
    expression.search(data).map(|v| v.is_truthy()).map_err(|e| e.reason.to_string())
}

#[test]
fn the_fast_path_agrees_with_the_jmespath_crate_on_every_item() {
    let items = [
        json!({"type": "server", "cpu": 0.9, "n": 1, "f": 1.0, "tags": ["critical", "web"], "meta": {"owner": "ops", "level": 3}, "active": true, "s": ""}),
        json!({"type": "database", "cpu": 0.2, "n": 0, "tags": [], "meta": {"owner": null}, "active": false, "s": "x", "list": [1, 2, 3]}),
        json!({"type": "server", "cpu": "high", "n": 2.5, "tags": "critical-web", "meta": 7, "list": [[1], {"a": 1}]}),
        json!(null),
        json!([1, 2]),
        json!({"a": {"b": {"c": [10, 20, 30]}}, "x": {"y": 1}, "z": {"y": 1.0}}),
        // Nulls, missing parents and mixed types in every position the selectors read.
        json!({"type": null, "cpu": null, "tags": null, "meta": null, "list": null, "s": null, "n": null}),
        json!({"type": 7, "cpu": true, "tags": {"critical": 1}, "meta": [1], "list": "abc", "s": [], "n": "1", "active": "false"}),
        json!({"type": ["server"], "cpu": [0.9], "tags": [null, "critical"], "meta": {"owner": 3, "level": "3"}, "n": -0.0, "f": 1e300}),
        json!({"type": "Server", "cpu": 1e-9, "tags": ["Critical", "critical "], "n": 9007199254740993_u64, "x": null, "z": null}),
        json!({}),
        json!(""),
        json!(0),
    ];
    let selectors = [
        "type == 'server'",
        "type != 'server'",
        "cpu > `0.5`",
        "cpu >= `0.2`",
        "cpu < `0.5`",
        "cpu <= `0.2`",
        "n == `1`",
        "n == `1.0`",
        "f == `1`",
        "!active",
        "active && cpu > `0.5`",
        "active || type == 'database'",
        "contains(tags, 'critical')",
        "contains(tags, 'web')",
        "meta.owner == 'ops'",
        "meta.owner == null",
        "meta.level > `2`",
        "s",
        "!s",
        "tags",
        "list[0] == `1`",
        "list[-1] == `3`",
        "list[1].a == `1`",
        "a.b.c[1] == `20`",
        "x == z",
        "x == `{\"y\": 1}`",
        "tags == `[]`",
        "missing",
        "!missing",
        "type > 'a'",
        "type == `\"server\"`",
        "n",
        "`true`",
        "type == 'server' && (cpu > `0.5` || n > `1`)",
        "contains(type, 'erv')",
        "`0.5` < cpu",
        "'server' == type",
        "`1` != n",
        "n != `1`",
        "type != `2`",
        "cpu == 'high'",
        "meta",
        "!(meta.level)",
        "tags == list",
        "list == `[1, 2, 3]`",
        "`[1, 2, 3]` == list",
        "list[5]",
        "list[-4]",
        "list[0][0] == `1`",
        "contains(list, `2`)",
        "contains(list, `[1]`)",
        "!list",
        "contains(list, 'a')",
        "contains(s, '')",
        "type == null",
        "x == z",
        "n < 'a'",
        "'a' < type",
        "meta.owner.deeper == `3`",
        "tags[0] == null",
        "!contains(tags, 'critical') || cpu > `0`",
    ];
    // The same items as JSON text for the columns, plus texts no tree shows: a repeated key
    // (the last one wins), escapes in keys and values, and a huge integer.
    let mut texts: Vec<String> = items.iter().map(Value::to_string).collect();
    texts.push(r#"{"meta": {"owner": "ops"}, "type": "server", "meta": 5, "cpu": 0.9}"#.into());
    texts.push(
        r#"{"meta": 5, "meta": {"level": 9, "owner": "o\u0070s"}, "t\u0079pe": "ser\"ver"}"#.into(),
    );
    texts.push(
        r#"{"n": 18446744073709551615, "cpu": -1e300, "tags": ["critical"], "tags": "critical"}"#
            .into(),
    );
    texts.push(r#"{"tags": [1, 2, 3], "list": [1, 2, 3], "x": [], "z": []}"#.into());
    texts.push(r#"{"tags": [null, true, "a", 1.5, {"b": [2]}], "list": [null, true, "a", 1.5, {"b": [2]}]}"#.into());
    for text in selectors {
        let selector = Selector::parse(text).expect(text);
        assert!(selector.is_fast(), "{text} should take the fast path");
        for item in &items {
            let fast = selector.matches_value(item);
            let slow = jmespath::Variable::try_from(item)
                .map_err(|e| e.to_string())
                .and_then(|v| crate_search(text, v));
            assert_eq!(fast, slow, "{text} on {item}");
        }
        let paths = selector.column_paths().expect("fast");
        let columns = PathColumn::build(&paths, texts.len(), |i| texts[i].as_str());
        let answers = evaluate(&[&selector], &[columns.iter().collect()], texts.len()).remove(0);
        for (json, answer) in texts.iter().zip(answers) {
            let slow = jmespath::Variable::from_json(json).and_then(|v| crate_search(text, v));
            let by_column = answer.map_or_else(|| selector.matches_json(json), Ok);
            assert_eq!(by_column, slow, "{text} on {json} by columns");
        }
    }
    // Columns of many paths built at once (a path and one below it too) on chunks over threads.
    let many: Vec<String> = (0..10_000)
        .map(|i| {
            format!(r#"{{"n": {i}, "meta": {{"level": {}}}, "s": "{}"}}"#, i % 7, "x".repeat(i % 3))
        })
        .collect();
    let paths: Vec<FieldPath> = vec![
        vec!["meta".into()],
        vec!["meta".into(), "level".into()],
        vec!["s".into()],
        vec!["n".into()],
    ];
    let columns = PathColumn::build(&paths, many.len(), |i| many[i].as_str());
    assert_eq!(columns.iter().map(PathColumn::len).collect::<Vec<_>>(), [10_000; 4]);
    let selector = Selector::parse("meta.level == `3` && s && n > `5000`").expect("valid");
    let wanted: Vec<&PathColumn> = selector
        .column_paths()
        .expect("fast")
        .iter()
        .map(|p| columns.iter().find(|c| c.path() == p).expect("built"))
        .collect();
    let hits = evaluate(&[&selector], &[wanted], many.len()).remove(0);
    assert_eq!(hits.len(), many.len());
    assert_eq!(
        hits.iter().filter(|hit| **hit == Some(true)).count(),
        (5001..10_000).filter(|i| i % 7 == 3 && i % 3 != 0).count()
    );
    let unreadable = ["{\"n\": 1}", "{\"n\": ", "[1, 2]"];
    let column = PathColumn::build(&[vec!["n".into()]], 3, |i| unreadable[i]);
    let selector = Selector::parse("!missing").expect("valid");
    let by_n = Selector::parse("n == `1` || !n").expect("valid");
    // An unreadable item is left to the jmespath crate, which reports it (never a silent miss).
    assert_eq!(evaluate(&[&by_n], &[vec![&column[0]]], 3), [[Some(true), None, Some(true)]]);
    assert!(by_n.matches_json(unreadable[1]).expect_err("unreadable").contains("not valid JSON"));
    assert!(selector.column_paths().is_some_and(|p| p == [vec!["missing".to_string()]]));
    assert!(
        !Selector::parse("length(tags) > `1`").expect("valid").is_fast(),
        "other functions use the crate"
    );
}

fn nodes() -> Collection {
    Collection::from_values(
        "nodes",
        CollectionKind::Nodes,
        [
            OwnedItem::new("a", json!({"type": "server", "cpu": 0.9, "my-key": 1})),
            OwnedItem::new("b", json!({"type": "database", "cpu": 0.2})),
            OwnedItem::new("c", json!({"type": "server", "cpu": 0.1})),
        ],
    )
}

#[test]
fn selects_with_raw_strings_backtick_literals_and_quoted_identifiers() {
    let c = nodes();
    let limits = DisplayLimits::default();
    let run =
        |s: &str| find_items(&c, &[], &Selector::parse(s).expect(s), 10, &limits).expect("runs");
    assert_eq!(run("type == 'server'").ids, ["a", "c"]);
    assert_eq!(run("cpu > `0.5`").ids, ["a"]);
    assert_eq!(run("\"my-key\" == `1`").ids, ["a"]);
    assert_eq!(run("type == 'server' && cpu < `0.5`").count, 1);
    assert_eq!(run("type == 'router'").count, 0);
}

#[test]
fn parse_errors_carry_position_and_hints() {
    let err = Selector::parse("cpu > 0.5").expect_err("bare number is invalid JMESPath");
    let text = err.to_string();
    assert!(text.contains("line 1, column"), "{text}");
    assert!(text.contains("backticks"), "{text}");
    let CoreError::InvalidSelector { column, .. } = err else { panic!("wrong error") };
    assert!(column >= 7, "column {column}");
}

#[test]
fn fields_lists_every_property_read() {
    let selector =
        Selector::parse("type == 'server' && metrics.cpu > `0.5` || contains(tags, 'x')")
            .expect("valid");
    let names: Vec<String> = selector.fields().into_iter().map(|(n, _)| n).collect();
    assert_eq!(names, ["type", "metrics", "cpu", "tags"]);
}

#[test]
fn a_data_prefix_that_matches_nothing_gets_a_hint() {
    let c = nodes();
    let found = find_items(
        &c,
        &[],
        &Selector::parse("data.type == 'server'").expect("parses"),
        5,
        &DisplayLimits::default(),
    )
    .expect("runs");
    assert_eq!(found.count, 0);
    assert!(
        found.hints.iter().any(|h| h.contains("root is already") && h.contains("write `type`")),
        "{:?}",
        found.hints
    );
}

fn run(c: &Collection, others: &[&Collection], selector: &str) -> FindResult {
    find_items(
        c,
        others,
        &Selector::parse(selector).expect(selector),
        10,
        &DisplayLimits::default(),
    )
    .expect(selector)
}

#[test]
fn an_item_a_selector_cannot_evaluate_does_not_match_and_is_counted() {
    let deep = (0..200).fold(json!("bottom"), |inner, _| json!({"a": [inner]}));
    let c = Collection::from_values(
        "nodes",
        CollectionKind::Nodes,
        [
            OwnedItem::new("a", json!({"tags": ["critical", "web"], "name": "alpha", "n": 3})),
            OwnedItem::new("b", json!({"tags": null, "name": null, "n": "x"})),
            OwnedItem::new("c", json!({"name": 5})),
            OwnedItem::new("d", json!({"tags": ["critical"], "name": "delta", "n": [1]})),
            OwnedItem::new(
                "e",
                json!({"tags": ["critical"], "name": "deep", "n": 1, "deep": deep}),
            ),
        ],
    );
    let found = run(&c, &[], "contains(tags, 'critical')");
    // `e` is nested 400 levels deep, past what serde_json parses; a fast selector reads it
    // with a depth cap, as the selector columns do, since everything it reads lies above.
    assert_eq!(found.ids, ["a", "d", "e"]);
    assert_eq!(found.unevaluated.count, 2);
    assert_eq!(
        found.unevaluated.example_id.as_deref(),
        Some("b"),
        "the first item in order is the example"
    );
    assert!(
        found
            .unevaluated
            .sentence("node", "nodes")
            .contains("2 nodes were not evaluated and do not match (e.g. `b`:")
    );
    // `e` is evaluated on its part above the cut: every selector here reads only that part.
    for (selector, ids, unevaluated) in [
        ("starts_with(name, 'al')", vec!["a"], 2),
        ("length(n) > `0`", vec!["b", "d"], 3),
        ("length(tags) > `1`", vec!["a"], 2),
        ("max(tags) == 'web'", vec!["a"], 2),
        ("n > `2`", vec!["a"], 0),
        ("type == 'x'", vec![], 0),
        ("name == 'deep'", vec!["e"], 0),
        ("starts_with(name, 'de') && n == `1`", vec!["e"], 2),
    ] {
        let found = run(&c, &[], selector);
        let ids: Vec<&str> = ids.to_vec();
        // Against the jmespath crate's own answer on every item, `e` read cut.
        let crate_errors = c
            .items()
            .filter(|item| {
                let (value, _) = crate::capped::parse_capped(item.json).expect("parses");
                jmespath::Variable::try_from(&value)
                    .map_err(|e| e.to_string())
                    .and_then(|v| crate_search(selector, v))
                    .is_err()
            })
            .count();
        assert_eq!(found.unevaluated.count, crate_errors, "{selector}");
        assert_eq!(found.unevaluated.count, unevaluated, "{selector}");
        assert_eq!(found.ids, ids, "{selector}");
    }
    // A selector whose answer depends on the cut part does not answer from the marker that
    // stands for it: comparing, converting or looking into it leaves `e` unevaluated.
    let bottom = format!("deep{}", ".a[0]".repeat(60));
    for selector in [
        format!("{bottom} == 'bottom'"),
        "contains(to_string(deep), 'bottom')".to_string(),
        "deep == deep".to_string(),
        format!("type(deep{}) == 'string'", ".a[0]".repeat(60)),
        "length(to_string(@)) > `0`".to_string(),
        format!("!(deep{})", ".a[0]".repeat(60)),
    ] {
        let found = run(&c, &[], &selector);
        assert!(!found.ids.contains(&"e".to_string()), "{selector}: {:?}", found.ids);
        let verdict =
            Selector::parse(&selector).expect("valid").matches_json(c.item(4).expect("e").json);
        assert!(
            verdict.as_ref().is_err_and(|reason| reason.contains("deeper than 100 levels")),
            "{selector}: {verdict:?}"
        );
    }
    let compiled = Selector::parse(&format!("{bottom} == 'bottom'")).expect("valid");
    let e = c.item(4).expect("e");
    assert!(
        compiled
            .matches_json(e.json)
            .expect_err("not evaluated")
            .contains("deeper than 100 levels")
    );
    // Stored cut (a graph element is kept cut at 100 levels): the same refusals.
    let (stored, _) = crate::capped::parse_capped(e.json).expect("parses");
    for selector in [
        format!("{bottom} == 'bottom'"),
        "contains(to_string(deep), 'bottom')".to_string(),
        format!("deep{} == 'x'", ".a[0]".repeat(55)),
    ] {
        let compiled = Selector::parse(&selector).expect("valid");
        assert!(
            compiled
                .matches_value(&stored)
                .expect_err("not evaluated")
                .contains("deeper than 100 levels"),
            "{selector}"
        );
    }
    assert_eq!(Selector::parse("name == 'deep'").expect("valid").matches_value(&stored), Ok(true));
    assert_eq!(
        Selector::parse("starts_with(name, 'de')").expect("valid").matches_value(&stored),
        Ok(true)
    );
    // A fast selector whose values reach the cut is not answered from cut data.
    let deep_read =
        Selector::parse(&format!("deep{} == 'bottom'", ".a[0]".repeat(120))).expect("valid");
    assert!(deep_read.is_fast());
    assert!(
        deep_read
            .matches_json(e.json)
            .expect_err("not evaluated")
            .contains("deeper than 100 levels")
    );
    let whole = Selector::parse("deep == deep").expect("valid");
    assert!(whole.matches_json(e.json).is_err(), "a container holding the cut is not compared");
}

#[test]
fn a_zero_match_explains_quotes_case_types_and_unknown_names() {
    let nodes = Collection::from_values(
        "nodes",
        CollectionKind::Nodes,
        [
            OwnedItem::new(
                "a",
                json!({"type": "server", "cpu": 0.9, "city": "Zürich", "tags": ["Critical"], "active": true}),
            ),
            OwnedItem::new("b", json!({"type": "Server ", "cpu": 0.2, "city": null, "tags": null})),
            OwnedItem::new("c", json!({"type": "database", "cpu": null})),
        ],
    );
    let edges = Collection::from_values(
        "edges",
        CollectionKind::Edges,
        [OwnedItem::new("e1", json!({"latency": 4}))],
    );
    let hints = |s: &str| {
        let found = run(&nodes, &[&edges], s);
        assert_eq!(found.count, 0, "{s}");
        found.hints.join("\n")
    };
    let h = hints("type == \"server\"");
    assert!(
        h.contains("double quotes is a property name")
            && h.contains("write `type == 'server'`")
            && h.contains("in 1 node:"),
        "{h}"
    );
    assert!(!h.contains("No node has a property `server`"), "{h}");
    let h = hints("type == 'SERVER'");
    assert!(
        h.contains("compare exactly")
            && h.contains("'server' (1 node)")
            && h.contains("'Server ' (1 node)"),
        "{h}"
    );
    let h = hints("city == 'zurich'");
    assert!(h.contains("'Zürich'"), "{h}");
    let h = hints("contains(tags, 'critical')");
    assert!(h.contains("'Critical'"), "{h}");
    let h = hints("cpu == '0.9'");
    assert!(h.contains("holds numbers (2 nodes)") && h.contains("`` cpu == `0.9` ``"), "{h}");
    let h = hints("active == 'true'");
    assert!(h.contains("never a string") && h.contains("`` active == `true` ``"), "{h}");
    // The rewrite holds backticks: its code span is fenced past them (CommonMark).
    let h = hints("cpu > '0.5'");
    assert!(h.contains("Write the number as a JSON literal: `` cpu > `0.5` ``."), "{h}");
    let h = hints("type > 'a'");
    assert!(h.contains("orders only numbers"), "{h}");
    let h = hints("latency > `3`");
    assert!(
        h.contains("No node has a property `latency`") && h.contains("collection `edges`"),
        "{h}"
    );
    assert!(!h.contains("Did you mean"), "nothing is spelled like latency: {h}");
    let h = hints("tpye == 'server'");
    assert!(h.contains("Did you mean `type`?"), "{h}");
    // A misspelled value: the values closest by spelling.
    let h = hints("type == 'serveur'");
    assert!(h.contains("the closest values it has are 'server' (1 node)"), "{h}");
    // `==` on an array compares the whole array, in any spelling of the string.
    let h = hints("tags == 'Critical'");
    assert!(
        h.contains("`tags` is an array")
            && h.contains("write `contains(tags, 'Critical')` (1 node holds it)"),
        "{h}"
    );
    let h = hints("tags == 'critical'");
    assert!(
        h.contains("write `contains(tags, 'Critical')` (1 node holds it spelled this way)"),
        "{h}"
    );
    // A value that exists nowhere, in any form: no invented hint.
    assert_eq!(hints("type == 'router'"), "");
    assert_eq!(hints("cpu > `5`"), "");
}
