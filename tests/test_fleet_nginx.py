"""docs/fleet.md's nginx configuration, run: Debian's nginx as its own process under a temporary folder
(`-p`/`-c`) in front of two instances of our server over HTTP (one token for both), and 2026-07-28 (stateless)
clients through it. Requests spread over both; one instance stops (a clean stop, and a crash); requests in
flight end within 5 s (an answer, an HTTP error or a closed connection), listen streams end and the client
listens again, and every later request is answered by the instance left."""

from __future__ import annotations

import os
import re
import shutil
import signal
import socket
import subprocess
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import anyio
import pytest
from conftest import ROOT, need
from http_served import sdk_client
from serving import EXAMPLE, Served, bearer, private_token

pytestmark = pytest.mark.heavy

# What each instance serves: a fleet, as docs/fleet.md's instances do (bob and the example rover).
INSTANCE: Callable[[Path], list[str]] = lambda folder: ["--fleet", str(folder / "robots")]  # noqa: E731
BOB = {"robot": "bob"}
ROBOT_URI = "robot-md://bob/safety"
IN_FLIGHT_SECONDS = 5.0


def nginx_binary() -> str | None:
    return shutil.which("nginx") or next((p for p in ("/usr/sbin/nginx",) if os.access(p, os.X_OK)), None)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def nginx_conf(folder: Path, listen: int, ports: tuple[int, int]) -> str:
    """docs/fleet.md's upstream and server blocks (its ports changed) in a whole nginx.conf whose files
    are all under `folder`."""
    page = (ROOT / "docs" / "fleet.md").read_text(encoding="utf-8")
    found = re.search(r"<!-- fleet:nginx -->\n```nginx\n(.*?)\n```", page, re.DOTALL)
    assert found, "no fleet:nginx block in docs/fleet.md"
    blocks = found[1].replace("8701", str(ports[0])).replace("8702", str(ports[1]))
    blocks = blocks.replace("listen 8700;", f"listen 127.0.0.1:{listen};")
    temps = "\n".join(
        f"    {kind}_temp_path {folder / kind};"
        for kind in ("client_body", "proxy", "fastcgi", "uwsgi", "scgi")
    )
    return f"""worker_processes 1;
pid {folder / "nginx.pid"};
error_log {folder / "error.log"} info;
events {{ worker_connections 256; }}
http {{
    access_log {folder / "access.log"};
{temps}
{blocks}
}}
"""


class Nginx:
    def __init__(self, binary: str, folder: Path, ports: tuple[int, int]) -> None:
        self.folder, self.port = folder, free_port()
        (folder / "nginx.conf").write_text(nginx_conf(folder, self.port, ports), encoding="utf-8")
        argv = [binary, "-p", str(folder), "-c", str(folder / "nginx.conf"), "-g", "daemon off;"]
        self.proc = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        deadline = time.monotonic() + 30
        while True:
            assert self.proc.poll() is None, (
                f"nginx exited: {self.proc.stderr.read() if self.proc.stderr else ''}"
            )
            with socket.socket() as s:
                if s.connect_ex(("127.0.0.1", self.port)) == 0:
                    break
            assert time.monotonic() < deadline, "nginx never listened"
            time.sleep(0.05)
        self.url = f"http://127.0.0.1:{self.port}/mcp"

    def stop(self) -> None:
        self.proc.send_signal(signal.SIGQUIT)  # graceful
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()


def client(url: str, token: str) -> tuple[Any, Any]:
    http = bearer(token)
    return sdk_client(http, url, "auto"), http


def streams_to(port: int) -> int:
    """Established TCP connections to a local port (Linux's /proc/net/tcp): nginx's to an instance, each
    an open request (nginx keeps no idle ones to an upstream without `keepalive`)."""
    rows = Path("/proc/net/tcp").read_text(encoding="ascii").splitlines()[1:]
    return sum(1 for row in rows if row.split()[1].endswith(f":{port:04X}") and row.split()[3] == "01")


