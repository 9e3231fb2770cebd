//! Schema documentation retrieval (RAG) for SQL sources: parse and chunk table docs, rank them
//! with BM25, add FK neighbours, and give an LLM the full or a focused schema within a token
//! budget; generate starting docs from the catalog and column profiles; evaluate on Spider.
//!
//! Pure: no files, network or clocks. Callers pass file contents as `(name, text)` pairs, get
//! warnings back, and measure time themselves.
//!
//! ```
//! use schemascope_docs::{Catalog, ColumnNotes, FullReason, RetrievalConfig, SchemaIndex, Strategy, parse_docs};
//! use schemascope_docs::generate::{TableData, generate_docs};
//!
//! let catalog: Catalog = serde_json::from_str(r#"{"tables": [
//!   {"name": "Genre", "kind": "table", "primaryKey": ["GenreId"], "foreignKeys": [],
//!    "columns": [{"name": "GenreId", "declaredType": "INTEGER", "nullable": false},
//!                {"name": "Name", "declaredType": "TEXT", "nullable": true}]}]}"#).unwrap();
//! // Starting docs for people to enrich (the caller writes them unless edited: `is_unedited`).
//! let files = generate_docs(&catalog, "music", |_| TableData::default());
//! let pairs: Vec<(&str, &str)> = files.iter().map(|f| (f.name.as_str(), f.text.as_str())).collect();
//! let (docs, warnings) = parse_docs(&pairs);
//! assert!(warnings.is_empty());
//! let config = RetrievalConfig { table_threshold: 0, ..RetrievalConfig::default() }
//!     .from_env(|name| std::env::var(name).ok())
//!     .unwrap();
//! let (index, _) = SchemaIndex::build(catalog, docs, &ColumnNotes::new(), config);
//! let context = index.context("names of genres", Some(2_000));
//! // One table: focusing cannot make the context smaller, so the full schema is shown, and why.
//! assert!(matches!(context.metadata.strategy, Strategy::Full(FullReason::NotSmaller { .. })));
//! assert!(context.text.contains("## Genre"));
//! ```

#![forbid(unsafe_code)]
#![warn(missing_docs)]

pub mod bm25;
pub mod chunk;
pub mod config;
pub mod context;
pub mod dbt;
pub mod dense;
pub mod eval;
pub mod examples;
pub mod fingerprint;
pub mod generate;
mod inline;
pub mod notes;
pub mod parse;
pub mod retrieve;
pub mod semantic;
mod table_numbers;
mod toml_file;
pub mod value_meaning;
pub use schemascope_core::terms as tokenize;

pub use bm25::{Bm25Index, Bm25Params, Hit, Scoring, Scratch};
pub use chunk::{Chunk, ChunkKind, ChunkSource, build_chunks};
pub use config::{ConfigError, RetrievalConfig};
pub use context::SchemaContext;
pub use dense::Encoder;
pub use fingerprint::input_fingerprint;
pub use generate::{GeneratedFile, TableData, generate_docs, is_unedited};
pub use notes::ColumnNotes;
pub use parse::{DatabaseDoc, DocOrigin, DocWarning, ParsedDocs, TableDoc, parse_docs};
pub use retrieve::{
    FullReason, MAX_TOP_K, Retrieval, RetrievalMetadata, SchemaIndex, ScoredChunk, Strategy,
};

pub use schemascope_core::Catalog;
