"""Streamable HTTP: what `serve --http` serves, in this process (uvicorn on a thread, or the ASGI app), driven
by the SDK's client in both eras and by raw requests for the security rules; a real process where the
promise is the process's (signals, the start line). Loopback traffic only."""

from __future__ import annotations

import asyncio
import functools
import http.client
import itertools
import json
import logging
import os
import random
import re
import signal
import socket
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import pytest
from conftest import EXAMPLE, ROOT, posix_only
from http_served import (
    HOSTILE_KINDS,
    LISTEN,
    LISTEN_HEADERS,
    SESSION_HEADERS,
    HostilePeers,
    ServedOnAThread,
    answer_in_process,
    command_line,
    exchange,
    hostile_peer,
    jsonrpc,
    open_session,
    raw_request,
    sdk_client,
    served_in_process,
    served_on_a_thread,
    uvicorn_on_a_thread,
)
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st
from serving import INIT, INIT_PARAMS, MCP_HEADERS, Served, bearer, python
from usage import usage_message

import robot_md_mcp as m

TOKEN = "tok-" + "t" * 20


@pytest.fixture(scope="module")
def server() -> Iterator[ServedOnAThread]:
    with served_on_a_thread() as served:
        yield served


@pytest.fixture(scope="module")
def token_server() -> Iterator[ServedOnAThread]:
    with served_on_a_thread(token=TOKEN) as served:
        yield served


# --- the SDK's client, both eras ------------------------------------------------


@pytest.mark.anyio
@pytest.mark.parametrize("mode", ["legacy", "auto"])
async def test_sdk_client_session(token_server: ServedOnAThread, mode: str) -> None:
    """With the token: every view, both tools, the capabilities both eras advertise (resource changes and
    subscriptions, tool list changes: their titles name the robot; no prompt changes), logging/setLevel
    (handshake era)."""
    import warnings

    from mcp.types import EmptyResult

    async with bearer(TOKEN) as http, sdk_client(http, token_server.url, mode) as client:
        assert client.protocol_version == ("2026-07-28" if mode == "auto" else "2025-11-25")
        caps = client.server_capabilities
        assert caps is not None and caps.resources and caps.prompts and caps.tools
        changes = (caps.resources.list_changed, caps.resources.subscribe, caps.prompts.list_changed)
        assert (*changes, caps.tools.list_changed) == (True, True, False, True)
        uris = [r.uri for r in (await client.list_resources()).resources]
        for kind in ("frontmatter", "capabilities", "safety", "body"):
            assert f"robot-md://bob/{kind}" in uris
        for uri in uris:
            (content,) = (await client.read_resource(uri)).contents
            assert content.uri == uri and content.text  # type: ignore[union-attr]
        safety = await client.read_resource("robot-md://bob/safety")
        assert json.loads(safety.contents[0].text) == m.parse(EXAMPLE.read_text()).frontmatter["safety"]  # type: ignore[union-attr]
        validated = await client.call_tool("validate", {})
        assert not validated.is_error and validated.structured_content["ok"] is True  # type: ignore[index]
        rendered = await client.call_tool("render", {})
        assert rendered.structured_content == {"yaml": m.render(m.parse(EXAMPLE.read_text()))}
        assert {"validate", "render"} <= {t.name for t in (await client.list_tools()).tools}
        if mode == "legacy":
            assert caps.logging is not None
            with warnings.catch_warnings():  # the *client* method is marked deprecated
                warnings.simplefilter("ignore")
                assert isinstance(await client.set_logging_level("warning"), EmptyResult)


@pytest.mark.anyio
@pytest.mark.parametrize("mode", ["legacy", "auto"])
async def test_errors_name_the_file_not_the_servers_folders(tmp_path: Path, mode: str) -> None:
    """A remote client learns the manifest's file name, not where it lives on the server."""
    from mcp import MCPError

    path = tmp_path / "secret-folder" / "ROBOT.md"
    path.parent.mkdir()
    path.write_text(EXAMPLE.read_text(encoding="utf-8"), encoding="utf-8")
    async with served_in_process(path) as (http, url), sdk_client(http, url, mode) as client:
        path.write_text("---\nmetadata: [\n---\n", encoding="utf-8")
        with pytest.raises(MCPError) as e:
            await client.read_resource("robot-md://bob/context")
        assert "(ROBOT.md)" in str(e.value) and "secret-folder" not in str(e.value)
        validated = await client.call_tool("validate", {})
        said = validated.content[0].text  # type: ignore[union-attr]
        assert validated.is_error and "(ROBOT.md)" in said and "secret-folder" not in said


class _Lines(logging.Handler):
    """The lines logged while it is attached to the server's logger."""

    def __init__(self) -> None:
        super().__init__()
        self.lines: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.lines.append(record.getMessage())

    def __enter__(self) -> list[str]:
        logging.getLogger(m.NAME).addHandler(self)
        return self.lines

    def __exit__(self, *exc: object) -> None:
        logging.getLogger(m.NAME).removeHandler(self)


# --- who is served: Host, Origin and the token, as the guard decides (in process) ---------------------

FOREIGN_HOSTS = [
    "evil.example.com",
    "evil.example.com:{port}",
    "127.0.0.1:1",
    "localhost",
    "127.0.0.2:{port}",
    "",
]
FOREIGN_ORIGINS = ["http://evil.example.com", "https://evil.example.com:{port}", "null", "http://localhost:1"]
OWN_HOSTS = ["127.0.0.1:{port}", "localhost:{port}", "[::1]:{port}", "LOCALHOST:{port}"]
WRONG_TOKENS = ["Bearer wrong-token-wrong-token", "{token}", "Basic {token}", "Bearer {token}x"]

# open_listener's address, --allow-host names, the token from the environment; then what an initialize gets
# with these headers ({port}: the bound port, {token}: the token). /healthz gets the same, but for 401: it
# needs no token.
LISTENERS = {
    "loopback": (
        ("0", [], False),
        [({"Host": h}, 421) for h in FOREIGN_HOSTS]
        + [({"Origin": o}, 403) for o in FOREIGN_ORIGINS]
        + [({"Host": h}, 200) for h in OWN_HOSTS]
        + [({"Origin": f"http://{h}:{{port}}"}, 200) for h in ("localhost", "127.0.0.1")],
    ),
    "--allow-host": (
        ("0", ["robot.test", "bench.local:8443"], False),
        [
            ({"Host": h}, 200)
            for h in ("robot.test:{port}", "robot.test", "bench.local:8443", "localhost:{port}")
        ]
        + [({"Origin": "http://robot.test:{port}"}, 200)]
        + [({"Host": h}, 421) for h in ("bench.local", "bench.local:{port}", "other.test:{port}")],
    ),
    "token from the environment, on loopback": (
        ("0", [], True),
        [({}, 401), ({"Authorization": "Bearer {token}"}, 200), ({"Authorization": "bearer {token}"}, 200)]
        + [({"Authorization": wrong}, 401) for wrong in WRONG_TOKENS]
        + [({"Authorization": "Bearer {token}", "Host": "evil.example.com"}, 421)],  # Host checked first
    ),
    "all interfaces, with a token": (
        ("0.0.0.0:0", [], True),
        [
            ({"Host": "127.0.0.1:{port}"}, 401),
            ({"Host": "127.0.0.1:{port}", "Authorization": "Bearer {token}"}, 200),
            ({"Host": "evil.example.com", "Authorization": "Bearer {token}"}, 421),
        ],
    ),
    "another loopback address": (
        ("127.0.0.2:0", [], False),
        [
            ({"Host": f"{h}:{{port}}"}, s)
            for h, s in (("127.0.0.2", 200), ("localhost", 200), ("127.0.0.3", 421))
        ],
    ),
}


