"""Protocol abuse over real stdio, one raw line at a time: what each kind of
malformed input gets (JSON-RPC 2.0: -32700 for text that is not JSON,
-32600 for JSON that is not a request, nothing for notifications and
responses), oversized lines, hundreds of requests at once, and stdin closing
with requests in flight. After each, the server answers the next request,
stdout has carried only JSON-RPC lines and stderr no traceback.

test_server.py covers one unknown method and stdin closing after one
request; this extends both."""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from conftest import EXAMPLE, need
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st
from serving import PROC, RawServer, is_jsonrpc, line

import robot_md_mcp as rmm

GOOD = EXAMPLE.read_text(encoding="utf-8")
MANIFEST = rmm.parse(GOOD)
SAFETY = "robot-md://bob/safety"
PARSE_ERROR, INVALID_REQUEST, METHOD_NOT_FOUND, INVALID_PARAMS = -32700, -32600, -32601, -32602
RSS_LIMIT_MIB = 200
MIB = 1024 * 1024


@pytest.fixture(scope="module")
def server(tmp_path_factory) -> Iterator[RawServer]:
    path = tmp_path_factory.mktemp("abuse") / "ROBOT.md"
    path.write_text(GOOD, encoding="utf-8")
    with RawServer(path) as served:
        served.handshake()
        yield served
        served.assert_clean()
        assert served.close() == 0, served.stderr[-2000:]


def still_serving(server: RawServer) -> None:
    """The next real request is answered correctly; the wire is still clean."""
    text = server.read(SAFETY)["result"]["contents"][0]["text"]
    assert text == rmm.VIEW["safety"].text(MANIFEST)
    server.assert_clean()


# --- one malformed line, then a fence: what came back before the ping's answer


def request(request_id: object, method: object = "ping", **extra: object) -> dict:
    return {"jsonrpc": "2.0", "id": request_id, "method": method, **extra}


def _note(method: str, **params: object) -> dict:
    return {"jsonrpc": "2.0", "method": method, **({"params": params} if params else {})}


def _nested(depth: int) -> bytes:
    """A ping (id 42) whose params hold arrays nested `depth` deep: the envelope and params count 2 more."""
    nest = b"[" * depth + b"]" * depth
    return b'{"jsonrpc": "2.0", "id": 42, "method": "ping", "params": {"x": ' + nest + b"}}"


