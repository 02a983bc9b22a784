"""Section 11: the command line's `install` and `uninstall`: the entry written into each client's real
config file, in temp homes laid out as macOS, Windows and Linux, in this process (tests/support/installed.py);
a real process only where the promise is about one."""

from __future__ import annotations

import json
import os
import re
import shlex
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import unicodedata
import zipapp
import zipfile
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
from conftest import EXAMPLE, ROOT, need, posix_only
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st
from installed import (
    CONFIG_FILES,
    FOREIGN_ENTRY,
    JSON_VALUE,
    KEY,
    MODULE,
    TEXT,
    WORD,
    Installer,
    fake_claude,
    foreign_entries,
    installer,
    our_entries,
    run_command,
    siblings,
    write_json,
)
from serving import launched, run
from usage import usage_message

import robot_md_mcp as rmm

COMMAND = [sys.executable, MODULE, str(EXAMPLE)]  # what `python robot_md_mcp.py install … EXAMPLE` installs
MCP_SERVERS = {"command": sys.executable, "args": [MODULE, str(EXAMPLE)]}
ENTRY = {"claude-desktop": MCP_SERVERS, "cursor": MCP_SERVERS, "vscode": {"type": "stdio", **MCP_SERVERS}}
ADD = ["claude", "mcp", "add", "--scope", "user"]  # how install adds the server to Claude Code
IN_A_FIXTURE = settings(deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])


@pytest.fixture
def install(tmp_path: Path, monkeypatch, capsys) -> Installer:
    return installer(tmp_path, monkeypatch, capsys)


# --- where the files are, and writing them ----------------------------------------------------


def test_config_path_details(tmp_path: Path) -> None:
    """XDG_CONFIG_HOME when absolute (a relative one is invalid), Windows without APPDATA, a workspace.
    Each OS's own place is test_fresh_install's."""
    xdg, workspace, desktop = tmp_path / "xdg", tmp_path / "proj", "Claude/claude_desktop_config.json"
    cases = [
        ("claude-desktop", "linux", {"XDG_CONFIG_HOME": str(xdg)}, None, xdg / desktop),
        ("vscode", "linux", {"XDG_CONFIG_HOME": str(xdg)}, None, xdg / "Code/User/mcp.json"),
        ("claude-desktop", "linux", {"XDG_CONFIG_HOME": "rel"}, None, tmp_path / ".config" / desktop),
        ("claude-desktop", "win32", {}, None, tmp_path / "AppData/Roaming" / desktop),
        *(("vscode", p, {}, workspace, workspace / ".vscode/mcp.json") for p in ("darwin", "win32", "linux")),
    ]
    for client, platform, environ, folder, expected in cases:
        assert rmm.config_path(client, platform, environ, tmp_path, folder) == expected, (client, platform)


@pytest.mark.parametrize("os_name, client", CONFIG_FILES)
def test_fresh_install(install: Installer, os_name: str, client: str) -> None:
    done = install(client, str(EXAMPLE), os_name=os_name)
    path = install.file(client, os_name)
    assert (done.code, done.err) == (0, ""), done.err
    assert json.loads(path.read_text(encoding="utf-8")) == {KEY[client]: {"robot-md-bob": ENTRY[client]}}
    assert done.out.startswith(f'robot-md-mcp: added "robot-md-bob" to {path} (new file); ')
    assert done.out.count("\n") == 1 and siblings(path) == {path.name}  # no backup of nothing, no temp file


@pytest.mark.parametrize(
    "os_name, client", [("linux", "cursor"), ("macos", "vscode"), ("windows", "claude-desktop")]
)
def test_install_again_update_and_uninstall_keep_the_rest_with_a_backup(
    install: Installer, os_name: str, client: str
) -> None:
    """Other servers and keys stay, in order, in the file's own indentation; an entry of ours is updated in
    place with what the user added to it (env, a timeout) kept; the same install again changes nothing, not
    even the backup; uninstall removes ours only; `<file>.bak` is the file just before the latest change."""
    path, key, entry = install.file(client, os_name), KEY[client], ENTRY[client]
    backup = path.with_name(path.name + ".bak")
    other = {"command": "npx", "args": ["-y", "@x/y"], "env": {"TOKEN": "ü"}}
    old = {"command": "/old/bin/robot-md-mcp", "env": {"ROBOT_LOG": "1"}, "args": ["/r"], "dev": {}}
    original = {
        "globalShortcut": "Ctrl+Space",
        key: {"other": other, "robot-md-bob": old},
        "zeta": [{"b": 2, "a": 1}],
    }
    before = write_json(path, original, indent=4)

    def run(*args: str, verb: str = "install") -> Any:
        done = install(client, str(EXAMPLE), *args, os_name=os_name, verb=verb)
        assert done.code == 0 and done.err == "", done
        return done

    assert run().out.startswith(f'robot-md-mcp: updated "robot-md-bob" in {path} (backup: {path}.bak); ')
    data, updated = json.loads(path.read_text(encoding="utf-8")), {**old, **entry}
    assert (
        data == {**original, key: {"other": other, "robot-md-bob": updated}} and backup.read_bytes() == before
    )
    assert list(data[key]["robot-md-bob"]) == list(updated)  # the rest's order: test_any_config_survives_…
    installed, mtimes = path.read_bytes(), (path.stat().st_mtime_ns, backup.stat().st_mtime_ns)
    said = run().out
    assert said == f'robot-md-mcp: "robot-md-bob" is already in {path} with this command; nothing changed\n'
    assert (path.read_bytes(), backup.read_bytes()) == (installed, before)
    assert (path.stat().st_mtime_ns, backup.stat().st_mtime_ns) == mtimes
    run("--name", "second")
    assert backup.read_bytes() == installed
    assert list(install.servers(client, os_name)) == ["other", "robot-md-bob", "second"]
    run("--name", "second", verb="uninstall")
    said = run(verb="uninstall").out
    assert said.startswith(f'robot-md-mcp: removed "robot-md-bob" from {path} (backup: {path}.bak)')
    assert json.loads(path.read_text()) == {**original, key: {"other": other}}
    assert run(verb="uninstall").out == f'robot-md-mcp: "robot-md-bob" is not in {path}; nothing changed\n'
    assert siblings(path) == {path.name, backup.name}


