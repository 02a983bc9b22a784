"""Where robot-md 1.10.6 crashes, hangs, leaks or depends on the machine, we
deliberately do better. One row of DIVERGENCES (or one test below it) per row of
docs/parity.md's divergence table: what we answer, and what the reference does with
the same input, checked against the live reference by the heavy tier (it downloads it)."""

from __future__ import annotations

import os
from pathlib import Path
from typing import NamedTuple

import pytest
import reference_worker
from conftest import EXAMPLE, ROOT, install_reference, need, posix_only
from serving import python, run

import robot_md_mcp as rmm

GOOD = EXAMPLE.read_text(encoding="utf-8")


def changed(old: str, new: str) -> bytes:
    return GOOD.replace(old, new, 1).encode()


def legacy_camera_with(drivers: str) -> bytes:
    head, rest = GOOD.split("drivers:\n", 1)
    rest = rest.split("\nbrain:", 1)[1]
    text = head + drivers + "\nbrain:" + rest
    return text.replace("  dof: 6\n", "  dof: 6\n  solver:\n    camera: {mount: world}\n", 1).encode()


class Divergence(NamedTuple):
    data: bytes
    # What robot-md 1.10.6 does: ("crash", the start of its uncaught exception), or a field of its
    # answer and that field's value.
    reference: tuple[str, object]
    code: int  # ours
    says: tuple[str | tuple[str, ...], ...]  # our errors then warnings: each starts so (or with one of these)


def schema_error(data: bytes, crash: str, *errors: str) -> Divergence:
    return Divergence(data, ("crash", crash), 2, errors)


DEEP = "a: " + "[" * 5000 + "]" * 5000 + "\n"
DIVERGENCES = {
    "not UTF-8": Divergence(
        GOOD.encode().replace(b"craigm26", b"cr\xe4igm26", 1),  # a Latin-1 editor's ä
        ("crash", "UnicodeDecodeError"),
        1,
        ("not UTF-8 text (byte 0xe4 at offset 152); save the file as UTF-8",),
    ),
    "physics: 5": schema_error(
        changed("physics:\n", "physics: 5\nx_physics:\n"),
        "AttributeError",
        "schema: physics: 5 is not of type 'object'",
    ),
    "physics: null": schema_error(
        changed("physics:\n", "physics: null\nx_physics:\n"),
        "AttributeError",
        "schema: physics: None is not of type 'object'",
    ),
    "solver: 7": schema_error(
        changed("  dof: 6\n", "  dof: 6\n  solver: 7\n"),
        "AttributeError",
        "schema: physics.solver: 7 is not of type 'object'",
    ),
    "drivers: 5": schema_error(
        legacy_camera_with("drivers: 5"), "TypeError", "schema: drivers: 5 is not of type 'array'"
    ),
    "drivers: [1]": schema_error(
        legacy_camera_with("drivers: [1]"), "AttributeError", "schema: drivers.0: 1 is not of type 'object'"
    ),
    "drivers: [protocol list]": schema_error(
        legacy_camera_with("drivers: [{id: c, protocol: [x]}]"),
        "TypeError",
        "schema: drivers.0.protocol: ['x'] is not of type 'string'",
    ),
    # robot-md sorts errors by path and crashes comparing an int (or date) key with a str one; we rank
    # such parts by type name and keep its order elsewhere.
    "int and str keys": schema_error(
        changed("  dof: 6\n", "  dof: 6\n  poses: {ready: 5, 1: 5}\n"),
        "TypeError: '<' not supported",
        "schema: physics.poses.1: 5 is not of type 'object'",
        "schema: physics.poses.ready: 5 is not of type 'object'",
    ),
    "date and str keys": schema_error(
        changed("capabilities:\n", "capability_contracts: {arm.pick: 2, 2026-01-01: 1}\ncapabilities:\n"),
        "TypeError: '<' not supported",
        "schema: capability_contracts.2026-01-01: 1 is not of type 'object'",
        "schema: capability_contracts.arm.pick: 2 is not of type 'object'",
    ),
    "non-string keys": schema_error(
        changed("capabilities:\n", "extensions: {1: {}, x-ok: {}}\ncapabilities:\n"),
        "TypeError: expected string or bytes-like object",
        "schema: extensions: '1' does not match any of the regexes: '^x-[a-z0-9_-]+$'",
    ),
    "_deprecations: 5": Divergence(
        changed("rcan_version:", "_deprecations: 5\nrcan_version:"),
        ("crash", "TypeError: 'int' object is not iterable"),
        0,
        ("deprecated: 5",),
    ),
    # ...while an iterable one matches the reference, however odd.
    "_deprecations: ab": Divergence(
        changed("rcan_version:", "_deprecations: ab\nrcan_version:"),
        ("warnings", ["deprecated: a", "deprecated: b"]),
        0,
        ("deprecated: a", "deprecated: b"),
    ),
    "BOM": Divergence(b"\xef\xbb\xbf" + GOOD.encode(), ("errors", [rmm.NO_FRONTMATTER]), 0, ()),
    # PyYAML 6.0.3's LibYAML has no nesting limit (robot-md recurses until RecursionError); 6.0.4's
    # refuses at 1,000 flow levels, which both report as a YAML parse error, in one line.
    "5,000 deep": Divergence(
        f"---\n{DEEP}---\n".encode(),
        ("crash or YAML error", "RecursionError"),
        1,
        ((f"frontmatter nested more than {rmm.MAX_DEPTH} levels deep", "frontmatter YAML parse error: "),),
    ),
}


