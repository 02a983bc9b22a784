"""Differential tests: our validate/render against robot-md 1.10.6's answers.

The reference's answers for every corpus file and every generated case in
cases.py are stored in tests/reference/results.json (stored_reference.py says
how they were made), so the default tier compares without downloading the
reference; the heavy tier reruns the live reference over the same inputs and
asserts the stored copy is exactly what it says. Equal means the tuple
(code, errors, warnings, summary) string for string, and render byte for byte
(minus robot-md's leaked `_deprecations` key, a documented divergence).
Where the reference crashes we must not: see test_better_than_reference.py.
"""

from __future__ import annotations

import json

import pytest
import stored_reference
from cases import CASES, Case
from conftest import EXAMPLE, ROOT, corpus_files, need
from reference_worker import BOM, Oracle, ours, ours_env

import robot_md_mcp as rmm

SHARED_API = ROOT.parent / "shared" / "reference" / "api"


@pytest.fixture(scope="module")
def reference() -> dict[str, dict]:
    """The reference's answers for the library versions in use (stored, else the live
    reference's), by key (corpus files by file name, cases by id, a BOM case without its BOM
    as `<id>~nobom`), each checked to be for the very bytes the tests use."""
    stored = stored_reference.answers()
    given = stored_reference.inputs()
    stale = sorted(
        k for k, data in given.items() if stored.get(k, {}).get("sha256") != stored_reference.sha256(data)
    )
    assert not stale, (
        f"tests/reference/results.json has no answer for the current bytes of {len(stale)} inputs "
        f"(e.g. {stale[:3]}): regenerate it with `python tests/support/stored_reference.py`"
    )
    return {key: {k: v for k, v in stored[key].items() if k != "sha256"} for key in given}


PARITY_CASES = [c for c in CASES if c.category != "reference_crashes"]
# Every corpus file by name, every case but those where the reference crashes by id.
PARITY_INPUTS = {p.name: p.read_bytes() for p in corpus_files()} | {c.id: c.data for c in PARITY_CASES}


@pytest.mark.parametrize("key", PARITY_INPUTS)
def test_matches_the_reference(key: str, reference: dict[str, dict]) -> None:
    data, expected = PARITY_INPUTS[key], reference[key]
    assert "crash" not in expected, f"reference crashed on a parity input: {expected}"
    got = ours(data)
    if data.startswith(BOM):
        # Divergence: robot-md rejects a BOM as "no frontmatter"; we read past it.
        assert expected["errors"] == [rmm.NO_FRONTMATTER]
        expected = reference[key + "~nobom"]
    if b"!!set" in data:
        # Divergence: the reference's set order follows the hash seed; ours is sorted.
        counts = [(r["code"], len(r["errors"]), len(r["warnings"])) for r in (got, expected)]
        assert counts[0] == counts[1]
        return
    assert got == expected


def test_generated_cases_cover_every_template_and_code(reference: dict[str, dict]) -> None:
    """The corpus plus generated cases reach every message the reference can
    produce from file content, and every exit code."""
    results = [reference[key] for key in PARITY_INPUTS]
    messages = [m for r in results for m in r["errors"] + r["warnings"]]
    templates = (
        rmm.NO_FRONTMATTER,
        "frontmatter YAML parse error:",
        "frontmatter parse error:",
        rmm.EMPTY_FRONTMATTER,
        "schema:",
        "cross-ref:",
        "body: missing H1",
        "body: missing required section '## Identity'",
        "body: missing required section '## Safety Gates'",
        "body: missing required section '## What",
        "has null intrinsic",
        "capability namespace mismatch",
        "deprecated:",
    )
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
# Sets where the schema quotes them and where render writes them: the reference's order follows the seed.
SETS = (
    EXAMPLE.read_bytes()
    .replace(b"capabilities:\n", b"x_tags: !!set {zeta, alpha, mid, beta, omega}\ncapabilities:\n", 1)
    .replace(b'rcan_version: "3.0"', b"rcan_version: !!set {b, a, c, d}", 1)
)


@pytest.mark.process
def test_where_the_reference_crashes_or_sets_are_we_answer_alike_under_other_hash_seeds() -> None:
    """Each crash case's validate and render, and a manifest's with sets, are the same in processes with
    other hash seeds (reference_worker.py's Oracle) as here."""
    given = {c.id: c.data for c in CRASH_CASES} | {"sets": SETS}
    oracles = [Oracle("ours", ours_env(seed), 120) for seed in ("1", "2")]
    try:
        for oracle in oracles:
            oracle.submit(list(given.values()))
        runs = [oracle.collect() for oracle in oracles]
    finally:
        for oracle in oracles:
            oracle.close()
    assert runs == [[ours(data) for data in given.values()]] * 2


@pytest.mark.parametrize("case", CRASH_CASES, ids=lambda c: c.id)
def test_where_the_reference_crashes_we_answer(case: Case, reference: dict[str, dict]) -> None:
    """robot-md raises an uncaught exception here; we give a result (or a one-line parse error),
    and every view works."""
    assert reference[case.id]["crash"].startswith(case.note), reference[case.id]
    first = ours(case.data)
    assert first["code"] in (0, 1, 2, 4)
    if first["code"] == 1:
        assert len(first["errors"]) == 1 and "\n" not in first["errors"][0]
    else:
        manifest = rmm.parse(rmm.decode(case.data).text)
        for view in rmm.VIEWS:
            view.text(manifest)


# --- the stored answers are the reference's (heavy: downloads it, or reads ../shared) -----------


@pytest.mark.heavy
def test_stored_answers_are_the_live_reference() -> None:
    """Rerun robot-md 1.10.6 (from PyPI) over every input: the answers stored for the library
    versions in use must be exactly that (none stored: record them, see stored_reference.py)."""
    stored = stored_reference.load()
    assert stored is not None, (
        f"no answers stored for {stored_reference.versions()}: run tests/support/stored_reference.py"
    )
    assert stored_reference.live() == stored


@pytest.mark.heavy
def test_stored_corpus_answers_are_the_shared_reference_results() -> None:
    """The corpus part agrees with ../shared/reference/api, recorded independently of
    reference_oracle.py (which drops the `_deprecations` key robot-md leaks into render)."""
    need(SHARED_API.is_dir(), f"the reference's recorded results in {SHARED_API}")
    stored = stored_reference.answers()
    for path in corpus_files():
        shared = json.loads((SHARED_API / f"{path.name}.api.json").read_text(encoding="utf-8"))
        mine = stored[path.name]
        assert mine["code"] == shared["code"], path.name
        if "parse_error" in shared:
            assert (mine["errors"], mine["warnings"], mine["render"]) == ([shared["parse_error"]], [], None)
            continue
        for key in ("errors", "warnings", "summary"):
            assert mine[key] == shared[key], (path.name, key)
        leaked = shared["render"].removeprefix(mine["render"])
        assert leaked == "" or leaked.startswith("_deprecations:\n"), (path.name, leaked[:200])
