// The MCP Apps protocol as schemascope's apps speak it (JSON-RPC over postMessage with the host):
// the few messages a view needs, inlined into each app. `mcpApp(options)` starts the handshake
// (`ui/initialize`, then `ui/notifications/initialized`) and returns `{ready, request, send, call}`;
// `call(name, args)` is a tool call through the host, answered as schemascope's
// `{success, message, data}` envelope. `options`: `name`, `capabilities`, and the handlers
// `onInitialized(result)`, `onToolInput(params)`, `onToolResult(params)`, `onHostContext(params)`,
// `onTeardown()` — each optional.
"use strict";

function mcpApp(options) {
  const APP_PROTOCOL = "2026-01-26";
  let nextId = 1;
  const pending = new Map();
  const send = (message) => window.parent.postMessage(Object.assign({ jsonrpc: "2.0" }, message), "*");
  const request = (method, params) => new Promise((resolve, reject) => {
    const id = nextId++;
    pending.set(id, { resolve, reject });
    send({ id, method, params });
  });
  const handle = (handler, params) => { if (handler) handler(params); };
  window.addEventListener("message", (event) => {
    const m = event.data;
    if (event.source !== window.parent || !m || m.jsonrpc !== "2.0") return;
    if (m.method === undefined) {
      const waiting = pending.get(m.id);
      if (!waiting) return;
      pending.delete(m.id);
      if (m.error) waiting.reject(new Error(m.error.message || "the host refused"));
      else waiting.resolve(m.result);
    } else if (m.id !== undefined) {
      // The host's requests: teardown before it removes the view, and pings.
      if (m.method === "ui/resource-teardown") handle(options.onTeardown);
      if (m.method === "ui/resource-teardown" || m.method === "ping") send({ id: m.id, result: {} });
      else send({ id: m.id, error: { code: -32601, message: `not handled by ${options.name}: ${m.method}` } });
    } else if (m.method === "ui/notifications/tool-input") {
      handle(options.onToolInput, m.params);
    } else if (m.method === "ui/notifications/tool-result") {
      handle(options.onToolResult, m.params);
    } else if (m.method === "ui/notifications/host-context-changed") {
      handle(options.onHostContext, m.params);
    }
  });
  const ready = request("ui/initialize", {
    appInfo: { name: options.name, version: "1" },
    appCapabilities: options.capabilities || {},
    protocolVersion: APP_PROTOCOL,
  }).then((result) => {
    send({ method: "ui/notifications/initialized", params: {} });
    handle(options.onInitialized, result);
  });
  // A tool result as the envelope: its structured content, else its text parsed.
  const envelope = (result) => {
    if (result && result.structuredContent && typeof result.structuredContent.success === "boolean") return result.structuredContent;
    const text = result && Array.isArray(result.content) ? result.content.find((c) => c.type === "text") : null;
    try { return JSON.parse(text.text); } catch (_) { return { success: false, message: text ? text.text : "the host gave no answer" }; }
  };
  return {
    ready,
    request,
    send,
    envelope,
    async call(name, args) {
      await ready;
      try {
        return envelope(await request("tools/call", { name, arguments: args }));
      } catch (error) {
        return { success: false, message: String(error.message || error) };
      }
    },
  };
}
