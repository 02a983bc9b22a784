"""Property-based fuzzing of parse → validate → render, differential against robot-md 1.10.6: what is
compared, and the only two normalisations, are docs/robustness.md#fuzzing's; fuzz_strategies.py says what
is generated. Each file goes at once to a long-lived reference process (reference_worker.py; the reference
is never imported here), which works on it while this process computes our result and draws the next;
then the batch is compared case by case. A JSON view may refuse a self-containing alias, as documented.

The heavy tier checks 1,600 cases against the reference (from PyPI; about 25 s); `-m slow` 105,000,
derandomized (about 12 minutes on two cores); the default tier 220 of ours alone. Hypothesis keeps failing
examples in .cache/hypothesis (local random runs only) and prints a reproduction blob.
"""

from __future__ import annotations

import os
import re
import time
import zlib
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import pytest
from conftest import IN_CI, ROOT
from fuzz_strategies import alias_bomb, manifest_files, mutants
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st
from hypothesis.configuration import set_hypothesis_home_dir
from hypothesis.database import DirectoryBasedExampleDatabase
from reference_worker import BOM, Oracle, ours, ours_env, reference_env

import robot_md_mcp as rmm

CASE_TIMEOUT = 10.0  # seconds the reference may take on one case before it counts as hung
OURS_LIMIT = 10.0  # seconds we may take on one case (ours are budgeted: this is far above)
BUDGET_ERRORS = ("frontmatter too large:", "frontmatter nested more than")
JSON_VIEW_REFUSAL = "cannot be shown as JSON"
OTHER_HASH_SEED = "2" if os.environ.get("PYTHONHASHSEED") == "1" else "1"
# Hypothesis keeps its files (failing examples, caches) in .cache/, not ./.hypothesis.
set_hypothesis_home_dir(ROOT / ".cache" / "hypothesis")
DATABASE = DirectoryBasedExampleDatabase(str(ROOT / ".cache" / "hypothesis" / "examples"))


# --------------------------------------------------------------------------- oracle processes


@dataclass
class Oracles:
    reference: Oracle
    elsewhere: Oracle  # our code, in a process with another hash seed


@pytest.fixture(scope="module")
def oracles():
    both = Oracles(
        Oracle("reference", reference_env(), CASE_TIMEOUT),
        Oracle("ours", ours_env(OTHER_HASH_SEED), CASE_TIMEOUT),
    )
    yield both
    both.reference.close()
    both.elsewhere.close()


# --------------------------------------------------------------------------- checking a batch


@dataclass
class Tally:
    cases: int = 0
    exact: int = 0  # equal to the reference's answer, string for string
    bom: int = 0  # ...to its answer for the file without the BOM
    sets: int = 0  # differ only in order, as a YAML !!set: compared by counts
    budget: int = 0  # our alias/depth budget error: not compared
    hangs: int = 0
    crashes: Counter = field(default_factory=Counter)  # reference crashes, by kind
    codes: Counter = field(default_factory=Counter)  # our exit codes
    rechecked: int = 0  # views rendered, rerun under another hash seed
    seconds: float = 0.0

    def __str__(self) -> str:
        crashes = ", ".join(f"{kind} ×{n}" for kind, n in self.crashes.most_common())
        return (
            f"{self.cases} cases in {self.seconds:.0f} s; our codes {dict(sorted(self.codes.items()))}; "
            f"equal to the reference {self.exact} (BOM-stripped {self.bom}); same counts, set order "
            f"{self.sets}; our budget {self.budget}; reference hangs {self.hangs}; reference crashes "
            f"{sum(self.crashes.values())}{': ' + crashes if crashes else ''}; views rendered and "
            f"rerun under another hash seed {self.rechecked}"
        )


def our_result(data: bytes, views: bool) -> dict:
    """ours() (and, if asked, every view of a manifest that parses): no
    exception but ManifestError may escape, nor may it take long."""
    started = time.monotonic()
    got = ours(data)
    if views and got["code"] != rmm.FILE_ERROR:
        manifest = rmm.parse(rmm.decode(data).text)
        for view in rmm.VIEWS:
            try:
                view.text(manifest)
            except rmm.ManifestError as e:
                assert view.mime_type == "application/json" and e.what.startswith(JSON_VIEW_REFUSAL), e
    took = time.monotonic() - started
    assert took < OURS_LIMIT, f"we took {took:.1f} s on {data!r}"
    return got


def holds_set(value: Any, seen: set[int]) -> bool:
    if isinstance(value, set):
        return True
    if not isinstance(value, (dict, list)) or id(value) in seen:
        return False
    seen.add(id(value))
    items = [x for kv in value.items() for x in kv] if isinstance(value, dict) else value
    return any(holds_set(x, seen) for x in items)


