"""`validate` on several manifests (PATHs, `--fleet DIR`): one block per file, each block what `validate`
on that file alone prints, headed by its path; the exit code the worst one's (the lowest that is not 0);
`--strict` fails a manifest that is valid but for hints (a misspelt key) with exit 8. Folders of good,
hinted, invalid and unreadable manifests, generated; the command line in this process."""

from __future__ import annotations

import contextlib
import io
import json
from pathlib import Path

import pytest
from conftest import ROOT
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import robot_md_mcp as rmm

BOB = (ROOT / "examples" / "bob.ROBOT.md").read_text(encoding="utf-8")


def named(name: str, text: str = BOB) -> str:
    """bob's manifest as robot `name` (the prose's heading and sections name it too)."""
    return (
        text.replace("robot_name: bob", f"robot_name: {name}", 1)
        .replace("# bob", f"# {name}")
        .replace("What bob Can Do", f"What {name} Can Do")
    )


# Each kind of manifest, made from bob, and the code `validate` alone exits with (strict: with --strict).
KINDS: dict[str, tuple[str | None, int, int]] = {
    "good": (BOB, 0, 0),
    "hinted": (BOB.replace("hardware:", "hardwre:", 1), 0, rmm.HINTED),  # a misspelt optional key
    "schema": (BOB.replace('rcan_version: "3.0"', 'rcan_version: "1.6"', 1), 2, 2),
    "body": (BOB.replace("## Identity", "## Who", 1), 4, 4),
    "unparsed": (BOB.replace("---", "", 1), 1, 1),
    "bad-yaml": (BOB.replace("dof: 6", "dof: [6", 1), 1, 1),
    "missing": (None, 1, 1),  # a PATH that names nothing
}


