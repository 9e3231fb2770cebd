//! The schema context an LLM gets for a question: the full schema, or the focused one (the
//! selected tables' structure plus "## Retrieved Documentation", as the seed's
//! formatFocusedSchema), fitted to a token budget by leaving out whole blocks, lowest priority
//! first, and saying what was left out.

use std::borrow::Cow;

use schemascope_core::{TableInfo, TableKind, tokens};
use serde::Serialize;

use crate::chunk::ChunkKind;
use crate::notes::ColumnNotes;
use crate::retrieve::{Retrieval, RetrievalMetadata, SchemaIndex, Strategy};

/// Names of left-out tables listed in the omission note before "and N more".
const OMITTED_NAMES_SHOWN: usize = 10;
/// Tokens kept free for the omission note when a budget applies.
const NOTE_RESERVE: usize = 60;

/// One table's structure, formatted once when the index is built.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct TableBlock {
    pub(crate) text: String,
    pub(crate) tokens: usize,
}

impl TableBlock {
    pub(crate) fn new(table: &TableInfo, notes: &ColumnNotes) -> Self {
        let text = format_table(table, notes);
        Self { tokens: tokens::count(&text), text }
    }
}

/// A formatted context and what it holds.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct SchemaContext {
    /// The markdown to give the model.
    pub text: String,
    /// o200k tokens of `text`.
    pub tokens: usize,
    /// Tokens of the whole schema without a budget, for comparison.
    pub full_schema_tokens: usize,
    /// Strategy, chunks, tables, relevance.
    pub metadata: RetrievalMetadata,
    /// Tables the budget left out.
    pub omitted_tables: Vec<String>,
    /// Retrieved chunks the budget left out.
    pub omitted_chunks: usize,
}

/// One block competing for the budget.
struct Block<'a> {
    section: Section,
    text: Cow<'a, str>,
    tokens: usize,
    /// For tables, the name (so the omission note can list it).
    table: Option<&'a str>,
    /// What the block is to the question, which decides what a budget drops.
    role: Role,
    /// For doc chunks, the table they document: they go when their table goes.
    documents: Option<&'a str>,
}

/// What a block is to the question. Blocks are offered to the budget in priority order; the
/// role adds the rules a greedy fit alone would break.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Role {
    /// A table of the full schema: any that fits is kept.
    Whole,
    /// A retrieved table: offered to the budget in rank order; one too big to fit does not
    /// stop a smaller, lower-ranked one (an unused budget helps nobody).
    Retrieved,
    /// An FK neighbour of the retrieved tables: kept only when every retrieved table was kept,
    /// so that a small neighbour never takes the place of a retrieved table.
    Neighbour,
    /// A retrieved doc chunk, an example chunk or the database overview.
    Doc,
}

/// Tokens of slack below which an estimated context is counted exactly against its budget
/// (block counts add up to within a few tokens of the real count).
const ESTIMATE_MARGIN: usize = 64;

/// Where a block is printed, in print order.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Section {
    Overview,
    Tables,
    Docs,
}

impl SchemaIndex {
    /// Tokens of the full schema (all tables, no budget), counted once when the index is built.
    pub fn full_schema_tokens(&self) -> usize {
        self.full_tokens
    }

    /// The context for `question`: hybrid retrieval (see [`SchemaIndex::retrieve`]) then the full
    /// or focused schema within `max_tokens`.
    pub fn context(&self, question: &str, max_tokens: Option<usize>) -> SchemaContext {
        let retrieval = self.retrieve_within(question, None, max_tokens);
        self.render(&retrieval, max_tokens)
    }

    /// Formats `retrieval` (full or focused) within `max_tokens`.
    pub fn render(&self, retrieval: &Retrieval<'_>, max_tokens: Option<usize>) -> SchemaContext {
        self.render_counted(retrieval, max_tokens, true)
    }

