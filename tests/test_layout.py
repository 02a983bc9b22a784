"""The module reads top-down: each numbered section uses only the sections above it (type annotations
included), and the sections before the server never import the SDK; and what the docs and the test files
say is in a section is there."""

from __future__ import annotations

import ast
import functools
import importlib.util
import re
import textwrap
from pathlib import Path

import pytest
from conftest import ROOT, need

SOURCE = (ROOT / "robot_md_mcp.py").read_text(encoding="utf-8")
BANNER = re.compile(r"^# (\d+)\. ", re.M)


def banners(source: str) -> list[tuple[int, int]]:
    """(first line, section number) of each numbered banner."""
    return [(source.count("\n", 0, m.start()) + 1, int(m[1])) for m in BANNER.finditer(source)]


section_starts = functools.cache(lambda: banners(SOURCE))
parse = functools.cache(ast.parse)  # the module parsed once per session (a parse takes half a second)
module_names = functools.cache(lambda: defined_names(parse(SOURCE)))


def section_of(line: int, starts: list[tuple[int, int]]) -> int:
    return max((n for first, n in starts if first <= line), default=0)


def defined_names(tree: ast.Module) -> dict[str, int]:
    """Top-level names and the line that defines each (first definition)."""
    names: dict[str, int] = {}
    for node in tree.body:
        targets: list[ast.expr] = []
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.setdefault(node.name, node.lineno)
        elif isinstance(node, ast.Assign):
            targets = node.targets
        elif isinstance(node, ast.AnnAssign):
            targets = [node.target]
        for target in targets:
            for name in ast.walk(target):
                if isinstance(name, ast.Name):
                    names.setdefault(name.id, node.lineno)
    return names


def local_names(node: ast.stmt) -> set[str]:
    """Parameters and names assigned inside a top-level definition (they shadow the module's)."""
    if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
        return set()
    local = set()
    for sub in ast.walk(node):
        if isinstance(sub, ast.arg):
            local.add(sub.arg)
        elif isinstance(sub, ast.Name) and isinstance(sub.ctx, ast.Store):
            local.add(sub.id)
    return local


def upward_uses(source: str) -> list[str]:
    """Each use of a top-level name defined in a later section, type annotations included."""
    tree = parse(source)
    starts, names = banners(source), defined_names(tree)
    upward = set()
    for node in tree.body:
        here = section_of(node.lineno, starts)
        local = local_names(node)
        for used in ast.walk(node):
            if not isinstance(used, ast.Name) or not isinstance(used.ctx, ast.Load):
                continue
            if used.id in names and used.id not in local:
                there = section_of(names[used.id], starts)
                if there > here:
                    upward.add(f"§{here} line {used.lineno} uses {used.id} from §{there}")
    return sorted(upward)


def test_each_section_uses_only_those_above_it() -> None:
    starts = section_starts()
    assert [n for _, n in starts] == list(range(1, len(starts) + 1)), "sections numbered 1, 2, 3, … in order"
    upward = upward_uses(SOURCE)
    assert not upward, "\n".join(upward)


def test_a_use_from_a_later_section_is_found_in_code_and_in_annotations() -> None:
    source = (
        "# 1. First\n"
        "class Arm:\n    grip: Gripper | None = None\n"
        "def reach(arm: Arm) -> Gripper:\n    return make()\n"
        "# 2. Second\n"
        "class Gripper:\n    arm: Arm\n"
        "def make() -> Gripper:\n    return Gripper()\n"
    )
    assert upward_uses(source) == [
        "§1 line 3 uses Gripper from §2",
        "§1 line 4 uses Gripper from §2",
        "§1 line 5 uses make from §2",
    ]


def test_the_sections_before_the_server_never_import_the_sdk() -> None:
    starts = section_starts()
    first_server_line = min(first for first, n in starts if n == 7)  # 7. Live updates
    before = [n for n in parse(SOURCE).body if n.lineno < first_server_line]
    runtime = [n for n in before if not (isinstance(n, ast.If) and "TYPE_CHECKING" in ast.unparse(n.test))]
    imported = {
        alias.name.split(".")[0]
        for node in runtime
        for sub in ast.walk(node)
        if isinstance(sub, (ast.Import, ast.ImportFrom))
        for alias in (sub.names if isinstance(sub, ast.Import) else [ast.alias(sub.module or "")])
    }
    assert not imported & {"mcp", "starlette", "uvicorn"}, imported


# --- small functions: cyclomatic complexity (radon) and length --------------------------------------

MAX_COMPLEXITY = 15
MAX_LINES = 80


def oversized(source: str) -> list[str]:
    """`name (line N): complexity C, L lines` for each function, method or closure over the limits."""
    need(importlib.util.find_spec("radon") is not None, "radon (the test extra)")
    from radon.complexity import cc_visit

    todo, found = list(cc_visit(source)), []
    while todo:
        block = todo.pop()
        todo += [*getattr(block, "methods", []), *getattr(block, "closures", [])]
        lines = block.endline - block.lineno + 1
        if not hasattr(block, "methods") and (block.complexity > MAX_COMPLEXITY or lines > MAX_LINES):
            found.append(f"{block.name} (line {block.lineno}): complexity {block.complexity}, {lines} lines")
    return sorted(found)


