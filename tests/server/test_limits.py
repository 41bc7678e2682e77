"""Abuse limits per client address: new guests, room-code guessing, accounts and failed
logins (the API the accounts use), shared by every node through Redis."""

from __future__ import annotations

import asyncio
import contextlib
import urllib.request
from collections.abc import AsyncIterator, Callable
from typing import Any

import pytest
import redis.asyncio as aioredis
from websockets.asyncio.client import connect

from protocol.wire.codec import decode_dict, encode
from protocol.wire.error import ErrorCode, ProtocolError
from protocol.wire.message import Hello
from server.limits import subject_of
from server.store import Store
from tests.conftest import ClusterServer

from .conftest import Client, NodeFactory

Opener = Callable[..., Any]

SUBPROTOCOL = "scorpion.v1.msgpack"


async def hello(url: str, forwarded_for: str | None = None, token: str | None = None) -> dict[str, Any]:
    """Connect (as the client ``forwarded_for`` names, through a trusted proxy), say hello,
    return the answer."""
    headers = {"X-Forwarded-For": forwarded_for} if forwarded_for else None
    async with connect(url, subprotocols=[SUBPROTOCOL], additional_headers=headers) as ws:  # type: ignore[list-item]
        await ws.send(encode(Hello(name="Ann", token=token)))
        return decode_dict(await ws.recv())


async def test_new_guests_from_one_address_are_limited(start_node: NodeFactory) -> None:
    node = start_node(guests_per_minute=3, trusted_proxies="127.0.0.1/32")
    welcomes = [await hello(node.url) for _ in range(3)]
    assert [w["type"] for w in welcomes] == ["welcome"] * 3
    refused = await hello(node.url)
    assert refused["type"] == "error" and refused["code"] == "rate_limited", refused
    assert 0 < refused["retry_after_ms"] <= 60_000
    assert "new players from your address" in refused["message"]
    # a returning player is no new guest; another address has its own count
    assert (await hello(node.url, token=welcomes[0]["token"]))["type"] == "welcome"
    assert (await hello(node.url, forwarded_for="203.0.113.7"))["type"] == "welcome"
    # IPv6 counts by /64: one customer's block is one address
    for host in range(1, 4):
        assert (await hello(node.url, forwarded_for=f"2001:db8:0:1::{host}"))["type"] == "welcome"
    six = await hello(node.url, forwarded_for="2001:db8:0:1::ffff")
    assert six["code"] == "rate_limited"
    # a second node shares the counts (they are in Redis)
    other = start_node(guests_per_minute=3)
    assert (await hello(other.url))["code"] == "rate_limited"
    with urllib.request.urlopen(f"http://127.0.0.1:{node.port}/metrics", timeout=5) as response:
        assert 'scorpion_limited_total{limit="guest"} 2.0' in response.read().decode()


async def test_a_spoofed_forwarded_for_from_an_untrusted_peer_is_counted_as_the_peer(
    start_node: NodeFactory,
) -> None:
    node = start_node(guests_per_minute=2)  # trusts no proxy
    answers = [(await hello(node.url, forwarded_for=f"203.0.113.{n}"))["type"] for n in range(1, 4)]
    assert answers == ["welcome", "welcome", "error"]


async def test_room_codes_cannot_be_guessed(start_node: NodeFactory, open_client: Opener) -> None:
    node = start_node(room_codes_per_minute=3, trusted_proxies="127.0.0.1/32")
    ann = await open_client(node, "Ann")
    room = await ann.request({"type": "room_create", "variant": "scorpion"})
    code = room["room"]
    guesser = await open_client(node, "Eve")
    wrong = "ZZZZZZ" if code != "ZZZZZZ" else "YYYYYY"
    for _ in range(3):
        answer = await guesser.request({"type": "room_join", "room": wrong})
        assert answer["code"] == "no_such_room", answer
    limited = await guesser.request({"type": "room_join", "room": wrong})
    assert limited["code"] == "rate_limited" and 0 < limited["retry_after_ms"] <= 60_000
    # past the limit, the right code is refused too: a guess that hits is not told apart
    assert (await guesser.request({"type": "room_join", "room": code}))["code"] == "rate_limited"
    assert (await guesser.request({"type": "watch", "room": code}))["code"] == "rate_limited"
    # a player from elsewhere joins with the code
    bob = await open_client(node, "Bob", headers={"X-Forwarded-For": "198.51.100.4"})
    joined = await bob.request({"type": "room_join", "room": code})
    assert joined["type"] == "room", joined


