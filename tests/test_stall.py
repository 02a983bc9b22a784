"""A file system whose reads stall (sshfs, NFS or SMB that stopped answering, a disk spinning up):
no file read on the event loop, one read at a time, each within READ_DEADLINE_SECONDS; and a signal
with a read stuck still ends the server at once (docs/robustness.md).

The default tier stands a gated read_source in for the file system (the logic: one read at a time,
the deadline, fresh content, the event loop free); the heavy tier mounts a real FUSE file system
(tests/support/stalling_fs.py) and drives the real process over stdio and HTTP."""

from __future__ import annotations

import importlib.util
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import pytest
from conftest import EXAMPLE, need
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from mcp import MCPError
from serving import MCP_HEADERS, RawServer, Served, bare, in_process

import robot_md_mcp as rmm

STALLED = "the file system has not answered a read within"


class GatedReads:
    """read_source as a file system that stalls while the gate is shut; it counts reads at once."""

    def __init__(self) -> None:
        self.gate = threading.Event()
        self.gate.set()
        self._lock = threading.Lock()
        self.in_flight = self.most_at_once = self.reads = 0
        self.pause = 0.0
        self.real = rmm.read_source

    def __call__(self, path: Path) -> rmm.Source:
        with self._lock:
            self.in_flight += 1
            self.reads += 1
            self.most_at_once = max(self.most_at_once, self.in_flight)
        try:
            self.gate.wait(timeout=20)  # every stall ends by itself
            source = self.real(path)
            time.sleep(self.pause)  # a read that takes a while: the file may change before it returns
            return source
        finally:
            with self._lock:
                self.in_flight -= 1


@pytest.fixture
def gated(monkeypatch: pytest.MonkeyPatch) -> Iterator[GatedReads]:
    reads = GatedReads()
    monkeypatch.setattr(rmm, "read_source", reads)
    yield reads
    reads.gate.set()


def _numbered(path: Path, n: int) -> None:
    new = path.with_suffix(".new")
    new.write_text(EXAMPLE.read_text(encoding="utf-8").replace("robot_name: bob", f"robot_name: bob{n}"))
    os.replace(new, path)  # as editors save


def _number(snap: rmm.Snapshot) -> int:
    return int(str(snap.manifest.robot_name).removeprefix("bob"))


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    callers=st.lists(st.sampled_from(["thread", "task"]), min_size=1, max_size=12),
    edits=st.lists(st.floats(0, 0.004), max_size=6),
)
def test_concurrent_callers_share_one_read_at_a_time_and_see_every_edit_made_before(
    tmp_path: Path, gated: GatedReads, callers: list[str], edits: list[float]
) -> None:
    """Any number of callers at once (threads calling version(), tasks on an event loop awaiting
    version_async(), as requests do), the file edited meanwhile: never two reads at once, and each
    caller gets a version at least as new as the file was when it called."""
    path = tmp_path / "ROBOT.md"
    _numbered(path, 0)
    mf = rmm.ManifestFile(path)
    gated.most_at_once, gated.pause = 0, 0.002
    written = [0]
    seen: list[tuple[int, int]] = []  # (the file's number when the caller called, the number it got)

    def call() -> None:
        before = written[-1]
        seen.append((before, _number(mf.version())))

    async def call_async() -> None:
        before = written[-1]
        seen.append((before, _number(await mf.version_async())))

    async def tasks() -> None:
        async with anyio.create_task_group() as group:
            for _ in range(callers.count("task")):
                group.start_soon(call_async)

    def edit() -> None:
        for n, pause in enumerate(edits, 1):
            time.sleep(pause)
            _numbered(path, n)
            written.append(n)

    threads = [threading.Thread(target=edit), threading.Thread(target=anyio.run, args=(tasks,))]
    threads += [threading.Thread(target=call) for _ in range(callers.count("thread"))]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=10)
    assert gated.most_at_once == 1
    assert len(seen) == len(callers) and all(got >= before for before, got in seen), seen


