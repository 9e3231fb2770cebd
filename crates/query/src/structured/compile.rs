//! Compiling a structured query to SQL for SQLite or PostgreSQL: quoted identifiers, joins
//! along the shortest foreign-key paths between the tables the fields use, GROUP BY the
//! dimensions when anything is aggregated, ORDER BY sort priority, filters as bound parameters,
//! TOP as a ranked subquery, and date functions per dialect.
//!
//! **Same rows in both dialects.** Output expressions are written so that SQLite and
//! PostgreSQL return equal values: decimals and averages as double precision, date parts as
//! integers, truncated dates and timestamps as ISO text, MATCH case-insensitive (`LIKE` in
//! SQLite, `ILIKE` in PostgreSQL). PostgreSQL parameters carry an explicit cast from the JSON
//! value's type, so they bind whatever the column type. TOP ranks over all rows (other filters
//! do not apply inside it), and ties are broken by the field's value.

use std::collections::VecDeque;

use chrono::NaiveDate;
use schemascope_core::{Catalog, ColumnInfo, TableInfo};
use serde_json::Value;

use super::dates::relative_range;
use super::resolve::resolve;
use super::{
    Filter, Function, QuantitativeFilterType, SortDirection, StructuredQuery, TopDirection,
};
use crate::types::ColumnType;
use crate::{FunctionFamily, SqlDialect};

/// SQL to run, with its parameters in order (`?1`… in SQLite, `$1`… in PostgreSQL).
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct CompiledQuery {
    /// The statement.
    pub sql: String,
    /// Parameter values, in placeholder order.
    pub params: Vec<Value>,
}

/// Why a structured query cannot be compiled.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum CompileError {
    /// A caption resolves to no column (or several).
    #[error("{path}: {message}")]
    Field {
        /// The JSON path.
        path: String,
        /// What is wrong.
        message: String,
    },
    /// No chain of foreign keys connects two tables the query uses.
    #[error("no foreign-key path joins {from} and {to}")]
    NoJoinPath {
        /// A table already joined.
        from: String,
        /// The table that cannot be reached.
        to: String,
    },
    /// The dialect lacks the function.
    #[error("{0}")]
    Unsupported(String),
    /// A filter is incomplete or malformed (validation reports these first).
    #[error("{path}: {message}")]
    Invalid {
        /// The JSON path.
        path: String,
        /// What is wrong.
        message: String,
    },
}

/// Compiles `query` for `dialect`. `today` anchors relative date filters without `anchorDate`.
pub fn compile(
    query: &StructuredQuery,
    catalog: &Catalog,
    dialect: SqlDialect,
    today: NaiveDate,
) -> Result<CompiledQuery, CompileError> {
    if !dialect.rules().compiles_structured() {
        return Err(CompileError::Unsupported(format!(
            "structured queries compile to SQLite and PostgreSQL; on {dialect} send SQL"
        )));
    }
    let mut c = Compiler { catalog, dialect, params: Vec::new() };
    let mut fields = Vec::new();
    for (i, f) in query.fields.iter().enumerate() {
        let (t, col) = c.column(&f.field_caption, &format!("fields[{i}].fieldCaption"))?;
        fields.push((t, col, f));
    }
    let mut tables: Vec<&TableInfo> = Vec::new();
    let mut filter_cols = Vec::new();
    for (i, filter) in query.filters.iter().enumerate() {
        let (t, col) =
            c.column(&filter.field().field_caption, &format!("filters[{i}].field.fieldCaption"))?;
        filter_cols.push((t, col));
    }
    for (t, _, _) in &fields {
        push_table(&mut tables, t);
    }
    for (i, (t, _)) in filter_cols.iter().enumerate() {
        if !matches!(query.filters[i], Filter::Top { .. }) {
            push_table(&mut tables, t);
        }
    }
    let from = c.joins_clause(&tables)?;
    let mut select = Vec::new();
    let mut group = Vec::new();
    let mut aggregated = false;
    for (t, col, f) in &fields {
        let expr = c.output(t, col, f.function)?;
        let alias = f.field_alias.clone().unwrap_or_else(|| match f.function {
            Some(func) => format!("{}({})", func.name(), f.field_caption),
            None => f.field_caption.clone(),
        });
        if f.function.is_some_and(Function::is_aggregate) {
            aggregated = true;
        } else {
            group.push(expr.clone());
        }
        select.push(format!("{expr} AS {}", quote(&alias)));
    }
    let mut wheres = Vec::new();
    let mut havings = Vec::new();
    for (i, filter) in query.filters.iter().enumerate() {
        let (t, col) = filter_cols[i];
        let field = filter.field();
        let target = c.raw(t, col, field.function)?;
        let condition = c.filter(filter, &target, t, col, i, today)?;
        if field.function.is_some_and(Function::is_aggregate) {
            havings.push(condition);
        } else {
            wheres.push(condition);
        }
    }
    let mut sql = format!("SELECT {} FROM {from}", select.join(", "));
    if !wheres.is_empty() {
        sql.push_str(&format!(" WHERE {}", wheres.join(" AND ")));
    }
    if (aggregated || !havings.is_empty()) && !group.is_empty() {
        sql.push_str(&format!(" GROUP BY {}", group.join(", ")));
    }
    if !havings.is_empty() {
        sql.push_str(&format!(" HAVING {}", havings.join(" AND ")));
    }
    let mut sorted: Vec<(usize, &super::Field)> = query
        .fields
        .iter()
        .enumerate()
        .filter(|(_, f)| f.sort_direction.is_some() || f.sort_priority.is_some())
        .collect();
    sorted.sort_by_key(|(i, f)| (f.sort_priority.unwrap_or(u32::MAX), *i));
    if !sorted.is_empty() {
        let terms: Vec<String> = sorted
            .iter()
            .map(|(i, f)| {
                let dir =
                    if f.sort_direction == Some(SortDirection::Desc) { "DESC" } else { "ASC" };
                format!("{} {dir}", select_expr(&select[*i]))
            })
            .collect();
        sql.push_str(&format!(" ORDER BY {}", terms.join(", ")));
    }
    if let Some(n) = query.options.row_limit {
        sql.push_str(&format!(" LIMIT {n}"));
    }
    Ok(CompiledQuery { sql, params: c.params })
}

