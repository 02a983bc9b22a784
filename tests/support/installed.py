"""`install` and `uninstall` as tests drive them: in this process with a home laid out as each OS has it
(`Installer`), a stand-in `claude` CLI on PATH, and the one way a test runs the real command as a process
when the promise is about the process (a stdout that takes nothing, a path that is not UTF-8)."""

from __future__ import annotations

import contextlib
import io
import json
import os
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from hypothesis import strategies as st
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
    """An Installer in an empty home, run as `python robot_md_mcp.py` would be; the stand-in `claude` (on
    PATH, found by shutil.which) runs in this process when the module runs it."""
    monkeypatch.setattr(sys, "argv", [MODULE])
    real = subprocess.run

    def run(argv: list[str], *args: Any, **kwargs: Any) -> Any:
        try:
            script = Path(argv[0]).read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError, ValueError):
            script = ""
        return (
            _in_process(script, argv, kwargs.get("cwd"))
            if STAND_IN in script
            else real(argv, *args, **kwargs)
        )

    monkeypatch.setattr(subprocess, "run", run)
    home = tmp_path / "home"
    home.mkdir()
    return Installer(home, capsys)


def _in_process(script: str, argv: list[str], cwd: str | None) -> subprocess.CompletedProcess[str]:
    """The stand-in run as its process would: argv, its folder, exit code and output."""
    out, err, here, saved, code = io.StringIO(), io.StringIO(), os.getcwd(), sys.argv, 0
    try:
        os.chdir(cwd or here)
        sys.argv = list(argv)
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            exec(compile(script, argv[0], "exec"), {"__name__": "__main__"})
    except SystemExit as e:
        code = e.code if isinstance(e.code, int) else 1
        err.write("" if e.code is None or isinstance(e.code, int) else f"{e.code}\n")
    finally:
        os.chdir(here)
        sys.argv = saved
    return subprocess.CompletedProcess(argv, code, out.getvalue(), err.getvalue())


def write_json(path: Path, data: object, indent: int | str = 2) -> bytes:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data, indent=indent) + "\n", encoding="utf-8")
    return path.read_bytes()


def siblings(path: Path) -> set[str]:
    return {p.name for p in path.parent.iterdir()}


