//! SQL over files and in-memory collections (the embedded DataFusion engine): every answer
//! compared with DuckDB's on the same file and statement (`tests/tables/duckdb_query.py`), on
//! real public tables (vega-datasets) as CSV, as Parquet and as JSON documents; and what a
//! statement may not do — write, change settings, reach a file or a table the source does not
//! serve, outgrow its caps or its time — refused or stopped.

use std::path::{Path, PathBuf};

use crate::common::temp_file;
use std::process::Command;

use schemascope_sources::sql::{Caps, Cut, Database, SqlValue};
use schemascope_sources::{NoProgress, Source, SourceError, SourceSpec, load};
use serde_json::Value;

pub(crate) fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

pub(crate) fn table_file(name: &str) -> PathBuf {
    repo().join("testdata/tables").join(name)
}

pub(crate) fn load_path(path: &Path) -> Source {
    let spec: SourceSpec = path.to_str().expect("utf-8 path").parse().expect("spec");
    load(&spec, &NoProgress).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

pub(crate) fn database(source: &Source) -> &dyn Database {
    source.database.as_deref().unwrap_or_else(|| panic!("{} runs no SQL", source.name()))
}

pub(crate) fn python(args: &[&str]) -> Vec<u8> {
    let out =
        Command::new("python3").args(args).current_dir(repo()).output().expect("python3 runs");
    assert!(out.status.success(), "python3 {args:?}: {}", String::from_utf8_lossy(&out.stderr));
    out.stdout
}

/// DuckDB's rows for `sql` over `path` as the view `table`.
pub(crate) fn duckdb(path: &Path, table: &str, sql: &str) -> Vec<Vec<Value>> {
    let out = python(&["tests/tables/duckdb_query.py", path.to_str().expect("utf-8"), table, sql]);
    serde_json::from_slice(&out).expect("DuckDB rows")
}

pub(crate) fn ours(db: &dyn Database, sql: &str) -> Vec<Vec<Value>> {
    let result = db
        .run_capped(sql, &[], Caps { max_rows: Some(100_000), max_bytes: None }, 30_000)
        .unwrap_or_else(|e| panic!("{sql}: {e}"));
    assert!(result.cut.is_none(), "{sql}: cut");
    result.rows.into_iter().map(|row| row.into_iter().map(SqlValue::into_json).collect()).collect()
}

/// Whether two cells are the same value: numbers to 1e-9 relative (sums of doubles in another
/// order), everything else exactly.
pub(crate) fn same(a: &Value, b: &Value) -> bool {
    // An exact decimal past a double's digits comes back as its text (`exactTextNumbers`).
    let exact_text = |s: &str| if s.len() > 16 { s.parse::<f64>().ok() } else { None };
    let number = |v: &Value| v.as_f64().or_else(|| v.as_str().and_then(exact_text));
    match (number(a), number(b)) {
        (Some(x), Some(y)) => x == y || (x - y).abs() <= 1e-9 * x.abs().max(y.abs()),
        _ => a == b,
    }
}

/// Runs `sql` on the source's engine and on DuckDB over the same file; the rows must agree.
pub(crate) fn agrees(path: &Path, sql: &str) -> Vec<Vec<Value>> {
    let source = load_path(path);
    let got = ours(database(&source), sql);
    let want = duckdb(path, source.name(), sql);
    assert_eq!(got.len(), want.len(), "{sql}\nours: {got:?}\nDuckDB: {want:?}");
    for (g, w) in got.iter().zip(&want) {
        assert!(
            g.len() == w.len() && g.iter().zip(w).all(|(a, b)| same(a, b)),
            "{sql}\nours: {g:?}\nDuckDB: {w:?}"
        );
    }
    got
}

#[test]
fn the_agent_questions_are_one_statement_each_and_agree_with_duckdb() {
    // "Which car has the best mpg in each origin" (35 find_items calls before).
    let best = agrees(
        &table_file("cars.json"),
        r#"SELECT "Origin", "Name", "Miles_per_Gallon" FROM (
             SELECT *, ROW_NUMBER() OVER (PARTITION BY "Origin" ORDER BY "Miles_per_Gallon" DESC NULLS LAST, "Name") AS rn
             FROM cars) AS ranked
           WHERE rn = 1 ORDER BY "Origin""#,
    );
    assert_eq!(best.len(), 3);
    assert_eq!(best[1][0], "Japan");
    assert_eq!(best[1][2], 46.6);
    // "The highest wind in 2015" (10 calls before).
    let wind = agrees(
        &table_file("seattle-weather.csv"),
        r#"SELECT MAX(wind) FROM "seattle-weather" WHERE date >= '2015-01-01' AND date < '2016-01-01'"#,
    );
    assert_eq!(wind, vec![vec![Value::from(8.0)]]);
}

