"""install for many robots: the entry's default name comes from the robot (robot-md-ROBOT_NAME), so a
second robot never replaces the first; an entry of ours that already serves the same manifest keeps its
name; a fleet's entry (several PATHs, --fleet DIR); Claude Desktop's bridge to a server over HTTP (npm's
mcp-remote, the token in the entry's env, never in argv, the config private). In this process."""

from __future__ import annotations

import json
import re
import secrets
import stat
import sys
from pathlib import Path
from typing import Any

import pytest
from conftest import EXAMPLE, ROOT, posix_only
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from installed import FOREIGN_ENTRY, KEY, MODULE, OURS, Installer, installer, write_json

import robot_md_mcp as rmm

BOB = EXAMPLE.read_text(encoding="utf-8")
FILE_CLIENTS = ["claude-desktop", "cursor", "vscode"]
SETTINGS = settings(
    max_examples=12, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)


@pytest.fixture
def install(tmp_path: Path, monkeypatch, capsys) -> Installer:
    return installer(tmp_path, monkeypatch, capsys)


def robot(folder: Path, name: str, file: str = "ROBOT.md") -> Path:
    """bob's manifest as robot `name`, at folder/file."""
    path = folder / file
    path.parent.mkdir(parents=True, exist_ok=True)
    quoted = json.dumps(name, ensure_ascii=False)  # YAML reads JSON's strings
    path.write_text(BOB.replace("robot_name: bob", f"robot_name: {quoted}", 1), encoding="utf-8")
    return path


NAMES = st.text(
    st.characters(codec="utf-8", exclude_categories=["Cs", "Cc", "Cf", "Co", "Cn", "Zl", "Zp"]),
    min_size=1,
    max_size=50,
)


@given(st.lists(NAMES, min_size=2, max_size=4, unique=True), st.booleans(), st.sampled_from(FILE_CLIENTS))
@SETTINGS
def test_a_second_robot_never_replaces_the_first(
    install: Installer, tmp_path_factory: pytest.TempPathFactory, names: list[str], shadow: bool, client: str
) -> None:
    """Robots of any name (one named as another's entry is: Bob-s-arm-48df47 beside Bob's arm), each
    installed with no --name: an entry each, named robot-md-PART where PART is the name when it is already
    a client's name, else a cleaned one with a digest; installing each again changes nothing."""
    names = list(dict.fromkeys([*names, rmm._name_part(names[0])] if shadow else names))
    install.file(client).unlink(missing_ok=True)
    folder = tmp_path_factory.mktemp("robots")
    paths = [robot(folder / f"r{i}", name) for i, name in enumerate(names)]
    for path in paths:
        done = install(client, str(path))
        assert done.code == 0, done.err
    entries = install.servers(client)
    assert len(entries) == len(names)
    for name, path in zip(names, paths, strict=True):
        entry_name = f"robot-md-{rmm._name_part(name)}"
        assert entries[entry_name]["args"][-1] == str(path)
        assert re.fullmatch(r"robot-md-[A-Za-z0-9][A-Za-z0-9_-]*", entry_name) and len(entry_name) <= 39
        if re.fullmatch(r"[A-Za-z0-9][A-Za-z0-9_-]{0,29}", name) and not re.search(
            r"(^|-)[0-9a-f]{6}$", name
        ):
            assert entry_name == f"robot-md-{name}"
        assert "already in" in install(client, str(path)).out


# An entry of ours by every way of running, serving EXAMPLE (OURS's serve "/r").
SERVING_BOB = {
    way: {**e, "args": [*(a for a in e["args"] if a not in ("/r", "/r/ROBOT.md", "C:\\r")), str(EXAMPLE)]}
    for way, e in OURS.items()
}


@given(
    st.dictionaries(
        st.text(max_size=10).filter(lambda k: not k.startswith("robot-md")), FOREIGN_ENTRY, max_size=4
    ),
    st.sampled_from(list(SERVING_BOB)),
    st.sampled_from(["robot-md", "mine", "robot-md-old"]),
    st.sampled_from(FILE_CLIENTS),
)
@SETTINGS
def test_a_robot_installed_under_any_name_is_updated_there_never_added_twice(
    install: Installer, others: dict[str, Any], way: str, old_name: str, client: str
) -> None:
    """robot-md (the name every earlier install gave), or a name of the user's: reinstalling the robot it
    serves updates it in place, whatever else the config holds; the user's keys on it stay."""
    path = install.file(client)
    path.unlink(missing_ok=True)
    entry = {**SERVING_BOB[way], "env": {"MINE": "1"}}
    write_json(path, {KEY[client]: {**others, old_name: entry}})
    done = install(client, str(EXAMPLE))
    assert done.code == 0, done.err
    after = install.servers(client)
    assert list(after) == [*others, old_name]
    assert after[old_name]["args"][-1] == str(EXAMPLE) and after[old_name]["env"] == {"MINE": "1"}
    assert done.out.startswith(f'robot-md-mcp: updated "{old_name}"') or "already in" in done.out


