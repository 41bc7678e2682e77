"""A local model of a board built from a player's view, for legality checks and hints.

A view hides the face-down cards (``None``) and the undealt reserve (a count). The model
fills those places with the cards the view does not show, in an arbitrary order: the
shared engine's move generator never looks at a face-down card's identity (a hidden card
cannot be moved, and the card a move needs is refused alike whether it is face down or
elsewhere), so the legal moves, the reasons moves are illegal and the hint scores of the
model are exactly those of the real board. What the model must not be used for is what
happens *after* a card turns face up: the card it shows there is a placeholder.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from protocol.game import (
    CELL_BASE,
    NO_CARD,
    Board,
    Move,
    MoveError,
    ReserveRule,
    card_from_text,
    get_variant,
    hint_scores,
    move_from_text,
    move_json,
    move_text,
)

__all__ = [
    "ViewError",
    "board_from_view",
    "explain",
    "legal_moves",
    "legal_targets",
    "parse_move",
    "position_key",
]

_SUITS = "CDHS"


class ViewError(ValueError):
    """Raise when a view cannot be a position of its variant."""


def board_from_view(view: Mapping[str, Any], rule: ReserveRule | str = ReserveRule.ANY_TIME) -> Board:
    """Return a board that has the same legal moves as the board ``view`` shows."""
    try:
        variant = get_variant(view["variant"])
        columns_text = view["columns"]
        reserve_left = int(view.get("reserve_left", 0))
        cells_text = list(view.get("cells") or [])
        foundations_text = list(view.get("foundations") or [])
    except (KeyError, TypeError, ValueError) as exc:
        raise ViewError(f"not a board view: {exc}") from None
    seen: set[int] = set()
    foundations = []
    for suit in foundations_text:
        if suit not in _SUITS:
            raise ViewError(f"{suit!r} is not a suit")
        index = _SUITS.index(suit)
        foundations.append(index)
        seen.update(index * 13 + rank for rank in range(13))
    parsed_columns: list[list[int | None]] = []
    for column in columns_text:
        parsed: list[int | None] = []
        for text in column:
            if text is None:
                parsed.append(None)
                continue
            card = _card(text)
            if card in seen:
                raise ViewError(f"{text} appears twice")
            seen.add(card)
            parsed.append(card)
        parsed_columns.append(parsed)
    cells: list[int] = []
    for text in cells_text:
        if text is None:
            cells.append(NO_CARD)
            continue
        card = _card(text)
        if card in seen:
            raise ViewError(f"{text} appears twice")
        seen.add(card)
        cells.append(card)
    unknown = [card for card in range(52) if card not in seen]
    hidden = sum(col.count(None) for col in parsed_columns) + reserve_left
    if hidden != len(unknown):
        raise ViewError(f"the view hides {hidden} cards but {len(unknown)} are unaccounted for")
    fill = iter(unknown)
    columns: list[list[int]] = []
    down: list[int] = []
    for parsed in parsed_columns:
        count = 0
        for entry in parsed:
            if entry is not None:
                break
            count += 1
        if any(entry is None for entry in parsed[count:]):
            raise ViewError("face-down cards lie only at the bottom of a column")
        columns.append([next(fill) if entry is None else entry for entry in parsed])
        down.append(count)
    stock = list(fill)
    return Board(variant, columns, down, stock, cells, foundations, rule)


def _card(text: str) -> int:
    try:
        return card_from_text(text)
    except ValueError as exc:
        raise ViewError(str(exc)) from None


def legal_moves(view: Mapping[str, Any], rule: ReserveRule | str = ReserveRule.ANY_TIME) -> list[Move]:
    """Return the legal moves of the board ``view`` shows, in the engine's order."""
    return board_from_view(view, rule).legal_moves()


def explain(
    view: Mapping[str, Any], move: Move, rule: ReserveRule | str = ReserveRule.ANY_TIME
) -> str | None:
    """Return why ``move`` is illegal on the board ``view`` shows, or ``None`` if it is legal."""
    return board_from_view(view, rule).explain(move)


def legal_targets(board: Board, column: int, row: int) -> dict[int, Move]:
    """Return the columns (from 0) the card at ``column``/``row`` may go to, with the move.

    ``column`` may be ``CELL_BASE + i`` for a reserve cell (``row`` is then ignored).
    """
    if column >= CELL_BASE:
        card = board.cells[column - CELL_BASE]
    else:
        if not 0 <= column < len(board.columns) or not 0 <= row < len(board.columns[column]):
            return {}
        card = board.columns[column][row]
    if card == NO_CARD:
        return {}
    return {
        move.target: move
        for move in board.legal_moves()
        if not move.is_deal and move.card == card and move.source == column
    }


def parse_move(text: str) -> Move:
    """Parse typed notation (``7H:2-5``, ``KS:R1-4``, ``deal``); raise ``MoveError``."""
    return move_from_text(text)


def position_key(board: Board) -> tuple[object, ...]:
    """Return a key of what the player sees of ``board`` (placeholders count as face down)."""
    return (
        tuple(tuple(col[down:]) for col, down in zip(board.columns, board.down, strict=True)),
        tuple(board.down),
        len(board.stock),
        tuple(board.cells),
        tuple(board.foundations),
    )


def best_moves(board: Board) -> list[tuple[Move, int]]:
    """Return the legal moves with the shared hint heuristic's scores, best first."""
    return hint_scores(board)


__all__ += ["MoveError", "best_moves", "move_json", "move_text"]
