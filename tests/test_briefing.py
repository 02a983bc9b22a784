"""The briefing surface: identity and context resources, prompts, completions.

Expected values are derived here, field by field, from the parsed YAML: never
from text the code under test produced."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path
from typing import Any

import pytest
from agent import SERVABLE, parsed
from conftest import EXAMPLE
from mcp import Client, MCPError
from mcp.types import INVALID_PARAMS, EmbeddedResource, PromptReference, ResourceTemplateReference
from serving import in_process
from text_structure import read_markdown, segments

import robot_md_mcp as rmm

GOOD = EXAMPLE.read_text(encoding="utf-8")


# --- what a reader of the YAML expects each field to say --------------------


def text(value: object) -> str:
    """The documented form of manifest text in our lines: a JSON string, format characters as <U+XXXX>."""
    return json.dumps(rmm.visible(str(value)), ensure_ascii=False)


def expect(mapping: object, key: str, kind: type | tuple[type, ...], unit: str = "") -> str:
    """The documented rule: value if well-typed (text quoted), 'not declared' if absent/null/blank,
    else 'unknown'."""
    blank = isinstance(mapping, dict) and isinstance(mapping.get(key), str) and not mapping[key].strip()
    if not isinstance(mapping, dict) or key not in mapping or mapping[key] is None or blank:
        return "not declared" if isinstance(mapping, dict) or mapping is None else "unknown"
    value = mapping[key]
    if kind is bool:
        return {True: "yes", False: "no"}.get(value, "unknown") if isinstance(value, bool) else "unknown"
    if isinstance(value, bool) or not isinstance(value, kind):
        return "unknown"
    return text(value) if isinstance(value, str) else f"{value} {unit}".strip()


def identity_fields(fm: dict) -> dict[str, str]:
    meta, physics = fm.get("metadata"), fm.get("physics")
    caps = fm.get("capabilities")
    rrn = meta.get("rrn") if isinstance(meta, dict) else None
    return {
        "name": expect(meta, "robot_name", str),
        "type": expect(physics, "type", str),
        "dof": expect(physics, "dof", int),
        "capabilities": str(len(caps)) if isinstance(caps, list) else ("0" if caps is None else "unknown"),
        "manufacturer": expect(meta, "manufacturer", str),
        "model": expect(meta, "model", str),
        "version": expect(meta, "version", str),
        "rrn": f"{text(rrn)} (https://rcan.dev/r/{rrn})" if isinstance(rrn, str) and rrn else "unregistered",
    }


@pytest.mark.parametrize("path", SERVABLE, ids=lambda p: p.name)
def test_identity_line_field_by_field(path: Path) -> None:
    manifest = parsed(path)
    assert manifest is not None
    line = rmm.identity(manifest)
    assert "\n" not in line
    pairs = [part.split(": ", 1) for part in segments(line)]
    assert dict(pairs) == identity_fields(manifest.frontmatter)
    assert [k for k, _ in pairs] == list(identity_fields(manifest.frontmatter))


def sections(markdown: str) -> dict[str, list[str]]:
    """`## Heading` → its non-blank lines, up to the operator's notes."""
    head, _, _ = markdown.partition("\n## Operator's notes")
    out: dict[str, list[str]] = {}
    current = ""
    for line in head.splitlines():
        if line.startswith("## "):
            current = line[3:]
            out[current] = []
        elif line.strip() and current:
            out[current].append(line)
    return out


def bullet(lines: list[str], label: str) -> str:
    (found,) = [line for line in lines if line.startswith(f"- {label}: ")]
    return found.split(": ", 1)[1]


JOINTLESS = ("wheeled", "tracked", "sensor")  # types with no arm joints (unless kinematics lists some)


