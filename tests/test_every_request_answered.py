"""Every line gets an answer and no request ends the server, as a property: hypothesis writes arbitrary
JSON-RPC-shaped lines (every method, every field, any Unicode with lone surrogates, odd and huge ids) to one
real server process over stdio (the framing is the process's), and to what `serve --http` serves, in this
process (uvicorn on a thread), and batches of them in a 2025-03-26 stdio session. docs/robustness.md
("Every line") says what each must get. Default tier: 25 examples of up to 6 lines per transport, 15
batches; `pytest -m heavy` 1,500 each, derandomized."""

from __future__ import annotations

import collections
import itertools
import json
import re
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from conftest import EXAMPLE, ROOT
from http_served import ServedOnAThread, served_on_a_thread
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from hypothesis.configuration import set_hypothesis_home_dir
from serving import RawServer

import robot_md_mcp as rmm

set_hypothesis_home_dir(ROOT / ".cache" / "hypothesis")

ANSWER_DEADLINE = 5.0  # seconds for any one line's answer; most take milliseconds
KNOWN = (
    "initialize ping resources/list resources/templates/list resources/read resources/subscribe "
    "resources/unsubscribe prompts/list prompts/get completion/complete tools/list tools/call "
    "logging/setLevel server/discover subscriptions/listen notifications/initialized notifications/cancelled "
    "notifications/progress notifications/roots/list_changed"
).split()
FIELDS = (
    "uri name arguments cursor ref argument value level protocolVersion capabilities clientInfo _meta "
    "requestId progressToken progress type"
).split()
REAL = {
    "uri": ["robot-md://bob/context", "robot-md://bob/safety", "test://x"],
    "name": ["bob", "check-safety", "brief-me", "validate", "render"],
    "type": ["ref/prompt", "ref/resource"],
    "level": ["info", "debug", "emergency"],
    "protocolVersion": ["2025-03-26", "2025-11-25", "2026-07-28"],
}

# Any Unicode, lone surrogates (category Cs, 2,048 of 1.1 million code points) drawn often.
ANY_TEXT = st.text(st.characters(exclude_categories=()) | st.characters(categories=["Cs"]), max_size=12)
SCALARS = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(2**128), max_value=2**128),
    st.floats(allow_nan=True, allow_infinity=True),
    ANY_TEXT,
)
JSON = st.recursive(
    SCALARS,
    lambda inner: st.one_of(st.lists(inner, max_size=3), st.dictionaries(ANY_TEXT, inner, max_size=3)),
    max_leaves=8,
)
# Ids as JSON text, so some are what json.dumps cannot write: past CPython's 4,300-digit
# limit, 1e999, -0.0, or deeply nested.
IDS = st.one_of(
    st.integers().map(str),
    st.integers(min_value=2**63 - 2, max_value=2**200).map(str),
    st.just("9" * 5000),
    st.sampled_from(
        ["null", "true", "false", "1.5", "1e999", "-0.0", "1.0", "[]", "{}", '[1, [2, {"a": 3}]]']
    ),
    ANY_TEXT.map(json.dumps),
    st.just("[" * 50 + "]" * 50),
)


@st.composite
def params(draw: Any) -> Any:
    """Params as a client might get them wrong: the fields read, real or arbitrary values, or no object."""
    if draw(st.integers(0, 9)) == 0:
        return draw(JSON)
    keys = draw(st.lists(st.sampled_from(FIELDS) | ANY_TEXT, max_size=4))
    out: dict[str, Any] = {}
    for key in keys:
        real = REAL.get(key)
        out[key] = draw(st.sampled_from(real) | JSON) if real else draw(JSON)
    return out


