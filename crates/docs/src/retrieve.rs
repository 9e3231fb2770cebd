//! The retrieval index of one source and the hybrid strategy: BM25 over the doc chunks, the
//! top-K kept above a relevance threshold, FK neighbours added beside them, and the full schema
//! whenever retrieval would not help (small schema, retrieval off, no signal in the question,
//! no or weak matches, or a focused context no smaller than the full one).

use std::borrow::Cow;
use std::cell::RefCell;
use std::sync::Arc;

use foldhash::HashSet;
use schemascope_core::Catalog;
use schemascope_core::cancel::Cancelled;
use schemascope_core::value_index::{ValueIndex, ValueMatch};
use serde::Serialize;

use crate::bm25::{Bm25Index, Hit, Scratch};
use crate::chunk::{Chunk, add_semantic_chunks, table_chunks};
use crate::config::RetrievalConfig;
use crate::context::{TableBlock, count_full_schema, semantic_block};
use crate::dense::{Dense, Encoder, Vectors};
use crate::examples::{
    Example, ExampleIndex, MAX_EXAMPLES_SHOWN, STRONG_SIMILARITY, ScoredExample,
};
use crate::inline::InlineDoc;
use crate::notes::ColumnNotes;
use crate::parse::{DatabaseDoc, DocOrigin, DocWarning, ParsedDocs};
use crate::semantic::Semantic;
use crate::table_numbers::TableNumbers;
use schemascope_core::terms::{compound_parts, is_content_term, question_weight, tokenize};

/// Candidates ranked before per-table diversity is applied: enough that the top-K survives the
/// cap on chunks per table, few enough to keep a query far below a millisecond.
const CANDIDATES_PER_SLOT: usize = 8;
/// Share of a table's best-scoring foreign-key neighbour among the hits added to its score when
/// ranking (see `SchemaIndex::favour_connected`).
const FK_COHERENCE: f64 = 0.15;
/// Most chunks one retrieval returns, whatever `top_k` asks.
pub const MAX_TOP_K: usize = 50;
/// Most question terms retrieval looks at.
pub(crate) const MAX_QUESTION_TERMS: usize = 256;
/// Most stored values a context names.
pub const MAX_VALUES_SHOWN: usize = 8;

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
    /// The question has too few content terms to retrieve on (phrasing such as "top" or "how
    /// many" and generic nouns such as "data" or "table" do not count).
    QuestionTooShort {
        /// Content terms found.
        terms: usize,
        /// The configured minimum.
        min: usize,
    },
    /// No chunk matched any term of the question.
    NoMatches,
    /// The retrieved chunks answer too small or too unspecific a share of the question (see
    /// [`SchemaIndex::retrieve`]).
    WeakMatches {
        /// The retrieval's confidence, 0–1.
        confidence: f64,
        /// The configured minimum.
        min: f64,
    },
    /// The focused context would not save enough over the full schema: it would leave tables
    /// out for little or no gain.
    NotSmaller {
        /// Tokens of the focused context (no budget).
        focused_tokens: usize,
        /// Tokens of the full schema.
        full_tokens: usize,
        /// The configured largest share of the full schema a focused context may take.
        max_share: f64,
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
    /// The score over the question's weight (Σ weight·IDF of its known terms), at most 1: about
    /// the share of the question this chunk matches, comparable across questions.
    pub relevance: f64,
    /// With an embedding model: the cosine of the chunk's vector with the question's (what
    /// ranked it beside its words).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub similarity: Option<f64>,
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
    /// For the full schema under a budget it does not fit: the tables the question's terms
    /// point at, best first, then their FK neighbours. The budget keeps these first and leaves
    /// out the others (empty otherwise: the catalog's order).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub priority: Vec<&'a str>,
    /// Mean relevance of the kept chunks (0 when none).
    pub avg_relevance: f64,
    /// How surely the kept chunks point at the tables the question needs, 0–1 (see
    /// [`SchemaIndex::retrieve`]); 0 when retrieval did not run.
    pub confidence: f64,
    /// Stored values the question names (from the value index, whatever the strategy).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub values: Vec<ValueMatch>,
    /// The verified examples most like the question, best first (whatever the strategy).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub examples: Vec<ScoredExample<'a>>,
}

