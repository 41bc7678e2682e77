"""A one-line text notation for a whole position, with its parser.

Five fields separated by single spaces::

    VARIANT RULE TABLEAU RESERVE FOUNDATIONS
    scorpion any-time jd5hkhAS4HTH8D/.../7CQCJSQH4S8S6S 9c2h6h -

- ``VARIANT``: ``scorpion``, ``scorpion-ii``, ``wasp`` or ``three-blind-mice``.
- ``RULE``: the reserve rule, ``any-time`` or ``when-stuck``.
- ``TABLEAU``: the columns from column 1, separated by ``/``; each column lists its cards
  from the first dealt to the exposed one, two characters a card; a face-down card is
  written in lower case (``jd``); an empty column is ``-``.
- ``RESERVE``: for a reserve stock, its undealt cards in the order they land, in lower
  case since they are face down, or ``-`` once dealt; for open reserve cells (Three Blind
  Mice), the cells separated by ``,``, each a card or ``-`` when played.
- ``FOUNDATIONS``: the suits of the collected runs in the order collected (``HS``), or ``-``.

The notation describes a position, not its history: the move stack is not part of it.
See ``docs/notation.md``.
"""

from __future__ import annotations

from .board import NO_CARD, Board
from .card import RANKS, SUITS, card_from_text, card_text
from .variant import ReserveRule, VariantError, get_variant

__all__ = ["NotationError", "board_from_text", "board_to_text"]


class NotationError(ValueError):
    """Raise when a position's text is malformed or describes an impossible position."""


def board_to_text(board: Board) -> str:
    """Return the one-line notation of ``board``'s position (:meth:`Board.text`)."""
    return board.text()


def _parse_cards(text: str, what: str) -> list[tuple[int, bool]]:
    if len(text) % 2:
        raise NotationError(f"{what} {text!r} has an odd number of characters: cards are two each")
    cards = []
    for i in range(0, len(text), 2):
        token = text[i : i + 2]
        letters = [ch for ch in token if ch.isalpha()]
        if letters and not (all(ch.isupper() for ch in letters) or all(ch.islower() for ch in letters)):
            raise NotationError(f"card {token!r} in {what} mixes upper and lower case")
        if token.upper()[0] not in RANKS or token.upper()[1] not in SUITS:
            raise NotationError(f"{token!r} in {what} is not a card")
        hidden = token[1].islower()
        cards.append((card_from_text(token), hidden))
    return cards


def board_from_text(text: str) -> Board:
    """Parse a position written by :func:`board_to_text`; check that it is possible."""
    if not isinstance(text, str):
        raise NotationError("a position must be text")
    fields = text.strip().split(" ")
    if len(fields) != 5:
        raise NotationError(
            f"a position has 5 fields (variant, rule, tableau, reserve, foundations), not {len(fields)}"
        )
    variant_name, rule_name, tableau, reserve_text, foundation_text = fields
    try:
        variant = get_variant(variant_name)
        rule = ReserveRule.parse(rule_name)
    except VariantError as exc:
        raise NotationError(str(exc)) from None
    column_texts = tableau.split("/")
    if len(column_texts) != variant.columns:
        raise NotationError(
            f"{variant.title} has {variant.columns} columns, the tableau lists {len(column_texts)}"
        )
    seen: set[int] = set()

    def claim(card: int) -> None:
        if card in seen:
            raise NotationError(f"{card_text(card)} appears twice")
        seen.add(card)

    columns: list[list[int]] = []
    down: list[int] = []
    for number, col_text in enumerate(column_texts, start=1):
        if col_text == "-":
            columns.append([])
            down.append(0)
            continue
        cards = _parse_cards(col_text, f"column {number}")
        hidden_count = sum(1 for _, hidden in cards if hidden)
        if any(hidden for _, hidden in cards[hidden_count:]):
            raise NotationError(f"column {number} has a face-down card above a face-up one")
        if hidden_count and hidden_count == len(cards):
            raise NotationError(f"column {number} has no face-up card: its top card would be turned up")
        for card, _ in cards:
            claim(card)
        columns.append([card for card, _ in cards])
        down.append(hidden_count)

    stock: list[int] = []
    cells: list[int] = []
    if variant.cells:
        cell_texts = reserve_text.split(",")
        if len(cell_texts) != variant.cells:
            raise NotationError(f"{variant.title} has {variant.cells} reserve cells, not {len(cell_texts)}")
        for cell_text in cell_texts:
            if cell_text == "-":
                cells.append(NO_CARD)
                continue
            parsed = _parse_cards(cell_text, "a reserve cell")
            if len(parsed) != 1 or parsed[0][1]:
                raise NotationError(f"a reserve cell holds one face-up card, not {cell_text!r}")
            claim(parsed[0][0])
            cells.append(parsed[0][0])
    elif reserve_text != "-":
        parsed = _parse_cards(reserve_text, "the reserve")
        if not all(hidden for _, hidden in parsed):
            raise NotationError("reserve cards are face down: write them in lower case")
        if len(parsed) != variant.stock:
            raise NotationError(f"the reserve holds {variant.stock} cards or none, not {len(parsed)}")
        for card, _ in parsed:
            claim(card)
        stock = [card for card, _ in parsed]

    foundations: list[int] = []
    if foundation_text != "-":
        for letter in foundation_text:
            if letter not in SUITS:
                raise NotationError(f"{letter!r} is not a suit: foundations list suits from {SUITS}")
            suit = SUITS.index(letter)
            if suit in foundations:
                raise NotationError(f"the {letter} run is listed twice in the foundations")
            foundations.append(suit)
            for rank in range(13):
                claim(suit * 13 + rank)
    if len(seen) != 52:
        missing = " ".join(card_text(c) for c in range(52) if c not in seen)
        raise NotationError(f"the position lacks {missing}: all 52 cards must be placed")
    return Board(variant, columns, down, stock, cells, foundations, rule)
