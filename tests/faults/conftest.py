"""The fault suite's tools: a Redis of the test's own to kill, pause or slow down, a
racer that plays through an outage the way the protocol says a client should, and the
recovery times, printed at the end of the run.

Every server here is real and listens on loopback only: a valkey process with its
append-only file (as the embedded store runs), server nodes as separate processes, and,
for slow replies, a proxy in front of Redis that holds every reply back.
"""

from __future__ import annotations

import asyncio
import http.client
import signal
import socket
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from protocol.game import move_json
from tests.conftest import RedisServer
from tests.server.conftest import Client, Node, open_client, start_node  # noqa: F401

RECOVERIES: list[tuple[str, float]] = []
"""(what happened, seconds until every racer was served again), printed at the end."""


def pytest_terminal_summary(terminalreporter: Any) -> None:
    if RECOVERIES:
        terminalreporter.section("fault suite: recovery times")
        for what, seconds in RECOVERIES:
            terminalreporter.write_line(f"{what:<58} {seconds:6.2f} s")


class ExternalRedis(RedisServer):
    """A valkey on a loopback TCP port that keeps an append-only file, as a deployment's does."""

    def __init__(self, directory: Path) -> None:
        super().__init__(directory)
        with socket.socket() as sock:
            sock.bind(("127.0.0.1", 0))
            self.port = int(sock.getsockname()[1])

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/0"

    def arguments(self) -> list[str]:
        return ["--port", str(self.port), "--bind", "127.0.0.1"]

    def persistence(self) -> list[str]:
        return ["--save", "", "--appendonly", "yes", "--appendfsync", "everysec"]

    def _ping(self) -> bool:
        try:
            with socket.create_connection(("127.0.0.1", self.port), timeout=1) as sock:
                sock.sendall(b"PING\r\n")
                return sock.recv(16).startswith(b"+PONG")
        except OSError:
            return False

    def kill(self) -> None:
        """SIGKILL the server: what it had not written to its append-only file is gone."""
        assert self.process is not None
        self.process.kill()
        self.process.wait()

    def signal(self, sig: int) -> None:
        assert self.process is not None
        self.process.send_signal(sig)


@pytest.fixture
def external_redis(tmp_path: Path) -> Iterator[ExternalRedis]:
    """A Redis of this test's own, started; stopped (and resumed first, if paused) at the end."""
    redis = ExternalRedis(tmp_path / "redis")
    redis.start()
    yield redis
    if redis.process is not None and redis.process.poll() is None:
        redis.signal(signal.SIGCONT)
    redis.stop()


class SlowProxy:
    """A TCP proxy to Redis that holds every chunk of Redis's replies back ``delay`` seconds.

    Replies keep their order and overlap (the delay is added to each, not queued behind
    the one before), as with a Redis far away or overloaded. Runs its own event loop in a
    thread, so that the test's waits do not slow it.
    """

    def __init__(self, port: int, delay: float) -> None:
        self.target = port
        self.delay = delay
        self.loop = asyncio.new_event_loop()
        self.server: asyncio.Server | None = None
        self.ready = threading.Event()
        self.thread = threading.Thread(target=self._run, daemon=True)
        self.port = 0

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/0"

    def start(self) -> None:
        self.thread.start()
        if not self.ready.wait(10):
            raise RuntimeError("the proxy did not start")

    def stop(self) -> None:
        asyncio.run_coroutine_threadsafe(self._shutdown(), self.loop).result(10)
        self.loop.call_soon_threadsafe(self.loop.stop)
        self.thread.join(10)
        self.loop.close()

    async def _shutdown(self) -> None:
        if self.server is not None:
            self.server.close()
        tasks = [t for t in asyncio.all_tasks() if t is not asyncio.current_task()]
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        await asyncio.sleep(self.delay + 0.05)  # the replies held back, and the closes

    def _run(self) -> None:
        asyncio.set_event_loop(self.loop)
        self.server = self.loop.run_until_complete(asyncio.start_server(self._serve, "127.0.0.1", 0))
        self.port = int(self.server.sockets[0].getsockname()[1])
        self.ready.set()
        self.loop.run_forever()

    async def _serve(self, client_reader: asyncio.StreamReader, client_writer: asyncio.StreamWriter) -> None:
        try:
            redis_reader, redis_writer = await asyncio.open_connection("127.0.0.1", self.target)
        except OSError:
            client_writer.close()
            return
        upstream = asyncio.ensure_future(self._pipe(client_reader, redis_writer, 0.0))
        try:
            await self._pipe(redis_reader, client_writer, self.delay)
        finally:
            upstream.cancel()

    async def _pipe(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter, delay: float) -> None:
        try:
            while data := await reader.read(1 << 16):
                if delay:
                    self.loop.call_later(delay, _write, writer, data)
                else:
                    writer.write(data)
        except OSError:
            pass
        finally:
            if delay:
                self.loop.call_later(delay, writer.close)
            else:
                writer.close()


