"""Claude Desktop reaching a robot served over HTTP (a Pi's): `install claude-desktop URL --token-file F`
writes an entry that runs npm's real mcp-remote, and a full MCP session through that entry, as written,
reaches our HTTP server with its token; the token is in no process's command line meanwhile. Heavy: npx
fetches mcp-remote from the npm registry (into .cache/npm)."""

from __future__ import annotations

import json
import os
import shutil
import sys
import time
from pathlib import Path

import pytest
from conftest import ROOT, need
from serving import RawServer, Served, full_session, private_token

import robot_md_mcp as rmm

pytestmark = pytest.mark.heavy


def command_lines() -> list[str]:
    """Every process's command line on this machine (Linux's /proc)."""
    found = []
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            found.append(
                Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode("utf-8", "replace")
            )
        except OSError:
            continue
    return found


@pytest.mark.skipif(sys.platform != "linux", reason="reads command lines from /proc")
def test_the_written_bridge_entry_reaches_the_server_with_its_token(tmp_path: Path, capsys) -> None:
    need(shutil.which("npx") is not None, "npx (npm) to run mcp-remote")
    token = private_token(token_file := tmp_path / "token")
    server = Served("--http", "127.0.0.1:0", "--token-file", str(token_file))
    try:
        home = tmp_path / "home"
        home.mkdir()
        code = rmm.main(
            ["install", "claude-desktop", server.url, "--token-file", str(token_file)],
            rmm.Machine("linux", {"HOME": str(home)}, home),
        )
        out, err = capsys.readouterr()
        assert code == 0, err
        config = home / ".config" / "Claude" / "claude_desktop_config.json"
        assert oct(config.stat().st_mode & 0o777) == "0o600"
        ((name, entry),) = json.loads(config.read_text(encoding="utf-8"))["mcpServers"].items()
        assert name in out and token not in out + err
        # As Claude Desktop starts it: the entry's command, its args, its env over the user's.
        env = {**entry["env"], "HOME": str(home), "npm_config_cache": str(ROOT / ".cache" / "npm")}
        with RawServer(command=[entry["command"], *entry["args"]], env=env) as bridge:
            deadline = time.monotonic() + 120  # npx may fetch mcp-remote first
            while not any("mcp-remote" in line and server.url in line for line in command_lines()):
                assert time.monotonic() < deadline, "mcp-remote never started"
                time.sleep(0.1)
            assert not any(token in line for line in command_lines())
            summary = full_session(bridge, "bob", 180)
        assert "bob" in summary, summary
    finally:
        assert server.stop() == 0
    assert "Traceback" not in server.stderr
