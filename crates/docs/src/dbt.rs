//! dbt's documentation, which many users already keep: the descriptions of models, sources,
//! seeds, snapshots and their columns, and the joins their `relationships` tests state, read
//! from a project's `schema.yml` files or from the `manifest.json` dbt compiles them into.
//!
//! A model is the table (or view) named by its `alias` when it has one, else its `name`; a
//! source table by its `identifier`, else its `name`. What dbt says becomes a table's docs
//! ([`TableDoc`]: the description as its purpose, column descriptions beside their columns) and
//! undeclared joins ([`DbtRelationship`], shown as the semantic file's relationships are).
//! Reading never fails: what cannot be read is a [`DocWarning`] with file and line.

use serde::Deserialize;
use yaml_rust2::parser::{Event, MarkedEventReceiver, Parser};
use yaml_rust2::scanner::Marker;

use schemascope_core::{Catalog, TableInfo};

use crate::parse::{ColumnDoc, DocOrigin, DocWarning, TableDoc};
use crate::semantic::{Relationship, Target};
use crate::toml_file::warning;

/// Nodes the YAML files of one source may hold in all once their aliases are expanded (a
/// `schema.yml` has thousands at most; an alias of an alias of … would otherwise make billions,
/// and a thousand files of a hundred thousand each as many).
pub const MAX_NODES: usize = 1_000_000;
/// Nesting one YAML file may have.
const MAX_DEPTH: usize = 64;

/// A join a dbt `relationships` test states: every `from` value is a `to` value.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DbtRelationship {
    /// `table.column` that refers.
    pub from: String,
    /// `table.column` referred to.
    pub to: String,
    /// The file it came from.
    pub file: String,
    /// Its line there (0 when unknown).
    pub line: usize,
}

/// What a dbt file documents.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct DbtDocs {
    /// One per documented model, source table, seed or snapshot.
    pub tables: Vec<TableDoc>,
    /// The joins its tests state.
    pub relationships: Vec<DbtRelationship>,
    /// Its markdown `{% docs %}` blocks (name, text), which descriptions cite with
    /// `{{ doc("name") }}`.
    pub blocks: Vec<(String, String)>,
    /// Each model's and source table's name with the relation it is (its alias or identifier),
    /// for the `ref()`s and `source()`s of tests.
    pub relations: Vec<(String, String)>,
}

/// The prefix a caller puts before the name of a file read from a dbt project, so that it is
/// read as dbt's ([`parse_dbt`]) and not as a docs directory's.
pub const DBT_PREFIX: &str = "dbt:";

/// True for a file dbt keeps docs in: a `.yml`/`.yaml` properties file, a `manifest.json`, or
/// a markdown file of `{% docs %}` blocks.
pub fn is_dbt_file(name: &str) -> bool {
    let lower = name.to_ascii_lowercase();
    [".yml", ".yaml", "manifest.json", ".md"].iter().any(|end| lower.ends_with(end))
}

/// Reads a dbt file by its kind: `manifest.json`, markdown docs blocks, or YAML properties,
/// the YAML's nodes counted against `budget` (what is left of [`MAX_NODES`] for its source).
pub fn parse_dbt(file: &str, text: &str, budget: &mut usize) -> (DbtDocs, Vec<DocWarning>) {
    let lower = file.to_ascii_lowercase();
    if lower.ends_with(".json") {
        parse_manifest(file, text)
    } else if lower.ends_with(".md") {
        (DbtDocs { blocks: doc_blocks(text), ..DbtDocs::default() }, Vec::new())
    } else {
        parse_properties(file, text, budget)
    }
}

/// The `{% docs name %} … {% enddocs %}` blocks of a markdown file, as (name, text).
fn doc_blocks(text: &str) -> Vec<(String, String)> {
    let mut blocks = Vec::new();
    let mut rest = text;
    while let Some((name, body, after)) = next_block(rest) {
        blocks.push((name.to_string(), body.trim().to_string()));
        rest = after;
    }
    blocks
}

