//! Evaluating retrieval on Spider: catalogs from `tables.json`, gold tables from each question's
//! gold SQL (sqlparser), and table Recall@K, Precision@K, MRR and context-size reduction, for each
//! database alone and for all databases pooled into one large schema.
//!
//! **What counts.** *Ranked* metrics use the tables of the retrieved chunks, in rank order (at
//! most K tables, since each of the K chunks names one): they measure the ranking itself.
//! *Context* recall also counts the FK-expanded tables, since the model sees them too, and a
//! full-schema fallback as complete: it measures whether the model can write the query from
//! what it gets. Reduction compares the hybrid context's tokens with the full schema's.

use std::collections::{BTreeMap, BTreeSet};
use std::ops::ControlFlow;
use std::sync::Arc;

use schemascope_core::{Catalog, ColumnInfo, ForeignKey, TableInfo, TableKind};
use serde::{Deserialize, Serialize};
use sqlparser::ast::visit_relations;
use sqlparser::dialect::SQLiteDialect;
use sqlparser::parser::Parser;

use crate::config::RetrievalConfig;
use crate::dense::Encoder;
use crate::generate::{TableData, generate_docs};
use crate::notes::ColumnNotes;
use crate::parse::parse_docs;
use crate::retrieve::{SchemaIndex, Strategy};

/// Failures reading the evaluation inputs.
#[derive(Debug, thiserror::Error)]
pub enum EvalError {
    /// `tables.json` or the questions file is not what Spider ships.
    #[error("{what} is not valid Spider JSON: {source}")]
    Json {
        /// Which input.
        what: &'static str,
        /// The parser's message.
        source: serde_json::Error,
    },
    /// A column or foreign key points outside its database.
    #[error("database {db_id}: {message}")]
    Inconsistent {
        /// The database.
        db_id: String,
        /// What is wrong.
        message: String,
    },
}

/// A gold query sqlparser could not read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("gold SQL does not parse: {0}")]
pub struct GoldSqlError(pub String);

/// One Spider database as a catalog.
#[derive(Debug, Clone, PartialEq)]
pub struct SpiderDatabase {
    /// Spider's `db_id`.
    pub db_id: String,
    /// Its tables (schema only: no rows).
    pub catalog: Catalog,
    /// What `column_names` says of a column beyond its name (BIRD's `lactate dehydrogenase`
    /// for `LDH`; Spider's `singer id` for `Singer_ID` says nothing more and is left out).
    pub descriptions: ColumnNotes,
}

/// One half of a question set: the half retrieval may be tuned on, or the half kept from it,
/// whose figures say how retrieval does on questions nobody looked at.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Split {
    /// Tuned on.
    Tune,
    /// Never tuned on.
    Heldout,
}

impl Split {
    /// The half `question` is in: by the parity of the FNV-1a hash of its text, so that the
    /// split is the same on every machine and for every version, whatever the file's order.
    pub fn of(question: &str) -> Self {
        let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
        for byte in question.as_bytes() {
            hash ^= u64::from(*byte);
            hash = hash.wrapping_mul(0x0100_0000_01b3);
        }
        if hash.is_multiple_of(2) { Self::Tune } else { Self::Heldout }
    }
}

/// One Spider question.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize, Serialize)]
pub struct SpiderQuestion {
    /// The database it is asked of.
    pub db_id: String,
    /// The natural-language question.
    pub question: String,
    /// The gold SQL (`SQL` in BIRD's files).
    #[serde(alias = "SQL")]
    pub query: String,
    /// BIRD's external knowledge for the question (`evidence`), which its models are given.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub evidence: Option<String>,
}

#[derive(Deserialize)]
struct RawDatabase {
    db_id: String,
    table_names_original: Vec<String>,
    column_names_original: Vec<(i64, String)>,
    /// The same columns named in words.
    #[serde(default)]
    column_names: Vec<(i64, String)>,
    column_types: Vec<String>,
    #[serde(default)]
    primary_keys: Vec<serde_json::Value>,
    #[serde(default)]
    foreign_keys: Vec<(usize, usize)>,
}

