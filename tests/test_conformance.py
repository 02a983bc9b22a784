"""The official MCP conformance suite against our Streamable HTTP endpoint.

Every scenario that can apply to a read-only server for one ROBOT.md must pass;
the rest are listed, with reasons, in conformance-expected-failures.yml. Any
change fails this test: a required scenario failing, an unlisted one failing,
or a listed one starting to pass (then the baseline is stale: remove it)."""

from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path

import pytest
import yaml
from conftest import ROOT, SERVER
from node22 import node22, node_env, npm_tool
from serving import Served

pytestmark = pytest.mark.heavy  # installs Node 22 and the conformance suite from npm

SUITE = ("@modelcontextprotocol/conformance", "0.1.16")
BASELINE = ROOT / "tests" / "conformance-expected-failures.yml"
REQUIRED = (
    "server-initialize",
    "ping",
    "logging-set-level",
    "completion-complete",
    "tools-list",
    "tools-call-error",
    "resources-list",
    "resources-subscribe",
    "resources-unsubscribe",
    "prompts-list",
    "server-sse-multiple-streams",
    "dns-rebinding-protection",
)


def scenario_results(out: Path) -> dict[str, list[dict]]:
    """scenario -> its checks, from the suite's server-<scenario>-<timestamp>/checks.json."""
    results = {}
    for checks in out.glob("server-*/checks.json"):
        name = re.sub(r"-\d{4}-\d{2}-\d{2}T[\d-]+Z$", "", checks.parent.name.removeprefix("server-"))
        results[name] = json.loads(checks.read_text(encoding="utf-8"))
    return results


def test_conformance_suite(tmp_path: Path) -> None:
    node = node22()
    cli = npm_tool(*SUITE) / "node_modules" / SUITE[0] / "dist" / "index.js"
    baseline = set(yaml.safe_load(BASELINE.read_text(encoding="utf-8"))["server"])
    assert not baseline & set(REQUIRED), "a required scenario must not be baselined"

    served = Served("--http", "127.0.0.1:0", command=SERVER)
    try:
        argv = [str(node), str(cli), "server", "--url", served.url]
        argv += ["--expected-failures", str(BASELINE), "-o", str(tmp_path)]
        done = subprocess.run(argv, capture_output=True, text=True, timeout=600, env=node_env(node))
    finally:
        assert served.stop() == 0
    results = scenario_results(tmp_path)
    failing = {
        name: "; ".join(c.get("errorMessage") or c["status"] for c in checks if c["status"] != "SUCCESS")
        for name, checks in results.items()
        if any(c["status"] != "SUCCESS" for c in checks)
    }
    missing = [name for name in REQUIRED if name not in results]
    assert not missing, f"scenarios the suite did not run: {missing}\n{done.stdout[-3000:]}"
    broken = {name: why for name, why in failing.items() if name in REQUIRED}
    assert not broken, f"required scenarios failed: {json.dumps(broken, indent=2)}"
    assert set(failing) - baseline == set(), f"unexpected failures: {failing}"
    stale = baseline - set(failing)
    assert not stale, f"baseline entries that now pass (remove them from {BASELINE.name}): {stale}"
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-2000:]
    assert "Traceback" not in served.stderr, served.stderr