/// The first docs block of `text`: its name, its text and what follows it.
fn next_block(text: &str) -> Option<(&str, &str, &str)> {
    let (open, tag_end) = tag(text, |inner| inner.strip_prefix("docs ").map(str::trim))?;
    let name = open;
    let body_start = tag_end;
    let (_, close_end) = tag(&text[body_start..], |inner| (inner == "enddocs").then_some(""))?;
    let close_start = text[body_start..body_start + close_end].rfind("{%")?;
    Some((name, &text[body_start..body_start + close_start], &text[body_start + close_end..]))
}

/// The first `{% … %}` tag of `text` (whitespace control `-` allowed) whose inside `wanted`
/// accepts: what it returns, and the byte offset just past the tag.
fn tag<'a>(text: &'a str, wanted: impl Fn(&'a str) -> Option<&'a str>) -> Option<(&'a str, usize)> {
    let mut from = 0;
    while let Some(start) = text[from..].find("{%").map(|i| from + i) {
        let end = text[start..].find("%}").map(|i| start + i)?;
        let inner = text[start + 2..end].trim_matches(|c: char| c == '-' || c.is_whitespace());
        if let Some(found) = wanted(inner) {
            return Some((found, end + 2));
        }
        from = end + 2;
    }
    None
}

/// `description` with its `{{ doc("name") }}` references replaced by their blocks; `None` when
/// Jinja is left that schemascope does not render (shown raw, it would mislead).
fn rendered(description: &str, blocks: &[(String, String)]) -> Option<String> {
    let mut out = String::with_capacity(description.len());
    let mut rest = description;
    while let Some(start) = rest.find("{{") {
        let end = rest[start..].find("}}").map(|i| start + i)?;
        // `{{- doc('x') -}}` trims whitespace around it; `doc('package', 'x')` names a package.
        let inner = rest[start + 2..end].trim().trim_matches('-').trim();
        let arguments = inner.strip_prefix("doc(").and_then(|a| a.strip_suffix(')'))?;
        let name = arguments.rsplit(',').next()?.trim().trim_matches(|c| c == '\'' || c == '"');
        let (_, text) = blocks.iter().find(|(n, _)| n == name)?;
        out.push_str(&rest[..start]);
        out.push_str(text);
        rest = &rest[end + 2..];
    }
    out.push_str(rest);
    let out = out.trim().to_string();
    // Statements, expressions and comments left are dbt's to render, not the model's to read.
    (!out.is_empty() && !["{%", "{{", "{#"].iter().any(|j| out.contains(j))).then_some(out)
}

impl DbtDocs {
    /// The docs of the tables of `catalog` that `documented` (the markdown docs) leaves out, in
    /// the catalog's spelling (a model named as a table's last dotted part finds it too); and a
    /// warning per file naming its models the catalog lacks (ephemeral models, other
    /// databases), which are not used.
    pub(crate) fn tables_for(
        &self,
        catalog: &Catalog,
        documented: &[TableDoc],
    ) -> (Vec<TableDoc>, Vec<DocWarning>) {
        let mut kept: Vec<TableDoc> = Vec::new();
        let mut warnings = Vec::new();
        let mut missing: Vec<(&str, Vec<&str>)> = Vec::new();
        for doc in &self.tables {
            let Some(table) = catalog_table(catalog, &doc.table) else {
                match missing.iter_mut().find(|(file, _)| *file == doc.file) {
                    Some((_, names)) => names.push(&doc.table),
                    None => missing.push((&doc.file, vec![&doc.table])),
                }
                continue;
            };
            let name = table.name.as_str();
            let taken = |t: &TableDoc| t.table.eq_ignore_ascii_case(name);
            if let Some(first) = kept.iter().find(|t| taken(t)) {
                warnings.push(warning(
                    &doc.file,
                    0,
                    format!(
                        "model `{}` documents table `{name}` again (first in {}); left out",
                        doc.table, first.file
                    ),
                    false,
                ));
                continue;
            }
            // Docs a person wrote win; a generated file's sentences give way to dbt's.
            if documented.iter().any(|t| taken(t) && t.origin != DocOrigin::Generated) {
                continue;
            }
            let mut doc = TableDoc { table: name.to_string(), ..doc.clone() };
            doc.purpose =
                doc.purpose.as_deref().and_then(|p| rendered(p, &self.blocks)).map(|p| cut(&p));
            for column in &mut doc.columns {
                column.description = column
                    .description
                    .as_deref()
                    .and_then(|d| rendered(d, &self.blocks))
                    .map(|d| cut(&d));
                column.text = column.description.clone().unwrap_or_default();
                if table.column(&column.name).is_none() && column.description.is_some() {
                    warnings.push(warning(
                        &doc.file,
                        column.line,
                        format!(
                            "documents column `{}`, which table `{name}` does not have; not used",
                            column.name
                        ),
                        false,
                    ));
                    column.description = None;
                }
            }
            doc.columns.retain(|c| c.description.is_some());
            if doc.purpose.is_some() || !doc.columns.is_empty() {
                kept.push(doc);
            }
        }
        warnings.extend(missing.into_iter().map(|(file, names)| {
            let shown: Vec<&str> = names.iter().take(5).copied().collect();
            let more = names.len().saturating_sub(shown.len());
            let more = if more > 0 { format!(" and {more} more") } else { String::new() };
            warning(
                file,
                0,
                format!(
                    "{} of its models are not tables of the database ({}{more}); not used",
                    names.len(),
                    shown.join(", ")
                ),
                false,
            )
        }));
        (kept, warnings)
    }

