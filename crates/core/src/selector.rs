//! find_items: JMESPath selectors over a collection. The selector's root is always the item's
//! value — a node's or document's `data`, an edge's `data`, a record's `value` — so
//! `type == 'server'` selects server nodes, and an item matches when the selector yields a
//! truthy value (JMESPath's truthiness: not null, false, or an empty string/array/object).

use std::sync::atomic::Ordering::Relaxed;

use serde::Serialize;
use serde_json::Value;

use crate::cancel::Cancel;
use crate::collection::Collection;
use crate::display::{Cuts, DisplayLimits};
use crate::error::CoreError;
use crate::sample::render_item;
use crate::selector_columns::{FieldPath, field_prefix};
use crate::selector_eval::Stop;

pub use crate::selector_bounds::{MAX_SELECTOR_BYTES, MAX_SELECTOR_DEPTH};
pub use crate::selector_eval::{MAX_STEPS, MAX_VALUE_DEPTH};

/// Most ids one answer lists.
pub const MAX_IDS: usize = 1_000;
/// Most items one answer renders.
pub const MAX_ITEMS: usize = 50;

/// A compiled selector: its tree is at most [`MAX_SELECTOR_DEPTH`] deep, and evaluating it on
/// an item takes at most [`crate::selector_eval::MAX_STEPS`] steps.
pub struct Selector {
    text: String,
    ast: jmespath::ast::Ast,
    fast: Option<crate::fast_selector::Fast>,
    /// The paths the fast form reads, by path id.
    fast_paths: Vec<Vec<crate::fast_selector::Step>>,
}

impl std::fmt::Debug for Selector {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_tuple("Selector").field(&self.text).finish()
    }
}

fn hint_for(text: &str) -> String {
    let mut hints = Vec::new();
    let bare_number = text.split(['=', '<', '>']).skip(1).any(|rest| {
        let rest = rest.trim_start_matches('=').trim_start();
        rest.starts_with(|c: char| c.is_ascii_digit() || c == '-')
    });
    if bare_number {
        hints.push("numbers are JSON literals in backticks: cpu > `0.5`");
    }
    if text.contains('"') && text.contains("==") {
        hints.push("\"double quotes\" name a property; string values take 'single quotes': type == 'server'");
    }
    if hints.is_empty() { String::new() } else { format!("\nhint: {}", hints.join("; ")) }
}

impl Selector {
    /// Compiles a selector; a syntax error names its line, column and a caret. A selector
    /// longer than [`MAX_SELECTOR_BYTES`] or nested deeper than [`MAX_SELECTOR_DEPTH`] is refused
    /// the same way, before anything recurses over it.
    pub fn parse(text: &str) -> Result<Self, CoreError> {
        match crate::selector_bounds::parse(text) {
            Ok(ast) => {
                let (fast, fast_paths) = crate::fast_selector::compile(&ast).unzip();
                Ok(Self { text: text.to_string(), fast, fast_paths: fast_paths.unwrap_or_default(), ast })
            }
            Err(Ok(e)) => Err(invalid(text, e.offset, e.line, e.column, e.reason.to_string(), hint_for(text))),
            Err(Err(refusal)) => {
                let before = &text.as_bytes()[..refusal.offset.min(text.len())];
                let line = before.iter().filter(|b| **b == b'\n').count();
                let column = before.iter().rev().take_while(|b| **b != b'\n').count();
                Err(invalid(text, refusal.offset, line, column, refusal.reason, String::new()))
            }
        }
    }

    /// The selector text.
    pub fn as_str(&self) -> &str {
        &self.text
    }

    /// The parsed expression.
    pub(crate) fn ast(&self) -> &jmespath::ast::Ast {
        &self.ast
    }

    /// The property names the selector reads (every field access, with its offset), so callers
    /// can check them against the data before running it.
    pub fn fields(&self) -> Vec<(String, usize)> {
        let mut out = Vec::new();
        collect_fields(&self.ast, &mut out);
        out
    }

