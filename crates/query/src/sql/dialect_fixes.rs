//! What to write instead of a function the engine does not have: models borrow functions from
//! other dialects (`YEAR(d)`, `DIVIDE(a, b)`, `IF(c, a, b)`, `DATEDIFF(a, b)`, `strftime` on
//! PostgreSQL), and the engine's own error only says the name is unknown. Each fix is the
//! target dialect's spelling of the same computation, with the call's own arguments, offered
//! only when the functions it uses are on the engine's allow-list.
//!
//! The table is of functions, not of questions: it is the portable meaning of well-known
//! functions of MySQL, SQL Server, Oracle, SQLite and PostgreSQL.

use std::ops::ControlFlow;

use sqlparser::ast::{
    Expr, Function, FunctionArg, FunctionArgExpr, FunctionArguments, Query, Visit, Visitor,
};

use super::callables::{Callables, Verdict, Written};
use crate::FunctionFamily;
use crate::issue::{IssueKind, Issues, Location};

/// The longest argument text quoted in a fix; longer arguments are shown as `…`.
const MAX_ARGUMENT_CHARS: usize = 200;

/// Adds a fix to every unknown-function error of `issues` that has one, found by the call's
/// position in `query`.
pub(super) fn add_fixes(query: &Query, callables: &Callables, issues: &mut Issues) {
    let wanted: Vec<Location> = issues
        .errors
        .iter()
        .filter(|e| e.kind == IssueKind::UnknownFunction)
        .filter_map(|e| e.location.clone())
        .collect();
    if wanted.is_empty() {
        return;
    }
    let mut finder = Finder { wanted, callables, fixes: Vec::new() };
    let _ = query.visit(&mut finder);
    let dialect = callables.dialect();
    for issue in issues.errors.iter_mut().filter(|e| e.kind == IssueKind::UnknownFunction) {
        let found = finder.fixes.iter().find(|(at, _, _)| Some(at) == issue.location.as_ref());
        if let Some((_, name, fix)) = found {
            issue.message = format!(
                "function {name} does not exist in this {dialect} database; in {dialect} write {fix}"
            );
            issue.suggestion = Some(fix.clone());
        }
    }
}

/// Finds the calls at the wanted positions and computes their fixes (sqlparser's visitor lends
/// each node only for the visit).
struct Finder<'c> {
    wanted: Vec<Location>,
    callables: &'c Callables,
    /// Position, the name as written, the fix.
    fixes: Vec<(Location, String, String)>,
}

impl Visitor for Finder<'_> {
    type Break = ();

    fn pre_visit_expr(&mut self, expr: &Expr) -> ControlFlow<()> {
        if let Expr::Function(f) = expr
            && let Some(ident) = f.name.0.last().and_then(|p| p.as_ident())
            && let Some(at) = Location::at(ident.span.start.line, ident.span.start.column)
            && self.wanted.contains(&at)
            && let Some(fix) = fix(f, self.callables)
        {
            self.fixes.push((at, f.name.to_string(), fix));
        }
        ControlFlow::Continue(())
    }
}

/// The argument texts of a plain call (`None` for forms with named, wildcard or subquery
/// arguments, which no fix rewrites).
fn arguments(function: &Function) -> Option<Vec<String>> {
    let FunctionArguments::List(list) = &function.args else {
        return matches!(function.args, FunctionArguments::None).then(Vec::new);
    };
    list.args
        .iter()
        .map(|arg| match arg {
            FunctionArg::Unnamed(FunctionArgExpr::Expr(e)) => {
                let text = e.to_string();
                Some(if text.chars().count() > MAX_ARGUMENT_CHARS { "…".into() } else { text })
            }
            _ => None,
        })
        .collect()
}

/// Whether the engine has `name` (unqualified, unquoted).
fn has(callables: &Callables, name: &str) -> bool {
    callables.function(None, Written { text: name, quoted: false }) == Verdict::Allowed
}

/// The unit a date-part function extracts, as strftime's directive and PostgreSQL's field.
fn date_part(name: &str) -> Option<(&'static str, &'static str)> {
    Some(match name {
        "year" => ("%Y", "YEAR"),
        "month" => ("%m", "MONTH"),
        "day" | "dayofmonth" => ("%d", "DAY"),
        "hour" => ("%H", "HOUR"),
        "minute" => ("%M", "MINUTE"),
        "second" => ("%S", "SECOND"),
        "dayofyear" => ("%j", "DOY"),
        "week" | "weekofyear" => ("%W", "WEEK"),
        _ => return None,
    })
}

