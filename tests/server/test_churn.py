"""Identity churn from one address is bounded: the probe of issue 48 (connect, hello, close
in loops for 10 s) leaves at most 100 new keys, none without an expiry, and the guests past
the limit are refused; a guest's leaderboard index and ratings expire from the moment they
are written."""

from __future__ import annotations

import asyncio
import functools
import time
from typing import Any

import pytest
import redis.asyncio as aioredis
from websockets.asyncio.client import connect

from protocol.wire.codec import decode_dict, encode
from protocol.wire.message import Hello

from .conftest import Client, NodeFactory
from .test_guest_expiry import shared
from .test_ranked import rated_race

pytestmark = pytest.mark.asyncio

PROBE_SECONDS = 10.0
LOOPS = 20


async def churn(url: str, until: float, answers: dict[str, int]) -> None:
    """Connect, say hello without a token, close; again until ``until`` (monotonic)."""
    while time.monotonic() < until:
        async with connect(url, subprotocols=["scorpion.v1.msgpack"]) as ws:
            await ws.send(encode(Hello(name="Churn")))
            answer = decode_dict(await ws.recv())
        kind = answer.get("code", answer["type"])
        answers[kind] = answers.get(kind, 0) + 1


async def test_identity_churn_from_one_address_leaves_few_keys_all_expiring(
    start_node: NodeFactory, redis_url: str
) -> None:
    node = start_node(guests_per_minute=30)  # the default limit, set as the operator would
    redis = aioredis.Redis.from_url(redis_url, decode_responses=True)
    try:
        before = {key async for key in redis.scan_iter(count=1000)}
        answers: dict[str, int] = {}
        until = time.monotonic() + PROBE_SECONDS
        await asyncio.gather(*(churn(node.url, until, answers) for _ in range(LOOPS)))
        await asyncio.sleep(1.0)  # the last disconnects are handled just after the closes
        after = {key async for key in redis.scan_iter(count=1000)}
        new = sorted(after - before)
        ttls = {key: await redis.pttl(key) for key in new}
        print(f"\nchurn for {PROBE_SECONDS:g} s from one address: {answers}, {len(new)} new keys")
        assert answers.get("welcome") == 30, answers
        assert answers.get("rate_limited", 0) > 0, answers
        assert set(answers) == {"welcome", "rate_limited"}, answers
        assert len(new) <= 100, new
        assert [key for key, ttl in ttls.items() if ttl == -1 and not shared(key)] == []
    finally:
        await redis.aclose()


async def test_an_account_s_leaderboard_index_expires_when_it_is_written(
    local_node: Any, open_client: Any, redis_url: str
) -> None:
    # A guest's daily attempt is unranked (it never reaches a board): an account's does.
    node = await local_node(account_retention=1000.0)
    redis = aioredis.Redis.from_url(redis_url, decode_responses=True)
    try:
        ann: Client = await open_client(node, "Ann", account=True)
        start = await ann.request({"type": "daily_start"})
        assert start["type"] == "race_started", start
        await ann.request({"type": "resign", "game": start["game"], "v": start["v"]})
        await ann.expect("race_ended")
        deadline = time.monotonic() + 10
        while not await redis.exists(f"boards:{ann.player}"):
            assert time.monotonic() < deadline, "the attempt never reached the board"
            await asyncio.sleep(0.05)
        # still connected: no hello or last disconnect has renewed anything since
        assert 0 < await redis.pttl(f"boards:{ann.player}") <= 1000 * 1000
    finally:
        await redis.aclose()


async def test_an_account_s_ratings_expire_when_they_are_written(
    start_node: NodeFactory, open_client: Any, redis_url: str
) -> None:
    # Only accounts are rated; their keys go with them after the account retention.
    account_client = functools.partial(open_client, account=True)
    ann, bob, ended = await rated_race(start_node, account_client, account_retention=1000)
    await ann.expect("rating_change", game=ended["game"])
    redis = aioredis.Redis.from_url(redis_url, decode_responses=True)
    try:
        for player in (ann.player, bob.player):
            for key in (f"rating:{{{player}}}", f"rating:{{{player}}}:games", f"rating:{{{player}}}:delta"):
                assert 0 < await redis.pttl(key) <= 1000 * 1000, key
    finally:
        await redis.aclose()
