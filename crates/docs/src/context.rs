//! The schema context an LLM gets for a question: the full schema, or the focused one (the
//! selected tables' structure plus "## Retrieved Documentation", as the seed's
//! formatFocusedSchema), fitted to a token budget by leaving out whole blocks, lowest priority
//! first, and saying what was left out.

use std::borrow::Cow;

use schemascope_core::{TableInfo, TableKind, tokens};
use serde::Serialize;

use crate::chunk::{ChunkKind, ChunkSource};
use crate::examples::ScoredExample;
use crate::inline::InlineDoc;
use crate::notes::ColumnNotes;
use crate::parse::DocOrigin;
use crate::retrieve::{Retrieval, RetrievalMetadata, SchemaIndex, Strategy};
use schemascope_core::display::escape_controls;
use schemascope_core::value_index::ValueMatch;

/// Names of left-out tables listed in the omission note before "and N more".
const OMITTED_NAMES_SHOWN: usize = 10;
/// Tokens kept free for the omission note when a budget applies.
const NOTE_RESERVE: usize = 60;

/// One table's structure with its docs and value notes, formatted once when the index is built,
/// and the shorter forms a budget shows before it leaves the table out: first without the value
/// notes (the profile's, which a query can find again), then without the docs as well (what a
/// person wrote, which nothing else says).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct TableBlock {
    pub(crate) text: String,
    pub(crate) tokens: usize,
    /// With its docs but without the columns' value notes, when that is shorter.
    pub(crate) documented: Option<(String, usize)>,
    /// The structure alone (names, types, keys, references and the database's comments), when
    /// that is shorter still.
    pub(crate) compact: Option<(String, usize)>,
    /// True when the table has docs a person wrote (shown inline).
    pub(crate) docs: bool,
}

