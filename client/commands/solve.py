"""``scorpion solve``: decide whether a deal (or a position) can be won, with the winning line."""

from __future__ import annotations

import argparse
import json
import sys
import time

from protocol.game import (
    VARIANTS,
    Board,
    DealError,
    NotationError,
    ReserveRule,
    board_from_text,
    move_json,
    move_text,
)
from protocol.solver import Budget, solve

from .support.arguments import half_the_memory, memory_size, memory_text, positive_int, positive_seconds

__all__ = ["register", "run"]


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add the ``solve`` subcommand."""
    parser = subparsers.add_parser("solve", help="solve a deal with full information (knows face-down cards)")
    parser.add_argument("--variant", default="scorpion", choices=sorted(VARIANTS))
    where = parser.add_mutually_exclusive_group(required=True)
    where.add_argument("--number", type=int, help="game number, 1 to 10**20 - 1")
    where.add_argument("--position", help="a position in the engine's notation (docs/notation.md)")
    parser.add_argument(
        "--reserve",
        default=ReserveRule.ANY_TIME.value,
        choices=[rule.value for rule in ReserveRule],
        help="when the reserve may be dealt (ignored with --position, which names its rule)",
    )
    parser.add_argument(
        "--budget-seconds", type=positive_seconds, default=10.0, help="time budget (default 10)"
    )
    parser.add_argument(
        "--budget-nodes", type=positive_int, default=50_000_000, help="node budget (default 5e7)"
    )
    parser.add_argument(
        "--budget-memory",
        type=memory_size,
        metavar="SIZE",
        help="memory the search's table may take, like 800M or 4G; the verdict is unknown once it "
        "would take more (default: half this machine's memory)",
    )
    parser.add_argument("--json", action="store_true", help="print the verdict as JSON")
    parser.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    """Solve and print the verdict, the winning line, the nodes searched and the time."""
    try:
        if args.position is not None:
            board = board_from_text(args.position)
        else:
            board = Board.new(args.variant, args.number, args.reserve)
    except (DealError, NotationError) as exc:
        print(f"scorpion solve: {exc}", file=sys.stderr)
        return 2
    memory = args.budget_memory or half_the_memory()
    budget = Budget(
        nodes=args.budget_nodes, seconds=args.budget_seconds, clock=time.perf_counter, memory=memory
    )
    solution = solve(board, budget)
    seconds = round(solution.seconds or 0.0, 6)
    if args.json:
        print(
            json.dumps(
                {
                    "verdict": solution.verdict.value,
                    "moves": [move_json(move) for move in solution.moves],
                    "nodes": solution.nodes,
                    "seconds": seconds,
                }
            )
        )
    else:
        full = ""
        if solution.memory_full and memory is not None:
            full = (
                f"; the search's table reached the memory budget of {memory_text(memory)} (--budget-memory)"
            )
        print(f"{solution.verdict.value} ({solution.nodes} nodes, {seconds:.3f} s{full})")
        if solution.moves:
            print(" ".join(move_text(move) for move in solution.moves))
    return 0
