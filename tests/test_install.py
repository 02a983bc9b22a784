"""Section 11: the command line's `install`: the server entry written into each client's real config
file, in temp homes laid out as macOS, Windows and Linux."""

from __future__ import annotations

import json
import os
import re
import shlex
import subprocess
import sys
import tempfile
import time
import unicodedata
import zipfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
from conftest import EXAMPLE, ROOT, need, posix_only
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from serving import launched, run, server_argv
from usage import usage_message

import robot_md_mcp as rmm

MODULE = str(ROOT / "robot_md_mcp.py")
COMMAND = [sys.executable, MODULE, str(EXAMPLE)]  # what `python robot_md_mcp.py install … EXAMPLE` installs
MCP_SERVERS = {"command": sys.executable, "args": [MODULE, str(EXAMPLE)]}
VSCODE = {"type": "stdio", **MCP_SERVERS}
ADD = ["claude", "mcp", "add", "--scope", "user"]  # how install adds the server to Claude Code

# Where each client's file lands under a home laid out like each OS.
CONFIG_FILES = {
    ("macos", "claude-desktop"): "Library/Application Support/Claude/claude_desktop_config.json",
    ("windows", "claude-desktop"): "AppData/Roaming/Claude/claude_desktop_config.json",
    ("linux", "claude-desktop"): ".config/Claude/claude_desktop_config.json",
    ("macos", "cursor"): ".cursor/mcp.json",
    ("windows", "cursor"): ".cursor/mcp.json",
    ("linux", "cursor"): ".cursor/mcp.json",
    ("macos", "vscode"): "Library/Application Support/Code/User/mcp.json",
    ("windows", "vscode"): "AppData/Roaming/Code/User/mcp.json",
    ("linux", "vscode"): ".config/Code/User/mcp.json",
}
KEY = {"claude-desktop": "mcpServers", "cursor": "mcpServers", "vscode": "servers"}
ENTRY = {"claude-desktop": MCP_SERVERS, "cursor": MCP_SERVERS, "vscode": VSCODE}


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
    """`install` in-process, with a faked platform, environment and home."""

    def __init__(self, home: Path, capsys) -> None:
        self.home, self.capsys = home, capsys

    def __call__(self, *args: str, os_name: str = "linux", verb: str = "install", **env: str) -> Result:
        platform, environ = layout(os_name, self.home)
        code = rmm.main([verb, *args], rmm.Machine(platform, {**environ, **env}, self.home))
        out, err = self.capsys.readouterr()
        return Result(code, out, err)

    def file(self, client: str, os_name: str = "linux") -> Path:
        return self.home / CONFIG_FILES[os_name, client]


@pytest.fixture
def install(tmp_path: Path, monkeypatch, capsys) -> Installer:
    monkeypatch.setattr(sys, "argv", [MODULE])  # as if run as `python robot_md_mcp.py`
    home = tmp_path / "home"
    home.mkdir()
    return Installer(home, capsys)


def write_json(path: Path, data: object, indent: int | str = 2) -> bytes:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data, indent=indent) + "\n", encoding="utf-8")
    return path.read_bytes()


def siblings(path: Path) -> set[str]:
    return {p.name for p in path.parent.iterdir()}


MENTION = st.sampled_from(["robot-md-mcp", "robot_md_mcp", "/opt/robot-md-mcp/x", "robot-md-mcp.pyz"])
WORD = st.text(st.characters(codec="utf-8"), max_size=12)
JSON_VALUE = st.recursive(
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(st.characters(codec="utf-8")),
    lambda inner: (
        st.lists(inner, max_size=4)
        | st.dictionaries(st.text(st.characters(codec="utf-8")), inner, max_size=4)
    ),
    max_leaves=20,
)

# --- where the files are -------------------------------------------------------


@pytest.mark.parametrize("os_name, client", CONFIG_FILES)
def test_config_path_per_os(os_name: str, client: str, tmp_path: Path) -> None:
    platform, environ = layout(os_name, tmp_path)
    assert rmm.config_path(client, platform, environ, tmp_path) == tmp_path / CONFIG_FILES[os_name, client]


def test_config_path_details(tmp_path: Path) -> None:
    xdg = tmp_path / "xdg"
    assert rmm.config_path("claude-desktop", "linux", {"XDG_CONFIG_HOME": str(xdg)}, tmp_path) == (
        xdg / "Claude" / "claude_desktop_config.json"
    )
    assert rmm.config_path("vscode", "linux", {"XDG_CONFIG_HOME": str(xdg)}, tmp_path) == (
        xdg / "Code" / "User" / "mcp.json"
    )
    # A relative XDG_CONFIG_HOME is invalid by the spec: ignored.
    assert rmm.config_path("claude-desktop", "linux", {"XDG_CONFIG_HOME": "rel"}, tmp_path) == (
        tmp_path / ".config" / "Claude" / "claude_desktop_config.json"
    )
    # Windows without APPDATA: its default place.
    assert rmm.config_path("claude-desktop", "win32", {}, tmp_path) == (
        tmp_path / "AppData" / "Roaming" / "Claude" / "claude_desktop_config.json"
    )
    workspace = tmp_path / "proj"
    for platform in ("darwin", "win32", "linux"):
        assert (
            rmm.config_path("vscode", platform, {}, tmp_path, workspace) == workspace / ".vscode" / "mcp.json"
        )


# --- writing -------------------------------------------------------------------


@pytest.mark.parametrize("os_name, client", CONFIG_FILES)
def test_fresh_install(install: Installer, os_name: str, client: str) -> None:
    done = install(client, str(EXAMPLE), os_name=os_name)
    path = install.file(client, os_name)
    assert done.code == 0, done.err
    assert json.loads(path.read_text(encoding="utf-8")) == {KEY[client]: {"robot-md-bob": ENTRY[client]}}
    assert done.out.splitlines() == [done.out.strip()]
    assert done.out.startswith(f'robot-md-mcp: added "robot-md-bob" to {path} (new file); ')
    assert done.err == ""
    assert siblings(path) == {path.name}  # no backup of nothing, no temp file


def test_keeps_other_servers_and_keys_in_order(install: Installer) -> None:
    path = install.file("claude-desktop")
    other = {"command": "npx", "args": ["-y", "@x/y"], "env": {"TOKEN": "ü"}}
    original = {"globalShortcut": "Ctrl+Space", "mcpServers": {"other": other}, "zeta": [1, {"b": 2, "a": 1}]}
    before = write_json(path, original, indent=4)
    done = install("claude-desktop", str(EXAMPLE))
    assert done.code == 0
    after = path.read_text(encoding="utf-8")
    data = json.loads(after)
    assert list(data) == ["globalShortcut", "mcpServers", "zeta"]
    assert data["zeta"] == original["zeta"] and list(data["zeta"][1]) == ["b", "a"]
    assert list(data["mcpServers"]) == ["other", "robot-md-bob"]
    assert data["mcpServers"]["other"] == other
    assert data["mcpServers"]["robot-md-bob"] == MCP_SERVERS
    assert after.startswith('{\n    "globalShortcut"')  # the file's own indentation
    assert (path.with_name(path.name + ".bak")).read_bytes() == before
    assert f"(backup: {path}.bak)" in done.out


