#!/usr/bin/env python3
"""Load the SQLite Chinook database into PostgreSQL (used by scripts/postgres).

    python3 scripts/chinook_pg.py SQLITE_FILE [PSQL_ARG...]

Reads every table of SQLITE_FILE with the standard library's sqlite3 and pipes one SQL script
into `psql PSQL_ARG... -v ON_ERROR_STOP=1 --single-transaction`: CREATE TABLE with faithful
types (INTEGER -> integer, NVARCHAR(n) -> varchar(n), NUMERIC(p,s) -> numeric(p,s), DATETIME ->
timestamp), NOT NULL, the original CamelCase names quoted (as the official Chinook PostgreSQL
script does), the rows via COPY FROM STDIN, then primary keys (with their SQLite names),
foreign keys (FK_<Table><Column>), the SQLite indexes, a view, comments, GRANT SELECT to
schemascope_ro, and ANALYZE. The connection (database, user) comes from PSQL_ARG and the usual
PG* environment variables; the database must be empty.

Afterwards the row count of every table is compared with SQLite's; any difference is an error
(exit status 1) naming the table.
"""

import re
import sqlite3
import subprocess
import sys

# A few comments so that catalog readers can be tested on them.
TABLE_COMMENTS = {
    "Customer": "People and companies who bought music from the store.",
    "Invoice": "One purchase by a customer; its lines are in InvoiceLine.",
    "Track": "A song or video that can be bought; belongs to an album.",
    "Employee": "Store staff; sales support agents look after customers.",
}
COLUMN_COMMENTS = {
    ("Invoice", "Total"): "Invoice total in USD, tax included.",
    ("Track", "Milliseconds"): "Duration of the track in milliseconds.",
    ("Track", "Bytes"): "File size in bytes.",
    ("Customer", "SupportRepId"): "The employee who supports this customer.",
    ("Employee", "ReportsTo"): "The employee's manager (NULL for the general manager).",
}
VIEW_NAME = "CustomerInvoiceTotals"
VIEW_SQL = """CREATE VIEW "CustomerInvoiceTotals" AS
SELECT c."CustomerId", c."FirstName", c."LastName", c."Country",
       count(i."InvoiceId")::integer AS "InvoiceCount",
       coalesce(sum(i."Total"), 0)::numeric(10,2) AS "TotalSpent"
FROM "Customer" c
LEFT JOIN "Invoice" i ON i."CustomerId" = c."CustomerId"
GROUP BY c."CustomerId", c."FirstName", c."LastName", c."Country";
"""
VIEW_COMMENT = "Number of invoices and money spent per customer."

READ_ONLY_ROLE = "schemascope_ro"


def q(name):
    """A quoted identifier."""
    return '"' + name.replace('"', '""') + '"'


def lit(text):
    """A string literal."""
    return "'" + text.replace("'", "''") + "'"


def pg_type(sqlite_type):
    t = sqlite_type.strip().upper()
    m = re.fullmatch(r"N?VARCHAR\s*\((\d+)\)", t) or re.fullmatch(r"N?CHAR\s*\((\d+)\)", t)
    if m:
        return f"varchar({m.group(1)})" if "VARCHAR" in t else f"char({m.group(1)})"
    m = re.fullmatch(r"(?:NUMERIC|DECIMAL)\s*\((\d+)\s*,\s*(\d+)\)", t)
    if m:
        return f"numeric({m.group(1)},{m.group(2)})"
    simple = {
        "INTEGER": "integer",
        "INT": "integer",
        "BIGINT": "bigint",
        "DATETIME": "timestamp",
        "DATE": "date",
        "REAL": "double precision",
        "TEXT": "text",
        "BLOB": "bytea",
        "NUMERIC": "numeric",
    }
    if t in simple:
        return simple[t]
    raise SystemExit(f"chinook_pg.py: no PostgreSQL type for SQLite type {sqlite_type!r}")


def copy_value(value):
    """One field in COPY text format."""
    if value is None:
        return "\\N"
    if isinstance(value, bytes):
        return "\\\\x" + value.hex()
    if isinstance(value, float):
        text = repr(value)
    else:
        text = str(value)
    return (
        text.replace("\\", "\\\\").replace("\t", "\\t").replace("\n", "\\n").replace("\r", "\\r")
    )