async def test_watching_by_unknown_codes_counts_as_guessing(
    start_node: NodeFactory, open_client: Opener
) -> None:
    node = start_node(room_codes_per_minute=2)
    eve: Client = await open_client(node, "Eve")
    codes = [
        (await eve.request({"type": "watch", "room": c}))["code"] for c in ("QQQQQQ", "WWWWWW", "XXXXXX")
    ]
    assert codes == ["no_such_room", "no_such_room", "rate_limited"]
    assert (await eve.request({"type": "room_join", "room": "QQQQQQ"}))["code"] == "rate_limited"


# -- the API the accounts use, on one Redis and on a cluster -------------------------------


@pytest.fixture(params=["redis", "cluster"])
async def store(
    request: pytest.FixtureRequest, redis_url: str, cluster_server: ClusterServer
) -> AsyncIterator[Store]:
    if request.param == "cluster":
        cluster_server.flush()
        url = cluster_server.url.replace("redis://", "redis+cluster://").removesuffix("/0")
    else:
        url = redis_url
    store = Store(url)
    yield store
    await store.close()


async def limits_of(store: Store, **settings: Any) -> Any:
    from server.config import Config
    from server.limits import Limits
    from server.runtime.metrics import Metrics
    from server.runtime.service import Plumbing
    from server.runtime.tasks import Tasks

    config = Config(**settings)
    plumbing = Plumbing("n1", config, store, None, Metrics(), Tasks())  # type: ignore[arg-type]
    return Limits(plumbing)


async def refused_after(call: Callable[[], Any]) -> int:
    with pytest.raises(ProtocolError) as caught:
        await call()
    assert caught.value.code == ErrorCode.RATE_LIMITED
    assert caught.value.retry_after_ms is not None
    return caught.value.retry_after_ms


async def test_accounts_per_day(store: Store) -> None:
    limits = await limits_of(store, accounts_per_day=2)
    await limits.check("192.0.2.1", "account")
    await limits.take("192.0.2.1", "account")
    await limits.take("192.0.2.1", "account")
    wait = await refused_after(lambda: limits.check("192.0.2.1", "account"))
    assert wait == 60_000  # a day's wait, told in the message, asked for in steps of the protocol's most
    with pytest.raises(ProtocolError, match="new accounts from your address today"):
        await limits.take("192.0.2.1", "account")
    await limits.take("192.0.2.2", "account")


async def test_failed_logins_lock_out_for_longer_each_time(store: Store) -> None:
    limits = await limits_of(store, login_failures=2, login_lockout=0.3, login_lockout_max=0.7)
    address = "192.0.2.9"
    await limits.check(address, "login_failed")
    await limits.take(address, "login_failed")  # one failure: no lockout yet
    await limits.check(address, "login_failed")
    first = await refused_after(lambda: limits.take(address, "login_failed"))
    assert 0 < first <= 300
    again = await refused_after(lambda: limits.check(address, "login_failed"))
    assert again <= first
    await refused_after(lambda: limits.take(address, "login_failed"))  # locked: not even counted
    await asyncio.sleep(first / 1000 + 0.05)
    await limits.check(address, "login_failed")
    await limits.take(address, "login_failed")
    second = await refused_after(lambda: limits.take(address, "login_failed"))
    assert 300 < second <= 600  # doubled
    await asyncio.sleep(second / 1000 + 0.05)
    await limits.take(address, "login_failed")
    third = await refused_after(lambda: limits.take(address, "login_failed"))
    assert 600 < third <= 700  # doubled again, up to the cap
    await limits.check("192.0.2.10", "login_failed")  # another address is not locked


async def test_every_limit_key_has_an_expiry(store: Store, redis_url: str) -> None:
    limits = await limits_of(store, guests_per_minute=1, room_codes_per_minute=1)
    for kind in ("guest", "account", "room_code", "login_failed"):
        for _ in range(6):
            with contextlib.suppress(ProtocolError):
                await limits.take("192.0.2.1", kind)
    raw = store.redis
    keys = [key async for key in raw.scan_iter(match="limit:*")]
    assert len(keys) == 5  # four counters and one lock
    for key in keys:
        assert await raw.pttl(key) > 0, key
    if isinstance(raw, aioredis.Redis):
        assert await raw.dbsize() == 5


def test_an_ipv6_address_counts_by_its_64() -> None:
    assert subject_of("2001:db8:0:1::5") == subject_of("2001:db8:0:1:ffff::1") == "2001:db8:0:1::/64"
    assert subject_of("::ffff:192.0.2.1") == "192.0.2.1"
    assert subject_of("192.0.2.1") == "192.0.2.1"
