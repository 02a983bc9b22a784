"""Where every test starts our server, and the only place a test starts a process: in this process
through the SDK's Client (`in_process`); as a real process over stdio (`RawServer`; `run` and `answers`
run the command line once), over HTTP (`Served`), or bare (`bare`: no reader of ours); a launcher proven
by one full session (`launched_session`); the SDK's Client over real stdio (`launched`); a Python snippet
beside the module (`python`). From the module, a pyz or any other command (`command=`), with the settings
the server reads (`settings()`), or a fault injected (`faulty()`).

Standard library only but for `in_process`, `bearer` and `launched`, and no pytest:
tests/support/pyz_session.py imports it to run a full session under any interpreter a pyz is proven on."""

from __future__ import annotations

import http.client
import itertools
import json
import os
import queue
import re
import secrets
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
MODULE = ROOT / "robot_md_mcp.py"
EXAMPLE = ROOT / "examples" / "bob.ROBOT.md"
# This interpreter, unless ROBOT_MD_MCP_TEST_PYTHON names another one (test_lazy_imports.py runs the
# default tier's servers under CPython 3.15 that way).
PYTHON = os.environ.get("ROBOT_MD_MCP_TEST_PYTHON") or sys.executable
# Tests start the server as SERVER: `python robot_md_mcp.py ARGS` but for one thing, the module
# comes from its cached bytecode (conftest compiles it once per run), where a script is compiled
# anew at every start, hundreds of starts a run. sys.argv and sys.path[0] are what the script form
# gives the module.
BOOT_PATH = "import os, sys\ndel sys.argv[0]\nsys.path[0] = os.path.dirname(sys.argv[0])\n"
BOOT_MAIN = "import robot_md_mcp\nsys.exit(robot_md_mcp.main())\n"
BOOT = BOOT_PATH + BOOT_MAIN
SERVER = [PYTHON, "-c", BOOT, str(MODULE)]
HANDSHAKE_VERSION = "2025-11-25"
REQUEST_DEADLINE = 2.0  # seconds for any one request, however hostile the file
INIT_PARAMS = {
    "protocolVersion": "2025-06-18",
    "capabilities": {},
    "clientInfo": {"name": "t", "version": "1"},
}
INIT = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": INIT_PARAMS}
MCP_HEADERS = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream"}
PROC = Path("/proc/self/status")  # VmHWM (peak RSS) is read from /proc
_EOF = object()


def server_argv(*args: str | Path, command: Sequence[str | Path] | None = None) -> list[str]:
    """The argv that starts our server with `args`: `command` (default SERVER; a pyz, a launcher,
    `python -c …`) followed by them."""
    return [*map(str, command or SERVER), *map(str, args)]


# Faults a test injects on purpose, which no setting of the shipped server may offer: the server started
# from source as SERVER does, with one of these done first. `faulty(fault, *words)` is its command.
_FAULTS = {
    # `import NAME` fails as it does when NAME is not installed (a broken install).
    "missing": "sys.modules[sys.argv.pop(1)] = None",
    # PyYAML built without LibYAML: its C extension is missing.
    "no-libyaml": "sys.modules['yaml._yaml'] = None",
    # A signal (NUMBER) arrives as MODULE starts loading.
    "signal-while-loading": """import importlib.abc
module, number = sys.argv.pop(1), int(sys.argv.pop(1))
class Interrupt(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path, target=None):
        if name == module:
            sys.meta_path.remove(self)
            os.kill(os.getpid(), number)
        return None
sys.meta_path.insert(0, Interrupt())""",
    # On SIGUSR1 (sent once serving), a library's stray print() and a raw write to fd 1.
    "stray-print": """import signal
def stray(signum, frame):
    print('stray print', flush=True)
    os.write(1, b'stray write\\n')
signal.signal(signal.SIGUSR1, stray)""",
    # parse() spins for a minute on a manifest that holds "slow-marker" (the worker preparing a version).
    "slow-parse": """import time
import robot_md_mcp
real = robot_md_mcp.parse
def slow(text):
    end = time.monotonic() + 60 * ("slow-marker" in text)
    while time.monotonic() < end:
        pass
    return real(text)
robot_md_mcp.parse = slow""",
}


