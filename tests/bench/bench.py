"""Benchmark (not a test): robot-md-mcp beside the bare SDK floor, measured
from outside the process with a stdlib JSON-RPC client, and checked against
the budgets in docs/performance.md.

    python tests/bench/bench.py                  # everything; builds the pyz if --dist has none
    python tests/bench/bench.py --no-pyz --no-pi # the stdio part only (a minute or two)
    python tests/bench/bench.py --quick          # a smoke run: few repetitions, budgets not judged

What it measures, on examples/bob.ROBOT.md unless --manifest says otherwise:
  startup    spawn → initialize response, and a full session (initialize, read every
             resource, call validate and render, close stdin → exit), both servers
             started alike (`python -m`, bytecode cached), spawns interleaved pairwise
  per call   resources/read and tools/call validate inside one session, median and p99
             over --calls calls, in --call-sessions pairs of live sessions (calls alternate);
             and, not judged, what the read answer's size alone costs: the floor serving
             our read's text beside the floor serving "r"
  memory     peak RSS (VmHWM) at the end of the full session
  pyz        sizes; first run (unpack, fresh SHIV_ROOT) and warm start of the slim pyz
             for this machine and of the universal one; warm start beside the floor
             started through the same pyz (SHIV_ENTRY_POINT=floor_server:run)
  Pi         warm start of the universal pyz under the emulated Raspberry Pi
             (../shared/tools/pi-emu), interleaved with the floor through the same pyz
  lazy       CPython 3.15 (Debian sid's, ../shared/tools/pi-emu): full sessions with PEP 810
             lazy imports (what the command line turns on) interleaved with the same
             server told not to (PYTHON_LAZY_IMPORTS=normal); the floor likewise, lazy
             from its first import, reported beside it (what the SDK alone allows)

The floor is tests/bench/floor_server.py: a low-level mcp server with one resource
and one tool. These machines are noisy, so budgets are ratios and differences
against the floor from one interleaved run. Prints a table, writes JSON (--json),
and exits 1 if a budget is missed (unless --quick).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import re
import select
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
BENCH = ROOT / "tests" / "bench"
PI_EMU = ROOT.parent / "shared" / "tools" / "pi-emu"
PI_ROOTFS = Path(os.environ.get("PI_EMU_ROOT", "/var/tmp/pi-emu")) / "rootfs-arm64"
SID_ROOTFS = Path(os.environ.get("SID_ROOTFS", "/var/tmp/pi-emu/rootfs-sid-amd64"))
PROTOCOL = "2025-11-25"  # what Claude Desktop speaks
MIB = 1024 * 1024

# name: (limit, what is compared, unit). Checked in budgets().
BUDGETS = {
    "spawn_to_initialize_ratio": (1.05, "spawn → initialize, median of pairwise ratios to the floor", "×"),
    "read_median_over_floor_ms": (0.15, "resources/read median minus the floor's", "ms"),
    "validate_median_over_floor_ms": (0.15, "tools/call validate median minus the floor's tool", "ms"),
    "peak_rss_over_floor_mib": (6.0, "peak RSS after a full session minus the floor's", "MiB"),
    "safety_floor_median_ms": (0.2, "check_action's computed floor, in process, median per call", "ms"),
    "slim_pyz_first_run_s": (2.5, "slim pyz first run (unpack) → initialize, median", "s"),
    "pi_warm_start_ratio": (1.10, "emulated Pi, warm pyz start → initialize, median of pairwise ratios", "×"),
    "lazy_initialize_ratio": (0.75, "CPython 3.15, spawn → initialize, lazy imports ÷ eager, pairwise", "×"),
    "lazy_peak_rss_mib": (60.0, "CPython 3.15 with lazy imports, peak RSS after a full session", "MiB peak"),
}
SID_BUDGETS = {"lazy_initialize_ratio", "lazy_peak_rss_mib"}


# --- a JSON-RPC client over a child's stdin/stdout ------------------------------------------------


class Child:
    """One spawned server. Times are perf_counter seconds."""

    def __init__(self, argv: list[str], env: dict[str, str], cwd: Path = ROOT) -> None:
        self.spawned = time.perf_counter()
        self.argv = argv
        self.proc = subprocess.Popen(
            argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=cwd, env=env
        )
        self.buffer = b""
        self.next_id = 0
        self.cpu_ms = 0.0
        self.stderr = ""

    def _line(self, timeout: float) -> bytes:
        assert self.proc.stdout is not None
        deadline = time.perf_counter() + timeout
        while b"\n" not in self.buffer:
            left = deadline - time.perf_counter()
            if left <= 0 or not select.select([self.proc.stdout], [], [], left)[0]:
                raise TimeoutError(f"no answer within {timeout} s from {self.argv}")
            chunk = os.read(self.proc.stdout.fileno(), 1 << 20)
            if not chunk:
                err = self.proc.stderr.read().decode(errors="replace") if self.proc.stderr else ""
                raise EOFError(f"{self.argv} closed stdout: {err[-2000:]}")
            self.buffer += chunk
        line, _, self.buffer = self.buffer.partition(b"\n")
        return line

    def send(self, message: dict) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(json.dumps(message, separators=(",", ":")).encode() + b"\n")
        self.proc.stdin.flush()

    def request(self, method: str, params: dict | None = None, timeout: float = 120) -> dict:
        self.next_id += 1
        self.send({"jsonrpc": "2.0", "id": self.next_id, "method": method, "params": params or {}})
        while True:
            reply = json.loads(self._line(timeout))
            if reply.get("id") == self.next_id and "method" not in reply:
                if "error" in reply:
                    raise RuntimeError(f"{method}: {reply['error']}")
                return reply["result"]

    def initialize(self, timeout: float = 120) -> dict:
        result = self.request(
            "initialize",
            {
                "protocolVersion": PROTOCOL,
                "capabilities": {},
                "clientInfo": {"name": "bench", "version": "0"},
            },
            timeout,
        )
        self.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
        return result

    def peak_rss_mib(self) -> float:
        status = Path(f"/proc/{self.proc.pid}/status").read_text()
        peak = re.search(r"VmHWM:\s+(\d+) kB", status)
        assert peak, f"no VmHWM in /proc/{self.proc.pid}/status"
        return int(peak[1]) / 1024

    def close(self, timeout: float = 60) -> int:
        """Close stdin and reap the child; its CPU time (user + system) lands in self.cpu_ms."""
        assert self.proc.stdin is not None
        self.proc.stdin.close()
        deadline = time.perf_counter() + timeout
        try:
            while True:
                pid, status, usage = os.wait4(self.proc.pid, os.WNOHANG)
                if pid:
                    self.cpu_ms = (usage.ru_utime + usage.ru_stime) * 1e3
                    self.proc.returncode = os.waitstatus_to_exitcode(status)
                    assert self.proc.stderr is not None
                    self.stderr = self.proc.stderr.read().decode(errors="replace")
                    return self.proc.returncode
                if time.perf_counter() > deadline:
                    raise TimeoutError(f"{self.argv} did not exit within {timeout} s of stdin closing")
                time.sleep(0.002)
        finally:
            if self.proc.returncode is None:
                self.proc.kill()
                self.proc.wait()
            for stream in (self.proc.stdout, self.proc.stderr):
                if stream:
                    stream.close()


# --- what each server is, and what a full session means for it -------------------------------------


OURS, FLOOR = "robot-md-mcp", "sdk floor"


@dataclass
class Contender:
    name: str  # OURS, or a floor's (any other name is a floor server)
    argv: list[str]
    env: dict[str, str]

    @property
    def tools(self) -> tuple[str, ...]:
        """Called in a full session; the first one per call."""
        return ("validate", "render") if self.name == OURS else ("t",)

    def spawn(self) -> Child:
        return Child(self.argv, self.env)

    def started(self, child: Child, timeout: float = 120) -> None:
        """Initialize, and make sure the server that answered is this one (the floor started
        through the pyz must really be the floor)."""
        info = child.initialize(timeout)["serverInfo"]
        expected = OURS if self.name == OURS else "floor"
        assert info["name"] == expected, f"{self.name}: {info} answered"


def base_env(**extra: str) -> dict[str, str]:
    # As installed (pip and the pyz keep bytecode): cached .pyc files, not a recompile per spawn.
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONDONTWRITEBYTECODE", "PYTHONPATH")}
    return {**env, **extra}


def contenders(python: str, manifest: Path) -> tuple[Contender, Contender]:
    env = base_env(PYTHONPATH=os.pathsep.join([str(ROOT), str(BENCH)]))
    ours = Contender(OURS, [python, "-m", "robot_md_mcp", str(manifest)], env)
    return ours, Contender(FLOOR, [python, "-m", "floor_server"], env)


def full_session(c: Contender) -> dict[str, Any]:
    """spawn → initialize → read every resource → call the tools → close stdin → exit."""
    child = c.spawn()
    c.started(child)
    initialized = time.perf_counter()
    for resource in child.request("resources/list")["resources"]:
        assert child.request("resources/read", {"uri": resource["uri"]})["contents"]
    for tool in c.tools:
        assert not child.request("tools/call", {"name": tool, "arguments": {}}).get("isError")
    rss = child.peak_rss_mib()
    code = child.close()
    exited = time.perf_counter()
    assert code == 0, f"{c.name} exited {code}: {child.stderr[-2000:]}"
    return {
        "unpacked": "unpacking" in child.stderr,  # the pyz's first run says so
        "initialize_ms": (initialized - child.spawned) * 1e3,
        "session_ms": (exited - child.spawned) * 1e3,
        "session_cpu_ms": child.cpu_ms,
        "rss_mib": rss,
    }


def per_call_pair(ours: Contender, floor: Contender, calls: int) -> dict[str, dict[str, list[float]]]:
    """Both servers live at once; each call to one is followed by the same call to the other (which
    goes first alternates), so a change in machine load between calls hits both alike. Sequential
    sessions were not enough here: the same code measured 0.3 ms apart from one session to the next."""
    children, targets = {}, {}
    for c in (ours, floor):
        child = c.spawn()
        c.started(child)
        uri = child.request("resources/list")["resources"][0]["uri"]
        if uri.startswith("robot-md://"):
            uri = uri.rpartition("/")[0] + "/frontmatter"
        children[c.name] = child
        targets[c.name] = (
            ("read", "resources/read", {"uri": uri}),
            ("tool", "tools/call", {"name": c.tools[0], "arguments": {}}),
        )
    out: dict[str, dict[str, list[float]]] = {c.name: {"read": [], "tool": []} for c in (ours, floor)}
    for kind in (0, 1):
        for name, child in children.items():
            child.request(*targets[name][kind][1:])  # first call: caches filled, lazy imports done
        for i in range(calls):
            for name in (ours.name, floor.name) if i % 2 else (floor.name, ours.name):
                key, method, params = targets[name][kind]
                started = time.perf_counter()
                children[name].request(method, params)
                out[name][key].append((time.perf_counter() - started) * 1e3)
    for child in children.values():
        child.close()
    return out


def p99(values: list[float]) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(0.99 * len(ordered) + 0.5) - 1)]


def interleaved(
    runs: int, a: Contender, b: Contender, measure: Callable[[Contender], dict] = full_session
) -> tuple[list[dict], list[dict]]:
    """`measure` each of the two `runs` times, alternating (and which goes first), so drift in
    machine load hits both alike."""
    out: dict[str, list[dict]] = {"a": [], "b": []}
    for i in range(runs):
        for key, c in (("b", b), ("a", a)) if i % 2 else (("a", a), ("b", b)):
            out[key].append(measure(c))
    return out["a"], out["b"]


def pairwise_ratio(ours: list[float], floor: list[float]) -> float:
    return statistics.median(x / y for x, y in zip(ours, floor))


def ratio(ours: list[dict], floor: list[dict], key: str = "initialize_ms") -> float:
    """The median of pairwise ratios of `key` between two interleaved series of runs."""
    return pairwise_ratio([r[key] for r in ours], [r[key] for r in floor])


def median_of(runs: list[dict], key: str = "initialize_ms") -> float:
    return statistics.median(r[key] for r in runs)


def medians(runs: list[dict], keys: tuple[str, ...] = ("initialize_ms", "rss_mib")) -> dict[str, float]:
    return {key: median_of(runs, key) for key in keys}


# --- the parts of the run ---------------------------------------------------------------------------


def stdio_part(args: argparse.Namespace, report: dict) -> None:
    ours, floor = contenders(sys.executable, args.manifest)
    for c in (ours, floor):  # warm the file cache and write bytecode
        full_session(c)
    s_ours, s_floor = interleaved(args.runs, ours, floor)
    for name, runs in ((OURS, s_ours), (FLOOR, s_floor)):
        report["stdio"][name] = medians(runs, ("initialize_ms", "session_ms", "session_cpu_ms", "rss_mib"))
        report["stdio"][name]["initialize_ms_min"] = min(r["initialize_ms"] for r in runs)
    report["stdio"]["spawn_to_initialize_ratio"] = ratio(s_ours, s_floor)
    # CPU time is steadier than wall time on a loaded machine: reported beside it, not judged.
    report["stdio"]["session_cpu_ratio"] = ratio(s_ours, s_floor, "session_cpu_ms")
    pairs = [per_call_pair(ours, floor, args.calls) for _ in range(args.call_sessions)]
    for name in (OURS, FLOOR):
        sessions = [pair[name] for pair in pairs]
        for key in ("read", "tool"):
            report["stdio"][name][f"{key}_median_ms"] = statistics.median(
                statistics.median(s[key]) for s in sessions
            )
            report["stdio"][name][f"{key}_p99_ms"] = statistics.median(p99(s[key]) for s in sessions)
    answer_size_part(args, report, ours, floor)
    o, f = report["stdio"][OURS], report["stdio"][FLOOR]
    report["measured"]["spawn_to_initialize_ratio"] = report["stdio"]["spawn_to_initialize_ratio"]
    report["measured"]["read_median_over_floor_ms"] = o["read_median_ms"] - f["read_median_ms"]
    report["measured"]["validate_median_over_floor_ms"] = o["tool_median_ms"] - f["tool_median_ms"]
    report["measured"]["peak_rss_over_floor_mib"] = o["rss_mib"] - f["rss_mib"]


def answer_size_part(args: argparse.Namespace, report: dict, ours: Contender, floor: Contender) -> None:
    """What the read answer's size alone costs (not judged): the floor serving the text our read
    returns (the frontmatter JSON) beside the floor serving "r". JSON encoding on both ends and
    the pipe scale with the answer; the difference is not our code. The tool, the same on both
    sides, shows the noise."""
    child = ours.spawn()
    ours.started(child)
    uri = child.request("resources/list")["resources"][0]["uri"].rpartition("/")[0] + "/frontmatter"
    text = child.request("resources/read", {"uri": uri})["contents"][0]["text"]
    child.close()
    with tempfile.TemporaryDirectory() as tmp:
        served = Path(tmp) / "answer.txt"
        served.write_text(text, encoding="utf-8")
        big = Contender("floor, our answer", floor.argv, {**floor.env, "FLOOR_TEXT_FILE": str(served)})
        check = big.spawn()
        big.started(check)
        assert check.request("resources/read", {"uri": "floor://r"})["contents"][0]["text"] == text
        check.close()
        pairs = [per_call_pair(big, floor, args.calls) for _ in range(args.call_sessions)]
    report["stdio"]["answer_chars"] = len(text)
    for key in ("read", "tool"):
        report["stdio"][f"answer_size_{key}_ms"] = statistics.median(
            statistics.median(p[big.name][key]) - statistics.median(p[floor.name][key]) for p in pairs
        )


def imports_before_first_answer(c: Contender) -> dict[str, int]:
    """Module → its own import time (µs) for everything imported before the initialize answer."""
    child = Child([c.argv[0], "-X", "importtime", *c.argv[1:]], c.env)
    c.started(child)
    child.close()
    found = re.findall(r"^import time:\s+(\d+) \|\s+\d+ \| ( *)(\S+)$", child.stderr, re.M)
    return {name: int(own) for own, _, name in found}


def import_part(report: dict) -> None:
    """What robot-md-mcp imports that the floor does not: the only startup cost beyond the SDK's
    that imports can explain (the rest is our module's own top level and reading the manifest)."""
    ours, floor = contenders(sys.executable, ROOT / "examples" / "bob.ROBOT.md")
    mine, base = imports_before_first_answer(ours), imports_before_first_answer(floor)
    extra = {name: us for name, us in mine.items() if name not in base}
    top = sorted(extra.items(), key=lambda kv: -kv[1])[:8]
    report["imports"] = {
        "ours": len(mine),
        "floor": len(base),
        "extra": sorted(extra),
        "extra_ms": sum(extra.values()) / 1e3,
        "top_extra_ms": {name: us / 1e3 for name, us in top},
    }


# Actions as agents write them, each with quantities, capabilities and gates for the floor to compute.
FLOOR_ACTIONS = (
    "pick up the glass vial and put it on the shelf",
    "pick up the 300 g vial at 0.2 m/s and place it in the rack",
    "move the wrist joint at 3 rad/s, then place the cup (800 g) 40 cm to the left",
    "don't pick anything; describe the scene and report your status",
    "reach 25 cm forward at 150 mm/s with a 0,5 kg load",
)


def floor_part(args: argparse.Namespace, report: dict) -> None:
    """check_action's computed floor (safety_floor), in this process, on the manifest: for each of
    FLOOR_ACTIONS the median over batches of 100 calls of the CPU time per call; the median of those
    (the tool's other work is the prompt's text, which the per-call part measures)."""
    sys.path.insert(0, str(ROOT))
    import robot_md_mcp as rmm

    manifest = rmm.parse(args.manifest.read_text(encoding="utf-8"))
    batches, calls = max(args.calls // 10, 5), 100
    medians = []
    for action in FLOOR_ACTIONS:
        rmm.safety_floor(manifest, action)  # the unit tables' first use
        times = []
        for _ in range(batches):  # CPU time, per batch: a shared machine's other work is not ours
            started = time.thread_time()
            for _ in range(calls):
                rmm.safety_floor(manifest, action)
            times.append((time.thread_time() - started) * 1e3 / calls)
        medians.append(statistics.median(times))
    report["floor"] = {"per_action_ms": dict(zip(FLOOR_ACTIONS, medians, strict=True))}
    report["measured"]["safety_floor_median_ms"] = statistics.median(medians)


def this_target() -> str:
    """The slim pyz's name part for this interpreter and machine, e.g. cp311-manylinux_x86_64."""
    v = sys.version_info
    return f"cp{v.major}{v.minor}-manylinux_{platform.machine()}"


def ensure_dist(args: argparse.Namespace) -> Path:
    dist = args.dist
    if not (dist / "robot-md-mcp.pyz").exists():
        print(
            f"building the pyz into {dist} (./build.sh pyz; a few minutes the first time) …", file=sys.stderr
        )
        env = {**os.environ, "PYTHON": sys.executable, "DIST": str(dist)}
        subprocess.run(
            ["bash", str(ROOT / "build.sh"), "pyz"], env=env, check=True, stdout=subprocess.DEVNULL
        )
    return dist


def pyz_contenders(pyz: Path, manifest: Path, shiv_root: Path) -> tuple[Contender, Contender]:
    env = base_env(SHIV_ROOT=str(shiv_root))
    floor_env = {**env, "SHIV_ENTRY_POINT": "floor_server:run", "PYTHONPATH": str(BENCH)}
    ours = Contender(OURS, [sys.executable, str(pyz), str(manifest)], env)
    return ours, Contender(FLOOR, [sys.executable, str(pyz)], floor_env)


def first_run_ms(pyz: Path, manifest: Path) -> float:
    with tempfile.TemporaryDirectory(prefix="bench-shiv-") as fresh:
        ours, _ = pyz_contenders(pyz, manifest, Path(fresh))
        session = full_session(ours)
        assert session["unpacked"], f"{pyz.name} did not unpack into the fresh {fresh}"
        return session["initialize_ms"]


def pyz_part(args: argparse.Namespace, report: dict) -> None:
    dist = ensure_dist(args)
    slim = sorted(dist.glob(f"robot-md-mcp-*-{this_target()}.pyz"))
    if not slim:
        raise SystemExit(f"no slim pyz for {this_target()} in {dist}")
    universal = dist / "robot-md-mcp.pyz"
    sizes = [p.stat().st_size for p in dist.glob("robot-md-mcp-*.pyz")]
    report["pyz"]["size_mb"] = {
        "universal": universal.stat().st_size / 1e6,
        "slim_min": min(sizes) / 1e6,
        "slim_max": max(sizes) / 1e6,
        "slim_here": slim[0].stat().st_size / 1e6,
    }
    for label, pyz in (("slim", slim[0]), ("universal", universal)):
        firsts = [first_run_ms(pyz, args.manifest) for _ in range(args.cold_runs)]
        with tempfile.TemporaryDirectory(prefix="bench-shiv-") as root:
            ours, floor = pyz_contenders(pyz, args.manifest, Path(root))
            for c in (ours, floor):
                full_session(c)  # unpack once, write bytecode
            w_ours, w_floor = interleaved(args.runs, ours, floor)
        report["pyz"][label] = {
            "first_run_ms": statistics.median(firsts),
            "first_run_ms_max": max(firsts),
            "warm_ms": median_of(w_ours),
            "floor_warm_ms": median_of(w_floor),
            "warm_ratio": ratio(w_ours, w_floor),
        }
    report["measured"]["slim_pyz_first_run_s"] = report["pyz"]["slim"]["first_run_ms"] / 1e3


def pi_ready() -> str | None:
    if sys.platform != "linux" or os.geteuid() != 0:
        return "needs root on Linux (the emulator chroots)"
    if not (PI_ROOTFS / "etc" / "rootfs-built-by-make_rootfs").exists():
        return f"no arm64 userland at {PI_ROOTFS} (sudo {PI_EMU}/make_rootfs.sh arm64)"
    return None


def pi_part(args: argparse.Namespace, report: dict) -> None:
    dist = ensure_dist(args)
    stage = ROOT / ".cache" / "bench-pi"  # inside the cwd, which the emulator bind-mounts
    shutil.rmtree(stage, ignore_errors=True)
    stage.mkdir(parents=True)
    pyz = stage / "robot-md-mcp.pyz"
    shutil.copyfile(dist / "robot-md-mcp.pyz", pyz)
    manifest = stage / "ROBOT.md"
    shutil.copyfile(args.manifest, manifest)
    guest_env = [f"SHIV_ROOT={stage / 'shiv'}"]
    run_in = ["bash", str(PI_EMU / "run_in_arm64.sh"), "env", *guest_env]
    env = base_env()
    ours = Contender(OURS, [*run_in, "python3", str(pyz), str(manifest)], env)
    floor_argv = [*run_in, "SHIV_ENTRY_POINT=floor_server:run", f"PYTHONPATH={BENCH}", "python3", str(pyz)]
    floor = Contender(FLOOR, floor_argv, env)

    def start(c: Contender) -> dict:
        child = c.spawn()
        c.started(child, timeout=600)
        took = (time.perf_counter() - child.spawned) * 1e3
        child.close(timeout=120)
        return {"initialize_ms": took}

    first = start(ours)["initialize_ms"]  # unpacks
    start(floor)
    r_ours, r_floor = interleaved(args.pi_runs, ours, floor, start)
    report["pi"] = {
        "first_run_ms": first,
        "warm_ms": median_of(r_ours),
        "floor_warm_ms": median_of(r_floor),
        "warm_ratio": ratio(r_ours, r_floor),
        "runs": args.pi_runs,
    }
    report["measured"]["pi_warm_start_ratio"] = report["pi"]["warm_ratio"]
    shutil.rmtree(stage, ignore_errors=True)


def sid_ready() -> str | None:
    if sys.platform != "linux" or os.geteuid() != 0:
        return "needs root on Linux (the userland is a chroot)"
    if not (SID_ROOTFS / "usr" / "bin" / "python3.15").exists():
        return f"no Debian sid userland with CPython 3.15 at {SID_ROOTFS} (see .ci/run)"
    return None


def in_sid(*argv: str) -> list[str]:
    return ["env", "ARCH=amd64", f"ROOTFS={SID_ROOTFS}", "bash", str(PI_EMU / "run_in_arm64.sh"), *argv]


def sid_venv() -> Path:
    """CPython 3.15's environment with the pinned dependencies (made once, inside the cwd, which the
    userland bind-mounts); the server itself runs from the checkout (`python -m` finds it first)."""
    venv = ROOT / ".cache" / "bench-cp315"
    if not (venv / "bin" / "python").exists():
        shutil.rmtree(venv, ignore_errors=True)
        pip = f"{venv}/bin/pip install -q --only-binary=:all: -c packaging/constraints.txt ."
        command = f"python3.15 -m venv {venv} && {pip}"
        subprocess.run(in_sid("sh", "-c", command), cwd=ROOT, check=True, timeout=900)
    return venv


def lazy_part(args: argparse.Namespace, report: dict) -> None:
    venv = sid_venv()
    manifest = venv / "ROBOT.md"
    shutil.copyfile(args.manifest, manifest)

    def run(name: str, settings: list[str], *argv: str) -> Contender:
        return Contender(name, in_sid("env", *settings, f"{venv}/bin/python", "-m", *argv), base_env())

    floor = [f"PYTHONPATH={BENCH}"]
    runs = {  # ours lazy as the command line makes it; the floor lazy from its first import
        "lazy": run(OURS, [], "robot_md_mcp", str(manifest)),
        "eager": run(OURS, ["PYTHON_LAZY_IMPORTS=normal"], "robot_md_mcp", str(manifest)),
        "floor lazy": run(FLOOR, [*floor, "PYTHON_LAZY_IMPORTS=all"], "floor_server"),
        "floor eager": run(FLOOR, [*floor, "PYTHON_LAZY_IMPORTS=normal"], "floor_server"),
    }
    for c in runs.values():  # bytecode written, files cached
        full_session(c)
    got: dict[str, list[dict]] = {}
    for one, two in (("lazy", "eager"), ("floor lazy", "floor eager")):
        got[one], got[two] = interleaved(args.runs, runs[one], runs[two])
    report["lazy"] = {name: medians(r) for name, r in got.items()}
    # The floor's: what the SDK alone allows (reported, not judged).
    report["lazy"]["floor_ratio"] = ratio(got["floor lazy"], got["floor eager"])
    report["measured"]["lazy_initialize_ratio"] = ratio(got["lazy"], got["eager"])
    report["measured"]["lazy_peak_rss_mib"] = max(r["rss_mib"] for r in got["lazy"])


# --- a fleet: one server, many manifests (issue 36) -------------------------------------------------


def make_fleet(folder: Path, count: int) -> list[str]:
    """`count` copies of tests/corpus in `folder` (DIR/NAME/ROBOT.md), each its own robot_name (those
    without one stay broken robots, as in a real folder); the names given."""
    corpus = sorted(p for p in (ROOT / "tests" / "corpus").glob("*.ROBOT.md"))
    names = []
    for i in range(count):
        name = f"r{i:04}"
        text = corpus[i % len(corpus)].read_text(encoding="utf-8")
        text, found = re.subn(r"(?m)^(\s*robot_name:).*$", rf"\g<1> {name}", text, count=1)
        if found:
            names.append(name)
        (folder / name).mkdir(parents=True)
        (folder / name / "ROBOT.md").write_text(text, encoding="utf-8")
    return names


def cpu_seconds(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def wait_for_notification(child: Child, method: str, timeout: float) -> float:
    """Seconds until a notification `method` arrives."""
    started = time.perf_counter()
    while True:
        message = json.loads(child._line(timeout))
        if message.get("method") == method:
            return time.perf_counter() - started


def brief_beside_one(child: Child, arguments: dict, one: Child | None, calls: int) -> dict:
    """brief per call, median; beside `one` (the one-robot server, live at the same time) with the
    calls alternating, so the machine's load hits both alike: the pairwise ratio too."""
    times: dict[str, list[float]] = {"fleet": [], "one": []}
    for i in range(calls):
        pairs = [("fleet", child, arguments), *([("one", one, {})] if one is not None else [])]
        for name, server, given in pairs if i % 2 else reversed(pairs):
            started = time.perf_counter()
            assert not server.request("tools/call", {"name": "brief", "arguments": given}).get("isError")
            times[name].append((time.perf_counter() - started) * 1e3)
    out = {"brief_median_ms": statistics.median(times["fleet"])}
    if one is not None:
        out["one_robot_brief_median_ms"] = statistics.median(times["one"])
        out["brief_ratio_to_one"] = pairwise_ratio(times["fleet"], times["one"])
    return out


def fleet_once(
    argv: list[str],
    env: dict[str, str],
    robot: str | None,
    folder: Path,
    calls: int,
    one: Child | None = None,
) -> dict:
    """One fleet (or one robot) server: start to initialize and to tools/list, tools/list's bytes, brief
    per call, until every robot is checked, idle CPU, a change seen, peak RSS."""
    child = Child(argv, env)
    child.initialize()
    initialized = time.perf_counter()
    listed = child.request("tools/list")
    first = time.perf_counter()
    out = {
        # CPU seconds to the first answer: what a quiet machine's wall time would be, near enough
        "initialize_cpu_s": cpu_seconds(child.proc.pid),
        "initialize_ms": (initialized - child.spawned) * 1e3,
        "tools_list_ms": (first - child.spawned) * 1e3,
        "tools_list_bytes": len(json.dumps(listed, separators=(",", ":"))),
    }
    arguments = {"robot": robot} if robot is not None else {}
    while robot is not None:  # checked: no robot says "checking"
        view = child.request("tools/call", {"name": "fleet", "arguments": {}})["structuredContent"]
        if all(row["validity"] != "checking" for row in view["robots"]):
            break
        time.sleep(0.2)
    out["checked_ms"] = (time.perf_counter() - child.spawned) * 1e3
    out.update(brief_beside_one(child, arguments, one, calls))
    before, wall = cpu_seconds(child.proc.pid), time.perf_counter()
    time.sleep(10)
    out["idle_cpu_percent"] = 100 * (cpu_seconds(child.proc.pid) - before) / (time.perf_counter() - wall)
    uri = f"robot-md://{robot or 'bob'}/context"
    child.request("resources/subscribe", {"uri": uri})
    path = folder / robot / "ROBOT.md" if robot is not None else folder
    path.write_text(path.read_text(encoding="utf-8") + "\nEdited.\n", encoding="utf-8")
    out["change_seen_s"] = wait_for_notification(child, "notifications/resources/updated", 30)
    out["rss_mib"] = child.peak_rss_mib()
    child.close()
    return out


def fleet_part(args: argparse.Namespace, report: dict) -> None:
    """One robot (bob, one PATH), then fleets of the corpus's copies, --fleet DIR over stdio."""
    env = base_env(PYTHONPATH=str(ROOT))
    python = [sys.executable, "-m", "robot_md_mcp"]
    with tempfile.TemporaryDirectory() as tmp:
        one = Path(tmp) / "bob.ROBOT.md"
        shutil.copy(args.manifest, one)
        report["fleet"] = {"1": fleet_once([*python, str(one)], env, None, one, args.calls)}
        for count in args.fleet_sizes:
            folder = Path(tmp) / f"fleet{count}"
            names = make_fleet(folder, count)
            robot = names[len(names) // 2]  # its file a copy of the one robot's: per call compares alike
            bob = args.manifest.read_text(encoding="utf-8")
            bob = re.sub(r"(?m)^(\s*robot_name:).*$", rf"\g<1> {robot}", bob, count=1)
            (folder / robot / "ROBOT.md").write_text(bob, encoding="utf-8")
            beside = Child([*python, str(one)], env)
            beside.initialize()
            run = fleet_once([*python, "--fleet", str(folder)], env, robot, folder, args.calls, beside)
            beside.close()
            report["fleet"][str(count)] = run


# --- judging and printing ------------------------------------------------------------------------------


def budgets(report: dict) -> list[tuple[str, float, float, bool]]:
    rows = []
    for name, (limit, _, _) in BUDGETS.items():
        if name in report["measured"]:
            value = report["measured"][name]
            rows.append((name, value, limit, value <= limit))
    return rows


STDIO_COLUMNS = (  # heading, key, format
    ("→ initialize", "initialize_ms", "{:.0f} ms"),
    ("full session", "session_ms", "{:.0f} ms"),
    ("session CPU", "session_cpu_ms", "{:.0f} ms"),
    ("read", "read_median_ms", "{:.3f} ms"),
    ("read p99", "read_p99_ms", "{:.3f} ms"),
    ("tool", "tool_median_ms", "{:.3f} ms"),
    ("tool p99", "tool_p99_ms", "{:.3f} ms"),
    ("peak RSS", "rss_mib", "{:.1f} MiB"),
)


def print_stdio(s: dict, cfg: dict) -> None:
    print(
        f"\nstdio, {cfg['runs']} interleaved spawns each; per call: median of {cfg['call_sessions']} "
        f"pairs of live sessions × {cfg['calls']} calls, alternating between the two (p99 likewise)"
    )
    print("  " + " " * 14 + "".join(f"{heading:>13}" for heading, _, _ in STDIO_COLUMNS))
    for name in (OURS, FLOOR):
        cells = (form.format(s[name][key]) for _, key, form in STDIO_COLUMNS)
        print(f"  {name:14}" + "".join(f"{cell:>13}" for cell in cells))
    print(f"  session CPU time, median of pairwise ratios: {s['session_cpu_ratio']:.3f}")
    print(
        f"  the answer's size alone: the floor serving our read's text ({s['answer_chars']} chars) "
        f"instead of 1 takes {s['answer_size_read_ms']:+.3f} ms per read (tool, unchanged: "
        f"{s['answer_size_tool_ms']:+.3f} ms)"
    )


def print_beyond_stdio(report: dict) -> None:
    """The pyz, the Pi and CPython 3.15, each where it ran."""
    if p := report.get("pyz"):
        size = p["size_mb"]
        print(
            f"\npyz: universal {size['universal']:.1f} MB, slim {size['slim_min']:.1f}–"
            f"{size['slim_max']:.1f} MB ({size['slim_here']:.1f} MB for {this_target()})"
        )
        for label in ("slim", "universal"):
            r = p[label]
            print(
                f"  {label:10} first run {r['first_run_ms']:6.0f} ms (max {r['first_run_ms_max']:.0f})   "
                f"warm {r['warm_ms']:5.0f} ms   floor through the same pyz {r['floor_warm_ms']:5.0f} ms   "
                f"ratio {r['warm_ratio']:.3f}"
            )
    if pi := report.get("pi"):
        print(
            f"\nemulated Pi (qemu arm64, python3.11), {pi['runs']} interleaved warm starts each: first run "
            f"{pi['first_run_ms'] / 1e3:.1f} s, warm {pi['warm_ms'] / 1e3:.2f} s, floor "
            f"{pi['floor_warm_ms'] / 1e3:.2f} s, ratio {pi['warm_ratio']:.3f}"
        )
    if lazy := report.get("lazy"):
        a, b, f, g = (lazy[mode] for mode in ("lazy", "eager", "floor lazy", "floor eager"))
        print(
            f"\nCPython 3.15 (Debian sid), {report['config']['runs']} interleaved full sessions each: lazy "
            f"imports {a['initialize_ms']:.0f} ms to initialize, {a['rss_mib']:.1f} MiB peak; eager "
            f"{b['initialize_ms']:.0f} ms, {b['rss_mib']:.1f} MiB"
        )
        print(
            f"  the SDK floor, lazy from its first import {f['initialize_ms']:.0f} ms, eager "
            f"{g['initialize_ms']:.0f} ms, ratio {lazy['floor_ratio']:.3f} (not judged)"
        )


def print_report(report: dict) -> None:
    print(f"robot-md-mcp benchmark: {report['host']}")
    if report["stdio"]:
        print_stdio(report["stdio"], report["config"])
    imp = report["imports"]
    print(
        f"\nimported before the first answer: {imp['ours']} modules, the floor {imp['floor']}; ours beyond "
        f"the floor's take {imp['extra_ms']:.1f} ms (own time; -X importtime): "
        + ", ".join(f"{name} {ms:.1f}" for name, ms in imp["top_extra_ms"].items())
    )
    print_beyond_stdio(report)
    print(
        "\ncheck_action's computed floor, in process, median per call: "
        + ", ".join(f"{ms:.3f} ms" for ms in report["floor"]["per_action_ms"].values())
    )
    print("\nbudgets")
    for name, value, limit, ok in budgets(report):
        _, what, unit = BUDGETS[name]
        print(f"  {'ok  ' if ok else 'MISS'} {value:8.3f} {unit:3} ≤ {limit:<5} {what}")


def arguments() -> argparse.Namespace:
    ap = argparse.ArgumentParser(
        description=__doc__.splitlines()[0],
        epilog=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    ap.add_argument("--manifest", type=Path, default=ROOT / "examples" / "bob.ROBOT.md")
    ap.add_argument("--runs", type=int, default=21, help="interleaved spawns per server (default 21)")
    ap.add_argument("--calls", type=int, default=200, help="calls per kind per session (default 200)")
    ap.add_argument(
        "--call-sessions", type=int, default=5, help="pairs of live sessions for per-call latency (default 5)"
    )
    ap.add_argument("--cold-runs", type=int, default=5, help="first runs (unpack) per pyz")
    ap.add_argument("--pi-runs", type=int, default=21, help="interleaved warm starts per server on the Pi")
    ap.add_argument(
        "--dist", type=Path, default=ROOT / ".cache" / "bench-dist", help="built pyz files (built if absent)"
    )
    ap.add_argument("--no-pyz", action="store_true", help="skip the pyz part")
    ap.add_argument("--no-pi", action="store_true", help="skip the emulated Pi")
    ap.add_argument("--no-lazy", action="store_true", help="skip CPython 3.15's lazy-import part")
    ap.add_argument("--fleet-only", action="store_true", help="only the fleet part (1, 20, 1,000 robots)")
    sizes = lambda t: [int(n) for n in t.split(",")]  # noqa: E731
    ap.add_argument("--fleet-sizes", type=sizes, default=[20, 1000], help="fleets measured")
    ap.add_argument("--quick", action="store_true", help="smoke run: 3 of everything, budgets not judged")
    ap.add_argument("--json", type=Path, help="write the report here too")
    args = ap.parse_args()
    args.manifest = args.manifest.resolve()
    if args.quick:
        args.runs = args.call_sessions = args.cold_runs = args.pi_runs = 3
        args.calls = 20
    return args


def main() -> int:
    args = arguments()
    report: dict = {
        "host": f"CPython {platform.python_version()} on {platform.machine()}, {os.cpu_count()} cores",
        "config": {k: v for k, v in vars(args).items() if isinstance(v, (int, bool))},
        "stdio": {},
        "pyz": {},
        "measured": {},
    }
    if args.fleet_only:
        fleet_part(args, report)
        print(json.dumps(report["fleet"], indent=2))
        return 0
    import_part(report)
    floor_part(args, report)
    stdio_part(args, report)
    if not args.no_pyz:
        pyz_part(args, report)
    for skipped, name, label, ready, part in (
        (args.no_pi, "pi", "emulated Pi", pi_ready, pi_part),
        (args.no_lazy, "lazy", "CPython 3.15 part", sid_ready, lazy_part),
    ):
        why_not = None if skipped else ready()
        if why_not:
            print(f"{label} skipped: {why_not}", file=sys.stderr)
            report[f"{name}_skipped"] = why_not
        elif not skipped:
            part(args, report)
    print_report(report)
    report["budgets"] = {
        name: {"value": v, "limit": limit, "ok": ok} for name, v, limit, ok in budgets(report)
    }
    if args.json:
        args.json.write_text(json.dumps(report, indent=2) + "\n")
    print(json.dumps(report["measured"]))
    missed = [name for name, *_, ok in budgets(report) if not ok]
    return 1 if missed and not args.quick else 0


if __name__ == "__main__":
    raise SystemExit(main())
