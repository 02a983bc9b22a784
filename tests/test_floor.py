"""The computed safety floor (`safety_floor`: check_action's `floor`, the head of its text and of the
check-safety prompt): quantities with units read from the action and compared exactly with the
declared limits of their kind, the capabilities the action names, the gates over them, the verdict.

The generators build actions from random quantities in every unit form around each declared limit
(below, equal, above) over the corpus, the generated cases and manifests with random limits, and
check the floor against a conversion written here from the units' definitions (not the module's
table)."""

from __future__ import annotations

import dataclasses
import re
import time
from decimal import Decimal, localcontext
from fractions import Fraction as F
from typing import Any

import pytest
import yaml
from cases import CASES
from conftest import EXAMPLE, ROOT, corpus_files
from fuzz_strategies import manifest_files
from hypothesis import HealthCheck, assume, event, given, settings
from hypothesis import strategies as st

import robot_md_mcp as rmm

BOB = rmm.parse(EXAMPLE.read_text(encoding="utf-8"))
ROVER = rmm.parse((ROOT / "examples" / "rover.ROBOT.md").read_text(encoding="utf-8"))
BLOCKED, AUTH, UNREAD, UNRECOGNISED, NONE = rmm.FLOOR_VERDICTS


def parsed(data: bytes) -> rmm.Manifest | None:
    try:
        return rmm.parse(rmm.decode(data).text)
    except rmm.ManifestError:
        return None


SERVED = [m for m in (parsed(p.read_bytes()) for p in corpus_files()) if m is not None]
SERVED += [m for m in (parsed(c.data) for c in CASES) if m is not None]

# --- an independent conversion: each unit's size from its definition ---------------------------------

PI = Decimal("3.14159265358979323846264338327950288419716939937510582097494459230781640628620899")
INCH, FOOT, MILE, POUND = F(254, 10_000), F(3048, 10_000), F(1_609_344, 1000), F(45_359_237, 10**8)
# kind → [(the unit's size in m/s, deg/s, kg or m; the ways people write it)]; None: 180/π.
WRITTEN: dict[str, list[tuple[F | None, tuple[str, ...]]]] = {
    "speed": [
        (
            F(1),
            (
                "m/s",
                "m s⁻¹",
                "m s^-1",
                "metres per second",
                "m per s",
                "mps",
                "m/sec",
                "m a second",
                "m every second",
            ),
        ),
        (F(1, 1000), ("mm/s", "mm s⁻¹", "millimetres per second", "millimeters/second")),
        (F(1, 100), ("cm/s", "centimetres per second", "cm per second")),
        (F(1000, 3600), ("km/h", "kph", "kmh", "kilometres per hour", "km per hour", "km/hr", "km an hour")),
        (MILE / 3600, ("mph", "miles per hour", "mi/h")),
        (INCH, ("in/s", "inches per second")),
        (FOOT, ("ft/s", "feet per second")),
    ],
    "angular speed": [
        (F(1), ("deg/s", "°/s", "degrees per second", "dps", "deg s⁻¹")),
        (None, ("rad/s", "radians per second", "rad s⁻¹", "rad per sec")),
        (F(360, 60), ("rpm", "revolutions per minute", "rev/min")),
    ],
    "mass": [
        (F(1), ("kg", "kilograms", "kilos")),
        (F(1, 1000), ("g", "grams")),
        (POUND, ("lb", "lbs", "pounds")),
    ],
    "length": [
        (F(1), ("m", "metres", "meters")),
        (F(1, 100), ("cm", "centimetres")),
        (F(1, 1000), ("mm", "millimeters")),
        (INCH, ("in", "inches")),
        (FOOT, ("ft", "feet")),
    ],
}
LIMIT_OF = {
    "speed": "max_linear_velocity_ms",
    "angular speed": "max_joint_velocity_dps",
    "mass": "payload_kg",
    "length": "workspace_bounds_m",
}


def in_base(number: Decimal, size: F | None) -> tuple[F, F]:
    """The number in its kind's base unit: exact, or for radians an interval 1e-70 wide."""
    if size is not None:
        return F(number) * size, F(number) * size
    with localcontext() as ctx:
        ctx.prec = 80
        value = F(number * 180 / PI)
    return value * (1 - F(1, 10**70)), value * (1 + F(1, 10**70))


