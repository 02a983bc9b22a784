"""The zipapps as built by `./build.sh pyz` once per run, run as real processes: a full MCP session on
every CPython here, old interpreters' one line, what each platform unpacks, the unpack folder's safety
with real users, first runs that fail, are interrupted or race, sizes, checksums, reproducibility. The
entry's functions in process: tests/test_pyz_guard.py."""

from __future__ import annotations

import base64
import hashlib
import importlib.util
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import zipfile
from pathlib import Path
from typing import Any

import pytest
from conftest import EXAMPLE, ROOT, build_dist, cpython, cpythons, in_sid, need, posix_only, sid_cpythons
from serving import launched_session

sys.path.insert(0, str(ROOT / "packaging"))
import build_pyz

pytestmark = pytest.mark.heavy

SERVERS = ["3.10", "3.11", "3.12", "3.13"]  # 3.14 and 3.15: Debian sid's, test_sid_runs_*
OLD = ["2.7", "3.6", "3.7", "3.8", "3.9"]
NATIVE = (".so", ".pyd", ".dll", ".dylib")
VICTIM, ATTACKER = 12345, 65534  # a uid with no passwd entry, and nobody
HERE = f"linux-x86_64-cp3{sys.version_info[1]}"


def _load(name: str, path: Path) -> Any:
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def pyz(built_dist: Path) -> Path:
    return built_dist / "robot-md-mcp.pyz"


@pytest.fixture(scope="module")
def slim(built_dist: Path) -> Path:
    (path,) = built_dist.glob(f"robot-md-mcp-*-cp3{sys.version_info[1]}-manylinux_x86_64.pyz")
    return path


@pytest.fixture(scope="module")
def guard(pyz: Path):
    """The pyz's __main__.py (the entry, TARGETS and BUILD_ID filled in) as an importable module."""
    path = pyz.parent / "guard_from_pyz.py"
    path.write_bytes(zipfile.ZipFile(pyz).read("__main__.py"))
    return _load("guard_from_pyz", path)


def run(python: str, pyz: Path, *args: str, env: dict | None = None) -> subprocess.CompletedProcess:
    """A pyz run to its end under `python` (the pyz is the promise here, not the module)."""
    command = [python, str(pyz), *args]
    return subprocess.run(command, capture_output=True, text=True, encoding="utf-8", timeout=300, env=env)


def _says(python: str, code: str) -> str:
    """What `python` prints for `import sys; <code>`."""
    done = subprocess.run([python, "-c", f"import sys; {code}"], capture_output=True, text=True)
    return done.stdout.strip()


def _copies(root: Path) -> list[str]:
    """Everything in root: the unpacked copies, and anything left behind."""
    return sorted(p.name for p in root.iterdir())


# --- a real session on every CPython here ------------------------------------------------------------


@pytest.mark.parametrize("version", SERVERS)
def test_full_session(version: str, pyz: Path, guard, tmp_path: Path) -> None:
    python = cpython(version)
    env = {**os.environ, "SHIV_ROOT": str(tmp_path / "shiv")}
    said = run(python, pyz, "--version", env=env)
    assert said.returncode == 0, said.stderr
    assert said.stdout.strip() == "robot-md-mcp 0.1.0 (pyz, platform linux-x86_64)"
    session = launched_session(python, pyz, EXAMPLE, env={"SHIV_ROOT": env["SHIV_ROOT"]}, cwd=tmp_path)
    assert session.startswith("ok: "), session
    (copy,) = (tmp_path / "shiv").glob("robot-md-mcp_*[0-9]")
    _check_footprint(python, copy, guard)


def _check_footprint(python: str, copy: Path, guard) -> None:
    """The copy is this build's for this CPython, holds only the compiled files this interpreter
    loads (not every target's), and LibYAML made it in (parity with the reference's error
    messages depends on it)."""
    tag = _says(python, "print('cp%d%d' % sys.version_info[:2])")
    assert copy.name == f"robot-md-mcp_{guard.BUILD_ID}_linux-x86_64-{tag}"
    native = [p.relative_to(copy).as_posix() for p in copy.rglob("*") if p.name.endswith(NATIVE)]
    foreign = [n for n in native if set(re.findall(r"(?:cpython-|cp)(3\d+)", n)) - {tag[2:]}]
    assert native and foreign == [] and not [n for n in native if n.endswith((".pyd", ".dll", ".dylib"))]
    assert not [n for n in native if "aarch64" in n or "darwin" in n or "win32" in n]
    size = sum(p.stat().st_size for p in copy.rglob("*") if p.is_file())
    assert size < 60e6, f"{size / 1e6:.0f} MB unpacked"
    site = str(copy / "site-packages")
    assert _says(python, f"sys.path.insert(0, {site!r}); import yaml; print(yaml.__with_libyaml__)") == "True"


