"""What an agent meets and does, shared by the tests of one robot, of a fleet and of a gateway: the corpus
files a server serves, a manifest for any robot's name, every tool call with its arguments, and an inbox of
notifications."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import anyio
from conftest import CORPUS, EXAMPLE, corpus_files

import robot_md_mcp as rmm

ACTION = "pick up the glass vial (300 g, 0,5 kg) at 0.2 m/s, the wrist at 3 rad/s, and put it on the shelf"
ARGUMENTS: dict[str, dict[str, str]] = {"view": {"kind": "safety"}, "check_action": {"action": ACTION}}
NOTIFIED_WITHIN = 2.0  # seconds from an edit to its notification


BOB = EXAMPLE.read_text(encoding="utf-8")
MINIMAL = (CORPUS / "mcpts__minimal.ROBOT.md").read_text(encoding="utf-8")


def named(name: str, base: str = MINIMAL) -> str:
    """A manifest for the robot `name` (its robot_name and its H1)."""
    old = "test-bot" if base is MINIMAL else "bob"
    return base.replace(f"robot_name: {old}", f"robot_name: {name}").replace(f"# {old}\n", f"# {name}\n")


def parsed(path: Path) -> rmm.Manifest | None:
    try:
        return rmm.parse(rmm.read_source(path).text)
    except rmm.ManifestError:
        return None


# The corpus files a server serves (they parse and name their robot).
SERVABLE = [p for p in corpus_files() if (m := parsed(p)) is not None and m.robot_name is not None]


def tool_calls() -> list[tuple[str, dict[str, str]]]:
    """Every tool with the arguments it is called with here (`view`: every kind)."""
    calls = [("view", {"kind": v.kind}) for v in rmm.VIEWS]
    return [*calls, *((name, ARGUMENTS.get(name, {})) for name in rmm.TOOLS if name != "view")]


class Inbox:
    """Server notifications as the client's message_handler receives them."""

    def __init__(self) -> None:
        self.items: list[tuple[float, Any]] = []

    async def __call__(self, message: object) -> None:
        self.items.append((time.monotonic(), message))

    async def next(self, kind: Any, since: float, uri: str | None = None) -> float:
        """Wait for a `kind` notification after `since`; return its latency."""
        with anyio.fail_after(NOTIFIED_WITHIN):
            while True:
                for at, m in self.items:
                    if at >= since and isinstance(m, kind) and (uri is None or m.params.uri == uri):
                        return at - since
                await anyio.sleep(0.02)

    def after(self, since: float) -> list[object]:
        return [m for at, m in self.items if at >= since and not isinstance(m, Exception)]
