//! Tables of many files: Hive-style partitioned folders as pyarrow writes them
//! (`tests/tables/write_partitioned.py`), read as one table whose partition keys are columns,
//! every answer compared with DuckDB's `hive_partitioning` over the same directory, and the
//! table's profile with the profile of the same rows in one file.

use std::path::Path;

use schemascope_core::{Collection, PropertyPath, PropertyProfile};
use serde_json::Value;

use super::sql_files::{agrees, database, load_path, ours, python, table_file};

/// `source` (a file of testdata/tables) written under `dir` partitioned by `keys`.
fn partitioned(source: &str, dir: &Path, format: &str, keys: &str) {
    let source = table_file(source);
    python(&[
        "tests/tables/write_partitioned.py",
        source.to_str().expect("utf-8"),
        dir.to_str().expect("utf-8"),
        format,
        keys,
    ]);
}

fn property<'a>(collection: &'a Collection, name: &str) -> &'a PropertyProfile {
    let path = PropertyPath::root().child(name);
    collection.profile().property(&path).unwrap_or_else(|| panic!("no property {name}"))
}

/// The figures of `name` that do not depend on how a file stores its numbers.
fn figures(collection: &Collection, name: &str) -> Value {
    let p = property(collection, name);
    let numbers = p.numbers.as_ref().map(|n| {
        serde_json::json!([n.count, n.min, n.max, n.median, n.distinct, format!("{:.9}", n.mean)])
    });
    let strings = p.strings.as_ref().map(|s| {
        let top: Vec<_> = s.top.iter().map(|v| (v.value.to_string(), v.count)).collect();
        serde_json::json!([s.count, s.distinct, s.min, s.max, top])
    });
    serde_json::json!({"present": p.present, "nulls": p.nulls, "distinct": p.distinct, "numbers": numbers, "strings": strings})
}

