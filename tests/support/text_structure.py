"""A small structural reader of the text the server writes: which parts are ours and which are
manifest text, quoted (a JSON string on one line) or fenced (a CommonMark code fence); and which of its
characters no reader sees (`hidden`).

The tests compare what is left of our text when every quoted string and fenced block is
replaced by a placeholder: that skeleton must not depend on what the manifest's strings hold."""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass, field

# A JSON string standing on one line: what `quoted()` writes.
QUOTED = re.compile(r'"(?:[^"\\\n]|\\.)*"')
# CommonMark: a fence opens with three or more backticks (no backtick after them) or tildes, indented
# at most three spaces, and closes with a run of the same character at least as long, alone on its line.
_OPENING = re.compile(r"^ {0,3}(?P<run>`{3,}(?=[^`]*$)|~{3,})(?P<info>.*)$")
_CLOSING = re.compile(r"^ {0,3}(?P<run>`{3,}|~{3,})[ \t]*$")
PLACEHOLDER = '"…"'
# What no reader sees: control and format characters, line and paragraph separators.
HIDDEN = ("Cc", "Cf", "Zl", "Zp")


def hidden(text: str, allowed: str = "\n\t") -> list[str]:
    """The invisible characters of `text` (but those `allowed`), as U+XXXX."""
    return [f"U+{ord(c):04X}" for c in text if c not in allowed and unicodedata.category(c) in HIDDEN]


def skeleton(line: str) -> str:
    """`line` with every quoted string as `"…"`: our words only."""
    return QUOTED.sub(PLACEHOLDER, line)


def segments(line: str) -> list[str]:
    """The ` | `-separated segments of a one-line text, quoted strings kept whole."""
    holes = QUOTED.findall(line)
    parts = skeleton(line).split(" | ")
    filled = iter(holes)
    return [re.sub(re.escape(PLACEHOLDER), lambda _: next(filled), part) for part in parts]


@dataclass
class Markdown:
    """`lines`: each line outside fences as its skeleton, each fenced block as one `<fenced INFO>`
    line; `fenced`: the text inside each fence (lines joined by newlines); `unclosed`: a fence ran
    to the end of the text."""

    lines: list[str] = field(default_factory=list)
    fenced: list[str] = field(default_factory=list)
    unclosed: bool = False


def read_markdown(text: str) -> Markdown:
    """Lines are split at every line break Python knows (U+2028, NEL, CR...): stricter than CommonMark,
    so a break that some reader honours cannot hide in a line."""
    out = Markdown()
    fence: str | None = None
    inside: list[str] = []
    for line in text.splitlines():
        if fence is None:
            opening = _OPENING.match(line)
            if opening:
                fence, inside = opening["run"], []
                out.lines.append(f"<fenced {skeleton(opening['info'].strip())}>")
            else:
                out.lines.append(skeleton(line))
            continue
        closing = _CLOSING.match(line)
        if closing and closing["run"][0] == fence[0] and len(closing["run"]) >= len(fence):
            out.fenced.append("\n".join(inside))
            fence = None
        else:
            inside.append(line)
    if fence is not None:
        out.fenced.append("\n".join(inside))
        out.unclosed = True
    return out


def headings(text: str) -> list[str]:
    """The headings outside fences, as their skeletons."""
    return [line for line in read_markdown(text).lines if re.match(r" {0,3}#{1,6}(?:[ \t]|$)", line)]