@posix_only
def test_a_linked_config_is_written_through_its_mode_kept_a_loop_refused(
    install: Installer, tmp_path: Path
) -> None:
    """A symlinked config (dotfiles) is written through, its mode kept, the backup beside the real file and
    no more readable; a dangling link gets its folders made; a link loop is refused in one line."""
    real = tmp_path / "dotfiles" / "claude.json"
    write_json(real, {})
    real.chmod(0o640)
    path = install.file("cursor")
    path.parent.mkdir(parents=True)
    path.symlink_to(real)
    done = install("cursor", str(EXAMPLE))
    assert done.code == 0 and str(real) in done.out and path.is_symlink()
    assert json.loads(real.read_text())["mcpServers"]["robot-md-bob"] == MCP_SERVERS
    backup = real.with_name("claude.json.bak")
    assert json.loads(backup.read_text()) == {}
    assert real.stat().st_mode & 0o777 == backup.stat().st_mode & 0o777 == 0o640
    path.unlink()
    path.symlink_to(tmp_path / "not yet" / "mcp.json")
    assert install("cursor", str(EXAMPLE)).code == 0 and path.is_symlink()
    written = json.loads((tmp_path / "not yet" / "mcp.json").read_text())
    assert written["mcpServers"]["robot-md-bob"] == MCP_SERVERS
    path.unlink()
    path.symlink_to(path.name)
    for verb in ("install", "uninstall"):
        done = install("cursor", str(EXAMPLE), verb=verb)
        assert (
            done.code == 1 and done.err.count("\n") == 1 and "too many levels of symbolic links" in done.err
        )
    assert siblings(path) == {"mcp.json"} and path.is_symlink()


JSON_TEXT = json.dumps({"a": "x\ny", "mcpServers": {}}, indent=2).encode() + b"\n"


@pytest.mark.parametrize("bom", [b"", b"\xef\xbb\xbf"], ids=["no-bom", "bom"])
@pytest.mark.parametrize(
    "content",
    [JSON_TEXT, JSON_TEXT.replace(b"\n", b"\r\n"), b"", b"\n"],
    ids=["lf", "crlf", "empty", "blank"],
)
def test_bom_crlf_and_empty_files_are_read_and_written_as_plain_utf8(
    install: Installer, bom: bytes, content: bytes
) -> None:
    """A Windows editor's BOM and CRLF, and an empty file, are read; the rewrite is UTF-8 with LF."""
    path = install.file("cursor")
    path.parent.mkdir(parents=True)
    path.write_bytes(bom + content)
    assert install("cursor", str(EXAMPLE)).code == 0
    written = path.read_bytes()
    assert written.startswith(b"{\n") and b"\r" not in written
    rest = {"a": "x\ny"} if content.strip() else {}
    assert json.loads(written) == {**rest, "mcpServers": {"robot-md-bob": MCP_SERVERS}}
    assert path.with_name("mcp.json.bak").read_bytes() == bom + content
    assert install("cursor", str(EXAMPLE), verb="uninstall").code == 0
    assert json.loads(path.read_bytes()) == {**rest, "mcpServers": {}}


FAILURES = {  # the os function that fails, for which file (None: any), and how
    "disk full": ("fsync", None, OSError(28, "No space left on device")),
    "config locked": ("replace", "mcp.json", PermissionError(1, "Operation not permitted")),
    "backup locked": ("replace", "mcp.json.bak", PermissionError(1, "Operation not permitted")),
}


@pytest.mark.parametrize("verb", ["install", "uninstall"])
@pytest.mark.parametrize("case", FAILURES)
def test_a_failed_write_leaves_the_original(install: Installer, monkeypatch, case: str, verb: str) -> None:
    """ENOSPC, or a file that cannot be replaced (macOS Finder's Locked, `chattr +i`: EPERM on rename): the
    config and its backup (bytes and mode) as they were, no temp file; a locked backup still lets the
    config change."""
    path = install.file("cursor")
    ours = {"robot-md-bob": MCP_SERVERS} if verb == "uninstall" else {}
    original = write_json(path, {"mcpServers": {"other": {"command": "x"}, **ours}})
    backup = path.with_name("mcp.json.bak")
    backup.write_bytes(b"an older version")
    backup.chmod(0o600)
    function, name, error = FAILURES[case]
    real = getattr(os, function)

    def failing(*args, **kwargs):
        if name is None or Path(args[1]).name == name:
            raise error
        return real(*args, **kwargs)

    monkeypatch.setattr(os, function, failing)
    done = install("cursor", str(EXAMPLE), verb=verb)
    monkeypatch.undo()
    assert siblings(path) == {"mcp.json", "mcp.json.bak"} and backup.read_bytes() == b"an older version"
    assert backup.stat().st_mode & 0o777 == 0o600
    reason, word = str(error.strerror).lower(), "installed" if verb == "install" else "removed"
    if case == "backup locked":
        assert done.code == 0 and ("robot-md-bob" in install.servers("cursor")) == (verb == "install")
        assert f"(no backup: cannot replace {backup}: {reason})" in done.out
    else:
        assert (done.code, done.out) == (1, "") and path.read_bytes() == original
        assert done.err == f"robot-md-mcp: nothing {word}: cannot write {path}: {reason}\n"


# --- refusing --------------------------------------------------------------------

NOT_STRICT, NAN = "is not strict JSON (", "holds NaN, Infinity or text that is not Unicode; fix it by hand"
JSONC = "Expecting property name enclosed in double quotes at line 1 column 2); if it has comments or "
JSONC += 'trailing commas, edit its "mcpServers" object by hand; else fix it or move it aside'
# fmt: off
REFUSED = {
    "not JSON": (b"{oops", NOT_STRICT + JSONC),
    "not UTF-8": (b'{"a": "caf\xe9"}', "is not UTF-8 text"),
    "top level a list": (b"[]", "does not hold a JSON object at the top level"),
    "servers a list": (b'{"mcpServers": []}', 'has a "mcpServers" that is not a JSON object'),
    "servers null": (b'{"mcpServers": null}', 'has a "mcpServers" that is not a JSON object'),
    "line comment": (b'{\n  // mine\n  "mcpServers": {}\n}\n', NOT_STRICT),
    "trailing comma": (b'{"mcpServers": {"x": {"command": "y"},},}', NOT_STRICT),
    "a number too large for JSON": (b'{"mcpServers": {}, "zoom": 1e400}', NAN),
    "NaN": (b'{"mcpServers": {}, "zoom": NaN}', NAN),
    "a lone surrogate": (b'{"mcpServers": {}, "name": "\\ud800"}', NAN),
    "repeated mcpServers": (b'{"mcpServers": {"a": {"command": "x"}}, "mcpServers": {"b": {}}}',
                            "has the key 'mcpServers' twice in one object; keep one and try again"),
    "an integer of 5000 digits": (b'{"mcpServers": {}, "id": ' + b"7" * 5000 + b"}",  # > int_max_str_digits
                                  "holds a number with more digits than Python reads; fix it by hand"),
}
# fmt: on


