"""Protocol abuse over real stdio, one raw line at a time: what each kind of
malformed input gets (JSON-RPC 2.0: -32700 for text that is not JSON,
-32600 for JSON that is not a request, nothing for notifications and
responses), oversized lines, hundreds of requests at once, and stdin closing
with requests in flight. After each, the server answers the next request,
stdout has carried only JSON-RPC lines and stderr no traceback.

test_server.py covers one unknown method and stdin closing after one
request; this extends both."""

from __future__ import annotations

import contextlib
import json
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from conftest import EXAMPLE, need
from hypothesis import HealthCheck, given, settings
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


NOT_JSON = [
    b"{not json",
    b'{"jsonrpc": "2.0", "id": 1, "method": "ping"',
    b"\xff\xfe\x00 garbage",
    b"'single'",
]
# (the line, the id the -32600 must carry, a word its message must have)
NOT_A_MESSAGE: dict[str, tuple[object, object, str]] = {
    "a number": (42, None, "not a JSON-RPC 2.0 message"),
    "a string": ("ping", None, "not a JSON-RPC 2.0 message"),
    "null": (None, None, "not a JSON-RPC 2.0 message"),
    "an empty object": ({}, None, "not a JSON-RPC 2.0 message"),
    "an empty array": ([], None, "batch"),
    "a batch of two pings": ([request(1), request(2)], None, "batch"),
    "no jsonrpc member": ({"id": 7, "method": "ping"}, 7, "not a JSON-RPC 2.0 message"),
    "jsonrpc 1.0": ({**request(8), "jsonrpc": "1.0"}, 8, "not a JSON-RPC 2.0 message"),
    "method a number": (request(9, method=5), 9, "not a JSON-RPC 2.0 message"),
    "params an array": (request("ten", params=[1]), "ten", "not a JSON-RPC 2.0 message"),
    "params a string": (request(11, params="x"), 11, "not a JSON-RPC 2.0 message"),
    "a notification with params 3": (
        {"jsonrpc": "2.0", "method": "notifications/initialized", "params": 3},
        None,
        "not a JSON-RPC 2.0 message",
    ),
    "an id and nothing else": ({"jsonrpc": "2.0", "id": 12}, None, "not a JSON-RPC 2.0 message"),
    # Both fit a response, once its extra members are ignored; with a method, each is a bad request.
    "method null and a result": (request(16, None, result={}), 16, "not a JSON-RPC 2.0 message"),
    "params an array and a result": (request(17, "initialize", params=[], result={}), 17, "not a JSON-RPC"),
    "a response with a number for a result": (
        {"jsonrpc": "2.0", "id": 13, "result": 5},
        None,
        "not a JSON-RPC 2.0 message",
    ),
    # The SDK's models have no place for these ids: it read them as notifications (never answered).
    "id null": (request(None), None, "id must be a string or an integer"),
    "id true": (request(True), None, "id must be a string or an integer"),
    "id 1.5": (request(1.5), None, "id must be a string or an integer"),
    "id an array": (request([1]), None, "id must be a string or an integer"),
    "id an object": (request({"n": 1}), None, "id must be a string or an integer"),
}
NO_ANSWER = {
    "a blank line": b"",
    "spaces and a tab": b" \t ",
    "a carriage return": b"\r",
    "a response to nothing": line({"jsonrpc": "2.0", "id": 14, "result": {}})[:-1],
    "an error response to nothing": line({"jsonrpc": "2.0", "id": 15, "error": {"code": -1, "message": "x"}})[
        :-1
    ],
    "initialized again": line({"jsonrpc": "2.0", "method": "notifications/initialized"})[:-1],
    "an unknown notification": line({"jsonrpc": "2.0", "method": "notifications/nope", "params": {}})[:-1],
    "a cancel for nothing in flight": line(
        {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 999}}
    )[:-1],
    "progress for nothing": line(
        {"jsonrpc": "2.0", "method": "notifications/progress", "params": {"progressToken": 1, "progress": 1}}
    )[:-1],
    "roots changed": line({"jsonrpc": "2.0", "method": "notifications/roots/list_changed"})[:-1],
}


@pytest.mark.parametrize("raw", NOT_JSON, ids=lambda raw: repr(raw)[:30])
def test_text_that_is_not_json_gets_a_parse_error(server: RawServer, raw: bytes) -> None:
    server.write(raw + b"\n")
    (answer,) = server.fence()
    assert answer["id"] is None and answer["error"]["code"] == PARSE_ERROR, answer
    assert answer["error"]["message"].startswith("Parse error: ")
    still_serving(server)


@pytest.mark.parametrize("name", NOT_A_MESSAGE)
def test_json_that_is_not_a_request_gets_invalid_request(server: RawServer, name: str) -> None:
    message, answer_id, words = NOT_A_MESSAGE[name]
    server.send(message)
    (answer,) = server.fence()
    assert answer["id"] == answer_id and answer["error"]["code"] == INVALID_REQUEST, answer
    assert words in answer["error"]["message"]
    still_serving(server)


