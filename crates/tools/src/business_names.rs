//! What the source's semantic file tells validation about a name the schema lacks. A metric's
//! name (`average_basket`, `"average basket"`) stands for its SQL: the query is rewritten with
//! the expression in its place and is valid when the rewrite is — so `ask` runs it as meant. A
//! business word (`revenue`) gets the column it means as the suggestion.

use schemascope_core::{Catalog, ForeignKey};
use schemascope_docs::semantic::{Metric, Semantic, Target, Term};
use schemascope_query::sql::quote_name;
use schemascope_query::sql::source_offsets::{line_starts, offset_at};
use schemascope_query::{
    IssueKind, Location, QueryIssue, SqlDialect, TableColumn, ValidationReport,
};

use crate::result::ToolError;

/// `catalog` with the joins the semantic file (or dbt's tests) state as foreign keys, so that
/// validation takes a join the business declared for one that relates the right rows, and
/// suggests it to reach a column of another table.
pub(crate) fn with_declared_joins(catalog: &Catalog, semantic: &Semantic) -> Catalog {
    let mut catalog = catalog.clone();
    for join in &semantic.relationships {
        let (Some(from), Some(to)) = (&join.from.column, &join.to.column) else { continue };
        let Some(table) = catalog.tables.iter_mut().find(|t| t.name == join.from.table) else {
            continue;
        };
        let declared = table
            .foreign_keys
            .iter()
            .any(|fk| fk.referenced_table == join.to.table && fk.columns == [from.clone()]);
        if !declared {
            table.foreign_keys.push(ForeignKey {
                columns: vec![from.clone()],
                referenced_table: join.to.table.clone(),
                referenced_columns: vec![to.clone()],
            });
        }
    }
    catalog
}

/// Names one query may have expanded (each is one rewrite and one more validation at most).
const MAX_EXPANDED: usize = 32;

/// An unknown name in the query text, where it is written.
struct Written {
    /// Byte range of the identifier as written (quotes included).
    range: std::ops::Range<usize>,
    /// The identifier without its quotes.
    name: String,
}

/// `report` (of `sql`, invalid) with what the semantic file says of its unknown names: metric
/// names expanded when the rewrite (validated by `revalidate`) is valid, else said with the SQL
/// to write; business words pointed at the columns they mean.
pub(crate) fn with_business_names(
    report: ValidationReport,
    sql: &str,
    semantic: &Semantic,
    dialect: SqlDialect,
    revalidate: &dyn Fn(&str) -> Result<ValidationReport, ToolError>,
) -> Result<ValidationReport, ToolError> {
    let lines = line_starts(sql);
    let unknown = |issue: &QueryIssue| -> Option<Written> {
        let Some(Location::Position { line, column }) = issue.location else { return None };
        let at = offset_at(sql, &lines, line, column)?;
        identifier_at(sql, at)
    };
    // Unknown columns, and double-quoted names SQLite took for strings (`"average basket"`).
    let candidates = report
        .errors
        .iter()
        .filter(|i| i.kind == IssueKind::UnknownColumn)
        .chain(report.warnings.iter().filter(|i| i.kind == IssueKind::Portability));
    let mut expansions: Vec<(Written, &Metric)> = Vec::new();
    for issue in candidates {
        if expansions.len() == MAX_EXPANDED {
            break;
        }
        if let Some(written) = unknown(issue)
            && let Some(metric) =
                semantic.metrics.iter().find(|m| same_name(&m.name, &written.name))
            && !expansions.iter().any(|(w, _)| w.range == written.range)
        {
            expansions.push((written, metric));
        }
    }
    if !expansions.is_empty() {
        let rewritten = expanded(sql, &expansions);
        let mut again = revalidate(&rewritten)?;
        if again.valid {
            if again.rewritten_query.is_none() {
                again.rewritten_query = Some(rewritten);
            }
            let mut said: Vec<(&str, &str)> = Vec::new();
            for (written, metric) in expansions.iter().rev() {
                if said.contains(&(written.name.as_str(), metric.name.as_str())) {
                    continue;
                }
                said.push((&written.name, &metric.name));
                again.warnings.insert(
                    0,
                    QueryIssue::new(
                        IssueKind::Portability,
                        format!(
                            "{} is the metric \"{}\" of the semantic file: expanded to {}",
                            written.name, metric.name, metric.sql
                        ),
                    ),
                );
            }
            return Ok(again);
        }
    }
    let mut report = report;
    for issue in report.errors.iter_mut().filter(|i| i.kind == IssueKind::UnknownColumn) {
        let Some(written) = unknown(issue) else { continue };
        if let Some(metric) = semantic.metrics.iter().find(|m| same_name(&m.name, &written.name)) {
            issue.message.push_str(&format!(
                "; {} is the metric \"{}\": write its SQL, {}",
                written.name, metric.name, metric.sql
            ));
            issue.suggestion = Some(metric.sql.clone());
            issue.fix_column = None;
        } else if let Some(term) = semantic.terms.iter().find(|t| names_term(t, &written.name)) {
            point_at_term(issue, &written.name, term, sql, dialect);
        }
    }
    // SQLite reads an unknown double-quoted name as a string: a business word so written would
    // filter or sort by a constant. It is the word's column that was meant.
    let mut literals = Vec::new();
    for warning in report.warnings.iter().filter(|w| w.kind == IssueKind::Portability) {
        let Some(written) = unknown(warning) else { continue };
        if !sql[written.range.clone()].starts_with('"') {
            continue;
        }
        if let Some(term) = semantic.terms.iter().find(|t| names_term(t, &written.name)) {
            let mut issue = QueryIssue::new(
                IssueKind::UnknownColumn,
                format!("\"{}\" is no column, so SQLite would read it as a string", written.name),
            )
            .at(warning.location.clone());
            point_at_term(&mut issue, &written.name, term, sql, dialect);
            literals.push(issue);
        }
    }
    if !literals.is_empty() {
        report.errors.extend(literals);
        report.valid = false;
        report.rewritten_query = None;
    }
    Ok(report)
}