@pytest.mark.parametrize(
    "client, verb", [("claude-desktop", "install"), ("vscode", "install"), ("cursor", "uninstall")]
)
@pytest.mark.parametrize("case", REFUSED)
def test_refuses_files_it_cannot_keep(install: Installer, case: str, client: str, verb: str) -> None:
    """One line, the file and its folder untouched, uninstall as install; JSONC (VS Code's comments and
    trailing commas): install prints the entry to paste by hand, in the client's shape."""
    key = KEY[client]
    content, reason = REFUSED[case]
    if verb == "uninstall":  # an entry of ours to remove: the file is rewritten (or would be)
        content = content.replace(
            b'"mcpServers": {}', b'"mcpServers": {"robot-md-bob": {"command": "robot-md-mcp"}}'
        )
    content, reason = content.replace(b"mcpServers", key.encode()), reason.replace("mcpServers", key)
    path = install.file(client)
    path.parent.mkdir(parents=True)
    path.write_bytes(content)
    done = install(client, str(EXAMPLE), verb=verb)
    word = "installed" if verb == "install" else "removed"
    assert done.code == 1 and done.err.count("\n") == 1
    assert done.err.startswith(f"robot-md-mcp: nothing {word}: {path} {reason}")
    assert path.read_bytes() == content and siblings(path) == {path.name}
    if reason.startswith(NOT_STRICT) and verb == "install":  # as a JSON object member
        assert json.loads("{" + done.out + "}") == {"robot-md-bob": ENTRY[client]}
    else:
        assert done.out == ""


@settings(IN_A_FIXTURE, max_examples=40)
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
@settings(IN_A_FIXTURE, max_examples=10)
@given(name=st.text(st.sampled_from("a\n\r\t\x1b\u2028\u202e\x85é"), min_size=1, max_size=6))
def test_a_folder_name_with_line_breaks_still_gets_one_line(
    install: Installer, tmp_path: Path, name: str
) -> None:
    """Paths are shown with control and format characters as <U+XXXX>: every message is one line."""
    workspace = Path(tempfile.mkdtemp(dir=tmp_path, prefix=name))
    for said in ("added", "already in"):
        done = install("vscode", str(EXAMPLE), "--workspace", str(workspace))
        assert done.code == 0 and said in done.out and done.out.count("\n") == 1 and done.err == "", done
    (workspace / ".vscode" / "mcp.json").write_text('{"servers": {}, // mine\n}', encoding="utf-8")
    for verb in ("install", "uninstall"):
        done = install("vscode", str(EXAMPLE), "--workspace", str(workspace), verb=verb)
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


# What may stand at the backup's name, made from the backup, a file and a folder elsewhere.
BACKUP_KINDS = {
    "link to a file": lambda backup, victim, folder: backup.symlink_to(victim),
    "link to a folder": lambda backup, victim, folder: backup.symlink_to(folder),
    "dangling link": lambda backup, victim, folder: backup.symlink_to(folder / "nothing"),
    "link loop": lambda backup, victim, folder: backup.symlink_to(backup.name),
    "fifo": lambda backup, victim, folder: os.mkfifo(backup),
    "socket": lambda backup, victim, folder: socket.socket(socket.AF_UNIX).bind(str(backup)),
    "folder": lambda backup, victim, folder: backup.mkdir(),
}


@posix_only
@pytest.mark.parametrize("kind", BACKUP_KINDS)
def test_whatever_stands_at_the_backup_is_replaced_never_followed(
    install: Installer, tmp_path: Path, kind: str
) -> None:
    """A cloned repo's .vscode/mcp.json.bak -> ~/.bashrc must not make install overwrite .bashrc: whatever
    stands at the backup is replaced, never followed; a folder there is named as the problem."""
    workspace, victim, folder = tmp_path / "repo", tmp_path / "bashrc", tmp_path / "folder"
    path = workspace / ".vscode" / "mcp.json"
    original = write_json(path, {"servers": {}})
    backup = path.with_name("mcp.json.bak")
    victim.write_text("echo safe\n", encoding="utf-8")
    folder.mkdir()
    BACKUP_KINDS[kind](backup, victim, folder)
    done = install("vscode", str(EXAMPLE), "--workspace", str(workspace))
    assert victim.read_text(encoding="utf-8") == "echo safe\n" and list(folder.iterdir()) == []
    if kind == "folder":
        said = f"{path} cannot be backed up: {backup} is a folder; move it aside"
        assert done.code == 1 and done.err == f"robot-md-mcp: nothing installed: {said}\n"
        assert path.read_bytes() == original
    else:
        assert done.code == 0, done.err
        assert not backup.is_symlink() and backup.read_bytes() == original


@posix_only
def test_a_workspace_whose_vscode_folder_links_elsewhere_is_refused(
    install: Installer, tmp_path: Path
) -> None:
    workspace, elsewhere = tmp_path / "repo", tmp_path / "elsewhere"
    workspace.mkdir()
    elsewhere.mkdir()
    (workspace / ".vscode").symlink_to(elsewhere)
    for verb in ("install", "uninstall"):
        done = install("vscode", str(EXAMPLE), "--workspace", str(workspace), verb=verb)
        assert done.code == 1 and "is outside the workspace" in done.err and done.err.count("\n") == 1
    assert list(elsewhere.iterdir()) == []


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
    assert done.code == 1 and done.out == "" and done.err.count("\n") == 1
    assert done.err.startswith(f"robot-md-mcp: {expected}") and done.err.endswith(
        f"({manifest}); nothing installed\n"
    )
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
        assert install.servers("cursor")["r"] == wanted
    monkeypatch.chdir(tmp_path)
    done = install("cursor")
    assert done.code == 2 and "no ROBOT.md given and none found" in done.err


# --- VS Code's workspace ---------------------------------------------------------


@pytest.mark.parametrize("where", ["ROBOT.md", "robots/arm/ROBOT.md", "my robot/ROBOT.md"])
@pytest.mark.parametrize("program_inside", [False, True], ids=["program-elsewhere", "program-inside"])
def test_a_workspace_entry_names_what_is_inside_it_by_workspace_folder(
    install: Installer, tmp_path: Path, monkeypatch, where: str, program_inside: bool
) -> None:
    """.vscode/mcp.json is committed and cloned: what lies in the workspace is ${workspaceFolder}/…, and
    the entry, as VS Code expands it here, is the command install would write for the user profile (which
    is not written)."""
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
    assert str(workspace) not in json.dumps(entry) and entry["type"] == "stdio"
    assert written[-1] == "${workspaceFolder}/" + where
    assert (written[1] == "${workspaceFolder}/tools/robot_md_mcp.py") is program_inside
    expanded = [a.replace("${workspaceFolder}", str(workspace)) for a in written]
    assert [os.path.normpath(a) for a in expanded] == [sys.executable, str(module), str(manifest)]
    assert not install.file("vscode").exists()


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
    assert install.servers("cursor")["robot-md-rover"]["args"][-1] == str(manifest)
    assert install("cursor", str(EXAMPLE)).err == ""  # a manifest that validates: no note


