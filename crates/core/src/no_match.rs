//! Why a selector matched nothing, when the data can tell: a property no item has (with names
//! close by spelling, and the other collections that do have it), a double-quoted name that is
//! really a value, a string the property holds only in another case, accent or spacing, and a
//! literal of a type the property never holds. Every hint is checked against the items
//! themselves (not only the profile, whose path limit may have dropped names).

use std::collections::BTreeMap;

use jmespath::ast::{Ast, Comparator};
use serde::Serialize;
use serde_json::Value;
use unicode_normalization::UnicodeNormalization;
use unicode_normalization::char::is_combining_mark;

use crate::PropertyPath;
use crate::collection::Collection;
use crate::display::code;
use crate::selector::columns::{FieldPath, PathColumn};
use crate::selector::{Selector, V};
use crate::suggest::closest;

/// Most value variants one hint lists.
const MAX_VARIANTS: usize = 3;

/// Most distinct strings a misspelled value is compared with (a property of unique ids has as
/// many as items; the first ones seen are enough to catch a typo of a common value).
const MAX_DISTINCT_COMPARED: usize = 10_000;

/// Why a selector matched nothing, as far as the data tells.
#[derive(Debug, Clone, Default, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct NoMatch {
    /// One sentence per cause found.
    pub hints: Vec<String>,
    /// Properties the selector reads from the item's root that no item has (dotted), so a caller
    /// can add what it knows (e.g. which algorithm writes them).
    pub unknown_properties: Vec<String>,
}

/// A field chain read from the item's root, and whether its last name was double-quoted.
#[derive(Debug, Clone)]
struct RootPath {
    fields: FieldPath,
    quoted: bool,
}

impl RootPath {
    fn dotted(&self) -> String {
        self.fields.join(".")
    }
}

fn chain(ast: &Ast, text: &str, out: &mut FieldPath) -> Option<bool> {
    match ast {
        Ast::Field { name, offset } => {
            out.push(name.clone());
            Some(text.get(*offset..).is_some_and(|t| t.starts_with('"')))
        }
        Ast::Subexpr { lhs, rhs, .. } => {
            chain(lhs, text, out)?;
            chain(rhs, text, out)
        }
        _ => None,
    }
}

fn as_root_path(ast: &Ast, text: &str) -> Option<RootPath> {
    let mut fields = Vec::new();
    let quoted = chain(ast, text, &mut fields)?;
    Some(RootPath { fields, quoted })
}

/// Every field chain read from the item's root; not those inside projections, filters or
/// expression references, whose root is an element.
fn root_paths(ast: &Ast, text: &str, out: &mut Vec<RootPath>) {
    if let Some(path) = as_root_path(ast, text) {
        out.push(path);
        return;
    }
    match ast {
        Ast::Subexpr { lhs, .. } | Ast::Projection { lhs, .. } => root_paths(lhs, text, out),
        Ast::Comparison { lhs, rhs, .. } | Ast::And { lhs, rhs, .. } | Ast::Or { lhs, rhs, .. } => {
            root_paths(lhs, text, out);
            root_paths(rhs, text, out);
        }
        Ast::Not { node, .. } | Ast::Flatten { node, .. } | Ast::ObjectValues { node, .. } => {
            root_paths(node, text, out)
        }
        Ast::Function { args, .. } => args.iter().for_each(|a| root_paths(a, text, out)),
        Ast::MultiList { elements, .. } => elements.iter().for_each(|a| root_paths(a, text, out)),
        Ast::MultiHash { elements, .. } => {
            elements.iter().for_each(|kv| root_paths(&kv.value, text, out))
        }
        _ => {}
    }
}

/// How a root path is tested.
#[derive(Debug, Clone, Copy, PartialEq)]
enum TestKind {
    Equal,
    Order,
    Contains,
}

/// What it is tested against.
#[derive(Debug, Clone)]
enum Against {
    Literal(Value),
    /// A double-quoted name (`type == "server"`): a property in JMESPath.
    QuotedName(String),
}

#[derive(Debug, Clone)]
struct Test {
    path: RootPath,
    kind: TestKind,
    against: Against,
    /// The operator as written, for the rewrite a hint suggests.
    operator: &'static str,
}

