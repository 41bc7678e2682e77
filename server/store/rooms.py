"""Rooms, rematch rooms and the quick match queue."""

from __future__ import annotations

import secrets
from collections.abc import Mapping
from typing import Any

from .base import StoreBase
from .keys import ROOM_ALPHABET, ROOM_CODE_LENGTH, rematch_key, room_key
from .records import StoreError
from .replies import as_text_or_none, text_list, text_map, text_or_none_list, text_set

__all__ = ["RoomStore"]


ROOM_MARK = "in:"
"""Prefix of the fields of ``player:ID`` that name the rooms the player hosts or sits in."""

_MARK_IF_PLAYER = """
if redis.call('EXISTS', KEYS[1]) == 0 then return 0 end
return redis.call('HSET', KEYS[1], ARGV[1], 1)
"""

_ROOM_REASONS = {
    "no_such_room": "no room has that code",
    "room_started": "that room's race has already started",
    "room_full": "that room is full",
    "not_host": "only the room's host can start the race",
    "not_enough_players": "a race needs at least two players in the room",
}


class RoomStore(StoreBase):
    """Rooms, rematch rooms and the quick match queue."""

    _mark_script: Any = None

    # -- rooms --------------------------------------------------------------------------

    async def create_room(self, host: str, settings: Mapping[Any, Any], ttl_ms: int) -> str:
        """Create a room hosted by ``host``; return its code."""
        for _ in range(20):
            code = "".join(secrets.choice(ROOM_ALPHABET) for _ in range(ROOM_CODE_LENGTH))
            created = await self.redis.hsetnx(room_key(code), "host", host)
            if not created:
                continue
            async with self.redis.pipeline(transaction=True) as pipe:
                pipe.hset(room_key(code), mapping={**settings, "state": "open", "ver": 1})
                pipe.rpush(room_key(code, "members"), host)
                for key in (room_key(code), room_key(code, "members")):
                    pipe.pexpire(key, ttl_ms)
                await pipe.execute()
            await self._mark_room(host, code, True)
            return code
        raise StoreError("internal", "could not allocate a room code")

    async def room(self, code: str) -> dict[str, Any] | None:
        """Return a room's settings, members and ready set, or ``None``."""
        async with self.redis.pipeline(transaction=False) as pipe:
            pipe.hgetall(room_key(code))
            pipe.lrange(room_key(code, "members"), 0, -1)
            pipe.smembers(room_key(code, "ready"))
            info_reply, members_reply, ready_reply = await pipe.execute()
        info = text_map(info_reply)
        if not info:
            return None
        members = text_list(members_reply)
        async with self.redis.pipeline(transaction=False) as pipe:
            for member in members:
                pipe.hget(f"player:{member}", "name")
            display = [name or "?" for name in text_or_none_list(await pipe.execute())]
        return {
            "code": code,
            **info,
            "members": members,
            "names": display,
            "ready": sorted(text_set(ready_reply)),
        }

    async def join_room(self, code: str, player_id: str, ttl_ms: int) -> None:
        """Add a player to an open room, or raise :class:`StoreError`."""
        keys = [room_key(code), room_key(code, "members"), room_key(code, "ready")]
        result = await self._join_room(keys=keys, args=[player_id, ttl_ms])
        if result != "ok":
            raise StoreError(result, _ROOM_REASONS.get(result, result))
        await self._mark_room(player_id, code, True)

    async def leave_room(self, code: str, player_id: str) -> str:
        """Remove a player from a room; return ``ok``, ``closed`` (now empty) or why not."""
        keys = [room_key(code), room_key(code, "members"), room_key(code, "ready")]
        result: str = await self._leave_room(keys=keys, args=[player_id])
        await self._mark_room(player_id, code, False)
        return result

    async def player_rooms(self, player_id: str) -> list[str]:
        """Return the codes of the rooms the player hosts or sits in (some may have closed,
        started or expired since)."""
        fields = text_list(await self.redis.hkeys(f"player:{player_id}"))
        return sorted(field[len(ROOM_MARK) :] for field in fields if field.startswith(ROOM_MARK))

    async def room_members_everywhere(self) -> set[str]:
        """Return every player sitting in a room (a scan of every room: for the rare moment
        a node dies, whose players' rooms nobody else follows)."""
        members: set[str] = set()
        async for key in self.redis.scan_iter(match="room:{*}:members", count=1000):
            members.update(text_list(await self.redis.lrange(key, 0, -1)))
        return members

    async def forget_player_room(self, player_id: str, code: str) -> None:
        """Drop a room from the player's rooms (one that closed, started or expired)."""
        await self._mark_room(player_id, code, False)

    async def _mark_room(self, player_id: str, code: str, member: bool) -> None:
        # The player's rooms are fields of their own hash, which they expire with (a room
        # and its member are two cluster slots: written one after the other).
        if member:  # never a player:ID of a forgotten or expired player, without its expiry
            if self._mark_script is None:
                self._mark_script = self._script(_MARK_IF_PLAYER)
            await self._mark_script(keys=[f"player:{player_id}"], args=[ROOM_MARK + code])
        else:
            await self.redis.hdel(f"player:{player_id}", ROOM_MARK + code)

    async def set_ready(self, code: str, player_id: str, ready: bool) -> None:
        """Mark a room member ready or not."""
        async with self.redis.pipeline(transaction=True) as pipe:
            if ready:
                pipe.sadd(room_key(code, "ready"), player_id)
            else:
                pipe.srem(room_key(code, "ready"), player_id)
            pipe.hincrby(room_key(code), "ver", 1)
            await pipe.execute()

    async def start_room(self, code: str, host: str, game_id: str) -> None:
        """Move an open room to ``starting`` with ``game_id``, or raise :class:`StoreError`."""
        keys = [room_key(code), room_key(code, "members")]
        result = await self._start_room(keys=keys, args=[host, game_id])
        if result != "ok":
            raise StoreError(result, _ROOM_REASONS.get(result, result))

    async def set_room_state(self, code: str, state: str) -> None:
        """Set a room's state (``open``, ``starting``, ``racing``, ``ended``)."""
        await self.redis.hset(room_key(code), mapping={"state": state})
        await self.redis.hincrby(room_key(code), "ver", 1)

    async def room_size(self, code: str) -> int:
        """Return a room's ``max_players``, or 0 if the room is gone."""
        return int(as_text_or_none(await self.redis.hget(room_key(code), "max_players")) or 0)

    async def rematch_room(self, game_id: str) -> str | None:
        """Return the room opened to race ``game``'s players again, if one was."""
        return as_text_or_none(await self.redis.get(rematch_key(game_id)))

    async def claim_rematch(self, game_id: str, code: str, ttl_ms: int) -> str:
        """Make ``code`` the room of ``game``'s rematch unless another is already; return the one that is."""
        key = rematch_key(game_id)
        if await self.redis.set(key, code, nx=True, px=ttl_ms):
            return code
        return as_text_or_none(await self.redis.get(key)) or code

    async def rematch_openings(self, game_id: str, player_id: str) -> int:
        """Return how many rematch rooms of ``game`` this player has opened."""
        return int(as_text_or_none(await self.redis.get(rematch_key(game_id, f"opened:{player_id}"))) or 0)

    async def count_rematch_opening(self, game_id: str, player_id: str, ttl_ms: int) -> None:
        """Count one more rematch room of ``game`` opened by this player."""
        key = rematch_key(game_id, f"opened:{player_id}")
        async with self.redis.pipeline(transaction=True) as pipe:
            pipe.incr(key)
            pipe.pexpire(key, ttl_ms)
            await pipe.execute()

    async def drop_rematch(self, game_id: str, code: str) -> None:
        """Forget that ``code`` is ``game``'s rematch room (it closed, started or filled up)."""
        await self._drop_rematch(keys=[rematch_key(game_id)], args=[code])

    # -- quick match --------------------------------------------------------------------

    async def enqueue(self, variant: str, player_id: str, now_ms: int) -> int:
        """Put a player in the quick-match queue of ``variant`` (keeping an earlier place).

        Return how many players wait, this one included.
        """
        async with self.redis.pipeline(transaction=True) as pipe:
            pipe.zadd(f"queue:{variant}", {player_id: now_ms}, nx=True)
            pipe.zcard(f"queue:{variant}")
            _, waiting = await pipe.execute()
        return int(waiting)

    async def dequeue(self, variant: str, player_id: str) -> bool:
        """Take a player out of the queue; tell whether they were in it."""
        return bool(await self.redis.zrem(f"queue:{variant}", player_id))

    async def match(self, variant: str, size: int) -> list[str]:
        """Pop the ``size`` longest-waiting players of ``variant`` if that many wait."""
        result: list[str] = await self._match(keys=[f"queue:{variant}"], args=[size])
        return result