/// The expression part of `expr AS "alias"`.
fn select_expr(item: &str) -> &str {
    item.rsplit_once(" AS ").map_or(item, |(e, _)| e)
}

fn push_table<'c>(tables: &mut Vec<&'c TableInfo>, t: &'c TableInfo) {
    if !tables.iter().any(|x| x.name == t.name) {
        tables.push(t);
    }
}

/// `name` as a quoted identifier.
fn quote(name: &str) -> String {
    format!("\"{}\"", name.replace('"', "\"\""))
}

struct Compiler<'c> {
    catalog: &'c Catalog,
    dialect: SqlDialect,
    params: Vec<Value>,
}

impl<'c> Compiler<'c> {
    fn column(
        &self,
        caption: &str,
        path: &str,
    ) -> Result<(&'c TableInfo, &'c ColumnInfo), CompileError> {
        resolve(self.catalog, caption)
            .map_err(|issue| CompileError::Field { path: path.to_string(), message: issue.message })
    }

    /// Whose functions the compiled SQL uses.
    fn family(&self) -> FunctionFamily {
        self.dialect.rules().functions()
    }

    fn table_ref(&self, name: &str) -> String {
        match name.split_once('.') {
            Some((schema, table)) if self.dialect.rules().has_schemas() => {
                format!("{}.{}", quote(schema), quote(table))
            }
            _ => quote(name),
        }
    }

    fn col(&self, t: &TableInfo, c: &ColumnInfo) -> String {
        format!("{}.{}", self.table_ref(&t.name), quote(&c.name))
    }

    /// A bound parameter; PostgreSQL's carries a cast from the JSON type.
    fn param(&mut self, value: Value) -> String {
        let n = self.params.len() + 1;
        let cast = match &value {
            Value::Number(x) if x.is_i64() || x.is_u64() => "BIGINT",
            Value::Number(_) => "DOUBLE PRECISION",
            Value::Bool(_) => "BOOLEAN",
            _ => "TEXT",
        };
        self.params.push(value);
        self.dialect.rules().typed_param(n, cast)
    }

    /// A date parameter compared with a date/time column.
    fn date_param(&mut self, d: NaiveDate) -> String {
        let p = self.param(Value::String(d.format("%Y-%m-%d").to_string()));
        match self.family() {
            FunctionFamily::Sqlite => p,
            FunctionFamily::Postgres => format!("CAST({p} AS TIMESTAMP)"),
            FunctionFamily::MySql => format!("CAST({p} AS DATETIME)"),
        }
    }