impl Retrieval<'_> {
    /// The per-call metadata the seed asks for (timing is the caller's to add).
    pub fn metadata(&self, index: &SchemaIndex) -> RetrievalMetadata {
        let tables_included = match self.strategy {
            Strategy::Full(_) => index.catalog.tables.iter().map(|t| t.name.clone()).collect(),
            Strategy::Focused => {
                self.tables.iter().chain(&self.expanded_tables).map(|t| t.to_string()).collect()
            }
        };
        // Shown figures carry no float noise (15 significant digits, as every computed statistic).
        let strategy = match self.strategy {
            Strategy::Full(FullReason::WeakMatches { confidence, min }) => {
                Strategy::Full(FullReason::WeakMatches {
                    confidence: schemascope_core::figure::stat(confidence),
                    min,
                })
            }
            other => other,
        };
        RetrievalMetadata {
            strategy,
            chunks_retrieved: self.chunks.len(),
            tables_included,
            avg_relevance: schemascope_core::figure::stat(self.avg_relevance),
            confidence: schemascope_core::figure::stat(self.confidence),
            min_confidence: index.config.min_confidence,
            semantic: index.is_semantic(),
        }
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
    /// The retrieval's confidence (0 when retrieval did not run), compared with `minConfidence`
    /// to choose between focused and full.
    pub confidence: f64,
    /// The configured minimum confidence for a focused context.
    pub min_confidence: f64,
    /// True when chunks were ranked by meaning (an embedding model) as well as by words.
    pub semantic: bool,
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
    /// The chunks' tables, numbered for ranking.
    tables: TableNumbers,
    pub(crate) bm25: Bm25Index,
    pub(crate) config: RetrievalConfig,
    pub(crate) blocks: Vec<TableBlock>,
    pub(crate) full_tokens: usize,
    /// The semantic file's terms, metrics and relationships as one block, when it has any.
    pub(crate) terms: Option<String>,
    /// What the semantic file says that the catalog confirms.
    semantic: Option<Semantic>,
    /// The stored text values, when the source's were read.
    pub(crate) values: Option<Arc<ValueIndex>>,
    /// The verified examples.
    pub(crate) examples: ExampleIndex,
    /// The embedding model and the vectors of the chunks and examples, when semantic matching
    /// is on.
    dense: Option<Dense>,
    /// What the docs a person wrote (markdown, dbt) say each column is.
    column_descriptions: ColumnNotes,
}

impl SchemaIndex {
    /// Chunks the docs (every catalog table gets chunks, documented or not), indexes them, and
    /// formats each table's structure once for later contexts. Returns warnings about docs for
    /// tables the catalog lacks. The docs' verified examples are all taken as given: the caller
    /// keeps only those that still validate on the database.
    pub fn build(
        catalog: Catalog,
        docs: ParsedDocs,
        notes: &ColumnNotes,
        config: RetrievalConfig,
    ) -> (Self, Vec<DocWarning>) {
        let mut docs = docs;
        // dbt's docs, for the tables the markdown leaves undocumented, and its joins.
        let (dbt_tables, mut warnings) = docs.dbt.tables_for(&catalog, &docs.tables);
        // An unedited generated file gives way to what dbt says of its table.
        docs.tables.retain(|t| {
            t.origin != DocOrigin::Generated
                || !dbt_tables.iter().any(|d| d.table.eq_ignore_ascii_case(&t.table))
        });
        docs.tables.extend(dbt_tables);
        let (dbt_joins, problems) = docs.dbt.relationships_for(&catalog);
        warnings.extend(problems);
        let (mut chunks, more) = table_chunks(&catalog, &docs, notes);
        warnings.extend(more);
        let mut semantic = docs.semantic.as_ref().map(|file| {
            let (semantic, problems) = file.resolve(&catalog);
            warnings.extend(problems);
            semantic
        });
        if let Some(first) = docs.dbt.relationships.first().filter(|_| !dbt_joins.is_empty()) {
            let semantic = semantic.get_or_insert_with(|| Semantic {
                file: first.file.clone(),
                ..Semantic::default()
            });
            for join in dbt_joins {
                if !semantic.relationships.contains(&join) {
                    semantic.relationships.push(join);
                }
            }
        }
        if let Some(semantic) = &semantic {
            add_semantic_chunks(&catalog, semantic, &mut chunks);
        }
        let terms = chunk_terms(&chunks);
        let bm25 = Bm25Index::build(&terms, config.bm25());
        let tables = TableNumbers::new(&catalog, &chunks);
        let blocks: Vec<TableBlock> = catalog
            .tables
            .iter()
            .map(|t| {
                let doc = docs.table(&t.name).and_then(|d| InlineDoc::of(&catalog, t, d, notes));
                TableBlock::new(t, doc.as_ref(), notes)
            })
            .collect();
        let overview = docs
            .database
            .as_ref()
            .filter(|db| db.origin != DocOrigin::Generated && !db.text.is_empty())
            .map(|db| db.text.split("\n\n").next().unwrap_or_default());
        let terms = semantic.as_ref().map(semantic_block).filter(|text: &String| !text.is_empty());
        let full_tokens = count_full_schema(&blocks, overview, terms.as_deref());
        let column_descriptions = column_descriptions(&docs);
        let examples = ExampleIndex::build(docs.examples, &catalog);
        (
            Self {
                catalog,
                database: docs.database,
                chunks,
                tables,
                bm25,
                config,
                blocks,
                full_tokens,
                terms,
                semantic,
                values: None,
                examples,
                dense: None,
                column_descriptions,
            },
            warnings,
        )
    }

