"""What the SDK's second parse of an HTTP body costs (docs/robustness.md, "An HTTP body is parsed twice").

HttpGuard parses each POST body (classify_line) to answer bad ones itself; the SDK's Streamable HTTP
transport then parses the same bytes again, as its public ASGI interface takes bytes only. This prints,
for typical bodies, the best time per body of each parse, and the median round trip of a resources/read
over HTTP to the real server, to put the second parse in proportion:

    .venv/bin/python tests/bench/second_parse.py
"""

from __future__ import annotations

import http.client
import json
import statistics
import sys
import time
import timeit
from pathlib import Path
from typing import Any

import pydantic_core
from mcp import types

ROOT = Path(__file__).resolve().parents[2]
sys.path[:0] = [str(ROOT), str(ROOT / "tests" / "support")]
from serving import INIT, MCP_HEADERS, Served  # noqa: E402

import robot_md_mcp as rmm  # noqa: E402

READ = {"jsonrpc": "2.0", "id": 7, "method": "resources/read", "params": {"uri": "robot-md://bob/identity"}}
BODIES = {
    "resources/read": READ,
    "tools/call validate": {
        "jsonrpc": "2.0",
        "id": 8,
        "method": "tools/call",
        "params": {"name": "validate"},
    },
    "notifications/initialized": {"jsonrpc": "2.0", "method": "notifications/initialized"},
}


def sdk_parse(body: bytes) -> Any:
    """As StreamableHTTPServerTransport does with a POST body."""
    return types.jsonrpc_message_adapter.validate_python(pydantic_core.from_json(body), by_name=False)


def best_microseconds(parse: Any, body: bytes, number: int = 20_000) -> float:
    return min(timeit.repeat(lambda: parse(body), number=number, repeat=9)) / number * 1e6


def http_round_trip_ms(requests: int = 1000) -> float:
    """Median time of one resources/read over HTTP (keep-alive, event-stream answer)."""
    server = Served()
    try:
        connection = http.client.HTTPConnection("127.0.0.1", server.port)
        headers = dict(MCP_HEADERS)

        def post(message: dict[str, Any]) -> http.client.HTTPResponse:
            connection.request("POST", "/mcp", json.dumps(message), headers)
            answer = connection.getresponse()
            answer.read()
            return answer

        opened = post(INIT)
        headers |= {"Mcp-Session-Id": opened.headers["mcp-session-id"], "Mcp-Protocol-Version": "2025-06-18"}
        post({"jsonrpc": "2.0", "method": "notifications/initialized"})
        times = []
        for _ in range(requests):
            start = time.perf_counter()
            assert post(READ).status == 200
            times.append(time.perf_counter() - start)
        return statistics.median(times) * 1e3
    finally:
        server.stop()


if __name__ == "__main__":
    for name, message in BODIES.items():
        body = json.dumps(message).encode()
        ours, sdk = best_microseconds(rmm.classify_line, body), best_microseconds(sdk_parse, body)
        print(f"{name:26} {len(body):3} bytes: HttpGuard's parse {ours:5.1f} µs, the SDK's {sdk:5.1f} µs")
    print(f"resources/read over HTTP, median round trip: {http_round_trip_ms():.2f} ms")
