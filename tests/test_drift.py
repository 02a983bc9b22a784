"""The weekly drift workflow (.github/workflows/drift.yml) stays honest: it runs weekly and by hand,
on a CPython no older than any other the project tests, installs without the pins, runs tests that
exist (the live reference among them), and its report names what moved since the pins."""

from __future__ import annotations

import re
import runpy
import shlex
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from conftest import ROOT

WORKFLOWS = ROOT / ".github" / "workflows"


def workflow(name: str) -> dict:
    return yaml.safe_load((WORKFLOWS / name).read_text(encoding="utf-8"))


def step(named: str) -> dict:
    """The drift job's one step whose name starts with `named`."""
    (job,) = workflow("drift.yml")["jobs"].values()
    (found,) = [s for s in job["steps"] if s.get("name", "").startswith(named)]
    return found


def version_key(version: str) -> tuple[int, ...]:
    return tuple(map(int, version.split(".")))


def test_it_runs_weekly_and_by_hand_on_the_newest_cpython_without_the_pins() -> None:
    """Weekly and by hand; on a CPython no older than any the project tests or names (3.15+); it
    installs the newest releases the ranges allow, not the pins."""
    drift = workflow("drift.yml")
    triggers = drift[True]  # YAML 1.1 reads the key `on` as true
    assert set(triggers) == {"schedule", "workflow_dispatch"}
    ((cron,),) = [entry.values() for entry in triggers["schedule"]]
    _, _, day, month, weekday = cron.split()
    assert (day, month) == ("*", "*") and re.fullmatch(r"[0-6]", weekday), cron
    (job,) = drift["jobs"].values()
    newest = job["env"]["NEWEST_CPYTHON"]
    (setup,) = [s for s in job["steps"] if s.get("uses", "").startswith("actions/setup-python")]
    assert setup["with"]["python-version"] == "${{ env.NEWEST_CPYTHON }}" and newest in job["name"]
    tested = workflow("ci.yml")["jobs"]["test"]["strategy"]["matrix"]["python"]
    pyproject = (ROOT / "pyproject.toml").read_text(encoding="utf-8")
    classified = re.findall(r"Programming Language :: Python :: (3\.\d+)", pyproject)
    assert version_key(newest) >= max(map(version_key, [*tested, *classified, "3.15"]))
    command = step("Install the newest")["run"]
    assert command.startswith("python -m pip install ") and '".[test]"' in command
    assert "constraints" not in command and " -c " not in command and "==" not in command


def parity_command() -> list[str]:
    return shlex.split(step("Live differential parity")["run"])


def test_its_parity_step_names_test_files_that_exist() -> None:
    command = parity_command()
    assert command[:3] == ["python", "-m", "pytest"] and "heavy" in command
    files = [arg for arg in command if arg.startswith("tests/")]
    assert files and all((ROOT / arg).is_file() for arg in files)


@pytest.mark.heavy  # collecting three test modules takes seconds on a busy machine
def test_its_parity_step_runs_the_live_reference() -> None:
    """The step's pytest command, collected here: it selects the tests that run robot-md 1.10.6
    live, and none that need ../shared."""
    command = [sys.executable, *parity_command()[1:], "--collect-only", "-q", "-p", "no:cacheprovider"]
    done = subprocess.run(command, capture_output=True, text=True, cwd=ROOT, timeout=300)
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    selected = {line.split("::")[1].split("[")[0] for line in done.stdout.splitlines() if "::" in line}
    assert {"test_stored_answers_are_the_live_reference", "test_fuzz_generated_manifests"} <= selected
    assert {"test_fuzz_mutated_manifests", "test_the_reference_really_does_this"} <= selected
    assert not any("shared" in name for name in selected)


def test_the_report_names_what_moved(tmp_path: Path) -> None:
    """The job summary (drift_report.report, in process): the pins that moved, what is installed unpinned."""
    report = runpy.run_path(str(ROOT / ".github" / "drift_report.py"))["report"]
    constraints = tmp_path / "constraints.txt"
    # jsonschema's pin is not for this interpreter, pytest's is where it is: neither is listed as moved
    pins = [
        "# a comment",
        "pyyaml==0.0.1",
        "no-such-distribution==1.0",
        'jsonschema==0.0.2 ; python_version<"3"',
    ]
    constraints.write_text("\n".join([*pins, f"pytest=={pytest.__version__}", ""]))
    said = report(constraints, "failure")
    assert said.startswith("## The newest dependencies FAIL the tests (CPython ")
    assert f"| pyyaml | 0.0.1 | {yaml.__version__} |" in said
    assert "| no-such-distribution | 1.0 | not installed |" in said
    assert "| jsonschema |" not in said and "| pytest |" not in said
    unpinned = said.split("Installed but not pinned: ")[1].rstrip(".\n").split(", ")
    names = {entry.split()[0] for entry in unpinned}
    assert "hypothesis" in names and not names & {"pytest", "pyyaml", "no-such-distribution"}
    assert report(constraints, "success").startswith("## The newest dependencies (CPython ")
