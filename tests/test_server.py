"""Section 8: the MCP surface, through the SDK's own Client in both protocol eras, in process (what the
handlers answer) and over real stdio; then the process itself: stdout carries only protocol, EOF and
signals end it."""

from __future__ import annotations

import json
import os
import signal
import time
from typing import Any

import pytest
from conftest import EXAMPLE, posix_only
from mcp import MCPError
from serving import INIT, RawServer, in_process, launched, line

import robot_md_mcp as rmm

MODES = ["legacy", "auto"]  # 2025-11-25 initialize handshake; 2026-07-28 server/discover
GOOD = EXAMPLE.read_text(encoding="utf-8")
KINDS = ["context", "identity", "frontmatter", "capabilities", "safety"]
KINDS += ["poses", "calibration_status", "learned_skills", "signature", "body"]


CONNECT = {"in-process": in_process, "stdio": lambda path, mode: launched(path, mode=mode)}
SESSIONS: list[Any] = [("in-process", "legacy"), ("in-process", "auto")]
SESSIONS += [pytest.param(("stdio", mode), marks=pytest.mark.process) for mode in MODES]


@pytest.fixture(params=SESSIONS, ids=lambda p: "-".join(p))
def session(request):
    """The full session's client: in process and over real stdio, in both eras."""
    how, mode = request.param
    return lambda path: CONNECT[how](path, mode)


@pytest.fixture(params=MODES)
def connect(request):
    """What the handlers answer: the server in-process (the SDK's in-memory streams), in both eras."""
    return lambda path: in_process(path, request.param)


@pytest.mark.anyio
async def test_full_session(session, manifest_path) -> None:
    path = manifest_path(GOOD)
    manifest = rmm.ManifestFile(path).version().manifest  # as served: its signature checked
    async with session(path) as client:
        assert (client.server_info.name, client.server_info.version) == ("robot-md-mcp", rmm.__version__)
        listed = (await client.list_resources()).resources
        assert listed[-1].uri == rmm.CARD_URI  # listed, for hosts and gateways that look there
        listed = listed[:-1]
        assert [r.uri for r in listed] == [f"robot-md://bob/{k}" for k in KINDS]
        json_views = ["application/json"] * 7
        assert [r.mime_type for r in listed] == ["text/markdown", "text/plain", *json_views, "text/markdown"]
        assert all(r.title and r.description and r.name == k for r, k in zip(listed, KINDS))
        for resource, view in zip(listed, rmm.VIEWS):
            contents = (await client.read_resource(resource.uri)).contents
            assert len(contents) == 1
            assert contents[0].text == view.text(manifest)
            assert contents[0].mime_type == view.mime_type
        # Every resource has a fixed URI: no templates, but the listing answers (some clients, such as
        # @wong2/mcp-cli, stop when it gets -32601).
        assert (await client.list_resource_templates()).resource_templates == []
        validated = await client.call_tool("validate", {})
        assert not validated.is_error
        assert validated.structured_content == rmm.validate(manifest).as_dict()
        assert json.loads(validated.content[0].text) == validated.structured_content
        rendered = await client.call_tool("render", {})
        assert rendered.structured_content == {"yaml": rmm.render(manifest)}
        assert json.loads(rendered.content[0].text) == {"yaml": rmm.render(manifest)}
        doctor = await client.call_tool("doctor_summary", {})
        assert doctor.structured_content == rmm.json_safe(
            rmm.doctor_summary(manifest, rmm.validate(manifest))
        )
        assert doctor.structured_content["robot_name"] == "bob" and doctor.structured_content["schema_ok"]
        verified = await client.call_tool("verify", {})
        assert verified.structured_content == {
            "accepted": False,
            "kid": None,
            "reason": "no ROBOT-MD-SIG footer (signature absent)",
            "fingerprint": None,
        }


@pytest.mark.anyio
async def test_tools_are_described_for_agents(connect, manifest_path) -> None:
    async with connect(manifest_path(GOOD)) as client:
        tools = {t.name: t for t in (await client.list_tools()).tools}
    assert list(tools) == ["brief", "view", "check_action", "validate", "render", "doctor_summary", "verify"]
    for tool in tools.values():
        arguments = {"view": ["kind"], "check_action": ["action"]}.get(tool.name, [])
        assert list(tool.input_schema["properties"]) == arguments == tool.input_schema.get("required", [])
        assert tool.input_schema["additionalProperties"] is False
        assert all(tool.input_schema["properties"][a]["type"] == "string" for a in arguments)
        assert tool.output_schema["type"] == "object"
        assert tool.title and tool.description
        a = tool.annotations
        hints = (a.read_only_hint, a.idempotent_hint, a.destructive_hint, a.open_world_hint)
        assert hints == (True, True, False, False)
    assert tools["validate"].output_schema["required"] == ["ok", "summary", "errors", "warnings", "hints"]
    # Hosts that render MCP Apps show brief's result as the robot card; no other tool has a view.
    assert [t.meta for t in tools.values()] == [{"ui": {"resourceUri": rmm.CARD_URI}}] + [None] * 6


