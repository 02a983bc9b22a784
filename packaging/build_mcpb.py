#!/usr/bin/env python3
"""Build dist/robot-md-mcp.mcpb (an MCP Bundle for Claude Desktop) and dist/server.json.

    python packaging/build_mcpb.py [--dist DIR]      the bundle and dist/server.json (needs Node: npx)
    python packaging/build_mcpb.py --server-json     rewrite ./server.json (the PyPI entry; no Node)
    python packaging/build_mcpb.py --repository      print the GitHub owner/repo the project names

The bundle is manifest 0.4, server type `uv`: the host brings Python and installs the
dependencies pinned in packaging/mcpb/pyproject.toml, then runs robot_md_mcp.py. It holds only
the module, schema.json, that pyproject.toml, icon.png, manifest.json and LICENSE.

manifest.json is made here from packaging/mcpb/manifest.template.json plus what the project
states once elsewhere: name, description, license, keywords, Python range and URLs from
pyproject.toml, the version from robot_md_mcp.py, tools and prompts from its TOOLS and PROMPTS
tables (read with ast, so building needs neither the SDK nor PyYAML). The official CLI,
@anthropic-ai/mcpb (through npx), validates and packs it.

server.json (the MCP Registry entry) names the PyPI package; dist/server.json adds the bundle,
with the sha256 of the file just built. Standard library only (on Python 3.10, pip's vendored
tomli stands in for tomllib).
"""

from __future__ import annotations

import argparse
import ast
import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import zipfile
from pathlib import Path
from typing import Any

try:
    import tomllib
except ImportError:  # Python 3.10
    from pip._vendor import tomli as tomllib  # type: ignore[no-redef]

ROOT = Path(__file__).resolve().parent.parent
HERE = ROOT / "packaging" / "mcpb"
MODULE = ROOT / "robot_md_mcp.py"
MCPB_CLI = "@anthropic-ai/mcpb@2.1.2"
BUNDLE = "robot-md-mcp.mcpb"
REGISTRY_SCHEMA = "https://static.modelcontextprotocol.io/schemas/2025-12-11/server.schema.json"
# What the bundle holds: where each file comes from (relative to the repository root).
BUNDLE_FILES = {
    "robot_md_mcp.py": "robot_md_mcp.py",
    "schema.json": "schema.json",
    "pyproject.toml": "packaging/mcpb/pyproject.toml",
    "icon.png": "packaging/mcpb/icon.png",
    "LICENSE": "LICENSE",
    # manifest.json is generated
}
BUNDLE_CONTENTS = frozenset([*BUNDLE_FILES, "manifest.json"])
# The manifest fields this script fills (the template must not set them).
GENERATED = (
    "name",
    "version",
    "description",
    "author",
    "repository",
    "homepage",
    "support",
    "license",
    "keywords",
    "tools",
    "prompts",
)


def say(line: str) -> None:
    print(f"build_mcpb: {line}", flush=True)


# ---------------------------------------------------------------------------
# What the project states once
# ---------------------------------------------------------------------------


def project() -> dict[str, Any]:
    """pyproject.toml's [project] table."""
    with (ROOT / "pyproject.toml").open("rb") as f:
        return tomllib.load(f)["project"]


def repository_url() -> str:
    """The repository's GitHub home, [project.urls] Repository: every other use derives from it."""
    url = project()["urls"]["Repository"].rstrip("/")
    if not re.fullmatch(r"https://github\.com/[A-Za-z0-9-]+/[A-Za-z0-9._-]+", url):
        raise SystemExit(f"build_mcpb: [project.urls] Repository is not a GitHub repository URL: {url}")
    return url


def github_repository() -> str:
    """owner/repo, as GitHub Actions spells it in github.repository."""
    return repository_url().removeprefix("https://github.com/")


def registry_name() -> str:
    """The MCP Registry name: io.github.<owner>/<repo> (what GitHub OIDC login may publish)."""
    owner, repo = github_repository().split("/")
    return f"io.github.{owner}/{repo}"


def release_url(version: str) -> str:
    """Where the release workflow attaches the bundle."""
    return f"{repository_url()}/releases/download/v{version}/{BUNDLE}"


def module_version(source: str | None = None) -> str:
    """robot_md_mcp.__version__, read from the file (no import: no SDK needed)."""
    text = MODULE.read_text(encoding="utf-8") if source is None else source
    found = re.search(r'^__version__ = "([^"]+)"$', text, re.MULTILINE)
    if not found:
        raise SystemExit(f'build_mcpb: no __version__ = "..." line in {MODULE.name}')
    return found[1]


