#!/usr/bin/env python3
"""The graph web view in a real browser: first frame, frame time while panning and memory on a
100k-node / 200k-edge graph, schemascope's page against sigma.js (WebGL, with graphology) drawing
the same scene.

One command (from anywhere; paths are relative to the repository root):

    python3 bench/graph_view_bench.py [--runs 3] [--nodes 100000] [--edges 200000]

Needs the release binary (`cargo build --release -p schemascope`), chromium and chromedriver
(Debian packages), networkx (bench/requirements-graph.txt) and npm (sigma 3.0.3 and graphology
0.26.0 are fetched from the npm registry into ~/.cache/schemascope-bench/npm).

- **Graph**: networkx `gnm_random_graph(nodes, edges, seed=7)`, undirected, as a node-link file,
  each node with a `name` and one of 12 `group`s; served by `schemascope serve --http`, laid out
  (`set_layout random`: a force layout of 100k nodes is not what is measured) and coloured by
  `group` (`color_by`) before the page is opened.
- **schemascope**: the page at `/`, in a fresh headless Chromium each run: *first frame* is the
  time from navigation to the end of the first drawn frame (`performance.now()`, so fetching the
  scene from the server and building it are included; neither page waits for the GPU process
  to rasterise it); *frame while panning* is the time to draw one frame after the camera moved
  a little, until a pixel read back shows it is drawn (median of 20, `--frames`); *memory* is the
  page's JS heap and the whole browser's RSS (every Chromium process) after the first frame.
- **sigma.js**: a page that reads the same scene (node positions, colours, sizes, labels and
  edges, fetched once from the server and written beside the page as a script), builds the
  graphology graph and renders it with sigma; measured the same way (first frame after the
  renderer is built, pan through sigma's camera).
- No GPU here: sigma's WebGL runs on SwiftShader in Chromium's GPU process
  (`--use-angle=swiftshader`); schemascope's canvas page runs with `--disable-gpu`, as the
  browser tests run it, so its canvas is rasterised in the page's own process
  (`--canvas-on-gpu` puts it on SwiftShader too, where the figure depends on when Chromium
  moves a canvas read back often to the CPU). Both share the 2 vCPUs with the server.

Prints medians of --runs runs and writes bench/data/last-graph-view-bench.json.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tarfile
import tempfile
import time
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests" / "e2e"))
sys.path.insert(0, str(ROOT / "bench"))

from graph_e2e_bench import Server  # noqa: E402  (the same server wrapper as the graph bench)
from web_view import WebDriver  # noqa: E402  (W3C WebDriver over urllib)

NPM_CACHE = Path.home() / ".cache" / "schemascope-bench" / "npm"
SIGMA = ("sigma", "3.0.3", "package/dist/sigma.min.js")
GRAPHOLOGY = ("graphology", "0.26.0", "package/dist/graphology.umd.min.js")
PAN_FRAMES = 20

SIGMA_PAGE = """<!doctype html>
<html><head><meta charset="utf-8"><style>html, body { margin: 0; height: 100%; background: #15181d; } #c { position: absolute; inset: 0; }</style></head>
<body><div id="c"></div>
<script src="graphology.umd.min.js"></script>
<script src="sigma.min.js"></script>
<script src="scene.js"></script>
<script>
const graph = new graphology.MultiGraph();
for (const n of SCENE.nodes) {
  const style = SCENE.nodeStyles[n.s];
  graph.addNode(n.id, { x: n.p[0], y: n.p[1], size: 2 * style.size, color: style.color, label: n.l });
}
SCENE.edges.forEach((e) => {
  const style = SCENE.edgeStyles[e.s];
  graph.addEdge(SCENE.nodes[e.a].id, SCENE.nodes[e.b].id, { color: style.color, size: style.width });
});
window.renderer = new Sigma(graph, document.getElementById("c"), { renderLabels: true });
window.renderer.refresh({ schedule: false });
window.firstFrameAt = performance.now();
// Pans `frames` times, rendering each frame at once and reading a pixel back, which waits for
// the GPU (here SwiftShader) to finish it: each frame's time in ms.
window.benchPan = (frames) => {
  const camera = window.renderer.getCamera(), times = [];
  const contexts = Object.values(window.renderer.webGLContexts);
  for (let i = 0; i < frames; i++) {
    const s = camera.getState();
    camera.setState({ x: s.x + (i % 2 ? 0.002 : -0.002), y: s.y + 0.001 });
    const t = performance.now();
    window.renderer.render();
    for (const gl of contexts) gl.readPixels(0, 0, 1, 1, gl.RGBA, gl.UNSIGNED_BYTE, new Uint8Array(4));
    times.push(performance.now() - t);
  }
  return times;
};
</script></body></html>
"""


def chromium_driver(chromedriver: str, chromium: str, webgl: bool) -> WebDriver:
    """A WebDriver whose Chromium gives precise heap figures and, with `webgl`, has WebGL
    (SwiftShader in the GPU process); without, it rasterises in the page's process, as the
    browser tests run it."""
    import web_view

    original = web_view.WebDriver.request

    def request(self, method, path, body=None, timeout=60):
        if path == "/session" and body:
            args = body["capabilities"]["alwaysMatch"]["goog:chromeOptions"]["args"]
            args.append("--enable-precise-memory-info")
            if webgl:
                args[:] = [a for a in args if a != "--disable-gpu"] + [
                    "--use-angle=swiftshader", "--enable-unsafe-swiftshader"]
        return original(self, method, path, body, timeout)

    web_view.WebDriver.request = request
    try:
        driver = WebDriver(chromedriver, chromium)
    finally:
        web_view.WebDriver.request = original
    # A frame of 200k edges can take seconds: scripts may run for 10 minutes.
    driver.request("POST", "/timeouts", {"script": 600_000, "pageLoad": 600_000})
    return driver


def browser_rss_mb(driver: WebDriver) -> float:
    """The RSS of chromedriver's Chromium: every process under it."""
    out = subprocess.run(["ps", "-e", "-o", "pid=,ppid=,rss="], capture_output=True, text=True, check=True).stdout
    children: dict[int, list[int]] = {}
    rss: dict[int, int] = {}
    for line in out.splitlines():
        pid, ppid, kb = (int(x) for x in line.split())
        children.setdefault(ppid, []).append(pid)
        rss[pid] = kb
    total, stack = 0, list(children.get(driver.process.pid, []))
    while stack:
        pid = stack.pop()
        total += rss.get(pid, 0)
        stack.extend(children.get(pid, []))
    return total / 1024


def run_script(driver: WebDriver, script: str, *args) -> object:
    return driver.request("POST", "/execute/sync", {"script": script, "args": list(args)}, timeout=1800)


def npm_file(name: str, version: str, member: str) -> Path:
    """`member` of the npm package `name@version`, fetched once with `npm pack`."""
    target = NPM_CACHE / f"{name}-{version}" / Path(member).name
    if not target.exists():
        target.parent.mkdir(parents=True, exist_ok=True)
        subprocess.run(["npm", "pack", f"{name}@{version}", "--silent"], cwd=target.parent, check=True,
                       stdout=subprocess.DEVNULL)
        with tarfile.open(target.parent / f"{name}-{version}.tgz") as tar:
            extracted = tar.extractfile(member)
            if extracted is None:
                raise RuntimeError(f"{name}@{version} has no {member}")
            target.write_bytes(extracted.read())
    return target


def make_graph(path: Path, nodes: int, edges: int) -> None:
    import networkx as nx

    g = nx.gnm_random_graph(nodes, edges, seed=7)
    data = {
        "directed": False,
        "nodes": [{"id": n, "name": f"node-{n}", "group": f"g{n % 12}"} for n in g.nodes],
        "edges": [{"source": a, "target": b} for a, b in g.edges],
    }
    path.write_text(json.dumps(data))


def measure_schemascope(driver: WebDriver, base: str, frames: int) -> dict:
    driver.get(base + "/")
    deadline = time.time() + 600
    while time.time() < deadline:
        timing = driver.execute("return window.schemascope && window.schemascope.timing()")
        if timing and timing.get("firstFrameAt"):
            break
        time.sleep(0.05)
    else:
        raise RuntimeError("the page drew no frame in 10 minutes")
    first = timing["firstFrameAt"]
    heap = driver.execute("return performance.memory.usedJSHeapSize") / 2**20
    rss = browser_rss_mb(driver)
    render = run_script(driver, "return window.schemascope.benchPan(arguments[0])", frames)
    return {"firstFrameMs": first, "panFrameMs": statistics.median(render), "heapMb": heap, "browserRssMb": rss}


def measure_sigma(driver: WebDriver, page: Path, frames: int) -> dict:
    driver.get(page.as_uri())
    deadline = time.time() + 600
    while time.time() < deadline:
        first = driver.execute("return window.firstFrameAt || null")
        if first:
            break
        error = driver.execute("return document.readyState")
        time.sleep(0.05)
    else:
        raise RuntimeError(f"sigma drew no frame in 10 minutes ({error})")
    heap = driver.execute("return performance.memory.usedJSHeapSize") / 2**20
    rss = browser_rss_mb(driver)
    render = run_script(driver, "return window.benchPan(arguments[0])", frames)
    return {"firstFrameMs": first, "panFrameMs": statistics.median(render), "heapMb": heap, "browserRssMb": rss}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--frames", type=int, default=PAN_FRAMES, help="panned frames timed per run")
    parser.add_argument("--skip-sigma", action="store_true", help="measure schemascope's page only")
    parser.add_argument("--canvas-on-gpu", action="store_true",
                        help="run schemascope's page with the GPU process (SwiftShader) as sigma's, not --disable-gpu")
    parser.add_argument("--nodes", type=int, default=100_000)
    parser.add_argument("--edges", type=int, default=200_000)
    parser.add_argument("--schemascope", type=Path,
                        default=Path(os.environ.get("CARGO_TARGET_DIR", ROOT / "target")) / "release" / "schemascope")
    parser.add_argument("--chromedriver", default=shutil.which("chromedriver") or "/usr/bin/chromedriver")
    parser.add_argument("--chromium", default=shutil.which("chromium") or "/usr/bin/chromium")
    args = parser.parse_args()

    work = Path(tempfile.mkdtemp(prefix="graph-view-bench-"))
    graph = work / f"gnm-{args.nodes}-{args.edges}.json"
    make_graph(graph, args.nodes, args.edges)
    server = Server(args.schemascope, graph, work)
    results: dict[str, list[dict]] = {"schemascope": [], "sigma": []}
    try:
        server.wait_loaded()
        for tool, call in [("set_layout", {"type": "random"}), ("set_dimension", {"dimension": "2d"}),
                           ("find_and_style_nodes", {"style": {"color_by": "group"}, "layer_name": "groups"})]:
            _, answer = server.call(tool, call)
            if not answer.get("success"):
                raise RuntimeError(f"{tool}: {answer.get('message')}")
        with urllib.request.urlopen(server.base + "/v1/graph/scene", timeout=600) as response:
            scene = response.read()
        sigma_dir = work / "sigma"
        sigma_dir.mkdir()
        for name, version, member in (SIGMA, GRAPHOLOGY):
            shutil.copy(npm_file(name, version, member), sigma_dir / Path(member).name)
        (sigma_dir / "scene.js").write_bytes(b"window.SCENE = " + scene + b";\n")
        (sigma_dir / "index.html").write_text(SIGMA_PAGE)
        for run in range(args.runs):
            # Interleaved, each in a fresh browser.
            for name in ("schemascope",) if args.skip_sigma else ("schemascope", "sigma"):
                driver = chromium_driver(args.chromedriver, args.chromium, webgl=name == "sigma" or args.canvas_on_gpu)
                try:
                    figures = (measure_schemascope(driver, server.base, args.frames) if name == "schemascope"
                               else measure_sigma(driver, sigma_dir / "index.html", args.frames))
                finally:
                    driver.close()
                results[name].append(figures)
                print(f"run {run + 1} {name:12} " + "  ".join(f"{k} {v:.1f}" for k, v in figures.items()), flush=True)
    finally:
        server.stop()

    def med(name: str, key: str) -> float | None:
        values = [r[key] for r in results[name] if key in r]
        return statistics.median(values) if values else None

    print(f"\n{args.nodes:,} nodes, {args.edges:,} edges; medians of {args.runs} runs; load {os.getloadavg()[0]:.2f}")
    print(f"{'':36}{'schemascope':>14}{'sigma.js':>12}{'ratio':>8}")
    for key, label in [("firstFrameMs", "first frame (ms)"), ("panFrameMs", "frame while panning (ms)"),
                       ("heapMb", "JS heap (MB)"), ("browserRssMb", "browser RSS (MB)")]:
        ours, theirs = med("schemascope", key), med("sigma", key)
        if theirs is None:
            print(f"{label:36}{ours:14.1f}")
        else:
            print(f"{label:36}{ours:14.1f}{theirs:12.1f}{ours / theirs:8.2f}")
    out = ROOT / "bench" / "data" / "last-graph-view-bench.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps({"date": dt.datetime.now(dt.timezone.utc).isoformat(), "machine": platform.platform(),
                               "nodes": args.nodes, "edges": args.edges, "results": results}, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
