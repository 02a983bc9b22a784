"""Generated edge cases for the differential tests against robot-md 1.10.6.

Every case is the exact bytes of a ROBOT.md file, built by mutating one small
valid manifest (the same shape as corpus/mcpts__minimal.ROBOT.md). Categories
group cases by the part of the reference they poke at. `reference_crashes`
holds inputs on which the reference raises an uncaught exception (the `note`
names the exception); every other case must run through it cleanly.
"""

from __future__ import annotations

import re
from dataclasses import dataclass


@dataclass(frozen=True)
class Case:
    id: str
    category: str
    data: bytes
    note: str = ""


NAME = "test-bot"
BOM = "\ufeff"

# The top-level blocks of a minimal valid manifest, in file order.
SECTIONS: dict[str, str] = {
    "rcan_version": 'rcan_version: "3.0"',
    "metadata": f"metadata:\n  robot_name: {NAME}",
    "physics": "physics:\n  type: wheeled\n  dof: 2",
    "drivers": "drivers:\n  - id: wheels\n    protocol: pca9685",
    "safety": "safety:\n  estop:\n    software: true\n    response_ms: 200",
}


def fm(*, extra: str | None = "", **blocks: str | None) -> str:
    """Frontmatter text: the minimal blocks, each keyword replacing one block
    (a string) or dropping it (None); unknown keywords add new blocks; `extra`
    is appended verbatim."""
    out = dict(SECTIONS)
    for key, value in blocks.items():
        if value is None:
            out.pop(key, None)
        else:
            out[key] = value
    text = "\n".join(out.values())
    if extra:
        text += "\n" + extra
    return text


def named(yaml_name: str, **blocks: str | None) -> str:
    """Frontmatter whose metadata.robot_name is `yaml_name` (YAML source text)."""
    return fm(metadata=f"metadata:\n  robot_name: {yaml_name}", **blocks)


def body(name: str = NAME, *, extra: str = "", **replaced: str | None) -> str:
    """Markdown body with the four required parts (h1, identity, what, safety); a keyword replaces one (a
    string) or drops it (None)."""
    parts = {
        "h1": f"# {name}",
        "identity": "## Identity\nMinimal test robot.",
        "what": f"## What {name} Can Do\nMove forward.",
        "safety": "## Safety Gates\nSoftware E-stop at 200ms.",
    }
    assert set(replaced) <= set(parts), replaced
    text = "\n\n".join(p for p in {**parts, **replaced}.values() if p is not None)
    if extra:
        text += "\n\n" + extra
    return text


def text(front: str | None = None, prose: str | None = None, *, open: str = "---", close: str = "---") -> str:
    """A whole ROBOT.md file as text (LF newlines, trailing newline)."""
    front = fm() if front is None else front
    prose = body() if prose is None else prose
    return f"{open}\n{front}\n{close}\n\n{prose}\n"


DEPTHAI = "drivers:\n  - id: cam\n    protocol: depthai"
INTRINSIC = "{fx: 600, fy: 600, cx: 320, cy: 240, width: 640, height: 480}"
RGB = "\n    streams:\n      rgb:\n        intrinsic: "  # after DEPTHAI: its rgb stream's intrinsic
# $NAME in a table row stands for this text
MACROS = {
    "DEPTHAI": DEPTHAI,
    "RGB": RGB,
    "INTRINSIC": INTRINSIC,
    "ONES": "{fx: 1, fy: 1, cx: 0, cy: 0, width: 1, height: 1",
    "ESTOP": "\n  estop:\n    software: true\n    response_ms: 200",
    "CAMERA": "physics:\n  type: arm\n  dof: 6\n  solver:\n    camera: {}",
}


def blocks(table: str) -> None:
    """Cases of the category C, one a line, `slug | blocks | their YAML | note`: the minimal manifest with
    each block named (`physics+drivers`: several, their YAML joined by ` + `) in place of its own. In the
    YAML, `\\n` is a line end, `\\t` a tab, `$NAME` the text MACROS holds; a line indented four spaces
    continues the row above."""
    for row in table.strip("\n").replace("\n    ", "").split("\n"):
        slug, names, yaml, *note = re.split(r" ?\| ", row)
        for name, value in MACROS.items():
            yaml = yaml.replace(f"${name}", value)
        parts = re.split(r" ?\+ ", yaml.replace("\\n", "\n").replace("\\t", "\t"))
        add(C, slug, text(fm(**dict(zip(names.split("+"), parts, strict=True)))), *note)


CASES: list[Case] = []
_ID = re.compile(r"^[A-Za-z0-9_.-]+$")


def add(category: str, slug: str, data: bytes | str, note: str = "") -> None:
    case_id = f"{category}-{slug}"
    assert _ID.match(case_id), case_id
    if isinstance(data, str):
        data = data.encode("utf-8")
    CASES.append(Case(case_id, category, data, note))


