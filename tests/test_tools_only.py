"""Agents that only call tools (Claude Desktop, claude.ai and other hosts where the model never reads
resources) get everything a resource reader gets: `brief` is the context briefing, `view` each view,
`check_action` the check-safety prompt's material and method. Every result validates against its tool's
outputSchema, every node of which is typed, for the corpus and for generated manifests; and the
2026-07-28 era's results stay within 200 bytes of the same results in 2025-11-25."""

from __future__ import annotations

import json
import tempfile
from pathlib import Path
from typing import Any

import jsonschema
import pytest
from agent import ACTION, SERVABLE, tool_calls
from cases import CASES
from conftest import EXAMPLE, corpus_files
from fuzz_strategies import manifest_files, mutants
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from serving import RawServer, in_process

import robot_md_mcp as rmm

MODERN_META = {
    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
    "io.modelcontextprotocol/clientCapabilities": {},
}
ERAS = ["2025-11-25", "2026-07-28"]


def snapshot(data: bytes) -> rmm.Snapshot | None:
    """The version a server makes of a file holding `data`; None for a file it refuses."""
    with tempfile.TemporaryDirectory() as folder:
        (Path(folder) / "ROBOT.md").write_bytes(data)
        try:
            return rmm.ManifestFile(Path(folder) / "ROBOT.md").version()
        except rmm.ManifestError:
            return None


# --- a client that never calls resources/* ------------------------------------------------


async def tool(client: Any, name: str, **arguments: str) -> dict[str, Any]:
    """A tools/call as the wire carries its result (the client's own outputSchema check skipped:
    test_results_match_their_output_schema_* make it, 40 ms a call here)."""
    from mcp import types

    request = types.CallToolRequest(params=types.CallToolRequestParams(name=name, arguments=arguments))
    result = await client.session.send_request(request, types.CallToolResult)
    assert not result.is_error, result
    return dict(result.model_dump(by_alias=True, mode="json", exclude_none=True))


@pytest.mark.anyio
@pytest.mark.parametrize("mode", ["legacy", "auto"])
async def test_a_tools_only_agent_gets_every_view_of_every_corpus_file(mode: str, manifest_path) -> None:
    """A server on one file, which each corpus file in turn becomes (it reads the file on every
    request): `brief` is the context resource's text exactly, each `view` the resource's text, and its
    value the resource's JSON (or text)."""
    assert len(SERVABLE) >= 13  # the corpus files that parse and name their robot
    path = manifest_path(EXAMPLE.read_bytes())
    async with in_process(path, mode) as client:
        tools = [t.name for t in (await client.list_tools()).tools]
        assert tools[:3] == ["brief", "view", "check_action"]
        for source in [*SERVABLE, EXAMPLE]:
            path.write_bytes(source.read_bytes())
            snap = rmm.ManifestFile(path).version()
            briefed = await tool(client, "brief")
            assert [c["text"] for c in briefed["content"]] == [snap.text(rmm.VIEW["context"])], source
            assert briefed["structuredContent"] == rmm.robot_card(snap.manifest, snap.report)
            for view in rmm.VIEWS:
                viewed = await tool(client, "view", kind=view.kind)
                text = snap.text(view)
                assert [c["text"] for c in viewed["content"]] == [text], (source, view.kind)
                value = json.loads(text) if view.mime_type == "application/json" else text
                assert viewed["structuredContent"] == {"view": view.kind, "value": value}


@pytest.mark.anyio
@pytest.mark.parametrize("mode", ["legacy", "auto"])
async def test_check_action_gives_what_the_check_safety_prompt_gives(mode: str, manifest_path) -> None:
    """The prompt's text, and the text of each resource it embeds, in the same order."""
    path = manifest_path(EXAMPLE.read_bytes())
    prompt: Any
    checked: Any
    async with in_process(path, mode) as client:
        prompt = await client.get_prompt("check-safety", {"action": ACTION})
        checked = await client.call_tool("check_action", {"action": ACTION})
    assert not checked.is_error
    texts = [c.text for c in checked.content]
    assert len(texts) == len(prompt.messages) == 4
    for message, text in zip(prompt.messages, texts):
        content = message.content
        if content.type == "text":
            assert text == content.text
        else:
            assert text.endswith(f":\n\n{content.resource.text}")
    assert ACTION in texts[0] and "BLOCKED" in texts[0]
    floor = rmm.safety_floor(rmm.parse(EXAMPLE.read_text(encoding="utf-8")), ACTION)
    assert texts[0].startswith(floor.text() + "\n\n")  # the computed floor first, in the prompt too
    assert checked.structured_content == {"action": ACTION, "floor": floor.as_dict(), "parts": texts}