/// strftime directives and PostgreSQL's to_char patterns for the same fields.
const FORMAT_PAIRS: &[(&str, &str)] = &[
    ("%Y", "YYYY"),
    ("%m", "MM"),
    ("%d", "DD"),
    ("%H", "HH24"),
    ("%M", "MI"),
    ("%S", "SS"),
    ("%j", "DDD"),
];

/// MySQL DATE_FORMAT specifiers and their strftime directive (MySQL's `%i` is minutes, `%M`
/// a month name, which strftime has none of).
const MYSQL_SPECIFIERS: &[(&str, &str)] = &[
    ("%Y", "%Y"),
    ("%m", "%m"),
    ("%d", "%d"),
    ("%H", "%H"),
    ("%i", "%M"),
    ("%s", "%S"),
    ("%S", "%S"),
    ("%j", "%j"),
];

/// `format` (a quoted literal) rewritten specifier by specifier, or `None` when it has one the
/// table does not map (its meaning would change).
fn convert_format(format: &str, pairs: &[(&str, &str)], marker: char) -> Option<String> {
    let inner = format.strip_prefix('\'')?.strip_suffix('\'')?;
    let mut out = String::with_capacity(inner.len() + 8);
    let mut rest = inner;
    while !rest.is_empty() {
        if rest.starts_with(marker) {
            let (from, to) = pairs.iter().find(|(from, _)| rest.starts_with(from))?;
            out.push_str(to);
            rest = &rest[from.len()..];
        } else if marker != '%' && rest.starts_with(|c: char| c.is_ascii_alphabetic()) {
            // A to_char pattern: letters are fields; only the table's are known.
            let (from, to) = pairs.iter().find(|(from, _)| rest.starts_with(from))?;
            out.push_str(to);
            rest = &rest[from.len()..];
        } else {
            let c = rest.chars().next()?;
            if marker != '%' && c == '%' {
                out.push_str("%%");
            } else {
                out.push(c);
            }
            rest = &rest[c.len_utf8()..];
        }
    }
    Some(format!("'{out}'"))
}

/// A to_char pattern for a strftime format literal (`'%Y-%m'` → `'YYYY-MM'`), the text
/// between fields double-quoted when it has letters or quotes (to_char reads `Y`, `D`, `FM` in
/// it as fields).
fn to_char_pattern(format: &str) -> Option<String> {
    let inner = format.strip_prefix('\'')?.strip_suffix('\'')?;
    let mut out = String::with_capacity(inner.len() + 8);
    let mut text = String::new();
    let flush = |text: &mut String, out: &mut String| {
        if text.chars().any(|c| c.is_alphabetic() || c == '"' || c == '\\') {
            if text.contains('"') || text.contains('\\') {
                return false;
            }
            out.push('"');
            out.push_str(text);
            out.push('"');
        } else {
            out.push_str(text);
        }
        text.clear();
        true
    };
    let mut rest = inner;
    while !rest.is_empty() {
        if rest.starts_with('%') {
            let (from, to) = FORMAT_PAIRS.iter().find(|(from, _)| rest.starts_with(from))?;
            if !flush(&mut text, &mut out) {
                return None;
            }
            out.push_str(to);
            rest = &rest[from.len()..];
        } else {
            let c = rest.chars().next()?;
            text.push(c);
            rest = &rest[c.len_utf8()..];
        }
    }
    if !flush(&mut text, &mut out) {
        return None;
    }
    Some(format!("'{out}'"))
}

/// A strftime format for a MySQL DATE_FORMAT literal.
fn strftime_from_mysql(format: &str) -> Option<String> {
    convert_format(format, MYSQL_SPECIFIERS, '%')
}

/// A MySQL DATE_FORMAT format for a strftime format literal (`'%Y-%m %H:%M'` →
/// `'%Y-%m %H:%i'`): strftime's `%M` is minutes, MySQL's `%i`.
fn mysql_from_strftime(format: &str) -> Option<String> {
    let pairs: &[(&str, &str)] = &[
        ("%Y", "%Y"),
        ("%m", "%m"),
        ("%d", "%d"),
        ("%H", "%H"),
        ("%M", "%i"),
        ("%S", "%s"),
        ("%j", "%j"),
        ("%%", "%%"),
    ];
    convert_format(format, pairs, '%')
}