@given(st.text(st.characters(categories=["Cc", "Cf", "Zl", "Zp"], exclude_characters="\n\t"), min_size=1))
@settings(max_examples=10, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
def test_invisible_characters_in_other_entries_stay_escaped(install: Installer, hidden: str) -> None:
    """A config read with `\u202e` (or any control or format character) escaped is written back escaped:
    the same value, and nothing the user later reads in an editor is hidden or reordered by us."""
    path = install.file("cursor")
    other = {"command": "npx", "args": [f"a{hidden}b"], "env": {f"K{hidden}": hidden}}
    path.unlink(missing_ok=True)
    write_json(path, {"mcpServers": {"other": other}})  # json.dumps escapes them (ensure_ascii)
    assert install("cursor", str(EXAMPLE)).code == 0
    after = path.read_text(encoding="utf-8")
    assert json.loads(after)["mcpServers"]["other"] == other
    assert not any(ch in after.replace("\n", "").replace("\t", "") for ch in hidden)


def test_second_identical_install_changes_nothing(install: Installer) -> None:
    path = install.file("cursor")
    original = write_json(path, {"mcpServers": {"other": {"command": "x"}}})
    assert install("cursor", str(EXAMPLE)).code == 0
    installed, backup = path.read_bytes(), path.with_name("mcp.json.bak")
    assert backup.read_bytes() == original
    mtimes = path.stat().st_mtime_ns, backup.stat().st_mtime_ns
    done = install("cursor", str(EXAMPLE))
    assert done.code == 0
    assert (
        done.out == f'robot-md-mcp: "robot-md-bob" is already in {path} with this command; nothing changed\n'
    )
    assert path.read_bytes() == installed and backup.read_bytes() == original  # no new backup
    assert (path.stat().st_mtime_ns, backup.stat().st_mtime_ns) == mtimes
    assert siblings(path) == {"mcp.json", "mcp.json.bak"}


def test_changed_entry_is_updated_with_a_backup(install: Installer) -> None:
    path = install.file("vscode", "macos")
    old = {"type": "stdio", "command": "/old/python", "args": ["/old/robot-md-mcp.pyz", "/old/ROBOT.md"]}
    before = write_json(path, {"servers": {"a": {"type": "http", "url": "http://x"}, "robot-md-bob": old}})
    done = install("vscode", str(EXAMPLE), os_name="macos")
    assert done.code == 0
    assert done.out.startswith(f'robot-md-mcp: updated "robot-md-bob" in {path} (backup: {path}.bak); ')
    data = json.loads(path.read_text(encoding="utf-8"))
    assert list(data["servers"]) == ["a", "robot-md-bob"]  # replaced in place
    assert data["servers"]["robot-md-bob"] == VSCODE
    assert path.with_name("mcp.json.bak").read_bytes() == before


def test_what_the_user_added_to_our_entry_survives_an_update(install: Installer) -> None:
    """env, disabled, a timeout: the user's own settings on our entry stay, in place; only the command
    and its arguments are ours to change."""
    path = install.file("vscode")
    old = {
        "type": "stdio",
        "command": "/old/bin/robot-md-mcp",
        "env": {"ROBOT_LOG": "1"},
        "args": ["/r"],
        "dev": {},
    }
    write_json(path, {"servers": {"robot-md-bob": old}})
    done = install("vscode", str(EXAMPLE))
    assert done.code == 0 and "updated" in done.out, done
    entry = json.loads(path.read_text())["servers"]["robot-md-bob"]
    assert entry == {**old, **VSCODE} and list(entry) == list(old)
    assert install("vscode", str(EXAMPLE)).out.endswith("nothing changed\n")


def test_backup_is_the_file_just_before_the_latest_change(install: Installer) -> None:
    path = install.file("claude-desktop", "windows")
    write_json(path, {"mcpServers": {}})
    assert install("claude-desktop", str(EXAMPLE), os_name="windows").code == 0
    first = path.read_bytes()
    assert install("claude-desktop", str(EXAMPLE), "--name", "second", os_name="windows").code == 0
    assert path.with_name(path.name + ".bak").read_bytes() == first
    assert list(json.loads(path.read_text(encoding="utf-8"))["mcpServers"]) == ["robot-md-bob", "second"]


@posix_only
def test_file_mode_kept_and_symlinks_written_through(install: Installer, tmp_path: Path) -> None:
    real = tmp_path / "dotfiles" / "claude.json"
    write_json(real, {})
    real.chmod(0o640)
    path = install.file("claude-desktop")
    path.parent.mkdir(parents=True)
    path.symlink_to(real)
    done = install("claude-desktop", str(EXAMPLE))
    assert done.code == 0 and str(real) in done.out
    assert path.is_symlink()
    assert json.loads(real.read_text())["mcpServers"]["robot-md-bob"] == MCP_SERVERS
    assert real.stat().st_mode & 0o777 == 0o640
    backup = real.with_name("claude.json.bak")  # beside the real file, and no more readable than it
    assert json.loads(backup.read_text()) == {} and backup.stat().st_mode & 0o777 == 0o640


@pytest.mark.parametrize("bom", [b"", b"\xef\xbb\xbf"], ids=["no-bom", "bom"])
@pytest.mark.parametrize("newline", [b"\n", b"\r\n"], ids=["lf", "crlf"])
def test_bom_and_crlf_files_are_read_and_written_as_plain_utf8(
    install: Installer, bom: bytes, newline: bytes
) -> None:
    """A Windows editor's BOM and CRLF are read; the rewrite is UTF-8 with LF (docs/clients.md)."""
    path = install.file("cursor")
    path.parent.mkdir(parents=True)
    original = (
        bom + json.dumps({"a": "x\ny", "mcpServers": {}}, indent=2).encode().replace(b"\n", newline) + newline
    )
    path.write_bytes(original)
    assert install("cursor", str(EXAMPLE)).code == 0
    written = path.read_bytes()
    assert written.startswith(b"{\n") and b"\r" not in written
    assert json.loads(written) == {"a": "x\ny", "mcpServers": {"robot-md-bob": MCP_SERVERS}}
    assert path.with_name("mcp.json.bak").read_bytes() == original
    assert install("cursor", str(EXAMPLE), verb="uninstall").code == 0
    assert json.loads(path.read_bytes()) == {"a": "x\ny", "mcpServers": {}}


def test_empty_files_are_accepted(install: Installer) -> None:
    path = install.file("cursor")
    path.parent.mkdir(parents=True)
    for empty in (b"", b"\n", b"\xef\xbb\xbf"):
        path.write_bytes(empty)
        assert install("cursor", str(EXAMPLE)).code == 0
        assert json.loads(path.read_text(encoding="utf-8-sig")) == {
            "mcpServers": {"robot-md-bob": MCP_SERVERS}
        }


@pytest.mark.parametrize("fail_at", ["fsync", "replace"])
def test_a_failed_write_leaves_the_original(install: Installer, monkeypatch, fail_at: str) -> None:
    path = install.file("claude-desktop")
    original = write_json(path, {"mcpServers": {"other": {"command": "x"}}})

    def boom(*args, **kwargs):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(os, fail_at, boom)
    done = install("claude-desktop", str(EXAMPLE))
    monkeypatch.undo()
    assert done.code == 1 and done.out == ""
    assert done.err == f"robot-md-mcp: nothing installed: cannot write {path}: no space left on device\n"
    assert path.read_bytes() == original
    assert siblings(path) <= {path.name, path.name + ".bak"}  # no temp file left
    backup = path.with_name(path.name + ".bak")
    assert not backup.exists() or backup.read_bytes() == original


@pytest.mark.parametrize("locked", ["config", "backup"])
def test_a_locked_config_or_backup_loses_neither(install: Installer, monkeypatch, locked: str) -> None:
    """A file that cannot be replaced (macOS Finder's Locked, `chattr +i`: EPERM on rename): a locked
    config is refused with its backup as it was; a locked backup still lets the config change, said so."""
    path = install.file("cursor")
    original = write_json(path, {"mcpServers": {}})
    backup = path.with_name("mcp.json.bak")
    backup.write_bytes(b"an older version")
    real_replace = os.replace

    def replace(src, dst, *args, **kwargs):
        if Path(dst).name == ("mcp.json" if locked == "config" else "mcp.json.bak"):
            raise PermissionError(1, "Operation not permitted")
        return real_replace(src, dst, *args, **kwargs)

    monkeypatch.setattr(os, "replace", replace)
    done = install("cursor", str(EXAMPLE))
    monkeypatch.undo()
    assert siblings(path) == {"mcp.json", "mcp.json.bak"}
    assert backup.read_bytes() == b"an older version"
    if locked == "config":
        assert (
            done.code == 1
            and done.err == f"robot-md-mcp: nothing installed: cannot write {path}: operation not permitted\n"
        )
        assert path.read_bytes() == original
    else:
        assert done.code == 0 and "robot-md-bob" in json.loads(path.read_text())["mcpServers"]
        assert f"(no backup: cannot replace {backup}: operation not permitted)" in done.out


@posix_only
@pytest.mark.parametrize("verb", ["install", "uninstall"])
def test_a_full_disk_leaves_everything_as_it_was(tmp_path: Path, verb: str) -> None:
    """A real write that fails (RLIMIT_FSIZE in the child: EFBIG, as ENOSPC would): one line, exit 1,
    the config and its backup (bytes and mode) as they were, no temp file left."""
    import resource

    home = tmp_path / "home"
    path = home / ".cursor" / "mcp.json"
    servers = {"robot-md-bob": MCP_SERVERS} if verb == "uninstall" else {}
    original = write_json(path, {"mcpServers": servers, "pad": "x" * 6000})
    backup = path.with_name("mcp.json.bak")
    backup.write_bytes(b"an older version")
    backup.chmod(0o600)
    args = [verb, "cursor", str(EXAMPLE)]
    done = subprocess.run(
        server_argv(*args),
        env={**os.environ, "HOME": str(home), "PYTHONDONTWRITEBYTECODE": "1"},
        preexec_fn=lambda: resource.setrlimit(resource.RLIMIT_FSIZE, (4096, 4096)),
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert (done.returncode, done.stdout) == (1, ""), done
    done_word = "installed" if verb == "install" else "removed"
    assert done.stderr == f"robot-md-mcp: nothing {done_word}: cannot write {path}: file too large\n"
    assert path.read_bytes() == original and siblings(path) == {"mcp.json", "mcp.json.bak"}
    assert backup.read_bytes() == b"an older version" and backup.stat().st_mode & 0o777 == 0o600


# --- refusing --------------------------------------------------------------------

REFUSED = {
    "not JSON": (b'{"mcpServers": {', "is not strict JSON (Expecting property name enclosed"),
    "not UTF-8": (b'{"a": "caf\xe9"}', "is not UTF-8 text"),
    "top level a list": (b"[]", "does not hold a JSON object at the top level"),
    "top level a string": (b'"x"', "does not hold a JSON object at the top level"),
    "servers a list": (b'{"mcpServers": []}', 'has a "mcpServers" that is not a JSON object'),
    "servers null": (b'{"mcpServers": null}', 'has a "mcpServers" that is not a JSON object'),
    "line comment": (b'{\n  // mine\n  "mcpServers": {}\n}\n', "is not strict JSON ("),
    "block comment": (
        b'{"a": "http://x" /* c */, "mcpServers": {}}',
        "is not strict JSON (",
    ),
    "trailing comma": (
        b'{"mcpServers": {"x": {"command": "y"},},}',
        "is not strict JSON (",
    ),
    "a number too large for JSON": (
        b'{"mcpServers": {}, "zoom": 1e400}',
        "holds NaN, Infinity or text that is not Unicode; fix it by hand",
    ),
    "NaN": (b'{"mcpServers": {}, "zoom": NaN}', "holds NaN, Infinity or text that is not Unicode"),
    "repeated mcpServers": (
        b'{"mcpServers": {"a": {"command": "x"}}, "mcpServers": {"b": {"command": "y"}}}',
        "has the key 'mcpServers' twice in one object",
    ),
    "a lone surrogate": (
        b'{"mcpServers": {}, "name": "\\ud800"}',
        "holds NaN, Infinity or text that is not Unicode; fix it by hand",
    ),
    "an integer of 5000 digits": (  # beyond what Python converts (sys.get_int_max_str_digits)
        b'{"mcpServers": {}, "id": ' + b"7" * 5000 + b"}",
        "holds a number with more digits than Python reads; fix it by hand",
    ),
}


@pytest.mark.parametrize("case", REFUSED)
def test_refuses_files_it_cannot_keep(install: Installer, case: str) -> None:
    content, reason = REFUSED[case]
    path = install.file("claude-desktop")
    path.parent.mkdir(parents=True)
    path.write_bytes(content)
    done = install("claude-desktop", str(EXAMPLE))
    assert done.code == 1
    assert done.err.count("\n") == 1
    assert done.err.startswith(f"robot-md-mcp: nothing installed: {path} {reason}")
    assert path.read_bytes() == content
    assert siblings(path) == {path.name}
    if "strict JSON" in reason:  # the entry to paste by hand, as a JSON object member
        assert json.loads("{" + done.out + "}") == {"robot-md-bob": MCP_SERVERS}
    else:
        assert done.out == ""


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    content=st.sampled_from([c for c, _ in REFUSED.values()])
    | st.binary(max_size=40)
    | st.text(st.sampled_from('{}[]":,-01eE.nN\\ufeff'), max_size=30).map(str.encode),
    verb=st.sampled_from(["install", "uninstall"]),
)
def test_whatever_the_file_holds_a_refusal_leaves_it_and_its_backup(
    install: Installer, content: bytes, verb: str
) -> None:
    """Any bytes: installed (or removed), or refused in one line with the config, the backup (bytes
    and mode) and the folder exactly as they were; never a traceback."""
    path = install.file("cursor")
    path.parent.mkdir(parents=True, exist_ok=True)
    backup = path.with_name("mcp.json.bak")
    backup.write_bytes(b"the user's own backup")
    backup.chmod(0o600)
    path.write_bytes(content)
    done = install("cursor", str(EXAMPLE), verb=verb)
    if done.code != 0:
        assert done.code == 1 and done.err.count("\n") == 1, done.err
        assert path.read_bytes() == content and siblings(path) == {"mcp.json", "mcp.json.bak"}
        assert backup.read_bytes() == b"the user's own backup" and backup.stat().st_mode & 0o777 == 0o600


@posix_only
@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(name=st.text(st.sampled_from("a\n\r\t\x1b\u2028\u202e\x85é"), min_size=1, max_size=6))
def test_a_folder_name_with_line_breaks_still_gets_one_line(
    install: Installer, tmp_path: Path, name: str
) -> None:
    """Paths are shown with control and format characters as <U+XXXX>: every message is one line."""
    workspace = Path(tempfile.mkdtemp(dir=tmp_path, prefix=name))
    done = install("vscode", str(EXAMPLE), "--workspace", str(workspace))
    assert done.code == 0 and done.out.count("\n") == 1 and done.err == "", done
    assert install("vscode", str(EXAMPLE), "--workspace", str(workspace)).out.count("\n") == 1
    (workspace / ".vscode" / "mcp.json").write_text('{"servers": {}, // mine\n}', encoding="utf-8")
    for verb in ("install", "uninstall"):
        args = [str(EXAMPLE), "--workspace", str(workspace)]
        done = install("vscode", *args, verb=verb)
        assert done.code == 1 and done.err.count("\n") == 1, done


@posix_only
def test_a_fifo_as_config_is_refused_at_once(install: Installer) -> None:
    path = install.file("claude-desktop")
    path.parent.mkdir(parents=True)
    os.mkfifo(path)
    started = time.monotonic()
    done = install("claude-desktop", str(EXAMPLE))
    assert done.code == 1 and time.monotonic() - started < 5
    assert done.err == f"robot-md-mcp: nothing installed: {path} is not a regular file\n"


@posix_only
@pytest.mark.parametrize("planted", ["mcp.json.bak"])
def test_a_planted_backup_symlink_is_not_followed(install: Installer, tmp_path: Path, planted: str) -> None:
    """A cloned repo's .vscode/mcp.json.bak -> ~/.bashrc must not make install overwrite .bashrc."""
    workspace = tmp_path / "repo"
    victim = tmp_path / "bashrc"
    victim.write_text("echo safe\n", encoding="utf-8")
    config = workspace / ".vscode" / "mcp.json"
    write_json(config, {"servers": {}})
    (config.parent / planted).symlink_to(victim)
    done = install("vscode", str(EXAMPLE), "--workspace", str(workspace))
    assert done.code == 0, done.err
    assert victim.read_text(encoding="utf-8") == "echo safe\n"
    backup = config.parent / planted
    assert not backup.is_symlink() and json.loads(backup.read_text(encoding="utf-8")) == {"servers": {}}


@posix_only
@pytest.mark.parametrize(
    "kind", ["link to a file", "link to a folder", "dangling link", "link loop", "fifo", "socket"]
)
def test_whatever_stands_at_the_backup_is_replaced_never_followed(
    install: Installer, tmp_path: Path, kind: str
) -> None:
    import socket

    path = install.file("cursor")
    original = write_json(path, {"mcpServers": {}})
    backup, victim, folder = path.with_name("mcp.json.bak"), tmp_path / "victim", tmp_path / "folder"
    victim.write_text("safe", encoding="utf-8")
    folder.mkdir()
    made = {
        "link to a file": lambda: backup.symlink_to(victim),
        "link to a folder": lambda: backup.symlink_to(folder),
        "dangling link": lambda: backup.symlink_to(tmp_path / "nothing"),
        "link loop": lambda: backup.symlink_to(backup.name),
        "fifo": lambda: os.mkfifo(backup),
        "socket": lambda: socket.socket(socket.AF_UNIX).bind(str(backup)),
    }
    made[kind]()
    done = install("cursor", str(EXAMPLE))
    assert done.code == 0, done.err
    assert victim.read_text(encoding="utf-8") == "safe" and list(folder.iterdir()) == []
    assert not backup.is_symlink() and backup.read_bytes() == original


@posix_only
def test_config_links_dangling_or_in_a_loop(install: Installer, tmp_path: Path) -> None:
    """A dangling link (dotfiles not yet made) is written through, its folders made; a loop is refused."""
    path = install.file("cursor")
    path.parent.mkdir(parents=True)
    target = tmp_path / "dotfiles" / "cursor" / "mcp.json"
    path.symlink_to(target)
    assert install("cursor", str(EXAMPLE)).code == 0 and path.is_symlink()
    assert json.loads(target.read_text())["mcpServers"]["robot-md-bob"] == MCP_SERVERS
    path.unlink()
    path.symlink_to(path.name)
    for verb in ("install", "uninstall"):
        done = install("cursor", str(EXAMPLE), verb=verb)
        assert (
            done.code == 1 and done.err.count("\n") == 1 and "too many levels of symbolic links" in done.err
        )
    assert siblings(path) == {"mcp.json"} and path.is_symlink()


@posix_only
def test_a_workspace_whose_vscode_folder_links_elsewhere_is_refused(
    install: Installer, tmp_path: Path
) -> None:
    workspace, elsewhere = tmp_path / "repo", tmp_path / "elsewhere"
    workspace.mkdir()
    elsewhere.mkdir()
    (workspace / ".vscode").symlink_to(elsewhere)
    done = install("vscode", str(EXAMPLE), "--workspace", str(workspace))
    assert done.code == 1 and "is outside the workspace" in done.err and done.err.count("\n") == 1
    assert list(elsewhere.iterdir()) == []


def test_vscode_jsonc_refusal_prints_its_shape(install: Installer) -> None:
    path = install.file("vscode")
    path.parent.mkdir(parents=True)
    path.write_text('{\n  "servers": {\n    // "old": {}\n  }\n}\n', encoding="utf-8")
    done = install("vscode", str(EXAMPLE))
    assert done.code == 1 and 'edit its "servers" object by hand' in done.err
    assert json.loads("{" + done.out + "}") == {"robot-md-bob": VSCODE}


@pytest.mark.parametrize(
    "content, expected",
    [("---\nmetadata: {}\n---\n", "metadata.robot_name is missing"), (None, "file not found")],
    ids=["no robot_name", "missing"],
)
def test_a_manifest_that_cannot_serve_is_not_installed(
    install: Installer, tmp_path: Path, content: str | None, expected: str
) -> None:
    manifest = tmp_path / "ROBOT.md"
    if content is not None:
        manifest.write_text(content, encoding="utf-8")
    done = install("claude-desktop", str(manifest))
    assert done.code == 1 and done.out == ""
    assert done.err.startswith(f"robot-md-mcp: {expected}") and done.err.count("\n") == 1
    assert done.err.endswith(f"({manifest}); nothing installed\n")
    assert list(install.home.iterdir()) == []


def test_manifest_path_resolves_as_serving_does(install: Installer, tmp_path: Path, monkeypatch) -> None:
    robot = tmp_path / "robot"
    (robot / "sub").mkdir(parents=True)
    (robot / "ROBOT.md").write_bytes(EXAMPLE.read_bytes())
    wanted = {"command": sys.executable, "args": [MODULE, str(robot / "ROBOT.md")]}
    for args, env, cwd in (
        (["robot"], {}, tmp_path),  # relative folder → folder/ROBOT.md, made absolute
        ([], {"ROBOT_MD_PATH": str(robot)}, tmp_path),
        ([], {}, robot / "sub"),  # walk up
    ):
        monkeypatch.chdir(cwd)
        assert install("cursor", *args, "--name", "r", **env).code == 0
        data = json.loads(install.file("cursor").read_text(encoding="utf-8"))
        assert data["mcpServers"]["r"] == wanted
    monkeypatch.chdir(tmp_path)
    done = install("cursor")
    assert done.code == 2 and "no ROBOT.md given and none found" in done.err


# --- VS Code: workspace or user --------------------------------------------------


def test_vscode_workspace_vs_user(install: Installer, tmp_path: Path) -> None:
    workspace = tmp_path / "proj"
    workspace.mkdir()
    done = install("vscode", str(EXAMPLE), "--workspace", str(workspace))
    assert done.code == 0
    assert json.loads((workspace / ".vscode" / "mcp.json").read_text()) == {
        "servers": {"robot-md-bob": VSCODE}
    }
    assert not install.file("vscode").exists()
    done = install("vscode", str(EXAMPLE))
    assert done.code == 0
    assert json.loads(install.file("vscode").read_text()) == {"servers": {"robot-md-bob": VSCODE}}


@pytest.mark.parametrize("where", ["ROBOT.md", "robots/arm/ROBOT.md", "my robot/ROBOT.md"])
@pytest.mark.parametrize("program_inside", [False, True], ids=["program-elsewhere", "program-inside"])
def test_a_workspace_entry_names_what_is_inside_it_by_workspace_folder(
    install: Installer, tmp_path: Path, monkeypatch, where: str, program_inside: bool
) -> None:
    """.vscode/mcp.json is committed and cloned: what lies in the workspace is ${workspaceFolder}/…, and
    the entry, as VS Code expands it here, is the command install would write for the user profile."""
    workspace = tmp_path / "proj"
    manifest = workspace / where
    manifest.parent.mkdir(parents=True)
    manifest.write_bytes(EXAMPLE.read_bytes())
    module = workspace / "tools" / "robot_md_mcp.py" if program_inside else Path(MODULE)
    if program_inside:
        module.parent.mkdir()
        module.write_bytes(Path(MODULE).read_bytes())
        monkeypatch.setattr(sys, "argv", [str(module)])
    done = install("vscode", str(manifest), "--workspace", str(workspace))
    assert done.code == 0, done
    entry = json.loads((workspace / ".vscode" / "mcp.json").read_text())["servers"]["robot-md-bob"]
    written = [entry["command"], *entry["args"]]
    assert str(workspace) not in json.dumps(entry)
    assert written[-1] == "${workspaceFolder}/" + where
    assert (written[1] == "${workspaceFolder}/tools/robot_md_mcp.py") is program_inside
    expanded = [a.replace("${workspaceFolder}", str(workspace)) for a in written]
    assert [os.path.normpath(a) for a in expanded] == [sys.executable, str(module), str(manifest)]


def test_a_renamed_zipapp_in_the_workspace_installs_again_without_a_change(
    install: Installer, tmp_path: Path, monkeypatch
) -> None:
    """A pyz renamed `rmm` inside the workspace is written as ${workspaceFolder}/rmm: run again, the
    entry is the one it would write, so nothing changes (its name alone does not say it is ours)."""
    workspace = tmp_path / "proj"
    workspace.mkdir()
    zipfile.ZipFile(workspace / "rmm", "w").close()
    monkeypatch.setattr(sys, "argv", [str(workspace / "rmm")])
    for said in ("added", "is already in"):
        done = install("vscode", str(EXAMPLE), "--workspace", str(workspace))
        assert done.code == 0 and said in done.out, done


def test_a_manifest_that_does_not_validate_installs_with_a_note(install: Installer, tmp_path: Path) -> None:
    manifest = tmp_path / "ROBOT.md"
    manifest.write_text("---\nmetadata:\n  robot_name: rover\n---\n# rover\n", encoding="utf-8")
    done = install("cursor", str(manifest))
    assert done.code == 0 and done.out.startswith('robot-md-mcp: added "robot-md-rover"'), done
    invalid, no_safety = done.err.splitlines()
    assert invalid.startswith(f"robot-md-mcp: note: {manifest} does not validate (")
    assert invalid.endswith(f"see why: {Path(sys.executable).name} {MODULE} validate {manifest}")
    assert no_safety == (
        f"robot-md-mcp: note: {manifest} declares no safety block; agents are told to treat every motion "
        "as needing the operator's approval"
    )
    assert json.loads(install.file("cursor").read_text())["mcpServers"]["robot-md-rover"]["args"][-1] == str(
        manifest
    )
    assert install("cursor", str(EXAMPLE)).err == ""  # a manifest that validates: no note


@pytest.mark.parametrize(
    "args, message",
    [
        ([], "install needs a client; choose one of claude-desktop, cursor, vscode, claude-code"),
        (["zed"], "unknown client 'zed'"),
        (
            ["cursor", "--fleet", ".", "a"],
            "--fleet DIR serves every manifest in DIR; give it or PATHs, not both",
        ),
        (["cursor", "a", "--token-file", "t"], "--token-file is for a URL"),
        (["cursor", "https://pi.local/mcp"], "a URL is for claude-desktop"),
        (["claude-desktop", "https://pi.local/mcp", "b"], "install claude-desktop takes one URL"),
        (["claude-desktop", "https://u:p@pi.local/mcp"], "is not a server's URL"),
        (["claude-desktop", "http://pi.local:x/mcp"], "is not a server's URL"),
        (["cursor", "--nope"], "unknown option '--nope'"),
        (["cursor", "--name"], "--name"),  # argparse's words: it names the option
        (["cursor", "--name="], "--name needs a value"),
        (["cursor", "--name", "robot md"], "--name 'robot md': use letters, digits"),
        (["cursor", "--workspace", "."], "--workspace is for vscode only"),
        (["cursor", "--scope", "user"], "--scope is for claude-code only"),
        (["claude-code", "--scope", "global"], "--scope 'global': choose one of user, local, project"),
        (["claude-code", "--scope", "user", "--scope", "local"], "--scope may be given once"),
        (["vscode", "--workspace=/no/such/dir"], "--workspace '/no/such/dir' is not a folder"),
    ],
)
def test_usage_errors_exit_2(install: Installer, args: list[str], message: str) -> None:
    done = install(*args)
    assert done.code == 2 and done.out == ""
    assert message in usage_message(done.err)
    assert list(install.home.iterdir()) == []


# Object.prototype's members (ECMAScript 2025, 20.1.3 and B.2.2) and `prototype`: names a JavaScript
# client finds on any object it reads the config into.
JS_SPECIAL = {
    "__proto__",
    "constructor",
    "prototype",
    "hasOwnProperty",
    "isPrototypeOf",
    "propertyIsEnumerable",
    "toLocaleString",
    "toString",
    "valueOf",
    "__defineGetter__",
    "__defineSetter__",
    "__lookupGetter__",
    "__lookupSetter__",
}
SERVER_NAMES = st.one_of(
    st.sampled_from(sorted(JS_SPECIAL)),
    st.sampled_from(sorted(JS_SPECIAL)).map(lambda n: n.swapcase()),  # JavaScript is case-sensitive
    st.sampled_from(sorted(JS_SPECIAL)).map(lambda n: n + "_"),
    st.text("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-", min_size=1, max_size=20),
)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(name=SERVER_NAMES)
def test_a_name_javascript_treats_specially_is_refused_in_one_line(install: Installer, name: str) -> None:
    for verb, args in (("install", ["cursor", str(EXAMPLE)]), ("uninstall", ["cursor", str(EXAMPLE)])):
        done = install(*args, f"--name={name}", "--dry-run", verb=verb)  # = : a name may start with -
        if name in JS_SPECIAL:
            assert done.code == 2 and done.out == "", done
            told = usage_message(done.err)
            assert told.startswith(f"--name {name!r}: ") and "JavaScript" in told
        elif name.startswith("-"):  # `claude mcp add` would take it for an option
            assert done.code == 2 and done.out == "" and usage_message(done.err), done
        else:
            assert done.code == 0, done
    assert list(install.home.iterdir()) == []


# --- dry run ---------------------------------------------------------------------


def test_dry_run_changes_nothing(install: Installer) -> None:
    done = install("claude-desktop", str(EXAMPLE), "--dry-run", os_name="macos")
    path = install.file("claude-desktop", "macos")
    assert done.code == 0
    first, rest = done.out.split("\n", 1)
    assert first == f'robot-md-mcp: dry run, nothing changed; would add "robot-md-bob" to {path}:'
    assert json.loads("{" + rest + "}") == {"robot-md-bob": MCP_SERVERS}  # the member to write, as pasted
    assert list(install.home.iterdir()) == []  # not even the folders
    secret = {"command": "npx", "args": ["other"], "env": {"API_KEY": "sk-do-not-print"}}
    config = {"mcpServers": {"robot-md-bob": {"command": "/old/bin/robot-md-mcp"}, "other": secret}}
    original = write_json(path, config)
    done = install("claude-desktop", str(EXAMPLE), "--dry-run", os_name="macos")
    assert done.out.startswith(
        f'robot-md-mcp: dry run, nothing changed; would update "robot-md-bob" in {path}:'
    )
    assert "sk-do-not-print" not in done.out + done.err  # only our entry is shown, not others' secrets
    assert path.read_bytes() == original and siblings(path) == {path.name}
    done = install("claude-desktop", str(EXAMPLE), "--dry-run", verb="uninstall", os_name="macos")
    assert done.out == f'robot-md-mcp: dry run, nothing changed; would remove "robot-md-bob" from {path}\n'


# --- the command: whatever is running now ------------------------------------------


def fake_main(monkeypatch, spec_name: str | None) -> None:
    spec = SimpleNamespace(name=spec_name) if spec_name else None
    monkeypatch.setitem(sys.modules, "__main__", SimpleNamespace(__spec__=spec))


def test_launch_command_for_each_way_of_running(monkeypatch, tmp_path: Path) -> None:
    fake_main(monkeypatch, None)
    pyz = tmp_path / "robot-md-mcp.pyz"
    with zipfile.ZipFile(pyz, "w") as z:
        z.writestr("__main__.py", "")
    renamed = tmp_path / "robot-md-mcp"  # a zipapp without its extension
    renamed.write_bytes(pyz.read_bytes())
    script = tmp_path / "bin" / "robot-md-mcp"  # a console script
    script.parent.mkdir()
    script.write_text("#!/usr/bin/python3\nfrom robot_md_mcp import main\n")
    exe = tmp_path / "Scripts" / "robot-md-mcp.exe"
    exe.parent.mkdir()
    exe.write_bytes(b"MZ" + pyz.read_bytes())  # pip's launchers carry a zip too
    cases = {
        str(pyz): [sys.executable, str(pyz)],
        str(renamed): [sys.executable, str(renamed)],
        MODULE: [sys.executable, MODULE],
        str(script): [str(script)],
        str(exe): [str(exe)],
        str(exe.with_suffix("")): [str(exe)],  # pip's Windows launcher strips ".exe" from argv[0]
        "-c": [sys.executable, os.path.abspath(rmm.__file__)],
    }
    for argv0, expected in cases.items():
        monkeypatch.setattr(sys, "argv", [argv0, "install"])
        assert rmm.launch_command() == expected, argv0
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(sys, "argv", ["robot-md-mcp.pyz"])  # relative: made absolute
    assert rmm.launch_command() == [sys.executable, str(pyz)]
    fake_main(monkeypatch, "robot_md_mcp.__main__")  # `python -m robot_md_mcp`, installed package
    monkeypatch.setattr(sys, "argv", ["/site-packages/robot_md_mcp/__main__.py"])
    assert rmm.launch_command() == [sys.executable, "-m", "robot_md_mcp"]


def ways_of_running(folder: Path) -> dict[str, tuple[str, str | None]]:
    """sys.argv[0] and __main__'s spec name of each way this program runs (launch_command's cases)."""
    pyz = folder / "robot-md-mcp-0.1.0-cp311-manylinux_x86_64.pyz"
    with zipfile.ZipFile(pyz, "w") as z:
        z.writestr("__main__.py", "")
    (folder / "robot-md-mcp").write_bytes(pyz.read_bytes())  # a zipapp without its extension
    (folder / "bin").mkdir()
    (folder / "bin" / "robot-md-mcp").write_text("#!/usr/bin/python3\n")  # a console script
    return {
        "pyz": (str(pyz), None),
        "zipapp without extension": (str(folder / "robot-md-mcp"), None),
        "module file": (MODULE, None),
        "console script": (str(folder / "bin" / "robot-md-mcp"), None),
        "python -m": ("/site-packages/robot_md_mcp/__main__.py", "robot_md_mcp.__main__"),
        "python -c": ("-c", None),
    }


@pytest.mark.parametrize("verb", ["install", "uninstall"])
def test_an_entry_any_way_of_running_wrote_is_replaced_or_removed_by_any_other(
    install: Installer, tmp_path: Path, monkeypatch, verb: str
) -> None:
    """Installed from the pyz, uninstalled (or installed again) from the console script, ...: every
    form install itself writes is ours to every other copy."""
    ways = ways_of_running(tmp_path)
    path = install.file("cursor")
    every = list(ways.values())
    for (wrote, wrote_spec), (runs, runs_spec) in zip(every, every[1:] + every[:1]):  # each writes, each runs
        write_json(path, {"mcpServers": {"x": {"command": "y"}}})
        fake_main(monkeypatch, wrote_spec)
        monkeypatch.setattr(sys, "argv", [wrote])
        assert install("cursor", str(EXAMPLE)).code == 0
        fake_main(monkeypatch, runs_spec)
        monkeypatch.setattr(sys, "argv", [runs])
        done = install("cursor", str(EXAMPLE), verb=verb)
        assert done.code == 0, (wrote, runs, done)
        servers = json.loads(path.read_text())["mcpServers"]
        assert servers.keys() == ({"x", "robot-md-bob"} if verb == "install" else {"x"}), (wrote, runs)


def run_cli(*args: str, env: dict[str, str], python_args: tuple[str, ...] = (MODULE,), cwd: Path = ROOT):
    full_env = {k: v for k, v in os.environ.items() if k not in ("ROBOT_MD_PATH", "XDG_CONFIG_HOME")}
    command = [sys.executable, *python_args]
    return run("install", *args, command=command, env={**full_env, **env}, inherit_env=False, cwd=cwd)


@pytest.mark.parametrize("home", ["", "relative/home", "~"])
def test_a_home_that_names_no_folder_is_refused_and_nothing_written(
    tmp_path: Path, home: str, monkeypatch, capsys
) -> None:
    monkeypatch.chdir(tmp_path)  # where a relative home would put the file
    monkeypatch.setenv("HOME", str(tmp_path))  # and where Path.home() would: a slip lands here too
    assert rmm.main(["install", "cursor", str(EXAMPLE)], rmm.Machine("linux", {"HOME": home})) == 1
    out, err = capsys.readouterr()
    assert out == "" and err == f"robot-md-mcp: $HOME is {home!r}, not an absolute path; set it to yours\n"
    assert list(tmp_path.iterdir()) == []


def test_a_real_zipapp_installs_itself(tmp_path: Path) -> None:
    app = tmp_path / "app"
    app.mkdir()
    (app / "robot_md_mcp.py").write_bytes(Path(MODULE).read_bytes())
    (app / "__main__.py").write_text(  # the schema from the checkout: a bare zipapp cannot read its own
        "import pathlib, robot_md_mcp\n"
        f"robot_md_mcp.SCHEMA_PATH = pathlib.Path({str(ROOT / 'schema.json')!r})\n"
        "raise SystemExit(robot_md_mcp.main())\n"
    )
    pyz = tmp_path / "robot-md-mcp.pyz"
    import zipapp

    zipapp.create_archive(app, pyz)
    done = run_cli(
        "claude-code", str(EXAMPLE), "--dry-run", env={}, python_args=("robot-md-mcp.pyz",), cwd=tmp_path
    )
    assert done.returncode == 0, done.stderr
    assert shlex.split(done.stdout) == [
        "claude",
        "mcp",
        "add",
        "--scope",
        "user",
        "robot-md-bob",
        "--",
        sys.executable,
        str(pyz),
        str(EXAMPLE),
    ]


def test_python_dash_m_from_a_checkout_installs_the_file(tmp_path: Path) -> None:
    done = run_cli("claude-code", str(EXAMPLE), "--dry-run", env={}, python_args=("-m", "robot_md_mcp"))
    assert done.returncode == 0, done.stderr
    assert shlex.split(done.stdout) == [*ADD, "robot-md-bob", "--", *COMMAND]


# --- claude-code -------------------------------------------------------------------


def test_claude_code_line_is_quoted(install: Installer, tmp_path: Path) -> None:
    manifest = tmp_path / "my robot's dir" / "ROBOT.md"
    manifest.parent.mkdir()
    manifest.write_bytes(EXAMPLE.read_bytes())
    done = install("claude-code", str(manifest), "--dry-run", "--name", "bob")
    assert done.code == 0 and done.err == ""
    assert shlex.split(done.out) == [
        "claude",
        "mcp",
        "add",
        "--scope",
        "user",
        "bob",
        "--",
        sys.executable,
        MODULE,
        str(manifest),
    ]
    assert done.out.count("\n") == 1
    done = install("claude-code", str(manifest), "--dry-run", os_name="windows")
    assert done.out.rstrip("\n") == subprocess.list2cmdline(
        [*ADD, "robot-md-bob", "--", sys.executable, MODULE, str(manifest)]
    )
    # Not on PATH: the line to run elsewhere, and a note why.
    done = install("claude-code", str(manifest), PATH=str(tmp_path / "empty"))
    assert done.code == 0 and shlex.split(done.out)[:3] == ["claude", "mcp", "add"]
    assert done.err == "robot-md-mcp: claude is not on PATH; run the line above where it is\n"


# A stand-in for `claude mcp add|get|remove` (the heavy test below runs the real one): its
# servers per scope in a JSON file, its exit codes, and `get`'s text as Claude Code words it. With a
# "project_dir" in the file, `get` sees the local and project scopes only from that folder, as Claude Code.
FAKE_CLAUDE = """#!{python}
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


def fake_claude(tmp_path: Path, fail: int = 0) -> tuple[dict[str, str], Path]:
    """The environment that puts the stand-in first on PATH, and the file holding its servers."""
    bin_dir, state = tmp_path / "bin", tmp_path / "claude-servers.json"
    bin_dir.mkdir(exist_ok=True)
    claude = bin_dir / "claude"
    claude.write_text(
        FAKE_CLAUDE.format(python=sys.executable, state=str(state), fail=fail), encoding="utf-8"
    )
    claude.chmod(0o755)
    return {"HOME": str(tmp_path), "PATH": f"{bin_dir}{os.pathsep}{os.environ['PATH']}"}, state


@posix_only
def test_claude_code_install_is_idempotent_and_leaves_foreign_entries(
    install: Installer, tmp_path: Path
) -> None:
    env, state = fake_claude(tmp_path)
    line = shlex.join([*ADD, "robot-md-bob", "--", *COMMAND])
    spaced = tmp_path / "my robot" / "ROBOT.md"  # `claude mcp get` joins the arguments with spaces
    spaced.parent.mkdir()
    spaced.write_bytes(EXAMPLE.read_bytes())
    for _ in range(2):
        done = install("claude-code", str(spaced), "--scope", "project", "--name", "spaced", **env)
        assert done.code == 0, done
    assert done.out.endswith("nothing changed\n"), done
    done = install("claude-code", str(EXAMPLE), **env)
    assert (done.code, done.err) == (0, "")
    assert done.out == f'robot-md-mcp: added "robot-md-bob" in Claude Code\'s user config: ran {line}\n'
    assert json.loads(state.read_text())["user"] == {"robot-md-bob": COMMAND}
    done = install("claude-code", str(EXAMPLE), **env)  # the second run
    assert done.code == 0 and "nothing changed" in done.out, done
    assert json.loads(state.read_text())["user"] == {"robot-md-bob": COMMAND}
    state.write_text(json.dumps({"user": {"robot-md-bob": ["robot-md-mcp", "/old/ROBOT.md"]}}))
    done = install("claude-code", str(EXAMPLE), **env)
    assert done.code == 0 and done.out.startswith('robot-md-mcp: updated "robot-md-bob"'), done
    assert json.loads(state.read_text()) == {"user": {"robot-md-bob": COMMAND}}
    foreign = {"user": {"robot-md-bob": ["node", "server.js"]}}
    state.write_text(json.dumps(foreign))
    done = install("claude-code", str(EXAMPLE), **env)
    assert done.code == 1 and done.err.count("\n") == 1 and "not robot-md-mcp's" in done.err
    assert json.loads(state.read_text()) == foreign
    done = install("claude-code", str(EXAMPLE), "--scope", "local", **env)
    assert done.code == 0 and "Claude Code's local config" in done.out
    assert json.loads(state.read_text()) == {**foreign, "local": {"robot-md-bob": COMMAND}}


@posix_only
@pytest.mark.parametrize(
    "old",
    [
        ["/Users/me/Library/Application Support/uv/tools/robot-md-mcp/bin/robot-md-mcp", "/r/ROBOT.md"],
        ["C:\\Program Files\\Python312\\python.exe", "-m", "robot_md_mcp", "C:\\r\\ROBOT.md"],
        [sys.executable, "/my robots/robot_md_mcp.py", "/old/ROBOT.md"],  # this very copy
    ],
    ids=["console script", "python -m", "this copy"],
)
def test_claude_code_replaces_its_own_entry_whose_command_has_spaces(
    install: Installer, tmp_path: Path, monkeypatch, old: list[str]
) -> None:
    """`claude mcp get` joins the words with spaces: a program in a folder with a space in its name is
    still ours, and replaced."""
    monkeypatch.setattr(sys, "argv", ["/my robots/robot_md_mcp.py"])
    env, state = fake_claude(tmp_path)
    state.write_text(json.dumps({"user": {"robot-md-bob": old}}))
    done = install("claude-code", str(EXAMPLE), PATH=env["PATH"])
    assert done.code == 0 and done.out.startswith('robot-md-mcp: updated "robot-md-bob"'), done
    new = [sys.executable, "/my robots/robot_md_mcp.py", str(EXAMPLE)]
    assert json.loads(state.read_text()) == {"user": {"robot-md-bob": new}}
    done = install("claude-code", str(EXAMPLE), PATH=env["PATH"])
    assert done.code == 0 and done.out.endswith("nothing changed\n"), done


@posix_only
def test_claude_code_failing_is_one_line(install: Installer, tmp_path: Path) -> None:
    env, state = fake_claude(tmp_path, fail=3)
    done = install("claude-code", str(EXAMPLE), **env)
    assert done.code == 1 and done.out == ""
    assert done.err.startswith("robot-md-mcp: `claude mcp add` failed (exit 3): ")
    assert done.err.count("\n") == 1 and not state.exists()
    assert install("claude-code", str(EXAMPLE), "--dry-run", **env).out.startswith("claude mcp add")
    assert not state.exists()  # a dry run never runs claude
    state.write_text(json.dumps({"user": {"robot-md-bob": ["/old/bin/robot-md-mcp", "/r/ROBOT.md"]}}))
    done = install("claude-code", str(EXAMPLE), **env)  # replacing ours: removed, then the add fails
    assert done.code == 1 and done.err.count("\n") == 1, done
    assert done.err.endswith(
        "; the entry it replaces was removed first: it ran /old/bin/robot-md-mcp /r/ROBOT.md\n"
    )


@posix_only
@pytest.mark.parametrize("verb", ["install", "uninstall"])
def test_a_claude_that_cannot_start_is_one_line(install: Installer, tmp_path: Path, verb: str) -> None:
    """A `claude` on PATH whose interpreter is gone (a stale npm shim) or that is no program at all."""
    for content in ("#!/nonexistent/node\n", "\x7fELF not a program"):
        bin_dir = tmp_path / "bin"
        bin_dir.mkdir(exist_ok=True)
        (bin_dir / "claude").write_text(content, encoding="utf-8")
        (bin_dir / "claude").chmod(0o755)
        env = {"HOME": str(tmp_path), "PATH": f"{bin_dir}{os.pathsep}{os.environ['PATH']}"}
        done = install("claude-code", str(EXAMPLE), verb=verb, **env)
        assert (done.code, done.out) == (1, ""), done
        assert done.err.startswith(f"robot-md-mcp: cannot run {bin_dir / 'claude'}: ")
        assert done.err.count("\n") == 1, done.err


@posix_only
def test_claude_code_uninstall_finds_user_and_local_entries(install: Installer, tmp_path: Path) -> None:
    env, state = fake_claude(tmp_path)
    ours = {
        "user": {"robot-md-bob": COMMAND},
        "local": {"robot-md-bob": COMMAND},
        "project": {"robot-md-bob": COMMAND},
    }
    state.write_text(json.dumps(ours))
    uninstall = ["claude-code", str(EXAMPLE)]
    done = install(*uninstall, verb="uninstall", **env)
    assert done.code == 0 and "from Claude Code's user and local config" in done.out, done
    assert json.loads(state.read_text()) == {"user": {}, "local": {}, "project": {"robot-md-bob": COMMAND}}
    done = install(*uninstall, verb="uninstall", **env)
    assert done.code == 0 and done.out.endswith("; nothing changed\n"), done
    done = install(*uninstall, "--scope", "project", verb="uninstall", **env)
    assert done.code == 0 and json.loads(state.read_text())["project"] == {}


@posix_only
def test_claude_code_leaves_an_http_server_under_our_name(install: Installer, tmp_path: Path) -> None:
    """`claude mcp get` shows a URL, no command: not ours, so neither replaced nor removed."""
    env, state = fake_claude(tmp_path)
    theirs = {"user": {"robot-md-bob": "http://127.0.0.1:9/mcp"}}
    state.write_text(json.dumps(theirs))
    done = install("claude-code", str(EXAMPLE), **env)
    assert done.code == 1 and "not robot-md-mcp's" in done.err, done
    done = install("claude-code", str(EXAMPLE), "--scope", "user", verb="uninstall", **env)
    assert done.code == 1 and "not robot-md-mcp's" in done.err, done
    assert json.loads(state.read_text()) == theirs


@posix_only
def test_claude_code_leaves_someone_elses_entry_even_where_ours_wins(
    install: Installer, tmp_path: Path, monkeypatch
) -> None:
    """A local entry of ours hides the user scope's in `claude mcp get` here; install and uninstall look
    at the user scope from an empty folder, so someone else's entry there is left as it is."""
    monkeypatch.chdir(ROOT)  # where `claude mcp get` sees the local entry
    env, state = fake_claude(tmp_path)
    foreign, old = ["node", "server.js"], ["/old/bin/robot-md-mcp", "/r/ROBOT.md"]
    state.write_text(
        json.dumps(
            {"project_dir": str(ROOT), "user": {"robot-md-bob": foreign}, "local": {"robot-md-bob": old}}
        )
    )
    done = install("claude-code", str(EXAMPLE), **env)
    assert (done.code, done.out) == (1, ""), done
    assert done.err == (
        'robot-md-mcp: nothing installed: Claude Code\'s user config has a "robot-md-bob" that is not '
        "robot-md-mcp's; left as it is (--name picks another)\n"
    )
    done = install("claude-code", str(EXAMPLE), verb="uninstall", **env)
    assert (
        done.code == 0
        and done.out == 'robot-md-mcp: removed "robot-md-bob" from Claude Code\'s local config\n'
    )
    assert done.err == (
        "robot-md-mcp: note: Claude Code's user config has a \"robot-md-bob\" that is not robot-md-mcp's; "
        "left as it is\n"
    )
    assert json.loads(state.read_text()) == {
        "project_dir": str(ROOT),
        "user": {"robot-md-bob": foreign},
        "local": {},
    }
    done = install("claude-code", str(EXAMPLE), verb="uninstall", **env)
    assert (done.code, done.out) == (1, "") and done.err.count("\n") == 1, done
    assert done.err.startswith("robot-md-mcp: nothing removed: Claude Code's user config has a")
    assert json.loads(state.read_text())["user"] == {"robot-md-bob": foreign}


@pytest.mark.heavy
@posix_only
def test_the_real_claude_code_finds_the_install_from_any_folder(tmp_path: Path) -> None:
    """The real Claude Code CLI from npm, in an empty home, offline: an entry an earlier version left in
    local scope; install from one folder; `claude mcp list` and `get` from another find it (user scope) and
    connect; a second install changes nothing; uninstall removes it and the local leftover."""
    from node22 import node22
    from test_plugin import claude_code

    claude = claude_code()
    home, old, here, elsewhere = (tmp_path / d for d in ("home", "old", "here", "elsewhere"))
    for folder in (home, old, here, elsewhere):
        folder.mkdir()
    env = {
        "HOME": str(home),
        "PATH": os.pathsep.join([str(claude.parent), str(node22().parent), os.environ["PATH"]]),
        "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
        "DISABLE_TELEMETRY": "1",
        "DISABLE_AUTOUPDATER": "1",
    }

    def claude_in(cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [str(claude), *args],
            capture_output=True,
            text=True,
            cwd=cwd,
            env={**os.environ, **env},
            timeout=300,
        )

    assert claude_in(old, "mcp", "add", "robot-md-bob", "--", *COMMAND).returncode == 0  # as install once did
    done = run_cli("claude-code", str(EXAMPLE), env=env, cwd=here)
    assert done.returncode == 0 and 'added "robot-md-bob" in Claude Code\'s user config' in done.stdout, done
    listed = claude_in(elsewhere, "mcp", "list")
    line = next(line for line in listed.stdout.splitlines() if line.startswith("robot-md-bob:"))
    assert "Connected" in line and "Failed" not in line, listed.stdout
    got = claude_in(elsewhere, "mcp", "get", "robot-md-bob")
    assert got.returncode == 0 and "Scope: User config" in got.stdout, got.stdout
    done = run_cli("claude-code", str(EXAMPLE), env=env, cwd=elsewhere)
    assert done.returncode == 0 and done.stdout.endswith("with this command; nothing changed\n"), done
    gone = run("uninstall", "claude-code", str(EXAMPLE), cwd=old, env=env, timeout=300)
    assert gone.returncode == 0 and "from Claude Code's user and local config" in gone.stdout, gone
    for folder in (old, elsewhere):
        assert claude_in(folder, "mcp", "get", "robot-md-bob").returncode != 0


# --- the real CLI, and the installed entry really starts a server -------------------


@pytest.mark.anyio
# The vscode entry is the claude-desktop one with "type": "stdio" (ENTRY, asserted here and in
# test_fresh_install): starting it once more is the heavy tier's.
@pytest.mark.parametrize("client", ["claude-desktop", pytest.param("vscode", marks=pytest.mark.heavy)])
async def test_installed_entry_starts_a_working_server(
    install: Installer, tmp_path: Path, client: str
) -> None:
    """What install writes (in this process, as `python robot_md_mcp.py install` would) starts a real
    server, as the client app would start it."""
    xdg = tmp_path / "xdg"
    done = install(client, str(EXAMPLE), XDG_CONFIG_HOME=str(xdg))
    assert done.code == 0, done.err
    path = xdg / ("Claude/claude_desktop_config.json" if client == "claude-desktop" else "Code/User/mcp.json")
    assert done.out.startswith(f'robot-md-mcp: added "robot-md-bob" to {path} (new file); ')
    entry = json.loads(path.read_text(encoding="utf-8"))[KEY[client]]["robot-md-bob"]
    assert entry == ENTRY[client]
    assert list(install.home.iterdir()) == []  # XDG_CONFIG_HOME won over ~/.config
    assert "nothing changed" in install(client, str(EXAMPLE), XDG_CONFIG_HOME=str(xdg)).out
    with install.capsys.disabled():  # the SDK's stdio client hands the server a real stderr
        async with launched(*entry["args"], command=[entry["command"]], cwd=tmp_path) as mcp_client:
            uris = [r.uri for r in (await mcp_client.list_resources()).resources]
    assert uris == [*(f"robot-md://bob/{v.kind}" for v in rmm.VIEWS), rmm.CARD_URI]


def test_cli_refusal_is_one_line(install: Installer) -> None:
    path = install.file("cursor")
    path.parent.mkdir()
    path.write_text("{oops", encoding="utf-8")
    done = install("cursor", str(EXAMPLE))
    assert done.code == 1 and json.loads("{" + done.out + "}") == {"robot-md-bob": ENTRY["cursor"]}
    assert done.err == (
        f"robot-md-mcp: nothing installed: {path} is not strict JSON (Expecting property name enclosed in "
        'double quotes at line 1 column 2); if it has comments or trailing commas, edit its "mcpServers" '
        "object by hand; else fix it or move it aside\n"
    )
    assert path.read_text(encoding="utf-8") == "{oops"


@posix_only
def test_paths_that_are_not_utf8_are_one_line_never_a_traceback(tmp_path: Path) -> None:
    """A folder named in Latin-1 (a byte that is not UTF-8): the messages name it as bytes allow; a
    manifest or program there is refused in one line (a JSON config cannot name it), nothing written."""
    odd = os.fsdecode(bytes(tmp_path) + b"/caf\xe9")
    try:
        os.mkdir(odd)
    except OSError:
        pytest.skip("this file system takes only UTF-8 names")
    home = tmp_path / "home"
    for verb in ("install", "uninstall"):
        args = [verb, "vscode", str(EXAMPLE), "--workspace", odd]
        done = subprocess.run(server_argv(*args), env={**os.environ, "HOME": str(home)}, capture_output=True)
        assert done.returncode == 0 and done.stderr == b"", done.stderr
        assert done.stdout.count(b"\n") == 1 and b"caf" in done.stdout
    manifest = Path(odd) / "ROBOT.md"
    manifest.write_bytes(EXAMPLE.read_bytes())
    for client in ("cursor", "claude-code"):
        done = subprocess.run(
            server_argv("install", client, str(manifest), "--dry-run"),
            env={**os.environ, "HOME": str(home), "PATH": ""},
            capture_output=True,
        )
        assert (done.returncode, done.stdout) == (1, b""), done.stderr
        assert done.stderr.startswith(b"robot-md-mcp: nothing installed: ") and done.stderr.count(b"\n") == 1
        assert b"is not UTF-8" in done.stderr
    assert not home.exists()


@posix_only
@pytest.mark.parametrize("verb", ["install", "uninstall", "render", "validate", "--help", "--version"])
def test_a_stdout_that_takes_nothing_is_one_line(tmp_path: Path, verb: str) -> None:
    """stdout on /dev/full: one line on stderr and exit 1, never a traceback or the exit's own 120 (the
    config written), on every CPython: some keep what was printed buffered to the exit."""
    need(os.path.exists("/dev/full"), "/dev/full")
    home = tmp_path / "home"
    words = {
        "install": ["cursor", str(EXAMPLE)],
        "uninstall": ["cursor", str(EXAMPLE)],
        "--help": [],
        "--version": [],
    }
    args = words.get(verb, [str(EXAMPLE)])
    if verb == "uninstall":
        write_json(home / ".cursor" / "mcp.json", {"mcpServers": {"robot-md-bob": MCP_SERVERS}})
    with open("/dev/full", "wb") as full:
        done = subprocess.run(
            server_argv(verb, *args),
            env={**os.environ, "HOME": str(home)},
            stdout=full,
            stderr=subprocess.PIPE,
        )
    assert done.returncode == 1 and done.stderr == b"robot-md-mcp: stopped: no space left on device\n"
    if verb in ("install", "uninstall"):
        servers = json.loads((home / ".cursor" / "mcp.json").read_text())["mcpServers"]
        assert ("robot-md-bob" in servers) == (verb == "install")


WORDS = st.sampled_from(
    [
        *"cursor vscode claude-desktop claude-code CURSOR /etc /dev/null x user project".split(),
        *"__proto__ ~ 8000".split(),
        *"--name --scope --workspace --dry-run --json --http -- - -x --name=é".split(),
        *(str(EXAMPLE), "", "a\nb"),
    ]
)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(verb=st.sampled_from(["install", "uninstall"]), words=st.lists(WORDS, max_size=6))
def test_any_command_line_is_an_answer_or_one_line(install: Installer, verb: str, words: list[str]) -> None:
    """Whatever words follow install or uninstall (claude off PATH): exit 0, or 1 or 2 with one line on
    stderr; never an exception out of main."""
    done = install(*words, verb=verb, PATH="")
    assert done.code in (0, 1, 2), done
    lines = {0: 0, 1: 1, 2: 2 if done.err.startswith("usage: ") else 1}[done.code]  # argparse's two lines
    assert done.err.count("\n") == lines or "claude is not on PATH" in done.err, done


def test_help_mentions_install() -> None:
    for args in (["--help"], ["install", "--help"]):
        done = run(*args)
        assert done.returncode == 0 and "install CLIENT [PATH... | --fleet DIR | URL" in done.stdout
    done = run("validate", "--help")
    assert done.returncode == 0 and "usage:" in done.stdout


# --- install from a cache, and uninstall ------------------------------------------


TAG = "https://github.com/robot-md/robot-md-mcp"
# Each shape of PEP 610's direct_url.json, and the source install writes for it (None: it refuses).
DIRECT_URLS: dict[str, tuple[Any, str | None]] = {
    "index (no direct_url.json)": (None, None),
    "archive": ({"url": f"{TAG}/archive/v0.1.0.tar.gz", "archive_info": {"hash": "sha256=ab"}}, None),
    "git tag": (
        {"url": TAG, "vcs_info": {"vcs": "git", "requested_revision": "v0.1.0", "commit_id": "a1b2c3"}},
        f"git+{TAG}@v0.1.0",
    ),
    "git, no revision asked": (
        {"url": TAG, "vcs_info": {"vcs": "git", "commit_id": "a1b2c3"}},
        f"git+{TAG}@a1b2c3",
    ),
    "git over ssh, a subdirectory": (
        {
            "url": "ssh://git@host/r.git",
            "vcs_info": {"vcs": "git", "commit_id": "ff"},
            "subdirectory": "py/pkg",
        },
        "git+ssh://git@host/r.git@ff#subdirectory=py/pkg",
    ),
    "a folder here": ({"url": "file:///home/me/src/robot-md-mcp", "dir_info": {"editable": False}}, None),
    "a wheel here": ({"url": "file:///tmp/robot_md_mcp-0.1.0-py3-none-any.whl", "archive_info": {}}, None),
    "git in a folder here": (
        {"url": "file:///home/me/src/r", "vcs_info": {"vcs": "git", "commit_id": "ff"}},
        None,
    ),
    "mercurial": ({"url": "https://hg.example/r", "vcs_info": {"vcs": "hg", "commit_id": "ff"}}, None),
    "a password": ({"url": "https://me:secret@example.org/r.tar.gz", "archive_info": {}}, None),
    "a space": ({"url": "https://example.org/a b.tar.gz", "archive_info": {}}, None),
    "an option for a revision": ({"url": TAG, "vcs_info": {"vcs": "git", "requested_revision": "-x"}}, None),
    "no url": ({"archive_info": {}}, None),
    "not an object": ([TAG], None),
}
DIRECT_URLS["archive"] = (DIRECT_URLS["archive"][0], f"{TAG}/archive/v0.1.0.tar.gz")


def installed_copy(folder: Path, monkeypatch, direct_url: Any) -> None:
    """A distribution robot-md-mcp first on sys.path, with `direct_url` as its direct_url.json (None: none,
    as from an index)."""
    info = folder / "site" / "robot_md_mcp-9.9.9.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: robot-md-mcp\nVersion: 9.9.9\n")
    if direct_url is not None:
        (info / "direct_url.json").write_text(json.dumps(direct_url))
    monkeypatch.syspath_prepend(str(folder / "site"))