    /// [`SchemaIndex::render`], with `tokens` estimated from the blocks' counts (exact to within
    /// a few tokens) unless `exact` or the budget is close: counting the whole text is most of the
    /// cost of rendering, which a pipeline answering many questions need not pay.
    pub fn render_counted(&self, retrieval: &Retrieval<'_>, max_tokens: Option<usize>, exact: bool) -> SchemaContext {
        let metadata = retrieval.metadata(self);
        let (header, blocks) = match retrieval.strategy {
            Strategy::Full(_) => {
                let blocks = self
                    .catalog
                    .tables
                    .iter()
                    .zip(&self.blocks)
                    .map(|(t, b)| Block {
                        section: Section::Tables,
                        text: Cow::Borrowed(&b.text),
                        tokens: b.tokens,
                        table: Some(&t.name),
                        role: Role::Whole,
                        documents: None,
                    })
                    .collect();
                (full_header(self.catalog.tables.len()), blocks)
            }
            Strategy::Focused => self.focused_blocks(retrieval),
        };
        let (text, omitted_tables, omitted_chunks, tokens) = fit(&header, &blocks, max_tokens, exact);
        // The metadata names the tables the text shows, not those the budget left out.
        let mut metadata = metadata;
        metadata.tables_included.retain(|t| !omitted_tables.contains(t));
        SchemaContext { tokens, text, full_schema_tokens: self.full_schema_tokens(), metadata, omitted_tables, omitted_chunks }
    }

    /// Tokens of the focused context of `retrieval` without a budget (estimated from the
    /// blocks, counted exactly when the estimate is within [`ESTIMATE_MARGIN`] of the full
    /// schema's size), to decide whether focusing is worth it.
    pub(crate) fn focused_tokens(&self, retrieval: &Retrieval<'_>) -> usize {
        let (header, blocks) = self.focused_blocks(retrieval);
        let estimate = tokens::count(&header) + blocks.iter().map(|b| b.tokens).sum::<usize>();
        if estimate.abs_diff(self.full_tokens) > ESTIMATE_MARGIN {
            return estimate;
        }
        fit(&header, &blocks, None, true).3
    }

    /// Blocks of a focused context in priority order, which is the reverse of the order a
    /// budget drops them in: retrieved tables by rank, retrieved doc chunks other than
    /// examples, FK neighbours, example chunks, the database overview.
    fn focused_blocks<'a>(&'a self, retrieval: &Retrieval<'a>) -> (String, Vec<Block<'a>>) {
        let mut blocks = Vec::new();
        let table_block = |name: &'a str, role: Role| {
            let i = self.catalog.tables.iter().position(|t| t.name == name)?;
            let b = &self.blocks[i];
            Some(Block {
                section: Section::Tables,
                text: Cow::Borrowed(&b.text),
                tokens: b.tokens,
                table: Some(&self.catalog.tables[i].name),
                role,
                documents: None,
            })
        };
        blocks.extend(retrieval.tables.iter().filter_map(|t| table_block(t, Role::Retrieved)));
        let doc_block = |c: &crate::retrieve::ScoredChunk<'a>| {
            let chunk = c.chunk;
            let heading = match &chunk.column {
                Some(column) => format!("### {}.{column} ({})\n", chunk.table, chunk.kind.name()),
                None => format!("### {} ({})\n", chunk.table, chunk.kind.name()),
            };
            let tokens = chunk.tokens + tokens::count(&heading);
            let documents = self.catalog.table(&chunk.table).map(|t| t.name.as_str());
            Block { section: Section::Docs, text: Cow::Owned(heading + &chunk.content), tokens, table: None, role: Role::Doc, documents }
        };
        let is_example = |c: &&crate::retrieve::ScoredChunk<'a>| c.chunk.kind == ChunkKind::Example;
        blocks.extend(retrieval.chunks.iter().filter(|c| !is_example(c)).map(doc_block));
        blocks.extend(retrieval.expanded_tables.iter().filter_map(|t| table_block(t, Role::Neighbour)));
        blocks.extend(retrieval.chunks.iter().filter(is_example).map(doc_block));
        if let Some(db) = &self.database
            && !db.text.is_empty()
        {
            let first = db.text.split("\n\n").next().unwrap_or_default();
            blocks.push(Block {
                section: Section::Overview,
                text: Cow::Borrowed(first),
                tokens: tokens::count(first),
                table: None,
                role: Role::Doc,
                documents: None,
            });
        }
        let shown = retrieval.tables.len() + retrieval.expanded_tables.len();
        let header = format!(
            "# Database schema: {shown} of {} tables (focused on the question, confidence {})\n\n",
            self.catalog.tables.len(),
            // Significant digits, not two decimals, which showed 0.004 as 0.00.
            schemascope_core::figure::text(schemascope_core::figure::significant(retrieval.confidence, schemascope_core::figure::MIN_DIGITS))
        );
        (header, blocks)
    }
}

