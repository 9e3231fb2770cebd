//! The retrieval index of one source and the hybrid strategy: BM25 over the doc chunks, the
//! top-K kept above a relevance threshold, FK neighbours added beside them, and the full schema
//! whenever retrieval would not help (small schema, retrieval off, no signal in the question,
//! no or weak matches).

use std::cell::RefCell;

use foldhash::HashSet;
use schemascope_core::Catalog;
use serde::Serialize;

use crate::bm25::{Bm25Index, Hit, Scratch};
use crate::chunk::{Chunk, build_chunks};
use crate::config::RetrievalConfig;
use crate::context::{TableBlock, count_full_schema};
use crate::notes::ColumnNotes;
use crate::parse::{DatabaseDoc, DocWarning, ParsedDocs};
use crate::tokenize::{compound_parts, question_weight, tokenize};

/// Candidates ranked before per-table diversity is applied: enough that the top-K survives the
/// cap on chunks per table, few enough to keep a query far below a millisecond.
const CANDIDATES_PER_SLOT: usize = 8;

/// Why the full schema was chosen.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
#[serde(rename_all = "camelCase", tag = "reason")]
pub enum FullReason {
    /// Retrieval is switched off.
    Disabled,
    /// The schema is small enough to show whole.
    SmallSchema {
        /// Tables in the schema.
        tables: usize,
        /// The configured threshold.
        threshold: usize,
    },
    /// The question has too few content terms to retrieve on.
    QuestionTooShort {
        /// Content terms found.
        terms: usize,
        /// The configured minimum.
        min: usize,
    },
    /// No chunk matched any term of the question.
    NoMatches,
    /// The best chunk answers too small a share of the question.
    WeakMatches {
        /// The best chunk's score over the question's weight.
        confidence: f64,
        /// The configured minimum.
        min: f64,
    },
}

/// Which context a question gets.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
#[serde(rename_all = "camelCase", tag = "strategy")]
pub enum Strategy {
    /// Every table.
    Full(FullReason),
    /// The retrieved tables, their FK neighbours and the retrieved chunks.
    Focused,
}

/// A retrieved chunk with its scores.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct ScoredChunk<'a> {
    /// The chunk.
    pub chunk: &'a Chunk,
    /// Its raw BM25 score.
    pub score: f64,
    /// The score divided by the best score of this question (0–1].
    pub relevance: f64,
}

/// The outcome of retrieval for one question.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Retrieval<'a> {
    /// Full or focused, and why.
    pub strategy: Strategy,
    /// The kept chunks, best first (empty for the full schema).
    pub chunks: Vec<ScoredChunk<'a>>,
    /// Distinct tables of the kept chunks, in rank order.
    pub tables: Vec<&'a str>,
    /// Tables one FK hop from `tables` (either direction) that are not in `tables`; added beside
    /// them, never in their place.
    pub expanded_tables: Vec<&'a str>,
    /// Mean relevance of the kept chunks (0 when none).
    pub avg_relevance: f64,
    /// The best chunk's score over the question's weight (see [`SchemaIndex::retrieve`]).
    pub confidence: f64,
}

impl Retrieval<'_> {
    /// The per-call metadata the seed asks for (timing is the caller's to add).
    pub fn metadata(&self, index: &SchemaIndex) -> RetrievalMetadata {
        let tables_included = match self.strategy {
            Strategy::Full(_) => index.catalog.tables.iter().map(|t| t.name.clone()).collect(),
            Strategy::Focused => self.tables.iter().chain(&self.expanded_tables).map(|t| t.to_string()).collect(),
        };
        RetrievalMetadata { strategy: self.strategy, chunks_retrieved: self.chunks.len(), tables_included, avg_relevance: self.avg_relevance }
    }
}

/// What one retrieval did, for logs and tool output.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct RetrievalMetadata {
    /// Full (with the reason) or focused.
    #[serde(flatten)]
    pub strategy: Strategy,
    /// Chunks kept.
    pub chunks_retrieved: usize,
    /// Tables in the context: retrieved then FK-expanded, or all for the full schema.
    pub tables_included: Vec<String>,
    /// Mean relevance of the kept chunks.
    pub avg_relevance: f64,
}