    /// Whether the item with JSON text `json` matches; an error says why it could not be
    /// evaluated (a function given the wrong type, text nested past the parser's limit) or why
    /// the evaluation stopped ([`Self::check_json`] tells the two apart).
    pub fn matches_json(&self, json: &str) -> Result<bool, String> {
        self.check_json(json, &crate::cancel::current()).unwrap_or_else(|halt| Err(halt.to_string()))
    }

    /// Whether the item with JSON text `json` matches (`Ok(Err(reason))`: it could not be
    /// evaluated, and does not match), or why the evaluation must stop for every item
    /// ([`Halt`]: too costly, or `cancel` was cancelled).
    pub fn check_json(&self, json: &str, cancel: &Cancel) -> Result<Verdict, Halt> {
        if self.fast.is_some() {
            let value: Value = match serde_json::from_str(json) {
                Ok(value) => value,
                Err(e) => return Ok(self.matches_deep(json).ok_or_else(|| unreadable(&e.to_string()))),
            };
            return self.check_value(&value, cancel);
        }
        match jmespath::Variable::from_json(json) {
            Ok(data) => self.search(jmespath::Rcvar::new(data), false, cancel),
            // Nested past the parser's limit: read cut at the depth limit, and answered when the
            // answer does not depend on what was cut.
            Err(e) if e.contains("recursion limit") => match crate::capped::parse_capped(json) {
                Ok((value, _)) => match jmespath::Variable::try_from(&value) {
                    Ok(data) => self.search(jmespath::Rcvar::new(data), true, cancel),
                    Err(e) => Ok(Err(e.to_string())),
                },
                Err(e) => Ok(Err(unreadable(&e.to_string()))),
            },
            Err(e) => Ok(Err(unreadable(&e))),
        }
    }

    /// A fast selector on an item nested past the parser's limit, read with the depth cap of
    /// [`crate::capped`]: the answer is exact when every value it reads lies above the cut (the
    /// selector columns read such items the same way), else `None` (not evaluated).
    fn matches_deep(&self, json: &str) -> Option<bool> {
        let fast = self.fast.as_ref()?;
        let (value, _) = crate::capped::parse_capped(json).ok()?;
        for steps in &self.fast_paths {
            if steps.len() >= crate::capped::MAX_PARSE_DEPTH || reaches_cut(&value, steps) {
                return None;
            }
        }
        fast.matches(&&value).ok()
    }

    /// Whether an already parsed item matches (parse once, then run many selectors). Common
    /// selectors run on the value directly; the rest through the bounded evaluator.
    pub fn matches_value(&self, value: &Value) -> Result<bool, String> {
        self.check_value(value, &crate::cancel::current()).unwrap_or_else(|halt| Err(halt.to_string()))
    }

    /// [`Self::matches_value`], telling an item that could not be evaluated from a [`Halt`].
    /// A value stored cut at the depth limit (a graph element nested past it) is answered only
    /// when the answer does not depend on what was cut.
    pub fn check_value(&self, value: &Value, cancel: &Cancel) -> Result<Verdict, Halt> {
        if let Some(fast) = &self.fast {
            let reads_cut = self.fast_paths.iter().any(|steps| reaches_cut(value, steps));
            if reads_cut {
                return Ok(Err(crate::capped::reads_cut_part()));
            }
            if let Ok(hit) = fast.matches(&value) {
                return Ok(Ok(hit));
            }
        }
        match jmespath::Variable::try_from(value) {
            Ok(data) => self.search(jmespath::Rcvar::new(data), holds_marker(value), cancel),
            Err(e) => Ok(Err(e.to_string())),
        }
    }

    fn search(&self, data: jmespath::Rcvar, cut: bool, cancel: &Cancel) -> Result<Verdict, Halt> {
        match crate::selector_eval::matches(&self.text, &self.ast, data, cut, cancel) {
            Ok(hit) => Ok(Ok(hit)),
            Err(Stop::Error(reason)) => Ok(Err(reason)),
            Err(Stop::TooCostly) => Err(Halt::TooCostly),
            Err(Stop::TooDeep) => Err(Halt::TooDeep),
            Err(Stop::Cancelled(cancelled)) => Err(Halt::Cancelled(cancelled)),
        }
    }

