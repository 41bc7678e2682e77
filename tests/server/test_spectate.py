"""Spectating live games across nodes: snapshots, streams, delay, crowds, replays."""

from __future__ import annotations

import asyncio
import random
import time
from typing import Any

import pytest
from websockets.asyncio.client import connect

from protocol.game import Board, move_json, player_view
from protocol.wire.codec import MSGPACK, decode_dict, encode
from protocol.wire.message import Hello, Watch
from server.session import BROADCAST_BUFFER, Resync

from .conftest import Client, NodeFactory, start_race
from .test_race import audit, card_texts

pytestmark = pytest.mark.asyncio

DEAL = 31415926535


async def play(
    client: Client, board: Board, start: dict[str, Any], version: int, count: int, rng: random.Random
) -> int:
    for _ in range(count):
        moves = [m for m in board.legal_moves()]
        if not moves:
            break
        move = rng.choice(moves)
        board.push(move)
        if board.status().value != "in_play":
            board.pop()
            continue
        answer = await client.request(
            {"type": "move", "game": start["game"], "v": version, "move": move_json(move)}
        )
        assert answer["type"] == "accepted", answer
        version = answer["v"]
    return version


async def test_a_spectator_on_another_node_sees_a_consistent_snapshot_then_every_move(
    start_node: NodeFactory, open_client: Any
) -> None:
    first = start_node(test_deals=DEAL, spectator_tick=0.2)
    second = start_node(spectator_tick=0.2)
    ann: Client = await open_client(first, "Ann")
    bob: Client = await open_client(first, "Bob")
    room, start, bob_start = await start_race(ann, bob)
    rng = random.Random(3)
    boards = {ann.player: Board.new("scorpion", DEAL), bob.player: Board.new("scorpion", DEAL)}
    version = await play(ann, boards[ann.player], start, start["v"], 5, rng)
    eve: Client = await open_client(second, "Eve")
    snapshot = await eve.request({"type": "watch", "room": room["room"]})
    assert snapshot["type"] == "spectate"
    views = {r["player"]: r["view"] for r in snapshot["racers"]}
    assert views[ann.player] == player_view(boards[ann.player]).as_dict()
    assert views[bob.player] == player_view(boards[bob.player]).as_dict()
    await play(ann, boards[ann.player], start, version, 5, rng)
    await play(bob, boards[bob.player], bob_start, bob_start["v"], 5, rng)
    # Replaying the stream over the snapshot gives exactly the racers' boards.
    latest = dict(views)
    seen = snapshot["v"]
    deadline = time.monotonic() + 10
    while latest != {p: player_view(b).as_dict() for p, b in boards.items()}:
        assert time.monotonic() < deadline, "the spectator stream never caught up"
        event = await eve.expect("spectate_event")
        assert event["v"] == seen + 1, "a spectator event was missed or doubled"
        seen = event["v"]
        latest[event["player"]] = event["view"]
    # The count goes out once a tick when it changes, so it may have arrived while the
    # loop above (or a move's answer) was awaited: look through everything received.
    count = await eve.seen("spectators", timeout=10)
    assert count["count"] == 1
    racer_count = await ann.seen("spectators", timeout=10)
    assert racer_count["count"] == 1


