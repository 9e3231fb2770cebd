#!/usr/bin/env python3
"""Graph benchmark: schemascope-graph vs rustworkx and networkx on the same seeded graphs.

One command (from anywhere; paths are relative to the repository root):

    python3 bench/graph_bench.py [--runs 5] [--skip-build] [--only pagerank,betweenness,layout]

Graphs (generated once with networkx's seeded generators, written as edge lists to
bench/data/graph/, and read back by every engine, so all see the same node numbers and edge order):

  pagerank      gnm_random_graph(100_000, 500_000, seed=42, directed=True)
  betweenness   barabasi_albert_graph(5_000, 3, seed=42) and (25_000, 3, seed=42): undirected,
                average degree about 6
  layout        barabasi_albert_graph(10_000, 2, seed=42)

Measured (only the algorithm call; graph construction is outside the timer for every engine):

  PageRank      schemascope `pagerank` (networkx defaults: alpha 0.85, tol 1e-6, max_iter 100),
                rustworkx.pagerank, networkx.pagerank (scipy); again with tol 1e-12, where each
                engine runs more iterations. Values: max |diff| against networkx (target <= 1e-6).
  betweenness   exact, unweighted, normalised: schemascope `betweenness_centrality` (2 threads),
                rustworkx.betweenness_centrality (parallel_threshold=50, RAYON_NUM_THREADS=2).
                networkx on 5k only (--nx-betweenness-runs runs, default 1: it takes minutes);
                on 25k an estimate from k sampled sources scaled by n/k (--nx-sample-k, labelled).
  layout        iterations per second on 10k nodes: schemascope `layout::force_directed` in 2D
                and 3D (tolerance 0, so it never stops early), rustworkx.spring_layout (2D only;
                linear cooling, tol=-1 so it never stops early). Both are exact O(n^2) per iteration.

Every run is its own round: schemascope (a fresh process running the example
`graph_bench`, which times the call itself), then rustworkx, then networkx, so machine noise
falls on all alike. Medians of --runs rounds. Writes bench/data/last-graph-bench.json; exits 1
if a value check fails.
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

# rustworkx's parallel betweenness uses rayon, which reads this when rustworkx is first used.
os.environ.setdefault("RAYON_NUM_THREADS", "2")

ROOT = Path(__file__).resolve().parent.parent
DATA = ROOT / "bench" / "data" / "graph"
SEED = 42
PAGERANK_TOL_TIGHT = 1e-12
PAGERANK_TARGET_DIFF = 1e-6
BETWEENNESS_DIFF_LIMIT = 1e-9


def generate(name: str, make) -> Path:
    """Writes `make()`'s graph as `nodes edges directed` + one `u v` line per edge, once."""
    path = DATA / f"{name}.txt"
    if not path.exists():
        start = time.perf_counter()
        g = make()
        DATA.mkdir(parents=True, exist_ok=True)
        tmp = path.with_suffix(".tmp")
        with tmp.open("w") as f:
            f.write(f"{g.number_of_nodes()} {g.number_of_edges()} {int(g.is_directed())}\n")
            f.writelines(f"{u} {v}\n" for u, v in g.edges())
        tmp.rename(path)
        print(f"generated {path.relative_to(ROOT)} in {time.perf_counter() - start:.1f} s", file=sys.stderr)
    return path


def read_edges(path: Path):
    with path.open() as f:
        n, m, directed = map(int, f.readline().split())
        edges = [(int(a), int(b)) for a, b in (line.split()[:2] for line in f)]
    assert len(edges) == m, f"{path}: header says {m} edges, found {len(edges)}"
    return n, edges, bool(directed)


def nx_graph(n, edges, directed):
    import networkx as nx

    g = nx.DiGraph() if directed else nx.Graph()
    g.add_nodes_from(range(n))
    g.add_edges_from(edges)
    return g


def rx_graph(n, edges, directed):
    import rustworkx as rx

    g = rx.PyDiGraph() if directed else rx.PyGraph()
    g.add_nodes_from(range(n))
    g.add_edges_from_no_data(edges)
    return g


def binary() -> Path:
    target = Path(os.environ.get("CARGO_TARGET_DIR", ROOT / "target"))
    return target / "release" / "examples" / "graph_bench"


def run_ours(mode: str, graph: Path, *extra: str, values: Path | None = None) -> dict:
    cmd = [str(binary()), mode, "--graph", str(graph), "--runs", "1", *extra]
    if values is not None:
        cmd += ["--values", str(values)]
    out = subprocess.run(cmd, check=True, capture_output=True, text=True)
    return json.loads(out.stdout)


