"""robot-md 1.10.6's own MCP answers for the drop-in surface: its doctor_summary
tool and its poses, calibration_status and learned_skills resources.

Two halves in one file:

- `oracle(path)` runs in the reference's own process (its --target folder on
  PYTHONPATH; see conftest.install_reference): it calls the pure builders the
  reference's server wraps (robot_md.mcp.tools.doctor_summary.doctor_summary_tool,
  robot_md.mcp.resources.poses / calibration_status / learned_skills over
  robot_md.robot_spec.RobotSpec.from_parsed) with a stand-in for its context
  object, so no MCP server (nor mcp<2) is started.
- the rest runs in ours: the inputs (every corpus file, every generated case
  in cases.py, and EXTRA below, which exercise poses, kinematics and skills),
  the stored answers in tests/reference/dropin.json, and `live()`.

Each answer is {"value": ...} or {"crash": "<ExceptionName>"}. doctor_summary's
value is as the reference's FastMCP would send it (a date as ISO text); a
resource's value is json.loads of its json.dumps(indent=2) text, as its server
serves it (there a date crashes json.dumps: recorded as a crash). An input the
reference cannot parse has {"parse_error": true}.

Regenerate (installs the reference into .cache/ from PyPI):

    .venv/bin/python tests/support/dropin_reference.py
"""

from __future__ import annotations

import datetime
import hashlib
import json
import sys
from collections.abc import Callable
from pathlib import Path
from types import SimpleNamespace

HERE = Path(__file__).resolve().parent  # tests/support
TESTS = HERE.parent
STORED = TESTS / "reference" / "dropin.json"
RESOURCES = ("poses", "calibration_status", "learned_skills")
SOURCE = (
    "robot-md 1.10.6 (PyPI) run by tests/support/dropin_reference.py;"
    " regenerate: `python tests/support/dropin_reference.py`"
)


def _pydantic_like(value: object) -> object:
    """What FastMCP's JSON encoding makes of the YAML values a tool result holds."""
    if isinstance(value, (datetime.date, datetime.time)):
        return value.isoformat()
    if isinstance(value, (set, frozenset, tuple)):
        return list(value)
    raise TypeError(f"not JSON: {type(value).__name__}")


def _attempt(make: Callable[[], object]) -> dict:
    try:
        return {"value": make()}
    except Exception as e:
        return {"crash": type(e).__name__}


def oracle(path: str) -> dict:
    """The reference's answers for one file (run with the reference importable)."""
    from robot_md import parser
    from robot_md.mcp import resources
    from robot_md.mcp.tools.doctor_summary import doctor_summary_tool
    from robot_md.robot_spec import RobotSpec

    try:
        parsed = parser.parse_file(path)
    except Exception:
        return {"parse_error": True}

    def summary() -> object:
        ctx = SimpleNamespace(parsed=parser.parse_file(path))
        return json.loads(json.dumps(doctor_summary_tool(ctx), default=_pydantic_like))

    out = {"doctor_summary": _attempt(summary)}
    spec = _attempt(lambda: RobotSpec.from_parsed(parsed))
    for kind in RESOURCES:
        if "crash" in spec:
            out[kind] = spec
        else:
            ctx = SimpleNamespace(spec=spec["value"])
            builder = getattr(resources, kind)
            out[kind] = _attempt(lambda: json.loads(json.dumps(builder(ctx), indent=2)))  # called at once
    return out


# --- our side -----------------------------------------------------------------


def _m(front: str, prose: str = "\n# bot\n") -> bytes:
    return f"---\nrcan_version: '3.0'\nmetadata:\n  robot_name: bot\n{front}\n---\n{prose}".encode()