def build_script(db):
    tables = [
        name
        for (name,) in db.execute(
            "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' "
            "ORDER BY name"
        )
    ]
    out = []
    counts = {}
    constraints = []
    for table in tables:
        create_sql = db.execute(
            "SELECT sql FROM sqlite_master WHERE type = 'table' AND name = ?", (table,)
        ).fetchone()[0]
        cols = db.execute(f"PRAGMA table_info({q(table)})").fetchall()
        # cid, name, type, notnull, dflt_value, pk
        lines = []
        for _cid, name, ctype, notnull, dflt, _pk in cols:
            line = f"    {q(name)} {pg_type(ctype)}"
            if notnull:
                line += " NOT NULL"
            if dflt is not None:
                raise SystemExit(f"chinook_pg.py: defaults are not handled ({table}.{name})")
            lines.append(line)
        out.append(f"CREATE TABLE {q(table)}\n(\n" + ",\n".join(lines) + "\n);\n")

        # Rows.
        names = [c[1] for c in cols]
        out.append(f"COPY {q(table)} ({', '.join(q(n) for n in names)}) FROM STDIN;\n")
        n = 0
        for row in db.execute(f"SELECT {', '.join(q(n) for n in names)} FROM {q(table)}"):
            out.append("\t".join(copy_value(v) for v in row) + "\n")
            n += 1
        out.append("\\.\n")
        counts[table] = n

        # Keys, added after the rows.
        pk_cols = [c[1] for c in sorted((c for c in cols if c[5]), key=lambda c: c[5])]
        if pk_cols:
            m = re.search(r"CONSTRAINT\s+\[?(\w+)\]?\s+PRIMARY\s+KEY", create_sql, re.I)
            pk_name = m.group(1) if m else f"PK_{table}"
            constraints.append(
                f"ALTER TABLE {q(table)} ADD CONSTRAINT {q(pk_name)} "
                f"PRIMARY KEY ({', '.join(q(c) for c in pk_cols)});\n"
            )
    fks = []
    for table in tables:
        # id, seq, table, from, to, on_update, on_delete, match
        by_id = {}
        for fk_id, seq, ref, col, ref_col, on_upd, on_del, _m in db.execute(
            f"PRAGMA foreign_key_list({q(table)})"
        ):
            by_id.setdefault(fk_id, []).append((seq, ref, col, ref_col, on_upd, on_del))
        for fk_id in sorted(by_id, reverse=True):  # SQLite lists them last-declared first
            parts = sorted(by_id[fk_id])
            ref = parts[0][1]
            cols_ = [p[2] for p in parts]
            ref_cols = [p[3] for p in parts]
            on_upd, on_del = parts[0][4], parts[0][5]
            fk_name = f"FK_{table}{''.join(cols_)}"
            fks.append(
                f"ALTER TABLE {q(table)} ADD CONSTRAINT {q(fk_name)} "
                f"FOREIGN KEY ({', '.join(q(c) for c in cols_)}) "
                f"REFERENCES {q(ref)} ({', '.join(q(c) for c in ref_cols)}) "
                f"ON DELETE {on_del} ON UPDATE {on_upd};\n"
            )
    indexes = []
    for name, table in db.execute(
        "SELECT name, tbl_name FROM sqlite_master WHERE type = 'index' AND sql IS NOT NULL "
        "ORDER BY name"
    ):
        cols_ = [r[2] for r in db.execute(f"PRAGMA index_info({q(name)})")]
        unique = db.execute(
            "SELECT sql FROM sqlite_master WHERE name = ?", (name,)
        ).fetchone()[0].upper().startswith("CREATE UNIQUE")
        indexes.append(
            f"CREATE {'UNIQUE ' if unique else ''}INDEX {q(name)} ON {q(table)} "
            f"({', '.join(q(c) for c in cols_)});\n"
        )

    out += constraints + fks + indexes
    out.append(VIEW_SQL)
    out.append(f"COMMENT ON VIEW {q(VIEW_NAME)} IS {lit(VIEW_COMMENT)};\n")
    for table, text in TABLE_COMMENTS.items():
        out.append(f"COMMENT ON TABLE {q(table)} IS {lit(text)};\n")
    for (table, col), text in COLUMN_COMMENTS.items():
        out.append(f"COMMENT ON COLUMN {q(table)}.{q(col)} IS {lit(text)};\n")
    out.append(f"GRANT USAGE ON SCHEMA public TO {READ_ONLY_ROLE};\n")
    out.append(f"GRANT SELECT ON ALL TABLES IN SCHEMA public TO {READ_ONLY_ROLE};\n")
    out.append(f"ANALYZE {', '.join(q(t) for t in tables)};\n")
    return "".join(out), counts


def main(argv):
    if len(argv) < 2:
        raise SystemExit(__doc__)
    sqlite_file, psql_args = argv[1], argv[2:]
    db = sqlite3.connect(f"file:{sqlite_file}?mode=ro", uri=True)
    script, expected = build_script(db)
    psql = ["psql", "-X", "-q", "-v", "ON_ERROR_STOP=1", *psql_args]
    subprocess.run(
        [*psql, "--single-transaction", "-f", "-"],
        input=script.encode("utf-8"),
        stdout=subprocess.DEVNULL,
        check=True,
    )

    # Verify: every table holds exactly SQLite's rows.
    query = " UNION ALL ".join(
        f"SELECT {lit(t)}, count(*) FROM {q(t)}" for t in sorted(expected)
    )
    res = subprocess.run(
        [*psql, "-A", "-t", "-F", "\t", "-c", query],
        stdout=subprocess.PIPE,
        check=True,
        text=True,
    )
    actual = {}
    for line in res.stdout.splitlines():
        if line.strip():
            t, n = line.split("\t")
            actual[t] = int(n)
    bad = [(t, expected[t], actual.get(t)) for t in expected if actual.get(t) != expected[t]]
    if bad:
        for t, e, a in bad:
            print(f"chinook_pg.py: table {t}: SQLite has {e} rows, PostgreSQL {a}", file=sys.stderr)
        raise SystemExit(1)
    total = sum(expected.values())
    print(f"chinook_pg.py: loaded {len(expected)} tables, {total} rows (counts verified)")


if __name__ == "__main__":
    main(sys.argv)
