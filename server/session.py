"""One websocket connection: who it is, what it follows, its send queue and its credits.

A session knows nothing of the server around it: what its game events become on the wire
comes from an :class:`EventSource` (the node's game feed), and its limits from a
:class:`SessionLimits` record, the way websockets' I/O layer sits apart from its protocol.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import logging
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Protocol

from websockets.asyncio.server import ServerConnection
from websockets.exceptions import ConnectionClosed
from websockets.protocol import State

from protocol.wire.codec import Format, encode
from protocol.wire.flow import Credits, Flow
from protocol.wire.flow import State as FlowState
from protocol.wire.message import Message

from .store import UNREACHABLE

__all__ = ["BROADCAST_BUFFER", "EventSource", "Session", "SessionLimits"]

log = logging.getLogger("scorpion.session")
_ids = itertools.count(1)
MATERIALIZE_ATTEMPTS = 8
"""Times a queued catch-up (a gap's events, a resync) is tried while storage is away: about
ten seconds in all, with a growing delay."""
BROADCAST_BUFFER = 64 * 1024
"""Bytes waiting in a socket's buffer above which a connection no longer takes broadcasts."""

Frame = Message | bytes | str
"""A message to encode for this connection, or a frame already encoded for a crowd."""


@dataclass(frozen=True, slots=True)
class Answer:
    """A queued answer or notice: never dropped (the message credits bound them)."""

    message: Message


@dataclass(frozen=True, slots=True)
class Event:
    """A queued game event, projected for this connection when it is sent."""

    game: str
    version: int
    event: dict[str, Any]
    spectator: bool


@dataclass(frozen=True, slots=True)
class Gap:
    """Events this connection was not sent (versions ``after`` + 1 to ``upto``), read from
    the game's log when their turn comes."""

    game: str
    after: int
    upto: int
    spectator: bool


@dataclass(frozen=True, slots=True)
class Resync:
    """A fresh snapshot of a game, in place of a backlog of its events."""

    game: str
    spectator: bool


@dataclass(frozen=True, slots=True)
class Close:
    """Close the connection once everything queued before it is sent."""

    code: int
    reason: str


Queued = Answer | Event | Gap | Resync | Close
"""What a connection's send queue holds, in order."""


@dataclass(frozen=True, slots=True)
class SessionLimits:
    """How much one connection may ask and be sent (from the node's configuration)."""

    message_credits: int
    spectator_credits: int
    credit_window: float
    rate_limit_strikes: int
    send_queue: int


class EventSource(Protocol):
    """Where a session's game events come from: the node's game feed implements it."""

    def frames(
        self, game_id: str, version: int, event: dict[str, Any], viewer: str | None, fmt: Format
    ) -> list[Frame]:
        """Return what ``viewer`` (a racer, or ``None`` for a spectator) is sent of one event."""

    async def missed(self, game_id: str, after: int, upto: int, viewer: str | None) -> list[Message]:
        """Return what ``viewer`` is sent of the events after version ``after`` up to ``upto``."""

    async def resync(self, game_id: str, viewer: str | None) -> Message | None:
        """Return a fresh snapshot of a game for ``viewer``, or ``None`` if it is not followed."""


class Session:
    """State of one connection; outgoing messages go through one bounded queue in order."""

    def __init__(
        self,
        ws: ServerConnection,
        fmt: Format,
        node: str,
        limits: SessionLimits,
        source: EventSource,
        on_resync: Callable[[], None] | None = None,
        address: str = "",
    ) -> None:
        self.ws = ws
        self.address = address
        """The client's real address (behind a trusted balancer, the one it names)."""
        self.fmt = fmt
        self.id = f"{node}/{next(_ids)}"
        self.limits = limits
        self.source = source
        self.on_resync = on_resync or (lambda: None)
        self.player: str | None = None
        self.name = ""
        self.username: str | None = None
        """The account's username; ``None`` for a guest (or before hello)."""
        self.login: str | None = None
        """The id of the session (login) the connection's token belongs to."""
        self.passkey: Any = None
        """The passkey ceremony begun on this connection (a ``passkeys.Pending``), if any."""
        self.room: str | None = None
        self.queued: str | None = None
        self.queue_timer: asyncio.Task[None] | None = None
        self.games: dict[str, int] = {}
        self.watching: dict[str, int] = {}
        self.boards: dict[tuple[str, str], int] = {}
        self.list_variant: str | None = None
        self.out: deque[Queued] = deque()
        self.resynced: dict[tuple[str, bool], int] = {}
        """Per game followed (as a racer, or as a spectator): the version of the last
        snapshot a resync sent; queued events up to it are dropped."""
        self.wake = asyncio.Event()
        self.events_queued = 0
        self.busy = False
        self.closed = False
        self.closing = False
        self.forgotten = False
        self.flow = Flow()
        self.player_credits = Credits(limits.message_credits, limits.credit_window, limits.rate_limit_strikes)
        self.spectator_credits = Credits(
            limits.spectator_credits, limits.credit_window, limits.rate_limit_strikes
        )
        self.writer: asyncio.Task[None] | None = None
        self.flush_due = False
        """Whether frames are framed and waiting for the end of this loop turn's write."""
        self.framed = 0
        """Bytes framed and not yet handed to the socket (counted against its buffer)."""

    def place(self) -> str:
        """Name what holds this connection in its state, for a refusal to say what is in the way."""
        state = self.flow.state
        if state is FlowState.RACING and self.games:
            return f"game {next(reversed(self.games))}"
        if state is FlowState.WATCHING and self.watching:
            return f"game {next(reversed(self.watching))}"
        if state is FlowState.IN_ROOM and self.room:
            return f"room {self.room}"
        if state is FlowState.QUEUED and self.queued:
            return f"queue {self.queued}"
        return ""

    # -- credits ------------------------------------------------------------------------

    def spend_credit(self) -> str:
        """Take one message credit: ``ok``, ``rate_limited`` or ``close`` (too many strikes).

        A connection that only watches games draws on the smaller spectator credits.
        """
        spectator_only = not self.games and bool(self.watching)
        credits = self.spectator_credits if spectator_only else self.player_credits
        return credits.take(time.monotonic())

    # -- sending ------------------------------------------------------------------------

    def send(self, message: Message) -> None:
        """Queue an answer or notice for this connection (never blocks).

        Answers are bounded by the message credits, so they are never dropped; only
        unsolicited game events count against the send queue's bound.
        """
        if self.closed:
            return
        # The state follows what the server has decided to say, in that order: a request
        # that arrives right after hello is checked against the state welcome leads to.
        self.flow.sent(message)
        if self._writable_now():
            try:
                self._write_soon(encode(message, self.fmt))
                return
            except Exception:
                log.exception("direct send failed", extra={"session": self.id})
        self.out.append(Answer(message))
        self.wake.set()

    def _writable_now(self) -> bool:
        """Tell whether a frame may be written right away rather than through the queue.

        Only when nothing is queued or being written (so order is kept) and the socket's
        write buffer is small; otherwise the writer task sends it, waiting for the socket.
        """
        if self.out or self.busy or self.closing or self.closed:
            return False
        transport = self.ws.transport
        return transport is not None and transport.get_write_buffer_size() + self.framed < BROADCAST_BUFFER

    def _write_soon(self, frame: bytes | str) -> None:
        """Frame ``frame`` now; write it, with whatever else this loop turn frames for the
        connection, in one write at the end of the turn.

        A racer's answer and a rival's progress often come in the same turn (the replies of
        many racers' actions arrive in one read from Redis): one write, one system call and
        one wake-up of the reader instead of two. The frames keep their order: framing is
        what orders them, and every later write (the writer task's, websockets' own pongs)
        sends what is framed first.
        """
        ws = self.ws
        if ws.protocol.state is not State.OPEN or ws.send_in_progress is not None:
            return  # closing, or a fragmented message being sent (never ours): as broadcast does
        if isinstance(frame, str):
            frame = frame.encode()
            ws.protocol.send_text(frame)
        else:
            ws.protocol.send_binary(frame)
        self.framed += len(frame)
        if not self.flush_due:
            self.flush_due = True
            asyncio.get_running_loop().call_soon(self._flush)

    def _flush(self) -> None:
        """Write every frame framed since the last write, in one call."""
        self.flush_due = False
        self.framed = 0
        ws = self.ws
        chunks = ws.protocol.data_to_send()
        if not chunks:
            return  # written already, by a write that came first
        try:
            if all(chunks):
                ws.transport.write(chunks[0] if len(chunks) == 1 else b"".join(chunks))
                return
            for chunk in chunks:  # the end of the stream after a close frame: as websockets does
                if chunk:
                    ws.transport.write(chunk)
                elif ws.transport.can_write_eof():
                    ws.transport.write_eof()
                else:
                    ws.transport.close()
        except Exception as exc:  # a transport closing under us: the reader task sees the close
            log.debug("write failed: %s", exc, extra={"session": self.id})

    def _put(self, item: Event | Gap) -> None:
        if self.closed:
            return
        self.events_queued += 1
        if self.events_queued > self.limits.send_queue:
            self._overflow()
            return
        self.out.append(item)
        self.wake.set()

    def _overflow(self) -> None:
        """Replace a backlog of game events by resyncs: a slow reader never holds the others up."""
        kept = [item for item in self.out if isinstance(item, Answer)]
        self.out.clear()
        self.out.extend(kept)
        for game_id in self.games:
            self.out.append(Resync(game_id, False))
        for game_id in self.watching:
            self.out.append(Resync(game_id, True))
        self.events_queued = 0
        self.on_resync()
        self.wake.set()

    def deliver(self, game_id: str, version: int, event: dict[str, Any], spectator: bool) -> None:
        """Queue a game event (from pub/sub or the log), filling any gap from the log first."""
        follows = self.watching if spectator else self.games
        last = follows.get(game_id)
        if last is None or version <= last:
            return
        if version > last + 1:
            # Events this connection was not sent (another node's, still in flight or lost
            # to a pub/sub outage): read them from the log, in order, before going on.
            self._put(Gap(game_id, last, version - 1, spectator))
        if event.get("origin") == self.id and not spectator:
            follows[game_id] = version  # this connection already has (or is about to get) its answer
            return
        follows[game_id] = version
        if self._writable_now():
            try:
                for message in self._event_messages(game_id, version, event, spectator):
                    if not isinstance(message, (bytes, str)):
                        self.flow.sent(message)
                        message = encode(message, self.fmt)
                    self._write_soon(message)
            except Exception:
                log.exception("event delivery failed", extra={"session": self.id, "game": game_id})
            return
        self._put(Event(game_id, version, event, spectator))

    def takes_broadcast(self, game_id: str, version: int) -> bool:
        """Tell whether a spectator event may skip the queue and be written right away.

        Only when nothing is queued or being written (order is kept), the event is the next
        version, and the socket's write buffer is small (a slow reader goes through the
        bounded queue and its resyncs instead).
        """
        return self.watching.get(game_id) == version - 1 and self._writable_now()

    async def run_writer(self) -> None:
        """Send queued items in order until the connection closes."""
        try:
            while True:
                while not self.out:
                    self.wake.clear()
                    await self.wake.wait()
                item = self.out.popleft()
                self.busy = True
                if isinstance(item, (Event, Gap)):
                    self.events_queued -= 1
                elif isinstance(item, Close):
                    await self.ws.close(item.code, item.reason)
                    return
                for message in await self._materialize_patiently(item):
                    if isinstance(message, (bytes, str)):
                        await self.ws.send(message)  # a frame encoded once for every spectator
                        continue
                    if not isinstance(item, Answer):
                        self.flow.sent(message)  # events: the state moves as they go out
                    await self.ws.send(encode(message, self.fmt))
                self.busy = False
        except ConnectionClosed:
            pass
        except asyncio.CancelledError:
            raise
        except Exception:
            log.exception("writer failed", extra={"session": self.id})
            with contextlib.suppress(Exception):
                await self.ws.close(1011, "internal error")

    def _event_messages(
        self, game_id: str, version: int, event: dict[str, Any], spectator: bool
    ) -> list[Frame]:
        viewer = None if spectator else self.player
        return self.source.frames(game_id, version, event, viewer, self.fmt)

    async def _materialize_patiently(self, item: Answer | Event | Gap | Resync) -> list[Frame]:
        """Build an item's frames; what needs storage (a gap's events, a resync) waits for it
        while it is away, in order, rather than failing the connection. After a long wait
        the item is dropped: the client sees the gap in the versions and resumes."""
        for attempt in range(MATERIALIZE_ATTEMPTS):
            try:
                return await self._materialize(item)
            except UNREACHABLE:
                if attempt == MATERIALIZE_ATTEMPTS - 1:
                    log.warning("storage away: dropped a catch-up", extra={"session": self.id})
                    return []
                await asyncio.sleep(min(2.0, 0.1 * 2**attempt))
        return []

    async def _materialize(self, item: Answer | Event | Gap | Resync) -> list[Frame]:
        match item:
            case Answer(message):
                return [message]
            case Event(game_id, version, event, spectator):
                if version <= self.resynced.get((game_id, spectator), 0):
                    return []  # the snapshot a resync sent holds it already
                return self._event_messages(game_id, version, event, spectator)
            case Gap(game_id, after, upto, spectator):
                after = max(after, self.resynced.get((game_id, spectator), 0))
                if upto <= after:
                    return []
                viewer = None if spectator else self.player
                return list(await self.source.missed(game_id, after, upto, viewer))
            case Resync(game_id, spectator):
                if not spectator:
                    assert self.player is not None
                snapshot = await self.source.resync(game_id, None if spectator else self.player)
                if snapshot is None:
                    return []
                version = getattr(snapshot, "v", 0)
                follows = self.watching if spectator else self.games
                follows[game_id] = max(follows.get(game_id, 0), version)
                self.resynced[game_id, spectator] = version
                return [snapshot]
        return []

    async def close_after_flush(self, code: int, reason: str, timeout: float = 5.0) -> None:
        """Send what is queued, then close with ``code``; wait at most ``timeout`` seconds."""
        self.out.append(Close(code, reason))
        self.wake.set()
        if self.writer is not None:
            with contextlib.suppress(TimeoutError, asyncio.CancelledError):
                await asyncio.wait_for(asyncio.shield(self.writer), timeout)

    def close_queue(self) -> None:
        """Drop everything queued; the connection is going away."""
        self.closed = True
        self.out.clear()
        self.wake.set()
