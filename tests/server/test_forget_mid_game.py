"""forget_me during a race or a daily attempt: resigned first, then erased, nothing written after."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from server.store import Store
from server.store.keys import FORGOTTEN_NAME
from tests.server.conftest import Client, NodeFactory, accounts_only
from tests.server.test_race import play_line, winnable_deal

from .test_daily import eventually

pytestmark = pytest.mark.asyncio


@pytest.fixture
def open_client(open_client: Any) -> Any:
    """Every client of this file is an account: ranked play needs one."""
    return accounts_only(open_client)


async def traces(redis_url: str, player: str) -> list[str]:
    """Return every key that names the player, or holds them in a board, queue or attempt."""
    store = Store(redis_url)
    try:
        redis = store.redis
        found = [key async for key in redis.scan_iter(f"*{player}*")]
        async for key in redis.scan_iter("*"):
            if await holds(redis, key, player):
                found.append(key)
        return found
    finally:
        await store.close()


async def holds(redis: Any, key: str, player: str) -> bool:
    """Tell whether a board, queue, index or attempt list (not a game's record) holds the player."""
    kind = await redis.type(key)
    if kind == "zset":
        return await redis.zscore(key, player) is not None
    if kind == "hash":
        return not key.startswith("{g:") and bool(await redis.hexists(key, player))
    if kind == "set":
        return bool(await redis.sismember(key, player))
    return False


def outside_games(keys: list[str]) -> list[str]:
    """The keys that are not a game's own record (where the neutral name stands for them)."""
    return [key for key in keys if not key.startswith("{g:")]


async def test_forget_me_mid_rated_race_resigns_then_erases_and_the_race_ends_without_them(
    start_node: NodeFactory, open_client: Any, redis_url: str
) -> None:
    number, line = winnable_deal()
    first, second = start_node(test_deals=number), start_node()
    ann: Client = await open_client(first, "Ann")
    bob: Client = await open_client(second, "Bob")
    room = await ann.request({"type": "room_create", "variant": "scorpion", "options": {"rated": True}})
    await bob.request({"type": "room_join", "room": room["room"]})
    await bob.request({"type": "ready", "ready": True})
    await ann.send({"type": "room_start"})
    start = await ann.expect("race_started")
    await bob.expect("race_started")
    forgotten = await bob.request({"type": "forget_me"})
    assert forgotten["type"] == "forgotten"
    resigned = await ann.expect("progress", timeout=5)
    assert resigned["player"] == bob.player and resigned["status"] == "resigned"

    await play_line(ann, start["game"], start["v"], line)
    ended = await ann.expect("race_ended")
    by_player = {row["player"]: row for row in ended["standings"]}
    assert by_player[bob.player]["name"] == FORGOTTEN_NAME
    assert by_player[bob.player]["status"] == "resigned"
    assert by_player[ann.player]["name"] == "Ann" and by_player[ann.player]["rank"] == 1

    # Ann is rated as usual (a win over a newcomer's rating); Bob has no change, no rating.
    change = await ann.expect("rating_change", game=ended["game"])
    assert [(c["player"], c["before"], c["after"]) for c in change["changes"]] == [(ann.player, 1500, 1662)]
    page = await ann.request({"type": "rating_board", "variant": "scorpion"})
    assert [(e["player"], e["rating"]) for e in page["entries"]] == [(ann.player, 1662)]
    assert page["total"] == 1

    replay = await ann.request({"type": "replay", "game": start["game"]})
    assert replay["type"] == "replay_log"
    assert {log["name"] for log in replay["logs"]} == {"Ann", FORGOTTEN_NAME}
    assert "Bob" not in {row["name"] for row in replay["standings"]}
    profile = await ann.request({"type": "profile", "player": bob.player})
    assert profile["type"] == "error" and profile["code"] == "no_such_player"

    await asyncio.sleep(0.5)  # whatever the race's end spawned (ratings, analyses) is done
    assert outside_games(await traces(redis_url, bob.player)) == []
    store = Store(redis_url)
    try:
        for key in [k async for k in store.redis.scan_iter(f"{{g:{start['game']}}}*")]:
            if await store.redis.type(key) in ("string", "list", "hash"):
                dumped = str(
                    await store.redis.hgetall(key)
                    if await store.redis.type(key) == "hash"
                    else await store.redis.lrange(key, 0, -1)
                    if await store.redis.type(key) == "list"
                    else await store.redis.get(key)
                )
                assert "Bob" not in dumped, key
        assert await store.redis.exists(f"{{g:{start['game']}}}:a:{bob.player}") == 0  # no analysis
    finally:
        await store.close()


async def test_forget_me_mid_daily_attempt_leaves_no_board_entry_statistics_or_attempt(
    local_node: Any, open_client: Any, redis_url: str
) -> None:
    node = await local_node()
    ann: Client = await open_client(node, "Ann")
    start = await ann.request({"type": "daily_start"})
    assert start["type"] == "race_started"
    forgotten = await ann.request({"type": "forget_me"})
    assert forgotten["type"] == "forgotten"
    assert forgotten["removed"]["daily_attempts"] == 1
    bob: Client = await open_client(node, "Bob")
    await asyncio.sleep(0.5)  # the attempt's end and what it leaves behind
    board = await bob.request({"type": "leaderboard"})
    assert board["entries"] == []
    assert outside_games(await traces(redis_url, ann.player)) == []
    store = Store(redis_url)
    try:
        assert await store.stats(ann.player, ["scorpion"]) == {}
        assert await store.redis.lrange(f"results:{ann.player}", 0, -1) == []
        replay = await bob.request({"type": "replay", "game": start["game"]})
        names = {log["name"] for log in replay.get("logs", ())}
        assert "Ann" not in names
    finally:
        await store.close()


async def test_a_board_entry_finished_before_forget_me_goes_with_it(
    local_node: Any, open_client: Any, redis_url: str
) -> None:
    node = await local_node()
    ann: Client = await open_client(node, "Ann")
    start = await ann.request({"type": "daily_start"})
    await ann.request({"type": "resign", "game": start["game"], "v": start["v"]})
    await ann.expect("race_ended")
    await eventually(ann, {"type": "leaderboard"}, lambda a: a["entries"])
    forgotten = await ann.request({"type": "forget_me"})
    assert forgotten["removed"]["daily_attempts"] == 1
    assert forgotten["removed"]["leaderboard_entries"] == 1
    await asyncio.sleep(0.3)
    assert outside_games(await traces(redis_url, ann.player)) == []
