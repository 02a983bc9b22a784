"""A long-lived oracle for the fuzz tests (test_fuzz.py): manifest bytes in,
results out, one process for thousands of cases.

    reference_worker.py reference DIR   robot-md 1.10.6, via reference_oracle.run()
    reference_worker.py dropin DIR      robot-md 1.10.6's MCP builders, via dropin_reference.oracle()
    reference_worker.py ours DIR        this project, via ours()

DIR is a folder the caller owns (and removes): the reference's API reads a
path, so each case is written there as ROBOT.md first.

Run it with the reference's --target folder on PYTHONPATH (reference mode) or
the project root (ours mode): the reference is never imported by the tests.

Protocol, ASCII JSON lines: each request line is {"cases": [base64, ...]}; for
each case, in order, one answer line {"i": index, "result": {...}} is written
and flushed at once, so a client that gives up on a hung case knows which one
it was (and restarts the worker for the rest). EOF on stdin ends the worker.
`Oracle` is the client: the worker in its own process, restarted when a case hangs or kills it.
"""

from __future__ import annotations

import base64
import json
import os
import queue
import shutil
import subprocess
import sys
import tempfile
import threading
from collections.abc import Callable
from pathlib import Path
from typing import IO

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


def _reference(mode: str, folder: Path) -> Callable[[bytes], dict]:
    """robot-md's answers for validate and render, or (mode "dropin") its own MCP builders'."""
    from dropin_reference import oracle as dropin
    from reference_oracle import run

    check = dropin if mode == "dropin" else run
    path = folder / "ROBOT.md"

    def checked(data: bytes) -> dict:
        path.write_bytes(data)
        return check(str(path))

    return checked


BOM = b"\xef\xbb\xbf"


def ours(data: bytes) -> dict:
    """This project's answers for validate and render, in the shape of the reference's."""
    import robot_md_mcp as rmm  # here: the reference's modes never import the project

    try:
        manifest = rmm.parse(rmm.decode(data).text)
    except rmm.ManifestError as e:
        report, rendered = rmm.Report.from_error(e), None
    else:
        report, rendered = rmm.validate(manifest), rmm.render(manifest)
    return {
        "code": report.code,
        "errors": list(report.errors),
        "warnings": list(report.warnings),
        "summary": report.summary,
        "render": rendered,
    }


def main(mode: str, folder: Path) -> int:
    _cap_memory()
    check = ours if mode == "ours" else _reference(mode, folder)
    for line in sys.stdin.buffer:
        for i, case in enumerate(json.loads(line)["cases"]):
            result = check(base64.b64decode(case))
            sys.stdout.write(json.dumps({"i": i, "result": result}) + "\n")
            sys.stdout.flush()
    return 0


def reference_env(**more: str) -> dict[str, str]:
    """The environment of an `Oracle("reference", …)`: the reference, installed from PyPI, on the path."""
    from conftest import REFERENCE_PINS, install_reference, need

    ref = install_reference()
    need(ref is not None, f"the reference ({', '.join(REFERENCE_PINS)}) could not be installed from PyPI")
    # PYTHONUTF8: robot-md reads files in the locale's encoding (cp1252 on
    # Windows), a documented divergence; ROBOT.md is UTF-8.
    return {**os.environ, "PYTHONPATH": str(ref), "PYTHONIOENCODING": "utf-8", "PYTHONUTF8": "1", **more}


def reference_answers(given: dict[str, bytes], mode: str = "reference") -> dict[str, dict]:
    """The reference's answer (mode "reference" or "dropin") for each input, by key, under hash seed 0:
    the order of a YAML !!set in its answers follows it."""
    oracle = Oracle(mode, reference_env(PYTHONHASHSEED="0"), timeout=120)
    try:
        oracle.submit(list(given.values()))
        return dict(zip(given, oracle.collect(), strict=True))
    finally:
        oracle.close()


def ours_env(seed: str) -> dict[str, str]:
    """The environment of an `Oracle("ours", …)`: the project on the path, this hash seed."""
    return {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[2]), "PYTHONHASHSEED": seed}


class Oracle:
    """A reference_worker.py process, restarted when a case hangs or kills it."""

    def __init__(self, mode: str, env: dict[str, str], timeout: float) -> None:
        self.mode, self.env, self.timeout = mode, env, timeout
        self.folder = tempfile.mkdtemp(prefix="fuzz-oracle-")  # where the worker writes each case
        self.proc: subprocess.Popen | None = None
        self.pending: list[bytes] = []

    def _start(self) -> None:
        self.stderr = tempfile.TemporaryFile()
        self.proc = subprocess.Popen(
            [sys.executable, __file__, self.mode, self.folder],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=self.stderr,
            env=self.env,
            cwd=Path(__file__).resolve().parents[2],
        )
        # Answers are read by a thread, so waiting for one can time out.
        self.answers: queue.Queue[bytes | None] = queue.Queue()
        threading.Thread(target=_pump, args=(self.proc.stdout, self.answers), daemon=True).start()

    def _send(self, cases: list[bytes]) -> None:
        if self.proc is None or self.proc.poll() is not None:
            self._start()
        assert self.proc is not None and self.proc.stdin is not None
        request = {"cases": [base64.b64encode(c).decode("ascii") for c in cases]}
        self.proc.stdin.write(json.dumps(request).encode("ascii") + b"\n")
        self.proc.stdin.flush()

    def submit(self, cases: list[bytes]) -> None:
        """Start on more cases; collect() waits for the answers to all of them."""
        if cases:
            self._send(cases)
            self.pending += cases

    def collect(self) -> list[dict]:
        """One result per submitted case: the worker's, or {"hang": ...} if it
        gave no answer in time, or {"crash": ...} if it died on that case."""
        results: list[dict] = []
        while len(results) < len(self.pending):
            try:
                line = self.answers.get(timeout=self.timeout)
            except queue.Empty:
                results.append({"hang": f"no answer in {self.timeout:g} s"})
            else:
                if line is not None:
                    results.append(json.loads(line)["result"])
                    continue
                results.append({"crash": f"worker died: {self._stop()}"})
            self._stop()
            if len(results) < len(self.pending):
                self._send(self.pending[len(results) :])
        self.pending = []
        return results

    def _stop(self) -> str:
        """Kill the worker; say how it ended."""
        proc, self.proc = self.proc, None
        if proc is None:
            return "not running"
        if proc.poll() is None:
            proc.kill()
        code = proc.wait()
        self.stderr.seek(0)
        tail = self.stderr.read()[-500:].decode("utf-8", "replace").strip()
        self.stderr.close()
        return f"exit {code}: {tail}"

    def close(self) -> None:
        if self.proc is not None and self.proc.stdin is not None:
            self.proc.stdin.close()
            try:
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                pass
        self._stop()
        shutil.rmtree(self.folder, ignore_errors=True)


def _pump(stream: IO[bytes], answers: queue.Queue) -> None:
    for line in stream:
        answers.put(line)
    answers.put(None)


if __name__ == "__main__":
    if len(sys.argv) != 3 or sys.argv[1] not in ("reference", "dropin", "ours"):
        sys.exit("usage: reference_worker.py reference|dropin|ours DIR")
    sys.exit(main(sys.argv[1], Path(sys.argv[2])))
