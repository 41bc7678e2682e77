"""The game feed: which of this node's connections receive which game event, and how.

A node follows a game's channel while any of its connections races in it or watches it.
Each event reaches the racers first, then the spectators through one fan-out task per game
(encoded once per format for the whole crowd). The feed also keeps the live games list's
followers and the spectator counts, and gives sessions what they missed (it is their
:class:`~server.session.EventSource`).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
from collections import OrderedDict, deque
from typing import Any

import orjson
from websockets.asyncio.server import ServerConnection, broadcast

from protocol.wire.codec import Format, encode
from protocol.wire.error import ErrorCode, ProtocolError
from protocol.wire.message import GameInfo, GamesUpdate, Message, Spectators

from ..daily import DailyService
from ..runtime.service import Plumbing, Service
from ..session import Frame, Session
from ..store import LIVE_CHANNEL, UNREACHABLE, game_channel, game_event, game_of_channel, live_change
from .clock import count_outages
from .live import GameListener, LiveGame, now_ms, project
from .race import RaceService

__all__ = ["FAN_OUT_BATCH", "FRAME_CACHE", "RESUME_BATCH_LIMIT", "GameFeed"]

FRAME_CACHE = 4096
"""Encoded spectator frames kept (a few seconds of every live game's events)."""
RESUME_BATCH_LIMIT = 100
"""Missed events above which a resuming client gets a snapshot instead of a batch."""
FAN_OUT_BATCH = 64
"""Spectator sockets written to between two turns of the event loop."""


class GameFeed(Service):
    """Deliver game events to this node's racers and spectators; follow the live list."""

    def __init__(self, plumbing: Plumbing, race: RaceService, daily: DailyService) -> None:
        super().__init__(plumbing)
        self.race = race
        self.daily = daily
        self.watchers: dict[str, set[Session]] = {}
        self.fanouts: dict[str, deque[tuple[int, dict[str, Any]]]] = {}
        """Per game, events waiting to be written to this node's spectators, in order."""
        self.followed: set[str] = set()
        self.list_watchers: set[Session] = set()
        self.frames_sent: OrderedDict[tuple[str, int, bool, str], bytes | str] = OrderedDict()
        self.spectator_totals: dict[str, int] = {}
        self.spectators_reported: dict[str, int] = {}
        """Per game, this node's spectator count as last written to the store."""
        self.hub.on_reconnect.append(self.catch_up)

    # -- following games ----------------------------------------------------------------

    def game_loaded(self, game: LiveGame) -> None:
        """Start a loaded race's time limit on this node (solo games have none)."""
        if game.ended or not game.time_limit_ms:
            return  # over already, or no time limit (solo games)
        delay = max(0.0, (game.start + game.time_limit_ms - now_ms()) / 1000)
        game.timer = self.tasks.spawn(self._time_limit(game.game_id, delay))

    async def _time_limit(self, game_id: str, delay: float) -> None:
        """End the race when its clock (outages left out) reaches the time limit."""
        await asyncio.sleep(delay)
        while True:
            game = self.race.games.get(game_id)
            try:
                if game is not None:
                    await count_outages(self.store, game)
                    left = game.limit_end(now_ms()) - now_ms()
                    if not game.ended and left > 0:
                        await asyncio.sleep(max(0.05, left / 1000))
                        continue
                await self.race.end_race(game_id)
                return
            except UNREACHABLE:
                await self.store.health.wait_to_retry()

    async def follow(self, game_id: str) -> None:
        """Subscribe this node to a game's events (once, however many local followers)."""
        if game_id not in self.followed:
            self.followed.add(game_id)
            # Marked before subscribing: an action committed after the mark is published,
            # one committed before it is in the log, which followers read after subscribing.
            await self.store.follow_game(game_id)
            await self.hub.subscribe(game_channel(game_id), self._on_game_event)

    async def attach(self, session: Session, game_id: str, after: int, ref: Any = None) -> None:
        """Make a racer's connection follow a game from version ``after`` on.

        With a ``ref``, the game's first event answers the request that started it.
        """
        game = await self.race.load(game_id)
        if game is None:
            raise ProtocolError(ErrorCode.NO_SUCH_GAME, f"there is no game {game_id!r}")
        game = self.race.adopt(game)
        game.listeners.add(session)
        session.games[game_id] = after
        await self.follow(game_id)
        for version, raw in await self.store.events(game_id, after):
            event = json.loads(raw)
            self.race.note_event(game, version, event)
            if version == 1 and ref is not None and session.games[game_id] < 1:
                first = project(game, version, event, session.player)
                if first is not None:
                    session.games[game_id] = 1
                    session.send(first.answering(ref))
                    continue
            session.deliver(game_id, version, event, spectator=False)

    async def attach_started(
        self, session: Session, game: LiveGame, first: dict[str, Any], ref: Any = None
    ) -> None:
        """Make a racer's connection follow a game this node has just started (:meth:`RaceService.open_race`
        with ``follow``: the node is marked as its follower already) and answer ``ref`` with
        its first event, without reading back what was written.

        Nothing can have been committed to the game before this (nobody else knows its id
        yet), so subscribing to its channel misses nothing.
        """
        game = self.race.adopt(game)
        game.listeners.add(session)
        session.games[game.game_id] = 1
        if game.game_id not in self.followed:
            self.followed.add(game.game_id)
            await self.hub.subscribe(game_channel(game.game_id), self._on_game_event)
        self.race.note_event(game, 1, first)
        answer = project(game, 1, first, session.player)
        if answer is not None:
            session.send(answer.answering(ref))

    async def listen_as_racer(self, session: Session, game: LiveGame, version: int) -> None:
        """Make a racer's connection follow a game whose events up to ``version`` it has."""
        session.games[game.game_id] = version
        game = self.race.adopt(game)
        game.listeners.add(session)
        await self.follow(game.game_id)

    async def detach(self, session: GameListener, game_id: str) -> None:
        """Stop a racer's connection following a game."""
        session.games.pop(game_id, None)
        game = self.race.games.get(game_id)
        if game is None:
            return
        game.listeners.discard(session)
        await self.maybe_forget(game)

    async def maybe_forget(self, game: LiveGame) -> None:
        """Drop a game from this node once none of its connections follows it."""
        if game.listeners or self.watchers.get(game.game_id):
            return
        if game.game_id in self.followed:
            self.followed.discard(game.game_id)
            with contextlib.suppress(Exception):
                await self.hub.unsubscribe(game_channel(game.game_id), self._on_game_event)
                await self.store.unfollow_game(game.game_id)
        self.spectator_totals.pop(game.game_id, None)
        if self.spectators_reported.pop(game.game_id, 0):
            # The count loop no longer visits this game: take this node's spectators off
            # the game's total now, or the other nodes would go on counting them.
            self.tasks.spawn(self._report_no_spectators(game.game_id))
        if game.timer is not None:
            game.timer.cancel()
            game.timer = None
        self.race.games.pop(game.game_id, None)

    async def drop(self, session: Session) -> None:
        """Forget a closed connection everywhere it followed a game or the live list."""
        for game_id in list(session.watching):
            await self.stop_watching(session, game_id)
        await self.stop_following_list(session)
        for game_id in list(session.games):
            await self.detach(session, game_id)

    # -- events -------------------------------------------------------------------------

    def _on_game_event(self, channel: str, data: str) -> None:
        version, origin, raw = game_event(data)
        if origin == self.node_name:
            return  # made here: delivered to this node's clients when it was committed
        game = self.race.games.get(game_of_channel(channel))
        if game is not None:
            self.race.note_event(game, version, event := orjson.loads(raw))
            self.dispatch_event(game, version, event)

    async def catch_up(self) -> None:
        """Deliver, from the games' logs, the events published while pub/sub was cut off."""
        for game_id in list(self.followed):
            game = self.race.games.get(game_id)
            if game is None:
                continue
            known = game.version
            for version, raw in await self.store.events(game_id, known):
                if version > game.version:
                    self.race.note_event(game, version, event := orjson.loads(raw))
                    self.dispatch_event(game, version, event)

    def local_event(self, game_id: str, version: int, event: dict[str, Any]) -> None:
        """Deliver an event this node just committed (and noted), without waiting for its echo."""
        game = self.race.games.get(game_id)
        if game is not None:
            self.dispatch_event(game, version, event)

    def dispatch_event(self, game: LiveGame, version: int, event: dict[str, Any]) -> None:
        """Hand one game event, already noted in the node's copy, to its racers and spectators here."""
        game_id = game.game_id
        for session in list(game.listeners):
            session.deliver(game_id, version, event, spectator=False)
        if self.watchers.get(game_id):
            self._fan_out(game, version, event)
        if event["type"] == "race_ended":
            self.tasks.spawn(self._race_over(game))

    def _fan_out(self, game: LiveGame, version: int, event: dict[str, Any]) -> None:
        """Queue an event for this node's spectators of ``game``; one task per game writes them.

        Racers come first. The task starts ``spectator_lag`` seconds after the event (a few
        milliseconds): by then the racer's answer has gone out, from this node or from the
        node that committed the event, so writing to a crowd (and the crowd's devices waking
        up to read) does not compete with it for a machine's cores, as when two nodes share
        one. It yields to the loop every ``FAN_OUT_BATCH`` writes, so a racer's request that
        arrives meanwhile is not held up behind a thousand sockets. One queue per game keeps
        every spectator's events in order.
        """
        queue = self.fanouts.get(game.game_id)
        if queue is None:
            queue = self.fanouts[game.game_id] = deque()
            self.tasks.spawn(self._run_fan_out(game, queue, self.config.spectator_lag))
        queue.append((version, event))

    async def _run_fan_out(
        self, game: LiveGame, queue: deque[tuple[int, dict[str, Any]]], lag: float
    ) -> None:
        try:
            await asyncio.sleep(lag)
            while queue:
                version, event = queue.popleft()
                await self._deliver_to_spectators(game, version, event)
        finally:
            if self.fanouts.get(game.game_id) is queue:
                del self.fanouts[game.game_id]

    async def _deliver_to_spectators(self, game: LiveGame, version: int, event: dict[str, Any]) -> None:
        """Hand one game event to this node's spectators of that game."""
        game_id = game.game_id
        delay = game.options.spectator_delay
        if delay:
            # The spectator stream runs ``delay`` seconds behind the race (anti-cheating for
            # tournaments and streamers); the snapshot started from the same point.
            wait = max(0.0, delay - (now_ms() - int(event.get("at", now_ms()))) / 1000)
            loop = asyncio.get_running_loop()
            for session in list(self.watchers.get(game_id, ())):
                loop.call_later(wait, session.deliver, game_id, version, event, True)
        elif event["type"] in ("move", "status"):
            # One encoding per format, written straight to every spectator that is keeping
            # up (websockets' broadcast); the others go through their bounded queues.
            frames: dict[Format, bytes | str] = {}
            batches: dict[Format, list[ServerConnection]] = {}
            written = 0
            for session in list(self.watchers.get(game_id, ())):
                if not session.takes_broadcast(game_id, version):
                    session.deliver(game_id, version, event, spectator=True)
                    continue
                session.watching[game_id] = version
                batch = batches.setdefault(session.fmt, [])
                batch.append(session.ws)
                written += 1
                if written % FAN_OUT_BATCH == 0:
                    self._write_batches(game, version, event, frames, batches)
                    await asyncio.sleep(0)
            self._write_batches(game, version, event, frames, batches)
        else:
            for session in list(self.watchers.get(game_id, ())):
                session.deliver(game_id, version, event, spectator=True)

    def _write_batches(
        self,
        game: LiveGame,
        version: int,
        event: dict[str, Any],
        frames: dict[Format, bytes | str],
        batches: dict[Format, list[ServerConnection]],
    ) -> None:
        for fmt, connections in batches.items():
            if connections:
                frame = frames.get(fmt)
                if frame is None:
                    frame = frames[fmt] = self.spectator_frame(game, version, event, fmt)
                broadcast(connections, frame)
                connections.clear()

    async def _race_over(self, game: LiveGame) -> None:
        await asyncio.sleep(1.0)  # let the final events drain
        for session in list(game.listeners):
            if session.player:
                await self.store.set_player_place(session.player, game="")
            await self.detach(session, game.game_id)
        for session in list(self.watchers.get(game.game_id, ())):
            await self.stop_watching(session, game.game_id)

    # -- what a session missed (its EventSource) ----------------------------------------

    def frames(
        self, game_id: str, version: int, event: dict[str, Any], viewer: str | None, fmt: Format
    ) -> list[Frame]:
        """Return what ``viewer`` (a racer, or ``None`` for a spectator) is sent of one event."""
        game = self.race.games.get(game_id)
        if game is None:
            return []
        if event["type"] in ("move", "status") and viewer != event["player"]:
            # Every spectator gets the same frame, and so does every rival of the racer
            # who moved: each is encoded once per format for all of them.
            return [self.shared_frame(game, version, event, viewer, fmt)]
        projected = project(game, version, event, viewer)
        return [projected] if projected is not None else []

    async def missed(self, game_id: str, after: int, upto: int, viewer: str | None) -> list[Message]:
        """Return what ``viewer`` is sent of the events after version ``after`` up to ``upto``."""
        game = self.race.games.get(game_id)
        if game is None:
            return []
        out: list[Message] = []
        for version, raw in await self.store.events(game_id, after):
            if version > upto:
                break
            projected = project(game, version, json.loads(raw), viewer)
            if projected is not None:
                out.append(projected)
        return out

    async def resync(self, game_id: str, viewer: str | None) -> Message | None:
        """Return a fresh snapshot of a followed game for ``viewer`` (``None``: a spectator)."""
        game = self.race.games.get(game_id)
        if game is None:
            return None
        if viewer is None:
            delay_ms = game.options.spectator_delay * 1000
            return await self.race.spectator_snapshot(game, self.total_spectators(game_id), delay_ms)
        return await self.race.snapshot(game, viewer)

    async def missed_events(
        self, game: LiveGame, since: int, viewer: str | None
    ) -> tuple[list[Message], int] | None:
        """Return what ``viewer`` (a racer, or ``None`` for a spectator) missed after version
        ``since``, and the last version; ``None`` when too many were missed for a batch."""
        missed = await self.store.events(game.game_id, since)
        if len(missed) > RESUME_BATCH_LIMIT:
            return None
        events = []
        for version, raw in missed:
            event = orjson.loads(raw)
            self.race.note_event(game, version, event)
            projected = project(game, version, event, viewer)
            if projected is not None:
                events.append(projected)
        return events, missed[-1][0] if missed else since

    async def resume_with_snapshot(self, session: Session, game: LiveGame, ref: Any) -> None:
        """Answer a racer's resume with a full snapshot, and follow the game from it."""
        assert session.player is not None
        snapshot = await self.race.snapshot(game, session.player)
        await self.listen_as_racer(session, game, snapshot.v)
        session.send(snapshot.answering(ref))

    # -- spectators -----------------------------------------------------------------------

    def spectator_frame(
        self, game: LiveGame, version: int, event: dict[str, Any], fmt: Format
    ) -> bytes | str:
        """Return the encoded spectator frame of an event, encoding it once for the whole crowd."""
        return self.shared_frame(game, version, event, None, fmt)

    def shared_frame(
        self, game: LiveGame, version: int, event: dict[str, Any], viewer: str | None, fmt: Format
    ) -> bytes | str:
        """Return the frame of a racer's event for a spectator (``viewer`` ``None``) or a rival.

        What they see of it does not depend on who they are, so it is encoded once per
        format and kept a while for the others.
        """
        key = (game.game_id, version, viewer is None, fmt)
        frame = self.frames_sent.get(key)
        if frame is None:
            projected = project(game, version, event, viewer)
            assert projected is not None
            frame = encode(projected, fmt)
            self.frames_sent[key] = frame
            if len(self.frames_sent) > FRAME_CACHE:
                self.frames_sent.popitem(last=False)
        return frame

    def spectator_count(self, game_id: str) -> int:
        """Return how many spectators this node has for a game."""
        return len(self.watchers.get(game_id, ()))

    def total_spectators(self, game_id: str) -> int:
        """Return a game's spectators on every node as last counted (this node's before that)."""
        return self.spectator_totals.get(game_id, self.spectator_count(game_id))

    async def watch(self, session: Session, game: LiveGame) -> LiveGame:
        """Add a spectator to a game; return the game as this node keeps it."""
        game = self.race.adopt(game)
        self.watchers.setdefault(game.game_id, set()).add(session)
        await self.follow(game.game_id)
        self.metrics.spectators.inc()
        return game

    async def stop_watching(self, session: Session, game_id: str) -> None:
        """Remove a spectator from a game (nothing if it was not watching it)."""
        if session.watching.pop(game_id, None) is None:
            return
        self.metrics.spectators.dec()
        watchers = self.watchers.get(game_id)
        if watchers is not None:
            watchers.discard(session)
            if not watchers:
                del self.watchers[game_id]
        game = self.race.games.get(game_id)
        if game is not None:
            await self.maybe_forget(game)

    async def _report_no_spectators(self, game_id: str) -> None:
        try:
            await self.store.set_spectators(game_id, self.node_name, 0)
        except Exception:
            self.metrics.redis_errors.inc()

    async def count_spectators(self, tick: float | None = None) -> None:
        """Every tick, publish this node's spectator counts and push changed totals.

        Counts go out in batches, never per join, so a crowd arriving costs one message
        a tick to each racer and spectator.
        """
        while True:
            await asyncio.sleep(self.config.spectator_tick if tick is None else tick)
            counts: list[tuple[LiveGame, int]] = []
            for game_id in list(self.followed):
                game = self.race.games.get(game_id)
                if game is None or game.ended:
                    self.spectator_totals.pop(game_id, None)
                    continue
                counts.append((game, self.spectator_count(game_id)))
            # Every game's count at once (one write to Redis), rather than a round trip each.
            totals = await asyncio.gather(
                *(self.store.set_spectators(game.game_id, self.node_name, here) for game, here in counts),
                return_exceptions=True,
            )
            for (game, here), total in zip(counts, totals, strict=True):
                game_id = game.game_id
                if game_id not in self.followed:
                    continue  # forgotten meanwhile (maybe_forget has taken its count off)
                if isinstance(total, BaseException):
                    if not isinstance(total, Exception):
                        raise total
                    self.metrics.redis_errors.inc()
                    continue
                self.spectators_reported[game_id] = here
                if self.spectator_totals.get(game_id, 0) != total:
                    self.spectator_totals[game_id] = total
                    notice = Spectators(game=game_id, count=total)
                    for follower in list(game.listeners):
                        follower.send(notice)
                    for watcher in list(self.watchers.get(game_id, ())):
                        watcher.send(notice)

    # -- the live games list ----------------------------------------------------------------

    async def follow_list(self, session: Session, variant: str | None) -> None:
        """Send a session the live list's changes from now on."""
        if not self.list_watchers:
            await self.hub.subscribe(LIVE_CHANNEL, self._on_live_change)
        self.list_watchers.add(session)
        session.list_variant = variant

    async def stop_following_list(self, session: Session) -> None:
        """Stop sending a session the live list's changes."""
        if session in self.list_watchers:
            self.list_watchers.discard(session)
            if not self.list_watchers:
                with contextlib.suppress(Exception):
                    await self.hub.unsubscribe(LIVE_CHANNEL, self._on_live_change)

    def _on_live_change(self, channel: str, data: str) -> None:
        self.tasks.spawn(self._push_live_change(*live_change(data)))

    async def _push_live_change(self, started: bool, game_id: str) -> None:
        for session in list(self.list_watchers):
            if started:
                game = await self.race.load(game_id)
                if game is None:
                    continue
                info = await self.game_info(session, game, session.list_variant)
                await self.maybe_forget(game)
                if info is not None:
                    session.send(GamesUpdate(added=(info,)))
            else:
                session.send(GamesUpdate(removed=(game_id,)))

    async def game_info(self, session: Session, game: LiveGame, variant: str | None) -> GameInfo | None:
        """Return a live game's entry for this session's list, or ``None`` if it must not see it."""
        if game.ended or not game.options.spectators:
            return None
        if variant and game.variant != variant:
            return None
        if not await self.daily.may_see(session.player, game.daily, game.variant):
            return None
        return GameInfo(
            game=game.game_id,
            variant=game.variant,
            players=game.racers(),
            start=game.start,
            spectators=self.total_spectators(game.game_id),
            room=game.room,
            racers=game.progress(),
            rematch_of=game.rematch_of,
        )
