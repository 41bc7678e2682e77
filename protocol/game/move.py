"""Moves and their text notation.

A move is a leading card with the column it leaves and the column it enters, or the deal
of the reserve. Columns are numbered from 0 inside the engine and from 1 in every text a
person or a client sees; the open reserve cells of Three Blind Mice are sources ``R1`` and
``R2`` in text and ``CELL_BASE + i`` inside.

Text form: ``7H:2-5`` (the seven of hearts with the cards on it from column 2 to column
5), ``KS:R1-4`` (the King of spades from reserve cell 1 to column 4), and ``deal``.
"""

from __future__ import annotations

import re
from typing import NamedTuple

from .card import CardError, card_from_text, card_text

__all__ = [
    "CELL_BASE",
    "DEAL",
    "Move",
    "MoveError",
    "move_from_json",
    "move_from_text",
    "move_json",
    "move_text",
    "source_text",
]

CELL_BASE = 100
"""Internal source index of the first open reserve cell (Three Blind Mice)."""


class MoveError(ValueError):
    """Raise when a move's text or fields are malformed (not when it is illegal).

    ``field`` names the move's field at fault (``card``, ``from``, ``to``), when one is.
    """

    def __init__(self, message: str, field: str | None = None) -> None:
        super().__init__(message)
        self.field = field


class Move(NamedTuple):
    """A leading card moved from one column (or cell) to another; ``DEAL`` deals the reserve."""

    card: int
    source: int
    target: int

    @property
    def is_deal(self) -> bool:
        """Tell whether this move deals the reserve."""
        return self.card < 0

    def __str__(self) -> str:
        return move_text(self)


DEAL = Move(-1, -1, -1)

_MOVE_RE = re.compile(r"^([A-Za-z0-9]{2}):(R?[0-9]{1,2})-([0-9]{1,2})$")


def source_text(source: int) -> str:
    """Return the text of a move source: ``3`` for column index 2, ``R1`` for the first cell."""
    if source >= CELL_BASE:
        return f"R{source - CELL_BASE + 1}"
    return str(source + 1)


def _parse_source(text: str) -> int:
    if text.startswith(("R", "r")):
        cell = int(text[1:])
        if cell < 1:
            raise MoveError(f"reserve cell {text!r} does not exist: cells are R1 and R2")
        return CELL_BASE + cell - 1
    return _parse_column(text)


def _parse_column(text: str) -> int:
    column = int(text)
    if column < 1:
        raise MoveError(f"column {text!r} does not exist: columns are numbered from 1")
    return column - 1


def move_text(move: Move) -> str:
    """Return the text notation of ``move`` (``7H:2-5`` or ``deal``)."""
    if move.is_deal:
        return "deal"
    return f"{card_text(move.card)}:{source_text(move.source)}-{move.target + 1}"


def move_from_text(text: str) -> Move:
    """Parse a move written as ``7H:2-5``, ``KS:R1-4`` or ``deal``."""
    if not isinstance(text, str):
        raise MoveError(f"a move must be text, not {type(text).__name__}")
    stripped = text.strip()
    if stripped.lower() == "deal":
        return DEAL
    match = _MOVE_RE.match(stripped)
    if match is None:
        raise MoveError(f"{text!r} is not a move: write CARD:FROM-TO such as '7H:2-5' (or 'deal')")
    try:
        card = card_from_text(match.group(1))
    except CardError as exc:
        raise MoveError(str(exc)) from None
    return Move(card, _parse_source(match.group(2)), _parse_column(match.group(3)))


def move_json(move: Move) -> dict[str, object]:
    """Return the JSON form of ``move``: ``{"card": "7H", "from": 2, "to": 5}`` or ``{"deal": true}``."""
    if move.is_deal:
        return {"deal": True}
    source: int | str = source_text(move.source) if move.source >= CELL_BASE else move.source + 1
    return {"card": card_text(move.card), "from": source, "to": move.target + 1}


def move_from_json(data: object) -> Move:
    """Parse the JSON form of a move (see :func:`move_json`)."""
    if not isinstance(data, dict):
        raise MoveError("a move must be an object with card/from/to, or {'deal': true}")
    if data.get("deal") is True and set(data) == {"deal"}:
        return DEAL
    if set(data) != {"card", "from", "to"}:
        raise MoveError("a move has exactly the fields card, from and to (or only deal: true)")
    card_field, source_field, target_field = data["card"], data["from"], data["to"]
    if not isinstance(card_field, str):
        raise MoveError("a move's card must be text such as '7H'", "card")
    try:
        card = card_from_text(card_field)
    except CardError as exc:
        raise MoveError(str(exc), "card") from None
    if isinstance(source_field, str) and source_field[:1] in ("R", "r"):
        try:
            source = _parse_source(source_field)
        except ValueError:
            raise MoveError(f"{source_field!r} is not a reserve cell", "from") from None
    elif isinstance(source_field, int) and not isinstance(source_field, bool) and source_field >= 1:
        source = source_field - 1
    else:
        raise MoveError("a move's 'from' is a column number from 1, or 'R1'/'R2'", "from")
    if isinstance(target_field, bool) or not isinstance(target_field, int) or target_field < 1:
        raise MoveError("a move's 'to' is a column number from 1", "to")
    return Move(card, source, target_field - 1)
