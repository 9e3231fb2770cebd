//! The selection: node and edge ids in the order they were selected, changed by replace, add,
//! remove or clear — by tools and by clicks in the web view alike.

use std::collections::HashSet;

use serde::{Deserialize, Serialize};

/// How a selection change combines with the current selection.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default, schemars::JsonSchema,
)]
#[serde(rename_all = "lowercase")]
pub enum SelectMode {
    /// The new ids become the selection.
    #[default]
    Replace,
    /// The new ids are added.
    Add,
    /// The new ids are removed.
    Remove,
    /// Everything is unselected (the ids are ignored).
    Clear,
}

/// Selected nodes and edges.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Selection {
    /// Selected node ids, in selection order, no repeats.
    pub nodes: Vec<String>,
    /// Selected edge ids, in selection order, no repeats.
    pub edges: Vec<String>,
}

fn apply(current: &mut Vec<String>, ids: &[String], mode: SelectMode) {
    match mode {
        SelectMode::Replace | SelectMode::Add => {
            if mode == SelectMode::Replace {
                current.clear();
            }
            // A set, not `contains` per id: selecting 100k nodes must not take 10^10 steps.
            let mut present: HashSet<String> = current.iter().cloned().collect();
            for id in ids {
                if present.insert(id.clone()) {
                    current.push(id.clone());
                }
            }
        }
        SelectMode::Remove => {
            let removed: HashSet<&str> = ids.iter().map(String::as_str).collect();
            current.retain(|id| !removed.contains(id.as_str()));
        }
        SelectMode::Clear => current.clear(),
    }
}

impl Selection {
    /// Changes the selection; `nodes` and `edges` are the ids the change is about.
    pub fn change(&mut self, nodes: &[String], edges: &[String], mode: SelectMode) {
        if mode == SelectMode::Replace {
            // A replace replaces both kinds, even when ids of only one kind are given.
            self.nodes.clear();
            self.edges.clear();
        }
        apply(
            &mut self.nodes,
            nodes,
            if mode == SelectMode::Replace { SelectMode::Add } else { mode },
        );
        apply(
            &mut self.edges,
            edges,
            if mode == SelectMode::Replace { SelectMode::Add } else { mode },
        );
    }

    /// True when nothing is selected.
    pub fn is_empty(&self) -> bool {
        self.nodes.is_empty() && self.edges.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ids(list: &[&str]) -> Vec<String> {
        list.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn replace_add_remove_and_clear_keep_order_without_repeats() {
        let mut selection = Selection::default();
        selection.change(&ids(&["b", "a", "b"]), &ids(&["e1"]), SelectMode::Replace);
        assert_eq!(
            (selection.nodes.clone(), selection.edges.clone()),
            (ids(&["b", "a"]), ids(&["e1"]))
        );
        selection.change(&ids(&["c", "a"]), &[], SelectMode::Add);
        assert_eq!(selection.nodes, ids(&["b", "a", "c"]));
        selection.change(&ids(&["b"]), &ids(&["e1"]), SelectMode::Remove);
        assert_eq!((selection.nodes.clone(), selection.edges.clone()), (ids(&["a", "c"]), vec![]));
        selection.change(&ids(&["z"]), &[], SelectMode::Replace);
        assert_eq!(selection.nodes, ids(&["z"]));
        selection.change(&[], &[], SelectMode::Clear);
        assert!(selection.is_empty());
    }
}
