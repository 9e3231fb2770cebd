"""Runs one SQL statement with DuckDB over a file, the independent engine the SQL tests compare
schemascope's answers with.

    python3 tests/tables/duckdb_query.py FILE TABLE SQL

FILE (CSV, Parquet, a JSON array of objects, or a directory of a Hive-partitioned table) is a
view named TABLE; the statement's rows are
printed as a JSON array of arrays, dates and decimals as text, in DuckDB's order.
"""

import datetime
import glob
import os
import decimal
import json
import sys

import duckdb


def reader(path):
    if os.path.isdir(path):
        # A partitioned table: its files at any depth, keys from `key=value` directories.
        parquet = glob.glob(f"{path}/**/*.parquet", recursive=True)
        pattern, read = (f"{path}/**/*.parquet", "read_parquet") if parquet else (f"{path}/**/*.csv", "read_csv")
        return f"{read}('{pattern}', hive_partitioning=true, union_by_name=true)"
    if path.endswith(".parquet"):
        return f"read_parquet('{path}')"
    if path.endswith(".json"):
        return f"read_json('{path}', format='array')"
    # Every column typed by DuckDB's own sniffer over every row, as schemascope types from every row.
    return f"read_csv('{path}', header=true, sample_size=-1)"


def plain(value):
    if isinstance(value, (datetime.date, datetime.datetime, datetime.time)):
        return value.isoformat()
    if isinstance(value, decimal.Decimal):
        return str(value)
    return value


def main(path, table, sql):
    con = duckdb.connect()
    con.execute("SET threads = 2")
    con.execute(f'CREATE VIEW "{table}" AS SELECT * FROM {reader(path)}')
    rows = con.execute(sql).fetchall()
    json.dump([[plain(v) for v in row] for row in rows], sys.stdout, default=str)


if __name__ == "__main__":
    main(*sys.argv[1:4])