PONG = {"jsonrpc": "2.0", "id": 42, "result": {}}  # a ping's answer
LONE = "\ud800"  # half of a pair; "\udc00" and "\ud83d" (half an emoji) are the same class
NOT_REQUEST_IDS: tuple[object, ...] = (999, [], {"a": 1}, True, 1.5, None)
NOT_A_MESSAGE, NOT_AN_ID = "not a JSON-RPC 2.0 message", "id must be a string or an integer"
# Each kind of line: the message (JSON text as bytes, else written by json.dumps, which escapes a lone
# surrogate: legal JSON, as a client's encoder writes it), and its one answer's id, code and words (None:
# no answer at all).
LINES: dict[str, tuple[object, tuple[object, int, str] | dict | None]] = {
    **{
        f"not JSON {raw!r}"[:40]: (raw, (None, PARSE_ERROR, "Parse error: "))
        for raw in (
            b"{not json",
            b'{"jsonrpc": "2.0", "id": 1, "method": "ping"',
            b"\xff\xfe\x00 garbage",
            b"'single'",
            b'{"jsonrpc": "2.0", "id": 40, "method": "\xed\xa0\x80"}',  # CESU-8 bytes of U+D800: not UTF-8
        )
    },
    # Nested past what Python's parser takes, or past MAX_MESSAGE_DEPTH (as HTTP answers, whose SDK parser
    # stops past 201 levels).
    "100,000 arrays": (b"[" * 100_000, (None, PARSE_ERROR, "Parse error: ")),
    "50,000 objects": (b'{"a":' * 50_000, (None, PARSE_ERROR, "Parse error: ")),
    "100,000 arrays in params": (_nested(100_000), (None, PARSE_ERROR, "Parse error: ")),
    "params 100 past the limit": (
        _nested(rmm.MAX_MESSAGE_DEPTH + 98),
        (42, INVALID_REQUEST, "nested deeper"),
    ),
    "params 1 past the limit": (_nested(rmm.MAX_MESSAGE_DEPTH - 1), (42, INVALID_REQUEST, "nested deeper")),
    # Up to MAX_MESSAGE_DEPTH levels (the envelope and params count) the ping is answered.
    **{f"params {n} within the limit": (_nested(rmm.MAX_MESSAGE_DEPTH - 2 - n), PONG) for n in (0, 1)},
    "a number": (42, (None, INVALID_REQUEST, NOT_A_MESSAGE)),
    "a string": ("ping", (None, INVALID_REQUEST, NOT_A_MESSAGE)),
    "null": (None, (None, INVALID_REQUEST, NOT_A_MESSAGE)),
    "an empty object": ({}, (None, INVALID_REQUEST, NOT_A_MESSAGE)),
    "an empty array": ([], (None, INVALID_REQUEST, "batch")),
    "a batch of two pings": ([request(1), request(2)], (None, INVALID_REQUEST, "batch")),
    "no jsonrpc member": ({"id": 7, "method": "ping"}, (7, INVALID_REQUEST, NOT_A_MESSAGE)),
    "jsonrpc 1.0": ({**request(8), "jsonrpc": "1.0"}, (8, INVALID_REQUEST, NOT_A_MESSAGE)),
    "method a number": (request(9, method=5), (9, INVALID_REQUEST, NOT_A_MESSAGE)),
    "params an array": (request("ten", params=[1]), ("ten", INVALID_REQUEST, NOT_A_MESSAGE)),
    "params a string": (request(11, params="x"), (11, INVALID_REQUEST, NOT_A_MESSAGE)),
    "a notification with params 3": (
        {**_note("notifications/initialized"), "params": 3},
        (None, INVALID_REQUEST, NOT_A_MESSAGE),
    ),
    "an id and nothing else": ({"jsonrpc": "2.0", "id": 12}, (None, INVALID_REQUEST, NOT_A_MESSAGE)),
    # Both fit a response, once its extra members are ignored; with a method, each is a bad request.
    "method null and a result": (request(16, None, result={}), (16, INVALID_REQUEST, NOT_A_MESSAGE)),
    "params an array and a result": (
        request(17, "initialize", params=[], result={}),
        (17, INVALID_REQUEST, "not a JSON-RPC"),
    ),
    "a response with a number for a result": (
        {"jsonrpc": "2.0", "id": 13, "result": 5},
        (None, INVALID_REQUEST, NOT_A_MESSAGE),
    ),
    # The SDK's models have no place for these ids: it read them as notifications (never answered).
    **{
        f"id {v!r}": (request(v), (None, INVALID_REQUEST, NOT_AN_ID))
        for v in (None, True, 1.5, [1], {"n": 1})
    },
    "a blank line": (b"", None),
    "spaces and a tab": (b" \t ", None),
    "a carriage return": (b"\r", None),
    "a response to nothing": ({"jsonrpc": "2.0", "id": 14, "result": {}}, None),
    "an error response to nothing": (
        {"jsonrpc": "2.0", "id": 15, "error": {"code": -1, "message": "x"}},
        None,
    ),
    "initialized again": (_note("notifications/initialized"), None),
    "an unknown notification": ({**_note("notifications/nope"), "params": {}}, None),
    "progress for nothing": (_note("notifications/progress", progressToken=1, progress=1), None),
    "roots changed": (_note("notifications/roots/list_changed"), None),
    # A cancellation naming no request (a list once ended the server: the wire looked it up in a table).
    **{f"a cancel of {v!r}": (_note("notifications/cancelled", requestId=v), None) for v in NOT_REQUEST_IDS},
    "a cancel without an id": ({**_note("notifications/cancelled"), "params": {}}, None),
    "a cancel without params": (_note("notifications/cancelled"), None),
    # A lone surrogate in each place a client can put one.
    "a lone surrogate in the id": (request(LONE), (None, INVALID_REQUEST, "lone surrogate")),
    "... in the method": (request(30, LONE), (30, INVALID_REQUEST, "lone surrogate")),
    "... in a resource URI": (
        request(31, "resources/read", params={"uri": LONE}),
        (31, INVALID_PARAMS, "lone surrogate"),
    ),
    "... in a prompt argument": (
        request(32, "prompts/get", params={"name": "check-safety", "arguments": {"action": "\ud83d"}}),
        (32, INVALID_PARAMS, "lone surrogate"),
    ),
    "... in a tool argument's key": (
        request(33, "tools/call", params={"name": "validate", "arguments": {"\udc00": 1}}),
        (33, INVALID_PARAMS, "lone surrogate"),
    ),
    "... in a subscribe URI": (
        request(34, "resources/subscribe", params={"uri": f"robot-md://{LONE}"}),
        (34, INVALID_PARAMS, "lone surrogate"),
    ),
    "... in a _meta key": (
        request(35, "ping", params={"_meta": {LONE: 1}}),
        (35, INVALID_PARAMS, "lone surrogate"),
    ),
    "... in a notification": (_note("notifications/x", a=LONE), (None, INVALID_REQUEST, "lone surrogate")),
    "... in a response": (
        {"jsonrpc": "2.0", "id": 36, "result": {"a": LONE}},
        (None, INVALID_REQUEST, "lone surrogate"),
    ),
}