impl TableBlock {
    pub(crate) fn new(table: &TableInfo, doc: Option<&InlineDoc>, notes: &ColumnNotes) -> Self {
        let text = format_table(table, doc, notes);
        let tokens = tokens::count(&text);
        let none = ColumnNotes::new();
        let documented = doc
            .map(|doc| format_table(table, Some(doc), &none))
            .map(|text| {
                let tokens = tokens::count(&text);
                (text, tokens)
            })
            .filter(|(_, n)| *n < tokens);
        let bare = format_table(table, None, &none);
        let bare_tokens = tokens::count(&bare);
        let next_larger = documented.as_ref().map_or(tokens, |(_, n)| *n);
        let compact = (bare_tokens < next_larger).then_some((bare, bare_tokens));
        Self { tokens, text, documented, compact, docs: doc.is_some() }
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
    /// Tables the budget shows without their columns' value notes (their docs kept, if any).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub compact_tables: Vec<String>,
    /// Tables the budget shows without their docs (and without value notes).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub undocumented_tables: Vec<String>,
    /// Sections the budget left out: `overview`, `businessTerms`, `verifiedExamples`.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub omitted_sections: Vec<&'static str>,
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
    /// A table with its docs but without value notes, and its tokens.
    documented: Option<(&'a str, usize)>,
    /// The shortest form and its tokens (a table's structure alone), shown before the block is
    /// left out.
    compact: Option<(&'a str, usize)>,
    /// True when the compact form leaves out docs a person wrote.
    compact_drops_docs: bool,
}

impl<'a> Block<'a> {
    /// A table of the index, in `role`.
    fn table(name: &'a str, block: &'a TableBlock, role: Role) -> Self {
        Block {
            section: Section::Tables,
            text: Cow::Borrowed(&block.text),
            tokens: block.tokens,
            table: Some(name),
            role,
            documents: None,
            documented: block.documented.as_ref().map(|(text, tokens)| (text.as_str(), *tokens)),
            compact: block.compact.as_ref().map(|(text, tokens)| (text.as_str(), *tokens)),
            compact_drops_docs: block.docs,
        }
    }

    /// A block of text with no shorter form.
    fn plain(section: Section, text: Cow<'a, str>, tokens: usize, role: Role) -> Self {
        Block {
            section,
            text,
            tokens,
            table: None,
            role,
            documents: None,
            documented: None,
            compact: None,
            compact_drops_docs: false,
        }
    }

    /// Its text and tokens when shown as `shown` (a form it lacks is the next larger one; a
    /// table without docs, documented, is its structure alone).
    fn form(&self, shown: Shown) -> (&str, usize) {
        let whole = (&*self.text, self.tokens);
        let documented = self
            .documented
            .or(if self.compact_drops_docs { None } else { self.compact })
            .unwrap_or(whole);
        match shown {
            Shown::Not => ("", 0),
            Shown::Compact => self.compact.unwrap_or(documented),
            Shown::Documented => documented,
            Shown::Whole => whole,
        }
    }

    /// Its tokens when shown as `shown`.
    fn tokens_as(&self, shown: Shown) -> usize {
        self.form(shown).1
    }

    /// Its text when shown as `shown`.
    fn text_as(&self, shown: Shown) -> &str {
        self.form(shown).0
    }

    /// The smallest form it can be shown in.
    fn smallest(&self) -> Shown {
        match (self.compact, self.documented) {
            (Some(_), _) => Shown::Compact,
            (None, Some(_)) => Shown::Documented,
            (None, None) => Shown::Whole,
        }
    }

    /// The next smaller form than `shown` (`Not` after the smallest).
    fn shrunk(&self, shown: Shown) -> Shown {
        match shown {
            Shown::Whole if self.documented.is_some() => Shown::Documented,
            Shown::Whole | Shown::Documented if self.compact.is_some() => Shown::Compact,
            _ => Shown::Not,
        }
    }
}

/// How much of a block the context shows, smallest first.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Shown {
    /// Left out.
    Not,
    /// In its compact form: a table's structure alone.
    Compact,
    /// A table with its docs, without its columns' value notes.
    Documented,
    /// Whole.
    Whole,
}

/// What [`fit`] chose: the text and what it left out or shortened.
struct Fitted {
    text: String,
    omitted_sections: Vec<&'static str>,
    omitted_tables: Vec<String>,
    omitted_chunks: usize,
    compact_tables: Vec<String>,
    undocumented_tables: Vec<String>,
    tokens: usize,
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
    Terms,
    Values,
    Examples,
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
    pub fn render_counted(
        &self,
        retrieval: &Retrieval<'_>,
        max_tokens: Option<usize>,
        exact: bool,
    ) -> SchemaContext {
        let metadata = retrieval.metadata(self);
        let (heading, blocks) = match retrieval.strategy {
            Strategy::Full(_) => {
                // Under a budget the full schema does not fit, the tables the question points at
                // come first, so that the budget leaves out the others.
                let mut order: Vec<usize> = retrieval
                    .priority
                    .iter()
                    .filter_map(|name| self.catalog.tables.iter().position(|t| t.name == *name))
                    .collect();
                for i in 0..self.catalog.tables.len() {
                    if !order.contains(&i) {
                        order.push(i);
                    }
                }
                let mut blocks: Vec<Block<'_>> = order
                    .into_iter()
                    .map(|i| {
                        Block::table(&self.catalog.tables[i].name, &self.blocks[i], Role::Whole)
                    })
                    .collect();
                // The database overview a person wrote (a generated one lists the tables the
                // full schema shows anyway).
                blocks.extend(self.overview_block().filter(|_| self.overview_written()));
                // The whole semantic file: it is meant to be short, and a full context is for a
                // small schema.
                blocks.extend(self.terms.as_deref().map(|text| {
                    Block::plain(
                        Section::Terms,
                        Cow::Borrowed(text),
                        tokens::count(text),
                        Role::Doc,
                    )
                }));
                (Heading { tables: self.catalog.tables.len(), confidence: None }, blocks)
            }
            Strategy::Focused => self.focused_blocks(retrieval),
        };
        let mut blocks = blocks;
        // First in priority: a line or two that saves the model a guess, and the examples that
        // show how this database answers questions like this one.
        for (at, block) in question_blocks(retrieval).into_iter().enumerate() {
            blocks.insert(at, block);
        }
        let fitted = fit(&heading, &blocks, max_tokens, exact);
        // The metadata names the tables the text shows, not those the budget left out.
        let mut metadata = metadata;
        metadata.tables_included.retain(|t| !fitted.omitted_tables.contains(t));
        SchemaContext {
            tokens: fitted.tokens,
            text: fitted.text,
            full_schema_tokens: self.full_schema_tokens(),
            metadata,
            omitted_tables: fitted.omitted_tables,
            omitted_chunks: fitted.omitted_chunks,
            compact_tables: fitted.compact_tables,
            undocumented_tables: fitted.undocumented_tables,
            omitted_sections: fitted.omitted_sections,
        }
    }

    /// The first paragraph of the database overview, as a block, when there is one.
    fn overview_block(&self) -> Option<Block<'_>> {
        let db = self.database.as_ref().filter(|db| !db.text.is_empty())?;
        let first = db.text.split("\n\n").next().unwrap_or_default();
        Some(Block::plain(Section::Overview, Cow::Borrowed(first), tokens::count(first), Role::Doc))
    }

    /// True when a person wrote or changed the database overview.
    fn overview_written(&self) -> bool {
        self.database.as_ref().is_some_and(|db| db.origin != DocOrigin::Generated)
    }

    /// Tokens of the focused context of `retrieval` without a budget, to decide whether
    /// focusing is worth it, and the tokens of the blocks both contexts show (the values the
    /// question names, the examples like it). The size is estimated from the blocks and
    /// counted exactly when `threshold(shared tokens)`, the size the decision turns on, is
    /// within [`ESTIMATE_MARGIN`] of the estimate.
    pub(crate) fn focused_tokens(
        &self,
        retrieval: &Retrieval<'_>,
        threshold: impl Fn(usize) -> usize,
    ) -> (usize, usize) {
        let (heading, mut blocks) = self.focused_blocks(retrieval);
        let shared = question_blocks(retrieval);
        let shared_tokens = shared.iter().map(|b| b.tokens).sum();
        blocks.extend(shared);
        let shown = blocks.iter().filter(|b| b.table.is_some()).count();
        let estimate =
            tokens::count(&heading.text(shown)) + blocks.iter().map(|b| b.tokens).sum::<usize>();
        if estimate.abs_diff(threshold(shared_tokens)) > ESTIMATE_MARGIN {
            return (estimate, shared_tokens);
        }
        (fit(&heading, &blocks, None, true).tokens, shared_tokens)
    }

    /// Blocks of a focused context in priority order, which is the reverse of the order a
    /// budget drops them in: retrieved tables by rank, retrieved doc chunks other than
    /// examples, FK neighbours, example chunks, the database overview.
    fn focused_blocks<'a>(&'a self, retrieval: &Retrieval<'a>) -> (Heading, Vec<Block<'a>>) {
        let mut blocks = Vec::new();
        let table_block = |name: &'a str, role: Role| {
            let i = self.catalog.tables.iter().position(|t| t.name == name)?;
            Some(Block::table(&self.catalog.tables[i].name, &self.blocks[i], role))
        };
        blocks.extend(retrieval.tables.iter().filter_map(|t| table_block(t, Role::Retrieved)));
        // A retrieved table shows its docs inline: its overview and column chunks would say the
        // same again.
        let inline = |c: &&crate::retrieve::ScoredChunk<'a>| {
            matches!(c.chunk.kind, ChunkKind::Overview | ChunkKind::Column)
                && retrieval.tables.iter().any(|t| t.eq_ignore_ascii_case(&c.chunk.table))
                && self
                    .catalog
                    .tables
                    .iter()
                    .position(|t| t.name.eq_ignore_ascii_case(&c.chunk.table))
                    .is_some_and(|i| self.blocks[i].docs)
        };
        let doc_block = |c: &crate::retrieve::ScoredChunk<'a>| {
            let chunk = c.chunk;
            let heading = match &chunk.column {
                Some(column) => format!("### {}.{column} ({})\n", chunk.table, chunk.kind.name()),
                None => format!("### {} ({})\n", chunk.table, chunk.kind.name()),
            };
            let tokens = chunk.tokens + tokens::count(&heading);
            let documents = self.catalog.table(&chunk.table).map(|t| t.name.as_str());
            Block {
                documents,
                ..Block::plain(
                    Section::Docs,
                    Cow::Owned(heading + &chunk.content),
                    tokens,
                    Role::Doc,
                )
            }
        };
        let is_example = |c: &&crate::retrieve::ScoredChunk<'a>| c.chunk.kind == ChunkKind::Example;
        // A chunk nobody wrote (the catalog's, or a generated file's) says what the table's
        // structure and value notes beside it say: it finds the table, and is not shown again.
        let written = |c: &&crate::retrieve::ScoredChunk<'a>| {
            matches!(c.chunk.source, ChunkSource::Docs(_)) && !inline(c)
        };
        blocks.extend(
            retrieval.chunks.iter().filter(|c| !is_example(c) && written(c)).map(doc_block),
        );
        blocks.extend(
            retrieval.expanded_tables.iter().filter_map(|t| table_block(t, Role::Neighbour)),
        );
        blocks
            .extend(retrieval.chunks.iter().filter(|c| is_example(c) && written(c)).map(doc_block));
        blocks.extend(self.overview_block().filter(|_| self.overview_written()));
        blocks.extend(self.joins_block(retrieval));
        (
            Heading { tables: self.catalog.tables.len(), confidence: Some(retrieval.confidence) },
            blocks,
        )
    }

    /// The joins the schema does not declare (the semantic file's, dbt's tests') between two
    /// tables of a focused context, which the tables' structure cannot show.
    fn joins_block(&self, retrieval: &Retrieval<'_>) -> Option<Block<'static>> {
        let semantic = self.semantic()?;
        let shown = |table: &str| {
            retrieval
                .tables
                .iter()
                .chain(&retrieval.expanded_tables)
                .any(|t| t.eq_ignore_ascii_case(table))
        };
        let lines: Vec<String> = semantic
            .relationships
            .iter()
            .filter(|r| shown(&r.from.table) && shown(&r.to.table))
            .map(|r| format!("- {}", crate::chunk::relationship_text(r)))
            .collect();
        if lines.is_empty() {
            return None;
        }
        let text = format!("## Joins the schema does not declare\n{}", lines.join("\n"));
        let tokens = tokens::count(&text);
        Some(Block::plain(Section::Terms, Cow::Owned(text), tokens, Role::Doc))
    }
}

