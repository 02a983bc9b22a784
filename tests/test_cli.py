"""Section 11: the command line, in this process (`main()`, its words and exit codes), and as a
program where the process is the point (how it was invoked, signals, a broken install)."""

from __future__ import annotations

import array
import dataclasses
import json
import logging
import os
import signal
import sys
import time
from pathlib import Path
from typing import Any, cast

import pytest
from conftest import CORPUS, EXAMPLE, posix_only
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from serving import INIT, MODULE, SERVER, RawServer, bare, faulty, line, python, run
from usage import usage_message

import robot_md_mcp as rmm

GOOD = EXAMPLE.read_text(encoding="utf-8")
process = pytest.mark.process


def cli(capsys: pytest.CaptureFixture[str], *args: str | Path, **environ: str) -> tuple[int, str, str]:
    """The command line run by main() in this process, `environ` the whole environment: exit code,
    stdout, stderr."""
    code = rmm.main([str(a) for a in args], rmm.Machine(environ=environ))
    out, err = capsys.readouterr()
    return code, out, err


# --- startup errors: exit 1, one line, fast, before the SDK is imported -----

STARTUP_CASES = {
    "missing": (None, "file not found"),
    "directory without ROBOT.md": ("DIR", "no ROBOT.md in this directory"),
    "no frontmatter": ("# bob\n", "no frontmatter found — ROBOT.md must start with a YAML frontmatter block"),
    "invalid YAML": (
        "---\na: [1, 2\n---\n",
        "frontmatter YAML parse error: while parsing a flow sequence at line 2, column 4 did not find "
        "expected ',' or ']' at line 3, column 1",
    ),
    "not UTF-8": (b"---\nmetadata: {robot_name: caf\xe9}\n---\n", "not UTF-8 text (byte 0xe9 at offset"),
    "no robot_name": ("---\nmetadata: {}\n---\n", "metadata.robot_name is missing or not a non-empty string"),
    "robot_name not a string": ("---\nmetadata: {robot_name: 5}\n---\n", "metadata.robot_name is missing"),
    "empty robot_name": ("---\nmetadata: {robot_name: ''}\n---\n", "metadata.robot_name is missing"),
    "fifo": ("FIFO", "not a regular file"),
}


def broken(case: str, folder: Path) -> Path:
    content, _ = STARTUP_CASES[case]
    path = folder / f"{hash(case)}.md"
    if content == "DIR":
        path.mkdir()
    elif content == "FIFO":
        os.mkfifo(path)
    elif content is not None:
        path.write_bytes(content if isinstance(content, bytes) else content.encode())
    return path


