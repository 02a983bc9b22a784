"""The pyz's entry (packaging/pyz_guard.py) in process: interpreter and platform checks and their one
lines, which members a first run unpacks, the unpack folder's safety, pruning, unpacking, sys.path. No
build; the built pyz: tests/test_pyz.py (heavy)."""

from __future__ import annotations

import ast
import json
import os
import re
import shutil
import subprocess
import sys
import time
import zipfile
from pathlib import Path
from typing import Any

import pytest
from conftest import ROOT, need, posix_only
from hypothesis import given, settings
from hypothesis import strategies as st

GUARD_FILE = ROOT / "packaging" / "pyz_guard.py"
sys.path.insert(0, str(GUARD_FILE.parent))
import pyz_guard as guard  # noqa: E402

OTHER = 65534  # nobody: "another user" when the tests run as root
ROOT_USER = hasattr(os, "geteuid") and os.geteuid() == 0


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
LINUX: dict[str, Any] = dict(
    implementation="cpython", version=(3, 12, 1), sys_platform="linux", machine="x86_64"
)
LINUX |= dict(pointer_bits=64, libc=("glibc", "2.36"), os_release="", free_threaded=False)
MAC: dict[str, Any] = dict(sys_platform="darwin", libc=("", ""), os_release="14.5")
WINDOWS: dict[str, Any] = dict(sys_platform="win32", libc=("", ""))


def check(targets=UNIVERSAL, path="", **fake):
    return guard.check({**LINUX, **fake}, targets=targets, path=path)


# --- 1. the interpreter and platform -------------------------------------------------------------


def test_guard_avoids_syntax_old_pythons_lack() -> None:
    """Old interpreters must reach check() to print their one line, so the file parses there (run by
    2.7-3.9: test_pyz.py::test_old_interpreters_get_one_line, heavy): no f-strings, annotations,
    keyword-only arguments, walrus, `raise from`, `nonlocal` or star-unpacking in displays."""
    nodes = list(ast.walk(ast.parse(GUARD_FILE.read_text())))
    banned = (ast.JoinedStr, ast.AnnAssign, ast.NamedExpr, ast.Nonlocal, ast.AsyncFunctionDef)
    found = [type(n).__name__ for n in nodes if isinstance(n, banned)]
    displays = [n for n in nodes if isinstance(n, (ast.List, ast.Tuple, ast.Set))]
    found += [
        "*x in a display"
        for n in displays
        if any(isinstance(e, ast.Starred) for e in ast.iter_child_nodes(n))
    ]
    for call in (n for n in nodes if isinstance(n, ast.Call)):  # 2.7: f(a, *b), nothing after
        stars = [i for i, arg in enumerate(call.args) if isinstance(arg, ast.Starred)]
        if stars and stars != [len(call.args) - 1]:
            found.append(f"line {call.lineno}: call unpacking 2.7 cannot parse")
    found += ["{**x}" for n in nodes if isinstance(n, ast.Dict) and None in n.keys]
    found += ["raise from" for n in nodes if isinstance(n, ast.Raise) and n.cause]
    for f in (n for n in nodes if isinstance(n, ast.FunctionDef)):
        if f.args.kwonlyargs or f.returns or any(a.annotation for a in f.args.args):
            found.append(f"{f.name}: keyword-only arguments or annotations")
    assert found == []


