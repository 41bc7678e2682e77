"""Real server processes for integration tests, and a small scripted test client."""

from __future__ import annotations

import asyncio
import contextlib
import functools
import os
import re
import secrets
import signal
import subprocess
import sys
from collections.abc import AsyncIterator, Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from websockets.asyncio.client import ClientConnection, connect

from protocol.wire.codec import JSON, MSGPACK, decode_dict, encode
from protocol.wire.message import from_dict
from server.runtime.lifeline import die_with_parent
from tests.conftest import stop_process

ROOT = Path(__file__).resolve().parents[2]
PASSWORD = "correct horse battery"
"""The password test accounts register with."""


class Node:
    """One ``scorpion-server`` process started for a test."""

    def __init__(self, process: subprocess.Popen[str], port: int) -> None:
        self.process = process
        self.port = port

    @property
    def url(self) -> str:
        return f"ws://127.0.0.1:{self.port}/"

    def stop(self, sig: int = signal.SIGTERM) -> None:
        stop_process(self.process, sig, wait=15)


NodeFactory = Callable[..., Node]


GENEROUS_LIMITS = {
    "guests_per_minute": 100_000,
    "room_codes_per_minute": 100_000,
    "accounts_per_day": 100_000,
    "login_failures": 100_000,
    "logins_per_minute": 100_000,
}
"""Abuse limits for tests that are not about them: every test client comes from 127.0.0.1.
A test of the limits sets the ones it needs (the server's defaults are far lower)."""


def spawn_node(env: dict[str, str], log: Path, *args: str) -> Node:
    """Start ``scorpion-server`` on a free loopback port with ``env`` and ``args``; return it
    once it has said where it listens. Its log is appended to ``log``. Unless ``env`` sets
    them, the abuse limits are :data:`GENEROUS_LIMITS`."""
    env = {**{f"SCORPION_{k.upper()}": str(v) for k, v in GENEROUS_LIMITS.items()}, **env}
    with log.open("a") as stderr:
        process = subprocess.Popen(
            [sys.executable, "-m", "server.main", "--host", "127.0.0.1", "--port", "0", *args],
            cwd=ROOT,
            env=env,
            stdout=subprocess.PIPE,
            stderr=stderr,
            text=True,
            preexec_fn=die_with_parent,
        )
    assert process.stdout is not None
    line = process.stdout.readline()
    match = re.search(r":(\d+)/", line)
    if match is None:
        stop_process(process, signal.SIGKILL)
        raise RuntimeError(f"server did not start: {line!r} {log.read_text()}")
    return Node(process, int(match.group(1)))


@pytest.fixture
def start_node(redis_url: str, tmp_path: Path) -> Iterator[NodeFactory]:
    """Start server processes on free loopback ports against the test Redis."""
    nodes: list[Node] = []

    def start(**settings: Any) -> Node:
        env = dict(os.environ)
        env.update(
            {
                "SCORPION_REDIS_URL": redis_url,
                "SCORPION_COUNTDOWN_SECONDS": "0.2",
                "SCORPION_GRACE_PERIOD": "2",
                "SCORPION_LOG_FORMAT": "text",
                "SCORPION_LOG_LEVEL": "warning",
                "SCORPION_NODE_ID": f"node{len(nodes) + 1}",
            }
        )
        env.update({f"SCORPION_{k.upper()}": str(v) for k, v in settings.items()})
        node = spawn_node(env, tmp_path / f"node{len(nodes) + 1}.log")
        nodes.append(node)
        return node

    yield start
    for node in nodes:
        node.stop(signal.SIGKILL)
    # Shown by pytest only when the test failed: what the nodes logged (warnings and worse).
    for index in range(1, len(nodes) + 1):
        logged = (tmp_path / f"node{index}.log").read_text(errors="replace").strip()
        if logged:
            print(f"--- node{index} log ---\n{logged[-20000:]}")


def _matches(data: dict[str, Any], kind: str, match: dict[str, Any]) -> bool:
    """Whether a received message is of ``kind`` and has every field of ``match``."""
    return data["type"] == kind and all(data.get(k) == v for k, v in match.items())


