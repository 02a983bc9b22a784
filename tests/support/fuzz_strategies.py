"""Hypothesis strategies for test_fuzz.py: whole ROBOT.md files, as bytes.

- `manifest_files()` builds them: a frontmatter dict in the schema's shapes
  (metadata, physics with solver cameras or a legacy camera, drivers with
  streams and intrinsics, capabilities, safety, extensions, contracts, ...),
  each field mostly realistic, sometimes missing or of the wrong type, shared
  (YAML anchors) or self-containing, dumped by PyYAML in a random style; then
  a markdown body whose H1 and required sections are each present, altered or
  missing; then varied delimiters, newlines and an occasional BOM.
- `mutants()` damages real files (tests/corpus/, the bundled example) or
  generated ones with 1-5 byte- and line-level edits: lines deleted,
  duplicated, swapped, re-indented; bytes flipped, set, inserted, deleted;
  YAML syntax (anchors, aliases, merge keys, tags, `---`, directives, deep
  nesting) and awkward bytes (tabs, BOM, CR/CRLF, NUL, invalid UTF-8) spliced in.

Speed: Hypothesis draws each file as ONE byte string that `Source` reads its
choices from (drawing each choice through Hypothesis costs ~50x more, too
slow for 100,000 cases). A zero byte, like the end of the string, picks the
first option, and every pool lists its plainest entry first, so Hypothesis's
shrinking of the bytes (towards zeros, towards shorter) still shrinks the file.
"""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Callable, Hashable, Iterator, Sequence
from typing import Any, TypeVar

import yaml
from conftest import CORPUS, EXAMPLE
from hypothesis import strategies as st
from yaml.representer import SafeRepresenter

T = TypeVar("T")
BOM = b"\xef\xbb\xbf"


class Source:
    """Choices read from a byte string, one or two bytes each; zeros once it runs out."""

    def __init__(self, data: bytes) -> None:
        self.data, self.at = data, 0
        # A clean source makes no deliberate schema errors (wrong types, values
        # out of range), so that a fair share of files validate.
        self.clean = self.percent() < 40

    def byte(self) -> int:
        self.at += 1
        return self.data[self.at - 1] if self.at <= len(self.data) else 0

    def below(self, n: int) -> int:
        """0..n-1 (n at most 65,536)."""
        return ((self.byte() << 8 | self.byte()) if n > 256 else self.byte()) % max(n, 1)

    def pick(self, options: Sequence[T]) -> T:
        return options[self.below(len(options))]

    def percent(self) -> int:
        return self.byte() * 100 // 256

    def some(self, make: Callable[[Source], T], most: int) -> list[T]:
        return [make(self) for _ in range(self.below(most + 1))]

    def region(self, size: int) -> Source:
        """The next `size` bytes as a Source of their own. What is drawn from
        it cannot shift the draws after it, so Hypothesis can shrink one part
        of a file (the drivers, the body) and leave the others as they are."""
        part = Source.__new__(Source)
        part.data, part.at, part.clean = self.data[self.at : self.at + size], 0, self.clean
        self.at += size
        return part


# --------------------------------------------------------------------------- values

NAMES = [
    "bob", "test-bot", "alice", "so-arm101", "Bob", "my robot", "a.b", "a+b", "(x)", "[x]", "a*",
    "x|y", "^$", "a\\b", "100%", "#1", "it's", "ロボット", "straße", "İstanbul", "bot-🤖", "Jose\u0301",
    "bot\u200b", "n" * 64, "n" * 65, "", "yes", "1e3", "Can Do", "a\nb", " bot ", "---", "ΣΟΦΙΑΣ",
]  # fmt: skip
WORDS = [
    "x", "", "arm", "camera", "base", "world", "tool0", "link_3", "yes", "no", "on", "null", "~",
    "1:20", "017", "0x1F", "3.0", "1.10", ".nan", "2026-04-17", "a: b", "#hash", "- dash", "'q",
    '"dq', "&anchor", "*alias", "!tag", "|", ">", "%", "@", "`", "{x}", "[x]", "é", "🤖",
    "\t", " lead", "trail ", "multi\nline", "\x85", "\u2028", "\ufeff", "\x00", "\u00a0", "=", "<<",
]  # fmt: skip
CHARS = "abcXYZ019 -_.:#&*!|>'\"%@`{}[],?\t\\\n\réß🤖\u2028\x85\u00a0\ufeff\x00\x7f"
NUMBERS = [1, 0, 0.5, -1, 2.0, 100, 5000, 36000, 36001, 10001, 1e3, float("nan"), float("inf"), True]
NUMBERS += [-0.0, 1e300, -(2**70), 3]
HASHABLE = [1, 0, True, None, 2.5, dt.date(2026, 1, 1), "1", "a"]
DATES = [
    dt.date(2026, 4, 17),
    dt.datetime(2026, 4, 17, 10, 0),
    dt.datetime(2026, 4, 17, 10, 0, tzinfo=dt.timezone.utc),
]