@pytest.mark.parametrize("shape", DIRECT_URLS)
def test_every_pep_610_shape_gives_its_source_or_none(tmp_path: Path, monkeypatch, shape: str) -> None:
    direct_url, source = DIRECT_URLS[shape]
    installed_copy(tmp_path, monkeypatch, direct_url)
    assert rmm.installed_from() == source


@settings(max_examples=200, deadline=None)
@given(
    st.fixed_dictionaries(
        {"url": WORD | st.sampled_from([TAG, "file:///x", "https://h/a.tgz", "ssh://git@h/r"])},
        optional={
            "archive_info": JSON_VALUE,
            "vcs_info": st.fixed_dictionaries(
                {}, optional=dict.fromkeys(("vcs", "requested_revision", "commit_id"), WORD | st.just("git"))
            ),
            "dir_info": JSON_VALUE,
            "subdirectory": WORD | JSON_VALUE,
        },
    )
    | JSON_VALUE
)
def test_any_direct_url_is_a_fetchable_source_or_none(direct_url: Any) -> None:
    """Whatever the file holds: never an exception; a source is one word, fetched over the network."""
    source = rmm.pep610_source(direct_url)
    assert source is None or (
        re.fullmatch(r"(git\+)?(?!file:)[a-z][a-z0-9+.-]*://\S+", source, re.IGNORECASE)
        and source.split("#")[0].removeprefix("git+").startswith(direct_url["url"])
    ), source