_FRAME = re.compile(r'File "[^"]*?([\w.]+)", line \d+, in (\S+)')


def crash_kind(answer: dict) -> str:
    """`UnicodeDecodeError (pathlib.py:read_text)`: the exception and where it was raised."""
    frames = _FRAME.findall(answer.get("where", ""))
    where = f" ({frames[-1][0]}:{frames[-1][1]})" if frames else ""
    return answer["crash"].split(":", 1)[0] + where


def mismatch(data: bytes, got: dict, expected: dict, other: str = "the reference") -> str:
    lines = [f"ours differs from {other} on {data!r}"]
    for key in ("code", "errors", "warnings", "summary", "render", "hang", "crash"):
        if got.get(key) != expected.get(key):
            lines += [f"  {key}: ours  {got.get(key)!r}", f"  {key}: other {expected.get(key)!r}"]
    return "\n".join(lines)


def compare(data: bytes, got: dict, answers: list[dict], tally: Tally) -> bool:
    """Check one case against the reference's answers (two for a BOM case).
    True when the reference gave nothing to compare with."""
    tally.cases += 1
    tally.codes[got["code"]] += 1
    expected = answers[0]
    if got["code"] == rmm.FILE_ERROR and got["errors"][0].startswith(BUDGET_ERRORS):
        tally.budget += 1  # divergence: past our budget the reference answers, hangs or crashes
        return True
    if data.startswith(BOM) and "errors" in expected:
        # Divergence (as in test_parity): robot-md rejects a BOM as "no frontmatter"; we read past it.
        assert expected["errors"] == [rmm.NO_FRONTMATTER], mismatch(data, got, expected)
        expected = answers[1]
        tally.bom += "errors" in expected
    if "hang" in expected:
        tally.hangs += 1
        return True
    if "crash" in expected:
        tally.crashes[crash_kind(expected)] += 1
        return True
    if got == expected:
        tally.exact += 1
        return False
    # Divergence (as in test_parity): the reference's set order follows the hash seed; ours is sorted.
    parsed = None if got["code"] == rmm.FILE_ERROR else rmm.parse(rmm.decode(data).text)
    assert parsed is not None and holds_set(parsed.frontmatter, set()), mismatch(data, got, expected)
    counts = [(r["code"], len(r["errors"]), len(r["warnings"])) for r in (got, expected)]
    assert counts[0] == counts[1], mismatch(data, got, expected)
    tally.sets += 1
    return False


def check_batch(oracles: Oracles, draw: Callable[[], bytes], size: int, tally: Tally, sample: int) -> None:
    """Draw `size` files and compare each with the reference. One case in
    `sample` (by checksum), and every case the reference could not answer,
    also has its views rendered and is rerun under another hash seed."""
    started = time.monotonic()
    batch: list[bytes] = []
    results: list[dict] = []
    sampled: list[bytes] = []
    try:
        for _ in range(size):
            # Each case goes to the workers at once: they work on it while we
            # compute our result and draw the next one.
            data = draw()
            batch.append(data)
            oracles.reference.submit([data, data[len(BOM) :]] if data.startswith(BOM) else [data])
            if zlib.crc32(data) % sample == 0 and data not in sampled:
                sampled.append(data)
                oracles.elsewhere.submit([data])
            results.append(our_result(data, views=data in sampled))
    finally:  # also when Hypothesis stops a draw: the workers' answers must be read
        answers = oracles.reference.collect()
        elsewhere = dict(zip(sampled, oracles.elsewhere.collect(), strict=True))
    replies = iter(answers)
    unanswered = [
        (data, got)
        for data, got in zip(batch, results, strict=True)
        if compare(data, got, [next(replies) for _ in range(1 + data.startswith(BOM))], tally)
    ]
    for data, got in unanswered:
        assert got["code"] in (0, 1, 2, 4) and (got["code"] == 0) == (not got["errors"]), got
        again = our_result(data, views=True)
        assert again == got, mismatch(data, got, again, "ours run again")
    missing = list(dict.fromkeys(data for data, _ in unanswered if data not in elsewhere))
    oracles.elsewhere.submit(missing)
    elsewhere.update(zip(missing, oracles.elsewhere.collect(), strict=True))
    for data, got in zip(batch, results, strict=True):
        if data in elsewhere:
            other = f"ours under PYTHONHASHSEED={OTHER_HASH_SEED}"
            assert elsewhere[data] == got, mismatch(data, got, elsewhere[data], other)
    tally.rechecked += len(elsewhere)
    tally.seconds += time.monotonic() - started


