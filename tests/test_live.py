"""Live updates end to end: the file edited on disk, the notification arriving unasked, in both protocol
eras; in process (the heavy tier: a real stdio server process). The server polls every POLL seconds and
says when it looked at the file, so that a test waits for what the poller did, never a fixed time."""

from __future__ import annotations

import contextlib
import hashlib
import logging
import time
import warnings
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import anyio
import pytest
from agent import NOTIFIED_WITHIN as DEADLINE
from agent import Inbox
from conftest import EXAMPLE
from mcp import Client, MCPError
from mcp.client.subscriptions import ResourcesListChanged, ResourceUpdated
from mcp.types import ResourceListChangedNotification, ResourceUpdatedNotification, TextResourceContents
from serving import in_process, launched, settings

import robot_md_mcp as rmm

GOOD = EXAMPLE.read_text(encoding="utf-8")
HEAVIER = GOOD.replace("payload_kg: 0.5", "payload_kg: 0.7")
RENAMED = GOOD.replace("robot_name: bob", "robot_name: bob2")
POLL = 0.05  # seconds between the test servers' looks at the file
SAFETY = "robot-md://bob/safety"
LOOKED = "looked at the file: "  # the server's debug line after each look (ROBOT_MD_MCP_DEBUG)


async def read_text(client: Client, uri: str) -> str:
    (contents,) = (await client.read_resource(uri)).contents
    assert isinstance(contents, TextResourceContents), contents
    return contents.text