/// The identifier that starts at byte `at` of `sql`: quoted (`"…"`, `` `…` ``, `[…]`, doubled
/// quotes inside) or plain (letters, digits, `_`, `$`).
fn identifier_at(sql: &str, at: usize) -> Option<Written> {
    let rest = sql.get(at..)?;
    let first = rest.chars().next()?;
    let close = match first {
        '"' => Some('"'),
        '`' => Some('`'),
        '[' => Some(']'),
        _ => None,
    };
    match close {
        Some(close) => {
            let mut name = String::new();
            let mut chars = rest.char_indices().skip(1).peekable();
            while let Some((i, c)) = chars.next() {
                if c == close {
                    if close != ']' && chars.peek().is_some_and(|(_, n)| *n == close) {
                        chars.next();
                        name.push(c);
                        continue;
                    }
                    return Some(Written { range: at..at + i + c.len_utf8(), name });
                }
                name.push(c);
            }
            None
        }
        None => {
            let end = rest
                .char_indices()
                .find(|(_, c)| !(c.is_alphanumeric() || *c == '_' || *c == '$'))
                .map_or(rest.len(), |(i, _)| i);
            (end > 0).then(|| Written { range: at..at + end, name: rest[..end].to_string() })
        }
    }
}

/// True when `a` and `b` are one name however it is spelled: case, spaces, underscores and
/// hyphens aside (`average basket`, `average_basket`, `AverageBasket`).
fn same_name(a: &str, b: &str) -> bool {
    let key = |s: &str| -> String {
        s.chars().filter(|c| c.is_alphanumeric()).flat_map(char::to_lowercase).collect()
    };
    let (a, b) = (key(a), key(b));
    !a.is_empty() && a == b
}

/// True when `name` is `term`'s word or one of its synonyms.
fn names_term(term: &Term, name: &str) -> bool {
    std::iter::once(&term.name).chain(&term.synonyms).any(|word| same_name(word, name))
}

/// `sql` with each metric's name replaced by its expression in parentheses, and named after
/// the metric where it is a select item of its own (`SELECT …, average_basket FROM`).
fn expanded(sql: &str, expansions: &[(Written, &Metric)]) -> String {
    let mut ordered: Vec<&(Written, &Metric)> = expansions.iter().collect();
    ordered.sort_by_key(|(w, _)| std::cmp::Reverse(w.range.start));
    let mut out = sql.to_string();
    for (written, metric) in ordered {
        let alone = is_select_item(sql, &written.range);
        let alias =
            if alone { format!(" AS {}", &sql[written.range.clone()]) } else { String::new() };
        let expression = with_aliases(&metric.sql, &metric.tables, sql);
        // A comment ending the metric's SQL must end before the closing parenthesis.
        let close = if expression.contains("--") { "\n)" } else { ")" };
        out.replace_range(written.range.clone(), &format!("({expression}{close}{alias}"));
    }
    out
}

