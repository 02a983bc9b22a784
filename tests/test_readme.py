"""The README's promises, run as written."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pytest
from conftest import EXAMPLE, ROOT, need
from mcp import Client, StdioServerParameters

import robot_md_mcp as rmm

README = (ROOT / "README.md").read_text(encoding="utf-8")


def block_after(marker: str) -> str:
    match = re.search(rf"<!-- {re.escape(marker)} -->\n```\w*\n(.*?)\n```", README, re.S)
    assert match, marker
    return match.group(1)


@pytest.mark.heavy  # builds the pyz
@pytest.mark.anyio
async def test_claude_desktop_snippet_works_as_written(universal_pyz: Path) -> None:
    """The snippet's command and args, with only the placeholders filled in:
    `python3` on PATH runs the universal pyz on the bundled example."""
    entry = json.loads(block_after("claude-desktop-config"))["mcpServers"]["robot-md"]
    assert entry["command"] == "python3"
    assert entry["args"] == ["/path/to/robot-md-mcp.pyz", "/path/to/ROBOT.md"]
    need(shutil.which("python3") is not None, "python3 on PATH")
    filled = {"/path/to/robot-md-mcp.pyz": str(universal_pyz), "/path/to/ROBOT.md": str(EXAMPLE)}
    params = StdioServerParameters(command=entry["command"], args=[filled[a] for a in entry["args"]])
    async with Client(params, mode="legacy") as client:
        assert client.server_info.name == "robot-md-mcp"
        uris = [r.uri for r in (await client.list_resources()).resources]
        assert uris == [f"robot-md://bob/{v.kind}" for v in rmm.VIEWS]
        result = await client.call_tool("validate", {})
        assert result.structured_content == {
            "ok": True,
            "summary": "bob (arm+camera, 6 DoF, 5 capabilities)",
            "errors": [],
            "warnings": [],
        }


@pytest.mark.anyio
async def test_the_quick_start_command_serves(tmp_path: Path) -> None:
    """The clone's console script, as the README's alternative entry says."""
    command = ROOT / ".venv" / "bin" / "robot-md-mcp"
    need(command.exists(), f"{command} exists once the README's quick start has run")
    async with Client(
        StdioServerParameters(command=str(command), args=[str(EXAMPLE)]), mode="legacy"
    ) as client:
        assert (await client.call_tool("validate", {})).structured_content["ok"] is True


def test_quick_start_is_two_commands() -> None:
    serve, test = block_after("quickstart:serve"), block_after("quickstart:test")
    assert "\n" not in serve and "\n" not in test
    assert serve.endswith("robot-md-mcp examples/bob.ROBOT.md")
    assert test == ".venv/bin/python -m pytest"
    assert "../shared" not in serve + test


def test_version_in_readme_matches() -> None:
    assert f"@v{rmm.__version__}" in README
