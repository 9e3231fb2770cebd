//! Compiling a selector: its text parsed within the bounds of [`super::bounds`], refused with a
//! line, a column, a caret and a hint when it is not valid JMESPath, and compiled to the fast
//! path ([`super::fast`]) when every node of it is in that subset.

use crate::error::CoreError;

use super::fast::Fast;
use super::value::{FieldPath, Step, field_prefix};

/// A compiled selector: its tree is at most [`super::MAX_SELECTOR_DEPTH`] deep, and evaluating it on
/// an item takes at most [`super::MAX_STEPS`] steps.
pub struct Selector {
    pub(super) text: String,
    pub(super) ast: jmespath::ast::Ast,
    pub(super) fast: Option<Fast>,
    /// The paths the fast form reads, by path id.
    pub(super) fast_paths: Vec<Vec<Step>>,
}

impl std::fmt::Debug for Selector {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_tuple("Selector").field(&self.text).finish()
    }
}

/// What to try instead, for the two mistakes most selectors that do not parse make.
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
    /// longer than [`super::MAX_SELECTOR_BYTES`] or nested deeper than [`super::MAX_SELECTOR_DEPTH`] is refused
    /// the same way, before anything recurses over it.
    pub fn parse(text: &str) -> Result<Self, CoreError> {
        match super::bounds::parse(text) {
            Ok(ast) => {
                let (fast, fast_paths) = super::fast::compile(&ast).unzip();
                Ok(Self {
                    text: text.to_string(),
                    fast,
                    fast_paths: fast_paths.unwrap_or_default(),
                    ast,
                })
            }
            Err(Ok(e)) => {
                Err(invalid(text, e.offset, e.line, e.column, e.reason.to_string(), hint_for(text)))
            }
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

    /// The field paths whose columns [`super::columns::evaluate`] reads, in that order (one per
    /// path the selector reads, repeats included); `None` when the selector is not on the fast
    /// path.
    pub fn column_paths(&self) -> Option<Vec<FieldPath>> {
        self.fast.as_ref()?;
        Some(self.fast_paths.iter().map(|steps| field_prefix(steps)).collect())
    }

    /// The fast form, when the selector has one.
    pub(super) fn fast_form(&self) -> Option<&Fast> {
        self.fast.as_ref()
    }

    /// Whether the selector runs on the fast path (no jmespath values built per item).
    pub fn is_fast(&self) -> bool {
        self.fast.is_some()
    }
}

/// A selector refused at parse time, pointing at `offset` (line and column from 0).
fn invalid(
    text: &str,
    offset: usize,
    line: usize,
    column: usize,
    reason: String,
    hint: String,
) -> CoreError {
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
        Ast::Flatten { node, .. } | Ast::Not { node, .. } | Ast::ObjectValues { node, .. } => {
            collect_fields(node, out)
        }
        Ast::Function { args, .. } => args.iter().for_each(|a| collect_fields(a, out)),
        Ast::MultiList { elements, .. } => elements.iter().for_each(|a| collect_fields(a, out)),
        Ast::MultiHash { elements, .. } => {
            elements.iter().for_each(|kv| collect_fields(&kv.value, out))
        }
        _ => {}
    }
}
