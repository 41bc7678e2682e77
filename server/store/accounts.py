"""Accounts and sessions: usernames, password hashes, session tokens (hashed), login lockouts.

A session is one token's life: ``token:SHA256`` (the hash of the secret token, never the
token) names the player and the session id; ``sessions:PLAYER`` lists the player's
sessions with where and when they were opened and last used. A rotated token's key lives
on for a short overlap beside its successor's.
"""

from __future__ import annotations

import json
import secrets
from collections.abc import Sequence
from typing import Any

from .base import StoreBase
from .keys import login_key, passkeys_key, player_channel, sessions_key, token_key, username_key
from .replies import as_text_or_none, text_map, text_or_none_list

__all__ = ["AccountStore", "SessionRecord"]

SessionRecord = dict[str, Any]
"""What a token's key holds: ``player``, ``sid`` (the session id) and ``born`` (ms, when this
token was handed out), with the session's ``created``, ``seen`` and ``device`` from
``sessions:PLAYER``."""


class AccountStore(StoreBase):
    """Accounts and sessions: usernames, password hashes, session tokens, login lockouts."""

    # -- sessions -----------------------------------------------------------------------

    async def open_session(self, player_id: str, device: str, now_ms: int, ttl_ms: int) -> tuple[str, str]:
        """Open a session of a player kept ``ttl_ms`` unused; return its token and id."""
        sid = "s" + secrets.token_hex(6)
        token = await self._issue(player_id, sid, now_ms, ttl_ms)
        entry = {"token": token_key(token), "created": now_ms, "seen": now_ms, "device": device}
        async with self.redis.pipeline(transaction=False) as pipe:  # keys of two slots
            pipe.hset(sessions_key(player_id), sid, json.dumps(entry))
            pipe.pexpire(sessions_key(player_id), ttl_ms, gt=True)
            pipe.pexpire(sessions_key(player_id), ttl_ms, nx=True)
            await pipe.execute()
        return token, sid

    async def _issue(self, player_id: str, sid: str, now_ms: int, ttl_ms: int) -> str:
        """Write a fresh token of session ``sid`` (its hash only) kept ``ttl_ms``; return it."""
        token = secrets.token_urlsafe(32)  # 32 random bytes
        key = token_key(token)
        async with self.redis.pipeline(transaction=True) as pipe:
            pipe.hset(key, mapping={"player": player_id, "sid": sid, "born": now_ms})
            pipe.pexpire(key, ttl_ms)
            await pipe.execute()
        return token

    async def session_of(self, token: str) -> SessionRecord | None:
        """Return the session a token stands for (``current``: whether it is the session's
        newest token), or ``None`` for a token unknown, expired or revoked."""
        key = token_key(token)
        record = text_map(await self.redis.hgetall(key))
        if not record.get("player"):
            return None
        raw = as_text_or_none(await self.redis.hget(sessions_key(record["player"]), record["sid"]))
        if raw is None:
            return None  # the session was revoked
        entry = json.loads(raw)
        return {**entry, **record, "born": int(record["born"]), "current": entry["token"] == key}

    async def touch_session(self, record: SessionRecord, token: str, now_ms: int, ttl_ms: int) -> None:
        """Note that a session was used now and keep its token ``ttl_ms`` more."""
        player, sid = record["player"], record["sid"]
        entry = {k: record[k] for k in ("created", "device")} | {"token": token_key(token), "seen": now_ms}
        async with self.redis.pipeline(transaction=False) as pipe:  # keys of two slots
            pipe.hset(sessions_key(player), sid, json.dumps(entry))
            pipe.pexpire(sessions_key(player), ttl_ms, gt=True)
            if record["current"]:
                pipe.pexpire(token_key(token), ttl_ms)
            await pipe.execute()

    async def rotate_session(
        self, record: SessionRecord, presented: str, now_ms: int, ttl_ms: int, overlap_ms: int
    ) -> str:
        """Hand the session a new token kept ``ttl_ms``; the token it had (and the one
        presented, if older) keeps working ``overlap_ms`` at most. Return the new token."""
        player, sid = record["player"], record["sid"]
        token = await self._issue(player, sid, now_ms, ttl_ms)
        entry = {k: record[k] for k in ("created", "device")} | {"token": token_key(token), "seen": now_ms}
        async with self.redis.pipeline(transaction=False) as pipe:  # keys of several slots
            pipe.hset(sessions_key(player), sid, json.dumps(entry))
            pipe.pexpire(sessions_key(player), ttl_ms, gt=True)
            for old in {record["token"], token_key(presented)}:
                pipe.pexpire(old, max(1, overlap_ms), lt=True)
            await pipe.execute()
        return token

    async def sessions(self, player_id: str) -> dict[str, dict[str, Any]]:
        """Return the player's live sessions by id; sessions whose token expired are dropped."""
        entries = await self._entries(player_id)
        if not entries:
            return {}
        async with self.redis.pipeline(transaction=False) as pipe:  # tokens of many slots
            for entry in entries.values():
                pipe.exists(entry["token"])
            alive = await pipe.execute()
        gone = [sid for sid, live in zip(entries, alive, strict=True) if not live]
        if gone:
            await self.redis.hdel(sessions_key(player_id), *gone)
        return {sid: entry for sid, entry in entries.items() if sid not in gone}

    async def _entries(self, player_id: str) -> dict[str, dict[str, Any]]:
        raw = text_map(await self.redis.hgetall(sessions_key(player_id)))
        return {sid: json.loads(text) for sid, text in raw.items()}

    async def revoke_sessions(self, player_id: str, sids: Sequence[str]) -> list[str]:
        """Revoke sessions of a player (their tokens stop working, their connections are told
        to close); return the ids that were live."""
        entries = await self._entries(player_id)
        found = [sid for sid in sids if sid in entries]
        if not found:
            return []
        async with self.redis.pipeline(transaction=False) as pipe:  # keys of many slots
            pipe.hdel(sessions_key(player_id), *found)
            for sid in found:
                pipe.delete(entries[sid]["token"])
            await pipe.execute()
        notice = {"kind": "revoked", "sessions": found}
        await self.redis.publish(player_channel(player_id), json.dumps(notice))
        return found

    async def revoke_all_sessions(self, player_id: str) -> int:
        """Revoke every session of a player; return how many there were."""
        entries = text_map(await self.redis.hgetall(sessions_key(player_id)))
        await self.revoke_sessions(player_id, list(entries))
        await self.redis.delete(sessions_key(player_id))
        return len(entries)

    async def session_keys(self, player_id: str) -> list[str]:
        """Return the token keys of a player's sessions (their current tokens)."""
        entries = text_map(await self.redis.hgetall(sessions_key(player_id)))
        return [json.loads(raw)["token"] for raw in entries.values()]

    # -- accounts -----------------------------------------------------------------------

    async def claim_username(self, skeleton: str, player_id: str, ttl_ms: int) -> bool:
        """Reserve a username's look-alike class for a player; ``False`` when it is taken."""
        return bool(await self.redis.set(username_key(skeleton), player_id, nx=True, px=ttl_ms))

    async def release_username(self, skeleton: str, player_id: str) -> None:
        """Give back a username reserved by a player whose account was not made."""
        if as_text_or_none(await self.redis.get(username_key(skeleton))) == player_id:
            await self.redis.delete(username_key(skeleton))

    async def player_of_username(self, skeleton: str) -> str | None:
        """Return the player whose account has a username of this look-alike class."""
        return as_text_or_none(await self.redis.get(username_key(skeleton)))

    async def make_account(
        self, player_id: str, username: str, skeleton: str, password_hash: str, day: str = ""
    ) -> None:
        """Make a player an account: its username, its password's hash, the day it was made."""
        mapping: dict[Any, Any] = {"username": username, "skeleton": skeleton, "password": password_hash}
        await self.redis.hset(f"player:{player_id}", mapping={**mapping, "made": day})

    async def account(self, player_id: str) -> dict[str, str]:
        """Return a player's ``username``, ``skeleton``, ``password`` hash, ``name`` and the
        daily's date it became an account (``made``) (empty for a guest: no such fields)."""
        fields = ["username", "skeleton", "password", "name", "made"]
        values = text_or_none_list(await self.redis.hmget(f"player:{player_id}", fields))
        return {k: v for k, v in zip(fields, values, strict=True) if v}

    async def set_password(self, player_id: str, password_hash: str) -> None:
        """Store a new password hash of an account."""
        await self.redis.hset(f"player:{player_id}", "password", password_hash)

    # -- passkeys -----------------------------------------------------------------------

    async def passkeys(self, player_id: str) -> dict[str, dict[str, Any]]:
        """Return a player's passkeys by credential id: public ``key``, signature ``count``,
        relying party ``rp``, ``device``, ``created`` and last ``used`` (ms)."""
        raw = text_map(await self.redis.hgetall(passkeys_key(player_id)))
        return {cid: json.loads(text) for cid, text in raw.items()}

    async def save_passkey(
        self, player_id: str, credential: str, record: dict[str, Any], ttl_ms: int
    ) -> None:
        """Store (or update) a passkey of a player, kept as long as the account."""
        async with self.redis.pipeline(transaction=True) as pipe:
            pipe.hset(passkeys_key(player_id), credential, json.dumps(record, separators=(",", ":")))
            pipe.pexpire(passkeys_key(player_id), ttl_ms, gt=True)
            pipe.pexpire(passkeys_key(player_id), ttl_ms, nx=True)
            await pipe.execute()

    async def make_passkey_account(self, player_id: str, username: str, skeleton: str, day: str = "") -> None:
        """Make a player an account whose credential is a passkey (no password)."""
        mapping: dict[Any, Any] = {"username": username, "skeleton": skeleton, "made": day}
        await self.redis.hset(f"player:{player_id}", mapping=mapping)

    # -- login lockout ----------------------------------------------------------------

    async def login_locked_until(self, skeleton: str) -> int:
        """Return when (ms) a username's lockout ends (0: not locked)."""
        return int(as_text_or_none(await self.redis.hget(login_key(skeleton), "until")) or 0)

    async def login_failed(self, skeleton: str, now_ms: int, free: int, first_ms: int) -> int:
        """Count a wrong password for a username; past ``free`` in a row it is locked out for
        ``first_ms``, doubled by each further one (at most a day). Return the lockout's end."""
        key = login_key(skeleton)
        failures = int(await self.redis.hincrby(key, "failures", 1))
        until = 0
        if failures >= free:
            until = now_ms + min(86_400_000, first_ms * 2 ** min(failures - free, 40))
            await self.redis.hset(key, "until", until)
        await self.redis.pexpire(key, max(until - now_ms, 0) + 86_400_000)
        return until

    async def login_succeeded(self, skeleton: str) -> None:
        """Forget a username's wrong passwords."""
        await self.redis.delete(login_key(skeleton))

    # -- accounts in the making ----------------------------------------------------------

    async def begin_account(self, player_id: str, skeleton: str) -> bool:
        """Mark a player as becoming an account; ``False`` if it is one, or is becoming one
        on another connection (two registrations of one guest at once)."""
        return bool(await self.redis.hsetnx(f"player:{player_id}", "skeleton", skeleton))

    async def abandon_account(self, player_id: str, skeleton: str) -> None:
        """Undo :meth:`begin_account` for an account that was not made."""
        key = f"player:{player_id}"
        fields = text_or_none_list(await self.redis.hmget(key, ["skeleton", "username"]))
        if fields[0] == skeleton and fields[1] is None:
            await self.redis.hdel(key, "skeleton")
