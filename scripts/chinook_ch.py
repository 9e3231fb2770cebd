#!/usr/bin/env python3
"""Load the SQLite Chinook database into ClickHouse over its HTTP interface (used by
scripts/clickhouse).

    python3 scripts/chinook_ch.py SQLITE_FILE HTTP_URL DATABASE USER PASSWORD

Reads every table of SQLITE_FILE with the standard library's sqlite3, creates DATABASE (dropped
first if it exists) with one MergeTree table per SQLite table — INTEGER -> Int64, NUMERIC ->
Float64, DATETIME -> DateTime, text -> String, a column SQLite allows NULL in -> Nullable(...),
ordered by the primary key — and inserts the rows as JSONEachRow. SQL written here is accepted by
ClickHouse 18.16 (Debian's package) and by current releases. Afterwards every table's row count
is compared with SQLite's; a difference is an error (exit status 1) naming the table.
"""

import json
import sqlite3
import sys
import urllib.parse
import urllib.request


def ch_type(declared, nullable):
    t = (declared or "").upper()
    if "INT" in t:
        base = "Int64"
    elif t.startswith("NUMERIC") or "REAL" in t or "FLOA" in t or "DOUB" in t:
        base = "Float64"
    elif "DATE" in t:
        base = "DateTime"
    else:
        base = "String"
    return f"Nullable({base})" if nullable else base


def quote(name):
    return "`" + name.replace("\\", "\\\\").replace("`", "\\`") + "`"


class ClickHouse:
    def __init__(self, url, user, password):
        self.url = url.rstrip("/") + "/"
        self.user = user
        self.password = password

    def run(self, sql, body=None, database=None):
        params = {"query": sql}
        if database:
            params["database"] = database
        data = body.encode() if body is not None else None
        request = urllib.request.Request(
            self.url + "?" + urllib.parse.urlencode(params),
            data=data if data is not None else b"",
            method="POST",
        )
        request.add_header("X-ClickHouse-User", self.user)
        request.add_header("X-ClickHouse-Key", self.password)
        try:
            with urllib.request.urlopen(request, timeout=120) as response:
                return response.read().decode()
        except urllib.error.HTTPError as e:
            raise SystemExit(f"chinook_ch: {sql[:80]}: {e.read().decode().strip()}")


def main():
    if len(sys.argv) != 6:
        raise SystemExit(__doc__)
    sqlite_file, url, database, user, password = sys.argv[1:]
    ch = ClickHouse(url, user, password)
    source = sqlite3.connect(f"file:{sqlite_file}?mode=ro", uri=True)
    tables = [
        row[0]
        for row in source.execute(
            "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' ORDER BY name"
        )
    ]
    ch.run(f"DROP DATABASE IF EXISTS {quote(database)}")
    ch.run(f"CREATE DATABASE {quote(database)}")
    for table in tables:
        columns = source.execute(f'PRAGMA table_info("{table}")').fetchall()
        keys = [c[1] for c in sorted((c for c in columns if c[5] > 0), key=lambda c: c[5])]
        defs = []
        types = {}
        for _, name, declared, notnull, _, pk in columns:
            nullable = not notnull and pk == 0
            types[name] = ch_type(declared, nullable)
            defs.append(f"{quote(name)} {types[name]}")
        order = "(" + ", ".join(quote(k) for k in keys) + ")" if keys else "tuple()"
        ch.run(
            f"CREATE TABLE {quote(database)}.{quote(table)} ({', '.join(defs)}) "
            f"ENGINE = MergeTree() ORDER BY {order}"
        )
        names = [c[1] for c in columns]
        rows = source.execute(f'SELECT * FROM "{table}"').fetchall()
        lines = []
        for row in rows:
            record = {}
            for name, value in zip(names, row):
                if value is not None and types[name] in ("DateTime", "Nullable(DateTime)"):
                    # SQLite keeps '2021-01-01 00:00:00'; ClickHouse reads that form.
                    value = str(value)[:19]
                record[name] = value
            lines.append(json.dumps(record, ensure_ascii=False))
        if lines:
            ch.run(
                f"INSERT INTO {quote(database)}.{quote(table)} FORMAT JSONEachRow",
                body="\n".join(lines) + "\n",
            )
        got = int(ch.run(f"SELECT count() FROM {quote(database)}.{quote(table)}").strip())
        if got != len(rows):
            raise SystemExit(f"chinook_ch: {table}: {got} rows in ClickHouse, {len(rows)} in SQLite")
    print(f"chinook_ch: {len(tables)} tables loaded into {database}", file=sys.stderr)


if __name__ == "__main__":
    main()