    /// The joins its tests state between columns of `catalog` that the catalog does not
    /// declare, and a warning for each whose columns it lacks.
    pub(crate) fn relationships_for(
        &self,
        catalog: &Catalog,
    ) -> (Vec<Relationship>, Vec<DocWarning>) {
        let mut found: Vec<Relationship> = Vec::new();
        let mut warnings = Vec::new();
        for stated in &self.relationships {
            let target = |name: &str| {
                let (table, column) = name.rsplit_once('.')?;
                // A `ref()` names a model: its relation is its alias.
                let table = self
                    .relations
                    .iter()
                    .find(|(model, _)| model == table)
                    .map_or(table, |(_, relation)| relation.as_str());
                let table = catalog_table(catalog, table)?;
                let column = table.column(column)?;
                Some(Target { table: table.name.clone(), column: Some(column.name.clone()) })
            };
            let (Some(from), Some(to)) = (target(&stated.from), target(&stated.to)) else {
                warnings.push(warning(
                    &stated.file,
                    stated.line,
                    format!(
                        "relationship {} → {} names a table or column the database lacks; left out",
                        stated.from, stated.to
                    ),
                    false,
                ));
                continue;
            };
            let declared = catalog.table(&from.table).is_some_and(|t| {
                t.foreign_keys.iter().any(|fk| {
                    fk.referenced_table.eq_ignore_ascii_case(&to.table)
                        && fk.columns.len() == 1
                        && fk.columns[0].eq_ignore_ascii_case(from.column.as_deref().unwrap_or(""))
                })
            });
            let same_column = from == to;
            let relationship = Relationship { from, to, description: None };
            if !declared && !same_column && !found.contains(&relationship) {
                found.push(relationship);
            }
        }
        (found, warnings)
    }
}

/// The most characters of a dbt description shown (a description of pages would push the
/// rest of a context out of its budget).
const MAX_DESCRIPTION_CHARS: usize = 1_000;

/// `text` cut to [`MAX_DESCRIPTION_CHARS`], with an ellipsis when cut.
fn cut(text: &str) -> String {
    crate::inline::cut_chars(text, MAX_DESCRIPTION_CHARS).unwrap_or_else(|| text.to_string())
}

/// The catalog table named `name`, or whose last dotted part is `name` when only one is.
fn catalog_table<'a>(catalog: &'a Catalog, name: &str) -> Option<&'a TableInfo> {
    catalog.table(name).or_else(|| {
        let mut matching = catalog.tables.iter().filter(|t| {
            t.name.rsplit_once('.').is_some_and(|(_, last)| last.eq_ignore_ascii_case(name))
        });
        let first = matching.next()?;
        matching.next().is_none().then_some(first)
    })
}

// ---- YAML, with lines ----

/// A YAML node with the line it starts on.
#[derive(Debug, Clone, PartialEq)]
struct Node {
    line: usize,
    kind: Kind,
}

#[derive(Debug, Clone, PartialEq)]
enum Kind {
    Scalar(String),
    Seq(Vec<Node>),
    Map(Vec<(String, Node)>),
}