@pytest.mark.anyio
async def test_bad_requests_do_not_kill_the_server(connect, manifest_path) -> None:
    async with connect(manifest_path(GOOD)) as client:
        unknown = await client.call_tool("test_error_handling", {})
        assert unknown.is_error and "Unknown tool 'test_error_handling'" in unknown.content[0].text
        with pytest.raises(MCPError) as e:
            await client.read_resource("robot-md://alice/safety")
        assert str(e.value) == (
            'Unknown resource: robot-md://alice/safety; this server serves the robot "bob": '
            "read robot-md://bob/safety"
        )
        with pytest.raises(MCPError) as e:
            await client.read_resource("robot-md://bob/" + "x" * 100_000)
        message = str(e.value)  # a huge URI is not echoed back whole
        assert len(message) < 1000 and 'this server serves the robot "bob": robot-md://bob/context' in message
        assert (await client.call_tool("validate", {})).structured_content["ok"] is True


@pytest.mark.anyio
async def test_edits_show_up_without_a_restart_and_breakage_is_per_request(connect, manifest_path) -> None:
    path = manifest_path(GOOD)
    async with connect(path) as client:
        assert (await client.call_tool("validate", {})).structured_content["ok"]
        path.write_text(GOOD.replace("## Safety Gates", "## Safety"), encoding="utf-8")
        result = await client.call_tool("validate", {})
        assert result.structured_content["errors"] == ["body: missing required section '## Safety Gates'"]
        # An invalid manifest is served, and its validation reported (not a tool error).
        text = GOOD.replace("## Identity", "## Who").replace('rcan_version: "3.0"', 'rcan_version: "2.1"')
        path.write_text(text, encoding="utf-8")
        result = await client.call_tool("validate", {})
        assert not result.is_error and result.structured_content["ok"] is False
        assert result.structured_content["errors"][0].startswith("schema: rcan_version: '2.1' does not match")
        assert (await client.read_resource("robot-md://bob/body")).contents[0].text.count("## Who") == 1

        path.write_text("---\nmetadata: [unclosed\n---\n", encoding="utf-8")
        broken = await client.call_tool("validate", {})
        assert broken.is_error
        assert broken.content[0].text.startswith("robot-md-mcp: frontmatter YAML parse error:")
        assert broken.content[0].text.endswith(f"({path})") and "\n" not in broken.content[0].text
        with pytest.raises(MCPError, match="frontmatter YAML parse error"):
            await client.read_resource("robot-md://bob/safety")

        path.unlink()
        with pytest.raises(MCPError, match="file not found"):
            await client.list_resources()
        assert (await client.call_tool("render", {})).is_error

        path.write_text(GOOD.replace("robot_name: bob", "robot_name: bob2"), encoding="utf-8")
        listed = await client.list_resources()
        assert listed.resources[0].uri == "robot-md://bob2/context"
        validated = await client.call_tool("validate", {})
        assert validated.structured_content["ok"] is False  # H1 is still '# bob'

        path.write_text(GOOD.replace("robot_name: bob", "robot_name: 'my bot/#1'"), encoding="utf-8")
        uris = [r.uri for r in (await client.list_resources()).resources]  # a name that is not URI-safe
        assert uris[0] == "robot-md://my%20bot%2F%231/context"
        assert (await client.read_resource(uris[-2])).contents[0].text.startswith("\n# bob\n")

        path.write_text(GOOD.replace("  robot_name: bob\n", ""), encoding="utf-8")
        with pytest.raises(MCPError, match=r"metadata\.robot_name is missing"):
            await client.list_resources()
        errors = (await client.call_tool("validate", {})).structured_content["errors"]
        assert "metadata: 'robot_name' is a required property" in errors[0]


