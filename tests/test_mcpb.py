"""The MCP Bundle (dist/robot-md-mcp.mcpb, packaging/build_mcpb.py): its manifest follows the
v0.4 schema and the project's own tables, its pins are the tested constraints, and (heavy) the
built bundle, unpacked, serves a full MCP session when started the way a host starts it."""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import struct
import subprocess
import sys
import time
import zipfile
from pathlib import Path

import pytest
from conftest import EXAMPLE, ROOT, build_bundle, need
from jsonschema import Draft7Validator

import robot_md_mcp as rmm

sys.path.insert(0, str(ROOT / "packaging"))
import build_mcpb

try:
    import tomllib
except ImportError:  # Python 3.10: pip's vendored copy
    from pip._vendor import tomli as tomllib  # type: ignore[no-redef]

MCPB_DIR = ROOT / "packaging" / "mcpb"
MANIFEST_SCHEMA = json.loads((MCPB_DIR / "mcpb-manifest-v0.4.schema.json").read_text(encoding="utf-8"))


@pytest.fixture(scope="module")
def manifest() -> dict:
    return build_mcpb.manifest()


def constraint_lines() -> list[str]:
    text = (ROOT / "packaging" / "constraints.txt").read_text(encoding="utf-8")
    return [line.strip() for line in text.splitlines() if line.strip() and not line.startswith("#")]


def bundle_dependencies() -> list[str]:
    with (MCPB_DIR / "pyproject.toml").open("rb") as f:
        return tomllib.load(f)["project"]["dependencies"]


# --- the manifest ---------------------------------------------------------------------------


def test_manifest_validates_against_the_v0_4_schema(manifest: dict) -> None:
    validator = Draft7Validator(MANIFEST_SCHEMA)
    errors = [f"{list(e.absolute_path)}: {e.message}" for e in validator.iter_errors(manifest)]
    assert errors == []
    assert MANIFEST_SCHEMA["properties"]["manifest_version"]["const"] == manifest["manifest_version"] == "0.4"


def test_the_template_leaves_generated_fields_to_the_build() -> None:
    template = json.loads((MCPB_DIR / "manifest.template.json").read_text(encoding="utf-8"))
    assert not set(template) & set(build_mcpb.GENERATED)


def test_version_equals_the_module_version(manifest: dict) -> None:
    assert build_mcpb.module_version() == rmm.__version__
    assert manifest["version"] == rmm.__version__
    staged = tomllib.loads(build_mcpb.bundle_pyproject())["project"]["version"]
    assert staged == rmm.__version__
    # and what the module itself says, run as the bundle runs it (a script)
    script = [sys.executable, str(ROOT / "robot_md_mcp.py"), "--version"]
    done = subprocess.run(script, capture_output=True, text=True, check=True)
    assert done.stdout.split() == ["robot-md-mcp", rmm.__version__]


def test_tools_and_prompts_are_the_module_tables(manifest: dict) -> None:
    assert manifest["tools"] == [{"name": t.name, "description": t.description} for t in rmm.TOOLS.values()]
    assert [(p["name"], p["description"], p["arguments"]) for p in manifest["prompts"]] == [
        (p.name, p.description, [name for name, _ in p.arguments]) for p in rmm.PROMPTS.values()
    ]
    for prompt, entry in zip(manifest["prompts"], rmm.PROMPTS.values(), strict=True):
        assert prompt["text"].startswith(entry.title)
        for name, _ in entry.arguments:
            assert f"${{arguments.{name}}}" in prompt["text"]


def test_the_robot_md_is_a_required_file_setting_passed_both_ways(manifest: dict) -> None:
    setting = manifest["user_config"]["robot_md"]
    assert setting["type"] == "file" and setting["required"] is True
    assert "ROBOT.md" in setting["title"] and setting["description"]
    server = manifest["server"]
    assert server["type"] == "uv" and server["entry_point"] == "robot_md_mcp.py"
    config = server["mcp_config"]
    assert config["command"] == "uv"
    assert config["args"][:4] == ["run", "--directory", "${__dirname}", server["entry_point"]]
    assert config["args"][-1] == "${user_config.robot_md}"
    assert config["env"] == {rmm.PATH_ENV: "${user_config.robot_md}"}


def test_manifest_metadata(manifest: dict) -> None:
    meta = build_mcpb.project()
    assert manifest["name"] == meta["name"] == rmm.NAME
    assert manifest["license"] == "Apache-2.0" == meta["license"]
    assert manifest["repository"] == {"type": "git", "url": meta["urls"]["Repository"]}
    assert manifest["compatibility"] == {
        "platforms": ["darwin", "win32", "linux"],
        "runtimes": {"python": ">=3.10"},
    }
    assert manifest["icon"] == "icon.png" and manifest["display_name"] and manifest["long_description"]


# --- the bundle's files ---------------------------------------------------------------------