impl Node {
    fn get(&self, key: &str) -> Option<&Node> {
        match &self.kind {
            Kind::Map(entries) => entries.iter().find(|(k, _)| k == key).map(|(_, v)| v),
            _ => None,
        }
    }

    fn text(&self, key: &str) -> Option<&str> {
        match &self.get(key)?.kind {
            Kind::Scalar(s) => Some(s.trim()).filter(|s| !s.is_empty()),
            _ => None,
        }
    }

    fn items(&self, key: &str) -> &[Node] {
        match self.get(key).map(|n| &n.kind) {
            Some(Kind::Seq(items)) => items,
            _ => &[],
        }
    }
}

/// Builds [`Node`]s from the parser's events, expanding aliases within [`MAX_NODES`] and
/// nesting within [`MAX_DEPTH`]; past either it stops and says so.
#[derive(Default)]
struct Builder {
    /// Nodes it may still make.
    budget: usize,
    /// Open collections: the node, and for a map the key waiting for its value.
    stack: Vec<(Node, Option<String>)>,
    anchors: Vec<(usize, Node)>,
    /// The anchor of each open collection.
    open_anchors: Vec<usize>,
    documents: Vec<Node>,
    nodes: usize,
    failed: Option<(usize, String)>,
}

impl Builder {
    fn push(&mut self, node: Node, anchor: usize) {
        if anchor > 0 {
            self.anchors.push((anchor, node.clone()));
        }
        match self.stack.last_mut() {
            None => self.documents.push(node),
            Some((parent, key)) => match &mut parent.kind {
                Kind::Seq(items) => items.push(node),
                Kind::Map(entries) => match key.take() {
                    None => {
                        // A key: only scalar keys name what dbt reads.
                        *key = Some(match node.kind {
                            Kind::Scalar(s) => s,
                            _ => String::new(),
                        });
                    }
                    Some(k) => entries.push((k, node)),
                },
                Kind::Scalar(_) => {}
            },
        }
    }

    fn size(node: &Node) -> usize {
        let mut count = 0;
        let mut todo = vec![node];
        while let Some(n) = todo.pop() {
            count += 1;
            match &n.kind {
                Kind::Scalar(_) => {}
                Kind::Seq(items) => todo.extend(items),
                Kind::Map(entries) => todo.extend(entries.iter().map(|(_, v)| v)),
            }
        }
        count
    }
}

impl MarkedEventReceiver for Builder {
    fn on_event(&mut self, event: Event, mark: Marker) {
        if self.failed.is_some() {
            return;
        }
        let line = mark.line();
        self.nodes += 1;
        if self.nodes > self.budget {
            self.failed = Some((
                line,
                format!("more than the {MAX_NODES} YAML nodes a source's dbt files may hold"),
            ));
            return;
        }
        match event {
            Event::Scalar(value, style, anchor, _) => {
                // A plain `~` or `null` is YAML's null, not the text.
                let null = style == yaml_rust2::scanner::TScalarStyle::Plain
                    && matches!(value.as_str(), "~" | "null" | "Null" | "NULL");
                let kind = if null { Kind::Scalar(String::new()) } else { Kind::Scalar(value) };
                self.push(Node { line, kind }, anchor)
            }
            Event::SequenceStart(anchor, _) | Event::MappingStart(anchor, _) => {
                if self.stack.len() == MAX_DEPTH {
                    self.failed = Some((line, format!("nested deeper than {MAX_DEPTH} levels")));
                    return;
                }
                let kind = match event {
                    Event::SequenceStart(..) => Kind::Seq(Vec::new()),
                    _ => Kind::Map(Vec::new()),
                };
                self.stack.push((Node { line, kind }, None));
                self.open_anchors.push(anchor);
            }
            Event::SequenceEnd | Event::MappingEnd => {
                if let (Some((node, _)), Some(anchor)) = (self.stack.pop(), self.open_anchors.pop())
                {
                    self.push(node, anchor);
                }
            }
            Event::Alias(id) => {
                let Some(node) = self.anchors.iter().rev().find(|(a, _)| *a == id).map(|(_, n)| n)
                else {
                    return;
                };
                // Counted before it is copied: an alias bomb stops here, not in memory.
                self.nodes += Self::size(node);
                if self.nodes > MAX_NODES {
                    self.failed = Some((
                        line,
                        format!("more than {MAX_NODES} YAML nodes once its aliases are expanded"),
                    ));
                    return;
                }
                let copy = node.clone();
                self.push(copy, 0);
            }
            _ => {}
        }
    }
}