def run(*args: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = rmm.main(["validate", *args], rmm.Machine(environ={}))
    return code, out.getvalue(), err.getvalue()


def lay_out(folder: Path, kinds: list[str], in_folders: list[bool]) -> list[Path]:
    """A fleet's folder: each manifest as NAME.ROBOT.md or NAME/ROBOT.md; a missing one is a PATH only."""
    paths = []
    for i, (kind, inside) in enumerate(zip(kinds, in_folders, strict=True)):
        text = KINDS[kind][0]
        name = f"r{i:02d}-{kind}"
        path = folder / name / "ROBOT.md" if inside else folder / f"{name}.ROBOT.md"
        if text is not None:
            path.parent.mkdir(exist_ok=True)
            path.write_text(named(name, text), encoding="utf-8")
        paths.append(path)
    return paths


def blocks(out: str) -> list[tuple[str, str]]:
    """(header path, text) of each block, and the summary line last checked apart."""
    lines = out.splitlines(keepends=True)
    assert lines[-1].startswith("== ") and " manifest" in lines[-1]
    found: list[tuple[str, str]] = []
    for line in lines[:-1]:
        if line.startswith("== "):
            found.append((line[3:].rstrip("\n"), ""))
        else:
            found[-1] = (found[-1][0], found[-1][1] + line)
    return found


FLEETS = st.lists(st.sampled_from(list(KINDS)), min_size=1, max_size=7).flatmap(
    lambda kinds: st.tuples(st.just(kinds), st.lists(st.booleans(), min_size=len(kinds), max_size=len(kinds)))
)


@given(FLEETS, st.booleans())
@settings(max_examples=8, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
def test_each_manifest_is_one_block_as_alone_and_the_worst_code(
    tmp_path_factory: pytest.TempPathFactory, fleet: tuple[list[str], list[bool]], strict: bool
) -> None:
    """PATHs: each one's block what `validate` on it alone prints, the worst code, a summary line; --fleet
    DIR checks DIR/*/ROBOT.md and DIR/*.ROBOT.md, sorted, as the same PATHs would (other files and folders
    are not manifests); --json maps each path to the validate tool's result."""
    kinds, in_folders = fleet
    folder = tmp_path_factory.mktemp("fleet")
    paths = lay_out(folder, kinds, in_folders)
    (folder / "notes.md").write_text("not a manifest", encoding="utf-8")
    (folder / "empty").mkdir()
    (folder / ".hidden.ROBOT.md").write_text(BOB, encoding="utf-8")
    flags = ["--strict"] if strict else []
    code, out, err = run(*map(str, paths), *flags)
    alone = [run(str(p), *flags) for p in paths]
    expected = [KINDS[k][2 if strict else 1] for k in kinds]
    assert [a[0] for a in alone] == expected
    if len(paths) == 1:  # one PATH: today's output exactly
        assert (code, out) == alone[0][:2]
    else:
        assert err == ""
        # Alone, --strict says on stderr why it failed; in a block the exit code and the summary say it.
        note = "robot-md-mcp: --strict:"
        assert blocks(out) == [
            (
                str(p),
                a_out
                + "".join(line for line in a_err.splitlines(keepends=True) if not line.startswith(note)),
            )
            for p, (_, a_out, a_err) in zip(paths, alone, strict=True)
        ]
        assert code == min((c for c in expected if c), default=0)
        bad = sum(1 for c in expected if c)
        assert out.splitlines()[-1] == f"== {len(paths)} manifests: {len(paths) - bad} passed, {bad} did not"
    assert_fleet_is_its_paths(folder, sorted(str(p) for p in paths if p.exists()))


def assert_fleet_is_its_paths(folder: Path, ordered: list[str]) -> None:
    if not ordered:
        assert run("--fleet", str(folder))[0] == rmm.ExitCode.CANNOT_USE
        return
    fleet_run, paths_run = run("--fleet", str(folder)), run(*ordered)
    if len(ordered) > 1:
        assert fleet_run == paths_run
    else:  # one PATH is today's output; a fleet of one is still a fleet: its block and the summary
        passed = int(paths_run[0] == 0)
        summary = f"== 1 manifest: {passed} passed, {1 - passed} did not\n"
        assert fleet_run == (paths_run[0], f"== {ordered[0]}\n{paths_run[1]}{paths_run[2]}{summary}", "")
    code, out, _ = run("--fleet", str(folder), "--json")
    assert code == paths_run[0]
    assert list(json.loads(out)) == ordered
    for path, report in json.loads(out).items():
        assert report == json.loads(run(path, "--json")[1])


def test_a_folder_that_is_no_fleet_is_one_line(tmp_path: Path) -> None:
    for args, said in [
        ([str(tmp_path / "none")], "cannot list the folder: no such file or directory"),
        ([str(tmp_path)], f"no manifest in this folder (a fleet is {tmp_path}/*/ROBOT.md or *.ROBOT.md)"),
    ]:
        done = run("--fleet", *args)
        assert (done[0], done[1]) == (1, ""), done
        assert done[2] == f"robot-md-mcp: {said} ({args[0]})\n"


def test_a_folder_past_the_bound_is_refused_never_cut(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(rmm, "MAX_FLEET_FILES", 5)
    for i in range(6):
        (tmp_path / f"r{i}.ROBOT.md").write_text(named(f"r{i}"), encoding="utf-8")
    code, out, err = run("--fleet", str(tmp_path))
    assert (code, out) == (1, "")
    assert err == f"robot-md-mcp: more than 5 entries in this folder; split the fleet ({tmp_path})\n"
    (tmp_path / "r5.ROBOT.md").unlink()
    assert run("--fleet", str(tmp_path))[0] == 0


def test_a_symlink_loop_and_an_unreadable_member_are_that_robots_own(tmp_path: Path) -> None:
    (tmp_path / "loop").symlink_to(tmp_path)  # DIR/loop/ROBOT.md: no such file, no recursion
    (tmp_path / "a.ROBOT.md").write_text(named("a"), encoding="utf-8")
    (tmp_path / "b.ROBOT.md").symlink_to(tmp_path / "b.ROBOT.md")  # a link to itself
    code, out, err = run("--fleet", str(tmp_path))
    assert code == 1 and err == ""
    headers = [line for line in out.splitlines() if line.startswith("== ")]
    assert headers == [
        f"== {tmp_path}/a.ROBOT.md",
        f"== {tmp_path}/b.ROBOT.md",
        "== 2 manifests: 1 passed, 1 did not",
    ]


def test_strict_fails_on_hints_only(tmp_path: Path) -> None:
    path = tmp_path / "ROBOT.md"
    path.write_text(KINDS["hinted"][0] or "", encoding="utf-8")
    plain, strict = run(str(path)), run(str(path), "--strict")
    assert plain[0] == 0 and "hint: " in plain[1]
    assert (strict[0], strict[1]) == (rmm.HINTED, plain[1])  # the same lines; the exit code fails CI
    assert strict[2] == "robot-md-mcp: --strict: 1 hint; exit 8\n"
    assert run(str(ROOT / "examples" / "bob.ROBOT.md"), "--strict")[:2] == (
        0,
        "✓ bob (arm+camera, 6 DoF, 5 capabilities)\n",
    )