# --- the command line ---------------------------------------------------------------


# fmt: off
USAGE_ERRORS = [
    ([], "install needs a client; choose one of claude-desktop, cursor, vscode, claude-code"),
    (["zed"], "unknown client 'zed'"),
    (["cursor", "--fleet", ".", "a"], "--fleet DIR serves every manifest in DIR; give it or PATHs, not both"),
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
]
# fmt: on


@pytest.mark.parametrize("args, message", USAGE_ERRORS)
def test_usage_errors_exit_2(install: Installer, args: list[str], message: str) -> None:
    done = install(*args)
    assert done.code == 2 and done.out == ""
    assert message in usage_message(done.err)
    assert list(install.home.iterdir()) == []


# Object.prototype's members (ECMAScript 2025, 20.1.3 and B.2.2) and `prototype`: names a JavaScript
# client finds on any object it reads the config into.
JS_SPECIAL = sorted(
    "__proto__ constructor prototype hasOwnProperty isPrototypeOf propertyIsEnumerable toLocaleString "
    "toString valueOf __defineGetter__ __defineSetter__ __lookupGetter__ __lookupSetter__".split()
)
SERVER_NAMES = st.sampled_from(JS_SPECIAL).flatmap(
    lambda n: st.sampled_from([n, n.swapcase(), n + "_"])
) | st.text("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-", min_size=1, max_size=20)


@settings(IN_A_FIXTURE, max_examples=40)
@given(name=SERVER_NAMES)
def test_a_name_javascript_treats_specially_is_refused_in_one_line(install: Installer, name: str) -> None:
    """(JavaScript is case-sensitive: toSTRING is an ordinary name.)"""
    for verb in ("install", "uninstall"):
        done = install(
            "cursor", str(EXAMPLE), f"--name={name}", "--dry-run", verb=verb
        )  # = : may start with -
        if name in JS_SPECIAL:
            assert done.code == 2 and done.out == "", done
            told = usage_message(done.err)
            assert told.startswith(f"--name {name!r}: ") and "JavaScript" in told
        elif name.startswith("-"):  # `claude mcp add` would take it for an option
            assert done.code == 2 and done.out == "" and usage_message(done.err), done
        else:
            assert done.code == 0, done
    assert list(install.home.iterdir()) == []


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


WORDS = st.sampled_from(
    [
        *"cursor vscode claude-desktop claude-code CURSOR /etc /dev/null x user project __proto__ ~".split(),
        *"--name --scope --workspace --dry-run --json --http -- - -x --name=é".split(),
        *(str(EXAMPLE), "", "a\nb", "https://pi.local/mcp", "HTTP://[::1]:9/mcp", "--token-file"),
    ]
)


@settings(IN_A_FIXTURE, max_examples=40)
@given(verb=st.sampled_from(["install", "uninstall"]), words=st.lists(WORDS, max_size=6))
@example(verb="uninstall", words=["claude-code", "https://pi.local/mcp"]).via("was a traceback (KeyError)")
def test_any_command_line_is_an_answer_or_one_line(install: Installer, verb: str, words: list[str]) -> None:
    """Whatever words follow install or uninstall (claude off PATH): exit 0, or 1 or 2 with one line on
    stderr; never an exception out of main."""
    done = install(*words, verb=verb, PATH="")
    assert done.code in (0, 1, 2), done
    lines = {0: 0, 1: 1, 2: 2 if done.err.startswith("usage: ") else 1}[done.code]  # argparse's two lines
    assert done.err.count("\n") == lines or "claude is not on PATH" in done.err, done


# --- the command: whatever is running now ------------------------------------------


def run_as(monkeypatch, argv0: str, spec_name: str | None = None) -> None:
    """sys.argv[0] and __main__'s spec as when this program runs that way."""
    spec = SimpleNamespace(name=spec_name) if spec_name else None
    monkeypatch.setitem(sys.modules, "__main__", SimpleNamespace(__spec__=spec))
    monkeypatch.setattr(sys, "argv", [argv0])


def ways_of_running(folder: Path) -> dict[str, tuple[str, str | None, list[str]]]:
    """Each way this program runs: sys.argv[0], __main__'s spec name, and what launch_command() says."""
    pyz = folder / "robot-md-mcp-0.1.0-cp311-manylinux_x86_64.pyz"
    with zipfile.ZipFile(pyz, "w") as z:
        z.writestr("__main__.py", "")
    renamed, script, exe = (
        folder / "robot-md-mcp",
        folder / "bin" / "robot-md-mcp",
        folder / "S" / "robot-md-mcp.exe",
    )
    renamed.write_bytes(pyz.read_bytes())  # a zipapp without its extension
    script.parent.mkdir()
    script.write_text("#!/usr/bin/python3\nfrom robot_md_mcp import main\n")  # a console script
    exe.parent.mkdir()
    exe.write_bytes(b"MZ" + pyz.read_bytes())  # pip's Windows launchers carry a zip too
    python_m = "/site-packages/robot_md_mcp/__main__.py"
    return {
        "pyz": (str(pyz), None, [sys.executable, str(pyz)]),
        "zipapp without extension": (str(renamed), None, [sys.executable, str(renamed)]),
        "module file": (MODULE, None, [sys.executable, MODULE]),
        "console script": (str(script), None, [str(script)]),
        "windows launcher": (str(exe), None, [str(exe)]),
        "its .exe stripped from argv[0]": (str(exe.with_suffix("")), None, [str(exe)]),
        "python -m": (python_m, "robot_md_mcp.__main__", [sys.executable, "-m", "robot_md_mcp"]),
        "python -c": ("-c", None, [sys.executable, os.path.abspath(rmm.__file__)]),
    }


def test_an_entry_any_way_of_running_wrote_is_ours_to_any_other(tmp_path: Path, monkeypatch) -> None:
    """Each way of running is launched as launch_command() says (a relative path made absolute); the entry
    each way writes is ours to a copy running any way (and install replaces or removes what `_ours` takes:
    test_only_an_entry_that_runs_this_program_is_replaced_or_removed)."""
    every = list(ways_of_running(tmp_path).values())
    for argv0, spec, expected in every:
        run_as(monkeypatch, argv0, spec)
        assert rmm.launch_command() == expected, argv0
    monkeypatch.chdir(tmp_path)
    run_as(monkeypatch, every[0][0].rsplit("/", 1)[1])
    assert rmm.launch_command() == every[0][2]
    for runs, runs_spec, _ in every:
        run_as(monkeypatch, runs, runs_spec)
        for *_, wrote in every:
            assert rmm._ours({"command": wrote[0], "args": [*wrote[1:], str(EXAMPLE)]}), (runs, wrote)


