"""PEP 810 lazy imports (CPython 3.15+): the command line turns the global mode on before the SDK loads;
importing the module as a library does not; a mode the user chose stands. Under Debian sid's CPython 3.15
the default tier passes with every spawned server in that mode (heavy)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import PI_EMU, ROOT, SID_ROOTFS, in_sid
from serving import run

import robot_md_mcp as rmm


def modes_set(monkeypatch: pytest.MonkeyPatch, argv: list[str]) -> list[str]:
    """The modes main() asks for, on an interpreter that (as 3.15+ does) offers sys.set_lazy_imports."""
    asked: list[str] = []
    monkeypatch.setattr(sys, "set_lazy_imports", asked.append, raising=False)
    assert rmm.main(argv) == 0
    return asked


@pytest.mark.parametrize(("chosen", "asked"), [(None, ["all"]), ("normal", []), ("all", [])])
def test_the_command_line_turns_lazy_imports_on(
    chosen: str | None, asked: list[str], monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """Mode "all" unless the user chose one (PYTHON_LAZY_IMPORTS): a mode the user chose stands. (Without
    sys.set_lazy_imports, 3.10-3.14, main runs as ever: test_cli.py's --version, in process.)"""
    monkeypatch.delenv("PYTHON_LAZY_IMPORTS", raising=False)
    if chosen:
        monkeypatch.setenv("PYTHON_LAZY_IMPORTS", chosen)
    assert modes_set(monkeypatch, ["--version"]) == asked


SID_VENV = ROOT / ".cache" / "sid-tests-3.15"


def sid_venv() -> Path:
    """CPython 3.15 (Debian sid's) with the pinned dependencies and the test extras."""
    if not list(SID_VENV.glob("lib/python3.15/site-packages/xdist")):  # made before the test extra had it
        pip = f"{SID_VENV}/bin/pip install -q -c packaging/constraints.txt '.[test]'"
        done = subprocess.run(
            in_sid("sh", "-c", f"rm -rf {SID_VENV} && python3.15 -m venv {SID_VENV} && {pip}"),
            cwd=ROOT,
            capture_output=True,
            text=True,
            timeout=1200,
        )
        assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    return SID_VENV


@pytest.mark.heavy
def test_importing_leaves_the_mode_and_the_command_line_turns_it_on_under_3_15() -> None:
    venv = sid_venv()
    script = (
        "import sys; import robot_md_mcp; print(sys.get_lazy_imports()); "
        "robot_md_mcp.main(['--version']); print(sys.get_lazy_imports())"
    )
    done = run(command=in_sid(f"{venv}/bin/python", "-c", script), timeout=300)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["normal", f"{rmm.NAME}", rmm.__version__, "all"]


@pytest.mark.heavy
def test_the_default_tier_passes_on_cpython_3_15_with_lazy_imports() -> None:
    venv = sid_venv()
    done = subprocess.run(
        in_sid(f"{venv}/bin/python", "-m", "pytest", "-q", "-x", "-p", "no:cacheprovider"),
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=3000,
    )
    tail = done.stdout[-4000:] + done.stderr[-2000:]
    assert done.returncode == 0, tail
    assert " passed" in done.stdout.splitlines()[-1], tail


@pytest.mark.heavy
def test_the_real_clients_pass_against_cpython_3_15_with_lazy_imports(tmp_path: Path) -> None:
    """The MCP Inspector and the official conformance suite (Node, on this machine) drive servers
    started by CPython 3.15 (in Debian sid's userland; /tmp shared, so the tests' files are there)."""
    venv = sid_venv()
    python = tmp_path / "python3.15"
    run_in = f"ARCH=amd64 ROOTFS={SID_ROOTFS} BIND='{ROOT} /tmp' bash {PI_EMU / 'run_in_arm64.sh'}"
    python.write_text(f'#!/bin/sh\nexec env {run_in} {venv}/bin/python "$@"\n')
    python.chmod(0o755)
    tests = [str(ROOT / "tests" / name) for name in ("test_inspector.py", "test_conformance.py")]
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-m", "heavy", "-n", "0", "-p", "no:cacheprovider", *tests],
        cwd=ROOT,
        env={**os.environ, "ROBOT_MD_MCP_TEST_PYTHON": str(python)},
        capture_output=True,
        text=True,
        timeout=1800,
    )
    tail = done.stdout[-4000:] + done.stderr[-2000:]
    assert done.returncode == 0, tail
    assert " passed" in done.stdout.splitlines()[-1] and "skipped" not in done.stdout.splitlines()[-1], tail
