"""Auto-finish: once every card is face up and the reserve dealt, the server plays the rest
of a winning line, each move on the same path as a player's own."""

from __future__ import annotations

from typing import Any

import pytest

from protocol.game import Board, move_json
from protocol.solver import Budget, Verdict, solve_deal
from protocol.wire.codec import decode_dict

from .conftest import Client, accounts_only, start_race
from .test_daily import eventually

pytestmark = pytest.mark.asyncio

DEAL = 56
"""A Scorpion deal the solver wins, every card known 9 moves before the end of its line."""


@pytest.fixture
def open_client(open_client: Any) -> Any:
    """Every client of this file is an account: ranked play needs one."""
    return accounts_only(open_client)


def ready_prefix() -> list[Any]:
    """Return the moves of the deal's winning line up to every card face up, reserve dealt."""
    line = solve_deal("scorpion", DEAL, budget=Budget(nodes=200_000))
    assert line.verdict is Verdict.WINNABLE
    board = Board.new("scorpion", DEAL)
    for index, move in enumerate(line.moves):
        board.push(move)
        if not board.face_down_left and not board.stock:
            assert len(line.moves) - index - 1 >= 5, "the test needs several moves left to finish"
            return list(line.moves[: index + 1])
    raise AssertionError("the line never uncovers every card")


async def play(client: Client, game: str, version: int, moves: list[Any]) -> int:
    for move in moves:
        answer = await client.request({"type": "move", "game": game, "v": version, "move": move_json(move)})
        assert answer["type"] == "accepted", answer
        version = answer["v"]
    return version


def frames_of(client: Client, kind: str) -> list[dict[str, Any]]:
    decoded = (decode_dict(f, client.fmt, limit=1 << 22) for f in client.frames)  # type: ignore[arg-type]
    return [d for d in decoded if d["type"] == kind]


async def test_finish_plays_the_rest_of_a_solo_game_move_by_move_and_wins_it(
    local_node: Any, open_client: Any
) -> None:
    node = await local_node(test_deals=str(DEAL))
    ann: Client = await open_client(node, "Ann")
    start = await ann.request({"type": "solo_new"})
    game = start["game"]
    early = await ann.request({"type": "finish", "game": game, "v": start["v"]})
    assert early["code"] == "not_allowed" and "face up" in early["message"], early
    prefix = ready_prefix()
    version = await play(ann, game, start["v"], prefix)
    stale = await ann.request({"type": "finish", "game": game, "v": version - 1})
    assert stale["code"] == "stale_version", stale
    before = len(frames_of(ann, "accepted"))
    done = await ann.request({"type": "finish", "game": game, "v": version}, timeout=60)
    assert done["type"] == "finish_info" and done["verdict"] == "winnable", done
    accepted = frames_of(ann, "accepted")[before:]
    assert done["moves"] == len(accepted) >= 5
    assert [a["v"] for a in accepted] == list(range(version + 1, version + 1 + len(accepted)))
    assert done["v"] == accepted[-1]["v"]
    assert accepted[-1]["status"] == "finished" and accepted[-1]["summary"]["runs"] == 4
    ended = await ann.expect("race_ended")
    assert ended["standings"][0]["status"] == "finished"
    # results are recorded just after the end is published
    stats = await eventually(ann, {"type": "stats"}, lambda a: a["stats"] and a["stats"][0]["won"] == 1)
    assert stats["stats"][0]["won"] == 1


async def test_finish_in_a_race_sends_progress_and_a_rated_race_refuses_it(
    local_node: Any, open_client: Any
) -> None:
    node = await local_node(test_deals=str(DEAL))
    ann: Client = await open_client(node, "Ann")
    bob: Client = await open_client(node, "Bob")
    _room, start, _bob_start = await start_race(ann, bob, {"undo": True, "hints": True})
    version = await play(ann, start["game"], start["v"], ready_prefix())
    done = await ann.request({"type": "finish", "game": start["game"], "v": version}, timeout=60)
    assert done["type"] == "finish_info" and done["moves"] >= 5, done
    finished = await bob.expect("progress", player=ann.player, status="finished")
    assert finished["summary"]["runs"] == 4

    carl: Client = await open_client(node, "Carl")
    dana: Client = await open_client(node, "Dana")
    _room, rated, _other = await start_race(carl, dana, {"rated": True})
    refused = await carl.request({"type": "finish", "game": rated["game"], "v": rated["v"]})
    assert refused["code"] == "not_allowed" and "rated" in refused["message"], refused

    eve: Client = await open_client(node, "Eve")
    daily = await eve.request({"type": "daily_start"})
    ranked = await eve.request({"type": "finish", "game": daily["game"], "v": daily["v"]})
    assert ranked["code"] == "not_allowed" and "daily" in ranked["message"], ranked
