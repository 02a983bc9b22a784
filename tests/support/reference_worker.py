"""A long-lived oracle for the fuzz tests (test_fuzz.py): manifest bytes in,
results out, one process for thousands of cases.

    reference_worker.py reference DIR   robot-md 1.10.6, via reference_oracle.run()
    reference_worker.py ours DIR        this project, via test_parity.ours()

DIR is a folder the caller owns (and removes): the reference's API reads a
path, so each case is written there as ROBOT.md first.

Run it with the reference's --target folder on PYTHONPATH (reference mode) or
the project root (ours mode): the reference is never imported by the tests.

Protocol, ASCII JSON lines: each request line is {"cases": [base64, ...]}; for
each case, in order, one answer line {"i": index, "result": {...}} is written
and flushed at once, so a client that gives up on a hung case knows which one
it was (and restarts the worker for the rest). EOF on stdin ends the worker.
"""

from __future__ import annotations

import base64
import json
import sys
from collections.abc import Callable
from pathlib import Path

# Hostile YAML can make the reference allocate without end; a capped address
# space turns that into a MemoryError (reported as a crash) instead of the
# machine's OOM killer. POSIX only; elsewhere the client's timeout still holds.
MEMORY_LIMIT = 3 * 1024**3


def _cap_memory() -> None:
    try:
        import resource

        resource.setrlimit(resource.RLIMIT_AS, (MEMORY_LIMIT, MEMORY_LIMIT))
    except (ImportError, ValueError, OSError):
        pass


def _reference(folder: Path) -> Callable[[bytes], dict]:
    from reference_oracle import run

    path = folder / "ROBOT.md"

    def check(data: bytes) -> dict:
        path.write_bytes(data)
        return run(str(path))

    return check


def _ours() -> Callable[[bytes], dict]:
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # tests/, where test_parity is
    from test_parity import ours

    return ours


def main(mode: str, folder: Path) -> int:
    _cap_memory()
    check = _reference(folder) if mode == "reference" else _ours()
    for line in sys.stdin.buffer:
        for i, case in enumerate(json.loads(line)["cases"]):
            result = check(base64.b64decode(case))
            sys.stdout.write(json.dumps({"i": i, "result": result}) + "\n")
            sys.stdout.flush()
    return 0


if __name__ == "__main__":
    if len(sys.argv) != 3 or sys.argv[1] not in ("reference", "ours"):
        sys.exit("usage: reference_worker.py reference|ours DIR")
    sys.exit(main(sys.argv[1], Path(sys.argv[2])))
