//! A PostgreSQL statement read as PostgreSQL reads it: libpg_query (PostgreSQL's own grammar,
//! through the `pg_query` crate) parses it, and one walk of the tree finds what the read-only
//! check judges — the statement's kind; writes, locks and `SELECT … INTO` anywhere inside it;
//! every function, operator (written, or implied by `IN`, `BETWEEN [SYMMETRIC]`, `LIKE`,
//! `SIMILAR TO`, `NULLIF`, `CASE x WHEN`, `IS DISTINCT FROM`, `ANY`/`ALL`, `ORDER BY … USING`)
//! and type (casts, typed literals, column definitions) it names; attribute notation — and the
//! relations it reads.
//!
//! The tree is walked as data (serde's view of pg_query's messages), every field of every node,
//! so a node kind this module does not name is still walked: a call inside it is still a
//! `FuncCall`. The walk is a loop over an explicit stack, bounded in depth
//! ([`MAX_EXPRESSION_DEPTH`] levels of expressions and set operations, [`MAX_CALL_DEPTH`]
//! levels of nodes) and in queries ([`MAX_QUERIES`]); what the tree holds before the walk is
//! bounded by libpg_query's own stack-depth check and the token bounds run before parsing.

use serde_json::{Map, Value};

use super::bounded::{BEYOND_BOUNDS, MAX_EXPRESSION_DEPTH, MAX_QUERIES};
use super::calls::{Call, CallKind, MAX_CALL_DEPTH, NamePart};
use crate::issue::{IssueKind, Issues, Location, QueryIssue};

/// The relations and functions in FROM a PostgreSQL statement reads, as written (unquoted names
/// folded to lower case, as PostgreSQL folds them), each `(schema, name)` with the schema when
/// the statement qualified it. CTE names are not relations and are left out.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RelationsRead {
    /// Tables and views (`FROM t`, `JOIN s.t`, `TABLE t`, in subqueries and CTEs too).
    pub tables: Vec<(Option<String>, String)>,
    /// Functions called in FROM (`FROM generate_series(1, 3)`, `ROWS FROM (…)`, `LATERAL f(x)`).
    pub functions: Vec<(Option<String>, String)>,
}

/// libpg_query's parse of `sql`, as data; `Err` with PostgreSQL's own message when PostgreSQL
/// would not parse it.
pub(super) fn parse(sql: &str) -> Result<Value, String> {
    let parsed = pg_query::parse(sql, 0).map_err(|e| match e {
        pg_query::Error::Parse(message) => message,
        other => other.to_string(),
    })?;
    serde_json::to_value(&parsed.protobuf).map_err(|e| e.to_string())
}

/// Whether `sql` holds a `U&"…"` identifier (PostgreSQL's scanner token UIDENT).
pub(super) fn has_unicode_identifier(sql: &str) -> bool {
    let uident = pg_query::protobuf::Token::Uident as i32;
    pg_query::scan(sql).is_ok_and(|scan| scan.tokens.iter().any(|t| t.token == uident))
}

/// What one statement holds, found by [`read`].
#[derive(Debug, Default)]
pub(super) struct Reading {
    /// Every function, operator and type it names.
    pub calls: Vec<Call>,
    /// Names after a `.` that PostgreSQL may read as a call of a one-argument function on the
    /// row before it (attribute notation): `(resolved, as written)`.
    pub attributes: Vec<(String, String)>,
    /// What it reads.
    pub relations: RelationsRead,
}