@pytest.mark.anyio
@pytest.mark.parametrize("mode", ["legacy", "auto"])
async def test_bad_arguments_say_what_to_send(mode: str, manifest_path) -> None:
    """An unknown view names every valid one; a missing or empty argument is named; an extra one
    too. Each is a tool error the model reads and can correct, and the server goes on serving."""
    path = manifest_path(EXAMPLE.read_bytes())
    unknown: Any
    async with in_process(path, mode) as client:
        unknown = await client.call_tool("view", {"kind": "safety-limits"})
        missing: Any = await client.call_tool("view", {})
        empty: Any = await client.call_tool("check_action", {"action": "  "})
        wrong_type: Any = await client.call_tool("check_action", {"action": 5})
        extra: Any = await client.call_tool("brief", {"robot": "bob"})
        also: Any = await client.call_tool("view", {"kind": "safety", "path": "/etc/passwd"})
        long: Any = await client.call_tool("view", {"kind": "x" * 100_000})
        long_name: Any = await client.call_tool("view", {"kind": "safety", "y" * 100_000: "z"})
        still: Any = await client.call_tool("view", {"kind": "identity"})
    assert unknown.is_error and all(v.kind in unknown.content[0].text for v in rmm.VIEWS)
    assert "'safety-limits'" in unknown.content[0].text
    assert missing.is_error and "'kind'" in missing.content[0].text
    assert empty.is_error and wrong_type.is_error and "'action'" in empty.content[0].text
    assert extra.is_error and extra.content[0].text == "Tool 'brief' takes no arguments; got: robot."
    assert also.is_error and "path" in also.content[0].text
    for echoed in (long, long_name):  # cut, not echoed whole
        assert echoed.is_error and len(echoed.content[0].text) < rmm.MAX_ECHOED_ARGUMENT + 300
    assert not still.is_error and still.structured_content["view"] == "identity"


def test_the_view_argument_is_the_views_table() -> None:
    tool = rmm.TOOLS["view"]
    assert tool.input_schema()["properties"]["kind"]["enum"] == [v.kind for v in rmm.VIEWS]
    branches = tool.output_schema["oneOf"]
    assert [b["properties"]["view"]["const"] for b in branches] == [v.kind for v in rmm.VIEWS]


# --- outputSchemas: typed everywhere, true for every manifest -----------------------------


def schema_nodes(schema: Any, where: str = "") -> list[tuple[str, dict]]:
    """Every subschema of `schema` that describes a value, with where it is."""
    nodes = [(where or "/", schema)]
    for key, sub in schema.get("properties", {}).items():
        nodes += schema_nodes(sub, f"{where}/{key}")
    for key in ("items", "additionalProperties"):
        if isinstance(schema.get(key), dict):
            nodes += schema_nodes(schema[key], f"{where}/{key}")
    for combined in ("oneOf", "anyOf"):
        for i, sub in enumerate(schema.get(combined, [])):
            nodes += schema_nodes(sub, f"{where}/{combined}{i}")
    return nodes


def typed(node: dict) -> bool:
    """One type (a string: clients that map schemas onto one-type dialects refuse a list), or an
    anyOf of such."""
    if "anyOf" in node:
        return "type" not in node and all(typed(branch) for branch in node["anyOf"])
    return isinstance(node.get("type"), str)


@pytest.mark.parametrize("name", list(rmm.TOOLS))
def test_every_output_schema_node_is_typed(name: str) -> None:
    """The MCP Inspector CLI warns of untyped fields and of `type` lists; a client generating types
    from the schema needs them. The root is an object (mcp-types requires it), and the schema itself
    is valid. (tests/test_inspector.py: the Inspector's own check finds nothing.)"""
    schema = rmm.TOOLS[name].output_schema
    jsonschema.Draft202012Validator.check_schema(schema)
    assert schema["type"] == "object"
    untyped = [where for where, node in schema_nodes(schema) if not typed(node)]
    assert not untyped, untyped
    assert len(schema_nodes(schema)) > 1


def results(snap: rmm.Snapshot) -> list[tuple[str, dict]]:
    """Every tool's structured content for one version (a tool that cannot answer is left out:
    it answers with an error, which has no structured content)."""
    answered = []
    for name, arguments in tool_calls():
        try:
            answered.append((name, rmm.TOOLS[name].result(snap, arguments)[1]))
        except rmm.ManifestError:
            pass
    return answered


VALIDATORS = {name: jsonschema.Draft202012Validator(t.output_schema) for name, t in rmm.TOOLS.items()}


