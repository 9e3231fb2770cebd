#!/usr/bin/env python3
"""SQL over a served graph (issue 30): execute_query latency on 100k nodes / 500k edges, over
node properties and over algorithm results, with DuckDB over the same nodes as a reference.

    python3 bench/graph_sql_bench.py [--runs 5] [--schemascope BIN]

The graph (generated once, bench/data/graph/sql-100k-500k.json, seed 42): 100,000 nodes with a
`type` (5 values), a `region` (12), a `cpu` (double) and a nested `metadata.tier` (3), and
500,000 random directed edges with a `weight`. `schemascope serve --http` loads it, runs
PageRank once (`run_algorithm`), then each round times, through `POST /v1/tools/execute_query`:

  group-by      SELECT type, region, COUNT(*), AVG(cpu) FROM nodes GROUP BY type, region
  nested        SELECT "metadata.tier", MAX(cpu) FROM nodes GROUP BY 1
  results       SELECT type, AVG(pagerank rank), MAX(pagerank rank) FROM nodes GROUP BY type
  top-k         the 5 nodes of highest PageRank
  edges         SELECT source, COUNT(*), SUM(weight) FROM edges GROUP BY source ORDER BY 2 DESC LIMIT 5

DuckDB (2 threads) answers the node-property statements over the same nodes read from the file
into a table beforehand (no conversion in its timer: a reference, not a like-for-like peer,
since schemascope converts the items at each statement). Medians of --runs rounds are printed.
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import subprocess
import sys
import time
from pathlib import Path

BENCH_DIR = Path(__file__).resolve().parent
sys.path.insert(0, str(BENCH_DIR))

from ndjson_bench import load_average  # noqa: E402
from query_bench import free_port, peak_kb  # noqa: E402

ROOT = BENCH_DIR.parent
DATA = ROOT / "bench" / "data" / "graph"
RANK = '"algorithmResults.schemascope.pagerank.rank"'

QUERIES = {
    "group-by": "SELECT type, region, COUNT(*) AS n, AVG(cpu) AS cpu FROM nodes GROUP BY type, region ORDER BY type, region",
    "nested": 'SELECT "metadata.tier", MAX(cpu) AS cpu FROM nodes GROUP BY 1 ORDER BY 1',
    "results": f"SELECT type, AVG({RANK}) AS mean_rank, MAX({RANK}) AS top FROM nodes GROUP BY type ORDER BY type",
    "top-k": f"SELECT id, {RANK} AS rank FROM nodes ORDER BY rank DESC, id LIMIT 5",
    "edges": "SELECT source, COUNT(*) AS n, SUM(weight) AS w FROM edges GROUP BY source ORDER BY n DESC, source LIMIT 5",
}
DUCK_QUERIES = ["group-by", "nested"]


def generate() -> Path:
    path = DATA / "sql-100k-500k.json"
    if path.exists():
        return path
    DATA.mkdir(parents=True, exist_ok=True)
    rng = random.Random(42)
    types = ["server", "client", "database", "cache", "queue"]
    regions = [f"region-{i}" for i in range(12)]
    nodes = [
        {"id": f"n{i}", "type": rng.choice(types), "region": rng.choice(regions),
         "cpu": round(rng.random(), 4), "metadata": {"tier": rng.choice(["gold", "silver", "bronze"])}}
        for i in range(100_000)
    ]
    edges = [
        {"source": f"n{rng.randrange(100_000)}", "target": f"n{rng.randrange(100_000)}",
         "weight": round(rng.random(), 3)}
        for _ in range(500_000)
    ]
    path.write_text(json.dumps({"nodes": nodes, "edges": edges}))
    return path


def post(port: int, tool: str, arguments: dict) -> dict:
    import urllib.request
    request = urllib.request.Request(
        f"http://127.0.0.1:{port}/v1/tools/{tool}",
        data=json.dumps(arguments).encode(),
        headers={"Content-Type": "application/json"},
    )
    with urllib.request.urlopen(request, timeout=600) as response:
        return json.loads(response.read())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--schemascope", default=str(ROOT / "target/release/schemascope"))
    args = parser.parse_args()
    graph = generate()
    port = free_port()
    process = subprocess.Popen(
        [args.schemascope, "serve", "--no-watch", "--no-session-file", "--http", f"127.0.0.1:{port}",
         f"g={graph}"],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = time.time() + 300
        while True:
            try:
                if post(port, "list_sources", {}).get("success"):
                    break
            except OSError:
                pass
            if time.time() > deadline or process.poll() is not None:
                raise SystemExit("the server did not start")
            time.sleep(0.5)
        ran = post(port, "run_algorithm", {"source": "g", "type": "pagerank"})
        assert ran.get("success"), ran.get("message")
        times = {name: [] for name in QUERIES}
        for _ in range(args.runs):
            for name, sql in QUERIES.items():
                started = time.perf_counter()
                answer = post(port, "execute_query", {"source": "g", "query": sql, "max_rows": 100})
                times[name].append(time.perf_counter() - started)
                assert answer.get("success"), f"{name}: {answer.get('message')}"
        rss = peak_kb(process.pid)
    finally:
        process.terminate()
        process.wait()
    import duckdb
    con = duckdb.connect()
    con.execute("SET threads=2")
    nodes = json.loads(graph.read_text())["nodes"]
    con.execute("CREATE TABLE nodes (id VARCHAR, type VARCHAR, region VARCHAR, cpu DOUBLE, \"metadata.tier\" VARCHAR)")
    con.executemany("INSERT INTO nodes VALUES (?, ?, ?, ?, ?)",
                    [(n["id"], n["type"], n["region"], n["cpu"], n["metadata"]["tier"]) for n in nodes])
    duck = {}
    for name in DUCK_QUERIES:
        runs = []
        for _ in range(args.runs):
            started = time.perf_counter()
            con.execute(QUERIES[name]).fetchall()
            runs.append(time.perf_counter() - started)
        duck[name] = statistics.median(runs)
    print(f"graph 100k nodes / 500k edges, load {load_average()}")
    print(f"{'query':10} {'schemascope ms':>15} {'DuckDB ms (table in memory)':>28}")
    for name in QUERIES:
        ours = statistics.median(times[name]) * 1000
        reference = f"{duck[name] * 1000:.1f}" if name in duck else "-"
        print(f"{name:10} {ours:15.1f} {reference:>28}")
    print(f"server peak RSS {rss / 1024:.0f} MiB")


if __name__ == "__main__":
    main()