VALID = text()

# --------------------------------------------------------------------------- bom_newlines
C = "bom_newlines"
add(C, "bom", BOM + VALID, "robot-md: no frontmatter")
add(C, "bom-crlf", (BOM + VALID).replace("\n", "\r\n"))
add(C, "bom-schema-invalid", BOM + text(fm(rcan_version='rcan_version: "2.0"')))
add(C, "bom-twice", BOM + BOM + VALID, "the ~nobom variant still starts with a BOM")
add(C, "crlf", VALID.replace("\n", "\r\n"))
add(C, "cr-only", VALID.replace("\n", "\r"))
add(C, "mixed-newlines", VALID.replace("\n", "\r\n", 6).replace("\n\n## Identity", "\r\r## Identity"))
add(C, "no-trailing-newline", VALID.rstrip("\n"))
add(C, "leading-blank-lines", "\n\n\n" + VALID)
add(C, "leading-whitespace-lines", "  \t\n \n" + VALID)
add(C, "leading-spaces-same-line", "   " + VALID)
add(C, "leading-tab", "\t" + VALID)
add(C, "trailing-whitespace", VALID + "\n\n   \n\t\n")
add(C, "crlf-yaml-error", text(fm(extra="bad: [1, 2")).replace("\n", "\r\n"), "line numbers after CRLF→LF")
add(C, "cr-yaml-error", text(fm(extra="bad: [1, 2")).replace("\n", "\r"))
add(C, "bom-in-body", text(prose=BOM + body()), "U+FEFF before '# name' hides the H1")
add(
    C, "line-separator-in-body", text(prose=body(h1=f"# {NAME}\u2028more")), "U+2028 is not a line end for re"
)
add(C, "nel-in-yaml", text(named(f"{NAME}\u0085  version: x")), "NEL is a YAML 1.1 line break")
add(C, "form-feed-in-yaml", text(fm(extra="x: \x0c")), "control character rejected by LibYAML")
add(C, "form-feed-in-body", text(prose=body(extra="page\x0cbreak")))
add(C, "nbsp-after-delimiter", text(open="---\u00a0"), "\\s matches NBSP")
add(C, "empty-file", b"")
add(C, "whitespace-only", " \n\t\r\n")

# --------------------------------------------------------------------------- delimiters
C = "delimiters"
add(C, "four-dashes", text(open="----", close="----"))
add(C, "long-dashes", text(open="-" * 20, close="-----"))
add(C, "trailing-spaces", text(open="---   ", close="---  "))
add(C, "tab-after", text(open="---\t", close="---\t "))
add(C, "text-after-open", text(open="--- x"), "no handler detected → empty")
add(C, "text-after-close", text(close="--- end"), "only one delimiter → empty")
add(C, "two-dashes", text(open="--"))
add(C, "plus-toml", text(open="+++", close="+++"))
add(C, "missing-close", f"---\n{fm()}\n\n{body()}\n")
add(C, "missing-close-hr-in-body", f"---\n{fm()}\n\n{body(extra='---')}\n", "body parsed as YAML")
add(C, "indented-close", text(close="  ---"))
add(C, "blank-after-open", text(open="---\n\n\n"))
add(
    C,
    "blank-after-open-yaml-error",
    text(fm(rcan_version="rcan_version: [3.0"), open="---\n\n  \n\t\n"),
    "blank lines swallowed by the delimiter regex",
)
blocks(r"""
no-blank-yaml-error | rcan_version | rcan_version: [3.0 | compare line numbers
blank-before-close-yaml-error | extra | bad: [\n\n\n
""")
add(C, "blank-after-close", text(close="---\n\n\n\n"))
add(C, "no-blank-before-body", f"---\n{fm()}\n---\n{body()}\n")
add(C, "third-delimiter-in-body", text(prose=body(extra="---\n\nmore: text\n---")))
add(C, "body-starts-with-delimiter", text(prose="---\n" + body()))
blocks(r"""
yaml-end-marker | extra | ...
yaml-end-marker-then-more | extra | ...\nfoo: 1
yaml-doc-start-with-content | extra | --- a: 1
""")
add(C, "yaml-directive", text("%YAML 1.1\n" + fm()))
add(C, "only-delimiter", "---\n")
add(C, "open-close-adjacent-body", "---\n---\n# x\n")

