"""The wheel (what pip and pipx install) carries the module as a package with
schema.json beside it, and runs from there exactly as from the checkout."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest
from conftest import EXAMPLE, ROOT, need
from serving import launched_session

import robot_md_mcp as rmm

pytestmark = pytest.mark.heavy  # builds a wheel (pip fetches hatchling), pipx and uvx installs from a git tag
PIP = (sys.executable, "-m", "pip")


def sh(*command: str | Path, **options) -> subprocess.CompletedProcess:
    """An installer or an installed command, run to its end (its output as text)."""
    return subprocess.run(
        [str(c) for c in command], capture_output=True, text=True, encoding="utf-8", **options
    )


@pytest.fixture(scope="module")
def wheel(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("wheel")
    done = sh(*PIP, "wheel", "--quiet", "--no-deps", "--wheel-dir", out, ROOT, timeout=600)
    assert done.returncode == 0, done.stderr[-2000:]
    (built,) = out.glob("robot_md_mcp-*.whl")
    return built


def test_wheel_holds_exactly_the_package_and_its_metadata(wheel: Path) -> None:
    """What PyPI gets: the module as a package (nothing loose in site-packages), its schema, __main__,
    the console script, and dist-info with the license file (PEP 639) and the metadata PyPI shows."""
    dist_info = f"robot_md_mcp-{rmm.__version__}.dist-info"
    with zipfile.ZipFile(wheel) as built:
        files = {name: built.read(name) for name in built.namelist()}
    package = {f"robot_md_mcp/{name}" for name in ("__init__.py", "schema.json", "__main__.py")}
    meta = {f"{dist_info}/{name}" for name in ("METADATA", "WHEEL", "RECORD", "entry_points.txt")}
    assert set(files) == package | meta | {f"{dist_info}/licenses/LICENSE"}
    assert files["robot_md_mcp/schema.json"] == (ROOT / "schema.json").read_bytes()
    assert files["robot_md_mcp/__init__.py"] == (ROOT / "robot_md_mcp.py").read_bytes()
    assert files["robot_md_mcp/__main__.py"] == (ROOT / "packaging" / "package_main.py").read_bytes()
    assert "robot-md-mcp = robot_md_mcp:main" in files[f"{dist_info}/entry_points.txt"].decode()
    assert files[f"{dist_info}/licenses/LICENSE"] == (ROOT / "LICENSE").read_bytes()
    headers = files[f"{dist_info}/METADATA"].decode().split("\n\n", 1)[0].splitlines()
    wanted = ["License-Expression: Apache-2.0", "License-File: LICENSE", "Requires-Python: >=3.10"]
    wanted += ["Project-URL: Repository, https://github.com/robot-md/robot-md-mcp"]
    wanted += [f"Classifier: Programming Language :: Python :: 3.{minor}" for minor in range(10, 15)]
    assert [line for line in wanted if line not in headers] == []


def test_installed_package_finds_its_schema(wheel: Path, tmp_path: Path) -> None:
    """Installed from the wheel, `python -m robot_md_mcp` (package_main.py) finds its schema there."""
    site = tmp_path / "site"
    assert sh(*PIP, "install", "--quiet", "--no-deps", "--target", site, wheel, timeout=300).returncode == 0
    env = {**os.environ, "PYTHONPATH": str(site)}
    code = "import robot_md_mcp as m; print(m.__file__, m.SCHEMA_PATH, m.SCHEMA_PATH.is_file(), sep='\\n')"
    module_file, schema_path, exists = sh(
        sys.executable, "-c", code, cwd=tmp_path, env=env
    ).stdout.splitlines()
    assert module_file == str(site / "robot_md_mcp" / "__init__.py")
    assert schema_path == str(site / "robot_md_mcp" / "schema.json") and exists == "True"
    done = sh(sys.executable, "-m", "robot_md_mcp", "validate", "--json", EXAMPLE, cwd=tmp_path, env=env)
    assert done.returncode == 0, done.stderr
    summary = "bob (arm+camera, 6 DoF, 5 capabilities)"
    assert json.loads(done.stdout) == {
        "ok": True,
        "summary": summary,
        "errors": [],
        "warnings": [],
        "hints": [],
    }


# The pyz (universal and slim zipapps): tests/test_pyz.py.


def tagged_clone(tmp_path: Path) -> tuple[Path, str]:
    """A clone of this repository's HEAD with a release-like tag, as users install from."""
    need(shutil.which("git") is not None, "git")
    repo = tmp_path / "repo"
    subprocess.run(["git", "clone", "--quiet", str(ROOT), str(repo)], check=True, timeout=120)
    tag = f"v{rmm.__version__}-test"
    subprocess.run(["git", "-C", str(repo), "tag", tag], check=True)
    return repo, tag


def test_pipx_install_from_a_git_tag(tmp_path: Path) -> None:
    """What the README tells users: `pipx install git+…@vX.Y.Z` gives a working command."""
    pipx = Path(sys.executable).with_name("pipx")
    need(pipx.exists(), "pipx (in the test extra)")
    repo, tag = tagged_clone(tmp_path)
    env = {**os.environ, "PIPX_HOME": str(tmp_path / "pipx"), "PIPX_BIN_DIR": str(tmp_path / "bin")}
    done = sh(
        pipx, "install", f"git+file://{repo}@{tag}", env=env | {"PIPX_MAN_DIR": str(tmp_path)}, timeout=900
    )
    assert done.returncode == 0, done.stderr[-3000:]
    command = tmp_path / "bin" / "robot-md-mcp"
    assert sh(command, "--version").stdout.startswith(f"robot-md-mcp {rmm.__version__}")
    done = sh(command, "validate", "--json", EXAMPLE, cwd=tmp_path)
    assert done.returncode == 0 and json.loads(done.stdout)["ok"] is True, done.stderr
    assert launched_session(command, EXAMPLE).startswith("ok: ")


# uvx from a git tag: test_plugin.py::test_install_links_start_what_they_describe (a full session).
