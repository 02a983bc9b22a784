"""Load and soak (heavy): the real HTTP server on 127.0.0.1 under 20 keep-alive clients × 500 requests in
both eras, every answer checked, with Host/Origin/token refusals alongside; its memory across a soak; a peer
holding every session. Raw HTTP/1.1 from one asyncio loop keeps the client light. `pytest -s` shows the
numbers."""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import json
import re
import time
from collections import Counter
from collections.abc import Awaitable, Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from conftest import EXAMPLE
from http_served import raw_request, read_response
from serving import MCP_HEADERS, Served

import robot_md_mcp as m

pytestmark = pytest.mark.heavy  # tens of thousands of HTTP requests: load and soak

CLIENTS = 20
REQUESTS_PER_CLIENT = 500  # 10,000 in all
SESSION_REQUESTS = 25  # a handshake-era session's life: initialize … DELETE
# The soak: a warm-up (the allocator's and the caches' growth levels off within ~5,000 requests), then
# rounds of 1,000 requests with the server's VmRSS sampled after each, for SOAK_ROUNDS rounds or
# until SOAK_SECONDS have passed (at least SOAK_MIN_ROUNDS). Medians of SOAK_WINDOW samples judge it.
SOAK_WARM_UP_PER_CLIENT = 250  # 5,000
SOAK_ROUND_PER_CLIENT = 50  # 1,000 a round
SOAK_ROUNDS, SOAK_MIN_ROUNDS, SOAK_SECONDS, SOAK_WINDOW = 20, 12, 120.0, 5
RSS_GROWTH_LIMIT_KIB = 5 * 1024
ATTACKS_PER_KIND = 100
PHASE_DEADLINE = 150.0  # seconds for any one burst of load, however slow the machine

HANDSHAKE_ERA = "2025-11-25"
MODERN_ERA = "2026-07-28"
MODERN_META = {
    "io.modelcontextprotocol/protocolVersion": MODERN_ERA,
    "io.modelcontextprotocol/clientCapabilities": {},
}

# What every answer must say, from the module itself.
MANIFEST = m.ManifestFile(EXAMPLE).version().manifest  # as served: its signature checked
ROBOT = MANIFEST.robot_name or ""
VIEWS = {m.resource_uri(ROBOT, v.kind): (v.mime_type, v.text(MANIFEST)) for v in m.VIEWS}
URIS = sorted(VIEWS)
LISTED = sorted([*VIEWS, m.CARD_URI])  # the card's page is listed too
VALIDATED = m.validate(MANIFEST).as_dict()
assert VALIDATED["ok"] is True


# --- a raw HTTP/1.1 client ----------------------------------------------------------


@dataclass
class Reply:
    status: int
    headers: dict[str, str]
    body: bytes

    def json(self) -> Any:
        return json.loads(self.body)

    def events(self) -> list[Any]:
        """The JSON-RPC messages of an event-stream body."""
        lines = self.body.decode("utf-8").splitlines()
        return [json.loads(line[5:]) for line in lines if line.startswith("data:")]


class Connection:
    """One keep-alive connection to 127.0.0.1; never reconnects: a drop or `Connection: close` fails."""

    def __init__(self, port: int, headers: dict[str, str] | None = None) -> None:
        self.port, self.headers = port, headers or {}

    async def __aenter__(self) -> Connection:
        self.reader, self.writer = await asyncio.open_connection("127.0.0.1", self.port)
        return self

    async def __aexit__(self, *exc: object) -> None:
        self.writer.close()
        with contextlib.suppress(OSError):
            await self.writer.wait_closed()

    async def send(
        self,
        method: str,
        path: str = "/mcp",
        body: bytes | None = None,
        headers: dict[str, str] | None = None,
    ) -> Reply:
        fields = {k.replace("-", "_"): v for k, v in {**self.headers, **(headers or {})}.items()}
        self.writer.write(raw_request(self.port, method, path, body, **fields))
        status, received, data = await read_response(self.reader)
        assert received.get("connection") != "close", (status, received)
        return Reply(status, received, data)