#[test]
fn group_by_top_k_and_statistics_agree_with_duckdb_on_csv_and_json() {
    let weather = table_file("seattle-weather.csv");
    agrees(
        &weather,
        r#"SELECT weather, COUNT(*), SUM(precipitation), AVG(temp_max), MIN(temp_min), MAX(wind), COUNT(DISTINCT date)
           FROM "seattle-weather" GROUP BY weather ORDER BY weather"#,
    );
    agrees(
        &weather,
        r#"SELECT precipitation, temp_max FROM "seattle-weather" WHERE weather = 'rain' ORDER BY precipitation DESC, date LIMIT 7"#,
    );
    agrees(
        &table_file("airports.csv"),
        "SELECT state, COUNT(*) AS n, ROUND(AVG(latitude), 6) FROM airports GROUP BY state ORDER BY n DESC, state LIMIT 10",
    );
    agrees(
        &table_file("airports.csv"),
        "SELECT COUNT(*), COUNT(city), COUNT(DISTINCT country) FROM airports WHERE city = 'NA' OR state IS NULL",
    );
    agrees(
        &table_file("la-riots.csv"),
        "SELECT gender, race, COUNT(*), MIN(age), MAX(age), COUNT(age) FROM \"la-riots\" GROUP BY gender, race ORDER BY gender NULLS FIRST, race NULLS FIRST",
    );
    agrees(
        &table_file("stocks.csv"),
        "SELECT symbol, MIN(price), MAX(price), COUNT(*) FROM stocks GROUP BY symbol HAVING COUNT(*) > 100 ORDER BY symbol",
    );
    agrees(
        &table_file("iris.json"),
        r#"SELECT species, COUNT(*), AVG("petalLength"), MAX("sepalWidth") FROM iris GROUP BY species ORDER BY species"#,
    );
    agrees(
        &table_file("cars.json"),
        r#"SELECT "Cylinders", COUNT(*), COUNT("Horsepower"), AVG("Weight_in_lbs") FROM cars WHERE "Year" >= '1975-01-01' GROUP BY "Cylinders" ORDER BY "Cylinders""#,
    );
}

#[test]
fn a_parquet_file_answers_as_its_csv_does() {
    let dir = tempfile::tempdir().expect("tempdir");
    let parquet = dir.path().join("weather.parquet");
    let csv = table_file("seattle-weather.csv");
    python(&[
        "-c",
        "import sys, pyarrow.csv as c, pyarrow.parquet as p; p.write_table(c.read_csv(sys.argv[1]), sys.argv[2], row_group_size=300)",
        csv.to_str().expect("utf-8"),
        parquet.to_str().expect("utf-8"),
    ]);
    let sql = "SELECT weather, COUNT(*), SUM(precipitation), MAX(wind), MIN(temp_min) FROM weather WHERE wind > 3 GROUP BY weather ORDER BY weather";
    let from_parquet = agrees(&parquet, sql);
    let source = load_path(&csv);
    let from_csv =
        ours(database(&source), &sql.replace("FROM weather", "FROM \"seattle-weather\""));
    assert_eq!(from_parquet.len(), from_csv.len());
    for (p, c) in from_parquet.iter().zip(&from_csv) {
        assert!(p.iter().zip(c).all(|(a, b)| same(a, b)), "{p:?} vs {c:?}");
    }
}