def test_a_stuck_read_fails_its_caller_at_the_deadline_and_later_callers_at_once(
    tmp_path: Path, gated: GatedReads
) -> None:
    path = tmp_path / "ROBOT.md"
    _numbered(path, 1)
    deadline = 0.3
    mf = rmm.ManifestFile(path, read_deadline=deadline)
    assert _number(mf.version()) == 1
    gated.gate.clear()
    outcomes: dict[str, tuple[float, str]] = {}

    def call(name: str, after: float) -> None:
        time.sleep(after)
        start = time.monotonic()
        with pytest.raises(rmm.ManifestError) as e:
            mf.version()
        outcomes[name] = (time.monotonic() - start, e.value.one_line())

    started = time.monotonic()
    callers = [("first", 0.0), ("during", deadline / 2)]
    threads = [threading.Thread(target=call, args=caller) for caller in callers]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=10)
    assert deadline * 0.9 <= time.monotonic() - started <= deadline + 0.25
    call("after", 0.0)  # the read is still stuck, past its deadline
    assert outcomes["after"][0] < 0.05, outcomes
    assert outcomes["first"][0] <= deadline + 0.2 and outcomes["during"][0] <= deadline / 2 + 0.2
    lines = {line for _, line in outcomes.values()}
    assert lines == {
        f"robot-md-mcp: {STALLED} {deadline:g} s; check the disk or network share the file is on ({path})"
    }
    assert gated.reads == 2 and gated.most_at_once == 1  # the first good read, then the stuck one alone

    _numbered(path, 2)
    gated.gate.set()  # the stall ends: the next caller reads afresh
    deadline_at = time.monotonic() + 5
    while gated.in_flight and time.monotonic() < deadline_at:
        time.sleep(0.01)
    assert _number(mf.version()) == 2


@pytest.mark.anyio
@pytest.mark.parametrize("mode", ["legacy", "auto"])
async def test_with_a_read_stuck_the_server_answers_everything_else(
    manifest_path: Any, gated: GatedReads, mode: str
) -> None:
    """In-process through the SDK's Client: the event loop stays free while a read is stuck."""
    path = manifest_path(EXAMPLE.read_bytes())
    deadline = 0.5
    uri = "robot-md://bob/identity"
    async with in_process(rmm.build_server(rmm.ManifestFile(path, read_deadline=deadline)), mode) as client:
        assert "bob" in str(await client.read_resource(uri))
        gated.gate.clear()
        failures: list[tuple[float, str]] = []

        async def read(start: float) -> None:
            with pytest.raises(MCPError) as e:
                await client.read_resource(uri)
            failures.append((time.monotonic() - start, str(e.value)))

        async with anyio.create_task_group() as tasks:
            start = time.monotonic()
            tasks.start_soon(read, start)
            await anyio.sleep(0.05)
            with anyio.fail_after(deadline / 2):  # answered while the read is stuck
                await client.list_tools()
                await client.list_prompts()
            assert not failures
        result = await client.call_tool("validate", {})  # the read is past its deadline: fails at once
        assert time.monotonic() - start < deadline + 0.2
        assert result.is_error and STALLED in str(result.content)
        assert len(failures) == 1 and deadline * 0.9 <= failures[0][0] <= deadline + 0.3
        assert STALLED in failures[0][1]
        gated.gate.set()


# --- a real FUSE file system (heavy) ---------------------------------------------------------

FS = Path(__file__).parent / "support" / "stalling_fs.py"
MAX_STALL = 5.0  # each stall of the FUSE file system ends by itself after this


@pytest.fixture
def stalling_mount(tmp_path: Path) -> Iterator[tuple[Path, Path]]:
    """ROBOT.md on a FUSE mount whose reads block while the flag file exists: (manifest, flag)."""
    need(sys.platform == "linux" and os.geteuid() == 0, "root on Linux, to mount a FUSE file system")
    need(
        os.path.exists("/dev/fuse") and shutil.which("fusermount") is not None, "FUSE (apt-get install fuse)"
    )
    need(importlib.util.find_spec("fuse") is not None, "fusepy (pip install fusepy; .ci/run does)")
    mount, backing, flag = tmp_path / "mnt", tmp_path / "backing.md", tmp_path / "stall"
    mount.mkdir()
    backing.write_bytes(EXAMPLE.read_bytes())
    argv = [sys.executable, str(FS), str(mount), str(backing), str(flag), str(MAX_STALL)]
    fs = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        until = time.monotonic() + 20
        while not os.path.ismount(mount):
            assert fs.poll() is None and time.monotonic() < until, fs.stderr.read() if fs.stderr else ""
            time.sleep(0.05)
        yield mount / "ROBOT.md", flag
    finally:
        flag.unlink(missing_ok=True)
        for unmount in (["fusermount", "-u", str(mount)], ["umount", "-l", str(mount)]):
            if os.path.ismount(mount):
                subprocess.run(unmount, capture_output=True, timeout=20)
        fs.terminate()
        fs.wait(timeout=20)


