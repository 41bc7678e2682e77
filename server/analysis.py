"""Post-game analysis and practice checks, run by the solver in a worker process.

Both functions take plain data and return plain data so they can cross a process
boundary; the server runs them in a process pool, never on its event loop.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from protocol.game import Board, move_from_text, move_json
from protocol.solver import NATIVE, Budget, Verdict, first_losing_move, solve, solve_deal

__all__ = ["ANALYSIS_NODES", "analyze_game", "check_position", "final_line"]

ANALYSIS_NODES = 2_000_000 if NATIVE else 200_000
"""Search budget per position, about a second at most either way: 2,000,000 nodes with the
search in C, 200,000 where only ``protocol.solver.search`` runs (compiled with mypyc). Typical
deals are decided in far fewer nodes; of 10,000 deals per variant, 2,000,000 nodes leave
0.01-0.65% undecided, 200,000 nodes 0.55-2.89%."""


def final_line(variant: str, number: int, rule: str, actions: Sequence[str]) -> Board:
    """Replay a racer's stored actions (moves and ``undo`` markers) and return the board."""
    board = Board.new(variant, number, rule)
    for text in actions:
        if text == "undo":
            board.pop()
        else:
            board.push(move_from_text(text))
    return board


def analyze_game(
    variant: str, number: int, rule: str, actions: Sequence[str], nodes: int = ANALYSIS_NODES
) -> dict[str, Any]:
    """Return the analysis of one racer's finished game as wire data."""
    board = final_line(variant, number, rule, actions)
    moves = board.move_stack
    budget = Budget(nodes=nodes)
    deal = solve_deal(variant, number, rule, budget)
    result: dict[str, Any] = {
        "verdict": deal.verdict.value,
        "line": [move_json(m) for m in deal.moves] if deal.verdict is Verdict.WINNABLE else [],
        "moves": len(moves),
        "won": board.is_won(),
    }
    if deal.verdict is Verdict.WINNABLE and not board.is_won():
        slipped = first_losing_move(variant, number, moves, rule, budget)
        if slipped is not None:
            result["slipped"] = slipped
    return result


def check_position(
    variant: str, number: int, rule: str, actions: Sequence[str], nodes: int = ANALYSIS_NODES
) -> dict[str, Any]:
    """Return whether a solo position can still be won, and a first winning move."""
    board = final_line(variant, number, rule, actions)
    solution = solve(board, Budget(nodes=nodes))
    answer: dict[str, Any] = {"verdict": solution.verdict.value}
    if solution.verdict is Verdict.WINNABLE and solution.moves:
        answer["move"] = move_json(solution.moves[0])
    return answer