ARM = "physics:\n  type: arm\n  dof: 2\n"
# Manifests that reach the corners of poses, calibration_status and learned_skills.
EXTRA: dict[str, bytes] = {
    "dropin-poses-full": _m(
        ARM
        + "  poses:\n    ready: {joints: {shoulder: 2048, elbow: 1024}, description: home, source: taught,"
        " taught_at: '2026-04-17T10:00:00Z'}\n    tuck: {joints: {shoulder: 0}}"
    ),
    "dropin-poses-not-mappings": _m(ARM + "  poses:\n    ready: 5\n    up: {joints: null}"),
    "dropin-poses-joints-pairs": _m(ARM + "  poses:\n    ready: {joints: [[a, 1], [b, 2]]}"),
    "dropin-poses-list": _m(ARM + "  poses: [ready]"),
    "dropin-poses-int-keys": _m(ARM + "  poses:\n    1: {joints: {2: 3}}"),
    "dropin-kinematics-all-zero": _m(
        ARM
        + "  kinematics:\n    - {id: shoulder, zero_pose_steps: 2048}\n    - {id: elbow, zero_pose_steps: 0}"
    ),
    "dropin-kinematics-one-missing": _m(
        ARM + "  kinematics:\n    - {id: shoulder, zero_pose_steps: 2048}\n    - {id: elbow}"
    ),
    "dropin-kinematics-null-zero": _m(ARM + "  kinematics:\n    - {id: shoulder, zero_pose_steps: null}"),
    "dropin-kinematics-strings": _m(ARM + "  kinematics: [shoulder, elbow]"),
    "dropin-kinematics-mapping": _m(ARM + "  kinematics: {shoulder: {zero_pose_steps: 1}}"),
    "dropin-hand-eye": _m(
        ARM + "  solver:\n    cameras:\n      - {driver_id: cam, primary_stream: rgb, mount: wrist,"
        " extrinsic: [0, 0, 0.1, 0, 0, 0]}\ndrivers:\n  - {id: cam, protocol: depthai}"
    ),
    "dropin-hand-eye-empty": _m(
        ARM + "  solver:\n    cameras:\n      - {driver_id: cam, primary_stream: rgb, mount: wrist,"
        " extrinsic: []}"
        "\ndrivers:\n  - {id: cam, protocol: depthai}"
    ),
    "dropin-skills-full": _m(
        ARM + "learned_skills:\n  - id: pick\n    status: ok\n    validated: [arm.pick, arm.place]\n"
        "    blocked_by: []\n    notes: fine\n    recorded_at: '2026-04-17'\n"
        "  - id: wave\n    status: blocked\n"
        "    blocked_by: [calibration]"
    ),
    "dropin-skills-defaults": _m(ARM + "learned_skills:\n  - {}\n  - notes: null\n  - 5"),
    "dropin-skills-string-validated": _m(
        ARM + "learned_skills:\n  - {id: x, validated: abc, blocked_by: {a: 1}}"
    ),
    "dropin-skills-mapping": _m(ARM + "learned_skills: {pick: {id: pick}}"),
    "dropin-skills-date": _m(ARM + "learned_skills:\n  - {id: x, recorded_at: 2026-04-17}"),
    "dropin-doctor-drivers-gates": _m(
        ARM + "drivers:\n  - {id: a, protocol: feetech, port: /dev/ttyACM0}\n  - {id: b, protocol: http,"
        " host: 10.0.0.2}\n  - 7\nsafety:\n  estop: {software: true, hardware: true, response_ms: 50}\n"
        "  hitl_gates:\n    - {scope: arm.move, require_auth: true}\n    - {scope: arm.pick}\n    - nope\n"
        "metadata2: 1\ncapabilities: [arm.move, arm.pick]"
    ),
    "dropin-doctor-estop-empty": _m(ARM + "safety:\n  estop: {}\n  hitl_gates: {scope: x}"),
    "dropin-doctor-dof-null": _m("physics:\n  type: arm\n  dof: null"),
    "dropin-doctor-capabilities-string": _m(ARM + "capabilities: abc"),
    "dropin-doctor-rrn": b"---\nmetadata:\n  robot_name: bot\n  rrn: RRN-000000000042\n"
    b"physics: {type: arm, dof: 6}\n"
    b"capabilities: {a: 1, b: 2}\n---\n# bot\n",
}


def inputs() -> dict[str, bytes]:
    """Every input the stored answers are for, by key: stored_reference's (a BOM case only as is), EXTRA."""
    sys.path[:0] = [str(HERE), str(TESTS)]
    from stored_reference import inputs as validated

    return {**{k: v for k, v in validated().items() if not k.endswith("~nobom")}, **EXTRA}


def sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def live() -> dict[str, dict]:
    """The live reference's answers for inputs(), each with its input's sha256."""
    from reference_worker import reference_answers

    given = inputs()
    return {
        key: {"sha256": sha256(given[key]), **answer}
        for key, answer in reference_answers(given, "dropin").items()
    }


def load() -> dict[str, dict]:
    return json.loads(STORED.read_text(encoding="utf-8"))["results"]


def write(results: dict[str, dict]) -> None:
    text = json.dumps({"source": SOURCE, "results": results}, ensure_ascii=False, indent=1, sort_keys=True)
    STORED.write_text(text + "\n", encoding="utf-8")


if __name__ == "__main__":
    sys.path[:0] = [str(HERE), str(TESTS)]
    write(live())
    print(f"wrote {STORED.relative_to(TESTS.parent)}")
