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
    /// A path of fields and indexes from the item's root.
    Path(Vec<Step>),
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
#[derive(Debug, Clone)]
pub(crate) enum Step {
    Field(String),
    Index(i32),
}

/// The value an expression yields: borrowed from the item, or computed.
#[derive(Debug, Clone)]
enum Yield<'a> {
    Borrowed(&'a Value),
    Null,
    Bool(bool),
}

impl Yield<'_> {
    fn value(&self) -> &Value {
        static NULL: Value = Value::Null;
        static TRUE: Value = Value::Bool(true);
        static FALSE: Value = Value::Bool(false);
        match self {
            Yield::Borrowed(v) => v,
            Yield::Null => &NULL,
            Yield::Bool(true) => &TRUE,
            Yield::Bool(false) => &FALSE,
        }
    }
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

/// Compiles `ast` if every node of it is in the subset.
pub(crate) fn compile(ast: &Ast) -> Option<Fast> {
    Some(match ast {
        Ast::Field { .. } | Ast::Subexpr { .. } | Ast::Index { .. } => {
            let mut steps = Vec::new();
            if !path_of(ast, &mut steps) {
                return None;
            }
            Fast::Path(steps)
        }
        Ast::Literal { value, .. } => Fast::Literal(serde_json::to_value(&**value).ok()?),
        Ast::Comparison { comparator, lhs, rhs, .. } => Fast::Compare(comparator.clone(), Box::new(compile(lhs)?), Box::new(compile(rhs)?)),
        Ast::And { lhs, rhs, .. } => Fast::And(Box::new(compile(lhs)?), Box::new(compile(rhs)?)),
        Ast::Or { lhs, rhs, .. } => Fast::Or(Box::new(compile(lhs)?), Box::new(compile(rhs)?)),
        Ast::Not { node, .. } => Fast::Not(Box::new(compile(node)?)),
        Ast::Function { name, args, .. } if name == "contains" && args.len() == 2 => {
            Fast::Contains(Box::new(compile(&args[0])?), Box::new(compile(&args[1])?))
        }
        _ => return None,
    })
}

/// JMESPath truthiness: null, false, and empty strings, arrays and objects are false.
fn truthy(value: &Value) -> bool {
    match value {
        Value::Null | Value::Bool(false) => false,
        Value::String(s) => !s.is_empty(),
        Value::Array(a) => !a.is_empty(),
        Value::Object(o) => !o.is_empty(),
        _ => true,
    }
}

/// The jmespath crate's float equality (relative error below epsilon).
fn float_eq(a: f64, b: f64) -> bool {
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
fn equal(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Null, Value::Null) => true,
        (Value::Bool(x), Value::Bool(y)) => x == y,
        (Value::Number(x), Value::Number(y)) => matches!((x.as_f64(), y.as_f64()), (Some(x), Some(y)) if float_eq(x, y)),
        (Value::String(x), Value::String(y)) => x == y,
        (Value::Array(x), Value::Array(y)) => x.len() == y.len() && x.iter().zip(y).all(|(x, y)| equal(x, y)),
        (Value::Object(x), Value::Object(y)) => x.len() == y.len() && x.iter().all(|(k, v)| y.get(k).is_some_and(|w| equal(v, w))),
        _ => false,
    }
}

impl Fast {
    /// Whether `item` matches; `Undecided` when the jmespath crate must answer (e.g. an error).
    pub(crate) fn matches(&self, item: &Value) -> Result<bool, Undecided> {
        Ok(truthy(self.eval(item)?.value()))
    }

    fn eval<'a>(&'a self, item: &'a Value) -> Result<Yield<'a>, Undecided> {
        Ok(match self {
            Fast::Path(steps) => {
                let mut at = item;
                for step in steps {
                    let next = match step {
                        // Small objects (most items) are faster to scan than to hash into.
                        Step::Field(name) => {
                            at.as_object().and_then(|o| if o.len() <= 12 { o.iter().find(|(k, _)| *k == name).map(|(_, v)| v) } else { o.get(name) })
                        }
                        Step::Index(i) => at.as_array().and_then(|a| {
                            let i = if *i >= 0 { usize::try_from(*i).ok() } else { a.len().checked_sub(i.unsigned_abs() as usize) };
                            i.and_then(|i| a.get(i))
                        }),
                    };
                    match next {
                        Some(v) => at = v,
                        None => return Ok(Yield::Null),
                    }
                }
                Yield::Borrowed(at)
            }
            Fast::Literal(value) => Yield::Borrowed(value),
            Fast::Compare(comparator, lhs, rhs) => {
                let (l, r) = (lhs.eval(item)?, rhs.eval(item)?);
                let (l, r) = (l.value(), r.value());
                match comparator {
                    Comparator::Equal => Yield::Bool(equal(l, r)),
                    Comparator::NotEqual => Yield::Bool(!equal(l, r)),
                    ordering => match (l.as_f64(), r.as_f64()) {
                        (Some(a), Some(b)) if l.is_number() && r.is_number() => {
                            // The crate orders NaN-free f64s with partial_cmp; JSON has no NaN.
                            Yield::Bool(match ordering {
                                Comparator::LessThan => a < b,
                                Comparator::LessThanEqual => a <= b,
                                Comparator::GreaterThan => a > b,
                                _ => a >= b,
                            })
                        }
                        _ => Yield::Null,
                    },
                }
            }
            Fast::And(lhs, rhs) => {
                let left = lhs.eval(item)?;
                if truthy(left.value()) { rhs.eval(item)? } else { left }
            }
            Fast::Or(lhs, rhs) => {
                let left = lhs.eval(item)?;
                if truthy(left.value()) { left } else { rhs.eval(item)? }
            }
            Fast::Not(node) => Yield::Bool(!truthy(node.eval(item)?.value())),
            Fast::Contains(subject, search) => {
                let (subject, search) = (subject.eval(item)?, search.eval(item)?);
                match (subject.value(), search.value()) {
                    (Value::Array(items), needle) => Yield::Bool(items.iter().any(|v| equal(v, needle))),
                    (Value::String(haystack), Value::String(needle)) => Yield::Bool(haystack.contains(needle.as_str())),
                    // A type error: the crate reports it.
                    _ => return Err(Undecided),
                }
            }
        })
    }
}