@pytest.mark.parametrize("path", SERVABLE, ids=lambda p: p.name)
def test_context_field_by_field(path: Path) -> None:
    manifest = parsed(path)
    assert manifest is not None
    fm = manifest.frontmatter
    briefing = rmm.context(manifest)
    name = fm["metadata"]["robot_name"]
    assert briefing.startswith(f"# Robot briefing: {text(name)}\n")
    parts = sections(briefing)
    caps = fm.get("capabilities")
    assert list(parts) == [
        "Identity",
        f"Capabilities ({identity_fields(fm)['capabilities']})",
        "Safety",
        "Validation",
        "Calibration, poses and learned skills",
    ]

    ident = identity_fields(fm)
    for label, key in [("Name", "name"), ("Type", "type"), ("DoF", "dof"), ("Manufacturer", "manufacturer"),
                       ("Model", "model"), ("Version", "version"), ("RRN", "rrn")]:  # fmt: skip
        assert bullet(parts["Identity"], label) == ident[key], label

    listed = [line for line in parts[f"Capabilities ({ident['capabilities']})"] if line.startswith("- ")]
    if caps:
        assert listed == [f"- {text(c)}" if isinstance(c, str) else "- unknown entry" for c in caps]
    else:
        assert listed == ["- none declared"]

    safety = fm.get("safety")
    lines = parts["Safety"]
    estop = safety.get("estop") if isinstance(safety, dict) else None
    if estop is None:
        assert bullet(lines, "E-stop") == "not declared"
    else:
        assert bullet(lines, "E-stop") == (
            f"software {expect(estop, 'software', bool)}, hardware {expect(estop, 'hardware', bool)}, "
            f"response {expect(estop, 'response_ms', (int, float), 'ms')}"
        )
    if safety is None:
        assert lines[0].startswith("- **No safety block is declared.**")
    number = (int, float)
    assert bullet(lines, "Payload limit") == expect(safety, "payload_kg", number, "kg")
    joint = expect(safety, "max_joint_velocity_dps", number, "deg/s")
    physics: Any = fm.get("physics") if isinstance(fm.get("physics"), dict) else {}
    jointless = physics.get("type") in JOINTLESS and physics.get("kinematics") in (None, [])
    if joint == "not declared" and jointless:
        kind = text(physics["type"])
        joint += f" (not applying: the type {kind} has no arm joints, and physics.kinematics lists none)"
    assert bullet(lines, "Max joint velocity") == joint
    assert bullet(lines, "Max linear velocity") == expect(safety, "max_linear_velocity_ms", number, "m/s")
    assert bullet(lines, "Failsafe on lost comms") == expect(safety, "failsafe_behavior", str)
    gates = safety.get("hitl_gates") if isinstance(safety, dict) else None
    if not gates:
        assert "- Human-in-the-loop gates: none declared" in lines
    else:
        start = lines.index("- Human-in-the-loop gates:")
        rule = {True: "operator authorization required", False: "no authorization required"}
        assert lines[start + 1 : start + 1 + len(gates)] == [
            f"  - scope {text(g['scope'])}: {rule.get(g.get('require_auth'), 'authorization not declared')}"
            for g in gates
        ]

    report = rmm.validate(manifest)
    status = bullet(parts["Validation"], "Status")
    if report.ok:
        assert status == f"valid — {text(report.summary)}"
    else:
        assert status.startswith(f"invalid ({len(report.errors)} error")
        for error in report.errors:
            assert f"  - {text(error)}" in parts["Validation"]
    notes = briefing.partition("\n## Operator's notes (the ROBOT.md prose)\n")[2]
    shown = rmm.visible(manifest.prose)
    assert read_markdown(notes).fenced == ([shown.removesuffix("\n")] if manifest.prose else [])


def test_context_of_bob_safety_section_reads_as_documented() -> None:
    parts = sections(rmm.context(rmm.parse(GOOD)))
    assert parts["Safety"] == [
        "- E-stop: software yes, hardware no, response 100 ms",
        "- Human-in-the-loop gates:",
        '  - scope "destructive": operator authorization required',
        '  - scope "system": operator authorization required',
        "- Payload limit: 0.5 kg",
        "- Max joint velocity: 180 deg/s",
        "- Max linear velocity: not declared",
        "- Workspace bounds: not declared",
        "- Failsafe on lost comms: not declared",
        '- Also declared (see the safety resource): "p66_enabled": true, "loa_enforcement": true',
    ]


MISTYPED = """---
metadata:
  robot_name: odd
  manufacturer: [a, b]
  version: 1.10
  rrn: ""
physics: wheeled
capabilities: arm.pick
safety:
  estop: yes
  payload_kg: "heavy"
  max_joint_velocity_dps: true
  workspace_bounds_m: [1, 2, x]
  hitl_gates:
    - scope: {nested: 1}
      require_auth: "sure"
    - 7
---
"""


def test_mistyped_fields_say_unknown_and_never_crash() -> None:
    m = rmm.parse(MISTYPED)
    assert rmm.identity(m) == (
        'name: "odd" | type: unknown | dof: unknown | capabilities: unknown | manufacturer: unknown | '
        "model: not declared | version: unknown | rrn: unregistered"
    )
    parts = sections(rmm.context(m))
    assert parts["Safety"][:6] == [
        "- E-stop: software unknown, hardware unknown, response unknown",
        "- Human-in-the-loop gates:",
        "  - scope unknown: authorization unknown",
        "  - scope unknown: authorization unknown",
        "- Payload limit: unknown",
        "- Max joint velocity: unknown",
    ]
    assert "- Workspace bounds: unknown" in parts["Safety"]
    assert parts["Capabilities (unknown)"] == ["- unknown", "The robot can do only what is listed here."]


def test_prose_section() -> None:
    prose = "# x\n\n## Safety gates\n\n1. stop\n### detail\nmore\n## Next\nno\n"
    assert rmm.prose_section(prose, "Safety Gates") == "## Safety gates\n\n1. stop\n### detail\nmore\n"
    assert rmm.prose_section("# x\n", "Safety Gates") is None