    /// The field paths whose columns [`crate::selector_columns::evaluate`] reads, in that order (one per
    /// path the selector reads, repeats included); `None` when the selector is not on the fast
    /// path.
    pub fn column_paths(&self) -> Option<Vec<FieldPath>> {
        self.fast.as_ref()?;
        Some(self.fast_paths.iter().map(|steps| field_prefix(steps)).collect())
    }

    /// The fast form, when the selector has one.
    pub(crate) fn fast_form(&self) -> Option<&crate::fast_selector::Fast> {
        self.fast.as_ref()
    }

    /// Whether the selector runs on the fast path (no jmespath values built per item).
    pub fn is_fast(&self) -> bool {
        self.fast.is_some()
    }
}

/// Whether the path `steps` meets a container cut by [`crate::capped::parse_capped`] on its way
/// or ends on a value holding one (where it ends early, it stopped at the cut).
fn reaches_cut(value: &Value, steps: &[crate::fast_selector::Step]) -> bool {
    let mut at = value;
    for step in steps {
        match at {
            Value::String(s) if s == crate::capped::DEPTH_MARKER => return true,
            _ => match crate::fast_selector::walk(at, std::slice::from_ref(step)) {
                Some(next) => at = next,
                None => return false,
            },
        }
    }
    holds_marker(at)
}

/// Whether `value` is or holds a container cut by [`crate::capped::parse_capped`].
fn holds_marker(value: &Value) -> bool {
    // Without recursion: a value built in memory may nest past any stack.
    let mut pending = vec![value];
    while let Some(value) = pending.pop() {
        match value {
            Value::String(s) if s == crate::capped::DEPTH_MARKER => return true,
            Value::Array(items) => pending.extend(items),
            Value::Object(map) => pending.extend(map.values()),
            _ => {}
        }
    }
    false
}

/// A selector refused at parse time, pointing at `offset` (line and column from 0).
fn invalid(text: &str, offset: usize, line: usize, column: usize, reason: String, hint: String) -> CoreError {
    CoreError::InvalidSelector {
        expression: text.to_string(),
        offset,
        line: line + 1,
        column: column + 1,
        reason,
        caret: format!("{}^", " ".repeat(column)),
        hint,
    }
}

/// Whether one item matches, or why it could not be evaluated (it then does not match).
pub type Verdict = Result<bool, String>;

/// Why evaluating a selector stopped for every item, not just one.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum Halt {
    /// One item took more than [`MAX_STEPS`] steps.
    #[error(
        "it took more than {MAX_STEPS} steps on one item (elements built and values read): each `[]`, `[*]` or `[a, b]` after another multiplies the work; select less at each step"
    )]
    TooCostly,
    /// The selector built a value nested deeper than [`MAX_VALUE_DEPTH`].
    #[error("it builds values nested deeper than {MAX_VALUE_DEPTH} levels")]
    TooDeep,
    /// The call's token was cancelled.
    #[error(transparent)]
    Cancelled(crate::cancel::Cancelled),
}

impl Halt {
    /// The error for the whole call: `selector` stopped at item `item`, after `evaluated` of
    /// `total` items.
    pub fn into_error(self, selector: &str, item: &str, evaluated: usize, total: usize) -> CoreError {
        match self {
            Halt::Cancelled(cancelled) => CoreError::Cancelled { reason: cancelled.reason, done: format!("{evaluated} of {total} items evaluated") },
            other => CoreError::SelectorTooCostly { expression: selector.to_string(), item: item.to_string(), reason: other.to_string() },
        }
    }
}

/// The reason an item's text could not be read, in words a reader can act on.
fn unreadable(reason: &str) -> String {
    if reason.contains("recursion limit") { crate::capped::reads_cut_part() } else { format!("the item's text is not valid JSON ({reason})") }
}