def text(src: Source) -> str:
    if src.percent() < 70:
        return src.pick(WORDS)
    return "".join(src.pick(CHARS) for _ in range(src.below(12)))


def number(src: Source, *usual: Any) -> Any:
    """One of `usual` (valid values) 90% of the time, else an edge case."""
    if usual and (src.clean or src.percent() < 90):
        return src.pick(usual)
    return src.pick(NUMBERS) if src.percent() < 60 else src.below(70000) - 10 + src.pick([0, 0.25, 0.5])


def odd(src: Source, depth: int = 0) -> Any:
    """Any value YAML can hold: the wrong type for a field."""
    kind = src.below(11 if depth < 2 else 9)
    if kind == 0:
        return None
    if kind == 1:
        return src.pick([True, False])
    if kind == 2:
        return src.below(70) - 3
    if kind == 3:
        return src.pick(NUMBERS)
    if kind in (4, 5):
        return text(src)
    if kind == 6:
        return src.pick(DATES)
    if kind == 7:
        return bytes(src.byte() for _ in range(src.below(6)))
    if kind == 8:
        return src.pick([(src.byte() << 8 | src.byte()) ** 3, -1.5e-7, 123456789.125])
    if kind == 9:
        return src.some(lambda s: odd(s, depth + 1), 3)
    return {
        src.pick(HASHABLE) if src.percent() < 30 else text(src): odd(src, depth + 1)
        for _ in range(src.below(4))
    }


def put(src: Source, out: dict, key: Any, good: Callable[[Source], Any], absent: int = 50) -> None:
    """out[key]: left out `absent`% of the time, a value of any type 1% of the time, else good(src)."""
    roll = src.percent()
    if roll < absent and not (src.clean and absent < 10):  # required fields are there when clean
        return
    out[key] = odd(src) if roll >= 99 and not src.clean else good(src)


def usually(usual: float) -> Callable[[Source], Any]:
    """`usual` mostly, else an edge case (see number)."""
    return lambda src: number(src, usual)


def one_of(*options: Any) -> Callable[[Source], Any]:
    return lambda src: src.pick(options)


def mostly(usual: Sequence[Any], unusual: Sequence[Any]) -> Callable[[Source], Any]:
    """One of `usual` (valid values) 94% of the time, else one of `unusual`."""
    return lambda src: src.pick(usual) if src.percent() < 94 or src.clean else src.pick(unusual)


# --------------------------------------------------------------------------- frontmatter

PHYSICS_TYPES = mostly(
    ["arm", "wheeled", "arm+camera", "arm_manipulator", "tracked", "legged", "humanoid", "sensor", "other"],
    ["drone", "ARM", ""],
)
PROTOCOLS = one_of(
    "feetech", "depthai", "pca9685", "feetech_scs", "feetech_depthai", "oak_d_lr", "dynamixel",
    "ros2_control", "realsense", "v4l2", "zed", "uvc", "usb", "custom",
)  # fmt: skip
DRIVER_IDS = mostly(["arm", "cam", "camera", "wheels", "base", "eye"], ["", "it's", "a b"])
STREAMS = mostly(["rgb", "depth", "left", "right", "mono", "ir", "thermal"], ["color", "RGB"])
MOUNTS = mostly(["world", "tool0", "link_3"], ["base", "link_X", ""])
NAMESPACES = ["arm", "nav", "perceive", "status", "navigate", "move", "manipulate", "vision"]
ACTIONS = ["pick", "place", "reach", "go_to", "forward", "look", "report", "describe"]


def intrinsic(src: Source) -> dict:
    out: dict = {}
    for key, usual in (("fx", 600), ("fy", 600), ("cx", 320), ("cy", 240), ("width", 640), ("height", 480)):
        put(src, out, key, usually(usual), absent=4)
    put(src, out, "distortion_model", one_of("plumb_bob", "equidistant", "rational", "none", "fisheye"), 70)
    put(src, out, "distortion_coeffs", lambda s: s.some(lambda t: number(t, 0, 0.1), 9), 60)
    return out


def stream(src: Source) -> dict:
    out: dict = {}
    put(src, out, "intrinsic", lambda s: None if s.percent() < 40 else intrinsic(s), absent=40)
    put(src, out, "derived_from", lambda s: s.some(STREAMS, 2), absent=70)
    put(src, out, "baseline_m", lambda s: number(s, 0.075), absent=90)
    return out