def declared(fm: dict[str, Any], kind: str) -> F | None:
    """The limit the quantity meets (for a length: the workspace diagonal's square); None if there is none."""
    safety: Any = fm.get("safety") if isinstance(fm.get("safety"), dict) else {}
    value: Any = safety.get(LIMIT_OF[kind])
    numbers: list[Any] = value if kind == "length" and isinstance(value, list) else [value]
    if not numbers or not all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in numbers):
        return None
    if not all(v == v and abs(v) != float("inf") and v >= 0 for v in numbers):
        return None
    exact = [F(repr(v)) if isinstance(v, float) else F(v) for v in numbers]
    return sum((v * v for v in exact), F(0)) if kind == "length" else exact[0]


def expected_beyond(kind: str, low: F, high: F, limit: F) -> bool | None:
    """Beyond the limit, within it, or None where the radian's interval straddles it."""
    if kind == "length":
        low, high = low * low, high * high
    if low > limit:
        return True
    return False if high <= limit else None


# --- actions: a quantity in any written form, near a limit ------------------------------------------------

WORDS = ("pick up the part", "move the joint", "go to the door", "place it", "scan the room", "")


@st.composite
def limits(draw: st.DrawFn, kind: str) -> dict[str, Any]:
    """Random declared limits (exact short decimals): that of `kind`, and others or not."""
    decimal = st.decimals(min_value=Decimal("0.001"), max_value=Decimal("500"), places=3, allow_nan=False)
    safety: dict[str, Any] = {}
    for which, key in LIMIT_OF.items():
        if which == kind or draw(st.booleans()):
            if which == "length":
                safety[key] = [float(draw(decimal)) for _ in range(3)]
            else:
                safety[key] = float(draw(decimal)) if draw(st.booleans()) else int(draw(st.integers(0, 400)))
    return safety


def with_limits(safety: dict[str, Any], kind: str) -> rmm.Manifest:
    fm = yaml.safe_load(EXAMPLE.read_text(encoding="utf-8").split("---\n")[1])
    fm["safety"] = {**{k: v for k, v in fm["safety"].items() if k not in LIMIT_OF.values()}, **safety}
    fm["physics"]["type"] = kind
    return rmm.parse("---\n" + yaml.safe_dump(fm, sort_keys=False) + "---\n\n# bob\n")


@st.composite
def quantity_near(draw: st.DrawFn, fm: dict[str, Any], kind: str) -> tuple[str, Decimal, F | None]:
    """A number in a random unit of `kind`, near the declared limit in that unit if there is one."""
    size, spellings = draw(st.sampled_from(WRITTEN[kind]))
    limit = declared(fm, kind)
    root = Decimal(limit.numerator) / Decimal(limit.denominator) if limit is not None else Decimal(1)
    at = F(root.sqrt()) if kind == "length" else limit if limit is not None else F(1)
    places = draw(st.integers(0, 5))
    exact = at / (size if size is not None else F(Decimal(180) / PI))
    near = round(Decimal(exact.numerator) / Decimal(exact.denominator), places)
    number = near + draw(st.integers(-2, 2)) * Decimal(10) ** -places
    assume(number >= 0)
    spelling = draw(st.sampled_from(spellings))
    glued = draw(st.booleans())
    sign = draw(st.sampled_from(["", "", "-", "+"])) if number else ""
    text = f"{number}" + ("0" if re.fullmatch(r"[1-9]\d{0,2}\.\d{3}", f"{number}") else "")  # 1.000: not read
    text = text[1:] if text.startswith("0.") and draw(st.booleans()) else text  # .5 is 0.5
    return f"{sign}{text}{'' if glued else ' '}{spelling}", number, size


@st.composite
def manifest_and_action(draw: st.DrawFn) -> tuple[rmm.Manifest, str, str, str, Decimal, F | None]:
    kind = draw(st.sampled_from(list(WRITTEN)))
    if draw(st.integers(0, 3)) == 0:
        manifest = draw(st.sampled_from(SERVED))
    else:
        manifest = with_limits(
            draw(limits(kind)), draw(st.sampled_from(["arm", "wheeled", "humanoid", "other"]))
        )
    written, number, size = draw(quantity_near(manifest.frontmatter, kind))
    words = draw(st.sampled_from(WORDS))
    # an angular speed is compared only as a joint's: say so
    before = f"{words} with the joint at" if kind == "angular speed" else f"{words} at"
    after = "" if written.endswith(" in") else draw(st.sampled_from(["", " and then stop", ", then wait"]))
    return manifest, f"{before} {written}{after}", f"{before} it{after}", kind, number, size


