"""Shared fixtures: where things are, the reference oracle, CI strictness."""

from __future__ import annotations

import functools
import os
import py_compile
import secrets
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

# The paths and the server's command live in the harness (tests/support/serving.py), which must run without
# pytest (tests/support/pyz_session.py imports it under other interpreters); tests take them from here.
from serving import EXAMPLE as EXAMPLE
from serving import ROOT as ROOT
from serving import SERVER as SERVER
from serving import Served, private_token

CORPUS = ROOT / "tests" / "corpus"
IN_CI = os.environ.get("CI", "").lower() == "true"
REFERENCE_PINS = ("robot-md==1.10.6", "python-frontmatter==1.3.0")
REFERENCE_DIR = ROOT / ".cache" / "reference-robot-md-1.10.6"


# Tiers (pyproject.toml): the default run is quick and needs nothing beyond `pip install '.[test]'`;
# anything that builds, downloads, needs ../shared, Node, qemu, other CPythons, or takes seconds is
# `heavy`, written on the test itself (`@pytest.mark.heavy`, or its file's `pytestmark`).


@pytest.hookimpl(optionalhook=True)
def pytest_xdist_auto_num_workers(config: pytest.Config) -> int:
    """`-n auto`: one worker per CPU this process may run on, and one more: a test waiting on a
    server or a deadline leaves its CPU to the spare (docs/development.md#tiers: the counts tried).
    xdist's own count takes the machine's cores, which overcommits a container limited to a few of
    them."""
    usable = os.sched_getaffinity(0) if hasattr(os, "sched_getaffinity") else range(os.cpu_count() or 1)
    return len(usable) + 1


def pytest_configure(config: pytest.Config) -> None:
    """SERVER imports the module from its cached bytecode: made here, once per run (not by each
    xdist worker), whatever PYTHONDONTWRITEBYTECODE says. So are the test files as pytest rewrites
    their asserts (its cache follows sys.dont_write_bytecode): rewriting them all anew costs each
    worker seconds of collection."""
    if not hasattr(config, "workerinput"):
        py_compile.compile(str(ROOT / "robot_md_mcp.py"), doraise=True)
    sys.dont_write_bytecode = False


posix_only = pytest.mark.skipif(sys.platform == "win32", reason="needs POSIX (FIFOs, ptys, setpriv, bash)")


def need(condition: bool, reason: str) -> None:
    """Skip when a machine lacks something; in CI a missing tool is a failure."""
    if not condition:
        if IN_CI:
            pytest.fail(f"CI must provide this: {reason}")
        pytest.skip(reason)


def corpus_files() -> list[Path]:
    return sorted(CORPUS.glob("*.md"))


def install_reference() -> Path | None:
    if (REFERENCE_DIR / "robot_md" / "validate.py").exists():
        return REFERENCE_DIR
    pip = [sys.executable, "-m", "pip", "install", "--quiet", "--no-deps", "--target", str(REFERENCE_DIR)]
    done = subprocess.run([*pip, *REFERENCE_PINS], capture_output=True, text=True, timeout=300)
    return REFERENCE_DIR if done.returncode == 0 else None


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture
def manifest_path(tmp_path: Path):
    """Write bytes (or text) as tmp/ROBOT.md and return its path."""

    def write(content: bytes | str, name: str = "ROBOT.md") -> Path:
        path = tmp_path / name
        path.write_bytes(content if isinstance(content, bytes) else content.encode("utf-8"))
        return path

    return write


@functools.cache
def cpythons() -> dict[str, str]:
    """{"X.Y": an interpreter of that CPython} for each one found here: pyenv's versions folder (where
    there is one) and python3.X / python2.7 on PATH, each run once to learn what it is."""
    pyenv = Path(os.environ.get("PYENV_ROOT", Path.home() / ".pyenv"))
    candidates = sorted(
        str(p) for p in pyenv.glob("versions/*/bin/python") if p.parent.parent.name[:1].isdigit()
    )
    names = ["python2.7", *(f"python3.{minor}" for minor in range(6, 16))]
    # pyenv's shims on PATH lead to the versions above, each through a slow shell script.
    candidates += [
        found for found in map(shutil.which, names) if found and Path(found).parent != pyenv / "shims"
    ]
    ask = "import platform as p; "
    ask += "print('%s %s.%s' % ((p.python_implementation(),) + p.python_version_tuple()[:2]))"
    found: dict[str, str] = {}
    for python in candidates:
        try:
            done = subprocess.run([python, "-S", "-c", ask], capture_output=True, text=True, timeout=30)
        except (OSError, subprocess.TimeoutExpired):
            continue
        words = done.stdout.split()
        if done.returncode == 0 and len(words) == 2 and words[0] == "CPython":
            found.setdefault(words[1], python)
    return found


def cpython(version: str) -> str:
    """An interpreter of CPython `version` found here (cpythons()), else skip (fail in CI)."""
    python = cpythons().get(version)
    need(python is not None, f"CPython {version} (python{version} on PATH, or in pyenv's versions folder)")
    return python or ""


# Debian sid's userland (CPython 3.14 and 3.15 as Debian packages them), built by .ci/run with `SUITE=sid
# INCLUDE=python3.14-venv,python3.15,python3.15-venv ../shared/tools/pi-emu/make_rootfs.sh amd64 DEST`.
SID_ROOTFS = Path(os.environ.get("SID_ROOTFS", "/var/tmp/pi-emu/rootfs-sid-amd64"))
PI_EMU = ROOT.parent / "shared" / "tools" / "pi-emu"


