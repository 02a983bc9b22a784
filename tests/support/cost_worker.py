"""What one manifest costs: every verb and every view, timed, in one process
whose peak memory is measured per manifest (Linux: "5" > clear_refs resets
VmHWM). For test_hostile_files.py's property test of the budgets.

Protocol: one path per stdin line; for each, one JSON line on stdout:
{"steps": {name: [seconds, exit code or None, characters out, one-line refusal or None]},
 "peak_mib": float}. A line "start<TAB>PATH" (or "start refused<TAB>PATH") runs only what the
command line does at start: `validate PATH` (and `PATH`, serving, where the file is refused: it stops
before serving), each step [seconds, exit code, stdout, stderr]. Verbs run as the command line runs
them (main(), output captured); views as the server makes them (ManifestFile.version(prepare=True),
then each view's text and the validate tool's result).
"""

from __future__ import annotations

import contextlib
import io
import json
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

import robot_md_mcp as rmm

VERBS = {"validate": ["validate"], "validate --json": ["validate", "--json"], "render": ["render"]}


def peak_mib() -> float:
    with open("/proc/self/status") as status:
        row = next(r for r in status if r.startswith("VmHWM:"))
    return int(row.split()[1]) / 1024


def verb(args: list[str], path: str, whole: bool = False) -> list:
    out, err = io.StringIO(), io.StringIO()
    started = time.monotonic()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = rmm.main([*args, path])
    seconds = time.monotonic() - started
    if whole:
        return [seconds, code, out.getvalue(), err.getvalue()]
    return [seconds, code, len(out.getvalue()), err.getvalue() or None]


def at_start(how: str, path: str) -> dict[str, list]:
    """`validate PATH`, and serving PATH where it is refused (`how`: "start refused")."""
    steps = {"validate": verb(["validate"], path, whole=True)}
    if how == "start refused":
        steps["serve"] = verb([], path, whole=True)
    return steps


def views(path: str) -> dict[str, list]:
    steps: dict[str, list] = {}
    started = time.monotonic()
    try:
        snap = rmm.ManifestFile(Path(path)).version(prepare=True)
    except rmm.ManifestError as e:
        return {"prepare": [time.monotonic() - started, None, 0, e.for_people()]}
    steps["prepare"] = [time.monotonic() - started, None, 0, None]
    for view in rmm.VIEWS:
        started = time.monotonic()
        try:
            text, refusal = snap.text(view), None
        except rmm.ManifestError as e:
            text, refusal = "", e.for_people()
        steps[view.kind] = [time.monotonic() - started, None, len(text), refusal]
    started = time.monotonic()
    result = json.dumps(snap.report.as_dict(), ensure_ascii=False)
    steps["validate tool"] = [time.monotonic() - started, None, len(result), None]
    return steps


def main() -> int:
    for line in sys.stdin:
        how, _, path = line.rstrip("\n").rpartition("\t")
        Path("/proc/self/clear_refs").write_text("5")
        if how:
            steps = at_start(how, path)
        else:
            steps = {name: verb(args, path) for name, args in VERBS.items()}
            steps.update(views(path))
        sys.stdout.write(json.dumps({"steps": steps, "peak_mib": peak_mib()}) + "\n")
        sys.stdout.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main())