def driver(src: Source) -> dict:
    out: dict = {}
    put(src, out, "id", DRIVER_IDS, absent=1)
    put(src, out, "protocol", PROTOCOLS, absent=1)
    put(src, out, "port", one_of("/dev/ttyUSB0", "/dev/video0"), absent=70)
    put(src, out, "baud_rate", one_of(1000000, 115200), absent=80)
    put(src, out, "model", one_of("STS3215", "OAK-D"), absent=70)
    put(src, out, "count", mostly([1, 2, 6], [0, -1]), absent=85)
    put(src, out, "backend", mostly(["feetech", "x_1"], ["Bad-Name"]), absent=90)
    put(src, out, "streams", lambda s: {STREAMS(s): stream(s) for _ in range(s.below(3))}, absent=60)
    return out


def camera(src: Source, driver_ids: list[str]) -> dict:
    out: dict = {}
    put(src, out, "driver_id", mostly(driver_ids or ["cam"], ["ghost", ""]), absent=1)
    put(src, out, "primary_stream", STREAMS, absent=1)
    put(src, out, "mount", MOUNTS, absent=1)
    put(src, out, "extrinsic", lambda s: None if s.percent() < 30 else [number(s, 0) for _ in range(6)], 50)
    put(src, out, "extrinsic_source", one_of("user_declared", "preset_default", None, "guessed"), absent=80)
    put(src, out, "fov", one_of(90), absent=97)
    return out


def solver(src: Source, driver_ids: list[str]) -> dict:
    out: dict = {}
    put(src, out, "convention", mostly(["DH", "URDF", "custom"], ["dh"]), absent=70)
    put(src, out, "cameras", lambda s: s.some(lambda t: camera(t, driver_ids), 2), absent=40)
    legacy = {
        "mount": MOUNTS,
        "extrinsic": lambda s: None if s.percent() < 50 else [number(s, 0) for _ in range(6)],
    }
    put(src, out, "camera", lambda s: fields(s, legacy, absent=40), absent=65)  # upgraded by the parser
    put(src, out, "ik_provider", lambda s: None if s.percent() < 50 else text(s), absent=90)
    return out


def fields(src: Source, makers: dict[str, Callable[[Source], Any]], absent: int = 50) -> dict:
    out: dict = {}
    for key, make in makers.items():
        put(src, out, key, make, absent)
    return out


def physics(src: Source, driver_ids: list[str]) -> dict:
    out: dict = {}
    put(src, out, "type", PHYSICS_TYPES, absent=1)
    put(src, out, "dof", mostly([6, 2, 0, 7, 12, 64, 1], [65, -1, 2.0, 2.5]), absent=1)
    joint = {"id": one_of("shoulder", "elbow", "gripper"), "axis": mostly(["z", "y", "x"], ["w"])}
    put(src, out, "kinematics", lambda s: s.some(lambda t: fields(t, joint, absent=10), 2), absent=75)
    pose = {"joints": lambda s: {mostly(["j1", "j2"], [1])(s): s.below(360) - 180 for _ in range(s.below(3))}}
    put(src, out, "poses", lambda s: {mostly(["ready", "home"], [1])(s): fields(s, pose, 10)}, absent=85)
    put(src, out, "solver", lambda s: solver(s, driver_ids), absent=45)
    return out


def capability(src: Source) -> Any:
    if src.percent() < 93 or src.clean:
        return f"{src.pick(NAMESPACES)}.{src.pick(ACTIONS)}"
    return src.pick(["arm.pick.fast", "a-b.c_d", "arm", "Arm.Pick", 1])


def safety(src: Source) -> dict:
    estop = {
        "software": mostly([True], [False, "yes"]),
        "response_ms": mostly([200, 0, 50, 5000], [5001, -1, 3.5]),
        "hardware": one_of(True, False),
    }
    out: dict = {}
    put(src, out, "estop", lambda s: fields(s, estop, absent=1), absent=1)
    put(src, out, "p66_enabled", one_of(True, False), absent=70)
    put(src, out, "loa_enforcement", one_of(True, False), absent=80)
    put(src, out, "max_joint_velocity_dps", lambda s: number(s, 180, 90.5), absent=70)
    put(src, out, "max_linear_velocity_ms", lambda s: number(s, 0.5, 1), absent=70)
    put(src, out, "payload_kg", lambda s: number(s, 0.5, 2), absent=70)
    put(
        src, out, "workspace_bounds_m", lambda s: [number(s, 1, 2) for _ in range(mostly([3], [2, 4])(s))], 75
    )
    put(src, out, "failsafe_behavior", mostly(["stop", "hold", "home", "custom"], ["explode"]), absent=75)
    gate = {"scope": lambda s: text(s) if s.percent() < 20 else "motion", "require_auth": one_of(True, False)}
    put(src, out, "hitl_gates", lambda s: s.some(lambda t: fields(t, gate, absent=10), 2), absent=70)
    return out