/// Reads the parsed `tree` of `sql`: refusals for anything but one `SELECT` (`VALUES`, `TABLE`)
/// and for writes, locks and `INTO` inside it, and bounds passed, go to `issues`; the calls,
/// attribute names and relations are returned for the judge.
pub(super) fn read(tree: &Value, sql: &str, issues: &mut Issues) -> Reading {
    let statements: Vec<&Value> =
        tree.get("stmts").and_then(Value::as_array).map(|s| s.iter().collect()).unwrap_or_default();
    let kinds: Vec<(&str, &Map<String, Value>, usize)> = statements
        .iter()
        .filter_map(|raw| {
            let location = raw.get("stmt_location").and_then(Value::as_u64).unwrap_or(0);
            let (kind, node) = variant(raw.get("stmt")?)?;
            Some((kind, node, usize::try_from(location).unwrap_or(0)))
        })
        .collect();
    match kinds.as_slice() {
        [] => issues.error(
            QueryIssue::new(IssueKind::MultipleStatements, "there is no statement")
                .suggest("write a single SELECT"),
        ),
        [(kind, node, at)] => {
            if *kind == "SelectStmt" {
                let mut walk = Walk::new(sql, issues);
                walk.run(node);
                return walk.reading;
            }
            refuse_statement(kind, node, sql, *at, issues);
        }
        several => {
            issues.error(
                QueryIssue::new(
                    IssueKind::MultipleStatements,
                    format!("exactly one statement is allowed; found {}", several.len()),
                )
                .suggest("send a single SELECT without other statements"),
            );
            for (kind, node, at) in several {
                if *kind != "SelectStmt" {
                    refuse_statement(kind, node, sql, *at, issues);
                }
            }
        }
    }
    Reading::default()
}

/// The one node inside a `Node` wrapper: its kind (`"FuncCall"`) and fields.
fn variant(wrapper: &Value) -> Option<(&str, &Map<String, Value>)> {
    let inner = wrapper.get("node")?.as_object()?;
    let (kind, fields) = inner.iter().next()?;
    Some((kind.as_str(), fields.as_object()?))
}

/// The names in a list of `String` nodes (a function's, an operator's, a type's).
fn names(list: Option<&Value>) -> Vec<String> {
    list.and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(|n| match variant(n) {
            Some(("String", s)) => s.get("sval").and_then(Value::as_str).map(str::to_string),
            _ => None,
        })
        .collect()
}

/// Refuses a statement that is not a query, naming its first keyword.
fn refuse_statement(
    kind: &str,
    node: &Map<String, Value>,
    sql: &str,
    at: usize,
    issues: &mut Issues,
) {
    let keyword = first_word(sql, at).to_ascii_uppercase();
    let transaction = node.get("kind").and_then(Value::as_i64).unwrap_or(0);
    let why = match kind {
        "VariableSetStmt" => "SET changes the session (role, settings)",
        // BEGIN, START, COMMIT, ROLLBACK and the prepared-transaction forms; savepoints are
        // not the transaction's end.
        "TransactionStmt" if matches!(transaction, 1..=4 | 8..=10) => {
            "transaction control ends the read-only transaction"
        }
        "ExplainStmt" => "EXPLAIN is not a query",
        "CopyStmt" => "COPY reads or writes files or runs programs",
        _ => "it is not a read-only query",
    };
    issues.error(
        QueryIssue::new(
            IssueKind::NotReadOnly,
            format!("only one read-only query (SELECT, WITH … SELECT, VALUES) is allowed; the {keyword} statement is refused: {why}"),
        )
        .suggest("write a single SELECT"),
    );
}

/// Skips spaces, comments and opening parentheses from byte `at` of `sql`.
fn skip_space(sql: &str, mut at: usize) -> usize {
    let bytes = sql.as_bytes();
    loop {
        match bytes.get(at) {
            Some(b) if b.is_ascii_whitespace() || *b == b'(' => at += 1,
            Some(b'-') if bytes.get(at + 1) == Some(&b'-') => {
                at = sql[at..].find('\n').map_or(sql.len(), |n| at + n + 1)
            }
            Some(b'/') if bytes.get(at + 1) == Some(&b'*') => {
                // PostgreSQL's block comments nest.
                let (mut depth, mut i) = (0usize, at);
                while i < bytes.len() {
                    if bytes[i..].starts_with(b"/*") {
                        depth += 1;
                        i += 2;
                    } else if bytes[i..].starts_with(b"*/") {
                        depth -= 1;
                        i += 2;
                        if depth == 0 {
                            break;
                        }
                    } else {
                        i += 1;
                    }
                }
                at = i;
            }
            _ => return at,
        }
    }
}

