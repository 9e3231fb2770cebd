//! What PostgreSQL's planner expects a caller's statement to write to temporary files on the
//! database host, read from `EXPLAIN (FORMAT JSON)` before it runs: the largest input of a
//! node that spills past `work_mem` (a sort, a hash table, a hashed aggregate or set
//! operation, a materialised or windowed input, a set-returning function's or a CTE's
//! tuplestore), as estimated rows × estimated width.
//!
//! Estimates can be far off (a function PostgreSQL has no row estimate for is guessed at 1000
//! rows), so this refuses only what the planner itself expects to be huge; what bounds the
//! rest is `temp_file_limit` (see `postgres.rs`).

use postgres::types::{FromSql, Type};
use serde_json::Value;

/// The most a caller's statement may be planned to spill: a node whose input the planner
/// estimates larger is refused before the statement runs. Sorting or hashing 2 GiB is far
/// past what a question over tables of millions of rows needs (a 10-million-row sort of
/// 100-byte rows is 1 GB).
pub const MAX_PLANNED_SPILL_BYTES: f64 = 2.0 * (1u64 << 30) as f64;

/// The planner's largest spilling node.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Spill {
    /// The node, as EXPLAIN names it (`Sort`, `HashAggregate`, `Function Scan on generate_series`).
    pub node: String,
    /// Its estimated input rows.
    pub rows: f64,
    /// Its estimated input bytes (rows × width).
    pub bytes: f64,
}

/// The text of a `json` value (EXPLAIN's output type).
pub(crate) struct JsonText(pub String);

impl<'a> FromSql<'a> for JsonText {
    fn from_sql(_: &Type, raw: &'a [u8]) -> Result<Self, Box<dyn std::error::Error + Sync + Send>> {
        Ok(Self(std::str::from_utf8(raw)?.to_string()))
    }

    fn accepts(ty: &Type) -> bool {
        *ty == Type::JSON || *ty == Type::TEXT
    }
}

/// The largest spilling node of an `EXPLAIN (FORMAT JSON)` answer, if there is one.
pub(crate) fn largest_spill(explained: &str) -> Option<Spill> {
    let parsed: Value = serde_json::from_str(explained).ok()?;
    let mut pending: Vec<&Value> =
        parsed.as_array()?.iter().filter_map(|entry| entry.get("Plan")).collect();
    let mut largest: Option<Spill> = None;
    // Iterative: a plan is as deep as the query's nesting.
    while let Some(node) = pending.pop() {
        let children: Vec<&Value> = node
            .get("Plans")
            .and_then(Value::as_array)
            .map(|p| p.iter().collect())
            .unwrap_or_default();
        if let Some(spill) = spill_of(node, &children)
            && largest.as_ref().is_none_or(|l| spill.bytes > l.bytes)
        {
            largest = Some(spill);
        }
        pending.extend(children);
    }
    largest
}

/// What `node` may write to temporary files: its first child's output for the nodes that
/// store their input, its own output for the scans that store theirs.
fn spill_of(node: &Value, children: &[&Value]) -> Option<Spill> {
    let kind = node.get("Node Type")?.as_str()?;
    let strategy = node.get("Strategy").and_then(Value::as_str).unwrap_or_default();
    let stored = match kind {
        "Sort" | "Incremental Sort" | "Hash" | "Materialize" | "WindowAgg" | "Memoize" => {
            *children.first()?
        }
        "Aggregate" | "SetOp" if matches!(strategy, "Hashed" | "Mixed") => *children.first()?,
        "Function Scan" | "Table Function Scan" | "CTE Scan" | "Recursive Union" => node,
        _ => return None,
    };
    let rows = stored.get("Plan Rows")?.as_f64()?;
    let width = stored.get("Plan Width")?.as_f64()?;
    let name = match (kind, node.get("Function Name").and_then(Value::as_str)) {
        ("Aggregate", _) => format!("{strategy} Aggregate"),
        (_, Some(function)) => format!("{kind} on {function}"),
        _ => kind.to_string(),
    };
    Some(Spill { node: name, rows, bytes: rows * width })
}

/// Bytes for a message: `8.0 GB`.
pub(crate) fn shown_bytes(bytes: f64) -> String {
    match bytes {
        b if b >= 1e9 => format!("{:.1} GB", b / 1e9),
        b if b >= 1e6 => format!("{:.1} MB", b / 1e6),
        b => format!("{b:.0} bytes"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_largest_stored_input_is_found_at_any_depth() {
        let plan = r#"[{"Plan": {"Node Type": "Aggregate", "Strategy": "Hashed", "Plan Rows": 200, "Plan Width": 4,
            "Plans": [{"Node Type": "Function Scan", "Function Name": "generate_series", "Plan Rows": 2000000000, "Plan Width": 4}]}}]"#;
        let spill = largest_spill(plan).expect("a spill");
        assert_eq!(spill.bytes, 8e9);
        assert_eq!(spill.node, "Hashed Aggregate", "its input is the series");
        let plan = r#"[{"Plan": {"Node Type": "Limit", "Plan Rows": 10, "Plan Width": 8, "Plans": [
            {"Node Type": "Sort", "Plan Rows": 1000, "Plan Width": 8, "Plans": [
              {"Node Type": "Seq Scan", "Plan Rows": 3000, "Plan Width": 50}]}]}}]"#;
        assert_eq!(
            largest_spill(plan).map(|s| (s.node, s.bytes)),
            Some(("Sort".into(), 150_000.0))
        );
        let plan = r#"[{"Plan": {"Node Type": "Aggregate", "Strategy": "Plain", "Plan Rows": 1, "Plan Width": 8,
            "Plans": [{"Node Type": "Seq Scan", "Plan Rows": 1e9, "Plan Width": 8}]}}]"#;
        assert_eq!(largest_spill(plan), None, "a plain aggregate stores nothing");
        assert_eq!(largest_spill("not json"), None);
    }
}
