//! Hostile selectors: nested past any stack, exponential in the work they ask for, or running
//! while their call is cancelled. Each is refused or stopped with a clear error, on a thread with
//! the 2 MiB stack of a tokio worker (where the nested ones used to abort the process).

use schemascope_core::cancel::{self, Cancel};
use schemascope_core::display::DisplayLimits;
use schemascope_core::selector::{MAX_SELECTOR_BYTES, MAX_SELECTOR_DEPTH, Selector, find_items};
use schemascope_core::sync;
use schemascope_core::{Collection, CollectionKind, CoreError, OwnedItem};
use serde_json::json;

/// Runs `work` on a thread with a 2 MiB stack, as tokio's workers and blocking threads have.
fn on_small_stack<T: Send>(work: impl FnOnce() -> T + Send) -> T {
    std::thread::scope(|scope| {
        sync::joined(
            std::thread::Builder::new()
                .stack_size(2 << 20)
                .spawn_scoped(scope, work)
                .expect("spawns")
                .join(),
        )
    })
}

fn refusal(text: &str) -> String {
    match on_small_stack(|| Selector::parse(text)) {
        Err(CoreError::InvalidSelector { reason, .. }) => reason,
        Err(other) => panic!("{other}"),
        Ok(_) => panic!("accepted {} bytes: {}…", text.len(), &text[..text.len().min(60)]),
    }
}

#[test]
fn selectors_nested_past_the_bound_are_refused_with_the_reason() {
    let nested = |open: &str, inner: &str, close: &str, n: usize| {
        format!("{}{inner}{}", open.repeat(n), close.repeat(n))
    };
    let deep = [
        // The two: ~2.5 KB each.
        format!("{}type", "!".repeat(2_500)),
        nested("[", "type", "]", 800),
        // Variants: other brackets, unary chains, chains of binary operators, paths, projections,
        // function calls, filters, expression references, pipes.
        nested("(", "type", ")", 5_000),
        nested("{a: ", "type", "}", 300),
        nested("not_null(", "type", ")", 1_000),
        nested("!(", "type", ")", 200),
        format!("{}type", "& ".repeat(3_000)),
        format!("{}type", "!".repeat(200)),
        format!("type{}", " || type".repeat(1_500)),
        format!("type{}", " && type".repeat(200)),
        format!("a{}", ".a".repeat(5_000)),
        format!("a{}", "[0]".repeat(3_000)),
        format!("a{}", "[*].a".repeat(1_000)),
        format!("a{}", "[].a".repeat(1_000)),
        format!("a{}", " | a".repeat(3_000)),
        format!("a{} == `1`", "[?b".repeat(300) + &"]".repeat(300)),
        format!("type == {}", "type == ".repeat(150) + "type"),
    ];
    for text in &deep {
        assert!(text.len() <= MAX_SELECTOR_BYTES, "{} bytes", text.len());
        let reason = refusal(text);
        assert!(
            reason.contains(&format!("nests deeper than {MAX_SELECTOR_DEPTH} levels")),
            "{reason}"
        );
    }
    // Brackets in strings, names and literals are not nesting.
    let quoted = format!(
        "type == '{}' || \"{}\" == `\"{}\"`",
        "[".repeat(500),
        "(".repeat(500),
        "{".repeat(500)
    );
    assert!(on_small_stack(|| Selector::parse(&quoted)).is_ok());
    // A deep literal is the JSON parser's to refuse (serde_json's recursion limit).
    let literal = format!("a == `{}1{}`", "[".repeat(200), "]".repeat(200));
    assert!(refusal(&literal).contains("recursion limit"), "{}", refusal(&literal));
    // Past the size bound nothing is read; just inside it, a flat selector is fine.
    let long = format!("type == '{}'", "x".repeat(MAX_SELECTOR_BYTES));
    assert!(refusal(&long).contains(&format!("at most {MAX_SELECTOR_BYTES} are accepted")));
    let chain = vec!["contains(['a', 'b'], type)"; 400].join(" && ");
    assert!(chain.len() > 10_000);
    assert!(refusal(&chain).contains("nests deeper"), "400 terms of && are 400 levels");
    let flat = format!("contains([{}], type)", vec!["'server'"; 1_500].join(", "));
    assert!(flat.len() > 10_000);
    assert!(on_small_stack(|| Selector::parse(&flat)).is_ok(), "a long but flat selector parses");
}

