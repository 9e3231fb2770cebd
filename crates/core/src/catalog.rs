//! The structure of a relational database: tables and views, their columns, keys, foreign keys,
//! row counts and comments. Filled by the SQL sources; read by describe_schema, the docs
//! generator and schema retrieval (FK expansion).

use serde::{Deserialize, Serialize};

/// Whether a relation stores rows or derives them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum TableKind {
    /// A base table.
    Table,
    /// A view (its rows come from a query).
    View,
}

/// One column of a table.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ColumnInfo {
    /// The column's name, as the database spells it.
    pub name: String,
    /// The declared type (`NVARCHAR(120)`, `integer`, …); empty when none was declared.
    pub declared_type: String,
    /// False for `NOT NULL` columns (primary-key columns included).
    pub nullable: bool,
    /// The column's comment (`COMMENT ON COLUMN`), if any.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub comment: Option<String>,
    /// The built-in type the column stores when the declared type is a domain (`integer` for a
    /// domain over a domain over `integer`): its values are read and profiled as that type.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub base_type: Option<String>,
}

/// A foreign key: `columns` of the owning table reference `referenced_columns` of another.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ForeignKey {
    /// The referencing columns, in key order.
    pub columns: Vec<String>,
    /// The referenced table.
    pub referenced_table: String,
    /// The referenced columns, in key order (the referenced table's primary key when omitted in
    /// the DDL, resolved by the source).
    pub referenced_columns: Vec<String>,
}

/// One table or view.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TableInfo {
    /// The table's name (unqualified in SQLite; `schema.table` in PostgreSQL outside `public`).
    pub name: String,
    /// Table or view.
    pub kind: TableKind,
    /// Columns in declaration order.
    pub columns: Vec<ColumnInfo>,
    /// Primary-key columns in key order; empty when there is none.
    pub primary_key: Vec<String>,
    /// Foreign keys this table declares.
    pub foreign_keys: Vec<ForeignKey>,
    /// Number of rows, when known: counted, or the planner's estimate when
    /// [`Self::row_count_estimated`].
    pub row_count: Option<u64>,
    /// True when `row_count` is the engine's estimate (PostgreSQL's `reltuples` for a large
    /// table), not a count.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub row_count_estimated: bool,
    /// The table's comment (`COMMENT ON TABLE`), if any.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub comment: Option<String>,
}

impl TableInfo {
    /// The column called `name` (exact match first, then ASCII case-insensitive, as SQL resolves
    /// unquoted names).
    pub fn column(&self, name: &str) -> Option<&ColumnInfo> {
        self.columns
            .iter()
            .find(|c| c.name == name)
            .or_else(|| self.columns.iter().find(|c| c.name.eq_ignore_ascii_case(name)))
    }

    /// True when `column` is part of the primary key.
    pub fn is_primary_key(&self, column: &str) -> bool {
        self.primary_key.iter().any(|c| c.eq_ignore_ascii_case(column))
    }

    /// The foreign key a column takes part in, if any.
    pub fn foreign_key_of(&self, column: &str) -> Option<&ForeignKey> {
        self.foreign_keys
            .iter()
            .find(|fk| fk.columns.iter().any(|c| c.eq_ignore_ascii_case(column)))
    }
}

/// A foreign key seen from the referenced side: `table` references us through `key`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct IncomingKey<'a> {
    /// The referencing table.
    pub table: &'a TableInfo,
    /// Its foreign key.
    pub key: &'a ForeignKey,
}

/// All tables and views of a database.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Catalog {
    /// Tables and views, in name order.
    pub tables: Vec<TableInfo>,
}

impl Catalog {
    /// The table called `name` (exact match first, then ASCII case-insensitive).
    pub fn table(&self, name: &str) -> Option<&TableInfo> {
        self.tables
            .iter()
            .find(|t| t.name == name)
            .or_else(|| self.tables.iter().find(|t| t.name.eq_ignore_ascii_case(name)))
    }

