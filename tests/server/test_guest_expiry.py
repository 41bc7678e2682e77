"""Every key a guest leaves in Redis expires: ``guest_retention`` after their last visit, or
with the game it belongs to (issue "Accounts, sessions and abuse limits")."""

from __future__ import annotations

import asyncio
import hashlib
import re
import time
from typing import Any

import pytest
import redis.asyncio as aioredis

from .conftest import Client

pytestmark = pytest.mark.asyncio

RETENTION = 1000.0
"""The test's ``guest_retention``, in seconds."""

SHARED = {
    "nodes": "the nodes' heartbeats: one entry a node, trimmed by the nodes themselves",
    "live": "the running games' index, one entry a game while it runs",
    "daily:secret": "the secret the daily deals derive from, one for the deployment",
}
"""Keys without an expiry that belong to no player, and why they need none."""
SHARED_PATTERNS = {
    r"queue:[\w-]+": "a variant's casual queue: players leave it when matched or when they stop waiting",
    r"mm:\{[\w-]+\}:(q|r|left|first)": "a variant's rated queue, emptied the same way",
    r"rb:\{[\w-]+\}": "a variant's rating board",
}


def shared(key: str) -> bool:
    return key in SHARED or any(re.fullmatch(pattern, key) for pattern in SHARED_PATTERNS)


async def keys_without_expiry(redis: aioredis.Redis) -> list[str]:
    keys = [key async for key in redis.scan_iter(count=1000)]
    ttls = [await redis.pttl(key) for key in keys]
    return sorted(key for key, ttl in zip(keys, ttls, strict=True) if ttl == -1 and not shared(key))


def token_key(token: str) -> str:
    return "token:" + hashlib.sha256(token.encode()).hexdigest()


async def guest_keys(redis: aioredis.Redis, guest: Client) -> list[str]:
    """Return the keys named after a guest, and their token's."""
    keys = [key async for key in redis.scan_iter(match=f"*{guest.player}*", count=1000)]
    return sorted([*keys, token_key(guest.token)])


async def memory(redis: aioredis.Redis, keys: list[str]) -> int:
    return sum([await redis.memory_usage(key) or 0 for key in keys])


async def test_every_key_a_guest_leaves_expires(local_node: Any, open_client: Any, redis_url: str) -> None:
    node = await local_node(guest_retention=RETENTION)
    redis = aioredis.Redis.from_url(redis_url, decode_responses=True)
    try:
        guests: list[Client] = []
        for index in range(20):  # connect, hello, close: a new identity each time
            guests.append(await open_client(node, f"Guest {index}"))
            await guests[-1].close()
        returning: Client = await open_client(node, "Back")
        await returning.close()
        returning = await open_client(node, "Back again", token=returning.token)
        ann: Client = await open_client(node, "Ann")
        fresh_memory = await memory(redis, await guest_keys(redis, ann))
        start = await ann.request({"type": "solo_new", "variant": "scorpion"})
        await ann.request({"type": "resign", "game": start["game"], "v": start["v"]})
        await ann.expect("race_ended")
        bob: Client = await open_client(node, "Bob")  # leaves a saved game in progress
        saved = await bob.request({"type": "solo_new", "variant": "scorpion"})
        hints = await bob.request({"type": "hint", "game": saved["game"], "v": saved["v"]})
        move = {"type": "move", "game": saved["game"], "v": saved["v"], "move": hints["moves"][0]}
        assert (await bob.request(move))["type"] == "accepted"
        for client in (returning, ann, bob):
            await client.close()
        deadline = time.monotonic() + 10
        while (missing := await keys_without_expiry(redis)) and time.monotonic() < deadline:
            await asyncio.sleep(0.1)  # a last disconnect renews the player's keys just after it
        assert missing == [], f"keys with no expiry: {missing}"
        assert await redis.exists(f"player:{ann.player}", f"{{g:{saved['game']}}}:m:{bob.player}") == 2
        own = [key for key in await guest_keys(redis, ann) if not key.startswith("{g:")]
        played_memory = await memory(redis, own)
        # A finished game's keys go with the game (finished-game-ttl), not with the guest.
        game_keys = [key async for key in redis.scan_iter(match=f"{{g:{start['game']}}}*")]
        gone_memory = await memory(redis, await guest_keys(redis, guests[0]))
        print(
            f"\nRedis memory of a fresh guest: {fresh_memory} B connected, {gone_memory} B gone; "
            f"after a finished solo game: {played_memory} B, "
            f"and {await memory(redis, game_keys)} B for the game's own keys"
        )
        for key in sorted({*await guest_keys(redis, ann), *game_keys}):
            print(f"  {key}: {await redis.memory_usage(key)} B, {await redis.pttl(key)} ms")
    finally:
        await redis.aclose()


async def test_a_returning_guest_is_kept_for_the_whole_retention_again(
    local_node: Any, open_client: Any, redis_url: str
) -> None:
    node = await local_node(guest_retention=RETENTION)
    redis = aioredis.Redis.from_url(redis_url, decode_responses=True)
    try:
        ann: Client = await open_client(node, "Ann")
        start = await ann.request({"type": "solo_new", "variant": "scorpion", "save": False})
        assert start["type"] == "race_started"
        dealt = await ann.request({"type": "deal", "game": start["game"], "v": start["v"]})
        assert dealt["type"] == "accepted"  # a game played: its statistics are written
        await ann.close()
        keys = [f"player:{ann.player}", token_key(ann.token), f"stats:{ann.player}:scorpion"]
        for key in keys:
            assert 0 < await redis.pttl(key) <= RETENTION * 1000
            await redis.pexpire(key, 5000)  # as if most of the retention had passed
        back: Client = await open_client(node, "Ann", token=ann.token)
        assert back.player == ann.player
        for key in keys:
            assert await redis.pttl(key) > (RETENTION - 60) * 1000, key
    finally:
        await redis.aclose()
