"""The MCP Registry entry (server.json, and the build's dist/server.json with the bundle): valid against
the registry's schema, versions equal to the module's, every name and URL derived from the one Repository
URL in pyproject.toml. The built bundle's dist/server.json: tests/test_mcpb.py (heavy)."""

from __future__ import annotations

import hashlib
import json
import re
import sys

from conftest import ROOT
from jsonschema import Draft7Validator

import robot_md_mcp as rmm

sys.path.insert(0, str(ROOT / "packaging"))
import build_mcpb

SCHEMA = json.loads((ROOT / "packaging" / "registry" / "server.schema.json").read_text(encoding="utf-8"))
SERVER_JSON = ROOT / "server.json"
MCP_NAME_LINE = "mcp-name: io.github.robot-md/robot-md-mcp"
BUNDLE = "robot-md-mcp.mcpb"


def schema_errors(document: dict) -> list[str]:
    """Draft 7, as the schema declares (format: uri is not checked without a format checker)."""
    return [f"{list(e.absolute_path)}: {e.message}" for e in Draft7Validator(SCHEMA).iter_errors(document)]


def root_server_json() -> dict:
    return json.loads(SERVER_JSON.read_text(encoding="utf-8"))


def test_the_schema_copy_is_the_one_the_pinned_publisher_requires() -> None:
    """mcp-publisher refuses every $schema but its current one: the copy, the $schema the build writes
    and the publisher the release job downloads are named together in packaging/registry/README.md."""
    assert SCHEMA["$id"] == build_mcpb.REGISTRY_SCHEMA
    assert SCHEMA["$id"] == "https://static.modelcontextprotocol.io/schemas/2025-12-11/server.schema.json"
    Draft7Validator.check_schema(SCHEMA)
    release = (ROOT / ".github" / "workflows" / "release.yml").read_text(encoding="utf-8")
    (pin,) = re.findall(r"^ +MCP_PUBLISHER: (v[0-9.]+)", release, re.MULTILINE)
    notes = (ROOT / "packaging" / "registry" / "README.md").read_text(encoding="utf-8")
    assert f"`MCP_PUBLISHER: {pin}`" in notes and "2025-12-11" in notes


def test_server_json_is_valid_and_what_the_build_writes() -> None:
    """Committed server.json = `python packaging/build_mcpb.py --server-json` (never edited by hand): valid,
    the module's version, the PyPI package over stdio taking the manifest's path."""
    assert SERVER_JSON.read_text(encoding="utf-8") == build_mcpb.dump(build_mcpb.server_json())
    server = root_server_json()
    assert schema_errors(server) == [] and server["$schema"] == SCHEMA["$id"]
    assert len(server["description"]) <= 100 and server["version"] == rmm.__version__
    (pypi,) = server["packages"]
    assert pypi["version"] == rmm.__version__ and pypi["transport"] == {"type": "stdio"}
    assert (pypi["registryType"], pypi["identifier"]) == ("pypi", "robot-md-mcp")
    (argument,) = pypi["packageArguments"]
    assert (argument["type"], argument["format"], argument["isRequired"]) == ("positional", "filepath", True)
    assert argument["valueHint"]


def test_every_name_and_url_derives_from_the_repository_url() -> None:
    urls = build_mcpb.project()["urls"]
    repository = urls["Repository"]
    assert repository == "https://github.com/robot-md/robot-md-mcp"
    for key in ("Homepage", "Documentation", "Issues", "Changelog"):
        assert urls[key] == repository or urls[key].startswith((repository + "/", repository + "#")), key
    owner, repo = repository.removeprefix("https://github.com/").split("/")
    server = root_server_json()
    assert server["name"] == f"io.github.{owner}/{repo}" == "io.github.robot-md/robot-md-mcp"
    assert server["repository"] == {"url": repository, "source": "github"}
    assert build_mcpb.manifest(">=3.10")["repository"]["url"] == repository
    release = build_mcpb.release_url(rmm.__version__)
    assert release == f"{repository}/releases/download/v{rmm.__version__}/{BUNDLE}"
    assert build_mcpb.github_repository() == f"{owner}/{repo}"
    assert MCP_NAME_LINE == f"mcp-name: {server['name']}"


def test_the_release_workflow_checks_the_repository_the_same_way(capsys) -> None:
    """release.yml compares github.repository with what build_mcpb.py derives (no second copy)."""
    workflow = (ROOT / ".github" / "workflows" / "release.yml").read_text(encoding="utf-8")
    assert "python packaging/build_mcpb.py --repository" in workflow
    assert "robot-md/robot-md-mcp" not in workflow
    assert build_mcpb.main(["--repository"]) == 0 and capsys.readouterr().out == "robot-md/robot-md-mcp\n"


def test_dist_server_json_adds_the_bundle() -> None:
    """dist/server.json is the committed one plus the bundle, named by its release URL and SHA-256 (which
    the schema requires to be a real one)."""
    digest = hashlib.sha256(b"a bundle").hexdigest()
    server = build_mcpb.server_json(digest)
    assert schema_errors(server) == []
    assert server | {"packages": server["packages"][:1]} == root_server_json()
    release = f"https://github.com/robot-md/robot-md-mcp/releases/download/v{rmm.__version__}/{BUNDLE}"
    bundle = {"registryType": "mcpb", "identifier": release, "version": rmm.__version__, "fileSha256": digest}
    assert server["packages"][1] == bundle | {"transport": {"type": "stdio"}}
    assert any("fileSha256" in e for e in schema_errors(build_mcpb.server_json("not-a-hash")))


def test_title_and_icon_are_the_bundles() -> None:
    """The registry shows the bundle's display name and its committed icon, fetched over https from
    the release's tag (the registry takes no data: URI, and at most 255 characters)."""
    server = root_server_json()
    assert server["title"] == build_mcpb.template()["display_name"] == rmm.TITLE  # one name everywhere
    (icon,) = server["icons"]
    raw = "https://raw.githubusercontent.com/robot-md/robot-md-mcp"
    src = f"{raw}/v{rmm.__version__}/packaging/mcpb/icon.png"
    assert icon == {"src": src, "mimeType": "image/png", "sizes": ["512x512"]}
    # the registry's rule, beyond what the schema checks: an https URL of at most 255 characters
    assert icon["src"].startswith("https://") and len(icon["src"]) <= 255
    assert (ROOT / icon["src"].split(f"/v{rmm.__version__}/", 1)[1]).read_bytes().startswith(b"\x89PNG")
    too_long = server | {"icons": [{"src": "https://example.org/" + "i" * 240 + ".png"}]}
    assert any("too long" in e for e in schema_errors(too_long))


def test_readme_carries_the_registry_ownership_line() -> None:
    """The MCP Registry accepts the PyPI package only if its README (PyPI's description) names the
    server: `mcp-name: <name>` (an HTML comment is enough)."""
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert MCP_NAME_LINE in readme, f"README.md must carry <!-- {MCP_NAME_LINE} -->"
