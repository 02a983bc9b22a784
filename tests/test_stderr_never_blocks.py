"""A stderr nobody reads never stops the server (docs/threat-model.md, T-HTTP-LOOP-5).

Whoever starts the server may give it a pipe for stderr and never read it. A long-running server's log
lines fill such a pipe at last (64 KiB on Linux: a quarter of an hour of a peer's garbage); from then on a
log line must not make the event loop wait: log lines are written by a thread of their own
(`NeverBlockingHandler`), the newest dropped and counted when too many wait. Here the pipe is 4 KiB and
filled to the brim at once, then peers make the server log (a foreign Host, a foreign Origin, requests that
are not HTTP), and a good client's `/healthz` and MCP requests must still be answered at once; when the
pipe is read again, the lines that waited come out, each one line (`-m process`). In process, by default:
the handler with a stream that takes nothing."""

from __future__ import annotations

import asyncio
import logging
import sys
import threading

import pytest
from http_served import SESSION_HEADERS, jsonrpc, open_session, raw_request
from hypothesis import given, settings
from hypothesis import strategies as st
from serving import Served

import robot_md_mcp as rmm

ANSWER_SECONDS = 2.0  # a request answered within this, however full stderr is

# Each a peer the server logs: (its request, the status it gets).
LOGGED_PEERS = {
    "foreign Host": (lambda port, i: raw_request(port, "GET", "/", Host=f"far-{i}.example"), 421),
    "foreign Origin": (lambda port, i: raw_request(port, "GET", "/", Origin=f"http://p{i}.example"), 403),
    "not HTTP": (lambda port, i: b"GARBAGE \x00\x01\r\n\r\n", 400),
}


async def answered(port: int, request: bytes) -> int:
    """The status of one request on a connection of its own; it must come within ANSWER_SECONDS."""
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    try:
        writer.write(request)
        status_line = await asyncio.wait_for(reader.readline(), ANSWER_SECONDS)
        return int(status_line.split()[1])
    finally:
        writer.close()


async def peers_then_a_good_client(port: int, rounds: int) -> None:
    for i in range(rounds):
        for kind, (request, status) in LOGGED_PEERS.items():
            assert await answered(port, request(port, i)) == status, kind
    assert await answered(port, raw_request(port, "GET", "/healthz")) == 200
    session = await asyncio.wait_for(open_session(port), ANSWER_SECONDS)
    assert session is not None
    headers = {**SESSION_HEADERS, "Mcp_Session_Id": session, "MCP_Protocol_Version": "2025-06-18"}
    ping = raw_request(port, "POST", body=jsonrpc("ping", 2), **headers)
    assert await answered(port, ping) == 200


@pytest.mark.process
@pytest.mark.skipif(sys.platform != "linux", reason="sizes a pipe (F_SETPIPE_SZ) and fills it (/proc): Linux")
def test_a_full_stderr_pipe_nobody_reads_keeps_no_client_waiting() -> None:
    served = Served(unread_stderr=4096)
    try:
        assert served.fill_stderr() == 4096
        asyncio.run(peers_then_a_good_client(served.port, rounds=10))
        # Read again: the lines that waited come out (the budget's first 20 and its held-back count).
        words = ("refused a request for Host", "from foreign Origin", "Invalid HTTP request received")
        logged = served.read_stderr(*words, timeout=30).lstrip(".").splitlines()
        assert all(any(word in line for line in logged) for word in words), logged
        assert all(len(line) <= rmm.MAX_LOG_LINE_CHARS for line in logged), logged
    finally:
        assert served.stop() == 0  # and it stops at once, stderr full or not
    assert "Traceback" not in served.stderr


class StuckStream:
    """A stream that takes nothing until let go (a pipe nobody reads), then keeps what it is given."""

    def __init__(self) -> None:
        self.go, self.text = threading.Event(), list[str]()

    def write(self, text: str) -> int:
        self.go.wait()
        self.text.append(text)
        return len(text)

    def flush(self) -> None:
        pass


@settings(max_examples=25, deadline=None)
@given(room=st.integers(2, 12), before=st.integers(0, 40), after=st.integers(1, 5))
def test_lines_that_find_no_room_are_dropped_counted_and_said(room: int, before: int, after: int) -> None:
    """Any number of lines logged while the stream takes nothing: none waits for it; at most `room` wait
    (the first of them is being written), the rest are dropped, and the next line that fits after the
    stream takes again is preceded by one saying how many. Nothing is lost unsaid, nothing said twice."""
    stream = StuckStream()
    handler = rmm.NeverBlockingHandler(stream, room=room)
    for i in range(before):
        handler.put(f"line {i}")  # returns at once: the stream is stuck
    handler.flush(timeout=0)
    kept = min(before, room)
    assert len(handler.waiting) == kept and handler.dropped == before - kept
    stream.go.set()
    handler.flush(timeout=10)
    for i in range(after):
        handler.put(f"later {i}")
        handler.flush(timeout=10)
    handler.close()
    dropped = before - kept
    said = [f"{rmm.NAME}: {dropped} log lines were dropped (stderr was full)\n"] if dropped else []
    expected = [f"line {i}\n" for i in range(kept)] + said + [f"later {i}\n" for i in range(after)]
    assert stream.text == expected


def test_the_log_budget_says_what_it_held_back_through_the_handler() -> None:
    """The held-back count goes where the lines go (the handler's queue), never straight to a stderr that
    might be full."""
    stream = StuckStream()
    stream.go.set()
    handler = rmm.NeverBlockingHandler(stream)
    handler.setFormatter(rmm.OneLineFormatter())
    now = [0.0]
    handler.addFilter(rmm.LogBudget(lines=2, window=10.0, clock=lambda: now[0], say=handler.put))
    log = logging.getLogger("test_stderr_never_blocks")
    log.propagate, log.handlers = False, [handler]
    for t in (0.0, 1.0, 2.0, 3.0, 11.0):
        now[0] = t
        log.warning("at %s", t)
    handler.flush(timeout=10)
    handler.close()
    held = f"{rmm.NAME}: 2 more log lines were held back (a flood)\n"
    assert stream.text == ["at 0.0\n", "at 1.0\n", held, "at 11.0\n"]
