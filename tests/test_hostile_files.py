"""Hostile files: at startup and through the `validate` verb, as the command line
runs them in one worker process whose peak memory is measured per file (exit 1,
one line, no traceback), and mid-session against a real server process over raw
stdio JSON-RPC (resources/read → a JSON-RPC error, tools/call → isError, the
next request after the fix succeeds), each request within 2 s and the
server's peak RSS bounded. Then the file is truncated, replaced, rewritten
and deleted while requests run.

Cases already covered at startup elsewhere (FIFO, folder, not UTF-8 in
test_cli.py) are exercised here mid-session only."""

from __future__ import annotations

import json
import os
import subprocess
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from conftest import EXAMPLE, need, posix_only
from fuzz_strategies import alias_bomb, bob_with, costly_files, nested_mappings
from hypothesis import HealthCheck, given, settings
from serving import PROC, REQUEST_DEADLINE, RawServer
from serving import cost_worker as start_cost_worker

import robot_md_mcp as rmm

pytestmark = posix_only

GOOD = EXAMPLE.read_text(encoding="utf-8")
ALT = GOOD.replace("payload_kg: 0.5", "payload_kg: 0.7")
MIB = 1024 * 1024
RSS_LIMIT_MIB = 200
SAFETY = "robot-md://bob/safety"


