"""REST judged by the real tools: openapi-spec-validator says /openapi.json is valid
OpenAPI 3.1, and schemathesis (`--checks all`, bounded examples) finds no failure against the running
server, with and without a token. Both live in a venv of their own, `.cache/rest-tools/`, made here
(not the test extra: they are heavy and only these tests use them)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import ROOT, need
from serving import Served, private_token

import robot_md_mcp as m

pytestmark = pytest.mark.heavy

TOOLS = ROOT / ".cache" / "rest-tools"
PINS = ("schemathesis==4.32.5", "openapi-spec-validator==0.9.0")
MAX_EXAMPLES = 25


def tool_bin() -> Path | None:
    """The venv's bin folder with both tools, made (from PyPI) on first use; None if it cannot be."""
    bin_dir = TOOLS / ("Scripts" if os.name == "nt" else "bin")
    marker = TOOLS / "pins.txt"
    if marker.exists() and marker.read_text(encoding="utf-8") == "\n".join(PINS):
        return bin_dir
    made = subprocess.run(
        [sys.executable, "-m", "venv", "--clear", str(TOOLS)], capture_output=True, timeout=300
    )
    if made.returncode != 0:
        return None
    pip = [str(bin_dir / "python"), "-m", "pip", "install", "--quiet", "--disable-pip-version-check", *PINS]
    if subprocess.run(pip, capture_output=True, timeout=900).returncode != 0:
        return None
    marker.write_text("\n".join(PINS), encoding="utf-8")
    return bin_dir


@pytest.fixture(scope="module")
def tools() -> Path:
    found = tool_bin()
    need(found is not None, f"{' and '.join(PINS)} could not be installed into {TOOLS}")
    assert found is not None
    return found


@pytest.fixture(scope="module", params=["open", "token"])
def served(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory):
    """The server, without and with a token; the token's Authorization header (or {})."""
    if request.param == "open":
        server, headers = Served("--http", "127.0.0.1:0"), {}
    else:
        token = private_token(token_file := tmp_path_factory.mktemp("token") / "token")
        server = Served("--http", "127.0.0.1:0", "--token-file", str(token_file))
        headers = {"Authorization": f"Bearer {token}"}
    yield server, headers
    assert server.stop() == 0
    assert "Traceback" not in server.stderr, server.stderr


def openapi_file(served: tuple[Served, dict[str, str]], folder: Path) -> Path:
    server, headers = served
    status, _, body = server.request("GET", m.OPENAPI_PATH, None, headers)
    assert status == 200
    path = folder / "openapi.json"
    path.write_bytes(body)
    return path


def test_openapi_is_valid_openapi_3_1(
    tools: Path, served: tuple[Served, dict[str, str]], tmp_path: Path
) -> None:
    path = openapi_file(served, tmp_path)
    assert json.loads(path.read_bytes())["openapi"] == "3.1.0"
    done = subprocess.run(
        [str(tools / "openapi-spec-validator"), "--schema", "3.1.0", str(path)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert "OK" in done.stdout


def schemathesis(tools: Path, served: tuple[Served, dict[str, str]], document: Path) -> tuple[int, str]:
    """`st run DOCUMENT --checks all --seed 1` against the server, as a reviewer runs it (no configuration
    of ours): its exit code and report."""
    server, headers = served
    argv = [str(tools / "st"), "run", str(document), "--url", f"http://127.0.0.1:{server.port}"]
    argv += ["--checks", "all", "--max-examples", str(MAX_EXAMPLES), "--seed", "1", "--no-color"]
    for name, value in headers.items():
        argv += ["--header", f"{name}: {value}"]
    env = {**os.environ, "NO_COLOR": "1"}
    done = subprocess.run(argv, capture_output=True, text=True, timeout=900, env=env, cwd=document.parent)
    return done.returncode, done.stdout + done.stderr


def test_schemathesis_finds_no_failure(
    tools: Path, served: tuple[Served, dict[str, str]], tmp_path: Path
) -> None:
    """Every check schemathesis has (status codes, content types, response schemas, 405 for methods
    not declared, schema-valid requests accepted, invalid ones refused, …), on every operation, HEAD's
    included."""
    path = openapi_file(served, tmp_path)
    code, report = schemathesis(tools, served, path)
    assert code == 0, report[-6000:]
    operations = sum(len(item) for item in json.loads(path.read_bytes())["paths"].values())
    assert f"Tested: {operations}" in report and "No issues found" in report, report[-3000:]


def test_schemathesis_fails_on_a_document_that_promises_too_much(
    tools: Path, served: tuple[Served, dict[str, str]], tmp_path: Path
) -> None:
    """The run above can fail: with /render's body described as any text (as it was), schemathesis sends
    `{}` and our 422 fails it ("Schema-valid request rejected")."""
    path = openapi_file(served, tmp_path)
    document = json.loads(path.read_bytes())
    for content in document["paths"][m.RENDER_PATH]["post"]["requestBody"]["content"].values():
        content["schema"] = {"not": {"const": ""}}
    path.write_text(json.dumps(document), encoding="utf-8")
    code, report = schemathesis(tools, served, path)
    assert code != 0 and "Schema-valid request rejected" in report, report[-3000:]
