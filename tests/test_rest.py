"""REST beside /mcp on what `serve --http` serves: the paths of the TypeScript bridge plus every view of
VIEWS, POST /validate and /render against the command line for the whole corpus, and the guard's refusals,
over real HTTP to uvicorn on a thread of this process (raw requests: http.client), or to the ASGI app."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import quote, unquote

import jsonschema
import pytest
from conftest import EXAMPLE, corpus_files
from http_served import ServedOnAThread, answer_in_process, command_line, served_on_a_thread
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

import robot_md_mcp as m

REST_GETS = [m.REST_HEALTH_PATH, m.ROBOTS_PATH, m.OPENAPI_PATH]
REST_POSTS = [m.VALIDATE_PATH, m.RENDER_PATH]


@pytest.fixture(scope="module")
def server() -> Iterator[ServedOnAThread]:
    with served_on_a_thread() as served:
        yield served


def robot_name() -> str:
    return str(m.parse(m.read_source(EXAMPLE).text).robot_name)


def error_of(status: int, headers: dict[str, str], body: bytes) -> str:
    """The one-line message of an error answer, checking its shape: {"error": "<one line>"}."""
    assert status >= 400 and headers["content-type"] == "application/json", (status, headers)
    data = json.loads(body)
    assert list(data) == ["error"] and isinstance(data["error"], str), data
    assert data["error"] and "\n" not in data["error"], data
    return data["error"]


# --- what the paths answer -----------------------------------------------------------


def test_health_names_the_robot_and_robots_lists_it(server: ServedOnAThread) -> None:
    for path, said in (
        (m.HEALTH_PATH, {"status": "ok"}),
        (m.REST_HEALTH_PATH, {"ok": True, "robot": robot_name()}),
        (m.ROBOTS_PATH, {"robots": [robot_name()]}),
    ):
        status, headers, body = server.request("GET", path)
        assert (status, headers["content-type"], json.loads(body)) == (200, "application/json", said)


@pytest.mark.parametrize("view", m.VIEWS, ids=lambda v: v.kind)
def test_every_view_answers_as_the_resource_does(server: ServedOnAThread, view: m.View) -> None:
    snap = m.ManifestFile(EXAMPLE).version()
    status, headers, body = server.request("GET", f"/robots/{quote(robot_name(), safe='')}/{view.kind}")
    assert status == 200, body
    assert headers["content-type"].split(";")[0] == view.mime_type
    if view.kind != "signature":  # checked against the server's trusted keys (none here): same text
        assert body.decode("utf-8") == snap.text(view)
    assert view.value(body.decode("utf-8")) is not None


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(name=st.text(min_size=1, max_size=40), kind=st.sampled_from([*(v.kind for v in m.VIEWS), "nope"]))
@example(name=robot_name(), kind="nope")
def test_an_unknown_robot_is_404_naming_the_robot_served(
    server: ServedOnAThread, name: str, kind: str
) -> None:
    """A robot not served: 404 naming the one served; a view there is not: 404 listing the views."""
    if name == robot_name() and kind != "nope":
        return
    status, headers, body = server.request("GET", f"/robots/{quote(name, safe='')}/{kind}")
    message = error_of(status, headers, body)
    assert status == 404, message
    if kind == "nope":
        assert all(view.kind in message for view in m.VIEWS), message
    else:
        assert json.dumps(robot_name()) in message, message


def test_openapi_lists_every_view_and_a_bearer_only_with_a_token(server: ServedOnAThread) -> None:
    status, _, body = server.request("GET", m.OPENAPI_PATH)
    document = json.loads(body)
    assert status == 200 and document["openapi"].startswith("3.1")
    robots = {p.rsplit("/", 1)[1] for p in document["paths"] if p.startswith("/robots/{name}/")}
    assert robots == {v.kind for v in m.VIEWS}
    assert {*REST_GETS, *REST_POSTS} <= set(document["paths"])
    assert "security" not in document and "securitySchemes" not in document["components"]
    with_token = m.openapi_document(robot_name(), bearer=True)  # what a server with a token says
    assert with_token["components"]["securitySchemes"]["bearer"] == {"type": "http", "scheme": "bearer"}
    assert with_token["security"] == [{"bearer": []}]


# --- POST /validate and /render are the command line --------------------------------


@pytest.mark.parametrize("path", [*corpus_files(), EXAMPLE], ids=lambda p: p.name)
def test_post_validate_and_render_equal_the_command_line(
    server: ServedOnAThread, capsys: pytest.CaptureFixture[str], path: Path
) -> None:
    data = path.read_bytes()
    printed = command_line(capsys, "validate", "--json", path).stdout
    status, headers, body = server.request("POST", m.VALIDATE_PATH, data, {"Content-Type": "text/markdown"})
    assert status == 200 and headers["content-type"] == "application/json"
    assert body.decode("utf-8") == printed
    jsonschema.validate(json.loads(body), m.REPORT_SCHEMA)  # what /openapi.json says it is
    rendered = command_line(capsys, "render", path)
    status, headers, body = server.request("POST", m.RENDER_PATH, data)
    if rendered.returncode == 0:
        assert status == 200 and headers["content-type"].startswith(m.YAML_MIME_TYPE)
        assert body.decode("utf-8") == rendered.stdout
    else:  # the same words render says, without the file's path (the text came with no name)
        message = error_of(status, headers, body)
        assert status == 422 and json.loads(printed)["errors"][0].split()[0] in message, (
            message,
            rendered.stderr,
        )


ALIAS_BOMB = "---\na: &a [x, x, x, x, x, x, x, x, x, x]\n" + "".join(
    f"{chr(98 + i)}: &{chr(98 + i)} [{', '.join([f'*{chr(97 + i)}'] * 10)}]\n" for i in range(8)
)
TOO_BIG = b"---\n" + b"x" * m.MAX_HTTP_BODY_BYTES


@pytest.mark.parametrize(
    ("body", "statuses", "says"),
    [
        (b"", (400, 400), "send a ROBOT.md text"),
        (TOO_BIG, (413, 413), "larger than"),
        (TOO_BIG[: m.MAX_HTTP_BODY_BYTES], (200, 422), ""),  # at the limit: served
        ((ALIAS_BOMB + "---\n").encode(), (200, 422), m.TOO_MANY_VALUES),  # the file's budget
    ],
    ids=["empty", "over the limit", "at the limit", "alias bomb"],
)
def test_a_posted_text_gets_what_the_file_would(
    server: ServedOnAThread, body: bytes, statuses: tuple[int, int], says: str
) -> None:
    """/validate's report, or /render's one-line error, for a text the file's budgets refuse; an empty or
    oversized body the one error shape."""
    for path, expected in zip(REST_POSTS, statuses):
        status, headers, answer = server.request("POST", path, body)
        assert status == expected, (path, status)
        said = json.loads(answer)["errors"][0] if status == 200 else error_of(status, headers, answer)
        assert says in said, said


def slow_manifest() -> bytes:
    """A manifest near the values budget: a parse takes a while (not a hostile one: it is served)."""
    items = "".join(f"  - {{id: d{i}, type: t, port: p{i}}}\n" for i in range(3000))
    return (EXAMPLE.read_text(encoding="utf-8").replace("---\n", f"---\nextra_drivers:\n{items}", 1)).encode()


def test_at_most_two_parses_at_once_then_503_with_retry_after(server: ServedOnAThread) -> None:
    body = slow_manifest()
    results: list[tuple[int, dict[str, str], bytes]] = []
    start = threading.Barrier(8)

    def post() -> None:
        start.wait()
        results.append(server.request("POST", m.VALIDATE_PATH, body))

    threads = [threading.Thread(target=post) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    statuses = sorted(status for status, _, _ in results)
    assert set(statuses) <= {200, 503} and statuses.count(200) >= m.MAX_REST_PARSES, statuses
    busy = [(h, b) for s, h, b in results if s == 503]
    assert busy, statuses  # eight at once: some found both slots taken
    for headers, answer in busy:
        assert int(headers["retry-after"]) >= 1
        error_of(503, headers, answer)
    assert len({b for s, _, b in results if s == 200}) == 1
    assert server.request("POST", m.VALIDATE_PATH, body)[0] == 200  # and the slots come back


# --- every answer is ours: documented in /openapi.json, or the one error shape --------------------------

METHODS = ("GET", "HEAD", "POST", "PUT", "DELETE", "PATCH", "OPTIONS", "TRACE", "BREW")


def _open_guard() -> m.HttpGuard:
    listener = m.HttpListener(socket=None, url="", allowed_hosts=("127.0.0.1:9",), token=None)
    return m.http_app(m.ManifestFile(EXAMPLE), listener)


def _template(document: dict, path: str) -> str | None:
    """The path of /openapi.json that `path` is (a template's {name} one path segment), if any."""
    import re

    for template in document["paths"]:
        if re.fullmatch(re.escape(template).replace(re.escape("{name}"), "[^/]+"), path):
            return str(template)
    return None


def _documented(document: dict, path: str, method: str, status: int) -> bool:
    """Whether the OpenAPI document has this operation and status."""
    template = _template(document, path)
    return template is not None and str(status) in document["paths"][template].get(method.lower(), {}).get(
        "responses", {}
    )


def _ours(document: dict, method: str, path: str, answer: tuple[int, dict[str, str], bytes]) -> str | None:
    """None if the answer is ours: an operation /openapi.json documents (path, method and status), the MCP
    endpoint it names, or the one error shape; else what is wrong."""
    status, headers, body = answer
    if 300 <= status < 400:
        return f"a redirect: {status} to {headers.get('location')}"
    if _documented(document, path, method, status):
        return None
    if (
        path == m.MCP_PATH
        and method in m.MCP_METHODS
        and m.MCP_PATH in document["externalDocs"]["description"]
    ):
        return None  # JSON-RPC, as the MCP specification the document names says
    if status < 400 or headers.get("content-type") != "application/json":
        return f"neither documented nor an error: {status} {headers.get('content-type')}"
    if body or method != "HEAD":  # (uvicorn drops a body the app gives HEAD)
        data = json.loads(body)
        if list(data) != ["error"] or not isinstance(data["error"], str) or "\n" in data["error"]:
            return f"not the error shape: {body[:200]!r}"
    return None


def _spellings(path: str) -> list[str]:
    """The path as it is, and as a client may spell it instead: a trailing slash, another case, dot
    segments, doubled slashes, percent-encoded letters and slashes."""
    encoded = "".join(f"%{ord(c):02X}" if c.isalpha() else c for c in path)
    cased = [path, f"{path}/", path.upper(), path.title(), encoded, path.replace("/", "%2F")]
    return [*cased, f"/.{path}", f"{path}/.", f"{path}/..", f"/{path}", path.replace("/", "//")]


def _every_path(guard: m.HttpGuard, document: dict) -> set[str]:
    """Every path the app routes (routes added later included) and /openapi.json documents, {name} as the
    robot served and as another; and some that are neither."""
    routes = {str(getattr(route, "path", "")) for route in guard.app.routes}  # type: ignore[attr-defined]
    templates = {p.replace("{name:path}", "{name}") for p in routes | set(document["paths"])}
    named = {p.replace("{name}", n) for p in templates for n in (robot_name(), "someone-else")}
    return {p for p in named if p} | {"/", m.ROBOTS_PATH, f"{m.ROBOTS_PATH}/{robot_name()}", "/nothing"}


@pytest.mark.anyio
async def test_every_path_method_and_spelling_is_answered_by_us() -> None:
    """Every route (and one added later), every spelling (trailing slash, case, dot segments, percent
    encodings), every method (made-up ones too): each answer is an operation /openapi.json documents with
    that status, /mcp's JSON-RPC (the MCP spec it names), or {"error": <one line>}; never starlette's 307;
    a method a documented path does not take is 405 with Allow naming those it does."""
    from starlette.responses import Response
    from starlette.routing import Route

    async def later(request: object) -> Response:
        return Response(b"{}", media_type="application/json")

    guard = _open_guard()
    guard.app.routes.append(Route("/added-later", later, methods=["GET"]))  # type: ignore[attr-defined]
    async with guard.app.router.lifespan_context(guard.app):  # type: ignore[attr-defined]
        document = json.loads((await answer_in_process(guard, "GET", m.OPENAPI_PATH))[2])
        # documented as openapi_document documents any GET route: with its HEAD
        added = {"get": {"summary": "", "responses": {"200": {"description": ""}}}}
        document["paths"]["/added-later"] = m._with_head(added)
        wrong = {}
        for path in _every_path(guard, document):
            for spelled in _spellings(path):
                for method in METHODS:
                    answer = await answer_in_process(guard, method, spelled)
                    problem = _ours(document, method, unquote(spelled), answer)
                    template = _template(document, unquote(spelled))
                    if answer[0] == 405 and template and problem is None:  # Allow: what the path takes
                        allowed = {word.strip().lower() for word in answer[1]["allow"].split(",")}
                        problem = None if allowed == set(document["paths"][template]) else f"Allow {allowed}"
                    if problem is not None:
                        wrong[f"{method} {spelled}"] = problem
    assert not wrong, dict(list(wrong.items())[:10])


@pytest.mark.anyio
@settings(max_examples=8, deadline=None)
@given(paths=st.lists(st.text(st.characters(exclude_categories=["Cs"]), max_size=30), min_size=1, max_size=8))
async def test_any_path_is_answered_by_us(paths: list[str]) -> None:
    """Made-up paths of any characters, every method: the same rule; a GET of an unknown path, 404."""
    guard = _open_guard()
    async with guard.app.router.lifespan_context(guard.app):  # type: ignore[attr-defined]
        document = json.loads((await answer_in_process(guard, "GET", m.OPENAPI_PATH))[2])
        for path in ("/" + p for p in paths):
            for method in METHODS:
                answer = await answer_in_process(guard, method, quote(path, safe="/"))
                assert _ours(document, method, path, answer) is None, (method, path, answer[:2])
                if method == "GET" and path not in {*document["paths"], m.MCP_PATH}:  # unknown: 404
                    assert answer[0] == (200 if _documented(document, path, method, 200) else 404), path


@pytest.mark.anyio
@pytest.mark.parametrize("token", [None, "a-token-of-sixteen-chars"])
async def test_every_refusal_of_the_guard_is_documented_for_every_operation(token: str | None) -> None:
    """One guard in front of the whole app: its refusals (431, 421, 403, and 401 with a token, except on the
    open /healthz) on every route the app serves (/mcp, one added afterwards as a later bridge would be) and
    every operation /openapi.json lists: each answered status is in GUARD_STATUSES, and the document lists
    it for each of its operations (one table, not two)."""
    from starlette.responses import Response
    from starlette.routing import Route

    async def later(request: object) -> Response:
        return Response(b"bridged")

    listener = m.HttpListener(socket=None, url="", allowed_hosts=("127.0.0.1:9",), token=token)
    guard = m.http_app(m.ManifestFile(EXAMPLE), listener)
    guard.app.routes.append(Route("/added-later", later, methods=["PUT"]))  # type: ignore[attr-defined]
    host = (b"host", b"127.0.0.1:9")
    auth = [(b"authorization", f"Bearer {token}".encode())] if token else []
    refusals = {
        421: [(b"host", b"evil.example"), *auth],
        403: [host, *auth, (b"origin", b"http://evil.example")],
        431: [host, *auth, (b"x-padding", b"x" * m.MAX_HTTP_HEADER_BYTES)],
        **({401: [host]} if token else {}),
    }
    async with guard.app.router.lifespan_context(guard.app):  # type: ignore[attr-defined]
        document = json.loads((await answer_in_process(guard, "GET", m.OPENAPI_PATH, [host, *auth]))[2])
        operations = [(p, op) for p, item in document["paths"].items() for op in item if "{" not in p]
        assert len(operations) >= 10, operations
        routes = [
            (str(r.path).replace("{name:path}", "bob"), method.lower())
            for r in guard.app.routes  # type: ignore[attr-defined]
            for method in r.methods or m.MCP_METHODS  # /mcp: every method the SDK's app takes
        ]
        for path, method in {*operations, *routes}:
            for expected, headers in refusals.items():
                if expected == 401 and path in m.OPEN_PATHS:  # answered without the token
                    continue
                status = (await answer_in_process(guard, method.upper(), path, headers))[0]
                assert status == expected and status in m.GUARD_STATUSES, (path, method, status)
                assert (path, method) not in operations or str(status) in document["paths"][path][method][
                    "responses"
                ]
        assert (await answer_in_process(guard, "PUT", "/added-later", [host, *auth]))[0] == 200  # and served
        statuses = {s for item in document["paths"].values() for op in item.values() for s in op["responses"]}
        assert {str(s) for s in m.GUARD_STATUSES if token or s != 401} <= statuses
