//! Evaluating a selector with bounded work. The jmespath crate's interpreter has no limit: 170
//! bytes of `[@,@,@,@,@,@,@,@,@,@][]` repeated build ten million elements per item and ran for
//! 77 s, beyond any timeout, since nothing inside it can be told to stop. This evaluator is the
//! crate's interpreter (`jmespath::interpret`, same results and the same error messages, which
//! a test and the fuzzer hold it to) with three bounds added:
//!
//! - **Steps**: every element a projection, flatten, list or object produces, every node
//!   evaluated, and every value a function or an equality reads (its size: nodes plus string
//!   bytes / 4) is charged to a budget of [`MAX_STEPS`] per item; past it the selector stops with
//!   [`Stop::TooCostly`]. Work grows with what is charged, so the budget bounds CPU time and the
//!   memory of what is built (a string doubled by `join` is paid for by its length).
//! - **Value depth**: values nested deeper than [`MAX_VALUE_DEPTH`] are refused before they are
//!   built ([`Stop::TooDeep`]), so comparing, printing or dropping them cannot exhaust a stack.
//! - **Cancellation**: the current [`crate::cancel`] token is checked as steps are charged.
//!
//! Functions that take an expression (`map`, `sort_by`, `min_by`, `max_by`) are evaluated here,
//! so their expressions are bounded too; every other function is the crate's own, called once
//! its arguments were paid for.

use std::collections::BTreeMap;

use jmespath::ast::{Ast, Comparator};
use jmespath::functions::{ArgumentType, Signature};
use jmespath::{
    Context, DEFAULT_RUNTIME, ErrorReason, JmespathError, Rcvar, RuntimeError, Variable,
};

use crate::cancel::{CHECK_EVERY, Cancel, Cancelled};

/// Steps one item's evaluation may take. Ordinary selectors take a few dozen per item, or about
/// the item's size when they read all of it (`contains(to_string(@), 'x')` on a 10 MB item
/// takes 2.5 million); the exponential ones reach it within a second.
pub const MAX_STEPS: u64 = 10_000_000;

/// The deepest value an evaluation may build: data as deep as serde_json reads (128) plus as many
/// lists and objects built around it.
pub const MAX_VALUE_DEPTH: u32 = 256;

/// How deep any value read from an item or written as a literal may be: serde_json's recursion
/// limit, which every item and literal went through. Values are counted this deep, never less,
/// so the bound holds without measuring them.
const DATA_DEPTH: u32 = 128;

/// String bytes that cost one step.
const BYTES_PER_STEP: usize = 4;

/// Functions whose cost does not grow with their arguments, so their arguments are not charged.
const CONSTANT_TIME: &[&str] = &["length", "type", "not_null", "abs", "ceil", "floor", "to_array"];

/// Why an evaluation stopped.
#[derive(Debug, Clone, PartialEq)]
pub(super) enum Stop {
    /// The jmespath crate's own error (a function given the wrong type, …), in its words: the
    /// item is not evaluated.
    Error(String),
    /// The item took more than [`MAX_STEPS`] steps.
    TooCostly,
    /// The selector built a value nested deeper than [`MAX_VALUE_DEPTH`].
    TooDeep,
    /// The call's token was cancelled.
    Cancelled(Cancelled),
}

impl From<JmespathError> for Stop {
    fn from(error: JmespathError) -> Self {
        Stop::Error(error.reason.to_string())
    }
}

/// A value and an upper bound of how deeply it nests.
#[derive(Clone)]
struct Val {
    value: Rcvar,
    depth: u32,
}

impl Val {
    fn new(value: Variable, depth: u32) -> Self {
        Self { value: Rcvar::new(value), depth }
    }

    fn null() -> Self {
        Self::new(Variable::Null, 0)
    }

    fn bool(b: bool) -> Self {
        Self::new(Variable::Bool(b), 0)
    }
}

/// Evaluates `ast` (parsed from `expression`) on `data` within [`MAX_STEPS`], checking `cancel`;
/// the result is whether it is truthy.
/// the result is whether it is truthy. `cut` says that `data` was read cut at the depth limit
/// ([`crate::capped`]): then an answer that depends on a cut part is refused (the item is not
/// evaluated) instead of being computed from the marker that stands for it.
pub(crate) fn matches(
    expression: &str,
    ast: &Ast,
    data: Rcvar,
    cut: bool,
    cancel: &Cancel,
) -> Result<bool, Stop> {
    let mut evaluator = Evaluator {
        expression,
        steps_left: MAX_STEPS,
        until_check: CHECK_EVERY as u64,
        cancel,
        cut,
    };
    let result = evaluator.eval(&Val { value: data, depth: DATA_DEPTH }, ast)?;
    evaluator.not_cut(&result.value)?;
    Ok(result.value.is_truthy())
}