class Client:
    """A scripted protocol client that records every frame it receives."""

    def __init__(self, ws: ClientConnection, fmt: str) -> None:
        self.ws = ws
        self.fmt = fmt
        self.frames: list[bytes | str] = []
        self.inbox: asyncio.Queue[dict[str, Any]] = asyncio.Queue()
        self.reader = asyncio.create_task(self._read())
        self.refs = 0
        self.welcome: dict[str, Any] = {}
        self.player = ""
        self.token = ""
        self.username = ""
        self.node: Node | None = None

    async def _read(self) -> None:
        try:
            async for frame in self.ws:
                self.frames.append(frame)
                data = decode_dict(frame, self.fmt, limit=1 << 22)  # type: ignore[arg-type]
                from_dict(data)  # every frame the server sends is a valid message
                await self.inbox.put(data)
        except Exception as exc:  # surfaced by expect()
            await self.inbox.put({"type": "_closed", "error": repr(exc)})
        else:
            await self.inbox.put({"type": "_closed", "error": f"closed with {self.ws.close_code}"})

    async def send(self, message: dict[str, Any]) -> Any:
        self.refs += 1
        message = {**message, "ref": self.refs}
        await self.ws.send(encode(from_dict(message), self.fmt))  # type: ignore[arg-type]
        return self.refs

    async def send_raw(self, frame: bytes | str) -> None:
        await self.ws.send(frame)

    async def request_unchecked(self, message: dict[str, Any], timeout: float = 10.0) -> dict[str, Any]:
        """Send a map exactly as given (no client-side validation) and return its answer."""
        import json

        import msgpack

        self.refs += 1
        ref = self.refs
        data = {**message, "ref": ref}
        await self.ws.send(msgpack.packb(data) if self.fmt == MSGPACK else json.dumps(data))
        while True:
            answer = await asyncio.wait_for(self.inbox.get(), timeout)
            if answer.get("ref") == ref:
                return answer

    async def expect(self, kind: str, timeout: float = 10.0, **match: Any) -> dict[str, Any]:
        """Return the next message of ``kind`` (matching fields), skipping others."""
        deadline = asyncio.get_running_loop().time() + timeout
        while True:
            left = deadline - asyncio.get_running_loop().time()
            if left <= 0:
                raise AssertionError(f"no {kind!r} message within {timeout} s")
            try:
                data = await asyncio.wait_for(self.inbox.get(), left)
            except TimeoutError:
                raise AssertionError(f"no {kind!r} message within {timeout} s") from None
            if data["type"] == "_closed" and kind != "_closed":
                raise AssertionError(f"connection closed while waiting for {kind!r}: {data['error']}")
            if _matches(data, kind, match):
                return data

    async def seen(self, kind: str, timeout: float = 10.0, **match: Any) -> dict[str, Any]:
        """Return the first message of ``kind`` (matching fields) this client has received.

        Unlike :meth:`expect`, this also finds a message that an earlier ``expect`` or
        ``request`` skipped while it waited for something else (every frame is kept in
        ``frames``); it waits up to ``timeout`` for one to arrive.
        """
        deadline = asyncio.get_running_loop().time() + timeout
        while True:
            for frame in self.frames:
                data = decode_dict(frame, self.fmt, limit=1 << 22)  # type: ignore[arg-type]
                if _matches(data, kind, match):
                    return data
            if asyncio.get_running_loop().time() >= deadline:
                raise AssertionError(f"no {kind!r} message within {timeout} s")
            await asyncio.sleep(0.05)

    async def request(self, message: dict[str, Any], timeout: float = 10.0) -> dict[str, Any]:
        """Send a request and return the answer or error carrying its ref."""
        ref = await self.send(message)
        deadline = asyncio.get_running_loop().time() + timeout
        while True:
            left = deadline - asyncio.get_running_loop().time()
            data = await asyncio.wait_for(self.inbox.get(), max(left, 0.01))
            if data["type"] == "_closed":
                raise AssertionError(f"connection closed: {data['error']}")
            if data.get("ref") == ref:
                return data

    async def register(self, username: str | None = None, password: str = PASSWORD) -> dict[str, Any]:
        """Turn this client's guest into an account (a fresh username unless one is given);
        keep the new session token. Return the ``session`` answer."""
        self.username = username or "u" + secrets.token_hex(6)
        granted = await self.request({"type": "register", "username": self.username, "password": password})
        assert granted["type"] == "session", granted
        self.token = granted["token"]
        return granted

    async def close(self) -> None:
        await self.ws.close()
        self.reader.cancel()