SERVED: list[tuple[dict[str, Any], str]] = [
    ({}, "linux-x86_64"),
    (dict(machine="aarch64", version=(3, 15, 2)), "linux-aarch64"),
    (dict(MAC, machine="arm64"), "darwin-arm64"),
    (dict(MAC, machine="x86_64", os_release="10.16"), "darwin-x86_64"),  # macOS 11+ as an old SDK sees it
    (dict(WINDOWS, machine="AMD64"), "win32-amd64"),
]
PY32 = "this is a 32-bit system: install the 64-bit one (on a Raspberry Pi: Raspberry Pi OS 64-bit)"
ARMV6 = "this CPU runs only 32-bit systems, which no pyz serves: try `pipx install robot-md-mcp`"
REFUSED: dict[str, tuple[dict[str, Any], str]] = {  # what: (interpreter, a hint the line must hold)
    "macOS's /usr/bin/python3": (dict(MAC, machine="arm64", version=(3, 9, 6)), "brew install python"),
    "32-bit Pi OS": (dict(machine="armv7l", pointer_bits=32), PY32),
    "32-bit userland, 64-bit kernel": (dict(machine="aarch64", pointer_bits=32), PY32),
    "32-bit PC": (dict(machine="i686", pointer_bits=32), PY32),
    "ARMv6 (Pi Zero, Pi 1)": (dict(machine="armv6l", pointer_bits=32), ARMV6),
    "Alpine": (dict(libc=("", "")), "musl"),
    "old glibc": (dict(libc=("glibc", "2.12")), "needs glibc 2.17+"),
    "PyPy": (dict(implementation="pypy"), "pypy (not CPython)"),
    "free-threaded": (dict(free_threaded=True), "free-threaded"),
    "CPython 3.16": (dict(version=(3, 16, 0)), "3.16.0"),
    "Windows on ARM": (dict(WINDOWS, machine="ARM64"), "Microsoft Store"),
    "FreeBSD": (dict(sys_platform="freebsd14", machine="amd64"), "pipx"),
    "old macOS": (dict(sys_platform="darwin", machine="x86_64", os_release="10.9"), "needs macOS"),
    "CPython 2.7": (dict(version=(2, 7, 18), sys_platform="linux2"), "uv python install"),
}


def test_served_and_refused_interpreters() -> None:
    """Each served interpreter gets its platform key; each refused one ONE line naming the range, what
    it is and what to do. A 32-bit system (even a 64-bit Pi's kernel) is told the fix is the 64-bit
    OS, whatever python3 it has, never to install a newer python3."""
    for fake, key in SERVED:
        assert check(**fake) == (key, None), fake
    assert check(targets=SLIM) == ("linux-x86_64", None)
    for what, (fake, hint) in REFUSED.items():
        bits32 = fake.get("pointer_bits") == 32
        tries: list[tuple[dict[str, Any], str]] = [({}, "")] + [
            ({"version": v}, "/usr/bin") for v in ((3, 11, 2), (3, 9, 2)) if bits32
        ]
        for more, path in tries:
            key, message = check(path=path, **{**fake, **more})
            assert key is None and "\n" not in message, what
            assert message.startswith(f"robot-md-mcp: needs 64-bit CPython {RANGE} on Linux"), what
            assert hint in message and (not bits32 or message.endswith(" - " + hint)), (what, message)


def test_platform_keys_and_copy_names() -> None:
    """(Each key of SERVED and REFUSED: test_served_and_refused_interpreters.) CPython 2.7 says linux2."""
    assert guard.platform_key("linux2", "aarch64", 64) == "linux-aarch64"
    assert guard.copy_name("0123456789abcdef", "linux-x86_64", (3, 12, 1)) == (
        "robot-md-mcp_0123456789abcdef_linux-x86_64-cp312"
    )


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
    for path in (ROOT / "packaging" / "build_pyz.py", GUARD_FILE):
        tree = ast.parse(path.read_text())
        docstrings = {id(n.value) for n in ast.walk(tree) if isinstance(n, ast.Expr)}
        strings = [n.value for n in ast.walk(tree) if isinstance(n, ast.Constant) and id(n) not in docstrings]
        assert [t for t in strings if isinstance(t, str) and re.search(r"[23]\.\d", t)] == [], path.name
    assert guard.SUPPORTED == (10, 15)


