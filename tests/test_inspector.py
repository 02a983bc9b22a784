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


def inspector(*args: str) -> tuple[Any, str]:
    """The Inspector's answer to one request (`args`), and what it said on stderr."""
    node = node22()
    cli = npm_tool(*INSPECTOR) / "node_modules" / ".bin" / "mcp-inspector"
    argv = [str(cli), "--cli", *SERVER, str(EXAMPLE), *args]
    done = subprocess.run(
        argv, capture_output=True, text=True, timeout=120, env=node_env(node), stdin=subprocess.DEVNULL
    )
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    return json.loads(done.stdout), done.stderr


def test_tools_list_passes_the_inspectors_portability_check() -> None:
    """The Inspector lints every tool's schemas (untyped fields, `type` lists, remote refs) and
    reports on stderr; it has nothing to say of ours."""
    listed, said = inspector("--method", "tools/list", "--strict")
    tools = {t["name"]: t for t in listed["tools"]}
    assert list(tools) == list(m.TOOLS)
    assert tools["validate"]["annotations"]["readOnlyHint"] is True
    assert "Schema portability" not in said and "Warning: tool" not in said, said[-3000:]


def test_tools_call_brief_view_and_validate() -> None:
    """The tools a tools-only host calls, through a third-party client: the briefing as text, a view
    with its argument, and validate's verdict."""
    served = m.ManifestFile(EXAMPLE).version()  # as served: its signature checked
    briefed, _ = inspector("--method", "tools/call", "--tool-name", "brief")
    assert briefed["content"] == [{"type": "text", "text": served.text(m.VIEW["context"])}]
    viewed, _ = inspector("--method", "tools/call", "--tool-name", "view", "--tool-arg", "kind=safety")
    assert viewed["structuredContent"] == {"view": "safety", "value": served.manifest.frontmatter["safety"]}
    validated, _ = inspector("--method", "tools/call", "--tool-name", "validate")
    assert not validated.get("isError")
    assert validated["structuredContent"] == m.validate(served.manifest).as_dict()
    assert validated["structuredContent"]["ok"] is True


def test_resources_list_and_read() -> None:
    listed, _ = inspector("--method", "resources/list")
    uris = {r["uri"] for r in listed["resources"]}
    assert {f"robot-md://bob/{kind}" for kind in ("frontmatter", "capabilities", "safety", "body")} <= uris
    read, _ = inspector("--method", "resources/read", "--uri", "robot-md://bob/safety")
    (content,) = read["contents"]
    assert content["mimeType"] == "application/json"
    assert json.loads(content["text"]) == m.parse(EXAMPLE.read_text(encoding="utf-8")).frontmatter["safety"]