@posix_only
@pytest.mark.parametrize("runner", ["uvx", "pipx"])
@pytest.mark.parametrize("shape", ["index (no direct_url.json)", "archive", "git tag", "a folder here"])
@pytest.mark.parametrize("on_path", [True, False], ids=["runner-on-PATH", "runner-not-on-PATH"])
def test_install_from_a_cache_writes_the_runner_and_its_source_or_refuses(
    install: Installer, tmp_path: Path, monkeypatch, runner: str, shape: str, on_path: bool
) -> None:
    """Run by uvx (or `pipx run`), the program lives in a cache that `uv cache clean` empties: an entry
    naming it would stop working. When the copy came from a URL or a git tag, the entry has the runner
    fetch that (its absolute path when on PATH); else nothing is written, in one line."""
    cache = {"uvx": "home/.cache/uv/archive-v0/Ab12/bin", "pipx": "home/.local/share/pipx/.cache/0d5e/bin"}
    script = tmp_path / cache[runner] / "robot-md-mcp"
    script.parent.mkdir(parents=True)
    script.write_text("#!/bin/sh\n", encoding="utf-8")
    monkeypatch.setattr(sys, "argv", [str(script), "install"])
    direct_url, source = DIRECT_URLS[shape]
    installed_copy(tmp_path, monkeypatch, direct_url)
    tools = tmp_path / "tools"
    tools.mkdir()
    (tools / runner).write_text("#!/bin/sh\n", encoding="utf-8")
    (tools / runner).chmod(0o755)
    path_env = str(tools) if on_path else str(tmp_path / "nowhere")
    done = install("cursor", str(EXAMPLE), PATH=path_env)
    if source is None:
        assert done.code == 1 and done.err.count("\n") == 1 and done.out == ""
        assert "runs from a cache that a clean removes" in done.err and not install.file("cursor").exists()
        return
    assert done.code == 0, done.err
    program = str(tools / runner) if on_path else runner
    how = ["--from", source] if runner == "uvx" else ["run", "--spec", source]
    entry = {"command": program, "args": [*how, "robot-md-mcp", str(EXAMPLE)]}
    assert json.loads(install.file("cursor").read_text())["mcpServers"] == {"robot-md-bob": entry}
    assert rmm._ours(entry) and "already in" in install("cursor", str(EXAMPLE), PATH=path_env).out
    assert install("cursor", str(EXAMPLE), verb="uninstall").code == 0
    assert json.loads(install.file("cursor").read_text())["mcpServers"] == {}


