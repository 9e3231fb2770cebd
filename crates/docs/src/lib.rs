//! Schema documentation retrieval (RAG) for SQL sources: parse and chunk table docs, rank them
//! with BM25, add FK neighbours, and give an LLM the full or a focused schema within a token
//! budget; generate starting docs from the catalog and column profiles; evaluate on Spider.
//!
//! Pure: no files, network or clocks. Callers pass file contents as `(name, text)` pairs, get
//! warnings back, and measure time themselves.

pub mod bm25;
pub mod chunk;
pub mod config;
pub mod context;
pub mod eval;
pub mod fingerprint;
pub mod generate;
pub mod notes;
pub mod parse;
pub mod retrieve;
pub mod tokenize;

pub use bm25::{Bm25Index, Bm25Params, Hit, Scoring, Scratch};
pub use chunk::{Chunk, ChunkKind, ChunkSource, build_chunks};
pub use config::{ConfigError, RetrievalConfig};
pub use context::SchemaContext;
pub use fingerprint::input_fingerprint;
pub use generate::{GeneratedFile, TableData, generate_docs, is_unedited};
pub use notes::ColumnNotes;
pub use parse::{DatabaseDoc, DocWarning, ParsedDocs, TableDoc, parse_docs};
pub use retrieve::{FullReason, Retrieval, RetrievalMetadata, SchemaIndex, ScoredChunk, Strategy};

pub use schemascope_core::Catalog;
