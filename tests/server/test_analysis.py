"""Post-game analysis and solo practice hints from the solver, off the move path."""

from __future__ import annotations

import asyncio
import os
import signal
from pathlib import Path
from typing import Any

import pytest

from protocol.game import Board, move_from_json, move_json
from protocol.solver import Budget, Verdict, first_losing_move, solve, solve_deal
from tests.conftest import child_pids, is_running

from .conftest import Client

pytestmark = pytest.mark.asyncio


def winnable_deal() -> tuple[int, list[Any]]:
    for number in range(7 * 10**14, 7 * 10**14 + 300):
        solution = solve_deal("scorpion", number, budget=Budget(nodes=50_000))
        if solution.verdict is Verdict.WINNABLE:
            return number, list(solution.moves)
    raise AssertionError("no winnable deal in range")


def losing_prefix(number: int, line: list[Any]) -> list[Any]:
    """Return a few legal moves after which the deal can no longer be won (if found)."""
    board = Board.new("scorpion", number)
    played: list[Any] = []
    for _ in range(40):
        moves = [m for m in board.legal_moves() if m not in line[: len(played) + 1]]
        if not moves:
            break
        board.push(moves[0])
        played.append(moves[0])
        if solve(board, Budget(nodes=50_000)).verdict is Verdict.UNWINNABLE:
            return played
    return played


async def test_a_finished_solo_game_gets_its_analysis_pushed_and_on_request(
    local_node: Any, open_client: Any
) -> None:
    number, line = winnable_deal()
    node = await local_node(test_deals=str(number))
    ann: Client = await open_client(node, "Ann")
    start = await ann.request({"type": "solo_new"})
    played = losing_prefix(number, line)
    version = start["v"]
    for move in played:
        answer = await ann.request(
            {"type": "move", "game": start["game"], "v": version, "move": move_json(move)}
        )
        if answer["type"] != "accepted":
            break
        version = answer["v"]
    early = await ann.request({"type": "analyze", "game": start["game"]})
    assert early["code"] == "not_allowed"
    await ann.request({"type": "resign", "game": start["game"], "v": version})
    pushed = await ann.expect("analysis", timeout=60)
    assert pushed["game"] == start["game"] and pushed["verdict"] == "winnable" and pushed["won"] is False
    replayed = Board.new("scorpion", number)
    replayed.replay(move_from_json(m) for m in pushed["line"])
    assert replayed.is_won()
    expected = first_losing_move("scorpion", number, played, budget=Budget(nodes=200_000))
    assert expected is not None, "the test needs a game that lost a winnable deal"
    assert pushed.get("slipped") == expected and pushed["moves"] == len(played)
    again = await ann.request({"type": "analyze", "game": start["game"]})
    assert again["type"] == "analysis" and again["line"] == pushed["line"]
    bob: Client = await open_client(node, "Bob")
    stranger = await bob.request({"type": "analyze", "game": start["game"]})
    assert stranger["code"] == "not_your_game"


async def test_solo_practice_can_ask_whether_the_position_is_still_winnable(
    local_node: Any, open_client: Any
) -> None:
    number, _line = winnable_deal()
    node = await local_node(test_deals=str(number))
    ann: Client = await open_client(node, "Ann")
    start = await ann.request({"type": "solo_new"})
    check = await ann.request({"type": "winnable", "game": start["game"], "v": start["v"]})
    assert check["type"] == "winnable_info" and check["verdict"] == "winnable"
    board = Board.new("scorpion", number)
    suggested = move_from_json(check["move"])
    assert board.is_legal(suggested)
    board.push(suggested)
    assert solve(board, Budget(nodes=200_000)).verdict is Verdict.WINNABLE


async def test_races_and_the_daily_get_no_solver_help_while_running(
    local_node: Any, open_client: Any
) -> None:
    node = await local_node()
    ann: Client = await open_client(node, "Ann", account=True)
    start = await ann.request({"type": "daily_start"})
    refused = await ann.request({"type": "winnable", "game": start["game"], "v": start["v"]})
    assert refused["code"] == "not_allowed"
    await ann.request({"type": "resign", "game": start["game"], "v": start["v"]})
    await ann.expect("race_ended")
    hidden = await ann.request({"type": "analyze", "game": start["game"]})
    assert hidden["code"] == "not_allowed" and "day" in hidden["message"]


def _solver_workers() -> set[int]:
    found = set()
    for pid in child_pids(os.getpid()):
        try:
            if b"spawn_main" in Path(f"/proc/{pid}/cmdline").read_bytes():
                found.add(pid)
        except OSError:  # ended meanwhile
            continue
    return found


async def test_a_solver_worker_that_dies_is_replaced(local_node: Any, open_client: Any) -> None:
    # As the kernel's out-of-memory killer would: the node's solver worker is killed.
    number, _line = winnable_deal()
    node = await local_node(test_deals=str(number))
    ann: Client = await open_client(node, "Ann")
    start = await ann.request({"type": "solo_new"})
    ask = {"type": "winnable", "game": start["game"], "v": start["v"]}
    before = _solver_workers()  # other tests' nodes may still be ending theirs
    first = await ann.request(ask)
    assert first["type"] == "winnable_info" and first["verdict"] == "winnable"
    workers = sorted(_solver_workers() - before)
    assert len(workers) == 1
    os.kill(workers[0], signal.SIGKILL)
    while is_running(workers[0]):
        await asyncio.sleep(0.01)
    again = await ann.request(ask)
    assert again["type"] == "winnable_info", again
    assert again["verdict"] == "winnable" and again["move"] == first["move"]
    # and the one after it goes straight to the new worker
    assert (await ann.request(ask))["type"] == "winnable_info"
