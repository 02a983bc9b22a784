"""The pyz's entry (packaging/pyz_guard.py) as a module: interpreter and platform checks and their
one-line messages, which members a first run unpacks, the unpack folder's safety rules, pruning,
unpacking and sys.path - quick unit tests, no build. The built pyz: tests/test_pyz.py (heavy)."""

from __future__ import annotations

import ast
import importlib.util
import json
import os
import shutil
import subprocess
import sys
import time
import zipfile
from pathlib import Path
from typing import Any

import pytest
from conftest import ROOT, cpython, need, posix_only
from hypothesis import given, settings
from hypothesis import strategies as st

GUARD_FILE = ROOT / "packaging" / "pyz_guard.py"
OTHER = 65534  # nobody: "another user" when the tests run as root
ROOT_USER = hasattr(os, "geteuid") and os.geteuid() == 0


def _load():
    spec = importlib.util.spec_from_file_location("pyz_guard_under_test", GUARD_FILE)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


guard = _load()
UID = os.geteuid() if hasattr(os, "geteuid") else None
PYTHONS = [f"3.{minor}" for minor in range(guard.SUPPORTED[0], guard.SUPPORTED[1] + 1)]
RANGE = f"{PYTHONS[0]}-{PYTHONS[-1]}"
# As build_pyz.guard_targets describes the universal pyz's wheels.
UNIVERSAL = {
    "darwin-arm64": {"pythons": PYTHONS, "macos": [11, 0]},
    "darwin-x86_64": {"pythons": PYTHONS, "macos": [10, 12]},
    "linux-aarch64": {"pythons": PYTHONS, "glibc": [2, 17]},
    "linux-x86_64": {"pythons": PYTHONS, "glibc": [2, 17]},
    "win32-amd64": {"pythons": PYTHONS},
}
SLIM = {"linux-x86_64": {"pythons": ["3.12"], "glibc": [2, 17]}}


def check(targets=UNIVERSAL, path="", **fake):
    this = dict(
        implementation="cpython",
        version=(3, 12, 1),
        sys_platform="linux",
        machine="x86_64",
        pointer_bits=64,
        libc=("glibc", "2.36"),
        os_release="",
        free_threaded=False,
    )
    this.update(fake)
    return guard.check(this, targets=targets, path=path)


# --- 1. the interpreter and platform -------------------------------------------------------------