fn operator(comparator: &Comparator) -> (&'static str, Option<TestKind>) {
    match comparator {
        Comparator::Equal => ("==", Some(TestKind::Equal)),
        // `!=` matches nearly everything when the literal is off; it is not why nothing matched.
        Comparator::NotEqual => ("!=", None),
        Comparator::LessThan => ("<", Some(TestKind::Order)),
        Comparator::LessThanEqual => ("<=", Some(TestKind::Order)),
        Comparator::GreaterThan => (">", Some(TestKind::Order)),
        Comparator::GreaterThanEqual => (">=", Some(TestKind::Order)),
    }
}

fn against(ast: &Ast, text: &str) -> Option<Against> {
    match ast {
        Ast::Literal { value, .. } => serde_json::to_value(&**value).ok().map(Against::Literal),
        _ => as_root_path(ast, text)
            .filter(|p| p.quoted && p.fields.len() == 1)
            .map(|p| Against::QuotedName(p.dotted())),
    }
}

/// The comparisons and `contains` calls of a root path with a literal or a quoted name, under
/// `&&`, `||` and `!`.
fn tests(ast: &Ast, text: &str, out: &mut Vec<Test>) {
    match ast {
        Ast::Comparison { comparator, lhs, rhs, .. } => {
            let (op, Some(kind)) = operator(comparator) else { return };
            for (path, other) in [(lhs, rhs), (rhs, lhs)] {
                if let (Some(path), Some(against)) =
                    (as_root_path(path, text), against(other, text))
                    && !(path.quoted && matches!(against, Against::QuotedName(_)))
                {
                    out.push(Test { path, kind, against, operator: op });
                    return;
                }
            }
        }
        Ast::And { lhs, rhs, .. } | Ast::Or { lhs, rhs, .. } => {
            tests(lhs, text, out);
            tests(rhs, text, out);
        }
        Ast::Not { node, .. } => tests(node, text, out),
        Ast::Function { name, args, .. } if name == "contains" && args.len() == 2 => {
            if let (Some(path), Some(against)) =
                (as_root_path(&args[0], text), against(&args[1], text))
            {
                out.push(Test { path, kind: TestKind::Contains, against, operator: "contains" });
            }
        }
        _ => {}
    }
}