@pytest.mark.anyio
@pytest.mark.parametrize("kind", LISTENERS)
async def test_the_listeners_rules_decide_who_is_served(kind: str) -> None:
    """The rules a listener was opened with (--allow-host names, the token, the address bound), as the app
    applies them (in process; bound to all interfaces: reached through 127.0.0.1 only): a Host that does not
    name this server is 421, a foreign Origin 403 (loopback names in any case and pages of our own origins
    are served), a missing or wrong token 401 with its challenge, on /mcp and /healthz alike but for the
    token, which /healthz needs not; a refused token is logged by reason, never the token nor a wrong one."""
    (address, names, with_token), expected = LISTENERS[kind]
    listener = m.open_listener(address, allow_hosts=names, environ={m.TOKEN_ENV: TOKEN if with_token else ""})
    listener.socket.close()
    assert ("all interfaces" in listener.hint) == address.startswith("0.0.0.0")
    port = listener.url.rsplit(":", 1)[1].split("/")[0]
    with _Lines() as lines:
        async with served_in_process(listener=listener) as (http, _):
            for headers, status in expected:
                sent = {k: v.format(port=port, token=TOKEN) for k, v in headers.items()}
                answered = await http.post(
                    m.MCP_PATH, content=json.dumps(INIT), headers={**MCP_HEADERS, **sent}
                )
                assert answered.status_code == status, sent
                assert status != 401 or answered.headers["www-authenticate"].startswith("Bearer"), sent
                assert status != 200 or re.fullmatch(r"[0-9a-f]{32}", answered.headers["mcp-session-id"])
                health = (await http.get(m.HEALTH_PATH, headers=sent)).status_code
                assert health == (200 if status == 401 else status), sent
    assert with_token == any("without the right bearer token" in line for line in lines), lines
    assert not [line for line in lines if TOKEN in line or "wrong-token" in line], lines


@functools.cache
def _guard_with_token(token: str) -> m.HttpGuard:
    """The app `serve --http` serves, with a token, built once."""
    listener = m.HttpListener(socket=None, url="", allowed_hosts=("127.0.0.1:9",), token=token)
    return m.http_app(m.ManifestFile(EXAMPLE), listener)


# What a header value may hold (RFC 9110 field-vchar: visible ASCII and obs-text), but for spaces and
# tabs, which may separate the scheme from the token.
FIELD_CHARS = st.characters(codec="latin-1", categories=None, exclude_characters=" \t").filter(
    lambda c: "\x21" <= c <= "\x7e" or c >= "\x80"
)


@settings(max_examples=30, deadline=None)
@given(before=st.text(FIELD_CHARS, max_size=3), after=st.text(FIELD_CHARS, max_size=3))
@example(before="", after="\xa0")
@example(before="\x85", after="")
def test_only_the_token_itself_is_let_in(before: str, after: str) -> None:
    """The token with anything before or after it (bytes Python takes for spaces, \\xa0 and \\x85, too)
    is a wrong token: 401 on every guarded path; the token itself, after one or more spaces, is let in."""
    for path in (m.REST_HEALTH_PATH, "/robots/bob/identity"):
        sent = [
            (b"host", b"127.0.0.1:9"),
            (b"authorization", f"Bearer   {before}{TOKEN}{after}".encode("latin-1")),
        ]
        status = anyio.run(answer_in_process, _guard_with_token(TOKEN), "GET", path, sent)[0]
        assert status == (200 if before + after == "" else 401), (path, sent)


# What a start with this --http address (and token file: its text and mode) is refused with, in one line.
REFUSED_AT_START = [
    ("0.0.0.0:0", None, "without a bearer token"),
    ("nonsense", None, "expected [HOST:]PORT"),
    ("70000", None, "expected [HOST:]PORT"),
    ("127.0.0.1:", None, "expected [HOST:]PORT"),
    ("::1:8080", None, "brackets"),
    ("no-such-host.invalid:8080", None, "cannot listen on no-such-host.invalid:8080"),
    ("127.0.0.1:{taken}", None, "cannot listen on 127.0.0.1:{taken}: address already in use"),
    ("0", ("short-token\n", 0o600), "at least 16"),
    ("0", ("two words but long enough\n", 0o600), "without spaces"),
    ("0", ("", 0o600), "at least 16"),
    ("0", (None, 0o600), "cannot read the token file"),
    # As ssh refuses a private key others can read: a token group or others can read or change.
    *(
        pytest.param(
            "0", (TOKEN, mode), f"(mode {mode:04o}); make it private: chmod 600 {{path}}", marks=posix_only
        )
        for mode in (0o640, 0o604, 0o620, 0o644)
    ),
]


@pytest.mark.parametrize(("address", "token_file", "words"), REFUSED_AT_START)
def test_a_setting_that_cannot_work_is_one_line_and_exit_1(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], address: str, token_file: Any, words: str
) -> None:
    """Before anything is served: exit 1, one line naming the problem, never the token file's text."""
    taken = socket.socket()  # {taken}: a port another server listens on
    taken.bind(("127.0.0.1", 0))
    taken.listen(1)
    port = taken.getsockname()[1]
    path, args = tmp_path / "token", [str(EXAMPLE), "--http", address.format(taken=port)]
    if token_file is not None:
        text, mode = token_file
        if text is not None:
            path.write_text(text, encoding="utf-8")
            path.chmod(mode)
        args += ["--token-file", str(path)]
    with taken:
        done = command_line(capsys, *args)
    assert done.returncode == 1 and done.stderr.count("\n") == 1, done.stderr
    assert words.format(path=path, taken=port) in done.stderr, done.stderr
    assert token_file is None or not (token_file[0] or "").strip() or token_file[0].strip() not in done.stderr


@pytest.mark.parametrize("saved", ["{}", "{}\n", "{}\r\n", "\ufeff{}", "\ufeff{}\r\n", " {} \n\n"])
def test_a_token_file_as_editors_save_it_is_read(tmp_path: Path, token: str, saved: str) -> None:
    """A BOM (Notepad's UTF-8), CRLF or blank lines around the token: the token, as a manifest's
    bytes are read past them too."""
    path = tmp_path / "token"
    path.write_text(saved.format(token), encoding="utf-8", newline="")
    path.chmod(0o600)
    assert m.read_token(str(path)) == token