U, ARM311 = "download robot-md-mcp.pyz (the universal file)", dict(machine="aarch64", version=(3, 11, 2))
OLD_GLIBC = "needs glibc 2.17+, this system has 2.12; try `pipx install robot-md-mcp`"
WIN313 = {"win32-amd64": {"pythons": ["3.13"]}}
SLIM_SAYS = [  # (targets, interpreter, how the line ends): the file's own CPython, or the universal file
    (SLIM, dict(version=(3, 11, 7)), f"cpython 3.11.7 on linux x86_64 - run it with python3.12, or {U}"),
    (WIN313, dict(WINDOWS, machine="AMD64"), f"run it with py -3.13, or {U}"),
    (SLIM, ARM311, f"{U}, or the slim file for CPython 3.11 on linux-aarch64"),
    (SLIM, dict(version=(2, 7, 18), sys_platform="linux2"), f"run it with python3.12, or {U}"),
    (SLIM, dict(machine="armv7l", pointer_bits=32), PY32),  # the universal file cannot help either
    (SLIM, dict(libc=("glibc", "2.12")), OLD_GLIBC),
]


@pytest.mark.parametrize(("targets", "fake", "ending"), SLIM_SAYS)
def test_slim_names_the_cpython_it_needs(targets: dict, fake: dict, ending: str) -> None:
    """Not "install CPython 3.11" to someone running 3.11: the file's own CPython, or the universal file."""
    _, message = check(targets=targets, path="/usr/bin", **fake)
    for_ = "3.12 on Linux (x86_64; glibc 2.17+)" if targets is SLIM else "3.13 on Windows (amd64)"
    assert message.startswith(f"robot-md-mcp: this file is for 64-bit CPython {for_};"), message
    assert message.endswith(ending) and "\n" not in message, message


# --- `./build.sh pyz --here`: a slim pyz for exactly the interpreters a pyz serves ---------------

