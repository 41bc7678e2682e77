"""One websocket connection: who it is, what it follows, its send queue and its credits."""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import json
import logging
import time
from collections import deque
from typing import TYPE_CHECKING, Any

from websockets.asyncio.server import ServerConnection
from websockets.exceptions import ConnectionClosed

from protocol.codec import Format, encode
from protocol.flow import Credits, Flow
from protocol.message import Message

from .race import project

if TYPE_CHECKING:
    from .app import ScorpionServer

__all__ = ["Session"]

log = logging.getLogger("scorpion.session")
_ids = itertools.count(1)


class Session:
    """State of one connection; outgoing messages go through one bounded queue in order."""

    def __init__(self, app: ScorpionServer, ws: ServerConnection, fmt: Format) -> None:
        self.app = app
        self.ws = ws
        self.fmt = fmt
        self.id = f"{app.node}/{next(_ids)}"
        self.player: str | None = None
        self.name = ""
        self.room: str | None = None
        self.queued: str | None = None
        self.queue_timer: asyncio.Task[None] | None = None
        self.games: dict[str, int] = {}
        self.watching: dict[str, int] = {}
        self.out: deque[tuple[Any, ...]] = deque()
        self.wake = asyncio.Event()
        self.closed = False
        self.flow = Flow()
        self.player_credits = Credits(
            app.config.message_credits, app.config.credit_window, app.config.rate_limit_strikes
        )
        self.spectator_credits = Credits(
            app.config.spectator_credits, app.config.credit_window, app.config.rate_limit_strikes
        )
        self.writer: asyncio.Task[None] | None = None

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
        """Queue a message for this connection (never blocks)."""
        self._put(("msg", message))

    def _put(self, item: tuple[Any, ...]) -> None:
        if self.closed:
            return
        if len(self.out) >= self.app.config.send_queue:
            self._overflow()
        self.out.append(item)
        self.wake.set()

    def _overflow(self) -> None:
        """Replace a backlog by resyncs: a slow reader never holds the others up."""
        kept = [item for item in self.out if item[0] == "msg" and item[1].ref is not None]
        self.out.clear()
        self.out.extend(kept[-8:])
        for game_id in self.games:
            self.out.append(("resync", game_id, False))
        for game_id in self.watching:
            self.out.append(("resync", game_id, True))
        self.app.metrics.resyncs.inc()

    def deliver(self, game_id: str, version: int, event: dict[str, Any], spectator: bool) -> None:
        """Queue a game event (from pub/sub or the log), filling any gap from the log first."""
        follows = self.watching if spectator else self.games
        last = follows.get(game_id)
        if last is None or version <= last:
            return
        if event.get("origin") == self.id and not spectator:
            follows[game_id] = version  # this connection already has its answer
            return
        if version > last + 1:
            self._put(("gap", game_id, last, version - 1, spectator))
        follows[game_id] = version
        self._put(("event", game_id, version, event, spectator))

    async def run_writer(self) -> None:
        """Send queued items in order until the connection closes."""
        try:
            while True:
                while not self.out:
                    self.wake.clear()
                    await self.wake.wait()
                item = self.out.popleft()
                for message in await self._materialize(item):
                    self.flow.sent(message)
                    await self.ws.send(encode(message, self.fmt))
        except ConnectionClosed:
            pass
        except asyncio.CancelledError:
            raise
        except Exception:
            log.exception("writer failed", extra={"session": self.id})
            with contextlib.suppress(Exception):
                await self.ws.close(1011, "internal error")

    async def _materialize(self, item: tuple[Any, ...]) -> list[Message]:
        kind = item[0]
        if kind == "msg":
            message: Message = item[1]
            return [message]
        race = self.app.race
        if kind == "event":
            _, game_id, version, event, spectator = item
            game = race.games.get(game_id)
            if game is None:
                return []
            projected = project(game, version, event, None if spectator else self.player)
            return [projected] if projected is not None else []
        if kind == "gap":
            _, game_id, after, upto, spectator = item
            game = race.games.get(game_id)
            if game is None:
                return []
            out = []
            for version, raw in await self.app.store.events(game_id, after):
                if version > upto:
                    break
                projected = project(game, version, json.loads(raw), None if spectator else self.player)
                if projected is not None:
                    out.append(projected)
            return out
        if kind == "resync":
            _, game_id, spectator = item
            game = race.games.get(game_id)
            if game is None:
                return []
            if spectator:
                return [await race.spectator_snapshot(game, self.app.spectator_count(game_id))]
            assert self.player is not None
            snapshot = await race.snapshot(game, self.player)
            self.games[game_id] = max(self.games.get(game_id, 0), snapshot.v)
            return [snapshot]
        return []

    def close_queue(self) -> None:
        """Drop everything queued; the connection is going away."""
        self.closed = True
        self.out.clear()
        self.wake.set()