# How `faulty` starts the module: as SERVER does, as `python robot_md_mcp.py` runs it, or as the
# `robot-md-mcp` console script does (the module tells a program run from a library import by these).
_STARTS = {
    "module": BOOT_MAIN,
    "script": "import runpy\nrunpy.run_path(sys.argv[0], run_name='__main__')\n",
    "launcher": "sys.argv[0] = os.path.join(sys.path[0], 'robot-md-mcp')\n" + BOOT_MAIN,
}


def faulty(fault: str, *words: str | int, start: str = "module") -> list[str]:
    """The command that starts the module (`start`, a key of _STARTS) with `fault` (a key of _FAULTS)
    injected first; `words` are the fault's own (a module name, a signal number), the server's
    arguments follow."""
    return [PYTHON, "-c", f"{BOOT_PATH}{_FAULTS[fault]}\n{_STARTS[start]}", str(MODULE), *map(str, words)]


def settings(
    limits: Mapping[str, float] | None = None, poll_seconds: float | None = None, debug: bool = False
) -> dict[str, str]:
    """The environment that has the server serve with lower `limits` (HttpLimits fields, times in
    seconds) and poll the file every `poll_seconds`, and with `debug`, log a line each time its
    poller looks at the file (docs/development.md: the settings the server reads)."""
    env = {}
    if limits:
        env["ROBOT_MD_MCP_HTTP_LIMITS"] = ",".join(f"{name}={value}" for name, value in limits.items())
    if poll_seconds is not None:
        env["ROBOT_MD_MCP_POLL_SECONDS"] = str(poll_seconds)
    if debug:
        env["ROBOT_MD_MCP_DEBUG"] = "1"
    return env


def environment(env: dict[str, str] | None = None, inherit: bool = True) -> dict[str, str]:
    """This process's environment (unless not `inherit`) with `env` over it, without ROBOT_MD_PATH
    unless `env` sets it (a developer's own must not leak in)."""
    base = {k: v for k, v in os.environ.items() if k != "ROBOT_MD_PATH"} if inherit else {}
    return {**base, **(env or {})}


def private_token(path: Path, token: str | None = None) -> str:
    """`token` (default: a fresh random one) written to `path`, readable by its owner only, as
    `--token-file` wants it; the token."""
    token = token or "tok-" + secrets.token_urlsafe(24)
    path.write_text(token, encoding="utf-8")
    path.chmod(0o600)
    return token.strip()


# --- through the SDK's own Client (these two import the SDK; the rest of this file does not) ---


def in_process(source: Path | Any, mode: str = "auto", keys: Any = None, **build: Any) -> Any:
    """The SDK's Client talking to our server in this process: the manifest at `source` (with
    trusted `keys`), served by `build_server(ManifestFile(source, keys), **build)`, or an already
    built server a test has reached into. Milliseconds, where a process takes a second. `mode`:
    "legacy" (the handshake era) or "auto" (2026-07-28 when both sides speak it)."""
    from mcp import Client

    import robot_md_mcp

    if isinstance(source, (str, Path)):
        source = robot_md_mcp.build_server(robot_md_mcp.ManifestFile(Path(source), keys), **build)
    return Client(source, mode=mode)


def bearer(token: str) -> Any:
    """An httpx2 client that sends `token` as a bearer on every request (for `sdk_client`)."""
    import httpx2

    return httpx2.AsyncClient(headers={"Authorization": f"Bearer {token}"}, timeout=30)


def launched(
    *args: str | Path,
    command: Sequence[str | Path] | None = None,
    mode: str = "legacy",
    env: dict[str, str] | None = None,
    cwd: Path | None = None,
    errlog: Any = None,
    message_handler: Any = None,
) -> Any:
    """The SDK's Client over real stdio to `command` (default SERVER; a pyz, an install entry, a
    launcher) with `args`, as a host starts it: `env` over this process's environment (`settings()`
    for a fast poll or debug lines), the server's stderr to `errlog` (default: ours)."""
    from mcp import Client, StdioServerParameters
    from mcp.client.stdio import stdio_client

    head, *rest = server_argv(*args, command=command)
    params = StdioServerParameters(command=head, args=rest, env=environment(env), cwd=cwd)
    transport = stdio_client(params, errlog=errlog or sys.stderr)
    return Client(transport, mode=mode, message_handler=message_handler)


# --- run once ----------------------------------------------------------------------------