def stricter(a: str, b: str) -> str:
    return min(a, b, key=rmm.FLOOR_VERDICTS.index)


FLOOR_SETTINGS = settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@FLOOR_SETTINGS
@given(manifest_and_action())
def test_a_quantity_near_a_limit_is_compared_exactly(case: tuple[Any, ...]) -> None:
    manifest, action, without, kind, number, size = case
    floor = rmm.safety_floor(manifest, action)
    baseline = rmm.safety_floor(manifest, without)
    limit = declared(manifest.frontmatter, kind)
    (found,) = floor.quantities
    assert found["kind"] == kind
    assert rmm.safety_floor(manifest, action) == floor  # a pure function of the manifest and the action
    if limit is None:  # not declared (named so), or not a number (not read)
        safety = manifest.frontmatter.get("safety")
        absent = safety is None or (isinstance(safety, dict) and safety.get(LIMIT_OF[kind]) is None)
        assert found["beyond"] is False and found["ratio"] is None
        assert floor.verdict == (baseline.verdict if absent else stricter(baseline.verdict, UNREAD))
        return
    assert floor.not_read == baseline.not_read
    low, high = in_base(number, size)
    beyond = expected_beyond(kind, low, high, limit)
    assume(beyond is not None)
    event("beyond" if beyond else "at the limit" if low == (limit if kind != "length" else None) else "below")
    assert found["beyond"] is beyond, (action, found)
    assert found["limit"] == f"safety.{LIMIT_OF[kind]}"
    assert floor.verdict == (BLOCKED if beyond else baseline.verdict), (action, floor.reasons)
    if found["ratio"] is not None and kind != "length":
        ratio = float(found["ratio"].lstrip("≈"))
        assert ratio == pytest.approx(float(in_base(number, size)[0] / limit), rel=1e-5)


@FLOOR_SETTINGS
@given(st.data(), st.sampled_from(["speed", "mass"]))
def test_each_number_of_a_range_or_list_has_the_unit_it_ends_with(data: st.DataObject, kind: str) -> None:
    """0.8 to 0.2 m/s, 2, 3 or 40 kg: every number is compared in the last one's unit, so no verdict
    rests on the last number alone (the first was dropped as a count)."""
    manifest = with_limits(data.draw(limits(kind)), "other")
    size, spellings = data.draw(st.sampled_from(WRITTEN[kind]))
    numbers = data.draw(st.lists(st.decimals(0, 999, places=2), min_size=2, max_size=4))
    joiners = st.sampled_from(["-", "–", " - ", " to ", " or ", " and ", ", ", "…", " through "])
    written = "".join(f"{n}{data.draw(joiners)}" for n in numbers[:-1]) + f"{numbers[-1]} "
    floor = rmm.safety_floor(manifest, f"place the part at {written}{data.draw(st.sampled_from(spellings))}")
    assert len(floor.quantities) == len(numbers), floor.quantities
    limit = declared(manifest.frontmatter, kind)
    assert limit is not None and size is not None
    assert (floor.verdict == BLOCKED) is any(F(n) * size > limit for n in numbers), (written, floor.reasons)


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(manifest_files(), st.lists(st.sampled_from(("pick", "place", "go", "to", "stop", "scan", "don't",
                                                    "not", "the", "arm.pick", "nav.go_to", "report", "x")),
                                   max_size=8))  # fmt: skip
def test_without_a_quantity_the_floor_is_what_capabilities_and_gates_give(
    data: bytes, words: list[str]
) -> None:
    manifest = parsed(data)
    assume(manifest is not None)
    assert manifest is not None
    floor = rmm.safety_floor(manifest, " ".join(words))
    gated = any(gate["needs_operator"] for gate in floor.gates)
    expected = AUTH if gated else NONE if floor.capabilities else UNRECOGNISED
    assert floor.verdict == expected and not floor.quantities and not floor.not_read
    for gate in floor.gates:  # a gate is listed over exactly the named capabilities its scope covers
        assert set(gate["capabilities"]) <= set(floor.capabilities)
        assert all(covers(gate["scope"], c) for c in gate["capabilities"])


def covers(scope: str, capability: str) -> bool:
    scope, capability = scope.strip().lower(), capability.lower()
    if scope in ("*", capability):
        return True
    namespace = scope[:-2] if scope.endswith(".*") else scope
    return bool(namespace) and capability.startswith(namespace + ".")


