"""The MCP Inspector's CLI (a real third-party client) drives the stdio server."""

from __future__ import annotations

import json
import subprocess
from typing import Any

import pytest
from conftest import EXAMPLE, SERVER
from node22 import node22, node_env, npm_tool

import robot_md_mcp as m

pytestmark = pytest.mark.heavy  # installs Node 22 and the MCP Inspector from npm

INSPECTOR = ("@modelcontextprotocol/inspector", "2.12.0")
BOB_IS_VALID = {
    "ok": True,
    "summary": "bob (arm+camera, 6 DoF, 5 capabilities)",
    "errors": [],
    "warnings": [],
    "hints": [],
}


def inspector(*args: str) -> Any:
    node = node22()
    cli = npm_tool(*INSPECTOR) / "node_modules" / ".bin" / "mcp-inspector"
    done = subprocess.run(
        [str(cli), "--cli", *SERVER, str(EXAMPLE), *args],
        capture_output=True,
        text=True,
        timeout=120,
        env=node_env(node),
        stdin=subprocess.DEVNULL,
    )
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    return json.loads(done.stdout)


@pytest.fixture(scope="module")
def bob() -> m.Manifest:
    return m.parse(EXAMPLE.read_text(encoding="utf-8"))


def test_tools_list() -> None:
    tools = {t["name"]: t for t in inspector("--method", "tools/list")["tools"]}
    assert list(tools) == list(m.TOOLS)
    assert tools["validate"]["annotations"]["readOnlyHint"] is True


def test_tool_schemas_pass_the_inspectors_portability_check() -> None:
    """The Inspector lints every tool's schemas (untyped fields, `type` lists, remote refs) and
    reports on stderr; it has nothing to say of ours."""
    node = node22()
    cli = npm_tool(*INSPECTOR) / "node_modules" / ".bin" / "mcp-inspector"
    done = subprocess.run(
        [str(cli), "--cli", *SERVER, str(EXAMPLE), "--method", "tools/list", "--strict"],
        capture_output=True,
        text=True,
        timeout=120,
        env=node_env(node),
        stdin=subprocess.DEVNULL,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert "Schema portability" not in done.stderr and "Warning: tool" not in done.stderr, done.stderr[-3000:]


def test_tools_call_brief_and_view(bob: m.Manifest) -> None:
    """The tools a tools-only host calls, through a third-party client: the briefing as text, and a
    view with its argument."""
    briefed = inspector("--method", "tools/call", "--tool-name", "brief")
    served = m.ManifestFile(EXAMPLE).version()  # as served: its signature checked
    assert briefed["content"] == [{"type": "text", "text": served.text(m.VIEW["context"])}]
    viewed = inspector("--method", "tools/call", "--tool-name", "view", "--tool-arg", "kind=safety")
    assert viewed["structuredContent"] == {"view": "safety", "value": bob.frontmatter["safety"]}


def test_resources_list() -> None:
    uris = {r["uri"] for r in inspector("--method", "resources/list")["resources"]}
    assert {f"robot-md://bob/{kind}" for kind in ("frontmatter", "capabilities", "safety", "body")} <= uris


def test_resources_read(bob: m.Manifest) -> None:
    (content,) = inspector("--method", "resources/read", "--uri", "robot-md://bob/safety")["contents"]
    assert content["mimeType"] == "application/json"
    assert json.loads(content["text"]) == bob.frontmatter["safety"]


def test_tools_call_validate() -> None:
    result = inspector("--method", "tools/call", "--tool-name", "validate")
    assert not result.get("isError")
    assert result["structuredContent"] == BOB_IS_VALID
