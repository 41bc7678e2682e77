"""Challenges: a deal, its recorded runs (ghosts), its takers' board, its creator's list.

Every key of one challenge shares the hash tag ``{CODE}`` (one cluster slot), and every key
expires with the challenge (``PEXPIREAT`` at its expiry), the creator's list too.
"""

from __future__ import annotations

import json
import secrets
from collections.abc import Callable, Mapping
from typing import Any

from .base import StoreBase
from .keys import ROOM_ALPHABET, ROOM_CODE_LENGTH, challenge_key, challenge_sources_key, challenges_of_key
from .records import StoreError
from .replies import as_text_or_none, text_list, text_map

__all__ = ["ChallengeStore"]


class ChallengeStore(StoreBase):
    """Challenges: creation, ghosts, the board of takers' results, each player's list."""

    async def create_challenge(
        self, owner: str, settings: Mapping[Any, Any], ghosts: list[dict[str, Any]], expires_ms: int
    ) -> str:
        """Store a new challenge (its settings and ghosts) expiring at ``expires_ms``; return its code."""
        for _ in range(20):
            code = "".join(secrets.choice(ROOM_ALPHABET) for _ in range(ROOM_CODE_LENGTH))
            if not await self.redis.hsetnx(challenge_key(code), "owner", owner):
                continue
            keys = (challenge_key(code), challenge_key(code, "ghosts"))
            async with self.redis.pipeline(transaction=True) as pipe:
                pipe.hset(challenge_key(code), mapping={**settings, "expires": expires_ms})
                pipe.rpush(challenge_key(code, "ghosts"), *(json.dumps(g) for g in ghosts))
                for key in keys:
                    pipe.pexpireat(key, expires_ms)
                await pipe.execute()
            mine, sources = challenges_of_key(owner), challenge_sources_key(owner)
            async with self.redis.pipeline(transaction=False) as pipe:
                pipe.zadd(mine, {code: expires_ms})
                pipe.zremrangebyscore(mine, 0, expires_ms - 366 * 86_400_000)  # long gone
                pipe.hset(sources, str(settings["source"]), code)
                for key in (mine, sources):
                    pipe.pexpireat(key, expires_ms)  # the newest challenge is the last to expire
                await pipe.execute()
            return code
        raise StoreError("internal", "could not allocate a challenge code")

    async def challenge_made_from(self, owner: str, game_id: str) -> str | None:
        """Return the code of the challenge ``owner`` made of the game ``game_id``, if any
        (it may have expired since)."""
        return as_text_or_none(await self.redis.hget(challenge_sources_key(owner), game_id))

    async def challenge(self, code: str) -> tuple[dict[str, str], list[dict[str, Any]]] | None:
        """Return a challenge's settings and ghosts, or ``None`` when there is none (or it expired)."""
        async with self.redis.pipeline(transaction=False) as pipe:
            pipe.hgetall(challenge_key(code))
            pipe.lrange(challenge_key(code, "ghosts"), 0, -1)
            meta, ghosts = await pipe.execute()
        settings = text_map(meta)
        if "variant" not in settings:
            return None
        return settings, [json.loads(g) for g in text_list(ghosts)]

    async def challenge_results(self, code: str) -> dict[str, dict[str, Any]]:
        """Return a challenge's board: each taker's best result."""
        return {
            p: json.loads(e)
            for p, e in text_map(await self.redis.hgetall(challenge_key(code, "board"))).items()
        }

    async def record_challenge_result(
        self,
        code: str,
        player: str,
        entry: Mapping[str, Any],
        expires_ms: int,
        rank_key: Callable[[Mapping[str, Any]], Any],
    ) -> bool:
        """Keep a taker's result on a challenge's board if it is their best (``rank_key``
        orders results, lower first); tell whether it is."""
        key = challenge_key(code, "board")
        previous = await self.redis.hget(key, player)
        if previous is not None and rank_key(json.loads(previous)) <= rank_key(entry):
            return False
        async with self.redis.pipeline(transaction=True) as pipe:
            pipe.hset(key, player, json.dumps(dict(entry)))
            pipe.pexpireat(key, expires_ms)
            await pipe.execute()
        return True

    async def challenges_of(self, player: str, now_ms: int, limit: int) -> list[str]:
        """Return the codes of a player's challenges not yet expired, newest first."""
        codes = await self.redis.zrevrangebyscore(
            challenges_of_key(player), "+inf", now_ms, start=0, num=limit
        )
        return text_list(codes)