@pytest.mark.parametrize("size", [m.MAX_TOKEN_FILE_BYTES, m.MAX_TOKEN_FILE_BYTES + 1, 1024 * 1024])
@pytest.mark.parametrize("padding", ["token", "newlines"])
def test_a_token_file_longer_than_what_is_read_is_refused_not_cut(
    tmp_path: Path, token: str, size: int, padding: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """A token file of `size` bytes (one long token, or a token and newlines): within the limit it is
    read whole; past it the server refuses to start in one line, never serving a cut token."""
    path = tmp_path / "token"
    text = "t" * size if padding == "token" else token + "\n" * (size - len(token))
    path.write_text(text, encoding="ascii")
    path.chmod(0o600)
    if size <= m.MAX_TOKEN_FILE_BYTES:
        assert m.read_token(str(path)) == text.strip()
        return
    with pytest.raises(m.HttpSetupError) as refused:
        m.read_token(str(path))
    assert str(refused.value) == f"the token file {path} is longer than 4,096 bytes; it should hold one token"
    done = command_line(capsys, EXAMPLE, "--http", "0", "--token-file", str(path))
    assert (done.returncode, done.stderr) == (1, f"robot-md-mcp: {refused.value}\n")


@pytest.mark.anyio
async def test_a_slow_manifest_never_stalls_serving(tmp_path: Path) -> None:
    """A hostile edit (nested merges just within the value budget: a good fraction of a second to
    parse, validate and show) is parsed on a worker thread: while a read waits for the new version,
    /healthz keeps answering at once (the same event loop serves both), and the read gets the new
    version (or its error), never a stalled server."""
    from mcp import MCPError

    path = tmp_path / "ROBOT.md"
    path.write_text(EXAMPLE.read_text(encoding="utf-8"), encoding="utf-8")
    answers: list[str] = []
    async with served_in_process(path) as (http, url), sdk_client(http, url, "legacy") as client:
        lines = ["l0: &l0 {" + ", ".join(f"k{i}: {i}" for i in range(50)) + "}"]
        lines.append("l1: &l1 {<<: [" + ", ".join(["*l0"] * 99) + "]}")
        lines.append("l2: &l2 {<<: [" + ", ".join(["*l1"] * 99) + "]}")
        text = EXAMPLE.read_text(encoding="utf-8").replace("---\n", "---\n" + "\n".join(lines) + "\n", 1)
        path.write_text(text.replace("payload_kg: 0.5", "payload_kg: 0.7"), encoding="utf-8")

        async def read() -> None:
            try:
                answers.append((await client.read_resource("robot-md://bob/context")).contents[0].text)  # type: ignore[union-attr]
            except MCPError as e:
                answers.append(f"error: {e}")

        slowest, meanwhile = 0.0, 0
        async with anyio.create_task_group() as tasks:
            tasks.start_soon(read)
            while not answers:
                started = time.monotonic()
                assert (await http.get(m.HEALTH_PATH)).status_code == 200
                slowest = max(slowest, time.monotonic() - started)
                meanwhile += not answers  # answered while the read still waited
                await anyio.sleep(0.01)  # a health checker's pace, not a flood competing with the parse
    ((said,),) = [answers]
    assert "0.7 kg" in said or said.startswith("error: "), said[:300]  # the new version, or why it cannot be
    # /healthz never waits for the read's version.
    assert meanwhile >= 2 and slowest < 0.45, (meanwhile, slowest)


# Bodies stdio refuses, one of each kind of error classify_line gives, then blank ones, which stdio skips.
REFUSED_BODIES = [b'{"jsonrpc": "2.0", "id": %s, "method": "ping"}' % i for i in (b"null", b"1.5", b"{}")] + [
    b'[{"jsonrpc": "2.0", "id": 1, "method": "ping"}]',  # a batch, outside a 2025-03-26 session
    b'{"jsonrpc": "2.0", "id": 7, "method": 5}',
    b"{not json",
]
BLANK_BODIES = [b"", b" ", b"\r\n", b"\xef\xbb\xbf", b"\t \n"]


@pytest.mark.parametrize("body", REFUSED_BODIES + BLANK_BODIES)
def test_malformed_messages_are_answered_as_over_stdio(server: ServedOnAThread, body: bytes) -> None:
    """Never a 202 with no answer, never a pydantic dump, no session opened: the JSON-RPC error stdio gives,
    in a session or not (a batch: in every revision but 2025-03-26's); a blank body (stdio skips the line,
    a POST needs an answer) -32700 in our words."""
    empty = {"code": -32700, "message": "Parse error: the request body is empty"}
    expected = m.classify_line(body.removeprefix(b"\xef\xbb\xbf"))[1]  # the guard reads past a BOM
    expected = expected or {"jsonrpc": "2.0", "id": None, "error": empty}
    versions = ["2025-06-18"] if body[:1] != b"[" else ["2024-11-05", "2025-06-18", "2025-11-25"]  # a batch
    for headers in (MCP_HEADERS, *map(server.session, versions)):
        status, fields, answer = server.request("POST", "/mcp", body, headers)
        assert (status, fields["content-type"], json.loads(answer)) == (400, "application/json", expected)
        assert "mcp-session-id" not in fields, fields


def test_a_batch_in_a_2025_03_26_session_gets_one_array_of_answers(server: ServedOnAThread) -> None:
    session = server.session("2025-03-26")
    batch = [
        {"jsonrpc": "2.0", "id": 1, "method": "ping"},
        {
            "jsonrpc": "2.0",
            "id": "two",
            "method": "resources/read",
            "params": {"uri": "robot-md://bob/identity"},
        },
        {"jsonrpc": "2.0", "method": "notifications/progress", "params": {"progressToken": 1, "progress": 1}},
        {"jsonrpc": "2.0", "id": 3, "method": "no/such/method"},
        5,
    ]
    status, headers, body = server.request("POST", "/mcp", json.dumps(batch).encode(), session)
    assert (status, headers["content-type"]) == (200, "application/json"), body
    answers = {a["id"]: a for a in json.loads(body)}
    assert set(answers) == {1, "two", 3, None}
    assert answers[1]["result"] == {}
    assert answers["two"]["result"]["contents"][0]["text"].startswith('name: "bob" | type: "arm+camera"')
    assert answers[3]["error"]["code"] == -32601 and answers[None]["error"]["code"] == -32600
    notifications = [{"jsonrpc": "2.0", "method": "notifications/initialized"}]
    assert server.request("POST", "/mcp", json.dumps(notifications).encode(), session)[:1] == (202,)


JSON_SPACE = st.text(" \t\r\n", max_size=3)


def _nested(depth: int, kinds: list[bool]) -> object:
    """Arrays and objects (by `kinds`, in turn) nested `depth` deep."""
    value: object = 1
    for level in range(depth):
        value = {"k": value} if kinds[level % len(kinds)] else [value]
    return value


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    depth=st.integers(1, 400),
    kinds=st.lists(st.booleans(), min_size=1, max_size=4),
    batch=st.booleans(),
    request_id=st.integers(1, 2**40),
    around=st.tuples(st.booleans(), JSON_SPACE, JSON_SPACE),
)
@example(depth=m.MAX_MESSAGE_DEPTH - 2, kinds=[False], batch=False, request_id=1, around=(True, "", ""))
@example(depth=m.MAX_MESSAGE_DEPTH - 1, kinds=[False], batch=False, request_id=2, around=(False, "", ""))
@example(depth=m.MAX_MESSAGE_DEPTH - 2, kinds=[True], batch=True, request_id=3, around=(True, " ", "\n"))
@example(depth=300, kinds=[False], batch=True, request_id=4, around=(False, "", ""))
def test_a_body_is_answered_as_the_same_line_over_stdio_with_its_id(
    server: ServedOnAThread,
    depth: int,
    kinds: list[bool],
    batch: bool,
    request_id: int,
    around: tuple[bool, str, str],
) -> None:
    """A request whose params nest deep (alone, or last in a 2025-03-26 batch after a ping), after a UTF-8
    BOM and within JSON's whitespace, which stdio reads past: the answer stdio's classify_line gives the
    line, with its id, never the SDK's parse error with none (its parser stops at a depth Python's goes
    past), and no other member's answer lost."""
    session = server.session("2025-03-26" if batch else "2025-06-18")
    message = {"jsonrpc": "2.0", "id": request_id, "method": "ping", "params": {"x": _nested(depth, kinds)}}
    sent = [{"jsonrpc": "2.0", "id": "first", "method": "ping"}, message] if batch else message
    bom, before, after = around
    body = ("\ufeff" * bom + before + json.dumps(sent) + after).encode()
    error = m.classify_line(body, batches=True)[0][1][1] if batch else m.classify_line(body)[1]
    assert (error is None) == (depth + 2 <= m.MAX_MESSAGE_DEPTH)
    status, _, answer = server.request("POST", "/mcp", body, session)
    got = answer.decode()
    if error is not None:
        assert error["id"] == request_id and error["error"]["code"] == -32600, error
    if batch:
        assert status == 200 and {a["id"]: a for a in json.loads(got)} == {
            "first": {"jsonrpc": "2.0", "id": "first", "result": {}},
            request_id: error or {"jsonrpc": "2.0", "id": request_id, "result": {}},
        }
    elif error is None:
        assert status == 200 and f'{{"jsonrpc":"2.0","id":{request_id},"result":{{}}}}' in got, got
    else:
        assert (status, json.loads(got)) == (400, error)


@pytest.mark.parametrize("depth", [m.MAX_MESSAGE_DEPTH - 3, m.MAX_MESSAGE_DEPTH - 2, 300])
def test_a_deeply_nested_initialize_is_refused_in_one_line_with_its_id(
    server: ServedOnAThread, depth: int
) -> None:
    """Capabilities nested deep: served up to MAX_MESSAGE_DEPTH, else -32600 with the id (never a 500:
    the initialize passed on is written anew, and pydantic writes no deeper than 257 levels)."""
    init = {**INIT, "id": 5, "params": {**INIT_PARAMS, "capabilities": {"x": _nested(depth, [True])}}}
    logged = len(server.lines)
    status, _, answer = server.request("POST", "/mcp", json.dumps(init).encode(), MCP_HEADERS)
    if depth + 3 <= m.MAX_MESSAGE_DEPTH:
        assert status == 200 and b'"protocolVersion"' in answer, (status, answer)
    else:
        assert status == 400 and json.loads(answer)["id"] == 5 and b"nested deeper" in answer, answer
    assert not server.lines[logged:], server.lines[logged:]


