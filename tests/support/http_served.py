"""Raw HTTP/1.1 on 127.0.0.1 for tests, over asyncio: a well-behaved client's requests and sessions,
and hostile peers. (The server they talk to: tests/support/serving.py `Served`.)"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import json
import logging
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

from serving import EXAMPLE, INIT, INIT_PARAMS, MCP_HEADERS, Served

# --- the command line in this process, where a start is refused before anything is served ------


def command_line(
    capsys: Any, *args: str | Path, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    """The command line run by main() in this process, `env` its whole environment (a refusal at start
    needs no process: it comes before anything is served): exit code, stdout and stderr. A start that
    serves instead is stopped by an alarm and fails, rather than hanging the run."""
    import robot_md_mcp as m

    def served(signum: int, frame: Any) -> None:
        raise AssertionError(f"served instead of refusing: {args}")

    alarm = getattr(signal, "SIGALRM", None)  # (Windows has none: there a regression hangs instead)
    previous = signal.signal(alarm, served) if alarm is not None else None
    if alarm is not None:
        signal.setitimer(signal.ITIMER_REAL, 20)
    try:
        code = m.main([str(a) for a in args], m.Machine(environ=env or {}))
    finally:
        if alarm is not None:
            signal.setitimer(signal.ITIMER_REAL, 0)
            signal.signal(alarm, previous)
    out, err = capsys.readouterr()
    return subprocess.CompletedProcess([str(a) for a in args], code, out, err)


# --- in this process: the ASGI app, as uvicorn hands it a request ---------------------------


async def answer_in_process(
    app: Any, method: str, raw_path: str, headers: list[tuple[bytes, bytes]] | None = None, body: bytes = b""
) -> tuple[int, dict[str, str], bytes]:
    """One request to an ASGI app (the one `serve --http` serves: its lifespan running) in this process, as
    uvicorn hands it over (the path percent-decoded, the raw path beside it): status, headers, body."""
    from urllib.parse import unquote

    import anyio

    sent: list[dict[str, Any]] = []
    pending = [{"type": "http.request", "body": body, "more_body": False}]

    async def receive() -> dict[str, Any]:
        if pending:
            return pending.pop()
        await anyio.sleep_forever()
        raise AssertionError

    async def send(message: dict[str, Any]) -> None:
        sent.append(message)

    scope = {"type": "http", "method": method, "path": unquote(raw_path), "raw_path": raw_path.encode()}
    scope |= {"query_string": b"", "root_path": "", "scheme": "http", "http_version": "1.1"}
    scope["headers"] = [(b"host", b"127.0.0.1:9")] if headers is None else headers
    if body:
        scope["headers"] = [*scope["headers"], (b"content-length", str(len(body)).encode())]
    with anyio.fail_after(5):
        await app(scope, receive, send)
    (start,) = [event for event in sent if event["type"] == "http.response.start"]
    fields = {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in start.get("headers", [])}
    return (
        start["status"],
        fields,
        b"".join(e.get("body", b"") for e in sent if e["type"] == "http.response.body"),
    )


@contextlib.asynccontextmanager
async def served_in_process(
    source: Path = EXAMPLE, listener: Any = None, limits: Any = None
) -> AsyncIterator[tuple[Any, str]]:
    """The app `serve --http` serves (`http_app`: the guard, the SDK's app, REST) for the manifest at
    `source`, its lifespan running, in this process: an httpx2 client to it and the MCP endpoint's URL
    (the SDK's Client takes both through `streamable_http_client`). No socket: the listener's rules
    (default: loopback port 9, no token) without serving on its socket."""
    import httpx2

    import robot_md_mcp as m

    listener = listener or m.HttpListener(socket=None, url="", allowed_hosts=("127.0.0.1:9",))
    origin = listener.url.removesuffix(m.MCP_PATH) or "http://127.0.0.1:9"
    guard = m.http_app(m.ManifestFile(source), listener, limits or m.HttpLimits())
    async with guard.app.router.lifespan_context(guard.app):  # type: ignore[attr-defined]
        transport = httpx2.ASGITransport(app=guard)
        async with httpx2.AsyncClient(transport=transport, base_url=origin, timeout=30) as http:
            yield http, f"{origin}{m.MCP_PATH}"


def sdk_client(http: Any, url: str, mode: str) -> Any:
    """The SDK's Client over `http` (an httpx2 client: `served_in_process`'s, or one with headers)."""
    from mcp import Client
    from mcp.client.streamable_http import streamable_http_client

    return Client(streamable_http_client(url, http_client=http), mode=mode)


class _Logged(logging.Handler):
    """What the server logs, as `serve --http` writes it on stderr (one bounded line each, within the log
    budget), and every record with a traceback."""

    def __init__(self, limits: Any) -> None:
        import robot_md_mcp as m

        super().__init__()
        self.lines: list[str] = []
        self.tracebacks: list[str] = []
        self.setFormatter(m.OneLineFormatter())
        self.addFilter(m.LogBudget(limits.log_lines, limits.log_window_seconds, say=self.lines.append))

    def handle(self, record: logging.LogRecord) -> bool:
        if record.exc_info:  # held back by the budget or not
            self.tracebacks.append(logging.Formatter().format(record))
        return bool(super().handle(record))

    def emit(self, record: logging.LogRecord) -> None:
        self.lines.append(self.format(record))


class ServedOnAThread(Served):
    """What `serve --http` serves for `source`, behind uvicorn as serve_http configures it (`uvicorn_server`:
    the head deadline, room made for connections), on a thread of this process and a free loopback port:
    Served's request() and initialize(), `lines` logged. For promises about the app and uvicorn's
    configuration, not about the process."""

    def __init__(
        self, limits: Any, source: Path, token: str | None
    ) -> None:  # no process: Served's own not run
        import robot_md_mcp as m

        self.listener = m.open_listener("127.0.0.1:0", environ={m.TOKEN_ENV: token or ""})
        self.port = self.listener.socket.getsockname()[1]
        self.url = self.listener.url
        self.logged = _Logged(limits)
        self.lines = self.logged.lines
        self.server = m.uvicorn_server(m.http_app(m.ManifestFile(source), self.listener, limits), limits)
        self.thread = threading.Thread(
            target=self.server.run, kwargs={"sockets": [self.listener.socket]}, daemon=True
        )

    def session(self, version: str) -> dict[str, str]:
        """The headers of a new handshake-era session at `version`, initialized."""
        init = {**INIT, "params": {**INIT_PARAMS, "protocolVersion": version}}
        status, headers, body = self.request("POST", "/mcp", json.dumps(init).encode(), MCP_HEADERS)
        assert status == 200 and f'"protocolVersion":"{version}"' in body.decode(), body
        session = {**MCP_HEADERS, "Mcp-Session-Id": headers["mcp-session-id"]}
        if version != "2025-03-26":  # the header came with 2025-06-18
            session["Mcp-Protocol-Version"] = version
        initialized = b'{"jsonrpc": "2.0", "method": "notifications/initialized"}'
        assert self.request("POST", "/mcp", initialized, session)[0] == 202
        return session


@contextlib.contextmanager
def _unconfigured(logger: logging.Logger) -> Iterator[None]:
    """A logger as no configuration left it (a uvicorn.Config elsewhere in this process configures uvicorn's:
    its own handler, no propagation); put back at the end."""
    was = (logger.level, logger.propagate, logger.handlers[:], logger.disabled)
    logger.setLevel(logging.NOTSET)
    logger.propagate, logger.handlers, logger.disabled = True, [], False
    try:
        yield
    finally:
        logger.setLevel(was[0])
        logger.propagate, logger.handlers, logger.disabled = was[1], was[2], was[3]


@contextlib.contextmanager
def served_on_a_thread(
    limits: Any = None, source: Path = EXAMPLE, token: str | None = None
) -> Iterator[ServedOnAThread]:
    """A ServedOnAThread, started; stopped at the end, where nothing may have logged a traceback."""
    import robot_md_mcp as m

    served = ServedOnAThread(limits or m.HttpLimits(), source, token)
    stack = contextlib.ExitStack()
    for name in ("uvicorn", "uvicorn.error", "uvicorn.access"):  # as a process has them (log_config=None)
        stack.enter_context(_unconfigured(logging.getLogger(name)))
    logging.getLogger().addHandler(served.logged)
    served.thread.start()
    try:
        deadline = time.monotonic() + 30
        while not served.server.started:
            assert served.thread.is_alive() and time.monotonic() < deadline, "uvicorn did not start"
            time.sleep(0.01)
        yield served
    finally:
        served.server.should_exit = True  # never handle_exit: conftest says why
        served.thread.join(10)
        served.listener.socket.close()
        logging.getLogger().removeHandler(served.logged)
        stack.close()
    assert not served.thread.is_alive(), "uvicorn did not stop"
    assert not served.logged.tracebacks, served.logged.tracebacks[:3]


@contextlib.contextmanager
def uvicorn_on_a_thread(limits: Any) -> Iterator[int]:
    """served_on_a_thread for the example: its port."""
    with served_on_a_thread(limits) as served:
        yield served.port


# --- raw asyncio HTTP on 127.0.0.1: a well-behaved client and hostile peers ---------------


async def read_response(reader: asyncio.StreamReader) -> tuple[int, dict[str, str], bytes]:
    """One HTTP/1.1 response (a Content-Length or a chunked body)."""
    head = ["HTTP/1.1 100"]
    while head[0].startswith("HTTP/1.1 100"):  # skip interim answers (100 Continue)
        head = (await reader.readuntil(b"\r\n\r\n")).decode("latin-1").split("\r\n")
    status = int(head[0].split(" ", 2)[1])
    fields = {k.strip().lower(): v.strip() for k, _, v in (line.partition(":") for line in head[1:] if line)}
    if "content-length" in fields:
        return status, fields, await reader.readexactly(int(fields["content-length"]))
    chunks = []
    while size := int((await reader.readuntil(b"\r\n")).split(b";")[0], 16):
        chunks.append(await reader.readexactly(size))
        await reader.readexactly(2)
    await reader.readexactly(2)
    return status, fields, b"".join(chunks)


def raw_request(
    port: int, method: str, path: str = "/mcp", body: bytes | None = None, **headers: str
) -> bytes:
    fields = {"Host": f"127.0.0.1:{port}", **{k.replace("_", "-"): v for k, v in headers.items()}}
    if body is not None:
        fields["Content-Length"] = str(len(body))
    head = f"{method} {path} HTTP/1.1\r\n" + "".join(f"{k}: {v}\r\n" for k, v in fields.items())
    return f"{head}\r\n".encode("latin-1") + (body or b"")


def jsonrpc(method: str, request_id: int | None = None, **params: object) -> bytes:
    message: dict[str, object] = {"jsonrpc": "2.0", "method": method}
    if request_id is not None:
        message["id"] = request_id
    if params:
        message["params"] = params
    return json.dumps(message).encode()


SESSION_HEADERS: dict[str, Any] = {
    "Content_Type": "application/json",
    "Accept": "application/json, text/event-stream",
}


async def exchange(port: int, request: bytes, conn: tuple | None = None) -> tuple[int, dict[str, str], bytes]:
    """One request on `conn` (reader, writer), or on a connection of its own."""
    reader, writer = conn or await asyncio.open_connection("127.0.0.1", port)
    try:
        writer.write(request)
        return await read_response(reader)
    finally:
        if conn is None:
            writer.close()


async def open_session(port: int, conn: tuple | None = None) -> str | None:
    """initialize and notifications/initialized; the session id, or None if refused."""
    status, fields, _ = await exchange(
        port, raw_request(port, "POST", body=json.dumps(INIT).encode(), **SESSION_HEADERS), conn
    )
    if status != 200:
        return None
    session = fields["mcp-session-id"]
    headers = {**SESSION_HEADERS, "Mcp_Session_Id": session, "MCP_Protocol_Version": "2025-06-18"}
    await exchange(
        port, raw_request(port, "POST", body=jsonrpc("notifications/initialized"), **headers), conn
    )
    return session


# Hostile peers: each kind holds what it can until the server closes it, then comes back.
# A dropped peer comes back after this pause. (Without one, peers beyond the limit make a flood of
# connections, which costs the processor whatever the rules: docs/robustness.md says so.)
RECONNECT_SECONDS = 0.1
HOSTILE_KINDS = (
    "silent",
    "head-only",
    "trickle",
    "expect-then-silent",
    "session-hoarder",
    "unread-stream",
    "listen-stream",
)
# A 2026-07-28 `subscriptions/listen` stream: a POST whose answer is an event stream that never ends.
LISTEN = json.dumps(
    {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "subscriptions/listen",
        "params": {
            "_meta": {
                "io.modelcontextprotocol/protocolVersion": "2026-07-28",
                "io.modelcontextprotocol/clientCapabilities": {},
            },
            "notifications": {"resourcesListChanged": True},
        },
    }
).encode()
LISTEN_HEADERS = {
    **SESSION_HEADERS,
    "MCP_Protocol_Version": "2026-07-28",
    "Mcp_Method": "subscriptions/listen",
}


def _closed_by_the_server(writer: asyncio.StreamWriter) -> bool:
    """Whether the server has closed a connection we stopped reading (Linux: its TCP state)."""
    sock = writer.get_extra_info("socket")
    if writer.transport.is_closing() or sock is None or not hasattr(socket, "TCP_INFO"):
        return writer.transport.is_closing()
    return sock.getsockopt(socket.IPPROTO_TCP, socket.TCP_INFO, 8)[0] in (7, 8)  # TCP_CLOSE(_WAIT)


async def _until_closed(reader: asyncio.StreamReader) -> None:
    while await reader.read(65536):
        pass


async def _hostile_once(kind: str, port: int, sessions: int) -> None:
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    try:
        if kind == "head-only":
            writer.write(raw_request(port, "POST", Content_Length="100", **SESSION_HEADERS))
        elif kind == "expect-then-silent":
            writer.write(
                raw_request(port, "POST", Content_Length="100", Expect="100-continue", **SESSION_HEADERS)
            )
        elif kind == "trickle":
            writer.write(raw_request(port, "POST", Content_Length="100000", **SESSION_HEADERS))
            while not writer.transport.is_closing() and not reader.at_eof():
                writer.write(b" ")
                await asyncio.sleep(0.3)
        elif kind == "session-hoarder":  # opens `sessions` sessions, then pings them round and round
            # (one every 0.2 s: hoarding places, not flooding the processor, which no limit here bounds)
            held = [s for _ in range(sessions) if (s := await open_session(port, (reader, writer)))]
            for i in itertools.count():
                await asyncio.sleep(0.2)
                headers = {
                    **SESSION_HEADERS,
                    "Mcp_Session_Id": held[i % len(held)],
                    "MCP_Protocol_Version": "2025-06-18",
                }
                if (
                    await exchange(
                        port, raw_request(port, "POST", body=jsonrpc("ping", i), **headers), (reader, writer)
                    )
                )[0] == 404:
                    held[i % len(held)] = await open_session(port, (reader, writer)) or held[i % len(held)]
        elif kind == "listen-stream":  # a stream it reads, as a 2026-07-28 client waiting for changes
            writer.write(raw_request(port, "POST", body=LISTEN, **LISTEN_HEADERS))
        elif kind == "unread-stream":  # an event stream it never reads
            session = await open_session(port, (reader, writer))
            headers = {
                "Accept": "text/event-stream",
                "Mcp_Session_Id": session or "",
                "MCP_Protocol_Version": "2025-06-18",
            }
            writer.write(raw_request(port, "GET", **headers))
            transport: Any = writer.transport  # a socket transport: it reads too
            transport.pause_reading()  # not a byte more is read: the server's buffers fill
            while not _closed_by_the_server(writer):
                await asyncio.sleep(0.1)
            return
        await _until_closed(reader)
    finally:
        writer.close()


async def hostile_peer(kind: str, port: int, sessions: int = 8, connects: list[int] | None = None) -> None:
    """One hostile peer of `kind`, reconnecting whenever it is dropped, until cancelled; each
    connection it opens is counted in `connects`."""
    while True:
        if connects is not None:
            connects.append(1)
        try:
            await _hostile_once(kind, port, sessions)
            await asyncio.sleep(RECONNECT_SECONDS)
        except (
            OSError,
            asyncio.IncompleteReadError,
            asyncio.LimitOverrunError,
            ValueError,
            LookupError,
            ZeroDivisionError,
        ):
            await asyncio.sleep(0.05)


class HostilePeers:
    """Hostile peers of the given kinds in a process of their own (so that their work never
    slows the well-behaved client under test), until stopped; a hoarder opens `sessions`."""

    def __init__(self, port: int, kinds: list[str], sessions: int = 8) -> None:
        self.proc = subprocess.Popen(
            [sys.executable, __file__, str(port), str(sessions), ",".join(kinds)],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            text=True,
        )

    def __enter__(self) -> HostilePeers:
        assert self.proc.stdout is not None
        assert self.proc.stdout.readline() == "started\n"
        return self

    def __exit__(self, *exc: object) -> None:
        self.proc.kill()
        self.proc.wait(timeout=20)


async def _hostile_peers(port: int, sessions: int, kinds: list[str]) -> None:
    tasks = [asyncio.create_task(hostile_peer(kind, port, sessions)) for kind in kinds]
    print("started", flush=True)
    await asyncio.gather(*tasks)


if __name__ == "__main__":  # HostilePeers: PORT SESSIONS KIND,KIND,...
    asyncio.run(_hostile_peers(int(sys.argv[1]), int(sys.argv[2]), sys.argv[3].split(",")))