def extras(src: Source) -> dict:
    """The optional top-level blocks."""
    out: dict = {}
    net = {"port": mostly([8000, 1], [0, 70000]), "signing_alg": mostly(["ed25519"], ["rsa"])}
    put(src, out, "network", lambda s: fields(s, net), absent=85)
    brain = {
        "planning": lambda s: {"confidence_gate": number(s, 0.6, 1)},
        "task_routing": lambda s: {mostly(["safety", "vision"], [1])(s): text(s) for _ in range(s.below(3))},
    }
    put(src, out, "brain", lambda s: fields(s, brain), absent=85)
    compliance = {
        "annex_iii_basis": mostly(["education", "biometric"], ["nope"]),
        "fria_ref": mostly(["https://x.org/f"], ["not a uri", None]),
    }
    put(src, out, "compliance", lambda s: fields(s, compliance), absent=90)
    extension_key = mostly(["x-foo", "x-bar_9"], ["foo", "X-Foo", 1])
    put(src, out, "extensions", lambda s: {extension_key(s): {"a": 1} for _ in range(s.below(3))}, absent=85)
    contract = {"preconditions": lambda s: [{"kind": mostly(["pose_taught"], ["magic"])(s)}]}
    contract_key = mostly(["arm.pick", "nav.go"], [1, dt.date(2026, 1, 1)])
    put(src, out, "capability_contracts", lambda s: {contract_key(s): fields(s, contract, 10)}, absent=90)
    skill = {"id": one_of("pick", "place"), "recorded_at": mostly(["2026-04-17"], [dt.date(2026, 4, 17)])}
    put(src, out, "learned_skills", lambda s: s.some(lambda t: fields(t, skill, 20), 2), absent=90)
    put(src, out, "federation", mostly([{"peer_rrns": ["RRN-000000000002"]}], [{"peer_rrns": ["bad"]}]), 96)
    cube = {"id": "cube", "detector": "hsv", "params": {"h": [0, 10]}}
    put(src, out, "vision", mostly([{"object_descriptors": [cube]}], [{"object_descriptors": [{}]}]), 96)
    spatial = {
        "spec_version": "1.0.0",
        "units": ["O1", "A2"],
        "workspace": {
            "play_surface_dims_m": [1, 0.5],
            "judge_camera": {"device": "/dev/video0", "resolution": [640, 480]},
        },
        "reasoning_stack": {"baseline": "claude:a", "declared": "claude:b"},
    }
    put(src, out, "spatial-eval", mostly([spatial], [{**spatial, "units": []}, {"bonus": 1}]), absent=97)
    put(src, out, "_deprecations", lambda s: s.some(text, 2) if s.percent() < 70 else text(s), absent=95)
    put(src, out, "x-set", lambda s: InOrder(s.some(one_of("b", "a", 2, 1), 3)), absent=97)
    key = mostly(["x-vendor", "foo"], ["content", "handler", "self", 1, None])(src)  # some break Post(**fm)
    put(src, out, key, odd, absent=95)
    return out


def frontmatter(src: Source) -> dict:
    """A frontmatter mapping, keys in the usual order (dumping may sort them)."""
    fm: dict = {}
    head = src.region(10)
    put(head, fm, "rcan_version", mostly(["3.0", "3.1", "3.0.1", "3.10"], ["2.0", "3", 3.0]), absent=1)
    put(head, fm, "schema", one_of("https://robotmd.dev/schema/v1/robot.schema.json"), absent=85)
    metadata: dict = {}
    part = src.region(28)
    put(part, metadata, "robot_name", lambda s: s.pick(NAMES) if s.percent() < 90 else text(s), absent=1)
    put(part, metadata, "rrn", mostly(["RRN-000000000001", ""], ["RRN-1"]), absent=60)
    for key in ("manufacturer", "model", "version"):
        put(part, metadata, key, lambda s: text(s) if s.percent() < 30 else "1.0", absent=60)
    put(part, metadata, "rcn_ids", lambda s: s.some(mostly(["RCN-000000000001"], ["x"]), 2), absent=90)
    put(head, fm, "metadata", lambda s: metadata, absent=1)
    part = src.region(110)
    drivers = part.some(driver, 3) if part.percent() < 97 else []
    ids = [d["id"] for d in drivers if isinstance(d.get("id"), str)]
    put(src.region(72), fm, "physics", lambda s: physics(s, ids), absent=1)
    put(head, fm, "drivers", lambda s: drivers or [driver(part)], absent=1)
    put(src.region(16), fm, "capabilities", lambda s: s.some(capability, 4), absent=40)
    put(src.region(48), fm, "safety", safety, absent=1)
    fm.update(extras(src.region(72)))
    share = src.region(1).percent()  # the same object twice: anchors and aliases in the YAML
    if share >= 95 and drivers:
        fm["x-copy"] = drivers[0]
    elif share >= 93:
        loop: list = ["x"]
        loop.append(loop)
        fm["x-loop"] = loop
    return fm


# --------------------------------------------------------------------------- files