/// The word at byte `at` of `sql` (after spaces and comments).
fn first_word(sql: &str, at: usize) -> &str {
    let start = skip_space(sql, at);
    let rest = sql.get(start..).unwrap_or_default();
    let end = rest.find(|c: char| !(c.is_alphanumeric() || c == '_')).unwrap_or(rest.len());
    &rest[..end]
}

/// The dotted name at byte `at` of `sql` as written (each part without its quotes, in its
/// written case): how a refusal names what the statement wrote.
fn written_name(sql: &str, at: usize) -> Vec<String> {
    let bytes = sql.as_bytes();
    let mut parts = Vec::new();
    let mut i = at;
    loop {
        i = skip_space(sql, i);
        let Some(rest) = sql.get(i..) else { break };
        if let Some(quoted) = rest.strip_prefix('"') {
            let mut text = String::new();
            let mut chars = quoted.char_indices().peekable();
            let mut end = None;
            while let Some((n, c)) = chars.next() {
                if c == '"' {
                    if chars.peek().is_some_and(|(_, c)| *c == '"') {
                        chars.next();
                        text.push('"');
                        continue;
                    }
                    end = Some(n + 1);
                    break;
                }
                text.push(c);
            }
            let Some(end) = end else { break };
            parts.push(text);
            i += 1 + end;
        } else {
            let end = rest
                .find(|c: char| !(c.is_alphanumeric() || c == '_' || c == '$'))
                .unwrap_or(rest.len());
            // `U&"…"` is decoded by PostgreSQL: no name as written (refused on its own).
            if end == 0 || rest[end..].starts_with('&') {
                return Vec::new();
            }
            parts.push(rest[..end].to_string());
            i += end;
        }
        let after = skip_space(sql, i);
        if bytes.get(after) != Some(&b'.') {
            break;
        }
        i = after + 1;
    }
    parts
}

/// Line and column (1-based, in characters) of byte `at` of `sql`.
fn location_of(sql: &str, at: Option<i64>) -> Option<Location> {
    let at = usize::try_from(at?).ok()?;
    let before = sql.get(..at)?;
    let line = before.matches('\n').count() + 1;
    let column = before.rsplit('\n').next().unwrap_or_default().chars().count() + 1;
    Location::at(line as u64, column as u64)
}

/// Node kinds that make a level of an expression (or of a chain of set operations).
const EXPRESSION_LEVELS: &[&str] = &[
    "AExpr",
    "BoolExpr",
    "FuncCall",
    "TypeCast",
    "CaseExpr",
    "CaseWhen",
    "SubLink",
    "NullTest",
    "BooleanTest",
    "AIndirection",
    "CoalesceExpr",
    "MinMaxExpr",
    "RowExpr",
    "AArrayExpr",
    "CollateClause",
    "XmlExpr",
    "SelectStmt",
];

/// One value waiting to be walked.
struct Item<'a> {
    value: &'a Value,
    /// The node kind, when known (from its `Node` wrapper or from the field holding it).
    kind: Option<&'a str>,
    /// Nodes around it.
    depth: usize,
    /// Expression and set-operation levels around it.
    exprs: usize,
    /// The CTE names visible here (an index into `Walk::scopes`).
    scope: usize,
    /// True for an operand of a set operation (`UNION`'s sides are one query with it).
    arm: bool,
}

/// The walk's state.
struct Walk<'a, 'i> {
    sql: &'a str,
    issues: &'i mut Issues,
    /// CTE names in scope, as a chain: `(enclosing scope, the name it adds)`; scope 0 is
    /// empty. One entry per CTE, so a long WITH list costs linear memory.
    scopes: Vec<(usize, Option<&'a str>)>,
    queries: usize,
    reading: Reading,
}

impl<'a, 'i> Walk<'a, 'i> {
    fn new(sql: &'a str, issues: &'i mut Issues) -> Self {
        Self { sql, issues, scopes: vec![(0, None)], queries: 0, reading: Reading::default() }
    }

    fn in_scope(&self, mut scope: usize, name: &str) -> bool {
        while scope != 0 {
            let (parent, added) = self.scopes[scope];
            if added == Some(name) {
                return true;
            }
            scope = parent;
        }
        false
    }

