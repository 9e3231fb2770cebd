#!/usr/bin/env python3
"""Seed 004's three use cases against real AimDB instances, through MCP with the official Python
SDK, with a scripted model standing in for the LLM.

The model decides each step only from the user's words and the tool answers it has seen (the
record's fields, types, example and warnings), as the `aimdb_guidance` prompt tells a model to:

1. Schema-guided setting: "Set the thermostat to 72 degrees" -> query_schema shows a `celsius`
   number, a sensor id and a timestamp -> the model asks which unit, which sensor, which time
   (taking 72 as Celsius would be beyond every value seen: validate_value warns) -> the user
   answers -> 72 F is converted to 22.2 C, checked by a dry run, set, and read back.
2. Validation before setting: "Set config to {port: 'abc'}" -> port is an integer -> refused
   before anything is sent; set_record itself refuses it too, and the record is unchanged.
3. Field discovery: "What fields does the Config record have?" -> every field with its type,
   whether it is required, and its current value.

Plus: a record the instance does not mark writable is refused; a server whose operator did not
enable writes does not list set_record and refuses it; discover_instances finds both instances
(AimX 1.0 and 3.0) in the allowed directory; the write log names the MCP client that asked.

Prints one line per check ("ok ..." / "FAIL ...") and exits 1 if any check failed.

Example:
  python tests/e2e/aimdb_set.py target/debug/schemascope --dir /tmp/aimdb \
      --socket v1=/tmp/aimdb/v1.sock --socket v3=/tmp/aimdb/v3.sock
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import anyio
import mcp_types as types
from mcp import Client, StdioServerParameters

sys.path.insert(0, str(Path(__file__).resolve().parent))
from mcp_client import Checks, call  # noqa: E402  (the shared check helpers)

CLIENT = "scripted-model"


class ScriptedModel:
    """Stands in for the LLM: a fixed policy over what the tools answer, no knowledge of the data."""

    def __init__(self, client: Client, source: str, guidance: str) -> None:
        self.client = client
        self.source = source
        self.guidance = guidance
        self.calls: list[tuple[str, dict[str, Any]]] = []

    async def tool(self, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
        if name not in ("list_sources", "discover_instances"):
            arguments = {"source": self.source, **arguments}
        self.calls.append((name, arguments))
        return await call(self.client, name, arguments)

    async def record_named(self, words: str) -> str:
        """The record a user's words name: the record whose key shares a word with them, among
        a served source's records (list_sources) or an instance's (discover_instances)."""
        if "/" in self.source:
            found = await self.tool("discover_instances", {})
            instance = next(i for i in found["data"]["instances"] if i["socket"] == self.source)
            keys = [r["key"] for r in instance["records"]]
        else:
            listing = await self.tool("list_sources", {})
            source = next(s for s in listing["data"]["sources"] if s["name"] == self.source)
            keys = [r["name"] for c in source["collections"] for r in c.get("records", [])]
        wanted = {w.lower() for w in re.findall(r"[A-Za-z]+", words)}
        for key in keys:
            leaf = re.findall(r"[A-Za-z]+", key.split("::")[-1].split(".")[-1])
            if {w.lower() for w in leaf} & wanted:
                return key
        raise AssertionError(f"no record matches {words!r} among {keys}")

    @staticmethod
    def unit_field(schema: dict[str, Any]) -> str | None:
        """A number field whose name carries a temperature unit."""
        for name, prop in schema.get("properties", {}).items():
            if prop.get("type") in ("number", "integer") and name.lower() in ("celsius", "fahrenheit", "kelvin"):
                return name
        return None


def f_to_c(degrees: float) -> float:
    return round((degrees - 32) * 5 / 9, 1)


async def use_case_setting(c: Checks, model: ScriptedModel, label: str) -> None:
    """1. "Set the thermostat to 72 degrees": ask about the unit, convert, set, read back."""
    user = "Set the thermostat setpoint to 72 degrees"
    record = await model.record_named("thermostat setpoint")
    schema_answer = await model.tool("query_schema", {"record_name": record, "window_ms": 0})
    schema = schema_answer["data"]["schema"]
    example = schema_answer["data"]["example"]
    unit = model.unit_field(schema)
    c.check(f"{label}: query_schema shows the unit in a field name (celsius, a number)", unit == "celsius", schema)
    required = schema.get("required", [])
    c.check(f"{label}: every field is required (the model must give them all)", set(required) == {"celsius", "sensor_id", "timestamp"}, schema)
    # The user said "degrees" with no unit: taking it as the field's own unit is checked first.
    literal = dict(example, **{unit: 72})
    verdict = await model.tool("validate_value", {"record_name": record, "value": literal, "window_ms": 0})
    beyond = [w for w in verdict["data"]["warnings"] if w.get("field") == unit]
    c.check(f"{label}: 72 taken as Celsius is valid but beyond every value seen (a warning)", verdict["data"]["valid"] and beyond, verdict)
    question = (
        f"The record stores `{unit}` (degrees Celsius). Did you mean 72 °F (about {f_to_c(72)} °C) or 72 °C? "
        f"Which sensor should it regulate on (the current value uses '{example['sensor_id']}')? "
        "And should `timestamp` be the current time?"
    )
    c.check(f"{label}: the model asks which unit, which sensor and which time before setting", "°F" in question and "sensor" in question and "timestamp" in question, question)
    # The user answers; the model fills the template from the answer.
    answer = "Fahrenheit, on sensor-01, and use the current time"
    value = dict(example)
    value[unit] = f_to_c(72) if "fahrenheit" in answer.lower() else 72
    value["sensor_id"] = re.search(r"sensor-\d+", answer).group(0)  # type: ignore[union-attr]
    value["timestamp"] = round(time.time(), 3) if "current time" in answer else example["timestamp"]
    dry = await model.tool("set_record", {"record_name": record, "value": value, "dry_run": True})
    c.check(f"{label}: a dry run shows what would be sent and sends nothing", dry["success"] and dry["data"]["would_send"]["params"]["value"] == value, dry)
    done = await model.tool("set_record", {"record_name": record, "value": value})
    c.check(f"{label}: set_record sets 22.2 and reads it back", done["success"] and done["data"]["value"] == value and done["data"]["read_back_matches"] is True, done)
    after = await model.tool("query_schema", {"record_name": record, "window_ms": 0})
    c.check(f"{label}: the instance holds the new value", after["data"]["example"] == value, after["data"].get("example"))
    reply = f"Set {record} to {value[unit]} °C (72 °F) on {value['sensor_id']}."
    c.check(f"{label}: {user!r} -> {reply!r}", "22.2 °C" in reply)


async def use_case_validation(c: Checks, model: ScriptedModel, label: str) -> None:
    """2. "Set config to {port: 'abc'}": refused before anything is sent."""
    record = await model.record_named("config")
    before = (await model.tool("query_schema", {"record_name": record, "window_ms": 0}))["data"]
    port_type = before["schema"]["properties"]["port"]["type"]
    proposed = dict(before["example"], port="abc")
    verdict = await model.tool("validate_value", {"record_name": record, "value": proposed, "window_ms": 0})
    errors = verdict["data"]["errors"]
    reply = ""
    if not verdict["data"]["valid"]:
        first = errors[0]
        reply = f"Error: '{first['field']}' should be {first['expected']}, not {first['actual']}. The schema expects: port: {port_type}, host: {before['schema']['properties']['host']['type']}."
    c.check(f"{label}: validate_value says port must be an integer, not a string", reply.startswith("Error: 'port' should be integer, not string"), verdict)
    # Had the model sent it anyway, set_record refuses it before sending.
    refused = await model.tool("set_record", {"record_name": record, "value": proposed})
    c.check(f"{label}: set_record refuses the wrong type, naming field, expected and actual", not refused["success"] and refused["data"]["error"] == "invalid_value" and refused["data"]["errors"][0]["field"] == "port" and "Nothing was sent" in refused["message"], refused)
    after = (await model.tool("query_schema", {"record_name": record, "window_ms": 0}))["data"]
    c.check(f"{label}: the config is unchanged", after["example"] == before["example"], after.get("example"))
    # A record the instance does not mark writable.
    reading = await model.record_named("temperature")
    not_writable = await model.tool("set_record", {"record_name": reading, "value": {"celsius": 20.0, "sensor_id": "sensor-01", "timestamp": 1.0}})
    c.check(f"{label}: a record not marked writable is refused", not not_writable["success"] and not_writable["data"]["error"] == "not_writable", not_writable)


async def use_case_discovery(c: Checks, model: ScriptedModel, label: str) -> None:
    """3. "What fields does the Config record have?"."""
    record = await model.record_named("config")
    answer = (await model.tool("query_schema", {"record_name": record, "window_ms": 0}))["data"]
    schema, example = answer["schema"], answer["example"]
    lines = [
        f"- {name} ({prop['type']}){' - required' if name in schema.get('required', []) else ''}: currently {json.dumps(example.get(name))}"
        for name, prop in schema["properties"].items()
    ]
    reply = f"{record.split('::')[-1]} has these fields:\n" + "\n".join(lines)
    want = ["- port (integer) - required", "- host (string) - required", "- debug_mode (boolean) - required", "- max_connections (integer) - required"]
    c.check(f"{label}: field discovery lists every field with its type", all(w in reply for w in want), reply)


async def guidance_of(client: Client, c: Checks, label: str, source: str | None) -> str:
    prompts = {p.name for p in (await client.list_prompts()).prompts}
    c.check(f"{label}: the aimdb_guidance prompt is listed", "aimdb_guidance" in prompts, sorted(prompts))
    got = await client.get_prompt("aimdb_guidance", {"source": source} if source else {})
    text = got.messages[0].content.text  # type: ignore[union-attr]
    c.check(f"{label}: the guidance says units live in field names and to ask", "carry units" in text and "Ask when it is unclear" in text, text[:300])
    return text


def server(binary: str, *args: str) -> StdioServerParameters:
    return StdioServerParameters(command=binary, args=["serve", *args])


async def run(args: argparse.Namespace, c: Checks) -> None:
    sockets = dict(s.split("=", 1) for s in args.socket)
    # Server A: only a directory of instances, writes allowed there; every instance by path.
    async with Client(server(args.binary, "--aimdb-write-dir", args.dir), mode="legacy", client_info=types.Implementation(name=CLIENT, version="1.0")) as client:
        tools = {t.name for t in (await client.list_tools()).tools}
        c.check("instances only: set_record and discover_instances are listed", {"set_record", "discover_instances"} <= tools, sorted(tools))
        found = await call(client, "discover_instances", {})
        by_socket = {Path(i["socket"]).name: i for i in found["data"]["instances"]}
        versions = {"v1": "1.0", "v3": "3.0"}
        expected = {Path(p).name: versions[k] for k, p in sockets.items()}
        c.check("discover_instances finds every instance with its protocol version", {n: i["protocol"] for n, i in by_socket.items()} == expected, found["data"])
        for kind, socket in sorted(sockets.items()):
            label = f"{kind} by path"
            guidance = await guidance_of(client, c, label, socket)
            c.check(f"{label}: the guidance reads the timestamp unit from the data", "all seconds since 1970" in guidance, guidance[-400:])
            model = ScriptedModel(client, str(Path(socket).resolve()), guidance)
            await c.run(f"{label}: schema-guided setting", lambda: use_case_setting(c, model, label))
            await c.run(f"{label}: validation before setting", lambda: use_case_validation(c, model, label))
            await c.run(f"{label}: field discovery", lambda: use_case_discovery(c, model, label))

    # Server B: the v1 instance as a named source with writes enabled, the writes logged.
    with tempfile.TemporaryDirectory() as scratch:
        log = Path(scratch) / "writes.ndjson"
        params = server(args.binary, f"plant=aimdb:unix://{sockets['v1']}", "--allow-writes", "plant", "--write-log", str(log))
        async with Client(params, mode="legacy", client_info=types.Implementation(name=CLIENT, version="1.0")) as client:
            guidance = await guidance_of(client, c, "named source", None)
            model = ScriptedModel(client, "plant", guidance)
            await c.run("named source: schema-guided setting", lambda: use_case_setting(c, model, "named source"))
        entries = [json.loads(line) for line in log.read_text().splitlines()] if log.exists() else []
        c.check("the write log has the write, who asked and what changed", len(entries) == 1 and entries[0]["outcome"] == "written" and "MCP over stdio (client scripted-model 1.0)" == entries[0]["who"] and entries[0]["changes"], entries)

    # Server C: writes not enabled by the operator.
    last = sockets.get("v3", sockets["v1"])
    async with Client(server(args.binary, f"plant=aimdb:unix://{last}"), mode="legacy") as client:
        tools = {t.name for t in (await client.list_tools()).tools}
        c.check("writes not enabled: set_record is not listed", "set_record" not in tools and "query_schema" in tools, sorted(tools))
        model = ScriptedModel(client, "plant", "")
        record = await model.record_named("config")
        before = (await model.tool("query_schema", {"record_name": record, "window_ms": 0}))["data"]["example"]
        moved = dict(before, port=before["port"] + 1)
        refused = await model.tool("set_record", {"record_name": record, "value": moved})
        c.check("writes not enabled: set_record is refused, saying how the operator enables it", not refused["success"] and refused["data"]["error"] == "writes_not_allowed" and "--allow-writes plant" in refused["message"], refused)
        after = (await model.tool("query_schema", {"record_name": record, "window_ms": 0}))["data"]["example"]
        c.check("writes not enabled: the record is unchanged", after == before, after)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("binary")
    parser.add_argument("--dir", required=True, help="the directory holding the instances' sockets")
    parser.add_argument("--socket", action="append", required=True, help="v1=PATH or v3=PATH")
    args = parser.parse_args()
    c = Checks()
    anyio.run(run, args, c)
    print(f"{c.passed} passed, {c.failed} failed", flush=True)
    return 1 if c.failed else 0


if __name__ == "__main__":
    sys.exit(main())
