"""REST beside /mcp on the `--http` server: the paths of the TypeScript bridge plus every
view of VIEWS, POST /validate and /render against the command line for the whole corpus, and the
guard's refusals on the new routes, over real HTTP on 127.0.0.1 (raw requests: http.client)."""

from __future__ import annotations

import json
import threading
from pathlib import Path
from urllib.parse import quote

import jsonschema
import pytest
from conftest import EXAMPLE, corpus_files
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from serving import Served

import robot_md_mcp as m

REST_GETS = [m.REST_HEALTH_PATH, m.ROBOTS_PATH, m.OPENAPI_PATH]
REST_POSTS = [m.VALIDATE_PATH, m.RENDER_PATH]


@pytest.fixture(scope="module")
def server():
    served = Served("--http", "127.0.0.1:0")
    yield served
    assert served.stop() == 0
    assert "Traceback" not in served.stderr, served.stderr


def robot_name() -> str:
    return str(m.parse(m.read_source(EXAMPLE).text).robot_name)


def error_of(status: int, headers: dict[str, str], body: bytes) -> str:
    """The one-line message of an error answer, checking its shape: {"error": "<one line>"}."""
    assert status >= 400 and headers["content-type"] == "application/json", (status, headers)
    data = json.loads(body)
    assert list(data) == ["error"] and isinstance(data["error"], str), data
    assert data["error"] and "\n" not in data["error"], data
    return data["error"]


def in_process(capsys: pytest.CaptureFixture[str], *args: str | Path) -> tuple[int, str, str]:
    code = m.main([str(a) for a in args], m.Machine(environ={}))
    out, err = capsys.readouterr()
    return code, out, err


# --- what the paths answer -----------------------------------------------------------


def test_health_names_the_robot(server: Served) -> None:
    status, headers, body = server.request("GET", m.REST_HEALTH_PATH)
    assert status == 200 and headers["content-type"] == "application/json"
    assert json.loads(body) == {"ok": True, "robot": robot_name()}


def test_robots_lists_the_one_robot(server: Served) -> None:
    status, headers, body = server.request("GET", m.ROBOTS_PATH)
    assert status == 200 and headers["content-type"] == "application/json"
    assert json.loads(body) == {"robots": [robot_name()]}


@pytest.mark.parametrize("view", m.VIEWS, ids=lambda v: v.kind)
def test_every_view_answers_as_the_resource_does(server: Served, view: m.View) -> None:
    snap = m.ManifestFile(EXAMPLE).version()
    status, headers, body = server.request("GET", f"/robots/{quote(robot_name(), safe='')}/{view.kind}")
    assert status == 200, body
    assert headers["content-type"].split(";")[0] == view.mime_type
    if view.kind != "signature":  # checked against the server's trusted keys (none here): same text
        assert body.decode("utf-8") == snap.text(view)
    assert view.value(body.decode("utf-8")) is not None


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(name=st.text(min_size=1, max_size=40), kind=st.sampled_from([v.kind for v in m.VIEWS]))
def test_an_unknown_robot_is_404_naming_the_robot_served(server: Served, name: str, kind: str) -> None:
    if name == robot_name():
        return
    status, headers, body = server.request("GET", f"/robots/{quote(name, safe='')}/{kind}")
    message = error_of(status, headers, body)
    assert status == 404 and json.dumps(robot_name()) in message, message


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(path=st.from_regex(r"/[a-zA-Z0-9_./-]{0,30}", fullmatch=True))
def test_unknown_paths_are_404_json(server: Served, path: str) -> None:
    known = {m.MCP_PATH, m.HEALTH_PATH, *REST_GETS, *REST_POSTS}
    if path in known or path.startswith(m.ROBOTS_PATH + "/") or "/." in path or "//" in path:
        return
    status, headers, body = server.request("GET", path)
    assert status == 404, (path, status)
    error_of(status, headers, body)


@pytest.mark.parametrize(
    ("path", "method"),
    [(p, verb) for p in REST_GETS for verb in ("POST", "PUT", "DELETE", "PATCH")]
    + [(p, verb) for p in REST_POSTS for verb in ("GET", "PUT", "DELETE", "PATCH")]
    + [(f"/robots/{quote(robot_name())}/context", verb) for verb in ("POST", "DELETE")],
)
def test_a_method_a_path_does_not_take_is_405_with_allow(server: Served, path: str, method: str) -> None:
    status, headers, body = server.request(method, path, b"---\n---\n" if method != "GET" else None)
    assert status == 405, (path, method, status, body)
    error_of(status, headers, body)
    allowed = {word.strip() for word in headers["allow"].split(",")}
    assert allowed == ({"POST"} if path in REST_POSTS else {"GET", "HEAD"})


def test_openapi_lists_every_view_and_no_bearer_without_a_token(server: Served) -> None:
    status, _, body = server.request("GET", m.OPENAPI_PATH)
    document = json.loads(body)
    assert status == 200 and document["openapi"].startswith("3.1")
    robots = {p.rsplit("/", 1)[1] for p in document["paths"] if p.startswith("/robots/{name}/")}
    assert robots == {v.kind for v in m.VIEWS}
    assert {*REST_GETS, *REST_POSTS} <= set(document["paths"])
    assert "security" not in document and "securitySchemes" not in document["components"]


# --- POST /validate and /render are the command line --------------------------------


