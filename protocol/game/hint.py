"""Hints: the legal moves, best first by a simple heuristic that never promises a win.

Each legal move is tried on the board (push, measure, pop) and scored:

- +1000 for every run it sends to the foundations;
- +100 if it turns a face-down card face up;
- +30 if it empties a column;
- +10 for every same-suit link it adds (a card lying on the card one rank higher of its
  suit), -10 for every such link it breaks; only links between two face-up cards count;
- -50 for dealing the reserve, which the rules advise keeping until stuck.

Ties keep the move generator's order, so hints are deterministic. Hints know no more than
the player: the deal is not tried (its cards are face down), so its score is always -50,
and a card turned up counts +100 whatever it is.
"""

from __future__ import annotations

from .board import Board
from .move import Move

__all__ = ["hint_scores", "hints"]


def _links(board: Board) -> int:
    total = 0
    for col, down in zip(board.columns, board.down, strict=True):
        for row in range(down + 1, len(col)):
            below, card = col[row - 1], col[row]
            if below == card + 1 and card % 13 != 12:
                total += 1
    return total


def hint_scores(board: Board) -> list[tuple[Move, int]]:
    """Return every legal move with its heuristic score, best first."""
    runs, face_down = board.runs, board.face_down_left
    empty = sum(1 for col in board.columns if not col)
    links = _links(board)
    scored = []
    for order, move in enumerate(board.legal_moves()):
        if move.is_deal:
            scored.append((-50, order, move))
            continue
        board.push(move)
        value = 1000 * (board.runs - runs) + 100 * (face_down - board.face_down_left)
        if sum(1 for col in board.columns if not col) > empty:
            value += 30
        value += 10 * (_links(board) - links)
        board.pop()
        scored.append((value, order, move))
    scored.sort(key=lambda item: (-item[0], item[1]))
    return [(move, value) for value, _, move in scored]


def hints(board: Board) -> list[Move]:
    """Return the legal moves, best first."""
    return [move for move, _ in hint_scores(board)]
