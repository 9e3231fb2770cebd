//! ClickHouse beyond one node: Chinook split across the three shards of
//! `scripts/clickhouse-cluster` (Debian's 18.16, one `clickhouse-server` per shard on loopback),
//! read through the `Distributed` tables of the first node. Every figure of a pushdown profile
//! must equal the in-memory profile of the same rows and, exactly, the profile of the same table
//! on the single server of `scripts/clickhouse` (the oracle: the same rows, unsharded); the
//! catalog's row counts must be the sums of the shards' local tables, counted on each shard;
//! samples come back, the same for the same seed; a caller's statement through the read-only
//! path writes nothing and groups as on one node.
//!
//! The URIs come from `SCHEMASCOPE_TEST_CLICKHOUSE_CLUSTER` (the readonly=1 user on the first
//! node), `SCHEMASCOPE_TEST_CLICKHOUSE_CLUSTER_RO2` and `SCHEMASCOPE_TEST_CLICKHOUSE_CLUSTER_RW`
//! (readonly=2, and a user that may write), `SCHEMASCOPE_TEST_CLICKHOUSE_CLUSTER_SHARDS` (each
//! node's local tables, space-separated) and `SCHEMASCOPE_TEST_CLICKHOUSE` (the single server),
//! set by `scripts/test`. Without them these tests say so and pass vacuously.

use schemascope_core::profile::numeric::HistogramLayout;
use schemascope_core::property::BinCounter;
use schemascope_core::sample::{SampleOptions, sample};
use schemascope_core::{CollectionProfile, TableInfo};
use schemascope_sources::error::ErrorClass;
use schemascope_sources::sql::pushdown::{TableBins, profile_table};
use schemascope_sources::sql::rows::sample_pool;
use schemascope_sources::sql::{Caps, ClickHouseDatabase, Database, QueryResult, ReadOnlyMode};
use serde_json::Value;

use crate::common;

fn uri(var: &str) -> Option<String> {
    let uri = std::env::var(var).ok().filter(|u| !u.is_empty());
    if uri.is_none() {
        eprintln!(
            "{var} is not set: run through scripts/test to test against a ClickHouse cluster"
        );
    }
    uri
}

/// The Distributed database on the first node (readonly=1 user) and the single server's
/// `chinook`, or `None` when either is not configured.
fn cluster_and_oracle() -> Option<(ClickHouseDatabase, ClickHouseDatabase)> {
    let cluster = uri("SCHEMASCOPE_TEST_CLICKHOUSE_CLUSTER")?;
    let single = uri("SCHEMASCOPE_TEST_CLICKHOUSE")?;
    Some((
        ClickHouseDatabase::connect(&cluster).expect("connect to the cluster"),
        ClickHouseDatabase::connect(&single).expect("connect to the single server"),
    ))
}

/// Each shard's local tables (`chinook_local` of each node), in shard order.
fn shards() -> Vec<ClickHouseDatabase> {
    let Some(list) = uri("SCHEMASCOPE_TEST_CLICKHOUSE_CLUSTER_SHARDS") else { return Vec::new() };
    list.split_whitespace()
        .map(|u| ClickHouseDatabase::connect(u).unwrap_or_else(|e| panic!("{u}: {e}")))
        .collect()
}

/// The users of the cluster's first node: (URI, what the profile lets schemascope set).
fn users() -> Vec<(String, ReadOnlyMode)> {
    [
        ("SCHEMASCOPE_TEST_CLICKHOUSE_CLUSTER", ReadOnlyMode::Fixed),
        ("SCHEMASCOPE_TEST_CLICKHOUSE_CLUSTER_RO2", ReadOnlyMode::Kept),
        ("SCHEMASCOPE_TEST_CLICKHOUSE_CLUSTER_RW", ReadOnlyMode::Set),
    ]
    .into_iter()
    .filter_map(|(var, mode)| uri(var).map(|u| (u, mode)))
    .collect()
}

const CHINOOK: [&str; 11] = [
    "Album",
    "Artist",
    "Customer",
    "Employee",
    "Genre",
    "Invoice",
    "InvoiceLine",
    "MediaType",
    "Playlist",
    "PlaylistTrack",
    "Track",
];

fn count(db: &ClickHouseDatabase, sql: &str) -> u64 {
    db.query(sql, &[]).unwrap_or_else(|e| panic!("{}: {sql}: {e}", db.location()))[0][0].as_count()
}