    /// Names of all tables and views.
    pub fn table_names(&self) -> Vec<&str> {
        self.tables.iter().map(|t| t.name.as_str()).collect()
    }

    /// Foreign keys of other tables (or the same one) that reference `table`.
    pub fn referenced_by<'a>(&'a self, table: &str) -> Vec<IncomingKey<'a>> {
        self.tables
            .iter()
            .flat_map(|t| t.foreign_keys.iter().map(move |key| IncomingKey { table: t, key }))
            .filter(|incoming| incoming.key.referenced_table.eq_ignore_ascii_case(table))
            .collect()
    }

    /// Tables one foreign-key hop away from `table`, in both directions, without `table` itself;
    /// in name order, no repeats.
    pub fn neighbours(&self, table: &str) -> Vec<&str> {
        let mut out: Vec<&str> = Vec::new();
        if let Some(t) = self.table(table) {
            for fk in &t.foreign_keys {
                if let Some(target) = self.table(&fk.referenced_table) {
                    out.push(&target.name);
                }
            }
        }
        for incoming in self.referenced_by(table) {
            out.push(&incoming.table.name);
        }
        out.retain(|name| !name.eq_ignore_ascii_case(table));
        out.sort_unstable();
        out.dedup();
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn column(name: &str) -> ColumnInfo {
        ColumnInfo {
            name: name.into(),
            declared_type: "INTEGER".into(),
            nullable: false,
            comment: None,
            base_type: None,
        }
    }

    fn table(name: &str, columns: &[&str], fks: &[(&str, &str, &str)]) -> TableInfo {
        TableInfo {
            name: name.into(),
            kind: TableKind::Table,
            columns: columns.iter().map(|c| column(c)).collect(),
            primary_key: vec![columns[0].into()],
            foreign_keys: fks
                .iter()
                .map(|(c, t, r)| ForeignKey {
                    columns: vec![(*c).into()],
                    referenced_table: (*t).into(),
                    referenced_columns: vec![(*r).into()],
                })
                .collect(),
            row_count: None,
            row_count_estimated: false,
            comment: None,
        }
    }

    fn chinook_like() -> Catalog {
        Catalog {
            tables: vec![
                table(
                    "Customer",
                    &["CustomerId", "SupportRepId"],
                    &[("SupportRepId", "Employee", "EmployeeId")],
                ),
                table(
                    "Employee",
                    &["EmployeeId", "ReportsTo"],
                    &[("ReportsTo", "Employee", "EmployeeId")],
                ),
                table(
                    "Invoice",
                    &["InvoiceId", "CustomerId"],
                    &[("CustomerId", "Customer", "CustomerId")],
                ),
                table("Genre", &["GenreId"], &[]),
            ],
        }
    }

    #[test]
    fn neighbours_follow_keys_both_ways_without_self_references() {
        let catalog = chinook_like();
        assert_eq!(catalog.neighbours("Customer"), vec!["Employee", "Invoice"]);
        assert_eq!(catalog.neighbours("employee"), vec!["Customer"]);
        assert_eq!(catalog.neighbours("Genre"), Vec::<&str>::new());
        assert_eq!(catalog.neighbours("Missing"), Vec::<&str>::new());
    }

    #[test]
    fn lookups_prefer_exact_names_then_ignore_case() {
        let catalog = chinook_like();
        assert_eq!(catalog.table("invoice").map(|t| t.name.as_str()), Some("Invoice"));
        let customer = catalog.table("Customer").expect("table");
        assert_eq!(customer.column("supportrepid").map(|c| c.name.as_str()), Some("SupportRepId"));
        assert!(customer.is_primary_key("customerid"));
        assert_eq!(
            customer.foreign_key_of("SupportRepId").map(|f| f.referenced_table.as_str()),
            Some("Employee")
        );
        assert_eq!(catalog.referenced_by("Employee").len(), 2);
    }
}
