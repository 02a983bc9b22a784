#!/usr/bin/env bash
# Build inputs and outputs of robot-md-mcp.
#   ./build.sh wheel           dist/*.whl
#   ./build.sh pyz             dist/robot-md-mcp.pyz for this machine's platform and Python (shiv)
#   ./build.sh refresh-schema  copy schema.json from the pinned robot-md release (then review the diff)
# PYTHON picks the interpreter (default python3), DIST the output folder (default dist).
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
  local work
  work=$(mktemp -d)
  trap 'rm -rf "$work"' RETURN
  "$PY" -m pip install --quiet shiv==1.0.8
  "$PY" -m pip install --quiet --target "$work/site" .
  mkdir -p "$DIST"
  "$PY" -m shiv --site-packages "$work/site" -e robot_md_mcp:main -o "$DIST/robot-md-mcp.pyz" \
    --reproducible --compressed -p '/usr/bin/env python3'
  ls -l "$DIST/robot-md-mcp.pyz"
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
  *) sed -n '2,6p' "$0" | sed 's/^# \{0,1\}//'; exit 2 ;;
esac