def test_uninstall_removes_our_entry_and_nothing_else(install: Installer) -> None:
    path = install.file("claude-desktop")
    other = {"command": "npx", "args": ["other-server"]}
    original = write_json(path, {"mcpServers": {"other": other}, "theme": "dark"})
    assert install("claude-desktop", str(EXAMPLE)).code == 0
    done = install("claude-desktop", str(EXAMPLE), "--dry-run", verb="uninstall")
    assert done.code == 0 and done.out.startswith(
        'robot-md-mcp: dry run, nothing changed; would remove "robot-md-bob"'
    )
    done = install("claude-desktop", str(EXAMPLE), verb="uninstall")
    assert done.code == 0, done.err
    assert done.out.startswith(f'robot-md-mcp: removed "robot-md-bob" from {path} (backup: {path}.bak)')
    assert json.loads(path.read_text()) == json.loads(original)
    done = install("claude-desktop", str(EXAMPLE), verb="uninstall")
    assert done.code == 0 and done.out == f'robot-md-mcp: "robot-md-bob" is not in {path}; nothing changed\n'


def test_uninstall_leaves_an_entry_that_is_not_ours(install: Installer) -> None:
    path = install.file("cursor")
    content = write_json(path, {"mcpServers": {"robot-md-bob": {"command": "npx", "args": ["someone-else"]}}})
    done = install("cursor", str(EXAMPLE), verb="uninstall")
    assert done.code == 1 and done.err.count("\n") == 1
    assert 'has a "robot-md-bob" that is not robot-md-mcp\'s; left as it is' in done.err
    assert path.read_bytes() == content


