"""docs/clients.md's entries for the token-protected HTTP server: the VS Code and Cursor JSON parse and
have each client's documented shape with the token kept out of the file, what they send is what our
server accepts, and (heavy) the Claude Code commands, run with the real CLI from npm, write entries that
`claude mcp get` reads back and that connect with the right token and fail with a wrong one."""

from __future__ import annotations

import json
import os
import re
import shlex
import subprocess
from pathlib import Path

import pytest
from conftest import ROOT
from serving import INIT, MCP_HEADERS, Served, private_token

import robot_md_mcp as rmm

DOC = (ROOT / "docs" / "clients.md").read_text(encoding="utf-8")
TOKEN = "documented-token-0123456789abcdef"
TOKEN_VARIABLE = "ROBOT_MD_MCP_TOKEN"


def block(name: str) -> str:
    found = re.search(rf"<!-- http-client:{name} -->\n```\w+\n(.*?)```\n", DOC, re.DOTALL)
    assert found, f"docs/clients.md has no http-client:{name} block"
    return found[1]


def served_command() -> list[str]:
    """The doc's serve line: its address and the host name clients use."""
    section = DOC.split("## Over HTTP, with a token", 1)[1]
    line = re.search(r"```sh\n(python3 robot-md-mcp\.pyz .*)\n```", section)
    assert line, "the section shows how to serve"
    return shlex.split(line[1])


def documented_url() -> str:
    argv = served_command()
    host = argv[argv.index("--allow-host") + 1]
    port = argv[argv.index("--http") + 1].rpartition(":")[2]
    return f"http://{host}:{port}/mcp"


def test_vscode_entry_has_the_documented_shape_and_no_token() -> None:
    """VS Code's mcp.json reference: `servers` of `"type": "http"` with `url` and `headers`; `inputs` of
    `promptString` with `password: true`, used as `${input:ID}`."""
    config = json.loads(block("vscode"))
    assert set(config) == {"inputs", "servers"}
    (entry,) = config["servers"].values()
    assert set(entry) == {"type", "url", "headers"} and entry["type"] == "http"
    assert entry["url"] == documented_url()
    (header,) = entry["headers"].items()
    found = re.fullmatch(r"Bearer \$\{input:([\w-]+)\}", header[1])
    assert header[0] == "Authorization" and found, header
    (prompt,) = config["inputs"]
    assert prompt == {
        "type": "promptString",
        "id": found[1],
        "description": prompt["description"],
        "password": True,
    }
    assert isinstance(prompt["description"], str) and prompt["description"]


def test_cursor_entry_has_the_documented_shape_and_no_token() -> None:
    """Cursor's mcp.json: `mcpServers` entries with `url` and `headers`; `${env:NAME}` interpolated."""
    config = json.loads(block("cursor"))
    assert set(config) == {"mcpServers"}
    (entry,) = config["mcpServers"].values()
    assert entry == {
        "url": documented_url(),
        "headers": {"Authorization": f"Bearer ${{env:{TOKEN_VARIABLE}}}"},
    }


def test_claude_code_commands_keep_the_token_out_of_the_project() -> None:
    user = shlex.split(block("claude-code-user"))
    project = shlex.split(block("claude-code-project"))
    for argv, scope in ((user, "user"), (project, "project")):
        assert argv[:3] == ["claude", "mcp", "add"]
        assert argv[argv.index("--scope") + 1] == scope and argv[argv.index("--transport") + 1] == "http"
        assert documented_url() in argv
    # user scope: the shell expands the variable (the token lands in ~/.claude.json, outside the project);
    # project scope: single quotes keep ${…} for Claude Code to expand, so .mcp.json holds no token.
    assert f'"Authorization: Bearer ${TOKEN_VARIABLE}"' in block("claude-code-user")
    assert f"'Authorization: Bearer ${{{TOKEN_VARIABLE}}}'" in block("claude-code-project")


