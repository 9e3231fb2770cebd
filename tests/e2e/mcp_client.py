#!/usr/bin/env python3
"""End-to-end check of the schemascope MCP server with the official Python MCP SDK.

Connects over stdio or streamable HTTP, once per protocol generation:
  - legacy: the `initialize` handshake (protocol 2025-11-25), `resources/subscribe`;
  - auto:   the SDK default, `server/discover` (protocol 2026-07-28), `subscriptions/listen`.
It lists and calls every tool against the demo data, reads the schema resources, gets the prompt
and, with --touch-file, checks that `notifications/resources/updated` arrives after the file of a
served source is rewritten.

Prints one line per check ("ok ..." / "FAIL ...") and exits 1 if any check failed, 2 on usage or
connection errors.

Examples:
  python tests/e2e/mcp_client.py --stdio target/debug/schemascope
  python tests/e2e/mcp_client.py --http-spawn target/debug/schemascope \
      --source watched=/tmp/w/graph.json --touch-file /tmp/w/graph.json --resource schema://watched
  python tests/e2e/mcp_client.py --http http://127.0.0.1:8750/mcp   # a server already running
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import threading
import time
import warnings
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import anyio
import mcp_types as types
from mcp import Client, MCPError, StdioServerParameters
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client
from mcp.client.subscriptions import ResourceUpdated

DEMO_SOURCES = ["demo:infrastructure", "demo:sensors"]
TOOL_NAMES = {
    "list_sources",
    "describe_schema",
    "sample_data",
    "describe_property",
    "query_schema",
    "validate_value",
    "find_items",
    "search_schema_docs",
    "get_schema_context",
    "execute_query",
    "validate_query",
    "ask",
    "query_graph",
    "find_nodes",
    "find_edges",
    "find_and_style_nodes",
    "find_and_style_edges",
    "clear_styles",
    "describe_styles",
    "describe_selection",
    "select",
    "set_layout",
    "set_dimension",
    "set_camera",
    "zoom_to_nodes",
    "list_algorithms",
    "run_algorithm",
}

# A server lists only the tools its sources can use: SQL tools with a database, `ask` only with
# an LLM configured (never here).
SQL_TOOLS = {"search_schema_docs", "get_schema_context", "execute_query", "validate_query"}
EXPECTED_TOOLS = TOOL_NAMES - {"ask"}

warnings.filterwarnings("ignore", message=".*resources/(un)?subscribe.*")


def describe(error: BaseException) -> str:
    """The innermost errors of an exception group (anyio task groups wrap them), as text."""
    if isinstance(error, BaseExceptionGroup):
        return "; ".join(describe(inner) for inner in error.exceptions)
    return f"{type(error).__name__}: {error}"


class Checks:
    """Counts and prints check outcomes."""

    def __init__(self) -> None:
        self.failed = 0
        self.passed = 0
        self.prefix = ""

    def check(self, name: str, condition: bool, detail: Any = "") -> bool:
        if condition:
            self.passed += 1
            print(f"ok   {self.prefix}{name}", flush=True)
        else:
            self.failed += 1
            shown = detail if isinstance(detail, str) else json.dumps(detail, default=str)[:600]
            print(f"FAIL {self.prefix}{name}: {shown}", flush=True)
        return condition

    async def run(self, name: str, body: Callable[[], Awaitable[None]]) -> None:
        """Runs a group of checks; an exception fails the group instead of ending the run."""
        try:
            await body()
        except Exception as error:  # noqa: BLE001 - reported as a failed check
            self.check(name, False, describe(error))


def envelope(result: types.CallToolResult) -> dict[str, Any]:
    """The {success, message, data} envelope, from structured content (cross-checked with the text)."""
    structured = result.structured_content
    if not isinstance(structured, dict):
        raise AssertionError(f"no structured content: {result}")
    text = next((c.text for c in result.content if isinstance(c, types.TextContent)), None)
    if text is None or json.loads(text) != structured:
        raise AssertionError("text content is not the JSON of the structured content")
    if result.is_error != (not structured.get("success")):
        raise AssertionError(f"isError={result.is_error} but success={structured.get('success')}")
    return structured


async def call(client: Client, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
    return envelope(await client.call_tool(name, arguments))


async def check_tools(client: Client, c: Checks) -> None:
    listed = await client.list_tools()
    names = {tool.name for tool in listed.tools}
    c.check(f"tools/list has the {len(EXPECTED_TOOLS)} tools the sources can use", names == EXPECTED_TOOLS, sorted(names))
    c.check("no tool repeats the envelope as an output schema", all(tool.output_schema is None for tool in listed.tools))
    by_name = {tool.name: tool for tool in listed.tools}
    prop = by_name.get("describe_property")
    c.check(
        "describe_property input schema requires `property`",
        prop is not None and "property" in (prop.input_schema.get("required") or []),
        prop.input_schema if prop else None,
    )
    c.check(
        "find_items description explains the selector root",
        "find_items" in by_name and "not `data.type`" in (by_name["find_items"].description or ""),
    )

    async def list_sources() -> None:
        out = await call(client, "list_sources", {})
        names = [s.get("name") for s in out["data"].get("sources", [])]
        c.check("list_sources lists infrastructure and sensors", {"infrastructure", "sensors"} <= set(names), out)

    async def describe_schema() -> None:
        out = await call(client, "describe_schema", {"source": "infrastructure", "collection": "nodes"})
        paths = [p.get("path") for col in out["data"].get("collections", []) for p in col.get("properties", [])]
        c.check("describe_schema nodes has type, cpu, memory, metadata.owner",
                out["success"] and {"type", "cpu", "memory", "metadata.owner"} <= set(paths), paths)
        out = await call(client, "describe_schema", {"source": "infrastructure", "format": "markdown", "max_tokens": 400})
        data = out["data"] if isinstance(out.get("data"), dict) else {}
        c.check("describe_schema markdown fits 400 tokens and is the graph schema section",
                out["success"] and data.get("tokens", 10**9) <= 400
                and str(data.get("markdown", "")).startswith("## Graph Data Schema"), data)

    async def sample_data() -> None:
        out = await call(client, "sample_data",
                         {"source": "infrastructure", "collection": "nodes", "stratify_by": "type", "count": 5, "seed": 7})
        nodes = out["data"].get("nodes", [])
        types_seen = {n.get("data", {}).get("type") for n in nodes}
        c.check("sample_data stratified by type shows server and database",
                out["success"] and {"server", "database"} <= types_seen, out)
        out = await call(client, "sample_data", {"source": "infrastructure", "collection": "edges", "count": 2, "seed": 1})
        edges = out["data"].get("edges", [])
        c.check("sample_data edges show source and target",
                len(edges) == 2 and all("source" in e and "target" in e for e in edges), out)

    async def describe_property() -> None:
        out = await call(client, "describe_property", {"source": "infrastructure", "property": "type"})
        values = [v.get("value") for v in out["data"].get("values", [])]
        c.check("describe_property type lists server and database", "server" in values and "database" in values, out)
        out = await call(client, "describe_property", {"source": "infrastructure", "property": "memory"})
        c.check("describe_property memory is mixed", out["data"].get("dataType") == "mixed", out["data"].get("dataType"))
        out = await call(client, "describe_property",
                         {"source": "infrastructure", "property": "latency", "collection": "edges", "bins": 5})
        c.check("describe_property edge latency has a histogram",
                out["success"] and len(out["data"].get("histogram", [])) > 0, out)
        out = await call(client, "describe_property", {"source": "infrastructure", "property": "metadata.owner"})
        c.check("describe_property nested metadata.owner exists", out["data"].get("exists") is True, out)
        out = await call(client, "describe_property", {"source": "infrastructure", "property": "tyep"})
        c.check("describe_property unknown property: exists false with suggestion type",
                out["data"].get("exists") is False and "type" in out["data"].get("didYouMean", []), out)
        # Missing required argument: a tool error that names the parameter.
        result = await client.call_tool("describe_property", {"source": "infrastructure"})
        out = envelope(result)
        c.check("describe_property without `property` is an error naming it",
                result.is_error is True and not out["success"] and "property" in out["message"], out)

    async def query_schema() -> None:
        out = await call(client, "query_schema", {"source": "sensors", "record_name": "server::Temperature"})
        schema = out["data"].get("schema", out["data"])
        required = schema.get("required", [])
        c.check("query_schema server::Temperature requires celsius", "celsius" in required, out)
        props = schema.get("properties", {})
        c.check("query_schema celsius is a number", props.get("celsius", {}).get("type") == "number", props.get("celsius"))

    async def validate_value() -> None:
        out = await call(client, "validate_value",
                         {"source": "sensors", "record_name": "server::Temperature", "value": {"celsius": "hot"}})
        errors = out["data"].get("errors", [])
        c.check("validate_value {celsius: 'hot'} is invalid with an error at /celsius",
                out["data"].get("valid") is False and any(e.get("path") == "/celsius" for e in errors), out)
        out = await call(client, "validate_value", {
            "source": "sensors",
            "record_name": "server::Temperature",
            "value": {"celsius": 42.5, "sensor_id": "sensor-01", "timestamp": 1736928100},
        })
        c.check("validate_value of a good value is valid", out["data"].get("valid") is True, out)

    async def find_items() -> None:
        out = await call(client, "find_items", {"source": "infrastructure", "selector": "type == 'database'"})
        c.check("find_items type == 'database' counts 20", out["data"].get("count") == 20, out["data"].get("count"))
        out = await call(client, "find_items",
                         {"source": "infrastructure", "selector": "latency > `100`", "collection": "edges", "limit": 2})
        c.check("find_items slow edges", out["success"] and out["data"].get("count", 0) > 0, out["message"])
        out = await call(client, "find_items", {"source": "infrastructure", "selector": "contains(tags, 'critical')"})
        c.check("find_items contains(tags, ...) works", out["success"], out["message"])
        result = await client.call_tool("find_items", {"source": "infrastructure", "selector": "type =="})
        out = envelope(result)
        c.check("find_items invalid selector: success false with a position",
                result.is_error is True and out["success"] is False and isinstance(out["data"].get("offset"), int)
                and out["data"].get("column") is not None, out)

    async def sql_source() -> None:
        # A SQLite source named `chinook` is served when the caller passed one (--source).
        listed = await call(client, "list_sources", {})
        if "chinook" not in [x.get("name") for x in listed["data"].get("sources", [])]:
            return
        out = await call(client, "describe_property", {"source": "chinook", "collection": "Invoice", "property": "Total"})
        c.check("describe_property Invoice.Total on SQLite: median 3.96 with a histogram",
                out["data"].get("median") == 3.96 and len(out["data"].get("histogram", [])) > 0, out["message"])
        out = await call(client, "search_schema_docs", {"source": "chinook", "question": "invoice totals per customer", "top_k": 3})
        tables = out["data"].get("metadata", {}).get("tablesIncluded", [])
        c.check("search_schema_docs ranks Invoice for invoice totals", "Invoice" in tables, tables)
        out = await call(client, "get_schema_context",
                         {"source": "chinook", "question": "which genre has the most tracks", "max_tokens": 3000})
        meta = out["data"].get("metadata", {})
        c.check("get_schema_context: Chinook has 11 tables, so a focused context with Genre and Track",
                meta.get("strategy") == "focused" and {"Genre", "Track"} <= set(meta.get("tablesIncluded", []))
                and out["data"].get("tokens", 10**9) <= 3000, meta)
        out = await call(client, "execute_query", {"source": "chinook", "max_rows": 2,
                                                    "query": "SELECT Name FROM Genre ORDER BY GenreId"})
        c.check("execute_query returns 2 rows, truncated", out["data"].get("rows") == [["Rock"], ["Jazz"]]
                and out["data"].get("truncated") is True, out["data"])
        result = await client.call_tool("execute_query", {"source": "chinook", "query": "DROP TABLE Genre"})
        out = envelope(result)
        c.check("execute_query refuses a write with class 'refused'",
                result.is_error is True and out["data"].get("class") == "refused", out)

    async def unknown_source() -> None:
        result = await client.call_tool("describe_schema", {"source": "infrastructur"})
        out = envelope(result)
        c.check("unknown source suggests infrastructure",
                result.is_error is True and "infrastructure" in out["message"], out)

    for name, body in [
        ("list_sources", list_sources),
        ("describe_schema", describe_schema),
        ("sample_data", sample_data),
        ("describe_property", describe_property),
        ("query_schema", query_schema),
        ("validate_value", validate_value),
        ("find_items", find_items),
        ("SQL source and schema docs", sql_source),
        ("unknown source", unknown_source),
    ]:
        await c.run(name, body)


async def check_resources_and_prompt(client: Client, c: Checks) -> None:
    listed = await client.list_resources()
    uris = {str(r.uri) for r in listed.resources}
    c.check("resources/list has schema://infrastructure and schema://sensors",
            {"schema://infrastructure", "schema://sensors"} <= uris, sorted(uris))
    mimes = {r.mime_type for r in listed.resources}
    c.check("resources are text/markdown", mimes == {"text/markdown"}, mimes)
    templates = await client.list_resource_templates()
    c.check("resource template schema://{source}",
            any(t.uri_template == "schema://{source}" for t in templates.resource_templates), templates)

    read = await client.read_resource("schema://infrastructure")
    text = next((x.text for x in read.contents if isinstance(x, types.TextResourceContents)), "")
    c.check("schema://infrastructure contains '## Graph Data Schema'", "## Graph Data Schema" in text, text[:300])
    read = await client.read_resource("schema://sensors")
    text = next((x.text for x in read.contents if isinstance(x, types.TextResourceContents)), "")
    c.check("schema://sensors mentions server::Temperature", "server::Temperature" in text, text[:300])

    try:
        await client.read_resource("schema://nope")
        c.check("unknown resource is an error", False, "no error")
    except MCPError as error:
        c.check("unknown resource is an error listing the available URIs",
                "schema://infrastructure" in str(error), str(error))

    prompts = await client.list_prompts()
    prompt = next((p for p in prompts.prompts if p.name == "schema_system_prompt"), None)
    c.check("prompts/list has schema_system_prompt with optional source and max_tokens",
            prompt is not None and {a.name for a in prompt.arguments or []} == {"source", "max_tokens"}
            and not any(a.required for a in prompt.arguments or []), prompts)
    got = await client.get_prompt("schema_system_prompt", {"source": "infrastructure", "max_tokens": "800"})
    text = "".join(m.content.text for m in got.messages if isinstance(m.content, types.TextContent))
    c.check("get_prompt returns the schema of infrastructure", "## Graph Data Schema" in text, text[:300])
    got = await client.get_prompt("schema_system_prompt", {})
    text = "".join(m.content.text for m in got.messages if isinstance(m.content, types.TextContent))
    c.check("get_prompt without arguments covers every source", "server::Temperature" in text and "Graph" in text,
            text[:300])


def touch(path: Path) -> None:
    """Rewrites the file with one more trailing newline: a content change whose reload succeeds.
    (A rewrite with the same bytes, or a bare touch, is no change: the server must not reload.)"""
    data = path.read_bytes()
    path.write_bytes(data + b"\n")
    now = time.time()
    os.utime(path, (now, now))


async def check_update_legacy(target: Any, c: Checks, touch_file: Path, uri: str, timeout: float) -> None:
    seen: list[str] = []
    arrived = anyio.Event()

    async def on_message(message: Any) -> None:
        if isinstance(message, types.ResourceUpdatedNotification):
            seen.append(str(message.params.uri))
            if str(message.params.uri) == uri:
                arrived.set()

    async with Client(connect(target), mode="legacy", message_handler=on_message) as client:
        await client.subscribe_resource(uri)
        c.check(f"resources/subscribe {uri}", True)
        # Let the client open its notification stream (HTTP GET) before the change.
        await anyio.sleep(1.0)
        touch(touch_file)
        with anyio.move_on_after(timeout):
            await arrived.wait()
        c.check(f"notifications/resources/updated {uri} after the file changed", arrived.is_set(), seen)
        read = await client.read_resource(uri)
        c.check(f"{uri} still reads after the reload", len(read.contents) == 1, read)
        # A rewrite may reload twice; let a late notification land before the session closes
        # (the SDK logs an error when one arrives while it is shutting down).
        await anyio.sleep(1.5)


async def check_update_modern(client: Client, c: Checks, touch_file: Path, uri: str, timeout: float) -> None:
    async with client.listen(resource_subscriptions=[uri]) as subscription:
        honored = subscription.honored.resource_subscriptions or []
        c.check(f"subscriptions/listen honours {uri}", uri in honored, subscription.honored)
        touch(touch_file)
        got: list[str] = []
        with anyio.move_on_after(timeout):
            async for event in subscription:
                if isinstance(event, ResourceUpdated):
                    got.append(event.uri)
                    if event.uri == uri:
                        break
        c.check(f"listen delivers resources/updated {uri} after the file changed", uri in got, got)
    read = await client.read_resource(uri)
    c.check(f"{uri} still reads after the reload", len(read.contents) == 1, read)


async def run_mode(target: Any, mode: str, args: argparse.Namespace, c: Checks) -> None:
    c.prefix = f"[{args.transport} {mode}] "
    async with Client(connect(target), mode=mode) as client:
        expected = "2026-07-28" if mode == "auto" else "2025-11-25"
        c.check(f"negotiated protocol {expected}", client.protocol_version == expected, client.protocol_version)
        info = client.server_info
        c.check("server name schemascope", info is not None and info.name == "schemascope", info)
        if mode == "legacy":
            instructions = client.instructions or ""
            c.check("instructions explain the selector root", "not `data.type`" in instructions, instructions[:200])
        await c.run("tools", lambda: check_tools(client, c))
        await c.run("resources and prompt", lambda: check_resources_and_prompt(client, c))
        if args.touch_file and mode == "auto":
            await c.run("subscription (listen)",
                        lambda: check_update_modern(client, c, args.touch_file, args.resource, args.timeout))
    if args.touch_file and mode == "legacy":
        await c.run("subscription (resources/subscribe)",
                    lambda: check_update_legacy(target, c, args.touch_file, args.resource, args.timeout))


# Sent on every HTTP request when the server wants a token (--token).
HTTP_HEADERS: dict[str, str] = {}


def connect(target: Any) -> Any:
    """What to hand `Client`: the target itself, or for a URL with a token, a transport carrying it."""
    if isinstance(target, str) and HTTP_HEADERS:
        return streamable_http_client(target, http_client=create_mcp_http_client(headers=HTTP_HEADERS))
    return target


def spawn_http(binary: str, sources: list[str], token_file: Path | None = None) -> tuple[subprocess.Popen[str], str]:
    """Starts `BINARY serve --http 127.0.0.1:0 SOURCES...` and reads its URL from stderr."""
    token_args = ["--token-file", str(token_file)] if token_file else []
    process = subprocess.Popen(
        [binary, "serve", "--http", "127.0.0.1:0", *token_args, *sources],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    found: list[str] = []
    ready = threading.Event()

    def pump() -> None:
        assert process.stderr is not None
        for line in process.stderr:
            if not ready.is_set():
                match = re.search(r"http://\S+/mcp", line)
                if match:
                    found.append(match.group(0))
                    ready.set()
            sys.stderr.write(f"[server] {line}")
        ready.set()

    threading.Thread(target=pump, daemon=True).start()
    ready.wait(timeout=120)
    if not found:
        process.kill()
        raise RuntimeError("the server did not print its http://.../mcp URL on stderr")
    return process, found[0]


def post_without_token(url: str) -> tuple[int, str]:
    """POSTs an `initialize` with no credentials; returns the status and body."""
    import urllib.error
    import urllib.request
    body = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "initialize",
                       "params": {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "x", "version": "1"}}})
    request = urllib.request.Request(url, data=body.encode(), method="POST",
                                     headers={"Content-Type": "application/json", "Accept": "application/json, text/event-stream"})
    try:
        with urllib.request.urlopen(request, timeout=10) as response:
            return response.status, response.read().decode()
    except urllib.error.HTTPError as error:
        return error.code, error.read().decode()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    how = parser.add_mutually_exclusive_group(required=True)
    how.add_argument("--stdio", metavar="BINARY", help="start `BINARY serve SOURCES...` and talk over stdio")
    how.add_argument("--http", metavar="URL", help="connect to a running server, e.g. http://127.0.0.1:8750/mcp")
    how.add_argument("--http-spawn", metavar="BINARY",
                     help="start `BINARY serve --http 127.0.0.1:0 SOURCES...`, read the URL from its stderr")
    parser.add_argument("--source", action="append", default=[], metavar="SPEC",
                        help="extra source to serve besides the demo data (stdio / --http-spawn), e.g. w=/tmp/g.json")
    parser.add_argument("--mode", choices=["legacy", "auto", "both"], default="both",
                        help="legacy: initialize (2025-11-25); auto: SDK default, discover (2026-07-28); both (default)")
    parser.add_argument("--touch-file", type=Path, metavar="PATH",
                        help="a served source's file: subscribe to --resource, rewrite PATH, expect resources/updated")
    parser.add_argument("--resource", metavar="URI", help="the schema resource of --touch-file, e.g. schema://watched")
    parser.add_argument("--timeout", type=float, default=20.0, help="seconds to wait for the update notification")
    parser.add_argument("--token-file", type=Path, metavar="PATH",
                        help="HTTP: the server's token file (passed to --http-spawn); sent as a bearer token")
    args = parser.parse_args()
    if args.touch_file and not args.resource:
        parser.error("--touch-file needs --resource")
    if args.touch_file and not args.touch_file.is_file():
        parser.error(f"--touch-file {args.touch_file} is not a file")

    sources = DEMO_SOURCES + args.source
    global EXPECTED_TOOLS
    if not any(s.endswith((".sqlite", ".db")) or "postgres" in s for s in args.source):
        EXPECTED_TOOLS = EXPECTED_TOOLS - SQL_TOOLS
    if args.token_file:
        HTTP_HEADERS["Authorization"] = f"Bearer {args.token_file.read_text().strip()}"
    process = None
    if args.stdio:
        args.transport = "stdio"
        target: Any = StdioServerParameters(command=args.stdio, args=["serve", *sources])
    elif args.http_spawn:
        args.transport = "http"
        process, target = spawn_http(args.http_spawn, sources, args.token_file)
    else:
        args.transport = "http"
        target = args.http

    modes = ["legacy", "auto"] if args.mode == "both" else [args.mode]
    c = Checks()
    try:
        if HTTP_HEADERS and isinstance(target, str):
            c.prefix = "[http] "
            status, body = post_without_token(target)
            c.check("a client without the token is refused with 401", status == 401 and "Bearer" in body, f"{status} {body[:200]}")
        for mode in modes:
            try:
                anyio.run(run_mode, target, mode, args, c)
            except Exception as error:  # noqa: BLE001 - a connection failure fails the run
                c.prefix = f"[{args.transport} {mode}] "
                c.check("session", False, describe(error))
    finally:
        if process is not None:
            process.terminate()
            try:
                process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                process.kill()
                c.check("HTTP server stops on SIGTERM within 10 s", False, "killed")
    print(f"{c.passed} passed, {c.failed} failed", flush=True)
    return 1 if c.failed else 0


if __name__ == "__main__":
    sys.exit(main())
