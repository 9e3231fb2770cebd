//! A fast path for the selectors styles and counts use most — property paths, comparisons with
//! literals, `&&`, `||`, `!` and `contains` — evaluated directly on parsed `serde_json` values
//! with JMESPath's semantics (truthiness, type-strict equality with the jmespath crate's float
//! tolerance, ordering only between numbers). Anything else, or any case the fast path does not
//! decide, falls back to the jmespath crate, so results never differ (a test checks this).

use jmespath::ast::{Ast, Comparator};
use serde_json::Value;

/// A compiled selector in the supported subset.
#[derive(Debug, Clone)]
pub(crate) enum Fast {
    /// A path of fields and indexes from the item's root; `id` numbers the selector's paths in
    /// order of appearance (the columns a columnar row is read from).
    Path { id: usize, steps: Vec<Step> },
    /// A literal value.
    Literal(Value),
    /// A comparison.
    Compare(Comparator, Box<Fast>, Box<Fast>),
    /// `a && b`.
    And(Box<Fast>, Box<Fast>),
    /// `a || b`.
    Or(Box<Fast>, Box<Fast>),
    /// `!a`.
    Not(Box<Fast>),
    /// `contains(subject, search)`.
    Contains(Box<Fast>, Box<Fast>),
}

/// One step of a path.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub(crate) enum Step {
    Field(String),
    Index(i32),
}

/// A value as the evaluator sees it: scalars by value, strings and containers borrowed from the
/// item (a parsed tree or a column).
#[derive(Debug, Clone, Copy)]
pub(crate) enum V<'a> {
    Null,
    Bool(bool),
    Num(f64),
    Str(&'a str),
    /// An array or an object (scalars are always one of the variants above).
    Container(&'a Value),
    /// An array of a column, its elements kept as cells.
    List(crate::selector_columns::ListView<'a>),
}

impl<'a> V<'a> {
    /// The view of a parsed value.
    pub(crate) fn of(value: &'a Value) -> Self {
        match value {
            Value::Null => V::Null,
            Value::Bool(b) => V::Bool(*b),
            // Without arbitrary precision every JSON number has an f64 view.
            Value::Number(n) => n.as_f64().map_or(V::Null, V::Num),
            Value::String(s) => V::Str(s),
            Value::Array(_) | Value::Object(_) => V::Container(value),
        }
    }
}

/// Where an evaluation reads its paths from: a parsed item, or one row of columns.
pub(crate) trait Row<'a> {
    /// The value at path number `id` (whose steps are `steps`), null when absent.
    fn path(&self, id: usize, steps: &'a [Step]) -> V<'a>;
}

impl<'a> Row<'a> for &'a Value {
    fn path(&self, _id: usize, steps: &'a [Step]) -> V<'a> {
        walk(self, steps).map_or(V::Null, V::of)
    }
}

/// Follows `steps` from `at`; `None` when a step finds nothing.
pub(crate) fn walk<'a>(mut at: &'a Value, steps: &[Step]) -> Option<&'a Value> {
    for step in steps {
        at = match step {
            // Small objects (most items) are faster to scan than to hash into.
            Step::Field(name) => {
                at.as_object().and_then(|o| if o.len() <= 12 { o.iter().find(|(k, _)| *k == name).map(|(_, v)| v) } else { o.get(name) })?
            }
            Step::Index(i) => at.as_array().and_then(|a| {
                let i = if *i >= 0 { usize::try_from(*i).ok() } else { a.len().checked_sub(i.unsigned_abs() as usize) };
                i.and_then(|i| a.get(i))
            })?,
        };
    }
    Some(at)
}

/// The fast path could not decide; ask the jmespath crate.
#[derive(Debug)]
pub(crate) struct Undecided;

fn path_of(ast: &Ast, steps: &mut Vec<Step>) -> bool {
    match ast {
        Ast::Field { name, .. } => {
            steps.push(Step::Field(name.clone()));
            true
        }
        Ast::Index { idx, .. } => {
            steps.push(Step::Index(*idx));
            true
        }
        Ast::Subexpr { lhs, rhs, .. } => path_of(lhs, steps) && path_of(rhs, steps),
        _ => false,
    }
}

/// Compiles `ast` if every node of it is in the subset, with the paths it reads in the order of
/// their ids.
pub(crate) fn compile(ast: &Ast) -> Option<(Fast, Vec<Vec<Step>>)> {
    let mut paths = Vec::new();
    let fast = compile_node(ast, &mut paths)?;
    Some((fast, paths))
}

fn compile_node(ast: &Ast, paths: &mut Vec<Vec<Step>>) -> Option<Fast> {
    let mut boxed = |node: &Ast| compile_node(node, paths).map(Box::new);
    Some(match ast {
        Ast::Field { .. } | Ast::Subexpr { .. } | Ast::Index { .. } => {
            let mut steps = Vec::new();
            if !path_of(ast, &mut steps) {
                return None;
            }
            paths.push(steps.clone());
            Fast::Path { id: paths.len() - 1, steps }
        }
        Ast::Literal { value, .. } => Fast::Literal(serde_json::to_value(&**value).ok()?),
        Ast::Comparison { comparator, lhs, rhs, .. } => Fast::Compare(comparator.clone(), boxed(lhs)?, boxed(rhs)?),
        Ast::And { lhs, rhs, .. } => Fast::And(boxed(lhs)?, boxed(rhs)?),
        Ast::Or { lhs, rhs, .. } => Fast::Or(boxed(lhs)?, boxed(rhs)?),
        Ast::Not { node, .. } => Fast::Not(boxed(node)?),
        Ast::Function { name, args, .. } if name == "contains" && args.len() == 2 => Fast::Contains(boxed(&args[0])?, boxed(&args[1])?),
        _ => return None,
    })
}

