"""One server, many robots (issue 36): several PATHs or `--fleet DIR`. Every robot's answers are what a
server for its file alone gives; a broken, missing or duplicate file fails only its own requests."""

from __future__ import annotations

import json
import os
import time
import warnings
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import anyio
import pytest
from agent import BOB, MINIMAL, Inbox, named, tool_calls
from conftest import EXAMPLE
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from mcp import Client, MCPError
from mcp.types import (
    ResourceListChangedNotification,
    ResourceUpdatedNotification,
    ToolListChangedNotification,
)
from serving import Served, in_process, launched
from serving import settings as server_settings
from usage import usage_message

import robot_md_mcp as rmm

# What a file of a generated fleet holds: a robot (its name), or one of the ways a file goes wrong.
BROKEN: dict[str, str | bytes] = {
    "bad YAML": "---\nmetadata: [unclosed\n---\n# x\n",
    "no robot_name": MINIMAL.replace("robot_name: test-bot", "model: m"),
    "a name no URI carries as is": MINIMAL.replace("robot_name: test-bot", 'robot_name: "my bot/1"'),
    "not UTF-8": b"---\nmetadata:\n  robot_name: \xff\n---\n",
}


def write(path: Path, content: str | bytes) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(content if isinstance(content, bytes) else content.encode("utf-8"))
    return path


def started(root: Path) -> rmm.Fleet:
    """The fleet of the folder `root`, its files read as `serve --fleet` reads them at start."""
    fleet = rmm.Fleet([], root)
    fleet.start()
    return fleet


async def answers(client: Any, robot: str | None, uris: list[str], asked: list[int]) -> list[Any]:
    """The `asked` tool calls', every view's and prompt's answer (with `robot` for a fleet), errors as
    their text."""
    extra = {} if robot is None else {"robot": robot}
    found: list[Any] = []
    for name, arguments in (tool_calls()[i] for i in asked):
        result = await client.call_tool(name, {**extra, **arguments})
        found.append((name, result.is_error, [c.text for c in result.content], result.structured_content))
    for uri in uris:
        found.append(await outcome(client.read_resource(uri)))
    for prompt in rmm.PROMPTS.values():
        arguments = {name: "arm.pick" for name, _ in prompt.arguments}
        found.append(await outcome(client.get_prompt(prompt.name, {**extra, **arguments})))
    return found


async def outcome(request: Any) -> Any:
    try:
        return (await request).model_dump(exclude={"meta"})
    except MCPError as e:
        return ("error", e.error.code, e.error.message)


def asked_of(server: Any, robots: Mapping[str, tuple[str | None, Path]], asked: list[int]) -> dict[str, Any]:
    """Each robot's answers from `server` (a path: a single-robot server), by the name shown for it: the
    `robot` argument that names it (None for a single-robot server), and its file."""

    async def ask() -> dict[str, list[Any]]:
        async with in_process(server, "legacy") as client:
            return {
                shown: await answers(client, robot, uris_of(path), asked)
                for shown, (robot, path) in robots.items()
            }

    return json.loads(json.dumps(anyio.run(ask), default=str))


def alone(path: Path, shown: str, asked: list[int]) -> list[Any]:
    """A single-robot server's answers for `path`, errors naming the file as a fleet names it."""
    return json.loads(
        json.dumps(asked_of(path, {shown: (None, path)}, asked)[shown]).replace(str(path), shown)
    )


def uris_of(path: Path) -> list[str]:
    try:
        name = rmm.ManifestFile(path).version().manifest.robot_name
    except rmm.ManifestError:
        return []
    return [rmm.resource_uri(name, view.kind) for view in rmm.VIEWS] if name else []


FILES = st.one_of(
    st.sampled_from(sorted(BROKEN)),
    st.from_regex(r"[a-z][a-z0-9-]{0,8}", fullmatch=True).map(lambda name: f"robot:{name}"),
)


# Which tool calls an example makes (the SDK's client checks each result against its outputSchema,
# 40 ms a call): a few per example, every one over the examples.
ASKED = st.lists(st.integers(0, len(tool_calls()) - 1), min_size=1, max_size=5, unique=True)


