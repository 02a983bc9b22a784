"""docs/fleet.md's FastMCP 4 recipe, run as written: three robots, each our server over HTTP with a token of
its own, behind the page's script (FastMCP's mounted proxies) under the real FastMCP 4.x, installed from
PyPI into a venv of its own, `.cache/fastmcp-<version>/` (it is no dependency of ours). Through the SDK's
Client: every tool of every robot answers as the robot does directly, every robot's context reads as it
does directly, one prompt per robot. And what FastMCP does with the robot card: the tool's link to it is
not rewritten, so a host following it does not find the card through the gateway."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import anyio
import pytest
from agent import BOB, named, tool_calls
from conftest import ROOT, need
from http_served import sdk_client
from serving import Served, bearer, launched, private_token

import robot_md_mcp as rmm

pytestmark = pytest.mark.heavy

FASTMCP = "fastmcp==4.2.3"
VENV = ROOT / ".cache" / f"fastmcp-{FASTMCP.split('==')[1]}"
ROBOTS = ("bob", "arm", "rover")


def fastmcp_python() -> Path | None:
    """The venv's Python with FastMCP, made (from PyPI) on first use; None if it cannot be."""
    python = VENV / ("Scripts/python.exe" if os.name == "nt" else "bin/python")
    marker = VENV / "pins.txt"
    if marker.exists() and marker.read_text(encoding="utf-8") == FASTMCP:
        return python
    made = subprocess.run(
        [sys.executable, "-m", "venv", "--clear", str(VENV)], capture_output=True, timeout=300
    )
    if made.returncode != 0:
        return None
    pip = [str(python), "-m", "pip", "install", "--quiet", "--disable-pip-version-check", FASTMCP]
    if subprocess.run(pip, capture_output=True, timeout=900).returncode != 0:
        return None
    marker.write_text(FASTMCP, encoding="utf-8")
    return python


def recipe(name: str) -> str:
    """The code block right after <!-- fleet:NAME --> in docs/fleet.md."""
    page = (ROOT / "docs" / "fleet.md").read_text(encoding="utf-8")
    found = re.search(rf"<!-- fleet:{name} -->\n```\w+\n(.*?)\n```", page, re.DOTALL)
    assert found, f"no fleet:{name} block in docs/fleet.md"
    return found[1]


def answer(result: Any) -> tuple[bool, Any, list[str]]:
    return bool(result.is_error), result.structured_content, [getattr(c, "text", "") for c in result.content]


@pytest.fixture(scope="module")
def fleet(tmp_path_factory: pytest.TempPathFactory):
    python = fastmcp_python()
    need(python is not None, f"{FASTMCP} could not be installed into {VENV}")
    folder = tmp_path_factory.mktemp("fleet")
    servers, robots = {}, {}
    try:
        for name in ROBOTS:
            manifest = folder / f"{name}.ROBOT.md"
            manifest.write_text(named(name, BOB), encoding="utf-8")
            token_file = folder / f"{name}.token"
            private_token(token_file)
            servers[name] = Served("--http", "127.0.0.1:0", "--token-file", str(token_file), path=manifest)
            robots[name] = {"url": servers[name].url, "token_file": str(token_file)}
        (folder / "robots.json").write_text(json.dumps(robots), encoding="utf-8")
        (folder / "fleet_gateway.py").write_text(recipe("fastmcp"), encoding="utf-8")
        yield python, folder, servers, robots
    finally:
        for server in servers.values():
            assert server.stop() == 0
            assert "Traceback" not in server.stderr, server.stderr


def gateway_client(python: Path, folder: Path) -> Any:
    """The recipe's gateway over stdio, started as its page says."""
    return launched(folder / "fleet_gateway.py", folder / "robots.json", command=[python])


def direct_client(robot: dict[str, str]) -> tuple[Any, Any]:
    """The SDK's Client straight to one robot's server (its token as a bearer), and its HTTP client."""
    http = bearer(Path(robot["token_file"]).read_text(encoding="utf-8"))
    return sdk_client(http, robot["url"], "legacy"), http


def test_the_recipe_serves_every_tool_context_and_a_prompt_of_every_robot(fleet) -> None:
    python, folder, _, robots = fleet

    async def check() -> None:
        async with gateway_client(python, folder) as gateway:
            tools = {t.name: t for t in (await gateway.list_tools()).tools}
            resources = [str(r.uri) for r in (await gateway.list_resources()).resources]
            prompts = {p.name for p in (await gateway.list_prompts()).prompts}
            for name, robot in robots.items():
                client, http = direct_client(robot)
                async with http, client as direct:
                    theirs = {t.name: t for t in (await direct.list_tools()).tools}
                    assert {f"{name}_{tool}" for tool in theirs} <= set(tools)
                    for tool, spec in theirs.items():
                        through = tools[f"{name}_{tool}"]
                        assert (through.title, through.description) == (spec.title, spec.description)
                        args = dict(tool_calls())[tool]  # (`view`: its last kind)
                        got = answer(await gateway.call_tool(f"{name}_{tool}", args))
                        assert got == answer(await direct.call_tool(tool, args)), (name, tool)
                    context = next(
                        r for r in resources if r.startswith(f"robot-md://{name}/") and r.endswith("/context")
                    )
                    own = next(
                        str(r.uri)
                        for r in (await direct.list_resources()).resources
                        if str(r.uri).endswith("/context")
                    )
                    assert (await gateway.read_resource(context)).contents[0].text == (
                        (await direct.read_resource(own)).contents[0].text
                    )
                    assert f"{name}_brief-me" in prompts
                    via = await gateway.get_prompt(f"{name}_brief-me", {})
                    assert via.messages == (await direct.get_prompt("brief-me", {})).messages
            assert len(tools) == sum(1 for t in tools if t.split("_", 1)[0] in robots)

    anyio.run(check)


def test_what_fastmcp_does_with_the_robot_card(fleet) -> None:
    """docs/fleet.md's account of the card behind FastMCP: the brief tool's `_meta.ui.resourceUri` comes
    through unchanged, and reading that URI through the gateway fails (FastMCP knows resources only under
    URIs it rewrote); the card each robot lists is in the gateway's list under a rewritten URI, and reads
    there."""
    python, folder, _, robots = fleet

    async def check() -> None:
        async with gateway_client(python, folder) as gateway:
            tools = {t.name: t for t in (await gateway.list_tools()).tools}
            listed = [
                str(r.uri)
                for r in (await gateway.list_resources()).resources
                if str(r.uri).startswith("ui://")
            ]
            for name in robots:
                link = (tools[f"{name}_brief"].meta or {})["ui"]["resourceUri"]
                assert link == rmm.CARD_URI
                with pytest.raises(Exception, match=r"not found|Unknown resource"):
                    await gateway.read_resource(link)
            renamed = [rmm.CARD_URI.replace("ui://", f"ui://{name}/", 1) for name in robots]
            assert sorted(listed) == sorted(renamed)
            for uri in listed:
                assert "<html" in (await gateway.read_resource(uri)).contents[0].text.lower()

    anyio.run(check)
