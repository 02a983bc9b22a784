"""Section 2: parsing (the fine points; YAML 1.1 values, YAML errors, unsafe tags, legacy cameras and the
shapes that crash the reference are cases of tests/support/cases.py, compared by test_parity.py)."""

from __future__ import annotations

import datetime as dt
import re
import threading
import time

import pytest
from conftest import EXAMPLE
from fuzz_strategies import bob_with, merge_bomb

import robot_md_mcp as rmm

MINIMAL = "---\nmetadata:\n  robot_name: bob\n---\n# bob\n"


def test_splits_frontmatter_and_stripped_body() -> None:
    m = rmm.parse("---\na: 1\n---\n\n  # bob\n\ntext\n---\nmore\n\n")
    assert m.frontmatter == {"a": 1}
    assert m.body == "# bob\n\ntext\n---\nmore"  # later delimiters stay in the body
    assert m.prose == "\n  # bob\n\ntext\n---\nmore\n\n"  # verbatim after the closing line
    assert m.deprecations is None


@pytest.mark.parametrize(
    ("text", "prose"),
    [
        ("---\na: 1\n---\n# bob\n", "# bob\n"),
        ("\n\n---\na: 1\n----  \n\n\n# bob", "\n\n# bob"),
        ("---\na: 1\n---", ""),
        ("---\na: 1\n---\n", ""),
        ("  ---\na: 1\n---\t\n x\n---\n", " x\n---\n"),
    ],
)
def test_prose_is_everything_after_the_closing_line(text: str, prose: str) -> None:
    assert rmm.parse(text).prose == prose


def test_robot_name_only_when_a_nonempty_string() -> None:
    assert rmm.parse(MINIMAL).robot_name == "bob"
    assert rmm.parse("---\nmetadata:\n  robot_name: ''\n---\n").robot_name is None
    assert rmm.parse("---\nmetadata:\n  robot_name: 7\n---\n").robot_name is None
    assert rmm.parse("---\nmetadata: [1]\n---\n").robot_name is None


def test_a_bad_date_is_pythons_own_words_as_the_reference_passes_them_on() -> None:
    """Not a case of cases.py, as the other parse errors are (compared with the reference by test_parity.py):
    Python's wording changes (3.15 adds ", not 13")."""
    with pytest.raises(ValueError) as python:
        dt.date(2026, 13, 45)
    with pytest.raises(rmm.ManifestError) as e:
        rmm.parse("---\nd: 2026-13-45\n---\n")
    assert e.value.what == f"frontmatter parse error: {python.value}"


def test_sets_are_ordered_whatever_the_hash_seed() -> None:
    """Sorted here; test_parity.py runs validate and render with sets under other hash seeds."""
    m = rmm.parse("---\ns: !!set {zeta, alpha, mid}\nrcan_version: !!set {b, a, c}\n---\n")
    assert list(m.frontmatter["s"]) == ["alpha", "mid", "zeta"]
    assert repr(m.frontmatter["s"]) == "{'alpha', 'mid', 'zeta'}"
    assert "schema: rcan_version: {'a', 'b', 'c'} is not of type 'string'" in rmm.validate(m).errors
    assert "s: !!set\n  alpha: null\n  mid: null\n  zeta: null\n" in rmm.render(m)


def _nested(levels: int) -> str:
    """A manifest whose frontmatter is `levels` deep (the top mapping is the first level)."""
    return bob_with("deep: " + "[" * (levels - 1) + "1" + "]" * (levels - 1) + "\n")


def _every_path(text: str) -> None:
    manifest = rmm.parse(text)
    report = rmm.validate(manifest)
    rmm.to_json(manifest.frontmatter)
    rmm.render(manifest)
    rmm.context(manifest, report)
    for view in rmm.VIEWS:
        view.text(manifest, report)


def test_the_depth_limit_leaves_every_path_working_on_a_small_stack() -> None:
    """At MAX_DEPTH, parse, validate, JSON, render and the briefing all work in a thread with
    512 KiB of stack (macOS's default for threads), called from 60 frames down (the server's
    worker threads and the CLI call them from under 30); one level more is refused."""
    failures: list[BaseException] = []

    def deep_call(frames: int) -> None:
        if frames:
            deep_call(frames - 1)
            return
        try:
            _every_path(_nested(rmm.MAX_DEPTH))
        except BaseException as e:  # handed to the test's thread
            failures.append(e)

    previous = threading.stack_size(512 * 1024)
    try:
        worker = threading.Thread(target=deep_call, args=(60,))
        worker.start()
        worker.join()
    finally:
        threading.stack_size(previous)
    assert failures == []
    with pytest.raises(rmm.ManifestError, match=f"nested more than {rmm.MAX_DEPTH} levels"):
        rmm.parse(_nested(rmm.MAX_DEPTH + 1))


def test_merge_key_bombs_are_refused_or_answered_quickly() -> None:
    """`<<` merges copy pairs while PyYAML builds the data: with PyYAML 6.0.3 two levels of 100 merges
    of a 50-key mapping would be 500,000 pairs, so each merge's pairs are counted before they are
    copied; 6.0.4 merges each key once, so the same file is small. Either way: refused in one line, or
    answered with PyYAML's merge, every path within a second."""

    def bomb(levels: int, width: int) -> str:
        lines = merge_bomb(levels, width, 50)
        return "---\nmetadata: {robot_name: bob}\n" + "\n".join(lines) + "\n---\n# bob\n"

    for levels in (2, 3, 6):
        started = time.monotonic()
        try:
            merged = rmm.parse(bomb(levels, 100)).frontmatter[f"l{levels}"]
        except rmm.ManifestError as e:
            assert e.what == rmm.TOO_MANY_VALUES
        else:
            assert merged == {f"k{i}": i for i in range(50)}
            _every_path(bomb(levels, 100))
        assert time.monotonic() - started < 1.0
    merged = rmm.parse(bomb(1, 100)).frontmatter["l1"]  # merges within budget work as in PyYAML
    assert merged == {f"k{i}": i for i in range(50)}


