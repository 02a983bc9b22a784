"""The MCP Bundle (dist/robot-md-mcp.mcpb, packaging/build_mcpb.py): built with Python only, its
manifest follows the v0.4 schema and the module's own tables, its pins are the tested constraints,
its Python range admits only CPythons every pin has wheels for, and (heavy) the built bundle,
unpacked, serves a full MCP session when uv starts it as a host does, on a Python uv chooses."""

from __future__ import annotations

import hashlib
import importlib
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
from conftest import EXAMPLE, ROOT, build_bundle, in_sid, need
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from packaging.specifiers import SpecifierSet
from serving import launched_session

import robot_md_mcp as rmm

sys.path.insert(0, str(ROOT / "packaging"))
import build_mcpb
import build_pyz

try:
    import tomllib
except ImportError:  # Python 3.10: tomli (pytest's own dependency there)
    import tomli as tomllib  # type: ignore[no-redef]

MCPB_DIR = ROOT / "packaging" / "mcpb"
MCPB_CLI = "@anthropic-ai/mcpb@2.1.2"  # the official CLI, a second opinion where Node is present
A_RANGE = ">=3.10,<3.16"  # any range: the quick tests do not ask PyPI


@pytest.fixture(scope="module")
def manifest() -> dict:
    return build_mcpb.manifest(A_RANGE)


def constraint_lines() -> list[str]:
    text = (ROOT / "packaging" / "constraints.txt").read_text(encoding="utf-8")
    return [line.strip() for line in text.splitlines() if line.strip() and not line.startswith("#")]


def bundle_project(text: str | None = None) -> dict:
    return tomllib.loads(text or (MCPB_DIR / "pyproject.toml").read_text(encoding="utf-8"))["project"]


# --- the manifest ---------------------------------------------------------------------------


def test_manifest_validates_against_the_v0_4_schema(manifest: dict, monkeypatch) -> None:
    """The manifest follows the v0.4 schema and keeps the template's fields; a template that breaks the
    schema, or sets a field the build fills, stops the build in one line."""
    assert build_mcpb.schema_errors(manifest) == []
    schema = json.loads(build_mcpb.MANIFEST_SCHEMA.read_text(encoding="utf-8"))
    assert schema["properties"]["manifest_version"]["const"] == manifest["manifest_version"] == "0.4"
    template = build_mcpb.template()
    kept = {k: manifest[k] for k in template if k != "compatibility"}
    assert kept == {k: v for k, v in template.items() if k != "compatibility"}
    broken = build_mcpb.template()
    broken["user_config"]["robot_md"]["type"] = "a robot"
    schema_says = "manifest.json breaks the v0.4 schema: .*'user_config', 'robot_md', 'type'"
    for bad, says in (
        (broken, schema_says),
        (template | {"license": "MIT"}, "the template sets fields the build fills: license"),
    ):
        monkeypatch.setattr(build_mcpb, "template", lambda bad=bad: bad)
        with pytest.raises(SystemExit) as stopped:
            build_mcpb.contents(A_RANGE)
        assert re.match(f"build_mcpb: {says}", str(stopped.value)) and "\n" not in str(stopped.value)


def test_manifest_fields_come_from_the_project_and_the_module(manifest: dict) -> None:
    """Version, name, licence and links are the module's and pyproject.toml's (the version the command
    line prints: test_cli.py); the robot's ROBOT.md is a required file setting, passed to the server
    both as its argument and in its environment."""
    assert manifest["version"] == rmm.__version__
    assert bundle_project(build_mcpb.bundle_pyproject(A_RANGE))["version"] == rmm.__version__
    meta, urls = build_mcpb.project(), build_mcpb.project()["urls"]
    assert manifest["name"] == meta["name"] == rmm.NAME
    assert manifest["license"] == "Apache-2.0" == meta["license"]
    assert manifest["repository"] == {"type": "git", "url": urls["Repository"]}
    links = (manifest["homepage"], manifest["documentation"], manifest["support"])
    assert links == (urls["Homepage"], urls["Documentation"], urls["Issues"])
    platforms = ["darwin", "win32", "linux"]
    assert manifest["compatibility"] == {"platforms": platforms, "runtimes": {"python": A_RANGE}}
    assert manifest["icon"] == "icon.png" and manifest["display_name"] and manifest["long_description"]
    setting, server = manifest["user_config"]["robot_md"], manifest["server"]
    assert setting["type"] == "file" and setting["required"] is True
    assert "ROBOT.md" in setting["title"] and setting["description"]
    assert server["type"] == "uv" and server["entry_point"] == "robot_md_mcp.py"
    config = server["mcp_config"]
    assert config["command"] == "uv" and config["args"][-1] == "${user_config.robot_md}"
    assert config["args"][:4] == ["run", "--directory", "${__dirname}", server["entry_point"]]
    assert config["env"] == {rmm.PATH_ENV: "${user_config.robot_md}"}


