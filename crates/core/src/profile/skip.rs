//! Values read through serde_json without being profiled — the check that a line the tape
//! scanner declined is valid before any counter is touched, and the members profiling leaves
//! out — and the numbering of objects by which that check tells profiling which members a later
//! member of the same object repeats. Of a repeated key only the last value is profiled, as JSON
//! parsers (serde_json, Python's `json`, JavaScript's `JSON.parse`) read such an object.

use std::borrow::Cow;
use std::collections::HashSet;
use std::fmt;

use serde::de::{DeserializeSeed, IgnoredAny, MapAccess, SeqAccess, Visitor};

/// Objects with more keys than this are checked for repeats through a set, not pairwise.
const PAIRWISE_KEYS: usize = 16;

/// The objects of one item numbered in the order serde_json meets them (those above the depth
/// limit), alike by the check and by profiling, and the members the check found repeated later
/// in their object.
#[derive(Debug, Default)]
pub(super) struct ObjectOrder {
    /// Objects met so far in this item.
    met: u64,
    /// `(object, member)` of each member whose key a later member of its object repeats;
    /// sorted once the check is done.
    shadowed: Vec<(u64, u32)>,
    /// True while checking: repeated keys are looked for, not only objects counted.
    finding: bool,
}

impl ObjectOrder {
    /// Starts the check of an item: objects are counted from the first and repeats looked for.
    pub(super) fn start_check(&mut self) {
        self.met = 0;
        self.shadowed.clear();
        self.finding = true;
    }

    /// Starts profiling the item just checked, with what the check found.
    pub(super) fn start_profile(&mut self) {
        self.met = 0;
        self.shadowed.sort_unstable();
        self.finding = false;
    }

    /// Starts profiling an item that was not checked (a parsed value, whose keys are unique).
    pub(super) fn start_unchecked(&mut self) {
        self.shadowed.clear();
        self.start_profile();
    }

    /// Numbers the next object met.
    pub(super) fn next_object(&mut self) -> u64 {
        self.met += 1;
        self.met
    }

    /// Whether member `member` of object `object` has its key repeated later in the object.
    pub(super) fn is_shadowed(&self, object: u64, member: u32) -> bool {
        !self.shadowed.is_empty() && self.shadowed.binary_search(&(object, member)).is_ok()
    }

    /// Records which of `object`'s members, whose keys are `keys` in order, are repeated later.
    fn find_repeats(&mut self, object: u64, keys: &[Cow<'_, str>]) {
        let later = |i: usize| -> bool { keys[i + 1..].contains(&keys[i]) };
        if keys.len() <= PAIRWISE_KEYS {
            for i in 0..keys.len() {
                if later(i) {
                    self.shadowed.push((object, i as u32));
                }
            }
            return;
        }
        let mut seen = HashSet::with_capacity(keys.len());
        for (i, key) in keys.iter().enumerate().rev() {
            if !seen.insert(key) {
                self.shadowed.push((object, i as u32));
            }
        }
    }
}

/// A value read and dropped, each number and string in it parsed as profiling parses it down
/// to the depth limit (beyond it, as profiling does, skipped unread: nesting deeper than
/// serde_json's recursion limit is cut, not refused). serde's `IgnoredAny` alone passes numbers
/// out of range and lone surrogate escapes that profiling refuses, so a check with it would pass
/// lines that then fail halfway through their counters. Its objects are numbered in `order`.
pub(super) struct Skip<'a> {
    pub depth: usize,
    pub max_depth: usize,
    pub order: &'a mut ObjectOrder,
}

impl Skip<'_> {
    /// The skip of a value one level down.
    fn inner(&mut self) -> Skip<'_> {
        Skip { depth: self.depth + 1, max_depth: self.max_depth, order: &mut *self.order }
    }
}

