"""Players: identity, presence, statistics, saved games, forget-me."""

from __future__ import annotations

import json
import secrets
from collections.abc import Mapping, Sequence
from typing import Any

from . import scripts
from .base import StoreBase
from .keys import (
    FORGOTTEN_NAME,
    NODES_KEY,
    game_key,
    login_key,
    passkeys_key,
    player_channel,
    sessions_key,
    username_key,
)
from .ratings import rating_key
from .replies import as_text_or_none, text_list, text_map, text_or_none_list, text_set

__all__ = ["PlayerStore"]


class PlayerStore(StoreBase):
    """Players: identity, presence, statistics, saved games, forget-me."""

    # -- players ------------------------------------------------------------------------

    async def create_player(self, name: str, now_ms: int, ttl_ms: int) -> str:
        """Create a guest kept ``ttl_ms`` unless they come back; return its id (its session
        is opened apart: :meth:`AccountStore.open_session`)."""
        player_id = "p" + secrets.token_hex(8)
        async with self.redis.pipeline(transaction=True) as pipe:
            pipe.hset(f"player:{player_id}", mapping={"name": name, "created": now_ms})
            pipe.pexpire(f"player:{player_id}", ttl_ms)
            await pipe.execute()
        return player_id

    async def keep_player(
        self, player_id: str, ttl_ms: int, variants: Sequence[str], account_ttl_ms: int | None = None
    ) -> None:
        """Keep everything of a player for ``ttl_ms`` more (``account_ttl_ms`` for an account):
        their identity, a guest's session tokens, an account's username, statistics, saved
        games (their games' keys too), results, leaderboard index and ratings (a key they do
        not have is skipped)."""
        player = f"player:{player_id}"
        async with self.redis.pipeline(transaction=False) as pipe:  # keys of many slots
            pipe.hget(player, "skeleton")
            pipe.zrange(f"saved:{player_id}", 0, -1)
            pipe.hvals(sessions_key(player_id))
            shape, saved, sessions = await pipe.execute()
        keys = [player, *self._player_keys(player_id, variants)]
        if shape:
            ttl_ms = account_ttl_ms or ttl_ms
            keys.append(username_key(str(as_text_or_none(shape))))
        else:  # a guest's session lasts as long as the guest
            keys += [json.loads(raw)["token"] for raw in sessions]
        for game_id in text_list(saved):
            keys += [game_key(game_id, part) for part in ("meta", "log", f"p:{player_id}", f"m:{player_id}")]
        await self._pexpire_each(keys, ttl_ms)

    @staticmethod
    def _player_keys(player_id: str, variants: Sequence[str]) -> list[str]:
        """Return the names of a player's own keys besides ``player:ID`` and its token."""
        keys = [f"stats:{player_id}:{variant}" for variant in variants]
        keys += [f"saved:{player_id}", f"results:{player_id}", f"boards:{player_id}"]
        keys += [rating_key(player_id, part) for part in ("", "games", "delta")]
        keys += [sessions_key(player_id), passkeys_key(player_id)]
        return keys

    async def rename_player(self, player_id: str, name: str) -> None:
        """Change a player's display name."""
        await self.redis.hset(f"player:{player_id}", "name", name)

    async def player_names(self, player_ids: Sequence[str]) -> list[str]:
        """Return the players' display names, in order (``?`` for one that is gone)."""
        async with self.redis.pipeline(transaction=False) as pipe:  # players of many slots
            for player_id in player_ids:
                pipe.hget(f"player:{player_id}", "name")
            names = text_or_none_list(await pipe.execute())
        return [name or "?" for name in names]

    async def player_places(self, player_id: str) -> dict[str, str]:
        """Return the player's current ``room`` and ``game`` (absent fields when none)."""
        values = text_or_none_list(await self.redis.hmget(f"player:{player_id}", ["room", "game"]))
        return {k: v for k, v in zip(("room", "game"), values, strict=True) if v}

    async def set_player_place(
        self, player_id: str, *, room: str | None = None, game: str | None = None
    ) -> None:
        """Record the room and game a player is in (an empty string clears one)."""
        mapping: dict[Any, Any] = {k: v for k, v in (("room", room), ("game", game)) if v is not None}
        if mapping:
            await self.redis.hset(f"player:{player_id}", mapping=mapping)

    async def notify(self, player_id: str, payload: Mapping[str, Any]) -> None:
        """Publish a direct notice to one player on whichever node holds them."""
        await self.redis.publish(player_channel(player_id), json.dumps(payload))

    async def notify_each(self, player_ids: Sequence[str], payload: Mapping[str, Any]) -> None:
        """Publish the same notice to several players, in one round trip."""
        text = json.dumps(payload)
        await self.publish_all([(player_channel(player_id), text) for player_id in player_ids])

    async def presence(self, player_id: str, delta: int) -> int:
        """Add ``delta`` to the player's open connections on this node; return their count on
        every node (``delta`` 0 only reads it)."""
        count: int = await self._presence(keys=[f"online:{player_id}"], args=[self.instance, delta])
        return count

    async def forget_node_presence(self, player_id: str, node: str) -> int:
        """Drop a dead node's connections of a player; return the player's count on the others."""
        count: int = await self._presence(keys=[f"online:{player_id}"], args=[node, "drop"])
        return count

    async def restate_presence(self, counts: Mapping[str, int]) -> None:
        """Set this node's connection counts of players (after it was silent too long)."""
        if not counts:
            return
        async with self.redis.pipeline(transaction=False) as pipe:  # one round trip for all
            for player_id, count in counts.items():
                args = [self.instance, "set", count]
                await self._presence(keys=[f"online:{player_id}"], args=args, client=pipe)
            await pipe.execute()

    async def heartbeat(self, now_ms: int, timeout_ms: int) -> list[str]:
        """Say this node is alive; return the nodes silent for longer than ``timeout_ms``.

        Nodes silent for ten timeouts are forgotten: every live node has long handled them.
        """
        async with self.redis.pipeline(transaction=False) as pipe:
            pipe.zadd(NODES_KEY, {self.instance: now_ms})
            pipe.zrangebyscore(NODES_KEY, "-inf", now_ms - timeout_ms)
            pipe.zremrangebyscore(NODES_KEY, "-inf", now_ms - 10 * timeout_ms)
            _, silent, _ = await pipe.execute()
        return [node for node in text_list(silent) if node != self.instance]

    # -- statistics -------------------------------------------------------------------

    async def count_start(self, player_id: str, variant: str, ttl_ms: int | None = None) -> None:
        """Count a game started by a player in a variant, kept as long as the player is
        (``ttl_ms``: their time to live as :meth:`create_game` returned it; else read)."""
        if ttl_ms is None:
            ttl_ms = int(await self.redis.pttl(f"player:{player_id}"))
        await self._pipeline.script(scripts.COUNT_START, [f"stats:{player_id}:{variant}"], [ttl_ms])

    async def count_finish(
        self, player_id: str, variant: str, *, won: bool, score: int, elapsed: int, daily: bool
    ) -> None:
        """Record a finished game in the player's statistics of that variant."""
        key = f"stats:{player_id}:{variant}"
        await self._stats_update(keys=[key], args=[int(won), score, elapsed, int(daily)])
        await self._expire_with_player(player_id, [key])

    async def stats(self, player_id: str, variants: Sequence[str]) -> dict[str, dict[str, str]]:
        """Return the raw statistics of a player for each variant that has any."""
        async with self.redis.pipeline(transaction=False) as pipe:
            for variant in variants:
                pipe.hgetall(f"stats:{player_id}:{variant}")
            replies = [text_map(reply) for reply in await pipe.execute()]
        return {variant: reply for variant, reply in zip(variants, replies, strict=True) if reply}

    async def add_result(self, player_id: str, game_id: str) -> None:
        """Remember a finished game of a player (the newest 1,000 are kept)."""
        async with self.redis.pipeline(transaction=False) as pipe:
            pipe.lpush(f"results:{player_id}", game_id)
            pipe.ltrim(f"results:{player_id}", 0, 999)
            await pipe.execute()
        await self._expire_with_player(player_id, [f"results:{player_id}"])

    async def recent_results(self, player_id: str, count: int) -> list[dict[str, str]]:
        """Return the kept records (variant, mode, start, options, roster, standings, daily) of
        a player's newest finished games, newest first; games no longer kept are left out."""
        game_ids = text_list(await self.redis.lrange(f"results:{player_id}", 0, count - 1))
        fields = ["variant", "mode", "start", "options", "roster", "standings", "daily", "state"]
        async with self.redis.pipeline(transaction=False) as pipe:  # games of many slots
            for game_id in game_ids:
                pipe.hmget(game_key(game_id, "meta"), fields)
            replies = await pipe.execute()
        games = []
        for game_id, values in zip(game_ids, replies, strict=True):
            record = dict(zip(fields, values, strict=True))
            if record["standings"] and record["variant"]:
                games.append({"game": game_id, **record})
        return games

    async def player_exists(self, player_id: str) -> bool:
        """Tell whether a player id names someone (not unknown, not forgotten)."""
        return bool(await self.redis.exists(f"player:{player_id}"))

    # -- saved solo games -------------------------------------------------------------

    async def save_game(self, player_id: str, game_id: str, start_ms: int) -> None:
        """List a solo game in progress among the player's saved games (kept, with the
        game, as long as the player; see :meth:`keep_player`)."""
        await self.redis.zadd(f"saved:{player_id}", {game_id: start_ms})
        parts = ("meta", "log", f"p:{player_id}", f"m:{player_id}")
        keys = [f"saved:{player_id}", *(game_key(game_id, part) for part in parts)]
        await self._expire_with_player(player_id, keys)

    async def unsave_game(self, player_id: str, game_id: str) -> None:
        """Take a game off the player's saved games."""
        await self.redis.zrem(f"saved:{player_id}", game_id)

    async def saved_games(self, player_id: str) -> list[str]:
        """Return the ids of the player's saved games, newest first."""
        return text_list(await self.redis.zrevrange(f"saved:{player_id}", 0, 199))

    async def leave_saved_game(self, game_id: str, at_ms: int) -> None:
        """Note when a saved solo game's player left it (its clock stops from then); the
        first such moment counts until the player comes back."""
        await self.redis.hsetnx(game_key(game_id, "meta"), "left", at_ms)

    async def back_to_saved_game(self, game_id: str) -> int | None:
        """Return when the player left a saved solo game, and forget it (they are back);
        ``None`` if they had not left it."""
        async with self.redis.pipeline(transaction=True) as pipe:  # one key: one slot
            pipe.hget(game_key(game_id, "meta"), "left")
            pipe.hdel(game_key(game_id, "meta"), "left")
            left, _ = await pipe.execute()
        return None if left is None else int(left)

    async def delete_saved_game(self, player_id: str, game_id: str) -> None:
        """Delete a saved solo game, everything of it, and take it off the player's list."""
        await self.redis.delete(
            *(game_key(game_id, part) for part in ("meta", "log", f"p:{player_id}", f"m:{player_id}"))
        )
        await self.redis.zrem("live", game_id)
        await self.redis.zrem(f"saved:{player_id}", game_id)

    # -- forget me --------------------------------------------------------------------

    async def forget_seats(self, player_id: str, game_ids: Sequence[str]) -> None:
        """Mark the player's seat in games they race in as forgotten, under the neutral name.

        Done before they resign from them: whatever the race's end writes from then on
        (standings, replay) shows the neutral name, and what a finished game leaves behind
        (statistics, results, the daily board, ratings) is left out for a forgotten seat
        (decision 15). The mark lives in the game's own record and goes with it.
        """
        for game_id in game_ids:
            await self._scrub_name(game_id, player_id)

    async def forget_player(
        self, player_id: str, variants: Sequence[str], hold_ms: int = 0
    ) -> dict[str, int | bool]:
        """Delete a player's identity, sessions, saved games, statistics and leaderboard entries.

        An account's username stays reserved ``hold_ms`` (under its skeleton's hash, naming
        no player), so that nobody takes it over at once.

        Finished games others played with them stay replayable under the name
        "forgotten player"; aggregate counters without personal data remain.
        """
        record = text_map(await self.redis.hgetall(f"player:{player_id}"))
        removed: dict[str, int | bool] = {"identity": bool(record)}
        saved = await self.saved_games(player_id)
        for game_id in saved:
            await self.delete_saved_game(player_id, game_id)
        removed["saved_games"] = len(saved)
        removed["statistics"] = await self._delete_each(
            [f"stats:{player_id}:{variant}" for variant in variants]
        )
        boards = list(text_set(await self.redis.smembers(f"boards:{player_id}")))
        entries = 0
        for board in boards:
            async with self.redis.pipeline(transaction=False) as pipe:
                pipe.zrem(board, player_id)
                pipe.hdel(f"{board}:e", player_id)
                gone, _ = await pipe.execute()
            entries += int(gone)
            await self.redis.publish(board.replace("{", "").replace("}", ""), player_id)  # its channel
        removed["leaderboard_entries"] = entries
        games = text_list(await self.redis.lrange(f"results:{player_id}", 0, -1))
        renamed = 0
        for game_id in games:
            renamed += await self._scrub_name(game_id, player_id)
        removed["names_in_finished_games"] = renamed
        keys = [f"player:{player_id}", f"saved:{player_id}", f"boards:{player_id}", f"results:{player_id}"]
        keys += [f"online:{player_id}", passkeys_key(player_id)]
        if record.get("skeleton"):
            keys.append(login_key(record["skeleton"]))
        async with self.redis.pipeline(transaction=False) as pipe:  # the session tokens' keys
            pipe.hvals(sessions_key(player_id))
            (sessions,) = await pipe.execute()
        keys += [json.loads(raw)["token"] for raw in sessions]
        keys.append(sessions_key(player_id))
        removed["sessions"] = len(sessions)
        # Their analysed ranked games go too (a ban, keyed by the same id, is kept).
        keys += [f"fp:{{{player_id}}}:{part}" for part in ("games", "races", "refunds")]
        await self.redis.zrem("fp:review", player_id)
        await self._delete_each(keys)
        if record.get("skeleton") and hold_ms > 0:
            await self.redis.set(username_key(record["skeleton"]), "-", px=hold_ms, xx=True)
        return removed

    async def _delete_each(self, keys: Sequence[str]) -> int:
        """Delete keys that may lie in different cluster slots; return how many existed."""
        async with self.redis.pipeline(transaction=False) as pipe:
            for key in keys:
                pipe.delete(key)
            return sum(int(n) for n in await pipe.execute())

    async def _scrub_name(self, game_id: str, player_id: str) -> int:
        """Put the neutral name in place of the player's in a game's roster, their seat (marked
        ``forgotten``), its standings and its closing event; return 1 if the game is kept."""
        meta_key = game_key(game_id, "meta")
        roster_text = as_text_or_none(await self.redis.hget(meta_key, "roster"))
        if roster_text is None:
            return 0
        roster = json.loads(roster_text)
        for racer in roster:
            if racer["id"] == player_id:
                racer["name"] = FORGOTTEN_NAME
        await self.redis.hset(meta_key, "roster", json.dumps(roster))
        seat: dict[Any, Any] = {"name": FORGOTTEN_NAME, "forgotten": "1"}
        await self.redis.hset(game_key(game_id, f"p:{player_id}"), mapping=seat)
        standings_text = as_text_or_none(await self.redis.hget(meta_key, "standings"))
        if standings_text:
            standings = json.loads(standings_text)
            for row in standings:
                if row["player"] == player_id:
                    row["name"] = FORGOTTEN_NAME
            await self.redis.hset(meta_key, "standings", json.dumps(standings))
            last = as_text_or_none(await self.redis.lindex(game_key(game_id, "log"), -1))
            if last:
                event = json.loads(last)
                if event.get("type") == "race_ended":
                    event["standings"] = standings
                    await self.redis.lset(game_key(game_id, "log"), -1, json.dumps(event))
        return 1
