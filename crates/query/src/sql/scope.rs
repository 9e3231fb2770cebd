//! Name scopes of a SELECT: the relations of its FROM clause (base tables, CTEs, derived
//! tables, table functions) with their columns, the CTEs visible to it, and the enclosing
//! query's scope for correlated references.

use sqlparser::ast::Ident;

/// The columns a relation offers.
#[derive(Debug, Clone, Default, PartialEq)]
pub(super) struct Columns {
    /// Known column names.
    pub names: Vec<String>,
    /// True when other columns may exist (a table function, an unnamed expression of a derived
    /// table, an unknown table): unresolved names are then accepted rather than rejected.
    pub open: bool,
}

impl Columns {
    /// Known names, closed.
    pub(super) fn known(names: Vec<String>) -> Self {
        Self { names, open: false }
    }

    /// Nothing known: accepts every name.
    pub(super) fn open() -> Self {
        Self { names: Vec::new(), open: true }
    }

    /// The known name equal to `name` ignoring ASCII case.
    pub(super) fn find(&self, name: &str) -> Option<&str> {
        self.names.iter().find(|n| n.eq_ignore_ascii_case(name)).map(String::as_str)
    }
}

/// One relation of a FROM clause.
#[derive(Debug, Clone)]
pub(super) struct Source {
    /// The name columns are qualified with: the alias, else the table's (unqualified) name.
    pub name: String,
    /// The catalog table, for base tables.
    pub table: Option<String>,
    /// True when `name` is an alias (the table's own name then no longer qualifies columns).
    pub aliased: bool,
    /// Its columns.
    pub columns: Columns,
}

/// A column reference resolved to a relation.
#[derive(Debug, Clone, PartialEq)]
pub(super) struct ColumnRef {
    /// How many scopes out (0: this SELECT; more: a correlated reference).
    pub depth: usize,
    /// The relation's index in its scope.
    pub source: usize,
    /// The column name as the relation spells it (the reference's own spelling for open ones).
    pub column: String,
    /// The catalog table, for base-table columns.
    pub table: Option<String>,
}

/// What a name resolved to.
#[derive(Debug, Clone, PartialEq)]
pub(super) enum Resolution {
    /// A column of a relation.
    Column(ColumnRef),
    /// Possibly a column of an open relation: accepted, not checked further.
    Open,
    /// A SELECT-list alias.
    Alias,
    /// No relation has it.
    Unknown,
    /// Several relations of one scope have it: each relation's name (alias) and catalog
    /// table, and the column as it spells it.
    Ambiguous(Vec<(String, Option<String>, String)>),
    /// The qualifier names no relation in scope.
    UnknownQualifier,
    /// The qualifier is a table's own name although the table has an alias.
    ShadowedByAlias(String),
}

/// The names visible in one SELECT.
#[derive(Debug, Default)]
pub(super) struct Scope<'p> {
    /// FROM relations.
    pub sources: Vec<Source>,
    /// Columns merged by `USING` or `NATURAL` joins: not ambiguous unqualified.
    pub merged: Vec<String>,
    /// True after a NATURAL join: ambiguity is not reported in this scope.
    pub natural: bool,
    /// SELECT-list aliases.
    pub aliases: Vec<String>,
    /// CTEs defined at this level.
    pub ctes: Vec<(String, Columns)>,
    /// The enclosing scope.
    pub parent: Option<&'p Scope<'p>>,
}

impl<'p> Scope<'p> {
    /// An empty scope inside `parent`.
    pub(super) fn inside(parent: Option<&'p Scope<'p>>) -> Self {
        Self { parent, ..Self::default() }
    }

    /// The CTE called `name`, innermost first.
    pub(super) fn cte(&self, name: &str) -> Option<&Columns> {
        self.ctes
            .iter()
            .rev()
            .find(|(n, _)| n.eq_ignore_ascii_case(name))
            .map(|(_, c)| c)
            .or_else(|| self.parent.and_then(|p| p.cte(name)))
    }

    /// Every CTE name visible here.
    pub(super) fn cte_names(&self) -> Vec<String> {
        let mut out: Vec<String> = self.ctes.iter().map(|(n, _)| n.clone()).collect();
        if let Some(p) = self.parent {
            out.extend(p.cte_names());
        }
        // A recursive CTE is listed twice (before and after its body is read).
        let mut seen = std::collections::HashSet::new();
        out.retain(|name| seen.insert(name.to_lowercase()));
        out
    }