def test_tools_and_prompts_are_the_module_tables(manifest: dict) -> None:
    assert manifest["tools"] == [{"name": t.name, "description": t.description} for t in rmm.TOOLS.values()]
    assert [(p["name"], p["description"], p["arguments"]) for p in manifest["prompts"]] == [
        (p.name, p.description, [name for name, _ in p.arguments]) for p in rmm.PROMPTS.values()
    ]
    for prompt, entry in zip(manifest["prompts"], rmm.PROMPTS.values(), strict=True):
        assert prompt["text"].startswith(entry.title)
        for name, _ in entry.arguments:
            assert f"${{arguments.{name}}}" in prompt["text"]


# --- the pins and the Python range --------------------------------------------------------------


def test_bundle_pins_are_the_tested_constraints() -> None:
    """The bundle pins constraints.txt, read per target (not for this machine): every pin applies
    somewhere, one version of a distribution per target; the build writes the computed range in."""
    pins = bundle_project()["dependencies"]
    assert pins == constraint_lines()
    assert [pin for pin in pins if not re.fullmatch(r"[A-Za-z0-9._-]+==[^ ;]+( ; .+)?", pin)] == []
    project = tomllib.loads((MCPB_DIR / "pyproject.toml").read_text(encoding="utf-8"))
    assert project["tool"]["uv"]["package"] is False and "build-system" not in project
    # the committed file holds the project's floor; the build writes the computed range in
    assert project["project"]["requires-python"] == build_mcpb.project()["requires-python"]
    assert bundle_project(build_mcpb.bundle_pyproject(A_RANGE))["requires-python"] == A_RANGE
    per_target = [build_pyz.pins_for(target) for target in build_pyz.TARGETS]  # {name: version}: one each
    assert {pin for pinned in per_target for pin in pinned.items()} == canonical_pins()
    assert "pywin32" in build_pyz.pins_for(("win32-amd64", "3.12"))
    assert "pywin32" not in build_pyz.pins_for(("linux-aarch64", "3.12"))


def canonical_pins() -> set[tuple[str, str]]:
    """(canonical name, version) of each line of constraints.txt."""
    pins = (line.split(" ;")[0].split("==") for line in constraint_lines())
    return {(re.sub(r"[-_.]+", "-", name).lower(), version) for name, version in pins}


def stub_pip(monkeypatch, no_wheel: tuple[str, str] | None = None) -> list[tuple[str, str]]:
    """build_pyz.pip_download offline, in the build_pyz that build_mcpb imports (test_pyz.py loads
    its own): an empty wheel per pin, or for `no_wheel` pip's failure. Returns the targets asked."""
    asked: list[tuple[str, str]] = []

    def pip_download(target, dest: Path, requirements, *options: str) -> subprocess.CompletedProcess:
        asked.append(target)
        if target == no_wheel:
            said = "Collecting pyyaml==6.0.3\nERROR: No matching distribution found for pyyaml==6.0.3\n"
            return subprocess.CompletedProcess([], 1, "", said)
        for pin in requirements:
            name, version = pin.split("==")
            (dest / f"{name.replace('-', '_')}-{version}-py3-none-any.whl").write_bytes(b"")
        return subprocess.CompletedProcess([], 0, "", "")

    monkeypatch.setattr(importlib.import_module("build_pyz"), "pip_download", pip_download)
    return asked


