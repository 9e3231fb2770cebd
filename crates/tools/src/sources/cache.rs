//! A cache of tool answers, emptied whenever any source reloads. Profiles themselves live in
//! the collections (so they go with the data); this cache saves re-rendering answers that are
//! costly to produce — markdown fitted to a token budget, histograms — on repeated calls.

use schemascope_core::sync::lock;
use std::collections::HashMap;
use std::fmt::Debug;
use std::sync::Mutex;

use crate::result::ToolResult;

/// Most answers kept; past it the cache is emptied (calls are cheap to redo, memory is not).
const MAX_ENTRIES: usize = 4_096;

/// Identifies one call: the tool, the source, and the parameters that shape the answer.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct CacheKey {
    text: String,
    /// False for a call on an AimDB instance named by its socket path: no reload says when it
    /// changes, so its answers are computed anew every time.
    pub(crate) keep: bool,
}

impl CacheKey {
    /// A key from the tool name, the source name and the parameters' debug renderings.
    pub fn new(tool: &str, source: Option<&str>, params: &[&dyn Debug]) -> Self {
        Self {
            text: format!("{tool}\u{1f}{source:?}\u{1f}{params:?}"),
            keep: !source.is_some_and(super::instances::names_instance),
        }
    }

    /// The key within one generation of the data, so an answer computed across a reload is
    /// never served for the new data.
    pub fn in_generation(self, generation: u64) -> Self {
        Self { text: format!("{generation}\u{1f}{}", self.text), keep: self.keep }
    }
}

/// The answers.
#[derive(Debug, Default)]
pub(crate) struct AnswerCache {
    answers: Mutex<HashMap<CacheKey, ToolResult>>,
}

impl AnswerCache {
    /// The cached answer, if any.
    pub(crate) fn get(&self, key: &CacheKey) -> Option<ToolResult> {
        lock(&self.answers).get(key).cloned()
    }

    /// Keeps a successful answer.
    pub(crate) fn put(&self, key: CacheKey, answer: &ToolResult) {
        if !answer.success || !key.keep {
            return;
        }
        {
            let mut answers = lock(&self.answers);
            if answers.len() >= MAX_ENTRIES {
                answers.clear();
            }
            answers.insert(key, answer.clone());
        }
    }

    /// Forgets everything (a source changed).
    pub(crate) fn clear(&self) {
        {
            let mut answers = lock(&self.answers);
            answers.clear();
        }
    }
}