def run(
    *args: str | Path,
    command: Sequence[str | Path] | None = None,
    cwd: Path = ROOT,
    env: dict[str, str] | None = None,
    stdin: str = "",
    timeout: float = 60,
    inherit_env: bool = True,
) -> subprocess.CompletedProcess[str]:
    """The server's command line run once with `args` (stdin given, then closed): exit code, and
    stdout and stderr as UTF-8 text. `env` goes over this process's environment, or is the whole
    of it when not `inherit_env`."""
    return subprocess.run(
        server_argv(*args, command=command),
        capture_output=True,
        text=True,
        encoding="utf-8",
        errors="replace",
        cwd=cwd,
        env=environment(env, inherit_env),
        input=stdin,
        timeout=timeout,
    )


def answers(*args: str | Path, messages: list[dict], **how: Any) -> tuple[dict[Any, dict], str, int]:
    """A whole stdio session at once, as a launcher or a script would drive it: `run(*args, **how)`
    with each message as a line on stdin, then stdin closed. Every answer by id, stderr, exit code."""
    done = run(*args, stdin="".join(json.dumps(m) + "\n" for m in messages), **how)
    by_id = {m["id"]: m for m in map(json.loads, done.stdout.splitlines())}
    return by_id, done.stderr, done.returncode


def python(code: str, *args: str | Path, env: dict[str, str] | None = None, inherit_env: bool = True) -> Any:
    """`code` run by a fresh interpreter (PYTHON) beside the module, with `args` as its argv: for what only
    a clean sys.modules or another environment shows (what an import loads, a hash seed, a locale)."""
    return run(*args, command=[PYTHON, "-c", code], env=env, inherit_env=inherit_env)


def bare(
    *args: str | Path,
    command: Sequence[str | Path] | None = None,
    env: dict[str, str] | None = None,
    inherit_env: bool = True,
    **how: Any,
) -> subprocess.Popen[Any]:
    """The server process with no reader of ours, each standard stream a pipe unless `how` says (stdin=,
    stdout=, stderr=, cwd=, text= as Popen takes them): for what the harness's reading would hide (a
    stdout nobody reads, odd descriptors at start, stdout and stderr closing at a deadline)."""
    how = {"stdin": subprocess.PIPE, "stdout": subprocess.PIPE, "stderr": subprocess.PIPE, "cwd": ROOT, **how}
    return subprocess.Popen(server_argv(*args, command=command), env=environment(env, inherit_env), **how)


def cost_worker() -> subprocess.Popen[str]:
    """tests/support/cost_worker.py (what one manifest costs, measured in a process of its own), text lines
    in and out."""
    worker = ROOT / "tests" / "support" / "cost_worker.py"
    pipe = subprocess.PIPE
    return subprocess.Popen([PYTHON, str(worker)], stdin=pipe, stdout=pipe, text=True, encoding="utf-8")


# --- stdio: newline-delimited JSON-RPC ---------------------------------------------------


def line(message: Any) -> bytes:
    return json.dumps(message).encode() + b"\n"


def is_jsonrpc(message: Any) -> bool:
    """One JSON-RPC 2.0 message as a server may send it: a response (result
    xor error, with an id, null only for an error) or a request/notification;
    or a batch's answers, a non-empty array of responses."""
    if isinstance(message, list):
        return bool(message) and all(is_jsonrpc(m) and "method" not in m for m in message)
    if not isinstance(message, dict) or message.get("jsonrpc") != "2.0":
        return False
    if "method" in message:
        return isinstance(message["method"], str) and set(message) <= {"jsonrpc", "id", "method", "params"}
    if ("result" in message) == ("error" in message) or "id" not in message:
        return False
    if "error" in message:
        error = message["error"]
        return (
            isinstance(error, dict)
            and isinstance(error.get("code"), int)
            and isinstance(error.get("message"), str)
            and (message["id"] is None or isinstance(message["id"], (int, str)))
        )
    return isinstance(message["id"], (int, str)) and isinstance(message["result"], dict)


