#!/usr/bin/env python3
"""Browser test of the graph web view in headless Chromium, with the official Python MCP SDK.

The server (`schemascope demo --http ...`) must already be running; this script starts only
chromedriver, speaks the W3C WebDriver protocol to it with plain urllib (no selenium), and
talks MCP to the server's /mcp endpoint. It checks that:
  - the page at /?source=infrastructure draws the demo graph (160 nodes);
  - set_dimension 2d over MCP reaches the page as a live update;
  - a node is drawn white (#ffffff) by default, and red after find_and_style_nodes over MCP makes
    every database red, while a server stays white (pixels of a PNG screenshot);
  - a click on a node selects it (describe_selection over MCP returns exactly that node), and a
    shift-click adds a second one;
  - what a person reads on the page: labels drawn are the nodes' names, the legend lists the
    style layers describe_styles lists (with a mapping's categories and colours), the inspector
    shows a clicked node's data, the pointer's node is describe_selection's `hover`, and a layer
    deleted in the page is gone from describe_styles.

Prints one line per check ("ok ..." / "FAIL ...") and a summary "N passed, M failed"; exits 1 if
a check failed, 2 on usage or setup errors (chromedriver or Chromium not starting).

Example (with `schemascope demo --http 127.0.0.1:8750` running):
  python tests/e2e/web_view.py --chromedriver /usr/bin/chromedriver --chromium /usr/bin/chromium \
      --url http://127.0.0.1:8750/
"""

from __future__ import annotations

import argparse
import base64
import json
import re
import struct
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request
import zlib
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import anyio
import mcp_types as types
from mcp import Client

# The same check counting and error text as the MCP end-to-end client (same directory).
import mcp_client
from mcp_client import Checks, connect, describe

SOURCE = "infrastructure"
NODE_COUNT = 160
STYLED = "database-012"  # a database: white by default, red once databases are styled red
LAYER = "web-test-databases"
WINDOW = (1000, 800)
WHITE = (255, 255, 255)
RED = (255, 0, 0)
# Screenshot pixels are compared with a tolerance: the fill is exact, but colour management or
# antialiasing must not make the test brittle.
TOLERANCE = 40


# ---- PNG ---------------------------------------------------------------------------------------


class Png:
    """An 8-bit RGB or RGBA, non-interlaced PNG (what Chromium's screenshots are), decoded with
    zlib only, so the test needs no imaging library."""

    def __init__(self, data: bytes) -> None:
        if data[:8] != b"\x89PNG\r\n\x1a\n":
            raise ValueError("not a PNG")
        pos, idat, header = 8, [], None
        while pos < len(data):
            (length,) = struct.unpack(">I", data[pos:pos + 4])
            kind, body = data[pos + 4:pos + 8], data[pos + 8:pos + 8 + length]
            pos += 12 + length
            if kind == b"IHDR":
                header = struct.unpack(">IIBBBBB", body)
            elif kind == b"IDAT":
                idat.append(body)
            elif kind == b"IEND":
                break
        if header is None:
            raise ValueError("PNG without IHDR")
        self.width, self.height, depth, colour, _, _, interlace = header
        if depth != 8 or colour not in (2, 6) or interlace != 0:
            raise ValueError(f"unsupported PNG: bit depth {depth}, colour type {colour}, interlace {interlace}")
        self.channels = 3 if colour == 2 else 4
        self.raw = zlib.decompress(b"".join(idat))
        self.rows: list[bytearray] = []

    def _unfilter_to(self, y: int) -> None:
        """Undoes the row filters down to row `y` (each row depends on the one above)."""
        bpp, stride = self.channels, self.width * self.channels
        while len(self.rows) <= y:
            i = len(self.rows)
            start = i * (stride + 1)
            kind, row = self.raw[start], bytearray(self.raw[start + 1:start + 1 + stride])
            prior = self.rows[-1] if self.rows else bytearray(stride)
            if kind == 1:
                for x in range(bpp, stride):
                    row[x] = (row[x] + row[x - bpp]) & 0xFF
            elif kind == 2:
                row = bytearray((a + b) & 0xFF for a, b in zip(row, prior))
            elif kind == 3:
                for x in range(stride):
                    left = row[x - bpp] if x >= bpp else 0
                    row[x] = (row[x] + ((left + prior[x]) >> 1)) & 0xFF
            elif kind == 4:
                for x in range(stride):
                    a = row[x - bpp] if x >= bpp else 0
                    b, c = prior[x], prior[x - bpp] if x >= bpp else 0
                    p = a + b - c
                    pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                    predictor = a if pa <= pb and pa <= pc else b if pb <= pc else c
                    row[x] = (row[x] + predictor) & 0xFF
            elif kind != 0:
                raise ValueError(f"bad PNG filter type {kind} in row {i}")
            self.rows.append(row)

    def pixel(self, x: int, y: int) -> tuple[int, int, int]:
        if not (0 <= x < self.width and 0 <= y < self.height):
            raise ValueError(f"pixel ({x}, {y}) is outside the {self.width}x{self.height} screenshot")
        self._unfilter_to(y)
        i = x * self.channels
        r, g, b = self.rows[y][i:i + 3]
        return (r, g, b)