def test_uninstall_is_as_careful_as_install(install: Installer, tmp_path: Path) -> None:
    """The same refusals: JSONC, repeated keys, a workspace whose .vscode links elsewhere."""
    path = install.file("vscode")
    path.parent.mkdir(parents=True)
    path.write_text('{"servers": {"robot-md-bob": {"command": "robot-md-mcp"}}, // mine\n}', encoding="utf-8")
    done = install("vscode", str(EXAMPLE), verb="uninstall")
    assert done.code == 1 and done.out == "" and 'edit its "servers" object by hand' in done.err
    path.write_text('{"servers": {}, "servers": {}}', encoding="utf-8")
    assert "has the key 'servers' twice" in install("vscode", str(EXAMPLE), verb="uninstall").err


def test_claude_code_uninstall_prints_or_runs_claude_mcp_remove(install: Installer) -> None:
    done = install("claude-code", "--name", "bob-arm", verb="uninstall", PATH="")
    assert done.out == "claude mcp remove --scope user bob-arm\nclaude mcp remove --scope local bob-arm\n"
    assert "claude is not on PATH" in done.err


# --- a client saving its config meanwhile ------------------------------------------------------


CLIENT_SAVE = """
import json, os, sys
path, key, how = sys.argv[1:]
config = json.loads(open(path, encoding="utf-8-sig").read())
config[key] = "saved by the client"
data = json.dumps(config, indent=2).encode()
if how == "replace":  # as most apps save: a new file renamed over the old one
    with open(path + ".new", "wb") as f:
        f.write(data)
    os.replace(path + ".new", path)
else:  # as some editors save: the same file, rewritten
    with open(path, "r+b") as f:
        f.write(data)
        f.truncate()
"""


