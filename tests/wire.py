"""A raw newline-delimited JSON-RPC client for a real stdio server process:
bytes in, lines out, every read bounded in time. It checks what the SDK's
own Client would smooth over: that stdout carries only JSON-RPC lines, that
stderr has no traceback, and how much memory the server peaked at."""

from __future__ import annotations

import itertools
import json
import os
import queue
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from conftest import ROOT

SERVER = [sys.executable, str(ROOT / "robot_md_mcp.py")]
HANDSHAKE_VERSION = "2025-11-25"
REQUEST_DEADLINE = 2.0  # seconds for any one request, however hostile the file
_EOF = object()


PROC = Path("/proc/self/status")  # VmHWM (peak RSS) is read from /proc


def line(message: Any) -> bytes:
    return json.dumps(message).encode() + b"\n"


def is_jsonrpc(message: Any) -> bool:
    """One JSON-RPC 2.0 message as a server may send it: a response (result
    xor error, with an id, null only for an error) or a request/notification;
    or a batch's answers, a non-empty array of responses."""
    if isinstance(message, list):
        return bool(message) and all(is_jsonrpc(m) and "method" not in m for m in message)
    if not isinstance(message, dict) or message.get("jsonrpc") != "2.0":
        return False
    if "method" in message:
        return isinstance(message["method"], str) and set(message) <= {"jsonrpc", "id", "method", "params"}
    if ("result" in message) == ("error" in message) or "id" not in message:
        return False
    if "error" in message:
        error = message["error"]
        return (
            isinstance(error, dict)
            and isinstance(error.get("code"), int)
            and isinstance(error.get("message"), str)
            and (message["id"] is None or isinstance(message["id"], (int, str)))
        )
    return isinstance(message["id"], (int, str)) and isinstance(message["result"], dict)


class RawServer:
    """`python robot_md_mcp.py PATH` over pipes. Threads drain stdout and
    stderr so a chatty server never blocks on a full pipe."""

    def __init__(
        self, path: Path | str, *args: str, command: list[str] | None = None, id_prefix: str = ""
    ) -> None:
        """`command` replaces `python robot_md_mcp.py` (e.g. `python -c …` patching the module);
        `id_prefix` makes our own request ids strings no other sender uses (a test that writes
        generated requests itself must never see their late answers taken for ours)."""
        self.proc = subprocess.Popen(
            [*(command or SERVER), str(path), *args],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            cwd=ROOT,
        )
        self.stdout_lines: list[bytes] = []
        self._stderr = bytearray()
        self._inbox: queue.Queue[Any] = queue.Queue()
        self._held: dict[Any, dict] = {}  # responses read while waiting for another id
        self.notifications: list[dict] = []
        self._ids: Iterator[Any] = itertools.count(1000)
        if id_prefix:
            self._ids = (f"{id_prefix}{n}" for n in itertools.count(1000))
        self._write_lock = threading.Lock()
        threading.Thread(target=self._drain_stdout, daemon=True).start()
        threading.Thread(target=self._drain_stderr, daemon=True).start()

    # --- plumbing ------------------------------------------------------------

    def _drain_stdout(self) -> None:
        assert self.proc.stdout is not None
        for raw in self.proc.stdout:
            self.stdout_lines.append(raw)
            self._inbox.put(raw)
        self._inbox.put(_EOF)

    def _drain_stderr(self) -> None:
        assert self.proc.stderr is not None
        while chunk := self.proc.stderr.read1(65536):
            self._stderr += chunk

    @property
    def stderr(self) -> str:
        return self._stderr.decode("utf-8", errors="replace")

    def write(self, data: bytes) -> None:
        """Raw bytes to the server's stdin (whole lines are the caller's business)."""
        assert self.proc.stdin is not None
        with self._write_lock:
            self.proc.stdin.write(data)
            self.proc.stdin.flush()

    def send(self, message: Any) -> None:
        self.write(line(message))

    def next_message(self, timeout: float) -> dict:
        """The next stdout line, parsed; it must be a JSON-RPC message."""
        try:
            raw = self._inbox.get(timeout=timeout)
        except queue.Empty:
            raise AssertionError(f"no output within {timeout}s; stderr: {self.stderr[-2000:]}") from None
        if raw is _EOF:
            raise AssertionError(f"the server closed stdout; stderr: {self.stderr[-2000:]}")
        message = json.loads(raw)
        assert is_jsonrpc(message), raw[:500]
        return message

    def response(self, request_id: Any, timeout: float = REQUEST_DEADLINE) -> dict:
        """The response to `request_id`; other responses are held for later,
        server notifications are kept in `notifications`."""
        deadline = time.monotonic() + timeout
        while request_id not in self._held:
            message = self.next_message(max(0.0, deadline - time.monotonic()))
            for one in message if isinstance(message, list) else [message]:  # a batch's answers
                if "method" in one:
                    self.notifications.append(one)
                else:
                    self._held[one["id"]] = one
        return self._held.pop(request_id)

    def silence(self, seconds: float) -> list[dict]:
        """Whatever responses arrive within `seconds` (normally none)."""
        deadline, got = time.monotonic() + seconds, []
        while (left := deadline - time.monotonic()) > 0:
            try:
                raw = self._inbox.get(timeout=left)
            except queue.Empty:
                break
            if raw is _EOF:
                break
            message = json.loads(raw)
            (self.notifications if "method" in message else got).append(message)
        return got + list(self._held.values())

    # --- MCP -----------------------------------------------------------------

    def request(self, method: str, params: dict | None = None, timeout: float = REQUEST_DEADLINE) -> dict:
        """One request, answered within `timeout` seconds (asserted)."""
        request_id = next(self._ids)
        message: dict[str, Any] = {"jsonrpc": "2.0", "id": request_id, "method": method}
        if params is not None:
            message["params"] = params
        started = time.monotonic()
        self.send(message)
        answer = self.response(request_id, timeout)
        self.last_elapsed = time.monotonic() - started
        return answer

    def handshake(self, timeout: float = 30, version: str = HANDSHAKE_VERSION) -> dict:
        """initialize (2025-11-25 unless told) + notifications/initialized. The
        first answer waits for the SDK's imports, hence the longer timeout."""
        answer = self.request(
            "initialize",
            {
                "protocolVersion": version,
                "capabilities": {},
                "clientInfo": {"name": "wire", "version": "0"},
            },
            timeout=timeout,
        )
        assert answer["result"]["protocolVersion"] == version, answer
        self.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
        return answer["result"]

    def read(self, uri: str, timeout: float = REQUEST_DEADLINE) -> dict:
        return self.request("resources/read", {"uri": uri}, timeout)

    def call(self, tool: str, timeout: float = REQUEST_DEADLINE) -> dict:
        return self.request("tools/call", {"name": tool, "arguments": {}}, timeout)

    # --- the process ---------------------------------------------------------

    def fence(self, timeout: float = REQUEST_DEADLINE) -> list[dict]:
        """A ping, and the responses that came before its answer: the server
        handles lines in order, so those are what the lines before it got."""
        assert self.request("ping", timeout=timeout)["result"] == {}
        before, self._held = list(self._held.values()), {}
        return before

    def _status_mib(self, key: str) -> float:
        status = Path(f"/proc/{self.proc.pid}/status").read_text()
        return next(int(row.split()[1]) for row in status.splitlines() if row.startswith(key)) / 1024

    def peak_rss_mib(self) -> float:
        """VmHWM of the server process: the most resident memory it had
        since it started or since reset_peak()."""
        return self._status_mib("VmHWM:")

    def rss_mib(self) -> float:
        return self._status_mib("VmRSS:")

    def reset_peak(self) -> None:
        """Start a new VmHWM measurement (Linux: "5" > clear_refs)."""
        Path(f"/proc/{self.proc.pid}/clear_refs").write_text("5")

    def alive(self) -> bool:
        return self.proc.poll() is None

    def close(self, timeout: float = 10) -> int:
        """Close stdin (the end of the session) and wait for the exit code."""
        assert self.proc.stdin is not None
        try:
            self.proc.stdin.close()
        except BrokenPipeError:
            pass
        try:
            return self.proc.wait(timeout=timeout)
        finally:
            self.kill()

    def kill(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait(timeout=10)

    def assert_clean(self) -> None:
        """Every stdout line so far is one well-formed JSON-RPC message, and
        stderr carries no traceback."""
        for raw in list(self.stdout_lines):
            assert raw.endswith(b"\n"), raw[:200]
            assert is_jsonrpc(json.loads(raw)), raw[:500]
        assert "Traceback" not in self.stderr, self.stderr[-3000:]

    def __enter__(self) -> RawServer:
        return self

    def __exit__(self, *exc: object) -> None:
        self.kill()


# Runs the server module as `python robot_md_mcp.py ARGS` would, and at exit
# writes its VmHWM to the file named in $WIRE_PEAK_FILE. (wait4's ru_maxrss
# cannot tell: Linux carries the parent's peak across fork and exec.)
_PEAK_WRAPPER = """
import atexit, os, runpy, sys
def peak():
    with open(os.environ["WIRE_PEAK_FILE"], "w") as out, open("/proc/self/status") as status:
        out.write(next(row for row in status if row.startswith("VmHWM:")))
atexit.register(peak)
sys.argv = sys.argv[1:]
runpy.run_path(sys.argv[0], run_name="__main__")
"""


def run_measured(*args: str | Path, timeout: float = 30) -> tuple[int, str, str, float, float]:
    """`python robot_md_mcp.py ARGS`, no stdin: exit code, stdout, stderr,
    seconds and peak RSS in MiB."""
    with tempfile.TemporaryDirectory() as scratch:
        peak_file = Path(scratch) / "peak"
        started = time.monotonic()
        done = subprocess.run(
            [sys.executable, "-c", _PEAK_WRAPPER, *SERVER[1:], *map(str, args)],
            stdin=subprocess.DEVNULL,
            capture_output=True,
            cwd=ROOT,
            env={**os.environ, "WIRE_PEAK_FILE": str(peak_file)},
            timeout=timeout,
        )
        elapsed = time.monotonic() - started
        peak = int(peak_file.read_text().split()[1]) / 1024 if peak_file.exists() else float("nan")
    out, err = (stream.decode("utf-8", errors="replace") for stream in (done.stdout, done.stderr))
    return done.returncode, out, err, elapsed, peak
