"""The README's and docs/'s promises, run as written: the commands CI reads,
the Claude Desktop snippet, the messages they quote (produced by the code), their
links. Numbers are read from the pages' tables and counts, whatever the wording
around them, and compared with the code's constants, the build's and the bench's."""

from __future__ import annotations

import ast
import inspect
import itertools
import json
import os
import re
import shutil
import signal
import sys
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
import yaml
from conftest import EXAMPLE, ROOT, need
from mcp import MCPError
from mcp.server.streamable_http import StreamableHTTPServerTransport
from mcp.server.streamable_http_manager import StreamableHTTPSessionManager
from serving import SERVER, RawServer, launched, run

import robot_md_mcp as rmm

README_PATH = ROOT / "README.md"
README = README_PATH.read_text(encoding="utf-8")
DOCS = sorted((ROOT / "docs").glob("*.md"))
MAX_README_CHARS = 20_000  # the user-facing guide; detail goes to docs/

# The one-line commands CI reads from the README: the comment, then a ```sh block of one line.
COMMANDS = {
    "quickstart:serve": (
        "python3 -m venv .venv && .venv/bin/pip install . && .venv/bin/robot-md-mcp examples/bob.ROBOT.md"
    ),
    "quickstart:test": ".venv/bin/pip install '.[test]' && .venv/bin/python -m pytest",
    "process-tests": ".venv/bin/python -m pytest -m process",
    "heavy-tests": ".venv/bin/python -m pytest -m heavy -n 0",
    "slow-tests": ".venv/bin/python -m pytest -m slow -n 0",
}


def doc(name: str) -> str:
    return (ROOT / "docs" / name).read_text(encoding="utf-8")


def block_after(marker: str, text: str = README) -> str:
    match = re.search(rf"<!-- {re.escape(marker)} -->\n```\w*\n(.*?)\n```", text, re.S)
    assert match, marker
    return match.group(1)


def prose(text: str) -> str:
    """Markdown as one line of words: a sentence may wrap anywhere."""
    return " ".join(text.split())


NUMBER = r"\d[\d,]*(?:\.\d+)?"
UNITS = {"KiB": 1024, "MiB": 2**20, "minutes": 60}


def quantities(text: str) -> list[float]:
    """Every number the text states, in the code's units: `1,600` → 1600, `256 KiB` → 262144,
    `10 minutes` → 600, `0.5 s` → 0.5."""
    found = re.findall(rf"(?<![\w.])({NUMBER})(?: ?(KiB|MiB|minutes)\b)?", text)
    return [float(number.replace(",", "")) * UNITS.get(unit, 1) for number, unit in found]


def counts(text: str, noun: str) -> list[int]:
    """Every count the text gives of `noun`: a number right before it, or one word before it
    ("30 targets", "all 30 targets' dependencies", "17 real-world manifests")."""
    found = re.findall(rf"(?<![\w.])(\d[\d,]*) (?:[\w-]+ )?{noun}\b", prose(text))
    return [int(number.replace(",", "")) for number in found]


def code_spans(text: str) -> list[str]:
    return re.findall(r"`([^`\n]+)`", prose(text))


def _cells(row: str) -> list[str]:
    return [cell.strip() for cell in row.strip().strip("|").split("|")]


def tables(text: str) -> list[list[dict[str, str]]]:
    """Each markdown table of the text, as its rows, each {column heading: cell}."""
    lines, found = text.splitlines(), []
    for i in range(len(lines) - 1):
        if lines[i].startswith("|") and re.fullmatch(r"\|(?:-+\|)+", lines[i + 1]):
            rows = itertools.takewhile(lambda line: line.startswith("|"), lines[i + 2 :])
            found.append([dict(zip(_cells(lines[i]), _cells(row))) for row in rows])
    return found


# --- shape --------------------------------------------------------------------------------------


def test_readme_is_short_enough() -> None:
    assert len(README) <= MAX_README_CHARS, f"{len(README)} characters; move detail to docs/"


