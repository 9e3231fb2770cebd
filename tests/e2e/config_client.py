#!/usr/bin/env python3
"""A configuration file as a new user writes one, driven with the official Python MCP SDK.

Writes `schemascope.toml` in a fresh directory (a SQLite file by relative path, optionally a
PostgreSQL URI whose password comes from an environment variable), starts
`schemascope serve --config FILE` over stdio from ANOTHER working directory, and checks that:
  - the sources load, with their descriptions in list_sources, the resources and the
    instructions, and the instructions name the SQL tools and not the graph ones;
  - the password appears in no answer, resource, instruction or error;
  - a saved edit that adds and removes sources takes effect without a restart, and the client
    hears notifications/tools/list_changed or resources/list_changed;
  - a broken edit keeps the last good configuration.

Prints one line per check ("ok ..." / "FAIL ...") and exits 1 if any failed.

Example:
  python tests/e2e/config_client.py target/debug/schemascope testdata/chinook/Chinook_Sqlite.sqlite \
      --postgres postgres://user:pw@127.0.0.1:5432/chinook
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import tempfile
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlsplit, urlunsplit

import anyio
import mcp_types as types
from mcp import Client, StdioServerParameters

sys.path.insert(0, str(Path(__file__).resolve().parent))
from mcp_client import Checks, call  # noqa: E402  (the shared check helpers)

PASSWORD_VARIABLE = "E2E_SHOP_PASSWORD"


def config_text(postgres: str | None, extra: str = "", role: str | None = None) -> str:
    text = """
[[sources]]
name = "music"
description = "Music store: artists, albums, tracks and the invoices of their sales"
path = "data/music.sqlite"
max_rows = 5
"""
    if postgres:
        parts = urlsplit(postgres)
        bare = urlunsplit(parts._replace(netloc=f"{parts.username}@{parts.hostname}:{parts.port}"))
        text += f"""