@pytest.mark.parametrize("name", NO_ANSWER)
def test_notifications_blank_lines_and_stray_responses_get_no_answer(server: RawServer, name: str) -> None:
    server.write(NO_ANSWER[name] + b"\n")
    assert server.fence() == []
    still_serving(server)


NOT_AN_ID: dict[str, object] = {"list": [], "object": {"a": 1}, "true": True, "1.5": 1.5, "null": None}


@pytest.mark.parametrize("name", [*NOT_AN_ID, "absent", "no params"])
def test_a_cancellation_that_names_no_request_is_dropped_and_the_server_lives(
    server: RawServer, name: str
) -> None:
    """notifications/cancelled whose requestId is not an id (a list once ended the server: the wire
    looked it up in a table of unanswered ids): no answer, and the server goes on."""
    note: dict[str, Any] = {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {}}
    if name in NOT_AN_ID:
        note["params"]["requestId"] = NOT_AN_ID[name]
    elif name == "no params":
        del note["params"]
    server.send(note)
    assert server.fence() == []
    still_serving(server)


# --- lone surrogates: legal JSON escapes, not Unicode text ------------------------

LONE = "\ud800"  # half of a pair; "\udc00" and "\ud83d" (half an emoji) are the same class
# (where the lone surrogate is, the message, the id the answer carries, its code)
SURROGATES: dict[str, tuple[dict, object, int]] = {
    "in the id": (request(LONE), None, INVALID_REQUEST),
    "in the method": (request(30, LONE), 30, INVALID_REQUEST),
    "in a resource URI": (request(31, "resources/read", params={"uri": LONE}), 31, INVALID_PARAMS),
    "in a prompt argument": (
        request(32, "prompts/get", params={"name": "check-safety", "arguments": {"action": "\ud83d"}}),
        32,
        INVALID_PARAMS,
    ),
    "in a tool argument's key": (
        request(33, "tools/call", params={"name": "validate", "arguments": {"\udc00": 1}}),
        33,
        INVALID_PARAMS,
    ),
    "in a subscribe URI": (
        request(34, "resources/subscribe", params={"uri": f"robot-md://{LONE}"}),
        34,
        INVALID_PARAMS,
    ),
    "in a _meta key": (request(35, "ping", params={"_meta": {LONE: 1}}), 35, INVALID_PARAMS),
    "in a notification": (
        {"jsonrpc": "2.0", "method": "notifications/x", "params": {"a": LONE}},
        None,
        INVALID_REQUEST,
    ),
    "in a response": ({"jsonrpc": "2.0", "id": 36, "result": {"a": LONE}}, None, INVALID_REQUEST),
}


@pytest.mark.parametrize("where", SURROGATES)
def test_a_lone_surrogate_anywhere_gets_an_error_and_the_server_lives(server: RawServer, where: str) -> None:
    """json.dumps escapes it (ASCII out), as a client's JSON encoder would: the line is legal JSON."""
    message, answer_id, code = SURROGATES[where]
    server.write(json.dumps(message).encode() + b"\n")
    (answer,) = server.fence()
    assert (answer["id"], answer["error"]["code"]) == (answer_id, code), answer
    assert "lone surrogate" in answer["error"]["message"]
    still_serving(server)


def test_surrogates_encoded_as_utf8_bytes_are_not_utf8(server: RawServer) -> None:
    """CESU-8 style bytes for U+D800 (ED A0 80): invalid UTF-8, a parse error, not a surrogate passed on."""
    server.write(b'{"jsonrpc": "2.0", "id": 40, "method": "\xed\xa0\x80"}\n')
    (answer,) = server.fence()
    assert (answer["id"], answer["error"]["code"]) == (None, PARSE_ERROR), answer
    still_serving(server)


def test_nesting_deeper_than_the_parser_takes_is_a_parse_error(server: RawServer) -> None:
    for deep in (
        b"[" * 100_000,
        b'{"a":' * 50_000,
        line(request(41, params={"x": [[[[[[[[[[[[[[[[[[[[[]]]]]]]]]]]]]]]]]]]]]})),
    ):
        server.write(deep + b"\n")
        answers = server.fence()
        assert all(a["error"]["code"] in (PARSE_ERROR, INVALID_REQUEST) for a in answers if "error" in a), (
            answers
        )
    still_serving(server)


@pytest.mark.parametrize("extra", [-1, 0, 1, 100])
def test_a_message_nested_past_the_limit_is_refused_with_its_id(server: RawServer, extra: int) -> None:
    """Up to MAX_MESSAGE_DEPTH levels (the envelope and params count) a ping is answered; past it,
    -32600 with its id: what HTTP answers too, whose SDK parser stops past 201 levels."""
    depth = rmm.MAX_MESSAGE_DEPTH + extra - 2
    server.write(line(request(42, params={"x": json.loads("[" * depth + "]" * depth)})))
    (answer,) = server.fence()
    if extra <= 0:
        assert answer == {"jsonrpc": "2.0", "id": 42, "result": {}}, answer
    else:
        assert (answer["id"], answer["error"]["code"]) == (42, INVALID_REQUEST), answer
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


