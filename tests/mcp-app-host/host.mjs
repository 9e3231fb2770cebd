// A minimal MCP Apps host for tests: what a chat client does with schemascope's graph view,
// built on the official SDKs. This process is the client side of the host: it starts the
// server as a child and talks MCP to it over stdio with the official client
// (@modelcontextprotocol/client), declaring the MCP Apps extension. The browser side
// (host-page.js, bundled here with esbuild) is the chat window: it renders each tool's app in a
// sandboxed iframe with the official AppBridge (@modelcontextprotocol/ext-apps/app-bridge) and
// relays the app's requests to this process, which forwards them to the server.
//
//   node host.mjs --deps DIR [--port N] -- SERVER_COMMAND [ARGS...]
//
// DIR holds node_modules installed from this folder's package-lock.json (scripts/test does it).
// Prints `HOST http://127.0.0.1:PORT/` once the server answered `initialize`.

import http from "node:http";
import path from "node:path";
import { readFile } from "node:fs/promises";
import { fileURLToPath, pathToFileURL } from "node:url";

const here = path.dirname(fileURLToPath(import.meta.url));
const argv = process.argv.slice(2);
const split = argv.indexOf("--");
if (split < 0 || split === argv.length - 1) {
  console.error("usage: node host.mjs --deps DIR [--port N] -- SERVER_COMMAND [ARGS...]");
  process.exit(2);
}
const options = Object.fromEntries(
  argv.slice(0, split).reduce((pairs, arg, i, all) => (arg.startsWith("--") ? [...pairs, [arg.slice(2), all[i + 1]]] : pairs), []),
);
const [command, ...commandArgs] = argv.slice(split + 1);
const modules = path.join(path.resolve(options.deps), "node_modules");
const load = (file) => import(pathToFileURL(path.join(modules, file)).href);

const { Client } = await load("@modelcontextprotocol/client/dist/index.mjs");
const { StdioClientTransport } = await load("@modelcontextprotocol/client/dist/stdio.mjs");
const esbuild = await load("esbuild/lib/main.js");

const APP_MIME_TYPE = "text/html;profile=mcp-app";
const client = new Client(
  { name: "schemascope-test-host", version: "1.0.0" },
  { capabilities: { extensions: { "io.modelcontextprotocol/ui": { mimeTypes: [APP_MIME_TYPE] } } } },
);
await client.connect(new StdioClientTransport({ command, args: commandArgs, stderr: "inherit" }));

const bundle = await esbuild.build({
  entryPoints: [path.join(here, "host-page.js")],
  bundle: true,
  write: false,
  format: "esm",
  platform: "browser",
  nodePaths: [modules],
  logLevel: "error",
});
const pageScript = bundle.outputFiles[0].text;
const pageHtml = await readFile(path.join(here, "host.html"), "utf8");

// What the page may ask of the server: the requests a host makes for itself and for its apps.
const forward = {
  "tools/list": (params) => client.listTools(params),
  "tools/call": (params) => client.callTool(params),
  "resources/list": (params) => client.listResources(params),
  "resources/read": (params) => client.readResource(params),
};

const MAX_BODY = 1 << 20;
const server = http.createServer(async (request, response) => {
  const reply = (status, type, body) => {
    response.writeHead(status, { "content-type": type, "cache-control": "no-store" });
    response.end(body);
  };
  if (request.method === "GET" && request.url === "/") return reply(200, "text/html; charset=utf-8", pageHtml);
  if (request.method === "GET" && request.url === "/host-page.js") return reply(200, "text/javascript", pageScript);
  if (request.method !== "POST" || request.url !== "/rpc") return reply(404, "text/plain", "not found");
  let body = "";
  for await (const chunk of request) {
    body += chunk;
    if (body.length > MAX_BODY) return reply(413, "text/plain", "too large");
  }
  try {
    const { method, params } = JSON.parse(body);
    const call = forward[method];
    if (!call) return reply(400, "application/json", JSON.stringify({ error: `not forwarded: ${method}` }));
    reply(200, "application/json", JSON.stringify({ result: await call(params || {}) }));
  } catch (error) {
    reply(200, "application/json", JSON.stringify({ error: String((error && error.message) || error) }));
  }
});
server.listen(Number(options.port || 0), "127.0.0.1", () => {
  console.log(`HOST http://127.0.0.1:${server.address().port}/`);
});

const stop = async () => {
  server.close();
  await client.close().catch(() => {});
  process.exit(0);
};
process.on("SIGTERM", stop);
process.on("SIGINT", stop);
process.stdin.on("end", stop);
process.stdin.resume();
