"""Solo play served by the authoritative engine: new game, undo, hint, replay, saved games."""

from __future__ import annotations

from typing import Any

import pytest

from protocol.game import Board, move_json, player_view

from .conftest import Client

pytestmark = pytest.mark.asyncio

DEAL = 424242424242


async def test_a_solo_game_plays_undoes_hints_and_replays_the_same_deal(
    local_node: Any, open_client: Any
) -> None:
    node = await local_node(test_deals=str(DEAL))
    ann: Client = await open_client(node, "Ann")
    start = await ann.request({"type": "solo_new", "variant": "scorpion"})
    assert start["type"] == "race_started" and start["mode"] == "solo"
    board = Board.new("scorpion", DEAL)
    assert start["view"] == player_view(board).as_dict()
    hints = await ann.request({"type": "hint", "game": start["game"], "v": start["v"]})
    assert hints["type"] == "hints" and hints["moves"]
    first = hints["moves"][0]
    moved = await ann.request({"type": "move", "game": start["game"], "v": start["v"], "move": first})
    assert moved["type"] == "accepted" and moved["summary"]["moves"] == 1
    undone = await ann.request({"type": "undo", "game": start["game"], "v": moved["v"]})
    assert undone["type"] == "accepted" and undone["view"] == start["view"]
    assert undone["summary"]["moves"] == 0
    replay = await ann.request({"type": "solo_replay", "game": start["game"]})
    assert replay["type"] == "race_started" and replay["game"] != start["game"]
    assert replay["view"] == start["view"]


async def test_a_saved_solo_game_resumes_on_another_device_with_the_token(
    local_node: Any, open_client: Any
) -> None:
    node = await local_node(test_deals=str(DEAL))
    phone: Client = await open_client(node, "Ann")
    start = await phone.request({"type": "solo_new"})
    board = Board.new("scorpion", DEAL)
    move = next(m for m in board.legal_moves() if not m.is_deal)
    moved = await phone.request(
        {"type": "move", "game": start["game"], "v": start["v"], "move": move_json(move)}
    )
    board.push(move)
    await phone.close()
    laptop: Client = await open_client(node, "Ann", token=phone.token)
    saved = await laptop.request({"type": "saved_games"})
    assert [g["game"] for g in saved["games"]] == [start["game"]]
    assert saved["games"][0]["summary"]["moves"] == 1
    snapshot = await laptop.request({"type": "solo_resume", "game": start["game"]})
    assert snapshot["type"] == "snapshot" and snapshot["mode"] == "solo"
    assert snapshot["view"] == player_view(board).as_dict() and snapshot["v"] == moved["v"]
    follow = next(m for m in board.legal_moves() if not m.is_deal)
    again = await laptop.request(
        {"type": "move", "game": start["game"], "v": snapshot["v"], "move": move_json(follow)}
    )
    assert again["type"] == "accepted"
    stranger: Client = await open_client(node, "Eve")
    refused = await stranger.request({"type": "solo_resume", "game": start["game"]})
    assert refused["code"] == "not_your_game"


async def test_a_solo_game_with_saving_off_is_not_listed(local_node: Any, open_client: Any) -> None:
    node = await local_node()
    ann: Client = await open_client(node, "Ann")
    start = await ann.request({"type": "solo_new", "save": False})
    assert start["type"] == "race_started"
    saved = await ann.request({"type": "saved_games"})
    assert saved["games"] == []


async def test_a_finished_solo_game_leaves_the_saved_list(local_node: Any, open_client: Any) -> None:
    node = await local_node()
    ann: Client = await open_client(node, "Ann")
    start = await ann.request({"type": "solo_new"})
    await ann.request({"type": "resign", "game": start["game"], "v": start["v"]})
    ended = await ann.expect("race_ended")
    assert "number" in ended and "salt" in ended
    assert (await ann.request({"type": "saved_games"}))["games"] == []