/// Reads Spider's `tables.json` into one catalog per database (tables in name order; nullable
/// unless part of the primary key, which Spider does not record otherwise).
pub fn spider_databases(tables_json: &str) -> Result<Vec<SpiderDatabase>, EvalError> {
    let raw: Vec<RawDatabase> = serde_json::from_str(tables_json)
        .map_err(|source| EvalError::Json { what: "tables.json", source })?;
    raw.into_iter().map(to_database).collect()
}

fn to_database(raw: RawDatabase) -> Result<SpiderDatabase, EvalError> {
    let inconsistent =
        |message: String| EvalError::Inconsistent { db_id: raw.db_id.clone(), message };
    let mut tables: Vec<TableInfo> = raw
        .table_names_original
        .iter()
        .map(|name| TableInfo {
            name: name.clone(),
            kind: TableKind::Table,
            columns: Vec::new(),
            primary_key: Vec::new(),
            foreign_keys: Vec::new(),
            row_count: None,
            row_count_estimated: false,
            comment: None,
        })
        .collect();
    // Column index → (table index, column name); index 0 is Spider's `*`.
    let mut columns: Vec<Option<(usize, String)>> =
        Vec::with_capacity(raw.column_names_original.len());
    let mut descriptions = ColumnNotes::new();
    for (i, (table, name)) in raw.column_names_original.iter().enumerate() {
        let Ok(t) = usize::try_from(*table) else {
            columns.push(None);
            continue;
        };
        let ty = raw.column_types.get(i).map_or(String::new(), |t| t.to_ascii_uppercase());
        let target = tables
            .get_mut(t)
            .ok_or_else(|| inconsistent(format!("column {name} names table {t}")))?;
        let target_name = target.name.clone();
        target.columns.push(ColumnInfo {
            name: name.clone(),
            declared_type: ty,
            nullable: true,
            comment: None,
            base_type: None,
        });
        columns.push(Some((t, name.clone())));
        if let Some((_, words)) = raw.column_names.get(i) {
            let folded = |text: &str| {
                text.chars().filter(char::is_ascii_alphanumeric).collect::<String>().to_lowercase()
            };
            if folded(words) != folded(name) {
                descriptions.insert(&target_name, name, words.clone());
            }
        }
    }
    let column = |i: usize| {
        columns.get(i).and_then(|c| c.clone()).ok_or_else(|| inconsistent(format!("no column {i}")))
    };
    for pk in &raw.primary_keys {
        // Spider writes a column index, newer releases a list of them for composite keys.
        let ids: Vec<usize> = match pk {
            serde_json::Value::Array(a) => {
                a.iter().filter_map(|v| v.as_u64()).map(|v| v as usize).collect()
            }
            v => v.as_u64().map(|v| vec![v as usize]).unwrap_or_default(),
        };
        for id in ids {
            let (t, name) = column(id)?;
            let table = &mut tables[t];
            table.primary_key.push(name.clone());
            if let Some(c) = table.columns.iter_mut().find(|c| c.name == name) {
                c.nullable = false;
            }
        }
    }
    for &(from, to) in &raw.foreign_keys {
        let (ft, fname) = column(from)?;
        let (tt, tname) = column(to)?;
        let referenced_table = tables[tt].name.clone();
        tables[ft].foreign_keys.push(ForeignKey {
            columns: vec![fname],
            referenced_table,
            referenced_columns: vec![tname],
        });
    }
    tables.sort_by(|a, b| a.name.cmp(&b.name));
    Ok(SpiderDatabase { db_id: raw.db_id, catalog: Catalog { tables }, descriptions })
}

/// Reads a Spider questions file (`dev.json` and its kin).
pub fn spider_questions(json: &str) -> Result<Vec<SpiderQuestion>, EvalError> {
    serde_json::from_str(json).map_err(|source| EvalError::Json { what: "questions file", source })
}

/// All databases' tables in one catalog, each named `db_id.table` to keep them apart.
pub fn pooled_catalog(databases: &[SpiderDatabase]) -> Catalog {
    let mut tables = Vec::new();
    for db in databases {
        let qualify = |name: &str| format!("{}.{name}", db.db_id);
        for t in &db.catalog.tables {
            let mut t = t.clone();
            t.name = qualify(&t.name);
            for fk in &mut t.foreign_keys {
                fk.referenced_table = qualify(&fk.referenced_table);
            }
            tables.push(t);
        }
    }
    tables.sort_by(|a, b| a.name.cmp(&b.name));
    Catalog { tables }
}