def test_an_entry_of_ours_for_another_manifest_is_left_and_a_new_one_added(
    install: Installer, tmp_path: Path
) -> None:
    """robot-md serving another robot's file stays; the one serving several files (a fleet) too."""
    path = install.file("cursor")
    rover = robot(tmp_path, "rover")
    old = {"command": "robot-md-mcp", "args": [str(rover)]}
    fleet = {"command": "robot-md-mcp", "args": [str(rover), str(EXAMPLE)]}
    write_json(path, {"mcpServers": {"robot-md": old, "robot-md-fleet": fleet}})
    assert install("cursor", str(EXAMPLE)).code == 0
    assert install.servers("cursor") == {
        "robot-md": old,
        "robot-md-fleet": fleet,
        "robot-md-bob": json_entry(),
    }


def json_entry(*targets: str) -> dict[str, Any]:
    return {"command": sys.executable, "args": [MODULE, *(targets or (str(EXAMPLE),))]}


def test_a_fleet_entry_from_paths_or_a_folder(install: Installer, tmp_path: Path) -> None:
    fleet = tmp_path / "lab 1"
    arm, cam = robot(fleet / "arm", "arm"), robot(fleet, "cam", "cam.ROBOT.md")
    done = install("cursor", str(arm), str(cam))
    assert done.code == 0 and 'added "robot-md-fleet"' in done.out, done
    done = install("cursor", "--fleet", str(fleet))
    assert done.code == 0 and 'added "robot-md-fleet-lab-1-' in done.out, done
    entries = install.servers("cursor")
    name = f"robot-md-fleet-{rmm._name_part('lab 1')}"
    assert entries == {
        "robot-md-fleet": json_entry(str(arm), str(cam)),
        name: json_entry("--fleet", str(fleet)),
    }
    for args in ([str(arm), str(cam)], ["--fleet", str(fleet)]):
        assert "already in" in install("cursor", *args).out
    assert install("cursor", "--fleet", str(fleet), verb="uninstall").code == 0
    assert install("cursor", str(arm), str(cam), verb="uninstall").code == 0
    assert install.servers("cursor") == {}
    empty = tmp_path / "empty"
    empty.mkdir()
    done = install("cursor", "--fleet", str(empty))
    said = f"no manifest in this folder (a fleet is {empty}/*/ROBOT.md or *.ROBOT.md)"
    assert done.code == 1 and done.err == f"robot-md-mcp: {said} ({empty})\n", done


@given(st.sampled_from(["copy", "symlink"]), st.integers(0, 2), st.sampled_from(FILE_CLIENTS))
@SETTINGS
def test_paths_that_name_one_robot_twice_are_refused_at_install(
    install: Installer, tmp_path_factory: pytest.TempPathFactory, how: str, at: int, client: str
) -> None:
    """PATHs of which two name one robot (a copy, a link; anywhere among them): serve refuses them at
    start, so install refuses them now: one line, nothing written."""
    folder = tmp_path_factory.mktemp("twice")
    paths = [robot(folder / name, name) for name in ("arm", "cam")]
    again = folder / "again" / "ROBOT.md"
    again.parent.mkdir()
    again.write_bytes(paths[0].read_bytes()) if how == "copy" else again.symlink_to(paths[0])
    paths.insert(at, again)
    install.file(client).unlink(missing_ok=True)
    done = install(client, *map(str, paths))
    assert done.code == 1 and done.err.count("\n") == 1 and 'name the robot "arm"' in done.err, done
    assert not install.file(client).exists()