def _stdout_closed_within(server: RawServer, seconds: float) -> bool:
    """stdout reaches EOF within `seconds` (whatever lines come first)."""
    until = time.monotonic() + seconds
    while time.monotonic() < until:
        try:
            server.next_message(max(0.0, until - time.monotonic()))
        except AssertionError as e:
            return "closed stdout" in str(e)
    return False


# How a stdio session ends, and the exit status once reaped: end of input comes before the stuck
# request is answered (the deadline is shorter than the end-of-input grace).
ENDINGS = {
    "SIGTERM": (signal.SIGTERM, -signal.SIGTERM),
    "SIGINT": (signal.SIGINT, rmm.ExitCode.INTERRUPTED),
    "end of input": (None, rmm.ExitCode.OK),
}


@pytest.mark.heavy
@pytest.mark.parametrize("ending", ENDINGS)
def test_stdio_with_a_read_stalled_on_fuse(stalling_mount: tuple[Path, Path], ending: str) -> None:
    """With a read stuck, everything else is answered; the stuck request fails at the deadline, later
    reads at once; when the session ends stdout closes at once, not when the read returns."""
    path, flag = stalling_mount
    sig, exit_status = ENDINGS[ending]
    uri = "robot-md://bob/identity"
    with RawServer(path) as server:
        server.handshake()
        assert "bob" in server.read(uri)["result"]["contents"][0]["text"]
        flag.touch()
        start = time.monotonic()
        server.send({"jsonrpc": "2.0", "id": "stuck", "method": "resources/read", "params": {"uri": uri}})
        time.sleep(0.2)
        assert server.request("ping", timeout=1.0)["result"] == {}
        assert "tools" in server.request("tools/list", timeout=1.0)["result"]
        if sig is None:
            assert server.proc.stdin is not None
            server.proc.stdin.close()
        stuck = server.response("stuck", timeout=rmm.READ_DEADLINE_SECONDS + 1)
        assert time.monotonic() - start <= rmm.READ_DEADLINE_SECONDS + 0.5
        assert STALLED in stuck["error"]["message"] and "\n" not in stuck["error"]["message"]
        if sig is not None:
            for method, params in [("resources/read", {"uri": uri}), ("resources/list", None)]:
                at = time.monotonic()
                assert STALLED in server.request(method, params, timeout=0.5)["error"]["message"]
                assert time.monotonic() - at < 0.5
            answered = server.request("tools/call", {"name": "validate", "arguments": {}}, timeout=0.5)
            assert answered["result"]["isError"] and STALLED in json.dumps(answered)
            assert server.alive()  # the read is still stuck
            server.proc.send_signal(sig)
        assert _stdout_closed_within(server, 1.0), server.stderr
        code = server.proc.wait(timeout=MAX_STALL + 10)  # reaped once the stall ends
    assert code == exit_status
    assert "Traceback" not in server.stderr


def _refused_within(port: int, seconds: float) -> bool:
    until = time.monotonic() + seconds
    while time.monotonic() < until:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
        except ConnectionRefusedError:
            return True
        except OSError:
            pass
        time.sleep(0.02)
    return False


