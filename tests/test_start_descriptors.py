"""Started as daemons, supervisors and some hosts start programs: each of stdin, stdout and stderr
(fd 0, 1, 2) closed, on /dev/null, on /dev/full, or a pipe whose other end is gone, over both
transports (docs/robustness.md, "Standard descriptors"). The rule:

- a closed one is opened on /dev/null before anything else, so no file or socket takes its number
  (log lines never land in a client's socket, stdout or the manifest);
- stdin closed (or at its end) is the end of input: exit 0;
- stdout closed over stdio: nothing can be served: one line on stderr, exit 1;
- stderr unusable: logging is best effort: the server serves as usual, over stdio and HTTP;
- never a traceback.

Each case logs a line on purpose while serving (over stdio the live-update poller finds the file
broken; over HTTP a request with a foreign Host is refused), and a control case with stderr a pipe
of ours shows the line is written. One case (stdout closed over stdio) runs in the default tier, five
more (PROCESS) and the control with `-m process`, the whole matrix in the heavy tier."""

from __future__ import annotations

import contextlib
import http.client
import json
import os
import signal
import socket
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from conftest import EXAMPLE
from serving import (
    HANDSHAKE_VERSION,
    INIT,
    INIT_PARAMS,
    MCP_HEADERS,
    SERVER,
    RawServer,
    bare,
    faulty,
    is_jsonrpc,
    line,
    settings,
)

import robot_md_mcp as rmm

GOOD = EXAMPLE.read_text(encoding="utf-8")
BROKEN = "---\nrobot_name: [unclosed\n---\n"
POLL = 0.05  # seconds between the poller's looks at the file
POLLING = settings(poll_seconds=POLL)
FDS = {0: "stdin", 1: "stdout", 2: "stderr"}
STATES = ["closed", "devnull", "devfull", "gone"]  # gone: a pipe whose other end is closed
QUICK = {("stdio", 1, "closed")}
PROCESS = {
    ("stdio", 0, "closed"),
    ("http", 2, "devfull"),
    ("http", 2, "gone"),
    ("http", 2, "closed"),
    ("stdio", 2, "closed"),
}


def cases() -> Iterator[Any]:
    for transport in ("stdio", "http"):
        for fd in FDS:
            for state in STATES:
                case = (transport, fd, state)
                marks = (
                    [] if case in QUICK else [pytest.mark.process if case in PROCESS else pytest.mark.heavy]
                )
                yield pytest.param(transport, fd, state, marks=marks, id=f"{transport}-{FDS[fd]}-{state}")


@contextlib.contextmanager
def started(
    args: list[str | Path], fd: int, state: str, env: dict[str, str] | None = None
) -> Iterator[subprocess.Popen[bytes]]:
    """The server with `args`, `fd` in `state` ("pipe": a pipe of ours, as the others), `env` over ours."""
    streams: dict[str, Any] = {}
    command: list[str] = SERVER
    ours: list[int] = []
    if state == "closed":  # the shell closes it, then becomes the server
        command = ["/bin/sh", "-c", f'exec {fd}{"<" if fd == 0 else ">"}&- "$@"', "sh", *SERVER]
        streams[FDS[fd]] = None
    elif state in ("devnull", "devfull"):
        ours.append(os.open(os.devnull if state == "devnull" else "/dev/full", os.O_RDWR))
        streams[FDS[fd]] = ours[-1]
    elif state == "gone":
        read_end, write_end = os.pipe()
        keep, gone = (read_end, write_end) if fd == 0 else (write_end, read_end)
        os.close(gone)
        ours.append(keep)
        streams[FDS[fd]] = keep
    proc = bare(*args, command=command, env=env, **streams)
    for descriptor in ours:
        os.close(descriptor)
    try:
        yield proc
    finally:
        if proc.poll() is None:
            proc.kill()
        proc.wait(timeout=10)
        for pipe in (proc.stdin, proc.stdout, proc.stderr):
            if pipe is not None:
                with contextlib.suppress(OSError):
                    pipe.close()


def stderr_of(proc: subprocess.Popen[bytes]) -> str:
    return "" if proc.stderr is None else proc.stderr.read().decode("utf-8", "replace")


# --- stdio ---------------------------------------------------------------------------------------


def serve_stdio(manifest: Path, fd: int, state: str) -> None:
    with started([manifest], fd, state, env=POLLING) as proc:
        if fd == 0:
            stdin_is_not_ours(proc, state)
        elif fd == 1 and state == "closed":
            code, err = proc.wait(timeout=60), stderr_of(proc)
            assert (code, err) == (rmm.ExitCode.CANNOT_USE, rmm.NO_STDOUT + "\n")
        else:
            a_session(proc, manifest)
            err = stderr_of(proc)
            assert proc.wait(timeout=30) == 0, err
            assert "Traceback" not in err, err


def stdin_is_not_ours(proc: subprocess.Popen[bytes], state: str) -> None:
    """stdin closed, empty or at its end: exit 0 at once, nothing on stdout. /dev/full reads as
    one endless line of zero bytes: skipped as too long until it ends (it never does), so nothing
    is answered; served until a signal."""
    assert proc.stdout is not None
    if state == "devfull":
        with pytest.raises(subprocess.TimeoutExpired):
            proc.wait(timeout=3)
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(timeout=30) == -signal.SIGTERM
    out, err = proc.stdout.read(), stderr_of(proc)
    assert (proc.returncode if state == "devfull" else proc.wait(timeout=30), out) == (
        -signal.SIGTERM if state == "devfull" else 0,
        b"",
    ), err
    assert "Traceback" not in err, err