def test_bundle_pins_are_the_tested_constraints() -> None:
    pins = bundle_dependencies()
    assert pins == constraint_lines()
    for pin in pins:
        assert re.fullmatch(r"[A-Za-z0-9._-]+==[^ ;]+( ; .+)?", pin), pin
    project = tomllib.loads((MCPB_DIR / "pyproject.toml").read_text(encoding="utf-8"))
    assert project["project"]["requires-python"] == build_mcpb.project()["requires-python"]
    assert project["tool"]["uv"]["package"] is False
    assert "build-system" not in project


def test_icon_is_a_512_png() -> None:
    data = (MCPB_DIR / "icon.png").read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n" and data[12:16] == b"IHDR"
    assert struct.unpack(">II", data[16:24]) == (512, 512)


def test_stage_writes_exactly_the_bundle_files(tmp_path: Path) -> None:
    build_mcpb.stage(tmp_path)
    assert {p.name for p in tmp_path.iterdir()} == {*build_mcpb.BUNDLE_CONTENTS, ".mcpbignore"}
    assert json.loads((tmp_path / "manifest.json").read_text(encoding="utf-8")) == build_mcpb.manifest()
    assert (tmp_path / "robot_md_mcp.py").read_bytes() == (ROOT / "robot_md_mcp.py").read_bytes()
    assert (tmp_path / "schema.json").read_bytes() == (ROOT / "schema.json").read_bytes()
    assert (ROOT / "LICENSE").read_text(encoding="utf-8").lstrip().startswith("Apache License")


def test_without_node_the_build_says_so_in_one_line(tmp_path: Path) -> None:
    env = {**os.environ, "PATH": str(tmp_path)}  # nothing on PATH: no npx
    done = subprocess.run(
        [sys.executable, str(ROOT / "packaging" / "build_mcpb.py"), "--dist", str(tmp_path / "dist")],
        env=env,
        capture_output=True,
        text=True,
    )
    assert done.returncode == 1
    assert done.stdout == ""
    assert len(done.stderr.splitlines()) == 1, done.stderr
    assert "needs Node.js" in done.stderr and "./build.sh pyz" in done.stderr
    assert not (tmp_path / "dist").exists()


# --- heavy: build, unpack, run as a host does ------------------------------------------------


def uv_binary() -> Path:
    """The uv the test extra installed (beside python in a venv; under Scripts on Windows)."""
    try:
        from uv import find_uv_bin
    except ImportError:
        need(False, "uv (in the test extra)")
    return Path(find_uv_bin())


# How this machine reaches PyPI (an organisation's CA or proxy or index), passed on as a host's
# environment would carry it; nothing else of ours is.
NETWORK_ENV = (
    "SSL_CERT_FILE",
    "SSL_CERT_DIR",
    "UV_NATIVE_TLS",
    "UV_SYSTEM_CERTS",
    "UV_INDEX_URL",
    "UV_DEFAULT_INDEX",
    "HTTP_PROXY",
    "HTTPS_PROXY",
    "NO_PROXY",
    "http_proxy",
    "https_proxy",
    "no_proxy",
)


@pytest.fixture(scope="module")
def built(tmp_path_factory) -> Path:
    return build_bundle(tmp_path_factory.mktemp("mcpb-dist"))


def host_env(tmp_path: Path, **extra: str) -> dict[str, str]:
    """A host's environment: PATH holding only uv and uvx, a home and uv cache of its own, the
    current interpreter for uv to use (so it does not download CPython)."""
    uv = uv_binary()
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    for tool in ("uv", "uvx"):
        source = uv.with_name(tool + uv.suffix)
        if source.exists():
            shutil.copy2(source, bin_dir / source.name)
    env = {
        "PATH": str(bin_dir),
        "HOME": str(tmp_path / "home"),
        "UV_CACHE_DIR": str(tmp_path / "uv-cache"),
        "UV_PYTHON": sys.executable,
        **{name: os.environ[name] for name in NETWORK_ENV if name in os.environ},
        **extra,
    }
    if sys.platform == "win32":
        env.update(USERPROFILE=env["HOME"], SYSTEMROOT=os.environ.get("SYSTEMROOT", r"C:\Windows"))
    return env


def unpack(bundle: Path, into: Path) -> Path:
    with zipfile.ZipFile(bundle) as packed:
        packed.extractall(into)
    return into


def substitute(value: str, dirname: Path) -> str:
    return value.replace("${__dirname}", str(dirname)).replace("${user_config.robot_md}", str(EXAMPLE))


def session(command: list[str], env: dict[str, str]) -> str:
    """tests/pyz_session.py through `command`, started in / with `env` (the session helper runs
    on this interpreter; the server command is found on env's PATH)."""
    started = time.monotonic()
    helper = [sys.executable, str(ROOT / "tests" / "pyz_session.py"), "--expect-robot", "bob"]
    helper += ["--timeout", "600"]  # per reply: the first waits while uv installs
    done = subprocess.run(
        [*helper, "--", *command],
        capture_output=True,
        text=True,
        timeout=1800,
        cwd=Path(ROOT.anchor),
        env=env,
    )
    assert done.returncode == 0, done.stdout + done.stderr[-3000:]
    line = f"{done.stdout.strip()} (wall {time.monotonic() - started:.1f} s, cold uv cache)"
    print(line)
    return line


