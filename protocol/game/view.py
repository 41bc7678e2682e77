"""What a player or a spectator may see of a position, and a one-glance summary.

Views are the only form in which a board leaves the server. A face-down card is shown
as ``None`` ("face down"), never by its identity; the undealt reserve is only a count.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TypedDict

from .board import NO_CARD, Board, Status
from .card import SUITS, card_text
from .score import score

__all__ = [
    "BoardView",
    "Summary",
    "ViewData",
    "player_view",
    "spectator_view",
    "summarize",
    "summary_data",
    "view_data",
]

_TEXT = tuple(card_text(card) for card in range(52))


@dataclass(frozen=True, slots=True)
class BoardView:
    """A position with every hidden card masked."""

    variant: str
    columns: tuple[tuple[str | None, ...], ...]
    reserve_left: int
    cells: tuple[str | None, ...]
    foundations: tuple[str, ...]

    def as_dict(self) -> dict[str, object]:
        """Return plain data for the wire (lists, strings, ints and ``None``)."""
        return {
            "variant": self.variant,
            "columns": [list(col) for col in self.columns],
            "reserve_left": self.reserve_left,
            "cells": list(self.cells),
            "foundations": list(self.foundations),
        }


class ViewData(TypedDict):
    """A view as plain data for the wire (lists, strings, ints and ``None``)."""

    variant: str
    columns: list[list[str | None]]
    reserve_left: int
    cells: list[str | None]
    foundations: list[str]


def view_data(board: Board) -> ViewData:
    """Return the player's view of ``board`` as plain data: face-down cards ``None``, the
    stock only a count. The one place a board is masked; the server's hot path."""
    return {
        "variant": board.variant.name,
        "columns": [
            [None] * down + [_TEXT[card] for card in col[down:]]
            for col, down in zip(board.columns, board.down, strict=True)
        ],
        "reserve_left": len(board.stock),
        "cells": [None if c == NO_CARD else _TEXT[c] for c in board.cells],
        "foundations": [SUITS[suit] for suit in board.foundations],
    }


def player_view(board: Board) -> BoardView:
    """Return the player's view of ``board`` as a record: what :func:`view_data` builds."""
    data = view_data(board)
    return BoardView(
        variant=data["variant"],
        columns=tuple(tuple(col) for col in data["columns"]),
        reserve_left=data["reserve_left"],
        cells=tuple(data["cells"]),
        foundations=tuple(data["foundations"]),
    )


def spectator_view(board: Board) -> BoardView:
    """Return a spectator's view of ``board``: exactly what its player sees, no more."""
    return player_view(board)


@dataclass(frozen=True, slots=True)
class Summary:
    """Progress of one game at a glance, safe to show to anyone."""

    score: int
    runs: int
    face_down_left: int
    moves: int
    reserve_left: int
    state: str

    def as_dict(self) -> dict[str, object]:
        """Return plain data for the wire."""
        return {
            "score": self.score,
            "runs": self.runs,
            "face_down_left": self.face_down_left,
            "moves": self.moves,
            "reserve_left": self.reserve_left,
            "state": self.state,
        }


def summary_data(board: Board, elapsed_seconds: int, status: Status) -> dict[str, object]:
    """Return ``summarize(board, elapsed_seconds, status=status).as_dict()``, built directly
    (the server's hot path)."""
    runs = len(board.foundations)
    return {
        "score": score(runs, status is Status.WON, elapsed_seconds),
        "runs": runs,
        "face_down_left": sum(board.down),
        "moves": board.depth,
        "reserve_left": board.reserve_left,
        "state": status.value,
    }


def summarize(
    board: Board, elapsed_seconds: int, moves: int | None = None, status: Status | None = None
) -> Summary:
    """Return the summary of ``board`` after ``elapsed_seconds`` of play.

    ``moves`` is the count of moves made; by default the length of the move stack.
    ``status`` may be passed when the caller has just computed it (it costs a move generation).
    """
    if status is None:
        status = board.status()
    won = status.value == "won"
    return Summary(
        score=score(board.runs, won, elapsed_seconds),
        runs=board.runs,
        face_down_left=board.face_down_left,
        moves=board.depth if moves is None else moves,
        reserve_left=board.reserve_left,
        state=status.value,
    )
