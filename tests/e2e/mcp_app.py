#!/usr/bin/env python3
"""The graph view as an MCP App, in a host built on the official MCP Apps SDK, in headless Chromium.

Starts tests/mcp-app-host/host.mjs, which runs `schemascope serve` over stdio with the official
MCP client (declaring the MCP Apps extension) and serves a chat window whose apps are rendered
by the official AppBridge in sandboxed iframes with a host's CSP (nothing fetched). The model's
side is played by this script through `window.harness.callTool`. It checks, on les_miserables as
networkx writes it, that:
  - the tools that change the view name the app (`_meta.ui.resourceUri`); the view's own tools
    are listed to this host as `visibility: ["app"]`;
  - "colour nodes by their importance" is two calls (run_algorithm pagerank, one mapped style),
    and the app rendered after the second shows 77 nodes with character names as labels, the
    legend of every layer describe_styles lists, with the PageRank gradient and its domain, and
    node colours that follow PageRank (Valjean, the most central, at the top of the gradient);
  - the app rendered after the first call updates by itself to the styled graph (live through
    the host's tool calls only);
  - a click inspects a node (its data, PageRank, computed style, layers), the pointer's node is
    describe_selection's hover, and a layer deleted in the app is gone from describe_styles;
  - every request the apps made went through the host and was one it allows.

Prints "ok ..." / "FAIL ..." per check and a summary; exits 1 if a check failed, 2 on setup
errors. With --screenshots DIR, saves a PNG of the chat window there.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

from mcp_client import Checks
from web_view import Png, WebDriver, WebDriverError, poll

WINDOW_NOTE = "the chat window is 1000x800; each app is an iframe below its call"
NODES = 77
MOST_CENTRAL = "Valjean"
LEAST_CENTRAL = "Napoleon"  # degree 1: among the lowest PageRank


def start_host(node: str, deps: str, command: list[str]) -> tuple[subprocess.Popen[str], str, list[str]]:
    """host.mjs with `command` as its server; its URL, once the server answered initialize."""
    here = Path(__file__).resolve().parent.parent / "mcp-app-host" / "host.mjs"
    process = subprocess.Popen([node, str(here), "--deps", deps, "--", *command], stdin=subprocess.PIPE,
                               stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    said: list[str] = []
    url: list[str] = []
    ready = threading.Event()

    def pump() -> None:
        assert process.stdout is not None
        for line in process.stdout:
            said.append(line)
            if line.startswith("HOST ") and not url:
                url.append(line.split()[1])
                ready.set()
        ready.set()

    threading.Thread(target=pump, daemon=True).start()
    ready.wait(timeout=120)
    if not url:
        process.kill()
        raise RuntimeError(f"the MCP Apps host did not start: {''.join(said)[-2000:]}")
    return process, url[0], said


class Host:
    """The chat window: calls tools as the model, and looks into the apps it rendered."""

    def __init__(self, driver: WebDriver) -> None:
        self.driver = driver

    def call(self, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
        """Calls `name` as the model; {result, app} once its app (if any) got the result."""
        self.top()
        return self.driver.request("POST", "/execute/async", {"script": """
            const done = arguments[arguments.length - 1];
            window.harness.callTool(arguments[0], arguments[1]).then(done, (e) => done({error: String(e)}));""",
            "args": [name, arguments]}, timeout=120)

    def tool(self, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
        """Calls `name` directly (no app rendered); its envelope."""
        self.top()
        result = self.driver.request("POST", "/execute/async", {"script": """
            const done = arguments[arguments.length - 1];
            window.harness.rpc("tools/call", {name: arguments[0], arguments: arguments[1]}).then(done, (e) => done({error: String(e)}));""",
            "args": [name, arguments]}, timeout=120)
        if "error" in result:
            raise AssertionError(f"{name}: {result['error']}")
        return envelope(result)

    def top(self) -> None:
        self.driver.request("POST", "/frame", {"id": None})

    def into(self, app: int) -> None:
        """Switches into app `app`'s iframe."""
        self.top()
        element = self.driver.request("POST", "/element", {"using": "css selector", "value": f"#app-{app}"})
        self.driver.request("POST", "/frame", {"id": element})

    def in_app(self, app: int, script: str, *args: Any) -> Any:
        self.into(app)
        try:
            return self.driver.execute(script, *args)
        finally:
            self.top()

    def node_on_page(self, app: int, node: str) -> dict[str, float] | None:
        """Where `node` is drawn in the chat window's viewport (the app scrolled into view)."""
        self.top()
        frame = self.driver.execute(f"""const f = document.getElementById('app-{app}'); f.scrollIntoView();
            const r = f.getBoundingClientRect(); return {{x: r.left, y: r.top}};""")
        inside = self.in_app(app, "return window.schemascope && window.schemascope.nodePosition(arguments[0])", node)
        if not inside:
            return None
        # The frame's border (1px) shifts its content.
        return {"x": frame["x"] + 1 + inside["x"], "y": frame["y"] + 1 + inside["y"]}