@settings(max_examples=5, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(files=st.lists(FILES, min_size=1, max_size=3), flat=st.booleans(), rename=st.booleans(), asked=ASKED)
def test_every_robot_answers_as_its_own_server_would(
    tmp_path_factory: Any, files: list[str], flat: bool, rename: bool, asked: list[int]
) -> None:
    """A generated fleet (sizes, names, broken files of every kind, a robot renamed while served;
    names of at most 9 characters): each robot's answers equal a single-robot server's for its file,
    a broken one's its own error, whatever the others are."""
    root = tmp_path_factory.mktemp("fleet")
    names = [f.removeprefix("robot:") for f in files if f.startswith("robot:")]
    for i, what in enumerate(files):
        content = named(what.removeprefix("robot:")) if what.startswith("robot:") else BROKEN[what]
        write(root / (f"f{i}.ROBOT.md" if flat else f"f{i}/ROBOT.md"), content)
    fleet = rmm.Fleet([], root)
    if len(set(names)) < len(names):
        with pytest.raises(rmm.ManifestError, match="two manifests name the robot"):
            fleet.start()
        return
    fleet.start()
    assert sorted(r.shown for r in fleet.robots.values()) == sorted(
        os.path.relpath(p, root) for p in rmm.fleet_paths(root)
    )
    serving = [r for r in fleet.robots.values() if r.error is None]
    if rename and serving:
        write(serving[0].file.path, named("renamed-robot"))
        assert fleet.look().relisted and "renamed-robot" in fleet.robots
    robots = {robot.shown: (name, robot.file.path) for name, robot in fleet.robots.items()}
    served = asked_of(rmm.build_server(fleet), robots, asked)
    for robot in fleet.robots.values():
        if robot.refused:  # its name cannot be a fleet's: every request gets that one line
            line = robot.error.for_people(robot.shown)  # type: ignore[union-attr]
            tools, prompts = len(asked), len(rmm.PROMPTS)
            said = served[robot.shown][:tools] + served[robot.shown][-prompts:]
            escaped = json.dumps(line, ensure_ascii=False)[1:-1]
            assert all(escaped in json.dumps(answer, ensure_ascii=False) for answer in said), robot.shown
            reads = served[robot.shown][tools:-prompts]  # its URIs are no robot's here
            assert all(answer[:2] == ["error", -32602] for answer in reads), robot.shown
            continue
        assert served[robot.shown] == alone(robot.file.path, robot.shown, asked), robot.shown


@settings(max_examples=8, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(broken=st.sampled_from(sorted(BROKEN)), bad_first=st.booleans(), folder=st.booleans())
def test_a_file_that_names_no_robot_takes_no_robots_name(
    tmp_path_factory: Any, broken: str, bad_first: bool, folder: bool
) -> None:
    """A broken or refused file is served under its path; a robot named as that path (a.ROBOT.md) is
    served all the same, whichever file comes first, in a --fleet folder or as PATHs."""
    root = tmp_path_factory.mktemp("fleet")
    bad, good = ("a.ROBOT.md", "b.ROBOT.md") if bad_first else ("b.ROBOT.md", "a.ROBOT.md")
    paths = [write(root / bad, BROKEN[broken]), write(root / good, named(bad))]
    fleet = rmm.Fleet([], root) if folder else rmm.Fleet(paths)
    fleet.start()
    assert fleet.robots[bad].error is None and fleet.robots[bad].file.path == root / good
    assert [r.shown for r in fleet.robots.values() if r.error] == [bad]


@settings(max_examples=6, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(asked=ASKED, swap=st.booleans())
def test_a_robot_renamed_before_the_next_look_gets_no_other_robots_answers(
    tmp_path_factory: Any, asked: list[int], swap: bool
) -> None:
    """A file renamed after a look (or two files swapped), before the next: every tool call, read and
    prompt for the robot as listed fails with one line saying what its file names now, never answers
    about the robot it names now."""
    root = tmp_path_factory.mktemp("fleet")
    a, b = write(root / "a.ROBOT.md", named("arm", BOB)), write(root / "b.ROBOT.md", named("cart"))
    fleet = started(root)
    write(a, named("cart" if swap else "rover"))
    if swap:
        write(b, named("arm", BOB))

    async def ask() -> list[Any]:
        async with in_process(rmm.build_server(fleet), "legacy") as client:
            return await answers(client, "arm", [rmm.resource_uri("arm", v.kind) for v in rmm.VIEWS], asked)

    now = f"names the robot {rmm.quoted('cart' if swap else 'rover')} now"
    assert all(now in str(answer) for answer in anyio.run(ask))


@pytest.mark.anyio
async def test_a_duplicate_appearing_later_is_refused_and_the_first_keeps_serving(tmp_path: Path) -> None:
    write(tmp_path / "a" / "ROBOT.md", named("rover"))
    b = write(tmp_path / "b" / "ROBOT.md", named("arm"))
    fleet = started(tmp_path)
    write(b, named("rover") + "\n")
    found = fleet.look()
    assert found.relisted
    assert [line for line in found.problems if "two manifests name the robot" in line] == [
        f'robot-md-mcp: two manifests name the robot "rover": a{os.sep}ROBOT.md and b{os.sep}ROBOT.md; '
        f"this one is not served until one of them is renamed (b{os.sep}ROBOT.md); "
        f"requests for b{os.sep}ROBOT.md fail until it is fixed"
    ]
    assert fleet.robots["rover"].shown == f"a{os.sep}ROBOT.md" and not fleet.robots["rover"].refused
    assert fleet.robots[f"b{os.sep}ROBOT.md"].refused
    assert fleet.look().problems == []  # said once
    async with in_process(rmm.build_server(fleet), "legacy") as client:
        refused = await client.call_tool("brief", {"robot": f"b{os.sep}ROBOT.md"})
        assert refused.is_error and "two manifests name the robot" in refused.content[0].text
        first = await client.call_tool("brief", {"robot": "rover"})
        assert not first.is_error and first.structured_content["name"] == "rover"


def test_renamed_added_and_removed_robots_relist(tmp_path: Path) -> None:
    a = write(tmp_path / "a.ROBOT.md", named("rover"))
    fleet = started(tmp_path)
    assert fleet.look() == rmm.FleetChanges()  # nothing changed: nothing read again
    write(a, named("rover2"))
    assert fleet.look().relisted and list(fleet.robots) == ["rover2"]
    write(tmp_path / "b.ROBOT.md", named("cam"))
    assert fleet.look().relisted and list(fleet.robots) == ["rover2", "cam"]
    write(a, named("rover2") + "\nmore prose\n")
    edited = fleet.look()
    assert not edited.relisted and "robot-md://rover2/context" in edited.updated
    a.unlink()
    gone = fleet.look()
    assert gone.relisted and list(fleet.robots) == ["cam"]


def test_a_broken_file_keeps_its_name_and_fails_only_its_requests(tmp_path: Path) -> None:
    a = write(tmp_path / "a.ROBOT.md", named("rover"))
    write(tmp_path / "b.ROBOT.md", named("cam"))
    fleet = started(tmp_path)
    write(a, "---\nmetadata: [\n---\n")
    found = fleet.look()
    assert not found.relisted and list(fleet.robots) == ["rover", "cam"]
    assert len(found.problems) == 1 and "(a.ROBOT.md)" in found.problems[0]
    row = {r["robot"]: r for r in fleet.view()["robots"]}
    assert row["rover"]["validity"] == "not served" and "a.ROBOT.md" in row["rover"]["problem"]
    assert row["cam"]["validity"] in ("checking", "invalid", "valid") and row["cam"]["problem"] is None


def test_the_fleet_view_says_checking_until_checked_and_finds_a_capability(tmp_path: Path) -> None:
    write(tmp_path / "arm" / "ROBOT.md", named("arm", BOB))
    write(tmp_path / "cart" / "ROBOT.md", named("cart"))
    fleet = started(tmp_path)
    assert {r["validity"] for r in fleet.view()["robots"]} == {"checking"}  # never "valid" unchecked
    fleet.check()
    assert {r["validity"] for r in fleet.view()["robots"]} <= {"valid", "invalid"}
    declared = rmm.capability_names(fleet.robots["arm"].snap.manifest.frontmatter)[0]  # type: ignore[union-attr]
    assert [r["robot"] for r in fleet.view(declared)["robots"]] == ["arm"]
    assert fleet.view("no.such.capability")["robots"] == []


@pytest.mark.parametrize(
    "make, words",
    [
        (lambda root: os.symlink(root / "loop", root / "loop"), "no manifest in this folder"),
        (lambda root: [write(root / f"r{i}.ROBOT.md", "") for i in range(6)], "more than 5 entries"),
    ],
    ids=["symlink loop", "too many"],  # (an empty folder: test_a_fleet_that_cannot_start_is_one_line)
)
def test_a_folder_that_cannot_be_a_fleet_is_one_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, make: Any, words: str
) -> None:
    monkeypatch.setattr(rmm, "MAX_FLEET_FILES", 5)  # the bound as 5: the same code as at 10,000
    make(tmp_path)
    with pytest.raises(rmm.ManifestError) as caught:
        rmm.fleet_paths(tmp_path)
    assert words in caught.value.one_line() and "\n" not in caught.value.one_line()


def test_an_unreadable_file_is_its_robots_own_error(tmp_path: Path) -> None:
    write(tmp_path / "a.ROBOT.md", named("rover"))
    os.symlink(tmp_path / "nowhere", tmp_path / "b.ROBOT.md")  # dangling: cannot be read
    (tmp_path / "c").mkdir()
    os.symlink(tmp_path / "c" / "ROBOT.md", tmp_path / "c" / "ROBOT.md")  # a loop of one
    fleet = started(tmp_path)
    assert fleet.robots["rover"].error is None
    errors = {r.shown: r.error.for_people(r.shown) for r in fleet.robots.values() if r.error}
    assert set(errors) == {"b.ROBOT.md", f"c{os.sep}ROBOT.md"}
    assert all("\n" not in line for line in errors.values())


def test_tools_list_stays_small_for_a_fleet(tmp_path: Path) -> None:
    """tools/list of 20 robots within 1.3 times one robot's bytes; past MAX_ENUM_ROBOTS (the enum
    dropped, so any bigger fleet is the same size) within twice."""

    async def size(server: Any) -> int:
        async with in_process(server, "legacy") as client:
            tools = (await client.list_tools()).tools
            return len(json.dumps([t.model_dump(by_alias=True, exclude_none=True) for t in tools]))

    one = anyio.run(size, rmm.build_server(rmm.ManifestFile(write(tmp_path / "one.md", named("robot-0001")))))
    for count, bound in ((20, 1.3), (rmm.MAX_ENUM_ROBOTS, 2.0), (rmm.MAX_ENUM_ROBOTS + 1, 2.0)):
        root = tmp_path / f"fleet{count}"
        for i in range(count):
            write(root / f"r{i}.ROBOT.md", named(f"robot-{i:04}"))
        fleet = started(root)
        assert anyio.run(size, rmm.build_server(fleet)) <= bound * one, count


@pytest.mark.anyio
async def test_a_robot_and_its_errors_name_the_file_relative_to_the_fleet(tmp_path: Path) -> None:
    a = write(tmp_path / "lab" / "rover" / "ROBOT.md", named("rover"))
    fleet = started(tmp_path / "lab")
    a.unlink()
    async with in_process(rmm.build_server(fleet), "legacy") as client:
        said = (await client.call_tool("brief", {"robot": "rover"})).content[0].text
    assert f"(rover{os.sep}ROBOT.md)" in said and str(tmp_path) not in said


# --- the command line ------------------------------------------------------------------------


@pytest.mark.parametrize(
    "args, code, words",
    [
        (["--fleet", "EMPTY"], 1, "no manifest in this folder"),
        (["--fleet", "EMPTY", "x.md"], 2, "not both"),
        (["ONE", "missing.md"], 1, "file not found"),
        (["ONE", "TWIN"], 1, 'two manifests name the robot "rover": one.md and twin.md'),
    ],
)
def test_a_fleet_that_cannot_start_is_one_line(
    tmp_path: Path, capsys: Any, args: list[str], code: int, words: str
) -> None:
    (tmp_path / "EMPTY").mkdir()
    files = {"EMPTY": tmp_path / "EMPTY", "missing.md": tmp_path / "missing.md"}
    files |= {name: write(tmp_path / f"{name.lower()}.md", named("rover")) for name in ("ONE", "TWIN")}
    argv = [str(files.get(a, a)) for a in args]
    assert rmm.main(argv) == code
    err = capsys.readouterr().err
    assert words in (usage_message(err) if code == 2 else err) and err.count("\n") == code


# --- a host's view: the SDK's Client over real stdio and HTTP (heavy: processes) ---------------------


async def every_robot_answers(client: Any, names: list[str]) -> None:
    """Eight tools, the enum of every name; each robot's brief, context and one prompt are its own."""
    tools = {t.name: t for t in (await client.list_tools()).tools}
    assert sorted(tools) == sorted([*rmm.TOOLS, "fleet"])
    assert tools["brief"].input_schema["properties"]["robot"]["enum"] == names
    for name in names:
        brief = await client.call_tool("brief", {"robot": name})
        assert not brief.is_error and brief.structured_content["name"] == name
        context = (await client.read_resource(f"robot-md://{name}/context")).contents[0].text
        assert context.startswith(f'# Robot briefing: "{name}"')
        prompt = await client.get_prompt("brief-me", {"robot": name})
        assert f'"{name}"' in prompt.messages[0].content.text
    fleet = (await client.call_tool("fleet", {})).structured_content
    assert [row["robot"] for row in fleet["robots"]] == names


@pytest.mark.heavy
@pytest.mark.anyio
async def test_a_fleet_over_stdio_relists_a_renamed_robot(tmp_path: Path) -> None:
    a = write(tmp_path / "lab" / "arm" / "ROBOT.md", named("arm", BOB))
    write(tmp_path / "lab" / "cart.ROBOT.md", named("cart"))
    inbox = Inbox()
    env = server_settings(poll_seconds=0.05)
    async with launched("--fleet", tmp_path / "lab", env=env, message_handler=inbox) as client:
        assert client.server_info.title == 'ROBOT.md robot facts: the fleet "lab"'
        await every_robot_answers(client, ["arm", "cart"])
        since = time.monotonic()
        write(a, named("arm2", BOB))
        await inbox.next(ToolListChangedNotification, since)
        await inbox.next(ResourceListChangedNotification, since)
        await every_robot_answers(client, ["arm2", "cart"])


@pytest.mark.heavy
@pytest.mark.anyio
async def test_a_fleet_over_http_and_its_rest_paths(tmp_path: Path) -> None:
    a = write(tmp_path / "arm.md", named("arm", BOB))
    b = write(tmp_path / "cart.md", named("cart"))
    served = Served(str(b), "--http", "127.0.0.1:0", path=a)
    try:
        for mode in ("legacy", "auto"):
            async with Client(served.url, mode=mode) as client:
                await every_robot_answers(client, ["arm", "cart"])
        status, _, body = served.request("GET", "/robots")
        assert (status, json.loads(body)) == (200, {"robots": ["arm", "cart"]})
        status, _, body = served.request("GET", "/robots/cart/identity")
        assert status == 200 and body.startswith(b'name: "cart"')
        status, _, body = served.request("GET", "/robots/nobody/identity")
        assert status == 404 and b"/robots lists the 2 robots served" in body
    finally:
        served.stop()


@pytest.mark.anyio
async def test_a_renamed_robot_is_announced_to_a_connected_client(tmp_path: Path) -> None:
    """In-process, the fleet's own poller: a rename sends tools and resources list_changed, and the
    tools' enum then names the robot as renamed."""
    a = write(tmp_path / "a.ROBOT.md", named("rover"))
    write(tmp_path / "b.ROBOT.md", named("cam"))
    fleet = started(tmp_path)
    inbox = Inbox()
    server = rmm.build_server(fleet, poll_seconds=0.02)
    async with Client(server, mode="legacy", message_handler=inbox) as client:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # subscribe is deprecated at 2026-07-28, current before it
            await client.subscribe_resource(rmm.FLEET_URI)
        since = time.monotonic()
        write(a, named("rover2"))
        await inbox.next(ToolListChangedNotification, since)
        await inbox.next(ResourceListChangedNotification, since)
        await inbox.next(ResourceUpdatedNotification, since, rmm.FLEET_URI)
        enum = (await client.list_tools()).tools[0].input_schema["properties"]["robot"]["enum"]
        assert enum == ["rover2", "cam"]


@pytest.mark.anyio
async def test_the_floor_reads_the_robot_the_robot_argument_names(tmp_path: Path) -> None:
    """check_action's computed floor in a fleet is the named robot's: 2 m/s is past the rover's declared
    0.5 m/s (BLOCKED) and compared with nothing on the arm, which declares no linear speed."""
    examples = EXAMPLE.parent
    for name in ("bob.ROBOT.md", "rover.ROBOT.md"):
        write(tmp_path / name, (examples / name).read_text(encoding="utf-8"))
    fleet = started(tmp_path)
    verdicts = {}
    async with Client(rmm.build_server(fleet)) as client:
        for robot in sorted(fleet.robots):
            args = {"robot": robot, "action": "drive forward at 2 m/s"}
            result = await client.call_tool("check_action", args)
            assert result.structured_content is not None
            verdicts[robot] = result.structured_content["floor"]["verdict"]
    alone = {}
    for name in ("bob.ROBOT.md", "rover.ROBOT.md"):
        manifest = rmm.parse((examples / name).read_text(encoding="utf-8"))
        alone[manifest.robot_name] = rmm.safety_floor(manifest, "drive forward at 2 m/s").verdict
    assert verdicts == alone
    assert alone["rover1"] == "BLOCKED" and alone["bob"] != "BLOCKED"