@st.composite
def lines(draw: Any) -> tuple[bytes, Any]:
    """(one line as bytes, its id as JSON text or None when it has no id)."""
    message: dict[str, Any] = {}
    if draw(st.integers(0, 9)):
        message["jsonrpc"] = "2.0" if draw(st.integers(0, 9)) else draw(JSON)
    if draw(st.integers(0, 9)):
        message["method"] = draw(st.sampled_from(KNOWN) | ANY_TEXT | JSON)
    if draw(st.booleans()):
        message["params"] = draw(params())
    for extra in draw(st.lists(st.sampled_from(["result", "error", "x"]) | ANY_TEXT, max_size=2)):
        message[extra] = draw(JSON)
    raw_id = draw(IDS) if draw(st.integers(0, 4)) else None
    surrogates_as_bytes = draw(st.integers(0, 19)) == 0  # what json.loads(bytes) would take
    text = json.dumps(message, ensure_ascii=not surrogates_as_bytes)
    if raw_id is not None:
        text = "{" + f'"id": {raw_id}' + (", " + text[1:] if len(text) > 2 else "}")
    return text.encode("utf-8", "surrogatepass") + b"\n", raw_id


def expected(line: bytes, raw_id: str | None) -> tuple[str, Any]:
    """("one", id): exactly one answer with that id; ("null", None): one with id null; or "at most one"."""
    try:
        data = json.loads(line.decode("utf-8"))
        request_id = data.get("id")
    except (ValueError, RecursionError):
        return "at most one", None
    if raw_id is None or "method" not in data:
        return "at most one", None
    usable = isinstance(request_id, (int, str)) and not isinstance(request_id, bool)
    if usable and isinstance(request_id, str):
        usable = not re.search("[\ud800-\udfff]", request_id)
    return ("one", request_id) if usable else ("null", None)


SLOW = [HealthCheck.too_slow, HealthCheck.data_too_large, HealthCheck.function_scoped_fixture]
SETTINGS = settings(max_examples=25, deadline=None, database=None, suppress_health_check=SLOW)
HEAVY_SETTINGS = settings(SETTINGS, max_examples=1500, derandomize=True)


# --- stdio ----------------------------------------------------------------------------------------


