"""The robot card (MCP Apps): the `ui://` page a host reads from this server, framed by the real host SDK
in headless Chromium (tests/support/app_host.py), handed the real `brief` results a stdio server process gave:
what it shows is the manifest (two robots, and one again after an edit), in both themes, with no console
error and no request from its frame. The quick checks of the resource itself come first."""

from __future__ import annotations

import random
import re
import shutil
from pathlib import Path
from typing import Any

import pytest
import yaml
from app_host import show_card
from conftest import CORPUS, EXAMPLE, ROOT
from serving import RawServer, in_process

import robot_md_mcp as rmm

WHEELED = CORPUS / "docsrecon__turtlebot4.ROBOT.md"
SCREENSHOTS = ROOT / ".cache" / "robot-card"  # the CI workflow uploads this folder


# --- the resource: quick --------------------------------------------------------------


@pytest.mark.anyio
@pytest.mark.parametrize("mode", ["legacy", "auto"])
async def test_the_card_is_one_page_for_every_manifest(mode: str, manifest_path, tmp_path: Path) -> None:
    """Read as a host reads it (resources/read of the tool's _meta.ui.resourceUri): the same bytes
    whatever the file holds, even a file that does not parse; mimeType exactly the spec's; listed in
    resources/list (gateways and hosts look there); the extension listed in the 2026-07-28 era."""
    pages: list[str | None] = []
    for content in [EXAMPLE.read_bytes(), WHEELED.read_bytes(), b"no frontmatter at all"]:
        path = tmp_path / f"{len(pages)}" / "ROBOT.md"
        path.parent.mkdir()
        path.write_bytes(content)
        async with in_process(path, mode) as client:
            tools = {t.name: t for t in (await client.list_tools()).tools}
            uri = tools["brief"].meta["ui"]["resourceUri"]  # type: ignore[index]
            (page,) = (await client.read_resource(uri)).contents
            assert page.mime_type == "text/html;profile=mcp-app"
            pages.append(getattr(page, "text", None))
            if content.startswith(b"---"):
                assert uri in [r.uri for r in (await client.list_resources()).resources]
            extensions = client.server_capabilities.extensions if client.server_capabilities else None
            if mode == "auto":
                assert extensions == {"io.modelcontextprotocol/ui": {}}
    assert pages == [rmm.CARD_HTML] * 3


def test_the_card_needs_no_network_and_inserts_text_only() -> None:
    """Under the default CSP nothing outside the page loads, so it has nothing to load; manifest text
    is set with textContent, never parsed as markup (the browser test below shows the rest)."""
    html = rmm.CARD_HTML
    assert html.startswith("<!DOCTYPE html>") and html.rstrip().endswith("</html>")
    assert not re.search(r"\b(src|href)\s*=|url\(|@import|fetch\(|XMLHttpRequest|WebSocket|https?://", html)
    assert not re.search(
        r"innerHTML|outerHTML|insertAdjacentHTML|document\.write|eval\(|Function\(|srcdoc", html
    )
    assert "textContent" in html


# --- in a real browser, as a host frames it: heavy --------------------------------------


def briefs(server: RawServer, path: Path, versions: list[bytes]) -> list[dict[str, Any]]:
    """`brief`'s CallToolResult (as the wire carried it) for each version the file takes in turn."""
    found = []
    for content in versions:
        path.write_bytes(content)
        answer = server.request("tools/call", {"name": "brief", "arguments": {}}, timeout=30)
        found.append(answer["result"])
    return found


def expected(content: bytes) -> tuple[list[str], list[str]]:
    """What the card must show of a manifest, read from its YAML here (never from the card's data):
    its name, capabilities, declared limits and gate scopes; and the limits it must mark not declared."""
    front = yaml.safe_load(content.decode("utf-8").split("---")[1])
    safety = front.get("safety") or {}
    shown = [front["metadata"]["robot_name"], *front.get("capabilities", [])]
    shown += [
        str(safety[k])
        for k in ("payload_kg", "max_joint_velocity_dps", "max_linear_velocity_ms")
        if k in safety
    ]
    shown += [gate["scope"] for gate in safety.get("hitl_gates", [])]
    if "estop" in safety:
        shown.append(f"response {safety['estop']['response_ms']} ms")
    labels = {
        "payload_kg": "Payload limit",
        "max_joint_velocity_dps": "Max joint velocity",
        "max_linear_velocity_ms": "Max linear velocity",
        "workspace_bounds_m": "Workspace bounds",
        "failsafe_behavior": "Failsafe on lost comms",
    }
    return shown, [label for key, label in labels.items() if key not in safety]


