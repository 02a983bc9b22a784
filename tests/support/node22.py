"""Node 22 and npm tools for the conformance, Inspector and Claude Code tests, installed from
the npm registry into .cache on first use (no root, no downloads of tarballs by
hand). Without npm or a Node 22 build for this platform the tests skip (and
fail in CI, via need())."""

from __future__ import annotations

import os
import platform
import shutil
import subprocess
import sys
from pathlib import Path

from conftest import ROOT, need

CACHE = ROOT / ".cache"
NODE_VERSION = "22.23.3"  # Inspector 2.x needs >= 22.19; the conformance suite >= 22
_ARCH = {"x86_64": "x64", "amd64": "x64", "aarch64": "arm64", "arm64": "arm64"}


def _npm_node_package() -> str | None:
    """npm publishes Node builds as node-<os>-<arch> (what the `node` package installs)."""
    system = {"linux": "linux", "darwin": "darwin"}.get(sys.platform)
    arch = _ARCH.get(platform.machine().lower())
    return f"node-{system}-{arch}" if system and arch else None


def _npm(args: list[str], path_first: Path | None = None) -> subprocess.CompletedProcess[str]:
    npm = shutil.which("npm")
    need(npm is not None, "npm (to install Node 22 and the MCP tools from the npm registry)")
    assert npm is not None  # need() skipped or failed otherwise
    env = dict(os.environ)
    if path_first is not None:  # npm runs on Node 22, not on whatever node is on PATH
        env["PATH"] = f"{path_first}{os.pathsep}{env.get('PATH', '')}"
    return subprocess.run(
        [npm, *args, "--no-audit", "--no-fund", "--loglevel=error"],
        capture_output=True,
        text=True,
        timeout=900,
        env=env,
    )


def node22() -> Path:
    """The Node 22 binary (installed into .cache/node-<version> if missing)."""
    package = _npm_node_package()
    need(package is not None, f"a Node 22 build on npm for {sys.platform}/{platform.machine()}")
    prefix = CACHE / f"node-{NODE_VERSION}"
    node = prefix / "node_modules" / str(package) / "bin" / "node"
    if not node.exists():
        done = _npm(["install", "--prefix", str(prefix), f"{package}@{NODE_VERSION}"])
        need(node.exists(), f"npm install {package}@{NODE_VERSION} failed: {done.stderr[-1000:]}")
    return node


def npm_tool(package: str, version: str) -> Path:
    """`package@version` installed under .cache/<name>-<version>; returns that prefix."""
    node = node22()
    prefix = CACHE / f"{package.rsplit('/', 1)[-1]}-{version}"
    marker = prefix / "node_modules" / package / "package.json"
    if not marker.exists():
        done = _npm(["install", "--prefix", str(prefix), f"{package}@{version}"], path_first=node.parent)
        need(marker.exists(), f"npm install {package}@{version} failed: {done.stderr[-1000:]}")
    return prefix


def node_env(node: Path) -> dict[str, str]:
    """The environment with Node 22 first on PATH (tools that spawn `node` get it)."""
    return {**os.environ, "PATH": f"{node.parent}{os.pathsep}{os.environ.get('PATH', '')}"}


CLAUDE_CODE_VERSION = "2.1.331"


def claude_code() -> Path:
    """The real Claude Code CLI (npm's @anthropic-ai/claude-code, pinned), installed under .cache."""
    prefix = npm_tool("@anthropic-ai/claude-code", CLAUDE_CODE_VERSION)
    return prefix / "node_modules" / ".bin" / "claude"
