"""robot-md 1.10.6's answers, stored in the repository (tests/reference/results.json), so that parity
runs in the default tier without downloading the reference.

For every corpus file and every generated case (cases.py; a case starting with a BOM also without it, as
`<id>~nobom`) the file holds the sha256 of the bytes and what reference_oracle.py printed for them (render
without robot-md's leaked `_deprecations` key), or the reference's crash. The answers depend on the
libraries that make them, so the file holds a set of answers per set of versions recorded
(docs/parity.md#library-versions); where the versions in use match none, answers() asks the live reference.
test_parity.py's heavy tests keep the copy honest: against the live reference, and ../shared's corpus part.

After changing cases.py or the corpus, or to record another set of versions, regenerate in a venv with the
pinned set, then in one with each other set (this installs the reference into .cache/ from PyPI):

    .venv/bin/python tests/support/stored_reference.py
"""

from __future__ import annotations

import hashlib
import json
import sys
from importlib import metadata
from pathlib import Path
from typing import TypedDict

import yaml

sys.path[:0] = [str(Path(__file__).resolve().parent), str(Path(__file__).resolve().parents[1])]

from cases import CASES  # noqa: E402
from conftest import REFERENCE_PINS, ROOT, corpus_files  # noqa: E402
from reference_worker import BOM, reference_answers  # noqa: E402

STORED = ROOT / "tests" / "reference" / "results.json"
SOURCE = (
    "robot-md 1.10.6 (PyPI) run by tests/support/reference_oracle.py; "
    "regenerate with `python tests/support/stored_reference.py`"
)


class Variant(TypedDict):
    """The answers that differ under another set of versions."""

    versions: dict[str, str]
    results: dict[str, dict]


class Stored(TypedDict, total=False):
    """tests/reference/results.json: the answers for the pinned versions, and per-set variants."""

    versions: dict[str, str]
    results: dict[str, dict]
    source: str
    variants: list[Variant]


def inputs() -> dict[str, bytes]:
    """Every input the stored answers are for, by key: corpus files by name, cases by id."""
    out = {path.name: path.read_bytes() for path in corpus_files()}
    for case in CASES:
        out[case.id] = case.data
        if case.data.startswith(BOM):
            out[case.id + "~nobom"] = case.data[len(BOM) :]
    return out


def sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def live() -> dict[str, dict]:
    """The live reference's answers for inputs(), each with its input's sha256."""
    given = inputs()
    # A crash's traceback names files on this machine: keep the exception only.
    return {
        key: {"sha256": sha256(given[key]), **{k: v for k, v in answer.items() if k != "where"}}
        for key, answer in reference_answers(given).items()
    }


def versions() -> dict[str, str]:
    """What the answers depend on: the reference's pins and the libraries it shares with us."""
    used = {name: metadata.version(name) for name in ("pyyaml", "jsonschema")}
    used["libyaml"] = str(getattr(yaml, "__with_libyaml__", False))
    return {**dict(pin.split("==") for pin in REFERENCE_PINS), **used}


def load() -> dict[str, dict] | None:
    """The stored answers for the versions in use, or None if none were recorded for them."""
    stored: Stored = json.loads(STORED.read_text(encoding="utf-8"))
    if stored["versions"] == versions():
        return stored["results"]
    for variant in stored.get("variants", []):
        if variant["versions"] == versions():
            return {**stored["results"], **variant["results"]}
    return None


def answers() -> dict[str, dict]:
    """The stored answers for the versions in use, else the live reference's (which needs PyPI)."""
    stored = load()
    return stored if stored is not None else live()


def write(results: dict[str, dict]) -> None:
    """Record `results` for the versions in use: as the base answers for the pinned set, else as
    the variant for this set (only the answers that differ from the base)."""
    STORED.parent.mkdir(exist_ok=True)
    stored: Stored = (
        json.loads(STORED.read_text(encoding="utf-8")) if STORED.exists() else {"versions": versions()}
    )
    variants = [v for v in stored.get("variants", []) if v["versions"] != versions()]
    if stored["versions"] == versions():
        stored["results"] = results
    else:
        base = stored["results"]
        differ = {key: answer for key, answer in results.items() if base.get(key) != answer}
        variants.append({"versions": versions(), "results": differ})
    stored["source"] = SOURCE
    stored["variants"] = sorted(variants, key=lambda v: sorted(v["versions"].items()))
    text = json.dumps(stored, ensure_ascii=False, indent=1, sort_keys=True)
    STORED.write_text(text + "\n", encoding="utf-8")


if __name__ == "__main__":
    write(live())
    print(f"wrote {STORED.relative_to(ROOT)} for {versions()}")