def variant(src: Source, usual: str | None, *others: str | None, percent: int = 85) -> str | None:
    """`usual` `percent`% of the time, else one of `others`."""
    return usual if src.percent() < percent else src.pick(others)


def body(src: Source, name: Any) -> str:
    n = name if isinstance(name, str) else src.pick(["bob", ""])
    h1 = variant(
        src, f"# {n}", f"# {n.upper()}", f"#  {n}", f"# {n}  ", f"# {n} robot", f"{n}\n===", f" # {n}",
        None, f"## {n}", f"# {n}\u00a0", "# someone-else",
    )  # fmt: skip
    identity = variant(src, "## Identity\nA robot.", "### Identity", "## identity", None)
    what = variant(
        src, f"## What {n} Can Do\n- pick", f"## what {n.lower()} can do", f"## What {n} Can Do  ",
        f"## What  {n} Can Do", None,
    )  # fmt: skip
    gates = variant(
        src, "## Safety Gates\nE-stop first.", "## Safety gates", "```\n## Safety Gates\n```", None
    )
    prose = [
        "Some prose.", "---", "- a: list", "```yaml\nkey: value\n```", "<!-- note -->", "| a | b |",
        "\ufeff# text", "ünïcödé 🤖 \u202eevil", "...", "\t indented", "# H1 again", "",
    ]  # fmt: skip
    parts = [p for p in (h1, identity, what, gates) if p is not None]
    parts += src.some(lambda s: s.pick(prose), 3)
    if src.percent() >= 90:
        parts.reverse()
    return src.pick(["\n\n", "\n", "\n\n\n"]).join(parts)


class InOrder(set[Hashable]):
    """A set that is dumped in the order its items were drawn, not in an
    order that changes with the hash seed: the same bytes, the same file."""

    def __init__(self, items: list[Hashable]) -> None:
        super().__init__(items)
        self.order = list(dict.fromkeys(items))

    def __iter__(self) -> Iterator[Hashable]:
        return iter(self.order)


def _dumping_in_order(base: type[SafeRepresenter]) -> type[SafeRepresenter]:
    """A subclass of `base` that dumps InOrder sets as YAML sets; `base` itself is left as it is."""
    dumper: type[SafeRepresenter] = type(f"InOrder{base.__name__}", (base,), {})
    dumper.add_representer(InOrder, SafeRepresenter.represent_set)
    return dumper


_PyDumper = _dumping_in_order(yaml.SafeDumper)
# LibYAML's emitter where PyYAML was built with it; else PyYAML's own again.
_CDumper = _dumping_in_order(getattr(yaml, "CSafeDumper", yaml.SafeDumper))


def dump(src: Source, fm: dict) -> str:
    options: dict[str, Any] = {  # how yaml.dump lays the file out
        "default_flow_style": src.pick([False, None, True]),
        "allow_unicode": src.pick([True, False]),
        "width": src.pick([80, 30, 4096]),
        "indent": src.pick([2, 4]),
        "explicit_start": src.percent() >= 97,
    }
    # Mostly LibYAML's emitter (fast); PyYAML's own formats a few things differently.
    dumper = _PyDumper if src.percent() >= 95 else _CDumper
    try:
        return yaml.dump(fm, Dumper=dumper, sort_keys=src.percent() >= 80, **options)
    except TypeError:  # keys of several types cannot be sorted
        return yaml.dump(fm, Dumper=dumper, sort_keys=False, **options)


def build_file(src: Source) -> bytes:
    fm = frontmatter(src.region(360))
    metadata = fm.get("metadata")
    front = dump(src.region(8), fm)
    prose = body(src.region(24), metadata.get("robot_name") if isinstance(metadata, dict) else None)
    opening = variant(src, "---", "----", "--- ", "---\t", "-----", "---\n", "--- x", "+++", percent=94)
    closing = variant(src, "---", "----", "---  ", "...", "--- end", "", "---\n\n", percent=94)
    lead = variant(src, "", "\n", "\n\n", " ", "\t\n", "text\n", percent=94)
    gap = variant(src, "\n", "", "\n\n\n")
    page = f"{lead}{opening}\n{front}{closing}\n{gap}{prose}\n"
    newline = variant(src, "\n", "\r\n", "\r", percent=90)
    data = page.replace("\n", newline or "\n").encode("utf-8")
    return BOM + data if src.percent() >= 95 else data


# --------------------------------------------------------------------------- mutations