def test_the_range_is_the_cpythons_the_pyz_files_serve_each_resolved_everywhere(
    monkeypatch, tmp_path
) -> None:
    asked = stub_pip(monkeypatch)
    found = SpecifierSet(build_mcpb.requires_python(tmp_path))
    low, high = build_pyz.GUARD["SUPPORTED"]
    admitted = [f"3.{minor}" for minor in range(30) if f"3.{minor}" in found]
    assert admitted == [f"3.{minor}" for minor in range(low, high + 1)]
    assert sorted(asked) == sorted((platform, py) for platform in build_pyz.PLATFORMS for py in admitted)
    assert f">=3.{low}" == build_mcpb.project()["requires-python"]


@settings(max_examples=2, deadline=None, suppress_health_check=list(HealthCheck))
@given(st.sampled_from(build_pyz.TARGETS))
def test_a_pin_without_a_wheel_anywhere_stops_the_build_in_one_line(
    monkeypatch, tmp_path: Path, no_wheel: tuple[str, str]
) -> None:
    """The bundle admits no CPython for which uv would build a pin from source; any one platform and
    CPython without a wheel stops the build, naming them and pip's reason."""
    with monkeypatch.context() as patched:
        stub_pip(patched, no_wheel)
        with pytest.raises(SystemExit) as stopped:
            build_mcpb.build(tmp_path / "dist", tmp_path / f"cache-{build_pyz.target_name(no_wheel)}")
    message = str(stopped.value.code)
    assert message.startswith("build_mcpb: pip download for ") and "\n" not in message
    assert build_pyz.target_name(no_wheel) in message
    assert message.endswith("ERROR: No matching distribution found for pyyaml==6.0.3")
    assert not (tmp_path / "dist").exists()


def test_a_floor_other_than_the_pyz_files_is_one_line(monkeypatch, tmp_path: Path) -> None:
    """pyproject.toml's floor (what pip and pipx install on) and the pyz files' oldest CPython agree."""
    monkeypatch.setattr(build_mcpb, "project", lambda: {"requires-python": ">=3.9"})
    asked = stub_pip(monkeypatch)
    says = r"^build_mcpb: pyproject.toml's requires-python is \">=3\.9\", not "
    with pytest.raises(SystemExit, match=says):
        build_mcpb.requires_python(tmp_path)
    assert asked == []


# --- the bundle's files ---------------------------------------------------------------------


def test_the_bundle_holds_exactly_its_files_packed_reproducibly(tmp_path: Path) -> None:
    """The module, schema, licence, a 512x512 PNG icon, the manifest and pyproject.toml; packed sorted,
    with fixed dates, whatever the order given, and no partial file left."""
    files = build_mcpb.contents(A_RANGE)
    assert set(files) == build_mcpb.BUNDLE_CONTENTS
    assert json.loads(files["manifest.json"]) == build_mcpb.manifest(A_RANGE)
    assert files["pyproject.toml"].decode() == build_mcpb.bundle_pyproject(A_RANGE)
    for name in ("robot_md_mcp.py", "schema.json", "icon.png", "LICENSE"):
        assert files[name] == (ROOT / build_mcpb.COPIED[name]).read_bytes()
    assert (ROOT / "LICENSE").read_text(encoding="utf-8").lstrip().startswith("Apache License")
    icon = files["icon.png"]
    assert icon[:8] == b"\x89PNG\r\n\x1a\n" and icon[12:16] == b"IHDR"
    assert struct.unpack(">II", icon[16:24]) == (512, 512)
    build_mcpb.pack(files, tmp_path / "a.mcpb")
    build_mcpb.pack(dict(reversed(files.items())), tmp_path / "b.mcpb")
    assert (tmp_path / "a.mcpb").read_bytes() == (tmp_path / "b.mcpb").read_bytes()
    with zipfile.ZipFile(tmp_path / "a.mcpb") as packed:
        assert {name: packed.read(name) for name in packed.namelist()} == files
        assert {info.date_time for info in packed.infolist()} == {build_mcpb.ZIP_DATE}
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a.mcpb", "b.mcpb"]  # no partial file left


