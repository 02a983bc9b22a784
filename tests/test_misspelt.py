"""Misspelt keys named (section 3's `misspelt_keys`): every property schema.json names, three levels deep,
misspelt by the slips people make (deletions, insertions, substitutions, swaps of neighbours, case,
`-` for `_`, a unit suffix swapped or left off) gets a hint naming the key it should be; keys far from
any known key get none; nothing under `extensions`; and the hint reaches `validate` (text, --json, the
tool), the briefing and the startup line, quoting the manifest's key."""

from __future__ import annotations

import json
import re
import string
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from conftest import ROOT
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from manifest_fields import fields
from serving import in_process
from text_structure import hidden

import robot_md_mcp as rmm

SCHEMA = json.loads((ROOT / "schema.json").read_text(encoding="utf-8"))
EXAMPLE = ROOT / "examples" / "bob.ROBOT.md"


def kinds(node: dict[str, Any]) -> set[str]:
    kind = node.get("type")
    return set(kind if isinstance(kind, list) else [kind])


FIELDS = [(path, node) for path, node in fields(SCHEMA) if path[-1:] != ("extensions",)]
# (path, properties) of every mapping whose keys the schema names, down to three levels of keys
PLACES = [(p, n["properties"]) for p, n in FIELDS if n.get("properties") and len(p) - p.count("[]") < 3]
PROPERTIES = [(path, key, sorted(props)) for path, props in PLACES for key in props]


def manifest_at(path: tuple[str, ...], keys: dict[str, Any]) -> dict[str, Any]:
    """A frontmatter holding `keys` in the mapping at `path`."""
    value: Any = keys
    for part in reversed(path):
        value = [value] if part == "[]" else {"ready" if part == "<name>" else part: value}
    return value  # type: ignore[no-any-return]


def osa(a: str, b: str) -> int:
    """Optimal string alignment distance (the test's own, textbook dynamic programme)."""
    d = [[i + j if i * j == 0 else 0 for j in range(len(b) + 1)] for i in range(len(a) + 1)]
    for i in range(1, len(a) + 1):
        for j in range(1, len(b) + 1):
            d[i][j] = min(d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + (a[i - 1] != b[j - 1]))
            if i > 1 and j > 1 and a[i - 1] == b[j - 2] and a[i - 2] == b[j - 1]:
                d[i][j] = min(d[i][j], d[i - 2][j - 2] + 1)
    return d[len(a)][len(b)]


LETTERS = string.ascii_lowercase + string.digits + "_"


@st.composite
def slip(draw: st.DrawFn, word: str) -> str:
    """One deletion, insertion, substitution or swap of neighbours in `word` (never a no-op)."""
    kinds = ["insert", *(["delete", "substitute"] if word else []), *(["swap"] if len(word) > 1 else [])]
    kind = draw(st.sampled_from(kinds))
    i = draw(st.integers(0, len(word) - (kind != "insert") - (kind == "swap")))
    if kind == "insert":
        return word[:i] + draw(st.sampled_from(LETTERS)) + word[i:]
    if kind == "delete":
        return word[:i] + word[i + 1 :]
    if kind == "swap":
        swapped = word[:i] + word[i + 1] + word[i] + word[i + 2 :]
        return swapped if swapped != word else word + draw(st.sampled_from(LETTERS))
    letter = draw(st.sampled_from([c for c in LETTERS if c != word[i]]))
    return word[:i] + letter + word[i + 1 :]


@st.composite
def misspelling(draw: st.DrawFn, key: str) -> str:
    """`key` with as many slips as a hint allows for it (each in its own part of the key, so two
    never undo or overlap each other), a case or `-` change, or its unit suffix swapped or dropped."""
    allowed = rmm.slips_allowed(key)
    stem, _, unit = key.rpartition("_")
    ways = ["case"] + (["slips"] if allowed else []) + (["unit"] if stem and unit in rmm._UNIT_WORDS else [])
    way = draw(st.sampled_from(ways))
    if way == "case":
        changed = key.upper() if draw(st.booleans()) else key.replace("_", "-")
        return changed if changed != key else key.capitalize() if key.capitalize() != key else key + "X"
    if way == "unit":
        other = draw(st.sampled_from(sorted((rmm._UNIT_WORDS - {unit}) | {""})))
        return f"{stem}_{other}" if other else stem
    count = draw(st.integers(1, allowed))
    cut = draw(st.integers(0, len(key))) if count == 2 else len(key)
    left, right = key[:cut], key[cut:]
    left = draw(slip(left))
    if count == 2:
        right = draw(slip(right))
    return left + right