@pytest.mark.parametrize("name", LINES)
def test_each_kind_of_line_gets_its_one_answer_or_none(server: RawServer, name: str) -> None:
    """What came back before the fence's answer: the one error (JSON-RPC 2.0: -32700 for text that is
    not JSON, -32600 for JSON that is not a request), or nothing; then the server goes on."""
    message, expected = LINES[name]
    server.write((message if isinstance(message, bytes) else json.dumps(message).encode()) + b"\n")
    answers = server.fence()
    if expected is None or isinstance(expected, dict):
        assert answers == ([] if expected is None else [expected]), answers
    else:
        (answer,) = answers
        assert (answer["id"], answer["error"]["code"]) == expected[:2], answer
        assert expected[2] in answer["error"]["message"], answer
    still_serving(server)


def test_an_answer_that_cannot_be_written_fails_its_request_only() -> None:
    """Whatever the server makes that cannot be written as UTF-8 JSON becomes an error answer
    to that request (its id kept); other messages are written as they are."""
    from mcp import types
    from mcp.shared.message import SessionMessage

    def written(message: Any) -> dict:
        data = rmm._outgoing_line(SessionMessage(message), rmm._Unanswered(), rmm._Batches())
        assert data is not None and data.endswith(b"\n")
        return json.loads(data.decode("utf-8"))

    bad = types.JSONRPCResponse(jsonrpc="2.0", id=7, result={"text": LONE})
    answer = written(bad)
    assert (answer["id"], answer["error"]["code"]) == (7, -32603), answer
    good = types.JSONRPCResponse(jsonrpc="2.0", id=8, result={"text": "\U0001f916"})
    assert written(good) == {"jsonrpc": "2.0", "id": 8, "result": {"text": "\U0001f916"}}
    note = types.JSONRPCNotification(jsonrpc="2.0", method="notifications/x", params={"a": LONE})
    assert rmm._outgoing_line(SessionMessage(note), rmm._Unanswered(), rmm._Batches()) is None


# --- batches: refused but under 2025-03-26 (its batches: tests/test_every_request_answered.py) -----


@pytest.mark.process  # at 2025-11-25: LINES' "a batch of two pings"
@pytest.mark.parametrize("version", ["2024-11-05", "2025-06-18"])
def test_batches_are_refused_under_other_revisions(tmp_path: Path, version: str) -> None:
    (path := tmp_path / "ROBOT.md").write_text(GOOD, encoding="utf-8")
    with RawServer(path) as server:
        server.handshake(version=version)
        server.send([request(60), request(61)])
        (answer,) = server.fence()
        assert (answer["id"], answer["error"]["code"]) == (None, INVALID_REQUEST)
        assert "batch" in answer["error"]["message"]
        assert server.close() == 0


# --- well-formed requests the server cannot serve ------------------------------

UNKNOWN_METHODS = ["", "tools/nope", "resources/read/", "PING", "rpc.discover", "x" * 10_000]
BAD_PARAMS: list[tuple[str, dict[str, Any]]] = [
    ("resources/read", {}),
    ("resources/read", {"uri": 5}),
    ("tools/call", {}),
    ("tools/call", {"name": "validate", "arguments": []}),
    ("tools/call", {"name": ["validate"]}),
    ("resources/list", {"cursor": 5}),
    ("prompts/get", {}),
    ("completion/complete", {"ref": "nope"}),
    ("resources/subscribe", {"uri": None}),
    ("logging/setLevel", {"level": "loud"}),
]


def test_unknown_methods_and_bad_params(server: RawServer) -> None:
    for method in UNKNOWN_METHODS:
        answer = server.request(method)
        assert answer["error"]["code"] == METHOD_NOT_FOUND, answer
    for method, params in BAD_PARAMS:
        answer = server.request(method, params)
        assert answer["error"]["code"] == INVALID_PARAMS, (method, params, answer)
    still_serving(server)


# --- size and volume ------------------------------------------------------------------