# --- over MCP ----------------------------------------------------------------


@pytest.fixture(params=["legacy", "auto"])
def client(request, manifest_path):
    def connect(text: str = GOOD) -> Client:
        return in_process(manifest_path(text), request.param)

    return connect


@pytest.mark.anyio
async def test_the_identity_resource_says_the_gateway_s_verdict(client) -> None:
    """(Listed first with the context, as test_server.py::test_full_session checks.)"""
    async with client() as c:
        identity = (await c.read_resource("robot-md://bob/identity")).contents[0]
        assert identity.mime_type == "text/plain"
        unsigned = " | signed: no | gateway: refuses (no ROBOT-MD-SIG footer (signature absent))"
        assert identity.text == rmm.identity(rmm.parse(GOOD)) + unsigned
        # Hosts whose model only calls tools are told which tool to call first; hosts that attach
        # resources still learn which resource holds the same briefing.
        assert "Call the brief tool first" in c.instructions and "context resource" in c.instructions


@pytest.mark.anyio
async def test_prompts_embed_the_current_manifest(client) -> None:
    async with client() as c:
        prompts = {p.name: p for p in (await c.list_prompts()).prompts}
        assert set(prompts) == {"brief-me", "check-safety", "explain-capability", "manifest-status"}
        assert [(a.name, a.required) for a in prompts["check-safety"].arguments] == [("action", True)]
        assert [(a.name, a.required) for a in prompts["explain-capability"].arguments] == [
            ("capability", True)
        ]

        def embedded(result) -> dict[str, str]:
            return {
                m.content.resource.uri: getattr(m.content.resource, "text", "(not text)")
                for m in result.messages
                if isinstance(m.content, EmbeddedResource)
            }

        manifest = dataclasses.replace(rmm.parse(GOOD), signature=rmm.check_signature(GOOD, None))
        brief = await c.get_prompt("brief-me")
        assert embedded(brief) == {"robot-md://bob/context": rmm.context(manifest)}
        assert "read-only" in brief.messages[0].content.text

        check = await c.get_prompt("check-safety", {"action": "pick up the glass vial"})
        assert set(embedded(check)) == {"robot-md://bob/safety", "robot-md://bob/capabilities"}
        instruction = check.messages[0].content.text
        assert "> pick up the glass vial" in instruction
        assert "NEEDS OPERATOR AUTHORIZATION" in instruction and "Do not carry out" in instruction
        (gates,) = read_markdown(check.messages[-1].content.text).fenced
        assert gates + "\n" == rmm.prose_section(manifest.prose, "Safety Gates")

        explain = await c.get_prompt("explain-capability", {"capability": "arm.pick"})
        assert '"arm.pick"' in explain.messages[0].content.text
        assert set(embedded(explain)) == {"robot-md://bob/frontmatter", "robot-md://bob/body"}

        status = await c.get_prompt("manifest-status")
        (report,) = read_markdown(status.messages[1].content.text).fenced
        assert json.loads(report) == rmm.validate(manifest).as_dict()
        (doctor,) = read_markdown(status.messages[2].content.text).fenced
        assert json.loads(doctor) == rmm.json_safe(rmm.doctor_summary(manifest, rmm.validate(manifest)))


@pytest.mark.anyio
async def test_prompt_argument_errors_are_invalid_params(client) -> None:
    async with client() as c:
        for name, args, message in [
            ("check-safety", {}, "Prompt 'check-safety' needs the argument 'action'"),
            ("check-safety", {"action": "  "}, "needs the argument 'action'"),
            ("explain-capability", None, "needs the argument 'capability'"),
            ("explain-capability", {"capability": "nav.go_to"}, '"bob" does not declare the capability'),
            ("explain-capability", {"capability": "nav.go_to"}, 'it declares: "arm.pick", "arm.place"'),
            ("no-such-prompt", None, "Unknown prompt 'no-such-prompt'"),
        ]:
            with pytest.raises(MCPError) as e:
                await c.get_prompt(name, args)
            assert e.value.error.code == INVALID_PARAMS and message in e.value.error.message, name


@pytest.mark.anyio
async def test_completion_suggests_declared_capabilities(client, manifest_path) -> None:
    async with client() as c:
        ref = PromptReference(name="explain-capability")

        async def values(ref, name: str, value: str) -> list[str]:
            return (await c.complete(ref, {"name": name, "value": value})).completion.values

        everything = ["arm.pick", "arm.place", "arm.reach", "vision.describe", "status.report"]
        assert await values(ref, "capability", "") == everything
        assert await values(ref, "capability", "ARM.P") == ["arm.pick", "arm.place"]
        assert await values(ref, "capability", "nav") == []
        assert await values(ref, "unknown-arg", "") == []
        assert await values(PromptReference(name="test_prompt_with_arguments"), "arg1", "") == []
        assert await values(ResourceTemplateReference(uri="robot-md://{x}/y"), "x", "") == []