def unknown_there(word: str, path: tuple[str, ...], props: list[str]) -> bool:
    """Not a key the schema knows at that place, nor one a level down (those get a hint naming their
    place, tested below)."""
    folded = rmm._folded(word)
    if folded in {rmm._folded(p) for p in props}:
        return False
    below = rmm._schema_keys()
    for part in path:
        nxt = below.items if part == "[]" else below.entries if part == "<name>" else below.known.get(part)
        assert nxt is not None
        below = nxt
    return folded not in below.below


# Other words for a key's words and its unit (the module's _SYNONYMS and _UNIT_WORDS)
WORDS_FOR = {
    meant: [w for w, m in rmm._SYNONYMS.items() if m == meant] for meant in set(rmm._SYNONYMS.values())
}
SAID_OTHERWISE = [
    (path, key, props)
    for path, key, props in PROPERTIES
    if any(w in WORDS_FOR for w in key.split("_")) or key.rpartition("_")[2] in rmm._UNIT_WORDS
]


@st.composite
def said_otherwise(draw: st.DrawFn, key: str) -> str:
    """`key` in other words: each word a synonym of it (or itself), its unit suffix another or none."""
    stem, _, unit = key.rpartition("_")
    words, unit = (stem.split("_"), unit) if stem and unit in rmm._UNIT_WORDS else (key.split("_"), "")
    words = [draw(st.sampled_from([w, *WORDS_FOR.get(w, [])])) for w in words]
    if unit:
        unit = draw(st.sampled_from(sorted(rmm._UNIT_WORDS | {""})))
    return "_".join(words + [unit] * bool(unit))


def check_misspelling_is_named(data: st.DataObject) -> dict[str, Any] | None:
    """A property misspelt, or said in other words, in a whole mapping otherwise right: the hint names
    it; misspelt alone in its mapping: the hint names it, and only it or keys as near. The frontmatter,
    or None where the slip made another known key."""
    if data.draw(st.booleans(), "in other words"):
        path, key, props = data.draw(st.sampled_from(SAID_OTHERWISE))
        typo, alone = data.draw(said_otherwise(key)), False
    else:
        path, key, props = data.draw(st.sampled_from(PROPERTIES))
        typo, alone = data.draw(misspelling(key)), data.draw(st.booleans(), "alone")
    if typo == key or not unknown_there(typo, path, props):
        return None  # the slip made another known key (e.g. rrn -> rmn): nothing to name
    fm = manifest_at(path, {typo: 1} if alone else {**{p: None for p in props if p != key}, typo: 1})
    found = [(m.key, m.meant) for m in rmm.misspelt_keys(fm)]
    if not alone:
        assert found == [(typo, (key,))], (path, key, typo)
        return fm
    ((_, meant),) = found
    folded = rmm._folded(typo)
    if any(rmm._unit_swapped(folded, rmm._folded(p)) for p in props):
        return fm  # alone, a unit swapped may name another of its stem (limits_cm: limits_mm)
    near = osa(folded, rmm._folded(key))
    assert key in meant and all(osa(folded, rmm._folded(m)) <= near for m in meant), (typo, meant)
    return fm


@settings(max_examples=80, deadline=None, suppress_health_check=list(HealthCheck))
@given(data=st.data())
def test_every_property_misspelt_is_named(data: st.DataObject) -> None:
    fm = check_misspelling_is_named(data)
    if fm is not None:  # the briefing carries every hint (the test at length skips it: its time)
        assert_every_hint_in_the_briefing(fm)


@pytest.mark.heavy
@settings(max_examples=5_000, deadline=None, suppress_health_check=list(HealthCheck), derandomize=True)
@given(data=st.data())
def test_every_property_misspelt_is_named_at_length(data: st.DataObject) -> None:
    check_misspelling_is_named(data)


