#!/usr/bin/env python3
"""Build dist/robot-md-mcp.mcpb (an MCP Bundle for Claude Desktop) and dist/server.json; with
--server-json rewrite ./server.json, with --repository print owner/repo. docs/bundle.md says why."""

# threat: none. Its checks (pins, placeholders, budgets, schemas) are of our own build, run by us: outside
# docs/threat-model.md, whose peers meet only what it makes (T-PYZ-1, T-BUNDLE-1).
from __future__ import annotations

import argparse
import hashlib
import importlib.util
import json
import os
import re
import sys
import zipfile
from pathlib import Path
from typing import Any

if sys.version_info >= (3, 11):
    import tomllib
else:  # Python 3.10: tomli, which `build` and pytest bring there
    import tomli as tomllib

ROOT = Path(__file__).resolve().parent.parent
HERE = ROOT / "packaging" / "mcpb"
BUNDLE = "robot-md-mcp.mcpb"
MANIFEST_SCHEMA = HERE / "mcpb-manifest-v0.4.schema.json"
REGISTRY_SCHEMA = "https://static.modelcontextprotocol.io/schemas/2025-12-11/server.schema.json"
ICON = "packaging/mcpb/icon.png"
ICON_TYPE = {"mimeType": "image/png", "sizes": ["512x512"]}
RAW = "https://raw.githubusercontent.com"
STDIO = {"transport": {"type": "stdio"}}  # how a host runs each package
ARGUMENT = "Path to the robot's ROBOT.md manifest (or a folder holding one)"
# What the bundle holds, from the repository root; manifest.json and pyproject.toml are written here.
COPIED = {name: name for name in ("robot_md_mcp.py", "schema.json", "LICENSE")} | {"icon.png": ICON}
BUNDLE_CONTENTS = frozenset([*COPIED, "manifest.json", "pyproject.toml"])
INSTALL = "`pip install packaging -r packaging/constraints.txt`, or build with `./build.sh mcpb`"
ZIP_DATE = (1980, 1, 1, 0, 0, 0)  # every member's timestamp: rebuilds are byte-identical


def say(line: str) -> None:
    print(f"build_mcpb: {line}", flush=True)


def project() -> dict[str, Any]:  # pyproject.toml's [project] table
    with (ROOT / "pyproject.toml").open("rb") as f:
        return tomllib.load(f)["project"]  # type: ignore[no-any-return]


def repository_url() -> str:
    """[project.urls] Repository, a GitHub home: every other use derives from it."""
    url = str(project()["urls"]["Repository"]).rstrip("/")
    if not re.fullmatch(r"https://github\.com/[A-Za-z0-9-]+/[A-Za-z0-9._-]+", url):
        raise SystemExit(f"build_mcpb: [project.urls] Repository is not a GitHub repository URL: {url}")
    return url


def github_repository() -> str:  # owner/repo, as GitHub Actions spells it in github.repository
    return repository_url().removeprefix("https://github.com/")


def release_url(version: str) -> str:  # where the release workflow attaches the bundle
    return f"{repository_url()}/releases/download/v{version}/{BUNDLE}"


def module() -> Any:
    """robot_md_mcp itself, from this checkout: its version and its TOOLS and PROMPTS tables."""
    sys.path.insert(0, str(ROOT))
    try:
        return importlib.import_module("robot_md_mcp")
    except ImportError as e:
        said = f"build_mcpb: importing robot_md_mcp needs its dependencies ({e}): {INSTALL}"
        raise SystemExit(said) from None
    finally:
        sys.path.remove(str(ROOT))


def template() -> dict[str, Any]:
    return json.loads((HERE / "manifest.template.json").read_text(encoding="utf-8"))  # type: ignore[no-any-return]