# --- interpreters the pyz cannot serve --------------------------------------------------------------


@pytest.mark.parametrize("old", OLD)
def test_old_interpreters_get_one_line(old: str, pyz: Path, tmp_path: Path) -> None:
    python = cpython(old)
    done = run(python, pyz, str(EXAMPLE), env={**os.environ, "SHIV_ROOT": str(tmp_path)})
    assert done.returncode == 1 and done.stdout == ""
    (line,) = done.stderr.splitlines()
    version = _says(python, "print('%d.%d.%d' % sys.version_info[:3])")
    assert line.startswith("robot-md-mcp: needs 64-bit CPython 3.10-3.15 on Linux")
    assert f"this is {python} cpython {version} on linux" in line  # 2.7 says linux2
    assert re.search(
        r" - (run it with python3\.1\d \(it is on your PATH\)|install python3 \(3\.10-3\.15\))", line
    )
    assert not list(tmp_path.iterdir())  # refused before unpacking anything


# --- what is in the zip, and what each platform unpacks -----------------------------------------------


FILLED_IN = [("(?m)^TARGETS = .*$", "TARGETS = {}  # type: Dict[str, Target]")]
FILLED_IN += [('(?m)^BUILD_ID = "[0-9a-f]{16}"$', 'BUILD_ID = "0" * 16')]


def test_the_entry_is_ours_and_nothing_of_shiv_runs(pyz: Path, slim: Path, guard) -> None:
    """__main__.py is pyz_guard.py with this build's targets and id; shiv's bootstrap, its
    __main__.py and environment.json are not in the zip; everything else is site-packages/; all deflated."""
    source = (ROOT / "packaging" / "pyz_guard.py").read_text()
    for path in (pyz, slim):
        assert path.read_bytes().startswith(b"#!/usr/bin/env python3\n")
        with zipfile.ZipFile(path) as z:
            names = z.namelist()
            entry = z.read("__main__.py").decode()
            # deflate: every Python's zipfile reads it, and Python runs __main__.py from the zip itself
            assert {i.compress_type for i in z.infolist()} == {zipfile.ZIP_DEFLATED}, path.name
        assert names == sorted(names, key=lambda n: (n != "__main__.py", n))
        assert [n for n in names if not n.startswith("site-packages/")] == ["__main__.py", guard.INDEX]
        assert not [n for n in names if n.startswith("_bootstrap/") or n == "environment.json"]
        for filled, placeholder in FILLED_IN:
            entry = re.sub(filled, placeholder + "  # build_pyz.py fills this in", entry)
        assert entry == source
    assert (
        sorted(guard.TARGETS) == "darwin-arm64 darwin-x86_64 linux-aarch64 linux-x86_64 win32-amd64".split()
    )


def _record_native(wheel: Path) -> dict[str, str]:
    """{path: sha256 hex} of the native files a wheel's RECORD lists (installed at the site root)."""
    with zipfile.ZipFile(wheel) as z:
        record = next(n for n in z.namelist() if n.endswith(".dist-info/RECORD"))
        found = {}
        for line in z.read(record).decode().splitlines():
            path, digest, _ = line.rsplit(",", 2)
            if path.endswith(NATIVE):
                b64 = digest.split("=", 1)[1]
                found[path] = base64.urlsafe_b64decode(b64 + "=" * (-len(b64) % 4)).hex()
    return found