@pytest.mark.parametrize("marker", COMMANDS)
def test_each_marker_precedes_a_one_line_sh_block(marker: str) -> None:
    assert README.count(f"<!-- {marker} -->") == 1, marker
    match = re.search(rf"<!-- {re.escape(marker)} -->\n```sh\n([^\n]*)\n```\n", README)
    assert match, f"<!-- {marker} --> must be directly followed by a ```sh block of one line"
    assert match.group(1) == COMMANDS[marker]


def test_quick_start_is_two_commands_and_serving_needs_no_test_extras() -> None:
    serve, test = block_after("quickstart:serve"), block_after("quickstart:test")
    quick_start = README.split("## Quick start", 1)[1].split("\n## ", 1)[0]
    assert quick_start.count("```sh") == 2
    assert "pip install . " in serve and "[test]" not in serve
    assert serve.endswith("robot-md-mcp examples/bob.ROBOT.md")
    assert "../shared" not in serve + test


def test_install_lines_name_the_repository_pyproject_names() -> None:
    repository = re.search(r'^Repository = "([^"]+)"', (ROOT / "pyproject.toml").read_text(), re.M)
    assert repository, "pyproject.toml names no Repository"
    sources = re.findall(r"git\+(\S+?)@v", README)
    assert len(sources) >= 2 and set(sources) == {repository.group(1)}, sources
    assert "<owner>" not in README


def test_the_pi_section_serves_the_path_it_copied_to_one_host() -> None:
    pi = README.split("### On a Raspberry Pi", 1)[1].split("\n## ", 1)[0]
    bench = README.split("### Example: a Raspberry Pi on the bench", 1)[1].split("\n## ", 1)[0]
    copied = re.search(r"scp ROBOT\.md \S+:(\S+)", pi)
    assert copied, "the Pi section copies the manifest somewhere"
    assert f"~/{copied.group(1)} --http" in bench, "the HTTP example serves the copied manifest"
    hosts = set(re.findall(r"[\w-]+\.local\b", pi + bench))
    assert len(hosts) == 1, hosts


# --- the Claude Desktop snippet -----------------------------------------------------------------


def claude_desktop_entry() -> dict:
    return json.loads(block_after("claude-desktop-config"))["mcpServers"]["robot-md"]


def test_claude_desktop_snippet_is_valid_json_with_placeholders() -> None:
    entry = claude_desktop_entry()
    assert entry == {"command": "python3", "args": ["/path/to/robot-md-mcp.pyz", "/path/to/ROBOT.md"]}


@pytest.mark.heavy  # builds the pyz
@pytest.mark.anyio
async def test_claude_desktop_snippet_works_as_written(universal_pyz: Path) -> None:
    """The snippet's command and args, with only the placeholders filled in:
    `python3` on PATH runs the universal pyz on the bundled example."""
    entry = claude_desktop_entry()
    need(shutil.which("python3") is not None, "python3 on PATH")
    filled = {"/path/to/robot-md-mcp.pyz": str(universal_pyz), "/path/to/ROBOT.md": str(EXAMPLE)}
    async with launched(*[filled[a] for a in entry["args"]], command=[entry["command"]]) as client:
        assert client.server_info is not None and client.server_info.name == "robot-md-mcp"
        uris = [r.uri for r in (await client.list_resources()).resources]
        assert uris == [*(f"robot-md://bob/{v.kind}" for v in rmm.VIEWS), rmm.CARD_URI]
        result = await client.call_tool("validate", {})
        assert result.structured_content == {
            "ok": True,
            "summary": "bob (arm+camera, 6 DoF, 5 capabilities)",
            "errors": [],
            "warnings": [],
            "hints": [],
        }


