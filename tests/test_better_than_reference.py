"""Where robot-md 1.10.6 crashes, hangs, leaks or depends on the machine, we
deliberately do better. One test per row of docs/parity.md's divergence table; where
it is safe to run, the reference's own behaviour on the same input is shown too,
by the heavy tier (it downloads the reference): see REFERENCE."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
import stored_reference
from conftest import EXAMPLE, ROOT, install_reference, need, posix_only, run_reference
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


NON_UTF8 = GOOD.encode().replace(b"craigm26", b"cr\xe4igm26", 1)  # a Latin-1 editor's ä
PHYSICS = {
    "physics-int": (
        changed("physics:\n", "physics: 5\nx_physics:\n"),
        "schema: physics: 5 is not of type 'object'",
    ),
    "physics-null": (
        changed("physics:\n", "physics: null\nx_physics:\n"),
        "schema: physics: None is not of type",
    ),
    "solver-int": (
        changed("  dof: 6\n", "  dof: 6\n  solver: 7\n"),
        "schema: physics.solver: 7 is not of type",
    ),
}
DRIVERS = ["drivers: 5", "drivers: [1]", "drivers: [{id: c, protocol: [x]}]"]
MIXED = {
    "int-and-str": (
        changed("  dof: 6\n", "  dof: 6\n  poses: {ready: 5, 1: 5}\n"),
        [
            "schema: physics.poses.1: 5 is not of type 'object'",
            "schema: physics.poses.ready: 5 is not of type 'object'",
        ],
    ),
    "date-and-str": (
        changed("capabilities:\n", "capability_contracts: {arm.pick: 2, 2026-01-01: 1}\ncapabilities:\n"),
        [
            "schema: capability_contracts.2026-01-01: 1 is not of type 'object'",
            "schema: capability_contracts.arm.pick: 2 is not of type 'object'",
        ],
    ),
}
NON_STRING_KEYS = changed("capabilities:\n", "extensions: {1: {}, x-ok: {}}\ncapabilities:\n")
DEPRECATIONS_INT = changed("rcan_version:", "_deprecations: 5\nrcan_version:")
DEPRECATIONS_STR = changed("rcan_version:", "_deprecations: ab\nrcan_version:")
BOM_GOOD = b"\xef\xbb\xbf" + GOOD.encode()
DEEP = "a: " + "[" * 5000 + "]" * 5000 + "\n"

# What robot-md 1.10.6 does with each input above, checked against the live reference in the
# heavy tier: (what the reference answers, which field, expected) where "crash" means its
# uncaught exception starts with the expected text, and any other field must equal it.
REFERENCE: dict[str, tuple[bytes, str, object]] = {
    "non-utf8": (NON_UTF8, "crash", "UnicodeDecodeError"),
    **{f"physics:{k}": (data, "crash", "AttributeError") for k, (data, _) in PHYSICS.items()},
    "drivers: 5": (legacy_camera_with(DRIVERS[0]), "crash", "TypeError"),
    "drivers: [1]": (legacy_camera_with(DRIVERS[1]), "crash", "AttributeError"),
    "drivers: [protocol list]": (legacy_camera_with(DRIVERS[2]), "crash", "TypeError"),
    **{f"mixed:{k}": (data, "crash", "TypeError: '<' not supported") for k, (data, _) in MIXED.items()},
    "non-string keys": (NON_STRING_KEYS, "crash", "TypeError: expected string or bytes-like object"),
    "_deprecations: 5": (DEPRECATIONS_INT, "crash", "TypeError: 'int' object is not iterable"),
    "_deprecations: ab": (DEPRECATIONS_STR, "warnings", ["deprecated: a", "deprecated: b"]),
    "BOM": (BOM_GOOD, "errors", [rmm.NO_FRONTMATTER]),
    # PyYAML 6.0.3's LibYAML has no nesting limit (robot-md recurses until RecursionError); 6.0.4's
    # refuses at 1,000 flow levels, which robot-md reports as a YAML parse error.
    "5,000 deep": (f"---\n{DEEP}---\n".encode(), "crash or YAML error", "RecursionError"),
}


def ours(data: bytes) -> rmm.Report:
    try:
        return rmm.validate(rmm.parse(rmm.decode(data).text))
    except rmm.ManifestError as e:
        return rmm.Report.from_error(e)


@pytest.fixture(scope="module")
def reference_answers(tmp_path_factory) -> dict[str, dict]:
    folder = tmp_path_factory.mktemp("divergences")
    paths = {}
    for number, (name, (data, _, _)) in enumerate(REFERENCE.items()):
        paths[name] = folder / str(number) / "ROBOT.md"
        paths[name].parent.mkdir()
        paths[name].write_bytes(data)
    answers = run_reference(list(paths.values()))
    return {name: answers[str(path)] for name, path in paths.items()}


@pytest.mark.heavy
@pytest.mark.parametrize("name", REFERENCE)
def test_the_reference_really_does_this(name: str, reference_answers: dict[str, dict]) -> None:
    """Each divergence below is from robot-md 1.10.6's real behaviour (run from PyPI)."""
    _, field, expected = REFERENCE[name]
    answer = reference_answers[name]
    if field == "crash or YAML error" and "crash" not in answer:
        assert answer["code"] == 1 and answer["errors"][0].startswith("frontmatter YAML parse error: "), (
            answer
        )
    elif field.startswith("crash"):
        assert answer.get("crash", "").startswith(str(expected)), answer
    else:
        assert answer.get(field) == expected, answer


