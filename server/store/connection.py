"""Raw connections to Redis: the pipelined connection of the move path, and pub/sub.

A game's channel is a shard channel (``SSUBSCRIBE``), as it is on a cluster, where it then
passes through the game's own shard only; the node-wide channels are classic pub/sub.
"""

from __future__ import annotations

import asyncio
import collections
import contextlib
import functools
import hashlib
import logging
import ssl
import time
from collections.abc import Callable, Mapping, Sequence
from typing import Any, TypeAlias, cast

import hiredis
from redis.asyncio.connection import SSLConnection, parse_url
from redis.exceptions import ResponseError

from .keys import is_shard_channel

__all__ = ["CommandArg", "NotSent", "Subscriber", "pack_command", "script_sha"]

CommandArg: TypeAlias = str | int | float | bytes | memoryview
"""One argument of a Redis command, as hiredis packs it."""

pack_command = cast("Callable[[tuple[CommandArg, ...]], bytes]", hiredis.pack_command)
"""hiredis's ``pack_command``: one command (name and arguments) in Redis's wire format.

The same function, typed as it behaves: hiredis's stub declares its argument a tuple of
exactly one item (and no return type), which no real command fits.
"""


@functools.cache
def script_sha(source: str) -> str:
    """Return a Lua script's SHA1, by which ``EVALSHA`` calls it (computed once a script)."""
    return hashlib.sha1(source.encode()).hexdigest()


log = logging.getLogger("scorpion.store")


async def _open(settings: Mapping[str, Any]) -> tuple[asyncio.StreamReader, asyncio.StreamWriter]:
    """Open a raw connection to Redis from redis-py's parsed URL settings, authenticated."""
    if "path" in settings:
        reader, writer = await asyncio.open_unix_connection(settings["path"])
    else:
        secure = settings.get("connection_class") is SSLConnection or settings.get("ssl")  # URL, or cluster's
        tls = ssl.create_default_context() if secure else None
        reader, writer = await asyncio.open_connection(
            settings.get("host", "localhost"), settings.get("port", 6379), ssl=tls
        )
    if settings.get("password"):
        user = settings.get("username")
        auth = ("AUTH", user, settings["password"]) if user else ("AUTH", settings["password"])
        writer.write(pack_command(auth))
        parser = hiredis.Reader(encoding="utf-8")
        reply: Any = False
        while reply is False:
            data = await reader.read(4096)
            if not data:
                writer.close()
                raise ConnectionError("Redis closed the connection")
            parser.feed(data)
            reply = parser.gets()
        if isinstance(reply, hiredis.ReplyError):
            writer.close()
            raise ResponseError(str(reply))
    return reader, writer


class NotSent(ConnectionError):
    """The command never left this node: Redis cannot have carried it out."""


def _log_select_failure(future: asyncio.Future[Any]) -> None:
    if not future.cancelled() and future.exception() is not None:
        log.error("could not select the Redis database: %s", future.exception())


