#!/usr/bin/env python3
"""BM25 benchmark: schemascope (default and Okapi modes) vs rank_bm25 (BM25Okapi) and bm25s.

One command (from anywhere; paths are relative to the repository root):

    python3 bench/bm25_bench.py [--runs R] [--rounds N] [--skip-build]

Every engine gets the same corpus and the same tokens: the first 2,000 chunks of schemascope's
generated docs for all 166 Spider databases pooled (876 tables), and 1,000 Spider questions
(the 493 open dev questions, cycled), both tokenized by schemascope. The Rust side is the example
`cargo run --release -p schemascope-docs --example bm25_bench`, which also dumps the tokens and
its Okapi-mode scores of the first 100 queries to bench/data/bm25/.

Measured, one query at a time on one thread, top-10:
  schemascope  Bm25Index::top_k (default scoring, and Okapi scoring)
  rank_bm25    BM25Okapi.get_scores + numpy argpartition for the top 10
  bm25s        BM25.retrieve([query], k=10), numba backend if numba imports (else numpy);
               also one batched call over all 1,000 queries, for reference

and verified: schemascope's Okapi scores equal rank_bm25's get_scores within 1e-9 on all 2,000
documents for 100 queries. Prints medians of R runs and writes bench/data/last-bm25-bench.json.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import platform
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DATA = ROOT / "bench" / "data" / "bm25"
TOP = 10


def run_schemascope(rounds: int) -> dict:
    cmd = [
        "cargo", "run", "--release", "-q", "-p", "schemascope-docs", "--example", "bm25_bench", "--",
        "--dump", str(DATA), "--rounds", str(rounds),
    ]
    out = subprocess.run(cmd, cwd=ROOT, check=True, capture_output=True, text=True)
    return json.loads(out.stdout)


def time_rank_bm25(docs, queries):
    import numpy as np
    from rank_bm25 import BM25Okapi

    start = time.perf_counter()
    bm = BM25Okapi(docs)
    build_ms = (time.perf_counter() - start) * 1e3
    start = time.perf_counter()
    for q in queries:
        scores = bm.get_scores(q)
        top = np.argpartition(-scores, TOP)[:TOP]
        top[np.argsort(-scores[top])]
    qps = len(queries) / (time.perf_counter() - start)
    return bm, build_ms, qps


def time_bm25s(docs, queries):
    import bm25s

    try:
        import numba  # noqa: F401

        backend = "numba"
    except ImportError:
        backend = "numpy"
    start = time.perf_counter()
    retriever = bm25s.BM25(k1=1.5, b=0.75, backend=backend)
    retriever.index(docs, show_progress=False)
    build_ms = (time.perf_counter() - start) * 1e3
    # bm25s drops unknown tokens; a query with none left is given the empty token it indexed.
    vocab = retriever.vocab_dict
    known = [[t for t in q if t in vocab] or [""] for q in queries]
    # Warm-up: numba compiles on first use.
    retriever.retrieve([known[0]], k=TOP, show_progress=False, backend_selection=backend, n_threads=1)
    start = time.perf_counter()
    for q in known:
        retriever.retrieve([q], k=TOP, show_progress=False, backend_selection=backend, n_threads=1)
    single_qps = len(known) / (time.perf_counter() - start)
    retriever.retrieve(known[:50], k=TOP, show_progress=False, backend_selection=backend, n_threads=1)
    start = time.perf_counter()
    retriever.retrieve(known, k=TOP, show_progress=False, backend_selection=backend, n_threads=1)
    batch_qps = len(known) / (time.perf_counter() - start)
    return backend, build_ms, single_qps, batch_qps


def verify_okapi(bm, queries, expected) -> float:
    worst = 0.0
    for q, want in zip(queries, expected):
        got = bm.get_scores(q)
        worst = max(worst, max(abs(float(a) - b) for a, b in zip(got, want)))
    return worst


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=5, help="runs per engine; medians are reported")
    parser.add_argument("--rounds", type=int, default=200, help="passes over the 1,000 queries per schemascope run")
    parser.add_argument("--output", default=str(ROOT / "bench" / "data" / "last-bm25-bench.json"))
    args = parser.parse_args()

    runs = {"schemascope_default": [], "schemascope_default_all_cores": [], "schemascope_okapi": [], "rank_bm25": [], "bm25s_single": [], "bm25s_batch": []}
    retrieve_median, retrieve_p99 = [], []
    backend = None
    max_diff = None
    for run in range(args.runs):
        rust = run_schemascope(args.rounds)
        runs["schemascope_default"].append(rust["schemascope_default"]["queries_per_s"])
        runs["schemascope_default_all_cores"].append(rust["schemascope_default"]["queries_per_s_all_cores"])
        threads = rust["schemascope_default"]["threads"]
        runs["schemascope_okapi"].append(rust["schemascope_okapi"]["queries_per_s"])
        retrieve_median.append(rust["pooled_retrieval"]["retrieve_us"]["median"])
        retrieve_p99.append(rust["pooled_retrieval"]["retrieve_us"]["p99"])
        corpus = json.loads((DATA / "bm25_corpus.json").read_text())
        docs, queries = corpus["docs"], corpus["queries"]
        bm, _, qps = time_rank_bm25(docs, queries)
        runs["rank_bm25"].append(qps)
        if max_diff is None:
            expected = json.loads((DATA / "bm25_okapi_scores.json").read_text())
            max_diff = verify_okapi(bm, queries[: len(expected)], expected)
        backend, _, single, batch = time_bm25s(docs, queries)
        runs["bm25s_single"].append(single)
        runs["bm25s_batch"].append(batch)
        print(f"run {run + 1}/{args.runs}: " + ", ".join(f"{k} {v[-1]:,.0f} q/s" for k, v in runs.items()), file=sys.stderr)

    med = {k: statistics.median(v) for k, v in runs.items()}
    ours = med["schemascope_default"]
    print(f"\nBM25 top-{TOP}, {len(docs):,} docs, {len(queries):,} queries, one query at a time, medians of {args.runs} runs")
    print(f"{'engine':<34} {'queries/s':>12} {'schemascope default ×':>22}")
    labels = {
        "schemascope_default": "schemascope (default)",
        "schemascope_default_all_cores": f"schemascope (default, {threads} threads)",
        "schemascope_okapi": "schemascope (Okapi)",
        "rank_bm25": "rank_bm25 BM25Okapi",
        "bm25s_single": f"bm25s ({backend}), single queries",
        "bm25s_batch": f"bm25s ({backend}), one batch",
    }
    for k, v in med.items():
        print(f"{labels[k]:<34} {v:>12,.0f} {ours / v:>21.1f}×")
    print(f"\nOkapi scores vs rank_bm25, 100 queries × {len(docs):,} docs: max |diff| = {max_diff:.3g} "
          f"({'OK' if max_diff <= 1e-9 else 'FAIL'}, limit 1e-9)")
    print(f"Retrieval per question on the pooled 876-table schema: median {statistics.median(retrieve_median):.0f} µs, "
          f"p99 {statistics.median(retrieve_p99):.0f} µs")
    result = {
        "date": dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds"),
        "machine": {"cpus": os.cpu_count(), "platform": platform.platform(), "python": platform.python_version()},
        "docs": len(docs), "queries": len(queries), "top_k": TOP, "runs": args.runs,
        "queries_per_s_median": med, "queries_per_s_runs": runs, "bm25s_backend": backend,
        "okapi_max_abs_diff": max_diff,
        "pooled_retrieval_us": {"median": statistics.median(retrieve_median), "p99": statistics.median(retrieve_p99)},
    }
    Path(args.output).parent.mkdir(parents=True, exist_ok=True)
    Path(args.output).write_text(json.dumps(result, indent=2))
    return 0 if max_diff <= 1e-9 else 1


if __name__ == "__main__":
    sys.exit(main())
