#!/usr/bin/env bash
# Build robot-md-mcp's release files into $DIST (default dist/).
#   ./build.sh                 the release set: universal and slim pyz, wheel, sdist, the MCP Bundle,
#                              dist/server.json, and SHA256SUMS of them all (Python only, no Node)
#   ./build.sh pyz             robot-md-mcp.pyz for Linux/macOS/Windows x CPython 3.10-3.15 and one slim pyz
#                              per platform+CPython (packaging/build_pyz.py; needs only Python)
#   ./build.sh pyz --here      just yours: the one slim pyz for this machine and the CPython that runs the
#                              build (PYTHON); where no pyz serves them it says why in one line, exit 2
#   ./build.sh wheel           the wheel (pip install / pipx install)
#   ./build.sh sdist           the source archive
#   ./build.sh mcpb            robot-md-mcp.mcpb for Claude Desktop and server.json for the MCP Registry
#                              (packaging/build_mcpb.py; needs only Python)
#   ./build.sh refresh-schema  copy schema.json from the pinned robot-md release (then review the diff)
#   ./build.sh help            this text
# Each verb that makes release files rewrites $DIST/SHA256SUMS for all of them there.
# PYTHON picks the interpreter (default python3), DIST the output folder (default dist).
# Downloaded wheels stay in .cache/wheels and the build tools in .cache/build-venv (both reused).
# What a verb needs (CPython 3.10+ with venv) is checked before anything is built; the first build
# downloads from PyPI, later ones reuse .cache. PYZ_HERE_AS='{"machine": "armv7l", "pointer_bits": 32}'
# makes `pyz --here` check another interpreter's description (JSON; tests use it for the refusals).
set -euo pipefail
cd "$(dirname "$0")"
PY=${PYTHON:-python3}
DIST=${DIST:-dist}
ROBOT_MD_PIN="robot-md==1.10.6"
SCHEMA_IN_WHEEL="robot_md/schemas/v1/robot.schema.json"
TOOLS=".cache/build-venv"
TOOL_PINS=(packaging==26.3 build==1.6.1)

die() { echo "build.sh: $*" >&2; exit 1; }

preflight() {  # what the verb needs, named before anything is built (not after minutes of building)
  local found
  found=$("$PY" -c 'import sys; print("%d.%d" % sys.version_info[:2])' 2>/dev/null) \
    || die "no Python at PYTHON=$PY: install CPython 3.10 or later, or point PYTHON at one"
  "$PY" -c 'import sys; sys.exit(sys.version_info < (3, 10))' \
    || die "$PY is Python $found; the build needs 3.10 or later (set PYTHON)"
  case "$1" in
    refresh-schema) "$PY" -c 'import pip' 2>/dev/null || die "$PY ($found) has no pip (python -m ensurepip)" ;;
    *) "$PY" -c 'import venv, ensurepip, zlib' 2>/dev/null \
      || die "$PY ($found) cannot make the build's venv: no venv/ensurepip (Debian, Ubuntu: apt install python3-venv)" ;;
  esac
}

here() {  # `pyz --here`: can a pyz serve $PY on this machine? If not, one line and exit 2, before any
  # download (checked again by build_pyz.py in the build's venv, without PYZ_HERE_AS)
  "$PY" - <<'PY' || exit 2
import json, os, runpy, sys
guard = runpy.run_path("packaging/pyz_guard.py", run_name="pyz_guard")
this = dict(guard["describe_this_interpreter"](), **json.loads(os.environ.get("PYZ_HERE_AS") or "{}"))
problem = guard["buildable_here"](this)[1]
if problem:
    sys.exit(problem)
PY
}