def test_without_its_dependencies_the_build_says_so_in_one_line(tmp_path: Path) -> None:
    """A bare Python (-I -S: no site-packages) still answers --repository, and a build names what it
    lacks before doing anything."""
    script = [sys.executable, "-I", "-S", str(ROOT / "packaging" / "build_mcpb.py")]
    done = subprocess.run([*script, "--dist", str(tmp_path / "dist")], capture_output=True, text=True)
    assert done.returncode == 1 and done.stdout == "" and len(done.stderr.splitlines()) == 1, done.stderr
    assert done.stderr.startswith("build_mcpb: needs packaging and jsonschema: ")
    assert "./build.sh mcpb" in done.stderr and not (tmp_path / "dist").exists()
    assert subprocess.run([*script, "--repository"], capture_output=True, text=True).stdout.count("/") == 1


def fake_python(tmp_path: Path, shadow: str) -> Path:
    """This interpreter, with the standard library module `shadow` made unimportable (as Debian's
    python3 without python3-venv lacks ensurepip)."""
    hidden = tmp_path / "hidden"
    (hidden / shadow).mkdir(parents=True)
    (hidden / shadow / "__init__.py").write_text(f"raise ImportError('No module named {shadow}')\n")
    wrapper = tmp_path / "python3"
    wrapper.write_text(f'#!/bin/sh\nPYTHONPATH={hidden} exec "{sys.executable}" "$@"\n')
    wrapper.chmod(0o755)
    return wrapper


NO_VENV = "cannot make the build's venv: no venv/ensurepip (Debian, Ubuntu: apt install python3-venv)"


@pytest.mark.process  # a matrix of build.sh runs
@pytest.mark.skipif(sys.platform == "win32", reason="build.sh is bash")
@pytest.mark.parametrize(("python", "says"), [("nothing", "no Python at PYTHON="), ("no-ensurepip", NO_VENV)])
def test_build_sh_names_a_missing_tool_before_building_anything(
    tmp_path: Path, python: str, says: str
) -> None:
    exe = tmp_path / "none" if python == "nothing" else fake_python(tmp_path, "ensurepip")
    env = {**os.environ, "PYTHON": str(exe), "DIST": str(tmp_path / "dist")}
    started = time.monotonic()
    build = ["bash", str(ROOT / "build.sh")]
    done = subprocess.run(build, env=env, capture_output=True, text=True, timeout=60)
    assert done.returncode == 1 and done.stdout == "" and len(done.stderr.splitlines()) == 1, done.stderr
    assert done.stderr.startswith("build.sh: ") and says in done.stderr
    assert not (tmp_path / "dist").exists() and time.monotonic() - started < 30


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
NETWORK_ENV = """SSL_CERT_FILE SSL_CERT_DIR UV_NATIVE_TLS UV_SYSTEM_CERTS UV_INDEX_URL UV_DEFAULT_INDEX
HTTP_PROXY HTTPS_PROXY NO_PROXY http_proxy https_proxy no_proxy""".split()


@pytest.fixture(scope="module")
def built(tmp_path_factory) -> Path:
    return build_bundle(tmp_path_factory.mktemp("mcpb-dist"))


def built_range(built: Path) -> str:
    with zipfile.ZipFile(built / build_mcpb.BUNDLE) as packed:
        return str(bundle_project(packed.read("pyproject.toml").decode())["requires-python"])


def host_env(tmp_path: Path, **extra: str) -> dict[str, str]:
    """A host's environment: uv and uvx first on PATH, then this machine's own PATH (the Pythons uv
    may choose from: uv picks, no UV_PYTHON, and it may not download one), a home and uv cache of
    its own."""
    uv, bin_dir = uv_binary(), tmp_path / "bin"
    bin_dir.mkdir()
    for source in (s for s in (uv, uv.with_name("uvx" + uv.suffix)) if s.exists()):
        shutil.copy2(source, bin_dir / source.name)
    env = {"PATH": f"{bin_dir}{os.pathsep}{os.environ['PATH']}", "HOME": str(tmp_path / "home")}
    env |= {"UV_CACHE_DIR": str(tmp_path / "uv-cache"), "UV_PYTHON_DOWNLOADS": "never"}
    env |= {name: os.environ[name] for name in NETWORK_ENV if name in os.environ} | extra
    if sys.platform == "win32":
        env.update(USERPROFILE=env["HOME"], SYSTEMROOT=os.environ.get("SYSTEMROOT", r"C:\Windows"))
    return env


