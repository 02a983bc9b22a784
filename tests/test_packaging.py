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


@pytest.fixture(scope="module")
def wheel(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("wheel")
    done = subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--quiet", "--no-deps", "--wheel-dir", str(out), str(ROOT)],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    (built,) = out.glob("robot_md_mcp-*.whl")
    return built


def test_wheel_layout(wheel: Path) -> None:
    names = zipfile.ZipFile(wheel).namelist()
    assert "robot_md_mcp/__init__.py" in names
    assert "robot_md_mcp/schema.json" in names
    assert "robot_md_mcp/__main__.py" in names
    assert not [n for n in names if "/" not in n]  # nothing loose at the root of site-packages
    assert zipfile.ZipFile(wheel).read("robot_md_mcp/schema.json") == (ROOT / "schema.json").read_bytes()
    assert zipfile.ZipFile(wheel).read("robot_md_mcp/__init__.py") == (ROOT / "robot_md_mcp.py").read_bytes()
    entry_points = next(n for n in names if n.endswith("entry_points.txt"))
    assert "robot-md-mcp = robot_md_mcp:main" in zipfile.ZipFile(wheel).read(entry_points).decode()


def test_wheel_holds_exactly_the_package_and_its_metadata(wheel: Path) -> None:
    """What PyPI gets: the module as a package, its schema, __main__, and dist-info with the
    license file (PEP 639) and the metadata PyPI shows; nothing else."""
    dist_info = f"robot_md_mcp-{rmm.__version__}.dist-info"
    with zipfile.ZipFile(wheel) as built:
        names = set(built.namelist())
        metadata = built.read(f"{dist_info}/METADATA").decode()
        license_text = built.read(f"{dist_info}/licenses/LICENSE")
    assert names == {
        "robot_md_mcp/__init__.py",
        "robot_md_mcp/schema.json",
        "robot_md_mcp/__main__.py",
        *(f"{dist_info}/{name}" for name in ("METADATA", "WHEEL", "RECORD", "entry_points.txt")),
        f"{dist_info}/licenses/LICENSE",
    }
    assert license_text == (ROOT / "LICENSE").read_bytes()
    headers = metadata.split("\n\n", 1)[0].splitlines()
    assert "License-Expression: Apache-2.0" in headers
    assert "License-File: LICENSE" in headers
    assert "Project-URL: Repository, https://github.com/robot-md/robot-md-mcp" in headers
    assert "Requires-Python: >=3.10" in headers
    for minor in range(10, 15):
        assert f"Classifier: Programming Language :: Python :: 3.{minor}" in headers


def test_installed_package_finds_its_schema(wheel: Path, tmp_path: Path) -> None:
    site = tmp_path / "site"
    subprocess.run(
        [sys.executable, "-m", "pip", "install", "--quiet", "--no-deps", "--target", str(site), str(wheel)],
        check=True,
        timeout=300,
    )
    env = {**os.environ, "PYTHONPATH": str(site)}
    code = (
        "import robot_md_mcp as m, sys\n"
        "print(m.__file__, m.SCHEMA_PATH, m.SCHEMA_PATH.is_file(), sep='\\n')\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], cwd=tmp_path, env=env, capture_output=True, text=True, check=True
    )
    module_file, schema_path, exists = done.stdout.splitlines()
    assert module_file == str(site / "robot_md_mcp" / "__init__.py")
    assert schema_path == str(site / "robot_md_mcp" / "schema.json") and exists == "True"
    done = subprocess.run(
        [sys.executable, "-m", "robot_md_mcp", "validate", "--json", str(EXAMPLE)],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        encoding="utf-8",
    )
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout) == {
        "ok": True,
        "summary": "bob (arm+camera, 6 DoF, 5 capabilities)",
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
    env = {
        **os.environ,
        "PIPX_HOME": str(tmp_path / "pipx"),
        "PIPX_BIN_DIR": str(tmp_path / "bin"),
        "PIPX_MAN_DIR": str(tmp_path / "man"),
    }
    done = subprocess.run(
        [str(pipx), "install", f"git+file://{repo}@{tag}"],
        env=env,
        capture_output=True,
        text=True,
        timeout=900,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    command = tmp_path / "bin" / "robot-md-mcp"
    version = subprocess.run([str(command), "--version"], capture_output=True, text=True, check=True).stdout
    assert version.startswith(f"robot-md-mcp {rmm.__version__}")
    done = subprocess.run(
        [str(command), "validate", "--json", str(EXAMPLE)],
        capture_output=True,
        text=True,
        encoding="utf-8",
        cwd=tmp_path,
    )
    assert done.returncode == 0 and json.loads(done.stdout)["ok"] is True, done.stderr
    assert launched_session(command, EXAMPLE).startswith("ok: ")


def test_uvx_runs_a_git_tag(tmp_path: Path) -> None:
    uv = Path(sys.executable).with_name("uv")
    need(uv.exists(), "uv (in the test extra)")
    repo, tag = tagged_clone(tmp_path)
    env = {
        **os.environ,
        "UV_CACHE_DIR": str(tmp_path / "uv-cache"),
        "UV_TOOL_DIR": str(tmp_path / "uv-tools"),
    }
    done = subprocess.run(
        [
            str(uv),
            "tool",
            "run",
            "--from",
            f"git+file://{repo}@{tag}",
            "robot-md-mcp",
            "validate",
            str(EXAMPLE),
        ],
        env=env,
        capture_output=True,
        text=True,
        encoding="utf-8",
        timeout=900,
        cwd=tmp_path,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    assert done.stdout == "✓ bob (arm+camera, 6 DoF, 5 capabilities)\n"