class _Pipeline:
    """One Redis connection that carries many commands at once, for the move path.

    Every racer's action is one script call. Through redis-py each call checks a
    connection out of the pool, wraps it in retry and timeout machinery and packs its
    arguments in Python, which cost more than the script itself. Here calls are packed by
    hiredis, written to one socket as they come (pipelined: replies arrive in order, so a
    queue of futures pairs them up) and read by one task. A lost connection fails the
    calls in flight (their outcome is unknown to the caller, exactly as with a single
    command whose reply never came) and the next call reconnects. A watchdog drops the
    connection too when calls have waited ``timeout`` seconds without any reply coming,
    so that a Redis that hangs (paused, or cut off) holds no call for longer; a slow Redis,
    whose replies keep coming, is waited for. Calls that had not been written yet fail
    with :class:`NotSent`: those, Redis has certainly not carried out.
    """

    def __init__(self, url: str | Mapping[str, Any], timeout: float) -> None:
        self.timeout = timeout
        self.settings = parse_url(url) if isinstance(url, str) else dict(url)
        """How to connect: a URL's settings as redis-py parses them, or a cluster node's."""
        self.writer: asyncio.StreamWriter | None = None
        self.waiting: collections.deque[asyncio.Future[Any]] = collections.deque()
        self.outgoing: list[bytes] = []
        self.task: asyncio.Task[None] | None = None
        self.connecting = asyncio.Lock()
        self.replies = 0
        """Replies read so far (the watchdog's sign of progress)."""
        self.watchdog: asyncio.Task[None] | None = None

    async def _connect(self) -> asyncio.StreamWriter:
        async with self.connecting:
            if self.writer is not None:
                return self.writer
            try:
                reader, writer = await asyncio.wait_for(_open(self.settings), self.timeout)
            except (OSError, TimeoutError) as exc:
                raise NotSent(f"cannot connect to Redis: {exc!r}") from exc
            if self.settings.get("db"):
                writer.write(pack_command(("SELECT", self.settings["db"])))
                selected: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
                selected.add_done_callback(_log_select_failure)
                self.waiting.append(selected)
            self.writer = writer
            loop = asyncio.get_running_loop()
            self.task = loop.create_task(self._read(reader, writer))
            self.watchdog = loop.create_task(self._watch(writer))
            return writer

    async def _watch(self, writer: asyncio.StreamWriter) -> None:
        tick = self.timeout / 8
        seen, since = self.replies, time.monotonic()
        while self.writer is writer:
            await asyncio.sleep(tick)
            now = time.monotonic()
            if not self.waiting or self.replies != seen:
                seen, since = self.replies, now
            elif now - since >= self.timeout:
                log.warning("Redis gave no answer in %.1f s: dropping the connection", self.timeout)
                self._drop(ConnectionError(f"Redis gave no answer in {self.timeout:.1f} s"))
                return

    async def _read(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        parser = hiredis.Reader(encoding="utf-8")
        error: Exception = ConnectionError("Redis closed the connection")
        try:
            while True:
                data = await reader.read(1 << 16)
                if not data or self.writer is not writer:
                    break  # closed, or dropped (its calls have failed already)
                parser.feed(data)
                while (reply := parser.gets()) is not False:
                    self.replies += 1
                    future = self.waiting.popleft()
                    if not future.done():
                        if isinstance(reply, hiredis.ReplyError):
                            future.set_exception(ResponseError(str(reply)))
                        else:
                            future.set_result(reply)
        except (OSError, hiredis.ProtocolError) as exc:
            error = ConnectionError(f"lost the Redis connection: {exc}")
        finally:
            if self.writer is writer:
                self._drop(error)

    def _drop(self, error: Exception) -> None:
        if self.writer is not None:
            self.writer.close()
        self.writer = None
        if self.watchdog is not None and self.watchdog is not asyncio.current_task():
            self.watchdog.cancel()
        self.watchdog = None
        unsent = len(self.outgoing)  # the last calls queued, never written
        self.outgoing = []  # and a new connection must not get them
        waiting, self.waiting = self.waiting, collections.deque()
        first_unsent = len(waiting) - unsent
        for index, future in enumerate(waiting):
            if not future.done():
                future.set_exception(NotSent(str(error)) if index >= first_unsent else error)

    async def call(self, *args: CommandArg) -> Any:
        """Send one command and return its reply (an error reply raises ``ResponseError``).

        Commands issued during one turn of the event loop leave in one write.
        """
        if self.writer is None:
            await self._connect()
        return await self._queue(args)

    def _queue(self, command: Sequence[CommandArg]) -> asyncio.Future[Any]:
        """Queue one command for the write at the end of this loop turn; return the future
        of its reply."""
        loop = asyncio.get_running_loop()
        future: asyncio.Future[Any] = loop.create_future()
        self.waiting.append(future)
        if not self.outgoing:
            loop.call_soon(self._flush)
        self.outgoing.append(pack_command(tuple(command)))
        return future

    async def run(self, commands: Sequence[Sequence[CommandArg]]) -> list[Any]:
        """Send ``commands`` back to back, with nothing between them (``ASKING`` and the
        command it allows, a script and its ``WAIT``); return their replies in order, an
        error reply as its ``ResponseError`` rather than raised.

        A lost connection raises, once every reply has been waited for (:class:`NotSent`
        where the commands were never written).
        """
        if self.writer is None:
            await self._connect()
        futures = [self._queue(command) for command in commands]
        replies: list[Any] = []
        lost: Exception | None = None
        for future in futures:
            try:
                replies.append(await future)
            except ResponseError as exc:
                replies.append(exc)
            except Exception as exc:  # the connection: every later reply is lost with it
                lost = lost or exc
        if lost is not None:
            raise lost
        return replies

    @property
    def pending(self) -> int:
        """Count the calls sent (or queued) and not answered yet."""
        return len(self.waiting)

    def _flush(self) -> None:
        outgoing, self.outgoing = self.outgoing, []
        if self.writer is not None:
            self.writer.write(b"".join(outgoing))
        # Else the connection was lost after these calls were queued: _drop failed them.

    async def script(self, source: str, keys: Sequence[str], args: Sequence[CommandArg]) -> Any:
        """Run a Lua script by its SHA1, loading it on first use or after a flush."""
        sha = script_sha(source)
        try:
            return await self.call("EVALSHA", sha, len(keys), *keys, *args)
        except ResponseError as exc:
            if not str(exc).startswith("NOSCRIPT"):
                raise
            return await self.call("EVAL", source, len(keys), *keys, *args)

    async def script_and_wait(
        self, source: str, keys: Sequence[str], args: Sequence[CommandArg], replicas: int, wait_ms: int
    ) -> tuple[Any, int]:
        """Run a script, then ``WAIT replicas wait_ms`` right behind it on this connection
        (``WAIT`` counts the writes of its own connection); return the script's answer and
        how many replicas confirmed the write."""
        sha = script_sha(source)
        for command in (("EVALSHA", sha), ("EVAL", source)):
            result, acked = await self.run([(*command, len(keys), *keys, *args), ("WAIT", replicas, wait_ms)])
            if isinstance(result, ResponseError):
                if str(result).startswith("NOSCRIPT"):
                    continue  # not run: send it with its source
                raise result
            if isinstance(acked, ResponseError):
                raise acked
            return result, int(acked)
        raise ResponseError("NOSCRIPT after EVAL")

    async def close(self) -> None:
        """Close the connection; calls in flight fail."""
        task, self.task = self.task, None
        self._drop(ConnectionError("the store was closed"))
        if task is not None:
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task


class Subscriber:
    """A pub/sub connection read with hiredis: messages come back in batches, in order.

    Subscribing and unsubscribing only write the command (Redis confirms them in the
    stream, and the confirmations are skipped), every command of one loop turn in one write
    (a burst of games started at once subscribes to hundreds of channels). After a lost
    connection, :meth:`open` again and subscribe again to every channel still wanted.
    """

    def __init__(self, url: str) -> None:
        self.settings = parse_url(url)
        self.reader: asyncio.StreamReader | None = None
        self.writer: asyncio.StreamWriter | None = None
        self.parser = hiredis.Reader(encoding="utf-8")
        self.outgoing: list[bytes] = []
        """Commands to write at the end of this loop turn."""

    async def open(self) -> None:
        """(Re)connect; no channel is subscribed afterwards."""
        self.close()
        self.reader, self.writer = await _open(self.settings)
        self.parser = hiredis.Reader(encoding="utf-8")

    def subscribe(self, *channels: str) -> None:
        """Start receiving ``channels`` (nothing happens while the connection is closed)."""
        self._send("SUBSCRIBE", "SSUBSCRIBE", channels)

    def unsubscribe(self, *channels: str) -> None:
        """Stop receiving ``channels``."""
        self._send("UNSUBSCRIBE", "SUNSUBSCRIBE", channels)

    def _send(self, classic: str, sharded: str, channels: Sequence[str]) -> None:
        if self.writer is None:
            return
        shard = [c for c in channels if is_shard_channel(c)]
        plain = [c for c in channels if not is_shard_channel(c)]
        if not self.outgoing:
            asyncio.get_running_loop().call_soon(self._flush)
        if plain:
            self.outgoing.append(pack_command((classic, *plain)))
        if shard:
            self.outgoing.append(pack_command((sharded, *shard)))

    def _flush(self) -> None:
        outgoing, self.outgoing = self.outgoing, []
        if outgoing and self.writer is not None:  # else the connection was closed meanwhile
            self.writer.write(b"".join(outgoing))

    async def messages(self) -> list[tuple[str, str]]:
        """Wait for the next messages; return ``(channel, data)`` pairs in arrival order."""
        if self.reader is None:
            raise ConnectionError("the pub/sub connection is not open")
        out: list[tuple[str, str]] = []
        while not out:
            data = await self.reader.read(1 << 16)
            if not data:
                raise ConnectionError("Redis closed the pub/sub connection")
            self.parser.feed(data)
            while (reply := self.parser.gets()) is not False:
                if isinstance(reply, list) and len(reply) == 3 and reply[0] in ("message", "smessage"):
                    out.append((reply[1], reply[2]))
                elif isinstance(reply, hiredis.ReplyError):
                    raise ResponseError(str(reply))
        return out

    def close(self) -> None:
        """Close the connection (commands not yet written are dropped with it)."""
        if self.writer is not None:
            self.writer.close()
        self.reader = self.writer = None
        self.outgoing.clear()
