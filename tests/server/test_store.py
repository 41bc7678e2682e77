"""The store's scripts against a real Redis-compatible server."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest
from redis.exceptions import ResponseError

from server.store import Store, StoreError, game_channel

pytestmark = pytest.mark.asyncio


async def make_game(store: Store, game_id: str = "g1") -> None:
    await store.create_game(
        game_id,
        {"variant": "scorpion", "rule": "any-time", "number": 123456789, "salt": "s", "start": 1000},
        [("pa", "Ann"), ("pb", "Bob")],
        json.dumps({"type": "race_started"}),
        {"score": 0},
    )


def act(store: Store, player: str, seen: int, based_on: int, move: str, event: str = "{}") -> Any:
    """Commit one pushed move of ``player`` in game g1."""
    return store.act(
        "g1",
        player,
        seen_version=seen,
        based_on=based_on,
        op="push",
        move=move,
        event=event,
        summary='{"score": 0}',
        status="playing",
    )


async def test_a_move_applies_once_and_the_same_move_again_is_stale(redis_url: str) -> None:
    store = Store(redis_url)
    await make_game(store)
    first = await act(store, "pa", 1, 1, "7H:2-5")
    second = await act(store, "pa", 1, 2, "7H:2-5")
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
    outcomes = await asyncio.gather(*(act(store, "pa", 1, 1, "7H:2-5") for _ in range(10)))
    assert sorted(o.result for o in outcomes).count("ok") == 1
    racer = await store.racer("g1", "pa")
    assert racer is not None and racer.moves == ["7H:2-5"]
    await store.close()


async def test_other_racers_moves_do_not_make_a_move_stale(redis_url: str) -> None:
    store = Store(redis_url)
    await make_game(store)
    bob = await act(store, "pb", 1, 1, "KS:3-4")
    ann = await act(store, "pa", 1, 1, "7H:2-5")
    assert bob.result == ann.result == "ok"
    assert (bob.version, ann.version) == (2, 3)
    await store.close()


async def test_a_node_with_an_outdated_board_gets_a_conflict(redis_url: str) -> None:
    store = Store(redis_url)
    await make_game(store)
    await act(store, "pa", 1, 1, "7H:2-5")
    outcome = await act(store, "pa", 2, 1, "8H:1-2")
    assert (outcome.result, outcome.value) == ("conflict", "2")
    await store.close()


async def test_an_undo_is_kept_as_an_action_and_events_are_versioned(redis_url: str) -> None:
    store = Store(redis_url)
    await make_game(store)
    await act(store, "pa", 1, 1, "7H:2-5", '{"n":2}')
    await act(store, "pa", 2, 2, "undo", '{"n":3}')
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
    late = await act(store, "pa", 2, 1, "7H:2-5")
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


async def test_pipelined_calls_get_their_own_replies_in_order(redis_url: str) -> None:
    store = Store(redis_url)
    pipeline = store._pipeline
    replies = await asyncio.gather(*(pipeline.call("INCRBY", "counter", n) for n in range(1, 201)))
    assert replies == [n * (n + 1) // 2 for n in range(1, 201)]  # running sums: sent and answered in order
    with pytest.raises(ResponseError):
        await pipeline.call("INCRBY", "counter", "not a number")
    assert await pipeline.call("GET", "counter") == str(200 * 201 // 2)  # an error reply spoils nothing
    await store.close()


async def test_scripts_are_reloaded_after_a_flush_and_a_lost_connection_reconnects(
    redis_url: str,
) -> None:
    store = Store(redis_url)
    await make_game(store)
    assert (await act(store, "pa", 1, 1, "7H:2-5")).result == "ok"
    await store.redis.script_flush()
    assert (await act(store, "pa", 2, 2, "8H:1-2")).result == "ok"  # NOSCRIPT answered by EVAL
    await store.redis.execute_command("CLIENT", "KILL", "TYPE", "normal", "SKIPME", "yes")
    await asyncio.sleep(0.05)
    assert (await act(store, "pa", 3, 3, "9H:1-2")).result == "ok"  # a new connection
    racer = await store.racer("g1", "pa")
    assert racer is not None and racer.moves == ["7H:2-5", "8H:1-2", "9H:1-2"]
    await store.close()


async def test_calls_in_flight_fail_with_a_connection_error_when_the_connection_drops(
    redis_url: str,
) -> None:
    store = Store(redis_url)
    pipeline = store._pipeline
    assert await pipeline.call("PING") == "PONG"
    blocked = asyncio.ensure_future(pipeline.call("BLPOP", "never", 5))
    await asyncio.sleep(0.05)
    await store.redis.execute_command("CLIENT", "KILL", "TYPE", "normal", "SKIPME", "yes")
    with pytest.raises(ConnectionError):
        await asyncio.wait_for(blocked, 3)
    assert await pipeline.call("PING") == "PONG"
    await store.close()


async def test_a_games_channel_is_a_shard_channel_next_to_the_classic_ones(redis_url: str) -> None:
    store = Store(redis_url)
    subscriber = store.subscriber()
    await subscriber.open()
    subscriber.subscribe(game_channel("G1"), "live")
    await asyncio.sleep(0.05)
    await store.redis.publish(game_channel("G1"), "classic, not heard")
    await store.redis.spublish(game_channel("G1"), "1|n|{}")
    await store.redis.publish("live", "+G1")
    received: list[tuple[str, str]] = []
    while len(received) < 2:
        received.extend(await asyncio.wait_for(subscriber.messages(), 3))
    assert received == [(game_channel("G1"), "1|n|{}"), ("live", "+G1")]
    subscriber.unsubscribe(game_channel("G1"))
    await asyncio.sleep(0.05)
    await store.redis.spublish(game_channel("G1"), "gone")
    await store.redis.publish("live", "-G1")
    assert await asyncio.wait_for(subscriber.messages(), 3) == [("live", "-G1")]
    subscriber.close()
    await store.close()


async def test_the_subscriber_delivers_messages_in_order_and_stops_on_unsubscribe(redis_url: str) -> None:
    store = Store(redis_url)
    subscriber = store.subscriber()
    await subscriber.open()
    subscriber.subscribe("a", "b")
    await asyncio.sleep(0.05)
    for n in range(50):
        await store.redis.publish("a" if n % 2 else "b", str(n))
    received: list[tuple[str, str]] = []
    while len(received) < 50:
        received.extend(await asyncio.wait_for(subscriber.messages(), 3))
    assert received == [("a" if n % 2 else "b", str(n)) for n in range(50)]
    subscriber.unsubscribe("a")
    await asyncio.sleep(0.05)
    await store.redis.publish("a", "gone")
    await store.redis.publish("b", "kept")
    assert await asyncio.wait_for(subscriber.messages(), 3) == [("b", "kept")]
    subscriber.close()
    await store.close()


async def test_the_pipeline_uses_the_database_the_url_names(redis_url: str) -> None:
    store = Store(redis_url + "?db=3")
    await make_game(store)  # through redis-py, in database 3
    assert (await act(store, "pa", 1, 1, "7H:2-5")).result == "ok"  # through the pipeline
    other = Store(redis_url)  # database 0 holds nothing of it
    assert await other.game("g1") is None
    racer = await store.racer("g1", "pa")
    assert racer is not None and racer.moves == ["7H:2-5"]
    await store.close()
    await other.close()


async def test_the_hub_resubscribes_after_losing_its_pub_sub_connection(redis_url: str) -> None:
    from server.runtime.hub import Hub

    store = Store(redis_url)
    errors: list[int] = []
    hub = Hub(store, on_error=lambda: errors.append(1))
    await hub.start()
    got: list[tuple[str, str]] = []
    await hub.subscribe("a", lambda channel, data: got.append((channel, data)))
    await asyncio.sleep(0.05)
    await store.redis.publish("a", "before")
    await store.redis.execute_command("CLIENT", "KILL", "TYPE", "pubsub")
    deadline = asyncio.get_running_loop().time() + 5
    while await store.redis.publish("a", "after") == 0:  # nobody subscribed yet
        assert asyncio.get_running_loop().time() < deadline, "the hub never resubscribed"
        await asyncio.sleep(0.1)
    while ("a", "after") not in got:
        assert asyncio.get_running_loop().time() < deadline, "nothing arrived after the reconnection"
        await asyncio.sleep(0.05)
    assert got[0] == ("a", "before") and errors == [1]
    await hub.stop()
    await store.close()


async def test_presence_is_counted_per_process_and_a_dead_ones_share_can_be_dropped(redis_url: str) -> None:
    one, two = Store(redis_url, instance="a#1"), Store(redis_url, instance="b#1")
    assert await one.presence("pa", 1) == 1
    assert await one.presence("pa", 1) == 2
    assert await two.presence("pa", 1) == 3
    assert await two.presence("pa", -1) == 2  # b's count reaches 0 and is removed
    assert await one.forget_node_presence("pa", "b#1") == 2  # nothing of b is left
    assert await two.forget_node_presence("pa", "a#1") == 0  # a died with two connections
    await one.restate_presence({"pa": 1})  # a was only stalled: it says what it holds
    assert await two.presence("pa", 0) == 1
    assert await one.heartbeat(1_000, 500) == []
    assert await two.heartbeat(1_200, 500) == []
    assert await two.heartbeat(1_600, 500) == ["a#1"]  # silent since 1,000
    await one.close()
    await two.close()


async def test_each_channel_name_and_payload_reads_back_what_it_was_made_from() -> None:
    from server import store as keys

    assert keys.game_of_channel(keys.game_channel("G7K2-M9_Q")) == "G7K2-M9_Q"
    assert keys.player_of_channel(keys.player_channel("p7Qx2")) == "p7Qx2"
    board = keys.board_channel("2026-12-03", "scorpion-ii")
    assert keys.board_of_channel(board) == ("2026-12-03", "scorpion-ii")
    event = '{"type": "move", "note": "a|b"}'
    assert keys.game_event(f"12|node-1|{event}") == (12, "node-1", event)
    assert keys.live_change("+G1") == (True, "G1") and keys.live_change("-G1") == (False, "G1")


async def test_reply_helpers_pass_what_a_command_must_answer_and_name_anything_else() -> None:
    from server.store.replies import (
        UnexpectedReply,
        as_int,
        as_int_or_none,
        as_text,
        as_text_or_none,
        text_list,
        text_map,
        text_or_none_list,
        text_set,
    )

    listed, mapped, members = ["a", "b"], {"f": "v"}, {"x"}
    assert as_text("a") == "a" and as_text_or_none(None) is None and as_text_or_none("") == ""
    assert text_list(listed) is listed and text_map(mapped) is mapped and text_set(members) is members
    assert text_or_none_list(["a", None]) == ["a", None]
    assert as_int(0) == 0 and as_int_or_none(None) is None and as_int_or_none(3) == 3
    refused: list[tuple[Any, Any, str]] = [
        (as_text, None, "expected text from Redis, got NoneType None"),
        (as_text_or_none, b"a", "expected text or nil from Redis, got bytes b'a'"),
        (text_list, "ab", "expected a list of text from Redis, got str 'ab'"),
        (text_list, ["a", None], "expected text at index 1 of a list from Redis, got NoneType None"),
        (text_or_none_list, [b"a"], "expected text or nil at index 0 of a list from Redis, got bytes b'a'"),
        (text_set, ["a"], "expected a set of text from Redis, got list ['a']"),
        (text_map, {"f": 1}, "expected text as the value of field 'f' from Redis, got int 1"),
        (as_int, "3", "expected an integer from Redis, got str '3'"),
        (as_int, True, "expected an integer from Redis, got bool True"),
        (as_int_or_none, [1, 2.0], "expected an integer from Redis, got list [1, 2.0]"),
    ]
    for helper, reply, message in refused:
        with pytest.raises(UnexpectedReply) as caught:
            helper(reply)
        assert str(caught.value) == message
    with pytest.raises(TypeError, match=r"got str '(x){56}\.\.\.$"):
        as_int("x" * 100)  # a long reply is shown cut short


async def test_reads_come_back_as_text_and_numbers(redis_url: str) -> None:
    store = Store(redis_url)
    await make_game(store)
    assert await store.game_state("g1") == "racing" and await store.game_state("nope") is None
    game = await store.game("g1")
    assert game is not None and game.meta["variant"] == "scorpion" and game.racers[0].moves == []
    assert await store.events("g1", 0) == [(1, json.dumps({"type": "race_started"}))]
    assert await store.live_games() == ["g1"]
    assert await store.daily_secret() == await store.daily_secret() != ""
    await store.submit_score("2026-01-02", "scorpion", "pa", 1.5, "entry-a", 60_000)
    assert await store.board_page("2026-01-02", "scorpion", 0, 10) == (1, [("pa", "entry-a")])
    assert await store.board_rank("2026-01-02", "scorpion", "pa") == 0
    assert await store.board_rank("2026-01-02", "scorpion", "pb") is None
    assert await store.rating_rank("scorpion", "pa") is None
    await store.close()