def test_every_target_unpacks_exactly_its_extensions(guard, pyz: Path) -> None:
    """macOS and Windows cannot run here: for each (platform, CPython) target, take what its first
    run would unpack and check it against the native files its wheels' RECORDs list, resolving
    imports as the entry orders sys.path. Each target unpacks its own native files and no others."""
    z = zipfile.ZipFile(pyz)
    only = json.loads(z.read(guard.INDEX))["only"]
    used_anywhere: set[str] = set()
    for target, wheels in build_pyz.wheels_for_all(ROOT / ".cache" / "wheels", None).items():
        plat, py = target
        version = tuple(map(int, py.split(".")))
        dirs = guard.platform_dirs(plat, version)
        names = {n for n in z.namelist() if guard.wanted(n, dirs, guard.target_name(plat, version), only)}
        assert len(wheels) == len(build_pyz.pins_for(target))
        used = _resolve_natives(z, names, [*dirs, ""], wheels, plat)
        assert {n for n in names if n.endswith(NATIVE)} == used, (target, sorted(names - used)[:5])
        used_anywhere |= used
    assert {n for n in z.namelist() if n.endswith(NATIVE)} == used_anywhere  # nothing no target loads


def _resolve_natives(
    z: zipfile.ZipFile, names: set[str], key_dirs: list[str], wheels: list, plat: str
) -> set:
    """The members that a target's sys.path resolves its wheels' native files to, each checked by digest."""
    used = set()
    for wheel in wheels:
        name = wheel.name.split("-")[0]
        for path, digest in _record_native(wheel).items():
            if name == "pywin32" and not build_pyz.keep("pywin32", path):
                continue
            top = path.split("/")[0]
            # The first directory on the target's sys.path holding the top-level name wins.
            tops = {d: f"site-packages/{d}/{top}".replace("//", "/") for d in key_dirs}
            where = next(
                d for d in key_dirs if any(n == tops[d] or n.startswith(tops[d] + "/") for n in names)
            )
            member = f"site-packages/{where}/{path}".replace("//", "/")
            assert member in names, (plat, member)
            data = z.read(member)
            if data[:4] == b"\xcf\xfa\xed\xfe" and hashlib.sha256(data).hexdigest() != digest:
                assert plat == "darwin-x86_64" and data[4:8] == b"\x07\x00\x00\x01"  # thinned universal2
            else:
                assert hashlib.sha256(data).hexdigest() == digest, (plat, member)
            used.add(member)
    return used


def test_pywin32_keeps_what_mcp_imports(pyz: Path) -> None:
    names = zipfile.ZipFile(pyz).namelist()
    win = [n for n in names if "/_platform/win32-amd64-cp312/" in n]
    modules = """win32/win32api.pyd win32/win32job.pyd win32/_win32sysloader.pyd win32/lib/win32con.py
    pywin32.pth win32/lib/pywintypes.py pywin32_system32/pywintypes312.dll win32/lib/pywin32_bootstrap.py"""
    for module in modules.split():
        assert any(n.endswith("/win32-amd64-cp312/" + module) for n in win), module
    assert not [n for n in names if n.endswith(".pth") and "/win32-amd64" not in n]
    assert len(win) < 40  # not the ~600 files of the full wheel


# --- the unpack cache ----------------------------------------------------------------------------------


def test_first_run_line_once_and_old_copies_pruned(pyz: Path, guard, tmp_path: Path) -> None:
    root = tmp_path / "shiv"
    root.mkdir(mode=0o700)
    here = guard.target_name("linux-x86_64", sys.version_info)
    unused = root / f"robot-md-mcp_{'0' * 16}_{here}"  # an older build, not run for a month
    recent = root / f"robot-md-mcp_{'1' * 16}_{here}"  # another build, run last week
    for copy, days in ((unused, 31), (recent, 7)):
        (copy / "site-packages").mkdir(parents=True)
        os.utime(copy, (time.time() - days * 86400,) * 2)
    env = {**os.environ, "SHIV_ROOT": str(root)}
    first = run(sys.executable, pyz, "--version", env=env)
    second = run(sys.executable, pyz, "--version", env=env)
    assert first.returncode == 0 and second.returncode == 0, first.stderr
    (line,) = first.stderr.splitlines()
    ours = root / f"robot-md-mcp_{guard.BUILD_ID}_{here}"
    assert line == f"robot-md-mcp: first run of this build: unpacking to {ours} (takes a few seconds, once)"
    assert second.stderr == ""
    assert _copies(root) == sorted([ours.name, recent.name])
    assert time.time() - ours.stat().st_mtime < 60  # each run marks its copy used