@pytest.mark.process
@pytest.mark.parametrize("started", ["zipapp", "python -m"])
def test_a_real_launcher_installs_itself(tmp_path: Path, started: str) -> None:
    """A real zipapp (`python robot-md-mcp.pyz`) and `python -m robot_md_mcp` from a checkout write the
    command that starts them."""
    if started == "zipapp":
        app = tmp_path / "app"
        app.mkdir()
        (app / "robot_md_mcp.py").write_bytes(Path(MODULE).read_bytes())
        (app / "__main__.py").write_text(  # the schema from the checkout: a bare zipapp cannot read its own
            "import pathlib, robot_md_mcp\n"
            f"robot_md_mcp.SCHEMA_PATH = pathlib.Path({str(ROOT / 'schema.json')!r})\n"
            "raise SystemExit(robot_md_mcp.main())\n"
        )
        zipapp.create_archive(app, tmp_path / "robot-md-mcp.pyz")
    python_args, expected = {
        "zipapp": (["robot-md-mcp.pyz"], [sys.executable, str(tmp_path / "robot-md-mcp.pyz")]),
        "python -m": (["-m", "robot_md_mcp"], [sys.executable, MODULE]),
    }[started]
    args = ["install", "claude-code", str(EXAMPLE), "--dry-run"]
    done = run(*args, command=[sys.executable, *python_args], cwd=tmp_path if started == "zipapp" else ROOT)
    assert done.returncode == 0, done.stderr
    assert shlex.split(done.stdout) == [*ADD, "robot-md-bob", "--", *expected, str(EXAMPLE)]


# --- claude-code -------------------------------------------------------------------


def test_claude_code_line_is_quoted_and_printed_without_claude(install: Installer, tmp_path: Path) -> None:
    """A dry run, or claude not on PATH: the line (POSIX or Windows quoting) to run where it is."""
    manifest = tmp_path / "my robot's dir" / "ROBOT.md"
    manifest.parent.mkdir()
    manifest.write_bytes(EXAMPLE.read_bytes())
    line = [*ADD, "robot-md-bob", "--", sys.executable, MODULE, str(manifest)]
    done = install("claude-code", str(manifest), "--dry-run", "--name", "bob")
    assert (done.code, done.err) == (0, "") and done.out.count("\n") == 1
    assert shlex.split(done.out) == [*ADD, "bob", *line[6:]]
    done = install("claude-code", str(manifest), "--dry-run", os_name="windows")
    assert done.out.rstrip("\n") == subprocess.list2cmdline(line)
    done = install("claude-code", str(manifest), PATH=str(tmp_path / "empty"))
    assert done.code == 0 and shlex.split(done.out) == line
    assert done.err == "robot-md-mcp: claude is not on PATH; run the line above where it is\n"
    done = install("claude-code", "--name", "bob-arm", verb="uninstall", PATH="")
    assert done.out == "claude mcp remove --scope user bob-arm\nclaude mcp remove --scope local bob-arm\n"
    assert done.err == "robot-md-mcp: claude is not on PATH; run the lines above where it is\n"


def claude_servers(state: Path) -> dict[str, Any]:
    return json.loads(state.read_text())  # type: ignore[no-any-return]


BOB, OLD, NODE = {"robot-md-bob": COMMAND}, {"robot-md-bob": ["robot-md-mcp", "/r"]}, {"robot-md-bob": ["x"]}
HTTP, LINE = {"robot-md-bob": "http://127.0.0.1:9/mcp"}, shlex.join([*ADD, "robot-md-bob", "--", *COMMAND])
ADDED = f'added "robot-md-bob" in Claude Code\'s user config: ran {LINE}'
OLD_MCP, ROVER = "/old/bin/robot-md-mcp", {"robot-md": ["robot-md-mcp", "/r/rover/ROBOT.md"]}
# Claude Code's servers per scope before, the words after `claude-code PATH` (u: uninstall), the exit code,
# what stdout (exit 0) or stderr says, and the servers after (None: as before).
# fmt: off
CLAUDE_CODE: dict[str, tuple[dict[str, Any], list[str], int, str, dict[str, Any] | None]] = {
    "added": ({}, [], 0, ADDED, {"user": BOB}),
    "again": ({"user": BOB}, [], 0, "is already in Claude Code's user config with this command", None),
    "ours updated": ({"user": OLD}, [], 0, 'updated "robot-md-bob"', {"user": BOB}),
    "robot-md, as earlier installs named it": ({"user": {"robot-md": [OLD_MCP, str(EXAMPLE)]}}, [], 0,
                                               'updated "robot-md"', {"user": {"robot-md": COMMAND}}),
    "robot-md serving another robot": ({"user": ROVER}, [], 0, ADDED, {"user": {**ROVER, **BOB}}),
    "someone else's": ({"user": NODE}, [], 1, "not robot-md-mcp's; left as it is (--name", None),
    "local too": ({"user": NODE}, ["--scope", "local"], 0, "local config", {"user": NODE, "local": BOB}),
    "an HTTP one": ({"user": HTTP}, [], 1, "not robot-md-mcp's", None),
    "an HTTP one, removing": ({"user": HTTP}, ["u", "--scope", "user"], 1, "not robot-md-mcp", None),
    "removed": ({"user": BOB, "local": BOB, "project": BOB}, ["u"], 0, "Claude Code's user and local config",
                {"user": {}, "local": {}, "project": BOB}),
    "not there": ({"project": BOB}, ["u"], 0, "is not in Claude Code's user or local config (", None),
    "a typo beside it": ({"user": ROVER}, ["u", "/typo/ROBOT.md"], 0, '"robot-md" serves something', None),
    "from project": ({"project": BOB}, ["u", "--scope", "project"], 0, "project config", {"project": {}}),
}
# fmt: on


OLD_COMMANDS = [  # ours, with spaces
    ["/Users/me/Library/Application Support/uv/tools/robot-md-mcp/bin/robot-md-mcp", "/r/ROBOT.md"],
    ["C:\\Program Files\\Python312\\python.exe", "-m", "robot_md_mcp", "C:\\r\\ROBOT.md"],
    [sys.executable, "/my robots/robot_md_mcp.py", "/old/ROBOT.md"],  # this very copy
]


@posix_only
@pytest.mark.parametrize("case", CLAUDE_CODE)
def test_claude_code_install_is_idempotent_and_leaves_foreign_entries(
    install: Installer, tmp_path: Path, case: str
) -> None:
    """`claude mcp add|get|remove` as Claude Code answers them (tests/support/installed.py's stand-in; a
    heavy test runs the real CLI): ours added, kept, replaced or removed; someone else's left as it is."""
    before, args, code, said, after = CLAUDE_CODE[case]
    env, state = fake_claude(tmp_path)
    state.write_text(json.dumps(before))
    verb = "uninstall" if args[:1] == ["u"] else "install"
    done = install("claude-code", str(EXAMPLE), *args[verb == "uninstall" :], verb=verb, **env)
    assert done.code == code and said in (done.err if code else done.out), done
    assert (done.err if code else done.out).count("\n") == 1 and (done.out if code else done.err) == ""
    assert claude_servers(state) == (before if after is None else after)


