//! Histogram bins counted outside memory (a database table's, by one `GROUP BY` over the whole
//! table) kept beside the profile they were counted for: describing a property again — another
//! value looked up, another number of values listed — does not scan the table again.

use std::collections::HashMap;
use std::sync::Mutex;

use crate::PropertyPath;
use crate::profile::numeric::HistogramLayout;
use crate::property::BinCounter;

/// Most layouts kept; past it the memo starts over (a caller asking for every bin count in turn
/// cannot grow it without bound).
const MAX_KEPT: usize = 256;

/// A property's path and its layout's edges (their bits): what a bin count depends on.
type LayoutKey = (String, Vec<u64>);

/// Bin counts by property and bin edges ([`crate::Collection::bin_memo`]).
#[derive(Debug, Default)]
pub struct BinMemo {
    counted: Mutex<HashMap<LayoutKey, Vec<u64>>>,
}

impl BinMemo {
    /// `counter`, answering from this memo what it counted before.
    pub fn remembering<'a>(&'a self, counter: &'a dyn BinCounter) -> Remembering<'a> {
        Remembering { memo: self, counter }
    }
}

/// A [`BinCounter`] that asks its counter once per property and layout ([`BinMemo::remembering`]).
pub struct Remembering<'a> {
    memo: &'a BinMemo,
    counter: &'a dyn BinCounter,
}

impl BinCounter for Remembering<'_> {
    fn count_bins(&self, path: &PropertyPath, layout: &HistogramLayout) -> Option<Vec<u64>> {
        let key: LayoutKey = (path.to_string(), layout.edges.iter().map(|e| e.to_bits()).collect());
        if let Some(counts) = crate::sync::lock(&self.memo.counted).get(&key) {
            return Some(counts.clone());
        }
        // Counted without the lock held: a scan may take minutes, and other properties' answers
        // must not wait for it. Two callers may count the same bins at once; both get them.
        let counts = self.counter.count_bins(path, layout)?;
        let mut counted = crate::sync::lock(&self.memo.counted);
        if counted.len() >= MAX_KEPT {
            counted.clear();
        }
        counted.insert(key, counts.clone());
        Some(counts)
    }
}

#[cfg(test)]
mod tests {
    use std::cell::Cell;

    use super::*;
    use crate::profile::numeric::HistogramLayout;

    /// Counts every value in the first bin, and how often it was asked.
    struct Counting(Cell<usize>);

    impl BinCounter for Counting {
        fn count_bins(&self, _: &PropertyPath, layout: &HistogramLayout) -> Option<Vec<u64>> {
            self.0.set(self.0.get() + 1);
            let mut counts = vec![0; layout.bins()];
            counts[0] = self.0.get() as u64;
            Some(counts)
        }
    }

    #[test]
    fn each_property_and_layout_is_counted_once() {
        let memo = BinMemo::default();
        let counter = Counting(Cell::new(0));
        let remembering = memo.remembering(&counter);
        let path: PropertyPath = "n".parse().expect("path");
        let other: PropertyPath = "m".parse().expect("path");
        let four = HistogramLayout::with_bins(0.0, 8.0, [2.0, 6.0], 4, false).expect("a layout");
        let two = HistogramLayout::with_bins(0.0, 8.0, [2.0, 6.0], 2, false).expect("a layout");
        assert_eq!(remembering.count_bins(&path, &four), Some(vec![1, 0, 0, 0]));
        assert_eq!(remembering.count_bins(&path, &four), Some(vec![1, 0, 0, 0]));
        assert_eq!(counter.0.get(), 1);
        assert_eq!(remembering.count_bins(&path, &two), Some(vec![2, 0]));
        assert_eq!(remembering.count_bins(&other, &four), Some(vec![3, 0, 0, 0]));
        assert_eq!(remembering.count_bins(&path, &two), Some(vec![2, 0]));
        assert_eq!(counter.0.get(), 3);
    }
}
