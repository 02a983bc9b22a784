"""The MCP App harness (tests/support/app_host.py) sees what a host sees: small hand-written views, each
proving one thing the harness must notice (what the view shows, its handshake, its requests, its errors, a
view that never starts)."""

from __future__ import annotations

import json
import os
import struct
import time
from pathlib import Path

import app_host
import pytest
from app_host import ViewError, show_card
from conftest import need

pytestmark = pytest.mark.heavy  # starts headless Chromium, npm ci on first use

# The view's side of the spec's handshake, written by hand (no SDK): ui/initialize, then initialized; what
# it shows is what the host delivered. `BEFORE` and `AFTER` slot in each view's own behaviour.
VIEW = """<!doctype html>
<html><head><meta charset="utf-8"><title>test view</title></head>
<body><div id="context"></div><div id="input"></div><pre id="result" style="margin:0">waiting</pre>
<script>
const send = (message) => window.parent.postMessage({ jsonrpc: "2.0", ...message }, "*");
const show = (id, text) => { document.getElementById(id).textContent = text; };
window.addEventListener("message", (event) => {
  const { id, method, params, result } = event.data || {};
  if (id === 1 && result) {
    let reach = "isolated";
    try { void window.top.document.title; reach = "host reachable"; } catch (e) {}
    const styled = result.hostContext?.styles?.variables?.["--color-text-primary"] ? "styled" : "unstyled";
    const scheme = matchMedia("(prefers-color-scheme: dark)").matches ? "dark" : "light";
    const host = `host=${result.hostInfo?.name} ${reach}`;
    show("context", `theme=${result.hostContext?.theme} ${styled} scheme=${scheme} ${host}`);
    send({ method: "ui/notifications/initialized" });
    AFTER
  } else if (method === "ui/notifications/tool-input") {
    show("input", "input=" + JSON.stringify(params.arguments));
  } else if (method === "ui/notifications/tool-result") {
    show("result", params.structuredContent.say);
  } else if (method === "ui/resource-teardown") {
    send({ id, result: {} });
  }
});
BEFORE
</script></body></html>
"""
INITIALIZE = """send({ id: 1, method: "ui/initialize", params: { appInfo: { name: "test-view", version: "1" },
  appCapabilities: {}, protocolVersion: "2026-01-26" } });"""


def view(before: str = INITIALIZE, after: str = "") -> str:
    return VIEW.replace("BEFORE", before).replace("AFTER", after)


def result(say: str) -> dict[str, object]:
    return {"content": [{"type": "text", "text": say}], "structuredContent": {"say": say}}


# Markup, another writing system and right-to-left text, astral characters, a repeat of the previous result
# (a text that does not change must still count as rendered).
SAYINGS = ["<b>not bold</b> & </pre>", "مرحبا Robot 🤖 𝔘", "line one\nline two", "line one\nline two"]


def leftover_browsers(grace: float = 5.0) -> list[str]:
    """Chromium processes started by this test process's harness calls (their profile names our pid) that
    are still there after `grace` seconds (a killed process takes a moment to go)."""
    need(Path("/proc/self/cmdline").exists(), "/proc (Linux), to look for leftover processes")
    mark = f"app-host-{os.getpid()}-".encode()
    deadline = time.monotonic() + grace
    while True:
        found = []
        for cmdline in Path("/proc").glob("[0-9]*/cmdline"):
            try:
                if mark in cmdline.read_bytes():
                    found.append(cmdline.parent.name)
            except OSError:
                pass
        if not found or time.monotonic() > deadline:
            return found
        time.sleep(0.1)


@pytest.mark.parametrize("sandbox_proxy", [False, True])
def test_a_view_that_follows_the_handshake_shows_every_result_in_turn(
    tmp_path: Path, sandbox_proxy: bool
) -> None:
    results = [result(s) for s in SAYINGS]
    shown = show_card(
        view(), results, tool_input={"robot": "bob"}, screenshot_dir=tmp_path, sandbox_proxy=sandbox_proxy
    )
    assert shown.handshake == ["ui/initialize", "ui/notifications/initialized"]
    assert len(shown.texts) == len(SAYINGS)
    for text, say in zip(shown.texts, SAYINGS):
        context, tool_input, *lines = text.split("\n")
        assert context == "theme=light styled scheme=light host=robot-md-mcp-test-host isolated"
        assert json.loads(tool_input.removeprefix("input=")) == {"robot": "bob"}
        assert "\n".join(lines) == say
    assert shown.console_errors == [] and shown.requests == [] and shown.host_errors == []
    assert [p.parent for p in shown.screenshots] == [tmp_path] * len(SAYINGS)
    assert all(p.read_bytes().startswith(b"\x89PNG\r\n\x1a\n") for p in shown.screenshots)
    assert shown.answered_teardown
    assert leftover_browsers() == []


