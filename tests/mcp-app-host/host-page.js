// The chat window of the test host (see host.mjs): `window.harness.callTool(name, args)` calls a
// tool as the model would; when the tool names an app (`_meta.ui.resourceUri`), the app's HTML is
// read from the server and rendered below the call in a sandboxed iframe, connected with the
// official AppBridge, which sends it the call's input and result and serves its requests.
import {
  AppBridge,
  PostMessageTransport,
  RESOURCE_MIME_TYPE,
  getToolUiResourceUri,
} from "@modelcontextprotocol/ext-apps/app-bridge";

const HOST_INFO = { name: "schemascope-test-host", version: "1.0.0" };

// What a host's sandbox allows an app that asked for no domains: inline code, nothing fetched.
const CSP = "default-src 'none'; script-src 'unsafe-inline'; style-src 'unsafe-inline'; img-src data:; connect-src 'none'";

async function rpc(method, params) {
  const response = await fetch("/rpc", { method: "POST", body: JSON.stringify({ method, params }) });
  const body = await response.json();
  if (body.error) throw new Error(body.error);
  return body.result;
}

const log = []; // every request an app made through the host: {app, method, name, allowed}
const apps = []; // {iframe, bridge, tool, initialized}
let tools = null;

async function toolList() {
  if (!tools) tools = (await rpc("tools/list", {})).tools;
  return tools;
}

// Who may call a tool: `_meta.ui.visibility`, both the model and apps when absent.
const visibility = (tool) => (tool && tool._meta && tool._meta.ui && tool._meta.ui.visibility) || ["model", "app"];

function render(uri, tool, args, result, index) {
  return new Promise(async (resolve, reject) => {
    try {
      const read = await rpc("resources/read", { uri });
      const content = read.contents.find((c) => c.uri === uri);
      if (!content || content.mimeType !== RESOURCE_MIME_TYPE) throw new Error(`${uri} is not an MCP App (${content && content.mimeType})`);
      const html = content.text.replace(/<head>/i, `<head><meta http-equiv="Content-Security-Policy" content="${CSP}">`);
      const turn = document.getElementById(`turn-${index}`);
      const iframe = document.createElement("iframe");
      iframe.setAttribute("sandbox", "allow-scripts");
      iframe.id = `app-${index}`;
      iframe.srcdoc = html;
      turn.append(iframe);
      const bridge = new AppBridge(null, HOST_INFO, { serverTools: {}, serverResources: {}, logging: {} });
      bridge.setHostContext({ theme: "light", displayMode: "inline", containerDimensions: { maxHeight: 700 } });
      const app = { index, tool: tool.name, iframe, bridge, initialized: false, height: null };
      apps.push(app);
      bridge.oncalltool = async (params) => {
        const target = (await toolList()).find((t) => t.name === params.name);
        const allowed = !!target && visibility(target).includes("app");
        log.push({ app: index, method: "tools/call", name: params.name, allowed });
        if (!allowed) throw new Error(`tool ${params.name} is not callable by apps`);
        return rpc("tools/call", params);
      };
      bridge.onreadresource = async (params) => {
        log.push({ app: index, method: "resources/read", uri: params.uri, allowed: true });
        return rpc("resources/read", params);
      };
      bridge.addEventListener("sizechange", ({ height }) => {
        app.height = height;
        if (height) iframe.style.height = `${Math.min(height, 700)}px`;
      });
      bridge.oninitialized = async () => {
        app.initialized = true;
        await bridge.sendToolInput({ arguments: args });
        await bridge.sendToolResult(result);
        resolve(app);
      };
      await bridge.connect(new PostMessageTransport(iframe.contentWindow, iframe.contentWindow));
    } catch (error) {
      reject(error);
    }
  });
}

let turns = 0;

window.harness = {
  log,
  apps,
  rpc,
  // Calls `name` as the model; renders its app when it has one. Resolves to {result, app} once
  // the app (if any) was initialized and sent the call's input and result.
  async callTool(name, args) {
    const tool = (await toolList()).find((t) => t.name === name);
    if (!tool) throw new Error(`no tool ${name} is listed`);
    if (!visibility(tool).includes("model")) throw new Error(`${name} is for apps only`);
    const index = turns++;
    const turn = document.createElement("div");
    turn.className = "turn";
    turn.id = `turn-${index}`;
    const call = document.createElement("div");
    call.className = "call";
    call.textContent = `${name} ${JSON.stringify(args)}`;
    const result = await rpc("tools/call", { name, arguments: args });
    const answer = document.createElement("div");
    answer.className = "answer";
    const text = result.content && result.content.find((c) => c.type === "text");
    let message = text ? text.text : "";
    try { message = JSON.parse(message).message; } catch (_) { /* plain text */ }
    answer.textContent = message;
    turn.append(call, answer);
    document.getElementById("transcript").append(turn);
    const uri = getToolUiResourceUri(tool);
    const app = uri ? await render(uri, tool, args, result, index) : null;
    return { result, app: app ? app.index : null };
  },
  // Asks every app to tear down, as a host does before removing it.
  async teardown() {
    for (const app of apps) await app.bridge.teardownResource({}).catch(() => {});
  },
  listedTools: toolList,
};
window.harnessReady = true;