/// Words that follow a table in FROM without being its alias.
const NOT_ALIASES: &[&str] = &[
    "as",
    "on",
    "using",
    "join",
    "inner",
    "left",
    "right",
    "full",
    "outer",
    "cross",
    "natural",
    "where",
    "group",
    "order",
    "limit",
    "having",
    "union",
    "except",
    "intersect",
    "window",
    "qualify",
    "offset",
    "fetch",
    "for",
    "lateral",
    "straight_join",
    "final",
    "sample",
    "prewhere",
];

/// `expression` with each `Table.` of `tables` written as the alias `sql` gives that table
/// (`Invoice.Total` → `i.Total` in `FROM Invoice i`): once aliased, a table's own name no longer
/// qualifies its columns.
fn with_aliases(expression: &str, tables: &[String], sql: &str) -> String {
    let mut out = expression.to_string();
    for table in tables {
        let Some(alias) = alias_of(sql, table) else { continue };
        let name = table.to_ascii_lowercase();
        for prefix in
            [format!("{name}."), format!("\"{name}\"."), format!("`{name}`."), format!("[{name}].")]
        {
            out = with_prefix_replaced(&out, &prefix, &alias);
        }
    }
    out
}

/// `expression` with each `prefix` (ASCII lower case, matched ASCII case-insensitively, not
/// inside a longer name) written as `alias.`.
fn with_prefix_replaced(expression: &str, prefix: &str, alias: &str) -> String {
    // ASCII lowering keeps every byte where it was: offsets in it are offsets in `expression`.
    let lower = expression.to_ascii_lowercase();
    let mut out = String::with_capacity(expression.len());
    let mut copied = 0;
    for (at, _) in lower.match_indices(prefix) {
        let inside_a_name = expression[..at].chars().next_back().is_some_and(is_word);
        if at < copied || inside_a_name {
            continue;
        }
        out.push_str(&expression[copied..at]);
        out.push_str(alias);
        out.push('.');
        copied = at + prefix.len();
    }
    out.push_str(&expression[copied..]);
    out
}

fn is_word(c: char) -> bool {
    c.is_alphanumeric() || c == '_' || c == '$'
}

/// The alias `sql` gives `table` (`Invoice i`, `Invoice AS i`, `"Invoice" i`), if any.
fn alias_of(sql: &str, table: &str) -> Option<String> {
    // ASCII lowering keeps every byte where it was: offsets in it are offsets in `sql`.
    let lower = sql.to_ascii_lowercase();
    let name = table.to_ascii_lowercase();
    for (at, _) in lower.match_indices(&name) {
        let before = lower[..at].chars().next_back();
        let mut end = at + name.len();
        let close = match before {
            Some('"') => Some('"'),
            Some('`') => Some('`'),
            Some('[') => Some(']'),
            _ => None,
        };
        let next = lower[end..].chars().next();
        match close {
            Some(close) if next == Some(close) => end += close.len_utf8(),
            Some(_) => continue,
            None if before.is_some_and(is_word) || next.is_some_and(is_word) => continue,
            None => {}
        }
        let after = sql[end..].trim_start();
        let after = match after.get(..3) {
            Some(word) if word.eq_ignore_ascii_case("as ") => after[3..].trim_start(),
            _ => after,
        };
        let Some(alias) = identifier_at(after, 0) else { continue };
        let plain = alias.name.chars().all(is_word);
        if !alias.name.is_empty()
            && (!plain || !NOT_ALIASES.iter().any(|k| k.eq_ignore_ascii_case(&alias.name)))
        {
            return Some(after[alias.range].to_string());
        }
    }
    None
}

/// True when the text at `range` is a whole select item: after `SELECT`, `DISTINCT` or a comma,
/// and before a comma or `FROM`.
fn is_select_item(sql: &str, range: &std::ops::Range<usize>) -> bool {
    let before = sql[..range.start].trim_end();
    let after = sql[range.end..].trim_start();
    let last_word = before.rsplit(|c: char| !c.is_alphanumeric()).next().unwrap_or_default();
    let opens = before.ends_with(',')
        || last_word.eq_ignore_ascii_case("select")
        || last_word.eq_ignore_ascii_case("distinct");
    let first_word = after.split(|c: char| !c.is_alphanumeric()).next().unwrap_or_default();
    let closes = after.starts_with(',') || first_word.eq_ignore_ascii_case("from");
    opens && closes
}

