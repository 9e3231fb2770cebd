//! A collection whose items are made on first read counts them before, makes them once, and
//! reads as the same collection built eagerly.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use schemascope_core::{
    Collection, CollectionKind, CollectionProfile, ItemEntry, ItemsOnUse, OwnedItem,
    ProfileBuilder, ProfileOnUse, SharedText,
};
use serde_json::json;

/// Makes the items of `eager` again, counting how often it is asked to.
#[derive(Debug)]
struct Copy {
    eager: Arc<Collection>,
    made: Arc<AtomicUsize>,
}

impl ItemsOnUse for Copy {
    fn make(self: Box<Self>) -> (SharedText, Vec<ItemEntry>) {
        self.made.fetch_add(1, Ordering::SeqCst);
        let mut text = String::new();
        let mut entries = Vec::new();
        for item in self.eager.items() {
            let start = text.len();
            text.push_str(item.json);
            entries.push(ItemEntry::new(item.id.to_string().into(), start..text.len()));
        }
        (Arc::new(text.into()), entries)
    }
}

/// The profile of the items, however they were made.
#[derive(Debug)]
struct Profiled;

impl ProfileOnUse for Profiled {
    fn compute(&self, collection: &Collection) -> CollectionProfile {
        let mut builder = ProfileBuilder::new();
        for item in collection.items() {
            builder.add_json(item.json).unwrap();
        }
        builder.finish(collection.len() as u64)
    }
}

#[test]
fn items_made_on_use_are_counted_before_and_made_once() {
    let values = [json!({"x": 1}), json!({"x": 2.5, "y": "b"}), json!({})];
    let eager = Arc::new(Collection::from_values(
        "docs",
        CollectionKind::Documents,
        values.iter().enumerate().map(|(i, v)| OwnedItem::new(format!("d{i}"), v.clone())),
    ));
    let made = Arc::new(AtomicUsize::new(0));
    let lazy = Collection::with_items_on_use(
        "docs",
        CollectionKind::Documents,
        eager.len(),
        Box::new(Copy { eager: eager.clone(), made: made.clone() }),
        Box::new(Profiled),
    );
    assert_eq!((lazy.len(), lazy.item_count()), (3, 3));
    assert_eq!(made.load(Ordering::SeqCst), 0, "counting makes nothing");
    let read: Vec<(String, String)> =
        lazy.items().map(|i| (i.id.to_string(), i.json.to_string())).collect();
    let expected: Vec<(String, String)> =
        eager.items().map(|i| (i.id.to_string(), i.json.to_string())).collect();
    assert_eq!(read, expected);
    assert_eq!(lazy.item(1).unwrap().value().unwrap(), values[1]);
    assert!(lazy.item(3).is_none());
    assert_eq!(lazy.profile().item_count, 3);
    assert_eq!(made.load(Ordering::SeqCst), 1, "made once, on first read");
}
