"""`install` and `uninstall` as tests drive them: in this process with a home laid out as each OS has it
(`Installer`), a stand-in `claude` CLI on PATH, and the one way a test runs the real command as a process
when the promise is about the process (a file-size limit, a stdout that takes nothing)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from serving import ROOT, server_argv

import robot_md_mcp as rmm

MODULE = str(ROOT / "robot_md_mcp.py")
# Where each client's file lands under a home laid out like each OS.
APP_DATA = {"macos": "Library/Application Support/", "windows": "AppData/Roaming/", "linux": ".config/"}
PLACES = {"claude-desktop": "Claude/claude_desktop_config.json", "vscode": "Code/User/mcp.json"}
CONFIG_FILES = {
    (os_name, client): (".cursor/mcp.json" if client == "cursor" else root + PLACES[client])
    for os_name, root in APP_DATA.items()
    for client in ("claude-desktop", "cursor", "vscode")
}
KEY = {"claude-desktop": "mcpServers", "cursor": "mcpServers", "vscode": "servers"}


def layout(os_name: str, home: Path) -> tuple[str, dict[str, str]]:
    """The sys.platform value and environment of a user whose home is `home`."""
    if os_name == "windows":
        return "win32", {"USERPROFILE": str(home), "APPDATA": str(home / "AppData" / "Roaming")}
    return ("darwin" if os_name == "macos" else "linux"), {"HOME": str(home)}


@dataclass
class Result:
    code: int
    out: str
    err: str


class Installer:
    """`install` (or another verb) in this process, with a faked platform, environment and home."""

    def __init__(self, home: Path, capsys: Any) -> None:
        self.home, self.capsys = home, capsys

    def __call__(self, *args: str, os_name: str = "linux", verb: str = "install", **env: str) -> Result:
        platform, environ = layout(os_name, self.home)
        code = rmm.main([verb, *args], rmm.Machine(platform, {**environ, **env}, self.home))
        out, err = self.capsys.readouterr()
        return Result(code, out, err)

    def file(self, client: str, os_name: str = "linux") -> Path:
        return self.home / CONFIG_FILES[os_name, client]

    def servers(self, client: str, os_name: str = "linux") -> dict[str, Any]:
        return json.loads(self.file(client, os_name).read_text(encoding="utf-8"))[KEY[client]]  # type: ignore[no-any-return]


def installer(tmp_path: Path, monkeypatch: Any, capsys: Any) -> Installer:
    """An Installer in an empty home, run as `python robot_md_mcp.py` would be."""
    monkeypatch.setattr(sys, "argv", [MODULE])
    home = tmp_path / "home"
    home.mkdir()
    return Installer(home, capsys)


def write_json(path: Path, data: object, indent: int | str = 2) -> bytes:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data, indent=indent) + "\n", encoding="utf-8")
    return path.read_bytes()


def siblings(path: Path) -> set[str]:
    return {p.name for p in path.parent.iterdir()}


# A stand-in for `claude mcp add|get|remove` (a heavy test runs the real one): its servers per scope in a
# JSON file, its exit codes, and `get`'s text as Claude Code words it. With a "project_dir" in the file,
# `get` sees the local and project scopes only from that folder, as Claude Code does.
FAKE_CLAUDE = """#!{python} -IS
import json, os, pathlib, sys
state = pathlib.Path({state!r})
servers = json.loads(state.read_text()) if state.exists() else {{}}
here = servers.get("project_dir", os.getcwd())
seen = ("local", "project", "user") if os.path.samefile(here, os.getcwd()) else ("user",)
verb, args = sys.argv[2], sys.argv[3:]
scope = args[args.index("--scope") + 1] if "--scope" in args else "local"
name = [a for a in args[: args.index("--") if "--" in args else None] if a not in ("--scope", scope)][0]
if {fail} and verb == "add":
    sys.exit({fail})
if verb == "add" and name not in servers.get(scope, {{}}):
    servers.setdefault(scope, {{}})[name] = args[args.index("--") + 1 :]
    print("Added stdio MCP server " + name)
elif verb == "remove" and name in servers.get(scope, {{}}):
    del servers[scope][name]
elif verb == "get" and any(name in servers.get(s, {{}}) for s in seen):
    s = next(s for s in seen if name in servers.get(s, {{}}))
    print(name + ":\\n  Scope: " + s.title() + " config (...)\\n  Status: ✔ Connected")
    if isinstance(servers[s][name], str):  # a URL: an HTTP server
        print("  Type: http\\n  URL: " + servers[s][name] + "\\n")
    else:
        command, *rest = servers[s][name]
        print("  Type: stdio\\n  Command: " + command + "\\n  Args: " + " ".join(rest))
        print("  Environment:\\n")
else:
    sys.exit("MCP server " + name + " already exists in " + scope if verb == "add" else "No MCP server")
state.write_text(json.dumps(servers))
"""


def fake_claude(tmp_path: Path, fail: int = 0, content: str | None = None) -> tuple[dict[str, str], Path]:
    """The environment that puts the stand-in (or an executable holding `content`) first on PATH, and the
    file holding its servers."""
    bin_dir, state = tmp_path / "bin", tmp_path / "claude-servers.json"
    bin_dir.mkdir(exist_ok=True)
    claude = bin_dir / "claude"
    text = FAKE_CLAUDE.format(python=sys.executable, state=str(state), fail=fail)
    claude.write_text(text if content is None else content, encoding="utf-8")
    claude.chmod(0o755)
    return {"HOME": str(tmp_path), "PATH": f"{bin_dir}{os.pathsep}{os.environ['PATH']}"}, state


def run_command(
    *args: str, home: Path, env: dict[str, str] | None = None, stdout: Any = None, **how: Any
) -> Any:
    """The real command line as a process, with HOME at `home` (no XDG_CONFIG_HOME or ROBOT_MD_PATH of
    ours) and `how` as subprocess.run takes it (a preexec_fn setting a limit); stdout to a file, else
    captured: bytes."""
    base = {k: v for k, v in os.environ.items() if k not in ("ROBOT_MD_PATH", "XDG_CONFIG_HOME")}
    out = {"capture_output": True} if stdout is None else {"stdout": stdout, "stderr": subprocess.PIPE}
    env = {**base, "HOME": str(home), **(env or {})}
    return subprocess.run(server_argv(*args), env=env, timeout=60, **out, **how)
