"""The pyz's entry (packaging/pyz_guard.py) as a module: interpreter and platform checks and their
one-line messages, which members a first run unpacks, the unpack folder's safety rules, pruning,
unpacking and sys.path - quick unit tests, no build. The built pyz: tests/test_pyz.py (heavy)."""

from __future__ import annotations

import ast
import importlib.util
import os
import shutil
import subprocess
import sys
import time
import zipfile
from pathlib import Path

import pytest
from conftest import ROOT, need, posix_only

GUARD_FILE = ROOT / "packaging" / "pyz_guard.py"
PYENV = Path("/root/.pyenv/versions")
OTHER = 65534  # nobody: "another user" when the tests run as root
ROOT_USER = hasattr(os, "geteuid") and os.geteuid() == 0


def _load():
    spec = importlib.util.spec_from_file_location("pyz_guard_under_test", GUARD_FILE)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


guard = _load()
UID = os.geteuid() if hasattr(os, "geteuid") else None
PYTHONS = ["3.10", "3.11", "3.12", "3.13", "3.14"]
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
    return guard.check(targets=targets, path=path, **this)


# --- 1. the interpreter and platform -------------------------------------------------------------


@pytest.mark.parametrize("version", ["2.7.18", "3.6.15", "3.9.18"])
def test_guard_parses_on_old_pythons(version: str) -> None:
    """Old interpreters must reach check() to print their one line: the file parses there."""
    python = PYENV / version / "bin" / "python"
    need(os.access(python, os.X_OK), f"CPython {version} (pyenv)")
    code = "import sys; compile(open(sys.argv[1]).read(), 'pyz_guard.py', 'exec')"
    done = subprocess.run([str(python), "-c", code, str(GUARD_FILE)], capture_output=True, text=True)
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
    assert check(machine="aarch64", version=(3, 14, 0)) == ("linux-aarch64", None)
    mac = dict(sys_platform="darwin", libc=("", ""), os_release="14.5")
    assert check(machine="arm64", **mac) == ("darwin-arm64", None)
    assert check(machine="x86_64", **{**mac, "os_release": "10.16"})[0] == "darwin-x86_64"
    assert check(sys_platform="win32", machine="AMD64", libc=("", "")) == ("win32-amd64", None)
    assert check(targets=SLIM) == ("linux-x86_64", None)


def test_refused_interpreters_get_one_line() -> None:
    refused = {
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
        "CPython 3.15": (dict(version=(3, 15, 0)), "3.15.0"),
        "Windows on ARM": (dict(sys_platform="win32", machine="ARM64"), "Microsoft Store"),
        "FreeBSD": (dict(sys_platform="freebsd14", machine="amd64"), "pipx"),
        "old macOS": (dict(sys_platform="darwin", machine="x86_64", os_release="10.9"), "needs macOS"),
        "CPython 2.7": (dict(version=(2, 7, 18), sys_platform="linux2"), "uv python install"),
    }
    for what, (fake, hint) in refused.items():
        key, message = check(**fake)
        assert key is None and "\n" not in message, what
        assert message.startswith("robot-md-mcp: needs 64-bit CPython 3.10-3.14 on Linux"), what
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
        " - install a 64-bit python3.11+ from your distribution, or `uv python install 3.12`"
    )


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
    """A symbolic link made by another user (as root: owned by nobody; otherwise ours - which is
    refused all the same: only root's links are followed)."""
    link.symlink_to(target)
    if ROOT_USER:
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
    assert real is None and problem == f"{root} is a symbolic link (set SHIV_ROOT to a real folder)"
    dangling = _link(tmp_path / "shiv-1001", tmp_path / "not-yet")  # made later, by them
    real, problem = guard.safe_dir(str(dangling), UID)
    assert real is None and "is a symbolic link" in problem and not (tmp_path / "not-yet").exists()


@posix_only
def test_symlinked_component_above_the_root_is_refused(tmp_path: Path) -> None:
    (tmp_path / "real").mkdir()
    above = _link(tmp_path / "home", tmp_path / "real")
    real, problem = guard.safe_dir(str(above / ".shiv"), UID)
    assert real is None and problem == f"{above} is a symbolic link (set SHIV_ROOT to a real folder)"
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
    assert message == (
        f"robot-md-mcp: cannot unpack into SHIV_ROOT: {link} is a symbolic link"
        " (set SHIV_ROOT to a real folder)"
    )
    assert guard.unpack_root({"SHIV_ROOT": str(tmp_path / "real")}, UID) == (str(tmp_path / "real"), [])


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