SEEDS = [p.read_bytes() for p in sorted(CORPUS.glob("*.md"))] + [EXAMPLE.read_bytes()]
LINES = [
    b"---", b"...", b"# comment", b"", b"\t", b"- item", b"key:", b"x-a: &a {k: v}", b"x-b: *a",
    b"<<: *a", b"<<: {merged: 1}", b"? [a, b]\n: c", b"key: |\n  block\n  text", b"key: >-", b"%YAML 1.1",
    b"%TAG ! tag:yaml.org,2002:", b"--- !!map", b"x: !!set {b, a}", b"x: !!binary aGk=", b"x: !!omap [a: 1]",
    b"x: !custom 1", b"x: !!python/name:os.system", b"x: [[[[[]]]]]", b"x: 1:20", b"x: =", b"x: 2026-13-45",
    b"x: \xff", b"x: \x00", b'x: "\\ud800"', b"x: '\xc2\x85'", b"x: *undefined", b"1: one", b"~: null",
    b"2026-01-01: d", b"content: x", b"_deprecations: [old]", b"_deprecations: 5", b"robot_name: bob",
    b"camera: {mount: tool0}", b"solver: {camera: {}}", b"cameras: [{driver_id: cam, primary_stream: rgb}]",
    b"capabilities: [arm.pick, nav.go]", b"physics: 5", b"drivers: [1]", b"extensions: {1: {}}",
    b"poses: {1: 5, ready: 5}", b"## Identity", b"## Safety Gates", b"# bob", b"## What bob Can Do",
    b"\xef\xbb\xbf---",
]  # fmt: skip
VALUES = [
    b"~", b"", b"yes", b"no", b"null", b"1:20", b"0x1F", b"017", b".nan", b"-.inf", b"2026-04-17",
    b"2026-04-17T10:00:00Z", b"2026-13-45", b"[a, b", b"{a: 1}", b"[]", b"{}", b'"str"', b"'it''s'",
    b"|", b">", b"*undefined", b"=", b"!!binary aGVsbG8=", b"!!set {a, b}", b"!!str 3.0", b"!!int x",
    b"1e3", b"3.0", b"-1", b"65", b"true", b'""', b"&fz [*fz]", b"- a", b"a: b: c", b"\t", b"#",
]  # fmt: skip
KEY_NAMES = [
    b"robot_name", b"dof", b"type", b"physics", b"solver", b"camera", b"cameras", b"drivers", b"id",
    b"protocol", b"streams", b"intrinsic", b"capabilities", b"safety", b"estop", b"software",
    b"response_ms", b"metadata", b"rcan_version", b"_deprecations", b"content", b"handler", b"self",
    b"extensions", b"x-foo", b"1", b"true", b"~", b"2026-01-01", b"<<", b"? x", b"", b"'a: b'",
]  # fmt: skip
BYTES = [
    b"\x00", b"\t", b"\r", b"\r\n", b"\n", BOM, b"\xff", b"\xc3", b"\xc3\xa9", b"\xed\xa0\x80", b"\xc0\x80",
    b"\xf0\x9f\xa4\x96", b"\xe2\x80\xa8", b"\xc2\x85", b"\xc2\xa0", b": ", b"- ", b"&a ", b"*a", b"!!str ",
    b"!!set ", b"{", b"}", b"[", b"]", b"'", b'"', b"#", b"|", b">", b"%", b"@", b"`", b"---", b"\n---\n",
    b"\\", b"? ", b",", b"\x0c", b"\x7f", b"\x1b",
]  # fmt: skip
SPECIAL = list(b"\x00\t\n\r \"#&'*-:>[]{|}\x7f\x80\xc3\xef\xff")  # bytes YAML, UTF-8 or lines care about
TAGS = [b"!!str ", b"!!int ", b"!!float ", b"!!binary ", b"!!set ", b"!!null ", b"!!bool ", b"!x "]
_INDENT = re.compile(rb"[ \t]*")
_VALUE = re.compile(rb": ")


def _at(src: Source, size: int) -> int:
    return src.below(1 << 16) % max(size, 1)


def _indent(line: bytes) -> bytes:
    match = _INDENT.match(line)
    return match.group() if match else b""


def _eol(line: bytes) -> bytes:
    return line[len(line.rstrip(b"\r\n")) :] or b"\n"


def delete_line(src: Source, lines: list[bytes], i: int) -> None:
    del lines[i]


def duplicate_line(src: Source, lines: list[bytes], i: int) -> None:
    lines.insert(i, lines[i].rstrip(b"\r\n") + _eol(lines[i]))


def swap_lines(src: Source, lines: list[bytes], i: int) -> None:
    j = _at(src, len(lines))
    lines[i], lines[j] = lines[j], lines[i]


def reindent_line(src: Source, lines: list[bytes], i: int) -> None:
    lines[i] = src.pick([b"", b" ", b"  ", b"    ", b"\t", b"  \t"]) + lines[i].lstrip(b" \t")


def insert_line(src: Source, lines: list[bytes], i: int) -> None:
    """A line of YAML or markdown at the indentation of the line it goes before."""
    lines.insert(i, _indent(lines[i]) + src.pick(LINES) + _eol(lines[i]))