struct Evaluator<'a> {
    expression: &'a str,
    steps_left: u64,
    until_check: u64,
    cancel: &'a Cancel,
    cut: bool,
}

/// Why an answer that would read a cut part is refused.
fn reads_cut() -> Stop {
    Stop::Error(crate::capped::reads_cut_part())
}

impl Evaluator<'_> {
    /// Refuses `value` when it is a cut container's marker: looking into it, or at its truth or
    /// type, would answer about the marker instead of the data.
    fn not_cut(&self, value: &Variable) -> Result<(), Stop> {
        match value {
            Variable::String(s) if self.cut && s == crate::capped::DEPTH_MARKER => Err(reads_cut()),
            _ => Ok(()),
        }
    }

    /// Refuses `value` when it holds a cut container's marker anywhere: comparing it or passing
    /// it to a function reads it whole.
    fn holds_no_cut(&self, value: &Variable) -> Result<(), Stop> {
        if !self.cut {
            return Ok(());
        }
        let mut pending = vec![value];
        while let Some(value) = pending.pop() {
            match value {
                Variable::String(s) if s == crate::capped::DEPTH_MARKER => return Err(reads_cut()),
                Variable::Array(items) => pending.extend(items.iter().map(|item| &**item)),
                Variable::Object(map) => pending.extend(map.values().map(|item| &**item)),
                _ => {}
            }
        }
        Ok(())
    }

    fn charge(&mut self, steps: u64) -> Result<(), Stop> {
        if steps > self.steps_left {
            self.steps_left = 0;
            return Err(Stop::TooCostly);
        }
        self.steps_left -= steps;
        if steps >= self.until_check {
            self.cancel.check().map_err(Stop::Cancelled)?;
            self.until_check = CHECK_EVERY as u64;
        } else {
            self.until_check -= steps;
        }
        Ok(())
    }

    /// Charges the size of `value` — what reading all of it costs — walking it without
    /// recursion and no further than the budget reaches (a value shared many times over, as
    /// `[@,@] | [@,@] | …` builds, is counted as often as a reader would visit it).
    fn charge_size(&mut self, value: &Variable) -> Result<(), Stop> {
        let mut pending = vec![value];
        while let Some(value) = pending.pop() {
            match value {
                Variable::String(s) => self.charge(1 + (s.len() / BYTES_PER_STEP) as u64)?,
                Variable::Array(items) => {
                    self.charge(1)?;
                    pending.extend(items.iter().map(|item| &**item));
                }
                Variable::Object(map) => {
                    self.charge(1)?;
                    for (key, item) in map {
                        self.charge((key.len() / BYTES_PER_STEP) as u64)?;
                        pending.push(item);
                    }
                }
                Variable::Expref(ast) => self.charge_ast(ast)?,
                _ => self.charge(1)?,
            }
        }
        Ok(())
    }

    /// Charges the node count of `ast` (cloned into an expression reference).
    fn charge_ast(&mut self, ast: &Ast) -> Result<(), Stop> {
        let mut pending = vec![ast];
        while let Some(node) = pending.pop() {
            self.charge(1)?;
            pending.extend(super::bounds::children(node));
        }
        Ok(())
    }

    fn checked_depth(depth: u32) -> Result<u32, Stop> {
        if depth > MAX_VALUE_DEPTH { Err(Stop::TooDeep) } else { Ok(depth) }
    }

    fn context(&self, offset: usize) -> Context<'_> {
        let mut context = Context::new(self.expression, &DEFAULT_RUNTIME);
        context.offset = offset;
        context
    }

    /// `jmespath::interpret`, node for node, with the bounds of this module.
    fn eval(&mut self, data: &Val, node: &Ast) -> Result<Val, Stop> {
        self.charge(1)?;
        Ok(match node {
            Ast::Field { name, .. } => {
                self.not_cut(&data.value)?;
                Val { value: data.value.get_field(name), depth: data.depth }
            }
            Ast::Subexpr { lhs, rhs, .. } => {
                let left = self.eval(data, lhs)?;
                self.eval(&left, rhs)?
            }
            Ast::Identity { .. } => data.clone(),
            Ast::Literal { value, .. } => Val { value: value.clone(), depth: DATA_DEPTH },
            Ast::Index { idx, .. } => {
                self.not_cut(&data.value)?;
                let value = if *idx >= 0 {
                    data.value.get_index(*idx as usize)
                } else {
                    data.value.get_negative_index(idx.unsigned_abs() as usize)
                };
                Val { value, depth: data.depth }
            }
            Ast::Or { lhs, rhs, .. } => {
                let left = self.eval(data, lhs)?;
                self.not_cut(&left.value)?;
                if left.value.is_truthy() { left } else { self.eval(data, rhs)? }
            }
            Ast::And { lhs, rhs, .. } => {
                let left = self.eval(data, lhs)?;
                self.not_cut(&left.value)?;
                if !left.value.is_truthy() { left } else { self.eval(data, rhs)? }
            }
            Ast::Not { node, .. } => {
                let value = self.eval(data, node)?;
                self.not_cut(&value.value)?;
                Val::bool(!value.value.is_truthy())
            }
            Ast::Condition { predicate, then, .. } => {
                let test = self.eval(data, predicate)?;
                self.not_cut(&test.value)?;
                if test.value.is_truthy() { self.eval(data, then)? } else { Val::null() }
            }
            Ast::Comparison { comparator, lhs, rhs, .. } => {
                let left = self.eval(data, lhs)?;
                let right = self.eval(data, rhs)?;
                self.holds_no_cut(&left.value)?;
                self.holds_no_cut(&right.value)?;
                if matches!(comparator, Comparator::Equal | Comparator::NotEqual) {
                    // Equality reads both values whole.
                    self.charge_size(&left.value)?;
                    self.charge_size(&right.value)?;
                }
                left.value.compare(comparator, &right.value).map_or_else(Val::null, Val::bool)
            }
            Ast::ObjectValues { node, .. } => {
                let subject = self.eval(data, node)?;
                self.not_cut(&subject.value)?;
                match &*subject.value {
                    Variable::Object(map) => {
                        self.charge(map.len() as u64)?;
                        Val::new(Variable::Array(map.values().cloned().collect()), subject.depth)
                    }
                    _ => Val::null(),
                }
            }
            Ast::Projection { lhs, rhs, .. } => {
                let left = self.eval(data, lhs)?;
                self.not_cut(&left.value)?;
                let Some(elements) = left.value.as_array() else { return Ok(Val::null()) };
                let mut collected = Vec::new();
                let mut depth = 0;
                for element in elements {
                    self.charge(1)?;
                    let current =
                        self.eval(&Val { value: element.clone(), depth: left.depth }, rhs)?;
                    if !current.value.is_null() {
                        depth = depth.max(current.depth);
                        collected.push(current.value);
                    }
                }
                Val::new(Variable::Array(collected), Self::checked_depth(depth + 1)?)
            }
            Ast::Flatten { node, .. } => {
                let subject = self.eval(data, node)?;
                self.not_cut(&subject.value)?;
                let Some(elements) = subject.value.as_array() else { return Ok(Val::null()) };
                let mut collected = Vec::new();
                for element in elements {
                    self.not_cut(element)?;
                    match element.as_array() {
                        Some(inner) => {
                            self.charge(inner.len() as u64 + 1)?;
                            collected.extend(inner.iter().cloned());
                        }
                        None => {
                            self.charge(1)?;
                            collected.push(element.clone());
                        }
                    }
                }
                Val::new(Variable::Array(collected), subject.depth)
            }
            Ast::MultiList { elements, .. } => {
                if data.value.is_null() {
                    return Ok(Val::null());
                }
                let mut collected = Vec::with_capacity(elements.len());
                let mut depth = 0;
                for element in elements {
                    let value = self.eval(data, element)?;
                    depth = depth.max(value.depth);
                    collected.push(value.value);
                }
                Val::new(Variable::Array(collected), Self::checked_depth(depth + 1)?)
            }
            Ast::MultiHash { elements, .. } => {
                if data.value.is_null() {
                    return Ok(Val::null());
                }
                let mut collected = BTreeMap::new();
                let mut depth = 0;
                for pair in elements {
                    let value = self.eval(data, &pair.value)?;
                    depth = depth.max(value.depth);
                    collected.insert(pair.key.clone(), value.value);
                }
                Val::new(Variable::Object(collected), Self::checked_depth(depth + 1)?)
            }
            Ast::Function { name, args, offset } => {
                let mut values = Vec::with_capacity(args.len());
                for arg in args {
                    values.push(self.eval(data, arg)?);
                }
                self.function(name, values, *offset)?
            }
            Ast::Expref { ast, .. } => {
                self.charge_ast(ast)?;
                Val::new(Variable::Expref((**ast).clone()), 0)
            }
            Ast::Slice { start, stop, step, offset } => {
                if *step == 0 {
                    let context = self.context(*offset);
                    return Err(JmespathError::from_ctx(
                        &context,
                        ErrorReason::Runtime(RuntimeError::InvalidSlice),
                    )
                    .into());
                }
                self.not_cut(&data.value)?;
                match data.value.slice(*start, *stop, *step) {
                    Some(items) => {
                        self.charge(items.len() as u64)?;
                        Val::new(Variable::Array(items), data.depth)
                    }
                    None => Val::null(),
                }
            }
        })
    }

    fn function(&mut self, name: &str, args: Vec<Val>, offset: usize) -> Result<Val, Stop> {
        for arg in &args {
            // A function that reads only the argument's own kind and size (`length`, `type`)
            // may take a container holding a cut part; any other reads it whole.
            if CONSTANT_TIME.contains(&name) {
                self.not_cut(&arg.value)?
            } else {
                self.holds_no_cut(&arg.value)?
            }
        }
        match name {
            "map" => return self.map(args, offset),
            "sort_by" => return self.sort_by(args, offset),
            "min_by" => return self.min_or_max_by(args, offset, false),
            "max_by" => return self.min_or_max_by(args, offset, true),
            _ => {}
        }
        let deepest = args.iter().map(|a| a.depth).max().unwrap_or(0);
        if !CONSTANT_TIME.contains(&name) {
            for arg in &args {
                self.charge_size(&arg.value)?;
            }
        }
        let values: Vec<Rcvar> = args.into_iter().map(|a| a.value).collect();
        let mut context = self.context(offset);
        let result = match DEFAULT_RUNTIME.get_function(name) {
            Some(function) => function.evaluate(&values, &mut context)?,
            None => {
                return Err(JmespathError::from_ctx(
                    &context,
                    ErrorReason::Runtime(RuntimeError::UnknownFunction(name.to_owned())),
                )
                .into());
            }
        };
        // A function's result is no deeper than its arguments, but for `to_array`'s wrapping.
        let depth = if name == "to_array" { Self::checked_depth(deepest + 1)? } else { deepest };
        Ok(Val { value: result, depth })
    }

    /// The crate's `map(&expression, array)`.
    fn map(&mut self, args: Vec<Val>, offset: usize) -> Result<Val, Stop> {
        let values: Vec<Rcvar> = args.iter().map(|a| a.value.clone()).collect();
        Signature::new(vec![ArgumentType::Expref, ArgumentType::Array], None)
            .validate(&values, &self.context(offset))?;
        let (Some(ast), Some(items)) = (values[0].as_expref(), values[1].as_array()) else {
            return Ok(Val::null());
        };
        let depth = args[1].depth;
        let mut results = Vec::with_capacity(items.len());
        let mut deepest = 0;
        for item in items {
            let result = self.eval(&Val { value: item.clone(), depth }, ast)?;
            deepest = deepest.max(result.depth);
            results.push(result.value);
        }
        Ok(Val::new(Variable::Array(results), Self::checked_depth(deepest + 1)?))
    }

    /// The values of `&expression` on every element of an array, each a string or each a number
    /// (the crate's rule for `sort_by`, `min_by` and `max_by`).
    fn keys(
        &mut self,
        args: &[Val],
        offset: usize,
        expected: &str,
    ) -> Result<Vec<(Rcvar, Rcvar)>, Stop> {
        let values: Vec<Rcvar> = args.iter().map(|a| a.value.clone()).collect();
        Signature::new(vec![ArgumentType::Array, ArgumentType::Expref], None)
            .validate(&values, &self.context(offset))?;
        let (Some(items), Some(ast)) = (values[0].as_array(), values[1].as_expref()) else {
            return Ok(Vec::new());
        };
        let depth = args[0].depth;
        let mut keyed: Vec<(Rcvar, Rcvar)> = Vec::with_capacity(items.len());
        let mut first_type = None;
        for (invocation, item) in items.iter().enumerate() {
            let key = self.eval(&Val { value: item.clone(), depth }, ast)?.value;
            let key_type = key.get_type();
            let wanted = match &first_type {
                None if key_type.to_string() == "string" || key_type.to_string() == "number" => {
                    None
                }
                None => Some(expected.to_string()),
                Some(first) if *first != key_type.to_string() => {
                    Some(format!("expression->{first}"))
                }
                Some(_) => None,
            };
            if let Some(expected) = wanted {
                let reason = RuntimeError::InvalidReturnType {
                    expected,
                    actual: key_type.to_string(),
                    position: 1,
                    invocation: invocation.max(1),
                };
                return Err(JmespathError::from_ctx(
                    &self.context(offset),
                    ErrorReason::Runtime(reason),
                )
                .into());
            }
            first_type.get_or_insert_with(|| key_type.to_string());
            keyed.push((item.clone(), key));
        }
        Ok(keyed)
    }

    /// The crate's `sort_by(array, &expression)`.
    fn sort_by(&mut self, args: Vec<Val>, offset: usize) -> Result<Val, Stop> {
        let depth = args.first().map_or(0, |a| a.depth);
        let mut keyed = self.keys(&args, offset, "expression->string|expression->number")?;
        let n = keyed.len() as u64;
        self.charge(n * u64::from(64 - n.leading_zeros()))?;
        keyed.sort_by(|a, b| a.1.cmp(&b.1));
        Ok(Val::new(Variable::Array(keyed.into_iter().map(|(item, _)| item).collect()), depth))
    }

    /// The crate's `min_by` / `max_by(array, &expression)`: null for an empty array.
    fn min_or_max_by(&mut self, args: Vec<Val>, offset: usize, max: bool) -> Result<Val, Stop> {
        let depth = args.first().map_or(0, |a| a.depth);
        let keyed = self.keys(&args, offset, "expression->number|expression->string")?;
        let mut best: Option<&(Rcvar, Rcvar)> = None;
        for pair in &keyed {
            best = match best {
                Some(current) if !(if max { pair.1 > current.1 } else { pair.1 < current.1 }) => {
                    Some(current)
                }
                _ => Some(pair),
            };
        }
        Ok(best.map_or_else(Val::null, |(item, _)| Val { value: item.clone(), depth }))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn ours(text: &str, data: &serde_json::Value) -> Result<bool, Stop> {
        let ast = jmespath::parse(text).expect(text);
        let data = Rcvar::new(Variable::try_from(data).expect("converts"));
        matches(text, &ast, data, false, &Cancel::new())
    }

    fn theirs(text: &str, data: &serde_json::Value) -> Result<bool, Stop> {
        let expression = jmespath::compile(text).expect(text);
        let data = Variable::try_from(data).expect("converts");
        expression.search(data).map(|v| v.is_truthy()).map_err(Stop::from)
    }

    #[test]
    fn answers_and_errors_are_the_jmespath_crates() {
        let items = [
            json!({"a": [1, 2, 3], "b": {"c": "x", "d": [{"e": 1}, {"e": 2}]}, "s": "hello", "n": 2.5, "t": true}),
            json!({"a": [], "b": null, "s": "", "n": -1, "list": [[1, 2], [3], 4], "objs": [{"k": "b"}, {"k": "a"}, {"k": 3}]}),
            json!({"a": ["x", "y"], "objs": [{"k": 2}, {"k": 1}], "m": {"x": 1, "y": [1]}}),
            json!([1, [2, [3]]]),
            json!(null),
            json!("text"),
        ];
        let selectors = [
            "length(a) > `1`",
            "a[*] | length(@) == `3`",
            "b.d[*].e | contains(@, `2`)",
            "b.d[?e > `1`] | length(@) == `1`",
            "list[] | length(@) == `4`",
            "list[][] | length(@)",
            "a[1:] == `[2, 3]`",
            "a[::-1][0] == `3`",
            "a[::0]",
            "m.* | length(@) == `2`",
            "[a, s] | length(@) == `2`",
            "{x: a, y: s}.x == a",
            "sort_by(objs, &k)[0].k == 'a'",
            "sort_by(objs, &k)[0].k == `1`",
            "sort_by(a, &@)",
            "min_by(objs, &k).k",
            "max_by(objs, &k).k == `2`",
            "max_by(a, &to_string(@)) == 'y'",
            "map(&k, objs) == `[2, 1]`",
            "map(&e, b.d) == `[1, 2]`",
            "map(&@, s)",
            "to_string(a) == '[1,2,3]'",
            "join(',', a) == 'x,y'",
            "join(',', a)",
            "not_null(missing, s) == 'hello'",
            "type(@) == 'object'",
            "keys(m) == ['x', 'y']",
            "values(m)[1][0] == `1`",
            "merge(m, `{\"z\": 1}`).z == `1`",
            "reverse(s) == 'olleh'",
            "sum(a) == `6`",
            "avg(a) > `1`",
            "max(a)",
            "abs(n) > `1`",
            "floor(n) == `2`",
            "to_number(s)",
            "to_array(s)[0] == s",
            "starts_with(s, 'he')",
            "ends_with(s, 'lo')",
            "unknown_function(a)",
            "length(`1`)",
            "t && !n",
            "n > `1` || s",
            "`[1, 2]` == `[1, 2.0]`",
            "@[0] == `1`",
            "@[-1][-1][0] == `3`",
            "*.c",
            "[?@ > `1`]",
            "b.d[0:5:2].e",
        ];
        for text in selectors {
            for item in &items {
                assert_eq!(ours(text, item), theirs(text, item), "{text} on {item}");
            }
        }
    }

    #[test]
    fn an_exponential_selector_stops_at_the_step_budget() {
        // The selector: 170 bytes, 10^7 elements per item, 77 s in the jmespath crate.
        let text = format!("length({}) > `5`", "[@,@,@,@,@,@,@,@,@,@][]".repeat(7));
        assert_eq!(ours(&text, &json!({"a": 1})), Err(Stop::TooCostly));
        // Variants: projections instead of flattening, objects, functions that read the whole
        // value, and a string doubled by `join` until it is paid for by its length.
        for text in [
            format!(
                "length(to_string({}[@,@,@,@,@,@,@,@,@,@]{})) > `5`",
                "map(&".repeat(7),
                ", [@,@,@,@,@,@,@,@,@,@])".repeat(7)
            ),
            format!(
                "length({}) > `5`",
                "values({a: @, b: @, c: @, d: @, e: @, f: @, g: @, h: @})[]"
                    .repeat(9)
                    .replace(")[]values(", ")[].values(")
            ),
            format!("to_string({}) == ''", "[@, @] | ".repeat(40) + "@"),
            format!("({0}) == ({0})", "[@, @] | ".repeat(40) + "@"),
            format!("length({}) > `1`", "join('', [@, @]) | ".repeat(40) + "@"),
            format!("sort_by({}, &to_string(@))", "[@, @][] | ".repeat(30) + "@"),
        ] {
            assert_eq!(ours(&text, &json!("ab")), Err(Stop::TooCostly), "{text}");
        }
    }

    #[test]
    fn values_nested_past_the_bound_are_refused_before_they_are_built() {
        let text = format!("length({}) > `0`", "[@] | ".repeat(200) + "@");
        assert_eq!(ours(&text, &json!(1)), Err(Stop::TooDeep));
        let text = format!("length({}) > `0`", "to_array([@]) | ".repeat(100) + "@");
        assert_eq!(ours(&text, &json!(1)), Err(Stop::TooDeep));
        let shallow = format!("length({}) > `0`", "[@] | ".repeat(100) + "@");
        assert_eq!(ours(&shallow, &json!(1)), Ok(true));
    }

    #[test]
    fn a_cancelled_token_stops_the_evaluation() {
        let cancel = Cancel::new();
        cancel.cancel_because("the request took longer than 1 s");
        let ast = jmespath::parse("length(@[*].[@, @][]) > `1`").expect("parses");
        let data = Rcvar::new(
            Variable::try_from(&json!((0..10_000).collect::<Vec<_>>())).expect("converts"),
        );
        let stop = matches("", &ast, data, false, &cancel).expect_err("cancelled");
        assert_eq!(
            stop,
            Stop::Cancelled(Cancelled { reason: "the request took longer than 1 s".into() })
        );
    }
}
