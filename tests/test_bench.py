"""The benchmark (tests/bench/bench.py) runs end to end and measures everything it claims to:
a smoke run, three repetitions of each part, against the pyz this test run built. Its budgets
are judged only by a real run (`python tests/bench/bench.py`): timings on a shared machine
are not a test."""

from __future__ import annotations

import json
import math
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import IN_CI, ROOT, posix_only

sys.path.insert(0, str(ROOT / "tests" / "bench"))
import bench

# Heavy: builds the pyz and runs the benchmark (in CI also on the emulated Pi, ../shared/tools/pi-emu).
pytestmark = pytest.mark.heavy


@posix_only
def test_smoke_run_measures_every_budget(built_dist: Path, tmp_path: Path) -> None:
    why_no_pi, why_no_sid = bench.pi_ready(), bench.sid_ready()
    assert not (why_no_pi and IN_CI), f"CI must provide the emulated Pi: {why_no_pi}"
    assert not (why_no_sid and IN_CI), f"CI must provide Debian sid's CPython 3.15: {why_no_sid}"
    out = tmp_path / "report.json"
    argv = [sys.executable, str(ROOT / "tests" / "bench" / "bench.py"), "--quick", "--dist", str(built_dist)]
    argv += ["--json", str(out), *(["--no-pi"] if why_no_pi else []), *(["--no-lazy"] if why_no_sid else [])]
    done = subprocess.run(argv, capture_output=True, text=True, timeout=1800, cwd=tmp_path)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    report = json.loads(out.read_text())

    expected = set(bench.BUDGETS) - ({"pi_warm_start_ratio"} if why_no_pi else set())
    expected -= bench.SID_BUDGETS if why_no_sid else set()
    assert set(report["measured"]) == expected
    assert all(math.isfinite(v) for v in report["measured"].values())
    for name in ("robot-md-mcp", "sdk floor"):
        numbers = report["stdio"][name]
        assert 0 < numbers["initialize_ms"] < numbers["session_ms"]
        assert numbers["rss_mib"] > 10 and numbers["session_cpu_ms"] > 0
        assert 0 < numbers["read_median_ms"] <= numbers["read_p99_ms"]
        assert 0 < numbers["tool_median_ms"] <= numbers["tool_p99_ms"]
    assert report["stdio"]["answer_chars"] > 1000  # the floor served our frontmatter answer
    assert math.isfinite(report["stdio"]["answer_size_read_ms"] + report["stdio"]["answer_size_tool_ms"])
    sizes = report["pyz"]["size_mb"]
    assert sizes["slim_min"] <= sizes["slim_here"] <= sizes["slim_max"] < sizes["universal"]
    for kind in ("slim", "universal"):  # each first run was checked to unpack into a fresh folder
        assert report["pyz"][kind]["first_run_ms"] > 0 and report["pyz"][kind]["warm_ms"] > 0
    if not why_no_sid:  # both modes ran a full session on CPython 3.15, ours and the floor's
        modes = ("lazy", "eager", "floor lazy", "floor eager")
        assert all(report["lazy"][mode]["initialize_ms"] > 0 for mode in modes)
        assert 0 < report["lazy"]["floor_ratio"] < 2
    assert "budgets" in done.stdout and "robot-md-mcp" in done.stdout
