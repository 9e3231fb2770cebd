//! Benchmark: describe_property on a large PostgreSQL table computed inside the database
//! (pushdown) versus pulling the column's rows and profiling them in memory.
//!
//! `cargo run --release -p schemascope-sources --example pushdown_bench -- URI TABLE COLUMN... [--runs N]`
//! (bench/README.md: `bash scripts/postgres big-table` makes the 10M-row `bench_readings`).

use std::time::Instant;

use schemascope_core::path::PropertyPath;
use schemascope_core::property::{
    BinCounter, PropertyOptions, describe_property, describe_property_with,
};
use schemascope_core::{Collection, CollectionKind, OwnedItem};
use schemascope_sources::sql::pushdown::{JsonView, TableBins, profile_columns};
use schemascope_sources::sql::{Database, PostgresDatabase};

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut args: Vec<String> = std::env::args().skip(1).collect();
    let runs = match args.iter().position(|a| a == "--runs") {
        Some(i) => {
            let n = args.get(i + 1).and_then(|n| n.parse().ok()).unwrap_or(3);
            args.drain(i..=i + 1);
            n
        }
        None => 3,
    };
    let [uri, table, columns @ ..] = args.as_slice() else {
        return Err("usage: pushdown_bench URI TABLE COLUMN... [--runs N]".into());
    };
    let db = PostgresDatabase::connect(uri)?;
    let catalog = db.catalog()?;
    let info = catalog.table(table).ok_or("no such table")?;
    println!(
        "| column | pushdown s | pull + profile s | pull / pushdown | rows crossing the wire (pushdown vs pull) |"
    );
    println!("|---|---|---|---|---|");
    for column in columns {
        let path = PropertyPath::root().child(column);
        let index = info.columns.iter().position(|c| &c.name == column).ok_or("no such column")?;
        let (mut pushed, mut pulled) = (Vec::new(), Vec::new());
        let mut transferred = (0usize, 0usize);
        for _ in 0..runs {
            let start = Instant::now();
            let profile = profile_columns(&db, info, Some(&[column.as_str()]))?;
            let bins = TableBins { db: &db, table: info };
            let a = describe_property_with(
                &profile,
                table,
                &path,
                PropertyOptions::default(),
                Some(&bins as &dyn BinCounter),
            );
            pushed.push(start.elapsed().as_secs_f64());

            let start = Instant::now();
            let view = JsonView::new(db.dialect(), info)?;
            let rows = db.query_with_timeout(
                &format!("SELECT c{index} FROM {}", view.from),
                &[],
                600_000,
            )?;
            transferred.1 = rows.len();
            let items = rows.into_iter().enumerate().map(|(i, r)| {
                let mut object = serde_json::Map::new();
                object.insert(column.clone(), r[0].to_json());
                OwnedItem::new(i.to_string(), serde_json::Value::Object(object))
            });
            let collection = Collection::from_values(table.clone(), CollectionKind::Table, items);
            let b =
                describe_property(collection.profile(), table, &path, PropertyOptions::default());
            pulled.push(start.elapsed().as_secs_f64());
            assert_eq!(a.data["uniqueCount"], b.data["uniqueCount"], "both ways agree");
            assert_eq!(a.data["histogram"], b.data["histogram"], "both ways agree");
            transferred.0 = a.data["histogram"].as_array().map_or(0, Vec::len) + 30;
        }
        let (p, q) = (median(pushed), median(pulled));
        println!(
            "| `{column}` | {p:.2} | {q:.2} | {:.2}× | ~{} vs {} |",
            q / p,
            transferred.0,
            transferred.1
        );
    }
    Ok(())
}