def accounts_only(open_client: Callable[..., Any]) -> Callable[..., Any]:
    """Return ``open_client`` opening accounts (registered at once) rather than guests: what
    a test file about ranked play overrides its ``open_client`` fixture with."""
    return functools.partial(open_client, account=True)


@pytest.fixture
async def open_client() -> AsyncIterator[Callable[..., Any]]:
    """Open protocol clients to a node; all are closed at the end of the test."""
    clients: list[Client] = []

    async def open_(
        node: Node,
        name: str = "Tester",
        fmt: str = MSGPACK,
        token: str | None = None,
        headers: dict[str, str] | None = None,
        account: bool = False,
    ) -> Client:
        """Open a client and say hello (as a guest, or with ``token``); with ``account`` the
        guest registers at once (what ranked play needs)."""
        ws = await connect(node.url, subprotocols=[fmt], max_size=1 << 22, additional_headers=headers)  # type: ignore[list-item]
        client = Client(ws, fmt)
        clients.append(client)
        hello: dict[str, Any] = {"type": "hello", "name": name}
        if token:
            hello["token"] = token
        welcome = await client.request(hello)
        assert welcome["type"] == "welcome", welcome
        client.welcome = welcome
        client.player = welcome["player"]
        client.token = welcome["token"]
        client.node = node
        if account and not token:
            await client.register()
        return client

    yield open_
    for client in clients:
        with contextlib.suppress(Exception):
            await client.close()


__all__ = ["JSON", "MSGPACK", "PASSWORD", "Client", "Node", "NodeFactory"]


class FakeClock:
    """A wall clock that tests move by hand (seconds since the epoch)."""

    def __init__(self, now: float) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now


class LocalNode:
    """A server running inside the test's event loop (real websockets, real Redis)."""

    def __init__(self, server: Any) -> None:
        self.server = server

    @property
    def url(self) -> str:
        return f"ws://127.0.0.1:{self.server.port}/"


DAILY_SECRET = "test-daily-secret"


@pytest.fixture
async def local_node(redis_url: str, tmp_path: Path) -> AsyncIterator[Callable[..., Any]]:
    """Start in-process servers sharing one fake clock for the daily deal's date."""
    from server.app import ScorpionServer
    from server.config import Config

    servers: list[Any] = []
    clock = FakeClock(1_780_000_000.0)

    async def start(**settings: Any) -> LocalNode:
        base: dict[str, Any] = {
            "host": "127.0.0.1",
            "port": 0,
            "redis_url": redis_url,
            "data_dir": tmp_path,
            "countdown_seconds": 0.1,
            "grace_period": 1.0,
            "daily_secret": DAILY_SECRET,
            "log_format": "text",
            **GENEROUS_LIMITS,
        }
        base.update(settings)
        server = ScorpionServer(Config(**base), clock=clock)
        await server.start()
        servers.append(server)
        node = LocalNode(server)
        node.clock = clock  # type: ignore[attr-defined]
        return node

    yield start
    for server in servers:
        await server.shutdown()


async def start_race(
    ann: Client, bob: Client, options: dict[str, Any] | None = None
) -> tuple[dict[str, Any], ...]:
    """Open a room on ``ann``, let ``bob`` join and say ready, start it; return the room and
    both racers' ``race_started``."""
    room = await ann.request(
        {"type": "room_create", "variant": "scorpion", "options": options or {"undo": True}}
    )
    await bob.request({"type": "room_join", "room": room["room"]})
    await bob.request({"type": "ready", "ready": True})
    countdown = await ann.request({"type": "room_start"})
    assert countdown["type"] == "countdown", countdown
    return room, await ann.expect("race_started"), await bob.expect("race_started")