def _table(tree: ast.Module, table: str, cls: str) -> list[dict[str, Any]]:
    """The literal fields of each `cls(...)` entry of the dict `table` (e.g. TOOLS of Tool)."""
    fields = next(
        (
            [
                s.target.id
                for s in node.body
                if isinstance(s, ast.AnnAssign) and isinstance(s.target, ast.Name)
            ]
            for node in tree.body
            if isinstance(node, ast.ClassDef) and node.name == cls
        ),
        None,
    )
    value = next(
        (
            node.value
            for node in tree.body
            if isinstance(node, ast.AnnAssign)
            and isinstance(node.target, ast.Name)
            and node.target.id == table
        ),
        None,
    )
    if fields is None or value is None:
        raise SystemExit(f"build_mcpb: no class {cls} or no {table}: ... = {{...}} in {MODULE.name}")
    calls = [
        node
        for node in ast.walk(value)
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == cls
    ]
    entries: list[dict[str, Any]] = []
    for call in sorted(calls, key=lambda node: (node.lineno, node.col_offset)):
        named = {
            **dict(zip(fields, call.args, strict=False)),
            **{k.arg: k.value for k in call.keywords if k.arg},
        }
        entry: dict[str, Any] = {}
        for key in ("name", "title", "description", "arguments"):
            if key in named:
                try:
                    entry[key] = ast.literal_eval(named[key])
                except ValueError:
                    raise SystemExit(
                        f"build_mcpb: {table} entry field {key!r} is not a literal in {MODULE.name} "
                        f"(line {named[key].lineno}); the manifest is made from literals only"
                    ) from None
        entries.append(entry)
    if not entries:
        raise SystemExit(f"build_mcpb: no {cls}(...) entries found in {table} in {MODULE.name}")
    return entries


def tables(source: str | None = None) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """(tools, prompts) as the module's TOOLS and PROMPTS tables declare them, in order."""
    tree = ast.parse(MODULE.read_text(encoding="utf-8") if source is None else source)
    return _table(tree, "TOOLS", "Tool"), _table(tree, "PROMPTS", "Prompt")


# ---------------------------------------------------------------------------
# manifest.json and server.json
# ---------------------------------------------------------------------------


def template() -> dict[str, Any]:
    return json.loads((HERE / "manifest.template.json").read_text(encoding="utf-8"))


def prompt_text(prompt: dict[str, Any]) -> str:
    """The manifest's `text` for a prompt (the schema requires one). The server writes the
    real prompt from the ROBOT.md when asked (prompts/get); this names it and its arguments."""
    text = f"{prompt['title']}: robot-md-mcp writes this prompt from the configured ROBOT.md."
    for name, _description in prompt["arguments"]:
        text += f"\n{name}: ${{arguments.{name}}}"
    return text


def manifest() -> dict[str, Any]:
    meta, urls = project(), project()["urls"]
    tools, prompts = tables()
    owner = github_repository().split("/")[0]
    made = template()
    clash = sorted(set(made) & set(GENERATED))
    if clash:
        raise SystemExit(f"build_mcpb: the template sets fields the build fills: {', '.join(clash)}")
    made.update(
        name=meta["name"],
        version=module_version(),
        description=meta["description"],
        author={"name": owner, "url": f"https://github.com/{owner}"},
        repository={"type": "git", "url": repository_url()},
        homepage=urls["Homepage"],
        support=urls["Issues"],
        license=meta["license"],
        keywords=meta["keywords"],
        tools=[{"name": t["name"], "description": t["description"]} for t in tools],
        prompts=[
            {
                "name": p["name"],
                "description": p["description"],
                "arguments": [name for name, _ in p["arguments"]],
                "text": prompt_text(p),
            }
            for p in prompts
        ],
    )
    made["compatibility"]["runtimes"] = {"python": meta["requires-python"]}
    order = [
        *("manifest_version", "name", "display_name", "version", "description", "long_description"),
        *("author", "repository", "homepage", "support", "license", "keywords", "icon", "server"),
        *("user_config", "tools", "prompts", "compatibility"),
    ]
    return {key: made[key] for key in order} | {k: v for k, v in made.items() if k not in order}


def server_json(bundle_sha256: str | None = None) -> dict[str, Any]:
    """The MCP Registry entry: the PyPI package, and with a bundle's sha256 the bundle too."""
    meta, version = project(), module_version()
    manifest_argument = {
        "type": "positional",
        "valueHint": "robot_md_path",
        "description": "Path to the robot's ROBOT.md manifest (or a folder holding one)",
        "format": "filepath",
        "isRequired": True,
    }
    packages: list[dict[str, Any]] = [
        {
            "registryType": "pypi",
            "registryBaseUrl": "https://pypi.org",
            "identifier": meta["name"],
            "version": version,
            "runtimeHint": "uvx",
            "transport": {"type": "stdio"},
            "packageArguments": [manifest_argument],
        }
    ]
    if bundle_sha256 is not None:
        packages.append(
            {
                "registryType": "mcpb",
                "identifier": release_url(version),
                "version": version,
                "fileSha256": bundle_sha256,
                "transport": {"type": "stdio"},
            }
        )
    return {
        "$schema": REGISTRY_SCHEMA,
        "name": registry_name(),
        "description": meta["description"],
        "repository": {"url": repository_url(), "source": "github"},
        "websiteUrl": meta["urls"]["Homepage"],
        "version": version,
        "packages": packages,
    }