fn table<'c>(catalog: &'c schemascope_core::Catalog, name: &str) -> &'c TableInfo {
    catalog.table(name).unwrap_or_else(|| panic!("{name} is not in the catalog"))
}

#[test]
fn the_catalog_lists_the_distributed_tables_with_the_sum_of_the_shards_rows() {
    let Some((cluster, single)) = cluster_and_oracle() else { return };
    let shards = shards();
    assert_eq!(shards.len(), 3, "SCHEMASCOPE_TEST_CLICKHOUSE_CLUSTER_SHARDS names three shards");
    let (catalog, oracle) =
        (cluster.catalog().expect("catalog"), single.catalog().expect("catalog"));
    let names: Vec<&str> = catalog.tables.iter().map(|t| t.name.as_str()).collect();
    assert_eq!(names, CHINOOK);
    for name in CHINOOK {
        let (t, o) = (table(&catalog, name), table(&oracle, name));
        let columns = |t: &TableInfo| -> Vec<(String, String, bool)> {
            t.columns
                .iter()
                .map(|c| (c.name.clone(), c.declared_type.clone(), c.nullable))
                .collect()
        };
        assert_eq!(columns(t), columns(o), "{name}: columns");
        // Counted on each shard's own local table, one connection per node.
        let local: Vec<u64> =
            shards.iter().map(|s| count(s, &format!("SELECT count() FROM `{name}`"))).collect();
        assert!(local.iter().filter(|&&n| n > 0).count() >= 2, "{name}: {local:?}");
        let sum: u64 = local.iter().sum();
        assert_eq!(t.row_count, Some(sum), "{name}: the sum of the shards {local:?}");
        assert_eq!(t.row_count, o.row_count, "{name}: the single server's count");
        assert!(!t.row_count_estimated, "{name}");
        // The local tables' sorting key: the order "first rows" are read in.
        assert_eq!(t.primary_key, o.primary_key, "{name}: key");
    }
}

/// Two profiles of the same rows, figure for figure: exactly, but for the means, standard
/// deviations and mean lengths, computed from sums of doubles (an integer column's deviation
/// too) whose order of addition follows the order the shards' rows reach the coordinator:
/// compensated sums, within a unit or two in the last place (`119.13487729154339` against one
/// server's `119.1348772915434`).
fn assert_same_figures(cluster: &Value, single: &Value, at: &str) {
    match (cluster, single) {
        (Value::Object(a), Value::Object(b)) => {
            let mut keys: Vec<&String> = a.keys().chain(b.keys()).collect();
            keys.sort();
            keys.dedup();
            for key in keys {
                let (x, y) =
                    (a.get(key).unwrap_or(&Value::Null), b.get(key).unwrap_or(&Value::Null));
                let path = format!("{at}.{key}");
                match (key.as_str(), x.as_f64(), y.as_f64()) {
                    ("mean" | "stdDev" | "avgLength", Some(x), Some(y)) if x != y => {
                        assert!(
                            (x - y).abs() <= 1e-13 * x.abs().max(y.abs()),
                            "{path}: cluster {x} vs single {y}"
                        );
                    }
                    _ => assert_same_figures(x, y, &path),
                }
            }
        }
        (Value::Array(a), Value::Array(b)) => {
            assert_eq!(a.len(), b.len(), "{at}: cluster {cluster} vs single {single}");
            for (i, (x, y)) in a.iter().zip(b).enumerate() {
                assert_same_figures(x, y, &format!("{at}[{i}]"));
            }
        }
        _ => assert_eq!(cluster, single, "{at}"),
    }
}

fn assert_same_profiles(name: &str, cluster: &CollectionProfile, single: &CollectionProfile) {
    assert_eq!(cluster.item_count, single.item_count, "{name}: rows");
    assert_same_figures(
        &serde_json::to_value(cluster).expect("json"),
        &serde_json::to_value(single).expect("json"),
        name,
    );
    // What JSON leaves out: the exact extremes and median, and the quartiles.
    for (c, s) in cluster.properties().iter().zip(single.properties()) {
        assert_eq!(c.path, s.path, "{name}");
        if let (Some(x), Some(y)) = (&c.numbers, &s.numbers) {
            assert_eq!(
                (&x.exact_range, &x.exact_median, x.quartiles.map(f64::to_bits)),
                (&y.exact_range, &y.exact_median, y.quartiles.map(f64::to_bits)),
                "{name}.{}",
                c.path
            );
        }
    }
}