def far(word: str, props: list[str]) -> bool:
    """Further from every key than a hint allows, and no unit suffix of one swapped."""
    folded = rmm._folded(word)
    return all(
        osa(folded, rmm._folded(p)) > rmm.slips_allowed(p) and not rmm._unit_swapped(folded, rmm._folded(p))
        for p in props
    )


@settings(max_examples=30, deadline=None, suppress_health_check=list(HealthCheck))
@given(data=st.data())
def test_keys_far_from_every_known_key_get_no_hint(data: st.DataObject) -> None:
    path, props = data.draw(st.sampled_from(PLACES))
    word = data.draw(st.text(LETTERS + "-", min_size=1, max_size=30))
    if not far(word, sorted(props)) or not unknown_there(word, path, sorted(props)):
        return
    assert rmm.misspelt_keys(manifest_at(path, {word: 1})) == ()


# fmt: off
NAMED = [  # a frontmatter, and each key named in it with the first key it may mean
    # keys people add: none named
    ({"drivers": [{"host": 1, "topic": 1}]}, []),  # host: two slips from port; topic: ROS drivers
    ({"metadata": {"url": 1, "owner": 1}, "x-vendor": 1}, []),  # url: two slips from rrn
    ({"safety": {"notes": 1, "estop": {"button": 1}}, "physics": {"wheel_base_mm": 1}}, []),
    # a key one level too high: named with its place
    ({"robot_name": "bob", "max_linear_velocity_ms": 1, "metadata": {"response_ms": 5}},
     [("robot_name", "metadata.robot_name"), ("max_linear_velocity_ms", "safety.max_linear_velocity_ms")]),
    # the nested slips; of two parents as near, the one that knows what it holds
    ({"compliance": {"iso_42010": {"levl": 3}}}, [("iso_42010", "iso_42001"), ("levl", "level")]),
    ({"metadaat": {"moddel": "x"}}, [("metadaat", "metadata"), ("moddel", "model")]),
    ({"physics": {"solver": {"camera": {}, "cameras": [], "gripperr": {"tip_ofset_mm": [1]}}}},
     [("gripperr", "gripper"), ("tip_ofset_mm", "tip_offset_mm")]),
]
# fmt: on
SAID_SO = {  # the synonyms
    "max_linear_speed_mps": "max_linear_velocity_ms",
    "max_linear_vel_m_s": "max_linear_velocity_ms",
    "max_joint_speed_deg_per_sec": "max_joint_velocity_dps",
    "max_joint_velocity_deg": "max_joint_velocity_dps",
    "load_kg": "payload_kg",
}
NAMED += [({"safety": {key: 1}}, [(key, meant)]) for key, meant in SAID_SO.items()]


@pytest.mark.parametrize(("fm", "named"), NAMED)
def test_fixed_examples_are_named_or_not(fm: dict[str, Any], named: list[tuple[str, str]]) -> None:
    assert [(m.key, *m.meant) for m in rmm.misspelt_keys(fm)] == named


@settings(max_examples=40, deadline=None)
@given(key=st.sampled_from(sorted(SCHEMA["properties"])), nested=st.booleans())
def test_nothing_under_extensions(key: str, nested: bool) -> None:
    typo = key + "s"
    inside = {typo: {typo: 1}} if nested else {typo: 1}
    assert rmm.misspelt_keys({"extensions": inside, "metadata": {"robot_name": "r"}}) == ()


def test_the_corpus_gets_no_false_hint() -> None:
    """Real manifests (tests/corpus) hold keys of their own and get no hint; only an actuator package
    (not a robot's manifest) has `version` and `license` at the top, which are metadata's."""
    hints = {}
    for path in sorted((ROOT / "tests" / "corpus").glob("*.md")):
        try:
            manifest = rmm.parse(rmm.read_source(path).text)
        except rmm.ManifestError:
            continue
        found = rmm.misspelt_keys(manifest.frontmatter)
        if found:
            hints[path.name] = [(m.key, m.meant) for m in found]
    assert hints == {
        "soact__actuator-package-ROBOT.ROBOT.md": [
            ("version", ("metadata.version",)),
            ("license", ("metadata.license",)),
        ]
    }