@pytest.fixture
def lab(tmp_path: Path):
    binary = nginx_binary()
    need(binary is not None, "nginx (Debian's nginx package: apt-get install nginx)")
    assert binary is not None
    (tmp_path / "robots").mkdir()
    (tmp_path / "robots" / "bob.ROBOT.md").write_text(EXAMPLE.read_text(encoding="utf-8"), encoding="utf-8")
    rover = (EXAMPLE.parent / "rover.ROBOT.md").read_text(encoding="utf-8")
    (tmp_path / "robots" / "rover.ROBOT.md").write_text(rover, encoding="utf-8")
    token_file = tmp_path / "token"
    token = private_token(token_file)
    first, *rest = INSTANCE(tmp_path)
    # nginx passes Host as $host, the name clients used without its port: each instance is told it.
    args = (*rest, "--http", "127.0.0.1:0", "--allow-host", "127.0.0.1", "--token-file", str(token_file))
    instances = [Served(*args, path=Path(first), poll_seconds=0.1) for _ in range(2)]
    nginx_folder = tmp_path / "nginx"
    nginx_folder.mkdir()
    nginx = Nginx(binary, nginx_folder, (instances[0].port, instances[1].port))
    try:
        yield nginx, instances, token, tmp_path / "robots" / "bob.ROBOT.md"
    finally:
        nginx.stop()
        for instance in instances:
            instance.stop(signal.SIGKILL)
        assert "Traceback" not in "".join(i.stderr for i in instances)


async def listen_until_over(
    url: str, token: str, ended: dict[int, float], key: int, started: anyio.Event
) -> None:
    """A client listening on a stream until it ends, cleanly or dropped: when is noted in `ended`."""
    listener, http = client(url, token)
    async with http, listener:
        assert listener.protocol_version == "2026-07-28"
        try:
            async with listener.listen(resource_subscriptions=[ROBOT_URI]) as events:
                started.set()
                async for _ in events:
                    pass
        except Exception:  # SubscriptionLost, a closed connection: either way it ended
            pass
        ended[key] = time.monotonic()


@pytest.mark.parametrize("how", [signal.SIGTERM, signal.SIGKILL], ids=["stopped", "crashed"])
def test_one_instance_stops_and_the_other_answers(lab, how: signal.Signals) -> None:
    nginx, instances, token, manifest = lab

    async def check() -> None:
        agent, http = client(nginx.url, token)
        async with http, agent:
            assert agent.protocol_version == "2026-07-28"
            for _ in range(10):
                assert (await agent.call_tool("validate", BOB)).structured_content["ok"]
            ended: dict[int, float] = {}
            async with anyio.create_task_group() as streams:
                for key in range(4):  # round robin: a request between two listeners puts them on both
                    if key % 2:
                        await agent.call_tool("validate", BOB)
                    started = anyio.Event()
                    streams.start_soon(listen_until_over, nginx.url, token, ended, key, started)
                    with anyio.fail_after(30):
                        await started.wait()
                on_stopped = streams_to(instances[0].port)
                assert 1 <= on_stopped <= 3 and streams_to(instances[1].port) == 4 - on_stopped
                in_flight = [agent.call_tool("validate", BOB) for _ in range(8)]
                outcomes: list[float] = []

                async def one(call: Any) -> None:
                    try:
                        await call
                    except Exception:  # an HTTP error or a closed connection is allowed
                        pass
                    outcomes.append(time.monotonic())

                async with anyio.create_task_group() as calls:
                    for call in in_flight:
                        calls.start_soon(one, call)
                    stopped_at = time.monotonic()
                    instances[0].proc.send_signal(how)
                assert all(t - stopped_at < IN_FLIGHT_SECONDS for t in outcomes)
                with anyio.fail_after(IN_FLIGHT_SECONDS):  # the streams on the stopped one end
                    while len(ended) < on_stopped:
                        await anyio.sleep(0.05)
                await anyio.sleep(0.5)
                assert len(ended) == on_stopped  # those on the other go on
                assert all(t - stopped_at < IN_FLIGHT_SECONDS for t in ended.values())
                streams.cancel_scope.cancel()
            instances[0].proc.wait(timeout=20)  # gone: what answers from now on is the other
            for _ in range(20):  # every later request: answered, by the one left
                assert (await agent.call_tool("validate", BOB)).structured_content["ok"]
                assert "payload_kg" in (await agent.read_resource(ROBOT_URI)).contents[0].text  # type: ignore[union-attr]
            # Listening again reaches the one left, and hears a change.
            async with agent.listen(resource_subscriptions=[ROBOT_URI]) as events:
                manifest.write_text(
                    manifest.read_text(encoding="utf-8").replace("payload_kg: 0.5", "payload_kg: 0.4"),
                    encoding="utf-8",
                )
                with anyio.fail_after(10):
                    event = await events.__anext__()
                assert str(getattr(event, "uri", "")) == ROBOT_URI, event

    anyio.run(check)
