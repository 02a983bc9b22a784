#!/usr/bin/env bash
# Build inputs and outputs of robot-md-mcp.
#   ./build.sh wheel           dist/*.whl
#   ./build.sh pyz             dist/robot-md-mcp.pyz for Linux/macOS/Windows x CPython 3.10-3.14 (shiv),
#                              one slim pyz per platform+CPython, dist/SHA256SUMS (packaging/build_pyz.py)
#   ./build.sh refresh-schema  copy schema.json from the pinned robot-md release (then review the diff)
# PYTHON picks the interpreter (default python3), DIST the output folder (default dist).
# pyz keeps downloaded wheels in .cache/wheels and its tools in .cache/pyz-venv (both reused).
set -euo pipefail
cd "$(dirname "$0")"
PY=${PYTHON:-python3}
DIST=${DIST:-dist}
ROBOT_MD_PIN="robot-md==1.10.6"
SCHEMA_IN_WHEEL="robot_md/schemas/v1/robot.schema.json"

wheel() {
  rm -rf "$DIST"/*.whl
  "$PY" -m pip wheel --quiet --no-deps --wheel-dir "$DIST" .
  ls -l "$DIST"
}

pyz() {
  local work venv=.cache/pyz-venv
  work=$(mktemp -d)
  trap 'rm -rf "$work"' RETURN
  # The build's own tools, pinned, in a venv of their own (reused; PEP 668 systems refuse --user installs).
  if ! "$venv/bin/python" -c 'from importlib.metadata import version as v
assert (v("shiv"), v("packaging")) == ("1.0.8", "26.3")' 2>/dev/null; then
    "$PY" -m venv "$venv"
    "$venv/bin/python" -m pip install --quiet --disable-pip-version-check shiv==1.0.8 packaging==26.3
  fi
  "$venv/bin/python" -m pip wheel --quiet --disable-pip-version-check --no-deps --wheel-dir "$work" .
  "$venv/bin/python" packaging/build_pyz.py --project-wheel "$work"/robot_md_mcp-*.whl --dist "$DIST" \
    --cache .cache/wheels
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

case "${1:-}" in
  wheel) wheel ;;
  pyz) pyz ;;
  refresh-schema) refresh_schema ;;
  *) sed -n '2,8p' "$0" | sed 's/^# \{0,1\}//'; exit 2 ;;
esac
