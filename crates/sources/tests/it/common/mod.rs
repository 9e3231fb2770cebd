//! What the tests share: a file in a temporary directory, and checks for database sources (a
//! profile computed inside the database must equal the one the in-memory profiler builds from
//! the same rows).

use schemascope_core::path::PropertyPath;
use schemascope_core::profile::numeric::HistogramLayout;
use schemascope_core::property::BinCounter;
use schemascope_core::{Collection, CollectionKind, OwnedItem, TableInfo};
use schemascope_sources::sql::Database;
use schemascope_sources::sql::pushdown::{TableBins, profile_table};
use schemascope_sources::sql::rows::profiled_rows;
use serde_json::Value;

/// A file `name` holding `bytes` in a new temporary directory, which lasts while the guard
/// returned with it does.
pub(crate) fn temp_file(
    name: &str,
    bytes: impl AsRef<[u8]>,
) -> (tempfile::TempDir, std::path::PathBuf) {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join(name);
    std::fs::write(&path, bytes).expect("write");
    (dir, path)
}

/// Every row of `table`, profiled in memory.
pub(crate) fn in_memory(db: &dyn Database, table: &TableInfo) -> Collection {
    let rows = profiled_rows(db, table, usize::MAX >> 1).expect("rows");
    Collection::from_values(
        table.name.clone(),
        CollectionKind::Table,
        rows.into_iter().enumerate().map(|(i, v)| OwnedItem::new(i.to_string(), v)),
    )
}

fn close(a: f64, b: f64) -> bool {
    a == b || (a - b).abs() <= 1e-9 * a.abs().max(b.abs()).max(1.0)
}

/// Compares two JSON trees, numbers within a relative 1e-9.
pub(crate) fn assert_same(left: &Value, right: &Value, at: &str) {
    match (left, right) {
        (Value::Number(a), Value::Number(b)) => {
            let (a, b) = (a.as_f64().unwrap_or(f64::NAN), b.as_f64().unwrap_or(f64::NAN));
            assert!(close(a, b), "{at}: pushdown {a} vs memory {b}");
        }
        (Value::Object(a), Value::Object(b)) => {
            let mut keys: Vec<&String> = a.keys().chain(b.keys()).collect();
            keys.sort();
            keys.dedup();
            for key in keys {
                assert_same(
                    a.get(key).unwrap_or(&Value::Null),
                    b.get(key).unwrap_or(&Value::Null),
                    &format!("{at}.{key}"),
                );
            }
        }
        (Value::Array(a), Value::Array(b)) => {
            assert_eq!(a.len(), b.len(), "{at}: pushdown {left} vs memory {right}");
            for (i, (x, y)) in a.iter().zip(b).enumerate() {
                assert_same(x, y, &format!("{at}[{i}]"));
            }
        }
        _ => assert_eq!(left, right, "{at}"),
    }
}

/// Every table's pushdown profile equals its in-memory profile, quartiles included.
pub(crate) fn assert_pushdown_matches_memory(db: &dyn Database) {
    let catalog = db.catalog().expect("catalog");
    assert!(!catalog.tables.is_empty());
    // Tables of other schemas are other tests' scratch tables, made and dropped concurrently.
    for table in catalog.tables.iter().filter(|t| !t.name.contains('.')) {
        assert_table_matches_memory(db, table);
    }
}

/// `table`'s pushdown profile equals its in-memory profile, quartiles included.
pub(crate) fn assert_table_matches_memory(db: &dyn Database, table: &TableInfo) {
    let pushed = profile_table(db, table).expect("pushdown profile");
    let memory = in_memory(db, table);
    let expected = memory.profile();
    if expected.item_count == 0 {
        // No rows: the catalog still names every column, which memory cannot know.
        assert_eq!(pushed.item_count, 0);
        assert_eq!(pushed.properties().len(), table.columns.len(), "{}", table.name);
        return;
    }
    assert_same(
        &serde_json::to_value(&pushed).expect("json"),
        &serde_json::to_value(expected).expect("json"),
        &table.name,
    );
    for column in &table.columns {
        let path = PropertyPath::root().child(&column.name);
        let (Some(p), Some(m)) = (pushed.property(&path), expected.property(&path)) else {
            continue;
        };
        if let (Some(p), Some(m)) = (&p.numbers, &m.numbers) {
            // Exact extremes, median and top values (past 2^53 doubles would merge
            // neighbours) agree to the last digit.
            assert_eq!(
                (
                    p.exact_range,
                    p.min_value(),
                    p.max_value(),
                    p.exact_median,
                    p.median_value(),
                    &p.top,
                    p.distinct
                ),
                (
                    m.exact_range,
                    m.min_value(),
                    m.max_value(),
                    m.exact_median,
                    m.median_value(),
                    &m.top,
                    m.distinct
                ),
                "{}.{}",
                table.name,
                column.name
            );
            assert!(
                close(p.mean, m.mean) && close(p.std_dev, m.std_dev),
                "{}.{}: mean/std {} {} vs {} {}",
                table.name,
                column.name,
                p.mean,
                p.std_dev,
                m.mean,
                m.std_dev
            );
            for k in 0..2 {
                assert!(
                    close(p.quartiles[k], m.quartiles[k]),
                    "{}.{}: quartile {k}: {} vs {}",
                    table.name,
                    column.name,
                    p.quartiles[k],
                    m.quartiles[k]
                );
            }
        }
    }
}

/// Histogram bins of `columns` counted by the database equal those counted over sorted values.
pub(crate) fn assert_histograms_match(db: &dyn Database, table: &str, columns: &[&str]) {
    let catalog = db.catalog().expect("catalog");
    let table = catalog.table(table).expect("table");
    let memory = in_memory(db, table);
    let pushed = profile_table(db, table).expect("pushdown profile");
    let bins = TableBins { db, table };
    for column in columns {
        let path = PropertyPath::root().child(column);
        let numbers =
            memory.profile().property(&path).and_then(|p| p.numbers.clone()).expect("numbers");
        let pushed_numbers =
            pushed.property(&path).and_then(|p| p.numbers.clone()).expect("pushdown numbers");
        let runs = numbers.runs.clone().expect("in-memory values");
        // Asked bin counts, and the automatic layout (log or outlier bins for skewed columns).
        for wanted in
            [Some(1), Some(4), Some(5), Some(6), Some(numbers.auto_bins()), Some(37), None]
        {
            let layout = HistogramLayout::for_numbers(&numbers, wanted).expect("layout");
            // The database's own profile picks the same edges on the same scale.
            assert_eq!(
                HistogramLayout::for_numbers(&pushed_numbers, wanted).as_ref(),
                Some(&layout),
                "{}.{column} with {wanted:?} bins",
                table.name
            );
            if let Some(wanted) = wanted {
                assert!(
                    layout.bins() <= wanted,
                    "{}.{column}: {} bins for {wanted}",
                    table.name,
                    layout.bins()
                );
            }
            let counted = bins.count_bins(&path, &layout).expect("counted in the database");
            assert_eq!(
                counted,
                layout.count_runs(&runs),
                "{}.{column} with {wanted:?} bins",
                table.name
            );
            assert_eq!(counted.iter().sum::<u64>(), numbers.count);
        }
    }
}