def envelope(result: dict[str, Any]) -> dict[str, Any]:
    structured = result.get("structuredContent")
    if isinstance(structured, dict):
        return structured
    text = next((c["text"] for c in result.get("content", []) if c.get("type") == "text"), "{}")
    return json.loads(text)


APP_STATE_JS = """
const view = window.schemascope;
if (!view || !view.scene()) return null;
const scene = view.scene();
const colour = (id) => { const n = scene.nodes.find((n) => n.id === id); return n ? scene.nodeStyles[n.s].color : null; };
return {
  version: view.version(),
  nodes: scene.nodes.length,
  labels: view.labels().map((l) => l.text),
  colours: Object.fromEntries(scene.nodes.map((n) => [n.id, scene.nodeStyles[n.s].color])),
  legend: [...document.querySelectorAll('#legend .entry')].map((e) => ({layer: e.dataset.layer,
     mappings: [...e.querySelectorAll('.mapping')].map((m) => ({property: m.dataset.property, text: m.textContent,
        bar: !!m.querySelector('.bar'), ends: [...m.querySelectorAll('.ends span')].map((s) => s.textContent)}))})),
  error: document.getElementById('error').textContent,
};
"""

INSPECTOR_JS = """const i = document.getElementById('inspector');
return i.style.display === 'block' ? {id: i.querySelector('.inspected-id').textContent, text: i.textContent,
  layers: [...i.querySelectorAll('.inspected-layer')].map((l) => l.dataset.layer)} : null"""


def luminance(hex_colour: str) -> float:
    r, g, b = (int(hex_colour[i:i + 2], 16) for i in (1, 3, 5))
    return 0.2126 * r + 0.7152 * g + 0.0722 * b


