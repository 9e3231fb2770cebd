// schemascope graph view: draws the session's scene on a 2D canvas (3D by perspective
// projection), follows the server's change events, and sends selections and camera moves back
// through the same tools the LLM calls.
"use strict";

const params = new URLSearchParams(location.search);
let source = params.get("source");
const withSource = (body) => (source ? Object.assign({ source }, body) : body);
const query = () => (source ? "?source=" + encodeURIComponent(source) : "");

const canvas = document.getElementById("graph");
const ctx = canvas.getContext("2d");
const statusEl = document.getElementById("status");
const errorEl = document.getElementById("error");
const boxEl = document.getElementById("box");
const tooltipEl = document.getElementById("tooltip");
const legendEl = document.getElementById("legend");
const inspectorEl = document.getElementById("inspector");
const searchEl = document.getElementById("search");

const state = {
  note: null,       // what the last data reload did to the session (unselected ids, stale results)
  scene: null,      // the last scene from the server
  camera: null,     // the camera drawn (the server's, moved locally while dragging)
  projected: [],    // per node: {x, y, r, depth} on screen, or null when behind the camera
  order: [],        // the drawn nodes' indices in drawing order (the last one is on top)
  selectedNodes: new Set(),
  selectedEdges: new Set(),
  drawnVersion: -1,
  fetching: false,
  refetch: false,
  live: false,
  labelOrder: [],   // node indices, most important (largest) first: who gets a label when space is short
  labels: [],       // the labels drawn last: {id, text, x, y}
  hover: null,      // the node id under the pointer
  fitted: false,    // fitted to the window once, on first load
  inspected: null,  // the node id the inspector shows
};

// Text from the data goes into the page as text, never as markup.
function el(tag, attrs, ...children) {
  const node = document.createElement(tag);
  for (const [key, value] of Object.entries(attrs || {})) {
    if (key === "style") node.style.cssText = value;
    else if (key.startsWith("data-")) node.setAttribute(key, value);
    else node[key] = value;
  }
  for (const child of children) node.append(child instanceof Node ? child : document.createTextNode(String(child)));
  return node;
}

function showError(message) {
  errorEl.textContent = message;
  errorEl.style.display = message ? "block" : "none";
}

// ---- the link to the server ------------------------------------------------------------------
// Served over HTTP, the page calls the HTTP API and follows its change events. Inside a chat
// client (an MCP App), the host is the only channel: tools are called through it, and the scene
// is read with `read_scene`, which waits for the next change.

function httpLink() {
  return {
    async call(name, args) {
      const response = await fetch("/v1/tools/" + name, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify(withSource(args)),
      });
      return response.json();
    },
    async scene() {
      const response = await fetch("/v1/graph/scene" + query(), { cache: "no-store" });
      const body = await response.json();
      if (!response.ok) throw new Error(body.message || "cannot load the graph");
      return body;
    },
    // The pointer leaves with the page: the hover target must not outlive it.
    leaving() {
      if (state.hover) fetch("/v1/tools/report_hover", { method: "POST", keepalive: true, headers: { "content-type": "application/json" }, body: JSON.stringify(withSource({})) });
    },
    follow() {
      const events = new EventSource("/v1/graph/events" + query());
      events.addEventListener("changed", (event) => {
        state.live = true;
        // A reload that unselected vanished ids or removed stale results says so: show it.
        try { const notes = JSON.parse(event.data).notes; if (notes && notes.length) state.note = notes.join(" · "); } catch (_) { /* not JSON: nothing to show */ }
        fetchScene();
      });
      // The browser reconnects by itself after the server went away (restarted, killed):
      // whatever changed meanwhile sent no event, so every (re)connection fetches the scene.
      events.onopen = () => { state.live = true; fetchScene(); };
      events.onerror = () => { state.live = false; if (state.scene) draw(); };
    },
  };
}

// Inside a chat client: the MCP Apps protocol (mcp_app.js, inlined before this script in the app).
const APP_HEIGHT = 560;

