"""Solo games on winnable deals only, and a "still winnable" answer that tells a deal that
never could be won from one a move lost (issue 50, browser point 6)."""

from __future__ import annotations

from typing import Any

from protocol.game import Board, move_from_text, move_json
from protocol.solver import Budget, Verdict, solve, solve_deal

from .conftest import Client

WINNABLE = 1_000_000_000_007
"""A deal the solver proves winnable at once."""
LOSING = ("TD:4-7", "6C:5-4", "KD:2-5")
"""Moves of WINNABLE after which it can no longer be won (the third loses it)."""
UNWINNABLE = 1234567890123
"""A deal the solver proves unwinnable."""


def test_the_deals_are_what_the_tests_say() -> None:
    assert solve_deal("scorpion", WINNABLE, budget=Budget(nodes=300_000)).verdict is Verdict.WINNABLE
    assert solve_deal("scorpion", UNWINNABLE, budget=Budget(nodes=300_000)).verdict is Verdict.UNWINNABLE
    board = Board.new("scorpion", WINNABLE)
    for text in LOSING:
        board.push(move_from_text(text))
    assert solve(board, Budget(nodes=300_000)).verdict is Verdict.UNWINNABLE


async def number_of(client: Client, start: dict[str, Any]) -> int:
    """Resign the solo game and return the deal number its end reveals."""
    await client.request({"type": "resign", "game": start["game"], "v": start["v"]})
    ended = await client.expect("race_ended", game=start["game"])
    return int(ended["number"])


async def test_a_solo_game_on_a_winnable_deal_gets_one_the_solver_proves(
    local_node: Any, open_client: Any
) -> None:
    # The test run's fixed deals are the candidates, in order: the unwinnable one is passed over.
    node = await local_node(test_deals=f"{UNWINNABLE},{UNWINNABLE},{WINNABLE}")
    ann: Client = await open_client(node, "Ann")
    start = await ann.request({"type": "solo_new", "winnable": True})
    assert start["type"] == "race_started" and start["mode"] == "solo", start
    assert await number_of(ann, start) == WINNABLE
    # without the option, the next deal comes as before (the first fixed deal)
    plain = await ann.request({"type": "solo_new"})
    assert await number_of(ann, plain) == UNWINNABLE


async def test_no_winnable_deal_found_is_said_and_starts_nothing(local_node: Any, open_client: Any) -> None:
    node = await local_node(test_deals=f"{UNWINNABLE}")
    ann: Client = await open_client(node, "Ann")
    refused = await ann.request({"type": "solo_new", "winnable": True})
    assert refused["type"] == "error" and refused["code"] == "unavailable", refused
    assert "proved none of the deals it tried winnable" in refused["message"]
    assert (await ann.request({"type": "saved_games"}))["games"] == []


async def test_still_winnable_tells_a_deal_that_never_could_from_one_a_move_lost(
    local_node: Any, open_client: Any
) -> None:
    node = await local_node(test_deals=f"{UNWINNABLE},{WINNABLE}")
    ann: Client = await open_client(node, "Ann")
    never = await ann.request({"type": "solo_new"})
    check = await ann.request({"type": "winnable", "game": never["game"], "v": never["v"]})
    assert (check["verdict"], check["deal"]) == ("unwinnable", "unwinnable"), check
    await number_of(ann, never)

    lost = await ann.request({"type": "solo_new"})
    check = await ann.request({"type": "winnable", "game": lost["game"], "v": lost["v"]})
    assert check["verdict"] == "winnable" and "deal" not in check, check
    version = lost["v"]
    for text in LOSING:
        move = move_json(move_from_text(text))
        answer = await ann.request({"type": "move", "game": lost["game"], "v": version, "move": move})
        assert answer["type"] == "accepted", answer
        version = answer["v"]
    check = await ann.request({"type": "winnable", "game": lost["game"], "v": version})
    assert (check["verdict"], check["deal"]) == ("unwinnable", "winnable"), check