def test_the_dark_theme_reaches_the_views_host_context_and_late_rendering_is_waited_for() -> None:
    # This view draws each result a little after it arrives, as a view that lays out asynchronously does;
    # it does not answer ui/resource-teardown.
    late = (
        view()
        .replace("send({ id, result: {} });", "")
        .replace(
            'show("result", params.structuredContent.say);',
            """
      setTimeout(() => show("result", params.structuredContent.say), 150);""",
        )
    )
    shown = show_card(late, [result("first"), result("second")], theme="dark", host_styles=False)
    assert [text.split("\n")[0] for text in shown.texts] == [
        "theme=dark unstyled scheme=dark host=robot-md-mcp-test-host isolated"
    ] * 2
    assert [text.split("\n")[-1] for text in shown.texts] == ["first", "second"]
    assert not shown.answered_teardown


def test_the_frame_follows_the_views_size_and_the_screenshot_holds_all_of_it(tmp_path: Path) -> None:
    tall = """document.body.style.margin = "0";
      document.getElementById("result").style.height = "1500px";
      send({ method: "ui/notifications/size-changed", params: { height: document.body.scrollHeight } });"""
    shown = show_card(view(after=tall), [result("tall")], screenshot_dir=tmp_path)
    assert shown.handshake[-1] == "ui/notifications/size-changed"
    (png,) = shown.screenshots
    width, height = struct.unpack(">II", png.read_bytes()[16:24])  # the PNG's IHDR
    assert width == 720 and 1500 <= height <= 1560


@pytest.mark.parametrize("sandbox_proxy", [False, True])
def test_requests_csp_refusals_and_errors_of_the_view_are_each_seen_once(sandbox_proxy: bool) -> None:
    # An image from the view's own origin is allowed by the default CSP (a request, a 404 here); a fetch and
    # an image elsewhere are refused by it: attempts all the same, and console errors that name them. So is
    # eval (no 'unsafe-eval': the SDK's own view bundle needs it). And the view's own errors of every kind.
    misbehave = """
      const img = new Image(); img.src = "/own-origin.png"; document.body.append(img);
      const far = new Image(); far.src = "http://192.0.2.1/pixel.png"; document.body.append(far);
      fetch("https://example.com/beacon").catch(() => {});
      try { eval("1"); } catch (e) {}
      setTimeout(() => { throw new Error("thrown-4711"); });
      setTimeout(() => { throw "a-string-4712"; });
      Promise.reject(new Error("rejected-4713"));
      console.error("logged-4714");"""
    shown = show_card(view(after=misbehave), [result("hello")], sandbox_proxy=sandbox_proxy)
    assert sorted(url.rsplit("/", 1)[-1] for url in shown.requests) == [
        "beacon",
        "own-origin.png",
        "pixel.png",
    ]
    errors = "\n".join(shown.console_errors)
    assert "https://example.com/beacon" in errors and "http://192.0.2.1/pixel.png" in errors
    assert "Content Security Policy refused eval (script-src)" in errors
    own = ("thrown-4711", "a-string-4712", "rejected-4713", "logged-4714")
    for mark in own:  # the view's own errors: each counted once
        assert len([e for e in shown.console_errors if mark in e]) == 1, (mark, shown.console_errors)
    # and what the CSP refused, and the own-origin image's 404: nothing else
    refused = ("example.com/beacon", "192.0.2.1/pixel.png", "eval", "404 (Not Found)")
    assert all(any(m in e for m in own + refused) for e in shown.console_errors), shown.console_errors
    assert shown.host_errors == []
    assert shown.texts[0].endswith("hello")


@pytest.mark.parametrize("before", ["", INITIALIZE.replace("ui/initialize", "ui/initialise")])
def test_a_view_that_never_starts_is_a_one_line_error(before: str) -> None:
    with pytest.raises(ViewError, match="never sent ui/initialize") as raised:
        show_card(view(before=before), [result("never shown")], timeout=3)
    assert "\n" not in str(raised.value)
    assert leftover_browsers() == []


def test_a_view_that_never_says_initialized_is_named() -> None:
    silent = view().replace('send({ method: "ui/notifications/initialized" });', "")
    with pytest.raises(ViewError, match="never sent ui/notifications/initialized"):
        show_card(silent, [result("never shown")], timeout=3)


def test_a_view_that_never_stands_still_is_named() -> None:
    ticking = view(after='let n = 0; setInterval(() => show("input", `tick ${n++}`), 50);')
    with pytest.raises(ViewError, match="the view's text never settled after result 1"):
        show_card(ticking, [result("moving")], timeout=3)


@pytest.mark.parametrize("after", [1.0, 5.0])  # while Chromium starts, and while the view is shown
def test_a_driver_stopped_midway_leaves_no_browser(after: float, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(app_host, "SLACK_SECONDS", after - app_host.LAUNCH_SECONDS - 30)
    with pytest.raises(ViewError, match="the host driver did not finish within"):
        show_card(view(before=""), [result("never shown")], timeout=30)
    assert leftover_browsers() == []


@pytest.mark.parametrize(
    "bad",
    [
        {"structuredContent": {"say": "no content"}},
        {"content": "not a list"},
        {"content": [{"type": "nope"}]},
    ],
)
def test_a_result_no_host_would_accept_is_named(bad: dict[str, object]) -> None:
    with pytest.raises(ViewError, match=r"result 2 is not a CallToolResult"):
        show_card(view(), [result("fine"), bad])
