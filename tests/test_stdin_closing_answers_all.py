"""Every request received before stdin closes is answered, exactly once, and the server exits 0
(docs/robustness.md). Hypothesis writes whole sessions to a real server process over stdio:
random mixes of resources/read, tools/call, prompts/get, completion/complete and ping, with and
without an edit of the manifest just before (so the answers wait for a new version to be parsed),
in one or two bursts, at 2025-11-25 or at 2025-03-26 with some of them as JSON-RPC batches; then
stdin closes at once. Each batch comes back as one array holding exactly its members' answers.

Each example is a process of its own (the end of input ends it): `-m process` runs a few and thirty reads
after an edit, `-m heavy` many more, derandomized; the default tier's case is test_server.py's
test_nothing_but_protocol_on_stdout_and_stdin_closing_mid_request_ends_cleanly."""

from __future__ import annotations

import collections
import itertools
import json
from pathlib import Path
from typing import Any

import pytest
from conftest import EXAMPLE, ROOT
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st
from hypothesis.configuration import set_hypothesis_home_dir
from serving import RawServer, line

import robot_md_mcp as rmm

set_hypothesis_home_dir(ROOT / ".cache" / "hypothesis")

GOOD = EXAMPLE.read_text(encoding="utf-8")
ROBOT = rmm.parse(GOOD).robot_name
SETTINGS = settings(
    max_examples=3,
    deadline=None,
    database=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
HEAVY_SETTINGS = settings(SETTINGS, max_examples=60, derandomize=True)

# Arguments each prompt needs (bob declares arm.pick).
PROMPT_ARGUMENTS = {
    "check-safety": {"action": "pick up the cup"},
    "explain-capability": {"capability": "arm.pick"},
}


def params_of(method: str) -> st.SearchStrategy[dict[str, Any] | None]:
    if method == "resources/read":
        return st.sampled_from(list(rmm.VIEW)).map(lambda v: {"uri": f"robot-md://{ROBOT}/{v}"})
    if method == "tools/call":
        return st.sampled_from(list(rmm.TOOLS)).map(lambda t: {"name": t, "arguments": {}})
    if method == "prompts/get":
        return st.sampled_from(list(rmm.PROMPTS)).map(
            lambda p: {"name": p, "arguments": PROMPT_ARGUMENTS.get(p, {})}
        )
    if method == "completion/complete":
        return st.sampled_from(["", "arm", "v", "zz"]).map(
            lambda typed: {
                "ref": {"type": "ref/prompt", "name": "explain-capability"},
                "argument": {"name": "capability", "value": typed},
            }
        )
    return st.none()


METHODS = ["resources/read", "tools/call", "prompts/get", "completion/complete", "ping"]
requests = st.sampled_from(METHODS).flatmap(lambda m: params_of(m).map(lambda p: (m, p)))


@st.composite
def sessions(draw: Any) -> dict[str, Any]:
    """A revision, whether the file changes just before, and one or two bursts of lines, each line
    a list of (method, params): one request, or (at 2025-03-26) a batch of them."""
    revision = draw(st.sampled_from(["2025-11-25", rmm.BATCH_REVISION]))
    bursts = []
    for _ in range(draw(st.integers(1, 2))):
        sizes = st.integers(1, 4) if revision == rmm.BATCH_REVISION else st.just(1)
        burst = draw(
            st.lists(sizes.flatmap(lambda n: st.lists(requests, min_size=n, max_size=n)), max_size=12)
        )
        bursts.append(burst)
    return {"revision": revision, "edit": draw(st.booleans()), "bursts": bursts}


def play(path: Path, session: dict[str, Any]) -> None:
    """Run one session and check what came back."""
    path.write_text(GOOD, encoding="utf-8")
    ids = itertools.count(1)
    with RawServer(path, id_prefix="own-") as server:
        server.handshake(version=session["revision"])
        if session["edit"]:
            path.write_text(GOOD + f"\nEdited, for a new version {next(ids)}.\n", encoding="utf-8")
        sent: dict[Any, list[Any]] = {}  # request id -> the ids of its batch (itself alone if none)
        for burst in session["bursts"]:
            data = b""
            for group in burst:
                messages = [
                    {"jsonrpc": "2.0", "id": f"r{next(ids)}", "method": m, **({"params": p} if p else {})}
                    for m, p in group
                ]
                members = [m["id"] for m in messages]
                sent.update((i, members) for i in members)
                data += line(messages if len(messages) > 1 else messages[0])
            server.write(data)
        code, out, err = server.end_input()
        assert code == 0, err[-2000:]
        assert "Traceback" not in err, err[-3000:]
        check_answers(out, sent)


def check_answers(out: bytes, sent: dict[Any, list[Any]]) -> None:
    """Every id answered exactly once, with a result; each batch as one array of its own members."""
    seen: collections.Counter[Any] = collections.Counter()
    for raw in out.splitlines()[1:]:  # after the initialize answer
        message = json.loads(raw)
        answers = message if isinstance(message, list) else [message]
        got = [a["id"] for a in answers if "method" not in a]
        if isinstance(message, list):
            assert sorted(got) == sorted(sent[got[0]]), message  # one array: exactly its batch
        else:
            assert not got or sent[got[0]] == got, message  # a lone request's answer stands alone
        for answer in answers:
            if "method" not in answer:
                assert "result" in answer, answer
                seen[answer["id"]] += 1
    assert seen == collections.Counter(list(sent)), {i for i in sent if seen[i] != 1}


THIRTY_READS_AFTER_AN_EDIT = {
    "revision": "2025-11-25",
    "edit": True,
    "bursts": [[[("resources/read", {"uri": f"robot-md://{ROBOT}/context"})]] * 30],
}


@pytest.mark.process
@given(session=sessions())
@example(session=THIRTY_READS_AFTER_AN_EDIT).via("thirty reads sent at once, the file edited just before")
@SETTINGS
def test_every_request_before_the_end_of_input_is_answered(tmp_path: Path, session) -> None:
    play(tmp_path / "ROBOT.md", session)


@pytest.mark.heavy
@given(session=sessions())
@HEAVY_SETTINGS
def test_every_request_before_the_end_of_input_is_answered_long_form(tmp_path: Path, session) -> None:
    play(tmp_path / "ROBOT.md", session)