# --- a load client: both eras and /healthz, every answer checked ------------------------


class LoadClient:
    """MCP over one Connection: handshake-era sessions (initialize, then
    Mcp-Session-Id, then DELETE) and self-contained 2026-07-28 requests."""

    def __init__(self, conn: Connection, offset: int) -> None:
        self.conn = conn
        self.offset = offset  # clients start at different points of the mix
        self.ids = itertools.count(1)
        self.session: str | None = None

    def _message(self, method: str, params: dict[str, Any] | None) -> tuple[int, bytes]:
        request_id = next(self.ids)
        message: dict[str, Any] = {"jsonrpc": "2.0", "id": request_id, "method": method}
        if params is not None:
            message["params"] = params
        return request_id, json.dumps(message).encode()

    async def legacy(self, method: str, params: dict[str, Any] | None = None) -> Any:
        assert self.session is not None
        request_id, body = self._message(method, params)
        headers = {**MCP_HEADERS, "Mcp-Session-Id": self.session, "MCP-Protocol-Version": HANDSHAKE_ERA}
        reply = await self.conn.send("POST", "/mcp", body, headers)
        assert reply.status == 200 and reply.headers["content-type"] == "text/event-stream", reply
        (answer,) = reply.events()
        assert answer["id"] == request_id and "error" not in answer, answer
        return answer["result"]

    async def modern(self, method: str, params: dict[str, Any], name: str | None = None) -> Any:
        request_id, body = self._message(method, {**params, "_meta": MODERN_META})
        headers = {**MCP_HEADERS, "MCP-Protocol-Version": MODERN_ERA, "Mcp-Method": method}
        if name is not None:
            headers["Mcp-Name"] = name
        reply = await self.conn.send("POST", "/mcp", body, headers)
        assert reply.status == 200 and reply.headers["content-type"] == "application/json", reply
        assert "mcp-session-id" not in reply.headers, reply
        answer = reply.json()
        assert answer["id"] == request_id and "error" not in answer, answer
        return answer["result"]

    async def open_session(self) -> None:
        """initialize: its answer checked, its Mcp-Session-Id kept."""
        hello = {
            "protocolVersion": HANDSHAKE_ERA,
            "capabilities": {},
            "clientInfo": {"name": "load", "version": "1"},
        }
        request_id, body = self._message("initialize", hello)
        reply = await self.conn.send("POST", "/mcp", body, MCP_HEADERS)
        assert reply.status == 200, reply
        (answer,) = reply.events()
        assert answer["id"] == request_id and answer["result"]["protocolVersion"] == HANDSHAKE_ERA, answer
        assert answer["result"]["serverInfo"]["name"] == m.NAME, answer
        self.session = reply.headers["mcp-session-id"]
        assert re.fullmatch(r"[0-9a-f]{32}", self.session), reply

    async def initialized(self) -> None:
        assert self.session is not None
        notification = json.dumps({"jsonrpc": "2.0", "method": "notifications/initialized"}).encode()
        headers = {**MCP_HEADERS, "Mcp-Session-Id": self.session, "MCP-Protocol-Version": HANDSHAKE_ERA}
        reply = await self.conn.send("POST", "/mcp", notification, headers)
        assert (reply.status, reply.body) == (202, b""), reply

    async def close_session(self) -> None:
        assert self.session is not None
        headers = {"Mcp-Session-Id": self.session, "MCP-Protocol-Version": HANDSHAKE_ERA}
        reply = await self.conn.send("DELETE", "/mcp", headers=headers)
        assert reply.status == 200, reply
        self.session = None

    async def call(
        self, era: str, method: str, params: dict[str, Any] | None = None, name: str | None = None
    ) -> Any:
        if era == "legacy":
            return await self.legacy(method, params)
        return await self.modern(method, params or {}, name)

    async def read(self, era: str, uri: str) -> None:
        result = await self.call(era, "resources/read", {"uri": uri}, uri)
        mime_type, text = VIEWS[uri]
        assert result["contents"] == [{"uri": uri, "mimeType": mime_type, "text": text}], result

    async def validate(self, era: str) -> None:
        result = await self.call(era, "tools/call", {"name": "validate", "arguments": {}}, "validate")
        assert result["isError"] is False and result["structuredContent"] == VALIDATED, result
        assert json.loads(result["content"][0]["text"]) == VALIDATED, result

    async def list(self, era: str) -> None:
        result = await self.call(era, "resources/list")
        assert sorted(r["uri"] for r in result["resources"]) == LISTED, result

    async def ping(self) -> None:
        assert await self.legacy("ping") == {}

    async def healthz(self) -> None:
        reply = await self.conn.send("GET", "/healthz")
        assert (reply.status, reply.json()) == (200, {"status": "ok"}), reply

    async def step(self, index: int) -> None:
        """Request `index` of this client: one HTTP request, its answer checked.
        Every SESSION_REQUESTS requests: initialize, notifications/initialized,
        a mix of both eras and /healthz, then DELETE of the session."""
        position = index % SESSION_REQUESTS
        if position == 0:
            await self.open_session()
        elif position == 1:
            await self.initialized()
        elif position == SESSION_REQUESTS - 1:
            await self.close_session()
        else:
            k = self.offset + index // SESSION_REQUESTS * (SESSION_REQUESTS - 3) + position - 2
            uri = URIS[k // 8 % len(URIS)]
            mix: list[Callable[[], Awaitable[None]]] = [
                lambda: self.read("legacy", uri),
                lambda: self.read("modern", uri),
                lambda: self.validate("legacy"),
                lambda: self.validate("modern"),
                lambda: self.list("legacy"),
                lambda: self.list("modern"),
                self.ping,
                self.healthz,
            ]
            await mix[k % len(mix)]()


@dataclass
class Load:
    """What a burst of load did: checked answers, their latencies, failures."""

    total: int
    done: int = 0
    latencies: list[float] = field(default_factory=list)
    failures: list[str] = field(default_factory=list)
    elapsed: float = 0.0

    def summary(self) -> str:
        ordered = sorted(self.latencies)

        def ms(q: float) -> float:
            return 1000 * ordered[min(len(ordered) - 1, int(q * len(ordered)))]

        return (
            f"{self.done} requests in {self.elapsed:.1f} s: {self.done / self.elapsed:.0f} requests/s, "
            f"latency p50 {ms(0.50):.1f} ms, p99 {ms(0.99):.1f} ms, max {1000 * ordered[-1]:.1f} ms"
        )


async def run_load(
    port: int,
    clients: int,
    per_client: int,
    headers: dict[str, str] | None = None,
    alongside: Callable[[Load], Awaitable[None]] | None = None,
) -> Load:
    """`clients` keep-alive connections × `per_client` checked requests each,
    concurrently (and `alongside`, given the progress, while they run)."""
    assert per_client % SESSION_REQUESTS == 0  # every session is closed again
    load = Load(total=clients * per_client)
    started = time.perf_counter()

    async def one_client(index: int) -> None:
        request = 0
        try:
            async with Connection(port, headers) as conn:
                client = LoadClient(conn, offset=index)
                for request in range(per_client):
                    began = time.perf_counter()
                    await client.step(request)
                    load.latencies.append(time.perf_counter() - began)
                    load.done += 1
        except Exception as e:  # counted and reported by the caller
            load.failures.append(f"client {index}, request {request}: {type(e).__name__}: {e}"[:2000])
        load.elapsed = max(load.elapsed, time.perf_counter() - started)

    work = [one_client(index) for index in range(clients)] + ([alongside(load)] if alongside else [])
    await asyncio.wait_for(asyncio.gather(*work), PHASE_DEADLINE)
    return load


def assert_all_answered(load: Load) -> None:
    assert not load.failures, f"{len(load.failures)} failures, e.g. {load.failures[:3]}"
    assert load.done == load.total == len(load.latencies)


def rss_kib(pid: int) -> int:
    """VmRSS of a process: its resident memory now."""
    status = Path(f"/proc/{pid}/status").read_text()
    return next(int(row.split()[1]) for row in status.splitlines() if row.startswith("VmRSS:"))


# --- servers ------------------------------------------------------------------------


def stopped_cleanly(served: Served) -> None:
    assert served.stop() == 0
    assert "Traceback" not in served.stderr and "Exception" not in served.stderr, served.stderr[-3000:]


@pytest.fixture(scope="module")
def server() -> Iterator[Served]:
    served = Served("--http", "127.0.0.1:0")
    yield served
    stopped_cleanly(served)


@pytest.fixture(scope="module")
def token() -> str:
    return "load-token-" + "x7" * 16


@pytest.fixture(scope="module")
def token_server(token: str) -> Iterator[Served]:
    served = Served("--http", "127.0.0.1:0", env={m.TOKEN_ENV: token})
    yield served
    stopped_cleanly(served)


# --- 20 clients × 500 requests, with refusals counted alongside -------------------------


def test_load_in_both_eras_while_refusals_hold(token_server: Served, token: str) -> None:
    """10,000 authorized requests on 20 keep-alive connections, 0 failures;
    meanwhile every unauthenticated or DNS-rebinding request, each on its own
    connection, is refused every single time."""
    port, auth = token_server.port, {"Authorization": f"Bearer {token}"}
    foreign = {
        # kind: (headers, status)
        "no token": ({}, 401),
        "wrong token": ({"Authorization": "Bearer " + "w" * 32}, 401),
        "token without Bearer": ({"Authorization": token}, 401),
        "foreign Host": ({**auth, "Host": "evil.example.com"}, 421),
        "foreign Host, our port": ({**auth, "Host": f"evil.example.com:{port}"}, 421),
        "foreign Origin": ({**auth, "Origin": "http://evil.example.com"}, 403),
    }
    answered: Counter[tuple[str, int]] = Counter()
    late: list[str] = []
    leaks: list[Reply] = []  # a refusal that shows the robot, or a 401 without its challenge

    async def attacker(kind: str, load: Load) -> None:
        headers, _ = foreign[kind]
        for attempt in range(ATTACKS_PER_KIND):
            # Spread over the first 90% of the load: each attempt waits for its share of it.
            while load.done < (attempt + 1) * load.total * 9 // 10 // ATTACKS_PER_KIND and not load.failures:
                await asyncio.sleep(0.005)
            if load.done >= load.total:
                late.append(kind)
            async with Connection(port) as conn:
                if attempt % 2:
                    initialize = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {}}
                    reply = await conn.send(
                        "POST", "/mcp", json.dumps(initialize).encode(), {**MCP_HEADERS, **headers}
                    )
                else:
                    params = {"uri": URIS[0], "_meta": MODERN_META}
                    read = {"jsonrpc": "2.0", "id": 1, "method": "resources/read", "params": params}
                    modern = {
                        "MCP-Protocol-Version": MODERN_ERA,
                        "Mcp-Method": "resources/read",
                        "Mcp-Name": URIS[0],
                    }
                    reply = await conn.send(
                        "POST", "/mcp", json.dumps(read).encode(), {**MCP_HEADERS, **modern, **headers}
                    )
            answered[kind, reply.status] += 1
            challenged = reply.headers.get("www-authenticate", "").startswith("Bearer")
            if ROBOT.encode() in reply.body or (reply.status == 401) != challenged:
                leaks.append(reply)

    async def attackers(load: Load) -> None:
        await asyncio.gather(*(attacker(kind, load) for kind in foreign))

    started = time.monotonic()
    load = asyncio.run(run_load(port, CLIENTS, REQUESTS_PER_CLIENT, auth, attackers))
    windows = int((time.monotonic() - started) // m.LOG_WINDOW_SECONDS) + 2
    print(f"\nload, token required: {load.summary()}; {sum(answered.values())} refusals alongside")
    assert_all_answered(load)
    assert load.total == 10_000
    assert answered == Counter({(kind, status): ATTACKS_PER_KIND for kind, (_, status) in foreign.items()})
    assert not late, f"refusals sent after the load ended: {Counter(late)}"
    assert not leaks, leaks[:3]
    # A flood of refusals is logged by reason (Host, Origin, token), at most once a window each, and never
    # shows the token.
    refusals = [line for line in token_server.stderr.splitlines() if "refused a request" in line]
    reasons = {line.split("refused a request ")[1].split(" ")[0] for line in refusals}
    assert reasons == {"for", "from", "without"} and len(refusals) <= 3 * windows, refusals
    assert token not in token_server.stderr


# --- soak: memory across 20,000 requests ----------------------------------------------


def median(values: list[int]) -> float:
    ordered = sorted(values)
    middle = len(ordered) // 2
    return ordered[middle] if len(ordered) % 2 else (ordered[middle - 1] + ordered[middle]) / 2


def soak_grew(samples: list[int], limit: float = RSS_GROWTH_LIMIT_KIB) -> bool:
    """Whether VmRSS samples (KiB, one per round after the warm-up) show a leak: the median of
    the last SOAK_WINDOW samples exceeds the median of the first SOAK_WINDOW by more than
    `limit`, and it is still growing: by more than half of `limit` since the samples at
    the middle. One-off growth (a burst of concurrency raising the allocator's high-water
    mark, which it keeps) passes once it has levelled off; a leak grows in both halves."""
    assert len(samples) >= 3 * SOAK_WINDOW
    middle = (len(samples) - SOAK_WINDOW) // 2
    early, mid = median(samples[:SOAK_WINDOW]), median(samples[middle : middle + SOAK_WINDOW])
    late = median(samples[-SOAK_WINDOW:])
    return late - early > limit and late - mid > limit / 2


def test_soak_rule() -> None:
    """The rule itself, on made-up samples (KiB): noise, a step and a levelling off pass;
    steady growth fails, whether small and long or large and short."""
    flat = [90_000 + (i % 3) * 300 for i in range(20)]
    step_then_flat = [90_000] * 4 + [97_000] * 16
    levelling = [90_000 + min(i, 8) * 900 for i in range(20)]
    leak = [90_000 + i * 400 for i in range(20)]  # 400 KiB a round: 400 bytes a request
    short_leak = [90_000 + i * 800 for i in range(15)]
    late_step = [90_000] * 14 + [97_000] * 6
    assert not any(soak_grew(s) for s in (flat, step_then_flat, levelling))
    assert all(soak_grew(s) for s in (leak, short_leak, late_step))


@pytest.mark.skipif(not Path("/proc/self/status").exists(), reason="reads VmRSS from /proc (Linux)")
def test_memory_is_flat_across_a_soak(server: Served) -> None:
    """After a 5,000-request warm-up, rounds of 1,000 more (40 sessions opened and deleted each;
    up to 20,000 in all, bounded in time) leave the server's resident memory flat: see soak_grew()."""
    pid = server.proc.pid
    warm_up = asyncio.run(run_load(server.port, CLIENTS, SOAK_WARM_UP_PER_CLIENT))
    assert_all_answered(warm_up)
    samples: list[int] = []
    started = time.monotonic()
    while len(samples) < SOAK_ROUNDS and (
        len(samples) < SOAK_MIN_ROUNDS or time.monotonic() - started < SOAK_SECONDS
    ):
        soak = asyncio.run(run_load(server.port, CLIENTS, SOAK_ROUND_PER_CLIENT))
        assert_all_answered(soak)
        time.sleep(0.2)  # let the last connections and sessions wind down
        samples.append(rss_kib(pid))
    mib = [round(s / 1024, 1) for s in samples]
    print(
        f"\nsoak: {len(samples) * CLIENTS * SOAK_ROUND_PER_CLIENT} requests after a "
        f"{CLIENTS * SOAK_WARM_UP_PER_CLIENT}-request warm-up in {time.monotonic() - started:.0f} s; "
        f"server VmRSS (MiB) after each 1,000: {mib}"
    )
    assert not soak_grew(samples), f"server VmRSS (MiB) after each 1,000 requests: {mib}"