    /// The field's value for filtering and ranking (no output casts).
    fn raw(
        &self,
        t: &TableInfo,
        c: &ColumnInfo,
        f: Option<Function>,
    ) -> Result<String, CompileError> {
        let x = self.col(t, c);
        let lite = self.family() == FunctionFamily::Sqlite;
        let part = |fmt: &str, field: &str| {
            if lite {
                format!("CAST(strftime('{fmt}', {x}) AS INTEGER)")
            } else {
                format!("CAST(EXTRACT({field} FROM {x}) AS INTEGER)")
            }
        };
        let trunc = |lite_expr: String, unit: &str| {
            if lite {
                lite_expr
            } else {
                format!("to_char(date_trunc('{unit}', {x}), 'YYYY-MM-DD')")
            }
        };
        Ok(match f {
            None => x.clone(),
            Some(Function::Sum) => format!("SUM({x})"),
            Some(Function::Avg) => format!("AVG({x})"),
            Some(Function::Count) => format!("COUNT({x})"),
            Some(Function::Countd) => format!("COUNT(DISTINCT {x})"),
            Some(Function::Min) => format!("MIN({x})"),
            Some(Function::Max) => format!("MAX({x})"),
            Some(Function::Median) if lite => {
                return Err(CompileError::Unsupported("MEDIAN is not available in SQLite".into()));
            }
            Some(Function::Median) => format!("percentile_cont(0.5) WITHIN GROUP (ORDER BY {x})"),
            Some(Function::Var) if lite => var_sqlite(&x),
            Some(Function::Var) => format!("var_samp({x})"),
            Some(Function::Stdev) if lite => format!("sqrt({})", var_sqlite(&x)),
            Some(Function::Stdev) => format!("stddev_samp({x})"),
            Some(Function::Year) => part("%Y", "YEAR"),
            Some(Function::Quarter) if lite => {
                format!("((CAST(strftime('%m', {x}) AS INTEGER) + 2) / 3)")
            }
            Some(Function::Quarter) => part("", "QUARTER"),
            Some(Function::Month) => part("%m", "MONTH"),
            Some(Function::Day) => part("%d", "DAY"),
            Some(Function::TruncYear) => trunc(format!("strftime('%Y-01-01', {x})"), "year"),
            Some(Function::TruncQuarter) => trunc(
                format!(
                    "printf('%s-%02d-01', strftime('%Y', {x}), ((CAST(strftime('%m', {x}) AS INTEGER) - 1) / 3) * 3 + 1)"
                ),
                "quarter",
            ),
            Some(Function::TruncMonth) => trunc(format!("strftime('%Y-%m-01', {x})"), "month"),
            Some(Function::TruncWeek) => {
                trunc(format!("date({x}, '-6 days', 'weekday 1')"), "week")
            }
            Some(Function::TruncDay) => trunc(format!("date({x})"), "day"),
        })
    }

    /// The field as a result column: equal values in both dialects (see the module docs).
    fn output(
        &self,
        t: &TableInfo,
        c: &ColumnInfo,
        f: Option<Function>,
    ) -> Result<String, CompileError> {
        let raw = self.raw(t, c, f)?;
        if self.family() == FunctionFamily::Sqlite {
            return Ok(raw);
        }
        let decimal = is_decimal(&c.declared_type);
        let temporal = ColumnType::of(c) == ColumnType::Temporal;
        Ok(match f {
            Some(Function::Avg | Function::Median | Function::Var | Function::Stdev) => {
                format!("CAST({raw} AS DOUBLE PRECISION)")
            }
            Some(Function::Sum | Function::Min | Function::Max) | None if decimal => {
                format!("CAST({raw} AS DOUBLE PRECISION)")
            }
            Some(Function::Min | Function::Max) | None if temporal => {
                format!("to_char({raw}, 'YYYY-MM-DD HH24:MI:SS')")
            }
            _ => raw,
        })
    }

