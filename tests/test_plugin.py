"""The Claude Code plugin and marketplace (packaging/plugin/, .claude-plugin/marketplace.json), its Agent
Plugins layout, and the README's VS Code and Cursor install links: what they say, and (heavy) that the real
Claude Code CLI installs the plugin and connects to its server, and that each link's command serves."""

from __future__ import annotations

import base64
import json
import os
import re
import shutil
import subprocess
import sys
import urllib.parse
from pathlib import Path

import pytest
from conftest import EXAMPLE, ROOT, need
from node22 import CLAUDE_CODE_VERSION, claude_code
from serving import launched_session, server_argv

import robot_md_mcp as rmm

PLUGIN = ROOT / "packaging" / "plugin"
MARKETPLACE = ROOT / ".claude-plugin" / "marketplace.json"
README = (ROOT / "README.md").read_text(encoding="utf-8")
REPOSITORY = re.search(
    r'^Repository = "([^"]+)"', (ROOT / "pyproject.toml").read_text(encoding="utf-8"), re.M
)[1]  # type: ignore[index]
TAG = f"v{rmm.__version__}"
LAUNCH = ["uvx", "--from", f"git+{REPOSITORY}@{TAG}", "robot-md-mcp"]


def load(path: Path) -> dict:
    return json.loads(path.read_text(encoding="utf-8"))


def launch_of(entry: dict) -> list[str]:
    return [entry["command"], *entry.get("args", [])]


# --- what the files say ----------------------------------------------------------------------


def test_plugin_launches_this_release_without_a_path() -> None:
    """Both layouts start `uvx --from git+<Repository>@v<version> robot-md-mcp`: this release, and no
    manifest path (the walk up finds the project's ROBOT.md)."""
    claude = load(PLUGIN / ".mcp.json")["mcpServers"]
    agents = load(PLUGIN / "mcp.json")["mcpServers"]
    assert list(claude) == list(agents) == ["robot-md"]
    assert launch_of(claude["robot-md"]) == launch_of(agents["robot-md"]) == LAUNCH


@pytest.mark.parametrize("page", ["README.md", "packaging/plugin/README.md", "docs/clients.md"])
def test_pages_name_the_launch_of_this_release(page: str) -> None:
    text = (ROOT / page).read_text(encoding="utf-8")
    named = re.findall(rf"git\+{re.escape(REPOSITORY)}@(v[\w.-]+)", text)
    assert named and set(named) == {TAG}


def test_plugin_manifests_and_marketplace_agree() -> None:
    claude, agents, market = (
        load(PLUGIN / ".claude-plugin" / "plugin.json"),
        load(PLUGIN / "plugin.json"),
        load(MARKETPLACE),
    )
    same = ("name", "version", "description", "homepage", "repository", "license", "keywords", "author")
    assert {k: claude[k] for k in same} == {k: agents[k] for k in same}
    assert claude["version"] == rmm.__version__ and claude["repository"] == claude["homepage"] == REPOSITORY
    [entry] = market["plugins"]
    assert entry["source"] == "./packaging/plugin" and (ROOT / entry["source"]).resolve() == PLUGIN
    assert (entry["name"], entry["version"], entry["description"]) == (
        claude["name"],
        claude["version"],
        claude["description"],
    )
    assert market["owner"]["name"]
    assert "cannot move the robot" in claude["description"].lower()


def test_readme_installs_this_plugin_from_this_repository() -> None:
    """The README's Claude Code line adds this repository as a marketplace and installs its plugin
    (the heavy test below runs the same two steps from the checkout)."""
    market = load(MARKETPLACE)
    owner_repo = urllib.parse.urlsplit(REPOSITORY).path.strip("/")
    line = f"claude plugin marketplace add {owner_repo} && claude plugin install "
    assert f"{line}{market['plugins'][0]['name']}@{market['name']}\n" in README


def test_plugin_declares_the_hosts_its_server_reaches() -> None:
    hosts = set(load(PLUGIN / ".claude-plugin" / "plugin.json")["network"]["hosts"])
    assert urllib.parse.urlsplit(REPOSITORY).hostname in hosts  # the tagged source
    assert {"pypi.org", "files.pythonhosted.org"} <= hosts  # its dependencies


def test_plugin_icon_is_the_bundles() -> None:
    icon = PLUGIN / ".claude-plugin" / "icon.png"
    assert icon.read_bytes() == (ROOT / "packaging" / "mcpb" / "icon.png").read_bytes()


