"""Drop-in launch: started the way robot-md's own clients and plugin hosts start it (`--robot PATH`,
an initialize without clientInfo and no `initialized`, a `${…}` the host left unexpanded), each through
one real stdio session (the pendant's, shared by the tests of what it shows), the HTTP app and each
variant of the command line in this process; and what serverInfo tells a client, in both eras."""

from __future__ import annotations

import base64
import json
from pathlib import Path
from typing import Any

import pytest
from conftest import EXAMPLE, ROOT
from http_served import served_in_process
from hypothesis import given, settings
from hypothesis import strategies as st
from serving import MCP_HEADERS, answers, in_process
from usage import usage_message

import robot_md_mcp as rmm

CLIENT_INFO = {"name": "t", "version": "1"}
ALIAS = EXAMPLE.read_text(encoding="utf-8").replace("robot_name: bob", "robot_name: alice")


def initialize(request_id: int = 1, **params: object) -> dict:
    return {"jsonrpc": "2.0", "id": request_id, "method": "initialize", "params": params}


def pendant_initialize(request_id: int = 1) -> dict:
    """What robot-md-pendant sends: no clientInfo (and it never sends `initialized`)."""
    return initialize(request_id, protocolVersion="2025-06-18", capabilities={})


def request(request_id: int, method: str, params: dict | None = None) -> dict:
    return {"jsonrpc": "2.0", "id": request_id, "method": method, **({"params": params} if params else {})}


def robot_served(got: dict, request_id: int) -> str:
    """The robot an identity read (sent as `request_id`) names."""
    return got[request_id]["result"]["contents"][0]["text"].split(" | ")[0]


# --- --robot PATH ----------------------------------------------------------------


LACKING = {"capabilities": {}, "clientInfo": CLIENT_INFO}  # an initialize without protocolVersion


@pytest.fixture(scope="module")
def pendant_session(tmp_path_factory: pytest.TempPathFactory) -> tuple[dict, str, int]:
    """One real stdio process as the pendant starts and talks to it, from a folder holding no manifest:
    an initialize lacking protocolVersion (refused), then the pendant's own (no clientInfo, never an
    `initialized`), then straight to its requests."""
    return answers(
        "--robot",
        EXAMPLE,
        messages=[
            initialize(7, **LACKING),
            pendant_initialize(),
            request(2, "tools/call", {"name": "validate"}),
            request(3, "tools/call", {"name": "render"}),
            request(4, "resources/read", {"uri": "robot-md://bob/identity"}),
        ],
        cwd=tmp_path_factory.mktemp("elsewhere"),
    )


def test_started_and_initialized_as_the_pendant_does_it_is_served(pendant_session: tuple) -> None:
    """`--robot PATH` from a folder holding no manifest; an initialize lacking protocolVersion answered
    naming it (every other mix: the generated test below), and the server goes on; the pendant's own
    initialize (no clientInfo), then straight to its requests: each served, nothing on stderr."""
    got, err, code = pendant_session
    assert code == 0 and err == "", err
    error = got[7]["error"]
    assert error["code"] == -32602 and "protocolVersion" in error["message"]
    assert error["data"] == {"missing": ["protocolVersion"], "malformed": []}
    assert got[1]["result"]["serverInfo"]["name"] == rmm.NAME
    assert got[1]["result"]["serverInfo"]["title"] == f'{rmm.TITLE}: "bob"'  # as the process started
    assert got[1]["result"]["protocolVersion"] == "2025-06-18"
    assert got[2]["result"]["structuredContent"]["ok"] is True
    assert got[3]["result"]["structuredContent"]["yaml"].startswith("rcan_version:")
    assert robot_served(got, 4) == 'name: "bob"'


# Each spelling of --robot, and misuses of it.
SERVED = ["--robot {}", "--robot={}", "serve --robot {}", "validate --robot {}", "render --robot {}"]
MISUSED = ["--robot", "--robot=", "--robot a --robot b", "{} --robot {}"]