@pytest.mark.anyio
async def test_the_quick_start_command_serves() -> None:
    """The clone's console script, as the README's alternative entry says."""
    command = ROOT / ".venv" / "bin" / "robot-md-mcp"
    need(command.exists(), f"{command} exists once the README's quick start has run")
    # (a clone's .venv seen from another userland, e.g. the tests run under Debian sid, names a Python
    # that is not there)
    interpreter = command.read_text(encoding="utf-8", errors="replace").splitlines()[0].removeprefix("#!")
    need(Path(interpreter.split()[0]).exists(), f"{command}'s Python ({interpreter}) is on this machine")
    async with launched(EXAMPLE, command=[command]) as client:
        assert (await client.call_tool("validate", {})).structured_content["ok"] is True


# --- what the README quotes is what the code says ----------------------------------------------


def test_the_version_and_a_pyz_s_version_line(monkeypatch: pytest.MonkeyPatch) -> None:
    assert f"@v{rmm.__version__}" in README
    assert f"robot-md-mcp-{rmm.__version__}-cp311-manylinux_aarch64.pyz" in README
    monkeypatch.setattr(sys, "robot_md_mcp_pyz", {"platform": "linux-aarch64"}, raising=False)
    line = rmm.version_line()
    assert line == f"robot-md-mcp {rmm.__version__} (pyz, platform linux-aarch64)"
    assert f"`{line}`" in README
    assert " ".join(doc("packaging.md").split()).count(line) == 1


def test_usage_is_the_help_text() -> None:
    lines = [
        line.strip().removeprefix("usage: ")
        for line in rmm.help_text(None, "robot-md-mcp").split("\n\n")[0].splitlines()
    ]
    assert "```\n" + "\n".join(lines) + "\n```" in README


def test_identity_example() -> None:
    manifest = rmm.ManifestFile(EXAMPLE).version().manifest  # as served: the gateway's verdict included
    assert f"```\n{rmm.identity(manifest)}\n```" in README


def test_client_error_examples() -> None:
    with pytest.raises(MCPError) as caught:
        rmm.Handlers.view_of("robot-md://alice/context", "bob")
    assert " ".join(README.split()).count(f"`{caught.value}`") == 1
    manifest = rmm.parse(EXAMPLE.read_text(encoding="utf-8"))
    prompt = rmm.PROMPTS["explain-capability"]
    with pytest.raises(rmm.BadArgument) as bad:
        prompt.parts(manifest, rmm.validate(manifest), {"capability": "nav.go_to"})
    assert f"`{bad.value}`" in " ".join(README.split())


def test_validate_hint_example() -> None:
    """parity.md quotes a real error and the start of its real hint."""
    error = "schema: metadata.version: 1.1 is not of type 'string'"
    assert rmm.check_text(
        EXAMPLE.read_text(encoding="utf-8").replace("version: 2026.4.17.0", "version: 1.10")
    ).errors == (error,)
    (hint,) = rmm.hints(error)
    quoted = code_spans(doc("parity.md"))
    assert error in quoted
    assert any(len(span) >= 40 and hint.startswith(span) for span in quoted), "no quote of the hint"


YAML_BROKEN = "---\nmetadata:\n  robot_name: bob\n  x: [1, 2\n---\nhi\n"


def _startup_cases(tmp: Path) -> dict[str, list[str]]:
    """README error message (as quoted, `…` for what varies) → the arguments that produce it."""
    (tmp / "empty").mkdir()
    files = {
        "nofm.md": b"no frontmatter\n",
        "yaml.md": YAML_BROKEN.encode(),
        "noname.md": b"---\nfoo: 1\n---\n",
        "latin1.md": b"\xff---\n",
        "big.md": b"x" * (rmm.MAX_MANIFEST_BYTES + 1),
    }
    for name, data in files.items():
        (tmp / name).write_bytes(data)
    return {
        "'servee' is neither a command (serve, validate, render, install, uninstall) nor an existing file "
        "or folder": ["servee"],
        "no ROBOT.md given and none found in $ROBOT_MD_PATH or in <folder> or any folder above it": [],
        "file not found (<path>)": ["missing.md"],
        "no ROBOT.md in this directory (<folder>)": ["empty"],
        "no frontmatter found — ROBOT.md must start with a YAML frontmatter block delimited by '---'.": [
            "nofm.md"
        ],
        "frontmatter YAML parse error: … at line 4, column 6 …": ["yaml.md"],
        "metadata.robot_name is missing or not a non-empty string": ["noname.md"],
        "not UTF-8 text (byte 0xff at offset 0); save the file as UTF-8": ["latin1.md"],
        f"file is larger than the {rmm.MAX_MANIFEST_BYTES // 1024} KiB limit": ["big.md"],
        "refusing to serve on 0.0.0.0:8765 (reachable from other machines) without a bearer token: …": [
            str(EXAMPLE),
            "--http",
            "0.0.0.0:8765",
        ],
    }