# --------------------------------------------------------------------------- empty_list_scalar
C = "empty_list_scalar"
add(C, "empty-frontmatter", text(""))
add(C, "blank-frontmatter", text("\n\n  \n"))
add(C, "only-comments", text("# just a comment\n# another"))
add(C, "yaml-list", text("- a\n- b"))
add(C, "yaml-list-of-mappings", text("- rcan_version: '3.0'\n- metadata: {}"))
add(C, "scalar", text("hello"))
add(C, "scalar-number", text("42"))
add(C, "null", text("~"))
add(C, "false", text("false"))
add(C, "empty-flow-mapping", text("{}"))
add(C, "empty-flow-sequence", text("[]"))
add(
    C,
    "json-flow-mapping",
    text(
        '{"rcan_version": "3.0", "metadata": {"robot_name": "test-bot"},\n'
        ' "physics": {"type": "wheeled", "dof": 2},\n'
        ' "drivers": [{"id": "wheels", "protocol": "pca9685"}],\n'
        ' "safety": {"estop": {"software": true, "response_ms": 200}}}'
    ),
)
blocks(r"""
key-content | extra | content: hello | Post(**metadata) TypeError
key-handler | extra | handler: yaml
key-self | extra | self: me
key-int | extra | 1: x | keywords must be strings
key-bool | extra | true: x
key-date | extra | 2026-01-01: x
key-null | extra | ~: x
key-float | extra | 3.0: x
key-empty-string | extra | "": x | valid: '' is a legal keyword
key-complex | extra | ? [a, b]\n: x | unhashable key
""")
add(C, "no-frontmatter-body-only", body() + "\n")

# --------------------------------------------------------------------------- headings
C = "headings"
add(C, "h1-uppercase", text(prose=body(h1="# TEST-BOT")))
add(C, "h1-mixed-case", text(prose=body(h1="# Test-Bot")))
add(C, "h1-double-space", text(prose=body(h1=f"#  {NAME}")))
add(C, "h1-no-space", text(prose=body(h1=f"#{NAME}")))
add(C, "h1-leading-space", text(prose=body(h1=f" # {NAME}")), "first body line: stripped away")
add(C, "h1-leading-space-not-first", text(prose=body(h1=None, extra=f" # {NAME}")))
add(C, "h1-closing-hashes", text(prose=body(h1=f"# {NAME} #")))
add(C, "h1-trailing-spaces", text(prose=body(h1=f"# {NAME}   \t")))
add(C, "h1-suffix", text(prose=body(h1=f"# {NAME} robot")))
add(C, "h1-not-first", text(prose=body(h1=None, extra=f"# {NAME}")))
add(C, "h1-in-code-fence", text(prose=body(h1=f"```\n# {NAME}\n```")), "regex sees it anyway")
add(C, "h1-only-in-frontmatter-comment", text(fm(extra=f"# {NAME}"), body(h1=None)))
add(C, "h1-setext", text(prose=body(h1=f"{NAME}\n========")))
add(C, "identity-lowercase", text(prose=body(identity="## identity\nx")))
add(C, "identity-h3", text(prose=body(identity="### Identity\nx")), "substring match")
add(C, "identity-inline", text(prose=body(identity="See ## Identityless prose.")))
add(C, "identity-setext", text(prose=body(identity="Identity\n--------")))
add(C, "safety-missing", text(prose=body(safety=None)))
add(C, "safety-lowercase", text(prose=body(safety="## Safety gates")))
add(C, "safety-in-code-fence", text(prose=body(safety="```\n## Safety Gates\n```")))
add(C, "what-case", text(prose=body(what=f"## WHAT {NAME.upper()} can do")))
add(C, "what-trailing-spaces", text(prose=body(what=f"## What {NAME} Can Do   ")))
add(C, "what-missing", text(prose=body(what=None)))
add(C, "what-double-space", text(prose=body(what=f"## What  {NAME} Can Do")))
add(C, "what-punctuation", text(prose=body(what=f"## What {NAME} Can Do!")))
add(C, "what-h3", text(prose=body(what=f"### What {NAME} Can Do")))
add(C, "all-missing", text(prose=""))
add(C, "all-missing-prose", text(prose="Just some words."))
add(C, "h1-nbsp-trailing", text(prose=body(h1=f"# {NAME}\u00a0")))

