"""Section 5: the resource views and the JSON they hold (render itself: test_parity.py, byte for byte)."""

from __future__ import annotations

import contextlib
import datetime as dt
import json

import yaml
from conftest import EXAMPLE
from hypothesis import assume, given, settings
from hypothesis import strategies as st

import robot_md_mcp as rmm


def test_json_safe_handles_everything_yaml_can_load() -> None:
    value = {
        "date": dt.date(2026, 4, 17),
        "ts": dt.datetime(2026, 4, 17, 8, 30, tzinfo=dt.timezone.utc),
        "bin": b"\x00\x01",
        "set": rmm.StableSet({"b", "a"}),
        "nan": float("nan"),
        "inf": float("inf"),
        "-inf": float("-inf"),
        7: "int key",
        None: "null key",
        2.5: "float key",
        dt.date(2020, 1, 2): "date key",
        "nested": [{"d": dt.date(2000, 1, 1)}],
    }
    out = rmm.json_safe(value)
    assert out == {
        "date": "2026-04-17",
        "ts": "2026-04-17T08:30:00+00:00",
        "bin": "AAE=",
        "set": ["a", "b"],
        "nan": "NaN",
        "inf": "Infinity",
        "-inf": "-Infinity",
        "7": "int key",
        "null": "null key",
        "2.5": "float key",
        "2020-01-02": "date key",
        "nested": [{"d": "2000-01-01"}],
    }
    json.dumps(out, allow_nan=False)  # strict JSON
    assert rmm.json_safe({True: 1, False: 0}) == {"true": 1, "false": 0}


def test_views_of_the_example_and_of_absent_sections() -> None:
    m = rmm.parse(EXAMPLE.read_text(encoding="utf-8"))
    texts = {v.kind: v.text(m) for v in rmm.VIEWS}
    kinds = ["context", "identity", "frontmatter", "capabilities", "safety"]
    kinds += ["poses", "calibration_status", "learned_skills", "signature", "body"]
    assert [v.kind for v in rmm.VIEWS] == kinds
    assert json.loads(texts["frontmatter"])["metadata"]["robot_name"] == "bob"
    assert json.loads(texts["capabilities"]) == m.frontmatter["capabilities"]
    assert json.loads(texts["safety"]) == rmm.json_safe(m.frontmatter["safety"])
    assert texts["body"] == m.prose and texts["body"].startswith("\n# bob\n")
    assert texts["body"] == EXAMPLE.read_text(encoding="utf-8").split("\n---\n", 2)[1]
    absent = {v.kind: v.text(rmm.parse("---\na: 1\n---\n")) for v in rmm.VIEWS}  # sections not there
    assert (absent["capabilities"], absent["safety"], absent["body"]) == ("[]", "{}", "")


def test_uris_percent_encode_unsafe_names() -> None:
    assert rmm.resource_uri("bob", "safety") == "robot-md://bob/safety"
    assert rmm.resource_uri("my robot/2?#", "body") == "robot-md://my%20robot%2F2%3F%23/body"
    assert rmm.resource_uri("rôbot", "body") == "robot-md://r%C3%B4bot/body"


YAML_KEYS = st.one_of(
    st.text(max_size=4), st.integers(), st.none(), st.booleans(), st.dates(), st.floats(allow_nan=True)
)


class Pairs(list):  # type: ignore[type-arg]
    """Dumped as `!!pairs [{k: v}, …]`, which loads as a list of (k, v) tuples (`!!omap` too)."""


class Dumper(yaml.SafeDumper):
    pass


Dumper.add_representer(
    Pairs, lambda d, v: d.represent_sequence("tag:yaml.org,2002:pairs", [{k: x} for k, x in v])
)
YAML_VALUES = st.recursive(
    st.one_of(YAML_KEYS, st.datetimes(), st.binary(max_size=4)),
    lambda inner: (
        st.lists(inner, max_size=3)
        | st.dictionaries(YAML_KEYS, inner, max_size=3)
        | st.lists(st.tuples(YAML_KEYS, inner), max_size=2).map(Pairs)
    ),
    max_leaves=8,
)


def self_containing(value: object) -> list[object]:
    """`&a [value, *a]`: a YAML alias inside the value it names (it validates and renders; no JSON form)."""
    box = [value]
    box.append(box)
    return box


@given(YAML_KEYS, YAML_VALUES | YAML_VALUES.map(self_containing))
@settings(max_examples=60, deadline=None)
def test_every_view_shows_any_value_yaml_loads_under_a_safety_key(key: object, value: object) -> None:
    """A safety key the briefing has no line for is echoed with its value, named as the safety view
    names it, whatever YAML loaded there: a key that is a date, a number or null (`on:` is true), a
    mapping keyed by them (JSON takes text keys only), `!!pairs`, a value that contains itself included;
    every view answers (a JSON view of a value that contains itself: its one-line error)."""
    m = rmm.parse(EXAMPLE.read_text(encoding="utf-8"))
    assume(key not in m.frontmatter["safety"] and key not in {s.key for s in rmm.validate(m).misspelt})
    front = {**m.frontmatter, "safety": {**m.frontmatter["safety"], key: value}}
    front_text = yaml.dump(front, Dumper=Dumper, allow_unicode=True, sort_keys=False)
    m = rmm.parse(f"---\n{front_text}---\n{m.prose}")
    texts = {}
    for view in rmm.VIEWS:
        with contextlib.suppress(rmm.ManifestError):
            texts[view.kind] = view.text(m)
    key, value = list(m.frontmatter["safety"].items())[-1]  # as YAML loaded them back
    assert f"{rmm.quoted(rmm._json_key(key))}: {rmm._declared_value(value)}" in texts["context"]
    assert set(texts) >= {v.kind for v in rmm.VIEWS} - {"frontmatter", "safety"}
    if "safety" in texts:
        assert json.loads(texts["safety"])[rmm._json_key(key)] == rmm.json_safe(value)
    else:
        assert rmm._declared_value(value) == rmm.SELF_CONTAINING
