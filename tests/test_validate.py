"""Section 3: validation (the fine points; broad parity lives in test_parity.py)."""

from __future__ import annotations

import hashlib

from conftest import EXAMPLE, ROOT
from serving import python

import robot_md_mcp as rmm

SCHEMA_SHA256 = "dbbf663b3ac6621e29d6eeb8dc5c6b8d722abf5608f0ed6022c916d221c7e12a"


def test_schema_is_the_pinned_reference_copy() -> None:
    """schema.json is robot-md 1.10.6's robot_md/schemas/v1/robot.schema.json,
    byte for byte (./build.sh refresh-schema brings it back)."""
    assert hashlib.sha256((ROOT / "schema.json").read_bytes()).hexdigest() == SCHEMA_SHA256
    assert rmm.SCHEMA_PATH == ROOT / "schema.json"


def test_jsonschema_is_loaded_on_first_validation_only() -> None:
    code = (
        "import sys, robot_md_mcp as m\n"
        "assert 'jsonschema' not in sys.modules and 'mcp' not in sys.modules\n"
        f"m.validate(m.parse(open({str(EXAMPLE)!r}, encoding='utf-8').read()))\n"
        "assert 'jsonschema' in sys.modules and 'mcp' not in sys.modules\n"
    )
    done = python(code)
    assert done.returncode == 0, done.stderr


def test_validator_is_built_once() -> None:
    assert rmm.schema_validator() is rmm.schema_validator()


def test_example_is_valid() -> None:
    report = rmm.validate(rmm.parse(EXAMPLE.read_text(encoding="utf-8")))
    assert report == rmm.Report(0, (), (), "bob (arm+camera, 6 DoF, 5 capabilities)")
    assert report.ok


def test_report_as_dict_is_the_tools_shape_and_a_parse_error_code_1() -> None:
    report = rmm.Report(4, ("e",), ("w",), "")
    assert list(report.as_dict().items()) == [
        ("ok", False),
        ("summary", ""),
        ("errors", ["e"]),
        ("warnings", ["w"]),
        ("hints", []),
    ]
    parse_error = rmm.ManifestError(rmm.NO_FRONTMATTER, "/r.md")
    assert rmm.Report.from_error(parse_error) == rmm.Report(1, (rmm.NO_FRONTMATTER,))
    assert rmm.check_text("nothing") == rmm.Report(1, (rmm.NO_FRONTMATTER,))
    file_error = rmm.ManifestError("file not found", "/r.md", about_file=True)
    assert rmm.Report.from_error(file_error).errors == ("file not found: /r.md",)


def test_summary_counts_only_lists() -> None:
    fm = {"metadata": {"robot_name": "r"}, "physics": {"type": "arm", "dof": 3}, "capabilities": "x"}
    assert rmm.summary(fm) == "r (arm, 3 DoF, 0 capabilities)"