#[test]
fn pushdown_profiles_of_distributed_tables_equal_memory_and_the_single_server() {
    let Some((cluster, single)) = cluster_and_oracle() else { return };
    let (catalog, oracle) =
        (cluster.catalog().expect("catalog"), single.catalog().expect("catalog"));
    // The third shard runs in another zone (Asia/Kolkata): dates and times it wrote itself
    // would read 5:30 later there (Employee.BirthDate, Invoice.InvoiceDate).
    for name in CHINOOK {
        let t = table(&catalog, name);
        common::assert_table_matches_memory(&cluster, t);
        let pushed = profile_table(&cluster, t).unwrap_or_else(|e| panic!("{name}: {e}"));
        let expected = profile_table(&single, table(&oracle, name)).expect("single server");
        assert_same_profiles(name, &pushed, &expected);
    }
}

#[test]
fn histograms_counted_through_the_cluster_equal_the_single_servers() {
    let Some((cluster, single)) = cluster_and_oracle() else { return };
    let columns: [(&str, &[&str]); 3] = [
        ("Track", &["Milliseconds", "Bytes", "UnitPrice", "GenreId"]),
        ("Invoice", &["Total"]),
        ("InvoiceLine", &["UnitPrice", "Quantity"]),
    ];
    let (catalog, oracle) =
        (cluster.catalog().expect("catalog"), single.catalog().expect("catalog"));
    for (name, wanted) in columns {
        common::assert_histograms_match(&cluster, name, wanted);
        let (t, o) = (table(&catalog, name), table(&oracle, name));
        let profile = profile_table(&single, o).expect("profile");
        let (on_cluster, on_single) =
            (TableBins { db: &cluster, table: t }, TableBins { db: &single, table: o });
        for column in wanted {
            let path = column.parse().expect("path");
            let numbers = profile.property(&path).and_then(|p| p.numbers.clone()).expect(column);
            for bins in [Some(1), Some(5), Some(numbers.auto_bins()), Some(37), None] {
                let layout = HistogramLayout::for_numbers(&numbers, bins).expect("layout");
                assert_eq!(
                    on_cluster.count_bins(&path, &layout),
                    on_single.count_bins(&path, &layout),
                    "{name}.{column} with {bins:?} bins"
                );
            }
        }
    }
}

#[test]
fn samples_of_distributed_tables_come_back_the_same_for_the_same_seed() {
    let Some((cluster, single)) = cluster_and_oracle() else { return };
    let (catalog, oracle) =
        (cluster.catalog().expect("catalog"), single.catalog().expect("catalog"));
    for name in ["Genre", "Invoice", "Track", "PlaylistTrack"] {
        let (t, o) = (table(&catalog, name), table(&oracle, name));
        let rows = t.row_count.expect("rows");
        // The pool of rows a sample is drawn from, and five rows drawn from it with a seed.
        let sampled = |db: &dyn Database, t: &TableInfo| -> (Vec<String>, Vec<Value>) {
            let pool = sample_pool(db, t, rows, 7, None).unwrap_or_else(|e| panic!("{name}: {e}"));
            let options = SampleOptions { count: 5, seed: Some(7), ..SampleOptions::default() };
            let drawn = sample(&pool, &options).unwrap_or_else(|e| panic!("{name}: {e}"));
            (pool.items().map(|item| item.json.to_string()).collect(), drawn.items)
        };
        let (pool, drawn) = sampled(&cluster, t);
        assert_eq!(pool.len() as u64, rows.min(1_000), "{name}");
        assert_eq!(drawn.len(), 5, "{name}");
        // The same rows in the same order, whichever shard answers first: read in the shards'
        // key order, as on one server.
        let again = sampled(&cluster, t);
        assert_eq!((&pool, &drawn), (&again.0, &again.1), "{name}: again");
        assert_eq!((pool, drawn), sampled(&single, o), "{name}: the single server's sample");
    }
}

