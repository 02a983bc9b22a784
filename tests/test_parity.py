"""Differential tests: our validate/render against robot-md 1.10.6 itself.

The reference runs in its own process (see reference_oracle.py) over every
corpus file and every generated case in cases.py. Equal means the tuple
(code, errors, warnings, summary) string for string, and render byte for byte
(minus robot-md's leaked `_deprecations` key, a documented divergence).
Where the reference crashes we must not: see test_divergences.py.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from cases import CASES, Case
from conftest import corpus_files, run_reference

import robot_md_mcp as rmm

BOM = b"\xef\xbb\xbf"


def ours(data: bytes) -> dict:
    try:
        source = rmm.decode(data)
        manifest = rmm.parse(source.text)
    except rmm.ManifestError as e:
        report = rmm.Report.from_error(e)
        rendered = None
    else:
        report = rmm.validate(manifest)
        rendered = rmm.render(manifest)
    return {
        "code": report.code,
        "errors": list(report.errors),
        "warnings": list(report.warnings),
        "summary": report.summary,
        "render": rendered,
    }


@pytest.fixture(scope="module")
def reference(tmp_path_factory) -> dict[str, dict]:
    """Reference results keyed by case id (corpus files by file name)."""
    folder = tmp_path_factory.mktemp("cases")
    paths: dict[str, Path] = {p.name: p for p in corpus_files()}
    for case in CASES:
        for variant, data in _variants(case):
            path = folder / variant / "ROBOT.md"
            path.parent.mkdir()
            path.write_bytes(data)
            paths[variant] = path
    results = run_reference(list(paths.values()))
    return {key: results[str(path)] for key, path in paths.items()}


def _variants(case: Case) -> list[tuple[str, bytes]]:
    """The case itself and, for a BOM case, the same bytes without the BOM
    (what we must answer for the BOM case)."""
    out = [(case.id, case.data)]
    if case.data.startswith(BOM):
        out.append((case.id + "~nobom", case.data[len(BOM) :]))
    return out


@pytest.mark.parametrize("path", corpus_files(), ids=lambda p: p.name)
def test_corpus_matches_reference(path: Path, reference) -> None:
    expected = reference[path.name]
    assert "crash" not in expected, expected
    assert ours(path.read_bytes()) == expected


PARITY_CASES = [c for c in CASES if c.category != "reference_crashes"]


@pytest.mark.parametrize("case", PARITY_CASES, ids=lambda c: c.id)
def test_generated_case_matches_reference(case: Case, reference) -> None:
    expected = reference[case.id]
    assert "crash" not in expected, f"reference crashed on a parity case: {expected}"
    got = ours(case.data)
    if case.data.startswith(BOM):
        # Divergence: robot-md rejects a BOM as "no frontmatter"; we read past it.
        assert expected["errors"] == [rmm.NO_FRONTMATTER]
        expected = reference[case.id + "~nobom"]
    if b"!!set" in case.data:
        # Divergence: the reference's set order follows the hash seed; ours is sorted.
        assert (got["code"], len(got["errors"]), len(got["warnings"])) == (
            expected["code"],
            len(expected["errors"]),
            len(expected["warnings"]),
        )
        return
    assert got == expected


def test_generated_cases_cover_every_template_and_code(reference) -> None:
    """The corpus plus generated cases reach every message the reference can
    produce from file content, and every exit code."""
    results = [reference[c.id] for c in PARITY_CASES] + [reference[p.name] for p in corpus_files()]
    messages = [m for r in results for m in r["errors"] + r["warnings"]]
    templates = {
        "no frontmatter found": rmm.NO_FRONTMATTER,
        "frontmatter YAML parse error:": None,
        "frontmatter parse error:": None,
        "frontmatter is empty": rmm.EMPTY_FRONTMATTER,
        "schema:": None,
        "cross-ref:": None,
        "body: missing H1": None,
        "body: missing required section '## Identity'": None,
        "body: missing required section '## Safety Gates'": None,
        "body: missing required section '## What": None,
        "has null intrinsic": None,
        "capability namespace mismatch": None,
        "deprecated:": None,
    }
    missing = [t for t in templates if not any(t in m for m in messages)]
    assert not missing
    assert {r["code"] for r in results} == {0, 1, 2, 4}


def test_categories_are_each_well_covered() -> None:
    counts: dict[str, int] = {}
    for case in CASES:
        counts[case.category] = counts.get(case.category, 0) + 1
    assert len(PARITY_CASES) >= 100
    assert all(n >= 5 for n in counts.values()), counts
    assert len({c.id for c in CASES}) == len(CASES)


CRASH_CASES = [c for c in CASES if c.category == "reference_crashes"]


@pytest.mark.parametrize("case", CRASH_CASES, ids=lambda c: c.id)
def test_where_the_reference_crashes_we_answer(case: Case, reference) -> None:
    """robot-md raises an uncaught exception here; we give a result (or a
    one-line parse error), the same each time, and every view works."""
    assert reference[case.id]["crash"].startswith(case.note), reference[case.id]
    first, again = ours(case.data), ours(case.data)
    assert first == again
    assert first["code"] in (0, 1, 2, 4)
    if first["code"] == 1:
        assert len(first["errors"]) == 1 and "\n" not in first["errors"][0]
    else:
        manifest = rmm.parse(rmm.decode(case.data).text)
        for view in rmm.VIEWS:
            view.text(manifest)