/// The tables a query reads — FROM and JOIN in every subquery and set operation, aliases
/// resolved — lowercase, sorted, without repeats.
pub fn gold_tables(sql: &str) -> Result<Vec<String>, GoldSqlError> {
    let statements =
        Parser::parse_sql(&SQLiteDialect {}, sql).map_err(|e| GoldSqlError(e.to_string()))?;
    let mut tables = BTreeSet::new();
    let _ = visit_relations(&statements, |name| {
        if let Some(last) = name.0.last() {
            let text = last.to_string();
            tables.insert(text.trim_matches(['"', '`', '[', ']']).to_ascii_lowercase());
        }
        ControlFlow::<()>::Continue(())
    });
    Ok(tables.into_iter().collect())
}

/// Each database alone, or all pooled.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub enum Setting {
    /// One index per database; a question searches its own database.
    PerDatabase,
    /// One index over every database's tables.
    Pooled,
}

/// Evaluation settings.
#[derive(Debug, Clone)]
pub struct EvalOptions {
    /// K of the @K metrics (also the retrieval top-K).
    pub k: usize,
    /// Retrieval configuration (the hybrid decisions use it as is).
    pub config: RetrievalConfig,
    /// The embedding model, to rank by meaning as well as by words.
    pub encoder: Option<Arc<dyn Encoder>>,
}

impl Default for EvalOptions {
    fn default() -> Self {
        Self { k: 5, config: RetrievalConfig::default(), encoder: None }
    }
}

/// The metrics of one setting.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct EvalReport {
    /// Per database or pooled.
    pub setting: Setting,
    /// K.
    pub k: usize,
    /// True when chunks were ranked by meaning (an embedding model) as well as by words.
    pub semantic: bool,
    /// Questions evaluated (gold SQL parsed, gold tables found).
    pub questions: usize,
    /// Databases searched.
    pub databases: usize,
    /// Tables per searched schema, on average.
    pub avg_tables: f64,
    /// Gold queries sqlparser could not read (skipped).
    pub gold_parse_failures: usize,
    /// Questions whose gold tables are not in the catalog (skipped).
    pub gold_unknown_tables: usize,
    /// Share of gold tables among the ranked tables.
    pub recall_at_k: f64,
    /// Share of ranked tables that are gold.
    pub precision_at_k: f64,
    /// Mean reciprocal rank of the first gold table among the ranked tables.
    pub mrr: f64,
    /// Questions whose gold tables are all among the ranked tables.
    pub all_gold_at_k: f64,
    /// Share of gold tables in the hybrid context (ranked, FK-expanded, or full).
    pub context_recall: f64,
    /// Mean tokens of the full schema.
    pub avg_full_tokens: f64,
    /// Mean tokens of the hybrid context.
    pub avg_context_tokens: f64,
    /// Mean over questions of `1 − context / full`.
    pub reduction: f64,
    /// Questions per strategy (`focused`, or the full-schema reason).
    pub strategies: BTreeMap<String, usize>,
    /// The first few gold queries that failed to parse, with the error.
    pub parse_failure_examples: Vec<(String, String)>,
}

/// Builds the index of one catalog from generated docs, as the CLI would for a fresh source.
pub fn index_from_generated_docs(
    catalog: Catalog,
    name: &str,
    config: RetrievalConfig,
) -> SchemaIndex {
    let files = generate_docs(&catalog, name, |_| TableData::default());
    let pairs: Vec<(&str, &str)> =
        files.iter().map(|f| (f.name.as_str(), f.text.as_str())).collect();
    let (docs, _) = parse_docs(&pairs);
    SchemaIndex::build(catalog, docs, &ColumnNotes::new(), config).0
}

