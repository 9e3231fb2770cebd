//! Errors of the profiling core. Each message names the input at fault and, where it can, a fix.

use thiserror::Error;

/// What went wrong in the core.
#[derive(Debug, Error)]
pub enum CoreError {
    /// A caller's number past the server's ceiling for it.
    #[error(transparent)]
    PastCeiling(#[from] crate::ceilings::PastCeiling),
    /// A property path that cannot be parsed.
    #[error("invalid property path `{path}`: {reason}")]
    InvalidPath {
        /// The path as given.
        path: String,
        /// Why it is invalid.
        reason: String,
    },
    /// A JMESPath selector that does not parse.
    #[error(
        "invalid selector at line {line}, column {column} (offset {offset}): {reason}\n{expression}\n{caret}{hint}"
    )]
    InvalidSelector {
        /// The selector as given.
        expression: String,
        /// Character offset of the error.
        offset: usize,
        /// 1-based line.
        line: usize,
        /// 1-based column.
        column: usize,
        /// What the parser said.
        reason: String,
        /// A caret line pointing at the error.
        caret: String,
        /// A suggestion, possibly empty.
        hint: String,
    },
    /// A selector that parsed but failed while evaluating an item.
    #[error("selector `{expression}` failed on item `{item}`: {reason}")]
    SelectorRuntime {
        /// The selector.
        expression: String,
        /// The item it failed on.
        item: String,
        /// What the evaluator said.
        reason: String,
    },
    /// A selector that had to stop for every item: one item cost too much to evaluate.
    #[error("selector `{expression}` was stopped on item `{item}`: {reason}")]
    SelectorTooCostly {
        /// The selector.
        expression: String,
        /// The item it stopped on.
        item: String,
        /// Why, with the bound that was reached.
        reason: String,
    },
    /// The call's cancellation token was cancelled (its time was up, or its client went away).
    #[error("stopped ({done}): {reason}")]
    Cancelled {
        /// Why, in the words of whoever cancelled.
        reason: String,
        /// How far the work got ("1024 of 100000 items evaluated").
        done: String,
    },
    /// An item whose stored JSON does not parse (the source changed under us).
    #[error("item `{item}` of collection `{collection}` is not valid JSON: {reason}")]
    CorruptItem {
        /// Collection name.
        collection: String,
        /// Item id.
        item: String,
        /// Parser message.
        reason: String,
    },
    /// A JSON Schema that the validator rejected (an internal inference bug if it ever happens).
    #[error("inferred schema could not be compiled: {0}")]
    SchemaCompile(String),
}