class Stdio:
    """One server process for a run of examples; a new one only after a failure ended it (to shrink it)."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.server: RawServer | None = None
        self.version = ""
        self.seen = 0  # stdout lines already accounted for by a batch example

    def assert_no_stray_arrays(self) -> None:
        """No array came after the last batch example was done: a late or second one is caught here."""
        if self.server is not None:
            strays = [r for r in self.server.stdout_lines[self.seen :] if r.startswith(b"[")]
            assert strays == [], strays[:3]

    def live(self, version: str = "2025-11-25") -> RawServer:
        """The server, in a session at `version`."""
        if self.server is None or not self.server.alive() or self.version != version:
            if self.server is not None:
                self.server.kill()
            # ours are longer than any drawn text id (ANY_TEXT: 12 characters at most)
            self.server, self.version = RawServer(self.path, id_prefix="test-every-line-"), version
            self.server.handshake(version=version)
            self.seen = 0
        return self.server


@pytest.fixture(scope="module")
def stdio_server(tmp_path_factory) -> Iterator[Stdio]:
    path = tmp_path_factory.mktemp("every-line") / "ROBOT.md"
    path.write_text(EXAMPLE.read_text(encoding="utf-8"), encoding="utf-8")
    servers = Stdio(path)
    try:
        yield servers
        servers.assert_no_stray_arrays()
        served = servers.live(servers.version or "2025-11-25")
        served.assert_clean()
        assert served.close() == 0, served.stderr[-2000:]
    finally:
        if servers.server is not None:
            servers.server.kill()


_FENCES = itertools.count()


def _answers_since(server: RawServer, start: int) -> list[dict]:
    """The responses the server wrote after its `start`th stdout line."""
    out = []
    for raw in server.stdout_lines[start:]:
        message = json.loads(raw)
        out += [m for m in (message if isinstance(message, list) else [message]) if "method" not in m]
    return out


def _over_stdio(servers: Stdio, batch: list[tuple[bytes, Any]]) -> None:
    server = servers.live()
    start = len(server.stdout_lines)
    awaited: collections.Counter[Any] = collections.Counter()
    for line, raw_id in batch:
        mark = len(server.stdout_lines)
        server.write(line)
        fence = f"fence-{next(_FENCES)}"
        server.send({"jsonrpc": "2.0", "id": fence, "method": "ping"})
        server.response(fence, timeout=ANSWER_DEADLINE)
        server._held.clear()
        nulls = sum(a["id"] is None for a in _answers_since(server, mark))
        kind, request_id = expected(line, raw_id)
        assert nulls == (kind == "null") or (kind == "at most one" and nulls <= 1), (line[:300], nulls)
        if kind == "one":
            awaited[request_id] += 1
        for cancelled in _cancelled_ids(line):  # a request the client cancelled may go unanswered
            awaited.pop(cancelled, None)
    deadline = time.monotonic() + ANSWER_DEADLINE
    while True:
        got = collections.Counter(a["id"] for a in _answers_since(server, start))
        if all(got[i] >= n for i, n in awaited.items()) or time.monotonic() > deadline:
            break
        time.sleep(0.01)
    assert {i: got[i] for i in awaited} == dict(awaited), [line[:200] for line, _ in batch]
    assert server.request("ping", timeout=ANSWER_DEADLINE)["result"] == {}
    server.assert_clean()


def _cancelled_ids(line: bytes) -> set[Any]:
    try:
        data = json.loads(line)
        if data.get("method") == "notifications/cancelled":
            return {data["params"]["requestId"]}
    except (ValueError, RecursionError, TypeError, KeyError, AttributeError):
        pass
    return set()


@given(batch=st.lists(lines(), min_size=1, max_size=6))
@SETTINGS
def test_every_line_over_stdio_is_answered_and_the_server_lives(stdio_server: Stdio, batch) -> None:
    _over_stdio(stdio_server, batch)


@st.composite
def notifications(draw: Any) -> tuple[bytes, Any]:
    """A notification the server knows, with the fields notifications carry set to any JSON (a
    cancellation naming a list once ended the server; random lines draw this class rarely)."""
    method = draw(st.sampled_from([m for m in KNOWN if m.startswith("notifications/")]))
    fields = ["requestId", "reason", "progressToken", "progress", "total", "message", "_meta"]
    params = draw(st.dictionaries(st.sampled_from(fields), JSON, max_size=3))
    return json.dumps({"jsonrpc": "2.0", "method": method, "params": params}).encode() + b"\n", None


@given(batch=st.lists(notifications(), min_size=1, max_size=6))
@SETTINGS
def test_every_known_notification_with_any_params_leaves_the_server_serving(
    stdio_server: Stdio, batch
) -> None:
    _over_stdio(stdio_server, batch)


@pytest.mark.heavy
@given(batch=st.lists(lines(), min_size=1, max_size=6))
@HEAVY_SETTINGS
def test_every_line_over_stdio_long_form(stdio_server: Stdio, batch) -> None:
    _over_stdio(stdio_server, batch)


# --- stdio, batches in a 2025-03-26 session ---------------------------------------------------------


@st.composite
def batches(draw: Any) -> tuple[bytes, list[tuple[bytes, Any]]]:
    """A JSON array of generated lines, as one line, and its members."""
    members = draw(st.lists(lines(), max_size=5))
    return b"[" + b",".join(line.strip() for line, _ in members) + b"]\n", members


def _batch_over_stdio(servers: Stdio, drawn: tuple[bytes, list[tuple[bytes, Any]]]) -> None:
    """A batch gets one array: exactly one answer per member request with a usable id, one with id
    null per other request, at most one per other member; an empty batch one error; no line that is
    not JSON an array."""
    line, members = drawn
    servers.assert_no_stray_arrays()
    server = servers.live(version="2025-03-26")
    mark = len(server.stdout_lines)
    server.write(line)
    kinds = [expected(m, raw_id) for m, raw_id in members]
    try:
        json.loads(line.decode("utf-8"))
        whole = True
    except (ValueError, RecursionError):
        whole = False
    ones = collections.Counter(i for kind, i in kinds if kind == "one")
    nulls = sum(kind == "null" for kind, _ in kinds)
    maybe = sum(kind == "at most one" for kind, _ in kinds)
    deadline = time.monotonic() + ANSWER_DEADLINE
    arrays: list[list[dict]] = []
    while whole and members and (ones or nulls) and not arrays and time.monotonic() < deadline:
        arrays = [json.loads(r) for r in server.stdout_lines[mark:] if r.startswith(b"[")]
        time.sleep(0.005)
    # The ping's answer follows every error the wire wrote itself (an array
    # of only those, or one error for a line that is not a batch); an array
    # that comes later still is caught by the next example's first check.
    assert server.request("ping", timeout=ANSWER_DEADLINE)["result"] == {}
    seen = len(server.stdout_lines)
    arrays = [json.loads(r) for r in server.stdout_lines[mark:seen] if r.startswith(b"[")]
    servers.seen = seen
    if not whole or not members:  # not JSON, or an empty batch: one error, never an array
        singles = [json.loads(r) for r in server.stdout_lines[mark:] if r.startswith(b"{")]
        assert arrays == [] and sum(a["id"] is None for a in singles) == 1, (line[:300], singles)
        return
    if not (ones or nulls):
        assert len(arrays) <= 1 and all(a["id"] is None for array in arrays for a in array), arrays
        return
    (array,) = arrays
    got = collections.Counter(a["id"] for a in array)
    assert {i: got[i] for i in ones} == dict(ones), (line[:300], array)
    assert nulls <= got[None] <= nulls + maybe, (line[:300], array)
    assert sum(got.values()) == sum(ones.values()) + got[None], (line[:300], array)
    server.assert_clean()
    if b'"initialize"' in line:  # it may have settled on another revision: the next example starts afresh
        servers.version = ""


@given(drawn=batches())
@settings(SETTINGS, max_examples=6)  # a batch with an initialize costs a new process (heavy: 1,500)
def test_every_batch_in_a_2025_03_26_session_is_answered_as_one_array(stdio_server: Stdio, drawn) -> None:
    _batch_over_stdio(stdio_server, drawn)


# What each member of a batch gets, on the session above (tests/test_protocol_abuse.py: the other revisions).
INVALID_REQUEST, METHOD_NOT_FOUND, INVALID_PARAMS = -32600, -32601, -32602
SAFETY = "robot-md://bob/safety"


def _request(request_id: object, method: str = "ping", **extra: object) -> dict:
    return {"jsonrpc": "2.0", "id": request_id, "method": method, **extra}


def _safety(servers: Stdio) -> str:
    return rmm.VIEW["safety"].text(rmm.ManifestFile(servers.path).version().manifest)


def _batch_session(servers: Stdio) -> RawServer:
    """The 2025-03-26 session, what earlier examples left unread passed over (a fence)."""
    server = servers.live(version="2025-03-26")
    server.fence()
    return server


def _still_serving(servers: Stdio, server: RawServer) -> None:
    """The next real request is answered; the wire is clean; the arrays so far are accounted for."""
    assert server.read(SAFETY)["result"]["contents"][0]["text"] == _safety(servers)
    server.assert_clean()
    servers.seen = len(server.stdout_lines)


def test_a_batch_under_2025_03_26_gets_one_array_of_answers(stdio_server: Stdio) -> None:
    server = _batch_session(stdio_server)
    batch = [
        _request(50),
        _request("fifty-one", "resources/read", params={"uri": SAFETY}),
        {"jsonrpc": "2.0", "method": "notifications/progress", "params": {"progressToken": 1, "progress": 1}},
        _request(52, "no/such/method"),
        {"jsonrpc": "2.0", "id": 53},
        _request(54, "resources/read", params={"uri": "\ud800"}),
        _request(55, ""),  # an empty method is still a request (hypothesis found this one)
        5,
    ]
    server.send(batch)
    answer_line = server.next_message(timeout=5)
    assert isinstance(answer_line, list), answer_line
    by_id = {a["id"]: a for a in answer_line if a["id"] is not None}
    assert set(by_id) == {50, "fifty-one", 52, 54, 55}
    assert by_id[50]["result"] == {}
    assert by_id["fifty-one"]["result"]["contents"][0]["text"] == _safety(stdio_server)
    assert by_id[52]["error"]["code"] == by_id[55]["error"]["code"] == METHOD_NOT_FOUND
    assert by_id[54]["error"]["code"] == INVALID_PARAMS
    nulls = [a for a in answer_line if a["id"] is None]
    assert [a["error"]["code"] for a in nulls] == [INVALID_REQUEST, INVALID_REQUEST]
    assert server.fence() == []
    _still_serving(stdio_server, server)


@pytest.mark.parametrize(
    ("batch", "answer"),
    [
        ([{"jsonrpc": "2.0", "method": "notifications/initialized"}], None),
        ([1, 2], [INVALID_REQUEST, INVALID_REQUEST]),
        ([], INVALID_REQUEST),
    ],
    ids=["notifications only", "nothing valid", "empty"],
)
def test_batches_without_requests_under_2025_03_26(stdio_server: Stdio, batch: list, answer: object) -> None:
    """As JSON-RPC 2.0 says: only notifications get no answer; only invalid members, an array of
    errors; an empty batch, one error."""
    server = _batch_session(stdio_server)
    server.send(batch)
    got = server.fence()
    if answer is None:
        assert got == []
    elif isinstance(answer, list):
        array = json.loads(server.stdout_lines[-2])  # the line before the fence's answer
        assert [a["error"]["code"] for a in array] == answer
    else:
        (single,) = got
        assert single["error"]["code"] == answer and "empty batch" in single["error"]["message"]
    _still_serving(stdio_server, server)


@pytest.mark.heavy
@given(drawn=batches())
@HEAVY_SETTINGS
def test_every_batch_long_form(stdio_server: Stdio, drawn) -> None:
    _batch_over_stdio(stdio_server, drawn)


# --- HTTP -----------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def http_server() -> Iterator[tuple[ServedOnAThread, dict[str, str]]]:
    with served_on_a_thread() as served:
        yield served, served.session("2025-11-25")


def _answers(headers: dict[str, str], body: bytes) -> list[dict]:
    """The JSON-RPC messages of a response: a JSON body, or an event stream's data lines."""
    if headers.get("content-type", "").startswith("text/event-stream"):
        events = [json.loads(row[5:]) for row in body.split(b"\n") if row.startswith(b"data:")]
        return [event for event in events if "method" not in event]
    if headers.get("content-type", "").startswith("application/json") and body:
        answer = json.loads(body)
        return answer if isinstance(answer, list) else [answer]
    return []


