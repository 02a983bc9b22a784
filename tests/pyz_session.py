#!/usr/bin/env python3
"""Drive one full MCP session through any stdio server command and check it.

    python tests/pyz_session.py [--expect-robot NAME] -- CMD [ARG...]

e.g. `python tests/pyz_session.py -- python3 dist/robot-md-mcp.pyz examples/bob.ROBOT.md`.
Standard library only, so it runs on a bare CI runner, under emulation, or
beside any interpreter the pyz is being proven on: initialize (2025-11-25),
list and read every resource, list tools, call validate and render, get
every prompt (arguments from completion), subscribe and unsubscribe, close
stdin, and expect a clean exit 0. Prints one summary line; exit 1 on failure.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import threading
import time


class Session:
    def __init__(self, argv: list[str], timeout: float) -> None:
        self.proc = subprocess.Popen(
            argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE
        )
        self.timeout = timeout
        self.next_id = 0
        self.stderr: list[bytes] = []
        threading.Thread(target=lambda: self.stderr.extend(self.proc.stderr), daemon=True).start()

    def send(self, method: str, params: dict | None = None, notify: bool = False) -> dict | None:
        message: dict = {"jsonrpc": "2.0", "method": method}
        if params is not None:
            message["params"] = params
        if not notify:
            self.next_id += 1
            message["id"] = self.next_id
        self.proc.stdin.write((json.dumps(message) + "\n").encode())
        self.proc.stdin.flush()
        if notify:
            return None
        while True:  # skip notifications and anything not ours
            line = self._readline()
            reply = json.loads(line)
            if reply.get("id") == self.next_id:
                if "error" in reply:
                    raise AssertionError(f"{method} failed: {reply['error']}")
                return reply["result"]

    def _readline(self) -> bytes:
        result: list[bytes] = []
        reader = threading.Thread(target=lambda: result.append(self.proc.stdout.readline()), daemon=True)
        reader.start()
        reader.join(self.timeout)
        if not result or not result[0]:
            raise AssertionError(f"no reply within {self.timeout:.0f}s; stderr: {self.stderr_text()[-2000:]}")
        return result[0]

    def stderr_text(self) -> str:
        return b"".join(self.stderr).decode(errors="replace")


def _suggestion(session: Session, prompt: str, argument: str) -> str:
    """The server's first completion for a prompt argument, else a plain action in words."""
    ref = {"type": "ref/prompt", "name": prompt}
    params = {"ref": ref, "argument": {"name": argument, "value": ""}}
    values = session.send("completion/complete", params)["completion"]["values"]
    return values[0] if values else "pick up the cup"


def run(argv: list[str], expect_robot: str | None, timeout: float) -> str:
    started = time.perf_counter()
    session = Session(argv, timeout)
    init = session.send(
        "initialize",
        {
            "protocolVersion": "2025-11-25",
            "capabilities": {},
            "clientInfo": {"name": "pyz-session", "version": "1"},
        },
    )
    assert init["serverInfo"]["name"] == "robot-md-mcp", init
    initialized_ms = (time.perf_counter() - started) * 1000
    session.send("notifications/initialized", notify=True)
    resources = session.send("resources/list")["resources"]
    assert len(resources) >= 4, resources
    for resource in resources:
        if expect_robot:
            assert resource["uri"].startswith(f"robot-md://{expect_robot}/"), resource["uri"]
        contents = session.send("resources/read", {"uri": resource["uri"]})["contents"]
        assert contents and contents[0]["text"], resource["uri"]
        if resource["mimeType"] == "application/json":
            json.loads(contents[0]["text"])
    tools = {t["name"] for t in session.send("tools/list")["tools"]}
    assert {"validate", "render"} <= tools, tools
    validated = session.send("tools/call", {"name": "validate", "arguments": {}})
    assert not validated.get("isError") and validated["structuredContent"]["ok"] is True, validated
    rendered = session.send("tools/call", {"name": "render", "arguments": {}})
    assert rendered["structuredContent"]["yaml"].startswith("rcan_version:"), rendered
    prompts = session.send("prompts/list")["prompts"]
    for prompt in prompts:
        arguments = {
            a["name"]: _suggestion(session, prompt["name"], a["name"]) for a in prompt.get("arguments", [])
        }
        messages = session.send("prompts/get", {"name": prompt["name"], "arguments": arguments})["messages"]
        assert messages, prompt["name"]
    session.send("resources/subscribe", {"uri": resources[0]["uri"]})
    session.send("resources/unsubscribe", {"uri": resources[0]["uri"]})
    session.proc.stdin.close()
    code = session.proc.wait(timeout)
    assert code == 0, f"exit {code}; stderr: {session.stderr_text()[-2000:]}"
    assert "Traceback" not in session.stderr_text(), session.stderr_text()
    total_ms = (time.perf_counter() - started) * 1000
    return (
        f"ok: {len(resources)} resources, {len(prompts)} prompts, "
        f"validate '{validated['structuredContent']['summary']}', "
        f"initialize {initialized_ms:.0f} ms, session {total_ms:.0f} ms"
    )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--expect-robot", help="robot_name the URIs must carry")
    parser.add_argument("--timeout", type=float, default=120.0, help="seconds per reply (emulation is slow)")
    parser.add_argument("command", nargs=argparse.REMAINDER)
    args = parser.parse_args()
    command = args.command[1:] if args.command[:1] == ["--"] else args.command
    if not command:
        parser.error("give the server command after --")
    try:
        print(run(command, args.expect_robot, args.timeout))
    except (AssertionError, OSError, ValueError, subprocess.TimeoutExpired) as e:
        print(f"pyz-session: FAILED: {e}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