# --- batches: accepted under 2025-03-26, the one revision that requires them -----


@pytest.fixture(scope="module")
def batch_server(tmp_path_factory) -> Iterator[RawServer]:
    path = tmp_path_factory.mktemp("batches") / "ROBOT.md"
    path.write_text(GOOD, encoding="utf-8")
    with RawServer(path) as served:
        served.handshake(version="2025-03-26")
        yield served
        served.assert_clean()
        assert served.close() == 0, served.stderr[-2000:]


def test_a_batch_under_2025_03_26_gets_one_array_of_answers(batch_server: RawServer) -> None:
    batch = [
        request(50),
        request("fifty-one", "resources/read", params={"uri": SAFETY}),
        {"jsonrpc": "2.0", "method": "notifications/progress", "params": {"progressToken": 1, "progress": 1}},
        request(52, "no/such/method"),
        {"jsonrpc": "2.0", "id": 53},
        request(54, "resources/read", params={"uri": LONE}),
        request(55, ""),  # an empty method is still a request (hypothesis found this one)
        5,
    ]
    batch_server.send(batch)
    answer_line = batch_server.next_message(timeout=5)
    assert isinstance(answer_line, list), answer_line
    by_id = {a["id"]: a for a in answer_line if a["id"] is not None}
    assert set(by_id) == {50, "fifty-one", 52, 54, 55}
    assert by_id[50]["result"] == {}
    assert by_id["fifty-one"]["result"]["contents"][0]["text"] == rmm.VIEW["safety"].text(MANIFEST)
    assert by_id[52]["error"]["code"] == by_id[55]["error"]["code"] == METHOD_NOT_FOUND
    assert by_id[54]["error"]["code"] == INVALID_PARAMS
    nulls = [a for a in answer_line if a["id"] is None]
    assert [a["error"]["code"] for a in nulls] == [INVALID_REQUEST, INVALID_REQUEST]
    assert batch_server.fence() == []
    still_serving(batch_server)


@pytest.mark.parametrize(
    ("batch", "answer"),
    [
        ([{"jsonrpc": "2.0", "method": "notifications/initialized"}], None),
        ([1, 2], [INVALID_REQUEST, INVALID_REQUEST]),
        ([], INVALID_REQUEST),
    ],
    ids=["notifications only", "nothing valid", "empty"],
)
def test_batches_without_requests_under_2025_03_26(
    batch_server: RawServer, batch: list, answer: object
) -> None:
    """As JSON-RPC 2.0 says: only notifications get no answer; only invalid members, an array of
    errors; an empty batch, one error."""
    batch_server.send(batch)
    got = batch_server.fence()
    if answer is None:
        assert got == []
    elif isinstance(answer, list):
        array = json.loads(batch_server.stdout_lines[-2])  # the line before the fence's answer
        assert [a["error"]["code"] for a in array] == answer
    else:
        (single,) = got
        assert single["error"]["code"] == answer and "empty batch" in single["error"]["message"]


@pytest.mark.parametrize(
    "version", [pytest.param(v, marks=pytest.mark.process) for v in ("2024-11-05", "2025-06-18")] + [None]
)
def test_batches_are_refused_under_other_revisions(
    server: RawServer, tmp_path: Path, version: str | None
) -> None:
    """None: the module's server, at 2025-11-25; the others a process of their own."""
    with contextlib.ExitStack() as stack:
        if version is not None:
            (path := tmp_path / "ROBOT.md").write_text(GOOD, encoding="utf-8")
            server = stack.enter_context(RawServer(path))
            server.handshake(version=version)
        server.send([request(60), request(61)])
        (answer,) = server.fence()
        assert (answer["id"], answer["error"]["code"]) == (None, INVALID_REQUEST)
        assert "batch" in answer["error"]["message"]
        assert version is None or server.close() == 0


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


@given(drawn=malformed_completions())
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
    assert server.fence() == []


@pytest.mark.parametrize("kind", ["ref/nope", "ref/tool", "", "REF/PROMPT"])
def test_an_unknown_kind_of_reference_is_named(server: RawServer, kind: str) -> None:
    params = {**VALID_COMPLETION, "ref": {"type": kind, "name": "explain-capability"}}
    error = server.request("completion/complete", params)["error"]
    assert error["data"] == {"missing": [], "malformed": ["ref"]}, error
    assert "ref/prompt" in error["message"] and "ref/resource" in error["message"], error
    assert server.result("completion/complete", VALID_COMPLETION)["completion"]["values"] == [
        "arm.pick",
        "arm.place",
        "arm.reach",
    ]