    /// `catalog` with each column the docs describe and the database does not (no comment)
    /// described by the docs: what the validator reads to match a wrong name by meaning.
    pub fn described<'c>(&self, catalog: &'c Catalog) -> Cow<'c, Catalog> {
        let undocumented = |table: &str, column: &schemascope_core::ColumnInfo| {
            column.comment.is_none() && self.column_descriptions.get(table, &column.name).is_some()
        };
        if self.column_descriptions.is_empty()
            || !catalog.tables.iter().any(|t| t.columns.iter().any(|c| undocumented(&t.name, c)))
        {
            return Cow::Borrowed(catalog);
        }
        let mut described = catalog.clone();
        for table in &mut described.tables {
            for column in &mut table.columns {
                if column.comment.is_none() {
                    column.comment =
                        self.column_descriptions.get(&table.name, &column.name).map(String::from);
                }
            }
        }
        Cow::Owned(described)
    }

    /// The same index that also finds the stored values a question names.
    pub fn with_values(mut self, values: Arc<ValueIndex>) -> Self {
        self.values = Some(values);
        // Vectors of other values would name the wrong ones: none until encoded again.
        if let Some(dense) = &mut self.dense {
            dense.values = Vectors::default();
        }
        self
    }

    /// The same index that also ranks by meaning (seed 002, phase 2): every chunk's text and
    /// every example's question encoded by `encoder` (on all cores), and each question's vector
    /// compared with them by cosine, fused with BM25 (see [`SchemaIndex::retrieve`]). Stops
    /// when the current call is cancelled.
    pub fn with_encoder(mut self, encoder: Arc<dyn Encoder>) -> Result<Self, Cancelled> {
        let mut texts = self.encoded_texts();
        let mut questions = texts.split_off(self.chunks.len());
        let values = questions.split_off(self.examples.examples().len());
        let chunks = Vectors::encode(encoder.as_ref(), &texts)?;
        let examples = Vectors::encode(encoder.as_ref(), &questions)?;
        let values = Vectors::encode(encoder.as_ref(), &values)?;
        self.dense = Some(Dense::new(encoder, chunks, examples, values));
        Ok(self)
    }

    /// The texts [`SchemaIndex::with_encoder`] gives the model, as it gives them: each chunk's
    /// (its table's and column's names beside its text), then each verified example's question,
    /// then the stored values matched by meaning
    /// ([`crate::value_meaning::meaning_entries`]), as stored.
    pub fn encoded_texts(&self) -> Vec<String> {
        let values = self.values.iter().flat_map(|values| {
            crate::value_meaning::meaning_entries(values, &self.catalog)
                .into_iter()
                .map(|(_, _, value)| value.to_string())
        });
        self.chunks
            .iter()
            .map(|c| crate::dense::chunk_text(c, &self.catalog))
            .chain(self.examples.examples().iter().map(|e| crate::dense::natural(&e.question)))
            .chain(values)
            .collect()
    }

    /// True when the index ranks by meaning as well as by words.
    pub fn is_semantic(&self) -> bool {
        self.dense.is_some()
    }

    /// The value index, when there is one.
    pub fn values(&self) -> Option<&Arc<ValueIndex>> {
        self.values.as_ref()
    }

    /// The catalog.
    pub fn catalog(&self) -> &Catalog {
        &self.catalog
    }

    /// All chunks, in index order.
    pub fn chunks(&self) -> &[Chunk] {
        &self.chunks
    }

    /// The BM25 terms of every chunk, in index order, as the index was built from them (each
    /// chunk's [`Chunk::index_terms`] and the parts of its joined identifiers): what another
    /// engine must index to be compared with this one.
    pub fn index_terms(&self) -> Vec<Vec<String>> {
        chunk_terms(&self.chunks)
    }

    /// The configuration in force.
    pub fn config(&self) -> &RetrievalConfig {
        &self.config
    }

    /// The business terms, metrics and relationships of the semantic file that the catalog
    /// confirms, when there is one.
    pub fn semantic(&self) -> Option<&Semantic> {
        self.semantic.as_ref()
    }

    /// The verified examples in use.
    pub fn examples(&self) -> &[Example] {
        self.examples.examples()
    }

    /// The database overview from `_index.md`.
    pub fn database(&self) -> Option<&DatabaseDoc> {
        self.database.as_ref()
    }

    /// The best `top_k` chunks for `question` (per-table cap and relevance threshold applied),
    /// without the hybrid decisions: what `search_schema_docs` shows.
    pub fn search(&self, question: &str, top_k: usize) -> Vec<ScoredChunk<'_>> {
        self.rank(question, &tokenize(question), top_k).0
    }

    /// Retrieval with the hybrid strategy; `top_k` overrides the configured value.
    ///
    /// Both measures are absolute, so that one threshold means the same for every question:
    ///
    /// - **Relevance** of a chunk is its score over the question's weight `W = Σ weight·IDF` of
    ///   the question's terms the corpus knows (capped at 1): about the share of the question it
    ///   matches. Chunks below `relevance_threshold` are dropped, even the best one.
    /// - **Confidence** is `Σ weight·IDF` of the known question terms that some kept chunk
    ///   contains, over `Σ weight·max IDF` of all known question terms: the share of the
    ///   question the focused context covers, each term counted by how specific it is in this
    ///   corpus (a term in one chunk counts fully; `name`, in half the chunks, hardly at all).
    ///   Below `min_confidence` the full schema is shown.
    ///
    /// Terms the corpus does not know (often values: "Aruba", "English") count in neither, since
    /// no context, full or focused, can show them. Phrasing ("top", "how many", "average") and
    /// generic nouns ("data", "table") weigh a quarter, and a question with no other term gets the
    /// full schema. Last, a focused context larger than `max_focused_share` of the full schema
    /// gets the full schema too: leaving tables out must buy a real saving.
    pub fn retrieve(&self, question: &str, top_k: Option<usize>) -> Retrieval<'_> {
        self.retrieve_within(question, top_k, None)
    }

    /// [`SchemaIndex::retrieve`] for a context of at most `max_tokens`: when the full schema does
    /// not fit the budget, a focused context is kept even if it is not smaller than the full
    /// schema, since fitting it drops its lowest-value blocks first while fitting the full schema
    /// would drop tables regardless of the question.
    pub fn retrieve_within(
        &self,
        question: &str,
        top_k: Option<usize>,
        max_tokens: Option<usize>,
    ) -> Retrieval<'_> {
        let mut retrieval = self.decide(question, top_k, max_tokens);
        if retrieval.strategy != Strategy::Focused {
            // A focused retrieval has its values and examples already: they were part of its
            // size.
            self.add_question_matches(&mut retrieval, question);
        }
        if matches!(retrieval.strategy, Strategy::Full(_))
            && max_tokens.is_some_and(|budget| self.full_tokens > budget)
        {
            // Whatever made the full schema the choice, a budget that cannot hold it must leave
            // tables out: better those the question does not point at than the catalog's last.
            let (chunks, _) =
                self.rank(question, &tokenize(question), top_k.unwrap_or(self.config.top_k));
            let pointed = self.focused(chunks, 0.0);
            retrieval.priority =
                pointed.tables.into_iter().chain(pointed.expanded_tables).collect();
        }
        retrieval
    }

    /// The values the question names and the verified examples most like it, and — for a
    /// focused context — their tables: one whose whole value the question spells out, or that
    /// a close example queries, is retrieved; the others are shown beside.
    fn add_question_matches<'a>(&'a self, retrieval: &mut Retrieval<'a>, question: &str) {
        if let Some(values) = &self.values {
            retrieval.values = values.matches(question, MAX_VALUES_SHOWN);
            // Then what the question names by meaning, in the room left.
            if let Some(dense) = &self.dense {
                let room = MAX_VALUES_SHOWN.saturating_sub(retrieval.values.len());
                let meant = crate::value_meaning::meant_values(
                    dense,
                    values,
                    &self.catalog,
                    question,
                    &retrieval.values,
                    room,
                );
                retrieval.values.extend(meant);
            }
        }
        let cosines = self.dense.as_ref().filter(|d| !d.examples.is_empty()).map(|dense| {
            let vector = dense.question(question);
            dense.examples.similarities(&vector)
        });
        retrieval.examples =
            self.examples.similar(question, cosines.as_deref(), MAX_EXAMPLES_SHOWN);
        if retrieval.strategy != Strategy::Focused {
            return;
        }
        let found = retrieval
            .values
            .iter()
            .map(|v| (v.table.as_str(), v.whole))
            .chain(retrieval.examples.iter().flat_map(|e| {
                e.tables.iter().map(|t| (t.as_str(), e.similarity >= STRONG_SIMILARITY))
            }))
            .collect::<Vec<_>>();
        for (table, own) in found {
            let Some(table) = self.catalog.table(table) else { continue };
            let name = table.name.as_str();
            if retrieval.tables.contains(&name) || retrieval.expanded_tables.contains(&name) {
                continue;
            }
            if own {
                retrieval.tables.push(name);
            } else {
                retrieval.expanded_tables.push(name);
            }
        }
    }

    /// [`SchemaIndex::retrieve_within`] without the budget's table order.
    fn decide(
        &self,
        question: &str,
        top_k: Option<usize>,
        max_tokens: Option<usize>,
    ) -> Retrieval<'_> {
        let config = &self.config;
        let full = |reason| Retrieval {
            strategy: Strategy::Full(reason),
            chunks: Vec::new(),
            tables: Vec::new(),
            expanded_tables: Vec::new(),
            priority: Vec::new(),
            avg_relevance: 0.0,
            confidence: 0.0,
            values: Vec::new(),
            examples: Vec::new(),
        };
        if !config.enabled {
            return full(FullReason::Disabled);
        }
        let tables = self.catalog.tables.len();
        if tables < config.table_threshold {
            return full(FullReason::SmallSchema { tables, threshold: config.table_threshold });
        }
        let mut terms = tokenize(question);
        terms.truncate(MAX_QUESTION_TERMS);
        let content = count_content_terms(&terms);
        if content < config.min_question_terms.max(1) {
            return full(FullReason::QuestionTooShort {
                terms: content,
                min: config.min_question_terms.max(1),
            });
        }
        let (chunks, confidence) = self.rank(question, &terms, top_k.unwrap_or(config.top_k));
        if chunks.is_empty() {
            return full(FullReason::NoMatches);
        }
        if confidence < config.min_confidence {
            let mut weak = full(FullReason::WeakMatches { confidence, min: config.min_confidence });
            weak.confidence = confidence;
            return weak;
        }
        let mut focused = self.focused(chunks, confidence);
        // The values the question names and the examples like it come with either context (and
        // may add tables to the focused one): both sizes count them.
        self.add_question_matches(&mut focused, question);
        let max_share = config.max_focused_share;
        let threshold = |values: usize| (max_share * (self.full_tokens + values) as f64) as usize;
        let (focused_tokens, values_tokens) = self.focused_tokens(&focused, threshold);
        let full_tokens = self.full_tokens + values_tokens;
        let full_fits = max_tokens.is_none_or(|budget| self.full_tokens <= budget);
        if full_fits && focused_tokens as f64 >= max_share * full_tokens as f64 {
            let mut larger =
                full(FullReason::NotSmaller { focused_tokens, full_tokens, max_share });
            larger.confidence = confidence;
            return larger;
        }
        focused
    }

    fn focused<'a>(&'a self, chunks: Vec<ScoredChunk<'a>>, confidence: f64) -> Retrieval<'a> {
        let mut tables: Vec<&str> = Vec::new();
        for c in &chunks {
            let name = self
                .catalog
                .table(&c.chunk.table)
                .map_or(c.chunk.table.as_str(), |t| t.name.as_str());
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
        Retrieval {
            strategy: Strategy::Focused,
            chunks,
            tables,
            expanded_tables: expanded,
            priority: Vec::new(),
            avg_relevance,
            confidence,
            values: Vec::new(),
            examples: Vec::new(),
        }
    }

    /// The top-`k` chunks (at most `max_chunks_per_table` per table, relevance ≥ threshold) and
    /// the confidence they give (see [`SchemaIndex::retrieve`]).
    fn rank(&self, question: &str, terms: &[String], k: usize) -> (Vec<ScoredChunk<'_>>, f64) {
        // Whatever a caller asks, a context holds few chunks: a huge `k` must not size buffers.
        let k = k.min(MAX_TOP_K);
        if k == 0 {
            return (Vec::new(), 0.0);
        }
        // A pasted document as a question: its first terms say what it is about, and every
        // loop below stays short.
        let terms = &terms[..terms.len().min(MAX_QUESTION_TERMS)];
        SCRATCH.with(|cell| {
            let mut guard = cell.borrow_mut();
            let (scratch, hits) = &mut *guard;
            let mut weighted: Vec<(&str, f64)> = Vec::with_capacity(terms.len());
            for t in terms {
                weighted.push((t.as_str(), question_weight(t)));
            }
            let weight = self.bm25.query_weight(&weighted);
            if weight <= 0.0 && self.dense.is_none() {
                return (Vec::new(), 0.0);
            }
            // Relevance stays "the share of the question matched" when no term is known: the
            // semantic bonus alone, on the same scale.
            let weight = if weight > 0.0 { weight } else { 1.0 };
            let semantic = self.semantic_match(question, weight);
            match &semantic {
                Some(semantic) => self.bm25.top_k_weighted_plus(
                    &weighted,
                    &semantic.bonus,
                    k * CANDIDATES_PER_SLOT,
                    scratch,
                    hits,
                ),
                None => self.bm25.top_k_weighted(&weighted, k * CANDIDATES_PER_SLOT, scratch, hits),
            }
            self.favour_connected(hits);
            let cap = self.config.max_chunks_per_table.max(1);
            let mut per_table: Vec<(&str, usize)> = Vec::new();
            let mut out = Vec::with_capacity(k);
            let mut kept_docs: Vec<u32> = Vec::with_capacity(k);
            for hit in hits.iter() {
                if out.len() == k {
                    break;
                }
                // Relevance stays the share of the question's words matched; the cosine is said
                // beside it. A chunk is kept when either clears its threshold.
                let doc = hit.doc as usize;
                let (relevance, similarity) = match &semantic {
                    None => ((hit.score / weight).min(1.0), None),
                    Some(semantic) => {
                        let words = (hit.score - semantic.bonus[doc]).max(0.0) / weight;
                        (words.min(1.0), Some(semantic.cosine[doc]))
                    }
                };
                if relevance < self.config.relevance_threshold {
                    match similarity {
                        // Words alone rank by relevance: nothing after this is kept either.
                        None => break,
                        Some(cosine) if cosine < self.config.semantic_floor => continue,
                        Some(_) => {}
                    }
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
                kept_docs.push(hit.doc);
                out.push(ScoredChunk { chunk, score: hit.score, relevance, similarity });
            }
            let mut confidence = self.coverage(&weighted, &kept_docs);
            if semantic.is_some() {
                // The closest kept chunk's cosine, rescaled from the floor to 1, is a confidence
                // of its own: a question that means something here.
                let floor = self.config.semantic_floor;
                let best = out.iter().filter_map(|c| c.similarity).fold(floor, f64::max);
                confidence = confidence.max((best - floor) / (1.0 - floor));
            }
            (out, confidence)
        })
    }

    /// With an embedding model: each chunk's semantic match (see [`SemanticMatch`]) for a
    /// question weighing `weight`.
    fn semantic_match(&self, question: &str, weight: f64) -> Option<SemanticMatch> {
        let dense = self.dense.as_ref()?;
        let scale = self.config.semantic_weight * weight;
        let vector = dense.question(question);
        let cosine: Vec<f64> =
            dense.chunks.similarities(&vector).into_iter().map(f64::from).collect();
        let bonus = cosine.iter().map(|c| scale * c.max(0.0)).collect();
        Some(SemanticMatch { bonus, cosine })
    }

    /// Reorders `hits` so that a table whose foreign-key neighbours are also hits comes before
    /// an equally scored table that stands alone: the tables one question needs are joined,
    /// while a lone match of a common word (`full_name` of another schema) is not. Each hit's
    /// table is credited [`FK_COHERENCE`] times its best-scoring neighbour among the hits.
    pub(crate) fn favour_connected(&self, hits: &mut [Hit]) {
        if hits.len() < 2 {
            return;
        }
        let tables = &self.tables;
        let mut best: Vec<(u32, f64)> = Vec::new();
        for hit in hits.iter() {
            let table = tables.of(hit.doc);
            match best.iter_mut().find(|(t, _)| *t == table) {
                Some((_, score)) => *score = score.max(hit.score),
                None => best.push((table, hit.score)),
            }
        }
        let boost: Vec<(u32, f64)> = best
            .iter()
            .map(|(table, _)| {
                let neighbours = tables.neighbours(*table);
                let strongest = best
                    .iter()
                    .filter(|(other, _)| neighbours.contains(other))
                    .map(|(_, score)| *score)
                    .fold(0.0, f64::max);
                (*table, FK_COHERENCE * strongest)
            })
            .collect();
        // Each hit's boosted score computed once, not in every comparison.
        let mut keyed: Vec<(f64, Hit)> = hits
            .iter()
            .map(|hit| {
                let table = tables.of(hit.doc);
                let extra = boost.iter().find(|(t, _)| *t == table).map_or(0.0, |(_, b)| *b);
                (hit.score + extra, *hit)
            })
            .collect();
        keyed.sort_by(|a, b| b.0.total_cmp(&a.0).then(a.1.doc.cmp(&b.1.doc)));
        for (slot, (_, hit)) in hits.iter_mut().zip(keyed) {
            *slot = hit;
        }
    }

    /// Σ weight·IDF of the known terms some document of `docs` contains, over Σ weight·max IDF
    /// of all known terms (each distinct term once).
    fn coverage(&self, weighted: &[(&str, f64)], docs: &[u32]) -> f64 {
        let max_idf = self.bm25.max_idf();
        let (mut covered, mut attainable) = (0.0, 0.0);
        let mut seen: Vec<&str> = Vec::with_capacity(weighted.len());
        for &(term, weight) in weighted {
            if seen.contains(&term) {
                continue;
            }
            seen.push(term);
            let Some(idf) = self.bm25.idf(term) else { continue };
            attainable += weight * max_idf;
            if docs.iter().any(|&d| self.bm25.contains(term, d)) {
                covered += weight * idf.max(0.0);
            }
        }
        if attainable > 0.0 { (covered / attainable).min(1.0) } else { 0.0 }
    }
}

/// How the chunks match a question by meaning.
struct SemanticMatch {
    /// Added to each chunk's BM25 score for ranking: `semantic_weight` × the question's weight ×
    /// the cosine (when positive).
    bonus: Vec<f64>,
    /// Each chunk's cosine with the question.
    cosine: Vec<f64>,
}

/// Question terms that say what to look for (see [`is_content_term`]), each counted once.
fn count_content_terms(terms: &[String]) -> usize {
    let mut seen: Vec<&str> = Vec::new();
    for t in terms.iter().filter(|t| is_content_term(t)) {
        if !seen.contains(&t.as_str()) {
            seen.push(t);
        }
    }
    seen.len()
}

/// The BM25 terms of `chunks`, compound parts included.
fn chunk_terms(chunks: &[Chunk]) -> Vec<Vec<String>> {
    let mut terms: Vec<Vec<String>> = chunks.iter().map(Chunk::index_terms).collect();
    split_compounds(&mut terms);
    terms
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

/// The column descriptions of the docs a person wrote or edited (a generated file says only
/// what the schema does).
fn column_descriptions(docs: &ParsedDocs) -> ColumnNotes {
    let mut descriptions = ColumnNotes::new();
    for table in docs.tables.iter().filter(|t| t.origin != DocOrigin::Generated) {
        for column in &table.columns {
            if let Some(text) = column.description.as_deref().filter(|d| !d.trim().is_empty()) {
                descriptions.insert(&table.table, &column.name, text.trim());
            }
        }
    }
    descriptions
}