def replace_value(src: Source, lines: list[bytes], i: int) -> None:
    head, sep, _ = lines[i].rstrip(b"\r\n").partition(b": ")
    lines[i] = head + (sep or b": ") + src.pick(VALUES) + _eol(lines[i])


def rename_key(src: Source, lines: list[bytes], i: int) -> None:
    indent = _indent(lines[i])
    rest = lines[i][len(indent) :]
    dash = b"- " if rest.startswith(b"- ") else b""
    _, colon, value = rest[len(dash) :].partition(b":")
    lines[i] = indent + dash + src.pick(KEY_NAMES) + b":" + (value if colon else b" x\n")


def anchor_and_alias(src: Source, lines: list[bytes], i: int) -> None:
    """`&fz` on one value, then an alias (or merge) of it at another line's indentation."""
    head, sep, value = lines[i].partition(b": ")
    if sep:
        lines[i] = head + b": &fz " + value
    j = _at(src, len(lines) + 1)
    use = src.pick([b"x-fz: *fz", b"<<: *fz", b"- *fz", b"*fz : k"])
    lines.insert(j, _indent(lines[min(j, len(lines) - 1)]) + use + b"\n")


def nest_deeply(src: Source, lines: list[bytes], i: int) -> None:
    depth = src.pick([5, 20, 99, 100, 101, 300, 1100]) if src.percent() < 50 else src.below(130)
    lines.insert(i, _indent(lines[i]) + b"x-deep: " + b"[" * depth + b"]" * depth + b"\n")


LINE_OPS = (
    delete_line, duplicate_line, swap_lines, reindent_line, insert_line, replace_value, rename_key,
    anchor_and_alias, nest_deeply,
)  # fmt: skip


def tag_value(src: Source, data: bytes) -> bytes:
    spots = [m.end() for m in _VALUE.finditer(data)] or [0]
    at = src.pick(spots)
    return data[:at] + src.pick(TAGS) + data[at:]


def flip_bit(src: Source, data: bytes) -> bytes:
    i = _at(src, len(data))
    return data[:i] + bytes([data[i] ^ (1 << src.below(8))]) + data[i + 1 :] if data else b"\x00"


def set_byte(src: Source, data: bytes) -> bytes:
    i = _at(src, len(data))
    return data[:i] + bytes([src.pick(SPECIAL)]) + data[i + 1 :]


def insert_bytes(src: Source, data: bytes) -> bytes:
    i = _at(src, len(data) + 1)
    return data[:i] + src.pick(BYTES) + data[i:]


def delete_span(src: Source, data: bytes) -> bytes:
    i = _at(src, len(data))
    return data[:i] + data[i + 1 + src.below(40) :]


def duplicate_span(src: Source, data: bytes) -> bytes:
    i = _at(src, len(data))
    return data[:i] + data[i : i + 1 + src.below(40)] + data[i:]


def truncate(src: Source, data: bytes) -> bytes:
    return data[: _at(src, len(data) + 1)]


def newlines(src: Source, data: bytes) -> bytes:
    return data.replace(b"\n", src.pick([b"\r\n", b"\r"]), src.pick([-1, 1, 3, 10]))


def prepend(src: Source, data: bytes) -> bytes:
    return src.pick([BOM, b"\n", b" ", b"\t", BOM + BOM, b"\n\n---\n", b"\x00"]) + data


def splice(src: Source, data: bytes) -> bytes:
    other = src.pick(SEEDS)
    return data[: _at(src, len(data) + 1)] + other[_at(src, len(other) + 1) :]


BYTE_OPS = (
    flip_bit, set_byte, insert_bytes, delete_span, duplicate_span, truncate, newlines, prepend, tag_value,
    splice,
)  # fmt: skip


def mutate(src: Source) -> bytes:
    """A real manifest (three times in four) or a generated one, with 1-5 edits (mostly one)."""
    plan = src.region(3)
    edits = [src.region(8) for _ in range(5)]
    data = plan.pick(SEEDS) if plan.percent() < 75 else build_file(src)
    for edit in edits[: plan.pick([1, 1, 1, 1, 2, 2, 3, 4, 5])]:
        op = edit.below(len(LINE_OPS) + len(BYTE_OPS))  # as edit.pick(LINE_OPS + BYTE_OPS)
        if op < len(LINE_OPS):
            lines = data.splitlines(keepends=True) or [b""]
            LINE_OPS[op](edit, lines, _at(edit, len(lines)))
            data = b"".join(lines)
        else:
            data = BYTE_OPS[op - len(LINE_OPS)](edit, data)
    return data


def manifest_files() -> st.SearchStrategy[bytes]:
    return st.binary(min_size=300, max_size=420).map(lambda raw: build_file(Source(raw)))


def mutants() -> st.SearchStrategy[bytes]:
    return st.binary(min_size=43, max_size=460).map(lambda raw: mutate(Source(raw)))


