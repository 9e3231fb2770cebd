#!/usr/bin/env python3
"""Load the SQLite Chinook database into a ClickHouse cluster, sharded (used by
scripts/clickhouse-cluster).

    python3 scripts/chinook_ch_shards.py SQLITE_FILE CLUSTER DATABASE USER PASSWORD HTTP_URL...

HTTP_URL... are the nodes, one per shard, in the order the cluster `CLUSTER` (remote_servers)
lists its shards. On every node: DATABASE_local holds one MergeTree table per Chinook table (the
types and order of scripts/chinook_ch.py, which loads the same rows into a single server), and
DATABASE one Distributed table of the same name over them, sharded by cityHash64 of the table's
primary key — so whichever node a client connects to, DATABASE reads the whole of Chinook.

The rows go through the first node: scripts/chinook_ch.py loads them into DATABASE_staging there
(checking every count against SQLite), and each table is copied into its Distributed table with
insert_distributed_sync=1, which splits it across the shards by the sharding key before it
returns. Afterwards the shards' local row counts must add up to SQLite's for every table, and
every table must have rows on at least two shards (else the cluster would test nothing); either
failure is an error (exit status 1) naming the table. The staging database is dropped.
"""

import json
import os
import subprocess
import sys
import urllib.error
import urllib.parse
import urllib.request

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from chinook_ch import ClickHouse, quote  # noqa: E402  (the single server's loader)


class Node(ClickHouse):
    """scripts/chinook_ch.py's client, whose statements may also carry settings."""

    def run(self, sql, body=None, database=None, settings=None):
        if not settings:
            return super().run(sql, body, database)
        assert body is None and database is None, "settings go with a whole statement only"
        # Settings are URL parameters; the statement is the body.
        request = urllib.request.Request(
            self.url + "?" + urllib.parse.urlencode(settings), data=sql.encode(), method="POST"
        )
        request.add_header("X-ClickHouse-User", self.user)
        request.add_header("X-ClickHouse-Key", self.password)
        try:
            with urllib.request.urlopen(request, timeout=120) as response:
                return response.read().decode()
        except urllib.error.HTTPError as e:
            raise SystemExit(f"chinook_ch_shards: {sql[:80]}: {e.read().decode().strip()}")


def rows(ch, sql):
    """The rows of a SELECT as dicts (JSONEachRow)."""
    text = ch.run(sql + " FORMAT JSONEachRow")
    return [json.loads(line) for line in text.splitlines() if line.strip()]


def main():
    if len(sys.argv) < 8:
        raise SystemExit(__doc__)
    sqlite_file, cluster, database, user, password = sys.argv[1:6]
    urls = sys.argv[6:]
    local = database + "_local"
    staging = database + "_staging"
    nodes = [Node(url, user, password) for url in urls]
    first = nodes[0]

    # The rows, typed and checked exactly as the single server's.
    loader = os.path.join(os.path.dirname(os.path.abspath(__file__)), "chinook_ch.py")
    subprocess.run(
        [sys.executable, loader, sqlite_file, urls[0], staging, user, password], check=True
    )
    tables = rows(
        first,
        f"SELECT name, primary_key FROM system.tables WHERE database = '{staging}' ORDER BY name",
    )
    columns = {
        t["name"]: rows(
            first,
            f"SELECT name, type FROM system.columns WHERE database = '{staging}' "
            f"AND table = '{t['name']}'",
        )
        for t in tables
    }

    for node in nodes:
        # The Distributed tables first: they name the local ones.
        node.run(f"DROP DATABASE IF EXISTS {quote(database)}")
        node.run(f"DROP DATABASE IF EXISTS {quote(local)}")
        node.run(f"CREATE DATABASE {quote(local)}")
        node.run(f"CREATE DATABASE {quote(database)}")
        for t in tables:
            name, keys = t["name"], [k.strip() for k in t["primary_key"].split(",")]
            defs = ", ".join(f"{quote(c['name'])} {c['type']}" for c in columns[name])
            order = ", ".join(quote(k) for k in keys)
            node.run(
                f"CREATE TABLE {quote(local)}.{quote(name)} ({defs}) "
                f"ENGINE = MergeTree() ORDER BY ({order})"
            )
            node.run(
                f"CREATE TABLE {quote(database)}.{quote(name)} ({defs}) "
                f"ENGINE = Distributed({quote(cluster)}, {quote(local)}, {quote(name)}, "
                f"cityHash64({order}))"
            )

    # Through the Distributed table: ClickHouse itself sends each row to its shard.
    for t in tables:
        name = t["name"]
        first.run(
            f"INSERT INTO {quote(database)}.{quote(name)} SELECT * FROM {quote(staging)}.{quote(name)}",
            settings={"insert_distributed_sync": "1"},
        )

    for t in tables:
        name = t["name"]
        want = int(first.run(f"SELECT count() FROM {quote(staging)}.{quote(name)}").strip())
        counts = [
            int(node.run(f"SELECT count() FROM {quote(local)}.{quote(name)}").strip())
            for node in nodes
        ]
        if sum(counts) != want:
            raise SystemExit(f"chinook_ch_shards: {name}: {counts} rows on the shards, {want} in all")
        if sum(1 for n in counts if n > 0) < 2:
            raise SystemExit(f"chinook_ch_shards: {name}: rows on fewer than two shards ({counts})")
    first.run(f"DROP DATABASE {quote(staging)}")
    print(
        f"chinook_ch_shards: {len(tables)} tables split across {len(nodes)} shards, "
        f"Distributed tables in {database} on every node",
        file=sys.stderr,
    )


if __name__ == "__main__":
    main()
