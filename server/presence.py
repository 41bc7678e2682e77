"""Who is connected: a player's connections on this node, their notices, and their absence.

A player's connections share one notice channel (room changes, countdowns, a match found,
a race started, an analysis ready, a rematch offered). A racer who disconnects gets a grace
period to come back, on any node, before they count as having left; so do the racers of a
node that went silent (killed without closing its connections).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
from typing import Any

from protocol.game import VARIANTS
from protocol.wire.flow import CLOSE_POLICY
from protocol.wire.message import (
    Analysis,
    Countdown,
    MatchFound,
    Racer,
    RatingChange,
    RatingDelta,
    RematchOffered,
    RoomState,
    from_dict,
)

from .game.feed import GameFeed
from .game.live import now_ms
from .game.race import RaceService
from .matchmaking import REQUEUE_MEMORY_MS
from .rooms import leave_rooms
from .runtime.service import Plumbing, Service
from .session import Session
from .store import UNREACHABLE, player_channel, player_of_channel

__all__ = ["Presence"]

log = logging.getLogger("scorpion.server")


class Presence(Service):
    """Track this node's connections per player; start grace periods; deliver notices."""

    def __init__(self, plumbing: Plumbing, race: RaceService, feed: GameFeed) -> None:
        super().__init__(plumbing)
        self.by_player: dict[str, set[Session]] = {}
        """This node's open connections of each player who said hello."""
        self.race = race
        self.feed = feed
        self.unsettled: set[str] = set()
        """Players whose departure could not be written (Redis was down): settled once it is back."""
        self.store.health.on_change.append(self._store_changed)

    async def arrive(self, session: Session, player: str) -> None:
        """Count a connection of ``player`` that has said hello, and listen to their notices."""
        peers = self.by_player.setdefault(player, set())
        if not peers:
            await self.hub.subscribe(player_channel(player), self._on_player_notice)
        peers.add(session)
        await self.store.presence(player, 1)

    async def leave(self, session: Session) -> None:
        """Forget a closed connection of a player; start their grace period if it was the last."""
        if session.player is None:
            return
        player = session.player
        peers = self.by_player.get(player, set())
        peers.discard(session)
        if not peers:
            self.by_player.pop(player, None)
            with contextlib.suppress(Exception):
                await self.hub.unsubscribe(player_channel(player), self._on_player_notice)
        if session.forgotten:
            return  # nothing of theirs is left to clean up
        try:
            remaining = await self.store.presence(player, -1) if self.store.health.up else None
        except UNREACHABLE:
            remaining = None
        if remaining is None:
            self.unsettled.add(player)  # counted again, from the connections left, when Redis is back
            return
        with contextlib.suppress(Exception):
            if session.queued:
                await self.store.leave_queues(session.queued, player, now_ms(), REQUEUE_MEMORY_MS)
            if remaining == 0:
                if await self.store.player_rooms(player):
                    self.tasks.spawn(self.room_grace(player))
                places = await self.store.player_places(player)
                if "game" in places:
                    self.tasks.spawn(self.grace(player, places["game"]))
                # What this visit wrote (a saved game's moves, say) is kept as long as the player.
                guest, account = self.config.guest_retention, self.config.account_retention
                await self.store.keep_player(player, int(guest * 1000), list(VARIANTS), int(account * 1000))

    def _store_changed(self, up: bool) -> None:
        if up and self.unsettled:
            self.tasks.spawn(self._settle())

    async def _settle(self) -> None:
        """State the connection counts of players who left while Redis was down (a count that
        is set, not decremented, is right even if a lost decrement did reach Redis), and start
        the grace period of those now gone."""
        players, self.unsettled = self.unsettled, set()
        counts = {player: len(self.by_player.get(player, ())) for player in players}
        try:
            await self.store.restate_presence(counts)
            for player in players:
                if counts[player] == 0 and await self.store.presence(player, 0) == 0:
                    places = await self.store.player_places(player)
                    if "game" in places:
                        self.tasks.spawn(self.grace(player, places["game"]))
        except UNREACHABLE:
            self.unsettled |= players  # down again: settled on the next recovery

    # -- absence --------------------------------------------------------------------------

    async def heartbeat(self) -> None:
        """Tell the other nodes this one is alive; take over the racers of nodes that died.

        A node killed without closing its connections leaves its players counted as
        connected. Once it has been silent for ``node_timeout``, every other node drops
        that node's connections of the racers in the games it follows and starts their
        grace period, as if they had just disconnected (a racer who comes back in time,
        to any node, races on). A node that finds itself silent for that long (stalled,
        or cut off from Redis) states its own connections again.
        """
        handled: set[str] = set()
        timeout_ms = int(self.config.node_timeout * 1000)
        last = now_ms()
        while True:
            try:
                now = now_ms()
                silent = await self.store.heartbeat(now, timeout_ms)
                if now - last > timeout_ms:
                    await self.store.restate_presence({p: len(s) for p, s in self.by_player.items()})
                last = now
                for node in silent:
                    if node not in handled:
                        handled.add(node)
                        await self._take_over(node)
            except asyncio.CancelledError:
                raise
            except Exception as exc:
                self.metrics.redis_errors.inc()
                log.warning("heartbeat failed", extra={"error": repr(exc)})
            await asyncio.sleep(self.config.node_heartbeat)

    async def _take_over(self, node: str) -> None:
        """Start the grace periods of a dead node's players: its racers in the games this
        node follows, and everyone sitting in a room (whose rooms nobody else would close)."""
        log.warning("a node went silent: its racers get their grace period", extra={"silent": node})
        for game in list(self.race.games.values()):
            if game.ended:
                continue
            for player, status in list(game.status.items()):
                if status == "playing" and await self.store.forget_node_presence(player, node) == 0:
                    self.tasks.spawn(self.grace(player, game.game_id))
        for player in sorted(await self.store.room_members_everywhere()):
            if await self.store.forget_node_presence(player, node) == 0:
                self.tasks.spawn(self.room_grace(player))

    async def grace(self, player: str, game_id: str) -> None:
        """Wait the grace period; a racer still away then has left the race."""
        await asyncio.sleep(self.config.grace_period)
        while True:
            try:
                if await self.store.presence(player, 0) > 0:
                    return
                game = await self.race.load(game_id)
                if game is not None and game.saved:
                    # A saved solo game waits for its player, its clock stopped from when
                    # they went (solo_resume leaves the time away out of it).
                    went = now_ms() - int(self.config.grace_period * 1000)
                    await self.store.leave_saved_game(game_id, went)
                    return
                await self.race.mark_left(game_id, player)
                return
            except UNREACHABLE:
                await self.store.health.wait_to_retry()

    async def room_grace(self, player: str) -> None:
        """Wait the grace period; a player still away then leaves every room they host or
        sit in, whichever of their connections entered it (no room is left to a host who
        can never start it)."""
        await asyncio.sleep(self.config.grace_period)
        while True:
            try:
                if await self.store.presence(player, 0) == 0:
                    await leave_rooms(self.store, player)
                return
            except UNREACHABLE:
                await self.store.health.wait_to_retry()

    # -- notices to one player --------------------------------------------------------------

    def _on_player_notice(self, channel: str, data: str) -> None:
        notice = json.loads(data)
        for session in list(self.by_player.get(player_of_channel(channel), ())):
            self.tasks.spawn(self._apply_notice(session, notice))

    async def _apply_notice(self, session: Session, notice: dict[str, Any]) -> None:
        kind = notice["kind"]
        if kind == "room":
            session.send(RoomState.from_dict(notice["room"]))
        elif kind == "countdown":
            session.send(Countdown(room=notice["room"], seconds=notice["seconds"], start=notice["start"]))
        elif kind == "match":
            session.queued = None
            if session.queue_timer is not None:
                session.queue_timer.cancel()
            players = tuple(Racer(**p) for p in notice["players"])
            session.send(MatchFound(variant=notice["variant"], players=players, start=notice["start"]))
        elif kind == "race":
            session.room = None
            await self.feed.attach(session, notice["game"], 0)
        elif kind == "rating":
            changes = tuple(RatingDelta.from_dict(change) for change in notice["changes"])
            session.send(RatingChange(game=notice["game"], variant=notice["variant"], changes=changes))
        elif kind == "analysis":
            session.send(Analysis(game=notice["game"], player=session.player or "", **notice["analysis"]))
        elif kind == "message":  # a message made whole by the sender (challenges)
            session.send(from_dict(notice["message"]))
        elif kind == "revoked":
            if session.login in notice["sessions"]:
                session.closing = True
                self.tasks.spawn(session.close_after_flush(CLOSE_POLICY, "session revoked"))
        elif kind == "rematch":
            session.send(
                RematchOffered(
                    game=notice["game"], room=notice["room"], player=notice["player"], name=notice["name"]
                )
            )