#[test]
fn a_partitioned_parquet_folder_is_one_table_whose_keys_are_columns_as_duckdb_reads_it() {
    let dir = tempfile::tempdir().expect("tempdir");
    let cars = dir.path().join("cars");
    partitioned("cars.json", &cars, "parquet", "Origin,Cylinders");
    // What writers leave beside the data: skipped, as Spark and DuckDB skip it.
    std::fs::write(cars.join("_SUCCESS"), "").expect("write");
    std::fs::write(cars.join("Origin=USA/.part-0.parquet.crc"), "crc").expect("write");

    let source = load_path(&cars);
    assert_eq!(source.collection_names(), ["cars"]);
    assert!(source.warnings.is_empty(), "{:?}", source.warnings);
    let db = database(&source);
    let columns: Vec<String> =
        db.catalog().expect("catalog").tables[0].columns.iter().map(|c| c.name.clone()).collect();
    assert_eq!(columns.last().map(String::as_str), Some("Cylinders"), "{columns:?}");
    assert!(columns.contains(&"Origin".to_string()), "{columns:?}");

    for sql in [
        r#"SELECT "Origin", "Cylinders", COUNT(*), AVG("Miles_per_Gallon"), MAX("Horsepower") FROM cars GROUP BY 1, 2 ORDER BY 1, 2"#,
        r#"SELECT "Name", "Origin" FROM cars WHERE "Cylinders" = 6 AND "Origin" <> 'USA' ORDER BY "Name" LIMIT 5"#,
        r#"SELECT COUNT(*), COUNT("Horsepower"), SUM("Cylinders") FROM cars"#,
        r#"SELECT "Origin", "Name" FROM cars ORDER BY "Miles_per_Gallon" DESC NULLS LAST, "Name" LIMIT 3"#,
    ] {
        agrees(&cars, sql);
    }
    // The profile is the one of the same rows in one file.
    let whole = load_path(&table_file("cars.json"));
    let (table, file) = (&source.collections[0], &whole.collections[0]);
    assert_eq!(table.item_count(), file.item_count());
    for name in ["Origin", "Cylinders", "Name", "Miles_per_Gallon", "Horsepower", "Year"] {
        assert_eq!(figures(table, name), figures(file, name), "{name}");
    }
    // Every row is an item (a small table), with its keys, named by its file.
    let item = table.items().next().expect("an item");
    let text = item.json;
    assert!(text.contains(r#""Origin":"Europe""#) && text.contains(r#""Cylinders":4"#), "{text}");
    assert!(item.id.starts_with("Origin=Europe/Cylinders=4/part-0.parquet#"), "{}", item.id);
}

#[test]
fn null_keys_text_keys_and_csv_parts_agree_with_duckdb() {
    let dir = tempfile::tempdir().expect("tempdir");
    // Horsepower is null in 6 cars: those rows lie under `Horsepower=__HIVE_DEFAULT_PARTITION__`.
    let by_power = dir.path().join("by_power");
    partitioned("cars.json", &by_power, "csv", "Horsepower");
    assert!(by_power.join("Horsepower=__HIVE_DEFAULT_PARTITION__").is_dir());
    let source = load_path(&by_power);
    let db = database(&source);
    let nulls = ours(db, "SELECT COUNT(*) FROM by_power WHERE \"Horsepower\" IS NULL");
    assert_eq!(nulls, vec![vec![Value::from(6)]]);
    agrees(
        &by_power,
        r#"SELECT "Horsepower", COUNT(*), MIN("Name") FROM by_power GROUP BY 1 ORDER BY 1 NULLS FIRST"#,
    );
    let p = property(&source.collections[0], "Horsepower");
    assert_eq!((p.present, p.nulls), (406, 6));
    assert_eq!(p.numbers.as_ref().map(|n| n.max), Some(230.0));

    // A text key (seattle's weather kinds) over CSV parts.
    let weather = dir.path().join("weather");
    partitioned("seattle-weather.csv", &weather, "csv", "weather");
    agrees(
        &weather,
        "SELECT weather, COUNT(*), ROUND(AVG(temp_max), 6), MAX(precipitation) FROM weather GROUP BY weather ORDER BY weather",
    );
}

#[test]
fn subdirectories_are_tables_of_their_files_beside_plain_files_and_join() {
    let dir = tempfile::tempdir().expect("tempdir");
    // A Spark-like table: part files and no partitions, plus its bookkeeping.
    let orders = dir.path().join("orders");
    std::fs::create_dir(&orders).expect("mkdir");
    std::fs::write(orders.join("part-00000.csv"), "id,customer,amount\n1,7,10.5\n2,8,3\n")
        .expect("write");
    std::fs::write(orders.join("part-00001.csv"), "id,customer,amount,note\n3,7,4,gift\n")
        .expect("write");
    std::fs::write(orders.join("_SUCCESS"), "").expect("write");
    std::fs::write(dir.path().join("customers.csv"), "id,name\n7,Ada\n8,Linus\n").expect("write");
    let source = load_path(dir.path());
    assert_eq!(source.collection_names(), ["orders", "customers"]);
    let db = database(&source);
    // Integers in one part and doubles in another: doubles; a column one part lacks: null.
    let rows = ours(
        db,
        "SELECT c.name, SUM(o.amount), COUNT(o.note) FROM orders o JOIN customers c ON c.id = o.customer GROUP BY c.name ORDER BY c.name",
    );
    assert_eq!(
        rows,
        vec![
            vec![Value::from("Ada"), Value::from(14.5), Value::from(1)],
            vec![Value::from("Linus"), Value::from(3.0), Value::from(0)],
        ]
    );
    let amount = property(&source.collections[0], "amount");
    assert_eq!(amount.numbers.as_ref().map(|n| (n.count, n.max)), Some((3, 10.5)));
}

#[test]
fn files_that_do_not_fit_the_table_are_left_out_with_a_reason() {
    let dir = tempfile::tempdir().expect("tempdir");
    let outside = tempfile::tempdir().expect("tempdir");
    let t = dir.path().join("t");
    for (part, body) in [
        ("year=2023/a.csv", "n,city\n1,Oslo\n2,Lima\n"),
        ("year=2024/a.csv", "n,city\n3,Oslo\n"),
        // Keys in another order than the table's.
        ("region=eu/year=2024/b.csv", "n,city\n4,Rome\n"),
        // A column named as a partition key.
        ("year=2025/c.csv", "n,year\n5,1999\n"),
        // A list where the others have text cannot be read with them.
        ("year=2026/d.json", "[{\"n\": 6}]"),
    ] {
        let path = t.join(part);
        std::fs::create_dir_all(path.parent().expect("parent")).expect("mkdir");
        std::fs::write(path, body).expect("write");
    }
    std::fs::write(outside.path().join("secret.csv"), "n,city\n99,hunter2\n").expect("write");
    std::fs::create_dir_all(t.join("year=2027")).expect("mkdir");
    std::os::unix::fs::symlink(outside.path().join("secret.csv"), t.join("year=2027/pw.csv"))
        .expect("symlink");
    std::os::unix::fs::symlink(outside.path(), t.join("year=2028")).expect("symlink");
    std::fs::create_dir_all(t.join("scratch")).expect("mkdir");
    let source = load_path(&t);
    let warnings: Vec<&str> = source.warnings.iter().map(|w| w.message.as_str()).collect();
    for expected in [
        "region=eu/year=2024/b.csv is left out: its partition keys (region, year) are not the table's (year)",
        "year=2025/c.csv is left out: its column `year` has the name of a partition key",
        "year=2026/d.json is left out: only CSV and Parquet files are read as parts of a table",
        "pw.csv is left out: it is a link to something outside the folder or not a file",
        "scratch is left out: a directory inside a table is read only as a `key=value` partition",
    ] {
        assert!(warnings.iter().any(|w| w.contains(expected)), "{expected}\n{warnings:#?}");
    }
    let db = database(&source);
    assert_eq!(
        ours(db, "SELECT year, COUNT(*), MIN(city) FROM t GROUP BY year ORDER BY year"),
        vec![
            vec![Value::from(2023), Value::from(2), Value::from("Lima")],
            vec![Value::from(2024), Value::from(1), Value::from("Oslo")],
        ]
    );
    let everything = serde_json::to_string(&ours(db, "SELECT * FROM t")).expect("json");
    assert!(!everything.contains("hunter2") && !everything.contains("Rome"), "{everything}");
}

#[test]
fn a_part_without_rows_types_no_column_and_links_to_directories_are_named() {
    let dir = tempfile::tempdir().expect("tempdir");
    let outside = tempfile::tempdir().expect("tempdir");
    let t = dir.path().join("t");
    for (part, body) in [
        ("p=1/a.csv", "x,s\n1,10\n2,20\n"),
        ("p=2/a.csv", "x,s\n1.5,30\n"),
        // Spark's part of an empty partition: a header only.
        ("p=3/a.csv", "x,s\n"),
    ] {
        let path = t.join(part);
        std::fs::create_dir_all(path.parent().expect("parent")).expect("mkdir");
        std::fs::write(path, body).expect("write");
    }
    std::fs::create_dir_all(outside.path().join("p=9")).expect("mkdir");
    std::fs::write(outside.path().join("p=9/a.csv"), "x,s\n99,99\n").expect("write");
    std::os::unix::fs::symlink(outside.path().join("p=9"), t.join("p=9")).expect("symlink");
    // A table whose only file is under a repeated key: said, not silently gone.
    let g = dir.path().join("g/k=1/k=2");
    std::fs::create_dir_all(&g).expect("mkdir");
    std::fs::write(g.join("f.csv"), "n\n1\n").expect("write");
    let source = load_path(dir.path());
    let warnings: Vec<&str> = source.warnings.iter().map(|w| w.message.as_str()).collect();
    for expected in [
        "p=9 is left out: a link to a directory is not followed",
        "g/ is left out: k=1/k=2/f.csv is left out: a partition key repeats in its path",
    ] {
        assert!(warnings.iter().any(|w| w.contains(expected)), "{expected}\n{warnings:#?}");
    }
    let db = database(&source);
    let columns = &db.catalog().expect("catalog").tables[0].columns;
    let x = columns.iter().find(|c| c.name == "x").expect("x");
    assert_eq!(x.declared_type, "DOUBLE", "{columns:?}");
    assert_eq!(
        ours(db, "SELECT SUM(x), MAX(x), MAX(s), COUNT(*) FROM t"),
        vec![vec![Value::from(4.5), Value::from(2.0), Value::from(30), Value::from(3)]]
    );
}

#[test]
fn integer_widths_and_valueless_csv_columns_keep_a_table_exact() {
    let dir = tempfile::tempdir().expect("tempdir");
    let w = dir.path().join("w");
    let script = format!(
        r#"
import os, pyarrow as pa, pyarrow.parquet as pq
base = {base:?}
for p, table in [
    (1, pa.table({{"x": pa.array([1, 2], pa.int32()), "s": pa.array(["a", "b"], pa.large_string())}})),
    (2, pa.table({{"x": pa.array([9007199254740993, 2**62 + 1], pa.int64()), "s": pa.array(["c", None], pa.string())}})),
]:
    os.makedirs(f"{{base}}/p={{p}}", exist_ok=True)
    pq.write_table(table, f"{{base}}/p={{p}}/a.parquet")
"#,
        base = w.to_str().expect("utf-8")
    );
    python(&["-c", &script]);
    let source = load_path(&w);
    let db = database(&source);
    let columns = &db.catalog().expect("catalog").tables[0].columns;
    let x = columns.iter().find(|c| c.name == "x").expect("x");
    assert_eq!(x.declared_type, "BIGINT", "{columns:?}");
    let s = columns.iter().find(|c| c.name == "s").expect("s");
    assert!(!format!("{s:?}").contains("files differ"), "{s:?}");
    let sum = ours(db, "SELECT SUM(x), MAX(x) FROM w");
    assert_eq!(sum[0][0].to_string().trim_matches('"'), "4620693217682128901", "{sum:?}");
    assert_eq!(sum[0][1].to_string(), "4611686018427387905");

    // A CSV part whose column has no value says nothing of its type.
    let l = dir.path().join("l");
    for (part, body) in [("p=1/a.csv", "a,b\n1,9.5\n3,10.5\n"), ("p=2/a.csv", "a,b\n5,\n")] {
        let path = l.join(part);
        std::fs::create_dir_all(path.parent().expect("parent")).expect("mkdir");
        std::fs::write(path, body).expect("write");
    }
    let source = load_path(&l);
    let db = database(&source);
    assert_eq!(
        ours(db, "SELECT MAX(b), MIN(b), SUM(b) FROM l"),
        vec![vec![Value::from(10.5), Value::from(9.5), Value::from(20.0)]]
    );
}