def client_saves(path: Path, key: str, how: str) -> None:
    subprocess.run([sys.executable, "-c", CLIENT_SAVE, str(path), key, how], check=True, timeout=60)


def saving_at(monkeypatch, steps: set[int], save: Callable[[int], object]) -> list[int]:
    """Run save(step) just before the install's k-th read or edit of the config for k in `steps` (a save
    anywhere between two of them, the last check included, is seen only by the next read)."""
    done: list[int] = []
    count = iter(range(10_000))
    for name in ("_read_config", "edited_config"):
        real = getattr(rmm, name)

        def hooked(*args, real=real, **kwargs):
            step = next(count)
            if step in steps:
                save(step)
                done.append(step)
            return real(*args, **kwargs)

        monkeypatch.setattr(rmm, name, hooked)
    return done


@pytest.mark.parametrize("how", ["replace", "in-place"])
@pytest.mark.parametrize("verb", ["install", "uninstall"])
def test_a_client_saving_its_config_during_install_keeps_its_change(
    install: Installer, monkeypatch, how: str, verb: str
) -> None:
    """Another process rewrites the config after install read it: its write and ours both survive."""
    path = install.file("cursor")
    write_json(path, {"mcpServers": {"robot-md-bob": MCP_SERVERS} if verb == "uninstall" else {}})
    with monkeypatch.context() as patched:
        done = saving_at(patched, {2}, lambda step: client_saves(path, "theme", how))
        result = install("cursor", str(EXAMPLE), verb=verb)
    assert result.code == 0 and done == [2], result.err
    config = json.loads(path.read_text())
    assert config["theme"] == "saved by the client"
    assert ("robot-md-bob" in config["mcpServers"]) == (verb == "install")


def test_a_client_that_keeps_saving_gets_one_line_and_keeps_its_file(install: Installer, monkeypatch) -> None:
    """... and its backup: "nothing written" holds for `<file>.bak` too."""
    path = install.file("cursor")
    write_json(path, {"mcpServers": {}})
    backup = path.with_name("mcp.json.bak")
    backup.write_bytes(b"an older version")
    with monkeypatch.context() as patched:
        saving_at(patched, set(range(2, 100)), lambda step: write_json(path, {"mcpServers": {}, "n": step}))
        done = install("cursor", str(EXAMPLE))
    assert done.code == 1 and done.err.count("\n") == 1
    assert f"{path} changed {rmm.CONFIG_EDIT_ATTEMPTS} times while being edited" in done.err
    assert "robot-md-bob" not in json.loads(path.read_text())["mcpServers"]
    assert backup.read_bytes() == b"an older version" and siblings(path) == {"mcp.json", "mcp.json.bak"}


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(steps=st.sets(st.integers(0, 14), max_size=3), in_place=st.booleans())
def test_a_concurrent_writer_at_any_step_loses_nothing(
    install: Installer, monkeypatch, steps: set[int], in_place: bool
) -> None:
    """Random interleavings: a client saves (read, change, write) before any of install's file steps up to
    the last check; every save is kept, and so is our entry."""
    path = install.file("cursor")
    write_json(path, {"mcpServers": {"other": {"command": "x"}}})

    def save(step: int) -> None:
        config = json.loads(path.read_text(encoding="utf-8"))
        config[f"client-{step}"] = step
        data = json.dumps(config, indent=2).encode()
        if in_place:
            with open(path, "r+b") as f:
                f.write(data)
                f.truncate()
        else:
            path.with_name("new").write_bytes(data)
            os.replace(path.with_name("new"), path)

    with monkeypatch.context() as patched:
        done = saving_at(patched, steps, save)
        result = install("cursor", str(EXAMPLE))
    assert result.code == 0, result.err
    config = json.loads(path.read_text())
    assert {k for k in config if k.startswith("client-")} == {f"client-{s}" for s in done}
    assert config["mcpServers"] == {"other": {"command": "x"}, "robot-md-bob": MCP_SERVERS}


# --- keeping the user's file as it was -----------------------------------------


def test_a_backup_that_is_a_folder_is_named_as_the_problem(install: Installer) -> None:
    path = install.file("cursor")
    original = write_json(path, {"mcpServers": {}})
    (path.parent / "mcp.json.bak").mkdir()
    done = install("cursor", str(EXAMPLE))
    assert done.code == 1
    assert done.err == (
        f"robot-md-mcp: nothing installed: {path} cannot be backed up: "
        f"{path}.bak is a folder; move it aside\n"
    )
    assert path.read_bytes() == original


# --- bounded and linear ------------------------------------------------------------


@pytest.mark.parametrize("verb", ["install", "uninstall"])
def test_a_key_repeated_after_many_is_refused_at_once(install: Installer, verb: str) -> None:
    """The repeated-key check is linear: 200,000 keys, then one again, is refused in well under a second
    of work (a check that looks back over the keys each time takes minutes)."""
    path = install.file("cursor")
    path.parent.mkdir(parents=True)
    keys = "".join(f'"k{i}": 0, ' for i in range(200_000))
    content = ('{"mcpServers": {}, "many": {' + keys + '"k0": 1}}').encode()
    path.write_bytes(content)
    started = time.monotonic()
    done = install("cursor", str(EXAMPLE), verb=verb)
    assert done.code == 1 and "has the key 'k0' twice in one object" in done.err
    assert time.monotonic() - started < 10 and path.read_bytes() == content