@pytest.mark.parametrize("ended", ["before", "during"])
def test_a_batch_whose_session_ended_gets_the_404_that_says_so(server: ServedOnAThread, ended: str) -> None:
    """A 2025-03-26 batch whose session ends before it comes or while it is served: 404, as any message
    to an ended session gets, so the client opens a new one (never a -32600 "batch" refusal, nor one
    bare error object in place of the batch's array)."""
    session = server.session("2025-03-26")
    pings = [{"jsonrpc": "2.0", "id": i, "method": "ping"} for i in range(3000 if ended == "during" else 3)]
    answers: list[tuple[int, dict[str, str], bytes]] = []
    batch = threading.Thread(
        target=lambda: answers.append(server.request("POST", "/mcp", json.dumps(pings).encode(), session))
    )
    if ended == "before":
        assert server.request("DELETE", "/mcp", None, session)[0] == 200
    batch.start()
    if ended == "during":
        time.sleep(0.2)
        assert server.request("DELETE", "/mcp", None, session)[0] == 200
    batch.join(30)
    ((status, headers, body),) = answers
    if status == 200:  # the whole batch was served before the DELETE: every answer, in one array
        assert ended == "during" and len(json.loads(body)) == len(pings), body[:200]
        return
    assert (status, headers["content-type"]) == (404, "application/json"), (status, body[:200])
    assert json.loads(body)["error"]["message"] == "Session not found", body


@pytest.mark.parametrize(
    "headers",
    [{"Accept": "application/json"}, {"Accept": "text/event-stream"}, {"Content-Type": "text/plain"}],
    ids=["json-only", "stream-only", "text-plain"],
)
def test_a_batch_refused_for_its_headers_gets_what_one_message_gets(
    server: ServedOnAThread, headers: dict[str, str]
) -> None:
    """Headers the SDK refuses a POST for (Accept, Content-Type) refuse a batch as they refuse one
    message: the same status and body, never a 200 with one id-less object, nor a 202 with no answers."""
    session = {**server.session("2025-03-26"), **headers}
    ping = {"jsonrpc": "2.0", "id": 1, "method": "ping"}
    alone = server.request("POST", "/mcp", json.dumps(ping).encode(), session)
    batch = server.request("POST", "/mcp", json.dumps([ping, {**ping, "id": 2}]).encode(), session)
    assert alone[0] >= 400 and (batch[0], batch[2]) == (alone[0], alone[2]), (alone, batch)


@pytest.mark.heavy  # seconds of real time: the heavy tier
def test_batches_their_peers_left_stop_and_free_their_slots() -> None:
    """Peers that send a long 2025-03-26 batch (2,000 pings, seconds of work) and leave once it is read:
    each batch stops with its peer, so they hold no slot (uvicorn answers everyone 503 once four times
    the connection limit of requests are at work) and no processor time meant for others."""
    pings = [{"jsonrpc": "2.0", "id": i, "method": "ping"} for i in range(2000)]

    async def scenario(port: int) -> list[int]:
        init = {**INIT, "params": {**INIT_PARAMS, "protocolVersion": "2025-03-26"}}
        opened = await exchange(
            port, raw_request(port, "POST", body=json.dumps(init).encode(), **SESSION_HEADERS)
        )
        headers = {**SESSION_HEADERS, "Mcp_Session_Id": opened[1]["mcp-session-id"]}
        for _ in range(12):
            _, writer = await asyncio.open_connection("127.0.0.1", port)
            writer.write(raw_request(port, "POST", body=json.dumps(pings).encode(), **headers))
            await writer.drain()
            await asyncio.sleep(0.1)  # read by now
            writer.close()
        await asyncio.sleep(0.3)
        return [(await exchange(port, raw_request(port, "GET", "/healthz")))[0] for _ in range(5)]

    with served_on_a_thread(m.HttpLimits(connections=2)) as served:  # 8 requests at work at most
        assert asyncio.run(asyncio.wait_for(scenario(served.port), 60)) == [200] * 5


@pytest.mark.heavy  # seconds of real time: the heavy tier
def test_notifications_racing_their_sessions_end_are_answered_once() -> None:
    """Notifications sent while their session is deleted: each gets one answer (202, or 404 once it
    is gone), and nothing but the SDK's own line about it reaches stderr (it answers 202 before it
    hands a notification on, then found the session closed and answered again: a RuntimeError)."""
    served = Served()
    progress = jsonrpc("notifications/progress", progressToken=1, progress=1)
    statuses: list[int] = []

    async def notify(port: int, headers: dict[str, str]) -> None:
        for _ in range(10):
            statuses.append((await exchange(port, raw_request(port, "POST", body=progress, **headers)))[0])

    async def scenario() -> None:
        for _ in range(15):
            session = await open_session(served.port)
            assert session is not None
            headers = {**SESSION_HEADERS, "Mcp_Session_Id": session, "MCP_Protocol_Version": "2025-06-18"}
            flood = [asyncio.create_task(notify(served.port, headers)) for _ in range(4)]
            await asyncio.sleep(0.005)
            await exchange(served.port, raw_request(served.port, "DELETE", **headers))
            await asyncio.gather(*flood)

    try:
        asyncio.run(asyncio.wait_for(scenario(), 60))
    finally:
        assert served.stop() == 0
    assert set(statuses) <= {202, 404} and 202 in statuses and 404 in statuses, sorted(set(statuses))
    ours = [line for line in served.lines[1:] if "Error handling POST request" not in line]
    assert not ours, ours


