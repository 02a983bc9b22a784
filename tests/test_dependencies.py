"""Every distribution the module imports is declared in pyproject.toml, and the pins the pyz
carries fall inside the declared ranges."""

from __future__ import annotations

import ast
import re
import sys
from importlib.metadata import packages_distributions

from conftest import ROOT
from packaging.requirements import Requirement

MODULE = ROOT / "robot_md_mcp.py"


def declared() -> dict[str, Requirement]:
    text = (ROOT / "pyproject.toml").read_text(encoding="utf-8")
    block = re.search(r"^dependencies = \[(.*?)^\]", text, re.MULTILINE | re.DOTALL)
    assert block, "no dependencies list in pyproject.toml"
    found = [Requirement(r) for r in re.findall(r'"([^"]+)"', block[1])]
    return {r.name.lower(): r for r in found}


def imported_top_levels() -> set[str]:
    names = set()
    for node in ast.walk(ast.parse(MODULE.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            names |= {alias.name.split(".")[0] for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names.add(node.module.split(".")[0])
    return names - set(sys.stdlib_module_names) - {"__future__"}


def test_every_imported_distribution_is_declared() -> None:
    owners = packages_distributions()
    needed = {owners[name][0].lower() for name in imported_top_levels()}
    assert needed == {"mcp", "pyyaml", "jsonschema", "anyio", "uvicorn", "starlette", "cryptography"}
    assert needed <= set(declared()), f"imported but not declared: {needed - set(declared())}"


def test_the_pinned_set_is_inside_the_declared_ranges() -> None:
    pins = {}
    for line in (ROOT / "packaging" / "constraints.txt").read_text(encoding="utf-8").splitlines():
        pin = line.split("#")[0].strip()
        if pin:
            parsed = Requirement(pin)
            if parsed.marker is None or parsed.marker.evaluate():
                pins[parsed.name.lower()] = next(iter(parsed.specifier)).version
    for name, requirement in declared().items():
        assert name in pins, f"{name} is not pinned in packaging/constraints.txt"
        assert requirement.specifier.contains(pins[name]), f"{name}=={pins[name]} is outside {requirement}"


def test_the_packaging_doc_lists_every_declared_dependency_and_range() -> None:
    page = (ROOT / "docs" / "packaging.md").read_text(encoding="utf-8")
    sentence = page.split("\nDependencies: ", 1)[1].split(". ", 1)[0]
    listed = {Requirement(r).name.lower(): str(Requirement(r)) for r in re.findall(r"`([^`]+)`", sentence)}
    assert listed == {name: str(req) for name, req in declared().items()}