# --------------------------------------------------------------------------- costly files
# Files built to cost as much as a file under the 1 MiB cap can: aliases,
# merges, long scalars, values whose repr() is long, deep nesting; each placed
# where nothing looks at it, or where the schema checks it (so jsonschema
# quotes it in a message) or the briefing shows it. For the budget property in
# test_hostile_files.py.

CAP = 1024 * 1024


def bob_with(lines: str) -> str:
    """bob's manifest with extra frontmatter lines before its metadata."""
    return EXAMPLE.read_text(encoding="utf-8").replace("metadata:", lines + "metadata:", 1)


def nested_mappings(depth: int) -> str:
    return "".join(" " * i + f"k{i}:\n" for i in range(depth)) + " " * depth + "leaf\n"


def merge_bomb(levels: int, width: int, keys: int) -> list[str]:
    """Rows l0 (a mapping of `keys` keys) to l<levels>, each merging the one before `width` times."""
    rows = ["l0: &l0 {" + ", ".join(f"k{i}: {i}" for i in range(keys)) + "}"]
    for level in range(1, levels + 1):
        rows.append(f"l{level}: &l{level} {{<<: [" + ", ".join([f"*l{level - 1}"] * width) + "]}")
    return rows


def alias_bomb(levels: int, fan: int) -> str:
    """YAML lines l0 to l<levels - 1>, each `fan` aliases of the one before: 4 × fan^(levels - 1) values."""
    rows = ["l0: &l0 [x, x, x, x]"]
    rows += [f"l{i}: &l{i} [" + ", ".join([f"*l{i - 1}"] * fan) + "]" for i in range(1, levels)]
    return "\n".join(rows) + "\n"


PLACES = ("x_costly: {}", "capabilities: {}", "metadata: {{robot_name: {}}}", "drivers: {}", "safety: {}")
SCALARS = (
    lambda n: "x" * n,
    lambda n: "word " * (n // 5) + "end",
    lambda n: '"' + "\\x01" * (n // 4) + '"',
    lambda n: '"' + "\\uFFFE" * (n // 6) + '"',
    lambda n: "!!binary " + "QUFB" * (n // 4),
    lambda n: "0x" + "f" * min(n, 3570),  # 3,570 hex digits: 4,298 decimal ones, just inside Python's limit
    lambda n: "0x" + "f" * n,
    lambda n: "1" + ":1" * (n // 2),
    lambda n: "2026-04-17",
    lambda n: "1" * min(n, 5000),
)


def near(*limits: int) -> st.SearchStrategy[int]:
    """Any size in range, or one next to the limits that matter (Hypothesis's own choices stay small)."""
    return st.one_of(st.sampled_from(limits), st.integers(1, max(limits)))


@st.composite
def costly_frontmatter(draw: st.DrawFn) -> str:
    shape = draw(st.sampled_from(("alias", "merge", "long", "deep", "nested aliases")))
    fan = draw(near(1, 20, 400, 2000, 5000, 20_000, 50_000))
    size = draw(near(100, 5000, 40_000, 99_000, 101_000, 400_000, CAP - 60_000))
    if shape == "long":
        return draw(st.sampled_from(SCALARS))(size)
    if shape == "deep":
        levels, fan = draw(near(10, 150, 299, 301, 999, 1001, 5000)), min(fan, 50_000 // 4)
        return "[&d " + "[" * levels + "1" + "]" * levels + ", " + ", ".join(["*d"] * fan) + "]"
    if shape == "merge":
        width, keys = draw(near(2, 50, 100, 200)), draw(near(1, 50, 200))
        return "{" + ", ".join(merge_bomb(draw(st.integers(1, 8)), width, keys)) + "}"
    fan = min(fan, 200_000 // 4)  # what fits under the cap as `*s, `
    scalar = draw(st.sampled_from(SCALARS))(max(1, size // fan))
    if shape == "alias":
        return f"[&s {scalar}, " + ", ".join(["*s"] * fan) + "]"
    levels, width = draw(near(2, 5, 12)), draw(near(2, 4, 10, 12))
    rows = [f"&a0 [{scalar}]"]
    rows += [f"&a{i} [" + ", ".join([f"*a{i - 1}"] * width) + "]" for i in range(1, levels)]
    return "[" + ", ".join(rows) + "]"


@st.composite
def costly_files(draw: st.DrawFn) -> bytes:
    """bob's manifest with one costly value at one place, cut to fit under the cap."""
    good = EXAMPLE.read_text(encoding="utf-8")
    place = draw(st.sampled_from(PLACES)).format(draw(costly_frontmatter()))
    key = place.split(":", 1)[0] + ":"
    text = good.replace("\n" + key, "\nx_was_" + key[:-1] + ":", 1).replace("---\n", f"---\n{place}\n", 1)
    data = text.encode("utf-8")
    return data if len(data) <= CAP else data[: CAP - 4] + b"\n"
