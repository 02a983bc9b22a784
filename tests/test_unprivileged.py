"""A file the user may not read: one line, exit 1. Permissions only bite a user
without root, so under root the server runs as `nobody` (setpriv).

`nobody` may not be able to reach the clone (a checkout under a 0700 folder, a
virtualenv under /root): what it runs (the module, its schema, PyYAML) is copied
into a folder of its own under the system's temp folder first."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml
from conftest import EXAMPLE, ROOT, need, posix_only
from serving import run

pytestmark = posix_only

NOBODY = ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups"]
PROBE = "import yaml; yaml.CSafeLoader"  # what the module needs at import


@pytest.fixture
def reachable() -> Iterator[Path]:
    """A folder anyone can enter, outside the clone, removed afterwards."""
    folder = Path(tempfile.mkdtemp(prefix="robot-md-mcp-nobody-"))
    folder.chmod(0o755)
    try:
        yield folder
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def pythons() -> list[str]:
    """Interpreters to try as `nobody`: this one's real binary, then the system's."""
    found = [
        getattr(sys, "_base_executable", "") or sys.executable,
        os.path.realpath(sys.executable),
        shutil.which("python3") or "",
        "/usr/bin/python3",
    ]
    return [p for p in dict.fromkeys(found) if p and os.access(p, os.X_OK)]


def stage(folder: Path) -> tuple[Path, Path]:
    """The module and its schema (in app/), and this interpreter's PyYAML (in lib/, for
    PYTHONPATH), copied where `nobody` can read them."""
    app, lib = folder / "app", folder / "lib"
    app.mkdir()
    lib.mkdir()
    for name in ("robot_md_mcp.py", "schema.json"):
        shutil.copy(ROOT / name, app / name)
    package = Path(yaml.__file__).parent
    shutil.copytree(package, lib / package.name, ignore=shutil.ignore_patterns("__pycache__"))
    shim = package.parent / "_yaml"  # PyYAML's top-level compatibility package, if any
    if shim.is_dir():
        shutil.copytree(shim, lib / "_yaml", ignore=shutil.ignore_patterns("__pycache__"))
    for path in [app, lib, *app.rglob("*"), *lib.rglob("*")]:
        path.chmod(0o755 if path.is_dir() else 0o644)
    return app / "robot_md_mcp.py", lib


def as_nobody(python: str, *args: str, lib: Path | None) -> subprocess.CompletedProcess[str]:
    env = {"PATH": "/usr/bin:/bin", "LC_ALL": "C.UTF-8", "PYTHONDONTWRITEBYTECODE": "1"}
    if lib is not None:
        env["PYTHONPATH"] = str(lib)
    return run(*args, command=[*NOBODY, python], cwd=Path("/"), env=env, inherit_env=False)


@pytest.mark.process  # the default tier's is test_read.py's test_unreadable_file, in process
def test_unreadable_file_as_an_unprivileged_user(reachable: Path) -> None:
    path = reachable / "ROBOT.md"
    path.write_text(EXAMPLE.read_text(encoding="utf-8"), encoding="utf-8")
    path.chmod(0)
    if os.geteuid() != 0:
        done = run(path)
    else:
        need(shutil.which("setpriv") is not None, "setpriv (util-linux), to drop root")
        module, lib = stage(reachable)
        # Our PyYAML first (for an interpreter of the same version), else the system's own.
        usable = next(
            (
                (python, with_lib)
                for python in pythons()
                for with_lib in (lib, None)
                if as_nobody(python, "-c", PROBE, lib=with_lib).returncode == 0
            ),
            None,
        )
        need(
            usable is not None,
            f"a python3 with PyYAML's C loader that `nobody` can run (tried {', '.join(pythons())}, "
            f"with a copy of {Path(yaml.__file__).parent} and without)",
        )
        assert usable is not None
        python, with_lib = usable
        # The file itself must be what `nobody` may not read, not the folders above it.
        enter = as_nobody(python, "-c", f"import os; os.listdir({str(reachable)!r})", lib=None)
        need(enter.returncode == 0, f"a temp folder `nobody` can enter ({reachable}: {enter.stderr.strip()})")
        done = as_nobody(python, str(module), str(path), lib=with_lib)
    assert done.returncode == 1, done.stderr
    assert done.stderr == f"robot-md-mcp: cannot read: permission denied ({path})\n"