# --- the issue's examples, and forms never guessed ------------------------------------------------------


def limited(**safety: Any) -> rmm.Manifest:
    return with_limits(safety, "wheeled")


def test_the_issues_examples() -> None:
    """Each action: the verdict, and each quantity's ratio to its limit and whether it is beyond it."""
    for manifest, action, verdict, ratios in [
        (ROVER, "drive forward at 2 m/s", BLOCKED, [("4", True)]),
        (limited(max_linear_velocity_ms=0.2), "pick at 150 mm/s", NONE, [("0.75", False)]),
        (limited(max_linear_velocity_ms=1.5), "7 km/h", BLOCKED, [("≈1.2963", True)]),
        (limited(payload_kg=0.5), "pick 800 g", BLOCKED, [("1.6", True)]),
        (BOB, "pick at 3 rad/s", NONE, [("≈0.95493", False)]),
        (ROVER, "go to the dock at -0.5 m/s", AUTH, [("1", False)]),
    ]:
        floor = rmm.safety_floor(manifest, action)
        found = (floor.verdict, [(q["ratio"], q["beyond"]) for q in floor.quantities])
        assert found == (verdict, ratios), action
    rover = rmm.safety_floor(ROVER, "go to the dock")
    assert rover.gates == ({"scope": "nav.go_to", "rule": "operator authorization required",
                            "capabilities": ["nav.go_to"], "needs_operator": True},)  # fmt: skip


NOT_READ = {
    "0,5 kg": "a decimal comma or digit grouping",
    "1.000 mm/s": "a decimal comma or digit grouping",
    "1,000 mm/s": "a decimal comma or digit grouping",
    "1 000 mm/s": "a digit grouping",
    "٣ m/s": "digits other than ASCII 0-9",
    "３ m/s": "digits other than ASCII 0-9",
    "３": "digits other than ASCII 0-9",
    "2 m/s²": "an acceleration",
    "2 m/day": "a unit not read",
    "2 kg/box": "a unit not read",
    "2 m s⁻²": "an acceleration",
    "2 m/s/s": "an acceleration",
    "2 metres per second per second": "an acceleration",
    "2 m/s^2": "an acceleration",
    **{f"2 m/s{per}": "an acceleration" for per in ("/min", " per minute", "/h", " / ms", "/sec")},
    "5 rps": "rps: revolutions or radians per second?",
    **{f"5 {u}": f"{u[:2]}: mega or milli?" for u in ("Mm", "MM", "Mm/s", "MM/S", "Mm per second")},
    "3 m²": "a unit squared",
    "2 kg/s": "a unit not read",
    "1e99999 m/s": "an exponent beyond ±1,000",
    "1" * 101 + " kg": "more than 100 digits",
}


@pytest.mark.parametrize("written", NOT_READ)
def test_what_could_be_misread_is_named_as_not_read(written: str) -> None:
    floor = rmm.safety_floor(BOB, f"pick up the vial at {written}")
    assert floor.verdict == UNREAD and not floor.quantities
    assert floor.not_read == (f"{rmm.quoted(written)} ({NOT_READ[written]})",)


@st.composite
def never_guessed(draw: st.DrawFn) -> tuple[str, str]:
    """A quantity in any unit, its number in a form that reads as another one: (written, why)."""
    a, b, c = (draw(st.integers(0, 999)) for _ in range(3))
    sup = str(b).translate(str.maketrans("0123456789", "⁰¹²³⁴⁵⁶⁷⁸⁹"))
    powers = [f"{a}{x}10^{b}" for x in ("×", "x", " * ", "·")] + [f"{a}*10**{b}", f"10{sup}", f"10⁻{sup}"]
    fractions = [f"{a}{x}{b}" for x in ("/", " / ", "⁄", "÷")] + [f"{a} / {b}.{c}"]
    grouped = [f"{a % 999 + 1} {b:03d}.{c}"]  # with U+00A0 or U+202F: one number, as 1,000.5 is
    pf = "a power or a fraction"
    why, forms = draw(st.sampled_from([(pf, powers), (pf, fractions), ("a digit grouping", grouped)]))
    number = draw(st.sampled_from(forms))
    _, spellings = draw(st.sampled_from([unit for units in WRITTEN.values() for unit in units]))
    return f"{number} {draw(st.sampled_from(spellings))}", why