#[test]
fn the_catalog_names_columns_as_the_profile_does_with_sql_types() {
    let source = load_path(&table_file("cars.json"));
    let catalog = database(&source).catalog().expect("catalog");
    let cars = catalog.table("cars").expect("cars table");
    let column = |name: &str| {
        cars.columns.iter().find(|c| c.name == name).unwrap_or_else(|| panic!("no column {name}"))
    };
    assert_eq!(column("id").declared_type, "VARCHAR");
    assert_eq!(column("Miles_per_Gallon").declared_type, "DOUBLE");
    assert_eq!(column("Cylinders").declared_type, "BIGINT");
    assert_eq!(column("Origin").declared_type, "VARCHAR");
    assert_eq!(cars.row_count, Some(406));
    let weather = load_path(&table_file("seattle-weather.csv"));
    let table = database(&weather).catalog().expect("catalog").tables.remove(0);
    let names: Vec<&str> = table.columns.iter().map(|c| c.name.as_str()).collect();
    assert_eq!(names, ["date", "precipitation", "temp_max", "temp_min", "wind", "weather"]);
    assert_eq!(table.row_count, Some(1461));
}

#[test]
fn nested_members_are_columns_named_by_their_path() {
    let (_dir, path) = temp_file(
        "servers.json",
        r#"[{"id": 7, "name": "a", "metadata": {"region": "eu", "cpu": 2}, "tags": ["x"], "mixed": 1},
            {"id": 8, "name": "b", "metadata": {"region": "us", "cpu": 4.5}, "tags": [], "mixed": "n/a"},
            {"id": 9, "name": "c", "metadata": {"region": "eu"}, "mixed": null}]"#,
    );
    let source = load_path(&path);
    let db = database(&source);
    let rows = ours(
        db,
        r#"SELECT "metadata.region", COUNT(*), SUM("metadata.cpu"), MAX(id) FROM servers GROUP BY 1 ORDER BY 1"#,
    );
    assert_eq!(
        rows,
        vec![
            vec![Value::from("eu"), Value::from(2), Value::from(2.0), Value::from(9)],
            vec![Value::from("us"), Value::from(1), Value::from(4.5), Value::from(8)],
        ]
    );
    // The data's own `id` keeps its name; the item's id (here the data's id as text) is `_id`.
    let ids = ours(db, r#"SELECT _id, id, tags, mixed FROM servers ORDER BY id"#);
    assert_eq!(
        ids[0],
        vec![Value::from("7"), Value::from(7), Value::from("[\"x\"]"), Value::from("1")]
    );
    assert_eq!(ids[1][3], "n/a");
    assert_eq!(ids[2][2], Value::Null);
    let table = db.catalog().expect("catalog").tables.remove(0);
    let mixed = table.columns.iter().find(|c| c.name == "mixed").expect("mixed");
    assert!(
        mixed.comment.as_deref().is_some_and(|c| c.contains("several JSON types")),
        "{mixed:?}"
    );
}

/// A statement refused, with the class that says so.
pub(crate) fn refused(db: &dyn Database, sql: &str) -> String {
    match db.run_capped(sql, &[], Caps::default(), 10_000) {
        Ok(result) => panic!("{sql} ran: {:?}", result.rows),
        Err(e) => e.to_string(),
    }
}