def test_the_skill_names_only_what_the_server_serves() -> None:
    skill = (PLUGIN / "skills" / "robot-md" / "SKILL.md").read_text(encoding="utf-8")
    named = set(re.findall(r"`([a-z_-]+)`", skill))
    served = set(rmm.TOOLS) | set(rmm.PROMPTS) | {v.kind for v in rmm.VIEWS} | {"robot-md"}
    assert (
        set("brief check_action validate check-safety manifest-status doctor_summary verify".split()) <= named
    )
    assert named <= served, named - served
    for uri in re.findall(r"`(robot-md://[^`]+)`", skill):
        assert uri.rsplit("/", 1)[1] in {v.kind for v in rmm.VIEWS}, uri


SKILLSAW = "skillsaw==0.22.0"  # a linter for Agent Plugins 1.0, Claude Code plugins and marketplaces


@pytest.mark.heavy
@pytest.mark.parametrize("target", [PLUGIN, ROOT], ids=["plugin", "marketplace"])
def test_an_independent_checker_accepts_plugin_and_marketplace(target: Path) -> None:
    """skillsaw (PyPI) applies the Agent Plugins 1.0 rules (agent-plugin-json-valid, -mcp-valid) and Claude
    Code's plugin and marketplace rules; --strict fails on any warning. (Tried: a field the manifest may
    not have, a bad name or $schema, an author's unknown field, an mcp.json server not stdio, a skill's
    name not its folder's, a description over 1,024 characters: each fails it.)"""
    where = ROOT / ".cache" / SKILLSAW.replace("==", "-")
    if not (where / "skillsaw").is_dir():
        pip = [sys.executable, "-m", "pip", "install", "--quiet", "--target", str(where), SKILLSAW]
        done = subprocess.run(pip, capture_output=True, text=True, timeout=600)
        need(done.returncode == 0, f"pip install {SKILLSAW}: {done.stderr[-500:]}")
    env = {**os.environ, "PYTHONPATH": str(where)}
    lint = [sys.executable, "-m", "skillsaw", "lint", "--strict", "--no-color", str(target)]
    done = subprocess.run(lint, capture_output=True, text=True, env=env, timeout=300)
    assert done.returncode == 0 and "Errors:   0" in done.stdout, done.stdout[-3000:] + done.stderr[-1000:]


# --- the install links -----------------------------------------------------------------------


def readme_link(prefix: str) -> str:
    [link] = [t for t in re.findall(r"\]\(([^)\s]+)\)", README) if t.startswith(prefix)]
    return link


def vscode_entry() -> dict:
    """`vscode:mcp/install?{encodeURIComponent(JSON)}` decoded."""
    link = readme_link("vscode:mcp/install?")
    return json.loads(urllib.parse.unquote(link.split("?", 1)[1]))


def cursor_entry() -> tuple[str, dict]:
    """`cursor://anysphere.cursor-deeplink/mcp/install?name=…&config=<base64 JSON>` decoded."""
    link = readme_link("cursor://anysphere.cursor-deeplink/mcp/install?")
    query = urllib.parse.parse_qs(urllib.parse.urlsplit(link).query, strict_parsing=True)
    assert set(query) == {"name", "config"}
    return query["name"][0], json.loads(base64.b64decode(query["config"][0], validate=True))


LINK_LAUNCH = [*LAUNCH, "${workspaceFolder}"]


def test_install_links_describe_this_release_for_the_open_folder() -> None:
    vscode = vscode_entry()
    assert (vscode["name"], vscode["type"]) == ("robot-md", "stdio") and launch_of(vscode) == LINK_LAUNCH
    name, cursor = cursor_entry()
    assert name == "robot-md" and launch_of(cursor) == LINK_LAUNCH and set(cursor) == {"command", "args"}


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    """A project folder holding bob's manifest as ROBOT.md, as an editor has it open."""
    folder = tmp_path / "project"
    folder.mkdir()
    shutil.copy(EXAMPLE, folder / "ROBOT.md")
    return folder


@pytest.mark.process  # the default tier: the links' words above, the walk up from `${…}` in test_launch.py
@pytest.mark.parametrize("expanded", [True, False], ids=["expanded", "left-literal"])
def test_install_links_serve_the_open_folder(expanded: bool, workspace: Path, tmp_path: Path) -> None:
    """What each link starts, after uvx has fetched it: robot-md-mcp with the link's own arguments, the
    workspace variable as the editor expands it, or left as written (then the walk up from the folder).
    Cursor's link starts the same words (test_install_links_describe_this_release_for_the_open_folder)."""
    link = vscode_entry()["args"]
    args = link[link.index("robot-md-mcp") + 1 :]
    if expanded:
        args = [a.replace("${workspaceFolder}", str(workspace)) for a in args]
    assert launched_session(*server_argv(*args), cwd=workspace if not expanded else tmp_path).startswith("ok")