/// Reads a dbt properties file (`models:`, `sources:`, `seeds:`, `snapshots:`).
fn parse_properties(file: &str, text: &str, budget: &mut usize) -> (DbtDocs, Vec<DocWarning>) {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let mut builder = Builder { budget: *budget, ..Builder::default() };
    let mut parser = Parser::new_from_str(text);
    let loaded = parser.load(&mut builder, true);
    *budget = budget.saturating_sub(builder.nodes);
    if let Err(error) = loaded {
        let line = error.marker().line();
        return (
            DbtDocs::default(),
            vec![warning(file, line, format!("not YAML: {}; file skipped", error.info()), true)],
        );
    }
    if let Some((line, why)) = builder.failed {
        return (
            DbtDocs::default(),
            vec![warning(file, line, format!("{why}; file skipped"), true)],
        );
    }
    let mut docs = DbtDocs::default();
    let mut warnings = Vec::new();
    for root in &builder.documents {
        for kind in ["models", "seeds", "snapshots"] {
            for model in root.items(kind) {
                let Some(name) = model.text("name") else {
                    warnings.push(warning(
                        file,
                        model.line,
                        format!("an entry of `{kind}` without a name; left out"),
                        false,
                    ));
                    continue;
                };
                let table = model_table(model, name);
                docs.relations.push((name.to_string(), table.clone()));
                read_model(file, model, &table, &mut docs);
            }
        }
        for source in root.items("sources") {
            for table in source.items("tables") {
                let Some(name) = table.text("name") else { continue };
                let relation = table.text("identifier").unwrap_or(name).to_string();
                docs.relations.push((name.to_string(), relation.clone()));
                read_model(file, table, &relation, &mut docs);
            }
        }
    }
    (docs, warnings)
}

/// The relation a model is built as: its `alias` (top level or under `config`), else its name.
fn model_table(model: &Node, name: &str) -> String {
    model
        .text("alias")
        .or_else(|| model.get("config").and_then(|c| c.text("alias")))
        .unwrap_or(name)
        .to_string()
}

/// A model's (or source table's) description, column descriptions and relationships tests.
fn read_model(file: &str, model: &Node, table: &str, docs: &mut DbtDocs) {
    let mut doc = TableDoc {
        file: file.to_string(),
        table: table.to_string(),
        purpose: model.text("description").map(str::to_string),
        origin: DocOrigin::Written,
        ..TableDoc::default()
    };
    for column in model.items("columns") {
        let Some(name) = column.text("name") else { continue };
        if let Some(description) = column.text("description") {
            doc.columns.push(ColumnDoc {
                name: name.to_string(),
                description: Some(description.to_string()),
                text: description.to_string(),
                line: column.line,
                ..ColumnDoc::default()
            });
        }
        for test in column.items("data_tests").iter().chain(column.items("tests")) {
            let Some(relationships) = test.get("relationships") else { continue };
            // dbt 1.10 moved a test's arguments under `arguments:`.
            let arguments = relationships.get("arguments").unwrap_or(relationships);
            let (Some(to), Some(field)) = (arguments.text("to"), arguments.text("field")) else {
                continue;
            };
            if let Some(target) = referenced(to) {
                docs.relationships.push(DbtRelationship {
                    from: format!("{table}.{name}"),
                    to: format!("{target}.{field}"),
                    file: file.to_string(),
                    line: test.line,
                });
            }
        }
    }
    if doc.purpose.is_some() || !doc.columns.is_empty() {
        docs.tables.push(doc);
    }
}