def near(colour: tuple[int, int, int], expected: tuple[int, int, int]) -> bool:
    return all(abs(a - b) <= TOLERANCE for a, b in zip(colour, expected))


def hex_colour(colour: tuple[int, int, int]) -> str:
    return "#%02x%02x%02x" % colour


# ---- WebDriver ---------------------------------------------------------------------------------


class WebDriverError(RuntimeError):
    pass


class WebDriver:
    """chromedriver on a free port, one headless Chromium session, W3C WebDriver over urllib."""

    def __init__(self, chromedriver: str, chromium: str) -> None:
        self.process = subprocess.Popen(
            [chromedriver, "--port=0"],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
        )
        port: list[int] = []
        said: list[str] = []
        ready = threading.Event()

        def pump() -> None:
            # Kept, not shown: chromedriver's banner is noise unless it fails to start.
            assert self.process.stdout is not None
            for line in self.process.stdout:
                said.append(line)
                match = re.search(r"started successfully on port (\d+)", line)
                if match and not port:
                    port.append(int(match.group(1)))
                    ready.set()
            ready.set()

        threading.Thread(target=pump, daemon=True).start()
        ready.wait(timeout=30)
        if not port:
            self.process.kill()
            raise WebDriverError(f"{chromedriver} did not report the port it listens on: {''.join(said)[-600:]}")
        self.base = f"http://127.0.0.1:{port[0]}"
        self.session = ""
        capabilities = {
            "browserName": "chrome",
            "goog:chromeOptions": {
                "binary": chromium,
                # --no-sandbox: CI runs as root in a container; --disable-dev-shm-usage: /dev/shm
                # is small there.
                "args": ["--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                         f"--window-size={WINDOW[0]},{WINDOW[1]}"],
            },
        }
        created = self.request("POST", "/session", {"capabilities": {"alwaysMatch": capabilities}}, timeout=90)
        self.session = created["sessionId"]
        self.browser_version = created.get("capabilities", {}).get("browserVersion", "?")

    def request(self, method: str, path: str, body: Any = None, timeout: float = 60) -> Any:
        url = self.base + (f"/session/{self.session}" if self.session else "") + path
        data = json.dumps(body if body is not None else {}).encode() if method == "POST" else None
        request = urllib.request.Request(url, data=data, method=method, headers={"Content-Type": "application/json"})
        try:
            with urllib.request.urlopen(request, timeout=timeout) as response:
                answer = json.loads(response.read() or b"{}")
        except urllib.error.HTTPError as error:
            try:
                value = json.loads(error.read()).get("value", {})
                message = f"{value.get('error')}: {value.get('message', '')}".splitlines()[0]
            except (ValueError, AttributeError):
                message = str(error)
            raise WebDriverError(f"{method} {path}: {message}") from None
        return answer.get("value")

    def get(self, url: str) -> None:
        self.request("POST", "/url", {"url": url})

    def execute(self, script: str, *args: Any) -> Any:
        return self.request("POST", "/execute/sync", {"script": script, "args": list(args)})

    def screenshot(self) -> bytes:
        """A PNG of the viewport."""
        return base64.b64decode(self.request("GET", "/screenshot"))

    def click(self, x: float, y: float, shift: bool = False) -> None:
        """A real mouse click at viewport CSS pixel (x, y), optionally holding Shift: the page
        sees mousedown/mouseup with the same coordinates and modifiers as from a person."""
        pointer = [
            {"type": "pointerMove", "duration": 0, "origin": "viewport", "x": round(x), "y": round(y)},
            {"type": "pointerDown", "button": 0},
            {"type": "pointerUp", "button": 0},
        ]
        actions: list[dict[str, Any]] = [
            {"type": "pointer", "id": "mouse", "parameters": {"pointerType": "mouse"}, "actions": pointer},
        ]
        if shift:
            # Key and pointer actions run tick by tick side by side: Shift goes down in the first
            # tick and up after the click, so both mouse events carry shiftKey.
            shift_key = "\ue008"
            keys = [{"type": "keyDown", "value": shift_key}] + [{"type": "pause", "duration": 0}] * 3 + [
                {"type": "keyUp", "value": shift_key}]
            pointer.insert(0, {"type": "pause", "duration": 0})
            pointer.append({"type": "pause", "duration": 0})
            actions.insert(0, {"type": "key", "id": "keyboard", "actions": keys})
        self.request("POST", "/actions", {"actions": actions})
        self.request("DELETE", "/actions")

    def move(self, x: float, y: float) -> None:
        """Moves the mouse to viewport CSS pixel (x, y) without clicking."""
        pointer = [{"type": "pointerMove", "duration": 0, "origin": "viewport", "x": round(x), "y": round(y)}]
        self.request("POST", "/actions", {"actions": [
            {"type": "pointer", "id": "mouse", "parameters": {"pointerType": "mouse"}, "actions": pointer}]})
        self.request("DELETE", "/actions")

    def close(self) -> None:
        try:
            if self.session:
                self.request("DELETE", "", timeout=30)
        except (WebDriverError, OSError):
            pass
        self.process.terminate()
        try:
            self.process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.process.kill()


# ---- MCP -----------------------------------------------------------------------------------------


async def call(client: Client, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
    """Calls a tool; its {success, message, data} envelope (a failure raises)."""
    result = await client.call_tool(name, arguments)
    structured = result.structured_content
    if not isinstance(structured, dict):
        text = next((c.text for c in result.content if isinstance(c, types.TextContent)), "")
        raise AssertionError(f"{name}: no structured content: {text[:300]}")
    if not structured.get("success"):
        raise AssertionError(f"{name} {json.dumps(arguments)} failed: {structured.get('message')}")
    return structured


async def wait_for(what: str, probe: Callable[[], Any], timeout: float = 20.0) -> Any:
    """Polls `probe` (sync or async) until it returns something truthy; its value. Raises with
    the last value seen after `timeout` seconds."""
    deadline = time.monotonic() + timeout
    last: Any = None
    while True:
        last = probe()
        if isinstance(last, Awaitable):
            last = await last
        if last:
            return last
        if time.monotonic() > deadline:
            raise TimeoutError(f"waited {timeout:.0f} s for {what}; last seen: {json.dumps(last, default=str)[:400]}")
        await anyio.sleep(0.1)


# ---- the page ------------------------------------------------------------------------------------

# Where a node is drawn and whether its centre pixel shows the node itself: not covered by a node
# drawn later (nodes are drawn far to near, in scene order when depths tie) nor by the page's
# overlays (status line, help, error box).
NODE_ON_SCREEN_JS = """
const id = arguments[0];
const view = window.schemascope, scene = view.scene();
const p = view.nodePosition(id);
if (!scene || !p) return null;
const drawn = scene.nodes.map((n) => ({ id: n.id, p: view.nodePosition(n.id) })).filter((n) => n.p);
const index = drawn.findIndex((n) => n.id === id);
const coveredBy = drawn.slice(index + 1).filter((n) => Math.hypot(n.p.x - p.x, n.p.y - p.y) <= n.p.r + 1).map((n) => n.id);
for (const overlay of ["status", "help", "error", "panel"]) {
  const el = document.getElementById(overlay), r = el.getBoundingClientRect();
  if (el.offsetParent !== null && p.x >= r.left - 1 && p.x <= r.right + 1 && p.y >= r.top - 1 && p.y <= r.bottom + 1) coveredBy.push("#" + overlay);
}
const canvas = document.getElementById("graph").getBoundingClientRect();
const inside = p.x - p.r >= canvas.left && p.y - p.r >= canvas.top && p.x + p.r <= canvas.right && p.y + p.r <= canvas.bottom;
return { x: p.x + canvas.left, y: p.y + canvas.top, r: p.r, coveredBy, inside, version: view.version() };
"""

PAGE_STATE_JS = """
const view = window.schemascope;
if (!view) return null;
const scene = view.scene();
return {
  version: view.version(),
  nodes: scene ? scene.nodes.length : null,
  dimension: scene ? scene.dimension : null,
  selection: scene ? scene.selection.nodes : null,
  status: document.getElementById("status").textContent,
  error: document.getElementById("error").textContent,
  dpr: window.devicePixelRatio || 1,
  width: window.innerWidth,
  height: window.innerHeight,
};
"""

# Pairs [top, under] of nodes drawn overlapping: top's centre lies within under's disc (or the 2-pixel
# click margin around it) and top is drawn later, so on top (in 2D, scene order).
OVERLAPS_JS = """
const view = window.schemascope;
const drawn = view.scene().nodes.map((n) => ({ id: n.id, p: view.nodePosition(n.id) })).filter((n) => n.p);
const pairs = [];
drawn.forEach((top, j) => {
  const under = drawn.slice(0, j).find((n) => Math.hypot(n.p.x - top.p.x, n.p.y - top.p.y) <= n.p.r + 2);
  if (under) pairs.push([top.id, under.id]);
});
return pairs;
"""

STYLE_OF_JS = """
const scene = window.schemascope.scene();
const node = scene && scene.nodes.find((n) => n.id === arguments[0]);
return node ? scene.nodeStyles[node.s].color : null;
"""


class Run:
    def __init__(self, driver: WebDriver, client: Client, base_url: str, c: Checks, shots: Path | None) -> None:
        self.driver, self.client, self.base_url, self.c, self.shots = driver, client, base_url, c, shots

    def page(self) -> dict[str, Any] | None:
        return self.driver.execute(PAGE_STATE_JS)

    def on_screen(self, node: str) -> dict[str, Any] | None:
        return self.driver.execute(NODE_ON_SCREEN_JS, node)

    def screenshot(self, name: str) -> Png:
        data = self.driver.screenshot()
        if self.shots is not None:
            self.shots.mkdir(parents=True, exist_ok=True)
            (self.shots / f"{name}.png").write_bytes(data)
        return Png(data)

    def centre_colour(self, png: Png, where: dict[str, Any], dpr: float) -> tuple[int, int, int]:
        return png.pixel(int(where["x"] * dpr), int(where["y"] * dpr))

    async def wait_drawn(self, what: str, after: int, accept: Callable[[dict[str, Any]], bool]) -> dict[str, Any]:
        """Waits until the page has drawn a newer version than `after` that `accept`s: the change
        reached the page through its event stream, not through a reload."""
        seen: dict[str, Any] = {}

        def probe() -> dict[str, Any] | None:
            state = self.page()
            seen["page"] = state
            return state if state and state["version"] > after and accept(state) else None
        try:
            return await wait_for(what, probe)
        except TimeoutError as error:
            raise TimeoutError(f"{error}; the page: {json.dumps(seen.get('page'))}") from None

    async def run(self) -> None:
        c = self.c
        if TOKEN:
            # The browser's way in: the token once in the address, a cookie from then on.
            self.driver.get(f"{self.base_url}?token={TOKEN[0]}")
            landed = self.driver.request("GET", "/url")
            c.check("the token in the address logs the browser in and leaves the address bar",
                    landed.rstrip("/") == self.base_url.rstrip("/"), landed)
        url = f"{self.base_url}?source={SOURCE}"
        self.driver.get(url)
        state = await wait_for(f"the page at {url} to draw {NODE_COUNT} nodes",
                               lambda: (s := self.page()) and s["version"] >= 0 and s["nodes"] == NODE_COUNT and s)
        c.check(f"the page draws the demo graph: {NODE_COUNT} nodes (status: {state['status']})",
                state["nodes"] == NODE_COUNT and not state["error"], state)
        dpr = state["dpr"]

        # The page reports its canvas size once loaded; wait for it so that change (and its
        # redraw) is over before pixels are compared.
        async def viewport() -> Any:
            out = await call(self.client, "query_graph", {"source": SOURCE, "query": "view"})
            return out["data"].get("viewport")
        reported = await wait_for("the page to report its viewport", viewport)
        c.check("the page reported its canvas size through POST /v1/tools/report_viewport",
                [reported.get("width"), reported.get("height")] == [state["width"], state["height"]],
                {"reported": reported, "page": state})

        # 2D: a flat projection, so node centres and sizes are predictable.
        before = self.page()["version"]
        out = await call(self.client, "set_dimension", {"source": SOURCE, "dimension": "2d"})
        if out["data"].get("changed"):
            state = await self.wait_drawn("the page to redraw in 2D after set_dimension", before,
                                          lambda s: s["dimension"] == "2d")
        else:
            state = self.page()
        c.check("set_dimension 2d over MCP reaches the page (live update)", state["dimension"] == "2d", state)

        # The nodes the pixels are read from must show at their centres.
        target = self.on_screen(STYLED)
        if not c.check(f"{STYLED} is on screen with its centre uncovered",
                       target is not None and target["inside"] and not target["coveredBy"], target):
            return
        server = self.uncovered_server()
        if not c.check("a server node is on screen with its centre uncovered", server is not None, server):
            return
        server_id, server_at = server

        png = self.screenshot("before-style")
        c.check(f"the screenshot is the viewport at devicePixelRatio {dpr}",
                (png.width, png.height) == (round(state["width"] * dpr), round(state["height"] * dpr)),
                {"png": [png.width, png.height], "page": [state["width"], state["height"]], "dpr": dpr})
        colour = self.centre_colour(png, target, dpr)
        c.check(f"{STYLED} is drawn white before styling (pixel {hex_colour(colour)})", near(colour, WHITE), target)

        # Style every database red over MCP; the page hears of it through its event stream.
        before = self.page()["version"]
        out = await call(self.client, "find_and_style_nodes", {
            "source": SOURCE, "selector": "type == 'database'", "style": {"color": "#ff0000"}, "layer_name": LAYER})
        c.check(f"find_and_style_nodes makes the databases red in layer {LAYER}", True, out["message"])
        await self.wait_drawn(f"the page to redraw {STYLED} red", before,
                              lambda s: self.driver.execute(STYLE_OF_JS, STYLED) == "#ff0000")
        moved = self.on_screen(STYLED)
        c.check(f"{STYLED} did not move when it was styled", moved and (moved["x"], moved["y"]) == (target["x"], target["y"]),
                {"before": target, "after": moved})
        png = self.screenshot("after-style")
        colour = self.centre_colour(png, target, dpr)
        c.check(f"{STYLED} is drawn red after the style (pixel {hex_colour(colour)})", near(colour, RED), target)
        colour = self.centre_colour(png, server_at, dpr)
        c.check(f"server {server_id} is still white, not red (pixel {hex_colour(colour)})",
                near(colour, WHITE) and not near(colour, RED), server_at)

        # A click on the node selects it, through the same `select` tool the LLM calls.
        before = self.page()["version"]
        self.driver.click(target["x"], target["y"])
        selected = await self.wait_selection("the click to select", {STYLED})
        c.check(f"a click on {STYLED} selects it: describe_selection returns exactly it",
                selected == [STYLED], selected)
        state = await self.wait_drawn("the page to draw the selection", before, lambda s: s["selection"] == [STYLED])
        c.check("the page draws the new selection (live update)", state["selection"] == [STYLED], state)

        # Shift-click adds a second node.
        before = self.page()["version"]
        self.driver.click(server_at["x"], server_at["y"], shift=True)
        selected = await self.wait_selection("the shift-click to add", {STYLED, server_id})
        c.check(f"a shift-click on {server_id} adds it: describe_selection returns both",
                sorted(selected) == sorted([STYLED, server_id]), selected)
        state = await self.wait_drawn("the page to draw both selected", before, lambda s: len(s["selection"]) == 2)
        c.check("the page shows 2 selected", "2 selected" in state["status"], state["status"])

        # Where two nodes overlap, a click selects the one drawn on top, the one the user sees.
        pairs = self.driver.execute(OVERLAPS_JS)
        found = next(((top, under, where) for top, under in pairs
                      if (where := self.on_screen(top)) and where["inside"] and not where["coveredBy"]), None)
        if not c.check("the layout has two overlapping nodes to click", found is not None, pairs):
            return
        top, under, where = found
        self.driver.click(where["x"], where["y"])
        selected = await self.wait_selection("the click to select", {top})
        c.check(f"a click on {top}, drawn over {under}, selects {top}", selected == [top], selected)
        await self.what_a_person_reads(target, server_id, server_at)

    async def what_a_person_reads(self, target: dict[str, Any], server_id: str, server_at: dict[str, Any]) -> None:
        """Labels, legend, inspector, hover and deleting a layer in the page."""
        c = self.c
        # Labels: some drawn, each the node's name (the demo nodes' name-like property).
        labels = await wait_for("labels drawn", lambda: self.driver.execute("return window.schemascope.labels()"))
        scene = self.driver.execute("return window.schemascope.scene()")
        c.check("the scene names the label property: name", scene.get("labelProperty") == "name", scene.get("labelProperty"))
        sample = labels[len(labels) // 2]
        found = await call(self.client, "find_nodes", {"source": SOURCE, "selector": f"name == '{sample['text']}'"})
        c.check(f"{len(labels)} labels drawn; label {sample['text']!r} is the name of node {sample['id']}",
                sample["id"] in found["data"]["ids"], {"label": sample, "found": found["data"]["ids"]})
        texts = [label["text"] for label in labels]
        overlapping = [(a["text"], b["text"]) for i, a in enumerate(labels) for b in labels[i + 1:]
                       if abs(a["y"] - b["y"]) < 14 and a["x"] < b["x"] + b["w"] and b["x"] < a["x"] + a["w"]]
        c.check("no two drawn labels overlap", not overlapping, overlapping[:3])

        # The legend: the layers describe_styles lists, and a mapping's categories with colours.
        mapped = await call(self.client, "find_and_style_nodes", {
            "source": SOURCE, "style": {"color_by": "type"}, "layer_name": "by-type"})
        entries = mapped["data"]["mappings"][0]["entries"]
        legend_js = """return [...document.querySelectorAll('#legend .entry')].map((e) => ({layer: e.dataset.layer,
            values: [...e.querySelectorAll('.legend-value')].map((v) => ({value: v.dataset.value, color: v.querySelector('.swatch').style.background}))}))"""
        legend = await wait_for("the legend to show the by-type layer",
                                lambda: (l := self.driver.execute(legend_js)) and any(e["layer"] == "by-type" for e in l) and l)
        described = await call(self.client, "describe_styles", {"source": SOURCE})
        layers = [layer["name"] for layer in described["data"]["layers"] if layer["source"] != "system"]
        c.check("the legend lists the layers describe_styles lists, in order",
                [e["layer"] for e in legend] == layers, {"page": [e["layer"] for e in legend], "describe_styles": layers})
        shown = next(e for e in legend if e["layer"] == "by-type")["values"]

        def rgb(hex_colour: str) -> str:
            return "rgb(%d, %d, %d)" % tuple(int(hex_colour[i:i + 2], 16) for i in (1, 3, 5))
        c.check(f"the legend shows each of the {len(entries)} types with its colour",
                [(json.loads(v["value"]), v["color"]) for v in shown] == [(e["value"], rgb(e["color"])) for e in entries],
                {"page": shown, "tool": entries})
        database = next(e["color"] for e in entries if e["value"] == "database")
        await wait_for(f"{STYLED} drawn in the database colour {database}",
                       lambda: self.driver.execute(STYLE_OF_JS, STYLED) == database)
        c.check(f"{STYLED} is drawn in its type's legend colour {database}", True)

        # The inspector: a click on a node shows its data and where its colour comes from.
        where = self.on_screen(STYLED)
        self.driver.click(where["x"], where["y"])
        inspector_js = """const i = document.getElementById('inspector');
            return i.style.display === 'block' ? {id: i.querySelector('.inspected-id').textContent,
              data: i.querySelector('.inspected-data').textContent,
              layers: [...i.querySelectorAll('.inspected-layer')].map((l) => l.dataset.layer)} : null"""
        shown = await wait_for(f"the inspector to show {STYLED}",
                               lambda: (i := self.driver.execute(inspector_js)) and STYLED in i["id"] and i)
        c.check(f"the inspector shows {STYLED}'s data and the layers that set its style",
                '"type": "database"' in shown["data"] and "by-type" in shown["layers"], shown)

        # Hover: the node under the pointer is describe_selection's hover target.
        self.driver.move(server_at["x"], server_at["y"])

        async def hovered() -> Any:
            out = await call(self.client, "describe_selection", {"source": SOURCE})
            return (out["data"].get("hover") or {}).get("id") == server_id and out
        out = await wait_for(f"describe_selection to report the pointer on {server_id}", hovered)
        c.check(f"the pointer on {server_id} is describe_selection's hover", True, out["message"])

        # The layer list: hide a layer, then move it, in the page; the session and the drawing follow.
        def press(kind: str, layer: str) -> bool:
            at = self.driver.execute(f"""const b = document.querySelector('#legend button.{kind}[data-layer="{layer}"]');
                if (!b) return null; b.scrollIntoView(); const r = b.getBoundingClientRect(); return {{x: r.left + r.width / 2, y: r.top + r.height / 2}};""")
            if at:
                self.driver.click(at["x"], at["y"])
            return at is not None

        async def layers_now() -> list[tuple[str, bool]]:
            out = await call(self.client, "describe_styles", {"source": SOURCE})
            return [(layer["name"], bool(layer.get("hidden"))) for layer in out["data"]["layers"]]
        c.check("the legend has a hide button for by-type", press("toggle", "by-type"))
        await wait_for("by-type to be hidden", lambda: self._async_has(layers_now, ("by-type", True)))
        await wait_for(f"{STYLED} red again with by-type hidden", lambda: self.driver.execute(STYLE_OF_JS, STYLED) == "#ff0000")
        c.check("a layer hidden in the page is hidden in describe_styles, and no longer drawn", True)
        press("toggle", "by-type")
        await wait_for(f"{STYLED} in its type's colour again", lambda: self.driver.execute(STYLE_OF_JS, STYLED) == database)
        c.check("the layer shown again is drawn again", True)
        press("earlier", "by-type")

        async def moved() -> bool:
            names = [name for name, _ in await layers_now()]
            return "by-type" in names and LAYER in names and names.index("by-type") < names.index(LAYER)
        await wait_for(f"by-type to apply before {LAYER}", moved)
        await wait_for(f"{STYLED} red: {LAYER} now wins", lambda: self.driver.execute(STYLE_OF_JS, STYLED) == "#ff0000")
        c.check(f"moving by-type earlier in the page lets {LAYER} win over it", True)

        # Deleting a layer in the page removes it from the session.
        button = self.driver.execute(f"""const b = document.querySelector('#legend button.delete[data-layer="{LAYER}"]');
            if (!b) return null; b.scrollIntoView(); const r = b.getBoundingClientRect(); return {{x: r.left + r.width / 2, y: r.top + r.height / 2}};""")
        if not c.check(f"the legend has a delete button for {LAYER}", button is not None):
            return
        self.driver.click(button["x"], button["y"])

        async def deleted() -> bool:
            out = await call(self.client, "describe_styles", {"source": SOURCE})
            return LAYER not in [layer["name"] for layer in out["data"]["layers"]]
        await wait_for(f"{LAYER} to be removed", deleted)
        c.check(f"{LAYER} deleted in the page is gone from describe_styles", True)

    @staticmethod
    async def _async_has(probe: Callable[[], Awaitable[list[Any]]], wanted: Any) -> bool:
        return wanted in await probe()

    def uncovered_server(self) -> tuple[str, dict[str, Any]] | None:
        """The first server node whose centre shows on screen."""
        for node in self.driver.execute("return window.schemascope.scene().nodes.map((n) => n.id)"):
            if node.startswith("server-"):
                where = self.on_screen(node)
                if where and where["inside"] and not where["coveredBy"]:
                    return node, where
        return None

    async def wait_selection(self, what: str, expected: set[str]) -> list[str]:
        """The selected node ids once they are `expected` (or the last seen after the timeout, so
        the check shows what was selected instead)."""
        seen: list[str] = []

        async def probe() -> bool:
            out = await call(self.client, "describe_selection", {"source": SOURCE})
            seen[:] = out["data"].get("nodeIds", [])
            return set(seen) == expected
        try:
            await wait_for(f"{what} {sorted(expected)}", probe)
        except TimeoutError:
            pass
        return seen


# The server's token when it has one (--token-file): a list so that main can fill it.
TOKEN: list[str] = []


# ---- kill -9 and restart ----------------------------------------------------------------------

def http_tool(base_url: str, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
    """Calls a tool over `POST /v1/tools/{name}`; its envelope (failures included)."""
    request = urllib.request.Request(base_url + "v1/tools/" + name, data=json.dumps(arguments).encode(),
                                     headers={"Content-Type": "application/json", **mcp_client.HTTP_HEADERS}, method="POST")
    try:
        with urllib.request.urlopen(request, timeout=10) as response:
            return json.load(response)
    except urllib.error.HTTPError as error:
        return json.load(error)


def scene_colours(scene: dict[str, Any] | None) -> dict[str, str]:
    """Each node's drawn colour in a scene."""
    if not scene:
        return {}
    return {n["id"]: scene["nodeStyles"][n["s"]]["color"] for n in scene["nodes"]}


def poll(what: str, probe: Callable[[], Any], timeout: float = 30.0) -> Any:
    """`wait_for` for plain (non-async) code."""
    deadline = time.monotonic() + timeout
    while True:
        last = probe()
        if last:
            return last
        if time.monotonic() > deadline:
            raise TimeoutError(f"waited {timeout:.0f} s for {what}; last seen: {json.dumps(last, default=str)[:400]}")
        time.sleep(0.1)


def ask_harness(request: str, answer: str) -> None:
    """Asks the test harness (crates/cli/tests/it/web_view.rs) to act on the server; waits until done."""
    print(request, flush=True)
    line = sys.stdin.readline().strip()
    if line != answer:
        raise RuntimeError(f"the harness answered {line!r} to {request}, not {answer!r}")


def restart_phase(driver: WebDriver, base_url: str, c: Checks) -> None:
    """A burst of style changes over HTTP, the server killed with SIGKILL in the middle of it and
    restarted on the same port and session file: every acknowledged change is back, and the open
    page reconnects by itself and draws the restored state."""
    acknowledged: list[str] = []
    stop = threading.Event()
    colours = ["#ff0000", "#00ff00", "#0000ff", "#ffff00", "#ff00ff", "#00ffff"]

    def burst() -> None:
        for i in range(10_000):
            if stop.is_set():
                return
            name = f"burst-{i}"
            try:
                out = http_tool(base_url, "find_and_style_nodes", {
                    "source": SOURCE, "selector": "type == 'server'", "style": {"color": colours[i % len(colours)]}, "layer_name": name})
            except OSError:
                return  # the server is gone
            if out.get("success"):
                acknowledged.append(name)

    sender = threading.Thread(target=burst, daemon=True)
    sender.start()
    poll("five acknowledged style changes", lambda: len(acknowledged) >= 5)
    ask_harness("KILL-ME", "killed")
    stop.set()
    sender.join(timeout=30)
    c.check(f"the server was killed with SIGKILL in a burst, after {len(acknowledged)} acknowledged changes", len(acknowledged) >= 5)
    poll("the page to notice the server is gone", lambda: "live" not in driver.execute(PAGE_STATE_JS)["status"])
    ask_harness("RESTART-ME", "restarted")

    layers = [layer["name"] for layer in http_tool(base_url, "describe_styles", {"source": SOURCE})["data"]["layers"]]
    missing = [name for name in acknowledged if name not in layers]
    c.check("every change acknowledged before the kill is there after the restart", not missing, f"missing: {missing}")
    scene_request = urllib.request.Request(f"{base_url}v1/graph/scene?source={SOURCE}", headers=mcp_client.HTTP_HEADERS)
    with urllib.request.urlopen(scene_request, timeout=10) as response:
        restored = scene_colours(json.load(response))
    seen: dict[str, Any] = {}

    def page_matches() -> bool:
        state = driver.execute(PAGE_STATE_JS)
        seen["status"] = state["status"]
        seen["colours"] = scene_colours(driver.execute("return window.schemascope.scene()"))
        return "live" in state["status"] and seen["colours"] == restored
    try:
        poll("the page to reconnect and draw the restored state", page_matches)
        c.check("the page reconnected by itself and draws the restored state", True, seen["status"])
    except TimeoutError as error:
        differ = {k: (v, restored.get(k)) for k, v in seen.get("colours", {}).items() if restored.get(k) != v}
        c.check("the page reconnected by itself and draws the restored state", False, f"{error}; differing nodes: {list(differ.items())[:5]}")


async def run_all(args: argparse.Namespace, driver: WebDriver, c: Checks) -> None:
    base_url = args.url if args.url.endswith("/") else args.url + "/"
    async with Client(connect(base_url + "mcp")) as client:
        run = Run(driver, client, base_url, c, args.screenshots)
        try:
            await run.run()
        except Exception as error:  # noqa: BLE001 - reported as a failed check, with the page state
            try:
                page = run.page()
            except Exception:  # noqa: BLE001
                page = None
            c.check("web view run", False, f"{describe(error)}; page: {json.dumps(page)[:600]}")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--chromedriver", required=True, help="the chromedriver binary, e.g. /usr/bin/chromedriver")
    parser.add_argument("--chromium", required=True, help="the Chromium binary, e.g. /usr/bin/chromium")
    parser.add_argument("--url", required=True, help="the running server, e.g. http://127.0.0.1:8750/")
    parser.add_argument("--screenshots", type=Path, metavar="DIR", help="also save the screenshots to DIR")
    parser.add_argument("--restart", action="store_true",
                        help="then kill the server mid-burst and have it restarted: print KILL-ME and RESTART-ME, read "
                             "'killed' and 'restarted' on stdin (the harness in crates/cli/tests/it/web_view.rs does this)")
    parser.add_argument("--token-file", type=Path, metavar="PATH",
                        help="the server's token file: the browser logs in with /?token=, HTTP calls send it as a bearer token")
    args = parser.parse_args()
    if args.token_file:
        TOKEN.append(args.token_file.read_text().strip())
        mcp_client.HTTP_HEADERS["Authorization"] = f"Bearer {TOKEN[0]}"

    started = time.monotonic()
    try:
        driver = WebDriver(args.chromedriver, args.chromium)
    except (WebDriverError, OSError) as error:
        print(f"error: cannot start headless Chromium through chromedriver: {error}", file=sys.stderr)
        return 2
    c = Checks()
    c.check(f"headless Chromium {driver.browser_version} started through chromedriver", True)
    try:
        try:
            anyio.run(run_all, args, driver, c)
        except Exception as error:  # noqa: BLE001 - a connection failure fails the run
            c.check("MCP session", False, describe(error))
        if args.restart:
            try:
                restart_phase(driver, args.url if args.url.endswith("/") else args.url + "/", c)
            except Exception as error:  # noqa: BLE001 - reported as a failed check
                c.check("kill -9 and restart", False, describe(error))
    finally:
        driver.close()
    print(f"took {time.monotonic() - started:.1f} s", flush=True)
    print(f"{c.passed} passed, {c.failed} failed", flush=True)
    return 1 if c.failed else 0


if __name__ == "__main__":
    sys.exit(main())