@pytest.mark.anyio
async def test_each_version_is_parsed_and_validated_once(manifest_path, monkeypatch) -> None:
    """Unchanged bytes are parsed once, whoever asks; the briefing, the validate tool and the
    manifest-status prompt share one validation; an edit makes one more of each. (One era: the cache
    is below the handlers both eras share.)"""
    calls: list[str] = []

    def counted(name: str, real: Any) -> Any:
        def call(argument: Any) -> Any:
            calls.append(name)
            return real(argument)

        return call

    for name in ("parse", "validate"):
        monkeypatch.setattr(rmm, name, counted(name, getattr(rmm, name)))
    path = manifest_path(GOOD)
    async with in_process(path) as client:
        for _ in range(2):
            await client.read_resource("robot-md://bob/context")
            await client.call_tool("validate", {})
            await client.get_prompt("manifest-status", {})
        assert calls == ["parse", "validate"]
        path.write_text(GOOD + "\nmore\n", encoding="utf-8")
        result = await client.call_tool("validate", {})
        assert result.structured_content["ok"] and calls == ["parse", "validate"] * 2
    watched = rmm.ManifestFile(path)
    first = watched.version()
    assert watched.version() is first and first.report is watched.version().report
    path.write_text(GOOD, encoding="utf-8")
    assert watched.version() is not first and calls.count("parse") == 4


# --- the process: stdout carries only protocol, EOF ends it cleanly ----------


def test_nothing_but_protocol_on_stdout_and_stdin_closing_mid_request_ends_cleanly(manifest_path) -> None:
    """Requests, then stdin closed at once (the last still in flight): every one answered, each stdout
    line one whole JSON-RPC message, exit 0, no traceback."""
    requests = [
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        {"jsonrpc": "2.0", "id": 2, "method": "resources/list"},
        {"jsonrpc": "2.0", "id": 3, "method": "resources/read", "params": {"uri": "robot-md://bob/body"}},
        {"jsonrpc": "2.0", "id": 4, "method": "no/such/method"},
        {"jsonrpc": "2.0", "id": 5, "method": "ping"},
        {"jsonrpc": "2.0", "id": 6, "method": "tools/call", "params": {"name": "validate", "arguments": {}}},
    ]
    with RawServer(manifest_path(GOOD)) as server:
        server.write(line(INIT) + b"".join(line(r) for r in requests))
        assert server.close(timeout=30) == 0, server.stderr
        server.assert_clean()  # every line on stdout is one JSON-RPC message, no traceback
        seen = {n: server.response(n, timeout=1) for n in range(1, 7)}
    assert seen[1]["result"]["serverInfo"]["name"] == "robot-md-mcp" and seen[5]["result"] == {}
    assert seen[3]["result"]["contents"][0]["text"] == rmm.parse(GOOD).prose
    assert seen[4]["error"]["code"] == -32601 and seen[6]["result"]["structuredContent"]["ok"]


@posix_only
@pytest.mark.parametrize("sig", [signal.SIGINT, pytest.param(signal.SIGTERM, marks=pytest.mark.process)])
def test_a_signal_stops_the_server_with_stdin_still_open(manifest_path, sig) -> None:
    """Ctrl-C (or a polite kill) while the client keeps stdin open: out within a second, quietly."""
    with RawServer(manifest_path(GOOD)) as server:
        server.write(line(INIT))
        assert server.response(1, timeout=30)["id"] == 1
        started = time.monotonic()
        server.proc.send_signal(sig)
        code, _, err = server.finish(timeout=10)
        assert time.monotonic() - started < 1.0
    assert code == (130 if sig == signal.SIGINT else -signal.SIGTERM)
    assert err == ""


@posix_only
@pytest.mark.parametrize("delay", [0.0, pytest.param(1.0, marks=pytest.mark.process)])
def test_a_person_running_it_by_hand_gets_one_friendly_line(manifest_path, delay: float) -> None:
    """stdin is a terminal: one stderr line saying what is served and how to use it. When the
    terminal hangs up (reads fail with EIO), `delay` seconds after that line (long after the server
    began reading it), the server ends quietly: exit 0, nothing more on stderr."""
    path = manifest_path(GOOD)
    primary, secondary = os.openpty()
    try:
        with RawServer(path, stdin=secondary) as server:
            os.close(secondary)
            deadline = time.monotonic() + 30
            while "\n" not in server.stderr:
                assert time.monotonic() < deadline, "no stderr line within 30s"
                time.sleep(0.01)
            banner = server.stderr
            time.sleep(delay)
            os.close(primary)  # hang up
            primary = -1
            code, out, err = server.finish(timeout=10)
    finally:
        if primary != -1:
            os.close(primary)
    assert banner.startswith(f'robot-md-mcp {rmm.__version__}: serving robot "bob" from {path} over stdio')
    assert banner.count("\n") == 1
    assert "claude_desktop_config.json" in banner and "waiting for an MCP client" in banner
    assert (code, out, err) == (0, b"", banner)