# --------------------------------------------------------------------------- yaml11
C = "yaml11"
blocks(r"""
yes-on-booleans | safety | safety:\n  p66_enabled: yes\n  loa_enforcement: On
    \n  estop:\n    software: YES\n    hardware: off\n    response_ms: 200
software-no | safety | safety:\n  estop:\n    software: no\n    response_ms: 200
""")
add(C, "robot-name-yes", text(named("yes"), body("yes")))
add(C, "robot-name-y", text(named("y"), body("y")), "y is a string in YAML 1.1 (PyYAML)")
add(C, "robot-name-null", text(named("~")))
add(C, "date-in-version", text(named(f"{NAME}\n  version: 2026-04-17")))
add(C, "timestamp-utc", text(named(f"{NAME}\n  version: 2026-04-17T10:00:00Z")))
add(C, "timestamp-offset", text(named(f"{NAME}\n  version: 2026-04-17T10:00:00.5+02:00")))
add(C, "timestamp-naive-space", text(named(f"{NAME}\n  version: 2026-04-17 10:00:00")))
add(C, "date-as-robot-name", text(named("2026-04-17"), body("2026-04-17")))
blocks(r"""
date-in-unknown-key | extra | released: 2026-04-17\nx-ts: 2026-04-17T10:00:00Z | valid; render
date-in-learned-skills | extra | learned_skills:\n  - id: pick\n    recorded_at: 2026-04-17
rcan-version-float | rcan_version | rcan_version: 3.0
rcan-version-float-3-10 | rcan_version | rcan_version: 3.10
rcan-version-str-tag | rcan_version | rcan_version: !!str 3.0
rcan-version-int | rcan_version | rcan_version: 3
sexagesimal-dof | physics | physics:\n  type: wheeled\n  dof: 1:20
sexagesimal-response | safety | safety:\n  estop:\n    software: true\n    response_ms: 3:20
sexagesimal-float | extra | x-time: 1:20.5
octal-017 | physics | physics:\n  type: wheeled\n  dof: 017
octal-0o17 | physics | physics:\n  type: wheeled\n  dof: 0o17 | 0o is not YAML 1.1
hex-and-underscores | physics+safety | physics:\n  type: wheeled\n  dof: 0x1_0
    + safety:\n  estop:\n    software: true\n    response_ms: 1_000
binary-int | physics | physics:\n  type: wheeled\n  dof: 0b110
anchors-aliases | drivers+extra | drivers:\n  - &w {id: wheels, protocol: pca9685}
    + x-copy: *w\nx-again: *w | render emits &id001
merge-key | safety | defaults: &d {software: true, response_ms: 200}\n
    safety:\n  estop:\n    <<: *d\n    hardware: true
merge-key-list | safety | a: &a {software: true}\nb: &b {response_ms: 5}\n
    safety:\n  estop:\n    <<: [*a, *b]\n    response_ms: 9
merge-key-override-invalid | safety | d: &d {software: true, response_ms: 200}\n
    safety:\n  estop:\n    <<: *d\n    software: false
recursive-alias | extra | x-loop: &r [1, *r]
recursive-alias-in-capabilities | extra | capabilities: &r [*r]
duplicate-key | metadata | metadata:\n  robot_name: first\n  robot_name: test-bot | last wins
duplicate-top-level | extra | physics:\n  type: legged\n  dof: 12
binary-tag | metadata | metadata:\n  robot_name: test-bot\n  model: !!binary aGVsbG8=
binary-tag-unknown-key | extra | x-blob: !!binary aGVsbG8gd29ybGQ=
set-tag-single | extra | capabilities: !!set {arm.pick}
set-tag-unknown-key | extra | x-set: !!set {only}
omap-pairs | extra | x-o: !!omap [a: 1, b: 2]\nx-p: !!pairs [a: 1, a: 2]
nan-payload | safety | safety:\n  payload_kg: .nan$ESTOP | nan passes min/max
inf-payload | safety | safety:\n  payload_kg: .inf$ESTOP
neg-inf-velocity | safety | safety:\n  max_linear_velocity_ms: -.inf$ESTOP
explicit-tags | physics+extra | physics:\n  type: !!str wheeled\n  dof: !!int "2"
    + x-f: !!float 1\nx-n: !!null ''\nx-b: !!bool yes
float-exponent | extra | x-e: 1.0e+3\nx-s: 1e3
value-tag-equals | extra | x: = | '=' resolves to the unconstructable value tag
err-unclosed-flow-seq | extra | capabilities: [arm.pick, arm.place
err-unclosed-flow-map | extra | x: {a: 1
err-bad-indentation | physics | physics:\n  type: wheeled\n   dof: 2
err-bad-dedent | physics | physics:\n    type: wheeled\n  dof: 2
err-tab-indent | physics | physics:\n\ttype: wheeled\n\tdof: 2
err-unknown-python-tag | extra | x: !python/object:os.system 1
err-unknown-local-tag | extra | x: !custom 1
err-unclosed-quote | metadata | metadata:\n  robot_name: "test-bot
err-mapping-values | metadata | metadata:\n  robot_name: a: b
err-undefined-alias | extra | x: *nope
err-block-then-scalar | extra | just a line
""")

# --------------------------------------------------------------------------- unicode
C = "unicode"


def uname(yaml_name: str, prose_name: str | None = None, slug: str = "", note: str = "") -> None:
    real = yaml_name.strip('"')
    add(C, slug, text(named(yaml_name), body(prose_name if prose_name is not None else real)), note)