def _over_http(served: ServedOnAThread, session: dict[str, str], batch: list[tuple[bytes, Any]]) -> None:
    for line, raw_id in batch:
        status, headers, body = served.request("POST", "/mcp", line, session)
        assert status < 500, (line[:300], status, body[:300])
        kind, request_id = expected(line, raw_id)
        if kind == "at most one" or status not in (200, 400) or _cancelled_ids(line):
            continue
        ids = [a.get("id") for a in _answers(headers, body)]
        assert len(ids) == 1 and ids[0] in (request_id, None), (line[:300], status, body[:300])
    ping = json.dumps({"jsonrpc": "2.0", "id": "alive", "method": "ping"}).encode()
    status, headers, body = served.request("POST", "/mcp", ping, session)
    assert status == 200 and _answers(headers, body)[0]["result"] == {}, body[:300]
    assert served.request("GET", "/healthz")[0] == 200


@given(batch=st.lists(lines(), min_size=1, max_size=6))
@SETTINGS
def test_every_line_over_http_is_answered_and_the_server_lives(http_server, batch) -> None:
    served, session = http_server
    _over_http(served, session, batch)


@pytest.mark.heavy
@given(batch=st.lists(lines(), min_size=1, max_size=6))
@HEAVY_SETTINGS
def test_every_line_over_http_long_form(http_server, batch) -> None:
    served, session = http_server
    _over_http(served, session, batch)


def test_the_generator_reaches_every_class() -> None:
    """The line generator is not vacuous: it draws lone surrogates, huge ids, unusable ids,
    known methods and lines that are not JSON at all."""
    seen: set[str] = set()

    @given(lines())
    @settings(max_examples=40, database=None, derandomize=True)
    def draw(drawn: tuple[bytes, Any]) -> None:
        line, raw_id = drawn
        seen.add(expected(line, raw_id)[0])
        if b"\\ud" in line or b"\xed\xa0" in line or b"\xed\xb0" in line:
            seen.add("surrogate")
        if raw_id is not None and raw_id.lstrip("-").isdigit() and len(raw_id) > 19:
            seen.add("huge id")
        if any(f'"method": "{m}"'.encode() in line for m in KNOWN):
            seen.add("known method")

    draw()
    assert seen >= {"one", "null", "at most one", "surrogate", "huge id", "known method"}, seen
