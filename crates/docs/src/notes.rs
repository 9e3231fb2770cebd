//! Per-column notes supplied by the caller (value domains, ranges, formats from column profiles),
//! shown beside a column in the schema context and searchable like documentation.

use foldhash::HashMap;

/// Notes keyed by table and column, matched ASCII case-insensitively.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ColumnNotes {
    notes: HashMap<(String, String), String>,
}

impl ColumnNotes {
    /// No notes.
    pub fn new() -> Self {
        Self::default()
    }

    /// Sets the note of `table.column`, replacing any earlier one.
    pub fn insert(&mut self, table: &str, column: &str, note: impl Into<String>) {
        self.notes.insert(key(table, column), note.into());
    }

    /// The note of `table.column`.
    pub fn get(&self, table: &str, column: &str) -> Option<&str> {
        if self.notes.is_empty() {
            return None;
        }
        self.notes.get(&key(table, column)).map(String::as_str)
    }

    /// Number of notes.
    pub fn len(&self) -> usize {
        self.notes.len()
    }

    /// True when there are none.
    pub fn is_empty(&self) -> bool {
        self.notes.is_empty()
    }
}

fn key(table: &str, column: &str) -> (String, String) {
    (table.to_ascii_lowercase(), column.to_ascii_lowercase())
}

#[cfg(test)]
mod tests {
    #[test]
    fn lookups_ignore_case() {
        let mut notes = super::ColumnNotes::new();
        notes.insert("Genre", "Name", "one of Rock, Jazz");
        assert_eq!(notes.get("genre", "NAME"), Some("one of Rock, Jazz"));
        assert_eq!(notes.get("genre", "GenreId"), None);
    }
}