function appLink() {
  let stopped = false;
  const app = mcpApp({
    name: "schemascope-graph-view",
    capabilities: { availableDisplayModes: ["inline", "fullscreen"] },
    onInitialized(result) {
      const box = (result && result.hostContext && result.hostContext.containerDimensions) || {};
      const height = box.height || Math.min(APP_HEIGHT, box.maxHeight || APP_HEIGHT);
      app.send({ method: "ui/notifications/size-changed", params: { height } });
    },
    onTeardown() { stopped = true; link.leaving(); },
    // The model named a graph: show that one.
    onToolInput(params) {
      const named = params && params.arguments && params.arguments.source;
      if (typeof named === "string" && named !== source) { source = named; fetchScene(); }
    },
    onToolResult() { fetchScene(); },
  });
  const link = {
    leaving() {
      if (state.hover) link.call("report_hover", {});
    },
    call: (name, args) => app.call(name, withSource(args)),
    async scene() {
      const answer = await link.call("read_scene", {});
      if (!answer.success) throw new Error(answer.message);
      return answer.data;
    },
    async follow() {
      while (!stopped) {
        const since = state.scene ? state.scene.version : 0;
        const answer = await link.call("read_scene", { since_version: since, wait_seconds: 20 });
        if (stopped) return;
        if (!answer.success) {
          state.live = false;
          if (state.scene) draw();
          await new Promise((resolve) => setTimeout(resolve, 2000));
          continue;
        }
        state.live = true;
        if (!answer.data.unchanged) showScene(answer.data);
      }
    },
  };
  return link;
}

const link = window.schemascopeLink === "mcp-app" ? appLink() : httpLink();
window.addEventListener("pagehide", () => link.leaving());

async function callTool(name, args) {
  const result = await link.call(name, args);
  if (!result.success) showError(result.message);
  return result;
}

// ---- camera maths -------------------------------------------------------------------------

const sub = (a, b) => [a[0] - b[0], a[1] - b[1], a[2] - b[2]];
const add = (a, b) => [a[0] + b[0], a[1] + b[1], a[2] + b[2]];
const scale = (a, s) => [a[0] * s, a[1] * s, a[2] * s];
const dot = (a, b) => a[0] * b[0] + a[1] * b[1] + a[2] * b[2];
const cross = (a, b) => [a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0]];
const norm = (a) => { const l = Math.hypot(a[0], a[1], a[2]) || 1; return scale(a, 1 / l); };
const FOV_HALF = Math.PI / 6; // 60° field of view, as the server frames presets

function basis(camera) {
  const forward = norm(sub(camera.target, camera.position));
  let up = [0, 1, 0];
  if (Math.abs(dot(forward, up)) > 0.999) up = [0, 0, -1];
  const right = norm(cross(forward, up));
  return { forward, right, up: cross(right, forward) };
}

function projector() {
  const w = canvas.clientWidth, h = canvas.clientHeight;
  const cam = state.camera;
  const focal = (h / 2) / Math.tan(FOV_HALF);
  const zoom = cam.zoom || 1;
  if (state.scene.dimension === "2d") {
    const distance = Math.hypot(...sub(cam.position, cam.target)) || 1;
    const s = focal / distance * zoom;
    return (p) => ({ x: w / 2 + (p[0] - cam.target[0]) * s, y: h / 2 - (p[1] - cam.target[1]) * s, k: s, depth: 0 });
  }
  const b = basis(cam);
  return (p) => {
    const d = sub(p, cam.position);
    const z = dot(d, b.forward);
    if (z <= 1e-3) return null;
    const k = focal / z * zoom;
    return { x: w / 2 + dot(d, b.right) * k, y: h / 2 - dot(d, b.up) * k, k, depth: z };
  };
}

// ---- drawing --------------------------------------------------------------------------------

const NODE_RADIUS = 2; // world units at size 1

// Adds a node's outline to `path` (the context itself, or a Path2D gathering many nodes).
function addShape(path, shape, x, y, r) {
  switch (shape) {
    case "box": case "cube": case "square":
      path.rect(x - r, y - r, 2 * r, 2 * r); break;
    case "cone": case "tetrahedron": case "triangle":
      path.moveTo(x, y - r); path.lineTo(x + r * 0.95, y + r * 0.7); path.lineTo(x - r * 0.95, y + r * 0.7); path.closePath(); break;
    case "octahedron": case "diamond":
      path.moveTo(x, y - r); path.lineTo(x + r, y); path.lineTo(x, y + r); path.lineTo(x - r, y); path.closePath(); break;
    case "cylinder":
      path.moveTo(x + r, y); path.ellipse(x, y, r, r * 0.75, 0, 0, 2 * Math.PI); break;
    default:
      path.moveTo(x + r, y); path.arc(x, y, r, 0, 2 * Math.PI);
  }
}

function shapePath(shape, x, y, r) {
  ctx.beginPath();
  addShape(ctx, shape, x, y, r);
}


