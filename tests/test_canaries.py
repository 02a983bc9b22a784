"""Canaries: where the module relies on a dependency beyond its documented API (robot_md_mcp's
docstrings say which), a test here fails loudly when that dependency changes."""

from __future__ import annotations

import inspect
import socket
import time

import serving
from serving import Served

import robot_md_mcp as rmm


def test_uvicorn_protocol_canary() -> None:
    """request_head_deadline() subclasses uvicorn's H11Protocol (passed through the public
    Config(http=...)) and uses these names of it and of its request cycle and flow control;
    uvicorn has no public request-head deadline and no way to make room when full."""
    from uvicorn.protocols.http import flow_control, h11_impl
    from uvicorn.protocols.http.h11_impl import H11Protocol

    source = inspect.getsource(h11_impl)
    for name in ("def connection_made", "def on_response_complete", "def data_received", "self.cycle"):
        assert name in source, f"uvicorn's H11Protocol changed: {name} is gone"
    for name in ("self.loop", "self.timeout_keep_alive", "self.connections", "self.transport", "self.scope"):
        assert name in source, f"uvicorn's H11Protocol changed: {name} is gone"
    for name in ("self.response_complete", "self.response_started", "self.more_body", "self.flow"):
        assert name in source, f"uvicorn's RequestResponseCycle changed: {name} is gone"
    for name in ("len(self.connections) >= self.limit_concurrency", "self.connections.discard(self)"):
        assert name in source, f"uvicorn's H11Protocol changed: {name} is gone"
    assert "self.write_paused" in inspect.getsource(flow_control), "uvicorn's FlowControl changed"
    subclass = rmm.request_head_deadline(H11Protocol, rmm.HttpLimits())
    assert issubclass(subclass, H11Protocol)


def test_a_silent_connection_is_closed_after_the_keep_alive_timeout() -> None:
    """The behaviour the subclass exists for, through the real server: a peer that connects and
    sends nothing is closed after the keep-alive timeout (0.2 s here), while requests are still
    answered; and a head-only peer is closed to make room when the server is full (1 here)."""
    served = Served(limits={"head_seconds": 0.2, "connections": 1})
    try:
        silent = socket.create_connection(("127.0.0.1", served.port), timeout=15)
        started = time.monotonic()
        assert served.request("GET", "/healthz")[0] == 200
        assert silent.recv(1) == b""  # closed by the server, not timed out here
        assert 0.15 <= time.monotonic() - started < 5
        silent.close()
        head_only = socket.create_connection(("127.0.0.1", served.port), timeout=15)
        head = f"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:{served.port}\r\nContent-Length: 9\r\n"
        head_only.sendall(head.encode() + b"Expect: 100-continue\r\n\r\n")
        received = b""  # the server's 100 Continue: it has the head and waits for the body
        while not received.endswith(b"\r\n\r\n"):
            received += head_only.recv(1)
        assert received == b"HTTP/1.1 100 Continue\r\n\r\n", received
        assert served.request("GET", "/healthz")[0] == 200  # a second connection: room was made
        assert head_only.recv(1) == b""
        assert time.monotonic() - started < 5  # before any deadline but the keep-alive's
        head_only.close()
    finally:
        assert served.stop() == 0


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
    handling sets, and serve_http sets too) and closes the sockets of `server_state.connections`
    (each a protocol with its `transport`): there is no public list of a server's connections."""
    import uvicorn
    import uvicorn.server

    server = uvicorn.Server(uvicorn.Config(app="robot_md_mcp:main"))
    assert server.should_exit is False
    assert isinstance(server.server_state.connections, set)
    # (the module's source: sse-starlette, which the SDK loads, wraps Server.handle_exit)
    source = inspect.getsource(uvicorn.server)
    assert "def handle_exit" in source and "self.should_exit = True" in source, "uvicorn.Server changed"
    assert "self.server_state.connections" in source, "uvicorn.Server changed: server_state.connections"
