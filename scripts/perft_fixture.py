#!/usr/bin/env python3
"""Regenerate tests/protocol/game/perft.txt: legal-move node counts at depths 1 to 3.

The counts are computed with the naive move generator of the property tests
(``naive_legal_moves``: every face-up card against every column, straight from the rule
sentences), never with ``Board.legal_moves``; ``tests/protocol/game/test_perft.py`` then
checks the engine's own generator against the file. Moves are applied with
``Board.push``/``Board.pop``.

Positions: openings of several deals of every variant and both reserve rules, mid-game
positions reached by seeded random playouts (choosing among the naive generator's moves),
positions with empty columns, with the reserve dealt, with a Three Blind Mice cell played,
and a few written by hand around finished runs.

Usage, from the repository root::

    python3 scripts/perft_fixture.py            # rewrite the fixture
    python3 scripts/perft_fixture.py --check    # exit 1 if the fixture is out of date
"""

from __future__ import annotations

import argparse
import random
import sys
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from protocol.game import Board, Move, board_from_text, board_to_text  # noqa: E402
from tests.protocol.game.test_properties import naive_legal_moves  # noqa: E402

FIXTURE = ROOT / "tests" / "protocol" / "game" / "perft.txt"
DEPTHS = (1, 2, 3)


def perft(board: Board, depth: int, generate: Callable[[Board], list[Move]]) -> int:
    """Return the number of move sequences of length ``depth`` from ``board``."""
    moves = generate(board)
    if depth == 1:
        return len(moves)
    total = 0
    for move in moves:
        board.push(move)
        total += perft(board, depth - 1, generate)
        board.pop()
    return total


def seeded_playout(
    variant: str, number: int, rule: str, seed: int, until: Callable[[Board, int], bool]
) -> Board | None:
    """Play random moves (from the naive generator) until ``until(board, step)`` holds."""
    board = Board.new(variant, number, rule)
    rng = random.Random(seed)
    for step in range(400):
        if until(board, step):
            return board.copy(stack=False)
        moves = naive_legal_moves(board)
        if not moves:
            return None
        board.push(rng.choice(moves))
    return None


def first_playout(
    variant: str, rule: str, start: int, until: Callable[[Board, int], bool], what: str
) -> tuple[str, Board]:
    """Return the first seeded playout (trying deal numbers from ``start``) that reaches ``until``."""
    for number in range(start, start + 500):
        board = seeded_playout(variant, number, rule, number, until)
        if board is not None:
            return f"{variant} {rule} deal {number}, random playout seeded {number}, {what}", board
    raise SystemExit(f"no playout of {variant} from {start} reached the condition")


def has_empty_column(board: Board, step: int) -> bool:
    return any(not col for col in board.columns) and bool(naive_legal_moves(board))


def reserve_dealt(board: Board, step: int) -> bool:
    return step >= 3 and board.variant.stock > 0 and not board.stock and bool(naive_legal_moves(board))


def cell_played(board: Board, step: int) -> bool:
    return any(card < 0 for card in board.cells) and bool(naive_legal_moves(board))


def after(moves: int) -> Callable[[Board, int], bool]:
    return lambda board, step: step == moves and len(naive_legal_moves(board)) >= 3


HAND_WRITTEN = [
    (
        "one move from a run, then from a win",
        "scorpion any-time KHQHJHTH9H8H7H6H5H4H3H2H/ASAH/KSQSJSTS9S8S/7S6S5S4S3S2S/-/-/- - CD",
    ),
    (
        "when-stuck: a dead end whose deal finishes a run",
        "scorpion when-stuck KHQHJHTH9H8H7H6H5H4H3H2H/KSQSJSTS9S8S7S6S5S4S3S/-/-/-/-/- ah2sas CD",
    ),
    (
        "wasp: empty column open to any card",
        "wasp any-time AC2C/3CKH5C9H/4CQH/-/JH8H7H6H5H4H3H2HAH/KCQCJCTC9C8C7C6C/TH - DS",
    ),
    (
        "three blind mice: a King in a cell, an empty column",
        "three-blind-mice any-time KHQHJHTH9H8H7H6H5H/3H2HAH/-/QSJS/TS9S8S/7S6S5S4S3S/2SAS/-/-/- KS,4H CD",
    ),
]


def positions() -> list[tuple[str, Board]]:
    """Return the fixture's positions with a label each, in a fixed order."""
    chosen: list[tuple[str, Board]] = []
    for variant, number, rule in [
        ("scorpion", 1, "any-time"),
        ("scorpion", 2, "when-stuck"),
        ("scorpion", 123456789012, "any-time"),
        ("scorpion-ii", 1, "any-time"),
        ("scorpion-ii", 40000, "when-stuck"),
        ("wasp", 3, "any-time"),
        ("wasp", 99999999999999999999, "any-time"),
        ("three-blind-mice", 1, "any-time"),
        ("three-blind-mice", 54321, "any-time"),
    ]:
        chosen.append((f"{variant} {rule} deal {number}, opening", Board.new(variant, number, rule)))
    chosen.append(first_playout("scorpion", "any-time", 10, after(15), "after 15 moves"))
    chosen.append(first_playout("scorpion-ii", "when-stuck", 20, after(25), "after 25 moves"))
    chosen.append(first_playout("wasp", "any-time", 30, after(20), "after 20 moves"))
    chosen.append(first_playout("three-blind-mice", "any-time", 40, after(15), "after 15 moves"))
    chosen.append(first_playout("scorpion", "any-time", 100, has_empty_column, "an empty column"))
    chosen.append(first_playout("wasp", "when-stuck", 200, has_empty_column, "an empty column"))
    chosen.append(first_playout("scorpion", "any-time", 300, reserve_dealt, "reserve dealt"))
    chosen.append(first_playout("scorpion-ii", "any-time", 400, reserve_dealt, "reserve dealt"))
    chosen.append(first_playout("three-blind-mice", "any-time", 500, cell_played, "a cell played"))
    chosen.extend((label, board_from_text(text)) for label, text in HAND_WRITTEN)
    return chosen


def render() -> str:
    lines = [
        "# Perft fixture: position ; depth ; number of legal move sequences of that length.",
        "# Generated by scripts/perft_fixture.py with the naive generator of test_properties.py;",
        "# checked against Board.legal_moves by test_perft.py. Do not edit by hand.",
    ]
    for label, board in positions():
        text = board_to_text(board)
        lines.append("")
        lines.append(f"# {label}")
        for depth in DEPTHS:
            lines.append(f"{text} ; {depth} ; {perft(board, depth, naive_legal_moves)}")
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="compare with the file instead of writing it")
    args = parser.parse_args(argv)
    content = render()
    if args.check:
        if FIXTURE.read_text(encoding="utf-8") != content:
            name = FIXTURE.relative_to(ROOT)
            print(f"{name} is out of date: run scripts/perft_fixture.py", file=sys.stderr)
            return 1
        print(f"{FIXTURE.relative_to(ROOT)} is up to date")
        return 0
    FIXTURE.write_text(content, encoding="utf-8")
    print(f"wrote {FIXTURE.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