fn collect_fields(ast: &jmespath::ast::Ast, out: &mut Vec<(String, usize)>) {
    use jmespath::ast::Ast;
    match ast {
        Ast::Field { name, offset } => out.push((name.clone(), *offset)),
        Ast::Comparison { lhs, rhs, .. }
        | Ast::Projection { lhs, rhs, .. }
        | Ast::And { lhs, rhs, .. }
        | Ast::Or { lhs, rhs, .. }
        | Ast::Subexpr { lhs, rhs, .. } => {
            collect_fields(lhs, out);
            collect_fields(rhs, out);
        }
        Ast::Condition { predicate, then, .. } => {
            collect_fields(predicate, out);
            collect_fields(then, out);
        }
        Ast::Expref { ast, .. } => collect_fields(ast, out),
        Ast::Flatten { node, .. } | Ast::Not { node, .. } | Ast::ObjectValues { node, .. } => collect_fields(node, out),
        Ast::Function { args, .. } => args.iter().for_each(|a| collect_fields(a, out)),
        Ast::MultiList { elements, .. } => elements.iter().for_each(|a| collect_fields(a, out)),
        Ast::MultiHash { elements, .. } => elements.iter().for_each(|kv| collect_fields(&kv.value, out)),
        _ => {}
    }
}

/// Items a selector could not be evaluated on: they do not match, and the answer says so.
#[derive(Debug, Clone, Default, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Unevaluated {
    /// How many items.
    pub count: usize,
    /// The first one's id.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub example_id: Option<String>,
    /// Why it could not be evaluated (the jmespath crate's words).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub example_error: Option<String>,
}

impl Unevaluated {
    /// Counts one more item, keeping the first as the example.
    pub fn add(&mut self, id: &str, reason: String) {
        if self.example_id.is_none() {
            self.example_id = Some(id.to_string());
            self.example_error = Some(reason);
        }
        self.count += 1;
    }

    /// Adds another tally (a later part of the collection).
    pub fn merge(&mut self, other: Unevaluated) {
        if self.example_id.is_none() {
            self.example_id = other.example_id;
            self.example_error = other.example_error;
        }
        self.count += other.count;
    }

    /// " N nodes could not be evaluated and do not match (e.g. `id`: reason)." or "".
    pub fn sentence(&self, noun_one: &str, noun_many: &str) -> String {
        if self.count == 0 {
            return String::new();
        }
        let noun = if self.count == 1 { noun_one } else { noun_many };
        let example = match (&self.example_id, &self.example_error) {
            (Some(id), Some(error)) => format!(" (e.g. {}: {error})", crate::display::code(id)),
            _ => String::new(),
        };
        let (verb, does) = if self.count == 1 { ("was", "does") } else { ("were", "do") };
        format!(" {} {noun} {verb} not evaluated and {does} not match{example}.", self.count)
    }
}

/// What find_items found.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct FindResult {
    /// The selector.
    pub selector: String,
    /// Matching items.
    pub count: usize,
    /// Items searched.
    pub total: usize,
    /// Ids of matching items (at most [`MAX_IDS`]).
    pub ids: Vec<String>,
    /// True when `ids` was cut.
    pub ids_truncated: bool,
    /// The first matching items, rendered.
    pub items: Vec<Value>,
    /// Items the selector could not be evaluated on (a function given a null, a string compared
    /// where a number was needed, an unreadable item): they do not match.
    pub unevaluated: Unevaluated,
    /// When nothing matched: why, where the data tells (see [`crate::no_match`]).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub hints: Vec<String>,
    /// Values in `items` nested past the display depth, shown as `[depth limit: …]` markers.
    #[serde(skip_serializing_if = "is_zero")]
    pub depth_limited: usize,
}

fn is_zero(n: &usize) -> bool {
    *n == 0
}