/// Runs the evaluation of `questions` over `databases` in one setting.
pub fn evaluate(
    databases: &[SpiderDatabase],
    questions: &[SpiderQuestion],
    setting: Setting,
    options: &EvalOptions,
) -> EvalReport {
    let mut config = options.config.clone();
    config.top_k = options.k;
    let wanted: BTreeSet<&str> = questions.iter().map(|q| q.db_id.as_str()).collect();
    let indexes: BTreeMap<String, SchemaIndex> = match setting {
        Setting::PerDatabase => databases
            .iter()
            .filter(|db| wanted.contains(db.db_id.as_str()))
            .map(|db| {
                (
                    db.db_id.clone(),
                    index_from_generated_docs(db.catalog.clone(), &db.db_id, config.clone()),
                )
            })
            .collect(),
        Setting::Pooled => BTreeMap::from([(
            String::new(),
            index_from_generated_docs(pooled_catalog(databases), "spider", config.clone()),
        )]),
    };
    let indexes: BTreeMap<String, SchemaIndex> = match &options.encoder {
        None => indexes,
        Some(encoder) => indexes
            .into_iter()
            .filter_map(|(name, index)| Some((name, index.with_encoder(encoder.clone()).ok()?)))
            .collect(),
    };
    let mut acc = Accumulator::default();
    for q in questions {
        let key = match setting {
            Setting::PerDatabase => q.db_id.as_str(),
            Setting::Pooled => "",
        };
        let Some(index) = indexes.get(key) else {
            acc.unknown += 1;
            continue;
        };
        let gold = match gold_tables(&q.query) {
            Ok(g) => g,
            Err(e) => {
                acc.parse_failures += 1;
                if acc.failure_examples.len() < 5 {
                    acc.failure_examples.push((q.query.clone(), e.0));
                }
                continue;
            }
        };
        let gold: Vec<String> = match setting {
            Setting::PerDatabase => gold,
            Setting::Pooled => {
                gold.iter().map(|t| format!("{}.{t}", q.db_id.to_ascii_lowercase())).collect()
            }
        };
        if gold.is_empty() || gold.iter().any(|g| index.catalog().table(g).is_none()) {
            acc.unknown += 1;
            continue;
        }
        acc.add(index, &q.question, &gold, options.k);
    }
    let n = acc.questions.max(1) as f64;
    EvalReport {
        setting,
        k: options.k,
        semantic: options.encoder.is_some(),
        questions: acc.questions,
        databases: match setting {
            Setting::PerDatabase => indexes.len(),
            Setting::Pooled => databases.len(),
        },
        avg_tables: indexes.values().map(|i| i.catalog().tables.len() as f64).sum::<f64>()
            / indexes.len().max(1) as f64,
        gold_parse_failures: acc.parse_failures,
        gold_unknown_tables: acc.unknown,
        recall_at_k: acc.recall / n,
        precision_at_k: acc.precision / n,
        mrr: acc.mrr / n,
        all_gold_at_k: acc.all_gold / n,
        context_recall: acc.context_recall / n,
        avg_full_tokens: acc.full_tokens / n,
        avg_context_tokens: acc.context_tokens / n,
        reduction: acc.reduction / n,
        strategies: acc.strategies,
        parse_failure_examples: acc.failure_examples,
    }
}

#[derive(Default)]
struct Accumulator {
    questions: usize,
    parse_failures: usize,
    unknown: usize,
    recall: f64,
    precision: f64,
    mrr: f64,
    all_gold: f64,
    context_recall: f64,
    full_tokens: f64,
    context_tokens: f64,
    reduction: f64,
    strategies: BTreeMap<String, usize>,
    failure_examples: Vec<(String, String)>,
}