HUGE = {
    "10 MB of junk": b"{" + b"x" * (10 * MIB),
    "10 MB valid request": line(
        request("big", "resources/read", params={"uri": "robot-md://" + "y" * 10 * MIB})
    ),
    "10 MB JSON array of numbers": b"[" + b"1," * (5 * MIB) + b"1]",
    "10 MB JSON string": json.dumps("z" * 10 * MIB).encode(),
}


def test_ten_megabyte_lines_are_refused_in_bounded_memory(server: RawServer) -> None:
    need(PROC.exists(), "/proc/<pid>/status for the server's peak RSS")
    server.reset_peak()
    before = server.rss_mib()
    for name, raw in list(HUGE.items()) * 2:  # twice: memory must not grow with repetition
        server.write(raw.rstrip(b"\n") + b"\n")
        (answer,) = server.fence(timeout=10)  # 10 MB through a pipe, read in 64 KiB steps
        assert answer["id"] is None and answer["error"]["code"] == INVALID_REQUEST, (name, answer)
        assert answer["error"]["message"] == "Invalid Request: a line longer than 256 KiB"
    peak = server.peak_rss_mib()
    assert peak < RSS_LIMIT_MIB and peak - before < 20, f"{before:.0f} → {peak:.0f} MiB"
    # Just under the limit a line is read as usual: here an unknown resource (-32602).
    uri = "robot-md://bob/" + "y" * (rmm.MAX_STDIO_LINE_BYTES - 200)
    server.send(request("under", "resources/read", params={"uri": uri}))
    answer = server.response("under")  # by its id: a handler's answer may come after a later ping's
    assert answer["error"]["code"] == INVALID_PARAMS
    print(f"\n10 MB lines x{2 * len(HUGE)}: peak RSS {peak:.0f} MiB (from {before:.0f})")
    still_serving(server)


def mixed_requests(count: int) -> list[dict]:
    """Requests of every kind this server answers, with a distinct id each."""
    kinds = [
        ("ping", None),
        ("resources/read", {"uri": SAFETY}),
        ("tools/call", {"name": "validate", "arguments": {}}),
        ("resources/list", {}),
        ("no/such/method", None),
        ("tools/call", {"name": "render", "arguments": {}}),
    ]
    requests = []
    for n in range(count):
        method, params = kinds[n % len(kinds)]
        requests.append(request(f"r{n}" if n % 2 else n, method, **({"params": params} if params else {})))
    return requests


def expected_answer(message: dict) -> object:
    """What each mixed request must get: the result's key fact, or the error code."""
    method = message["method"]
    if method == "ping":
        return {}
    if method == "resources/read":
        return rmm.VIEW["safety"].text(MANIFEST)
    if method == "tools/call" and message["params"]["name"] == "validate":
        return rmm.validate(MANIFEST).as_dict()
    if method == "tools/call":
        return {"yaml": rmm.render(MANIFEST)}
    if method == "resources/list":
        return [*(f"robot-md://bob/{view.kind}" for view in rmm.VIEWS), rmm.CARD_URI]
    return METHOD_NOT_FOUND


def key_fact(answer: dict) -> object:
    if "error" in answer:
        return answer["error"]["code"]
    result = answer["result"]
    if "contents" in result:
        return result["contents"][0]["text"]
    if "structuredContent" in result:
        return result["structuredContent"]
    if "resources" in result:
        return [r["uri"] for r in result["resources"]]
    return result


def test_five_hundred_requests_written_at_once(server: RawServer) -> None:
    requests = mixed_requests(500)
    started = time.monotonic()
    server.write(b"".join(line(r) for r in requests))
    answers = {}
    for r in requests:  # any order; each within the per-request deadline of the one before
        answers[r["id"]] = server.response(r["id"], timeout=10)
    print(f"\n500 requests written at once: all answered in {time.monotonic() - started:.2f}s")
    assert len(answers) == 500
    for r in requests:
        assert key_fact(answers[r["id"]]) == expected_answer(r), r
    assert server.fence() == []  # nothing extra, nothing twice, before a later request's answer
    still_serving(server)


# --- stdin closing with requests in flight -------------------------------------------