# --------------------------------------------------------------------------- the runs

PHASES = [p for p in Phase if p is not getattr(Phase, "explain", None)]  # explaining is slow


def batch_settings(batches: int, derandomize: bool) -> Callable:
    """Hypothesis settings for `batches` examples, each a batch of whole files."""
    return settings(
        max_examples=batches,
        deadline=None,
        derandomize=derandomize,
        database=None if derandomize else DATABASE,
        phases=PHASES,
        # A batch of whole files is big and slow to draw by design.
        suppress_health_check=[
            HealthCheck.too_slow,
            HealthCheck.data_too_large,
            HealthCheck.large_base_example,
        ],
        print_blob=True,
    )


def fuzz(
    oracles: Oracles, name: str, strategy: st.SearchStrategy, *, batches: int, size: int, slow: bool
) -> Tally:
    """`batches` Hypothesis examples of `size` files each; failures shrink."""
    tally = Tally()
    derandomize = slow or IN_CI

    @batch_settings(batches, derandomize)
    @given(st.data())
    def run(data: st.DataObject) -> None:
        check_batch(oracles, lambda: data.draw(strategy), size, tally, sample=8 if slow else 1)

    run()
    print(f"\nfuzz, {name}: {tally}")
    return tally


@pytest.mark.heavy
def test_fuzz_generated_manifests(oracles: Oracles) -> None:
    tally = fuzz(oracles, "generated", manifest_files(), batches=60, size=10, slow=False)
    # Every outcome but a parse error is common here (those come from the mutants).
    assert tally.cases >= 600 and {0, 2, 4} <= set(tally.codes) and tally.exact > tally.cases // 2, tally


@pytest.mark.heavy
def test_fuzz_mutated_manifests(oracles: Oracles) -> None:
    tally = fuzz(oracles, "mutated", mutants(), batches=40, size=25, slow=False)
    assert tally.cases >= 1000 and set(tally.codes) == {0, 1, 2, 4} and tally.exact > tally.cases // 2, tally


@pytest.mark.parametrize(
    ("strategy", "batches", "size"),
    [(manifest_files, 12, 10), (mutants, 4, 25)],
    ids=["generated", "mutated"],
)
def test_fuzz_smoke_ours_alone(strategy: Callable[[], st.SearchStrategy], batches: int, size: int) -> None:
    """The default tier's fuzz (no reference, so nothing to download): 12 or 4 batches of
    files; on each, ours raises nothing but ManifestError, answers in time with a
    consistent code, and every view of a manifest that parses renders."""
    codes: Counter = Counter()

    @batch_settings(batches, IN_CI)
    @given(st.data())
    def run(data: st.DataObject) -> None:
        for _ in range(size):
            got = our_result(data.draw(strategy()), views=True)
            assert got["code"] in (0, 1, 2, 4) and (got["code"] == 0) == (not got["errors"]), got
            codes[got["code"]] += 1

    run()
    assert sum(codes.values()) >= batches * size and len(codes) >= 3, codes


@pytest.mark.slow
def test_fuzz_slow_100k(oracles: Oracles) -> None:
    generated = fuzz(oracles, "generated", manifest_files(), batches=4_000, size=10, slow=True)
    mutated = fuzz(oracles, "mutated", mutants(), batches=2_600, size=25, slow=True)
    total = generated.cases + mutated.cases
    print(f"fuzz, in all: {total} cases in {generated.seconds + mutated.seconds:.0f} s")
    assert total >= 100_000, (generated, mutated)
    for tally in (generated, mutated):
        assert set(tally.codes) == {0, 1, 2, 4} and tally.exact > tally.cases // 2, tally
    assert mutated.crashes, "the mutants never made the reference crash"


@pytest.mark.heavy
def test_a_reference_hang_is_recorded_and_the_worker_restarted() -> None:
    """The harness itself: robot-md validates a 4×10^8-item alias expansion for
    ever; that case is marked hung and the cases after it still get answers."""
    minimal = (ROOT / "tests" / "corpus" / "mcpts__minimal.ROBOT.md").read_bytes()
    bomb = minimal.replace(b"safety:\n", (alias_bomb(9, 10) + "capabilities: *l8\nsafety:\n").encode(), 1)
    oracle = Oracle("reference", reference_env(), timeout=2.0)
    try:
        oracle.submit([minimal, bomb, minimal])
        first, hung, last = oracle.collect()
    finally:
        oracle.close()
    assert first == last == ours(minimal)
    assert hung == {"hang": "no answer in 2 s"}
    assert ours(bomb)["errors"][0].startswith(BUDGET_ERRORS)