    fn filter(
        &mut self,
        filter: &Filter,
        target: &str,
        t: &TableInfo,
        c: &ColumnInfo,
        i: usize,
        today: NaiveDate,
    ) -> Result<String, CompileError> {
        let invalid = |message: &str| CompileError::Invalid {
            path: format!("filters[{i}]"),
            message: message.to_string(),
        };
        Ok(match filter {
            Filter::Set { values, exclude, .. } => {
                if values.is_empty() {
                    return Ok(if *exclude { "1 = 1".into() } else { "1 = 0".into() });
                }
                let params: Vec<String> = values.iter().map(|v| self.param(v.clone())).collect();
                format!("{target} {}IN ({})", if *exclude { "NOT " } else { "" }, params.join(", "))
            }
            Filter::Top { field, how_many, direction, field_to_measure } => {
                let (mt, mc) = self.column(
                    &field_to_measure.field_caption,
                    &format!("filters[{i}].fieldToMeasure.fieldCaption"),
                )?;
                let measure = self.raw(mt, mc, field_to_measure.function)?;
                let from =
                    self.joins_clause(&if t.name == mt.name { vec![t] } else { vec![t, mt] })?;
                let inner = self.raw(t, c, field.function)?;
                let dir = if *direction == TopDirection::Top { "DESC" } else { "ASC" };
                format!(
                    "{target} IN (SELECT {inner} FROM {from} GROUP BY {inner} ORDER BY {measure} {dir}, {inner} ASC LIMIT {how_many})"
                )
            }
            Filter::Match { starts_with, ends_with, contains, exact_match, exclude, .. } => {
                let like = match self.family() {
                    // MySQL's LIKE follows the column's collation, case-insensitive by default.
                    FunctionFamily::Sqlite | FunctionFamily::MySql => "LIKE",
                    FunctionFamily::Postgres => "ILIKE",
                };
                let mut parts = Vec::new();
                for (pattern, before, after) in
                    [(starts_with, "", "%"), (ends_with, "%", ""), (contains, "%", "%")]
                {
                    if let Some(p) = pattern {
                        let p =
                            self.param(Value::String(format!("{before}{}{after}", escape_like(p))));
                        parts.push(format!("{target} {like} {p} ESCAPE '\\'"));
                    }
                }
                if let Some(exact) = exact_match {
                    let p = self.param(Value::String(exact.clone()));
                    parts.push(format!("{target} = {p}"));
                }
                if parts.is_empty() {
                    return Err(invalid(
                        "MATCH needs startsWith, endsWith, contains or exactMatch",
                    ));
                }
                let all = format!("({})", parts.join(" AND "));
                if *exclude { format!("NOT {all}") } else { all }
            }
            Filter::QuantitativeNumerical { quantitative_filter_type: kind, min, max, .. } => {
                let bound =
                    |v: Option<f64>, op: &str, this: &mut Self| -> Result<String, CompileError> {
                        let v = v.ok_or_else(|| invalid("missing bound"))?;
                        let json = if v.fract() == 0.0 && v.abs() < 9e15 {
                            Value::from(v as i64)
                        } else {
                            Value::from(v)
                        };
                        Ok(format!("{target} {op} {}", this.param(json)))
                    };
                match kind {
                    QuantitativeFilterType::Range => {
                        format!("({} AND {})", bound(*min, ">=", self)?, bound(*max, "<=", self)?)
                    }
                    QuantitativeFilterType::Min => bound(*min, ">=", self)?,
                    QuantitativeFilterType::Max => bound(*max, "<=", self)?,
                    QuantitativeFilterType::OnlyNull => format!("{target} IS NULL"),
                    QuantitativeFilterType::OnlyNonNull => format!("{target} IS NOT NULL"),
                }
            }
            Filter::QuantitativeDate { min_date, max_date, .. } => {
                let parse = |d: &str| {
                    NaiveDate::parse_from_str(d, "%Y-%m-%d")
                        .map_err(|_| invalid(&format!("{d} is not a YYYY-MM-DD date")))
                };
                let mut parts = Vec::new();
                if let Some(d) = min_date {
                    let p = self.date_param(parse(d)?);
                    parts.push(format!("{target} >= {p}"));
                }
                if let Some(d) = max_date {
                    let next = parse(d)?.succ_opt().ok_or_else(|| invalid("date out of range"))?;
                    let p = self.date_param(next);
                    parts.push(format!("{target} < {p}"));
                }
                if parts.is_empty() {
                    return Err(invalid("QUANTITATIVE_DATE needs minDate and/or maxDate"));
                }
                format!("({})", parts.join(" AND "))
            }
            Filter::Date { period_type, date_range_type, range_n, anchor_date, .. } => {
                let anchor = match anchor_date {
                    Some(d) => NaiveDate::parse_from_str(d, "%Y-%m-%d")
                        .map_err(|_| invalid(&format!("{d} is not a YYYY-MM-DD date")))?,
                    None => today,
                };
                let (start, end) =
                    relative_range(*period_type, *date_range_type, range_n.unwrap_or(1), anchor)
                        .ok_or_else(|| invalid("date out of range"))?;
                let (a, b) = (self.date_param(start), self.date_param(end));
                format!("({target} >= {a} AND {target} < {b})")
            }
        })
    }