impl Accumulator {
    fn add(&mut self, index: &SchemaIndex, question: &str, gold: &[String], k: usize) {
        let is_gold = |t: &str| gold.iter().any(|g| g.eq_ignore_ascii_case(t));
        let mut ranked: Vec<&str> = Vec::new();
        for c in index.search(question, k) {
            if !ranked.contains(&c.chunk.table.as_str()) {
                ranked.push(&c.chunk.table);
            }
        }
        let hits = ranked.iter().filter(|t| is_gold(t)).count();
        self.questions += 1;
        self.recall += hits as f64 / gold.len() as f64;
        if !ranked.is_empty() {
            self.precision += hits as f64 / ranked.len() as f64;
        }
        if let Some(rank) = ranked.iter().position(|t| is_gold(t)) {
            self.mrr += 1.0 / (rank + 1) as f64;
        }
        if hits == gold.len() {
            self.all_gold += 1.0;
        }
        let retrieval = index.retrieve(question, Some(k));
        let context = index.render(&retrieval, None);
        let strategy = match retrieval.strategy {
            Strategy::Focused => {
                let seen = retrieval
                    .tables
                    .iter()
                    .chain(&retrieval.expanded_tables)
                    .filter(|t| is_gold(t))
                    .count();
                self.context_recall += seen as f64 / gold.len() as f64;
                "focused".to_string()
            }
            Strategy::Full(reason) => {
                self.context_recall += 1.0;
                let json = serde_json::to_value(reason).unwrap_or_default();
                format!("full:{}", json.get("reason").and_then(|r| r.as_str()).unwrap_or("unknown"))
            }
        };
        *self.strategies.entry(strategy).or_default() += 1;
        let full = context.full_schema_tokens as f64;
        self.full_tokens += full;
        self.context_tokens += context.tokens as f64;
        if full > 0.0 {
            self.reduction += 1.0 - context.tokens as f64 / full;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn gold_tables_cover_joins_subqueries_set_operations_and_aliases() {
        assert_eq!(gold_tables("SELECT count(*) FROM singer").unwrap(), vec!["singer"]);
        assert_eq!(
            gold_tables("SELECT T2.name FROM singer_in_concert AS T1 JOIN singer AS T2 ON T1.singer_id = T2.singer_id").unwrap(),
            vec!["singer", "singer_in_concert"]
        );
        assert_eq!(
            gold_tables(
                "SELECT name FROM stadium WHERE stadium_id NOT IN (SELECT stadium_id FROM concert)"
            )
            .unwrap(),
            vec!["concert", "stadium"]
        );
        assert_eq!(
            gold_tables("SELECT country FROM singer WHERE age > 40 INTERSECT SELECT Country FROM SINGER WHERE age < 30").unwrap(),
            vec!["singer"]
        );
        assert_eq!(
            gold_tables("SELECT T1.Name FROM (SELECT * FROM Dogs) AS T1 EXCEPT SELECT name FROM Owners WHERE state = \"VA\"").unwrap(),
            vec!["dogs", "owners"]
        );
        assert!(gold_tables("SELECT FROM WHERE").is_err());
    }

    #[test]
    fn spider_tables_become_catalogs_with_keys() {
        let json = r#"[{"db_id": "concert_singer",
            "table_names_original": ["stadium", "concert"],
            "column_names_original": [[-1, "*"], [0, "Stadium_ID"], [0, "Name"], [1, "concert_ID"], [1, "Stadium_ID"]],
            "column_types": ["text", "number", "text", "number", "text"],
            "primary_keys": [1, 3], "foreign_keys": [[4, 1]]}]"#;
        let dbs = spider_databases(json).expect("valid");
        let concert = dbs[0].catalog.table("concert").expect("concert");
        assert_eq!(concert.primary_key, vec!["concert_ID"]);
        assert_eq!(concert.foreign_keys[0].referenced_table, "stadium");
        assert_eq!(concert.columns[1].declared_type, "TEXT");
        assert!(!concert.columns[0].nullable && concert.columns[1].nullable);
        let pooled = pooled_catalog(&dbs);
        assert_eq!(pooled.table_names(), vec!["concert_singer.concert", "concert_singer.stadium"]);
        assert_eq!(pooled.neighbours("concert_singer.stadium"), vec!["concert_singer.concert"]);
    }

    #[test]
    fn the_split_is_fixed_by_the_question_text_and_halves_the_questions() {
        // FNV-1a of "" is the offset basis, which is odd.
        assert_eq!(Split::of(""), Split::Heldout);
        let halves: Vec<Split> = (0..1000).map(|i| Split::of(&format!("question {i}"))).collect();
        let tune = halves.iter().filter(|s| **s == Split::Tune).count();
        assert!((450..=550).contains(&tune), "{tune} of 1000");
        assert_eq!(
            Split::of("How many singers do we have?"),
            Split::of("How many singers do we have?")
        );
    }
}