@pytest.mark.parametrize("stderr", ["closed", "/dev/full"])
def test_first_run_with_stderr_unusable(pyz: Path, tmp_path: Path, stderr: str) -> None:
    """The first run's notice is best effort: with stderr closed or on /dev/full the pyz unpacks and
    runs (docs/robustness.md, standard descriptors at start)."""
    env = {**os.environ, "SHIV_ROOT": str(tmp_path / "shiv")}
    command = [sys.executable, str(pyz), "--version"]
    if stderr == "closed":
        command = ["/bin/sh", "-c", 'exec 2>&- "$@"', "sh", *command]
    with open(os.devnull if stderr == "closed" else stderr, "wb") as err:
        done = subprocess.run(command, stdout=subprocess.PIPE, stderr=err, env=env, timeout=300)
    assert done.returncode == 0 and done.stdout.decode().startswith("robot-md-mcp "), done


def _as(uid: int) -> list[str]:
    need(os.geteuid() == 0, "root (to run as other users)")
    need(shutil.which("setpriv") is not None, "setpriv (to run as other users)")
    return ["setpriv", f"--reuid={uid}", f"--regid={uid}", "--clear-groups"]


@pytest.fixture
def public(pyz: Path):
    """The pyz and a manifest in a folder any user can read, a system python, and a sticky,
    world-writable temp dir (like /tmp) for other users."""
    with tempfile.TemporaryDirectory() as d:
        base = Path(d)
        base.chmod(0o755)
        for src, name in ((pyz, "robot-md-mcp.pyz"), (EXAMPLE, "ROBOT.md")):
            shutil.copy(src, base / name)
            (base / name).chmod(0o644)
        (base / "tmp").mkdir()
        (base / "tmp").chmod(0o1777)
        yield base


def _run_as(uid: int, public: Path, env: dict, *args: str) -> subprocess.CompletedProcess:
    python = "/usr/bin/python3"
    need(os.access(python, os.X_OK), "a system python3 (one other users can run)")
    argv = [*_as(uid), python, str(public / "robot-md-mcp.pyz"), *args]
    return subprocess.run(argv, capture_output=True, text=True, env=env, timeout=300)


@posix_only
def test_read_only_or_missing_home(public: Path) -> None:
    """nobody with a read-only HOME, and with none: <temp>/shiv-<uid>."""
    home = public / "home"
    home.mkdir(mode=0o555)
    base_env = {"PATH": os.environ["PATH"], "TMPDIR": str(public / "tmp")}
    for env in ({**base_env, "HOME": str(home)}, base_env):
        done = _run_as(ATTACKER, public, env, "validate", str(public / "ROBOT.md"))
        assert done.returncode == 0, done.stderr
        assert done.stderr == "" or done.stderr.startswith(
            f"robot-md-mcp: first run of this build: unpacking to {public}/tmp/shiv-{ATTACKER}/"
        )
    assert (public / "tmp" / f"shiv-{ATTACKER}").stat().st_mode & 0o777 == 0o700


@posix_only
def test_planted_temp_folder_is_refused(public: Path) -> None:
    """With no HOME the pyz uses <temp>/shiv-<uid>, a name anyone can predict. Another
    user who plants it - as a link to their folder, or as their own folder - gets one line and exit 1
    from the victim's run, and none of their code is imported."""
    tmp = public / "tmp"
    env = {"PATH": os.environ["PATH"], "TMPDIR": str(tmp)}
    plant = (
        "import os, sys; os.mkdir(sys.argv[1], 0o777); os.chmod(sys.argv[1], 0o777);"
        " os.symlink(sys.argv[1], sys.argv[2]) if sys.argv[3] == 'link' else os.mkdir(sys.argv[2], 0o777)"
    )
    planted = tmp / f"shiv-{VICTIM}"
    for how, why in (("link", "is a symbolic link"), ("folder", f"belongs to another user (uid {ATTACKER})")):
        shutil.rmtree(tmp / "theirs", ignore_errors=True)
        if planted.is_symlink():
            planted.unlink()
        elif planted.exists():
            shutil.rmtree(planted)
        argv = [*_as(ATTACKER), "/usr/bin/python3", "-c", plant, str(tmp / "theirs"), str(planted), how]
        subprocess.run(argv, check=True)
        done = _run_as(VICTIM, public, env, "--version")
        assert done.returncode == 1 and done.stdout == "", how
        assert done.stderr.startswith(f"robot-md-mcp: no safe folder to unpack into ({planted} {why}"), how
        assert done.stderr.count("\n") == 1 and "Traceback" not in done.stderr
        assert list((tmp / "theirs").iterdir()) == [] and not list(Path(planted).iterdir())