[[sources]]
name = "shop"
description = "The same store on PostgreSQL, for reporting"
uri = "{bare}"
password = "${{{PASSWORD_VARIABLE}}}"
""" + (f'role = "{role}"\n' if role else "")
    return text + extra


async def wait_for(flag: anyio.Event, seconds: float) -> bool:
    with anyio.move_on_after(seconds):
        await flag.wait()
    return flag.is_set()


async def run(args: argparse.Namespace, c: Checks) -> None:
    home = Path(tempfile.mkdtemp(prefix="schemascope-config-"))
    elsewhere = Path(tempfile.mkdtemp(prefix="schemascope-cwd-"))
    (home / "data").mkdir()
    shutil.copy(args.sqlite, home / "data" / "music.sqlite")
    (home / "docs.json").write_text(json.dumps([{"sku": "a-1", "price": 3.5}, {"sku": "b-2", "price": 4.25}]))
    config = home / "schemascope.toml"
    config.write_text(config_text(args.postgres, role=args.postgres_role))
    encoded = urlsplit(args.postgres).password if args.postgres else None
    password = unquote(encoded) if encoded else None
    env = dict(os.environ)
    if password:
        env[PASSWORD_VARIABLE] = password
    server = StdioServerParameters(
        command=str(Path(args.binary).resolve()), args=["serve", "--config", str(config)], env=env, cwd=str(elsewhere)
    )
    changed = anyio.Event()
    seen: list[str] = []

    async def on_message(message: Any) -> None:
        if isinstance(message, (types.ToolListChangedNotification, types.ResourceListChangedNotification)):
            seen.append(type(message).__name__)
            changed.set()

    shown: list[str] = []
    async with Client(server, mode="legacy", message_handler=on_message) as client:
        instructions = client.instructions or ""
        shown.append(instructions)
        c.check("instructions carry the description", "Music store: artists" in instructions, instructions[:400])
        c.check("instructions name the SQL tools", "execute_query" in instructions and "validate_query" in instructions, instructions)
        c.check("instructions do not talk of graphs", "graph" not in instructions.lower(), instructions)
        listing = await call(client, "list_sources", {})
        shown.append(json.dumps(listing))
        by_name = {s["name"]: s for s in listing["data"]["sources"]}
        expected = {"music", "shop"} if args.postgres else {"music"}
        c.check("every configured source is served", set(by_name) == expected, sorted(by_name))
        c.check("list_sources shows the description",
                by_name.get("music", {}).get("description", "").startswith("Music store"), by_name.get("music"))
        if args.postgres:
            shop = by_name.get("shop", {})
            c.check("the PostgreSQL source loaded with the password from the environment",
                    shop.get("status") != "failed" and len(shop.get("collections") or []) > 0, shop)
            result = await call(client, "execute_query", {"source": "shop", "query": 'SELECT count(*) AS n FROM "Artist"'})
            shown.append(json.dumps(result))
            c.check("a query runs on it", result.get("success") is True, result)
            if args.postgres_role:
                who = await call(client, "execute_query", {"source": "shop", "query": "SELECT current_user AS u"})
                c.check("statements run as the configured role", who.get("data", {}).get("rows") == [[args.postgres_role]], who)
        capped = await call(client, "execute_query", {"source": "music", "query": "SELECT Name FROM Track"})
        c.check("the source's max_rows caps a query", capped.get("data", {}).get("rowCount") == 5 and capped["data"].get("truncated") is True, capped)
        refused = await call(client, "execute_query", {"source": "music", "query": "SELECT Name FROM Track", "max_rows": 10})
        c.check("asking past the source's limit is refused, naming it",
                refused.get("success") is False and "limit of 5" in refused.get("message", ""), refused)
        c.check("list_sources shows the source's limits", by_name.get("music", {}).get("limits") == {"maxRows": 5}, by_name.get("music"))
        completed = await client.complete(types.PromptReference(type="ref/prompt", name="schema_system_prompt"), {"name": "source", "value": "mu"})
        c.check("completion of a source name", completed.completion.values == ["music"], completed.completion)
        resources = await client.list_resources()
        shown.append(json.dumps([r.model_dump(mode="json") for r in resources.resources]))
        music = next((r for r in resources.resources if str(r.uri) == "schema://music"), None)
        c.check("the resource carries the description", music is not None and "Music store" in (music.description or ""), music)
        read = await client.read_resource("schema://music")
        text = read.contents[0].text if read.contents else ""
        shown.append(text)
        c.check("the schema resource starts with the description", "**About this source:** Music store" in text, text[:300])
        bad = await call(client, "execute_query", {"source": "shop" if args.postgres else "music", "query": "SELECT * FROM no_such_table"})
        shown.append(json.dumps(bad))

        # A saved edit: a document file added by relative path, the database source removed.
        config.write_text(config_text(None, '\n[[sources]]\nname = "prices"\ndescription = "Price list"\npath = "docs.json"\n'))
        heard = await wait_for(changed, args.timeout)
        c.check("a list_changed notification after the edit", heard, seen)
        names: set[str] = set()
        for _ in range(int(args.timeout * 4)):
            listing = await call(client, "list_sources", {})
            names = {s["name"] for s in listing["data"]["sources"]}
            if names == {"music", "prices"}:
                break
            await anyio.sleep(0.25)
        c.check("the edit added and removed sources without a restart", names == {"music", "prices"}, sorted(names))
        tools = {t.name for t in (await client.list_tools()).tools}
        c.check("tools still listed", {"execute_query", "describe_property"} <= tools, sorted(tools))

        # A broken edit keeps the last good configuration.
        config.write_text('[[sources]]\nname = "broken\n')
        await anyio.sleep(2.5)
        listing = await call(client, "list_sources", {})
        names = {s["name"] for s in listing["data"]["sources"]}
        c.check("a broken edit keeps the last good configuration", names == {"music", "prices"}, sorted(names))
        c.check("list_sources says the edit was not applied",
                "schemascope.toml:2" in (listing["data"].get("configError") or ""), listing["data"].get("configError"))
        shown.append(json.dumps(listing))
    # The 2026-07-28 protocol carries cache hints on lists (the handshake-era one has no field).
    config.write_text(config_text(args.postgres, role=args.postgres_role))
    async with Client(server, mode="auto") as modern:
        listed = await modern.list_tools()
        c.check("tools/list says how long it may be cached (2026-07-28)",
                listed.ttl_ms == 60000 and str(listed.cache_scope) in ("private", "CacheScope.private"), (listed.ttl_ms, listed.cache_scope))
    if password:
        leaked = [s[:200] for s in shown if password in s or (encoded and encoded in s)]
        c.check("the password appears in no answer, resource or instruction", not leaked, leaked)
    shutil.rmtree(home, ignore_errors=True)
    shutil.rmtree(elsewhere, ignore_errors=True)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("binary")
    parser.add_argument("sqlite", type=Path, help="a SQLite file to serve (copied)")
    parser.add_argument("--postgres", help="a PostgreSQL URI with a password (moved to the environment)")
    parser.add_argument("--postgres-role", help="a role the PostgreSQL user may take (`role` in the file)")
    parser.add_argument("--timeout", type=float, default=15.0)
    args = parser.parse_args()
    c = Checks()
    anyio.run(run, args, c)
    print(f"{c.passed} passed, {c.failed} failed")
    return 1 if c.failed else 0


if __name__ == "__main__":
    sys.exit(main())