impl<'de> DeserializeSeed<'de> for Skip<'_> {
    type Value = ();

    fn deserialize<D: serde::Deserializer<'de>>(self, deserializer: D) -> Result<(), D::Error> {
        deserializer.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for Skip<'_> {
    type Value = ();

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("any JSON value")
    }
    fn visit_bool<E>(self, _: bool) -> Result<(), E> {
        Ok(())
    }
    fn visit_i64<E>(self, _: i64) -> Result<(), E> {
        Ok(())
    }
    fn visit_u64<E>(self, _: u64) -> Result<(), E> {
        Ok(())
    }
    fn visit_f64<E>(self, _: f64) -> Result<(), E> {
        Ok(())
    }
    fn visit_str<E>(self, _: &str) -> Result<(), E> {
        Ok(())
    }
    fn visit_unit<E>(self) -> Result<(), E> {
        Ok(())
    }
    fn visit_none<E>(self) -> Result<(), E> {
        Ok(())
    }
    fn visit_some<D: serde::Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        d.deserialize_any(self)
    }
    fn visit_seq<A: SeqAccess<'de>>(mut self, mut seq: A) -> Result<(), A::Error> {
        if self.depth >= self.max_depth {
            while seq.next_element::<IgnoredAny>()?.is_some() {}
        } else {
            while seq.next_element_seed(self.inner())?.is_some() {}
        }
        Ok(())
    }
    fn visit_map<A: MapAccess<'de>>(mut self, mut map: A) -> Result<(), A::Error> {
        if self.depth >= self.max_depth {
            while map.next_entry::<IgnoredAny, IgnoredAny>()?.is_some() {}
            return Ok(());
        }
        let object = self.order.next_object();
        let mut keys = Vec::new();
        while let Some(key) = map.next_key_seed(KeySeed)? {
            map.next_value_seed(self.inner())?;
            if self.order.finding {
                keys.push(key);
            }
        }
        if keys.len() > 1 {
            self.order.find_repeats(object, &keys);
        }
        Ok(())
    }
}

/// Deserializes an object key, borrowing it from the input when it has no escapes.
pub(super) struct KeySeed;

impl<'de> DeserializeSeed<'de> for KeySeed {
    type Value = Cow<'de, str>;

    fn deserialize<D: serde::Deserializer<'de>>(
        self,
        deserializer: D,
    ) -> Result<Self::Value, D::Error> {
        deserializer.deserialize_str(self)
    }
}

impl<'de> Visitor<'de> for KeySeed {
    type Value = Cow<'de, str>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("an object key")
    }

    fn visit_borrowed_str<E>(self, v: &'de str) -> Result<Self::Value, E> {
        Ok(Cow::Borrowed(v))
    }

    fn visit_str<E>(self, v: &str) -> Result<Self::Value, E> {
        Ok(Cow::Owned(v.to_owned()))
    }

    fn visit_string<E>(self, v: String) -> Result<Self::Value, E> {
        Ok(Cow::Owned(v))
    }
}

#[cfg(test)]
mod tests {
    use serde_json::{Value, json};

    use crate::PropertyPath;
    use crate::profile::{CollectionProfile, ProfileBuilder};

    /// The profile of `lines` through the tape (and serde_json where the tape declines) and
    /// through serde_json alone, which must agree.
    fn profile(lines: &[&str]) -> CollectionProfile {
        let mut fast = ProfileBuilder::new();
        let mut serde = ProfileBuilder::new();
        for line in lines {
            fast.add_json(line).expect("valid");
            serde.add_json_by_serde(line).expect("valid");
        }
        let (fast, serde) = (fast.finish(lines.len() as u64), serde.finish(lines.len() as u64));
        let as_json = |p: &CollectionProfile| serde_json::to_value(p).expect("serializable");
        assert_eq!(as_json(&fast), as_json(&serde), "{lines:?}");
        fast
    }

    /// `(present, nulls, string values)` at `path` (dot-separated keys, `[]` for items).
    fn at(profile: &CollectionProfile, path: &str) -> (u64, u64, Vec<(Value, u64)>) {
        let mut p = PropertyPath::root();
        for part in path.split('.') {
            p = match part.strip_suffix("[]") {
                Some(key) => p.child(key).items(),
                None => p.child(part),
            };
        }
        let Some(found) = profile.property(&p) else { return (0, 0, Vec::new()) };
        let mut top: Vec<(Value, u64)> = Vec::new();
        if let Some(strings) = &found.strings {
            top.extend(strings.top.iter().map(|v| (v.value.clone(), v.count)));
        }
        if let Some(numbers) = &found.numbers {
            top.extend(numbers.top.iter().map(|v| (v.value.clone(), v.count)));
        }
        (found.present, found.nulls, top)
    }