/// The relation `ref('customers')`, `ref('pkg', 'customers')` or `source('raw', 'orders')`
/// names (its last quoted argument).
fn referenced(call: &str) -> Option<String> {
    let call = call.trim();
    let open = call.find('(')?;
    let function = call[..open].trim();
    if !matches!(function, "ref" | "source") {
        return None;
    }
    let close = call.rfind(')').filter(|&close| close > open)?;
    let arguments = &call[open + 1..close];
    // Keyword arguments (`v=2`, `version=2`) name no relation.
    let last = arguments.split(',').rfind(|a| !a.trim().is_empty() && !a.contains('='))?;
    let name = last.trim().trim_matches(|c| c == '\'' || c == '"').trim();
    (!name.is_empty()).then(|| name.to_string())
}

// ---- manifest.json ----

#[derive(Deserialize)]
struct Manifest {
    #[serde(default)]
    nodes: std::collections::BTreeMap<String, ManifestNode>,
    #[serde(default)]
    sources: std::collections::BTreeMap<String, ManifestNode>,
}

#[derive(Deserialize)]
struct ManifestNode {
    #[serde(default, deserialize_with = "or_null")]
    resource_type: String,
    #[serde(default, deserialize_with = "or_null")]
    name: String,
    #[serde(default)]
    alias: Option<String>,
    #[serde(default)]
    identifier: Option<String>,
    #[serde(default, deserialize_with = "or_null")]
    description: String,
    #[serde(default, deserialize_with = "or_null")]
    columns: std::collections::BTreeMap<String, ManifestColumn>,
    #[serde(default)]
    test_metadata: Option<TestMetadata>,
    #[serde(default)]
    attached_node: Option<String>,
    #[serde(default)]
    column_name: Option<String>,
}

#[derive(Deserialize)]
struct ManifestColumn {
    #[serde(default, deserialize_with = "or_null")]
    name: String,
    #[serde(default, deserialize_with = "or_null")]
    description: String,
}

#[derive(Deserialize)]
struct TestMetadata {
    #[serde(default, deserialize_with = "or_null")]
    name: String,
    #[serde(default, deserialize_with = "or_null")]
    kwargs: serde_json::Map<String, serde_json::Value>,
}

/// A manifest's field, `null` read as empty (dbt writes `null` for what was not set).
fn or_null<'de, D: serde::Deserializer<'de>, T: Deserialize<'de> + Default>(
    d: D,
) -> Result<T, D::Error> {
    Ok(Option::<T>::deserialize(d)?.unwrap_or_default())
}

/// Reads dbt's compiled `manifest.json`: models, seeds, snapshots and sources with their
/// descriptions, and the `relationships` tests attached to them.
fn parse_manifest(file: &str, text: &str) -> (DbtDocs, Vec<DocWarning>) {
    let manifest: Manifest = match serde_json::from_str(text) {
        Ok(manifest) => manifest,
        Err(error) => {
            let message = format!("not a dbt manifest: {error}; file skipped");
            return (DbtDocs::default(), vec![warning(file, error.line(), message, true)]);
        }
    };
    let relation = |node: &ManifestNode| {
        node.alias.clone().or_else(|| node.identifier.clone()).unwrap_or_else(|| node.name.clone())
    };
    let mut docs = DbtDocs::default();
    let documented =
        manifest.nodes.values().chain(manifest.sources.values()).filter(|n| {
            matches!(n.resource_type.as_str(), "model" | "seed" | "snapshot" | "source")
        });
    for node in documented {
        let mut doc = TableDoc {
            file: file.to_string(),
            table: relation(node),
            purpose: Some(node.description.trim().to_string()).filter(|d| !d.is_empty()),
            origin: DocOrigin::Written,
            ..TableDoc::default()
        };
        for column in node.columns.values() {
            let description = column.description.trim();
            if !column.name.is_empty() && !description.is_empty() {
                doc.columns.push(ColumnDoc {
                    name: column.name.clone(),
                    description: Some(description.to_string()),
                    text: description.to_string(),
                    ..ColumnDoc::default()
                });
            }
        }
        if doc.purpose.is_some() || !doc.columns.is_empty() {
            docs.tables.push(doc);
        }
    }
    for test in manifest.nodes.values().filter(|n| n.resource_type == "test") {
        let Some(meta) = test.test_metadata.as_ref().filter(|m| m.name == "relationships") else {
            continue;
        };
        let kwarg = |key: &str| meta.kwargs.get(key).and_then(|v| v.as_str());
        let column = kwarg("column_name").or(test.column_name.as_deref());
        let attached = test
            .attached_node
            .as_ref()
            .and_then(|id| manifest.nodes.get(id).or_else(|| manifest.sources.get(id)));
        let (Some(column), Some(attached), Some(to), Some(field)) =
            (column, attached, kwarg("to").and_then(referenced), kwarg("field"))
        else {
            continue;
        };
        // `to` names a model; the relation is its alias when it has one.
        let to_relation = manifest
            .nodes
            .values()
            .chain(manifest.sources.values())
            .find(|n| n.name == to && n.resource_type != "test")
            .map_or(to.clone(), relation);
        docs.relationships.push(DbtRelationship {
            from: format!("{}.{column}", relation(attached)),
            to: format!("{to_relation}.{field}"),
            file: file.to_string(),
            line: 0,
        });
    }
    (docs, Vec::new())
}