@pytest.mark.parametrize("verb", ["install", "uninstall"])
@pytest.mark.parametrize("shape", ["object", "array"])
def test_a_config_nested_990_deep_is_one_line(tmp_path: Path, verb: str, shape: str) -> None:
    """A config nested deeper than we read: one line and exit 1 in a real process, never a
    RecursionError traceback, and the file untouched."""
    home = tmp_path / "home"
    path = home / ".cursor" / "mcp.json"
    path.parent.mkdir(parents=True)
    deep = '{"a":' * 990 + "1" + "}" * 990 if shape == "object" else "[" * 990 + "]" * 990
    text = '{"mcpServers": {}, "deep": ' + deep + "}"
    path.write_text(text, encoding="utf-8")
    env = {k: v for k, v in os.environ.items() if k != "XDG_CONFIG_HOME"}
    done = run(verb, "cursor", EXAMPLE, env={**env, "HOME": str(home)}, inherit_env=False)
    err = done.stderr
    assert done.returncode == 1 and err.count("\n") == 1, err
    assert err.endswith(f"{path} {rmm.TOO_DEEP}\n")
    assert path.read_text(encoding="utf-8") == text


# --- is an entry ours: the program it launches names us ------------------------------------------
# One rule (rmm._program_run_by): the command itself, or the word right after a Python (`-m` between),
# uvx, `uv tool run` or `pipx run` (`--from`/`--spec SOURCE` between). Bridges: the marker only.

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
FOREIGN: dict[str, dict[str, Any]] = {  # entries that mention robot-md-mcp without launching it
    "node bridge": {"command": "node", "args": ["/opt/robot-md-mcp/bridge.js"]},
    "docker image": {"command": "docker", "args": ["run", "-i", "--rm", "ghcr.io/me/robot-md-mcp:latest"]},
    "env note": {"command": "npx", "args": ["other-server"], "env": {"NOTE": "replaces robot-md-mcp"}},
    "remote URL": {"type": "http", "url": "https://robot-md-mcp.example.com/mcp"},
    "mcp-remote": {"command": "npx", "args": ["mcp-remote", "http://127.0.0.1:8765/robot-md-mcp"]},
    "python bridge": {"command": "python3", "args": ["/opt/robot-md-mcp/bridge.py"]},
    "python -c": {"command": "python3", "args": ["-c", "import robot_md_mcp"]},
    "uvx other tool": {"command": "uvx", "args": ["--with", "robot-md-mcp", "other-tool"]},
    "no command": {"args": ["robot-md-mcp"]},
    "python -c, a bare word": {"command": "python3", "args": ["-c", "robot_md_mcp", "/r"]},
    "python reading stdin": {"command": "python3", "args": ["-", "/src/robot_md_mcp.py"]},
    "another pyz": {"command": "python3", "args": ["/opt/robot-md-mcp-evil.pyz", "/r"]},
    "a later argument": {"command": "python3", "args": ["/opt/other.py", "robot-md-mcp", "/r"]},
    # Ours by hand, but a Python's option before the program: not recognised, so left as it is (fails safe).
    "an option first": {"command": "py", "args": ["-3.12", "C:\\robot-md-mcp.pyz", "C:\\r"]},
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
# What launches someone else's program, as its first words; any words may follow.
OTHERS = [
    ["node", "/opt/robot-md-mcp/bridge.js"],
    ["docker", "run", "-i", "--rm", "ghcr.io/me/robot-md-mcp:latest"],
    ["npx", "-y", "mcp-remote@0.15.1", "http://127.0.0.1:8765/mcp"],  # a bridge without our marker
    ["npx", "robot-md-mcp"],  # npm's package of that name: not this program
    ["python3", "/opt/robot-md-mcp/bridge.py"],
    ["python3", "/opt/other.py", "robot-md-mcp"],
    ["python3", "-c", "import robot_md_mcp"],
    ["python3", "-", "/src/robot_md_mcp.py"],
    ["python3", "-X", "utf8", "/src/robot_md_mcp.py"],
    ["python3", "-m", "other_server", "robot_md_mcp"],
    ["python3", "/opt/robot-md-mcp-evil.pyz"],
    ["python3", "/opt/robot_md_mcp2.py"],
    ["uvx", "--with", "robot-md-mcp", "other-tool"],
    ["uvx", "--from", "robot-md-mcp", "other-tool"],
    ["uvx", "other-tool", "robot-md-mcp"],
    ["uv", "tool", "run", "other-tool", "robot-md-mcp"],
    ["pipx", "run", "other-tool", "robot-md-mcp"],
    ["pipx", "install", "robot-md-mcp"],
    ["bash", "-c", "robot-md-mcp /r/ROBOT.md"],
    ["ssh", "pi", "robot-md-mcp"],
    ["java", "-jar", "/opt/robot-md-mcp/server.jar"],
    ["/opt/robot-md-mcp/bin/other-server"],
]


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


@st.composite
def foreign_entries(draw: st.DrawFn) -> dict[str, Any]:
    """Another server's entry: its own program, from any folder (one named robot-md-mcp included), with
    robot-md-mcp mentioned in any later argument and in its env; or an entry that launches nothing."""
    launch = list(draw(st.sampled_from(OTHERS)))
    folders = draw(FOLDERS)
    if folders and "/" not in launch[0]:
        launch[0] = "/".join(["", *folders, launch[0]])
    tail = draw(st.lists(WORD | MENTION, max_size=4))
    env = draw(st.dictionaries(WORD, WORD | MENTION, max_size=3))
    entry = {"command": launch[0], "args": [*launch[1:], *tail], "env": env}
    odd = [{"type": "http", "url": "https://robot-md-mcp.example/mcp"}, {"args": ["robot-md-mcp"]}]
    odd += [{"command": ["robot-md-mcp"]}, {"command": "robot-md-mcp", "args": "/r"}]
    return draw(st.sampled_from([entry, *odd]))


@settings(max_examples=300, deadline=None)
@given(ours=our_entries(), theirs=foreign_entries())
def test_every_launch_form_of_ours_is_ours_and_no_other_servers_entry_is(
    ours: dict[str, Any], theirs: dict[str, Any]
) -> None:
    assert rmm._ours(ours), ours
    assert not rmm._ours(theirs), theirs


@pytest.mark.parametrize("verb", ["install", "uninstall"])
@pytest.mark.parametrize("case", [*OURS, *FOREIGN])
def test_only_an_entry_that_runs_this_program_is_replaced_or_removed(
    install: Installer, case: str, verb: str
) -> None:
    """Someone else's server under our name is left as it is by install too (as Claude Code's is)."""
    path = install.file("cursor")
    entry = OURS.get(case) or FOREIGN[case]
    content = write_json(path, {"mcpServers": {"robot-md-bob": entry, "x": {"command": "y"}}})
    done = install("cursor", str(EXAMPLE), verb=verb)
    if case in OURS:
        assert done.code == 0, done.err
        ours = {"robot-md-bob": {**entry, **MCP_SERVERS}} if verb == "install" else {}  # its other keys stay
        assert json.loads(path.read_text())["mcpServers"] == {**ours, "x": {"command": "y"}}
    else:
        assert done.code == 1 and done.err.count("\n") == 1
        assert "that is not robot-md-mcp's; left as it is (--name picks another)" in done.err
        assert path.read_bytes() == content and siblings(path) == {"mcp.json"}


@settings(max_examples=200, deadline=None)
@given(
    stem=st.sampled_from(["robot-md-mcp", "robot_md_mcp", "ROBOT-MD-MCP"]),
    tail=st.text("abcxyz.-_+", min_size=1, max_size=8).filter(lambda t: not t.startswith("-"))
    | st.text("abcxyz-", min_size=2, max_size=8).filter(lambda t: t.startswith("-") and not t[1].isdigit()),
    ending=st.sampled_from(["", ".pyz", ".py", ".exe"]),
    python=st.booleans(),
)
def test_a_program_whose_name_only_begins_like_ours_is_not_ours(
    stem: str, tail: str, ending: str, python: bool
) -> None:
    """robot-md-mcp-evil, robot_md_mcp2.py, robot-md-mcp.evil.pyz: only our own names and our pyz's
    (robot-md-mcp-<version>-….pyz) count."""
    program = f"/opt/{stem}{tail}{ending}"
    assert not rmm._runs_this_program(
        {"command": "python3", "args": [program]} if python else {"command": program}
    )


# --- a whole class of configs ------------------------------------------------------

FOREIGN_ENTRY = (
    foreign_entries()
    | st.sampled_from(list(FOREIGN.values()))
    | st.dictionaries(st.text(max_size=8), JSON_VALUE, max_size=4)
)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    other=st.dictionaries(
        st.text(st.characters(codec="utf-8")).filter(lambda k: k != "mcpServers"), JSON_VALUE, max_size=5
    ),
    servers=st.dictionaries(
        st.text(min_size=1).filter(lambda k: k != "robot-md-bob"), FOREIGN_ENTRY, max_size=4
    ),
    indent=st.sampled_from([2, 4, "\t"]),
)
def test_any_config_survives_install_and_uninstall_but_our_entry(
    install: Installer, other: dict, servers: dict, indent: int | str
) -> None:
    path = install.file("cursor")
    path.parent.mkdir(parents=True, exist_ok=True)
    config = {**other, "mcpServers": servers}
    text = json.dumps(config, indent=indent, ensure_ascii=False) + "\n"
    original = text.encode()
    path.write_bytes(original)
    assert install("cursor", str(EXAMPLE)).code == 0
    installed = json.loads(path.read_bytes().decode("utf-8-sig"), object_pairs_hook=list)
    expected = {**other, "mcpServers": {**servers, "robot-md-bob": MCP_SERVERS}}
    assert installed == json.loads(json.dumps(expected), object_pairs_hook=list)
    assert install("cursor", str(EXAMPLE), verb="uninstall").code == 0
    # Byte for byte, but for control and format characters, which come back as escapes.
    assert path.read_bytes() == "".join(map(_escaped_if_invisible, text)).encode()


def _escaped_if_invisible(char: str) -> str:
    hidden = unicodedata.category(char) in ("Cc", "Cf", "Zl", "Zp") and char not in "\n\t"
    return json.dumps(char)[1:-1] if hidden else char


NUMBER = st.from_regex(r"-?(0|[1-9][0-9]{0,30})(\.[0-9]{1,25})?([eE][-+]?[0-9]{1,3})?", fullmatch=True)


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(numbers=st.lists(NUMBER, min_size=1, max_size=6))
def test_numbers_keep_their_value_for_a_javascript_reader(install: Installer, numbers: list[str]) -> None:
    """1e5, 1.0, -0, 0.1000000000000000055511, a 31-digit integer: written as Python's json writes
    them, each is the same number to a reader of doubles, and an integer keeps every digit (or, too
    large for a double, the file is refused in one line with nothing written)."""
    path = install.file("cursor")
    path.parent.mkdir(parents=True, exist_ok=True)
    original = ('{"mcpServers": {}, "n": [' + ", ".join(numbers) + "]}").encode()
    path.write_bytes(original)
    done = install("cursor", str(EXAMPLE))
    if done.code != 0:
        assert "Infinity" in done.err and path.read_bytes() == original
        return
    written = json.loads(path.read_bytes())["n"]
    for text, number in zip(numbers, written, strict=True):
        assert float(number) == float(text)
        assert not isinstance(json.loads(text), int) or number == int(text)


def test_robustness_page_states_the_install_limits_as_the_code_has_them() -> None:
    page = (ROOT / "docs" / "robustness.md").read_text(encoding="utf-8")
    rows = {line.split("`")[1]: line for line in page.splitlines() if line.startswith("|") and "`" in line}
    assert f"| {rmm.MAX_CONFIG_BYTES // 2**20} MiB |" in rows["MAX_CONFIG_BYTES"]
    assert f"| {rmm.CONFIG_EDIT_ATTEMPTS} tries |" in rows["CONFIG_EDIT_ATTEMPTS"]
    assert rmm.TOO_DEEP in page
    assert f"changed {rmm.CONFIG_EDIT_ATTEMPTS} times while being edited" in page