# --- 3. pruning unused copies --------------------------------------------------------------------


def _copy(
    root: Path, name: str, source: Path | None = None, age_days: float = 0, legacy: bool = False
) -> Path:
    copy = root / name
    (copy / "site-packages").mkdir(parents=True)
    if legacy:
        (copy / "site-packages" / guard.LEGACY_MARKER).write_text("")
    mark = Path(f"{copy}.in-use")
    if source is not None:
        mark.write_bytes(os.fsencode(source) + b"\n")
    past = time.time() - age_days * 86400
    for path in (copy, mark):
        if path.exists():
            os.utime(path, (past, past))
    return copy


@posix_only
def test_pruning_keeps_what_may_still_run(tmp_path: Path) -> None:
    root = tmp_path / "root"
    root.mkdir()
    pyz, other_pyz = tmp_path / "robot-md-mcp.pyz", tmp_path / "robot-md-mcp-0.0.9.pyz"
    pyz.write_text("")
    other_pyz.write_text("")
    new, old = "robot-md-mcp_" + "a" * 16, "robot-md-mcp_" + "b" * 16
    ours = root / f"{new}_linux-x86_64-cp312"
    copies = {
        "replaced": _copy(root, f"{old}_linux-x86_64-cp312", pyz),  # the same file, now a new build
        "source gone": _copy(root, f"{old}_linux-x86_64-cp311", tmp_path / "deleted.pyz"),
        "idle": _copy(root, "robot-md-mcp_" + "c" * 16 + "_linux-x86_64-cp312", other_pyz, age_days=31),
        "legacy, same name": _copy(root, "robot-md-mcp.pyz_" + "0" * 64, legacy=True),
        "half-unpacked": _copy(root, f"{old}_linux-x86_64-cp310.tmp"),
    }
    Path(f"{root}/{old}_linux-x86_64-cp310.in-use").write_bytes(os.fsencode(pyz) + b"\n")
    kept = {
        "other CPython": _copy(root, f"{new}_linux-x86_64-cp311", pyz),
        "other file": _copy(root, "robot-md-mcp_" + "d" * 16 + "_linux-x86_64-cp312", other_pyz, age_days=2),
        "legacy, other name": _copy(root, "robot-md-mcp-0.0.9.pyz_" + "3" * 64, legacy=True, age_days=2),
        "not ours": _copy(root, "robot-md-mcp.pyz_" + "1" * 64),  # no marker
        "in use": _copy(root, f"{old}_linux-aarch64-cp312", pyz),
        "other program": _copy(root, "something_" + "e" * 16 + "_linux-x86_64-cp312", pyz),
    }
    holder = subprocess.Popen(  # a concurrent process still using its copy
        [
            sys.executable,
            "-c",
            "import fcntl, os, sys, time; fd = os.open(sys.argv[1], os.O_RDWR);"
            " fcntl.flock(fd, fcntl.LOCK_SH); print('held', flush=True); time.sleep(60)",
            f"{kept['in use']}.in-use",
        ],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert holder.stdout.readline().strip() == "held"
        removed = guard.prune(str(root), str(ours), str(pyz))
    finally:
        holder.kill()
        holder.wait()
    assert sorted(removed) == sorted(p.name.removesuffix(".tmp") for p in copies.values())
    assert sorted(p.name for p in root.iterdir() if p.name.startswith(tuple(removed))) == []
    assert [what for what, p in kept.items() if not p.exists()] == []


@posix_only
def test_hold_records_the_pyz_and_waits_out_a_pruner(tmp_path: Path) -> None:
    copy = tmp_path / "robot-md-mcp_0000000000000000_linux-x86_64-cp312"
    guard.hold(str(copy), "/somewhere/robot-md-mcp.pyz")
    try:
        assert Path(f"{copy}.in-use").read_bytes() == b"/somewhere/robot-md-mcp.pyz\n"
        assert guard._claim(f"{copy}.in-use") is None  # held: no pruner can take it
    finally:
        os.close(guard._held.pop())
    fd = guard._claim(f"{copy}.in-use")
    assert fd is not None
    os.close(fd)


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
    assert sorted(p.name for p in (tmp_path / "root").iterdir()) == ["copy", "copy.lock"]  # no .tmp left
    assert guard.unpack(str(archive), str(copy), [], "x") is False  # there already: untouched


@posix_only
def test_unpack_clears_a_killed_runs_leftovers(tmp_path: Path) -> None:
    archive = _zip(tmp_path / "a.pyz", {"site-packages/m.py": b"x = 1\n"})
    copy = tmp_path / "root" / "copy"
    stale = tmp_path / "root" / "copy.tmp"
    stale.mkdir(parents=True)
    (stale / "junk").write_text("half")
    guard.unpack(str(archive), str(copy), [], "x")
    assert _tree(copy) == {"site-packages/m.py": (b"x = 1\n", 0o644)}
    assert not stale.exists()


@posix_only
@pytest.mark.parametrize(
    ("members", "reason"),
    [
        ({"site-packages/ok.py": b"", "site-packages/../../evil.py": b"x"}, "names a place outside"),
        # a file and a folder of one name: the error depends on which thread comes first
        (
            {"site-packages/a": b"file", "site-packages/a/b.py": b"x"},
            "Not a directory|Is a directory|File exists",
        ),
    ],
)
def test_unpack_failure_is_one_line_and_leaves_nothing(tmp_path: Path, members: dict, reason: str) -> None:
    import re

    archive = _zip(tmp_path / "bad.pyz", members)
    root = tmp_path / "root"
    root.mkdir()
    with pytest.raises(SystemExit) as raised:
        guard.unpack(str(archive), str(root / "copy"), [], "x")
    message = str(raised.value.code)
    assert message.startswith(f"robot-md-mcp: could not unpack to {root / 'copy'}: ") and "\n" not in message
    assert re.search(reason, message), message
    assert sorted(p.name for p in root.iterdir()) == ["copy.lock"]
    assert not (tmp_path / "evil.py").exists()


@posix_only
def test_slim_pyz_on_a_python_without_lzma_says_so(tmp_path: Path, monkeypatch) -> None:
    """A slim pyz stores compiled extensions with LZMA; a Python built without it gets one line
    pointing at the universal file, and nothing is left behind."""
    archive = tmp_path / "slim.pyz"
    with zipfile.ZipFile(archive, "w") as z:
        z.writestr("site-packages/m.py", b"x = 1\n", zipfile.ZIP_DEFLATED)
        z.writestr("site-packages/_native.so", b"\x7fELF" * 100, zipfile.ZIP_LZMA)
    root = tmp_path / "root"
    root.mkdir()
    monkeypatch.setitem(sys.modules, "lzma", None)  # what `import lzma` sees where it was not built
    with pytest.raises(SystemExit) as raised:
        guard.unpack(str(archive), str(root / "copy"), [], "x")
    assert str(raised.value.code) == (
        f"robot-md-mcp: could not unpack to {root / 'copy'}: this Python was built without the lzma"
        " module, which this slim file needs: download robot-md-mcp.pyz (the universal file), or use a"
        " Python built with xz"
    )
    assert sorted(p.name for p in root.iterdir()) == ["copy.lock"]
    monkeypatch.delitem(sys.modules, "lzma")
    assert guard.unpack(str(archive), str(root / "copy"), [], "x") is True
    assert (root / "copy" / "site-packages" / "_native.so").read_bytes() == b"\x7fELF" * 100


def test_unpack_threads() -> None:
    assert [guard.unpack_threads(n) for n in (None, 1, 2, 4, 64)] == [2, 2, 2, 4, 6]


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
    sys.modules["robot_md_mcp"].main = main = object()
    assert guard.entry_point({}) is main


def test_build_uses_only_shivs_command_line() -> None:
    """Issue #11: shiv builds the zip through its documented command line; nothing imports or
    patches its modules (shiv.builder.MAIN_TEMPLATE, _bootstrap), in the build or in the pyz."""
    for path in (ROOT / "packaging" / "build_pyz.py", GUARD_FILE):
        tree = ast.parse(path.read_text())
        imported = {a.name for n in ast.walk(tree) if isinstance(n, ast.Import) for a in n.names}
        imported |= {n.module or "" for n in ast.walk(tree) if isinstance(n, ast.ImportFrom)}
        assert not [m for m in imported if m.split(".")[0] in ("shiv", "_bootstrap")], path.name
        attributes = {n.attr for n in ast.walk(tree) if isinstance(n, ast.Attribute)}
        assert not {"MAIN_TEMPLATE", "extract_site_packages", "bootstrap", "FileLock"} & attributes, path.name
