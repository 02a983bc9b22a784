#!/usr/bin/env python3
"""Draw the bundle's icon, packaging/mcpb/icon.png: 512×512 RGBA, standard library only.

    python packaging/mcpb/draw_icon.py [OUT]

A ROBOT.md page (text lines, a folded corner) with a robot arm on it, on a navy
rounded square. Every shape is a signed distance function, so edges are
anti-aliased without supersampling; the PNG is written with zlib and struct, and
the same script always writes the same bytes (tests/test_mcpb.py checks the
committed icon against it). Drawn for this project: no third-party artwork.
"""

from __future__ import annotations

import math
import struct
import sys
import zlib
from collections.abc import Callable
from pathlib import Path

SIZE = 512
OUT = Path(__file__).with_name("icon.png")

Color = tuple[int, int, int]
Shape = Callable[[float, float], float]  # signed distance in pixels: < 0 inside

NAVY_TOP: Color = (0x2A, 0x52, 0x7A)
NAVY_BOTTOM: Color = (0x14, 0x2B, 0x45)
PAGE: Color = (0xF6, 0xF8, 0xFB)
FOLD_COLOR: Color = (0xC4, 0xD2, 0xE0)
TEXT: Color = (0x9C, 0xB0, 0xC6)
ARM: Color = (0x1D, 0x3D, 0x5F)
JOINT: Color = (0xF2, 0x8C, 0x28)


def rounded_box(x0: float, y0: float, x1: float, y1: float, r: float) -> Shape:
    cx, cy, hx, hy = (x0 + x1) / 2, (y0 + y1) / 2, (x1 - x0) / 2 - r, (y1 - y0) / 2 - r

    def d(x: float, y: float) -> float:
        qx, qy = abs(x - cx) - hx, abs(y - cy) - hy
        return math.hypot(max(qx, 0.0), max(qy, 0.0)) + min(max(qx, qy), 0.0) - r

    return d


def circle(cx: float, cy: float, r: float) -> Shape:
    return lambda x, y: math.hypot(x - cx, y - cy) - r


def capsule(ax: float, ay: float, bx: float, by: float, r: float) -> Shape:
    """A segment from a to b, r thick on each side, round ends."""
    vx, vy = bx - ax, by - ay
    length2 = vx * vx + vy * vy

    def d(x: float, y: float) -> float:
        t = min(max(((x - ax) * vx + (y - ay) * vy) / length2, 0.0), 1.0)
        return math.hypot(x - ax - t * vx, y - ay - t * vy) - r

    return d


def half_plane(nx: float, ny: float, c: float) -> Shape:
    """Inside where nx*x + ny*y > c (n need not be unit length)."""
    norm = math.hypot(nx, ny)
    return lambda x, y: (c - nx * x - ny * y) / norm


def intersect(*shapes: Shape) -> Shape:
    return lambda x, y: max(s(x, y) for s in shapes)


def subtract(a: Shape, b: Shape) -> Shape:
    return lambda x, y: max(a(x, y), -b(x, y))


# The page: x 128..384, y 72..440; its top-right corner is folded down over FOLD px, along the
# line x - y = DIAGONAL from (384 - FOLD, 72) to (384, 72 + FOLD).
FOLD = 72
DIAGONAL = 384 - FOLD - 72
PAGE_SHAPE = subtract(rounded_box(128, 72, 384, 440, 22), half_plane(1, -1, DIAGONAL))
FOLD_SHAPE = intersect(
    half_plane(1, 0, 384 - FOLD),  # right of the fold's left edge
    half_plane(0, -1, -(72 + FOLD)),  # above its bottom edge
    half_plane(-1, 1, -DIAGONAL),  # below the diagonal
)

# The arm: base plate, shoulder, upper arm, elbow, forearm, wrist, two fingers.
SHOULDER, ELBOW, WRIST = (214.0, 356.0), (262.0, 272.0), (330.0, 300.0)
LAYERS: list[tuple[Shape, Color]] = [
    (PAGE_SHAPE, PAGE),
    (FOLD_SHAPE, FOLD_COLOR),
    (capsule(170, 124, 286, 124, 9), TEXT),
    (capsule(170, 154, 330, 154, 7), TEXT),
    (capsule(170, 180, 310, 180, 7), TEXT),
    (capsule(170, 206, 258, 206, 7), TEXT),
    (rounded_box(166, 380, 262, 404, 8), ARM),
    (rounded_box(190, 356, 238, 388, 6), ARM),
    (capsule(*SHOULDER, *ELBOW, 14), ARM),
    (capsule(*ELBOW, *WRIST, 11), ARM),
    (capsule(WRIST[0], WRIST[1], 344, 334, 5), ARM),
    (capsule(WRIST[0], WRIST[1], 360, 312, 5), ARM),
    (circle(*SHOULDER, 17), JOINT),
    (circle(*ELBOW, 14), JOINT),
    (circle(*WRIST, 10), JOINT),
]
BACKGROUND = rounded_box(0, 0, SIZE, SIZE, 104)


def coverage(distance: float) -> float:
    """How much of a one-pixel square centred at the point lies inside (linear ramp)."""
    return min(max(0.5 - distance, 0.0), 1.0)


def pixel(x: float, y: float) -> tuple[int, int, int, int]:
    alpha = coverage(BACKGROUND(x, y))
    if alpha == 0.0:
        return (0, 0, 0, 0)
    t = y / SIZE
    rgb = [a + (b - a) * t for a, b in zip(NAVY_TOP, NAVY_BOTTOM, strict=True)]
    for shape, color in LAYERS:
        c = coverage(shape(x, y))
        if c:
            rgb = [a + (b - a) * c for a, b in zip(rgb, color, strict=True)]
    return (round(rgb[0]), round(rgb[1]), round(rgb[2]), round(alpha * 255))


def png(width: int, height: int, rows: list[bytes]) -> bytes:
    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))

    header = struct.pack(">IIBBBBB", width, height, 8, 6, 0, 0, 0)  # 8-bit RGBA, no interlace
    raw = b"".join(b"\x00" + row for row in rows)  # filter type 0 on every row
    return (
        b"\x89PNG\r\n\x1a\n"
        + chunk(b"IHDR", header)
        + chunk(b"IDAT", zlib.compress(raw, 9))
        + chunk(b"IEND", b"")
    )


def draw() -> bytes:
    rows = []
    for j in range(SIZE):
        row = bytearray()
        for i in range(SIZE):
            row.extend(pixel(i + 0.5, j + 0.5))
        rows.append(bytes(row))
    return png(SIZE, SIZE, rows)


def main() -> int:
    out = Path(sys.argv[1]) if len(sys.argv) > 1 else OUT
    data = draw()
    out.write_bytes(data)
    print(f"draw_icon: wrote {out} ({SIZE}x{SIZE}, {len(data)} bytes)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