@pytest.mark.parametrize("form", SERVED + MISUSED)
def test_every_form_of_robot_is_the_path_argument(form: str, capsys: pytest.CaptureFixture[str]) -> None:
    """Each spelling is what `robot-md-mcp [VERB] PATH` is; misused, one usage line."""
    args = [a.format(EXAMPLE) for a in form.split(" ")]
    if form in MISUSED:
        assert rmm.main(args, rmm.Machine(environ={})) == 2
        assert "--robot takes the manifest's path" in usage_message(capsys.readouterr().err)
        return
    command = rmm.parse_command_line(args)
    plain = [command.verb, str(EXAMPLE)] if command.said_verb else [str(EXAMPLE)]
    assert command == rmm.parse_command_line(plain) and command.path == str(EXAMPLE)
    if command.verb != "serve":
        assert rmm.main(args, rmm.Machine(environ={})) == 0, capsys.readouterr().err


# --- initialize as robot-md-pendant sends it -------------------------------------------


REQUIRED = ("protocolVersion", "capabilities")
GOOD_VALUE = {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": CLIENT_INFO}
BAD_VALUE = {"protocolVersion": 2025, "capabilities": [], "clientInfo": {"name": 1}}


@settings(max_examples=60, deadline=None)
@given(
    st.fixed_dictionaries({k: st.sampled_from(["absent", "null", "good", "bad"]) for k in GOOD_VALUE}),
    st.one_of(st.integers(-(2**53), 2**53), st.text(max_size=20)),
)
def test_every_initialize_is_served_or_named_in_its_error(shape: dict[str, str], request_id: object) -> None:
    """For every mix of present, absent, null and malformed fields: served exactly when the required
    fields are good and clientInfo is good or missing, else -32602 naming each faulty field."""
    values: dict[str, dict[str, Any]] = {
        "good": GOOD_VALUE,
        "bad": BAD_VALUE,
        "null": dict.fromkeys(GOOD_VALUE),
    }
    params = {k: values[how][k] for k, how in shape.items() if how != "absent"}
    message, answer = rmm.classify_line(json.dumps(initialize(request_id, **params)))  # type: ignore[arg-type]
    named = {k for k, how in shape.items() if how in ("absent", "null", "bad") and k in REQUIRED}
    named |= {"clientInfo.name", "clientInfo.version"} if shape["clientInfo"] == "bad" else set()
    if not named:
        assert answer is None and message is not None
        assert message.params["clientInfo"] == (
            CLIENT_INFO if shape["clientInfo"] == "good" else rmm.UNNAMED_CLIENT
        )
        return
    assert message is None and answer is not None
    assert answer["id"] == request_id and answer["error"]["code"] == -32602
    data = answer["error"]["data"]
    assert set(data["missing"]) | set(data["malformed"]) == named
    assert all(field in answer["error"]["message"] for field in named)


@pytest.mark.anyio
async def test_initialize_without_client_info_over_http() -> None:
    """The same completion on the HTTP wire (the app, in process): a session, requests served without
    `initialized`, an initialize lacking protocolVersion answered naming it."""
    async with served_in_process() as (http, url):
        answer = await http.post(url, content=json.dumps(pendant_initialize()), headers=MCP_HEADERS)
        assert answer.status_code == 200, answer.content
        assert sse_or_json(answer.content)["result"]["serverInfo"]["name"] == rmm.NAME
        session_headers = {
            **MCP_HEADERS,
            "Mcp-Session-Id": answer.headers["mcp-session-id"],
            "MCP-Protocol-Version": "2025-06-18",
        }
        call = json.dumps(request(2, "tools/call", {"name": "validate"}))
        answer = await http.post(url, content=call, headers=session_headers)
        assert answer.status_code == 200 and sse_or_json(answer.content)["result"]["structuredContent"]["ok"]
        lacking = json.dumps(initialize(3, capabilities={}))
        error = json.loads((await http.post(url, content=lacking, headers=MCP_HEADERS)).content)["error"]
        assert error["code"] == -32602 and "protocolVersion" in error["message"]


def sse_or_json(raw: bytes) -> dict:
    text = raw.decode()
    data = [line[5:].strip() for line in text.splitlines() if line.startswith("data:")]
    return json.loads(data[-1] if data else text)


# --- a ${…} the host did not expand ----------------------------------------------------


def bob_above(tmp_path: Path) -> Path:
    """tmp_path/ROBOT.md (bob) and an empty tmp_path/src below it."""
    (tmp_path / "ROBOT.md").write_text(EXAMPLE.read_text(encoding="utf-8"), encoding="utf-8")
    (tmp_path / "src").mkdir()
    return tmp_path / "src"


# Each row: the arguments, $ROBOT_MD_PATH ("ALICE": a manifest of alice), what is served ("bob" above,
# "alice", "placeholder": a folder really named ${odd} holding alice; None: exit 2), what stderr names.
UNEXPANDED = {
    "a folder": (["${CLAUDE_PROJECT_DIR}"], None, "bob", "${CLAUDE_PROJECT_DIR}"),
    "a file in one": (["${CLAUDE_PROJECT_DIR}/ROBOT.md"], None, "bob", "${CLAUDE_PROJECT_DIR}/ROBOT.md"),
    "--robot": (["--robot", "${workspaceFolder}"], None, "bob", "${workspaceFolder}"),
    "gives way to ROBOT_MD_PATH": (["${CLAUDE_PROJECT_DIR}"], "ALICE", "alice", "${CLAUDE_PROJECT_DIR}"),
    "ROBOT_MD_PATH itself": ([], "${HOME_X}", "bob", rmm.PATH_ENV),
    "a folder really so named": (["${odd}"], None, "placeholder", None),
    "and nothing to find": (["${CLAUDE_PROJECT_DIR}"], None, None, "no ROBOT.md given"),
}


@pytest.mark.parametrize("case", UNEXPANDED)
def test_every_unexpanded_path_counts_as_none(
    case: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """A ${…} that names nothing on disk is no path (one line says so), as a plugin host may pass it (serve
    finds its manifest as render does: load_manifest)."""
    args, from_environ, served, said = UNEXPANDED[case]
    here = tmp_path / "here" if served is None else bob_above(tmp_path)
    (here / "${odd}").mkdir(parents=True)
    (here / "${odd}" / "ROBOT.md").write_text(ALIAS, encoding="utf-8")
    (tmp_path / "alice.md").write_text(ALIAS, encoding="utf-8")
    monkeypatch.chdir(here)
    alice = str(tmp_path / "alice.md")
    environ = {} if from_environ is None else {rmm.PATH_ENV: from_environ.replace("ALICE", alice)}
    code = rmm.main(["render", *args], rmm.Machine(environ=environ))
    out, err = capsys.readouterr()
    assert code == (2 if served is None else 0), err
    assert ("robot_name: alice" in out) == (served in ("alice", "placeholder"))
    assert ("robot_name: bob" in out) == (served == "bob")
    if said is None:
        assert err == ""
    else:
        lines = 1 if served is not None else 2  # nothing found: then the usual line
        assert said in err and "did not expand" in err and err.count("\n") == lines, err


# --- serverInfo ------------------------------------------------------------------------


@pytest.mark.anyio
@pytest.mark.parametrize("mode", ["legacy", "auto"])
async def test_server_info_names_title_description_website_and_icon(mode: str) -> None:
    async with in_process(EXAMPLE, mode) as client:
        info, caps = client.server_info, client.server_capabilities
    assert info is not None and info.icons is not None
    assert (info.name, info.version, info.title) == (rmm.NAME, rmm.__version__, "ROBOT.md robot facts")
    assert info.description and "read-only" in info.description.lower()
    pyproject = (ROOT / "pyproject.toml").read_text(encoding="utf-8")  # the repository it names
    assert info.website_url == rmm.WEBSITE == "https://github.com/robot-md/robot-md-mcp"
    assert f'Repository = "{rmm.WEBSITE}"' in pyproject
    [icon] = info.icons
    assert (icon.mime_type, icon.sizes) == ("image/png", ["64x64"])
    prefix = "data:image/png;base64,"
    assert icon.src.startswith(prefix)
    png = base64.b64decode(icon.src[len(prefix) :], validate=True)
    # the bundle's icon at 64x64, committed as packaging/mcpb/icon-64.png, byte for byte
    assert png == (ROOT / "packaging" / "mcpb" / "icon-64.png").read_bytes()
    assert png[:8] == b"\x89PNG\r\n\x1a\n" and png[16:24] == (64).to_bytes(4, "big") * 2
    # The 2026-07-28 era has no logging/setLevel: its discover result does not offer logging.
    assert (caps.logging is not None) == (mode == "legacy")