@given(
    st.sampled_from(FILE_CLIENTS),
    st.sampled_from(["ROBOT.md", "arm.yaml", "arm"]),
    st.randoms(use_true_random=False),
)
@settings(SETTINGS, max_examples=6)
def test_a_robot_named_as_a_fleet_or_a_host_takes_no_entry_of_another_kind(
    install: Installer, tmp_path_factory: pytest.TempPathFactory, client: str, file: str, random: Any
) -> None:
    """A robot named fleet (fleet-lab, pi) and the fleet of PATHs (--fleet lab, the bridge to pi) want the
    same name, and a fleet's last PATH (named anything) is a robot too: installed in any order, an entry
    each (the later one's name -2), each found again by install (nothing changed) and by uninstall, which
    removes it alone."""
    folder = tmp_path_factory.mktemp("kinds")
    lab = folder / "lab"
    arm, cam = robot(folder / "arm", "arm", file), robot(folder / "cam", "cam", file)
    robot(lab / "arm", "arm")
    things = [
        [str(robot(folder / "r1", "fleet"))],
        [str(arm), str(cam)],
        [str(cam)],
        [str(robot(folder / "r2", "fleet-lab"))],
        ["--fleet", str(lab)],
    ]
    if client == "claude-desktop":
        secret, _ = token_file(folder)
        things += [[str(robot(folder / "r3", "pi"))], ["http://pi:8765/mcp", "--token-file", str(secret)]]
    install.file(client).unlink(missing_ok=True)
    random.shuffle(things)
    for thing in things:
        assert install(client, *thing).code == 0
    assert len(install.servers(client)) == len(things)
    for thing in things:
        done = install(client, *thing)
        assert done.code == 0 and "nothing changed" in done.out, (thing, done)
    random.shuffle(things)
    for gone, thing in enumerate(things, 1):
        done = install(client, *thing[:1] if thing[0].startswith("http") else thing, verb="uninstall")
        left = install.servers(client)
        assert done.code == 0 and len(left) == len(things) - gone, (thing, done, left)


# --- the bridge to a server over HTTP ------------------------------------------------


def token_file(folder: Path, mode: int = 0o600) -> tuple[Path, str]:
    token = "tok-" + secrets.token_urlsafe(24)
    path = folder / "token"
    path.write_text(token + "\n", encoding="utf-8")
    path.chmod(mode)
    return path, token


URLS = st.builds(
    "{}://{}{}/mcp".format,
    st.sampled_from(["http", "https"]),
    st.sampled_from(["127.0.0.1", "localhost", "bob-pi.local", "10.0.0.7", "[::1]", "robot.example.org"]),
    st.sampled_from(["", ":8765", ":443"]),
)


@posix_only
@given(
    URLS,
    st.dictionaries(st.text(max_size=10), FOREIGN_ENTRY, max_size=3),
    st.sampled_from([0o644, 0o600, None]),
)
@SETTINGS
def test_the_bridge_entry_keeps_the_token_out_of_argv_and_the_file_private(
    install: Installer,
    tmp_path_factory: pytest.TempPathFactory,
    url: str,
    others: dict[str, Any],
    mode: int | None,
) -> None:
    folder = tmp_path_factory.mktemp("bridge")
    secret, token = token_file(folder)
    path = install.file("claude-desktop")
    path.unlink(missing_ok=True)
    if mode is None:
        others = {}
    else:
        write_json(path, {"mcpServers": others})
        path.chmod(mode)
    done = install("claude-desktop", url, "--token-file", str(secret))
    assert done.code == 0, done.err
    assert token not in done.out + done.err
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert ("made private: mode 0600" in done.out) == (mode == 0o644)
    entries = install.servers("claude-desktop")
    name = next(n for n in entries if n not in others)
    entry = entries[name]
    assert rmm._our_bridge(entry) and name.startswith("robot-md-")
    plain = url.startswith("http:") and not re.match(r"http://(127\.0\.0\.1|localhost)[:/]", url)
    assert entry["command"] == "npx"
    header = f"Authorization:${{{rmm.BRIDGE_AUTH_ENV}}}"
    assert entry["args"] == ["-y", rmm.MCP_REMOTE, url, "--header", header, *["--allow-http"] * plain]
    assert all(token not in a and " " not in a for a in entry["args"])
    assert entry["env"][rmm.BRIDGE_AUTH_ENV] == f"Bearer {token}"
    assert ("plain HTTP" in done.err) == plain
    backup = path.with_name(path.name + ".bak")
    assert not backup.exists() or stat.S_IMODE(backup.stat().st_mode) == 0o600
    again = install("claude-desktop", url, "--token-file", str(secret))
    assert again.code == 0 and "already in" in again.out
    dry = install("claude-desktop", url, "--token-file", str(secret), "--dry-run", verb="install")
    assert token not in dry.out
    gone = install("claude-desktop", url, verb="uninstall")
    assert gone.code == 0 and install.servers("claude-desktop") == others