    fn beyond(&mut self, message: String) {
        self.issues.error(
            QueryIssue::new(IssueKind::Syntax, format!("{BEYOND_BOUNDS}{message}"))
                .suggest("split the query, or use IN (…) instead of a long chain of OR or AND"),
        );
    }

    fn call(&mut self, kind: CallKind, mut parts: Vec<String>, at: Option<i64>) {
        let written = at
            .and_then(|at| usize::try_from(at).ok())
            .map(|at| written_name(self.sql, at))
            .filter(|w| w.len() == parts.len())
            .map(|w| w.join("."));
        let Some(name) = parts.pop() else { return };
        let part = |text: String| NamePart { text, quoted: true };
        self.reading.calls.push(Call {
            kind,
            qualifiers: parts.into_iter().map(part).collect(),
            name: part(name),
            location: location_of(self.sql, at),
            written,
        });
    }

    fn operator(&mut self, parts: Vec<String>, at: Option<i64>) {
        let mut parts = parts;
        let Some(symbol) = parts.pop() else { return };
        let part = |text: String| NamePart { text, quoted: true };
        self.reading.calls.push(Call {
            kind: CallKind::Operator,
            qualifiers: parts.into_iter().map(part).collect(),
            name: part(symbol),
            location: location_of(self.sql, at),
            written: None,
        });
    }

    fn refuse(&mut self, message: impl Into<String>, suggestion: &str) {
        self.issues.error(QueryIssue::new(IssueKind::NotReadOnly, message).suggest(suggestion));
    }

    /// Walks the statement's `SelectStmt`.
    fn run(&mut self, statement: &'a Map<String, Value>) {
        let mut stack = Vec::new();
        self.node("SelectStmt", statement, 1, 1, 0, false, &mut stack);
        while let Some(item) = stack.pop() {
            match item.value {
                Value::Array(values) => {
                    for value in values.iter().rev() {
                        if value.is_object() || value.is_array() {
                            stack.push(Item { value, kind: None, ..item });
                        }
                    }
                }
                Value::Object(fields) => {
                    let (kind, fields) = match item.kind {
                        Some(kind) => (kind, fields),
                        None if fields.len() == 1 && fields.contains_key("node") => {
                            match variant(item.value) {
                                Some(found) => found,
                                None => continue,
                            }
                        }
                        None => {
                            self.children("", fields, &item, &mut stack);
                            continue;
                        }
                    };
                    let exprs = item.exprs + usize::from(EXPRESSION_LEVELS.contains(&kind));
                    if !self.node(
                        kind,
                        fields,
                        item.depth + 1,
                        exprs,
                        item.scope,
                        item.arm,
                        &mut stack,
                    ) {
                        return;
                    }
                }
                _ => {}
            }
        }
    }

