"""doctor_summary and the poses, calibration_status and learned_skills resources
against robot-md 1.10.6's own MCP server (its pure builders, run by
tests/support/dropin_reference.py): equal for every corpus file, every generated case
in cases.py and the extra cases there; where the reference raises, we answer.

The default tier compares with the stored answers (tests/reference/dropin.json);
the heavy tier reruns the live reference and checks the stored copy is exactly it.
"""

from __future__ import annotations

import json
import math

import dropin_reference
import jsonschema
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import robot_md_mcp as rmm

KINDS = ("doctor_summary", *dropin_reference.RESOURCES)
INPUTS = dropin_reference.inputs()


def ours(data: bytes) -> dict | None:
    """Our answers for one file, as a client receives them (JSON); None if it does not parse."""
    try:
        manifest = rmm.parse(rmm.decode(data).text)
    except rmm.ManifestError:
        return None
    out = {"doctor_summary": rmm.json_safe(rmm.doctor_summary(manifest, rmm.validate(manifest)))}
    for kind in dropin_reference.RESOURCES:
        out[kind] = json.loads(rmm.VIEW[kind].text(manifest))
    return out


def strict(value: object) -> object:
    """The reference's value with .inf/.nan as our JSON gives them ("Infinity", "NaN": strict
    JSON has no such numbers; robot-md sends invalid JSON there, see docs/parity.md)."""
    if isinstance(value, float) and not math.isfinite(value):
        return rmm.json_safe(value)
    if isinstance(value, dict):
        return {k: strict(v) for k, v in value.items()}
    return [strict(v) for v in value] if isinstance(value, list) else value


@pytest.fixture(scope="module")
def reference() -> dict[str, dict]:
    stored = dropin_reference.load()
    stale = sorted(
        k for k, d in INPUTS.items() if stored.get(k, {}).get("sha256") != dropin_reference.sha256(d)
    )
    assert not stale, f"tests/reference/dropin.json is stale for {stale[:3]}: run {dropin_reference.__file__}"
    return stored


ANSWERED = [k for k in INPUTS if not k.endswith("~nobom")]


@pytest.mark.parametrize("key", ANSWERED)
def test_drop_in_answers_match_robot_md(key: str, reference) -> None:
    expected, got = reference[key], ours(INPUTS[key])
    if expected.get("parse_error"):
        return  # nothing to compare: robot-md's server would not start (test_parity covers parsing)
    assert got is not None
    for kind in KINDS:
        if "crash" in expected[kind]:
            json.dumps(got[kind], allow_nan=False)  # we answer, in strict JSON
        else:
            assert got[kind] == strict(expected[kind]["value"]), kind


def test_the_cases_reach_every_branch(reference) -> None:
    """Every resource value and doctor field the builders can give is reached by some input."""
    values = [r for r in reference.values() if not r.get("parse_error")]
    calibrations = [r["calibration_status"]["value"] for r in values if "value" in r["calibration_status"]]
    for field in ("zero", "hand_eye", "poses_ready"):
        assert {c[field] for c in calibrations} == {"ok", "missing"}, field
    assert any(r["poses"].get("value") for r in values)
    assert any(r["learned_skills"].get("value") for r in values)
    summaries = [r["doctor_summary"]["value"] for r in values if "value" in r["doctor_summary"]]
    assert {s["schema_ok"] for s in summaries} == {True, False}
    assert {s["registered"] for s in summaries} == {True, False}
    assert any(s["drivers"] for s in summaries) and any(s["hitl_gates"] for s in summaries)
    assert any(s["estop"] for s in summaries) and any(s["estop"] is None for s in summaries)
    crashed = {kind for r in values for kind in KINDS if "crash" in r[kind]}
    assert crashed == set(KINDS)  # and each of those is answered by ours (above)


def test_parity_page_counts_are_the_stored_answers(reference) -> None:
    """docs/parity.md's numbers for this comparison are those of the stored answers."""
    from conftest import ROOT

    page = " ".join((ROOT / "docs" / "parity.md").read_text(encoding="utf-8").split())
    answered = [r for r in reference.values() if not r.get("parse_error")]
    crashes = {kind: sum("crash" in r[kind] for r in answered) for kind in KINDS}
    resources = sorted(crashes[kind] for kind in dropin_reference.RESOURCES)
    assert f"plus {len(dropin_reference.EXTRA)} cases of its own" in page
    assert f"Of the {len(INPUTS)} inputs, robot-md cannot parse {len(INPUTS) - len(answered)}" in page
    assert f"`doctor_summary` raises on {crashes['doctor_summary']} and the resources on" in page
    assert f"the resources on {resources[0]} to {resources[-1]}." in page