tools() {  # the build's own tools and the module's pinned dependencies (build_mcpb.py imports the
  # module for its tables), in a venv of their own (PEP 668 systems refuse --user installs), of $PY's
  # CPython: `pyz --here` builds for the CPython that runs build_pyz.py
  local want
  want=$("$PY" -c 'import sys; print("%d.%d" % sys.version_info[:2])')
  if ! "$TOOLS/bin/python" - "$want" packaging/constraints.txt "${TOOL_PINS[@]}" 2>/dev/null <<'PY'; then
import sys
from importlib.metadata import version
from packaging.requirements import Requirement
assert "%d.%d" % sys.version_info[:2] == sys.argv.pop(1)
lines = [line.split("#")[0].strip() for line in open(sys.argv[1])] + sys.argv[2:]
pins = [Requirement(line) for line in lines if line]
assert all(version(p.name) in p.specifier for p in pins if p.marker is None or p.marker.evaluate())
PY
    echo "build tools: making $TOOLS (${TOOL_PINS[*]} and packaging/constraints.txt)"
    "$PY" -m venv --clear "$TOOLS"
    "$TOOLS/bin/python" -m pip install --quiet --disable-pip-version-check "${TOOL_PINS[@]}" \
      -r packaging/constraints.txt
  fi
}

wheel() {
  tools
  rm -f "$DIST"/robot_md_mcp-*.whl
  "$TOOLS/bin/python" -m build --quiet --wheel --outdir "$DIST" . >/dev/null
  ls "$DIST"/robot_md_mcp-*.whl
}

sdist() {
  tools
  rm -f "$DIST"/robot_md_mcp-*.tar.gz
  "$TOOLS/bin/python" -m build --quiet --sdist --outdir "$DIST" . >/dev/null
  ls "$DIST"/robot_md_mcp-*.tar.gz
}

pyz() {
  local work here=()
  case "${1:-}" in
    "") ;;
    --here) here=(--here) ;;
    *) usage >&2; exit 2 ;;
  esac
  work=$(mktemp -d)
  trap 'rm -rf "$work"' RETURN
  tools
  "$TOOLS/bin/python" -m pip wheel --quiet --disable-pip-version-check --no-deps --wheel-dir "$work" .
  "$TOOLS/bin/python" packaging/build_pyz.py --project-wheel "$work"/robot_md_mcp-*.whl --dist "$DIST" \
    --cache .cache/wheels "${here[@]}"
}

sums() {  # SHA256SUMS of every release file in $DIST (portable: no sha256sum on macOS)
  "$PY" - "$DIST" <<'PY'
import hashlib, pathlib, sys
dist = pathlib.Path(sys.argv[1])
patterns = ("robot-md-mcp*.pyz", "robot_md_mcp-*.whl", "robot_md_mcp-*.tar.gz", "robot-md-mcp.mcpb")
files = sorted((p for pattern in patterns for p in dist.glob(pattern)), key=lambda p: p.name)
sums = "".join(f"{hashlib.sha256(p.read_bytes()).hexdigest()}  {p.name}\n" for p in files)
(dist / "SHA256SUMS").write_text(sums)
print(f"{dist}/SHA256SUMS: {len(files)} files")
PY
}

refresh_schema() {
  local work
  work=$(mktemp -d)
  trap 'rm -rf "$work"' RETURN
  "$PY" -m pip download --quiet --no-deps --only-binary :all: --dest "$work" "$ROBOT_MD_PIN"
  "$PY" - "$work"/*.whl "$SCHEMA_IN_WHEEL" <<'PY'
import sys, zipfile
with zipfile.ZipFile(sys.argv[1]) as z:
    data = z.read(sys.argv[2])
open("schema.json", "wb").write(data)
print(f"schema.json refreshed from {sys.argv[1].rsplit('/', 1)[-1]} ({len(data)} bytes)")
PY
  git diff --stat -- schema.json || true
}

mcpb() {
  tools
  "$TOOLS/bin/python" packaging/build_mcpb.py --dist "$DIST" --cache .cache/wheels
}

usage() { awk 'NR > 1 && !/^#/ {exit} NR > 1 {sub(/^# ?/, ""); print}' "$0"; }

case "${1:-release}" in
  release | pyz | wheel | sdist | mcpb | refresh-schema) preflight "${1:-release}" ;;
esac
[ "${1:-}" = pyz ] && [ "${2:-}" = --here ] && here
case "${1:-release}" in
  release) pyz && wheel && sdist && mcpb && sums ;;
  pyz) pyz "${2:-}" && sums ;;
  wheel) wheel && sums ;;
  sdist) sdist && sums ;;
  mcpb) mcpb && sums ;;
  refresh-schema) refresh_schema ;;
  help | -h | --help) usage ;;
  *) usage >&2; exit 2 ;;
esac