def test_self_reference_parses_validates_and_renders_as_in_robot_md() -> None:
    m = rmm.parse("---\ncapabilities: &c [*c]\nx: &d {y: *d}\n---\n")
    assert m.frontmatter["capabilities"][0] is m.frontmatter["capabilities"]
    assert "schema: capabilities.0: [[...]] is not of type 'string'" in rmm.validate(m).errors
    assert rmm.render(m) == "capabilities: &id001\n- *id001\nx: &id002\n  y: *id002\n"
    # ...but it has no JSON form: that view says so instead of recursing forever.
    with pytest.raises(rmm.ManifestError) as e:
        rmm.to_json(m.frontmatter)
    assert (
        e.value.what
        == "cannot be shown as JSON: the YAML alias at capabilities.0 refers to a value containing it"
    )
    # A shared (not self-containing) value is fine.
    shared = rmm.parse("---\na: &a [1]\nb: *a\nc: [*a, *a]\n---\n")
    assert rmm.json_safe(shared.frontmatter) == {"a": [1], "b": [1], "c": [[1], [1]]}


def test_user_written_deprecations_marker() -> None:
    m = rmm.parse("---\n_deprecations: [old thing]\na: 1\n---\n")
    assert m.frontmatter == {"a": 1}
    assert m.deprecations == ("old thing",)
    assert rmm.parse("---\n_deprecations: 5\na: 1\n---\n").deprecations == (5,)
    assert rmm.parse("---\n_deprecations: []\na: 1\n---\n").deprecations == ()


EITHER_DEEP = rf"frontmatter nested more than {rmm.MAX_DEPTH} levels deep|frontmatter YAML parse error: "
# What a version would cost, refused at parse: frontmatter lines, and a pattern its message starts with
# (alias bombs, long integers, 100,000 flow levels and more are test_hostile_files.py's CASES, refused
# through main()). A nesting bomb's refusal is ours, or the YAML error of a LibYAML that has a nesting limit
# of its own and meets it first (PyYAML 6.0.4's does, at 1,000 flow levels; 6.0.3's has none).
REFUSED = {
    # A string render must escape costs four a character.
    "escaped string": ('x_s: "' + "\\x01" * (rmm.MAX_TEXT_CHARS // 4 + 1) + '"\n', rmm.TOO_MUCH_TEXT),
    "tagged sexagesimal": ("x_n: !!int 1" + ":1" * 3000 + "\n", rmm.TOO_LONG_INTEGER),
    # robot-md reports Python's own refusal to build it (its wording is Python's: not pinned here).
    "decimal past Python's limit": ("x_n: " + "1" * 5000 + "\n", "frontmatter parse error: .*4300"),
    **{
        f"{levels} flow levels": ("x_a: " + "[" * levels + "]" * levels + "\n", EITHER_DEEP)
        for levels in (rmm.MAX_DEPTH + 1, 999, 1001, 5000)
    },
}


@pytest.mark.parametrize("name", REFUSED)
def test_what_a_version_would_cost_is_refused_at_parse_in_one_line(name: str) -> None:
    lines, pattern = REFUSED[name]
    started = time.monotonic()
    with pytest.raises(rmm.ManifestError) as e:
        rmm.parse(bob_with(lines))
    assert re.match(pattern, e.value.what) and "\n" not in e.value.for_people(), e.value.what
    assert time.monotonic() - started < 1.0


def test_just_within_the_budgets_every_path_works() -> None:
    _every_path(bob_with("x_n: 0x" + "f" * 3570 + "\n"))  # 4,298 digits
    _every_path(bob_with("x_n: 1" + ":1" * 2000 + "\n"))
    _every_path(bob_with("x_s: &s " + "x" * 9000 + "\nx_l: [" + "*s, " * 9 + "]\n"))


def test_a_message_quoting_a_huge_value_is_cut() -> None:
    long_name = "[" + ", ".join(["x" * 50] * 400) + "]"
    report = rmm.validate(rmm.parse(bob_with("").replace("robot_name: bob", f"robot_name: {long_name}")))
    quoting = [e for e in report.errors if e.startswith("schema: metadata.robot_name: ['xxx")]
    assert quoting, report.errors
    for error in quoting:
        assert len(error) < rmm.MAX_MESSAGE_CHARS + 60
        assert error.startswith("schema: metadata.robot_name: ['" + "x" * 50 + "', ")
        assert error.endswith(" more characters cut)")


LATER_VERBS: tuple[list[str], ...] = ([], ["validate", "--json"], ["render"], ["--version"])


@pytest.mark.parametrize(
    "verb", [["validate"], *(pytest.param(v, marks=pytest.mark.process) for v in LATER_VERBS)]
)
def test_a_pyyaml_without_libyaml_is_one_line_and_exit_1(verb: list[str]) -> None:
    """As PyYAML built from source without LibYAML: the module imports, each verb says why in one
    line and exits 1 (no AttributeError traceback at import); --version still answers."""
    from serving import faulty, run

    args = verb if verb == ["--version"] else [*verb, EXAMPLE]
    done = run(*args, command=faulty("no-libyaml", start="script"), timeout=30)
    if verb == ["--version"]:
        assert done.returncode == 0 and done.stderr == ""
        return
    assert (done.returncode, done.stdout) == (1, ""), done.stderr
    assert done.stderr.startswith("robot-md-mcp: cannot start: PyYAML ") and done.stderr.count("\n") == 1
    assert "without LibYAML" in done.stderr