/// A strftime format for a to_char pattern literal (`'YYYY-MM'` → `'%Y-%m'`).
fn strftime_from_to_char(format: &str) -> Option<String> {
    let reversed: Vec<(&str, &str)> = FORMAT_PAIRS.iter().map(|(a, b)| (*b, *a)).collect();
    convert_format(format, &reversed, 'Y')
}

/// `arg` as an operand: kept when it is one name, number or string, else parenthesised, so
/// that a fix spliced into the query keeps the call's meaning (`DIVIDE(a + 1, b)` is
/// `(a + 1) * 1.0 / b`, not `a + 1 * 1.0 / b`).
fn operand(arg: &str) -> String {
    let atomic = arg.chars().all(|c| c.is_alphanumeric() || matches!(c, '_' | '.' | '"' | '`'))
        || (arg.starts_with('\'')
            && arg.ends_with('\'')
            && arg[1..arg.len() - 1].find('\'').is_none());
    if atomic && !arg.is_empty() { arg.to_string() } else { format!("({arg})") }
}

/// A date or time argument for PostgreSQL: a string literal is cast (its type is unknown to
/// the parser), anything else is used as is.
fn pg_time(arg: &str) -> String {
    if arg.starts_with('\'') { format!("CAST({arg} AS timestamp)") } else { arg.to_string() }
}

/// The same computation in MySQL's or MariaDB's spelling, for functions of the other dialects
/// they lack (their own `YEAR`, `IF`, `IFNULL`, `DATE_FORMAT`, `LOCATE`, `DATEDIFF` need none).
fn mysql_fix(name: &str, args: &[String], callables: &Callables) -> Option<String> {
    let fix = match (name, args) {
        ("strftime", [format, d]) => format!("DATE_FORMAT({d}, {})", mysql_from_strftime(format)?),
        ("to_char", [d, pattern]) => {
            let strftime = strftime_from_to_char(pattern)?;
            format!("DATE_FORMAT({d}, {})", mysql_from_strftime(&strftime)?)
        }
        ("date_trunc", [unit, d]) => {
            let format = match unit.trim_matches('\'').to_ascii_lowercase().as_str() {
                "year" => "%Y-01-01",
                "month" => "%Y-%m-01",
                "day" => "%Y-%m-%d",
                "hour" => "%Y-%m-%d %H:00:00",
                "minute" => "%Y-%m-%d %H:%i:00",
                _ => return None,
            };
            format!("DATE_FORMAT({d}, '{format}')")
        }
        ("date_part" | "datepart", [unit, d]) => {
            let part = unit.trim_matches('\'').to_ascii_lowercase();
            let (_, field) = date_part(&part)?;
            let field = if field == "DOY" { return Some(format!("DAYOFYEAR({d})")) } else { field };
            format!("EXTRACT({field} FROM {d})")
        }
        ("strpos", [haystack, needle]) | ("charindex", [needle, haystack, ..]) => {
            format!("LOCATE({needle}, {haystack})")
        }
        ("len", [s]) => format!("CHAR_LENGTH({s})"),
        ("iif", [c, a, b]) => format!("IF({c}, {a}, {b})"),
        ("nvl" | "isnull", [a, b]) => format!("IFNULL({a}, {b})"),
        ("nvl2", [a, b, c]) => format!("IF({a} IS NOT NULL, {b}, {c})"),
        ("getdate", []) => "NOW()".into(),
        ("today", []) => "CURDATE()".into(),
        ("julianday", [d]) => format!("(TO_SECONDS({d}) / 86400.0 + 1721059.5)"),
        ("datediff", [unit, a, b]) if unit.eq_ignore_ascii_case("day") => {
            format!("DATEDIFF({b}, {a})")
        }
        ("to_number", [s, ..]) => format!("({} + 0)", operand(s)),
        ("trunc", [x]) => format!("TRUNCATE({x}, 0)"),
        ("trunc", [x, n]) => format!("TRUNCATE({x}, {n})"),
        ("random", []) => "RAND()".into(),
        ("string_agg", [a, separator]) => format!("GROUP_CONCAT({a} SEPARATOR {separator})"),
        ("divide", [a, b]) => format!("({} / {})", operand(a), operand(b)),
        ("subtract" | "minus", [a, b]) => format!("({} - {})", operand(a), operand(b)),
        ("add" | "plus", [a, b]) => format!("({} + {})", operand(a), operand(b)),
        ("multiply" | "times", [a, b]) => format!("({} * {})", operand(a), operand(b)),
        _ => return None,
    };
    // Offered only when the server has the functions the fix calls.
    let first_call = fix.split('(').next().unwrap_or("").trim();
    // EXTRACT is grammar, not a function of the server's lists.
    let needs = first_call.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
        && !first_call.is_empty()
        && first_call != "EXTRACT";
    (!needs || has(callables, &first_call.to_ascii_lowercase())).then_some(fix)
}