def run(host: Host, c: Checks, shots: Path | None) -> None:
    listed = host.driver.request("POST", "/execute/async", {"script": """
        const done = arguments[arguments.length - 1]; window.harness.listedTools().then(done, (e) => done([String(e)]));""",
        "args": []})
    meta = {t["name"]: (t.get("_meta") or {}).get("ui", {}) for t in listed if isinstance(t, dict)}
    c.check("the styling and algorithm tools name the graph app",
            all(meta.get(n, {}).get("resourceUri") == "ui://schemascope/graph-view.html"
                for n in ["find_and_style_nodes", "run_algorithm", "select", "set_layout"]), meta)
    c.check("the view's own tools are listed to an MCP Apps host for the app only",
            all(meta.get(n, {}).get("visibility") == ["app"] for n in ["read_scene", "report_hover", "arrange_layer"]),
            {n: meta.get(n) for n in ["read_scene", "report_hover", "arrange_layer"]})
    c.check("read-only tools name no app", "resourceUri" not in meta.get("describe_styles", {}), meta.get("describe_styles"))
    c.check("describe_property names the property chart",
            meta.get("describe_property", {}).get("resourceUri") == "ui://schemascope/property-chart.html", meta.get("describe_property"))

    resources = host.driver.request("POST", "/execute/async", {"script": """
        const done = arguments[arguments.length - 1];
        window.harness.rpc("resources/list", {}).then((r) => done(r.resources), (e) => done([String(e)]));""", "args": []})
    apps = sorted(r["uri"] for r in resources if isinstance(r, dict) and r.get("mimeType") == "text/html;profile=mcp-app")
    c.check("both apps are listed as MCP App resources",
            apps == ["ui://schemascope/graph-view.html", "ui://schemascope/property-chart.html"], resources)

    # "Colour nodes by their importance": two calls, as the model makes them.
    first = host.call("run_algorithm", {"type": "pagerank"})
    c.check("run_algorithm pagerank answers and renders the app", first.get("app") == 0, first)
    second = host.call("find_and_style_nodes", {"style": {"color_by": "pagerank", "size_by": "pagerank"}, "layer_name": "importance"})
    styled = envelope(second["result"])
    c.check("find_and_style_nodes colour and size by pagerank styles all 77 nodes",
            styled.get("success") and styled["data"].get("matchedCount") == NODES, styled.get("message"))
    state = poll("the second app to draw the styled graph",
                 lambda: (s := host.in_app(1, APP_STATE_JS)) and s["legend"] and s)
    c.check(f"the app draws the {NODES} characters", state["nodes"] == NODES, state["nodes"])
    c.check("labels are the characters' names (Valjean among them)",
            MOST_CENTRAL in state["labels"] and all(not label.isdigit() for label in state["labels"]), state["labels"][:10])
    described = host.tool("describe_styles", {})
    layers = [layer["name"] for layer in described["data"]["layers"] if layer["source"] != "system"]
    c.check("the legend lists the layers describe_styles lists", [e["layer"] for e in state["legend"]] == layers,
            {"app": [e["layer"] for e in state["legend"]], "describe_styles": layers})
    importance = next((e for e in state["legend"] if e["layer"] == "importance"), {"mappings": []})
    mapping = next(iter(importance["mappings"]), {})
    scale = described["data"]["layers"][-1]["mappings"][0] if described["data"]["layers"][-1].get("mappings") else {}
    c.check("the legend explains the colours: a PageRank gradient with its domain",
            mapping.get("bar") and "pagerank" in mapping.get("text", "") and len(mapping.get("ends", [])) == 2,
            {"legend": mapping, "describe_styles": scale})
    colours = state["colours"]
    c.check(f"{MOST_CENTRAL} is drawn brighter than {LEAST_CENTRAL} (viridis rises with PageRank)",
            luminance(colours[MOST_CENTRAL]) > luminance(colours[LEAST_CENTRAL]),
            {MOST_CENTRAL: colours[MOST_CENTRAL], LEAST_CENTRAL: colours[LEAST_CENTRAL]})
    c.check("PageRank gives the characters many colours", len(set(colours.values())) >= 10, len(set(colours.values())))
    computed = host.tool("describe_styles", {"compute_for": MOST_CENTRAL})
    c.check(f"{MOST_CENTRAL}'s colour in the app is its computed style",
            json.dumps(computed["data"]).count(colours[MOST_CENTRAL]) > 0, computed["data"].get("computed"))

    # The first app, rendered before the style existed, follows by itself.
    live = poll("the first app to draw the style set after it",
                lambda: (s := host.in_app(0, APP_STATE_JS)) and s["colours"] == colours and s, timeout=40)
    c.check("the app rendered before the style updates to it (live through the host)", bool(live))

    if shots:
        shots.mkdir(parents=True, exist_ok=True)
        host.top()
        host.driver.execute("document.getElementById('app-1').scrollIntoView()")
        (shots / "mcp-app-les-miserables.png").write_bytes(host.driver.screenshot())

    # Inspect a node with a click; the pointer's node is the hover target.
    where = host.node_on_page(1, MOST_CENTRAL)
    if not c.check(f"{MOST_CENTRAL} is drawn in the app", where is not None):
        return
    host.top()
    host.driver.click(where["x"], where["y"])
    shown = poll(f"the inspector to show {MOST_CENTRAL}",
                 lambda: (i := host.in_app(1, INSPECTOR_JS)) and MOST_CENTRAL in i["id"] and i)
    c.check(f"the inspector shows {MOST_CENTRAL}'s PageRank and the layer that colours it",
            "pagerank" in shown["text"] and "importance" in shown["layers"], shown)
    selected = host.tool("describe_selection", {})
    c.check("the click selected the node (describe_selection)", MOST_CENTRAL in json.dumps(selected["data"]), selected["message"])
    other = host.node_on_page(1, "Myriel")
    if other:
        host.top()
        host.driver.move(other["x"], other["y"])
        hovered = poll("describe_selection to report the pointer on Myriel",
                       lambda: (h := host.tool("describe_selection", {})) and (h["data"].get("hover") or {}).get("id") == "Myriel" and h)
        c.check("the pointer's node is describe_selection's hover", bool(hovered))

    # Delete the layer in the app: gone from describe_styles.
    button = host.in_app(1, """const b = document.querySelector('#legend button.delete[data-layer="importance"]');
        if (!b) return null; b.scrollIntoView(); const r = b.getBoundingClientRect(); return {x: r.left + r.width / 2, y: r.top + r.height / 2};""")
    if c.check("the app's layer list has a delete button for importance", button is not None):
        host.top()
        frame = host.driver.execute("const r = document.getElementById('app-1').getBoundingClientRect(); return {x: r.left, y: r.top};")
        host.driver.click(frame["x"] + 1 + button["x"], frame["y"] + 1 + button["y"])
        poll("importance to be deleted", lambda: "importance" not in
             [layer["name"] for layer in host.tool("describe_styles", {})["data"]["layers"]])
        c.check("a layer deleted in the app is gone from describe_styles", True)

    # describe_property's answer as a chart.
    profiled = host.call("describe_property", {"property": "weight", "collection": "edges"})
    answer = envelope(profiled["result"])
    bins = answer["data"].get("histogram") or []
    chart_js = """const rows = [...document.querySelectorAll('.histogram .label')].map((l) => l.dataset.label);
        const counts = [...document.querySelectorAll('.histogram .count')].map((c) => c.textContent);
        const present = document.querySelector('[data-figure="present"] b');
        return rows.length ? {title: document.querySelector('h1').textContent, rows, counts, present: present && present.textContent} : null;"""
    drawn = poll("the property chart to draw the histogram",
                 lambda: profiled.get("app") is not None and host.in_app(profiled["app"], chart_js))
    c.check("describe_property's answer is drawn as a chart: one bar per histogram bin, labelled and counted as the answer says",
            len(bins) >= 2 and drawn["rows"] == [b["range"] for b in bins]
            and [int(t.split()[0].replace(",", "")) for t in drawn["counts"]] == [b["count"] for b in bins]
            and drawn["present"] == str(answer["data"]["presentCount"]) and "weight" in drawn["title"],
            {"drawn": drawn, "bins": bins})

    host.top()
    log = host.driver.execute("return window.harness.log")
    names = {entry.get("name") for entry in log}
    c.check("the apps read the scene through the host's tool calls", "read_scene" in names, sorted(n for n in names if n))
    refused = [entry for entry in log if not entry["allowed"]]
    c.check("every request of the apps was one the host allows", not refused, refused[:5])


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--chromedriver", required=True)
    parser.add_argument("--chromium", required=True)
    parser.add_argument("--node", required=True, help="Node.js 20 or later")
    parser.add_argument("--deps", required=True, help="where tests/mcp-app-host's packages are installed (node_modules inside)")
    parser.add_argument("--screenshots", type=Path)
    parser.add_argument("server", nargs=argparse.REMAINDER, help="-- the server command (over stdio)")
    args = parser.parse_args()
    command = args.server[1:] if args.server[:1] == ["--"] else args.server
    if not command:
        parser.error("give the server command after --")
    try:
        process, url, said = start_host(args.node, args.deps, command)
    except RuntimeError as error:
        print(f"setup: {error}", file=sys.stderr)
        return 2
    c = Checks()
    driver = None
    try:
        driver = WebDriver(args.chromedriver, args.chromium)
        driver.get(url)
        poll("the host page", lambda: driver.execute("return window.harnessReady === true"))
        run(Host(driver), c, args.screenshots)
    except (WebDriverError, TimeoutError, AssertionError, KeyError, TypeError) as error:
        c.check("the MCP App run", False, f"{type(error).__name__}: {error}")
    finally:
        if driver:
            driver.close()
        if process.stdin:
            process.stdin.close()
        try:
            process.wait(timeout=20)
        except subprocess.TimeoutExpired:
            process.kill()
    if c.failed:
        print("host output:\n" + "".join(said)[-3000:], file=sys.stderr)
    print(f"{c.passed} passed, {c.failed} failed")
    return 1 if c.failed else 0


if __name__ == "__main__":
    sys.exit(main())