class RawServer:
    """Our server over stdio pipes (`server_argv(*args, …)`): bytes in, lines out, every read bounded
    in time. It checks what the SDK's own Client would smooth over: that stdout carries only JSON-RPC
    lines, that stderr has no traceback, and how much memory the server peaked at. Threads drain
    stdout and stderr so a chatty server never blocks on a full pipe."""

    def __init__(
        self,
        *args: str | Path,
        command: Sequence[str | Path] | None = None,
        limits: Mapping[str, float] | None = None,
        poll_seconds: float | None = None,
        id_prefix: str = "",
        stdin: Any = subprocess.PIPE,
        cwd: Path | None = ROOT,
        env: dict[str, str] | None = None,
        inherit_env: bool = True,
    ) -> None:
        """`id_prefix` makes our own request ids strings no other sender uses (a test that writes
        generated requests itself must never see their late answers taken for ours); `stdin` may be
        a terminal's file descriptor instead of a pipe; `cwd` None: this process's; `env` over this
        process's environment, or the whole of it when not `inherit_env`."""
        env = {**settings(limits, poll_seconds), **(env or {})}
        self.proc = bare(*args, command=command, env=env, inherit_env=inherit_env, stdin=stdin, cwd=cwd)
        self.stdout_lines: list[bytes] = []
        self._stderr = bytearray()
        self._inbox: queue.Queue[Any] = queue.Queue()
        self._held: dict[Any, dict] = {}  # responses read while waiting for another id
        self.notifications: list[dict] = []
        self._ids: Iterator[Any] = itertools.count(1000)
        if id_prefix:
            self._ids = (f"{id_prefix}{n}" for n in itertools.count(1000))
        self._write_lock = threading.Lock()
        self._drains = [threading.Thread(target=self._drain_stdout, daemon=True)]
        self._drains.append(threading.Thread(target=self._drain_stderr, daemon=True))
        for drain in self._drains:
            drain.start()

    # --- plumbing ------------------------------------------------------------

    def _drain_stdout(self) -> None:
        assert self.proc.stdout is not None
        for raw in self.proc.stdout:
            self.stdout_lines.append(raw)
            self._inbox.put(raw)
        self._inbox.put(_EOF)

    def _drain_stderr(self) -> None:
        assert self.proc.stderr is not None
        while chunk := self.proc.stderr.read1(65536):  # type: ignore[attr-defined]
            self._stderr += chunk

    @property
    def stderr(self) -> str:
        return self._stderr.decode("utf-8", errors="replace")

    def write(self, data: bytes) -> None:
        """Raw bytes to the server's stdin (whole lines are the caller's business)."""
        assert self.proc.stdin is not None
        with self._write_lock:
            self.proc.stdin.write(data)
            self.proc.stdin.flush()

    def send(self, message: Any) -> None:
        self.write(line(message))

    def next_message(self, timeout: float) -> Any:
        """The next stdout line, parsed; it must be a JSON-RPC message."""
        try:
            raw = self._inbox.get(timeout=timeout)
        except queue.Empty:
            raise AssertionError(f"no output within {timeout}s; stderr: {self.stderr[-2000:]}") from None
        if raw is _EOF:
            raise AssertionError(f"the server closed stdout; stderr: {self.stderr[-2000:]}")
        message = json.loads(raw)
        assert is_jsonrpc(message), raw[:500]
        return message

    def response(self, request_id: Any, timeout: float = REQUEST_DEADLINE) -> dict:
        """The response to `request_id`; other responses are held for later,
        server notifications are kept in `notifications`."""
        deadline = time.monotonic() + timeout
        while request_id not in self._held:
            message = self.next_message(max(0.0, deadline - time.monotonic()))
            for one in message if isinstance(message, list) else [message]:  # a batch's answers
                if "method" in one:
                    self.notifications.append(one)
                else:
                    self._held[one["id"]] = one
        return self._held.pop(request_id)

    def silence(self, seconds: float) -> list[dict]:
        """Whatever responses arrive within `seconds` (normally none)."""
        deadline, got = time.monotonic() + seconds, list[dict]()
        while (left := deadline - time.monotonic()) > 0:
            try:
                raw = self._inbox.get(timeout=left)
            except queue.Empty:
                break
            if raw is _EOF:
                break
            message = json.loads(raw)
            (self.notifications if "method" in message else got).append(message)
        return got + list(self._held.values())

    # --- MCP -----------------------------------------------------------------

    def request(self, method: str, params: dict | None = None, timeout: float = REQUEST_DEADLINE) -> dict:
        """One request, answered within `timeout` seconds (asserted)."""
        request_id = next(self._ids)
        message: dict[str, Any] = {"jsonrpc": "2.0", "id": request_id, "method": method}
        if params is not None:
            message["params"] = params
        started = time.monotonic()
        self.send(message)
        answer = self.response(request_id, timeout)
        self.last_elapsed = time.monotonic() - started
        return answer

    def result(self, method: str, params: dict | None = None, timeout: float = REQUEST_DEADLINE) -> Any:
        """One request's result; an error answer fails."""
        answer = self.request(method, params, timeout)
        assert "result" in answer, f"{method} failed: {answer.get('error')}"
        return answer["result"]

    def handshake(self, timeout: float = 30, version: str = HANDSHAKE_VERSION) -> dict:
        """initialize (2025-11-25 unless told) + notifications/initialized. The
        first answer waits for the SDK's imports, hence the longer timeout."""
        answer = self.request("initialize", {**INIT_PARAMS, "protocolVersion": version}, timeout=timeout)
        assert answer["result"]["protocolVersion"] == version, answer
        self.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
        return answer["result"]

    def read(self, uri: str, timeout: float = REQUEST_DEADLINE) -> dict:
        return self.request("resources/read", {"uri": uri}, timeout)

    def call(self, tool: str, timeout: float = REQUEST_DEADLINE) -> dict:
        return self.request("tools/call", {"name": tool, "arguments": {}}, timeout)

    def fence(self, timeout: float = REQUEST_DEADLINE) -> list[dict]:
        """A ping, and the responses that came before its answer: the server
        handles lines in order, so those are what the lines before it got."""
        assert self.request("ping", timeout=timeout)["result"] == {}
        before, self._held = list(self._held.values()), {}
        return before

    # --- the process ---------------------------------------------------------

    def _status_mib(self, key: str) -> float:
        status = Path(f"/proc/{self.proc.pid}/status").read_text()
        return next(int(row.split()[1]) for row in status.splitlines() if row.startswith(key)) / 1024

    def peak_rss_mib(self) -> float:
        """VmHWM of the server process: the most resident memory it had
        since it started or since reset_peak()."""
        return self._status_mib("VmHWM:")

    def rss_mib(self) -> float:
        return self._status_mib("VmRSS:")

    def reset_peak(self) -> None:
        """Start a new VmHWM measurement (Linux: "5" > clear_refs)."""
        Path(f"/proc/{self.proc.pid}/clear_refs").write_text("5")

    def alive(self) -> bool:
        return self.proc.poll() is None

    def close(self, timeout: float = 10) -> int:
        """Close stdin (the end of the session) and wait for the exit code, and for the last of its
        output to be read (a process may end before our drains have taken its last line)."""
        try:
            return self.end_input(timeout)[0]
        finally:
            self.kill()

    def finish(self, timeout: float = 10) -> tuple[int, bytes, str]:
        """Wait for the process to end by itself (stdin left as it is): exit code, all stdout, stderr."""
        code = self.proc.wait(timeout=timeout)
        for drain in self._drains:
            drain.join(timeout=5)
        return code, b"".join(self.stdout_lines), self.stderr

    def end_input(self, timeout: float = 20) -> tuple[int, bytes, str]:
        """Close stdin at once (the client is done) and let the process end by itself: exit code,
        all stdout, stderr."""
        try:
            if self.proc.stdin is not None:
                self.proc.stdin.close()
        except BrokenPipeError:
            pass
        return self.finish(timeout)

    def kill(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait(timeout=10)

    def assert_clean(self) -> None:
        """Every stdout line so far is one well-formed JSON-RPC message, and
        stderr carries no traceback."""
        for raw in list(self.stdout_lines):
            assert raw.endswith(b"\n"), raw[:200]
            assert is_jsonrpc(json.loads(raw)), raw[:500]
        assert "Traceback" not in self.stderr, self.stderr[-3000:]

    def __enter__(self) -> RawServer:
        return self

    def __exit__(self, *exc: object) -> None:
        self.kill()


def full_session(server: RawServer, expect_robot: str | None, timeout: float) -> str:
    """One full MCP session, checked: initialize (2025-11-25), list and read every resource, list
    tools, call brief (the context resource's text; its robot card readable), validate and render, get
    every prompt (arguments from completion), subscribe and unsubscribe, close stdin, and a clean exit
    0. `timeout`: seconds per reply. One summary line."""
    started = time.perf_counter()
    init = server.handshake(timeout=timeout)
    assert init["serverInfo"]["name"] == "robot-md-mcp", init
    initialized_ms = (time.perf_counter() - started) * 1000
    resources = server.result("resources/list", timeout=timeout)["resources"]
    assert len(resources) >= 4, resources
    texts = {}
    for resource in resources:
        if expect_robot and not resource["uri"].startswith("ui://"):  # the card's page is listed too
            assert resource["uri"].startswith(f"robot-md://{expect_robot}/"), resource["uri"]
        contents = server.result("resources/read", {"uri": resource["uri"]}, timeout)["contents"]
        assert contents and contents[0]["text"], resource["uri"]
        texts[resource["name"]] = contents[0]["text"]
        if resource["mimeType"] == "application/json":
            json.loads(contents[0]["text"])
    tools = {t["name"]: t for t in server.result("tools/list", timeout=timeout)["tools"]}
    assert {"brief", "view", "validate", "render"} <= set(tools), tools
    briefed = server.result("tools/call", {"name": "brief", "arguments": {}}, timeout)
    assert [c["text"] for c in briefed["content"]] == [texts["context"]], briefed
    card_uri = tools["brief"]["_meta"]["ui"]["resourceUri"]
    (card,) = server.result("resources/read", {"uri": card_uri}, timeout)["contents"]
    assert card["mimeType"] == "text/html;profile=mcp-app" and card["text"].startswith("<!DOCTYPE html>"), (
        card
    )
    validated = server.result("tools/call", {"name": "validate", "arguments": {}}, timeout)
    assert not validated.get("isError") and validated["structuredContent"]["ok"] is True, validated
    rendered = server.result("tools/call", {"name": "render", "arguments": {}}, timeout)
    assert rendered["structuredContent"]["yaml"].startswith("rcan_version:"), rendered
    prompts = server.result("prompts/list", timeout=timeout)["prompts"]
    for prompt in prompts:
        arguments = {
            a["name"]: _suggestion(server, prompt["name"], a["name"], timeout)
            for a in prompt.get("arguments", [])
        }
        got = server.result("prompts/get", {"name": prompt["name"], "arguments": arguments}, timeout)
        assert got["messages"], prompt["name"]
    server.result("resources/subscribe", {"uri": resources[0]["uri"]}, timeout)
    server.result("resources/unsubscribe", {"uri": resources[0]["uri"]}, timeout)
    code = server.close(timeout)
    assert code == 0, f"exit {code}; stderr: {server.stderr[-2000:]}"
    server.assert_clean()
    total_ms = (time.perf_counter() - started) * 1000
    return (
        f"ok: {len(resources)} resources, {len(prompts)} prompts, "
        f"validate '{validated['structuredContent']['summary']}', "
        f"initialize {initialized_ms:.0f} ms, session {total_ms:.0f} ms"
    )


def launched_session(
    *command: str | Path,
    expect_robot: str | None = "bob",
    timeout: float = 120,
    cwd: Path | None = None,
    env: dict[str, str] | None = None,
    inherit_env: bool = True,
) -> str:
    """A launcher (a pyz under any interpreter, the bundle's entry, an install entry, the emulated
    Pi) proven by one `full_session` through `command`: its summary line, or AssertionError saying
    what went wrong. `timeout`: seconds per reply (emulation and a cold uv cache are slow)."""
    with RawServer(command=command, cwd=cwd, env=env, inherit_env=inherit_env) as server:
        return full_session(server, expect_robot, timeout)


def _suggestion(server: RawServer, prompt: str, argument: str, timeout: float) -> str:
    """The server's first completion for a prompt argument, else a plain action in words."""
    ref = {"type": "ref/prompt", "name": prompt}
    params = {"ref": ref, "argument": {"name": argument, "value": ""}}
    values = server.result("completion/complete", params, timeout)["completion"]["values"]
    return values[0] if values else "pick up the cup"


# --- Streamable HTTP ----------------------------------------------------------------------


class Served:
    """Our server over HTTP on 127.0.0.1 (`--http 127.0.0.1:0` unless `args` say otherwise: the start
    line says which port), stderr collected; raw requests to it; stopped by a signal. `unread_stderr`:
    stderr is instead a pipe of that many bytes (Linux) read up to the start line, then by nobody until
    `fill_stderr()` and `read_stderr()`."""

    def __init__(
        self,
        *args: str,
        env: dict[str, str] | None = None,
        path: Path = EXAMPLE,
        command: Sequence[str | Path] | None = None,
        limits: Mapping[str, float] | None = None,
        poll_seconds: float | None = None,
        unread_stderr: int | None = None,
    ) -> None:
        stderr: int = subprocess.PIPE
        if unread_stderr is not None:
            import fcntl

            self._unread, stderr = os.pipe()
            fcntl.fcntl(stderr, fcntl.F_SETPIPE_SZ, unread_stderr)  # type: ignore[attr-defined]
        args = args or ("--http", "127.0.0.1:0")
        env = {**settings(limits, poll_seconds), **(env or {})}
        self.proc = bare(
            path,
            *args,
            command=command,
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=stderr,
            text=True,
            cwd=None,
        )
        if unread_stderr is not None:
            os.close(stderr)
        self.lines: list[str] = []
        self._reader = threading.Thread(target=self._read if unread_stderr is None else self._read_start)
        self._reader.daemon = True
        self._reader.start()
        deadline = time.monotonic() + 60
        while not any(" at http://" in line for line in self.lines):
            assert self.proc.poll() is None, f"server exited {self.proc.returncode}: {self.stderr}"
            assert time.monotonic() < deadline, f"no start line: {self.stderr}"
            time.sleep(0.02)
        start = next(line for line in self.lines if " at http://" in line)
        self.port = int(re.search(r":(\d+)/mcp", start)[1])  # type: ignore[index]
        self.url = f"http://127.0.0.1:{self.port}/mcp"

    def _read(self) -> None:
        assert self.proc.stderr is not None
        for line in self.proc.stderr:
            self.lines.append(line)

    def _read_start(self) -> None:
        """The unread stderr's lines up to the start line, no further."""
        self.lines.extend(self.read_stderr(" at http://", timeout=60).splitlines(keepends=True))

    def read_stderr(self, *until: str, timeout: float) -> str:
        """What the unread stderr holds, read until it shows each of `until` (whole lines) or `timeout`."""
        import select

        data = b""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline and not (
            all(word.encode() in data for word in until) and data.endswith(b"\n")
        ):
            if select.select([self._unread], [], [], max(0.0, deadline - time.monotonic()))[0]:
                if not (chunk := os.read(self._unread, 65536)):
                    break
                data += chunk
        return data.decode("utf-8", "replace")

    def fill_stderr(self) -> int:
        """Fill the unread stderr to the brim (Linux), as a server's stderr nobody reads ends up: the bytes
        written. Through a description of its own, non-blocking; the server's fd 2 is left as it is."""
        full = os.open(f"/proc/{self.proc.pid}/fd/2", os.O_WRONLY | os.O_NONBLOCK)
        written = 0
        try:
            while True:
                written += os.write(full, b"." * 512)
        except BlockingIOError:
            return written
        finally:
            os.close(full)

    @property
    def stderr(self) -> str:
        return "".join(self.lines)

    def request(
        self, method: str, path: str, body: bytes | None = None, headers: dict[str, str] | None = None
    ) -> tuple[int, dict[str, str], bytes]:
        """One raw HTTP request to 127.0.0.1; the caller's headers (Host too) go as given."""
        conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=30)
        try:
            headers = dict(headers or {})
            headers.setdefault("Host", f"127.0.0.1:{self.port}")
            conn.putrequest(method, path, skip_host=True, skip_accept_encoding=True)
            for name, value in headers.items():
                conn.putheader(name, value)
            if body is not None and "Content-Length" not in headers:
                conn.putheader("Content-Length", str(len(body)))
            conn.endheaders(body)
            response = conn.getresponse()
            return response.status, {k.lower(): v for k, v in response.getheaders()}, response.read()
        finally:
            conn.close()

    def initialize(self, headers: dict[str, str] | None = None) -> tuple[int, dict[str, str], bytes]:
        return self.request("POST", "/mcp", json.dumps(INIT).encode(), {**MCP_HEADERS, **(headers or {})})

    def stop(self, sig: int = signal.SIGTERM) -> int:
        if self.proc.poll() is None:
            self.proc.send_signal(sig)
        try:
            code = self.proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            raise
        self._reader.join(timeout=5)
        if hasattr(self, "_unread"):
            os.close(self._unread)
        return code
