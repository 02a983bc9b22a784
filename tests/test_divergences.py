"""Where robot-md 1.10.6 crashes, hangs, leaks or depends on the machine, we
deliberately do better. One test per row of the README's divergence table;
where it is safe to run, the reference's own behaviour is shown too."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import EXAMPLE, ROOT, posix_only, run_reference

import robot_md_mcp as rmm

GOOD = EXAMPLE.read_text(encoding="utf-8")


def reference_on(tmp_path: Path, data: bytes) -> dict:
    path = tmp_path / "ref" / "ROBOT.md"
    path.parent.mkdir(exist_ok=True)
    path.write_bytes(data)
    return run_reference([path])[str(path)]


def ours(data: bytes) -> rmm.Report:
    try:
        return rmm.validate(rmm.parse(rmm.decode(data).text))
    except rmm.ManifestError as e:
        return rmm.Report.from_error(e)


def test_non_utf8(tmp_path: Path) -> None:
    data = GOOD.encode().replace(b"craigm26", b"cr\xe4igm26", 1)  # a Latin-1 editor's ä
    assert reference_on(tmp_path, data)["crash"].startswith("UnicodeDecodeError")
    report = ours(data)
    assert report.code == 1
    assert report.errors[0].startswith("not UTF-8 text (byte 0xe4 at offset ")


@pytest.mark.parametrize(
    ("change", "crash", "error"),
    [
        (
            ("physics:\n", "physics: 5\nx_physics:\n"),
            "AttributeError",
            "schema: physics: 5 is not of type 'object'",
        ),
        (
            ("physics:\n", "physics: null\nx_physics:\n"),
            "AttributeError",
            "schema: physics: None is not of type",
        ),
        (
            ("  dof: 6\n", "  dof: 6\n  solver: 7\n"),
            "AttributeError",
            "schema: physics.solver: 7 is not of type",
        ),
    ],
    ids=["physics-int", "physics-null", "solver-int"],
)
def test_non_mapping_physics_and_solver(tmp_path: Path, change, crash, error) -> None:
    data = GOOD.replace(*change, 1).encode()
    assert reference_on(tmp_path, data)["crash"].startswith(crash)
    report = ours(data)
    assert report.code == 2 and report.errors[0].startswith(error)


@pytest.mark.parametrize(
    ("drivers", "crash"),
    [
        ("drivers: 5", "TypeError"),
        ("drivers: [1]", "AttributeError"),
        ("drivers: [{id: c, protocol: [x]}]", "TypeError"),
    ],
)
def test_legacy_camera_with_odd_drivers(tmp_path: Path, drivers: str, crash: str) -> None:
    head, rest = GOOD.split("drivers:\n", 1)
    rest = rest.split("\nbrain:", 1)[1]
    text = head + drivers + "\nbrain:" + rest
    text = text.replace("  dof: 6\n", "  dof: 6\n  solver:\n    camera: {mount: world}\n", 1)
    data = text.encode()
    assert reference_on(tmp_path, data)["crash"].startswith(crash)
    report = ours(data)
    assert report.code == 2 and report.errors[0].startswith("schema: drivers")


@pytest.mark.parametrize(
    ("change", "expected"),
    [
        (
            ("  dof: 6\n", "  dof: 6\n  poses: {ready: 5, 1: 5}\n"),
            [
                "schema: physics.poses.1: 5 is not of type 'object'",
                "schema: physics.poses.ready: 5 is not of type 'object'",
            ],
        ),
        (
            ("capabilities:\n", "capability_contracts: {arm.pick: 2, 2026-01-01: 1}\ncapabilities:\n"),
            [
                "schema: capability_contracts.2026-01-01: 1 is not of type 'object'",
                "schema: capability_contracts.arm.pick: 2 is not of type 'object'",
            ],
        ),
    ],
    ids=["int-and-str", "date-and-str"],
)
def test_error_paths_of_mixed_types(tmp_path: Path, change, expected) -> None:
    """robot-md sorts errors by path and crashes comparing an int (or date) key
    with a str one; we rank such parts by type name and keep its order elsewhere."""
    data = GOOD.replace(*change, 1).encode()
    assert reference_on(tmp_path, data)["crash"].startswith("TypeError: '<' not supported")
    report = ours(data)
    assert report.code == 2
    assert list(report.errors) == expected


def test_non_string_keys_where_the_schema_matches_key_patterns(tmp_path: Path) -> None:
    data = GOOD.replace("capabilities:\n", "extensions: {1: {}, x-ok: {}}\ncapabilities:\n", 1).encode()
    assert reference_on(tmp_path, data)["crash"].startswith("TypeError: expected string or bytes-like object")
    assert ours(data).errors == (
        "schema: extensions: '1' does not match any of the regexes: '^x-[a-z0-9_-]+$'",
    )


def test_deprecations_marker_that_is_not_iterable(tmp_path: Path) -> None:
    data = GOOD.replace("rcan_version:", "_deprecations: 5\nrcan_version:", 1).encode()
    assert reference_on(tmp_path, data)["crash"] == "TypeError: 'int' object is not iterable"
    assert ours(data).warnings == ("deprecated: 5",)
    # ...while an iterable one matches the reference, however odd.
    data = GOOD.replace("rcan_version:", "_deprecations: ab\nrcan_version:", 1).encode()
    assert (
        reference_on(tmp_path, data)["warnings"]
        == ["deprecated: a", "deprecated: b"]
        == list(ours(data).warnings)
    )


def test_utf8_bom_is_accepted(tmp_path: Path) -> None:
    data = b"\xef\xbb\xbf" + GOOD.encode()
    assert reference_on(tmp_path, data)["errors"] == [rmm.NO_FRONTMATTER]
    assert ours(data) == ours(GOOD.encode()) and ours(data).ok


def test_render_does_not_leak_the_internal_marker(tmp_path: Path) -> None:
    legacy = (ROOT / "tests" / "corpus" / "rmd__examples-bob@2bb912a.ROBOT.md").read_bytes()
    path = tmp_path / "ROBOT.md"
    path.write_bytes(legacy)
    code = (
        "import sys; from robot_md import parser, render\n"
        "sys.stdout.write(render.render_yaml(parser.parse_file(sys.argv[1])))"
    )
    from conftest import install_reference

    ref = install_reference()
    assert ref is not None
    leaked = subprocess.run(
        [sys.executable, "-c", code, str(path)],
        env={**os.environ, "PYTHONPATH": str(ref)},
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    assert "_deprecations:\n- physics.solver.camera (singular) is deprecated" in leaked
    rendered = rmm.render(rmm.parse(rmm.decode(legacy).text))
    assert "_deprecations" not in rendered
    assert leaked.startswith(rendered)  # otherwise byte-identical


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
    encoding = subprocess.run(
        [sys.executable, "-c", probe], env=env, capture_output=True, text=True
    ).stdout.strip()
    assert encoding.lower() in {"ansi_x3.4-1968", "ascii", "us-ascii"}
    done = subprocess.run(
        [sys.executable, str(ROOT / "robot_md_mcp.py"), "validate", "--json", str(path)],
        env=env,
        capture_output=True,
    )
    assert done.returncode == 0, done.stderr
    assert '"ok": true' in done.stdout.decode("utf-8")
    rendered = subprocess.run(
        [sys.executable, str(ROOT / "robot_md_mcp.py"), "render", str(path)],
        env=env,
        capture_output=True,
        check=True,
    ).stdout.decode("utf-8")
    assert "manufacturer: cräigm26" in rendered


def test_sets_are_deterministic(tmp_path: Path) -> None:
    text = GOOD.replace(
        "capabilities:\n", "x_tags: !!set {zeta, alpha, mid, beta, omega}\ncapabilities:\n", 1
    )
    text = text.replace('rcan_version: "3.0"', "rcan_version: !!set {b, a, c, d}", 1)
    path = tmp_path / "ROBOT.md"
    path.write_text(text, encoding="utf-8")
    outputs = set()
    for seed in range(4):
        env = {**os.environ, "PYTHONHASHSEED": str(seed)}
        validate = subprocess.run(
            [sys.executable, str(ROOT / "robot_md_mcp.py"), "validate", "--json", str(path)],
            env=env,
            capture_output=True,
            text=True,
            encoding="utf-8",
        )
        render = subprocess.run(
            [sys.executable, str(ROOT / "robot_md_mcp.py"), "render", str(path)],
            env=env,
            capture_output=True,
            text=True,
            encoding="utf-8",
        )
        outputs.add(validate.stdout + render.stdout)
    assert len(outputs) == 1
    (out,) = outputs
    assert "schema: rcan_version: {'a', 'b', 'c', 'd'} is not of type 'string'" in out
    assert "x_tags: !!set\n  alpha: null\n  beta: null\n  mid: null\n  omega: null\n  zeta: null\n" in out


def test_alias_bombs_and_deep_nesting(tmp_path: Path) -> None:
    bomb = "a: &a [x, x, x, x, x, x, x, x, x, x]\n" + "".join(
        f"{'b' * i}: &{'b' * i} [" + ", ".join([f"*{'b' * (i - 1) if i > 1 else 'a'}"] * 10) + "]\n"
        for i in range(1, 9)
    )
    deep = "a: " + "[" * 5000 + "]" * 5000 + "\n"
    assert reference_on(tmp_path, f"---\n{deep}---\n".encode())["crash"].startswith("RecursionError")
    for frontmatter, message in [
        (bomb, "frontmatter too large: more than 500,000 values once YAML aliases are expanded"),
        (deep, "frontmatter nested more than 300 levels deep"),
    ]:
        path = tmp_path / "ROBOT.md"
        path.write_text(f"---\n{frontmatter}---\n# x\n", encoding="utf-8")
        done = subprocess.run(
            [sys.executable, str(ROOT / "robot_md_mcp.py"), str(path)],
            capture_output=True,
            text=True,
            timeout=10,
        )
        assert (done.returncode, done.stderr) == (1, f"robot-md-mcp: {message} ({path})\n")
        assert ours(f"---\n{frontmatter}---\n".encode()).errors == (message,)


@posix_only
def test_oversized_files_and_fifos(tmp_path: Path) -> None:
    big = tmp_path / "big.md"
    big.write_bytes(GOOD.encode() + b"\n" + b"x" * rmm.MAX_MANIFEST_BYTES)
    fifo = tmp_path / "fifo.md"
    os.mkfifo(fifo)
    for path, message in [(big, "file is larger than the 1024 KiB limit"), (fifo, "not a regular file")]:
        done = subprocess.run(
            [sys.executable, str(ROOT / "robot_md_mcp.py"), "validate", "--json", str(path)],
            capture_output=True,
            text=True,
            timeout=10,
        )
        assert done.returncode == 1
        assert f'"{message}: {path}"' in done.stdout