@pytest.mark.process  # the promise is `serve --http`'s wiring of its stderr, so a real process
def test_a_flood_of_garbage_requests_writes_few_log_lines() -> None:
    """100 requests that are not HTTP (uvicorn logs each) to `serve --http`: on its stderr, at most the log
    budget (5 lines in any 10 s here) per window and a line saying how many were held back, no traceback."""
    served = Served(limits={"log_lines": 5})
    try:
        started = time.monotonic()
        for _ in range(100):
            with socket.create_connection(("127.0.0.1", served.port), timeout=10) as peer:
                peer.sendall(b"GARBAGE \x00\x01\r\n\r\n")
                while peer.recv(4096):
                    pass
        windows = 1 + int((time.monotonic() - started) // m.LOG_WINDOW_SECONDS)
        assert served.request("GET", "/healthz")[0] == 200
    finally:
        assert served.stop() == 0
    logged = [line for line in served.lines if " at http://" not in line]  # all but the start line
    assert 1 <= len(logged) <= windows * 6, served.stderr
    assert "Traceback" not in served.stderr, served.stderr


@pytest.mark.heavy
def test_one_clients_notification_flood_leaves_room_for_others_requests() -> None:
    """16 threads flooding notifications in one session: another client's reads are all
    answered (the flood gets 503s once its own budget is used, never the reads)."""
    served = Served("--http", "127.0.0.1:0")
    stop = threading.Event()

    def session() -> dict[str, str]:
        headers = {**MCP_HEADERS, "mcp-session-id": served.initialize()[1]["mcp-session-id"]}
        headers["mcp-protocol-version"] = "2025-06-18"
        served.request("POST", "/mcp", b'{"jsonrpc": "2.0", "method": "notifications/initialized"}', headers)
        return headers

    def flood(headers: dict[str, str]) -> None:
        note = b'{"jsonrpc": "2.0", "method": "notifications/progress", '
        note += b'"params": {"progressToken": 1, "progress": 1}}'
        conn = http.client.HTTPConnection("127.0.0.1", served.port, timeout=30)
        deadline = time.monotonic() + 30
        while not stop.is_set() and time.monotonic() < deadline:
            conn.request("POST", "/mcp", note, {**headers, "Host": f"127.0.0.1:{served.port}"})
            conn.getresponse().read()
        conn.close()

    try:
        flooder = session()
        threads = [threading.Thread(target=flood, args=(flooder,), daemon=True) for _ in range(16)]
        for thread in threads:
            thread.start()
        time.sleep(0.5)
        reader = session()
        read = b'{"jsonrpc": "2.0", "id": %d, "method": "resources/read", "params": {"uri": "robot-md://bob/safety"}}'
        statuses = [served.request("POST", "/mcp", read % i, reader)[0] for i in range(101)]
        assert statuses == [200] * 101
    finally:
        stop.set()
        assert served.stop() == 0


@pytest.mark.heavy
def test_silent_peers_cannot_lock_out_clients_that_speak() -> None:
    """More silent connections than the server's limit, reopened as they are dropped, from
    several loopback addresses: requests from a client that speaks are still all answered,
    and the server's open descriptors stay bounded."""
    served = Served("--http", "127.0.0.1:0")
    silent: list[socket.socket] = []

    def open_silent(count: int) -> None:
        for i in range(count):
            peer = socket.socket()
            peer.bind((f"127.0.0.{2 + i % 50}" if sys.platform == "linux" else "127.0.0.1", 0))  # 127/8
            peer.connect(("127.0.0.1", served.port))
            silent.append(peer)

    try:
        open_silent(m.HttpLimits().connections + 10)
        answered = 0
        for _ in range(20):
            open_silent(10)  # the attacker reopens what was dropped
            answered += served.request("GET", "/healthz")[0] == 200
            answered += served.initialize()[0] == 200
        assert answered == 40
        descriptors = len(os.listdir(f"/proc/{served.proc.pid}/fd")) if os.path.isdir("/proc") else 0
        # New connections are spared for a second (they may be about to speak) until twice the limit.
        assert descriptors <= 2 * m.HttpLimits().connections + 40, descriptors
    finally:
        for peer in silent:
            peer.close()
        assert served.stop() == 0


# --- limits ------------------------------------------------------------------------


def test_oversized_body_is_refused(server: ServedOnAThread) -> None:
    big = json.dumps({**INIT, "padding": "x" * m.MAX_HTTP_BODY_BYTES}).encode()
    assert server.request("POST", "/mcp", big, MCP_HEADERS)[0] == 413
    # Streamed without a Content-Length: cut off once past the cap.
    conn = http.client.HTTPConnection("127.0.0.1", server.port, timeout=30)
    try:
        conn.request(
            "POST",
            "/mcp",
            iter([big[i : i + 65536] for i in range(0, len(big), 65536)]),
            MCP_HEADERS,
            encode_chunked=True,
        )
        assert conn.getresponse().status == 413
    except (BrokenPipeError, ConnectionResetError):
        pass  # the server answered and closed before all of it was sent
    finally:
        conn.close()
    assert server.initialize()[0] == 200


def test_oversized_headers_are_refused(server: ServedOnAThread) -> None:
    big = "x" * (2 * m.MAX_HTTP_HEADER_BYTES)
    assert server.request("GET", "/healthz", headers={"X-Big": big})[0] == 431
    assert server.request("GET", "/healthz", headers={f"X-{i}": "x" * 1000 for i in range(40)})[0] == 431
    try:  # far beyond: the HTTP parser itself gives up
        status = server.request("GET", "/healthz", headers={"X-Huge": "x" * (1 << 20)})[0]
    except (ConnectionError, http.client.HTTPException):
        status = 400  # dropped: also refused
    assert 400 <= status < 500
    assert server.request("GET", "/healthz", headers={"X-Fine": "x" * 8000})[0] == 200


# --- concurrency -------------------------------------------------------------------


@pytest.mark.anyio
async def test_concurrent_clients(server: ServedOnAThread) -> None:
    from mcp import Client

    failures: list[BaseException] = []
    done = 0

    async def one_client(index: int) -> None:
        nonlocal done
        try:
            async with Client(server.url, mode="legacy" if index % 2 else "auto") as client:
                for i in range(6):
                    if i % 3 == 0:
                        result = await client.call_tool("validate", {})
                        assert result.structured_content["ok"] is True  # type: ignore[index]
                    elif i % 3 == 1:
                        text = (await client.read_resource("robot-md://bob/capabilities")).contents[0].text  # type: ignore[union-attr]
                        assert json.loads(text)
                    else:
                        assert (await client.list_resources()).resources
                    done += 1
        except BaseException as e:  # counted, reported below
            failures.append(e)

    with anyio.fail_after(120):
        async with anyio.create_task_group() as tasks:
            for index in range(4):
                tasks.start_soon(one_client, index)
    assert not failures, failures[:3]
    assert done == 24


# --- command line and lifecycle -----------------------------------------------------


@pytest.mark.parametrize(
    "args",
    [["--http"], ["--allow-host", "x.local"], ["--token-file", "t"], ["--http", "0", "--http", "1"]],
)
def test_usage_errors(args: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    done = command_line(capsys, EXAMPLE, *args)
    assert done.returncode == 2, done.stderr
    usage_message(done.stderr)


def test_startup_checks_come_first_and_never_import_the_sdk(tmp_path: Path) -> None:
    broken = tmp_path / "ROBOT.md"
    broken.write_text("---\nmetadata: {}\n---\n", encoding="utf-8")
    code = (
        "import sys, robot_md_mcp as m\n"
        "codes = [m.main([sys.argv[1], '--http', '0']), m.main([sys.argv[2], '--http', '0.0.0.0:0'])]\n"
        "codes = [int(c) for c in codes]\n"
        "print(codes, sorted(n for n in ('mcp', 'uvicorn', 'starlette', 'anyio') if n in sys.modules))\n"
    )
    done = python(code, broken, EXAMPLE, env={m.TOKEN_ENV: ""})
    assert done.stdout == "[1, 1] []\n", done.stderr
    assert "robot_name" in done.stderr.splitlines()[0]


@posix_only
@pytest.mark.parametrize("sig", [pytest.param(signal.SIGINT, marks=pytest.mark.process), signal.SIGTERM])
def test_signals_stop_cleanly(sig: int) -> None:
    """The real `serve --http`: its start line; stopped by the signal (exit 0, under uvicorn's 3 s, nothing
    on stderr) with an open session's event stream, a listen stream, bodies that stopped and a head alone."""
    served = Served("--http", "0")
    (start,) = [line for line in served.lines if " at http://" in line]
    assert start.startswith(
        f'robot-md-mcp {m.__version__}: serving robot "bob" from {EXAMPLE} at {served.url} '
    )
    _, headers, _ = served.initialize()
    session = {"Mcp-Session-Id": headers["mcp-session-id"], "MCP-Protocol-Version": "2025-06-18"}
    served.request(
        "POST", "/mcp", b'{"jsonrpc":"2.0","method":"notifications/initialized"}', {**MCP_HEADERS, **session}
    )
    stream = http.client.HTTPConnection("127.0.0.1", served.port, timeout=30)
    stream.request("GET", "/mcp", headers={"Accept": "text/event-stream", **session})
    assert stream.getresponse().status == 200
    port = served.port
    listening = _held(port, raw_request(port, "POST", body=LISTEN, **LISTEN_HEADERS))
    assert listening.recv(100).startswith(b"HTTP/1.1 200 ")
    waiting = [
        _held(port, raw_request(port, "POST", path, Content_Length="100", **SESSION_HEADERS) + b"{")
        for path in (m.MCP_PATH, m.VALIDATE_PATH)
    ]
    waiting.append(_held(port, b"GET /healthz HTTP/1.1\r\n"))
    time.sleep(0.2)
    started = time.monotonic()
    assert served.stop(sig) == 0
    # The README's exit-code table says so (its other rows: test_readme.py).
    readme = (ROOT / "README.md").read_text(encoding="utf-8").splitlines()
    (row,) = [line for line in readme if line.startswith("| 0 |")]
    assert "HTTP" in row and ("Ctrl-C" if sig == signal.SIGINT else "SIGTERM") in row, row
    assert time.monotonic() - started < 2.5  # uvicorn's own shutdown waits 3 s, then says so per request
    stream.close()
    for peer in (listening, *waiting):
        peer.close()
    assert "Traceback" not in served.stderr and "Error" not in served.stderr, served.stderr


# --- pure helpers ------------------------------------------------------------------


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("8080", ("127.0.0.1", 8080)),
        ("0.0.0.0:80", ("0.0.0.0", 80)),
        ("[::1]:9", ("::1", 9)),
        ("pi.local:8000", ("pi.local", 8000)),
        ("0", ("127.0.0.1", 0)),
    ],
)
def test_parse_listen_address(value: str, expected: tuple[str, int]) -> None:
    assert m.parse_listen_address(value) == expected