#[test]
fn the_deepest_accepted_selector_evaluates_on_a_small_stack() {
    let bound = MAX_SELECTOR_DEPTH;
    let item = json!({"type": "server", "a": {"a": {"a": 1}}});
    let texts = [
        format!("{}type", "!".repeat(bound - 1)),
        format!("{}type{}", "[".repeat(bound - 1), "]".repeat(bound - 1)),
        format!("type{}", " || type".repeat(bound - 2)),
        format!("{}type{}", "not_null(".repeat(bound - 1), ")".repeat(bound - 1)),
    ];
    let collection = Collection::from_values(
        "nodes",
        CollectionKind::Nodes,
        [OwnedItem::new("a", item.clone())],
    );
    for text in &texts {
        let answer = on_small_stack(|| Selector::parse(text).map(|s| s.matches_value(&item)));
        assert!(matches!(answer, Ok(Ok(_))), "{text}: {answer:?}");
        // The whole tool path too: fields, hints for a zero match, rendering.
        let found = on_small_stack(|| {
            let selector = Selector::parse(text).expect("parses");
            let _ = selector.fields();
            find_items(&collection, &[], &selector, 5, &DisplayLimits::default()).map(|f| f.total)
        });
        assert_eq!(found.expect("runs"), 1, "{text}");
    }
    let depth_over = format!("{}type", "!".repeat(bound + 1));
    assert!(refusal(&depth_over).contains("nests deeper"));
}

fn items(n: usize) -> Collection {
    Collection::from_values(
        "nodes",
        CollectionKind::Nodes,
        (0..n).map(|i| OwnedItem::new(format!("n{i}"), json!({"type": "server", "i": i}))),
    )
}

#[test]
fn an_exponential_selector_fails_the_call_with_the_bound_it_reached() {
    let collection = items(1_000);
    for text in [
        // The issue's: 170 bytes, 77 s of CPU per item in the jmespath crate.
        format!("length({}) > `5`", "[@,@,@,@,@,@,@,@,@,@][]".repeat(7)),
        format!(
            "length(join('', {})) > `5`",
            "[to_string(@), to_string(@)][] | [join('', @), join('', @)] | ".repeat(30) + "@"
        ),
        format!(
            "length(to_string({}[@,@,@,@,@,@,@,@,@,@]{})) > `5`",
            "map(&".repeat(7),
            ", [@,@,@,@,@,@,@,@,@,@])".repeat(7)
        ),
    ] {
        let selector = Selector::parse(&text).expect("parses");
        let error = find_items(&collection, &[], &selector, 5, &DisplayLimits::default())
            .expect_err("stopped");
        let CoreError::SelectorTooCostly { item, reason, .. } = &error else { panic!("{error}") };
        assert!(item.starts_with('n'), "{item}");
        assert!(reason.contains("more than 10000000 steps on one item"), "{reason}");
        assert!(error.to_string().contains("was stopped on item"), "{error}");
    }
}

#[test]
fn a_cancelled_call_stops_between_items_and_says_how_far_it_got() {
    let collection = items(20_000);
    // Not on the fast path, so every item goes through the evaluator.
    let selector = Selector::parse("length(to_string(@)) > `1`").expect("parses");
    let cancelled = Cancel::new();
    cancelled.cancel_because("the request took longer than 60 s");
    let error = cancel::with(&cancelled, || {
        find_items(&collection, &[], &selector, 5, &DisplayLimits::default())
    })
    .expect_err("cancelled");
    let CoreError::Cancelled { reason, done } = &error else { panic!("{error}") };
    assert_eq!(reason, "the request took longer than 60 s");
    assert_eq!(done, "0 of 20000 items evaluated");

    // Cancelled while it runs, from another thread: the loop sees it and stops early.
    let heavy = Collection::from_values(
        "nodes",
        CollectionKind::Nodes,
        (0..4_000)
            .map(|i| OwnedItem::new(format!("n{i}"), json!({"list": vec!["abcdefgh"; 1_000]}))),
    );
    let slow = Selector::parse("length(sort(list)) > `1`").expect("parses");
    let token = Cancel::new();
    let error = std::thread::scope(|scope| {
        let run = scope.spawn(|| {
            cancel::with(&token, || find_items(&heavy, &[], &slow, 5, &DisplayLimits::default()))
        });
        std::thread::sleep(std::time::Duration::from_millis(200));
        token.cancel_because("the client cancelled the request");
        sync::joined(run.join())
    })
    .expect_err("cancelled");
    let CoreError::Cancelled { reason, done } = &error else { panic!("{error}") };
    assert_eq!(reason, "the client cancelled the request");
    let evaluated: usize = done.split(' ').next().and_then(|n| n.parse().ok()).expect("a count");
    assert!(evaluated < 4_000, "{done}");
}
