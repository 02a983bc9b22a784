#!/usr/bin/env bash
# Build inputs and outputs of robot-md-mcp.
#   ./build.sh wheel           dist/*.whl and dist/*.tar.gz
#   ./build.sh pyz             dist/robot-md-mcp.pyz for this machine's platform and Python (shiv)
#   ./build.sh refresh-schema  copy schema.json from the pinned robot-md release (then review the diff)
set -euo pipefail
cd "$(dirname "$0")"
PY=${PYTHON:-python3}
ROBOT_MD_PIN="robot-md==1.10.6"
SCHEMA_IN_WHEEL="robot_md/schemas/v1/robot.schema.json"

wheel() {
  rm -rf dist/*.whl dist/*.tar.gz
  "$PY" -m pip wheel --quiet --no-deps --wheel-dir dist .
  "$PY" -m pip download --quiet --no-deps --no-binary :all: --dest dist . 2>/dev/null || true
  ls -l dist
}

pyz() {
  local work
  work=$(mktemp -d)
  trap 'rm -rf "$work"' RETURN
  "$PY" -m pip install --quiet shiv==1.0.8
  "$PY" -m pip install --quiet --target "$work/site" .
  mkdir -p dist
  "$PY" -m shiv --site-packages "$work/site" -e robot_md_mcp:main -o dist/robot-md-mcp.pyz \
    --reproducible --compressed -p '/usr/bin/env python3'
  ls -l dist/robot-md-mcp.pyz
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
