"""Show an MCP App view (a `ui://` HTML resource) exactly as a web host does, and report what it showed.

The host page runs the real host SDK (npm `@modelcontextprotocol/ext-apps`, its AppBridge) in headless
Chromium (Debian's `chromium`), driven by puppeteer-core from `tests/app_host/driver.mjs`. The view is served
from a second 127.0.0.1 origin with the spec's default CSP as an HTTP header, in an iframe with the sandbox
permissions the spec gives a view's sandbox. The npm packages are test-only: `npm ci` from the committed
`tests/app_host/package-lock.json` into `.cache/app-host/` on first use.

The view's document is the frame's own, or (`sandbox_proxy=True`) written into an inner frame by the spec's
sandbox proxy, as web hosts do. What it leaves out: an MCP server behind the host (the view's tools/call and
resources/read are answered "method not found").
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from conftest import ROOT, need

SOURCE = Path(__file__).resolve().parent.parent / "app_host"
CACHE = ROOT / ".cache" / "app-host"
LAUNCH_SECONDS = 60.0  # starting Chromium on a loaded 2-core machine; not part of show_card's timeout
SLACK_SECONDS = 30.0  # beyond both, before the driver itself is stopped


class ViewError(Exception):
    """A step of the host's side never happened (one line: which one)."""


@dataclass
class Shown:
    texts: list[str]  # the view frame's visible text (innerText) after each delivered result
    console_errors: list[str]  # console errors from the view's frame (CSP violations, exceptions included)
    requests: list[str]  # every request the view's frame made after its own document (CSP-refused too)
    handshake: list[str]  # JSON-RPC methods the view sent, in order
    screenshots: list[Path] = field(default_factory=list)  # one per result, when screenshot_dir is given
    host_errors: list[str] = field(default_factory=list)  # errors on the host page's side (the bridge's)
    answered_teardown: bool = False  # the view answered the host's ui/resource-teardown (within 1 s)


BROWSERS = ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable")


def chromium() -> str:
    """$APP_HOST_CHROMIUM, else Debian's Chromium binary (its /usr/bin/chromium is a shell wrapper that does
    not exec, so stopping it would leave the browser), else a Chromium or Chrome on PATH."""
    candidates = [
        os.environ.get("APP_HOST_CHROMIUM"),
        "/usr/lib/chromium/chromium",
        *map(shutil.which, BROWSERS),
    ]
    found = next((p for p in candidates if p and os.access(p, os.X_OK)), None)
    need(found is not None, "chromium (Debian: apt-get install chromium) to show an MCP App view")
    return found or ""


def node_major() -> int:
    """The major version of `node` on PATH (0 when there is none)."""
    node = shutil.which("node")
    if node is None:
        return 0
    done = subprocess.run([node, "--version"], capture_output=True, text=True, timeout=60)
    digits = done.stdout.strip().lstrip("v").split(".")[0]
    return int(digits) if digits.isdigit() else 0


def installed() -> Path:
    """.cache/app-host/ with the committed lock's packages (npm ci when the lock changed) and the driver."""
    need(node_major() >= 18, "node 18 or later (puppeteer-core 24 needs it) to drive Chromium")
    need(shutil.which("npm") is not None, "npm to install the host SDK, puppeteer-core and esbuild")
    CACHE.mkdir(parents=True, exist_ok=True)
    lock = (SOURCE / "package-lock.json").read_bytes()
    with open(CACHE / ".lock", "w") as guard:
        if sys.platform != "win32":
            import fcntl  # two xdist workers must not run npm ci into one folder at once

            fcntl.flock(guard, fcntl.LOCK_EX)
        stamp = CACHE / "node_modules" / ".installed-from.json"
        if not stamp.exists() or stamp.read_bytes() != lock:
            for name in ("package.json", "package-lock.json"):
                shutil.copyfile(SOURCE / name, CACHE / name)
            done = subprocess.run(
                ["npm", "ci", "--no-audit", "--no-fund", "--loglevel=error"],
                cwd=CACHE,
                capture_output=True,
                text=True,
                timeout=600,
                stdin=subprocess.DEVNULL,
            )
            need(done.returncode == 0, f"npm ci in {CACHE} failed: {done.stderr[-1000:]}")
            stamp.write_bytes(lock)
        for name in ("driver.mjs", "host.mjs"):  # replaced whole: another worker may be starting node on it
            text = (SOURCE / name).read_bytes()
            if not (CACHE / name).exists() or (CACHE / name).read_bytes() != text:
                (CACHE / f"{name}.new").write_bytes(text)
                os.replace(CACHE / f"{name}.new", CACHE / name)
    return CACHE