@posix_only
@pytest.mark.parametrize("old", OLD_COMMANDS, ids=["console script", "python -m", "this copy"])
def test_claude_code_replaces_its_own_entry_whose_command_has_spaces(
    install: Installer, tmp_path: Path, monkeypatch, old: list[str]
) -> None:
    """`claude mcp get` joins the words with spaces: a program, or a manifest, in a folder with a space in
    its name is still ours, replaced, and then the same; under robot-md (earlier installs' name) too."""
    monkeypatch.setattr(sys, "argv", ["/my robots/robot_md_mcp.py"])
    spaced = tmp_path / "my robot" / "ROBOT.md"
    spaced.parent.mkdir()
    spaced.write_bytes(EXAMPLE.read_bytes())
    env, state = fake_claude(tmp_path)
    state.write_text(json.dumps({"user": {"robot-md-bob": old}}))
    done = install("claude-code", str(spaced), PATH=env["PATH"])
    assert done.code == 0 and done.out.startswith('robot-md-mcp: updated "robot-md-bob"'), done
    new = [sys.executable, "/my robots/robot_md_mcp.py", str(spaced)]
    assert claude_servers(state) == {"user": {"robot-md-bob": new}}
    assert install("claude-code", str(spaced), PATH=env["PATH"]).out.endswith("nothing changed\n")
    state.write_text(json.dumps({"user": {"robot-md": [*old[:-1], str(spaced)]}}))  # earlier installs' name
    assert install("claude-code", str(spaced), PATH=env["PATH"]).code == 0
    assert claude_servers(state) == {"user": {"robot-md": new}}


@posix_only
def test_claude_code_failing_is_one_line(install: Installer, tmp_path: Path) -> None:
    """`claude mcp add` failing; replacing ours, after the old entry was removed; a `claude` on PATH whose
    interpreter is gone (a stale npm shim) or that is no program at all."""
    env, state = fake_claude(tmp_path, fail=3)
    done = install("claude-code", str(EXAMPLE), **env)
    assert (done.code, done.out) == (1, "") and done.err.count("\n") == 1 and not state.exists()
    assert done.err.startswith("robot-md-mcp: `claude mcp add` failed (exit 3): ")
    assert install("claude-code", str(EXAMPLE), "--dry-run", **env).out.startswith("claude mcp add")
    assert not state.exists()  # a dry run never runs claude
    state.write_text(json.dumps({"user": OLD}))
    done = install("claude-code", str(EXAMPLE), **env)
    assert done.code == 1 and done.err.endswith(
        "; the entry it replaces was removed first: it ran robot-md-mcp /r\n"
    )
    for content in ("#!/nonexistent/node\n", "\x7fELF not a program"):
        env, _ = fake_claude(tmp_path, content=content)
        for verb in ("install", "uninstall"):
            done = install("claude-code", str(EXAMPLE), verb=verb, **env)
            assert (done.code, done.out) == (1, "") and done.err.count("\n") == 1, done
            assert done.err.startswith(f"robot-md-mcp: cannot run {tmp_path / 'bin' / 'claude'}: ")


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
    not_ours = "Claude Code's user config has a \"robot-md-bob\" that is not robot-md-mcp's; left as it is"
    done = install("claude-code", str(EXAMPLE), **env)
    assert (done.code, done.out) == (1, ""), done
    assert done.err == f"robot-md-mcp: nothing installed: {not_ours} (--name picks another)\n"
    done = install("claude-code", str(EXAMPLE), verb="uninstall", **env)
    assert (
        done.code == 0
        and done.out == 'robot-md-mcp: removed "robot-md-bob" from Claude Code\'s local config\n'
    )
    assert done.err == f"robot-md-mcp: note: {not_ours}\n"
    assert claude_servers(state) == {"project_dir": str(ROOT), "user": {"robot-md-bob": foreign}, "local": {}}
    done = install("claude-code", str(EXAMPLE), verb="uninstall", **env)
    assert (done.code, done.out, done.err) == (1, "", f"robot-md-mcp: nothing removed: {not_ours}\n")
    assert claude_servers(state)["user"] == {"robot-md-bob": foreign}