@FLOOR_SETTINGS
@given(never_guessed())
def test_a_number_that_reads_as_another_is_named_as_not_read(case: tuple[str, str]) -> None:
    """1×10^3 mm/s was read as 3 mm/s, 5/2 m/s as 2 m/s: an exponent or a denominator, compared."""
    written, why = case
    floor = rmm.safety_floor(BOB, f"pick up the vial at {written}")
    assert floor.verdict == UNREAD and not floor.quantities
    assert floor.not_read == (f"{rmm.quoted(written)} ({why})",)


@FLOOR_SETTINGS
@given(
    st.sampled_from([("m", F(1)), ("mm", F(1, 1000)), ("ft", FOOT), ("deg", F(1))]),
    st.sampled_from([" ", "·", " · ", "."]),
    st.sampled_from(["s⁻¹", "s^-1", "s-1", "s−1", "sec-1", "min⁻¹", "min-1", "s⁻²", "s^-2", "s-2", "s−2"]),
    st.decimals(min_value=0, max_value=1000, places=2),  # 1.000: not read
)
def test_a_unit_times_a_time_to_a_power_is_read_as_written(
    head: tuple[str, F], between: str, power: str, number: Decimal
) -> None:
    """2 m s-1 and 2 m.s⁻¹ were read as 2 m (a length, compared with the workspace); s-2: an acceleration."""
    (unit, size), kind = head, "angular speed" if head[0] == "deg" else "speed"
    written = f"{number} {unit}{between}{power}"
    quantities, not_read = rmm.read_quantities(f"move at {written} now")
    if power[-1] in "2²":
        assert not quantities and all(n == f"{rmm.quoted(written)} (an acceleration)" for n in not_read)
    else:
        per = 60 if power.startswith("min") else 1
        assert [(q.text, q.kind, q.low) for q in quantities] == [(written, kind, F(number) * size / per)]


@pytest.mark.parametrize(
    ("action", "read"),
    [
        ("wait 2 s", ["2 s"]),
        ("grip 5 g", ["5 g"]),
        ("lift 3 m", ["3 m"]),
        ("reach 3in", ["3in"]),
        ("put 2 in the box", []),
        ("put 2 in.", ["2 in"]),
        ("go 3 in/s and stop", ["3 in/s"]),
        ("go 3 in per second then stop", ["3 in per second"]),
        ("drive 0.7 m a second", ["0.7 m a second"]),  # a speed, not 0.7 m
        ("at 2 km an hour, 2 m a box", ["2 km an hour", "2 m"]),
        ("a 10 mm gap", ["10 mm"]),
        ("s g m in", []),
        ("joint2 at 5m", ["5m"]),
        ("M8 bolt", []),
        ("pick 2 vials", []),
    ],
)
def test_a_one_letter_unit_counts_only_right_after_a_number(action: str, read: list[str]) -> None:
    assert [q.text for q in rmm.read_quantities(action)[0]] == read


@pytest.mark.parametrize(
    ("capabilities", "action", "named", "negated"),
    [
        (["arm.pick", "arm.place"], "pick up the vial", ["arm.pick"], []),
        (["arm.pick", "arm.place"], "don't pick it, place it", ["arm.place"], ["arm.pick"]),
        (["arm.pick"], "do not pick up the vial", [], ["arm.pick"]),
        (["arm.pick"], "never ever pick", [], ["arm.pick"]),
        (["arm.pick"], "picking the vial", ["arm.pick"], []),
        (["arm.pick"], "use arm.pick now", ["arm.pick"], []),
        (["arm.pick"], "move the arm", [], []),
        (["nav.go_to", "nav.stop"], "go to the kitchen", ["nav.go_to"], []),
        (["nav.go_to", "nav.stop"], "drive to the kitchen", [], []),
        (["nav.go_to", "nav.stop"], "do not stop", [], ["nav.stop"]),
        (["vision.describe"], "describe the scene", ["vision.describe"], []),
        (["status.report"], "report your status", ["status.report"], []),
        (["status.report"], "what is your status", [], []),
        (["gripper.close"], "close the gripper", ["gripper.close"], []),
        (["arm.reach"], "reached", ["arm.reach"], []),
        (["perceive.scan"], "scan, then don't scan", ["perceive.scan"], []),
        (["perceive.scan"], "SCAN the room", ["perceive.scan"], []),
        (["system.reboot"], "the system", [], []),
    ],
)
def test_the_capability_matcher_on_fixed_phrases(
    capabilities: list[str], action: str, named: list[str], negated: list[str]
) -> None:
    assert rmm.named_capabilities({"capabilities": capabilities}, action) == (named, negated)