def requires_python(cache: Path) -> str:
    """The CPythons the pyz files serve, once build_pyz's resolver finds every pin's wheel for each on
    every platform (so uv never builds one from source)."""
    from build_pyz import GUARD, PYTHONS, BuildError, wheels_for_all  # --repository needs no `packaging`

    floor = project()["requires-python"]
    if floor != f">={PYTHONS[0]}":
        raise SystemExit(f'build_mcpb: pyproject.toml\'s requires-python is "{floor}", not ">={PYTHONS[0]}"')
    say(f"every pin needs wheels for CPython {PYTHONS[0]}-{PYTHONS[-1]} on every platform: resolving")
    try:
        wheels_for_all(cache, None)
    except BuildError as e:  # pip's last words name what has no wheel
        lines = str(e).strip().splitlines()
        raise SystemExit(f"build_mcpb: {' '.join(dict.fromkeys([lines[0], lines[-1].strip()]))}") from None
    python_range = f">={PYTHONS[0]},<3.{GUARD['SUPPORTED'][1] + 1}"
    say(f"requires-python {python_range}")
    return python_range


def prompt_text(prompt: Any) -> str:
    """The manifest's `text` for a prompt (the schema requires one; prompts/get writes the real one)."""
    text = f"{prompt.title}: robot-md-mcp writes this prompt from the configured ROBOT.md."
    return text + "".join(f"\n{name}: ${{arguments.{name}}}" for name, _ in prompt.arguments)


def manifest(python_range: str) -> dict[str, Any]:
    """The template plus what the project states once (which the template may not set)."""
    meta, urls, rmm = project(), project()["urls"], module()
    owner = github_repository().split("/")[0]
    filled = {
        "name": meta["name"],
        "version": rmm.__version__,
        "description": meta["description"],
        "author": {"name": owner, "url": f"https://github.com/{owner}"},
        "repository": {"type": "git", "url": repository_url()},
        "homepage": urls["Homepage"],
        "documentation": urls["Documentation"],
        "support": urls["Issues"],
        "license": meta["license"],
        "keywords": meta["keywords"],
        "tools": [{"name": t.name, "description": t.description} for t in rmm.TOOLS.values()],
        "prompts": [
            {"name": p.name, "description": p.description, "arguments": [n for n, _ in p.arguments]}
            | {"text": prompt_text(p)}
            for p in rmm.PROMPTS.values()
        ],
    }
    fixed = template()
    clash = sorted(set(fixed) & set(filled))
    if clash:
        raise SystemExit(f"build_mcpb: the template sets fields the build fills: {', '.join(clash)}")
    fixed["compatibility"]["runtimes"] = {"python": python_range}
    return {"manifest_version": fixed.pop("manifest_version"), **filled, **fixed}


def schema_errors(document: dict[str, Any], schema: Path = MANIFEST_SCHEMA) -> list[str]:
    """Each way `document` breaks `schema` (Draft 7), one line each."""
    from jsonschema import Draft7Validator

    validator = Draft7Validator(json.loads(schema.read_text(encoding="utf-8")))
    return [f"{list(e.absolute_path)}: {e.message}" for e in validator.iter_errors(document)]


def bundle_pyproject(python_range: str) -> str:
    """packaging/mcpb/pyproject.toml with the module's version and the Python range written in."""
    text = (HERE / "pyproject.toml").read_text(encoding="utf-8")
    for key, value in (("version", module().__version__), ("requires-python", python_range)):
        text, count = re.subn(rf'^{key} = "[^"]*"', f'{key} = "{value}"', text, flags=re.MULTILINE)
        if count != 1:
            raise SystemExit(f'build_mcpb: packaging/mcpb/pyproject.toml needs one `{key} = "..."` line')
    return text