# --- heavy: the real launcher and the real Claude Code ---------------------------------------


@pytest.fixture
def uvx_env(tmp_path: Path) -> dict[str, str]:
    """The environment in which the plugin's and the links' `uvx --from git+<Repository>@<tag>` fetch a
    local clone of this checkout's HEAD, tagged as the release, instead of GitHub (git's insteadOf);
    dependencies come from PyPI into a uv cache kept in .cache/ across runs."""
    uv = Path(sys.executable).with_name("uvx")
    need(uv.exists(), "uv (in the test extra)")
    need(shutil.which("git") is not None, "git")
    clone = tmp_path / "clone"
    subprocess.run(["git", "clone", "--quiet", str(ROOT), str(clone)], check=True, timeout=120)
    subprocess.run(["git", "-C", str(clone), "tag", TAG], check=True)
    return {
        **{k: v for k, v in os.environ.items() if not k.startswith("GIT_CONFIG") and k != rmm.PATH_ENV},
        "PATH": f"{uv.parent}{os.pathsep}{os.environ.get('PATH', '')}",
        "UV_CACHE_DIR": str(ROOT / ".cache" / "uv-plugin"),
        "UV_TOOL_DIR": str(tmp_path / "uv-tools"),
        "GIT_CONFIG_COUNT": "1",
        "GIT_CONFIG_KEY_0": f"url.{clone.as_uri()}.insteadOf",
        "GIT_CONFIG_VALUE_0": REPOSITORY,
    }


@pytest.mark.heavy
@pytest.mark.parametrize("client", ["vscode", "cursor"])
def test_install_links_start_what_they_describe(
    client: str, workspace: Path, uvx_env: dict[str, str]
) -> None:
    entry = vscode_entry() if client == "vscode" else cursor_entry()[1]
    argv = [a.replace("${workspaceFolder}", str(workspace)) for a in launch_of(entry)]
    session = launched_session(*argv, cwd=workspace, env=uvx_env, inherit_env=False, timeout=600)
    assert session.startswith("ok: "), session


@pytest.mark.heavy
def test_claude_code_installs_the_plugin_and_connects(tmp_path: Path, uvx_env: dict[str, str]) -> None:
    """The real Claude Code CLI in an empty home: the plugin and marketplace validate, the marketplace
    is added from this checkout, the plugin installs, and `claude mcp list` connects to its server in a
    folder below a ROBOT.md, and fails to in one with none (so the walk up is what found it). No account."""
    claude = str(claude_code())
    home = tmp_path / "home"
    home.mkdir()
    env = {
        **uvx_env,
        "HOME": str(home),
        "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
        "DISABLE_TELEMETRY": "1",
        "DISABLE_AUTOUPDATER": "1",
    }

    def run(*args: str, cwd: Path = home) -> str:
        done = subprocess.run([claude, *args], capture_output=True, text=True, cwd=cwd, env=env, timeout=300)
        assert done.returncode == 0, f"claude {' '.join(args)}: {done.stdout[-2000:]}{done.stderr[-2000:]}"
        return done.stdout

    assert run("--version").startswith(CLAUDE_CODE_VERSION)
    validated = run("plugin", "validate", str(PLUGIN))
    # The plugin directory's checks (icon, declared hosts, README) as this pinned release words them.
    assert "Validation passed" in validated and "found nothing to report" in validated, validated
    assert "Validation passed" in run("plugin", "validate", str(ROOT))
    run("plugin", "marketplace", "add", str(ROOT))
    run("plugin", "install", "robot-md-mcp@robot-md-mcp")
    [installed] = json.loads(run("plugin", "list", "--json"))
    assert (installed["id"], installed["enabled"], installed["version"]) == (
        "robot-md-mcp@robot-md-mcp",
        True,
        rmm.__version__,
    )
    assert launch_of(installed["mcpServers"]["robot-md"]) == LAUNCH
    # The first start fetches the release into uv's cache; a user's first `claude` session does that too.
    subprocess.run([*LAUNCH, "--version"], env=env, capture_output=True, timeout=600, check=True)

    project = tmp_path / "project"
    (project / "src").mkdir(parents=True)
    shutil.copy(EXAMPLE, project / "ROBOT.md")
    server_line = re.compile(r"^plugin:robot-md-mcp:robot-md: .*$", re.M)
    connected = server_line.search(run("mcp", "list", cwd=project / "src"))
    assert connected and "✔ Connected" in connected[0], connected
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    failed = server_line.search(run("mcp", "list", cwd=elsewhere))
    assert failed and "Failed to connect" in failed[0], failed