@pytest.mark.parametrize("branches", [0, MAX_COMPLEXITY - 1, MAX_COMPLEXITY, 40])
def test_the_gate_measures_complexity_and_length(branches: int) -> None:
    """A function with n ifs has complexity n + 1; a nested one and a method count too."""
    body = "".join(f"    if x == {i}:\n        return {i}\n" for i in range(branches))
    source = f"def f(x):\n{body}    return -1\n"
    over = branches + 1 > MAX_COMPLEXITY or 2 * branches + 2 > MAX_LINES
    assert oversized(source) == (
        [f"f (line 1): complexity {branches + 1}, {2 * branches + 2} lines"] if over else []
    )
    nested = "class Arm:\n    def move(self, x):\n        def inner(x):\n" + textwrap.indent(body, "        ")
    nested += "            return -1\n        return inner(x)\n"
    assert bool(oversized(nested)) is (branches + 1 > MAX_COMPLEXITY or 2 * branches + 2 > MAX_LINES)


@pytest.mark.parametrize(
    "path", [ROOT / "robot_md_mcp.py", *sorted((ROOT / "packaging").glob("*.py"))], ids=lambda p: p.name
)
def test_functions_are_small(path: Path) -> None:
    found = oversized(path.read_text(encoding="utf-8"))
    assert not found, "\n".join(found)


# A name and the section it is said to be in, either way round: "`TOOLS` (section 7)", "`parse` (§2)",
# "`VERBS` row (section 10)", "(`serve_settings`, section 10)", "(§8 `classify_line`", "Section 10,
# `install`", "§8's `_Batches`".
NAME_THEN_SECTION = re.compile(r"`([A-Za-z_][\w.]*)`(?:\s+row)?(?:\s*\(|,\s*)(?:section|§)\s*(\d+)\b", re.I)
SECTION_THEN_NAME = re.compile(r"(?:section|§)\s*(\d+)(?:'s)?,?\s+`([A-Za-z_][\w.]*)`", re.I)
# A row of development.md's table of sections: "| 1. Reading | what | `name`, `name` |".
SECTION_ROW = re.compile(r"^\| (\d+)\. [^|]*\|[^|]*\|(.*)\|$", re.M)
DOCS = [*sorted((ROOT / "docs").glob("*.md")), ROOT / "README.md"]


def section_claims(text: str) -> list[tuple[str, int]]:
    """Every (name, section) a text claims."""
    claims = [(name, int(n)) for name, n in NAME_THEN_SECTION.findall(text)]
    claims += [(name, int(n)) for n, name in SECTION_THEN_NAME.findall(text)]
    for n, names in SECTION_ROW.findall(text):
        claims += [(name, int(n)) for name in re.findall(r"`([A-Za-z_][\w.]*)`", names)]
    return claims


def wrong_claims(claims: list[tuple[str, int]]) -> list[str]:
    """The claims about the module that are not true: the name is not defined there (for
    `Class.attribute`: the class is, and has it)."""
    import robot_md_mcp

    names, starts = module_names(), section_starts()
    wrong = []
    for name, claimed in claims:
        top, _, attribute = name.partition(".")
        if top not in names or (attribute and not hasattr(getattr(robot_md_mcp, top), attribute)):
            wrong.append(f"{name} (said to be in §{claimed}) is not defined in the module")
        elif section_of(names[top], starts) != claimed:
            wrong.append(f"{name} is in §{section_of(names[top], starts)}, not §{claimed}")
    return wrong


def test_every_section_the_docs_name_a_definition_in_is_where_it_is() -> None:
    claims = {doc.name: section_claims(doc.read_text(encoding="utf-8")) for doc in DOCS}
    assert sum(map(len, claims.values())) >= 30, claims  # the table of sections, the how-to-change table
    wrong = [f"{doc}: {line}" for doc, found in claims.items() for line in wrong_claims(found)]
    assert not wrong, "\n".join(wrong)


def test_each_section_test_file_names_its_section() -> None:
    """A test file that opens with "Section N" is about what section N's banner says, and any name
    it gives beside the number is defined there."""
    titles = {int(m[1]): m[2].lower() for m in re.finditer(r"^# (\d+)\. (.*)$", SOURCE, re.M)}
    wrong = []
    for test in sorted((ROOT / "tests").glob("test_*.py")):
        opening = test.read_text(encoding="utf-8").split("\n\n", 1)[0]
        said = re.match(r'"""Section (\d+)\b', opening)
        if said is None:
            continue
        words = {w for w in re.findall(r"[a-z]{4,}", titles.get(int(said[1]), ""))}
        if not any(w in opening.lower() for w in words):
            wrong.append(f"{test.name} says section {said[1]}, whose banner is {titles.get(int(said[1]))!r}")
        wrong += [f"{test.name}: {line}" for line in wrong_claims(section_claims(opening))]
    assert not wrong, "\n".join(wrong)