@pytest.mark.parametrize("path", [*corpus_files(), EXAMPLE], ids=lambda p: p.name)
def test_post_validate_and_render_equal_the_command_line(
    server: Served, capsys: pytest.CaptureFixture[str], path: Path
) -> None:
    data = path.read_bytes()
    _, printed, _ = in_process(capsys, "validate", "--json", path)
    status, headers, body = server.request("POST", m.VALIDATE_PATH, data, {"Content-Type": "text/markdown"})
    assert status == 200 and headers["content-type"] == "application/json"
    assert body.decode("utf-8") == printed
    jsonschema.validate(json.loads(body), m.REPORT_SCHEMA)  # what /openapi.json says it is
    code, rendered, said = in_process(capsys, "render", path)
    status, headers, body = server.request("POST", m.RENDER_PATH, data)
    if code == 0:
        assert status == 200 and headers["content-type"].startswith(m.YAML_MIME_TYPE)
        assert body.decode("utf-8") == rendered
    else:  # the same words render says, without the file's path (the text came with no name)
        message = error_of(status, headers, body)
        assert status == 422 and json.loads(printed)["errors"][0].split()[0] in message, (message, said)


def test_an_empty_body_is_400(server: Served) -> None:
    for path in REST_POSTS:
        status, headers, body = server.request("POST", path, b"")
        assert status == 400, path
        error_of(status, headers, body)


def test_a_posted_alias_bomb_gets_the_files_budget(server: Served) -> None:
    bomb = "---\na: &a [x, x, x, x, x, x, x, x, x, x]\n" + "".join(
        f"{chr(98 + i)}: &{chr(98 + i)} [*{chr(97 + i)}, *{chr(97 + i)}, *{chr(97 + i)}, *{chr(97 + i)}, "
        f"*{chr(97 + i)}, *{chr(97 + i)}, *{chr(97 + i)}, *{chr(97 + i)}, *{chr(97 + i)}, *{chr(97 + i)}]\n"
        for i in range(8)
    )
    status, _, body = server.request("POST", m.VALIDATE_PATH, (bomb + "---\n").encode())
    assert status == 200 and m.TOO_MANY_VALUES in json.loads(body)["errors"][0]
    status, headers, body = server.request("POST", m.RENDER_PATH, (bomb + "---\n").encode())
    assert status == 422 and m.TOO_MANY_VALUES in error_of(status, headers, body)


# --- the guard, on the new routes ----------------------------------------------------


def test_the_guard_refuses_on_every_new_route(server: Served) -> None:
    paths = [*REST_GETS, *REST_POSTS, f"/robots/{quote(robot_name())}/identity"]
    for path in paths:
        method = "POST" if path in REST_POSTS else "GET"
        body = EXAMPLE.read_bytes() if method == "POST" else None
        for headers, expected in (
            ({"Host": f"evil.example:{server.port}"}, 421),
            ({"Origin": "http://evil.example"}, 403),
            ({"Origin": f"http://127.0.0.1:{server.port}"}, 200),
        ):
            status, answer_headers, answer = server.request(method, path, body, headers)
            assert status == expected, (path, headers, status)
            if expected != 200:
                error_of(status, answer_headers, answer)


def test_with_a_token_everything_but_healthz_needs_it(token_server: Served, token: str) -> None:
    paths = [*REST_GETS, *REST_POSTS, f"/robots/{quote(robot_name())}/identity", "/nope"]
    for path in paths:
        method = "POST" if path in REST_POSTS else "GET"
        body = EXAMPLE.read_bytes() if method == "POST" else None
        status, headers, answer = token_server.request(method, path, body)
        assert status == 401 and "www-authenticate" in headers, path
        error_of(status, headers, answer)
        wrong = {"Authorization": "Bearer " + "x" * len(token)}
        assert token_server.request(method, path, body, wrong)[0] == 401, path
        status = token_server.request(method, path, body, {"Authorization": f"Bearer {token}"})[0]
        assert status == (404 if path == "/nope" else 200), path
    assert token_server.request("GET", m.HEALTH_PATH)[0] == 200
    document = json.loads(
        token_server.request("GET", m.OPENAPI_PATH, None, {"Authorization": f"Bearer {token}"})[2]
    )
    assert document["components"]["securitySchemes"]["bearer"] == {"type": "http", "scheme": "bearer"}
    assert document["security"] == [{"bearer": []}]


@pytest.mark.parametrize("path", REST_POSTS)
def test_a_body_over_the_limit_is_413(server: Served, path: str) -> None:
    big = b"---\n" + b"x" * m.MAX_HTTP_BODY_BYTES
    status, headers, body = server.request("POST", path, big)
    assert status == 413
    error_of(status, headers, body)
    status, _, _ = server.request("POST", path, big[: m.MAX_HTTP_BODY_BYTES])  # at the limit: served
    assert status in (200, 422)


def slow_manifest() -> bytes:
    """A manifest near the values budget: a parse takes a while (not a hostile one: it is served)."""
    items = "".join(f"  - {{id: d{i}, type: t, port: p{i}}}\n" for i in range(3000))
    return (EXAMPLE.read_text(encoding="utf-8").replace("---\n", f"---\nextra_drivers:\n{items}", 1)).encode()


def test_at_most_two_parses_at_once_then_503_with_retry_after(server: Served) -> None:
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


def test_an_unknown_view_is_404_listing_the_views(server: Served) -> None:
    status, headers, body = server.request("GET", f"/robots/{quote(robot_name())}/nope")
    message = error_of(status, headers, body)
    assert status == 404 and all(view.kind in message for view in m.VIEWS), message