async def test_a_crowd_written_in_small_batches_gets_every_event_in_order(
    local_node: Any, open_client: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    import server.game.feed

    monkeypatch.setattr(server.game.feed, "FAN_OUT_BATCH", 2)  # yield to the loop after every 2 sockets
    node = await local_node(test_deals=str(DEAL))
    ann: Client = await open_client(node, "Ann")
    bob: Client = await open_client(node, "Bob")
    room, start, bob_start = await start_race(ann, bob)
    crowd: list[Client] = [await open_client(node, f"Fan{i}") for i in range(9)]
    snapshots = [await fan.request({"type": "watch", "room": room["room"]}) for fan in crowd]
    boards = [Board.new("scorpion", DEAL), Board.new("scorpion", DEAL)]
    # Both racers move at once, so events of both arrive while earlier ones are still
    # being written to the crowd.
    last = await asyncio.gather(
        play(ann, boards[0], start, start["v"], 12, random.Random(5)),
        play(bob, boards[1], bob_start, bob_start["v"], 12, random.Random(6)),
    )
    await ann.request({"type": "resign", "game": start["game"], "v": last[0]})
    await bob.request({"type": "resign", "game": start["game"], "v": max(last)})
    for fan, snapshot in zip(crowd, snapshots, strict=True):
        seen = snapshot["v"]
        while True:
            message = await asyncio.wait_for(fan.inbox.get(), 10)
            if message["type"] not in ("spectate_event", "race_ended"):
                continue
            if message["type"] == "race_ended":
                break
            assert message["v"] == seen + 1, "a spectator event was missed, doubled or reordered"
            seen = message["v"]
        assert seen == message["v"] - 1, "the result overtook a move"


async def test_spectator_frames_never_show_a_face_down_card_or_the_deal_number(
    start_node: NodeFactory, open_client: Any
) -> None:
    node = start_node(test_deals=DEAL)
    ann: Client = await open_client(node, "Ann")
    bob: Client = await open_client(node, "Bob")
    eve: Client = await open_client(node, "Eve")
    room, start, bob_start = await start_race(ann, bob)
    await eve.request({"type": "watch", "room": room["room"]})
    rng = random.Random(11)
    boards = {"ann": Board.new("scorpion", DEAL), "bob": Board.new("scorpion", DEAL)}
    versions = {"ann": start["v"], "bob": bob_start["v"]}
    for _ in range(4):
        versions["ann"] = await play(ann, boards["ann"], start, versions["ann"], 5, rng)
        versions["bob"] = await play(bob, boards["bob"], bob_start, versions["bob"], 5, rng)
    await asyncio.sleep(0.3)
    # A card face down on *both* boards must never reach a spectator.
    both_hidden = {
        c for c in range(52) if not boards["ann"].is_face_up(c) and not boards["bob"].is_face_up(c)
    }
    from protocol.game import card_text

    hidden_text = {card_text(c) for c in both_hidden}
    for frame in eve.frames:
        data = decode_dict(frame, eve.fmt, limit=1 << 22)
        assert not (card_texts(data) & hidden_text), data["type"]
        assert str(DEAL) not in str(data)
    audit(ann, boards["ann"], 0, DEAL)


async def test_a_stalled_spectator_does_not_delay_the_racers(
    start_node: NodeFactory, open_client: Any
) -> None:
    node = start_node(test_deals=DEAL, send_queue=16)
    ann: Client = await open_client(node, "Ann")
    bob: Client = await open_client(node, "Bob")
    room, start, _ = await start_race(ann, bob)
    stalled = await connect(node.url, subprotocols=[MSGPACK], max_queue=1, max_size=1 << 22)  # type: ignore[list-item]
    await stalled.send(encode(Hello(name="Stalled"), MSGPACK))
    await stalled.recv()
    await stalled.send(encode(Watch(room=room["room"]), MSGPACK))
    stalled.transport.pause_reading()  # never reads again
    board = Board.new("scorpion", DEAL)
    rng = random.Random(5)
    latencies = []
    version = start["v"]
    for _ in range(60):
        moves = board.legal_moves()
        move = rng.choice(moves)
        if move.is_deal or not board.is_legal(move):
            continue
        board.push(move)
        if board.status().value != "in_play":
            board.pop()
            continue
        began = time.perf_counter()
        answer = await ann.request(
            {"type": "move", "game": start["game"], "v": version, "move": move_json(move)}
        )
        latencies.append(time.perf_counter() - began)
        if answer["type"] != "accepted":
            board.pop()
            undo = await ann.request({"type": "undo", "game": start["game"], "v": version})
            assert undo["type"] in ("accepted", "error")
            break
        version = answer["v"]
    assert latencies and max(latencies) < 2.0, "a racer waited on a stalled spectator"
    health = await asyncio.to_thread(_get, f"http://127.0.0.1:{node.port}/metrics")
    assert "scorpion_connections 3.0" in health and "scorpion_spectators 1.0" in health
    stalled.transport.abort()


async def test_a_slow_reader_is_resynced_instead_of_buffering_without_bound(
    local_node: Any, open_client: Any
) -> None:
    node = await local_node(test_deals=str(DEAL), send_queue=8)
    ann: Client = await open_client(node, "Ann")
    bob: Client = await open_client(node, "Bob")
    room, start, _ = await start_race(ann, bob)
    eve: Client = await open_client(node, "Eve")
    await eve.request({"type": "watch", "room": room["room"]})
    server = node.server
    assert server.node is not None
    session = next(s for s in server.node.sessions if s.player == eve.player)
    eve.ws.transport.pause_reading()  # the spectator stops reading
    event = {"type": "move", "player": ann.player, "view": start["view"], "summary": {}, "status": "playing"}
    version = session.watching[start["game"]]
    # Frames go straight to the socket while it takes them; once its buffers are full
    # they queue, and the queue turns into a resync instead of growing.
    transport = session.ws.transport
    step = 0
    while not any(isinstance(item, Resync) for item in session.out):
        step += 1
        assert step < 200_000, "the stalled spectator was never resynced"
        session.deliver(start["game"], version + step, event, spectator=True)
        assert len(session.out) <= 8 + 4, "the send queue grew past its bound"
        assert transport.get_write_buffer_size() < BROADCAST_BUFFER + 16 * 1024
    assert "scorpion_resyncs_total" in server.metrics.render().decode()


def _get(url: str) -> str:
    import urllib.request

    with urllib.request.urlopen(url, timeout=5) as response:
        return response.read().decode()


async def test_a_delayed_stream_shows_moves_only_after_the_delay(
    start_node: NodeFactory, open_client: Any
) -> None:
    node = start_node(test_deals=DEAL)
    ann: Client = await open_client(node, "Ann")
    bob: Client = await open_client(node, "Bob")
    eve: Client = await open_client(node, "Eve")
    room, start, _ = await start_race(ann, bob, {"undo": True, "spectator_delay": 2})
    snapshot = await eve.request({"type": "watch", "room": room["room"]})
    board = Board.new("scorpion", DEAL)
    await play(ann, board, start, start["v"], 1, random.Random(1))
    moved_at = time.monotonic()
    event = await eve.expect("spectate_event", timeout=6)
    assert time.monotonic() - moved_at >= 1.8
    assert event["v"] == snapshot["v"] + 1


async def test_a_finished_race_replays_move_by_move_from_its_log(
    start_node: NodeFactory, open_client: Any
) -> None:
    node = start_node(test_deals=DEAL)
    ann: Client = await open_client(node, "Ann")
    bob: Client = await open_client(node, "Bob")
    _room, start, _bob_start = await start_race(ann, bob)
    board = Board.new("scorpion", DEAL)
    version = await play(ann, board, start, start["v"], 6, random.Random(2))
    early = await bob.request({"type": "replay", "game": start["game"]})
    assert early["code"] == "not_allowed"
    await ann.request({"type": "resign", "game": start["game"], "v": version})
    progress = await bob.expect("progress", status="resigned")
    await bob.request({"type": "resign", "game": start["game"], "v": progress["v"]})
    await ann.expect("race_ended")
    replay = await ann.request({"type": "replay", "game": start["game"]})
    assert replay["type"] == "replay_log" and int(replay["number"]) == DEAL
    logs = {log["player"]: log for log in replay["logs"]}
    rebuilt = Board.new("scorpion", int(replay["number"]))
    from protocol.game import move_from_json

    rebuilt.replay(move_from_json(m) for m in logs[ann.player]["moves"])
    assert rebuilt.key() == board.key()
    assert logs[ann.player]["times"] == sorted(logs[ann.player]["times"])


async def test_the_live_list_pushes_games_as_they_start_and_end(
    start_node: NodeFactory, open_client: Any
) -> None:
    node = start_node(test_deals=DEAL)
    eve: Client = await open_client(node, "Eve")
    listed = await eve.request({"type": "games_list", "subscribe": True})
    assert listed["games"] == []
    ann: Client = await open_client(node, "Ann")
    bob: Client = await open_client(node, "Bob")
    _, start, _bob_start = await start_race(ann, bob)
    added = await eve.expect("games_update", timeout=5)
    assert [g["game"] for g in added["added"]] == [start["game"]]
    await ann.request({"type": "resign", "game": start["game"], "v": start["v"]})
    progress = await bob.expect("progress", status="resigned")
    await bob.request({"type": "resign", "game": start["game"], "v": progress["v"]})
    removed = await eve.expect("games_update", timeout=5)
    assert removed["removed"] == [start["game"]]


async def test_the_live_list_drops_games_that_are_gone_or_over(
    start_node: NodeFactory, open_client: Any, redis_url: str
) -> None:
    # A node may die between ending a race and taking it off the live list (two steps,
    # as the list and the game live in different cluster slots): the next listing does it.
    import redis.asyncio as aioredis

    node = start_node(test_deals=DEAL)
    ann: Client = await open_client(node, "Ann")
    bob: Client = await open_client(node, "Bob")
    _, start, _bob_start = await start_race(ann, bob)
    await ann.request({"type": "resign", "game": start["game"], "v": start["v"]})
    progress = await bob.expect("progress", status="resigned")
    await bob.request({"type": "resign", "game": start["game"], "v": progress["v"]})
    await ann.expect("race_ended")
    client = aioredis.Redis.from_url(redis_url, decode_responses=True)
    try:
        await client.zadd("live", {start["game"]: 1, "gGoneLongAgo": 2})  # left behind
        eve: Client = await open_client(node, "Eve")
        listed = await eve.request({"type": "games_list"})
        assert listed["games"] == []
        assert await client.zrange("live", 0, -1) == []
    finally:
        await client.aclose()


async def test_a_racer_cannot_watch_their_own_race_and_hosts_can_forbid_spectators(
    start_node: NodeFactory, open_client: Any
) -> None:
    node = start_node(test_deals=DEAL)
    ann: Client = await open_client(node, "Ann")
    bob: Client = await open_client(node, "Bob")
    room, start, _ = await start_race(ann, bob, {"spectators": False})
    eve: Client = await open_client(node, "Eve")
    refused = await eve.request({"type": "watch", "room": room["room"]})
    assert refused["code"] == "spectating_forbidden"
    own = await ann.request({"type": "watch", "game": start["game"]})
    assert own["type"] == "error" and own["code"] in ("spectating_forbidden", "not_allowed")


async def test_watching_a_race_that_is_over_says_so_and_names_the_game_to_replay(
    start_node: NodeFactory, open_client: Any
) -> None:
    node = start_node(test_deals=DEAL)
    ann: Client = await open_client(node, "Ann")
    bob: Client = await open_client(node, "Bob")
    room, start, bob_start = await start_race(ann, bob)
    for racer, started in ((ann, start), (bob, bob_start)):
        resigned = await racer.request({"type": "resign", "game": start["game"], "v": started["v"]})
        assert resigned["type"] != "error", resigned
    eve: Client = await open_client(node, "Eve")
    for target in ({"room": room["room"]}, {"game": start["game"]}):
        refused = await eve.request({"type": "watch", **target})
        assert refused["code"] == "no_such_game", refused
        assert refused["message"] == f"that game is over: replay it instead (game {start['game']})"
    replay = await eve.request({"type": "replay", "game": start["game"]})
    assert replay["type"] == "replay_log", replay
    unknown = await eve.request({"type": "watch", "game": "nosuchgame1"})
    assert unknown["code"] == "no_such_game" and unknown["message"] == "no game with that id is running"


async def test_a_spectator_back_after_a_drop_gets_exactly_the_events_it_missed(
    start_node: NodeFactory, open_client: Any
) -> None:
    first = start_node(test_deals=DEAL)
    second = start_node()
    ann: Client = await open_client(first, "Ann")
    bob: Client = await open_client(first, "Bob")
    room, start, bob_start = await start_race(ann, bob)
    eve: Client = await open_client(second, "Eve")
    snapshot = await eve.request({"type": "watch", "room": room["room"]})
    boards = {ann.player: Board.new("scorpion", DEAL), bob.player: Board.new("scorpion", DEAL)}
    rng = random.Random(8)
    version = await play(ann, boards[ann.player], start, start["v"], 3, rng)
    seen = snapshot["v"]
    while seen < version:
        seen = (await eve.expect("spectate_event"))["v"]
    await eve.ws.close()  # the spectator drops; the race goes on
    version = await play(ann, boards[ann.player], start, version, 4, rng)
    await play(bob, boards[bob.player], bob_start, bob_start["v"], 3, rng)
    back: Client = await open_client(first, "Eve again")
    batch = await back.request({"type": "watch", "game": start["game"], "v": seen})
    assert batch["type"] == "spectate_batch", batch
    versions = [event["v"] for event in batch["events"]]
    assert versions == list(range(seen + 1, batch["v"] + 1)) and len(versions) == 7
    assert all(event["type"] == "spectate_event" for event in batch["events"])
    latest = {racer["player"]: racer["view"] for racer in snapshot["racers"]}
    for event in batch["events"]:
        latest[event["player"]] = event["view"]
    assert latest == {player: player_view(board).as_dict() for player, board in boards.items()}
    # The stream goes on from there.
    await play(ann, boards[ann.player], start, version, 1, rng)
    assert (await back.expect("spectate_event"))["v"] == batch["v"] + 1
    # A version ahead of the game gets a snapshot; a room code cannot resume.
    other: Client = await open_client(first, "Fay")
    ahead = await other.request({"type": "watch", "game": start["game"], "v": 10_000})
    assert ahead["type"] == "spectate"
    third: Client = await open_client(first, "Gus")
    refused = await third.request_unchecked({"type": "watch", "room": room["room"], "v": 3})
    assert refused["type"] == "error" and refused["field"] == "v"


async def race_on_two_nodes(start_node: NodeFactory, open_client: Any, **settings: Any) -> tuple[Any, ...]:
    """Start two nodes with ``settings`` and a race of Ann and Bob on the first; return the
    nodes, the racers, the room and Ann's ``race_started``."""
    first = start_node(test_deals=DEAL, **settings)
    second = start_node(**settings)
    ann: Client = await open_client(first, "Ann")
    bob: Client = await open_client(first, "Bob")
    room, start, _ = await start_race(ann, bob)
    return first, second, ann, bob, room, start


async def test_racers_hear_of_a_move_before_spectators_do(start_node: NodeFactory, open_client: Any) -> None:
    first, second, ann, bob, room, start = await race_on_two_nodes(start_node, open_client, spectator_lag=0.4)
    near: Client = await open_client(first, "Near")
    far: Client = await open_client(second, "Far")
    await near.request({"type": "watch", "room": room["room"]})
    await far.request({"type": "watch", "room": room["room"]})
    await asyncio.sleep(0.5)  # let the second node follow the game
    sent = time.monotonic()
    version = await play(ann, Board.new("scorpion", DEAL), start, start["v"], 1, random.Random(2))
    acked = time.monotonic()
    await bob.expect("progress", v=version)
    progressed = time.monotonic()
    for spectator in (near, far):
        event = await spectator.expect("spectate_event", v=version)
        assert event["player"] == ann.player
        assert time.monotonic() - sent >= 0.35, "a spectator got the move before the lag"
    assert acked - sent < 0.35 and progressed - sent < 0.35, "a racer waited for the spectators"


async def test_spectators_who_leave_a_node_are_taken_off_the_count_and_a_rewatch_counts_right(
    start_node: NodeFactory, open_client: Any
) -> None:
    _, second, ann, _, room, start = await race_on_two_nodes(start_node, open_client, spectator_tick=0.2)
    fans: list[Client] = [await open_client(second, name) for name in ("Eve", "Fay")]
    watched = [await fan.request({"type": "watch", "room": room["room"]}) for fan in fans]
    assert [w["type"] for w in watched] == ["spectate", "spectate"]
    assert (await ann.seen("spectators", timeout=10, count=2))["count"] == 2
    eve = fans[0]
    for fan in fans:
        assert (await fan.request({"type": "unwatch", "game": start["game"]}))["type"] == "ok"
    # The second node follows the game no more; its spectators still leave the total.
    assert (await ann.seen("spectators", timeout=10, count=0))["count"] == 0
    again = await eve.request({"type": "watch", "room": room["room"]})
    assert again["type"] == "spectate" and again["spectators"] == 1


async def test_a_move_is_published_only_while_another_node_follows_its_game(
    start_node: NodeFactory, open_client: Any, redis_url: str
) -> None:
    import redis.asyncio as aioredis

    from server.store import game_channel

    first = start_node(test_deals=DEAL)
    ann: Client = await open_client(first, "Ann")
    bob: Client = await open_client(first, "Bob")
    _room, start, _ = await start_race(ann, bob, {"undo": True, "spectators": True})
    game = start["game"]
    listener = aioredis.Redis.from_url(redis_url, decode_responses=True)
    pubsub = listener.pubsub()
    await pubsub.ssubscribe(game_channel(game))  # a shard channel
    await pubsub.get_message(timeout=1)  # the subscription's confirmation
    board = Board.new("scorpion", DEAL)
    moves = [m for m in board.legal_moves() if not m.is_deal][:1]
    v = start["v"]
    answer = await ann.request({"type": "move", "game": game, "v": v, "move": move_json(moves[0])})
    assert answer["type"] == "accepted"
    # Only this node follows the game: it has delivered the move itself, nobody else needs it.
    assert await pubsub.get_message(timeout=0.5) is None
    second = start_node()
    watcher: Client = await open_client(second, "Cy")
    assert (await watcher.request({"type": "watch", "game": game}))["type"] == "spectate"
    board.push(moves[0])
    move = next(m for m in board.legal_moves() if not m.is_deal)
    answer = await ann.request({"type": "move", "game": game, "v": answer["v"], "move": move_json(move)})
    assert answer["type"] == "accepted"
    published = await pubsub.get_message(timeout=2)
    assert published is not None and published["data"].startswith(f"{answer['v']}|")
    seen = await watcher.expect("spectate_event", v=answer["v"])
    assert seen["player"] == ann.player
    await pubsub.aclose()
    await listener.aclose()