#[cfg(test)]
mod tests {
    use super::{MAX_NODES, doc_blocks, parse_dbt, referenced, rendered};

    fn parse(file: &str, text: &str) -> (super::DbtDocs, Vec<crate::parse::DocWarning>) {
        parse_dbt(file, text, &mut MAX_NODES.clone())
    }

    const SCHEMA: &str = "version: 2\n\nmodels:\n  - name: stg_orders\n    config:\n      alias: orders\n    description: One row per order placed.\n    columns:\n      - name: customer_id\n        description: The customer who ordered.\n        data_tests:\n          - not_null\n          - relationships:\n              arguments:\n                to: ref('customers')\n                field: id\n      - name: status\n  - name: customers\n    description: >\n      People who bought\n      something.\n    columns:\n      - name: id\n        tests: [unique]\n  - description: no name\n\nsources:\n  - name: raw\n    tables:\n      - name: payments\n        identifier: raw_payments\n        description: Payments as the processor sends them.\n        columns:\n          - name: order_id\n            tests:\n              - relationships: {to: \"source('raw', 'orders')\", field: id}\n";

    #[test]
    fn a_properties_file_gives_descriptions_and_joins_with_lines() {
        let (docs, warnings) = parse("models/schema.yml", SCHEMA);
        let tables: Vec<(&str, Option<&str>, usize)> = docs
            .tables
            .iter()
            .map(|t| (t.table.as_str(), t.purpose.as_deref(), t.columns.len()))
            .collect();
        assert_eq!(
            tables,
            [
                ("orders", Some("One row per order placed."), 1),
                ("customers", Some("People who bought something."), 0),
                ("raw_payments", Some("Payments as the processor sends them."), 0),
            ]
        );
        assert_eq!(docs.tables[0].columns[0].line, 9);
        let joins: Vec<(&str, &str, usize)> =
            docs.relationships.iter().map(|r| (r.from.as_str(), r.to.as_str(), r.line)).collect();
        assert_eq!(
            joins,
            [
                ("orders.customer_id", "customers.id", 13),
                ("raw_payments.order_id", "orders.id", 36)
            ]
        );
        assert_eq!(warnings.len(), 1, "{warnings:?}");
        assert_eq!(warnings[0].line, 25);
    }

    #[test]
    fn broken_yaml_and_alias_bombs_are_reported_not_expanded() {
        let (_, warnings) = parse("bad.yml", "models:\n  - name: [unclosed\n");
        assert!(warnings[0].file_skipped && warnings[0].line > 0, "{warnings:?}");
        let mut bomb = String::from("a: &a [x, x, x, x, x, x, x, x, x, x]\n");
        for (i, prev) in (b'b'..=b'z').zip(b'a'..) {
            let (i, prev) = (i as char, prev as char);
            bomb.push_str(&format!("{i}: &{i} [*{prev}, *{prev}, *{prev}, *{prev}, *{prev}, *{prev}, *{prev}, *{prev}, *{prev}, *{prev}]\n"));
        }
        let (docs, warnings) = parse("bomb.yml", &bomb);
        assert!(docs.tables.is_empty());
        assert!(warnings[0].message.contains("aliases"), "{warnings:?}");
        let deep = format!("{}{}", "[".repeat(10_000), "]".repeat(10_000));
        let (_, warnings) = parse("deep.yml", &deep);
        assert!(warnings[0].file_skipped, "{warnings:?}");
    }