function draw() {
  const scene = state.scene;
  if (!scene) return;
  const dpr = window.devicePixelRatio || 1;
  const w = canvas.clientWidth, h = canvas.clientHeight;
  if (canvas.width !== Math.round(w * dpr) || canvas.height !== Math.round(h * dpr)) {
    canvas.width = Math.round(w * dpr);
    canvas.height = Math.round(h * dpr);
  }
  ctx.setTransform(dpr, 0, 0, dpr, 0, 0);
  ctx.fillStyle = "#15181d";
  ctx.fillRect(0, 0, w, h);
  const project = projector();
  state.projected = scene.nodes.map((n) => {
    const style = scene.nodeStyles[n.s];
    const p = project(n.p);
    if (!p || style.hidden) return null;
    return { x: p.x, y: p.y, r: Math.max(3, NODE_RADIUS * style.size * p.k), depth: p.depth };
  });
  // Edges under nodes, those wholly off screen left out. (One path per style drawn at once
  // takes many times longer to rasterise on the GPU: bench/graph_view_bench.py.)
  for (const e of scene.edges) {
    const style = scene.edgeStyles[e.s];
    const a = state.projected[e.a], b = state.projected[e.b];
    if (!a || !b || style.hidden) continue;
    if ((a.x < 0 && b.x < 0) || (a.x > w && b.x > w) || (a.y < 0 && b.y < 0) || (a.y > h && b.y > h)) continue;
    const selected = state.selectedEdges.has(e.id);
    ctx.globalAlpha = style.opacity;
    ctx.strokeStyle = ctx.fillStyle = selected ? "#f0c040" : style.color;
    ctx.lineWidth = Math.max(0.5, style.width * 2) + (selected ? 2 : 0);
    ctx.beginPath(); ctx.moveTo(a.x, a.y); ctx.lineTo(b.x, b.y); ctx.stroke();
    if (style.arrow && style.arrow !== "none") {
      ctx.beginPath();
      arrowHead(ctx, a, b, 4 + ctx.lineWidth * 2);
      ctx.fill();
    }
  }
  ctx.globalAlpha = 1;
  // Nodes far to near, so nearer ones cover farther ones (on many nodes, within a style).
  const order = scene.nodes.map((_, i) => i).filter((i) => state.projected[i]);
  order.sort((i, j) => state.projected[j].depth - state.projected[i].depth);
  state.order = order;
  const onScreen = (p) => p.x + p.r >= 0 && p.y + p.r >= 0 && p.x - p.r <= w && p.y - p.r <= h;
  drawNodes(order.filter((i) => onScreen(state.projected[i])));
  ctx.globalAlpha = 1;
  drawLabels();
  state.drawnVersion = scene.version;
  // For the benchmark (bench/graph_view_bench.py): when the first frame of a graph was drawn.
  if (state.firstFrameAt === undefined && scene.nodes.length) state.firstFrameAt = performance.now();
  const selected = state.selectedNodes.size + state.selectedEdges.size;
  statusEl.textContent = `${scene.source}: ${scene.nodes.length} nodes, ${scene.edges.length} edges · ${scene.dimension.toUpperCase()} · ` +
    `${scene.layout.type}${scene.layout.settled ? "" : " (not settled)"} · ${selected} selected · v${scene.version}${state.live ? " · live" : ""}${state.note ? " · " + state.note : ""}`;
}

function arrowHead(path, a, b, size) {
  const angle = Math.atan2(b.y - a.y, b.x - a.x);
  const tipX = b.x - Math.cos(angle) * b.r, tipY = b.y - Math.sin(angle) * b.r;
  path.moveTo(tipX, tipY);
  path.lineTo(tipX - size * Math.cos(angle - 0.4), tipY - size * Math.sin(angle - 0.4));
  path.lineTo(tipX - size * Math.cos(angle + 0.4), tipY - size * Math.sin(angle + 0.4));
  path.closePath();
}

function selectionRing(p) {
  ctx.globalAlpha = 1;
  ctx.strokeStyle = "#f0c040";
  ctx.lineWidth = 2;
  ctx.setLineDash([4, 3]);
  shapePath("sphere", p.x, p.y, p.r + 4);
  ctx.stroke();
  ctx.setLineDash([]);
}

