//! What the path limit kept out of a profile: which keys met past the limit were not profiled,
//! so that a summary can say how many properties it does not show and describe_property can say
//! "not profiled" rather than "not found".
//!
//! Each object node remembers the keys it refused as 64-bit hashes (exact up to a hash collision,
//! as value-count keys are), at most [`MAX_REMEMBERED`] per collection so that hostile input with
//! millions of distinct keys stays bounded; past that the count is a lower bound and says so.

use std::collections::{BTreeMap, HashSet};
use std::hash::{Hash, Hasher};

use serde::Serialize;

use crate::path::{PropertyPath, Segment};

/// Most refused keys remembered per collection (8 bytes each).
pub(crate) const MAX_REMEMBERED: usize = 1_000_000;

/// The hash a refused key is remembered by. `DefaultHasher::new` hashes alike in every builder
/// and thread (unlike a `RandomState`), so builders merged from parallel parts agree.
pub(crate) fn key_hash(key: &str) -> u64 {
    let mut hasher = std::hash::DefaultHasher::new();
    key.hash(&mut hasher);
    hasher.finish()
}

/// The keys one object node refused.
pub(crate) type Refused = HashSet<u64>;

/// What the path limit kept out of a collection's profile.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct PathLimit {
    /// The limit in force: most distinct property paths profiled per collection.
    pub max_paths: usize,
    /// Distinct keys met past the limit and not profiled. A key counts once, whatever lies
    /// under it (nothing under a refused key is read).
    pub unprofiled: u64,
    /// True when more keys were refused than could be remembered: `unprofiled` is then a lower
    /// bound, and a name not found may still lie past the limit.
    pub more_unprofiled: bool,
    /// Paths profiled from only some of their occurrences: one part of a parallel load refused
    /// the key that another part profiled, so their counts miss the refused occurrences.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub partial: Vec<PropertyPath>,
    /// Refused key hashes by the path of the object they were refused in, sorted.
    #[serde(skip)]
    refused: BTreeMap<PropertyPath, Vec<u64>>,
}

/// Where a path stands against the path limit.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Unprofiled {
    /// The path itself was met past the limit.
    Refused,
    /// The path lies under this refused path, whose members were never read.
    Under(PropertyPath),
    /// Not remembered as refused, but more keys were refused than remembered: it may be one.
    Unknown,
}

impl PathLimit {
    /// A limit of `max_paths` that refused nothing yet.
    pub(crate) fn new(max_paths: usize, more_unprofiled: bool) -> Self {
        Self { max_paths, more_unprofiled, ..Self::default() }
    }

    /// True when the limit kept nothing out.
    pub fn is_clear(&self) -> bool {
        self.unprofiled == 0 && !self.more_unprofiled && self.partial.is_empty()
    }

    /// Records the keys the object at `path` refused, given the keys it did profile: a key in
    /// both was profiled from part of its occurrences.
    pub(crate) fn record(
        &mut self,
        path: &PropertyPath,
        mut refused: Refused,
        profiled: &[Box<str>],
    ) {
        for key in profiled {
            if refused.remove(&key_hash(key)) {
                self.partial.push(path.child(key));
            }
        }
        if refused.is_empty() {
            return;
        }
        self.unprofiled += refused.len() as u64;
        let mut hashes: Vec<u64> = refused.into_iter().collect();
        hashes.sort_unstable();
        self.refused.insert(path.clone(), hashes);
    }

    /// Whether `path` (not in the profile) was kept out by the limit: itself refused, or under a
    /// refused key. `None` when the limit did not keep it out (as far as remembered).
    pub fn unprofiled_at(&self, path: &PropertyPath) -> Option<Unprofiled> {
        let mut parent = PropertyPath::root();
        for (i, segment) in path.segments().iter().enumerate() {
            let Segment::Key(key) = segment else {
                parent = parent.items();
                continue;
            };
            let refused = self
                .refused
                .get(&parent)
                .is_some_and(|hashes| hashes.binary_search(&key_hash(key)).is_ok());
            parent = parent.child(key);
            if refused {
                return Some(if i + 1 == path.depth() {
                    Unprofiled::Refused
                } else {
                    Unprofiled::Under(parent)
                });
            }
        }
        self.more_unprofiled.then_some(Unprofiled::Unknown)
    }
}

/// Adds `other`'s refused keys to `mine`, remembering at most [`MAX_REMEMBERED`] in all
/// (`remembered` counts them); true when some had to be forgotten.
pub(crate) fn merge_refused(
    mine: &mut Option<Box<Refused>>,
    other: Option<Box<Refused>>,
    remembered: &mut usize,
) -> bool {
    let Some(other) = other else { return false };
    let set = mine.get_or_insert_with(Box::default);
    let mut forgot = false;
    for hash in *other {
        if *remembered >= MAX_REMEMBERED {
            forgot = true;
            break;
        }
        if set.insert(hash) {
            *remembered += 1;
        }
    }
    forgot
}