def test_a_listener_hides_its_token_and_reads_allow_host_names_once(token: str) -> None:
    """--allow-host names are checked (a port past 65535 refused in one line), then allowed: read once, so a
    generator gives the same hosts."""
    for past in (65536, 99999):
        with pytest.raises(m.HttpSetupError, match=r"^--allow-host 'robot.test:\d+': expected a host name"):
            m.open_listener("127.0.0.1:0", allow_hosts=[f"robot.test:{past}"])
    given_ports = ["a.test:0", "b.test:1", "bench.local:8443", "c.test:65535"]
    names = (name for name in ["Robot.test", *given_ports])
    listener = m.open_listener("127.0.0.1:0", allow_hosts=names, environ={m.TOKEN_ENV: token})
    listener.socket.close()
    assert listener.token == token and token not in repr(listener)
    port = listener.url.rsplit(":", 1)[1].split("/")[0]
    loopback = [f"127.0.0.1:{port}", f"localhost:{port}", f"[::1]:{port}"]
    assert list(listener.allowed_hosts) == [*loopback, "robot.test", f"robot.test:{port}", *given_ports]


# --- no peer that is not making progress holds a slot (small limits: no waiting out real ones) ----

QUICK = {"head_seconds": 0.3, "body_seconds": 0.6, "body_gap_seconds": 0.3}


def _held(port: int, request: bytes = b"") -> socket.socket:
    peer = socket.create_connection(("127.0.0.1", port), timeout=10)
    peer.sendall(request)
    return peer


def _received_until_closed(peer: socket.socket, seconds: float) -> bytes:
    """What the server sent until it closed the connection (within `seconds`)."""
    received = b""
    peer.settimeout(seconds)
    try:
        while chunk := peer.recv(65536):
            received += chunk
    except ConnectionResetError:
        pass
    return received


@pytest.fixture(scope="module")
def quick_server() -> Iterator[ServedOnAThread]:
    """QUICK's deadlines, and a table of 4 sessions (test_a_full_session_table_…)."""
    with served_on_a_thread(m.HttpLimits(**QUICK, sessions=4)) as served:  # type: ignore[arg-type]
        yield served


def test_a_body_that_trickles_is_cut_at_the_body_deadline(quick_server: ServedOnAThread) -> None:
    """One byte every 0.1 s never leaves a gap of 0.3 s: the whole-body deadline (0.6 s) cuts it, 408."""
    port = quick_server.port
    # The clock starts before the request is sent: the server's deadline cannot start earlier, and the
    # server runs on a thread of this process, so it may hold the GIL between the send and a later reading.
    started, received = time.monotonic(), b""
    peer = _held(port, raw_request(port, "POST", Content_Length="1000", **SESSION_HEADERS))
    peer.settimeout(0.1)
    while time.monotonic() - started < 10:
        try:
            peer.sendall(b" ")
            chunk = peer.recv(65536)
        except TimeoutError:
            continue
        except (BrokenPipeError, ConnectionResetError):
            break
        received += chunk
        if not chunk:
            break
    took = time.monotonic() - started
    assert received.startswith(b"HTTP/1.1 408 "), received
    assert QUICK["body_seconds"] - 0.1 <= took < QUICK["body_seconds"] + 3, took


@pytest.mark.parametrize("expect", [False, True], ids=["half-a-body", "expect-100-continue"])
def test_a_body_that_stops_is_cut_at_the_gap_deadline(quick_server: ServedOnAThread, expect: bool) -> None:
    port = quick_server.port
    extra = {"Expect": "100-continue"} if expect else {}
    sent = time.monotonic()  # before the last byte is sent, so before the server's gap can start
    peer = _held(
        port, raw_request(port, "POST", body=None, Content_Length="100", **extra, **SESSION_HEADERS) + b"{"
    )
    received = _received_until_closed(peer, 10)
    took = time.monotonic() - sent
    assert (b"HTTP/1.1 100 Continue\r\n\r\n" in received) == expect, received
    assert b"HTTP/1.1 408 " in received and b"connection: close" in received.lower(), received
    assert QUICK["body_gap_seconds"] - 0.1 <= took < QUICK["body_gap_seconds"] + 3, took
    assert quick_server.initialize()[0] == 200


BODY_METHODS = ["GET", "HEAD", "DELETE", "OPTIONS", "PUT", "PATCH", "POST", "FOO"]
BODY_PATHS = [m.MCP_PATH, m.HEALTH_PATH, m.REST_HEALTH_PATH, m.VALIDATE_PATH, "/robots/bob/context", "/nope"]


@pytest.mark.heavy  # seconds of real time: the heavy tier
@settings(max_examples=2, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    requests=st.lists(
        st.tuples(st.sampled_from(BODY_METHODS), st.sampled_from(BODY_PATHS), st.booleans()),
        min_size=1,
        max_size=12,
    )
)
@example(requests=[(method, m.MCP_PATH, True) for method in BODY_METHODS])
def test_a_body_that_never_comes_holds_no_request_of_any_method_or_path(
    quick_server: ServedOnAThread, requests: list[tuple[str, str, bool]]
) -> None:
    """Any method on any path (the SDK's app reads the body of every request to /mcp, whatever its
    method) with a body announced and never sent, with or without a session: each connection is closed
    within the body deadlines, and the server answers others meanwhile."""
    port = quick_server.port
    session = {"Mcp_Session_Id": "f" * 32, "MCP_Protocol_Version": "2025-06-18"}
    started = time.monotonic()  # before the first request is sent: no deadline of the server's starts earlier
    peers = [
        _held(
            port,
            raw_request(
                port, method, path, None, Content_Length="100", **SESSION_HEADERS, **(session if sid else {})
            )
            + b"{",
        )
        for method, path, sid in requests
    ]
    assert quick_server.request("GET", "/healthz")[0] == 200
    limit = QUICK["body_seconds"] + QUICK["head_seconds"] + 3
    for (method, path, _), peer in zip(requests, peers):
        received = _received_until_closed(peer, limit)
        assert time.monotonic() - started < limit, (method, path, received)  # all at once: one limit
        assert not received or received.startswith(b"HTTP/1.1 "), (method, path, received)
    assert "Traceback" not in quick_server.stderr, quick_server.stderr


# The deadlines stay at their defaults (5 s and more): far off for a scenario of a second or two, so what
# closes a stalled peer there is the need for room, not a deadline.
SMALL = {"connections": 16, "new_connection_seconds": 0.2}


@pytest.fixture(scope="module")
def small_server() -> Iterator[int]:
    """SMALL's limits, for one kind of stalled peer after another: each test's peers are gone at its end.
    uvicorn as `serve --http` configures it, on a thread (room-making is its configuration's): its port."""
    with uvicorn_on_a_thread(m.HttpLimits(**SMALL)) as port:  # type: ignore[arg-type]
        yield port


@pytest.mark.parametrize(
    "kind", ["head-only", "expect-then-silent", "trickle", "unread-stream", "listen-stream"]
)
def test_peers_stalled_past_the_head_cannot_lock_out_clients_that_speak(small_server: int, kind: str) -> None:
    """Nearly twice the connection limit (30 for 16 here) of peers that send a head and then no body (or
    a trickle, or `Expect: 100-continue` then nothing), or hold an event stream they never read, with
    deadlines far off: the ones that have gone longest without progress are closed to make room (they
    come back at once), and every request from a client that speaks is answered, /healthz and
    initialize alike, never a 503. New connections are spared 0.2 s here (1 s by default)."""
    port = small_server
    peers = int(2 * SMALL["connections"] - 2)
    displaced = 2 * peers - int(SMALL["connections"])  # reconnections that show room was made
    connects: list[int] = []

    async def scenario() -> list[int]:
        tasks = [asyncio.create_task(hostile_peer(kind, port, 1, connects)) for _ in range(peers)]
        while len(connects) < peers:  # every peer connecting
            await asyncio.sleep(0.01)
        await asyncio.sleep(2 * SMALL["new_connection_seconds"])  # past their first moments: closable
        statuses = []
        for _ in range(10):
            statuses.append((await exchange(port, raw_request(port, "GET", "/healthz")))[0])
            statuses.append(200 if await open_session(port) else 503)
        while len(connects) < displaced:  # a trickler or a stream notices it was closed at its next step
            await asyncio.sleep(0.01)
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        return statuses

    statuses = asyncio.run(asyncio.wait_for(scenario(), 60))
    assert statuses == [200] * 20
    assert len(connects) >= displaced, len(connects)  # closed to make room


async def ping_in_session(port: int, session: str | None) -> int:
    """A ping in a handshake-era session (None: a session that failed to open): the HTTP status."""
    assert session is not None
    headers = {**SESSION_HEADERS, "Mcp_Session_Id": session, "MCP_Protocol_Version": "2025-06-18"}
    return (await exchange(port, raw_request(port, "POST", body=jsonrpc("ping", 1), **headers)))[0]