// Nodes one by one, in the order given (far to near).
function drawNodes(order) {
  const scene = state.scene;
  for (const i of order) {
    const n = scene.nodes[i], p = state.projected[i], style = scene.nodeStyles[n.s];
    ctx.globalAlpha = style.opacity;
    if (style.glow) {
      ctx.shadowColor = style.glow.color;
      ctx.shadowBlur = 12 * (style.glow.strength || 1);
    }
    ctx.fillStyle = style.color;
    shapePath(style.shape, p.x, p.y, p.r);
    ctx.fill();
    ctx.shadowBlur = 0;
    if (style.outline) {
      ctx.strokeStyle = style.outline.color;
      ctx.lineWidth = Math.max(1, style.outline.width * 1.5);
      ctx.stroke();
    }
    if (state.selectedNodes.has(n.id)) selectionRing(p);
  }
}

// Labels by importance (size) first, each drawn only where it overlaps no label already drawn:
// zooming in makes room for more. Bounded per frame, so a 100k-node graph stays responsive.
const MAX_LABELS = 400, MAX_LABEL_TRIES = 6000, CELL = 64, LABEL_GAP = 5;
function drawLabels() {
  const scene = state.scene, w = canvas.clientWidth, h = canvas.clientHeight;
  const grid = new Map();
  const placed = [];
  ctx.font = "11px system-ui, sans-serif";
  ctx.textBaseline = "middle";
  ctx.lineWidth = 3;
  ctx.strokeStyle = "rgba(10,12,16,.85)";
  ctx.fillStyle = "#e6edf3";
  let tries = 0;
  for (const i of state.labelOrder) {
    if (placed.length >= MAX_LABELS || tries >= MAX_LABEL_TRIES) break;
    const p = state.projected[i];
    if (!p || p.x < -50 || p.y < -20 || p.x > w + 50 || p.y > h + 20) continue;
    tries++;
    const text = scene.nodes[i].l;
    if (!text) continue;
    const width = ctx.measureText(text).width;
    // With a margin, so two labels never touch and read as one.
    const box = { x0: p.x + p.r + 3 - LABEL_GAP, y0: p.y - 8, x1: p.x + p.r + 3 + width + LABEL_GAP, y1: p.y + 8 };
    const cells = [];
    for (let cx = Math.floor(box.x0 / CELL); cx <= Math.floor(box.x1 / CELL); cx++) {
      for (let cy = Math.floor(box.y0 / CELL); cy <= Math.floor(box.y1 / CELL); cy++) cells.push(cx + "," + cy);
    }
    const overlaps = cells.some((c) => (grid.get(c) || []).some((b) => b.x0 < box.x1 && box.x0 < b.x1 && b.y0 < box.y1 && box.y0 < b.y1));
    if (overlaps) continue;
    for (const c of cells) { if (!grid.has(c)) grid.set(c, []); grid.get(c).push(box); }
    const x = box.x0 + LABEL_GAP;
    ctx.strokeText(text, x, p.y);
    ctx.fillText(text, x, p.y);
    placed.push({ id: scene.nodes[i].id, text, x, y: p.y, w: width });
  }
  state.labels = placed;
}

// ---- legend and layer list -------------------------------------------------------------------

function figure(value) {
  if (typeof value !== "number") return String(value);
  return Math.abs(value) >= 1e4 || (value !== 0 && Math.abs(value) < 1e-3) ? value.toExponential(2) : String(+value.toPrecision(4));
}

function mappingBlock(mapping) {
  const block = el("div", { className: "mapping", "data-property": mapping.property });
  const what = mapping.channel === "size" ? (mapping.elements === "edges" ? "width" : "size") : "colour";
  const property = mapping.property.replace(/^algorithmResults\.schemascope\./, "");
  block.append(el("div", { className: "what", title: mapping.property }, `${what} by ${property} (${mapping.scale || "?"})`));
  if (mapping.error) { block.append(el("div", { className: "what" }, mapping.error)); return block; }
  if (mapping.entries) {
    for (const entry of mapping.entries) {
      block.append(el("div", { className: "row legend-value", "data-value": JSON.stringify(entry.value) },
        el("span", { className: "swatch", style: "background:" + entry.color }), el("span", {}, String(entry.value)), el("span", { className: "what" }, "· " + entry.count)));
    }
    if (mapping.other) {
      block.append(el("div", { className: "row legend-value", "data-value": "other" },
        el("span", { className: "swatch", style: "background:" + mapping.other.color }), el("span", {}, `other (${mapping.other.values} values)`), el("span", { className: "what" }, "· " + mapping.other.count)));
    }
  } else if (mapping.stops && mapping.channel === "color") {
    block.append(el("div", { className: "bar", style: "background:linear-gradient(to right," + mapping.stops.map((s) => s.color).join(",") + ")" }));
    block.append(el("div", { className: "ends" }, el("span", {}, figure(mapping.stops[0].value)), el("span", {}, figure(mapping.stops[mapping.stops.length - 1].value))));
  } else if (mapping.stops) {
    const key = mapping.elements === "edges" ? "width" : "size";
    block.append(el("div", { className: "ends" }, ...mapping.stops.map((s) => el("span", {}, `${figure(s.value)} → ${s[key]}`))));
  }
  if (mapping.withoutValue) block.append(el("div", { className: "what" }, `${mapping.withoutValue} without a value keep lower layers' style`));
  return block;
}