def test_non_utf8() -> None:
    report = ours(NON_UTF8)
    assert report.code == 1
    assert report.errors[0].startswith("not UTF-8 text (byte 0xe4 at offset ")


@pytest.mark.parametrize("name", PHYSICS)
def test_non_mapping_physics_and_solver(name: str) -> None:
    data, error = PHYSICS[name]
    report = ours(data)
    assert report.code == 2 and report.errors[0].startswith(error)


@pytest.mark.parametrize("drivers", DRIVERS)
def test_legacy_camera_with_odd_drivers(drivers: str) -> None:
    report = ours(legacy_camera_with(drivers))
    assert report.code == 2 and report.errors[0].startswith("schema: drivers")


@pytest.mark.parametrize("name", MIXED)
def test_error_paths_of_mixed_types(name: str) -> None:
    """robot-md sorts errors by path and crashes comparing an int (or date) key
    with a str one; we rank such parts by type name and keep its order elsewhere."""
    data, expected = MIXED[name]
    report = ours(data)
    assert report.code == 2
    assert list(report.errors) == expected


def test_non_string_keys_where_the_schema_matches_key_patterns() -> None:
    assert ours(NON_STRING_KEYS).errors == (
        "schema: extensions: '1' does not match any of the regexes: '^x-[a-z0-9_-]+$'",
    )


def test_deprecations_marker_that_is_not_iterable() -> None:
    assert ours(DEPRECATIONS_INT).warnings == ("deprecated: 5",)
    # ...while an iterable one matches the reference (REFERENCE above), however odd.
    assert ours(DEPRECATIONS_STR).warnings == ("deprecated: a", "deprecated: b")


def test_utf8_bom_is_accepted() -> None:
    assert ours(BOM_GOOD) == ours(GOOD.encode()) and ours(BOM_GOOD).ok


LEGACY = ROOT / "tests" / "corpus" / "rmd__examples-bob@2bb912a.ROBOT.md"


def test_render_does_not_leak_the_internal_marker() -> None:
    """robot-md leaks `_deprecations` into its render (the heavy test below shows it); the
    stored reference answers (test_parity.py) hold its render without that key, which ours matches."""
    rendered = rmm.render(rmm.parse(rmm.decode(LEGACY.read_bytes()).text))
    assert "_deprecations" not in rendered
    assert rendered == stored_reference.answers()[LEGACY.name]["render"]


@pytest.mark.heavy
def test_the_reference_leaks_the_internal_marker(tmp_path: Path) -> None:
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
    assert leaked.startswith(rendered)  # otherwise byte-identical


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


def test_sets_are_deterministic(tmp_path: Path) -> None:
    """validate and render say the same under any hash seed (each a process of its own, running both)."""
    text = GOOD.replace(
        "capabilities:\n", "x_tags: !!set {zeta, alpha, mid, beta, omega}\ncapabilities:\n", 1
    )
    text = text.replace('rcan_version: "3.0"', "rcan_version: !!set {b, a, c, d}", 1)
    path = tmp_path / "ROBOT.md"
    path.write_text(text, encoding="utf-8")
    both = "import sys, robot_md_mcp as m\nfor verb in (['validate', '--json'], ['render']):\n"
    both += "    m.main([*verb, sys.argv[1]])"
    outputs = {python(both, path, env={"PYTHONHASHSEED": str(seed)}).stdout for seed in range(2)}
    assert len(outputs) == 1
    (out,) = outputs
    assert "schema: rcan_version: {'a', 'b', 'c', 'd'} is not of type 'string'" in out
    assert "x_tags: !!set\n  alpha: null\n  beta: null\n  mid: null\n  omega: null\n  zeta: null\n" in out


def test_alias_bombs_and_deep_nesting(tmp_path: Path) -> None:
    bomb = "a: &a [x, x, x, x, x, x, x, x, x, x]\n" + "".join(
        f"{'b' * i}: &{'b' * i} [" + ", ".join([f"*{'b' * (i - 1) if i > 1 else 'a'}"] * 10) + "]\n"
        for i in range(1, 9)
    )
    # A LibYAML with a nesting limit of its own (PyYAML 6.0.4's: 1,000 flow levels) refuses DEEP
    # first, in its own words: one line either way.
    for frontmatter, messages in [
        (bomb, (rmm.TOO_MANY_VALUES,)),
        (
            DEEP,
            (f"frontmatter nested more than {rmm.MAX_DEPTH} levels deep", "frontmatter YAML parse error: "),
        ),
    ]:
        path = tmp_path / "ROBOT.md"
        path.write_text(f"---\n{frontmatter}---\n# x\n", encoding="utf-8")
        done = run(path, timeout=10)
        assert done.returncode == 1 and done.stderr.count("\n") == 1, done.stderr
        assert done.stderr.startswith(tuple(f"robot-md-mcp: {m}" for m in messages)), done.stderr
        assert done.stderr.endswith(f" ({path})\n")
        (error,) = ours(f"---\n{frontmatter}---\n".encode()).errors
        assert error.startswith(messages)


@posix_only
def test_oversized_files_and_fifos(tmp_path: Path) -> None:
    big = tmp_path / "big.md"
    big.write_bytes(GOOD.encode() + b"\n" + b"x" * rmm.MAX_MANIFEST_BYTES)
    fifo = tmp_path / "fifo.md"
    os.mkfifo(fifo)
    for path, message in [(big, "file is larger than the 1024 KiB limit"), (fifo, "not a regular file")]:
        done = run("validate", "--json", path, timeout=10)
        assert done.returncode == 1
        assert f'"{message}: {path}"' in done.stdout