def test_doctor_summary_reads_blocks_of_the_wrong_shape_as_empty() -> None:
    """Where robot-md raises (a metadata list, `drivers: 5`, a safety string), a field is empty."""
    m = rmm.parse("---\nmetadata: [a]\nphysics: 5\ndrivers: 5\nsafety: x\ncapabilities: 3\n---\n")
    got = rmm.doctor_summary(m, rmm.validate(m))
    assert (got["robot_name"], got["rrn"], got["registered"], got["dof"]) == (None, None, False, 0)
    assert (got["drivers"], got["hitl_gates"], got["estop"], got["capabilities_count"]) == ([], [], None, 0)
    assert got["schema_ok"] is False and got["schema_errors"]


def test_resources_answer_where_robot_md_raises() -> None:
    m = rmm.parse("---\nmetadata: {robot_name: b}\nphysics: {dof: x, poses: [a], kinematics: 5}\n"
                  "learned_skills:\n  - {id: s, validated: 7, recorded_at: 2026-04-17}\n---\n")  # fmt: skip
    assert json.loads(rmm.VIEW["poses"].text(m)) == {}
    assert json.loads(rmm.VIEW["calibration_status"].text(m)) == {
        "zero": "missing", "hand_eye": "missing", "poses_ready": "missing"}  # fmt: skip
    (skill,) = json.loads(rmm.VIEW["learned_skills"].text(m))
    assert (skill["validated"], skill["recorded_at"]) == ([7], "2026-04-17")


@pytest.mark.heavy
def test_stored_drop_in_answers_are_the_live_reference() -> None:
    assert dropin_reference.live() == dropin_reference.load()


# --- any manifest: an answer in the declared shape ---------------------------------------------

SCALARS = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-5, 5),
    st.floats(allow_nan=True, allow_infinity=True),
    st.text(max_size=4),
    st.dates(),
)
VALUES = st.recursive(
    SCALARS,
    lambda inner: st.one_of(
        st.lists(inner, max_size=3), st.dictionaries(st.text(max_size=3), inner, max_size=3)
    ),
    max_leaves=8,
)


def block(**fields: st.SearchStrategy) -> st.SearchStrategy:
    """A mapping with some of these fields, or any value at all in its place."""
    return st.one_of(st.fixed_dictionaries({}, optional=fields), VALUES)


def entries(item: st.SearchStrategy) -> st.SearchStrategy:
    return st.one_of(st.lists(st.one_of(item, VALUES), max_size=3), VALUES)


MANIFESTS = st.fixed_dictionaries(
    {},
    optional={
        "metadata": block(robot_name=VALUES, rrn=VALUES),
        "physics": block(
            dof=VALUES,
            poses=st.one_of(
                st.dictionaries(st.text(max_size=5), block(joints=VALUES, taught_at=VALUES)), VALUES
            ),
            kinematics=entries(block(zero_pose_steps=VALUES)),
            solver=block(cameras=entries(block(extrinsic=VALUES))),
        ),
        "drivers": entries(block(id=VALUES, protocol=VALUES, port=VALUES, host=VALUES)),
        "safety": block(estop=VALUES, hitl_gates=entries(block(scope=VALUES, require_auth=VALUES))),
        "capabilities": VALUES,
        "learned_skills": entries(block(id=VALUES, validated=VALUES, blocked_by=VALUES, recorded_at=VALUES)),
    },
)


# Built once: jsonschema.validate checks the schema itself each call (test_tools_only checks it, once).
DOCTOR_ANSWER = jsonschema.Draft202012Validator(rmm.TOOLS["doctor_summary"].output_schema)


@settings(max_examples=20, deadline=None)
@given(frontmatter=MANIFESTS)
def test_any_manifest_gets_a_doctor_summary_and_resources_in_strict_json(frontmatter: dict) -> None:
    """Whatever the blocks hold, the tool's answer fits its outputSchema and every new view is strict JSON."""
    manifest = rmm.Manifest(frontmatter, "")
    report = rmm.Report(rmm.SCHEMA_VIOLATION, ("schema: x",))
    answer = rmm.json_safe(rmm.doctor_summary(manifest, report))
    DOCTOR_ANSWER.validate(answer)
    json.dumps(answer, allow_nan=False)
    for kind in (*dropin_reference.RESOURCES, "signature"):
        json.loads(rmm.VIEW[kind].text(manifest), parse_constant=pytest.fail)
    assert "\n" not in rmm.identity(manifest)
    rmm.context(manifest, report)