function renderLegend() {
  const entries = (state.scene.legend || []).filter((e) => !e.builtIn);
  legendEl.replaceChildren(el("div", { className: "what" }, entries.length ? "Style layers (lower in the list win)" : "No style layers: every node is drawn in the default style."));
  for (const entry of entries) {
    const selector = entry.selector ? entry.selector : entry.ids !== undefined ? `${entry.ids} ids` : `all ${entry.elements}`;
    const head = el("div", { className: "head" });
    if (entry.color) head.append(el("span", { className: "swatch", style: "background:" + entry.color }));
    head.append(el("span", { className: "name" }, entry.layer));
    // The person's layer list: order (the list is the order layers apply in: lower ones win),
    // hide or show, delete.
    const button = (className, title, text, act) => {
      const b = el("button", { className, title, "data-layer": entry.layer }, text);
      b.addEventListener("click", act);
      head.append(b);
    };
    const arrange = (action) => () => callTool("arrange_layer", { layer_name: entry.layer, action });
    button("earlier", "apply earlier (move up): the next layer wins over it", "↑", arrange("earlier"));
    button("later", "apply later (move down): it wins over the next layer", "↓", arrange("later"));
    button("toggle", entry.layerHidden ? "show this layer" : "hide this layer", entry.layerHidden ? "show" : "hide", arrange(entry.layerHidden ? "show" : "hide"));
    button("delete", "remove this layer", "✕", () => callTool("clear_styles", { layer_name: entry.layer }));
    const item = el("div", { className: "entry" + (entry.layerHidden ? " hidden" : ""), "data-layer": entry.layer, "data-elements": entry.elements },
      head, el("div", { className: "what" }, `${entry.elements}: ${selector} · ${entry.matched ?? "?"} matched · ${entry.source}`));
    if (entry.look && entry.look.length) {
      // Each fixed mark the layer makes, a colour with its swatch.
      const look = el("div", { className: "what look" });
      entry.look.forEach((phrase, i) => {
        const colour = /#[0-9a-fA-F]{6}\b/.exec(phrase);
        look.append(i ? " · " : "", ...(colour ? [el("span", { className: "swatch", style: "background:" + colour[0] })] : []), " " + phrase);
      });
      item.append(look);
    }
    for (const mapping of entry.mappings || []) item.append(mappingBlock(mapping));
    legendEl.append(item);
  }
}

// ---- inspector and tooltip -------------------------------------------------------------------

async function inspect(id) {
  state.inspected = id;
  const [selection, styles] = await Promise.all([
    callTool("describe_selection", { include_data: true }),
    callTool("describe_styles", { compute_for: id }),
  ]);
  if (state.inspected !== id) return;
  const item = ((selection.data || {}).nodes || []).find((n) => n.id === id);
  const data = Object.assign({}, item ? item.data : {});
  const results = data.algorithmResults;
  delete data.algorithmResults;
  const close = el("button", { title: "close" }, "✕");
  close.addEventListener("click", () => { state.inspected = null; inspectorEl.style.display = "none"; });
  const node = state.scene.nodes.find((n) => n.id === id);
  const parts = [el("h3", {}, el("span", { className: "inspected-id" }, node && node.l !== id ? `${node.l} (${id})` : id), close)];
  parts.push(el("h4", {}, "data"), el("pre", { className: "inspected-data" }, JSON.stringify(data, null, 1)));
  if (results) parts.push(el("h4", {}, "algorithm results"), el("pre", { className: "inspected-results" }, JSON.stringify(results, null, 1)));
  if (styles.success) {
    parts.push(el("h4", {}, "computed style"), el("pre", { className: "inspected-style" }, JSON.stringify(styles.data.computedStyle, null, 1)));
    parts.push(el("h4", {}, "from layers"));
    for (const layer of styles.data.contributingLayers) {
      const line = el("div", { className: "row inspected-layer", "data-layer": layer.name }, `${layer.name}: ${layer.contributed.join(", ")}`);
      parts.push(line);
      for (const m of layer.mapped || []) parts.push(el("div", { className: "what" }, `${m.field} ← ${m.property} = ${JSON.stringify(m.value)} → ${JSON.stringify(m.result)}`));
    }
  }
  inspectorEl.replaceChildren(...parts);
  inspectorEl.style.display = "block";
}