def unpack(bundle: Path, into: Path) -> Path:
    zipfile.ZipFile(bundle).extractall(into)
    return into


def substitute(value: str, dirname: Path) -> str:
    return value.replace("${__dirname}", str(dirname)).replace("${user_config.robot_md}", str(EXAMPLE))


def session(command: list[str], env: dict[str, str]) -> None:
    """A full session through `command`, started in / with `env` as the whole environment (the
    command is found on env's PATH); 600 s per reply: the first waits while uv installs."""
    started = time.monotonic()
    summary = launched_session(*command, timeout=600, cwd=Path(ROOT.anchor), env=env, inherit_env=False)
    print(f"{summary} (wall {time.monotonic() - started:.1f} s, cold uv cache)")


def python_uv_chose(bundle_dir: Path, env: dict[str, str], python_range: str) -> str:
    """The CPython of the environment uv made for the bundle; it must be one the range admits."""
    command = ["uv", "run", "--directory", str(bundle_dir), "python", "-c", "import sys; print(sys.version)"]
    done = subprocess.run(command, capture_output=True, text=True, timeout=600, env=env, cwd=ROOT.anchor)
    assert done.returncode == 0, done.stderr[-2000:]
    version = done.stdout.split()[0]
    print(f"uv chose CPython {version} (bundle requires-python {python_range})")
    assert version in SpecifierSet(python_range)
    return version


@pytest.mark.heavy
@pytest.mark.skipif(sys.platform == "win32", reason="build.sh is bash")
def test_built_bundle_holds_exactly_its_files(built: Path, tmp_path: Path) -> None:
    """Its files as the quick tests know them, no dependencies inside; dist/server.json names it by
    its SHA-256; `./build.sh mcpb` with PATH holding only what the script itself calls (no node, no
    npx) rebuilds it byte-identical, in SHA256SUMS."""
    bundle = built / build_mcpb.BUNDLE
    python_range = built_range(built)
    with zipfile.ZipFile(bundle) as packed:
        assert {name: packed.read(name) for name in packed.namelist()} == build_mcpb.contents(python_range)
    print(f"{bundle.name}: {bundle.stat().st_size:,} bytes, requires-python {python_range}")
    assert bundle.stat().st_size < 200_000  # kilobytes: no dependencies inside
    digest = hashlib.sha256(bundle.read_bytes()).hexdigest()
    server = json.loads((built / "server.json").read_text(encoding="utf-8"))
    assert server == build_mcpb.server_json(digest)
    assert [p["fileSha256"] for p in server["packages"] if p["registryType"] == "mcpb"] == [digest]
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    for tool in ("bash", "dirname", "rm", "mktemp", "ls", "sed"):
        (bin_dir / tool).symlink_to(str(shutil.which(tool)))
    assert shutil.which("node", path=str(bin_dir)) is shutil.which("npx", path=str(bin_dir)) is None
    env = {**os.environ, "PATH": str(bin_dir), "PYTHON": sys.executable, "DIST": str(tmp_path / "dist")}
    command = ["bash", str(ROOT / "build.sh"), "mcpb"]
    done = subprocess.run(command, env=env, capture_output=True, text=True, timeout=1800, cwd=tmp_path)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    dist = tmp_path / "dist"
    assert sorted(p.name for p in dist.iterdir()) == ["SHA256SUMS", build_mcpb.BUNDLE, "server.json"]
    assert (dist / build_mcpb.BUNDLE).read_bytes() == bundle.read_bytes()
    assert (dist / "SHA256SUMS").read_text() == f"{digest}  {build_mcpb.BUNDLE}\n"