    /// `FROM` with joins along the shortest foreign-key path from the tables already joined to
    /// each next table.
    fn joins_clause(&self, tables: &[&'c TableInfo]) -> Result<String, CompileError> {
        let Some(first) = tables.first() else {
            return Err(CompileError::Unsupported("a query needs at least one field".into()));
        };
        let mut joined: Vec<&TableInfo> = vec![first];
        let mut sql = self.table_ref(&first.name);
        for target in &tables[1..] {
            if joined.iter().any(|t| t.name == target.name) {
                continue;
            }
            let path = self.path(&joined, target).ok_or_else(|| CompileError::NoJoinPath {
                from: first.name.clone(),
                to: target.name.clone(),
            })?;
            for (table, on) in path {
                if !joined.iter().any(|t| t.name == table.name) {
                    sql.push_str(&format!(" JOIN {} ON {on}", self.table_ref(&table.name)));
                    joined.push(table);
                }
            }
        }
        Ok(sql)
    }

    /// Breadth-first search over foreign keys (both directions) from any joined table to
    /// `target`: the tables to add, in order, each with its ON condition.
    fn path(
        &self,
        joined: &[&'c TableInfo],
        target: &TableInfo,
    ) -> Option<Vec<(&'c TableInfo, String)>> {
        let mut prev: Vec<(&'c TableInfo, Option<(usize, String)>)> =
            joined.iter().map(|t| (*t, None)).collect();
        let mut queue: VecDeque<usize> = (0..prev.len()).collect();
        while let Some(i) = queue.pop_front() {
            let here = prev[i].0;
            if here.name == target.name {
                let mut steps = Vec::new();
                let mut at = i;
                while let (t, Some((from, on))) = (&prev[at].0, &prev[at].1) {
                    steps.push((*t, on.clone()));
                    at = *from;
                }
                steps.reverse();
                return Some(steps);
            }
            for (next, on) in self.edges(here) {
                if !prev.iter().any(|(t, _)| t.name == next.name) {
                    prev.push((next, Some((i, on))));
                    queue.push_back(prev.len() - 1);
                }
            }
        }
        None
    }

    fn edges(&self, t: &'c TableInfo) -> Vec<(&'c TableInfo, String)> {
        let mut out = Vec::new();
        let on = |a: &TableInfo, ac: &[String], b: &TableInfo, bc: &[String]| {
            ac.iter()
                .zip(bc)
                .map(|(x, y)| {
                    format!(
                        "{}.{} = {}.{}",
                        self.table_ref(&a.name),
                        quote(x),
                        self.table_ref(&b.name),
                        quote(y)
                    )
                })
                .collect::<Vec<_>>()
                .join(" AND ")
        };
        for fk in &t.foreign_keys {
            if let Some(other) = self.catalog.table(&fk.referenced_table)
                && other.name != t.name
            {
                out.push((other, on(t, &fk.columns, other, &fk.referenced_columns)));
            }
        }
        for incoming in self.catalog.referenced_by(&t.name) {
            if incoming.table.name != t.name {
                out.push((
                    incoming.table,
                    on(incoming.table, &incoming.key.columns, t, &incoming.key.referenced_columns),
                ));
            }
        }
        out
    }
}

fn var_sqlite(x: &str) -> String {
    format!(
        "((SUM(1.0 * {x} * {x}) - SUM(1.0 * {x}) * SUM(1.0 * {x}) / COUNT({x})) / (COUNT({x}) - 1))"
    )
}

fn is_decimal(declared: &str) -> bool {
    let t = declared.to_ascii_lowercase();
    ["numeric", "decimal", "real", "double", "float", "money"].iter().any(|k| t.contains(k))
}

fn escape_like(s: &str) -> String {
    s.replace('\\', "\\\\").replace('%', "\\%").replace('_', "\\_")
}
