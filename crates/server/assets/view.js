// schemascope graph view: draws the session's scene on a 2D canvas (3D by perspective
// projection), follows the server's change events, and sends selections and camera moves back
// through the same tools the LLM calls.
"use strict";

const params = new URLSearchParams(location.search);
const source = params.get("source");
const withSource = (body) => (source ? Object.assign({ source }, body) : body);
const query = source ? "?source=" + encodeURIComponent(source) : "";

const canvas = document.getElementById("graph");
const ctx = canvas.getContext("2d");
const statusEl = document.getElementById("status");
const errorEl = document.getElementById("error");
const boxEl = document.getElementById("box");

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
};

function showError(message) {
  errorEl.textContent = message;
  errorEl.style.display = message ? "block" : "none";
}

async function callTool(name, args) {
  const response = await fetch("/v1/tools/" + name, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify(withSource(args)),
  });
  const result = await response.json();
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

function shapePath(shape, x, y, r) {
  ctx.beginPath();
  switch (shape) {
    case "box": case "cube": case "square":
      ctx.rect(x - r, y - r, 2 * r, 2 * r); break;
    case "cone": case "tetrahedron": case "triangle":
      ctx.moveTo(x, y - r); ctx.lineTo(x + r * 0.95, y + r * 0.7); ctx.lineTo(x - r * 0.95, y + r * 0.7); ctx.closePath(); break;
    case "octahedron": case "diamond":
      ctx.moveTo(x, y - r); ctx.lineTo(x + r, y); ctx.lineTo(x, y + r); ctx.lineTo(x - r, y); ctx.closePath(); break;
    case "cylinder":
      ctx.ellipse(x, y, r, r * 0.75, 0, 0, 2 * Math.PI); break;
    default:
      ctx.arc(x, y, r, 0, 2 * Math.PI);
  }
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
  // Edges under nodes.
  for (const e of scene.edges) {
    const style = scene.edgeStyles[e.s];
    const a = state.projected[e.a], b = state.projected[e.b];
    if (!a || !b || style.hidden) continue;
    const selected = state.selectedEdges.has(e.id);
    ctx.globalAlpha = style.opacity;
    ctx.strokeStyle = selected ? "#f0c040" : style.color;
    ctx.lineWidth = Math.max(0.5, style.width * 2) + (selected ? 2 : 0);
    ctx.beginPath(); ctx.moveTo(a.x, a.y); ctx.lineTo(b.x, b.y); ctx.stroke();
    if (style.arrow && style.arrow !== "none") {
      const angle = Math.atan2(b.y - a.y, b.x - a.x);
      const tipX = b.x - Math.cos(angle) * b.r, tipY = b.y - Math.sin(angle) * b.r;
      const size = 4 + ctx.lineWidth * 2;
      ctx.fillStyle = ctx.strokeStyle;
      ctx.beginPath();
      ctx.moveTo(tipX, tipY);
      ctx.lineTo(tipX - size * Math.cos(angle - 0.4), tipY - size * Math.sin(angle - 0.4));
      ctx.lineTo(tipX - size * Math.cos(angle + 0.4), tipY - size * Math.sin(angle + 0.4));
      ctx.closePath(); ctx.fill();
    }
  }
  ctx.globalAlpha = 1;
  // Nodes far to near, so nearer ones cover farther ones.
  const order = scene.nodes.map((_, i) => i).filter((i) => state.projected[i]);
  order.sort((i, j) => state.projected[j].depth - state.projected[i].depth);
  state.order = order;
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
    if (state.selectedNodes.has(n.id)) {
      ctx.globalAlpha = 1;
      ctx.strokeStyle = "#f0c040";
      ctx.lineWidth = 2;
      ctx.setLineDash([4, 3]);
      shapePath("sphere", p.x, p.y, p.r + 4);
      ctx.stroke();
      ctx.setLineDash([]);
    }
  }
  ctx.globalAlpha = 1;
  state.drawnVersion = scene.version;
  const selected = state.selectedNodes.size + state.selectedEdges.size;
  statusEl.textContent = `${scene.source}: ${scene.nodes.length} nodes, ${scene.edges.length} edges · ${scene.dimension.toUpperCase()} · ` +
    `${scene.layout.type}${scene.layout.settled ? "" : " (not settled)"} · ${selected} selected · v${scene.version}${state.live ? " · live" : ""}${state.note ? " · " + state.note : ""}`;
}

// ---- scene and live updates ----------------------------------------------------------------

async function fetchScene() {
  if (state.fetching) { state.refetch = true; return; }
  state.fetching = true;
  try {
    do {
      state.refetch = false;
      const response = await fetch("/v1/graph/scene" + query, { cache: "no-store" });
      const body = await response.json();
      if (!response.ok) { showError(body.message || "cannot load the graph"); return; }
      state.scene = body;
      state.camera = JSON.parse(JSON.stringify(body.camera));
      state.selectedNodes = new Set(body.selection.nodes);
      state.selectedEdges = new Set(body.selection.edges);
      draw();
    } while (state.refetch);
  } catch (error) {
    showError("cannot reach the server: " + error);
  } finally {
    state.fetching = false;
  }
}

function listen() {
  const events = new EventSource("/v1/graph/events" + query);
  events.addEventListener("changed", (event) => {
    state.live = true;
    // A reload that unselected vanished ids or removed stale results says so: show it.
    try { const notes = JSON.parse(event.data).notes; if (notes && notes.length) state.note = notes.join(" · "); } catch (_) { /* not JSON: nothing to show */ }
    fetchScene();
  });
  // The browser reconnects by itself after the server went away (restarted, killed): whatever
  // changed meanwhile sent no event, so every (re)connection fetches the scene.
  events.onopen = () => { state.live = true; fetchScene(); };
  events.onerror = () => { state.live = false; if (state.scene) draw(); };
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
  if (!drag || !state.scene) return;
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
  else callTool("select", { ids: [id], mode: "replace" });
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
};

fetchScene().then(() => { listen(); reportViewport(); });