@pytest.mark.heavy
def test_the_docs_state_the_range_the_build_computes(built: Path) -> None:
    floor, stop = re.fullmatch(r">=3\.(\d+),<3\.(\d+)", built_range(built)).groups()  # type: ignore[union-attr]
    readme = " ".join((ROOT / "README.md").read_text(encoding="utf-8").split())
    assert f"brings one (CPython 3.{floor}–3.{int(stop) - 1}, the ones every pinned dependency" in readme
    bundle_doc = " ".join((ROOT / "docs" / "bundle.md").read_text(encoding="utf-8").split())
    assert f"(3.{floor} to 3.{int(stop) - 1} today: below)" in bundle_doc
    assert f"With today's pins that is `{built_range(built)}`" in bundle_doc


@pytest.mark.heavy
def test_the_official_mcpb_cli_accepts_the_bundle(built: Path, tmp_path: Path) -> None:
    """@anthropic-ai/mcpb, where Node is present: validate the manifest, read and unpack the file."""
    npx = shutil.which("npx")
    need(npx is not None, "Node.js with npx (the official mcpb CLI, a second opinion)")

    def mcpb(*args: str | Path) -> str:
        env = {**os.environ, "npm_config_update_notifier": "false", "npm_config_fund": "false"}
        command = [str(npx), "--yes", MCPB_CLI, *map(str, args)]
        done = subprocess.run(command, capture_output=True, text=True, timeout=600, env=env)
        assert done.returncode == 0, done.stdout + done.stderr
        return done.stdout

    bundle = built / build_mcpb.BUNDLE
    bundle_dir = unpack(bundle, tmp_path / "ours")
    assert "passes" in mcpb("validate", bundle_dir / "manifest.json")
    assert "robot-md-mcp.mcpb" in mcpb("info", bundle)
    mcpb("unpack", bundle, tmp_path / "theirs")
    theirs = {p.name: p.read_bytes() for p in (tmp_path / "theirs").iterdir()}
    assert theirs == {p.name: p.read_bytes() for p in bundle_dir.iterdir()}


@pytest.mark.heavy
@pytest.mark.parametrize("how", ["mcp_config", "bare entry point"])
def test_host_runs_the_bundle(built: Path, tmp_path: Path, how: str) -> None:
    """The manifest's mcp_config exactly as written, its substitutions filled, from cwd /, on the Python
    uv chooses; or `uv run --directory <bundle> <entry_point>`, the manifest path in ROBOT_MD_PATH only."""
    bundle_dir = unpack(built / build_mcpb.BUNDLE, tmp_path / "bundle")
    server = json.loads((bundle_dir / "manifest.json").read_text(encoding="utf-8"))["server"]
    config = server["mcp_config"]
    if how == "mcp_config":
        command = [config["command"], *(substitute(a, bundle_dir) for a in config["args"])]
        env = host_env(tmp_path, **{k: substitute(v, bundle_dir) for k, v in config["env"].items()})
    else:
        command = ["uv", "run", "--directory", str(bundle_dir), server["entry_point"]]
        env = host_env(tmp_path, **{rmm.PATH_ENV: str(EXAMPLE)})
    session(command, env)
    python_uv_chose(bundle_dir, env, built_range(built))


UV_PLATFORMS = {  # uv's --python-platform for each platform the bundle serves
    "darwin-arm64": "aarch64-apple-darwin",
    "darwin-x86_64": "x86_64-apple-darwin",
    "win32-amd64": "x86_64-pc-windows-msvc",
    "linux-x86_64": "x86_64-manylinux_2_17",
    "linux-aarch64": "aarch64-manylinux_2_17",
}