def a_session(proc: subprocess.Popen[bytes], manifest: Path) -> None:
    """initialize, the manifest broken for a few of the poller's looks (it logs a line) then
    restored, a ping; stdin closed. With stdout ours: exactly the two answers, only
    JSON-RPC. The manifest holds what we wrote, never a log line."""
    assert proc.stdin is not None
    init = {**INIT, "params": {**INIT_PARAMS, "protocolVersion": HANDSHAKE_VERSION}}
    proc.stdin.write(line(init) + line({"jsonrpc": "2.0", "method": "notifications/initialized"}))
    proc.stdin.flush()
    if proc.stdout is not None:  # serving (else the manifest may be read only after it is broken)
        assert json.loads(proc.stdout.readline())["id"] == 1
        manifest.write_text(BROKEN, encoding="utf-8")
        time.sleep(20 * POLL)  # the control below shows the poller said so meanwhile
        manifest.write_text(GOOD, encoding="utf-8")
    proc.stdin.write(line({"jsonrpc": "2.0", "id": 2, "method": "ping"}))
    proc.stdin.close()
    if proc.stdout is not None:
        rest = [json.loads(raw) for raw in proc.stdout.read().splitlines()]
        assert all(is_jsonrpc(m) for m in rest), rest
        assert [m["id"] for m in rest if "id" in m] == [2], rest
    assert manifest.read_text(encoding="utf-8") == GOOD


# --- HTTP ----------------------------------------------------------------------------------------


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def serve_http(manifest: Path, fd: int, state: str) -> None:
    """It serves: /healthz and an MCP initialize answered on one connection, around a refused
    request that makes the server log a line; every response whole HTTP, no log line in it. SIGTERM
    ends it with 0."""
    port = free_port()
    with started([manifest, "--http", f"127.0.0.1:{port}"], fd, state) as proc:
        conn = connected(port, proc)
        host = {"Host": f"127.0.0.1:{port}"}
        assert ask(conn, "GET", "/healthz", host) == (200, b'{"status": "ok"}')
        assert ask(conn, "GET", "/healthz", {"Host": "evil.example.com"})[0] == 421
        status, body = ask(conn, "POST", "/mcp", {**host, **MCP_HEADERS}, json.dumps(INIT).encode())
        assert status == 200 and b'"serverInfo"' in body and b"evil.example.com" not in body, body
        assert ask(conn, "GET", "/healthz", host) == (200, b'{"status": "ok"}')
        conn.close()
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(timeout=30) == 0
        out = proc.stdout.read() if proc.stdout is not None else b""
        err = stderr_of(proc)
        assert out == b"" and "Traceback" not in err, (out, err)
        if fd != 2:  # stderr is ours: the refusal was logged there, and the start line
            assert "evil.example.com" in err and f"127.0.0.1:{port}/mcp" in err, err
    assert manifest.read_text(encoding="utf-8") == GOOD


def connected(port: int, proc: subprocess.Popen[bytes]) -> http.client.HTTPConnection:
    """A connection once the server listens (it says where on stderr, which may not be ours)."""
    deadline = time.monotonic() + 60
    while True:
        assert proc.poll() is None, f"exited {proc.returncode}: {stderr_of(proc)}"
        try:
            socket.create_connection(("127.0.0.1", port), timeout=5).close()
            return http.client.HTTPConnection("127.0.0.1", port, timeout=30)
        except OSError:
            assert time.monotonic() < deadline, "never listened"
            time.sleep(0.05)


def ask(
    conn: http.client.HTTPConnection,
    method: str,
    path: str,
    headers: dict[str, str],
    body: bytes | None = None,
) -> tuple[int, bytes]:
    conn.request(method, path, body, headers)  # our Host, as given
    response = conn.getresponse()
    return response.status, response.read()


@pytest.mark.process
def test_the_control_the_log_line_reaches_a_usable_stderr(tmp_path: Path) -> None:
    """All three descriptors pipes of ours: the line the stdio cases make the poller log reaches
    stderr within the time they allow it."""
    manifest = tmp_path / "ROBOT.md"
    manifest.write_text(GOOD, encoding="utf-8")
    with started([manifest], 0, "pipe", env=POLLING) as proc:
        a_session(proc, manifest)
        err = stderr_of(proc)
        assert proc.wait(timeout=30) == 0, err
        assert "live updates resume once it is fixed" in err, err


@pytest.mark.parametrize(("transport", "fd", "state"), list(cases()))
def test_any_standard_descriptors_at_start(tmp_path: Path, transport: str, fd: int, state: str) -> None:
    manifest = tmp_path / "ROBOT.md"
    manifest.write_text(GOOD, encoding="utf-8")
    (serve_stdio if transport == "stdio" else serve_http)(manifest, fd, state)


@pytest.mark.process
def test_a_stray_print_while_serving_goes_to_stderr_never_onto_the_wire() -> None:
    """README: while serving, stdout carries nothing but the protocol. A print() or a write to fd 1 from
    any code in the process (a library's) lands on stderr; the session goes on."""
    with RawServer(EXAMPLE, command=faulty("stray-print")) as server:
        server.handshake()
        server.proc.send_signal(signal.SIGUSR1)
        time.sleep(0.5)
        assert server.result("ping") == {}
        server.assert_clean()
        assert "stray print" in server.stderr and "stray write" in server.stderr, server.stderr[-500:]