let hoverTimer = null;
function hoverOn(index, x, y) {
  const id = index >= 0 ? state.scene.nodes[index].id : null;
  if (id) {
    const node = state.scene.nodes[index];
    tooltipEl.textContent = node.l && node.l !== id ? `${node.l} · ${id}` : id;
    Object.assign(tooltipEl.style, { display: "block", left: x + 14 + "px", top: y + 10 + "px" });
  } else {
    tooltipEl.style.display = "none";
  }
  if (id === state.hover) return;
  state.hover = id;
  clearTimeout(hoverTimer);
  hoverTimer = setTimeout(() => link.call("report_hover", id ? { id } : {}).catch(() => {}), 120);
}

// ---- fit and search --------------------------------------------------------------------------

function fit() {
  const scene = state.scene;
  const visible = scene.nodes.filter((n) => !scene.nodeStyles[n.s].hidden);
  if (!visible.length) return;
  const lo = [Infinity, Infinity, Infinity], hi = [-Infinity, -Infinity, -Infinity];
  for (const n of visible) for (let k = 0; k < 3; k++) { lo[k] = Math.min(lo[k], n.p[k]); hi[k] = Math.max(hi[k], n.p[k]); }
  const center = [(lo[0] + hi[0]) / 2, (lo[1] + hi[1]) / 2, (lo[2] + hi[2]) / 2];
  // The panel covers the right of the canvas: fit the graph into the part left of it.
  const h = Math.max(1, canvas.clientHeight);
  const panel = document.getElementById("panel").getBoundingClientRect();
  const covered = panel.width && panel.width < canvas.clientWidth / 2 ? panel.width + 16 : 0;
  const free = Math.max(100, canvas.clientWidth - covered);
  const aspect = free / h;
  const focal = (h / 2) / Math.tan(FOV_HALF);
  const cam = state.camera;
  if (scene.dimension === "2d") {
    const half = Math.max((hi[0] - lo[0]) / 2 / aspect, (hi[1] - lo[1]) / 2, NODE_RADIUS * 4) * 1.15;
    const distance = half / Math.tan(FOV_HALF);
    const shift = covered / 2 / (focal / distance);
    cam.target = [center[0] + shift, center[1], 0];
    cam.position = [center[0] + shift, center[1], distance];
  } else {
    // The nearest camera, along the current direction, that sees every node inside the free part
    // of the window: each node needs a depth of at least its offset across the view over the
    // tangent of the half-angle (a bounding sphere would leave half the window empty).
    const direction = norm(sub(cam.position, cam.target));
    const b = basis({ position: add(center, direction), target: center });
    const tanY = Math.tan(FOV_HALF), tanX = tanY * aspect;
    let distance = NODE_RADIUS * 4 / tanY;
    for (const n of visible) {
      const d = sub(n.p, center);
      const need = Math.max(Math.abs(dot(d, b.right)) / tanX, Math.abs(dot(d, b.up)) / tanY);
      distance = Math.max(distance, need - dot(d, b.forward));
    }
    distance *= 1.08;
    cam.target = center;
    cam.position = add(center, scale(direction, distance));
    const right = basis(cam).right, shift = scale(right, covered / 2 / (focal / distance));
    cam.target = add(cam.target, shift);
    cam.position = add(cam.position, shift);
  }
  cam.zoom = 1;
  draw();
  // Sent now, with these values: a scene fetched meanwhile replaces state.camera.
  clearTimeout(cameraTimer);
  callTool("set_camera", { position: cam.position.slice(), target: cam.target.slice() });
}

