//! A fast path for the selectors styles and counts use most — property paths, comparisons with
//! literals, `&&`, `||`, `!` and `contains` — evaluated directly on parsed `serde_json` values
//! (or a row of columns) with JMESPath's semantics ([`super::semantics`]). Anything else, or any
//! case the fast path does not decide, falls back to the jmespath crate, so results never differ
//! (a test checks this).

use jmespath::ast::{Ast, Comparator};
use serde_json::Value;

use super::semantics::{Undecided, compare, contains, truthy};
use super::value::{Row, Step, V};

/// A compiled selector in the supported subset.
#[derive(Debug, Clone)]
pub(super) enum Fast {
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
pub(super) fn compile(ast: &Ast) -> Option<(Fast, Vec<Vec<Step>>)> {
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
        Ast::Comparison { comparator, lhs, rhs, .. } => {
            Fast::Compare(comparator.clone(), boxed(lhs)?, boxed(rhs)?)
        }
        Ast::And { lhs, rhs, .. } => Fast::And(boxed(lhs)?, boxed(rhs)?),
        Ast::Or { lhs, rhs, .. } => Fast::Or(boxed(lhs)?, boxed(rhs)?),
        Ast::Not { node, .. } => Fast::Not(boxed(node)?),
        Ast::Function { name, args, .. } if name == "contains" && args.len() == 2 => {
            Fast::Contains(boxed(&args[0])?, boxed(&args[1])?)
        }
        _ => return None,
    })
}

impl Fast {
    /// Whether `row` matches; `Undecided` when the jmespath crate must answer (e.g. an error).
    pub(super) fn matches<'a>(&'a self, row: &impl Row<'a>) -> Result<bool, Undecided> {
        Ok(truthy(self.eval(row)?))
    }

    /// The value of this node on `row`; `Undecided` when the jmespath crate must answer.
    pub(super) fn eval<'a>(&'a self, row: &impl Row<'a>) -> Result<V<'a>, Undecided> {
        Ok(match self {
            Fast::Path { id, steps } => row.path(*id, steps),
            Fast::Literal(value) => V::of(value),
            Fast::Compare(comparator, lhs, rhs) => {
                compare(comparator, lhs.eval(row)?, rhs.eval(row)?)
            }
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