def server_json(bundle_sha256: str | None = None) -> dict[str, Any]:
    """The MCP Registry entry: the PyPI package, and with a bundle's sha256 the bundle too."""
    meta, version = project(), module().__version__
    argument = {"type": "positional", "valueHint": "robot_md_path", "description": ARGUMENT}
    pypi = {"registryType": "pypi", "registryBaseUrl": "https://pypi.org", "identifier": meta["name"]}
    pypi |= {"version": version, "runtimeHint": "uvx"} | STDIO
    packages: list[dict[str, Any]] = [
        pypi | {"packageArguments": [argument | {"format": "filepath", "isRequired": True}]}
    ]
    if bundle_sha256 is not None:
        bundle = {"registryType": "mcpb", "identifier": release_url(version), "version": version}
        packages.append(bundle | {"fileSha256": bundle_sha256} | STDIO)
    return {
        "$schema": REGISTRY_SCHEMA,
        "name": f"io.github.{github_repository()}",  # what GitHub OIDC login may publish
        "title": module().TITLE,  # serverInfo's title too
        "description": meta["description"],
        "repository": {"url": repository_url(), "source": "github"},
        "websiteUrl": meta["urls"]["Homepage"],
        # The registry wants an https URL (no data: URI): the committed PNG at the release's tag.
        "icons": [{"src": f"{RAW}/{github_repository()}/v{version}/{ICON}"} | ICON_TYPE],
        "version": version,
        "packages": packages,
    }


def dump(data: dict[str, Any]) -> str:  # as server.json and manifest.json are written
    return json.dumps(data, indent=2, ensure_ascii=False) + "\n"


def contents(python_range: str) -> dict[str, bytes]:
    """Every file of the bundle, by name; the manifest validated."""
    made = manifest(python_range)
    errors = schema_errors(made)
    if errors:
        raise SystemExit(f"build_mcpb: manifest.json breaks the v0.4 schema: {'; '.join(errors)}")
    files = {name: (ROOT / source).read_bytes() for name, source in COPIED.items()}
    if not files[made["icon"]].startswith(b"\x89PNG\r\n\x1a\n"):
        raise SystemExit(f"build_mcpb: {ICON} is not a PNG")
    files["manifest.json"] = dump(made).encode()
    files["pyproject.toml"] = bundle_pyproject(python_range).encode()
    return files


def pack(files: dict[str, bytes], out: Path) -> None:
    """A zip of `files` at its root: sorted, fixed dates and modes, so a rebuild is byte-identical."""
    partial = out.with_name(out.name + ".partial")
    with zipfile.ZipFile(partial, "w") as packed:
        for name in sorted(files):
            info = zipfile.ZipInfo(name, ZIP_DATE)
            info.create_system, info.external_attr = 3, 0o100644 << 16  # a Unix file, rw-r--r--
            packed.writestr(info, files[name], zipfile.ZIP_DEFLATED, 9)
    os.replace(partial, out)


def build(dist: Path, cache: Path) -> Path:
    """The bundle and server.json into dist."""
    missing = [name for name in ("packaging", "jsonschema") if importlib.util.find_spec(name) is None]
    if missing:  # named before any work, in one line
        raise SystemExit(f"build_mcpb: needs {' and '.join(missing)}: {INSTALL}")
    files = contents(requires_python(cache))
    dist.mkdir(parents=True, exist_ok=True)
    out = dist / BUNDLE
    pack(files, out)
    digest = hashlib.sha256(out.read_bytes()).hexdigest()
    say(f"packed {out} ({out.stat().st_size:,} bytes: {', '.join(sorted(files))}; sha256 {digest})")
    server = server_json(digest)
    (dist / "server.json").write_text(dump(server), encoding="utf-8", newline="\n")
    say(f"wrote {dist / 'server.json'} (PyPI package and this bundle at {release_url(server['version'])})")
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--dist", type=Path, default=ROOT / "dist", help="output folder (default: dist)")
    parser.add_argument("--cache", type=Path, default=ROOT / ".cache" / "wheels", help="wheel cache")
    parser.add_argument("--server-json", action="store_true", help="rewrite ./server.json and stop")
    parser.add_argument("--repository", action="store_true", help="print owner/repo and stop")
    args = parser.parse_args(argv)
    if args.repository:
        print(github_repository())
    elif args.server_json:
        (ROOT / "server.json").write_text(dump(server_json()), encoding="utf-8", newline="\n")
        say(f"wrote {ROOT / 'server.json'}")
    else:
        build(args.dist, args.cache.resolve())
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
