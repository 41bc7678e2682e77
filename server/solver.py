"""Post-game analysis and practice checks, run by the solver in a worker process.

Both functions take plain data and return plain data so they can cross a process
boundary; the server runs them in a :class:`SolverPool`, never on its event loop.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable, Sequence
from concurrent.futures import ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from typing import Any

from protocol.game import Board, move_from_text, move_json, move_text
from protocol.solver import NATIVE, Budget, Verdict, first_losing_move, solve, solve_deal

from .runtime.lifeline import worker_pool

__all__ = [
    "ANALYSIS_NODES",
    "SolverPool",
    "analyze_game",
    "check_position",
    "final_line",
    "finish_line",
    "winnable_deal",
]

log = logging.getLogger("scorpion.server")

ANALYSIS_NODES = 2_000_000 if NATIVE else 200_000
VET_NODES = 300_000
"""The budget of a candidate deal for a solo game on a winnable deal (as the daily's)."""
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
    elif solution.verdict is Verdict.UNWINNABLE:
        # Lost by a move, or never winnable? The opening's verdict tells the player which.
        opening = solution if not actions else solve(Board.new(variant, number, rule), Budget(nodes=nodes))
        answer["deal"] = opening.verdict.value
    return answer


def winnable_deal(variant: str, rule: str, candidates: Sequence[int], seconds: float) -> int | None:
    """Return the first of ``candidates`` the solver proves winnable within its budget, or
    ``None`` if none is within ``seconds`` (checked between candidates)."""
    deadline = time.monotonic() + seconds
    for number in candidates:
        if solve_deal(variant, number, rule, Budget(nodes=VET_NODES)).verdict is Verdict.WINNABLE:
            return number
        if time.monotonic() > deadline:
            break
    return None


def finish_line(
    variant: str, number: int, rule: str, actions: Sequence[str], nodes: int = ANALYSIS_NODES
) -> dict[str, Any]:
    """Return the verdict on a position and, when winnable, a winning line to its end (the
    moves as text), for auto-finish."""
    board = final_line(variant, number, rule, actions)
    solution = solve(board, Budget(nodes=nodes))
    line = [move_text(m) for m in solution.moves] if solution.verdict is Verdict.WINNABLE else []
    return {"verdict": solution.verdict.value, "line": line}


class SolverPool:
    """The node's solver worker process, started on first use and replaced if it dies."""

    def __init__(self, node_name: str) -> None:
        self.node_name = node_name
        self.pool: ProcessPoolExecutor | None = None

    async def run(self, function: Callable[..., Any], *args: Any) -> Any:
        """Run a solver function in the node's worker process (never on the event loop).

        A worker that died (the kernel's out-of-memory killer, a kill) leaves its pool
        broken for good: a new pool takes its place and the call is tried once more, so
        one lost worker costs no analysis or hint, now or later.
        """
        try:
            return await self._in_worker(function, args)
        except BrokenProcessPool:
            return await self._in_worker(function, args)

    async def _in_worker(self, function: Callable[..., Any], args: tuple[Any, ...]) -> Any:
        if self.pool is None:
            self.pool = worker_pool()
        pool = self.pool
        try:
            return await asyncio.get_running_loop().run_in_executor(pool, function, *args)
        except BrokenProcessPool:
            if self.pool is pool:  # not replaced yet by another call that met it
                self.pool = None
                pool.shutdown(wait=False, cancel_futures=True)
                log.warning(
                    "the solver's worker process died; starting another", extra={"node": self.node_name}
                )
            raise

    def shutdown(self) -> None:
        """Stop the worker process, dropping what it was asked to do."""
        if self.pool is not None:
            self.pool.shutdown(wait=False, cancel_futures=True)