@pytest.mark.heavy
def test_robot_md_presets_get_no_hint() -> None:
    """robot-md 1.10.6's own presets (what `robot-md init` writes a manifest from) use keys of their own
    (a driver's `topic`, a preset's `match`): none gets a hint."""
    import yaml
    from conftest import install_reference, need

    reference = install_reference()
    need(reference is not None, "robot-md 1.10.6 from PyPI (its presets)")
    assert reference is not None
    presets = sorted((reference / "robot_md" / "presets").glob("*.yaml"))
    assert len(presets) >= 16
    hinted = {}
    for preset in presets:
        found = rmm.misspelt_keys(yaml.safe_load(preset.read_text(encoding="utf-8")))
        if found:
            hinted[preset.name] = [m.hint for m in found]
    assert hinted == {}


def test_the_hint_shows_what_is_invisible_in_the_place_it_names() -> None:
    (found,) = rmm.misspelt_keys({"physics": {"poses": {"a\u200bb": {"jonts": {}}}}})
    assert found.hint.startswith('"jonts" in physics.poses."a<U+200B>b" is not')


DANGEROUS = ["\n", "\r", "\u2028", "\u202e", "\u200b", "\x1b", '"', "\\", "`", "#", "|", "\ufeff", "\x85"]


@settings(max_examples=20, deadline=None)
@given(
    place=st.sampled_from([path for path, props in PLACES if any(len(p) >= 5 for p in props)]),
    chars=st.lists(st.sampled_from(DANGEROUS), min_size=1, max_size=2),
    data=st.data(),
)
def test_a_hint_is_one_line_of_ours_whatever_the_key_holds(
    place: tuple[str, ...], chars: list[str], data: st.DataObject
) -> None:
    """A key one or two dangerous characters from a known one: the hint names it, quoted, on one
    line, with nothing invisible left in it."""
    props = dict(PLACES)[place]
    key = data.draw(st.sampled_from([p for p in props if len(p) >= 5]))
    at = data.draw(st.integers(0, len(key)))
    typo = key[:at] + "".join(chars) + key[at:]
    (found,) = rmm.misspelt_keys(manifest_at(place, {typo: 1}))
    assert key in found.meant
    assert found.hint.startswith(json.dumps(rmm.visible(typo), ensure_ascii=False))
    assert found.hint.splitlines() == [found.hint]
    assert hidden(found.hint, allowed="") == []


def test_a_hostile_number_of_unknown_keys_costs_little() -> None:
    fm = {f"{name}{i}"[: len(name)]: i for i in range(20_000) for name in ["capabilitiez"]}
    fm.update({f"k{i:05d}": i for i in range(20_000)})
    started = time.perf_counter()
    rmm.misspelt_keys(fm)
    assert time.perf_counter() - started < 0.5


def test_only_the_first_keys_are_examined() -> None:
    fm = {f"zz{i}": i for i in range(rmm.MAX_KEYS_EXAMINED)}
    assert rmm.misspelt_keys({**fm, "capabilites": []}) == ()
    assert rmm.misspelt_keys({"capabilites": [], **fm}) != ()


# --- Units: a table we keep by hand, covering every numeric field -------------------------------


NUMBERS = {"number", "integer"}


def numeric_fields() -> Iterator[str]:
    """Every number, or list of numbers, the schema describes (a list's numbers by their list)."""
    for path, node in FIELDS:
        items = node.get("items")
        listed = "array" in kinds(node) and isinstance(items, dict) and kinds(rmm._shape(items)) & NUMBERS
        alone = kinds(node) & NUMBERS and path[-1:] != ("[]",)
        if alone or listed:
            yield ".".join(path).replace(".[]", "[]")


def test_units_cover_every_numeric_field() -> None:
    fields = set(numeric_fields())
    assert "safety.max_linear_velocity_ms" in fields and "safety.estop.response_ms" in fields
    assert fields == set(rmm.UNITS), (sorted(fields - set(rmm.UNITS)), sorted(set(rmm.UNITS) - fields))
    assert (
        rmm.UNITS["safety.max_linear_velocity_ms"] == "m/s" and rmm.UNITS["safety.estop.response_ms"] == "ms"
    )