#[test]
fn no_user_can_write_through_the_coordinator_and_the_shards_are_unchanged() {
    let shards = shards();
    let tally = || -> Vec<u64> {
        shards
            .iter()
            .flat_map(|s| {
                ["Genre", "Track"].map(|t| count(s, &format!("SELECT count() FROM `{t}`")))
            })
            .collect()
    };
    let before = tally();
    for (uri, mode) in users() {
        let db = ClickHouseDatabase::connect(&uri).expect("connect");
        assert_eq!(db.read_only_mode(), mode, "{}", db.location());
        for sql in [
            "INSERT INTO Genre VALUES (999, 'x')",
            "INSERT INTO Genre SELECT * FROM Genre",
            "INSERT INTO Track (TrackId, Name, MediaTypeId, Milliseconds, UnitPrice) VALUES (99999, 'x', 1, 1, 0.99)",
            "DROP TABLE Genre",
            "TRUNCATE TABLE Genre",
            "ALTER TABLE Genre DELETE WHERE 1",
            "OPTIMIZE TABLE Track",
            "SELECT * FROM remote('127.0.0.1:19131', chinook_local.Genre)",
            "SELECT * FROM cluster('schemascope', chinook_local.Genre)",
        ] {
            let refused = db
                .run_for_caller(sql, &[], Caps::default(), 10_000)
                .map(|r| r.rows.len())
                .expect_err(sql)
                .to_string();
            assert!(
                refused.contains("refused") || refused.contains("not allowed"),
                "{}: {sql}: {refused}",
                db.location()
            );
        }
    }
    assert_eq!(tally(), before, "the shards' rows");
}

#[test]
fn a_callers_group_by_through_the_cluster_returns_what_the_single_server_does() {
    let Some(single) = uri("SCHEMASCOPE_TEST_CLICKHOUSE") else { return };
    let single = ClickHouseDatabase::connect(&single).expect("connect");
    let statements = [
        "SELECT GenreId, count() AS n, sum(Milliseconds) AS ms, min(Name) AS first FROM Track GROUP BY GenreId ORDER BY GenreId",
        "SELECT Composer, count() AS n FROM Track GROUP BY Composer ORDER BY n DESC, Composer LIMIT 10",
        "SELECT BillingCountry, uniqExact(CustomerId), toString(sum(toDecimal64(Total, 2))) FROM Invoice GROUP BY BillingCountry ORDER BY BillingCountry",
        "SELECT count(), uniqExact(TrackId), quantilesExact(0.25, 0.5, 0.75)(TrackId) FROM InvoiceLine",
    ];
    let run = |db: &ClickHouseDatabase, sql: &str, caps: Caps| -> QueryResult {
        db.run_for_caller(sql, &[], caps, 30_000)
            .unwrap_or_else(|e| panic!("{}: {sql}: {e}", db.location()))
    };
    for (uri, _) in users() {
        let cluster = ClickHouseDatabase::connect(&uri).expect("connect");
        for sql in statements {
            cluster.compile(sql).unwrap_or_else(|e| panic!("{}: {sql}: {e}", cluster.location()));
            let (c, s) = (run(&cluster, sql, Caps::default()), run(&single, sql, Caps::default()));
            assert_eq!(
                (&c.columns, &c.rows),
                (&s.columns, &s.rows),
                "{}: {sql}",
                cluster.location()
            );
            // Capped: the first rows of the same answer, the cap applied to the grouped result
            // (not to each shard's share of the groups).
            for caps in [
                Caps { max_rows: Some(5), max_bytes: None },
                Caps { max_rows: None, max_bytes: Some(120) },
            ] {
                let (c, s) = (run(&cluster, sql, caps), run(&single, sql, caps));
                assert_eq!(
                    (&c.rows, c.more, c.cut),
                    (&s.rows, s.more, s.cut),
                    "{}: {sql} capped {caps:?}",
                    cluster.location()
                );
            }
        }
        // A subquery over another Distributed table: GLOBAL reads it once, on the coordinator,
        // as one server reads it; without GLOBAL ClickHouse refuses (IN), or each shard looks
        // for the right side of a JOIN in its own default database, and the error says so.
        let rock = "SELECT count() FROM Track WHERE GenreId IN (SELECT GenreId FROM Genre WHERE Name = 'Rock')";
        let global = rock.replace(" IN (", " GLOBAL IN (");
        assert_eq!(
            run(&cluster, &global, Caps::default()).rows,
            run(&single, rock, Caps::default()).rows
        );
        let refused = cluster.run_for_caller(rock, &[], Caps::default(), 30_000).expect_err(rock);
        assert!(refused.to_string().contains("GLOBAL"), "{refused}");
        // (ClickHouse 18.16 finds no qualified name of a GLOBAL JOIN's right side: USING.)
        let join = "SELECT GenreName, count() AS n FROM Track JOIN (SELECT GenreId, Name AS GenreName FROM Genre) USING (GenreId) GROUP BY GenreName ORDER BY n DESC, GenreName LIMIT 5";
        let global = join.replace(" JOIN ", " GLOBAL JOIN ");
        assert_eq!(
            run(&cluster, &global, Caps::default()).rows,
            run(&single, join, Caps::default()).rows
        );
        let refused = cluster.run_for_caller(join, &[], Caps::default(), 30_000).expect_err(join);
        assert!(refused.to_string().contains("GLOBAL"), "{refused}");
        // A bare Distributed table on the right is looked for on each shard, in the database
        // the shard's connection starts in: the error, a shard's, says what to write.
        let bare = "SELECT count() FROM Track JOIN Genre USING (GenreId)";
        let refused = cluster.run_for_caller(bare, &[], Caps::default(), 30_000).expect_err(bare);
        assert!(refused.to_string().contains("GLOBAL JOIN"), "{refused}");
    }
}

