#!/usr/bin/env python3
"""Drive one full MCP session through any stdio server command and check it.

    python tests/support/pyz_session.py [--expect-robot NAME] [--timeout S] -- CMD [ARG...]

e.g. `python tests/support/pyz_session.py -- python3 dist/robot-md-mcp.pyz examples/bob.ROBOT.md`.
A thin command line over the test harness (tests/support/serving.py: `launched_session`), which
is standard library only, so this runs on a bare CI runner, under emulation, or beside any
interpreter the pyz is being proven on. Prints one summary line; exit 1 on failure.
"""

from __future__ import annotations

import argparse
import subprocess
import sys

from serving import launched_session


def main() -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--expect-robot", help="robot_name the URIs must carry")
    parser.add_argument("--timeout", type=float, default=120.0, help="seconds per reply (emulation is slow)")
    parser.add_argument("command", nargs=argparse.REMAINDER)
    args = parser.parse_args()
    command = args.command[1:] if args.command[:1] == ["--"] else args.command
    if not command:
        parser.error("give the server command after --")
    try:
        print(launched_session(*command, expect_robot=args.expect_robot, timeout=args.timeout))
    except (AssertionError, OSError, ValueError, subprocess.TimeoutExpired) as e:
        print(f"pyz-session: FAILED: {e}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