    /// Judges one node and queues its fields; false once a bound is passed (the walk stops).
    #[allow(clippy::too_many_arguments)]
    fn node(
        &mut self,
        kind: &'a str,
        fields: &'a Map<String, Value>,
        depth: usize,
        exprs: usize,
        scope: usize,
        arm: bool,
        stack: &mut Vec<Item<'a>>,
    ) -> bool {
        if exprs > MAX_EXPRESSION_DEPTH {
            self.beyond(format!(
                "expressions or set operations (UNION, INTERSECT, EXCEPT) nest deeper than {MAX_EXPRESSION_DEPTH} levels"
            ));
            return false;
        }
        if depth > MAX_CALL_DEPTH {
            self.beyond(format!(
                "the query nests expressions or subqueries {depth} deep; at most {MAX_CALL_DEPTH} levels are checked"
            ));
            return false;
        }
        let at = fields.get("location").and_then(Value::as_i64).filter(|at| *at >= 0);
        let mut scope = scope;
        match kind {
            "SelectStmt" => {
                if !arm {
                    self.queries += 1;
                    if self.queries > MAX_QUERIES {
                        self.too_many_queries();
                        return false;
                    }
                }
                if let Some(with) = fields.get("with_clause").and_then(Value::as_object) {
                    match self.with_clause(with, depth, exprs, scope, stack) {
                        Some(inner) => scope = inner,
                        None => return false,
                    }
                }
            }
            "InsertStmt" | "UpdateStmt" | "DeleteStmt" | "MergeStmt" => {
                let keyword = kind.trim_end_matches("Stmt").to_ascii_uppercase();
                self.issues.error(QueryIssue::new(
                    IssueKind::NotReadOnly,
                    format!(
                        "a {keyword} statement inside the query (in a CTE or subquery) writes data"
                    ),
                ));
                return true;
            }
            "IntoClause" => {
                self.refuse("SELECT … INTO creates a table", "remove the INTO clause");
                return true;
            }
            "LockingClause" => {
                self.refuse(
                    "FOR UPDATE/FOR SHARE locks rows; a read-only query may not lock",
                    "remove the FOR UPDATE/SHARE clause",
                );
                return true;
            }
            "FuncCall" => self.call(CallKind::Function, names(fields.get("funcname")), at),
            // TABLESAMPLE's method is a handler function of that name.
            "RangeTableSample" => {
                self.call(CallKind::Function, names(fields.get("method")), at);
            }
            "AExpr" => self.a_expr(fields, at),
            "SubLink" => {
                // `x IN (SELECT …)` compares with `=`; `x < ANY (SELECT …)` with its operator.
                let sub_link = fields.get("sub_link_type").and_then(Value::as_i64).unwrap_or(0);
                if matches!(sub_link, 2..=4) {
                    let operator = names(fields.get("oper_name"));
                    let operator = if operator.is_empty() { vec!["=".into()] } else { operator };
                    self.operator(operator, at);
                }
            }
            "SortBy" => {
                let operator = names(fields.get("use_op"));
                if !operator.is_empty() {
                    self.operator(operator, at);
                }
            }
            // `CASE x WHEN v` compares x with each v by `=`.
            "CaseExpr" if fields.get("arg").is_some_and(Value::is_object) => {
                self.operator(vec!["=".into()], at)
            }
            // A cast, a typed literal, a column definition: the type's input, type-modifier
            // and cast functions run.
            "TypeName" => self.call(CallKind::Type, names(fields.get("names")), at),
            "ColumnRef" => {
                let fields_list = fields.get("fields").and_then(Value::as_array);
                if fields_list.is_some_and(|f| f.len() >= 2)
                    && let Some(last) = names(fields.get("fields")).pop()
                    && fields_list.and_then(|f| f.last()).and_then(variant).map(|v| v.0)
                        == Some("String")
                {
                    let written = at
                        .and_then(|at| usize::try_from(at).ok())
                        .map(|at| written_name(self.sql, at))
                        .and_then(|mut w| w.pop())
                        .unwrap_or_else(|| last.clone());
                    self.reading.attributes.push((last, written));
                }
            }
            "AIndirection" => {
                for name in names(fields.get("indirection")) {
                    self.reading.attributes.push((name.clone(), name));
                }
            }
            "RangeVar" => {
                let name = fields.get("relname").and_then(Value::as_str).unwrap_or_default();
                let schema = fields
                    .get("schemaname")
                    .and_then(Value::as_str)
                    .filter(|s| !s.is_empty())
                    .map(str::to_string);
                if schema.is_some() || !self.in_scope(scope, name) {
                    self.reading.relations.tables.push((schema, name.to_string()));
                }
            }
            "RangeFunction" => {
                // Each entry is a list of the call and its column definitions.
                for entry in fields.get("functions").and_then(Value::as_array).into_iter().flatten()
                {
                    let call = match variant(entry) {
                        Some(("List", list)) => list.get("items").and_then(|i| i.get(0)),
                        _ => Some(entry),
                    };
                    if let Some(("FuncCall", f)) = call.and_then(variant) {
                        let mut parts = names(f.get("funcname"));
                        if let Some(name) = parts.pop() {
                            self.reading.relations.functions.push((parts.pop(), name));
                        }
                    }
                }
            }
            _ => {}
        }
        let item = Item { value: &Value::Null, kind: None, depth, exprs, scope, arm: false };
        self.children(kind, fields, &item, stack);
        true
    }