def timed(fn):
    start = time.perf_counter()
    result = fn()
    return time.perf_counter() - start, result


def max_diff(a, b) -> float:
    assert len(a) == len(b)
    return max((abs(float(x) - float(y)) for x, y in zip(a, b)), default=0.0)


def as_list(mapping, n):
    return [mapping[i] for i in range(n)]


class Task:
    """One benchmarked task: its times per engine and its value checks."""

    def __init__(self, key: str, label: str, nodes: int, edges: int, unit: str = "s"):
        self.key, self.label, self.nodes, self.edges, self.unit = key, label, nodes, edges, unit
        self.times: dict[str, list[float]] = {}
        self.notes: dict[str, str] = {}
        self.checks: list[dict] = []
        self.extra: dict = {}

    def add(self, engine: str, seconds: float):
        self.times.setdefault(engine, []).append(seconds)

    def median(self, engine: str):
        t = self.times.get(engine)
        return statistics.median(t) if t else None

    def check(self, what: str, diff: float, limit: float | None):
        ok = None if limit is None else diff <= limit
        self.checks.append({"what": what, "max_abs_diff": diff, "limit": limit, "ok": ok})

    def paired_ratio(self, engine: str):
        """Median over rounds of `engine / schemascope` within each round: steadier than the ratio
        of the medians when the machine's load drifts during the run."""
        pairs = list(zip(self.times.get(engine, []), self.times.get("schemascope", [])))
        return statistics.median(e / o for e, o in pairs) if pairs and not self.notes.get(engine, "").startswith("estimate") else None

    def to_json(self):
        return {
            "label": self.label, "nodes": self.nodes, "edges": self.edges,
            "seconds": self.times, "median_s": {e: self.median(e) for e in self.times},
            "paired_ratio_to_schemascope": {e: self.paired_ratio(e) for e in self.times if e != "schemascope"},
            "notes": self.notes, "checks": self.checks, **self.extra,
        }


def bench_pagerank(runs: int) -> list[Task]:
    import networkx as nx
    import rustworkx as rx

    path = generate("pagerank-gnm-100k-500k", lambda: nx.gnm_random_graph(100_000, 500_000, seed=SEED, directed=True))
    n, edges, directed = read_edges(path)
    g_nx, g_rx = nx_graph(n, edges, directed), rx_graph(n, edges, directed)
    tasks = []
    for tol, label in [(1e-6, "PageRank, networkx defaults (tol 1e-6)"), (PAGERANK_TOL_TIGHT, f"PageRank, tol {PAGERANK_TOL_TIGHT:g}")]:
        task = Task(f"pagerank_tol_{tol:g}", label, n, len(edges))
        max_iter = 100 if tol == 1e-6 else 1000
        values = DATA / f"schemascope-pagerank-tol{tol:g}.json"
        rx.pagerank(g_rx, tol=tol, max_iter=max_iter)  # warm-up (first-call allocations)
        nx_values = rx_values = None
        for r in range(runs):
            ours = run_ours("pagerank", path, "--warmup", "1", "--tol", repr(tol), "--max-iter", str(max_iter), values=values if r == 0 else None)
            task.add("schemascope", ours["median_s"])
            task.extra["schemascope_iterations"] = ours["pagerank_iterations"]
            t, res = timed(lambda: rx.pagerank(g_rx, tol=tol, max_iter=max_iter))
            task.add("rustworkx", t)
            rx_values = rx_values or as_list(res, n)
            t, res = timed(lambda: nx.pagerank(g_nx, tol=tol, max_iter=max_iter))
            task.add("networkx", t)
            nx_values = nx_values or as_list(res, n)
            progress(task)
        ours_values = json.loads(values.read_text())
        task.check("schemascope vs networkx", max_diff(ours_values, nx_values), PAGERANK_TARGET_DIFF)
        task.check("rustworkx vs networkx", max_diff(rx_values, nx_values), None)
        task.check("schemascope vs rustworkx", max_diff(ours_values, rx_values), None)
        tasks.append(task)
    return tasks