@posix_only
@pytest.mark.parametrize("case", STARTUP_CASES, ids=str)
def test_startup_errors(case: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = broken(case, tmp_path)
    started = time.perf_counter()
    code, out, err = cli(capsys, path)
    assert (code, out, err.count("\n")) == (1, "", 1), err
    assert err.startswith(f"robot-md-mcp: {STARTUP_CASES[case][1]}") and err.endswith(f"({path})\n")
    assert time.perf_counter() - started < 1.5, "a broken config must fail fast"


@posix_only
def test_startup_errors_never_import_the_sdk(tmp_path: Path) -> None:
    """A fresh interpreter: every startup error, and a bad setting, leave before the SDK is imported."""
    code = (
        "import sys, robot_md_mcp as m\n"
        "codes = [m.main([p]) for p in sys.argv[1:]]\n"
        "codes.append(m.main([sys.argv[1]], m.Machine(environ={m.POLL_SECONDS_ENV: '0'})))\n"
        "sdk = sorted(n for n in ('mcp', 'pydantic', 'jsonschema', 'anyio') if n in sys.modules)\n"
        "print([int(c) for c in codes], sdk)\n"
    )
    done = python(code, *(broken(case, tmp_path) for case in STARTUP_CASES))
    assert done.stdout == f"{[1] * (len(STARTUP_CASES) + 1)} []\n", done.stderr


def test_a_bad_setting_is_one_line_before_anything_is_served(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = cli(capsys, EXAMPLE, **{rmm.POLL_SECONDS_ENV: "0"})
    assert (code, out) == (1, "")
    assert err == f"robot-md-mcp: ${rmm.POLL_SECONDS_ENV} is '0'; it may be 0.01 to 0.5\n"


# --- usage: argparse's own two lines and exit 2; help and version ------------------

NEITHER = "is neither a command (serve, validate, render, install, uninstall) nor an existing file"
USAGE = {
    "--nope": (["--nope"], "unknown option '--nope'"),
    "two paths": (["a", "b"], "'a' is neither a command"),
    "unknown option": (["validate", "--yaml"], "unknown option '--yaml'"),
    "serve PATH extra": (["serve", str(EXAMPLE), "extra"], "'extra' is neither a command"),
    **{word: ([word], f"{word!r} {NEITHER}") for word in ("valdate", "serv", "instal")},
}


@pytest.mark.parametrize("case", USAGE)
def test_usage_errors_exit_2(case: str, capsys: pytest.CaptureFixture[str]) -> None:
    args, message = USAGE[case]
    code, out, err = cli(capsys, *args)
    assert (code, out) == (2, "") and usage_message(err).startswith(message), err


def test_no_path_found_is_a_usage_error_saying_how_to_pass_one_as_invoked(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """Run as `python robot_md_mcp.py`, help and hints say so (not `robot-md-mcp ...`)."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(sys, "argv", [str(MODULE)])
    invoked = f"{Path(sys.executable).name} {MODULE}"
    code, _, err = cli(capsys)
    assert code == 2 and err.count("\n") == 1 and "no ROBOT.md given and none found" in err
    assert str(tmp_path) in err and f"pass a path: {invoked} /path/to/ROBOT.md" in err
    assert cli(capsys, "--nope")[2].startswith(f"usage: {invoked} [serve] [PATH]")
    code, out, _ = cli(capsys, "--help")
    assert code == 0 and out.startswith(f"usage: {invoked} [serve] [PATH]")
    assert "validate [PATH...] [--fleet DIR] [--json] [--strict]" in out
    for args in (["--help"], ["install", "--help"]):
        assert "install CLIENT [PATH... | --fleet DIR | URL" in cli(capsys, *args)[1]
    code, out, _ = cli(capsys, "validate", "--help")
    assert code == 0 and out.startswith(f"usage: {invoked} validate [PATH...]")
    assert cli(capsys, "--version")[1] == f"robot-md-mcp {rmm.__version__}\n"
    assert cli(capsys, "missing.md")[:2] == (1, "")  # a missing path that looks like one: file not found


# Each verb's words in order, and options (with their values) that may stand anywhere among them.
ARRANGEMENTS = {
    "install": (["vscode", "robots/ROBOT.md"], [["--name", "arm"], ["--workspace=."], ["--dry-run"]]),
    "uninstall": (["claude-code"], [["--name=arm"], ["--scope", "local"], ["--dry-run"]]),
    "validate": (["ROBOT.md"], [["--json"]]),
    "serve": (["-"], [["--http", "0"], ["--allow-host", "a"], ["--trusted-keys=k"], ["--token-file", "t"]]),
}


@settings(max_examples=80, deadline=None)
@given(data=st.data())
def test_options_may_stand_anywhere_among_the_words(data: st.DataObject) -> None:
    """argparse leaves words that follow an option to us: every arrangement parses as the plain one."""
    verb = data.draw(st.sampled_from(sorted(ARRANGEMENTS)))
    words, options = ARRANGEMENTS[verb]
    plain = rmm.parse_command_line([verb, *words, *[part for option in options for part in option]])
    arranged = [[word] for word in words]
    for option in options:  # each option anywhere; the words keep their order
        arranged.insert(data.draw(st.integers(0, len(arranged))), option)
    argv = [verb, *[part for item in arranged for part in item]]
    assert rmm.parse_command_line(argv) == plain, argv
    assert plain.said_verb and (plain.path or plain.client) is not None
    if verb == "serve":  # the verb that may go unsaid
        assert rmm.parse_command_line(argv[1:]) == dataclasses.replace(plain, said_verb=False)


def test_yaml_errors_name_the_place_in_the_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """The frontmatter starts after blank lines and the delimiter: places count lines of the file."""
    path = tmp_path / "ROBOT.md"
    path.write_text("\n\n---\nmetadata:\n  robot_name: [bob\n---\n# bob\n", encoding="utf-8")
    for args in ([path], ["validate", path], ["render", path]):
        code, _, err = cli(capsys, *args)
        assert code == 1 and err.count("\n") == 1, args
        assert "<unicode string>" not in err
        assert "at line 5, column 15" in err and err.endswith(f"({path})\n")
    reference = json.loads(cli(capsys, "validate", "--json", path)[1])  # the reference's string, as is
    assert 'in "<unicode string>", line 3, column 15' in reference["errors"][0]


@posix_only
@given(
    name=st.text(st.characters(exclude_categories=["Cs"], exclude_characters="/\x00"), min_size=1, max_size=8)
)
@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
def test_a_path_that_breaks_lines_still_gets_one_line(
    name: str, tmp_path_factory: pytest.TempPathFactory, capsys: pytest.CaptureFixture[str]
) -> None:
    """Whatever a folder's name holds (line breaks, escapes, format characters), each error names it
    on one line: the broken manifest, the one that is not there, the folder with none in it."""
    folder = tmp_path_factory.mktemp("top") / (name if name not in (".", "..") else f"x{name}")
    folder.mkdir()
    (folder / "ROBOT.md").write_text("no frontmatter\n", encoding="utf-8")
    for verb, path in (("validate", folder), ("render", folder / "missing.md")):
        code, _, said = cli(capsys, verb, path)
        assert code == 1 and said.count("\n") == 1 and said.endswith("\n"), (verb, said)
        assert not any(ch in said[:-1] for ch in "\r\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029\x1b")


# --- validate / render verbs --------------------------------------------------

EXIT_CODES = {
    "rmd__site-examples-bob.ROBOT.md": 0,
    "mcpts__bad-yaml.ROBOT.md": 1,
    "mcpts__no-frontmatter.ROBOT.md": 1,
    "rmd__bad-rcan-version.ROBOT.md": 2,
    "mcpts__missing-identity-section.ROBOT.md": 4,
}


@pytest.mark.parametrize("name", EXIT_CODES)
def test_validate_exit_codes_and_json(name: str, capsys: pytest.CaptureFixture[str]) -> None:
    path = CORPUS / name
    code, out, _ = cli(capsys, "validate", path, "--json")
    assert code == EXIT_CODES[name]
    expected = rmm.check_text(rmm.read_source(path).text).as_dict()
    assert json.loads(out) == expected
    code, out, err = cli(capsys, "validate", path)
    assert code == EXIT_CODES[name]
    if name.startswith("rmd__site"):
        assert out == "✓ bob (arm+camera, 6 DoF, 5 capabilities)\n"
    elif EXIT_CODES[name] == 1:  # unparseable: one line on stderr, as at startup
        assert out == ""
        assert err.startswith("robot-md-mcp: ") and err.count("\n") == 1
    else:
        assert out.splitlines() == [f"✗ {e}" for e in expected["errors"]]


def test_validate_json_on_a_missing_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    nope = tmp_path / "nope.md"
    code, out, _ = cli(capsys, "validate", nope, "--json")
    assert code == 1
    assert json.loads(out) == {
        "ok": False,
        "summary": "",
        "errors": [f"file not found: {nope}"],
        "warnings": [],
        "hints": [],
    }
    assert cli(capsys, "validate", nope) == (1, "", f"robot-md-mcp: file not found ({nope})\n")


def test_render_prints_the_canonical_yaml_bytes(capsys: pytest.CaptureFixture[str]) -> None:
    assert cli(capsys, "render", EXAMPLE) == (0, rmm.render(rmm.parse(GOOD)), "")
    assert cli(capsys, "render", CORPUS / "mcpts__bad-yaml.ROBOT.md")[0] == 1


def test_a_folder_named_like_a_verb_is_served_with_dot_slash(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "validate").mkdir()
    (tmp_path / "validate" / "ROBOT.md").write_text("# not a manifest\n", encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    code, _, err = cli(capsys, "./validate")
    assert code == 1 and "no frontmatter found" in err and "validate/ROBOT.md" in err


@process
@posix_only
def test_render_into_a_closed_pipe_is_quiet() -> None:
    done = run("render", EXAMPLE, command=["/bin/sh", "-c", '"$@" | head -c 10 >/dev/null', "sh", *SERVER])
    assert "Traceback" not in done.stderr


@pytest.mark.parametrize(
    "missing", ["mcp", pytest.param("anyio", marks=process), pytest.param("jsonschema", marks=process)]
)
def test_a_missing_dependency_is_one_line(missing: str) -> None:
    """A broken install (a dependency deleted or never installed) is found when the SDK or the
    validator first loads, after startup checks: one line naming it, exit 1, no traceback."""
    args = ["validate", str(EXAMPLE)] if missing == "jsonschema" else [str(EXAMPLE)]
    done = run(*args, command=faulty("missing", missing))
    assert done.returncode == 1
    (said,) = done.stderr.splitlines()
    assert said.startswith("robot-md-mcp: cannot start: ")
    assert f"'{missing}" in said or f" {missing} " in said  # Python words it differently by case
    assert said.endswith("; reinstall robot-md-mcp with its dependencies")


# --- signals: Ctrl-C (exit 130) and SIGTERM end the server at once, quietly, whatever it is doing

SIGNALS = {"SIGINT": (signal.SIGINT, 130), "SIGTERM": (signal.SIGTERM, -signal.SIGTERM)}


def loading_cases() -> Any:
    for module in ("yaml", "mcp", "pydantic_core", "anyio"):
        for form in ("script", "launcher"):
            for sig in SIGNALS:
                quick = (module, form, sig) == ("mcp", "launcher", "SIGINT")
                yield pytest.param(module, form, sig, marks=[] if quick else [process])


@posix_only
@pytest.mark.parametrize(("module", "form", "sig"), list(loading_cases()))
def test_a_signal_while_the_program_loads_ends_it_quietly(module: str, form: str, sig: str) -> None:
    """Ctrl-C while the module's own imports or the SDK load: 130 and no traceback (not Python's -2)."""
    number, code = SIGNALS[sig]
    done = run(EXAMPLE, command=faulty("signal-while-loading", module, int(number), start=form))
    assert (done.returncode, done.stderr) == (code, "")


def _wait_until_full(pipe: int, timeout: float = 30) -> None:
    """Until the pipe holds over half what it can (Linux: 64 KiB unless resized; partly filled pages
    leave the rest) and has not grown for 0.2 s: its writer is blocked on it."""
    import fcntl
    import termios

    capacity = fcntl.fcntl(pipe, 1032) if sys.platform == "linux" else 16384  # F_GETPIPE_SZ
    unread, before, steady_since = array.array("i", [0]), -1, time.monotonic()
    deadline = steady_since + timeout
    while True:
        fcntl.ioctl(pipe, termios.FIONREAD, unread)
        if unread[0] != before:
            before, steady_since = unread[0], time.monotonic()
        elif unread[0] > capacity // 2 and time.monotonic() - steady_since >= 0.2:
            return
        assert time.monotonic() < deadline, f"the pipe holds {unread[0]} bytes after {timeout} s"
        time.sleep(0.01)


@process
@posix_only
@pytest.mark.parametrize("sig", SIGNALS)
def test_a_signal_ends_a_server_whose_client_stopped_reading(sig: str) -> None:
    """stdout is full (the client reads nothing) and stdin still open: a signal still ends it within a
    second, quietly. (`bare`: the harness's RawServer reads stdout as it comes, so its pipe never fills.)"""
    proc = bare(EXAMPLE)
    assert proc.stdin is not None and proc.stdout is not None and proc.stderr is not None
    try:
        proc.stdin.write(line(INIT) + line({"jsonrpc": "2.0", "method": "notifications/initialized"}))
        proc.stdin.flush()
        assert json.loads(proc.stdout.readline())["id"] == INIT["id"]
        read = {"jsonrpc": "2.0", "method": "resources/read", "params": {"uri": "robot-md://bob/frontmatter"}}
        proc.stdin.write(b"".join(line({**read, "id": n}) for n in range(2, 300)))  # more than a pipe holds
        proc.stdin.flush()
        _wait_until_full(proc.stdout.fileno())  # the server now waits on it
        started = time.monotonic()
        proc.send_signal(SIGNALS[sig][0])
        assert proc.wait(timeout=5) == SIGNALS[sig][1]
        assert time.monotonic() - started < 1.0 and proc.stderr.read() == b""
    finally:
        proc.kill()
        proc.wait()
        proc.stdin.close()


@process
@posix_only
@pytest.mark.parametrize("sig", SIGNALS)
def test_a_signal_ends_a_server_whose_worker_is_busy(sig: str, manifest_path) -> None:
    """A worker preparing a new version for a minute: a signal still ends the server at once."""
    path = manifest_path(GOOD)
    with RawServer(path, command=faulty("slow-parse")) as server:
        server.handshake()
        path.write_text(GOOD.replace("\n---", "\n# slow-marker\n---", 1), encoding="utf-8")
        read = {"uri": "robot-md://bob/safety"}
        server.send({"jsonrpc": "2.0", "id": 7, "method": "resources/read", "params": read})
        assert server.silence(0.3) == []  # the worker is busy with it
        started = time.monotonic()
        server.proc.send_signal(SIGNALS[sig][0])
        assert server.proc.wait(timeout=5) == SIGNALS[sig][1]
        assert time.monotonic() - started < 1.0
        assert "Traceback" not in server.stderr


# --- the settings the server reads: they only shorten waits and lower limits -------------------

DEFAULTS = rmm.HttpLimits()
# $ROBOT_MD_MCP_HTTP_LIMITS refuses these at any value: a shorter log window lets more lines through,
# poll_seconds has its own variable, a token is no limit.
NO_LIMIT = ["log_window_seconds", "poll_seconds", "token"]
SETTINGS = [(rmm.HTTP_LIMITS_ENV, name) for name in [*rmm.HTTP_SETTINGS, *NO_LIMIT]]
SETTINGS.append((rmm.POLL_SECONDS_ENV, "poll_seconds"))


def _setting(variable: str, name: str, text: str) -> dict[str, str]:
    return {variable: text if variable == rmm.POLL_SECONDS_ENV else f"{name}={text}"}


def _number(text: str, kind: type) -> float | None:
    """What `text` says as a number of `kind` (a count is a whole number), else None."""
    try:
        return kind(text)
    except ValueError:
        return None


@given(
    setting=st.sampled_from(SETTINGS),
    text=st.floats().map(repr)
    | st.integers(-10, 10_000).map(str)
    | st.text(st.characters(exclude_characters=","), max_size=8),
)
@settings(max_examples=300, deadline=None)
def test_a_setting_is_taken_only_within_its_bounds(setting: tuple[str, str], text: str) -> None:
    """Any text for any setting: taken when it is a number between the setting's floor and its
    default (never above: a setting cannot raise a limit or lengthen a wait), else refused in one
    line naming it; nothing else changes."""
    variable, name = setting
    default = getattr(DEFAULTS, name, 0)
    low = 1 if isinstance(default, int) else rmm.MIN_SETTING_SECONDS
    wanted = _number(text.strip(), type(default))
    a_limit = variable == rmm.POLL_SECONDS_ENV or name in rmm.HTTP_SETTINGS
    taken = a_limit and wanted is not None and low <= wanted <= default
    if not text.strip() and variable == rmm.POLL_SECONDS_ENV:
        taken, wanted = True, default  # unset
    try:
        got = rmm.serve_settings(_setting(variable, name, text))
    except rmm.Exit as e:
        assert e.code == rmm.ExitCode.CANNOT_USE and "\n" not in e.line and variable in e.line
        assert not taken, (text, e.line)
        return
    assert taken, text
    assert got == dataclasses.replace(DEFAULTS, **{name: cast(Any, wanted)})


def test_no_setting_serves_with_the_defaults_and_several_combine() -> None:
    """... and one refused (no value; a count of 0) refuses them all."""
    for refused in ("head_seconds", "head_seconds=0.5,connections=0"):
        with pytest.raises(rmm.Exit):
            rmm.serve_settings({rmm.HTTP_LIMITS_ENV: refused})
    assert rmm.serve_settings({}) == DEFAULTS
    both = {rmm.HTTP_LIMITS_ENV: " head_seconds=0.5 , sessions=3,", rmm.POLL_SECONDS_ENV: "0.05"}
    assert rmm.serve_settings(both) == dataclasses.replace(
        DEFAULTS, head_seconds=0.5, sessions=3, poll_seconds=0.05
    )


def test_debug_lines_are_ours_only_and_never_held_back_by_the_log_budget() -> None:
    """$ROBOT_MD_MCP_DEBUG=1 turns on our logger's debug lines (the SDK's stay off), and the log
    budget, there for what peers make us write, lets them all through."""
    ours = logging.getLogger(rmm.NAME)
    try:
        rmm.serve_settings({rmm.DEBUG_ENV: "1"})
        assert ours.isEnabledFor(logging.DEBUG) and not logging.getLogger("mcp").isEnabledFor(logging.DEBUG)
    finally:
        ours.setLevel(logging.NOTSET)
    budget = rmm.LogBudget(lines=2, window=10.0, clock=lambda: 0.0)
    record = logging.LogRecord(rmm.NAME, logging.DEBUG, __file__, 1, "looked at the file", None, None)
    assert all(budget.filter(record) for _ in range(100))
    record.levelno = logging.WARNING
    assert [budget.filter(record) for _ in range(3)] == [True, True, False]


# --- a long bad value is echoed cut --------------------------------------------------------------------

# Every setting and option whose bad value a line of ours names, as (arguments, environment) for a value:
# each is refused before anything is served or written.
_EX = str(EXAMPLE)
ECHOED_VALUES = {
    "$ROBOT_MD_MCP_POLL_SECONDS": lambda v: (["serve", _EX], {rmm.POLL_SECONDS_ENV: v}),
    "$ROBOT_MD_MCP_HTTP_LIMITS (not NAME=VALUE)": lambda v: (["serve", _EX], {rmm.HTTP_LIMITS_ENV: v}),
    **{
        f"$ROBOT_MD_MCP_HTTP_LIMITS {name}": (
            lambda name: lambda v: (["serve", _EX], {rmm.HTTP_LIMITS_ENV: f"{name}={v}"})
        )(name)
        for name in rmm.HTTP_SETTINGS
    },
    "--http": lambda v: (["serve", _EX, "--http", v], {}),
    "--allow-host": lambda v: (["serve", _EX, "--http", "127.0.0.1:0", "--allow-host", f"!{v}"], {}),
    "first word": lambda v: ([f"x{v}"], {}),
    "unexpected argument": lambda v: (["render", _EX, f"x{v}"], {}),
    "unknown option": lambda v: (["validate", f"--x{v}"], {}),
    "CLIENT": lambda v: (["install", f"x{v}", _EX], {}),
    "--name": lambda v: (["install", "cursor", _EX, "--name", f"!{v}"], {"HOME": "/nonexistent"}),
    "--scope": lambda v: (["install", "claude-code", _EX, "--scope", v], {"HOME": "/nonexistent"}),
    "$HOME": lambda v: (["install", "cursor", _EX], {"HOME": f"x{v}"}),
}
# Paths are cut only past any length the system opens (MAX_SHOWN_PATH_CHARS).
ECHOED_PATHS = {
    "PATH": lambda p: (["validate", p], {}),
    "--robot": lambda p: (["validate", "--robot", p], {}),
    "$ROBOT_MD_PATH": lambda p: (["validate"], {rmm.PATH_ENV: p}),
    "--trusted-keys": lambda p: (["serve", _EX, "--trusted-keys", p], {}),
    "$ROBOT_MD_TRUSTED_KEYS": lambda p: (["serve", _EX], {rmm.TRUSTED_KEYS_ENV: p}),
    "--token-file": lambda p: (["serve", _EX, "--http", "127.0.0.1:0", "--token-file", p], {}),
    "--workspace": lambda p: (["install", "vscode", _EX, "--workspace", p], {"HOME": "/nonexistent"}),
}
# What argv and the environment can hold: no NUL; no `,` or `=` (a value, not more settings); not blank.
_VALUE_TEXT = st.text(
    st.characters(exclude_characters="\x00,=", exclude_categories=["Cs"]), min_size=1, max_size=8
)


@pytest.mark.parametrize("case", [*ECHOED_VALUES, *ECHOED_PATHS])
@settings(max_examples=6, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    seed=_VALUE_TEXT,
    length=st.sampled_from([1_000, 100_000]),
)
def test_a_long_bad_setting_or_option_is_one_bounded_line(
    case: str, seed: str, length: int, capsys: pytest.CaptureFixture[str]
) -> None:
    """Any bad value of any setting or option, up to 100,000 characters: refused in one line on stderr,
    the value in it cut (MAX_ECHOED_ARGUMENT characters; a path only past MAX_SHOWN_PATH_CHARS), each
    character written as at most 10 (repr's `\\U0001f600`, visible()'s `<U+1F600>`)."""
    value = (seed * (length // len(seed) + 1))[:length] + "!"  # `!`: never blank, never a number
    if case in ECHOED_PATHS:
        argv, environ = ECHOED_PATHS[case](f"/nonexistent/{value.replace('/', '_')}")
        bound = 10 * rmm.MAX_SHOWN_PATH_CHARS + 300
    elif (case, " " in value) == ("unknown option", True) or (case, "/" in value) == ("first word", True):
        # argparse: a word with a space is a PATH, not an option; a first word with a slash is a PATH
        argv, environ = ECHOED_VALUES[case](value)
        bound = 10 * rmm.MAX_SHOWN_PATH_CHARS + 300
    else:
        argv, environ = ECHOED_VALUES[case](value)
        bound = 10 * rmm.MAX_ECHOED_ARGUMENT + 300
    code, out, err = cli(capsys, *argv, **environ)
    lines = err.splitlines()
    assert code in (1, 2) and out == "", (case, code, err[:300])
    if code == 2:  # argparse's usage line, then its error line
        lines = [usage_message(err, bound)]
    assert len(lines) == 1 and len(lines[0]) <= bound, (case, len(lines[0]), lines[0][:300])
