//! What a ClickHouse statement may call, from the server's own catalog: `system.functions`
//! (every built-in function and aggregate, with whether its name matches in any case, and in
//! current releases where it comes from).
//!
//! ClickHouse's catalog does not say what a function touches, as PostgreSQL's volatility does,
//! so the allow-list is every function the server lists as built in, less the few built-ins
//! ClickHouse documents as reaching past the statement's data ([`REACHES_OUTSIDE`]). User-defined
//! functions (SQL or executable, `origin` other than `System`) are refused: an executable one
//! runs a program. Table functions are refused whatever their name, by the validator itself
//! (`schemascope_query`): none is a table of this database. The server's `readonly` setting is
//! the layer under this one (it forbids table functions and every write).

use schemascope_query::{Callables, SqlDialect};

/// Built-in ClickHouse functions that read server files (`file`), evaluate model files
/// (`catboostEvaluate`, `modelEvaluate`), connect to other servers (`hasColumnInTable` with a
/// host), write the server's log (`logTrace`), stop the server (`trap`, in test builds), read its
/// memory (`addressTo*`, introspection), or wait (`sleep`, `sleepEachRow`).
pub(super) const REACHES_OUTSIDE: &[&str] = &[
    "file",
    "catboostEvaluate",
    "modelEvaluate",
    "hasColumnInTable",
    "logTrace",
    "trap",
    "addressToLine",
    "addressToLineWithInlines",
    "addressToSymbol",
    "demangle",
    "sleep",
    "sleepEachRow",
];

/// Prefixes of built-in functions that read a dictionary (`dictGet*`, `dictHas`, `dictIsIn`) or
/// a `Join` table (`joinGet*`) named by a string argument, in any database: a read outside the
/// served database that no FROM shows.
pub(super) const READS_BY_NAME: &[&str] = &["dict", "joinGet"];

/// One row of `system.functions`.
pub(super) struct FunctionRow {
    pub name: String,
    pub case_insensitive: bool,
    pub alias_to: String,
    /// `System`, `SQLUserDefined`, `ExecutableUserDefined`; empty where the server has no such
    /// column (18.16: built-ins only).
    pub origin: String,
    /// True for an aggregate function, which combinators extend (`countIf`, `sumArray`, …).
    pub is_aggregate: bool,
}

/// Aggregate function combinators: `system.functions` lists `count`, not `countIf`, yet
/// ClickHouse takes any aggregate with one or two of these suffixes.
const COMBINATORS: &[&str] = &[
    "If",
    "Array",
    "Distinct",
    "OrNull",
    "OrDefault",
    "State",
    "Merge",
    "MergeState",
    "ForEach",
    "Resample",
    "SimpleState",
];

/// The allow-list from the rows of `system.functions`.
pub(super) fn allow_list(rows: &[FunctionRow]) -> Callables {
    let mut callables = Callables::new(SqlDialect::ClickHouse);
    let outside = |name: &str| {
        REACHES_OUTSIDE.iter().any(|r| r.eq_ignore_ascii_case(name))
            || READS_BY_NAME.iter().any(|prefix| name.starts_with(prefix))
    };
    for row in rows {
        let allowed = (row.origin.is_empty() || row.origin == "System")
            && !outside(&row.name)
            && (row.alias_to.is_empty() || !outside(&row.alias_to));
        callables.add_function(None, &row.name, allowed);
        if row.is_aggregate && allowed {
            for first in COMBINATORS {
                let once = format!("{}{first}", row.name);
                callables.add_function(None, &once, true);
                for second in COMBINATORS {
                    callables.add_function(None, &format!("{once}{second}"), true);
                }
            }
        }
        if row.case_insensitive {
            callables.add_case_insensitive(&row.name);
            callables.add_function(None, &row.name.to_ascii_lowercase(), allowed);
        }
    }
    callables
}

#[cfg(test)]
mod tests {
    use super::*;
    use schemascope_query::{Verdict, Written};

    fn row(name: &str, case_insensitive: bool, alias_to: &str, origin: &str) -> FunctionRow {
        FunctionRow {
            is_aggregate: false,
            name: name.into(),
            case_insensitive,
            alias_to: alias_to.into(),
            origin: origin.into(),
        }
    }

    #[test]
    fn built_ins_run_and_the_rest_does_not() {
        let c = allow_list(&[
            row("count", true, "", ""),
            row("toString", false, "", "System"),
            row("sleep", false, "", "System"),
            row("my_udf", false, "", "ExecutableUserDefined"),
            row("FILE_ALIAS", true, "file", "System"),
            row("dictGetString", false, "", "System"),
            row("joinGet", false, "", "System"),
        ]);
        let bare = |text| Written { text, quoted: false };
        assert_eq!(c.function(None, bare("COUNT")), Verdict::Allowed);
        assert_eq!(c.function(None, bare("toString")), Verdict::Allowed);
        assert_eq!(c.function(None, bare("tostring")), Verdict::Unknown, "case-sensitive");
        assert_eq!(c.function(None, bare("sleep")), Verdict::Refused);
        assert_eq!(c.function(None, bare("my_udf")), Verdict::Refused);
        assert_eq!(c.function(None, bare("file_alias")), Verdict::Refused);
        assert_eq!(c.function(None, bare("dictGetString")), Verdict::Refused);
        assert_eq!(c.function(None, bare("joinGet")), Verdict::Refused);
    }
}