def bench_betweenness(runs: int, nx_runs: int, nx_sample_k: int) -> list[Task]:
    import networkx as nx
    import rustworkx as rx

    tasks = []
    for nodes in (5_000, 25_000):
        path = generate(f"betweenness-ba-{nodes // 1000}k-m3", lambda: nx.barabasi_albert_graph(nodes, 3, seed=SEED))
        n, edges, directed = read_edges(path)
        g_nx, g_rx = nx_graph(n, edges, directed), rx_graph(n, edges, directed)
        task = Task(f"betweenness_{nodes // 1000}k", f"betweenness, exact, {nodes // 1000}k nodes, 2 threads", n, len(edges))
        values = DATA / f"schemascope-betweenness-{nodes // 1000}k.json"
        rx_values = nx_values = None
        for r in range(runs):
            ours = run_ours("betweenness", path, values=values if r == 0 else None)
            task.add("schemascope", ours["median_s"])
            t, res = timed(lambda: rx.betweenness_centrality(g_rx, normalized=True, parallel_threshold=50))
            task.add("rustworkx", t)
            rx_values = rx_values or as_list(res, n)
            if nodes == 5_000 and r < nx_runs:
                t, res = timed(lambda: nx.betweenness_centrality(g_nx, normalized=True))
                task.add("networkx", t)
                nx_values = nx_values or as_list(res, n)
            progress(task)
        if nodes == 5_000:
            task.notes["networkx"] = f"{len(task.times.get('networkx', []))} run(s)"
        elif nx_sample_k > 0:
            t, _ = timed(lambda: nx.betweenness_centrality(g_nx, k=nx_sample_k, normalized=True, seed=SEED))
            task.add("networkx", t * n / nx_sample_k)
            task.notes["networkx"] = f"estimate: {nx_sample_k} sampled sources took {t:.1f} s, scaled x{n / nx_sample_k:g}; one run"
            progress(task)
        else:
            task.notes["networkx"] = "skipped (hours)"
        ours_values = json.loads(values.read_text())
        task.check("schemascope vs rustworkx", max_diff(ours_values, rx_values), BETWEENNESS_DIFF_LIMIT)
        if nx_values is not None:
            task.check("schemascope vs networkx", max_diff(ours_values, nx_values), BETWEENNESS_DIFF_LIMIT)
            task.check("rustworkx vs networkx", max_diff(rx_values, nx_values), None)
        tasks.append(task)
    return tasks


def bench_layout(runs: int, iterations: int) -> list[Task]:
    import networkx as nx
    import rustworkx as rx

    path = generate("layout-ba-10k-m2", lambda: nx.barabasi_albert_graph(10_000, 2, seed=SEED))
    n, edges, directed = read_edges(path)
    g_rx = rx_graph(n, edges, directed)
    tasks = []
    for dims in (2, 3):
        task = Task(f"layout_{dims}d", f"force layout {dims}D, {iterations} iterations", n, len(edges), unit="it/s")
        for _ in range(runs):
            extra = ["--iterations", str(iterations)] + (["--three-d"] if dims == 3 else [])
            ours = run_ours("layout", path, *extra)
            task.add("schemascope", ours["median_s"])
            if dims == 2:
                t, _ = timed(lambda: rx.spring_layout(g_rx, num_iter=iterations, tol=-1.0, adaptive_cooling=False, seed=SEED))
                task.add("rustworkx", t)
            progress(task)
        if dims == 3:
            task.notes["rustworkx"] = "no 3D spring layout"
        task.extra["iterations"] = iterations
        tasks.append(task)
    return tasks


def progress(task: Task):
    last = ", ".join(f"{e} {v[-1]:.4g} s" for e, v in task.times.items())
    print(f"  {task.label}: round {len(task.times['schemascope'])}: {last}", file=sys.stderr)


def fmt_time(seconds):
    if seconds is None:
        return "—"
    return f"{seconds * 1e3:.1f} ms" if seconds < 1 else f"{seconds:.2f} s"