def test_a_full_session_table_closes_the_least_recently_used_session(quick_server: ServedOnAThread) -> None:
    """At the session limit (4 here) a newcomer's initialize succeeds: the session used least recently
    is closed (its id then answers 404), never one that is in use (an open event stream). (Sessions
    other tests opened on this server are older than these four: closed first.)"""
    served = quick_server

    async def scenario() -> None:
        streaming, *others = [await open_session(served.port) for _ in range(4)]
        assert streaming and all(others)
        stream = await asyncio.open_connection("127.0.0.1", served.port)
        headers = {
            "Accept": "text/event-stream",
            "Mcp_Session_Id": streaming,
            "MCP_Protocol_Version": "2025-06-18",
        }
        stream[1].write(raw_request(served.port, "GET", body=None, **headers))
        assert (await stream[0].readuntil(b"\r\n\r\n")).startswith(b"HTTP/1.1 200")
        assert [await ping_in_session(served.port, s) for s in others] == [
            200
        ] * 3  # others[0] is now the least recently used
        newcomer = await open_session(served.port)
        assert newcomer is not None
        assert await ping_in_session(served.port, others[0]) == 404
        assert [await ping_in_session(served.port, s) for s in (streaming, *others[1:], newcomer)] == [
            200
        ] * 4
        for _ in range(3):  # again and again: the stream's session outlives idle ones
            assert await open_session(served.port) is not None
        assert await ping_in_session(served.port, streaming) == 200
        stream[1].close()

    asyncio.run(asyncio.wait_for(scenario(), 60))


@pytest.mark.heavy  # seconds of real time: the heavy tier
def test_sessions_closed_as_idle_never_cost_a_live_one_its_place() -> None:
    """Sessions the SDK closed as idle (their ids answer 404) leave the table: newcomers then take
    their places, never the place of the session still in use."""
    idle_seconds = 1.0  # far above a ping's round trip on a loaded machine, which keeps `busy` in use

    async def scenario(port: int) -> None:
        busy, *idle = [await open_session(port) for _ in range(3)]
        assert busy and all(idle)
        started = time.monotonic()
        while time.monotonic() - started < 2.5 * idle_seconds:  # the idle ones are closed by then
            assert await ping_in_session(port, busy) == 200
            await asyncio.sleep(0.05)
        assert [await ping_in_session(port, s) for s in idle] == [404, 404]
        assert None not in [await open_session(port) for _ in range(2)]
        assert await ping_in_session(port, busy) == 200

    with served_on_a_thread(m.HttpLimits(session_idle_seconds=idle_seconds, sessions=3)) as served:
        asyncio.run(asyncio.wait_for(scenario(served.port), 60))


# --- the property: hostile peers of every kind, and a well-behaved client -----------------------

ANSWER_WITHIN = 2.0


async def well_behaved_client(port: int, rounds: int, latencies: list[float]) -> list[str]:
    """Rounds of /healthz, initialize, ping, read and DELETE, each on a connection of its own; what
    went wrong (a wrong status, or an answer later than ANSWER_WITHIN)."""
    failures = []

    async def timed(what: str, request: bytes, expected: int) -> dict[str, str]:
        started = time.monotonic()
        try:
            status, fields, _ = await asyncio.wait_for(exchange(port, request), ANSWER_WITHIN)
            latencies.append(time.monotonic() - started)
        except (TimeoutError, OSError, asyncio.IncompleteReadError) as e:
            failures.append(f"{what}: {type(e).__name__}")
            return {}
        if status != expected:
            failures.append(f"{what}: {status}")
        return fields

    for i in range(rounds):
        await timed("healthz", raw_request(port, "GET", "/healthz"), 200)
        opened = await timed(
            "initialize", raw_request(port, "POST", body=json.dumps(INIT).encode(), **SESSION_HEADERS), 200
        )
        if "mcp-session-id" not in opened:
            continue
        headers = {
            **SESSION_HEADERS,
            "Mcp_Session_Id": opened["mcp-session-id"],
            "MCP_Protocol_Version": "2025-06-18",
        }
        await timed(
            "initialized",
            raw_request(port, "POST", body=jsonrpc("notifications/initialized"), **headers),
            202,
        )
        await timed("ping", raw_request(port, "POST", body=jsonrpc("ping", i), **headers), 200)
        read = jsonrpc("resources/read", i, uri="robot-md://bob/safety")
        await timed("read", raw_request(port, "POST", body=read, **headers), 200)
        await timed("delete", raw_request(port, "DELETE", **headers), 200)
    return failures


def hostile_mix(least: int, most: int) -> st.SearchStrategy[list[str]]:
    return st.lists(st.sampled_from(HOSTILE_KINDS), min_size=least, max_size=most)


