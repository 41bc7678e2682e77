"""Saved solo games: left with their clock stopped, resumed, deleted; a game abandoned
before its first move is not counted as played (issue 50, browser point 5)."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from protocol.game import Board, move_json

from .conftest import Client

pytestmark = pytest.mark.asyncio

DEAL = 424242424242


def first_move(deal: int = DEAL) -> dict[str, Any]:
    board = Board.new("scorpion", deal)
    return move_json(next(m for m in board.legal_moves() if not m.is_deal))


async def stats(client: Client) -> dict[str, Any]:
    answer = await client.request({"type": "stats", "variant": "scorpion"})
    rows = answer["stats"]
    return rows[0] if rows else {"started": 0, "won": 0}


async def started_once_counted(client: Client) -> int:
    """Return the games counted as started once the count of a first move has landed (it
    is written after the move's answer, off the move's path)."""
    for _ in range(100):
        row = await stats(client)
        if row["started"]:
            return int(row["started"])
        await asyncio.sleep(0.05)
    return 0


async def test_a_saved_game_left_keeps_its_clock_stopped_until_it_is_resumed(
    local_node: Any, open_client: Any
) -> None:
    node = await local_node(test_deals=str(DEAL))
    ann: Client = await open_client(node, "Ann")
    start = await ann.request({"type": "solo_new"})
    game = start["game"]
    moved = await ann.request({"type": "move", "game": game, "v": start["v"], "move": first_move()})
    assert moved["type"] == "accepted"
    left = await ann.request({"type": "solo_leave", "game": game})
    assert left == {"type": "ok", "to": "solo_leave", "ref": left["ref"]}
    # the connection is free: no game of it is in the way of a room
    room = await ann.request({"type": "room_create", "variant": "scorpion"})
    assert room["type"] == "room", room
    await ann.request({"type": "room_leave"})
    listed = await ann.request({"type": "saved_games"})
    assert [g["game"] for g in listed["games"]] == [game]
    await asyncio.sleep(2.5)  # away: not on the game's clock
    resumed = await ann.request({"type": "solo_resume", "game": game})
    assert resumed["type"] == "snapshot" and resumed["summary"]["moves"] == 1
    await ann.request({"type": "resign", "game": game, "v": resumed["v"]})
    ended = await ann.expect("race_ended", game=game)
    assert ended["standings"][0]["elapsed"] <= 1, ended  # 2.5 s away, left out


async def test_leaving_is_for_saved_games_of_ones_own(local_node: Any, open_client: Any) -> None:
    node = await local_node(test_deals=str(DEAL))
    ann: Client = await open_client(node, "Ann")
    unsaved = await ann.request({"type": "solo_new", "save": False})
    refused = await ann.request({"type": "solo_leave", "game": unsaved["game"]})
    assert refused["code"] == "not_allowed" and "not saved" in refused["message"]
    bob: Client = await open_client(node, "Bob")
    await bob.request({"type": "solo_new"})
    stranger = await bob.request({"type": "solo_leave", "game": unsaved["game"]})
    assert stranger["code"] == "not_your_game"


async def test_a_saved_game_is_deleted_once_left_and_is_not_counted(
    local_node: Any, open_client: Any
) -> None:
    node = await local_node(test_deals=str(DEAL))
    ann: Client = await open_client(node, "Ann")
    start = await ann.request({"type": "solo_new"})
    game = start["game"]
    await ann.request({"type": "move", "game": game, "v": start["v"], "move": first_move()})
    playing = await ann.request({"type": "saved_delete", "game": game})
    assert playing["code"] == "not_allowed", playing  # in play here: leave it first
    await ann.request({"type": "solo_leave", "game": game})
    deleted = await ann.request({"type": "saved_delete", "game": game})
    assert deleted["type"] == "ok" and deleted["to"] == "saved_delete", deleted
    assert (await ann.request({"type": "saved_games"}))["games"] == []
    again = await ann.request({"type": "saved_delete", "game": game})
    assert again["code"] == "no_such_game"
    gone = await ann.request({"type": "solo_resume", "game": game})
    assert gone["code"] == "no_such_game"


async def test_a_solo_game_counts_as_played_from_its_first_move_only(
    local_node: Any, open_client: Any
) -> None:
    node = await local_node(test_deals=str(DEAL))
    ann: Client = await open_client(node, "Ann")
    assert (await stats(ann))["started"] == 0
    # New game, then New game again at once: the first was never played
    first = await ann.request({"type": "solo_new"})
    second = await ann.request({"type": "solo_new"})
    assert (await stats(ann))["started"] == 0
    # resigning a game with no move made counts nothing either
    await ann.request({"type": "resign", "game": second["game"], "v": second["v"]})
    await ann.expect("race_ended", game=second["game"])
    await ann.request({"type": "solo_resume", "game": first["game"]})
    moved = await ann.request({"type": "move", "game": first["game"], "v": first["v"], "move": first_move()})
    assert moved["type"] == "accepted", moved
    assert await started_once_counted(ann) == 1  # counted at its first move, once
    await ann.request({"type": "resign", "game": first["game"], "v": moved["v"]})
    await ann.expect("race_ended", game=first["game"])
    row = await stats(ann)
    assert row["started"] == 1, row
    profile = await ann.request({"type": "profile"})
    assert [g["game"] for g in profile["recent"]] == [first["game"]]  # the unplayed one is not listed