@pytest.mark.heavy
def test_uv_installs_every_admitted_cpython_from_wheels_alone(built: Path, tmp_path: Path) -> None:
    """A second opinion on the range, from uv itself (which a host runs): with building from source
    forbidden, the pins install for every platform on every CPython the range admits."""
    assert set(UV_PLATFORMS) == set(build_pyz.PLATFORMS)
    python_range = built_range(built)
    floor, stop = re.fullmatch(r">=3\.(\d+),<3\.(\d+)", python_range).groups()  # type: ignore[union-attr]

    def installs(platform: str, python: str) -> bool:
        pins = tmp_path / f"pins-{platform}-{python}.txt"
        lines = [f"{name}=={version}" for name, version in build_pyz.pins_for((platform, python)).items()]
        pins.write_text("\n".join(lines) + "\n")
        command = [str(uv_binary()), "pip", "install", "--dry-run", "--no-build", "-r", str(pins)]
        command += ["--target", str(tmp_path / "t"), "--python-version", python]
        command += ["--python-platform", UV_PLATFORMS[platform]]
        env = {**os.environ, "UV_CACHE_DIR": str(tmp_path / "uv-cache")}
        return subprocess.run(command, capture_output=True, timeout=600, env=env).returncode == 0

    admitted = [f"3.{minor}" for minor in range(int(floor), int(stop))]
    print(f"requires-python {python_range}: uv installs from wheels alone on {', '.join(UV_PLATFORMS)}")
    assert [(p, v) for p in UV_PLATFORMS for v in admitted if not installs(p, v)] == []


@pytest.mark.heavy
def test_bundle_pins_close_the_dependency_set(built: Path, tmp_path: Path) -> None:
    """uv's universal lock of the bundle's pyproject (darwin, linux, win32; every Python it
    allows) holds exactly the pinned distributions at the pinned versions: nothing unpinned."""
    (tmp_path / "pyproject.toml").write_text(
        build_mcpb.bundle_pyproject(built_range(built)), encoding="utf-8"
    )
    env = {**os.environ, "UV_CACHE_DIR": str(tmp_path / "uv-cache")}
    command = [str(uv_binary()), "lock", "--directory", str(tmp_path)]
    done = subprocess.run(command, capture_output=True, text=True, timeout=600, env=env)
    assert done.returncode == 0, done.stderr[-3000:]
    lock = tomllib.loads((tmp_path / "uv.lock").read_text(encoding="utf-8"))
    locked = {(p["name"], p["version"]) for p in lock["package"] if p["name"] != "robot-md-mcp-bundle"}
    assert locked == canonical_pins()


# Inside Debian sid: uv from PyPI, installed with the only Python on PATH (3.15), which is then all
# uv may choose from; the session helper runs on it too (standard library only).
SID_SCRIPT = """set -eu
python3.15 -m venv /tmp/uv-venv
/tmp/uv-venv/bin/pip install --quiet --disable-pip-version-check "uv==$1"
mkdir /tmp/bin
ln -s /tmp/uv-venv/bin/uv /tmp/bin/uv
ln -s /usr/bin/python3.15 /tmp/bin/python3.15
export PATH=/tmp/bin HOME=/tmp/home UV_CACHE_DIR=/tmp/uv-cache UV_PYTHON_DOWNLOADS=never
python3.15 "$2/tests/support/pyz_session.py" --expect-robot bob --timeout 600 -- \
  uv run --directory "$3" robot_md_mcp.py serve "$2/examples/bob.ROBOT.md"
uv run --directory "$3" python -c 'import sys; print("uv chose CPython", sys.version.split()[0])'
"""


@pytest.mark.heavy
def test_the_bundle_serves_on_debian_sids_cpython_3_15(built: Path, tmp_path: Path) -> None:
    from importlib.metadata import version

    bundle_dir = unpack(built / build_mcpb.BUNDLE, tmp_path / "bundle")
    command = in_sid("bash", "-c", SID_SCRIPT, "sid", version("uv"), ROOT, bundle_dir, bind=(ROOT, tmp_path))
    # this machine's way to PyPI (a CA file, a proxy) passed in, as a host's environment would carry it
    env = {**os.environ, "PASS_ENV": " ".join(name for name in NETWORK_ENV if name in os.environ)}
    done = subprocess.run(command, capture_output=True, text=True, timeout=1800, cwd=tmp_path, env=env)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    print(done.stdout.strip())
    assert "uv chose CPython 3.15." in done.stdout
