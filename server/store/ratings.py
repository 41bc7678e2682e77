"""Ratings, their leaderboards, and the rated quick-match queue."""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from .base import StoreBase
from .records import RatingRecord, Waiting
from .replies import as_int, as_int_or_none, text_list, text_map, text_or_none_list

__all__ = ["RatingStore"]

CHANGES_KEPT = 200
"""Rating changes kept per player (the profile shows the newest)."""


def rating_key(player_id: str, part: str = "") -> str:
    return f"rating:{{{player_id}}}:{part}" if part else f"rating:{{{player_id}}}"


def rating_board_key(variant: str) -> str:
    return f"rb:{{{variant}}}"


def queue_keys(variant: str) -> list[str]:
    return [f"mm:{{{variant}}}:{part}" for part in ("q", "r", "left", "first")]


def pair_key(day: str, a: str, b: str) -> str:
    first, second = sorted((a, b))
    return f"pair:{day}:{first}:{second}"


class RatingStore(StoreBase):
    """Ratings, their leaderboards, and the rated quick-match queue."""

    # -- ratings ------------------------------------------------------------------------

    async def ratings(self, player_ids: Sequence[str], variant: str) -> dict[str, RatingRecord | None]:
        """Return each player's rating record in ``variant`` (``None`` for the unrated)."""
        async with self.redis.pipeline(transaction=False) as pipe:  # players of many slots
            for player_id in player_ids:
                pipe.hget(rating_key(player_id), variant)
            texts = text_or_none_list(await pipe.execute())
        return {
            pid: RatingRecord.from_json(text) if text else None
            for pid, text in zip(player_ids, texts, strict=True)
        }

    async def player_ratings(self, player_id: str) -> dict[str, RatingRecord]:
        """Return a player's rating record in every variant they are rated in."""
        stored = text_map(await self.redis.hgetall(rating_key(player_id)))
        return {variant: RatingRecord.from_json(text) for variant, text in stored.items()}

    async def apply_rating(
        self, player_id: str, variant: str, game_id: str, based_on: int, record: RatingRecord, change: str
    ) -> str:
        """Store a race's new rating of a player once; return ``ok``, ``done`` or ``moved``.

        ``done``: this game's change was stored already. ``moved``: the player's rating
        changed since it was read (``based_on`` is the count of rated races it had then).
        """
        (result,) = await self.apply_ratings(variant, game_id, [(player_id, based_on, record, change)])
        return result

    async def apply_ratings(
        self, variant: str, game_id: str, updates: Sequence[tuple[str, int, RatingRecord, str]]
    ) -> list[str]:
        """Store a race's new ratings, each (player, based-on count, record, change), in two
        round trips; return each one's outcome as :meth:`apply_rating` does."""
        async with self.redis.pipeline(transaction=False) as pipe:  # players of many slots
            for player_id, based_on, record, change in updates:
                keys = [rating_key(player_id), rating_key(player_id, "games"), rating_key(player_id, "delta")]
                args: list[str | int] = [variant, game_id, based_on, record.to_json(), change]
                args += [record.at, CHANGES_KEPT]
                await self._rate(keys=keys, args=args, client=pipe)
            results: list[str] = await pipe.execute()
        async with self.redis.pipeline(transaction=False) as pipe:  # a banned player stays off
            for player_id, *_ in updates:
                pipe.exists(f"fp:{{{player_id}}}:ban")
            banned = [bool(n) for n in await pipe.execute()]
        board = {
            player_id: record.rating
            for (player_id, _, record, _), result, off in zip(updates, results, banned, strict=True)
            if result == "ok" and not off
        }
        if board:
            await self.redis.zadd(rating_board_key(variant), board)
        for player_id in board:  # new ratings go with their player (a guest who stays away)
            keys = [rating_key(player_id, part) for part in ("", "games", "delta")]
            await self._expire_with_player(player_id, keys)
        return results

    async def rating_changes(self, player_id: str, game_ids: Sequence[str]) -> dict[str, str]:
        """Return the stored rating changes (JSON) of a player's games, by game id."""
        if not game_ids:
            return {}
        values = text_or_none_list(await self.redis.hmget(rating_key(player_id, "delta"), list(game_ids)))
        return {game: value for game, value in zip(game_ids, values, strict=True) if value}

    async def count_rated_pairs(
        self, day: str, pairs: Iterable[tuple[str, str]], ttl_ms: int
    ) -> dict[tuple[str, str], int]:
        """Count one more rated race today for each pair; return each pair's count so far."""
        pairs = list(pairs)
        async with self.redis.pipeline(transaction=False) as pipe:  # pairs of many slots
            for a, b in pairs:
                pipe.incr(pair_key(day, a, b))
                pipe.pexpire(pair_key(day, a, b), ttl_ms)
            replies = await pipe.execute()
        return {pair: int(replies[2 * i]) for i, pair in enumerate(pairs)}

    # -- rating leaderboards ------------------------------------------------------------

    async def rating_rank(self, variant: str, player_id: str) -> int | None:
        """Return a player's place (from 0) on a variant's rating board, or ``None``."""
        return as_int_or_none(await self.redis.zrevrank(rating_board_key(variant), player_id))

    async def rating_board(self, variant: str, offset: int, limit: int) -> tuple[int, list[str]]:
        """Return the number of rated players of a variant and the ids at ``offset`` on."""
        async with self.redis.pipeline(transaction=False) as pipe:
            pipe.zcard(rating_board_key(variant))
            pipe.zrevrange(rating_board_key(variant), offset, offset + limit - 1)
            total, players = await pipe.execute()
        return as_int(total), text_list(players)

    # -- the rated queue ----------------------------------------------------------------

    async def enqueue_rated(
        self, variant: str, player_id: str, now_ms: int, rating: float, memory_ms: int
    ) -> tuple[int, int]:
        """Put a player in a variant's rated queue; return how many wait and when this wait began."""
        args: list[str | int | float] = [player_id, now_ms, rating, memory_ms]
        waiting, joined = await self._enqueue_rated(keys=queue_keys(variant), args=args)
        return int(waiting), int(float(joined))

    async def leave_rated(self, variant: str, player_id: str, now_ms: int, memory_ms: int) -> bool:
        """Take a player out of a variant's rated queue; tell whether they were waiting."""
        args: list[str | int] = [player_id, now_ms, memory_ms]
        return bool(await self._leave_rated(keys=queue_keys(variant), args=args))

    async def rated_waiting(self, variant: str) -> list[Waiting]:
        """Return everyone in a variant's rated queue, longest waiting first."""
        keys = queue_keys(variant)
        async with self.redis.pipeline(transaction=False) as pipe:  # one slot
            pipe.zrange(keys[0], 0, -1, withscores=True)
            pipe.hgetall(keys[1])
            joined, ratings = await pipe.execute()
        return [
            Waiting(player, float(ratings[player]), int(when)) for player, when in joined if player in ratings
        ]

    async def leave_queues(self, variant: str, player_id: str, now_ms: int, memory_ms: int) -> bool:
        """Take a player out of a variant's queues, rated and not; tell whether they were waiting."""
        casual = bool(await self.redis.zrem(f"queue:{variant}", player_id))
        return await self.leave_rated(variant, player_id, now_ms, memory_ms) or casual

    async def claim_match(self, variant: str, player_ids: Sequence[str]) -> bool:
        """Take a match's players out of the rated queue, all or none (if one has left)."""
        return (await self.claim_matches(variant, [player_ids]))[0]

    async def claim_matches(self, variant: str, groups: Sequence[Sequence[str]]) -> list[bool]:
        """Take each match's players out of the rated queue, all or none of each, in one round
        trip; tell which matches were taken."""
        async with self.redis.pipeline(transaction=False) as pipe:
            for group in groups:
                await self._claim_match(keys=queue_keys(variant)[:2], args=list(group), client=pipe)
            return [bool(taken) for taken in await pipe.execute()]

    async def lead_matchmaking(self, variant: str, lease_ms: int) -> int:
        """Hold or renew this node's lease on forming a variant's matches.

        Return how many wait in its rated queue when this node holds the lease, else -1.
        """
        keys = [f"mm:{{{variant}}}:lead", queue_keys(variant)[0]]
        return int(await self._lead_matchmaking(keys=keys, args=[self.instance, lease_ms]))

    # -- forget me ----------------------------------------------------------------------

    async def forget_ratings(self, player_id: str, variants: Sequence[str]) -> int:
        """Remove a player's ratings, rating history and board places; return the variants rated."""
        rated = await self.redis.hlen(rating_key(player_id))
        async with self.redis.pipeline(transaction=False) as pipe:  # keys of many slots
            pipe.delete(rating_key(player_id), rating_key(player_id, "games"), rating_key(player_id, "delta"))
            for variant in variants:
                pipe.zrem(rating_board_key(variant), player_id)
                keys = queue_keys(variant)
                pipe.zrem(keys[0], player_id)
                pipe.hdel(keys[1], player_id)
                pipe.zrem(keys[2], player_id)
                pipe.hdel(keys[3], player_id)
            await pipe.execute()
        return int(rated)