def assert_served_through(port: int, kinds: list[str], rounds: int, sessions: int) -> None:
    """The session hoarders open `sessions` sessions between them (more than the table holds), then
    ping them round and round, reopening each one closed to make room."""
    each = -(-sessions // max(1, kinds.count("session-hoarder")))

    latencies: list[float] = []
    with HostilePeers(port, kinds, each):
        time.sleep(0.5 + 0.002 * sessions * ("session-hoarder" in kinds))  # while they settle in
        failures = asyncio.run(asyncio.wait_for(well_behaved_client(port, rounds, latencies), 120))
    assert not failures, (sorted(set(kinds)), failures[:10])
    print(f"{len(kinds)} hostile peers: {len(latencies)} requests, slowest {max(latencies) * 1000:.0f} ms")


@pytest.fixture(scope="module")
def crowded_server() -> Iterator[int]:
    """Limits small enough that a few dozen peers fill it: 16 connections (32 before new ones are
    closed too), 12 sessions; uvicorn as `serve --http` configures it, on a thread (the peers have a
    process of their own): its port."""
    with uvicorn_on_a_thread(m.HttpLimits(connections=16, sessions=12)) as port:
        yield port


@settings(max_examples=2, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(kinds=hostile_mix(1, 30))
@example(kinds=list(HOSTILE_KINDS) * 5)
def test_hostile_peers_never_keep_a_well_behaved_client_waiting(
    crowded_server: int, kinds: list[str]
) -> None:
    """Short form: up to 30 hostile peers of every kind against 24 slots and 12 sessions; every
    request of a well-behaved client is answered rightly within 2 s throughout."""
    assert_served_through(crowded_server, kinds, rounds=3, sessions=16)


@pytest.mark.heavy
@settings(max_examples=8, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(kinds=hostile_mix(100, 200))
@example(kinds=list(HOSTILE_KINDS) * 33)
def test_hostile_peers_never_keep_a_well_behaved_client_waiting_long_form(kinds: list[str]) -> None:
    """Long form: 100 to 200 hostile peers against the real limits (128 connections, 256 sessions)."""
    served = Served("--http", "127.0.0.1:0")
    try:
        assert_served_through(served.port, kinds, rounds=10, sessions=m.HttpLimits().sessions + 16)
    finally:
        assert served.stop() == 0
    assert "Traceback" not in served.stderr, served.stderr


# --- the log budget --------------------------------------------------------------------------


def _budget_run(times: list[float], said: list[str]) -> tuple[list[float], int]:
    """The times (fake clock) of the records a LogBudget of 20 lines in 10 s lets through, and how many it
    holds back at the end; the lines it says before a line let through go to `said`."""
    now = [0.0]
    budget = m.LogBudget(20, 10.0, clock=lambda: now[0], say=said.append)
    record = logging.LogRecord("t", logging.WARNING, __file__, 1, "x", None, None)
    passed = []
    for t in times:
        now[0] = t
        if budget.filter(record):
            passed.append(t)
    return passed, budget.held_back


@given(st.lists(st.floats(0, 100, allow_nan=False), max_size=300).map(sorted))
@example([9.8 + i * 0.01 for i in range(40)] + [20.0])  # 40 lines in 0.4 s across 10 s, then one more
def test_the_log_budget_holds_in_every_window_of_its_length(times: list[float]) -> None:
    """Sliding, not fixed: a line goes out when fewer than 20 went out in the 10 s before it, wherever that
    span starts (a fixed window lets twice that through across its boundary); each line held back is
    counted on the line said before the next one goes out, or still held."""
    said: list[str] = []
    expected: list[float] = []
    passed, held = _budget_run(times, said)
    for t in times:
        if sum(1 for p in expected if t - p < 10.0) < 20:
            expected.append(t)
    assert passed == expected
    assert all(line.endswith(" more log lines were held back (a flood)") for line in said), said
    assert sum(int(line.split()[1]) for line in said) + held == len(times) - len(passed)


@given(st.text(max_size=40_000))
def test_a_log_line_is_one_bounded_line(text: str) -> None:
    import logging

    record = logging.LogRecord("t", logging.WARNING, __file__, 1, "%s", (text,), None)
    line = m.OneLineFormatter().format(record)
    assert len(line) <= m.MAX_LOG_LINE_CHARS and "\n" not in line and "\r" not in line


# --- refusals, logged by reason ----------------------------------------------------------------


@given(
    st.lists(
        st.tuples(st.sampled_from(["host", "origin", "token"]), st.floats(0, 5, allow_nan=False)),
        max_size=400,
    )
)
def test_refusals_are_logged_by_reason_and_every_one_is_counted(events: list[tuple[str, float]]) -> None:
    """On a fake clock: a reason's first refusal in any window has its line, whatever other reasons did;
    the others are counted and the count said on its next line, so every refusal is a line or in a count."""
    now = [0.0]
    log = m.RefusalLog(10.0, clock=lambda: now[0])
    last: dict[str, float] = {}
    with _Lines() as lines:
        for reason, gap in events:
            now[0] += gap
            before = len(lines)
            log.note(reason, f"refused ({reason})")
            due = reason not in last or now[0] - last[reason] >= 10.0
            assert len(lines) == before + due
            last[reason] = now[0] if due else last[reason]
    for reason in ("host", "origin", "token"):
        said = [line for line in lines if f"({reason})" in line]
        counted = sum(int(n.replace(",", "")) for line in said for n in re.findall(r"\(([\d,]+) more", line))
        total = sum(1 for r, _ in events if r == reason)
        assert len(said) + counted + log.held_back.get(reason, 0) == total


@settings(max_examples=10, deadline=None)
@given(
    hosts=st.lists(st.text(st.characters(min_codepoint=0x21, max_codepoint=0xFF), min_size=1), min_size=100)
)
def test_no_number_of_made_up_hosts_silences_another_reason(hosts: list[str]) -> None:
    """Hundreds of distinct made-up Hosts (up to 16 KiB each), then a foreign Origin and a wrong token:
    each of those still gets its line (a log-once table of 100 messages went blind); the Hosts after the
    first are counted, and said with the next Host line a window later; every line is short."""
    now = [0.0]
    guard = _guard_with_token("t" * 16)
    guard.refusals = m.RefusalLog(10.0, clock=lambda: now[0])

    def status(*headers: tuple[bytes, bytes]) -> int:
        refused = guard.refusal({"type": "http", "method": "GET", "path": "/mcp", "headers": list(headers)})
        assert refused is not None
        return refused.status_code

    own = (b"host", b"127.0.0.1:9")
    with _Lines() as lines:
        for host in [*hosts, *((h * 16_000)[:16_000] for h in hosts[:3])]:
            assert status((b"host", host.encode("latin-1"))) == 421
        assert status(own, (b"origin", b"http://evil.example")) == 403
        assert status(own, (b"authorization", b"Bearer wrong")) == 401
        now[0] += 10.0
        assert status((b"host", b"again.example")) == 421
    assert [line.split("refused a request ")[1][:4] for line in lines] == ["for ", "from", "with", "for "]
    assert f"({len(hosts) + 2:,} more refused for this reason since its last line)" in lines[-1]
    assert all(len(line) <= 4 * m.MAX_ECHOED_ARGUMENT + 200 for line in lines), max(map(len, lines))


# --- no table a peer fills keeps its bytes -------------------------------------------------------

PEER_REQUEST_KINDS = (
    "unknown key",
    "nested unknown key",
    "long robot name",
    "view of a made-up robot",
    "unknown path",
    "made-up Host",
    "made-up Origin",
    "wrong token",
    "long header",
    "JSON-RPC with long words",
)


_SERIAL = itertools.count()


def peer_request(
    kind: str, rng: random.Random, token: str
) -> tuple[str, str, list[tuple[bytes, bytes]], bytes]:
    """One request of this kind that fits every limit, carrying long text no request sent before did:
    method, path, headers, body."""
    word = f"{next(_SERIAL)}-" + f"{rng.getrandbits(64):x}" * rng.randint(2, 3_000)  # up to 48,000, unique
    bearer = (b"authorization", f"Bearer {token}".encode())
    own = [(b"host", b"127.0.0.1:9"), bearer]
    manifest = EXAMPLE.read_text(encoding="utf-8")
    if kind in ("unknown key", "nested unknown key"):  # a key that long must be explicit (`? key`) in YAML
        at = "---\n" if kind == "unknown key" else "metadata:\n"
        indent = "" if kind == "unknown key" else "  "
        body = manifest.replace(at, f"{at}{indent}? k{word}\n{indent}: 1\n", 1)
        return "POST", m.VALIDATE_PATH, own, body.encode()
    if kind == "long robot name":
        return "POST", m.RENDER_PATH, own, f"---\nmetadata:\n  robot_name: r{word[:30_000]}\n---\n".encode()
    if kind == "view of a made-up robot":
        return "GET", f"{m.ROBOTS_PATH}/r{word[:8_000]}/{rng.choice(m.VIEWS).kind}", own, b""
    if kind == "unknown path":
        return rng.choice(["GET", "POST", "BREW"]), f"/p{word[:8_000]}", own, b""
    if kind == "made-up Host":
        return "GET", m.MCP_PATH, [(b"host", word[:15_000].encode()), bearer], b""
    if kind == "made-up Origin":
        return "GET", m.MCP_PATH, [*own, (b"origin", f"http://{word[:15_000]}".encode())], b""
    if kind == "wrong token":
        return "GET", m.MCP_PATH, [own[0], (b"authorization", f"Bearer {word[:15_000]}".encode())], b""
    if kind == "long header":
        return "GET", m.REST_HEALTH_PATH, [*own, (f"x-{word[:40]}".encode(), word[:15_000].encode())], b""
    message = {"jsonrpc": "2.0", "id": word[:20_000], "method": word[:20_000], "params": {word[:20_000]: 1}}
    return (
        "POST",
        m.MCP_PATH,
        [*own, (b"accept", b"application/json, text/event-stream"), (b"content-type", b"application/json")],
        json.dumps(message).encode(),
    )


@pytest.mark.anyio
@settings(max_examples=1, deadline=None)
@given(seed=st.integers(0, 2**32))
async def test_requests_that_fit_every_limit_leave_none_of_their_bytes_behind(seed: int) -> None:
    """A generated stream of requests, each within every limit and each carrying long text no request
    sent before did (unknown keys up to 48,000 characters, long robot names, made-up robots, paths, Hosts,
    Origins, tokens, headers, JSON-RPC words): after a warm-up, 30 more grow the server's traced memory
    by under 160 KiB (each carries up to 48,000 characters of its own: a table keeping them is past it)."""
    import gc
    import tracemalloc

    rng = random.Random(seed)
    token = "t" * 16
    listener = m.HttpListener(socket=None, url="", allowed_hosts=("127.0.0.1:9",), token=token)
    guard = m.http_app(m.ManifestFile(EXAMPLE), listener)
    async with guard.app.router.lifespan_context(guard.app):  # type: ignore[attr-defined]
        for kind in PEER_REQUEST_KINDS * 2:  # warm-up: every kind's code has run and made what it keeps
            await answer_in_process(guard, *peer_request(kind, rng, token))
        tracemalloc.start()
        try:
            gc.collect()
            before = tracemalloc.get_traced_memory()[0]
            for _ in range(30):
                status, _, _ = await answer_in_process(
                    guard, *peer_request(rng.choice(PEER_REQUEST_KINDS), rng, token)
                )
                assert status < 500
            gc.collect()
            grown = tracemalloc.get_traced_memory()[0] - before
        finally:
            tracemalloc.stop()
    assert grown < 160 * 1024, f"{grown / 1024:.0f} KiB kept after 30 requests"