# --- Where the hints reach ----------------------------------------------------------------------

ROVER = """---
rcan_version: "3.0"
metadata:
  robot_name: rover
physics:
  type: wheeled
  dof: 2
drivers:
  - id: base
    protocol: ros2
capabilites:
  - nav.go_to
safety:
  max_linear_velocity_mps: 0.5
  estop:
    software: true
    response_ms: 100
---

# rover

## Identity

## What rover Can Do

## Safety Gates
"""


def test_the_briefing_names_the_key_where_it_would_say_not_declared() -> None:
    manifest = rmm.parse(ROVER)
    text = rmm.context(manifest)
    capabilities = text.split("## Capabilities (0)", 1)[1].split("## Safety", 1)[0]
    assert '- Not read: "capabilites" at the top level is not a field' in capabilities
    safety = text.split("## Safety\n", 1)[1].split("## Validation", 1)[0]
    assert "- Max linear velocity: not declared" in safety
    assert (
        '- Not read: "max_linear_velocity_mps" in safety is not a field this schema knows — did you mean '
        "max_linear_velocity_ms (m/s)?" in safety
    )


def test_the_startup_line_names_a_misspelt_metadata(
    manifest_path: Callable[..., Path], capsys: pytest.CaptureFixture[str]
) -> None:
    path = manifest_path(ROVER.replace("metadata:", "metdata:"))
    assert rmm.main([str(path)]) == 1
    (line,) = capsys.readouterr().err.splitlines()
    assert line == (
        "robot-md-mcp: metadata.robot_name is missing or not a non-empty string; "
        '"metdata" at the top level is not a field this schema knows — did you mean metadata? '
        f"({path})"
    )
    path.write_text(ROVER.replace("robot_name:", "robot_nme:"), encoding="utf-8")
    assert rmm.main([str(path)]) == 1
    assert "did you mean robot_name?" in capsys.readouterr().err


@pytest.mark.anyio
async def test_validate_json_and_the_tool_carry_the_hints(
    manifest_path: Callable[..., Path], capsys: pytest.CaptureFixture[str]
) -> None:
    """`validate --json` and the `validate` tool: the hints `validate` prints (its text: docs/manifest.md's
    example, test_manifest_doc.py), after robot-md's own strings, which stay as they were; the file
    broken while served, the tool's error carries the same hint as `validate` (test_a_yaml_slip_...)."""
    path = manifest_path(ROVER)
    hints = rmm.validate(rmm.parse(ROVER)).hints()
    assert len(hints) == 2
    assert rmm.main(["validate", "--json", str(path)]) == 0
    answer = json.loads(capsys.readouterr().out)
    assert list(answer) == ["ok", "summary", "errors", "warnings", "hints"]
    assert (answer["errors"], answer["warnings"], answer["hints"]) == ([], [], hints)
    async with in_process(path, "legacy") as client:
        result = await client.call_tool("validate", {})
        assert result.structured_content is not None and result.structured_content["hints"] == hints
        path.write_text(ROVER.replace("  type: wheeled\n", "  type wheeled\n"), encoding="utf-8")
        broken = await client.call_tool("validate", {})
    assert broken.is_error
    (text,) = [item.text for item in broken.content if item.type == "text"]
    assert text.startswith("robot-md-mcp: frontmatter YAML parse error: ")
    assert text.endswith(
        f"({path}); hint: line 7 is indented deeper than the key above it, "
        "or line 6 lacks its ':' or a closing quote"
    ), text


# --- Indentation: a block YAML read as empty, and where a YAML error's slip really is -----------


def test_a_block_read_as_empty_asks_if_it_is_indented(
    manifest_path: Callable[..., Path], capsys: pytest.CaptureFixture[str]
) -> None:
    path = manifest_path(
        ROVER.replace("    software: true\n    response_ms: 100", "  software: true\n  response_ms: 100")
    )
    assert rmm.main(["validate", str(path)]) == 2
    out = capsys.readouterr().out.splitlines()
    at = out.index("✗ schema: safety.estop: None is not of type 'object'")
    assert out[at + 1].startswith("  hint: YAML read safety.estop as empty: is it indented?")