@pytest.mark.heavy
def test_built_bundle_holds_exactly_its_files(built: Path) -> None:
    bundle = built / build_mcpb.BUNDLE
    with zipfile.ZipFile(bundle) as packed:
        assert set(packed.namelist()) == build_mcpb.BUNDLE_CONTENTS
        assert json.loads(packed.read("manifest.json")) == build_mcpb.manifest()
        assert packed.read("robot_md_mcp.py") == (ROOT / "robot_md_mcp.py").read_bytes()
        assert packed.read("pyproject.toml").decode() == build_mcpb.bundle_pyproject()
    size = bundle.stat().st_size
    print(f"{bundle.name}: {size:,} bytes")
    assert size < 200_000  # kilobytes: no dependencies inside


@pytest.mark.heavy
def test_dist_server_json_carries_the_bundle_hash(built: Path) -> None:
    bundle = built / build_mcpb.BUNDLE
    server = json.loads((built / "server.json").read_text(encoding="utf-8"))
    digest = hashlib.sha256(bundle.read_bytes()).hexdigest()
    assert server == build_mcpb.server_json(digest)
    (mcpb,) = [p for p in server["packages"] if p["registryType"] == "mcpb"]
    assert mcpb["fileSha256"] == digest


@pytest.mark.heavy
def test_host_runs_the_manifest_mcp_config(built: Path, tmp_path: Path) -> None:
    """The manifest's mcp_config exactly as written, its substitutions filled, from cwd /."""
    bundle_dir = unpack(built / build_mcpb.BUNDLE, tmp_path / "bundle")
    config = json.loads((bundle_dir / "manifest.json").read_text(encoding="utf-8"))["server"]["mcp_config"]
    command = [config["command"], *(substitute(a, bundle_dir) for a in config["args"])]
    env = host_env(tmp_path, **{k: substitute(v, bundle_dir) for k, v in config["env"].items()})
    session(command, env)


@pytest.mark.heavy
def test_host_runs_the_bare_uv_entry_point(built: Path, tmp_path: Path) -> None:
    """`uv run --directory <bundle> <entry_point>`, the manifest path in ROBOT_MD_PATH only."""
    bundle_dir = unpack(built / build_mcpb.BUNDLE, tmp_path / "bundle")
    manifest = json.loads((bundle_dir / "manifest.json").read_text(encoding="utf-8"))
    entry_point = manifest["server"]["entry_point"]
    env = host_env(tmp_path, **{rmm.PATH_ENV: str(EXAMPLE)})
    session(["uv", "run", "--directory", str(bundle_dir), entry_point], env)


@pytest.mark.heavy
def test_bundle_pins_close_the_dependency_set(tmp_path: Path) -> None:
    """uv's universal lock of the bundle's pyproject (darwin, linux, win32; every Python it
    allows) holds exactly the pinned distributions at the pinned versions: nothing unpinned."""
    (tmp_path / "pyproject.toml").write_text(build_mcpb.bundle_pyproject(), encoding="utf-8")
    done = subprocess.run(
        [str(uv_binary()), "lock", "--directory", str(tmp_path)],
        capture_output=True,
        text=True,
        timeout=600,
        env={**os.environ, "UV_CACHE_DIR": str(tmp_path / "uv-cache")},
    )
    assert done.returncode == 0, done.stderr[-3000:]
    lock = tomllib.loads((tmp_path / "uv.lock").read_text(encoding="utf-8"))
    locked = {(p["name"], p["version"]) for p in lock["package"] if p["name"] != "robot-md-mcp-bundle"}
    pins = (line.split(" ;")[0].split("==") for line in constraint_lines())
    pinned = {(re.sub(r"[-_.]+", "-", name).lower(), version) for name, version in pins}
    assert locked == pinned


@pytest.mark.heavy
def test_icon_is_what_draw_icon_draws(tmp_path: Path) -> None:
    """The committed icon is the script's output, byte for byte (drawing takes seconds)."""
    out = tmp_path / "icon.png"
    subprocess.run([sys.executable, str(MCPB_DIR / "draw_icon.py"), str(out)], check=True, timeout=300)
    assert out.read_bytes() == (MCPB_DIR / "icon.png").read_bytes()


def test_a_table_entry_that_is_not_a_literal_is_named() -> None:
    source = (ROOT / "robot_md_mcp.py").read_text(encoding="utf-8")
    changed = source.replace('name="render",', 'name="ren" + "der",', 1)
    assert changed != source
    with pytest.raises(SystemExit, match=r"TOOLS entry field 'name' is not a literal .*line \d+"):
        build_mcpb.tables(changed)
