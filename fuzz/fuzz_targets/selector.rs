//! Fuzzes JMESPath selectors differentially: the input is a selector, a newline, and JSON items
//! (an array or one value). Selection must never panic or overflow the stack, and the fast path
//! over parsed values and the columnar path over the items' text must give exactly what the
//! jmespath crate gives — unless the evaluation stopped at one of its bounds (steps, depth of
//! built values), which it must say.
#![no_main]

use libfuzzer_sys::fuzz_target;
use schemascope_core::cancel::Cancel;
use schemascope_core::selector::{Halt, Selector};
use schemascope_core::selector::columns::{PathColumn, evaluate};
use serde_json::Value;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else { return };
    let (expression, json) = text.split_once('\n').unwrap_or((text, "[]"));
    let Ok(selector) = Selector::parse(expression) else { return };
    let Ok(reference) = jmespath::compile(expression) else { panic!("Selector::parse accepted what jmespath refuses: {expression:?}") };
    let items = match serde_json::from_str::<Value>(json) {
        Ok(Value::Array(items)) => items,
        Ok(one) => vec![one],
        Err(_) => return,
    };
    let texts: Vec<String> = items.iter().map(Value::to_string).collect();
    // A selector stopped at a bound on any item is checked for that, not compared: the jmespath
    // crate has no bounds (and might run for minutes).
    for item in &items {
        match selector.check_value(item, &Cancel::new()) {
            Ok(_) => {}
            Err(Halt::TooCostly | Halt::TooDeep) => return,
            Err(other) => panic!("{expression:?} halted without a bound: {other}"),
        }
    }
    let expected: Vec<Result<bool, String>> = texts
        .iter()
        .map(|t| {
            let variable = jmespath::Variable::from_json(t)?;
            reference.search(variable).map(|v| v.is_truthy()).map_err(|e| e.reason.to_string())
        })
        .collect();
    for (item, want) in items.iter().zip(&expected) {
        assert_eq!(&selector.matches_value(item), want, "matches_value of {expression:?} on {item}");
    }
    if let Some(paths) = selector.column_paths() {
        let columns = PathColumn::build(&paths, texts.len(), |i| texts[i].as_str());
        let answers = evaluate(&[&selector], &[columns.iter().collect()], texts.len());
        for ((answer, json), want) in answers[0].iter().zip(&texts).zip(&expected) {
            let got = answer.map_or_else(|| selector.matches_json(json), Ok);
            assert_eq!(&got, want, "columns for {expression:?} on {json}");
        }
    }
});