uname("ロボット", slug="japanese")
uname("Ünïcödé-bot", "ÜNÏCÖDÉ-BOT", slug="latin-accents-upper")
uname("bot-🤖", slug="emoji-name")
uname("רובוט", slug="hebrew-rtl")
uname("روبوت\u200f", slug="arabic-rlm")
uname("José", "Jose\u0301", slug="combining-vs-precomposed", note="no NFC normalisation")
uname("Jose\u0301", slug="combining-both")
uname("straße", "STRASSE", slug="sharp-s-fold", note="re has no full case folding")
uname("straße", "STRAẞE", slug="capital-sharp-s")
uname("kelvin", "\u212aelvin", slug="kelvin-sign")
uname("sun", "\u017fun", slug="long-s")
uname("σοφιας", "ΣΟΦΙΑΣ", slug="greek-final-sigma")
uname("İstanbul", "istanbul", slug="turkish-dotted-i")
uname("ırmak", "IRMAK", slug="turkish-dotless-i")
uname('"caf\\u00e9"', "café", slug="yaml-escape")
uname("🤖" * 64, slug="emoji-64")
uname("🤖" * 65, slug="emoji-65")
uname("bot\u200b", "bot", slug="zero-width-space")
uname('"bot\u00a0one"', "bot one", slug="nbsp-vs-space")
add(C, "emoji-prose", text(prose=body(identity="## Identity\nI am 🤖 — “quoted” ✓ 😀👩‍👩‍👧")))
add(C, "rtl-prose", text(prose=body(extra="שלום עולם مرحبا بالعالم \u202eevil\u202c")))
add(C, "unicode-keys-render", text(fm(extra="ключ: значение\n描述: 机器人\nx-emoji: 🤖")))
add(
    C,
    "long-unicode-render",
    text(named(f"{NAME}\n  description: " + "ünïcödé wörds " * 12)),
    "render wraps at 80 columns",
)

# --------------------------------------------------------------------------- robot_name
C = "robot_name"


# slug | the name as YAML | the name in the prose, if another | note (a slug alone: in SPELLED_OUT)
ROBOT_NAMES = r"""
dot | a.b
dot-not-wildcard | a.b | axb | re.escape: '.' is literal
plus | a+b
parens | "(x)" | (x)
brackets | "[x]" | [x]
star | "a*" | a*
star-empty | "a*" |  | '# ' must not match 'a*'
pipe | "a|b" | a|b
pipe-alternative | "a|b" | b
caret-dollar | "^$" | ^$
backslash | "a\\b" | a\b
backslash-digit | "x\\1" | x\1
spaces | my robot
trailing-space
trailing-space-trimmed-h1 | "bot " | bot
newline-in-name
len-64 | nnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnn
len-65 | nnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnn
empty
percent | 100%
slash | a/b
braces | "{x}" | {x}
question | "a?" | a?
hash | "#1" | #1
quote | it's
int | 123
exp-string | 1e3 | 1e3 | PyYAML: no float without a dot
exp-float | 1.0e+3
bool-true | true
list | [a] | a
mapping | {a: b} | a
name-can-do | "Can Do" | Can Do
"""
SPELLED_OUT = {
    "trailing-space": ('"bot "', "bot ", ""),
    "newline-in-name": ('"a\\nb"', "a\nb", "escaped newline spans two body lines"),
    "empty": ('""', "", ""),
}
for row in ROBOT_NAMES.strip("\n").split("\n"):
    slug, *given = row.split(" | ")
    yaml_name, prose_name, note = SPELLED_OUT.get(slug) or (*given, *[given[0], ""][len(given) - 1 :])
    add(C, slug, text(named(yaml_name), body(prose_name)), note)


# --------------------------------------------------------------------------- required_fields
C = "required_fields"
for key in SECTIONS:
    add(C, f"missing-{key.replace('_', '-')}", text(fm(**{key: None})))