/// Evaluates `selector` on every item of `collection`, on all cores. An item the selector cannot
/// be evaluated on does not match and is counted in [`FindResult::unevaluated`]; one odd item
/// never fails the call. When nothing matches, `others` (the source's other collections) help
/// say why. The call stops with an error when one item is too costly ([`Halt`]) or the current
/// [`crate::cancel`] token is cancelled: every thread looks at it between items.
pub fn find_items(
    collection: &Collection,
    others: &[&Collection],
    selector: &Selector,
    limit: usize,
    limits: &DisplayLimits,
) -> Result<FindResult, CoreError> {
    let n = collection.len();
    let threads = std::thread::available_parallelism().map_or(1, |t| t.get()).clamp(1, n.max(1));
    let chunk = n.div_ceil(threads).max(1);
    let cancel = crate::cancel::current();
    // Set by the first thread that halts, so the others stop too.
    let halted = std::sync::atomic::AtomicBool::new(false);
    let evaluated = std::sync::atomic::AtomicUsize::new(0);
    type Part = (Vec<usize>, Unevaluated, Option<(Halt, String)>);
    let outcomes: Vec<Part> = std::thread::scope(|scope| {
        let handles: Vec<_> = (0..threads)
            .map(|t| {
                let (cancel, halted, evaluated) = (&cancel, &halted, &evaluated);
                scope.spawn(move || {
                    let mut hits = Vec::new();
                    let mut unevaluated = Unevaluated::default();
                    let mut done = 0;
                    let mut halt = None;
                    for index in t * chunk..((t + 1) * chunk).min(n) {
                        if done % crate::cancel::CHECK_EVERY == 0 && (halted.load(Relaxed) || cancel.is_cancelled()) {
                            break;
                        }
                        let Some(item) = collection.item(index) else { continue };
                        done += 1;
                        match selector.check_json(item.json, cancel) {
                            Ok(Ok(true)) => hits.push(index),
                            Ok(Ok(false)) => {}
                            Ok(Err(reason)) => unevaluated.add(item.id, reason),
                            Err(stop) => {
                                halted.store(true, Relaxed);
                                halt = Some((stop, item.id.to_string()));
                                break;
                            }
                        }
                    }
                    evaluated.fetch_add(done, Relaxed);
                    (hits, unevaluated, halt)
                })
            })
            .collect();
        handles.into_iter().map(|h| h.join().unwrap_or_default()).collect()
    });
    let evaluated = evaluated.load(Relaxed);
    if let Some((halt, item)) = outcomes.iter().find_map(|(_, _, halt)| halt.clone()) {
        return Err(halt.into_error(&selector.text, &item, evaluated, n));
    }
    if let Err(cancelled) = cancel.check() {
        return Err(Halt::Cancelled(cancelled).into_error(&selector.text, "", evaluated, n));
    }
    let mut hits = Vec::new();
    let mut unevaluated = Unevaluated::default();
    for (part, skipped, _) in outcomes {
        hits.extend(part);
        unevaluated.merge(skipped);
    }
    let mut cuts = Cuts::default();
    let mut items = Vec::new();
    for &index in hits.iter().take(limit.min(MAX_ITEMS)) {
        if let Some(item) = collection.item(index) {
            let value = collection.parse_item(&item)?;
            items.push(render_item(collection.kind(), &item, &value, limits, &mut cuts));
        }
    }
    let hints = if hits.is_empty() { crate::no_match::explain(selector, collection, others).hints } else { Vec::new() };
    Ok(FindResult {
        selector: selector.text.clone(),
        count: hits.len(),
        total: n,
        ids: hits.iter().take(MAX_IDS).filter_map(|&i| collection.item(i).map(|it| it.id.to_string())).collect(),
        ids_truncated: hits.len() > MAX_IDS,
        items,
        unevaluated,
        hints,
        depth_limited: cuts.depth,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::collection::{CollectionKind, OwnedItem};
    use crate::selector_columns::{PathColumn, evaluate};
    use serde_json::json;

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
        texts.push(r#"{"meta": 5, "meta": {"level": 9, "owner": "o\u0070s"}, "t\u0079pe": "ser\"ver"}"#.into());
        texts.push(r#"{"n": 18446744073709551615, "cpu": -1e300, "tags": ["critical"], "tags": "critical"}"#.into());
        texts.push(r#"{"tags": [1, 2, 3], "list": [1, 2, 3], "x": [], "z": []}"#.into());
        texts.push(r#"{"tags": [null, true, "a", 1.5, {"b": [2]}], "list": [null, true, "a", 1.5, {"b": [2]}]}"#.into());
        for text in selectors {
            let selector = Selector::parse(text).expect(text);
            assert!(selector.is_fast(), "{text} should take the fast path");
            for item in &items {
                let fast = selector.matches_value(item);
                let slow = jmespath::Variable::try_from(item).map_err(|e| e.to_string()).and_then(|v| crate_search(text, v));
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
        let many: Vec<String> =
            (0..10_000).map(|i| format!(r#"{{"n": {i}, "meta": {{"level": {}}}, "s": "{}"}}"#, i % 7, "x".repeat(i % 3))).collect();
        let paths: Vec<FieldPath> = vec![vec!["meta".into()], vec!["meta".into(), "level".into()], vec!["s".into()], vec!["n".into()]];
        let columns = PathColumn::build(&paths, many.len(), |i| many[i].as_str());
        assert_eq!(columns.iter().map(PathColumn::len).collect::<Vec<_>>(), [10_000; 4]);
        let selector = Selector::parse("meta.level == `3` && s && n > `5000`").expect("valid");
        let wanted: Vec<&PathColumn> =
            selector.column_paths().expect("fast").iter().map(|p| columns.iter().find(|c| c.path() == p).expect("built")).collect();
        let hits = evaluate(&[&selector], &[wanted], many.len()).remove(0);
        assert_eq!(hits.len(), many.len());
        assert_eq!(hits.iter().filter(|hit| **hit == Some(true)).count(), (5001..10_000).filter(|i| i % 7 == 3 && i % 3 != 0).count());
        let unreadable = ["{\"n\": 1}", "{\"n\": ", "[1, 2]"];
        let column = PathColumn::build(&[vec!["n".into()]], 3, |i| unreadable[i]);
        let selector = Selector::parse("!missing").expect("valid");
        let by_n = Selector::parse("n == `1` || !n").expect("valid");
        // An unreadable item is left to the jmespath crate, which reports it (never a silent miss).
        assert_eq!(evaluate(&[&by_n], &[vec![&column[0]]], 3), [[Some(true), None, Some(true)]]);
        assert!(by_n.matches_json(unreadable[1]).expect_err("unreadable").contains("not valid JSON"));
        assert!(selector.column_paths().is_some_and(|p| p == [vec!["missing".to_string()]]));
        assert!(!Selector::parse("length(tags) > `1`").expect("valid").is_fast(), "other functions use the crate");
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
        let run = |s: &str| find_items(&c, &[], &Selector::parse(s).expect(s), 10, &limits).expect("runs");
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
        let selector = Selector::parse("type == 'server' && metrics.cpu > `0.5` || contains(tags, 'x')").expect("valid");
        let names: Vec<String> = selector.fields().into_iter().map(|(n, _)| n).collect();
        assert_eq!(names, ["type", "metrics", "cpu", "tags"]);
    }

    #[test]
    fn a_data_prefix_that_matches_nothing_gets_a_hint() {
        let c = nodes();
        let found = find_items(&c, &[], &Selector::parse("data.type == 'server'").expect("parses"), 5, &DisplayLimits::default()).expect("runs");
        assert_eq!(found.count, 0);
        assert!(found.hints.iter().any(|h| h.contains("root is already") && h.contains("write `type`")), "{:?}", found.hints);
    }

    fn run(c: &Collection, others: &[&Collection], selector: &str) -> FindResult {
        find_items(c, others, &Selector::parse(selector).expect(selector), 10, &DisplayLimits::default()).expect(selector)
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
                OwnedItem::new("e", json!({"tags": ["critical"], "name": "deep", "n": 1, "deep": deep})),
            ],
        );
        let found = run(&c, &[], "contains(tags, 'critical')");
        // `e` is nested 400 levels deep, past what serde_json parses; a fast selector reads it
        // with a depth cap, as the selector columns do, since everything it reads lies above.
        assert_eq!(found.ids, ["a", "d", "e"]);
        assert_eq!(found.unevaluated.count, 2);
        assert_eq!(found.unevaluated.example_id.as_deref(), Some("b"), "the first item in order is the example");
        assert!(found.unevaluated.sentence("node", "nodes").contains("2 nodes were not evaluated and do not match (e.g. `b`:"));
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
                    jmespath::Variable::try_from(&value).map_err(|e| e.to_string()).and_then(|v| crate_search(selector, v)).is_err()
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
            let verdict = Selector::parse(&selector).expect("valid").matches_json(c.item(4).expect("e").json);
            assert!(verdict.as_ref().is_err_and(|reason| reason.contains("deeper than 100 levels")), "{selector}: {verdict:?}");
        }
        let compiled = Selector::parse(&format!("{bottom} == 'bottom'")).expect("valid");
        let e = c.item(4).expect("e");
        assert!(compiled.matches_json(e.json).expect_err("not evaluated").contains("deeper than 100 levels"));
        // Stored cut (a graph element is kept cut at 100 levels): the same refusals.
        let (stored, _) = crate::capped::parse_capped(e.json).expect("parses");
        for selector in
            [format!("{bottom} == 'bottom'"), "contains(to_string(deep), 'bottom')".to_string(), format!("deep{} == 'x'", ".a[0]".repeat(55))]
        {
            let compiled = Selector::parse(&selector).expect("valid");
            assert!(compiled.matches_value(&stored).expect_err("not evaluated").contains("deeper than 100 levels"), "{selector}");
        }
        assert_eq!(Selector::parse("name == 'deep'").expect("valid").matches_value(&stored), Ok(true));
        assert_eq!(Selector::parse("starts_with(name, 'de')").expect("valid").matches_value(&stored), Ok(true));
        // A fast selector whose values reach the cut is not answered from cut data.
        let deep_read = Selector::parse(&format!("deep{} == 'bottom'", ".a[0]".repeat(120))).expect("valid");
        assert!(deep_read.is_fast());
        assert!(deep_read.matches_json(e.json).expect_err("not evaluated").contains("deeper than 100 levels"));
        let whole = Selector::parse("deep == deep").expect("valid");
        assert!(whole.matches_json(e.json).is_err(), "a container holding the cut is not compared");
    }

    #[test]
    fn a_zero_match_explains_quotes_case_types_and_unknown_names() {
        let nodes = Collection::from_values(
            "nodes",
            CollectionKind::Nodes,
            [
                OwnedItem::new("a", json!({"type": "server", "cpu": 0.9, "city": "Zürich", "tags": ["Critical"], "active": true})),
                OwnedItem::new("b", json!({"type": "Server ", "cpu": 0.2, "city": null, "tags": null})),
                OwnedItem::new("c", json!({"type": "database", "cpu": null})),
            ],
        );
        let edges = Collection::from_values("edges", CollectionKind::Edges, [OwnedItem::new("e1", json!({"latency": 4}))]);
        let hints = |s: &str| {
            let found = run(&nodes, &[&edges], s);
            assert_eq!(found.count, 0, "{s}");
            found.hints.join("\n")
        };
        let h = hints("type == \"server\"");
        assert!(h.contains("double quotes is a property name") && h.contains("write `type == 'server'`") && h.contains("in 1 node:"), "{h}");
        assert!(!h.contains("No node has a property `server`"), "{h}");
        let h = hints("type == 'SERVER'");
        assert!(h.contains("compare exactly") && h.contains("'server' (1 node)") && h.contains("'Server ' (1 node)"), "{h}");
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
        assert!(h.contains("No node has a property `latency`") && h.contains("collection `edges`"), "{h}");
        assert!(!h.contains("Did you mean"), "nothing is spelled like latency: {h}");
        let h = hints("tpye == 'server'");
        assert!(h.contains("Did you mean `type`?"), "{h}");
        // A misspelled value: the values closest by spelling.
        let h = hints("type == 'serveur'");
        assert!(h.contains("the closest values it has are 'server' (1 node)"), "{h}");
        // `==` on an array compares the whole array, in any spelling of the string.
        let h = hints("tags == 'Critical'");
        assert!(h.contains("`tags` is an array") && h.contains("write `contains(tags, 'Critical')` (1 node holds it)"), "{h}");
        let h = hints("tags == 'critical'");
        assert!(h.contains("write `contains(tags, 'Critical')` (1 node holds it spelled this way)"), "{h}");
        // A value that exists nowhere, in any form: no invented hint.
        assert_eq!(hints("type == 'router'"), "");
        assert_eq!(hints("cpu > `5`"), "");
    }
}
