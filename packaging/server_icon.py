#!/usr/bin/env python3
"""The server's icon for serverInfo: the bundle's icon (packaging/mcpb/icon.png) at 64×64, as the
base64 PNG that robot_md_mcp.py carries in ICON_PNG_BASE64. Standard library only.

    python packaging/server_icon.py          # print the constant's value
    python packaging/server_icon.py --check  # exit 1 if the module's copy differs

64×64 covers what clients draw (16–32 px, twice that on high-density screens); the 512×512 original
would put 12 KB into every initialize result, and in the 2026-07-28 era into every result's _meta.
The same input always gives the same bytes (tests/test_plugin.py checks the module's copy).
"""

from __future__ import annotations

import base64
import re
import struct
import sys
import zlib
from pathlib import Path

HERE = Path(__file__).resolve().parent
ICON = HERE / "mcpb" / "icon.png"
MODULE = HERE.parent / "robot_md_mcp.py"
SIZE = 64

sys.path.insert(0, str(HERE / "mcpb"))
from draw_icon import png  # noqa: E402  (the bundle icon's own PNG writer)


def rgba_rows(data: bytes) -> tuple[int, list[bytes]]:
    """The pixels of an 8-bit RGBA, non-interlaced PNG whose rows use filter 0 (as draw_icon writes)."""
    assert data[:8] == b"\x89PNG\r\n\x1a\n", "not a PNG"
    pos, idat, width = 8, b"", 0
    while pos < len(data):
        (length,) = struct.unpack(">I", data[pos : pos + 4])
        kind, body = data[pos + 4 : pos + 8], data[pos + 8 : pos + 8 + length]
        if kind == b"IHDR":
            width, height, depth, color, _, _, interlace = struct.unpack(">IIBBBBB", body)
            assert (width, depth, color, interlace) == (height, 8, 6, 0), "expected square 8-bit RGBA"
        elif kind == b"IDAT":
            idat += body
        pos += 12 + length
    raw, stride = zlib.decompress(idat), 1 + 4 * width
    rows = [raw[i : i + stride] for i in range(0, len(raw), stride)]
    assert all(row[0] == 0 for row in rows), "expected filter type 0 on every row"
    return width, [row[1:] for row in rows]


def shrunk(width: int, rows: list[bytes], size: int) -> list[bytes]:
    """Box filter over premultiplied alpha (so transparent corners do not darken the edges)."""
    k = width // size
    out = []
    for j in range(size):
        row = bytearray()
        for i in range(size):
            r = g = b = a = 0
            for y in range(j * k, j * k + k):
                line = rows[y]
                for x in range(i * k, i * k + k):
                    pr, pg, pb, pa = line[4 * x : 4 * x + 4]
                    r, g, b, a = r + pr * pa, g + pg * pa, b + pb * pa, a + pa
            row.extend((round(r / a), round(g / a), round(b / a)) if a else (0, 0, 0))
            row.append(round(a / (k * k)))
        out.append(bytes(row))
    return out


def icon_base64() -> str:
    width, rows = rgba_rows(ICON.read_bytes())
    return base64.b64encode(png(SIZE, SIZE, shrunk(width, rows, SIZE))).decode("ascii")


def module_copy() -> str:
    text = MODULE.read_text(encoding="utf-8")
    block = re.search(r"^ICON_PNG_BASE64 = \((.*?)^\)", text, re.MULTILINE | re.DOTALL)
    assert block, "no ICON_PNG_BASE64 in robot_md_mcp.py"
    return "".join(re.findall(r'"([^"]*)"', block[1]))


def main() -> int:
    value = icon_base64()
    if sys.argv[1:] == ["--check"]:
        same = module_copy() == value
        print("server_icon: robot_md_mcp.py's icon is current" if same else "server_icon: stale; rerun")
        return 0 if same else 1
    for i in range(0, len(value), 100):
        print(f'    "{value[i : i + 100]}"')
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