def dump(data: dict[str, Any]) -> str:
    return json.dumps(data, indent=2, ensure_ascii=False) + "\n"


# ---------------------------------------------------------------------------
# Building
# ---------------------------------------------------------------------------


def bundle_pyproject() -> str:
    """packaging/mcpb/pyproject.toml with the module's version written in."""
    text = (HERE / "pyproject.toml").read_text(encoding="utf-8")
    line = f'version = "{module_version()}"'
    filled, count = re.subn(r'^version = "[^"]*"', line, text, flags=re.MULTILINE)
    if count != 1:
        raise SystemExit('build_mcpb: packaging/mcpb/pyproject.toml needs exactly one `version = "..."` line')
    return filled


def stage(into: Path) -> None:
    """Write the bundle's files (and .mcpbignore) into `into`."""
    for name, source in BUNDLE_FILES.items():
        shutil.copyfile(ROOT / source, into / name)
    (into / "pyproject.toml").write_text(bundle_pyproject(), encoding="utf-8", newline="\n")
    (into / "manifest.json").write_text(dump(manifest()), encoding="utf-8", newline="\n")
    shutil.copyfile(HERE / ".mcpbignore", into / ".mcpbignore")
    for path in into.iterdir():
        path.chmod(0o644)


def npx() -> str | None:
    return shutil.which("npx")


def mcpb(command: str, *args: Path, tool: str) -> None:
    """Run the official CLI; on failure show what it said and stop."""
    done = subprocess.run(
        [tool, "--yes", MCPB_CLI, command, *map(str, args)],
        capture_output=True,
        text=True,
        encoding="utf-8",
        errors="replace",
        env={**os.environ, "npm_config_update_notifier": "false", "npm_config_fund": "false"},
    )
    if done.returncode != 0:
        sys.stderr.write(done.stdout + done.stderr)
        raise SystemExit(f"build_mcpb: `mcpb {command}` failed (exit {done.returncode})")


def sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def build(dist: Path) -> Path:
    tool = npx()
    if tool is None:
        raise SystemExit(
            "build_mcpb: the MCP Bundle needs Node.js 20+ (npx runs the official mcpb CLI); "
            "install Node, or build the pyz with `./build.sh pyz`, which needs only Python"
        )
    version = module_version()
    say(f"robot-md-mcp {version}: manifest 0.4, server type uv, {MCPB_CLI} through {tool}")
    dist.mkdir(parents=True, exist_ok=True)
    out = dist / BUNDLE
    with tempfile.TemporaryDirectory(prefix="mcpb-stage-") as staging:
        staged = Path(staging)
        stage(staged)
        say(f"staged {', '.join(sorted(p.name for p in staged.iterdir()))}")
        mcpb("validate", staged / "manifest.json", tool=tool)
        say("manifest.json validates (mcpb validate: schema 0.4, icon)")
        out.unlink(missing_ok=True)
        mcpb("pack", staged, out, tool=tool)
    with zipfile.ZipFile(out) as packed:
        names = set(packed.namelist())
    if names != BUNDLE_CONTENTS:
        raise SystemExit(f"build_mcpb: {out} holds {sorted(names)}, expected {sorted(BUNDLE_CONTENTS)}")
    digest = sha256(out)
    say(f"packed {out} ({out.stat().st_size:,} bytes, {len(names)} files, sha256 {digest})")
    (dist / "server.json").write_text(dump(server_json(digest)), encoding="utf-8", newline="\n")
    say(f"wrote {dist / 'server.json'} (PyPI package and this bundle at {release_url(version)})")
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dist", type=Path, default=ROOT / "dist", help="output folder (default: dist)")
    parser.add_argument("--server-json", action="store_true", help="rewrite ./server.json and stop")
    parser.add_argument("--repository", action="store_true", help="print owner/repo and stop")
    args = parser.parse_args(argv)
    if args.repository:
        print(github_repository())
    elif args.server_json:
        (ROOT / "server.json").write_text(dump(server_json()), encoding="utf-8", newline="\n")
        say(f"wrote {ROOT / 'server.json'}")
    else:
        build(args.dist)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