#[test]
fn a_distributed_tables_profile_is_not_kept_as_unchanged() {
    let Some((cluster, single)) = cluster_and_oracle() else { return };
    let (catalog, oracle) =
        (cluster.catalog().expect("catalog"), single.catalog().expect("catalog"));
    // The coordinator has no parts of a Distributed table: nothing there says whether the
    // shards' rows changed, so its profile is computed anew rather than served from the store.
    assert_eq!(cluster.data_version(table(&catalog, "Track")).expect("version"), None);
    // (The single server's MergeTree table has a version: the oracle of the rule.)
    assert!(single.data_version(table(&oracle, "Track")).expect("version").is_some());
}

#[test]
fn any_node_serves_the_whole_cluster() {
    let Some((cluster, _)) = cluster_and_oracle() else { return };
    let Some(list) = uri("SCHEMASCOPE_TEST_CLICKHOUSE_CLUSTER_SHARDS") else { return };
    let want = count(&cluster, "SELECT count() FROM InvoiceLine");
    for local in list.split_whitespace().skip(1) {
        let distributed = local.replace("/chinook_local", "/chinook");
        let node = ClickHouseDatabase::connect(&distributed).expect("connect");
        let catalog = node.catalog().expect("catalog");
        assert_eq!(table(&catalog, "InvoiceLine").row_count, Some(want), "{}", node.location());
    }
}

/// `uri` with its user replaced (the cluster's users share one password).
fn as_user(uri: &str, user: &str) -> String {
    let (_, rest) = uri.split_once("://").expect("scheme");
    let (_, address) = rest.split_once(':').expect("user");
    format!("clickhouse://{user}:{address}")
}

/// `uri` with its database replaced.
fn in_database(uri: &str, database: &str) -> String {
    let (base, _) = uri.rsplit_once('/').expect("database");
    format!("{base}/{database}")
}

/// Makes, on the first node, the database `schemascope_cluster_scratch`: a Distributed table
/// `t` over the cluster `schemascope_unreachable` (the first node and a shard that never answers)
/// with its local table `t_local` of three rows; and `schemascope_cluster_endless` with
/// `endless`, a Distributed table over every shard's `system.numbers`. The URI of the first for
/// the readonly=1 user.
fn scratch_database() -> Option<String> {
    // Made once for the tests that share it.
    static MADE: std::sync::OnceLock<Option<String>> = std::sync::OnceLock::new();
    MADE.get_or_init(|| {
        let rw = uri("SCHEMASCOPE_TEST_CLICKHOUSE_CLUSTER_RW")?;
        for sql in [
            "DROP DATABASE IF EXISTS schemascope_cluster_scratch",
            "CREATE DATABASE schemascope_cluster_scratch",
            "CREATE TABLE schemascope_cluster_scratch.t_local (id UInt32, name String) ENGINE = MergeTree ORDER BY id",
            "CREATE TABLE schemascope_cluster_scratch.t AS schemascope_cluster_scratch.t_local ENGINE = Distributed(schemascope_unreachable, schemascope_cluster_scratch, t_local, id)",
            "INSERT INTO schemascope_cluster_scratch.t_local VALUES (1, 'a'), (2, 'b'), (3, 'c')",
            // (Apart: counting it for the catalog would end only at the timeout.)
            "DROP DATABASE IF EXISTS schemascope_cluster_endless",
            "CREATE DATABASE schemascope_cluster_endless",
            "CREATE TABLE schemascope_cluster_endless.endless AS system.numbers ENGINE = Distributed(schemascope, system, numbers)",
        ] {
            crate::sql_clickhouse::as_writer(&rw, sql);
        }
        Some(in_database(&as_user(&rw, "schemascope_ro"), "schemascope_cluster_scratch"))
    })
    .clone()
}