def check_results(snap: rmm.Snapshot) -> int:
    found = results(snap)
    for name, data in found:
        VALIDATORS[name].validate(data)
        json.dumps(data, allow_nan=False)  # strict JSON, as the wire carries it
    return len(found)


def check_files(*files: bytes) -> int:
    """Every tool's results for each file checked; how many."""
    return sum(check_results(snap) for snap in map(snapshot, files) if snap is not None)


def test_results_match_their_output_schema_for_the_corpus() -> None:
    """The corpus (every case of tests/support/cases.py in the heavy tier)."""
    files = [EXAMPLE.read_bytes(), *(p.read_bytes() for p in corpus_files())]
    assert check_files(*files) > 20 * len(rmm.TOOLS)


@pytest.mark.heavy
def test_results_match_their_output_schema_for_every_case() -> None:
    assert check_files(*(c.data for c in CASES)) > 200 * len(rmm.TOOLS)


@settings(max_examples=10, deadline=None, suppress_health_check=list(HealthCheck))
@given(st.one_of(manifest_files(), mutants()))
def test_results_match_their_output_schema_for_generated_manifests(data: bytes) -> None:
    check_files(data)


@pytest.mark.heavy
@settings(max_examples=400, deadline=None, suppress_health_check=list(HealthCheck))
@given(st.one_of(manifest_files(), mutants()))
def test_results_match_their_output_schema_for_many_generated_manifests(data: bytes) -> None:
    check_files(data)


# --- the 2026-07-28 era, lighter ---------------------------------------------------------


def wire_size(result: dict) -> int:
    return len(json.dumps(result, ensure_ascii=False, separators=(",", ":")).encode("utf-8"))


def every_kind_of_request(robot: str) -> list[tuple[str, dict]]:
    requests: list[tuple[str, dict]] = [
        ("resources/list", {}),
        ("resources/templates/list", {}),
        ("tools/list", {}),
        ("prompts/list", {}),
        ("resources/read", {"uri": rmm.CARD_URI}),
        ("completion/complete", {"ref": {"type": "ref/prompt", "name": "explain-capability"},
                                 "argument": {"name": "capability", "value": "arm"}}),
    ]  # fmt: skip
    requests += [("resources/read", {"uri": rmm.resource_uri(robot, v.kind)}) for v in rmm.VIEWS]
    requests += [("tools/call", {"name": name, "arguments": a}) for name, a in tool_calls()]
    arguments = {"check-safety": {"action": ACTION}, "explain-capability": {"capability": "arm.pick"}}
    requests += [("prompts/get", {"name": p, "arguments": arguments.get(p, {})}) for p in rmm.PROMPTS]
    return requests


@pytest.mark.process
def test_2026_results_are_at_most_200_bytes_bigger() -> None:
    """Every kind of result, its bytes on the wire (real stdio), in both eras: the 2026-07-28 one
    carries serverInfo as {name, version} (the icon only in server/discover), its cache hints and
    resultType."""
    sizes: dict[str, list[int]] = {}
    for era in ERAS:
        with RawServer(EXAMPLE) as server:
            if era != "2026-07-28":  # a 2025-11-25 session begins with initialize
                server.handshake(version=era)
            client_sizes(server, era, sizes)
            server.assert_clean()
    assert len(sizes) >= 30
    over = {kind: (old, new) for kind, (old, new) in sizes.items() if new - old > 200}
    assert not over, over


def client_sizes(server: RawServer, era: str, sizes: dict[str, list[int]]) -> None:
    """Each kind of result's size in `sizes`; the 2026-07-28 era's serverInfo where it belongs. A
    2026-07-28 request carries its era in `_meta`."""

    def call(method: str, params: dict[str, Any] | None = None) -> dict[str, Any]:
        meta = {"_meta": MODERN_META} if era == "2026-07-28" else {}
        result: dict[str, Any] = server.result(method, {**(params or {}), **meta}, timeout=30)
        return result

    for method, params in every_kind_of_request("bob"):
        result = call(method, params)
        assert not result.get("isError"), (method, params, result)
        sizes.setdefault(f"{method} {json.dumps(params)}", []).append(wire_size(result))
    if era == "2026-07-28":
        discovered = call("server/discover")
        stamp = discovered["_meta"]["io.modelcontextprotocol/serverInfo"]
        assert stamp["name"] == rmm.NAME and stamp["icons"], stamp
        assert discovered["capabilities"]["extensions"] == {rmm.APPS_EXTENSION: {}}
        listed = call("tools/list")
        assert listed["_meta"]["io.modelcontextprotocol/serverInfo"] == {
            "name": rmm.NAME,
            "version": rmm.__version__,
        }