@pytest.mark.parametrize("name", DIVERGENCES)
def test_where_the_reference_fails_we_answer(name: str) -> None:
    row = DIVERGENCES[name]
    got = reference_worker.ours(row.data)
    messages = got["errors"] + got["warnings"]
    assert got["code"] == row.code and len(messages) == len(row.says), got
    for message, says in zip(messages, row.says, strict=True):
        assert message.startswith(says), message
    if name == "BOM":
        assert got == reference_worker.ours(GOOD.encode())


@pytest.fixture(scope="module")
def reference_answers() -> dict[str, dict]:
    return reference_worker.reference_answers({name: row.data for name, row in DIVERGENCES.items()})


@pytest.mark.heavy
@pytest.mark.parametrize("name", DIVERGENCES)
def test_the_reference_really_does_this(name: str, reference_answers: dict[str, dict]) -> None:
    """Each divergence above is from robot-md 1.10.6's real behaviour (run from PyPI)."""
    field, expected = DIVERGENCES[name].reference
    answer = reference_answers[name]
    if field == "crash or YAML error" and "crash" not in answer:
        assert answer["code"] == 1 and answer["errors"][0].startswith("frontmatter YAML parse error: "), (
            answer
        )
    elif field.startswith("crash"):
        assert answer.get("crash", "").startswith(str(expected)), answer
    else:
        assert answer.get(field) == expected, answer


LEGACY = ROOT / "tests" / "corpus" / "rmd__examples-bob@2bb912a.ROBOT.md"


@pytest.mark.heavy
def test_the_reference_leaks_the_internal_marker(tmp_path: Path) -> None:
    """robot-md leaks `_deprecations` into its render; ours is the rest of it, byte for byte (the stored
    answers hold its render without that key, which test_parity.py matches for this corpus file)."""
    path = tmp_path / "ROBOT.md"
    path.write_bytes(LEGACY.read_bytes())
    code = (
        "import sys; from robot_md import parser, render\n"
        "sys.stdout.write(render.render_yaml(parser.parse_file(sys.argv[1])))"
    )
    ref = install_reference()
    need(ref is not None, "the reference, from PyPI")
    done = python(code, path, env={"PYTHONPATH": str(ref)})
    assert done.returncode == 0, done.stderr
    leaked = done.stdout
    assert "_deprecations:\n- physics.solver.camera (singular) is deprecated" in leaked
    rendered = rmm.render(rmm.parse(rmm.decode(LEGACY.read_bytes()).text))
    assert "_deprecations" not in rendered and leaked.startswith(rendered)  # otherwise byte-identical


@pytest.mark.process
@posix_only
def test_utf8_whatever_the_locale(tmp_path: Path) -> None:
    """Under a non-UTF-8 locale robot-md's read_text() fails on a UTF-8 manifest; we do not."""
    path = tmp_path / "ROBOT.md"
    path.write_text(GOOD.replace("craigm26", "cräigm26"), encoding="utf-8")
    env = {
        **os.environ,
        "LC_ALL": "C",
        "LANG": "C",
        "PYTHONUTF8": "0",
        "PYTHONCOERCECLOCALE": "0",
        "PYTHONIOENCODING": "",
    }
    probe = "import locale; print(locale.getpreferredencoding(False))"
    encoding = python(probe, env=env, inherit_env=False).stdout.strip()
    assert encoding.lower() in {"ansi_x3.4-1968", "ascii", "us-ascii"}
    done = run("validate", "--json", path, env=env, inherit_env=False)
    assert done.returncode == 0, done.stderr
    assert '"ok": true' in done.stdout
    rendered = run("render", path, env=env, inherit_env=False)
    assert rendered.returncode == 0 and "manufacturer: cräigm26" in rendered.stdout, rendered.stderr