def edited(content: bytes) -> bytes:
    """bob, edited: a new capability, a lower payload limit, and a workspace bound declared."""
    text = content.decode("utf-8")
    text = text.replace("  - status.report\n", "  - status.report\n  - arm.wave\n", 1)
    text = re.sub(r"payload_kg: [0-9.]+", "payload_kg: 0.25", text, count=1)
    text = text.replace("safety:\n", "safety:\n  workspace_bounds_m: [0.4, 0.4, 0.3]\n", 1)
    assert text.encode() != content
    return text.encode("utf-8")


# (theme, the host's style variables given, framed behind the spec's sandbox proxy as web hosts do)
HOSTS = [("light", True, False), ("dark", True, True), ("dark", False, False)]


@pytest.mark.heavy
@pytest.mark.parametrize(
    ("theme", "styled", "proxied"), HOSTS, ids=["light", "dark-proxied", "dark-unstyled"]
)
def test_a_host_shows_the_robot_card(theme: str, styled: bool, proxied: bool, tmp_path: Path) -> None:
    bob, wheeled = EXAMPLE.read_bytes(), WHEELED.read_bytes()
    versions = [bob, wheeled, edited(bob)]
    path = tmp_path / "ROBOT.md"
    path.write_bytes(bob)
    with RawServer(path) as server:
        server.handshake()
        (page,) = server.request("resources/read", {"uri": rmm.CARD_URI}, timeout=30)["result"]["contents"]
        results = briefs(server, path, [*versions, b"no frontmatter here"])
        server.assert_clean()
    assert page["mimeType"] == rmm.CARD_MIME_TYPE
    assert [bool(r.get("isError")) for r in results] == [False, False, False, True]
    folder = SCREENSHOTS / f"{theme}{'-proxied' if proxied else ''}{'' if styled else '-unstyled'}"
    shutil.rmtree(folder, ignore_errors=True)
    shown = show_card(
        page["text"], results, theme=theme, screenshot_dir=folder, host_styles=styled, sandbox_proxy=proxied
    )
    assert shown.console_errors == [] and shown.host_errors == []
    assert shown.requests == []
    assert shown.handshake[:2] == ["ui/initialize", "ui/notifications/initialized"]
    assert "ui/notifications/size-changed" in shown.handshake and shown.answered_teardown
    assert len(shown.texts) == len(results) and len(shown.screenshots) == len(results)
    # A file that cannot be read shows the server's one-line error, not a stale robot.
    assert shown.texts[3].strip() == results[3]["content"][0]["text"] and "bob" not in shown.texts[3]
    for content, text in zip(versions, shown.texts):
        must_show, not_declared = expected(content)
        missing = [s for s in must_show if s not in text]
        assert not missing, (missing, text)
        for label in not_declared:
            assert re.search(rf"{re.escape(label)}\s+not declared", text), (label, text)
        assert "valid" in text and "robot-md-gateway refuses" in text
    assert (
        "arm.wave" in shown.texts[2] and "0.25 kg" in shown.texts[2] and "0.4 x 0.4 x 0.3 m" in shown.texts[2]
    )
    assert "arm.wave" not in shown.texts[0]
    assert all(s.stat().st_size > 5_000 for s in shown.screenshots)


# --- any subset of the card's data draws, each fact once: heavy -----------------------------------

# fmt: off
FIELDS = (
    "name", "identity", "facts", "capabilities", "capabilities_note", "safety", "validation", "signature",
)
# fmt: on
# Drawn by design from no field: the identity line and robot-md's summary repeat the title and the table.
NOT_DRAWN = ("identity", "summary")