def report(tasks: list[Task], runs: int) -> bool:
    print(f"\nGraph benchmark, medians of {runs} rounds (schemascope / rustworkx / networkx)\n")
    print(f"{'task':<46} {'nodes':>7} {'edges':>8} {'schemascope':>12} {'rustworkx':>11} {'networkx':>11} {'rx/ours':>8} {'nx/ours':>8}")
    for t in tasks:
        ours, rxm, nxm = t.median("schemascope"), t.median("rustworkx"), t.median("networkx")
        if t.unit == "it/s":
            it = t.extra["iterations"]
            cells = [f"{it / v:.2f} it/s" if v else "—" for v in (ours, rxm, nxm)]
        else:
            cells = [fmt_time(v) for v in (ours, rxm, nxm)]
        ratios = [f"{v / ours:.1f}x" if v and ours else "—" for v in (rxm, nxm)]
        print(f"{t.label:<46} {t.nodes:>7,} {t.edges:>8,} {cells[0]:>12} {cells[1]:>11} {cells[2]:>11} {ratios[0]:>8} {ratios[1]:>8}")
    notes = [(t.label, e, note) for t in tasks for e, note in t.notes.items()]
    if notes:
        print()
        for label, engine, note in notes:
            print(f"  {label}, {engine}: {note}")
    print("\nValues:")
    ok = True
    for t in tasks:
        for c in t.checks:
            verdict = "" if c["ok"] is None else (" OK" if c["ok"] else " FAIL") + f" (limit {c['limit']:g})"
            ok &= c["ok"] is not False
            print(f"  {t.label}: {c['what']}: max |diff| = {c['max_abs_diff']:.3g}{verdict}")
    print("\nTargets:")
    for t in tasks:
        ours, rxm = t.median("schemascope"), t.median("rustworkx")
        if t.key.startswith(("pagerank_tol_1e-06", "betweenness")) and ours and rxm:
            met = "met" if ours <= rxm else "NOT met"
            paired = t.paired_ratio("rustworkx")
            print(f"  {t.label}: schemascope {fmt_time(ours)} <= rustworkx {fmt_time(rxm)}: {met} "
                  f"({rxm / ours:.1f}x; median of per-round ratios {paired:.1f}x)")
    return ok


def versions() -> dict:
    import networkx as nx
    import numpy
    import rustworkx as rx
    import scipy

    rustc = subprocess.run(["rustc", "--version"], capture_output=True, text=True).stdout.strip()
    model = next((line.split(":", 1)[1].strip() for line in Path("/proc/cpuinfo").read_text().splitlines() if line.startswith("model name")), platform.processor())
    return {
        "networkx": nx.__version__, "rustworkx": rx.__version__, "scipy": scipy.__version__, "numpy": numpy.__version__,
        "python": platform.python_version(), "rustc": rustc, "cpus": os.cpu_count(), "cpu_model": model,
        "rayon_threads": os.environ.get("RAYON_NUM_THREADS"),
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=5, help="rounds; medians are reported (default 5)")
    parser.add_argument("--only", default="pagerank,betweenness,layout", help="comma-separated subset of pagerank,betweenness,layout")
    parser.add_argument("--skip-build", action="store_true", help="use the already built example")
    parser.add_argument("--nx-betweenness-runs", type=int, default=1, help="networkx betweenness runs on 5k nodes (about 3 min each; default 1)")
    parser.add_argument("--nx-sample-k", type=int, default=100, help="networkx betweenness estimate on 25k from k sampled sources (0: skip)")
    parser.add_argument("--layout-iterations", type=int, default=10, help="force-layout iterations per run (default 10)")
    parser.add_argument("--output", default=str(ROOT / "bench" / "data" / "last-graph-bench.json"))
    args = parser.parse_args()
    only = set(args.only.split(","))

    if not args.skip_build:
        subprocess.run(["cargo", "build", "--release", "-q", "-p", "schemascope-graph", "--examples"], cwd=ROOT, check=True)
    if not binary().exists():
        print(f"missing {binary()}: build it or drop --skip-build", file=sys.stderr)
        return 2

    started = dt.datetime.now(dt.timezone.utc)
    tasks: list[Task] = []
    if "pagerank" in only:
        tasks += bench_pagerank(args.runs)
    if "betweenness" in only:
        tasks += bench_betweenness(args.runs, args.nx_betweenness_runs, args.nx_sample_k)
    if "layout" in only:
        tasks += bench_layout(args.runs, args.layout_iterations)
    ok = report(tasks, args.runs)
    info = versions()
    print(f"\n{info['cpus']} CPUs ({info['cpu_model']}), networkx {info['networkx']}, rustworkx {info['rustworkx']}, "
          f"scipy {info['scipy']}, {info['rustc']}, RAYON_NUM_THREADS={info['rayon_threads']}, {started.isoformat(timespec='seconds')}")
    result = {
        "date": started.isoformat(timespec="seconds"),
        "seconds_total": (dt.datetime.now(dt.timezone.utc) - started).total_seconds(),
        "runs": args.runs, "machine_and_versions": info, "load_average": os.getloadavg(),
        "tasks": {t.key: t.to_json() for t in tasks},
    }
    Path(args.output).parent.mkdir(parents=True, exist_ok=True)
    Path(args.output).write_text(json.dumps(result, indent=2))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