thread_local! {
    static SCRATCH: RefCell<(Scratch, Vec<Hit>)> = RefCell::new((Scratch::new(), Vec::new()));
}

/// Everything retrieval needs for one source, built once and rebuilt when the docs or the schema
/// change (compare [`crate::input_fingerprint`] to know when).
#[derive(Debug, Clone)]
pub struct SchemaIndex {
    pub(crate) catalog: Catalog,
    pub(crate) database: Option<DatabaseDoc>,
    pub(crate) chunks: Vec<Chunk>,
    pub(crate) bm25: Bm25Index,
    pub(crate) config: RetrievalConfig,
    pub(crate) blocks: Vec<TableBlock>,
    pub(crate) full_tokens: usize,
}

impl SchemaIndex {
    /// Chunks the docs (every catalog table gets chunks, documented or not), indexes them, and
    /// formats each table's structure once for later contexts. Returns warnings about docs for
    /// tables the catalog lacks.
    pub fn build(catalog: Catalog, docs: ParsedDocs, notes: &ColumnNotes, config: RetrievalConfig) -> (Self, Vec<DocWarning>) {
        let (chunks, warnings) = build_chunks(&catalog, &docs, notes);
        let mut terms: Vec<Vec<String>> = chunks.iter().map(Chunk::index_terms).collect();
        split_compounds(&mut terms);
        let bm25 = Bm25Index::build(&terms, config.bm25());
        let blocks: Vec<TableBlock> = catalog.tables.iter().map(|t| TableBlock::new(t, notes)).collect();
        let full_tokens = count_full_schema(&blocks);
        (Self { catalog, database: docs.database, chunks, bm25, config, blocks, full_tokens }, warnings)
    }

    /// The catalog.
    pub fn catalog(&self) -> &Catalog {
        &self.catalog
    }

    /// All chunks, in index order.
    pub fn chunks(&self) -> &[Chunk] {
        &self.chunks
    }

    /// The configuration in force.
    pub fn config(&self) -> &RetrievalConfig {
        &self.config
    }

    /// The database overview from `_index.md`.
    pub fn database(&self) -> Option<&DatabaseDoc> {
        self.database.as_ref()
    }