def under_the_cap(shape: Callable[[str], str], filler: str) -> str:
    """shape(filler repeated) as long as it can be while under 1 MiB."""
    room = rmm.MAX_MANIFEST_BYTES - len(shape("").encode()) - 64
    return shape(filler * (room // len(filler.encode())))


# --- the cases --------------------------------------------------------------


@dataclass
class Case:
    make: Callable[[Path], object]  # turns the served path into the hostile thing
    # the one-line error's start(s) after "robot-md-mcp: "; None: served
    error: str | tuple[str, ...] | None = None
    startup: bool = True  # also run at startup and through `validate` (not covered elsewhere)


def content(data: str | bytes) -> Callable[[Path], object]:
    raw = data.encode() if isinstance(data, str) else data
    return lambda path: path.write_bytes(raw)


def real_100_mb(path: Path) -> None:
    with path.open("w", encoding="utf-8") as f:
        for _ in range(100 * MIB // len(GOOD) + 1):
            f.write(GOOD)


def sparse(path: Path) -> None:
    path.write_text(GOOD, encoding="utf-8")
    os.truncate(path, 100 * MIB)


def fifo(path: Path) -> None:
    need(hasattr(os, "mkfifo"), "os.mkfifo")
    os.mkfifo(path)


def dev_zero(path: Path) -> None:
    need(Path("/dev/zero").exists(), "/dev/zero")
    path.symlink_to("/dev/zero")


TOO_DEEP = "frontmatter nested more than 300 levels deep"
# A LibYAML with a nesting limit of its own (PyYAML 6.0.4's, 1,000 flow levels) may refuse first.
TOO_DEEP_FOR_ANY_LIBYAML = (TOO_DEEP, "frontmatter YAML parse error: ")
LONG = "x" * 40_000
NOT_REGULAR = "not a regular file"
TOO_BIG = "file is larger than the 1024 KiB limit"

CASES = {
    "billion laughs": Case(content(bob_with(alias_bomb(10, 10))), rmm.TOO_MANY_VALUES),
    "alias bomb within budget": Case(content(bob_with(alias_bomb(8, 3)))),
    # Aliases multiply text: a file of a few KB must not make a view hundreds of MiB long.
    "one long string aliased 2,000 times": Case(
        content(bob_with(f"x_s: &s {LONG}\nx_l: [" + ", ".join(["*s"] * 2000) + "]\n")), rmm.TOO_MUCH_TEXT
    ),
    # jsonschema quotes repr() of a failing value: a message never carries a huge value whole.
    "a failing value quoted in a message": Case(
        content(
            bob_with(f"x_s: &s {LONG}\n").replace("robot_name: bob", "robot_name: [" + "*s, " * 2000 + "]")
        ),
        rmm.TOO_MUCH_TEXT,
    ),
    "a 290-deep list aliased 1,600 times": Case(
        content(bob_with("x_d: &d " + "[" * 290 + "1" + "]" * 290 + "\nx_l: [" + "*d, " * 1600 + "]\n")),
        rmm.TOO_BIG_TO_SHOW,
    ),
    # PyYAML builds these in quadratic time; no str() can show them.
    "a sexagesimal integer of 1 MiB": Case(
        content(under_the_cap(lambda fill: bob_with(f"x_n: 1{fill}\n"), ":1")), rmm.TOO_LONG_INTEGER
    ),
    "a hexadecimal integer of 5,000 digits": Case(
        content(bob_with("x_n: 0x" + "f" * 4200 + "\n")), rmm.TOO_LONG_INTEGER
    ),
    # LibYAML's composer recurses in C: the event stream is checked before it composes.
    "100,000 nested flow sequences": Case(
        content(bob_with("deep: " + "[" * 100_000 + "]" * 100_000 + "\n")), TOO_DEEP_FOR_ANY_LIBYAML
    ),
    "350 nested block mappings": Case(content(bob_with(nested_mappings(350))), TOO_DEEP),
    # Tiny values, each a node: the node budget bounds what they cost.
    "1 MiB of YAML values": Case(
        content(under_the_cap(lambda fill: bob_with(f"values: [0{fill}]\n"), ", 1")),
        "frontmatter too large: more than 10,000 YAML nodes",
    ),
    "1 MiB of prose": Case(content(under_the_cap(lambda fill: GOOD + fill, "Notes on the arm. "))),
    "100 MB of real content": Case(real_100_mb, TOO_BIG),
    "100 MB sparse file": Case(sparse, TOO_BIG),
    "/dev/zero": Case(dev_zero, NOT_REGULAR),
    "a FIFO": Case(fifo, NOT_REGULAR, startup=False),
    "a symlink loop": Case(lambda p: p.symlink_to(p), "cannot read: too many levels of symbolic links"),
    "a directory": Case(lambda p: p.mkdir(), f"no {rmm.MANIFEST_FILENAME} in this directory", startup=False),
    "not UTF-8": Case(
        content(GOOD.encode().replace(b"bob", b"b\xe9b", 1)),
        "not UTF-8 text (byte 0xe9 at offset",
        startup=False,
    ),
    "NUL in the frontmatter": Case(
        content(GOOD.replace("robot_name: bob", "robot_name: b\x00b")),
        "frontmatter YAML parse error: unacceptable character #x0000",
    ),
    "NUL bytes in the prose": Case(content(GOOD + "\x00\x00 binary\x00tail\n")),
    "deleted": Case(lambda p: None, "file not found", startup=False),
}


def restore(path: Path, text: str = GOOD) -> None:
    if path.is_dir() and not path.is_symlink():
        path.rmdir()
    else:
        path.unlink(missing_ok=True)
    path.write_text(text, encoding="utf-8")


def one_line(message: str, expected: str | tuple[str, ...], path: Path) -> None:
    starts = (expected,) if isinstance(expected, str) else expected
    assert message.startswith(tuple(f"robot-md-mcp: {start}" for start in starts)), message[:300]
    assert message.endswith(f"({path})") and "\n" not in message, message[:300]


# --- at startup and through `validate` ---------------------------------------


@pytest.mark.parametrize("name", [n for n, c in CASES.items() if c.startup])
def test_startup_and_validate_verb(name: str, tmp_path: Path, cost_worker: subprocess.Popen) -> None:
    """`validate PATH`, and serving PATH where the file is refused, as the command line runs them (main(),
    in the cost worker's process: its peak memory measured for this file alone)."""
    case, path = CASES[name], tmp_path / "ROBOT.md"
    case.make(path)
    try:
        measured = measure(cost_worker, f"start{' refused' * bool(case.error)}\t{path}")
    finally:
        if path.is_file() and not path.is_symlink():
            path.unlink()  # 100 MB need not outlive the test
    peak = measured["peak_mib"]
    assert set(measured["steps"]) == ({"validate", "serve"} if case.error else {"validate"})
    for verb, (seconds, code, out, err) in measured["steps"].items():
        print(f"\n{name} ({verb}): {seconds:.2f}s, peak {peak:.0f} MiB")
        assert "Traceback" not in err
        assert seconds < REQUEST_DEADLINE, f"{verb}: {seconds:.2f}s"
        assert peak < RSS_LIMIT_MIB, f"{verb}: {peak:.0f} MiB"
        if case.error:
            assert (code, out) == (1, "")
            assert err.count("\n") == 1
            one_line(err.rstrip("\n"), case.error, path)
        else:
            assert (code, out.startswith("✓ bob")) == (0, True), out + err


# --- mid-session ---------------------------------------------------------------


class Respawned:
    """One server for the module, on one path the tests break and fix; a
    server that died is replaced so one failure does not hide the others."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._server: RawServer | None = None

    @property
    def server(self) -> RawServer:
        if self._server is None or not self._server.alive():
            if self._server is not None:
                self._server.kill()
            restore(self.path)
            self._server = RawServer(self.path)
            self._server.handshake()
        return self._server

    def close(self) -> None:
        if self._server is not None:
            self._server.assert_clean()
            assert self._server.close() == 0, self._server.stderr[-2000:]


@pytest.fixture(scope="module")
def served(tmp_path_factory) -> Iterator[Respawned]:
    need(PROC.exists(), "/proc/<pid>/status for the server's peak RSS")
    path = tmp_path_factory.mktemp("served") / "ROBOT.md"
    path.write_text(GOOD, encoding="utf-8")
    holder = Respawned(path)
    yield holder
    holder.close()


def read_text(server: RawServer, uri: str) -> str:
    answer = server.read(uri)
    assert "result" in answer, answer
    return answer["result"]["contents"][0]["text"]


def assert_serves_good(server: RawServer) -> None:
    assert read_text(server, SAFETY) == rmm.VIEW["safety"].text(rmm.parse(GOOD))
    assert server.call("validate")["result"]["structuredContent"]["ok"] is True


# The costliest for the server to refuse: `-m process` (their startup and validate runs: the default tier).
COSTLY_MID_SESSION = ("billion laughs", "a sexagesimal integer of 1 MiB", "100 MB of real content")


@pytest.mark.parametrize(
    "name", [pytest.param(n, marks=[pytest.mark.process] * (n in COSTLY_MID_SESSION)) for n in CASES]
)
def test_mid_session(name: str, served: Respawned) -> None:
    case, path, server = CASES[name], served.path, served.server
    assert_serves_good(server)
    path.unlink()
    server.reset_peak()
    before = server.rss_mib()
    case.make(path)
    timings = []
    try:
        if case.error:
            for _ in range(2):  # the second time from the cache of failed versions, where it applies
                read = server.read(SAFETY)
                timings.append(server.last_elapsed)
                assert read["error"]["code"] == -32603, read
                one_line(read["error"]["message"], case.error, path)
                call = server.call("validate")
                timings.append(server.last_elapsed)
                assert call["result"]["isError"] is True
                assert call["result"]["content"][0]["text"] == read["error"]["message"]
        else:
            manifest = rmm.ManifestFile(path).version().manifest  # as served: its signature checked
            for view in ("frontmatter", "body", "context"):
                assert read_text(server, f"robot-md://bob/{view}") == rmm.VIEW[view].text(manifest)
                timings.append(server.last_elapsed)
            report = server.call("validate")["result"]["structuredContent"]
            timings.append(server.last_elapsed)
            assert report == rmm.validate(manifest).as_dict()
        peak = server.peak_rss_mib()
    finally:
        restore(path)
    assert_serves_good(server)  # the very next requests after the fix
    print(f"\n{name} (mid-session): slowest {max(timings):.2f}s, peak {peak:.0f} MiB (from {before:.0f})")
    assert peak < RSS_LIMIT_MIB, f"{name}: peak RSS {peak:.0f} MiB"
    server.assert_clean()


# --- the file changing under running requests ----------------------------------


def file_mutations(path: Path) -> list[Callable[[], object]]:
    """Every way an editor, a sync tool or a person changes the file under a server."""

    def replace_by_rename(text: str) -> None:
        spare = path.with_name("ROBOT.md.new")
        spare.write_text(text, encoding="utf-8")
        os.replace(spare, path)

    return [
        lambda: path.write_text(ALT, encoding="utf-8"),  # in place: O_TRUNC, then the bytes
        lambda: os.truncate(path, len(ALT) // 2),
        lambda: os.truncate(path, 0),
        lambda: replace_by_rename(GOOD),
        lambda: path.unlink(),
        lambda: replace_by_rename(ALT),
        lambda: path.write_text(GOOD, encoding="utf-8"),
    ]


def read_and_validate_once(server: RawServer, path: Path, outcomes: list[tuple[str, float]]) -> None:
    """One read and one validate, each a right answer about some version or a one-line error."""
    manifests = [rmm.parse(GOOD), rmm.parse(ALT)]
    read = server.read(SAFETY)
    if "result" in read:
        assert read["result"]["contents"][0]["text"] in {rmm.VIEW["safety"].text(m) for m in manifests}
        outcomes.append(("ok", server.last_elapsed))
    else:
        assert read["error"]["code"] == -32603, read
        one_line(read["error"]["message"], "", path)
        outcomes.append(("error", server.last_elapsed))
    result = server.call("validate")["result"]
    if result.get("isError"):
        one_line(result["content"][0]["text"], "", path)
    elif result["structuredContent"]["ok"]:
        assert result["structuredContent"] in [rmm.validate(m).as_dict() for m in manifests]
    else:  # a half-written body: a true report about those bytes
        assert result["structuredContent"]["errors"]
    outcomes.append(("tool", server.last_elapsed))


def test_truncated_replaced_rewritten_and_deleted_while_requests_run(served: Respawned) -> None:
    """Each change lands while a read is on its way; then the state it left meets a read and a validate."""
    path, server = served.path, served.server
    outcomes: list[tuple[str, float]] = []
    server.reset_peak()
    started = time.monotonic()
    try:
        for mutate in file_mutations(path) * 2:
            changing = threading.Timer(0.002, mutate)
            changing.start()
            read_and_validate_once(server, path, outcomes)
            changing.join()
            read_and_validate_once(server, path, outcomes)
    finally:
        restore(path)
    peak = server.peak_rss_mib()
    assert_serves_good(server)
    kinds = {kind for kind, _ in outcomes}
    assert {"ok", "error"} <= kinds, kinds
    slowest = max(seconds for _, seconds in outcomes)
    print(
        f"\nmutations while requests run: {len(outcomes)} requests in {time.monotonic() - started:.1f}s, "
        f"slowest {slowest:.2f}s, {sum(k == 'error' for k, _ in outcomes)} errors, {peak:.0f} MiB"
    )
    assert slowest < REQUEST_DEADLINE
    assert peak < RSS_LIMIT_MIB
    server.assert_clean()


# --- the budgets, as a property ---------------------------------------------------

STEP_SECONDS = 2.0


@pytest.fixture(scope="module")
def cost_worker() -> Iterator[subprocess.Popen]:
    need(PROC.exists(), "/proc/self/status and clear_refs for the peak RSS of each manifest")
    worker = start_cost_worker()
    yield worker
    assert worker.stdin is not None
    worker.stdin.close()
    assert worker.wait(timeout=30) == 0


def measure(worker: subprocess.Popen, line: str) -> dict:
    """cost_worker.py's answer to one line."""
    assert worker.stdin is not None and worker.stdout is not None
    worker.stdin.write(line + "\n")
    worker.stdin.flush()
    return json.loads(worker.stdout.readline())


def check_costs(worker: subprocess.Popen, folder: Path, data: bytes) -> None:
    """Every verb and every view of `data`: an answer or a one-line refusal, each within
    STEP_SECONDS, the process's peak memory under RSS_LIMIT_MIB."""
    path = folder / "ROBOT.md"
    path.write_bytes(data)
    measured = measure(worker, str(path))
    for name, (seconds, code, size, refusal) in measured["steps"].items():
        assert seconds < STEP_SECONDS, (name, seconds, data[:200])
        assert code in (None, 0, 1, 2, 4), (name, code)
        assert size <= 2 * rmm.MAX_SHOWN_CHARS, (name, size)
        if refusal is not None or (code == 1 and name != "validate --json"):  # --json: a report on stdout
            assert refusal is not None and refusal.count("\n") <= 1, (name, refusal)
            assert len(refusal) < 2 * rmm.MAX_MESSAGE_CHARS, (name, len(refusal))
    assert measured["peak_mib"] < RSS_LIMIT_MIB, (measured["peak_mib"], data[:200])
    slowest = max(measured["steps"].items(), key=lambda step: step[1][0])
    refused = measured["steps"]["render"][3]
    print(
        f"{len(data):>8} B: slowest {slowest[0]} {slowest[1][0]:.2f}s, peak {measured['peak_mib']:.0f} MiB, "
        f"{(refused or 'answered')[:90]!r}"
    )


@settings(max_examples=8, deadline=None, suppress_health_check=list(HealthCheck), derandomize=True)
@given(data=costly_files())
def test_costly_files_are_answered_or_refused_within_budget(
    cost_worker, tmp_path_factory, data: bytes
) -> None:
    """Alias, merge, long-scalar, repr-heavy and deep shapes up to the 1 MiB cap: validate, validate
    --json, render and every view answer or refuse in one line within 2 s and 200 MiB."""
    check_costs(cost_worker, tmp_path_factory.mktemp("costly"), data)


@pytest.mark.heavy
@settings(max_examples=300, deadline=None, suppress_health_check=list(HealthCheck))
@given(data=costly_files())
def test_costly_files_long_run(cost_worker, tmp_path_factory, data: bytes) -> None:
    check_costs(cost_worker, tmp_path_factory.mktemp("costly"), data)
