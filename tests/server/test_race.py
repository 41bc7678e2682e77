"""Races between real server processes and scripted clients."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from protocol.codec import JSON, MSGPACK
from protocol.game import Board, card_text, move_json

from .conftest import Client, NodeFactory

pytestmark = pytest.mark.asyncio

DEAL = 1234567890123


async def friend_race(
    start_node: NodeFactory,
    open_client: Any,
    *,
    options: dict[str, Any] | None = None,
    nodes: int = 1,
    deal: int = DEAL,
) -> tuple[Client, Client, dict[str, Any], dict[str, Any]]:
    first = start_node(test_deals=deal)
    second = start_node() if nodes == 2 else first
    ann: Client = await open_client(first, "Ann")
    bob: Client = await open_client(second, "Bob", fmt=JSON)
    room = await ann.request(
        {"type": "room_create", "variant": "scorpion", "options": options or {"undo": True, "hints": True}}
    )
    assert room["type"] == "room", room
    joined = await bob.request({"type": "room_join", "room": room["room"]})
    assert joined["type"] == "room" and len(joined["players"]) == 2
    assert (await bob.request({"type": "ready", "ready": True}))["type"] == "room"
    await ann.send({"type": "room_start"})
    countdown = await bob.expect("countdown")
    assert countdown["room"] == room["room"]
    ann_start = await ann.expect("race_started")
    bob_start = await bob.expect("race_started")
    return ann, bob, ann_start, bob_start


async def test_both_racers_get_the_same_deal_and_their_own_view(
    start_node: NodeFactory, open_client: Any
) -> None:
    _ann, _bob, ann_start, bob_start = await friend_race(start_node, open_client)
    assert ann_start["game"] == bob_start["game"]
    assert ann_start["view"] == bob_start["view"]
    assert ann_start["commitment"] == bob_start["commitment"]
    expected = Board.new("scorpion", DEAL)
    from protocol.game import player_view

    assert ann_start["view"] == player_view(expected).as_dict()


async def test_a_legal_move_is_accepted_and_the_rival_sees_progress_only(
    start_node: NodeFactory, open_client: Any
) -> None:
    ann, bob, start, _ = await friend_race(start_node, open_client)
    board = Board.new("scorpion", DEAL)
    move = next(m for m in board.legal_moves() if not m.is_deal)
    answer = await ann.request(
        {"type": "move", "game": start["game"], "v": start["v"], "move": move_json(move)}
    )
    assert answer["type"] == "accepted", answer
    board.push(move)
    from protocol.game import player_view

    assert answer["view"] == player_view(board).as_dict()
    progress = await bob.expect("progress", player=ann.player)  # type: ignore[attr-defined]
    assert progress["v"] == answer["v"]
    assert "view" not in progress
    assert progress["summary"]["moves"] == 1


async def test_bad_requests_get_their_error_codes(start_node: NodeFactory, open_client: Any) -> None:
    ann, _bob, start, _ = await friend_race(start_node, open_client)
    game = start["game"]
    board = Board.new("scorpion", DEAL)
    hidden = card_text(board.columns[0][0])  # face down in column 1
    elsewhere = card_text(board.columns[6][-1])  # face up in column 7
    answers = []
    for card in (hidden, elsewhere):
        move = {"card": card, "from": 1, "to": 2}
        illegal = await ann.request({"type": "move", "game": game, "v": start["v"], "move": move})
        assert illegal["type"] == "error" and illegal["code"] == "illegal_move"
        answers.append(illegal["message"].replace(card, "<card>"))
    assert answers[0] == answers[1], "a face-down card must be refused exactly like an absent one"
    move = next(m for m in board.legal_moves() if not m.is_deal)
    ok = await ann.request({"type": "move", "game": game, "v": start["v"], "move": move_json(move)})
    assert ok["type"] == "accepted"
    board.push(move)
    again = next(m for m in board.legal_moves())
    stale = await ann.request({"type": "move", "game": game, "v": start["v"], "move": move_json(again)})
    assert stale["type"] == "error" and stale["code"] == "stale_version"
    unknown = await ann.request({"type": "move", "game": "gnothere", "v": 1, "move": move_json(again)})
    assert unknown["code"] in ("no_such_game",)
    bad = await ann.request_unchecked({"type": "move", "game": game, "v": 1})
    assert bad["code"] == "bad_field"


async def test_a_move_before_hello_and_garbage_frames_are_refused_but_the_connection_goes_on(
    start_node: NodeFactory, open_client: Any
) -> None:
    node = start_node()
    from websockets.asyncio.client import connect

    from protocol.codec import decode_dict, encode
    from protocol.message import Ping

    async with connect(node.url, subprotocols=[MSGPACK]) as ws:  # type: ignore[list-item]
        await ws.send(b"\xc1\xff garbage")
        error = decode_dict(await ws.recv(), MSGPACK)
        assert error["code"] == "bad_frame"
        await ws.send(encode(Ping(ref=1), MSGPACK))
        pong = decode_dict(await ws.recv(), MSGPACK)
        assert pong["type"] == "pong"
        await ws.send(b"\x00" * 9000)
        big = decode_dict(await ws.recv(), MSGPACK)
        assert big["code"] == "too_large"
        await ws.send("text frame on a binary subprotocol")
        wrong = decode_dict(await ws.recv(), MSGPACK)
        assert wrong["code"] == "bad_frame"


async def test_two_racers_on_two_nodes_see_each_others_progress(
    start_node: NodeFactory, open_client: Any
) -> None:
    ann, bob, start, bob_start = await friend_race(start_node, open_client, nodes=2)
    board = Board.new("scorpion", DEAL)
    move = next(m for m in board.legal_moves() if not m.is_deal)
    answer = await bob.request(
        {"type": "move", "game": start["game"], "v": bob_start["v"], "move": move_json(move)}
    )
    assert answer["type"] == "accepted"
    seen = await ann.expect("progress", player=bob.player)  # type: ignore[attr-defined]
    assert seen["summary"]["moves"] == 1


async def test_a_resign_by_both_ends_the_race_and_reveals_the_deal(
    start_node: NodeFactory, open_client: Any
) -> None:
    ann, bob, start, _ = await friend_race(start_node, open_client)
    game = start["game"]
    assert (await ann.request({"type": "resign", "game": game, "v": start["v"]}))["status"] == "resigned"
    progress = await bob.expect("progress", player=ann.player)  # type: ignore[attr-defined]
    after = await bob.request({"type": "resign", "game": game, "v": progress["v"]})
    assert after["type"] == "accepted" and after["status"] == "resigned"
    ended = await ann.expect("race_ended")
    assert int(ended["number"]) == DEAL
    import hashlib

    assert hashlib.sha256(f"{ended['number']}:{ended['salt']}".encode()).hexdigest() == start["commitment"]
    late = await ann.request({"type": "move", "game": game, "v": ended["v"], "move": {"deal": True}})
    assert late["type"] == "error"
    await asyncio.sleep(0)
