//! schemascope's pure core: the data model, exact property profiles, schema summaries, sampling,
//! JSON Schema inference and validation, and JMESPath selection. It does no I/O: sources hand it
//! items, surfaces render what it returns.

pub mod catalog;
pub mod collection;
pub mod error;
pub mod path;
pub mod profile;

pub use catalog::{Catalog, ColumnInfo, ForeignKey, TableInfo, TableKind};
pub use collection::{Collection, CollectionKind, EdgeEnds, ItemEntry, ItemExtra, ItemId, ItemRef, OwnedItem, ProfileFailure, SharedText};
pub use error::CoreError;
pub use path::{PropertyPath, Segment};
pub use profile::{CollectionProfile, ProfileBuilder, PropertyProfile};
pub use text::{ExternalBytes, Text};
pub mod cancel;
pub mod capped;
pub mod deep_stack;
pub mod display;
mod fast_selector;
pub mod figure;
pub mod json_schema;
pub mod markdown;
pub mod no_match;
pub mod property;
pub mod sample;
pub mod selector;
mod selector_bounds;
pub mod selector_columns;
mod selector_eval;
pub mod suggest;
pub mod summary;
pub mod text;
pub mod tokens;
pub mod validate;
