"""The field reference in docs/manifest.md, made from schema.json and the module's UNITS table.

`python tests/support/manifest_fields.py` prints the table; `--write` puts it in docs/manifest.md between the
`<!-- fields:start -->` and `<!-- fields:end -->` lines. tests/test_manifest_doc.py fails when the doc's
table is not what this makes (so it cannot drift from the schema)."""

from __future__ import annotations

import json
import re
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

import robot_md_mcp as rmm  # noqa: E402 (the clone's module, wherever this runs from)

DOC = ROOT / "docs" / "manifest.md"
START, END = "<!-- fields:start -->", "<!-- fields:end -->"
LEVELS = 3  # keys deep: safety (1) . estop (2) . response_ms (3); a list's items add none
MAX_WHAT = 140  # characters of the schema's description kept in the table


def kind(node: dict[str, Any]) -> str:
    """The node's type in words: `number, 0 to 100`, `list of text`, `one of: arm, wheeled, …`."""
    node = rmm._shape(node)
    types = node.get("type")
    names: list[str] = types if isinstance(types, list) else [types] if types else []
    words = {"string": "text", "integer": "integer", "number": "number", "boolean": "true/false"}
    if "enum" in node:
        text = "one of: " + ", ".join(str(v) for v in node["enum"])
    elif "const" in node:
        text = f"always {json.dumps(node['const'])}"
    elif "array" in names and isinstance(node.get("items"), dict):
        text = f"list of {kind(node['items'])}"
    elif "object" in names or "properties" in node:
        text = "mapping"
    elif not names and (node.get("oneOf") or node.get("anyOf")):
        text = " or ".join(kind(n) for n in node.get("oneOf") or node["anyOf"])
    else:
        text = " or ".join(words.get(n, n) for n in names) or "any"
    bounds = [node[b] for b in ("minimum", "maximum") if b in node]
    if len(bounds) == 2:
        text += f", {bounds[0]} to {bounds[1]}"
    elif "minimum" in node:
        text += f", at least {node['minimum']}"
    return text


def what(node: dict[str, Any]) -> str:
    text = " ".join(str(node.get("description", "")).split())
    sentence = re.split(r"(?<!e\.g)(?<!i\.e)\. (?=[A-Z`])", text, maxsplit=1)[0].rstrip(".")
    return sentence if len(sentence) <= MAX_WHAT else sentence[: MAX_WHAT - 1] + "…"


def fields(node: Any, path: tuple[str, ...] = ()) -> Iterator[tuple[tuple[str, ...], dict[str, Any]]]:
    """(path, schema) of every field the schema describes, `[]` a list's item, `<name>` a key of the
    operator's own; `extensions` itself, nothing under it (anything goes there)."""
    node = rmm._shape(node)
    yield path, node
    if path[-1:] == ("extensions",):
        return
    for key, sub in (node.get("properties") or {}).items():
        yield from fields(sub, (*path, key))
    if isinstance(node.get("items"), dict):
        yield from fields(node["items"], (*path, "[]"))
    entries = node.get("additionalProperties")
    if isinstance(entries, dict) and not node.get("properties"):
        yield from fields(entries, (*path, "<name>"))


def rows(schema: dict[str, Any]) -> Iterator[tuple[str, ...]]:
    """(field, type, required, unit, what) for every field down to LEVELS keys (a list's items add none),
    and deeper numeric fields (for their unit)."""
    nodes = dict(fields(schema))
    for path, node in nodes.items():
        name = ".".join(path).replace(".[]", "[]")
        if path[-1:] in ((), ("[]",)) or (len(path) - path.count("[]") > LEVELS and name not in rmm.UNITS):
            continue
        required = path[-1] in nodes[path[:-1]].get("required", ())
        yield (f"`{name}`", kind(node), "yes" if required else "", rmm.UNITS.get(name, ""), what(node))


def table() -> str:
    schema = json.loads(rmm.SCHEMA_PATH.read_text(encoding="utf-8"))
    lines = ["| field | type | required | unit | what (from the schema) |", "|---|---|---|---|---|"]
    for row in rows(schema):
        lines.append("| " + " | ".join(cell.replace("|", "\\|") for cell in row) + " |")
    return "\n".join(lines) + "\n"


def with_table(doc: str) -> str:
    before, rest = doc.split(START + "\n", 1)
    _, after = rest.split(END, 1)
    return f"{before}{START}\n{table()}{END}{after}"


if __name__ == "__main__":
    if "--write" in sys.argv:
        DOC.write_text(with_table(DOC.read_text(encoding="utf-8")), encoding="utf-8")
    else:
        sys.stdout.write(table())