@pytest.mark.heavy
@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT], ids=["SIGTERM", "SIGINT"])
def test_http_with_a_read_stalled_on_fuse(stalling_mount: tuple[Path, Path], sig: int) -> None:
    path, flag = stalling_mount
    server = Served(path=path)
    try:
        status, headers, _ = server.initialize()
        assert status == 200
        session = {**MCP_HEADERS, "mcp-session-id": headers["mcp-session-id"]}
        session["mcp-protocol-version"] = "2025-11-25"
        initialized = {"jsonrpc": "2.0", "method": "notifications/initialized"}
        server.request("POST", "/mcp", json.dumps(initialized).encode(), session)

        def read() -> tuple[int, dict[str, str], bytes]:
            params = {"uri": "robot-md://bob/identity"}
            body = {"jsonrpc": "2.0", "id": 7, "method": "resources/read", "params": params}
            return server.request("POST", "/mcp", json.dumps(body).encode(), session)

        assert b"bob" in read()[2]
        flag.touch()
        stuck: list[Any] = []
        start = time.monotonic()
        reader = threading.Thread(target=lambda: stuck.append((read(), time.monotonic() - start)))
        reader.start()
        time.sleep(0.2)
        for _ in range(4):
            at = time.monotonic()
            assert server.request("GET", "/healthz")[0] == 200
            assert server.initialize()[0] == 200  # another client
            assert time.monotonic() - at < 0.5
        reader.join(timeout=rmm.READ_DEADLINE_SECONDS + 5)
        (status, _, body), took = stuck[0]
        assert STALLED.encode() in body and took <= rmm.READ_DEADLINE_SECONDS + 0.5
        at = time.monotonic()
        assert STALLED.encode() in read()[2] and time.monotonic() - at < 0.5  # at once, the read still stuck
        idle = socket.create_connection(("127.0.0.1", server.port), timeout=5)  # a kept-alive connection
        idle.sendall(f"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1:{server.port}\r\n\r\n".encode())
        answer = b""
        while b'"ok"' not in answer:  # the whole answer: head and body
            chunk = idle.recv(65536)
            assert chunk, answer
            answer += chunk
        assert answer.startswith(b"HTTP/1.1 200")
        server.proc.send_signal(sig)
        assert _refused_within(server.port, 1.0)
        idle.settimeout(1.0)
        assert idle.recv(65536) == b""  # closed by the server, not left open until the read returns
        idle.close()
        code = server.proc.wait(timeout=MAX_STALL + 10)  # reaped once the stall ends
    finally:
        flag.unlink(missing_ok=True)
        if server.proc.poll() is None:
            server.proc.kill()
            server.proc.wait(timeout=20)
    assert code == rmm.ExitCode.OK
    assert "Traceback" not in server.stderr
    assert f"stopped; the file system has not answered a read of {path}" in server.stderr


def _read_to_end(stream: Any, into: list[bytes]) -> threading.Thread:
    thread = threading.Thread(target=lambda: into.append(stream.read()), daemon=True)
    thread.start()
    return thread


@pytest.mark.heavy
@pytest.mark.parametrize("transport", [[], ["--http", "127.0.0.1:0"]], ids=["stdio", "http"])
def test_a_start_with_the_read_stalled_on_fuse(
    stalling_mount: tuple[Path, Path], transport: list[str]
) -> None:
    """The first read is stuck: one line on stderr at the deadline, stdout and stderr closed at
    once; exit 1 once reaped."""
    path, flag = stalling_mount
    flag.touch()
    start = time.monotonic()
    proc = bare(path, *transport)
    out: list[bytes] = []
    err: list[bytes] = []
    try:
        readers = [_read_to_end(proc.stdout, out), _read_to_end(proc.stderr, err)]
        for reader in readers:
            reader.join(timeout=rmm.READ_DEADLINE_SECONDS + 1.5 - (time.monotonic() - start))
        assert out == [b""] and len(err) == 1, "stdout and stderr still open after the deadline"
        assert proc.poll() is None  # the read is still stuck, and with it the process
        code = proc.wait(timeout=MAX_STALL + 10)
    finally:
        flag.unlink(missing_ok=True)
        if proc.poll() is None:
            proc.kill()
            proc.wait(timeout=20)
    lines = err[0].decode().splitlines()
    assert len(lines) == 1 and STALLED in lines[0] and str(path) in lines[0], err
    assert code == rmm.ExitCode.CANNOT_USE