INTERPRETERS = st.fixed_dictionaries(
    {
        "implementation": st.sampled_from(["cpython", "pypy", "graalpy"]),
        "version": st.tuples(st.sampled_from([2, 3, 4]), st.integers(0, 20), st.integers(0, 12)),
        "sys_platform": st.sampled_from(["linux", "linux2", "darwin", "win32", "freebsd14", "cygwin"]),
        "machine": st.sampled_from("x86_64 AMD64 aarch64 arm64 armv7l armv6l i686 riscv64".split()),
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


HERE_REFUSED: list[tuple[dict[str, Any], str]] = [
    ({"machine": "armv7l", "pointer_bits": 32}, "this is a 32-bit system: install the 64-bit one"),
    ({"libc": ("", "")}, "no pyz serves musl (Alpine)"),
    ({"version": (3, 9, 2)}, f"a pyz serves CPython {RANGE} only"),
    ({"version": (3, guard.SUPPORTED[1] + 1, 0)}, f"a pyz serves CPython {RANGE} only"),
    ({"implementation": "pypy"}, "a pyz serves CPython with the GIL only"),
]


def test_build_here_refuses_in_one_line(tmp_path: Path) -> None:
    """Each refusal names why; the real `./build.sh pyz --here`, told it runs elsewhere (PYZ_HERE_AS,
    its documented override), says it in one line, exit 2, before anything is downloaded or made."""
    for fake, why in HERE_REFUSED:
        assert why in guard.buildable_here({**LINUX, **fake})[1], fake
    need(shutil.which("bash") is not None, "bash")
    env = {**os.environ, "PYZ_HERE_AS": json.dumps(HERE_REFUSED[0][0]), "DIST": str(tmp_path / "dist")}
    command = ["bash", str(ROOT / "build.sh"), "pyz", "--here"]
    done = subprocess.run(
        command, env=env | {"PYTHON": sys.executable}, capture_output=True, text=True, timeout=60
    )
    said = done.stderr
    assert done.returncode == 2 and done.stdout == "" and said.count("\n") == 1, said
    assert said.startswith("robot-md-mcp: cannot build a pyz for ") and HERE_REFUSED[0][1] in said
    assert not (tmp_path / "dist").exists()


@pytest.mark.process  # two runs of build.sh; the default tier's: test_build_here_refuses_in_one_line
def test_build_here_is_named_in_the_help_and_the_readme() -> None:
    need(shutil.which("bash") is not None, "bash")
    done = subprocess.run(["bash", str(ROOT / "build.sh"), "--help"], capture_output=True, text=True)
    assert done.returncode == 0 and "./build.sh pyz --here" in done.stdout, done.stdout
    assert [line for line in (ROOT / "README.md").read_text().splitlines() if "./build.sh pyz --here" in line]
    wrong = subprocess.run(["bash", str(ROOT / "build.sh"), "pyz", "--there"], capture_output=True, text=True)
    assert wrong.returncode == 2 and "./build.sh pyz --here" in wrong.stderr


# --- which members a first run unpacks -----------------------------------------------------------


def test_members_of_other_platforms_stay_in_the_zip() -> None:
    dirs = guard.platform_dirs("linux-x86_64", (3, 12))
    assert dirs == ["_platform/linux-x86_64-cp312", "_platform/linux-x86_64", "_platform/cp312"]
    so = "site-packages/pydantic_core/_pydantic_core.cpython-312-x86_64-linux-gnu.so"
    pyd, libffi = "site-packages/x.cp312-win_amd64.pyd", "site-packages/cffi.libs/libffi-1234.so.8"
    only = {so: ["linux-x86_64-cp312"], pyd: ["win32-amd64-cp312"]}
    only[libffi] = ["linux-x86_64-cp311", "linux-x86_64-cp312"]
    members = {"__main__.py": False, "robot-md-mcp-pyz.json": False, "site-packages/": False, so: True}
    members |= {pyd: False, libffi: True, "site-packages/mcp/__init__.py": True}
    platform = {"linux-x86_64-cp312/x.so": True, "linux-x86_64/cryptography/_rust.abi3.so": True}
    platform |= {
        "cp312/x.py": True,
        "cp310/exceptiongroup/__init__.py": False,
        "darwin-arm64-cp312/x.so": False,
    }
    platform |= {"linux-aarch64/cryptography/_rust.abi3.so": False, "linux-x86_64-cp3120/x.so": False}
    members |= {f"site-packages/_platform/{name}": wanted for name, wanted in platform.items()}
    for member, expected in members.items():
        assert guard.wanted(member, dirs, "linux-x86_64-cp312", only) is expected, member
    assert guard.wanted(libffi, dirs, "linux-x86_64-cp310", only) is False


# --- 2. the unpack folder: owned by us, writable by no one else, no link anyone else controls -------


def _link(link: Path, target: Path) -> Path:
    """A symbolic link made by another user (nobody: needs root to give it away)."""
    need(ROOT_USER, "root (to make a link another user owns)")
    link.symlink_to(target)
    os.lchown(link, OTHER, OTHER)
    return link


CHANGED = "can be changed by other users"


def _folder(path: Path, mode: int, owner: int | None = None) -> Path:
    path.mkdir(parents=True)
    path.chmod(mode)
    if owner is not None:
        need(ROOT_USER, "root (to give a folder to another user)")
        os.chown(path, owner, owner)
    return path


@posix_only
def test_the_unpack_root_is_ours_alone(tmp_path: Path) -> None:
    """A new root is made 0700 (and the folders made for it); an existing 0755 one is fine; one that
    group or others can change, or another user owns, is refused; a world-writable folder on the way
    only if sticky (/tmp); one another user owns above it never (they could swap our folder)."""
    root = tmp_path / "a" / "b" / "shiv"
    assert guard.safe_dir(str(root), UID) == (str(root), None)
    assert (root.stat().st_mode & 0o777, root.parent.stat().st_mode & 0o777) == (0o700, 0o700)
    home = _folder(tmp_path / "home" / ".shiv", 0o755)
    assert guard.safe_dir(str(home), UID) == (str(home), None)
    for mode in (0o775, 0o757, 0o777, 0o1777):
        loose = _folder(tmp_path / f"loose{mode:o}" / ".shiv", mode)
        why = f"{loose} {CHANGED} (mode {mode:o}; `chmod go-w` it)"
        assert guard.safe_dir(str(loose), UID) == (None, why)
    sticky = _folder(tmp_path / "tmp", 0o1777)
    assert guard.safe_dir(str(sticky / "shiv-1000"), UID) == (str(sticky / "shiv-1000"), None)
    open_dir = _folder(tmp_path / "open", 0o777)
    assert guard.safe_dir(str(open_dir / "shiv"), UID) == (None, f"{open_dir} {CHANGED} (mode 777)")
    assert not (open_dir / "shiv").exists()
    theirs = _folder(tmp_path / "theirs", 0o755, OTHER)
    for root in (theirs / "shiv", theirs):
        assert guard.safe_dir(str(root), UID) == (None, f"{theirs} belongs to another user (uid {OTHER})")


@posix_only
def test_links_others_control_are_refused(tmp_path: Path) -> None:
    """The user's own link as SHIV_ROOT is followed to the real folder; a loop of our own links is named a
    loop; links root made (macOS's /tmp) are followed to the real path. The attack: another user plants
    <temp>/shiv-<uid> (or a folder above it) as a link to a folder they can change, or to one not made yet."""
    (tmp_path / "big-disk").mkdir(mode=0o700)
    (tmp_path / "mine").symlink_to(tmp_path / "big-disk")
    assert guard.unpack_root({"SHIV_ROOT": str(tmp_path / "mine")}, UID) == (str(tmp_path / "big-disk"), [])
    (tmp_path / "a").symlink_to(tmp_path / "b")
    (tmp_path / "b").symlink_to(tmp_path / "a")
    real, problem = guard.safe_dir(str(tmp_path / "a" / "shiv"), UID)
    assert real is None and "a loop" in problem and "another user" not in problem
    need(ROOT_USER, "root (to own a link as root, and give one away)")
    (tmp_path / "private").mkdir()
    (tmp_path / "tmp").symlink_to("private")
    assert guard.safe_dir(str(tmp_path / "tmp" / "shiv"), UID) == (str(tmp_path / "private" / "shiv"), None)
    (tmp_path / "theirs").mkdir(mode=0o700)
    planted = _link(tmp_path / "shiv-1000", tmp_path / "theirs")
    by_them = f"{planted} is a symbolic link another user (uid {OTHER}) made"
    assert guard.safe_dir(str(planted), UID) == (None, by_them)
    dangling = _link(tmp_path / "shiv-1001", tmp_path / "not-yet")
    assert "is a symbolic link" in guard.safe_dir(str(dangling), UID)[1]
    assert not (tmp_path / "not-yet").exists()
    above = _link(tmp_path / "home", tmp_path / "theirs")
    assert guard.safe_dir(str(above / ".shiv"), UID)[1] == by_them.replace(str(planted), str(above))
    assert not (tmp_path / "theirs" / ".shiv").exists()
    root, message = guard.unpack_root({"SHIV_ROOT": str(planted), "HOME": str(tmp_path)}, UID)
    assert (root, message) == (None, f"robot-md-mcp: cannot unpack into SHIV_ROOT: {by_them}")


@posix_only
def test_copy_made_by_someone_else_is_refused(tmp_path: Path) -> None:
    """Its name is predictable; the root is ours, but root (or a root we trusted before) could have
    made it: never import from a copy that is not ours alone."""
    copy = tmp_path / guard.copy_name("0" * 16, "linux-x86_64", (3, 12))
    refusing, state = f"robot-md-mcp: refusing {copy}", lambda path: guard.copy_state(str(path), UID)[1]
    assert guard.copy_state(str(copy), UID) == ("absent", None)
    (copy / "site-packages").mkdir(parents=True, mode=0o755)
    copy.chmod(0o700)
    assert guard.copy_state(str(copy), UID) == ("ready", None)
    (copy / "site-packages").chmod(0o775)
    why = f"{refusing}/site-packages: others can change it (mode 775): remove it"
    assert guard.copy_state(str(copy), UID) == (None, why)
    (copy / "site-packages").chmod(0o755)
    if ROOT_USER:
        os.chown(copy, OTHER, OTHER)
        assert state(copy) == f"{refusing}: another user (uid {OTHER}) made it: remove it"
    shutil.rmtree(copy)
    _link(copy, tmp_path)
    assert guard.copy_state(str(copy), UID)[1] == f"{refusing}: not a folder (a link?): remove it"


@posix_only
def test_root_candidates_in_order(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """~/.shiv, then $XDG_CACHE_HOME/shiv, then <temp>/shiv-<uid>; an unsafe one is passed over."""
    monkeypatch.setattr("tempfile.tempdir", str(tmp_path / "tmp"))
    (tmp_path / "tmp").mkdir()
    home, cache = tmp_path / "home", tmp_path / "cache"
    home.mkdir()
    env = {"HOME": str(home), "XDG_CACHE_HOME": str(cache)}
    expected = [str(home / ".shiv"), str(cache / "shiv"), str(tmp_path / "tmp" / f"shiv-{UID}")]
    assert guard.root_candidates(env, str(home), UID) == expected
    assert guard.unpack_root(env, UID) == (str(home / ".shiv"), [])
    (home / ".shiv").chmod(0o777)
    skipped = [f"{home / '.shiv'} can be changed by other users (mode 777; `chmod go-w` it)"]
    assert guard.unpack_root(env, UID) == (str(cache / "shiv"), skipped)


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
    assert root is None and message == (
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
    assert sorted(guard.prune(str(root), str(ours))) == sorted(p.name for p in gone.values())
    assert [what for what, p in gone.items() if os.path.lexists(p)] == []
    assert [what for what, p in kept.items() if not p.exists()] == [] and ours.exists()
    assert [p.name for p in root.iterdir() if ".pruning-" in p.name] == []


# --- 4. unpacking ----------------------------------------------------------------------------------


def _zip(path: Path, members: dict[str, bytes], modes: dict[str, int] | None = None) -> Path:
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as z:
        for name, data in members.items():
            info = zipfile.ZipInfo(name)
            info.external_attr = (0o100000 | (modes or {}).get(name, 0o644)) << 16
            z.writestr(info, data)
    return path


def _tree(root: Path) -> dict[str, tuple[bytes, int]]:
    files = [p for p in root.rglob("*") if p.is_file()]
    return {p.relative_to(root).as_posix(): (p.read_bytes(), p.stat().st_mode & 0o777) for p in files}


@posix_only
def test_unpack_writes_the_wanted_members_with_their_modes(tmp_path: Path) -> None:
    """What this target runs, with the modes the build recorded, into a 0700 copy; a killed run's
    <copy>.tmp-<pid> (pruned within the hour) does not hold up the next run; a copy there stays."""
    members = {f"site-packages/pkg{i % 7}/m{i}.py": os.urandom(i * 37) for i in range(200)}
    members["site-packages/pkg/_native.cpython-312-x86_64-linux-gnu.so"] = b"\x7fELF" * 100
    members["site-packages/_platform/linux-x86_64/cryptography/_rust.abi3.so"] = b"ours"
    members["site-packages/_platform/linux-aarch64/cryptography/_rust.abi3.so"] = b"not ours"
    members["__main__.py"] = b"entry"
    modes = {"site-packages/pkg/_native.cpython-312-x86_64-linux-gnu.so": 0o755}
    archive = _zip(tmp_path / "a.pyz", members, modes)
    copy, stale = tmp_path / "root" / "copy", tmp_path / "root" / "copy.tmp-99999"
    stale.mkdir(parents=True)
    (stale / "junk").write_text("half")
    assert guard.unpack(str(archive), str(copy), guard.platform_dirs("linux-x86_64", (3, 12)), "x") is True
    kept = [n for n in members if n != "__main__.py" and "aarch64" not in n]
    expected = {n: (members[n], modes.get(n, 0o644)) for n in kept}
    assert _tree(copy) == expected and copy.stat().st_mode & 0o777 == 0o700
    assert sorted(p.name for p in (tmp_path / "root").iterdir()) == ["copy", stale.name]  # no .tmp of ours
    assert guard.unpack(str(archive), str(copy), [], "x") is False  # there already: untouched


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


def _damage(archive: Path, how: str) -> None:
    """Deflate data zeroed, or both CRC-32s of the last member flipped (a bad disk, a broken download)."""
    raw = bytearray(archive.read_bytes())
    with zipfile.ZipFile(archive) as z:
        info = z.infolist()[-1]
    start = info.header_offset + 30 + len(info.filename)
    if how == "flipped bytes":
        raw[start + 100 : start + 140] = bytes(40)
    else:
        raw[info.header_offset + 14] ^= 0xFF  # the local header's CRC-32
        raw[raw.rfind(b"PK\x01\x02") + 16] ^= 0xFF  # and the central directory's
    archive.write_bytes(bytes(raw))


@posix_only
@pytest.mark.parametrize("damage", ["a file where a folder goes", "flipped bytes", "bad CRC"])
def test_unpack_failure_is_one_line_and_leaves_nothing(tmp_path: Path, damage: str) -> None:
    """A write that fails, or a member whose deflate data or checksum is wrong: one line naming the copy
    (and for a damaged file, to download it again) - no zlib traceback, no <copy>.tmp left."""
    if damage == "a file where a folder goes":
        archive = _zip(tmp_path / "bad.pyz", {"site-packages/a": b"file", "site-packages/a/b.py": b"x"})
        reason = "Not a directory|exists"
    else:
        big = os.urandom(20000).hex().encode()
        archive = _zip(tmp_path / "a.pyz", {"site-packages/ok.py": b"x = 1\n", "site-packages/big.py": big})
        _damage(archive, damage)
        reason = re.escape(f"{archive} is damaged or incomplete (") + ".*: download it again$"
    root = tmp_path / "root"
    root.mkdir()
    with pytest.raises(SystemExit) as raised:
        guard.unpack(str(archive), str(root / "copy"), [], "x")
    message = str(raised.value.code)
    assert message.startswith(f"robot-md-mcp: could not unpack to {root / 'copy'}: ") and "\n" not in message
    assert re.search(reason, message), message
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
def test_platform_directories_go_first(
    tmp_path: Path, monkeypatch, key: str, py: tuple, expected: list
) -> None:
    """The existing platform directories, most specific first, then the shared tree, ahead of the
    interpreter's own site-packages; a .pth file in a platform directory runs (pywin32's does)."""
    site = tmp_path / "site"
    for d in ("darwin-x86_64", "win32-amd64-cp313", "linux-aarch64", "cp310", "linux-x86_64"):
        (site / "_platform" / d).mkdir(parents=True)
    (site / "_platform" / "cp310" / "extra.pth").write_text("import os; os.environ['PYZ_TEST_PTH'] = 'ran'\n")
    own = str(tmp_path / "lib" / "site-packages")
    monkeypatch.setattr(sys, "path", ["/the-pyz", "/stdlib", own])
    monkeypatch.setenv("PYZ_TEST_PTH", "not run")
    assert guard.activate(str(site), guard.platform_dirs(key, py)) == [f"_platform/{d}" for d in expected]
    ours = [str(site / "_platform" / d) for d in expected]
    assert sys.path == ["/the-pyz", "/stdlib", *ours, str(site), own]
    assert (os.environ["PYZ_TEST_PTH"] == "ran") is ("cp310" in expected)


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
        nodes = list(ast.walk(ast.parse(path.read_text())))
        imported = {a.name for n in nodes if isinstance(n, ast.Import) for a in n.names}
        imported |= {n.module or "" for n in nodes if isinstance(n, ast.ImportFrom)}
        assert not [m for m in imported if m.split(".")[0] in ("shiv", "_bootstrap")], path.name
        attributes = {n.attr for n in nodes if isinstance(n, ast.Attribute)}
        assert not {"MAIN_TEMPLATE", "extract_site_packages", "bootstrap", "FileLock"} & attributes, path.name
        strings = {n.value for n in nodes if isinstance(n, ast.Constant) and isinstance(n.value, str)}
        assert path == GUARD_FILE or "shiv" not in strings  # as in [python, "-m", "shiv", ...]
    assert "shiv" not in (ROOT / "build.sh").read_text().split("TOOL_PINS=(", 1)[1].split(")", 1)[0]