def test_error_table_quotes_real_messages(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """Each message in the README's error table, produced by the real command line (in this process:
    what it prints and returns is what the program does)."""
    env = {k: v for k, v in os.environ.items() if k not in (rmm.PATH_ENV, rmm.TOKEN_ENV)}
    # On CPython 3.15 the command line makes imports lazy unless a mode was chosen: leave this process's.
    monkeypatch.setenv("PYTHON_LAZY_IMPORTS", "normal")
    monkeypatch.chdir(tmp_path)
    for quoted, args in _startup_cases(tmp_path).items():
        assert f"`{quoted}" in README, quoted
        code = rmm.main(args, rmm.Machine(environ=env))
        out, err = capsys.readouterr()
        assert code in (1, 2) and out == "", (quoted, code, out, err)
        pattern = re.escape(quoted)
        for placeholder in (re.escape("<folder>"), re.escape("<path>"), "…"):
            pattern = pattern.replace(placeholder, ".*")
        assert re.search(pattern, err), (quoted, err)


# --- numbers ------------------------------------------------------------------------------------


def test_http_limits_at_a_glance_are_the_code_s() -> None:
    """Each row of the README's HTTP table states the limits the code has, and every limit has a row."""
    keep_alive = rmm.uvicorn_server(object()).config.timeout_keep_alive
    limits: dict[str, list[float]] = {  # a word of the row's `what` → what its cells state
        "body": [rmm.MAX_HTTP_BODY_BYTES, 413],
        "headers": [rmm.MAX_HTTP_HEADER_BYTES, 431],
        "connections": [rmm.HttpLimits().connections, 4 * rmm.HttpLimits().connections, 503],
        "sessions": [rmm.HttpLimits().sessions, rmm.HttpLimits().session_idle_seconds],
        "head": [keep_alive],
    }
    (table,) = [t for t in tables(README) if "beyond it" in t[0] and "limit" in t[0]]
    named = []
    for row in table:
        (word,) = [w for w in limits if w in row["what"].split()]
        named.append(word)
        stated = quantities(row["limit"] + " " + row["beyond it"])
        assert all(value in stated for value in limits[word]), (row, limits[word])
    assert sorted(named) == sorted(limits)
    # and the paragraph above it: body deadlines and the stderr budget
    (paragraph,) = [p for p in README.split("\n- ") if "docs/robustness.md#http" in p]
    deadlines = (keep_alive, rmm.HttpLimits().body_seconds, rmm.HttpLimits().body_gap_seconds)
    said = Counter([*deadlines, rmm.MAX_LOG_LINES, rmm.LOG_WINDOW_SECONDS, rmm.MAX_LOG_LINE_CHARS])
    assert not said - Counter(quantities(paragraph)), said  # each value stated, as often as it recurs


def limit_rows() -> dict[str, dict[str, str]]:
    """robustness.md's limit tables, each row by the constants it names (`MAX_NODES`)."""
    rows = {}
    for table in tables(doc("robustness.md")):
        for row in table:
            for name in re.findall(r"`([A-Z][A-Z0-9_]+|HttpLimits\.\w+)`", row.get("constant", "")):
                assert name not in rows, f"{name} has two rows"
                rows[name] = row
    return rows


def test_robustness_limits_are_the_code_s() -> None:
    """Each constant robustness.md names is the module's, with the value its row states; and every
    limit the module defines has a row."""
    rows = limit_rows()
    defaults = {f"HttpLimits.{k}": v for k, v in vars(rmm.HttpLimits()).items()}
    for name, row in rows.items():
        assert hasattr(rmm, name) or name in defaults, f"robustness.md names {name}; the module has none"
        value = defaults[name] if name in defaults else getattr(rmm, name)
        assert value in quantities(row["value"]), (name, value, row["value"])
    own = {n for n, f in rmm.HttpLimits.__dataclass_fields__.items() if f.default not in vars(rmm).values()}
    assert {f"HttpLimits.{n}" for n in own} <= set(rows), "an HTTP limit without a row in robustness.md"
    pattern = r"(MAX|MIN)_\w+|[A-Z]\w+_(SECONDS|ATTEMPTS)"  # public limits, not _PRIVATE ones
    limits = {n for n, v in vars(rmm).items() if re.fullmatch(pattern, n) and isinstance(v, (int, float))}
    assert limits <= set(rows), f"limits without a row in robustness.md: {sorted(limits - set(rows))}"
    assert rmm.uvicorn_server(object()).config.timeout_keep_alive in quantities(
        rows["HttpLimits.head_seconds"]["value"]
    )


def _refusal(text: str) -> str:
    with pytest.raises(rmm.ManifestError) as caught:
        rmm.parse(text)
    return caught.value.what


def test_limit_messages_quoted_in_robustness(tmp_path: Path) -> None:
    """The messages robustness.md quotes past each limit are the ones the code gives there."""
    front, deep = "---\nmetadata: {robot_name: bob}\n", rmm.MAX_DEPTH + 1
    tenfold = "[" + ", ".join(["*a{}"] * 10) + "]"
    aliases = "".join(f"a{i}: &a{i} " + tenfold.format(*[i - 1] * 10) + "\n" for i in range(1, 5))
    big = tmp_path / "ROBOT.md"
    big.write_bytes(b"x" * (rmm.MAX_MANIFEST_BYTES + 1))
    with pytest.raises(rmm.ManifestError) as too_big:
        rmm.read_source(big)
    too_long = rmm.classify_line(rmm._TOO_LONG)[1]
    assert too_long is not None
    messages = {
        "MAX_MANIFEST_BYTES": too_big.value.what,
        "MAX_NODES": _refusal(front + "x: [" + "1, " * rmm.MAX_NODES + "1]\n---\n"),
        "MAX_DEPTH": _refusal(front + "x: " + "[" * deep + "]" * deep + "\n---\n"),
        "MAX_VALUES": _refusal(front + "a0: &a0 [" + "1, " * 9 + "1]\n" + aliases + "---\n"),
        "MAX_STDIO_LINE_BYTES": too_long["error"]["message"],
        "READ_DEADLINE_SECONDS": rmm.OneReadAtATime(big, rmm.READ_DEADLINE_SECONDS).stalled().what,
    }
    rows = limit_rows()
    for name, message in messages.items():
        assert f"`{message}`" in rows[name]["beyond it"], (name, message)


def test_the_sdk_takes_an_http_body_only_as_bytes() -> None:
    """robustness.md: the SDK's public ways into Streamable HTTP take an ASGI request and nothing else,
    so HttpGuard cannot hand over the message it parsed and the SDK parses the body again. When one
    takes more (as the TypeScript SDK's `parsedBody`), use it and change the page."""
    quoted, asgi = code_spans(doc("robustness.md")), ["self", "scope", "receive", "send"]
    for owner in (StreamableHTTPServerTransport, StreamableHTTPSessionManager):
        assert f"{owner.__name__}.handle_request" in quoted
        assert list(inspect.signature(owner.handle_request).parameters) == asgi, owner


def _assigned(path: Path, name: str) -> Any:
    """The literal value a module assigns to `name`, read without importing it."""
    for node in ast.parse(path.read_text(encoding="utf-8")).body:
        if isinstance(node, ast.Assign) and any(
            isinstance(t, ast.Name) and t.id == name for t in node.targets
        ):
            value = node.value
            if isinstance(value, ast.Dict):  # keys only: the values may call functions
                return [ast.literal_eval(k) for k in value.keys if k is not None]
            return ast.literal_eval(value)
    raise AssertionError(f"{name} not assigned in {path}")


def test_pyz_counts() -> None:
    """packaging.md's counts of platforms, targets and files, and the CPythons it and the README
    name, are the build's."""
    build = ROOT / "packaging" / "build_pyz.py"
    oldest, newest = _assigned(ROOT / "packaging" / "pyz_guard.py", "SUPPORTED")  # the one place it is named
    platforms, pythons = _assigned(build, "PLATFORMS"), [f"3.{minor}" for minor in range(oldest, newest + 1)]
    targets = len(platforms) * len(pythons)
    page = doc("packaging.md")
    assert counts(page, "platforms") == [len(platforms)]
    assert counts(page, "targets") and set(counts(page, "targets")) == {targets}
    (pyz_verb,) = [row for table in tables(page) for row in table if "`./build.sh pyz`" in row.values()]
    assert counts(" ".join(pyz_verb.values()), "files") == [targets + 1]  # one per target, and the universal
    listed = re.findall(r"CPython ((?:3\.\d+, )+3\.\d+,? and 3\.\d+)", prose(page))
    assert listed and all(re.findall(r"3\.\d+", versions) == pythons for versions in listed)
    assert f"CPython {pythons[0]}–{pythons[-1]}" in README


def test_parity_and_conformance_counts() -> None:
    """The corpus and the conformance scenarios, counted where the docs count them."""
    corpus = len(list((ROOT / "tests" / "corpus").glob("*.md")))
    parity = doc("parity.md")
    stated = counts(parity, "real-world manifests") + counts(parity, "corpus files")
    assert stated and set(stated) == {corpus}
    required = _assigned(ROOT / "tests" / "test_conformance.py", "REQUIRED")
    baseline = yaml.safe_load((ROOT / "tests" / "conformance-expected-failures.yml").read_text("utf-8"))
    page = doc("conformance.md")
    assert sorted(counts(page, "scenarios")) == sorted([len(required), len(baseline["server"])])
    (listed,) = [[row["scenario"] for row in table] for table in tables(page) if "scenario" in table[0]]
    assert listed == [f"`{name}`" for name in required]
    for package, version in (
        _assigned(ROOT / "tests" / "test_conformance.py", "SUITE"),
        _assigned(ROOT / "tests" / "test_inspector.py", "INSPECTOR"),
    ):
        assert re.findall(rf"`{re.escape(package)}` ([\d.]+)", page) == [version], package


def test_fuzz_counts() -> None:
    """robustness.md's fuzz paragraph states how many cases the short and the slow runs check."""
    calls = re.findall(r"batches=([\d_]+), size=(\d+)", (ROOT / "tests" / "test_fuzz.py").read_text("utf-8"))
    cases = [int(b.replace("_", "")) * int(s) for b, s in calls]
    assert len(cases) == 4, calls  # two short runs, then the slow one's two halves
    (paragraph,) = [p for p in doc("robustness.md").split("\n\n") if "pytest -m slow" in p]
    stated = quantities(paragraph)
    assert sum(cases[:2]) in stated and sum(cases[2:]) in stated, (cases, stated)


# --- links --------------------------------------------------------------------------------------

LINK = re.compile(r"\[[^\]\n]*\]\(([^)\s]+)\)")


def links(text: str) -> list[str]:
    """Markdown link targets outside code blocks and code spans."""
    text = re.sub(r"^```.*?^```", "", text, flags=re.S | re.M)
    return LINK.findall(re.sub(r"`[^`\n]*`", "", text))


def anchors(text: str) -> set[str]:
    """GitHub's anchors for a markdown file's headings."""
    headings = re.findall(r"^#{1,6} +(.+?) *$", re.sub(r"^```.*?^```", "", text, flags=re.S | re.M), re.M)
    return {re.sub(r"[^\w\- ]", "", heading.lower()).replace(" ", "-") for heading in headings}


@pytest.mark.parametrize("page", [README_PATH, *DOCS], ids=lambda p: p.relative_to(ROOT).as_posix())
def test_relative_links_point_to_existing_files(page: Path) -> None:
    text = page.read_text(encoding="utf-8")
    for target in links(text):
        if re.match(r"[a-z]+:", target):  # https:, mailto:
            continue
        path_part, _, fragment = target.partition("#")
        file = (page.parent / path_part).resolve() if path_part else page
        assert file.is_file() and ROOT in file.parents, f"{page.name}: {target} is not a file here"
        if fragment and file.suffix == ".md":
            assert fragment in anchors(file.read_text(encoding="utf-8")), f"{page.name}: {target}"


def test_every_doc_is_linked_from_the_readme() -> None:
    linked = {(ROOT / t.partition("#")[0]).resolve() for t in links(README) if t.startswith("docs/")}
    assert DOCS, "docs/*.md"
    for page in DOCS:
        assert page in linked, f"the README does not link {page.relative_to(ROOT)}"


def test_performance_budgets_are_the_bench_s() -> None:
    """docs/performance.md's budget table has one row per budget the bench judges, with its limit."""
    sys.path.insert(0, str(ROOT / "tests" / "bench"))  # where test_bench.py imports it from
    import bench

    page = (ROOT / "docs" / "performance.md").read_text(encoding="utf-8")
    stated = [
        (float(number), unit)
        for table in tables(page)
        for row in table
        for cell in row.values()
        for number, unit in re.findall(r"^≤ \+?(\d+(?:\.\d+)?) ?(\S+)", cell)
    ]
    judged = [(limit, unit.split()[0]) for limit, _, unit in bench.BUDGETS.values()]
    assert sorted(stated) == sorted(judged)


# --- the exit codes -----------------------------------------------------------------------------


def exit_code_table() -> dict[int, str]:
    (rows,) = [t for t in tables(README) if t and "exit code" in t[0]]
    return {int(row["exit code"]): row["meaning"] for row in rows}


def test_exit_code_table_names_every_exit_code() -> None:
    """Every ExitCode is a row, and so is each code `validate` has of its own (robot-md's)."""
    validate_codes = {rmm.VALID, rmm.FILE_ERROR, rmm.SCHEMA_VIOLATION, rmm.MISSING_BODY_SECTION, rmm.HINTED}
    assert set(exit_code_table()) == {int(c) for c in rmm.ExitCode} | validate_codes


@pytest.mark.process
def test_exit_code_table_is_what_the_server_does(tmp_path: Path) -> None:
    """The codes the table gives for a signal over stdio, and for the end of input and a closed stdout,
    measured: each situation's words stand in the row of the code it exits with. (Over HTTP:
    test_http.py's test_signals_stop_cleanly, which stops a server with each signal.)"""
    measured: dict[tuple[str, ...], int] = {}
    with RawServer(EXAMPLE) as stdio:
        stdio.handshake()
        stdio.proc.send_signal(signal.SIGINT)
        measured["Ctrl-C", "stdio"] = stdio.proc.wait(timeout=20)
    measured[("closed stdin",)] = run(EXAMPLE).returncode
    stdout_closed = run(EXAMPLE, command=["/bin/sh", "-c", 'exec 1>&- "$@"', "sh", *SERVER])
    measured[("stdout is closed",)] = stdout_closed.returncode
    table = exit_code_table()
    for words, code in measured.items():
        assert code in table and all(w in table[code] for w in words), (words, code, table.get(code))
