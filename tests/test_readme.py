"""The README's promises, run as written."""

from __future__ import annotations

import json
import re
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


@pytest.mark.anyio
async def test_claude_desktop_snippet_works_as_written() -> None:
    """The snippet's command and args, with only the placeholder folder filled in."""
    entry = json.loads(block_after("claude-desktop-config"))["mcpServers"]["robot-md"]
    fill = lambda s: s.replace("/path/to/robot-md-mcp", str(ROOT))  # noqa: E731
    command, args = fill(entry["command"]), [fill(a) for a in entry["args"]]
    need(Path(command).exists(), f"{command} exists once the README's quick start has run")
    assert args == [str(EXAMPLE)]
    async with Client(StdioServerParameters(command=command, args=args), mode="legacy") as client:
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


def test_quick_start_is_two_commands() -> None:
    serve, test = block_after("quickstart:serve"), block_after("quickstart:test")
    assert "\n" not in serve and "\n" not in test
    assert serve.endswith("robot-md-mcp examples/bob.ROBOT.md")
    assert test == ".venv/bin/python -m pytest"
    assert "../shared" not in serve + test


def test_version_in_readme_matches() -> None:
    assert f"@v{rmm.__version__}" in README