def show_card(
    html: str,
    results: list[dict[str, Any]],
    *,
    theme: str = "light",
    tool_input: dict[str, Any] | None = None,
    screenshot_dir: Path | None = None,
    timeout: float = 30.0,
    host_styles: bool = True,
    sandbox_proxy: bool = False,
) -> Shown:
    """Frame `html` as a host does, hand it each CallToolResult in `results` in turn (after the handshake
    and the tool input), and return what it showed; ViewError names the step that never happened.

    hostContext carries `theme` (the page's prefers-color-scheme follows it) and, unless `host_styles` is
    false, some of the spec's standard style variables. The frame is 720 px wide; its height follows the
    view's ui/notifications/size-changed (160 px until then). A result counts as rendered once the view's
    listeners have handled it and two frames were drawn, and its text and height then stay still for 0.3 s.
    `timeout` bounds the view's steps; starting Chromium has its own bound. With `sandbox_proxy` the frame
    holds the spec's sandbox proxy (a web host's way), which writes the view into an inner frame."""
    if theme not in ("light", "dark"):
        raise ValueError(f"theme is 'light' or 'dark' (the spec's two), not {theme!r}")
    browser = chromium()
    folder = installed()
    with tempfile.TemporaryDirectory(prefix=f"app-host-{os.getpid()}-", ignore_cleanup_errors=True) as tmp:
        job = {
            "html": html,
            "results": results,
            "theme": theme,
            "toolInput": tool_input or {},
            "screenshotDir": str(screenshot_dir.resolve()) if screenshot_dir else None,  # node runs in .cache
            "timeout": timeout,
            "hostStyles": host_styles,
            "sandboxProxy": sandbox_proxy,
            "launchTimeout": LAUNCH_SECONDS,
            "chromium": browser,
            "profile": str(Path(tmp) / "profile"),
            "pidFile": str(Path(tmp) / "chromium.pid"),
        }
        (Path(tmp) / "job.json").write_text(json.dumps(job), encoding="utf-8")
        if screenshot_dir:
            screenshot_dir.mkdir(parents=True, exist_ok=True)
        answer = _drive(folder, Path(tmp), timeout + LAUNCH_SECONDS + SLACK_SECONDS)
    if "error" in answer:
        raise ViewError(answer["error"])
    return Shown(
        texts=answer["texts"],
        console_errors=answer["console_errors"],
        requests=answer["requests"],
        handshake=answer["handshake"],
        screenshots=[Path(p) for p in answer["screenshots"]],
        host_errors=answer["host_errors"],
        answered_teardown=answer["answered_teardown"],
    )


def _drive(folder: Path, tmp: Path, limit: float) -> dict[str, Any]:
    """Run the driver; whatever happens, nothing it started outlives this call."""
    process = subprocess.Popen(
        ["node", str(folder / "driver.mjs"), str(tmp / "job.json")],
        cwd=folder,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        start_new_session=True,
    )
    try:
        out, err = process.communicate(timeout=limit)
    except subprocess.TimeoutExpired:
        raise ViewError(f"the host driver did not finish within {limit:.0f} s") from None
    finally:
        if process.poll() is None:  # puppeteer's SIGTERM handler kills Chromium, even one still starting
            process.terminate()
            try:
                process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                pass
        _kill_group(process.pid)  # what is left of the driver's group (esbuild's service)
        _kill_group(_read_pid(tmp / "chromium.pid"))  # puppeteer starts Chromium in a group of its own
        process.kill()
        process.wait()
    lines = out.decode("utf-8", "replace").strip().splitlines()
    try:
        answer: dict[str, Any] = json.loads(lines[-1])
    except (IndexError, ValueError):
        detail = err.decode("utf-8", "replace").strip().splitlines()[-1:] or ["no output"]
        raise ViewError(f"the host driver failed: {detail[0]}") from None
    return answer


def _read_pid(path: Path) -> int | None:
    try:
        return int(path.read_text())
    except (OSError, ValueError):
        return None


def _kill_group(pid: int | None) -> None:
    if pid is None or sys.platform == "win32":
        return
    try:
        os.killpg(pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass
