"""The real HTTP server in a subprocess, for tests: start it on 127.0.0.1 with a
free port (port 0: the start line says which), send raw requests, stop it."""

from __future__ import annotations

import http.client
import json
import os
import re
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

from conftest import EXAMPLE, ROOT

INIT = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-06-18",
        "capabilities": {},
        "clientInfo": {"name": "t", "version": "1"},
    },
}
MCP_HEADERS = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream"}


class Served:
    """`robot-md-mcp EXAMPLE --http …` in a subprocess; stderr collected."""

    def __init__(
        self,
        *args: str,
        env: dict[str, str] | None = None,
        path: Path = EXAMPLE,
        command: list[str] | None = None,
    ) -> None:
        """`command` replaces `python robot_md_mcp.py` (e.g. `python -c …` patching a limit)."""
        self.proc = subprocess.Popen(
            [*(command or [sys.executable, str(ROOT / "robot_md_mcp.py")]), str(path), *args],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            text=True,
            env={**os.environ, **(env or {})},
        )
        self.lines: list[str] = []
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()
        deadline = time.monotonic() + 60
        while not any(" at http://" in line for line in self.lines):
            assert self.proc.poll() is None, f"server exited {self.proc.returncode}: {self.stderr}"
            assert time.monotonic() < deadline, f"no start line: {self.stderr}"
            time.sleep(0.02)
        start = next(line for line in self.lines if " at http://" in line)
        self.port = int(re.search(r":(\d+)/mcp", start)[1])  # type: ignore[index]
        self.url = f"http://127.0.0.1:{self.port}/mcp"

    def _read(self) -> None:
        assert self.proc.stderr is not None
        for line in self.proc.stderr:
            self.lines.append(line)

    @property
    def stderr(self) -> str:
        return "".join(self.lines)

    def request(
        self, method: str, path: str, body: bytes | None = None, headers: dict[str, str] | None = None
    ) -> tuple[int, dict[str, str], bytes]:
        """One raw HTTP request to 127.0.0.1; the caller's headers (Host too) go as given."""
        conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=30)
        try:
            headers = dict(headers or {})
            headers.setdefault("Host", f"127.0.0.1:{self.port}")
            conn.putrequest(method, path, skip_host=True, skip_accept_encoding=True)
            for name, value in headers.items():
                conn.putheader(name, value)
            if body is not None and "Content-Length" not in headers:
                conn.putheader("Content-Length", str(len(body)))
            conn.endheaders(body)
            response = conn.getresponse()
            return response.status, {k.lower(): v for k, v in response.getheaders()}, response.read()
        finally:
            conn.close()

    def initialize(self, headers: dict[str, str] | None = None) -> tuple[int, dict[str, str], bytes]:
        return self.request("POST", "/mcp", json.dumps(INIT).encode(), {**MCP_HEADERS, **(headers or {})})

    def stop(self, sig: int = signal.SIGTERM) -> int:
        if self.proc.poll() is None:
            self.proc.send_signal(sig)
        try:
            code = self.proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            raise
        self._reader.join(timeout=5)
        return code


def run_cli(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, str(ROOT / "robot_md_mcp.py"), *args],
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=60,
        env={**os.environ, **(env or {})},
    )