#[test]
fn a_shard_that_does_not_answer_fails_the_figures_instead_of_leaving_its_rows_out() {
    let Some(scratch) = scratch_database() else { return };
    // Every kind of user, and one whose profile skips shards that do not answer (readonly=2:
    // each statement sets it back).
    for user in ["schemascope_ro", "schemascope_ro2", "schemascope", "schemascope_lenient2"] {
        let db = ClickHouseDatabase::connect(&as_user(&scratch, user)).expect("connect");
        let catalog = db.catalog().unwrap_or_else(|e| panic!("{user}: {e}"));
        // Listed, not counted: no sum without the missing shard.
        assert_eq!(table(&catalog, "t").row_count, None, "{user}");
        assert_eq!(table(&catalog, "t_local").row_count, Some(3), "{user}");
        let error = profile_table(&db, table(&catalog, "t")).expect_err(user);
        assert_eq!(error.class(), ErrorClass::Resource, "{user}: {error}");
        assert!(error.to_string().contains("shard"), "{user}: {error}");
        let error = db
            .run_for_caller("SELECT count() FROM t", &[], Caps::default(), 30_000)
            .expect_err(user);
        assert_eq!(error.class(), ErrorClass::Resource, "{user}: {error}");
    }
}

#[test]
fn a_profile_that_lets_distributed_reads_be_partial_is_overridden_or_refused() {
    let Some(cluster) = uri("SCHEMASCOPE_TEST_CLICKHOUSE_CLUSTER") else { return };
    let Some(single) = uri("SCHEMASCOPE_TEST_CLICKHOUSE") else { return };
    let single = ClickHouseDatabase::connect(&single).expect("connect");
    // readonly=2: each statement sets skip_unavailable_shards and distributed_group_by_no_merge
    // back to 0, so a count is the shards' sum, not one shard's.
    let lenient =
        ClickHouseDatabase::connect(&as_user(&cluster, "schemascope_lenient2")).expect("connect");
    let (catalog, oracle) =
        (lenient.catalog().expect("catalog"), single.catalog().expect("catalog"));
    for name in CHINOOK {
        assert_eq!(table(&catalog, name).row_count, table(&oracle, name).row_count, "{name}");
    }
    let sql = "SELECT GenreId, count() FROM Track GROUP BY GenreId ORDER BY GenreId";
    let run = |db: &ClickHouseDatabase| {
        db.run_for_caller(sql, &[], Caps::default(), 30_000).expect("run").rows
    };
    assert_eq!(run(&lenient), run(&single));
    // readonly=1 may set nothing: refused, saying what to change.
    let fixed =
        ClickHouseDatabase::connect(&as_user(&cluster, "schemascope_lenient")).expect("connect");
    let refused = fixed.catalog().expect_err("partial reads").to_string();
    assert!(
        refused.contains("skip_unavailable_shards = 1") && refused.contains("readonly=2"),
        "{refused}"
    );
}

