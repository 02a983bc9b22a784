"""Which modules of a slim pyz a session loads: packaging/session-modules.txt, read by build_pyz.py.

    python packaging/session_modules.py [--write] PYZ [PYZ...]

Runs each slim pyz (with the python3.X its name asks for, from PATH) through what users do with it:
`validate`, `render`, a full stdio session (tests/pyz_session.py: resources, tools, prompts,
completion, subscriptions) and an HTTP session, each recording at exit the files of the pyz's
site-packages it loaded. Prints the union (with --write: adds it to session-modules.txt, keeping
entries other CPythons or platforms recorded). A slim pyz carries bytecode for these and for our own
package only: what a session runs is compiled once, at build time, and the bytecode of modules no
session loads (more than a MB) stays out. A stale list never breaks anything (a listed file that is
gone is skipped; an unlisted one is compiled if it is ever imported); tests/test_pyz.py says when
it needs refreshing.
"""

from __future__ import annotations

import argparse
import http.client
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
LISTING = HERE / "session-modules.txt"
EXAMPLE = ROOT / "examples" / "bob.ROBOT.md"
HEADER = (
    "# The site-packages files a session loads, as packaging/session_modules.py recorded them:\n"
    "# slim pyz files carry bytecode for these (and all of our own package) only; see that script.\n"
)
# `python -c HOOK PYZ ARGS…`: run the pyz as `python PYZ ARGS…` would, and at exit append the files
# of its site-packages that were loaded to $RECORD_TO.
HOOK = """
import atexit, os, runpy, sys
def record():
    site = os.path.realpath(sys.robot_md_mcp_pyz["site"])
    with open(os.environ["RECORD_TO"], "a") as out:
        for module in list(sys.modules.values()):
            path = os.path.realpath(getattr(module, "__file__", None) or os.sep)
            if path.startswith(site + os.sep) and path.endswith((".py", ".pyc")):
                out.write(os.path.relpath(path, site).replace(os.sep, "/").removesuffix("c") + "\\n")
atexit.register(record)
sys.argv = sys.argv[1:]
del sys.path[0]  # -c's current folder: `python PYZ` puts only the pyz there, as run_path does
runpy.run_path(sys.argv[0], run_name="__main__")
"""


def python_for(pyz: Path) -> str:
    match = re.search(r"-cp3(\d+)-", pyz.name)
    if not match:
        raise SystemExit(f"{pyz.name}: not a slim pyz (robot-md-mcp-VERSION-cp3XY-PLATFORM.pyz)")
    found = shutil.which(f"python3.{match[1]}")
    if not found:
        raise SystemExit(f"{pyz.name}: python3.{match[1]} is not on PATH")
    return found


def http_session(command: list[str], env: dict[str, str], cwd: str) -> None:
    """Serve over HTTP on a free port, run a session through it, stop with SIGTERM."""
    argv = [*command, "--http", "127.0.0.1:0"]
    proc = subprocess.Popen(argv, stderr=subprocess.PIPE, text=True, env=env, cwd=cwd)
    try:
        assert proc.stderr is not None
        start = ""
        deadline = time.monotonic() + 120
        while " at http://" not in start:
            start = proc.stderr.readline()
            if not start or time.monotonic() > deadline:
                raise SystemExit(f"the HTTP server did not start: {start!r}")
        port = int(re.search(r":(\d+)/mcp", start)[1])  # type: ignore[index]
        headers = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream"}

        def post(method: str, params: dict | None = None, notify: bool = False) -> dict:
            message: dict = {"jsonrpc": "2.0", "method": method, "params": params or {}}
            if not notify:
                message["id"] = 1
            conn = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
            conn.request("POST", "/mcp", json.dumps(message), headers)
            response = conn.getresponse()
            body = response.read().decode()
            headers.setdefault("mcp-session-id", response.getheader("mcp-session-id") or "")
            conn.close()
            if notify:
                return {}
            reply = json.loads(body.rsplit("data: ", 1)[-1])
            if "error" in reply:
                raise SystemExit(f"HTTP {method}: {reply['error']}")
            return reply["result"]

        version = {"protocolVersion": "2025-06-18", "capabilities": {}}
        post("initialize", {**version, "clientInfo": {"name": "session-modules", "version": "1"}})
        headers["mcp-protocol-version"] = version["protocolVersion"]
        post("notifications/initialized", notify=True)
        for resource in post("resources/list")["resources"]:
            post("resources/read", {"uri": resource["uri"]})
        for tool in ("validate", "render"):
            post("tools/call", {"name": tool, "arguments": {}})
        post("prompts/get", {"name": "brief-me", "arguments": {}})
        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
        conn.request("DELETE", "/mcp", headers=headers)
        conn.getresponse().read()
    finally:
        proc.send_signal(signal.SIGTERM)
        proc.wait(60)


def record(pyz: Path) -> set[str]:
    """The site-packages files (as .py paths) that pyz's verbs and sessions load."""
    python = python_for(pyz)
    command = [python, "-c", HOOK, str(pyz)]
    with tempfile.TemporaryDirectory() as tmp:
        env = {**os.environ, "RECORD_TO": str(Path(tmp) / "loaded.txt"), "SHIV_ROOT": tmp}
        run = {"env": env, "cwd": tmp, "check": True, "capture_output": True, "timeout": 300}
        for verb in ("validate", "render"):
            subprocess.run([*command, verb, str(EXAMPLE)], **run)
        driver = [sys.executable, str(ROOT / "tests" / "pyz_session.py"), "--"]
        subprocess.run([*driver, *command, str(EXAMPLE)], **run)
        http_session([*command, str(EXAMPLE)], env, tmp)
        return set((Path(tmp) / "loaded.txt").read_text().split())


def read_listing(path: Path = LISTING) -> set[str]:
    if not path.exists():
        return set()
    return {line for line in path.read_text().splitlines() if line and not line.startswith("#")}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--write", action="store_true", help=f"add what was loaded to {LISTING.name}")
    parser.add_argument("pyz", nargs="+", type=Path)
    args = parser.parse_args()
    loaded = set().union(*map(record, args.pyz))
    if args.write:
        LISTING.write_text(HEADER + "".join(f"{p}\n" for p in sorted(loaded | read_listing())))
        print(f"{LISTING}: {len(loaded)} files loaded, {len(read_listing())} listed")
    else:
        print("\n".join(sorted(loaded)))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
