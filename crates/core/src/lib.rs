//! schemascope's pure core: the data model, exact property profiles, schema summaries, sampling,
//! JSON Schema inference and validation, and JMESPath selection. It does no I/O: sources hand it
//! items, surfaces render what it returns.

pub mod bin_memo;
pub mod catalog;
pub mod collection;
pub mod deferred;
pub mod edge_ends;
pub mod error;
pub mod path;
pub mod profile;
pub mod progress;

pub use catalog::{Catalog, ColumnInfo, ForeignKey, TableInfo, TableKind};
pub use collection::{
    Collection, CollectionKind, EdgeEnds, EdgeEndsColumn, EdgeEndsRef, ItemEntry, ItemExtra,
    ItemId, ItemRef, ItemsOnUse, OwnedItem, ProfileFailure, ProfileOnUse, ProfileState, SharedText,
};
pub use deferred::{DeferredProfile, ProfileProgress, ProgressSnapshot};
pub use error::CoreError;
pub use path::{PropertyPath, Segment};
pub use profile::{CollectionProfile, ProfileBuilder, PropertyProfile};
pub use text::{ExternalBytes, Text};
pub mod cancel;
pub mod capped;
pub mod ceilings;
pub mod deep_stack;
pub mod display;
pub mod figure;
pub mod json_schema;
pub mod markdown;
pub mod no_match;
pub mod parallel;
pub mod property;
pub mod sample;
pub mod schema_facts;
pub mod selector;
pub mod size_text;
pub mod suggest;
pub mod summary;
pub mod sync;
pub mod terms;
pub mod text;
pub mod tokens;
pub mod validate;
pub mod value_index;