#[test]
fn a_statement_past_its_timeout_is_stopped_on_the_coordinator_and_on_every_shard() {
    let Some(scratch) = scratch_database() else { return };
    let shards = shards();
    for user in ["schemascope_ro", "schemascope_ro2", "schemascope"] {
        let endless = in_database(&as_user(&scratch, user), "schemascope_cluster_endless");
        let db = ClickHouseDatabase::connect(&endless).expect("connect");
        let marker = format!("cluster-timeout-marker-{}", fastrand::u64(..));
        let started = std::time::Instant::now();
        let error = db
            .run_for_caller(
                &format!("SELECT count() FROM endless WHERE toString(number) != '{marker}'"),
                &[],
                Caps::default(),
                1_500,
            )
            .expect_err("endless");
        assert_eq!(error.class(), ErrorClass::Timeout, "{user}: {error}");
        assert!(started.elapsed().as_secs() < 8, "{user}: {:?}", started.elapsed());
        // Each shard runs its part of the statement (its text holds the marker): none is left.
        let running = |node: &ClickHouseDatabase| {
            count(
                node,
                &format!(
                    "SELECT count() FROM system.processes WHERE position(query, '{marker}') > 0 AND position(query, 'system.processes') = 0"
                ),
            )
        };
        for node in &shards {
            let waited = std::time::Instant::now();
            while running(node) > 0 && waited.elapsed().as_secs() < 5 {
                std::thread::sleep(std::time::Duration::from_millis(100));
            }
            assert_eq!(running(node), 0, "{user}: {}", node.location());
        }
    }
}

#[test]
fn a_distributed_table_over_sampled_shards_is_sampled_on_every_shard() {
    let shards = uri("SCHEMASCOPE_TEST_CLICKHOUSE_CLUSTER_SHARDS");
    let Some(shards) = shards.filter(|_| uri("SCHEMASCOPE_TEST_CLICKHOUSE_CLUSTER_RW").is_some())
    else {
        return;
    };
    // Each node: a local table with a sampling key holding the ids ≡ its shard's index (mod 3),
    // and a Distributed table over the three.
    let nodes: Vec<String> = shards
        .split_whitespace()
        .map(|u| in_database(&as_user(u, "schemascope"), "schemascope_cluster_sampled"))
        .collect();
    for (k, node) in nodes.iter().enumerate() {
        for sql in [
            "DROP DATABASE IF EXISTS schemascope_cluster_sampled".to_string(),
            "CREATE DATABASE schemascope_cluster_sampled".into(),
            "CREATE TABLE schemascope_cluster_sampled.l (id UInt32, name String) ENGINE = MergeTree ORDER BY (intHash32(id), id) SAMPLE BY intHash32(id)".into(),
            "CREATE TABLE schemascope_cluster_sampled.d AS schemascope_cluster_sampled.l ENGINE = Distributed(schemascope, schemascope_cluster_sampled, l, id)".into(),
            format!("INSERT INTO schemascope_cluster_sampled.l SELECT number, toString(number) FROM (SELECT number FROM system.numbers LIMIT 5000) WHERE number % 3 = {k}"),
        ] {
            crate::sql_clickhouse::as_writer(node, &sql);
        }
    }
    let db = ClickHouseDatabase::connect(&as_user(&nodes[0], "schemascope_ro")).expect("connect");
    let catalog = db.catalog().expect("catalog");
    let d = table(&catalog, "d");
    assert_eq!(d.row_count, Some(5000));
    // Twice the pool's 1,000 rows are asked for: SAMPLE 0.4 of each shard's rows.
    let sampled: std::collections::HashSet<i64> = db
        .query("SELECT id FROM d SAMPLE 0.4", &[])
        .expect("sample")
        .iter()
        .map(|r| r[0].as_count() as i64)
        .collect();
    let pooled = || -> Vec<i64> {
        let pool = sample_pool(&db, d, 5000, 7, None).expect("pool");
        pool.items().map(|item| item.value().expect("json")["id"].as_i64().expect("id")).collect()
    };
    let ids = pooled();
    assert_eq!(ids.len(), 1_000);
    // The sampled rows of the smallest sampling keys, whichever shard answers first.
    assert_eq!(ids, pooled(), "a second pool");
    assert!(ids.iter().all(|id| sampled.contains(id)), "rows outside the sample");
    let shards_seen: std::collections::HashSet<i64> = ids.iter().map(|id| id % 3).collect();
    assert_eq!(shards_seen.len(), 3, "rows of every shard");
    // A shard's own table (one server's MergeTree) is sampled the same way.
    let l = table(&catalog, "l");
    let rows = l.row_count.expect("rows");
    let local = |seed| sample_pool(&db, l, rows, seed, None).expect("pool");
    assert_eq!(local(7).len(), 1_000);
    let json = |pool: schemascope_core::Collection| -> Vec<String> {
        pool.items().map(|item| item.json.to_string()).collect()
    };
    assert_eq!(json(local(7)), json(local(8)));
}