    /// Resolves an unqualified column name, this scope first, then enclosing ones.
    pub(super) fn resolve(&self, name: &str, aliases_allowed: bool) -> Resolution {
        let mut depth = 0;
        let mut scope = Some(self);
        while let Some(s) = scope {
            let hits: Vec<(usize, &str)> = s
                .sources
                .iter()
                .enumerate()
                .filter_map(|(i, src)| src.columns.find(name).map(|c| (i, c)))
                .collect();
            match hits.as_slice() {
                [(i, c)] => return Resolution::Column(s.column_ref(depth, *i, c)),
                [(i, c), ..] => {
                    if s.natural || s.merged.iter().any(|m| m.eq_ignore_ascii_case(name)) {
                        return Resolution::Column(s.column_ref(depth, *i, c));
                    }
                    return Resolution::Ambiguous(
                        hits.iter()
                            .map(|(i, c)| {
                                let source = &s.sources[*i];
                                (source.name.clone(), source.table.clone(), c.to_string())
                            })
                            .collect(),
                    );
                }
                [] => {}
            }
            if depth == 0
                && aliases_allowed
                && s.aliases.iter().any(|a| a.eq_ignore_ascii_case(name))
            {
                return Resolution::Alias;
            }
            if s.sources.iter().any(|src| src.columns.open) {
                return Resolution::Open;
            }
            depth += 1;
            scope = s.parent;
        }
        Resolution::Unknown
    }

    /// Resolves `qualifier.name`.
    pub(super) fn resolve_qualified(&self, qualifier: &str, name: &str) -> Resolution {
        let mut depth = 0;
        let mut scope = Some(self);
        let mut shadowed = None;
        while let Some(s) = scope {
            if let Some(i) =
                s.sources.iter().position(|src| src.name.eq_ignore_ascii_case(qualifier))
            {
                let src = &s.sources[i];
                return match src.columns.find(name) {
                    Some(c) => Resolution::Column(s.column_ref(depth, i, c)),
                    None if src.columns.open => Resolution::Open,
                    None => Resolution::Unknown,
                };
            }
            if shadowed.is_none() {
                shadowed = s
                    .sources
                    .iter()
                    .find(|src| {
                        src.aliased
                            && src
                                .table
                                .as_deref()
                                .is_some_and(|t| t.eq_ignore_ascii_case(qualifier))
                    })
                    .map(|src| src.name.clone());
            }
            depth += 1;
            scope = s.parent;
        }
        match shadowed {
            Some(alias) => Resolution::ShadowedByAlias(alias),
            None => Resolution::UnknownQualifier,
        }
    }

    /// The relation a qualifier names, this scope first.
    pub(super) fn source(&self, qualifier: &str) -> Option<&Source> {
        self.sources
            .iter()
            .find(|s| s.name.eq_ignore_ascii_case(qualifier))
            .or_else(|| self.parent.and_then(|p| p.source(qualifier)))
    }

    fn column_ref(&self, depth: usize, source: usize, column: &str) -> ColumnRef {
        ColumnRef {
            depth,
            source,
            column: column.to_string(),
            table: self.sources[source].table.clone(),
        }
    }

    /// Every column name and relation name visible, for suggestions.
    pub(super) fn visible_columns(&self) -> Vec<String> {
        let mut out: Vec<String> =
            self.sources.iter().flat_map(|s| s.columns.names.iter().cloned()).collect();
        out.extend(self.aliases.iter().cloned());
        if let Some(p) = self.parent {
            out.extend(p.visible_columns());
        }
        out.sort();
        out.dedup();
        out
    }

    /// Whether `name` is a column of a derived table or CTE, or a SELECT alias, visible here:
    /// a name no catalog table has.
    pub(super) fn is_derived_column(&self, name: &str) -> bool {
        self.sources.iter().any(|s| s.table.is_none() && s.columns.names.iter().any(|c| c == name))
            || self.aliases.iter().any(|a| a == name)
            || self.parent.is_some_and(|p| p.is_derived_column(name))
    }

    /// Every relation name visible, for suggestions.
    pub(super) fn visible_sources(&self) -> Vec<String> {
        let mut out: Vec<String> = self.sources.iter().map(|s| s.name.clone()).collect();
        if let Some(p) = self.parent {
            out.extend(p.visible_sources());
        }
        out
    }
}

/// The value of the last identifier of a list.
pub(super) fn last_name(ids: &[Ident]) -> &str {
    ids.last().map_or("", |i| i.value.as_str())
}
