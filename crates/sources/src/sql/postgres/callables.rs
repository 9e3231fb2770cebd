//! PostgreSQL's allow-list, read from its own catalog once per connection: which functions,
//! operators and cast targets a statement may use.
//!
//! A function may run when `pg_proc` says it is a plain, window or aggregate function that is
//! immutable or stable (`provolatile`) and not parallel-unsafe (`proparallel`: functions that
//! change state or take a transaction id, such as `txid_current`, are marked unsafe), or when
//! it is one of the few harmless volatile functions of `pg_catalog`
//! ([`schemascope_query::HARMLESS_VOLATILE`]), and PostgreSQL would run no refused function on
//! its behalf (coercing its arguments into an unsafe type, evaluating a parameter default); an
//! aggregate also needs every support function it runs to pass. An operator may run when the function behind it (`oprcode`) may. A type is
//! unsafe as a cast or literal target when its input or type-modifier function, a cast
//! function into it, or a function its domain constraints use may not run — or when its base
//! or element type is unsafe.

use postgres::Client;
use schemascope_query::sql::relations::RelationScope;
use schemascope_query::{Callables, HARMLESS_VOLATILE, SqlDialect};

/// Every function with whether it may run (`ok`), and the unsafe types (`tainted`) — the one
/// definition the three queries share. First by the function's own marks (`f0`); then a
/// function is refused too when PostgreSQL would run a refused function on its behalf without
/// the statement naming it: coercing an argument into (or its result out of) an unsafe type — a
/// domain whose check calls one, a type an implicit cast into runs one — or evaluating one of
/// its parameter defaults. What a domain check or a default calls is read from its stored
/// expression tree (every `:funcid` and `:opfuncid`): `pg_depend` does not record calls of
/// PostgreSQL's own functions, so `pg_sleep` in a check went unseen.
fn functions_cte() -> String {
    let harmless: Vec<String> = HARMLESS_VOLATILE.iter().map(|name| format!("'{name}'")).collect();
    format!(
        "WITH RECURSIVE f0 AS MATERIALIZED (
           SELECT p.oid, n.nspname::text AS schema, p.proname::text AS name, p.prokind, p.pronargs, p.pronargdefaults, p.proargtypes, p.prorettype,
             p.proargdefaults::text AS proargdefaults,
             p.prokind IN ('f', 'w', 'a')
             AND ((p.provolatile IN ('i', 's') AND p.proparallel <> 'u') OR (n.nspname = 'pg_catalog' AND p.proname::text IN ({})))
             AND NOT (n.nspname = 'pg_catalog' AND p.proname::text ~ '{}')
               AS ok
           FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace),
         bad AS (SELECT oid FROM f0 WHERE NOT ok),
         unsafe_type(oid) AS (
           SELECT t.oid FROM pg_type t
           WHERE t.typinput IN (SELECT oid FROM bad) OR t.typmodin IN (SELECT oid FROM bad)
              OR EXISTS (SELECT 1 FROM pg_cast c WHERE c.casttarget = t.oid AND c.castfunc IN (SELECT oid FROM bad))
              OR EXISTS (SELECT 1 FROM pg_constraint con, regexp_matches(con.conbin::text, ':(?:op)?funcid (\\d+)', 'g') AS m(id)
                         WHERE con.contypid = t.oid AND m.id[1]::oid IN (SELECT oid FROM bad))),
         tainted(oid) AS (
           SELECT oid FROM unsafe_type
           UNION SELECT t.oid FROM pg_type t JOIN tainted ON t.typbasetype = tainted.oid OR t.typelem = tainted.oid),
         f AS MATERIALIZED (
           SELECT f0.oid, f0.schema, f0.name, f0.prokind, f0.pronargs, f0.pronargdefaults, f0.proargtypes,
             f0.ok
             AND f0.prorettype NOT IN (SELECT oid FROM tainted)
             AND NOT EXISTS (SELECT 1 FROM unnest(f0.proargtypes::oid[]) AS a(t) WHERE a.t IN (SELECT oid FROM tainted))
             AND NOT EXISTS (SELECT 1 FROM regexp_matches(f0.proargdefaults, ':(?:op)?funcid (\\d+)', 'g') AS m(id)
                             WHERE m.id[1]::oid IN (SELECT oid FROM bad))
               AS ok
           FROM f0)",
        harmless.join(", "),
        READS_RELATIONS_BY_NAME
    )
}

