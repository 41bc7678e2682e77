"""Games: creation, records, the action script, events, the live list, analyses."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Mapping, Sequence
from typing import Any

from . import scripts
from .base import StoreBase
from .keys import LIVE_CHANNEL, game_channel, game_key, is_ghost
from .records import ActionOutcome, GameRecord, RacerRecord, Unreplicated
from .replies import as_text_or_none, text_list, text_map

FOLLOW_TTL = 2 * 24 * 3600
"""Seconds a node's mark as a game's follower lasts, unless it follows the game again."""
REPLICA_WAIT_MS = 1000
"""How long a racer's action waits for its replicas (``--redis-wait-replicas``) before it is
answered as unconfirmed."""

__all__ = ["RaceStore"]


class RaceStore(StoreBase):
    """Games: creation, records, the action script, events, the live list, analyses."""

    # -- games --------------------------------------------------------------------------

    async def create_game(
        self,
        game_id: str,
        meta: Mapping[Any, Any],
        racers: Sequence[tuple[str, str]],
        first_event: str,
        summary: Mapping[Any, Any],
        *,
        follow: bool = False,
        announce: bool = True,
    ) -> dict[str, int]:
        """Store a new running game with its racers and publish its first event (version 1).

        The game's own keys (one cluster slot) in one script call; then, outside them, the
        players' places and the live list, each a script call of its own slot. All go
        through the move path's connection (written once a loop turn), so a burst of games
        started at once costs a few writes, not a round trip of the pool's per command. With
        ``follow``, this node is marked as the game's follower in the same call as its keys
        (:meth:`follow_game`); without ``announce``, the game is not on the live list yet
        (:meth:`announce_game`). Return each player's time to live (ms, negative: none), as
        :meth:`count_start` takes it.
        """
        roster = json.dumps([{"id": pid, "name": name} for pid, name in racers])
        fields = {**meta, "roster": roster, "state": "racing", "ver": 1}
        tag = "{g:" + game_id + "}:"
        keys = [tag + "meta", tag + "log", tag + "nodes", *(tag + "p:" + pid for pid, _ in racers)]
        args: list[Any] = [first_event, game_channel(game_id), self.origin, FOLLOW_TTL if follow else ""]
        args.append(len(fields))
        for key, value in fields.items():
            args.extend((key, value))
        args.append(len(racers))
        args.extend(name for _, name in racers)
        for key, value in summary.items():
            args.extend((key, value))
        await self._pipeline.script(scripts.CREATE_GAME, keys, args)
        players = [pid for pid, _ in racers if not is_ghost(pid)]  # a recorded run has no player record
        ttls = await asyncio.gather(
            *(self._pipeline.script(scripts.PLACE_GAME, [f"player:{pid}"], [game_id]) for pid in players)
        )
        if announce:
            await self.announce_game(game_id, int(meta["start"]))
        return {pid: int(ttl) for pid, ttl in zip(players, ttls, strict=True)}

    async def restart_game(self, game_id: str, start: int, first_event: str) -> None:
        """Move the start of a game that nothing has happened in yet to ``start`` (ms), its
        first event (``first_event``, stamped with it) too.

        Through the move path's connection, queued as it is called: the game's later
        actions, queued after it on the same connection (a game's keys are of one slot),
        reach Redis after it."""
        tag = "{g:" + game_id + "}:"
        await self._pipeline.script(scripts.RESTART_GAME, [tag + "meta", tag + "log"], [start, first_event])

    async def announce_game(self, game_id: str, start: int) -> None:
        """Put a running game on the live list and tell the list's watchers on every node."""
        await self._pipeline.script(scripts.LIVE_ADD, ["live"], [game_id, start, LIVE_CHANNEL])

    async def game_state(self, game_id: str) -> str | None:
        """Return a game's state (``racing``, ``ended``), or ``None`` if no such game is kept."""
        return as_text_or_none(await self.redis.hget(game_key(game_id, "meta"), "state"))

    async def game(self, game_id: str, *, with_moves: bool = True) -> GameRecord | None:
        """Return a stored game with every racer's record (and move list), or ``None``."""
        meta = text_map(await self.redis.hgetall(game_key(game_id, "meta")))
        if not meta:
            return None
        roster = json.loads(meta["roster"])
        async with self.redis.pipeline(transaction=False) as pipe:
            for racer in roster:
                pipe.hgetall(game_key(game_id, f"p:{racer['id']}"))
                if with_moves:
                    pipe.lrange(game_key(game_id, f"m:{racer['id']}"), 0, -1)
            replies = await pipe.execute()
        per_racer = 2 if with_moves else 1
        racers = []
        for index, racer in enumerate(roster):
            fields = text_map(replies[per_racer * index])
            moves = text_list(replies[per_racer * index + 1]) if with_moves else []
            racers.append(
                RacerRecord(
                    player_id=racer["id"],
                    name=racer["name"],
                    status=fields.get("status", "playing"),
                    changed=int(fields.get("changed", "1")),
                    fields=fields,
                    moves=moves,
                )
            )
        return GameRecord(game_id, meta, racers)

    async def racer(self, game_id: str, player_id: str) -> RacerRecord | None:
        """Return one racer's record, or ``None``."""
        async with self.redis.pipeline(transaction=False) as pipe:
            pipe.hgetall(game_key(game_id, f"p:{player_id}"))
            pipe.lrange(game_key(game_id, f"m:{player_id}"), 0, -1)
            fields_reply, moves_reply = await pipe.execute()
        fields = text_map(fields_reply)
        if not fields:
            return None
        return RacerRecord(
            player_id,
            fields.get("name", ""),
            fields["status"],
            int(fields["changed"]),
            fields,
            text_list(moves_reply),
        )

    async def act(
        self,
        game_id: str,
        player_id: str,
        *,
        seen_version: int,
        based_on: int,
        op: str,
        move: str,
        event: str | bytes,
        summary: str | bytes,
        status: str,
        finished: int | None = None,
    ) -> ActionOutcome:
        """Commit one racer's action in one round trip.

        The script checks that the game is running, that the racer's board is still the
        one the caller validated against (``based_on``, else ``conflict``: reload and
        retry), and that the client had seen the racer's latest change (``seen_version``,
        else ``stale``); then it appends the action to the racer's list (``op`` ``push``;
        ``none`` for a status change such as resigning), stores the new summary (JSON) and
        status (and the finishing time, when given), bumps the version, appends ``event``
        and publishes it.
        """
        tag = "{g:" + game_id + "}:"
        keys = (tag + "meta", tag + "p:" + player_id, tag + "m:" + player_id, tag + "log", tag + "nodes")
        finishing = "" if finished is None else finished
        args = (seen_version, based_on, op, move, event, self.origin, summary, status, finishing)
        if not self.wait_replicas:
            result, value = await self._pipeline.script(scripts.ACT, keys, args)
            return ActionOutcome(result, value)
        reply, acked = await self._pipeline.script_and_wait(
            scripts.ACT, keys, (*args, "1"), self.wait_replicas, REPLICA_WAIT_MS
        )
        result, value = reply[0], reply[1]
        if result == "ok":
            if acked < self.wait_replicas:
                raise Unreplicated(int(value), acked)
            if reply[2] == "1":  # confirmed: now the other nodes may hear of it
                text = event if isinstance(event, bytes) else event.encode()
                await self.redis.spublish(game_channel(game_id), f"{value}|{self.origin}|".encode() + text)
        return ActionOutcome(result, value)

    async def follow_game(self, game_id: str) -> None:
        """Say that this node follows a game's channel: its racers' actions must be published."""
        async with self.redis.pipeline(transaction=False) as pipe:
            pipe.sadd(game_key(game_id, "nodes"), self.origin)
            pipe.expire(game_key(game_id, "nodes"), FOLLOW_TTL)
            await pipe.execute()

    async def unfollow_game(self, game_id: str) -> None:
        """Say that this node no longer follows a game's channel."""
        await self.redis.srem(game_key(game_id, "nodes"), self.origin)

    async def add_pauses(self, game_id: str, spans: Sequence[tuple[int, int]]) -> list[tuple[int, int]]:
        """Add outages (``(start_ms, end_ms)`` pairs) to a running game's paused time; return
        all of its paused spans, merged (the same outage reported by several nodes counts once)."""
        flat: list[int] = [edge for span in spans for edge in span]
        merged = await self._add_pauses(keys=[game_key(game_id, "meta")], args=flat)
        return [(int(a), int(b)) for a, b in json.loads(merged)]

    async def set_racer_status(
        self, game_id: str, player_id: str, event: str, fields: Mapping[Any, Any]
    ) -> int:
        """Change a running racer's status (e.g. ``left``); return the new version or 0."""
        keys = [game_key(game_id, "meta"), game_key(game_id, f"p:{player_id}"), game_key(game_id, "log")]
        flat: list[str | int] = []
        for key, value in fields.items():
            flat.extend((key, value))
        args = [event, game_channel(game_id), self.origin, *flat]
        version: int = await self._set_status(keys=keys, args=args)
        return version

    async def end_game(
        self,
        game_id: str,
        racer_ids: Sequence[str],
        event: str,
        ended_ms: int,
        standings: str,
        keep_ms: int,
        *,
        paused: str | None = None,
    ) -> int:
        """End a running game exactly once; return the final version, or 0 if already ended.

        With ``paused`` (the game's paused spans as the standings were scored with them),
        return -1 without ending the game if they have changed since: score it again.
        """
        keys = [game_key(game_id, "meta"), game_key(game_id, "log")]
        for pid in racer_ids:
            keys.append(game_key(game_id, f"p:{pid}"))
            keys.append(game_key(game_id, f"m:{pid}"))
        args: list[str | int] = [event, game_channel(game_id), ended_ms, standings, keep_ms, self.origin]
        if paused is not None:
            args.append(paused)
        version: int = await self._end(keys=keys, args=args)
        if version:
            await self.drop_live(game_id)
        return version

    async def drop_live(self, game_id: str) -> None:
        """Take a game off the live list (it ended, or is gone) and say so on its channel,
        once: only the call that removes it announces it."""
        if await self.redis.zrem("live", game_id):
            await self.redis.publish(LIVE_CHANNEL, "-" + game_id)

    async def events(self, game_id: str, after: int) -> list[tuple[int, str]]:
        """Return the game's events with versions greater than ``after``, in order."""
        entries = text_list(await self.redis.lrange(game_key(game_id, "log"), after, -1))
        return [(after + 1 + index, entry) for index, entry in enumerate(entries)]

    async def save_analysis(self, game_id: str, player_id: str, analysis: str, keep_ms: int) -> None:
        """Keep a racer's post-game analysis with the game."""
        await self.redis.set(game_key(game_id, f"a:{player_id}"), analysis, px=keep_ms)

    async def analysis(self, game_id: str, player_id: str) -> str | None:
        """Return a racer's stored post-game analysis, or ``None`` while it is computed."""
        return as_text_or_none(await self.redis.get(game_key(game_id, f"a:{player_id}")))

    async def set_spectators(self, game_id: str, node: str, count: int) -> int:
        """Record this node's spectator count of a game; return the count over all nodes.

        Through the move path's connection: a node reports every game it follows each tick,
        and the calls of one tick leave in one write."""
        key = game_key(game_id, "watchers")
        return int(await self._pipeline.script(scripts.SPECTATORS, [key], [node, count]))

    async def live_games(self, limit: int = 200) -> list[str]:
        """Return the ids of running games, oldest first."""
        return text_list(await self.redis.zrange("live", 0, limit - 1))