@posix_only
def test_the_bridge_refuses_what_would_leak_or_mislead(install: Installer, tmp_path: Path) -> None:
    path = install.file("claude-desktop")
    readable, token = token_file(tmp_path, 0o644)
    done = install("claude-desktop", "https://pi.local/mcp", "--token-file", str(readable))
    assert (
        done.code == 1 and done.err.count("\n") == 1 and "can be read or changed by other users" in done.err
    )
    assert token not in done.err and not path.exists()
    secret, token = token_file(tmp_path)
    foreign = {"command": "npx", "args": ["-y", "mcp-remote", "https://pi.local/mcp"]}  # not our marker
    name = f"robot-md-{rmm._name_part('pi.local')}"
    write_json(path, {"mcpServers": {name: foreign}})
    done = install("claude-desktop", "https://pi.local/mcp", "--token-file", str(secret))
    assert done.code == 1 and "not robot-md-mcp's" in done.err
    path.write_text('{"mcpServers": {}, // mine\n}', encoding="utf-8")
    done = install("claude-desktop", "https://pi.local/mcp", "--token-file", str(secret))
    assert done.code == 1 and token not in done.out and "<the token in --token-file>" in done.out


@given(
    URLS,
    st.booleans(),
    st.fixed_dictionaries(
        {}, optional={"command": st.sampled_from(["node", "/usr/bin/npx"]), "disabled": st.just(True)}
    ),
    st.lists(st.text(max_size=10), max_size=3),
)
@settings(max_examples=30, deadline=None)
def test_a_bridge_is_ours_by_its_marker_alone(url: str, token: bool, edited: dict, args: list[str]) -> None:
    """What the user changed in our bridge (its command, its arguments, a key added) leaves it ours; the
    same entry without the marker is someone else's."""
    entry = {**rmm.bridge_entry(url, "t" * 32 if token else None), **edited}
    entry["args"] = [*entry["args"], *args]
    assert rmm._our_bridge(entry) and rmm._ours(entry) and not rmm._runs_this_program(entry)
    unmarked = {**entry, "env": {k: v for k, v in entry["env"].items() if k != rmm.BRIDGE_MARKER}}
    assert not rmm._ours(unmarked)


def test_the_docs_show_what_install_writes() -> None:
    """docs/fleet.md's bridge entry is bridge_entry's, its name and clients.md's example are _name_part's."""
    fleet = (ROOT / "docs" / "fleet.md").read_text(encoding="utf-8")
    shown = re.search(r'```json\n("robot-md-bob-pi-local[^"]*": \{.*?\n\})\n```', fleet, re.DOTALL)
    assert shown, "no bridge entry in docs/fleet.md"
    ((name, entry),) = json.loads("{" + shown[1] + "}").items()
    assert name == f"robot-md-{rmm._name_part('bob-pi.local')}" and f"`{name}`" in fleet
    written = rmm.bridge_entry("http://bob-pi.local:8765/mcp", "<the token>", plain=True)
    assert entry == written
    clients = (ROOT / "docs" / "clients.md").read_text(encoding="utf-8")
    example = rmm._name_part("Bob's arm")
    assert f"`robot-md-{example}`" in clients


def test_uninstall_finds_the_entry_of_a_robot_gone_since(install: Installer, tmp_path: Path) -> None:
    """A manifest deleted, a fleet emptied: uninstall PATH (or --fleet DIR) still removes the entry
    install wrote for it, and leaves the others."""
    rover = robot(tmp_path / "rover", "rover")
    fleet = tmp_path / "lab"
    robot(fleet / "arm", "arm")
    for args in ([str(rover)], ["--fleet", str(fleet)], [str(EXAMPLE)]):
        assert install("cursor", *args).code == 0
    rover.unlink()
    (fleet / "arm" / "ROBOT.md").unlink()
    assert install("cursor", str(rover), verb="uninstall").code == 0
    assert install("cursor", "--fleet", str(fleet), verb="uninstall").code == 0
    assert install.servers("cursor") == {"robot-md-bob": json_entry()}


@given(st.sampled_from(list(SERVING_BOB)), st.integers(1, 2), st.sampled_from(FILE_CLIENTS))
@SETTINGS
def test_uninstall_of_paths_nothing_serves_leaves_robot_md(
    install: Installer, tmp_path_factory: pytest.TempPathFactory, way: str, count: int, client: str
) -> None:
    """uninstall PATH (or PATHs) that cannot be read, a typo or a file gone, and that no entry serves:
    robot-md (an earlier version's name) serving as many other manifests, by any way of running, stays."""
    folder = tmp_path_factory.mktemp("gone")
    ours = {**SERVING_BOB[way], "args": [*SERVING_BOB[way]["args"], *[str(folder / "more.md")] * (count - 1)]}
    write_json(install.file(client), {KEY[client]: {"robot-md": ours}})
    typos = [str(folder / f"typo{i}" / "ROBOT.md") for i in range(count)]
    done = install(client, *typos, verb="uninstall")
    assert done.code == 0 and "nothing changed" in done.out and install.servers(client) == {"robot-md": ours}
