"""`ask` over MCP with the official Python SDK: progress notifications carry each step's thought.

A local HTTP server stands in for the LLM (OpenAI chat-completions wire format, scripted answers),
so the whole pipeline runs for real: schemascope serves a SQLite database over stdio, the client
calls `ask` with a progress callback, and every step's `current_thought` must arrive in order
before the answer.

Usage: python3 tests/e2e/ask_progress.py SCHEMASCOPE_BINARY SQLITE_FILE
"""

from __future__ import annotations

import json
import os
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import anyio
from mcp import Client, StdioServerParameters

SCRIPT = [
    {"query": "SELECT COUNT(*) AS genres FROM Genre", "reasoning": "count the genres"},
    "There are 25 genres.\n---CONTEXT---\n{\"shown_entities\": {}}",
]


class ReplayLLM(BaseHTTPRequestHandler):
    answers = list(SCRIPT)

    def do_POST(self) -> None:  # noqa: N802 (http.server's naming)
        length = int(self.headers.get("Content-Length", "0"))
        self.rfile.read(length)
        answer = self.answers.pop(0) if self.answers else None
        if answer is None:
            self.send_response(500)
            body = json.dumps({"error": {"message": "script exhausted"}})
        else:
            text = answer if isinstance(answer, str) else json.dumps(answer)
            self.send_response(200)
            body = json.dumps({
                "id": "replay", "object": "chat.completion", "model": "replayed",
                "choices": [{"index": 0, "message": {"role": "assistant", "content": text}, "finish_reason": "stop"}],
                "usage": {"prompt_tokens": 10, "completion_tokens": 5},
            })
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body.encode())

    def log_message(self, *args: object) -> None:
        pass


async def main(binary: str, database: str) -> int:
    llm = ThreadingHTTPServer(("127.0.0.1", 0), ReplayLLM)
    threading.Thread(target=llm.serve_forever, daemon=True).start()
    env = dict(os.environ, SCHEMASCOPE_LLM_PROVIDER="openai", SCHEMASCOPE_LLM_MODEL="replayed",
               OPENAI_BASE_URL=f"http://127.0.0.1:{llm.server_address[1]}/v1")
    params = StdioServerParameters(command=binary, args=["serve", f"chinook={database}"], env=env)
    thoughts: list[str] = []

    async def on_progress(progress: float, total: float | None, message: str | None) -> None:
        thoughts.append(message or "")

    async with Client(params, mode="legacy") as client:
        result = await client.call_tool("ask", {"question": "How many genres are there?"}, progress_callback=on_progress)
    envelope = result.structured_content or {}
    failures = []
    expected = ["Starting query analysis...", "Fetching the schema...", "Building the query...",
                "Validating the query...", "Executing the query...", "Generating the response..."]
    if thoughts != expected:
        failures.append(f"progress thoughts {thoughts} != {expected}")
    if envelope.get("data", {}).get("rows") != [[25]] or envelope.get("message") != "There are 25 genres.":
        failures.append(f"unexpected result {envelope}")
    llm.shutdown()
    for failure in failures:
        print(f"FAIL {failure}")
    print(f"ask over MCP: {len(thoughts)} progress notifications, {'ok' if not failures else 'FAILED'}")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(anyio.run(main, sys.argv[1], sys.argv[2]))