searchEl.addEventListener("keydown", (e) => {
  if (e.key !== "Enter" || !state.scene) return;
  const text = searchEl.value.trim().toLowerCase();
  if (!text) return;
  const ids = state.scene.nodes.filter((n) => n.id.toLowerCase().includes(text) || (n.l || "").toLowerCase().includes(text)).map((n) => n.id);
  if (!ids.length) { showError(`no node's label or id contains "${searchEl.value.trim()}"`); return; }
  showError("");
  callTool("select", { ids: ids.slice(0, 1000), mode: "replace" });
  callTool("zoom_to_nodes", { ids: ids.slice(0, 1000) });
  if (ids.length === 1) inspect(ids[0]);
  else { state.inspected = null; inspectorEl.style.display = "none"; }
});
document.getElementById("fit").addEventListener("click", () => { if (state.scene) fit(); });

// ---- scene and live updates ----------------------------------------------------------------

// Draws `body`, a scene, and keeps what the page needs of it.
function showScene(body) {
  state.scene = body;
  state.camera = JSON.parse(JSON.stringify(body.camera));
  state.selectedNodes = new Set(body.selection.nodes);
  state.selectedEdges = new Set(body.selection.edges);
  state.labelOrder = body.nodes.map((_, i) => i).sort((i, j) => body.nodeStyles[body.nodes[j].s].size - body.nodeStyles[body.nodes[i].s].size);
  renderLegend();
  if (!state.fitted && body.nodes.length) { state.fitted = true; fit(); } else draw();
  if (state.inspected && body.nodes.some((n) => n.id === state.inspected)) inspect(state.inspected);
}

async function fetchScene() {
  if (state.fetching) { state.refetch = true; return; }
  state.fetching = true;
  try {
    do {
      state.refetch = false;
      showScene(await link.scene());
    } while (state.refetch);
  } catch (error) {
    showError("cannot load the graph: " + (error.message || error));
  } finally {
    state.fetching = false;
  }
}

// ---- interaction -----------------------------------------------------------------------------

// The node under (x, y): of the nodes whose disc holds the point, the one drawn on top (what the
// user sees there; in 2D every depth ties, so depth alone cannot tell); else the nearest within
// 2 pixels, since small nodes are hard to hit.
function nodeAt(x, y) {
  let near = -1, nearGap = Infinity;
  for (let k = state.order.length - 1; k >= 0; k--) {
    const i = state.order[k], p = state.projected[i];
    const gap = Math.hypot(p.x - x, p.y - y) - p.r;
    if (gap <= 0) return i;
    if (gap <= 2 && gap < nearGap) { near = i; nearGap = gap; }
  }
  return near;
}

let drag = null;
let cameraTimer = null;

function reportCamera() {
  clearTimeout(cameraTimer);
  cameraTimer = setTimeout(() => callTool("set_camera", { position: state.camera.position, target: state.camera.target }), 300);
}

canvas.addEventListener("contextmenu", (e) => e.preventDefault());
canvas.addEventListener("mousedown", (e) => {
  const rect = canvas.getBoundingClientRect();
  drag = { x0: e.clientX - rect.left, y0: e.clientY - rect.top, x: e.clientX, y: e.clientY, moved: false,
           box: e.shiftKey && e.button === 0, pan: e.button === 2 || e.ctrlKey, shift: e.shiftKey };
  canvas.classList.add("dragging");
});

window.addEventListener("mousemove", (e) => {
  if (!state.scene) return;
  if (!drag) {
    const rect = canvas.getBoundingClientRect();
    const x = e.clientX - rect.left, y = e.clientY - rect.top;
    if (e.target === canvas) hoverOn(nodeAt(x, y), x, y); else hoverOn(-1, x, y);
    return;
  }
  const dx = e.clientX - drag.x, dy = e.clientY - drag.y;
  const rect = canvas.getBoundingClientRect();
  drag.moved = drag.moved || Math.hypot(e.clientX - rect.left - drag.x0, e.clientY - rect.top - drag.y0) > 3;
  drag.x = e.clientX; drag.y = e.clientY;
  if (!drag.moved) return;
  if (drag.box) {
    const x = e.clientX - rect.left, y = e.clientY - rect.top;
    Object.assign(boxEl.style, { display: "block", left: Math.min(x, drag.x0) + "px", top: Math.min(y, drag.y0) + "px",
      width: Math.abs(x - drag.x0) + "px", height: Math.abs(y - drag.y0) + "px" });
    return;
  }
  const cam = state.camera;
  const offset = sub(cam.position, cam.target);
  const distance = Math.hypot(...offset);
  const pixel = distance * Math.tan(FOV_HALF) / (canvas.clientHeight / 2) / (cam.zoom || 1);
  if (drag.pan || state.scene.dimension === "2d") {
    const b = state.scene.dimension === "2d" ? { right: [1, 0, 0], up: [0, 1, 0] } : basis(cam);
    const move = add(scale(b.right, -dx * pixel), scale(b.up, dy * pixel));
    cam.position = add(cam.position, move);
    cam.target = add(cam.target, move);
  } else {
    // Orbit around the target: yaw about the world y axis, pitch about the camera's right axis.
    const yaw = -dx * 0.01, pitch = -dy * 0.01;
    let o = [offset[0] * Math.cos(yaw) + offset[2] * Math.sin(yaw), offset[1], -offset[0] * Math.sin(yaw) + offset[2] * Math.cos(yaw)];
    const right = norm(cross(o, [0, 1, 0]));
    const c = Math.cos(pitch), s = Math.sin(pitch);
    const rotated = add(add(scale(o, c), scale(cross(right, o), s)), scale(right, dot(right, o) * (1 - c)));
    if (Math.abs(norm(rotated)[1]) < 0.995) o = rotated;
    cam.position = add(cam.target, o);
  }
  draw();
});