/// The blocks a question brings to either context, in priority order: the values it names and
/// the verified examples like it.
fn question_blocks(retrieval: &Retrieval<'_>) -> Vec<Block<'static>> {
    values_block(&retrieval.values).into_iter().chain(examples_block(&retrieval.examples)).collect()
}

/// "## Verified examples": each example's question and its SQL in a fenced block, or `None`
/// when no example is like the question.
fn examples_block(examples: &[ScoredExample<'_>]) -> Option<Block<'static>> {
    if examples.is_empty() {
        return None;
    }
    let mut text = String::from(
        "## Verified examples\nQuestions like this one that a person confirmed, with the SQL that answers each:\n",
    );
    for found in examples {
        let example = found.example;
        // Each line escaped on its own: the SQL keeps its lines, and nothing hidden reaches
        // the prompt.
        let sql = example
            .sql
            .lines()
            .map(|line| escape_controls(&line.replace('\t', "    ")))
            .collect::<Vec<_>>()
            .join("\n");
        let longest = sql.split(|c| c != '`').map(str::len).max().unwrap_or(0);
        let fence = "`".repeat(longest.max(2) + 1);
        text.push_str(&format!(
            "\nQ: {}\n{fence}sql\n{sql}\n{fence}\n",
            escape_controls(&example.question)
        ));
    }
    let text = text.trim_end().to_string();
    let tokens = tokens::count(&text);
    Some(Block::plain(Section::Examples, Cow::Owned(text), tokens, Role::Doc))
}

/// `table.column` as a values line writes it: each name as is when it is a plain identifier,
/// else in double quotes (`t."weird col"`), so that the line reads one way.
pub fn qualified_name(table: &str, column: &str) -> String {
    let name = |n: &str| {
        let plain = n.chars().next().is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
            && n.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
        if plain { n.to_string() } else { format!("\"{}\"", n.replace('"', "\"\"")) }
    };
    // A schema-qualified table (`public.orders`) is two names.
    let table = table.split('.').map(name).collect::<Vec<_>>().join(".");
    format!("{table}.{}", name(column))
}

/// "## Values the question names" with one line per stored value (`Genre.Name has 'Bossa
/// Nova'`), or `None` when the question names none.
fn values_block(values: &[ValueMatch]) -> Option<Block<'static>> {
    if values.is_empty() {
        return None;
    }
    // One line per value, naming every column that stores it (a country of customers and of
    // invoices).
    let mut lines: Vec<(&str, Vec<String>, &ValueMatch)> = Vec::new();
    for v in values {
        let column = qualified_name(&v.table, &v.column);
        match lines.iter_mut().find(|(value, _, _)| *value == v.value) {
            Some((_, columns, _)) => columns.push(column),
            None => lines.push((&v.value, vec![column], v)),
        }
    }
    let mut text = String::from("## Values the question names\n");
    for (value, columns, first) in lines {
        let verb = if columns.len() == 1 { "has" } else { "have" };
        // Named by one rare word of it, or by what it means: the model should check it is the
        // one meant.
        let how = match (&first.meant_by, first.partial) {
            (Some(words), _) => format!(
                " (by meaning: \"{}\")",
                schemascope_core::display::escape_controls(words).replace('"', "'")
            ),
            (None, true) => " (partial match)".to_string(),
            (None, false) => String::new(),
        };
        // Control characters shown escaped: a NUL is not a space to the database.
        let shown = schemascope_core::display::escape_controls(value).replace('\'', "''");
        text.push_str(&format!("- {} {verb} '{shown}'{how}\n", columns.join(", ")));
    }
    let text = text.trim_end().to_string();
    let tokens = tokens::count(&text);
    Some(Block::plain(Section::Values, Cow::Owned(text), tokens, Role::Retrieved))
}

/// The context's first line, which counts the tables it shows.
struct Heading {
    /// Tables in the schema.
    tables: usize,
    /// For a focused context, the retrieval's confidence.
    confidence: Option<f64>,
}

impl Heading {
    /// The heading of a context showing `shown` tables.
    fn text(&self, shown: usize) -> String {
        match self.confidence {
            None if shown == self.tables => format!("# Database schema: {shown} tables\n\n"),
            None => format!("# Database schema: {shown} of {} tables\n\n", self.tables),
            Some(confidence) => format!(
                "# Database schema: {shown} of {} tables (focused on the question, confidence {})\n\n",
                self.tables,
                // Significant digits, not two decimals, which showed 0.004 as 0.00.
                schemascope_core::figure::text(schemascope_core::figure::significant(
                    confidence,
                    schemascope_core::figure::MIN_DIGITS
                ))
            ),
        }
    }
}

/// True when `block` may be shown given what was decided for the blocks before it: a table of
/// the question whenever it fits, a neighbour only once every retrieved table is shown, a doc
/// chunk only with the table it documents.
fn allowed(blocks: &[Block<'_>], shown: &[Shown], at: usize) -> bool {
    let block = &blocks[at];
    let earlier = || blocks[..at].iter().zip(&shown[..at]);
    match block.role {
        Role::Whole | Role::Retrieved => true,
        Role::Neighbour => earlier().all(|(b, s)| *s != Shown::Not || b.role != Role::Retrieved),
        Role::Doc => match block.documents {
            Some(table) => !earlier().any(|(b, s)| *s == Shown::Not && b.table == Some(table)),
            None => true,
        },
    }
}

/// What a budget of `limit` tokens (after `used` for the heading) shows of `blocks`: first every
/// table of the question in its smallest form — retrieved tables by rank, then their
/// neighbours — so that a long table never pushes out a table the question needs; then, each
/// time in priority order, the tables' docs and the doc chunks, the tables' value notes, and
/// last the database overview. So a budget cuts the overview first, then value notes, then docs,
/// then tables.
fn choose(blocks: &[Block<'_>], mut used: usize, limit: usize) -> Vec<Shown> {
    let mut shown = vec![Shown::Not; blocks.len()];
    for pass in [[Role::Whole, Role::Retrieved], [Role::Neighbour, Role::Neighbour]] {
        for (i, block) in blocks.iter().enumerate() {
            let form = block.smallest();
            if pass.contains(&block.role)
                && used + block.tokens_as(form) <= limit
                && allowed(blocks, &shown, i)
            {
                shown[i] = form;
                used += block.tokens_as(form);
            }
        }
    }
    let overview = |b: &Block<'_>| b.section == Section::Overview;
    for (target, overview_pass) in
        [(Shown::Documented, false), (Shown::Whole, false), (Shown::Whole, true)]
    {
        // Value notes only once every table shows its docs and every doc chunk is in: a table
        // whose docs were cut must not sit beside another's value notes.
        let docs_cut = blocks.iter().zip(&shown).any(|(b, s)| {
            (b.table.is_some()
                && *s != Shown::Not
                && *s < Shown::Documented
                && b.compact_drops_docs)
                || (b.role == Role::Doc
                    && !overview(b)
                    && *s == Shown::Not
                    && b.documents.is_none_or(|t| {
                        blocks
                            .iter()
                            .zip(&shown)
                            .any(|(o, os)| o.table == Some(t) && *os != Shown::Not)
                    }))
        });
        if target == Shown::Whole && docs_cut {
            break;
        }
        for (i, block) in blocks.iter().enumerate() {
            let may = match shown[i] {
                // Tables were offered above in their smallest form: larger they fit no better.
                Shown::Not => {
                    block.role == Role::Doc
                        && overview(block) == overview_pass
                        && allowed(blocks, &shown, i)
                }
                current => current < target && block.table.is_some() && !overview_pass,
            };
            let extra = block.tokens_as(target).saturating_sub(block.tokens_as(shown[i]));
            if may && used + extra <= limit {
                shown[i] = target;
                used += extra;
            }
        }
    }
    shown
}

/// The block to shorten next when a context is still over its budget, in the order [`choose`]
/// cuts: the overview, then the value notes of the lowest-priority table that has them, then
/// the lowest-priority doc chunk or table's docs, then the lowest-priority table.
fn next_cut(blocks: &[Block<'_>], shown: &[Shown]) -> Option<usize> {
    let shrinks = |i: usize| {
        let (block, now) = (&blocks[i], shown[i]);
        let next = block.shrunk(now);
        (now != Shown::Not).then_some((block, now, next))
    };
    let last = |wanted: &dyn Fn(&Block<'_>, Shown, Shown) -> bool| {
        (0..blocks.len())
            .rev()
            .find(|&i| shrinks(i).is_some_and(|(b, now, next)| wanted(b, now, next)))
    };
    last(&|b, _, _| b.section == Section::Overview)
        .or_else(|| {
            // Whole to a form that keeps the docs: only value notes go.
            last(&|b, now, next| {
                b.table.is_some()
                    && now == Shown::Whole
                    && next != Shown::Not
                    && (next == Shown::Documented || !b.compact_drops_docs)
            })
        })
        .or_else(|| {
            last(&|b, _, next| b.role == Role::Doc || (b.table.is_some() && next != Shown::Not))
        })
        .or_else(|| last(&|_, _, _| true))
}

/// Chooses blocks by priority within the budget and prints them in section order.
fn fit(heading: &Heading, blocks: &[Block<'_>], max_tokens: Option<usize>, exact: bool) -> Fitted {
    let mut shown = vec![Shown::Whole; blocks.len()];
    let tables = blocks.iter().filter(|b| b.table.is_some()).count();
    let shown_tables = |shown: &[Shown]| {
        blocks.iter().zip(shown).filter(|(b, s)| b.table.is_some() && **s != Shown::Not).count()
    };
    let estimate = |shown: &[Shown]| {
        tokens::count(&heading.text(shown_tables(shown)))
            + blocks.iter().zip(shown).map(|(b, s)| b.tokens_as(*s)).sum::<usize>()
    };
    // The exact token count of the text, once known (counting is the costly part of rendering).
    let mut counted = None;
    if let Some(budget) = max_tokens {
        if estimate(&shown) > budget {
            shown = choose(
                blocks,
                tokens::count(&heading.text(tables)),
                budget.saturating_sub(NOTE_RESERVE),
            );
        }
        // Block counts are additive only approximately (tokens can merge across a boundary):
        // when the estimate is near the budget, check the real count and shorten or drop the
        // lowest-priority shown blocks until it fits.
        loop {
            if estimate(&shown) + ESTIMATE_MARGIN + NOTE_RESERVE < budget {
                break;
            }
            let exact = tokens::count(&print(heading, blocks, &shown, true));
            if exact <= budget {
                counted = Some(exact);
                break;
            }
            match next_cut(blocks, &shown) {
                Some(last) => {
                    shown[last] = blocks[last].shrunk(shown[last]);
                    // Dropping a table drops what may only come with it.
                    for i in last + 1..blocks.len() {
                        if shown[i] != Shown::Not && !allowed(blocks, &shown, i) {
                            shown[i] = Shown::Not;
                        }
                    }
                }
                None => break,
            }
        }
    }
    let mut text = print(heading, blocks, &shown, true);
    let mut tokens = match counted {
        Some(n) => n,
        None if !exact
            && max_tokens.is_none_or(|budget| {
                estimate(&shown) + ESTIMATE_MARGIN + NOTE_RESERVE < budget
            }) =>
        {
            estimate(&shown)
        }
        None => tokens::count(&text),
    };
    if let Some(budget) = max_tokens
        && tokens > budget
    {
        // A budget smaller than the heading and the note: say as much as fits.
        let compact = print(heading, blocks, &shown, false);
        let note_only = note(blocks, &shown, false);
        text = [compact, note_only]
            .into_iter()
            .find(|t| tokens::count(t) <= budget)
            .unwrap_or_default();
        tokens = tokens::count(&text);
    }
    let names = |wanted: Shortened| -> Vec<String> {
        blocks
            .iter()
            .zip(&shown)
            .filter(|(b, s)| Shortened::of(b, **s) == Some(wanted))
            .filter_map(|(b, _)| b.table.map(str::to_string))
            .collect()
    };
    let omitted_chunks = blocks
        .iter()
        .zip(&shown)
        .filter(|(b, s)| **s == Shown::Not && b.section == Section::Docs)
        .count();
    let omitted_sections = [
        (Section::Overview, "overview"),
        (Section::Terms, "businessTerms"),
        (Section::Examples, "verifiedExamples"),
    ]
    .into_iter()
    .filter(|(section, _)| {
        blocks.iter().zip(&shown).any(|(b, s)| *s == Shown::Not && b.section == *section)
    })
    .map(|(_, name)| name)
    .collect();
    Fitted {
        text,
        omitted_sections,
        omitted_tables: names(Shortened::Omitted),
        omitted_chunks,
        compact_tables: names(Shortened::NoValueNotes),
        undocumented_tables: names(Shortened::NoDocs),
        tokens,
    }
}

/// What a budget did to a table's block.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Shortened {
    /// Left it out.
    Omitted,
    /// Left out its columns' value notes only.
    NoValueNotes,
    /// Left out the docs a person wrote (and the value notes).
    NoDocs,
}

impl Shortened {
    /// What showing `block` as `shown` left out of it, if anything.
    fn of(block: &Block<'_>, shown: Shown) -> Option<Self> {
        match shown {
            Shown::Whole => None,
            Shown::Not => Some(Self::Omitted),
            Shown::Compact if block.compact.is_some() && block.compact_drops_docs => {
                Some(Self::NoDocs)
            }
            // A form the block lacks is shown as the next larger one.
            Shown::Compact | Shown::Documented => {
                (block.form(shown).1 < block.tokens).then_some(Self::NoValueNotes)
            }
        }
    }
}

/// The shown blocks in section order under the heading, then a note on what was left out or
/// shortened (naming tables when `names`).
fn print(heading: &Heading, blocks: &[Block<'_>], shown: &[Shown], names: bool) -> String {
    let shown_tables =
        blocks.iter().zip(shown).filter(|(b, s)| b.table.is_some() && **s != Shown::Not).count();
    let mut out = heading.text(shown_tables);
    for section in [
        Section::Overview,
        Section::Tables,
        Section::Terms,
        Section::Values,
        Section::Examples,
        Section::Docs,
    ] {
        let mut first = true;
        for (block, form) in
            blocks.iter().zip(shown).filter(|(b, s)| **s != Shown::Not && b.section == section)
        {
            if section == Section::Docs && first {
                out.push_str("## Retrieved Documentation\n\n");
            }
            first = false;
            out.push_str(block.text_as(*form));
            out.push_str("\n\n");
        }
    }
    out.push_str(&note(blocks, shown, names));
    out.truncate(out.trim_end().len());
    if !out.is_empty() {
        out.push('\n');
    }
    out
}

/// What the budget left out or shortened, one line each (empty when nothing): tables named
/// when `names`, up to [`OMITTED_NAMES_SHOWN`].
fn note(blocks: &[Block<'_>], shown: &[Shown], names: bool) -> String {
    let tables = |wanted: Shortened| -> Option<String> {
        let listed: Vec<&str> = blocks
            .iter()
            .zip(shown)
            .filter(|(b, s)| Shortened::of(b, **s) == Some(wanted))
            .filter_map(|(b, _)| b.table)
            .collect();
        if listed.is_empty() {
            return None;
        }
        let noun = if listed.len() == 1 { "table" } else { "tables" };
        if !names {
            return Some(format!("{} {noun}", listed.len()));
        }
        let mut named =
            listed.iter().take(OMITTED_NAMES_SHOWN).copied().collect::<Vec<_>>().join(", ");
        if listed.len() > OMITTED_NAMES_SHOWN {
            named.push_str(&format!(", +{} more", listed.len() - OMITTED_NAMES_SHOWN));
        }
        Some(format!("{} {noun} ({named})", listed.len()))
    };
    let mut out = String::new();
    let omitted_chunks = blocks
        .iter()
        .zip(shown)
        .filter(|(b, s)| **s == Shown::Not && b.section == Section::Docs)
        .count();
    let mut left_out: Vec<String> = tables(Shortened::Omitted).into_iter().collect();
    if blocks.iter().zip(shown).any(|(b, s)| *s == Shown::Not && b.section == Section::Overview) {
        left_out.push("the database overview".to_string());
    }
    if blocks.iter().zip(shown).any(|(b, s)| *s == Shown::Not && b.section == Section::Examples) {
        left_out.push("the verified examples".to_string());
    }
    if blocks.iter().zip(shown).any(|(b, s)| *s == Shown::Not && b.section == Section::Terms) {
        left_out.push("the business terms".to_string());
    }
    if omitted_chunks > 0 {
        left_out.push(format!(
            "{omitted_chunks} doc chunk{}",
            if omitted_chunks == 1 { "" } else { "s" }
        ));
    }
    if !left_out.is_empty() {
        out.push_str(&format!("_Not shown (token budget): {}._\n", left_out.join(", ")));
    }
    if let Some(shortened) = tables(Shortened::NoValueNotes) {
        out.push_str(&format!(
            "_Shown without their columns' value notes (token budget): {shortened}._\n"
        ));
    }
    if let Some(shortened) = tables(Shortened::NoDocs) {
        out.push_str(&format!(
            "_Shown without their docs and value notes (token budget): {shortened}._\n"
        ));
    }
    out
}

/// Tokens of the full schema made of `blocks` and the database overview a person wrote,
/// printed exactly as [`SchemaIndex::render`] prints it.
pub(crate) fn count_full_schema(
    blocks: &[TableBlock],
    overview: Option<&str>,
    terms: Option<&str>,
) -> usize {
    let mut blocks: Vec<Block<'_>> =
        blocks.iter().map(|b| Block::table("", b, Role::Whole)).collect();
    let tables = blocks.len();
    if let Some(text) = overview {
        blocks.push(Block::plain(Section::Overview, Cow::Borrowed(text), 0, Role::Doc));
    }
    if let Some(text) = terms {
        blocks.push(Block::plain(Section::Terms, Cow::Borrowed(text), 0, Role::Doc));
    }
    fit(&Heading { tables, confidence: None }, &blocks, None, true).tokens
}

/// The semantic file as the full context shows it: "## Business terms and metrics", a line per
/// term, metric and undeclared relationship (empty when it has none).
pub(crate) fn semantic_block(semantic: &crate::semantic::Semantic) -> String {
    if semantic.is_empty() {
        return String::new();
    }
    let mut out = String::from("## Business terms and metrics\n");
    let lines = semantic
        .terms
        .iter()
        .map(crate::chunk::term_text)
        .chain(semantic.metrics.iter().map(crate::chunk::metric_text))
        .chain(semantic.relationships.iter().map(crate::chunk::relationship_text));
    for line in lines {
        // Each entry is one line already (`chunk::term_text` and the others).
        out.push_str(&format!("- {line}\n"));
    }
    out.truncate(out.trim_end().len());
    out
}

/// A table's structure: heading with kind and rows, comment, one line per column (type, key,
/// nullability, reference, caller's note).
pub(crate) fn format_table(
    table: &TableInfo,
    doc: Option<&InlineDoc>,
    notes: &ColumnNotes,
) -> String {
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
    for paragraph in doc.map_or(&[][..], |d| &d.about) {
        out.push_str(paragraph);
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
            let at =
                fk.columns.iter().position(|c| c.eq_ignore_ascii_case(&column.name)).unwrap_or(0);
            let target = fk.referenced_columns.get(at).map_or(String::new(), |c| format!(".{c}"));
            out.push_str(&format!(" → {}{target}", fk.referenced_table));
        }
        if let Some(comment) = &column.comment {
            out.push_str(&format!(" — {}", comment.trim()));
        }
        if let Some(text) = doc.and_then(|d| d.column(&column.name)) {
            let joint = match column.comment.as_deref().map(str::trim_end) {
                None => " —",
                Some(c) if c.ends_with(['.', '!', '?', ':', ';']) => "",
                Some(_) => ".",
            };
            out.push_str(&format!("{joint} {text}"));
        }
        if let Some(note) = notes.get(&table.name, &column.name) {
            out.push_str(&format!(" ({note})"));
        }
        out.push('\n');
    }
    out.truncate(out.trim_end().len());
    out
}

#[cfg(test)]
mod tests {
    #[test]
    fn a_values_line_quotes_the_names_that_need_it() {
        assert_eq!(super::qualified_name("Genre", "Name"), "Genre.Name");
        assert_eq!(super::qualified_name("t", "weird col"), "t.\"weird col\"");
        assert_eq!(
            super::qualified_name("public.my orders", "a\"b"),
            "public.\"my orders\".\"a\"\"b\""
        );
    }
}
