#!/usr/bin/env python3
"""Graph tools end to end: `run_algorithm` through `schemascope serve` vs rustworkx, networkit, igraph.

One command (from anywhere; paths are relative to the repository root):

    python3 bench/graph_e2e_bench.py [--runs 5] [--skip-build]

The graph: networkx `gnm_random_graph(100_000, 500_000, seed=42, directed=True)` written once as a
node-link file (`{"directed": true, "nodes": [{"id": 0, "group": "g7"}, ...], "edges": [{"source":
0, "target": 17}, ...]}`, about 21 MB, bench/data/graph/e2e-gnm-100k-500k.json): the format
`schemascope serve` reads for graphs. Every peer builds its graph from the same file's edges.

Measured, in this order:

  load      `schemascope serve --http` (the release binary) started on the file: seconds until
            `list_sources` reports the graph loaded; then the first graph tool call (`query_graph`,
            which opens the graph's session: its layout), timed separately. RSS from /proc: the
            server's after load (and after the session opened) minus an idle server's (the same
            binary serving a two-node graph), and its peak (VmHWM) at the end of the run.
  calls     each round calls, through `POST /v1/tools/run_algorithm` (the HTTP API; one keep-alive
            connection), PageRank (networkx defaults), components (weak and strong: the graph is
            directed) and Louvain (undirected, seed 42), each interleaved with its peers on the
            same graph in the same process round:
              PageRank    rustworkx.pagerank (tol 1e-6, max_iter 100)
              components  rustworkx.weakly_connected_components + strongly_connected_components
              Louvain     schemascope's default (refined) method against networkit PLM
                          (refine=True, default threads) and igraph
                          community_multilevel, on the undirected simple graph (duplicates merged,
                          as schemascope's undirected view and networkx's Graph merge them)
            The peers' times are the algorithm call only (graph construction outside the timer);
            schemascope's are the whole HTTP call: request, session, algorithm, results stored and
            served, answer. A call's overhead is its end-to-end time minus the `durationMs` it
            reports.

Prints medians of --runs rounds, the ratios (schemascope end to end / peer), the overhead, the
modularities and peak memory; writes bench/data/last-graph-e2e-bench.json.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import platform
import random
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

# networkit's OpenMP threads otherwise spin after each call, taking the CPUs from whatever runs
# next (the server, igraph): set before networkit is imported.
os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")

ROOT = Path(__file__).resolve().parent.parent
DATA = ROOT / "bench" / "data" / "graph"
SEED = 42
NODES, EDGES = 100_000, 500_000
GROUPS = 12


def generate() -> Path:
    """The node-link file, once (a tenth of the nodes carry no `group`, as real data has gaps)."""
    path = DATA / "e2e-gnm-100k-500k.json"
    if path.exists():
        return path
    import networkx as nx

    start = time.perf_counter()
    g = nx.gnm_random_graph(NODES, EDGES, seed=SEED, directed=True)
    rng = random.Random(SEED)
    nodes = [{"id": n, "group": f"g{rng.randrange(GROUPS)}"} if rng.random() > 0.1 else {"id": n} for n in g.nodes()]
    edges = [{"source": u, "target": v} for u, v in g.edges()]
    DATA.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".tmp")
    tmp.write_text(json.dumps({"directed": True, "multigraph": False, "graph": {}, "nodes": nodes, "edges": edges}))
    tmp.rename(path)
    print(f"generated {path.relative_to(ROOT)} ({path.stat().st_size / 1e6:.1f} MB) in {time.perf_counter() - start:.1f} s", file=sys.stderr)
    return path


def read_edges(path: Path):
    doc = json.loads(path.read_text())
    ids = [n["id"] for n in doc["nodes"]]
    index = {v: i for i, v in enumerate(ids)}
    edges = [(index[e["source"]], index[e["target"]]) for e in doc["edges"]]
    return len(ids), edges


def binary(explicit: str | None) -> Path:
    if explicit:
        return Path(explicit)
    target = Path(os.environ.get("CARGO_TARGET_DIR", ROOT / "target"))
    return target / "release" / "schemascope"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def rss_kb(pid: int, field: str = "VmRSS") -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1])
    return 0


class Server:
    """`schemascope serve --http` on one file, called through the HTTP API."""

    def __init__(self, exe: Path, graph: Path, workdir: Path):
        import requests

        self.port = free_port()
        self.base = f"http://127.0.0.1:{self.port}"
        self.http = requests.Session()
        session_file = workdir / f"sessions-{self.port}.sqlite"
        self.started = time.perf_counter()
        self.proc = subprocess.Popen(
            [str(exe), "serve", "--http", f"127.0.0.1:{self.port}", "--no-watch", "--request-timeout", "600", "--session-file", str(session_file), str(graph)],
            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
        )

    def call(self, tool: str, args: dict, timeout: float = 600) -> tuple[float, dict]:
        start = time.perf_counter()
        response = self.http.post(f"{self.base}/v1/tools/{tool}", json=args, timeout=timeout)
        body = response.content
        elapsed = time.perf_counter() - start
        return elapsed, json.loads(body)

    def wait_loaded(self, timeout: float = 300) -> float:
        """Seconds from start until list_sources lists the graph with its nodes loaded."""
        import requests

        deadline = time.perf_counter() + timeout
        while time.perf_counter() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"server exited: {self.proc.stderr.read()}")
            try:
                _, answer = self.call("list_sources", {}, timeout=30)
                sources = answer.get("data", {}).get("sources", [])
                if sources and all(s.get("collections") for s in sources):
                    return time.perf_counter() - self.started
            except requests.ConnectionError:
                pass
            time.sleep(0.01)
        raise RuntimeError("the server did not load the graph in time")

    def stop(self):
        self.proc.terminate()
        try:
            self.proc.wait(10)
        except subprocess.TimeoutExpired:
            self.proc.kill()


def timed(fn):
    start = time.perf_counter()
    result = fn()
    return time.perf_counter() - start, result


def median(values):
    return statistics.median(values) if values else None


def ms(seconds):
    return "—" if seconds is None else f"{seconds * 1e3:.1f} ms"


def versions() -> dict:
    import igraph
    import networkit
    import rustworkx

    model = next((line.split(":", 1)[1].strip() for line in Path("/proc/cpuinfo").read_text().splitlines() if line.startswith("model name")), platform.processor())
    return {"rustworkx": rustworkx.__version__, "networkit": networkit.__version__, "igraph": igraph.__version__,
            "python": platform.python_version(), "cpus": os.cpu_count(), "cpu_model": model}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=5, help="rounds; medians are reported (default 5)")
    parser.add_argument("--skip-build", action="store_true", help="use the already built release binary")
    parser.add_argument("--schemascope", help="the binary (default: release/schemascope under $CARGO_TARGET_DIR or target/)")
    parser.add_argument("--skip-igraph", action="store_true", help="leave igraph out of the Louvain peers (about 2 minutes a round)")
    parser.add_argument("--output", default=str(ROOT / "bench" / "data" / "last-graph-e2e-bench.json"))
    args = parser.parse_args()

    if not args.skip_build and not args.schemascope:
        subprocess.run(["cargo", "build", "--release", "-q", "-p", "schemascope"], cwd=ROOT, check=True)
    exe = binary(args.schemascope)
    if not exe.exists():
        print(f"missing {exe}: build it (cargo build --release -p schemascope) or pass --schemascope", file=sys.stderr)
        return 2

    import igraph as ig
    import networkit as nk
    import rustworkx as rx

    path = generate()
    file_mb = path.stat().st_size / 1e6
    started_at = dt.datetime.now(dt.timezone.utc)
    load_start = os.getloadavg()
    workdir = Path(tempfile.mkdtemp(prefix="graph-e2e-"))

    # An idle server: the same binary serving a two-node graph, its session opened.
    tiny = workdir / "tiny.json"
    tiny.write_text(json.dumps({"directed": True, "nodes": [{"id": 0}, {"id": 1}], "edges": [{"source": 0, "target": 1}]}))
    idle = Server(exe, tiny, workdir)
    idle.wait_loaded()
    idle.call("query_graph", {})
    time.sleep(0.5)
    idle_rss = rss_kb(idle.proc.pid)
    idle.stop()

    # Warm the page cache so the load times the server, not the disk.
    path.read_bytes()
    server = Server(exe, path, workdir)
    load_s = server.wait_loaded()
    time.sleep(0.3)
    rss_loaded = rss_kb(server.proc.pid)
    open_s, answer = server.call("query_graph", {})
    if not answer.get("success"):
        print(f"query_graph failed: {answer.get('message')}", file=sys.stderr)
        return 1
    time.sleep(0.3)
    rss_open = rss_kb(server.proc.pid)
    print(f"loaded in {load_s:.2f} s (session opened by the first graph call in {open_s:.2f} s); "
          f"RSS {rss_loaded / 1024:.0f} MB after load, {rss_open / 1024:.0f} MB with the session, idle server {idle_rss / 1024:.0f} MB", file=sys.stderr)

    # Peers' graphs, built outside every timer.
    n, edges = read_edges(path)
    g_rx = rx.PyDiGraph()
    g_rx.add_nodes_from(range(n))
    g_rx.add_edges_from_no_data(edges)
    undirected = sorted({(min(u, v), max(u, v)) for u, v in edges})
    g_nk = nk.graph.Graph(n, weighted=False, directed=False)
    for u, v in undirected:
        g_nk.addEdge(u, v)
    g_ig = ig.Graph(n=n, edges=undirected, directed=False)
    rx.pagerank(g_rx)  # warm-up (first-call allocations)

    tasks = {
        "pagerank": {"call": {"type": "pagerank"}, "peers": {
            "rustworkx": lambda: rx.pagerank(g_rx, alpha=0.85, tol=1e-6, max_iter=100)}},
        "components": {"call": {"type": "components"}, "peers": {
            "rustworkx": lambda: (rx.weakly_connected_components(g_rx), rx.strongly_connected_components(g_rx))}},
        "louvain": {"call": {"type": "louvain", "options": {"directed": False, "seed": SEED}}, "peers": {
            "networkit": lambda: nk.community.PLM(g_nk, True).run().getPartition(),
            "igraph": lambda: g_ig.community_multilevel()}},
    }
    if args.skip_igraph:
        del tasks["louvain"]["peers"]["igraph"]
    times: dict[str, dict[str, list[float]]] = {k: {} for k in tasks}
    duration: dict[str, list[float]] = {k: [] for k in tasks}
    modularity: dict[str, list[float]] = {"schemascope": [], "networkit": [], "igraph": []}
    for r in range(args.runs):
        for key, task in tasks.items():
            t, answer = server.call("run_algorithm", task["call"])
            if not answer.get("success"):
                print(f"run_algorithm {key} failed: {answer.get('message')}", file=sys.stderr)
                return 1
            times[key].setdefault("schemascope", []).append(t)
            duration[key].append(answer["data"]["durationMs"] / 1e3)
            if key == "louvain":
                modularity["schemascope"].append(answer["data"]["graphResults"]["modularity"])
            for peer, fn in task["peers"].items():
                t, result = timed(fn)
                times[key].setdefault(peer, []).append(t)
                if peer == "networkit":
                    modularity["networkit"].append(nk.community.Modularity().getQuality(result, g_nk))
                elif peer == "igraph":
                    modularity["igraph"].append(result.modularity)
            print(f"  round {r + 1} {key}: " + ", ".join(f"{p} {ms(v[-1])}" for p, v in times[key].items())
                  + f" (durationMs {duration[key][-1] * 1e3:.1f})", file=sys.stderr)
    peak_kb = rss_kb(server.proc.pid, "VmHWM")
    rss_end = rss_kb(server.proc.pid)
    server.stop()
    load_end = os.getloadavg()

    print(f"\nGraph tools end to end: gnm {n:,} nodes / {len(edges):,} edges, {file_mb:.1f} MB node-link file, medians of {args.runs} rounds\n")
    print(f"{'algorithm':<11} {'schemascope call':>17} {'durationMs':>11} {'overhead':>9}   peers (algorithm only), ratio schemascope / peer")
    ratios = {}
    for key in tasks:
        ours = median(times[key]["schemascope"])
        inside = median(duration[key])
        overhead = median([a - b for a, b in zip(times[key]["schemascope"], duration[key])])
        peers = []
        for peer in tasks[key]["peers"]:
            theirs = median(times[key][peer])
            ratios[f"{key}/{peer}"] = ours / theirs
            peers.append(f"{peer} {ms(theirs)} ({ours / theirs:.2f}x)")
        print(f"{key:<11} {ms(ours):>17} {ms(inside):>11} {ms(overhead):>9}   " + ", ".join(peers))
    print(f"\nLouvain modularity (median): schemascope {median(modularity['schemascope']):.4f}, "
          f"networkit PLM {median(modularity['networkit']):.4f}"
          + (f", igraph {median(modularity['igraph']):.4f}" if modularity["igraph"] else ""))
    at_least = sum(ours >= theirs for ours, theirs in zip(modularity["schemascope"], modularity["networkit"]))
    print(f"Louvain modularity >= networkit's in {at_least} of {args.runs} rounds (same round)")
    held_mb = (rss_loaded - idle_rss) / 1024
    print(f"Load: {load_s:.2f} s to serve the graph, first graph call (session opened) {open_s:.2f} s")
    print(f"Memory: held after load {held_mb:.0f} MB = {held_mb / file_mb * 1e6 / 2**20:.1f}x the file "
          f"(RSS {rss_loaded / 1024:.0f} MB - idle {idle_rss / 1024:.0f} MB); with the session {(rss_open - idle_rss) / 1024:.0f} MB; "
          f"after the calls {(rss_end - idle_rss) / 1024:.0f} MB; peak RSS {peak_kb / 1024:.0f} MB")
    info = versions()
    print(f"\n{info['cpus']} CPUs ({info['cpu_model']}), rustworkx {info['rustworkx']}, networkit {info['networkit']}, "
          f"igraph {info['igraph']}, load average {load_start[0]:.2f} at start, {load_end[0]:.2f} at end, {started_at.isoformat(timespec='seconds')}")
    result = {
        "date": started_at.isoformat(timespec="seconds"), "runs": args.runs, "machine_and_versions": info,
        "load_average_start": load_start, "load_average_end": load_end, "file_mb": file_mb,
        "load_s": load_s, "first_graph_call_s": open_s, "idle_rss_kb": idle_rss, "rss_loaded_kb": rss_loaded,
        "rss_session_kb": rss_open, "rss_end_kb": rss_end, "peak_rss_kb": peak_kb,
        "seconds": times, "duration_ms_reported_s": duration, "modularity": modularity, "ratios": ratios,
    }
    Path(args.output).parent.mkdir(parents=True, exist_ok=True)
    Path(args.output).write_text(json.dumps(result, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