window.addEventListener("mouseup", (e) => {
  if (!drag) return;
  const d = drag;
  drag = null;
  canvas.classList.remove("dragging");
  const rect = canvas.getBoundingClientRect();
  const x = e.clientX - rect.left, y = e.clientY - rect.top;
  // A shift-press that did not move is a shift-click (add/remove), not an empty box.
  if (d.box && d.moved) {
    boxEl.style.display = "none";
    const [x0, x1] = [Math.min(x, d.x0), Math.max(x, d.x0)], [y0, y1] = [Math.min(y, d.y0), Math.max(y, d.y0)];
    const ids = state.scene.nodes.filter((n, i) => { const p = state.projected[i]; return p && p.x >= x0 && p.x <= x1 && p.y >= y0 && p.y <= y1; }).map((n) => n.id);
    if (ids.length) callTool("select", { ids, mode: "add" });
    return;
  }
  if (d.moved) { reportCamera(); return; }
  const hit = nodeAt(x, y);
  if (hit < 0) {
    if (!d.shift && (state.selectedNodes.size || state.selectedEdges.size)) callTool("select", { mode: "clear" });
    return;
  }
  const id = state.scene.nodes[hit].id;
  if (d.shift) callTool("select", { ids: [id], mode: state.selectedNodes.has(id) ? "remove" : "add" });
  else callTool("select", { ids: [id], mode: "replace" }).then(() => inspect(id));
});

canvas.addEventListener("wheel", (e) => {
  if (!state.scene) return;
  e.preventDefault();
  const cam = state.camera;
  const factor = Math.exp(e.deltaY * 0.001);
  cam.position = add(cam.target, scale(sub(cam.position, cam.target), factor));
  draw();
  reportCamera();
}, { passive: false });

let resizeTimer = null;
function reportViewport() {
  clearTimeout(resizeTimer);
  resizeTimer = setTimeout(() => callTool("report_viewport", { width: canvas.clientWidth, height: canvas.clientHeight }), 200);
}
window.addEventListener("resize", () => { draw(); reportViewport(); });

// For tests and embedding: where a node is drawn, and which version is on screen.
window.schemascope = {
  nodePosition(id) {
    const i = state.scene ? state.scene.nodes.findIndex((n) => n.id === id) : -1;
    const p = i >= 0 ? state.projected[i] : null;
    return p ? { x: p.x, y: p.y, r: p.r } : null;
  },
  version: () => state.drawnVersion,
  scene: () => state.scene,
  labels: () => state.labels,
  fit: () => fit(),
  timing: () => ({ firstFrameAt: state.firstFrameAt }),
  // Pans `frames` times by a few pixels, drawing each frame: each frame's time in ms.
  benchPan(frames) {
    const times = [];
    for (let i = 0; i < frames; i++) {
      const cam = state.camera, step = Math.hypot(...sub(cam.position, cam.target)) * 0.01;
      const move = [i % 2 ? step : -step, step / 2, 0];
      cam.position = add(cam.position, move);
      cam.target = add(cam.target, move);
      const t = performance.now();
      draw();
      ctx.getImageData(0, 0, 1, 1); // waits for the frame to be drawn
      times.push(performance.now() - t);
    }
    return times;
  },
};

fetchScene().then(() => { link.follow(); reportViewport(); });