    /// The operators an `A_Expr` runs.
    fn a_expr(&mut self, fields: &Map<String, Value>, at: Option<i64>) {
        use pg_query::protobuf::AExprKind as K;
        let kind = fields.get("kind").and_then(Value::as_i64).unwrap_or(0);
        let pair = |a: &str, b: &str| [vec![a.to_string()], vec![b.to_string()]];
        // BETWEEN is written with its own words but runs comparisons.
        let implied = if kind == K::AexprBetween as i64 || kind == K::AexprBetweenSym as i64 {
            Some(pair(">=", "<="))
        } else if kind == K::AexprNotBetween as i64 || kind == K::AexprNotBetweenSym as i64 {
            Some(pair("<", ">"))
        } else {
            None
        };
        match implied {
            Some([a, b]) => {
                self.operator(a, at);
                self.operator(b, at);
            }
            None => self.operator(names(fields.get("name")), at),
        }
    }

    /// Queues each CTE's query with the names visible to it, and returns the scope of the rest
    /// of the query (every CTE of the list), or `None` past [`MAX_QUERIES`] (each CTE is a
    /// query). Without RECURSIVE a CTE sees only those before it, so
    /// `WITH t AS (SELECT * FROM t)` reads the relation `t`.
    fn with_clause(
        &mut self,
        with: &'a Map<String, Value>,
        depth: usize,
        exprs: usize,
        scope: usize,
        stack: &mut Vec<Item<'a>>,
    ) -> Option<usize> {
        let recursive = with.get("recursive").and_then(Value::as_bool).unwrap_or(false);
        let ctes: Vec<(&'a Map<String, Value>, &'a str)> = with
            .get("ctes")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .filter_map(|cte| match variant(cte) {
                Some(("CommonTableExpr", fields)) => Some((
                    fields,
                    fields.get("ctename").and_then(Value::as_str).unwrap_or_default(),
                )),
                _ => None,
            })
            .collect();
        if self.queries + ctes.len() > MAX_QUERIES {
            self.too_many_queries();
            return None;
        }
        // Scope k holds the first k names.
        let mut chain = vec![scope];
        for (_, name) in &ctes {
            self.scopes.push((*chain.last().unwrap_or(&scope), Some(name)));
            chain.push(self.scopes.len() - 1);
        }
        let all = *chain.last().unwrap_or(&scope);
        for (i, (fields, _)) in ctes.iter().enumerate() {
            let visible = if recursive { all } else { chain[i] };
            let item =
                Item { value: &Value::Null, kind: None, depth, exprs, scope: visible, arm: false };
            self.children("CommonTableExpr", fields, &item, stack);
        }
        Some(all)
    }

    fn too_many_queries(&mut self) {
        self.beyond(format!(
            "the statement holds more than {MAX_QUERIES} queries (CTEs and subqueries); a database's planner takes ever longer on each — split it"
        ));
    }

    /// Queues the fields of a node of `kind` (typed fields get their kind from their name).
    fn children(
        &mut self,
        kind: &str,
        fields: &'a Map<String, Value>,
        item: &Item<'a>,
        stack: &mut Vec<Item<'a>>,
    ) {
        for (key, value) in fields.iter().rev() {
            if !(value.is_object() || value.is_array()) {
                continue;
            }
            // Walked by `with_clause`, with the CTEs' scopes.
            if kind == "SelectStmt" && key == "with_clause" {
                continue;
            }
            let (typed, arm) = match key.as_str() {
                "type_name" => (Some("TypeName"), false),
                "larg" | "rarg" => (Some("SelectStmt"), true),
                "into_clause" => (Some("IntoClause"), false),
                _ => (None, false),
            };
            // A typed field is a node of that kind without a `Node` wrapper (`JoinExpr`'s
            // `larg` is wrapped, `SelectStmt`'s is not).
            let unwrapped =
                value.as_object().is_some_and(|o| !(o.len() == 1 && o.contains_key("node")));
            stack.push(Item {
                value,
                kind: typed.filter(|_| unwrapped),
                depth: item.depth,
                exprs: item.exprs,
                scope: item.scope,
                arm,
            });
        }
    }
}