def in_sid(*argv: str | Path, bind: tuple[Path, ...] = ()) -> list[str]:
    """argv run inside Debian sid's userland (cwd and `bind` visible at the same paths); skips outside CI
    when the userland or ../shared is missing."""
    need((PI_EMU / "run_in_arm64.sh").exists(), "../shared/tools/pi-emu (the emulated userlands)")
    need((SID_ROOTFS / "usr" / "bin" / "python3.15").exists(), f"Debian sid's userland in {SID_ROOTFS}")
    env = ["env", "ARCH=amd64", f"ROOTFS={SID_ROOTFS}", f"BIND={' '.join(map(str, bind))}"]
    return [*env, "bash", str(PI_EMU / "run_in_arm64.sh"), *map(str, argv)]


SID_WRAPPER = """#!/bin/sh
# Debian sid's python{v}, run in its userland with /tmp and this folder visible at the same paths.
exec env ARCH=amd64 ROOTFS={rootfs} BIND="{bind}" PASS_ENV="PYTHONHASHSEED SHIV_ROOT RECORD_TO" \\
  bash {script} python{v} "$@"
"""


def sid_cpythons() -> list[str]:
    """The CPythons Debian sid's userland adds here (3.14, 3.15), where it can run (root, ../shared)."""
    usable = hasattr(os, "geteuid") and os.geteuid() == 0 and (PI_EMU / "run_in_arm64.sh").exists()
    return [v for v in ("3.14", "3.15") if usable and (SID_ROOTFS / "usr" / "bin" / f"python{v}").exists()]


def cpythons_on_path(folder: Path) -> str:
    """PATH with `python3.X` in folder for each CPython here (sid's through small wrappers that run
    them in its userland): the build compiles each slim pyz's bytecode with the one PATH names."""
    folder.mkdir(exist_ok=True)
    bind = " ".join(sorted({os.path.realpath(tempfile.gettempdir()), str(ROOT)}))
    for version in sid_cpythons():
        wrapper = folder / f"python{version}"
        text = SID_WRAPPER.format(v=version, rootfs=SID_ROOTFS, bind=bind, script=PI_EMU / "run_in_arm64.sh")
        wrapper.write_text(text)
        wrapper.chmod(0o755)
    for version, python in cpythons().items():
        if version.startswith("3.") and not (folder / f"python{version}").exists():
            (folder / f"python{version}").symlink_to(python)
    return f"{folder}{os.pathsep}{os.environ['PATH']}"


def build_dist(dist: Path) -> float:
    """`./build.sh pyz` into `dist`: the universal pyz, the slim ones (bytecode for every CPython
    here), SHA256SUMS. Seconds taken."""
    started = time.monotonic()
    path = cpythons_on_path(dist.parent / f"{dist.name}-pythons")
    env = {**os.environ, "PYTHON": sys.executable, "DIST": str(dist), "PATH": path}
    done = subprocess.run(
        ["bash", str(ROOT / "build.sh"), "pyz"], env=env, capture_output=True, text=True, timeout=3600
    )
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    return time.monotonic() - started


@pytest.fixture(scope="session")
def built_dist(tmp_path_factory) -> Path:
    """One build per test run, shared by the pyz and Pi tests."""
    out = tmp_path_factory.mktemp("dist")
    build_dist(out)
    return out


@pytest.fixture(scope="session")
def universal_pyz(built_dist: Path) -> Path:
    return built_dist / "robot-md-mcp.pyz"


def build_bundle(dist: Path) -> Path:
    """`packaging/build_mcpb.py --dist DIST`: the MCP Bundle and dist/server.json (Python only; the
    wheels its Python range is checked with are cached in .cache/wheels, shared with the pyz build)."""
    done = subprocess.run(
        [sys.executable, str(ROOT / "packaging" / "build_mcpb.py"), "--dist", str(dist)],
        capture_output=True,
        text=True,
        timeout=1800,
    )
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    print(done.stdout, end="")
    return dist


# --- servers over HTTP, one each per worker, shared by test_http and test_rest -----------------
# (no test changes what they serve; a module's own would start once per module in each worker)


@pytest.fixture(scope="session")
def http_server() -> Iterator[Served]:
    """`--http 127.0.0.1:0` serving the example, no token; stopped cleanly, no traceback or warning."""
    served = Served("--http", "127.0.0.1:0")
    yield served
    assert served.stop() == 0
    assert "Traceback" not in served.stderr and "Warning" not in served.stderr, served.stderr


@pytest.fixture(scope="session")
def token() -> str:
    return "tok-" + secrets.token_urlsafe(24)


@pytest.fixture(scope="session")
def token_server(token: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    """`--http` on a free loopback port with `token` in a private token file; stopped cleanly."""
    token_file = tmp_path_factory.mktemp("token") / "token"
    private_token(token_file, token + "\n")
    served = Served("--http", "127.0.0.1:0", "--token-file", str(token_file))
    yield served
    assert served.stop() == 0


@pytest.fixture(autouse=True)
def _no_test_leaves_event_streams_ended() -> Iterator[None]:
    """sse-starlette keeps a process-wide exit flag (its wrap of uvicorn's Server.handle_exit sets it): a test
    that left it set would end every later in-process event stream of its worker at once, empty."""
    yield
    sse = sys.modules.get("sse_starlette.sse")
    assert sse is None or not sse.AppStatus.should_exit, "a test left the flag set"