@pytest.mark.parametrize(
    ("scope", "covered"),
    [("nav.go_to", True), ("nav", True), ("nav.*", True), ("*", True), ("na", False), ("destructive", False)],
)
def test_a_gate_covers_its_capability_its_namespace_or_all(scope: str, covered: bool) -> None:
    fm = {"capabilities": ["nav.go_to"], "safety": {"hitl_gates": [{"scope": scope, "require_auth": True}]}}
    over, unplaced = rmm.gates_over(fm, ["nav.go_to"])
    assert bool(over) is covered and bool(unplaced) is not covered


def test_every_action_limit_takes_its_unit_from_units() -> None:
    kinds = {"speed": "speed", "joint": "angular speed", "mass": "mass", "length": "length"}
    for thing, (key, _) in rmm.ACTION_LIMITS.items():
        assert rmm._limit_size(key) == (kinds[thing], (F(1), F(1)))  # each declared in its base unit
    manifest_doc = (ROOT / "docs" / "manifest.md").read_text(encoding="utf-8")
    assert all(
        f"`{key}`" in manifest_doc.split("## Units")[1].split("\n## ")[0]
        for key, _ in rmm.ACTION_LIMITS.values()
    )


def test_an_angular_speed_is_compared_only_with_a_limit_for_the_same_thing() -> None:
    rover = with_limits({"max_joint_velocity_dps": 10}, "wheeled")
    (base,) = rmm.safety_floor(rover, "turn the base at 90 deg/s").quantities
    assert base["ratio"] is None and "base's turn" in base["note"]
    (unsaid,) = rmm.safety_floor(rover, "at 90 deg/s").quantities
    assert unsaid["ratio"] is None and "does not say" in unsaid["note"]
    (joint,) = rmm.safety_floor(rover, "the wrist at 90 deg/s").quantities
    assert joint["beyond"] is True and joint["ratio"] == "9"
    (arm,) = rmm.safety_floor(with_limits({"max_joint_velocity_dps": 10}, "arm"), "at 90 deg/s").quantities
    assert arm["beyond"] is True


def test_limits_not_declared_and_other_values_are_named() -> None:
    manifest = with_limits({"max_angular_velocity_rps": 1.2}, "wheeled")
    floor = rmm.safety_floor(manifest, "at 2 m/s")
    assert floor.limits_not_declared == ("Max linear velocity (m/s)",)
    assert '"max_angular_velocity_rps": 1.2' in floor.other_limits and floor.verdict == UNRECOGNISED
    assert rmm.safety_floor(with_limits({"payload_kg": "heavy"}, "arm"), "pick 2 kg").verdict == UNREAD


@FLOOR_SETTINGS
@given(st.sampled_from(list(LIMIT_OF)), st.integers() | st.integers(min_value=2**1024) | st.floats())
def test_any_number_yaml_gives_as_a_limit_is_compared_or_not_read(kind: str, number: float) -> None:
    """An int past a float's range (10**400 was an OverflowError), a negative, nan or inf as a limit."""
    manifest = with_limits({LIMIT_OF[kind]: [number, 1, 1] if kind == "length" else number}, "arm")
    limit = declared(manifest.frontmatter, kind)
    (found,) = rmm.safety_floor(manifest, f"pick at 2 {WRITTEN[kind][0][1][0]}").quantities
    assert found["beyond"] is (limit is not None and expected_beyond(kind, F(2), F(2), limit))
    assert ("not compared" in (found["note"] or "")) is (limit is None)


# --- hostile actions: bounded work, a note of what was not read ----------------------------------------


@pytest.mark.parametrize(
    "action",
    [
        "x" * 100_000,
        "1 m/s " * 10_000,
        "1 " * 50_000,
        "٣" * 100_000,
        "１２３ m/s " * 5_000,
        "1e308 m/s 1e-400 kg -3 m/s " * 2_000,
        "9" * 100_000 + " kg",
        "1." + "0" * 99_000 + "1 m",
        "don't " * 20_000 + "pick",
        "pick " + "arm." * 20_000,
    ],
)
def test_a_hostile_action_costs_bounded_work_and_says_what_was_not_read(action: str) -> None:
    started = time.perf_counter()
    floor = rmm.safety_floor(BOB, action)
    assert time.perf_counter() - started < 0.5
    assert floor.verdict in rmm.FLOOR_VERDICTS
    assert len(floor.quantities) <= rmm.MAX_FLOOR_NUMBERS and len(floor.text()) < 100_000
    if len(action) > rmm.MAX_FLOOR_CHARS:
        assert floor.not_read[-1].startswith(f"all after the first {rmm.MAX_FLOOR_CHARS:,} characters")