/// The same computation in the engine's dialect, or `None`.
fn fix(function: &Function, callables: &Callables) -> Option<String> {
    let name = function.name.0.last()?.as_ident()?.value.to_ascii_lowercase();
    let args = arguments(function)?;
    if callables.dialect().rules().functions() == FunctionFamily::MySql {
        return mysql_fix(&name, &args, callables);
    }
    let sqlite = callables.dialect().rules().functions() == FunctionFamily::Sqlite;
    let strftime_patterns = callables.dialect().rules().to_char_takes_strftime();
    let case = |c: &str, a: &str, b: &str| format!("CASE WHEN {c} THEN {a} ELSE {b} END");
    let fix = match (name.as_str(), args.as_slice()) {
        (part, [d]) if date_part(part).is_some() => {
            let (directive, field) = date_part(part)?;
            if sqlite {
                has(callables, "strftime")
                    .then(|| format!("CAST(strftime('{directive}', {d}) AS INTEGER)"))?
            } else {
                format!("EXTRACT({field} FROM {})", pg_time(d))
            }
        }
        ("divide", [a, b]) => format!("({} * 1.0 / {})", operand(a), operand(b)),
        ("subtract" | "minus", [a, b]) => format!("({} - {})", operand(a), operand(b)),
        ("add" | "plus", [a, b]) => format!("({} + {})", operand(a), operand(b)),
        ("multiply" | "times", [a, b]) => format!("({} * {})", operand(a), operand(b)),
        ("greatest" | "least", [_, _, ..]) if sqlite => {
            let min_max = if name == "greatest" { "max" } else { "min" };
            format!("{min_max}({})", args.join(", "))
        }
        ("if" | "iif", [c, a, b]) => case(c, a, b),
        ("isnull" | "nvl" | "ifnull", [a, b]) => format!("COALESCE({a}, {b})"),
        ("nvl2", [a, b, c]) => case(&format!("{a} IS NOT NULL"), b, c),
        ("len" | "char_length" | "character_length", [s]) if sqlite => format!("length({s})"),
        ("len", [s]) => format!("length({s})"),
        ("lcase", [s]) => format!("lower({s})"),
        ("ucase", [s]) => format!("upper({s})"),
        ("mid", [s, from, len]) => format!("substr({s}, {from}, {len})"),
        ("charindex" | "locate", [needle, haystack, ..]) | ("instr", [haystack, needle])
            if !sqlite || name != "instr" =>
        {
            if sqlite {
                format!("instr({haystack}, {needle})")
            } else {
                format!("strpos({haystack}, {needle})")
            }
        }
        ("concat", [_, _, ..]) if sqlite => {
            format!("({})", args.iter().map(|a| operand(a)).collect::<Vec<_>>().join(" || "))
        }
        ("now" | "getdate" | "sysdate" | "current_timestamp", []) => {
            if sqlite {
                "datetime('now')".into()
            } else {
                "now()".into()
            }
        }
        ("curdate" | "today", []) => {
            if sqlite {
                "date('now')".into()
            } else {
                "CURRENT_DATE".into()
            }
        }
        ("datediff", [a, b]) => {
            // MySQL: the days from b to a.
            if sqlite {
                // MySQL counts days between the dates, times left out.
                format!("(julianday(date({a})) - julianday(date({b})))")
            } else {
                format!("(CAST({a} AS date) - CAST({b} AS date))")
            }
        }
        ("datediff", [unit, a, b]) if unit.eq_ignore_ascii_case("day") => {
            // SQL Server: the days from a to b.
            if sqlite {
                format!("(julianday(date({b})) - julianday(date({a})))")
            } else {
                format!("(CAST({b} AS date) - CAST({a} AS date))")
            }
        }
        ("date_format", [d, format]) if sqlite => {
            format!("strftime({}, {d})", strftime_from_mysql(format)?)
        }
        ("to_char", [d, format]) if sqlite => {
            format!("strftime({}, {d})", strftime_from_to_char(format)?)
        }
        ("date_format", [d, format]) if strftime_patterns => {
            format!("to_char({}, {})", pg_time(d), strftime_from_mysql(format)?)
        }
        ("date_format", [d, format]) => {
            let strftime = strftime_from_mysql(format)?;
            format!("to_char({}, {})", pg_time(d), to_char_pattern(&strftime)?)
        }
        ("strftime", [format, d]) if strftime_patterns => {
            format!("to_char({}, {format})", pg_time(d))
        }
        ("strftime", [format, d]) if !sqlite => {
            format!("to_char({}, {})", pg_time(d), to_char_pattern(format)?)
        }
        ("julianday", [d]) if !sqlite => {
            format!("(EXTRACT(EPOCH FROM CAST({d} AS timestamp)) / 86400.0 + 2440587.5)")
        }
        ("date_part" | "datepart", [unit, d]) if sqlite => {
            let part = unit.trim_matches('\'').to_ascii_lowercase();
            let (directive, _) = date_part(&part)?;
            format!("CAST(strftime('{directive}', {d}) AS INTEGER)")
        }
        ("to_number", [s, ..]) if sqlite => format!("CAST({s} AS REAL)"),
        ("trunc" | "truncate", [x]) if sqlite => format!("CAST({x} AS INTEGER)"),
        ("pow" | "power", [x, y]) if sqlite && !has(callables, "pow") => y
            .parse::<u8>()
            .ok()
            .filter(|n| (2..=4).contains(n))
            .map(|n| vec![format!("({x})"); usize::from(n)].join(" * "))?,
        _ => return None,
    };
    Some(fix)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::SqlDialect;

    fn sqlite() -> Callables {
        let mut c = Callables::new(SqlDialect::Sqlite);
        for f in ["strftime", "julianday", "length", "max", "min", "instr"] {
            c.add_function(None, f, true);
        }
        c
    }

    fn first_call(sql: &str) -> Function {
        let dialect = sqlparser::dialect::GenericDialect {};
        let statements = sqlparser::parser::Parser::parse_sql(&dialect, sql).unwrap();
        let sqlparser::ast::Statement::Query(q) = &statements[0] else { panic!() };
        let sqlparser::ast::SetExpr::Select(s) = q.body.as_ref() else { panic!() };
        let sqlparser::ast::SelectItem::UnnamedExpr(Expr::Function(f)) = &s.projection[0] else {
            panic!()
        };
        f.clone()
    }

    #[test]
    fn borrowed_functions_get_the_engines_spelling() {
        let pg = Callables::new(SqlDialect::Postgres);
        let cases = [
            ("SELECT YEAR(d)", "CAST(strftime('%Y', d) AS INTEGER)", "EXTRACT(YEAR FROM d)"),
            ("SELECT DIVIDE(a, b)", "(a * 1.0 / b)", "(a * 1.0 / b)"),
            (
                "SELECT DIVIDE(a + 1, b - 1)",
                "((a + 1) * 1.0 / (b - 1))",
                "((a + 1) * 1.0 / (b - 1))",
            ),
            ("SELECT SUBTRACT(t, 1)", "(t - 1)", "(t - 1)"),
            (
                "SELECT IF(x > 1, 'a', 'b')",
                "CASE WHEN x > 1 THEN 'a' ELSE 'b' END",
                "CASE WHEN x > 1 THEN 'a' ELSE 'b' END",
            ),
            (
                "SELECT DATEDIFF(a, b)",
                "(julianday(date(a)) - julianday(date(b)))",
                "(CAST(a AS date) - CAST(b AS date))",
            ),
            ("SELECT GREATEST(a, b, c)", "max(a, b, c)", ""),
            ("SELECT DATE_FORMAT(d, '%Y-%m')", "strftime('%Y-%m', d)", "to_char(d, 'YYYY-MM')"),
        ];
        for (sql, on_sqlite, on_postgres) in cases {
            let f = first_call(sql);
            assert_eq!(fix(&f, &sqlite()).as_deref(), Some(on_sqlite), "{sql} on SQLite");
            let expected = (!on_postgres.is_empty()).then_some(on_postgres);
            assert_eq!(fix(&f, &pg).as_deref(), expected, "{sql} on PostgreSQL");
        }
        assert_eq!(
            fix(&first_call("SELECT strftime('%Y', d)"), &pg).as_deref(),
            Some("to_char(d, 'YYYY')")
        );
    }

    #[test]
    fn datafusion_gets_postgresql_spellings_with_strftime_patterns_for_to_char() {
        let df = Callables::new(SqlDialect::DataFusion);
        let fixed = |sql| fix(&first_call(sql), &df);
        assert_eq!(fixed("SELECT YEAR(d)").as_deref(), Some("EXTRACT(YEAR FROM d)"));
        assert_eq!(fixed("SELECT strftime('%Y-%m', d)").as_deref(), Some("to_char(d, '%Y-%m')"));
        assert_eq!(
            fixed("SELECT DATE_FORMAT(d, '%Y-%m-%d')").as_deref(),
            Some("to_char(d, '%Y-%m-%d')")
        );
        assert_eq!(fixed("SELECT IFNULL(a, 0)").as_deref(), Some("COALESCE(a, 0)"));
    }

    #[test]
    fn mysql_gets_its_own_spellings_of_other_dialects_functions() {
        let mut my = Callables::new(SqlDialect::MariaDb);
        for f in ["date_format", "locate", "char_length", "if", "ifnull", "now", "to_seconds"] {
            my.add_function(None, f, true);
        }
        let fixed = |sql| fix(&first_call(sql), &my);
        assert_eq!(
            fixed("SELECT strftime('%Y-%m %H:%M', d)").as_deref(),
            Some("DATE_FORMAT(d, '%Y-%m %H:%i')")
        );
        assert_eq!(
            fixed("SELECT to_char(d, 'YYYY-MM')").as_deref(),
            Some("DATE_FORMAT(d, '%Y-%m')")
        );
        assert_eq!(
            fixed("SELECT date_trunc('month', d)").as_deref(),
            Some("DATE_FORMAT(d, '%Y-%m-01')")
        );
        assert_eq!(fixed("SELECT date_part('year', d)").as_deref(), Some("EXTRACT(YEAR FROM d)"));
        assert_eq!(fixed("SELECT strpos(name, 'a')").as_deref(), Some("LOCATE('a', name)"));
        assert_eq!(fixed("SELECT iif(x > 1, 'a', 'b')").as_deref(), Some("IF(x > 1, 'a', 'b')"));
        assert_eq!(fixed("SELECT nvl(a, 0)").as_deref(), Some("IFNULL(a, 0)"));
        assert_eq!(
            fixed("SELECT julianday(d)").as_deref(),
            Some("(TO_SECONDS(d) / 86400.0 + 1721059.5)")
        );
        assert_eq!(fixed("SELECT divide(a, b)").as_deref(), Some("(a / b)"));
        // A format with a directive MySQL's DATE_FORMAT spells otherwise is left alone.
        assert_eq!(fixed("SELECT strftime('%w', d)"), None);
        // No fix calling a function the server lacks.
        assert_eq!(fixed("SELECT random()"), None);
    }

    #[test]
    fn no_fix_without_the_function_it_needs_or_for_unknown_shapes() {
        let bare = Callables::new(SqlDialect::Sqlite);
        assert_eq!(fix(&first_call("SELECT YEAR(d)"), &bare), None);
        assert_eq!(fix(&first_call("SELECT DIVIDE(a)"), &sqlite()), None);
        assert_eq!(fix(&first_call("SELECT FROBNICATE(a, b)"), &sqlite()), None);
        // MySQL's %M is a month name: no strftime directive has that meaning.
        assert_eq!(fix(&first_call("SELECT DATE_FORMAT(d, '%M %Y')"), &sqlite()), None);
        let pg = Callables::new(SqlDialect::Postgres);
        assert_eq!(fix(&first_call("SELECT strftime('%w', d)"), &pg), None);
        assert_eq!(
            fix(&first_call("SELECT YEAR('2020-01-01')"), &pg).as_deref(),
            Some("EXTRACT(YEAR FROM CAST('2020-01-01' AS timestamp))")
        );
        assert_eq!(
            fix(&first_call("SELECT TO_CHAR(d, 'YYYY-MM')"), &sqlite()).as_deref(),
            Some("strftime('%Y-%m', d)")
        );
        assert_eq!(fix(&first_call("SELECT TO_CHAR(d, 'Month DD')"), &sqlite()), None);
        // Text between fields stays text in to_char.
        assert_eq!(
            fix(&first_call("SELECT strftime('Year %Y', d)"), &pg).as_deref(),
            Some("to_char(d, '\"Year \"YYYY')")
        );
        assert_eq!(fix(&first_call("SELECT strftime('%Y \"Q\"', d)"), &pg), None);
        assert_eq!(
            fix(&first_call("SELECT STR_TO_DATE('17/05/2024', '%d/%m/%Y')"), &sqlite()),
            None
        );
        assert_eq!(fix(&first_call("SELECT MOD(7.5, 2)"), &sqlite()), None);
    }
}