    /// The best `top_k` chunks for `question` (per-table cap and relevance threshold applied),
    /// without the hybrid decisions: what `search_schema_docs` shows.
    pub fn search(&self, question: &str, top_k: usize) -> Vec<ScoredChunk<'_>> {
        self.rank(&tokenize(question), top_k).0
    }

    /// Retrieval with the hybrid strategy; `top_k` overrides the configured value.
    ///
    /// **Relevance** is a chunk's score divided by the best score for the question, so the
    /// threshold (0.3) keeps chunks at least 30% as good as the best one, whatever the
    /// question's length. On the pooled Spider evaluation this threshold cost no table recall
    /// (Recall@5 was the same at 0.0 and 0.3) while dropping stray chunks. An absolute bar —
    /// the score over the question's attainable score — was not chosen for relevance because
    /// questions are often mostly values the schema does not contain ("Aruba", "English"), so
    /// correct chunks rarely come near it. The absolute measure is used where it belongs, for the
    /// weak-retrieval fallback: **confidence** is the best score over the question's weight
    /// (Σ weight·IDF of its known terms), about the share of the question the best chunk covers.
    pub fn retrieve(&self, question: &str, top_k: Option<usize>) -> Retrieval<'_> {
        let config = &self.config;
        let full = |reason| Retrieval {
            strategy: Strategy::Full(reason),
            chunks: Vec::new(),
            tables: Vec::new(),
            expanded_tables: Vec::new(),
            avg_relevance: 0.0,
            confidence: 0.0,
        };
        if !config.enabled {
            return full(FullReason::Disabled);
        }
        let tables = self.catalog.tables.len();
        if tables < config.table_threshold {
            return full(FullReason::SmallSchema { tables, threshold: config.table_threshold });
        }
        let terms = tokenize(question);
        if terms.len() < config.min_question_terms || terms.is_empty() {
            return full(FullReason::QuestionTooShort { terms: terms.len(), min: config.min_question_terms });
        }
        let (chunks, confidence) = self.rank(&terms, top_k.unwrap_or(config.top_k));
        if chunks.is_empty() {
            return full(FullReason::NoMatches);
        }
        if confidence < config.min_confidence {
            let mut weak = full(FullReason::WeakMatches { confidence, min: config.min_confidence });
            weak.confidence = confidence;
            return weak;
        }
        self.focused(chunks, confidence)
    }

    fn focused<'a>(&'a self, chunks: Vec<ScoredChunk<'a>>, confidence: f64) -> Retrieval<'a> {
        let mut tables: Vec<&str> = Vec::new();
        for c in &chunks {
            let name = self.catalog.table(&c.chunk.table).map_or(c.chunk.table.as_str(), |t| t.name.as_str());
            if !tables.contains(&name) {
                tables.push(name);
            }
        }
        let mut expanded: Vec<&str> = Vec::new();
        for table in &tables {
            for neighbour in self.catalog.neighbours(table) {
                if !tables.contains(&neighbour) && !expanded.contains(&neighbour) {
                    expanded.push(neighbour);
                }
            }
        }
        let avg_relevance = chunks.iter().map(|c| c.relevance).sum::<f64>() / chunks.len() as f64;
        Retrieval { strategy: Strategy::Focused, chunks, tables, expanded_tables: expanded, avg_relevance, confidence }
    }

    /// The top-`k` chunks (at most `max_chunks_per_table` per table, relevance ≥ threshold) and
    /// the confidence of the best one.
    fn rank(&self, terms: &[String], k: usize) -> (Vec<ScoredChunk<'_>>, f64) {
        if k == 0 {
            return (Vec::new(), 0.0);
        }
        SCRATCH.with(|cell| {
            let mut guard = cell.borrow_mut();
            let (scratch, hits) = &mut *guard;
            let weighted: Vec<(&str, f64)> = terms.iter().map(|t| (t.as_str(), question_weight(t))).collect();
            self.bm25.top_k_weighted(&weighted, k * CANDIDATES_PER_SLOT, scratch, hits);
            let Some(best) = hits.first().map(|h| h.score) else {
                return (Vec::new(), 0.0);
            };
            let weight = self.bm25.query_weight(&weighted);
            let confidence = if weight > 0.0 { best / weight } else { 0.0 };
            let cap = self.config.max_chunks_per_table.max(1);
            let mut per_table: Vec<(&str, usize)> = Vec::new();
            let mut out = Vec::with_capacity(k);
            for hit in hits.iter() {
                if out.len() == k {
                    break;
                }
                let relevance = hit.score / best;
                if relevance < self.config.relevance_threshold {
                    break;
                }
                let chunk = &self.chunks[hit.doc as usize];
                let slot = match per_table.iter().position(|(t, _)| *t == chunk.table) {
                    Some(i) => i,
                    None => {
                        per_table.push((&chunk.table, 0));
                        per_table.len() - 1
                    }
                };
                if per_table[slot].1 >= cap {
                    continue;
                }
                per_table[slot].1 += 1;
                out.push(ScoredChunk { chunk, score: hit.score, relevance });
            }
            (out, confidence)
        })
    }
}

/// Adds the parts of joined identifiers (`countrylanguage` → `country`, `language`) to each
/// chunk's terms, where both parts are words the corpus uses elsewhere, so that a question about
/// "languages of a country" finds the table that spells them as one word.
fn split_compounds(terms: &mut [Vec<String>]) {
    let known: HashSet<String> = terms.iter().flatten().filter(|t| t.len() >= 3).cloned().collect();
    for doc in terms.iter_mut() {
        let mut extra = Vec::new();
        for term in doc.iter() {
            if let Some((a, b)) = compound_parts(term, |w| known.contains(w)) {
                extra.push(a.to_string());
                extra.push(b.to_string());
            }
        }
        doc.extend(extra);
    }
}