@pytest.mark.parametrize(
    ("before", "after", "line", "words"),
    [
        (
            "  robot_name: rover\n",
            "  robot_name: rover\n  model r1\n  version: v1\n",
            4,
            "the key on line 8 has no ':' after it (YAML noticed at line 9)",
        ),
        ("  type: wheeled\n", "  type wheeled\n", 6, "line 9 lacks its ':'"),  # YAML's place: line 10
        ("    protocol: ros2\n", "   protocol: ros2\n", 10, "line 13 is indented differently"),
        ("    software: true\n", "   software: true\n", 16, "line 20 is indented deeper"),
        ("  dof: 2\n", "    dof: 2\n", 7, "line 10 is indented deeper"),
        ("  dof: 2\n", "\tdof: 2\n", 7, "line 10 holds a tab"),
    ],
)
def test_a_yaml_slip_is_placed_on_its_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], before: str, after: str, line: int, words: str
) -> None:
    """Lines are the file's, blank lines before and after the opening `---` counted."""
    text = "\n\n" + ROVER.replace(before, after).replace("---\n", "---\n\n", 1)
    path = tmp_path / "ROBOT.md"
    path.write_text(text, encoding="utf-8")
    assert text.splitlines()[line + 3 - 1] == after.splitlines()[0]  # ROBOT.md's line 1 is the file's 4
    assert rmm.main(["validate", str(path)]) == 1
    err = capsys.readouterr().err.splitlines()
    assert len(err) == 2 and err[0].startswith("robot-md-mcp: frontmatter YAML parse error")
    assert err[1].startswith("  hint: ") and words in err[1], err
    assert rmm.main(["validate", "--json", str(path)]) == 1
    assert json.loads(capsys.readouterr().out)["hints"] == [err[1].removeprefix("  hint: ")]


SAFETY_KEYS = [key for path, key, _ in PROPERTIES if path == ("safety",)]


@settings(max_examples=30, deadline=None, suppress_health_check=list(HealthCheck))
@given(data=st.data())
def test_a_misspelt_safety_key_is_named_once_as_not_read(data: st.DataObject) -> None:
    """The briefing's Safety section names a misspelt safety key on its "Not read:" line only,
    never also among the keys it lists as declared; a key it does not know stays listed there."""
    key = data.draw(st.sampled_from(SAFETY_KEYS))
    typo = data.draw(misspelling(key))
    if not unknown_there(typo, ("safety",), [k for p, k, _ in PROPERTIES if p == ("safety",)]):
        return  # the slip made another known key: nothing to name
    fm = {"rcan_version": "3.0", "metadata": {"robot_name": "bob"}, "safety": {typo: 1, "team_colour": 1}}
    manifest = rmm.parse("---\n" + json.dumps(fm) + "\n---\n# bob\n")
    safety = rmm.context(manifest).split("## Safety\n", 1)[1].split("## Validation", 1)[0]
    named = [line for line in safety.splitlines() if json.dumps(typo) in line]
    assert len(named) == 1 and named[0].startswith("- Not read: "), (typo, safety)
    assert '"team_colour"' in safety


# --- A misspelt key under a misspelt parent: checked against the parent suggested ---------------

NESTED = [(path, key, props) for path, key, props in PROPERTIES if path and path[-1] not in ("[]", "<name>")]


def in_validation(fm: dict[str, Any]) -> list[str]:
    """The briefing's Validation section for `fm`, line by line."""
    text = rmm.context(rmm.parse("---\n" + json.dumps(fm) + "\n---\n# robot\n"))
    return text.split("## Validation\n", 1)[1].split("\n## ", 1)[0].splitlines()


def assert_every_hint_in_the_briefing(fm: dict[str, Any]) -> None:
    hints = rmm.validate(rmm.parse("---\n" + json.dumps(fm) + "\n---\n# robot\n")).hints()
    lines = in_validation(fm)
    assert all(f"  - {hint}" in lines for hint in hints), (hints, lines)