blocks(r"""
missing-robot-name | metadata | metadata:\n  model: x
empty-metadata | metadata | metadata: {}
missing-physics-type | physics | physics:\n  dof: 2
missing-physics-dof | physics | physics:\n  type: wheeled
empty-physics | physics | physics: {}
missing-estop | safety | safety:\n  p66_enabled: true
missing-estop-fields | safety | safety:\n  estop: {}
empty-drivers | drivers | drivers: []
driver-missing-id-protocol | drivers | drivers:\n  - port: /dev/x
mistyped-rcan-version | rcan_version | rcan_version: [3]
mistyped-rcan-pattern | rcan_version | rcan_version: "2.0"
mistyped-metadata | metadata | metadata: [robot_name]
mistyped-metadata-null | metadata | metadata:
mistyped-physics-type | physics | physics:\n  type: drone\n  dof: 2
mistyped-drivers | drivers | drivers: {id: wheels, protocol: pca9685}
mistyped-safety | safety | safety: safe
mistyped-estop-software | safety | safety:\n  estop:\n    software: false\n    response_ms: 9000
""")
add(C, "all-missing", text("x: 1"))
add(
    C,
    "several-sorted",
    text(
        fm(
            rcan_version=None,
            physics="physics:\n  type: drone\n  dof: -1",
            drivers="drivers:\n  - id: 1\n  - protocol: 2",
            safety="safety:\n  estop: {software: false}",
            extra="capabilities: [Bad, 1]\nnetwork: {port: 0}",
        )
    ),
    "errors sorted by path",
)
blocks(r"""
several-nested-sorted | metadata | metadata:\n  robot_name: ""\n  rrn: RRN-1\n  rcn_ids: [x, x]\n  rmn: 5
    | uniqueItems at rcn_ids sorts before rcn_ids.0
""")

# --------------------------------------------------------------------------- dof
C = "dof"


def dof(slug: str, value: str, note: str = "") -> None:
    add(C, slug, text(fm(physics=f"physics:\n  type: wheeled\n  dof: {value}")), note)


dof("float-2", "2.0", "2.0 passes 'integer'; summary says 2.0")
dof("float-2-5", "2.5")
dof("bool-true", "true", "bool is not an integer for jsonschema")
dof("bool-false", "false")
dof("string-6", '"6"')
dof("negative", "-1")
dof("max-64", "64")
dof("over-65", "65")
dof("zero", "0")
dof("null", "~")
dof("inf", ".inf", "two errors at one path")
dof("big-float", "65.5")
dof("list", "[2]")

# --------------------------------------------------------------------------- capabilities
C = "capabilities"
add(C, "absent", VALID)
blocks(r"""
empty-list | extra | capabilities: []
null | extra | capabilities: ~
three | extra | capabilities: [arm.pick, arm.place, status.report]
mismatch-depthai | drivers+extra | $DEPTHAI + capabilities: [arm.pick] | namespace mismatch warning
mismatch-two-namespaces | drivers+extra | $DEPTHAI + capabilities: [nav.go, arm.pick, move.x, vision.see]
mismatch-ros2 | drivers+extra | drivers:\n  - id: base\n    protocol: ros2_control
    + capabilities: [move.forward]
mismatch-two-drivers | drivers+extra | $DEPTHAI\n  - id: arm\n    protocol: feetech_depthai
    + capabilities: [nav.go]
match-feetech | drivers+extra | drivers:\n  - id: arm\n    protocol: feetech + capabilities: [arm.pick]
unknown-protocol-no-warning | drivers+extra | drivers:\n  - id: x\n    protocol: custom
    + capabilities: [arm.pick]
non-motion-namespace | drivers+extra | $DEPTHAI + capabilities: [perceive.look, status.report]
""")
with_caps = fm(drivers=DEPTHAI, extra="capabilities: [arm.pick]")
add(C, "mismatch-with-body-error", text(with_caps, body(what=None)), "warnings survive code 4")
blocks(r"""
dict | extra | capabilities: {arm.pick: true}
string | extra | capabilities: arm.pick
numbers | extra | capabilities: [1, 2.5]
bad-pattern | extra | capabilities: [Arm.Pick, arm, arm.pick.fast.too, a-b.c_d]
three-part | extra | capabilities: [arm.pick.fast]
duplicates | extra | capabilities: [arm.pick, arm.pick]
""")

# --------------------------------------------------------------------------- legacy_camera
C = "legacy_camera"


def physics_with(solver: str) -> str:
    return "physics:\n  type: arm\n  dof: 6\n  solver:\n" + "\n".join(
        "    " + line for line in solver.splitlines()
    )


def legacy(
    slug: str,
    camera: str = "camera:\n  mount: tool0\n  extrinsic: [0, 0, 0, 0, 0, 0]",
    drivers: str | None = DEPTHAI,
    extra: str = "",
    prose: str | None = None,
    note: str = "",
) -> None:
    blocks: dict[str, str | None] = {"physics": physics_with(camera)}
    if drivers is not None:
        blocks["drivers"] = drivers
    add(C, slug, text(fm(extra=extra, **blocks), prose), note)


legacy("mount-extrinsic-depthai", note="upgraded; null-intrinsic + deprecated warnings")
legacy("bare-mapping", "camera: {}")
legacy("mount-only", "camera:\n  mount: link_3")
for proto in ("realsense", "v4l2", "zed", "uvc"):
    legacy(f"protocol-{proto}", drivers=SECTIONS["drivers"] + f"\n  - id: eye\n    protocol: {proto}")