    #[test]
    fn a_repeated_key_counts_its_last_value_only() {
        let p = profile(&[r#"{"a":"x","a":"y"}"#, r#"{"a":"z"}"#]);
        assert_eq!(at(&p, "a"), (2, 0, vec![(json!("y"), 1), (json!("z"), 1)]));
        // The last value decides even when it is null.
        let p = profile(&[r#"{"a":"x","a":null}"#, r#"{"a":"x"}"#]);
        assert_eq!(at(&p, "a"), (2, 1, vec![(json!("x"), 1)]));
        // Three times, with other keys between.
        let p = profile(&[r#"{"a":1,"b":2,"a":3,"c":4,"a":5}"#]);
        assert_eq!(at(&p, "a"), (1, 0, vec![(json!(5), 1)]));
        assert_eq!(at(&p, "b").0 + at(&p, "c").0, 2);
    }

    #[test]
    fn repeats_are_found_per_object_inside_arrays_and_nested_objects() {
        let p = profile(&[
            r#"{"l":[{"a":1,"a":2},{"a":3},{"a":4,"b":0,"a":4}],"o":{"k":"p","k":"q"}}"#,
        ]);
        assert_eq!(at(&p, "l[].a"), (3, 0, vec![(json!(2), 1), (json!(3), 1), (json!(4), 1)]));
        assert_eq!(at(&p, "o.k"), (1, 0, vec![(json!("q"), 1)]));
        // Keys that repeat across objects, not within one, are all counted.
        let p = profile(&[r#"{"x":{"a":1},"y":{"a":1}}"#]);
        assert_eq!(at(&p, "x.a"), (1, 0, vec![(json!(1), 1)]));
        assert_eq!(at(&p, "y.a"), (1, 0, vec![(json!(1), 1)]));
    }

    #[test]
    fn a_shadowed_object_leaves_no_properties() {
        let p = profile(&[r#"{"o":{"gone":1},"o":{"kept":2}}"#]);
        assert!(p.property(&PropertyPath::root().child("o").child("gone")).is_none());
        assert_eq!(at(&p, "o.kept"), (1, 0, vec![(json!(2), 1)]));
    }

    #[test]
    fn keys_equal_once_decoded_are_one_key() {
        // An escape in a key sends the line through serde_json: the repeat is still found.
        let p = profile(&[r#"{"a":"x","\u0061":"y"}"#]);
        assert_eq!(at(&p, "a"), (1, 0, vec![(json!("y"), 1)]));
    }

    #[test]
    fn many_keys_find_repeats_through_a_set() {
        let members: Vec<String> = (0..40).map(|i| format!("\"k{}\":{i}", i % 25)).collect();
        let line = format!("{{{}}}", members.join(","));
        // Both the tape (under serde's check) and serde_json alone: force the serde path with
        // an escaped key as well.
        let escaped = line.replacen("\"k0\"", "\"\\u006b0\"", 1);
        for text in [&line, &escaped] {
            let p = profile(&[text]);
            for k in 0..25 {
                let last = if k < 15 { k + 25 } else { k };
                assert_eq!(at(&p, &format!("k{k}")), (1, 0, vec![(json!(last), 1)]), "{text}");
            }
        }
    }

    #[test]
    fn the_last_id_is_the_items_id() {
        let mut builder = ProfileBuilder::new().capture_ids();
        let text = r#"{"id":"first","v":1,"id":"second"}"#;
        let id = builder.add_json(text).expect("valid").expect("an id");
        assert_eq!(id.resolve(text), "second");
        let mut builder = ProfileBuilder::new().capture_ids();
        let id = builder.add_json_by_serde(text).expect("valid").expect("an id");
        assert_eq!(id.resolve(text), "second");
    }
}
