#!/usr/bin/env python3
"""Scale benchmark (issue 19): schemascope's streamed profile vs DuckDB SUMMARIZE as the file grows.

One command (from anywhere; paths are relative to the repository root):

    python3 bench/scale_bench.py [--records 1000000,10000000,100000000] [--runs 3]
                                 [--delete-from 100000000] [--schemascope PATH]

For each size it generates bench/data/anchor-N.ndjson with the gen_anchor example (about 278
bytes a record: id, name, category, price, qty, active, score, tags[], meta{source, version,
geo{lat, lon}}, created, discount?, note?), reads it once into the page cache when it fits in
memory, then times R interleaved rounds of, each a separate subprocess (wall clock and peak RSS
from /usr/bin/time):

  schemascope  <bin> profile FILE          (streamed, default memory budget 1 GiB)
  duckdb       SUMMARIZE SELECT * FROM read_json(FILE, format='newline_delimited'), threads=2

and prints medians, the ratio duckdb/schemascope and both peak RSS figures, then writes
bench/data/last-scale-bench.json. Files of at least --delete-from records are deleted after
their runs (100M records are 28 GB).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
from pathlib import Path

BENCH_DIR = Path(__file__).resolve().parent
sys.path.insert(0, str(BENCH_DIR))

import profile_bench as pb  # noqa: E402  (shared measuring helpers)

REPO_ROOT = BENCH_DIR.parent
DATA_DIR = BENCH_DIR / "data"
TARGET_RATIO = 2.0
TARGET_RSS_MB = 1536


def generator() -> Path:
    tgt = os.environ.get("CARGO_TARGET_DIR")
    base = Path(tgt) if tgt else REPO_ROOT / "target"
    exe = base / "release" / "examples" / "gen_anchor"
    if not exe.is_file():
        subprocess.run(["cargo", "build", "--release", "-p", "schemascope-sources", "--example",
                        "gen_anchor"], cwd=REPO_ROOT, check=True)
    return exe


def ensure_anchor(n: int) -> Path:
    path = DATA_DIR / f"anchor-{n}.ndjson"
    if not path.exists():
        DATA_DIR.mkdir(parents=True, exist_ok=True)
        print(f"generating {path.relative_to(REPO_ROOT)} ({n:,} records) ...", flush=True)
        tmp = path.with_suffix(".tmp")
        subprocess.run([str(generator()), str(n), str(tmp)], check=True)
        os.replace(tmp, path)
    return path


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--records", default="1000000,10000000,100000000")
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--runs-from-100m", type=int, default=1, help="runs for files of 100M records or more")
    ap.add_argument("--delete-from", type=int, default=100_000_000)
    ap.add_argument("--schemascope", type=Path, default=None)
    ap.add_argument("--duckdb-threads", type=int, default=2)
    ap.add_argument("--timeout", type=float, default=3600)
    ap.add_argument("--output", type=Path, default=DATA_DIR / "last-scale-bench.json")
    args = ap.parse_args()
    binary = args.schemascope or pb.default_schemascope()
    if not binary.is_file():
        print(f"schemascope binary not found: {binary} (cargo build --release)", file=sys.stderr)
        return 2
    use_time = pb.have_gnu_time()
    machine = pb.machine_facts()
    results = []
    failed = False
    for n in [int(x) for x in args.records.split(",") if x]:
        path = ensure_anchor(n)
        size = path.stat().st_size
        if size < (machine.get("mem_total_gb") or 0) * 0.5 * 2**30:
            pb.warm_cache(path)
        runs = args.runs if n < 100_000_000 else args.runs_from_100m
        rows = {"schemascope": [], "duckdb": []}
        out = DATA_DIR / f"scale-profile-{n}.json"
        for _ in range(runs):
            for tool in ("schemascope", "duckdb"):
                if tool == "schemascope":
                    cmd = [str(binary), "profile", str(path)]
                    r = pb.measure(cmd, out, use_time, args.timeout)
                else:
                    cmd = [sys.executable, "-c", pb.DUCKDB_SCRIPT, str(path), str(args.duckdb_threads)]
                    r = pb.measure(cmd, None, use_time, args.timeout)
                if r.returncode != 0:
                    print(f"{tool} failed on {n:,} records (exit {r.returncode}): {r.stderr_tail}", file=sys.stderr)
                    failed = True
                rows[tool].append({"seconds": r.seconds, "rss_mb": (r.rss_kb or 0) / 1024})
                print(f"  {n:>12,} {tool:<12} {r.seconds:8.2f} s  {(r.rss_kb or 0) / 1024:8.0f} MB", flush=True)
        summary = {"records": n, "bytes": size}
        for tool, rs in rows.items():
            summary[tool] = {
                "median_s": statistics.median(x["seconds"] for x in rs),
                "min_s": min(x["seconds"] for x in rs),
                "max_s": max(x["seconds"] for x in rs),
                "peak_rss_mb": max(x["rss_mb"] for x in rs),
                "runs": rs,
            }
        summary["ratio"] = summary["duckdb"]["median_s"] / summary["schemascope"]["median_s"]
        try:
            report = json.loads(out.read_text())
            summary["approximate_properties"] = sum(
                1 for c in report["data"]["collections"] for p in c["properties"] if not p.get("exact", True))
        except (OSError, ValueError, KeyError, TypeError):
            summary["approximate_properties"] = None
        results.append(summary)
        if n >= args.delete_from:
            path.unlink(missing_ok=True)
            print(f"deleted {path.relative_to(REPO_ROOT)}")
    print()
    print("| records | size | schemascope s | DuckDB s | DuckDB / schemascope | schemascope peak RSS | DuckDB peak RSS | approximate properties |")
    print("|---|---|---|---|---|---|---|---|")
    for s in results:
        print(f"| {s['records']:,} | {s['bytes'] / 2**30:.1f} GiB | {s['schemascope']['median_s']:.2f} | "
              f"{s['duckdb']['median_s']:.2f} | **{s['ratio']:.2f}×** | {s['schemascope']['peak_rss_mb']:.0f} MB | "
              f"{s['duckdb']['peak_rss_mb']:.0f} MB | {s['approximate_properties']} |")
    print(f"\ntargets: ratio ≥ {TARGET_RATIO}× (1M, 10M), schemascope peak RSS ≤ {TARGET_RSS_MB} MB (10M, 100M)")
    print(json.dumps(machine))
    args.output.parent.mkdir(parents=True, exist_ok=True)
    args.output.write_text(json.dumps({"machine": machine, "binary": str(binary), "results": results}, indent=2))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