@settings(max_examples=25, deadline=None, suppress_health_check=list(HealthCheck))
@given(data=st.data())
def test_a_misspelt_key_under_a_misspelt_parent_is_named(data: st.DataObject) -> None:
    """At every depth: the parent is named, and its child too, against the parent suggested."""
    path, key, props = data.draw(st.sampled_from(NESTED))
    above, parent = path[:-1], path[-1]
    parent_props = sorted(dict(PLACES)[above])
    typo_parent, typo = data.draw(misspelling(parent)), data.draw(misspelling(key))
    if not (unknown_there(typo_parent, above, parent_props) and unknown_there(typo, path, props)):
        return  # a slip that made a known key: nothing to name
    inner = {**{p: None for p in props if p != key}, typo: 1}
    fm = manifest_at(above, {**{p: None for p in parent_props if p != parent}, typo_parent: inner})
    found = [(m.key, m.meant) for m in rmm.misspelt_keys(fm)]
    assert found == [(typo_parent, (parent,)), (typo, (key,))], (path, key)
    assert_every_hint_in_the_briefing(fm)


# --- Values: a hint under an enum miss, a fraction, a number for text; its example validates ----


# intrinsic is a oneOf (an object or a reference): a wrong value there gets the oneOf's own message
LEAVES = [(path, node) for path, node in FIELDS if path and "intrinsic" not in path]


def holding(path: tuple[str, ...], value: Any) -> dict[str, Any]:
    """A frontmatter with `value` at `path`."""
    if path[-1] == "[]":
        return manifest_at(path[:-1], [value])  # type: ignore[arg-type]
    return manifest_at(path[:-1], {"ready" if path[-1] == "<name>" else path[-1]: value})


def dotted(path: tuple[str, ...]) -> str:
    return ".".join("0" if p == "[]" else "ready" if p == "<name>" else p for p in path)


def errors_at(fm: dict[str, Any], path: tuple[str, ...]) -> list[str]:
    return [e for e in rmm.schema_errors(fm) if e.startswith(f"schema: {dotted(path)}: ")]


EXAMPLE_IN_HINT = re.compile(r"(?:e\.g\.|did you mean|or) (- |[\w-]+: )(\S+?)(?=[?);]| for | or |$)")


def examples(hint: str) -> list[Any]:
    """The values a hint gives as examples (`e.g. key: value`, `did you mean key: value?`)."""
    import yaml

    return [yaml.safe_load(value) for _, value in EXAMPLE_IN_HINT.findall(hint)]


def check_value_hint(path: tuple[str, ...], wrong: Any, error_words: str) -> list[str]:
    """`wrong` at `path` gets the schema's error there, a hint under it, and each example the
    hint gives, put there instead, clears every error there. The hints, for more checks."""
    fm = holding(path, wrong)
    (error,) = [e for e in errors_at(fm, path) if error_words in e]
    hints = rmm.hints(error)
    assert hints, error
    for hint in hints:
        for value in examples(hint):
            assert errors_at(holding(path, value), path) == [], (hint, value)
    assert_every_hint_in_the_briefing({**fm, "rcan_version": "3.0", "metadata": {"robot_name": "r"}})
    return hints


CHOICES = [(path, node) for path, node in LEAVES if isinstance(node.get("enum"), list)]
TEXT_CHOICES = [(p, n) for p, n in CHOICES if any(isinstance(v, str) and len(v) >= 2 for v in n["enum"])]


def test_the_generators_reach_three_levels_every_synonym_and_enum() -> None:
    depths = {sum(part not in ("[]",) for part in path) + 1 for path, _, _ in PROPERTIES}
    assert depths == {1, 2, 3}
    assert (("safety", "estop"), "response_ms") in {(p, k) for p, k, _ in PROPERTIES}
    assert (("physics", "kinematics", "[]"), "a_mm") in {(p, k) for p, k, _ in PROPERTIES}
    with_units = {k for _, k, _ in SAID_OTHERWISE if k.rpartition("_")[2] in rmm._UNIT_WORDS}
    assert {"max_linear_velocity_ms", "max_joint_velocity_dps", "payload_kg", "response_ms"} <= with_units
    assert len(SAID_OTHERWISE) >= 20
    assert len(CHOICES) >= 15
    assert {("physics", "type"), ("safety", "failsafe_behavior")} <= {p for p, _ in CHOICES}


