"""Bots race each other to the end on a real server."""

from __future__ import annotations

import asyncio

from client.bot import Bot, choose_move
from client.model import position_key
from protocol.game import Board
from protocol.wire.message import Error

from .conftest import ClientFactory, NodeFactory


async def test_two_bots_race_to_the_end_without_a_single_error_frame(
    start_node: NodeFactory, make_client: ClientFactory
) -> None:
    node = start_node(test_deals=1234567890123, message_credits=2000)
    ann = await make_client(node, "AnnBot")
    bob = await make_client(node, "BobBot")
    first, second = Bot(ann, delay=0), Bot(bob, delay=0)
    code = await first.create_room()
    await second.join_room(code)
    await first.start_when_full(2, timeout=10)
    results = await asyncio.wait_for(asyncio.gather(first.play(), second.play()), 120)
    for client, result in zip((ann, bob), results, strict=True):
        assert result.errors == []
        assert result.ended is not None, "the race ran to its end"
        assert result.status in ("finished", "stuck", "resigned")
        assert result.moves > 0
        errors = [e for e in _received(client) if isinstance(e, Error)]
        assert errors == []
    assert {s.player for s in results[0].ended.standings} == {ann.player, bob.player}  # type: ignore[union-attr]


def _received(client: object) -> list[object]:
    return list(client._events)  # type: ignore[attr-defined]


def test_the_bot_never_plays_back_into_a_position_it_has_seen() -> None:
    board = Board.new("scorpion", 1234567890123)
    seen = {position_key(board)}
    for _ in range(200):
        move = choose_move(board, seen, idle=0)
        if move is None:
            break
        board.push(move)
        key = position_key(board)
        assert key not in seen or move.is_deal
        seen.add(key)
    assert len(seen) > 5
