"""Fair play: each player's analysed ranked games, the review queue, bans, refunds, the log.

Every key of one player carries the player's hash tag (``fp:{PLAYER}:...``, the slot of
``rating:{PLAYER}``), so a refund's script touches one slot; the review queue and the
moderation log are one key each.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any, cast

from .base import StoreBase
from .keys import board_channel
from .ratings import rating_board_key, rating_key
from .replies import as_text_or_none, text_list, text_map, text_set

__all__ = [
    "FAIRPLAY_GAMES_KEPT",
    "FAIRPLAY_TTL_MS",
    "LOG_KEPT",
    "LOG_KEY",
    "REVIEW_KEY",
    "FairPlayStore",
    "fairplay_key",
]

REVIEW_KEY = "fp:review"
"""Sorted set: player -> their fair-play score when they went to review."""
LOG_KEY = "fp:log"
"""List of moderation actions (JSON), newest first."""
LOG_KEPT = 10_000
FAIRPLAY_GAMES_KEPT = 10
"""Analysed ranked games kept per player (the player's score covers them)."""
FAIRPLAY_TTL_MS = 90 * 24 * 3600 * 1000
"""A player's analysed games and rated opponents are kept this long after the last one
(90 days); a review entry as long."""
RACES_KEPT_MS = 31 * 24 * 3600 * 1000
"""How long a rated race's opponents are remembered for a refund (the refund covers 30 days)."""

# KEYS: rating:{O}, fp:{O}:refunds; ARGV: variant, game id, points, banned player.
# Gives an opponent back the points once per game: adds them to the rating record and
# notes the refund. Returns the new rating, or '' when already refunded or unrated.
REFUND = """
if redis.call('HEXISTS', KEYS[2], ARGV[2]) == 1 then return '' end
local current = redis.call('HGET', KEYS[1], ARGV[1])
if not current then return '' end
local record = cjson.decode(current)
record['r'] = record['r'] + tonumber(ARGV[3])
redis.call('HSET', KEYS[1], ARGV[1], cjson.encode(record))
redis.call('HSET', KEYS[2], ARGV[2], cjson.encode({points = tonumber(ARGV[3]), banned = ARGV[4]}))
return tostring(record['r'])
"""


def fairplay_key(player_id: str, part: str) -> str:
    return f"fp:{{{player_id}}}:{part}"


class FairPlayStore(StoreBase):
    """Analysed games, the review queue, bans, refunds and the moderation log."""

    # -- analysed games and the review queue ---------------------------------------------

    async def add_fairplay_game(self, player_id: str, entry: dict[str, Any]) -> list[dict[str, Any]]:
        """Keep one analysed ranked game of a player; return their kept games, newest first."""
        key = fairplay_key(player_id, "games")
        async with self.redis.pipeline(transaction=True) as pipe:
            pipe.lpush(key, json.dumps(entry))
            pipe.ltrim(key, 0, FAIRPLAY_GAMES_KEPT - 1)
            pipe.pexpire(key, FAIRPLAY_TTL_MS)
            pipe.lrange(key, 0, -1)
            replies = await pipe.execute()
        return [json.loads(text) for text in text_list(replies[-1])]

    async def drop_fairplay_if_forgotten(self, player_id: str) -> bool:
        """Delete what fair play keeps of a player who is gone (forgotten while their game was
        analysed); tell whether they were."""
        if await self.redis.exists(f"player:{player_id}"):
            return False
        async with self.redis.pipeline(transaction=False) as pipe:
            for part in ("games", "races", "refunds"):
                pipe.delete(fairplay_key(player_id, part))
            pipe.zrem(REVIEW_KEY, player_id)
            await pipe.execute()
        return True

    async def fairplay_games(self, player_id: str) -> list[dict[str, Any]]:
        """Return a player's kept analysed games, newest first."""
        return [
            json.loads(t) for t in text_list(await self.redis.lrange(fairplay_key(player_id, "games"), 0, -1))
        ]

    async def put_in_review(self, player_id: str, score: float) -> None:
        """Put a player in the review queue (or update their score there)."""
        async with self.redis.pipeline(transaction=False) as pipe:
            pipe.zadd(REVIEW_KEY, {player_id: score})
            pipe.pexpire(REVIEW_KEY, FAIRPLAY_TTL_MS)
            await pipe.execute()

    async def dismiss(self, player_id: str) -> bool:
        """Take a player off the review queue; tell whether they were on it."""
        return bool(await self.redis.zrem(REVIEW_KEY, player_id))

    async def review_queue(self) -> list[tuple[str, float]]:
        """Return the players in review, highest score first."""
        listed = cast(
            list[tuple[bytes | str, float]], await self.redis.zrevrange(REVIEW_KEY, 0, -1, withscores=True)
        )
        return [(p.decode() if isinstance(p, bytes) else p, float(s)) for p, s in listed]

    async def remember_rated_race(
        self, player_id: str, game_id: str, opponents: Sequence[str], now_ms: int
    ) -> None:
        """Note a rated race's opponents of a player (for a refund should one be banned)."""
        key = fairplay_key(player_id, "races")
        async with self.redis.pipeline(transaction=True) as pipe:
            pipe.hset(key, game_id, json.dumps({"at": now_ms, "opponents": list(opponents)}))
            pipe.pexpire(key, RACES_KEPT_MS)
            pipe.hgetall(key)
            replies = await pipe.execute()
        old = [g for g, v in text_map(replies[-1]).items() if json.loads(v)["at"] < now_ms - RACES_KEPT_MS]
        if old:
            await self.redis.hdel(key, *old)

    async def rated_races(self, player_id: str) -> dict[str, dict[str, Any]]:
        """Return a player's remembered rated races: game -> when it ended and the opponents."""
        stored = text_map(await self.redis.hgetall(fairplay_key(player_id, "races")))
        return {game: json.loads(value) for game, value in stored.items()}

    # -- bans -----------------------------------------------------------------------------

    async def ban(self, player_id: str, record: dict[str, Any]) -> bool:
        """Mark a player banned (reason, by, at); tell whether they were not already, and
        take them off the review queue."""
        async with self.redis.pipeline(transaction=False) as pipe:
            pipe.set(fairplay_key(player_id, "ban"), json.dumps(record), nx=True)
            pipe.zrem(REVIEW_KEY, player_id)
            added, _ = await pipe.execute()
        return bool(added)

    async def unban(self, player_id: str) -> bool:
        """Lift a player's ban; tell whether they were banned."""
        return bool(await self.redis.delete(fairplay_key(player_id, "ban")))

    async def banned(self, player_id: str) -> dict[str, Any] | None:
        """Return a player's ban (reason, by, at), or ``None``."""
        text = as_text_or_none(await self.redis.get(fairplay_key(player_id, "ban")))
        return json.loads(text) if text else None

    async def drop_from_boards(self, player_id: str) -> tuple[list[str], list[str]]:
        """Take a player off every rating board and every daily board they are on; return
        the variants and the daily boards (``lb:{DATE:VARIANT}``) they were taken off."""
        variants = list(text_map(await self.redis.hgetall(rating_key(player_id))))
        boards = sorted(text_set(await self.redis.smembers(f"boards:{player_id}")))
        async with self.redis.pipeline(transaction=False) as pipe:  # keys of many slots
            for variant in variants:
                pipe.zrem(rating_board_key(variant), player_id)
            for board in boards:
                pipe.zrem(board, player_id)
                pipe.hdel(f"{board}:e", player_id)
            await pipe.execute()
        for board in boards:
            date, _, variant = board[4:-1].partition(":")
            await self.redis.publish(board_channel(date, variant), player_id)
        return variants, sorted(boards)

    async def refund(
        self, opponent: str, variant: str, game_id: str, points: float, banned: str
    ) -> float | None:
        """Give an opponent back ``points`` lost in one game to a banned player, once; return
        their new rating (``None``: refunded before, or no rating to refund)."""
        keys = [rating_key(opponent), fairplay_key(opponent, "refunds")]
        reply = await self._script(REFUND)(keys=keys, args=[variant, game_id, points, banned])
        text = reply.decode() if isinstance(reply, bytes) else str(reply)
        if not text:
            return None
        rating = float(text)
        await self.redis.zadd(rating_board_key(variant), {opponent: rating}, xx=True)
        return rating

    # -- the moderation log --------------------------------------------------------------

    async def log_action(self, entry: dict[str, Any]) -> None:
        """Add a moderation action (who, when, why, what) to the log."""
        async with self.redis.pipeline(transaction=False) as pipe:
            pipe.lpush(LOG_KEY, json.dumps(entry))
            pipe.ltrim(LOG_KEY, 0, LOG_KEPT - 1)
            await pipe.execute()

    async def moderation_log(self, limit: int = 100) -> list[dict[str, Any]]:
        """Return the newest moderation actions first."""
        return [json.loads(t) for t in text_list(await self.redis.lrange(LOG_KEY, 0, limit - 1))]