@pytest.mark.parametrize("version", ["2.7", "3.6", "3.9"])
def test_guard_parses_on_old_pythons(version: str) -> None:
    """Old interpreters must reach check() to print their one line: the file parses there."""
    python = cpython(version)
    code = "import sys; compile(open(sys.argv[1]).read(), 'pyz_guard.py', 'exec')"
    done = subprocess.run([python, "-c", code, str(GUARD_FILE)], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr


def test_guard_avoids_syntax_old_pythons_lack() -> None:
    """Without the old interpreters: no f-strings, annotations, keyword-only arguments, walrus,
    `raise from`, `nonlocal` or star-unpacking in displays (CPython 2.7 rejects each)."""
    tree = ast.parse(GUARD_FILE.read_text())
    banned = (ast.JoinedStr, ast.AnnAssign, ast.NamedExpr, ast.Nonlocal, ast.AsyncFunctionDef)
    found = [type(n).__name__ for n in ast.walk(tree) if isinstance(n, banned)]
    displays = (ast.List, ast.Tuple, ast.Set)
    found += [
        "*x in a display"
        for n in ast.walk(tree)
        if isinstance(n, displays)
        for e in ast.iter_child_nodes(n)
        if isinstance(e, ast.Starred)
    ]
    for call in (n for n in ast.walk(tree) if isinstance(n, ast.Call)):  # 2.7: f(a, *b), nothing after
        stars = [i for i, arg in enumerate(call.args) if isinstance(arg, ast.Starred)]
        if stars and stars != [len(call.args) - 1]:
            found.append(f"line {call.lineno}: call unpacking 2.7 cannot parse")
    found += ["{**x}" for n in ast.walk(tree) if isinstance(n, ast.Dict) and None in n.keys]
    found += ["raise from" for n in ast.walk(tree) if isinstance(n, ast.Raise) and n.cause]
    for f in (n for n in ast.walk(tree) if isinstance(n, ast.FunctionDef)):
        if f.args.kwonlyargs or f.returns or any(a.annotation for a in f.args.args):
            found.append(f"{f.name}: keyword-only arguments or annotations")
    assert found == []


def test_supported_interpreters() -> None:
    assert check() == ("linux-x86_64", None)
    assert check(machine="aarch64", version=(3, 15, 2)) == ("linux-aarch64", None)
    mac = dict(sys_platform="darwin", libc=("", ""), os_release="14.5")
    assert check(machine="arm64", **mac) == ("darwin-arm64", None)
    assert check(machine="x86_64", **{**mac, "os_release": "10.16"})[0] == "darwin-x86_64"
    assert check(sys_platform="win32", machine="AMD64", libc=("", "")) == ("win32-amd64", None)
    assert check(targets=SLIM) == ("linux-x86_64", None)


def test_refused_interpreters_get_one_line() -> None:
    refused: dict[str, tuple[dict[str, Any], str]] = {
        "macOS's /usr/bin/python3": (
            dict(sys_platform="darwin", machine="arm64", version=(3, 9, 6), os_release="14.5"),
            "brew install python",
        ),
        "32-bit Pi OS": (dict(machine="armv7l", pointer_bits=32), "64-bit"),
        "32-bit userland, 64-bit kernel": (dict(machine="aarch64", pointer_bits=32), "64-bit"),
        "Alpine": (dict(libc=("", "")), "musl"),
        "old glibc": (dict(libc=("glibc", "2.12")), "needs glibc 2.17+"),
        "PyPy": (dict(implementation="pypy"), "pypy (not CPython)"),
        "free-threaded": (dict(free_threaded=True), "free-threaded"),
        "CPython 3.16": (dict(version=(3, 16, 0)), "3.16.0"),
        "Windows on ARM": (dict(sys_platform="win32", machine="ARM64"), "Microsoft Store"),
        "FreeBSD": (dict(sys_platform="freebsd14", machine="amd64"), "pipx"),
        "old macOS": (dict(sys_platform="darwin", machine="x86_64", os_release="10.9"), "needs macOS"),
        "CPython 2.7": (dict(version=(2, 7, 18), sys_platform="linux2"), "uv python install"),
    }
    for what, (fake, hint) in refused.items():
        key, message = check(**fake)
        assert key is None and "\n" not in message, what
        assert message.startswith(f"robot-md-mcp: needs 64-bit CPython {RANGE} on Linux"), what
        assert hint in message, (what, message)


def test_universal_names_a_cpython_on_path(tmp_path: Path) -> None:
    """A machine whose `python3` is too old often has a newer one: name it rather than say install."""
    for name in ("python3.11", "python3.13", "python3.9"):
        (tmp_path / name).write_text("#!/bin/sh\n")
        (tmp_path / name).chmod(0o755)
    (tmp_path / "python3.14").write_text("not executable")
    path = os.pathsep.join([str(tmp_path / "missing"), str(tmp_path)])
    _, message = check(version=(3, 9, 18), path=path)
    assert message.endswith(" - run it with python3.13 (it is on your PATH)")
    _, message = check(version=(3, 9, 18), path=str(tmp_path / "missing"))
    assert message.endswith(
        f" - install python3 ({RANGE}) from your distribution, or `uv python install {PYTHONS[-1]}`"
    )


def test_the_supported_range_is_named_once() -> None:
    """One constant names the CPythons served: the build's targets come from it, and no message or
    hint spells a version of its own."""
    import re

    for path in (ROOT / "packaging" / "build_pyz.py", GUARD_FILE):
        tree = ast.parse(path.read_text())
        docstrings = {id(n.value) for n in ast.walk(tree) if isinstance(n, ast.Expr)}
        strings = [n.value for n in ast.walk(tree) if isinstance(n, ast.Constant) and id(n) not in docstrings]
        assert [t for t in strings if isinstance(t, str) and re.search(r"[23]\.\d", t)] == [], path.name
    assert guard.SUPPORTED == (10, 15)


@pytest.mark.parametrize(
    ("machine", "bits", "advice"),
    [
        (
            "armv7l",
            32,
            "this is a 32-bit system: install the 64-bit one (on a Raspberry Pi: Raspberry Pi OS 64-bit)",
        ),
        (
            "aarch64",
            32,
            "this is a 32-bit system: install the 64-bit one (on a Raspberry Pi: Raspberry Pi OS 64-bit)",
        ),
        (
            "armv6l",
            32,
            "this CPU runs only 32-bit systems, which no pyz serves: try `pipx install robot-md-mcp`",
        ),
        (
            "i686",
            32,
            "this is a 32-bit system: install the 64-bit one (on a Raspberry Pi: Raspberry Pi OS 64-bit)",
        ),
    ],
)
def test_a_32_bit_system_is_told_the_fix_is_the_64_bit_os(machine: str, bits: int, advice: str) -> None:
    """32-bit Pi OS (even on a 64-bit Pi, whose kernel says aarch64) cannot load 64-bit extensions: a
    newer python3 would not help, so the line does not say to install one."""
    for version in ((3, 11, 2), (3, 9, 2)):
        key, message = check(machine=machine, pointer_bits=bits, version=version, path="/usr/bin")
        assert key is None and message.endswith(" - " + advice), message
        assert "install python3" not in message


def test_slim_names_the_cpython_it_needs() -> None:
    """Not "install CPython 3.11" to someone running 3.11: the file's own CPython, or the universal file."""
    _, message = check(targets=SLIM, version=(3, 11, 7), path="/usr/bin")
    assert message.startswith(
        "robot-md-mcp: this file is for 64-bit CPython 3.12 on Linux (x86_64; glibc 2.17+);"
    )
    assert message.endswith(
        "cpython 3.11.7 on linux x86_64 - run it with python3.12,"
        " or download robot-md-mcp.pyz (the universal file)"
    )
    windows = {"win32-amd64": {"pythons": ["3.13"]}}
    _, message = check(targets=windows, sys_platform="win32", machine="AMD64", libc=("", ""))
    assert message.endswith("run it with py -3.13, or download robot-md-mcp.pyz (the universal file)")
    _, message = check(targets=SLIM, machine="aarch64", version=(3, 11, 2))
    assert message.endswith(
        "download robot-md-mcp.pyz (the universal file), or the slim file for CPython 3.11 on linux-aarch64"
    )
    _, message = check(targets=SLIM, version=(2, 7, 18), sys_platform="linux2")
    assert "run it with python3.12" in message
    _, message = check(targets=SLIM, machine="armv7l", pointer_bits=32)
    assert "64-bit" in message and "universal" not in message  # the universal file cannot help either
    _, message = check(targets=SLIM, libc=("glibc", "2.12"))
    assert message.endswith("needs glibc 2.17+, this system has 2.12; try `pipx install robot-md-mcp`")


def test_platform_keys() -> None:
    assert guard.platform_key("darwin", "arm64", 64) == "darwin-arm64"
    assert guard.platform_key("darwin", "x86_64", 64) == "darwin-x86_64"
    assert guard.platform_key("win32", "AMD64", 64) == "win32-amd64"
    assert guard.platform_key("linux", "x86_64", 64) == "linux-x86_64"
    assert guard.platform_key("linux2", "aarch64", 64) == "linux-aarch64"
    assert guard.platform_key("linux", "armv7l", 32) is None
    assert guard.platform_key("linux", "aarch64", 32) is None
    assert guard.platform_key("win32", "ARM64", 64) is None
    assert guard.copy_name("0123456789abcdef", "linux-x86_64", (3, 12, 1)) == (
        "robot-md-mcp_0123456789abcdef_linux-x86_64-cp312"
    )


# --- `./build.sh pyz --here`: a slim pyz for exactly the interpreters a pyz serves ---------------

INTERPRETERS = st.fixed_dictionaries(
    {
        "implementation": st.sampled_from(["cpython", "pypy", "graalpy"]),
        "version": st.tuples(st.sampled_from([2, 3, 4]), st.integers(0, 20), st.integers(0, 12)),
        "sys_platform": st.sampled_from(["linux", "linux2", "darwin", "win32", "freebsd14", "cygwin"]),
        "machine": st.sampled_from(
            ["x86_64", "AMD64", "aarch64", "arm64", "armv7l", "armv6l", "i686", "riscv64"]
        ),
        "pointer_bits": st.sampled_from([32, 64]),
        "libc": st.sampled_from([("glibc", "2.36"), ("", ""), ("musl", "1.2")]),
        "os_release": st.just("14.0"),
        "free_threaded": st.booleans(),
    }
)


@settings(max_examples=300, deadline=None)
@given(INTERPRETERS)
def test_here_builds_exactly_where_the_universal_pyz_serves(this: dict[str, Any]) -> None:
    """`pyz --here` builds for an interpreter if and only if the universal file serves it, and then
    for that target; otherwise one line naming the interpreter and what to do instead."""
    this["libc"] = this["libc"] if this["sys_platform"].startswith("linux") else ("", "")
    served, _ = guard.check(this, targets=UNIVERSAL, path="")
    name, problem = guard.buildable_here(this)
    if served:
        assert (name, problem) == (guard.target_name(served, this["version"]), None)
    else:
        assert name is None and problem and "\n" not in problem, problem
        assert problem.startswith("robot-md-mcp: cannot build a pyz for ")
        assert f"{this['machine']} - " in problem and ".".join(map(str, this["version"])) in problem


@pytest.mark.parametrize(
    ("fake", "why"),
    [
        ({"machine": "armv7l", "pointer_bits": 32}, "this is a 32-bit system: install the 64-bit one"),
        ({"libc": ("", "")}, "no pyz serves musl (Alpine)"),
        ({"version": (3, 9, 2)}, f"a pyz serves CPython {RANGE} only"),
        ({"version": (3, guard.SUPPORTED[1] + 1, 0)}, f"a pyz serves CPython {RANGE} only"),
        ({"implementation": "pypy"}, "a pyz serves CPython with the GIL only"),
    ],
)
def test_build_here_refuses_in_one_line(fake: dict[str, Any], why: str, tmp_path: Path) -> None:
    """The real `./build.sh pyz --here`, told it runs elsewhere (PYZ_HERE_AS, its documented override):
    one line, exit 2, before anything is downloaded or made."""
    need(shutil.which("bash") is not None, "bash")
    env = {
        **os.environ,
        "PYZ_HERE_AS": json.dumps(fake),
        "DIST": str(tmp_path / "dist"),
        "PYTHON": sys.executable,
    }
    done = subprocess.run(
        ["bash", str(ROOT / "build.sh"), "pyz", "--here"], env=env, capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 2, done.stdout + done.stderr
    assert done.stdout == "" and done.stderr.count("\n") == 1, done.stderr
    assert done.stderr.startswith("robot-md-mcp: cannot build a pyz for ") and why in done.stderr, done.stderr
    assert not (tmp_path / "dist").exists()


def test_build_here_is_named_in_the_help_and_the_readme() -> None:
    need(shutil.which("bash") is not None, "bash")
    done = subprocess.run(
        ["bash", str(ROOT / "build.sh"), "--help"], capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0 and "./build.sh pyz --here" in done.stdout, done.stdout
    assert [line for line in (ROOT / "README.md").read_text().splitlines() if "./build.sh pyz --here" in line]
    wrong = subprocess.run(["bash", str(ROOT / "build.sh"), "pyz", "--there"], capture_output=True, text=True)
    assert wrong.returncode == 2 and "./build.sh pyz --here" in wrong.stderr


# --- which members a first run unpacks -----------------------------------------------------------


def test_members_of_other_platforms_stay_in_the_zip() -> None:
    dirs = guard.platform_dirs("linux-x86_64", (3, 12))
    assert dirs == ["_platform/linux-x86_64-cp312", "_platform/linux-x86_64", "_platform/cp312"]
    only = {
        "site-packages/pydantic_core/_pydantic_core.cpython-312-x86_64-linux-gnu.so": ["linux-x86_64-cp312"],
        "site-packages/pydantic_core/_pydantic_core.cp312-win_amd64.pyd": ["win32-amd64-cp312"],
        "site-packages/cffi.libs/libffi-1234.so.8": ["linux-x86_64-cp311", "linux-x86_64-cp312"],
    }
    members = {
        "__main__.py": False,
        "robot-md-mcp-pyz.json": False,
        "site-packages/": False,
        "site-packages/mcp/__init__.py": True,
        "site-packages/pydantic_core/_pydantic_core.cpython-312-x86_64-linux-gnu.so": True,
        "site-packages/pydantic_core/_pydantic_core.cp312-win_amd64.pyd": False,
        "site-packages/cffi.libs/libffi-1234.so.8": True,
        "site-packages/_platform/linux-x86_64-cp312/x.so": True,
        "site-packages/_platform/linux-x86_64/cryptography/_rust.abi3.so": True,
        "site-packages/_platform/cp312/x.py": True,
        "site-packages/_platform/cp310/exceptiongroup/__init__.py": False,
        "site-packages/_platform/linux-aarch64/cryptography/_rust.abi3.so": False,
        "site-packages/_platform/darwin-arm64-cp312/x.so": False,
        "site-packages/_platform/linux-x86_64-cp3120/x.so": False,
    }
    for member, expected in members.items():
        assert guard.wanted(member, dirs, "linux-x86_64-cp312", only) is expected, member
    assert guard.wanted("site-packages/cffi.libs/libffi-1234.so.8", dirs, "linux-x86_64-cp310", only) is False


# --- 2. the unpack folder: owned by us, writable by no one else, no link anyone else controls -------


def _link(link: Path, target: Path) -> Path:
    """A symbolic link made by another user (nobody: needs root to give it away)."""
    need(ROOT_USER, "root (to make a link another user owns)")
    link.symlink_to(target)
    os.lchown(link, OTHER, OTHER)
    return link


@posix_only
def test_new_root_is_made_private(tmp_path: Path) -> None:
    root = tmp_path / "a" / "b" / "shiv"
    real, problem = guard.safe_dir(str(root), UID)
    assert (real, problem) == (str(root), None)
    assert (root.stat().st_mode & 0o777, root.parent.stat().st_mode & 0o777) == (0o700, 0o700)


@posix_only
def test_existing_0755_root_is_fine(tmp_path: Path) -> None:
    root = tmp_path / ".shiv"
    root.mkdir(mode=0o755)
    root.chmod(0o755)
    assert guard.safe_dir(str(root), UID) == (str(root), None)


@posix_only
def test_symlinked_root_is_refused(tmp_path: Path) -> None:
    """The attack: another user plants <temp>/shiv-<uid> as a link to a folder they can change."""
    theirs = tmp_path / "theirs"
    theirs.mkdir(mode=0o700)
    root = _link(tmp_path / "shiv-1000", theirs)
    real, problem = guard.safe_dir(str(root), UID)
    assert real is None and problem == f"{root} is a symbolic link another user (uid {OTHER}) made"
    dangling = _link(tmp_path / "shiv-1001", tmp_path / "not-yet")  # made later, by them
    real, problem = guard.safe_dir(str(dangling), UID)
    assert real is None and "is a symbolic link" in problem and not (tmp_path / "not-yet").exists()


@posix_only
def test_symlinked_component_above_the_root_is_refused(tmp_path: Path) -> None:
    (tmp_path / "real").mkdir()
    above = _link(tmp_path / "home", tmp_path / "real")
    real, problem = guard.safe_dir(str(above / ".shiv"), UID)
    assert real is None and problem == f"{above} is a symbolic link another user (uid {OTHER}) made"
    assert not (tmp_path / "real" / ".shiv").exists()


@posix_only
def test_root_owned_links_are_followed_to_the_real_path(tmp_path: Path) -> None:
    """macOS's /tmp -> private/tmp: only root can change such a link; the checked real path is used."""
    need(ROOT_USER, "root (to own a link as root)")
    (tmp_path / "private").mkdir()
    (tmp_path / "tmp").symlink_to("private")
    assert guard.safe_dir(str(tmp_path / "tmp" / "shiv"), UID) == (str(tmp_path / "private" / "shiv"), None)


@posix_only
@pytest.mark.parametrize("mode", [0o775, 0o757, 0o777, 0o1777])
def test_root_writable_by_group_or_others_is_refused(tmp_path: Path, mode: int) -> None:
    root = tmp_path / ".shiv"
    root.mkdir()
    root.chmod(mode)
    real, problem = guard.safe_dir(str(root), UID)
    assert real is None
    assert problem == f"{root} can be changed by other users (mode {mode & 0o7777:o}; `chmod go-w` it)"


@posix_only
def test_folders_above_the_root(tmp_path: Path) -> None:
    """A world-writable folder on the way is fine only if sticky (/tmp); one that another user owns
    is not (they could rename our folder away and put theirs there)."""
    sticky = tmp_path / "tmp"
    sticky.mkdir()
    sticky.chmod(0o1777)
    assert guard.safe_dir(str(sticky / "shiv-1000"), UID) == (str(sticky / "shiv-1000"), None)
    open_dir = tmp_path / "open"
    open_dir.mkdir()
    open_dir.chmod(0o777)
    real, problem = guard.safe_dir(str(open_dir / "shiv"), UID)
    assert real is None and problem == f"{open_dir} can be changed by other users (mode 777)"
    assert not (open_dir / "shiv").exists()
    if ROOT_USER:
        theirs = tmp_path / "theirs"
        theirs.mkdir(mode=0o755)
        os.chown(theirs, OTHER, OTHER)
        real, problem = guard.safe_dir(str(theirs / "shiv"), UID)
        assert real is None and problem == f"{theirs} belongs to another user (uid {OTHER})"


@posix_only
def test_root_owned_by_someone_else_is_refused(tmp_path: Path) -> None:
    need(ROOT_USER, "root (to give a folder to another user)")
    root = tmp_path / "shiv-1000"
    root.mkdir(mode=0o700)
    os.chown(root, OTHER, OTHER)
    assert guard.safe_dir(str(root), UID) == (None, f"{root} belongs to another user (uid {OTHER})")


@posix_only
def test_copy_made_by_someone_else_is_refused(tmp_path: Path) -> None:
    """Its name is predictable; the root is ours, but root (or a root we trusted before) could have
    made it: never import from a copy that is not ours alone."""
    copy = tmp_path / guard.copy_name("0" * 16, "linux-x86_64", (3, 12))
    assert guard.copy_state(str(copy), UID) == ("absent", None)
    (copy / "site-packages").mkdir(parents=True, mode=0o755)
    copy.chmod(0o700)
    assert guard.copy_state(str(copy), UID) == ("ready", None)
    (copy / "site-packages").chmod(0o775)
    state, problem = guard.copy_state(str(copy), UID)
    assert state is None and problem == (
        f"robot-md-mcp: refusing {copy / 'site-packages'}: others can change it (mode 775): remove it"
    )
    (copy / "site-packages").chmod(0o755)
    if ROOT_USER:
        os.chown(copy, OTHER, OTHER)
        state, problem = guard.copy_state(str(copy), UID)
        assert problem == f"robot-md-mcp: refusing {copy}: another user (uid {OTHER}) made it: remove it"
    shutil.rmtree(copy)
    _link(copy, tmp_path)
    assert (
        guard.copy_state(str(copy), UID)[1]
        == f"robot-md-mcp: refusing {copy}: not a folder (a link?): remove it"
    )


@posix_only
def test_shiv_root_that_is_a_symlink(tmp_path: Path) -> None:
    (tmp_path / "real").mkdir(mode=0o700)
    link = _link(tmp_path / "link", tmp_path / "real")
    root, message = guard.unpack_root({"SHIV_ROOT": str(link), "HOME": str(tmp_path)}, UID)
    assert root is None
    why = f"{link} is a symbolic link another user (uid {OTHER}) made"
    assert message == f"robot-md-mcp: cannot unpack into SHIV_ROOT: {why}"
    assert guard.unpack_root({"SHIV_ROOT": str(tmp_path / "real")}, UID) == (str(tmp_path / "real"), [])


@posix_only
def test_the_users_own_symlink_as_shiv_root_is_accepted(tmp_path: Path) -> None:
    """README: only links others control are refused. A SHIV_ROOT that is the user's own link (to a
    folder on a bigger disk, say) is followed, and the real folder it names is what gets used."""
    (tmp_path / "big-disk").mkdir(mode=0o700)
    (tmp_path / "mine").symlink_to(tmp_path / "big-disk")
    root = guard.unpack_root({"SHIV_ROOT": str(tmp_path / "mine")}, UID)
    assert root == (str(tmp_path / "big-disk"), [])


@posix_only
def test_a_loop_of_the_users_own_links_is_named_a_loop(tmp_path: Path) -> None:
    """Links only we made, in a loop: refused as a loop, never blamed on another user."""
    (tmp_path / "a").symlink_to(tmp_path / "b")
    (tmp_path / "b").symlink_to(tmp_path / "a")
    real, problem = guard.safe_dir(str(tmp_path / "a" / "shiv"), UID)
    assert real is None and problem is not None and "a loop" in problem and "another user" not in problem


@posix_only
def test_root_candidates_in_order(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """~/.shiv, then $XDG_CACHE_HOME/shiv, then <temp>/shiv-<uid>; an unsafe one is passed over."""
    monkeypatch.setattr("tempfile.tempdir", str(tmp_path / "tmp"))
    (tmp_path / "tmp").mkdir()
    home, cache = tmp_path / "home", tmp_path / "cache"
    home.mkdir()
    env = {"HOME": str(home), "XDG_CACHE_HOME": str(cache)}
    assert guard.root_candidates(env, str(home), UID) == [
        str(home / ".shiv"),
        str(cache / "shiv"),
        str(tmp_path / "tmp" / f"shiv-{UID}"),
    ]
    assert guard.unpack_root(env, UID) == (str(home / ".shiv"), [])
    (home / ".shiv").chmod(0o777)
    root, skipped = guard.unpack_root(env, UID)
    assert root == str(cache / "shiv")
    assert skipped == [f"{home / '.shiv'} can be changed by other users (mode 777; `chmod go-w` it)"]


@posix_only
def test_no_home_and_no_passwd_entry(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """HOME unset and a uid with no passwd entry (a container's --user 12345): the temp dir, and if
    that will not do either, one line naming SHIV_ROOT - never a traceback."""
    import pwd

    def no_entry(uid: int):
        raise KeyError(f"getpwuid(): uid not found: {uid}")

    monkeypatch.setattr(pwd, "getpwuid", no_entry)
    assert guard.home_dir({}) is None
    monkeypatch.setattr("tempfile.tempdir", str(tmp_path))
    assert guard.unpack_root({}, UID) == (str(tmp_path / f"shiv-{UID}"), [])
    shutil.rmtree(tmp_path / f"shiv-{UID}")
    tmp_path.chmod(0o777)  # a temp dir anyone can change, and not sticky: no safe place at all
    try:
        root, message = guard.unpack_root({}, UID)
    finally:
        tmp_path.chmod(0o755)
    assert root is None and "\n" not in message
    assert message == (
        f"robot-md-mcp: no safe folder to unpack into ({tmp_path} can be changed by other users (mode 777));"
        " set SHIV_ROOT to a folder only you can write"
    )


# --- 3. pruning other builds' copies, by age -------------------------------------------------------


def _aged(path: Path, days: float, folder: bool = True) -> Path:
    if folder:
        (path / "site-packages").mkdir(parents=True)
    else:
        path.write_text("")
    past = time.time() - days * 86400
    os.utime(path, (past, past))
    return path


@posix_only
def test_pruning_removes_only_our_copies_unused_for_a_month(tmp_path: Path) -> None:
    root = tmp_path / "root"
    root.mkdir()
    build = "robot-md-mcp_" + "a" * 16
    ours = _aged(root / f"{build}_linux-x86_64-cp312", 90)  # the running copy: never, however old
    gone = {
        "idle copy": _aged(root / f"{build}_linux-x86_64-cp311", 31),
        "idle file of a copy's name": _aged(root / f"{build}_win32-amd64-cp311", 31, folder=False),
        "killed run's unpacking": _aged(root / f"{build}_linux-x86_64-cp310.tmp-4242", 0.1),
        "half-pruned": _aged(root / f"{build}_linux-x86_64-cp313.pruning-17", 0),
    }
    kept = {
        "recent copy": _aged(root / ("robot-md-mcp_" + "b" * 16 + "_linux-aarch64-cp313"), 29),
        "unpacking now": _aged(root / f"{build}_linux-x86_64-cp314.tmp-4243", 0.01),
        "other program": _aged(root / ("something_" + "e" * 16 + "_linux-x86_64-cp312"), 365),
        "shiv's own naming": _aged(root / ("robot-md-mcp.pyz_" + "1" * 64), 365),
    }
    removed = guard.prune(str(root), str(ours))
    assert sorted(removed) == sorted(p.name for p in gone.values())
    assert [what for what, p in gone.items() if os.path.lexists(p)] == []
    assert [what for what, p in kept.items() if not p.exists()] == [] and ours.exists()
    assert sorted(p.name for p in root.iterdir() if ".pruning-" in p.name) == []


# --- 4. unpacking ----------------------------------------------------------------------------------


def _zip(path: Path, members: dict[str, bytes], modes: dict[str, int] | None = None) -> Path:
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as z:
        for name, data in members.items():
            info = zipfile.ZipInfo(name)
            info.external_attr = (0o100000 | (modes or {}).get(name, 0o644)) << 16
            z.writestr(info, data)
    return path


def _tree(root: Path) -> dict[str, tuple[bytes, int]]:
    return {
        p.relative_to(root).as_posix(): (p.read_bytes(), p.stat().st_mode & 0o777)
        for p in root.rglob("*")
        if p.is_file()
    }


@posix_only
def test_unpack_writes_the_wanted_members_with_their_modes(tmp_path: Path) -> None:
    members = {f"site-packages/pkg{i % 7}/m{i}.py": os.urandom(i * 37) for i in range(200)}
    members["site-packages/pkg/_native.cpython-312-x86_64-linux-gnu.so"] = b"\x7fELF" * 100
    members["site-packages/_platform/linux-x86_64/cryptography/_rust.abi3.so"] = b"ours"
    members["site-packages/_platform/linux-aarch64/cryptography/_rust.abi3.so"] = b"not ours"
    members["__main__.py"] = b"entry"
    modes = {"site-packages/pkg/_native.cpython-312-x86_64-linux-gnu.so": 0o755}
    archive = _zip(tmp_path / "a.pyz", members, modes)
    copy = tmp_path / "root" / "copy"
    (tmp_path / "root").mkdir()
    assert guard.unpack(str(archive), str(copy), guard.platform_dirs("linux-x86_64", (3, 12)), "x") is True
    expected = {
        n: (d, modes.get(n, 0o644)) for n, d in members.items() if n != "__main__.py" and "aarch64" not in n
    }
    assert _tree(copy) == expected
    assert copy.stat().st_mode & 0o777 == 0o700
    assert sorted(p.name for p in (tmp_path / "root").iterdir()) == ["copy"]  # no .tmp left
    assert guard.unpack(str(archive), str(copy), [], "x") is False  # there already: untouched


@posix_only
def test_a_killed_runs_leftovers_do_not_block_the_next_run(tmp_path: Path) -> None:
    """A first run killed mid-unpack leaves <copy>.tmp-<its pid> (pruned within the hour); the next
    run unpacks into its own and is not held up by it."""
    archive = _zip(tmp_path / "a.pyz", {"site-packages/m.py": b"x = 1\n"})
    copy = tmp_path / "root" / "copy"
    stale = tmp_path / "root" / "copy.tmp-99999"
    stale.mkdir(parents=True)
    (stale / "junk").write_text("half")
    assert guard.unpack(str(archive), str(copy), [], "x") is True
    assert _tree(copy) == {"site-packages/m.py": (b"x = 1\n", 0o644)}


# Another run (another process: its own .tmp-<pid>) unpacking the same copy, start to finish.
OTHER_RUN = (
    "import sys; sys.path.insert(0, sys.argv[1]); import pyz_guard;"
    " print(pyz_guard.unpack(sys.argv[2], sys.argv[3], [], 'x'))"
)


@posix_only
def test_two_first_runs_at_once_end_with_one_complete_copy(tmp_path: Path, monkeypatch) -> None:
    """Claude Desktop may start two servers at once on a fresh machine. Each unpacks into its own
    .tmp; here the other run's copy lands while this one is half-way: this run drops its own .tmp and
    uses that copy. One complete copy, nothing else left, and exactly one run made it."""
    members = {f"site-packages/pkg/m{i}.py": os.urandom(64) for i in range(50)}
    archive = _zip(tmp_path / "a.pyz", members)
    root = tmp_path / "root"
    root.mkdir()
    copy = root / "copy"
    write, other = guard._write_member, list[str]()

    def racing(opened: zipfile.ZipFile, into: str, info: zipfile.ZipInfo) -> None:
        if len(other) == 0 and info.filename.endswith("/m25.py"):
            command = [sys.executable, "-c", OTHER_RUN, str(GUARD_FILE.parent), str(archive), str(copy)]
            other.append(subprocess.run(command, capture_output=True, text=True, check=True).stdout)
        write(opened, into, info)

    monkeypatch.setattr(guard, "_write_member", racing)
    assert guard.unpack(str(archive), str(copy), [], "x") is False
    assert other == ["True\n"]
    assert _tree(copy) == {name: (data, 0o644) for name, data in members.items()}
    assert sorted(p.name for p in root.iterdir()) == ["copy"]


@posix_only
def test_unpack_failure_is_one_line_and_leaves_nothing(tmp_path: Path) -> None:
    import re

    members, reason = {"site-packages/a": b"file", "site-packages/a/b.py": b"x"}, "Not a directory|exists"
    archive = _zip(tmp_path / "bad.pyz", members)
    root = tmp_path / "root"
    root.mkdir()
    with pytest.raises(SystemExit) as raised:
        guard.unpack(str(archive), str(root / "copy"), [], "x")
    message = str(raised.value.code)
    assert message.startswith(f"robot-md-mcp: could not unpack to {root / 'copy'}: ") and "\n" not in message
    assert re.search(reason, message), message
    assert sorted(p.name for p in root.iterdir()) == []


@pytest.mark.parametrize("damage", ["flipped bytes", "bad CRC"])
def test_a_damaged_pyz_is_one_line_and_leaves_no_tmp(tmp_path: Path, damage: str) -> None:
    """A member whose deflate data or checksum is wrong (a bad disk, a broken download): one line
    naming the file and saying to download it again - no zlib traceback, no <copy>.tmp left."""
    data = os.urandom(20000).hex().encode()
    archive = _zip(tmp_path / "a.pyz", {"site-packages/ok.py": b"x = 1\n", "site-packages/big.py": data})
    raw = bytearray(archive.read_bytes())
    with zipfile.ZipFile(archive) as z:
        info = z.getinfo("site-packages/big.py")
    start = info.header_offset + 30 + len(info.filename)
    if damage == "flipped bytes":
        raw[start + 100 : start + 140] = bytes(40)
    else:
        raw[info.header_offset + 14] ^= 0xFF  # the local header's CRC-32
        raw[raw.rfind(b"PK\x01\x02") + 16] ^= 0xFF  # and the central directory's (the last member's)
    archive.write_bytes(bytes(raw))
    root = tmp_path / "root"
    root.mkdir()
    with pytest.raises(SystemExit) as raised:
        guard.unpack(str(archive), str(root / "copy"), [], "x")
    message = str(raised.value.code)
    assert "\n" not in message and message.startswith(f"robot-md-mcp: could not unpack to {root / 'copy'}: ")
    assert message.endswith(": download it again") and f"{archive} is damaged or incomplete (" in message
    assert sorted(p.name for p in root.iterdir()) == []


# --- 5. sys.path ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("key", "py", "expected"),
    [
        ("darwin-x86_64", (3, 12), ["darwin-x86_64"]),
        ("darwin-arm64", (3, 12), []),
        ("win32-amd64", (3, 13), ["win32-amd64-cp313"]),
        ("linux-aarch64", (3, 10), ["linux-aarch64", "cp310"]),
        ("linux-x86_64", (3, 11), ["linux-x86_64"]),
    ],
)
def test_platform_directories_go_first(tmp_path: Path, key: str, py: tuple, expected: list[str]) -> None:
    """The existing platform directories, most specific first, then the shared tree, ahead of the
    interpreter's own site-packages; a .pth file in a platform directory runs (pywin32's does)."""
    site = tmp_path / "site"
    for d in ("darwin-x86_64", "win32-amd64-cp313", "linux-aarch64", "cp310", "linux-x86_64"):
        (site / "_platform" / d).mkdir(parents=True)
    (site / "_platform" / "cp310" / "extra.pth").write_text("import sys; sys.pth_ran = True\n")
    fake_site_packages = tmp_path / "lib" / "site-packages"
    code = (
        f"import site, sys; sys.path.insert(0, {str(GUARD_FILE.parent)!r}); import pyz_guard;"
        " sys.path[:] = ['/the-pyz', '/stdlib', sys.argv[3]];"
        " used = pyz_guard.activate(sys.argv[1], pyz_guard.platform_dirs(sys.argv[2], eval(sys.argv[4])));"
        " print(repr((used, sys.path, getattr(sys, 'pth_ran', False))))"
    )
    out = subprocess.run(
        [sys.executable, "-S", "-c", code, str(site), key, str(fake_site_packages), repr(py)],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    used, path, pth_ran = ast.literal_eval(out)
    assert used == [f"_platform/{d}" for d in expected]
    ours = [str(site / "_platform" / d) for d in expected] + [str(site)]
    assert path == ["/the-pyz", "/stdlib", *ours, str(fake_site_packages)]
    assert pth_ran is ("cp310" in expected)


def test_entry_point_override(monkeypatch: pytest.MonkeyPatch) -> None:
    """SHIV_ENTRY_POINT (module:function) runs something else through the pyz (the benchmark's floor
    server), and child processes do not inherit it."""
    env = {"SHIV_ENTRY_POINT": "os.path:basename"}
    assert guard.entry_point(env) is os.path.basename and env == {}
    monkeypatch.setitem(sys.modules, "robot_md_mcp", type(sys)("robot_md_mcp"))
    sys.modules["robot_md_mcp"].main = main = object()  # type: ignore[attr-defined]
    assert guard.entry_point({}) is main


def test_the_pyz_is_written_by_the_build_not_shiv() -> None:
    """The build writes the zip itself (docs/packaging.md says which of shiv's conventions the pyz
    keeps, and why none of its code runs): nothing in the build or the pyz imports, patches or runs
    shiv, and build.sh installs none."""
    for path in (ROOT / "packaging" / "build_pyz.py", GUARD_FILE):
        tree = ast.parse(path.read_text())
        imported = {a.name for n in ast.walk(tree) if isinstance(n, ast.Import) for a in n.names}
        imported |= {n.module or "" for n in ast.walk(tree) if isinstance(n, ast.ImportFrom)}
        assert not [m for m in imported if m.split(".")[0] in ("shiv", "_bootstrap")], path.name
        attributes = {n.attr for n in ast.walk(tree) if isinstance(n, ast.Attribute)}
        assert not {"MAIN_TEMPLATE", "extract_site_packages", "bootstrap", "FileLock"} & attributes, path.name
        strings = {
            n.value for n in ast.walk(tree) if isinstance(n, ast.Constant) and isinstance(n.value, str)
        }
        assert path == GUARD_FILE or "shiv" not in strings  # as in [python, "-m", "shiv", ...]
    assert "shiv" not in (ROOT / "build.sh").read_text().split("TOOL_PINS=(", 1)[1].split(")", 1)[0]