/// Points `issue` (an unknown `name` in `sql`) at what business term `term` means, its table
/// written as `sql` aliases it.
fn point_at_term(issue: &mut QueryIssue, name: &str, term: &Term, sql: &str, dialect: SqlDialect) {
    let columns: Vec<&Target> = term.means.iter().filter(|t| t.column.is_some()).collect();
    let meant = term.means.iter().map(ToString::to_string).collect::<Vec<_>>().join(", ");
    issue.message.push_str(&format!("; {name} is a business term for {meant}"));
    let [only] = columns.as_slice() else { return };
    let column = only.column.clone().unwrap_or_default();
    let already = issue
        .fix_column
        .as_ref()
        .is_some_and(|c| c.table == only.table && c.column.eq_ignore_ascii_case(&column));
    if !already {
        let table = alias_of(sql, &only.table).unwrap_or_else(|| quote_name(&only.table, dialect));
        issue.suggestion = Some(format!("{table}.{}", quote_name(&column, dialect)));
        issue.fix_column = Some(Box::new(TableColumn { table: only.table.clone(), column }));
    }
}

#[cfg(test)]
mod tests {
    use super::{alias_of, identifier_at, is_select_item, same_name, with_aliases};

    #[test]
    fn identifiers_are_read_as_written() {
        let sql = "SELECT \"average \"\"basket\"\" x\", `b`, [c d], e$1 FROM t";
        let quoted = identifier_at(sql, 7).expect("quoted");
        assert_eq!(quoted.name, "average \"basket\" x");
        assert_eq!(&sql[quoted.range], "\"average \"\"basket\"\" x\"");
        assert_eq!(identifier_at(sql, sql.find('`').expect("b")).expect("b").name, "b");
        assert_eq!(identifier_at(sql, sql.find('[').expect("c")).expect("c").name, "c d");
        assert_eq!(identifier_at(sql, sql.find("e$").expect("e")).expect("e").name, "e$1");
        assert!(identifier_at("\"open", 0).is_none());
    }

    #[test]
    fn one_name_however_spelled_and_select_items_are_told_apart() {
        assert!(same_name("average basket", "AverageBasket"));
        assert!(same_name("units-sold", "UNITS_SOLD"));
        assert!(!same_name("", "  "));
        let sql = "SELECT a, m FROM t ORDER BY m DESC";
        assert!(is_select_item(sql, &(10..11)));
        assert!(!is_select_item(sql, &(28..29)));
    }

    #[test]
    fn a_metric_is_written_with_the_aliases_of_its_tables() {
        let tables = ["InvoiceLine".to_string(), "Invoice".to_string()];
        let expression =
            "SUM(InvoiceLine.Quantity * invoiceline.UnitPrice) / COUNT(Invoice.InvoiceId)";
        let sql =
            "SELECT x FROM Invoice AS i JOIN \"InvoiceLine\" il ON il.InvoiceId = i.InvoiceId";
        assert_eq!(alias_of(sql, "Invoice").as_deref(), Some("i"));
        assert_eq!(alias_of(sql, "InvoiceLine").as_deref(), Some("il"));
        assert_eq!(
            with_aliases(expression, &tables, sql),
            "SUM(il.Quantity * il.UnitPrice) / COUNT(i.InvoiceId)"
        );
        assert_eq!(alias_of("SELECT * FROM Invoice JOIN Customer ON 1", "Invoice"), None);
        assert_eq!(alias_of("SELECT * FROM Invoice WHERE 1", "Invoice"), None);
        assert_eq!(alias_of("SELECT * FROM Invoice", "Invoice"), None);
        let spaced = "SUM(\"Order Details\".Quantity * [order details].UnitPrice)";
        let tables = ["Order Details".to_string()];
        assert_eq!(
            with_aliases(spaced, &tables, "SELECT 1 FROM \"Order Details\" AS od"),
            "SUM(od.Quantity * od.UnitPrice)"
        );
        let reversed = "SELECT 1 FROM \"InvoiceLine\" il JOIN \"Invoice\" i ON true";
        assert_eq!(alias_of(reversed, "Invoice").as_deref(), Some("i"));
        assert_eq!(
            alias_of("SELECT Invoice.Total FROM Invoice v", "Invoice").as_deref(),
            Some("v")
        );
    }
}