def digest(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


TRANSPORTS = ["in process", pytest.param("stdio", marks=pytest.mark.heavy)]


class Watched:
    """The served file, and the poller's looks at it: its server's debug lines (in process, as pytest's
    `caplog` holds them; over stdio, its stderr)."""

    def __init__(self, path: Path, transport: str, caplog: pytest.LogCaptureFixture) -> None:
        self.path, self.log, self.caplog = path, path.with_name("stderr"), caplog
        self.log.touch()
        self.transport = transport

    @contextlib.asynccontextmanager
    async def serving(self, mode: str, inbox: Inbox) -> AsyncIterator[Client]:
        if self.transport == "stdio":
            env = settings(poll_seconds=POLL, debug=True)
            with self.log.open("a", encoding="utf-8") as errlog:
                async with launched(
                    self.path, mode=mode, env=env, errlog=errlog, message_handler=inbox
                ) as client:
                    yield client
            return
        file = rmm.ManifestFile(self.path)
        file.version()  # read before serving, as `serve` does
        self.caplog.set_level(logging.DEBUG, logger=rmm.NAME)
        async with Client(
            rmm.build_server(file, poll_seconds=POLL), mode=mode, message_handler=inbox
        ) as client:
            yield client

    def seen(self) -> list[str]:
        """One entry per look: the digest of the version it found, or "broken"."""
        lines = self.caplog.messages if self.transport != "stdio" else self.log.read_text().splitlines()
        looks = [line[len(LOOKED) :] for line in lines if line.startswith(LOOKED)]
        return [look.removeprefix("version ") if look.startswith("version ") else "broken" for look in looks]

    def edit(self, text: str | None) -> tuple[float, int]:
        """The file rewritten (None: deleted): when, and how many looks came before."""
        mark = len(self.seen())
        if text is None:
            self.path.unlink()
        else:
            self.path.write_text(text, encoding="utf-8")
        return time.monotonic(), mark

    async def looked_past(self, mark: int, found: str, client: Client) -> None:
        """Until the poller has looked at the file as edited (`found`: its digest, or "broken") and
        then once more (so it has said whatever it had to say about it), and the client has had
        all of that: an answer to a later request comes after it on the wire."""
        with anyio.fail_after(DEADLINE):
            while len(self.seen()) < mark + 3:  # the first may have begun before the edit
                await anyio.sleep(POLL / 5)
        assert self.seen()[mark + 1] == found, self.seen()[mark:]
        await client.call_tool("validate", {})


@pytest.mark.anyio
@pytest.mark.parametrize("transport", TRANSPORTS)
async def test_handshake_era_updates_list_changes_and_outages(manifest_path, transport: str, caplog) -> None:
    watched, inbox = Watched(manifest_path(GOOD), transport, caplog), Inbox()
    async with watched.serving("legacy", inbox) as client:
        caps = client.server_capabilities.resources
        assert caps is not None and caps.subscribe and caps.list_changed
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # subscribe is deprecated at 2026-07-28, current before it
            for uri in ("robot-md://bob/safety", "robot-md://bob/context", "file:///not/ours"):
                assert (await client.subscribe_resource(uri)).model_dump(exclude_none=True) in (
                    {},
                    {"meta": None},
                )
            await client.unsubscribe_resource("robot-md://bob/context")

        # A safety edit: the subscribed safety URI is notified, the unsubscribed context is not.
        since, mark = watched.edit(HEAVIER)
        await inbox.next(ResourceUpdatedNotification, since, SAFETY)
        await watched.looked_past(mark, digest(HEAVIER), client)
        uris = {m.params.uri for m in inbox.after(since) if isinstance(m, ResourceUpdatedNotification)}
        assert uris == {SAFETY}
        assert "0.7 kg" in await read_text(client, "robot-md://bob/context")

        # Prose-only edit: safety did not change, so nobody subscribed to it hears anything.
        since, mark = watched.edit(HEAVIER + "\nA new note.\n")
        await watched.looked_past(mark, digest(HEAVIER + "\nA new note.\n"), client)
        assert inbox.after(since) == []

        # Deleted, then broken: the server lives on and answers with errors.
        since, mark = watched.edit(None)
        await watched.looked_past(mark, "broken", client)
        with pytest.raises(MCPError, match="file not found"):
            await client.read_resource(SAFETY)
        _, mark = watched.edit("---\nmetadata: [unclosed\n---\n")
        await watched.looked_past(mark, "broken", client)
        assert (await client.call_tool("validate", {})).is_error
        assert inbox.after(since) == []

        # Fixed under a new name: list_changed, the old URI notified, new URIs work.
        since, _ = watched.edit(RENAMED)
        await inbox.next(ResourceListChangedNotification, since)
        await inbox.next(ResourceUpdatedNotification, since, "robot-md://bob/safety")
        listed = [r.uri for r in (await client.list_resources()).resources]
        assert "robot-md://bob2/safety" in listed and "robot-md://bob/safety" not in listed
        assert "payload_kg" in await read_text(client, "robot-md://bob2/safety")
        with pytest.raises(MCPError, match="read robot-md://bob2/safety") as e:
            await client.read_resource("robot-md://bob/safety")
        assert e.value.error.code == -32602  # invalid params
        prompt = await client.get_prompt("brief-me")
        assert prompt.messages[1].content.resource.uri == "robot-md://bob2/context"  # type: ignore[union-attr]


@pytest.mark.anyio
@pytest.mark.parametrize("transport", TRANSPORTS)
async def test_2026_era_listen_stream(manifest_path, transport: str, caplog) -> None:
    watched, inbox = Watched(manifest_path(GOOD), transport, caplog), Inbox()
    async with watched.serving("auto", inbox) as client:
        assert client.protocol_version == "2026-07-28"
        async with client.listen(
            resources_list_changed=True, resource_subscriptions=["robot-md://bob/safety"]
        ) as events:

            async def next_event() -> object:
                with anyio.fail_after(DEADLINE):
                    return await events.__anext__()

            watched.edit(HEAVIER)
            assert await next_event() == ResourceUpdated(uri=SAFETY)

            # Deleted, then broken: no event (the next one is the rename's).
            _, mark = watched.edit(None)
            await watched.looked_past(mark, "broken", client)
            _, mark = watched.edit("---\n: broken\n  - yaml\n---\n")
            await watched.looked_past(mark, "broken", client)
            with pytest.raises(MCPError):
                await client.read_resource(SAFETY)

            since, _ = watched.edit(RENAMED)
            assert await next_event() == ResourcesListChanged()
            assert await next_event() == ResourceUpdated(uri="robot-md://bob/safety")
            assert time.monotonic() - since < DEADLINE
            listed = [r.uri for r in (await client.list_resources()).resources]
            assert listed[0] == "robot-md://bob2/context"
            assert (await read_text(client, "robot-md://bob2/identity")).startswith('name: "bob2" |')


def test_changes_names_what_changed() -> None:
    def snap(text: str) -> rmm.Snapshot:
        return rmm.Snapshot(rmm.parse(text), text)

    heavier = snap(HEAVIER)
    found = rmm.changes(snap(GOOD), heavier)
    assert set(found.updated) == {f"robot-md://bob/{k}" for k in ("context", "frontmatter", "safety")}
    assert not found.relisted and found.now is heavier
    found = rmm.changes(snap(GOOD), snap(RENAMED))
    assert found.relisted and len(found.updated) == 2 * len(rmm.VIEWS)
    same = snap(GOOD)
    assert rmm.changes(snap(GOOD), same) == rmm.Changes(same, [], False)


@pytest.mark.anyio
async def test_the_watcher_stops_with_the_session(manifest_path) -> None:
    """In process: leaving the client ends the lifespan's poller task."""
    server = rmm.build_server(rmm.ManifestFile(manifest_path(GOOD)))
    async with in_process(server, "legacy") as client:
        await client.list_resources()
        tasks = {t.get_name() for t in __import__("asyncio").all_tasks()}
        assert any("watch_safely" in name for name in tasks)
    with anyio.fail_after(DEADLINE):  # cancelled at the session's end, gone at its next step
        while any("watch_safely" in t.get_name() for t in __import__("asyncio").all_tasks()):
            await anyio.sleep(0.005)


@pytest.mark.anyio
async def test_subscriptions_hold_only_what_this_server_serves(manifest_path) -> None:
    """A robot-md:// URI this server does not serve, or any URI too long to be a resource, is
    refused with a short message (-32602); other schemes are accepted and kept nowhere; the
    served URIs still subscribe. 30 unique 200 KB URIs of each kind (12 MB) leave nothing behind."""
    server = rmm.build_server(rmm.ManifestFile(manifest_path(GOOD)))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # resources/subscribe is deprecated from 2026-07-28
        async with in_process(server, "legacy") as client:
            import gc
            import tracemalloc

            tracemalloc.start()
            for i in range(30):
                for uri in (f"robot-md://bob/{i}" + "x" * 200_000, f"test://{i}" + "y" * 200_000):
                    with pytest.raises(MCPError) as e:
                        await client.subscribe_resource(uri)
                    assert e.value.error.code == -32602 and len(e.value.error.message) < 800
            gc.collect()
            held, _ = tracemalloc.get_traced_memory()
            tracemalloc.stop()
            assert held < 4 * 1024 * 1024, held  # 12 MB of URIs were sent
            for uri in ("robot-md://alice/context", "robot-md://bob/nothing"):
                with pytest.raises(MCPError, match='this server serves the robot "bob"'):
                    await client.subscribe_resource(uri)
            await client.subscribe_resource("test://watched-resource")  # as the conformance suite asks
            await client.subscribe_resource("robot-md://bob/safety")
            await client.unsubscribe_resource("robot-md://bob/safety")


def test_clients_are_forgotten_when_their_http_session_ends_or_goes_idle(manifest_path) -> None:
    """Handshake-era HTTP clients are remembered by session id, forgotten on DELETE (HttpGuard
    calls forget) or once idle longer than the SDK keeps a session, and never beyond the cap."""
    from types import SimpleNamespace

    def ctx(session_id: str | None) -> Any:  # what LiveUpdates reads of a request's context
        request = None if session_id is None else SimpleNamespace(headers={"mcp-session-id": session_id})
        session = SimpleNamespace(client_params=object())
        return SimpleNamespace(session=session, protocol_version="2025-11-25", request=request)

    live = rmm.LiveUpdates(rmm.ManifestFile(manifest_path(GOOD)), forget_after=3600)
    live.subscribe(ctx("s1"), "robot-md://bob/safety")
    assert live.subscriptions_of(ctx("s1")) == {"robot-md://bob/safety"}  # the same session, another request
    live.subscriptions_of(ctx("s2"))
    live.forget("s1")
    assert list(live.clients) == ["s2"]
    live.forget_after = 0.0
    live.subscriptions_of(ctx("s3"))  # s2, idle past forget_after, goes
    assert list(live.clients) == ["s3"]
    live.forget_after = None
    for i in range(rmm.MAX_LISTENING_CLIENTS + 10):
        live.subscriptions_of(ctx(f"many-{i}"))
    assert len(live.clients) == rmm.MAX_LISTENING_CLIENTS


def test_one_preparation_per_version_shared_by_every_request_waiting(manifest_path, monkeypatch) -> None:
    """Eight requests meet a new version at once: it is parsed and prepared once, all eight get it."""
    import threading

    manifest_file = rmm.ManifestFile(manifest_path(GOOD))
    manifest_file.version()
    manifest_path(HEAVIER)
    parses, release = [], threading.Event()
    real_parse = rmm.parse

    def slow_parse(text: str) -> rmm.Manifest:
        parses.append(text)
        release.wait(5)  # every request arrives while the first is still preparing
        return real_parse(text)

    monkeypatch.setattr(rmm, "parse", slow_parse)
    arrived = threading.Semaphore(0)
    new_version = manifest_file._new_version

    def arriving(*args: object) -> rmm.Snapshot:  # where a request meets a version not yet known
        arrived.release()
        return new_version(*args)  # type: ignore[arg-type]

    monkeypatch.setattr(manifest_file, "_new_version", arriving)
    got: list[rmm.Snapshot] = []
    threads = [
        threading.Thread(target=lambda: got.append(manifest_file.version(prepare=True))) for _ in range(8)
    ]
    for thread in threads:
        thread.start()
    for _ in threads:
        assert arrived.acquire(timeout=10)
    release.set()
    for thread in threads:
        thread.join(10)
    assert len(parses) == 1 and len(got) == 8 and len({id(snap) for snap in got}) == 1
    assert "0.7 kg" in got[0].text(rmm.VIEW["context"])


@pytest.mark.anyio
async def test_a_version_that_fails_to_prepare_fails_its_requests_not_live_updates(
    manifest_path, monkeypatch, caplog
) -> None:
    """Running out of memory preparing a version: each request that wanted it gets a one-line error
    (never code 0 with an empty message), live updates go on, and the good file is served again."""
    path = manifest_path(GOOD)
    real_prepared = rmm.Snapshot.prepared

    def prepared(self: rmm.Snapshot) -> rmm.Snapshot:
        if (
            "payload_kg: 0.7" in self.manifest.prose
            or self.manifest.frontmatter["safety"]["payload_kg"] == 0.7
        ):
            raise MemoryError
        return real_prepared(self)

    monkeypatch.setattr(rmm.Snapshot, "prepared", prepared)
    caplog.set_level(logging.DEBUG, logger=rmm.NAME)
    async with in_process(path, "legacy", poll_seconds=POLL) as client:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            await client.subscribe_resource("robot-md://bob/safety")
        path.write_text(HEAVIER, encoding="utf-8")
        for _ in range(2):
            with pytest.raises(MCPError) as e:
                await client.read_resource("robot-md://bob/safety")
            assert e.value.error.code == -32603
            assert e.value.error.message.startswith(
                "robot-md-mcp: cannot prepare this version of the manifest: out of memory"
            )
            assert "\n" not in e.value.error.message
        tool = await client.call_tool("validate", {})
        assert tool.is_error and "out of memory" in str(tool.content[0].model_dump().get("text"))
        with anyio.fail_after(DEADLINE):  # several polls meet the failing version: the watcher goes on
            while sum(m.startswith(LOOKED) and "out of memory" in m for m in caplog.messages) < 3:
                await anyio.sleep(POLL / 5)
        tasks = {t.get_name() for t in __import__("asyncio").all_tasks()}
        assert any("watch_safely" in name for name in tasks)
        said = [m for m in caplog.messages if "live updates resume" in m]
        assert len(said) == 1 and "out of memory" in said[0], said  # the watcher's trouble, said once
        path.write_text(RENAMED, encoding="utf-8")
        assert await read_text(client, "robot-md://bob2/safety")