# --- first runs that fail, are interrupted, or race ------------------------------------------------------


def test_first_run_on_a_full_disk(pyz: Path, tmp_path: Path) -> None:
    """A real first run into a 20 MB tmpfs (less than this interpreter's share of the pyz: performance.md):
    one line saying why, exit 1, nothing left behind, and the next run with room works."""
    need(os.geteuid() == 0 and shutil.which("mount") is not None, "root (to mount a small tmpfs)")
    small = tmp_path / "small"
    small.mkdir()
    subprocess.run(["mount", "-t", "tmpfs", "-o", "size=20m,mode=0700", "tmpfs", str(small)], check=True)
    try:
        done = run(sys.executable, pyz, "--version", env={**os.environ, "SHIV_ROOT": str(small)})
        leftovers = _copies(small)
    finally:
        subprocess.run(["umount", str(small)], check=True)
    assert done.returncode == 1
    notice, error = done.stderr.splitlines()
    assert notice.startswith("robot-md-mcp: first run of this build: unpacking to ")
    assert error.startswith(f"robot-md-mcp: could not unpack to {small}/robot-md-mcp_")
    assert error.endswith(": No space left on device")
    assert leftovers == []
    assert run(sys.executable, pyz, "--version", env={**os.environ, "SHIV_ROOT": str(small)}).returncode == 0


@posix_only
def test_ctrl_c_while_unpacking(slim: Path, tmp_path: Path) -> None:
    """Ctrl-C during a first run's unpacking: exit 130 without a traceback; the next run unpacks anew.
    (A loaded machine may schedule us only after the unpacking is done: then the run is tried again.)"""
    env = {**os.environ, "SHIV_ROOT": str(tmp_path)}
    for _ in range(5):
        # SIGINT as a terminal's Ctrl-C finds it: a harness started in the background ignores it, and its
        # children inherit that.
        sigint = lambda: signal.signal(signal.SIGINT, signal.SIG_DFL)  # noqa: E731
        command, pipe = [sys.executable, str(slim), "--version"], subprocess.PIPE
        first = subprocess.Popen(command, stdout=pipe, stderr=pipe, env=env, text=True, preexec_fn=sigint)
        deadline = time.monotonic() + 60
        while not list(tmp_path.glob("*.tmp-*/site-packages/*")) and time.monotonic() < deadline:
            time.sleep(0.005)
        first.send_signal(signal.SIGINT)
        out, err = first.communicate(timeout=60)
        if first.returncode == 0 and list(tmp_path.glob("*/site-packages")):  # too late: it had unpacked
            shutil.rmtree(tmp_path)
            tmp_path.mkdir()
            continue
        break
    assert first.returncode == 130, err
    assert "Traceback" not in err and out == ""
    assert list(tmp_path.glob("*/site-packages")) == []  # neither a copy nor its .tmp-<pid> is left
    again = run(sys.executable, slim, "--version", env=env)
    assert again.returncode == 0, again.stderr
    assert again.stdout.strip().endswith("(pyz, platform linux-x86_64)")
    assert not list(tmp_path.glob("*.tmp-*"))


def test_simultaneous_first_runs(slim: Path, tmp_path: Path) -> None:
    """Claude Desktop may start two servers at once on a fresh machine: each unpacks into its own
    .tmp, one rename wins and the others use its copy; all serve, and one copy is left, no .tmp."""
    env = {**os.environ, "SHIV_ROOT": str(tmp_path)}
    command, pipe = [sys.executable, str(slim), "validate", str(EXAMPLE)], subprocess.PIPE
    runs = [subprocess.Popen(command, stdout=pipe, stderr=pipe, env=env) for _ in range(3)]
    results = [(p.wait(timeout=300), *p.communicate()) for p in runs]
    assert [code for code, _, _ in results] == [0, 0, 0], results
    assert len({out for _, out, _ in results}) == 1
    (copy,) = _copies(tmp_path)
    assert re.fullmatch(rf"robot-md-mcp_[0-9a-f]{{16}}_{HERE}", copy)