@pytest.mark.anyio
async def test_what_the_entries_send_is_accepted(tmp_path: Path) -> None:
    """Our server, serving as the doc says (its --allow-host name, a token): the request each client
    makes from its entry, the variable replaced by the token, is answered; without the token it is 401."""
    from http_served import served_in_process

    private_token(token_file := tmp_path / "token", TOKEN + "\n")
    argv = served_command()
    host = argv[argv.index("--allow-host") + 1]
    listener = rmm.open_listener("127.0.0.1:0", [host], str(token_file))
    listener.socket.close()
    port = listener.url.rsplit(":", 1)[1].split("/")[0]
    initialize = json.dumps(INIT)
    async with served_in_process(listener=listener) as (http, _):
        vscode: dict[str, str] = json.loads(block("vscode"))["servers"]["robot-md"]["headers"]
        cursor: dict[str, str] = json.loads(block("cursor"))["mcpServers"]["robot-md"]["headers"]
        for headers in (vscode, cursor, {}):
            sent = {k: re.sub(r"\$\{(input|env):[^}]*\}", TOKEN, v) for k, v in headers.items()}
            sent |= {**MCP_HEADERS, "Host": f"{host}:{port}"}
            answer = await http.post(rmm.MCP_PATH, content=initialize, headers=sent)
            assert answer.status_code == (200 if headers else 401), (headers, answer.text[:200])


@pytest.mark.heavy
def test_claude_code_adds_reads_back_and_connects(tmp_path: Path) -> None:
    """Both documented `claude mcp add` lines, run by bash as a user would (the URL pointed at a real
    token-protected server here), in an empty home with no account."""
    from node22 import claude_code, node22

    claude = claude_code()
    private_token(token_file := tmp_path / "token", TOKEN)
    server = Served("--http", "127.0.0.1:0", "--token-file", str(token_file))
    home, project = tmp_path / "home", tmp_path / "project"
    home.mkdir()
    project.mkdir()
    env = {
        **os.environ,
        "HOME": str(home),
        "PATH": f"{claude.parent}{os.pathsep}{node22().parent}{os.pathsep}{os.environ['PATH']}",
        "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
        "DISABLE_TELEMETRY": "1",
        "DISABLE_AUTOUPDATER": "1",
        TOKEN_VARIABLE: TOKEN,
    }

    def run(command: str, **extra: str) -> str:
        done = subprocess.run(
            ["bash", "-c", command],
            capture_output=True,
            text=True,
            cwd=project,
            env={**env, **extra},
            timeout=300,
        )
        assert done.returncode == 0, f"{command}: {done.stdout[-2000:]}{done.stderr[-2000:]}"
        return done.stdout + done.stderr

    try:
        for name, scope in (("claude-code-user", "user"), ("claude-code-project", "project")):
            run(block(name).strip().replace(documented_url(), server.url))
            shown = run("claude mcp get robot-md")
            assert server.url in shown and "http" in shown.lower(), shown
            if scope == "user":
                stored = (home / ".claude.json").read_text(encoding="utf-8")
                assert TOKEN in stored and not (project / ".mcp.json").exists()
            else:
                stored = (project / ".mcp.json").read_text(encoding="utf-8")
                assert TOKEN not in stored and f"${{{TOKEN_VARIABLE}}}" in stored, stored
                pending = re.search(r"^robot-md: .*$", run("claude mcp list"), re.M)
                assert pending and "approval" in pending[0], pending  # each user approves a project's servers
                # Approving it (asked when `claude` starts there) as a setting, in an untrusted folder:
                settings = home / ".claude" / "settings.json"
                settings.parent.mkdir(exist_ok=True)
                settings.write_text(json.dumps({"enabledMcpjsonServers": ["robot-md"]}), encoding="utf-8")
            line = re.search(r"^robot-md: .*$", run("claude mcp list"), re.M)
            assert line and "✔ Connected" in line[0], line
            if scope == "user":  # the shell put the token in: added again with a wrong one
                run(f"claude mcp remove --scope {scope} robot-md")
                run(block(name).strip().replace(documented_url(), server.url), **{TOKEN_VARIABLE: "x" * 32})
            # project: Claude Code reads the variable when it starts
            wrong = re.search(r"^robot-md: .*$", run("claude mcp list", **{TOKEN_VARIABLE: "x" * 32}), re.M)
            assert wrong and "✘" in wrong[0] and "✔" not in wrong[0], wrong
            run(f"claude mcp remove --scope {scope} robot-md")
    finally:
        assert server.stop() == 0
