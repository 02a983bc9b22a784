"""A usage error as argparse answers it: the command's usage line, then `PROG COMMAND: error: MESSAGE`."""

from __future__ import annotations

COMMANDS = ("serve", "validate", "render", "install", "uninstall")


def usage_message(stderr: str, bound: int = 100_000) -> str:
    """The MESSAGE of argparse's two lines (each at most `bound` characters), checked for their shape."""
    lines = stderr.splitlines()
    assert len(lines) == 2 and lines[0].startswith("usage: "), stderr[:600]
    prog, said, message = lines[1].partition(": error: ")
    assert said and prog.rsplit(" ", 1)[-1] in COMMANDS and message, lines[1][:300]
    assert all(len(line) <= bound for line in lines), [len(line) for line in lines]
    return message
