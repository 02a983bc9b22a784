#!/usr/bin/env python3
"""Which installed distributions differ from packaging/constraints.txt: a Markdown report.

    python .github/drift_report.py [--constraints FILE] [--status success|failure]

The drift workflow installs the newest releases pyproject.toml allows and runs the tests; this
says what moved since the pins (the first suspects when it fails), and what is installed that the
pins do not name (test tools, or a new dependency). It reads the markers for this interpreter and
the versions from importlib.metadata (what `pip freeze` lists). Needs `packaging`.
"""

from __future__ import annotations

import argparse
import sys
from importlib.metadata import PackageNotFoundError, distributions, version
from pathlib import Path

from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

ROOT = Path(__file__).resolve().parent.parent


def pins(constraints: Path) -> dict[str, str]:
    """{distribution: pinned version} of the constraints whose markers hold here."""
    lines = (line.split("#", 1)[0].strip() for line in constraints.read_text(encoding="utf-8").splitlines())
    found: dict[str, str] = {}
    for line in filter(None, lines):
        requirement = Requirement(line)
        if requirement.marker is None or requirement.marker.evaluate():
            (spec,) = requirement.specifier
            found[canonicalize_name(requirement.name)] = spec.version
    return found


def installed(name: str) -> str:
    try:
        return version(name)
    except PackageNotFoundError:
        return "not installed"


def report(constraints: Path, status: str) -> str:
    pinned = pins(constraints)
    moved = {name: (pin, installed(name)) for name, pin in sorted(pinned.items()) if installed(name) != pin}
    others = sorted({canonicalize_name(d.metadata["Name"]): d.version for d in distributions()}.items())
    others = [(name, v) for name, v in others if name not in pinned]
    headline = "The newest dependencies FAIL the tests" if status == "failure" else "The newest dependencies"
    lines = [f"## {headline} (CPython {sys.version.split()[0]})", ""]
    if moved:
        lines += [f"Moved since {constraints.name} (the first suspects):", ""]
        lines += ["| distribution | pinned | installed |", "|---|---|---|"]
        lines += [f"| {name} | {pin} | {now} |" for name, (pin, now) in moved.items()]
    else:
        lines += [f"Every pinned distribution is at its {constraints.name} version."]
    lines += ["", f"Installed but not pinned: {', '.join(f'{n} {v}' for n, v in others) or 'nothing'}."]
    return "\n".join(lines) + "\n"


def main() -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--constraints", type=Path, default=ROOT / "packaging" / "constraints.txt")
    parser.add_argument("--status", default="success", help="the job's status so far")
    args = parser.parse_args()
    print(report(args.constraints, args.status), end="")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