def _write(writer: asyncio.StreamWriter, data: bytes) -> None:
    if not writer.is_closing():
        writer.write(data)


@pytest.fixture
def slow_proxy(external_redis: ExternalRedis) -> Iterator[SlowProxy]:
    """A proxy in front of the test's Redis that delays every reply by 200 ms."""
    proxy = SlowProxy(external_redis.port, 0.2)
    proxy.start()
    yield proxy
    proxy.stop()


def health(node: Node) -> int:
    """Return the HTTP status of the node's ``/healthz`` (0 when it does not answer in 2 s)."""
    connection = http.client.HTTPConnection("127.0.0.1", node.port, timeout=2)
    try:
        connection.request("GET", "/healthz")
        return connection.getresponse().status
    except OSError:
        return 0
    finally:
        connection.close()


@dataclass
class Answer:
    """One answer a racer got: when it was asked, how long it took, what it said."""

    sent: float
    took: float
    kind: str
    code: str | None = None


@dataclass
class Racer:
    """Play a fixed line of moves through outages, as docs/protocol.md §5.1 tells a client to.

    ``acknowledged`` holds the version of every move the server accepted, either in its
    answer or, after ``outcome_unknown``, in the batch a resume returned; nothing else may
    be in the finished game, and all of it must be.
    """

    client: Client
    game: str
    v: int
    line: list[Any]
    answers: list[Answer] = field(default_factory=list)
    acknowledged: list[int] = field(default_factory=list)
    refused: int = 0

    async def play(self, pause: float = 0.0) -> None:
        """Make every move of the line, retrying as told; ``pause`` seconds between moves."""
        index = 0
        while index < len(self.line):
            answer = await self._ask(
                {"type": "move", "game": self.game, "v": self.v, "move": move_json(self.line[index])}
            )
            if answer["type"] == "accepted":
                self._accepted(answer["v"])
                index += 1
                await asyncio.sleep(pause)
            elif answer.get("code") == "unavailable":
                self.refused += 1
                await asyncio.sleep(answer["retry_after_ms"] / 1000)
            elif answer.get("code") == "outcome_unknown":
                await asyncio.sleep(answer["retry_after_ms"] / 1000)
                if await self._was_applied():
                    index += 1
            else:
                recent = [(a.kind, a.code) for a in self.answers[-6:]]
                raise AssertionError(f"a racer got {answer} (its last answers: {recent})")

    def _accepted(self, version: int) -> None:
        self.acknowledged.append(version)
        self.v = version

    async def _was_applied(self) -> bool:
        """Resume (retrying while storage is away) and tell whether the last move was applied."""
        while True:
            batch = await self._ask({"type": "resume", "game": self.game, "v": self.v})
            if batch["type"] == "error":
                assert batch["code"] == "unavailable", batch
                await asyncio.sleep(batch["retry_after_ms"] / 1000)
                continue
            own = [e for e in batch.get("events", ()) if e["type"] == "accepted"]
            assert batch["type"] == "batch" and len(own) <= 1, batch
            for event in own:
                self._accepted(event["v"])
            return bool(own)

    async def _ask(self, message: dict[str, Any]) -> dict[str, Any]:
        sent = time.monotonic()
        answer = await self.client.request(message, timeout=30)
        self.answers.append(Answer(sent, time.monotonic() - sent, answer["type"], answer.get("code")))
        return answer

    def codes(self) -> set[str]:
        """Return the error codes this racer was answered with."""
        return {a.code for a in self.answers if a.code is not None}

    def first_accepted_after(self, moment: float) -> float:
        """Return when (monotonic) the first answer after ``moment`` was an ``accepted``."""
        return min(
            a.sent + a.took for a in self.answers if a.kind in ("accepted", "batch") and a.sent >= moment
        )