/// JMESPath truthiness: null, false, and empty strings, arrays and objects are false.
pub(crate) fn truthy(value: V<'_>) -> bool {
    match value {
        V::Null | V::Bool(false) => false,
        V::Str(s) => !s.is_empty(),
        V::Container(Value::Array(a)) => !a.is_empty(),
        V::Container(Value::Object(o)) => !o.is_empty(),
        V::List(list) => !list.is_empty(),
        _ => true,
    }
}

/// The jmespath crate's float equality (relative error below epsilon).
pub(crate) fn float_eq(a: f64, b: f64) -> bool {
    let diff = (a - b).abs();
    if a == b {
        true
    } else if !a.is_normal() || !b.is_normal() {
        diff < (f64::EPSILON * f64::MIN_POSITIVE)
    } else {
        diff / (a.abs() + b.abs()) < f64::EPSILON
    }
}

/// The jmespath crate's equality: same type, then by value.
fn equal(a: V<'_>, b: V<'_>) -> bool {
    match (a, b) {
        (V::Null, V::Null) => true,
        (V::Bool(x), V::Bool(y)) => x == y,
        (V::Num(x), V::Num(y)) => float_eq(x, y),
        (V::Str(x), V::Str(y)) => x == y,
        (V::Container(x), V::Container(y)) => equal_values(x, y),
        (V::List(x), V::List(y)) => x.len() == y.len() && (0..x.len()).all(|i| equal(x.get(i), y.get(i))),
        (V::List(list), V::Container(Value::Array(items))) | (V::Container(Value::Array(items)), V::List(list)) => {
            list.len() == items.len() && items.iter().enumerate().all(|(i, item)| equal(list.get(i), V::of(item)))
        }
        _ => false,
    }
}

fn equal_values(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Array(x), Value::Array(y)) => x.len() == y.len() && x.iter().zip(y).all(|(x, y)| equal_values(x, y)),
        (Value::Object(x), Value::Object(y)) => x.len() == y.len() && x.iter().all(|(k, v)| y.get(k).is_some_and(|w| equal_values(v, w))),
        (Value::Array(_) | Value::Object(_), _) | (_, Value::Array(_) | Value::Object(_)) => false,
        _ => equal(V::of(a), V::of(b)),
    }
}

impl Fast {
    /// Whether `row` matches; `Undecided` when the jmespath crate must answer (e.g. an error).
    pub(crate) fn matches<'a>(&'a self, row: &impl Row<'a>) -> Result<bool, Undecided> {
        Ok(truthy(self.eval(row)?))
    }

    pub(crate) fn eval<'a>(&'a self, row: &impl Row<'a>) -> Result<V<'a>, Undecided> {
        Ok(match self {
            Fast::Path { id, steps } => row.path(*id, steps),
            Fast::Literal(value) => V::of(value),
            Fast::Compare(comparator, lhs, rhs) => compare(comparator, lhs.eval(row)?, rhs.eval(row)?),
            Fast::And(lhs, rhs) => {
                let left = lhs.eval(row)?;
                if truthy(left) { rhs.eval(row)? } else { left }
            }
            Fast::Or(lhs, rhs) => {
                let left = lhs.eval(row)?;
                if truthy(left) { left } else { rhs.eval(row)? }
            }
            Fast::Not(node) => V::Bool(!truthy(node.eval(row)?)),
            Fast::Contains(subject, search) => contains(subject.eval(row)?, search.eval(row)?)?,
        })
    }
}

/// A comparison's result: a boolean, or null when ordering values that are not both numbers.
pub(crate) fn compare<'a>(comparator: &Comparator, l: V<'a>, r: V<'a>) -> V<'a> {
    match comparator {
        Comparator::Equal => V::Bool(equal(l, r)),
        Comparator::NotEqual => V::Bool(!equal(l, r)),
        // Only numbers are ordered; the crate orders them with partial_cmp (JSON has no NaN).
        ordering => match (l, r) {
            (V::Num(a), V::Num(b)) => V::Bool(match ordering {
                Comparator::LessThan => a < b,
                Comparator::LessThanEqual => a <= b,
                Comparator::GreaterThan => a > b,
                _ => a >= b,
            }),
            _ => V::Null,
        },
    }
}

/// `contains(subject, search)`; a type error is left to the jmespath crate to report.
pub(crate) fn contains<'a>(subject: V<'a>, search: V<'a>) -> Result<V<'a>, Undecided> {
    match (subject, search) {
        (V::Container(Value::Array(items)), needle) => Ok(V::Bool(items.iter().any(|v| equal(V::of(v), needle)))),
        (V::List(list), needle) => Ok(V::Bool((0..list.len()).any(|i| equal(list.get(i), needle)))),
        (V::Str(haystack), V::Str(needle)) => Ok(V::Bool(haystack.contains(needle))),
        _ => Err(Undecided),
    }
}