@pytest.mark.process  # the default tier's end of input: tests/test_stdin_closing_answers_all.py
@pytest.mark.parametrize(
    "tail", [b"", b'{"jsonrpc": "2.0", "id": "cut", "method": "pi'], ids=["whole", "cut-line"]
)
def test_stdin_closing_with_many_requests_in_flight(tmp_path: Path, tail: bytes) -> None:
    path = tmp_path / "ROBOT.md"
    path.write_text(GOOD, encoding="utf-8")
    with RawServer(path) as served:
        served.handshake()
        requests = mixed_requests(200)
        served.write(b"".join(line(r) for r in requests) + tail)
        assert served.close(timeout=20) == 0
        served.assert_clean()  # whole lines only, no traceback
        sent = {r["id"]: r for r in requests}
        answered = set()
        for raw in served.stdout_lines[1:]:  # after the initialize answer
            answer = json.loads(raw)
            assert is_jsonrpc(answer)
            if answer["id"] in sent:  # each answer is the right one
                assert key_fact(answer) == expected_answer(sent[answer["id"]])
                answered.add(answer["id"])
            else:  # the cut line, read at EOF, is not JSON
                assert (answer["id"], answer["error"]["code"]) == (None, PARSE_ERROR), answer
        assert answered == set(sent)  # every request that arrived before EOF is answered


# --- malformed params: the error names what is wrong ----------------------------------------

VALID_COMPLETION = {
    "ref": {"type": "ref/prompt", "name": "explain-capability"},
    "argument": {"name": "capability", "value": "arm"},
    "context": {"arguments": {"capability": "arm"}},
}
REQUIRED = ["ref", "ref.type", "ref.name", "argument", "argument.name", "argument.value"]
TYPED = {  # each field, and what it must be
    "ref": dict,
    "ref.type": str,
    "ref.name": str,
    "argument": dict,
    "argument.name": str,
    "argument.value": str,
    "context": dict,
    "context.arguments": dict,
}
JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=5),
    lambda inner: st.lists(inner, max_size=2) | st.dictionaries(st.text(max_size=5), inner, max_size=2),
    max_leaves=4,
)


def wrong_for(kind: type, optional: bool) -> st.SearchStrategy[Any]:
    """A JSON value that is not a `kind` (nor null, where null means absent)."""
    return JSON_VALUES.filter(lambda v: not isinstance(v, kind) and not (optional and v is None))


@st.composite
def malformed_completions(draw: Any) -> tuple[dict[str, Any], list[str]]:
    """Valid completion params with one to three fields deleted, of a wrong type, or (ref.type) an
    unknown kind of reference; and the fields changed."""
    params = json.loads(json.dumps(VALID_COMPLETION))
    changed: list[str] = []
    for field in draw(st.lists(st.sampled_from(sorted(TYPED)), min_size=1, max_size=3, unique=True)):
        if any(field.startswith(f + ".") or f.startswith(field + ".") for f in changed):
            continue  # one change per branch: a deleted parent has no child to change
        *parents, key = field.split(".")
        holder = params
        for parent in parents:
            holder = holder[parent]
        how = draw(
            st.sampled_from(
                ["delete", "wrong type", "unknown ref"] if field == "ref.type" else ["delete", "wrong type"]
            )
        )
        if how == "delete" and field in REQUIRED:
            del holder[key]
        elif how == "unknown ref":
            holder[key] = draw(st.text(max_size=12).filter(lambda t: t not in ("ref/prompt", "ref/resource")))
        else:
            holder[key] = draw(wrong_for(TYPED[field], optional=field.startswith("context")))
        changed.append(field)
    return params, changed


def _unknown_ref(kind: str) -> tuple[dict[str, Any], list[str]]:
    return {**VALID_COMPLETION, "ref": {"type": kind, "name": "explain-capability"}}, ["ref.type"]


@given(drawn=malformed_completions())
@example(drawn=_unknown_ref("ref/tool"))
@example(drawn=_unknown_ref("REF/PROMPT"))
@example(drawn=_unknown_ref(""))
@settings(
    max_examples=40, deadline=None, database=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
def test_malformed_completion_params_get_an_error_naming_the_problem(server: RawServer, drawn) -> None:
    params, changed = drawn
    if not changed:
        return
    answer = server.request("completion/complete", params)
    assert answer["error"]["code"] == INVALID_PARAMS, answer
    message, named = answer["error"]["message"], answer["error"]["data"]
    fields = named["missing"] + named["malformed"]
    assert message.startswith("Invalid request parameters: completion/complete "), message
    assert fields and all(f in message for f in fields), answer
    for field in changed:  # each change is named, itself or the field holding it
        assert any(field == f or field.startswith(f + ".") for f in fields), (field, answer)
    if "ref" in fields and "ref" in named["malformed"]:  # and what a reference looks like
        assert '"ref/prompt"' in message and '"ref/resource"' in message, message
    # An unknown kind of reference: the ref alone is named.
    if changed == ["ref.type"] and isinstance(params["ref"].get("type"), str):
        assert named == {"missing": [], "malformed": ["ref"]}, named
    assert server.fence() == []
