"""docs/manifest.md, the guide to writing a ROBOT.md: its field table is the schema's (made
by tests/support/manifest_fields.py), its starters are the files in examples/ exactly and they
validate, and what it says the body needs is what validation requires."""

from __future__ import annotations

import json
import re

import pytest
from conftest import ROOT
from manifest_fields import END, START, with_table

import robot_md_mcp as rmm

DOC = (ROOT / "docs" / "manifest.md").read_text(encoding="utf-8")
STARTERS = ("arm", "rover")


def test_the_field_table_is_made_from_the_schema() -> None:
    assert with_table(DOC) == DOC, (
        "docs/manifest.md's table differs: run python tests/support/manifest_fields.py --write"
    )
    assert DOC.count(START) == DOC.count(END) == 1


def documented_fields() -> dict[str, list[str]]:
    block = DOC.split(START, 1)[1].split(END, 1)[0]
    cells = [[c.strip() for c in re.split(r"(?<!\\)\|", line)[1:-1]] for line in block.splitlines()[3:]]
    return {row[0].strip("`"): row for row in cells}


def test_every_field_three_levels_deep_has_a_row_with_type_required_and_unit() -> None:
    """Independently of the generator: walk the schema and look each field up in the doc's table."""
    rows = documented_fields()
    schema = json.loads(rmm.SCHEMA_PATH.read_text(encoding="utf-8"))

    def walk(node: dict, path: str, depth: int, required: bool) -> None:
        node = rmm._shape(node)
        if path:
            row = rows.get(path)
            assert row is not None or depth > 3, f"{path} has no row"
            if row is not None:
                assert row[2] == ("yes" if required else ""), path
                assert row[3] == rmm.UNITS.get(path, ""), path
        items = node.get("items")
        inner = rmm._shape(items) if isinstance(items, dict) and "properties" in rmm._shape(items) else node
        for key, sub in (inner.get("properties") or {}).items() if path != "extensions" else ():
            name = f"{path}[]" if inner is not node else path
            walk(sub, f"{name}.{key}" if name else key, depth + 1, key in inner.get("required", ()))

    walk(schema, "", 0, False)
    assert rows["safety.max_linear_velocity_ms"][3] == "m/s" and rows["safety.estop.response_ms"][3] == "ms"
    assert set(rmm.UNITS) <= set(rows), "every numeric field's unit is in the table"


def quoted_starter(name: str) -> str:
    found = re.search(rf"<!-- starter:{name} -->\n```markdown\n(.*?)```\n", DOC, re.DOTALL)
    assert found, f"docs/manifest.md quotes no {name} starter"
    return found[1]


@pytest.mark.parametrize("name", STARTERS)
def test_starters_validate_and_the_doc_quotes_them_exactly(name: str) -> None:
    """A starter teaches by example: it validates clean, and every safety limit it declares is shown in
    the briefing."""
    path = ROOT / "examples" / f"{name}.ROBOT.md"
    text = path.read_text(encoding="utf-8")
    assert quoted_starter(name) == text
    report = rmm.validate(rmm.parse(text))
    assert (report.code, report.errors, report.warnings, report.hints()) == (0, (), (), [])
    assert f"](../examples/{name}.ROBOT.md)" in DOC
    safety = rmm.context(rmm.parse(text)).split("## Safety\n", 1)[1].split("## Validation", 1)[0]
    assert "E-stop: software yes, hardware yes" in safety and "authorization required" in safety
    assert "Also declared" not in safety and "Not read" not in safety


@pytest.mark.parametrize(
    "heading",
    ["# {name}", "## Identity", "## What {name} Can Do", "## Safety Gates"],
)
def test_each_required_body_section_the_doc_names_is_required(heading: str) -> None:
    """Remove one of the body's four required parts from a starter: validate exits 4 (robot-md's code)."""
    text = (ROOT / "examples" / "rover.ROBOT.md").read_text(encoding="utf-8")
    line = heading.format(name="rover1")
    assert f"| `{heading.replace('{name}', '<robot_name>')}` |" in DOC
    without = text.replace(f"\n{line}\n", "\n")
    assert without != text
    assert rmm.validate(rmm.parse(without)).code == rmm.MISSING_BODY_SECTION


def test_the_required_frontmatter_the_doc_names_is_the_schemas() -> None:
    rows = documented_fields()
    required = {
        field for field, row in rows.items() if row[2] == "yes" and "[]" not in field and "." not in field
    }
    assert required == {"rcan_version", "metadata", "physics", "drivers", "safety"}
    for field in ("metadata.robot_name", "physics.type", "physics.dof", "safety.estop"):
        assert rows[field][2] == "yes"
        assert f"`{field}`" in DOC.split("## What must be there", 1)[1].split("## Units", 1)[0]


def test_the_misspelt_key_example_is_what_validate_prints(tmp_path, capsys) -> None:  # type: ignore[no-untyped-def]
    text = (ROOT / "examples" / "rover.ROBOT.md").read_text(encoding="utf-8")
    path = tmp_path / "ROBOT.md"
    path.write_text(
        text.replace("capabilities:", "capabilites:").replace(
            "max_linear_velocity_ms", "max_linear_velocity_mps"
        ),
        encoding="utf-8",
    )
    assert rmm.main(["validate", str(path)]) == 0
    shown = DOC.split("## Misspelt keys", 1)[1].split("```text\n", 1)[1].split("```", 1)[0]
    assert capsys.readouterr().out == shown


def test_each_documented_error_gets_the_documented_hint() -> None:
    """Its `✗` error lines, each with the `hint:` line under it: that hint is ours for that error, word for
    word (the misspelt-key lines above are what `validate` prints, the test before)."""
    shown = DOC.split("## Misspelt keys", 1)[1].split("## Every field", 1)[0]
    pairs = re.findall(r"^✗ (.+)\n  hint: (.+)$", shown, re.MULTILINE)
    assert len(pairs) == 4, pairs
    for error, hint in pairs:
        assert rmm.hints(error) == [hint], error