    #[test]
    fn a_manifest_gives_the_same_as_its_properties() {
        let manifest = r#"{"nodes": {
          "model.shop.stg_orders": {"resource_type": "model", "name": "stg_orders", "alias": "orders",
            "description": "One row per order placed.",
            "columns": {"customer_id": {"name": "customer_id", "description": "The customer who ordered."}}},
          "model.shop.customers": {"resource_type": "model", "name": "customers", "description": ""},
          "test.shop.rel": {"resource_type": "test", "name": "rel", "attached_node": "model.shop.stg_orders",
            "column_name": "customer_id",
            "test_metadata": {"name": "relationships", "kwargs": {"to": "ref('customers')", "field": "id", "column_name": "customer_id"}}}},
          "sources": {}}"#;
        let (docs, warnings) = parse("target/manifest.json", manifest);
        assert!(warnings.is_empty(), "{warnings:?}");
        assert_eq!(docs.tables.len(), 1, "an undocumented model gives no docs");
        assert_eq!(docs.tables[0].table, "orders");
        assert_eq!(docs.relationships[0].from, "orders.customer_id");
        assert_eq!(docs.relationships[0].to, "customers.id");
        let (_, warnings) = parse("manifest.json", "{\"nodes\": 3}");
        assert!(warnings[0].file_skipped, "{warnings:?}");
    }

    #[test]
    fn doc_blocks_are_rendered_and_other_jinja_is_not_shown() {
        let blocks = doc_blocks(
            "{% docs orders_status %}\n\nOne of placed, shipped.\n\n{% enddocs %}\n{%- docs  other -%}x{%- enddocs -%}",
        );
        assert_eq!(
            blocks,
            [
                ("orders_status".into(), "One of placed, shipped.".into()),
                ("other".into(), "x".into())
            ]
        );
        assert_eq!(
            rendered("Status: {{ doc(\"orders_status\") }}", &blocks).as_deref(),
            Some("Status: One of placed, shipped.")
        );
        assert_eq!(rendered("{{ doc('missing') }}", &blocks), None);
        assert_eq!(rendered("{{ var('x') }} dollars", &blocks), None);
        assert_eq!(rendered("Plain {{", &blocks), None);
        assert_eq!(rendered("Plain.", &blocks).as_deref(), Some("Plain."));
        assert_eq!(rendered("{# a comment #}Count", &blocks), None);
        assert_eq!(
            rendered("{{- doc('shop', 'other') -}}", &blocks).as_deref(),
            Some("x"),
            "whitespace control and a package name"
        );
    }

    #[test]
    fn the_node_budget_is_shared_by_every_file_of_a_source() {
        let file = "models:\n  - name: a\n    description: one\n";
        let mut budget = 20;
        let (first, warnings) = parse_dbt("a.yml", file, &mut budget);
        assert!(warnings.is_empty() && first.tables.len() == 1, "{warnings:?}");
        let (second, warnings) = parse_dbt("b.yml", file, &mut budget);
        assert!(second.tables.is_empty(), "the budget is spent");
        assert!(
            warnings[0].file_skipped && warnings[0].message.contains("YAML nodes"),
            "{warnings:?}"
        );
    }

    #[test]
    fn a_test_names_a_model_by_its_relation() {
        let (docs, _) = parse(
            "s.yml",
            "models:\n  - name: orders_model\n    config: {alias: orders}\n    description: d\n  - name: lines\n    description: d\n    columns:\n      - name: order_id\n        tests:\n          - relationships: {to: \"ref('orders_model', v=2)\", field: id}\n",
        );
        assert_eq!(docs.relationships[0].to, "orders_model.id");
        assert!(docs.relations.contains(&("orders_model".into(), "orders".into())));
    }

    #[test]
    fn references_name_their_relation() {
        assert_eq!(referenced("ref('customers')").as_deref(), Some("customers"));
        assert_eq!(referenced("ref(\"pkg\", \"customers\")").as_deref(), Some("customers"));
        assert_eq!(referenced("source('raw','orders')").as_deref(), Some("orders"));
        assert_eq!(referenced("customers"), None);
        assert_eq!(referenced("ref()"), None);
        assert_eq!(referenced("ref)('x'("), None);
    }
}