def test_no_test_file_imports_another() -> None:
    """What test files share lives in tests/support (docs/development.md)."""
    tests = {path.stem for path in (ROOT / "tests").glob("test_*.py")}
    imports = re.compile(r"^\s*(?:from|import)\s+(test_\w+)", re.M)
    found = [
        f"{path.relative_to(ROOT)}: {name}"
        for path in sorted((ROOT / "tests").rglob("*.py"))
        for name in imports.findall(path.read_text(encoding="utf-8"))
        if name in tests
    ]
    assert len(tests) >= 40 and not found, found


def test_the_claims_finder_sees_both_orders_and_the_table() -> None:
    text = (
        "a `TOOLS` (section 7) and (§8 `classify_line`, or §9 `HttpGuard`)\n| 2. Parsing | x | `parse` |\n"
        "its `VERBS` row (section 10); read at start (`serve_settings`, section 10);\n"
        "through §8's `_Batches`\n"
    )
    assert sorted(section_claims(text)) == [
        ("HttpGuard", 9),
        ("TOOLS", 7),
        ("VERBS", 10),
        ("_Batches", 8),
        ("classify_line", 8),
        ("parse", 2),
        ("serve_settings", 10),
    ]
    assert wrong_claims([("TOOLS", 7), ("nothing_here", 1), ("ManifestFile.version_async", 6)]) == [
        "TOOLS is in §8, not §7",
        "nothing_here (said to be in §1) is not defined in the module",
    ]


# Section 10 reads as process start, then the command line, then install: each part under its sub-banner.
COMMAND_LINE_PARTS = {
    "# --- process start": ("main", "run_command", "invoked_as", "launch_command", "prepare_the_process"),
    "# --- the command line": ("VERBS", "parse_command_line", "run_validate", "run_serve", "serve_settings"),
    "# --- install": ("run_install", "run_uninstall", "edit_config", "claude_code_add"),
}


def test_the_command_line_section_reads_process_start_command_line_install() -> None:
    ten = next(first for first, n in section_starts() if n == 11)
    lines = SOURCE.splitlines()
    starts = [next(i for i, line in enumerate(lines) if line.startswith(b)) + 1 for b in COMMAND_LINE_PARTS]
    assert ten < starts[0] < starts[1] < starts[2], starts
    names = module_names()
    for (banner, defined), first, end in zip(COMMAND_LINE_PARTS.items(), starts, [*starts[1:], len(lines)]):
        assert all(first < names[n] < end for n in defined), (banner, {n: names[n] for n in defined})


# --- the threat model: each defence names its row -----------------------------------------------------
THREAT_MODEL = (ROOT / "docs" / "threat-model.md").read_text(encoding="utf-8")
THREAT_ROWS = set(re.findall(r"^\| (T-[A-Z]+(?:-[A-Z]+)*-\d+) \|", THREAT_MODEL, re.MULTILINE))
# Rows no comment in sections 9-11 or packaging/ answers: not defended, handed over, defended by the budgets
# of sections 1-2 (T-FILE-1, T-FILE-3), or by the rows they repeat (T-HTTP-LAN-2).
ROWS_WITHOUT_A_COMMENT = {
    *("T-HTTP-LOOP-6", "T-HTTP-LOOP-7", "T-BUNDLE-1", "T-FILE-1", "T-FILE-3", "T-HTTP-LAN-2"),
}


def threat_comments() -> dict[str, list[str]]:
    """Each file's `# threat:` comments, their text after the colon."""
    files = [ROOT / "robot_md_mcp.py", *sorted((ROOT / "packaging").glob("*.py"))]
    said = {f.name: f.read_text(encoding="utf-8") for f in files}
    found = {name: re.findall(r"# threat: (.+)$", text, re.MULTILINE) for name, text in said.items()}
    return {name: said for name, said in found.items() if said or name != "package_main.py"}


def test_every_defence_names_a_row_of_the_threat_model() -> None:
    """docs/threat-model.md: every `# threat:` comment names rows that exist (or says contract, none,
    handed over), every row defended here is named by one, and each file of packaging/ says its place."""
    comments = threat_comments()
    assert all(comments.values()), {name for name, said in comments.items() if not said}
    named = set()
    for name, said in comments.items():
        for text in said:
            ids = set(re.findall(r"T-[A-Z]+(?:-[A-Z]+)*-\d+", text))
            assert ids or text.startswith(("contract", "none", "handed")), (name, text)
            assert ids <= THREAT_ROWS, (name, text, ids - THREAT_ROWS)
            named |= ids
    assert THREAT_ROWS - ROWS_WITHOUT_A_COMMENT <= named, sorted(THREAT_ROWS - ROWS_WITHOUT_A_COMMENT - named)
    assert len(THREAT_ROWS) >= 20  # the model's tables were read


def test_the_sections_that_face_peers_name_their_rows() -> None:
    """Sections 9-11 each carry their defences' comments (not only a file-level one)."""
    starts = dict((n, first) for first, n in section_starts())
    lines = SOURCE.splitlines()
    for number, at_least in ((9, 10), (10, 30), (11, 1)):
        part = "\n".join(lines[starts[number] : starts.get(number + 1, len(lines))])
        assert part.count("# threat: ") >= at_least, (number, part.count("# threat: "))