/// `pg_catalog` functions that read relations named by their arguments, or the server's
/// statistics and settings, whatever the statement's FROM says: the `*_to_xml` family dumps
/// any table, schema or the whole database (`schema_to_xml('pg_catalog', …)` reads
/// `pg_stat_activity`), the `pg_stat_*` functions are `pg_stat_activity` and the other
/// statistics views by another name, `pg_show_all_settings` is `pg_settings`, and the lock and
/// snapshot functions show other sessions. A statement reads only the relations its source
/// serves (the read-only check's relation rule), so these are refused as that rule's
/// by-name twins. A regular expression over `proname`.
const READS_RELATIONS_BY_NAME: &str = "^(pg_stat_|pg_show_all_|pg_ls_|pg_lock_status$|pg_blocking_pids$|pg_safe_snapshot_blocking_pids$|pg_prepared_xact$|pg_get_backend_memory_contexts$|pg_hba_file_rules$|pg_ident_file_mappings$|pg_get_replication_slots$|pg_get_shmem_allocations$|pg_control_)|_to_xml(schema|_and_xmlschema)?$";

/// The names of `pg_catalog`'s relations: an unqualified name reaches them before the search
/// path.
const CATALOG_RELATIONS: &str =
    "SELECT c.relname::text FROM pg_class c WHERE c.relnamespace = 'pg_catalog'::regnamespace";

/// Per function: schema, name, whether it may run (aggregates with their support functions),
/// and whether attribute notation can call it: one required argument, of any type —
/// `(2::float8).pg_sleep` is `pg_sleep(2::float8)`, not only `t.f` over a row.
fn functions_sql() -> String {
    format!(
        "{}
         SELECT f.schema, f.name,
           f.ok AND (f.prokind <> 'a' OR NOT EXISTS (
             SELECT 1 FROM pg_aggregate a JOIN f s ON s.oid IN (a.aggtransfn, a.aggfinalfn, a.aggcombinefn, a.aggserialfn,
                                                                a.aggdeserialfn, a.aggmtransfn, a.aggminvtransfn, a.aggmfinalfn)
             WHERE a.aggfnoid = f.oid AND NOT s.ok)),
           f.pronargs >= 1 AND f.pronargs - f.pronargdefaults <= 1
         FROM f",
        functions_cte()
    )
}

/// Per operator: schema, symbol, whether the function behind it may run (a shell operator,
/// `oprcode` 0, runs nothing).
fn operators_sql() -> String {
    format!(
        "{}
         SELECT n.nspname::text, o.oprname::text, o.oprcode = 0 OR COALESCE(f.ok, false)
         FROM pg_operator o JOIN pg_namespace n ON n.oid = o.oprnamespace LEFT JOIN f ON f.oid = o.oprcode",
        functions_cte()
    )
}

/// The unsafe types, with the domains over them and the arrays of them.
fn unsafe_types_sql() -> String {
    format!(
        "{}
         SELECT n.nspname::text, t.typname::text FROM tainted JOIN pg_type t ON t.oid = tainted.oid JOIN pg_namespace n ON n.oid = t.typnamespace",
        functions_cte()
    )
}

/// Reads the allow-list through `client`, in a read-only transaction bounded by `timeout_ms`.
pub(crate) fn load(client: &mut Client, timeout_ms: u64) -> Result<Callables, postgres::Error> {
    let mut tx = client.build_transaction().read_only(true).start()?;
    // JIT-compiling these catalog queries (their estimated cost passes the threshold) took
    // 0.45 s each, for a run of milliseconds.
    tx.batch_execute(&format!("SET LOCAL statement_timeout = {timeout_ms}; SET LOCAL jit = off"))?;
    let mut callables = Callables::new(SqlDialect::Postgres);
    for row in tx.query(&functions_sql(), &[])? {
        let (schema, name): (String, String) = (row.try_get(0)?, row.try_get(1)?);
        let allowed: bool = row.try_get(2)?;
        callables.add_function(Some(&schema), &name, allowed);
        if !allowed && row.try_get::<_, bool>(3)? {
            callables.add_attribute_call(&name);
        }
    }
    for row in tx.query(&operators_sql(), &[])? {
        callables.add_operator(
            Some(&row.try_get::<_, String>(0)?),
            &row.try_get::<_, String>(1)?,
            row.try_get(2)?,
        );
    }
    for row in tx.query(&unsafe_types_sql(), &[])? {
        callables
            .add_unsafe_type(Some(&row.try_get::<_, String>(0)?), &row.try_get::<_, String>(1)?);
    }
    let mut catalog_relations = std::collections::HashSet::new();
    for row in tx.query(CATALOG_RELATIONS, &[])? {
        catalog_relations.insert(row.try_get::<_, String>(0)?);
    }
    callables.set_relation_scope(RelationScope::Postgres { catalog_relations });
    tx.rollback()?;
    Ok(callables)
}
