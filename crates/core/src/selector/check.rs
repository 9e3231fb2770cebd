//! Matching one item: a selector on an item's JSON text or parsed value, on the fast path where
//! it has one and through the bounded evaluator ([`super::bounded_eval`]) otherwise. An item
//! nested past the parser's depth limit is read cut ([`crate::capped`]) and answered only when
//! the answer does not depend on what was cut. The answer tells an item that could not be
//! evaluated ([`Verdict`]) from an evaluation that must stop for every item ([`Halt`]).

use serde_json::Value;

use crate::cancel::Cancel;
use crate::error::CoreError;

use super::bounded_eval::{MAX_STEPS, MAX_VALUE_DEPTH, Stop};
use super::parse::Selector;
use super::value::{Step, walk};

impl Selector {
    /// Whether the item with JSON text `json` matches; an error says why it could not be
    /// evaluated (a function given the wrong type, text nested past the parser's limit) or why
    /// the evaluation stopped ([`Self::check_json`] tells the two apart).
    pub fn matches_json(&self, json: &str) -> Result<bool, String> {
        self.check_json(json, &crate::cancel::current())
            .unwrap_or_else(|halt| Err(halt.to_string()))
    }

    /// Whether the item with JSON text `json` matches (`Ok(Err(reason))`: it could not be
    /// evaluated, and does not match), or why the evaluation must stop for every item
    /// ([`Halt`]: too costly, or `cancel` was cancelled).
    pub fn check_json(&self, json: &str, cancel: &Cancel) -> Result<Verdict, Halt> {
        if self.fast.is_some() {
            let value: Value = match serde_json::from_str(json) {
                Ok(value) => value,
                Err(e) => {
                    return Ok(self.matches_deep(json).ok_or_else(|| unreadable(&e.to_string())));
                }
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
        self.check_value(value, &crate::cancel::current())
            .unwrap_or_else(|halt| Err(halt.to_string()))
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
        match super::bounded_eval::matches(&self.text, &self.ast, data, cut, cancel) {
            Ok(hit) => Ok(Ok(hit)),
            Err(Stop::Error(reason)) => Ok(Err(reason)),
            Err(Stop::TooCostly) => Err(Halt::TooCostly),
            Err(Stop::TooDeep) => Err(Halt::TooDeep),
            Err(Stop::Cancelled(cancelled)) => Err(Halt::Cancelled(cancelled)),
        }
    }
}

/// Whether the path `steps` meets a container cut by [`crate::capped::parse_capped`] on its way
/// or ends on a value holding one (where it ends early, it stopped at the cut).
fn reaches_cut(value: &Value, steps: &[Step]) -> bool {
    let mut at = value;
    for step in steps {
        match at {
            Value::String(s) if s == crate::capped::DEPTH_MARKER => return true,
            _ => match walk(at, std::slice::from_ref(step)) {
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
    pub fn into_error(
        self,
        selector: &str,
        item: &str,
        evaluated: usize,
        total: usize,
    ) -> CoreError {
        match self {
            Halt::Cancelled(cancelled) => CoreError::Cancelled {
                reason: cancelled.reason,
                done: format!("{evaluated} of {total} items evaluated"),
            },
            other => CoreError::SelectorTooCostly {
                expression: selector.to_string(),
                item: item.to_string(),
                reason: other.to_string(),
            },
        }
    }
}

/// The reason an item's text could not be read, in words a reader can act on.
fn unreadable(reason: &str) -> String {
    if reason.contains("recursion limit") {
        crate::capped::reads_cut_part()
    } else {
        format!("the item's text is not valid JSON ({reason})")
    }
}
