"""The daily deal, ranked attempts and leaderboards."""

from __future__ import annotations

import asyncio
import secrets
from collections.abc import Iterable, Mapping

from .base import StoreBase
from .keys import board_channel, board_key, game_key
from .replies import (
    as_int,
    as_int_or_none,
    as_text,
    as_text_or_none,
    text_list,
    text_map,
    text_or_none_list,
    text_set,
)

__all__ = ["DailyStore"]


def board_day(board: str) -> tuple[str, str] | None:
    """Return the date and variant of a daily board's key (``lb:{DATE:VARIANT}``)."""
    if not (board.startswith("lb:{") and board.endswith("}")):
        return None
    date, _, variant = board[4:-1].partition(":")
    return (date, variant) if variant else None


class DailyStore(StoreBase):
    """The daily deal, ranked attempts and leaderboards."""

    # -- daily ------------------------------------------------------------------------

    async def daily_secret(self) -> str:
        """Return the secret daily numbers derive from, creating it once for all nodes."""
        if self.configured_secret:
            return self.configured_secret
        await self.redis.set("daily:secret", secrets.token_hex(32), nx=True)
        return as_text(await self.redis.get("daily:secret"))

    async def daily_deal(self, date: str, variant: str) -> dict[str, str]:
        """Return the stored number, salt and commitment of a day's deal (empty if none yet)."""
        return text_map(await self.redis.hgetall(f"daily:{date}:{variant}"))

    async def set_daily_deal(
        self, date: str, variant: str, deal: Mapping[str, str], keep_ms: int
    ) -> dict[str, str]:
        """Store a day's deal unless another node did first; return the stored one."""
        key = f"daily:{date}:{variant}"
        if await self.redis.hsetnx(key, "number", deal["number"]):
            await self.redis.hset(key, mapping={"salt": deal["salt"], "commitment": deal["commitment"]})
            await self.redis.pexpire(key, keep_ms)
        while True:
            stored = await self.daily_deal(date, variant)
            if "commitment" in stored:
                return stored
            await asyncio.sleep(0.01)  # the winner is writing salt and commitment

    async def claim_daily_attempt(
        self, date: str, variant: str, player_id: str, game_id: str, keep_ms: int
    ) -> bool:
        """Claim the player's one ranked attempt of a day; tell whether it was still free."""
        key = f"daily:{date}:{variant}:attempts"
        claimed = bool(await self.redis.hsetnx(key, player_id, game_id))
        if claimed:
            await self.redis.pexpire(key, keep_ms)
        return claimed

    async def daily_attempt(self, date: str, variant: str, player_id: str) -> tuple[str | None, bool]:
        """Return the player's ranked attempt of a day (game id or None) and whether it is over."""
        async with self.redis.pipeline(transaction=False) as pipe:
            pipe.hget(f"daily:{date}:{variant}:attempts", player_id)
            pipe.sismember(f"daily:{date}:{variant}:done", player_id)
            game_id, done = await pipe.execute()
        return as_text_or_none(game_id), bool(done)

    async def daily_games(
        self, date: str, variant: str, skip: str, limit: int
    ) -> list[tuple[str, str, list[str]]]:
        """Return up to ``limit`` of a day's other games (ranked attempts and guests' practice,
        over or not; not ``skip``'s) with a move, as (game id, player, actions), for the
        fair-play prior-play measure."""
        attempts = text_map(await self.redis.hgetall(f"daily:{date}:{variant}:attempts"))
        others = sorted((game, player) for player, game in attempts.items() if player != skip)[:limit]
        if not others:
            return []
        async with self.redis.pipeline(transaction=False) as pipe:  # games of many slots
            for game, player in others:
                pipe.lrange(game_key(game, f"m:{player}"), 0, -1)
            replies = await pipe.execute()
        return [
            (game, player, moves)
            for (game, player), moves in zip(others, map(text_list, replies), strict=True)
            if moves
        ]

    async def note_forgotten_address(self, date: str, mark: str, ttl_ms: int) -> None:
        """Keep a keyed hash of the address of a player forgotten after a ranked attempt of
        ``date`` (``daily:DATE:forgotten``), for the rest of that day."""
        key = f"daily:{date}:forgotten"
        async with self.redis.pipeline(transaction=True) as pipe:
            pipe.sadd(key, mark)
            pipe.pexpire(key, ttl_ms)
            await pipe.execute()

    async def forgotten_address(self, date: str, mark: str) -> bool:
        """Tell whether a player forgotten after a ranked attempt of ``date`` left from an
        address with this keyed hash."""
        return bool(await self.redis.sismember(f"daily:{date}:forgotten", mark))

    async def finish_daily_attempt(self, date: str, variant: str, player_id: str, keep_ms: int) -> None:
        """Mark the player's ranked attempt of a day as over."""
        key = f"daily:{date}:{variant}:done"
        async with self.redis.pipeline(transaction=False) as pipe:
            pipe.sadd(key, player_id)
            pipe.pexpire(key, keep_ms)
            await pipe.execute()

    async def forget_daily_attempts(self, player_id: str, days: Iterable[tuple[str, str]] = ()) -> int:
        """Take a forgotten player off the ranked attempts of ``days`` (date, variant) and of
        every day whose board they are on; return how many attempts were listed.

        Called before the player's index of boards goes (:meth:`forget_player`)."""
        boards = text_set(await self.redis.smembers(f"boards:{player_id}"))
        found = set(days) | {day for day in map(board_day, boards) if day is not None}
        async with self.redis.pipeline(transaction=False) as pipe:  # days of many slots
            for date, variant in sorted(found):
                pipe.hdel(f"daily:{date}:{variant}:attempts", player_id)
                pipe.srem(f"daily:{date}:{variant}:done", player_id)
            replies = await pipe.execute()
        return sum(int(n) for n in replies[::2])

    # -- leaderboards -----------------------------------------------------------------

    async def submit_score(
        self, date: str, variant: str, player_id: str, sort_key: float, entry: str, keep_ms: int
    ) -> bool:
        """Put a ranked result on a day's board (once per player); tell whether it was added."""
        board = board_key(date, variant)
        # The player's index of boards first (another cluster slot): forget-me finds every
        # board the player may be on.
        await self.redis.sadd(f"boards:{player_id}", board)
        await self._expire_with_player(player_id, [f"boards:{player_id}"])  # a guest's index goes with them
        added = await self._leaderboard_submit(
            keys=[board, f"{board}:e"], args=[player_id, sort_key, entry, keep_ms]
        )
        if added:
            await self.redis.publish(board_channel(date, variant), player_id)
        return bool(added)

    async def board_page(
        self, date: str, variant: str, offset: int, limit: int
    ) -> tuple[int, list[tuple[str, str]]]:
        """Return the board's size and its entries from rank ``offset + 1`` (player, entry)."""
        key = board_key(date, variant)
        async with self.redis.pipeline(transaction=False) as pipe:
            pipe.zcard(key)
            pipe.zrange(key, offset, offset + limit - 1)
            total, listed = await pipe.execute()
        players = text_list(listed)
        entries = text_or_none_list(await self.redis.hmget(f"{key}:e", players)) if players else []
        return as_int(total), [(p, e) for p, e in zip(players, entries, strict=True) if e]

    async def board_rank(self, date: str, variant: str, player_id: str) -> int | None:
        """Return the player's 0-based rank on a day's board, or ``None``."""
        return as_int_or_none(await self.redis.zrank(board_key(date, variant), player_id))