@settings(max_examples=25, deadline=None, suppress_health_check=list(HealthCheck))
@given(data=st.data())
def test_an_enum_miss_near_a_value_names_it(data: st.DataObject) -> None:
    path, node = data.draw(st.sampled_from(TEXT_CHOICES))
    meant = data.draw(st.sampled_from([v for v in node["enum"] if isinstance(v, str) and len(v) >= 2]))
    typo = data.draw(misspelling(meant))
    if typo in node["enum"]:
        return
    (hint,) = check_value_hint(path, typo, "is not one of")
    named = [str(v) for v in examples(hint)]
    # The value meant, or one the typo is nearer to still ('htsp' is one slip from http, two from https).
    assert hint.startswith("did you mean") and named, hint
    assert meant in named or all(
        osa(typo.lower(), v.lower()) < osa(typo.lower(), meant.lower()) for v in named
    ), hint


@settings(max_examples=40, deadline=None, suppress_health_check=list(HealthCheck))
@given(data=st.data())
def test_an_enum_miss_far_from_every_value_lists_them(data: st.DataObject) -> None:
    path, node = data.draw(st.sampled_from(CHOICES))
    wrong = data.draw(st.sampled_from(["pan-tilt", "zzzzzzzzzz", "q", 12345, True]))
    if wrong is True and "boolean" in kinds(node):
        return
    (hint,) = check_value_hint(path, wrong, "is not one of")
    assert hint.startswith(f"{dotted(path)} is one of: "), hint
    assert hint.count(",") == len(node["enum"]) - 1


WHOLE = [(path, node) for path, node in LEAVES if kinds(node) == {"integer"} and "enum" not in node]


@settings(max_examples=25, deadline=None, suppress_health_check=list(HealthCheck))
@given(data=st.data())
def test_a_fraction_for_a_whole_number_names_the_unit(data: st.DataObject) -> None:
    path, node = data.draw(st.sampled_from(WHOLE))
    low, high = node.get("minimum", -1000), node.get("maximum", 100_000)
    value = data.draw(st.floats(low, high).map(lambda v: round(v, 2)).filter(lambda v: v != int(v)))
    (hint,) = check_value_hint(path, value, "is not of type 'integer'")
    assert "a whole number" in hint
    unit = rmm.UNITS.get(".".join(path).replace(".[]", "[]"))
    assert unit is None or f"({unit})" in hint or (unit == "ms" and "milliseconds" in hint), (hint, unit)


TEXTS = [(path, node) for path, node in LEAVES if kinds(node) == {"string"} and "enum" not in node]


@pytest.mark.parametrize("path", [p for p, _ in TEXTS], ids=[".".join(p) for p, _ in TEXTS])
def test_a_number_for_text_gets_an_example_that_validates(path: tuple[str, ...]) -> None:
    """Every text field YAML read as a number (`version: 1.10`, `rcan_version: 3.10`): the hint's
    example, put there, validates."""
    for number in (1.1, 3.1, 7):
        (hint,) = check_value_hint(path, number, "is not of type 'string'")
        assert hint.startswith(f"YAML read {dotted(path)} as the number {number}; put the value in quotes")
        assert len(examples(hint)) == 1, hint


@settings(max_examples=40, deadline=None)
@given(
    path=st.sampled_from([dotted(p) for p, _ in LEAVES] + ["x", "physics.poses.a", "drivers.99.count"]),
    value=st.one_of(st.text(max_size=40), st.floats().map(repr), st.integers().map(repr)),
    tail=st.sampled_from(
        [
            " is not of type 'integer'",
            " is not of type 'string'",
            " is not one of ['a', None, 1]",
            " is not one of [",
        ]
    ),
)
def test_a_hint_never_fails_whatever_the_error_says(path: str, value: str, tail: str) -> None:
    """An error string of any value at any path (one a hostile manifest could make): a list of
    one-line hints, never an exception."""
    found = rmm.hints(f"schema: {path}: {value}{tail}")
    assert all(isinstance(h, str) and "\n" not in h for h in found)