def random_card(rng: random.Random, number: int) -> dict[str, Any]:
    """A card's data, every string a token of its own (so a count of it in the text is exact), then a
    random subset of its fields, some null."""
    tokens = iter(f"t{number}x{i}q" for i in range(1_000))

    def token() -> str:
        return next(tokens)

    def rows() -> list[dict[str, Any]]:
        return [{"label": token(), "value": rng.choice([token(), None])} for _ in range(rng.randint(0, 4))]

    def some(fields: dict[str, Any]) -> dict[str, Any]:
        return {key: value for key, value in fields.items() if rng.random() < 0.8}

    full: dict[str, Any] = {
        "name": token(),
        "identity": token(),
        "facts": rows(),
        "capabilities": [token() for _ in range(rng.randint(0, 4))],
        "capabilities_note": rng.choice([token(), None]),
        "safety": some(
            {
                "alert": rng.choice([token(), None]),
                "limits": rows(),
                "gates": [
                    {"scope": rng.choice([token(), None]), "rule": token()} for _ in range(rng.randint(0, 3))
                ],
                "gates_note": rng.choice([token(), None]),
                "also_declared": [token() for _ in range(rng.randint(0, 2))],
            }
        ),
        "validation": some(
            {
                "ok": rng.choice([True, False]),
                "summary": token(),
                "errors": [token() for _ in range(rng.randint(0, 2))],
                "warnings": [token() for _ in range(rng.randint(0, 2))],
            }
        ),
        "signature": rng.choice([token(), None]),
    }
    return {k: (None if rng.random() < 0.15 else v) for k, v in full.items() if rng.random() < 0.7}


def tokens_in(value: Any, drawn: bool = True) -> list[str]:
    """Every token in a card's data (the ones it draws, or the ones it does not)."""
    if isinstance(value, str):
        return [value] if drawn else []
    if isinstance(value, list):
        return [t for v in value for t in tokens_in(v, drawn)]
    if isinstance(value, dict):
        return [t for k, v in value.items() for t in tokens_in(v, (k not in NOT_DRAWN) == drawn)]
    return []


def cards() -> list[dict[str, Any]]:
    rng = random.Random(35)
    every_field_null = dict.fromkeys(FIELDS)
    return [{"name": "only-a-name"}, {}, every_field_null, *(random_card(rng, n) for n in range(40))]


@pytest.mark.heavy
def test_any_part_of_the_card_draws_each_fact_once(tmp_path: Path) -> None:
    """Random subsets of the card's fields (only `name`, none, every field null among them), in a real
    host: no console error, every string drawn exactly once (the identity line and the summary never),
    a card whatever is there; the fields that hold the whole card give the page of the heavy test above."""
    datas = cards()
    results = [{"content": [{"type": "text", "text": "the briefing"}], "structuredContent": d} for d in datas]
    folder = SCREENSHOTS / "subsets"
    shutil.rmtree(folder, ignore_errors=True)
    shown = show_card(rmm.CARD_HTML, results, screenshot_dir=folder)
    assert shown.console_errors == [] and shown.host_errors == []
    assert len(shown.texts) == len(datas)
    assert "only-a-name" in shown.texts[0].splitlines()[0]
    assert shown.texts[1].strip() == "the briefing"  # nothing of a card: the result's text
    for data, text in zip(datas, shown.texts):
        counts = {t: text.count(t) for t in tokens_in(data)}
        assert all(n == 1 for n in counts.values()), (data, counts, text)
        assert all(t not in text for t in tokens_in(data, drawn=False)), (data, text)


def test_the_card_s_values_are_as_written_none_in_quotes() -> None:
    """Every fact of the card's table, RRN included, is the manifest's value as written (visible()), for
    every real manifest: quotes are the briefing's way to set manifest text apart, the card's is a cell."""
    seen = 0
    for path in sorted(CORPUS.glob("*.md")):
        try:
            manifest = rmm.parse(rmm.read_source(path).text)
        except rmm.ManifestError:
            continue
        card = rmm.robot_card(manifest, rmm.validate(manifest))
        rrn = rmm.rrn_of(manifest.frontmatter)
        assert card["facts"][-1] == {"label": "RRN", "value": rmm.visible(rrn) if rrn else "unregistered"}
        for row in card["facts"]:
            value = row["value"]
            assert value is None or not (value.startswith('"') and value.endswith('"')), (path.name, row)
        seen += rrn is not None
    assert seen >= 1
