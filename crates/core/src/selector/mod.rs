//! JMESPath selectors over items. A selector's root is always the item's value — a node's or
//! document's `data`, an edge's `data`, a record's `value` — so `type == 'server'` selects
//! server nodes, and an item matches when the selector yields a truthy value (JMESPath's
//! truthiness: not null, false, or an empty string/array/object).
//!
//! Three evaluators share one semantics: the bounded evaluator (the jmespath crate's interpreter
//! with limits, for every selector), the fast path (common selectors on a parsed item), and the
//! columns (the fast path over many items at once); tests hold the last two to the first and to
//! the jmespath crate. Each file depends only on those listed before it:
//!
//! 1. `value` — the shared vocabulary: the value view `V`, column cells, paths, rows;
//! 2. `semantics` — JMESPath's truthiness, equality, ordering and `contains` on `V`;
//! 3. `fast` — the fast path's compiled form and its evaluation on a row;
//! 4. `bounds` — size and nesting limits, checked while parsing;
//! 5. `bounded_eval` — the bounded evaluator;
//! 6. `parse` — [`Selector`]: parsing, errors with hints, compiling to the fast path;
//! 7. `check` — one item's [`Verdict`], or a [`Halt`] for every item;
//! 8. [`columns`] — paths' values extracted into cells, the fast path over them;
//! 9. `find` — [`find_items`] over a collection (whose zero-match hints, [`crate::no_match`],
//!    read `parse`, `value` and `columns`).

mod bounded_eval;
mod bounds;
mod check;
pub mod columns;
mod fast;
mod find;
mod parse;
mod semantics;
#[cfg(test)]
mod tests;
mod value;

pub use bounded_eval::{MAX_STEPS, MAX_VALUE_DEPTH};
pub use bounds::{MAX_SELECTOR_BYTES, MAX_SELECTOR_DEPTH};
pub use check::{Halt, Verdict};
pub use find::{FindResult, MAX_IDS, MAX_ITEMS, Unevaluated, find_items};
pub use parse::Selector;
pub(crate) use value::V;