# A stand-in for `claude mcp add|get|remove` (a heavy test runs the real one): its servers per scope in a
# JSON file, its exit codes, and `get`'s text as Claude Code words it. With a "project_dir" in the file,
# `get` sees the local and project scopes only from that folder, as Claude Code does.
STAND_IN = "# the stand-in for claude (tests/support/installed.py)"
FAKE_CLAUDE = """#!{python} -IS
# the stand-in for claude (tests/support/installed.py)
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


def run_command(*args: str, home: Path, env: dict[str, str] | None = None, stdout: Any = None) -> Any:
    """The real command line as a process, with HOME at `home` (no XDG_CONFIG_HOME or ROBOT_MD_PATH of
    ours); stdout to a file, else captured: bytes."""
    base = {k: v for k, v in os.environ.items() if k not in ("ROBOT_MD_PATH", "XDG_CONFIG_HOME")}
    out = {"capture_output": True} if stdout is None else {"stdout": stdout, "stderr": subprocess.PIPE}
    env = {**base, "HOME": str(home), **(env or {})}
    return subprocess.run(server_argv(*args), env=env, timeout=60, **out)


# --- the class of config entries: ours by every launch form, and other servers' -----------------
# One rule (rmm._program_run_by): the command itself, or the word right after a Python (`-m` between),
# uvx, `uv tool run` or `pipx run` (`--from`/`--spec SOURCE` between). Bridges: the marker only.

MENTION = st.sampled_from(["robot-md-mcp", "robot_md_mcp", "/opt/robot-md-mcp/x", "robot-md-mcp.pyz"])
WORD = st.text(st.characters(codec="utf-8"), max_size=12)
INVISIBLE = st.sampled_from("\u202e\x1b\u2028\x85\u200b\x00")  # control and format characters
TEXT = st.text(st.characters(codec="utf-8") | INVISIBLE)
JSON_VALUE = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False, allow_infinity=False) | TEXT,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(TEXT, inner, max_size=4),
    max_leaves=20,
)
OURS: dict[str, dict[str, Any]] = {
    "console script": {"command": "/home/me/.local/bin/robot-md-mcp", "args": ["/r/ROBOT.md"]},
    "windows launcher": {"command": "C:\\Users\\me\\Scripts\\robot-md-mcp.exe", "args": ["C:\\r"]},
    "pyz": {"command": "python3", "args": ["/home/me/robot-md-mcp.pyz", "/r/ROBOT.md"]},
    "slim pyz": {"command": "py", "args": ["C:\\robot-md-mcp-0.1.0-cp312-win_amd64.pyz", "C:\\r"]},
    "module file": {"command": "/usr/bin/python3.11", "args": ["/src/robot_md_mcp.py", "/r"]},
    "-m": {"type": "stdio", "command": "/venv/bin/python", "args": ["-m", "robot_md_mcp", "/r"]},
    "uvx": {"command": "/bin/uvx", "args": ["--from", "git+https://x/robot-md-mcp", "robot-md-mcp", "/r"]},
    "uv tool run": {
        "command": "uv",
        "args": ["tool", "run", "--from", "robot-md-mcp==0.1.0", "robot-md-mcp"],
    },
    "pipx run": {"command": "pipx", "args": ["run", "--spec", "git+https://x/r@v1", "robot-md-mcp", "/r"]},
    "this very copy": {"command": sys.executable, "args": [MODULE, "/r"]},
}
FOLDERS = st.lists(st.text("abc-_ .é", min_size=1, max_size=6) | st.just("robot-md-mcp"), max_size=3)
PYTHONS = st.sampled_from(
    ["python", "python3", "python3.12", "pythonw", "pypy3", "py", "python.exe", "PY.EXE"]
)
OUR_FILES = ["robot_md_mcp.py", "robot-md-mcp.pyz", "Robot-MD-MCP.pyz", "robot-md-mcp", "robot-md-mcp.exe"]
OUR_FILES += ["robot-md-mcp-0.1.0-cp311-manylinux_aarch64.pyz", "robot-md-mcp-0.2.0-py3-none-any.pyz"]
PACKAGES = st.sampled_from(["robot-md-mcp", "robot-md-mcp==0.1.0", "robot-md-mcp@latest", "robot-md-mcp[x]"])
SOURCES = ["git+https://github.com/robot-md/robot-md-mcp@v0.1.0", "https://x/robot-md-mcp-0.1.0.tar.gz"]
RUNNERS = [["uvx"], ["uv", "tool", "run"], ["pipx", "run"]]
# What launches someone else's program, as its first words; any words may follow (foreign_entries adds
# them, folders, and programs whose names only begin like ours).
OTHERS = [
    ["node", "/opt/robot-md-mcp/bridge.js"],
    ["docker", "run", "-i", "--rm", "ghcr.io/me/robot-md-mcp:latest"],
    ["npx", "-y", "mcp-remote@0.15.1", "http://127.0.0.1:8765/mcp"],  # a bridge without our marker
    ["npx", "robot-md-mcp"],  # npm's package of that name: not this program
    ["python3", "/opt/robot-md-mcp/bridge.py"],
    ["python3", "-c", "import robot_md_mcp"],
    ["python3", "-", "/src/robot_md_mcp.py"],
    ["python3", "-X", "utf8", "/src/robot_md_mcp.py"],
    ["python3", "-m", "other_server", "robot_md_mcp"],
    ["uvx", "--with", "robot-md-mcp", "other-tool"],
    ["uvx", "--from", "robot-md-mcp", "other-tool"],
    ["uvx", "other-tool", "robot-md-mcp"],
    ["uv", "tool", "run", "other-tool", "robot-md-mcp"],
    ["pipx", "run", "other-tool", "robot-md-mcp"],
    ["pipx", "install", "robot-md-mcp"],
    ["bash", "-c", "robot-md-mcp /r/ROBOT.md"],
    ["py", "-3.12", "C:\\robot-md-mcp.pyz"],  # ours by hand, but an option first: left as it is (fails safe)
]
ODD: list[dict[str, Any]] = [
    {"type": "http", "url": "https://robot-md-mcp.example/mcp"},
    {"args": ["robot-md-mcp"]},
]
ODD += [{"command": ["robot-md-mcp"]}, {"command": "robot-md-mcp", "args": "/r"}]


@st.composite
def our_entries(draw: st.DrawFn) -> dict[str, Any]:
    """An entry that launches robot-md-mcp, by every launch form, from any folder, with any arguments
    after it and any keys the user added (no bridge marker)."""
    sep = draw(st.sampled_from(["/", "\\"]))

    def where(name: str) -> str:
        return sep.join(["", *draw(FOLDERS), name]) if draw(st.booleans()) else name

    form = draw(st.sampled_from(["command", "python", "-m", "runner"]))
    if form == "command":
        argv = [where(draw(st.sampled_from(OUR_FILES)))]
    elif form == "python":
        argv = [where(draw(PYTHONS)), where(draw(st.sampled_from(OUR_FILES)))]
    elif form == "-m":
        argv = [where(draw(PYTHONS)), "-m", "robot_md_mcp"]
    else:
        runner = draw(st.sampled_from(RUNNERS))
        source = ["--spec" if runner[0] == "pipx" else "--from", draw(st.sampled_from(SOURCES))]
        argv = [where(runner[0]), *runner[1:], *source * draw(st.booleans()), draw(PACKAGES)]
    tail = draw(st.lists(WORD | MENTION, max_size=4))
    extra = draw(st.fixed_dictionaries({}, optional={"type": st.just("stdio"), "env": st.just({"A": "1"})}))
    return {"command": argv[0], "args": [*argv[1:], *tail], **extra}


# A program whose name only begins like ours (robot-md-mcp-evil, robot_md_mcp2.py, robot-md-mcp.evil.pyz):
# only our own names and our pyz's (robot-md-mcp-<version>-….pyz) count.
LOOKALIKE = st.builds(
    "/opt/{}{}{}".format,
    st.sampled_from(["robot-md-mcp", "robot_md_mcp", "ROBOT-MD-MCP"]),
    st.text("abcxyz.-_+", min_size=1, max_size=8).filter(lambda t: not t.startswith("-"))
    | st.text("abcxyz-", min_size=2, max_size=8).filter(lambda t: t.startswith("-") and not t[1].isdigit()),
    st.sampled_from(["", ".pyz", ".py", ".exe"]),
)


@st.composite
def foreign_entries(draw: st.DrawFn) -> dict[str, Any]:
    """Another server's entry: its own program (a name only like ours included), from any folder (one named
    robot-md-mcp included), with robot-md-mcp mentioned in any later argument and in its env; or an entry
    that launches nothing."""
    lookalike = LOOKALIKE.map(lambda program: ["python3", program]) | LOOKALIKE.map(lambda program: [program])
    launch = list(draw(st.sampled_from(OTHERS) | lookalike))
    folders = draw(FOLDERS)
    if folders and "/" not in launch[0]:
        launch[0] = "/".join(["", *folders, launch[0]])
    tail = draw(st.lists(WORD | MENTION, max_size=4))
    env = draw(st.dictionaries(WORD, WORD | MENTION, max_size=3))
    entry = {"command": launch[0], "args": [*launch[1:], *tail], "env": env}
    return draw(st.sampled_from([entry, *ODD]))


FOREIGN_ENTRY = foreign_entries() | st.dictionaries(st.text(max_size=8), JSON_VALUE, max_size=4)