/// True when `block` may be kept given what was decided for the blocks before it (`decided`):
/// a retrieved table whenever it fits, a neighbour only after every retrieved table, a doc
/// chunk only with the table it documents.
fn allowed(blocks: &[Block<'_>], keep: &[bool], at: usize) -> bool {
    let block = &blocks[at];
    let earlier = || blocks[..at].iter().zip(&keep[..at]);
    match block.role {
        Role::Whole | Role::Retrieved => true,
        Role::Neighbour => earlier().all(|(b, k)| *k || b.role != Role::Retrieved),
        Role::Doc => match block.documents {
            Some(table) => !earlier().any(|(b, k)| !*k && b.table == Some(table)),
            None => true,
        },
    }
}

/// Chooses blocks by priority within the budget and prints them in section order. Returns the
/// text, omitted table names and the number of omitted doc chunks.
fn fit(header: &str, blocks: &[Block<'_>], max_tokens: Option<usize>, exact: bool) -> (String, Vec<String>, usize, usize) {
    let mut keep = vec![true; blocks.len()];
    // The exact token count of the text, once known (counting is the costly part of rendering).
    let mut counted = None;
    if let Some(budget) = max_tokens {
        let header_tokens = tokens::count(header);
        let mut used = header_tokens;
        let total: usize = header_tokens + blocks.iter().map(|b| b.tokens).sum::<usize>();
        let limit = if total <= budget { budget } else { budget.saturating_sub(NOTE_RESERVE) };
        for (i, block) in blocks.iter().enumerate() {
            if used + block.tokens <= limit && allowed(blocks, &keep, i) {
                used += block.tokens;
            } else {
                keep[i] = false;
            }
        }
        // Block counts are additive only approximately (tokens can merge across a boundary):
        // when the estimate is near the budget, check the real count and drop the
        // lowest-priority kept blocks until it fits.
        loop {
            let estimate = header_tokens + blocks.iter().zip(&keep).filter(|(_, k)| **k).map(|(b, _)| b.tokens).sum::<usize>();
            if estimate + ESTIMATE_MARGIN + NOTE_RESERVE < budget {
                break;
            }
            let text = print(header, blocks, &keep, true);
            let exact = tokens::count(&text);
            if exact <= budget {
                counted = Some(exact);
                break;
            }
            match keep.iter().rposition(|&k| k) {
                Some(last) => {
                    keep[last] = false;
                    // Dropping a table drops what may only come with it.
                    for i in last + 1..blocks.len() {
                        keep[i] = keep[i] && allowed(blocks, &keep, i);
                    }
                }
                None => break,
            }
        }
    }
    let mut text = print(header, blocks, &keep, true);
    let estimate = || tokens::count(header) + blocks.iter().zip(&keep).filter(|(_, k)| **k).map(|(b, _)| b.tokens).sum::<usize>();
    let mut tokens = match counted {
        Some(n) => n,
        None if !exact && max_tokens.is_none_or(|budget| estimate() + ESTIMATE_MARGIN + NOTE_RESERVE < budget) => estimate(),
        None => tokens::count(&text),
    };
    if let Some(budget) = max_tokens
        && tokens > budget
    {
        // A budget smaller than the header and the note: say as much as fits.
        let compact = print(header, blocks, &keep, false);
        let note_only = print("", blocks, &keep, false);
        text = [compact, note_only].into_iter().find(|t| tokens::count(t) <= budget).unwrap_or_default();
        tokens = tokens::count(&text);
    }
    let omitted_tables: Vec<String> =
        blocks.iter().zip(&keep).filter(|(b, k)| !**k && b.table.is_some()).filter_map(|(b, _)| b.table.map(str::to_string)).collect();
    let omitted_chunks = blocks.iter().zip(&keep).filter(|(b, k)| !**k && b.section == Section::Docs).count();
    (text, omitted_tables, omitted_chunks, tokens)
}

/// The kept blocks in section order, then a note on what was left out (naming tables when
/// `names`).
fn print(header: &str, blocks: &[Block<'_>], keep: &[bool], names: bool) -> String {
    let mut out = String::from(header);
    for section in [Section::Overview, Section::Tables, Section::Docs] {
        let mut first = true;
        for (block, _) in blocks.iter().zip(keep).filter(|(b, k)| **k && b.section == section) {
            if section == Section::Docs && first {
                out.push_str("## Retrieved Documentation\n\n");
            }
            first = false;
            out.push_str(&block.text);
            out.push_str("\n\n");
        }
    }
    let omitted_tables: Vec<&str> = blocks.iter().zip(keep).filter(|(_, k)| !**k).filter_map(|(b, _)| b.table).collect();
    let omitted_chunks = blocks.iter().zip(keep).filter(|(b, k)| !**k && b.section == Section::Docs).count();
    if !omitted_tables.is_empty() || omitted_chunks > 0 {
        let mut parts = Vec::new();
        if !omitted_tables.is_empty() && !names {
            parts.push(format!("{} tables", omitted_tables.len()));
        } else if !omitted_tables.is_empty() {
            let mut names = omitted_tables.iter().take(OMITTED_NAMES_SHOWN).copied().collect::<Vec<_>>().join(", ");
            if omitted_tables.len() > OMITTED_NAMES_SHOWN {
                names.push_str(&format!(", +{} more", omitted_tables.len() - OMITTED_NAMES_SHOWN));
            }
            parts.push(format!("{} tables ({names})", omitted_tables.len()));
        }
        if omitted_chunks > 0 {
            parts.push(format!("{omitted_chunks} doc chunks"));
        }
        out.push_str(&format!("_Not shown (token budget): {}._\n", parts.join(", ")));
    }
    out.truncate(out.trim_end().len());
    if !out.is_empty() {
        out.push('\n');
    }
    out
}

/// Tokens of the full schema made of `blocks`, printed exactly as [`SchemaIndex::render`] prints
/// it.
pub(crate) fn count_full_schema(blocks: &[TableBlock]) -> usize {
    let blocks: Vec<Block<'_>> = blocks
        .iter()
        .map(|b| Block { section: Section::Tables, text: Cow::Borrowed(&b.text), tokens: b.tokens, table: None, role: Role::Whole, documents: None })
        .collect();
    fit(&full_header(blocks.len()), &blocks, None, true).3
}

fn full_header(tables: usize) -> String {
    format!("# Database schema: {tables} tables\n\n")
}

/// A table's structure: heading with kind and rows, comment, one line per column (type, key,
/// nullability, reference, caller's note).
pub fn format_table(table: &TableInfo, notes: &ColumnNotes) -> String {
    let mut out = format!("## {}", table.name);
    let mut facts = Vec::new();
    if table.kind == TableKind::View {
        facts.push("view".to_string());
    }
    if let Some(rows) = table.row_count {
        facts.push(format!("{rows} rows"));
    }
    if !facts.is_empty() {
        out.push_str(&format!(" ({})", facts.join(", ")));
    }
    out.push('\n');
    if let Some(comment) = &table.comment {
        out.push_str(comment.trim());
        out.push('\n');
    }
    for column in &table.columns {
        out.push_str(&format!("- {}", column.name));
        if !column.declared_type.is_empty() {
            out.push_str(&format!(" {}", column.declared_type));
        }
        if table.is_primary_key(&column.name) {
            out.push_str(" PK");
        }
        if !column.nullable && !table.is_primary_key(&column.name) {
            out.push_str(" NOT NULL");
        }
        if let Some(fk) = table.foreign_key_of(&column.name) {
            let at = fk.columns.iter().position(|c| c.eq_ignore_ascii_case(&column.name)).unwrap_or(0);
            let target = fk.referenced_columns.get(at).map_or(String::new(), |c| format!(".{c}"));
            out.push_str(&format!(" → {}{target}", fk.referenced_table));
        }
        if let Some(comment) = &column.comment {
            out.push_str(&format!(" — {}", comment.trim()));
        }
        if let Some(note) = notes.get(&table.name, &column.name) {
            out.push_str(&format!(" ({note})"));
        }
        out.push('\n');
    }
    out.truncate(out.trim_end().len());
    out
}