@pytest.mark.heavy
@posix_only
def test_the_real_claude_code_finds_the_install_from_any_folder(tmp_path: Path) -> None:
    """The real Claude Code CLI from npm, in an empty home, offline: an entry an earlier version left in
    local scope; install from one folder; `claude mcp list` and `get` from another find it (user scope) and
    connect; a second install changes nothing; uninstall removes it and the local leftover."""
    from node22 import claude_code, node22

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
        full = {**os.environ, **env}
        return subprocess.run(
            [str(claude), *args], capture_output=True, text=True, cwd=cwd, env=full, timeout=300
        )

    def ours(cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
        return run(*args, "claude-code", str(EXAMPLE), env=env, cwd=cwd, timeout=300)

    assert claude_in(old, "mcp", "add", "robot-md-bob", "--", *COMMAND).returncode == 0  # as install once did
    done = ours(here, "install")
    assert done.returncode == 0 and 'added "robot-md-bob" in Claude Code\'s user config' in done.stdout, done
    listed = claude_in(elsewhere, "mcp", "list")
    line = next(line for line in listed.stdout.splitlines() if line.startswith("robot-md-bob:"))
    assert "Connected" in line and "Failed" not in line, listed.stdout
    got = claude_in(elsewhere, "mcp", "get", "robot-md-bob")
    assert got.returncode == 0 and "Scope: User config" in got.stdout, got.stdout
    done = ours(elsewhere, "install")
    assert done.returncode == 0 and done.stdout.endswith("with this command; nothing changed\n"), done
    gone = ours(old, "uninstall")
    assert gone.returncode == 0 and "from Claude Code's user and local config" in gone.stdout, gone
    for folder in (old, elsewhere):
        assert claude_in(folder, "mcp", "get", "robot-md-bob").returncode != 0


# --- real processes: the installed entry starts a server; what only a process shows ------------


@pytest.mark.anyio
@pytest.mark.process
async def test_installed_entry_starts_a_working_server(install: Installer, tmp_path: Path) -> None:
    """What install writes (in this process, as `python robot_md_mcp.py install` would) starts a real
    server, as the client app would start it; XDG_CONFIG_HOME wins over ~/.config. (The vscode entry is
    this one with "type": "stdio": test_fresh_install.)"""
    xdg = tmp_path / "xdg"
    done = install("claude-desktop", str(EXAMPLE), XDG_CONFIG_HOME=str(xdg))
    path = xdg / "Claude/claude_desktop_config.json"
    assert done.code == 0 and done.out.startswith(
        f'robot-md-mcp: added "robot-md-bob" to {path} (new file); '
    )
    entry = json.loads(path.read_text(encoding="utf-8"))["mcpServers"]["robot-md-bob"]
    assert entry == MCP_SERVERS and list(install.home.iterdir()) == []
    with install.capsys.disabled():  # the SDK's stdio client hands the server a real stderr
        async with launched(*entry["args"], command=[entry["command"]], cwd=tmp_path) as mcp_client:
            uris = [r.uri for r in (await mcp_client.list_resources()).resources]
    assert uris == [*(f"robot-md://bob/{v.kind}" for v in rmm.VIEWS), rmm.CARD_URI]


@pytest.mark.process
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
        done = run_command(verb, "vscode", str(EXAMPLE), "--workspace", odd, home=home)
        assert done.returncode == 0 and done.stderr == b"", done.stderr
        assert done.stdout.count(b"\n") == 1 and b"caf" in done.stdout
    manifest = Path(odd) / "ROBOT.md"
    manifest.write_bytes(EXAMPLE.read_bytes())
    for client in ("cursor", "claude-code"):
        done = run_command("install", client, str(manifest), "--dry-run", home=home, env={"PATH": ""})
        assert (done.returncode, done.stdout) == (1, b""), done.stderr
        assert done.stderr.startswith(b"robot-md-mcp: nothing installed: ") and done.stderr.count(b"\n") == 1
        assert b"is not UTF-8" in done.stderr
    assert not home.exists()


@pytest.mark.process
@posix_only
@pytest.mark.parametrize("verb", ["install", "uninstall", "render", "validate", "--help", "--version"])
def test_a_stdout_that_takes_nothing_is_one_line(tmp_path: Path, verb: str) -> None:
    """stdout on /dev/full: one line on stderr and exit 1, never a traceback or the exit's own 120 (the
    config written), on every CPython: some keep what was printed buffered to the exit."""
    need(os.path.exists("/dev/full"), "/dev/full")
    home = tmp_path / "home"
    client = ["cursor"] if verb in ("install", "uninstall") else []
    args = [] if verb.startswith("--") else [*client, str(EXAMPLE)]
    if verb == "uninstall":
        write_json(home / ".cursor" / "mcp.json", {"mcpServers": {"robot-md-bob": MCP_SERVERS}})
    with open("/dev/full", "wb") as full:
        done = run_command(verb, *args, home=home, stdout=full)
    assert done.returncode == 1 and done.stderr == b"robot-md-mcp: stopped: no space left on device\n"
    if client:
        servers = json.loads((home / ".cursor" / "mcp.json").read_text())["mcpServers"]
        assert ("robot-md-bob" in servers) == (verb == "install")


# --- install from a runner's cache ------------------------------------------------------------

REPO = "https://github.com/robot-md/robot-md-mcp"
# Each shape of PEP 610's direct_url.json, and the source install writes for it (None: it refuses).
GIT = {"vcs": "git", "commit_id": "a1b2c3"}
# fmt: off
DIRECT_URLS: dict[str, tuple[Any, str | None]] = {
    "index (no direct_url.json)": (None, None),
    "archive": ({"url": f"{REPO}/v1.tgz", "archive_info": {"hash": "sha256=ab"}}, f"{REPO}/v1.tgz"),
    "git tag": ({"url": REPO, "vcs_info": {**GIT, "requested_revision": "v0.1.0"}}, f"git+{REPO}@v0.1.0"),
    "git, no revision asked": ({"url": REPO, "vcs_info": GIT}, f"git+{REPO}@a1b2c3"),
    "git over ssh, a subdirectory": ({"url": "ssh://git@host/r.git", "vcs_info": GIT, "subdirectory": "py/p"},
                                     "git+ssh://git@host/r.git@a1b2c3#subdirectory=py/p"),
    "a folder here": ({"url": "file:///home/me/src/robot-md-mcp", "dir_info": {"editable": False}}, None),
    "a wheel here": ({"url": "file:///tmp/robot_md_mcp-0.1.0-py3-none-any.whl", "archive_info": {}}, None),
    "git in a folder here": ({"url": "file:///home/me/src/r", "vcs_info": GIT}, None),
    "mercurial": ({"url": "https://hg.example/r", "vcs_info": {**GIT, "vcs": "hg"}}, None),
    "a password": ({"url": "https://me:secret@example.org/r.tar.gz", "archive_info": {}}, None),
    "a space": ({"url": "https://example.org/a b.tar.gz", "archive_info": {}}, None),
    "an option for a revision": ({"url": REPO, "vcs_info": {"vcs": "git", "requested_revision": "-x"}}, None),
    "no url": ({"archive_info": {}}, None),
    "not an object": ([REPO], None),
}
# fmt: on


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


@settings(max_examples=60, deadline=None)
@given(
    st.fixed_dictionaries(
        {"url": WORD | st.sampled_from([REPO, "file:///x", "https://h/a.tgz", "ssh://git@h/r"])},
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
@pytest.mark.parametrize("shape", ["index (no direct_url.json)", "git tag"])  # each source: the table
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
    assert install.servers("cursor") == {"robot-md-bob": entry}
    assert rmm._ours(entry) and "already in" in install("cursor", str(EXAMPLE), PATH=path_env).out
    assert install("cursor", str(EXAMPLE), verb="uninstall").code == 0
    assert install.servers("cursor") == {}


# --- a client saving its config meanwhile ------------------------------------------------------


def saving_at(monkeypatch, steps: set[int], save) -> list[int]:
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


@settings(IN_A_FIXTURE, max_examples=30)
@given(
    steps=st.sets(st.integers(0, 14), max_size=3),
    in_place=st.booleans(),
    verb=st.sampled_from(["install", "uninstall"]),
)
@example(steps={2}, in_place=True, verb="uninstall").via("a save right after the read")
@example(steps={2}, in_place=False, verb="install").via("a save right after the read")
def test_a_concurrent_writer_at_any_step_loses_nothing(
    install: Installer, monkeypatch, steps: set[int], in_place: bool, verb: str
) -> None:
    """A client saves (read, change, write; by rename as most apps, or rewriting the file in place as some
    editors) before any of install's file steps up to the last check: every save is kept, and our change."""
    path = install.file("cursor")
    path.unlink(missing_ok=True)
    ours = {"robot-md-bob": MCP_SERVERS}
    write_json(path, {"mcpServers": {"other": {"command": "x"}, **(ours if verb == "uninstall" else {})}})

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
        result = install("cursor", str(EXAMPLE), verb=verb)
    assert result.code == 0, result.err
    config = json.loads(path.read_text())
    assert {k for k in config if k.startswith("client-")} == {f"client-{s}" for s in done}
    assert config["mcpServers"] == {"other": {"command": "x"}, **(ours if verb == "install" else {})}


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
    assert "robot-md-bob" not in install.servers("cursor")
    assert backup.read_bytes() == b"an older version" and siblings(path) == {"mcp.json", "mcp.json.bak"}


# --- bounded and linear ------------------------------------------------------------


def test_a_key_repeated_after_many_is_refused_at_once(install: Installer) -> None:
    """The repeated-key check is linear: 200,000 keys, then one again, is refused in well under a second
    of work (a check that looks back over the keys each time takes minutes)."""
    path = install.file("cursor")
    path.parent.mkdir(parents=True)
    content = (
        '{"mcpServers": {}, "many": {' + "".join(f'"k{i}": 0, ' for i in range(200_000)) + '"k0": 1}}'
    ).encode()
    path.write_bytes(content)
    started = time.monotonic()
    done = install("cursor", str(EXAMPLE))
    assert done.code == 1 and "has the key 'k0' twice in one object" in done.err
    assert time.monotonic() - started < 10 and path.read_bytes() == content


@pytest.mark.parametrize("depth", [150, 990])
@pytest.mark.parametrize("shape", ["object", "array"])
def test_a_config_nested_990_deep_is_one_line(install: Installer, depth: int, shape: str) -> None:
    """A config nested deeper than we read (past MAX_CONFIG_DEPTH; past what the JSON reader takes, from
    this test's deeper stack): one line and exit 1, never a RecursionError, the file untouched."""
    path = install.file("cursor")
    path.parent.mkdir(parents=True)
    deep = '{"a":' * depth + "1" + "}" * depth if shape == "object" else "[" * depth + "]" * depth
    text = '{"mcpServers": {}, "deep": ' + deep + "}"
    path.write_text(text, encoding="utf-8")
    for verb in ("install", "uninstall"):
        done = install("cursor", str(EXAMPLE), verb=verb)
        assert done.code == 1 and done.err.count("\n") == 1 and done.err.endswith(f"{path} {rmm.TOO_DEEP}\n")
    assert path.read_text(encoding="utf-8") == text


# --- is an entry ours: the program it launches names us ------------------------------------------
# One rule (rmm._program_run_by): the command itself, or the word right after a Python (`-m` between),
# uvx, `uv tool run` or `pipx run` (`--from`/`--spec SOURCE` between). Bridges: the marker only.


@settings(max_examples=100, deadline=None)
@given(ours=our_entries(), theirs=foreign_entries())
def test_every_launch_form_of_ours_is_ours_and_no_other_servers_entry_is(
    ours: dict[str, Any], theirs: dict[str, Any]
) -> None:
    """Theirs: every other program (one whose name only begins like ours too), and what launches nothing."""
    assert rmm._ours(ours), ours
    assert not rmm._ours(theirs), theirs


@settings(IN_A_FIXTURE, max_examples=40)
@given(
    ours_entry=st.tuples(st.just(True), our_entries()) | st.tuples(st.just(False), foreign_entries()),
    verb=st.sampled_from(["install", "uninstall"]),
)
def test_only_an_entry_that_runs_this_program_is_replaced_or_removed(
    install: Installer, ours_entry: tuple[bool, dict[str, Any]], verb: str
) -> None:
    """Someone else's server under our name is left as it is by install too (as Claude Code's is); ours
    serving several PATHs or a folder is of another kind: kept, and the robot's entry is robot-md-bob-2."""
    ours, entry = ours_entry
    path = install.file("cursor")
    shutil.rmtree(path.parent, ignore_errors=True)
    content = write_json(path, {"mcpServers": {"robot-md-bob": entry, "x": {"command": "y"}}})
    done = install("cursor", str(EXAMPLE), verb=verb)
    if ours:
        assert done.code == 0, done.err
        kept = {"robot-md-bob": {**entry, **MCP_SERVERS}} if verb == "install" else {}  # its other keys stay
        if rmm._served_kind([entry["command"], *entry["args"]]) != "robot":
            kept = {"robot-md-bob": entry, **({"robot-md-bob-2": MCP_SERVERS} if verb == "install" else {})}
        assert json.loads(path.read_text())["mcpServers"] == {**kept, "x": {"command": "y"}}
    else:
        assert done.code == 1 and done.err.count("\n") == 1
        assert "that is not robot-md-mcp's; left as it is (--name picks another)" in done.err
        assert path.read_bytes() == content and siblings(path) == {"mcp.json"}


# --- a whole class of configs ------------------------------------------------------


@settings(IN_A_FIXTURE, max_examples=25)
@given(
    other=st.dictionaries(TEXT.filter(lambda k: k != "mcpServers"), JSON_VALUE, max_size=5),
    servers=st.dictionaries(
        st.text(min_size=1).filter(lambda k: k != "robot-md-bob"), FOREIGN_ENTRY, max_size=4
    ),
    indent=st.sampled_from([2, 4, "\t"]),
)
def test_any_config_survives_install_and_uninstall_but_our_entry(
    install: Installer, other: dict, servers: dict, indent: int | str
) -> None:
    """Other keys and servers keep their order and values; control and format characters (`\u202e`) are
    written back as escapes, never raw, so nothing the user later reads in an editor is hidden by us;
    uninstall gives back the same bytes but for those escapes."""
    path = install.file("cursor")
    path.parent.mkdir(parents=True, exist_ok=True)
    text = json.dumps({**other, "mcpServers": servers}, indent=indent, ensure_ascii=False) + "\n"
    path.write_bytes(text.encode())
    assert install("cursor", str(EXAMPLE)).code == 0
    written = path.read_bytes().decode()
    assert not any(_invisible(char) for char in written)
    expected = {**other, "mcpServers": {**servers, "robot-md-bob": MCP_SERVERS}}
    assert json.loads(written, object_pairs_hook=list) == json.loads(
        json.dumps(expected), object_pairs_hook=list
    )
    assert install("cursor", str(EXAMPLE), verb="uninstall").code == 0
    assert path.read_bytes() == "".join(json.dumps(c)[1:-1] if _invisible(c) else c for c in text).encode()


def _invisible(char: str) -> bool:
    return unicodedata.category(char) in ("Cc", "Cf", "Zl", "Zp") and char not in "\n\t"


NUMBER = st.from_regex(r"-?(0|[1-9][0-9]{0,30})(\.[0-9]{1,25})?([eE][-+]?[0-9]{1,3})?", fullmatch=True)


@settings(IN_A_FIXTURE, max_examples=20)
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