/// A string as a loose comparison sees it: accents dropped, lowercase, runs of spaces as one.
fn fold(s: &str) -> String {
    let plain: String =
        s.nfd().filter(|c| !is_combining_mark(*c)).flat_map(char::to_lowercase).collect();
    plain.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// "1 node", "2 nodes".
fn counted(n: usize, one: &str, many: &str) -> String {
    format!("{n} {}", if n == 1 { one } else { many })
}

/// A string as a JMESPath raw string literal.
fn raw(s: &str) -> String {
    format!("'{}'", s.replace('\\', "\\\\").replace('\'', "\\'"))
}

/// A literal as written in a selector.
fn literal(value: &Value) -> String {
    match value {
        Value::String(s) => raw(s),
        other => format!("`{other}`"),
    }
}

/// The JSON type name of a view.
fn type_of(value: V<'_>) -> &'static str {
    match value {
        V::Null => "null",
        V::Bool(_) => "boolean",
        V::Num(_) => "number",
        V::Str(_) => "string",
        V::Container(Value::Object(_)) => "object",
        V::Container(_) | V::List(_) => "array",
    }
}

fn value_type(value: &Value) -> &'static str {
    type_of(V::of(value))
}

/// The strings a value offers to a test: itself, or an array's string elements.
fn strings(value: V<'_>, out: &mut Vec<String>) {
    match value {
        V::Str(s) => out.push(s.to_string()),
        V::Container(Value::Array(items)) => {
            out.extend(items.iter().filter_map(Value::as_str).map(str::to_string))
        }
        V::List(list) => (0..list.len()).for_each(|i| {
            if let V::Str(s) = list.get(i) {
                out.push(s.to_string());
            }
        }),
        _ => {}
    }
}

/// The dotted property paths a collection's profile knows.
fn known_names(collection: &Collection) -> Vec<String> {
    collection.profile().properties().iter().map(|p| p.path.to_string()).collect()
}

fn property_path(fields: &FieldPath) -> PropertyPath {
    fields.iter().fold(PropertyPath::root(), |p, f| p.child(f))
}

/// The values at `fields` of every item of `collection`.
fn column(collection: &Collection, fields: &FieldPath) -> Option<PathColumn> {
    PathColumn::build(std::slice::from_ref(fields), collection.len(), |i| {
        collection.item(i).map_or("null", |it| it.json)
    })
    .pop()
}

/// Whether some item of `collection` has the property (null counts: the profile knows it).
fn has_property(collection: &Collection, fields: &FieldPath) -> bool {
    let profile = if collection.holds_items() {
        Some(collection.profile())
    } else {
        collection.profile_ready()
    };
    if profile.is_some_and(|p| p.property(&property_path(fields)).is_some()) {
        return true;
    }
    collection.holds_items()
        && column(collection, fields)
            .is_some_and(|c| (0..c.len()).any(|i| !matches!(c.view(i), V::Null)))
}

/// Where the profile stopped reading along `fields` because items nest deeper than it descends:
/// the longest prefix it holds, and how many values there were not descended into. `None` when
/// depth is not why the profile lacks the path.
fn depth_cut(collection: &Collection, fields: &FieldPath) -> Option<(PropertyPath, u64)> {
    let profile = if collection.holds_items() {
        Some(collection.profile())
    } else {
        collection.profile_ready()
    }?;
    let mut path = PropertyPath::root();
    let mut deepest = profile.property(&path)?;
    for field in fields {
        let next = path.child(field);
        let Some(found) = profile.property(&next) else { break };
        (path, deepest) = (next, found);
    }
    (deepest.depth_limited > 0).then_some((path, deepest.depth_limited))
}

/// Explains why `selector` matched no item of `collection`; `others` are the other collections
/// of its source (to say where a property does exist).
pub fn explain(selector: &Selector, collection: &Collection, others: &[&Collection]) -> NoMatch {
    let text = selector.as_str();
    let ast = selector.ast();
    let noun = collection.kind().items_noun();
    let item = collection.kind().item_noun();
    let mut out = NoMatch::default();
    let mut found = Vec::new();
    tests(ast, text, &mut found);
    let mut paths = Vec::new();
    root_paths(ast, text, &mut paths);
    let mut seen = std::collections::HashSet::new();
    paths.retain(|p| seen.insert(p.fields.clone()));
    let quoted_values: Vec<&str> = found
        .iter()
        .filter_map(|t| {
            if let Against::QuotedName(name) = &t.against { Some(name.as_str()) } else { None }
        })
        .collect();
    let mut names: Option<Vec<String>> = None;
    for path in &paths {
        if has_property(collection, &path.fields) {
            continue;
        }
        let dotted = path.dotted();
        let d = code(&dotted);
        // A double-quoted value gets its own hint below.
        if path.quoted && path.fields.len() == 1 && quoted_values.contains(&dotted.as_str()) {
            continue;
        }
        // Items nested past what the profile and the selectors read may hold it: saying "no
        // property" (and offering look-alikes) would be false.
        if let Some((prefix, count)) = depth_cut(collection, &path.fields) {
            out.hints.push(format!(
                "No {item} that selectors could read has {d}, but it lies below {}, where {} nest deeper than the profile reads ({} levels); {noun} nested past what selectors read (see `unevaluated`) may have it.",
                code(&prefix.to_string()),
                counted(usize::try_from(count).unwrap_or(usize::MAX), "value", "values"),
                crate::profile::ProfileLimits::default().max_depth
            ));
            continue;
        }
        out.unknown_properties.push(dotted.clone());
        let names = names.get_or_insert_with(|| known_names(collection));
        let mut hint = format!("No {item} has a property {d}.");
        if path.fields.len() > 1
            && path.fields[0] == "data"
            && has_property(collection, &path.fields[1..].to_vec())
        {
            hint.push_str(&format!(
                " The selector's root is already the item's data: write {}, not {d}.",
                code(&path.fields[1..].join("."))
            ));
        } else {
            let near = closest(&dotted, names.iter().map(String::as_str), 3);
            match near.as_slice() {
                [] => {}
                [one] => hint.push_str(&format!(" Did you mean {}?", code(one))),
                many => hint.push_str(&format!(
                    " Did you mean one of {}?",
                    many.iter().map(|n| code(n)).collect::<Vec<_>>().join(", ")
                )),
            }
        }
        let elsewhere: Vec<String> = others
            .iter()
            .filter(|c| c.name() != collection.name() && has_property(c, &path.fields))
            .map(|c| format!("the {} (collection {})", c.kind().items_noun(), code(c.name())))
            .collect();
        if !elsewhere.is_empty() {
            hint.push_str(&format!(
                " {d} is a property of {}, not of the {noun}.",
                elsewhere.join(" and ")
            ));
        }
        out.hints.push(hint);
    }
    for test in &found {
        if !has_property(collection, &test.path.fields) {
            continue;
        }
        let Some(values) = column(collection, &test.path.fields) else { continue };
        let dotted = test.path.dotted();
        let d = code(&dotted);
        let views = || (0..values.len()).map(|i| values.view(i));
        match (&test.against, test.kind) {
            (Against::QuotedName(name), _) => {
                let with_value = views().filter(|v| {
                    let mut s = Vec::new();
                    strings(*v, &mut s);
                    s.iter().any(|s| s == name)
                });
                let count = with_value.count();
                let rewrite = if test.kind == TestKind::Contains {
                    format!("contains({dotted}, {})", raw(name))
                } else {
                    format!("{dotted} {} {}", test.operator, raw(name))
                };
                let mut hint = format!(
                    "{} in double quotes is a property name in JMESPath, and no {item} has a property {};",
                    code(&format!("\"{name}\"")),
                    code(name)
                );
                if count > 0 {
                    hint.push_str(&format!(
                        " {d} has the string {} in {}: write {} (single quotes for strings).",
                        raw(name),
                        counted(count, item, noun),
                        code(&rewrite)
                    ));
                } else {
                    hint.push_str(&format!(" a string takes single quotes: {}.", code(&rewrite)));
                }
                out.hints.push(hint);
            }
            (Against::Literal(Value::String(wanted)), TestKind::Equal | TestKind::Contains) => {
                let mut exact = 0;
                let mut variants: BTreeMap<String, usize> = BTreeMap::new();
                // `==` on an array compares the whole array: arrays holding the string (in any
                // spelling) are counted apart, for a hint of their own.
                let mut in_arrays: BTreeMap<String, usize> = BTreeMap::new();
                let mut distinct: BTreeMap<String, usize> = BTreeMap::new();
                let folded = fold(wanted);
                for view in views() {
                    let mut s = Vec::new();
                    strings(view, &mut s);
                    let is_string = matches!(view, V::Str(_));
                    if test.kind == TestKind::Equal && !is_string {
                        if let Some(held) = s
                            .iter()
                            .find(|v| *v == wanted)
                            .or_else(|| s.iter().find(|v| fold(v) == folded))
                        {
                            *in_arrays.entry(held.clone()).or_default() += 1;
                        }
                        continue;
                    }
                    let substring = test.kind == TestKind::Contains && is_string;
                    let hit =
                        |v: &str| if substring { v.contains(wanted.as_str()) } else { v == wanted };
                    if s.iter().any(|v| hit(v)) {
                        exact += 1;
                        continue;
                    }
                    for v in s {
                        let loose =
                            if substring { fold(&v).contains(&folded) } else { fold(&v) == folded };
                        if loose {
                            *variants.entry(v).or_default() += 1;
                        } else if distinct.len() < MAX_DISTINCT_COMPARED
                            || distinct.contains_key(&v)
                        {
                            *distinct.entry(v).or_default() += 1;
                        }
                    }
                }
                if let Some((held, count)) = in_arrays.iter().max_by_key(|(_, n)| **n) {
                    out.hints.push(format!(
                        "{d} is an array, and `==` compares the whole array with {}: to ask whether it holds the string, write {} ({} {} it{}).",
                        raw(wanted),
                        code(&format!("contains({dotted}, {})", raw(held))),
                        counted(*count, item, noun),
                        if *count == 1 { "holds" } else { "hold" },
                        if held == wanted { "" } else { " spelled this way" }
                    ));
                }
                if exact == 0 && !variants.is_empty() {
                    let mut listed: Vec<(String, usize)> = variants.into_iter().collect();
                    listed.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
                    let shown: Vec<String> = listed
                        .iter()
                        .take(MAX_VARIANTS)
                        .map(|(v, n)| format!("{} ({})", raw(v), counted(*n, item, noun)))
                        .collect();
                    out.hints.push(format!(
                        "No {item} has {d} {} {}: strings compare exactly (case, accents, spaces), and {d} has {}.",
                        if test.kind == TestKind::Contains { "containing" } else { "equal to" },
                        raw(wanted),
                        shown.join(", ")
                    ));
                    continue;
                }
                if exact == 0 && in_arrays.is_empty() && test.kind == TestKind::Equal {
                    // A misspelled value: the values closest by spelling.
                    let near = closest(wanted, distinct.keys().map(String::as_str), MAX_VARIANTS);
                    if !near.is_empty() {
                        let shown: Vec<String> = near
                            .iter()
                            .map(|v| {
                                format!(
                                    "{} ({})",
                                    raw(v),
                                    counted(distinct.get(v).copied().unwrap_or(0), item, noun)
                                )
                            })
                            .collect();
                        out.hints.push(format!(
                            "No {item} has {d} equal to {}; the closest values it has are {}.",
                            raw(wanted),
                            shown.join(", ")
                        ));
                        continue;
                    }
                    type_hint(&mut out, test, &dotted, views(), (item, noun));
                }
            }
            (Against::Literal(_), TestKind::Equal | TestKind::Order) => {
                type_hint(&mut out, test, &dotted, views(), (item, noun))
            }
            _ => {}
        }
    }
    out.hints.dedup();
    out
}

/// A hint when the literal's type is one the property never holds (`cpu == '0.5'`), or when an
/// ordering meets strings (JMESPath orders only numbers).
fn type_hint<'a>(
    out: &mut NoMatch,
    test: &Test,
    dotted: &str,
    views: impl Iterator<Item = V<'a>>,
    (item, noun): (&str, &str),
) {
    let Against::Literal(lit) = &test.against else { return };
    let d = code(dotted);
    let mut tally: BTreeMap<&'static str, usize> = BTreeMap::new();
    for view in views {
        if !matches!(view, V::Null) {
            *tally.entry(type_of(view)).or_default() += 1;
        }
    }
    let wanted = value_type(lit);
    if tally.is_empty() {
        return;
    }
    let holds = tally
        .iter()
        .map(|(t, n)| format!("{t}s ({})", counted(*n, item, noun)))
        .collect::<Vec<_>>()
        .join(", ");
    if test.kind == TestKind::Order && (wanted != "number" || !tally.contains_key("number")) {
        let rewrite = match lit {
            Value::String(s) if s.trim().parse::<f64>().is_ok() && tally.contains_key("number") => {
                format!(
                    " Write the number as a JSON literal: {}.",
                    code(&format!("{dotted} {} `{}`", test.operator, s.trim()))
                )
            }
            _ => String::new(),
        };
        out.hints.push(format!(
            "JMESPath orders only numbers (`<`, `>` on anything else is null, so never true); {d} holds {holds} and the selector compares it with {}.{rewrite}",
            literal(lit)
        ));
        return;
    }
    if test.kind == TestKind::Equal && !tally.contains_key(wanted) {
        let rewrite = match lit {
            Value::String(s) if tally.contains_key("number") && s.trim().parse::<f64>().is_ok() => {
                format!(" Write {}.", code(&format!("{dotted} == `{}`", s.trim())))
            }
            Value::String(s)
                if tally.contains_key("boolean") && matches!(s.trim(), "true" | "false") =>
            {
                format!(" Write {}.", code(&format!("{dotted} == `{}`", s.trim())))
            }
            Value::Number(n) if tally.contains_key("string") => {
                format!(
                    " Write {} if the strings hold numbers.",
                    code(&format!("{dotted} == {}", raw(&n.to_string())))
                )
            }
            _ => String::new(),
        };
        out.hints.push(format!(
            "{d} holds {holds}, never a {wanted}, and JMESPath's `==` compares types strictly, so {} is never true.{rewrite}",
            code(&format!("{dotted} == {}", literal(lit)))
        ));
    }
}