def test_a_truncated_pyz_says_it_is_damaged(slim: Path, tmp_path: Path) -> None:
    """A download cut short is no zip to Python, which reads it as source instead: the file's coding
    line makes that one line saying the file is damaged or incomplete (3.14+ put a `File ..., line 0`
    line before it) - not a SyntaxError about null bytes quoting binary - on every CPython 3.10+ here
    (older ones word it otherwise; the pyz serves none of them)."""
    cut = tmp_path / slim.name
    cut.write_bytes(slim.read_bytes()[: slim.stat().st_size // 2])
    supported = [p for v, p in cpythons().items() if v.startswith("3.") and int(v.split(".")[1]) >= 10]
    runs: list[list[Any]] = [[python, cut] for python in [sys.executable, *supported]]
    runs += [in_sid(f"python{v}", cut, bind=(tmp_path,)) for v in sid_cpythons()]
    said = r"SyntaxError: (encoding problem|unknown encoding): "
    said += r"robot-md-mcp\.pyz-is-damaged-or-incomplete\.download-it-again"
    for argv in runs:
        done = subprocess.run([*map(str, argv), "--version"], capture_output=True, text=True, timeout=120)
        assert done.returncode == 1 and done.stdout == "", argv
        *before, last = done.stderr.splitlines()
        assert re.fullmatch(said, last), (argv, done.stderr)
        assert before in ([], [f'  File "{cut}", line 0']), (argv, done.stderr)


# --- the build itself -------------------------------------------------------------------------------


def test_sizes_and_checksums(built_dist: Path) -> None:
    """The universal pyz ≤ 120 MB and every slim one ≤ 16 MB, bytecode included wherever the build
    had that CPython (here: each one this machine has, sid's 3.14 and 3.15 through wrappers)."""
    universal = built_dist / "robot-md-mcp.pyz"
    assert universal.stat().st_size <= 120e6
    slim = sorted(built_dist.glob("robot-md-mcp-*.pyz"))
    assert len(slim) == 30
    found = [*cpythons(), *sid_cpythons(), f"3.{sys.version_info[1]}"]
    here = {"cp" + v.replace(".", "") for v in found if v.startswith("3.") and int(v[2:]) >= 10}
    for path in slim:
        with zipfile.ZipFile(path) as z:
            has_bytecode = any(name.endswith(".pyc") for name in z.namelist())
        assert has_bytecode == any(f"-{cp}-" in path.name for cp in here), path.name
        assert path.stat().st_size <= 16e6, f"{path.name}: {path.stat().st_size / 1e6:.2f} MB"
    lines = (built_dist / "SHA256SUMS").read_text().splitlines()
    sums = {name: digest for digest, name in (line.split("  ") for line in lines)}
    assert set(sums) == {p.name for p in [universal, *slim]}
    for name, digest in sums.items():
        assert hashlib.sha256((built_dist / name).read_bytes()).hexdigest() == digest, name
    # Checked above for the CPythons here; the others' bytecode is built (and its budget kept) in CI.
    need(len(here) == 6, f"CPython 3.10-3.15 to compile bytecode with; this machine has {sorted(here)}")


def test_slim_pyz_brings_its_bytecode(slim: Path, tmp_path: Path) -> None:
    """The slim pyz for this CPython carries bytecode for what a session loads and for our own
    package, beside every source; its first run only unpacks (nothing compiled on the way) and
    imports load the shipped bytecode."""
    tag = sys.implementation.cache_tag
    with zipfile.ZipFile(slim) as z:
        names = set(z.namelist())
    shipped = {n for n in names if n.endswith(".pyc")}
    assert f"site-packages/mcp/__pycache__/__init__.{tag}.pyc" in shipped
    assert f"site-packages/robot_md_mcp/__pycache__/__init__.{tag}.pyc" in shipped
    assert all("/__pycache__/" in n and n.endswith(f".{tag}.pyc") for n in shipped)
    assert {n.replace("__pycache__/", "").replace(f".{tag}.pyc", ".py") for n in shipped} <= names
    assert "site-packages/pydantic/v1/main.py" in names  # a module no session loads: source only
    assert f"site-packages/pydantic/v1/__pycache__/main.{tag}.pyc" not in names
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    env["SHIV_ROOT"] = str(tmp_path)
    command = [sys.executable, "-v", str(slim), "validate", str(EXAMPLE)]
    done = subprocess.run(command, capture_output=True, text=True, env=env)
    assert done.returncode == 0, done.stderr[-3000:]
    assert re.search(rf"code object from '[^']*yaml/__pycache__/__init__\.{tag}\.pyc'", done.stderr)
    (copy,) = tmp_path.glob("robot-md-mcp_*[0-9]")
    unpacked = {p.relative_to(copy).as_posix() for p in copy.glob("site-packages/**/*.pyc")}
    assert unpacked == shipped  # none compiled on the way


def test_reproducible(built_dist: Path, tmp_path: Path) -> None:
    seconds = build_dist(tmp_path)  # the wheels are cached now: this is the warm build time
    print(f"warm build: {seconds:.0f} s")
    assert (tmp_path / "SHA256SUMS").read_text() == (built_dist / "SHA256SUMS").read_text()


# --- CPython 3.14 and 3.15 as Debian sid packages them ------------------------------------------------


@pytest.mark.parametrize("version", ["3.14", "3.15"])
def test_debian_sids_cpython_runs_the_pyz_and_the_wheel(
    version: str, built_dist: Path, tmp_path: Path
) -> None:
    """In Debian sid's userland: a full MCP session through the universal pyz, the slim pyz for that
    CPython, and the wheel pip-installed (on the pinned set) into a venv of that CPython."""
    (slim,) = built_dist.glob(f"robot-md-mcp-*-cp{version.replace('.', '')}-manylinux_x86_64.pyz")
    for pyz in (built_dist / "robot-md-mcp.pyz", slim):
        session = launched_session(*in_sid(f"python{version}", pyz, EXAMPLE, bind=(built_dist,)), timeout=300)
        assert session.startswith("ok: "), (pyz.name, session)
    wheels = tmp_path / "wheel"
    built = [sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "--wheel-dir", str(wheels), str(ROOT)]
    subprocess.run(built, check=True, capture_output=True, timeout=300)
    (wheel,) = wheels.glob("robot_md_mcp-*.whl")
    venv = tmp_path / "venv"
    install = (
        f"python{version} -m venv {venv} && {venv}/bin/pip install -q -c packaging/constraints.txt {wheel}"
    )
    command = in_sid("sh", "-c", install, bind=(tmp_path,))
    done = subprocess.run(command, capture_output=True, text=True, timeout=900, cwd=ROOT)
    assert done.returncode == 0, done.stderr[-3000:]
    session = launched_session(*in_sid(venv / "bin" / "robot-md-mcp", EXAMPLE, bind=(tmp_path,)), timeout=300)
    assert session.startswith("ok: "), session


# --- `./build.sh pyz --here`: just this machine's slim pyz -----------------------------------------


def test_build_here_makes_only_this_machines_slim_pyz(tmp_path: Path) -> None:
    """`./build.sh pyz --here`: one slim pyz, for this machine and the CPython that ran the build, with
    that CPython's bytecode, within the slim budget, in SHA256SUMS; a full session through it."""
    dist, minor = tmp_path / "dist", sys.version_info[1]
    env = {**os.environ, "PYTHON": sys.executable, "DIST": str(dist)}
    command = ["bash", str(ROOT / "build.sh"), "pyz", "--here"]
    done = subprocess.run(command, env=env, capture_output=True, text=True, timeout=1800)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    (built,) = dist.glob("*.pyz")
    digest = hashlib.sha256(built.read_bytes()).hexdigest()
    assert (dist / "SHA256SUMS").read_text() == f"{digest}  {built.name}\n"
    assert built.stat().st_size <= 16e6
    (guard_file := tmp_path / "guard_here.py").write_bytes(zipfile.ZipFile(built).read("__main__.py"))
    entry = _load("guard_here", guard_file)
    key, problem = entry.check(entry.describe_this_interpreter())
    assert (
        problem is None and list(entry.TARGETS) == [key] and entry.TARGETS[key]["pythons"] == [f"3.{minor}"]
    )
    assert built.name.endswith(f"-cp3{minor}-{build_pyz.PLATFORMS[key][2]}.pyz")
    names = zipfile.ZipFile(built).namelist()
    assert [n for n in names if n.endswith(f".cpython-3{minor}.pyc")], "no bytecode for this CPython"
    session = launched_session(sys.executable, built, EXAMPLE, env={"SHIV_ROOT": str(tmp_path / "root")})
    assert session.startswith("ok:"), session
