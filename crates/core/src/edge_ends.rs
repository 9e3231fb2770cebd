//! The ends of a collection's edges, as a column: two indices per edge into one table of names
//! (a graph's node ids, then the names no node has). An edge's ends then cost eight bytes, not
//! two strings of their own, and the table is shared by every version of the collection.

use std::collections::HashMap;

/// The ends of one edge, borrowed from its collection.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct EdgeEndsRef<'a> {
    /// Source node id.
    pub source: &'a str,
    /// Target node id.
    pub target: &'a str,
}

/// The index an item without ends has in the column.
const NO_END: u32 = u32::MAX;

/// Every edge's ends as indices into a table of names.
#[derive(Debug, Default)]
pub struct EdgeEndsColumn {
    /// The names, one after the other.
    names: String,
    /// Where each name starts in `names`, and one more entry: where the last ends.
    starts: Vec<usize>,
    /// Per item, the indices of its source and target ([`NO_END`] for an item without ends).
    ends: Vec<[u32; 2]>,
}

impl EdgeEndsColumn {
    /// A column over `names`, each item's ends given as indices into them (`None` for an item
    /// without ends). `None` when an index names no name, or there are too many names.
    pub fn new<'n>(
        names: impl IntoIterator<Item = &'n str>,
        ends: impl IntoIterator<Item = Option<[u32; 2]>>,
    ) -> Option<Self> {
        let mut column = Self::default();
        for name in names {
            column.push_name(name);
        }
        if u32::try_from(column.name_count()).ok()? == NO_END {
            return None;
        }
        let count = column.name_count() as u32;
        column.ends = ends
            .into_iter()
            .map(|e| match e {
                None => Some([NO_END; 2]),
                Some([s, t]) => (s < count && t < count).then_some([s, t]),
            })
            .collect::<Option<_>>()?;
        Some(column)
    }

    /// Builds the column from each item's ends as text, naming each distinct end once.
    pub fn from_texts<'a>(items: impl IntoIterator<Item = Option<(&'a str, &'a str)>>) -> Self {
        let mut column = Self::default();
        let mut index: HashMap<&'a str, u32> = HashMap::new();
        let mut name = |column: &mut Self, text: &'a str| {
            *index.entry(text).or_insert_with(|| column.push_name(text))
        };
        column.ends = items
            .into_iter()
            .map(|e| match e {
                None => [NO_END; 2],
                Some((source, target)) => [name(&mut column, source), name(&mut column, target)],
            })
            .collect();
        column
    }

    /// Appends a name; its index.
    fn push_name(&mut self, name: &str) -> u32 {
        if self.starts.is_empty() {
            self.starts.push(0);
        }
        self.names.push_str(name);
        self.starts.push(self.names.len());
        // Past u32::MAX names the column is refused by `new`; `from_texts` cannot get there
        // from items held in memory with 16 bytes each at least.
        u32::try_from(self.name_count() - 1).unwrap_or(NO_END)
    }

    fn name_count(&self) -> usize {
        self.starts.len().saturating_sub(1)
    }

    /// The name at `index`.
    pub fn name(&self, index: u32) -> Option<&str> {
        let i = index as usize;
        let (&start, &end) = (self.starts.get(i)?, self.starts.get(i + 1)?);
        self.names.get(start..end)
    }

    /// The ends of item `item`, `None` when it has none.
    pub fn get(&self, item: usize) -> Option<EdgeEndsRef<'_>> {
        let [source, target] = self.indices(item)?;
        Some(EdgeEndsRef { source: self.name(source)?, target: self.name(target)? })
    }

    /// The indices of item `item`'s ends in the table of names, `None` when it has none.
    pub fn indices(&self, item: usize) -> Option<[u32; 2]> {
        self.ends.get(item).copied().filter(|e| e[0] != NO_END)
    }

    /// How many items the column covers.
    pub fn len(&self) -> usize {
        self.ends.len()
    }

    /// True when it covers no item.
    pub fn is_empty(&self) -> bool {
        self.ends.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ends_read_back_as_given() {
        let column = EdgeEndsColumn::from_texts([Some(("a", "b")), None, Some(("b", "c"))]);
        assert_eq!(column.len(), 3);
        assert_eq!(column.get(0), Some(EdgeEndsRef { source: "a", target: "b" }));
        assert_eq!(column.get(1), None);
        assert_eq!(column.get(2), Some(EdgeEndsRef { source: "b", target: "c" }));
        assert_eq!(column.indices(2), Some([1, 2]));
        assert_eq!(column.get(3), None);

        let named = EdgeEndsColumn::new(["x", "", "zé"], [Some([2, 0]), None, Some([1, 1])]);
        let named = named.expect("valid indices");
        assert_eq!(named.get(0), Some(EdgeEndsRef { source: "zé", target: "x" }));
        assert_eq!(named.get(1), None);
        assert_eq!(named.get(2), Some(EdgeEndsRef { source: "", target: "" }));
        assert!(EdgeEndsColumn::new(["x"], [Some([0, 1])]).is_none());
    }
}