@FLOOR_SETTINGS
@given(
    st.integers(0, 2 * rmm.MAX_FLOOR_GATES),
    st.sampled_from(["*", "arm", "arm.*", " ARM.* "]),
    st.integers(1, rmm.MAX_FLOOR_CAPABILITIES),
)
def test_gates_over_many_named_capabilities_cost_bounded_work(gates: int, scope: str, named: int) -> None:
    """A reason for each gate, naming its capabilities once (one for each capability under it, each naming
    them all, made 10 gates over 200 capabilities 2.5 MB and 0.8 s); gates past MAX_FLOOR_GATES not read."""
    capabilities = [f"arm.c{i}" for i in range(named)]
    gate = {"scope": scope, "require_auth": True}
    manifest = dataclasses.replace(
        BOB, frontmatter={"capabilities": capabilities, "safety": {"hitl_gates": [gate] * gates}}
    )
    started = time.perf_counter()
    floor = rmm.safety_floor(manifest, " ".join(capabilities))
    assert time.perf_counter() - started < 0.5 and floor.verdict == (AUTH if gates else NONE)
    assert sum(r.startswith("the gate scope") for r in floor.reasons) == min(gates, rmm.MAX_FLOOR_GATES)
    assert any("gates after the first" in n for n in floor.not_read) is (gates > rmm.MAX_FLOOR_GATES)


def test_huge_and_tiny_exponents_are_exact() -> None:
    floor = rmm.safety_floor(BOB, "pick 1e308 kg, then 1e-400 kg, then -3 kg")
    assert [q["beyond"] for q in floor.quantities] == [True, False, True]
    assert floor.verdict == BLOCKED and floor.quantities[1]["value"] == "1E-400 kg"
    assert floor.quantities[2]["value"] == "3 kg (its magnitude)"


def test_the_floor_says_it_is_a_floor() -> None:
    text = rmm.safety_floor(BOB, "pick up the vial").text()
    assert text.startswith(f"{rmm.FLOOR_HEADING}{NONE}\n")
    assert "never looser" in text and "WITHIN DECLARED LIMITS" not in text.replace(
        "within declared limits", ""
    )


def _json_values() -> st.SearchStrategy[Any]:
    scalars = st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=8)
    return st.recursive(
        scalars,
        lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=4), inner, max_size=3),
        max_leaves=6,
    )


# fmt: off
FIELDS_THE_FLOOR_READS = [
    ("physics", "type"), ("physics", "kinematics"), ("physics", "solver"), ("drivers",), ("capabilities",),
    ("safety",), ("safety", "max_joint_velocity_dps"), ("safety", "workspace"), ("safety", "hitl_gates"),
]
# fmt: on


@settings(max_examples=20, deadline=None, suppress_health_check=list(HealthCheck))
@given(place=st.sampled_from(FIELDS_THE_FLOOR_READS), value=_json_values())
def test_any_value_where_the_floor_and_briefing_look_is_no_crash(place: tuple[str, ...], value: Any) -> None:
    """A value of any JSON type where a field the floor and the briefing read belongs (a mapping as
    physics.type was a TypeError): the floor and the briefing are made, never an exception."""
    fm = yaml.safe_load(EXAMPLE.read_text(encoding="utf-8").split("---")[1])
    node = fm
    for key in place[:-1]:
        if not isinstance(node.get(key), dict):
            node[key] = {}
        node = node[key]
    node[place[-1]] = value
    fm["safety"] = {} if place[0] != "safety" else fm["safety"]  # limits not declared: every rule looked at
    text = "---\n" + yaml.safe_dump(fm) + "---\n## Identity\n\n## Safety Gates\n"
    manifest = rmm.parse(text)
    rmm.safety_floor(manifest, "pick at 2 m/s, turn 30 rpm with joint 2, 5 kg")
    rmm.context(manifest, rmm.validate(manifest))
