"""The store's scripts against a real Redis-compatible server."""

from __future__ import annotations

import asyncio
import json

import pytest

from server.store import Store, StoreError

pytestmark = pytest.mark.asyncio


async def make_game(store: Store, game_id: str = "g1") -> None:
    await store.create_game(
        game_id,
        {"variant": "scorpion", "rule": "any-time", "number": 123456789, "salt": "s", "start": 1000},
        [("pa", "Ann"), ("pb", "Bob")],
        json.dumps({"type": "race_started"}),
        {"score": 0},
    )


async def test_a_move_applies_once_and_the_same_move_again_is_stale(redis_url: str) -> None:
    store = Store(redis_url)
    await make_game(store)
    first = await store.act(
        "g1", "pa", seen_version=1, based_on=1, op="push", move="7H:2-5", event="{}", fields={"score": 0}
    )
    second = await store.act(
        "g1", "pa", seen_version=1, based_on=2, op="push", move="7H:2-5", event="{}", fields={"score": 0}
    )
    assert (first.result, first.version) == ("ok", 2)
    assert second.result == "stale"
    record = await store.game("g1")
    assert record is not None
    assert record.racers[0].moves == ["7H:2-5"]
    assert record.version == 2
    await store.close()


async def test_concurrent_identical_moves_commit_exactly_one(redis_url: str) -> None:
    store = Store(redis_url)
    await make_game(store)
    outcomes = await asyncio.gather(
        *(
            store.act("g1", "pa", seen_version=1, based_on=1, op="push", move="7H:2-5", event="{}", fields={})
            for _ in range(10)
        )
    )
    assert sorted(o.result for o in outcomes).count("ok") == 1
    racer = await store.racer("g1", "pa")
    assert racer is not None and racer.moves == ["7H:2-5"]
    await store.close()


async def test_other_racers_moves_do_not_make_a_move_stale(redis_url: str) -> None:
    store = Store(redis_url)
    await make_game(store)
    bob = await store.act(
        "g1", "pb", seen_version=1, based_on=1, op="push", move="KS:3-4", event="{}", fields={}
    )
    ann = await store.act(
        "g1", "pa", seen_version=1, based_on=1, op="push", move="7H:2-5", event="{}", fields={}
    )
    assert bob.result == ann.result == "ok"
    assert (bob.version, ann.version) == (2, 3)
    await store.close()


async def test_a_node_with_an_outdated_board_gets_a_conflict(redis_url: str) -> None:
    store = Store(redis_url)
    await make_game(store)
    await store.act("g1", "pa", seen_version=1, based_on=1, op="push", move="7H:2-5", event="{}", fields={})
    outcome = await store.act(
        "g1", "pa", seen_version=2, based_on=1, op="push", move="8H:1-2", event="{}", fields={}
    )
    assert (outcome.result, outcome.value) == ("conflict", "2")
    await store.close()


async def test_an_undo_is_kept_as_an_action_and_events_are_versioned(redis_url: str) -> None:
    store = Store(redis_url)
    await make_game(store)
    await store.act(
        "g1", "pa", seen_version=1, based_on=1, op="push", move="7H:2-5", event='{"n":2}', fields={}
    )
    await store.act(
        "g1", "pa", seen_version=2, based_on=2, op="push", move="undo", event='{"n":3}', fields={}
    )
    racer = await store.racer("g1", "pa")
    assert racer is not None and racer.moves == ["7H:2-5", "undo"]
    assert await store.events("g1", 1) == [(2, '{"n":2}'), (3, '{"n":3}')]
    assert await store.events("g1", 3) == []
    await store.close()


async def test_a_game_ends_exactly_once_and_refuses_later_moves(redis_url: str) -> None:
    store = Store(redis_url)
    await make_game(store)
    first = await store.end_game("g1", ["pa", "pb"], '{"type":"race_ended"}', 5000, "[]", 60_000)
    second = await store.end_game("g1", ["pa", "pb"], '{"type":"race_ended"}', 5000, "[]", 60_000)
    assert (first, second) == (2, 0)
    late = await store.act(
        "g1", "pa", seen_version=2, based_on=1, op="push", move="7H:2-5", event="{}", fields={}
    )
    assert late.result == "over"
    assert await store.live_games() == []
    await store.close()


async def test_rooms_fill_up_and_refuse_unknown_codes(redis_url: str) -> None:
    store = Store(redis_url)
    code = await store.create_room("pa", {"variant": "scorpion", "max_players": 2}, 60_000)
    assert len(code) == 6
    await store.join_room(code, "pb", 60_000)
    with pytest.raises(StoreError) as full:
        await store.join_room(code, "pc", 60_000)
    assert full.value.code == "room_full"
    with pytest.raises(StoreError) as missing:
        await store.join_room("ZZZZZZ", "pc", 60_000)
    assert missing.value.code == "no_such_room"
    room = await store.room(code)
    assert room is not None and room["members"] == ["pa", "pb"]
    await store.close()


async def test_the_queue_pairs_the_two_longest_waiting(redis_url: str) -> None:
    store = Store(redis_url)
    await store.enqueue("scorpion", "late", 300)
    await store.enqueue("scorpion", "early", 100)
    assert await store.match("scorpion", 3) == []
    await store.enqueue("scorpion", "middle", 200)
    assert await store.match("scorpion", 2) == ["early", "middle"]
    assert await store.match("scorpion", 2) == []
    await store.close()