legacy(
    "first-camera-driver-wins", drivers="drivers:\n  - id: a\n    protocol: uvc\n  - id: b\n    protocol: zed"
)
legacy("no-camera-driver", drivers=None, note="driver_id 'camera' → cross-ref error")
legacy("driver-named-camera", drivers="drivers:\n  - id: camera\n    protocol: usb")
legacy("camera-driver-without-id", drivers="drivers:\n  - protocol: depthai\n  - id: camera\n    protocol: x")
legacy(
    "camera-driver-empty-id",
    drivers="drivers:\n  - id: ''\n    protocol: depthai\n  - id: w\n    protocol: x",
)
legacy("with-intrinsic", drivers=DEPTHAI + RGB + "{fx: 1, fy: 1, cx: 0, cy: 0, width: 640, height: 480}")
legacy("with-derived-from", drivers=DEPTHAI + "\n    streams:\n      rgb:\n        derived_from: [left]")
legacy(
    "stream-other-than-rgb", drivers=DEPTHAI + "\n    streams:\n      depth:\n        derived_from: [left]"
)
legacy("camera-scalar", "camera: 5")
legacy("camera-null", "camera:")
legacy("camera-list", "camera: [tool0]")
legacy("bad-mount", "camera:\n  mount: base")
legacy("int-mount", "camera:\n  mount: 5")
legacy("short-extrinsic", "camera:\n  extrinsic: [1, 2]")
legacy(
    "replaces-cameras",
    "camera: {mount: world}\ncameras:\n  - driver_id: zzz\n    primary_stream: ir\n    mount: world",
)
legacy("with-body-error", prose=body(safety=None), note="code 4 keeps null-intrinsic, drops deprecated")
legacy("user-deprecations-list", extra="_deprecations: [old thing]")
legacy("user-deprecations-empty", extra="_deprecations: []")
blocks(r"""
user-deprecations-only | extra | _deprecations:\n  - first\n  - 2 | no legacy camera
user-deprecations-string | extra | _deprecations: ab | iterates characters
user-deprecations-mapping | extra | _deprecations: {k: v}
user-deprecations-zero | extra | _deprecations: 0 | falsy: ignored
user-deprecations-null | extra | _deprecations:
""")
add(C, "user-deprecations-schema-error", text(fm(rcan_version=None, extra="_deprecations: 5")))

# --------------------------------------------------------------------------- unknown_keys
C = "unknown_keys"
blocks(r"""
top-level | extra | foo: bar\nzzz: [1, 2]
x-prefixed | extra | x-vendor:\n  a: 1
nested-open | metadata+safety | metadata:\n  robot_name: test-bot\n  nickname: bobby
    + safety:\n  estop:\n    software: true\n    response_ms: 200\n    extra: 1
extensions-ok | extra | extensions:\n  x-foo: {a: 1}\n  x-bar_9: {}
extensions-unprefixed | extra | extensions:\n  foo: {}
extensions-uppercase | extra | extensions:\n  X-Foo: {}\n  x-Bar: {}
extensions-not-object | extra | extensions:\n  x-foo: 5
camera-item-extra | physics+drivers | physics:\n  type: arm\n  dof: 6\n  solver:\n    cameras:
    \n      - driver_id: cam\n        primary_stream: rgb\n        mount: world
    \n        fov: 90\n        zoom: 2 + $DEPTHAI
stream-extra | drivers | $DEPTHAI$RGB~\n        fps: 30
stream-name | drivers | $DEPTHAI\n    streams:\n      color: {}
intrinsic-extra | drivers | $DEPTHAI$RGB$ONES, skew: 0}
intrinsic-plumb-bob | drivers | $DEPTHAI$RGB$ONES, distortion_model: plumb_bob}
""")
SPATIAL = (
    "spatial-eval:\n  spec_version: 1.0.0\n  units: [O1]\n  workspace:\n    play_surface_dims_m: [1, 1]\n"
    "    judge_camera: {device: /dev/video0, resolution: [640, 480]}\n"
    "  reasoning_stack: {baseline: 'claude:a', declared: 'claude:b'}"
)
add(C, "spatial-eval-ok", text(fm(extra=SPATIAL)))
add(
    C,
    "spatial-eval-extra",
    text(fm(extra=SPATIAL.replace("units: [O1]", "units: [O1]\n  bonus: 1\n  alpha: 2"))),
)
add(C, "spatial-eval-nested-extra", text(fm(extra=SPATIAL.replace("resolution:", "fps: 30, resolution:"))))
add(C, "spatial-eval-empty", text(fm(extra="spatial-eval: {}")))
blocks(r"""
non-string-nested-key | physics+drivers | physics:\n  type: arm\n  dof: 6\n  solver:\n    cameras:
    \n      - driver_id: cam\n        primary_stream: rgb\n        mount: world\n        1: x + $DEPTHAI
compliance-fria-gate | extra | compliance:\n  annex_iii_basis: education\n  fria_ref: not a uri
""")

