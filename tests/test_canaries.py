"""Canaries: where the module relies on a dependency beyond its documented API (robot_md_mcp's
docstrings say which), a test here fails loudly when that dependency changes."""

from __future__ import annotations

import http.client
import os
import signal
import socket
import threading
import time
from typing import Any

import pytest
import serving
from http_served import uvicorn_on_a_thread

import robot_md_mcp as rmm


def _trickle_until_closed(sock: socket.socket, data: bytes, every: float, started: float) -> float:
    """Send `data` a byte every `every` seconds until the server closes the connection; the seconds
    since `started` (taken before the connection opened: the server, on a thread of this process,
    may hold the GIL between its accept and a later reading). Fails if all of it went out first."""
    sock.settimeout(every)
    for byte in data:
        try:
            sock.sendall(bytes([byte]))
            if sock.recv(1) == b"":
                return time.monotonic() - started
        except TimeoutError:
            continue  # still open: nothing to read yet
        except OSError:  # reset by the server
            return time.monotonic() - started
    raise AssertionError("the whole head went out: nobody closed the connection")


def _healthz(port: int) -> int:
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=15)
    try:
        conn.request("GET", "/healthz")
        return conn.getresponse().status
    finally:
        conn.close()


def test_uvicorn_head_deadline_canary() -> None:
    """with_head_deadline() extends uvicorn's H11Protocol (through the public Config(http=...))
    using uvicorn internals; this exercises what it must do through a real server, so a uvicorn
    release that changes them fails here: a head trickled in a byte at a time, on a new
    connection and on one kept alive after an answer, is cut at the head deadline (0.3 s here),
    where uvicorn alone stops its clock at the first byte; requests meanwhile are answered. (uvicorn as
    serve_http configures it, on a thread here: the process is not the point.)"""
    with uvicorn_on_a_thread(rmm.HttpLimits(head_seconds=0.3)) as port:
        head = f"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nX-Pad: {'a' * 400}\r\n\r\n".encode()
        opened = time.monotonic()
        with socket.create_connection(("127.0.0.1", port), timeout=15) as fresh:
            assert 0.25 <= _trickle_until_closed(fresh, head, 0.05, opened) < 10
        with socket.create_connection(("127.0.0.1", port), timeout=15) as kept:
            asked = time.monotonic()  # the next head's clock starts after this answer, so after now
            kept.sendall(head)
            answer = b""
            while not answer.endswith(b'{"status": "ok"}'):
                answer += kept.recv(4096)
            assert answer.startswith(b"HTTP/1.1 200"), answer
            assert 0.25 <= _trickle_until_closed(kept, head, 0.05, asked) < 10
        assert _healthz(port) == 200


def test_a_silent_connection_is_closed_after_the_keep_alive_timeout() -> None:
    """The behaviour the subclass exists for, through the real server: a peer that connects and
    sends nothing is closed after the keep-alive timeout (0.2 s here), while requests are still
    answered; and a head-only peer is closed to make room when the server is full (1 here)."""
    with uvicorn_on_a_thread(rmm.HttpLimits(head_seconds=0.2, connections=1)) as port:
        started = time.monotonic()  # before the connection: the server's clock cannot start earlier
        silent = socket.create_connection(("127.0.0.1", port), timeout=15)
        assert _healthz(port) == 200
        assert silent.recv(1) == b""  # closed by the server, not timed out here
        assert 0.15 <= time.monotonic() - started < 5
        silent.close()
        head_only = socket.create_connection(("127.0.0.1", port), timeout=15)
        head = f"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nContent-Length: 9\r\n"
        head_only.sendall(head.encode() + b"Expect: 100-continue\r\n\r\n")
        received = b""  # the server's 100 Continue: it has the head and waits for the body
        while not received.endswith(b"\r\n\r\n"):
            received += head_only.recv(1)
        assert received == b"HTTP/1.1 100 Continue\r\n\r\n", received
        assert _healthz(port) == 200  # a second connection: room was made
        assert head_only.recv(1) == b""
        assert time.monotonic() - started < 5  # before any deadline but the keep-alive's
        head_only.close()


@pytest.mark.process
def test_a_request_before_initialize_is_told_to_initialize_first() -> None:
    """explain_pre_initialize() recognises the SDK's pre-initialize refusal by its code and text;
    if the SDK rewords it, this fails. A bad request after initialize keeps the SDK's answer."""
    from conftest import EXAMPLE

    initialize: dict = {
        "jsonrpc": "2.0",
        "id": 2,
        "method": "initialize",
        "params": {
            "protocolVersion": "2025-11-25",
            "capabilities": {},
            "clientInfo": {"name": "t", "version": "0"},
        },
    }
    sent: list[dict] = [
        {"jsonrpc": "2.0", "id": 1, "method": "tools/list"},
        initialize,
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        {"jsonrpc": "2.0", "id": 3, "method": "resources/read", "params": {}},
    ]
    answers = serving.answers(EXAMPLE, messages=sent)[0]
    assert answers[1]["error"] == {
        "code": -32602,
        "message": "Invalid request parameters: send initialize first (tools/list came before it)",
    }
    assert "result" in answers[2]
    assert answers[3]["error"]["code"] == -32602 and "initialize first" not in answers[3]["error"]["message"]


def test_uvicorn_server_canary() -> None:
    """end_if_stuck_when_stopped() reads uvicorn.Server's `should_exit` (which uvicorn's signal
    handling sets, and serve_http sets too) and closes connection_sockets(server), read from
    `server_state.connections`: there is no public list of a server's connections. Exercised on a
    real server, with the SDK's HTTP stack loaded (sse-starlette, which it brings, wraps
    Server.handle_exit)."""
    import mcp.server.streamable_http  # noqa: F401
    import uvicorn

    async def app(scope: Any, receive: Any, send: Any) -> None:
        await receive()

    listening = socket.create_server(("127.0.0.1", 0))
    server = uvicorn.Server(uvicorn.Config(app, log_config=None, log_level="critical", lifespan="off"))
    thread = threading.Thread(target=server.run, kwargs={"sockets": [listening]}, daemon=True)
    thread.start()
    with socket.create_connection(listening.getsockname(), timeout=5) as client:
        deadline = time.monotonic() + 5
        while not rmm.connection_sockets(server) and time.monotonic() < deadline:
            time.sleep(0.01)
        (fd,) = rmm.connection_sockets(server)
        with socket.socket(fileno=os.dup(fd)) as ours:
            assert ours.getpeername() == client.getsockname()
        assert server.should_exit is False
        try:
            server.handle_exit(signal.SIGINT, None)  # what uvicorn's signal handler calls
            assert server.should_exit is True
        finally:
            # sse-starlette's wrap also sets its process-wide AppStatus.should_exit, which ends every later
            # event stream in this process at once (empty): later in-process tests must not inherit it.
            from sse_starlette.sse import AppStatus

            AppStatus.should_exit = False
    thread.join(10)
    assert not thread.is_alive(), "uvicorn.Server did not stop once should_exit was set"
