"""Benchmark (not a test): spawn → initialize response, robot-md-mcp vs the
bare SDK floor, spawns interleaved so machine noise hits both alike.

    python tests/bench/startup.py [--runs 21] [--manifest examples/bob.ROBOT.md]

Prints a table and one JSON line. Times are wall-clock medians in ms.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
INITIALIZE = (
    json.dumps(
        {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "initialize",
            "params": {
                "protocolVersion": "2025-11-25",
                "capabilities": {},
                "clientInfo": {"name": "bench", "version": "0"},
            },
        }
    )
    + "\n"
).encode()


# As installed (pip and the pyz keep bytecode): cached .pyc files, not a recompile per spawn.
ENV = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}


def spawn_to_initialize(argv: list[str]) -> float:
    started = time.perf_counter()
    proc = subprocess.Popen(
        argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, cwd=ROOT, env=ENV
    )
    assert proc.stdin and proc.stdout
    proc.stdin.write(INITIALIZE)
    proc.stdin.flush()
    line = proc.stdout.readline()
    elapsed = (time.perf_counter() - started) * 1000
    proc.stdin.close()
    proc.wait(timeout=30)
    assert b'"serverInfo"' in line, line
    return elapsed


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=21)
    ap.add_argument("--manifest", default=str(ROOT / "examples" / "bob.ROBOT.md"))
    args = ap.parse_args()
    servers = {
        "robot-md-mcp": [sys.executable, str(ROOT / "robot_md_mcp.py"), args.manifest],
        "sdk floor": [sys.executable, str(ROOT / "tests" / "bench" / "floor_server.py")],
    }
    for argv in servers.values():  # warm the OS file cache and bytecode
        spawn_to_initialize(argv)
    times: dict[str, list[float]] = {name: [] for name in servers}
    for _ in range(args.runs):
        for name, argv in servers.items():
            times[name].append(spawn_to_initialize(argv))
    ratios = [a / b for a, b in zip(times["robot-md-mcp"], times["sdk floor"])]
    print(
        f"spawn → initialize, {args.runs} interleaved runs, {sys.implementation.name} "
        f"{sys.version.split()[0]} on {os.uname().machine}"
    )
    for name, values in times.items():
        print(
            f"  {name:13} median {statistics.median(values):7.1f} ms   min {min(values):7.1f}   "
            f"max {max(values):7.1f}"
        )
    print(f"  ratio (median of pairwise robot-md-mcp / floor): {statistics.median(ratios):.3f}")
    print(
        json.dumps(
            {
                "spawn_to_initialize_ms": {k: statistics.median(v) for k, v in times.items()},
                "ratio": statistics.median(ratios),
            }
        )
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