# --------------------------------------------------------------------------- cross_ref
C = "cross_ref"


def cams(
    slug: str,
    cameras: str,
    drivers: str = DEPTHAI,
    capabilities: str = "",
    prose: str | None = None,
    note: str = "",
) -> None:
    extra = f"capabilities: {capabilities}" if capabilities else ""
    front = fm(physics=physics_with("cameras:\n" + cameras), drivers=drivers, extra=extra)
    add(C, slug, text(front, prose), note)


def cam(driver_id: str, stream: str = "rgb") -> str:
    return f"  - driver_id: {driver_id}\n    primary_stream: {stream}\n    mount: world\n"


cams("match-null-intrinsic", cam("cam"), note="warning")
cams("mismatch", cam("nope"))
cams("second-mismatch", cam("cam") + cam("ghost", "depth"))
cams("both-mismatch", cam("ghost1") + cam("ghost2"))
cams("mismatch-with-body-error", cam("nope"), prose=body(h1=None), note="stops at cross-ref")
cams("match-intrinsic", cam("cam"), DEPTHAI + RGB + INTRINSIC)
cams(
    "match-derived-from",
    cam("cam", "depth"),
    DEPTHAI + "\n    streams:\n      depth:\n        derived_from: [left, right]",
)
cams("null-intrinsic-explicit", cam("cam"), DEPTHAI + RGB + "~")
cams("null-intrinsic-with-derived", cam("cam"), DEPTHAI + RGB + "~\n        derived_from: [left]")
cams("stream-not-declared", cam("cam", "ir"), DEPTHAI + RGB + INTRINSIC)
cams("empty-driver-id", cam("''"), note="falsy driver_id skips cross-ref, still warns")
cams("two-cameras-warnings", cam("cam") + cam("cam", "left"))
cams(
    "duplicate-driver-ids",
    cam("cam"),
    DEPTHAI + RGB + INTRINSIC + "\n  - id: cam\n    protocol: uvc",
    note="last driver wins",
)
cams("warning-and-mismatch-warning", cam("cam"), capabilities="[arm.pick]")
cams("empty-cameras", "  []")
cams("camera-missing-fields", "  - driver_id: cam\n")
cams(
    "intrinsic-bad-values",
    cam("cam"),
    DEPTHAI + RGB + "{fx: 0, fy: -1, cx: 0, cy: 0, width: 0, height: 1.5}",
)
cams("quote-in-driver-id", cam('"it\'s"'))

# --------------------------------------------------------------------------- reference_crashes
C = "reference_crashes"
add(C, "latin1-e-acute", VALID.replace("Minimal", "Minimal é").encode("latin-1"), "UnicodeDecodeError")
add(C, "lone-0xff", VALID.encode() + b"\xff\n", "UnicodeDecodeError")
add(
    C,
    "latin1-in-frontmatter",
    text(named("Jos\u00e9"), body("Jos\u00e9")).encode("latin-1"),
    "UnicodeDecodeError",
)
blocks(r"""
physics-int | physics | physics: 5 | AttributeError
physics-null | physics | physics: | AttributeError
physics-list | physics | physics: [wheeled] | AttributeError
physics-string | physics | physics: wheeled | AttributeError
solver-int | physics | physics:\n  type: arm\n  dof: 6\n  solver: 5 | AttributeError
solver-null | physics | physics:\n  type: arm\n  dof: 6\n  solver: | AttributeError
legacy-drivers-int | physics+drivers | $CAMERA + drivers: 5 | TypeError
legacy-drivers-int-list | physics+drivers | $CAMERA + drivers: [1] | AttributeError
legacy-drivers-string | physics+drivers | $CAMERA + drivers: abc | AttributeError
legacy-user-deprecations-string | physics+drivers+extra | $CAMERA + $DEPTHAI + _deprecations: old
    | AttributeError
legacy-user-deprecations-int | physics+drivers+extra | $CAMERA + $DEPTHAI + _deprecations: 5 | AttributeError
user-deprecations-int | extra | _deprecations: 5 | TypeError
user-deprecations-true | extra | _deprecations: true | TypeError
sort-poses-int-and-str | physics | physics:\n  type: arm\n  dof: 6\n  poses: {1: 5, ready: 5} | TypeError
sort-task-routing-int-and-str | extra | brain:\n  task_routing: {1: 2, a: 3} | TypeError
sort-contracts-date-and-str | extra | capability_contracts: {2026-01-01: 1, arm.pick: 2} | TypeError
extensions-int-key | extra | extensions: {1: {}} | TypeError
""")