#[test]
fn nothing_is_written_no_setting_changes_and_no_unserved_file_or_table_is_read() {
    let dir = tempfile::tempdir().expect("tempdir");
    let secret = dir.path().join("secret.csv");
    std::fs::write(&secret, "password\nhunter2\n").expect("write");
    let source = load_path(&table_file("seattle-weather.csv"));
    let db = database(&source);
    let secret = secret.display();
    for sql in [
        format!("CREATE EXTERNAL TABLE s STORED AS CSV LOCATION '{secret}'"),
        format!("SELECT * FROM '{secret}'"),
        format!("SELECT * FROM read_csv('{secret}')"),
        format!("COPY (SELECT 1) TO '{}/out.csv'", dir.path().display()),
        "CREATE TABLE t AS SELECT 1".to_string(),
        "CREATE VIEW v AS SELECT 1".to_string(),
        "INSERT INTO \"seattle-weather\" (weather) VALUES ('x')".to_string(),
        "DROP TABLE \"seattle-weather\"".to_string(),
        "SET datafusion.execution.target_partitions = 1".to_string(),
        "SELECT * FROM generate_series(1, 10)".to_string(),
        "SELECT * FROM range(1000000000)".to_string(),
        "SELECT * FROM information_schema.tables".to_string(),
        "SELECT * FROM datafusion.public.other".to_string(),
        "SELECT * FROM other_table".to_string(),
        "EXPLAIN ANALYZE SELECT 1".to_string(),
        "SELECT 1; SELECT 2".to_string(),
    ] {
        let message = refused(db, &sql);
        assert!(!message.contains("hunter2"), "{sql}: {message}");
    }
    assert!(!dir.path().join("out.csv").exists());
    // The engine's own guard holds too, for what the shared check lets through.
    assert_eq!(
        ours(db, r#"SELECT COUNT(*) FROM "seattle-weather""#),
        vec![vec![Value::from(1461)]]
    );
}

#[test]
fn caps_stop_the_reading_and_timeouts_stop_the_plan() {
    let source = load_path(&table_file("airports.csv"));
    let db = database(&source);
    let capped = db
        .run_capped(
            "SELECT * FROM airports",
            &[],
            Caps { max_rows: Some(10), max_bytes: None },
            10_000,
        )
        .expect("capped");
    assert_eq!((capped.rows.len(), capped.cut, capped.more), (10, Some(Cut::Rows), true));
    let bytes = db
        .run_capped(
            "SELECT name FROM airports",
            &[],
            Caps { max_rows: None, max_bytes: Some(200) },
            10_000,
        )
        .expect("capped");
    assert_eq!(bytes.cut, Some(Cut::Bytes));
    assert!(bytes.rows.len() < 20, "{}", bytes.rows.len());
    // A cross join of 3,376³ rows would run for hours: the timeout ends it.
    let started = std::time::Instant::now();
    let slow = db.run_capped(
        "SELECT COUNT(*) FROM airports a, airports b, airports c WHERE a.latitude + b.latitude > c.latitude",
        &[],
        Caps::default(),
        1_000,
    );
    assert!(matches!(slow, Err(SourceError::Timeout { .. })), "{slow:?}");
    assert!(started.elapsed() < std::time::Duration::from_secs(60));
}

#[test]
fn parameters_bind_and_compile_checks_without_running() {
    let source = load_path(&table_file("stocks.csv"));
    let db = database(&source);
    let result = db
        .run_capped(
            "SELECT COUNT(*) FROM stocks WHERE symbol = $1 AND price > $2",
            &[SqlValue::Text("AAPL".into()), SqlValue::Real(100.0)],
            Caps::default(),
            10_000,
        )
        .expect("bound");
    let want = duckdb(
        &table_file("stocks.csv"),
        "stocks",
        "SELECT COUNT(*) FROM stocks WHERE symbol = 'AAPL' AND price > 100",
    );
    assert_eq!(result.rows[0][0].to_json(), want[0][0]);
    db.compile("SELECT symbol FROM stocks").expect("compiles");
    let unknown = db.compile("SELECT symbl FROM stocks").expect_err("unknown column");
    assert_eq!(unknown.class(), schemascope_sources::error::ErrorClass::Syntax, "{unknown}");
    assert!(unknown.to_string().contains("symbl"), "{unknown}");
}

#[test]
fn table_names_keep_their_case_and_dots_and_links_out_of_a_folder_are_left_out() {
    let dir = tempfile::tempdir().expect("tempdir");
    let outside = tempfile::tempdir().expect("tempdir");
    std::fs::write(dir.path().join("Genre.csv"), "GenreId,Name\n1,Rock\n2,Jazz\n").expect("write");
    std::fs::write(dir.path().join("sales.q1.csv"), "amount\n3\n4\n5\n").expect("write");
    std::fs::write(outside.path().join("secret.csv"), "password\nhunter2\n").expect("write");
    std::os::unix::fs::symlink(outside.path().join("secret.csv"), dir.path().join("pw.csv"))
        .expect("symlink");
    let source = load_path(dir.path());
    assert_eq!(source.collection_names(), ["Genre", "sales.q1"]);
    assert!(
        source.warnings.iter().any(|w| w.message.contains("link to a file outside the folder")),
        "{:?}",
        source.warnings
    );
    let db = database(&source);
    assert_eq!(ours(db, r#"SELECT COUNT(*) FROM "Genre""#), vec![vec![Value::from(2)]]);
    assert_eq!(ours(db, r#"SELECT SUM(amount) FROM "sales.q1""#), vec![vec![Value::from(12)]]);
    // Unquoted, a name folds to lower case (as in PostgreSQL): refused, not another table.
    let folded = refused(db, "SELECT COUNT(*) FROM Genre");
    assert!(folded.contains("not a table this source serves"), "{folded}");
    assert!(!refused(db, "SELECT * FROM pw").contains("hunter2"));
}

#[test]
fn a_function_that_would_make_gigabytes_from_small_arguments_fails_clearly() {
    let source = load_path(&table_file("stocks.csv"));
    let db = database(&source);
    for sql in [
        "SELECT length(repeat('x', 2000000000))",
        "SELECT max(length(repeat(symbol, 100000000))) FROM stocks",
        "SELECT length(lpad('x', 2000000000, 'y'))",
        "SELECT cardinality(array_repeat(1, 2000000000))",
    ] {
        let message = refused(db, sql);
        assert!(message.contains("one call may make at most"), "{sql}: {message}");
    }
    let gone = refused(db, "SELECT range(1, 10000000000)");
    assert!(gone.contains("range"), "{gone}");
    // Within the bound they run.
    assert_eq!(ours(db, "SELECT length(repeat('ab', 1000))"), vec![vec![Value::from(2000)]]);
}

#[test]
fn records_whose_values_are_not_objects_have_their_whole_value_as_a_column() {
    let (_dir, path) = temp_file(
        "rec.json",
        r#"{"server::Temp": [{"c": 21.5}], "server::Config": {"port": 80}, "server::Mode": "eco"}"#,
    );
    let source = load_path(&path);
    let rows = ours(database(&source), "SELECT id, value, port FROM rec ORDER BY id");
    assert_eq!(
        rows,
        vec![
            vec![Value::from("server::Config"), Value::from(r#"{"port":80}"#), Value::from(80)],
            vec![Value::from("server::Mode"), Value::from("eco"), Value::Null],
            vec![Value::from("server::Temp"), Value::from(r#"[{"c":21.5}]"#), Value::Null],
        ]
    );
}

#[test]
fn nan_in_a_parquet_float_column_is_found_in_every_row_group() {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("rg.parquet");
    python(&[
        "-c",
        "import sys, math, pyarrow as pa, pyarrow.parquet as p\n\
         xs = [math.nan if i % 100 == 7 else float(i) for i in range(10000)]\n\
         p.write_table(pa.table({'x': xs}), sys.argv[1], row_group_size=500)",
        path.to_str().expect("utf-8"),
    ]);
    let source = load_path(&path);
    let db = database(&source);
    // Writers leave NaN out of a row group's min and max: no row group may be skipped by them.
    assert_eq!(
        ours(db, "SELECT COUNT(*) FROM rg WHERE x = 'NaN'::double"),
        vec![vec![Value::from(100)]]
    );
}

#[test]
fn integer_overflow_is_an_error_or_an_exact_sum_never_a_wrapped_number() {
    let (_dir, path) = temp_file(
        "big.csv",
        "g,n\na,9223372036854775807\na,1\nb,-9223372036854775808\nb,-1\nc,5\n",
    );
    let source = load_path(&path);
    let db = database(&source);
    for sql in [
        "SELECT n + 1 FROM big",
        "SELECT n * 2 FROM big",
        "SELECT n - 1 FROM big WHERE g = 'b'",
        "SELECT g FROM big WHERE n + n > 0",
        "SELECT 9223372036854775807 + 1",
    ] {
        let why = refused(db, sql);
        assert!(why.to_lowercase().contains("overflow"), "{sql}: {why}");
    }
    // Sums are exact past 64 bits (DuckDB's HUGEINT figures; past a double's exact range the
    // number is its exact text, as `exactTextNumbers` says of a DECIMAL column).
    let sums = ours(db, "SELECT g, SUM(n) FROM big GROUP BY g ORDER BY g");
    let want = duckdb(&path, "big", "SELECT g, SUM(n)::VARCHAR FROM big GROUP BY g ORDER BY g");
    assert_eq!(want[0][1], Value::from("9223372036854775808"));
    for (got, want) in sums.iter().zip(&want) {
        let text = got[1].as_str().map_or_else(|| got[1].to_string(), str::to_string);
        assert_eq!((&got[0], text.as_str()), (&want[0], want[1].as_str().expect("text")));
    }
    agrees(&path, "SELECT SUM(n) + 1, SUM(n) * 2 FROM big WHERE g = 'c'");
    // Unary minus of the smallest integer, and sums over windows, too.
    for sql in ["SELECT -n FROM big", "SELECT COUNT(*) FROM big WHERE -n > 0"] {
        let why = refused(db, sql);
        assert!(why.to_lowercase().contains("overflow"), "{sql}: {why}");
    }
    let window = ours(db, "SELECT SUM(n) OVER (PARTITION BY g) FROM big WHERE g = 'a'");
    assert_eq!(window[0][0], Value::from("9223372036854775808"));
    let running = ours(db, "SELECT SUM(n) OVER (ORDER BY n) FROM big WHERE g = 'a' ORDER BY n");
    assert_eq!(running[1][0], Value::from("9223372036854775808"));
    // What does not overflow is as before, and columns keep their names.
    let result = db
        .run_capped(
            "SELECT n + 1, SUM(n) FROM big WHERE g = 'c' GROUP BY n",
            &[],
            Caps::default(),
            30_000,
        )
        .expect("runs");
    assert_eq!(result.columns, ["big.n + Int64(1)", "sum(big.n)"]);
    assert_eq!(
        ours(db, "SELECT n + 1, n * 3, n - 10 FROM big WHERE g = 'c'"),
        vec![vec![Value::from(6), Value::from(15), Value::from(-5)]]
    );
}

#[test]
fn json_integers_from_the_smallest_to_the_largest_64_bit_ones_stay_exact() {
    let (_dir, path) = temp_file(
        "d.json",
        r#"[{"v": 9223372036854775807}, {"v": -1}, {"v": 18446744073709551615}, {"v": -9223372036854775808}]"#,
    );
    let source = load_path(&path);
    let db = database(&source);
    let sums = ours(db, "SELECT SUM(v), COUNT(*) FILTER (WHERE v = 9223372036854775806) FROM d");
    assert_eq!(
        sums[0][0].as_str().map(str::to_string).unwrap_or_else(|| sums[0][0].to_string()),
        "18446744073709551613"
    );
    assert_eq!(sums[0][1], Value::from(0));
    let max = ours(db, "SELECT MAX(v), MIN(v) FROM d");
    assert_eq!(max[0][0].to_string().trim_matches('"'), "18446744073709551615");
    assert_eq!(max[0][1].to_string().trim_matches('"'), "-9223372036854775808");
}

#[test]
fn means_of_integers_and_sums_of_wide_decimals_are_exact() {
    let (dir, path) =
        temp_file("b.csv", "k,x\n1,100000000000000000\n2,1\n3,-100000000000000000\n4,3\n5,5\n");
    let source = load_path(&path);
    let db = database(&source);
    let mean = ours(db, "SELECT AVG(x), AVG(x) FILTER (WHERE k > 1) FROM b");
    let text = |v: &Value| v.as_str().map_or_else(|| v.to_string(), str::to_string);
    assert_eq!(text(&mean[0][0]).parse::<f64>().ok(), Some(1.8), "{mean:?}");
    assert_eq!(text(&mean[0][1]).parse::<f64>().ok(), Some(-24999999999999997.75), "{mean:?}");
    // A mean keeps its decimals (19 of them), where the double had 16 digits in all.
    let third = ours(db, "SELECT AVG(x) FROM b WHERE k IN (2, 2, 4, 5) AND k < 5");
    assert_eq!(text(&third[0][0]).parse::<f64>().ok(), Some(2.0), "{third:?}");
    let thirds = ours(db, "SELECT AVG(k) FROM b WHERE k IN (1, 2, 2, 4) OR k = 1");
    assert!(text(&thirds[0][0]).starts_with("2.33333333333333333"), "{thirds:?}");
    // Three 6e19 amounts in a DECIMAL(38,18) column overflow 128 bits when summed.
    let money = dir.path().join("money.parquet");
    let script = format!(
        "import decimal, pyarrow as pa, pyarrow.parquet as pq\npq.write_table(pa.table({{'amt': pa.array([decimal.Decimal('60000000000000000000.5')] * 3, pa.decimal128(38, 18))}}), {:?})",
        money.to_str().expect("utf-8")
    );
    python(&["-c", &script]);
    let source = load_path(&money);
    let db = database(&source);
    for sql in ["SELECT SUM(amt) FROM money", "SELECT SUM(amt) OVER () FROM money LIMIT 1"] {
        let sum = ours(db, sql);
        let sum = text(&sum[0][0]);
        assert!(sum.starts_with("180000000000000000001.5"), "{sql}: {sum}");
    }
}
